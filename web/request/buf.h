/*
 * buf.h - a growing text buffer for the pages and events xqf-web writes,
 * with the two escapings user text needs: HTML (every name, label and
 * verdict shown in a page) and JSON (the live events and the chart data).
 *
 * Text from the database or a request goes in only through buf_html or
 * buf_json; buf_printf is for the page's own markup and numbers.  Out of
 * memory makes the buffer "failed" (buf_failed) and later writes do
 * nothing: a page is then answered with 500, never cut silently.
 */
#ifndef XQF_WEB_BUF_H
#define XQF_WEB_BUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *data;                      /* always terminated once anything was written */
    size_t len, cap;
    bool failed;
} Buf;

void buf_free(Buf *b);
/* Hands the text over to the caller (free it); the buffer is empty again. NULL when failed. */
char *buf_take(Buf *b, size_t *len);
bool buf_failed(const Buf *b);

void buf_add(Buf *b, const char *text, size_t len);
void buf_puts(Buf *b, const char *text);
void buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* text escaped by the tuner's xqf_html_escape (html.h), the report's rule: safe in element text and in quoted attributes. */
void buf_html(Buf *b, const char *text);
/* text as a JSON string with its quotes; < > & as \u00XX so it is safe inside a <script> element. */
void buf_json(Buf *b, const char *text);
/* text as one segment of a URL's path (RFC 3986: all but its unreserved characters as %XX): safe in an href too. */
void buf_url(Buf *b, const char *text);
/* A number for JSON: finite values as %.6g, others as null. */
void buf_json_num(Buf *b, double v);

#endif

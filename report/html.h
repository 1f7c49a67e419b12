/*
 * html.h - text as HTML: the one escaper of the HTML report (report.c)
 * and xqf-web's pages (web/request/buf.c), so that a run's name, a verdict or a
 * worker's name reads the same, and is as harmless, in both.
 */
#ifndef XQF_TUNER_HTML_H
#define XQF_TUNER_HTML_H

#include <stddef.h>

/* Where escaped text goes: n bytes at s (not NUL-terminated). */
typedef void xqf_html_sink(void *to, const char *s, size_t n);

/*
 * Writes text to put(to, ...) escaped for an element's content or a quoted
 * attribute value: & < > " ' as character references (OWASP's rule for
 * both contexts), and the control characters HTML forbids (C0 but tab and
 * newline, and DEL; HTML Living Standard, "input stream preprocessing") as
 * U+FFFD, the replacement character.  Runs of plain bytes go out in one
 * call.  This function can't fail.
 */
void xqf_html_escape(const char *text, xqf_html_sink *put, void *to);

#endif

#include "buf.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"

void buf_free(Buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

char *buf_take(Buf *b, size_t *len)
{
    char *out = b->failed ? NULL : b->data;
    if (!out && !b->failed)
        out = calloc(1, 1);
    if (len)
        *len = out ? b->len : 0;
    if (b->failed)
        free(b->data);
    memset(b, 0, sizeof *b);
    return out;
}

bool buf_failed(const Buf *b) { return b->failed; }

/* Makes room for n more bytes and the terminator. */
static bool reserve(Buf *b, size_t n)
{
    if (b->failed)
        return false;
    if (b->len + n + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + n + 1)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void buf_add(Buf *b, const char *text, size_t len)
{
    if (!reserve(b, len))
        return;
    memcpy(b->data + b->len, text, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void buf_puts(Buf *b, const char *text) { buf_add(b, text, strlen(text)); }

void buf_printf(Buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static void buf_sink(void *to, const char *s, size_t n) { buf_add(to, s, n); }

void buf_html(Buf *b, const char *text) { xqf_html_escape(text, buf_sink, b); }

void buf_json(Buf *b, const char *text)
{
    buf_puts(b, "\"");
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '"' || *p == '\\')
            buf_printf(b, "\\%c", *p);
        else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&' || *p == 0x7f)
            buf_printf(b, "\\u%04x", *p);
        else
            buf_add(b, (const char *)p, 1);
    }
    buf_puts(b, "\"");
}

void buf_json_num(Buf *b, double v)
{
    if (isfinite(v))
        buf_printf(b, "%.6g", v);
    else
        buf_puts(b, "null");
}

void buf_url(Buf *b, const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (isalnum(*p) || strchr("-._~", *p))
            buf_add(b, (const char *)p, 1);
        else
            buf_printf(b, "%%%02X", *p);
    }
}

#include "log.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

XqfLogLevel xqf_log_level = XQF_LOG_INFO;
static char ident[64] = "xqf";

void xqf_log_init(const char *name)
{
    snprintf(ident, sizeof ident, "%s", name);
    const char *env = getenv("XQF_LOG");
    static const char *const NAMES[] = { "debug", "info", "warn", "error" };
    for (int i = 0; env && i < 4; i++)
        if (strcmp(env, NAMES[i]) == 0)
            xqf_log_level = (XqfLogLevel)i;
}

size_t xqf_escape(char *out, size_t size, const char *in)
{
    static const char HEX[] = "0123456789abcdef";
    size_t n = 0;
    for (; *in; in++) {
        unsigned char c = (unsigned char)*in;
        char e[5] = { (char)c, 0 };
        if (c == '\n' || c == '\r' || c == '\t')
            e[0] = '\\', e[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
        else if (c < 0x20 || c == 0x7f)
            e[0] = '\\', e[1] = 'x', e[2] = HEX[c >> 4], e[3] = HEX[c & 15];
        char c1[7];
        /*
         * The C1 controls, U+0080-U+009F, are valid UTF-8 (c2 80-9f), and a
         * terminal may take U+009B as CSI, an escape sequence's start
         * (ECMA-48): written \u0080-\u009f.
         */
        bool is_c1 = c == 0xc2 && (unsigned char)in[1] >= 0x80 && (unsigned char)in[1] <= 0x9f;
        if (is_c1)
            snprintf(c1, sizeof c1, "\\u00%c%c", HEX[(unsigned char)in[1] >> 4], HEX[in[1] & 15]);
        const char *put = is_c1 ? c1 : e;
        size_t len = strlen(put);
        if (n + len >= size)
            break;
        memcpy(out + n, put, len);
        n += len;
        in += is_c1;
    }
    out[n] = '\0';
    return n;
}

void xqf_log_write(XqfLogLevel level, const char *fmt, ...)
{
    static const char *const LEVELS[] = { "debug", "info", "warn", "error" };
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char line[2048], msg[2048];
    int n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s %s: ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec, ts.tv_nsec / 1000000, ident, LEVELS[level]);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (size_t len = strlen(msg); len > 0 && msg[len - 1] == '\n';)
        msg[--len] = '\0';                 /* libraries' messages (libpq's) end with a newline */
    if (n > 0 && (size_t)n < sizeof line)
        xqf_escape(line + n, sizeof line - (size_t)n, msg);   /* peer text cannot forge lines or drive a terminal */
    fprintf(stderr, "%s\n", line);  /* one write per line: lines of processes do not mix */
}

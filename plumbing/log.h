/*
 * log.h - one log line per event on stderr, with the process's ident
 * ("coordinator", "worker-3"), a UTC timestamp and the level:
 *     2024-06-01T12:00:00.123Z coordinator info: bound tcp://127.0.0.1:5555
 * The macros skip formatting below the level (XQF_LOG env: debug, info,
 * warn, error; default info).  Every message goes through xqf_escape
 * (trailing newlines dropped first): text from the network (worker names,
 * reasons) can neither break a line nor send escape sequences to a terminal.  Part of the plumbing every program may
 * use (xqf_plumb, plumbing/: libraries only, nothing of the project).
 */
#ifndef XQF_LOG_H
#define XQF_LOG_H

#include <stddef.h>

typedef enum { XQF_LOG_DEBUG, XQF_LOG_INFO, XQF_LOG_WARN, XQF_LOG_ERROR } XqfLogLevel;

extern XqfLogLevel xqf_log_level;

/*
 * Copies in to out (size > 0; always terminated, cut to fit, never in the
 * middle of an escape) with each control character (0x00-0x1f, 0x7f)
 * written visibly: newline, carriage return and tab as \n, \r, \t, the
 * others as \xHH.  For any text from the network before it is logged or
 * printed.  Returns the length of out.  This function can't fail.
 */
size_t xqf_escape(char *out, size_t size, const char *in);

/* Sets the ident and the level (from XQF_LOG when set). Call once at start. */
void xqf_log_init(const char *ident);
void xqf_log_write(XqfLogLevel level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define XQF_LOG_AT(lvl, ...)                                                                     \
    do {                                                                                         \
        if ((lvl) >= xqf_log_level)                                                              \
            xqf_log_write((lvl), __VA_ARGS__);                                                   \
    } while (0)
#define log_debug(...) XQF_LOG_AT(XQF_LOG_DEBUG, __VA_ARGS__)
#define log_info(...) XQF_LOG_AT(XQF_LOG_INFO, __VA_ARGS__)
#define log_warn(...) XQF_LOG_AT(XQF_LOG_WARN, __VA_ARGS__)
#define log_error(...) XQF_LOG_AT(XQF_LOG_ERROR, __VA_ARGS__)

#endif

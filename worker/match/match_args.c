/*
 * match_args.c - what xqf-match's commands share (match_args.h): the error
 * line, the --engine groups of a command line, the shipped book.
 */
#include "match_args.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "opts.h"

enum { EXIT_USAGE = 2 };

static const char PROGRAM[] = "xqf-match";

int match_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    opts_verror(PROGRAM, fmt, ap);
    va_end(ap);
    return status;
}

int match_split_engines(int argc, char **argv, char **rest, int *nrest, int *at, int *count, int max,
                        int *engines, const char *what)
{
    *engines = 0;
    *nrest = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--engine") != 0) {
            rest[(*nrest)++] = argv[i];
            continue;
        }
        if (*engines == max)
            return match_fail(EXIT_USAGE, "%s%s --engine only", what, max == 1 ? "one" : "two");
        at[*engines] = i + 1;
        count[*engines] = 0;
        while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
            i++, count[*engines]++;
        ++*engines;
    }
    return -1;
}

/* The shipped book: next to an installed program, else in the source tree. */
const char *match_default_book(void)
{
    static char path[PATH_MAX + 64];
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(path, sizeof path, "%s/../share/xqf/default.book", exe);
            if (access(path, R_OK) == 0)
                return path;
        }
    }
    return XQF_SOURCE_BOOK;
}

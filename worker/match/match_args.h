/*
 * match_args.h - what xqf-match's commands (match_main.c: the match,
 * makebook, data; match_tactics.c: blunders, tactics, tree) share.
 */
#ifndef XQF_MATCH_ARGS_H
#define XQF_MATCH_ARGS_H

/* Prints "xqf-match: error: <message>" on stderr; returns status. */
int match_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Takes the --engine groups out of argv[1..argc): where each one's words
 * start and how many (up to the next --option) into at[] and count[],
 * room for max; the other words go to rest (*nrest of them).  Returns -1
 * with *engines, or after a message (what first) the exit status 2 when
 * there are more than max.
 */
int match_split_engines(int argc, char **argv, char **rest, int *nrest, int *at, int *count, int max,
                        int *engines, const char *what);

/* The shipped opening book: next to an installed program, else in the source tree. */
const char *match_default_book(void);

#endif

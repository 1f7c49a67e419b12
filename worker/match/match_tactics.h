/*
 * match_tactics.h - xqf-match's commands on positions rather than games:
 *
 *   xqf-match blunders --pgn FILE... --player NAME --out SUITE [--before CP] [--after CP]
 *   xqf-match tactics --suite SUITE --engine SPEC... [--nodes N | --depth D] [--concurrency N]
 *   xqf-match tree --engine SPEC... --engine SPEC... --depth D [--book FILE] [--count N]
 *
 * `blunders` finds a player's losing moves in games (tactics.h) and writes
 * them as a suite; `tactics` counts the positions of a suite an engine
 * gets right; `tree` compares two parameter sets' trees (node counts to a
 * depth) over a book's positions, with a confidence interval.  Each
 * returns the program's exit status (2: bad usage or input, nothing done).
 */
#ifndef XQF_MATCH_TACTICS_H
#define XQF_MATCH_TACTICS_H

/* Prints "xqf-match: error: <message>" on stderr; returns status (match_main.c). */
int match_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Takes the --engine groups out of argv[1..argc): where each one's words
 * start and how many (up to the next --option) into at[] and count[],
 * room for max; the other words go to rest (*nrest of them).  Returns -1
 * with *engines, or after a message (what first) the exit status 2 when
 * there are more than max (match_main.c).
 */
int match_split_engines(int argc, char **argv, char **rest, int *nrest, int *at, int *count, int max,
                        int *engines, const char *what);

/* The shipped opening book: next to an installed program, else in the source tree (match_main.c). */
const char *match_default_book(void);

int match_blunders(int argc, char **argv);
int match_tactics(int argc, char **argv);
int match_tree(int argc, char **argv);

#endif

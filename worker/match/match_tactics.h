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

int match_blunders(int argc, char **argv);
int match_tactics(int argc, char **argv);
int match_tree(int argc, char **argv);

#endif

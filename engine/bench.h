/*
 * bench.h - the search signature: a fixed set of positions searched to a
 * fixed depth from a cleared engine.  The total node count identifies the
 * search; a change that claims not to alter the search must not change it.
 */
#ifndef XQF_BENCH_H
#define XQF_BENCH_H

#include <stdint.h>
#include <stdio.h>

enum { BENCH_DEPTH = 8 };

/*
 * Searches every bench position to `depth` (BENCH_DEPTH when <= 0), prints
 * one line per position, then "Nodes searched: N" and "Nodes/second: M".
 * Returns the node count, or 0 when the engine cannot be created.
 */
uint64_t bench_run(int depth, FILE *out);

#endif

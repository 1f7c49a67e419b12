/*
 * perft.h - counting the leaves of the legal move tree, the move
 * generator's correctness check (against tests/data/perft.tsv) and
 * speed benchmark.  The last ply is counted by the size of the legal move
 * list ("bulk counting"), as Fairy-Stockfish does.
 */
#ifndef XQF_PERFT_H
#define XQF_PERFT_H

#include <stdint.h>
#include <stdio.h>

#include "board.h"

/* Leaves of the legal move tree of the given depth (depth 0: 1). */
uint64_t perft(Board *b, int depth);
/*
 * Prints "h2e2: N" for each legal move (in generation order), a blank line
 * and "Nodes searched: TOTAL" as the last line; returns the total.
 */
uint64_t perft_divide(Board *b, int depth, FILE *out);

#endif

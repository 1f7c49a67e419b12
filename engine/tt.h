/*
 * tt.h - the transposition table.
 *
 * Each entry keeps a lower and an upper bound with their own depths
 * (Fruit's scheme, seed 003): a fail-high raises the lower bound, a
 * fail-low lowers the upper bound, an exact score sets both.  Entries sit
 * in clusters of four sharing a 64-byte line; on a miss the entry with
 * the least depth, counting older searches as shallower, is replaced.
 * Mate scores are stored relative to the node and converted by ply.  An
 * all-zero entry is empty, so a freshly allocated table needs no pass.
 */
#ifndef XQF_TT_H
#define XQF_TT_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"

typedef struct {
    uint32_t check;    /* upper half of the key */
    Move move;
    int16_t lower, upper;
    uint8_t lower_depth1, upper_depth1; /* depth + 1 of each bound; 0: no such bound */
    uint8_t age;
    uint8_t mate_threat; /* a null move here was met by a mate (Crafty's memory) */
    uint8_t pad[2];
} TTEntry;

typedef struct {
    TTEntry *clusters; /* 4 entries each */
    size_t count;      /* number of clusters */
    uint8_t age;
} TT;

enum { TT_CLUSTER = 4, TT_DEFAULT_MB = 16, TT_MAX_MB = 4096 };

/* What a probe found; lower/upper are meaningful when their depth is >= 0. */
typedef struct {
    bool hit;
    Move move;
    int lower, upper;
    int lower_depth, upper_depth;
    bool mate_threat;
} TTProbe;

/* Allocates mb megabytes (at least one cluster). Returns 0, or -1 when out of memory (table unchanged). */
int tt_resize(TT *tt, size_t mb);
void tt_free(TT *tt);
/* Empties every entry. */
void tt_clear(TT *tt);
/* Marks the start of a new search (entries from earlier searches age). */
void tt_new_search(TT *tt);
TTProbe tt_probe(const TT *tt, uint64_t key, int ply);
/*
 * Records that a search of `depth` found `value` with window (alpha, beta):
 * value >= beta raises the lower bound, value <= alpha lowers the upper
 * bound, anything between sets both.
 */
void tt_store(TT *tt, uint64_t key, int depth, int ply, Move move, int value, int alpha, int beta);
/* Remembers that passing in this position gets us mated. */
void tt_mark_mate_threat(TT *tt, uint64_t key);
/* Permille of sampled entries written by the current search. */
int tt_hashfull(const TT *tt);

#endif

/*
 * tt.h - the transposition table.
 *
 * Each entry keeps a lower and an upper bound with their own depths
 * (Fruit 2.1's scheme): a fail-high raises the lower bound, a
 * fail-low lowers the upper bound, an exact score sets both.  Entries sit
 * in clusters of four sharing a 64-byte line; on a miss the entry with
 * the least depth, counting older searches as shallower, is replaced.
 * Mate scores are stored relative to the node and converted by ply.  An
 * entry also keeps the node's static evaluation, so a revisit skips the
 * evaluation.  An all-zero entry is empty, so a freshly allocated table
 * needs no pass.
 *
 * Lazy SMP threads share one table without locks.  An entry is stored as
 * two 64-bit words written and read with relaxed atomics, the first XORed
 * with a mix of the second: Hyatt and Mann's lockless hashing ("A
 * lock-less transposition table implementation for parallel search chess
 * engines", ICGA J. 25(1), 2002), also Crafty's and Stockfish's pre-2014
 * scheme.  A read that mixes the halves of two different writes decodes
 * to a key check that matches only by chance (2^-32, as a key collision)
 * and is a miss.  Two threads updating one entry at once may lose one
 * update, which costs a little search, never a wrong entry.
 *
 * Scores that depend on the path and not on the position (a perpetual
 * check or chase judged inside the tree, see rules.h) are never stored:
 * the caller passes them, and tt_store keeps only the move and the eval.
 */
#ifndef XQF_TT_H
#define XQF_TT_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"

/* An entry decoded (what tt.c works on; the table holds TTSlots). */
typedef struct {
    uint32_t check;    /* upper half of the key */
    Move move;
    int16_t lower, upper;
    uint8_t lower_depth1, upper_depth1; /* depth + 1 of each bound; 0: no such bound */
    uint8_t age;
    uint8_t flags;     /* TT_MATE_THREAT, TT_HAS_EVAL */
    int16_t eval;      /* static evaluation of the node */
} TTEntry;

enum {
    TT_MATE_THREAT = 1, /* a null move here was met by a mate (Crafty's memory) */
    TT_HAS_EVAL = 2
};

/* An entry as stored: (check, age, flags, eval) XOR mix(bounds), then bounds (move, values, depths). */
typedef struct {
    _Atomic uint64_t keyed, bounds;
} TTSlot;

typedef struct {
    TTSlot *clusters;  /* 4 entries each */
    size_t count;      /* number of clusters */
    uint8_t age;
} TT;

enum { TT_CLUSTER = 4, TT_DEFAULT_MB = 16, TT_MAX_MB = 4096 };

/* Score bounds the table knows (search.h's, repeated so the table needs nothing else). */
enum { TT_INF = 32000, TT_MATE_BOUND = 30000 - 128, TT_NO_EVAL = -32768 };

/* What a probe found; lower/upper are meaningful when their depth is >= 0. */
typedef struct {
    bool hit;
    Move move;
    int lower, upper;
    int lower_depth, upper_depth;
    bool mate_threat;
    int eval;          /* TT_NO_EVAL when not stored */
} TTProbe;

/* Allocates mb megabytes (at least one cluster). Returns 0, or -1 when out of memory (table unchanged). */
int tt_resize(TT *tt, size_t mb);
void tt_free(TT *tt);
/* Empties every entry. */
void tt_clear(TT *tt);
/* Marks the start of a new search (entries from earlier searches age). */
void tt_new_search(TT *tt);
TTProbe tt_probe(const TT *tt, uint64_t key, int ply);
/* Starts loading key's cluster into the cache (a probe soon after finds it there). */
void tt_prefetch(const TT *tt, uint64_t key);
/*
 * Records that a search of `depth` found `value` with window (alpha, beta):
 * value >= beta raises the lower bound, value <= alpha lowers the upper
 * bound, anything between sets both.  move (MOVE_NONE keeps the old one)
 * and eval (TT_NO_EVAL keeps the old one) are stored in any case; with
 * path_dependent the value itself is not.
 */
void tt_store(TT *tt, uint64_t key, int depth, int ply, Move move, int value, int alpha, int beta,
              int eval, bool path_dependent);
/* Remembers that passing in this position gets us mated. */
void tt_mark_mate_threat(TT *tt, uint64_t key);
/* Permille of sampled entries written by the current search. */
int tt_hashfull(const TT *tt);

#endif

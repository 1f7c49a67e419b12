/*
 * nnue.h - the network evaluation: an efficiently updatable neural network
 * (NNUE, Yu Nasu 2018, as Stockfish and Pikafish use it) of the shape
 * docs/nnue.md fixes, XQF-HM6-256-SCR-OB8.  docs/nnue.md is the contract
 * with the trainer (tuner/nnue/): features, quantisation, arithmetic and
 * file format follow it bit for bit.
 *
 *   7,560 features per perspective (6 mirrored king buckets x 14 piece
 *   indexes x 90 squares) -> 256 int16 per perspective -> SCReLU on both
 *   halves (side to move first) -> one of 8 output neurons by piece count.
 *
 * A net (NnueNet) is read-only once loaded; it holds its weights and which
 * arithmetic path (portable C or AVX2, chosen at run time) it uses, so two
 * engines in one process may hold different nets.  An NnueStack keeps the
 * accumulators of a search line, one per ply, brought up to date lazily
 * from the moves recorded on it, with a refresh cache per king bucket.
 * Nothing here keeps global state.
 */
#ifndef XQF_NNUE_H
#define XQF_NNUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "board.h"

enum {
    NNUE_KING_BUCKETS = 6,
    NNUE_PIECE_INDEXES = 14,
    NNUE_FEATURES = NNUE_KING_BUCKETS * NNUE_PIECE_INDEXES * SQUARES, /* 7,560 */
    NNUE_HIDDEN = 256,
    NNUE_OUTPUT_BUCKETS = 8,
    NNUE_QA = 127,
    NNUE_QB = 64,
    NNUE_SCALE = 400,
    NNUE_VERSION = 1,
    NNUE_DESCRIPTION_MAX = 4096,
    NNUE_HEADER_BYTES = 20,
    /* everything after the header and the description */
    NNUE_BODY_BYTES = 2 * NNUE_HIDDEN + 2 * NNUE_FEATURES * NNUE_HIDDEN
                    + 2 * NNUE_OUTPUT_BUCKETS * 2 * NNUE_HIDDEN + 4 * NNUE_OUTPUT_BUCKETS,
    NNUE_KING_SLOTS = 2 * NNUE_KING_BUCKETS /* bucket x mirrored: the refresh cache's keys */
};

#define NNUE_MAGIC "XQFNNUE1"
#define NNUE_ARCHITECTURE "XQF-HM6-256-SCR-OB8;QA127;QB64;S400"

/* The arithmetic of a net's accumulator updates and output; every path gives the same integers. */
typedef enum { NNUE_SIMD_PORTABLE = 0, NNUE_SIMD_AVX2 = 1 } NnueSimd;

typedef struct {
    int16_t b1[NNUE_HIDDEN];
    int16_t w1[NNUE_FEATURES][NNUE_HIDDEN];            /* feature-major */
    int16_t w2[NNUE_OUTPUT_BUCKETS][2 * NNUE_HIDDEN];  /* side to move's 256 first */
    int32_t b2[NNUE_OUTPUT_BUCKETS];
    NnueSimd simd;                                    /* nnue_set_simd */
    uint32_t description_length;
    char description[NNUE_DESCRIPTION_MAX + 1];       /* NUL-terminated as well */
} NnueNet;

/* One position's accumulators, by colour (RED's perspective, then BLACK's), not by side to move. */
typedef struct {
    int16_t v[2][NNUE_HIDDEN];
} NnueAccumulator;

/* The architecture hash of the file header: FNV-1a (32-bit) of NNUE_ARCHITECTURE. Can't fail. */
uint32_t nnue_architecture_hash(void);

/* The fastest path this CPU runs (AVX2 where the CPU has it, on x86-64 builds). */
NnueSimd nnue_simd_best(void);
/* Whether this build on this CPU runs path s. */
bool nnue_simd_available(NnueSimd s);
/* Makes net use path s. Returns 0, or -1 (nothing changed) when s is not available. */
int nnue_set_simd(NnueNet *net, NnueSimd s);
/* The name of a path ("portable", "avx2"). */
const char *nnue_simd_name(NnueSimd s);

/* A zeroed net (all weights 0, empty description) on the best path; NULL when out of memory. */
NnueNet *nnue_new(void);
/* A copy of net; NULL when out of memory. */
NnueNet *nnue_clone(const NnueNet *net);
/* Frees *net and sets it to NULL; safe on NULL. */
void nnue_destroy(NnueNet **net);

/*
 * Reads a net file (docs/nnue.md, "Net file").  Returns the net, or NULL
 * with a message in err naming what is wrong: the file cannot be read, a
 * wrong magic, version or architecture hash, a description over 4,096
 * bytes, a size other than the header implies (truncated: where it ends;
 * trailing bytes: how many), out of memory.  Never exits.
 */
NnueNet *nnue_load_memory(const void *data, size_t size, char *err, size_t errlen);
NnueNet *nnue_load_file(const char *path, char *err, size_t errlen);
/* The file form of net (malloc'd, *size bytes); NULL when out of memory. */
uint8_t *nnue_write_memory(const NnueNet *net, size_t *size);
/* Writes net to path. Returns 0, or -1 with a message in err. */
int nnue_save(const NnueNet *net, const char *path, char *err, size_t errlen);

/* ---- features ---- */

/*
 * The refresh-cache key of `perspective`'s king on king_sq (a square of
 * its palace): bucket * 2 + mirrored, 0-11.  Every king move changes it.
 */
int nnue_king_slot(int perspective, int king_sq);
/*
 * The feature index (0-7,559) of `piece` on sq for `perspective`, whose
 * king stands on king_sq: orientation, mirror, king bucket and piece
 * index of docs/nnue.md.
 */
int nnue_feature(int perspective, int king_sq, int piece, int sq);
/* The output bucket: (pieces on the board, kings included, - 2) / 4, 0-7. */
int nnue_output_bucket(const Board *b);

/* ---- arithmetic ---- */

/* acc = b1 + the rows of every piece on b, for `perspective`, from scratch. Can't fail. */
void nnue_refresh(const NnueNet *net, const Board *b, int perspective, int16_t *acc);
/*
 * The net's output from the side to move's accumulator `us` and the
 * other's `them`, with output bucket `bucket`: SCReLU, the output neuron,
 * the scale of docs/nnue.md.  Centipawns, side to move's view, raw (no
 * tempo, no clamp).  A file's weights beyond the training clamps wrap
 * around in 16 and 32 bits the same way on every path (never undefined).
 */
int nnue_output(const NnueNet *net, const int16_t *us, const int16_t *them, int bucket);
/* The evaluation of b from scratch (what `xqf-engine evalnet` prints). */
int nnue_evaluate(const NnueNet *net, const Board *b);

/* ---- the accumulators of a search line ---- */

/*
 * An NnueStack keeps one accumulator pair per ply of a search line.  The
 * search records each move before making it (nnue_stack_push, or
 * nnue_stack_push_null), which costs a few stores; the accumulators are
 * computed only when a position is evaluated: from the nearest computed
 * ancestor by the recorded moves' added and removed features, or, for a
 * perspective whose own king moved on the way (its bucket or mirror
 * changed), refreshed from the refresh cache (see nnue.c).  Going back
 * (unmake) needs nothing: ply p's entry stays valid for p's position.
 */
typedef struct NnueStack NnueStack;

/* A new stack; NULL when out of memory. */
NnueStack *nnue_stack_new(void);
void nnue_stack_destroy(NnueStack **s);
/* Starts a line at b (ply 0) for net: refreshes the root, forgets the cache (the net may be another). */
void nnue_stack_reset(NnueStack *s, const NnueNet *net, const Board *b);
/* Records m, about to be made on b (the position at ply), as the move into ply + 1 (ply + 1 <= MAX_PLY). */
void nnue_stack_push(NnueStack *s, int ply, const Board *b, Move m);
/* Records a null move from ply (b: the position at ply) to ply + 1. */
void nnue_stack_push_null(NnueStack *s, int ply, const Board *b);
/* The accumulators of b, the position at ply on the recorded line, brought up to date. */
const NnueAccumulator *nnue_stack_accumulator(NnueStack *s, const NnueNet *net, const Board *b, int ply);
/* The net's evaluation of b, the position at ply on the recorded line (nnue_evaluate's value). */
int nnue_stack_evaluate(NnueStack *s, const NnueNet *net, const Board *b, int ply);

/*
 * The net compiled into the program (cmake -DXQF_DEFAULT_NET=FILE): its
 * bytes, or NULL (*size 0) when the build has none.
 */
const uint8_t *nnue_default_data(size_t *size);

#endif

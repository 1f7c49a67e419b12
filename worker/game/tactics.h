/*
 * tactics.h - positions where a player went wrong, found in its games, and
 * a test of an engine on such positions.
 *
 * Blunders: a move after which the mover's own score fell from at least
 * `before` to at most `after` by its next move (or the game was lost by
 * checkmate right after it).  The engine did not see, one move earlier,
 * what the opponent had; the position before that move is the test.
 *
 * Suites: an opening book (book.h) whose lines carry EPD operations:
 *     FEN [moves m1 m2 ...] ; am MOVE...; bm MOVE...; id "TEXT";
 * `am` (avoid move) passes when the engine plays none of them, `bm` (best
 * move) when it plays one of them; a line needs one of the two.  The moves
 * of the line are the game's history (repetitions are judged with it).
 */
#ifndef XQF_TACTICS_H
#define XQF_TACTICS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "game.h"
#include "pgn.h"
#include "spec.h"

typedef struct {
    int before;            /* the mover's score before, at least (engine units) */
    int after;             /* its score at its next move, at most (mated counts) */
} BlunderRule;

/* One blunder: the move at `ply` of the game, and the two scores. */
typedef struct {
    const PgnGame *game;
    int ply;
    int before, after;
} Blunder;

/*
 * Calls found for every blunder of `player` (its name in the tags) in g.
 * Returns the number found.  Can't fail.
 */
int blunders_scan(const PgnGame *g, const char *player, const BlunderRule *rule,
                  void (*found)(void *ctx, const Blunder *b), void *ctx);

enum { SUITE_LINE_MAX = 4096 };
/*
 * A blunder as a suite line (no newline): the position before the move,
 * as a FEN and at most the last 200 plies of the game, "; am MOVE;" and an
 * id naming the game, the ply and the scores.  Can't fail.
 */
void blunder_line(const Blunder *b, const char *source, char out[SUITE_LINE_MAX]);

typedef struct Suite Suite;

/* Reads a suite. Returns it, or NULL with "FILE:LINE: problem" in err. */
Suite *suite_load(const char *path, char *err, size_t errlen);
/* Reads a suite from text in memory (name: for messages). The same. */
Suite *suite_parse(const char *text, const char *name, char *err, size_t errlen);
/* Frees the suite; safe on NULL, nulls the pointer. */
void suite_destroy(Suite **s);
int suite_size(const Suite *s);
/* Line i's id ("" when none). */
const char *suite_id(const Suite *s, int i);

/* One position's outcome. */
typedef struct {
    int index;             /* in the suite */
    bool pass;
    Move move;             /* MOVE_NONE on a fault */
    bool has_score;
    int score, depth;
    int64_t time_us;
    GameReason fault;      /* GAME_REASON_NONE, or what went wrong with the player */
    char detail[160];
} TacticResult;

typedef struct {
    uint64_t nodes;        /* > 0: fixed nodes per position */
    int depth;             /* > 0 (nodes 0): fixed depth */
    int threads;           /* positions searched at once, one player each */
    const volatile int *stop; /* may be NULL: positions not yet started are skipped once it is set */
} TacticsConfig;

/*
 * Searches every position of the suite with a player of `spec` (a new
 * game, so an empty hash table, for each) and calls done for each result,
 * in suite order, from the calling thread.  Returns the number of
 * positions passed, or -1 when a thread or player could not be created
 * (with the reason in err).
 */
int tactics_run(const Suite *s, const PlayerSpec *spec, const TacticsConfig *cfg,
                void (*done)(void *ctx, const TacticResult *r), void *ctx, char *err, size_t errlen);

#endif

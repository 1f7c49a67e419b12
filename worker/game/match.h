/*
 * match.h - game pairs between two players on several threads.
 *
 * Pair k plays opening order[k mod n] (the book in an order shuffled by the
 * seed) twice: game 0 with the first player as Red, game 1 with colours
 * reversed.  Each thread plays one game at a time with players of its own
 * (the built-in engine gets an Engine per player per thread).  Results are
 * the first player's view: W/D/L per finished game, the pentanomial per
 * complete pair (LL, LD, DD+WL, WD, WW as stats.h indexes them).  Games
 * running when the match stops are abandoned and not counted.
 *
 * xqf-match plays one long run; xqf-worker plays a task (a range of pairs)
 * with the same call.
 */
#ifndef XQF_MATCH_H
#define XQF_MATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "book.h"
#include "game.h"
#include "spec.h"
#include "stats.h"

typedef struct {
    PlayerSpec players[2];   /* [0] is the first player */
    TimeControl tc;
    Adjudication adj;
    int concurrency;         /* game threads, >= 1 */
    uint64_t seed;           /* opening order */
} MatchConfig;

typedef struct {
    int64_t pairs, games;                /* complete pairs, finished games */
    int64_t wins, draws, losses;         /* finished games, first player's view */
    int64_t penta[XQF_PENTA_CELLS];      /* complete pairs */
    int64_t by_reason[GAME_REASONS];     /* finished games by how they ended */
    int64_t lost_by[2][GAME_REASONS];    /* games each player lost, by reason */
    int64_t search_us;                   /* time inside the players' searches */
    int64_t thread_us;                   /* wall time of the game threads, summed */
} MatchCounts;

typedef struct {
    int64_t pair;
    int opening;             /* index in the book */
    int points[2];           /* first player's half-points in game 0 and 1: 0, 1 or 2 */
    GameReason reason[2];
} PairResult;

/*
 * Callbacks (any may be NULL).  game_done and pair_done run in game
 * threads, one at a time (under the match's lock: keep them short);
 * tick runs in the thread that called match_play_pairs, every tick_ms.
 * pair_done and tick return true to stop the match.
 */
typedef struct {
    void (*game_done)(void *ctx, const GameRecord *g, const PairResult *pair, int game);
    bool (*pair_done)(void *ctx, const PairResult *pair, const MatchCounts *totals);
    bool (*tick)(void *ctx, const MatchCounts *totals);
    int tick_ms;
    void *ctx;
} MatchCallbacks;

typedef struct Match Match;

/* A match over the book (which must outlive it); NULL when out of memory. */
Match *match_new(const MatchConfig *config, const Book *book);
void match_destroy(Match **m);

/*
 * Plays pairs first_pair .. first_pair + n_pairs - 1 and returns when they
 * are done or the match was stopped.  Counts accumulate over calls.
 * Returns 0, or -1 when a game could not be played (a thread or player
 * could not be created, out of memory, or a player's engine refused an
 * option: game.h), which stops the match: match_failure says why.
 */
int match_play_pairs(Match *m, int64_t first_pair, int64_t n_pairs, const MatchCallbacks *cb);
/* Why match_play_pairs failed ("" when it has not). */
const char *match_failure(const Match *m);

/*
 * The first player's half-points (0, 1 or 2) in a finished game of a
 * pair: in game 0 the first player is Red, in game 1 Black.
 */
int match_points(const GameRecord *g, int game);

/* A snapshot of the counts. Thread-safe. */
void match_counts(Match *m, MatchCounts *out);

#endif

/*
 * player.h - one side of a game: the built-in engine in this process (its
 * own Engine: parameters, hash table, state) or an external engine program
 * over UCI/UCCI (external.h).  A player lives in one game thread; only
 * player_interrupt may be called from another thread.
 */
#ifndef XQF_PLAYER_H
#define XQF_PLAYER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "board.h"
#include "game.h"
#include "spec.h"

/* The game so far, as a player needs it. */
typedef struct {
    const char *fen;        /* the position the game started from */
    const GameMove *moves;  /* every move since (opening moves included) */
    int count;
    const Board *board;     /* the current position, with its history */
} GameView;

/* What a player may spend on a move. */
typedef struct {
    uint64_t nodes;         /* > 0: fixed nodes */
    int depth;              /* > 0 (nodes 0): fixed depth */
    int64_t time_ms[2];     /* clock mode: time left per colour */
    int64_t inc_ms[2];
    int64_t deadline_us;    /* clock_now_us() time by which an answer must come */
    const atomic_bool *stop; /* may be NULL */
} ThinkLimits;

/* A player's answer. */
typedef struct {
    Move move;
    GameReason fault;       /* GAME_REASON_NONE, a fault reason, or GAME_ABANDONED when stopped */
    bool has_score;
    int score;              /* mover's view, engine units */
    int depth;
    int64_t nodes;          /* the last nodes an external engine reported for this search (0: none) */
    int64_t time_us;        /* from the request to the answer */
    char detail[160];       /* with a fault: what happened ("bestmove e0e2", "killed by signal 11") */
    bool refused;           /* the fault: the engine refused an option of its spec (external.h), nobody's loss */
} Reply;

/* A player for the spec (which is copied); NULL when out of memory. */
Player *player_new(const PlayerSpec *spec);
/* Ends the player (an external engine is told to quit, then killed); safe on NULL. */
void player_destroy(Player **p);
/*
 * Makes a built-in player another built-in spec's player (its parameters,
 * name, and hash size: the table is only reallocated when the size
 * changes), so that a thread keeps its engines from task to task; the
 * next player_new_game clears their state.  Returns 0, or -1 when either
 * is external or the table cannot be allocated (then destroy the player).
 */
int player_set_spec(Player *p, const PlayerSpec *spec);
const char *player_name(const Player *p);

/*
 * Gets ready for a new game (clears the hash table; starts or restarts an
 * external engine).  Returns 0, or -1 with the fault in *reply.
 */
int player_new_game(Player *p, const atomic_bool *stop, Reply *reply);

/* Chooses a move for the side to move in the view; faults come back in reply->fault. */
void player_think(Player *p, const GameView *view, const ThinkLimits *limits, Reply *reply);

/* Asks a running search to end now (thread-safe); the game is being abandoned. */
void player_interrupt(Player *p);

#endif

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
#include "game_types.h"
#include "spec.h"

/* A player: the built-in engine or an external one (game.h names it too, for game_play). */
typedef struct Player Player;

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

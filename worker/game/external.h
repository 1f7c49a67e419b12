/*
 * external.h - an engine program driven over UCI or UCCI, with the
 * notation its spec asks for (ranks 1-10, H/E letters) translated both ways.
 *
 * The process is started lazily by external_new_game and restarted there
 * after any fault: a crash, a hang, bad output or an illegal move all kill
 * it, so each game starts with a healthy engine.  UCCI engines are asked
 * for milliseconds (`setoption usemillisec true`).
 *
 * Each option (the hash size, the spec's options) is followed by isready:
 * an `info string error: ...` line before readyok, which is how xqf-engine
 * answers an option it does not know or a value out of range, means the
 * engine refused it.  The start fails then with reply->refused and the
 * option and the engine's words in the detail: the game cannot be played
 * as asked (game.h).
 */
#ifndef XQF_EXTERNAL_H
#define XQF_EXTERNAL_H

#include "game_types.h"
#include "spec.h"

typedef struct External External;

/* A stopped engine for the spec (copied); NULL when out of memory. */
External *external_new(const PlayerSpec *spec);
/* Sends quit, then kills and reaps the process; safe on NULL. */
void external_destroy(External **x);
/*
 * Starts the process if needed and begins a game. Returns 0, or -1 with the
 * fault in reply (reply->refused: an option was refused).
 */
int external_new_game(External *x, const atomic_bool *stop, Reply *reply);
/* Asks for a move and waits for it until limits->deadline_us. */
void external_think(External *x, const GameView *view, const ThinkLimits *limits, Reply *reply);

#endif

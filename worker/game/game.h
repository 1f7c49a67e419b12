/*
 * game.h - one game between two players, refereed: the rules module decides
 * how a game ends by the rules, this module adds clocks, adjudication and
 * the faults of players (illegal move, crash, ...), and keeps the record.
 *
 * Scores in a record are the mover's view, in the engine's units:
 * centipawns, or +-(MATE - plies) for mates (search.h).
 */
#ifndef XQF_GAME_H
#define XQF_GAME_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "board.h"
#include "fen.h"
#include "game_types.h"
#include "rules.h"
#include "run_settings.h"

typedef struct Player Player;

/* Time control: fixed nodes or depth per move, or a clock with base time and increment. */
typedef struct {
    uint64_t nodes;        /* > 0: fixed nodes per move, no clock */
    int depth;             /* > 0 (nodes 0): fixed depth per move, no clock */
    int64_t base_ms;       /* clock: time for the game */
    int64_t inc_ms;        /* clock: added after each move */
    int64_t margin_ms;     /* clock: overrun tolerated before a time forfeit */
    int64_t move_timeout_ms; /* fixed nodes or depth: an external engine answering later hangs */
    /*
     * Time odds: a clock of its own for one side (base1_ms 0: none).  In a
     * match's or a task's settings base_ms/inc_ms are the first player's
     * clock and base1_ms/inc1_ms the second's; game_play reads them by
     * colour (red's, black's): time_control_game turns one into the other.
     */
    int64_t base1_ms, inc1_ms;
} TimeControl;

/*
 * The time control of one game of a match or task whose first player has
 * red (first_red) or black, with the clocks by colour as game_play reads
 * them.  This function can't fail.
 */
TimeControl time_control_game(const TimeControl *tc, bool first_red);

/*
 * Parses "10+0.1" (seconds, increment in seconds) or "10" into tc's clock
 * fields. Returns 0, or -1 when malformed or not positive.
 */
int time_control_parse(TimeControl *tc, const char *text);

/*
 * Adjudication; a count of 0 turns a rule off.  Its rules are a run's
 * settings (run_settings.def's ADJUDICATION group, each with its help and
 * bounds), a member each by its column's name: resign_moves, the plies
 * both engines must agree for on a |score| of at least resign_score
 * (centipawns); draw_after, the full move from which draw_moves plies in
 * a row with |score| <= draw_score are a draw; max_plies, the length at
 * which a game is a draw (0: no limit).
 */
#define ADJUDICATION_MEMBER(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, store, \
                            ctype, shown)                                                                               \
    int store;
typedef struct {
    RUN_SETTINGS_ADJUDICATION(ADJUDICATION_MEMBER)
} Adjudication;

/* An opening: a FEN and moves to play from it before the engines take over. */
typedef struct {
    char fen[FEN_MAX];
    const Move *moves;
    int count;
} Opening;

/*
 * Plays one game from the opening, red and black the two players (their
 * new game is started here).  stop (may be NULL) abandons the game as soon
 * as it is set.  The record is (re)filled in *out.
 * Returns 0, or -1 when the game cannot be played as asked, with why in
 * out->detail: out of memory (the record holds what was played), or a
 * player's engine refused an option of its spec (reply->refused: the game
 * is not played, GAME_ABANDONED, and no one loses it: the player is not
 * the one it was meant to be).
 */
int game_play(Player *red, Player *black, const Opening *opening, const TimeControl *tc,
              const Adjudication *adj, const atomic_bool *stop, GameRecord *out);

/*
 * The adjudication rules (the maximum length aside), also usable on their
 * own with scripted scores: feeds the score of the move just played
 * (mover's view; has_score false when the engine gave none, which breaks
 * both runs), its full-move number and its mover (RED or BLACK).  Returns
 * the adjudicated result with *reason set, or RESULT_NONE.  The state lives
 * in *state, zeroed before a game.
 */
typedef struct {
    int win_run;           /* consecutive plies agreeing on one winner */
    int win_side;
    int draw_run;
} AdjudicationState;

GameResult adjudication_update(AdjudicationState *state, const Adjudication *adj, int mover,
                               bool has_score, int score, int fullmove, GameReason *reason);

#endif

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
#include "rules.h"

typedef struct Player Player;

/*
 * Why a game ended.  The first group are the rules, then adjudication, then
 * faults, then rules added later.
 */
typedef enum {
    GAME_REASON_NONE = 0,
    GAME_CHECKMATE,
    GAME_STALEMATE,
    GAME_PERPETUAL_CHECK,
    GAME_REPETITION,
    GAME_NO_CAPTURE,
    GAME_ADJUDICATED_WIN,  /* both engines' scores agreed on a winner */
    GAME_ADJUDICATED_DRAW, /* both engines' scores stayed near 0 */
    GAME_MAX_LENGTH,       /* the game reached the maximum length: a draw */
    GAME_TIME_FORFEIT,
    GAME_ILLEGAL_MOVE,
    GAME_BAD_OUTPUT,       /* unparsable move or answer */
    GAME_CRASH,            /* the engine process ended */
    GAME_NO_RESPONSE,      /* no answer by the deadline (fixed nodes) */
    GAME_START_FAILURE,    /* the engine could not be started or did not answer its handshake */
    GAME_ABANDONED,        /* the match was stopped during the game: not counted */
    /*
     * Rules added later go last: results carry games counted by reason in
     * this order (the `reasons` array on the wire and in the database).
     */
    GAME_PERPETUAL_CHASE,
    GAME_REASONS
} GameReason;

/* A short English phrase ("checkmate", "time forfeit", ...). */
const char *game_reason_text(GameReason r);
/* True for the reasons that are a player's fault (time forfeit .. start failure). */
bool game_reason_is_fault(GameReason r);

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

/* Adjudication; a count of 0 turns a rule off. */
typedef struct {
    int resign_moves;      /* consecutive plies both engines must agree for */
    int resign_score;      /* |score| at least this (centipawns) */
    int draw_after;        /* draw adjudication from this full move on */
    int draw_moves;        /* consecutive plies with |score| <= draw_score */
    int draw_score;
    int max_plies;         /* the game is a draw at this length (0: no limit) */
} Adjudication;

/* One ply of a record. */
typedef struct {
    Move move;
    bool book;             /* from the opening, not played by an engine */
    bool has_score;
    int score;             /* mover's view */
    int depth;
    int64_t time_us;
} GameMove;

/* The record of a game; filled by game_play, freed by game_record_free. */
typedef struct {
    char fen[FEN_MAX];     /* the position the game (and its opening moves) started from */
    GameMove *moves;
    int count, capacity;
    GameResult result;     /* RESULT_NONE only when abandoned */
    GameReason reason;
    char detail[256];      /* a sentence for humans: who won and why */
    int64_t search_us;     /* time spent inside the players' searches */
} GameRecord;

/* Empties a record (no allocation). Can't fail. */
void game_record_init(GameRecord *g);
/* Frees a record's moves and empties it; safe twice. */
void game_record_free(GameRecord *g);
/* Appends a move to the record. Returns 0, or -1 when out of memory (the record unchanged). */
int game_record_push(GameRecord *g, const GameMove *m);

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

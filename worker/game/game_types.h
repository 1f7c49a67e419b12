/*
 * game_types.h - the shared game types at the bottom of the game library:
 * why a game ended, a game's record, and what a player is asked and
 * answers (the position with its history, the limits of a search, the
 * reply).  The referee (game.h), the players (player.h) and an external
 * engine (external.h) all speak them and none of them includes another
 * for them.
 */
#ifndef XQF_GAME_TYPES_H
#define XQF_GAME_TYPES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "board.h"
#include "fen.h"
#include "rules.h"

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

#endif

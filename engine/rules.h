/*
 * rules.h - how a Xiangqi game ends; one implementation for the search and
 * for every referee (xqf-match, xqf-worker, `xqf-engine judge`).
 *
 * - No legal move loses for the side to move, in check (mate) or not
 *   (stalemate).
 * - Repetition (Asian rules as Pikafish applies them): when a position
 *   recurs, the moves of the cycle decide.
 *   1. A side that gave check with every one of its moves in the cycle
 *      loses (perpetual check); both sides: a draw.
 *   2. Otherwise a side that chased one same enemy piece with every one of
 *      its moves loses (perpetual chase); both sides: a draw.  The chased
 *      piece is followed as it moves along the cycle.
 *   3. Otherwise a draw.
 *   A move chases a piece when, after it, the mover attacks the piece "as a
 *   chase" and did not before it (a direct or a discovered attack):
 *   - the attacker is a rook, horse, cannon, advisor or elephant (kings and
 *     pawns attack freely) and could capture the piece legally;
 *   - the piece is not the king (that is check) nor a pawn that has not
 *     crossed the river;
 *   - and either the piece is worth more than its attacker (a rook attacked
 *     by a horse or cannon; a rook, horse or cannon by an advisor or
 *     elephant), or it is unprotected: its side has no legal recapture
 *     after the capture (a pinned protector, or a king recapturing into an
 *     attack, does not protect) and it is not a piece of the attacker's
 *     type that could legally take the attacker back (an offered exchange,
 *     e.g. rook facing rook).
 *   The search counts the first recurrence (2 occurrences), a referee the
 *   third.  The chase test runs only on a recurrence without perpetual
 *   check, on a copy of the position: making moves costs nothing more.
 * - 120 plies (60 moves each) without a capture: a draw, unless the last
 *   move mated.
 */
#ifndef XQF_RULES_H
#define XQF_RULES_H

#include "board.h"

typedef enum {
    RESULT_NONE = 0, /* game goes on */
    RESULT_RED_WINS,
    RESULT_BLACK_WINS,
    RESULT_DRAW
} GameResult;

typedef enum {
    REASON_NONE = 0,
    REASON_CHECKMATE,
    REASON_STALEMATE,       /* no legal move, not in check: a loss */
    REASON_PERPETUAL_CHECK, /* the checking side loses */
    REASON_PERPETUAL_CHASE, /* the chasing side loses */
    REASON_REPETITION,      /* any other repetition: a draw */
    REASON_NO_CAPTURE       /* 120 plies without a capture: a draw */
} ResultReason;

typedef enum {
    REP_NONE = 0,
    REP_DRAW,
    REP_WIN, /* the side to move wins: the opponent checked or chased perpetually */
    REP_LOSS /* the side to move loses: it checked or chased perpetually */
} RepetitionStatus;

typedef struct {
    GameResult result;
    ResultReason reason;
} Outcome;

enum { RULE_NO_CAPTURE_PLIES = 120 };

/*
 * Looks back for the current position among those since the last capture
 * or null move; when it has occurred `occurrences` times in all (2 in the
 * search, 3 for a referee), judges the moves since the earliest of them
 * (perpetual check, then perpetual chase).  Does not change b.
 */
RepetitionStatus rules_repetition(const Board *b, int occurrences);

/* The game's state after the last move, as a referee sees it. */
Outcome rules_outcome(Board *b);

/* "1-0", "0-1", "1/2-1/2" or "*". */
const char *rules_result_text(GameResult r);
/* A short English phrase ("checkmate", "perpetual check", ...). */
const char *rules_reason_text(ResultReason r);

#endif

/*
 * rules.h - how a Xiangqi game ends; one implementation for the search and
 * for every referee (xqf-match, xqf-worker).
 *
 * - No legal move loses for the side to move, in check (mate) or not
 *   (stalemate).
 * - Repetition: when a position recurs, the moves of the cycle decide.  A
 *   side that gave check with every one of its moves in the cycle while the
 *   other did not loses (perpetual check); otherwise it is a draw.  The
 *   search counts the first recurrence (2 occurrences), a referee the third.
 * - 120 plies (60 moves each) without a capture: a draw, unless the last
 *   move mated.
 *
 * Adding perpetual chase (Asian rules) fits the same walk: give State a
 * `chase` field set by board_make with the squares of enemy pieces that the
 * move newly attacks and that are unprotected (or any rook attacked by a
 * horse or cannon), excluding pieces attacked in the position before and
 * exchanges; on a repetition, intersect the chase sets of one side's moves
 * over the cycle (tracking each chased piece as it moves); a non-empty
 * result with no perpetual check on the other side loses for the chaser.
 * Pikafish's rule_judge and ElephantEye's RepStatus do it this way.
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
    REASON_REPETITION,      /* any other repetition: a draw */
    REASON_NO_CAPTURE       /* 120 plies without a capture: a draw */
} ResultReason;

typedef enum {
    REP_NONE = 0,
    REP_DRAW,
    REP_WIN, /* the side to move wins: the opponent checked perpetually */
    REP_LOSS /* the side to move loses: it checked perpetually */
} RepetitionStatus;

typedef struct {
    GameResult result;
    ResultReason reason;
} Outcome;

enum { RULE_NO_CAPTURE_PLIES = 120 };

/*
 * Looks back for the current position among those since the last capture
 * or null move; when it has occurred `occurrences` times in all (2 in the
 * search, 3 for a referee), judges the moves since the earliest of them.
 */
RepetitionStatus rules_repetition(const Board *b, int occurrences);

/* The game's state after the last move, as a referee sees it. */
Outcome rules_outcome(Board *b);

/* "1-0", "0-1", "1/2-1/2" or "*". */
const char *rules_result_text(GameResult r);
/* A short English phrase ("checkmate", "perpetual check", ...). */
const char *rules_reason_text(ResultReason r);

#endif

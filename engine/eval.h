/*
 * eval.h - static evaluation, in centipawns from the side to move's view.
 *
 * Every weight is in the parameter table (params.def).  Material and the
 * piece-square terms are folded into middlegame and endgame tables built
 * from the parameters by eval_init (the post-update hook: call it again
 * after changing parameters); the score blends the two by game phase (the
 * rooks, horses and cannons left).  On top come mobility, king safety in
 * layered Xiangqi attack patterns (empty-head and central cannon, bottom
 * cannon with a screen, horses and rooks near the palace, several attackers
 * together, missing advisors and elephants), crossed and linked pawns, and
 * piece combinations.
 */
#ifndef XQF_EVAL_H
#define XQF_EVAL_H

#include "board.h"
#include "params.h"

enum { PHASE_MAX = 16 };

typedef struct {
    const Params *params;
    bool threats;            /* a threat or palace-attack weight is not 0: their attack sets are worth building */
    bool king_relative;      /* a king-relative weight is not 0 */
    int16_t mg[16][SQUARES]; /* material + position, by piece code */
    int16_t eg[16][SQUARES];
} EvalTables;

/* Builds the tables for params (kept by pointer: it must outlive t). Can't fail. */
void eval_init(EvalTables *t, const Params *params);
int evaluate(const Board *b, const EvalTables *t);
/*
 * The evaluation as a linear function of the parameters, for fitting the
 * weights to data (Texel's method): sets coef[i] (PARAM_TOTAL entries) to
 * the coefficient of parameter i in this position's evaluation, phase
 * blending included, so that evaluate(b) == sum(coef[i] * value of i) up to
 * the final rounding to whole centipawns (less than one: the terms are
 * summed in half centipawns, so halved endgame terms are exact).  Every evaluation weight enters linearly.  Returns
 * evaluate(b).  Not for the search: it is much slower.
 */
int eval_trace(const Board *b, const EvalTables *t, double *coef);
/* The material value of a piece type in the middlegame (for move ordering and delta pruning). */
int eval_piece_value(const EvalTables *t, int type);

#endif

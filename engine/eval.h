/*
 * eval.h - static evaluation, in centipawns from the side to move's view.
 * For now material and a few positional terms; the king-safety evaluation
 * with every weight in the parameter table comes with the full engine.
 */
#ifndef XQF_EVAL_H
#define XQF_EVAL_H

#include "board.h"

int evaluate(const Board *b);

#endif

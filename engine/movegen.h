/*
 * movegen.h - move generation.
 *
 * The generators produce pseudo-legal moves (every rule of piece movement,
 * but the mover's king may be left attacked); board_legal() filters them.
 * movegen_legal() gives the legal list directly; movegen_captures() and
 * movegen_quiet_checks() serve the quiescence search.
 */
#ifndef XQF_MOVEGEN_H
#define XQF_MOVEGEN_H

#include "board.h"

typedef struct {
    int count;
    Move moves[MAX_MOVES];
    int scores[MAX_MOVES];
} MoveList;

enum { GEN_CAPTURES = 1, GEN_QUIETS = 2, GEN_ALL = 3 };

/* Appends the pseudo-legal moves of the kinds in `kinds` (GEN_*). Can't fail. */
void movegen_pseudo(const Board *b, MoveList *list, int kinds);
/* All legal moves of the side to move. */
void movegen_legal(Board *b, MoveList *list);
/* Legal captures only. */
void movegen_legal_captures(Board *b, MoveList *list);
/* Quiet (non-capturing) legal moves that give check. */
void movegen_quiet_checks(Board *b, MoveList *list);
/* The number of legal moves, without building a list for the caller. */
int movegen_count_legal(Board *b);
/* True when m is a legal move in this position (for hash moves, killers, input). */
bool movegen_is_legal(Board *b, Move m);

#endif

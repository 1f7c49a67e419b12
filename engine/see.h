/*
 * see.h - static exchange evaluation for Xiangqi.
 *
 * The exchange on a move's target square is played out on the board's
 * occupancy: each side recaptures with its least valuable attacker until
 * one side stops, and the best either side can force is the result.  What
 * makes it Xiangqi and not chess: a cannon attacks over exactly one screen,
 * so a piece that leaves the line can turn a cannon on or off (both are
 * seen, because the attackers are found again on the changed occupancy
 * after every capture); a horse is blocked by its leg and an elephant by
 * its eye, which captures can empty; advisors and the king stay in their
 * palace and elephants on their side; a pawn attacks sideways only once
 * across the river.  The king takes part only as the last capturer (it may
 * not step onto an attacked square).  Pins are not seen, nor the flying
 * general opened by a capture: both are rare on an exchange square and cost
 * a king-attack test per capture.
 *
 * Values (SEE_VALUE) are fixed, not the evaluation's: they rank exchanges,
 * and pruning margins are tuned against them.
 */
#ifndef XQF_SEE_H
#define XQF_SEE_H

#include "board.h"

extern const int SEE_VALUE[PIECE_TYPES];

/*
 * The material balance, for the side making m, of the exchange m starts on
 * its target square (a quiet move: what the mover risks there).  m must be
 * pseudo-legal.  The board is used as scratch and restored. Can't fail.
 */
int see(Board *b, Move m);
/* True when see(b, m) >= threshold (the form pruning asks in). */
bool see_ge(Board *b, Move m, int threshold);

#endif

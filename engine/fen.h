/*
 * fen.h - positions and moves as text.
 *
 * FEN as Pikafish writes it: ranks from Black's back rank (rank 9) down,
 * letters K A B N R C P (upper case Red), side `w` (Red) or `b`, then
 * `- -`, the plies since the last capture and the full-move number.
 * Accepted besides: `r` for Red to move, `E`/`H` for elephant/horse, and
 * FENs cut after the side field.  Positions that cannot arise in a game are
 * rejected with a message that names the problem.
 *
 * Moves are ICCS text: from file, from rank, to file, to rank ("h2e2").
 */
#ifndef XQF_FEN_H
#define XQF_FEN_H

#include <stddef.h>

#include "board.h"

#define START_FEN "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
enum { FEN_MAX = 128 };

/*
 * FEN_GAME accepts only positions that can arise in a game.  FEN_ANALYSIS
 * also accepts one where the side not to move is in check (move-generator
 * test positions such as a mutual cannon check; the reference perft table
 * has one): perft then counts capturing the king as a move, as
 * Fairy-Stockfish does, and a side without a king is never in check.
 */
enum { FEN_GAME = 0, FEN_ANALYSIS = 1 };

/* Sets *b from fen. Returns 0, or -1 with a message in err; *b is untouched on error. */
int fen_parse(Board *b, const char *fen, int mode, char *err, size_t errlen);
/* Writes the FEN of b (at most FEN_MAX bytes with the terminator). Can't fail. */
void fen_write(const Board *b, char *out);

/* Writes "h2e2" (5 bytes with the terminator). Can't fail. */
void move_text(Move m, char *out);
/*
 * Parses ICCS move text and checks that the move is legal in b.
 * Returns 0 and sets *m, or -1 with a message in err.
 */
int move_parse(Board *b, const char *text, Move *m, char *err, size_t errlen);
/* Writes a square's name ("e0", 3 bytes). */
void square_text(int sq, char *out);

#endif

/*
 * types.h - the engine's basic vocabulary: colours, pieces, squares, moves.
 *
 * Squares are numbered rank * 9 + file, rank 0 being Red's back rank and
 * file 0 the a-file, exactly as ICCS move text reads them ("h2e2": file h,
 * rank 2).  A piece is its type in the low three bits plus its colour in
 * bit 3, so Red pieces are 1..7 and Black pieces 9..15; 0 is an empty square.
 * A move packs its from-square in bits 0-6 and its to-square in bits 7-13;
 * MOVE_NONE (0) is never a legal move because from == to == a0.
 */
#ifndef XQF_TYPES_H
#define XQF_TYPES_H

#include <stdbool.h>
#include <stdint.h>

enum { RED = 0, BLACK = 1 };

enum {
    EMPTY = 0,
    KING = 1,
    ADVISOR = 2,
    ELEPHANT = 3,
    HORSE = 4,
    ROOK = 5,
    CANNON = 6,
    PAWN = 7,
    PIECE_TYPES = 8
};

enum { FILES = 9, RANKS = 10, SQUARES = 90 };

typedef uint16_t Move;
#define MOVE_NONE ((Move)0)

static inline int make_piece(int color, int type) { return type | (color << 3); }
static inline int piece_type(int piece) { return piece & 7; }
static inline int piece_color(int piece) { return piece >> 3; }

static inline int sq_make(int file, int rank) { return rank * FILES + file; }
static inline int sq_file(int sq) { return sq % FILES; }
static inline int sq_rank(int sq) { return sq / FILES; }

static inline Move move_make(int from, int to) { return (Move)(from | (to << 7)); }
static inline int move_from(Move m) { return m & 127; }
static inline int move_to(Move m) { return m >> 7; }

/* Plies a game or a search line may hold; see board.h for how it is used. */
enum { MAX_PLY = 128, MAX_MOVES = 160 };

#endif

/*
 * board.h - the position: pieces, occupancy lines, piece lists, Zobrist key,
 * and a stack of states for make/unmake and repetition detection.
 *
 * A Board is a plain value: copying it copies the position and its history.
 * States: states[top] describes the current position (its key, whether the
 * side to move is in check, the plies since the last capture, and the move
 * and capture that led to it).  board_make pushes a state, board_unmake
 * pops one.  When the stack is nearly full, board_make drops the oldest
 * states (only positions since the last capture matter for repetition, and
 * after 120 of those the game is drawn anyway), so a game of any length can
 * be played on one Board.
 */
#ifndef XQF_BOARD_H
#define XQF_BOARD_H

#include <stdbool.h>
#include <stdint.h>

#include "tables.h"
#include "types.h"

enum { STATE_STACK = 1024, STATE_KEEP = 512 };

typedef struct {
    uint64_t key;
    Move move;         /* the move that led here (MOVE_NONE: root or null move) */
    uint8_t captured;  /* the piece it captured */
    uint8_t check;     /* the side to move here is in check */
    uint16_t rule60;   /* plies since the last capture */
} State;

typedef struct Board {
    uint8_t squares[SQUARES];
    uint8_t slot[SQUARES];                 /* index in the piece list */
    uint8_t list[2][PIECE_TYPES][5];
    uint8_t count[2][PIECE_TYPES];
    uint16_t rank_bits[RANKS];
    uint16_t file_bits[FILES];
    int side;
    int fullmove;                          /* the current full-move number */
    int plies;                             /* plies played since the FEN */
    int top;
    /*
     * Keys of piece families, for the search's correction history (kept by
     * make and unmake, not by null moves): the structure (pawns, advisors,
     * elephants and both kings) and each colour's attacking pieces (rooks,
     * horses, cannons) with its king.  Zobrist piece keys, no side to move.
     */
    uint64_t structure_key, attack_key[2];
    State states[STATE_STACK];
} Board;

/* Empties the board (no kings: not a legal position until pieces are put). */
void board_clear(Board *b);
/* Puts a piece on an empty square; used by FEN parsing. Can't fail. */
void board_put(Board *b, int sq, int piece);
/* Recomputes key and check flag of the current state after board_put calls. */
void board_finish_setup(Board *b, int rule60);
/* Sets the start position. */
void board_startpos(Board *b);

static inline int board_king(const Board *b, int color) { return b->list[color][KING][0]; }
static inline const State *board_state(const Board *b) { return &b->states[b->top]; }
static inline bool board_in_check(const Board *b) { return b->states[b->top].check; }
static inline uint64_t board_key(const Board *b) { return b->states[b->top].key; }

/* True when `color`'s king is attacked (including by the facing enemy king). */
bool board_king_attacked(const Board *b, int color);
/* True when a piece of `by` attacks `sq` (any piece type, for evaluation). */
bool board_square_attacked(const Board *b, int sq, int by);

/* Plays a pseudo-legal move; the caller checks legality first. */
void board_make(Board *b, Move m);
void board_unmake(Board *b);
/* Passes the move (null move for the search); not allowed in check. */
void board_make_null(Board *b);
void board_unmake_null(Board *b);

/* True when the pseudo-legal move m does not leave the mover's king attacked. */
bool board_legal(Board *b, Move m);
/*
 * True when the pseudo-legal move m leaves the king of the side owning the
 * piece on its from-square unattacked, whichever side is to move: a full
 * test that, unlike board_legal, uses neither the side to move nor its
 * check flag (the rules module asks it of hypothetical captures).
 */
bool board_move_safe(Board *b, Move m);
/* True when the pseudo-legal, legal move m checks the opponent. */
bool board_gives_check(Board *b, Move m);

/* True when `color` still has a piece able to attack: rook, horse, cannon or a pawn across the river. */
bool board_has_attackers(const Board *b, int color);

/* Key recomputed from scratch, to check the incremental one. */
uint64_t board_compute_key(const Board *b);

#endif

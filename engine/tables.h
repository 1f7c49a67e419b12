/*
 * tables.h - precomputed geometry and hash keys, built once per process.
 *
 * Leaper moves (king, advisor, elephant, horse, pawn) come from per-square
 * target lists with their blocking squares (elephant eye, horse leg).
 * Rooks and cannons use the bit-rank / bit-file scheme of ElephantEye: each
 * rank keeps a 9-bit occupancy and each file a 10-bit one; for a slider at
 * position p on that line and an occupancy o, the tables give the masks of
 * the empty squares it can go to, of the first piece it meets in each
 * direction (a rook capture) and of the second (a cannon capture).
 *
 * tables_init() is idempotent and thread-safe; everything that reads these
 * tables (board_*) calls it first.
 */
#ifndef XQF_TABLES_H
#define XQF_TABLES_H

#include <stdint.h>

#include "types.h"

typedef struct {
    uint8_t count;
    uint8_t to[8];
    uint8_t block[8]; /* the horse leg or elephant eye; unused for others */
} LeaperTargets;

typedef struct {
    uint16_t slide;  /* empty squares reachable along the line */
    uint16_t first;  /* first occupied square each way: rook captures */
    uint16_t second; /* second occupied square each way: cannon captures */
} LineMasks;

extern LeaperTargets tab_king[SQUARES];
extern LeaperTargets tab_advisor[SQUARES];
extern LeaperTargets tab_elephant[SQUARES];
extern LeaperTargets tab_horse[SQUARES];
/* Horses that would attack a square: from-square and the leg that must be empty. */
extern LeaperTargets tab_horse_attackers[SQUARES];
extern LeaperTargets tab_pawn[2][SQUARES];

/* A set of squares, one bit per square (90 bits), and the unblockable leapers' targets as sets. */
__extension__ typedef unsigned __int128 SquareBits;
extern SquareBits tab_king_set[SQUARES];
extern SquareBits tab_advisor_set[SQUARES];
extern SquareBits tab_pawn_set[2][SQUARES];
extern SquareBits tab_palace_set[2];

extern LineMasks tab_rank[FILES][1 << FILES];
extern LineMasks tab_file[RANKS][1 << RANKS];

/* Bits set in a line mask (at most 10 bits; a portable build has no popcount instruction). */
extern uint8_t tab_popcount[1 << RANKS];

extern uint64_t zobrist_piece[16][SQUARES];
extern uint64_t zobrist_side;

/* Palace membership per colour, and the seven elephant points per colour. */
extern uint8_t tab_in_palace[2][SQUARES];
extern uint8_t tab_elephant_point[2][SQUARES];

void tables_init(void);

#endif

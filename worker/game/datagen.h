/*
 * datagen.h - training positions from played games, for fitting the
 * evaluation (xqf-tune texel).
 *
 * A game's record (its moves with the searches' scores) is replayed and
 * the positions that pass the filter are kept, each with the score of the
 * search that was made in it, the move that search played, the game's
 * final result and the ply.  Whoever plays the games (xqf-match --data, a
 * data-generation run's workers) writes them in one binary format:
 *
 *   file    = header record*
 *   header  = "XQFDATA1" (8 bytes)
 *   record  = 54 bytes, little-endian:
 *     0-44   the 90 squares, two per byte, the lower nibble first; square
 *            index = rank * 9 + file, rank 0 Red's back rank, file 0 the
 *            a-file (ICCS); nibble 0 empty, 1-7 Red's king, advisor,
 *            elephant, horse, rook, cannon, pawn, 9-15 Black's
 *     45     side to move: 0 Red, 1 Black
 *     46-47  the search's score, int16, centipawns, side to move's view
 *     48-49  the move played, uint16: from | to << 7 (square indexes above)
 *     50     the game's result, side to move's view: 0 loss, 1 draw, 2 win
 *     51     reserved, 0
 *     52-53  ply from the game's start position, uint16
 */
#ifndef XQF_DATAGEN_H
#define XQF_DATAGEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "board.h"
#include "game.h"

enum { DATA_RECORD_BYTES = 54, DATA_HEADER_BYTES = 8 };
#define DATA_MAGIC "XQFDATA1"

typedef struct {
    int skip_plies;        /* plies after the opening's moves that are skipped too */
    bool keep_check;       /* keep positions where the side to move is in check */
    bool keep_captures;    /* keep positions whose played move is a capture */
    int max_score;         /* skip |score| above this (mate scores always) */
} DataFilter;

/* The defaults: skip 0 plies after the book, no checks, no captures, |score| <= 3000. */
void data_filter_default(DataFilter *f);

typedef struct {
    Board board;           /* the position (with its repetition history empty) */
    int score;             /* side to move's view */
    Move move;
    int result;            /* side to move's view: 0 loss, 1 draw, 2 win */
    int ply;
} DataPosition;

/*
 * Replays g and calls keep(ctx, position) for each position the filter
 * keeps.  Games without a result (abandoned) and moves without a score
 * give nothing.  Returns the number kept, or -1 when g's start position
 * or a move is not legal (a broken record).
 */
int data_extract(const GameRecord *g, const DataFilter *f, void (*keep)(void *ctx, const DataPosition *pos),
                 void *ctx);

/* Packs a position into a record's 54 bytes; unpacks one (returns -1 when the bytes are not a record). */
void data_pack(const DataPosition *pos, uint8_t *out);
int data_unpack(const uint8_t *in, DataPosition *pos);

/* Writes the header; reads and checks it (-1 with a message when it is not a data file). */
int data_write_header(FILE *out);
int data_read_header(FILE *in, char *err, size_t errlen);

#endif

/*
 * games.h - the game records of data-generation runs as they travel in a
 * result (the `games` field) and as the coordinator stores them (one
 * bytea per game, table data_games of 012_data.sql): what both sides of
 * the wire agree on.  The worker writes them from its game records and
 * xqf-tune reads them back (worker/gamepack.h); the coordinator only
 * splits a result's bytes into records and checks their shape.
 *
 *   games   = (u32 length, record)*          lengths little-endian
 *   record  = result reason fen_len fen plies ply*
 *     result    u8: 0 none (abandoned), 1 Red won, 2 Black won, 3 draw (rules.h)
 *     reason    u8: why it ended (game.h's GameReason)
 *     fen_len   u8, then that many bytes: the FEN the game started from
 *     plies     u16 little-endian, then that many plies of 4 bytes:
 *     ply       u16 move | flags: bits 0-13 from | to << 7 (types.h),
 *               bit 14 an opening (book or random) move, bit 15 a score follows;
 *               i16 the mover's score (centipawns, mates clamped to +-32767; 0 without)
 *
 * About 4 bytes per ply and 60 per game (the FEN): well under the 40 bytes
 * per kept position of issue 16.
 */
#ifndef XQF_GAMES_H
#define XQF_GAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    XQF_GAME_HEAD = 3,             /* result, reason, fen_len */
    XQF_GAME_PLY_BYTES = 4,
    XQF_GAME_PLIES_MAX = 65535,
    XQF_GAME_BOOK = 1 << 14,       /* ply flags */
    XQF_GAME_SCORED = 1 << 15
};

/*
 * The next record of a games field: from *off, sets *rec and *len and
 * moves *off past it.  Returns 1, 0 at the end, -1 when the bytes are not
 * a sequence of well-formed records (xqf_game_check).
 */
int xqf_games_next(const uint8_t *data, size_t size, size_t *off, const uint8_t **rec, size_t *len);

/*
 * Checks one record's shape (lengths, result, the FEN's bytes printable);
 * with plies (may be NULL) its ply count.  True when well formed.  The
 * moves' legality is not checked here (xqf-tune replays them).
 */
bool xqf_game_check(const uint8_t *rec, size_t len, int *plies);

/* Counts the records of a games field; -1 when malformed. */
int64_t xqf_games_count(const uint8_t *data, size_t size);

#endif

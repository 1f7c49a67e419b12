/*
 * games.h - game records as they travel in a result (the `games` field)
 * and as the coordinator stores them (one row per game, table games of
 * 014_games.sql): what both sides of the wire agree on.  The worker writes
 * them from its game records and xqf-tune reads them back
 * (worker/game/gamepack.h); the coordinator only splits a result's bytes into
 * records and checks their shape.
 *
 *   games   = (u32 length, record)*          lengths little-endian
 *   record  = form reason fen_len fen plies ply*
 *     form      u8: bits 0-1 the result: 0 none (abandoned), 1 Red won,
 *               2 Black won, 3 draw (rules.h); bits 6-7 the ply form:
 *               0 scored (4 bytes), XQF_GAME_MOVES (2 bytes, moves only),
 *               XQF_GAME_DEPTHS (5 bytes, score and depth)
 *     reason    u8: why it ended (game.h's GameReason)
 *     fen_len   u8, then that many bytes: the FEN the game started from
 *               (0 in the database only: the FEN is in game_fens)
 *     plies     u16 little-endian, then that many plies:
 *     ply       u16 move | flags: bits 0-13 from | to << 7 (types.h),
 *               bit 14 an opening (book or random) move, bit 15 a score follows;
 *               scored forms: i16 the mover's score (centipawns, mates
 *               clamped to +-32767; 0 without); XQF_GAME_DEPTHS: u8 its depth
 *
 * Data-generation runs send the scored form (their positions keep the
 * score); other runs the moves-only form, 2 bytes a ply, or with the run
 * option --keep-scores the form with depths.  A 120-ply game is 245 bytes
 * once the coordinator has put its FEN apart.
 */
#ifndef XQF_GAMES_H
#define XQF_GAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    XQF_GAME_HEAD = 3,             /* result, reason, fen_len */
    XQF_GAME_PLIES_MAX = 65535,
    XQF_GAME_RESULT = 3,           /* form: the result's bits */
    XQF_GAME_MOVES = 1 << 7,       /* form: plies of 2 bytes */
    XQF_GAME_DEPTHS = 1 << 6,      /* form: plies of 5 bytes */
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

/* Bytes per ply of a record whose first byte is form (2, 4 or 5; 0 for an unknown form). */
int xqf_game_ply_bytes(unsigned form);

/*
 * Checks a record's shape with its FEN put apart (fen_len 0: what the
 * database keeps).  True when well formed; plies (may be NULL) as above.
 */
bool xqf_game_check_bare(const uint8_t *rec, size_t len, int *plies);

/* Counts the records of a games field; -1 when malformed. */
int64_t xqf_games_count(const uint8_t *data, size_t size);

/*
 * Where a record must start: a task's opening line as book.h reads it,
 * "FEN [moves m1 m2 ...] [; operations] [# comment]", read without the
 * rules.  The position is kept as FEN's fields mean it (a letter per
 * square, E/H read as B/N, 'r' as 'w', the counters' defaults 0 and 1), so
 * that any FEN of one position compares equal to the worker's rewriting
 * of it; the moves are kept in the plies' encoding (ICCS file a-i, rank
 * 0-9: square rank * 9 + file, move from | to << 7).  The coordinator
 * checks records against it without playing them (it has no move
 * generator: the worker checked the line's legality when it played it,
 * xqf-tune replays every record it reads, and the replay audit replays
 * whole pairs).
 */
enum { XQF_OPENING_PLIES_MAX = 256 };    /* the worker's book takes no more (worker/game/book.c) */

typedef struct {
    char board[90];                  /* rank 9 first, file a first; '.' empty, else K A B N R C P (Black lower case) */
    char side;                       /* 'w' or 'b' */
    int halfmove, fullmove;
    int count;                       /* the line's moves */
    uint16_t plies[XQF_OPENING_PLIES_MAX];
} XqfOpening;

/* Reads an opening line into *o. 0, or -1 when it is not one (a bad FEN, move text or too many moves). */
int xqf_opening_parse(const char *line, XqfOpening *o);

/*
 * Whether a record (well formed: xqf_game_check) starts as a game of
 * opening o must: from o's position (its FEN, side to move and counters),
 * o's moves first, each flagged an opening move, then at most `random`
 * more opening moves (a data run's random plies), and no opening move
 * after the first move the engines played.  NULL when it does, else a
 * static sentence saying why not.
 */
const char *xqf_game_from_opening(const uint8_t *rec, size_t len, const XqfOpening *o, int random);

#endif

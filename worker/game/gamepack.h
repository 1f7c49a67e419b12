/*
 * gamepack.h - a data-generation run's games on the worker's side and in
 * xqf-tune: the random plies that make each game its own, and game
 * records in the compact form of schemas/formats/games.h (what a result carries
 * and the coordinator stores).
 */
#ifndef XQF_GAMEPACK_H
#define XQF_GAMEPACK_H

#include <stddef.h>
#include <stdint.h>

#include "game.h"

/* A growable byte buffer. */
typedef struct {
    uint8_t *data;
    size_t len, cap;
} PackBuf;

void pack_buf_free(PackBuf *b);

/*
 * Appends g as a record of a games field (its u32 length, then the record)
 * to out, its plies in form (games.h: 0 scored, XQF_GAME_MOVES or
 * XQF_GAME_DEPTHS).  Returns 0, or -1 when out of memory or g does not fit
 * the format (more than 65535 plies, a FEN over 255 bytes, another form).
 */
int gamepack_append(const GameRecord *g, unsigned form, PackBuf *out);

/*
 * Fills g (game_record_init'ed or used before) from one record's bytes.
 * Returns 0, or -1 with a reason in err when the bytes are malformed or
 * out of memory.  Moves are not checked against the rules (data_extract does).
 */
int gamepack_read(const uint8_t *rec, size_t len, GameRecord *g, char *err, size_t errlen);

/*
 * The opening of a data run's game: base's moves, then up to random_plies
 * random legal moves, each drawn uniformly among those that do not lose
 * material by the static exchange on their square (among all legal moves
 * when none is), from a generator seeded with seed
 * mixed with the game's run-wide index (fewer when the game ends first).
 * moves (room for base->count + random_plies) receives them all; *out
 * points into it.  Returns 0, or -1 when base's FEN does not parse.
 */
int gamepack_opening(const Opening *base, int random_plies, uint64_t seed, int64_t game, Move *moves,
                     Opening *out);

#endif

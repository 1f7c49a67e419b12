/*
 * libFuzzer target: the game records of a result, as they come from the
 * network (schemas/formats/games.h), through what the coordinator and xqf-tune do
 * with them: split into records (xqf_games_next, whose shape check is the
 * coordinator's), each read back (gamepack_read) and replayed with the
 * data filter (data_extract: the moves checked against the rules).  A
 * record the shape check passes must read back, and its record packed
 * again in its own form must read back to the same game; nothing crashes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "datagen.h"
#include "gamepack.h"
#include "games.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void count(void *ctx, const DataPosition *pos)
{
    (void)pos;
    (*(int *)ctx)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t off = 0, len;
    const uint8_t *rec;
    GameRecord g, again;
    game_record_init(&g);
    game_record_init(&again);
    char err[256];
    DataFilter f;
    data_filter_default(&f);
    while (xqf_games_next(data, size, &off, &rec, &len) > 0) {
        if (gamepack_read(rec, len, &g, err, sizeof err) != 0)
            abort();                       /* the shape check passed it: it must read */
        int kept = 0;
        data_extract(&g, &f, count, &kept);
        PackBuf b = { 0 };
        if (gamepack_append(&g, rec[0] & (XQF_GAME_MOVES | XQF_GAME_DEPTHS), &b) == 0) {
            if (gamepack_read(b.data + 4, b.len - 4, &again, err, sizeof err) != 0 || again.count != g.count ||
                again.result != g.result || strcmp(again.fen, g.fen) != 0)
                abort();
            for (int i = 0; i < g.count; i++)
                if (again.moves[i].move != g.moves[i].move)
                    abort();
        }
        pack_buf_free(&b);
    }
    game_record_free(&g);
    game_record_free(&again);
    return 0;
}

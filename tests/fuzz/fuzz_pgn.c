/*
 * libFuzzer target: games read back from PGN (worker/game/tactics.c).  Any
 * bytes must give games or a message, never a crash; a game that reads
 * must write (pgn_write) and read back to the same moves, scores and result.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgn.h"
#include "tactics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_round_trip(const PgnGame *g)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    PgnTags tags = { .event = "fuzz", .red = g->red, .black = g->black, .round = g->round, .nodes = 1 };
    if (!out || pgn_write(out, &g->rec, &tags) != 0)
        abort();
    fclose(out);
    FILE *in = fmemopen(text, len, "r");
    PgnGame again = { 0 };
    char err[256];
    int line = 0;
    if (!in || pgn_read(in, &again, &line, err, sizeof err) != 1 || again.rec.count != g->rec.count
        || again.rec.result != g->rec.result)
        abort();
    for (int i = 0; i < g->rec.count; i++) {
        const GameMove *a = &g->rec.moves[i], *b = &again.rec.moves[i];
        if (a->move != b->move || a->book != b->book || (!a->book && a->has_score != b->has_score)
            || (!a->book && a->has_score && a->score != b->score))
            abort();
    }
    fclose(in);
    pgn_game_free(&again);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    FILE *in = fmemopen((void *)data, size, "r");
    if (!in)
        return 0;
    PgnGame g = { 0 };
    char err[256];
    int line = 0;
    for (int games = 0; games < 8 && pgn_read(in, &g, &line, err, sizeof err) > 0; games++)
        check_round_trip(&g);
    pgn_game_free(&g);
    fclose(in);
    return 0;
}

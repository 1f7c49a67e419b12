/*
 * game_types.c - the texts of the reasons a game ends and a game record's
 * storage (game_types.h).
 */
#include "game_types.h"

#include <stdlib.h>
#include <string.h>

static const char *const REASON_TEXT[GAME_REASONS] = {
    [GAME_REASON_NONE] = "none",
    [GAME_CHECKMATE] = "checkmate",
    [GAME_STALEMATE] = "stalemate",
    [GAME_PERPETUAL_CHECK] = "perpetual check",
    [GAME_REPETITION] = "repetition",
    [GAME_NO_CAPTURE] = "120 plies without capture",
    [GAME_ADJUDICATED_WIN] = "adjudication (score)",
    [GAME_ADJUDICATED_DRAW] = "adjudication (draw)",
    [GAME_MAX_LENGTH] = "maximum length",
    [GAME_TIME_FORFEIT] = "time forfeit",
    [GAME_ILLEGAL_MOVE] = "illegal move",
    [GAME_BAD_OUTPUT] = "bad output",
    [GAME_CRASH] = "crash",
    [GAME_NO_RESPONSE] = "no response",
    [GAME_START_FAILURE] = "start failure",
    [GAME_ABANDONED] = "abandoned",
    [GAME_PERPETUAL_CHASE] = "perpetual chase",
};

const char *game_reason_text(GameReason r)
{
    return r >= 0 && r < GAME_REASONS ? REASON_TEXT[r] : "unknown";
}

bool game_reason_is_fault(GameReason r)
{
    return r >= GAME_TIME_FORFEIT && r <= GAME_START_FAILURE;
}

void game_record_init(GameRecord *g)
{
    memset(g, 0, sizeof *g);
}

void game_record_free(GameRecord *g)
{
    free(g->moves);
    game_record_init(g);
}

int game_record_push(GameRecord *g, const GameMove *m)
{
    if (g->count == g->capacity) {
        int cap = g->capacity ? g->capacity * 2 : 256;
        GameMove *moves = realloc(g->moves, sizeof *moves * (size_t)cap);
        if (!moves)
            return -1;
        g->moves = moves;
        g->capacity = cap;
    }
    g->moves[g->count++] = *m;
    return 0;
}

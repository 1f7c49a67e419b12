#include "gamepack.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fen.h"
#include "games.h"
#include "movegen.h"
#include "rng.h"
#include "see.h"

void pack_buf_free(PackBuf *b)
{
    free(b->data);
    *b = (PackBuf){ 0 };
}

static int reserve(PackBuf *b, size_t more)
{
    if (b->len + more <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + more)
        cap *= 2;
    uint8_t *p = realloc(b->data, cap);
    if (!p)
        return -1;
    b->data = p;
    b->cap = cap;
    return 0;
}

static void put16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)(v & 0xff);
    p[1] = (uint8_t)(v >> 8 & 0xff);
}

int gamepack_append(const GameRecord *g, unsigned form, PackBuf *out)
{
    size_t fen = strlen(g->fen);
    int ply = xqf_game_ply_bytes(form);
    if (fen == 0 || fen > 255 || g->count < 0 || g->count > XQF_GAME_PLIES_MAX || ply == 0 ||
        (form & XQF_GAME_RESULT) != 0)
        return -1;
    size_t len = XQF_GAME_HEAD + fen + 2 + (size_t)g->count * (size_t)ply;
    if (len > UINT32_MAX || reserve(out, 4 + len) != 0)
        return -1;
    uint8_t *p = out->data + out->len;
    put16(p, (unsigned)(len & 0xffff));
    put16(p + 2, (unsigned)(len >> 16));
    p += 4;
    p[0] = (uint8_t)((unsigned)g->result | form);
    p[1] = (uint8_t)g->reason;
    p[2] = (uint8_t)fen;
    memcpy(p + 3, g->fen, fen);
    p += 3 + fen;
    put16(p, (unsigned)g->count);
    p += 2;
    for (int i = 0; i < g->count; i++, p += ply) {
        const GameMove *m = &g->moves[i];
        bool scored = ply > 2 && m->has_score;
        int score = m->score < -32767 ? -32767 : m->score > 32767 ? 32767 : m->score;
        put16(p, (unsigned)(m->move & 0x3fff) | (m->book ? XQF_GAME_BOOK : 0u) | (scored ? XQF_GAME_SCORED : 0u));
        if (ply > 2)
            put16(p + 2, (unsigned)(uint16_t)(int16_t)(scored ? score : 0));
        if (ply > 4)
            p[4] = (uint8_t)(m->depth < 0 ? 0 : m->depth > 255 ? 255 : m->depth);
    }
    out->len += 4 + len;
    return 0;
}

int gamepack_read(const uint8_t *rec, size_t len, GameRecord *g, char *err, size_t errlen)
{
    int plies;
    if (!xqf_game_check(rec, len, &plies)) {
        snprintf(err, errlen, "a malformed game record (%zu bytes)", len);
        return -1;
    }
    if (plies > g->capacity) {
        GameMove *m = realloc(g->moves, sizeof *m * (size_t)plies);
        if (!m) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        g->moves = m;
        g->capacity = plies;
    }
    size_t fen = rec[2];
    int ply = xqf_game_ply_bytes(rec[0]);
    g->result = (GameResult)(rec[0] & XQF_GAME_RESULT);
    g->reason = (GameReason)rec[1];
    memcpy(g->fen, rec + XQF_GAME_HEAD, fen);
    g->fen[fen] = '\0';
    g->detail[0] = '\0';
    g->search_us = 0;
    const uint8_t *p = rec + XQF_GAME_HEAD + fen + 2;
    for (int i = 0; i < plies; i++, p += ply) {
        unsigned m = (unsigned)p[0] | (unsigned)p[1] << 8;
        g->moves[i] = (GameMove){ .move = (Move)(m & 0x3fff), .book = (m & XQF_GAME_BOOK) != 0,
                                  .has_score = ply > 2 && (m & XQF_GAME_SCORED) != 0,
                                  .score = ply > 2 ? (int16_t)(uint16_t)((unsigned)p[2] | (unsigned)p[3] << 8) : 0,
                                  .depth = ply > 4 ? p[4] : 0 };
    }
    g->count = plies;
    return 0;
}

int gamepack_opening(const Opening *base, int random_plies, uint64_t seed, int64_t game, Move *moves,
                     Opening *out)
{
    static _Thread_local Board b;
    char err[128];
    if (fen_parse(&b, base->fen, FEN_GAME, err, sizeof err) != 0)
        return -1;
    for (int i = 0; i < base->count; i++) {
        moves[i] = base->moves[i];
        board_make(&b, base->moves[i]);
    }
    /* One generator per game: its run-wide index mixed into the run's seed. */
    Rng rng;
    rng_seed(&rng, seed ^ ((uint64_t)game * UINT64_C(0x9E3779B97F4A7C15)));
    rng_next(&rng);
    int n = base->count;
    for (int i = 0; i < random_plies; i++) {
        MoveList legal, sound = { .count = 0 };
        movegen_legal(&b, &legal);
        if (legal.count == 0)
            break;
        /* moves that do not give material away on their square, when there are some */
        for (int k = 0; k < legal.count; k++)
            if (see_ge(&b, legal.moves[k], 0))
                sound.moves[sound.count++] = legal.moves[k];
        const MoveList *from = sound.count ? &sound : &legal;
        Move m = from->moves[rng_below(&rng, (uint32_t)from->count)];
        moves[n++] = m;
        board_make(&b, m);
    }
    *out = *base;
    out->moves = moves;
    out->count = n;
    return 0;
}

#include "games.h"

static unsigned u16(const uint8_t *p) { return (unsigned)p[0] | (unsigned)p[1] << 8; }

int xqf_game_ply_bytes(unsigned form)
{
    switch (form & (XQF_GAME_MOVES | XQF_GAME_DEPTHS)) {
    case 0:
        return 4;
    case XQF_GAME_MOVES:
        return 2;
    case XQF_GAME_DEPTHS:
        return 5;
    default:
        return 0;
    }
}

/* The shape of a record; with bare its FEN must be put apart (fen_len 0), else present. */
static bool check(const uint8_t *rec, size_t len, bool bare, int *plies)
{
    if (len < XQF_GAME_HEAD || (rec[0] & ~(XQF_GAME_RESULT | XQF_GAME_MOVES | XQF_GAME_DEPTHS)) != 0 ||
        rec[1] >= 64)
        return false;
    int ply = xqf_game_ply_bytes(rec[0]);
    size_t fen = rec[2];
    if (ply == 0 || (fen == 0) != bare || len < XQF_GAME_HEAD + fen + 2)
        return false;
    for (size_t i = 0; i < fen; i++)
        if (rec[XQF_GAME_HEAD + i] < 0x20 || rec[XQF_GAME_HEAD + i] > 0x7e)
            return false;
    unsigned n = u16(rec + XQF_GAME_HEAD + fen);
    if (len != XQF_GAME_HEAD + fen + 2 + (size_t)n * (size_t)ply)
        return false;
    if (plies)
        *plies = (int)n;
    return true;
}

bool xqf_game_check(const uint8_t *rec, size_t len, int *plies) { return check(rec, len, false, plies); }

bool xqf_game_check_bare(const uint8_t *rec, size_t len, int *plies) { return check(rec, len, true, plies); }

int xqf_games_next(const uint8_t *data, size_t size, size_t *off, const uint8_t **rec, size_t *len)
{
    if (*off == size)
        return 0;
    if (*off > size || size - *off < 4)
        return -1;
    const uint8_t *p = data + *off;
    size_t n = (size_t)p[0] | (size_t)p[1] << 8 | (size_t)p[2] << 16 | (size_t)p[3] << 24;
    if (n > size - *off - 4 || !xqf_game_check(p + 4, n, NULL))
        return -1;
    *rec = p + 4;
    *len = n;
    *off += 4 + n;
    return 1;
}

int64_t xqf_games_count(const uint8_t *data, size_t size)
{
    size_t off = 0, len;
    const uint8_t *rec;
    int64_t count = 0;
    int rc;
    while ((rc = xqf_games_next(data, size, &off, &rec, &len)) > 0)
        count++;
    return rc < 0 ? -1 : count;
}

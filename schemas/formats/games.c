#include "games.h"

#include <stdlib.h>
#include <string.h>

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

/* A FEN piece letter as fen.c reads it (E and H are the elephant B and the horse N), or 0. */
static char piece_letter(char c)
{
    static const char LETTERS[] = "KABNRCPkabnrcp";
    if (c && strchr(LETTERS, c))
        return c;
    return c == 'E' ? 'B' : c == 'e' ? 'b' : c == 'H' ? 'N' : c == 'h' ? 'n' : 0;
}

/* A counter field: a decimal in [min, max] into *out. 0 or -1. */
static int counter(const char *tok, long min, long max, int *out)
{
    char *end;
    long v = strtol(tok, &end, 10);
    if (end == tok || *end || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

/* The position of FEN text (len bytes) into o's board, side and counters, read as fen.c does. 0 or -1. */
static int read_position(const char *text, size_t len, XqfOpening *o)
{
    char buf[256], *field[6], *save = NULL;
    int n = 0, rank = 0, file = 0;   /* rank 0: the first written, rank 9 of the board */
    if (len >= sizeof buf)
        return -1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    for (char *tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        if (n == 6)
            return -1;
        field[n++] = tok;
    }
    if (n < 2)
        return -1;
    for (const char *p = field[0]; *p; p++) {
        if (*p == '/') {
            if (file != 9 || ++rank > 9)
                return -1;
            file = 0;
        } else if (*p >= '1' && *p <= '9') {
            for (int k = *p - '0'; k > 0; k--) {
                if (file == 9)
                    return -1;
                o->board[rank * 9 + file++] = '.';
            }
        } else {
            char c = piece_letter(*p);
            if (!c || file == 9)
                return -1;
            o->board[rank * 9 + file++] = c;
        }
    }
    if (rank != 9 || file != 9 || strlen(field[1]) != 1 || !strchr("wrb", field[1][0]))
        return -1;
    o->side = field[1][0] == 'b' ? 'b' : 'w';
    o->halfmove = 0;
    o->fullmove = 1;
    for (int i = 2; i < 4 && i < n; i++)
        if (strcmp(field[i], "-") != 0)
            return -1;
    return (n > 4 && counter(field[4], 0, 9999, &o->halfmove) != 0) ||
                   (n > 5 && counter(field[5], 1, 99999, &o->fullmove) != 0)
               ? -1
               : 0;
}

/* ICCS move text ("h2e2") as a ply's move bits: square rank * 9 + file, from | to << 7. 0 or -1. */
static int iccs_ply(const char *t, uint16_t *ply)
{
    if (strlen(t) != 4 || t[0] < 'a' || t[0] > 'i' || t[1] < '0' || t[1] > '9' || t[2] < 'a' || t[2] > 'i' ||
        t[3] < '0' || t[3] > '9')
        return -1;
    unsigned from = (unsigned)((t[1] - '0') * 9 + (t[0] - 'a')), to = (unsigned)((t[3] - '0') * 9 + (t[2] - 'a'));
    *ply = (uint16_t)(from | to << 7);
    return 0;
}

int xqf_opening_parse(const char *line, XqfOpening *o)
{
    enum { LINE_MAX = XQF_OPENING_PLIES_MAX * 5 + 256 };
    char text[LINE_MAX], *save = NULL;
    size_t len = strcspn(line, "#;\r\n");  /* what book.c reads of a line */
    if (len >= sizeof text)
        return -1;
    memcpy(text, line, len);
    text[len] = '\0';
    char *fen = text + strspn(text, " \t"), *moves = strstr(fen, " moves"), *list = NULL;
    if (moves && (moves[6] == '\0' || moves[6] == ' ' || moves[6] == '\t')) {
        *moves = '\0';
        list = moves + 6;
    }
    if (read_position(fen, strlen(fen), o) != 0)
        return -1;
    o->count = 0;
    for (char *tok = list ? strtok_r(list, " \t", &save) : NULL; tok; tok = strtok_r(NULL, " \t", &save))
        if (o->count == XQF_OPENING_PLIES_MAX || iccs_ply(tok, &o->plies[o->count++]) != 0)
            return -1;
    return 0;
}

const char *xqf_game_from_opening(const uint8_t *rec, size_t len, const XqfOpening *o, int random)
{
    XqfOpening start;
    int plies, ply = xqf_game_ply_bytes(rec[0]);
    if (!xqf_game_check(rec, len, &plies))
        return "a malformed record";
    if (read_position((const char *)rec + XQF_GAME_HEAD, rec[2], &start) != 0)
        return "its FEN does not parse";
    if (memcmp(start.board, o->board, sizeof o->board) != 0)
        return "it starts from another position than the task's opening";
    if (start.side != o->side)
        return "it starts with the other side to move than the task's opening";
    if (start.halfmove != o->halfmove || start.fullmove != o->fullmove)
        return "its FEN's move counters are not the task's opening's";
    if (plies < o->count)
        return "it lacks moves of the task's opening";
    const uint8_t *p = rec + XQF_GAME_HEAD + rec[2] + 2;
    for (int i = 0; i < plies; i++, p += ply) {
        unsigned m = u16(p);
        bool book = (m & XQF_GAME_BOOK) != 0;
        if (i < o->count && (!book || (m & 0x3fff) != o->plies[i]))
            return "its first moves are not the task's opening's";
        if (i >= o->count + random && book)
            return "it has more opening moves than the task's opening and random plies";
        if (i > o->count && book && !(u16(p - ply) & XQF_GAME_BOOK))
            return "an opening move follows a move the engines played";
    }
    return NULL;
}

#include "fen.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "movegen.h"

static const char *const COLOR_NAME[2] = { "Red", "Black" };
static const char *const TYPE_NAME[PIECE_TYPES] = {
    "", "king", "advisor", "elephant", "horse", "rook", "cannon", "pawn"
};
static const int MAX_COUNT[PIECE_TYPES] = { 0, 1, 2, 2, 2, 2, 2, 5 };

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

void square_text(int sq, char *out)
{
    out[0] = (char)('a' + sq_file(sq));
    out[1] = (char)('0' + sq_rank(sq));
    out[2] = '\0';
}

static int piece_from_letter(char ch)
{
    int color = islower((unsigned char)ch) ? BLACK : RED;
    switch (toupper((unsigned char)ch)) {
    case 'K': return make_piece(color, KING);
    case 'A': return make_piece(color, ADVISOR);
    case 'B': case 'E': return make_piece(color, ELEPHANT);
    case 'N': case 'H': return make_piece(color, HORSE);
    case 'R': return make_piece(color, ROOK);
    case 'C': return make_piece(color, CANNON);
    case 'P': return make_piece(color, PAWN);
    default: return EMPTY;
    }
}

/* Can a pawn of `color` stand on sq in a real game? */
static bool pawn_square_possible(int color, int sq)
{
    int f = sq_file(sq), r = sq_rank(sq);
    int advance = color == RED ? r : RANKS - 1 - r; /* 3 = its starting rank */
    if (advance < 3)
        return false;
    return advance > 4 || f % 2 == 0; /* before the river it can only go straight */
}

/* Rules a position must satisfy to be reachable; message in err when not. */
static int validate(Board *b, int mode, char *err, size_t errlen)
{
    char name[3];
    for (int c = RED; c <= BLACK; c++) {
        if (b->count[c][KING] != 1)
            return fail(err, errlen, "%s has %d kings, expected 1", COLOR_NAME[c], b->count[c][KING]);
        for (int t = ADVISOR; t <= PAWN; t++)
            if (b->count[c][t] > MAX_COUNT[t])
                return fail(err, errlen, "%s has %d %ss, at most %d", COLOR_NAME[c],
                            b->count[c][t], TYPE_NAME[t], MAX_COUNT[t]);
    }
    for (int sq = 0; sq < SQUARES; sq++) {
        int p = b->squares[sq];
        if (!p)
            continue;
        int c = piece_color(p), t = piece_type(p);
        bool ok = true;
        if (t == KING)
            ok = tab_in_palace[c][sq];
        else if (t == ADVISOR)
            ok = tab_in_palace[c][sq] && tab_advisor[sq].count > 0;
        else if (t == ELEPHANT)
            ok = tab_elephant_point[c][sq];
        else if (t == PAWN)
            ok = pawn_square_possible(c, sq);
        if (!ok) {
            square_text(sq, name);
            return fail(err, errlen, "%s %s cannot stand on %s", COLOR_NAME[c], TYPE_NAME[t], name);
        }
    }
    int rk = board_king(b, RED), bk = board_king(b, BLACK);
    if (sq_file(rk) == sq_file(bk)) {
        bool open = true;
        for (int sq = rk + FILES; sq < bk; sq += FILES)
            open &= b->squares[sq] == EMPTY;
        if (open)
            return fail(err, errlen, "the kings face each other on an open file");
    }
    if (mode == FEN_GAME && board_king_attacked(b, b->side ^ 1))
        return fail(err, errlen, "%s, not to move, is in check", COLOR_NAME[b->side ^ 1]);
    return 0;
}

static int parse_count(const char *tok, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(tok, &end, 10);
    if (errno || end == tok || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int fen_parse(Board *out, const char *fen, int mode, char *err, size_t errlen)
{
    char buf[256];
    if (!fen || strlen(fen) >= sizeof buf)
        return fail(err, errlen, "FEN is missing or too long");
    strcpy(buf, fen);

    char *save = NULL;
    char *placement = strtok_r(buf, " \t", &save);
    if (!placement)
        return fail(err, errlen, "FEN is empty");

    Board *b = malloc(sizeof *b);
    if (!b)
        return fail(err, errlen, "out of memory");
    board_clear(b);

    int rc = 0;
    int rank = RANKS - 1, file = 0;
    for (const char *p = placement; *p && rc == 0; p++) {
        if (*p == '/') {
            if (file != FILES)
                rc = fail(err, errlen, "FEN rank %d has %d files, expected 9", rank, file);
            else if (--rank < 0)
                rc = fail(err, errlen, "FEN has more than 10 ranks");
            file = 0;
        } else if (*p >= '1' && *p <= '9') {
            file += *p - '0';
            if (file > FILES)
                rc = fail(err, errlen, "FEN rank %d has more than 9 files", rank);
        } else {
            int piece = piece_from_letter(*p);
            if (!piece)
                rc = fail(err, errlen, "unknown piece letter '%c' in FEN", isprint((unsigned char)*p) ? *p : '?');
            else if (file >= FILES)
                rc = fail(err, errlen, "FEN rank %d has more than 9 files", rank);
            else if (b->count[piece_color(piece)][piece_type(piece)] >= MAX_COUNT[piece_type(piece)])
                rc = fail(err, errlen, "%s has too many %ss (at most %d)", COLOR_NAME[piece_color(piece)],
                          TYPE_NAME[piece_type(piece)], MAX_COUNT[piece_type(piece)]);
            else
                board_put(b, sq_make(file++, rank), piece);
        }
    }
    if (rc == 0 && (rank != 0 || file != FILES))
        rc = rank != 0 ? fail(err, errlen, "FEN has %d ranks, expected 10", RANKS - rank)
                       : fail(err, errlen, "FEN rank 0 has %d files, expected 9", file);

    const char *side = rc == 0 ? strtok_r(NULL, " \t", &save) : NULL;
    if (rc == 0) {
        if (!side || strlen(side) != 1 || !strchr("wrb", side[0]))
            rc = fail(err, errlen, "side to move must be 'w' (or 'r') or 'b'");
        else
            b->side = side[0] == 'b' ? BLACK : RED;
    }
    long rule60 = 0, fullmove = 1;
    const char *field[4] = { NULL, NULL, NULL, NULL };
    for (int i = 0; rc == 0 && i < 4; i++)
        field[i] = strtok_r(NULL, " \t", &save);
    if (rc == 0 && strtok_r(NULL, " \t", &save))
        rc = fail(err, errlen, "FEN has more than 6 fields");
    for (int i = 0; rc == 0 && i < 2; i++)
        if (field[i] && strcmp(field[i], "-") != 0)
            rc = fail(err, errlen, "FEN field %d must be '-' (Xiangqi has no castling or en passant)", i + 3);
    if (rc == 0 && field[2] && parse_count(field[2], 0, 9999, &rule60))
        rc = fail(err, errlen, "FEN halfmove clock '%s' is not a number from 0 to 9999", field[2]);
    if (rc == 0 && field[3] && parse_count(field[3], 1, 99999, &fullmove))
        rc = fail(err, errlen, "FEN full-move number '%s' is not a number from 1 to 99999", field[3]);
    if (rc == 0)
        rc = validate(b, mode, err, errlen);
    if (rc == 0) {
        b->fullmove = (int)fullmove;
        board_finish_setup(b, (int)rule60);
        *out = *b;
    }
    free(b);
    return rc;
}

void fen_write(const Board *b, char *out)
{
    static const char letters[] = " KABNRCP kabnrcp";
    char *p = out;
    for (int r = RANKS - 1; r >= 0; r--) {
        int empty = 0;
        for (int f = 0; f < FILES; f++) {
            int piece = b->squares[sq_make(f, r)];
            if (!piece) {
                empty++;
                continue;
            }
            if (empty)
                *p++ = (char)('0' + empty);
            empty = 0;
            *p++ = letters[piece];
        }
        if (empty)
            *p++ = (char)('0' + empty);
        if (r)
            *p++ = '/';
    }
    snprintf(p, (size_t)(FEN_MAX - (p - out)), " %c - - %d %d", b->side == RED ? 'w' : 'b',
             board_state(b)->rule60, b->fullmove);
}

void move_text(Move m, char *out)
{
    square_text(move_from(m), out);
    square_text(move_to(m), out + 2);
}

int move_parse(Board *b, const char *text, Move *m, char *err, size_t errlen)
{
    if (strlen(text) != 4 || text[0] < 'a' || text[0] > 'i' || text[1] < '0' || text[1] > '9'
        || text[2] < 'a' || text[2] > 'i' || text[3] < '0' || text[3] > '9')
        return fail(err, errlen, "'%.16s' is not a move (expected ICCS text like h2e2)", text);
    Move mv = move_make(sq_make(text[0] - 'a', text[1] - '0'), sq_make(text[2] - 'a', text[3] - '0'));
    if (!movegen_is_legal(b, mv))
        return fail(err, errlen, "illegal move %s", text);
    *m = mv;
    return 0;
}

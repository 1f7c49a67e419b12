#include "datagen.h"

#include <stdlib.h>
#include <string.h>

#include "fen.h"
#include "movegen.h"
#include "tables.h"

void data_filter_default(DataFilter *f)
{
    *f = (DataFilter){ .skip_plies = 0, .keep_check = false, .keep_captures = false, .max_score = 3000 };
}

/* The result of a game from `side`'s view: 0 loss, 1 draw, 2 win. */
static int result_for(GameResult r, int side)
{
    if (r == RESULT_DRAW)
        return 1;
    int winner = r == RESULT_RED_WINS ? RED : BLACK;
    return winner == side ? 2 : 0;
}

int data_extract(const GameRecord *g, const DataFilter *f, void (*keep)(void *ctx, const DataPosition *pos),
                 void *ctx)
{
    if (g->result == RESULT_NONE)
        return 0;
    static _Thread_local DataPosition pos;
    char err[128];
    if (fen_parse(&pos.board, g->fen, FEN_GAME, err, sizeof err) != 0)
        return -1;
    int book = 0;
    while (book < g->count && g->moves[book].book)
        book++;
    int kept = 0;
    for (int i = 0; i < g->count; i++) {
        const GameMove *gm = &g->moves[i];
        Board *b = &pos.board;
        MoveList legal;
        movegen_legal(b, &legal);
        bool found = false;
        for (int k = 0; k < legal.count && !found; k++)
            found = legal.moves[k] == gm->move;
        if (!found)
            return -1;
        bool skip = gm->book || i < book + f->skip_plies || !gm->has_score
                 || abs(gm->score) > f->max_score || (!f->keep_check && board_in_check(b))
                 || (!f->keep_captures && b->squares[move_to(gm->move)]);
        if (!skip) {
            pos.score = gm->score;
            pos.move = gm->move;
            pos.result = result_for(g->result, b->side);
            pos.ply = b->plies;
            keep(ctx, &pos);
            kept++;
        }
        board_make(b, gm->move);
    }
    return kept;
}

void data_pack(const DataPosition *pos, uint8_t *out)
{
    const Board *b = &pos->board;
    memset(out, 0, DATA_RECORD_BYTES);
    for (int sq = 0; sq < SQUARES; sq++)
        out[sq / 2] |= (uint8_t)(b->squares[sq] << (sq % 2 ? 4 : 0));
    int score = pos->score < INT16_MIN ? INT16_MIN : pos->score > INT16_MAX ? INT16_MAX : pos->score;
    uint16_t s = (uint16_t)(int16_t)score, ply = (uint16_t)(pos->ply > UINT16_MAX ? UINT16_MAX : pos->ply);
    out[45] = (uint8_t)b->side;
    out[46] = (uint8_t)(s & 0xff);
    out[47] = (uint8_t)(s >> 8);
    out[48] = (uint8_t)(pos->move & 0xff);
    out[49] = (uint8_t)(pos->move >> 8);
    out[50] = (uint8_t)pos->result;
    out[52] = (uint8_t)(ply & 0xff);
    out[53] = (uint8_t)(ply >> 8);
}

/* The most pieces of each type a side can have. */
static const int MAX_OF_TYPE[PIECE_TYPES] = { 0, 1, 2, 2, 2, 2, 2, 5 };

int data_unpack(const uint8_t *in, DataPosition *pos)
{
    tables_init();
    uint8_t piece[SQUARES];
    int count[16] = { 0 };
    for (int sq = 0; sq < SQUARES; sq++) {
        int p = piece[sq] = (uint8_t)((in[sq / 2] >> (sq % 2 ? 4 : 0)) & 15);
        if (p && (piece_type(p) == EMPTY || ++count[p] > MAX_OF_TYPE[piece_type(p)]))
            return -1;
        /* A king outside its palace would misread the board's check detection (it looks beside the king). */
        if (piece_type(p) == KING && !tab_in_palace[piece_color(p)][sq])
            return -1;
    }
    if (count[make_piece(RED, KING)] != 1 || count[make_piece(BLACK, KING)] != 1 || in[45] > 1 || in[50] > 2)
        return -1;
    /* The pieces through the FEN parser: its checks (pieces on their points, the side not to move not in check). */
    Board *b = &pos->board;
    board_clear(b);
    for (int sq = 0; sq < SQUARES; sq++)
        if (piece[sq])
            board_put(b, sq, piece[sq]);
    b->side = in[45];
    char fen[FEN_MAX], err[128];
    fen_write(b, fen);
    if (fen_parse(b, fen, FEN_GAME, err, sizeof err) != 0)
        return -1;
    pos->score = (int16_t)(uint16_t)(in[46] | in[47] << 8);
    pos->move = (Move)(in[48] | in[49] << 8);
    pos->result = in[50];
    pos->ply = in[52] | in[53] << 8;
    return 0;
}

int data_write_header(FILE *out)
{
    return fwrite(DATA_MAGIC, 1, DATA_HEADER_BYTES, out) == DATA_HEADER_BYTES ? 0 : -1;
}

int data_read_header(FILE *in, char *err, size_t errlen)
{
    char magic[DATA_HEADER_BYTES];
    if (fread(magic, 1, sizeof magic, in) != sizeof magic || memcmp(magic, DATA_MAGIC, sizeof magic) != 0) {
        snprintf(err, errlen, "not a training data file (no %s header)", DATA_MAGIC);
        return -1;
    }
    return 0;
}

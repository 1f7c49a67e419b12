#include "movegen.h"

static inline void add(MoveList *list, int from, int to)
{
    list->moves[list->count++] = move_make(from, to);
}

/* A target square accepted by `kinds`: empty for quiets, enemy for captures. */
static inline bool wanted(const Board *b, int to, int us, int kinds)
{
    int p = b->squares[to];
    if (!p)
        return kinds & GEN_QUIETS;
    return piece_color(p) != us && (kinds & GEN_CAPTURES);
}

static void gen_leaper(const Board *b, MoveList *list, int us, int type,
                       const LeaperTargets *table, bool blockable, int kinds)
{
    for (int i = 0; i < b->count[us][type]; i++) {
        int from = b->list[us][type][i];
        const LeaperTargets *t = &table[from];
        for (int j = 0; j < t->count; j++) {
            if (blockable && b->squares[t->block[j]])
                continue;
            if (wanted(b, t->to[j], us, kinds))
                add(list, from, t->to[j]);
        }
    }
}

static void add_line_captures(const Board *b, MoveList *list, int us, int from,
                              unsigned rank_mask, unsigned file_mask)
{
    int f = sq_file(from), r = sq_rank(from);
    for (unsigned m = rank_mask; m; m &= m - 1) {
        int to = r * FILES + __builtin_ctz(m);
        if (piece_color(b->squares[to]) != us)
            add(list, from, to);
    }
    for (unsigned m = file_mask; m; m &= m - 1) {
        int to = __builtin_ctz(m) * FILES + f;
        if (piece_color(b->squares[to]) != us)
            add(list, from, to);
    }
}

static void gen_sliders(const Board *b, MoveList *list, int us, int type, int kinds)
{
    for (int i = 0; i < b->count[us][type]; i++) {
        int from = b->list[us][type][i];
        int f = sq_file(from), r = sq_rank(from);
        const LineMasks *rm = &tab_rank[f][b->rank_bits[r]];
        const LineMasks *fm = &tab_file[r][b->file_bits[f]];
        if (kinds & GEN_CAPTURES) {
            if (type == ROOK)
                add_line_captures(b, list, us, from, rm->first, fm->first);
            else
                add_line_captures(b, list, us, from, rm->second, fm->second);
        }
        if (kinds & GEN_QUIETS) {
            for (unsigned m = rm->slide; m; m &= m - 1)
                add(list, from, r * FILES + __builtin_ctz(m));
            for (unsigned m = fm->slide; m; m &= m - 1)
                add(list, from, __builtin_ctz(m) * FILES + f);
        }
    }
}

void movegen_pseudo(const Board *b, MoveList *list, int kinds)
{
    int us = b->side;
    gen_sliders(b, list, us, ROOK, kinds);
    gen_sliders(b, list, us, CANNON, kinds);
    gen_leaper(b, list, us, HORSE, tab_horse, true, kinds);
    gen_leaper(b, list, us, PAWN, tab_pawn[us], false, kinds);
    gen_leaper(b, list, us, ELEPHANT, tab_elephant, true, kinds);
    gen_leaper(b, list, us, ADVISOR, tab_advisor, false, kinds);
    gen_leaper(b, list, us, KING, tab_king, false, kinds);
}

static void keep_legal(Board *b, MoveList *list, int start)
{
    int n = start;
    for (int i = start; i < list->count; i++)
        if (board_legal(b, list->moves[i]))
            list->moves[n++] = list->moves[i];
    list->count = n;
}

void movegen_legal(Board *b, MoveList *list)
{
    list->count = 0;
    movegen_pseudo(b, list, GEN_ALL);
    keep_legal(b, list, 0);
}

void movegen_legal_captures(Board *b, MoveList *list)
{
    list->count = 0;
    movegen_pseudo(b, list, GEN_CAPTURES);
    keep_legal(b, list, 0);
}

void movegen_quiet_checks(Board *b, MoveList *list)
{
    MoveList quiets;
    quiets.count = 0;
    movegen_pseudo(b, &quiets, GEN_QUIETS);
    list->count = 0;
    for (int i = 0; i < quiets.count; i++) {
        Move m = quiets.moves[i];
        if (board_legal(b, m) && board_gives_check(b, m))
            list->moves[list->count++] = m;
    }
}

int movegen_count_legal(Board *b)
{
    MoveList list;
    list.count = 0;
    movegen_pseudo(b, &list, GEN_ALL);
    int n = 0;
    for (int i = 0; i < list.count; i++)
        n += board_legal(b, list.moves[i]);
    return n;
}

bool movegen_is_legal(Board *b, Move m)
{
    int from = move_from(m), to = move_to(m);
    if (from >= SQUARES || to >= SQUARES)
        return false;
    int p = b->squares[from];
    if (!p || piece_color(p) != b->side)
        return false;
    MoveList list;
    list.count = 0;
    movegen_pseudo(b, &list, GEN_ALL);
    for (int i = 0; i < list.count; i++)
        if (list.moves[i] == m)
            return board_legal(b, m);
    return false;
}

#include "board.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const char *const STARTPOS[RANKS] = {
    /* rank 0 (Red's back rank) first */
    "RNBAKABNR", ".........", ".C.....C.", "P.P.P.P.P", ".........",
    ".........", "p.p.p.p.p", ".c.....c.", ".........", "rnbakabnr",
};

static inline void occupy(Board *b, int sq)
{
    b->rank_bits[sq_rank(sq)] |= (uint16_t)(1u << sq_file(sq));
    b->file_bits[sq_file(sq)] |= (uint16_t)(1u << sq_rank(sq));
}

static inline void vacate(Board *b, int sq)
{
    b->rank_bits[sq_rank(sq)] &= (uint16_t)~(1u << sq_file(sq));
    b->file_bits[sq_file(sq)] &= (uint16_t)~(1u << sq_rank(sq));
}

static inline void list_add(Board *b, int piece, int sq)
{
    int c = piece_color(piece), t = piece_type(piece);
    b->slot[sq] = b->count[c][t];
    b->list[c][t][b->count[c][t]++] = (uint8_t)sq;
}

static inline void list_remove(Board *b, int piece, int sq)
{
    int c = piece_color(piece), t = piece_type(piece);
    int last = b->list[c][t][--b->count[c][t]];
    b->list[c][t][b->slot[sq]] = (uint8_t)last;
    b->slot[last] = b->slot[sq];
}

/* Adds or removes (the same XOR) a piece on sq in the family keys it belongs to. */
static inline void family_toggle(Board *b, int piece, int sq)
{
    uint64_t z = zobrist_piece[piece][sq];
    int t = piece_type(piece);
    if (t == HORSE || t == ROOK || t == CANNON || t == KING)
        b->attack_key[piece_color(piece)] ^= z;
    if (t != HORSE && t != ROOK && t != CANNON)
        b->structure_key ^= z;
}

void board_clear(Board *b)
{
    tables_init();
    memset(b, 0, offsetof(Board, states));
    memset(&b->states[0], 0, sizeof b->states[0]);
    b->fullmove = 1;
}

void board_put(Board *b, int sq, int piece)
{
    b->squares[sq] = (uint8_t)piece;
    occupy(b, sq);
    list_add(b, piece, sq);
    family_toggle(b, piece, sq);
}

uint64_t board_compute_key(const Board *b)
{
    uint64_t key = b->side == BLACK ? zobrist_side : 0;
    for (int sq = 0; sq < SQUARES; sq++)
        if (b->squares[sq])
            key ^= zobrist_piece[b->squares[sq]][sq];
    return key;
}

void board_finish_setup(Board *b, int rule60)
{
    State *st = &b->states[0];
    b->top = 0;
    b->plies = 0;
    st->key = board_compute_key(b);
    st->move = MOVE_NONE;
    st->captured = EMPTY;
    st->rule60 = (uint16_t)rule60;
    st->check = board_king_attacked(b, b->side);
}

void board_startpos(Board *b)
{
    static const char letters[] = ".KAEHRCP";
    board_clear(b);
    for (int r = 0; r < RANKS; r++) {
        for (int f = 0; f < FILES; f++) {
            char ch = STARTPOS[r][f];
            if (ch == '.')
                continue;
            int color = ch >= 'a' ? BLACK : RED;
            char up = (char)(ch & ~0x20);
            int type = up == 'B' ? ELEPHANT : up == 'N' ? HORSE : (int)(strchr(letters, up) - letters);
            board_put(b, sq_make(f, r), make_piece(color, type));
        }
    }
    b->side = RED;
    board_finish_setup(b, 0);
}

/* Iterates the set bits of a line mask, lowest first. */
#define FOR_BITS(bit, mask) \
    for (unsigned _m = (mask), bit; _m && ((bit = (unsigned)__builtin_ctz(_m)), 1); _m &= _m - 1)

/*
 * Is sq attacked along its rank or file: by `rook` (or `file_also`, the
 * facing king, on the file) as the first piece met, or by `cannon` as the
 * second?
 */
static inline bool line_attacked(const Board *b, int sq, int rook, int cannon, int file_also)
{
    int f = sq_file(sq), r = sq_rank(sq);
    const LineMasks *rm = &tab_rank[f][b->rank_bits[r]];
    const LineMasks *fm = &tab_file[r][b->file_bits[f]];
    FOR_BITS(bit, rm->first)
        if (b->squares[r * FILES + bit] == rook)
            return true;
    FOR_BITS(bit, fm->first) {
        int p = b->squares[bit * FILES + f];
        if (p == rook || p == file_also)
            return true;
    }
    FOR_BITS(bit, rm->second)
        if (b->squares[r * FILES + bit] == cannon)
            return true;
    FOR_BITS(bit, fm->second)
        if (b->squares[bit * FILES + f] == cannon)
            return true;
    return false;
}

/* Is a king of `color` standing on k attacked? Checks only what can give check. */
static bool king_square_attacked(const Board *b, int k, int color)
{
    int enemy = color ^ 1;
    if (line_attacked(b, k, make_piece(enemy, ROOK), make_piece(enemy, CANNON), make_piece(enemy, KING)))
        return true;

    int horse = make_piece(enemy, HORSE);
    const LeaperTargets *h = &tab_horse_attackers[k];
    for (int i = 0; i < h->count; i++)
        if (b->squares[h->to[i]] == horse && !b->squares[h->block[i]])
            return true;

    /* A king is always inside its palace, so an enemy pawn beside it has crossed. */
    int pawn = make_piece(enemy, PAWN);
    int front = color == RED ? k + FILES : k - FILES;
    if (front >= 0 && front < SQUARES && b->squares[front] == pawn)
        return true;
    return b->squares[k - 1] == pawn || b->squares[k + 1] == pawn;
}

bool board_king_attacked(const Board *b, int color)
{
    if (!b->count[color][KING]) /* only in perft of pseudo-positions, after a king capture */
        return false;
    return king_square_attacked(b, board_king(b, color), color);
}

bool board_square_attacked(const Board *b, int sq, int by)
{
    int f = sq_file(sq), r = sq_rank(sq);
    if (line_attacked(b, sq, make_piece(by, ROOK), make_piece(by, CANNON), -1))
        return true;

    const LeaperTargets *h = &tab_horse_attackers[sq];
    for (int i = 0; i < h->count; i++)
        if (b->squares[h->to[i]] == make_piece(by, HORSE) && !b->squares[h->block[i]])
            return true;
    /* Elephant, advisor and king moves are symmetric: look from sq itself. */
    const LeaperTargets *e = &tab_elephant[sq];
    for (int i = 0; i < e->count; i++)
        if (b->squares[e->to[i]] == make_piece(by, ELEPHANT) && !b->squares[e->block[i]])
            return true;
    if (tab_in_palace[by][sq]) {
        for (int i = 0; i < tab_advisor[sq].count; i++)
            if (b->squares[tab_advisor[sq].to[i]] == make_piece(by, ADVISOR))
                return true;
        for (int i = 0; i < tab_king[sq].count; i++)
            if (b->squares[tab_king[sq].to[i]] == make_piece(by, KING))
                return true;
    }
    int pawn = make_piece(by, PAWN);
    int behind = by == RED ? sq - FILES : sq + FILES;
    if (behind >= 0 && behind < SQUARES && b->squares[behind] == pawn)
        return true;
    bool crossed = by == RED ? r >= 5 : r <= 4;
    if (crossed) {
        if (f > 0 && b->squares[sq - 1] == pawn)
            return true;
        if (f < FILES - 1 && b->squares[sq + 1] == pawn)
            return true;
    }
    return false;
}

static void compact_states(Board *b)
{
    int drop = b->top + 1 - STATE_KEEP;
    memmove(b->states, b->states + drop, STATE_KEEP * sizeof b->states[0]);
    b->top -= drop;
}

void board_make(Board *b, Move m)
{
    if (b->top == STATE_STACK - 1)
        compact_states(b);
    int from = move_from(m), to = move_to(m);
    int piece = b->squares[from], captured = b->squares[to];
    const State *prev = &b->states[b->top];
    State *st = &b->states[b->top + 1];
    uint64_t key = prev->key ^ zobrist_side ^ zobrist_piece[piece][from] ^ zobrist_piece[piece][to];

    family_toggle(b, piece, from);
    family_toggle(b, piece, to);
    if (captured) {
        key ^= zobrist_piece[captured][to];
        list_remove(b, captured, to);
        family_toggle(b, captured, to);
    } else {
        occupy(b, to);
    }
    vacate(b, from);
    b->squares[to] = (uint8_t)piece;
    b->squares[from] = EMPTY;
    b->slot[to] = b->slot[from];
    b->list[piece_color(piece)][piece_type(piece)][b->slot[to]] = (uint8_t)to;

    if (b->side == BLACK)
        b->fullmove++;
    b->side ^= 1;
    b->plies++;
    b->top++;
    st->key = key;
    st->move = m;
    st->captured = (uint8_t)captured;
    st->rule60 = captured ? 0 : (uint16_t)(prev->rule60 + 1);
    st->check = board_king_attacked(b, b->side);
}

void board_unmake(Board *b)
{
    const State *st = &b->states[b->top];
    int from = move_from(st->move), to = move_to(st->move);
    int piece = b->squares[to], captured = st->captured;

    b->squares[from] = (uint8_t)piece;
    b->slot[from] = b->slot[to];
    b->list[piece_color(piece)][piece_type(piece)][b->slot[from]] = (uint8_t)from;
    occupy(b, from);
    b->squares[to] = (uint8_t)captured;
    if (captured)
        list_add(b, captured, to);
    else
        vacate(b, to);
    family_toggle(b, piece, from);
    family_toggle(b, piece, to);
    if (captured)
        family_toggle(b, captured, to);

    b->top--;
    b->plies--;
    b->side ^= 1;
    if (b->side == BLACK)
        b->fullmove--;
}

void board_make_null(Board *b)
{
    if (b->top == STATE_STACK - 1)
        compact_states(b);
    const State *prev = &b->states[b->top];
    State *st = &b->states[b->top + 1];
    st->key = prev->key ^ zobrist_side;
    st->move = MOVE_NONE;
    st->captured = EMPTY;
    st->check = 0;
    st->rule60 = 0; /* a null move ends every repetition cycle */
    b->side ^= 1;
    b->top++;
}

void board_unmake_null(Board *b)
{
    b->top--;
    b->side ^= 1;
}

/*
 * Could the move of a non-king piece from `from` to `to` change whether the
 * king on k is attacked?  Only through k's rank or file (rook, cannon,
 * facing kings) or by freeing a horse leg, which is a diagonal neighbour of k.
 */
static inline bool may_expose(int k, int from, int to)
{
    int kf = sq_file(k), kr = sq_rank(k);
    int ff = sq_file(from), fr = sq_rank(from);
    if (ff == kf || fr == kr || sq_file(to) == kf || sq_rank(to) == kr)
        return true;
    int df = ff - kf, dr = fr - kr;
    return (df == 1 || df == -1) && (dr == 1 || dr == -1);
}

/* Moves the piece without touching keys or lists, tests, and puts it back. */
static bool attacked_after(Board *b, Move m, int color)
{
    int from = move_from(m), to = move_to(m);
    int piece = b->squares[from], captured = b->squares[to];
    b->squares[to] = (uint8_t)piece;
    b->squares[from] = EMPTY;
    vacate(b, from);
    occupy(b, to);
    int k = piece == make_piece(color, KING) ? to : board_king(b, color);
    bool attacked = b->count[color][KING] && king_square_attacked(b, k, color);
    b->squares[from] = (uint8_t)piece;
    b->squares[to] = (uint8_t)captured;
    occupy(b, from);
    if (!captured)
        vacate(b, to);
    return attacked;
}

bool board_legal(Board *b, Move m)
{
    int us = b->side;
    int from = move_from(m);
    if (!board_in_check(b) && piece_type(b->squares[from]) != KING
        && !may_expose(board_king(b, us), from, move_to(m)))
        return true;
    return !attacked_after(b, m, us);
}

bool board_gives_check(Board *b, Move m)
{
    int them = b->side ^ 1;
    int k = board_king(b, them), from = move_from(m), to = move_to(m);
    int type = piece_type(b->squares[from]);
    int df = abs(sq_file(to) - sq_file(k)), dr = abs(sq_rank(to) - sq_rank(k));
    /* Direct checks by rook, cannon and pawn, and every discovered check, pass through may_expose. */
    bool possible = may_expose(k, from, to) || (type == HORSE && ((df == 1 && dr == 2) || (df == 2 && dr == 1)));
    return possible && attacked_after(b, m, them);
}

bool board_has_attackers(const Board *b, int color)
{
    if (b->count[color][ROOK] || b->count[color][HORSE] || b->count[color][CANNON])
        return true;
    for (int i = 0; i < b->count[color][PAWN]; i++) {
        int r = sq_rank(b->list[color][PAWN][i]);
        if (color == RED ? r >= 5 : r <= 4)
            return true;
    }
    return false;
}

bool board_move_safe(Board *b, Move m)
{
    return !attacked_after(b, m, piece_color(b->squares[move_from(m)]));
}

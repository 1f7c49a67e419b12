#include "see.h"

const int SEE_VALUE[PIECE_TYPES] = { 0, 5000, 200, 200, 400, 900, 450, 100 };

enum { NO_SQUARE = -1 };

static inline void lift(Board *b, int sq)
{
    b->squares[sq] = EMPTY;
    b->rank_bits[sq_rank(sq)] &= (uint16_t)~(1u << sq_file(sq));
    b->file_bits[sq_file(sq)] &= (uint16_t)~(1u << sq_rank(sq));
}

static inline void drop(Board *b, int sq, int piece)
{
    b->squares[sq] = (uint8_t)piece;
    b->rank_bits[sq_rank(sq)] |= (uint16_t)(1u << sq_file(sq));
    b->file_bits[sq_file(sq)] |= (uint16_t)(1u << sq_rank(sq));
}

/* The first square of a line mask holding `piece`, or NO_SQUARE. */
static inline int on_rank(const Board *b, int rank, unsigned mask, int piece)
{
    for (; mask; mask &= mask - 1) {
        int sq = rank * FILES + __builtin_ctz(mask);
        if (b->squares[sq] == piece)
            return sq;
    }
    return NO_SQUARE;
}

static inline int on_file(const Board *b, int file, unsigned mask, int piece)
{
    for (; mask; mask &= mask - 1) {
        int sq = __builtin_ctz(mask) * FILES + file;
        if (b->squares[sq] == piece)
            return sq;
    }
    return NO_SQUARE;
}

/* Leaper targets of sq holding `piece` with their blocking square empty (or unchecked). */
static inline int leaper(const Board *b, const LeaperTargets *t, int piece, bool blocked)
{
    for (int i = 0; i < t->count; i++)
        if (b->squares[t->to[i]] == piece && (!blocked || !b->squares[t->block[i]]))
            return t->to[i];
    return NO_SQUARE;
}

/* The square of `side`'s least valuable piece attacking sq on the current occupancy, or NO_SQUARE. */
static int least_attacker(const Board *b, int sq, int side)
{
    int f = sq_file(sq), r = sq_rank(sq), from;
    int pawn = make_piece(side, PAWN);
    int behind = side == RED ? sq - FILES : sq + FILES;
    if (behind >= 0 && behind < SQUARES && b->squares[behind] == pawn)
        return behind;
    if (side == RED ? r >= 5 : r <= 4) {
        if (f > 0 && b->squares[sq - 1] == pawn)
            return sq - 1;
        if (f < FILES - 1 && b->squares[sq + 1] == pawn)
            return sq + 1;
    }
    if (tab_in_palace[side][sq] && (from = leaper(b, &tab_advisor[sq], make_piece(side, ADVISOR), false)) >= 0)
        return from;
    if ((from = leaper(b, &tab_elephant[sq], make_piece(side, ELEPHANT), true)) >= 0)
        return from;
    if ((from = leaper(b, &tab_horse_attackers[sq], make_piece(side, HORSE), true)) >= 0)
        return from;
    const LineMasks *rm = &tab_rank[f][b->rank_bits[r]];
    const LineMasks *fm = &tab_file[r][b->file_bits[f]];
    int cannon = make_piece(side, CANNON), rook = make_piece(side, ROOK);
    if ((from = on_rank(b, r, rm->second, cannon)) >= 0 || (from = on_file(b, f, fm->second, cannon)) >= 0)
        return from;
    if ((from = on_rank(b, r, rm->first, rook)) >= 0 || (from = on_file(b, f, fm->first, rook)) >= 0)
        return from;
    if (tab_in_palace[side][sq] && (from = leaper(b, &tab_king[sq], make_piece(side, KING), false)) >= 0)
        return from;
    return NO_SQUARE;
}

static int piece_value(int piece, int sq)
{
    int type = piece_type(piece);
    if (type == PAWN && (piece_color(piece) == RED ? sq_rank(sq) >= 5 : sq_rank(sq) <= 4))
        return 2 * SEE_VALUE[PAWN]; /* a crossed pawn moves sideways and nears the palace */
    return SEE_VALUE[type];
}

int see(Board *b, Move m)
{
    int from = move_from(m), to = move_to(m);
    int mover = b->squares[from], victim = b->squares[to];
    int gain[40], lifted_sq[40], lifted_piece[40], n_lifted = 0;
    int d = 0;
    gain[0] = victim ? piece_value(victim, to) : 0;
    lift(b, from);
    lifted_sq[n_lifted] = from;
    lifted_piece[n_lifted++] = mover;
    drop(b, to, mover);
    int on_square = piece_value(mover, to); /* what the next capture wins */
    int side = piece_color(mover) ^ 1;
    for (;;) {
        int sq = least_attacker(b, to, side);
        if (sq == NO_SQUARE)
            break;
        int piece = b->squares[sq];
        if (piece_type(piece) == KING) {
            /* The king recaptures only when nothing can take it back. */
            lift(b, sq);
            bool defended = least_attacker(b, to, side ^ 1) != NO_SQUARE;
            drop(b, sq, piece);
            if (defended)
                break;
        }
        /* Capturing can only do worse than this for `side` once the exchange goes on. */
        int g = on_square - gain[d];
        if (g <= -gain[d] || d == 38)
            break;
        gain[++d] = g;
        lift(b, sq);
        lifted_sq[n_lifted] = sq;
        lifted_piece[n_lifted++] = piece;
        b->squares[to] = (uint8_t)piece;
        on_square = piece_value(piece, to);
        side ^= 1;
    }
    /* Each side in turn takes the better of stopping and capturing. */
    for (; d > 0; d--)
        gain[d - 1] = -(-gain[d - 1] > gain[d] ? -gain[d - 1] : gain[d]);
    /* Restore: the target square first, then every lifted piece. */
    if (victim)
        b->squares[to] = (uint8_t)victim;
    else
        lift(b, to);
    while (n_lifted-- > 0)
        drop(b, lifted_sq[n_lifted], lifted_piece[n_lifted]);
    return gain[0];
}

bool see_ge(Board *b, Move m, int threshold)
{
    return see(b, m) >= threshold;
}

#include "eval.h"

static const int VALUE[PIECE_TYPES] = { 0, 0, 120, 120, 400, 900, 450, 100 };

/* Bonus for a piece of `color` of `type` on sq, seen from its own side. */
static int positional(int color, int type, int sq)
{
    int f = sq_file(sq), r = sq_rank(sq);
    int advance = color == RED ? r : RANKS - 1 - r;
    int centre = 4 - (f > 4 ? f - 4 : 4 - f); /* 0 on the edge, 4 in the middle */
    switch (type) {
    case PAWN:
        /* Across the river a pawn doubles; near the palace it is worth more. */
        if (advance < 5)
            return 0;
        return 80 + (advance <= 7 ? 10 * centre : 0) + (advance == 9 ? -40 : 0);
    case HORSE:
        return 6 * centre + 5 * (advance > 4 ? advance - 4 : 0);
    case ROOK:
        return 3 * centre + (advance >= 5 ? 20 : 0);
    case CANNON:
        return f == 4 ? 20 : 0;
    default:
        return 0;
    }
}

int evaluate(const Board *b)
{
    int score[2] = { 0, 0 };
    for (int c = RED; c <= BLACK; c++)
        for (int t = ADVISOR; t <= PAWN; t++)
            for (int i = 0; i < b->count[c][t]; i++)
                score[c] += VALUE[t] + positional(c, t, b->list[c][t][i]);
    return score[b->side] - score[b->side ^ 1];
}

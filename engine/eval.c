#include "eval.h"

#include <stdlib.h>

/* Distance of a file from the edge: 0 on a/i, 4 on e. */
static int centrality(int file)
{
    return 4 - abs(file - 4);
}

/* Middlegame and endgame value of a piece of `type` on sq, seen from Red's side of the board. */
static void square_value(const Params *p, int type, int sq, int *mg, int *eg)
{
    int f = sq_file(sq), advance = sq_rank(sq);
    switch (type) {
    case KING:
        *mg = (f != 4 ? p->KingOffFile : 0) + p->KingRaised * advance;
        *eg = 0;
        break;
    case ADVISOR:
        *mg = p->AdvisorMg + (sq == sq_make(4, 1) ? p->AdvisorCentre : 0);
        *eg = p->AdvisorEg;
        break;
    case ELEPHANT:
        *mg = p->ElephantMg + (sq == sq_make(4, 2) ? p->ElephantCentre : 0);
        *eg = p->ElephantEg;
        break;
    case HORSE: {
        int pos = p->HorseCentre * centrality(f) + p->HorseAdvance * (advance > 4 ? advance - 4 : 0)
                + (f == 0 || f == 8 ? p->HorseEdge : 0);
        *mg = p->HorseMg + pos;
        *eg = p->HorseEg + pos / 2;
        break;
    }
    case ROOK:
        *mg = p->RookMg + (advance >= 5 ? p->RookCrossed : 0);
        *eg = p->RookEg;
        break;
    case CANNON:
        *mg = p->CannonMg + (f == 4 ? p->CannonCentre : 0);
        *eg = p->CannonEg;
        break;
    case PAWN:
        *mg = p->PawnMg;
        *eg = p->PawnEg;
        if (advance >= 5) {
            int pos = p->PawnCentre * centrality(f);
            if (advance == 9)
                pos += p->PawnBackRank;
            else if (advance >= 7 && f >= 3 && f <= 5)
                pos += p->PawnNearPalace;
            *mg += p->PawnCrossedMg + pos;
            *eg += p->PawnCrossedEg + pos;
        }
        break;
    default:
        *mg = *eg = 0;
    }
}

void eval_init(EvalTables *t, const Params *params)
{
    tables_init();
    t->params = params;
    for (int type = KING; type <= PAWN; type++) {
        for (int sq = 0; sq < SQUARES; sq++) {
            int mg, eg;
            square_value(params, type, sq, &mg, &eg);
            int mirrored = sq_make(sq_file(sq), RANKS - 1 - sq_rank(sq));
            t->mg[make_piece(RED, type)][sq] = (int16_t)mg;
            t->eg[make_piece(RED, type)][sq] = (int16_t)eg;
            t->mg[make_piece(BLACK, type)][mirrored] = (int16_t)mg;
            t->eg[make_piece(BLACK, type)][mirrored] = (int16_t)eg;
        }
    }
}

int eval_piece_value(const EvalTables *t, int type)
{
    const Params *p = t->params;
    switch (type) {
    case ADVISOR: return p->AdvisorMg;
    case ELEPHANT: return p->ElephantMg;
    case HORSE: return p->HorseMg;
    case ROOK: return p->RookMg;
    case CANNON: return p->CannonMg;
    case PAWN: return p->PawnMg + p->PawnCrossedMg;
    default: return 0;
    }
}

static inline int popcount(unsigned x)
{
    return tab_popcount[x];
}

/* Pieces strictly between two squares on one file. */
static int between_on_file(const Board *b, int file, int r1, int r2)
{
    int lo = r1 < r2 ? r1 : r2, hi = r1 < r2 ? r2 : r1;
    unsigned mask = ((1u << hi) - 1) & ~((1u << (lo + 1)) - 1);
    return popcount(b->file_bits[file] & mask);
}

static int between_on_rank(const Board *b, int rank, int f1, int f2)
{
    int lo = f1 < f2 ? f1 : f2, hi = f1 < f2 ? f2 : f1;
    unsigned mask = ((1u << hi) - 1) & ~((1u << (lo + 1)) - 1);
    return popcount(b->rank_bits[rank] & mask);
}

typedef struct {
    int mg, eg;
} Score;

/* Mobility of `us`, and the pattern terms of its attack on the enemy king. */
static void side_terms(const Board *b, const Params *p, int us, Score *s)
{
    int them = us ^ 1;
    int k = board_king(b, them);
    int kf = sq_file(k), kr = sq_rank(k);
    int back = them == RED ? 0 : RANKS - 1; /* the enemy's back rank */
    int attackers = 0, mobility = 0, ks = 0;

    for (int i = 0; i < b->count[us][HORSE]; i++) {
        int sq = b->list[us][HORSE][i];
        const LeaperTargets *t = &tab_horse[sq];
        int n = 0;
        for (int j = 0; j < t->count; j++)
            n += !b->squares[t->block[j]] && (!b->squares[t->to[j]] || piece_color(b->squares[t->to[j]]) != us);
        mobility += p->HorseMobility * n;
        if (abs(sq_file(sq) - kf) <= 2 && abs(sq_rank(sq) - kr) <= 3) {
            ks += p->KsHorseNear;
            attackers++;
        }
    }
    for (int i = 0; i < b->count[us][ROOK]; i++) {
        int sq = b->list[us][ROOK][i];
        int f = sq_file(sq), r = sq_rank(sq);
        const LineMasks *rm = &tab_rank[f][b->rank_bits[r]];
        const LineMasks *fm = &tab_file[r][b->file_bits[f]];
        mobility += p->RookMobility * (popcount(rm->slide | rm->first) + popcount(fm->slide | fm->first));
        bool crossed = us == RED ? r >= 5 : r <= 4;
        if (crossed && ((f >= 3 && f <= 5) || abs(r - back) <= 2)) {
            ks += p->KsRookNear;
            attackers++;
        }
    }
    for (int i = 0; i < b->count[us][CANNON]; i++) {
        int sq = b->list[us][CANNON][i];
        int f = sq_file(sq), r = sq_rank(sq);
        const LineMasks *rm = &tab_rank[f][b->rank_bits[r]];
        const LineMasks *fm = &tab_file[r][b->file_bits[f]];
        mobility += p->CannonMobility * (popcount(rm->slide | rm->second) + popcount(fm->slide | fm->second));
        if (f == kf) {
            int screens = between_on_file(b, f, r, kr);
            if (screens == 0) {
                ks += p->KsEmptyCannon;
                attackers++;
            } else if (screens <= 2) {
                ks += p->KsCentralCannon;
                attackers++;
            }
        } else if (r == back && r == kr && between_on_rank(b, r, f, kf) == 1) {
            ks += p->KsBottomCannon;
            attackers++;
        }
    }
    for (int i = 0; i < b->count[us][PAWN]; i++) {
        int sq = b->list[us][PAWN][i];
        if (abs(sq_file(sq) - kf) <= 1 && abs(sq_rank(sq) - kr) <= 2)
            attackers++;
    }
    ks += p->KsAttackers * attackers * (attackers - 1);
    int pieces = b->count[us][ROOK] + b->count[us][HORSE] + b->count[us][CANNON];
    ks += pieces * ((2 - b->count[them][ADVISOR]) * p->KsMissingAdvisor
                    + (2 - b->count[them][ELEPHANT]) * p->KsMissingElephant);

    /* Crossed pawns side by side. */
    int linked = 0;
    for (int i = 0; i < b->count[us][PAWN]; i++) {
        int sq = b->list[us][PAWN][i];
        bool crossed = us == RED ? sq_rank(sq) >= 5 : sq_rank(sq) <= 4;
        if (crossed && sq_file(sq) < FILES - 1 && b->squares[sq + 1] == make_piece(us, PAWN))
            linked++;
    }

    int combo = 0;
    if (b->count[us][HORSE] == 2 && b->count[us][ROOK] == 0)
        combo += p->ComboTwoHorses;
    if (b->count[us][ROOK] && b->count[us][CANNON])
        combo += p->ComboRookCannon;
    if (b->count[us][HORSE] && b->count[us][CANNON])
        combo += p->ComboHorseCannon;

    s->mg += mobility + ks + linked * p->PawnLinked + combo;
    s->eg += mobility + ks / 2 + linked * p->PawnLinked + combo
           + b->count[us][CANNON] * p->ComboCannonEndgame;
}

int evaluate(const Board *b, const EvalTables *t)
{
    const Params *p = t->params;
    Score side[2] = { { 0, 0 }, { 0, 0 } };
    int phase = 0;
    for (int c = RED; c <= BLACK; c++) {
        for (int type = KING; type <= PAWN; type++) {
            int piece = make_piece(c, type);
            for (int i = 0; i < b->count[c][type]; i++) {
                int sq = b->list[c][type][i];
                side[c].mg += t->mg[piece][sq];
                side[c].eg += t->eg[piece][sq];
            }
        }
        phase += 2 * b->count[c][ROOK] + b->count[c][HORSE] + b->count[c][CANNON];
        side_terms(b, p, c, &side[c]);
    }
    if (phase > PHASE_MAX)
        phase = PHASE_MAX;
    int us = b->side, them = us ^ 1;
    int mg = side[us].mg - side[them].mg, eg = side[us].eg - side[them].eg;
    return (mg * phase + eg * (PHASE_MAX - phase)) / PHASE_MAX + p->Tempo;
}

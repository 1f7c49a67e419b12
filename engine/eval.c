#include "eval.h"

#include <stdlib.h>
#include <string.h>

/* Distance of a file from the edge: 0 on a/i, 4 on e. */
static int centrality(int file)
{
    return 4 - abs(file - 4);
}

/*
 * The trace: while tracing (tr not NULL), every term also adds its
 * parameter's coefficient, times sign (+1 for the side to move, -1 for
 * the other), to tr's middlegame and endgame columns.  The value code and
 * the trace sit side by side so that they stay one definition; the test
 * of eval_trace checks that they agree.  With tr NULL (the search's path)
 * the trace statements compile away.
 */
typedef struct {
    double mg[PARAM_TOTAL], eg[PARAM_TOTAL];
} Coefs;

#define TRACE(name, cmg, ceg)                                                                                \
    do {                                                                                                      \
        if (tr) {                                                                                             \
            tr->mg[PARAM_##name] += sign * (double)(cmg);                                                     \
            tr->eg[PARAM_##name] += sign * (double)(ceg);                                                     \
        }                                                                                                     \
    } while (0)

/*
 * The piece-square parameter of a piece of `type` on (file, rank) seen
 * from its own side, or -1: files mirrored to a-e, the ranks each table
 * covers (params.def).
 */
static int psq_param(int type, int file, int rank)
{
    int f = file <= 4 ? file : 8 - file;
    switch (type) {
    case KING: return f >= 3 && rank <= 2 ? PARAM_PsqKingD0 + (f - 3) * 3 + rank : -1;
    case HORSE: return PARAM_PsqHorseA0 + f * 10 + rank;
    case ROOK: return PARAM_PsqRookA0 + f * 10 + rank;
    case CANNON: return PARAM_PsqCannonA0 + f * 10 + rank;
    case PAWN: return rank >= 3 ? PARAM_PsqPawnA3 + f * 7 + rank - 3 : -1;
    default: return -1;
    }
}

/*
 * Middlegame and endgame value of a piece of `type` on sq, seen from Red's
 * side of the board, in half centipawns (so that halved terms are exact).
 */
static inline __attribute__((always_inline)) void square_value(const Params *p, int type, int sq, int *mg,
                                                              int *eg, Coefs *tr, double sign)
{
    int f = sq_file(sq), advance = sq_rank(sq), half_eg = 0;
    switch (type) {
    case KING:
        *mg = (f != 4 ? p->KingOffFile : 0) + p->KingRaised * advance;
        *eg = 0;
        TRACE(KingOffFile, f != 4, 0);
        TRACE(KingRaised, advance, 0);
        break;
    case ADVISOR:
        *mg = p->AdvisorMg + (sq == sq_make(4, 1) ? p->AdvisorCentre : 0);
        *eg = p->AdvisorEg;
        TRACE(AdvisorMg, 1, 0);
        TRACE(AdvisorEg, 0, 1);
        TRACE(AdvisorCentre, sq == sq_make(4, 1), 0);
        break;
    case ELEPHANT:
        *mg = p->ElephantMg + (sq == sq_make(4, 2) ? p->ElephantCentre : 0);
        *eg = p->ElephantEg;
        TRACE(ElephantMg, 1, 0);
        TRACE(ElephantEg, 0, 1);
        TRACE(ElephantCentre, sq == sq_make(4, 2), 0);
        break;
    case HORSE: {
        int across = advance > 4 ? advance - 4 : 0, edge = f == 0 || f == 8;
        int pos = p->HorseCentre * centrality(f) + p->HorseAdvance * across + (edge ? p->HorseEdge : 0);
        *mg = p->HorseMg + pos;
        *eg = p->HorseEg;
        half_eg = pos;
        TRACE(HorseMg, 1, 0);
        TRACE(HorseEg, 0, 1);
        TRACE(HorseCentre, centrality(f), centrality(f) * 0.5);
        TRACE(HorseAdvance, across, across * 0.5);
        TRACE(HorseEdge, edge, edge * 0.5);
        break;
    }
    case ROOK:
        *mg = p->RookMg + (advance >= 5 ? p->RookCrossed : 0);
        *eg = p->RookEg;
        TRACE(RookMg, 1, 0);
        TRACE(RookEg, 0, 1);
        TRACE(RookCrossed, advance >= 5, 0);
        break;
    case CANNON:
        *mg = p->CannonMg + (f == 4 ? p->CannonCentre : 0);
        *eg = p->CannonEg;
        TRACE(CannonMg, 1, 0);
        TRACE(CannonEg, 0, 1);
        TRACE(CannonCentre, f == 4, 0);
        break;
    case PAWN:
        *mg = p->PawnMg;
        *eg = p->PawnEg;
        TRACE(PawnMg, 1, 0);
        TRACE(PawnEg, 0, 1);
        if (advance >= 5) {
            int pos = p->PawnCentre * centrality(f);
            bool back = advance == 9, near = !back && advance >= 7 && f >= 3 && f <= 5;
            if (back)
                pos += p->PawnBackRank;
            else if (near)
                pos += p->PawnNearPalace;
            *mg += p->PawnCrossedMg + pos;
            *eg += p->PawnCrossedEg + pos;
            TRACE(PawnCrossedMg, 1, 0);
            TRACE(PawnCrossedEg, 0, 1);
            TRACE(PawnCentre, centrality(f), centrality(f));
            TRACE(PawnBackRank, back, back);
            TRACE(PawnNearPalace, near, near);
        }
        break;
    default:
        *mg = *eg = 0;
    }
    *mg *= 2;
    *eg = 2 * *eg + half_eg;
    int psq = psq_param(type, f, advance);
    if (psq >= 0) {
        int v = params_value(p, &PARAM_INFO[psq]);
        *mg += 2 * v;
        *eg += 2 * v;
        if (tr) {
            tr->mg[psq] += sign;
            tr->eg[psq] += sign;
        }
    }
}

void eval_init(EvalTables *t, const Params *params)
{
    tables_init();
    t->params = params;
    t->king_relative = false;
    for (int i = PARAM_KrHorseF0R0; i <= PARAM_KrCannonF4R5; i++)
        t->king_relative = t->king_relative || params_value(params, &PARAM_INFO[i]) != 0;
    t->threats = params->ThreatRookMover || params->ThreatRookWaiting || params->ThreatHangingMover
              || params->ThreatHangingWaiting || params->ThreatDouble || params->KsPalaceAttack;
    for (int type = KING; type <= PAWN; type++) {
        for (int sq = 0; sq < SQUARES; sq++) {
            int mg, eg;
            square_value(params, type, sq, &mg, &eg, NULL, 0);
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

/*
 * The king-relative parameter of an attacking piece of `type` (HORSE, ROOK
 * or CANNON) of side `us` on sq, the enemy king on k: by files apart (0-3,
 * then 4 or more) and ranks still to go towards the king's rank (0 when
 * level with it or beyond, 1-4, then 5 or more).
 */
static inline int king_relative_param(int type, int us, int sq, int k)
{
    int df = abs(sq_file(sq) - sq_file(k)), dr = us == RED ? sq_rank(k) - sq_rank(sq) : sq_rank(sq) - sq_rank(k);
    df = df < 4 ? df : 4;
    dr = dr < 0 ? 0 : dr < 5 ? dr : 5;
    int first = type == HORSE ? PARAM_KrHorseF0R0 : type == ROOK ? PARAM_KrRookF0R0 : PARAM_KrCannonF0R0;
    return first + df * 6 + dr;
}

/* The king-relative terms of `us`'s attacking pieces (in centipawns; king safety: half in the endgame). */
static inline int king_relative_terms(const Board *b, const Params *p, int us, Coefs *tr, double sign)
{
    static const int TYPES[] = { HORSE, ROOK, CANNON };
    int k = board_king(b, us ^ 1), v = 0;
    for (int t = 0; t < 3; t++)
        for (int i = 0; i < b->count[us][TYPES[t]]; i++) {
            int param = king_relative_param(TYPES[t], us, b->list[us][TYPES[t]][i], k);
            v += params_value(p, &PARAM_INFO[param]);
            if (tr) {
                tr->mg[param] += sign;
                tr->eg[param] += sign * 0.5;
            }
        }
    return v;
}

/* Mobility of `us`, and the pattern terms of its attack on the enemy king. */
static inline __attribute__((always_inline)) void side_terms(const Board *b, const Params *p, int us, Score *s,
                                                             Coefs *tr, double sign)
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
        TRACE(HorseMobility, n, n);
        if (abs(sq_file(sq) - kf) <= 2 && abs(sq_rank(sq) - kr) <= 3) {
            ks += p->KsHorseNear;
            TRACE(KsHorseNear, 1, 0.5);
            attackers++;
        }
    }
    for (int i = 0; i < b->count[us][ROOK]; i++) {
        int sq = b->list[us][ROOK][i];
        int f = sq_file(sq), r = sq_rank(sq);
        const LineMasks *rm = &tab_rank[f][b->rank_bits[r]];
        const LineMasks *fm = &tab_file[r][b->file_bits[f]];
        int n = popcount(rm->slide | rm->first) + popcount(fm->slide | fm->first);
        mobility += p->RookMobility * n;
        TRACE(RookMobility, n, n);
        bool crossed = us == RED ? r >= 5 : r <= 4;
        if (crossed && ((f >= 3 && f <= 5) || abs(r - back) <= 2)) {
            ks += p->KsRookNear;
            TRACE(KsRookNear, 1, 0.5);
            attackers++;
        }
    }
    for (int i = 0; i < b->count[us][CANNON]; i++) {
        int sq = b->list[us][CANNON][i];
        int f = sq_file(sq), r = sq_rank(sq);
        const LineMasks *rm = &tab_rank[f][b->rank_bits[r]];
        const LineMasks *fm = &tab_file[r][b->file_bits[f]];
        int n = popcount(rm->slide | rm->second) + popcount(fm->slide | fm->second);
        mobility += p->CannonMobility * n;
        TRACE(CannonMobility, n, n);
        if (f == kf) {
            int screens = between_on_file(b, f, r, kr);
            if (screens == 0) {
                ks += p->KsEmptyCannon;
                TRACE(KsEmptyCannon, 1, 0.5);
                attackers++;
            } else if (screens <= 2) {
                ks += p->KsCentralCannon;
                TRACE(KsCentralCannon, 1, 0.5);
                attackers++;
            }
        } else if (r == back && r == kr && between_on_rank(b, r, f, kf) == 1) {
            ks += p->KsBottomCannon;
            TRACE(KsBottomCannon, 1, 0.5);
            attackers++;
        }
    }
    for (int i = 0; i < b->count[us][PAWN]; i++) {
        int sq = b->list[us][PAWN][i];
        if (abs(sq_file(sq) - kf) <= 1 && abs(sq_rank(sq) - kr) <= 2)
            attackers++;
    }
    ks += p->KsAttackers * attackers * (attackers - 1);
    TRACE(KsAttackers, attackers * (attackers - 1), attackers * (attackers - 1) * 0.5);
    int pieces = b->count[us][ROOK] + b->count[us][HORSE] + b->count[us][CANNON];
    int no_advisor = pieces * (2 - b->count[them][ADVISOR]), no_elephant = pieces * (2 - b->count[them][ELEPHANT]);
    ks += no_advisor * p->KsMissingAdvisor + no_elephant * p->KsMissingElephant;
    TRACE(KsMissingAdvisor, no_advisor, no_advisor * 0.5);
    TRACE(KsMissingElephant, no_elephant, no_elephant * 0.5);

    /* Crossed pawns side by side. */
    int linked = 0;
    for (int i = 0; i < b->count[us][PAWN]; i++) {
        int sq = b->list[us][PAWN][i];
        bool crossed = us == RED ? sq_rank(sq) >= 5 : sq_rank(sq) <= 4;
        if (crossed && sq_file(sq) < FILES - 1 && b->squares[sq + 1] == make_piece(us, PAWN))
            linked++;
    }

    int combo = 0;
    bool two_horses = b->count[us][HORSE] == 2 && b->count[us][ROOK] == 0;
    bool rook_cannon = b->count[us][ROOK] && b->count[us][CANNON];
    bool horse_cannon = b->count[us][HORSE] && b->count[us][CANNON];
    combo += (two_horses ? p->ComboTwoHorses : 0) + (rook_cannon ? p->ComboRookCannon : 0)
           + (horse_cannon ? p->ComboHorseCannon : 0);
    TRACE(ComboTwoHorses, two_horses, two_horses);
    TRACE(ComboRookCannon, rook_cannon, rook_cannon);
    TRACE(ComboHorseCannon, horse_cannon, horse_cannon);
    TRACE(PawnLinked, linked, linked);
    TRACE(ComboCannonEndgame, 0, b->count[us][CANNON]);

    /* In half centipawns, as the tables. */
    s->mg += 2 * (mobility + ks + linked * p->PawnLinked + combo);
    s->eg += ks + 2 * (mobility + linked * p->PawnLinked + combo
           + b->count[us][CANNON] * p->ComboCannonEndgame);
}

static inline SquareBits square_bit(int sq)
{
    return (SquareBits)1 << sq;
}

static inline int popcount128(SquareBits set)
{
    return __builtin_popcountll((uint64_t)set) + __builtin_popcountll((uint64_t)(set >> 64));
}

/* The squares of a line mask: bits along rank r are files, bits along file f are ranks. */
static inline SquareBits rank_squares(unsigned bits, int r)
{
    return (SquareBits)bits << (r * FILES);
}

static inline SquareBits file_squares(unsigned bits, int f)
{
    SquareBits set = 0;
    while (bits) {
        set |= square_bit(sq_make(f, __builtin_ctz(bits)));
        bits &= bits - 1;
    }
    return set;
}

/* A horse's or elephant's targets, those behind an occupied leg or eye left out. */
static inline SquareBits leaper_squares(const Board *b, const LeaperTargets *t)
{
    SquareBits set = 0;
    for (int j = 0; j < t->count; j++)
        if (!b->squares[t->block[j]])
            set |= square_bit(t->to[j]);
    return set;
}

/*
 * Threats.  For each side, the squares its pieces attack, and those that
 * a pawn, horse or cannon attacks.  Then per side: enemy rooks attacked
 * by such a piece or attacked and undefended, and other enemy pieces
 * attacked and undefended; worth more when the attacker is to move (it
 * takes next) than when it waits (the victim may step away, unless there
 * are two).
 */
static inline __attribute__((always_inline)) void threat_terms(const Board *b, const Params *p, Score side[2],
                                                              Coefs *tr)
{
    SquareBits att[2], low[2];
    for (int c = RED; c <= BLACK; c++) {
        SquareBits all = tab_king_set[board_king(b, c)], minor = 0;
        for (int i = 0; i < b->count[c][ADVISOR]; i++)
            all |= tab_advisor_set[b->list[c][ADVISOR][i]];
        for (int i = 0; i < b->count[c][ELEPHANT]; i++)
            all |= leaper_squares(b, &tab_elephant[b->list[c][ELEPHANT][i]]);
        for (int i = 0; i < b->count[c][HORSE]; i++)
            minor |= leaper_squares(b, &tab_horse[b->list[c][HORSE][i]]);
        for (int i = 0; i < b->count[c][PAWN]; i++)
            minor |= tab_pawn_set[c][b->list[c][PAWN][i]];
        for (int i = 0; i < b->count[c][ROOK]; i++) {
            int sq = b->list[c][ROOK][i], f = sq_file(sq), r = sq_rank(sq);
            all |= rank_squares(tab_rank[f][b->rank_bits[r]].first, r)
                 | file_squares(tab_file[r][b->file_bits[f]].first, f);
        }
        for (int i = 0; i < b->count[c][CANNON]; i++) {
            int sq = b->list[c][CANNON][i], f = sq_file(sq), r = sq_rank(sq);
            minor |= rank_squares(tab_rank[f][b->rank_bits[r]].second, r)
                   | file_squares(tab_file[r][b->file_bits[f]].second, f);
        }
        att[c] = all | minor;
        low[c] = minor;
    }
    for (int us = RED; us <= BLACK; us++) {
        int them = us ^ 1, rooks = 0, hanging = 0;
        SquareBits undefended = att[us] & ~att[them];
        for (int i = 0; i < b->count[them][ROOK]; i++)
            rooks += ((low[us] | undefended) & square_bit(b->list[them][ROOK][i])) != 0;
        for (int type = ADVISOR; type <= PAWN; type++) {
            if (type == ROOK)
                continue;
            for (int i = 0; i < b->count[them][type]; i++)
                hanging += (undefended & square_bit(b->list[them][type][i])) != 0;
        }
        bool mover = us == b->side, twice = !mover && rooks + hanging >= 2;
        double sign = mover ? 1 : -1;
        int v = mover ? rooks * p->ThreatRookMover + hanging * p->ThreatHangingMover
                      : rooks * p->ThreatRookWaiting + hanging * p->ThreatHangingWaiting + twice * p->ThreatDouble;
        TRACE(ThreatRookMover, mover * rooks, mover * rooks);
        TRACE(ThreatHangingMover, mover * hanging, mover * hanging);
        TRACE(ThreatRookWaiting, !mover * rooks, !mover * rooks);
        TRACE(ThreatHangingWaiting, !mover * hanging, !mover * hanging);
        TRACE(ThreatDouble, twice, twice);
        int palace = popcount128(att[us] & tab_palace_set[them]);
        TRACE(KsPalaceAttack, palace, palace * 0.5);
        side[us].mg += 2 * (v + palace * p->KsPalaceAttack);
        side[us].eg += 2 * v + palace * p->KsPalaceAttack;
    }
}

/*
 * The evaluation, with the trace when tr is not NULL: the piece-square
 * part then comes from square_value itself rather than from the tables.
 */
static inline __attribute__((always_inline)) int eval_impl(const Board *b, const EvalTables *t, Coefs *tr,
                                                          int *phase_out)
{
    const Params *p = t->params;
    Score side[2] = { { 0, 0 }, { 0, 0 } };
    int phase = 0;
    for (int c = RED; c <= BLACK; c++) {
        double sign = c == b->side ? 1 : -1;
        for (int type = KING; type <= PAWN; type++) {
            int piece = make_piece(c, type);
            for (int i = 0; i < b->count[c][type]; i++) {
                int sq = b->list[c][type][i];
                if (tr) {
                    int mg, eg, red_sq = c == RED ? sq : sq_make(sq_file(sq), RANKS - 1 - sq_rank(sq));
                    square_value(p, type, red_sq, &mg, &eg, tr, sign);
                }
                side[c].mg += t->mg[piece][sq];
                side[c].eg += t->eg[piece][sq];
            }
        }
        phase += 2 * b->count[c][ROOK] + b->count[c][HORSE] + b->count[c][CANNON];
        side_terms(b, p, c, &side[c], tr, sign);
        if (t->king_relative || tr) {
            int kr = king_relative_terms(b, p, c, tr, sign);
            side[c].mg += 2 * kr;
            side[c].eg += kr;
        }
    }
    if (t->threats || tr)    /* off at weight 0 (they cost a tenth of the speed); always traced, for the fit */
        threat_terms(b, p, side, tr);
    if (phase > PHASE_MAX)
        phase = PHASE_MAX;
    if (phase_out)
        *phase_out = phase;
    int us = b->side, them = us ^ 1;
    int mg = side[us].mg - side[them].mg, eg = side[us].eg - side[them].eg;
    return (mg * phase + eg * (PHASE_MAX - phase)) / (2 * PHASE_MAX) + p->Tempo;
}

int evaluate(const Board *b, const EvalTables *t)
{
    return eval_impl(b, t, NULL, NULL);
}

int eval_trace(const Board *b, const EvalTables *t, double *coef)
{
    static _Thread_local Coefs tr;
    memset(&tr, 0, sizeof tr);
    int phase;
    int v = eval_impl(b, t, &tr, &phase);
    for (int i = 0; i < PARAM_TOTAL; i++)
        coef[i] = (tr.mg[i] * phase + tr.eg[i] * (PHASE_MAX - phase)) / PHASE_MAX;
    coef[PARAM_Tempo] += 1;
    return v;
}

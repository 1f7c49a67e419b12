/*
 * search.c - iterative deepening PVS, following the seed documents.
 *
 * A reader can find each seed idea by its step name:
 *   root       iterative deepening, aspiration windows, root moves re-sorted
 *              by score each iteration, PV written back to the hash table
 *   Step 1     repetition and the 120-ply rule through the rules module
 *   Step 2     mate-distance pruning
 *   Step 3     transposition table cut-offs (two bounds per entry)
 *   Step 4     static evaluation
 *   Step 5     razoring
 *   Step 6     null move: the guards of seed 001, adaptive R (Heinz),
 *              verified null move (Tabibi-Netanyahu), seed 003's depth-1
 *              verification at small depths, double null move (Fruit),
 *              the mate-threat flag and memory
 *   Step 7     internal iterative deepening
 *   Step 8     move loop: ordering (hash move, mating killer, captures
 *              MVV/LVA, killers, history), check and mate-threat
 *              extensions, futility pruning, history pruning / LMR with
 *              re-search, PVS with fail-soft
 *   Step 9     mate/stalemate, hash store, killers and history
 *   quiesce    captures, quiet checks at the first plies, full evasions,
 *              delta pruning
 */
#include "search.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval.h"
#include "movegen.h"
#include "rules.h"
#include "tt.h"

enum { MAX_DEPTH = 100, HISTORY_SCALE = 16384, HISTORY_MAX = 1 << 20 };

typedef struct {
    int static_eval;
    bool null_move;   /* the move into this ply was a null move */
    Move killers[2];
    Move mate_killer; /* a quiet move that refuted with a mate score */
} Ply;

struct Engine {
    Params params;
    EvalTables eval;
    TT tt;
    atomic_bool stop;
    atomic_bool pondering;
    _Atomic int64_t start_ms;
    int64_t soft_ms, hard_ms; /* 0: none */
    uint64_t nodes, node_limit;
    int seldepth;
    bool aborted;
    Board b;
    Ply ply[MAX_PLY + 1];
    int history[16][SQUARES];      /* ordering: depth^2 rewards */
    uint16_t hist_hit[16][SQUARES]; /* history pruning: Fruit's success counts */
    uint16_t hist_tot[16][SQUARES];
    Move pv[MAX_PLY][MAX_PLY];
    int pv_length[MAX_PLY];
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

Engine *engine_new(void)
{
    Engine *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    tables_init();
    if (tt_resize(&e->tt, TT_DEFAULT_MB) != 0) {
        free(e);
        return NULL;
    }
    atomic_init(&e->stop, false);
    atomic_init(&e->pondering, false);
    params_default(&e->params);
    eval_init(&e->eval, &e->params);
    return e;
}

void engine_destroy(Engine **e)
{
    if (!e || !*e)
        return;
    tt_free(&(*e)->tt);
    free(*e);
    *e = NULL;
}

int engine_set_hash(Engine *e, size_t mb)
{
    return tt_resize(&e->tt, mb);
}

void engine_set_params(Engine *e, const Params *p)
{
    e->params = *p;
    eval_init(&e->eval, &e->params); /* the post-update hook */
}

const Params *engine_params(const Engine *e)
{
    return &e->params;
}

void engine_clear(Engine *e)
{
    tt_clear(&e->tt);
    memset(e->ply, 0, sizeof e->ply);
    memset(e->history, 0, sizeof e->history);
    memset(e->hist_hit, 0, sizeof e->hist_hit);
    memset(e->hist_tot, 0, sizeof e->hist_tot);
}

void engine_stop(Engine *e)
{
    atomic_store(&e->stop, true);
}

void engine_reset_stop(Engine *e)
{
    atomic_store(&e->stop, false);
}

void engine_ponderhit(Engine *e)
{
    atomic_store(&e->start_ms, now_ms());
    atomic_store(&e->pondering, false);
}

void search_limits_init(SearchLimits *l)
{
    memset(l, 0, sizeof *l);
    l->time[RED] = l->time[BLACK] = -1;
    l->overhead = 10;
}

void search_score_text(int score, char *out, size_t len)
{
    if (score >= MATE_BOUND)
        snprintf(out, len, "mate %d", (MATE - score + 1) / 2);
    else if (score <= -MATE_BOUND)
        snprintf(out, len, "mate -%d", (MATE + score) / 2);
    else
        snprintf(out, len, "cp %d", score);
}

/* Sets soft (don't start another iteration) and hard (abort) time limits. */
static void plan_time(Engine *e, const SearchLimits *l, int side)
{
    e->soft_ms = e->hard_ms = 0;
    if (l->infinite)
        return;
    if (l->movetime > 0) {
        int64_t t = l->movetime - l->overhead;
        e->soft_ms = e->hard_ms = t > 1 ? t : 1;
    } else if (l->time[side] >= 0) {
        int64_t left = l->time[side] - l->overhead;
        if (left < 1)
            left = 1;
        int mtg = l->movestogo > 0 && l->movestogo < 30 ? l->movestogo : 30;
        int64_t soft = left / mtg + l->inc[side] * 3 / 4;
        int64_t hard = soft * 4 < left / 3 ? soft * 4 : left / 3;
        if (soft > hard)
            soft = hard;
        e->soft_ms = soft > 1 ? soft : 1;
        e->hard_ms = hard > 1 ? hard : 1;
    }
}

static bool out_of_budget(Engine *e)
{
    if (atomic_load_explicit(&e->stop, memory_order_relaxed))
        return true;
    if (e->node_limit && e->nodes >= e->node_limit)
        return true;
    if (e->hard_ms && (e->nodes & 1023) == 0 && !atomic_load(&e->pondering))
        return now_ms() - atomic_load(&e->start_ms) >= e->hard_ms;
    return false;
}

/* ---- move ordering ---- */

enum {
    ORDER_HASH = 1 << 30,
    ORDER_MATE_KILLER = 1 << 29,
    ORDER_CAPTURE = 1 << 26,
    ORDER_KILLER = 1 << 25
};
static const int ORDER_VALUE[PIECE_TYPES] = { 0, 60, 2, 2, 4, 9, 5, 1 };

static void score_moves(const Engine *e, MoveList *list, Move hash_move, int ply)
{
    const Board *b = &e->b;
    const Ply *p = &e->ply[ply];
    for (int i = 0; i < list->count; i++) {
        Move m = list->moves[i];
        int mover = b->squares[move_from(m)], victim = b->squares[move_to(m)];
        int s;
        if (m == hash_move)
            s = ORDER_HASH;
        else if (m == p->mate_killer)
            s = ORDER_MATE_KILLER; /* seed 003: a killer that mates goes before the captures */
        else if (victim)
            s = ORDER_CAPTURE + ORDER_VALUE[piece_type(victim)] * 64 - ORDER_VALUE[piece_type(mover)];
        else if (m == p->killers[0])
            s = ORDER_KILLER + 1;
        else if (m == p->killers[1])
            s = ORDER_KILLER;
        else
            s = e->history[mover][move_to(m)];
        list->scores[i] = s;
    }
}

/* Swaps the best remaining move to position i and returns it. */
static Move pick_move(MoveList *list, int i)
{
    int best = i;
    for (int j = i + 1; j < list->count; j++)
        if (list->scores[j] > list->scores[best])
            best = j;
    Move m = list->moves[best];
    int s = list->scores[best];
    list->moves[best] = list->moves[i];
    list->scores[best] = list->scores[i];
    list->moves[i] = m;
    list->scores[i] = s;
    return m;
}

static void update_pv(Engine *e, int ply, Move m)
{
    e->pv[ply][ply] = m;
    for (int i = ply + 1; i < e->pv_length[ply + 1]; i++)
        e->pv[ply][i] = e->pv[ply + 1][i];
    e->pv_length[ply] = e->pv_length[ply + 1] > ply + 1 ? e->pv_length[ply + 1] : ply + 1;
}

/* Fruit's history statistics: how often a quiet move that was tried produced the cut-off. */
static void history_tried(Engine *e, int piece, int to, bool good)
{
    if (e->hist_tot[piece][to] >= 65000) {
        e->hist_hit[piece][to] /= 2;
        e->hist_tot[piece][to] /= 2;
    }
    e->hist_tot[piece][to]++;
    e->hist_hit[piece][to] += good;
}

static int history_rate(const Engine *e, int piece, int to)
{
    return (e->hist_hit[piece][to] + 1) * HISTORY_SCALE / (e->hist_tot[piece][to] + 1);
}

static void reward_cutoff(Engine *e, Move m, int depth, int ply, int score, const Move *tried, int n_tried)
{
    int mover = e->b.squares[move_from(m)];
    Ply *p = &e->ply[ply];
    if (score >= MATE_BOUND)
        p->mate_killer = m;
    if (p->killers[0] != m) {
        p->killers[1] = p->killers[0];
        p->killers[0] = m;
    }
    int *h = &e->history[mover][move_to(m)];
    *h += depth * depth;
    if (*h > HISTORY_MAX)
        for (int pc = 0; pc < 16; pc++)
            for (int sq = 0; sq < SQUARES; sq++)
                e->history[pc][sq] /= 2;
    history_tried(e, mover, move_to(m), true);
    for (int i = 0; i < n_tried; i++)
        if (tried[i] != m)
            history_tried(e, e->b.squares[move_from(tried[i])], move_to(tried[i]), false);
}

/* Score of a repeated position for the side to move, or 1 when none. */
static int repetition_score(const Board *b, int ply)
{
    switch (rules_repetition(b, 2)) {
    case REP_DRAW: return 0;
    case REP_WIN: return BAN - ply;
    case REP_LOSS: return -(BAN - ply);
    case REP_NONE: break;
    }
    return 1;
}

/* Rooks, horses, cannons and advisors/elephants of one side: Heinz's "pieces". */
static int piece_count(const Board *b, int color)
{
    return b->count[color][ROOK] + b->count[color][HORSE] + b->count[color][CANNON]
         + b->count[color][ADVISOR] + b->count[color][ELEPHANT];
}

/* Counts a node at ply and resets its PV; false when the search must stop. */
static inline bool enter_node(Engine *e, int ply)
{
    e->pv_length[ply] = ply;
    if (out_of_budget(e))
        return false;
    e->nodes++;
    if (ply > e->seldepth)
        e->seldepth = ply;
    return true;
}

/* ---- quiescence ---- */

static int quiesce(Engine *e, int alpha, int beta, int ply, int qply)
{
    Board *b = &e->b;
    const Params *p = &e->params;
    if (!enter_node(e, ply)) {
        e->aborted = true;
        return 0;
    }
    if (ply >= MAX_PLY - 1)
        return evaluate(b, &e->eval);

    bool in_check = board_in_check(b);
    int best = -MATE + ply, stand = 0;
    MoveList list;
    list.count = 0;
    if (in_check) {
        /* Full evasions: every legal move. */
        int rep = repetition_score(b, ply);
        if (rep != 1)
            return rep;
        movegen_pseudo(b, &list, GEN_ALL);
    } else {
        stand = best = evaluate(b, &e->eval);
        if (best >= beta)
            return best;
        if (best > alpha)
            alpha = best;
        movegen_pseudo(b, &list, GEN_CAPTURES);
        if (qply < p->QsCheckPlies) {
            MoveList checks;
            movegen_quiet_checks(b, &checks);
            for (int i = 0; i < checks.count; i++)
                list.moves[list.count++] = checks.moves[i];
        }
    }
    score_moves(e, &list, MOVE_NONE, ply);
    for (int i = 0; i < list.count; i++) {
        Move m = pick_move(&list, i);
        int victim = b->squares[move_to(m)];
        /* Delta pruning: even winning this piece cannot lift the score to alpha. */
        if (!in_check && victim && p->DeltaPruning
            && stand + eval_piece_value(&e->eval, piece_type(victim)) + p->DeltaMargin <= alpha)
            continue;
        if (!board_legal(b, m))
            continue;
        board_make(b, m);
        int score = -quiesce(e, -beta, -alpha, ply + 1, qply + 1);
        board_unmake(b);
        if (e->aborted)
            return 0;
        if (score > best) {
            best = score;
            if (score > alpha) {
                alpha = score;
                update_pv(e, ply, m);
                if (score >= beta)
                    break;
            }
        }
    }
    return best;
}

/* ---- the main search ---- */

static int null_reduction(const Engine *e, int depth)
{
    const Params *p = &e->params;
    if (!p->NullAdaptive)
        return p->NullR;
    if (depth <= p->NullAdaptLowDepth)
        return 2;
    if (depth > p->NullAdaptHighDepth)
        return 3;
    int us = e->b.side;
    return piece_count(&e->b, us) >= p->NullAdaptPieces && piece_count(&e->b, us ^ 1) >= p->NullAdaptPieces
         ? 3 : 2;
}

static int futility_margin(const Params *p, int depth)
{
    return depth <= 1 ? p->FutilityMargin1 : depth == 2 ? p->FutilityMargin2 : p->FutilityMargin3;
}

/*
 * verify: null moves in this subtree are verified (Tabibi-Netanyahu); a
 * verification search runs with it off.  no_null: this node itself is a
 * verification re-search and must not try a null move.
 */
static int search(Engine *e, int alpha, int beta, int depth, int ply, bool pv_node, bool verify, bool no_null)
{
    Board *b = &e->b;
    const Params *p = &e->params;
    if (depth <= 0)
        return quiesce(e, alpha, beta, ply, 0);
    if (!enter_node(e, ply)) {
        e->aborted = true;
        return 0;
    }

    /* Step 1: repetition and the 120-ply rule, through the rules module. */
    int rep = repetition_score(b, ply);
    if (rep != 1)
        return rep;
    if (board_state(b)->rule60 >= RULE_NO_CAPTURE_PLIES)
        return movegen_count_legal(b) ? 0 : -MATE + ply;
    if (ply >= MAX_PLY - 1)
        return evaluate(b, &e->eval);

    /* Step 2: mate-distance pruning. */
    if (alpha < -MATE + ply)
        alpha = -MATE + ply;
    if (beta > MATE - ply - 1)
        beta = MATE - ply - 1;
    if (alpha >= beta)
        return alpha;

    /* Step 3: the transposition table; its bounds cut at non-PV nodes. */
    uint64_t key = board_key(b);
    TTProbe tp = tt_probe(&e->tt, key, ply);
    if (!pv_node) {
        if (tp.lower_depth >= depth && tp.lower >= beta)
            return tp.lower;
        if (tp.upper_depth >= depth && tp.upper <= alpha)
            return tp.upper;
    }

    /* Step 4: static evaluation. */
    bool in_check = board_in_check(b);
    Ply *here = &e->ply[ply];
    int eval = here->static_eval = in_check ? -INF : evaluate(b, &e->eval);
    e->ply[ply + 1].killers[0] = e->ply[ply + 1].killers[1] = MOVE_NONE;
    e->ply[ply + 1].mate_killer = MOVE_NONE;

    /* Step 5: razoring: hopeless at the frontier, unless quiescence finds something. */
    if (p->Razoring && !pv_node && !in_check && depth <= 2 && eval + p->RazorMargin * depth <= alpha) {
        int v = quiesce(e, alpha, alpha + 1, ply, 0);
        if (e->aborted)
            return 0;
        if (v <= alpha)
            return v;
    }

    /* Step 6: null move. */
    bool mate_threat = false;
    int R = null_reduction(e, depth);
    bool after_null = here->null_move;
    bool double_null = after_null && ply >= 2 && e->ply[ply - 1].null_move;
    if (p->NullMove && !pv_node && !no_null && !in_check && depth >= 2      /* guards 2, 3, 5 */
        && beta > -MATE_BOUND && beta < MATE_BOUND
        && board_has_attackers(b, b->side)                               /* guard 1 */
        && (!after_null || (p->NullDouble && !double_null))              /* guard 4 */
        && !tp.mate_threat                                               /* guard 6 */
        && (!p->NullEvalGuard || eval >= beta || depth - R - 1 <= 0)     /* guard 7 */
        && !(tp.upper_depth >= depth - R - 1 && tp.upper < beta)) {      /* guard 8 */
        board_make_null(b);
        e->ply[ply + 1].null_move = true;
        int v = -search(e, -beta, -beta + 1, depth - R - 1, ply + 1, false, verify, false);
        e->ply[ply + 1].null_move = false;
        board_unmake_null(b);
        if (e->aborted)
            return 0;
        if (v >= beta) {
            if (v >= MATE_BOUND)
                v = beta; /* an unproven mate */
            if (p->NullVerify && verify) {
                /* Tabibi-Netanyahu: search this node shallower, verification off below. */
                v = search(e, alpha, beta, depth - p->NullVerifyReduction, ply, false, false, true);
            } else if (depth <= p->NullSmallVerify) {
                /* Seed 003: a depth-1 check so that a mate in one is not pruned away. */
                v = search(e, beta - 1, beta, 1, ply, false, verify, true);
            }
            if (e->aborted)
                return 0;
            if (v >= beta) {
                if (p->NullStoreTT)
                    tt_store(&e->tt, key, depth, ply, MOVE_NONE, v, beta - 1, beta);
                return v;
            }
        } else if (v <= -MATE_BOUND) {
            /* Passing gets us mated: a mate threat (seed 001). */
            mate_threat = true;
            tt_mark_mate_threat(&e->tt, key);
        }
    }
    int threat_extension = mate_threat && p->NullMateThreat ? 1 : 0;

    /* Step 7: internal iterative deepening when there is no hash move. */
    Move hash_move = tp.move;
    if (!hash_move && depth >= p->IIDDepth && (pv_node || eval + 100 >= beta)) {
        search(e, alpha, beta, depth - p->IIDReduction, ply, pv_node, verify, true);
        if (e->aborted)
            return 0;
        hash_move = tt_probe(&e->tt, key, ply).move;
    }

    /* Step 8: the move loop. */
    MoveList list;
    list.count = 0;
    movegen_pseudo(b, &list, GEN_ALL);
    score_moves(e, &list, hash_move, ply);

    int futile = eval + futility_margin(p, depth);
    bool can_futile = p->Futility && !pv_node && !in_check && depth <= 3 && eval > -MATE_BOUND;
    int best = -INF, legal = 0, old_alpha = alpha, n_quiets = 0;
    Move best_move = MOVE_NONE;
    Move quiets[MAX_MOVES];
    for (int i = 0; i < list.count; i++) {
        Move m = pick_move(&list, i);
        if (!board_legal(b, m))
            continue;
        legal++;
        int mover = b->squares[move_from(m)];
        bool quiet = b->squares[move_to(m)] == EMPTY;
        bool special = m == hash_move || m == here->killers[0] || m == here->killers[1] || m == here->mate_killer;
        /* Futility: a quiet move at the frontier that cannot reach alpha (not when our king is attacked). */
        if (can_futile && quiet && legal > 1 && futile <= alpha && !board_gives_check(b, m)) {
            if (futile > best)
                best = futile;
            continue;
        }
        board_make(b, m);
        bool gives_check = board_in_check(b);
        int ext = (gives_check && p->CheckExtension && ply < 2 * MAX_DEPTH / 3) || threat_extension;
        int new_depth = depth - 1 + ext;
        /* History pruning / LMR: late quiet moves that rarely cut are searched shallower. */
        int reduction = 0;
        if (p->HistoryPruning && depth >= p->LmrMinDepth && legal > p->LmrMinMoves && quiet && !special
            && !in_check && !gives_check && !ext
            && history_rate(e, mover, move_to(m)) < p->HistoryThreshold) {
            reduction = 1 + (!pv_node && legal > p->LmrExtraMoves);
            if (reduction >= new_depth)
                reduction = new_depth - 1 > 0 ? new_depth - 1 : 0;
        }
        int score;
        if (legal == 1) {
            score = -search(e, -beta, -alpha, new_depth, ply + 1, pv_node, verify, false);
        } else {
            score = -search(e, -alpha - 1, -alpha, new_depth - reduction, ply + 1, false, verify, false);
            if (reduction && score > alpha && !e->aborted) /* a reduced move failed high: re-search */
                score = -search(e, -alpha - 1, -alpha, new_depth, ply + 1, false, verify, false);
            if (pv_node && score > alpha && score < beta && !e->aborted)
                score = -search(e, -beta, -alpha, new_depth, ply + 1, true, verify, false);
        }
        board_unmake(b);
        if (e->aborted)
            return 0;
        if (quiet)
            quiets[n_quiets++] = m;
        if (score > best) {
            best = score;
            best_move = m;
            if (score > alpha) {
                alpha = score;
                update_pv(e, ply, m);
                if (score >= beta) {
                    if (quiet)
                        reward_cutoff(e, m, depth, ply, score, quiets, n_quiets);
                    break;
                }
            }
        }
    }

    /* Step 9: no legal move loses (mate and stalemate); store and return. */
    if (!legal)
        return -MATE + ply;
    if (best_move == MOVE_NONE) /* every move was pruned by futility */
        return best;
    tt_store(&e->tt, key, depth, ply, best_move, best, old_alpha, beta);
    return best;
}

/* ---- the root ---- */

typedef struct {
    Move move;
    int score;
} RootMove;

static bool banned(const SearchLimits *l, Move m)
{
    for (int i = 0; i < l->banned_count; i++)
        if (l->banned[i] == m)
            return true;
    return false;
}

/* Stable insertion sort of the root moves by their last scores, best first. */
static void sort_root(RootMove *moves, int n)
{
    for (int i = 1; i < n; i++) {
        RootMove r = moves[i];
        int j = i - 1;
        while (j >= 0 && moves[j].score < r.score) {
            moves[j + 1] = moves[j];
            j--;
        }
        moves[j + 1] = r;
    }
}

static void report_iteration(Engine *e, int depth, int score, SearchReport report, void *ctx)
{
    if (!report)
        return;
    SearchInfo info;
    info.depth = depth;
    info.seldepth = e->seldepth;
    info.score = score;
    info.nodes = e->nodes;
    info.time_ms = now_ms() - atomic_load(&e->start_ms);
    info.hashfull = tt_hashfull(&e->tt);
    info.pv_length = e->pv_length[0];
    memcpy(info.pv, e->pv[0], sizeof(Move) * (size_t)info.pv_length);
    report(ctx, &info);
}

/* Writes the PV back into the hash table so the next iteration follows it (seed 003). */
static void store_pv(Engine *e, int depth, int score)
{
    Board *b = &e->b;
    int n = 0;
    for (; n < e->pv_length[0] && movegen_is_legal(b, e->pv[0][n]); n++) {
        tt_store(&e->tt, board_key(b), depth - n > 0 ? depth - n : 0, n, e->pv[0][n],
                 n % 2 ? -score : score, -INF, INF);
        board_make(b, e->pv[0][n]);
    }
    while (n-- > 0)
        board_unmake(b);
}

/* One pass over the root moves with window (alpha, beta); returns the best score. */
static int search_root(Engine *e, RootMove *moves, int n, int depth, int alpha, int beta, SearchResult *out)
{
    int best = -INF;
    for (int i = 0; i < n; i++) {
        Move m = moves[i].move;
        board_make(&e->b, m);
        int new_depth = depth - 1 + (board_in_check(&e->b) && e->params.CheckExtension);
        int score;
        if (i == 0) {
            score = -search(e, -beta, -alpha, new_depth, 1, true, true, false);
        } else {
            score = -search(e, -alpha - 1, -alpha, new_depth, 1, false, true, false);
            if (score > alpha && score < beta && !e->aborted)
                score = -search(e, -beta, -alpha, new_depth, 1, true, true, false);
        }
        board_unmake(&e->b);
        if (e->aborted)
            break;
        moves[i].score = score > alpha || i == 0 ? score : -INF + depth;
        if (score > best) {
            best = score;
            if (score > alpha) {
                update_pv(e, 0, m);
                out->best = m;
                out->ponder = e->pv_length[0] > 1 ? e->pv[0][1] : MOVE_NONE;
                out->score = score;
                alpha = score;
                if (score >= beta)
                    break;
            }
        }
    }
    return best;
}

void engine_search(Engine *e, const Board *root, const SearchLimits *limits,
                   SearchReport report, void *ctx, SearchResult *out)
{
    atomic_store(&e->start_ms, now_ms());
    atomic_store(&e->pondering, limits->ponder);
    e->b = *root;
    e->nodes = 0;
    e->node_limit = limits->nodes;
    e->aborted = false;
    e->seldepth = 0;
    plan_time(e, limits, root->side);
    tt_new_search(&e->tt);
    memset(e->ply, 0, sizeof e->ply);
    memset(out, 0, sizeof *out);

    RootMove moves[MAX_MOVES];
    int n = 0;
    MoveList list;
    movegen_legal(&e->b, &list);
    for (int i = 0; i < list.count; i++)
        if (!banned(limits, list.moves[i]))
            moves[n++] = (RootMove){ list.moves[i], 0 };
    if (n > 0) {
        out->best = moves[0].move;
        TTProbe tp = tt_probe(&e->tt, board_key(&e->b), 0);
        for (int i = 0; i < n; i++)
            if (moves[i].move == tp.move)
                moves[i].score = 1;
        sort_root(moves, n);
    }

    int max_depth = limits->depth > 0 && limits->depth < MAX_DEPTH ? limits->depth : MAX_DEPTH;
    int last = 0;
    for (int depth = 1; depth <= max_depth && n > 0; depth++) {
        /* Aspiration window around the last score once the iterations settle. */
        int window = e->params.AspirationWindow;
        int alpha = -INF, beta = INF;
        if (depth >= 4 && last > -MATE_BOUND && last < MATE_BOUND) {
            alpha = last - window;
            beta = last + window;
        }
        int best;
        for (;;) {
            e->pv_length[0] = 0;
            best = search_root(e, moves, n, depth, alpha, beta, out);
            if (e->aborted)
                break;
            sort_root(moves, n);
            if (best <= alpha) {
                beta = (alpha + beta) / 2;
                alpha = best - window > -INF ? best - window : -INF;
            } else if (best >= beta) {
                beta = best + window < INF ? best + window : INF;
            } else {
                break;
            }
            window *= 2;
        }
        if (e->aborted)
            break;
        last = best;
        out->depth = depth;
        out->score = best;
        store_pv(e, depth, best);
        report_iteration(e, depth, best, report, ctx);
        if (best >= MATE_BOUND && MATE - best <= depth && !limits->infinite && !atomic_load(&e->pondering))
            break;
        if (e->soft_ms && !atomic_load(&e->pondering)
            && now_ms() - atomic_load(&e->start_ms) > e->soft_ms / 2)
            break;
    }
    out->nodes = e->nodes;

    /* Under "go infinite" and while pondering the answer waits for stop (or ponderhit). */
    while ((limits->infinite || atomic_load(&e->pondering)) && !atomic_load(&e->stop)) {
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
}

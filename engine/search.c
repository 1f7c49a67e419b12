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

enum { MAX_DEPTH = 100 };

struct Engine {
    TT tt;
    atomic_bool stop;
    atomic_bool pondering;
    _Atomic int64_t start_ms;
    int64_t soft_ms, hard_ms; /* 0: none */
    uint64_t nodes, node_limit;
    int seldepth;
    bool aborted;
    Board b;
    Move killers[MAX_PLY][2];
    int history[16][SQUARES];
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

void engine_clear(Engine *e)
{
    tt_clear(&e->tt);
    memset(e->killers, 0, sizeof e->killers);
    memset(e->history, 0, sizeof e->history);
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

/* Move ordering values. */
enum { ORDER_HASH = 1 << 30, ORDER_CAPTURE = 1 << 24, ORDER_KILLER = 1 << 22 };
static const int ORDER_VALUE[PIECE_TYPES] = { 0, 60, 2, 2, 4, 9, 5, 1 };

static void score_moves(const Engine *e, MoveList *list, Move hash_move, int ply)
{
    const Board *b = &e->b;
    for (int i = 0; i < list->count; i++) {
        Move m = list->moves[i];
        int mover = b->squares[move_from(m)], victim = b->squares[move_to(m)];
        int s;
        if (m == hash_move)
            s = ORDER_HASH;
        else if (victim)
            s = ORDER_CAPTURE + ORDER_VALUE[piece_type(victim)] * 64 - ORDER_VALUE[piece_type(mover)];
        else if (m == e->killers[ply][0])
            s = ORDER_KILLER + 1;
        else if (m == e->killers[ply][1])
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

static void reward_quiet(Engine *e, Move m, int depth, int ply)
{
    int mover = e->b.squares[move_from(m)];
    if (e->killers[ply][0] != m) {
        e->killers[ply][1] = e->killers[ply][0];
        e->killers[ply][0] = m;
    }
    int *h = &e->history[mover][move_to(m)];
    *h += depth * depth;
    if (*h > ORDER_KILLER / 2) {
        for (int p = 0; p < 16; p++)
            for (int sq = 0; sq < SQUARES; sq++)
                e->history[p][sq] /= 2;
    }
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

static int quiesce(Engine *e, int alpha, int beta, int ply)
{
    Board *b = &e->b;
    e->pv_length[ply] = ply;
    if (out_of_budget(e)) {
        e->aborted = true;
        return 0;
    }
    e->nodes++;
    if (ply > e->seldepth)
        e->seldepth = ply;
    if (ply >= MAX_PLY - 1)
        return evaluate(b);

    bool in_check = board_in_check(b);
    int best = -MATE + ply;
    MoveList list;
    list.count = 0;
    if (in_check) {
        int rep = repetition_score(b, ply);
        if (rep != 1)
            return rep;
        movegen_pseudo(b, &list, GEN_ALL);
    } else {
        best = evaluate(b);
        if (best >= beta)
            return best;
        if (best > alpha)
            alpha = best;
        movegen_pseudo(b, &list, GEN_CAPTURES);
    }
    score_moves(e, &list, MOVE_NONE, ply);
    for (int i = 0; i < list.count; i++) {
        Move m = pick_move(&list, i);
        if (!board_legal(b, m))
            continue;
        board_make(b, m);
        int score = -quiesce(e, -beta, -alpha, ply + 1);
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

static int search(Engine *e, int alpha, int beta, int depth, int ply, bool pv_node)
{
    Board *b = &e->b;
    if (depth <= 0)
        return quiesce(e, alpha, beta, ply);
    e->pv_length[ply] = ply;
    if (out_of_budget(e)) {
        e->aborted = true;
        return 0;
    }
    e->nodes++;
    if (ply > e->seldepth)
        e->seldepth = ply;

    /* Repetition and the 120-ply rule, through the rules module. */
    int rep = repetition_score(b, ply);
    if (rep != 1)
        return rep;
    if (board_state(b)->rule60 >= RULE_NO_CAPTURE_PLIES)
        return movegen_count_legal(b) ? 0 : -MATE + ply;
    if (ply >= MAX_PLY - 1)
        return evaluate(b);

    /* Mate-distance pruning. */
    if (alpha < -MATE + ply)
        alpha = -MATE + ply;
    if (beta > MATE - ply - 1)
        beta = MATE - ply - 1;
    if (alpha >= beta)
        return alpha;

    uint64_t key = board_key(b);
    TTProbe tp = tt_probe(&e->tt, key, ply);
    if (!pv_node) {
        if (tp.lower_depth >= depth && tp.lower >= beta)
            return tp.lower;
        if (tp.upper_depth >= depth && tp.upper <= alpha)
            return tp.upper;
    }

    bool in_check = board_in_check(b);
    MoveList list;
    list.count = 0;
    movegen_pseudo(b, &list, GEN_ALL);
    score_moves(e, &list, tp.move, ply);

    int best = -INF, legal = 0, old_alpha = alpha;
    Move best_move = MOVE_NONE;
    for (int i = 0; i < list.count; i++) {
        Move m = pick_move(&list, i);
        if (!board_legal(b, m))
            continue;
        legal++;
        bool quiet = b->squares[move_to(m)] == EMPTY;
        board_make(b, m);
        int new_depth = depth - 1 + (board_in_check(b) && ply < 2 * MAX_DEPTH / 3); /* check extension */
        int score;
        if (legal == 1) {
            score = -search(e, -beta, -alpha, new_depth, ply + 1, pv_node);
        } else {
            score = -search(e, -alpha - 1, -alpha, new_depth, ply + 1, false);
            if (score > alpha && score < beta && !e->aborted)
                score = -search(e, -beta, -alpha, new_depth, ply + 1, true);
        }
        board_unmake(b);
        if (e->aborted)
            return 0;
        if (score > best) {
            best = score;
            best_move = m;
            if (score > alpha) {
                alpha = score;
                update_pv(e, ply, m);
                if (score >= beta) {
                    if (quiet && !in_check)
                        reward_quiet(e, m, depth, ply);
                    break;
                }
            }
        }
    }
    if (!legal)
        return -MATE + ply; /* mate or stalemate: both lose */
    tt_store(&e->tt, key, depth, ply, best_move, best, old_alpha, beta);
    return best;
}

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
    memset(e->killers, 0, sizeof e->killers);
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
    for (int depth = 1; depth <= max_depth && n > 0; depth++) {
        int alpha = -INF, beta = INF, best = -INF;
        e->pv_length[0] = 0;
        for (int i = 0; i < n; i++) {
            Move m = moves[i].move;
            board_make(&e->b, m);
            int new_depth = depth - 1 + board_in_check(&e->b);
            int score;
            if (i == 0) {
                score = -search(e, -beta, -alpha, new_depth, 1, true);
            } else {
                score = -search(e, -alpha - 1, -alpha, new_depth, 1, false);
                if (score > alpha && !e->aborted)
                    score = -search(e, -beta, -alpha, new_depth, 1, true);
            }
            board_unmake(&e->b);
            if (e->aborted)
                break;
            moves[i].score = score > alpha || i == 0 ? score : -INF + depth;
            if (score > best) {
                best = score;
                alpha = score;
                update_pv(e, 0, m);
                out->best = m;
                out->ponder = e->pv_length[0] > 1 ? e->pv[0][1] : MOVE_NONE;
                out->score = score;
            }
        }
        if (e->aborted)
            break;
        out->depth = depth;
        sort_root(moves, n);
        tt_store(&e->tt, board_key(&e->b), depth, 0, moves[0].move, best, -INF, INF);
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

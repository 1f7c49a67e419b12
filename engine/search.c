/*
 * search.c - iterative deepening PVS (each technique's source: docs/programs/xqf-engine.md).
 *
 * A reader can find each idea by its step name:
 *   root       iterative deepening, aspiration windows, root moves re-sorted
 *              by score each iteration (Fruit 2.1), PV written back to the
 *              hash table, time management (optimum and maximum time)
 *   Step 1     repetition (perpetual check and chase) and the 120-ply rule
 *   Step 2     mate-distance pruning
 *   Step 3     transposition table cut-offs (two bounds per entry, as Fruit 2.1)
 *   Step 4     static evaluation (from the table when stored; the network's
 *              when the engine has one and UseNNUE is on, see node_eval),
 *              corrected by the correction history of its structure, improving
 *   Step 5     razoring
 *   Step 6     reverse futility pruning
 *   Step 7     null move: the guards of Fruit 2.1 and Crafty, a reduction growing with
 *              depth and eval (or Heinz's adaptive R), verified null move
 *              (Tabibi-Netanyahu) at high depth, a depth-1 verification at
 *              small depths (docs/programs/xqf-engine.md), double null move (Fruit), the
 *              mate-threat flag and memory, the threat a failed pass shows
 *              (its victim's moves reduced less and never pruned)
 *   Step 8     ProbCut
 *   Step 9     internal iterative reduction (or internal iterative deepening, as ElephantEye)
 *   Step 10    move loop: ordering (hash move, mating killer, good
 *              captures by SEE and capture history, killers, counter-move,
 *              quiets by history and continuation history, losing
 *              captures); late-move, futility and SEE pruning; singular,
 *              check and mate-threat extensions; late-move reductions with
 *              Fruit 2.1's history success rate as one input; PVS with
 *              fail-soft
 *   Step 11    mate/stalemate, hash store, history with gravity, the
 *              correction history's update
 *   quiesce    hash table, captures that do not lose by SEE (and those that
 *              check, at the first plies), quiet checks at the first plies,
 *              full evasions, delta pruning
 */
#include "search.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval.h"
#include "movegen.h"
#include "nnue.h"
#include "rules.h"
#include "see.h"
#include "tt.h"

_Static_assert((int)TT_INF == (int)INF && (int)TT_MATE_BOUND == (int)MATE_BOUND, "tt.h and search.h agree on scores");

enum {
    MAX_DEPTH = 100,
    HISTORY_SCALE = 16384,   /* Fruit's success rates are fractions of this */
    HIST_MAX = 16384,        /* every history table stays within +-this (gravity) */
    LMR_DEPTHS = 64,
    LMR_MOVES = 64,
    CONT_PRUNE_LMR_DEPTH = 6,       /* ContHistPrune below this lmr depth (Pikafish's) */
    CAPTURE_FUTILITY_LMR_DEPTH = 11 /* CaptureFutility below this lmr depth (Pikafish's) */
};

/* How a node is searched. */
typedef enum {
    NODE_PV = 1,      /* on the principal variation: exact scores wanted */
    NODE_CUT = 2,     /* expected to fail high */
    NODE_VERIFY = 4,  /* null moves below are verified (Tabibi-Netanyahu) */
    NODE_NO_NULL = 8  /* a verification re-search: no null move at this node */
} NodeFlags;

typedef int16_t ContHist[16][SQUARES];

enum { CORR_SIZE = 16384, CORR_LIMIT = 1024 };

typedef struct {
    int static_eval;     /* -INF when in check */
    bool null_move;      /* the move into this ply was a null move */
    Move move;           /* the move made from this ply */
    ContHist *cont;      /* continuation history of that move (piece, to) */
    Move excluded;       /* singular search: the move left out */
    Move killers[2];
    Move mate_killer;    /* a quiet move that refuted with a mate score */
    int double_ext;      /* double extensions on the path to this ply (SingularDoubleMax) */
} Ply;

struct Engine {
    Params params;
    EvalTables eval;
    NnueNet *net;                   /* the network evaluation; NULL: the hand-crafted one */
    bool net_owned;                 /* false: net is borrowed (the process's default net, a helper's main's) */
    NnueStack *nnue;                /* the net's accumulators along the search line */
    bool use_nnue;                  /* the UseNNUE option: evaluate with the net when there is one */
    bool nnue_on;                   /* this search evaluates with the net */
    TT tt;                          /* the main engine's own table (unused by a helper) */
    TT *table;                      /* the table searched: &tt, or a helper's main engine's */
    /*
     * Lazy SMP (Stockfish's; Dan Homan's "lazy SMP" post, 2013): helper
     * engines search the same root in threads of their own, with their
     * own board, stacks, histories and net accumulators, sharing only the
     * table.  A helper is an Engine with `main` set; it owns no table or
     * net, has no clock, and stops when its main engine tells it to.
     */
    struct Engine *main;            /* NULL for a main engine */
    struct Engine **helpers;        /* Threads - 1 of them */
    int helper_count;
    int thread_id;                  /* 0: the main engine */
    atomic_bool stop;
    atomic_bool pondering;
    _Atomic int64_t start_ms;
    int64_t optimum_ms, maximum_ms; /* 0: none */
    _Atomic uint64_t nodes;         /* read by the main thread while a helper counts */
    uint64_t node_limit;
    int seldepth;
    bool aborted;
    Board b;
    Ply ply[MAX_PLY + 8];          /* from index 6: six sentinels before the root (ContHist46 looks 6 plies back) */
    int16_t history[16][SQUARES];  /* quiet moves by piece and target, with gravity */
    int16_t capture_hist[16][SQUARES][PIECE_TYPES];
    Move counter[16][SQUARES];     /* the reply that refuted a move (piece, to) */
    ContHist cont_hist[16][SQUARES];
    uint16_t hist_hit[16][SQUARES]; /* Fruit 2.1's history pruning: success counts of quiet moves */
    uint16_t hist_tot[16][SQUARES];
    Move pv[MAX_PLY][MAX_PLY];
    int pv_length[MAX_PLY];
    int16_t corr[2][CORR_SIZE];     /* correction history by side and structure key */
    int16_t corr_major[2][2][CORR_SIZE]; /* by side to move, colour and that colour's attacking pieces */
    int lmr[LMR_DEPTHS][LMR_MOVES]; /* reductions in 1/100 ply */
    int previous_score;             /* of the last search in this game, -INF: none */
#ifdef XQF_SEARCH_STATS
    NullStats null_stats;
#endif
};

/*
 * Counting for engine_null_stats, in a stats build only: NULL_STAT adds n
 * to counter[depth] (capped); NULL_COST adds a null search's or a
 * verification's nodes by depth and, when no other is running around it,
 * to the outermost total; NULL_NEST marks one starting (+1) or ending (-1).
 */
#ifdef XQF_SEARCH_STATS
#define NULL_STAT(e, counter, depth, n) \
    ((e)->null_stats.counter[(depth) < NULL_STATS_DEPTHS ? (depth) : NULL_STATS_DEPTHS - 1] += (n))
#define NULL_COST(e, kind, depth, n) \
    (NULL_STAT(e, kind##_cost, depth, n), (e)->null_stats.outer_##kind += (e)->null_stats.nesting ? 0 : (n))
#define NULL_NEST(e, delta) ((e)->null_stats.nesting += (delta))
#else
#define NULL_STAT(e, counter, depth, n) ((void)(n))
#define NULL_COST(e, kind, depth, n) ((void)(n))
#define NULL_NEST(e, delta) ((void)0)
#endif

/* The ply record of ply p (p may be -6 to -1: the sentinels before the root). */
#define PLY(e, p) (&(e)->ply[(p) + 6])

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The post-update hook: tables derived from the parameters. */
static void derive_tables(Engine *e)
{
    const Params *p = &e->params;
    eval_init(&e->eval, p);
    for (int d = 0; d < LMR_DEPTHS; d++)
        for (int m = 0; m < LMR_MOVES; m++)
            e->lmr[d][m] = d && m ? (int)(p->LmrBase + 100.0 * log(d) * log(m) * 100.0 / p->LmrDiv) : 0;
}

static int adopt_net(Engine *e, NnueNet *net, bool owned);
static NnueNet *default_net(void);

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
    e->table = &e->tt;
    atomic_init(&e->stop, false);
    atomic_init(&e->pondering, false);
    params_default(&e->params);
    derive_tables(e);
    e->previous_score = -INF;
    e->use_nnue = true;
    /* The compiled-in net, if any (the build has checked that it loads: engine/CMakeLists.txt). */
    if (nnue_default_data(&(size_t){0})) {
        NnueNet *net = default_net();
        if (!net || adopt_net(e, net, false) != 0) {
            engine_destroy(&e);
            return NULL;
        }
    }
    return e;
}

void engine_destroy(Engine **e)
{
    if (!e || !*e)
        return;
    engine_set_threads(*e, 1);
    tt_free(&(*e)->tt);
    if ((*e)->net_owned)
        nnue_destroy(&(*e)->net);
    nnue_stack_destroy(&(*e)->nnue);
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
    derive_tables(e);
}

const Params *engine_params(const Engine *e)
{
    return &e->params;
}

/*
 * The compiled-in net, parsed once per process and shared read-only by every
 * engine that evaluates with it: a net is never written after it is loaded,
 * and parsing and copying 3.7 MiB for each engine_new made a short-lived
 * engine (a fuzz input, a worker's game) cost milliseconds before its first
 * node.  It lives until the process ends.
 */
static NnueNet *shared_default_net;
static pthread_once_t shared_default_once = PTHREAD_ONCE_INIT;

static void load_default_net(void)
{
    size_t size;
    const uint8_t *data = nnue_default_data(&size);
    char err[256];
    if (data)
        shared_default_net = nnue_load_memory(data, size, err, sizeof err);
}

static NnueNet *default_net(void)
{
    pthread_once(&shared_default_once, load_default_net);
    return shared_default_net;
}

/* Takes net as the engine's (owned: freed with it or when replaced); the table's stored evaluations were the other evaluation's. */
static int adopt_net(Engine *e, NnueNet *net, bool owned)
{
    if (net && !e->nnue && !(e->nnue = nnue_stack_new()))
        return -1;
    if (e->net_owned)
        nnue_destroy(&e->net);
    e->net = net;
    e->net_owned = net && owned;
    engine_clear(e);
    return 0;
}

int engine_set_net(Engine *e, const NnueNet *net)
{
    NnueNet *copy = NULL;
    if (net && !(copy = nnue_clone(net)))
        return -1;
    if (adopt_net(e, copy, true) != 0) {
        nnue_destroy(&copy);
        return -1;
    }
    return 0;
}

int engine_load_net(Engine *e, const char *path, char *err, size_t errlen)
{
    NnueNet *net = nnue_load_file(path, err, errlen);
    if (!net)
        return -1;
    if (adopt_net(e, net, true) != 0) {
        nnue_destroy(&net);
        snprintf(err, errlen, "out of memory for the net's accumulators");
        return -1;
    }
    return 0;
}

const NnueNet *engine_net(const Engine *e)
{
    return e->net;
}

void engine_set_use_nnue(Engine *e, bool on)
{
    if (on != e->use_nnue && e->net)
        engine_clear(e);
    e->use_nnue = on;
}

bool engine_use_nnue(const Engine *e)
{
    return e->use_nnue;
}

void engine_clear(Engine *e)
{
    for (int i = 0; i < e->helper_count; i++)
        engine_clear(e->helpers[i]);
    if (!e->main)
        tt_clear(&e->tt); /* a helper has none of its own */
    memset(e->ply, 0, sizeof e->ply);
    memset(e->history, 0, sizeof e->history);
    memset(e->capture_hist, 0, sizeof e->capture_hist);
    memset(e->counter, 0, sizeof e->counter);
    memset(e->cont_hist, 0, sizeof e->cont_hist);
    memset(e->hist_hit, 0, sizeof e->hist_hit);
    memset(e->hist_tot, 0, sizeof e->hist_tot);
    memset(e->corr, 0, sizeof e->corr);
    memset(e->corr_major, 0, sizeof e->corr_major);
    e->previous_score = -INF;
}

const NullStats *engine_null_stats(const Engine *e)
{
#ifdef XQF_SEARCH_STATS
    return &e->null_stats;
#else
    (void)e;
    return NULL;
#endif
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
    l->multipv = 1;
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

/* ---- time ---- */

static int node_eval(Engine *e, int ply);

/*
 * TmComplexity: how much of its share of the clock this move deserves.
 * Stockfish's time manager (timeman.cpp, 2022-2023) spends a share of
 * the clock that grows with the game's ply, 0.0120 + (ply + 3)^0.45 *
 * 0.0039, instead of a fixed number of moves to go: little in the
 * opening, which the book and the first moves settle, more in the middle
 * game; here its ratio to its value at ply 40, capped at 1.5, scales the
 * TmMovesToGo share.  Stockfish 15.1 (search.cpp) also spent more on a
 * complex position, measured by how far the network's evaluation is from
 * the simple one: min(1 + (complexity - 232) / 1750, 1.5), in its units
 * (a pawn 208); here the complexity is |net - hand-crafted evaluation|
 * at the root, in centipawns, so 110 and 840 (and none without a net).
 */
static double complexity_scale(Engine *e, bool by_ply)
{
    const Board *b = &e->b;
    double scale = 1.0;
    if (by_ply) {
        int ply = 2 * (b->fullmove > 1 ? b->fullmove - 1 : 0) + (b->side == BLACK);
        scale = (0.0120 + pow(ply + 3.0, 0.45) * 0.0039) / (0.0120 + pow(43.0, 0.45) * 0.0039);
        if (scale > 1.5)
            scale = 1.5;
    }
    if (e->nnue_on && !board_in_check(b)) {
        int complexity = abs(node_eval(e, 0) - evaluate(b, &e->eval));
        double c = 1.0 + (complexity - 110) / 840.0;
        scale *= c < 1.5 ? c : 1.5;
    }
    return scale;
}

/*
 * The optimum time (what a move should take; the iterations stop when it
 * is spent, scaled by how settled the search is) and the maximum (the
 * search is aborted there).  The clock is shared over TmMovesToGo moves
 * (or the GUI's movestogo) plus a share of the increment; the maximum is
 * a multiple of the optimum but never more than a share of the clock, so
 * a slow machine or a long iteration cannot lose on time.
 */
static void plan_time(Engine *e, const SearchLimits *l, int side)
{
    const Params *p = &e->params;
    e->optimum_ms = e->maximum_ms = 0;
    if (l->infinite)
        return;
    if (l->movetime > 0) {
        int64_t t = l->movetime - l->overhead;
        e->optimum_ms = e->maximum_ms = t > 1 ? t : 1;
    } else if (l->time[side] >= 0) {
        int64_t left = l->time[side] - l->overhead;
        if (left < 1)
            left = 1;
        int mtg = l->movestogo > 0 && l->movestogo < p->TmMovesToGo ? l->movestogo : p->TmMovesToGo;
        int64_t opt = left / mtg + l->inc[side] * p->TmIncrementShare / 100;
        if (p->TmComplexity)
            opt = (int64_t)((double)opt * complexity_scale(e, l->movestogo <= 0));
        int64_t cap = left * p->TmMaxShare / 1000;
        if (l->movestogo == 1)
            cap = left * 9 / 10;
        int64_t max = opt * p->TmMaxRatio / 100;
        if (max > cap)
            max = cap;
        if (opt > max)
            opt = max;
        e->optimum_ms = opt > 1 ? opt : 1;
        e->maximum_ms = max > 1 ? max : 1;
    }
}

/* The search's root: the board, and the net's accumulators for it when the net evaluates. */
static void set_root(Engine *e, const Board *root)
{
    e->b = *root;
    e->nnue_on = e->net && e->use_nnue;
    if (e->nnue_on)
        nnue_stack_reset(e->nnue, e->net, &e->b);
}

void engine_plan_time(Engine *e, const Board *root, const SearchLimits *limits, int64_t *optimum_ms,
                      int64_t *maximum_ms)
{
    set_root(e, root);
    plan_time(e, limits, root->side);
    *optimum_ms = e->optimum_ms;
    *maximum_ms = e->maximum_ms;
}

static int64_t elapsed_ms(const Engine *e)
{
    return now_ms() - atomic_load(&e->start_ms);
}

/* Nodes searched by the engine and its helpers. */
static uint64_t total_nodes(const Engine *e)
{
    uint64_t n = atomic_load_explicit(&((Engine *)e)->nodes, memory_order_relaxed);
    for (int i = 0; i < e->helper_count; i++)
        n += atomic_load_explicit(&e->helpers[i]->nodes, memory_order_relaxed);
    return n;
}

static bool out_of_budget(Engine *e)
{
    if (atomic_load_explicit(&e->stop, memory_order_relaxed))
        return true;
    uint64_t nodes = atomic_load_explicit(&e->nodes, memory_order_relaxed);
    if (e->node_limit && nodes >= e->node_limit)
        return true;
    if (e->maximum_ms && (nodes & 1023) == 0 && !atomic_load(&e->pondering))
        return elapsed_ms(e) >= e->maximum_ms;
    return false;
}

/* ---- scores ---- */

/* A perpetual check or chase judged inside the tree: true of this path only. */
static inline bool is_ban(int v)
{
    return (v >= BAN - MAX_PLY && v <= BAN) || (v <= -(BAN - MAX_PLY) && v >= -BAN);
}

static inline bool is_decisive(int v)
{
    return v >= BAN - MAX_PLY || v <= -(BAN - MAX_PLY);
}

/* ---- history ---- */

static int history_bonus(const Params *p, int depth)
{
    int b = p->HistBonusMul * depth - p->HistBonusBase;
    return b < 0 ? 0 : b > p->HistBonusMax ? p->HistBonusMax : b;
}

/* Gravity: an entry moves towards +-HIST_MAX ever more slowly, and falls back on a malus. */
static inline void gravity(int16_t *h, int bonus)
{
    int v = *h + bonus - *h * abs(bonus) / HIST_MAX;
    *h = (int16_t)(v > HIST_MAX ? HIST_MAX : v < -HIST_MAX ? -HIST_MAX : v);
}

/*
 * The continuation history of a quiet move at ply: the moves one and two
 * plies back, and with ContHist46 (Stockfish search.cpp's contHist[3] and
 * [5]) four and six plies back as well.
 */
static int cont_history(const Engine *e, int ply, int piece, int to)
{
    int h = (*PLY(e, ply - 1)->cont)[piece][to] + (*PLY(e, ply - 2)->cont)[piece][to];
    if (e->params.ContHist46)
        h += (*PLY(e, ply - 4)->cont)[piece][to] + (*PLY(e, ply - 6)->cont)[piece][to];
    return h;
}

/* History of a quiet move at ply: the piece-to table and the continuations. */
static int quiet_history(const Engine *e, int ply, int piece, int to)
{
    return e->history[piece][to] + cont_history(e, ply, piece, to);
}

static void update_quiet_history(Engine *e, int ply, int piece, int to, int bonus)
{
    gravity(&e->history[piece][to], bonus);
    gravity(&(*PLY(e, ply - 1)->cont)[piece][to], bonus);
    gravity(&(*PLY(e, ply - 2)->cont)[piece][to], bonus);
    if (e->params.ContHist46) {
        gravity(&(*PLY(e, ply - 4)->cont)[piece][to], bonus);
        gravity(&(*PLY(e, ply - 6)->cont)[piece][to], bonus);
    }
}

/* Fruit 2.1's history statistics: how often a quiet move that was tried produced the cut-off. */
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

/*
 * After a cut-off by best: the bonus to it and a malus to every quiet
 * move and capture tried before it; killers, the counter-move and the
 * mating killer for a quiet best move.
 */
static void reward_cutoff(Engine *e, Move best, int depth, int ply, int score,
                          const Move *quiets, int n_quiets, const Move *captures, int n_captures)
{
    Board *b = &e->b;
    Ply *p = PLY(e, ply);
    int bonus = history_bonus(&e->params, depth);
    int piece = b->squares[move_from(best)], to = move_to(best), victim = b->squares[to];
    if (!victim) {
        if (score >= MATE_BOUND)
            p->mate_killer = best;
        if (p->killers[0] != best) {
            p->killers[1] = p->killers[0];
            p->killers[0] = best;
        }
        Move prev = PLY(e, ply - 1)->move;
        if (prev)
            e->counter[b->squares[move_to(prev)]][move_to(prev)] = best;
        update_quiet_history(e, ply, piece, to, bonus);
        history_tried(e, piece, to, true);
        for (int i = 0; i < n_quiets; i++) {
            int qp = b->squares[move_from(quiets[i])], qt = move_to(quiets[i]);
            update_quiet_history(e, ply, qp, qt, -bonus);
            history_tried(e, qp, qt, false);
        }
    } else {
        gravity(&e->capture_hist[piece][to][piece_type(victim)], bonus);
    }
    for (int i = 0; i < n_captures; i++) {
        Move m = captures[i];
        gravity(&e->capture_hist[b->squares[move_from(m)]][move_to(m)][piece_type(b->squares[move_to(m)])], -bonus);
    }
}

/* ---- move ordering ---- */

enum {
    ORDER_HASH = 1 << 30,
    ORDER_MATE_KILLER = 1 << 29,
    ORDER_GOOD_CAPTURE = 1 << 27,
    ORDER_KILLER = 1 << 26,
    ORDER_COUNTER = (1 << 26) - 1,
    ORDER_BAD_CAPTURE = -(1 << 27)
};

/*
 * Scores the moves for pick_move: the hash move, a mating killer (seed
 * 003: before the captures), captures that do not lose material by SEE
 * (most valuable victim first, then capture history), killers, the
 * counter-move, quiet moves by history, and last the losing captures.
 */
static void score_moves(Engine *e, MoveList *list, Move hash_move, int ply, bool quiesce)
{
    Board *b = &e->b;
    const Ply *p = PLY(e, ply);
    Move prev = PLY(e, ply - 1)->move;
    Move counter = prev ? e->counter[b->squares[move_to(prev)]][move_to(prev)] : MOVE_NONE;
    for (int i = 0; i < list->count; i++) {
        Move m = list->moves[i];
        int mover = b->squares[move_from(m)], victim = b->squares[move_to(m)];
        int s;
        if (m == hash_move) {
            s = ORDER_HASH;
        } else if (victim) {
            int mvv = SEE_VALUE[piece_type(victim)] * 8 + e->capture_hist[mover][move_to(m)][piece_type(victim)] / 16;
            s = quiesce || see_ge(b, m, 0) ? ORDER_GOOD_CAPTURE + mvv : ORDER_BAD_CAPTURE + mvv;
        } else if (m == p->mate_killer) {
            s = ORDER_MATE_KILLER;
        } else if (m == p->killers[0]) {
            s = ORDER_KILLER + 1;
        } else if (m == p->killers[1]) {
            s = ORDER_KILLER;
        } else if (m == counter) {
            s = ORDER_COUNTER;
        } else {
            s = quiet_history(e, ply, mover, move_to(m));
        }
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

/* Score of a repeated position for the side to move, or 1 when none. */
static int repetition_score(Board *b, int ply)
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

/* Rooks, horses and cannons of one side: the pieces that can still mate. */
static int attacking_pieces(const Board *b, int color)
{
    return b->count[color][ROOK] + b->count[color][HORSE] + b->count[color][CANNON];
}

/* Counts a node at ply and resets its PV; false when the search must stop. */
static inline bool enter_node(Engine *e, int ply)
{
    e->pv_length[ply] = ply;
    if (out_of_budget(e))
        return false;
    /* Relaxed, and no read-modify-write: only this thread writes its count. */
    atomic_store_explicit(&e->nodes, atomic_load_explicit(&e->nodes, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    if (ply > e->seldepth)
        e->seldepth = ply;
    return true;
}

/* Plays m at ply, recording it for the continuation history and counter-moves. */
static inline void play(Engine *e, int ply, Move m)
{
    Board *b = &e->b;
    Ply *p = PLY(e, ply);
    p->move = m;
    p->cont = &e->cont_hist[b->squares[move_from(m)]][move_to(m)];
    if (e->nnue_on)
        nnue_stack_push(e->nnue, ply, b, m);
    board_make(b, m);
    tt_prefetch(e->table, board_key(b));
}

static inline void play_null(Engine *e, int ply)
{
    Ply *p = PLY(e, ply);
    p->move = MOVE_NONE;
    p->cont = &e->cont_hist[EMPTY][0];
    if (e->nnue_on)
        nnue_stack_push_null(e->nnue, ply, &e->b);
    board_make_null(&e->b);
    PLY(e, ply + 1)->null_move = true;
}

static inline void unplay_null(Engine *e, int ply)
{
    PLY(e, ply + 1)->null_move = false;
    board_unmake_null(&e->b);
}

/*
 * The static evaluation of the position at ply.  The network's output is
 * in centipawns from the side to move's view, the hand-crafted
 * evaluation's unit and view, so it takes the same place: the correction
 * history, the pruning margins and the table use it unchanged.  The
 * hand-crafted evaluation adds Tempo for the side to move; the net does
 * not, since it learned from side-to-move scores, which hold the tempo
 * already.  Neither scales by game rules (the 120-ply rule and
 * repetitions are the search's, step 1), so nothing else is added.  The
 * net's value is clamped to +-NNUE_EVAL_LIMIT: a net can say anything (a
 * random one says hundreds of thousands), and a static evaluation near
 * the ban or mate scores would, with a pruning margin added, pass for a
 * proven result.
 */
enum { NNUE_EVAL_LIMIT = BAN / 2 };

static int node_eval(Engine *e, int ply)
{
    if (!e->nnue_on)
        return evaluate(&e->b, &e->eval);
    int v = nnue_stack_evaluate(e->nnue, e->net, &e->b, ply);
    return v > NNUE_EVAL_LIMIT ? NNUE_EVAL_LIMIT : v < -NNUE_EVAL_LIMIT ? -NNUE_EVAL_LIMIT : v;
}

/* The static evaluation, from the table when it holds one. */
static int static_eval(Engine *e, const TTProbe *tp, int ply)
{
    return tp->eval != TT_NO_EVAL ? tp->eval : node_eval(e, ply);
}

/*
 * Correction history.  The structure of a position (pawns, advisors,
 * elephants and kings, which change rarely and decide what the
 * evaluation misjudges about king safety and pawn play) hashed into a
 * table per side to move; each entry the running error of the static
 * evaluation against the searches of positions with that structure.
 * Two more tables per side to move are keyed by each colour's attacking
 * pieces (rooks, horses, cannons, with its king): what the evaluation
 * misjudges about an attack set-up, weighted CorrMajorWeight % each.
 */
typedef struct {
    int16_t *structure, *major[2]; /* NULL structure: no correction */
} CorrEntries;

static CorrEntries corr_entries(Engine *e)
{
    const Board *b = &e->b;
    CorrEntries ce = { &e->corr[b->side][(b->structure_key >> 32) & (CORR_SIZE - 1)], { NULL, NULL } };
    if (e->params.CorrMajorWeight)
        for (int c = RED; c <= BLACK; c++)
            ce.major[c] = &e->corr_major[b->side][c][(b->attack_key[c] >> 32) & (CORR_SIZE - 1)];
    return ce;
}

/* The static evaluation corrected by its entries, never into the mate range. */
static int corrected_eval(const Engine *e, const CorrEntries *ce, int raw)
{
    if (!ce->structure)
        return raw;
    int sum = *ce->structure * 100;
    if (ce->major[RED])
        sum += (*ce->major[RED] + *ce->major[BLACK]) * e->params.CorrMajorWeight;
    int v = raw + sum / (100 * e->params.CorrDiv);
    return v >= MATE_BOUND ? MATE_BOUND - 1 : v <= -MATE_BOUND ? -MATE_BOUND + 1 : v;
}

/* Moves one entry toward the error by bonus (gravity keeps it within CORR_LIMIT). */
static void correct_entry(int16_t *entry, int bonus)
{
    *entry = (int16_t)(*entry + bonus - *entry * abs(bonus) / CORR_LIMIT);
}

/* A search of `depth` found `best` where the corrected evaluation said `eval`: move the entries toward the error. */
static void update_correction(const Engine *e, const CorrEntries *ce, int depth, int best, int eval)
{
    int bonus = (best - eval) * depth / e->params.CorrRate;
    bonus = bonus > CORR_LIMIT / 4 ? CORR_LIMIT / 4 : bonus < -CORR_LIMIT / 4 ? -CORR_LIMIT / 4 : bonus;
    correct_entry(ce->structure, bonus);
    for (int c = RED; c <= BLACK; c++)
        if (ce->major[c])
            correct_entry(ce->major[c], bonus);
}

/* ---- quiescence ---- */

static int quiesce(Engine *e, int alpha, int beta, int ply, int qply, bool pv_node)
{
    Board *b = &e->b;
    const Params *p = &e->params;
    if (!enter_node(e, ply)) {
        e->aborted = true;
        return 0;
    }
    if (ply >= MAX_PLY - 1)
        return node_eval(e, ply);

    bool in_check = board_in_check(b);
    if (in_check) {
        int rep = repetition_score(b, ply);
        if (rep != 1)
            return rep;
    }

    /* The hash table: any stored bound cuts here (every search is at least as deep). */
    uint64_t key = board_key(b);
    TTProbe tp = tt_probe(e->table, key, ply);
    if (!pv_node) {
        if (tp.lower_depth >= 0 && tp.lower >= beta)
            return tp.lower;
        if (tp.upper_depth >= 0 && tp.upper <= alpha)
            return tp.upper;
    }

    int best = -MATE + ply, stand = -INF, eval = TT_NO_EVAL, old_alpha = alpha;
    MoveList list;
    list.count = 0;
    if (in_check) {
        /* Full evasions: every legal move. */
        movegen_pseudo(b, &list, GEN_ALL);
    } else {
        eval = static_eval(e, &tp, ply);
        CorrEntries ce = p->CorrHist ? corr_entries(e) : (CorrEntries){ NULL, { NULL, NULL } };
        stand = best = corrected_eval(e, &ce, eval);
        if (best >= beta) {
            tt_store(e->table, key, 0, ply, MOVE_NONE, best, alpha, beta, eval, false);
            return best;
        }
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
    score_moves(e, &list, tp.move, ply, true);
    Move best_move = MOVE_NONE;
    Move prev = PLY(e, ply - 1)->move;
    int searched = 0, quiet_evasions = 0;
    for (int i = 0; i < list.count; i++) {
        Move m = pick_move(&list, i);
        int victim = b->squares[move_to(m)];
        /*
         * QsEvasionLimit (Stockfish's qsearch, "quietCheckEvasions"): once a
         * few quiet evasions have shown we are not mated, the rest are
         * unlikely to do better than they did.
         */
        if (in_check && !victim && p->QsEvasionLimit && quiet_evasions >= p->QsEvasionLimit && best > -MATE_BOUND)
            continue;
        /*
         * QsLateCaptures (Stockfish's qsearch prunes after two moves): deep in
         * quiescence, a late capture that neither recaptures nor checks.
         */
        if (!in_check && p->QsLateCaptures && qply >= p->QsCheckPlies && searched >= p->QsLateCaptures
            && !(prev && move_to(m) == move_to(prev)) && !board_gives_check(b, m))
            continue;
        if (!in_check && victim) {
            /* Delta pruning: even winning this piece cannot lift the score to alpha. */
            if (p->DeltaPruning && stand + eval_piece_value(&e->eval, piece_type(victim)) + p->DeltaMargin <= alpha)
                continue;
            /* A capture that loses material cannot raise a quiet position's score (unless it checks, a sacrifice). */
            if (p->QsSeePruning && !see_ge(b, m, 0)
                && !(p->SacrificeChecks && qply < p->QsCheckPlies && board_gives_check(b, m)))
                continue;
        }
        if (!board_legal(b, m))
            continue;
        searched++;
        quiet_evasions += in_check && !victim;
        play(e, ply, m);
        int score = -quiesce(e, -beta, -alpha, ply + 1, qply + 1, pv_node);
        board_unmake(b);
        if (e->aborted)
            return 0;
        if (score > best) {
            best = score;
            if (score > alpha) {
                best_move = m;
                alpha = score;
                update_pv(e, ply, m);
                if (score >= beta)
                    break;
            }
        }
    }
    tt_store(e->table, key, 0, ply, best_move, best, old_alpha, beta, eval, is_ban(best));
    return best;
}

/* ---- the main search ---- */

/* Step 7's reduction: Heinz's adaptive R (ICCA Journal 22(3), 1999), or one growing with depth and eval. */
static int null_reduction(const Engine *e, int depth, int eval, int beta)
{
    const Params *p = &e->params;
    if (p->NullAdaptive) {
        if (depth <= p->NullAdaptLowDepth)
            return 2;
        if (depth > p->NullAdaptHighDepth)
            return 3;
        int us = e->b.side;
        return piece_count(&e->b, us) >= p->NullAdaptPieces && piece_count(&e->b, us ^ 1) >= p->NullAdaptPieces
             ? 3 : 2;
    }
    int by_eval = (eval - beta) / p->NullEvalDiv;
    return p->NullR + depth / p->NullDepthDiv + (by_eval < p->NullEvalMax ? by_eval : p->NullEvalMax);
}

static int search(Engine *e, int alpha, int beta, int depth, int ply, unsigned flags);

/*
 * Step 7's eval guard: how far above beta the static eval must be (never
 * below beta itself), except from depth NullLowEvalDepth, where it may be
 * NullLowEvalMargin below: there a node expected to fail high usually does
 * even with the eval below beta, and a failed null search costs little
 * against the subtree a successful one saves.
 */
static int null_margin(const Params *p, int depth)
{
    if (p->NullLowEvalMargin && depth >= p->NullLowEvalDepth)
        return -p->NullLowEvalMargin;
    int m = p->NullMargin - p->NullMarginDepth * depth;
    return m > 0 ? m : 0;
}

/*
 * Step 7: the null move.  Returns a score >= beta when passing still
 * fails high (after verification where it applies), else -INF; sets
 * *mate_threat when passing gets us mated and, with NullThreat, *threat
 * to the reply that refuted the pass.
 */
static int null_move(Engine *e, int alpha, int beta, int depth, int ply, unsigned flags, int eval,
                     const TTProbe *tp, bool *mate_threat, Move *threat)
{
    Board *b = &e->b;
    const Params *p = &e->params;
    Ply *here = PLY(e, ply);
    NULL_STAT(e, nodes, depth, 1);
    int R = null_reduction(e, depth, eval, beta);
    bool after_null = here->null_move;
    bool double_null = after_null && PLY(e, ply - 1)->null_move;
    /* The guards, numbered as docs/programs/xqf-engine.md lists them (Fruit 2.1, Crafty). */
    if (!p->NullMove || (flags & (NODE_PV | NODE_NO_NULL))                  /* 5: not in a verification */
        || depth < 2 || board_in_check(b) || here->excluded                 /* 2, 3 */
        || (p->NullCutOnly && !(flags & NODE_CUT))                          /* only where a cut is expected */
        || beta <= -MATE_BOUND || beta >= MATE_BOUND
        || !board_has_attackers(b, b->side)                                 /* 1: zugzwang is near */
        || (after_null && (!p->NullDouble || double_null                    /* 4: Fruit's double null, */
                           || attacking_pieces(b, b->side ^ 1) > p->NullDoublePieces)) /* where zugzwang can be */
        || tp->mate_threat                                                  /* 6: Crafty's memory */
        || (p->NullEvalGuard && eval < beta + null_margin(p, depth)                /* 7: Fruit's eval >= beta */
            && (depth - R - 1 > 0 || !p->NullFruitQs))
        || (tp->upper_depth >= depth - R - 1 && tp->upper < beta))          /* 8: the table says no */
        return -INF;

    NULL_STAT(e, tried, depth, 1);
    uint64_t before = e->nodes;
    NULL_NEST(e, +1);
    play_null(e, ply);
    int v = -search(e, -beta, -beta + 1, depth - R - 1, ply + 1, (flags & NODE_VERIFY) | (flags & NODE_CUT ? 0 : NODE_CUT));
    if (p->NullThreat && v < beta && !e->aborted)
        *threat = tt_probe(e->table, board_key(b), ply + 1).move; /* the reply the pass lost to */
    unplay_null(e, ply);
    NULL_NEST(e, -1);
    if (e->aborted)
        return -INF;
    if (v < beta) {
        NULL_COST(e, failed, depth, e->nodes - before);
        if (v <= -MATE_BOUND) {
            /* Passing gets us mated: a mate threat (Crafty's), remembered in the table. */
            *mate_threat = true;
            tt_mark_mate_threat(e->table, board_key(b));
        }
        return -INF;
    }
    NULL_STAT(e, cut, depth, 1);
    NULL_COST(e, cut, depth, e->nodes - before);
    before = e->nodes;
    NULL_NEST(e, +1);
    if (v >= MATE_BOUND)
        v = beta; /* an unproven mate */
    bool verify = attacking_pieces(b, b->side) <= p->NullVerifyPieces; /* where zugzwang can be */
    if (verify && p->NullVerify && (flags & NODE_VERIFY) && depth >= p->NullVerifyDepth) {
        /* Tabibi-Netanyahu: search this node shallower, verification off below. */
        int vdepth = depth - (p->NullVerifyAtR ? R : p->NullVerifyReduction);
        v = search(e, alpha, beta, vdepth, ply, NODE_NO_NULL | (flags & NODE_CUT));
    } else if (verify && depth <= p->NullSmallVerify) {
        /* A depth-1 check of small-depth null cuts (docs/programs/xqf-engine.md): a mate in one is not pruned away. */
        v = search(e, beta - 1, beta, 1, ply, NODE_NO_NULL | (flags & NODE_VERIFY));
    }
    NULL_NEST(e, -1);
    NULL_COST(e, verify, depth, e->nodes - before);
    if (e->aborted || v < beta)
        return -INF;
    NULL_STAT(e, kept, depth, 1);
    if (p->NullStoreTT)
        tt_store(e->table, board_key(b), depth, ply, MOVE_NONE, v, beta - 1, beta, TT_NO_EVAL, false);
    return v;
}

/*
 * Step 8: ProbCut.  A capture whose exchange beats beta by a margin, and
 * which still beats it in a search ProbCutReduction plies shallower, would almost
 * surely cut at full depth.  Returns that score or -INF.
 */
static int probcut(Engine *e, int beta, int depth, int ply, unsigned flags, int eval, Move hash_move)
{
    Board *b = &e->b;
    const Params *p = &e->params;
    int pbeta = beta + p->ProbCutMargin;
    MoveList list;
    list.count = 0;
    movegen_pseudo(b, &list, GEN_CAPTURES);
    score_moves(e, &list, hash_move, ply, false);
    for (int i = 0; i < list.count; i++) {
        Move m = pick_move(&list, i);
        if (m == PLY(e, ply)->excluded || !see_ge(b, m, pbeta - eval) || !board_legal(b, m))
            continue;
        play(e, ply, m);
        int v = -quiesce(e, -pbeta, -pbeta + 1, ply + 1, 0, false);
        if (v >= pbeta && !e->aborted)
            v = -search(e, -pbeta, -pbeta + 1, depth - p->ProbCutReduction, ply + 1, (flags & NODE_VERIFY) | (flags & NODE_CUT ? 0 : NODE_CUT));
        board_unmake(b);
        if (e->aborted)
            return -INF;
        if (v >= pbeta) {
            tt_store(e->table, board_key(b), depth - p->ProbCutReduction + 1, ply, m, v, beta, pbeta, TT_NO_EVAL, is_ban(v));
            return v;
        }
    }
    return -INF;
}

static int search(Engine *e, int alpha, int beta, int depth, int ply, unsigned flags)
{
    Board *b = &e->b;
    const Params *p = &e->params;
    bool pv_node = flags & NODE_PV, cut_node = flags & NODE_CUT;
    unsigned verify = flags & NODE_VERIFY;
    if (depth <= 0)
        return quiesce(e, alpha, beta, ply, 0, pv_node);
    if (!enter_node(e, ply)) {
        e->aborted = true;
        return 0;
    }
    Ply *here = PLY(e, ply);
    Move excluded = here->excluded;

    /* Step 1: repetition (perpetual check and chase) and the 120-ply rule, through the rules module. */
    if (!excluded) {
        int rep = repetition_score(b, ply);
        if (rep != 1)
            return rep;
    }
    if (board_state(b)->rule60 >= RULE_NO_CAPTURE_PLIES)
        return movegen_count_legal(b) ? 0 : -MATE + ply;
    if (ply >= MAX_PLY - 1)
        return node_eval(e, ply);

    /* Step 2: mate-distance pruning. */
    if (alpha < -MATE + ply)
        alpha = -MATE + ply;
    if (beta > MATE - ply - 1)
        beta = MATE - ply - 1;
    if (alpha >= beta)
        return alpha;

    /*
     * Step 3: the transposition table; its bounds cut at non-PV nodes.
     * A singular search (a move excluded) neither reads nor writes bounds:
     * its result is not this position's.
     */
    uint64_t key = board_key(b);
    TTProbe tp = tt_probe(e->table, key, ply);
    if (excluded) {
        tp.lower_depth = tp.upper_depth = -1;
        tp.lower = -INF;
        tp.upper = INF;
    }
    if (!pv_node) {
        if (tp.lower_depth >= depth && tp.lower >= beta)
            return tp.lower;
        if (tp.upper_depth >= depth && tp.upper <= alpha)
            return tp.upper;
    }
    Move hash_move = tp.move;
    bool hash_capture = hash_move && b->squares[move_to(hash_move)];

    /* Step 4: static evaluation, corrected; improving when it rose since our last move. */
    bool in_check = board_in_check(b);
    int eval = -INF, raw_eval = TT_NO_EVAL, static_value = -INF; /* raw: for the table; static_value: corrected */
    CorrEntries corr = !in_check && p->CorrHist ? corr_entries(e) : (CorrEntries){ NULL, { NULL, NULL } };
    if (!in_check) {
        raw_eval = static_eval(e, &tp, ply);
        eval = static_value = corrected_eval(e, &corr, raw_eval);
        /* A stored bound on the same side is a better guess than the evaluation. */
        if (tp.lower_depth >= 0 && tp.lower > eval && !is_decisive(tp.lower))
            eval = tp.lower;
        else if (tp.upper_depth >= 0 && tp.upper < eval && !is_decisive(tp.upper))
            eval = tp.upper;
    }
    here->static_eval = static_value;
    int past = PLY(e, ply - 2)->static_eval;
    if (past == -INF)
        past = PLY(e, ply - 4 >= -2 ? ply - 4 : -2)->static_eval;
    bool improving = !in_check && (past == -INF || static_value > past);
    Ply *next = PLY(e, ply + 1);
    next->killers[0] = next->killers[1] = next->mate_killer = MOVE_NONE;
    next->excluded = MOVE_NONE;
    next->double_ext = here->double_ext;

    bool prune = !pv_node && !in_check && !excluded;

    /* Step 5: razoring: hopeless at the frontier, unless quiescence finds something. */
    if (prune && p->Razoring && depth <= p->RazorDepth && eval + p->RazorMargin * depth <= alpha) {
        int v = quiesce(e, alpha, alpha + 1, ply, 0, false);
        if (e->aborted)
            return 0;
        if (v <= alpha)
            return v;
    }

    /*
     * Step 6: reverse futility.  Far enough above beta that no quiet reply
     * at this depth is likely to bring it back: return the evaluation.
     * Not against a mate score, and not for a side without attacking
     * pieces: it may have no move at all, and stalemate loses.
     */
    if (prune && p->Rfp && depth <= p->RfpDepth && eval < MATE_BOUND && beta > -MATE_BOUND
        && board_has_attackers(b, b->side) && eval - p->RfpMargin * (depth - improving) >= beta)
        return (eval + beta) / 2;

    /* Step 7: null move. */
    bool mate_threat = false;
    Move threat = MOVE_NONE;
    if (!in_check) {
        int v = null_move(e, alpha, beta, depth, ply, flags, eval, &tp, &mate_threat, &threat);
        if (e->aborted)
            return 0;
        if (v >= beta)
            return v;
    }
    int threat_extension = mate_threat && p->NullMateThreat ? 1 : 0;
    /* The square of our piece that the pass lost (-1: none): moving it away is an escape. */
    int threatened = threat && b->squares[move_to(threat)] && piece_color(b->squares[move_to(threat)]) == b->side
                   ? move_to(threat) : -1;

    /* Step 8: ProbCut. */
    if (prune && p->ProbCut && depth >= p->ProbCutDepth && beta > -MATE_BOUND && beta < MATE_BOUND
        && !(tp.upper_depth >= depth - p->ProbCutReduction + 1 && tp.upper < beta + p->ProbCutMargin)) {
        int v = probcut(e, beta, depth, ply, flags, eval, hash_move);
        if (e->aborted)
            return 0;
        if (v > -INF)
            return v;
    }

    /*
     * Step 9: without a hash move the node is searched one ply shallower
     * (internal iterative reduction); its next visit finds a move in the
     * table.  Internal iterative deepening (as ElephantEye) searches for one
     * first instead, when switched on.
     */
    if (!hash_move && !excluded) {
        if (p->IID && depth >= p->IIDDepth && (pv_node || eval + p->IIDMargin >= beta)) {
            search(e, alpha, beta, depth - p->IIDReduction, ply, (flags & ~NODE_CUT) | NODE_NO_NULL);
            if (e->aborted)
                return 0;
            hash_move = tt_probe(e->table, key, ply).move;
        } else if (p->Iir && depth >= p->IirDepth && (pv_node || cut_node)) {
            depth--;
        }
    }

    /* Step 10: the move loop. */
    MoveList list;
    list.count = 0;
    movegen_pseudo(b, &list, GEN_ALL);
    score_moves(e, &list, hash_move, ply, false);
    if (threatened >= 0 && p->NullThreatOrder)
        for (int i = 0; i < list.count; i++)
            if (move_from(list.moves[i]) == threatened && !b->squares[move_to(list.moves[i])]
                && list.scores[i] < ORDER_COUNTER)
                list.scores[i] += p->NullThreatOrder; /* a quiet escape, among the quiets */

    int best = -INF, legal = 0, old_alpha = alpha, n_quiets = 0, n_captures = 0;
    Move best_move = MOVE_NONE;
    Move quiets[MAX_MOVES], captures[MAX_MOVES];
    bool skip_quiets = false;
    int lmp_limit = (p->LmpBase + depth * depth) / (2 - improving);
    for (int i = 0; i < list.count; i++) {
        Move m = pick_move(&list, i);
        if (m == excluded || !board_legal(b, m))
            continue;
        legal++;
        int mover = b->squares[move_from(m)], to = move_to(m);
        bool quiet = b->squares[to] == EMPTY;
        bool escape = move_from(m) == threatened;
        if (quiet && skip_quiets && m != hash_move && !escape)
            continue;
        bool gives_check = board_gives_check(b, m);
        int hist = quiet ? quiet_history(e, ply, mover, to) : 0;
        int lmr_depth = depth - 1;
        if (p->Lmr && depth < LMR_DEPTHS)
            lmr_depth -= e->lmr[depth][legal < LMR_MOVES ? legal : LMR_MOVES - 1] / 100;

        /*
         * Pruning at shallow depth, once a move has been searched and while
         * we are not being mated: these moves are very unlikely to matter.
         */
        if (!pv_node && !in_check && best > -MATE_BOUND && legal > 1) {
            if (quiet && !gives_check && !escape) {
                /* Late-move pruning: enough quiet moves tried. */
                if (p->Lmp && depth <= p->LmpDepth && legal > lmp_limit) {
                    skip_quiets = true;
                    continue;
                }
                /* ContHistPrune (Pikafish search.cpp): the continuations say this move rarely works here. */
                if (p->ContHistPrune && lmr_depth < CONT_PRUNE_LMR_DEPTH
                    && cont_history(e, ply, mover, to) < -p->ContHistPrune * depth)
                    continue;
                /* Futility with history (Toga II): cannot reach alpha at this depth. */
                if (p->Futility && lmr_depth <= p->FutilityDepth
                    && eval + p->FutilityBase + p->FutilityMul * (lmr_depth > 0 ? lmr_depth : 0) + hist / p->FutilityHistDiv <= alpha)
                    continue;
            }
            /*
             * CaptureFutility (Pikafish search.cpp, futility pruning for
             * captures): even with the victim and what its capture history
             * promises, the static evaluation stays below alpha.
             */
            if (!quiet && !gives_check && p->CaptureFutility && lmr_depth < CAPTURE_FUTILITY_LMR_DEPTH
                && static_value + p->CaptureFutility + p->CaptureFutilityMul * (lmr_depth > 0 ? lmr_depth : 0)
                       + eval_piece_value(&e->eval, piece_type(b->squares[to]))
                       + e->capture_hist[mover][to][piece_type(b->squares[to])] / 6
                   <= alpha)
                continue;
            /*
             * SEE pruning: the move loses more material than the depth can win
             * back.  A capture that checks may be a sacrifice that mates: kept.
             */
            if (p->SeePruning && depth <= p->SeePruneDepth) {
                int d = lmr_depth > 0 ? lmr_depth : 0;
                if (quiet ? !gives_check && !see_ge(b, m, -p->SeeQuietMargin * d * d)
                          : !(gives_check && p->SacrificeChecks) && !see_ge(b, m, -p->SeeCaptureMargin * depth))
                    continue;
                /*
                 * PruneLosingChecks (Pikafish search.cpp prunes checks by SEE as
                 * captures): a quiet check that loses more than a capture may.
                 */
                if (quiet && gives_check && depth <= p->PruneLosingChecks
                    && !see_ge(b, m, -p->SeeCaptureMargin * depth))
                    continue;
            }
        }

        /*
         * Extensions.  Singular: when the hash move's score is well above
         * every other move's (a search without it at half depth fails low
         * against a lowered bound), it is extended; when even the others
         * reach beta, the node is cut (multi-cut); when the hash score
         * alone reaches beta, the hash move is searched a ply shallower.
         */
        int ext = 0;
        if (p->Singular && m == hash_move && !excluded && ply > 0 && depth >= p->SingularDepth
            && tp.lower_depth >= depth - 3 && !is_decisive(tp.lower)) {
            int sbeta = tp.lower - p->SingularMargin * depth;
            here->excluded = m;
            int v = search(e, sbeta - 1, sbeta, (depth - 1) / 2, ply, (flags & NODE_VERIFY) | (cut_node ? NODE_CUT : 0));
            here->excluded = MOVE_NONE;
            if (e->aborted)
                return 0;
            if (v < sbeta) {
                ext = 1;
                /* SingularDouble (Stockfish search.cpp): far below, two plies, a bounded number of times per path. */
                if (p->SingularDouble && !pv_node && v < sbeta - p->SingularDouble
                    && here->double_ext < p->SingularDoubleMax)
                    ext = 2;
            } else if (sbeta >= beta) {
                return sbeta;
            } else if (tp.lower >= beta) {
                ext = p->SingularNegative ? -2 : -1;
            } else if (p->SingularNegative && (cut_node || tp.lower <= v)) {
                /* Stockfish search.cpp's other negative extensions: a cut node, or others as good as the hash move. */
                ext = -1;
            }
        } else if (gives_check && p->CheckExtension && depth >= p->CheckExtDepth && see_ge(b, m, 0)) {
            ext = 1;
        }
        if (threat_extension && ext < 1)
            ext = 1;
        int new_depth = depth - 1 + ext;
        next->double_ext = here->double_ext + (ext >= 2);

        play(e, ply, m);
        int score;
        if (legal == 1) {
            score = -search(e, -beta, -alpha, new_depth, ply + 1, verify | (pv_node ? NODE_PV : cut_node ? 0 : NODE_CUT));
        } else {
            /*
             * Late-move reductions: from the logarithmic table, more at nodes
             * expected to fail high and for moves with a poor history
             * (Fruit's history success rate among them), less on the PV, while
             * improving and for checks.  A reduced move that beats alpha is
             * searched again at full depth.
             */
            int r = 0;
            /* LmrCaptures (Stockfish search.cpp): good captures are reduced too, but a ply less. */
            bool good_capture = !quiet && list.scores[i] >= 0;
            if (p->Lmr && depth >= p->LmrMinDepth && legal > p->LmrMinMoves + pv_node
                && (quiet || !good_capture || p->LmrCaptures)) {
                r = e->lmr[depth < LMR_DEPTHS ? depth : LMR_DEPTHS - 1][legal < LMR_MOVES ? legal : LMR_MOVES - 1];
                r += 100 * (!pv_node) + 100 * cut_node - 100 * improving - 100 * gives_check + 100 * hash_capture - 100 * escape;
                /* LmrCutNode (Stockfish search.cpp, "increase reduction for cut nodes"): more at expected cut nodes. */
                r += cut_node * p->LmrCutNode - 100 * good_capture;
                if (quiet) {
                    r -= hist * 100 / p->LmrHistoryDiv;
                    if (p->HistoryPruning && history_rate(e, mover, to) < p->HistoryThreshold)
                        r += 100;
                }
                r /= 100;
                if (r < 0)
                    r = 0;
                if (r >= new_depth)
                    r = new_depth > 1 ? new_depth - 1 : 0;
            }
            score = -search(e, -alpha - 1, -alpha, new_depth - r, ply + 1, verify | NODE_CUT);
            if (r && score > alpha && !e->aborted)
                score = -search(e, -alpha - 1, -alpha, new_depth, ply + 1, verify | (cut_node ? 0 : NODE_CUT));
            if (pv_node && score > alpha && score < beta && !e->aborted)
                score = -search(e, -beta, -alpha, new_depth, ply + 1, verify | NODE_PV);
        }
        board_unmake(b);
        if (e->aborted)
            return 0;
        if (score > best) {
            best = score;
            if (score > alpha) {
                best_move = m;
                alpha = score;
                update_pv(e, ply, m);
                if (score >= beta) {
                    reward_cutoff(e, m, depth, ply, score, quiets, n_quiets, captures, n_captures);
                    break;
                }
            }
        }
        if (m != best_move) {
            if (quiet)
                quiets[n_quiets++] = m;
            else
                captures[n_captures++] = m;
        }
    }

    /* Step 11: no legal move loses (mate and stalemate); store and return. */
    if (!legal)
        return excluded ? alpha : -MATE + ply;
    if (best == -INF) /* every move was pruned */
        return alpha;
    if (!excluded)
        tt_store(e->table, key, depth, ply, best > old_alpha ? best_move : MOVE_NONE, best, old_alpha, beta,
                 raw_eval, is_ban(best));
    /* Step 11, the correction: from quiet results whose bound says which way the evaluation erred. */
    if (corr.structure && !excluded && !is_decisive(best) && !is_ban(best)
        && !(best > old_alpha && best_move && b->squares[move_to(best_move)])
        && !(best <= old_alpha && best >= static_value) && !(best >= beta && best <= static_value))
        update_correction(e, &corr, depth, best, static_value);
    return best;
}

/* ---- the root ---- */

/*
 * A root move with its last score and, for MultiPV, the PV it had when its
 * line was last completed (Stockfish's RootMove: each line keeps its own).
 */
typedef struct {
    Move move;
    int score;
    int pv_length;
    Move pv[MAX_PLY];
} RootMove;

static bool listed(const Move *list, int count, Move m)
{
    for (int i = 0; i < count; i++)
        if (list[i] == m)
            return true;
    return false;
}

/* A root move the limits let us play: not banned (UCCI banmoves), and among searchmoves when given. */
static bool root_allowed(const SearchLimits *l, Move m)
{
    return !listed(l->banned, l->banned_count, m) && (!l->only_count || listed(l->only, l->only_count, m));
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

static void report_line(Engine *e, int depth, int multipv, const RootMove *line, SearchReport report, void *ctx)
{
    if (!report)
        return;
    SearchInfo info;
    info.depth = depth;
    info.seldepth = e->seldepth;
    info.score = line->score;
    info.nodes = total_nodes(e);
    info.time_ms = elapsed_ms(e);
    info.hashfull = tt_hashfull(e->table);
    info.multipv = multipv;
    info.pv_length = line->pv_length;
    memcpy(info.pv, line->pv, sizeof(Move) * (size_t)info.pv_length);
    report(ctx, &info);
}

/* Writes the PV back into the hash table so the next iteration follows it (as Fruit 2.1 does). */
static void store_pv(Engine *e, const RootMove *line, int depth, int score)
{
    Board *b = &e->b;
    int n = 0;
    for (; n < line->pv_length && movegen_is_legal(b, line->pv[n]); n++) {
        tt_store(e->table, board_key(b), depth - n > 0 ? depth - n : 0, n, line->pv[n],
                 n % 2 ? -score : score, -INF, INF, TT_NO_EVAL, is_ban(score));
        board_make(b, line->pv[n]);
    }
    while (n-- > 0)
        board_unmake(b);
}

/*
 * LmrRoot (Stockfish search.cpp reduces late root moves as it does any
 * other's, the root being a PV node): the reduction of the root move m,
 * the count-th searched in this pass, before it is played.  The moves the
 * interior reduces by default are reduced (quiet moves and captures that
 * lose by SEE, never a check), after LmrMinMoves + 1 (a PV node's count),
 * by the table less the history, clamped as inside the tree.  0 when off.
 */
static int root_reduction(Engine *e, Move m, int count, int depth, int new_depth, bool check)
{
    const Params *p = &e->params;
    Board *b = &e->b;
    if (!p->LmrRoot || !p->Lmr || check || depth < p->LmrMinDepth || count <= p->LmrMinMoves + 1)
        return 0;
    int mover = b->squares[move_from(m)], to = move_to(m);
    bool quiet = b->squares[to] == EMPTY;
    if (!quiet && see_ge(b, m, 0))
        return 0;
    int r = e->lmr[depth < LMR_DEPTHS ? depth : LMR_DEPTHS - 1][count < LMR_MOVES ? count : LMR_MOVES - 1];
    if (quiet)
        r -= quiet_history(e, 0, mover, to) * 100 / p->LmrHistoryDiv;
    r /= 100;
    if (r < 0)
        r = 0;
    if (r >= new_depth)
        r = new_depth > 1 ? new_depth - 1 : 0;
    return r;
}

/*
 * One pass over the root moves from index first (the lines above it are
 * settled: MultiPV) with window (alpha, beta); returns the best score.
 * Line 0's best move goes to out as soon as it is found, so an aborted
 * iteration still plays what it has proven better.
 */
static int search_root(Engine *e, RootMove *moves, int first, int n, int depth, int alpha, int beta,
                       SearchResult *out)
{
    const Params *p = &e->params;
    int best = -INF;
    for (int i = first; i < n; i++) {
        Move m = moves[i].move;
        bool check = board_gives_check(&e->b, m);
        int new_depth = depth - 1 + (check && p->CheckExtension && depth >= p->CheckExtDepth);
        int r = root_reduction(e, m, i - first + 1, depth, new_depth, check);
        play(e, 0, m);
        int score;
        if (i == first) {
            score = -search(e, -beta, -alpha, new_depth, 1, NODE_PV | NODE_VERIFY);
        } else {
            score = -search(e, -alpha - 1, -alpha, new_depth - r, 1, NODE_CUT | NODE_VERIFY);
            if (r && score > alpha && !e->aborted)
                score = -search(e, -alpha - 1, -alpha, new_depth, 1, NODE_CUT | NODE_VERIFY);
            if (score > alpha && score < beta && !e->aborted)
                score = -search(e, -beta, -alpha, new_depth, 1, NODE_PV | NODE_VERIFY);
        }
        board_unmake(&e->b);
        if (e->aborted)
            break;
        moves[i].score = score > alpha || i == first ? score : -INF + depth;
        if (score > best) {
            best = score;
            if (score > alpha) {
                update_pv(e, 0, m);
                moves[i].pv_length = e->pv_length[0];
                memcpy(moves[i].pv, e->pv[0], sizeof(Move) * (size_t)e->pv_length[0]);
                if (first == 0) {
                    out->best = m;
                    out->ponder = e->pv_length[0] > 1 ? e->pv[0][1] : MOVE_NONE;
                    out->score = score;
                }
                alpha = score;
                if (score >= beta)
                    break;
            }
        }
    }
    return best;
}

/*
 * Should the iterations stop?  The optimum time is scaled by how settled
 * the search is: less while the best move stays, more for each recent
 * change of best move and when the score fell since the last move.
 */
static bool time_is_up(const Engine *e, double changes, int score, int previous_score)
{
    const Params *p = &e->params;
    if (!e->optimum_ms || atomic_load(&e->pondering))
        return false;
    double scale = (p->TmStable + p->TmUnstable * changes) / 100.0;
    if (previous_score != -INF && score < previous_score) {
        double fall = (previous_score - score) / 100.0;
        scale *= 1.0 + p->TmFalling / 100.0 * (fall < 2 ? fall : 2);
    }
    double limit = e->optimum_ms * scale;
    if (limit > e->maximum_ms)
        limit = (double)e->maximum_ms;
    /* An iteration takes about as long as all before it: don't start one that cannot end. */
    return elapsed_ms(e) > limit * p->TmIterationStart / 100;
}

/*
 * Lazy SMP's diversity: helper i skips the depths that Stockfish 9's
 * SkipSize/SkipPhase tables mark for it, so the threads are spread over
 * neighbouring depths instead of all searching the same tree in step and
 * they fill the shared table for each other.  The main engine skips none.
 */
static bool skip_depth(int thread_id, int depth)
{
    static const int SIZE[20] = { 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4 };
    static const int PHASE[20] = { 0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7 };
    if (thread_id == 0)
        return false;
    int i = (thread_id - 1) % 20;
    return ((depth + PHASE[i]) / SIZE[i]) % 2;
}

/*
 * Iterative deepening in this engine's thread (the main engine's or a
 * helper's).  A helper skips some depths (see skip_depth) and reports
 * nothing; the main engine reports and keeps the clock.
 */
static void iterate(Engine *e, const Board *root, const SearchLimits *limits, SearchReport report, void *ctx,
                    SearchResult *out)
{
    set_root(e, root);
    e->nodes = 0;
    e->node_limit = limits->nodes;
    e->aborted = false;
    e->seldepth = 0;
    plan_time(e, limits, root->side);
    memset(e->ply, 0, sizeof e->ply);
    for (size_t i = 0; i < sizeof e->ply / sizeof e->ply[0]; i++) {
        e->ply[i].cont = &e->cont_hist[EMPTY][0];
        e->ply[i].static_eval = -INF;
    }
    memset(out, 0, sizeof *out);

    static _Thread_local RootMove moves[MAX_MOVES]; /* 40 KB: off the stack */
    int n = 0;
    MoveList list;
    movegen_legal(&e->b, &list);
    for (int i = 0; i < list.count; i++)
        if (root_allowed(limits, list.moves[i]))
            moves[n++] = (RootMove){ .move = list.moves[i] };
    if (n > 0) {
        out->best = moves[0].move;
        TTProbe tp = tt_probe(e->table, board_key(&e->b), 0);
        for (int i = 0; i < n; i++)
            if (moves[i].move == tp.move)
                moves[i].score = 1;
        sort_root(moves, n);
    }

    int max_depth = limits->depth > 0 && limits->depth < MAX_DEPTH ? limits->depth : MAX_DEPTH;
    /*
     * MultiPV as Stockfish does it: within an iteration, line k searches
     * the root moves not already taken by lines 0..k-1 and the moves from
     * k on are re-sorted, so after the last line the first `lines` moves
     * are the best lines, best first.  Each line has its own aspiration
     * window around its own last score.  With one line this is the plain
     * iteration.
     */
    int lines = limits->multipv < 1 ? 1 : limits->multipv > MULTIPV_MAX ? MULTIPV_MAX : limits->multipv;
    if (lines > n)
        lines = n;
    int last[MULTIPV_MAX] = { 0 };
    double changes = 0;
    Move last_best = MOVE_NONE;
    for (int depth = 1; depth <= max_depth && n > 0; depth++) {
        if (skip_depth(e->thread_id, depth) && depth < max_depth)
            continue;
        int best = -INF;
        for (int k = 0; k < lines; k++) {
            /* Aspiration window around the line's last score once the iterations settle. */
            int window = e->params.AspirationWindow;
            int alpha = -INF, beta = INF;
            if (depth >= e->params.AspirationDepth && last[k] > -MATE_BOUND && last[k] < MATE_BOUND) {
                alpha = last[k] - window;
                beta = last[k] + window;
            }
            int score;
            for (;;) {
                e->pv_length[0] = 0;
                score = search_root(e, moves, k, n, depth, alpha, beta, out);
                if (e->aborted)
                    break;
                sort_root(moves + k, n - k);
                if (score <= alpha) {
                    beta = (alpha + beta) / 2;
                    alpha = score - window > -INF ? score - window : -INF;
                } else if (score >= beta) {
                    beta = score + window < INF ? score + window : INF;
                } else {
                    break;
                }
                window += window / 2;
            }
            if (e->aborted)
                break;
            last[k] = score;
            if (k == 0) {
                best = score;
                out->depth = depth;
                out->score = best;
            } else {
                /*
                 * Each line had its own window, so a later line can score
                 * above an earlier one: sort the settled lines again (as
                 * Stockfish does) and take the best from the top.
                 */
                sort_root(moves, k + 1);
                for (int j = 0; j <= k; j++)
                    last[j] = moves[j].score;
                best = out->score = moves[0].score;
                out->best = moves[0].move;
                out->ponder = moves[0].pv_length > 1 ? moves[0].pv[1] : MOVE_NONE;
            }
        }
        if (e->aborted && out->depth < depth)
            break;
        /* Lines 1.. may have moved the PV of line 0 in e->pv; each line's own is in its RootMove. */
        store_pv(e, &moves[0], depth, best);
        int done = e->aborted ? 1 : lines;
        for (int k = 0; k < done; k++)
            report_line(e, depth, lines > 1 ? k + 1 : 0, &moves[k], report, ctx);
        if (e->aborted)
            break;
        changes /= 2;
        if (last_best && out->best != last_best)
            changes += 1;
        last_best = out->best;
        /*
         * A mate found is not a mate proved shortest: reductions and pruning
         * may hide a shorter one until a deeper iteration (a mate in 3 was
         * reported as a mate in 6 at depth 13), so a mate ends the search
         * only through the limits, as in Stockfish, where the time manager,
         * not the score, stops a search that sees a mate.  Iterations past a
         * mate are cheap (mate-distance pruning bounds every window).  With
         * `go mate N` the search stops as soon as it sees a mate within N.
         */
        if (limits->mate > 0 && best >= MATE_BOUND && MATE - best <= 2 * limits->mate - 1)
            break;
        /* One legal move: nothing to think about. */
        if (n == 1 && e->optimum_ms && !atomic_load(&e->pondering))
            break;
        if (time_is_up(e, changes, best, e->previous_score))
            break;
    }
    out->nodes = atomic_load_explicit(&e->nodes, memory_order_relaxed);
}

int engine_set_threads(Engine *e, int threads)
{
    if (threads < 1 || threads > ENGINE_MAX_THREADS || e->main)
        return -1;
    int want = threads - 1;
    while (e->helper_count > want)
        engine_destroy(&e->helpers[--e->helper_count]);
    if (want == 0) {
        free(e->helpers);
        e->helpers = NULL;
        return 0;
    }
    Engine **list = realloc(e->helpers, sizeof *list * (size_t)want);
    if (!list)
        return -1;
    e->helpers = list;
    while (e->helper_count < want) {
        Engine *h = calloc(1, sizeof *h);
        if (!h)
            return -1;
        h->main = e;
        h->table = &e->tt;
        h->thread_id = e->helper_count + 1;
        h->previous_score = -INF;
        atomic_init(&h->stop, false);
        atomic_init(&h->pondering, false);
        e->helpers[e->helper_count++] = h;
    }
    return 0;
}

int engine_threads(const Engine *e)
{
    return e->helper_count + 1;
}

/* Gives helper h its main engine's parameters and evaluation; false when out of memory (h sits out). */
static bool sync_helper(Engine *h)
{
    const Engine *m = h->main;
    h->params = m->params;
    h->eval = m->eval;
    memcpy(h->lmr, m->lmr, sizeof h->lmr);
    h->net = m->net; /* borrowed, read only */
    h->use_nnue = m->use_nnue;
    if (h->net && !h->nnue && !(h->nnue = nnue_stack_new()))
        return false;
    return true;
}

/*
 * The thread whose move is played (search.h).  ThreadVote 0, as Stockfish
 * 9: a helper replaces the choice when it completed a deeper iteration
 * with a better score.  ThreadVote 1, Stockfish's vote (thread.cpp,
 * get_best_thread, since Stockfish 10): each thread gives its move (score
 * - the lowest score + 14) x its depth, and the move with the most wins;
 * a proven mate is kept (a shorter one replaces it), and a thread that
 * sees itself mated never wins a vote.
 */
int engine_pick_thread(const SearchResult *results, int n, bool vote)
{
    if (n <= 0)
        return -1;
    int best = 0;
    if (!vote) {
        for (int i = 1; i < n; i++)
            if (results[i].depth > results[best].depth && results[i].score > results[best].score)
                best = i;
        return best;
    }
    int lowest = results[0].score;
    for (int i = 1; i < n; i++)
        if (results[i].score < lowest)
            lowest = results[i].score;
    int64_t best_votes = 0;
    for (int i = 0; i < n; i++) {
        int64_t votes = 0;
        for (int j = 0; j < n; j++)
            if (results[j].best == results[i].best)
                votes += (int64_t)(results[j].score - lowest + 14) * results[j].depth;
        if (i == 0) {
            best_votes = votes;
            continue;
        }
        bool better;
        if (results[best].score >= MATE_BOUND)
            better = results[i].score > results[best].score;
        else
            better = results[i].score >= MATE_BOUND || (results[i].score > -MATE_BOUND && votes > best_votes);
        if (better) {
            best = i;
            best_votes = votes;
        }
    }
    return best;
}

typedef struct {
    Engine *helper;
    const Board *root;
    SearchLimits limits;
    SearchResult result;
    pthread_t thread;
    bool running;
} HelperRun;

static void *helper_main(void *arg)
{
    HelperRun *run = arg;
    iterate(run->helper, run->root, &run->limits, NULL, NULL, &run->result);
    return NULL;
}

/*
 * The search: the helpers start on the same root, the main engine
 * iterates in the caller's thread, and once it is done (and any infinite
 * or ponder wait has ended) the helpers are told to stop and joined.
 * Only the main engine reads the clock and the node limit (its own
 * nodes); helpers have neither and run until told.  The move played is
 * chosen among the threads (engine_pick_thread) only with one line and no
 * depth limit (a depth asked for is a depth given; MultiPV lines are the
 * main engine's).
 */
void engine_search(Engine *e, const Board *root, const SearchLimits *limits,
                   SearchReport report, void *ctx, SearchResult *out)
{
    atomic_store(&e->start_ms, now_ms());
    atomic_store(&e->pondering, limits->ponder);
    atomic_store_explicit(&e->nodes, 0, memory_order_relaxed);
    tt_new_search(e->table);
    HelperRun *runs = e->helper_count ? calloc((size_t)e->helper_count, sizeof *runs) : NULL;
    for (int i = 0; runs && i < e->helper_count; i++) {
        HelperRun *r = &runs[i];
        r->helper = e->helpers[i];
        atomic_store_explicit(&r->helper->nodes, 0, memory_order_relaxed);
        if (!sync_helper(r->helper))
            continue;
        r->root = root;
        r->limits = *limits;
        r->limits.nodes = 0;
        r->limits.movetime = 0;
        r->limits.time[RED] = r->limits.time[BLACK] = -1;
        r->limits.infinite = r->limits.ponder = false;
        r->limits.multipv = 1;
        atomic_store(&r->helper->stop, false);
        r->running = pthread_create(&r->thread, NULL, helper_main, r) == 0;
    }

    iterate(e, root, limits, report, ctx, out);

    /* Under "go infinite" and while pondering the answer waits for stop (or ponderhit). */
    while ((limits->infinite || atomic_load(&e->pondering)) && !atomic_load(&e->stop)) {
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    for (int i = 0; runs && i < e->helper_count; i++)
        if (runs[i].running)
            atomic_store(&runs[i].helper->stop, true);
    bool choose = limits->multipv <= 1 && !limits->depth && out->best;
    SearchResult *results = runs && choose ? malloc(sizeof *results * (size_t)(e->helper_count + 1)) : NULL;
    int n = 0;
    if (results)
        results[n++] = *out;
    for (int i = 0; runs && i < e->helper_count; i++) {
        if (!runs[i].running)
            continue;
        pthread_join(runs[i].thread, NULL);
        if (results && runs[i].result.best)
            results[n++] = runs[i].result;
    }
    if (results) {
        const SearchResult *r = &results[engine_pick_thread(results, n, e->params.ThreadVote)];
        out->best = r->best;
        out->ponder = r->ponder;
        out->score = r->score;
        out->depth = r->depth;
    }
    free(results);
    free(runs);
    out->nodes = total_nodes(e);
    e->previous_score = out->depth ? out->score : -INF;
}

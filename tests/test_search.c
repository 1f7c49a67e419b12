/*
 * The search through its library API (search.h): mates found with the
 * right scores (checked against a brute-force mate finder written here),
 * no move when there is none, banned root moves, node limits, stopping,
 * reproducibility, and engines that share nothing.
 */
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "fen.h"
#include "movegen.h"
#include "search.h"

/* h1h9 mates at once (the advisor blocks e8), and no other move wins. */
#define MATE_IN_ONE "4k4/4a4/9/9/9/9/9/9/7R1/4K1N2 w - - 0 1"
/* Rook a5, kings d9/e0: a5d5 mates, a5a8 stalemates, which wins as well. */
#define TWO_WINS "3k5/9/9/9/R8/9/9/9/9/4K4 w - - 0 1"
/* b0b9+ drives the king to f8, then the rook or the horse mates. */
#define MATE_IN_TWO "5k3/4a4/9/4N4/9/9/9/9/9/1R2K4 w - - 0 1"
#define MIDDLEGAME "1rbak4/c4n2r/2na5/2N6/p1b3P1p/3C4P/P1P1P2C1/N7B/4A3R/R1BA1K3 w - - 5 31"

/* ---- helpers ----------------------------------------------------------- */

static void setup(Board *b, const char *fen)
{
    char err[256] = "";
    cr_assert_eq(fen_parse(b, fen, FEN_GAME, err, sizeof err), 0, "cannot parse '%s': %s", fen, err);
}

static Move parse_move(Board *b, const char *text)
{
    Move m = MOVE_NONE;
    char err[256] = "";
    cr_assert_eq(move_parse(b, text, &m, err, sizeof err), 0, "move %s: %s", text, err);
    return m;
}

static Engine *new_engine(void)
{
    Engine *e = engine_new();
    cr_assert_not_null(e, "engine_new failed");
    return e;
}

static SearchLimits depth_limits(int depth)
{
    SearchLimits l;
    search_limits_init(&l);
    l.depth = depth;
    return l;
}

/* Searches fen with a fresh engine. */
static SearchResult search_fresh(const char *fen, const SearchLimits *limits)
{
    Board b;
    setup(&b, fen);
    Engine *e = new_engine();
    SearchResult r;
    engine_search(e, &b, limits, NULL, NULL, &r);
    engine_destroy(&e);
    cr_assert_null(e, "engine_destroy must clear the pointer");
    return r;
}

static const char *text_of(Move m, char *buf)
{
    if (m == MOVE_NONE)
        strcpy(buf, "none");
    else
        move_text(m, buf);
    return buf;
}

/* ---- an independent mate finder ---------------------------------------- */

/* No legal move: mated or stalemated, a loss either way. */
static bool is_lost(Board *b)
{
    return movegen_count_legal(b) == 0;
}

/* Number of moves that leave the opponent without a move. */
static int mates_in_one(Board *b)
{
    MoveList l;
    movegen_legal(b, &l);
    int n = 0;
    for (int i = 0; i < l.count; i++) {
        board_make(b, l.moves[i]);
        n += is_lost(b);
        board_unmake(b);
    }
    return n;
}

/* After m, every reply (and there is one) allows a mate in one. */
static bool mates_in_two(Board *b, Move m)
{
    board_make(b, m);
    MoveList l;
    movegen_legal(b, &l);
    bool ok = l.count > 0;
    for (int i = 0; i < l.count && ok; i++) {
        board_make(b, l.moves[i]);
        ok = mates_in_one(b) > 0;
        board_unmake(b);
    }
    board_unmake(b);
    return ok;
}

/* ---- mates ------------------------------------------------------------- */

Test(search, mate_in_one)
{
    Board b;
    setup(&b, MATE_IN_ONE);
    cr_assert_eq(mates_in_one(&b), 1, "the test position should have exactly one winning move");
    SearchLimits l = depth_limits(4);
    SearchResult r = search_fresh(MATE_IN_ONE, &l);
    char t[8];
    cr_expect_eq(r.best, parse_move(&b, "h1h9"), "best %s, expected h1h9", text_of(r.best, t));
    cr_expect_eq(r.score, MATE - 1, "score %d, expected MATE-1 = %d", r.score, MATE - 1);
}

/* Stalemating is as good as mating: with the mate banned, the stalemate is found. */
Test(search, stalemate_wins_too)
{
    Board b;
    setup(&b, TWO_WINS);
    cr_assert_eq(mates_in_one(&b), 2);
    SearchLimits l = depth_limits(4);
    l.banned[l.banned_count++] = parse_move(&b, "a5d5");
    SearchResult r = search_fresh(TWO_WINS, &l);
    char t[8];
    cr_expect_eq(r.best, parse_move(&b, "a5a8"), "best %s, expected a5a8", text_of(r.best, t));
    cr_expect_eq(r.score, MATE - 1, "score %d, expected MATE-1", r.score);
}

Test(search, mate_in_two)
{
    Board b;
    setup(&b, MATE_IN_TWO);
    cr_assert_eq(mates_in_one(&b), 0, "the test position must have no mate in one");
    MoveList l;
    movegen_legal(&b, &l);
    int keys = 0;
    for (int i = 0; i < l.count; i++)
        keys += mates_in_two(&b, l.moves[i]);
    cr_assert_eq(keys, 1, "the test position should have exactly one mate-in-two key move");

    SearchLimits limits = depth_limits(6);
    SearchResult r = search_fresh(MATE_IN_TWO, &limits);
    char t[8];
    cr_expect(r.best != MOVE_NONE && mates_in_two(&b, r.best), "best %s does not mate in two", text_of(r.best, t));
    cr_expect_eq(r.best, parse_move(&b, "b0b9"), "best %s, expected b0b9", text_of(r.best, t));
    cr_expect_eq(r.score, MATE - 3, "score %d, expected MATE-3 = %d", r.score, MATE - 3);
}

/* The side to move being mated sees a negative mate score from the best defence. */
Test(search, mated_in_one_score)
{
    /* Black to move: after its only move d9d8, a5d5 mates */
    const char *fen = "3k5/9/9/9/R8/9/9/9/9/4K4 b - - 0 1";
    SearchLimits l = depth_limits(5);
    SearchResult r = search_fresh(fen, &l);
    cr_expect_neq(r.best, MOVE_NONE);
    cr_expect_eq(r.score, -(MATE - 2), "score %d, expected -(MATE-2)", r.score);
}

/* No legal move, mated or stalemated: no best move. */
Test(search, no_legal_move)
{
    SearchLimits l = depth_limits(3);
    SearchResult r = search_fresh("3k5/4P4/9/9/9/9/9/9/9/4K4 b - - 0 1", &l);
    cr_expect_eq(r.best, MOVE_NONE, "stalemate");
    r = search_fresh("3k5/9/9/9/3R5/9/9/9/9/4K4 b - - 0 1", &l);
    cr_expect_eq(r.best, MOVE_NONE, "checkmate");
}

/* ---- banned root moves ------------------------------------------------- */

Test(search, banned_mating_move_is_not_played)
{
    Board b;
    setup(&b, MATE_IN_ONE);
    SearchLimits l = depth_limits(4);
    l.banned[l.banned_count++] = parse_move(&b, "h1h9");
    SearchResult r = search_fresh(MATE_IN_ONE, &l);
    char t[8];
    cr_expect_neq(r.best, l.banned[0], "played the banned move");
    cr_expect(r.best != MOVE_NONE && movegen_is_legal(&b, r.best), "best %s is not legal", text_of(r.best, t));
    cr_expect_neq(r.score, MATE - 1, "a mate in one without the only mating move");
}

/* With every move but one banned, that one is played. */
static void expect_only_unbanned(const char *fen, const char *keep)
{
    Board b;
    setup(&b, fen);
    Move want = parse_move(&b, keep);
    MoveList legal;
    movegen_legal(&b, &legal);
    SearchLimits l = depth_limits(3);
    for (int i = 0; i < legal.count; i++)
        if (legal.moves[i] != want)
            l.banned[l.banned_count++] = legal.moves[i];
    cr_assert_eq(l.banned_count, legal.count - 1);
    SearchResult r = search_fresh(fen, &l);
    char t[8];
    cr_expect_eq(r.best, want, "%s: best %s, expected %s", fen, text_of(r.best, t), keep);
}

Test(search, all_but_one_banned)
{
    expect_only_unbanned("3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1", "e0e1");
    expect_only_unbanned("3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1", "e0f0");
    expect_only_unbanned(START_FEN, "i0i1");
}

/* Every legal move banned: no move. */
Test(search, all_banned)
{
    Board b;
    setup(&b, "3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1");
    SearchLimits l = depth_limits(3);
    l.banned[l.banned_count++] = parse_move(&b, "e0e1");
    l.banned[l.banned_count++] = parse_move(&b, "e0f0");
    SearchResult r = search_fresh("3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1", &l);
    cr_expect_eq(r.best, MOVE_NONE);
}

/* ---- limits, stopping, reproducibility --------------------------------- */

enum { NODE_LIMIT = 20000, NODE_SLACK = 300 };

Test(search, node_limit_is_respected_and_reproducible)
{
    SearchLimits l;
    search_limits_init(&l);
    l.nodes = NODE_LIMIT;
    SearchResult a = search_fresh(MIDDLEGAME, &l);
    SearchResult b = search_fresh(MIDDLEGAME, &l);
    cr_expect_leq(a.nodes, NODE_LIMIT + NODE_SLACK, "searched %llu nodes, limit %d", (unsigned long long)a.nodes,
                  NODE_LIMIT);
    cr_expect_geq(a.nodes, NODE_LIMIT - NODE_SLACK, "stopped at %llu nodes, limit %d", (unsigned long long)a.nodes,
                  NODE_LIMIT);
    Board board;
    setup(&board, MIDDLEGAME);
    cr_expect(a.best != MOVE_NONE && movegen_is_legal(&board, a.best));
    cr_expect_eq(a.best, b.best, "two fresh engines chose different moves");
    cr_expect_eq(a.nodes, b.nodes, "two fresh engines searched %llu and %llu nodes", (unsigned long long)a.nodes,
                 (unsigned long long)b.nodes);
    cr_expect_eq(a.score, b.score);
    cr_expect_eq(a.depth, b.depth);
}

/* The search does not modify the root board it is given. */
Test(search, root_board_untouched)
{
    static Board b, copy;
    setup(&b, MIDDLEGAME);
    memcpy(&copy, &b, sizeof copy);
    Engine *e = new_engine();
    SearchLimits l = depth_limits(4);
    SearchResult r;
    engine_search(e, &b, &l, NULL, NULL, &r);
    engine_destroy(&e);
    cr_expect(memcmp(&b, &copy, sizeof copy) == 0);
}

typedef struct {
    int calls, last_depth;
    bool depths_increase, pv_legal;
    Board root;
} ReportLog;

static void log_report(void *ctx, const SearchInfo *info)
{
    ReportLog *log = ctx;
    log->calls++;
    log->depths_increase &= info->depth > log->last_depth;
    log->last_depth = info->depth;
    Board b = log->root;
    for (int i = 0; i < info->pv_length; i++) {
        if (!movegen_is_legal(&b, info->pv[i])) {
            log->pv_legal = false;
            break;
        }
        board_make(&b, info->pv[i]);
    }
}

/* One report per iteration, deeper each time, with a legal PV. */
Test(search, reports_each_iteration)
{
    static ReportLog log;
    log.depths_increase = log.pv_legal = true;
    setup(&log.root, START_FEN);
    Engine *e = new_engine();
    SearchLimits l = depth_limits(4);
    SearchResult r;
    engine_search(e, &log.root, &l, log_report, &log, &r);
    engine_destroy(&e);
    cr_expect_eq(log.calls, 4);
    cr_expect_eq(log.last_depth, 4);
    cr_expect_eq(r.depth, 4);
    cr_expect(log.depths_increase);
    cr_expect(log.pv_legal);
}

typedef struct {
    Engine *engine;
    const Board *board;
    SearchLimits limits;
    SearchResult result;
    atomic_bool done;
} SearchJob;

static void *run_job(void *arg)
{
    SearchJob *job = arg;
    engine_search(job->engine, job->board, &job->limits, NULL, NULL, &job->result);
    atomic_store(&job->done, true);
    return NULL;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* engine_stop from another thread ends an infinite search promptly, with a legal move. */
Test(search, stop_ends_infinite_search)
{
    static Board b;
    setup(&b, START_FEN);
    SearchJob job = { new_engine(), &b, { 0 }, { 0 }, false };
    search_limits_init(&job.limits);
    job.limits.infinite = true;
    engine_reset_stop(job.engine);
    pthread_t thread;
    cr_assert_eq(pthread_create(&thread, NULL, run_job, &job), 0);
    struct timespec pause = { 0, 100 * 1000000L };
    nanosleep(&pause, NULL);
    int64_t t0 = now_ms();
    engine_stop(job.engine);
    pthread_join(thread, NULL);
    int64_t waited = now_ms() - t0;
    cr_expect_lt(waited, 1000, "the search took %lld ms to stop", (long long)waited);
    cr_expect(job.result.best != MOVE_NONE && movegen_is_legal(&b, job.result.best));

    /* a pending stop makes the next search return at once; reset clears it */
    SearchLimits deep = depth_limits(60);
    SearchResult r;
    t0 = now_ms();
    engine_search(job.engine, &b, &deep, NULL, NULL, &r);
    cr_expect_lt(now_ms() - t0, 1000, "a search with a stop pending should return at once");
    engine_reset_stop(job.engine);
    SearchLimits shallow = depth_limits(3);
    engine_search(job.engine, &b, &shallow, NULL, NULL, &r);
    cr_expect_eq(r.depth, 3);
    cr_expect(r.best != MOVE_NONE && movegen_is_legal(&b, r.best));
    engine_destroy(&job.engine);
}

/* An infinite search waits for engine_stop even when there is nothing to search. */
Test(search, infinite_without_moves_waits_for_stop)
{
    static Board b;
    setup(&b, "3k5/4P4/9/9/9/9/9/9/9/4K4 b - - 0 1");
    SearchJob job = { new_engine(), &b, { 0 }, { 0 }, false };
    search_limits_init(&job.limits);
    job.limits.infinite = true;
    engine_reset_stop(job.engine);
    pthread_t thread;
    cr_assert_eq(pthread_create(&thread, NULL, run_job, &job), 0);
    struct timespec pause = { 0, 200 * 1000000L };
    nanosleep(&pause, NULL);
    cr_expect_not(atomic_load(&job.done), "the infinite search returned without a stop");
    engine_stop(job.engine);
    pthread_join(thread, NULL);
    cr_expect_eq(job.result.best, MOVE_NONE);
    engine_destroy(&job.engine);
}

/* Two engines searching at the same time give what each gives alone: they share nothing. */
Test(search, engines_are_independent)
{
    static Board p1, p2;
    setup(&p1, START_FEN);
    setup(&p2, MIDDLEGAME);
    SearchLimits l = depth_limits(5);
    SearchResult alone1 = search_fresh(START_FEN, &l);
    SearchResult alone2 = search_fresh(MIDDLEGAME, &l);

    SearchJob jobs[2] = { { new_engine(), &p1, l, { 0 }, false }, { new_engine(), &p2, l, { 0 }, false } };
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        cr_assert_eq(pthread_create(&threads[i], NULL, run_job, &jobs[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    const SearchResult *alone[2] = { &alone1, &alone2 };
    for (int i = 0; i < 2; i++) {
        cr_expect_eq(jobs[i].result.best, alone[i]->best, "engine %d: another move when run beside another engine", i);
        cr_expect_eq(jobs[i].result.nodes, alone[i]->nodes, "engine %d: %llu nodes, alone %llu", i,
                     (unsigned long long)jobs[i].result.nodes, (unsigned long long)alone[i]->nodes);
        cr_expect_eq(jobs[i].result.score, alone[i]->score);
    }
    /* and one after the other on the same two engines, after engine_clear */
    for (int i = 0; i < 2; i++) {
        engine_clear(jobs[i].engine);
        run_job(&jobs[i]);
    }
    for (int i = 0; i < 2; i++) {
        cr_expect_eq(jobs[i].result.best, alone[i]->best, "engine %d after engine_clear", i);
        cr_expect_eq(jobs[i].result.nodes, alone[i]->nodes, "engine %d after engine_clear", i);
        engine_destroy(&jobs[i].engine);
    }
}

Test(search, hash_resize)
{
    Engine *e = new_engine();
    cr_expect_eq(engine_set_hash(e, 1), 0);
    Board b;
    setup(&b, MATE_IN_ONE);
    SearchLimits l = depth_limits(3);
    SearchResult r;
    engine_search(e, &b, &l, NULL, NULL, &r);
    cr_expect_eq(r.score, MATE - 1, "a 1 MB table still finds the mate");
    engine_destroy(&e);
    engine_destroy(&e); /* safe on NULL */
    engine_destroy(NULL);
}

Test(search, score_text)
{
    char buf[32];
    search_score_text(35, buf, sizeof buf);
    cr_expect_str_eq(buf, "cp 35");
    search_score_text(-120, buf, sizeof buf);
    cr_expect_str_eq(buf, "cp -120");
    search_score_text(MATE - 1, buf, sizeof buf);
    cr_expect_str_eq(buf, "mate 1");
    search_score_text(MATE - 3, buf, sizeof buf);
    cr_expect_str_eq(buf, "mate 2");
    search_score_text(-(MATE - 2), buf, sizeof buf);
    cr_expect_str_eq(buf, "mate -1");
}

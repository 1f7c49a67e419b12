/*
 * Lazy SMP (search.h engine_set_threads): several threads search and stop
 * many times -- by engine_stop after random short waits, by depth, by
 * movetime, by node limit, through the protocol with quit in the middle
 * of a search -- and each time the move is legal; and the choice of the
 * move among the threads (engine_pick_thread).  Built with
 * -DXQF_TSAN=ON this suite is the ThreadSanitizer check of the shared
 * table and the helpers' start and stop.
 *
 * A plain program, not a Criterion suite: Criterion's runner (its
 * BoxFort arena at a fixed address) crashes under ThreadSanitizer before
 * any test runs.  Exit status 0 when every check held; TSan itself exits
 * 66 after reporting a race.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fen.h"
#include "movegen.h"
#include "protocol.h"
#include "search.h"

static int failures;

/* A failed check: where, what, and the caller's explanation. */
static void failed(int line, const char *cond, bool fatal, const char *fmt, ...)
{
    fprintf(stderr, "test_search_smp.c:%d: %s", line, cond);
    if (*fmt) {
        va_list ap;
        va_start(ap, fmt);
        fputs(": ", stderr);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
    failures++;
    if (fatal)
        exit(1);
}

#define EXPECT(cond, ...) ((cond) ? (void)0 : failed(__LINE__, #cond, false, "" __VA_ARGS__))
#define REQUIRE(cond, ...) ((cond) ? (void)0 : failed(__LINE__, #cond, true, "" __VA_ARGS__))

#define MIDDLEGAME "1rbak4/c4n2r/2na5/2N6/p1b3P1p/3C4P/P1P1P2C1/N7B/4A3R/R1BA1K3 w - - 5 31"
#define START_FEN "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"

static void setup(Board *b, const char *fen)
{
    char err[256] = "";
    REQUIRE((fen_parse(b, fen, FEN_GAME, err, sizeof err)) == (0), "cannot parse '%s': %s", fen, err);
}

static Engine *engine_with_threads(int threads)
{
    Engine *e = engine_new();
    REQUIRE(e);
    REQUIRE((engine_set_threads(e, threads)) == (0));
    REQUIRE((engine_threads(e)) == (threads));
    return e;
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

typedef struct {
    Engine *engine;
    const Board *board;
    SearchLimits limits;
    SearchResult result;
} Job;

static void *run_job(void *arg)
{
    Job *job = arg;
    engine_search(job->engine, job->board, &job->limits, NULL, NULL, &job->result);
    return NULL;
}

static void expect_legal(const Board *b, Move m, const char *what, int round)
{
    Board copy = *b;
    EXPECT(m != MOVE_NONE && movegen_is_legal(&copy, m), "%s, round %d: move %d is not legal", what, round, m);
}

static void threads_option_bounds(void)
{
    Engine *e = engine_with_threads(1);
    EXPECT((engine_set_threads(e, 0)) == (-1));
    EXPECT((engine_set_threads(e, ENGINE_MAX_THREADS + 1)) == (-1));
    EXPECT((engine_threads(e)) == (1));
    EXPECT((engine_set_threads(e, 5)) == (0));
    EXPECT((engine_set_threads(e, 2)) == (0));
    EXPECT((engine_threads(e)) == (2));
    engine_destroy(&e);
    engine_destroy(&e); /* safe twice */
}

/* Infinite searches with 4 threads stopped after 0-30 ms, 30 times: a legal move each time. */
static void start_stop_loop(void)
{
    static Board b;
    setup(&b, MIDDLEGAME);
    Engine *e = engine_with_threads(4);
    srand(7);
    for (int round = 0; round < 30; round++) {
        Job job = { e, &b, { 0 }, { 0 } };
        search_limits_init(&job.limits);
        job.limits.infinite = true;
        engine_reset_stop(e);
        pthread_t t;
        REQUIRE((pthread_create(&t, NULL, run_job, &job)) == (0));
        sleep_ms(rand() % 31);
        engine_stop(e);
        pthread_join(t, NULL);
        expect_legal(&b, job.result.best, "stopped", round);
    }
    engine_destroy(&e);
}

/* go depth, go movetime and go nodes with 1 to 4 threads end by themselves, with legal moves. */
static void limits_end_the_search(void)
{
    static Board b;
    setup(&b, START_FEN);
    for (int threads = 1; threads <= 4; threads++) {
        Engine *e = engine_with_threads(threads);
        for (int round = 0; round < 3; round++) {
            SearchLimits l;
            SearchResult r;
            search_limits_init(&l);
            l.depth = 6 + round;
            engine_search(e, &b, &l, NULL, NULL, &r);
            expect_legal(&b, r.best, "depth", round);
            EXPECT((r.depth) == (l.depth), "go depth %d with %d threads reached %d", l.depth, threads, r.depth);

            search_limits_init(&l);
            l.movetime = 50 + 50 * round;
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            engine_search(e, &b, &l, NULL, NULL, &r);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            int64_t ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
            expect_legal(&b, r.best, "movetime", round);
            EXPECT((ms) < (l.movetime + 1000), "movetime %lld took %lld ms", (long long)l.movetime, (long long)ms);

            search_limits_init(&l);
            l.nodes = 5000;
            engine_search(e, &b, &l, NULL, NULL, &r);
            expect_legal(&b, r.best, "nodes", round);
        }
        engine_clear(e);
        engine_destroy(&e);
    }
}

/* Through the protocol: Threads set and refused, go/stop loops, and quit while searching. */
static void protocol_quit_during_search(void)
{
    static const char script[] =
        "uci\n"
        "setoption name Threads value 0\n"
        "setoption name Threads value 257\n"
        "setoption name Threads value 3\n"
        "position startpos\n"
        "go infinite\n"
        "setoption name Threads value 1\n"
        "stop\n"
        "go depth 5\n"
        "isready\n"
        "stop\n"
        "go movetime 30\n"
        "isready\n"
        "stop\n"
        "go ponder wtime 2000 btime 2000\n"
        "ponderhit\n"
        "isready\n"
        "stop\n"
        "position startpos moves h2e2\n"
        "go infinite\n"
        "quit\n";
    for (int round = 0; round < 5; round++) {
        FILE *in = fmemopen((void *)script, sizeof script - 1, "r");
        char *text = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&text, &len);
        REQUIRE(in && out);
        REQUIRE((protocol_run(in, out)) == (0));
        fclose(in);
        fclose(out);
        int refused = 0, bestmoves = 0;
        for (const char *p = text; (p = strstr(p, "option Threads needs")); p++)
            refused++;
        for (const char *p = text; (p = strstr(p, "\nbestmove ")); p++)
            bestmoves++;
        EXPECT((refused) == (2), "round %d: %s", round, text);
        EXPECT(strstr(text, "'setoption' is not allowed while searching"), "round %d: %s", round, text);
        /* go infinite + stop, go depth, go movetime, ponder + ponderhit, and the one quit ended */
        EXPECT((bestmoves) == (5), "round %d: %d bestmoves in %s", round, bestmoves, text);
        free(text);
    }
}

/* With a net, each helper evaluates on its own accumulator stack: searches end with legal moves. */
static void helpers_with_a_net(void)
{
    static Board b;
    setup(&b, MIDDLEGAME);
    NnueNet *net = nnue_new();
    REQUIRE(net);
    uint64_t x = 12345;
    for (int f = 0; f < NNUE_FEATURES; f++)
        for (int i = 0; i < NNUE_HIDDEN; i++) {
            x = x * 6364136223846793005u + 1442695040888963407u;
            net->w1[f][i] = (int16_t)((int)(x >> 33) % 97 - 48);
        }
    for (int o = 0; o < NNUE_OUTPUT_BUCKETS; o++)
        for (int i = 0; i < 2 * NNUE_HIDDEN; i++)
            net->w2[o][i] = (int16_t)(i % 7 - 3);
    Engine *e = engine_with_threads(3);
    REQUIRE((engine_set_net(e, net)) == (0));
    nnue_destroy(&net);
    for (int round = 0; round < 5; round++) {
        Job job = { e, &b, { 0 }, { 0 } };
        search_limits_init(&job.limits);
        job.limits.depth = 8;
        engine_reset_stop(e);
        pthread_t t;
        REQUIRE((pthread_create(&t, NULL, run_job, &job)) == (0));
        if (round % 2)
            engine_stop(e);
        pthread_join(t, NULL);
        expect_legal(&b, job.result.best, "with a net", round);
    }
    engine_destroy(&e);
}

/* A thread's result: its move (any nonzero number here), score and depth. */
static SearchResult thread_result(Move best, int score, int depth)
{
    return (SearchResult){ .best = best, .score = score, .depth = depth };
}

/* The move played among the threads' results: Stockfish 9's rule, then the vote by score and depth. */
static void thread_choice(void)
{
    EXPECT((engine_pick_thread(NULL, 0, true)) == (-1));
    const SearchResult alone[] = { thread_result(1, 20, 10) };
    EXPECT((engine_pick_thread(alone, 1, false)) == (0));
    EXPECT((engine_pick_thread(alone, 1, true)) == (0));

    /* a helper as deep with a better score: the vote takes it, Stockfish 9 needs it deeper */
    const SearchResult as_deep[] = { thread_result(1, 20, 10), thread_result(2, 40, 10) };
    EXPECT((engine_pick_thread(as_deep, 2, false)) == (0));
    EXPECT((engine_pick_thread(as_deep, 2, true)) == (1));
    const SearchResult deeper[] = { thread_result(1, 20, 10), thread_result(2, 30, 11), thread_result(3, 10, 14) };
    EXPECT((engine_pick_thread(deeper, 3, false)) == (1));

    /* votes add up: two threads on a move outweigh a deeper, better one alone; one does not */
    const SearchResult pair[] = { thread_result(1, 50, 12), thread_result(2, 40, 10), thread_result(2, 40, 10) };
    EXPECT((engine_pick_thread(pair, 2, true)) == (0), "(10 + 14) x 12 = 288 against 14 x 10");
    EXPECT((engine_pick_thread(pair, 3, true)) == (0), "288 against 280");
    const SearchResult three[] = { thread_result(1, 50, 12), thread_result(2, 40, 10), thread_result(2, 40, 10),
                                   thread_result(2, 40, 10) };
    EXPECT((engine_pick_thread(three, 4, true)) == (1), "288 against 420: the first thread of the move");

    /* a proven mate is kept against any vote, and a shorter one replaces it */
    const SearchResult mates[] = { thread_result(1, MATE - 9, 8), thread_result(2, 300, 30), thread_result(2, 300, 30),
                                   thread_result(3, MATE - 5, 6) };
    EXPECT((engine_pick_thread(mates, 3, true)) == (0));
    EXPECT((engine_pick_thread(mates, 4, true)) == (3));
    /* a helper that finds a mate wins; one that sees itself mated does not, however deep */
    const SearchResult finds[] = { thread_result(1, 100, 20), thread_result(2, MATE - 7, 9) };
    EXPECT((engine_pick_thread(finds, 2, true)) == (1));
    const SearchResult mated[] = { thread_result(1, -(MATE - 20), 9), thread_result(2, -(MATE - 8), 30),
                                   thread_result(2, -(MATE - 8), 30) };
    EXPECT((engine_pick_thread(mated, 3, true)) == (0));
}

/* ThreadVote on: searches with 2 and 4 threads stopped by the clock or a node limit play legal moves. */
static void voting_threads_play_legal_moves(void)
{
    static Board b;
    setup(&b, MIDDLEGAME);
    for (int threads = 2; threads <= 4; threads += 2) {
        Engine *e = engine_with_threads(threads);
        Params p = *engine_params(e);
        char err[128];
        REQUIRE((params_set(&p, "ThreadVote", "1", err, sizeof err)) == (0), "%s", err);
        engine_set_params(e, &p);
        for (int round = 0; round < 4; round++) {
            SearchLimits l;
            SearchResult r;
            search_limits_init(&l);
            if (round % 2)
                l.movetime = 40;
            else
                l.nodes = 20000;
            engine_search(e, &b, &l, NULL, NULL, &r);
            expect_legal(&b, r.best, "voted", round);
            EXPECT((r.depth) > (0));
        }
        engine_destroy(&e);
    }
}

int main(void)
{
    fprintf(stderr, "thread_choice\n");
    thread_choice();
    fprintf(stderr, "voting_threads_play_legal_moves\n");
    voting_threads_play_legal_moves();
    fprintf(stderr, "threads_option_bounds\n");
    threads_option_bounds();
    fprintf(stderr, "start_stop_loop\n");
    start_stop_loop();
    fprintf(stderr, "limits_end_the_search\n");
    limits_end_the_search();
    fprintf(stderr, "protocol_quit_during_search\n");
    protocol_quit_during_search();
    fprintf(stderr, "helpers_with_a_net\n");
    helpers_with_a_net();
    if (failures)
        fprintf(stderr, "%d checks failed\n", failures);
    return failures ? 1 : 0;
}

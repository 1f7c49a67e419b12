/*
 * Every game kept and the trust in workers (docs/programs/xqf-tune.md) against a real
 * PostgreSQL (XQF_TEST_DB; the database tests skip without it):
 *  - an SPRT played by two real workers keeps every game once (the audit
 *    checks them against the counts), moves only or with scores and
 *    depths (--keep-scores); xqf-tune pgn writes them, by task and by
 *    worker; a 120-ply game's row is under 300 bytes;
 *  - each worker's games, faults, disconnects and residual; a worker whose
 *    results differ from the others' is flagged (show, --status, report);
 *  - xqf-tune purge takes a worker's results out of an SPRT with counts,
 *    games and LLR consistent and the purge in the run's history; SPSA
 *    refused;
 *  - the replay audit: on a clean cluster every replayed pair agrees; a
 *    worker playing other parameters than it is told (a broken machine)
 *    is caught: both workers of each differing pair are flagged;
 *  - the search audit of runs on a clock: a worker that makes up moves
 *    is flagged; xqf-tune audit --active audits each worker due once, as
 *    the auditor's role; a side's registered net is searched with, an
 *    SPSA task's own sets, a build of ours (in the sandbox, which a
 *    hostile build does not leave);
 *  - bad input (unknown run, task, worker) gets exit status 2 and changes
 *    nothing.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "cluster_util.h"
#include "fen.h"
#include "game.h"
#include "gamepack.h"
#include "games.h"
#include "movegen.h"
#include "player.h"
#include "rng.h"
#include "residual.h"
#include "sandbox.h"
#include "stats.h"
#include "status.h"
#include "store_builds.h"
#include "store_games.h"
#include "store_runs.h"
#include "store_spsa.h"
#include "store_tasks.h"
#include "store_test.h"
#include "store_users.h"
#include "worker.h"
#include "worker_transport.h"

TestSuite(games, .init = cu_fixture_init, .fini = cu_fixture_fini, .timeout = 300);

/* Runs xqf-tune with args (a shell fragment); its stdout in out. Returns the exit status. */
static int tune(char *out, size_t size, const char *args)
{
    int st = cu_tune(out, size, args, cu_fx.logfile);
    cr_assert_geq(st, -1, "cannot run xqf-tune");
    return st;
}

/* How many times needle occurs in the file at path. */
static int count_in_file(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    cr_assert(f, "cannot open %s", path);
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f))
        for (const char *p = line; (p = strstr(p, needle)); p++)
            n++;
    fclose(f);
    return n;
}

/* ---- the residual (no database) ------------------------------------------------ */

Test(games, residual_of_workers)
{
    /* the normal quantile: 1.96 for an upper tail of 2.5 %, and far tails */
    cr_assert_float_eq(xqf_normal_isf_log(log(0.025)), 1.959964, 1e-4);
    cr_assert_float_eq(xqf_normal_isf_log(log(0.5)), 0.0, 1e-6);
    cr_assert(xqf_normal_isf_log(-1000) > 40);
    /* workers playing alike: small residuals; one losing every pair: far above the flag */
    XqfResidualRow rows[4] = {
        { .penta = { 10, 20, 20, 20, 10 } }, { .penta = { 12, 18, 22, 18, 10 } },
        { .penta = { 8, 22, 20, 20, 10 } }, { .penta = { 80, 0, 0, 0, 0 } },
    };
    double chi2, p;
    cr_assert_eq(xqf_residuals(rows, 4, &chi2, &p), 4);
    for (int i = 0; i < 3; i++)
        cr_assert(rows[i].used && rows[i].z < 3, "worker %d: residual %g", i, rows[i].z);
    cr_assert(rows[3].z > XQF_RESIDUAL_FLAG, "the bad worker: residual %g", rows[3].z);
    cr_assert(p < 1e-6, "p %g", p);
    /* the same three alone: no flag, p not small */
    cr_assert_eq(xqf_residuals(rows, 3, &chi2, &p), 3);
    cr_assert(p > 0.5, "p %g", p);
    /* too few pairs for the test: left out */
    XqfResidualRow few[2] = { { .penta = { 1, 1, 1, 1, 1 } }, { .penta = { 1, 0, 2, 1, 1 } } };
    cr_assert_eq(xqf_residuals(few, 2, &chi2, &p), 0);
    cr_assert(isnan(few[0].z) && !few[0].used && isnan(chi2));
    /* faults: Fishtest's rule */
    cr_assert(xqf_faults_flag(100, 4, 0));
    cr_assert(!xqf_faults_flag(100, 3, 10));
    cr_assert(xqf_faults_flag(100, 0, 11));
    cr_assert(!xqf_faults_flag(20, 0, 10));
    /* the reasons trust counts are GameReason's */
    cr_assert_eq(STORE_REASON_CRASH, GAME_CRASH);
    cr_assert_eq(STORE_REASON_TIME_FORFEIT, GAME_TIME_FORFEIT);
    cr_assert_eq(STORE_REASON_ILLEGAL_MOVE, GAME_ILLEGAL_MOVE);
}

/* ---- records of given results, reported through the store ------------------------- */

/* A game of plies moves from the start (legal ones, cycling when it can), with result. */
static void game_of(GameRecord *g, int plies, GameResult result)
{
    game_record_init(g);
    snprintf(g->fen, sizeof g->fen, "%s", "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1");
    Board b;
    char err[64];
    cr_assert_eq(fen_parse(&b, g->fen, FEN_GAME, err, sizeof err), 0);
    g->moves = calloc((size_t)plies + 1, sizeof *g->moves);
    g->capacity = plies + 1;
    for (int i = 0; i < plies; i++) {
        MoveList l;
        movegen_legal(&b, &l);
        cr_assert_gt(l.count, 0);
        Move m = l.moves[(i * 7) % l.count];
        g->moves[g->count++] = (GameMove){ .move = m, .book = i < 4 };
        board_make(&b, m);
    }
    g->result = result;
    g->reason = result == RESULT_DRAW ? GAME_REPETITION : GAME_CHECKMATE;
}

/* The results of the two games of a pair scoring cell (LL .. WW) for the first player. */
static void pair_results(int cell, GameResult out[2])
{
    /* game 0: first player Red; game 1: first player Black */
    static const int POINTS[5][2] = { { 0, 0 }, { 0, 1 }, { 1, 1 }, { 2, 1 }, { 2, 2 } };
    for (int g = 0; g < 2; g++) {
        int pts = POINTS[cell][g];
        out[g] = pts == 1 ? RESULT_DRAW : (pts == 2) == (g == 0) ? RESULT_RED_WINS : RESULT_BLACK_WINS;
    }
}

/*
 * Reports under lease l the pairs of penta (cell counts, in cell order)
 * with their games' records, crashes of them ending by a crash.  Returns the status.
 */
static StoreReport report_pairs(int64_t worker, const StoreLease *l, const int64_t penta[5], int crashes)
{
    PackBuf buf = { 0 };
    StoreCounts c = { .nreasons = GAME_REASONS };
    for (int cell = 0; cell < 5; cell++)
        for (int64_t k = 0; k < penta[cell]; k++) {
            GameResult res[2];
            pair_results(cell, res);
            for (int g = 0; g < 2; g++) {
                GameRecord rec;
                game_of(&rec, 12, res[g]);
                if (crashes > 0 && res[g] != RESULT_DRAW) {
                    rec.reason = GAME_CRASH;
                    crashes--;
                }
                c.reasons[rec.reason]++;
                c.wins += (res[g] == RESULT_RED_WINS) == (g == 0) && res[g] != RESULT_DRAW;
                c.draws += res[g] == RESULT_DRAW;
                c.losses += (res[g] == RESULT_BLACK_WINS) == (g == 0) && res[g] != RESULT_DRAW;
                cr_assert_eq(gamepack_append(&rec, XQF_GAME_MOVES, &buf), 0);
                game_record_free(&rec);
            }
            c.pairs++;
            c.penta[cell]++;
        }
    StoreReportItem it = { .worker = worker, .task = l->task_id, .token = l->token, .counts = c,
                           .games = buf.data, .games_len = buf.len };
    cr_assert_eq(store_report_batch(cu_fx.store, &it, 1, 60000), 0);
    pack_buf_free(&buf);
    return it.status;
}

/* An SPRT run of tasks of `per_task` pairs (no worker plays it: the test reports). */
static int64_t sprt_run(int per_task)
{
    const char *book[8];
    cr_assert_eq(cu_book(book, 8), 8);
    StoreSprtSpec sp = { .name = "trust", .test_params = "NullR=2", .base_params = "", .book_name = "default.book",
                         .book = book, .book_lines = 8, .seed = 1, .nodes = 500, .margin_ms = 100,
                         .pairs_per_task = per_task, .max_pairs = 100000, .elo0 = 0, .elo1 = 5,
                         .alpha = 0.05, .beta = 0.05 };
    int64_t id;
    cr_assert_eq(store_create_sprt(cu_fx.store, &sp, &id), 0);
    return id;
}

/*
 * A copy of the fake engine (tests/fake_engine.c: with no argument it
 * plays random moves, `bench` prints a signature) as an unsigned engine
 * build, its bench signature recorded: games of hundreds of plies.
 */
static int64_t random_engine_build(void)
{
    StoreBuild b = { .bench_nodes = 4242 };
    cr_assert_eq(cu_sha256(FAKE_ENGINE, b.sha256), 0);
    snprintf(b.build_id, sizeof b.build_id, "random-%.12s", b.sha256);
    snprintf(b.path, sizeof b.path, "%s", FAKE_ENGINE);
    int64_t id = cu_build_add(cu_fx.store, &b);
    cr_assert_gt(id, 0);
    return id;
}

/*
 * The long games' tests are disabled under AddressSanitizer: 20 s in the
 * Release build, several times that there.  Disabled, not skipped in their
 * body: Criterion's parallel runner (--jobs 2) leaks a skip's message
 * (48 bytes, LeakSanitizer fails the suite) when the skip lands while
 * another test runs.
 */
#ifdef __SANITIZE_ADDRESS__
#define LONG_GAMES .disabled = true, .description = "games of 1,300 plies: too slow under AddressSanitizer"
#else
#define LONG_GAMES .disabled = false
#endif

/* A fixed-games run of the random engine against itself, no adjudication, scores and depths kept. */
static int64_t long_games_run(int pairs_per_task, int64_t pairs)
{
    int64_t build = random_engine_build();
    const char *book[CU_BOOK_MAX];
    int n = cu_book(book, 100);
    cr_assert_gt(n, 0);
    StoreAdjudication none = { 0 };
    StoreSprtSpec spec = { .name = "long games", .test_params = "", .base_params = "", .book_name = "default.book",
                           .book = book, .book_lines = n, .seed = 3, .nodes = 1, .margin_ms = 100,
                           .adjudication = &none, .pairs_per_task = pairs_per_task, .max_pairs = pairs,
                           .test_build = build, .base_build = build };
    int64_t run;
    cr_assert_eq(store_create_games(cu_fx.store, &spec, &run), 0);
    cr_assert_eq(store_set_game_scores(cu_fx.store, run, true), 0);
    char cache[300];
    snprintf(cache, sizeof cache, "%s/cache", cu_fx.dir);
    setenv("XQF_CACHE", cache, 1);
    return run;
}

/* Checks that every game of the finished run is stored and counted once, and that they are more than a frame. */
static void audit_long_games(int64_t run, int64_t pairs, const char *what)
{
    StoreRun r;
    char why[256];
    cr_assert(cu_wait_finished(cu_fx.store, run, 400, &r), "run did not finish (log: %s)", cu_fx.logfile);
    cr_assert(cu_audit(cu_fx.store, run, pairs, why, sizeof why), "%s (log: %s)", why, cu_fx.logfile);
    StoreGameTotals t;
    cr_assert_eq(store_game_totals(cu_fx.store, run, &t), 0);
    cr_assert_eq(t.games, 2 * pairs);
    fprintf(stderr, "FIGURE: %s: %lld games stored once, %.0f plies a game, %.0f KiB of records\n", what,
            (long long)t.games, (double)t.plies / (double)t.games, (double)(5 * t.plies + 70 * t.games) / 1024);
    cr_assert_gt(5 * t.plies, 1 << 20, "the games are not over a frame: %lld plies", (long long)t.plies);
}

/*
 * A task whose games are more than a frame holds (128 pairs of games of
 * about 1,300 plies with scores and depths: over 1 MiB), played while the
 * coordinator is stopped (until the worker logs that its games fill a
 * result, not for a fixed time: a loaded machine plays fewer games in
 * it): the worker reports them in several results,
 * each as full as a frame allows, and every game is stored and counted
 * once.  With protocol 6 the reports past the first 768 KiB of the task's
 * games went without them: counted, not stored.
 */
Test(games, a_task_whose_games_exceed_a_frame_keeps_them_all, LONG_GAMES, .timeout = 600)
{
    CU_REQUIRE_DB();
    int64_t run = long_games_run(128, 128);
    pid_t coordinator = cu_track(cu_coordinator(cu_fx.db_coordinator, cu_fx.port, "300", cu_fx.logfile));
    const char *extra[] = { "--allow-unsigned", NULL };
    cu_track(cu_worker_args(cu_fx.port, "w1", 2, cu_fx.logfile, extra));
    cr_assert(cu_wait_pairs(cu_fx.store, run, 1, 120), "no pair reported (log: %s)", cu_fx.logfile);
    cr_assert_eq(kill(coordinator, SIGSTOP), 0);
    /* Stopped until the worker has more games than a result holds (however loaded the machine is). */
    int waited = 0;
    while (count_in_file(cu_fx.logfile, "which fill a result") == 0 && waited < 400) {
        sleep(1);
        waited++;
    }
    cr_assert_eq(kill(coordinator, SIGCONT), 0);
    cr_assert_lt(waited, 400, "no report cut: the worker never had a result's worth of games (log: %s)", cu_fx.logfile);
    audit_long_games(run, 128, "a task of 128 pairs of long games, the coordinator stopped until they fill a result");
}

/* The same with the worker killed half-way: its lease runs out, another worker plays the rest. */
Test(games, long_games_of_a_killed_worker_counted_once, LONG_GAMES, .timeout = 600)
{
    CU_REQUIRE_DB();
    int64_t run = long_games_run(64, 128);
    cu_track(cu_coordinator(cu_fx.db_coordinator, cu_fx.port, "5", cu_fx.logfile));
    const char *extra[] = { "--allow-unsigned", NULL };
    pid_t w1 = cu_track(cu_worker_args(cu_fx.port, "w1", 2, cu_fx.logfile, extra));
    cr_assert(cu_wait_pairs(cu_fx.store, run, 24, 200), "no pair reported (log: %s)", cu_fx.logfile);
    cu_kill9(w1);
    cu_track(cu_worker_args(cu_fx.port, "w2", 2, cu_fx.logfile, extra));
    audit_long_games(run, 128, "128 pairs of long games, a worker killed half-way");
}

/*
 * A set its build refuses is never played without the option: here NullR,
 * which this project's table knows and the fake engine does not (a build
 * registered before builds recorded their parameters: xqf-tune checked
 * the set against the table).  The worker hands each try back refused
 * with the build's words, no result is recorded, and the coordinator
 * quarantines the task as any task no worker can play (which ends the
 * run: it has no other).
 */
Test(games, a_set_its_build_refuses_is_handed_back_and_never_counted)
{
    CU_REQUIRE_DB();
    int64_t build = random_engine_build();
    const char *book[CU_BOOK_MAX];
    int n = cu_book(book, 4);
    cr_assert_gt(n, 0);
    StoreSprtSpec spec = { .name = "refused", .test_params = "NullR=2", .base_params = "", .book_name = "default.book",
                           .book = book, .book_lines = n, .seed = 1, .nodes = 100, .margin_ms = 100,
                           .pairs_per_task = 2, .max_pairs = 2, .elo0 = -500, .elo1 = 500, .alpha = 0.05,
                           .beta = 0.05, .test_build = build };
    int64_t run;
    cr_assert_eq(store_create_sprt(cu_fx.store, &spec, &run), 0);
    char cache[300];
    snprintf(cache, sizeof cache, "%s/cache", cu_fx.dir);
    setenv("XQF_CACHE", cache, 1);
    cu_track(cu_coordinator(cu_fx.db_coordinator, cu_fx.port, "30", cu_fx.logfile));
    const char *extra[] = { "--allow-unsigned", NULL };
    cu_track(cu_worker_args(cu_fx.port, "w1", 1, cu_fx.logfile, extra));
    StoreRun r;
    cr_assert(cu_wait_finished(cu_fx.store, run, 120, &r), "the run did not end (log: %s)", cu_fx.logfile);
    cr_assert_eq(r.quarantined, 1, "the task was not set aside (log: %s)", cu_fx.logfile);
    cr_assert_str_eq(r.state, "stopped", "its one task quarantined, the run ends");
    cr_assert_eq(r.counts.pairs, 0, "a pair was counted");
    StoreGameTotals t;
    cr_assert_eq(store_game_totals(cu_fx.store, run, &t), 0);
    cr_assert_eq(t.games, 0, "a game was stored");
    StoreQuarantined *q = NULL;
    cr_assert_eq(store_quarantined(cu_fx.store, run, &q), 1);
    cr_assert(strstr(q[0].reasons, "test: option NullR=2 refused: unknown option 'NullR'"), "reasons: %s",
              q[0].reasons);
    free(q);
    cr_assert_gt(count_in_file(cu_fx.logfile, ": test: option NullR=2 refused"), 0,
                 "the coordinator's log (%s)", cu_fx.logfile);
}

/* Worker w1 says hello (its id in *w) and gets a lease of run. */
static StoreLease first_lease(int64_t run, int64_t *w)
{
    cr_assert_eq(store_hello(cu_fx.store, "w1", "", 1, 1, "", w), 1);
    StoreLease l;
    bool given;
    cr_assert_eq(store_claim_batch(cu_fx.store, run, w, 1, 60000, &l, &given), 1);
    return l;
}

/* Reports under lease l `pairs` drawn pairs with the records of pairs from .. pairs - 1, game i of 10 + i plies. */
static StoreReport report_from(int64_t worker, const StoreLease *l, int64_t pairs, int64_t from)
{
    PackBuf buf = { 0 };
    for (int64_t i = 2 * from; i < 2 * pairs; i++) {
        GameRecord rec;
        game_of(&rec, 10 + (int)i, RESULT_DRAW);
        cr_assert_eq(gamepack_append(&rec, XQF_GAME_MOVES, &buf), 0);
        game_record_free(&rec);
    }
    StoreCounts c = { .pairs = pairs, .draws = 2 * pairs, .penta = { 0, 0, pairs, 0, 0 }, .nreasons = GAME_REASONS };
    c.reasons[GAME_REPETITION] = 2 * pairs;
    StoreReportItem it = { .worker = worker, .task = l->task_id, .token = l->token, .counts = c,
                           .games = buf.data, .games_len = buf.len, .games_from = from };
    cr_assert_eq(store_report_batch(cu_fx.store, &it, 1, 60000), 0);
    pack_buf_free(&buf);
    return it.status;
}

/* Each stored game of a run has 10 + its index plies (report_from); counts them in *ctx. */
static int check_place(void *ctx, int64_t game, const uint8_t *rec, size_t len)
{
    int plies;
    cr_assert(xqf_game_check(rec, len, &plies));
    cr_assert_eq(plies, 10 + game, "game %lld has %d plies", (long long)game, plies);
    ++*(int *)ctx;
    return 0;
}

/*
 * Results in several parts (protocol 7): each carries the records of its
 * pairs from games_from on; they land on their games, a part repeated
 * stores nothing new, and one starting past the pairs its lease reported
 * (games counted without records) is invalid.
 */
Test(games, results_in_parts_store_each_game_once)
{
    CU_REQUIRE_DB();
    int64_t run = sprt_run(6), w;
    StoreLease l = first_lease(run, &w);
    cr_assert_eq(report_from(w, &l, 2, 0), REPORT_ACCEPTED);
    cr_assert_eq(report_from(w, &l, 4, 3), REPORT_INVALID, "pair 2's games would be counted without records");
    cr_assert_eq(report_from(w, &l, 4, 5), REPORT_INVALID, "games_from past pairs");
    cr_assert_eq(report_from(w, &l, 4, 2), REPORT_ACCEPTED);
    cr_assert_eq(report_from(w, &l, 4, 1), REPORT_DUPLICATE);
    cr_assert_eq(report_from(w, &l, 6, 3), REPORT_ACCEPTED, "records of pairs acknowledged again are kept once");
    int games = 0;
    cr_assert_eq(store_each_game(cu_fx.store, run, 0, 0, check_place, &games), 0);
    cr_assert_eq(games, 12);
    char why[256];
    cr_assert(cu_audit(cu_fx.store, run, -1, why, sizeof why), "%s", why);
}

Test(games, a_120_ply_game_is_under_300_bytes)
{
    CU_REQUIRE_DB();
    int64_t run = sprt_run(1), w;
    StoreLease l = first_lease(run, &w);
    PackBuf buf = { 0 };
    for (int g = 0; g < 2; g++) {
        GameRecord rec;
        game_of(&rec, 120, RESULT_DRAW);
        cr_assert_eq(gamepack_append(&rec, XQF_GAME_MOVES, &buf), 0);
        game_record_free(&rec);
    }
    StoreCounts c = { .pairs = 1, .draws = 2, .penta = { 0, 0, 1, 0, 0 }, .nreasons = GAME_REASONS };
    c.reasons[GAME_REPETITION] = 2;
    StoreReportItem it = { .worker = w, .task = l.task_id, .token = l.token, .counts = c, .games = buf.data,
                           .games_len = buf.len };
    cr_assert_eq(store_report_batch(cu_fx.store, &it, 1, 60000), 0);
    cr_assert_eq(it.status, REPORT_ACCEPTED);
    StoreGameTotals t;
    cr_assert_eq(store_game_totals(cu_fx.store, run, &t), 0);
    cr_assert_eq(t.games, 2);
    cr_assert_eq(t.plies, 240);
    double per_game = (double)t.bytes / 2;
    cr_log_info("a 120-ply game: %zu bytes on the wire, %.0f bytes in its row, its FEN %lld bytes once per run",
                buf.len / 2, per_game, (long long)t.fen_bytes);
    fprintf(stderr, "FIGURE: a 120-ply game: %zu bytes on the wire (with its FEN and length), %.0f bytes in its row "
                    "(pg_column_size), start FEN kept once: %lld bytes\n",
            buf.len / 2, per_game, (long long)t.fen_bytes);
    cr_assert_lt(per_game, 300, "%.0f bytes per game", per_game);
    pack_buf_free(&buf);
}

Test(games, trust_flags_a_worker_and_purge_takes_it_out)
{
    CU_REQUIRE_DB();
    int64_t run = sprt_run(80), w[4];
    const char *names[4] = { "good-1", "good-2", "good-3", "bad" };
    for (int i = 0; i < 4; i++)
        cr_assert_eq(store_hello(cu_fx.store, names[i], "", 1, 1, "", &w[i]), 1);
    StoreLease l[4];
    bool given[4];
    cr_assert_eq(store_claim_batch(cu_fx.store, run, w, 4, 60000, l, given), 4);
    const int64_t alike[3][5] = { { 10, 20, 20, 20, 10 }, { 12, 18, 22, 18, 10 }, { 8, 22, 20, 20, 10 } };
    const int64_t lost[5] = { 80, 0, 0, 0, 0 };
    for (int i = 0; i < 3; i++)
        cr_assert_eq(report_pairs(w[i], &l[i], alike[i], 0), REPORT_ACCEPTED);
    cr_assert_eq(report_pairs(w[3], &l[3], lost, 5), REPORT_ACCEPTED);
    /* a lease of good-1 runs out: a disconnect */
    StoreLease late;
    bool got;
    cr_assert_eq(store_claim_batch(cu_fx.store, run, &w[0], 1, 1, &late, &got), 1);
    cr_assert_eq(store_expire_given(cu_fx.store, &late.task_id, &late.token, 1), 1);

    StoreWorkerTrust *t;
    cr_assert_eq(store_run_workers(cu_fx.store, run, &t), 4);
    /* by name: bad, good-1, good-2, good-3 */
    cr_assert_str_eq(t[0].name, "bad");
    cr_assert_eq(t[0].games, 160);
    cr_assert_eq(t[0].crashes, 5);
    cr_assert(t[0].flagged && t[0].residual > XQF_RESIDUAL_FLAG, "bad: residual %g", t[0].residual);
    for (int i = 1; i < 4; i++)
        cr_assert(!t[i].flagged && t[i].residual < 3, "%s: residual %g", t[i].name, t[i].residual);
    cr_assert_eq(t[1].disconnects, 1);
    cr_assert_eq(t[2].disconnects, 0);
    free(t);

    /* shown: xqf-tune show, the coordinator's status, the report */
    char out[16384], args[1024];
    snprintf(args, sizeof args, "show %lld", (long long)run);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    cr_assert(strstr(out, "Workers: 4"), "%s", out);
    const char *row = strstr(out, "  bad ");
    cr_assert(row && strstr(row, "FLAGGED") && strstr(row, "FLAGGED") < strchr(row, '\n'), "%s", out);
    XqfStrs workers = { 0 }, runs = { 0 };
    cr_assert_eq(status_lines(cu_fx.store, 5, &workers, &runs), 0);
    bool seen = false;
    for (uint32_t i = 0; i < runs.count; i++)
        seen = seen || (strstr(runs.v[i], "worker bad ") && strstr(runs.v[i], "crashes 5") &&
                        strstr(runs.v[i], "FLAGGED"));
    cr_assert(seen, "no flagged line for the bad worker in the status");
    xqf_strs_free(&workers);
    xqf_strs_free(&runs);
    char html[300];
    snprintf(html, sizeof html, "%s/report.html", cu_fx.dir);
    snprintf(args, sizeof args, "report %lld --html '%s'", (long long)run, html);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    cr_assert_eq(count_in_file(html, "<h2>Workers"), 1);
    cr_assert_eq(count_in_file(html, "flagged</b>"), 1);

    /* bad input: nothing changes */
    StoreRun before, after;
    cr_assert_eq(store_load_run(cu_fx.store, run, &before, false), 1);
    snprintf(args, sizeof args, "purge %lld --worker nobody", (long long)run);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    cr_assert_eq(tune(out, sizeof out, "purge 999999 --worker bad"), 2);
    snprintf(args, sizeof args, "purge %lld", (long long)run);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    cr_assert_eq(store_load_run(cu_fx.store, run, &after, false), 1);
    cr_assert_eq(after.counts.pairs, before.counts.pairs);

    /* the purge: the bad worker's 80 pairs and 160 games out, everything consistent */
    snprintf(args, sizeof args, "purge %lld --worker bad", (long long)run);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", out);
    cr_assert(strstr(out, "80 pairs, 160 games taken out"), "%s", out);
    cr_assert_eq(store_load_run(cu_fx.store, run, &after, false), 1);
    cr_assert_eq(after.counts.pairs, before.counts.pairs - 80);
    cr_assert_eq(after.counts.penta[0], before.counts.penta[0] - 80);
    char why[256];
    cr_assert(cu_audit(cu_fx.store, run, -1, why, sizeof why), "%s", why);
    StoreAudit a;
    cr_assert_eq(store_audit_run(cu_fx.store, run, &a), 1);
    cr_assert_eq(a.stored_games, 2 * after.counts.pairs);
    double llr;
    cr_assert_eq(xqf_llr_penta(after.counts.penta, 0, 5, &llr), XQF_STATS_OK);
    cr_assert_float_eq(after.llr, llr, 1e-9);
    /* in the run's history, and the worker gone from its trust table */
    snprintf(args, sizeof args, "psql -qAt '%s' -c \"SELECT detail FROM web_audit WHERE run_id = %lld AND "
                                "action = 'purge'\" > '%s/history' 2>> '%s'", cu_fx.db, (long long)run, cu_fx.dir, cu_fx.logfile);
    cr_assert_eq(system(args), 0);
    snprintf(args, sizeof args, "%s/history", cu_fx.dir);
    cr_assert_eq(count_in_file(args, "worker bad: 80 pairs, 160 games taken out"), 1);
    cr_assert_eq(store_run_workers(cu_fx.store, run, &t), 3);
    free(t);
    /* purged twice: nothing left to take out */
    snprintf(args, sizeof args, "purge %lld --worker bad", (long long)run);
    cr_assert_eq(tune(out, sizeof out, args), 2);
}

Test(games, purge_refuses_spsa)
{
    CU_REQUIRE_DB();
    const char *book[4];
    cr_assert_eq(cu_book(book, 4), 4);
    StoreSpsaParam q = { .name = "NullR", .start = 3, .min = 1, .max = 5, .c_end = 1, .r_end = 0.002 };
    StoreSpsaSpec sp = { .run = { .name = "spsa", .book_name = "default.book", .book = book, .book_lines = 4,
                                  .seed = 1, .nodes = 500, .margin_ms = 100, .pairs_per_task = 2, .max_pairs = 10 },
                         .alpha = 0.602, .gamma = 0.101, .a_ratio = 0.1, .params = &q, .count = 1 };
    int64_t run, w;
    cr_assert_eq(store_create_spsa(cu_fx.store, &sp, &run), 0);
    cr_assert_eq(store_hello(cu_fx.store, "w1", "", 1, 1, "", &w), 1);
    char out[4096], args[256];
    snprintf(args, sizeof args, "purge %lld --worker w1", (long long)run);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    FILE *f = fopen(cu_fx.logfile, "r");
    char line[1024], last[1024] = "";
    while (f && fgets(line, sizeof line, f))
        snprintf(last, sizeof last, "%s", line);
    if (f)
        fclose(f);
    cr_assert(strstr(last, "cannot be undone"), "%s", last);
}

/* ---- a real cluster: every game kept, PGN ------------------------------------------ */

/* Checks the records of a run: form, scores and depths when kept. */
typedef struct {
    bool scores;
    int64_t games, scored, deep;
    GameRecord g;
} FormCheck;

static int check_form(void *ctx, int64_t game, const uint8_t *rec, size_t len)
{
    FormCheck *f = ctx;
    char err[128];
    cr_assert_eq(gamepack_read(rec, len, &f->g, err, sizeof err), 0, "game %lld: %s", (long long)game, err);
    cr_assert_eq(xqf_game_ply_bytes(rec[0]), f->scores ? 5 : 2, "game %lld: form %d", (long long)game, rec[0]);
    for (int i = 0; i < f->g.count; i++) {
        f->scored += f->g.moves[i].has_score;
        f->deep += f->g.moves[i].depth > 0;
    }
    f->games++;
    return 0;
}

Test(games, every_game_of_an_sprt_kept_and_written_as_pgn)
{
    CU_REQUIRE_DB();
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 4, 12, 500, -500, 500);
    int64_t scored = cu_sprt(cu_fx.store, "NullR=2", 2, 2, 500, -500, 500);
    cr_assert_eq(store_set_game_scores(cu_fx.store, scored, true), 0);
    cu_track(cu_coordinator(cu_fx.db_coordinator, cu_fx.port, "10", cu_fx.logfile));
    cu_track(cu_worker(cu_fx.port, "w1", 1, cu_fx.logfile));
    cu_track(cu_worker(cu_fx.port, "w2", 1, cu_fx.logfile));
    StoreRun r;
    char why[256];
    cr_assert(cu_wait_finished(cu_fx.store, run, 200, &r), "run did not finish (log: %s)", cu_fx.logfile);
    cr_assert(cu_wait_finished(cu_fx.store, scored, 200, &r), "run did not finish (log: %s)", cu_fx.logfile);
    cr_assert(cu_audit(cu_fx.store, run, 12, why, sizeof why), "%s (log: %s)", why, cu_fx.logfile);
    cr_assert(cu_audit(cu_fx.store, scored, 2, why, sizeof why), "%s (log: %s)", why, cu_fx.logfile);

    FormCheck plain = { .scores = false }, deep = { .scores = true };
    game_record_init(&plain.g);
    game_record_init(&deep.g);
    cr_assert_eq(store_each_game(cu_fx.store, run, 0, 0, check_form, &plain), 0);
    cr_assert_eq(store_each_game(cu_fx.store, scored, 0, 0, check_form, &deep), 0);
    cr_assert_eq(plain.games, 24);
    cr_assert_eq(plain.scored, 0);
    cr_assert_eq(deep.games, 4);
    cr_assert_gt(deep.scored, 0);
    cr_assert_gt(deep.deep, 0);
    game_record_free(&plain.g);
    game_record_free(&deep.g);
    StoreGameTotals t;
    cr_assert_eq(store_game_totals(cu_fx.store, run, &t), 0);
    fprintf(stderr, "FIGURE: a fixed-node SPRT's games: %lld games, %.1f plies and %.1f bytes per game (row), "
                    "%.2f bytes per ply\n",
            (long long)t.games, (double)t.plies / (double)t.games, (double)t.bytes / (double)t.games,
            (double)t.bytes / (double)t.plies);

    /* PGN: every game, then those of one task and of each worker */
    char out[8192], args[512], pgn[300];
    snprintf(pgn, sizeof pgn, "%s/all.pgn", cu_fx.dir);
    snprintf(args, sizeof args, "pgn %lld --out '%s'", (long long)run, pgn);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    cr_assert_eq(count_in_file(pgn, "[Variant \"xiangqi\"]"), 24);
    cr_assert_eq(count_in_file(pgn, "[FEN \""), 24);
    cr_assert_eq(count_in_file(pgn, "[NodesPerMove \"500\"]"), 24);
    cr_assert_eq(count_in_file(pgn, "[White \"test\"]"), 12);
    cr_assert_eq(count_in_file(pgn, "{book}"), count_in_file(pgn, "{book}"));
    snprintf(args, sizeof args, "pgn %lld --task 1 --out '%s'", (long long)run, pgn);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    cr_assert_eq(count_in_file(pgn, "[Variant \"xiangqi\"]"), 8);
    int by_worker = 0;
    for (int i = 1; i <= 2; i++) {
        snprintf(args, sizeof args, "pgn %lld --worker w%d --out '%s'", (long long)run, i, pgn);
        cr_assert_eq(tune(out, sizeof out, args), 0);
        by_worker += count_in_file(pgn, "[Variant \"xiangqi\"]");
    }
    cr_assert_eq(by_worker, 24);
    snprintf(args, sizeof args, "pgn %lld --out '%s'", (long long)scored, pgn);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    cr_assert_gt(count_in_file(pgn, "s}"), 0, "no scored move comment");

    /* bad input: exit 2, nothing written */
    snprintf(args, sizeof args, "pgn 999999 --out '%s/none.pgn'", cu_fx.dir);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    snprintf(args, sizeof args, "pgn %lld --task 999999", (long long)run);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    snprintf(args, sizeof args, "pgn %lld --worker nobody", (long long)run);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    /* tasks too large for their games to travel with their results */
    cr_assert_eq(tune(out, sizeof out, "sprt new --test NullR=2 --base '' --nodes 300 --pairs-per-task 300"), 2);
    cr_assert_eq(tune(out, sizeof out, "sprt new --test NullR=2 --base '' --nodes 300 --pairs-per-task 200 "
                                       "--keep-scores"), 2);
    snprintf(args, sizeof args, "%s/none.pgn", cu_fx.dir);
    cr_assert_neq(access(args, F_OK), 0);

    /* the workers of a clean run: none flagged */
    StoreWorkerTrust *w;
    int n = store_run_workers(cu_fx.store, run, &w);
    cr_assert_geq(n, 1);
    for (int i = 0; i < n; i++)
        cr_assert(!w[i].flagged, "%s flagged on a clean run", w[i].name);
    free(w);
}

/* ---- the replay audit ---------------------------------------------------------------- */

/*
 * A broken worker: an xqf-worker that plays other sets than its tasks say
 * (its link rewrites each task as it arrives), as a machine whose engine
 * misbehaves would.
 */
typedef struct {
    WorkerLink inner;
} Skew;

static int skew_send(void *ctx, const XqfMsg *m)
{
    Skew *k = ctx;
    return k->inner.send(k->inner.ctx, m);
}

static int skew_wait(void *ctx, int timeout_ms, int fd)
{
    Skew *k = ctx;
    return k->inner.wait(k->inner.ctx, timeout_ms, fd);
}

static int skew_recv(void *ctx, XqfMsg *m)
{
    Skew *k = ctx;
    int rc = k->inner.recv(k->inner.ctx, m);
    if (rc == 1 && m->type == XQF_MSG_TASK) {
        snprintf(m->u.task.params0, sizeof m->u.task.params0, "%s", "NullR=2,RookMg=900");
        snprintf(m->u.task.params1, sizeof m->u.task.params1, "%s", "RookMg=900");
    }
    return rc;
}

/* Starts the broken worker in a child process. */
static pid_t skewed_worker(const char *name)
{
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid > 0)
        return cu_track(pid);
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", cu_fx.port);
    WorkerTransport *t = wt_new(endpoint, &(WtSecurity){ 0 });
    if (!t)
        _exit(1);
    Skew k = { wt_link(t) };
    WorkerLink link = { &k, skew_send, skew_wait, skew_recv };
    WorkerConfig cfg = { .name = name, .build = "skewed", .cores = 1, .threads = 1, .cache_dir = cu_fx.dir };
    Worker *w = worker_new(&cfg, &link);
    int rc = w ? worker_run(w) : -1;
    _exit(rc == 0 ? 0 : 1);
}

/* Waits until every replay audit of run is judged and at least want are. */
static bool audits_judged(int64_t run, int64_t want, double timeout_s, StoreReplayTotals *t)
{
    double end = cu_now() + timeout_s;
    while (cu_now() < end) {
        if (store_replay_totals(cu_fx.store, run, t) == 1 && t->open == 0 && t->agree + t->mismatch >= want)
            return true;
        cu_sleep_ms(200);
    }
    return false;
}

Test(games, replay_audit_agrees_on_a_clean_cluster_and_catches_a_broken_worker)
{
    CU_REQUIRE_DB();
    enum { PAIRS = 8 };
    int64_t clean = cu_sprt(cu_fx.store, "NullR=2", 2, PAIRS, 500, -500, 500);
    cr_assert_eq(store_set_replay_share(cu_fx.store, clean, 1.0), 0);
    cu_track(cu_coordinator(cu_fx.db_coordinator, cu_fx.port, "10", cu_fx.logfile));
    pid_t w1 = cu_track(cu_worker(cu_fx.port, "w1", 1, cu_fx.logfile));
    pid_t w2 = cu_track(cu_worker(cu_fx.port, "w2", 1, cu_fx.logfile));
    StoreRun r;
    char why[256];
    cr_assert(cu_wait_finished(cu_fx.store, clean, 200, &r), "run did not finish (log: %s)", cu_fx.logfile);
    cr_assert(cu_audit(cu_fx.store, clean, PAIRS, why, sizeof why), "%s (log: %s)", why, cu_fx.logfile);
    StoreReplayTotals t;
    cr_assert(audits_judged(clean, PAIRS, 120, &t), "audits not judged: %lld open (log: %s)", (long long)t.open,
              cu_fx.logfile);
    fprintf(stderr, "FIGURE: replay audit on a clean local cluster: %lld of %lld pairs agree\n", (long long)t.agree,
            (long long)(t.agree + t.mismatch));
    cr_assert_eq(t.mismatch, 0, "a clean cluster's replays differ (log: %s)", cu_fx.logfile);
    cr_assert_eq(t.agree, PAIRS);
    StoreWorkerTrust *w;
    int n = store_run_workers(cu_fx.store, clean, &w);
    cr_assert_eq(n, 2);
    for (int i = 0; i < n; i++)
        cr_assert(!w[i].flagged && w[i].replays > 0, "%s: flagged %d, %lld replays", w[i].name, w[i].flagged,
                  (long long)w[i].replays);
    free(w);

    /* w2 leaves, a broken worker comes: its pairs and its replays differ from w1's */
    cr_assert_eq(cu_stop(w2, SIGTERM), 0);
    (void)w1;
    int64_t broken = cu_sprt(cu_fx.store, "NullR=2", 2, PAIRS, 500, -500, 500);
    cr_assert_eq(store_set_replay_share(cu_fx.store, broken, 1.0), 0);
    skewed_worker("bad");
    cr_assert(cu_wait_finished(cu_fx.store, broken, 200, &r), "run did not finish (log: %s)", cu_fx.logfile);
    cr_assert(audits_judged(broken, PAIRS, 120, &t), "audits not judged: %lld open (log: %s)", (long long)t.open,
              cu_fx.logfile);
    fprintf(stderr, "FIGURE: replay audit with a broken worker: %lld of %lld pairs differ\n", (long long)t.mismatch,
            (long long)(t.agree + t.mismatch));
    cr_assert_gt(t.mismatch, 0, "the broken worker was not caught (log: %s)", cu_fx.logfile);
    n = store_run_workers(cu_fx.store, broken, &w);
    cr_assert_eq(n, 2);
    for (int i = 0; i < n; i++)
        cr_assert(w[i].flagged && w[i].mismatches > 0 && strstr(w[i].mismatched, "pair "),
                  "%s: flagged %d, %lld mismatches '%s'", w[i].name, w[i].flagged, (long long)w[i].mismatches,
                  w[i].mismatched);
    free(w);
    char out[16384], args[256];
    snprintf(args, sizeof args, "show %lld", (long long)broken);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    cr_assert(strstr(out, "Replay audit: 100 % of the pairs"), "%s", out);
    cr_assert(strstr(out, "replays differ"), "%s", out);
    XqfStrs workers = { 0 }, runs = { 0 };
    cr_assert_eq(status_lines(cu_fx.store, 5, &workers, &runs), 0);
    bool seen = false;
    for (uint32_t i = 0; i < runs.count; i++)
        seen = seen || (strstr(runs.v[i], "worker bad ") && strstr(runs.v[i], "FLAGGED") && strstr(runs.v[i], "pair "));
    cr_assert(seen, "no flagged line for the broken worker in the status");
    xqf_strs_free(&workers);
    xqf_strs_free(&runs);
}

/* The two records of a pair of plies-move games, into buf (replaced). */
static void pair_records(PackBuf *buf, int plies)
{
    buf->len = 0;
    for (int g = 0; g < 2; g++) {
        GameRecord rec;
        game_of(&rec, plies, RESULT_DRAW);
        cr_assert_eq(gamepack_append(&rec, XQF_GAME_MOVES, buf), 0);
        game_record_free(&rec);
    }
}

/* One drawn pair reported under lease l with buf's records. */
static StoreReport report_pair(int64_t worker, const StoreLease *l, const PackBuf *buf)
{
    StoreCounts c = { .pairs = 1, .draws = 2, .penta = { 0, 0, 1, 0, 0 }, .nreasons = GAME_REASONS };
    c.reasons[GAME_REPETITION] = 2;
    StoreReportItem it = { .worker = worker, .task = l->task_id, .token = l->token, .counts = c, .games = buf->data,
                           .games_len = buf->len };
    cr_assert_eq(store_report_batch(cu_fx.store, &it, 1, 60000), 0);
    return it.status;
}

/*
 * A run whose every pair is audited, one drawn pair of it played by worker
 * under *l with the records in buf: its audit is open.  The run's id.
 */
static int64_t audited_pair(int64_t worker, StoreLease *l, PackBuf *buf)
{
    int64_t run = sprt_run(1);
    cr_assert_eq(store_set_replay_share(cu_fx.store, run, 1.0), 0);
    bool given;
    pair_records(buf, 10);
    cr_assert_eq(store_claim_batch(cu_fx.store, run, &worker, 1, 60000, l, &given), 1);
    cr_assert_eq(report_pair(worker, l, buf), REPORT_ACCEPTED);
    cr_assert_eq(store_open_audits(cu_fx.store), 1);
    return run;
}

/* Workers w1 and w2 (ids in w), and audited_pair's run played by w1. */
static int64_t audited_by_w2(int64_t w[2], StoreLease *l, PackBuf *buf)
{
    cr_assert_eq(store_hello(cu_fx.store, "w1", "", 1, 1, "", &w[0]), 1);
    cr_assert_eq(store_hello(cu_fx.store, "w2", "", 1, 1, "", &w[1]), 1);
    return audited_pair(w[0], l, buf);
}

/* A replay audit never goes to another name of the key that played the pair: it would check nothing. */
Test(games, a_replay_audit_never_goes_to_the_same_key)
{
    CU_REQUIRE_DB();
    int64_t w[3];
    cr_assert_eq(store_hello(cu_fx.store, "mallory-1", "", 1, 1, "mallory", &w[0]), 1);
    cr_assert_eq(store_hello(cu_fx.store, "mallory-2", "", 1, 1, "mallory", &w[1]), 1);
    cr_assert_eq(store_hello(cu_fx.store, "honest", "", 1, 1, "honest", &w[2]), 1);
    StoreLease l;
    PackBuf buf = { 0 };
    audited_pair(w[0], &l, &buf);
    StoreAuditLease a;
    cr_assert_eq(store_claim_audit(cu_fx.store, w[1], "", 60000, &a), 0, "audited by another name of its own key");
    cr_assert_eq(store_claim_audit(cu_fx.store, w[2], "", 60000, &a), 1, "another key audits it");
    pack_buf_free(&buf);
}

/* The pairs of run 7 among 0-19,999 that formula chooses (at share 5 %) in the database at db, into out ("a,b,..."). */
static void replayed_pairs(const char *db, const char *formula, char *out, size_t size)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "psql -X -qAt '%s' -c \"SELECT string_agg(p::text, ',' ORDER BY p) FROM generate_series(0, 19999) p "
             "WHERE %s\"",
             db, formula);
    cr_assert_eq(cu_sh(out, size, cmd, cu_fx.logfile), 0, "psql failed (log: %s)", cu_fx.logfile);
    out[strcspn(out, "\n")] = '\0';
}

/* Each number of the comma-separated list (0-19,999) into set. Returns how many. */
static int pair_set(const char *list, bool set[20000])
{
    int n = 0;
    for (char *p = (char *)list; *p; p += *p == ',') {
        long v = strtol(p, &p, 10);
        cr_assert(v >= 0 && v < 20000, "not a pair: %ld", v);
        set[v] = true;
        n++;
    }
    return n;
}

/* How many pairs list a holds, and how many of them list b holds too (into *both). */
static int pairs_in(const char *a, int *both, const char *b)
{
    static bool in_a[20000], in_b[20000];
    memset(in_a, 0, sizeof in_a);
    memset(in_b, 0, sizeof in_b);
    int n = pair_set(a, in_a);
    pair_set(b, in_b);
    *both = 0;
    for (int i = 0; i < 20000; i++)
        *both += in_a[i] && in_b[i];
    return n;
}

/*
 * The pairs replayed cannot be told from what a task carries (its run and
 * first pair): they are an HMAC of the run and the pair under a secret
 * drawn when a database is migrated (051), which only the owner and the
 * coordinator's role read.  Two databases (two coordinators) choose
 * different pairs, neither the old formula's (hashint8 of run * 1000003 +
 * pair), and each chooses its share of them.
 */
Test(games, replayed_pairs_are_chosen_with_the_coordinators_secret)
{
    CU_REQUIRE_DB();
    static char a[131072], b[131072], old[131072];
    char other[512], name[64];
    Store *s2 = cu_store_fresh(other, sizeof other, name, sizeof name);
    cr_assert(s2, "a second database");
    const char *keyed = "xqf_replayed(7, p, 0.05)";
    replayed_pairs(cu_fx.db, keyed, a, sizeof a);
    replayed_pairs(other, keyed, b, sizeof b);
    replayed_pairs(cu_fx.db, "(hashint8(7 * 1000003 + p)::bigint + 2147483648) < 0.05 * 4294967296", old, sizeof old);
    store_destroy(&s2);
    cu_db_drop(name);
    /* 1,000 chosen of 20,000 at 5 %: sd 30.8; two independent choices share about 50 */
    int both, na = pairs_in(a, &both, b);
    int nb = pairs_in(b, &(int){ 0 }, a);
    fprintf(stderr, "FIGURE: replayed pairs of 20,000 at 5 %%: %d and %d under two secrets, %d in both\n", na, nb,
            both);
    cr_assert(na > 860 && na < 1140 && nb > 860 && nb < 1140, "the share does not hold: %d, %d of 20,000", na, nb);
    cr_assert_lt(both, 150, "two secrets choose the same pairs: %d of %d in both", both, na);
    int both_old;
    cr_assert(pairs_in(old, &both_old, a) > 860);
    cr_assert_lt(both_old, 150, "the old formula still tells the chosen pairs: %d of them", both_old);
    /* the same pair of a database is chosen alike each time (its audit is queued once) */
    replayed_pairs(cu_fx.db, keyed, b, sizeof b);
    cr_assert_str_eq(a, b);
    /* the coordinator's role reads the secret, the dashboard's does not */
    if (cu_fx.roles) {
        char out[256], cmd[1024];
        const char *read = "(psql -X -qAt '%s' -c 'SELECT count(*) FROM audit_secret' 2>&1)";
        snprintf(cmd, sizeof cmd, read, cu_fx.db_coordinator);
        cr_assert_eq(cu_sh(out, sizeof out, cmd, cu_fx.logfile), 0, "%s", out);
        snprintf(cmd, sizeof cmd, read, cu_fx.db_web);
        cr_assert_neq(cu_sh(out, sizeof out, cmd, cu_fx.logfile), 0, "the dashboard's role reads the secret");
        cr_assert(strstr(out, "permission denied"), "out: %s (log: %s)", out, cu_fx.logfile);
    }
}

Test(games, replay_audits_leased_judged_and_refused_in_the_store)
{
    CU_REQUIRE_DB();
    int64_t w[2];
    StoreLease l;
    PackBuf buf = { 0 };
    int64_t run = audited_by_w2(w, &l, &buf);
    bool given;

    /* not to the worker that played the pair; to another one, with the first task's sets */
    StoreAuditLease a;
    cr_assert_eq(store_claim_audit(cu_fx.store, w[0], "", 60000, &a), 0);
    cr_assert_eq(store_claim_audit(cu_fx.store, w[1], "", 60000, &a), 1);
    cr_assert_eq(a.run_id, run);
    cr_assert_eq(a.pair, 0);
    cr_assert_str_eq(a.params0, "NullR=2");
    cr_assert_eq(store_claim_audit(cu_fx.store, w[1], "", 60000, &a), 0, "one audit leased twice");
    /* heartbeats and reports under another lease or worker: stale; not two records: invalid */
    cr_assert_eq(store_audit_heartbeat(cu_fx.store, w[1], a.audit, a.token + 1, 60000), 0);
    cr_assert_eq(store_audit_heartbeat(cu_fx.store, w[0], a.audit, a.token, 60000), 0);
    cr_assert_eq(store_audit_heartbeat(cu_fx.store, w[1], a.audit, a.token, 60000), 1);
    cr_assert_eq(store_audit_report(cu_fx.store, w[0], a.audit, a.token, buf.data, buf.len), AUDIT_STALE);
    size_t off = 0, len;
    const uint8_t *rec;
    cr_assert_eq(xqf_games_next(buf.data, buf.len, &off, &rec, &len), 1);
    cr_assert_eq(store_audit_report(cu_fx.store, w[1], a.audit, a.token, buf.data, off), AUDIT_INVALID);
    /* handed back: open again, then replayed the same: agree, and once only */
    cr_assert_eq(store_audit_handback(cu_fx.store, w[1], a.audit, a.token), 1);
    cr_assert_eq(store_claim_audit(cu_fx.store, w[1], "", 60000, &a), 1);
    cr_assert_eq(store_audit_report(cu_fx.store, w[1], a.audit, a.token, buf.data, buf.len), AUDIT_AGREE);
    cr_assert_eq(store_audit_report(cu_fx.store, w[1], a.audit, a.token, buf.data, buf.len), AUDIT_STALE);

    /* the next pair replayed otherwise: a mismatch naming the pair, both workers flagged */
    cr_assert_eq(store_claim_batch(cu_fx.store, run, &w[0], 1, 60000, &l, &given), 1);
    cr_assert_eq(report_pair(w[0], &l, &buf), REPORT_ACCEPTED);
    cr_assert_eq(store_claim_audit(cu_fx.store, w[1], "", 60000, &a), 1);
    cr_assert_eq(a.pair, 1);
    PackBuf other = { 0 };
    pair_records(&other, 11);
    cr_assert_eq(store_audit_report(cu_fx.store, w[1], a.audit, a.token, other.data, other.len), AUDIT_MISMATCH);
    StoreReplayTotals t;
    cr_assert_eq(store_replay_totals(cu_fx.store, run, &t), 1);
    cr_assert(t.fixed_nodes && t.share == 1.0);
    cr_assert_eq(t.agree, 1);
    cr_assert_eq(t.mismatch, 1);
    cr_assert_eq(t.open, 0);
    StoreWorkerTrust *wt;
    cr_assert_eq(store_run_workers(cu_fx.store, run, &wt), 2);
    for (int i = 0; i < 2; i++) {
        cr_assert(wt[i].flagged, "%s not flagged", wt[i].name);
        cr_assert_eq(wt[i].replays, 2);
        cr_assert_eq(wt[i].mismatches, 1);
        cr_assert(strstr(wt[i].mismatched, "pair 1 (game 2, game 3 differ)"), "%s", wt[i].mismatched);
    }
    free(wt);
    /* a run that is not at fixed nodes, or a share of 0, replays nothing */
    cr_assert_eq(store_set_replay_share(cu_fx.store, run, 0), 0);
    cr_assert_eq(store_claim_batch(cu_fx.store, run, &w[0], 1, 60000, &l, &given), 1);
    cr_assert_eq(report_pair(w[0], &l, &buf), REPORT_ACCEPTED);
    /* no audit queued; the mismatch's third replay waits for a third key, which this cluster lacks */
    cr_assert_eq(store_open_audits(cu_fx.store), 1);
    cr_assert_eq(store_claim_audit(cu_fx.store, w[0], "", 60000, &a), 0);
    cr_assert_eq(store_claim_audit(cu_fx.store, w[1], "", 60000, &a), 0);
    pack_buf_free(&buf);
    pack_buf_free(&other);
}

/* ---- the search audit of runs on a clock (xqf-tune audit) -------------------------- */

/* A built-in player of set ("Name=value" or ""), one thread, with the net file net (NULL: the engine's own). */
static Player *net_player(const char *name, const char *set, const char *net)
{
    char w0[64], w1[] = "threads=1", w2[128], w3[300];
    snprintf(w0, sizeof w0, "name=%s", name);
    snprintf(w2, sizeof w2, "option.%s", set);
    snprintf(w3, sizeof w3, "net=%s", net ? net : "");
    char *words[] = { w0, w1, w3, w2 };
    PlayerSpec spec;
    char err[256];
    cr_assert_eq(spec_parse(&spec, 2 + (net != NULL) + (set[0] != 0), net ? words : (char *[]){ w0, w1, w2 }, 16,
                            err, sizeof err), 0, "%s", err);
    Player *p = player_new(&spec);
    cr_assert(p);
    return p;
}

/* A built-in player of set ("Name=value" or ""), one thread. */
static Player *set_player(const char *name, const char *set)
{
    return net_player(name, set, NULL);
}

/*
 * Game `game` of a run (even: the first player Red) as a worker sends it:
 * four opening plies, then each move the mover's search at depth 3 (a new
 * game each: an empty hash table), or with chance `made_up` another legal
 * move instead; a draw by repetition.
 */
static void searched_game(Player *players[2], int64_t game, int plies, double made_up, Rng *rng, GameRecord *g)
{
    game_record_init(g);
    snprintf(g->fen, sizeof g->fen, "%s", "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1");
    Board b;
    char err[64];
    cr_assert_eq(fen_parse(&b, g->fen, FEN_GAME, err, sizeof err), 0);
    g->moves = calloc((size_t)plies + 1, sizeof *g->moves);
    g->capacity = plies + 1;
    for (int i = 0; i < plies; i++) {
        MoveList l;
        movegen_legal(&b, &l);
        if (l.count == 0)
            break;
        Move m = l.moves[(game + i * 7) % l.count];
        if (i >= 4) {
            Player *p = players[(b.side == RED) == (game % 2 == 0) ? 0 : 1];
            GameView view = { g->fen, g->moves, g->count, &b };
            ThinkLimits lim = { .depth = 3, .deadline_us = clock_now_us() + 60 * 1000000LL };
            Reply r;
            cr_assert_eq(player_new_game(p, NULL, &r), 0);
            player_think(p, &view, &lim, &r);
            cr_assert_eq(r.fault, GAME_REASON_NONE, "%s", r.detail);
            m = r.move;
            if (l.count > 1 && rng_unit(rng) < made_up) {
                Move other = l.moves[rng_below(rng, (uint32_t)l.count - 1)];
                m = other == m ? l.moves[l.count - 1] : other;
            }
        }
        g->moves[g->count++] = (GameMove){ .move = m, .book = i < 4 };
        board_make(&b, m);
    }
    g->result = RESULT_DRAW;
    g->reason = GAME_REPETITION;
}

/* The pairs of worker's lease l reported with searched games (made_up of their moves made up). */
static void report_searched(int64_t worker, const StoreLease *l, Player *players[2], double made_up, Rng *rng)
{
    PackBuf buf = { 0 };
    for (int64_t g = 2 * l->first_pair; g < 2 * (l->first_pair + l->pairs); g++) {
        GameRecord rec;
        searched_game(players, g, 44, made_up, rng, &rec);
        cr_assert_eq(gamepack_append(&rec, XQF_GAME_MOVES, &buf), 0);
        game_record_free(&rec);
    }
    StoreCounts c = { .pairs = l->pairs, .draws = 2 * l->pairs, .penta = { 0, 0, l->pairs, 0, 0 },
                      .nreasons = GAME_REASONS };
    c.reasons[GAME_REPETITION] = 2 * l->pairs;
    StoreReportItem it = { .worker = worker, .task = l->task_id, .token = l->token, .counts = c, .games = buf.data,
                           .games_len = buf.len };
    cr_assert_eq(store_report_batch(cu_fx.store, &it, 1, 60000), 0);
    cr_assert_eq(it.status, REPORT_ACCEPTED);
    pack_buf_free(&buf);
}

/*
 * A run on a clock is not replayed move for move; xqf-tune audit searches
 * positions of each worker's games again at a fixed depth with the
 * mover's set: a worker that made up a third of its moves is flagged (and
 * written in the run's history), an honest one cleared.  Bad input: exit
 * status 2, nothing written.
 */
Test(games, a_run_on_a_clock_flags_a_worker_that_makes_up_moves, .timeout = 400)
{
    CU_REQUIRE_DB();
    const char *book[8];
    cr_assert_eq(cu_book(book, 8), 8);
    StoreSprtSpec sp = { .name = "clock", .test_params = "NullR=2", .base_params = "", .book_name = "default.book",
                         .book = book, .book_lines = 8, .seed = 1, .base_ms = 10000, .inc_ms = 100,
                         .margin_ms = 100, .pairs_per_task = 3, .max_pairs = 100000, .elo0 = 0, .elo1 = 5,
                         .alpha = 0.05, .beta = 0.05 };
    int64_t run, w[2];
    cr_assert_eq(store_create_sprt(cu_fx.store, &sp, &run), 0);
    cr_assert_eq(store_hello(cu_fx.store, "honest", "", 1, 1, "honest", &w[0]), 1);
    cr_assert_eq(store_hello(cu_fx.store, "liar", "", 1, 1, "liar", &w[1]), 1);
    Player *players[2] = { set_player("test", "NullR=2"), set_player("base", "") };
    Rng rng;
    rng_seed(&rng, 11);
    for (int k = 0; k < 2; k++) {
        StoreLease l;
        bool given;
        cr_assert_eq(store_claim_batch(cu_fx.store, run, &w[k], 1, 60000, &l, &given), 1);
        report_searched(w[k], &l, players, k == 0 ? 0 : 0.35, &rng);
    }
    for (int p = 0; p < 2; p++)
        player_destroy(&players[p]);
    /* a clock: no replay audit */
    cr_assert_eq(store_open_audits(cu_fx.store), 0);

    char out[16384], args[256];
    snprintf(args, sizeof args, "audit %lld --depth 3 --positions 200 --agree 0.9", (long long)run);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s (log: %s)", out, cu_fx.logfile);
    fprintf(stderr, "%s", out);
    cr_assert(strstr(out, "Search audit of run"), "%s", out);
    const char *honest = strstr(out, "  honest "), *liar = strstr(out, "  liar ");
    cr_assert(honest && liar, "%s", out);
    cr_assert(strstr(honest, ": clean\n") && strstr(honest, ": clean\n") < strchr(honest + 1, '\n') + 1, "%s", out);
    cr_assert(strstr(liar, ": FLAGGED\n") && strstr(liar, ": FLAGGED\n") < strchr(liar + 1, '\n') + 1, "%s", out);
    cr_assert(strstr(out, "Flagged: 1\n"), "%s", out);
    StoreWebAudit *h;
    int n = store_web_audit_list(cu_fx.store, run, 10, &h);
    cr_assert_eq(n, 1);
    cr_assert(strstr(h[0].detail, "search audit: worker liar flagged"), "%s", h[0].detail);
    free(h);
    /* the trust table flags the liar (show, --status, the report), not the honest worker */
    StoreWorkerTrust *wt;
    cr_assert_eq(store_run_workers(cu_fx.store, run, &wt), 2);
    for (int i = 0; i < 2; i++) {
        bool lied = strcmp(wt[i].name, "liar") == 0;
        cr_assert_eq(wt[i].flagged, lied, "%s: flagged %d", wt[i].name, wt[i].flagged);
        cr_assert_str_eq(wt[i].search_verdict, lied ? "flagged" : "clean");
        cr_assert_eq(wt[i].search_positions, 200);
    }
    free(wt);
    snprintf(args, sizeof args, "show %lld", (long long)run);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    cr_assert(strstr(out, "FLAGGED") && strstr(out, "positions agree: flagged"), "%s", out);

    /* bad input: exit status 2, nothing more written */
    snprintf(args, sizeof args, "audit %lld --worker liar --depth 3", (long long)run);
    cr_assert_eq(tune(out, sizeof out, args), 2, "one worker without --agree");
    snprintf(args, sizeof args, "audit %lld --worker nobody --agree 0.9", (long long)run);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    cr_assert_eq(tune(out, sizeof out, "audit 999999"), 2);
    cr_assert_eq(tune(out, sizeof out, "audit 1 --depth 0"), 2);
    n = store_web_audit_list(cu_fx.store, run, 10, &h);
    cr_assert_eq(n, 1);
    free(h);
}

/*
 * The coordinator stores records without playing them: a worker's game
 * with an illegal move does not stop the search audit; the positions it
 * cannot read count as not agreeing, said apart, and flag the worker.
 */
Test(games, a_search_audit_counts_illegal_moves_against_the_worker, .timeout = 300)
{
    CU_REQUIRE_DB();
    const char *book[8];
    cr_assert_eq(cu_book(book, 8), 8);
    StoreSprtSpec sp = { .name = "clock", .test_params = "", .base_params = "", .book_name = "default.book",
                         .book = book, .book_lines = 8, .seed = 1, .base_ms = 10000, .inc_ms = 100,
                         .margin_ms = 100, .pairs_per_task = 1, .max_pairs = 100000, .elo0 = 0, .elo1 = 5,
                         .alpha = 0.05, .beta = 0.05 };
    int64_t run, w;
    cr_assert_eq(store_create_sprt(cu_fx.store, &sp, &run), 0);
    cr_assert_eq(store_hello(cu_fx.store, "mangler", "", 1, 1, "mangler", &w), 1);
    Player *players[2] = { set_player("test", ""), set_player("base", "") };
    Rng rng;
    rng_seed(&rng, 5);
    StoreLease l;
    bool given;
    cr_assert_eq(store_claim_batch(cu_fx.store, run, &w, 1, 60000, &l, &given), 1);
    PackBuf buf = { 0 };
    for (int g = 0; g < 2; g++) {
        GameRecord rec;
        searched_game(players, 2 * l.first_pair + g, 44, 0, &rng, &rec);
        if (g == 1)
            rec.moves[10].move = rec.moves[9].move; /* from the square the last move left: illegal */
        cr_assert_eq(gamepack_append(&rec, XQF_GAME_MOVES, &buf), 0);
        game_record_free(&rec);
    }
    for (int p = 0; p < 2; p++)
        player_destroy(&players[p]);
    StoreCounts c = { .pairs = 1, .draws = 2, .penta = { 0, 0, 1, 0, 0 }, .nreasons = GAME_REASONS };
    c.reasons[GAME_REPETITION] = 2;
    StoreReportItem it = { .worker = w, .task = l.task_id, .token = l.token, .counts = c, .games = buf.data,
                           .games_len = buf.len };
    cr_assert_eq(store_report_batch(cu_fx.store, &it, 1, 60000), 0);
    cr_assert_eq(it.status, REPORT_ACCEPTED);
    pack_buf_free(&buf);

    char out[16384], args[256];
    snprintf(args, sizeof args, "audit %lld --depth 3 --agree 0.9", (long long)run);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s (log: %s)", out, cu_fx.logfile);
    fprintf(stderr, "%s", out);
    cr_assert(strstr(out, " illegal) at depth 3") && strstr(out, ": FLAGGED\n"), "%s", out);
}

/* A run on a clock of the built-in engine (test side set0, net test_net), made active. */
static int64_t clock_run(const char *name, const char *set0, int64_t nodes, int64_t test_net)
{
    const char *book[8];
    cr_assert_eq(cu_book(book, 8), 8);
    StoreSprtSpec sp = { .name = name, .test_params = set0, .base_params = "", .book_name = "default.book",
                         .book = book, .book_lines = 8, .seed = 1, .base_ms = nodes ? 0 : 10000,
                         .inc_ms = nodes ? 0 : 100, .margin_ms = 100, .nodes = nodes, .pairs_per_task = 2,
                         .max_pairs = 100000, .elo0 = 0, .elo1 = 5, .alpha = 0.05, .beta = 0.05,
                         .test_net = test_net };
    int64_t run;
    cr_assert_eq(store_create_sprt(cu_fx.store, &sp, &run), 0);
    return run;
}

/* One task of run played by worker w with searched games (made_up of their moves made up). */
static void play_task(int64_t run, int64_t w, Player *players[2], double made_up, Rng *rng)
{
    StoreLease l;
    bool given;
    cr_assert_eq(store_claim_batch(cu_fx.store, run, &w, 1, 60000, &l, &given), 1);
    report_searched(w, &l, players, made_up, rng);
}

/* The one value sql selects (psql as the owner), its line's end cut, in out. */
static void sql_value(const char *sql, char *out, size_t size)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "psql -X -qAt '%s' -c \"%s\"", cu_fx.db, sql);
    cr_assert_eq(cu_sh(out, size, cmd, cu_fx.logfile), 0, "psql failed (log: %s)", cu_fx.logfile);
    out[strcspn(out, "\n")] = '\0';
}

/* The search audits recorded of run (search_audits rows). */
static int64_t audits_of(int64_t run)
{
    char sql[160], out[64];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM search_audits WHERE run_id = %lld", (long long)run);
    sql_value(sql, out, sizeof out);
    return atoll(out);
}

/*
 * xqf-tune audit --active, as the auditor's database role: a pass audits
 * exactly the workers due (of a run on a clock with games never audited;
 * not a fixed-node run, which the replay audit covers, nor a run audited
 * and stopped since with no game since) and records itself; a second pass
 * audits nothing; new games of one worker make that worker due, and only
 * it.  It fails without --active.
 */
Test(games, the_active_search_audit_audits_each_worker_due_once, .timeout = 400)
{
    CU_REQUIRE_DB();
    int64_t due = clock_run("due", "NullR=2", 0, 0), fixed = clock_run("fixed", "", 1000, 0),
            done = clock_run("done", "", 0, 0), w[2];
    cr_assert_eq(store_hello(cu_fx.store, "honest", "", 1, 1, "honest", &w[0]), 1);
    cr_assert_eq(store_hello(cu_fx.store, "liar", "", 1, 1, "liar", &w[1]), 1);
    Player *test[2] = { set_player("test", "NullR=2"), set_player("base", "") };
    Player *plain[2] = { set_player("test", ""), set_player("base", "") };
    Rng rng;
    rng_seed(&rng, 3);
    for (int k = 0; k < 2; k++) {
        play_task(due, w[k], test, k == 0 ? 0 : 0.35, &rng);
        play_task(fixed, w[k], plain, 0, &rng);
        play_task(done, w[k], plain, 0, &rng);
    }
    char out[16384], args[1024];
    snprintf(args, sizeof args, "audit %lld --depth 3 --agree 0.9", (long long)done);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", out);
    cr_assert_eq(store_finish_run(cu_fx.store, done, "stopped", "stopped"), 0);
    cr_assert_eq(audits_of(done), 2);

    snprintf(args, sizeof args, "audit --active --new-plies 100 --depth 3 --agree 0.9 --db '%s'", cu_fx.db_auditor);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s (log: %s)", out, cu_fx.logfile);
    fprintf(stderr, "%s", out);
    char want[64];
    snprintf(want, sizeof want, "Search audit of run %lld:", (long long)due);
    cr_assert(strstr(out, want) && strstr(out, "Pass 1: 1 runs, 2 workers judged, 1 flagged\n"), "%s", out);
    cr_assert(strstr(strstr(out, "  liar "), ": FLAGGED\n"), "%s", out);
    cr_assert_eq(audits_of(due), 2);
    cr_assert_eq(audits_of(fixed), 0, "a fixed-node run is the replay audit's");
    cr_assert_eq(audits_of(done), 2, "a stopped run audited before, no game since");

    /* a second pass: nothing new */
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", out);
    cr_assert(strstr(out, "Pass 2: 0 runs, 0 workers judged, 0 flagged\n") && !strstr(out, "Search audit"), "%s",
              out);
    cr_assert_eq(audits_of(due), 2);

    /* new games of the honest worker: it alone is due */
    play_task(due, w[0], test, 0, &rng);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", out);
    cr_assert(strstr(out, "Pass 3: 1 runs, 1 workers judged, 0 flagged\n") && strstr(out, "  honest ") &&
                  !strstr(out, "  liar "), "%s", out);
    cr_assert_eq(audits_of(due), 3);
    for (int p = 0; p < 2; p++) {
        player_destroy(&test[p]);
        player_destroy(&plain[p]);
    }
    /* the passes recorded; bad input refused */
    sql_value("SELECT count(*) FILTER (WHERE finished_at IS NOT NULL) || ' ' || sum(workers) "
              "FROM search_audit_passes", out, sizeof out);
    cr_assert_str_eq(out, "3 3");
    snprintf(args, sizeof args, "audit %lld --active", (long long)due);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    snprintf(args, sizeof args, "audit %lld --watch 5", (long long)due);
    cr_assert_eq(tune(out, sizeof out, args), 2);
}

/*
 * A run whose first side plays a registered net: each position that side
 * moved in is searched again with that net (its stored bytes written to a
 * file): two honest workers are cleared.  Searched with the engine's own
 * net instead, their moves would not agree; before, such runs were
 * refused.
 */
Test(games, a_run_with_a_registered_net_is_audited_with_its_net, .timeout = 400)
{
    CU_REQUIRE_DB();
    char net[300], err[256], out[16384], args[1024];
    snprintf(net, sizeof net, "%s/audit.nnue", cu_fx.dir);
    cr_assert_eq(cu_random_net(net, 13, err, sizeof err), 0, "%s", err);
    snprintf(args, sizeof args, "net add '%s' --name audit-net", net);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", out);
    const char *id = strstr(out, "Net: ");
    cr_assert(id, "%s", out);
    int64_t run = clock_run("net", "", 0, atoll(id + 5)), w[2];
    cr_assert_eq(store_hello(cu_fx.store, "one", "", 1, 1, "one", &w[0]), 1);
    cr_assert_eq(store_hello(cu_fx.store, "two", "", 1, 1, "two", &w[1]), 1);
    Player *players[2] = { net_player("test", "", net), set_player("base", "") };
    Rng rng;
    rng_seed(&rng, 17);
    for (int k = 0; k < 2; k++)
        play_task(run, w[k], players, 0, &rng);
    for (int p = 0; p < 2; p++)
        player_destroy(&players[p]);
    snprintf(args, sizeof args, "audit %lld --depth 3 --agree 0.9 --db '%s'", (long long)run, cu_fx.db_auditor);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s (log: %s)", out, cu_fx.logfile);
    fprintf(stderr, "%s", out);
    cr_assert(strstr(out, "Flagged: 0\n") && strstr(strstr(out, "  one "), ": clean\n") &&
                  strstr(strstr(out, "  two "), ": clean\n"), "%s", out);
    cr_assert(strstr(out, "(100.0 %)"), "every move agrees: %s", out);
}

/*
 * An SPSA run's tasks each play a pair of sets of their own (stored with
 * the task): each position is searched again with the sets of the task
 * that played it, and two honest workers are cleared.  Searched with the
 * run's fixed set instead, their moves would not agree; before, SPSA runs
 * were refused.
 */
Test(games, an_spsa_run_is_audited_with_each_tasks_sets, .timeout = 400)
{
    CU_REQUIRE_DB();
    const char *book[4];
    cr_assert_eq(cu_book(book, 4), 4);
    StoreSpsaParam q = { .name = "RookMg", .start = 1931, .min = 300, .max = 2000, .c_end = 30, .r_end = 0.002 };
    StoreSpsaSpec sp = { .run = { .name = "spsa", .book_name = "default.book", .book = book, .book_lines = 4,
                                  .seed = 1, .base_ms = 10000, .inc_ms = 100, .margin_ms = 100, .pairs_per_task = 2,
                                  .max_pairs = 100, .test_net = STORE_NET_NONE },
                         .alpha = 0.602, .gamma = 0.101, .a_ratio = 0.1, .params = &q, .count = 1 };
    int64_t run, w[2];
    cr_assert_eq(store_create_spsa(cu_fx.store, &sp, &run), 0);
    cr_assert_eq(store_hello(cu_fx.store, "one", "", 1, 1, "one", &w[0]), 1);
    cr_assert_eq(store_hello(cu_fx.store, "two", "", 1, 1, "two", &w[1]), 1);
    /* each worker a task of sets far from the defaults and from each other's */
    const char *sets[2][2] = { { "RookMg=300", "HorseMg=1000" }, { "CannonMg=100", "RookMg=500" } };
    Rng rng;
    rng_seed(&rng, 23);
    for (int k = 0; k < 2; k++) {
        StoreLease l;
        cr_assert_eq(store_create_task(cu_fx.store, run, w[k], 60000, sets[k][0], sets[k][1], NULL, &l), 1);
        Player *players[2] = { net_player("test", sets[k][0], "none"), net_player("base", sets[k][1], "none") };
        report_searched(w[k], &l, players, 0, &rng);
        for (int p = 0; p < 2; p++)
            player_destroy(&players[p]);
    }
    char out[16384], args[1024];
    snprintf(args, sizeof args, "audit %lld --depth 3 --agree 0.9 --db '%s'", (long long)run, cu_fx.db_auditor);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s (log: %s)", out, cu_fx.logfile);
    fprintf(stderr, "%s", out);
    cr_assert(strstr(out, "Flagged: 0\n") && strstr(strstr(out, "  one "), ": clean\n") &&
                  strstr(strstr(out, "  two "), ": clean\n"), "%s", out);
}

/*
 * A run whose first side plays an engine build of ours (here xqf-engine
 * itself, registered as a build): its positions are searched by that
 * build, started in the sandbox from its stored bytes; the honest worker
 * is cleared, the one that made up moves flagged.  So for another
 * engine's build (the same binary under an engine record of its own),
 * spoken to as its record says.  A hostile build (it
 * tries to read a key, connect out, see the environment) reaches nothing
 * and, as written, crashes at its first move: the audit fails (status 1)
 * and judges no worker.  Before, runs of engine builds were refused.
 */
Test(games, a_run_of_an_engine_build_is_audited_by_the_build_in_the_sandbox, .timeout = 400)
{
    CU_REQUIRE_DB();
    char why[256];
    if (!sandbox_program(why, sizeof why))
        cr_skip("no sandbox here: %s", why);
    StoreBuild b = { .bench_nodes = 1 };
    snprintf(b.path, sizeof b.path, "%s/xqf-engine", XQF_BIN);
    cr_assert_eq(cu_sha256(b.path, b.sha256), 0);
    snprintf(b.build_id, sizeof b.build_id, "xqf-engine-%.12s", b.sha256);
    int64_t build = cu_build_add(cu_fx.store, &b);
    cr_assert_gt(build, 0);
    const char *book[8];
    cr_assert_eq(cu_book(book, 8), 8);
    StoreSprtSpec sp = { .name = "build", .test_params = "", .base_params = "", .book_name = "default.book",
                         .book = book, .book_lines = 8, .seed = 1, .base_ms = 10000, .inc_ms = 100,
                         .margin_ms = 100, .pairs_per_task = 2, .max_pairs = 100000, .elo0 = 0, .elo1 = 5,
                         .alpha = 0.05, .beta = 0.05, .test_build = build };
    int64_t run, w[2];
    cr_assert_eq(store_create_sprt(cu_fx.store, &sp, &run), 0);
    cr_assert_eq(store_hello(cu_fx.store, "honest", "", 1, 1, "honest", &w[0]), 1);
    cr_assert_eq(store_hello(cu_fx.store, "liar", "", 1, 1, "liar", &w[1]), 1);
    Player *players[2] = { set_player("test", ""), set_player("base", "") };
    Rng rng;
    rng_seed(&rng, 29);
    for (int k = 0; k < 2; k++)
        play_task(run, w[k], players, k == 0 ? 0 : 0.35, &rng);
    for (int p = 0; p < 2; p++)
        player_destroy(&players[p]);
    char out[16384], args[1024];
    snprintf(args, sizeof args, "audit %lld --depth 3 --agree 0.9 --db '%s'", (long long)run, cu_fx.db_auditor);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s (log: %s)", out, cu_fx.logfile);
    fprintf(stderr, "%s", out);
    cr_assert(strstr(out, "Flagged: 1\n") && strstr(strstr(out, "  honest "), ": clean\n") &&
                  strstr(strstr(out, "  liar "), ": FLAGGED\n"), "%s", out);

    /* the same binary as another engine's build: spoken to as its record says (UCI, its Hash option) */
    snprintf(args, sizeof args, "engine add other --repo '%s' --bench none --bench-depth 3 --protocol uci "
                                "--hash-option Hash", cu_fx.dir);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s (log: %s)", out, cu_fx.logfile);
    sp.name = "other";
    sp.engine = "other";
    cr_assert_eq(store_create_sprt(cu_fx.store, &sp, &run), 0);
    players[0] = set_player("test", "");
    players[1] = set_player("base", "");
    for (int k = 0; k < 2; k++)
        play_task(run, w[k], players, k == 0 ? 0 : 0.35, &rng);
    for (int p = 0; p < 2; p++)
        player_destroy(&players[p]);
    snprintf(args, sizeof args, "audit %lld --depth 3 --agree 0.9 --db '%s'", (long long)run, cu_fx.db_auditor);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s (log: %s)", out, cu_fx.logfile);
    fprintf(stderr, "%s", out);
    cr_assert(strstr(out, "Flagged: 1\n") && strstr(strstr(out, "  honest "), ": clean\n") &&
                  strstr(strstr(out, "  liar "), ": FLAGGED\n"), "%s", out);
    sp.engine = NULL;

    /* a hostile build (tests/fake_engine.c's escape copy): in the box it reads no key and connects nowhere */
    char key[300], copy[300], cmd[1024];
    snprintf(key, sizeof key, "%s/auditor.key", cu_fx.dir);
    snprintf(copy, sizeof copy, "%s/escape-engine", cu_fx.dir);
    FILE *k = fopen(key, "w");
    cr_assert(k);
    fputs("a secret\n", k);
    fclose(k);
    setenv("XQF_TEST_SECRET", "the auditor's environment", 1);
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof addr;
    cr_assert(listener >= 0 && bind(listener, (struct sockaddr *)&addr, sizeof addr) == 0 && listen(listener, 4) == 0 &&
              getsockname(listener, (struct sockaddr *)&addr, &alen) == 0);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && printf '\\nXQF-ESCAPE %s %d\\n' >> '%s'", FAKE_ENGINE, copy, key,
             ntohs(addr.sin_port), copy);
    cr_assert_eq(system(cmd), 0);
    StoreBuild e = { .bench_nodes = 4242 };
    cr_assert_eq(cu_sha256(copy, e.sha256), 0);
    snprintf(e.build_id, sizeof e.build_id, "escape-%.12s", e.sha256);
    snprintf(e.path, sizeof e.path, "%s", copy);
    sp.name = "escape";
    sp.test_build = cu_build_add(cu_fx.store, &e);
    cr_assert_gt(sp.test_build, 0);
    cr_assert_eq(store_create_sprt(cu_fx.store, &sp, &run), 0);
    players[0] = set_player("test", "");
    players[1] = set_player("base", "");
    play_task(run, w[0], players, 0, &rng);
    for (int p = 0; p < 2; p++)
        player_destroy(&players[p]);
    snprintf(args, sizeof args, "audit %lld --depth 3 --agree 0.9 --db '%s'", (long long)run, cu_fx.db_auditor);
    cr_assert_eq(tune(out, sizeof out, args), 1, "%s (log: %s)", out, cu_fx.logfile);
    cr_assert_eq(count_in_file(cu_fx.logfile, "searches failed"), 1, "log: %s", cu_fx.logfile);
    cr_assert_eq(audits_of(run), 0, "a build that crashes judges no worker");
    int in = accept(listener, NULL, NULL);
    cr_assert(in < 0 && (errno == EAGAIN || errno == EWOULDBLOCK), "the build connected out of the auditor");
    close(listener);
    cr_assert_eq(count_in_file(cu_fx.logfile, "ESCAPED"), 0, "the build escaped (log: %s)", cu_fx.logfile);
    unsetenv("XQF_TEST_SECRET");
}

/* Fails naming what the transaction so far read of games and results, if more than a few rows. */
static void reads_few(const char *step)
{
    char err[512], sql[1024];
    snprintf(sql, sizeof sql,
             "DO $$ DECLARE g bigint; r bigint; BEGIN "
             "SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) INTO g "
             "FROM pg_stat_xact_user_tables WHERE relname = 'games'; "
             "SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) INTO r "
             "FROM pg_stat_xact_user_tables WHERE relname = 'results'; "
             "IF g > 100 OR r > 100 THEN RAISE EXCEPTION '%s: read %% games and %% results', g, r; END IF; "
             "END $$",
             step);
    cr_assert_eq(store_exec(cu_fx.store, sql, err, sizeof err), 0, "%s", err);
}

/*
 * A report's games and a replay's check find their rows by key however
 * many the run has.  A prepared statement, and each statement of a PL/pgSQL
 * function, keeps a generic plan made for the sizes its tables had then:
 * made while a run was young, it reads every result (a hash join, or a
 * nested loop over the whole table) or every game of the run (an index
 * scan on the run alone), and a batch costs more the longer the cluster
 * has run.  The session here keeps generic plans from their first call
 * (plan_cache_mode), on tables analysed with a pair's rows; two rounds,
 * then 20,000 more results and games: the third round, in one
 * transaction, reads only a few of either (pg_stat_xact_user_tables: the
 * transaction's own reads).
 */
Test(games, a_report_and_its_replay_read_a_few_rows_whatever_the_run_holds)
{
    CU_REQUIRE_DB();
    char err[512], sql[1024];
    int64_t w[2];
    StoreLease l;
    StoreAuditLease a;
    PackBuf buf = { 0 };
    bool given;
    int64_t run = audited_by_w2(w, &l, &buf);
    /* the plans of a young cluster: made once, for tables of a pair's rows */
    cr_assert_eq(store_exec(cu_fx.store, "ANALYZE games, results, tasks; SET plan_cache_mode = force_generic_plan",
                            err, sizeof err), 0, "%s", err);
    for (int round = 0; round < 3; round++) {
        bool last = round == 2;
        if (round > 0) {
            if (last)
                cr_assert_eq(store_begin(cu_fx.store), 0);
            cr_assert_eq(store_claim_batch(cu_fx.store, run, &w[0], 1, 60000, &l, &given), 1);
            if (last)
                reads_few("claim");
            StoreReportItem it = { .worker = w[0], .task = l.task_id, .token = l.token };
            int64_t of, first;
            cr_assert_eq(store_lease_starts(cu_fx.store, &it, 1, &of, &first), 0);
            cr_assert_eq(of, run);
            if (last)
                reads_few("lease starts");
            cr_assert_eq(report_pair(w[0], &l, &buf), REPORT_ACCEPTED);
            if (last)
                reads_few("report");
        }
        cr_assert_eq(store_claim_audit(cu_fx.store, w[1], "", 60000, &a), 1, "round %d", round);
        if (last)
            reads_few("claim audit");
        cr_assert_eq(store_audit_report(cu_fx.store, w[1], a.audit, a.token, buf.data, buf.len), AUDIT_AGREE);
        if (last)
            reads_few("audit report");
        if (round == 1) {
            /* the run grows by results (other leases of its first task) and games past its pairs */
            snprintf(sql, sizeof sql,
                     "INSERT INTO results (task_id, lease_token, worker_id, base_pairs) SELECT r.task_id, -g, r.worker_id, 0 "
                     "FROM (SELECT * FROM results WHERE task_id = (SELECT min(id) FROM tasks WHERE run_id = %lld) "
                     "LIMIT 1) r CROSS JOIN generate_series(1, 20000) g; "
                     "INSERT INTO games (run_id, game, worker_id, fen_id, record) "
                     "SELECT s.run_id, 1000 + g, s.worker_id, s.fen_id, s.record "
                     "FROM (SELECT * FROM games WHERE run_id = %lld LIMIT 1) s CROSS JOIN generate_series(1, 20000) g",
                     (long long)run, (long long)run);
            cr_assert_eq(store_exec(cu_fx.store, sql, err, sizeof err), 0, "%s", err);
        }
    }
    cr_assert_eq(store_commit(cu_fx.store), 0);
    pack_buf_free(&buf);
}

/* Whether each of a run's n workers w[] is blamed for one mismatch (and flagged), as blamed[] says. */
static void expect_blame(int64_t run, const int64_t *w, const bool *blamed, int n, const char *what)
{
    StoreWorkerTrust *wt;
    int count = store_run_workers(cu_fx.store, run, &wt);
    cr_assert_eq(count, n, "%s: %d workers", what, count);
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < count && wt[k].worker_id != w[i])
            k++;
        cr_assert(k < count, "%s: worker %lld missing", what, (long long)w[i]);
        cr_assert_eq(wt[k].mismatches, blamed[i] ? 1 : 0, "%s: %s blamed for %lld ('%s')", what, wt[k].name,
                     (long long)wt[k].mismatches, wt[k].mismatched);
        cr_assert_eq(wt[k].flagged, blamed[i], "%s: %s flagged %d", what, wt[k].name, wt[k].flagged);
    }
    free(wt);
}

/*
 * A mismatch does not say which of its two workers lied: a replay by a
 * worker of a third key decides.  Its records the pair's: the auditor
 * lied, and only it is blamed; the auditor's: the pair's worker lied;
 * neither: both stay blamed.  Until it comes both are, as before, and the
 * third replay goes to neither key (nor another name of them).
 */
Test(games, a_third_key_decides_which_worker_of_a_mismatch_lied)
{
    CU_REQUIRE_DB();
    int64_t w[4];   /* the pair's worker, the auditor, a third key, another name of the auditor's key */
    cr_assert_eq(store_hello(cu_fx.store, "player", "", 1, 1, "player", &w[0]), 1);
    cr_assert_eq(store_hello(cu_fx.store, "auditor-1", "", 1, 1, "auditor", &w[1]), 1);
    cr_assert_eq(store_hello(cu_fx.store, "third", "", 1, 1, "third", &w[2]), 1);
    cr_assert_eq(store_hello(cu_fx.store, "auditor-2", "", 1, 1, "auditor", &w[3]), 1);
    static const struct {
        int plies;              /* of the third replay's records: 10 the pair's, 11 the auditor's */
        StoreAuditStatus status;
        bool blamed[3];
        int64_t agree, mismatch;
        const char *what;
    } CASES[] = { { 10, AUDIT_AGREE, { false, true, false }, 1, 0, "a lying auditor" },
                  { 11, AUDIT_MISMATCH, { true, false, false }, 0, 1, "a lying player" },
                  { 12, AUDIT_MISMATCH, { true, true, false }, 0, 1, "three replays, three records" } };
    PackBuf buf = { 0 }, lie = { 0 }, third = { 0 };
    pair_records(&lie, 11);
    for (size_t c = 0; c < sizeof CASES / sizeof CASES[0]; c++) {
        StoreLease l;
        int64_t run = audited_pair(w[0], &l, &buf);
        StoreAuditLease a;
        cr_assert_eq(store_claim_audit(cu_fx.store, w[1], "", 60000, &a), 1);
        cr_assert_eq(store_audit_report(cu_fx.store, w[1], a.audit, a.token, lie.data, lie.len), AUDIT_MISMATCH);
        /* undecided: both blamed, as before; the third replay open for a third key only */
        expect_blame(run, w, (const bool[]){ true, true }, 2, CASES[c].what);
        cr_assert_eq(store_open_audits(cu_fx.store), 1);
        cr_assert_eq(store_claim_audit(cu_fx.store, w[0], "", 60000, &a), 0, "the pair's own key decides");
        cr_assert_eq(store_claim_audit(cu_fx.store, w[1], "", 60000, &a), 0, "the auditor decides");
        cr_assert_eq(store_claim_audit(cu_fx.store, w[3], "", 60000, &a), 0, "the auditor's key decides");
        cr_assert_eq(store_claim_audit(cu_fx.store, w[2], "", 60000, &a), 1);
        cr_assert(a.run_id == run && a.pair == 0 && strcmp(a.params0, "NullR=2") == 0);
        /* its lease: heartbeats and handback as a first replay's */
        cr_assert_eq(store_audit_heartbeat(cu_fx.store, w[1], a.audit, a.token, 60000), 0);
        cr_assert_eq(store_audit_heartbeat(cu_fx.store, w[2], a.audit, a.token, 60000), 1);
        cr_assert_eq(store_audit_handback(cu_fx.store, w[2], a.audit, a.token), 1);
        cr_assert_eq(store_claim_audit(cu_fx.store, w[2], "", 60000, &a), 1);
        cr_assert_eq(store_audit_report(cu_fx.store, w[1], a.audit, a.token, buf.data, buf.len), AUDIT_STALE);
        pair_records(&third, CASES[c].plies);
        cr_assert_eq(store_audit_report(cu_fx.store, w[2], a.audit, a.token, third.data, third.len),
                     CASES[c].status, "%s", CASES[c].what);
        cr_assert_eq(store_audit_report(cu_fx.store, w[2], a.audit, a.token, third.data, third.len), AUDIT_STALE);
        cr_assert_eq(store_open_audits(cu_fx.store), 0);
        expect_blame(run, w, CASES[c].blamed, 3, CASES[c].what);
        StoreReplayTotals t;
        cr_assert_eq(store_replay_totals(cu_fx.store, run, &t), 1);
        cr_assert(t.agree == CASES[c].agree && t.mismatch == CASES[c].mismatch && t.open == 0,
                  "%s: %lld agree, %lld mismatch, %lld open", CASES[c].what, (long long)t.agree,
                  (long long)t.mismatch, (long long)t.open);
    }

    /* an audit that agrees: no third replay, nobody blamed */
    StoreLease l;
    int64_t run = audited_pair(w[0], &l, &buf);
    StoreAuditLease a;
    cr_assert_eq(store_claim_audit(cu_fx.store, w[1], "", 60000, &a), 1);
    cr_assert_eq(store_audit_report(cu_fx.store, w[1], a.audit, a.token, buf.data, buf.len), AUDIT_AGREE);
    cr_assert_eq(store_open_audits(cu_fx.store), 0);
    cr_assert_eq(store_claim_audit(cu_fx.store, w[2], "", 60000, &a), 0);
    expect_blame(run, w, (const bool[]){ false, false }, 2, "an audit that agrees");
    pack_buf_free(&buf);
    pack_buf_free(&lie);
    pack_buf_free(&third);
}

/*
 * Engines in a box on workers: an engine build that tries, at its start,
 * to read a key file of the worker's, to connect to a socket on this host
 * and to see the worker's environment (tests/fake_engine.c, a copy marked
 * "XQF-ESCAPE KEYFILE PORT").  In the worker's sandbox every attempt
 * fails, so the engine crashes at its first move as it was written to:
 * every game of its side is scored as its crash; nothing connected and it
 * never said ESCAPED.  (Run with --no-sandbox, the same copy reads the key
 * and plays on.)
 */
Test(games, an_engine_build_cannot_reach_keys_network_or_environment)
{
    CU_REQUIRE_DB();
    char key[300], copy[300], cmd[1024];
    snprintf(key, sizeof key, "%s/worker.key", cu_fx.dir);
    snprintf(copy, sizeof copy, "%s/escape-engine", cu_fx.dir);
    FILE *k = fopen(key, "w");
    cr_assert(k);
    fputs("a secret\n", k);
    fclose(k);
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof addr;
    cr_assert(listener >= 0 && bind(listener, (struct sockaddr *)&addr, sizeof addr) == 0 && listen(listener, 4) == 0 &&
              getsockname(listener, (struct sockaddr *)&addr, &alen) == 0);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && printf '\\nXQF-ESCAPE %s %d\\n' >> '%s'", FAKE_ENGINE, copy, key,
             ntohs(addr.sin_port), copy);
    cr_assert_eq(system(cmd), 0);
    StoreBuild b = { .bench_nodes = 4242 };
    cr_assert_eq(cu_sha256(copy, b.sha256), 0);
    snprintf(b.build_id, sizeof b.build_id, "escape-%.12s", b.sha256);
    snprintf(b.path, sizeof b.path, "%s", copy);
    int64_t build = cu_build_add(cu_fx.store, &b);
    cr_assert_gt(build, 0);
    const char *book[CU_BOOK_MAX];
    int n = cu_book(book, 2);
    cr_assert_gt(n, 0);
    StoreSprtSpec spec = { .name = "escape", .test_params = "", .base_params = "", .book_name = "default.book",
                           .book = book, .book_lines = n, .seed = 1, .nodes = 200, .margin_ms = 100,
                           .pairs_per_task = 2, .max_pairs = 2, .elo0 = -500, .elo1 = 500, .alpha = 0.05,
                           .beta = 0.05, .test_build = build };
    int64_t run;
    cr_assert_eq(store_create_sprt(cu_fx.store, &spec, &run), 0);
    char cache[300];
    snprintf(cache, sizeof cache, "%s/cache", cu_fx.dir);
    setenv("XQF_CACHE", cache, 1);
    setenv("XQF_TEST_SECRET", "the worker's environment", 1);
    cu_track(cu_coordinator(cu_fx.db_coordinator, cu_fx.port, "30", cu_fx.logfile));
    const char *extra[] = { "--allow-unsigned", NULL };
    cu_track(cu_worker_args(cu_fx.port, "w1", 1, cu_fx.logfile, extra));
    StoreRun r;
    bool ended = cu_wait_finished(cu_fx.store, run, 120, &r);
    unsetenv("XQF_TEST_SECRET");
    cr_assert(ended, "the run did not end (log: %s)", cu_fx.logfile);
    cr_assert_eq(count_in_file(cu_fx.logfile, "ESCAPED"), 0, "the engine got out of its box (log: %s)",
                 cu_fx.logfile);
    cr_assert_eq(r.counts.pairs, 2, "(log: %s)", cu_fx.logfile);
    cr_assert_eq(r.counts.reasons[GAME_CRASH], 4, "every game of the boxed engine is its crash (log: %s)",
                 cu_fx.logfile);
    cr_assert_eq(r.counts.wins, 0);
    cr_assert(accept(listener, NULL, NULL) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK),
              "a connection arrived from the box");
    close(listener);
    store_run_free(&r);
}

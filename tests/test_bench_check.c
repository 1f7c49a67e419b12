/*
 * Workers check what they run (docs/cluster.md), on a real cluster (coordinator,
 * worker, PostgreSQL; XQF_TEST_DB): an SPRT of two builds, both copies of
 * xqf-engine, one of them recorded with a wrong bench signature (what a
 * binary of another architecture or a miscompile looks like to the
 * worker).  The worker benches both once, reports their speed, refuses
 * the task with the reason; the coordinator stores the refusal, offers
 * that worker the run no more (one refusal, no quarantine), and shows it
 * in xqf-tune show and xqf-coordinator --status; the worker still plays
 * other runs, and plays the build once it is registered again with its
 * true signature.  A --tc-scale run has its clock scaled on the worker by the
 * reference speed against the one it measured.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "cluster_util.h"
#include "store_builds.h"
#include "store_runs.h"

static char wlog[256];

static void setup(void)
{
    cu_fixture_init();
    snprintf(wlog, sizeof wlog, "%s/worker.log", cu_fx.dir);
}

/* long: under ASan each bench of a sanitized engine takes about 20 s (and blocks the worker's loop meanwhile, hence the lease of 90 s) */
TestSuite(bench_check, .init = setup, .fini = cu_fixture_fini, .timeout = 560);

/* A shell command's stdout into out (stderr to the log). The exit status. */
static int sh(char *out, size_t size, const char *cmd)
{
    int st = cu_sh(out, size, cmd, cu_fx.logfile);
    cr_assert_geq(st, -1, "cannot run %s", cmd);
    return st;
}

/* xqf-tune ARGS: the number it prints last on a line of its own (a run id), or after "Build: ". */
static int64_t tune_number(const char *args)
{
    char cmd[2048], out[8192];
    snprintf(cmd, sizeof cmd, "'%s/xqf-tune' %s", XQF_BIN, args);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s failed (log %s)", cmd, cu_fx.logfile);
    int64_t last = -1;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        long long v;
        if (sscanf(line, "Build: %lld", &v) == 1 || (strspn(line, "0123456789") == strlen(line) && sscanf(line, "%lld", &v) == 1))
            last = v;
    }
    return last;
}

/* How many lines of the file hold needle. */
static int count_in(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    int n = 0;
    char line[4096];
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, needle) != NULL;
    if (f)
        fclose(f);
    return n;
}

/* Waits until the worker's benches of run include n rows (refused ones when refused). */
static int wait_benches(int64_t run, int n, bool refused, StoreWorkerBench **out)
{
    for (double t0 = cu_now(); cu_now() - t0 < 200; cu_sleep_ms(200)) {
        int got = store_worker_benches(cu_fx.store, run, out), match = 0;
        cr_assert_geq(got, 0);
        for (int i = 0; i < got; i++)
            match += !refused || (*out)[i].refused[0];
        if (match >= n)
            return got;
        free(*out);
        *out = NULL;
    }
    cr_assert_fail("the worker reported no bench (log %s, worker log %s)", cu_fx.logfile, wlog);
    return -1;
}

Test(bench_check, a_build_whose_bench_differs_is_refused_and_kept_from_the_worker)
{
    CU_REQUIRE_DB();
    char good[512], bad[512], cache[512], args[1024], out[16384];
    snprintf(good, sizeof good, "%s/engine-good", cu_fx.dir);
    snprintf(bad, sizeof bad, "%s/engine-bad", cu_fx.dir);
    snprintf(cache, sizeof cache, "%s/cache", cu_fx.dir);
    cr_assert_eq(cu_engine_copy(good, 1), 0);
    cr_assert_eq(cu_engine_copy(bad, 2), 0);
    snprintf(args, sizeof args, "build --binary '%s' --name good", good);
    int64_t good_id = tune_number(args);
    snprintf(args, sizeof args, "build --binary '%s' --name bad", bad);
    int64_t bad_id = tune_number(args);
    cr_assert(good_id > 0 && bad_id > 0);
    /* the bad build's recorded signature is not what it computes (a miscompile, another architecture) */
    StoreBuild b;
    int64_t id;
    cr_assert_eq(store_load_build(cu_fx.store, bad_id, &b), 1);
    cr_assert_eq(b.bench_nodes, (int64_t)bench_signature());
    b.bench_nodes = 12345;
    cr_assert_eq(store_add_build(cu_fx.store, &b, &id), 0);
    cr_assert_eq(id, bad_id);
    snprintf(args, sizeof args, "sprt new --test-build %" PRId64 " --base-build %" PRId64 " --nodes 500 "
             "--pairs-per-task 1 --max-pairs 4 --elo0 -500 --elo1 500", bad_id, good_id);
    int64_t run = tune_number(args);
    cr_assert_gt(run, 0);

    setenv("XQF_CACHE", cache, 1);
    cu_track(cu_coordinator(cu_fx.db_coordinator, cu_fx.port, "90", cu_fx.logfile));
    const char *extra[] = { "--allow-unsigned", NULL };
    cu_track(cu_worker_args(cu_fx.port, "w1", 1, wlog, extra));

    /* the refusal, with the reason, stored; the good build's speed too */
    StoreWorkerBench *wb = NULL;
    int n = wait_benches(run, 2, false, &wb);
    StoreBuild good_b;
    cr_assert_eq(store_load_build(cu_fx.store, good_id, &good_b), 1);
    bool saw_bad = false, saw_good = false;
    for (int i = 0; i < n; i++) {
        cr_assert_str_eq(wb[i].worker_name, "w1");
        if (strcmp(wb[i].sha256, b.sha256) == 0) {
            saw_bad = true;
            cr_assert(strstr(wb[i].refused, "12345 recorded") && strstr(wb[i].refused, "bench signature"),
                      "%s", wb[i].refused);
            cr_assert_eq(wb[i].bench_nodes, (int64_t)bench_signature());
        } else if (strcmp(wb[i].sha256, good_b.sha256) == 0) {
            saw_good = true;
            cr_assert_str_empty(wb[i].refused);
            cr_assert_eq(wb[i].bench_nodes, (int64_t)bench_signature());
            cr_assert_gt(wb[i].nps, 1000, "the worker measured its speed");
        }
    }
    free(wb);
    cr_assert(saw_bad && saw_good, "benches of both builds (log %s)", wlog);

    /*
     * The coordinator offers the run to w1 no more: the tasks it held when it
     * benched (at most its 3 slots) refused once each, none after, nothing
     * quarantined, no pair played.
     */
    for (double t0 = cu_now(); count_in(wlog, "refusing task") == 0 && cu_now() - t0 < 120;)
        cu_sleep_ms(100);
    cu_sleep_ms(2000);
    int refusals = count_in(wlog, "refusing task");
    cr_assert(refusals >= 1 && refusals <= 3, "%d refusals (log %s)", refusals, wlog);
    cu_sleep_ms(4000);
    cr_assert_eq(count_in(wlog, "refusing task"), refusals, "a task came back to the worker (log %s)", wlog);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_eq(r.quarantined, 0);
    cr_assert_eq(r.counts.pairs, 0);
    store_run_free(&r);

    /* visible to the user: xqf-tune show and xqf-coordinator --status */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s/xqf-tune' show %" PRId64, XQF_BIN, run);
    cr_assert_eq(sh(out, sizeof out, cmd), 0);
    cr_assert(strstr(out, "REFUSED: engine build") && strstr(out, "12345 recorded"), "%s", out);
    cr_assert(strstr(out, "Test build: ") && strstr(out, "bench 12345"), "%s", out);
    snprintf(cmd, sizeof cmd, "'%s/xqf-coordinator' --status --db '%s'", XQF_BIN, cu_fx.db);
    cr_assert_eq(sh(out, sizeof out, cmd), 0);
    cr_assert(strstr(out, "worker w1 REFUSES build") && strstr(out, "12345 recorded"), "%s", out);

    /* the worker still plays other runs: a clock scaled by its speed against the reference */
    snprintf(args, sizeof args, "sprt new --base '' --test NullR=2 --tc 0.4+0.01 --tc-scale --ref-nps 100000000 "
             "--pairs-per-task 1 --max-pairs 1 --elo0 -500 --elo1 500 --priority 5");
    int64_t scaled = tune_number(args);
    cr_assert_gt(scaled, 0);
    cr_assert(cu_wait_finished(cu_fx.store, scaled, 200, &r), "the scaled run did not finish (log %s)", wlog);
    cr_assert_eq(r.counts.pairs, 1);
    store_run_free(&r);
    int64_t ref;
    cr_assert_eq(store_run_ref_nps(cu_fx.store, scaled, &ref), 1);
    cr_assert_eq(ref, 100000000);
    /* a reference far above any machine: the factor is capped at 4 (0.4 s -> 1.6 s) */
    cr_assert_eq(count_in(wlog, "clock scaled by 4.00"), 1, "log %s", wlog);
    cr_assert_eq(count_in(wlog, ": 1600+40 ms"), 1, "log %s", wlog);
    n = wait_benches(scaled, 1, false, &wb);
    cr_assert(n >= 1 && wb[0].sha256[0] == '\0' && wb[0].nps > 1000, "the built-in engine's speed is stored");
    free(wb);

    /* the bad build registered again (its true signature): the refusals are forgotten, the worker plays it */
    snprintf(args, sizeof args, "build --binary '%s' --name bad", bad);
    cr_assert_eq(tune_number(args), bad_id);
    cr_assert(cu_wait_finished(cu_fx.store, run, 200, &r), "the run of the corrected build did not finish (log %s)", wlog);
    cr_assert_eq(r.counts.pairs, 4);
    store_run_free(&r);
}

Test(bench_check, bad_options)
{
    CU_REQUIRE_DB();
    char cmd[1024], out[4096];
    const char *bad[] = {
        "sprt new --base '' --test NullR=2 --nodes 500 --tc-scale",       /* a clock is needed */
        "sprt new --base '' --test NullR=2 --tc 1+0.1 --ref-nps 5000",    /* --ref-nps without --tc-scale */
        "sprt new --base '' --test NullR=2 --tc 1+0.1 --tc-scale --ref-nps 10",
        "spsa new --pairs 10 --nodes 500 --tc-scale",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(cmd, sizeof cmd, "'%s/xqf-tune' %s", XQF_BIN, bad[i]);
        cr_assert_eq(sh(out, sizeof out, cmd), 2, "%s", bad[i]);
    }
    StoreRun *r;
    int n = store_list_runs(cu_fx.store, 10, &r);
    cr_assert_eq(n, 0, "nothing created");
    free(r);
}

/*
 * One worker cannot sink a run: a worker that trusts no operator key (the
 * default) refuses every task of a signed-build SPRT.  It says so per
 * build, the coordinator offers it that run no more and counts its
 * refusals for no quarantine, and the worker that trusts the key plays
 * the whole run: finished, every pair played, nothing quarantined.
 */
Test(bench_check, a_worker_that_trusts_no_key_cannot_sink_a_signed_run)
{
    CU_REQUIRE_DB();
    char e1[512], e2[512], key[512], pub[600], cmd[1300], args[1400], out[16384], cache1[512], cache2[512];
    snprintf(e1, sizeof e1, "%s/engine-1", cu_fx.dir);
    snprintf(e2, sizeof e2, "%s/engine-2", cu_fx.dir);
    snprintf(key, sizeof key, "%s/operator.key", cu_fx.dir);
    snprintf(pub, sizeof pub, "%s.pub", key);
    cr_assert_eq(cu_engine_copy(e1, 1), 0);
    cr_assert_eq(cu_engine_copy(e2, 2), 0);
    snprintf(cmd, sizeof cmd, "'%s/xqf-keys' sign-new '%s' >/dev/null", XQF_BIN, key);
    cr_assert_eq(sh(out, sizeof out, cmd), 0);
    snprintf(args, sizeof args, "build --binary '%s' --name one --sign-key '%s'", e1, key);
    int64_t b1 = tune_number(args);
    snprintf(args, sizeof args, "build --binary '%s' --name two --sign-key '%s'", e2, key);
    int64_t b2 = tune_number(args);
    cr_assert(b1 > 0 && b2 > 0);
    snprintf(args, sizeof args, "sprt new --test-build %" PRId64 " --base-build %" PRId64 " --nodes 300 "
             "--pairs-per-task 1 --max-pairs 6 --elo0 -500 --elo1 500", b1, b2);
    int64_t run = tune_number(args);
    cr_assert_gt(run, 0);

    cu_track(cu_coordinator(cu_fx.db_coordinator, cu_fx.port, "90", cu_fx.logfile));
    /* the worker that refuses first, with more slots, so that it is offered the first tasks */
    snprintf(cache1, sizeof cache1, "%s/cache-distrust", cu_fx.dir);
    setenv("XQF_CACHE", cache1, 1);
    cu_track(cu_worker_args(cu_fx.port, "distrust", 3, wlog, NULL));
    for (double t0 = cu_now(); count_in(wlog, "trusts no operator key") == 0 && cu_now() - t0 < 60;)
        cu_sleep_ms(100);
    cr_assert_gt(count_in(wlog, "trusts no operator key"), 0, "the untrusting worker refused nothing (log %s)", wlog);
    snprintf(cache2, sizeof cache2, "%s/cache-trust", cu_fx.dir);
    setenv("XQF_CACHE", cache2, 1);
    const char *trust[] = { "--trust", pub, NULL };
    cu_track(cu_worker_args(cu_fx.port, "trusting", 1, cu_fx.logfile, trust));

    StoreRun r;
    cr_assert(cu_wait_finished(cu_fx.store, run, 300, &r), "the run did not end (log %s, %s)", cu_fx.logfile, wlog);
    cr_assert_str_eq(r.state, "finished", "%s: %s", r.state, r.verdict);
    cr_assert_eq(r.quarantined, 0, "a task was quarantined by one worker's refusals (log %s)", cu_fx.logfile);
    cr_assert_eq(r.counts.pairs, 6);
    store_run_free(&r);
    /* the refusal is kept per worker and build, shown as a bench mismatch is */
    StoreWorkerBench *wb = NULL;
    int n = store_worker_benches(cu_fx.store, run, &wb);
    bool refused = false;
    for (int i = 0; i < n; i++)
        refused = refused || (strcmp(wb[i].worker_name, "distrust") == 0 && strstr(wb[i].refused, "trusts no operator key"));
    free(wb);
    cr_assert(refused, "the untrusting worker's refusal is not recorded per build");
}

/*
 * Runs steered while they run (docs/programs/xqf-tune.md, "Steering runs") against a real
 * PostgreSQL (XQF_TEST_DB; skipped without it): xqf-tune modify and its
 * refusals, the throughput share in the scheduler, fixed-games runs, time
 * odds in the task, and run chains moving on by themselves.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cluster_util.h"
#include "run_kind.h"
#include "sched.h"
#include "store_builds.h"
#include "store_games.h"
#include "store_runs.h"
#include "store_spsa.h"
#include "store_steer.h"
#include "store_tasks.h"
#include "store_test.h"

TestSuite(steer, .init = cu_fixture_init, .fini = cu_fixture_fini);

/* xqf-tune with args (printf-style) against the test database: exit status, stdout and stderr in out. */
static int tune(char *out, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int tune(char *out, size_t size, const char *fmt, ...)
{
    char args[1536], line[2560];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(line, sizeof line, "'%s/xqf-tune' %s --db '%s' 2>&1", XQF_BIN, args, cu_fx.db);
    FILE *p = popen(line, "r");
    cr_assert(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The run's id printed by a "new" command: its line that is a number (warnings come before it). */
static int64_t new_run(const char *fmt, const char *arg)
{
    char out[2048];
    int st = tune(out, sizeof out, fmt, arg);
    cr_assert_eq(st, 0, "exit %d: %s", st, out);
    for (const char *line = out; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != 0))
        if (strspn(line, "0123456789") == strcspn(line, "\n") && line[0] != '\n')
            return strtoll(line, NULL, 10);
    cr_assert_fail("no id in: %s", out);
    return 0;
}

static int64_t worker(const char *name)
{
    int64_t id;
    cr_assert_eq(store_hello(cu_fx.store, name, "", 1, 1, "", &id), 1);
    return id;
}

static StoreCounts draws(int64_t pairs)
{
    StoreCounts c = { .pairs = pairs, .draws = 2 * pairs, .nreasons = 3 };
    c.penta[2] = pairs;
    c.reasons[2] = 2 * pairs;
    return c;
}

/* Reports a lease's pairs all drawn. */
static void report_all(int64_t w, const StoreLease *l)
{
    StoreCounts c = draws(l->pairs);
    cr_assert_eq(cu_report(cu_fx.store, w, l->task_id, l->token, &c, NULL, 60000, NULL, NULL), REPORT_ACCEPTED);
}

static StoreLease claim(int64_t run, int64_t w)
{
    StoreLease l;
    bool given;
    cr_assert_eq(store_claim_batch(cu_fx.store, run, &w, 1, 60000, &l, &given), 1);
    return l;
}

static StoreRun load(int64_t id)
{
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, id, &r, false), 1);
    return r;
}

static int history(int64_t run)
{
    StoreHistory *h;
    int n = store_run_history(cu_fx.store, run, &h);
    free(h);
    return n;
}

/* ---- modify ------------------------------------------------------------------- */

Test(steer, modify_changes_a_running_run_and_records_it)
{
    CU_REQUIRE_DB();
    char out[4096];
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 8, 100, 200, 0, 5), w = worker("w1");
    StoreLease a = claim(run, w), b = claim(run, w);   /* 16 pairs given out */
    report_all(w, &a);                                  /* 8 played */

    cr_assert_eq(tune(out, sizeof out, "modify %" PRId64 " --priority 3 --throughput 50", run), 0);
    StoreRun r = load(run);
    cr_assert_eq(r.priority, 3);
    cr_assert_eq(r.throughput, 50);
    cr_assert_eq(history(run), 1);
    cr_assert_eq(tune(out, sizeof out, "show %" PRId64, run), 0);
    cr_assert(strstr(out, "modify priority 0 -> 3, throughput 100% -> 50%"), "%s", out);
    cr_assert(strstr(out, "Throughput: 50 %"), "%s", out);

    /* inconsistent changes: a message, exit 2, nothing changed */
    cr_assert_eq(tune(out, sizeof out, "modify %" PRId64 " --max-pairs 10 --priority 7", run), 2);
    cr_assert(strstr(out, "max pairs 10 is below the 16 pairs already given out (8 played)"), "%s", out);
    cr_assert_eq(tune(out, sizeof out, "modify %" PRId64 " --extend-pairs 5", run), 2);
    cr_assert(strstr(out, "not an SPSA run"), "%s", out);
    cr_assert_eq(tune(out, sizeof out, "modify 99999 --priority 1"), 2);
    cr_assert(strstr(out, "no run 99999"), "%s", out);
    cr_assert_eq(tune(out, sizeof out, "modify %" PRId64 " --throughput 0", run), 2);
    cr_assert_eq(tune(out, sizeof out, "modify %" PRId64 "", run), 2);
    r = load(run);
    cr_assert_eq(r.max_pairs, 100);
    cr_assert_eq(r.priority, 3);
    cr_assert_eq(history(run), 1);

    /* the cap down to the pairs given out: the run ends when they are in */
    cr_assert_eq(tune(out, sizeof out, "modify %" PRId64 " --max-pairs 16", run), 0);
    cr_assert_str_eq(load(run).state, "active");
    report_all(w, &b);
    r = load(run);
    cr_assert_str_eq(r.state, "finished");
    cr_assert_str_eq(r.verdict, "max pairs");
    cr_assert_eq(tune(out, sizeof out, "modify %" PRId64 " --priority 1", run), 2);
    cr_assert(strstr(out, "is finished"), "%s", out);
    cr_assert_eq(history(run), 2);
}

Test(steer, a_cap_at_the_pairs_played_ends_the_run_at_once)
{
    CU_REQUIRE_DB();
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 8, 100, 200, 0, 5), w = worker("w1");
    StoreLease a = claim(run, w);
    report_all(w, &a);
    StoreModify m = { .throughput = STORE_KEEP, .max_pairs = 8, .extend = STORE_KEEP };
    char why[256];
    cr_assert_eq(store_modify_run(cu_fx.store, run, "test", &m, why, sizeof why), 1, "%s", why);
    StoreRun r = load(run);
    cr_assert_str_eq(r.state, "finished");
    cr_assert_str_eq(r.verdict, "max pairs");
}

Test(steer, spsa_runs_are_extended)
{
    CU_REQUIRE_DB();
    char out[256];
    int64_t run = new_run("spsa new --params NullR,RookMg --pairs 10 --nodes 100%s", "");
    cr_assert_eq(tune(out, sizeof out, "modify %" PRId64 " --extend-pairs 5", run), 0);
    StoreSpsa *st = malloc(sizeof *st);
    cr_assert_eq(store_spsa_load(cu_fx.store, run, st), 1);
    cr_assert_eq(st->iterations, 15);
    free(st);
    cr_assert_eq(tune(out, sizeof out, "modify %" PRId64 " --extend-pairs 5 --max-pairs 40", run), 2);
    cr_assert_eq(load(run).max_pairs, 15);
}

/* ---- the throughput share in the scheduler ------------------------------------ */

/* Claims n tasks at once for one worker through the scheduler; counts the tasks per run into got[0..1]. */
static void claim_through_sched(int64_t w, int n, const int64_t runs[2], int got[2])
{
    Sched *s = sched_new(cu_fx.store);
    cr_assert(s);
    cr_assert_eq(sched_refresh(s, 0, 0), 0);
    SchedAsk *asks = calloc((size_t)n, sizeof *asks);
    XqfMsg *out = calloc((size_t)n, sizeof *out);
    for (int i = 0; i < n; i++)
        asks[i] = (SchedAsk){ .worker = w, .build = "", .key = 1 };
    cr_assert_eq(store_begin(cu_fx.store), 0);
    cr_assert_eq(sched_claim_batch(s, asks, n, 1, 60000, out), 0);
    cr_assert_eq(store_commit(cu_fx.store), 0);
    got[0] = got[1] = 0;
    for (int i = 0; i < n; i++) {
        cr_assert_eq(out[i].type, XQF_MSG_TASK);
        got[0] += (int64_t)out[i].u.task.run_id == runs[0];
        got[1] += (int64_t)out[i].u.task.run_id == runs[1];
        xqf_msg_free(&out[i]);
    }
    free(asks);
    free(out);
    sched_destroy(&s);
}

Test(steer, throughput_share_steers_the_scheduler)
{
    CU_REQUIRE_DB();
    int64_t runs[2] = { cu_sprt(cu_fx.store, "NullR=2", 1, 10000, 200, 0, 5), cu_sprt(cu_fx.store, "NullR=3", 1, 10000, 200, 0, 5) };
    int64_t w = worker("w1");
    int got[2];
    char why[256];
    StoreModify half = { .throughput = 50, .max_pairs = STORE_KEEP, .extend = STORE_KEEP };
    cr_assert_eq(store_modify_run(cu_fx.store, runs[1], "test", &half, why, sizeof why), 1, "%s", why);
    claim_through_sched(w, 30, runs, got);
    cr_assert_eq(got[0], 20, "share 100: %d tasks, share 50: %d", got[0], got[1]);
    cr_assert_eq(got[1], 10);
    /* back to equal shares: the next 30 even the leases out (30 and 30) */
    StoreModify full = { .throughput = 100, .max_pairs = STORE_KEEP, .extend = STORE_KEEP };
    cr_assert_eq(store_modify_run(cu_fx.store, runs[1], "test", &full, why, sizeof why), 1, "%s", why);
    claim_through_sched(w, 30, runs, got);
    cr_assert_eq(got[0], 10, "%d, %d", got[0], got[1]);
    cr_assert_eq(got[1], 20);
}

/*
 * 30 runs of one priority on 4 slots, throughputs 100 and 300, tasks of 1
 * to 3 pairs: every round claims 4 tasks and reports them all (the slots
 * are free again), the scheduler refreshed from the database now and then.
 * Served by instantaneous leases per share, the 4 oldest runs took every
 * task; over time each run's pairs follow its share.
 */
Test(steer, shares_hold_over_time_with_fewer_slots_than_runs)
{
    CU_REQUIRE_DB();
    enum { RUNS = 30, SLOTS = 4, ROUNDS = 750 };
    int64_t runs[RUNS], pairs[RUNS] = { 0 }, total = 0;
    int tp[RUNS], tp_sum = 0;
    char why[256];
    for (int i = 0; i < RUNS; i++) {
        runs[i] = cu_sprt(cu_fx.store, "NullR=2", 1 + i % 3, 1000000, 200, 0, 5);
        tp[i] = i % 2 ? 300 : 100;
        tp_sum += tp[i];
        StoreModify m = { .throughput = tp[i], .max_pairs = STORE_KEEP, .extend = STORE_KEEP };
        if (tp[i] != 100)
            cr_assert_eq(store_modify_run(cu_fx.store, runs[i], "test", &m, why, sizeof why), 1, "%s", why);
    }
    int64_t w = worker("w1");
    SchedAsk asks[SLOTS];
    for (int i = 0; i < SLOTS; i++)
        asks[i] = (SchedAsk){ .worker = w, .build = "", .key = 1 };
    Sched *s = sched_new(cu_fx.store);
    cr_assert(s);
    for (int round = 0; round < ROUNDS; round++) {
        XqfMsg out[SLOTS];
        cr_assert_eq(sched_refresh(s, round * 100, 1000), 0);      /* every 10 rounds */
        cr_assert_eq(store_begin(cu_fx.store), 0);
        cr_assert_eq(sched_claim_batch(s, asks, SLOTS, 1, 60000, out), 0);
        for (int k = 0; k < SLOTS; k++) {
            cr_assert_eq(out[k].type, XQF_MSG_TASK, "round %d", round);
            const XqfMsg_task *t = &out[k].u.task;
            int i = 0;
            while (i < RUNS && runs[i] != (int64_t)t->run_id)
                i++;
            cr_assert_lt(i, RUNS);
            pairs[i] += (int64_t)t->pairs;
            total += (int64_t)t->pairs;
            StoreCounts c = draws((int64_t)t->pairs);
            cr_assert_eq(cu_report(cu_fx.store, w, (int64_t)t->task_id, (int64_t)t->lease, &c, NULL, 60000, NULL,
                                   NULL),
                         REPORT_ACCEPTED);
            cr_assert_eq(sched_report(s, runs[i], (int64_t)t->task_id, true), 0);
            xqf_msg_free(&out[k]);
        }
        cr_assert_eq(store_commit(cu_fx.store), 0);
    }
    sched_destroy(&s);
    double worst = 0;
    for (int i = 0; i < RUNS; i++) {
        double want = (double)total * tp[i] / tp_sum, off = fabs((double)pairs[i] - want) / want;
        cr_assert_leq(off, 0.10, "run %d (throughput %d, %d pairs a task): %lld pairs of %lld, its share %.1f", i,
                      tp[i], 1 + i % 3, (long long)pairs[i], (long long)total, want);
        worst = off > worst ? off : worst;
    }
    fprintf(stderr, "steer: 30 runs on 4 slots, %d tasks, %lld pairs: every run within %.1f%% of its share\n",
            SLOTS * ROUNDS, (long long)total, 100 * worst);
}

/* ---- long controls get their share (sched.h, sched_pair_weight) ---------------- */

/* A run's row with only what the weight reads. */
static StoreRun control(int64_t nodes, int64_t base_ms, int64_t inc_ms, int threads)
{
    StoreRun r;
    memset(&r, 0, sizeof r);
    r.nodes = nodes, r.base_ms = base_ms, r.inc_ms = inc_ms, r.threads = threads;
    return r;
}

Test(steer, a_controls_ratio_and_weight)
{
    StoreRun stc = control(0, 10000, 100, 1), ltc = control(0, 60000, 600, 1);
    cr_assert_float_eq(sched_tc_ratio(&stc), 1, 1e-12);
    cr_assert_float_eq(sched_tc_ratio(&ltc), 6, 1e-12, "60+0.6 is 6 times 10+0.1");
    cr_assert_float_eq(sched_pair_weight(&ltc), pow(6, -0.226), 1e-12);
    cr_assert_float_eq(6 * sched_pair_weight(&ltc), 4.0021, 1e-4, "Fishtest's LTC: 4x the STC's CPU");
    StoreRun smp = control(0, 10000, 100, 4);
    cr_assert_float_eq(sched_tc_ratio(&smp), 4, 1e-12, "4 threads a game take 4 cores");
    StoreRun odds = control(0, 10000, 100, 1);
    odds.base1_ms = 50000, odds.inc1_ms = 500;                  /* 10+0.1 against 50+0.5: 16 s and 80 s */
    cr_assert_float_eq(sched_tc_ratio(&odds), 3, 1e-12, "time odds: the two clocks averaged");
    StoreRun bullet = control(0, 1000, 10, 1), small = control(20000, 0, 0, 1), depth = control(0, 0, 0, 1);
    cr_assert_float_eq(sched_pair_weight(&bullet), 1, 1e-12, "a shorter control is not boosted");
    StoreRun nodes = control(1600000, 0, 0, 1);                 /* 60 moves of 1.6 M nodes at 1 M nodes/s: 96 s */
    cr_assert_float_eq(sched_tc_ratio(&nodes), 6, 1e-12);
    cr_assert_float_eq(sched_pair_weight(&small), 1, 1e-12, "20,000 nodes: below 10+0.1");
    cr_assert_float_eq(sched_tc_ratio(&depth), 1, 1e-12, "fixed depth: no estimate, 1");
}

/*
 * A short (10+0.1) and a long (60+0.6) run of equal throughput on the same
 * simulated workers: 8 slots, each busy for a task's games at the
 * estimated duration of its control (sched.c: base + 60 increments a
 * side), asking again when free; 300 tasks of 1 pair.  The long run gets
 * 6^0.774 / 6 = 0.667 of the short one's pairs, and 6^0.774 = 4.0 times its
 * slot time (Fishtest's rule); before the weight, equal pairs and 6 times
 * the time.
 */
Test(steer, long_controls_get_their_share)
{
    CU_REQUIRE_DB();
    enum { SLOTS = 8, TASKS = 300 };
    int64_t runs[2] = { cu_sprt(cu_fx.store, "NullR=2", 1, 1000000, 200, 0, 5),
                        cu_sprt(cu_fx.store, "NullR=3", 1, 1000000, 200, 0, 5) };
    const double pair_s[2] = { 2 * 2 * (10 + 60 * 0.1), 2 * 2 * (60 + 60 * 0.6) }; /* 2 games of 2 sides */
    char sql[256], err[256];
    snprintf(sql, sizeof sql, "UPDATE runs SET nodes = 0, base_ms = 10000, inc_ms = 100 WHERE id = %" PRId64, runs[0]);
    cr_assert_eq(store_exec(cu_fx.store, sql, err, sizeof err), 0, "%s", err);
    snprintf(sql, sizeof sql, "UPDATE runs SET nodes = 0, base_ms = 60000, inc_ms = 600 WHERE id = %" PRId64, runs[1]);
    cr_assert_eq(store_exec(cu_fx.store, sql, err, sizeof err), 0, "%s", err);
    int64_t w = worker("w1");
    double free_at[SLOTS] = { 0 }, busy[2] = { 0 }, now = 0;
    int64_t pairs[2] = { 0 };
    Sched *s = sched_new(cu_fx.store);
    cr_assert(s);
    for (int given = 0; given < TASKS; given++) {
        int k = 0;                                   /* the slot free first asks */
        for (int j = 1; j < SLOTS; j++)
            k = free_at[j] < free_at[k] ? j : k;
        now = free_at[k];
        cr_assert_eq(sched_refresh(s, (int64_t)(now * 1000), 3000), 0);
        XqfMsg out;
        SchedAsk ask = { .worker = w, .build = "", .key = 1 };
        cr_assert_eq(store_begin(cu_fx.store), 0);
        cr_assert_eq(sched_claim_batch(s, &ask, 1, 1, 60000, &out), 0);
        cr_assert_eq(out.type, XQF_MSG_TASK, "task %d", given);
        const XqfMsg_task *t = &out.u.task;
        int i = (int64_t)t->run_id == runs[1];
        cr_assert(i || (int64_t)t->run_id == runs[0]);
        pairs[i] += (int64_t)t->pairs;
        busy[i] += pair_s[i] * (double)t->pairs;
        free_at[k] = now + pair_s[i] * (double)t->pairs;
        /* its result comes back at once: the database needs no clock, the slot stays busy in the simulation */
        StoreCounts c = draws((int64_t)t->pairs);
        cr_assert_eq(cu_report(cu_fx.store, w, (int64_t)t->task_id, (int64_t)t->lease, &c, NULL, 60000, NULL, NULL),
                     REPORT_ACCEPTED);
        cr_assert_eq(sched_report(s, runs[i], (int64_t)t->task_id, true), 0);
        cr_assert_eq(store_commit(cu_fx.store), 0);
        xqf_msg_free(&out);
    }
    sched_destroy(&s);
    double pair_ratio = (double)pairs[1] / (double)pairs[0], time_ratio = busy[1] / busy[0];
    double want_pairs = pow(6, SCHED_TC_EXPONENT) / 6, want_time = pow(6, SCHED_TC_EXPONENT);
    fprintf(stderr, "steer: 10+0.1 and 60+0.6 on %d slots, %d tasks over %.0f simulated s: pairs %lld and %lld "
                    "(ratio %.3f, rule %.3f), slot time ratio %.3f (rule %.3f)\n",
            SLOTS, TASKS, now, (long long)pairs[0], (long long)pairs[1], pair_ratio, want_pairs, time_ratio,
            want_time);
    cr_assert_float_eq(pair_ratio, want_pairs, 0.03 * want_pairs, "pairs: %lld and %lld", (long long)pairs[0],
                       (long long)pairs[1]);
    cr_assert_float_eq(time_ratio, want_time, 0.03 * want_time);
}

/* ---- fixed-games runs and time odds -------------------------------------------- */

/* One task for worker w from scheduler s (refreshed first when stale), as the coordinator would send it. */
static void claim_one(Sched *s, int64_t w, XqfMsg *m)
{
    SchedAsk ask = { .worker = w, .build = "", .key = 1 };
    cr_assert_eq(sched_refresh(s, 0, 0), 0);
    cr_assert_eq(store_begin(cu_fx.store), 0);
    cr_assert_eq(sched_claim_batch(s, &ask, 1, 1, 60000, m), 0);
    cr_assert_eq(store_commit(cu_fx.store), 0);
    cr_assert_eq(m->type, XQF_MSG_TASK);
}

/* One task for worker w through a scheduler of its own. */
static void sched_one(int64_t w, XqfMsg *m)
{
    Sched *s = sched_new(cu_fx.store);
    claim_one(s, w, m);
    sched_destroy(&s);
}

/*
 * A run's settings read with its book (--keep-scores) go with every task,
 * not only those claimed before the scheduler's first refresh after the
 * book was loaded: the coordinator refreshes every few seconds.
 */
Test(steer, keep_scores_survives_a_refresh)
{
    CU_REQUIRE_DB();
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 2, 10000, 200, 0, 5), w = worker("w1");
    cr_assert_eq(store_set_game_scores(cu_fx.store, run, true), 0);
    Sched *s = sched_new(cu_fx.store);
    cr_assert(s);
    XqfMsg m;
    claim_one(s, w, &m);
    cr_assert_eq((int64_t)m.u.task.run_id, run);
    cr_assert(m.u.task.scores, "the first task goes out without scores");
    uint64_t first = m.u.task.task_id;
    xqf_msg_free(&m);
    for (int i = 0; i < 2; i++) {
        sched_invalidate(s);
        claim_one(s, w, &m);
        cr_assert_eq((int64_t)m.u.task.run_id, run);
        cr_assert_neq(m.u.task.task_id, first);
        cr_assert(m.u.task.scores, "after refresh %d the task goes out without scores", i + 1);
        cr_assert_eq(m.u.task.openings.count, 2, "after refresh %d: %u openings", i + 1, m.u.task.openings.count);
        xqf_msg_free(&m);
    }
    sched_destroy(&s);
}

Test(steer, games_runs_play_their_pairs_and_report_elo)
{
    CU_REQUIRE_DB();
    char out[4096];
    int64_t run = new_run("games new --pairs 8 --pairs-per-task 8 --test NullR=2 --base %s --nodes 100", "''");
    StoreRun r = load(run);
    cr_assert_str_eq(r.kind, run_kind_get(RUN_KIND_GAMES)->name);
    cr_assert(isnan(r.elo0));
    int64_t w = worker("w1");
    XqfMsg m;
    sched_one(w, &m);
    cr_assert_str_eq(m.u.task.kind, "games");
    cr_assert_eq(m.u.task.pairs, 8);
    cr_assert_str_eq(m.u.task.params0, "NullR=2");
    /* 3 pairs won twice, 5 drawn */
    StoreCounts c = draws(8);
    c.penta[2] = 5, c.penta[4] = 3, c.wins = 6, c.draws = 10, c.reasons[2] = 10, c.reasons[1] = 6;
    int64_t task = (int64_t)m.u.task.task_id, token = (int64_t)m.u.task.lease;
    xqf_msg_free(&m);
    cr_assert_eq(cu_report(cu_fx.store, w, task, token, &c, NULL, 60000, NULL, NULL), REPORT_ACCEPTED);
    r = load(run);
    cr_assert_str_eq(r.state, "finished");
    cr_assert_str_eq(r.verdict, "max pairs");
    cr_assert_eq(tune(out, sizeof out, "show %" PRId64, run), 0);
    cr_assert(strstr(out, "(games) finished: max pairs"), "%s", out);
    cr_assert(strstr(out, "\nElo: ") && strstr(out, "nElo: ") && strstr(out, "LOS: 9"), "%s", out);
    cr_assert_null(strstr(out, "LLR"), "%s", out);
    static char page[1 << 17];
    cr_assert_eq(tune(page, sizeof page, "report %" PRId64 " --html /dev/stdout", run), 0);
    cr_assert(strstr(page, ">GAMES<") && strstr(page, "<th>Type</th><td>games run</td>") &&
              strstr(page, "<th class=\"num\">LOS</th>"), "%.300s", page);

    cr_assert_eq(tune(out, sizeof out, "games new --test NullR=2 --base '' --nodes 100"), 2);
    cr_assert(strstr(out, "--pairs N is required"), "%s", out);
    cr_assert_eq(tune(out, sizeof out, "games new --pairs 8 --test NullR=2 --base '' --nodes 100 --tc-base 5+0.05"), 2);
    cr_assert(strstr(out, "--tc-base (time odds) needs --tc"), "%s", out);
    cr_assert_eq(tune(out, sizeof out, "games new --pairs 8 --test NullR=2 --base '' --tc 10+0.1 --tc-base 5+x"), 2);
    cr_assert(strstr(out, "--tc-base: '5+x'"), "%s", out);
}

Test(steer, time_odds_go_with_the_task)
{
    CU_REQUIRE_DB();
    char out[4096];
    int64_t run = new_run("sprt new --test NullR=2 --base %s --tc 10+0.1 --tc-base 5+0.05", "''");
    StoreRun r = load(run);
    cr_assert_eq(r.base_ms, 10000);
    cr_assert_eq(r.base1_ms, 5000);
    cr_assert_eq(r.inc1_ms, 50);
    XqfMsg m;
    sched_one(worker("w1"), &m);
    cr_assert_eq(m.u.task.base_ms, 10000);
    cr_assert_eq(m.u.task.inc_ms, 100);
    cr_assert_eq(m.u.task.base1_ms, 5000);
    cr_assert_eq(m.u.task.inc1_ms, 50);
    xqf_msg_free(&m);
    cr_assert_eq(tune(out, sizeof out, "show %" PRId64, run), 0);
    cr_assert(strstr(out, "Time odds: test 10+0.1, base 5+0.05"), "%s", out);
    cr_assert(strstr(out, "Time control: 10+0.1/5+0.05"), "%s", out);
}

/* ---- chains ----------------------------------------------------------------------- */

/* The chain's stage idx. */
static StoreChainStage stage(int64_t chain, int idx)
{
    StoreChain c;
    cr_assert_eq(store_load_chain(cu_fx.store, chain, &c), 1);
    cr_assert(idx < c.count);
    return c.stages[idx];
}

/* A build as xqf-tune build records one: with the parameters it knows (here the one the chains tune). */
static int64_t fake_build(const char *name)
{
    StoreBuild b = { .bench_nodes = 1 };
    snprintf(b.build_id, sizeof b.build_id, "%s", name);
    snprintf(b.sha256, sizeof b.sha256, "%064x", (unsigned)strlen(name) * 7919u);
    int64_t id;
    cr_assert_eq(store_add_build(cu_fx.store, &b, &id), 0);
    const StoreBuildParam knows[] = { { "NullR", 1, 6 } };
    cr_assert_eq(store_set_build_params(cu_fx.store, id, knows, 1), 0);
    return id;
}

/*
 * SPSA, build, SPRT (passes), SPRT (fails): each stage starts when the run
 * before it ends (the database's trigger: no xqf-tune, no coordinator), the
 * SPRTs play the tuned set (on the tuned build) against the start set, and
 * the failed SPRT ends the chain.
 */
Test(steer, a_chain_moves_on_by_itself_and_stops_at_a_failed_sprt)
{
    CU_REQUIRE_DB();
    char out[8192];
    int64_t base = fake_build("base-engine");
    char args[256];
    snprintf(args, sizeof args, "--base-build %" PRId64, base);
    int64_t chain = new_run("chain new --params NullR --pairs 4 --nodes 100 --then-build --then-sprt 0,5,10+0.1 "
                            "--then-sprt 0,5,2000n --sprt-max-pairs 300 --name nightly %s", args);
    StoreChainStage st = stage(chain, 0);
    cr_assert_eq(st.kind, CHAIN_SPSA);
    cr_assert_str_eq(st.state, "running");
    int64_t spsa = st.run_id;
    cr_assert_str_eq(load(spsa).kind, "spsa");
    cr_assert_str_eq(stage(chain, 1).state, "waiting");
    cr_assert_eq(tune(out, sizeof out, "list"), 0);
    cr_assert(strstr(out, "[chain "), "%s", out);

    /* SPSA over (its pairs played): the build stage waits for a builder */
    cr_assert_eq(store_spsa_save(cu_fx.store, spsa, (const double[]){ 3.6 }, 1, 4), 0);
    cr_assert_eq(store_finish_run(cu_fx.store, spsa, "finished", "max pairs"), 0);
    cr_assert_str_eq(stage(chain, 0).state, "passed");
    cr_assert_str_eq(stage(chain, 1).state, "running");
    int64_t *ids;
    cr_assert_eq(store_chains_to_advance(cu_fx.store, &ids), 1);
    cr_assert_eq(ids[0], chain);
    free(ids);

    /* built: the first SPRT starts, tuned set on the tuned build against the start set */
    int64_t tuned = fake_build("tuned-engine-x");
    cr_assert_eq(store_chain_built(cu_fx.store, chain, tuned, ""), 1);
    cr_assert_eq(store_chain_built(cu_fx.store, chain, tuned, ""), 0);   /* nothing waits any more */
    st = stage(chain, 2);
    cr_assert_str_eq(st.state, "running");
    StoreRun r = load(st.run_id);
    cr_assert_str_eq(r.kind, "sprt");
    cr_assert_eq(r.base_ms, 10000);
    cr_assert_eq(r.max_pairs, 300);
    cr_assert_str_eq(r.state, "active");
    char p0[STORE_PARAMS_MAX + 1], p1[STORE_PARAMS_MAX + 1];
    cr_assert_eq(store_run_sets(cu_fx.store, st.run_id, p0, p1, sizeof p0), 1);
    char want[64];
    snprintf(want, sizeof want, "NullR=%d", 4);                   /* theta 3.6 rounded */
    cr_assert_str_eq(p0, want);
    cr_assert(strncmp(p1, "NullR=", 6) == 0 && strcmp(p1, p0) != 0, "%s", p1);
    cr_assert_str_neq(r.build0, "");
    cr_assert_str_neq(r.build1, "");

    /* it passes: the second SPRT starts (fixed nodes) */
    cr_assert_eq(store_update_sprt(cu_fx.store, st.run_id, 3.0, "H1 accepted"), 0);
    cr_assert_str_eq(stage(chain, 2).state, "passed");
    st = stage(chain, 3);
    cr_assert_str_eq(st.state, "running");
    cr_assert_eq(load(st.run_id).nodes, 2000);
    cr_assert_eq(tune(out, sizeof out, "chain show %" PRId64, chain), 0);
    cr_assert(strstr(out, "Chain: ") && strstr(out, " active"), "%s", out);
    cr_assert(strstr(out, "finished H1 accepted"), "%s", out);
    cr_assert_eq(tune(out, sizeof out, "show %" PRId64, st.run_id), 0);
    cr_assert(strstr(out, "Chain: "), "%s", out);

    /* it fails: the chain ends */
    cr_assert_eq(store_update_sprt(cu_fx.store, st.run_id, -3.0, "H0 accepted"), 0);
    StoreChain c;
    cr_assert_eq(store_load_chain(cu_fx.store, chain, &c), 1);
    cr_assert_str_eq(c.state, "failed");
    cr_assert(strstr(c.note, "H0 accepted"), "%s", c.note);
    cr_assert_eq(tune(out, sizeof out, "chain list"), 0);
    cr_assert(strstr(out, "failed") && strstr(out, "nightly"), "%s", out);
}

/* The SPSA's last update comes after the run ended (same transaction): the SPRT made from it follows. */
Test(steer, the_sprt_plays_the_final_theta)
{
    CU_REQUIRE_DB();
    int64_t chain = new_run("chain new --params NullR --pairs 4 --nodes 100 --then-sprt 0,5,500n --sprt-max-pairs 77 "
                            "--seed 5 --priority 3 --pairs-per-task 2%s", "");
    int64_t spsa = stage(chain, 0).run_id;
    cr_assert_eq(store_spsa_save(cu_fx.store, spsa, (const double[]){ 3.6 }, 1, 3), 0);
    cr_assert_eq(store_finish_run(cu_fx.store, spsa, "finished", "max pairs"), 0);
    int64_t sprt = stage(chain, 1).run_id;
    /* the SPSA run's settings (run_setting_columns, copied by name), the stage's bounds and pair cap */
    StoreRun r = load(sprt);
    cr_assert(r.seed == 5 && r.priority == 3 && r.pairs_per_task == 2, "seed %llu, priority %d, pairs per task %d",
              (unsigned long long)r.seed, r.priority, r.pairs_per_task);
    cr_assert(r.max_pairs == 77 && r.elo0 == 0 && r.elo1 == 5, "%lld pairs [%g, %g]", (long long)r.max_pairs, r.elo0,
              r.elo1);
    char p0[STORE_PARAMS_MAX + 1], p1[STORE_PARAMS_MAX + 1];
    cr_assert_eq(store_run_sets(cu_fx.store, sprt, p0, p1, sizeof p0), 1);
    cr_assert_str_eq(p0, "NullR=4");
    cr_assert_eq(store_spsa_save(cu_fx.store, spsa, (const double[]){ 5.4 }, 1, 4), 0);
    cr_assert_eq(store_run_sets(cu_fx.store, sprt, p0, p1, sizeof p0), 1);
    cr_assert_str_eq(p0, "NullR=5");
    /* once the SPRT has given out tasks its sets stay */
    StoreLease l = claim(sprt, worker("w1"));
    cr_assert_str_eq(l.params0, "NullR=5");
    cr_assert_eq(store_spsa_save(cu_fx.store, spsa, (const double[]){ 1.2 }, 1, 5), 0);
    cr_assert_eq(store_run_sets(cu_fx.store, sprt, p0, p1, sizeof p0), 1);
    cr_assert_str_eq(p0, "NullR=5");
}

/*
 * An SPSA whose rounded result is its start set (NullR 3): the chain's SPRT
 * would pit one engine against itself, so it ends before its first task and
 * fails the chain, saying why.  Judged at commit, on the final theta: a
 * last update that moves the set, in the transaction that ended the SPSA,
 * keeps the SPRT.
 */
Test(steer, a_chain_sprt_of_one_engine_ends_before_it_plays)
{
    CU_REQUIRE_DB();
    const char *args = "chain new --params NullR --pairs 4 --nodes 100 --then-sprt 0,5,500n%s";
    int64_t chain = new_run(args, "");
    int64_t spsa = stage(chain, 0).run_id;
    cr_assert_eq(store_spsa_save(cu_fx.store, spsa, (const double[]){ 3.4 }, 1, 4), 0);
    cr_assert_eq(store_finish_run(cu_fx.store, spsa, "finished", "max pairs"), 0);
    StoreChainStage st = stage(chain, 1);
    cr_assert_str_eq(st.state, "failed");
    char p0[STORE_PARAMS_MAX + 1], p1[STORE_PARAMS_MAX + 1];
    StoreRun r = load(st.run_id);
    cr_assert_str_eq(r.state, "finished");
    cr_assert_str_eq(r.verdict, "nothing to test: both sides are one engine");
    cr_assert_eq(store_run_sets(cu_fx.store, st.run_id, p0, p1, sizeof p0), 1);
    cr_assert(strcmp(p0, "NullR=3") == 0 && strcmp(p1, p0) == 0, "%s against %s", p0, p1);
    cr_assert_eq(r.next_pair, 0);
    StoreChain c;
    cr_assert_eq(store_load_chain(cu_fx.store, chain, &c), 1);
    cr_assert_str_eq(c.state, "failed");
    cr_assert(strstr(c.note, "nothing to test"), "%s", c.note);

    /* the last update moves the set, in the same transaction: the SPRT plays it */
    chain = new_run(args, "");
    spsa = stage(chain, 0).run_id;
    cr_assert_eq(store_begin(cu_fx.store), 0);
    cr_assert_eq(store_finish_run(cu_fx.store, spsa, "finished", "max pairs"), 0);
    cr_assert_eq(store_spsa_save(cu_fx.store, spsa, (const double[]){ 3.6 }, 1, 4), 0);
    cr_assert_eq(store_commit(cu_fx.store), 0);
    st = stage(chain, 1);
    cr_assert_str_eq(st.state, "running");
    cr_assert_str_eq(load(st.run_id).state, "active");
    cr_assert_eq(store_run_sets(cu_fx.store, st.run_id, p0, p1, sizeof p0), 1);
    cr_assert(strcmp(p0, "NullR=4") == 0 && strcmp(p1, "NullR=3") == 0, "%s against %s", p0, p1);

    /* and one that moves it back to the start set ends it */
    chain = new_run(args, "");
    spsa = stage(chain, 0).run_id;
    cr_assert_eq(store_spsa_save(cu_fx.store, spsa, (const double[]){ 3.6 }, 1, 3), 0);
    cr_assert_eq(store_begin(cu_fx.store), 0);
    cr_assert_eq(store_finish_run(cu_fx.store, spsa, "finished", "max pairs"), 0);
    cr_assert_eq(store_spsa_save(cu_fx.store, spsa, (const double[]){ 2.8 }, 1, 4), 0);
    cr_assert_eq(store_commit(cu_fx.store), 0);
    cr_assert_str_eq(stage(chain, 1).state, "failed");
    cr_assert_eq(store_load_chain(cu_fx.store, chain, &c), 1);
    cr_assert(strstr(c.note, "nothing to test"), "%s", c.note);
    cr_assert_eq(store_run_sets(cu_fx.store, stage(chain, 1).run_id, p0, p1, sizeof p0), 1);
    cr_assert_str_eq(p0, "NullR=3");
}

Test(steer, a_stopped_run_stops_its_chain_and_a_failed_build_fails_it)
{
    CU_REQUIRE_DB();
    char out[4096];
    int64_t chain = new_run("chain new --params NullR --pairs 4 --nodes 100 --then-sprt 0,5,500n%s", "");
    int64_t spsa = stage(chain, 0).run_id;
    cr_assert_eq(tune(out, sizeof out, "stop %" PRId64, spsa), 0);
    StoreChain c;
    cr_assert_eq(store_load_chain(cu_fx.store, chain, &c), 1);
    cr_assert_str_eq(c.state, "stopped");
    cr_assert_str_eq(c.stages[1].state, "cancelled", "an ended chain leaves no stage waiting");

    /* a build that cannot be made (no source tree there): the chain fails, with the reason */
    chain = new_run("chain new --params NullR --pairs 4 --nodes 100 --then-build --then-sprt 0,5,500n%s", "");
    cr_assert_eq(store_finish_run(cu_fx.store, stage(chain, 0).run_id, "finished", "max pairs"), 0);
    cr_assert_eq(tune(out, sizeof out, "chain advance --source /nonexistent --out /tmp/xqf-steer-test"), 2);
    cr_assert(strstr(out, "not the project's source tree"), "%s", out);
    cr_assert_eq(store_load_chain(cu_fx.store, chain, &c), 1);
    cr_assert_str_eq(c.state, "failed");
    cr_assert(strstr(c.note, "build"), "%s", c.note);
}

/*
 * xqf-tune chain stop: the running stage's run stopped as xqf-tune stop
 * stops a run, the stages not started cancelled, in the run's history; and
 * nothing moves a stopped chain on after: neither its run's end nor chain
 * advance (a build recorded late is not, and starts nothing).  An ended
 * chain and no chain are refused (exit 2).
 */
Test(steer, a_stopped_chain_stays_stopped)
{
    CU_REQUIRE_DB();
    char out[4096];
    const char *args = "chain new --params NullR --pairs 4 --nodes 100 --then-build --then-sprt 0,5,500n "
                       "--then-sprt 0,5,1000n%s";
    /* in its SPSA stage: the run stopped with the verdict of a stop, by xqf-tune's actor */
    int64_t chain = new_run(args, "");
    int64_t spsa = stage(chain, 0).run_id;
    cr_assert_eq(tune(out, sizeof out, "chain stop %" PRId64, chain), 0, "%s", out);
    char want[160];
    snprintf(want, sizeof want, "chain %" PRId64 " stopped at stage 0, its run %" PRId64 " stopped, 3 stages not "
             "started cancelled", chain, spsa);
    cr_assert(strstr(out, want), "%s", out);
    StoreRun r = load(spsa);
    cr_assert_str_eq(r.state, "stopped");
    cr_assert(strncmp(r.verdict, "stopped by xqf-tune:", 20) == 0, "%s", r.verdict);
    StoreChain c;
    cr_assert_eq(store_load_chain(cu_fx.store, chain, &c), 1);
    cr_assert_str_eq(c.state, "stopped");
    cr_assert(strstr(c.note, "stage 0 (spsa, run ") && strstr(c.note, "stopped by xqf-tune:"), "%s", c.note);
    cr_assert_str_eq(c.stages[0].state, "stopped");
    for (int i = 1; i < 4; i++)
        cr_assert_str_eq(c.stages[i].state, "cancelled", "stage %d", i);
    StoreHistory *h;
    int n = store_run_history(cu_fx.store, spsa, &h);
    /* its creation's line, then the stop's */
    cr_assert(n == 2 && strcmp(h[0].action, "create") == 0 && strcmp(h[1].action, "stop") == 0 &&
              strstr(h[1].detail, want), "%d", n);
    free(h);
    /* again, and no such chain: refused */
    cr_assert_eq(tune(out, sizeof out, "chain stop %" PRId64, chain), 2, "%s", out);
    snprintf(want, sizeof want, "chain stop: chain %" PRId64 " has ended (stopped)", chain);
    cr_assert(strstr(out, want), "%s", out);
    cr_assert_eq(tune(out, sizeof out, "chain stop 999999"), 2, "%s", out);
    cr_assert(strstr(out, "chain stop: no chain 999999"), "%s", out);
    cr_assert_eq(tune(out, sizeof out, "chain show %" PRId64, chain), 0);
    cr_assert(strstr(out, "[cancelled]") && strstr(out, " stopped: stage 0"), "%s", out);

    /* waiting for its build: stopped with no run; chain advance then finds nothing to do */
    chain = new_run(args, "");
    cr_assert_eq(store_finish_run(cu_fx.store, stage(chain, 0).run_id, "finished", "max pairs"), 0);
    cr_assert_str_eq(stage(chain, 1).state, "running");
    cr_assert_eq(tune(out, sizeof out, "chain stop %" PRId64, chain), 0, "%s", out);
    snprintf(want, sizeof want, "chain %" PRId64 " stopped at stage 1, 2 stages not started cancelled", chain);
    cr_assert(strstr(out, want), "%s", out);
    cr_assert_eq(store_load_chain(cu_fx.store, chain, &c), 1);
    cr_assert(strcmp(c.state, "stopped") == 0 && strcmp(c.stages[0].state, "passed") == 0 &&
              strcmp(c.stages[1].state, "stopped") == 0 && strcmp(c.stages[2].state, "cancelled") == 0,
              "%s: %s %s %s", c.state, c.stages[0].state, c.stages[1].state, c.stages[2].state);
    int64_t *ids;
    cr_assert_eq(store_chains_to_advance(cu_fx.store, &ids), 0);
    free(ids);
    cr_assert_eq(tune(out, sizeof out, "chain advance %" PRId64 " --source /nonexistent --out /tmp/xqf-steer-test", chain),
                 0, "%s", out);
    /* a build that finished after the stop is not recorded and starts nothing */
    cr_assert_eq(store_chain_built(cu_fx.store, chain, fake_build("late-build"), ""), 0);
    cr_assert_eq(store_load_chain(cu_fx.store, chain, &c), 1);
    cr_assert(strcmp(c.state, "stopped") == 0 && c.stages[1].build_id == 0 && c.stages[2].run_id == 0 &&
              strcmp(c.stages[2].state, "cancelled") == 0, "%s", c.state);

    /* an SPRT stage: a run's end after the stop (the coordinator's verdict) moves nothing either */
    chain = new_run("chain new --params NullR --pairs 4 --nodes 100 --then-sprt 0,5,500n --then-sprt 0,5,1000n%s", "");
    spsa = stage(chain, 0).run_id;
    cr_assert_eq(store_spsa_save(cu_fx.store, spsa, (const double[]){ 3.6 }, 1, 4), 0);
    cr_assert_eq(store_finish_run(cu_fx.store, spsa, "finished", "max pairs"), 0);
    int64_t sprt = stage(chain, 1).run_id;
    cr_assert_str_eq(load(sprt).state, "active");
    cr_assert_eq(tune(out, sizeof out, "chain stop %" PRId64, chain), 0, "%s", out);
    cr_assert_str_eq(load(sprt).state, "stopped");
    cr_assert_eq(store_update_sprt(cu_fx.store, sprt, 3.0, "H1 accepted"), 0);
    cr_assert_eq(store_load_chain(cu_fx.store, chain, &c), 1);
    cr_assert(strcmp(c.state, "stopped") == 0 && strcmp(c.stages[1].state, "stopped") == 0 &&
              strcmp(c.stages[2].state, "cancelled") == 0 && c.stages[2].run_id == 0, "%s", c.state);
    cr_assert_eq(history(sprt), 1);
}

/* A registered net of random weights (cu_random_net) named name: its id. */
static int64_t test_net(const char *name, uint64_t seed)
{
    char path[512], err[256], out[4096];
    snprintf(path, sizeof path, "%s/%s.nnue", cu_fx.dir, name);
    cr_assert_eq(cu_random_net(path, seed, err, sizeof err), 0, "%s", err);
    cr_assert_eq(tune(out, sizeof out, "net add '%s' --name %s", path, name), 0, "%s", out);
    const char *id = strstr(out, "Net: ");
    cr_assert_not_null(id, "%s", out);
    return strtoll(id + 5, NULL, 10);
}

/*
 * Data run, training, the net registered, SPRT (passes): the data run's
 * end starts the training (waiting for chain advance), its record the net
 * stage, the net's the SPRT of that net against the chain's base net, on
 * the data run's set, book and seed; show and list follow.
 */
Test(steer, a_net_chain_moves_on_by_itself)
{
    CU_REQUIRE_DB();
    char out[8192];
    int64_t base = test_net("base-net", 3);
    int64_t chain = new_run("chain new --data-games 6 --nodes 100 --random-plies 4 --then-train --epochs 2 --batch 128 "
                            "--lambda 0.5 --lr 0.002 --then-sprt 0,5,300n --sprt-max-pairs 20 --base-net base-net "
                            "--seed 9 --name loop%s", "");
    StoreChainStage st = stage(chain, 0);
    cr_assert_eq(st.kind, CHAIN_DATA);
    cr_assert_str_eq(st.state, "running");
    int64_t data = st.run_id;
    StoreRun r = load(data);
    cr_assert_str_eq(r.kind, "data");
    cr_assert_eq(r.max_pairs, 3);
    st = stage(chain, 1);
    cr_assert(st.kind == CHAIN_TRAIN && st.epochs == 2 && st.batch == 128 && st.lambda == 0.5 && st.lr == 0.002);
    cr_assert_str_eq(st.state, "waiting");
    cr_assert_eq(stage(chain, 2).kind, CHAIN_NET);
    cr_assert_eq(stage(chain, 3).kind, CHAIN_SPRT);
    int64_t *ids;
    cr_assert_eq(store_chains_to_advance(cu_fx.store, &ids), 0);
    free(ids);

    /* the data run played its games: the training waits for chain advance */
    cr_assert_eq(store_finish_run(cu_fx.store, data, "finished", "max pairs"), 0);
    cr_assert_str_eq(stage(chain, 0).state, "passed");
    cr_assert_str_eq(stage(chain, 1).state, "running");
    cr_assert_eq(store_chains_to_advance(cu_fx.store, &ids), 1);
    cr_assert_eq(ids[0], chain);
    free(ids);

    /* trained: the net waits to be registered */
    cr_assert_eq(store_chain_done(cu_fx.store, chain, CHAIN_TRAIN, true, 0, 0, "480 positions -> net.nnue"), 1);
    cr_assert_eq(store_chain_done(cu_fx.store, chain, CHAIN_TRAIN, true, 0, 0, ""), 0, "nothing trains any more");
    cr_assert_str_eq(stage(chain, 1).state, "passed");
    cr_assert_str_eq(stage(chain, 1).detail, "480 positions -> net.nnue");
    cr_assert_str_eq(stage(chain, 2).state, "running");

    /* registered: the SPRT of the new net against the base net starts, with no one present */
    int64_t fresh = test_net("fresh-net", 4);
    cr_assert_eq(store_chain_done(cu_fx.store, chain, CHAIN_NET, true, 0, fresh, "net fresh-net, unsigned"), 1);
    st = stage(chain, 2);
    cr_assert_str_eq(st.state, "passed");
    cr_assert_eq(st.net_id, fresh);
    st = stage(chain, 3);
    cr_assert_str_eq(st.state, "running");
    r = load(st.run_id);
    cr_assert_str_eq(r.kind, "sprt");
    cr_assert_eq(r.nodes, 300);
    cr_assert_eq(r.max_pairs, 20);
    cr_assert_eq(r.seed, 9);
    cr_assert_str_eq(r.net_name0, "fresh-net");
    cr_assert_str_eq(r.net_name1, "base-net");
    char p0[STORE_PARAMS_MAX + 1], p1[STORE_PARAMS_MAX + 1];
    cr_assert_eq(store_run_sets(cu_fx.store, st.run_id, p0, p1, sizeof p0), 1);
    cr_assert(!p0[0] && !p1[0], "both sides play the data run's set: '%s' '%s'", p0, p1);
    (void)base;

    cr_assert_eq(tune(out, sizeof out, "chain show %" PRId64, chain), 0);
    cr_assert(strstr(out, "Base net: base-net") && strstr(out, "train  2 epochs, batch 128, lambda 0.5, lr 0.002") &&
                  strstr(out, "the trained net registered: net ") && strstr(out, "fresh-net") &&
                  strstr(out, "480 positions -> net.nnue"), "%s", out);
    cr_assert_eq(tune(out, sizeof out, "chain list"), 0);
    char line[256];
    snprintf(line, sizeof line, "data %" PRId64 " passed -> train passed -> net @%" PRId64 " passed -> sprt %" PRId64
             " running", data, fresh, st.run_id);
    cr_assert(strstr(out, line), "%s not in:\n%s", line, out);
    cr_assert_eq(tune(out, sizeof out, "show %" PRId64, st.run_id), 0);
    cr_assert(strstr(out, "Chain: ") && strstr(out, "fresh-net"), "%s", out);

    /* H1: the chain passes */
    cr_assert_eq(store_update_sprt(cu_fx.store, st.run_id, 3.0, "H1 accepted"), 0);
    StoreChain c;
    cr_assert_eq(store_load_chain(cu_fx.store, chain, &c), 1);
    cr_assert_str_eq(c.state, "passed");
}

/*
 * A training that fails fails its chain, with the reason (chain advance on
 * a data run that kept no position: no PyTorch needed); an SPSA chain's
 * SPRTs play the net its SPSA run played (the chain carries it), or the
 * hand-crafted evaluation it was told.
 */
Test(steer, a_failed_training_fails_the_chain_and_chains_carry_nets)
{
    CU_REQUIRE_DB();
    char out[8192];
    int64_t chain = new_run("chain new --data-games 2 --nodes 100 --then-train --epochs 1 --then-sprt 0,5,300n "
                            "--base-net none%s", "");
    cr_assert_eq(store_finish_run(cu_fx.store, stage(chain, 0).run_id, "finished", "max pairs"), 0);
    cr_assert_eq(tune(out, sizeof out, "chain advance %" PRId64 " --out '%s/advance'", chain, cu_fx.dir), 1, "%s", out);
    cr_assert(strstr(out, "kept no position"), "%s", out);
    StoreChain c;
    cr_assert_eq(store_load_chain(cu_fx.store, chain, &c), 1);
    cr_assert_str_eq(c.state, "failed");
    cr_assert(strstr(c.note, "stage 1 (train): the data run kept no position"), "%s", c.note);
    cr_assert_str_eq(c.stages[1].state, "failed");
    cr_assert_str_eq(c.stages[2].state, "cancelled", "an ended chain leaves no stage waiting");
    cr_assert_eq(c.base_net, STORE_NET_NONE);

    int64_t net = test_net("tuned-with", 5);
    for (int hce = 0; hce < 2; hce++) {
        chain = new_run("chain new --params NullR --pairs 4 --nodes 100 --then-sprt 0,5,500n --net %s",
                        hce ? "none" : "tuned-with");
        int64_t spsa = stage(chain, 0).run_id;
        cr_assert_str_eq(load(spsa).net_name0, hce ? "none" : "tuned-with");
        cr_assert_eq(store_finish_run(cu_fx.store, spsa, "finished", "max pairs"), 0);
        StoreRun r = load(stage(chain, 1).run_id);
        cr_assert_str_eq(r.kind, "sprt");
        cr_assert_str_eq(r.net_name0, hce ? "none" : "tuned-with", "the test side plays the SPSA run's net");
        cr_assert_str_eq(r.net_name1, hce ? "none" : "tuned-with", "and so does the base side");
    }
    (void)net;
}

Test(steer, bad_chains_are_refused)
{
    CU_REQUIRE_DB();
    char out[4096];
    cr_assert_eq(tune(out, sizeof out, "chain new --params NullR --pairs 4 --nodes 100"), 2);
    cr_assert(strstr(out, "--then-sprt: give at least one SPRT stage"), "%s", out);
    cr_assert_eq(tune(out, sizeof out, "chain new --params NullR --pairs 4 --nodes 100 --then-sprt 5,0,10+0.1"), 2);
    cr_assert_eq(tune(out, sizeof out, "chain new --params NullR --pairs 4 --nodes 100 --then-sprt 0,5"), 2);
    cr_assert_eq(tune(out, sizeof out, "chain new --params NullR --pairs 4 --nodes 100 --then-sprt 0,5,xn"), 2);
    cr_assert_eq(tune(out, sizeof out,
                      "chain new --params NullR --pairs 4 --nodes 100 --then-sprt 0,5,100n --then-build"), 2);
    cr_assert_eq(tune(out, sizeof out, "chain new --params NullR --pairs 4 --nodes 100 --then-sprt 0,5,100n "
                                       "--base-build 777"), 2);
    /* net chains: a training before its SPRTs, in a chain that starts with a data run, against a known net */
    const char *bad[] = {
        "chain new --params NullR --pairs 4 --nodes 100 --then-train --then-sprt 0,5,100n",
        "chain new --data-games 4 --nodes 100 --then-sprt 0,5,100n",
        "chain new --data-games 4 --nodes 100 --then-sprt 0,5,100n --then-train",
        "chain new --data-games 4 --nodes 100 --then-build --then-train --then-sprt 0,5,100n",
        "chain new --data-games 4 --nodes 100 --then-train --then-sprt 0,5,100n --base-net no-such-net",
        "chain new --data-games 4 --nodes 100 --then-train --then-sprt 0,5,100n --pairs-per-task 32",
        "chain new --params NullR --pairs 4 --nodes 100 --then-sprt 0,5,100n --base-net none",
        "chain new --params NullR --pairs 4 --nodes 100 --then-sprt 0,5,100n --net no-such-net",
        "chain advance --epochs 3",
        "chain advance --with-data /no/such/data",
        "chain advance --with-data /dev/null",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        cr_assert_eq(tune(out, sizeof out, "%s", bad[i]), 2, "%s: %s", bad[i], out);
    cr_assert_eq(tune(out, sizeof out, "chain show 4242"), 2);
    cr_assert_eq(tune(out, sizeof out, "chain list"), 0);
    cr_assert_null(strstr(out, "\n1 "), "%s", out);            /* nothing was made */
    StoreRun *runs;
    int n = store_list_runs(cu_fx.store, 10, &runs);
    free(runs);
    cr_assert_eq(n, 0, "no run was made");
}

/* ---- fair share between keys ------------------------------------------------------ */

/* A request of worker w of key, its key's leases read as the coordinator reads them. */
static SchedAsk ask_of(int64_t w, uint64_t key)
{
    int64_t mine, keyed;
    cr_assert_eq(store_leased_counts(cu_fx.store, &w, 1, &mine, &keyed), 0);
    return (SchedAsk){ .worker = w, .build = "", .key = key, .key_leases = keyed };
}

/* One request through s (refreshed when stale) among `keys` keys: the answer's type; a task's id in *task. */
static XqfMsgType ask_one(Sched *s, SchedAsk a, int keys, int64_t *task, int64_t *token)
{
    XqfMsg m;
    cr_assert_eq(sched_refresh(s, 0, 1000000), 0);
    cr_assert_eq(store_begin(cu_fx.store), 0);
    cr_assert_eq(sched_claim_batch(s, &a, 1, keys, 60000, &m), 0);
    cr_assert_eq(store_commit(cu_fx.store), 0);
    XqfMsgType t = m.type;
    if (t == XQF_MSG_TASK && task) {
        *task = (int64_t)m.u.task.task_id;
        *token = (int64_t)m.u.task.lease;
    }
    xqf_msg_free(&m);
    return t;
}

/*
 * One key's many workers hold every task of a run; a worker of another
 * key asks and finds none.  A task comes back (handed back): the many
 * workers ask first, as they would (one of them just gave it back), but
 * their key holds more than its share of the leases while the other key
 * waits on the run: the task goes to the other key's worker.
 */
Test(steer, a_key_with_many_workers_does_not_starve_another)
{
    CU_REQUIRE_DB();
    enum { TASKS = 6, GREEDY = 3 };
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 1, TASKS, 200, -500, 500);
    int64_t g[GREEDY], modest;
    for (int i = 0; i < GREEDY; i++) {
        char name[32];
        snprintf(name, sizeof name, "greedy/%d", i);
        cr_assert_eq(store_hello(cu_fx.store, name, "", 8, 8, "greedy", &g[i]), 1);
    }
    cr_assert_eq(store_hello(cu_fx.store, "modest", "", 1, 1, "modest", &modest), 1);
    Sched *s = sched_new(cu_fx.store);
    cr_assert(s);
    int64_t task[TASKS], token[TASKS];
    for (int i = 0; i < TASKS; i++)
        cr_assert_eq(ask_one(s, ask_of(g[i % GREEDY], 1), 2, &task[i], &token[i]), XQF_MSG_TASK, "task %d", i);
    cr_assert_eq(ask_one(s, ask_of(modest, 2), 2, NULL, NULL), XQF_MSG_IDLE, "every task is leased");
    /* one comes back */
    cr_assert_eq(store_handback(cu_fx.store, g[0], task[0], token[0], "test", false, 5), 1);
    sched_invalidate(s);
    for (int i = 0; i < GREEDY; i++)
        cr_assert_eq(ask_one(s, ask_of(g[i], 1), 2, NULL, NULL), XQF_MSG_IDLE,
                     "the greedy key's worker %d took the task back from the key that waits", i);
    int64_t got, lease;
    cr_assert_eq(ask_one(s, ask_of(modest, 2), 2, &got, &lease), XQF_MSG_TASK, "the waiting key's worker");
    cr_assert_eq(got, task[0]);
    /* nobody waits now: the greedy key is served again when a task comes back */
    cr_assert_eq(store_handback(cu_fx.store, g[1], task[1], token[1], "test", false, 5), 1);
    sched_invalidate(s);
    cu_sleep_ms(SCHED_STARVED_MS + 100);
    cr_assert_eq(ask_one(s, ask_of(g[1], 1), 2, NULL, NULL), XQF_MSG_TASK);
    sched_destroy(&s);
    (void)run;
}

/* ---- threads per engine ----------------------------------------------------------- */

/*
 * A run of 2 threads per engine keeps them and its tasks carry them; a
 * worker whose concurrency is 1 is never leased one of its tasks (show
 * says no worker can play it), one of concurrency 2 is.  Such a run has
 * no replay audit, and --replay with it is refused.
 */
Test(steer, threads_need_a_worker_of_that_concurrency)
{
    CU_REQUIRE_DB();
    int64_t run = new_run("sprt new --base '' --test NullR=2 --nodes 200 --max-pairs 4 --pairs-per-task 1 "
                          "--threads 2%s", "");
    cr_assert_eq(load(run).threads, 2);
    int64_t small, big;
    cr_assert_eq(store_hello(cu_fx.store, "small", "", 1, 1, "", &small), 1);
    char out[4096];
    cr_assert_eq(tune(out, sizeof out, "show %" PRId64, run), 0, "%s", out);
    cr_assert(strstr(out, "Threads: 2 (a game takes 2 cores of a worker); no worker can play it") &&
              strstr(out, "(the most: 1;"), "%s", out);
    Sched *s = sched_new(cu_fx.store);
    cr_assert(s);
    SchedAsk one = { .worker = small, .build = "", .key = 1, .concurrency = 1 };
    for (int i = 0; i < 3; i++)
        cr_assert_eq(ask_one(s, one, 1, NULL, NULL), XQF_MSG_IDLE, "a task for a worker of concurrency 1");
    cr_assert_eq(store_hello(cu_fx.store, "big", "", 2, 2, "", &big), 1);
    SchedAsk two = { .worker = big, .build = "", .key = 1, .concurrency = 2 };
    XqfMsg m;
    cr_assert_eq(sched_refresh(s, 0, 1000000), 0);
    cr_assert_eq(store_begin(cu_fx.store), 0);
    cr_assert_eq(sched_claim_batch(s, &two, 1, 1, 60000, &m), 0);
    cr_assert_eq(store_commit(cu_fx.store), 0);
    cr_assert_eq(m.type, XQF_MSG_TASK);
    cr_assert_eq((int64_t)m.u.task.run_id, run);
    cr_assert_eq(m.u.task.threads, 2);
    xqf_msg_free(&m);
    sched_destroy(&s);
    cr_assert_eq(tune(out, sizeof out, "show %" PRId64, run), 0, "%s", out);
    cr_assert(strstr(out, "Threads: 2 (a game takes 2 cores of a worker)\n"), "%s", out);
    /* Lazy SMP's games do not replay: no audit share, and none may be asked for */
    char sql[1024];
    snprintf(sql, sizeof sql, "psql -qAt '%s' -c 'SELECT replay_share FROM runs WHERE id = %" PRId64 "' 2>&1",
             cu_fx.db, run);
    FILE *p = popen(sql, "r");
    cr_assert(p);
    cr_assert(fgets(out, sizeof out, p));
    pclose(p);
    cr_assert_str_eq(out, "0\n");
    cr_assert_eq(tune(out, sizeof out, "sprt new --base '' --test NullR=2 --nodes 200 --threads 2 --replay 1"), 2);
    cr_assert(strstr(out, "--replay: a run of 2 threads per engine is not reproducible"), "%s", out);
}

/* Whether run's row holds cond (SQL over the columns of runs). */
static bool run_row_is(int64_t run, const char *cond)
{
    char sql[512], error[256];
    snprintf(sql, sizeof sql, "SELECT 1 / (SELECT count(*)::int FROM runs WHERE id = %" PRId64 " AND %s)", run, cond);
    return store_exec(cu_fx.store, sql, error, sizeof error) == 0;
}

/*
 * The numbers a front end sets by hand and xqf_create_run takes in its
 * JSON object of settings (062): the engines' threads, the replay share
 * (as given, else 1 %, none for several threads), the hash and the
 * clock's margin, as they were when each was a parameter of its own; a
 * chain's SPRT plays one thread at the default share.
 */
Test(steer, threads_replay_hash_and_margin_are_kept_as_given)
{
    CU_REQUIRE_DB();
    int64_t run = new_run("sprt new --base '' --test NullR=2 --nodes 200%s", "");
    cr_assert(run_row_is(run, "threads = 1 AND replay_share = 0.01 AND hash_mb = 16 AND margin_ms = 100"));
    run = new_run("sprt new --base '' --test NullR=2 --nodes 200 --threads 3%s", "");
    cr_assert(run_row_is(run, "threads = 3 AND replay_share = 0 AND hash_mb = 16 AND margin_ms = 100"));
    run = new_run("sprt new --base '' --test NullR=2 --nodes 200 --replay 5%s", "");
    cr_assert(run_row_is(run, "threads = 1 AND replay_share = 0.05"));
    run = new_run("sprt new --base '' --test NullR=2 --nodes 200 --replay 0%s", "");
    cr_assert(run_row_is(run, "threads = 1 AND replay_share = 0"));
    int64_t chain = new_run("chain new --params NullR --pairs 4 --nodes 100 --then-sprt 0,5,500n%s", "");
    int64_t spsa = stage(chain, 0).run_id;
    cr_assert(run_row_is(spsa, "threads = 1 AND replay_share = 0.01 AND hash_mb = 16 AND margin_ms = 100"));
    cr_assert_eq(store_spsa_save(cu_fx.store, spsa, (const double[]){ 3.6 }, 1, 4), 0);
    cr_assert_eq(store_finish_run(cu_fx.store, spsa, "finished", "max pairs"), 0);
    cr_assert(run_row_is(stage(chain, 1).run_id, "threads = 1 AND replay_share = 0.01 AND hash_mb = 16 AND margin_ms = 100"));
}

/*
 * The store against a real PostgreSQL (XQF_TEST_DB; skipped without it):
 * migrations and the SQL functions' files, exactly-once reports, leases,
 * hand-backs, run completion.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster_util.h"
#include "migrations.h"
#include "store_runs.h"
#include "store_tasks.h"
#include "status.h"
#include "store_test.h"

TestSuite(store, .init = cu_fixture_init, .fini = cu_fixture_fini);

/* One claim of run for worker, through the batch statement. 1 with *out, 0 nothing to give, -1. */
static int store_claim_task(Store *s, int64_t run, int64_t worker, int64_t lease_ms, StoreLease *out)
{
    bool given;
    return store_claim_batch(s, run, &worker, 1, lease_ms, out, &given);
}

/*
 * One report, through the batch statement, with the records of the pairs it
 * adds to what the lease last had accepted (as a worker sends them).  0
 * with *status, *run and *task_done, or -1.
 */
static int store_report(Store *s, int64_t worker, int64_t task, int64_t token, const StoreCounts *c,
                        int64_t lease_ms, StoreReport *status, int64_t *run, bool *task_done)
{
    static struct {
        Store *s;
        int64_t task, token;
        StoreCounts counts;
    } sent[256];
    static int nsent;
    int k = 0;
    while (k < nsent && !(sent[k].s == s && sent[k].task == task && sent[k].token == token))
        k++;
    *status = cu_report(s, worker, task, token, c, k < nsent ? &sent[k].counts : NULL, lease_ms, run, task_done);
    if ((int)*status < 0)
        return -1;
    if (*status == REPORT_ACCEPTED && (k < nsent || nsent < 256)) {
        if (k == nsent)
            nsent++;
        sent[k].s = s, sent[k].task = task, sent[k].token = token, sent[k].counts = *c;
    }
    return 0;
}

static StoreCounts counts(int64_t pairs, int64_t dd, int64_t ww)
{
    /* pairs = dd (one draw pair each: 2 draws) + ww (2 wins) + ld pairs for the rest */
    StoreCounts c = { 0 };
    int64_t ld = pairs - dd - ww;
    c.pairs = pairs;
    c.penta[1] = ld;
    c.penta[2] = dd;
    c.penta[4] = ww;
    c.wins = 2 * ww;
    c.draws = 2 * dd + ld;
    c.losses = ld;
    c.nreasons = 3;
    c.reasons[1] = c.wins + c.losses;
    c.reasons[2] = c.draws;
    return c;
}

/* Gives it the records of the pairs it adds after before (NULL: from none), as a worker sends them. */
static void add_records(StoreReportItem *it, const StoreCounts *before)
{
    it->games = cu_records_for(&it->counts, before, &it->games_len);
    it->games_from = before ? before->pairs : 0;
}

static void free_records(StoreReportItem *it, int n)
{
    for (int i = 0; i < n; i++)
        free((void *)it[i].games);
}

/* Runs sql on s, which must succeed: the message of its error (a RAISE of the check) otherwise. */
static void check_sql(Store *s, const char *sql)
{
    char error[1024];
    cr_assert_eq(store_exec(s, sql, error, sizeof error), 0, "%s", error);
}

/* The functions of the schema, their definitions and privileges, kept in table `name` to compare. */
static void keep_functions(Store *s, const char *name)
{
    char sql[512];
    snprintf(sql, sizeof sql, "CREATE TABLE %s AS SELECT p.oid, pg_get_functiondef(p.oid) AS def, p.proacl::text AS acl "
                              "FROM pg_proc p WHERE p.pronamespace = current_schema()::regnamespace AND p.prokind = 'f'",
             name);
    check_sql(s, sql);
}

Test(store, migrations_are_idempotent)
{
    CU_REQUIRE_DB();
    cr_assert_eq(store_migrations_applied(cu_fx.store), XQF_MIGRATION_COUNT);
    cr_assert_eq(store_schema_version(cu_fx.store), XQF_MIGRATIONS[XQF_MIGRATION_COUNT - 1].version);
    keep_functions(cu_fx.store, "functions_before");
    Store *again = store_new(cu_fx.db);
    store_set_migrate(again, true);
    cr_assert_eq(store_connect(again), 0);
    cr_assert_eq(store_migrations_applied(again), 0);
    /* the functions applied again: the same definitions, settings and privileges */
    keep_functions(cu_fx.store, "functions_after");
    check_sql(cu_fx.store, "DO $$ BEGIN IF EXISTS ((TABLE functions_before EXCEPT TABLE functions_after) UNION ALL "
                           "(TABLE functions_after EXCEPT TABLE functions_before)) THEN "
                           "RAISE EXCEPTION 'migrating again changed a function'; END IF; END $$");
    store_set_migrate(again, false);           /* an up-to-date schema needs no migration to be used */
    cr_assert_eq(store_connect(again), 0);   /* reconnecting too */
    cr_assert_eq(store_migrations_applied(again), 0);
    store_destroy(&again);
    store_destroy(&again);
}

/*
 * Each function of the schema is one file of schemas/sql/functions, its body
 * the file's (the body PostgreSQL keeps, prosrc, is the text between the
 * file's dollar quotes); no function of the schema lacks its file.
 */
Test(store, functions_are_their_files)
{
    CU_REQUIRE_DB();
    size_t size = 4096;
    for (int i = 0; i < XQF_FUNCTION_COUNT; i++)
        size += strlen(XQF_FUNCTIONS[i].name) + 4;
    char *names = malloc(size);
    cr_assert(names);
    snprintf(names, size, "%s", "{");
    for (int i = 0; i < XQF_FUNCTION_COUNT; i++) {
        const XqfFunction *f = &XQF_FUNCTIONS[i];
        cr_assert_null(strstr(f->sql, "$xqf_file$"));
        cr_assert_null(strstr(f->sql, "$xqf_check$"));
        size_t n = strlen(f->sql) + 1024;
        char *sql = malloc(n);
        cr_assert(sql);
        snprintf(sql, n, "DO $xqf_check$ BEGIN IF (SELECT count(*) FROM pg_proc WHERE pronamespace = "
                         "current_schema()::regnamespace AND proname = '%s' AND strpos($xqf_file$%s$xqf_file$, "
                         "prosrc) > 0) <> 1 THEN RAISE EXCEPTION 'function %s: not once with the body of its file'; "
                         "END IF; END $xqf_check$", f->name, f->sql, f->name);
        check_sql(cu_fx.store, sql);
        free(sql);
        strcat(names, i ? "," : "");
        strcat(names, f->name);
    }
    strcat(names, "}");
    char sql[8192];
    snprintf(sql, sizeof sql, "DO $$ DECLARE v text := (SELECT string_agg(proname, ', ') FROM pg_proc "
                              "WHERE pronamespace = current_schema()::regnamespace AND prokind = 'f' "
                              "AND proname <> ALL ('%s'::text[])); "
                              "BEGIN IF v IS NOT NULL THEN RAISE EXCEPTION 'functions without a file: %%', v; END IF; END $$",
             names);
    check_sql(cu_fx.store, sql);
    free(names);
}

/* Runs a command line; its exit status, with its stdout and stderr in out. */
static int program(char *out, size_t size, const char *fmt, const char *arg)
{
    char cmd[2048], line[1024];
    snprintf(line, sizeof line, fmt, arg);
    snprintf(cmd, sizeof cmd, "%s 2>&1", line);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * Migrations happen only when asked for (the coordinator's start,
 * xqf-coordinator --migrate): a store, --status and xqf-tune refuse an
 * unmigrated database and change nothing in it.  A schema newer than the
 * migrations compiled in is refused by everyone, the coordinator included
 * (it exits instead of retrying).
 */
Test(store, schema_versions_are_checked)
{
    CU_REQUIRE_DB();
    char fresh[512], name[64], out[8192];
    cr_assert_eq(cu_db_create(fresh, sizeof fresh, name, sizeof name), 0);
    Store *s = store_new(fresh);
    cr_assert_eq(store_connect(s), STORE_SCHEMA_MISMATCH);
    cr_assert_neq(program(out, sizeof out, "'" XQF_BIN "/xqf-coordinator' --status --db '%s'", fresh), 0);
    cr_assert_not_null(strstr(out, "migrate it first"), "%s", out);
    cr_assert_neq(program(out, sizeof out, "'" XQF_BIN "/xqf-tune' list --db '%s'", fresh), 0);
    cr_assert_not_null(strstr(out, "migrate it first"), "%s", out);
    cr_assert_eq(program(out, sizeof out, "'" XQF_BIN "/xqf-coordinator' --migrate --db '%s'", fresh), 0, "%s", out);
    char want[64];
    snprintf(want, sizeof want, "schema at version %d (%d migrations applied now)",
             XQF_MIGRATIONS[XQF_MIGRATION_COUNT - 1].version, XQF_MIGRATION_COUNT);   /* none before */
    cr_assert_not_null(strstr(out, want), "%s", out);
    cr_assert_eq(store_connect(s), 0);
    cr_assert_eq(program(out, sizeof out, "'" XQF_BIN "/xqf-coordinator' --status --db '%s'", fresh), 0, "%s", out);
    /* a newer release migrated it further */
    char sql[256];
    snprintf(sql, sizeof sql, "psql -X -q '%%s' -c \"INSERT INTO schema_migrations (version, name) VALUES (%d, "
             "'from_a_newer_release')\"", XQF_MIGRATIONS[XQF_MIGRATION_COUNT - 1].version + 1);
    cr_assert_eq(program(out, sizeof out, sql, fresh), 0, "%s", out);
    cr_assert_eq(store_connect(s), STORE_SCHEMA_MISMATCH);
    store_set_migrate(s, true);
    cr_assert_eq(store_connect(s), STORE_SCHEMA_MISMATCH);
    cr_assert_neq(program(out, sizeof out, "'" XQF_BIN "/xqf-coordinator' --status --db '%s'", fresh), 0);
    cr_assert_not_null(strstr(out, "newer than this program knows"), "%s", out);
    cr_assert_neq(program(out, sizeof out, "'" XQF_BIN "/xqf-tune' list --db '%s'", fresh), 0);
    cr_assert_not_null(strstr(out, "newer than this program knows"), "%s", out);
    char serve[1024];
    snprintf(serve, sizeof serve, "timeout 20 '" XQF_BIN "/xqf-coordinator' --bind tcp://127.0.0.1:%d --db '%%s'",
             cu_free_port());
    cr_assert_eq(program(out, sizeof out, serve, fresh), 1, "the coordinator did not stop: %s", out);
    cr_assert_not_null(strstr(out, "newer than this program knows"), "%s", out);
    store_destroy(&s);
    cu_db_drop(name);
}

Test(store, reports_count_exactly_once)
{
    CU_REQUIRE_DB();
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 4, 8, 500, -500, 500);
    cr_assert_gt(run, 0);
    int64_t worker;
    cr_assert_eq(store_hello(cu_fx.store, "w1", "b", 2, 2, "", &worker), 1);
    StoreLease l;
    cr_assert_eq(store_claim_task(cu_fx.store, run, worker, 60000, &l), 1);
    cr_assert_eq(l.first_pair, 0);
    cr_assert_eq(l.pairs, 4);
    cr_assert_str_eq(l.params0, "NullR=2");
    StoreReport st;
    int64_t r;
    bool done;
    StoreCounts c = counts(2, 1, 1);
    cr_assert_eq(store_report(cu_fx.store, worker, l.task_id, l.token, &c, 60000, &st, &r, &done), 0);
    cr_assert_eq(st, REPORT_ACCEPTED);
    cr_assert_eq(r, run);
    cr_assert_not(done);
    /* the same report again, and again: nothing changes */
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(store_report(cu_fx.store, worker, l.task_id, l.token, &c, 60000, &st, &r, &done), 0);
        cr_assert_eq(st, REPORT_DUPLICATE);
    }
    /* going backwards, inconsistent counts, beyond the task, a wrong token: refused */
    StoreCounts back = counts(1, 1, 0);
    cr_assert_eq(store_report(cu_fx.store, worker, l.task_id, l.token, &back, 60000, &st, &r, &done), 0);
    cr_assert_eq(st, REPORT_INVALID);
    StoreCounts bad = counts(3, 1, 1);
    bad.wins++;
    cr_assert_eq(store_report(cu_fx.store, worker, l.task_id, l.token, &bad, 60000, &st, &r, &done), 0);
    cr_assert_eq(st, REPORT_INVALID);
    StoreCounts beyond = counts(5, 1, 1);
    cr_assert_eq(store_report(cu_fx.store, worker, l.task_id, l.token, &beyond, 60000, &st, &r, &done), 0);
    cr_assert_eq(st, REPORT_INVALID);
    StoreCounts fin = counts(4, 2, 1);
    cr_assert_eq(store_report(cu_fx.store, worker, l.task_id, l.token + 1000, &fin, 60000, &st, &r, &done), 0);
    cr_assert_eq(st, REPORT_STALE);
    /* the rest of the task, then a late repeat */
    cr_assert_eq(store_report(cu_fx.store, worker, l.task_id, l.token, &fin, 60000, &st, &r, &done), 0);
    cr_assert_eq(st, REPORT_ACCEPTED);
    cr_assert(done);
    cr_assert_eq(store_report(cu_fx.store, worker, l.task_id, l.token, &fin, 60000, &st, &r, &done), 0);
    cr_assert_eq(st, REPORT_STALE);
    StoreAudit a;
    cr_assert_eq(store_audit_run(cu_fx.store, run, &a), 1);
    cr_assert_eq(a.run_pairs, 4);
    cr_assert_eq(a.run_games, 8);
    cr_assert_eq(a.task_pairs, 4);
    cr_assert_eq(a.result_pairs, 4);
    cr_assert_eq(a.run_penta, 4);
    /* the second task finishes the run: verdict "max pairs" */
    cr_assert_eq(store_claim_task(cu_fx.store, run, worker, 60000, &l), 1);
    cr_assert_eq(l.first_pair, 4);
    cr_assert_eq(store_claim_task(cu_fx.store, run, worker, 60000, &(StoreLease){ 0 }), 0);
    cr_assert_eq(store_report(cu_fx.store, worker, l.task_id, l.token, &fin, 60000, &st, &r, &done), 0);
    StoreRun out;
    cr_assert_eq(store_load_run(cu_fx.store, run, &out, true), 1);
    cr_assert_str_eq(out.state, "finished");
    cr_assert_str_eq(out.verdict, "max pairs");
    cr_assert_eq(out.counts.pairs, 8);
    cr_assert_eq(out.counts.penta[2], 4);
    cr_assert_eq(out.counts.reasons[2], 2 * fin.reasons[2]);
    cr_assert_gt(out.book_lines, 10);
    store_run_free(&out);
}

Test(store, expired_lease_requeues_the_rest)
{
    CU_REQUIRE_DB();
    int64_t run = cu_sprt(cu_fx.store, "", 4, 4, 500, -500, 500);
    int64_t worker;
    cr_assert_eq(store_hello(cu_fx.store, "w2", "b", 1, 1, "", &worker), 1);
    StoreLease l, l2;
    cr_assert_eq(store_claim_task(cu_fx.store, run, worker, 100, &l), 1);
    StoreReport st;
    int64_t r;
    bool done;
    StoreCounts one = counts(1, 1, 0);
    cr_assert_eq(store_report(cu_fx.store, worker, l.task_id, l.token, &one, 100, &st, &r, &done), 0);
    cr_assert_eq(st, REPORT_ACCEPTED);
    cr_assert_eq(store_claim_task(cu_fx.store, run, worker, 100, &l2), 0);   /* nothing else yet */
    /* the coordinator's deadline for it passed (leases.h): re-queued by task and token, once */
    int64_t wrong = l.token + 1000;
    cr_assert_eq(store_expire_given(cu_fx.store, &l.task_id, &wrong, 1), 0, "another token's lease is not expired");
    cr_assert_eq(store_expire_given(cu_fx.store, &l.task_id, &l.token, 1), 1);
    cr_assert_eq(store_expire_given(cu_fx.store, &l.task_id, &l.token, 1), 0, "an ended lease is passed over");
    /* the late report of the dead lease is stale */
    StoreCounts two = counts(2, 2, 0);
    cr_assert_eq(store_report(cu_fx.store, worker, l.task_id, l.token, &two, 100, &st, &r, &done), 0);
    cr_assert_eq(st, REPORT_STALE);
    /* re-issued: the three pairs left, under a new token */
    cr_assert_eq(store_claim_task(cu_fx.store, run, worker, 60000, &l2), 1);
    cr_assert_eq(l2.task_id, l.task_id);
    cr_assert_neq(l2.token, l.token);
    cr_assert_eq(l2.first_pair, 1);
    cr_assert_eq(l2.pairs, 3);
    /* handed back, then claimed again: two pairs left after one more */
    cr_assert_eq(store_report(cu_fx.store, worker, l2.task_id, l2.token, &one, 60000, &st, &r, &done), 0);
    cr_assert_eq(store_handback(cu_fx.store, worker, l2.task_id, l2.token, "shutting down", false, 5), 1);
    cr_assert_eq(store_handback(cu_fx.store, worker, l2.task_id, l2.token, "twice", false, 5), 0);
    StoreLease l3;
    cr_assert_eq(store_claim_task(cu_fx.store, run, worker, 60000, &l3), 1);
    cr_assert_eq(l3.first_pair, 2);
    cr_assert_eq(l3.pairs, 2);
    cr_assert_eq(store_report(cu_fx.store, worker, l3.task_id, l3.token, &two, 60000, &st, &r, &done), 0);
    cr_assert(done);
    StoreAudit a;
    cr_assert_eq(store_audit_run(cu_fx.store, run, &a), 1);
    cr_assert_eq(a.run_pairs, 4);
    cr_assert_eq(a.result_pairs, 4);
    cr_assert_eq(a.max_attempts, 3);
}

Test(store, sprt_verdict_finishes_and_cancels)
{
    CU_REQUIRE_DB();
    int64_t run = cu_sprt(cu_fx.store, "", 2, 1000, 500, 0, 5);
    int64_t worker;
    cr_assert_eq(store_hello(cu_fx.store, "w3", "b", 1, 1, "", &worker), 1);
    StoreLease l;
    cr_assert_eq(store_claim_task(cu_fx.store, run, worker, 60000, &l), 1);
    cr_assert_eq(store_update_sprt(cu_fx.store, run, -3.1, "H0 accepted"), 0);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.state, "finished");
    cr_assert_str_eq(r.verdict, "H0 accepted");
    /* the finished run's lease is ended: its expiry finds nothing to re-queue */
    cr_assert_eq(store_expire_given(cu_fx.store, &l.task_id, &l.token, 1), 0);
    cr_assert_eq(store_claim_task(cu_fx.store, run, worker, 60000, &l), 0);
    StoreRun *active;
    cr_assert_eq(store_active_runs(cu_fx.store, &active), 0);
    free(active);
}

/* ---- the lock order (docs/architecture.md, "Lock order") ---------------------- */

/* A session of its own (application_name `name`, found so in pg_stat_activity) running one statement in a thread. */
typedef struct {
    Store *s;
    char sql[512];
    char error[256];
    int rc;
    pthread_t thread;
} Session;

static Store *session_open(const char *name)
{
    char conninfo[1400];
    snprintf(conninfo, sizeof conninfo, "%s application_name=%s", cu_fx.db, name);
    Store *s = store_new(conninfo);
    cr_assert_not_null(s);
    cr_assert_eq(store_connect(s), 0, "session %s cannot connect", name);
    return s;
}

static void *session_body(void *arg)
{
    Session *x = arg;
    x->rc = store_exec(x->s, x->sql, x->error, sizeof x->error);
    return NULL;
}

static void session_start(Session *x)
{
    cr_assert_eq(pthread_create(&x->thread, NULL, session_body, x), 0);
}

/* Waits (10 s at most) until the session named `name` waits for a lock another one holds. */
static void await_lock_wait(const char *name)
{
    char sql[512], error[256];
    snprintf(sql, sizeof sql,
             "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE application_name = '%s' "
             "AND wait_event_type = 'Lock') THEN RAISE EXCEPTION 'not waiting'; END IF; END $$",
             name);
    for (int i = 0; i < 1000; i++) {
        if (store_exec(cu_fx.store, sql, error, sizeof error) == 0)
            return;
        cu_sleep_ms(10);
    }
    cr_assert_fail("session %s never waited for a lock", name);
}

/*
 * The deadlock of a restart storm (issue 64): the coordinator expiring
 * leases (xqf_expire_given) while the run is ended (xqf_finish_run: the
 * load generator's end, a verdict, a stop).  Before the lock order,
 * expiry locked its tasks by id without the run, and the run's end locked
 * the run, then its tasks in the order its scan met them (their place in
 * the table, which updates change).  Made to happen every time: three
 * leased tasks T1 < T2 < T3 by id, T3 first in the table; a third session
 * holds T2, so that the expiry takes T1 and waits; the run's end takes
 * the run and T3, and waits for T1; T2 let go, the expiry takes it and
 * waits for T3: 40P01 there (deadlock detected) before the fix.  With it,
 * the expiry takes the run first and the run's end waits for it whole.
 */
Test(store, expiry_and_a_runs_end_take_their_locks_in_one_order, .timeout = 60)
{
    CU_REQUIRE_DB();
    int64_t run = cu_sprt(cu_fx.store, "", 1, 100, 500, -500, 500);
    int64_t workers[3];
    StoreLease l[3];
    bool given[3];
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "lock-order-%d", i);
        cr_assert_eq(store_hello(cu_fx.store, name, "b", 1, 1, "", &workers[i]), 1);
    }
    cr_assert_eq(store_claim_batch(cu_fx.store, run, workers, 3, 60000, l, given), 3);
    cr_assert(l[0].task_id < l[1].task_id && l[1].task_id < l[2].task_id);
    int64_t t1 = l[0].task_id, t2 = l[1].task_id, t3 = l[2].task_id;
    /* T1 and T2 moved behind T3 in the table (a change of state is a new row version there), still leased */
    char sql[512];
    snprintf(sql, sizeof sql,
             "UPDATE tasks SET state = 'queued' WHERE id IN (%" PRId64 ", %" PRId64 "); "
             "UPDATE tasks SET state = 'leased' WHERE id IN (%" PRId64 ", %" PRId64 ")",
             t1, t2, t1, t2);
    check_sql(cu_fx.store, sql);
    snprintf(sql, sizeof sql,
             "DO $$ BEGIN IF (SELECT array_agg(id ORDER BY ctid) FROM tasks WHERE run_id = %" PRId64 ") "
             "<> ARRAY[%" PRId64 ", %" PRId64 ", %" PRId64 "]::bigint[] "
             "THEN RAISE EXCEPTION 'T3 is not first in the table'; END IF; END $$",
             run, t3, t1, t2);
    check_sql(cu_fx.store, sql);

    Store *holder = session_open("xqf-lock-holder");
    Session expiry = { .s = session_open("xqf-lock-expiry") };
    Session end = { .s = session_open("xqf-lock-end") };
    check_sql(holder, "BEGIN");
    snprintf(sql, sizeof sql, "SELECT 1 FROM tasks WHERE id = %" PRId64 " FOR UPDATE", t2);
    check_sql(holder, sql);
    snprintf(expiry.sql, sizeof expiry.sql,
             "SELECT xqf_expire_given(ARRAY[%" PRId64 ", %" PRId64 ", %" PRId64 "]::bigint[], "
             "ARRAY[%" PRId64 ", %" PRId64 ", %" PRId64 "]::bigint[])",
             t1, t2, t3, l[0].token, l[1].token, l[2].token);
    session_start(&expiry);
    await_lock_wait("xqf-lock-expiry");
    snprintf(end.sql, sizeof end.sql, "SELECT xqf_finish_run(%" PRId64 ", 'stopped', 'by a test', NULL)", run);
    session_start(&end);
    await_lock_wait("xqf-lock-end");
    check_sql(holder, "COMMIT");
    pthread_join(expiry.thread, NULL);
    pthread_join(end.thread, NULL);
    cr_expect_eq(expiry.rc, 0, "the expiry failed: %s", expiry.error);
    cr_expect_eq(end.rc, 0, "the run's end failed: %s", end.error);
    store_destroy(&holder);
    store_destroy(&expiry.s);
    store_destroy(&end.s);
    cr_assert(expiry.rc == 0 && end.rc == 0);
    /* both done: the run stopped, its tasks cancelled */
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.state, "stopped");
    snprintf(sql, sizeof sql,
             "DO $$ BEGIN IF EXISTS (SELECT 1 FROM tasks WHERE run_id = %" PRId64 " AND state <> 'cancelled') "
             "THEN RAISE EXCEPTION 'a task of the stopped run is not cancelled'; END IF; END $$",
             run);
    check_sql(cu_fx.store, sql);
}

/*
 * The same storm's other deadlock: the coordinator's batch (one
 * transaction) hands back the late answers first, then runs its reports
 * and claims, which lock the run; a hand-back that locked its task
 * without the run held it while the batch waited for the run, which a
 * run's end held while it waited for that task.  Made to happen every
 * time: the batch's transaction hands T3 back; the run's end takes the
 * run and waits; the batch claims (the run's lock).  Before the fix:
 * 40P01 on one side.  With it, the hand-back takes the run first and the
 * run's end waits for the batch whole.
 */
Test(store, a_hand_back_in_a_batch_and_a_runs_end_take_their_locks_in_one_order, .timeout = 60)
{
    CU_REQUIRE_DB();
    int64_t run = cu_sprt(cu_fx.store, "", 1, 100, 500, -500, 500);
    int64_t workers[3];
    StoreLease l[3];
    bool given[3];
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "hand-back-order-%d", i);
        cr_assert_eq(store_hello(cu_fx.store, name, "b", 1, 1, "", &workers[i]), 1);
    }
    cr_assert_eq(store_claim_batch(cu_fx.store, run, workers, 3, 60000, l, given), 3);

    Session batch = { .s = session_open("xqf-lock-batch") };
    Session end = { .s = session_open("xqf-lock-end") };
    char sql[512];
    check_sql(batch.s, "BEGIN");
    snprintf(sql, sizeof sql,
             "SELECT xqf_handback(%" PRId64 ", %" PRId64 ", %" PRId64 ", 'not asked for (a late answer)', false, 5)",
             workers[2], l[2].task_id, l[2].token);
    check_sql(batch.s, sql);
    snprintf(end.sql, sizeof end.sql, "SELECT xqf_finish_run(%" PRId64 ", 'stopped', 'by a test', NULL)", run);
    session_start(&end);
    await_lock_wait("xqf-lock-end");
    snprintf(batch.sql, sizeof batch.sql, "SELECT * FROM xqf_claim_batch(%" PRId64 ", ARRAY[%" PRId64 "]::bigint[], 60000)",
             run, workers[0]);
    session_start(&batch);
    pthread_join(batch.thread, NULL);
    char error[256];
    int committed = store_exec(batch.s, batch.rc == 0 ? "COMMIT" : "ROLLBACK", error, sizeof error);
    pthread_join(end.thread, NULL);
    cr_expect_eq(batch.rc, 0, "the batch's claim failed: %s", batch.error);
    cr_expect_eq(end.rc, 0, "the run's end failed: %s", end.error);
    store_destroy(&batch.s);
    store_destroy(&end.s);
    cr_assert(batch.rc == 0 && end.rc == 0 && committed == 0);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.state, "stopped");
}

Test(store, batches_judge_each_report_in_order)
{
    CU_REQUIRE_DB();
    int64_t run = cu_sprt(cu_fx.store, "", 3, 7, 500, -500, 500);
    int64_t a, b;
    cr_assert_eq(store_hello(cu_fx.store, "wa", "b", 1, 2, "", &a), 1);
    cr_assert_eq(store_hello(cu_fx.store, "wb", "b", 1, 1, "", &b), 1);
    /* three requests (a twice) share the run's pairs: 3 + 3 + 1 */
    int64_t workers[4] = { a, b, a, b };
    StoreLease l[4];
    bool given[4];
    cr_assert_eq(store_claim_batch(cu_fx.store, run, workers, 4, 60000, l, given), 3);
    cr_assert(given[0] && given[1] && given[2] && !given[3]);
    cr_assert_eq(l[0].first_pair, 0);
    cr_assert_eq(l[1].first_pair, 3);
    cr_assert_eq(l[2].first_pair, 6);
    cr_assert_eq(l[2].pairs, 1);
    cr_assert_neq(l[0].task_id, l[2].task_id);
    /* one batch: a's two cumulative reports of its first task, b's report of a's
       task (not its lease: stale), b's impossible report, a's last task */
    StoreReportItem it[5] = {
        { .worker = a, .task = l[0].task_id, .token = l[0].token, .counts = counts(1, 1, 0) },
        { .worker = a, .task = l[0].task_id, .token = l[0].token, .counts = counts(2, 1, 1) },
        { .worker = b, .task = l[2].task_id, .token = l[2].token, .counts = counts(1, 0, 1) },
        { .worker = b, .task = l[1].task_id, .token = l[1].token, .counts = counts(4, 4, 0) },
        { .worker = a, .task = l[2].task_id, .token = l[2].token, .counts = counts(1, 0, 1) },
    };
    /* records as a worker sends them: a's second report, not acknowledged yet, has its first pair's again */
    for (int i = 0; i < 5; i++)
        add_records(&it[i], NULL);
    size_t first_len, more_len;
    uint8_t *first = cu_records_for(&it[0].counts, NULL, &first_len);
    uint8_t *more = cu_records_for(&it[1].counts, &it[0].counts, &more_len);
    uint8_t *both = malloc(first_len + more_len);
    cr_assert(first && more && both);
    memcpy(both, first, first_len);
    memcpy(both + first_len, more, more_len);
    free(first);
    free(more);
    free((void *)it[1].games);
    it[1].games = both;
    it[1].games_len = first_len + more_len;
    cr_assert_eq(store_report_batch(cu_fx.store, it, 5, 60000), 0);
    cr_assert_eq(it[0].status, REPORT_ACCEPTED);
    cr_assert_eq(it[1].status, REPORT_ACCEPTED);
    cr_assert_eq(it[2].status, REPORT_STALE);
    cr_assert_eq(it[3].status, REPORT_INVALID);   /* 4 pairs in a task of 3 */
    cr_assert_eq(it[4].status, REPORT_ACCEPTED);
    cr_assert(it[4].task_done);
    cr_assert(!it[1].task_done);
    cr_assert_eq(it[4].run, run);
    /* the same batch again changes nothing */
    cr_assert_eq(store_report_batch(cu_fx.store, it, 5, 60000), 0);
    free_records(it, 5);
    cr_assert_eq(it[1].status, REPORT_DUPLICATE);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_eq(r.counts.pairs, 3);
    cr_assert_eq(r.counts.penta[2], 1);
    cr_assert_eq(r.counts.penta[4], 2);
    cr_assert_eq(r.counts.wins, 4);
    /* a foreign worker cannot hand back a's lease (nor extend it: test_leases) */
    cr_assert_eq(store_handback(cu_fx.store, b, l[0].task_id, l[0].token, "not mine", false, 5), 0);
    StoreAudit au;
    cr_assert_eq(store_audit_run(cu_fx.store, run, &au), 1);
    cr_assert_eq(au.run_pairs, 3);
    cr_assert_eq(au.result_pairs, 3);
}

Test(store, a_worker_name_stays_with_its_key)
{
    CU_REQUIRE_DB();
    int64_t id, again;
    cr_assert_eq(store_hello(cu_fx.store, "box-1", "b", 1, 1, "alice", &id), 1);
    cr_assert_eq(store_hello(cu_fx.store, "box-1", "b", 1, 1, "alice", &again), 1);
    cr_assert_eq(again, id);
    cr_assert_eq(store_hello(cu_fx.store, "box-1", "b", 1, 1, "mallory", &again), 0);
    cr_assert_eq(store_hello(cu_fx.store, "box-1", "b", 1, 1, "", &again), 0);
    /* a name first seen without a key is claimed by the first key that says it */
    cr_assert_eq(store_hello(cu_fx.store, "box-2", "b", 1, 1, "", &id), 1);
    cr_assert_eq(store_hello(cu_fx.store, "box-2", "b", 1, 1, "bob", &again), 1);
    cr_assert_eq(again, id);
    cr_assert_eq(store_hello(cu_fx.store, "box-2", "b", 1, 1, "carol", &again), 0);
}

/* Worker names and builds come from the network: the status lines show their control characters escaped. */
Test(store, status_escapes_peer_text)
{
    CU_REQUIRE_DB();
    int64_t worker;
    cr_assert_eq(store_hello(cu_fx.store, "evil\n\x1b[2J\x7f", "b\tx", 1, 1, "", &worker), 1);
    XqfStrs workers = { 0, NULL }, runs = { 0, NULL };
    cr_assert_eq(status_lines(cu_fx.store, 10, &workers, &runs), 0);
    cr_assert_eq(workers.count, 1);
    cr_assert(strstr(workers.v[0], "worker evil\\n\\x1b[2J\\x7f build b\\tx cores 1"), "%s", workers.v[0]);
    xqf_strs_free(&workers);
    xqf_strs_free(&runs);
}

/* A pentanomial that disagrees with its W/D/L is refused before SQL; the consistent report still counts. */
Test(store, a_pentanomial_must_match_its_games)
{
    CU_REQUIRE_DB();
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 4, 8, 500, -500, 500), worker;
    cr_assert_gt(run, 0);
    cr_assert_eq(store_hello(cu_fx.store, "w1", "b", 1, 1, "", &worker), 1);
    StoreLease l;
    cr_assert_eq(store_claim_task(cu_fx.store, run, worker, 60000, &l), 1);
    /* one WD pair (a win and a draw) said to be a win and a loss: W+D+L, the cells' sum and both bounds hold */
    StoreCounts wd = { .pairs = 1, .wins = 1, .draws = 0, .losses = 1, .penta = { 0, 0, 0, 1, 0 },
                       .nreasons = 3, .reasons = { 0, 2, 0 } };
    StoreReportItem it = { .worker = worker, .task = l.task_id, .token = l.token, .counts = wd };
    add_records(&it, NULL);
    cr_assert_eq(store_report_batch(cu_fx.store, &it, 1, 60000), 0);
    cr_assert_eq(it.status, REPORT_INVALID);
    free_records(&it, 1);
    it.counts.draws = 1, it.counts.losses = 0, it.counts.reasons[1] = 1, it.counts.reasons[2] = 1;
    add_records(&it, NULL);
    cr_assert_eq(store_report_batch(cu_fx.store, &it, 1, 60000), 0);
    cr_assert_eq(it.status, REPORT_ACCEPTED);
    free_records(&it, 1);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_eq(r.counts.pairs, 1);
    cr_assert_eq(r.counts.wins, 1);
    cr_assert_eq(r.counts.draws, 1);
}

/* The connection's bounds: a connect timeout, keepalives, a statement timeout, each unless set (docs/programs/xqf-coordinator.md). */
Test(store, connection_bounds_unless_set)
{
    CU_REQUIRE_DB();
    char v[64];
    cr_assert_eq(store_conn_option(cu_fx.store, "connect_timeout", v, sizeof v), 0);
    cr_assert_str_eq(v, STORE_CONNECT_TIMEOUT_S);
    cr_assert_eq(store_conn_option(cu_fx.store, "keepalives", v, sizeof v), 0);
    cr_assert_str_eq(v, "1");
    cr_assert_eq(store_conn_option(cu_fx.store, "keepalives_idle", v, sizeof v), 0);
    cr_assert_str_eq(v, STORE_KEEPALIVES_IDLE_S);
    cr_assert_eq(store_conn_option(cu_fx.store, "keepalives_interval", v, sizeof v), 0);
    cr_assert_str_eq(v, STORE_KEEPALIVES_INTERVAL_S);
    cr_assert_eq(store_conn_option(cu_fx.store, "keepalives_count", v, sizeof v), 0);
    cr_assert_str_eq(v, STORE_KEEPALIVES_COUNT);
    cr_assert_eq(store_setting(cu_fx.store, "statement_timeout", v, sizeof v), 0);
    cr_assert_str_eq(v, "30s");
    /* what a conninfo sets is kept */
    char mine[700];
    snprintf(mine, sizeof mine, "%s connect_timeout=3 keepalives_idle=7 options='-c statement_timeout=5s'", cu_fx.db);
    Store *s = store_new(mine);
    cr_assert_eq(store_connect(s), 0);
    cr_assert_eq(store_conn_option(s, "connect_timeout", v, sizeof v), 0);
    cr_assert_str_eq(v, "3");
    cr_assert_eq(store_conn_option(s, "keepalives_idle", v, sizeof v), 0);
    cr_assert_str_eq(v, "7");
    cr_assert_eq(store_conn_option(s, "keepalives_count", v, sizeof v), 0);
    cr_assert_str_eq(v, STORE_KEEPALIVES_COUNT);
    cr_assert_eq(store_setting(s, "statement_timeout", v, sizeof v), 0);
    cr_assert_str_eq(v, "5s");
    store_destroy(&s);
}

/*
 * A task refused by workers of N distinct keys is set aside with its
 * reasons; shutdowns and other tasks do not count.  A worker that refused
 * a task never gets it again, so one worker alone cannot quarantine it
 * (one key among many cannot sink a run); a cluster of fewer keys than N
 * sets it aside when every key refused it.
 */
Test(store, a_task_refused_too_often_is_quarantined)
{
    CU_REQUIRE_DB();
    int64_t run = cu_sprt(cu_fx.store, "", 2, 4, 500, -500, 500);   /* two tasks */
    int64_t w[4];
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", i + 1);
        cr_assert_eq(store_hello(cu_fx.store, name, "b", 1, 1, "", &w[i]), 1);
    }
    StoreLease l, other;
    const char *why[] = { "bad opening 1", "bad opening 2", "bad opening 3" };
    cr_assert_eq(store_claim_task(cu_fx.store, run, w[0], 60000, &l), 1);
    cr_assert_eq(store_handback(cu_fx.store, w[0], l.task_id, l.token, "shutting down", false, 3), 1);
    int64_t task = 0;
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(store_claim_task(cu_fx.store, run, w[i], 60000, &l), 1, "attempt %d", i);
        if (i == 0)
            task = l.task_id;
        cr_assert_eq(l.task_id, task, "the refused task goes to the next worker");
        cr_assert_eq(store_handback(cu_fx.store, w[i], l.task_id, l.token, why[i], true, 3), i < 2 ? 1 : 2);
        if (i == 0) {
            /* the worker that refused it gets another task, never this one straight back */
            cr_assert_eq(store_claim_task(cu_fx.store, run, w[0], 60000, &other), 1);
            cr_assert_neq(other.task_id, task, "a refused task went straight back to its refuser");
            cr_assert_eq(store_handback(cu_fx.store, w[0], other.task_id, other.token, "shutting down", false, 3), 1);
        }
    }
    cr_assert_eq(store_claim_task(cu_fx.store, run, w[3], 60000, &other), 1);
    cr_assert_neq(other.task_id, task, "a quarantined task is not given again");
    StoreQuarantined *q;
    cr_assert_eq(store_quarantined(cu_fx.store, run, &q), 1);
    cr_assert_eq(q[0].task, task);
    cr_assert_eq(q[0].refusals, 3);
    cr_assert_eq(q[0].pairs, 2);
    cr_assert_str_eq(q[0].reasons, "bad opening 1 | bad opening 2 | bad opening 3");
    free(q);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_eq(r.quarantined, 1);
    cr_assert_str_eq(r.state, "active", "the other task is under way");
    store_run_free(&r);
    XqfStrs ws = { 0, NULL }, lines = { 0, NULL };
    cr_assert_eq(status_lines(cu_fx.store, 5, &ws, &lines), 0);
    cr_assert(strstr(lines.v[0], "QUARANTINED 1 tasks"), "%s", lines.v[0]);
    xqf_strs_free(&ws);
    xqf_strs_free(&lines);

    /* one worker refusing again and again: never given the task back, never quarantined */
    int64_t run2 = cu_sprt(cu_fx.store, "", 2, 2, 500, -500, 500);   /* one task */
    cr_assert_eq(store_claim_task(cu_fx.store, run2, w[0], 60000, &l), 1);
    cr_assert_eq(store_handback(cu_fx.store, w[0], l.task_id, l.token, "refused", true, 2), 1);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(store_claim_task(cu_fx.store, run2, w[0], 60000, &other), 0, "given back to its refuser");
    cr_assert_eq(store_quarantined(cu_fx.store, run2, &q), 0);
    free(q);
    cr_assert_eq(store_claim_task(cu_fx.store, run2, w[1], 60000, &other), 1, "another worker plays it");
    cr_assert_eq(other.task_id, l.task_id);
}

/* Only the latest 10 reasons are kept; a cluster of fewer keys than N quarantines when all refused. */
Test(store, a_quarantined_task_keeps_its_latest_reasons)
{
    CU_REQUIRE_DB();
    StoreLease l;
    StoreQuarantined *q;
    int64_t w[12];
    for (int i = 0; i < 12; i++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", i);
        cr_assert_eq(store_hello(cu_fx.store, name, "b", 1, 1, "", &w[i]), 1);
    }
    int64_t run = cu_sprt(cu_fx.store, "", 2, 2, 500, -500, 500);
    for (int i = 0; i < 12; i++) {
        char reason[32];
        cr_assert_eq(store_claim_task(cu_fx.store, run, w[i], 60000, &l), 1);
        snprintf(reason, sizeof reason, "r%d", i);
        cr_assert_eq(store_handback(cu_fx.store, w[i], l.task_id, l.token, reason, true, 12), i < 11 ? 1 : 2);
    }
    cr_assert_eq(store_quarantined(cu_fx.store, run, &q), 1);
    cr_assert_str_eq(q[0].reasons, "r2 | r3 | r4 | r5 | r6 | r7 | r8 | r9 | r10 | r11");
    free(q);
    /* a cluster whose every key (12) refused: quarantined at 12 keys, not at 100 */
    int64_t run2 = cu_sprt(cu_fx.store, "", 2, 2, 500, -500, 500);
    for (int i = 0; i < 12; i++) {
        cr_assert_eq(store_claim_task(cu_fx.store, run2, w[i], 60000, &l), 1);
        cr_assert_eq(store_handback(cu_fx.store, w[i], l.task_id, l.token, "no", true, 100), i < 11 ? 1 : 2);
    }
}

/*
 * A run whose remaining tasks are all quarantined does not stay active
 * for ever: it is stopped with the quarantine as its verdict, when the
 * last open task is quarantined and when the last other task is done
 * (docs/programs/xqf-coordinator.md, 016_quarantine_end.sql).
 */
Test(store, a_run_left_with_only_quarantined_tasks_ends)
{
    CU_REQUIRE_DB();
    int64_t worker;
    cr_assert_eq(store_hello(cu_fx.store, "w", "b", 1, 1, "", &worker), 1);
    StoreLease l, other;
    StoreRun r;
    /* the last open task quarantined: the hand-back ends the run */
    int64_t run = cu_sprt(cu_fx.store, "", 2, 2, 500, -500, 500);
    cr_assert_eq(store_claim_task(cu_fx.store, run, worker, 60000, &l), 1);
    cr_assert_eq(store_handback(cu_fx.store, worker, l.task_id, l.token, "bad", true, 1), 2);
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.state, "stopped");
    cr_assert(strstr(r.verdict, "1 tasks quarantined"), "%s", r.verdict);
    store_run_free(&r);
    /* a task quarantined while another is under way: the run goes on, and ends when that one is done */
    run = cu_sprt(cu_fx.store, "", 2, 4, 500, -500, 500);
    cr_assert_eq(store_claim_task(cu_fx.store, run, worker, 60000, &l), 1);
    cr_assert_eq(store_claim_task(cu_fx.store, run, worker, 60000, &other), 1);
    cr_assert_eq(store_handback(cu_fx.store, worker, l.task_id, l.token, "bad", true, 1), 2);
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.state, "active");
    store_run_free(&r);
    StoreCounts done = { .pairs = 2, .draws = 4, .penta = { 0, 0, 2, 0, 0 }, .nreasons = 3, .reasons = { 0, 4, 0 } };
    StoreReportItem it = { .worker = worker, .task = other.task_id, .token = other.token, .counts = done };
    add_records(&it, NULL);
    cr_assert_eq(store_report_batch(cu_fx.store, &it, 1, 60000), 0);
    free_records(&it, 1);
    cr_assert_eq(it.status, REPORT_ACCEPTED);
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.state, "stopped", "not 'finished': a quarantined task's pairs were not played");
    cr_assert(strstr(r.verdict, "1 tasks quarantined"), "%s", r.verdict);
    cr_assert_eq(r.counts.pairs, 2);
    store_run_free(&r);
    /* a run with nothing quarantined finishes as before */
    run = cu_sprt(cu_fx.store, "", 2, 2, 500, -500, 500);
    cr_assert_eq(store_claim_task(cu_fx.store, run, worker, 60000, &l), 1);
    it = (StoreReportItem){ .worker = worker, .task = l.task_id, .token = l.token, .counts = done };
    add_records(&it, NULL);
    cr_assert_eq(store_report_batch(cu_fx.store, &it, 1, 60000), 0);
    free_records(&it, 1);
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.state, "finished");
    cr_assert_str_eq(r.verdict, "max pairs");
    store_run_free(&r);
}

/* A key's worker names are bounded (docs/programs/xqf-coordinator.md). */
Test(store, a_key_has_a_bounded_number_of_names)
{
    CU_REQUIRE_DB();
    int64_t id;
    cr_assert_eq(store_hello_capped(cu_fx.store, "k/1", "b", 1, 1, "k", 2, &id), 1);
    cr_assert_eq(store_hello_capped(cu_fx.store, "k/2", "b", 1, 1, "k", 2, &id), 1);
    cr_assert_eq(store_hello_capped(cu_fx.store, "k/3", "b", 1, 1, "k", 2, &id), -2, "a third name");
    cr_assert_eq(store_hello_capped(cu_fx.store, "k/1", "b", 1, 1, "k", 2, &id), 1, "its names stay usable");
    cr_assert_eq(store_hello_capped(cu_fx.store, "j/1", "b", 1, 1, "j", 2, &id), 1, "another key has its own");
    cr_assert_eq(store_hello_capped(cu_fx.store, "p/3", "b", 1, 1, "", 2, &id), 1, "no key, no bound");
}

/*
 * A result is what its game records say: one without the records of the
 * pairs it adds (it would be counted, never stored, never audited) or
 * whose W/D/L and pentanomial are not what its records' results count is
 * invalid, and nothing of it is counted.
 */
Test(store, a_result_must_carry_and_match_its_records)
{
    CU_REQUIRE_DB();
    int64_t run = cu_sprt(cu_fx.store, "", 4, 4, 500, -500, 500), worker;
    cr_assert_eq(store_hello(cu_fx.store, "w1", "b", 1, 1, "", &worker), 1);
    StoreLease l;
    cr_assert_eq(store_claim_task(cu_fx.store, run, worker, 60000, &l), 1);
    StoreCounts two = counts(2, 1, 1);          /* a DD pair and a WW pair */
    StoreReportItem it = { .worker = worker, .task = l.task_id, .token = l.token, .counts = two };
    cr_assert_eq(store_report_batch(cu_fx.store, &it, 1, 60000), 0);
    cr_assert_eq(it.status, REPORT_INVALID, "a result without records was taken");
    /* records of other results: two pairs lost twice, said to be a draw pair and a won pair */
    StoreCounts lost = counts(2, 0, 0);
    lost.penta[1] = 0, lost.penta[0] = 2, lost.draws = 0, lost.losses = 4;
    it.games = cu_records_for(&lost, NULL, &it.games_len);
    cr_assert_eq(store_report_batch(cu_fx.store, &it, 1, 60000), 0);
    cr_assert_eq(it.status, REPORT_INVALID, "a result whose counts are not its records' was taken");
    free((void *)it.games);
    /* the same pairs with their own records: taken */
    add_records(&it, NULL);
    cr_assert_eq(store_report_batch(cu_fx.store, &it, 1, 60000), 0);
    cr_assert_eq(it.status, REPORT_ACCEPTED);
    free((void *)it.games);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_eq(r.counts.pairs, 2);
    cr_assert_eq(r.counts.wins, 2);
    cr_assert_eq(r.counts.draws, 2);
    store_run_free(&r);
}

/* A database on another machine is reached only with verified TLS (sslmode=verify-full); this machine's as it is. */
Test(store, a_remote_database_needs_verified_tls)
{
    unsetenv("PGHOST");
    unsetenv("PGHOSTADDR");
    unsetenv("PGSSLMODE");
    char why[512];
    const char *local[] = { "", "dbname=x", "host=/tmp dbname=x", "host=localhost port=5432", "host=127.0.0.1",
                            "host=::1", "postgresql:///xqf?host=/var/run/postgresql" };
    for (size_t i = 0; i < sizeof local / sizeof *local; i++)
        cr_assert(!store_conninfo_problem(local[i], why, sizeof why), "'%s': %s", local[i], why);
    const char *remote[] = { "host=db.example.org dbname=x", "host=db.example.org sslmode=require",
                             "postgresql://10.0.0.5/x", "host=localhost,db2.example.org sslmode=prefer",
                             "host=localhost hostaddr=10.1.1.1" };
    for (size_t i = 0; i < sizeof remote / sizeof *remote; i++) {
        cr_assert(store_conninfo_problem(remote[i], why, sizeof why), "'%s' taken", remote[i]);
        cr_assert(strstr(why, "sslmode=verify-full"), "%s", why);
    }
    cr_assert(!store_conninfo_problem("host=db.example.org sslmode=verify-full sslrootcert=/etc/ca.pem", why,
                                      sizeof why));
    setenv("PGHOST", "db.example.org", 1);
    cr_assert(store_conninfo_problem("dbname=x", why, sizeof why), "PGHOST is what libpq uses");
    unsetenv("PGHOST");
    cr_assert(store_conninfo_problem("host='unterminated", why, sizeof why));
    /* locality by what a host parses as, never by how it begins; every host of a list */
    const char *lookalike[] = { "host=127.evil.example dbname=x", "postgresql://127.0.0.1.nip.io/x",
                                "host=localhost.evil.example", "host=/tmp,127.evil.example",
                                "hostaddr=127.0.0.1,10.0.0.9", "host=::1,::2" };
    for (size_t i = 0; i < sizeof lookalike / sizeof *lookalike; i++)
        cr_assert(store_conninfo_problem(lookalike[i], why, sizeof why), "'%s' taken as local", lookalike[i]);
    const char *local2[] = { "host=127.3.4.5", "host=::ffff:127.0.0.1", "host=localhost,/tmp,127.0.0.2",
                             "host=db.example.org hostaddr=127.0.0.1", "host=@xqf" };
    for (size_t i = 0; i < sizeof local2 / sizeof *local2; i++)
        cr_assert(!store_conninfo_problem(local2[i], why, sizeof why), "'%s': %s", local2[i], why);
    /* the environment where the conninfo says nothing: PGHOSTADDR beside an explicit socket host */
    setenv("PGHOSTADDR", "10.0.0.7", 1);
    cr_assert(store_conninfo_problem("host=/tmp dbname=x", why, sizeof why), "PGHOSTADDR is where libpq goes");
    unsetenv("PGHOSTADDR");
    setenv("PGSSLMODE", "verify-full", 1);
    cr_assert(!store_conninfo_problem("host=db.example.org", why, sizeof why), "%s", why);
    unsetenv("PGSSLMODE");
    /* a service (pg_service.conf) may name a remote host: only verify-full in the conninfo itself lets it by */
    char dir[] = "/tmp/xqf-service-XXXXXX", file[256];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/pg_service.conf", dir);
    FILE *f = fopen(file, "w");
    cr_assert_not_null(f);
    fputs("[far]\nhost=db.example.org\ndbname=x\nsslmode=require\n", f);
    fclose(f);
    setenv("PGSERVICEFILE", file, 1);
    cr_assert(store_conninfo_problem("service=far", why, sizeof why), "a service naming a remote host was taken");
    cr_assert(strstr(why, "service") && strstr(why, "sslmode=verify-full"), "%s", why);
    cr_assert(store_conninfo_problem("service=far host=/tmp", why, sizeof why), "its hostaddr could still be remote");
    setenv("PGSSLMODE", "verify-full", 1);
    cr_assert(store_conninfo_problem("service=far", why, sizeof why), "the service's sslmode outranks PGSSLMODE");
    unsetenv("PGSSLMODE");
    cr_assert(!store_conninfo_problem("service=far sslmode=verify-full", why, sizeof why), "%s", why);
    setenv("PGSERVICE", "far", 1);
    cr_assert(store_conninfo_problem("dbname=x", why, sizeof why), "PGSERVICE is what libpq uses");
    unsetenv("PGSERVICE");
    Store *far = store_new("service=far connect_timeout=1");
    cr_assert_eq(store_connect(far), -1, "a service's remote database without verified TLS was tried");
    store_destroy(&far);
    unsetenv("PGSERVICEFILE");
    unlink(file);
    rmdir(dir);
    Store *s = store_new("host=db.example.org connect_timeout=1 dbname=x");
    cr_assert_eq(store_connect(s), -1, "a remote database without verified TLS was tried");
    store_destroy(&s);
}

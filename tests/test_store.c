/*
 * The store against a real PostgreSQL (XQF_TEST_DB; skipped without it):
 * migrations, exactly-once reports, leases, hand-backs, run completion.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_util.h"
#include "migrations.h"
#include "store.h"

static char db[512], dbname[64];
static Store *store;

static void setup(void)
{
    if (!getenv("XQF_TEST_DB") || !*getenv("XQF_TEST_DB"))
        return;
    cr_assert_eq(cu_db_create(db, sizeof db, dbname, sizeof dbname), 0, "cannot create a test database");
    store = store_new(db);
    cr_assert_eq(store_connect(store), 0);
}

static void teardown(void)
{
    store_destroy(&store);
    if (dbname[0])
        cu_db_drop(dbname);
    dbname[0] = '\0';
}

TestSuite(store, .init = setup, .fini = teardown);

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

Test(store, migrations_are_idempotent)
{
    CU_REQUIRE_DB();
    cr_assert_eq(store_migrations_applied(store), XQF_MIGRATION_COUNT);
    Store *again = store_new(db);
    cr_assert_eq(store_connect(again), 0);
    cr_assert_eq(store_migrations_applied(again), 0);
    cr_assert_eq(store_connect(again), 0);   /* reconnecting too */
    cr_assert_eq(store_migrations_applied(again), 0);
    store_destroy(&again);
    store_destroy(&again);
}

Test(store, reports_count_exactly_once)
{
    CU_REQUIRE_DB();
    int64_t run = cu_sprt(store, "NullR=2", 4, 8, 500, -500, 500);
    cr_assert_gt(run, 0);
    int64_t worker;
    cr_assert_eq(store_hello(store, "w1", "b", 2, 2, &worker), 0);
    StoreLease l;
    cr_assert_eq(store_claim_task(store, run, worker, 60000, &l), 1);
    cr_assert_eq(l.first_pair, 0);
    cr_assert_eq(l.pairs, 4);
    cr_assert_str_eq(l.params0, "NullR=2");
    StoreReport st;
    int64_t r;
    bool done;
    StoreCounts c = counts(2, 1, 1);
    cr_assert_eq(store_report(store, l.task_id, l.token, &c, 60000, &st, &r, &done), 0);
    cr_assert_eq(st, REPORT_ACCEPTED);
    cr_assert_eq(r, run);
    cr_assert_not(done);
    /* the same report again, and again: nothing changes */
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(store_report(store, l.task_id, l.token, &c, 60000, &st, &r, &done), 0);
        cr_assert_eq(st, REPORT_DUPLICATE);
    }
    /* going backwards, inconsistent counts, beyond the task, a wrong token: refused */
    StoreCounts back = counts(1, 1, 0);
    cr_assert_eq(store_report(store, l.task_id, l.token, &back, 60000, &st, &r, &done), 0);
    cr_assert_eq(st, REPORT_INVALID);
    StoreCounts bad = counts(3, 1, 1);
    bad.wins++;
    cr_assert_eq(store_report(store, l.task_id, l.token, &bad, 60000, &st, &r, &done), 0);
    cr_assert_eq(st, REPORT_INVALID);
    StoreCounts beyond = counts(5, 1, 1);
    cr_assert_eq(store_report(store, l.task_id, l.token, &beyond, 60000, &st, &r, &done), 0);
    cr_assert_eq(st, REPORT_INVALID);
    StoreCounts fin = counts(4, 2, 1);
    cr_assert_eq(store_report(store, l.task_id, l.token + 1000, &fin, 60000, &st, &r, &done), 0);
    cr_assert_eq(st, REPORT_STALE);
    /* the rest of the task, then a late repeat */
    cr_assert_eq(store_report(store, l.task_id, l.token, &fin, 60000, &st, &r, &done), 0);
    cr_assert_eq(st, REPORT_ACCEPTED);
    cr_assert(done);
    cr_assert_eq(store_report(store, l.task_id, l.token, &fin, 60000, &st, &r, &done), 0);
    cr_assert_eq(st, REPORT_STALE);
    StoreAudit a;
    cr_assert_eq(store_audit_run(store, run, &a), 1);
    cr_assert_eq(a.run_pairs, 4);
    cr_assert_eq(a.run_games, 8);
    cr_assert_eq(a.task_pairs, 4);
    cr_assert_eq(a.result_pairs, 4);
    cr_assert_eq(a.run_penta, 4);
    /* the second task finishes the run: verdict "max pairs" */
    cr_assert_eq(store_claim_task(store, run, worker, 60000, &l), 1);
    cr_assert_eq(l.first_pair, 4);
    cr_assert_eq(store_claim_task(store, run, worker, 60000, &(StoreLease){ 0 }), 0);
    cr_assert_eq(store_report(store, l.task_id, l.token, &fin, 60000, &st, &r, &done), 0);
    StoreRun out;
    cr_assert_eq(store_load_run(store, run, &out, true), 1);
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
    int64_t run = cu_sprt(store, "", 4, 4, 500, -500, 500);
    int64_t worker;
    cr_assert_eq(store_hello(store, "w2", "b", 1, 1, &worker), 0);
    StoreLease l, l2;
    cr_assert_eq(store_claim_task(store, run, worker, 100, &l), 1);
    StoreReport st;
    int64_t r;
    bool done;
    StoreCounts one = counts(1, 1, 0);
    cr_assert_eq(store_report(store, l.task_id, l.token, &one, 100, &st, &r, &done), 0);
    cr_assert_eq(st, REPORT_ACCEPTED);
    cr_assert_eq(store_claim_task(store, run, worker, 100, &l2), 0);   /* nothing else yet */
    cu_sleep_ms(250);
    cr_assert_eq(store_expire_leases(store), 1);
    /* the late report of the dead lease is stale; a heartbeat too */
    StoreCounts two = counts(2, 2, 0);
    cr_assert_eq(store_report(store, l.task_id, l.token, &two, 100, &st, &r, &done), 0);
    cr_assert_eq(st, REPORT_STALE);
    cr_assert_eq(store_heartbeat(store, l.task_id, l.token, 100), 0);
    /* re-issued: the three pairs left, under a new token */
    cr_assert_eq(store_claim_task(store, run, worker, 60000, &l2), 1);
    cr_assert_eq(l2.task_id, l.task_id);
    cr_assert_neq(l2.token, l.token);
    cr_assert_eq(l2.first_pair, 1);
    cr_assert_eq(l2.pairs, 3);
    cr_assert_eq(store_heartbeat(store, l2.task_id, l2.token, 60000), 1);
    /* handed back, then claimed again: two pairs left after one more */
    cr_assert_eq(store_report(store, l2.task_id, l2.token, &one, 60000, &st, &r, &done), 0);
    cr_assert_eq(store_handback(store, l2.task_id, l2.token, "shutting down"), 1);
    cr_assert_eq(store_handback(store, l2.task_id, l2.token, "twice"), 0);
    StoreLease l3;
    cr_assert_eq(store_claim_task(store, run, worker, 60000, &l3), 1);
    cr_assert_eq(l3.first_pair, 2);
    cr_assert_eq(l3.pairs, 2);
    cr_assert_eq(store_report(store, l3.task_id, l3.token, &two, 60000, &st, &r, &done), 0);
    cr_assert(done);
    StoreAudit a;
    cr_assert_eq(store_audit_run(store, run, &a), 1);
    cr_assert_eq(a.run_pairs, 4);
    cr_assert_eq(a.result_pairs, 4);
    cr_assert_eq(a.max_attempts, 3);
}

Test(store, sprt_verdict_finishes_and_cancels)
{
    CU_REQUIRE_DB();
    int64_t run = cu_sprt(store, "", 2, 1000, 500, 0, 5);
    int64_t worker;
    cr_assert_eq(store_hello(store, "w3", "b", 1, 1, &worker), 0);
    StoreLease l;
    cr_assert_eq(store_claim_task(store, run, worker, 60000, &l), 1);
    cr_assert_eq(store_update_sprt(store, run, -3.1, "H0 accepted"), 0);
    StoreRun r;
    cr_assert_eq(store_load_run(store, run, &r, false), 1);
    cr_assert_str_eq(r.state, "finished");
    cr_assert_str_eq(r.verdict, "H0 accepted");
    cr_assert_eq(store_heartbeat(store, l.task_id, l.token, 60000), 0);
    cr_assert_eq(store_claim_task(store, run, worker, 60000, &l), 0);
    StoreRun *active;
    cr_assert_eq(store_active_runs(store, &active), 0);
    free(active);
}

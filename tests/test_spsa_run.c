/*
 * SPSA runs in the coordinator, against a real PostgreSQL (XQF_TEST_DB;
 * skipped without it): a small run end to end with a real worker (theta
 * updated once per task, history, bounds, the run finishing at N), and
 * the exactly-once rule with a scripted worker that repeats its report.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "cluster_util.h"
#include "codec.h"
#include "store_runs.h"
#include "store_spsa.h"

TestSuite(spsa_run, .init = cu_fixture_init, .fini = cu_fixture_fini, .timeout = 150);

static const StoreSpsaParam PARAMS[2] = {
    { "NullR", 3, 1, 5, 0.5, 0.002, 0, false },
    { "NullAdaptLowDepth", 6, 1, 12, 1, 0.002, 0, false },
};

/* An SPSA run over PARAMS: pairs iterations, tasks of per_task pairs, the first 50 book lines. */
static int64_t spsa_run(int64_t pairs, int per_task, int64_t nodes)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/ops/books/default.book", XQF_SOURCE_DIR);
    FILE *f = fopen(path, "r");
    cr_assert(f);
    static char lines[50][512];
    const char *book[50];
    int n = 0;
    while (n < 50 && fgets(lines[n], sizeof lines[n], f)) {
        if (lines[n][0] == '#' || lines[n][0] == '\n')
            continue;
        lines[n][strcspn(lines[n], "\n")] = '\0';
        book[n] = lines[n];
        n++;
    }
    fclose(f);
    StoreSpsaSpec spec = { 0 };
    spec.run.name = "spsa test";
    spec.run.test_params = "";
    spec.run.book_name = "default.book";
    spec.run.book = book;
    spec.run.book_lines = n;
    spec.run.seed = 11;
    spec.run.nodes = nodes;
    spec.run.margin_ms = 100;
    spec.run.pairs_per_task = per_task;
    spec.run.max_pairs = pairs;
    spec.alpha = 0.602;
    spec.gamma = 0.101;
    spec.a_ratio = 0.1;
    spec.params = PARAMS;
    spec.count = 2;
    int64_t id;
    cr_assert_eq(store_create_spsa(cu_fx.store, &spec, &id), 0);
    return id;
}

/* Checks the history: count rows per iteration, iterations ascending by per_task, theta in bounds. */
static int64_t check_history(int64_t run, int per_task)
{
    StoreHistoryRow *h;
    int n = store_spsa_history(cu_fx.store, run, &h);
    cr_assert_geq(n, 0);
    cr_assert_eq(n % 2, 0);
    for (int i = 0; i < n; i++) {
        cr_assert_eq(h[i].idx, i % 2);
        cr_assert_eq(h[i].iteration, (int64_t)(i / 2 + 1) * per_task, "row %d: iteration %lld", i,
                     (long long)h[i].iteration);
        const StoreSpsaParam *p = &PARAMS[h[i].idx];
        cr_assert(h[i].theta >= p->min && h[i].theta <= p->max, "theta %g", h[i].theta);
    }
    free(h);
    return n / 2;
}

Test(spsa_run, end_to_end)
{
    CU_REQUIRE_DB();
    int64_t run = spsa_run(8, 2, 300);
    cu_track(cu_coordinator(cu_fx.db_coordinator, cu_fx.port, "10", cu_fx.logfile));
    cu_track(cu_worker(cu_fx.port, "w1", 2, cu_fx.logfile));
    StoreRun r;
    cr_assert(cu_wait_finished(cu_fx.store, run, 120, &r), "run did not finish (log: %s)", cu_fx.logfile);
    cr_assert_str_eq(r.state, "finished");
    cr_assert_eq(r.counts.pairs, 8);
    cr_assert_eq(r.iter, 8, "iter %lld (log: %s)", (long long)r.iter, cu_fx.logfile);
    StoreAudit a;
    cr_assert_eq(store_audit_run(cu_fx.store, run, &a), 1);
    cr_assert_eq(a.tasks_done, 4);
    cr_assert_eq(check_history(run, 2), 4);
    StoreSpsa st;
    cr_assert_eq(store_spsa_load(cu_fx.store, run, &st), 1);
    cr_assert_eq(st.count, 2);
    for (int i = 0; i < 2; i++) {
        cr_assert(isfinite(st.params[i].theta));
        cr_assert(st.params[i].theta >= PARAMS[i].min && st.params[i].theta <= PARAMS[i].max);
    }
    StoreProgress *p;
    int np = store_run_progress(cu_fx.store, run, &p);
    cr_assert_geq(np, 1);
    cr_assert_eq(p[np - 1].counts.pairs, 8);
    free(p);
}

/* ---- a scripted worker: the same report twice, and a late one ------------------ */

static void send_msg(void *sock, const XqfMsg *m)
{
    XqfBuf b = { 0 };
    cr_assert_eq(xqf_msg_encode(m, &b), 0);
    cr_assert_geq(zmq_send(sock, b.data, b.len, 0), 0);
    xqf_buf_free(&b);
}

static void reply(void *sock, XqfMsg *m)
{
    zmq_pollitem_t it = { sock, 0, ZMQ_POLLIN, 0 };
    xqf_msg_init(m, XQF_MSG_NONE);
    cr_assert_gt(zmq_poll(&it, 1, 5000), 0, "no reply (log: %s)", cu_fx.logfile);
    zmq_msg_t part;
    zmq_msg_init(&part);
    cr_assert_geq(zmq_msg_recv(&part, sock, 0), 0);
    cr_assert_eq(xqf_msg_decode(zmq_msg_data(&part), zmq_msg_size(&part), m, NULL, 0), XQF_DECODE_OK);
    zmq_msg_close(&part);
}

/* Reports 2 pairs (DD and WD: W 1, D 3, L 0) under a lease, from its task's openings; returns the ack status. */
static void report(void *sock, uint64_t task, uint64_t lease, const XqfStrs *openings, char *status, size_t size)
{
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_RESULT);
    m.u.result.task_id = task;
    m.u.result.lease = lease;
    m.u.result.pairs = 2;
    m.u.result.wins = 1;
    m.u.result.draws = 3;
    m.u.result.penta.count = 5;
    m.u.result.penta.v[2] = 1;
    m.u.result.penta.v[3] = 1;
    m.u.result.reasons.count = 1;
    m.u.result.reasons.v[0] = 4;
    /* the records of those games: the coordinator counts them */
    const StoreCounts c = { .pairs = 2, .wins = 1, .draws = 3, .penta = { 0, 0, 1, 1, 0 } };
    size_t len;
    uint8_t *games = cu_records_from(&c, NULL, (const char *const *)openings->v, &len);
    cr_assert_eq(xqf_bin_set(&m.u.result.games, games, len), 0);
    free(games);
    send_msg(sock, &m);
    reply(sock, &m);
    cr_assert_eq(m.type, XQF_MSG_ACK);
    snprintf(status, size, "%s", m.u.ack.status);
    xqf_msg_free(&m);
}

Test(spsa_run, update_applied_once)
{
    CU_REQUIRE_DB();
    int64_t run = spsa_run(4, 2, 300);
    cu_track(cu_coordinator(cu_fx.db_coordinator, cu_fx.port, "10", cu_fx.logfile));
    void *ctx = zmq_ctx_new(), *sock = zmq_socket(ctx, ZMQ_DEALER);
    int linger = 0;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", cu_fx.port);
    cr_assert_eq(zmq_connect(sock, ep), 0);
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_HELLO);
    strcpy(m.u.hello.name, "scripted");
    m.u.hello.cores = m.u.hello.concurrency = 1;
    send_msg(sock, &m);
    reply(sock, &m);
    cr_assert_eq(m.type, XQF_MSG_WELCOME);
    xqf_msg_init(&m, XQF_MSG_TASK_REQUEST);
    send_msg(sock, &m);
    reply(sock, &m);
    cr_assert_eq(m.type, XQF_MSG_TASK, "got %s", xqf_msg_type_name(m.type));
    cr_assert_str_eq(m.u.task.kind, "spsa");
    cr_assert_eq(m.u.task.pairs, 2);
    cr_assert(strstr(m.u.task.params0, "NullR=") && strstr(m.u.task.params1, "NullAdaptLowDepth="),
              "%s / %s", m.u.task.params0, m.u.task.params1);
    uint64_t task = m.u.task.task_id, lease = m.u.task.lease;
    XqfStrs openings = m.u.task.openings;    /* kept: the records start from them */
    m.u.task.openings = (XqfStrs){ 0, NULL };
    xqf_msg_free(&m);

    char status[32];
    report(sock, task, lease, &openings, status, sizeof status);
    cr_assert_str_eq(status, "accepted");
    StoreSpsa once;
    cr_assert_eq(store_spsa_load(cu_fx.store, run, &once), 1);
    cr_assert_eq(once.iter, 2);
    /* theta moved by R_k c_k (W - L) flip from the start: |move| = R_k c_k at k = 1 */
    for (int i = 0; i < 2; i++)
        cr_assert(fabs(once.params[i].theta - PARAMS[i].start) > 0, "theta %d did not move", i);
    /* the same report again, then a late one of a lease that never was */
    report(sock, task, lease, &openings, status, sizeof status);
    cr_assert_str_eq(status, "stale");
    report(sock, task, lease + 1000, &openings, status, sizeof status);
    cr_assert_str_eq(status, "stale");
    cr_assert_eq(store_spsa_claim_update(cu_fx.store, (int64_t)task), 0, "a second claim must fail");
    StoreSpsa twice;
    cr_assert_eq(store_spsa_load(cu_fx.store, run, &twice), 1);
    cr_assert_eq(twice.iter, 2);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(twice.params[i].theta, once.params[i].theta);
    cr_assert_eq(check_history(run, 2), 1);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.state, "active");
    xqf_strs_free(&openings);
    zmq_close(sock);
    zmq_ctx_term(ctx);
}

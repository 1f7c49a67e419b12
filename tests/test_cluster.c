/*
 * The cluster end to end: a real PostgreSQL (XQF_TEST_DB; skipped without
 * it), xqf-coordinator and xqf-worker processes on loopback ZeroMQ.  Every
 * test runs a small SPRT run on a database of its own and then audits
 * that every game was counted once: the run's counters, the sums over its
 * tasks and over the results of every lease agree with the pairs planned.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "bench.h"
#include "cluster_util.h"
#include "codec.h"
#include "keys.h"
#include "malformed.h"
#include "store_builds.h"
#include "store_lists.h"
#include "store_nets.h"
#include "store_runs.h"

TestSuite(cluster, .init = cu_fixture_init, .fini = cu_fixture_fini, .timeout = 150);

static pid_t coordinator(const char *lease) { return cu_track(cu_coordinator(cu_fx.db_coordinator, cu_fx.port, lease, cu_fx.logfile)); }
static pid_t worker(const char *name) { return cu_track(cu_worker(cu_fx.port, name, 1, cu_fx.logfile)); }

/* Waits for the end of the run, then checks every count against the planned pairs. */
static void finish_and_audit(int64_t run, int64_t pairs, double timeout_s, const char *verdict)
{
    StoreRun r;
    cr_assert(cu_wait_finished(cu_fx.store, run, timeout_s, &r), "run %lld did not finish (log: %s)",
              (long long)run, cu_fx.logfile);
    if (verdict)
        cr_assert_str_eq(r.verdict, verdict, "log: %s", cu_fx.logfile);
    char why[256];
    cr_assert(cu_audit(cu_fx.store, run, pairs, why, sizeof why), "run %lld: %s (log: %s)", (long long)run, why, cu_fx.logfile);
}

Test(cluster, end_to_end)
{
    CU_REQUIRE_DB();
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 4, 12, 500, -500, 500);
    coordinator("10");
    worker("w1");
    worker("w2");
    finish_and_audit(run, 12, 60, "max pairs");
    StoreAudit a;
    store_audit_run(cu_fx.store, run, &a);
    cr_assert_eq(a.tasks, 3);
    cr_assert_eq(a.tasks_done, 3);
}

/*
 * The contributors' figures of a cluster run are the run's own counts:
 * its two machines' pairs, games and tasks sum to the run's, with no
 * crash or time loss, and their CPU-hours are at most their wall time
 * (one core each).
 */
Test(cluster, contributors_are_the_runs_own_counts)
{
    CU_REQUIRE_DB();
    double started = cu_now();
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 4, 12, 500, -500, 500);
    coordinator("10");
    worker("c1");
    worker("c2");
    finish_and_audit(run, 12, 60, "max pairs");
    double wall_h = (cu_now() - started) / 3600.0;
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    StoreAudit a;
    store_audit_run(cu_fx.store, run, &a);
    StoreTable *t = store_list(cu_fx.store, STORE_LIST_CONTRIBUTORS_AS_OF, NULL);   /* made now: never before */
    cr_assert(t && store_table_rows(t) == 1);
    store_table_free(&t);
    t = store_list(cu_fx.store, STORE_LIST_CONTRIBUTORS_MACHINES, NULL);
    cr_assert_not_null(t);
    int64_t pairs = 0, games = 0, tasks = 0, faults = 0;
    double cpu = 0;
    cr_assert_eq(store_table_rows(t), 2, "the two machines");
    for (int i = 0; i < store_table_rows(t); i++) {
        /* Machine, User, Cores, CPU-hours, Games, Pairs, Tasks, Crashes, Time losses, Last seen */
        cr_assert(strcmp(store_table_cell(t, i, 0), "c1") == 0 || strcmp(store_table_cell(t, i, 0), "c2") == 0);
        cr_assert_str_eq(store_table_cell(t, i, 2), "1");
        cpu += strtod(store_table_cell(t, i, 3), NULL);
        games += strtoll(store_table_cell(t, i, 4), NULL, 10);
        pairs += strtoll(store_table_cell(t, i, 5), NULL, 10);
        tasks += strtoll(store_table_cell(t, i, 6), NULL, 10);
        faults += strtoll(store_table_cell(t, i, 7), NULL, 10) + strtoll(store_table_cell(t, i, 8), NULL, 10);
    }
    store_table_free(&t);
    cr_assert_eq(pairs, r.counts.pairs, "pairs: %" PRId64 " against the run's %" PRId64, pairs, r.counts.pairs);
    cr_assert_eq(games, 2 * r.counts.pairs);
    cr_assert_eq(tasks, a.tasks_done, "tasks: %" PRId64 " against %" PRId64, tasks, (int64_t)a.tasks_done);
    cr_assert_eq(faults, 0);
    cr_assert(cpu >= 0 && cpu <= 2 * wall_h + 0.01, "CPU-hours %.2f within two cores' wall time %.4f h", cpu, wall_h);

    t = store_list(cu_fx.store, STORE_LIST_CONTRIBUTORS_USERS, NULL);
    cr_assert_not_null(t);
    cr_assert_eq(store_table_rows(t), 1);
    cr_assert_str_eq(store_table_cell(t, 0, 0), "(no key)");
    cr_assert_str_eq(store_table_cell(t, 0, 1), "2");
    cr_assert_eq(strtoll(store_table_cell(t, 0, 4), NULL, 10), r.counts.pairs, "the user's pairs are the run's");
    store_table_free(&t);
}

Test(cluster, sprt_stops_at_a_bound)
{
    CU_REQUIRE_DB();
    /* a badly detuned test side against wide bounds: H0 within a few tasks */
    int64_t run = cu_sprt(cu_fx.store, "RookMg=400,RookEg=400,CannonMg=200", 2, 200, 500, 0, 100);
    coordinator("10");
    worker("w1");
    worker("w2");
    finish_and_audit(run, -1, 60, "H0 accepted");
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_lt(r.counts.pairs, 200);
    cr_assert_lt(r.llr, 0);
}

Test(cluster, worker_killed_mid_task)
{
    CU_REQUIRE_DB();
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 4, 8, 3000, -500, 500);
    coordinator("2");
    pid_t w1 = worker("w1");
    cr_assert(cu_wait_pairs(cu_fx.store, run, 1, 60), "no pair reported (log: %s)", cu_fx.logfile);
    cu_kill9(w1);
    worker("w2");
    finish_and_audit(run, 8, 90, "max pairs");
    StoreAudit a;
    store_audit_run(cu_fx.store, run, &a);
    cr_assert_geq(a.max_attempts, 2, "the killed worker's task was not re-issued");
}

Test(cluster, one_worker_spreads_tasks_over_its_threads)
{
    CU_REQUIRE_DB();
    /* tasks of 3, 3, 3 and 1 pairs on one worker with two game threads and prefetch */
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 3, 10, 500, -500, 500);
    coordinator("10");
    cu_track(cu_worker(cu_fx.port, "w2threads", 2, cu_fx.logfile));
    finish_and_audit(run, 10, 60, "max pairs");
    StoreAudit a;
    store_audit_run(cu_fx.store, run, &a);
    cr_assert_eq(a.tasks, 4);
    cr_assert_eq(a.tasks_done, 4);
    cr_assert_eq(a.max_attempts, 1, "a task was issued twice (log: %s)", cu_fx.logfile);
}

Test(cluster, sigterm_hands_back_every_task_held)
{
    CU_REQUIRE_DB();
    /*
     * Long leases: the tasks the first worker holds (played and fetched
     * ahead) reach the second one in time only if they were handed back.
     */
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 2, 8, 3000, -500, 500);
    coordinator("120");
    pid_t w1 = cu_track(cu_worker(cu_fx.port, "w1", 2, cu_fx.logfile));
    cr_assert(cu_wait_pairs(cu_fx.store, run, 1, 60), "no pair reported (log: %s)", cu_fx.logfile);
    int status = cu_stop(w1, SIGTERM);
    cu_untrack(w1);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d (log: %s)", status, cu_fx.logfile);
    worker("w2");
    finish_and_audit(run, 8, 90, "max pairs");
}

Test(cluster, coordinator_killed_and_restarted)
{
    CU_REQUIRE_DB();
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 4, 12, 2000, -500, 500);
    pid_t c = coordinator("5");
    worker("w1");
    worker("w2");
    cr_assert(cu_wait_pairs(cu_fx.store, run, 2, 60), "no pairs reported (log: %s)", cu_fx.logfile);
    cu_kill9(c);
    cu_sleep_ms(1000);
    coordinator("5");
    finish_and_audit(run, 12, 90, "max pairs");
}

Test(cluster, database_restarted)
{
    CU_REQUIRE_DB();
    if (!getenv("XQF_PG_DIR"))
        cr_skip("XQF_PG_DIR is not set (ops/test sets it): cannot restart the database");
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 4, 12, 2000, -500, 500);
    coordinator("5");
    worker("w1");
    worker("w2");
    cr_assert(cu_wait_pairs(cu_fx.store, run, 2, 60), "no pairs reported (log: %s)", cu_fx.logfile);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s/ops/pg' stop >>'%s' 2>&1", XQF_SOURCE_DIR, cu_fx.logfile);
    cr_assert_eq(system(cmd), 0);
    cu_sleep_ms(2000);
    snprintf(cmd, sizeof cmd, "'%s/ops/pg' start >>'%s' 2>&1", XQF_SOURCE_DIR, cu_fx.logfile);
    cr_assert_eq(system(cmd), 0);
    finish_and_audit(run, 12, 90, "max pairs");
}

/* ---- hostile input ---------------------------------------------------------- */

/* Sends raw bytes (parts > 1: as a multipart message) from a DEALER. */
/* A raw client: a DEALER connected to the test's coordinator. */
static void *dealer(void *ctx)
{
    void *sock = zmq_socket(ctx, ZMQ_DEALER);
    int linger = 0;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", cu_fx.port);
    cr_assert_eq(zmq_connect(sock, ep), 0);
    return sock;
}

static void send_raw(void *sock, const void *data, size_t len, int parts)
{
    for (int i = 0; i < parts; i++)
        cr_assert_geq(zmq_send(sock, data, len, i + 1 < parts ? ZMQ_SNDMORE : 0), 0);
}

static void send_msg(void *sock, const XqfMsg *m)
{
    XqfBuf b = { 0 };
    cr_assert_eq(xqf_msg_encode(m, &b), 0);
    send_raw(sock, b.data, b.len, 1);
    xqf_buf_free(&b);
}

/* The next reply within 3 s (type NONE when there is none). */
static void reply(void *sock, XqfMsg *m)
{
    zmq_pollitem_t it = { sock, 0, ZMQ_POLLIN, 0 };
    xqf_msg_init(m, XQF_MSG_NONE);
    if (zmq_poll(&it, 1, 3000) <= 0)
        return;
    zmq_msg_t part;
    zmq_msg_init(&part);
    cr_assert_geq(zmq_msg_recv(&part, sock, 0), 0);
    cr_assert_eq(xqf_msg_decode(zmq_msg_data(&part), zmq_msg_size(&part), m, NULL, 0), XQF_DECODE_OK);
    zmq_msg_close(&part);
}

static void expect_error(void *sock, XqfErrorCode code, const char *what)
{
    XqfMsg m;
    reply(sock, &m);
    cr_assert_eq(m.type, XQF_MSG_ERROR, "%s: no error reply", what);
    cr_assert_eq(m.u.error.code, (uint64_t)code, "%s: error %llu (%s)", what,
                 (unsigned long long)m.u.error.code, m.u.error.text);
    xqf_msg_free(&m);
}

static void expect_silence(void *sock, const char *what)
{
    zmq_pollitem_t it = { sock, 0, ZMQ_POLLIN, 0 };
    cr_assert_eq(zmq_poll(&it, 1, 300), 0, "%s: unexpected reply", what);
}

Test(cluster, hostile_messages)
{
    CU_REQUIRE_DB();
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 2, 10, 500, -500, 500);
    coordinator("10");
    worker("w1");
    void *ctx = zmq_ctx_new(), *sock = dealer(ctx);

    send_raw(sock, "\xc1garbage", 8, 1);
    expect_error(sock, XQF_ERR_MALFORMED, "garbage");
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_HELLO);
    strcpy(m.u.hello.name, "hostile");
    m.u.hello.concurrency = 1 << 16;   /* held to --max-concurrency: its leases are bounded by it */
    XqfBuf b = { 0 };
    cr_assert_eq(xqf_msg_encode(&m, &b), 0);
    send_raw(sock, b.data, b.len - 3, 1);
    expect_error(sock, XQF_ERR_MALFORMED, "truncated");
    b.data[5] ^= 0x01; /* "sig" value corrupted */
    send_raw(sock, b.data, b.len, 1);
    expect_error(sock, XQF_ERR_MALFORMED, "bad signature");
    b.data[5] ^= 0x01;
    send_raw(sock, b.data, b.len, 2);
    expect_silence(sock, "multipart");
    /* version: "v" is the byte after the key "v" (a1 76) */
    char *v = NULL;
    for (size_t i = 0; i + 2 < b.len && !v; i++)
        if ((unsigned char)b.data[i] == 0xa1 && b.data[i + 1] == 'v')
            v = b.data + i;
    cr_assert(v);
    v[2] = XQF_PROTOCOL_VERSION + 1;
    send_raw(sock, b.data, b.len, 1);
    expect_error(sock, XQF_ERR_VERSION, "wrong version");
    v[2] = XQF_PROTOCOL_VERSION;
    size_t big = (size_t)XQF_FRAME_MAX + 1000;
    char *huge = calloc(1, big);
    send_raw(sock, huge, big, 1);
    expect_error(sock, XQF_ERR_TOO_BIG, "oversized");
    free(huge);
    XqfMsg w;
    xqf_msg_init(&w, XQF_MSG_WELCOME);
    send_msg(sock, &w);
    expect_error(sock, XQF_ERR_TYPE, "a type the coordinator does not take");
    xqf_msg_init(&w, XQF_MSG_TASK_REQUEST);
    send_msg(sock, &w);
    expect_error(sock, XQF_ERR_NEED_HELLO, "task_request before hello");
    xqf_msg_init(&w, XQF_MSG_RESULT);
    w.u.result.task_id = 1;
    w.u.result.lease = 999999;
    w.u.result.pairs = 1;
    w.u.result.wins = 2;
    w.u.result.penta.count = 5;
    w.u.result.penta.v[4] = 1;
    send_msg(sock, &w);
    expect_error(sock, XQF_ERR_NEED_HELLO, "result before hello");
    /* and still a good citizen gets served */
    send_raw(sock, b.data, b.len, 1);
    reply(sock, &m);
    cr_assert_eq(m.type, XQF_MSG_WELCOME);
    char cmd[1024], held[32] = "";
    snprintf(cmd, sizeof cmd, "psql -X -At '%s' -c \"SELECT concurrency FROM workers WHERE name = 'hostile'\"", cu_fx.db);
    FILE *q = popen(cmd, "r");
    cr_assert(q && fgets(held, sizeof held, q));
    pclose(q);
    cr_assert_eq(atoi(held), 256, "a concurrency of 65,536 kept (the default --max-concurrency is 256): %s", held);
    /* whose forged result (a lease it does not hold) changes nothing */
    send_msg(sock, &w);
    reply(sock, &m);
    cr_assert_eq(m.type, XQF_MSG_ACK);
    cr_assert(strcmp(m.u.ack.status, "stale") == 0 || strcmp(m.u.ack.status, "invalid") == 0,
              "forged result: %s", m.u.ack.status);
    xqf_msg_init(&w, XQF_MSG_STATUS_REQUEST);
    w.u.status_request.max_runs = 5;
    send_msg(sock, &w);
    reply(sock, &m);
    cr_assert_eq(m.type, XQF_MSG_STATUS);
    cr_assert_geq(m.u.status.runs.count, 1);
    cr_assert(strstr(m.u.status.runs.v[0], "sprt"), "%s", m.u.status.runs.v[0]);
    xqf_msg_free(&m);
    xqf_buf_free(&b);
    zmq_close(sock);
    zmq_ctx_term(ctx);
    finish_and_audit(run, 10, 60, "max pairs");
}

/* Sends one malformed frame and counts the error reply it must get. */
typedef struct {
    void *sock;
    int sent, refused;
} Barrage;

static void send_malformed(const char *type, const char *what, const uint8_t *data, size_t len, void *arg)
{
    Barrage *b = arg;
    send_raw(b->sock, data, len, 1);
    XqfMsg m;
    reply(b->sock, &m);
    cr_expect_eq(m.type, XQF_MSG_ERROR, "%s with %s: no error reply", type, what);
    b->sent++;
    b->refused += m.type == XQF_MSG_ERROR;
    xqf_msg_free(&m);
}

/* Every malformed variant of every type (tests/malformed.c), while a worker plays on. */
Test(cluster, every_malformed_message_is_refused)
{
    CU_REQUIRE_DB();
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 2, 8, 500, -500, 500);
    coordinator("10");
    worker("w1");
    void *ctx = zmq_ctx_new(), *sock = dealer(ctx);
    Barrage b = { sock, 0, 0 };
    int n = malformed_each(send_malformed, &b);
    cr_assert_eq(b.sent, n);
    cr_assert_eq(b.refused, n, "%d of %d malformed frames refused", b.refused, n);
    fprintf(stderr, "cluster: %d malformed frames (%d message types) each answered by an error\n", n,
            XQF_MSG_COUNT - 1);
    zmq_close(sock);
    zmq_ctx_term(ctx);
    finish_and_audit(run, 8, 90, "max pairs");
}

/* ---- SPRT of two engine builds: fetched, checked, cached, played --------------- */

/* Runs a shell command with the test's database; its stdout's last number, or -1. */
static int64_t sh_number(const char *fmt, const char *arg)
{
    char cmd[2048], part[1024];
    snprintf(part, sizeof part, fmt, arg);
    snprintf(cmd, sizeof cmd, "XQF_DB='%s' %s 2>>'%s'", cu_fx.db, part, cu_fx.logfile);
    FILE *p = popen(cmd, "r");
    cr_assert(p, "cannot run %s", cmd);
    char line[512];
    int64_t last = -1;
    while (fgets(line, sizeof line, p)) {
        long long v;
        if (sscanf(line, "Build: %lld", &v) == 1 || sscanf(line, "%lld", &v) == 1)
            last = v;
    }
    cr_assert_eq(pclose(p), 0, "%s failed (log: %s)", cmd, cu_fx.logfile);
    return last;
}

/*
 * Registers a binary as xqf-tune build --binary does, without its bench
 * (depth 8 takes a minute under the sanitizers; test_tune_cli runs the
 * command itself): its SHA-256 (sha256sum), a row signed with the operator
 * key signer (NULL: unsigned), its bytes.
 */
static int64_t register_build(const char *path, const SignKey *signer)
{
    char err[256];
    StoreBuild b = { 0 };
    cr_assert_eq(cu_sha256(path, b.sha256), 0);
    snprintf(b.build_id, sizeof b.build_id, "test-%.12s", b.sha256);
    snprintf(b.path, sizeof b.path, "%s", path);
    b.bench_nodes = (int64_t)bench_signature(); /* a copy of xqf-engine: workers check it (docs/cluster.md) */
    if (signer)
        cr_assert_eq(sign_build(signer, b.sha256, b.build_id, b.signature, err, sizeof err), 0, "%s", err);
    int64_t id = cu_build_add(cu_fx.store, &b);
    cr_assert_gt(id, 0);
    return id;
}

/* An operator key pair in logdir/NAME (its public key in NAME.pub, the path in pub). */
static void operator_key(const char *name, SignKey *k, char pub[600], size_t size)
{
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/%s", cu_fx.dir, name);
    cr_assert_eq(sign_key_generate(path, k, err, sizeof err), 0, "%s", err);
    snprintf(pub, size, "%s.pub", path);
}

/* A worker that trusts the operator key in the file pub. */
static pid_t trusting_worker(const char *name, const char *pub)
{
    const char *extra[] = { "--trust", pub, NULL };
    return cu_track(cu_worker_args(cu_fx.port, name, 3, cu_fx.logfile, extra));
}

Test(cluster, sprt_of_two_engine_builds)
{
    CU_REQUIRE_DB();
    char test_bin[512], base_bin[512], cache[512], tune[512];
    snprintf(test_bin, sizeof test_bin, "%s/engine-test", cu_fx.dir);
    snprintf(base_bin, sizeof base_bin, "%s/engine-base", cu_fx.dir);
    snprintf(cache, sizeof cache, "%s/cache", cu_fx.dir);
    snprintf(tune, sizeof tune, "%s/xqf-tune", XQF_BIN);
    cr_assert_eq(cu_engine_copy(test_bin, 1), 0);
    cr_assert_eq(cu_engine_copy(base_bin, 2), 0);
    char cmd[1024], pub[600];
    SignKey op;
    operator_key("operator", &op, pub, sizeof pub);
    int64_t test_build = register_build(test_bin, &op), base_build = register_build(base_bin, &op);
    cr_assert_gt(test_build, 0);
    cr_assert_gt(base_build, 0);
    char ids[256];
    snprintf(ids, sizeof ids, "--test-build %lld --base-build %lld --test NullR=2 --nodes 1500 "
             "--pairs-per-task 2 --max-pairs 6 --elo0 -500 --elo1 500", (long long)test_build,
             (long long)base_build);
    snprintf(cmd, sizeof cmd, "%s sprt new %%s", tune);
    int64_t run = sh_number(cmd, ids);
    cr_assert_gt(run, 0);
    setenv("XQF_CACHE", cache, 1);
    coordinator("30");
    trusting_worker("w1", pub);
    finish_and_audit(run, 6, 120, "max pairs");
    /* both binaries are in the worker's cache under their SHA-256, executable */
    StoreBuild b;
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(store_load_build(cu_fx.store, i ? base_build : test_build, &b), 1);
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", cache, b.sha256);
        cr_assert_eq(access(path, X_OK), 0, "%s not cached", path);
    }
    unsetenv("XQF_CACHE");
}

Test(cluster, a_tampered_build_is_not_played)
{
    CU_REQUIRE_DB();
    char bin[512], cache[512], tune[512], cmd[1024];
    snprintf(bin, sizeof bin, "%s/engine-test", cu_fx.dir);
    snprintf(cache, sizeof cache, "%s/cache", cu_fx.dir);
    snprintf(tune, sizeof tune, "%s/xqf-tune", XQF_BIN);
    cr_assert_eq(cu_engine_copy(bin, 3), 0);
    char pub[600];
    SignKey op;
    operator_key("operator", &op, pub, sizeof pub);
    int64_t build = register_build(bin, &op);
    /* the stored bytes change, the recorded SHA-256 does not */
    FILE *f = fopen(bin, "rb");
    cr_assert(f);
    static char bytes[64 << 20];
    size_t len = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    bytes[len / 2] ^= 0x40;
    cr_assert_eq(store_build_blob(cu_fx.store, build, bytes, len), 0);
    char ids[256];
    snprintf(ids, sizeof ids, "--test-build %lld --test NullR=2 --base '' --nodes 1500 --pairs-per-task 2 "
             "--max-pairs 4 --elo0 -500 --elo1 500", (long long)build);
    snprintf(cmd, sizeof cmd, "%s sprt new %%s", tune);
    int64_t run = sh_number(cmd, ids);
    setenv("XQF_CACHE", cache, 1);
    coordinator("30");
    trusting_worker("w1", pub);
    cu_sleep_ms(4000);
    unsetenv("XQF_CACHE");
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_eq(r.counts.pairs, 0, "a tampered build was played");
    char grep[1024];
    snprintf(grep, sizeof grep, "grep -q 'do not have its SHA-256' '%s'", cu_fx.logfile);
    cr_assert_eq(system(grep), 0, "no refusal in %s", cu_fx.logfile);
    StoreBuild b;
    cr_assert_eq(store_load_build(cu_fx.store, build, &b), 1);
    snprintf(grep, sizeof grep, "%s/%s", cache, b.sha256);
    cr_assert_neq(access(grep, F_OK), 0, "the tampered binary was installed");
}

/*
 * Only builds signed by a trusted operator key run: an unsigned build, one
 * signed by a key the worker does not trust, and one whose name was
 * changed after signing are each refused with the reason (the
 * coordinator's log shows the refusal), never installed nor played; a
 * worker without --trust refuses all of them.
 */
Test(cluster, untrusted_builds_are_refused)
{
    CU_REQUIRE_DB();
    char cache[512], tune[512], cmd[2048], pub[600], other_pub[600], bins[3][512];
    snprintf(cache, sizeof cache, "%s/cache", cu_fx.dir);
    snprintf(tune, sizeof tune, "%s/xqf-tune", XQF_BIN);
    SignKey op, other;
    operator_key("operator", &op, pub, sizeof pub);
    operator_key("other", &other, other_pub, sizeof other_pub);
    int64_t builds[3], runs[3];
    for (int i = 0; i < 3; i++) {
        snprintf(bins[i], sizeof bins[i], "%s/engine-%d", cu_fx.dir, i);
        cr_assert_eq(cu_engine_copy(bins[i], 10 + i), 0);
    }
    builds[0] = register_build(bins[0], NULL);
    builds[1] = register_build(bins[1], &other);
    builds[2] = register_build(bins[2], &op);
    StoreBuild b;
    cr_assert_eq(store_load_build(cu_fx.store, builds[2], &b), 1);
    cr_assert_eq(strlen(b.signature), SIGN_SIG_HEX);
    snprintf(b.build_id, sizeof b.build_id, "renamed-after-signing");   /* the signature covers the name */
    int64_t again;
    cr_assert_eq(store_add_build(cu_fx.store, &b, &again), 0);
    cr_assert_eq(again, builds[2]);
    setenv("XQF_CACHE", cache, 1);
    coordinator("30");
    trusting_worker("w1", pub);
    static const char *const WHY[3] = { "unsigned build", "not signed by a trusted operator key",
                                        "not signed by a trusted operator key" };
    for (int i = 0; i < 3; i++) {             /* one run at a time: the scheduler would favour one */
        char ids[256];
        snprintf(ids, sizeof ids, "--test-build %lld --test NullR=2 --base '' --nodes 1500 --pairs-per-task 2 "
                 "--max-pairs 4 --elo0 -500 --elo1 500", (long long)builds[i]);
        snprintf(cmd, sizeof cmd, "%s sprt new %%s", tune);
        runs[i] = sh_number(cmd, ids);
        cr_assert_eq(store_load_build(cu_fx.store, builds[i], &b), 1);
        snprintf(cmd, sizeof cmd, "grep -q 'handed back (refused): .*%.16s.*refused: %s' '%s'", b.sha256, WHY[i],
                 cu_fx.logfile);
        bool refused = false;
        for (int k = 0; k < 100 && !refused; k++, cu_sleep_ms(100))
            refused = system(cmd) == 0;
        cr_assert(refused, "no refusal '%s' of build %d reported to the coordinator in %s", WHY[i], i, cu_fx.logfile);
        snprintf(cmd, sizeof cmd, "XQF_DB='%s' %s stop %lld >/dev/null", cu_fx.db, tune, (long long)runs[i]);
        cr_assert_eq(system(cmd), 0);
    }
    unsetenv("XQF_CACHE");
    for (int i = 0; i < 3; i++) {
        StoreRun r;
        cr_assert_eq(store_load_run(cu_fx.store, runs[i], &r, false), 1);
        cr_assert_eq(r.counts.pairs, 0, "an untrusted build was played (run %d)", i);
        cr_assert_eq(store_load_build(cu_fx.store, builds[i], &b), 1);
        snprintf(cmd, sizeof cmd, "%s/%s", cache, b.sha256);
        cr_assert_neq(access(cmd, F_OK), 0, "untrusted build %d was installed", i);
    }
    /* a worker without --trust runs no build at all, and says why */
    cu_stop_all();
    char ids[256];
    snprintf(ids, sizeof ids, "--test-build %lld --test NullR=2 --base '' --nodes 1500 --pairs-per-task 2 "
             "--max-pairs 4 --elo0 -500 --elo1 500", (long long)builds[2]);
    snprintf(cmd, sizeof cmd, "%s sprt new %%s", tune);
    int64_t last = sh_number(cmd, ids);
    coordinator("30");
    worker("w2");
    snprintf(cmd, sizeof cmd, "grep -q 'handed back (refused): .*trusts no operator key' '%s'", cu_fx.logfile);
    bool refused = false;
    for (int k = 0; k < 100 && !refused; k++, cu_sleep_ms(100))
        refused = system(cmd) == 0;
    cr_assert(refused, "no refusal for want of --trust in %s", cu_fx.logfile);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, last, &r, false), 1);
    cr_assert_eq(r.counts.pairs, 0);
    sign_key_wipe(&op);
    sign_key_wipe(&other);
}

/* ---- pairs counted in order: a cut-short lease re-plays exactly what is missing ---- */

/* W/D/L and pentanomial of one pair of this opening as xqf-match plays it (same settings). */
static void pair_alone(const char *line, StoreCounts *c)
{
    char book[512], cmd[2048];
    snprintf(book, sizeof book, "%s/one.book", cu_fx.dir);
    FILE *f = fopen(book, "w");
    cr_assert(f);
    fprintf(f, "%s\n", line);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s/xqf-match' --engine name=test option.RookMg=700 --engine name=base "
             "--nodes 2000 --pairs 1 --book '%s' --concurrency 1 --quiet 2>/dev/null", XQF_BIN, book);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    char out[256];
    long long w = -1, d = -1, l = -1;
    while (fgets(out, sizeof out, p))
        sscanf(out, "W/D/L: %lld/%lld/%lld", &w, &d, &l);
    pclose(p);
    cr_assert(w >= 0, "xqf-match gave no W/D/L");
    c->wins += w, c->draws += d, c->losses += l;
}

/*
 * A worker with two game threads finishes pair 1 (two short games) while
 * pair 0 (a long game) still runs, and dies.  Counted out of order, the
 * re-issued lease would start after pair 0 and play pair 1 again.
 */
Test(cluster, a_pair_finished_early_is_not_played_twice)
{
    CU_REQUIRE_DB();
    static const char *const LINES[2] = {
        "r2akabr1/9/1cn1b1n2/p1C1p1p1p/9/9/P1P1P1PcP/6N2/4C4/RNBAKABR1 b - - 0 6",   /* a long game */
        "r1bakabnr/9/1c7/pC2C1p1p/P1p6/9/2n1c1P1P/9/9/RNBAKABNR w - - 0 7",          /* two short ones */
    };
    StoreSprtSpec spec = { .name = "in order", .test_params = "RookMg=700", .base_params = "",
                           .book_name = "two lines", .book = LINES, .book_lines = 2, .seed = 1,
                           .nodes = 2000, .margin_ms = 100, .pairs_per_task = 2, .max_pairs = 2,
                           .elo0 = -500, .elo1 = 500, .alpha = 0.05, .beta = 0.05 };
    int64_t run;
    cr_assert_eq(store_create_sprt(cu_fx.store, &spec, &run), 0);
    coordinator("3");
    pid_t w = cu_track(cu_worker(cu_fx.port, "two-threads", 2, cu_fx.logfile));
    cr_assert(cu_wait_pairs(cu_fx.store, run, 1, 120), "no pair counted (log: %s)", cu_fx.logfile);
    cu_kill9(w);
    cu_track(cu_worker(cu_fx.port, "one-thread", 1, cu_fx.logfile));
    finish_and_audit(run, 2, 120, "max pairs");
    StoreCounts want = { 0 };
    pair_alone(LINES[0], &want);
    pair_alone(LINES[1], &want);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert(r.counts.wins == want.wins && r.counts.draws == want.draws && r.counts.losses == want.losses,
              "the run counted %lld/%lld/%lld, its two openings give %lld/%lld/%lld (log: %s)",
              (long long)r.counts.wins, (long long)r.counts.draws, (long long)r.counts.losses,
              (long long)want.wins, (long long)want.draws, (long long)want.losses, cu_fx.logfile);
}

/* ---- bounded peers (docs/programs/xqf-coordinator.md) -------------------------- */

static void sql(const char *text);

/* Makes run play the build or net id as its column ("test_build", "test_net"): the coordinator hands it out. */
static void plays(int64_t run, const char *column, int64_t id)
{
    char q[256];
    snprintf(q, sizeof q, "UPDATE runs SET %s = %lld WHERE id = %lld", column, (long long)id, (long long)run);
    sql(q);
}

/* The test's coordinator with extra options (NULL-terminated). */
static pid_t coordinator_with(const char *lease, const char *const extra[])
{
    char bind[64];
    snprintf(bind, sizeof bind, "tcp://127.0.0.1:%d", cu_fx.port);
    const char *args[32] = { "--bind", bind, "--db", cu_fx.db_coordinator, "--lease", lease };
    int n = 6;
    for (int i = 0; extra[i] && n < 31; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    return cu_track(cu_spawn("xqf-coordinator", cu_fx.logfile, args));
}

/* Says hello as name with concurrency slots and expects the welcome. */
static void hello_as(void *sock, const char *name, uint64_t concurrency)
{
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_HELLO);
    snprintf(m.u.hello.name, sizeof m.u.hello.name, "%s", name);
    m.u.hello.cores = 1;
    m.u.hello.concurrency = concurrency;
    send_msg(sock, &m);
    reply(sock, &m);
    cr_assert_eq(m.type, XQF_MSG_WELCOME, "%s not welcomed: %s (log: %s)", name,
                 m.type == XQF_MSG_ERROR ? m.u.error.text : xqf_msg_type_name(m.type), cu_fx.logfile);
    xqf_msg_free(&m);
}

/* Asks for the bytes of the artifact sha of kind ("build", "net") from offset. */
static void artifact_request(void *sock, const char *kind, const char *sha, uint64_t offset)
{
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_BUILD_REQUEST);
    snprintf(m.u.build_request.sha256, sizeof m.u.build_request.sha256, "%s", sha);
    m.u.build_request.offset = offset;
    snprintf(m.u.build_request.kind, sizeof m.u.build_request.kind, "%s", kind);
    send_msg(sock, &m);
}

static void build_request(void *sock, const char *sha, uint64_t offset)
{
    artifact_request(sock, "build", sha, offset);
}

/* Waits until the log holds text (true) or timeout_s passes. */
static bool log_has(const char *text, double timeout_s)
{
    double end = cu_now() + timeout_s;
    do {
        FILE *f = fopen(cu_fx.logfile, "r");
        char line[2048];
        bool found = false;
        while (f && !found && fgets(line, sizeof line, f))
            found = strstr(line, text) != NULL;
        if (f)
            fclose(f);
        if (found)
            return true;
        cu_sleep_ms(100);
    } while (cu_now() < end);
    return false;
}

Test(cluster, bounded_peers)
{
    CU_REQUIRE_DB();
    char bin[512];
    snprintf(bin, sizeof bin, "%s/engine-big", cu_fx.dir);
    cr_assert_eq(cu_engine_copy(bin, 1200000), 0); /* three chunks */
    StoreBuild build;
    int64_t id = register_build(bin, NULL);
    cr_assert_eq(store_load_build(cu_fx.store, id, &build), 1);
    plays(cu_sprt(cu_fx.store, "NullR=2", 1, 20, 500, -500, 500), "test_build", id);
    const char *opts[] = { "--max-peers", "2", "--rate-limit", "100", NULL };
    coordinator_with("10", opts);
    void *ctx = zmq_ctx_new(), *a = dealer(ctx);
    XqfMsg m;

    /* hello before anything, a status request included */
    xqf_msg_init(&m, XQF_MSG_STATUS_REQUEST);
    m.u.status_request.max_runs = 5;
    send_msg(a, &m);
    expect_error(a, XQF_ERR_NEED_HELLO, "status_request before hello");
    hello_as(a, "one-slot", 1);

    /* leases: at most 2 x the concurrency announced */
    for (int slot = 0; slot < 3; slot++) {
        xqf_msg_init(&m, XQF_MSG_TASK_REQUEST);
        m.u.task_request.slot = (uint64_t)slot;
        send_msg(a, &m);
        reply(a, &m);
        cr_assert_eq(m.type, slot < 2 ? XQF_MSG_TASK : XQF_MSG_IDLE, "request %d: %s (log: %s)", slot,
                     xqf_msg_type_name(m.type), cu_fx.logfile);
        xqf_msg_free(&m);
    }
    cr_assert(log_has("holds 2 leases, its most (2 per slot)", 5), "log: %s", cu_fx.logfile);

    /* an active run's build, a chunk after the other (one that reads none: a_peer_that_reads_nothing_...) */
    build_request(a, build.sha256, 0);
    reply(a, &m);
    cr_assert_eq(m.type, XQF_MSG_BUILD_CHUNK, "log: %s", cu_fx.logfile);
    uint64_t next = m.u.build_chunk.data.len;
    xqf_msg_free(&m);
    build_request(a, build.sha256, next);
    reply(a, &m);
    cr_assert_eq(m.type, XQF_MSG_BUILD_CHUNK, "the next chunk, once the last arrived (log: %s)", cu_fx.logfile);
    cr_assert_eq(m.u.build_chunk.offset, next);
    xqf_msg_free(&m);

    /* the peer table: two workers at most, the third refused and logged */
    void *b = dealer(ctx), *c = dealer(ctx);
    hello_as(b, "two", 1);
    xqf_msg_init(&m, XQF_MSG_HELLO);
    snprintf(m.u.hello.name, sizeof m.u.hello.name, "three");
    send_msg(c, &m);
    expect_error(c, XQF_ERR_LIMIT, "a third worker beyond --max-peers 2");
    cr_assert(log_has("a new worker refused: 2 workers connected already", 5), "log: %s", cu_fx.logfile);

    /* a key over its rate: refused with an error each, counted; the others are served */
    int limited = 0, other = 0;
    xqf_msg_init(&m, XQF_MSG_HEARTBEAT);
    for (int i = 0; i < 300; i++)
        send_msg(c, &m);
    for (int i = 0; i < 300; i++) {
        XqfMsg r;
        reply(c, &r);
        if (r.type == XQF_MSG_ERROR && r.u.error.code == XQF_ERR_LIMIT)
            limited++;
        else
            other++;
        xqf_msg_free(&r);
    }
    cr_assert_geq(limited, 100, "%d of 300 messages over a rate of 100/s refused", limited);
    cr_assert(log_has("over the rate limit (100 messages/s)", 5), "log: %s", cu_fx.logfile);
    xqf_msg_init(&m, XQF_MSG_STATUS_REQUEST);
    send_msg(b, &m);
    reply(b, &m);
    cr_assert_eq(m.type, XQF_MSG_STATUS, "another peer is still served");
    xqf_msg_free(&m);
    /* status requests have a rate of their own (each runs the status queries): 20 at once, most refused (this key
       was answered a moment ago: all may be) */
    int statuses = 0, status_limited = 0;
    for (int i = 0; i < 20; i++) {
        xqf_msg_init(&m, XQF_MSG_STATUS_REQUEST);
        send_msg(b, &m);
        reply(b, &m);
        statuses += m.type == XQF_MSG_STATUS;
        status_limited += m.type == XQF_MSG_ERROR && m.u.error.code == XQF_ERR_LIMIT &&
                          strstr(m.u.error.text, "status_request: at most") != NULL;
        xqf_msg_free(&m);
    }
    cr_assert(statuses <= 10 && status_limited == 20 - statuses,
              "%d status answers, %d refused of 20 at once", statuses, status_limited);
    fprintf(stderr, "cluster: bounds: 300 frames at once against --rate-limit 100: %d refused, %d answered\n",
            limited, other);
    zmq_close(a);
    zmq_close(b);
    zmq_close(c);
    zmq_ctx_term(ctx);
}

/* ---- workers gone without a bye lock nobody out ------------------------------------ */

/* Says hello as name; the reply's type (XQF_MSG_NONE: none within 3 s), the error code in *code. */
static XqfMsgType hello_try(void *sock, const char *name, uint64_t *code)
{
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_HELLO);
    snprintf(m.u.hello.name, sizeof m.u.hello.name, "%s", name);
    m.u.hello.cores = 1;
    m.u.hello.concurrency = 1;
    send_msg(sock, &m);
    reply(sock, &m);
    XqfMsgType t = m.type;
    *code = t == XQF_MSG_ERROR ? m.u.error.code : 0;
    xqf_msg_free(&m);
    return t;
}

Test(cluster, gone_peers_make_room)
{
    CU_REQUIRE_DB();
    enum { N = 20 };
    const char *opts[] = { "--max-peers", "20", NULL };
    coordinator_with("2", opts);     /* heartbeats every 500 ms */
    void *ctx = zmq_ctx_new(), *w[N];
    char name[32];
    uint64_t code;
    for (int i = 0; i < N; i++) {
        w[i] = dealer(ctx);
        snprintf(name, sizeof name, "gone-%d", i);
        hello_as(w[i], name, 1);
    }
    /* a full table, everyone just heard: a stranger is refused ... */
    void *x = dealer(ctx);
    cr_assert_eq(hello_try(x, "stranger", &code), XQF_MSG_ERROR, "log: %s", cu_fx.logfile);
    cr_assert_eq(code, XQF_ERR_LIMIT);
    /* ... but a worker back on a new connection takes its own place at once */
    void *again = dealer(ctx);
    hello_as(again, "gone-0", 1);
    cr_assert(log_has("a new worker refused: 20 workers connected already", 5), "log: %s", cu_fx.logfile);

    /*
     * every worker vanishes without a bye (its socket closed: the coordinator sees the connection close);
     * N others come: all welcomed at once, before anyone could have missed two heartbeats
     * (PEER_QUIET_MIN_MS, 2.5 s), so not by evicting the silent (tests/test_peers.c has that rule)
     */
    for (int i = 0; i < N; i++)
        zmq_close(w[i]);
    zmq_close(again);
    zmq_close(x);
    double start = cu_now();
    void *n[N];
    bool in[N] = { false };
    int welcomed = 0;
    for (int i = 0; i < N; i++)
        n[i] = dealer(ctx);
    while (welcomed < N && cu_now() - start < 10) {
        for (int i = 0; i < N; i++) {
            if (in[i])
                continue;
            snprintf(name, sizeof name, "new-%d", i);
            XqfMsgType t = hello_try(n[i], name, &code);
            cr_assert(t == XQF_MSG_WELCOME || (t == XQF_MSG_ERROR && code == XQF_ERR_LIMIT),
                      "%s: %s (log: %s)", name, xqf_msg_type_name(t), cu_fx.logfile);
            in[i] = t == XQF_MSG_WELCOME;
            welcomed += in[i];
        }
        if (welcomed < N)
            cu_sleep_ms(250);
    }
    double took = cu_now() - start;
    cr_assert_eq(welcomed, N, "%d of %d newcomers welcomed within 10 s (log: %s)", welcomed, N, cu_fx.logfile);
    cr_assert(took < 2.4, "the newcomers were welcomed only after %.1f s: the closes went unseen (log: %s)", took,
              cu_fx.logfile);
    fprintf(stderr, "cluster: %d workers gone without a bye, %d newcomers all welcomed after %.1f s\n", N, N, took);
    for (int i = 0; i < N; i++)
        zmq_close(n[i]);
    zmq_ctx_term(ctx);
}

/* ---- one bad frame costs one message (docs/programs/xqf-coordinator.md) ------------ */

/* Runs SQL on the test's database with psql. */
static void sql(const char *text)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "psql -X -q '%s' -c \"%s\" >>'%s' 2>&1", cu_fx.db, text, cu_fx.logfile);
    cr_assert_eq(system(cmd), 0, "%s (log: %s)", cmd, cu_fx.logfile);
}

/* The next reply of type want (others skipped), within 3 s each. */
static void reply_of(void *sock, XqfMsgType want, XqfMsg *m)
{
    for (int i = 0; i < 8; i++) {
        reply(sock, m);
        if (m->type == want || m->type == XQF_MSG_NONE)
            return;
        xqf_msg_free(m);
    }
}

Test(cluster, one_bad_frame_costs_one_message)
{
    CU_REQUIRE_DB();
    char bin[512];
    snprintf(bin, sizeof bin, "%s/engine-small", cu_fx.dir);
    cr_assert_eq(cu_engine_copy(bin, 5), 0);
    StoreBuild build;
    cr_assert_eq(store_load_build(cu_fx.store, register_build(bin, NULL), &build), 1);
    cu_sprt(cu_fx.store, "NullR=2", 2, 20, 500, -500, 500);
    /* a statement that fails for one worker name only: the residual case no check can foresee */
    sql("CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS \\$\\$ BEGIN "
        "IF NEW.name = 'boom' THEN RAISE EXCEPTION 'boom'; END IF; RETURN NEW; END \\$\\$; "
        "CREATE TRIGGER boom BEFORE INSERT ON workers FOR EACH ROW EXECUTE FUNCTION boom()");
    pid_t coord = coordinator("30");
    void *ctx = zmq_ctx_new(), *a = dealer(ctx), *b = dealer(ctx), *c = dealer(ctx);
    hello_as(a, "a", 2);
    XqfMsg m, task;
    xqf_msg_init(&m, XQF_MSG_TASK_REQUEST);
    send_msg(a, &m);
    reply(a, &task);
    cr_assert_eq(task.type, XQF_MSG_TASK, "log: %s", cu_fx.logfile);

    /* one batch: the coordinator stopped while the frames arrive */
    kill(coord, SIGSTOP);
    xqf_msg_init(&m, XQF_MSG_RESULT);            /* consistent W/D/L and pentanomial, endings past any bigint sum */
    m.u.result.task_id = task.u.task.task_id;
    m.u.result.lease = task.u.task.lease;
    m.u.result.pairs = 1;
    m.u.result.wins = 1;
    m.u.result.losses = 1;
    m.u.result.penta.count = 5;
    m.u.result.penta.v[2] = 1;
    m.u.result.reasons.count = 2;
    m.u.result.reasons.v[0] = INT64_MAX;
    m.u.result.reasons.v[1] = 2;
    send_msg(a, &m);
    build_request(a, build.sha256, INT32_MAX);   /* past any build: int4 overflow in the chunk query before */
    xqf_msg_init(&m, XQF_MSG_HEARTBEAT);
    m.u.heartbeat.task_id = task.u.task.task_id;
    m.u.heartbeat.lease = task.u.task.lease;
    send_msg(a, &m);
    xqf_msg_init(&m, XQF_MSG_HELLO);
    snprintf(m.u.hello.name, sizeof m.u.hello.name, "boom");
    send_msg(b, &m);
    snprintf(m.u.hello.name, sizeof m.u.hello.name, "fine");
    send_msg(c, &m);
    cu_sleep_ms(300);
    kill(coord, SIGCONT);

    reply_of(a, XQF_MSG_ACK, &m);
    cr_assert_eq(m.type, XQF_MSG_ACK, "log: %s", cu_fx.logfile);
    cr_assert_str_eq(m.u.ack.status, "invalid", "the impossible result");
    xqf_msg_free(&m);
    expect_error(a, XQF_ERR_REFUSED, "a build offset past any build");
    reply(a, &m);
    cr_assert_eq(m.type, XQF_MSG_ACK, "log: %s", cu_fx.logfile);
    cr_assert_str_eq(m.u.ack.status, "ok", "the heartbeat of the same batch counts");
    xqf_msg_free(&m);
    reply(b, &m);
    cr_assert_eq(m.type, XQF_MSG_ERROR, "log: %s", cu_fx.logfile);
    cr_assert_eq(m.u.error.code, (uint64_t)XQF_ERR_REFUSED, "%s", m.u.error.text);
    cr_assert(strstr(m.u.error.text, "statement failed"), "%s", m.u.error.text);
    xqf_msg_free(&m);
    reply(c, &m);
    cr_assert_eq(m.type, XQF_MSG_WELCOME, "the rest of the batch stands (log: %s)", cu_fx.logfile);
    xqf_msg_free(&m);
    xqf_msg_free(&task);
    /* the checks kept both bad frames from SQL: the only statement errors are boom's (in its phase, then alone) */
    FILE *f = fopen(cu_fx.logfile, "r");
    char line[2048];
    int errors = 0;
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "database: xqf_")) {
            errors++;
            cr_expect(strstr(line, "boom"), "a statement error besides boom's: %s", line);
        }
    if (f)
        fclose(f);
    cr_assert_geq(errors, 1, "log: %s", cu_fx.logfile);
    cr_assert(log_has("a hello refused: its statement failed", 1), "log: %s", cu_fx.logfile);
    zmq_close(a);
    zmq_close(b);
    zmq_close(c);
    zmq_ctx_term(ctx);
}

/* ---- a stall does not expire the leases whose heartbeats were queued (docs/programs/xqf-coordinator.md) -- */

Test(cluster, a_stall_expires_no_heartbeated_lease)
{
    CU_REQUIRE_DB();
    /*
     * one task of two pairs that lasts several leases of 2 s (about 13 s:
     * the sanitized engine is three times slower, so a third of the nodes);
     * the coordinator hangs 5 s in a transaction
     */
#ifdef __SANITIZE_ADDRESS__
    int nodes = 7000;
#else
    int nodes = 20000;
#endif
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 2, 2, nodes, -500, 500);
    const char *env[] = { "XQF_TEST_STALL_MS=5000", NULL };
    cu_track(cu_coordinator_env(cu_fx.db_coordinator, cu_fx.port, "2", cu_fx.logfile, env));
    worker("w1");
    cr_assert(log_has("test hook: stalling 5000 ms", 30), "log: %s", cu_fx.logfile);
    cr_assert(log_has("the loop stalled for", 10), "log: %s", cu_fx.logfile);
    finish_and_audit(run, 2, 120, "max pairs");
    cr_assert(!log_has("expired leases re-queued", 0), "a lease expired after the stall (log: %s)", cu_fx.logfile);
}

/* ---- heartbeats: answered from memory, no database write (docs/cluster.md, "Leases and heartbeats") ------- */

/* The first value of a query on the test's database (psql), into out. */
static void sql_value(const char *query, char *out, size_t size)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "psql -X -q -A -t '%s' -c \"%s\" 2>>'%s'", cu_fx.db, query, cu_fx.logfile);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    out[0] = '\0';
    if (!fgets(out, (int)size, p))
        out[0] = '\0';
    out[strcspn(out, "\n")] = '\0';
    cr_assert_eq(pclose(p), 0, "%s (log: %s)", cmd, cu_fx.logfile);
}

/* Where task stands in the database: "state|lease_token|lease_deadline|last_error". */
static void task_row(uint64_t task, char *out, size_t size)
{
    char q[256];
    snprintf(q, sizeof q, "SELECT state, lease_token, lease_deadline, coalesce(last_error, '') FROM tasks WHERE id = %llu",
             (unsigned long long)task);
    sql_value(q, out, size);
}

/* Asks for a task on sock and expects one. */
static void take_task(void *sock, XqfMsg *task)
{
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_TASK_REQUEST);
    send_msg(sock, &m);
    reply_of(sock, XQF_MSG_TASK, task);
    cr_assert_eq(task->type, XQF_MSG_TASK, "no task (log: %s)", cu_fx.logfile);
}

/* A heartbeat of task on sock, answered want ("ok" or "stale"). */
static void beat(void *sock, const XqfMsg *task, const char *want)
{
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_HEARTBEAT);
    m.u.heartbeat.task_id = task->u.task.task_id;
    m.u.heartbeat.lease = task->u.task.lease;
    send_msg(sock, &m);
    reply_of(sock, XQF_MSG_ACK, &m);
    cr_assert_eq(m.type, XQF_MSG_ACK, "the heartbeat of task %llu unanswered (log: %s)",
                 (unsigned long long)task->u.task.task_id, cu_fx.logfile);
    cr_assert_str_eq(m.u.ack.status, want, "the heartbeat of task %llu (log: %s)",
                     (unsigned long long)task->u.task.task_id, cu_fx.logfile);
    cr_assert_eq(m.u.ack.stop, strcmp(want, "stale") == 0);
    xqf_msg_free(&m);
}

/* The sum of the counts of the coordinator's "N expired leases re-queued" lines. */
static long expired_logged(void)
{
    FILE *f = fopen(cu_fx.logfile, "r");
    char line[2048];
    long n = 0;
    while (f && fgets(line, sizeof line, f)) {
        const char *at = strstr(line, " expired leases re-queued");
        if (!at)
            continue;
        const char *p = at;
        while (p > line && p[-1] >= '0' && p[-1] <= '9')
            p--;
        n += strtol(p, NULL, 10);
    }
    if (f)
        fclose(f);
    return n;
}

/*
 * Two workers hold a task each under leases of 1 s: one heartbeats
 * every 200 ms for 3 s, the other falls silent.  The heartbeats write
 * nothing (the lease's deadline in the database is the one the claim
 * wrote), yet keep their lease; the silent one's lease is re-queued once,
 * and its late heartbeat is stale.
 */
Test(cluster, heartbeats_keep_leases_without_database_writes)
{
    CU_REQUIRE_DB();
    cu_sprt(cu_fx.store, "NullR=2", 2, 4, 100000, -500, 500);   /* two tasks, long enough never to be played here */
    const char *none[] = { NULL };
    coordinator_with("1", none);
    void *ctx = zmq_ctx_new(), *a = dealer(ctx), *b = dealer(ctx);
    hello_as(a, "beating", 1);
    hello_as(b, "silent", 1);
    XqfMsg ta, tb;
    take_task(a, &ta);
    take_task(b, &tb);
    char before[256], after[256], want[256];
    task_row(ta.u.task.task_id, before, sizeof before);
    snprintf(want, sizeof want, "leased|%llu|", (unsigned long long)ta.u.task.lease);
    cr_assert_eq(strncmp(before, want, strlen(want)), 0, "%s", before);
    double end = cu_now() + 3.0;
    int beats = 0;
    while (cu_now() < end) {
        beat(a, &ta, "ok");
        beats++;
        cu_sleep_ms(200);
    }
    cr_assert_geq(beats, 10);
    task_row(ta.u.task.task_id, after, sizeof after);
    cr_assert_str_eq(after, before, "%d heartbeats wrote to the task's row (log: %s)", beats, cu_fx.logfile);
    /* the silent worker's lease: re-queued (its deadline passed in memory), once */
    task_row(tb.u.task.task_id, after, sizeof after);
    cr_assert_str_eq(after, "queued|||lease expired", "(log: %s)", cu_fx.logfile);
    char v[64], q[256];
    snprintf(q, sizeof q, "SELECT count(*) FROM results WHERE task_id = %llu AND lease_token = %llu AND expired",
             (unsigned long long)tb.u.task.task_id, (unsigned long long)tb.u.task.lease);
    sql_value(q, v, sizeof v);
    cr_assert_str_eq(v, "1");
    cr_assert_eq(expired_logged(), 1, "one lease expired in all (log: %s)", cu_fx.logfile);
    beat(b, &tb, "stale");
    beat(a, &ta, "ok");
    xqf_msg_free(&ta);
    xqf_msg_free(&tb);
    zmq_close(a);
    zmq_close(b);
    zmq_ctx_term(ctx);
}

/*
 * A coordinator killed and started again (its leases' deadlines long past
 * in the database) gives every lease it finds one lease of grace: the
 * worker that heartbeats keeps its task, the silent one's expires only
 * after that lease.
 */
Test(cluster, a_restart_gives_every_lease_a_lease_of_grace)
{
    CU_REQUIRE_DB();
    cu_sprt(cu_fx.store, "NullR=2", 2, 4, 100000, -500, 500);
    const char *none[] = { NULL };
    pid_t coord = coordinator_with("2", none);
    void *ctx = zmq_ctx_new(), *a = dealer(ctx), *b = dealer(ctx);
    hello_as(a, "beating", 1);
    hello_as(b, "silent", 1);
    XqfMsg ta, tb;
    take_task(a, &ta);
    take_task(b, &tb);
    cu_kill9(coord);
    zmq_close(a);
    zmq_close(b);
    sql("UPDATE tasks SET lease_deadline = now() - interval '1 hour' WHERE state = 'leased'");
    coordinator_with("2", none);
    cr_assert(log_has("(2 leases held, each given a lease from now)", 20), "log: %s", cu_fx.logfile);
    double started = cu_now();
    a = dealer(ctx);
    hello_as(a, "beating", 1);
    char row[256], want[256];
    while (cu_now() < started + 1.2) {
        beat(a, &ta, "ok");
        cu_sleep_ms(300);
    }
    task_row(tb.u.task.task_id, row, sizeof row);
    snprintf(want, sizeof want, "leased|%llu|", (unsigned long long)tb.u.task.lease);
    cr_assert_eq(strncmp(row, want, strlen(want)), 0, "the silent lease expired within its grace: %s (log: %s)", row,
                 cu_fx.logfile);
    while (cu_now() < started + 4.5) {
        beat(a, &ta, "ok");
        cu_sleep_ms(300);
    }
    task_row(tb.u.task.task_id, row, sizeof row);
    cr_assert_str_eq(row, "queued|||lease expired", "(log: %s)", cu_fx.logfile);
    task_row(ta.u.task.task_id, row, sizeof row);
    snprintf(want, sizeof want, "leased|%llu|", (unsigned long long)ta.u.task.lease);
    cr_assert_eq(strncmp(row, want, strlen(want)), 0, "the heartbeaten lease was lost: %s (log: %s)", row, cu_fx.logfile);
    cr_assert_eq(expired_logged(), 1, "(log: %s)", cu_fx.logfile);
    xqf_msg_free(&ta);
    xqf_msg_free(&tb);
    zmq_close(a);
    zmq_ctx_term(ctx);
}

/* How many lines of the coordinator's log hold text. */
static int log_lines_with(const char *text) { return cu_log_lines(cu_fx.logfile, text); }

/*
 * The expiry's statement fails while it waits: another session holds the
 * silent worker's task row locked for 4 s and the coordinator's
 * statements time out after 300 ms.  The lease stays in memory through
 * the failed ticks (the failure logged once, not at each tick) and is
 * re-queued, once, when the row is free again.
 */
Test(cluster, an_expiry_that_times_out_loses_no_lease)
{
    CU_REQUIRE_DB();
    cu_sprt(cu_fx.store, "NullR=2", 2, 4, 100000, -500, 500);
    char bind[64], db[1024];
    snprintf(bind, sizeof bind, "tcp://127.0.0.1:%d", cu_fx.port);
    snprintf(db, sizeof db, "%s options='-c statement_timeout=300'", cu_fx.db_coordinator);
    const char *args[] = { "--bind", bind, "--db", db, "--lease", "1", NULL };
    cu_track(cu_spawn("xqf-coordinator", cu_fx.logfile, args));
    void *ctx = zmq_ctx_new(), *b = dealer(ctx);
    hello_as(b, "silent", 1);
    XqfMsg tb;
    take_task(b, &tb);
    char cmd[2048], row[256];
    snprintf(cmd, sizeof cmd,
             "psql -X -q '%s' -c 'BEGIN' -c 'SELECT 1 FROM tasks WHERE id = %llu FOR UPDATE' -c 'SELECT pg_sleep(4)' "
             "-c 'COMMIT' >>'%s' 2>&1 &",
             cu_fx.db, (unsigned long long)tb.u.task.task_id, cu_fx.logfile);
    double locked = cu_now();
    cr_assert_eq(system(cmd), 0);
    cr_assert(log_has("their expiry failed", 4), "the lease's expiry never waited on the lock (log: %s)", cu_fx.logfile);
    task_row(tb.u.task.task_id, row, sizeof row);
    cr_assert_eq(strncmp(row, "leased|", 7), 0, "%s (log: %s)", row, cu_fx.logfile);
    cr_assert(log_has("their expiry works again", 10), "log: %s", cu_fx.logfile);
    cr_assert_gt(cu_now() - locked, 3.0, "the expiry went through the lock");
    task_row(tb.u.task.task_id, row, sizeof row);
    cr_assert_str_eq(row, "queued|||lease expired", "(log: %s)", cu_fx.logfile);
    cr_assert_eq(expired_logged(), 1, "(log: %s)", cu_fx.logfile);
    cr_assert_geq(log_lines_with("canceling statement due to statement timeout"), 2,
                  "the expiry was tried at more than one tick (log: %s)", cu_fx.logfile);
    cr_assert_eq(log_lines_with("their expiry failed"), 1, "the failure logged once (log: %s)", cu_fx.logfile);
    xqf_msg_free(&tb);
    zmq_close(b);
    zmq_ctx_term(ctx);
}

/* After a burst of messages the idle coordinator gives its heap's free pages back, once (docs/measurements.md). */
Test(cluster, an_idle_coordinator_trims_its_heap_once_after_a_burst)
{
    CU_REQUIRE_DB();
    const char *none[] = { NULL };
    coordinator_with("60", none);
    void *ctx = zmq_ctx_new(), *a = dealer(ctx);
    hello_as(a, "bursty", 1);
    cr_assert(log_has("the heap trimmed", 6), "not trimmed after 2 s idle (log: %s)", cu_fx.logfile);
    cu_sleep_ms(2500);
    cr_assert_eq(log_lines_with("the heap trimmed"), 1, "trimmed again with no message since (log: %s)", cu_fx.logfile);
    zmq_close(a);
    zmq_ctx_term(ctx);
}

/*
 * A fleet that leaves while the coordinator stays busy (in a storm the next
 * one is already there) is trimmed for without waiting for an idle moment:
 * 300 workers say hello and close their connections while another keeps
 * the loop busy (a heartbeat every 50 ms, never 2 s apart).
 */
Test(cluster, a_busy_coordinator_trims_its_heap_once_a_fleet_left)
{
    CU_REQUIRE_DB();
    enum { N = 300 };
    const char *none[] = { NULL };
    coordinator_with("60", none);
    void *ctx = zmq_ctx_new(), *keeper = dealer(ctx), *w[N];
    hello_as(keeper, "keeper", 1);
    char name[32];
    for (int i = 0; i < N; i++) {
        w[i] = dealer(ctx);
        snprintf(name, sizeof name, "leaving-%d", i);
        hello_as(w[i], name, 1);
    }
    for (int i = 0; i < N; i++)
        zmq_close(w[i]);
    XqfMsg m, r;
    xqf_msg_init(&m, XQF_MSG_HEARTBEAT);
    bool trimmed = false;
    for (double end = cu_now() + 10; !trimmed && cu_now() < end;) {
        send_msg(keeper, &m);
        reply(keeper, &r);
        xqf_msg_free(&r);
        cu_sleep_ms(50);
        trimmed = log_lines_with("workers gone, the heap trimmed") == 1;
    }
    cr_assert(trimmed, "not trimmed while busy after %d workers left (log: %s)", N, cu_fx.logfile);
    zmq_close(keeper);
    zmq_ctx_term(ctx);
}

/* ---- quarantine: a task that can never be played is set aside (docs/programs/xqf-coordinator.md) ---------- */

Test(cluster, an_unplayable_task_is_quarantined)
{
    CU_REQUIRE_DB();
    /* a run made through the store with a book line no worker can play (xqf-tune checks its books) */
    const char *first[1];
    cr_assert_eq(cu_book(first, 1), 1);
    char bad[512];
    snprintf(bad, sizeof bad, "%.*s moves a0a9", (int)strcspn(first[0], "#"), first[0]);
    const char *book[1] = { bad };
    StoreSprtSpec spec = { .name = "unplayable", .test_params = "NullR=2", .base_params = "",
                           .book_name = "bad.book", .book = book, .book_lines = 1, .seed = 1, .nodes = 500,
                           .margin_ms = 100, .pairs_per_task = 1, .max_pairs = 2, .elo0 = -500, .elo1 = 500,
                           .alpha = 0.05, .beta = 0.05 };
    int64_t run;
    cr_assert_eq(store_create_sprt(cu_fx.store, &spec, &run), 0);
    const char *opts[] = { "--quarantine-after", "2", NULL };
    coordinator_with("10", opts);
    worker("w1");
    worker("w2");
    cr_assert(log_has("quarantined: refused by 2 keys", 60), "log: %s", cu_fx.logfile);
    StoreRun r;
    double end = cu_now() + 60;
    do {
        cu_sleep_ms(200);
        cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    } while (r.quarantined < 2 && cu_now() < end);
    cr_assert_eq(r.quarantined, 2, "both tasks set aside (log: %s)", cu_fx.logfile);
    cr_assert_eq(r.counts.pairs, 0);
    /* shown by xqf-tune show, with the workers' reasons */
    char cmd[1024], out[8192];
    snprintf(cmd, sizeof cmd, "XQF_DB='%s' '%s/xqf-tune' show %lld 2>>'%s'", cu_fx.db, XQF_BIN, (long long)run, cu_fx.logfile);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    cr_assert_eq(pclose(p), 0, "%s", out);
    cr_assert(strstr(out, "Quarantined: 2 tasks"), "%s", out);
    cr_assert(strstr(out, "refused 2 times: "), "%s", out);
    cr_assert(strstr(out, "a0a9"), "the reason names the move: %s", out);
    fprintf(stderr, "%s", strstr(out, "Quarantined"));
}

/*
 * Nets are served as builds are, by the request's kind (protocol 8): a
 * net's chunk says kind "net" and carries its name and signature; the
 * same SHA-256 asked for as a build is not found, and a kind that is
 * neither is refused.
 */
Test(cluster, nets_are_served_by_kind)
{
    CU_REQUIRE_DB();
    static uint8_t bytes[100000];
    for (size_t i = 0; i < sizeof bytes; i++)
        bytes[i] = (uint8_t)(i * 7 + 3);
    StoreNet net = { .name = "served.nnue", .description = "bytes", .added_by = "test" };
    memset(net.sha256, 'a', 64);            /* the store keeps what it is given; workers check the hash */
    memset(net.signature, 'b', SIGN_SIG_HEX);
    int64_t id;
    cr_assert_eq(store_add_net(cu_fx.store, &net, bytes, sizeof bytes, &id), 0);
    plays(cu_sprt(cu_fx.store, "NullR=2", 1, 20, 500, -500, 500), "test_net", id);
    const char *none[] = { NULL };
    coordinator_with("10", none);
    void *ctx = zmq_ctx_new();
    XqfMsg m;
    const struct {
        const char *kind;
        bool served;
    } cases[] = { { "bogus", false }, { "build", false }, { "net", true } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        void *sock = dealer(ctx);            /* a connection each: no chunk in flight before */
        char name[32];
        snprintf(name, sizeof name, "asker-%zu", i);
        hello_as(sock, name, 1);
        artifact_request(sock, cases[i].kind, net.sha256, 0);
        if (!cases[i].served) {
            expect_error(sock, XQF_ERR_REFUSED, cases[i].kind);
        } else {
            reply(sock, &m);
            cr_assert_eq(m.type, XQF_MSG_BUILD_CHUNK, "%s (log: %s)", xqf_msg_type_name(m.type), cu_fx.logfile);
            const XqfMsg_build_chunk *c = &m.u.build_chunk;
            cr_assert_str_eq(c->kind, "net");
            cr_assert_str_eq(c->name, "served.nnue");
            cr_assert_str_eq(c->signature, net.signature);
            cr_assert_eq(c->total, sizeof bytes);
            cr_assert_eq(c->data.len, sizeof bytes);
            cr_assert(memcmp(c->data.data, bytes, sizeof bytes) == 0);
            xqf_msg_free(&m);
        }
        zmq_close(sock);
    }
    zmq_ctx_term(ctx);
}

/* ---- what a key may make the coordinator send, store and log --------------------- */

/*
 * A peer that asks for a build's chunks one offset after the other and
 * reads none (its receive queue one message, its kernel buffer the least
 * Linux gives) is sent a few: the next goes out only once its TCP
 * acknowledged the last (server.c, chunk_allowed), the others are
 * refused "retry later".  Once it reads, it is served again.  Before,
 * asking for the next offset was taken for proof that the last arrived:
 * every chunk asked for went into the coordinator's queue for the peer.
 */
Test(cluster, a_peer_that_reads_nothing_is_sent_few_chunks)
{
    CU_REQUIRE_DB();
    enum { CHUNKS = 16 };
    char bin[512];
    snprintf(bin, sizeof bin, "%s/engine-huge", cu_fx.dir);
    cr_assert_eq(cu_engine_copy(bin, CHUNKS * XQF_CHUNK_MAX), 0);
    StoreBuild build;
    int64_t id = register_build(bin, NULL);
    cr_assert_eq(store_load_build(cu_fx.store, id, &build), 1);
    plays(cu_sprt(cu_fx.store, "NullR=2", 1, 20, 500, -500, 500), "test_build", id);
    const char *none[] = { NULL };
    coordinator_with("10", none);
    void *ctx = zmq_ctx_new(), *a = zmq_socket(ctx, ZMQ_DEALER);
    int one = 1, least = 1024, linger = 0;
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", cu_fx.port);
    cr_assert(zmq_setsockopt(a, ZMQ_RCVHWM, &one, sizeof one) == 0 &&
              zmq_setsockopt(a, ZMQ_RCVBUF, &least, sizeof least) == 0 &&
              zmq_setsockopt(a, ZMQ_LINGER, &linger, sizeof linger) == 0 && zmq_connect(a, ep) == 0);
    hello_as(a, "reads-nothing", 1);
    for (int k = 0; k < CHUNKS; k++) {
        build_request(a, build.sha256, (uint64_t)k * XQF_CHUNK_MAX);
        cu_sleep_ms(100);
    }
    int chunks = 0, later = 0;
    XqfMsg m;
    for (int k = 0; k < CHUNKS; k++) {
        reply(a, &m);
        chunks += m.type == XQF_MSG_BUILD_CHUNK;
        later += m.type == XQF_MSG_ERROR && m.u.error.code == XQF_ERR_LIMIT &&
                 strstr(m.u.error.text, "has not reached you yet") != NULL;
        xqf_msg_free(&m);
    }
    cr_assert(chunks >= 1 && chunks <= 5 && later == CHUNKS - chunks,
              "%d chunks sent, %d refused, of %d asked for without reading (log: %s)", chunks, later, CHUNKS,
              cu_fx.logfile);
    build_request(a, build.sha256, 0);
    reply(a, &m);
    cr_assert_eq(m.type, XQF_MSG_BUILD_CHUNK, "read: served again (%s)",
                 m.type == XQF_MSG_ERROR ? m.u.error.text : xqf_msg_type_name(m.type));
    xqf_msg_free(&m);
    fprintf(stderr, "cluster: a peer that reads nothing: %d of %d chunks asked for sent\n", chunks, CHUNKS);
    zmq_close(a);
    zmq_ctx_term(ctx);
}

/*
 * Builds and nets are served only while a run hands them out: not one no
 * run plays, not an unapproved test's (pending), nor a finished run's
 * with no replay audit open; an active run's are.
 */
Test(cluster, builds_are_served_only_while_a_run_hands_them_out)
{
    CU_REQUIRE_DB();
    char bin[512], q[256];
    snprintf(bin, sizeof bin, "%s/engine-due", cu_fx.dir);
    cr_assert_eq(cu_engine_copy(bin, 100000), 0);
    StoreBuild build;
    int64_t id = register_build(bin, NULL), run = cu_sprt(cu_fx.store, "NullR=2", 1, 20, 500, -500, 500);
    cr_assert_eq(store_load_build(cu_fx.store, id, &build), 1);
    const char *none[] = { NULL };
    coordinator_with("10", none);
    void *ctx = zmq_ctx_new(), *a = dealer(ctx);
    hello_as(a, "asker", 1);
    const struct {
        const char *state;           /* NULL: no run plays it */
        bool served;
    } cases[] = { { NULL, false }, { "pending", false }, { "active", true }, { "finished", false } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].state) {
            snprintf(q, sizeof q, "UPDATE runs SET test_build = %lld, state = '%s' WHERE id = %lld", (long long)id,
                     cases[i].state, (long long)run);
            sql(q);
        }
        build_request(a, build.sha256, 0);
        XqfMsg m;
        reply(a, &m);
        cr_assert_eq(m.type, cases[i].served ? XQF_MSG_BUILD_CHUNK : XQF_MSG_ERROR, "run %s: %s (log: %s)",
                     cases[i].state ? cases[i].state : "none",
                     m.type == XQF_MSG_ERROR ? m.u.error.text : xqf_msg_type_name(m.type), cu_fx.logfile);
        cr_assert(cases[i].served || m.u.error.code == XQF_ERR_REFUSED, "%s", m.u.error.text);
        xqf_msg_free(&m);
    }
    zmq_close(a);
    zmq_ctx_term(ctx);
}

/*
 * Bench reports of SHA-256s no run hands out write nothing and are
 * logged once a minute, whatever their number; a refusal of an active
 * run's build that changes at every report stays one row and a line or
 * two.  Before, each report was a row of worker_builds and a log line.
 */
Test(cluster, bench_reports_are_bounded)
{
    CU_REQUIRE_DB();
    enum { RANDOM = 300, AGAIN = 100 };
    char bin[512], got[64];
    snprintf(bin, sizeof bin, "%s/engine-benched", cu_fx.dir);
    cr_assert_eq(cu_engine_copy(bin, 100000), 0);
    StoreBuild build;
    int64_t id = register_build(bin, NULL);
    cr_assert_eq(store_load_build(cu_fx.store, id, &build), 1);
    plays(cu_sprt(cu_fx.store, "NullR=2", 1, 20, 500, -500, 500), "test_build", id);
    const char *none[] = { NULL };
    coordinator_with("10", none);
    void *ctx = zmq_ctx_new(), *a = dealer(ctx);
    hello_as(a, "bencher", 1);
    XqfMsg m;
    for (int i = 0; i < RANDOM + AGAIN; i++) {
        xqf_msg_init(&m, XQF_MSG_BENCH);
        if (i < RANDOM)
            snprintf(m.u.bench.sha256, sizeof m.u.bench.sha256, "%016x%016x%016x%016x", i, 7 * i + 1, 13 * i + 2,
                     31 * i + 3);
        else
            snprintf(m.u.bench.sha256, sizeof m.u.bench.sha256, "%s", build.sha256);
        m.u.bench.nodes = 1;
        m.u.bench.nps = 1;
        snprintf(m.u.bench.refused, sizeof m.u.bench.refused, "reason %d", i);
        send_msg(a, &m);
    }
    xqf_msg_init(&m, XQF_MSG_STATUS_REQUEST);    /* answered after every report before it */
    send_msg(a, &m);
    reply_of(a, XQF_MSG_STATUS, &m);
    xqf_msg_free(&m);
    sql_value("SELECT count(*) FROM worker_builds", got, sizeof got);
    cr_assert_str_eq(got, "1", "rows of worker_builds after %d reports of random SHA-256s and %d of one build (log: %s)",
                     RANDOM, AGAIN, cu_fx.logfile);
    int ignored = log_lines_with("ignored: no run hands it out"), refusals = log_lines_with("refuses build");
    cr_assert(ignored >= 1 && ignored <= 2 && refusals >= 1 && refusals <= 2,
              "%d lines for %d reports no run wants, %d for %d refusals (log: %s)", ignored, RANDOM, refusals, AGAIN,
              cu_fx.logfile);
    zmq_close(a);
    zmq_ctx_term(ctx);
}

/*
 * Status requests have a budget per key besides the one shared by all:
 * a key asking twenty times at once takes one answer, and another key
 * asking right behind it is answered.  Before, the first key took the
 * shared budget's five and the other was refused.
 */
Test(cluster, a_key_cannot_spend_the_status_budget_of_all)
{
    CU_REQUIRE_DB();
    const char *none[] = { NULL };
    coordinator_with("10", none);
    void *ctx = zmq_ctx_new(), *greedy = dealer(ctx), *quiet = dealer(ctx);
    hello_as(greedy, "greedy", 1);
    hello_as(quiet, "quiet", 1);
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_STATUS_REQUEST);
    for (int i = 0; i < 20; i++)
        send_msg(greedy, &m);
    send_msg(quiet, &m);
    int answered = 0;
    for (int i = 0; i < 20; i++) {
        reply(greedy, &m);
        answered += m.type == XQF_MSG_STATUS;
        xqf_msg_free(&m);
    }
    reply(quiet, &m);
    cr_assert_eq(m.type, XQF_MSG_STATUS, "the other key: %s (greedy answered %d of 20)",
                 m.type == XQF_MSG_ERROR ? m.u.error.text : xqf_msg_type_name(m.type), answered);
    xqf_msg_free(&m);
    cr_assert(answered >= 1 && answered <= 2, "greedy answered %d of 20 at once", answered);
    zmq_close(greedy);
    zmq_close(quiet);
    zmq_ctx_term(ctx);
}

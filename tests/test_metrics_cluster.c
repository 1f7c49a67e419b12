/*
 * The coordinator's /metrics in a real cluster (docs/cluster.md,
 * "Monitoring"): a coordinator with --metrics and two workers play a short
 * run; /metrics, scraped over a plain socket, is parsed and its counts
 * checked against the database (results, games, leases, runs by state).
 * Builds sent to a worker are counted in chunks and bytes.  Unknown paths
 * are answered 404, other methods 405, and a bad --metrics is refused at
 * the start with its reason.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "cluster_util.h"
#include "keys.h"

TestSuite(metrics_cluster, .init = cu_fixture_init, .fini = cu_fixture_fini, .timeout = 150);

/* The coordinator with --metrics 127.0.0.1:port (extra: one more option and its value, or NULL). */
static pid_t coordinator(int metrics_port, const char *metrics_text)
{
    char bind[64], metrics[64];
    snprintf(bind, sizeof bind, "tcp://127.0.0.1:%d", cu_fx.port);
    snprintf(metrics, sizeof metrics, "127.0.0.1:%d", metrics_port);
    const char *args[] = { "--bind", bind, "--db", cu_fx.db_coordinator, "--lease", "10", "--metrics",
                           metrics_text ? metrics_text : metrics, NULL };
    return cu_spawn("xqf-coordinator", cu_fx.logfile, args);
}

/* The first value of a query on the test's database (psql), as a number. */
static double db_value(const char *query)
{
    char cmd[1024], out[256];
    snprintf(cmd, sizeof cmd, "psql -X -q -A -t '%s' -c \"%s\"", cu_fx.db, query);
    cr_assert_eq(cu_sh(out, sizeof out, cmd, cu_fx.logfile), 0, "psql failed (log: %s)", cu_fx.logfile);
    return strtod(out, NULL);
}

static char page[1 << 20];

/* Scrapes until it answers 200 (the coordinator starting), for seconds at most. */
static void scrape(int port, double seconds)
{
    double until = cu_now() + seconds;
    int status;
    while ((status = cu_http(port, "GET", "/metrics", page, sizeof page)) != 200 && cu_now() < until)
        cu_sleep_ms(100);
    cr_assert_eq(status, 200, "GET /metrics: %.200s (log: %s)", page, cu_fx.logfile);
}

Test(metrics_cluster, counts_agree_with_the_database)
{
    CU_REQUIRE_DB();
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 4, 12, 500, -500, 500);
    int64_t finished = cu_sprt(cu_fx.store, "NullR=3", 4, 8, 500, -500, 500);
    cr_assert(run > 0 && finished > 0);
    cr_assert_eq(store_finish_run(cu_fx.store, finished, "stopped", "stopped by the test"), 0);
    int port = cu_free_port();
    cu_track(coordinator(port, NULL));
    scrape(port, 20);
    cr_assert(strstr(page, "Content-Type: text/plain; version=0.0.4"), "%.400s", page);
    cr_assert_eq(cu_sample(page, "xqf_results_total"), 0, "%s", page);
    cr_assert_eq(cu_sample(page, "xqf_runs{state=\"active\"}"), 1, "%s", page);
    cr_assert_eq(cu_sample(page, "xqf_runs{state=\"stopped\"}"), 1);
    cr_assert_eq(cu_sample(page, "xqf_tasks{state=\"queued\"}"),
                 db_value("SELECT count(*) FROM tasks WHERE state = 'queued'"), "%s", page);
    cu_track(cu_worker(cu_fx.port, "m1", 1, cu_fx.logfile));
    cu_track(cu_worker(cu_fx.port, "m2", 1, cu_fx.logfile));
    StoreRun r;
    cr_assert(cu_wait_finished(cu_fx.store, run, 90, &r), "run did not finish (log: %s)", cu_fx.logfile);
    /* the counters move just after each commit: wait until the last result is counted */
    double results = db_value("SELECT sum(reports) FROM results");
    double until = cu_now() + 10;
    do
        scrape(port, 5);
    while (cu_sample(page, "xqf_results_total") < results && cu_now() < until && (cu_sleep_ms(200), 1));
    cr_assert_gt(results, 0);
    cr_assert_eq(cu_sample(page, "xqf_results_total"), results, "%s", page);
    cr_assert_eq(cu_sample(page, "xqf_games_total"), db_value("SELECT sum(wins + draws + losses) FROM runs"),
                 "%s", page);
    cr_assert_eq(cu_sample(page, "xqf_games_total"), db_value("SELECT count(*) FROM games"), "records stored");
    cr_assert_eq(cu_sample(page, "xqf_games_total"), 24, "12 pairs, 24 games");
    cr_assert_eq(cu_sample(page, "xqf_leases_given_total"), db_value("SELECT sum(attempts) FROM tasks"), "%s", page);
    cr_assert_geq(cu_sample(page, "xqf_leases_given_total"), 3);
    cr_assert_eq(cu_sample(page, "xqf_results_rejected_total{status=\"invalid\"}"), 0);
    const char *states[] = { "active", "finished", "stopped", "paused" };
    for (size_t i = 0; i < sizeof states / sizeof *states; i++) {
        char name[64], query[128];
        snprintf(name, sizeof name, "xqf_runs{state=\"%s\"}", states[i]);
        snprintf(query, sizeof query, "SELECT count(*) FROM runs WHERE state = '%s'", states[i]);
        cr_assert_eq(cu_sample(page, name), db_value(query), "%s: %s", name, page);
    }
    cr_assert_eq(cu_sample(page, "xqf_runs{state=\"finished\"}"), 1);
    cr_assert_eq(cu_sample(page, "xqf_tasks{state=\"queued\"}"), 0);
    /* the gauges are published every second: two workers live after the run */
    cu_sleep_ms(1200);
    scrape(port, 5);
    cr_assert_eq(cu_sample(page, "xqf_workers_connected"), 2, "%s", page);
    cr_assert_eq(cu_sample(page, "xqf_database_connected"), 1);
    cr_assert_eq(cu_sample(page, "xqf_metrics_database_up"), 1);
    /* the statements' latency: the reports' statement timed, +Inf its count */
    const char *report = strstr(page, "xqf_db_statement_seconds_count{statement=\"xqf_REPORT\"}");
    cr_assert(report, "no histogram of the reports' statement: %s", page);
    double count = strtod(strchr(report, ' ') + 1, NULL);
    cr_assert_geq(count, 1);
    cr_assert_eq(cu_sample(page, "xqf_db_statement_seconds_bucket{statement=\"xqf_REPORT\",le=\"+Inf\"}"),
                 count);
    cr_assert_gt(cu_sample(page, "xqf_loop_batch_seconds_count"), 0);
}

Test(metrics_cluster, other_paths_and_methods_are_refused)
{
    CU_REQUIRE_DB();
    int port = cu_free_port();
    cu_track(coordinator(port, NULL));
    scrape(port, 20);
    cr_assert_eq(cu_http(port, "GET", "/", page, sizeof page), 404, "%s", page);
    cr_assert_eq(cu_http(port, "GET", "/metrics/x", page, sizeof page), 404, "%s", page);
    cr_assert_eq(cu_http(port, "POST", "/metrics", page, sizeof page), 405, "%s", page);
    cr_assert(strstr(page, "Allow: GET, HEAD"), "%s", page);
    cr_assert_eq(cu_http(port, "DELETE", "/metrics", page, sizeof page), 405, "%s", page);
    cr_assert_eq(cu_http(port, "HEAD", "/metrics", page, sizeof page), 200, "%s", page);
}

/* Runs the coordinator with --metrics text until it exits (10 s at most); its exit status, -1 if it did not exit. */
static int refused_start(const char *text)
{
    pid_t pid = cu_track(coordinator(0, text));
    double until = cu_now() + 10;
    int status;
    while (cu_now() < until) {
        if (cu_ended(pid, &status))
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        cu_sleep_ms(50);
    }
    return -1;
}

Test(metrics_cluster, a_bad_address_is_refused_at_the_start)
{
    CU_REQUIRE_DB();
    cr_assert_eq(refused_start("example.org:9711"), 2, "log: %s", cu_fx.logfile);
    cr_assert_eq(refused_start("127.0.0.1:0"), 2, "log: %s", cu_fx.logfile);
    cr_assert_geq(cu_log_lines(cu_fx.logfile, "--metrics: 'example.org' is not an IPv4 address"), 1,
                  "log: %s", cu_fx.logfile);
    /* a port already taken: the start fails, said in the log */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    cr_assert(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && listen(fd, 1) == 0 &&
              getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    char taken[64];
    snprintf(taken, sizeof taken, "127.0.0.1:%d", ntohs(a.sin_port));
    cr_assert_eq(refused_start(taken), 1, "log: %s", cu_fx.logfile);
    close(fd);
    cr_assert_geq(cu_log_lines(cu_fx.logfile, "--metrics: cannot serve on"), 1, "log: %s", cu_fx.logfile);
}

/* A copy of xqf-engine registered as a build signed by op (as test_cluster's register_build); its size into *size. */
static int64_t signed_build(const char *name, int n, const SignKey *op, int64_t *size)
{
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/%s", cu_fx.dir, name);
    cr_assert_eq(cu_engine_copy(path, n), 0);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    *size = (int64_t)st.st_size;
    StoreBuild b = { 0 };
    cr_assert_eq(cu_sha256(path, b.sha256), 0);
    snprintf(b.build_id, sizeof b.build_id, "test-%.12s", b.sha256);
    snprintf(b.path, sizeof b.path, "%s", path);
    b.bench_nodes = (int64_t)bench_signature();
    cr_assert_eq(sign_build(op, b.sha256, b.build_id, b.signature, err, sizeof err), 0, "%s", err);
    int64_t id = cu_build_add(cu_fx.store, &b);
    cr_assert_gt(id, 0);
    return id;
}

Test(metrics_cluster, builds_sent_are_counted_in_chunks_and_bytes)
{
    CU_REQUIRE_DB();
    char key[512], pub[600], err[256], out[256], cmd[1024];
    SignKey op;
    snprintf(key, sizeof key, "%s/operator", cu_fx.dir);
    cr_assert_eq(sign_key_generate(key, &op, err, sizeof err), 0, "%s", err);
    snprintf(pub, sizeof pub, "%s.pub", key);
    int64_t test_size, base_size;
    int64_t test = signed_build("engine-test", 1, &op, &test_size);
    int64_t base = signed_build("engine-base", 2, &op, &base_size);
    snprintf(cmd, sizeof cmd, "XQF_DB='%s' '%s/xqf-tune' sprt new --test-build %lld --base-build %lld --test NullR=2 "
             "--nodes 1500 --pairs-per-task 2 --max-pairs 4 --elo0 -500 --elo1 500 "
             "| awk '/^[0-9]+$/ { v = $1 } END { print v }'",
             cu_fx.db, XQF_BIN, (long long)test, (long long)base);
    cr_assert_eq(cu_sh(out, sizeof out, cmd, cu_fx.logfile), 0, "log: %s", cu_fx.logfile);
    int64_t run = strtoll(out, NULL, 10);
    cr_assert_gt(run, 0, "%s", out);
    char cache[512];
    snprintf(cache, sizeof cache, "%s/cache", cu_fx.dir);
    setenv("XQF_CACHE", cache, 1);
    int port = cu_free_port();
    cu_track(coordinator(port, NULL));
    const char *extra[] = { "--trust", pub, NULL };
    cu_track(cu_worker_args(cu_fx.port, "fetcher", 2, cu_fx.logfile, extra));
    StoreRun r;
    cr_assert(cu_wait_finished(cu_fx.store, run, 120, &r), "run did not finish (log: %s)", cu_fx.logfile);
    unsetenv("XQF_CACHE");
    scrape(port, 5);
    /* each binary fetched once, in chunks of at most XQF_CHUNK_MAX (512 KiB) */
    int64_t chunks = (test_size + XQF_CHUNK_MAX - 1) / XQF_CHUNK_MAX + (base_size + XQF_CHUNK_MAX - 1) / XQF_CHUNK_MAX;
    cr_assert_geq(cu_sample(page, "xqf_artifact_bytes_total{kind=\"build\"}"), (double)(test_size + base_size), "%s",
                  page);
    cr_assert_geq(cu_sample(page, "xqf_artifact_chunks_total{kind=\"build\"}"), (double)chunks, "%s", page);
    cr_assert_eq(cu_sample(page, "xqf_artifact_bytes_total{kind=\"net\"}"), 0);
    cr_assert_eq(cu_sample(page, "xqf_games_total"), 8, "4 pairs: %s", page);
}

/*
 * metrics.c - the coordinator's monitoring (metrics.h): atomics the loop
 * writes, and the HTTP daemon that writes them out at each scrape.
 */
#include "metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "store.h"

/* The states a run may be in (runs_state_check, schema.sql): each is written, 0 when no run is in it. */
static const char *const RUN_STATES[] = { "active", "paused", "pending", "building", "finished", "stopped", "failed" };

typedef struct {
    const char *family, *key, *value, *help;
} MetricInfo;

#define METRICS_COUNTER_INFO(id, family, key, value, help) { family, key, value, help },
#define METRICS_GAUGE_INFO(id, family, help) { family, NULL, NULL, help },
static const MetricInfo COUNTERS[METRIC_COUNTERS] = { METRICS_COUNTERS(METRICS_COUNTER_INFO) };
static const MetricInfo GAUGES[METRIC_GAUGES] = { METRICS_GAUGES(METRICS_GAUGE_INFO) };

struct Metrics {
    atomic_int_fast64_t counter[METRIC_COUNTERS];
    atomic_int_fast64_t gauge[METRIC_GAUGES];
    ExpoHist batch;                  /* the loop's batches */
    ExpoHist *statement;             /* per statement of the store's registry */
    int statements;
    struct MHD_Daemon *daemon;
    Store *store;                    /* the daemon thread's own connection (NULL: not yet, or no --db) */
    char *db;
    int64_t connect_after_ms;        /* the next try of a lost connection */
};

Metrics *metrics_new(void)
{
    Metrics *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->statements = store_statement_total();
    if (!(m->statement = calloc((size_t)m->statements, sizeof *m->statement))) {
        free(m);
        return NULL;
    }
    return m;
}

void metrics_destroy(Metrics **mp)
{
    Metrics *m = *mp;
    if (!m)
        return;
    if (m->daemon)
        MHD_stop_daemon(m->daemon);
    store_destroy(&m->store);
    free(m->db);
    free(m->statement);
    free(m);
    *mp = NULL;
}

void metrics_add(Metrics *m, MetricCounter c, int64_t n)
{
    if (m)
        atomic_fetch_add_explicit(&m->counter[c], n, memory_order_relaxed);
}

void metrics_total(Metrics *m, MetricCounter c, int64_t total)
{
    if (m)
        atomic_store_explicit(&m->counter[c], total, memory_order_relaxed);
}

void metrics_gauge(Metrics *m, MetricGauge g, int64_t v)
{
    if (m)
        atomic_store_explicit(&m->gauge[g], v, memory_order_relaxed);
}

void metrics_batch(Metrics *m, int64_t us)
{
    if (m)
        expo_observe(&m->batch, us);
}

void metrics_statement(void *arg, int statement, int64_t us)
{
    Metrics *m = arg;
    if (m && statement >= 0 && statement < m->statements)
        expo_observe(&m->statement[statement], us);
}

/* ---- the exposition --------------------------------------------------------------- */

/* The count of what in state among rows, or 0. */
static int64_t row_count(const StoreMetricRow *rows, int n, const char *what, const char *state)
{
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].what, what) == 0 && strcmp(rows[i].state, state) == 0)
            return rows[i].count;
    return 0;
}

/* The database's counts: runs by state (every known state, then any other found), the queues it holds. */
static void write_db(ExpoText *t, const StoreMetricRow *rows, int n, int64_t db_us)
{
    expo_family(t, "xqf_metrics_database_up", "gauge",
                "Whether this scrape read the database (1) or not (0: the xqf_games_total, xqf_runs, "
                "xqf_tasks and xqf_build_requests families are left out)");
    expo_sample(t, "xqf_metrics_database_up", NULL, 0, n >= 0);
    expo_family(t, "xqf_metrics_database_seconds", "gauge", "How long this scrape's database reading took");
    expo_sample(t, "xqf_metrics_database_seconds", NULL, 0, (double)db_us / 1e6);
    if (n < 0)
        return;
    /*
     * Games from the runs' W/D/L, not counted in the loop: a report carries
     * its lease's totals, and only the database knows what it added.
     */
    expo_family(t, "xqf_games_total", "counter",
                "Games counted in every run (the runs' wins, draws and losses; from the database)");
    expo_sample(t, "xqf_games_total", NULL, 0, (double)row_count(rows, n, "games", "counted"));
    expo_family(t, "xqf_runs", "gauge", "Runs by state");
    size_t known = sizeof RUN_STATES / sizeof *RUN_STATES;
    for (size_t i = 0; i < known; i++) {
        const char *l[2] = { "state", RUN_STATES[i] };
        expo_sample(t, "xqf_runs", l, 1, (double)row_count(rows, n, "runs", RUN_STATES[i]));
    }
    for (int i = 0; i < n; i++) {
        bool other = strcmp(rows[i].what, "runs") == 0;
        for (size_t k = 0; other && k < known; k++)
            other = strcmp(rows[i].state, RUN_STATES[k]) != 0;
        const char *l[2] = { "state", rows[i].state };
        if (other)
            expo_sample(t, "xqf_runs", l, 1, (double)rows[i].count);
    }
    expo_family(t, "xqf_tasks", "gauge", "Tasks waiting for a worker (queued) and being played (leased)");
    const char *queued[2] = { "state", "queued" }, *leased[2] = { "state", "leased" },
               *building[2] = { "state", "building" };
    expo_sample(t, "xqf_tasks", queued, 1, (double)row_count(rows, n, "tasks", "queued"));
    expo_sample(t, "xqf_tasks", leased, 1, (double)row_count(rows, n, "tasks", "leased"));
    expo_family(t, "xqf_build_requests", "gauge", "Build requests waiting for a builder (queued) and being built");
    expo_sample(t, "xqf_build_requests", queued, 1, (double)row_count(rows, n, "build_requests", "queued"));
    expo_sample(t, "xqf_build_requests", building, 1, (double)row_count(rows, n, "build_requests", "building"));
}

void metrics_write(Metrics *m, ExpoText *t, const StoreMetricRow *rows, int n, int64_t db_us)
{
    for (int i = 0; i < METRIC_COUNTERS; i++) {
        const MetricInfo *c = &COUNTERS[i];
        if (i == 0 || strcmp(c->family, COUNTERS[i - 1].family) != 0)
            expo_family(t, c->family, "counter", c->help);
        const char *l[2] = { c->key, c->value };
        expo_sample(t, c->family, l, c->key ? 1 : 0,
                    (double)atomic_load_explicit(&m->counter[i], memory_order_relaxed));
    }
    for (int i = 0; i < METRIC_GAUGES; i++) {
        expo_family(t, GAUGES[i].family, "gauge", GAUGES[i].help);
        expo_sample(t, GAUGES[i].family, NULL, 0, (double)atomic_load_explicit(&m->gauge[i], memory_order_relaxed));
    }
    expo_family(t, "xqf_loop_batch_seconds", "histogram",
                "Time the loop took over a batch of frames (its transaction, its replies)");
    expo_histogram(t, "xqf_loop_batch_seconds", NULL, NULL, &m->batch);
    /* only the statements run so far: the registry bounds the label's values, use keeps the page short */
    expo_family(t, "xqf_db_statement_seconds", "histogram",
                "Time of each of the loop's database statements, by prepared statement name");
    for (int i = 0; i < m->statements; i++)
        if (expo_count(&m->statement[i]))
            expo_histogram(t, "xqf_db_statement_seconds", "statement", store_statement_name(i), &m->statement[i]);
    write_db(t, rows, n, db_us);
}

/* ---- the HTTP daemon -------------------------------------------------------------- */

int metrics_address(const char *text, struct sockaddr_storage *addr, char *why, size_t size)
{
    memset(addr, 0, sizeof *addr);
    const char *colon = text ? strrchr(text, ':') : NULL;
    if (!colon || colon == text) {
        snprintf(why, size, "--metrics: '%s' is not HOST:PORT (e.g. 127.0.0.1:9711)", text ? text : "");
        return -1;
    }
    char *end;
    errno = 0;
    long port = strtol(colon + 1, &end, 10);
    if (errno || end == colon + 1 || *end || port < 1 || port > 65535) {
        snprintf(why, size, "--metrics: '%s': the port must be a number from 1 to 65535", text);
        return -1;
    }
    char host[64];
    size_t len = (size_t)(colon - text);
    bool bracketed = len >= 2 && text[0] == '[' && text[len - 1] == ']';
    if (bracketed)
        text++, len -= 2;
    if (len >= sizeof host) {
        snprintf(why, size, "--metrics: the host is too long");
        return -1;
    }
    memcpy(host, text, len);
    host[len] = '\0';
    struct sockaddr_in *v4 = (struct sockaddr_in *)addr;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)addr;
    if (!bracketed && (strcmp(host, "localhost") == 0 || inet_pton(AF_INET, host, &v4->sin_addr) == 1)) {
        if (strcmp(host, "localhost") == 0)
            v4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        return 0;
    }
    if (bracketed && inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        return 0;
    }
    snprintf(why, size, "--metrics: '%s' is not an IPv4 address, [IPv6] address or localhost", host);
    return -1;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    line[strcspn(line, "\n")] = '\0';
    log_debug("metrics: http: %s", line);
}

/*
 * The database's counts, on the daemon's own connection (made at the first
 * scrape, made again at most every METRICS_RECONNECT_MS once lost, so that
 * a database that is down costs a scrape a connect timeout at most that
 * often).  The row count, or -1.
 */
static int read_db(Metrics *m, StoreMetricRow rows[STORE_METRIC_ROWS])
{
    if (!m->db)
        return -1;
    int64_t now = clock_now_ms();
    if (!m->store && !(m->store = store_new(m->db)))
        return -1;
    if (!store_ok(m->store)) {
        if (now < m->connect_after_ms)
            return -1;
        m->connect_after_ms = now + METRICS_RECONNECT_MS;
        if (store_connect(m->store) != 0)
            return -1;
    }
    return store_metric_counts(m->store, METRICS_DB_TIMEOUT_MS, rows);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type, char *body, size_t len,
                             bool must_free)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, body, must_free ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        if (must_free)
            free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, "Allow", "GET, HEAD");
    enum MHD_Result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **state)
{
    (void)version, (void)upload, (void)upload_size, (void)state;
    Metrics *m = cls;
    static char not_found[] = "not found: the metrics are at /metrics\n";
    static char not_allowed[] = "method not allowed: GET /metrics\n";
    static char no_memory[] = "out of memory\n";
    if (strcmp(url, "/metrics") != 0)
        return reply(c, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", not_found, strlen(not_found), false);
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", not_allowed,
                     strlen(not_allowed), false);
    StoreMetricRow rows[STORE_METRIC_ROWS];
    int64_t started = clock_now_us();
    int n = read_db(m, rows);
    ExpoText t = { 0 };
    metrics_write(m, &t, rows, n, clock_now_us() - started);
    if (t.failed || !t.data)
        return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8", no_memory, strlen(no_memory),
                     false);
    return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", t.data, t.len, true);
}

int metrics_serve(Metrics *m, const char *text, const char *db, char *why, size_t size)
{
    struct sockaddr_storage addr;
    if (metrics_address(text, &addr, why, size) != 0)
        return -1;
    if (db && !(m->db = strdup(db))) {
        snprintf(why, size, "out of memory");
        return -1;
    }
    /* one thread polls every connection: scrapes are few, and one at a time keeps the daemon's store single-threaded */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    if (addr.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    m->daemon = MHD_start_daemon(flags, 0, NULL, NULL, handle, m,
                                 MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
                                 MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                                 MHD_OPTION_CONNECTION_LIMIT, (unsigned)METRICS_CONNECTIONS,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)METRICS_TIMEOUT_S,
                                 MHD_OPTION_END);
    if (!m->daemon) {
        snprintf(why, size, "--metrics: cannot serve on %s (the port in use, or the address not this machine's)",
                 text);
        return -1;
    }
    const struct sockaddr_in *v4 = (const struct sockaddr_in *)&addr;
    const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)&addr;
    bool loopback = addr.ss_family == AF_INET ? (ntohl(v4->sin_addr.s_addr) >> 24) == 127
                                              : IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr);
    if (loopback)
        log_info("metrics: serving GET /metrics on %s", text);
    else
        log_warn("metrics: serving GET /metrics on %s, not a loopback address: anyone who can reach it reads "
                 "them (no authentication; docs/security.md, \"Monitoring\")", text);
    return 0;
}

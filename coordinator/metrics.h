/*
 * metrics.h - the coordinator's monitoring: its counters, gauges and
 * latency histograms, served over HTTP as Prometheus's text exposition
 * format (expo.h) at GET /metrics on the address of --metrics.
 *
 * Threads: the loop (server.c) writes, the HTTP daemon's own thread
 * (libmicrohttpd, one internal polling thread) reads.  Every number is
 * an atomic the loop adds to or stores with relaxed order, so a scrape
 * never takes a lock the loop waits on, and the loop never waits on a
 * scrape: what a scrape sees is each number as it stood when read (two
 * counters may be an event apart).  What only the database knows (runs
 * by state, tasks queued and leased, build requests waiting, games) is read at
 * each scrape on a connection of the daemon's own, each statement bounded
 * by METRICS_DB_TIMEOUT_MS: a database that hangs costs a scrape its
 * database numbers (xqf_metrics_database_up 0), never the loop its time.
 *
 * Every function taking a Metrics does nothing on NULL: the loop calls
 * them whether --metrics was given or not.  The names and meanings:
 * docs/cluster.md, "Monitoring".
 */
#ifndef XQF_METRICS_H
#define XQF_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "expo.h"
#include "store_metrics.h"

enum {
    METRICS_DB_TIMEOUT_MS = 2000,    /* a scrape's database statements each at most this long */
    METRICS_RECONNECT_MS = 5000,     /* a scrape tries a lost database connection again at most this often */
    METRICS_CONNECTIONS = 16,        /* HTTP connections at once */
    METRICS_TIMEOUT_S = 10           /* an HTTP connection idle this long is closed */
};

/*
 * The counters: id, family, label key and value (NULL: none), help.  A
 * family's entries are consecutive; its help is its first entry's.
 */
#define METRICS_COUNTERS(C)                                                                                    \
    C(RESULTS, "xqf_results_total", NULL, NULL, "Results (a worker's report on a task) accepted and committed")  \
    C(DUPLICATE, "xqf_results_rejected_total", "status", "duplicate",                                         \
      "Results answered other than accepted, by the answer")                                                   \
    C(STALE, "xqf_results_rejected_total", "status", "stale", NULL)                                            \
    C(INVALID, "xqf_results_rejected_total", "status", "invalid", NULL)                                        \
    C(LEASES_GIVEN, "xqf_leases_given_total", NULL, NULL, "Task leases given to workers (committed)")           \
    C(LEASES_EXPIRED, "xqf_leases_expired_total", NULL, NULL,                                                  \
      "Task leases that expired unheard and were re-queued")                                                   \
    C(HEARTBEATS, "xqf_heartbeats_total", NULL, NULL, "Task heartbeats answered (from memory)")                 \
    C(MESSAGES, "xqf_messages_total", NULL, NULL, "Frames taken from workers' connections")                     \
    C(RATE_LIMITED, "xqf_messages_rate_limited_total", NULL, NULL,                                             \
      "Frames refused over a key's --rate-limit")                                                              \
    C(REPLIES_DROPPED, "xqf_replies_dropped_total", NULL, NULL,                                                \
      "Replies dropped: the worker's connection was not reading (its queue full)")                             \
    C(BUILD_CHUNKS, "xqf_artifact_chunks_total", "kind", "build", "Chunks of builds and nets sent to workers")  \
    C(NET_CHUNKS, "xqf_artifact_chunks_total", "kind", "net", NULL)                                            \
    C(BUILD_BYTES, "xqf_artifact_bytes_total", "kind", "build", "Bytes of builds and nets sent to workers")     \
    C(NET_BYTES, "xqf_artifact_bytes_total", "kind", "net", NULL)

/* The loop's gauges, the same way. */
#define METRICS_GAUGES(G)                                                                                      \
    G(WORKERS, "xqf_workers_connected", "Live workers: heard within three heartbeats, connection open")        \
    G(KEYS, "xqf_keys_connected", "Keys (CURVE allow-list names; in plaintext, workers) with a worker")       \
    G(WORKERS_OLDER, "xqf_workers_older_protocol",                                                            \
      "Live workers of an older protocol version than the coordinator's (--accept-protocol): yet to update")   \
    G(LEASES_HELD, "xqf_leases_held", "Task leases held in memory (each with its deadline)")                   \
    G(CONNECTIONS, "xqf_connections_open", "Connections open on the ROUTER socket")                            \
    G(BATCH_MESSAGES, "xqf_loop_batch_messages",                                                              \
      "Frames the loop's last batch took: at xqf_loop_batch_limit, frames wait in the queue")                  \
    G(BATCH_LIMIT, "xqf_loop_batch_limit", "Frames a batch takes at most (--batch)")                           \
    G(DB_CONNECTED, "xqf_database_connected", "Whether the loop's database connection is up (1) or not (0)")

#define METRICS_ID(id, ...) METRIC_##id,
typedef enum { METRICS_COUNTERS(METRICS_ID) METRIC_COUNTERS } MetricCounter;
typedef enum { METRICS_GAUGES(METRICS_ID) METRIC_GAUGES } MetricGauge;
#undef METRICS_ID

typedef struct Metrics Metrics;

/* Counters and histograms at zero, one histogram per statement of the store's registry; NULL: no memory. */
Metrics *metrics_new(void);
/* Stops its HTTP daemon (waiting for a scrape under way), frees it; *m becomes NULL; safe on NULL. */
void metrics_destroy(Metrics **m);

void metrics_add(Metrics *m, MetricCounter c, int64_t n);
/* A counter kept elsewhere, as its total now (it only grows). */
void metrics_total(Metrics *m, MetricCounter c, int64_t total);
void metrics_gauge(Metrics *m, MetricGauge g, int64_t v);
/* One loop batch of us microseconds (xqf_loop_batch_seconds). */
void metrics_batch(Metrics *m, int64_t us);
/* A StoreObserver (store.h): arg is the Metrics; one statement's time into its histogram. */
void metrics_statement(void *arg, int statement, int64_t us);

/*
 * Parses an --metrics address, HOST:PORT, into *addr: HOST an IPv4
 * address, [IPv6] in brackets, or "localhost"; PORT 1 to 65535.  0, or -1
 * with why.
 */
int metrics_address(const char *text, struct sockaddr_storage *addr, char *why, size_t size);
/*
 * Serves GET /metrics on the address text (metrics_address) from a thread
 * of its own; db: the conninfo its scrapes read the database with.
 * 0, or -1 with why (the address bad, in use, or no memory).
 */
int metrics_serve(Metrics *m, const char *text, const char *db, char *why, size_t size);

/*
 * The exposition of everything in m, with the database's counts rows
 * (n of them; n < 0: the database could not be read) and the time their
 * reading took, into t.
 */
void metrics_write(Metrics *m, ExpoText *t, const StoreMetricRow *rows, int n, int64_t db_us);

#endif

/*
 * store_metrics.h - what the coordinator's monitoring (metrics.h) reads
 * from the database at each scrape: how many runs are in each state, and
 * the queues the database holds (tasks queued and leased, build requests
 * queued and building), and the games counted in every run.
 */
#ifndef XQF_STORE_METRICS_H
#define XQF_STORE_METRICS_H

#include <stdint.h>

#include "store.h"

enum { STORE_METRIC_ROWS = 32 };

/* One count: what is counted ("runs", "tasks", "build_requests"; "games", "counted"), in which state. */
typedef struct {
    char what[16], state[16];
    int64_t count;
} StoreMetricRow;

/*
 * The counts into rows (STORE_METRIC_ROWS at most), each statement bounded
 * by timeout_ms (the connection's statement_timeout, set here: a
 * connection of its own, metrics.c, which this also stops listening for
 * notifications, since it reads only at scrapes).  Only states with a
 * count appear.  The row count, or -1.
 */
int store_metric_counts(Store *s, int timeout_ms, StoreMetricRow rows[STORE_METRIC_ROWS]);

#endif

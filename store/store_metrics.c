/*
 * store_metrics.c - the counts the coordinator's monitoring reads at each
 * scrape (store_metrics.h).
 */
#include "store_metrics.h"
#include "store_internal.h"

#include <libpq-fe.h>
#include <stdio.h>

/*
 * The tasks and build requests counted only in the states the partial
 * indexes cover (tasks_queued, tasks_leased_run, build_requests_open): a
 * scrape reads the index, never the millions of done tasks.  Runs are few.
 */
#define METRICS_STATEMENTS(S)                                                                    \
    S(METRICS_UNLISTEN, "UNLISTEN *", 0)                                                         \
    S(METRICS_TIMEOUT, "SELECT set_config('statement_timeout', $1, false)", 1)                   \
    S(METRICS_COUNTS, "SELECT 'runs', state, count(*) FROM runs GROUP BY state "                 \
                      "UNION ALL SELECT 'tasks', 'queued', count(*) FROM tasks WHERE state = 'queued' " \
                      "UNION ALL SELECT 'tasks', 'leased', count(*) FROM tasks WHERE state = 'leased' " \
                      "UNION ALL SELECT 'build_requests', state, count(*) FROM build_requests "  \
                      "WHERE state IN ('queued', 'building') GROUP BY state "                    \
                      "UNION ALL SELECT 'games', 'counted', coalesce(sum(wins + draws + losses), 0)::bigint " \
                      "FROM runs", 0)

STORE_STATEMENTS(METRICS_STATEMENTS, store_statements_metrics);

/*
 * Every connection listens for the runs' changes (store_connect); this one
 * reads only at scrapes, and a session that listens without reading holds
 * back PostgreSQL's notification queue for every session (NOTIFY fails
 * once it is full: the manual, "NOTIFY").  So it stops listening, and
 * what came before that is freed.  0 or -1.
 */
static int unlisten(Store *s)
{
    PGresult *res = store_run(s, &STMT[ST_METRICS_UNLISTEN], NULL, PGRES_COMMAND_OK);
    if (!res)
        return -1;
    PQclear(res);
    for (PGnotify *note; (note = PQnotifies(store_pgconn(s)));)
        PQfreemem(note);
    return 0;
}

int store_metric_counts(Store *s, int timeout_ms, StoreMetricRow rows[STORE_METRIC_ROWS])
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, timeout_ms) };
    if (unlisten(s) != 0)
        return -1;
    PGresult *res = store_run(s, &STMT[ST_METRICS_TIMEOUT], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    PQclear(res);
    if (!(res = store_run(s, &STMT[ST_METRICS_COUNTS], NULL, PGRES_TUPLES_OK)))
        return -1;
    int count = 0;
    for (int i = 0; i < PQntuples(res) && count < STORE_METRIC_ROWS; i++) {
        StoreMetricRow *r = &rows[count++];
        store_text(res, i, 0, r->what, sizeof r->what);
        store_text(res, i, 1, r->state, sizeof r->state);
        r->count = store_i64(res, i, 2);
    }
    PQclear(res);
    return count;
}

/*
 * store_web.c - the web dashboard's queries (store_web.h): prepared
 * statements registered with the core like every other (they run a few
 * times a second, not per game), each bounded by a LIMIT or a key.
 */
#include "store_web.h"
#include "store_internal.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store_games.h"
#include "store_tasks.h"

#define WEB_STATEMENTS(S)                                                                        \
    S(WEB_SESSION_SETTINGS, "SET jit = off", 0)                                                  \
    S(WEB_OWNERS, "SELECT id, owner FROM runs ORDER BY id DESC LIMIT $1", 1)                     \
    S(WEB_WAITING, "SELECT count(*) FROM runs WHERE owner = $1 "                                 \
      "AND state IN ('pending', 'building')", 1)                                                 \
    S(WEB_TASKS, "SELECT coalesce(w.name, ''), count(*), count(*) FILTER (WHERE t.state = 'leased'), " \
      "sum(t.done_pairs), sum(t.wins), sum(t.draws), sum(t.losses), sum(t.attempts), "           \
      "array_to_string(xqf_add_all(t.reasons), ',') "                                            \
      "FROM tasks t LEFT JOIN workers w ON w.id = t.worker_id WHERE t.run_id = $1 "              \
      "GROUP BY w.name ORDER BY sum(t.done_pairs) DESC, w.name LIMIT $2", 2)                     \
    S(WEB_WORKERS, "WITH leased AS (SELECT worker_id, count(*) AS n FROM tasks WHERE state = 'leased' " \
      "GROUP BY worker_id) "                                                                     \
      "SELECT w.id, w.name, w.build_id, w.cores, w.concurrency, x.pairs, coalesce(l.n, 0), "     \
      "extract(epoch FROM now() - greatest(w.last_seen, x.seen)), "                              \
      "coalesce((SELECT nps FROM worker_builds b WHERE b.worker_id = w.id "                      \
      "          ORDER BY measured_at DESC LIMIT 1), 0), x.crashes, x.time_losses, x.illegal "   \
      "FROM workers w LEFT JOIN leased l ON l.worker_id = w.id, LATERAL "                        \
      "(SELECT coalesce(sum(pairs), 0) AS pairs, max(updated_at) AS seen, "                      \
      "        coalesce(sum(reasons[13]), 0) AS crashes, coalesce(sum(reasons[10]), 0) AS time_losses, " \
      "        coalesce(sum(reasons[11]), 0) AS illegal "   /* STORE_REASON_* + 1: SQL counts from 1 */ \
      " FROM results WHERE worker_id = w.id) x "                                                 \
      "WHERE greatest(w.last_seen, x.seen) > now() - $1 * interval '1 second' "                  \
      "ORDER BY w.name LIMIT $2", 2)                                                             \
    S(WEB_LISTEN, "LISTEN xqf_run_progress", 0)

STORE_STATEMENTS(WEB_STATEMENTS, store_statements_web);

int store_web_session(Store *s)
{
    static atomic_bool warned;
    if (store_owns_schema(s) && !atomic_exchange(&warned, true))
        log_warn("database: %s owns the schema: the dashboard needs only a member of xqf_web, which writes "
                 "through a few functions and cannot change the tables (docs/cluster.md, \"Database roles\")",
                 store_role(s));
    PGresult *res = store_run(s, &STMT[ST_WEB_SESSION_SETTINGS], NULL, PGRES_COMMAND_OK);
    PQclear(res);
    return res ? 0 : -1;
}

/* ---- runs ---------------------------------------------------------------------- */

int store_web_owners(Store *s, int max, StoreWebOwner **out)
{
    char m[16];
    snprintf(m, sizeof m, "%d", max);
    const char *p[1] = { m };
    *out = NULL;
    PGresult *res = store_run(s, &STMT[ST_WEB_OWNERS], p, PGRES_TUPLES_OK);
    int n = store_rows_alloc(res, sizeof **out, (void **)out);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        (*out)[i].id = store_i64(res, i, 0);
        store_text(res, i, 1, (*out)[i].owner, sizeof (*out)[i].owner);
    }
    PQclear(res);
    return n;
}

int64_t store_web_waiting(Store *s, const char *owner)
{
    const char *p[1] = { owner };
    PGresult *res = store_run(s, &STMT[ST_WEB_WAITING], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int64_t n = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    PQclear(res);
    return n;
}

int store_web_tasks(Store *s, int64_t run, int max, StoreWebTasks **out)
{
    char id[24], m[16];
    snprintf(id, sizeof id, "%" PRId64, run);
    snprintf(m, sizeof m, "%d", max);
    const char *p[2] = { id, m };
    *out = NULL;
    PGresult *res = store_run(s, &STMT[ST_WEB_TASKS], p, PGRES_TUPLES_OK);
    int n = store_rows_alloc(res, sizeof **out, (void **)out);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        StoreWebTasks *t = &(*out)[i];
        store_text(res, i, 0, t->worker, sizeof t->worker);
        t->tasks = store_i64(res, i, 1), t->leased = store_i64(res, i, 2), t->pairs = store_i64(res, i, 3);
        t->wins = store_i64(res, i, 4), t->draws = store_i64(res, i, 5), t->losses = store_i64(res, i, 6);
        t->attempts = store_i64(res, i, 7);
        const char *r = PQgetvalue(res, i, 8);
        while (*r && t->nreasons < STORE_REASONS) {
            char *end;
            t->reasons[t->nreasons++] = strtoll(r, &end, 10);
            r = *end == ',' ? end + 1 : end;
            if (end == r && *r)
                break;
        }
    }
    PQclear(res);
    return n;
}

int store_web_workers(Store *s, int seconds, int max, StoreWorker **out)
{
    _Static_assert(STORE_REASON_CRASH == 12 && STORE_REASON_TIME_FORFEIT == 9 && STORE_REASON_ILLEGAL_MOVE == 10,
                   "the reasons' SQL indexes below");
    char sec[16], m[16];
    snprintf(sec, sizeof sec, "%d", seconds);
    snprintf(m, sizeof m, "%d", max);
    const char *p[2] = { sec, m };
    *out = NULL;
    PGresult *res = store_run(s, &STMT[ST_WEB_WORKERS], p, PGRES_TUPLES_OK);
    int n = store_rows_alloc(res, sizeof **out, (void **)out);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        StoreWorker *w = &(*out)[i];
        w->id = store_i64(res, i, 0);
        store_text(res, i, 1, w->name, sizeof w->name);
        store_text(res, i, 2, w->build_id, sizeof w->build_id);
        w->cores = (int)store_i64(res, i, 3), w->concurrency = (int)store_i64(res, i, 4);
        w->pairs = store_i64(res, i, 5), w->leased = store_i64(res, i, 6);
        w->idle_s = PQgetisnull(res, i, 7) ? 0 : strtod(PQgetvalue(res, i, 7), NULL);
        w->nps = store_i64(res, i, 8);
        w->crashes = store_i64(res, i, 9), w->time_losses = store_i64(res, i, 10), w->illegal_moves = store_i64(res, i, 11);
    }
    PQclear(res);
    return n;
}

/* ---- live notifications ------------------------------------------------------- */

int store_web_listen(Store *s)
{
    PGresult *res = store_run(s, &STMT[ST_WEB_LISTEN], NULL, PGRES_COMMAND_OK);
    PQclear(res);
    return res ? 0 : -1;
}

int store_web_notices(Store *s, int64_t *runs, int max, bool *list_changed)
{
    PGconn *c = store_pgconn(s);
    *list_changed = false;
    if (!c || PQconsumeInput(c) == 0) {
        log_error("database: notifications: %s", c ? PQerrorMessage(c) : "not connected");
        return -1;
    }
    int n = 0;
    PGnotify *note;
    while ((note = PQnotifies(c))) {
        if (strcmp(note->relname, "xqf_runs") == 0)
            *list_changed = true;
        else {
            int64_t id = strtoll(note->extra, NULL, 10);
            bool seen = id <= 0;
            for (int i = 0; i < n && !seen; i++)
                seen = runs[i] == id;
            if (!seen && n < max)
                runs[n++] = id;
        }
        PQfreemem(note);
    }
    return n;
}

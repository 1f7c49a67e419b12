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

#define WEB_STATEMENTS(S)                                                                            \
    S(WEB_SESSION_SETTINGS, "SET jit = off", 0)                                                      \
    S(WEB_OWNERS, "SELECT id, owner FROM runs ORDER BY id DESC LIMIT $1", 1)                         \
    S(WEB_OWNER, "SELECT owner FROM runs WHERE id = $1", 1)                                          \
    S(WEB_WAITING, "SELECT count(*) FROM runs WHERE owner = $1 "                                     \
      "AND state IN ('pending', 'building')", 1)                                                     \
    S(WEB_CREATING, "SELECT set_config('xqf.owner', $1, false), "                                    \
      "set_config('xqf.pending', $2, false)", 2)                                                     \
    S(WEB_APPROVE, "SELECT xqf_approve($1)", 1)                                                      \
    S(WEB_STOP, "SELECT xqf_stop_run($1, $2)", 2)                                                    \
    S(WEB_MODIFY, "SELECT xqf_set_run_limits($1, $2, $3, $4)", 4)                                    \
    S(WEB_TASKS, "SELECT coalesce(w.name, ''), count(*), count(*) FILTER (WHERE t.state = 'leased'), " \
      "sum(t.done_pairs), sum(t.wins), sum(t.draws), sum(t.losses), sum(t.attempts), "               \
      "array_to_string(xqf_add_all(t.reasons), ',') "                                                \
      "FROM tasks t LEFT JOIN workers w ON w.id = t.worker_id WHERE t.run_id = $1 "                  \
      "GROUP BY w.name ORDER BY sum(t.done_pairs) DESC, w.name LIMIT $2", 2)                         \
    S(WEB_WORKERS, "WITH leased AS (SELECT worker_id, count(*) AS n FROM tasks WHERE state = 'leased' " \
      "GROUP BY worker_id) "                                                                         \
      "SELECT w.id, w.name, w.build_id, w.cores, w.concurrency, x.pairs, coalesce(l.n, 0), "         \
      "extract(epoch FROM now() - greatest(w.last_seen, x.seen)), "                                  \
      "coalesce((SELECT nps FROM worker_builds b WHERE b.worker_id = w.id "                          \
      "          ORDER BY measured_at DESC LIMIT 1), 0), x.crashes, x.time_losses, x.illegal "       \
      "FROM workers w LEFT JOIN leased l ON l.worker_id = w.id, LATERAL "                            \
      "(SELECT coalesce(sum(pairs), 0) AS pairs, max(updated_at) AS seen, "                          \
      "        coalesce(sum(reasons[13]), 0) AS crashes, coalesce(sum(reasons[10]), 0) AS time_losses, " \
      "        coalesce(sum(reasons[11]), 0) AS illegal "   /* STORE_REASON_* + 1: SQL counts from 1 */ \
      " FROM results WHERE worker_id = w.id) x "                                                     \
      "WHERE greatest(w.last_seen, x.seen) > now() - $1 * interval '1 second' "                      \
      "ORDER BY w.name LIMIT $2", 2)                                                                 \
    S(WEB_AWAIT_BUILDS, "SELECT xqf_await_builds($1, $2, $3)", 3)                                    \
    S(WEB_BUILD_CLAIM, "SELECT * FROM xqf_build_claim($1, $2)", 2)                                   \
    S(WEB_BUILD_DONE, "SELECT xqf_build_done($1, $2, $3)", 3)                                        \
    S(WEB_SIGN_NEXT, "SELECT id, sha256, build_id FROM xqf_sign_next()", 0)                          \
    S(WEB_BUILD_SIGNED, "SELECT xqf_build_signed($1, $2, $3)", 3)                                    \
    S(WEB_BUILD_REQUESTS, "SELECT id, run_id, side, ref, state, coalesce(build_id, 0), error FROM build_requests " \
      "WHERE run_id = $1 ORDER BY side DESC", 1)                                                     \
    S(WEB_LISTEN, "LISTEN xqf_run_progress", 0)                                                      \
    S(WEB_USER_REPLACE, "WITH up AS (INSERT INTO web_users (name, role, pwhash) VALUES ($1, $2, $3) "     \
      "ON CONFLICT (name) DO UPDATE SET role = $2, pwhash = $3 RETURNING id), "                      \
      "gone AS (DELETE FROM web_sessions WHERE user_id IN (SELECT id FROM up)) "                     \
      "SELECT count(*) = 1 FROM up", 3)                                                              \
    S(WEB_USER_ADD, "SELECT xqf_user_add($1, $2, $3)", 3)                                            \
    S(WEB_USER_DISABLE, "WITH up AS (UPDATE web_users SET disabled = $2::boolean WHERE name = $1 RETURNING id), " \
      "gone AS (DELETE FROM web_sessions WHERE $2::boolean "                                         \
      "AND user_id IN (SELECT id FROM up)) SELECT count(*) FROM up", 2)                              \
    S(WEB_USER_DELETE, "DELETE FROM web_users WHERE name = $1", 1)                                   \
    S(WEB_USER, "SELECT id, name, role, pwhash FROM web_users WHERE name = $1 AND NOT disabled", 1)  \
    S(WEB_SESSION_ADD, "SELECT xqf_session_add($1, $2, $3, $4)", 4)                                  \
    S(WEB_SESSION, "SELECT x.csrf, u.id, u.name, u.role, u.pwhash FROM web_sessions x "              \
      "JOIN web_users u ON u.id = x.user_id WHERE x.token_hash = $1 AND x.expires_at > now() "       \
      "AND NOT u.disabled", 1)                                                                       \
    S(WEB_SESSION_END, "SELECT xqf_session_end($1)", 1)                                              \
    S(WEB_AUDIT, "SELECT xqf_audit($1, $2, $3, $4)", 4)                                              \
    S(WEB_AUDIT_LIST, "SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), actor, action, detail " \
      "FROM web_audit WHERE run_id = $1 ORDER BY id DESC LIMIT $2", 2)

STORE_STATEMENTS(WEB_STATEMENTS, store_statements_web);

/*
 * One zeroed element of `size` bytes per row of res into *out (NULL when
 * there are none): the row count, or -1 when res is NULL (the query
 * failed) or out of memory (res then cleared).
 */
static int rows_alloc(PGresult *res, size_t size, void **out)
{
    if (!res)
        return -1;
    int n = PQntuples(res);
    if (n && !(*out = calloc((size_t)n, size))) {
        PQclear(res);
        return -1;
    }
    return n;
}

/* A command's affected row count (0 or more), or -1. */
static int command(Store *s, Stmt st, const char *const *params)
{
    PGresult *res = store_run(s, &STMT[st], params, PGRES_COMMAND_OK);
    if (!res)
        return -1;
    int rows = atoi(PQcmdTuples(res));
    PQclear(res);
    return rows;
}

/*
 * A call of one of the functions the dashboard writes through (they run
 * as the owner: 030_roles.sql), its result ignored.  0 or -1.
 */
static int void_call(Store *s, Stmt st, const char *const *params)
{
    PGresult *res = store_run(s, &STMT[st], params, PGRES_TUPLES_OK);
    PQclear(res);
    return res ? 0 : -1;
}

static int64_t i64(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? 0 : strtoll(PQgetvalue(r, row, col), NULL, 10);
}

static void text(const PGresult *r, int row, int col, char *out, size_t size)
{
    snprintf(out, size, "%s", PQgetvalue(r, row, col));
}

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
    int n = rows_alloc(res, sizeof **out, (void **)out);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        (*out)[i].id = i64(res, i, 0);
        text(res, i, 1, (*out)[i].owner, sizeof (*out)[i].owner);
    }
    PQclear(res);
    return n;
}

int store_web_owner(Store *s, int64_t run, char *out, size_t size)
{
    char id[24];
    snprintf(id, sizeof id, "%" PRId64, run);
    const char *p[1] = { id };
    PGresult *res = store_run(s, &STMT[ST_WEB_OWNER], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    snprintf(out, size, "%s", found ? PQgetvalue(res, 0, 0) : "");
    PQclear(res);
    return found;
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

int store_web_creating(Store *s, const char *owner, bool pending)
{
    const char *p[2] = { owner ? owner : "", pending ? "on" : "off" };
    PGresult *res = store_run(s, &STMT[ST_WEB_CREATING], p, PGRES_TUPLES_OK);
    PQclear(res);
    return res ? 0 : -1;
}

int store_web_approve(Store *s, int64_t run)
{
    char id[24];
    snprintf(id, sizeof id, "%" PRId64, run);
    const char *p[1] = { id };
    PGresult *res = store_run(s, &STMT[ST_WEB_APPROVE], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = !PQgetisnull(res, 0, 0);
    PQclear(res);
    return found;
}

int store_web_stop(Store *s, int64_t run, const char *verdict)
{
    char id[24];
    snprintf(id, sizeof id, "%" PRId64, run);
    const char *p[2] = { id, verdict };
    PGresult *res = store_run(s, &STMT[ST_WEB_STOP], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int done = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    PQclear(res);
    return done;
}

int store_web_modify(Store *s, int64_t run, int priority, int64_t max_pairs, int pairs_per_task)
{
    char id[24], pr[16], mp[24], ppt[16];
    snprintf(id, sizeof id, "%" PRId64, run);
    snprintf(pr, sizeof pr, "%d", priority);
    snprintf(mp, sizeof mp, "%" PRId64, max_pairs);
    snprintf(ppt, sizeof ppt, "%d", pairs_per_task);
    const char *p[4] = { id, pr, mp, ppt };
    PGresult *res = store_run(s, &STMT[ST_WEB_MODIFY], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int rows = atoi(PQgetvalue(res, 0, 0));
    PQclear(res);
    return rows;
}

int store_web_tasks(Store *s, int64_t run, int max, StoreWebTasks **out)
{
    char id[24], m[16];
    snprintf(id, sizeof id, "%" PRId64, run);
    snprintf(m, sizeof m, "%d", max);
    const char *p[2] = { id, m };
    *out = NULL;
    PGresult *res = store_run(s, &STMT[ST_WEB_TASKS], p, PGRES_TUPLES_OK);
    int n = rows_alloc(res, sizeof **out, (void **)out);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        StoreWebTasks *t = &(*out)[i];
        text(res, i, 0, t->worker, sizeof t->worker);
        t->tasks = i64(res, i, 1), t->leased = i64(res, i, 2), t->pairs = i64(res, i, 3);
        t->wins = i64(res, i, 4), t->draws = i64(res, i, 5), t->losses = i64(res, i, 6);
        t->attempts = i64(res, i, 7);
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
    int n = rows_alloc(res, sizeof **out, (void **)out);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        StoreWorker *w = &(*out)[i];
        w->id = i64(res, i, 0);
        text(res, i, 1, w->name, sizeof w->name);
        text(res, i, 2, w->build_id, sizeof w->build_id);
        w->cores = (int)i64(res, i, 3), w->concurrency = (int)i64(res, i, 4);
        w->pairs = i64(res, i, 5), w->leased = i64(res, i, 6);
        w->idle_s = PQgetisnull(res, i, 7) ? 0 : strtod(PQgetvalue(res, i, 7), NULL);
        w->nps = i64(res, i, 8);
        w->crashes = i64(res, i, 9), w->time_losses = i64(res, i, 10), w->illegal_moves = i64(res, i, 11);
    }
    PQclear(res);
    return n;
}

/* ---- tests of git refs: runs waiting for their builds ------------------------------- */

int store_await_builds(Store *s, int64_t run, const char *test_ref, const char *base_ref)
{
    char id[24];
    snprintf(id, sizeof id, "%" PRId64, run);
    const char *p[3] = { id, test_ref, base_ref };
    PGresult *res = store_run(s, &STMT[ST_WEB_AWAIT_BUILDS], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int done = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    PQclear(res);
    return done ? 0 : -1;
}

/* Columns id, run_id, side, ref (then state, build_id, error when full) of row into q. */
static void request_row(const PGresult *res, int row, bool full, StoreBuildRequest *q)
{
    memset(q, 0, sizeof *q);
    q->id = i64(res, row, 0), q->run_id = i64(res, row, 1);
    text(res, row, 2, q->side, sizeof q->side);
    text(res, row, 3, q->ref, sizeof q->ref);
    if (!full) {
        snprintf(q->state, sizeof q->state, "building");
        return;
    }
    text(res, row, 4, q->state, sizeof q->state);
    q->build_id = i64(res, row, 5);
    text(res, row, 6, q->error, sizeof q->error);
}

int store_build_claim(Store *s, const char *builder, int lease_s, StoreBuildRequest *out)
{
    char lease[16];
    snprintf(lease, sizeof lease, "%d", lease_s);
    const char *p[2] = { builder, lease };
    PGresult *res = store_run(s, &STMT[ST_WEB_BUILD_CLAIM], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found)
        request_row(res, 0, false, out);
    PQclear(res);
    return found;
}

int store_build_done(Store *s, int64_t request, int64_t build, const char *error, char *run_state, size_t size)
{
    char id[24], b[24];
    snprintf(id, sizeof id, "%" PRId64, request);
    snprintf(b, sizeof b, "%" PRId64, build);
    const char *p[3] = { id, build > 0 ? b : NULL, build > 0 ? NULL : error ? error : "" };
    PGresult *res = store_run(s, &STMT[ST_WEB_BUILD_DONE], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = !PQgetisnull(res, 0, 0);
    snprintf(run_state, size, "%s", found ? PQgetvalue(res, 0, 0) : "");
    PQclear(res);
    return found;
}

int store_sign_next(Store *s, int64_t *build, char sha256[STORE_NAME_MAX + 1], char name[STORE_NAME_MAX + 1])
{
    PGresult *res = store_run(s, &STMT[ST_WEB_SIGN_NEXT], NULL, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found) {
        *build = i64(res, 0, 0);
        text(res, 0, 1, sha256, STORE_NAME_MAX + 1);
        text(res, 0, 2, name, STORE_NAME_MAX + 1);
    }
    PQclear(res);
    return found;
}

int store_build_signed(Store *s, int64_t build, const char *sha256, const char *signature, int *started)
{
    char id[24];
    snprintf(id, sizeof id, "%" PRId64, build);
    const char *p[3] = { id, sha256, signature };
    PGresult *res = store_run(s, &STMT[ST_WEB_BUILD_SIGNED], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = !PQgetisnull(res, 0, 0);
    *started = found ? atoi(PQgetvalue(res, 0, 0)) : 0;
    PQclear(res);
    return found;
}

int store_build_requests(Store *s, int64_t run, StoreBuildRequest **out)
{
    char id[24];
    snprintf(id, sizeof id, "%" PRId64, run);
    const char *p[1] = { id };
    *out = NULL;
    PGresult *res = store_run(s, &STMT[ST_WEB_BUILD_REQUESTS], p, PGRES_TUPLES_OK);
    int n = rows_alloc(res, sizeof **out, (void **)out);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++)
        request_row(res, i, true, &(*out)[i]);
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

/* ---- accounts, sessions, audit ----------------------------------------------------- */

int store_web_user_add(Store *s, const char *name, const char *role, const char *pwhash, bool replace)
{
    const char *p[3] = { name, role, pwhash };
    /*
     * A new password ends the account's sessions: whoever had the old one
     * keeps nothing of it.  Replacing is the owner's (xqf-tune); a new
     * account goes through xqf_user_add, which the dashboard's role may
     * call and which never replaces one (030_roles.sql).
     */
    PGresult *res = store_run(s, &STMT[replace ? ST_WEB_USER_REPLACE : ST_WEB_USER_ADD], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int added = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    PQclear(res);
    return added;
}

int store_web_user_set_disabled(Store *s, const char *name, bool disabled)
{
    const char *p[2] = { name, disabled ? "true" : "false" };
    PGresult *res = store_run(s, &STMT[ST_WEB_USER_DISABLE], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int rows = atoi(PQgetvalue(res, 0, 0));
    PQclear(res);
    return rows == 1;
}

int store_web_user_delete(Store *s, const char *name)
{
    const char *p[1] = { name };
    int rows = command(s, ST_WEB_USER_DELETE, p);
    return rows < 0 ? -1 : rows == 1;
}

/* Fills a user from columns id, name, role, pwhash starting at col. */
static void user_row(const PGresult *res, int col, StoreWebUser *u)
{
    u->id = i64(res, 0, col);
    text(res, 0, col + 1, u->name, sizeof u->name);
    text(res, 0, col + 2, u->role, sizeof u->role);
    text(res, 0, col + 3, u->pwhash, sizeof u->pwhash);
}

int store_web_user_get(Store *s, const char *name, StoreWebUser *out)
{
    const char *p[1] = { name };
    PGresult *res = store_run(s, &STMT[ST_WEB_USER], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found)
        user_row(res, 0, out);
    PQclear(res);
    return found;
}

int store_web_session_add(Store *s, const char *token_hash, int64_t user, const char *csrf, int64_t ttl_s)
{
    char uid[24], ttl[24];
    snprintf(uid, sizeof uid, "%" PRId64, user);
    snprintf(ttl, sizeof ttl, "%" PRId64, ttl_s);
    const char *p[4] = { token_hash, uid, csrf, ttl };
    return void_call(s, ST_WEB_SESSION_ADD, p);
}

int store_web_session_get(Store *s, const char *token_hash, StoreWebUser *user, char *csrf, size_t csrf_size)
{
    const char *p[1] = { token_hash };
    PGresult *res = store_run(s, &STMT[ST_WEB_SESSION], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found) {
        text(res, 0, 0, csrf, csrf_size);
        user_row(res, 1, user);
    }
    PQclear(res);
    return found;
}

int store_web_session_end(Store *s, const char *token_hash)
{
    const char *p[1] = { token_hash };
    return void_call(s, ST_WEB_SESSION_END, p);
}

int store_web_audit(Store *s, const char *actor, int64_t run, const char *action, const char *detail)
{
    char id[24];
    snprintf(id, sizeof id, "%" PRId64, run);
    const char *p[4] = { actor, id, action, detail ? detail : "" };
    return void_call(s, ST_WEB_AUDIT, p);
}

int store_web_audit_list(Store *s, int64_t run, int max, StoreWebAudit **out)
{
    char id[24], m[16];
    snprintf(id, sizeof id, "%" PRId64, run);
    snprintf(m, sizeof m, "%d", max);
    const char *p[2] = { id, m };
    *out = NULL;
    PGresult *res = store_run(s, &STMT[ST_WEB_AUDIT_LIST], p, PGRES_TUPLES_OK);
    int n = rows_alloc(res, sizeof **out, (void **)out);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        StoreWebAudit *a = &(*out)[i];
        text(res, i, 0, a->at, sizeof a->at);
        text(res, i, 1, a->actor, sizeof a->actor);
        text(res, i, 2, a->action, sizeof a->action);
        text(res, i, 3, a->detail, sizeof a->detail);
    }
    PQclear(res);
    return n;
}

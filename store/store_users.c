/*
 * store_users.c - the dashboard's accounts, their sessions and the audit
 * of what they did (store_users.h, 011_web.sql, 030_roles.sql).
 */
#include "store_users.h"
#include "store_internal.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USERS_STATEMENTS(S)                                                                      \
    S(WEB_USER_REPLACE, "WITH up AS (INSERT INTO web_users (name, role, pwhash) VALUES ($1, $2, $3) " \
      "ON CONFLICT (name) DO UPDATE SET role = $2, pwhash = $3 RETURNING id), "                  \
      "gone AS (DELETE FROM web_sessions WHERE user_id IN (SELECT id FROM up)), "                \
      "logged AS (INSERT INTO web_audit (actor, action, detail) SELECT $4, 'user replace', "     \
      "$1 || ' (' || $2 || '): its password set, its sessions ended' FROM up) "                  \
      "SELECT count(*) = 1 FROM up", 4)                                                          \
    S(WEB_USER_ADD, "SELECT xqf_user_add($1, $2, $3, $4)", 4)                                    \
    S(WEB_USER_DISABLE, "WITH up AS (UPDATE web_users SET disabled = $2::boolean WHERE name = $1 RETURNING id), " \
      "gone AS (DELETE FROM web_sessions WHERE $2::boolean "                                     \
      "AND user_id IN (SELECT id FROM up)) SELECT count(*) FROM up", 2)                          \
    S(WEB_USER_DELETE, "DELETE FROM web_users WHERE name = $1", 1)                               \
    S(WEB_USER, "SELECT id, name, role, pwhash FROM web_users WHERE name = $1 AND NOT disabled", 1) \
    S(WEB_SESSION_ADD, "SELECT xqf_session_add($1, $2, $3, $4)", 4)                              \
    S(WEB_SESSION, "SELECT x.csrf, u.id, u.name, u.role, u.pwhash FROM web_sessions x "          \
      "JOIN web_users u ON u.id = x.user_id WHERE x.token_hash = $1 AND x.expires_at > now() "   \
      "AND NOT u.disabled", 1)                                                                   \
    S(WEB_SESSION_END, "SELECT xqf_session_end($1)", 1)                                          \
    S(WEB_AUDIT, "SELECT xqf_audit($1, $2, $3, $4, $5)", 5)                                      \
    S(WEB_AUDIT_LIST, "SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), actor, action, detail " \
      "FROM web_audit WHERE run_id = $1 ORDER BY id DESC LIMIT $2", 2)

STORE_STATEMENTS(USERS_STATEMENTS, store_statements_users);

int store_web_user_add(Store *s, const char *name, const char *role, const char *pwhash, bool replace,
                       const char *actor)
{
    const char *p[4] = { name, role, pwhash, actor };
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
    int rows = store_command_rows(s, &STMT[ST_WEB_USER_DELETE], p);
    return rows < 0 ? -1 : rows == 1;
}

/* Fills a user from columns id, name, role, pwhash starting at col. */
static void user_row(const PGresult *res, int col, StoreWebUser *u)
{
    u->id = store_i64(res, 0, col);
    store_text(res, 0, col + 1, u->name, sizeof u->name);
    store_text(res, 0, col + 2, u->role, sizeof u->role);
    store_text(res, 0, col + 3, u->pwhash, sizeof u->pwhash);
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
    return store_void_call(s, &STMT[ST_WEB_SESSION_ADD], p);
}

int store_web_session_get(Store *s, const char *token_hash, StoreWebUser *user, char *csrf, size_t csrf_size)
{
    const char *p[1] = { token_hash };
    PGresult *res = store_run(s, &STMT[ST_WEB_SESSION], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found) {
        store_text(res, 0, 0, csrf, csrf_size);
        user_row(res, 1, user);
    }
    PQclear(res);
    return found;
}

int store_web_session_end(Store *s, const char *token_hash)
{
    const char *p[1] = { token_hash };
    return store_void_call(s, &STMT[ST_WEB_SESSION_END], p);
}

int store_web_audit_chain(Store *s, const char *actor, int64_t chain, int64_t run, const char *action,
                          const char *detail)
{
    char id[24], of[24];
    snprintf(id, sizeof id, "%" PRId64, run);
    snprintf(of, sizeof of, "%" PRId64, chain);
    const char *p[5] = { actor, id, action, detail ? detail : "", of };
    return store_void_call(s, &STMT[ST_WEB_AUDIT], p);
}

int store_web_audit(Store *s, const char *actor, int64_t run, const char *action, const char *detail)
{
    return store_web_audit_chain(s, actor, 0, run, action, detail);
}

int store_web_audit_list(Store *s, int64_t run, int max, StoreWebAudit **out)
{
    char id[24], m[16];
    snprintf(id, sizeof id, "%" PRId64, run);
    snprintf(m, sizeof m, "%d", max);
    const char *p[2] = { id, m };
    *out = NULL;
    PGresult *res = store_run(s, &STMT[ST_WEB_AUDIT_LIST], p, PGRES_TUPLES_OK);
    int n = store_rows_alloc(res, sizeof **out, (void **)out);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        StoreWebAudit *a = &(*out)[i];
        store_text(res, i, 0, a->at, sizeof a->at);
        store_text(res, i, 1, a->actor, sizeof a->actor);
        store_text(res, i, 2, a->action, sizeof a->action);
        store_text(res, i, 3, a->detail, sizeof a->detail);
    }
    PQclear(res);
    return n;
}

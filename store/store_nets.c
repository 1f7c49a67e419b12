/*
 * store_nets.c - nets (store_nets.h, 025_nets.sql): registered with their
 * bytes, listed, shown, and served in chunks to workers as builds are;
 * uploaded from the dashboard and approved there (063_net_uploads.sql).
 */

#include "store_nets.h"
#include "store_internal.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nets (025_nets.sql): registered with their bytes, listed, shown, served in chunks as builds are. */
#define NET_COLUMNS                                                                              \
    "id, sha256, name, description, provenance, coalesce(signature, ''), added_by, "             \
    "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), octet_length(bytes)::bigint, " \
    "approved, approved_by"
/* and, listed: the runs that name it on a side, and the chain whose net stage trained it */
#define NET_LISTED                                                                               \
    ", (SELECT count(*) FROM runs r WHERE r.test_net = nets.id OR r.base_net = nets.id), "       \
    "coalesce((SELECT min(c.chain_id) FROM chain_stages c WHERE c.kind = 'net' AND c.net_id = nets.id), 0)"

#define NETS_STATEMENTS(S)                                                                       \
    S(ADD_NET, "WITH n AS (INSERT INTO nets (sha256, name, description, provenance, bytes, signature, " \
               "added_by) VALUES ($1, $2, $3, $4, $5, nullif($6, ''), $7) RETURNING id, name), "  \
               /* its line of the events log, in the same statement */                          \
               "logged AS (INSERT INTO web_audit (actor, action, detail) "                      \
               "SELECT coalesce(nullif($7, ''), 'xqf-tune'), 'net add', name FROM n) SELECT id FROM n", 7) \
    S(NET_BY_SHA, "SELECT id FROM nets WHERE sha256 = $1", 1)                                    \
    S(LOAD_NET, "SELECT " NET_COLUMNS " FROM nets WHERE id = $1::bigint OR sha256 = $2 OR name = $2 " \
                "ORDER BY id = $1::bigint DESC, sha256 = $2 DESC LIMIT 1", 2)                    \
    S(LIST_NETS, "SELECT " NET_COLUMNS NET_LISTED " FROM nets ORDER BY id", 0)                   \
    S(NET_RUNS, "SELECT id, state, coalesce(verdict, '') FROM runs WHERE test_net = $1 OR base_net = $1 " \
                "ORDER BY id DESC LIMIT $2", 2)                                                  \
    /* workers fetch only an approved net (063): an upload waits for an admin */                \
    S(NET_CHUNK, "SELECT octet_length(bytes)::bigint, substring(bytes FROM $2::int + 1 FOR $3::int), " \
                 "name, coalesce(signature, '') FROM nets WHERE sha256 = $1 AND approved", 3)    \
    S(NET_UPLOAD, "SELECT xqf_net_upload($1, $2, $3, $4, $5, $6)", 6)                            \
    S(NET_APPROVE, "SELECT xqf_net_approve($1, $2)", 2)                                          \
    S(NET_BYTES, "SELECT bytes FROM nets WHERE name = $1", 1)

STORE_STATEMENTS(NETS_STATEMENTS, store_statements_nets);

int store_net_chunk(Store *s, const char *sha256, int64_t offset, size_t max, void *out, size_t *len,
                    int64_t *total, char name[STORE_NAME_MAX + 1], char signature[STORE_SIG_HEX + 1])
{
    return store_blob_chunk(s, &STMT[ST_NET_CHUNK], sha256, offset, max, out, len, total, name, signature);
}

int store_add_net(Store *s, const StoreNet *net, const void *bytes, size_t len, int64_t *id)
{
    if (!store_connected(s) || len > INT32_MAX)
        return store_db_error(s, STMT[ST_ADD_NET].name, NULL);
    const char *p[7] = { net->sha256, net->name, net->description, net->provenance, bytes, net->signature,
                         net->added_by };
    const int lengths[7] = { 0, 0, 0, 0, (int)len, 0, 0 }, formats[7] = { 0, 0, 0, 0, 1, 0, 0 };
    PGresult *res = store_exec_prepared(s, &STMT[ST_ADD_NET], 7, p, lengths, formats, 0);
    int rc = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 ? 0 : -1;
    if (rc == 0)
        *id = store_i64(res, 0, 0);
    else
        store_db_error(s, STMT[ST_ADD_NET].name, res);
    PQclear(res);
    return rc;
}

int store_net_of_sha(Store *s, const char *sha256, int64_t *id)
{
    const char *p[1] = { sha256 };
    PGresult *res = store_run(s, &STMT[ST_NET_BY_SHA], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found)
        *id = store_i64(res, 0, 0);
    PQclear(res);
    return found;
}

static void read_net(const PGresult *r, int row, StoreNet *o)
{
    memset(o, 0, sizeof *o);
    o->id = store_i64(r, row, 0);
    store_text(r, row, 1, o->sha256, sizeof o->sha256);
    store_text(r, row, 2, o->name, sizeof o->name);
    store_text(r, row, 3, o->description, sizeof o->description);
    store_text(r, row, 4, o->provenance, sizeof o->provenance);
    store_text(r, row, 5, o->signature, sizeof o->signature);
    store_text(r, row, 6, o->added_by, sizeof o->added_by);
    store_text(r, row, 7, o->created, sizeof o->created);
    o->size = store_i64(r, row, 8);
    o->approved = PQgetvalue(r, row, 9)[0] == 't';
    store_text(r, row, 10, o->approved_by, sizeof o->approved_by);
    if (PQnfields(r) > 12) {
        o->runs = store_i64(r, row, 11);
        o->chain = store_i64(r, row, 12);
    }
}

int store_load_net(Store *s, const char *key, StoreNet *out)
{
    /* an id is all digits and short; anything else can only match a SHA-256 */
    bool digits = *key && strspn(key, "0123456789") == strlen(key) && strlen(key) <= 18;
    const char *p[2] = { digits ? key : "0", key };
    PGresult *res = store_run(s, &STMT[ST_LOAD_NET], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found)
        read_net(res, 0, out);
    PQclear(res);
    return found;
}

int store_list_nets(Store *s, StoreNet **out)
{
    int n;
    PGresult *res = store_fetch_rows(s, &STMT[ST_LIST_NETS], NULL, sizeof **out, (void **)out, &n);
    if (!res)
        return -1;
    for (int i = 0; i < n; i++)
        read_net(res, i, &(*out)[i]);
    PQclear(res);
    return n;
}

int store_net_runs(Store *s, int64_t id, StoreNetRun *out, int max)
{
    StoreNums n;
    const char *p[2] = { store_num(&n, 0, id), store_num(&n, 1, max) };
    PGresult *res = store_run(s, &STMT[ST_NET_RUNS], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int rows = PQntuples(res) < max ? PQntuples(res) : max;
    for (int i = 0; i < rows; i++) {
        out[i].id = store_i64(res, i, 0);
        store_text(res, i, 1, out[i].state, sizeof out[i].state);
        store_text(res, i, 2, out[i].verdict, sizeof out[i].verdict);
    }
    PQclear(res);
    return rows;
}

int store_net_upload(Store *s, const StoreNet *net, const void *bytes, size_t len, int64_t *id)
{
    if (!store_connected(s) || len > INT32_MAX)
        return store_db_error(s, STMT[ST_NET_UPLOAD].name, NULL);
    const char *p[6] = { net->sha256, net->name, net->description, net->provenance, bytes, net->added_by };
    const int lengths[6] = { 0, 0, 0, 0, (int)len, 0 }, formats[6] = { 0, 0, 0, 0, 1, 0 };
    PGresult *res = store_exec_prepared(s, &STMT[ST_NET_UPLOAD], 6, p, lengths, formats, 0);
    int rc = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 ? 1 : -1;
    if (rc == 1 && PQgetisnull(res, 0, 0))
        rc = 0;
    else if (rc == 1)
        *id = store_i64(res, 0, 0);
    else
        store_db_error(s, STMT[ST_NET_UPLOAD].name, res);
    PQclear(res);
    return rc;
}

int store_net_approve(Store *s, const char *name, const char *actor)
{
    const char *p[2] = { name, actor };
    PGresult *res = store_run(s, &STMT[ST_NET_APPROVE], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int64_t rc = store_i64(res, 0, 0);
    PQclear(res);
    return rc < 0 ? -2 : (int)rc;
}

int store_net_bytes(Store *s, const char *name, uint8_t **bytes, size_t *len)
{
    const char *p[1] = { name };
    /* the bytes as binary (the result's format 1), not bytea's hex text */
    PGresult *res = store_exec_prepared(s, &STMT[ST_NET_BYTES], 1, p, NULL, NULL, 1);
    if (PQresultStatus(res) != PGRES_TUPLES_OK) {
        store_db_error(s, STMT[ST_NET_BYTES].name, res);
        PQclear(res);
        return -1;
    }
    int found = PQntuples(res) == 1;
    if (found) {
        *len = (size_t)PQgetlength(res, 0, 0);
        if (!(*bytes = malloc(*len ? *len : 1)))
            found = -1;
        else
            memcpy(*bytes, PQgetvalue(res, 0, 0), *len);
    }
    PQclear(res);
    return found;
}

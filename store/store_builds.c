/*
 * store_builds.c - engine builds (store_builds.h): the registered
 * binaries with their bytes, signatures and listed parameters, where they
 * came from (013_git_builds.sql), the workers' benches of them, and the
 * build server's queue of requests (017_build_requests.sql).
 */

#include "store_builds.h"
#include "store_internal.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUILDS_STATEMENTS(S)                                                                     \
    S(ADD_BUILD, "INSERT INTO engine_builds (run_id, params_hash, sha256, build_id, bench_nodes, path, " \
                 "net_id) VALUES (nullif($1::bigint, 0), $2, $3, $4, $5, $6, nullif($7::bigint, 0)) " \
                 "ON CONFLICT (sha256) DO UPDATE SET "                                           \
                 "run_id = EXCLUDED.run_id, params_hash = EXCLUDED.params_hash, build_id = "     \
                 "EXCLUDED.build_id, bench_nodes = EXCLUDED.bench_nodes, path = EXCLUDED.path, " \
                 "net_id = EXCLUDED.net_id RETURNING id", 7)                                     \
    S(SIGN_BUILD, "UPDATE engine_builds SET signature = $2 WHERE id = $1", 2)                    \
    S(LOAD_BUILD, "SELECT b.id, coalesce(b.run_id, 0), coalesce(b.params_hash, ''), coalesce(b.sha256, ''), " \
                  "b.build_id, coalesce(b.bench_nodes, 0), coalesce(b.path, ''), "               \
                  "to_char(b.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), "          \
                  "coalesce(b.signature, ''), coalesce(b.net_id, 0), coalesce(n.name, ''), "     \
                  "coalesce(n.sha256, '') "                                                      \
                  "FROM engine_builds b LEFT JOIN nets n ON n.id = b.net_id WHERE b.id = $1", 1) \
    S(BUILD_BLOB, "UPDATE engine_builds SET blob = $2 WHERE id = $1", 2)                         \
    S(BUILD_CHUNK, "SELECT octet_length(blob)::bigint, substring(blob FROM $2::int + 1 FOR $3::int), " \
                   "build_id, coalesce(signature, '') "                                          \
                   "FROM engine_builds WHERE sha256 = $1 AND blob IS NOT NULL", 3)               \
    S(BUILD_PARAMS_CLEAR, "WITH gone AS (DELETE FROM build_params WHERE build_id = $1) "         \
                          "UPDATE engine_builds SET params_listed = true WHERE id = $1", 1)      \
    S(BUILD_PARAMS_ADD, "INSERT INTO build_params (build_id, idx, name, min, max) "              \
                        "SELECT $1, u.i - 1, u.name, u.lo, u.hi "                                \
                        "FROM unnest($2::text[], $3::int[], $4::int[]) WITH ORDINALITY AS u(name, lo, hi, i)", 4) \
    S(BUILD_PARAMS, "SELECT b.params_listed, p.name, p.min, p.max FROM engine_builds b "         \
                    "LEFT JOIN build_params p ON p.build_id = b.id WHERE b.id = $1 ORDER BY p.idx", 1) \
    S(BUILD_SOURCE_SET, "UPDATE engine_builds SET git_commit = nullif($2, ''), "                 \
                        "git_tree = nullif($3, ''), git_subject = $4 WHERE id = $1", 4)          \
    S(BUILD_SOURCE, "SELECT coalesce(git_commit, ''), coalesce(git_tree, ''), "                  \
                    "coalesce(git_subject, '') FROM engine_builds WHERE id = $1", 1)             \
    S(BUILD_OF_TREE, "SELECT id FROM engine_builds WHERE git_tree = $1 "                         \
                     "AND coalesce(net_id, 0) = $2::bigint ORDER BY id LIMIT 1", 2)              \
    S(WORKER_BENCH, "WITH old AS (SELECT refused FROM worker_builds WHERE worker_id = $1 AND sha256 = $2) " \
                    "INSERT INTO worker_builds (worker_id, sha256, bench_nodes, nps, refused) "  \
                    "SELECT $1, $2, $3, $4, nullif($5, '') WHERE $2 = '' OR xqf_artifact_due($2) " \
                    "ON CONFLICT (worker_id, sha256) DO "                                        \
                    "UPDATE SET bench_nodes = EXCLUDED.bench_nodes, nps = EXCLUDED.nps, "        \
                    "refused = EXCLUDED.refused, measured_at = now() "                           \
                    "RETURNING (SELECT refused FROM old) IS DISTINCT FROM nullif($5, '')", 5)    \
    S(ARTIFACT_DUE, "SELECT xqf_artifact_due($1)", 1)                                            \
    S(WORKER_BENCHES,                                                                            \
      "SELECT wb.worker_id, w.name, wb.sha256, wb.bench_nodes, wb.nps, coalesce(wb.refused, ''), " \
      "EXISTS (SELECT 1 FROM nets n WHERE n.sha256 = wb.sha256) "                                \
      "FROM worker_builds wb JOIN workers w ON w.id = wb.worker_id WHERE CASE WHEN $1 = 0 "      \
      "THEN wb.refused IS NOT NULL ELSE wb.sha256 IN (SELECT coalesce(b.sha256, '') FROM runs r " \
      "LEFT JOIN engine_builds b ON b.id IN (r.test_build, r.base_build) WHERE r.id = $1) "      \
      "OR wb.sha256 IN (SELECT n.sha256 FROM runs r JOIN nets n ON n.id IN (r.test_net, r.base_net) " \
      "WHERE r.id = $1) "                                                                        \
      "OR (wb.sha256 = '' AND EXISTS (SELECT 1 FROM runs r WHERE r.id = $1 AND "                 \
      "(r.test_build IS NULL OR r.base_build IS NULL))) END ORDER BY w.name, wb.sha256", 1)      \
    S(FORGET_BENCHES, "DELETE FROM worker_builds WHERE sha256 = $1", 1)                          \
    S(ACTIVE_CHECKS, "SELECT r.id, coalesce(t.bench_nodes, 0), coalesce(b.bench_nodes, 0), r.ref_nps " \
                     "FROM runs r LEFT JOIN engine_builds t ON t.id = r.test_build "             \
                     "LEFT JOIN engine_builds b ON b.id = r.base_build WHERE r.state = 'active'", 0) \
    S(RUN_BUILDS, "SELECT coalesce(test_build, 0), coalesce(base_build, 0) FROM runs WHERE id = $1", 1) \
    S(RUN_REF_NPS, "SELECT ref_nps FROM runs WHERE id = $1", 1)                                  \
    S(BUILD_AWAIT, "SELECT xqf_await_builds($1, $2, $3)", 3)                                     \
    S(BUILD_CLAIM, "SELECT * FROM xqf_build_claim($1, $2)", 2)                                   \
    S(BUILD_DONE, "SELECT xqf_build_done($1, $2, $3)", 3)                                        \
    S(BUILD_SIGN_NEXT, "SELECT id, sha256, build_id FROM xqf_sign_next()", 0)                    \
    S(BUILD_SIGNED, "SELECT xqf_build_signed($1, $2, $3)", 3)                                    \
    S(BUILD_TO_PIN, "SELECT q.id, q.run_id, q.side, q.ref, '', '' FROM build_requests q "        \
      "JOIN runs r ON r.id = q.run_id WHERE q.state = 'queued' AND q.git_commit IS NULL "        \
      "AND r.state IN ('pending', 'building') ORDER BY q.id LIMIT 1", 0)                         \
    S(BUILD_PIN, "SELECT xqf_build_pin($1, $2, $3, $4)", 4)                                      \
    S(BUILD_REQUESTS, "SELECT id, run_id, side, ref, coalesce(git_commit, ''), git_subject, state, " \
      "coalesce(build_id, 0), error FROM build_requests WHERE run_id = $1 ORDER BY side DESC", 1) \
    S(RUN_CHANGES_SET, "SELECT xqf_run_changes($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)", \
      14) \
    S(RUN_CHANGES, "SELECT test_ref, base_ref, test_commit, base_commit, commits_total, diff, diff_cut " \
                   "FROM run_changes WHERE run_id = $1", 1)                                     \
    S(RUN_COMMITS, "SELECT hash, subject, author, at FROM run_commits WHERE run_id = $1 ORDER BY n " \
                   "LIMIT 100", 1)

STORE_STATEMENTS(BUILDS_STATEMENTS, store_statements_builds);

int store_add_build(Store *s, const StoreBuild *b, int64_t *id)
{
    StoreNums n;
    const char *p[7] = { store_num(&n, 0, b->run_id), b->params_hash[0] ? b->params_hash : NULL, b->sha256,
                         b->build_id, store_num(&n, 1, b->bench_nodes), b->path, store_num(&n, 2, b->net_id) };
    /* the signature by a statement of its own: the builder registers builds but may not sign them (027_roles.sql) */
    bool own_tx = b->signature[0] && !store_in_tx(s);
    if (own_tx && store_begin(s) != 0)
        return -1;
    PGresult *res = store_run(s, &STMT[ST_ADD_BUILD], p, PGRES_TUPLES_OK);
    int rc = res ? 0 : -1;
    if (res)
        *id = store_i64(res, 0, 0);
    PQclear(res);
    if (rc == 0 && b->signature[0]) {
        const char *q[2] = { store_num(&n, 3, *id), b->signature };
        res = store_run(s, &STMT[ST_SIGN_BUILD], q, PGRES_COMMAND_OK);
        rc = res ? 0 : -1;
        PQclear(res);
    }
    if (own_tx) {
        if (rc == 0)
            return store_commit(s);
        store_rollback(s);
    }
    return rc;
}

int store_load_build(Store *s, int64_t id, StoreBuild *out)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, id) };
    PGresult *res = store_run(s, &STMT[ST_LOAD_BUILD], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found) {
        memset(out, 0, sizeof *out);
        out->id = store_i64(res, 0, 0);
        out->run_id = store_i64(res, 0, 1);
        store_text(res, 0, 2, out->params_hash, sizeof out->params_hash);
        store_text(res, 0, 3, out->sha256, sizeof out->sha256);
        store_text(res, 0, 4, out->build_id, sizeof out->build_id);
        out->bench_nodes = store_i64(res, 0, 5);
        store_text(res, 0, 6, out->path, sizeof out->path);
        store_text(res, 0, 7, out->created, sizeof out->created);
        store_text(res, 0, 8, out->signature, sizeof out->signature);
        out->net_id = store_i64(res, 0, 9);
        store_text(res, 0, 10, out->net_name, sizeof out->net_name);
        store_text(res, 0, 11, out->net_sha256, sizeof out->net_sha256);
    }
    PQclear(res);
    return found;
}

int store_build_blob(Store *s, int64_t id, const void *data, size_t len)
{
    if (!store_connected(s) || len > INT32_MAX)
        return store_db_error(s, "build blob", NULL);
    StoreNums n;
    const char *p[2] = { store_num(&n, 0, id), data };
    const int lengths[2] = { 0, (int)len }, formats[2] = { 0, 1 };
    PGresult *res = store_exec_prepared(s, &STMT[ST_BUILD_BLOB], 2, p, lengths, formats, 0);
    int rc = PQresultStatus(res) == PGRES_COMMAND_OK && strcmp(PQcmdTuples(res), "1") == 0 ? 0 : -1;
    if (rc != 0)
        store_db_error(s, STMT[ST_BUILD_BLOB].name, res);
    PQclear(res);
    return rc;
}

int store_build_chunk(Store *s, const char *sha256, int64_t offset, size_t max, void *out, size_t *len,
                      int64_t *total, char name[STORE_NAME_MAX + 1], char signature[STORE_SIG_HEX + 1])
{
    return store_blob_chunk(s, &STMT[ST_BUILD_CHUNK], sha256, offset, max, out, len, total, name, signature);
}

int store_set_build_params(Store *s, int64_t id, const StoreBuildParam *params, int n)
{
    StoreNums nums;
    const char **names = malloc((size_t)(n > 0 ? n : 1) * sizeof *names);
    StoreText lo = { 0 }, hi = { 0 };
    store_text_add(&lo, "{");
    store_text_add(&hi, "{");
    for (int i = 0; names && i < n; i++) {
        names[i] = params[i].name;
        store_text_add(&lo, "%s%d", i ? "," : "", params[i].min);
        store_text_add(&hi, "%s%d", i ? "," : "", params[i].max);
    }
    store_text_add(&lo, "}");
    store_text_add(&hi, "}");
    char *name_array = names ? store_text_array(names, n) : NULL;
    int rc = name_array && lo.data && hi.data ? 0 : store_db_error(s, "build params: out of memory", NULL);
    const char *p[4] = { store_num(&nums, 0, id), name_array, lo.data, hi.data };
    for (int st = 0; rc == 0 && st < 2; st++) {
        PGresult *res = store_run(s, &STMT[st ? ST_BUILD_PARAMS_ADD : ST_BUILD_PARAMS_CLEAR], p, PGRES_COMMAND_OK);
        rc = res ? 0 : -1;
        PQclear(res);
    }
    free(name_array);
    free(names);
    free(lo.data);
    free(hi.data);
    return rc;
}

int store_build_params(Store *s, int64_t id, bool *listed, StoreBuildParam **out)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, id) };
    PGresult *res = store_run(s, &STMT[ST_BUILD_PARAMS], p, PGRES_TUPLES_OK);
    *listed = false;
    *out = NULL;
    if (!res)
        return -1;
    int rows = PQntuples(res), count = 0;
    *listed = rows > 0 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    /* a build with no parameter is one row of NULLs (the LEFT JOIN) */
    if (rows > 0 && !PQgetisnull(res, 0, 1) && !(*out = calloc((size_t)rows, sizeof **out))) {
        PQclear(res);
        return store_db_error(s, "build params: out of memory", NULL);
    }
    for (int i = 0; *out && i < rows; i++, count++) {
        store_text(res, i, 1, (*out)[i].name, sizeof (*out)[i].name);
        (*out)[i].min = (int)store_i64(res, i, 2);
        (*out)[i].max = (int)store_i64(res, i, 3);
    }
    PQclear(res);
    return count;
}

int store_set_build_source(Store *s, int64_t id, const StoreBuildSource *src)
{
    StoreNums n;
    const char *p[4] = { store_num(&n, 0, id), src->commit, src->tree, src->subject };
    PGresult *res = store_run(s, &STMT[ST_BUILD_SOURCE_SET], p, PGRES_COMMAND_OK);
    PQclear(res);
    return res ? 0 : -1;
}

int store_build_source(Store *s, int64_t id, StoreBuildSource *out)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, id) };
    PGresult *res = store_run(s, &STMT[ST_BUILD_SOURCE], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    memset(out, 0, sizeof *out);
    if (found) {
        store_text(res, 0, 0, out->commit, sizeof out->commit);
        store_text(res, 0, 1, out->tree, sizeof out->tree);
        store_text(res, 0, 2, out->subject, sizeof out->subject);
    }
    PQclear(res);
    return found;
}

int store_build_of_tree(Store *s, const char *tree, int64_t net, int64_t *id)
{
    StoreNums n;
    const char *p[2] = { tree, store_num(&n, 0, net) };
    return store_id_of(s, &STMT[ST_BUILD_OF_TREE], p, id);
}

int store_worker_bench(Store *s, int64_t worker, const char *sha256, int64_t bench_nodes, int64_t nps,
                       const char *refused)
{
    StoreNums n;
    const char *p[5] = { store_num(&n, 0, worker), sha256, store_num(&n, 1, bench_nodes), store_num(&n, 2, nps),
                         refused ? refused : "" };
    PGresult *res = store_run(s, &STMT[ST_WORKER_BENCH], p, PGRES_TUPLES_OK);
    int rc = !res ? -1 : PQntuples(res) == 0 ? 0 : strcmp(PQgetvalue(res, 0, 0), "t") == 0 ? 2 : 1;
    PQclear(res);
    return rc;
}

int store_artifact_due(Store *s, const char *sha256)
{
    const char *p[1] = { sha256 };
    PGresult *res = store_run(s, &STMT[ST_ARTIFACT_DUE], p, PGRES_TUPLES_OK);
    int rc = !res ? -1 : PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    PQclear(res);
    return rc;
}

int store_forget_benches(Store *s, const char *sha256)
{
    const char *p[1] = { sha256 };
    PGresult *res = store_run(s, &STMT[ST_FORGET_BENCHES], p, PGRES_COMMAND_OK);
    PQclear(res);
    return res ? 0 : -1;
}

int store_worker_benches(Store *s, int64_t run_id, StoreWorkerBench **out)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, run_id) };
    int count;
    PGresult *res = store_fetch_rows(s, &STMT[ST_WORKER_BENCHES], p, sizeof **out, (void **)out, &count);
    if (!res)
        return -1;
    for (int i = 0; i < count; i++) {
        StoreWorkerBench *b = &(*out)[i];
        b->worker = store_i64(res, i, 0);
        store_text(res, i, 1, b->worker_name, sizeof b->worker_name);
        store_text(res, i, 2, b->sha256, sizeof b->sha256);
        b->bench_nodes = store_i64(res, i, 3);
        b->nps = store_i64(res, i, 4);
        store_text(res, i, 5, b->refused, sizeof b->refused);
        b->net = strcmp(PQgetvalue(res, i, 6), "t") == 0;
    }
    PQclear(res);
    return count;
}

int store_run_builds(Store *s, int64_t run_id, int64_t *test_build, int64_t *base_build)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, run_id) };
    PGresult *res = store_run(s, &STMT[ST_RUN_BUILDS], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    *test_build = found ? store_i64(res, 0, 0) : 0;
    *base_build = found ? store_i64(res, 0, 1) : 0;
    PQclear(res);
    return found;
}

int store_active_checks(Store *s, StoreRunCheck **out)
{
    int count;
    PGresult *res = store_fetch_rows(s, &STMT[ST_ACTIVE_CHECKS], NULL, sizeof **out, (void **)out, &count);
    if (!res)
        return -1;
    for (int i = 0; i < count; i++) {
        StoreRunCheck *c = &(*out)[i];
        c->run = store_i64(res, i, 0);
        c->bench0 = store_i64(res, i, 1);
        c->bench1 = store_i64(res, i, 2);
        c->ref_nps = store_i64(res, i, 3);
    }
    PQclear(res);
    return count;
}

int store_run_ref_nps(Store *s, int64_t run_id, int64_t *ref_nps)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, run_id) };
    PGresult *res = store_run(s, &STMT[ST_RUN_REF_NPS], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    *ref_nps = found ? store_i64(res, 0, 0) : 0;
    PQclear(res);
    return found;
}

/* ---- the build server's queue: runs waiting for builds of git refs (017_build_requests.sql) ---- */

int store_await_builds(Store *s, int64_t run, const char *test_ref, const char *base_ref)
{
    char id[24];
    snprintf(id, sizeof id, "%" PRId64, run);
    const char *p[3] = { id, test_ref, base_ref };
    PGresult *res = store_run(s, &STMT[ST_BUILD_AWAIT], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int done = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    PQclear(res);
    return done ? 0 : -1;
}

/*
 * Columns id, run_id, side, ref, git_commit, git_subject (then state,
 * build_id, error when full; else state is state) of row into q.
 */
static void request_row(const PGresult *res, int row, bool full, const char *state, StoreBuildRequest *q)
{
    memset(q, 0, sizeof *q);
    q->id = store_i64(res, row, 0), q->run_id = store_i64(res, row, 1);
    store_text(res, row, 2, q->side, sizeof q->side);
    store_text(res, row, 3, q->ref, sizeof q->ref);
    if (!PQgetisnull(res, row, 4))
        store_text(res, row, 4, q->commit, sizeof q->commit);
    if (!PQgetisnull(res, row, 5))
        store_text(res, row, 5, q->subject, sizeof q->subject);
    if (!full) {
        snprintf(q->state, sizeof q->state, "%s", state);
        return;
    }
    store_text(res, row, 6, q->state, sizeof q->state);
    q->build_id = store_i64(res, row, 7);
    store_text(res, row, 8, q->error, sizeof q->error);
}

int store_build_claim(Store *s, const char *builder, int lease_s, StoreBuildRequest *out)
{
    char lease[16];
    snprintf(lease, sizeof lease, "%d", lease_s);
    const char *p[2] = { builder, lease };
    PGresult *res = store_run(s, &STMT[ST_BUILD_CLAIM], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found)
        request_row(res, 0, false, "building", out);
    PQclear(res);
    return found;
}

int store_build_to_pin(Store *s, StoreBuildRequest *out)
{
    PGresult *res = store_run(s, &STMT[ST_BUILD_TO_PIN], NULL, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found)
        request_row(res, 0, false, "queued", out);
    PQclear(res);
    return found;
}

int store_build_pin(Store *s, int64_t request, const char *commit, const char *subject, const char *error,
                    char *run_state, size_t size)
{
    char id[24];
    snprintf(id, sizeof id, "%" PRId64, request);
    const char *p[4] = { id, commit && *commit ? commit : NULL, subject ? subject : "", error ? error : "" };
    PGresult *res = store_run(s, &STMT[ST_BUILD_PIN], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = !PQgetisnull(res, 0, 0);
    snprintf(run_state, size, "%s", found ? PQgetvalue(res, 0, 0) : "");
    PQclear(res);
    return found;
}

int store_build_done(Store *s, int64_t request, int64_t build, const char *error, char *run_state, size_t size)
{
    char id[24], b[24];
    snprintf(id, sizeof id, "%" PRId64, request);
    snprintf(b, sizeof b, "%" PRId64, build);
    const char *p[3] = { id, build > 0 ? b : NULL, build > 0 ? NULL : error ? error : "" };
    PGresult *res = store_run(s, &STMT[ST_BUILD_DONE], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = !PQgetisnull(res, 0, 0);
    snprintf(run_state, size, "%s", found ? PQgetvalue(res, 0, 0) : "");
    PQclear(res);
    return found;
}

int store_sign_next(Store *s, int64_t *build, char sha256[STORE_NAME_MAX + 1], char name[STORE_NAME_MAX + 1])
{
    PGresult *res = store_run(s, &STMT[ST_BUILD_SIGN_NEXT], NULL, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found) {
        *build = store_i64(res, 0, 0);
        store_text(res, 0, 1, sha256, STORE_NAME_MAX + 1);
        store_text(res, 0, 2, name, STORE_NAME_MAX + 1);
    }
    PQclear(res);
    return found;
}

int store_build_signed(Store *s, int64_t build, const char *sha256, const char *signature, int *started)
{
    char id[24];
    snprintf(id, sizeof id, "%" PRId64, build);
    const char *p[3] = { id, sha256, signature };
    PGresult *res = store_run(s, &STMT[ST_BUILD_SIGNED], p, PGRES_TUPLES_OK);
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
    PGresult *res = store_run(s, &STMT[ST_BUILD_REQUESTS], p, PGRES_TUPLES_OK);
    int n = store_rows_alloc(res, sizeof **out, (void **)out);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++)
        request_row(res, i, true, "", &(*out)[i]);
    PQclear(res);
    return n;
}

int store_run_changes_set(Store *s, int64_t run, const StoreRunChanges *c, const char *name)
{
    int n = c->count < STORE_COMMITS_MAX ? c->count : STORE_COMMITS_MAX;
    const char **cols = malloc(4 * (size_t)(n > 0 ? n : 1) * sizeof *cols);
    char *arrays[4] = { NULL };
    int rc = cols ? 0 : -1;
    for (int k = 0; rc == 0 && k < 4; k++) {
        for (int i = 0; i < n; i++) {
            const StoreCommit *m = &c->commits[i];
            cols[i] = k == 0 ? m->hash : k == 1 ? m->subject : k == 2 ? m->author : m->at;
        }
        if (!(arrays[k] = store_text_array(cols, n)))
            rc = -1;
    }
    if (rc == 0) {
        StoreNums nums;
        const char *p[14] = { store_num(&nums, 0, run), c->test_ref, c->base_ref, c->test_commit, c->base_commit,
                              c->test_tree[0] ? c->test_tree : NULL, store_num(&nums, 1, c->total), arrays[0], arrays[1], arrays[2], arrays[3],
                              c->diff ? c->diff : "", c->diff_cut ? "true" : "false", name ? name : "" };
        PGresult *res = store_run(s, &STMT[ST_RUN_CHANGES_SET], p, PGRES_TUPLES_OK);
        rc = !res ? -1 : strcmp(PQgetvalue(res, 0, 0), "t") == 0 ? 1 : 0;
        PQclear(res);
    }
    for (int k = 0; k < 4; k++)
        free(arrays[k]);
    free(cols);
    return rc;
}

int store_run_changes(Store *s, int64_t run, StoreRunChanges *out)
{
    char id[24];
    snprintf(id, sizeof id, "%" PRId64, run);
    const char *p[1] = { id };
    memset(out, 0, sizeof *out);
    PGresult *res = store_run(s, &STMT[ST_RUN_CHANGES], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    if (PQntuples(res) != 1) {
        PQclear(res);
        return 0;
    }
    store_text(res, 0, 0, out->test_ref, sizeof out->test_ref);
    store_text(res, 0, 1, out->base_ref, sizeof out->base_ref);
    store_text(res, 0, 2, out->test_commit, sizeof out->test_commit);
    store_text(res, 0, 3, out->base_commit, sizeof out->base_commit);
    out->total = (int)store_i64(res, 0, 4);
    out->diff = strdup(PQgetvalue(res, 0, 5));
    out->diff_cut = strcmp(PQgetvalue(res, 0, 6), "t") == 0;
    PQclear(res);
    res = out->diff ? store_run(s, &STMT[ST_RUN_COMMITS], p, PGRES_TUPLES_OK) : NULL;
    int n = store_rows_alloc(res, sizeof *out->commits, (void **)&out->commits);
    if (n < 0) {
        store_run_changes_free(out);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        StoreCommit *m = &out->commits[i];
        store_text(res, i, 0, m->hash, sizeof m->hash);
        store_text(res, i, 1, m->subject, sizeof m->subject);
        store_text(res, i, 2, m->author, sizeof m->author);
        store_text(res, i, 3, m->at, sizeof m->at);
    }
    out->count = n;
    PQclear(res);
    return 1;
}

void store_run_changes_free(StoreRunChanges *c)
{
    free(c->commits);
    free(c->diff);
    c->commits = NULL;
    c->diff = NULL;
    c->count = 0;
}

/*
 * store_progressions.c - progressions (store_progressions.h): prepared
 * statements registered with the core, as every domain's.  Written by
 * xqf-tune (the schema's owner, the operators' tool) and read by it and
 * by the dashboard (SELECT granted to xqf_web, 069).
 */
#include "store_progressions.h"
#include "store_internal.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UTC_MINUTE(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI')"

#define PROGRESSION_STATEMENTS(S)                                                                     \
    S(PROGRESSION_ADD, "SELECT xqf_progression_add($1, $2, $3, $4, $5, $6, $7, $8::bigint[], $9::text[], "     \
      "$10::text[], $11::text[], $12::text[])", 12)                                                       \
    S(PROGRESSION_PIN, "SELECT xqf_progression_pin($1, $2, $3, $4::timestamptz, $5)", 5)                \
    S(PROGRESSION_NAMED, "SELECT id FROM progressions WHERE name = $1", 1)                              \
    S(PROGRESSION_OF_RUN, "SELECT progression_id FROM progression_points WHERE run_id = $1", 1)        \
    S(PROGRESSION_LOAD, "SELECT id, name, engine, base_ref, base_commit, " UTC_MINUTE("base_date") ", "  \
      "extract(epoch FROM base_date)::bigint, base_subject, created_by, " UTC_MINUTE("created_at") " FROM progressions WHERE id = $1", 1)       \
    S(PROGRESSION_POINTS, "SELECT p.run_id, p.ref, p.git_commit, " UTC_MINUTE("p.committed_at") ", "     \
      "extract(epoch FROM p.committed_at)::bigint, p.subject, r.state, r.pairs, r.wins, r.draws, "      \
      "r.losses, r.ll, r.ld, r.dd, r.wd, r.ww FROM progression_points p JOIN runs r ON r.id = p.run_id " \
      "WHERE p.progression_id = $1 ORDER BY p.committed_at, p.run_id", 1)

STORE_STATEMENTS(PROGRESSION_STATEMENTS, store_statements_progressions);

int store_progression_add(Store *s, const StoreProgression *p, const StoreProgressionPoint *points, int n,
                          int64_t *id)
{
    const char **cols = calloc((size_t)(4 * n + 1), sizeof *cols);
    StoreText runs = { 0 };
    store_text_add(&runs, "{");
    for (int i = 0; i < n; i++)
        store_text_add(&runs, "%s%" PRId64, i ? "," : "", points[i].run);
    store_text_add(&runs, "}");
    char *arrays[4] = { NULL };
    bool ok = cols && runs.data;
    for (int k = 0; ok && k < 4; k++) {
        for (int i = 0; i < n; i++)
            cols[i] = k == 0 ? points[i].ref : k == 1 ? points[i].commit : k == 2 ? points[i].date : points[i].subject;
        ok = (arrays[k] = store_text_array(cols, n)) != NULL;
    }
    int rc = -1;
    if (ok) {
        const char *param[] = { p->name, p->engine, p->base_ref, p->base_commit, p->base_date, p->base_subject,
                                p->created_by, runs.data, arrays[0], arrays[1], arrays[2], arrays[3] };
        PGresult *res = store_run(s, &STMT[ST_PROGRESSION_ADD], param, PGRES_TUPLES_OK);
        if (res) {
            rc = PQntuples(res) == 1 && !PQgetisnull(res, 0, 0);
            if (rc)
                *id = store_i64(res, 0, 0);
            PQclear(res);
        }
    }
    for (int k = 0; k < 4; k++)
        free(arrays[k]);
    free(runs.data);
    free(cols);
    return rc;
}

int store_progression_pin(Store *s, int64_t run, const char *side, const char *commit, const char *date,
                          const char *subject)
{
    StoreNums nums;
    const char *param[] = { store_num(&nums, 0, run), side, commit, date, subject };
    return store_void_call(s, &STMT[ST_PROGRESSION_PIN], param);
}

int store_progression_find(Store *s, const char *name, int64_t run, int64_t *id)
{
    StoreNums nums;
    const char *p[] = { run > 0 ? store_num(&nums, 0, run) : name };
    return store_id_of(s, &STMT[run > 0 ? ST_PROGRESSION_OF_RUN : ST_PROGRESSION_NAMED], p, id);
}

int store_progression_load(Store *s, int64_t id, StoreProgression *p, StoreProgressionPoint **points, int *n)
{
    StoreNums nums;
    const char *param[] = { store_num(&nums, 0, id) };
    *points = NULL;
    *n = 0;
    PGresult *res = store_run(s, &STMT[ST_PROGRESSION_LOAD], param, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    if (PQntuples(res) != 1) {
        PQclear(res);
        return 0;
    }
    memset(p, 0, sizeof *p);
    int c = 0;
    p->id = store_i64(res, 0, c++);
    store_text(res, 0, c++, p->name, sizeof p->name);
    store_text(res, 0, c++, p->engine, sizeof p->engine);
    store_text(res, 0, c++, p->base_ref, sizeof p->base_ref);
    store_text(res, 0, c++, p->base_commit, sizeof p->base_commit);
    store_text(res, 0, c++, p->base_date, sizeof p->base_date);
    p->base_epoch = store_i64(res, 0, c++);
    store_text(res, 0, c++, p->base_subject, sizeof p->base_subject);
    store_text(res, 0, c++, p->created_by, sizeof p->created_by);
    store_text(res, 0, c++, p->created_at, sizeof p->created_at);
    PQclear(res);
    void *rows = NULL;
    int count = 0;
    res = store_fetch_rows(s, &STMT[ST_PROGRESSION_POINTS], param, sizeof **points, &rows, &count);
    if (!res)
        return -1;
    StoreProgressionPoint *pt = rows;
    for (int i = 0; i < count; i++) {
        c = 0;
        pt[i].run = store_i64(res, i, c++);
        store_text(res, i, c++, pt[i].ref, sizeof pt[i].ref);
        store_text(res, i, c++, pt[i].commit, sizeof pt[i].commit);
        store_text(res, i, c++, pt[i].date, sizeof pt[i].date);
        pt[i].epoch = store_i64(res, i, c++);
        store_text(res, i, c++, pt[i].subject, sizeof pt[i].subject);
        store_text(res, i, c++, pt[i].state, sizeof pt[i].state);
        StoreCounts *k = &pt[i].counts;
        k->pairs = store_i64(res, i, c++);
        k->wins = store_i64(res, i, c++);
        k->draws = store_i64(res, i, c++);
        k->losses = store_i64(res, i, c++);
        for (int j = 0; j < 5; j++)
            k->penta[j] = store_i64(res, i, c++);
    }
    PQclear(res);
    *points = pt;
    *n = count;
    return 1;
}

/*
 * store_progressions.c - progressions (store_progressions.h): prepared
 * statements registered with the core, as every domain's.  Written by
 * xqf-tune (the schema's owner, the operators' tool) and read by it and
 * by the dashboard (SELECT granted to xqf_web, 069).
 */
#include "store_progressions.h"
#include "store_internal.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UTC_MINUTE(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI')"

#define PROGRESSION_STATEMENTS(S)                                                                     \
    S(PROGRESSION_ADD, "INSERT INTO progressions (name, engine, base_ref, base_commit, base_date, "    \
      "base_subject, created_by) VALUES ($1, $2, $3, $4, $5::timestamptz, $6, $7) "                    \
      "ON CONFLICT (name) DO NOTHING RETURNING id", 7)                                                  \
    S(PROGRESSION_POINT_ADD, "INSERT INTO progression_points (progression_id, run_id, ref, git_commit, " \
      "committed_at, subject) VALUES ($1, $2, $3, $4, $5::timestamptz, $6)", 6)                          \
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
    if (store_begin(s) != 0)
        return -1;
    const char *head[] = { p->name, p->engine, p->base_ref, p->base_commit, p->base_date, p->base_subject,
                           p->created_by };
    int rc = store_id_of(s, &STMT[ST_PROGRESSION_ADD], head, id);
    for (int i = 0; rc == 1 && i < n; i++) {
        StoreNums nums;
        const char *row[] = { store_num(&nums, 0, *id), store_num(&nums, 1, points[i].run), points[i].ref,
                              points[i].commit, points[i].date, points[i].subject };
        if (store_command_rows(s, &STMT[ST_PROGRESSION_POINT_ADD], row) != 1)
            rc = -1;
    }
    if (rc == 1 && store_commit(s) == 0)
        return 1;
    store_rollback(s);
    return rc == 0 ? 0 : -1;
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

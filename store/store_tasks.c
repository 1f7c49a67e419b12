/*
 * store_tasks.c - workers, tasks and their leases (store_tasks.h): hello,
 * claims in one statement, reports judged exactly once (005_batch.sql)
 * with their games stored beside them, handbacks and quarantine, the
 * expiry of the leases the coordinator timed out (leases.h); and the
 * audits of a run's books the tests ask for (store_test.h).
 */

#include "store_tasks.h"
#include "store_internal.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "games.h"
#include "stats.h"
#include "store_test.h"

#define TASKS_STATEMENTS(S)                                                                      \
    S(GAMES, "SELECT xqf_games_batch($1::bigint[], $2::bigint[], $3::integer[], $4, $5::integer[], " \
             "$6::integer[], $7::integer[], $8::integer[])", 8)                                  \
    S(HELLO, "SELECT xqf_hello($1, $2, $3, $4, $5, $6)", 6)                                      \
    S(CLAIM, "SELECT * FROM xqf_claim_batch($1, $2::bigint[], $3)", 3)                           \
    S(CREATE_TASK, "SELECT * FROM xqf_create_task($1, $2, $3, $4, $5, $6::jsonb)", 6)            \
    S(REPORT, "SELECT * FROM xqf_report_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, "    \
              "$12, $13, $14, $15, $16)", 16)                                                    \
    S(LEASED, "WITH u AS (SELECT u.i, u.w, x.auth_name, (SELECT count(*) FROM tasks t "          \
              "WHERE t.worker_id = u.w AND t.state = 'leased') AS n FROM unnest($1::bigint[]) "  \
              "WITH ORDINALITY AS u(w, i) LEFT JOIN workers x ON x.id = u.w), "                  \
              "k AS (SELECT a.auth_name, (SELECT count(*) FROM workers x JOIN tasks t ON "       \
              "t.worker_id = x.id AND t.state = 'leased' WHERE x.auth_name = a.auth_name) AS n " \
              "FROM (SELECT DISTINCT auth_name FROM u WHERE auth_name IS NOT NULL) a) "          \
              "SELECT u.n, coalesce(k.n, u.n) FROM u LEFT JOIN k ON k.auth_name = u.auth_name "  \
              "ORDER BY u.i", 1)                                                                 \
    S(HANDBACK, "SELECT xqf_handback($1, $2, $3, $4, $5, $6)", 6)                                \
    S(QUARANTINED, "SELECT id, first_pair, n_pairs, refusals, "                                  \
                   "array_to_string(refusal_reasons, ' | ') FROM tasks "                         \
                   "WHERE run_id = $1 AND state = 'quarantined' ORDER BY id", 1)                 \
    S(EXPIRE_GIVEN, "SELECT xqf_expire_given($1::bigint[], $2::bigint[])", 2)                    \
    S(LEASES_HELD, "SELECT id, lease_token, worker_id FROM tasks WHERE state = 'leased'", 0)     \
    S(LIST_WORKERS,                                                                              \
      "SELECT w.id, w.name, w.build_id, w.cores, w.concurrency, x.pairs, "                       \
      "(SELECT count(*) FROM tasks t WHERE t.worker_id = w.id AND t.state = 'leased'), "         \
      "extract(epoch FROM now() - greatest(w.last_seen, x.seen)) FROM workers w, LATERAL "       \
      "(SELECT coalesce(sum(pairs), 0) AS pairs, max(updated_at) AS seen FROM results "          \
      " WHERE worker_id = w.id) x WHERE $1 <= 0 OR greatest(w.last_seen, x.seen) > "             \
      "now() - $1 * interval '1 second' ORDER BY w.name", 1)                                     \
    S(AUDIT,                                                                                     \
      "SELECT (SELECT count(*) FROM tasks WHERE run_id = r.id), "                                \
      "(SELECT count(*) FROM tasks WHERE run_id = r.id AND state = 'done'), "                    \
      "(SELECT coalesce(max(attempts), 0) FROM tasks WHERE run_id = r.id), "                     \
      "(SELECT coalesce(sum(done_pairs - purged_pairs), 0) FROM tasks WHERE run_id = r.id), "    \
      "(SELECT coalesce(sum(wins + draws + losses), 0) FROM tasks WHERE run_id = r.id), "        \
      "(SELECT coalesce(sum(x.pairs), 0) FROM results x JOIN tasks t ON t.id = x.task_id "       \
      " WHERE t.run_id = r.id AND NOT x.purged), "                                               \
      "(SELECT coalesce(sum(x.wins + x.draws + x.losses), 0) FROM results x "                    \
      " JOIN tasks t ON t.id = x.task_id WHERE t.run_id = r.id AND NOT x.purged), "              \
      "r.pairs, r.wins + r.draws + r.losses, r.ll + r.ld + r.dd + r.wd + r.ww, "                 \
      "(SELECT count(*) FROM games g WHERE g.run_id = r.id), "                                   \
      "(SELECT count(*) FROM games g WHERE g.run_id = r.id AND (get_byte(g.record, 0) & 3) = "   \
      " CASE WHEN g.game % 2 = 0 THEN 1 ELSE 2 END), "                                           \
      "(SELECT count(*) FROM games g WHERE g.run_id = r.id AND (get_byte(g.record, 0) & 3) = 3), " \
      "r.wins, r.draws FROM runs r WHERE r.id = $1", 1)                                          \
    S(REPORTED, "SELECT r.pairs FROM unnest($1::bigint[], $2::bigint[]) WITH ORDINALITY AS u(task, token, i) " \
                "LEFT JOIN results r ON r.task_id = u.task AND r.lease_token = u.token ORDER BY u.i", 2) \
    S(LEASE_STARTS, "SELECT t.run_id, t.first_pair + r.base_pairs FROM unnest($1::bigint[], $2::bigint[]) " \
                    "WITH ORDINALITY AS u(task, token, i) LEFT JOIN results r ON r.task_id = u.task AND " \
                    "r.lease_token = u.token LEFT JOIN tasks t ON t.id = r.task_id ORDER BY u.i", 2) \
    S(WORKER_ID, "SELECT id FROM workers WHERE name = $1", 1)                                    \
    S(TASK_OF_RUN, "SELECT 1 FROM tasks WHERE id = $1 AND run_id = $2", 2)                       \
    S(RUN_LEASES, "SELECT coalesce(sum(attempts), 0), coalesce(sum(greatest(attempts - 1, 0)), 0), " \
                  "count(*) FILTER (WHERE last_error = 'lease expired'), "                       \
                  "count(*) FILTER (WHERE done_pairs > n_pairs) FROM tasks WHERE run_id = $1", 1) \
    S(RUN_COUNTED_LEASES, "SELECT x.lease_token FROM results x WHERE NOT x.purged AND x.pairs > 0 " \
                          "AND x.task_id = ANY (ARRAY(SELECT id FROM tasks WHERE run_id = $1)) ORDER BY 1", 1)

STORE_STATEMENTS(TASKS_STATEMENTS, store_statements_tasks);

int store_hello_capped(Store *s, const char *name, const char *build, int cores, int concurrency,
                       const char *auth, int names_max, int64_t *id)
{
    StoreNums n;
    const char *p[6] = { name, build, store_num(&n, 0, cores), store_num(&n, 1, concurrency), auth ? auth : "",
                         store_num(&n, 2, names_max) };
    PGresult *res = store_run(s, &STMT[ST_HELLO], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int ok = PQntuples(res) == 1 && !PQgetisnull(res, 0, 0);
    if (ok)
        *id = store_i64(res, 0, 0);
    PQclear(res);
    return ok && *id < 0 ? -2 : ok;
}

int store_hello(Store *s, const char *name, const char *build, int cores, int concurrency, const char *auth,
                int64_t *id)
{
    return store_hello_capped(s, name, build, cores, concurrency, auth, 0, id);
}

/* Reads the (o_task, o_token, o_first, o_pairs, o_params0, o_params1) columns from col of row. */
static void read_lease(const PGresult *res, int row, int col, int64_t run_id, StoreLease *out)
{
    out->task_id = store_i64(res, row, col);
    out->token = store_i64(res, row, col + 1);
    out->first_pair = store_i64(res, row, col + 2);
    out->pairs = store_i64(res, row, col + 3);
    out->run_id = run_id;
    store_text(res, row, col + 4, out->params0, sizeof out->params0);
    store_text(res, row, col + 5, out->params1, sizeof out->params1);
}

int store_claim_batch(Store *s, int64_t run_id, const int64_t *workers, int n, int64_t lease_ms,
                      StoreLease *out, bool *given)
{
    StoreNums nums;
    StoreText w = { 0 };
    store_text_ints(&w, workers, sizeof *workers, n);
    if (!w.data)
        return store_db_error(s, "claim: out of memory", NULL);
    const char *p[3] = { store_num(&nums, 0, run_id), w.data, store_num(&nums, 1, lease_ms) };
    PGresult *res = store_run(s, &STMT[ST_CLAIM], p, PGRES_TUPLES_OK);
    free(w.data);
    if (!res)
        return -1;
    for (int i = 0; i < n; i++)
        given[i] = false;
    int count = 0;
    for (int row = 0; row < PQntuples(res); row++) {
        int64_t idx = store_i64(res, row, 0) - 1;
        if (idx < 0 || idx >= n || given[idx])
            continue;
        read_lease(res, row, 1, run_id, &out[idx]);
        given[idx] = true;
        count++;
    }
    PQclear(res);
    return count;
}

int store_leased_counts(Store *s, const int64_t *workers, int n, int64_t *counts, int64_t *keys)
{
    StoreText w = { 0 };
    store_text_ints(&w, workers, sizeof *workers, n);
    if (!w.data)
        return store_db_error(s, "leased: out of memory", NULL);
    const char *p[1] = { w.data };
    /* planned at each call: a plan cached while few tasks were leased reads every leased task per worker */
    PGresult *res = store_run_planned(s, &STMT[ST_LEASED], p, PGRES_TUPLES_OK);
    free(w.data);
    if (!res)
        return -1;
    int rc = PQntuples(res) == n ? 0 : store_db_error(s, "leased: a row per worker expected", NULL);
    for (int i = 0; rc == 0 && i < n; i++) {
        counts[i] = store_i64(res, i, 0);
        keys[i] = store_i64(res, i, 1);
    }
    PQclear(res);
    return rc;
}

int store_create_task(Store *s, int64_t run_id, int64_t worker, int64_t lease_ms, const char *params0,
                      const char *params1, const char *perturbation_json, StoreLease *out)
{
    StoreNums n;
    const char *p[6] = { store_num(&n, 0, run_id), store_num(&n, 1, worker), store_num(&n, 2, lease_ms), params0,
                         params1, perturbation_json };
    PGresult *res = store_run(s, &STMT[ST_CREATE_TASK], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1 && !PQgetisnull(res, 0, 0);
    if (found)
        read_lease(res, 0, 0, run_id, out);
    PQclear(res);
    return found;
}

const char *store_report_text(StoreReport r)
{
    static const char *const TEXT[] = { "accepted", "duplicate", "stale", "invalid" };
    return (unsigned)r < 4 ? TEXT[r] : "?";
}

/*
 * The letter of each pair of a report's records (021_report_records.sql),
 * the first player's view: a WW, b WD, c WL, d DD, e DL, f LL.  The pair's
 * first game has the first player as Red (worker/daemon/task.c).  A malloc'd
 * string, or NULL when a record has no result or out of memory.
 */
static char *pair_codes(const StoreReportItem *it)
{
    int64_t n = it->counts.pairs - it->games_from;
    char *codes = malloc((size_t)(n > 0 ? n : 0) + 1);
    if (!codes)
        return NULL;
    size_t off = 0, len;
    const uint8_t *rec;
    int points[2] = { 0, 0 }, draws = 0;   /* the pair's wins and losses of the first player, and draws */
    int64_t k = 0;
    while (k < 2 * n && xqf_games_next(it->games, it->games_len, &off, &rec, &len) > 0) {
        int result = rec[0] & XQF_GAME_RESULT;   /* 1 Red won, 2 Black won, 3 draw */
        bool first_red = k % 2 == 0;
        if (result == 0) {
            free(codes);
            return NULL;
        }
        if (result == 3)
            draws++;
        else
            points[(result == 1) == first_red ? 0 : 1]++;
        if (k % 2 == 1) {
            static const char CODE[3][3] = { { 'f', 'e', 'd' }, { 'c', 'b', 0 }, { 'a', 0, 0 } };
            codes[k / 2] = CODE[points[0]][draws];
            points[0] = points[1] = draws = 0;
        }
        k++;
    }
    codes[n > 0 ? n : 0] = '\0';
    return codes;
}

/* One xqf_report_batch call over the items listed in idx (their tasks distinct). 0 or -1. */
static int report_round(Store *s, StoreReportItem *items, const int *idx, int n, int64_t lease_ms)
{
    enum { COLUMNS = 15 };                 /* worker, task, token, 9 counts, reasons, games_from, pair codes */
    StoreText col[COLUMNS] = { { 0 } };
    for (int c = 0; c < COLUMNS; c++)
        store_text_add(&col[c], "{");
    for (int i = 0; i < n; i++) {
        const StoreReportItem *it = &items[idx[i]];
        const StoreCounts *x = &it->counts;
        const int64_t v[COLUMNS - 3] = { it->worker, it->task, it->token, x->pairs, x->wins, x->draws,
                                         x->losses, x->penta[0], x->penta[1], x->penta[2],
                                         x->penta[3], x->penta[4] };
        for (int c = 0; c < COLUMNS - 3; c++)
            store_text_add(&col[c], "%s%" PRId64, i ? "," : "", v[c]);
        store_text_add(&col[COLUMNS - 3], "%s\"{", i ? "," : "");
        for (int j = 0; j < x->nreasons; j++)
            store_text_add(&col[COLUMNS - 3], "%s%" PRId64, j ? "," : "", x->reasons[j]);
        store_text_add(&col[COLUMNS - 3], "}\"");
        store_text_add(&col[COLUMNS - 2], "%s%" PRId64, i ? "," : "", it->games_from);
        char *codes = pair_codes(it);      /* letters a-f only: no quoting needed beyond the quotes */
        store_text_add(&col[COLUMNS - 1], "%s\"%s\"", i ? "," : "", codes ? codes : "-");
        free(codes);
    }
    bool ok = true;
    for (int c = 0; c < COLUMNS; c++) {
        store_text_add(&col[c], "}");
        ok = ok && col[c].data;
    }
    StoreNums nums;
    int rc = -1;
    if (ok) {
        const char *p[COLUMNS + 1];
        for (int c = 0; c < COLUMNS; c++)
            p[c] = col[c].data;
        p[COLUMNS] = store_num(&nums, 0, lease_ms);
        PGresult *res = store_run(s, &STMT[ST_REPORT], p, PGRES_TUPLES_OK);
        if (res) {
            for (int row = 0; row < PQntuples(res); row++) {
                int64_t i = store_i64(res, row, 0) - 1;
                if (i < 0 || i >= n)
                    continue;
                StoreReportItem *it = &items[idx[i]];
                const char *st = PQgetvalue(res, row, 1);
                it->status = strcmp(st, "accepted") == 0 ? REPORT_ACCEPTED
                           : strcmp(st, "duplicate") == 0 ? REPORT_DUPLICATE
                           : strcmp(st, "invalid") == 0 ? REPORT_INVALID : REPORT_STALE;
                it->run = PQgetisnull(res, row, 2) ? 0 : store_i64(res, row, 2);
                it->task_done = strcmp(PQgetvalue(res, row, 3), "t") == 0;
            }
            PQclear(res);
            rc = 0;
        }
    } else {
        store_db_error(s, "report: out of memory", NULL);
    }
    for (int c = 0; c < COLUMNS; c++)
        free(col[c].data);
    return rc;
}

/*
 * A report carries a record of each game of its pairs from games_from on:
 * a result without them would be counted, never stored and never audited.
 */
static bool report_games_consistent(const StoreReportItem *it)
{
    return it->games_from >= 0 && it->games_from <= it->counts.pairs &&
           xqf_games_count(it->games, it->games_len) == 2 * (it->counts.pairs - it->games_from);
}

/*
 * Marks invalid (and done) the items of a batch not done yet whose records
 * start past the pairs their lease had reported before it (their games
 * would be counted without records), in one statement over those with
 * games_from > 0.  The pairs of a lease only grow, so what is read here
 * still holds when the report is judged.  Returns the items so marked, or
 * -1.
 */
static int report_games_start(Store *s, StoreReportItem *items, int n, bool *done)
{
    StoreText task = { 0 }, token = { 0 };
    int *of = malloc(sizeof *of * (size_t)(n > 0 ? n : 1)), m = 0, marked = 0;
    store_text_add(&task, "{");
    store_text_add(&token, "{");
    for (int i = 0; of && i < n; i++) {
        if (done[i] || items[i].games_from == 0)
            continue;
        store_text_add(&task, "%s%" PRId64, m ? "," : "", items[i].task);
        store_text_add(&token, "%s%" PRId64, m ? "," : "", items[i].token);
        of[m++] = i;
    }
    store_text_add(&task, "}");
    store_text_add(&token, "}");
    PGresult *res = NULL;
    if (!of || !task.data || !token.data) {
        marked = store_db_error(s, "report: out of memory", NULL);
    } else if (m > 0) {
        const char *p[2] = { task.data, token.data };
        res = store_run_planned(s, &STMT[ST_REPORTED], p, PGRES_TUPLES_OK); /* as ST_LEASED */
        marked = res && PQntuples(res) == m ? 0 : -1;
    }
    for (int k = 0; marked >= 0 && k < m; k++) {
        StoreReportItem *it = &items[of[k]];
        if (!PQgetisnull(res, k, 0) && it->games_from > store_i64(res, k, 0)) {
            it->status = REPORT_INVALID;
            done[of[k]] = true;
            marked++;
        }
    }
    PQclear(res);
    free(of);
    free(task.data);
    free(token.data);
    return marked;
}

int store_worker_id(Store *s, const char *name, int64_t *id)
{
    const char *p[1] = { name };
    return store_id_of(s, &STMT[ST_WORKER_ID], p, id);
}

int store_task_of_run(Store *s, int64_t task, int64_t run_id)
{
    StoreNums n;
    const char *p[2] = { store_num(&n, 0, task), store_num(&n, 1, run_id) };
    PGresult *res = store_run(s, &STMT[ST_TASK_OF_RUN], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    PQclear(res);
    return found;
}

/*
 * Stores the records of the accepted items of a batch (checked by
 * report_games_consistent) in one statement (xqf_games_batch).  Each
 * report's count is the games its lease now counts (2 pairs) and each
 * record's k its place among them, so records from games_from on land on
 * their games; those stored by an earlier report stay as they are.  0 or -1.
 */
static int report_games(Store *s, const StoreReportItem *items, int n)
{
    StoreText task = { 0 }, token = { 0 }, count = { 0 }, item = { 0 }, k = { 0 }, off = { 0 }, len = { 0 };
    StoreText *arrays[] = { &task, &token, &count, &item, &k, &off, &len };
    size_t total = 0;
    int reports = 0;
    for (int i = 0; i < n; i++)
        if (items[i].status == REPORT_ACCEPTED && items[i].games_len > 0)
            total += items[i].games_len;
    uint8_t *all = malloc(total ? total : 1);
    for (size_t a = 0; a < sizeof arrays / sizeof arrays[0]; a++)
        store_text_add(arrays[a], "{");
    size_t at = 0;
    int records = 0;
    for (int i = 0; all && i < n; i++) {
        const StoreReportItem *it = &items[i];
        if (it->status != REPORT_ACCEPTED || it->games_len == 0)
            continue;
        memcpy(all + at, it->games, it->games_len);
        size_t pos = 0, rlen;
        const uint8_t *rec;
        int in_report = 0;
        while (xqf_games_next(it->games, it->games_len, &pos, &rec, &rlen) > 0) {
            in_report++;
            store_text_add(&item, "%s%d", records ? "," : "", reports + 1);
            /* k: the game's place among the lease's games (1-based), its records starting at games_from */
            store_text_add(&k, "%s%" PRId64, records ? "," : "", 2 * it->games_from + in_report);
            store_text_add(&off, "%s%zu", records ? "," : "", at + (size_t)(rec - it->games));
            store_text_add(&len, "%s%zu", records ? "," : "", rlen);
            records++;
        }
        store_text_add(&task, "%s%lld", reports ? "," : "", (long long)it->task);
        store_text_add(&token, "%s%lld", reports ? "," : "", (long long)it->token);
        store_text_add(&count, "%s%" PRId64, reports ? "," : "", 2 * it->counts.pairs);
        reports++;
        at += it->games_len;
    }
    bool ok = all && total <= INT32_MAX;
    for (size_t a = 0; a < sizeof arrays / sizeof arrays[0]; a++) {
        store_text_add(arrays[a], "}");
        ok = ok && arrays[a]->data;
    }
    int rc = -1;
    if (!ok) {
        store_db_error(s, "report games: out of memory", NULL);
    } else if (reports == 0) {
        rc = 0;
    } else {
        const char *p[8] = { task.data, token.data, count.data, (const char *)all, item.data, k.data, off.data,
                             len.data };
        const int lengths[8] = { 0, 0, 0, (int)total, 0, 0, 0, 0 }, formats[8] = { 0, 0, 0, 1, 0, 0, 0, 0 };
        PGresult *res = !store_connected(s) ? NULL : store_exec_prepared(s, &STMT[ST_GAMES], 8, p, lengths, formats, 0);
        rc = PQresultStatus(res) == PGRES_TUPLES_OK ? 0 : store_db_error(s, STMT[ST_GAMES].name, res);
        PQclear(res);
    }
    for (size_t a = 0; a < sizeof arrays / sizeof arrays[0]; a++)
        free(arrays[a]->data);
    free(all);
    return rc;
}

int store_report_batch(Store *s, StoreReportItem *items, int n, int64_t lease_ms)
{
    int *idx = malloc(sizeof *idx * (size_t)(n > 0 ? n : 1));
    bool *done = calloc((size_t)(n > 0 ? n : 1), sizeof *done);
    int rc = idx && done ? 0 : store_db_error(s, "report: out of memory", NULL);
    int left = n;
    for (int i = 0; i < n; i++) {
        items[i].status = REPORT_STALE;
        items[i].run = 0;
        items[i].task_done = false;
        const StoreCounts *c = &items[i].counts;
        if (done && (!xqf_penta_consistent(c->pairs, c->wins, c->draws, c->losses, c->penta) ||
                     !report_games_consistent(&items[i]))) {
            items[i].status = REPORT_INVALID;   /* pairs that are not the games: never stored */
            done[i] = true;
            left--;
        }
    }
    int late = rc == 0 ? report_games_start(s, items, n, done) : 0;
    rc = late < 0 ? -1 : rc;
    left -= late > 0 ? late : 0;
    /* Rounds in arrival order, each with a task at most once (a repeat waits for the next). */
    while (rc == 0 && left > 0) {
        int m = 0;
        for (int i = 0; i < n; i++) {
            if (done[i])
                continue;
            bool repeat = false;
            for (int j = 0; j < i && !repeat; j++)
                repeat = !done[j] && items[j].task == items[i].task;
            if (!repeat)
                idx[m++] = i;
        }
        rc = report_round(s, items, idx, m, lease_ms);
        for (int j = 0; j < m; j++)
            done[idx[j]] = true;
        left -= m;
    }
    if (rc == 0)
        rc = report_games(s, items, n);
    free(idx);
    free(done);
    return rc;
}

int store_lease_starts(Store *s, const StoreReportItem *items, int n, int64_t *run_of, int64_t *first)
{
    StoreText task = { 0 }, token = { 0 };
    store_text_add(&task, "{");
    store_text_add(&token, "{");
    for (int i = 0; i < n; i++) {
        store_text_add(&task, "%s%" PRId64, i ? "," : "", items[i].task);
        store_text_add(&token, "%s%" PRId64, i ? "," : "", items[i].token);
    }
    store_text_add(&task, "}");
    store_text_add(&token, "}");
    int rc = -1;
    if (!task.data || !token.data) {
        store_db_error(s, "lease starts: out of memory", NULL);
    } else {
        const char *p[2] = { task.data, token.data };
        PGresult *res = store_run_planned(s, &STMT[ST_LEASE_STARTS], p, PGRES_TUPLES_OK); /* as ST_LEASED */
        if (res && PQntuples(res) == n) {
            for (int i = 0; i < n; i++) {
                bool known = !PQgetisnull(res, i, 0);
                run_of[i] = known ? store_i64(res, i, 0) : 0;
                first[i] = known ? store_i64(res, i, 1) : 0;
            }
            rc = 0;
        }
        PQclear(res);
    }
    free(task.data);
    free(token.data);
    return rc;
}

int store_handback(Store *s, int64_t worker, int64_t task, int64_t token, const char *reason, bool refused,
                   int quarantine_after)
{
    StoreNums n;
    const char *p[6] = { store_num(&n, 0, worker), store_num(&n, 1, task), store_num(&n, 2, token), reason, refused ? "t" : "f",
                         store_num(&n, 3, quarantine_after) };
    PGresult *res = store_run(s, &STMT[ST_HANDBACK], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    const char *v = PQntuples(res) == 1 ? PQgetvalue(res, 0, 0) : "";
    int rc = strcmp(v, "ok") == 0 ? 1 : strcmp(v, "quarantined") == 0 ? 2 : 0;
    PQclear(res);
    return rc;
}

int store_quarantined(Store *s, int64_t run_id, StoreQuarantined **out)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, run_id) };
    PGresult *res = store_run(s, &STMT[ST_QUARANTINED], p, PGRES_TUPLES_OK);
    *out = NULL;
    if (!res)
        return -1;
    int count = PQntuples(res);
    if (count > 0 && !(*out = calloc((size_t)count, sizeof **out))) {
        PQclear(res);
        return store_db_error(s, "quarantined: out of memory", NULL);
    }
    for (int i = 0; i < count; i++) {
        StoreQuarantined *q = &(*out)[i];
        q->task = store_i64(res, i, 0);
        q->first_pair = store_i64(res, i, 1);
        q->pairs = store_i64(res, i, 2);
        q->refusals = store_i64(res, i, 3);
        store_text(res, i, 4, q->reasons, sizeof q->reasons);
    }
    PQclear(res);
    return count;
}

int64_t store_expire_given(Store *s, const int64_t *tasks, const int64_t *tokens, int n)
{
    StoreText t = { 0 }, k = { 0 };
    store_text_ints(&t, tasks, sizeof *tasks, n);
    store_text_ints(&k, tokens, sizeof *tokens, n);
    int64_t rc = -1;
    if (t.data && k.data) {
        const char *p[2] = { t.data, k.data };
        rc = store_count_of(s, &STMT[ST_EXPIRE_GIVEN], p);
    } else {
        store_db_error(s, "expire: out of memory", NULL);
    }
    free(t.data);
    free(k.data);
    return rc;
}

int store_leases_held(Store *s, StoreHeldLease **out)
{
    int count;
    PGresult *res = store_fetch_rows(s, &STMT[ST_LEASES_HELD], NULL, sizeof **out, (void **)out, &count);
    if (!res)
        return -1;
    for (int i = 0; i < count; i++)
        (*out)[i] = (StoreHeldLease){ .task = store_i64(res, i, 0), .token = store_i64(res, i, 1),
                                      .worker = store_i64(res, i, 2) };
    PQclear(res);
    return count;
}

int store_list_workers(Store *s, int seconds, StoreWorker **out)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, seconds) };
    int count;
    PGresult *res = store_fetch_rows(s, &STMT[ST_LIST_WORKERS], p, sizeof **out, (void **)out, &count);
    if (!res)
        return -1;
    for (int i = 0; i < count; i++) {
        StoreWorker *w = &(*out)[i];
        w->id = store_i64(res, i, 0);
        store_text(res, i, 1, w->name, sizeof w->name);
        store_text(res, i, 2, w->build_id, sizeof w->build_id);
        w->cores = (int)store_i64(res, i, 3);
        w->concurrency = (int)store_i64(res, i, 4);
        w->pairs = store_i64(res, i, 5);
        w->leased = store_i64(res, i, 6);
        w->idle_s = store_get_dbl(res, i, 7);
    }
    PQclear(res);
    return count;
}

int store_audit_run(Store *s, int64_t run_id, StoreAudit *out)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, run_id) };
    PGresult *res = store_run(s, &STMT[ST_AUDIT], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found) {
        int64_t *v[] = { &out->tasks, &out->tasks_done, &out->max_attempts, &out->task_pairs,
                         &out->task_games, &out->result_pairs, &out->result_games, &out->run_pairs,
                         &out->run_games, &out->run_penta, &out->stored_games, &out->stored_wins,
                         &out->stored_draws, &out->run_wins, &out->run_draws };
        for (int i = 0; i < 15; i++)
            *v[i] = store_i64(res, 0, i);
    }
    PQclear(res);
    return found;
}

int store_run_leases(Store *s, int64_t run_id, StoreLeases *out)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, run_id) };
    PGresult *res = store_run(s, &STMT[ST_RUN_LEASES], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    *out = (StoreLeases){ .leases = store_i64(res, 0, 0), .requeued = store_i64(res, 0, 1),
                          .expired_tasks = store_i64(res, 0, 2), .tasks_over = store_i64(res, 0, 3) };
    PQclear(res);
    return 0;
}

int store_run_counted_leases(Store *s, int64_t run_id, int64_t **tokens)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, run_id) };
    int count;
    PGresult *res = store_fetch_rows(s, &STMT[ST_RUN_COUNTED_LEASES], p, sizeof **tokens, (void **)tokens, &count);
    if (!res)
        return -1;
    for (int i = 0; i < count; i++)
        (*tokens)[i] = store_i64(res, i, 0);
    PQclear(res);
    return count;
}

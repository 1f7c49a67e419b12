/*
 * store_games.c - every run's stored games and their audits
 * (store_games.h, 014_games.sql): records read back (a report stores its
 * own, store_tasks.c), the workers' trust (residuals, faults, replay
 * audits), and the purge of a worker's results.
 */

#include "store_games.h"
#include "store_test.h"
#include "store_internal.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "games.h"
#include "residual.h"

#define GAMES_STATEMENTS(S)                                                                      \
    S(GAMES_READ, "SELECT g.game, xqf_game_full(g.record, f.fen) FROM games g "                  \
                  "JOIN game_fens f ON f.id = g.fen_id WHERE g.run_id = $1 AND g.game >= $2 "    \
                  "AND ($4::bigint = 0 OR g.worker_id = $4) AND ($5::bigint = 0 OR EXISTS "      \
                  "(SELECT 1 FROM tasks t WHERE t.id = $5 AND t.run_id = g.run_id AND "          \
                  "g.game / 2 >= t.first_pair AND g.game / 2 < t.first_pair + t.n_pairs)) "      \
                  "ORDER BY g.game LIMIT $3", 5)                                                 \
    S(GAMES_TOTALS, "SELECT count(*), coalesce(sum(xqf_game_plies(record)), 0)::bigint, "        \
                    "coalesce(sum(pg_column_size(g.*)), 0)::bigint, "                            \
                    "coalesce((SELECT sum(octet_length(f.fen) + 5) FROM game_fens f WHERE f.id IN " \
                    "(SELECT fen_id FROM games WHERE run_id = $1)), 0)::bigint "                 \
                    "FROM games g WHERE run_id = $1", 1)                                         \
    S(GAME_SCORES, "SELECT game_scores FROM runs WHERE id = $1", 1)                              \
    S(RUN_WORKERS,                                                                               \
      "WITH x AS (SELECT x.worker_id, sum(x.pairs) AS pairs, sum(x.ll) AS ll, sum(x.ld) AS ld, " \
      " sum(x.dd) AS dd, sum(x.wd) AS wd, sum(x.ww) AS ww, sum(x.reasons[10]) AS time_losses, "  \
      " sum(x.reasons[11]) AS illegal, sum(x.reasons[13]) AS crashes, "                          \
      " count(*) FILTER (WHERE x.expired) AS expired FROM results x "                            \
      " WHERE x.task_id = ANY (ARRAY(SELECT id FROM tasks WHERE run_id = $1)) AND NOT x.purged " \
      " GROUP BY x.worker_id), "   /* ANY(ARRAY): a lookup per task, not a scan of every result */ \
      /* an audit's blame (036_audit_arbiter.sql): both of a mismatch's workers until a third */ \
      /* replay decides; then the liar only; the third worker replayed, blamed for nothing */    \
      "a AS (SELECT u.w AS worker_id, count(*) AS audits, count(*) FILTER (WHERE u.blamed) "     \
      " AS mismatches, string_agg(CASE WHEN u.blamed THEN 'pair ' || a.pair || ' (' || "         \
      " a.detail || ')' END, '; ' ORDER BY a.pair) AS pairs FROM replay_audits a, "              \
      " LATERAL (VALUES (a.first_worker, a.state = 'mismatch'), (a.second_worker, "              \
      " a.state = 'auditor_lied' OR (a.state = 'mismatch' AND a.arbiter IS DISTINCT FROM 'auditor')), " \
      " (CASE WHEN a.arbiter IN ('original', 'auditor', 'neither') THEN a.third_worker END, false)) " \
      " AS u(w, blamed) WHERE a.run_id = $1 AND u.w IS NOT NULL "                                \
      " AND a.state IN ('agree', 'mismatch', 'auditor_lied') GROUP BY u.w), "                    \
      /* a worker's last search audit of the run (051: xqf-tune audit) */                        \
      "sa AS (SELECT DISTINCT ON (worker_id) worker_id, verdict, agree, positions FROM "         \
      " search_audits WHERE run_id = $1 ORDER BY worker_id, id DESC) "                           \
      "SELECT w.id, w.name, coalesce(x.pairs, 0), coalesce(x.ll, 0), coalesce(x.ld, 0), "        \
      "coalesce(x.dd, 0), coalesce(x.wd, 0), coalesce(x.ww, 0), "                                \
      "coalesce(x.time_losses, 0), coalesce(x.illegal, 0), coalesce(x.crashes, 0), "             \
      "coalesce(x.expired, 0), "                                                                 \
      "coalesce(a.audits, 0), coalesce(a.mismatches, 0), coalesce(a.pairs, ''), "                \
      "coalesce(sa.verdict, ''), coalesce(sa.agree, 0), coalesce(sa.positions, 0) FROM workers w " \
      "LEFT JOIN x ON x.worker_id = w.id LEFT JOIN a ON a.worker_id = w.id "                     \
      "LEFT JOIN sa ON sa.worker_id = w.id "                                                     \
      "WHERE x.worker_id IS NOT NULL OR a.worker_id IS NOT NULL ORDER BY w.name", 1)             \
    S(REPLAY_TOTALS, "SELECT replay_share, nodes > 0, "                                          \
                     "(SELECT count(*) FROM replay_audits a WHERE a.run_id = r.id AND a.state IN ('pending', 'leased')), " \
                     "(SELECT count(*) FROM replay_audits a WHERE a.run_id = r.id "              \
                     " AND a.state IN ('agree', 'auditor_lied')), "                              \
                     "(SELECT count(*) FROM replay_audits a WHERE a.run_id = r.id AND a.state = 'mismatch') " \
                     "FROM runs r WHERE r.id = $1", 1)                                           \
    S(SET_REPLAY_SHARE, "UPDATE runs SET replay_share = $2 WHERE id = $1", 2)                    \
    S(OPEN_AUDITS, "SELECT xqf_open_audits()", 0)                                                \
    S(CLAIM_AUDIT, "SELECT * FROM xqf_claim_audit($1, $2, $3)", 3)                               \
    S(AUDIT_REPORT, "SELECT xqf_audit_report($1, $2, $3, $4, $5::integer[], $6::integer[])", 6)  \
    S(AUDIT_START, "SELECT run_id, pair FROM replay_audits "                                     \
                   "WHERE id = $1 AND xqf_audit_held(replay_audits, $2, $3)", 3)                 \
    S(AUDIT_HEARTBEAT, "SELECT xqf_audit_heartbeat($1, $2, $3, $4)", 4)                          \
    S(AUDIT_HANDBACK, "SELECT xqf_audit_handback($1, $2, $3)", 3)                                \
    S(PURGE, "SELECT * FROM xqf_purge_worker($1, $2)", 2)                                        \
    S(PURGE_DONE, "SELECT xqf_purge_done($1, $2, $3, $4, $5)", 5)                                \
    S(SET_GAME_SCORES, "UPDATE runs SET game_scores = $2 WHERE id = $1", 2)                      \
    S(SEARCH_AUDIT_ADD, "INSERT INTO search_audits (run_id, worker_id, depth, positions, agree, honest, " \
                        "llr, verdict, plies) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)", 9)                 \
    /* the workers due for a search audit (056): of runs not replayed (a clock, or several threads) */ \
    /* that are active or ended after their last search audit, each worker whose games hold $1 plies */ \
    /* more than at its last audit (any more once the run ended: its last games are audited too) */ \
    S(SEARCH_AUDIT_DUE,                                                                          \
      "WITH r AS (SELECT r.id, r.state = 'active' AS active FROM runs r WHERE (r.nodes = 0 OR r.threads > 1) " \
      " AND (r.state = 'active' OR (r.state IN ('finished', 'stopped') AND r.finished_at > coalesce(" \
      " (SELECT max(a.at) FROM search_audits a WHERE a.run_id = r.id), '-infinity')))), "       \
      "g AS (SELECT g.run_id, g.worker_id, sum(xqf_game_plies(g.record))::bigint AS plies FROM games g " \
      " WHERE g.run_id IN (SELECT id FROM r) AND g.worker_id <> 0 GROUP BY 1, 2), "              \
      "l AS (SELECT DISTINCT ON (run_id, worker_id) run_id, worker_id, plies FROM search_audits " \
      " WHERE run_id IN (SELECT id FROM r) ORDER BY run_id, worker_id, id DESC) "                \
      "SELECT g.run_id, g.worker_id, g.plies, coalesce(l.plies, 0) FROM g JOIN r ON r.id = g.run_id " \
      "LEFT JOIN l ON l.run_id = g.run_id AND l.worker_id = g.worker_id "                        \
      "WHERE g.plies - coalesce(l.plies, 0) >= $1 OR (NOT r.active AND g.plies > coalesce(l.plies, 0)) " \
      "ORDER BY g.run_id, g.worker_id", 1)                                                       \
    S(SEARCH_PASS_BEGIN, "INSERT INTO search_audit_passes DEFAULT VALUES RETURNING id", 0)       \
    S(SEARCH_PASS_END, "UPDATE search_audit_passes SET finished_at = now(), runs = $2, workers = $3, " \
                       "flagged = $4 WHERE id = $1", 4)                                          \
    S(TASK_SETS, "SELECT id, params0, params1 FROM tasks WHERE run_id = $1 AND first_pair <= $2 " \
                 "AND $2 < first_pair + n_pairs ORDER BY id LIMIT 1", 2)

STORE_STATEMENTS(GAMES_STATEMENTS, store_statements_games);

/*
 * The offsets and lengths of the records of games (well formed: checked
 * before) as two array literals in *off and *len (malloc'd). 0 or -1.
 */
static int record_arrays(const uint8_t *games, size_t games_len, StoreText *off, StoreText *len)
{
    size_t at = 0, n;
    const uint8_t *rec;
    *off = (StoreText){ 0 };
    *len = (StoreText){ 0 };
    store_text_add(off, "{");
    store_text_add(len, "{");
    for (int k = 0; xqf_games_next(games, games_len, &at, &rec, &n) > 0; k++) {
        store_text_add(off, "%s%zu", k ? "," : "", (size_t)(rec - games));
        store_text_add(len, "%s%zu", k ? "," : "", n);
    }
    store_text_add(off, "}");
    store_text_add(len, "}");
    return off->data && len->data && games_len <= INT32_MAX ? 0 : -1;
}

/*
 * Runs st with parameters p[0..n) whose p[bin] are the bytes of games
 * (games_len) and the next two the arrays of its records. The result, or
 * NULL after db_error.
 */
static PGresult *run_records(Store *s, const StoreStatement *st, const char **p, int n, int bin, const uint8_t *games,
                             size_t games_len)
{
    StoreText off, len;
    PGresult *res = NULL;
    if (record_arrays(games, games_len, &off, &len) != 0) {
        store_db_error(s, "game records: out of memory", NULL);
    } else {
        int lengths[8] = { 0 }, formats[8] = { 0 };
        p[bin] = (const char *)games;
        p[bin + 1] = off.data;
        p[bin + 2] = len.data;
        lengths[bin] = (int)games_len;
        formats[bin] = 1;
        res = !store_connected(s) ? NULL : store_exec_prepared(s, st, n, p, lengths, formats, 0);
        if (PQresultStatus(res) != PGRES_TUPLES_OK) {
            store_db_error(s, st->name, res);
            PQclear(res);
            res = NULL;
        }
    }
    free(off.data);
    free(len.data);
    return res;
}

int store_game_totals(Store *s, int64_t id, StoreGameTotals *out)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, id) };
    PGresult *res = store_run(s, &STMT[ST_GAMES_TOTALS], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    *out = (StoreGameTotals){ store_i64(res, 0, 0), store_i64(res, 0, 1), store_i64(res, 0, 2), store_i64(res, 0, 3) };
    PQclear(res);
    return 0;
}

int store_game_scores(Store *s, int64_t id)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, id) };
    PGresult *res = store_run(s, &STMT[ST_GAME_SCORES], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int on = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    PQclear(res);
    return on;
}

int store_set_game_scores(Store *s, int64_t id, bool on)
{
    StoreNums n;
    const char *p[2] = { store_num(&n, 0, id), on ? "t" : "f" };
    PGresult *res = store_run(s, &STMT[ST_SET_GAME_SCORES], p, PGRES_COMMAND_OK);
    int rc = res ? 0 : -1;
    PQclear(res);
    return rc;
}

int store_run_workers(Store *s, int64_t id, StoreWorkerTrust **out)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, id) };
    int count;
    PGresult *res = store_fetch_rows(s, &STMT[ST_RUN_WORKERS], p, sizeof **out, (void **)out, &count);
    if (!res)
        return -1;
    XqfResidualRow *rows = calloc((size_t)(count > 0 ? count : 1), sizeof *rows);
    if (!rows) {
        PQclear(res);
        free(*out);
        *out = NULL;
        return store_db_error(s, "run workers: out of memory", NULL);
    }
    for (int i = 0; i < count; i++) {
        StoreWorkerTrust *w = &(*out)[i];
        w->worker_id = store_i64(res, i, 0);
        store_text(res, i, 1, w->name, sizeof w->name);
        w->pairs = store_i64(res, i, 2);
        for (int k = 0; k < 5; k++)
            rows[i].penta[k] = w->penta[k] = store_i64(res, i, 3 + k);
        /* the three reasons trust counts, summed in SQL (1-based: STORE_REASON_* + 1): no array aggregate */
        _Static_assert(STORE_REASON_TIME_FORFEIT == 9 && STORE_REASON_ILLEGAL_MOVE == 10 && STORE_REASON_CRASH == 12,
                       "RUN_WORKERS' reasons[10], [11], [13]");
        w->games = 2 * w->pairs;
        w->time_losses = store_i64(res, i, 8);
        w->illegal_moves = store_i64(res, i, 9);
        w->crashes = store_i64(res, i, 10);
        w->disconnects = store_i64(res, i, 11);
        w->replays = store_i64(res, i, 12);
        w->mismatches = store_i64(res, i, 13);
        store_text(res, i, 14, w->mismatched, sizeof w->mismatched);
        store_text(res, i, 15, w->search_verdict, sizeof w->search_verdict);
        w->search_agree = store_i64(res, i, 16);
        w->search_positions = store_i64(res, i, 17);
    }
    PQclear(res);
    xqf_residuals(rows, count, NULL, NULL);
    for (int i = 0; i < count; i++) {
        StoreWorkerTrust *w = &(*out)[i];
        w->residual = rows[i].z;
        w->flagged = (rows[i].used && rows[i].z > XQF_RESIDUAL_FLAG) ||
                     xqf_faults_flag(w->games, w->crashes, w->time_losses) || w->mismatches > 0 ||
                     strcmp(w->search_verdict, "flagged") == 0;
    }
    free(rows);
    return count;
}

int store_replay_totals(Store *s, int64_t id, StoreReplayTotals *out)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, id) };
    PGresult *res = store_run(s, &STMT[ST_REPLAY_TOTALS], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found)
        *out = (StoreReplayTotals){ .share = store_get_dbl(res, 0, 0), .fixed_nodes = strcmp(PQgetvalue(res, 0, 1), "t") == 0,
                                    .open = store_i64(res, 0, 2), .agree = store_i64(res, 0, 3),
                                    .mismatch = store_i64(res, 0, 4) };
    PQclear(res);
    return found;
}

int store_search_audit_add(Store *s, int64_t run, int64_t worker, const StoreSearchAudit *a)
{
    StoreNums n;
    char honest[32], llr[32];
    snprintf(honest, sizeof honest, "%.17g", a->honest);
    snprintf(llr, sizeof llr, "%.17g", a->llr);
    const char *p[9] = { store_num(&n, 0, run), store_num(&n, 1, worker), store_num(&n, 2, a->depth),
                         store_num(&n, 3, a->positions), store_num(&n, 4, a->agree), honest, llr, a->verdict,
                         store_num(&n, 5, a->plies) };
    PGresult *res = store_run(s, &STMT[ST_SEARCH_AUDIT_ADD], p, PGRES_COMMAND_OK);
    int rc = res ? 0 : -1;
    PQclear(res);
    return rc;
}

int store_search_audit_due(Store *s, int64_t min_plies, StoreAuditDue **out)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, min_plies) };
    int count;
    PGresult *res = store_fetch_rows(s, &STMT[ST_SEARCH_AUDIT_DUE], p, sizeof **out, (void **)out, &count);
    if (!res)
        return -1;
    for (int i = 0; i < count; i++)
        (*out)[i] = (StoreAuditDue){ .run_id = store_i64(res, i, 0), .worker_id = store_i64(res, i, 1),
                                     .plies = store_i64(res, i, 2), .plies_before = store_i64(res, i, 3) };
    PQclear(res);
    return count;
}

int store_search_pass_begin(Store *s, int64_t *pass)
{
    PGresult *res = store_run(s, &STMT[ST_SEARCH_PASS_BEGIN], NULL, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    *pass = store_i64(res, 0, 0);
    PQclear(res);
    return 0;
}

int store_search_pass_end(Store *s, int64_t pass, int64_t runs, int64_t workers, int64_t flagged)
{
    StoreNums n;
    const char *p[4] = { store_num(&n, 0, pass), store_num(&n, 1, runs), store_num(&n, 2, workers),
                         store_num(&n, 3, flagged) };
    PGresult *res = store_run(s, &STMT[ST_SEARCH_PASS_END], p, PGRES_COMMAND_OK);
    int rc = res ? 0 : -1;
    PQclear(res);
    return rc;
}

int store_task_sets(Store *s, int64_t run, int64_t pair, int64_t *task, char *params0, char *params1, size_t size)
{
    StoreNums n;
    const char *p[2] = { store_num(&n, 0, run), store_num(&n, 1, pair) };
    PGresult *res = store_run(s, &STMT[ST_TASK_SETS], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found) {
        *task = store_i64(res, 0, 0);
        store_text(res, 0, 1, params0, size);
        store_text(res, 0, 2, params1, size);
    }
    PQclear(res);
    return found;
}

int store_set_replay_share(Store *s, int64_t id, double share)
{
    StoreNums n;
    char text[32];
    snprintf(text, sizeof text, "%.17g", share);
    const char *p[2] = { store_num(&n, 0, id), text };
    PGresult *res = store_run(s, &STMT[ST_SET_REPLAY_SHARE], p, PGRES_COMMAND_OK);
    int rc = res ? 0 : -1;
    PQclear(res);
    return rc;
}

int64_t store_open_audits(Store *s) { return store_count_of(s, &STMT[ST_OPEN_AUDITS], NULL); }

int store_claim_audit(Store *s, int64_t worker, const char *build, int64_t lease_ms, StoreAuditLease *out)
{
    StoreNums n;
    const char *p[3] = { store_num(&n, 0, worker), build, store_num(&n, 1, lease_ms) };
    PGresult *res = store_run(s, &STMT[ST_CLAIM_AUDIT], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found) {
        out->audit = store_i64(res, 0, 0);
        out->token = store_i64(res, 0, 1);
        out->run_id = store_i64(res, 0, 2);
        out->pair = store_i64(res, 0, 3);
        store_text(res, 0, 4, out->params0, sizeof out->params0);
        store_text(res, 0, 5, out->params1, sizeof out->params1);
    }
    PQclear(res);
    return found;
}

StoreAuditStatus store_audit_report(Store *s, int64_t worker, int64_t audit, int64_t token, const uint8_t *games,
                                    size_t games_len)
{
    if (xqf_games_count(games, games_len) != 2)
        return AUDIT_INVALID;
    StoreNums n;
    const char *p[6] = { store_num(&n, 0, audit), store_num(&n, 1, token), store_num(&n, 2, worker) };
    PGresult *res = run_records(s, &STMT[ST_AUDIT_REPORT], p, 6, 3, games, games_len);
    if (!res)
        return AUDIT_ERROR;
    const char *v = PQntuples(res) == 1 ? PQgetvalue(res, 0, 0) : "";
    StoreAuditStatus st = strcmp(v, "agree") == 0      ? AUDIT_AGREE
                          : strcmp(v, "mismatch") == 0 ? AUDIT_MISMATCH
                          : strcmp(v, "invalid") == 0  ? AUDIT_INVALID
                                                       : AUDIT_STALE;
    PQclear(res);
    return st;
}

int store_audit_start(Store *s, int64_t worker, int64_t audit, int64_t token, int64_t *run_id, int64_t *pair)
{
    StoreNums n;
    const char *p[3] = { store_num(&n, 0, audit), store_num(&n, 1, token), store_num(&n, 2, worker) };
    PGresult *res = store_run(s, &STMT[ST_AUDIT_START], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found) {
        *run_id = store_i64(res, 0, 0);
        *pair = store_i64(res, 0, 1);
    }
    PQclear(res);
    return found;
}

int store_audit_heartbeat(Store *s, int64_t worker, int64_t audit, int64_t token, int64_t lease_ms)
{
    StoreNums n;
    const char *p[4] = { store_num(&n, 0, audit), store_num(&n, 1, token), store_num(&n, 2, worker), store_num(&n, 3, lease_ms) };
    return store_ok_or_stale(s, &STMT[ST_AUDIT_HEARTBEAT], p);
}

int store_audit_handback(Store *s, int64_t worker, int64_t audit, int64_t token)
{
    StoreNums n;
    const char *p[3] = { store_num(&n, 0, audit), store_num(&n, 1, token), store_num(&n, 2, worker) };
    return store_ok_or_stale(s, &STMT[ST_AUDIT_HANDBACK], p);
}

int store_purge_worker(Store *s, int64_t id, int64_t worker, int64_t *pairs, int64_t *games)
{
    StoreNums n;
    const char *p[2] = { store_num(&n, 0, id), store_num(&n, 1, worker) };
    PGresult *res = store_run(s, &STMT[ST_PURGE], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    *pairs = store_i64(res, 0, 0);
    *games = store_i64(res, 0, 1);
    PQclear(res);
    return 0;
}

int store_purge_done(Store *s, int64_t id, double llr, bool reopen, const char *actor, const char *detail)
{
    StoreNums n;
    char llr_text[64];
    snprintf(llr_text, sizeof llr_text, "%.17g", llr);
    const char *p[5] = { store_num(&n, 0, id), isnan(llr) ? NULL : llr_text, reopen ? "t" : "f", actor, detail };
    PGresult *res = store_run(s, &STMT[ST_PURGE_DONE], p, PGRES_TUPLES_OK);
    int rc = res ? 0 : -1;
    PQclear(res);
    return rc;
}

int store_each_game(Store *s, int64_t id, int64_t task, int64_t worker,
                    int (*fn)(void *ctx, int64_t game, const uint8_t *rec, size_t len), void *ctx)
{
    enum { PAGE = 2000 };
    int64_t next = 0;
    for (;;) {
        StoreNums n;
        if (!store_connected(s))
            return store_db_error(s, STMT[ST_GAMES_READ].name, NULL);
        const char *p[5] = { store_num(&n, 0, id), store_num(&n, 1, next), store_num(&n, 2, PAGE), store_num(&n, 3, worker),
                             store_num(&n, 4, task) };
        /* binary results: the game a big-endian int8, the record its bytes */
        PGresult *res = store_exec_prepared(s, &STMT[ST_GAMES_READ], 5, p, NULL, NULL, 1);
        if (PQresultStatus(res) != PGRES_TUPLES_OK) {
            store_db_error(s, STMT[ST_GAMES_READ].name, res);
            PQclear(res);
            return -1;
        }
        int rows = PQntuples(res), rc = 0;
        for (int row = 0; rc == 0 && row < rows; row++) {
            const unsigned char *b = (const unsigned char *)PQgetvalue(res, row, 0);
            uint64_t v = 0;
            for (int i = 0; i < 8 && PQgetlength(res, row, 0) == 8; i++)
                v = v << 8 | b[i];
            next = (int64_t)v + 1;
            rc = fn(ctx, (int64_t)v, (const uint8_t *)PQgetvalue(res, row, 1), (size_t)PQgetlength(res, row, 1));
        }
        PQclear(res);
        if (rc != 0)
            return rc;
        if (rows < PAGE)
            return 0;
    }
}

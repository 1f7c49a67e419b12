/*
 * store_spsa.c - SPSA runs (store_spsa.h, 003_spsa.sql): created with
 * their tuned parameters, their state loaded, each task's perturbation
 * read, updates claimed once and theta saved with its history.
 */

#include "store_spsa.h"
#include "store_internal.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "run_kind.h"
#include "store_runs.h"

/*
 * The SPSA schedule's settings (run_settings.def's SPSA group) are kept in
 * the run's settings JSON under their store names, each read back with its
 * default for a run made before it existed: a new one is its line in the
 * table, and where it acts.
 */
#define SCHEDULE_SELECT(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, store, \
                        ctype, shown)                                                                             \
    ", coalesce((settings->>'" #store "')::float8, " #def ")"
#define SCHEDULE_JSON(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, store, \
                      ctype, shown)                                                                             \
    len += (size_t)snprintf(settings + len, size - len, "\"" #store "\": %.17g, ", (double)sp->store);
#define SCHEDULE_READ(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, store, \
                      ctype, shown)                                                                             \
    out->store = (ctype)store_get_dbl(res, 0, col++);
#define SCHEDULE_COUNT(...) +1

/* A jsonb array of numbers as comma-separated text, in order. */
#define JSON_LIST(key)                                                                           \
    "(SELECT string_agg(x, ',' ORDER BY i) FROM jsonb_array_elements_text(perturbation->'" key   \
    "') WITH ORDINALITY AS u(x, i))"

#define SPSA_STATEMENTS(S)                                                                       \
    S(SPSA_PARAMS_ADD, "SELECT xqf_create_spsa_params($1, $2::text[], $3::float8[], $4::float8[], " \
                       "$5::float8[], $6::float8[], $7::float8[])", 7)                           \
    S(SPSA_RUN, "SELECT iter, max_pairs, next_pair, seed, params0, "                              \
                "coalesce(settings->'floats', '[]')::text" RUN_SETTINGS_SPSA(SCHEDULE_SELECT)      \
                " FROM runs WHERE id = $1 AND kind = 'spsa'", 1)                                 \
    S(SPSA_PARAMS, "SELECT name, start, min, max, c_end, r_end, theta FROM run_params "          \
                   "WHERE run_id = $1 ORDER BY idx", 1)                                          \
    S(SPSA_TASK, "SELECT (perturbation->>'k')::bigint, done_pairs, wins, losses, "               \
                 JSON_LIST("flip") ", " JSON_LIST("c_k") ", " JSON_LIST("R_k")                   \
                 " FROM tasks WHERE id = $1 AND perturbation IS NOT NULL", 1)                    \
    S(SPSA_CLAIM, "SELECT xqf_spsa_claim_update($1)", 1)                                         \
    S(SPSA_SAVE,                                                                                 \
      "WITH u AS (UPDATE runs SET iter = $2 WHERE id = $1), "                                    \
      "p AS (UPDATE run_params rp SET theta = v.t FROM unnest($3::float8[]) WITH ORDINALITY "    \
      "AS v(t, i) WHERE rp.run_id = $1 AND rp.idx = v.i - 1) "                                   \
      "INSERT INTO run_param_history (run_id, iteration, idx, theta) "                           \
      "SELECT $1, $2, i - 1, t FROM unnest($3::float8[]) WITH ORDINALITY AS v(t, i)", 3)         \
    S(SPSA_HISTORY, "SELECT iteration, idx, theta FROM run_param_history WHERE run_id = $1 "     \
                    "ORDER BY iteration, idx", 1)

STORE_STATEMENTS(SPSA_STATEMENTS, store_statements_spsa);

/*
 * The tuned parameters of SPSA run id, created just now, in one call of
 * xqf_create_spsa_params (030_roles.sql): names as a text array, each
 * number column as an array literal.  0 or -1.
 */
static int add_spsa_params(Store *s, int64_t id, const StoreSpsaParam *params, int count)
{
    const char *names[STORE_SPSA_MAX];
    size_t size = (size_t)count * 26 + 3;
    char *cols[5] = { NULL }, *name_array;
    for (int i = 0; i < count; i++)
        names[i] = params[i].name;
    int rc = (name_array = store_text_array(names, count)) ? 0 : -1;
    for (int c = 0; rc == 0 && c < 5; c++) {
        if (!(cols[c] = malloc(size))) {
            rc = -1;
            break;
        }
        size_t len = 0;
        for (int i = 0; i < count; i++) {
            const StoreSpsaParam *q = &params[i];
            double v = c == 0 ? q->start : c == 1 ? q->min : c == 2 ? q->max : c == 3 ? q->c_end : q->r_end;
            len += (size_t)snprintf(cols[c] + len, size - len, "%c%.17g", i ? ',' : '{', v);
        }
        snprintf(cols[c] + len, size - len, "}");
    }
    if (rc == 0) {
        StoreNums n;
        const char *p[7] = { store_num(&n, 0, id), name_array, cols[0], cols[1], cols[2], cols[3], cols[4] };
        PGresult *res = store_run(s, &STMT[ST_SPSA_PARAMS_ADD], p, PGRES_TUPLES_OK);
        rc = res && atoi(PQgetvalue(res, 0, 0)) == count ? 0 : -1;
        if (res && rc != 0)
            log_error("database: SPSA parameters of run %" PRId64 " refused (not a new SPSA run)", id);
        PQclear(res);
    }
    free(name_array);
    for (int c = 0; c < 5; c++)
        free(cols[c]);
    return rc;
}

int store_create_spsa(Store *s, const StoreSpsaSpec *sp, int64_t *id)
{
    if (sp->count < 1 || sp->count > STORE_SPSA_MAX)
        return -1;
    /* the schedule, and the names of the float parameters (another engine's, played as decimals) */
    size_t size = 64 * (0 RUN_SETTINGS_SPSA(SCHEDULE_COUNT)) + 32 + (size_t)sp->count * (STORE_NAME_MAX + 4);
    char *settings = malloc(size);
    if (!settings)
        return -1;
    size_t len = (size_t)snprintf(settings, size, "{");
    RUN_SETTINGS_SPSA(SCHEDULE_JSON)
    len += (size_t)snprintf(settings + len, size - len, "\"floats\": [");
    for (int i = 0, n = 0; i < sp->count; i++)
        if (sp->params[i].is_float)
            len += (size_t)snprintf(settings + len, size - len, "%s\"%s\"", n++ ? ", " : "", sp->params[i].name);
    snprintf(settings + len, size - len, "]}");
    StoreSprtSpec common = sp->run;   /* one engine, both sides: another engine's SPSA plays its build */
    common.build_id = "";
    bool own_tx = !store_in_tx(s);
    if (own_tx && store_begin(s) != 0) {
        free(settings);
        return -1;
    }
    int rc = store_create_run(s, run_kind_get(RUN_KIND_SPSA), &common, settings, id);
    free(settings);
    if (rc == 0)
        rc = add_spsa_params(s, *id, sp->params, sp->count);
    if (own_tx) {
        if (rc == 0)
            return store_commit(s);
        store_rollback(s);
    }
    return rc;
}

/* Parses "1.5,-2,3e-4" into at most max doubles; returns the count. */
static int parse_doubles(const char *text, double *out, int max)
{
    int n = 0;
    const char *p = text;
    while (*p && n < max) {
        char *end;
        double v = strtod(p, &end);
        if (end == p)
            break;
        out[n++] = v;
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

int store_spsa_load(Store *s, int64_t run_id, StoreSpsa *out)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, run_id) };
    PGresult *res = store_run(s, &STMT[ST_SPSA_RUN], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found) {
        out->iter = store_i64(res, 0, 0);
        out->iterations = store_i64(res, 0, 1);
        out->next_pair = store_i64(res, 0, 2);
        out->seed = (uint64_t)store_i64(res, 0, 3);
        store_text(res, 0, 4, out->fixed, sizeof out->fixed);
        int col = 6;
        RUN_SETTINGS_SPSA(SCHEDULE_READ)
    }
    /* the float parameters' names, a JSON list of identifiers (each a task's set's name): found whole by quotes */
    char *floats = found ? strdup(PQgetvalue(res, 0, 5)) : NULL;
    PQclear(res);
    if (!found)
        return 0;
    if (!floats)
        return -1;
    if (!(res = store_run(s, &STMT[ST_SPSA_PARAMS], p, PGRES_TUPLES_OK))) {
        free(floats);
        return -1;
    }
    out->count = PQntuples(res) < STORE_SPSA_MAX ? PQntuples(res) : STORE_SPSA_MAX;
    for (int i = 0; i < out->count; i++) {
        StoreSpsaParam *q = &out->params[i];
        store_text(res, i, 0, q->name, sizeof q->name);
        q->start = store_get_dbl(res, i, 1);
        q->min = store_get_dbl(res, i, 2);
        q->max = store_get_dbl(res, i, 3);
        q->c_end = store_get_dbl(res, i, 4);
        q->r_end = store_get_dbl(res, i, 5);
        q->theta = store_get_dbl(res, i, 6);
        char quoted[STORE_NAME_MAX + 3];
        snprintf(quoted, sizeof quoted, "\"%s\"", q->name);
        q->is_float = strstr(floats, quoted) != NULL;
    }
    PQclear(res);
    free(floats);
    return 1;
}

int store_spsa_task(Store *s, int64_t task, StoreSpsaTask *out)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, task) };
    PGresult *res = store_run(s, &STMT[ST_SPSA_TASK], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1 && !PQgetisnull(res, 0, 0);
    if (found) {
        out->k = store_i64(res, 0, 0);
        out->pairs = store_i64(res, 0, 1);
        out->wins = store_i64(res, 0, 2);
        out->losses = store_i64(res, 0, 3);
        int64_t flips[STORE_SPSA_MAX];
        out->count = store_parse_list(PQgetvalue(res, 0, 4), flips, STORE_SPSA_MAX);
        for (int i = 0; i < out->count; i++)
            out->flip[i] = flips[i] < 0 ? -1 : 1;
        /* the three arrays must agree, or the record is unusable */
        if (parse_doubles(PQgetvalue(res, 0, 5), out->c_k, STORE_SPSA_MAX) != out->count ||
            parse_doubles(PQgetvalue(res, 0, 6), out->R_k, STORE_SPSA_MAX) != out->count)
            found = 0;
    }
    PQclear(res);
    return found;
}

int store_spsa_claim_update(Store *s, int64_t task)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, task) };
    PGresult *res = store_run(s, &STMT[ST_SPSA_CLAIM], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int claimed = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    PQclear(res);
    return claimed;
}

int store_spsa_save(Store *s, int64_t run_id, const double *theta, int count, int64_t iter)
{
    char *list = malloc((size_t)count * 28 + 3);
    if (!list)
        return -1;
    size_t len = 0;
    list[len++] = '{';
    for (int i = 0; i < count; i++)
        len += (size_t)sprintf(list + len, "%s%.17g", i ? "," : "", theta[i]);
    strcpy(list + len, "}");
    StoreNums n;
    const char *p[3] = { store_num(&n, 0, run_id), store_num(&n, 1, iter), list };
    PGresult *res = store_run(s, &STMT[ST_SPSA_SAVE], p, PGRES_COMMAND_OK);
    free(list);
    PQclear(res);
    return res ? 0 : -1;
}

int store_spsa_history(Store *s, int64_t run_id, StoreHistoryRow **out)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, run_id) };
    int count;
    PGresult *res = store_fetch_rows(s, &STMT[ST_SPSA_HISTORY], p, sizeof **out, (void **)out, &count);
    if (!res)
        return -1;
    for (int i = 0; i < count; i++) {
        (*out)[i].iteration = store_i64(res, i, 0);
        (*out)[i].idx = (int)store_i64(res, i, 1);
        (*out)[i].theta = store_get_dbl(res, i, 2);
    }
    PQclear(res);
    return count;
}

/*
 * store_steer.c - runs changed while they run, time odds and run chains
 * (store_steer.h): prepared statements registered with the core (run by
 * people and by the chain's few stage changes, not per game); the rules
 * themselves are in 015_steer.sql's functions.
 */
#include "store_steer.h"
#include "store_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_runs.h"
#include "store_spsa.h"
#include "store_users.h"

#define STEER_STATEMENTS(S)                                                                          \
    S(STEER_OWNER, "SELECT owner FROM runs WHERE id = $1", 1)                                        \
    S(STEER_APPROVE, "SELECT xqf_approve($1, $2, $3)", 3)                                            \
    S(STEER_LIMITS, "SELECT xqf_set_run_limits($1, $2, $3, $4)", 4)                                  \
    S(STEER_MODIFY, "SELECT xqf_modify_run($1, $2, $3, $4, $5, $6)", 6)                              \
    S(STEER_MODIFY_SPSA, "SELECT xqf_modify_spsa($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)", 10)      \
    S(STEER_HISTORY, "SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), actor, action, detail " \
      "FROM web_audit WHERE run_id = $1 ORDER BY id LIMIT 1000", 1)                                  \
    S(STEER_CHAIN_STAGE, "SELECT xqf_chain_add_stage($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, " \
      "$13, $14, $15, $16, $17)", 17)                                                                \
    S(STEER_ADD_CHAIN, "SELECT xqf_chain_add($1, $2, $3, $4)", 4)                                    \
    S(STEER_LOAD_CHAIN, "SELECT c.id, c.name, c.state, c.note, CASE WHEN c.base_hce THEN -1 "           \
      "ELSE coalesce(c.base_net, 0) END, coalesce(n.name, '') FROM chains c "                        \
      "LEFT JOIN nets n ON n.id = c.base_net WHERE c.id = $1", 1)                                    \
    S(STEER_CHAIN_STAGES, "SELECT kind, state, coalesce(run_id, 0), coalesce(build_id, 0), coalesce(elo0, 0), " \
      "coalesce(elo1, 0), coalesce(alpha, 0), coalesce(beta, 0), coalesce(max_pairs, 0), "           \
      "coalesce(nodes, 0), coalesce(base_ms, 0), coalesce(inc_ms, 0), coalesce(net_id, 0), "         \
      "coalesce(epochs, 0), coalesce(batch, 0), coalesce(lambda, 0), coalesce(lr, 0), detail "       \
      "FROM chain_stages WHERE chain_id = $1 ORDER BY idx", 1)                                       \
    S(STEER_CHAIN_OF_RUN, "SELECT chain_id FROM chain_stages WHERE run_id = $1", 1)                  \
    S(STEER_CHAINS, "SELECT id FROM chains ORDER BY id DESC LIMIT $1", 1)                            \
    S(STEER_CHAINS_TO_ADVANCE, "SELECT c.id FROM chains c JOIN chain_stages st ON st.chain_id = c.id " \
      "WHERE c.state = 'active' AND st.kind IN ('build', 'train', 'net') AND st.state = 'running' "  \
      "ORDER BY c.id", 0)                                                                            \
    S(STEER_CHAIN_BUILT, "SELECT xqf_chain_built($1, $2, $3)", 3)                                    \
    S(STEER_CHAIN_STAGE_DONE, "SELECT xqf_chain_done($1, $2, $3, $4, $5, $6)", 6)                   \
    S(STEER_CHAIN_STOP, "SELECT o_run, coalesce(o_stage, -1), o_cancelled FROM xqf_chain_stop($1, $2)", 2)

STORE_STATEMENTS(STEER_STATEMENTS, store_statements_steer);

/*
 * The plain verbs' writes, a statement each from its line of
 * run_verbs.def: "SELECT WRITE(run, actor)", prepared as "xqf_verb_WRITE".
 */
static const StoreStatement VERB_STMT[] = {
#define RUN_VERB(ID, NAME, WHO)
#define RUN_PLAIN_VERB(ID, NAME, WHO, WRITE, DONE, BUTTON, HELP, TEXT) { "xqf_verb_" WRITE, "SELECT " WRITE "($1, $2)", 2 },
#include "run_verbs.def"
};
const StoreStatements store_statements_verbs = { VERB_STMT, sizeof VERB_STMT / sizeof *VERB_STMT };

/* ---- a run's owner, stop, approval and limits ---------------------------------- */

int store_run_owner(Store *s, int64_t run, char *out, size_t size)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, run) };
    PGresult *res = store_run(s, &STMT[ST_STEER_OWNER], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    snprintf(out, size, "%s", found ? PQgetvalue(res, 0, 0) : "");
    PQclear(res);
    return found;
}

int store_plain_verb(Store *s, const char *write, int64_t run, const char *actor, char *why, size_t size)
{
    const StoreStatement *st = NULL;
    for (size_t i = 0; !st && write && i < sizeof VERB_STMT / sizeof *VERB_STMT; i++)
        if (strcmp(VERB_STMT[i].name + strlen("xqf_verb_"), write) == 0)
            st = &VERB_STMT[i];
    if (!st) {
        snprintf(why, size, "no plain verb writes through %s", write ? write : "nothing");
        return store_db_error(s, why, NULL);
    }
    StoreNums n;
    const char *p[2] = { store_num(&n, 0, run), actor ? actor : "" };
    PGresult *res = store_run(s, st, p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int done = PQntuples(res) != 1 || PQgetisnull(res, 0, 0);
    snprintf(why, size, "%s", done ? "" : PQgetvalue(res, 0, 0));
    PQclear(res);
    return done;
}

int store_approve_run(Store *s, int64_t run, const char *test_commit, const char *base_commit)
{
    StoreNums n;
    const char *p[3] = { store_num(&n, 0, run), test_commit && *test_commit ? test_commit : NULL,
                         base_commit && *base_commit ? base_commit : NULL };
    PGresult *res = store_run(s, &STMT[ST_STEER_APPROVE], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = !PQgetisnull(res, 0, 0);
    PQclear(res);
    return found;
}

int store_set_run_limits(Store *s, int64_t run, int priority, int64_t max_pairs, int pairs_per_task)
{
    StoreNums n;
    const char *p[4] = { store_num(&n, 0, run), store_num(&n, 1, priority), store_num(&n, 2, max_pairs),
                         store_num(&n, 3, pairs_per_task) };
    PGresult *res = store_run(s, &STMT[ST_STEER_LIMITS], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int rows = atoi(PQgetvalue(res, 0, 0));
    PQclear(res);
    return rows;
}

/* ---- modify ------------------------------------------------------------------ */

int store_modify_run(Store *s, int64_t run, const char *actor, const StoreModify *m, char *why, size_t size)
{
    StoreNums n;
    const char *p[6] = { store_num(&n, 0, run), actor,
                         store_num_or_null(&n, 1, m->priority, !m->set_priority),
                         store_num_or_null(&n, 2, m->throughput, m->throughput == STORE_KEEP),
                         store_num_or_null(&n, 3, m->max_pairs, m->max_pairs == STORE_KEEP),
                         store_num_or_null(&n, 4, m->extend, m->extend == STORE_KEEP) };
    PGresult *res = store_run(s, &STMT[ST_STEER_MODIFY], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    store_text(res, 0, 0, why, size);
    PQclear(res);
    return why[0] ? 0 : 1;
}

/* A PostgreSQL array literal of count texts or doubles (names quoted and escaped), malloc'd; NULL: no memory. */
static char *array_literal(const StoreSpsaParam *q, int count, size_t field)
{
    size_t cap = 3 + (size_t)count * (2 * (STORE_NAME_MAX + 1) + 32), len = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    out[len++] = '{';
    for (int i = 0; i < count; i++) {
        if (i)
            out[len++] = ',';
        if (field == (size_t)-1) {
            out[len++] = '"';
            for (const char *c = q[i].name; *c; c++) {
                if (*c == '"' || *c == '\\')
                    out[len++] = '\\';
                out[len++] = *c;
            }
            out[len++] = '"';
        } else {
            double v;
            memcpy(&v, (const char *)&q[i] + field, sizeof v);
            len += (size_t)snprintf(out + len, cap - len, "%.17g", v);
        }
    }
    out[len++] = '}';
    out[len] = '\0';
    return out;
}

int store_modify_spsa(Store *s, int64_t run, const char *actor, const StoreModifySpsa *m, char *why, size_t size)
{
    StoreNums n;
    const size_t fields[5] = { (size_t)-1, offsetof(StoreSpsaParam, min), offsetof(StoreSpsaParam, max),
                               offsetof(StoreSpsaParam, c_end), offsetof(StoreSpsaParam, r_end) };
    char *arrays[5] = { 0 };
    int rc = 0;
    for (int i = 0; i < 5 && rc == 0; i++)
        if (!(arrays[i] = array_literal(m->params, m->count, fields[i])))
            rc = -1;
    if (rc == 0) {
        const char *p[10] = { store_num(&n, 0, run), actor, arrays[0], arrays[1], arrays[2], arrays[3], arrays[4],
                              isnan(m->alpha) ? NULL : store_dbl(&n, 1, m->alpha),
                              isnan(m->gamma) ? NULL : store_dbl(&n, 2, m->gamma),
                              isnan(m->a_ratio) ? NULL : store_dbl(&n, 3, m->a_ratio) };
        PGresult *res = store_run(s, &STMT[ST_STEER_MODIFY_SPSA], p, PGRES_TUPLES_OK);
        if (!res)
            rc = -1;
        else {
            store_text(res, 0, 0, why, size);
            rc = why[0] ? 0 : 1;
        }
        PQclear(res);
    }
    for (int i = 0; i < 5; i++)
        free(arrays[i]);
    return rc;
}

int store_run_history(Store *s, int64_t run, StoreHistory **out)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, run) };
    int count;
    PGresult *res = store_fetch_rows(s, &STMT[ST_STEER_HISTORY], p, sizeof **out, (void **)out, &count);
    if (!res)
        return -1;
    for (int i = 0; i < count; i++) {
        StoreHistory *h = &(*out)[i];
        store_text(res, i, 0, h->at, sizeof h->at);
        store_text(res, i, 1, h->actor, sizeof h->actor);
        store_text(res, i, 2, h->action, sizeof h->action);
        store_text(res, i, 3, h->detail, sizeof h->detail);
    }
    PQclear(res);
    return count;
}

/* ---- chains ------------------------------------------------------------------ */

static const char *const CHAIN_KINDS[] = { "spsa", "build", "sprt", "data", "train", "net" };
enum { CHAIN_KIND_COUNT = sizeof CHAIN_KINDS / sizeof *CHAIN_KINDS };

const char *store_chain_kind_name(StoreChainKind kind)
{
    return (unsigned)kind < CHAIN_KIND_COUNT ? CHAIN_KINDS[kind] : "?";
}

/* Inserts stage idx of chain (run: its run, 0 none; state). 0 or -1. */
static int add_stage(Store *s, int64_t chain, int idx, const StoreChainStage *st, int64_t run, const char *state)
{
    StoreNums n;
    bool sprt = st->kind == CHAIN_SPRT, train = st->kind == CHAIN_TRAIN;
    const char *p[17] = { store_num(&n, 0, chain), store_num(&n, 1, idx), CHAIN_KINDS[st->kind], state,
                          store_num_or_null(&n, 2, run, run == 0),
                          sprt ? store_dbl(&n, 3, st->elo0) : NULL, sprt ? store_dbl(&n, 4, st->elo1) : NULL,
                          sprt ? store_dbl(&n, 5, st->alpha) : NULL, sprt ? store_dbl(&n, 6, st->beta) : NULL,
                          store_num_or_null(&n, 7, st->max_pairs, !sprt), store_num_or_null(&n, 8, st->nodes, !sprt),
                          store_num_or_null(&n, 9, st->base_ms, !sprt), store_num_or_null(&n, 10, st->inc_ms, !sprt),
                          store_num_or_null(&n, 11, st->epochs, !train), store_num_or_null(&n, 12, st->batch, !train),
                          train ? store_dbl(&n, 13, st->lambda) : NULL, train ? store_dbl(&n, 14, st->lr) : NULL };
    PGresult *res = store_run(s, &STMT[ST_STEER_CHAIN_STAGE], p, PGRES_TUPLES_OK);
    PQclear(res);
    return res ? 0 : -1;
}

int store_create_chain(Store *s, const StoreChainSpec *spec, int64_t *id)
{
    if (spec->count < 1 || spec->count >= STORE_CHAIN_STAGES || !spec->spsa == !spec->data)
        return -1;
    if (store_begin(s) != 0)
        return -1;
    StoreNums n;
    const char *p[4] = { spec->name ? spec->name : "",
                         store_num_or_null(&n, 0, spec->base_build, spec->base_build == 0),
                         store_num_or_null(&n, 1, spec->base_net, spec->base_net <= 0),
                         spec->base_net == STORE_NET_NONE ? "true" : "false" };
    PGresult *res = store_run(s, &STMT[ST_STEER_ADD_CHAIN], p, PGRES_TUPLES_OK);
    int64_t run = 0;
    /* NULL: its base net waits for an admin's approval (xqf_chain_add) */
    int rc = res && !PQgetisnull(res, 0, 0) ? 0 : -1;
    if (rc == 0)
        *id = store_i64(res, 0, 0);
    PQclear(res);
    if (rc == 0)
        rc = spec->spsa ? store_create_spsa(s, spec->spsa, &run) : store_create_data(s, spec->data, &run);
    const StoreChainStage first = { .kind = spec->spsa ? CHAIN_SPSA : CHAIN_DATA };
    if (rc == 0)
        rc = add_stage(s, *id, 0, &first, run, "running");
    for (int i = 0; rc == 0 && i < spec->count; i++)
        rc = add_stage(s, *id, i + 1, &spec->stages[i], 0, "waiting");
    char detail[STORE_TEXT_MAX];
    snprintf(detail, sizeof detail, "chain %" PRId64 ", %s", *id, spec->detail ? spec->detail : "");
    if (rc == 0)
        rc = store_web_audit_chain(s, spec->actor ? spec->actor : "xqf-tune", *id, run, "create", detail);
    if (rc == 0)
        return store_commit(s);
    store_rollback(s);
    return -1;
}

int store_load_chain(Store *s, int64_t id, StoreChain *out)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, id) };
    memset(out, 0, sizeof *out);
    PGresult *res = store_run(s, &STMT[ST_STEER_LOAD_CHAIN], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found) {
        out->id = store_i64(res, 0, 0);
        store_text(res, 0, 1, out->name, sizeof out->name);
        store_text(res, 0, 2, out->state, sizeof out->state);
        store_text(res, 0, 3, out->note, sizeof out->note);
        out->base_net = store_i64(res, 0, 4);
        store_text(res, 0, 5, out->base_net_name, sizeof out->base_net_name);
    }
    PQclear(res);
    if (!found)
        return 0;
    res = store_run(s, &STMT[ST_STEER_CHAIN_STAGES], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    for (int i = 0; i < PQntuples(res) && out->count < STORE_CHAIN_STAGES; i++) {
        StoreChainStage *st = &out->stages[out->count++];
        const char *kind = PQgetvalue(res, i, 0);
        st->kind = CHAIN_SPRT;
        for (int k = 0; k < CHAIN_KIND_COUNT; k++)
            if (strcmp(kind, CHAIN_KINDS[k]) == 0)
                st->kind = (StoreChainKind)k;
        store_text(res, i, 1, st->state, sizeof st->state);
        st->run_id = store_i64(res, i, 2);
        st->build_id = store_i64(res, i, 3);
        st->elo0 = strtod(PQgetvalue(res, i, 4), NULL);
        st->elo1 = strtod(PQgetvalue(res, i, 5), NULL);
        st->alpha = strtod(PQgetvalue(res, i, 6), NULL);
        st->beta = strtod(PQgetvalue(res, i, 7), NULL);
        st->max_pairs = store_i64(res, i, 8);
        st->nodes = store_i64(res, i, 9);
        st->base_ms = store_i64(res, i, 10);
        st->inc_ms = store_i64(res, i, 11);
        st->net_id = store_i64(res, i, 12);
        st->epochs = (int)store_i64(res, i, 13);
        st->batch = (int)store_i64(res, i, 14);
        st->lambda = strtod(PQgetvalue(res, i, 15), NULL);
        st->lr = strtod(PQgetvalue(res, i, 16), NULL);
        store_text(res, i, 17, st->detail, sizeof st->detail);
    }
    PQclear(res);
    return 1;
}

/* The ids of a query's first column. Returns the count or -1; *ids malloc'd (NULL when none). */
static int ids_of(Store *s, Stmt st, const char *const *p, int64_t **ids)
{
    *ids = NULL;
    PGresult *res = store_run(s, &STMT[st], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int count = PQntuples(res);
    if (count && !(*ids = malloc(sizeof **ids * (size_t)count))) {
        PQclear(res);
        return -1;
    }
    for (int i = 0; i < count; i++)
        (*ids)[i] = store_i64(res, i, 0);
    PQclear(res);
    return count;
}

int store_chain_of_run(Store *s, int64_t run, int64_t *chain)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, run) };
    int64_t *ids;
    int count = ids_of(s, ST_STEER_CHAIN_OF_RUN, p, &ids);
    if (count > 0)
        *chain = ids[0];
    free(ids);
    return count < 0 ? -1 : count > 0;
}

int store_list_chains(Store *s, int max, int64_t **ids)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, max) };
    return ids_of(s, ST_STEER_CHAINS, p, ids);
}

int store_chains_to_advance(Store *s, int64_t **ids)
{
    return ids_of(s, ST_STEER_CHAINS_TO_ADVANCE, NULL, ids);
}

int store_chain_built(Store *s, int64_t chain, int64_t build, const char *note)
{
    StoreNums n;
    const char *p[3] = { store_num(&n, 0, chain), store_num_or_null(&n, 1, build, build <= 0), note ? note : "" };
    PGresult *res = store_run(s, &STMT[ST_STEER_CHAIN_BUILT], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int done = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    PQclear(res);
    return done;
}

int store_chain_done(Store *s, int64_t chain, StoreChainKind kind, bool ok, int64_t build, int64_t net,
                     const char *detail)
{
    StoreNums n;
    const char *p[6] = { store_num(&n, 0, chain), store_chain_kind_name(kind), ok ? "true" : "false",
                         store_num_or_null(&n, 1, build, build <= 0), store_num_or_null(&n, 2, net, net <= 0),
                         detail ? detail : "" };
    PGresult *res = store_run(s, &STMT[ST_STEER_CHAIN_STAGE_DONE], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int done = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    PQclear(res);
    return done;
}

int store_stop_chain(Store *s, int64_t chain, const char *actor, StoreChainStopped *out)
{
    StoreNums n;
    const char *p[2] = { store_num(&n, 0, chain), actor };
    PGresult *res = store_run(s, &STMT[ST_STEER_CHAIN_STOP], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found) {
        out->run = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
        out->stage = atoi(PQgetvalue(res, 0, 1));
        out->cancelled = atoi(PQgetvalue(res, 0, 2));
    }
    PQclear(res);
    return found;
}

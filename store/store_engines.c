/*
 * store_engines.c - engines as records (store_engines.h): prepared
 * statements registered with the core, as every domain's (run by
 * operators, not per game).  A record's commands after the handshake
 * travel as one text of lines (none of them holds a newline:
 * engine_record_check) and are kept as an array.
 */
#include "store_engines.h"
#include "store_internal.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENGINE_COLUMNS                                                                           \
    "e.id, e.name, e.repo, coalesce(e.build_command, ''), coalesce(e.cmake_target, ''), e.binary_path, " \
    "coalesce(e.bench_command, ''), e.bench_nodes_re, e.bench_nps_re, e.bench_depth, e.protocol, " \
    "e.ranks_from_one, e.he_letters, array_to_string(e.init, E'\\n'), e.hash_option, "           \
    "e.threads_option, e.net_option, e.needs_net, e.ref_nps, e.added_by, "                       \
    "to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')"

/* The settings of a record as parameters $1..$18 (the name first), in the order of the columns they set. */
#define ENGINE_SETTINGS 18

#define ENGINE_STATEMENTS(S)                                                                         \
    S(ENGINE_ADD, "SELECT xqf_engine_add($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, " \
      "$15, $16, $17, $18, $19)", ENGINE_SETTINGS + 1)                                               \
    S(ENGINE_LOAD, "SELECT " ENGINE_COLUMNS " FROM engines e WHERE e.name = $1", 1)                \
    S(ENGINE_OF_RUN, "SELECT CASE WHEN $2 = 'base' THEN coalesce(base_engine, engine) ELSE engine END " \
      "FROM runs WHERE id = $1", 2)                                                                  \
    S(ENGINE_LIST, "SELECT " ENGINE_COLUMNS " FROM engines e ORDER BY e.id", 0)                   \
    S(ENGINE_ACTOR, "SELECT set_config('xqf.actor', $1, true)", 1)                            \
    S(ENGINE_MODIFY, "UPDATE engines SET repo = $2, build_command = nullif($3, ''), "         \
      "cmake_target = nullif($4, ''), binary_path = $5, bench_command = nullif($6, ''), "            \
      "bench_nodes_re = $7, bench_nps_re = $8, bench_depth = $9, protocol = $10, "                   \
      "ranks_from_one = $11, he_letters = $12, init = string_to_array($13, E'\\n'), "                \
      "hash_option = $14, threads_option = $15, net_option = $16, needs_net = $17, "                 \
      "ref_nps = $18 WHERE name = $1", ENGINE_SETTINGS)                                              \
    S(ENGINE_HISTORY, "SELECT to_char(h.at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), h.actor, h.field, " \
      "coalesce(h.old_value, ''), coalesce(h.new_value, '') FROM engine_history h "                  \
      "JOIN engines e ON e.id = h.engine_id WHERE e.name = $1 ORDER BY h.id LIMIT 1000", 1)

STORE_STATEMENTS(ENGINE_STATEMENTS, store_statements_engines);

typedef struct {
    const char *p[ENGINE_SETTINGS + 1];      /* and $19, the actor, when it is added */
    char depth[16], nps[24];
    char init[ENGINE_INIT_MAX * (ENGINE_INIT_LINE_MAX + 1) + 1];
} Settings;

static void settings(Settings *st, const EngineRecord *e)
{
    size_t n = 0;
    st->init[0] = '\0';
    for (int i = 0; i < e->init_count && i < ENGINE_INIT_MAX; i++)
        n += (size_t)snprintf(st->init + n, sizeof st->init - n, "%s%s", i ? "\n" : "", e->init[i]);
    snprintf(st->depth, sizeof st->depth, "%d", e->bench_depth);
    snprintf(st->nps, sizeof st->nps, "%" PRId64, e->ref_nps);
    const char *v[ENGINE_SETTINGS] = {
        e->name, e->repo, e->build_command, e->cmake_target, e->binary, e->bench_command, e->nodes_re,
        e->nps_re, st->depth, engine_protocol_name(e->protocol), e->ranks_from_one ? "true" : "false",
        e->he_letters ? "true" : "false", st->init, e->hash_option, e->threads_option, e->net_option,
        e->needs_net ? "true" : "false", st->nps,
    };
    memcpy(st->p, v, sizeof v);
}

/* Row i of an ENGINE_COLUMNS result into *e. */
static void decode(const PGresult *r, int i, EngineRecord *e)
{
    memset(e, 0, sizeof *e);
    int c = 0;
#define TEXT(field) store_text(r, i, c++, e->field, sizeof e->field)
#define FLAG(field) e->field = strcmp(PQgetvalue(r, i, c++), "t") == 0
    e->id = store_i64(r, i, c++);
    TEXT(name);
    TEXT(repo);
    TEXT(build_command);
    TEXT(cmake_target);
    TEXT(binary);
    TEXT(bench_command);
    TEXT(nodes_re);
    TEXT(nps_re);
    e->bench_depth = atoi(PQgetvalue(r, i, c++));
    if (engine_protocol_parse(PQgetvalue(r, i, c++), &e->protocol) != 0)
        e->protocol = ENGINE_UCI;      /* the table's check allows no other */
    FLAG(ranks_from_one);
    FLAG(he_letters);
    for (const char *p = PQgetvalue(r, i, c++); *p && e->init_count < ENGINE_INIT_MAX;) {
        size_t len = strcspn(p, "\n");
        snprintf(e->init[e->init_count++], sizeof e->init[0], "%.*s", (int)len, p);
        p += len + (p[len] == '\n');
    }
    TEXT(hash_option);
    TEXT(threads_option);
    TEXT(net_option);
    FLAG(needs_net);
    e->ref_nps = store_i64(r, i, c++);
    TEXT(added_by);
    TEXT(created);
#undef TEXT
#undef FLAG
}

int store_engine_add(Store *s, const EngineRecord *e, const char *actor, int64_t *id)
{
    Settings st;
    settings(&st, e);
    st.p[ENGINE_SETTINGS] = actor;
    /* through the function the dashboard adds with (schemas/sql/functions/xqf_engine_add.sql): NULL when the name is taken */
    PGresult *res = store_run(s, &STMT[ST_ENGINE_ADD], st.p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int added = PQntuples(res) == 1 && !PQgetisnull(res, 0, 0);
    if (added)
        *id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    PQclear(res);
    return added;
}

int store_engine_load(Store *s, const char *name, EngineRecord *e)
{
    const char *p[1] = { name };
    PGresult *res = store_run(s, &STMT[ST_ENGINE_LOAD], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found)
        decode(res, 0, e);
    PQclear(res);
    return found;
}

int store_run_engine(Store *s, int64_t run, const char *side, char *name, size_t size)
{
    char id[24];
    snprintf(id, sizeof id, "%lld", (long long)run);
    const char *p[2] = { id, side };
    PGresult *res = store_run(s, &STMT[ST_ENGINE_OF_RUN], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found)
        snprintf(name, size, "%s", PQgetvalue(res, 0, 0));
    PQclear(res);
    return found;
}

int store_engine_list(Store *s, EngineRecord **out)
{
    int count;
    PGresult *res = store_fetch_rows(s, &STMT[ST_ENGINE_LIST], NULL, sizeof **out, (void **)out, &count);
    if (!res)
        return -1;
    for (int i = 0; i < count; i++)
        decode(res, i, &(*out)[i]);
    PQclear(res);
    return count;
}

int store_engine_modify(Store *s, const EngineRecord *e, const char *actor)
{
    Settings st;
    settings(&st, e);
    if (store_begin(s) != 0)
        return -1;
    /* the history's trigger (032_engines.sql) reads the actor from the transaction's setting */
    PGresult *res = store_run(s, &STMT[ST_ENGINE_ACTOR], &actor, PGRES_TUPLES_OK);
    int changed = -1;
    if (res) {
        PQclear(res);
        res = store_run(s, &STMT[ST_ENGINE_MODIFY], st.p, PGRES_COMMAND_OK);
    }
    if (res) {
        changed = strcmp(PQcmdTuples(res), "1") == 0;
        PQclear(res);
    }
    if (changed < 0) {
        store_rollback(s);
        return -1;
    }
    return store_commit(s) == 0 ? changed : -1;
}

int store_engine_history(Store *s, const char *name, StoreEngineChange **out)
{
    const char *p[1] = { name };
    int count;
    PGresult *res = store_fetch_rows(s, &STMT[ST_ENGINE_HISTORY], p, sizeof **out, (void **)out, &count);
    if (!res)
        return -1;
    for (int i = 0; i < count; i++) {
        StoreEngineChange *c = &(*out)[i];
        store_text(res, i, 0, c->at, sizeof c->at);
        store_text(res, i, 1, c->actor, sizeof c->actor);
        store_text(res, i, 2, c->field, sizeof c->field);
        store_text(res, i, 3, c->old_value, sizeof c->old_value);
        store_text(res, i, 4, c->new_value, sizeof c->new_value);
    }
    PQclear(res);
    return count;
}

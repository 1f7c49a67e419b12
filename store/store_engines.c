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
#include <stddef.h>
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
    S(PRESET_LIST, "SELECT e.name, p.name, coalesce(string_agg(s.key, E'\\n' ORDER BY s.key), ''), "          \
      "coalesce(string_agg(s.value, E'\\n' ORDER BY s.key), ''), p.updated_by, "                          \
      "to_char(p.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') FROM engine_presets p "          \
      "JOIN engines e ON e.id = p.engine_id LEFT JOIN LATERAL jsonb_each_text(p.settings) s ON true "       \
      "WHERE $1::text IS NULL OR e.name = $1 GROUP BY e.id, e.name, p.name, p.updated_by, p.updated_at "   \
      "ORDER BY e.id, p.name LIMIT 1000", 1)                                                                \
    S(PRESET_SET, "SELECT xqf_engine_preset_set($1, $2, string_to_array($3, E'\\n'), "                      \
      "string_to_array($4, E'\\n'), $5)", 5)                                                                 \
    S(PRESET_REMOVE, "SELECT xqf_engine_preset_remove($1, $2, $3)", 3)                                      \
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

/* Splits a text of lines (no line holds a newline: run_presets.h's check) into member off of each setting. */
static int split_lines(const char *text, StorePresetSetting *out, size_t off, size_t size)
{
    int n = 0;
    for (const char *p = text; *p && n < STORE_PRESETS_MAX; n++) {
        size_t len = strcspn(p, "\n");
        snprintf((char *)&out[n] + off, size, "%.*s", (int)len, p);
        p += len + (p[len] == '\n');
    }
    return n;
}

int store_preset_list(Store *s, const char *engine, StorePreset **out)
{
    const char *p[1] = { engine };
    int count;
    PGresult *res = store_fetch_rows(s, &STMT[ST_PRESET_LIST], p, sizeof **out, (void **)out, &count);
    if (!res)
        return -1;
    for (int i = 0; i < count; i++) {
        StorePreset *ps = &(*out)[i];
        memset(ps, 0, sizeof *ps);
        store_text(res, i, 0, ps->engine, sizeof ps->engine);
        store_text(res, i, 1, ps->name, sizeof ps->name);
        ps->count = split_lines(PQgetvalue(res, i, 2), ps->settings, offsetof(StorePresetSetting, key),
                                sizeof ps->settings[0].key);
        split_lines(PQgetvalue(res, i, 3), ps->settings, offsetof(StorePresetSetting, value),
                    sizeof ps->settings[0].value);
        store_text(res, i, 4, ps->updated_by, sizeof ps->updated_by);
        store_text(res, i, 5, ps->updated_at, sizeof ps->updated_at);
    }
    PQclear(res);
    return count;
}

/* A boolean answer of one row: 1 (true), 0 or -1. */
static int yes(PGresult *res)
{
    if (!res)
        return -1;
    int r = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    PQclear(res);
    return r;
}

int store_preset_set(Store *s, const StorePreset *ps, const char *actor)
{
    char *keys = malloc(STORE_PRESETS_MAX * (STORE_PRESET_KEY_MAX + 1) + 1);
    char *values = malloc(STORE_PRESETS_MAX * (STORE_PRESET_VALUE_MAX + 1) + 1);
    if (!keys || !values) {
        free(keys);
        free(values);
        return -1;
    }
    size_t nk = 0, nv = 0;
    keys[0] = values[0] = '\0';
    for (int i = 0; i < ps->count && i < STORE_PRESETS_MAX; i++) {
        nk += (size_t)sprintf(keys + nk, "%s%s", i ? "\n" : "", ps->settings[i].key);
        nv += (size_t)sprintf(values + nv, "%s%s", i ? "\n" : "", ps->settings[i].value);
    }
    const char *p[5] = { ps->engine, ps->name, keys, values, actor };
    int r = yes(store_run(s, &STMT[ST_PRESET_SET], p, PGRES_TUPLES_OK));
    free(keys);
    free(values);
    return r;
}

int store_preset_remove(Store *s, const char *engine, const char *name, const char *actor)
{
    const char *p[3] = { engine, name, actor };
    return yes(store_run(s, &STMT[ST_PRESET_REMOVE], p, PGRES_TUPLES_OK));
}

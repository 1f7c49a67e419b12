/*
 * store_runs.c - runs (store_runs.h): created by kind (run_kind.h) with
 * their books, read as the coordinator schedules and reports them, their
 * LLR and end recorded, their progress; data runs' settings (012_data.sql).
 */

#include "store_runs.h"
#include "store_test.h"
#include "store_internal.h"

#include <assert.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_kind.h"

/* A setting kept as a column (run_settings.def), selected after the columns read by hand. */
#define SETTING_SELECT(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, store, \
                       ctype, shown)                                                                               \
    ", r." #store
/* A text setting's two numbers, likewise. */
#define TEXT_SETTING_SELECT(name, option, arg, help, form_field, label, form_help, parse, format, first, second) \
    ", r." #first ", r." #second

#define RUN_COLUMNS                                                                              \
    "r.id, r.kind, r.state, r.name, r.build_id, r.name0, r.name1, r.nodes, "                   \
    "r.next_pair, r.llr, "                                                                        \
    "coalesce(r.verdict, ''), r.pairs, r.wins, r.draws, r.losses, r.ll, r.ld, r.dd, r.wd, r.ww, " \
    "array_to_string(r.reasons, ','), "                                                          \
    "(SELECT count(*) FROM tasks t WHERE t.run_id = r.id AND t.state = 'leased'), r.iter, "     \
    "r.book_name, to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), "           \
    "coalesce(to_char(r.finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), ''), "         \
    "extract(epoch FROM coalesce(r.finished_at, now()) - r.created_at), "                       \
    "coalesce((SELECT sha256 FROM engine_builds b WHERE b.id = r.test_build), ''), "            \
    "coalesce((SELECT sha256 FROM engine_builds b WHERE b.id = r.base_build), ''), "             \
    "(SELECT count(*) FROM tasks t WHERE t.run_id = r.id AND t.state = 'quarantined'), "          \
    "r.throughput, "                                                                               \
    "coalesce((SELECT sha256 FROM nets n WHERE n.id = r.test_net), CASE WHEN r.test_hce THEN 'none' ELSE '' END), " \
    "coalesce((SELECT sha256 FROM nets n WHERE n.id = r.base_net), CASE WHEN r.base_hce THEN 'none' ELSE '' END), " \
    "coalesce((SELECT name FROM nets n WHERE n.id = r.test_net), CASE WHEN r.test_hce THEN 'none' ELSE '' END), " \
    "coalesce((SELECT name FROM nets n WHERE n.id = r.base_net), CASE WHEN r.base_hce THEN 'none' ELSE '' END), " \
    "r.engine, coalesce(r.base_engine, r.engine)" RUN_TEXT_SETTINGS(TEXT_SETTING_SELECT)                   \
    RUN_SETTINGS_COLUMNS(SETTING_SELECT) RUN_SETTINGS_ADJUDICATION(SETTING_SELECT)

/*
 * xqf_create_run's parameters in its order: the run's text, what its kind
 * gives, the numbers that are no settings kept as columns (the nodes, the
 * sides' builds and nets, the clock's scaling) and, last, those settings
 * as one JSON object (SettingsJson below): run_settings.def's numbers and
 * its text settings' (the clock, time odds).  P(ID, TYPE, value): TYPE TEXT ("" for NULL), RAW
 * (as is), INT or BOOL.
 */
#define CREATE_RUN_PARAMS(P)                                                                     \
    P(NAME, TEXT, sp->name)                                                                      \
    P(PARAMS0, TEXT, sp->test_params)                                                            \
    P(PARAMS1, TEXT, sp->base_params)                                                            \
    P(BUILD_ID, TEXT, sp->build_id)                                                              \
    P(BOOK_NAME, TEXT, sp->book_name)                                                            \
    P(BOOK, RAW, book)                                                                           \
    P(NODES, INT, sp->nodes)                                                                     \
    P(KIND, RAW, kind->name)                                                                     \
    P(NAME0, RAW, kind->player0)                                                                 \
    P(NAME1, RAW, kind->player1)                                                                 \
    P(SETTINGS, RAW, settings)                                                                   \
    P(TEST_BUILD, INT, sp->test_build)                                                           \
    P(BASE_BUILD, INT, sp->base_build)                                                           \
    P(TASKS_ON_CLAIM, BOOL, kind->on_claim)                                                      \
    P(TEST_NET, INT, sp->test_net)                                                               \
    P(BASE_NET, INT, sp->base_net)                                                               \
    P(REF_NPS, INT, sp->ref_nps)                                                                 \
    P(GAME_SCORES, BOOL, sp->game_scores)                                                        \
    P(ENGINE, TEXT, sp->engine)                                                                  \
    P(BASE_ENGINE, TEXT, sp->base_engine)                                                        \
    P(OWNER, TEXT, sp->owner)                                                                    \
    P(PENDING, BOOL, sp->pending)                                                                \
    P(RUN_SETTINGS, RAW, j.text)

#define CREATE_RUN_ID(id, type, value) CR_##id,
enum { CREATE_RUN_PARAMS(CREATE_RUN_ID) CREATE_RUN_COUNT };

#define RUNS_STATEMENTS(S)                                                                       \
    S(FINISH, "SELECT xqf_finish_run($1, $2, $3, NULL)", 3)                                      \
    S(SET_LLR, "UPDATE runs SET llr = $2 WHERE id = $1", 2)                                      \
    S(FINISH_LLR, "SELECT xqf_finish_run($1, 'finished', $3, $2)", 3)                            \
    S(CREATE_RUN, "SELECT xqf_create_run($1, $2, $3, $4, $5, $6::text[], $7, $8, $9, $10, $11::jsonb, $12, " \
                  "$13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23::jsonb)",                \
      CREATE_RUN_COUNT)                                                                          \
    S(PROGRESS, "SELECT p.pairs, p.wins, p.draws, p.losses, p.ll, p.ld, p.dd, p.wd, p.ww, "      \
                "extract(epoch FROM p.recorded_at - r.created_at) FROM run_progress p "          \
                "JOIN runs r ON r.id = p.run_id WHERE p.run_id = $1 ORDER BY p.pairs", 1)        \
    S(RUN_SETS, "SELECT params0, params1 FROM runs WHERE id = $1", 1)                            \
    S(ACTIVE_RUNS, "SELECT " RUN_COLUMNS " FROM runs r WHERE r.state = 'active' "                \
                   "ORDER BY r.priority DESC, r.id", 0)                                          \
    S(LIST_RUNS, "SELECT " RUN_COLUMNS " FROM runs r ORDER BY r.id DESC LIMIT $1", 1)            \
    S(PREFIXED_RUNS, "SELECT " RUN_COLUMNS " FROM runs r WHERE r.kind = $1 "                     \
                     "AND left(r.name, length($2)) = $2 ORDER BY r.id", 2)                       \
    S(LOAD_RUN, "SELECT " RUN_COLUMNS " FROM runs r WHERE r.id = $1", 1)                         \
    S(LOAD_BOOK, "SELECT b FROM runs r, unnest(r.book) WITH ORDINALITY AS u(b, i) "              \
                 "WHERE r.id = $1 ORDER BY i", 1)                                                \
    S(RUN_BOOK_ADD, "SELECT xqf_run_book_add($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)", 10)      \
    S(RUN_BOOK, "SELECT coalesce(array_length(r.book, 1), 0), b.format, b.sha256, b.duplicates, b.plies, " \
                "b.scored, b.score_min, b.score_max, b.score_mean "                              \
                "FROM runs r LEFT JOIN run_books b ON b.run_id = r.id WHERE r.id = $1", 1)       \
    S(DATA_SETTINGS,                                                                             \
      "SELECT coalesce((settings->>'random_plies')::int, 0), coalesce((settings->>'skip_plies')::int, 0), " \
      "coalesce((settings->>'keep_check')::boolean, false), "                                    \
      "coalesce((settings->>'keep_captures')::boolean, false), "                                 \
      "coalesce((settings->>'max_score')::int, 3000), coalesce((settings->>'depth')::int, 0) "   \
      "FROM runs WHERE id = $1 AND kind = 'data'", 1)

STORE_STATEMENTS(RUNS_STATEMENTS, store_statements_runs);

/* The settings kept as columns, a JSON object for xqf_create_run (each name a column of its allow-list). */
typedef struct {
    char text[2048];
    size_t len;
} SettingsJson;

/* Appends to the object; the table's few numbers always fit (an overflow is a programmer error). */
__attribute__((format(printf, 2, 3))) static void json_put(SettingsJson *j, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(j->text + j->len, sizeof j->text - j->len, fmt, ap);
    va_end(ap);
    assert(n >= 0 && (size_t)n < sizeof j->text - j->len);
    j->len += (size_t)n;
}

static void json_int(SettingsJson *j, const char *column, int64_t v)
{
    json_put(j, "%s\"%s\": %" PRId64, j->len ? ", " : "{", column, v);
}

/* A number, or null (the column NULL) for NaN or a setting of a group the kind does not take. */
static void json_real(SettingsJson *j, const char *column, double v, bool taken)
{
    if (taken && isfinite(v))
        json_put(j, "%s\"%s\": %.17g", j->len ? ", " : "{", column, v);
    else
        json_put(j, "%s\"%s\": null", j->len ? ", " : "{", column);
}

/*
 * A setting into the JSON by its type: a REAL of the SPRT group (a bound)
 * is null for a kind without the SPRT; an INT is every kind's (max_pairs:
 * the length of any run; the adjudication's rules).
 */
#define SETTING_JSON_INT(column, v, taken) json_int(&j, column, (int64_t)(v));
#define SETTING_JSON_REAL(column, v, taken) json_real(&j, column, v, taken);
#define SETTING_JSON_PERCENT SETTING_JSON_REAL
#define SETTING_JSON_SPRT(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, store, \
                          ctype, shown)                                                                               \
    SETTING_JSON_##TYPE(#store, sp->store, kind->sprt)
#define SETTING_JSON_TASK(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, store, \
                          ctype, shown)                                                                               \
    SETTING_JSON_##TYPE(#store, sp->store, true)
/*
 * The groups with no setting of a kind's own (THREADS, every kind's
 * threads, 1 for a kind that plays one; KEPT): a value below the line's
 * minimum (a spec zeroed by a test or a tool) is its default; a derived
 * setting not given is left out, for xqf_create_run to derive.
 */
#define SETTING_GIVEN_0(sp, store) true
#define SETTING_GIVEN_1(sp, store) true
#define SETTING_GIVEN_2(sp, store) (sp)->store##_given
#define SETTING_GIVEN_RUN_SETTING_DERIVED(sp, store) SETTING_GIVEN_2(sp, store)
#define SETTING_JSON_OR_DEFAULT(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, \
                                store, ctype, shown)                                                               \
    if (SETTING_GIVEN_##required(sp, store))                                                                        \
        SETTING_JSON_##TYPE(#store, sp->store < (lo) ? (def) : sp->store, true)
/* A text setting's two numbers (time odds 0 for a kind without them: none). */
#define TEXT_SETTING_JSON(name, option, arg, help, form_field, label, form_help, parse, format, first, second) \
    json_int(&j, #first, sp->first);                                                                           \
    json_int(&j, #second, sp->second);
#define SETTING_JSON_ADJUDICATION(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, \
                                  store, ctype, shown)                                                                \
    SETTING_JSON_##TYPE(#store, adj.store, true)

/* A parameter of xqf_create_run as text by its TYPE (CREATE_RUN_PARAMS), its number kept in num. */
static const char *param_int(char num[32], int64_t v)
{
    snprintf(num, 32, "%" PRId64, v);
    return num;
}

#define PARAM_TEXT(num, v) ((v) ? (v) : "")
#define PARAM_RAW(num, v) (v)
#define PARAM_INT(num, v) param_int(num, (int64_t)(v))
#define PARAM_BOOL(num, v) ((v) ? "true" : "false")
#define CREATE_RUN_PARAM(id, type, value) p[CR_##id] = PARAM_##type(num[CR_##id], value);

/*
 * Inserts a run of kind with the spec's settings (the table's as one JSON
 * object: SPRT bounds only for SPRT, NULL otherwise; the adjudication the
 * spec's or the table's defaults); settings, the kind's own, is a JSON
 * object.  Returns 0 with *id, or -1.
 */
int store_create_run(Store *s, const RunKind *kind, const StoreSprtSpec *spec, const char *settings, int64_t *id)
{
    StoreSprtSpec one = *spec;
    if (!kind->two_sides) {
        /* one engine plays both sides: the first side's set, build and net are the second's */
        one.base_params = one.test_params;
        one.base_build = one.test_build;
        one.base_net = one.test_net;
    }
    const StoreSprtSpec *sp = &one;
    const StoreAdjudication adj = sp->adjudication ? *sp->adjudication : STORE_ADJUDICATION_DEFAULT;
    char *book = store_text_array(sp->book, sp->book_lines);
    if (!book)
        return -1;
    SettingsJson j = { .len = 0 };
    RUN_SETTINGS_SPRT(SETTING_JSON_SPRT)
    RUN_SETTINGS_TASK(SETTING_JSON_TASK)
    RUN_SETTINGS_OWN(SETTING_JSON_TASK)
    RUN_SETTINGS_ADJUDICATION(SETTING_JSON_ADJUDICATION)
    RUN_SETTINGS_THREADS(SETTING_JSON_OR_DEFAULT)
    RUN_SETTINGS_KEPT(SETTING_JSON_OR_DEFAULT)
    RUN_TEXT_SETTINGS(TEXT_SETTING_JSON)
    json_put(&j, "}");
    const char *p[CREATE_RUN_COUNT];
    char num[CREATE_RUN_COUNT][32];
    CREATE_RUN_PARAMS(CREATE_RUN_PARAM)
    PGresult *res = store_run(s, &STMT[ST_CREATE_RUN], p, PGRES_TUPLES_OK);
    free(book);
    if (!res)
        return -1;
    *id = store_i64(res, 0, 0);
    PQclear(res);
    const StoreRunBook *b = sp->book_facts;
    if (!b)
        return 0;
    StoreNums n;
    const char *q[10] = { store_num(&n, 0, *id), b->format, b->sha256, store_num(&n, 1, sp->book_lines),
                          store_num(&n, 2, b->duplicates), store_num(&n, 3, b->plies), store_num(&n, 4, b->scored),
                          store_num(&n, 5, b->score_min), store_num(&n, 6, b->score_max), store_dbl(&n, 7, b->score_mean) };
    PQclear(res = store_run(s, &STMT[ST_RUN_BOOK_ADD], q, PGRES_TUPLES_OK));
    return res ? 0 : -1;
}

int store_run_book(Store *s, int64_t run_id, StoreRunBook *out)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, run_id) };
    PGresult *res = store_run(s, &STMT[ST_RUN_BOOK], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) > 0;
    memset(out, 0, sizeof *out);
    if (found) {
        out->openings = (int)store_i64(res, 0, 0);
        store_text(res, 0, 1, out->format, sizeof out->format);
        store_text(res, 0, 2, out->sha256, sizeof out->sha256);
        out->duplicates = (int)store_i64(res, 0, 3);
        out->plies = (int)store_i64(res, 0, 4);
        out->scored = (int)store_i64(res, 0, 5);
        out->score_min = (int)store_i64(res, 0, 6);
        out->score_max = (int)store_i64(res, 0, 7);
        out->score_mean = out->scored ? store_get_dbl(res, 0, 8) : 0;
    }
    PQclear(res);
    return found;
}

int store_create_sprt(Store *s, const StoreSprtSpec *sp, int64_t *id)
{
    return store_create_run(s, run_kind_get(RUN_KIND_SPRT), sp, "{}", id);
}

int store_create_games(Store *s, const StoreSprtSpec *sp, int64_t *id)
{
    return store_create_run(s, run_kind_get(RUN_KIND_GAMES), sp, "{}", id);
}

/* Reads pairs, wins, draws, losses and the five pentanomial cells from column *col on. */
static void read_counts(const PGresult *r, int row, int *col, StoreCounts *c)
{
    c->pairs = store_i64(r, row, (*col)++);
    c->wins = store_i64(r, row, (*col)++);
    c->draws = store_i64(r, row, (*col)++);
    c->losses = store_i64(r, row, (*col)++);
    for (int i = 0; i < 5; i++)
        c->penta[i] = store_i64(r, row, (*col)++);
}

/* A setting kept as a column (run_settings.def) read into its member (SETTING_SELECT's order). */
#define SETTING_GET_INT store_i64
#define SETTING_GET_REAL store_get_dbl
#define SETTING_GET_PERCENT store_get_dbl
#define TEXT_SETTING_READ(name, option, arg, help, form_field, label, form_help, parse, format, first, second) \
    o->first = store_i64(r, row, c++);                                                                         \
    o->second = store_i64(r, row, c++);
#define SETTING_READ(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, store, ctype, \
                     shown)                                                                                            \
    o->store = (ctype)SETTING_GET_##TYPE(r, row, c++);
#define ADJUDICATION_READ(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, store, \
                          ctype, shown)                                                                               \
    o->adjudication.store = (ctype)SETTING_GET_##TYPE(r, row, c++);

static void read_run(const PGresult *r, int row, StoreRun *o)
{
    memset(o, 0, sizeof *o);
    int c = 0;
    o->id = store_i64(r, row, c++);
    store_text(r, row, c++, o->kind, sizeof o->kind);
    store_text(r, row, c++, o->state, sizeof o->state);
    store_text(r, row, c++, o->name, sizeof o->name);
    store_text(r, row, c++, o->build_id, sizeof o->build_id);
    store_text(r, row, c++, o->name0, sizeof o->name0);
    store_text(r, row, c++, o->name1, sizeof o->name1);
    o->nodes = store_i64(r, row, c++);
    o->next_pair = store_i64(r, row, c++);
    o->llr = store_get_dbl(r, row, c++);
    store_text(r, row, c++, o->verdict, sizeof o->verdict);
    read_counts(r, row, &c, &o->counts);
    o->counts.nreasons = store_parse_list(PQgetvalue(r, row, c++), o->counts.reasons, STORE_REASONS);
    o->leased = store_i64(r, row, c++);
    o->iter = store_i64(r, row, c++);
    store_text(r, row, c++, o->book_name, sizeof o->book_name);
    store_text(r, row, c++, o->created, sizeof o->created);
    store_text(r, row, c++, o->finished, sizeof o->finished);
    o->elapsed_s = store_get_dbl(r, row, c++);
    store_text(r, row, c++, o->build0, sizeof o->build0);
    store_text(r, row, c++, o->build1, sizeof o->build1);
    o->quarantined = store_i64(r, row, c++);
    o->throughput = (int)store_i64(r, row, c++);
    store_text(r, row, c++, o->net0, sizeof o->net0);
    store_text(r, row, c++, o->net1, sizeof o->net1);
    store_text(r, row, c++, o->net_name0, sizeof o->net_name0);
    store_text(r, row, c++, o->net_name1, sizeof o->net_name1);
    store_text(r, row, c++, o->engine, sizeof o->engine);
    store_text(r, row, c++, o->base_engine, sizeof o->base_engine);
    RUN_TEXT_SETTINGS(TEXT_SETTING_READ)
    RUN_SETTINGS_COLUMNS(SETTING_READ)
    RUN_SETTINGS_ADJUDICATION(ADJUDICATION_READ)
}

/* Runs a run query into a malloc'd array. */
static int read_runs(Store *s, const StoreStatement *st, const char *const *params, StoreRun **out)
{
    int n;
    PGresult *res = store_fetch_rows(s, st, params, sizeof **out, (void **)out, &n);
    if (!res)
        return -1;
    for (int i = 0; i < n; i++)
        read_run(res, i, &(*out)[i]);
    PQclear(res);
    return n;
}

int store_active_runs(Store *s, StoreRun **out) { return read_runs(s, &STMT[ST_ACTIVE_RUNS], NULL, out); }

int store_list_runs(Store *s, int max, StoreRun **out)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, max) };
    return read_runs(s, &STMT[ST_LIST_RUNS], p, out);
}

int store_prefixed_runs(Store *s, const char *kind, const char *prefix, StoreRun **out)
{
    const char *p[2] = { kind, prefix };
    return read_runs(s, &STMT[ST_PREFIXED_RUNS], p, out);
}

void store_run_free(StoreRun *r)
{
    for (int i = 0; i < r->book_lines; i++)
        free(r->book[i]);
    free(r->book);
    r->book = NULL;
    r->book_lines = 0;
}

int store_load_run(Store *s, int64_t id, StoreRun *out, bool with_book)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, id) };
    StoreRun *runs;
    int count = read_runs(s, &STMT[ST_LOAD_RUN], p, &runs);
    if (count <= 0)
        return count;
    *out = runs[0];
    free(runs);
    if (!with_book)
        return 1;
    PGresult *res = store_run(s, &STMT[ST_LOAD_BOOK], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int lines = PQntuples(res);
    out->book = calloc(lines > 0 ? (size_t)lines : 1, sizeof *out->book);
    for (int i = 0; out->book && i < lines; i++) {
        if (!(out->book[i] = strdup(PQgetvalue(res, i, 0))))
            break;
        out->book_lines = i + 1;
    }
    PQclear(res);
    if (out->book_lines != lines) {
        store_run_free(out);
        return -1;
    }
    return 1;
}

int store_update_sprt(Store *s, int64_t run_id, double llr, const char *verdict)
{
    StoreNums n;
    const char *p[3] = { store_num(&n, 0, run_id), store_dbl(&n, 1, llr), verdict };
    PGresult *res = store_run(s, &STMT[verdict ? ST_FINISH_LLR : ST_SET_LLR], p,
                        verdict ? PGRES_TUPLES_OK : PGRES_COMMAND_OK);
    PQclear(res);
    return res ? 0 : -1;
}

int store_finish_run(Store *s, int64_t run_id, const char *state, const char *verdict)
{
    StoreNums n;
    const char *p[3] = { store_num(&n, 0, run_id), state, verdict };
    PGresult *res = store_run(s, &STMT[ST_FINISH], p, PGRES_TUPLES_OK);
    PQclear(res);
    return res ? 0 : -1;
}

int store_run_progress(Store *s, int64_t run_id, StoreProgress **out)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, run_id) };
    int count;
    PGresult *res = store_fetch_rows(s, &STMT[ST_PROGRESS], p, sizeof **out, (void **)out, &count);
    if (!res)
        return -1;
    for (int i = 0; i < count; i++) {
        int col = 0;
        read_counts(res, i, &col, &(*out)[i].counts);
        (*out)[i].age_s = store_get_dbl(res, i, col);
    }
    PQclear(res);
    return count;
}

int store_run_sets(Store *s, int64_t run_id, char *params0, char *params1, size_t size)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, run_id) };
    PGresult *res = store_run(s, &STMT[ST_RUN_SETS], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found) {
        store_text(res, 0, 0, params0, size);
        store_text(res, 0, 1, params1, size);
    }
    PQclear(res);
    return found;
}

int store_create_data(Store *s, const StoreDataSpec *spec, int64_t *id)
{
    const StoreDataSettings *d = &spec->settings;
    char settings[256];
    snprintf(settings, sizeof settings,
             "{\"random_plies\": %d, \"skip_plies\": %d, \"keep_check\": %s, \"keep_captures\": %s, "
             "\"max_score\": %d, \"depth\": %d}",
             d->random_plies, d->skip_plies, d->keep_check ? "true" : "false", d->keep_captures ? "true" : "false",
             d->max_score, d->depth);
    return store_create_run(s, run_kind_get(RUN_KIND_DATA), &spec->run, settings, id);
}

int store_data_settings(Store *s, int64_t id, StoreDataSettings *out)
{
    StoreNums n;
    const char *p[1] = { store_num(&n, 0, id) };
    PGresult *res = store_run(s, &STMT[ST_DATA_SETTINGS], p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found)
        *out = (StoreDataSettings){ .random_plies = (int)store_i64(res, 0, 0), .skip_plies = (int)store_i64(res, 0, 1),
                                    .keep_check = strcmp(PQgetvalue(res, 0, 2), "t") == 0,
                                    .keep_captures = strcmp(PQgetvalue(res, 0, 3), "t") == 0,
                                    .max_score = (int)store_i64(res, 0, 4), .depth = (int)store_i64(res, 0, 5) };
    PQclear(res);
    return found;
}

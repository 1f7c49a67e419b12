/*
 * store_internal.h - the store's core (store.c) as its domain files
 * (store_<domain>.c, the only other libpq users) see it: the statement
 * registry, the one error path, the connection, and the conversions every
 * domain shares; it names no domain but in the registry's list.  Nothing
 * else includes it (tests/check_includes.sh).
 *
 * Each domain file keeps its statements in one X-macro list and turns it
 * into a table with STORE_STATEMENTS; the core prepares every registered
 * table at each connect (store_connect), so that every query is run with
 * PQexecPrepared and its parameters apart from the SQL (the pgbouncer
 * pattern of style.md: statements in tables, prepared once per
 * connection).
 */
#ifndef XQF_STORE_INTERNAL_H
#define XQF_STORE_INTERNAL_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* One statement: its prepared name ("xqf_" and its id, unique over every domain), SQL, parameter count. */
typedef struct {
    const char *name, *sql;
    int nparams;
} StoreStatement;

/* A domain's statements, as the core's registry lists them. */
typedef struct {
    const StoreStatement *list;
    int count;
} StoreStatements;

#define STORE_STATEMENT_ID(id, sql, n) ST_##id,
#define STORE_STATEMENT_ROW(id, sql, n) { "xqf_" #id, sql, n },
/*
 * In a domain file: the enum ST_<id> and the table STMT of LIST's
 * statements (LIST(S) expands S(id, sql, nparams) once per statement),
 * registered with the core as NAME (declared below).
 */
#define STORE_STATEMENTS(LIST, NAME)                                                             \
    typedef enum { LIST(STORE_STATEMENT_ID) ST_COUNT } Stmt;                                     \
    static const StoreStatement STMT[ST_COUNT] = { LIST(STORE_STATEMENT_ROW) };                  \
    const StoreStatements NAME = { STMT, ST_COUNT }

/* The registry: every domain's table, prepared by store_connect in this order. */
extern const StoreStatements store_statements_core, store_statements_runs, store_statements_spsa, store_statements_tasks,
    store_statements_games, store_statements_builds, store_statements_nets, store_statements_web,
    store_statements_users, store_statements_steer, store_statements_verbs, store_statements_engines,
    store_statements_metrics, store_statements_lists, store_statements_progressions;

/* ---- the connection and the one error path ------------------------------------ */

/* The connection (NULL when down): for what the statements do not cover, such as reading notifications. */
PGconn *store_pgconn(Store *s);
/* Whether the store holds a connection (it may still have failed since: store_ok). */
bool store_connected(const Store *s);
/* Whether a transaction opened by store_begin is open. */
bool store_in_tx(const Store *s);
/*
 * The one error path: logs what failed and, when the connection is gone,
 * drops it so that store_ok() says so.  Always returns -1.
 */
int store_db_error(Store *s, const char *what, const PGresult *res);
/*
 * Runs a prepared statement with text parameters and text results; returns
 * its result when its status is `want` (the caller clears it), else NULL
 * after store_db_error.
 */
PGresult *store_run(Store *s, const StoreStatement *st, const char *const *params, ExecStatusType want);
/*
 * store_run's statement planned afresh at each call, for the sizes its tables
 * have now: for a statement whose best plan changes as a table grows (a
 * prepared statement keeps the generic plan made when the tables were
 * small, and PostgreSQL replans it only after an ANALYZE).
 */
PGresult *store_run_planned(Store *s, const StoreStatement *st, const char *const *params, ExecStatusType want);
/*
 * PQexecPrepared itself, for binary parameters or results (lengths,
 * formats, result_format as libpq takes them): the result whatever its
 * status (NULL when not connected), for the caller to check.
 */
PGresult *store_exec_prepared(Store *s, const StoreStatement *st, int n, const char *const *params,
                              const int *lengths, const int *formats, int result_format);
/* A statement's rows into a zeroed malloc'd array of `size` per row (store_fetch_rows in store.c). */
PGresult *store_fetch_rows(Store *s, const StoreStatement *st, const char *const *params, size_t size, void **rows,
                           int *count);
/* One zeroed element of `size` bytes per row of res into *out: the count, or -1 (res NULL, or out of memory: res cleared). */
int store_rows_alloc(PGresult *res, size_t size, void **out);
/* A command's affected row count (0 or more), or -1. */
int store_command_rows(Store *s, const StoreStatement *st, const char *const *params);
/* A call of a function whose result is not needed (one the dashboard writes through, 030_roles.sql). 0 or -1. */
int store_void_call(Store *s, const StoreStatement *st, const char *const *params);
/* The first column of the first row as a number: -1 on error. */
int64_t store_count_of(Store *s, const StoreStatement *st, const char *const *p);
/* One row's first column into *id: 1, 0 (no single row) or -1. */
int store_id_of(Store *s, const StoreStatement *st, const char *const *p, int64_t *id);
/* A statement answering 'ok' or 'stale': 1, 0 or -1. */
int store_ok_or_stale(Store *s, const StoreStatement *st, const char *const *p);
/*
 * A chunk of a stored blob by statement st (its columns: length, bytes,
 * name, signature; parameters sha256, offset, max): store_build_chunk's
 * contract (store_builds.h).
 */
int store_blob_chunk(Store *s, const StoreStatement *st, const char *sha256, int64_t offset, size_t max, void *out,
                     size_t *len, int64_t *total, char name[STORE_NAME_MAX + 1], char signature[STORE_SIG_HEX + 1]);

/* ---- text conversions ------------------------------------------------------------ */

typedef struct {
    char v[28][32];                  /* numbers as text, in parameter order */
} StoreNums;

const char *store_num(StoreNums *n, int i, int64_t v);
const char *store_dbl(StoreNums *n, int i, double v);
/* v as text in slot i, or NULL (SQL NULL: the column keeps its value or default) when null. */
const char *store_num_or_null(StoreNums *n, int i, int64_t v, bool null);
/* A column as a number (0 when NULL), a double (NAN when NULL), text into out. */
int64_t store_i64(const PGresult *r, int row, int col);
double store_get_dbl(const PGresult *r, int row, int col);
void store_text(const PGresult *r, int row, int col, char *out, size_t size);
/* Parses "1,2,3" into at most max numbers; returns the count. */
int store_parse_list(const char *text, int64_t *out, int max);
/* A PostgreSQL array literal of texts, each quoted and escaped; NULL when out of memory. */
char *store_text_array(const char *const *items, int n);

/* A growing text for array literals; NULL data after an allocation failed. */
typedef struct {
    char *data;
    size_t len, cap;
} StoreText;

void store_text_add(StoreText *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "{a,b,...}" of n int64s taken every `stride` bytes from base. */
void store_text_ints(StoreText *t, const void *base, size_t stride, int n);

#endif

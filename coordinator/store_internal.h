/*
 * store_internal.h - the store's own hooks into its connection, for its
 * other libpq files (store_web.c, store_steer.c, store_engines.c) beside
 * store.c; nothing else includes it (tests/check_includes.sh).
 */
#ifndef XQF_STORE_INTERNAL_H
#define XQF_STORE_INTERNAL_H

#include "store.h"

/* The connection (NULL when down). */
struct pg_conn;
struct pg_conn *store_pgconn(Store *s);
/*
 * Runs sql with n text parameters: the result (a PGresult the caller
 * clears) when its status is want (an ExecStatusType), else NULL with the
 * error logged under `what`.
 */
struct pg_result;
struct pg_result *store_query(Store *s, const char *what, const char *sql, int n, const char *const *params, int want);

#endif

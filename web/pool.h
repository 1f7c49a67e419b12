/*
 * pool.h - the dashboard's database connections: a fixed set of Stores
 * (xqf-web --db-connections), each lent to one request at a time, as
 * pgbouncer's session pool lends a server connection to one client.  A
 * slow request (a PGN download of 20,000 games, a report) holds one
 * connection and the other requests go on on the others: no request waits
 * behind another's query.  Heavy requests together hold at most all but
 * one connection, so the light pages (the runs list, a run, logins) always
 * have one; a connection is (re)connected when taken, so the database
 * going away and coming back needs nothing of the caller.
 *
 * Thread-safe: the lending is under the pool's lock; a Store taken is the
 * taker's alone until it gives it back.
 */
#ifndef XQF_WEB_POOL_H
#define XQF_WEB_POOL_H

#include <stdbool.h>

#include "store.h"

typedef struct Pool Pool;

/*
 * A pool of size connections (at least 1) to conninfo, the first one
 * connected now (the database is checked at start), the others when first
 * taken.  NULL when out of memory or the first cannot connect (logged).
 */
Pool *pool_new(const char *conninfo, int size);
/* Closes every connection (none may be lent any more). Safe twice. */
void pool_destroy(Pool **p);

typedef enum {
    POOL_LIGHT,                      /* a page, an action, a login: any free connection */
    POOL_HEAVY                       /* a PGN download or a report: at most all but one connection together */
} PoolUse;

/*
 * A connected Store for one request, waiting up to wait_ms for a free
 * one.  NULL when none came free in time (*busy true) or the database
 * cannot be reached (*busy false).  Give it back with pool_give.
 */
Store *pool_take(Pool *p, PoolUse use, int wait_ms, bool *busy);
/* Gives back a Store pool_take lent (NULL: nothing) and nulls the caller's pointer. This function can't fail. */
void pool_give(Pool *p, Store **s);

#endif

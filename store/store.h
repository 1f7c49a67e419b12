/*
 * store.h - the store's core: what the coordinator (and tools such as
 * xqf-tune and xqf-web) keep in PostgreSQL goes through one connection per
 * Store, opened, checked, migrated and in transactions here.  What is kept
 * has a header per domain, each its contract: store_runs.h, store_spsa.h,
 * store_tasks.h (workers, tasks, leases), store_games.h (stored games,
 * trust, audits), store_builds.h (builds and the build queue),
 * store_nets.h, store_web.h, store_users.h, store_steer.h (steering,
 * chains), store_engines.h.  Only the store's files include libpq-fe.h.
 *
 * Every statement is in a table of its domain's file, registered with the
 * core (store_internal.h), prepared once per connection and run with
 * PQexecPrepared (parameters always separate from the SQL); every result
 * is checked and cleared.
 * Connecting checks the database's schema version (the highest of
 * schema_migrations) against the migrations compiled in: a newer schema is
 * refused by every program (it would misread it), an older one too unless
 * the store was told to migrate (store_set_migrate: the coordinator at
 * start, xqf-coordinator --migrate) and connects as the schema's owner,
 * which applies the missing migrations (schemas/sql/migrations, under an
 * advisory lock, each in a transaction), then every SQL function's current
 * body (schemas/sql/functions) and the roles' privileges (030_roles.sql), in
 * one transaction, at every such connect.
 * Then it prepares the statements and LISTENs on "xqf_runs" (runs
 * created, finished or re-prioritised).
 *
 * Errors: every call returns -1 on a database error after logging it.  When
 * the connection is lost, store_ok() turns false and the caller reconnects
 * with store_connect() (the coordinator does so with a backoff); nothing is
 * retried behind the caller's back, so a group of calls inside
 * store_begin/store_commit is all or nothing.
 *
 * Counts follow match.h: the first player's view; pentanomial LL, LD,
 * DD+WL, WD, WW per complete pair; games by GameReason.
 */
#ifndef XQF_STORE_H
#define XQF_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    STORE_PARAMS_MAX = 32768,    /* = XQF_PARAMS_MAX */
    STORE_NAME_MAX = 64,
    STORE_REASONS = 32,
    STORE_TEXT_MAX = 512,
    STORE_SIG_HEX = 128          /* = XQF_SIGNATURE_HEX */
};

typedef struct Store Store;

/*
 * The connection's bounds where conninfo (or PGCONNECT_TIMEOUT, for the
 * first) does not set them: a connect gives up after 10 s, TCP keepalives
 * notice a dead link in about 60 s (30 s idle, then 3 probes 10 s apart),
 * and a statement runs at most 30 s (unless statement_timeout was set in
 * the options, PGOPTIONS, the role, the database or the server).
 */
#define STORE_CONNECT_TIMEOUT_S "10"
#define STORE_KEEPALIVES_IDLE_S "30"
#define STORE_KEEPALIVES_INTERVAL_S "10"
#define STORE_KEEPALIVES_COUNT "3"
#define STORE_STATEMENT_TIMEOUT_MS "30000"

/* A store for conninfo (libpq syntax); not connected yet. NULL when out of memory. */
Store *store_new(const char *conninfo);
void store_destroy(Store **s);
/* store_connect's answer when the schema does not suit this program: retrying will not help. */
enum { STORE_SCHEMA_MISMATCH = -2 };
/*
 * (Re)connects: the schema check (and the migrations if enabled), prepared
 * statements, LISTEN.  Returns 0, -1 (database unavailable or an error:
 * retry later) or STORE_SCHEMA_MISMATCH (logged with what to do).
 */
int store_connect(Store *s);
/*
 * Whether a conninfo (libpq's keywords or URI, with PGHOST, PGHOSTADDR,
 * PGSSLMODE and PGSERVICE where it says nothing) names a database on
 * another machine without sslmode=verify-full: true with why.  Each host
 * (and hostaddr) of its lists is parsed: this machine is a socket path,
 * "localhost", or an address in 127.0.0.0/8 or ::1, nothing else.  A
 * service (pg_service.conf) may name any host: it is taken only with
 * sslmode=verify-full in the conninfo itself.  store_connect refuses such
 * a conninfo: results, builds and accounts would cross the network
 * unverified.
 */
bool store_conninfo_problem(const char *conninfo, char *why, size_t size);
/* Whether store_connect applies the migrations the database lacks (default: no, it refuses the schema). */
void store_set_migrate(Store *s, bool on);
/* The number of migrations applied by this store's last store_connect (0 when up to date). */
int store_migrations_applied(const Store *s);
/* The schema version found by the last store_connect (after its migrations), 0 before. */
int store_schema_version(const Store *s);
/*
 * Whether the role of the last store_connect owns the schema (a member of
 * the tables' owner): only such a role migrates.  The programs connect as
 * roles of their own (schemas/sql/migrations/030_roles.sql) that do not; one
 * that finds itself the owner says so (docs/cluster.md, "Database roles").
 */
bool store_owns_schema(const Store *s);
/* The role of the last store_connect (current_user), "" before. */
const char *store_role(const Store *s);
/* Is the connection up? */
bool store_ok(const Store *s);
/* The connection's socket (to poll for notifications), or -1. */
int store_socket(const Store *s);
/*
 * Reads what arrived on the socket: returns the number of "xqf_runs"
 * notifications (0 or more), or -1 when the connection is lost.
 */
int store_notifications(Store *s);

/*
 * Timing of every prepared statement this store runs (the coordinator's
 * monitoring, coordinator/metrics.h): fn(arg, statement, us) after each,
 * statement its index in the registry (store_statement_name), us its
 * wall time in microseconds, failed ones included.  fn NULL: none (the
 * default: no clock is read).
 */
typedef void (*StoreObserver)(void *arg, int statement, int64_t us);
void store_observe(Store *s, StoreObserver fn, void *arg);
/* The registry's statements, every domain's: how many, and the prepared name of the i-th ("xqf_<id>"; NULL past them). */
int store_statement_total(void);
const char *store_statement_name(int i);

int store_begin(Store *s);
int store_commit(Store *s);
/* Rolls back (nothing when no transaction is open or the connection is lost). */
void store_rollback(Store *s);
/*
 * Savepoints inside a transaction (one name, nested: each call refers to
 * the newest): store_savepoint sets one, store_release keeps what was done
 * since, store_rollback_to undoes it (a failed statement included) and
 * keeps the savepoint.  0 or -1.
 */
int store_savepoint(Store *s);
int store_release(Store *s);
int store_rollback_to(Store *s);

/* ---- runs ---------------------------------------------------------------- */

typedef struct {
    int64_t pairs, wins, draws, losses;
    int64_t penta[5];
    int nreasons;
    int64_t reasons[STORE_REASONS];
} StoreCounts;

#endif

/*
 * store.h - everything the coordinator (and tools such as xqf-tune) keep in
 * PostgreSQL; the only module that includes libpq-fe.h.
 *
 * One connection per Store.  Every statement is in one table in store.c,
 * prepared once per connection and run with PQexecPrepared (parameters
 * always separate from the SQL); every result is checked and cleared.
 * Connecting checks the database's schema version (the highest of
 * schema_migrations) against the migrations compiled in: a newer schema is
 * refused by every program (it would misread it), an older one too unless
 * the store was told to migrate (store_set_migrate: the coordinator at
 * start, xqf-coordinator --migrate) and connects as the schema's owner,
 * which applies the missing migrations (schemas/migrations, under an
 * advisory lock, each in a transaction), then every SQL function's current
 * body (schemas/functions) and the roles' privileges (030_roles.sql), in
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
 * Whether a conninfo (libpq's keywords or URI, with PGHOST, PGHOSTADDR and
 * PGSSLMODE where it says nothing) names a database on another machine
 * without sslmode=verify-full: true with why.  store_connect refuses such
 * a conninfo: results, builds and accounts would cross the network
 * unverified.
 */
bool store_conninfo_problem(const char *conninfo, char *why, size_t size);
/* A server setting of the connection (SHOW name) into out. 0 or -1. */
int store_setting(Store *s, const char *name, char *out, size_t size);
/* A connection option in effect (libpq keyword: "connect_timeout", "keepalives", ...) into out. 0 or -1. */
int store_conn_option(const Store *s, const char *keyword, char *out, size_t size);
/* Whether store_connect applies the migrations the database lacks (default: no, it refuses the schema). */
void store_set_migrate(Store *s, bool on);
/* The number of migrations applied by this store's last store_connect (0 when up to date). */
int store_migrations_applied(const Store *s);
/* The schema version found by the last store_connect (after its migrations), 0 before. */
int store_schema_version(const Store *s);
/*
 * Whether the role of the last store_connect owns the schema (a member of
 * the tables' owner): only such a role migrates.  The programs connect as
 * roles of their own (schemas/migrations/030_roles.sql) that do not; one
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

/* ---- workers and tasks --------------------------------------------------- */

/*
 * Registers a worker by name (created or refreshed).  auth: the allow-list
 * name of its key under CURVE ("" or NULL without).  Returns 1 with *id, 0
 * when the name belongs to another key (006_auth.sql), or -1.
 */
int store_hello(Store *s, const char *name, const char *build, int cores, int concurrency, const char *auth,
                int64_t *id);
/*
 * The same, and a key (auth not "") that has names_max worker names
 * already (> 0; 010_bounds.sql) gets no new one: -2.
 */
int store_hello_capped(Store *s, const char *name, const char *build, int cores, int concurrency,
                       const char *auth, int names_max, int64_t *id);

typedef struct {
    int64_t task_id, token, run_id;
    int64_t first_pair, pairs;       /* the pairs this lease plays */
    char params0[STORE_PARAMS_MAX + 1], params1[STORE_PARAMS_MAX + 1];
} StoreLease;

/*
 * Claims tasks of run for n requests at once (workers[i] may repeat: one
 * per slot asking), in one statement (005_batch.sql): a queued task, else
 * (SPRT) a new one, under a lease of lease_ms.  Returns how many got a
 * lease (given[i], out[i]), or -1.
 */
int store_claim_batch(Store *s, int64_t run, const int64_t *workers, int n, int64_t lease_ms,
                      StoreLease *out, bool *given);
/*
 * The tasks each of n workers holds under a lease now, into counts[i], and
 * those of every worker of its key (its allow-list name; a worker without
 * one is a key of its own) into keys[i], in one statement (a key's count
 * once however many of the n share it).  0 or -1.
 */
int store_leased_counts(Store *s, const int64_t *workers, int n, int64_t *counts, int64_t *keys);
/*
 * A new task of run with explicit parameter sets and a perturbation record
 * (JSON or NULL), leased at once: what SPSA runs use (tuner/spsa.h).  Returns
 * 1, 0 (run over or all pairs given) or -1.
 */
int store_create_task(Store *s, int64_t run, int64_t worker, int64_t lease_ms, const char *params0,
                      const char *params1, const char *perturbation_json, StoreLease *out);

typedef enum { REPORT_ACCEPTED, REPORT_DUPLICATE, REPORT_STALE, REPORT_INVALID } StoreReport;
const char *store_report_text(StoreReport r);

typedef struct {
    int64_t worker, task, token;     /* in */
    StoreCounts counts;              /* in */
    const uint8_t *games;            /* in: the result's game records (games.h), or NULL */
    size_t games_len;                /* in */
    int64_t games_from;              /* in: the records are those of the lease's pairs games_from .. pairs - 1 */
    StoreReport status;              /* out */
    int64_t run;                     /* out: 0 when the task is unknown */
    bool task_done;                  /* out */
} StoreReportItem;

/*
 * Workers' cumulative counts under their leases (exactly-once: see
 * 005_batch.sql; a lease held by another worker is "stale"), judged in
 * arrival order (repeats of a task go to later statements): each item's
 * status, run (0 when the task is unknown) and task_done are filled.
 * Counts whose pentanomial disagrees with their W/D/L
 * (xqf_penta_consistent) are invalid without reaching the database, and
 * so are game records that are not one per game of the pairs from
 * games_from on, and records that start past the pairs the lease had
 * reported (games_from beyond them: games would be counted without their
 * record).  An accepted item's records are stored in the same transaction
 * (every run kind, 014_games.sql); those stored already are kept as they
 * are.  0, or -1 on a database error.
 */
int store_report_batch(Store *s, StoreReportItem *items, int n, int64_t lease_ms);
/*
 * Where the leases of n report items stand in their runs: run[i] the run
 * of item i's task and first[i] the run's pair its lease began at (the
 * task's first pair plus the pairs done before the lease), in one
 * statement; run[i] 0 when the task or lease is unknown.  0 or -1.
 */
int store_lease_starts(Store *s, const StoreReportItem *items, int n, int64_t *run, int64_t *first);
/* Extends worker's lease. Returns 1 (extended), 0 (stale: stop the task) or -1. */
int store_heartbeat(Store *s, int64_t worker, int64_t task, int64_t token, int64_t lease_ms);
/*
 * Puts worker's leased task back in the queue; refused: the worker cannot
 * play it (the reason is kept), and a task refused quarantine_after times
 * (<= 0: never) is set aside instead.  Returns 1 (queued), 2
 * (quarantined), 0 (stale) or -1.
 */
int store_handback(Store *s, int64_t worker, int64_t task, int64_t token, const char *reason, bool refused,
                   int quarantine_after);

/* A task set aside: refused too many times. */
typedef struct {
    int64_t task, first_pair, pairs, refusals;
    char reasons[STORE_TEXT_MAX * 2];  /* the latest, joined by " | " */
} StoreQuarantined;

/* A run's quarantined tasks by id. Returns the count or -1; *out malloc'd. */
int store_quarantined(Store *s, int64_t run, StoreQuarantined **out);
/* Re-queues expired leases. Returns how many, or -1. */
int64_t store_expire_leases(Store *s);
/* Pushes every lease's deadline to at least now + lease_ms. Returns how many, or -1. */
int64_t store_extend_leases(Store *s, int64_t lease_ms);

/* ---- every run's games (014_games.sql) ------------------------------------- */

/* A worker's id by name. Returns 1 with *id, 0 (no such worker) or -1. */
int store_worker_id(Store *s, const char *name, int64_t *id);
/* Whether task belongs to run: 1, 0 or -1. */
int store_task_of_run(Store *s, int64_t task, int64_t run);

/* ---- status -------------------------------------------------------------- */

typedef struct {
    int64_t id;
    char name[STORE_NAME_MAX + 1];
    char build_id[STORE_NAME_MAX + 1];
    int cores, concurrency;
    int64_t pairs;                   /* accepted, all runs */
    int64_t leased;                  /* tasks under lease now */
    double idle_s;                   /* since last seen */
    /* store_web_workers only: */
    int64_t nps;                     /* its latest bench's nodes per second (013), 0 before any */
    int64_t crashes, time_losses, illegal_moves; /* games so ended, all runs */
} StoreWorker;

/* Workers seen within the last seconds (all when <= 0). Returns the count or -1; *out malloc'd. */
int store_list_workers(Store *s, int seconds, StoreWorker **out);

#endif

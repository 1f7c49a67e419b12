/*
 * store_test.h - what tests and audits ask of the store (store.c, the
 * only libpq user) and the programs never do: a run's audit totals and
 * leases, creating and dropping databases, running a statement to see
 * whether a role may.  Kept out of store.h, the programs' contract; only
 * tests include it (tests/check_includes.sh).
 */
#ifndef XQF_STORE_TEST_H
#define XQF_STORE_TEST_H

#include <stdbool.h>
#include <stdint.h>

#include "store.h"

/* What a run's tables add up to (tests and audits: every count must agree). */
typedef struct {
    int64_t tasks, tasks_done, max_attempts;
    int64_t task_pairs, task_games;          /* sums over tasks: done_pairs, wins+draws+losses */
    int64_t result_pairs, result_games;      /* sums over the results of every lease */
    int64_t run_pairs, run_games, run_penta; /* the run's own counters */
    int64_t stored_games;                    /* game records kept (014_games.sql) */
    int64_t stored_wins, stored_draws;       /* their results, the first player's view */
    int64_t run_wins, run_draws;
} StoreAudit;

/* Returns 1 with *out, 0 (no such run) or -1. */
int store_audit_run(Store *s, int64_t run, StoreAudit *out);

/* A run's leases (xqf-loadgen's books after a storm, beside StoreAudit's totals). */
typedef struct {
    int64_t leases;                  /* leases given (the tasks' attempts) */
    int64_t requeued;                /* leases that ended without the task done: expired, handed back, purged */
    int64_t expired_tasks;           /* tasks whose last lease expired (last_error) */
    int64_t tasks_over;              /* tasks with more pairs accepted than they hold: counted twice */
} StoreLeases;

/* Fills *out for run (zeros when it has no task). 0 or -1. */
int store_run_leases(Store *s, int64_t run, StoreLeases *out);
/* The lease tokens of run's results that counted pairs (not purged), ascending. Returns the count or -1; *tokens malloc'd. */
int store_run_counted_leases(Store *s, int64_t run, int64_t **tokens);

/*
 * Creates (drop false) or drops (drop true, if it exists) database `name`
 * on conninfo's server, connecting with conninfo.  Returns 0 or -1 (logged).
 */
int store_admin_database(const char *conninfo, const char *name, bool drop);

/*
 * Runs sql (commands without parameters: tests of what a role may do) and
 * returns 0, or -1 with the error in error as "SQLSTATE message" ("42501
 * permission denied for table runs"), logged at debug level only: the
 * tests expect refusals.
 */
int store_exec(Store *s, const char *sql, char *error, size_t size);


/*
 * The ways in that only tests take, the programs going through the run
 * service (run_service.h) and the coordinator's batches instead: a run
 * ended directly, a worker named without a connection, a run's options
 * set after its creation, a connection's settings read back (a run made
 * directly: store_create_sprt and store_create_games, store_runs.h, which
 * need its types).
 */
/* Ends an active run in state ("finished" or "stopped") with a verdict. Returns 0 or -1. */
int store_finish_run(Store *s, int64_t run, const char *state, const char *verdict);
/*
 * Registers a worker by name (created or refreshed).  auth: the allow-list
 * name of its key under CURVE ("" or NULL without).  Returns 1 with *id, 0
 * when the name belongs to another key (006_auth.sql), or -1.
 */
int store_hello(Store *s, const char *name, const char *build, int cores, int concurrency, const char *auth,
                int64_t *id);
/* Sets whether run's games keep each move's score and depth (the run option). 0 or -1. */
int store_set_game_scores(Store *s, int64_t run, bool on);
/* Sets the share of run's pairs replayed (0-1). 0 or -1. */
int store_set_replay_share(Store *s, int64_t run, double share);
/* A server setting of the connection (SHOW name) into out. 0 or -1. */
int store_setting(Store *s, const char *name, char *out, size_t size);
/* A connection option in effect (libpq keyword: "connect_timeout", "keepalives", ...) into out. 0 or -1. */
int store_conn_option(const Store *s, const char *keyword, char *out, size_t size);

#endif

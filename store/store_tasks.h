/*
 * store_tasks.h - workers, tasks and leases: a worker's hello, claims of
 * tasks under a lease, results reported exactly once (005_batch.sql),
 * handbacks and quarantine (010_bounds.sql), the leases whose deadline
 * passed in the coordinator's memory (leases.h) re-queued, and the
 * workers seen.
 */
#ifndef XQF_STORE_TASKS_H
#define XQF_STORE_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/*
 * Registers a worker by name (created or refreshed).  auth: the allow-list
 * name of its key under CURVE ("" or NULL without).  Returns 1 with *id, 0
 * when the name belongs to another key (006_auth.sql), or -1; a key (auth
 * not "") that has names_max worker names already (> 0; 010_bounds.sql)
 * gets no new one: -2.  (store_hello, the same without the bound, is the
 * tests', store_test.h.)
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
 * (JSON or NULL), leased at once: what SPSA runs use (stats/spsa.h).  Returns
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
/*
 * Re-queues the n tasks tasks[i] still leased under tokens[i] (the
 * coordinator's own deadlines passed: leases.h), in one statement; a
 * lease that ended meanwhile is passed over.  Returns how many, or -1.
 */
int64_t store_expire_given(Store *s, const int64_t *tasks, const int64_t *tokens, int n);

typedef struct {
    int64_t task, token, worker;
} StoreHeldLease;

/* Every task lease the database holds. Returns the count or -1; *out malloc'd (NULL when none). */
int store_leases_held(Store *s, StoreHeldLease **out);

/* A worker's id by name. Returns 1 with *id, 0 (no such worker) or -1. */
int store_worker_id(Store *s, const char *name, int64_t *id);
/* Whether task belongs to run: 1, 0 or -1. */
int store_task_of_run(Store *s, int64_t task, int64_t run);

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

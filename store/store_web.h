/*
 * store_web.h - what only the web dashboard (xqf-web) reads of runs beyond
 * the other domains' contracts: the owners of the runs listed, a tester's
 * runs waiting, the task table of a run by worker, the workers with their
 * faults, and live notifications of a run's progress
 * (schemas/sql/migrations/011_web.sql).  Its accounts and sessions are
 * store_users.h, the build queue store_builds.h; what is done to a run
 * (stop, approve, modify) is store_steer.h's, whoever does it.  The
 * store's conventions: parameters passed separately, every result checked
 * and cleared, -1 on a database error after logging it (store_ok() then
 * says whether the connection is gone).
 */
#ifndef XQF_STORE_WEB_H
#define XQF_STORE_WEB_H

#include <stdbool.h>
#include <stdint.h>

#include "store.h"
#include "store_tasks.h"

/*
 * Session settings of the web's connections, after every store_connect:
 * JIT off (its compile time, ~0.4 s, would dominate queries of a few ms).
 * A connection as the schema's owner is warned of, once a process.
 * Returns 0 or -1.
 */
int store_web_session(Store *s);

/* ---- runs ---------------------------------------------------------------------- */

/* Who created each run (owner "" for runs made outside the web) among the newest max. */
typedef struct {
    int64_t id;
    char owner[STORE_NAME_MAX + 1];
} StoreWebOwner;

/* Returns the count or -1; *out malloc'd. */
int store_web_owners(Store *s, int max, StoreWebOwner **out);
/* How many of owner's runs wait for approval or for their builds, or -1. */
int64_t store_web_waiting(Store *s, const char *owner);

/* One row of a run's task table: what one worker played of it. */
typedef struct {
    char worker[STORE_NAME_MAX + 1]; /* "" for tasks never leased */
    int64_t tasks, leased, pairs, wins, draws, losses, attempts;
    int64_t reasons[STORE_REASONS];  /* games by GameReason, over its tasks */
    int nreasons;
} StoreWebTasks;

/* A run's tasks grouped by worker (most pairs first, at most max rows). Returns the count or -1; *out malloc'd. */
int store_web_tasks(Store *s, int64_t run, int max, StoreWebTasks **out);

/*
 * store_list_workers for the machines page: the same rows (seen within
 * seconds, by name, at most max), with the leased tasks counted in one
 * pass over the leased tasks instead of one lookup per worker.  Returns
 * the count or -1; *out malloc'd.
 */
int store_web_workers(Store *s, int seconds, int max, StoreWorker **out);

/* ---- live notifications ------------------------------------------------------- */

/* LISTENs on "xqf_run_progress" (011_web.sql) too. Returns 0 or -1. */
int store_web_listen(Store *s);
/*
 * Reads what arrived on the socket: the runs whose progress was committed
 * (at most max ids into runs, repeats folded) and, in *list_changed,
 * whether a run was created or changed state ("xqf_runs").  Returns the
 * number of ids, or -1 when the connection is lost.
 */
int store_web_notices(Store *s, int64_t *runs, int max, bool *list_changed);

#endif

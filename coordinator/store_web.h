/*
 * store_web.h - what the web dashboard (xqf-web) reads and writes beyond
 * the store's own contract (store.h): owners and approvals of runs, the
 * task table of a run by worker, live notifications of a run's progress,
 * accounts, sessions and the audit of actions (schemas/migrations/011_web.sql).
 * The store's second file that includes libpq-fe.h; the same conventions:
 * parameters passed separately, every result checked and cleared, -1 on a
 * database error after logging it (store_ok() then says whether the
 * connection is gone).
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
/* One run's owner into out ("" when none). Returns 1, 0 (no such run) or -1. */
int store_web_owner(Store *s, int64_t run, char *out, size_t size);
/* How many of owner's runs wait for approval or for their builds, or -1. */
int64_t store_web_waiting(Store *s, const char *owner);

/*
 * Runs created on this connection from now on get owner (NULL or "": the
 * column's default) and, when pending, state 'pending' (wait for an
 * admin's approval; the coordinator serves only 'active' runs).  Call
 * again with NULL, false after the creation.  Returns 0 or -1.
 */
int store_web_creating(Store *s, const char *owner, bool pending);
/* A pending run approved: building when it waits for builds of its refs, else active. Returns 1, 0 (not pending) or -1. */
int store_web_approve(Store *s, int64_t run);
/* A pending or active run stopped (verdict "stopped by NAME"). Returns 1, 0 (already over) or -1. */
int store_web_stop(Store *s, int64_t run, const char *verdict);
/* Sets an active or pending run's priority, max_pairs and pairs_per_task. Returns 1, 0 (over) or -1. */
int store_web_modify(Store *s, int64_t run, int priority, int64_t max_pairs, int pairs_per_task);

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

/* ---- tests of git refs: runs waiting for their builds (017_build_requests.sql) ---- */

enum { STORE_REF_MAX = 255 };

/* A ref of a run to build: what the web asked, and how far the builder got. */
typedef struct {
    int64_t id, run_id;
    char side[8];                    /* test, base */
    char ref[STORE_REF_MAX + 1];
    char state[16];                  /* queued, building, done, failed */
    int64_t build_id;                /* done: the build registered */
    char error[2048];                /* failed: why, with the build log's tail */
} StoreBuildRequest;

/*
 * Makes the run just created (in this transaction, active or pending) wait
 * in state 'building' for the builds of its refs (NULL: that side plays
 * what the run says); it becomes active or pending again when they are
 * built.  Returns 0, or -1 (also when no ref is given or the run is not new).
 */
int store_await_builds(Store *s, int64_t run, const char *test_ref, const char *base_ref);
/*
 * Takes the oldest request to build for builder ("host:pid"): queued, or
 * taken more than lease_s seconds ago by a builder that did not finish.
 * Returns 1 with *out, 0 (none) or -1.
 */
int store_build_claim(Store *s, const char *builder, int lease_s, StoreBuildRequest *out);
/*
 * Records a request's outcome: build (> 0) built, or 0 failed with error.
 * The run takes its builds and its state when the last of its requests is
 * built, or fails with the first failure, in one transaction.  Returns 1
 * with the run's state after it in run_state ("active", "pending",
 * "building", "failed", ...), 0 (the request was not being built) or -1.
 */
int store_build_done(Store *s, int64_t request, int64_t build, const char *error, char *run_state, size_t size);
/*
 * The next build a signer may sign (xqf-tune build --sign-serve): built for
 * an approved run whose requests are all done, not signed yet.  Returns 1
 * with its id, SHA-256 and name, 0 (none) or -1.
 */
int store_sign_next(Store *s, int64_t *build, char sha256[STORE_NAME_MAX + 1], char name[STORE_NAME_MAX + 1]);
/*
 * Stores the signer's signature of build (whose bytes it hashed to sha256)
 * and starts each run that waited only for it; *started their count.
 * Returns 1, 0 (signed already, or the stored SHA-256 is not sha256) or -1.
 */
int store_build_signed(Store *s, int64_t build, const char *sha256, const char *signature, int *started);
/* A run's build requests, test first. Returns the count (0: a run without) or -1; *out malloc'd. */
int store_build_requests(Store *s, int64_t run, StoreBuildRequest **out);

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

/* ---- accounts, sessions, audit ----------------------------------------------------- */

typedef struct {
    int64_t id;
    char name[STORE_NAME_MAX + 1];
    char role[16];                   /* viewer, tester, admin */
    char pwhash[256];                /* crypto_pwhash_str */
} StoreWebUser;

/* Creates or (replace) updates an account; a replaced password ends its sessions. Returns 1, 0 (exists and !replace, or a bad name/role) or -1. */
int store_web_user_add(Store *s, const char *name, const char *role, const char *pwhash, bool replace);
/* Returns 1 with *out, 0 (no such user, or disabled) or -1. */
int store_web_user_get(Store *s, const char *name, StoreWebUser *out);
/* Disables (its sessions ended) or enables an account. Returns 1, 0 (no such user) or -1. */
int store_web_user_set_disabled(Store *s, const char *name, bool disabled);
/* Deletes an account and its sessions. Returns 1, 0 (no such user) or -1. */
int store_web_user_delete(Store *s, const char *name);

/* A session of user for ttl_s seconds under the token's hash, with its CSRF token. Returns 0 or -1. */
int store_web_session_add(Store *s, const char *token_hash, int64_t user, const char *csrf, int64_t ttl_s);
/* The live session of token_hash: 1 with its user and CSRF token, 0 (none or expired) or -1. */
int store_web_session_get(Store *s, const char *token_hash, StoreWebUser *user, char *csrf, size_t csrf_size);
/* Ends a session (and every expired one). Returns 0 or -1. */
int store_web_session_end(Store *s, const char *token_hash);

/* Records an action (run 0: none). Returns 0 or -1. */
int store_web_audit(Store *s, const char *actor, int64_t run, const char *action, const char *detail);

typedef struct {
    char at[32];                     /* "YYYY-MM-DD HH:MM:SS" UTC */
    char actor[STORE_NAME_MAX + 1];
    char action[32];
    char detail[STORE_TEXT_MAX];
} StoreWebAudit;

/* A run's audit, newest first, at most max rows. Returns the count or -1; *out malloc'd. */
int store_web_audit_list(Store *s, int64_t run, int max, StoreWebAudit **out);

#endif

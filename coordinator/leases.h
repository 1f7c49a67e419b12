/*
 * leases.h - the deadlines of the task leases, kept by the coordinator in
 * memory: a heartbeat extends its lease here without a database
 * statement, and only what must survive reaches PostgreSQL (the claim,
 * the results, and the expiry of leases whose deadline passed, re-queued
 * in one statement per expiry tick).
 *
 * The database stays the authority on which leases exist (a result or
 * handback under a lease it no longer holds is stale there); this table
 * says when each one expires.  It learns a lease when the transaction
 * that claimed it commits, forgets it when its task is done, handed back
 * or expired, and on every connection to the database takes in the
 * leases it finds there that it does not know, each with one lease of
 * grace from now: a restarted coordinator does not rob the workers still
 * playing, and expires those not heard within that lease.  A lease the
 * database ended by other means (a worker purged, a run stopped by
 * another process) is forgotten when its deadline passes: until then its
 * heartbeats are answered ok, and its result is refused stale.
 *
 * An open-addressing hash table keyed by the lease token (linear probing,
 * deletion by backward shift: Knuth, TAOCP vol. 3, 6.4, Algorithm R), so
 * a heartbeat costs one probe sequence and the expiry tick one pass.
 */
#ifndef XQF_LEASES_H
#define XQF_LEASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t token;                   /* 0: an empty slot */
    int64_t task, worker;
    int64_t deadline_ms;             /* clock_now_ms() past which the lease expires */
} Lease;

typedef struct {
    Lease *slots;
    size_t cap;                      /* a power of two, or 0 */
    size_t count;
} Leases;

/* Frees the table (a zeroed Leases is an empty table). */
void leases_free(Leases *L);
/* Adds or replaces the lease of token. 0, or -1 (out of memory). */
int leases_put(Leases *L, int64_t token, int64_t task, int64_t worker, int64_t deadline_ms);
/* Adds the lease of token with deadline_ms unless known (then only its deadline is raised to it). 0 or -1. */
int leases_adopt(Leases *L, int64_t token, int64_t task, int64_t worker, int64_t deadline_ms);
/* The lease of token, or NULL. */
Lease *leases_find(Leases *L, int64_t token);
/* Forgets the lease of token (nothing if unknown). */
void leases_drop(Leases *L, int64_t token);
/*
 * A heartbeat of worker for task under token: when that lease is known
 * and is that worker's and task's, its deadline becomes deadline_ms and 1
 * is returned; else 0 (stale).
 */
int leases_beat(Leases *L, int64_t token, int64_t task, int64_t worker, int64_t deadline_ms);
/* Raises every deadline to at least deadline_ms (after a stall or a reconnection). Returns how many leases. */
size_t leases_extend_all(Leases *L, int64_t deadline_ms);
/* Up to max tokens of the leases whose deadline is before now into out. Returns how many. */
size_t leases_due(const Leases *L, int64_t now_ms, int64_t *out, size_t max);

/* Re-queues the n tasks tasks[i] leased under tokens[i] (store_expire_given): how many, or -1. */
typedef int64_t (*LeasesExpireFn)(void *ctx, const int64_t *tasks, const int64_t *tokens, int n);
/*
 * One statement's worth of expiry: up to max of the leases due at now_ms
 * are given to expire, and forgotten only when it succeeds; when it fails
 * (a statement timeout, the connection lost, out of memory) every one of
 * them stays, to be given again at the next tick.  Returns how many
 * leases were given (0: none due); *requeued is what expire returned (0
 * when none was due, -1 on failure).
 */
size_t leases_expire_batch(Leases *L, int64_t now_ms, size_t max, LeasesExpireFn expire, void *ctx, int64_t *requeued);

/*
 * The size of the next expiry statement after one of size that failed or
 * succeeded: halved on a failure (down to min: a statement that ran into
 * its timeout is tried smaller, not again at the size that failed),
 * doubled after a success (up to max).  Additive increase would climb
 * back too slowly at one tick a second; the halving is TCP's
 * multiplicative decrease (RFC 5681).  This function can't fail.
 */
size_t leases_batch_next(size_t size, bool failed, size_t min, size_t max);

#endif

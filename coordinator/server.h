/*
 * server.h - the coordinator's loop: frames from the ROUTER, decoded by the
 * codec, answered from PostgreSQL through the store and the scheduler.
 *
 * Each loop iteration takes every frame waiting (up to a batch) and
 * handles them in one transaction (group commit), then sends the replies:
 * a worker hears "accepted" only for what is committed.  If the batch
 * fails on a statement while the connection is up, each message is redone
 * in its own transaction and only the failing one is refused.  While the
 * database is unreachable, messages that need it are answered with error
 * XQF_ERR_INTERNAL (the worker retries later) and the store reconnects with
 * a doubling backoff; once back, every lease is extended by a lease length
 * so that no task expires for heartbeats that could not be recorded.
 * Timers: expired leases are re-queued every second; the run cache is
 * refreshed on NOTIFY and every few seconds.
 */
#ifndef XQF_SERVER_H
#define XQF_SERVER_H

#include <signal.h>
#include <stdint.h>

typedef struct {
    const char *bind;                /* ROUTER endpoint */
    const char *db;                  /* libpq conninfo */
    int64_t lease_ms;                /* a task not heard of this long is re-queued */
    int batch_max;                   /* frames per transaction */
} ServerConfig;

/* Serves until *stop is set. Returns 0, or -1 when the socket cannot be bound. */
int server_run(const ServerConfig *config, volatile sig_atomic_t *stop);

#endif

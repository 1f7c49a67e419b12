/*
 * worker_transport.h - the worker's ZeroMQ DEALER socket, used from the
 * main thread only.  ZeroMQ reconnects by itself (100 ms doubling to 5 s)
 * when the coordinator goes away; messages are only queued on a live
 * connection (ZMQ_IMMEDIATE), so nothing stale piles up while it is gone:
 * the worker's timers re-send what matters.
 *
 * With CURVE (the worker's key pair and the coordinator's public key) the
 * connection is encrypted and the coordinator knows the worker by its key
 * (its allow-list); a key it refuses or a wrong server key shows as failed
 * handshakes, which are logged (the first of each kind, then once a
 * minute) while ZeroMQ keeps retrying.  Without CURVE, only an endpoint
 * of this host (keys_endpoint_local) is connected to, unless insecure is
 * set: in plaintext anyone on the way could read and forge the traffic.
 */
#ifndef XQF_WORKER_TRANSPORT_H
#define XQF_WORKER_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "codec.h"
#include "worker.h"

typedef struct WorkerTransport WorkerTransport;

typedef struct {
    const char *curve_secret;        /* this worker's key pair file (xqf-keys new); NULL: plaintext */
    const char *server_key;          /* the coordinator's public key file (its FILE.pub), with curve_secret */
    bool insecure;                   /* plaintext to an endpoint of another host all the same */
} WtSecurity;

/*
 * The security policy for connecting to endpoint (before any connection):
 * curve_secret and server_key go together; without them, an endpoint that
 * is not this host's (keys_endpoint_local) needs insecure, which makes no
 * sense with them.  Returns 0, or -1 with the reason in err.
 */
int wt_check(const char *endpoint, const WtSecurity *security, char *err, size_t size);

/* Connects a DEALER to endpoint (CURVE when security->curve_secret is set) if wt_check allows it. NULL (logged) on failure. */
WorkerTransport *wt_new(const char *endpoint, const WtSecurity *security);
void wt_destroy(WorkerTransport **t);
/* Encodes and sends a message without blocking; 0, or -1 (not connected, full, encoding). */
int wt_send(WorkerTransport *t, const XqfMsg *m);
/* Waits up to timeout_ms for a message or fd readable: mask 1 message, 2 fd; 0 timeout/signal; -1 error. */
int wt_wait(WorkerTransport *t, int timeout_ms, int fd);
/*
 * Receives and decodes one message without waiting: 1 with *m (free it),
 * 0 when none, -1 when one was malformed (skipped, logged).
 */
int wt_recv(WorkerTransport *t, XqfMsg *m);
/* The transport as the worker's link (worker.h); t may be NULL (a link that never works). */
WorkerLink wt_link(WorkerTransport *t);

#endif

/*
 * server.h - the coordinator's loop: frames from the ROUTER, decoded by the
 * codec, answered from PostgreSQL through the store and the scheduler.
 *
 * Each loop iteration takes every frame waiting (up to a batch) and
 * handles them in one transaction (group commit), then sends the replies:
 * a worker hears "accepted" only for what is committed.  Every field is
 * checked before it reaches SQL (the codec: types, limits, UTF-8; here:
 * counts within a task's most pairs, chunk offsets within int4), so a bad
 * frame costs its own message.  The batch's three phases (single
 * messages, results, task requests) each run under a savepoint: a
 * statement that fails all the same undoes its phase only, which is
 * redone message by message under savepoints, and only the failing
 * message is refused (error 6).  If the transaction itself fails (the
 * commit, the connection), each message is redone in its own.  While the
 * database is unreachable, messages that need it are answered with error
 * XQF_ERR_INTERNAL (the worker retries later) and the store reconnects with
 * a doubling backoff; once back, every lease is extended by a lease length
 * so that no task expires for heartbeats that could not be recorded.
 * Timers: expired leases are re-queued every second, once the queue of
 * frames is drained (or half a lease after they were due); after a stall
 * (an iteration longer than a quarter lease, 2 s at least) every lease is
 * first extended by a lease, so that heartbeats queued meanwhile are not
 * beaten by the expiry.  The run cache is refreshed on NOTIFY and every
 * few seconds.  Test hook: XQF_TEST_STALL_MS=N makes the first batch with
 * a heartbeat hang N ms in its transaction.
 *
 * Bounds (docs/programs/xqf-coordinator.md, "Bounded peers"): every request but hello needs a hello first (status
 * too); each key (a CURVE allow-list name, or a plaintext connection)
 * sends at most cfg.rate messages a second, the rest answered
 * XQF_ERR_LIMIT and counted; a peer has one build chunk in flight (it
 * asks for the next after receiving one; another request meanwhile is
 * answered XQF_ERR_LIMIT, one left unacknowledged for CHUNK_LOST_MS
 * counts as lost, and a peer that lets CHUNK_LOST_MAX of them in a row go
 * gets no more); a worker holds at most 2 x its announced concurrency
 * leases (a claim beyond that is answered idle); at most cfg.max_peers
 * workers at once (peers.h).  Under CURVE a worker's name is its key's
 * allow-list name or starts with it and '/': any other name NAME is
 * recorded as "KEY/NAME" (cut to XQF_NAME_MAX bytes), and a key has at
 * most NAMES_PER_KEY (server.c: 1,000) names: a hello with a new one
 * beyond is answered XQF_ERR_LIMIT.
 *
 * Bounds per key (a CURVE allow-list name; in plaintext each worker is a
 * key of its own): at most cfg.key_hellos hellos a minute (and as many
 * CURVE handshakes, zap.h), cfg.key_peers live workers (peers.h: a key
 * filling the table gives way to another key's newcomer), cfg.key_leases
 * leases (a claim beyond is answered idle), and a fair share of the
 * leases while another key waits for a task of the same run (sched.h);
 * under CURVE, cfg.security.key_connections open connections (default
 * twice key_peers; transport.h, conns.h: one more first closes the key's
 * connection silent two heartbeat intervals, else is refused with
 * XQF_ERR_LIMIT and closed), and every connection sends its first
 * message within cfg.security.first_message_ms of its accept.
 */
#ifndef XQF_SERVER_H
#define XQF_SERVER_H

#include <stdint.h>

#include "transport.h"

/* The defaults of the configuration (xqf-coordinator's options show them). */
#define SERVER_BIND_DEFAULT "tcp://127.0.0.1:5555"
#define SERVER_LEASE_S_DEFAULT 60
#define SERVER_BATCH_DEFAULT 512
#define SERVER_RATE_DEFAULT 1000
#define SERVER_MAX_PEERS_DEFAULT 10000
#define SERVER_QUARANTINE_DEFAULT 5
/* Games side by side a worker may announce: a large real machine's cores (a hello over it is clamped). */
#define SERVER_MAX_CONCURRENCY_DEFAULT 256
/*
 * Per key (a CURVE allow-list name; in plaintext each worker is its own):
 * live workers, leases held and hellos (and CURVE handshakes) a minute.  A
 * key is a machine, or an operator's few machines: 64 worker processes,
 * 1,024 leases (two a slot over 512 cores), 120 hellos a minute (every
 * worker of a full key saying hello again at once after a restart, twice).
 */
#define SERVER_KEY_PEERS_DEFAULT 64
#define SERVER_KEY_LEASES_DEFAULT 1024
#define SERVER_KEY_HELLOS_DEFAULT 120
/* A connection's first message within this of its accept (ZeroMQ's own bound on a handshake is as long). */
#define SERVER_FIRST_MESSAGE_S_DEFAULT 30

typedef struct {
    const char *bind;                /* ROUTER endpoint */
    const char *db;                  /* libpq conninfo */
    int64_t lease_ms;                /* a task not heard of this long is re-queued */
    int batch_max;                   /* frames per transaction (<= 0: SERVER_BATCH_DEFAULT) */
    TransportSecurity security;      /* CURVE or plaintext, connection bounds (transport.h); its strings outlive the server */
    double rate;                     /* messages per second per key (burst: as many at once); <= 0: no limit */
    int max_peers;                   /* workers connected at once (<= 0: SERVER_MAX_PEERS_DEFAULT) */
    int quarantine_after;            /* a task refused this many times is set aside (<= 0: never) */
    int max_concurrency;             /* a hello's concurrency is held to this (<= 0: SERVER_MAX_CONCURRENCY_DEFAULT) */
    int key_peers;                   /* live workers per key (<= 0: SERVER_KEY_PEERS_DEFAULT) */
    int key_leases;                  /* leases per key (<= 0: SERVER_KEY_LEASES_DEFAULT) */
    double key_hellos;               /* hellos (and CURVE handshakes) per key a minute, as many at once; <= 0: no limit */
    const char *metrics;             /* HOST:PORT serving GET /metrics (metrics.h); NULL: none */
    int accept_protocol;             /* the oldest protocol version served (XQF_PROTOCOL_OLDEST..VERSION; 0: VERSION) */
    const char *worker_release;      /* FILE (with FILE.release) the older workers update themselves to; NULL none */
} ServerConfig;

enum { XQF_RELEASE_MAX = 256 << 20 };   /* a worker release's bytes, held in memory (the workers' builds limit) */

typedef struct Server Server;

/*
 * Binds the ROUTER of cfg (copied) and sets up the store and the scheduler
 * (the database may be down: it is connected with back-off), and with
 * cfg.metrics the monitoring's HTTP daemon.  NULL (logged) when the socket
 * or the metrics' address cannot be bound or memory is short.
 */
Server *server_new(const ServerConfig *cfg);
/* Frees the server (socket closed, connection closed); *s becomes NULL; safe on NULL. */
void server_destroy(Server **s);
/* Serves until server_stop, or until polling the socket fails (logged). Returns 0. */
int server_run(Server *s);
/* Asks server_run to return (async-signal-safe). */
void server_stop(Server *s);

#endif

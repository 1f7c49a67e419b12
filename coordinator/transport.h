/*
 * transport.h - the coordinator's ZeroMQ ROUTER socket: frames in and out,
 * each with the routing id of the worker that sent it.  The only ZeroMQ
 * code of the coordinator (with zap.c, its CURVE handler).  Frames above
 * a hard limit (TRANSPORT_MSG_MAX, 64 KiB over XQF_FRAME_MAX) make ZeroMQ
 * drop the sender's connection; anything else is handed up for the codec
 * to judge.  What a connection may make it buffer is bounded (below).
 *
 * Security (transport_new's TransportSecurity): with CURVE, the ROUTER is a CURVE
 * server with the coordinator's key pair, and a ZAP handler (zap.h) lets
 * in only the workers whose public key is in the allow-list; each frame
 * then comes with the allow-list NAME of its connection (Peer.user), and
 * frames of a connection whose key was revoked since it connected are
 * dropped.  Without CURVE, only an endpoint reachable from this host
 * alone may be bound (keys_endpoint_local), unless insecure is set.
 * Handshakes that fail (a plaintext client against CURVE or the reverse,
 * a wrong server key) are logged, once a minute per kind.
 *
 * Open connections (conns.h): a connection sends its first message
 * within TransportSecurity.first_message_ms of its accept, else it is
 * closed (judged when transport_recv finds nothing waiting: a loop that
 * stalled has first messages still unread); under CURVE a key holds at most key_connections connections
 * that sent a message: one more first evicts the key's longest-silent
 * (silent quiet_ms at least), else its first message comes up marked
 * Peer.over_connections (to be answered with the limit, nothing else) and
 * the connection is closed a moment later.  ZeroMQ 4.3.4 has no call
 * that closes one connection of a ROUTER: the transport shuts the socket
 * down under it (transport.c says why that is safe enough).
 */
#ifndef XQF_TRANSPORT_H
#define XQF_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "conns.h"
#include "keys.h"

enum {
    PEER_ID_MAX = 255,
    /*
     * Per peer, ZeroMQ queues at most TRANSPORT_SNDHWM replies (then a
     * reply is dropped): a peer that asks and never reads costs at most
     * that many, of which at most two build chunks (server.c sends the
     * next only once the last reached the peer: transport_sent).
     */
    TRANSPORT_SNDHWM = 1000,
    /*
     * Receive buffers, per connection: ZeroMQ queues at most
     * TRANSPORT_RCVHWM frames of it for the loop, decodes one more (and
     * holds it while the queue is full, reading no further: the peer's
     * frames then wait in its TCP connection and in the peer), each at
     * most TRANSPORT_MSG_MAX bytes.  So a connection holds at most
     * (TRANSPORT_RCVHWM + 1) x TRANSPORT_MSG_MAX = 3.2 MiB in the
     * coordinator, whatever it sends while the loop stalls (a database
     * that hangs), and the kernel at most TRANSPORT_RCVBUF (doubled by
     * Linux for its bookkeeping) outside it: N connections, N times that
     * (docs/security.md has the measure).  Two frames queued, not one: a
     * worker's result right behind its heartbeat waits for no round trip.
     */
    TRANSPORT_RCVHWM = 2,
    TRANSPORT_RCVBUF = 256 * 1024,
    /* a frame above this drops its connection (the codec refuses those above XQF_FRAME_MAX) */
    TRANSPORT_MSG_MAX = XQF_FRAME_MAX + 64 * 1024,
    /* a connection's first message within this of its accept (ZeroMQ's own handshake bound is 30 s too) */
    TRANSPORT_FIRST_MESSAGE_MS = 30000,
    /* a connection refused for its key's count is closed this long after: time for its answer to go out */
    TRANSPORT_REFUSED_GRACE_MS = 1000,
    /*
     * Connections the kernel may hold accepted before ZeroMQ's I/O thread
     * takes them (listen(2)'s backlog; Linux caps it at net.core.somaxconn,
     * 4,096 by default).  ZeroMQ's own default, 100, is the size of a
     * fleet that reconnects at once no more: the kernel drops the SYNs
     * beyond a full queue and each such client retries after TCP's SYN
     * back-off (1, 3, 7, 15, 31 s: RFC 6298's initial timeout, doubled),
     * so 10,000 workers back at once waited up to a minute for a connection
     * the coordinator had time to accept.
     */
    TRANSPORT_BACKLOG = 65535,
    /* an address in use is tried again this long (transport.c: bind_waiting) */
    TRANSPORT_BIND_WAIT_MS = 10000,
    /* due connections are looked for this often */
    TRANSPORT_SWEEP_MS = 200,
    /* closed connections waiting for transport_closed at most */
    TRANSPORT_CLOSED_MAX = 1 << 16
};

typedef struct {
    uint8_t id[PEER_ID_MAX];
    size_t len;
    char user[KEYS_NAME_MAX + 1];    /* the connection's allow-list name under CURVE, "" without */
    bool over_connections;           /* its connection is one too many for its key: answer with the limit only */
    int fd;                          /* the connection it came on: its descriptor (-1: not a socket) */
    uint64_t conn;                   /* and its number (conns_id; 0: unknown), which transport_closed reports */
} Peer;

typedef struct Transport Transport;

typedef struct {
    const char *curve_secret;        /* the coordinator's key pair file (xqf-keys new); NULL: plaintext */
    const char *allow;               /* the allow-list of worker keys: set with curve_secret, and only then */
    bool insecure;                   /* plaintext on an endpoint others can reach all the same */
    double handshakes;               /* CURVE handshakes a key may make a minute (zap.h); <= 0: no limit */
    int key_connections;             /* open connections a key may hold under CURVE (conns.h); <= 0: no limit */
    int64_t first_message_ms;        /* a silent connection is closed this long after its accept; 0: the default */
    int64_t quiet_ms;                /* a key at key_connections gives up one silent this long; <= 0: never */
} TransportSecurity;

/*
 * The security policy for binding endpoint: curve_secret and allow go
 * together; without them, a non-local endpoint needs insecure (which makes
 * no sense with them).  Returns 0, or -1 with the reason in err.
 */
int transport_check(const char *endpoint, const TransportSecurity *sec, char *err, size_t size);
/*
 * Binds a ROUTER to endpoint ("tcp://127.0.0.1:5555") with the security
 * sec (NULL: plaintext, local endpoints only): checks the policy, reads
 * the key pair, starts the ZAP handler.  NULL (logged) on failure.
 */
Transport *transport_new(const char *endpoint, const TransportSecurity *sec);
void transport_destroy(Transport **t);

/*
 * Waits up to timeout_ms for a frame, or for fd (>= 0) to be readable.
 * Returns a mask: 1 a frame is waiting, 2 fd is readable; 0 on timeout or
 * a signal; -1 on error.
 */
int transport_wait(Transport *t, int timeout_ms, int fd);
/*
 * Takes one frame without waiting: returns 1 with its sender (routing id,
 * and user under CURVE) and bytes in *data, 0 when none is waiting, -1 on
 * error.  Messages that are not [routing id, one frame], and under CURVE
 * those of a connection whose name and key are no longer in the
 * allow-list (checked against the file at most once a second), are
 * dropped (logged), as are those of a connection being closed; the
 * first message of a connection one too many for its key comes with
 * peer->over_connections set.
 */
int transport_recv(Transport *t, Peer *peer, XqfBuf *data);
/*
 * Sends a frame to a peer without blocking and without queueing beyond
 * its limit: returns 0, -2 when the peer's queue is full (it does not
 * read: the frame is dropped, counted and logged once a minute), -1 when
 * the peer is gone or on error.
 */
int transport_send(Transport *t, const Peer *peer, const void *data, size_t len);
/*
 * The connections closed since the last call (the peer's disconnect, a
 * lost link once TCP noticed, or one the transport shut down), at most n,
 * oldest first: each as the fd and conn its messages' Peer carried.  At
 * most TRANSPORT_CLOSED_MAX wait; beyond that (or out of memory), closes
 * are not reported: the caller learns of those connections' end
 * otherwise, by their silence.  Returns how many.
 */
int transport_closed(Transport *t, int *fds, uint64_t *conns, int n);
/*
 * What the connection peer's message came on has handed its kernel so far
 * (*written, bytes) and what the other end's TCP has acknowledged of it
 * (*acked): the replies queued for it after *written are out of this
 * process once *acked reaches *written plus their size (ZeroMQ writes a
 * connection's queue in order).  Read from the kernel (TCP_INFO's
 * tcpi_bytes_acked, Linux 4.2; SIOCOUTQ's bytes not yet acknowledged).
 * 0, or -1 when not known: not a TCP connection (ipc), or closed since.
 */
int transport_sent(Transport *t, const Peer *peer, uint64_t *written, uint64_t *acked);
/* Replies dropped so far (full queue or peer gone). */
int64_t transport_dropped(const Transport *t);
/* Open connections of key that sent a message (its allow-list name), and open connections in all. */
int transport_key_connections(const Transport *t, const char *key);
int transport_connections(const Transport *t);
/* Connections refused for their key's count, evicted for its newcomer, closed for silence. */
ConnsStats transport_conn_stats(const Transport *t);

#endif

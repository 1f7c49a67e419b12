#include "transport.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <zmq.h>

/* struct tcp_info with tcpi_bytes_acked (glibc's netinet/tcp.h stops short of it), SIOCOUTQ */
#include <linux/sockios.h>
#include <linux/tcp.h>

#include "clock.h"
#include "log.h"
#include "ratelimit.h"
#include "zap.h"
#include "zmq_monitor.h"

#define MONITOR_ENDPOINT "inproc://xqf-transport-monitor"

struct Transport {
    void *ctx, *router;
    void *monitor;                   /* PAIR: the ROUTER's accepts, disconnects and failed handshakes */
    Conns *conns;                    /* its open connections, by descriptor */
    int64_t next_sweep_ms;           /* refused and evicted connections looked for then */
    int64_t next_silent_ms;          /* silent ones, then (when the queue is found empty) */
    Zap *zap;                        /* the CURVE handler; NULL in plaintext */
    Notes notes;                     /* dropped messages and failed handshakes, logged once a minute each */
    int64_t dropped;                 /* replies not sent: the peer's queue was full (or it was gone) */
    struct Closed {
        int fd;
        uint64_t conn;
    } *closed;                       /* connections closed, not yet taken by transport_closed: a ring */
    size_t closed_cap, closed_at, closed_n;
};


__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
    return -1;
}

int transport_check(const char *endpoint, const TransportSecurity *sec, char *err, size_t size)
{
    bool curve = sec->curve_secret != NULL;
    if (curve != (sec->allow != NULL))
        return fail(err, size, "CURVE needs both the coordinator's key pair (--curve-secret) and the "
                               "allow-list of worker keys (--allow)");
    if (curve && sec->insecure)
        return fail(err, size, "--insecure serves plaintext: it does not go with CURVE (--curve-secret)");
    if (!curve && !sec->insecure && !keys_endpoint_local(endpoint))
        return fail(err, size, "%s is not a loopback address: anyone who reaches it could submit results. "
                               "Serve it with CURVE (--curve-secret and --allow, keys from xqf-keys), or "
                               "give --insecure to serve it in plaintext all the same", endpoint);
    return 0;
}

/* Makes the ROUTER a CURVE server with the key pair, its clients checked by a ZAP handler. 0 or -1 (logged). */
static int curve_server(Transport *t, const TransportSecurity *sec)
{
    KeyPair k;
    char err[512];
    int on = 1;
    if (keys_read(sec->curve_secret, true, &k, err, sizeof err) != 0) {
        log_error("transport: %s", err);
        return -1;
    }
    int rc = (t->zap = zap_new(t->ctx, sec->allow, sec->handshakes)) &&
                     zmq_setsockopt(t->router, ZMQ_CURVE_SERVER, &on, sizeof on) == 0 &&
                     zmq_setsockopt(t->router, ZMQ_CURVE_SECRETKEY, k.secret_key, KEYS_Z85_LEN) == 0 &&
                     zmq_setsockopt(t->router, ZMQ_ZAP_DOMAIN, "xqf", 3) == 0
                 ? 0
                 : -1;
    if (rc != 0 && t->zap)
        log_error("transport: cannot set up CURVE: %s", zmq_strerror(zmq_errno()));
    if (rc == 0)
        log_info("transport: CURVE on, public key %s", k.public_key);
    keys_wipe(&k);
    return rc;
}

/*
 * Watches the ROUTER's connections (accepted, disconnected: their file
 * descriptors) and failed handshakes through a PAIR (ZeroMQ socket
 * monitor).  Its queue has no bound (RCVHWM 0 makes the inproc pipe's
 * unlimited): a dropped disconnect would leave a closed descriptor known
 * as open.  It holds only what arrived since the loop last polled (a few
 * bytes an event).  0 or -1.
 */
static int watch_connections(Transport *t)
{
    int linger = 0, unbounded = 0;
    if (zmq_socket_monitor(t->router, MONITOR_ENDPOINT,
                           ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) != 0 ||
        !(t->monitor = zmq_socket(t->ctx, ZMQ_PAIR)) ||
        zmq_setsockopt(t->monitor, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_setsockopt(t->monitor, ZMQ_RCVHWM, &unbounded, sizeof unbounded) != 0 ||
        zmq_connect(t->monitor, MONITOR_ENDPOINT) != 0) {
        log_error("transport: cannot monitor the socket: %s", zmq_strerror(zmq_errno()));
        return -1;
    }
    return 0;
}

/*
 * zmq_bind, waiting up to TRANSPORT_BIND_WAIT_MS while the address is in
 * use: a coordinator restarted at once (systemd's Restart=, a kill -9 and
 * start) may find its predecessor still closing thousands of connections,
 * and so its listening port, for a moment.  Any other error at once.
 */
static int bind_waiting(void *router, const char *endpoint)
{
    int64_t until = clock_now_ms() + TRANSPORT_BIND_WAIT_MS;
    bool said = false;
    while (zmq_bind(router, endpoint) != 0) {
        if (zmq_errno() != EADDRINUSE || clock_now_ms() >= until)
            return -1;
        if (!said)
            log_warn("transport: %s is in use: trying again for up to %d s (a coordinator before this one still "
                     "closing?)", endpoint, TRANSPORT_BIND_WAIT_MS / 1000);
        said = true;
        struct timespec pause = { 0, 100 * 1000 * 1000 };
        nanosleep(&pause, NULL);
    }
    if (said)
        log_info("transport: %s bound", endpoint);
    return 0;
}

Transport *transport_new(const char *endpoint, const TransportSecurity *sec)
{
    static const TransportSecurity PLAIN = { .insecure = false };
    char err[512];
    if (!sec)
        sec = &PLAIN;
    if (transport_check(endpoint, sec, err, sizeof err) != 0) {
        log_error("transport: %s", err);
        return NULL;
    }
    Transport *t = calloc(1, sizeof *t);
    ConnsLimits lim = { sec->curve_secret ? sec->key_connections : 0,
                        sec->first_message_ms > 0 ? sec->first_message_ms : TRANSPORT_FIRST_MESSAGE_MS,
                        sec->quiet_ms, TRANSPORT_REFUSED_GRACE_MS };
    if (!t || !(t->conns = conns_new(&lim))) {
        free(t);
        return NULL;
    }
    int64_t maxsize = TRANSPORT_MSG_MAX;
    int sndhwm = TRANSPORT_SNDHWM, rcvhwm = TRANSPORT_RCVHWM, rcvbuf = TRANSPORT_RCVBUF, linger = 0, mandatory = 1,
        backlog = TRANSPORT_BACKLOG;
    if (!(t->ctx = zmq_ctx_new()) || !(t->router = zmq_socket(t->ctx, ZMQ_ROUTER)) ||
        zmq_setsockopt(t->router, ZMQ_MAXMSGSIZE, &maxsize, sizeof maxsize) != 0 ||
        zmq_setsockopt(t->router, ZMQ_SNDHWM, &sndhwm, sizeof sndhwm) != 0 ||
        zmq_setsockopt(t->router, ZMQ_RCVHWM, &rcvhwm, sizeof rcvhwm) != 0 ||
        zmq_setsockopt(t->router, ZMQ_RCVBUF, &rcvbuf, sizeof rcvbuf) != 0 ||
        zmq_setsockopt(t->router, ZMQ_BACKLOG, &backlog, sizeof backlog) != 0 ||
        zmq_setsockopt(t->router, ZMQ_ROUTER_MANDATORY, &mandatory, sizeof mandatory) != 0 ||
        zmq_setsockopt(t->router, ZMQ_LINGER, &linger, sizeof linger) != 0) {
        log_error("transport: cannot make a ROUTER socket: %s", zmq_strerror(zmq_errno()));
        transport_destroy(&t);
        return NULL;
    }
    /* the ZAP handler before the bind: no CURVE client may slip in unchecked */
    if ((sec->curve_secret && curve_server(t, sec) != 0) || watch_connections(t) != 0) {
        transport_destroy(&t);
        return NULL;
    }
    if (bind_waiting(t->router, endpoint) != 0) {
        log_error("transport: cannot bind %s: %s", endpoint, zmq_strerror(zmq_errno()));
        transport_destroy(&t);
        return NULL;
    }
    if (!t->zap && !keys_endpoint_local(endpoint))
        log_warn("transport: INSECURE: %s is served in plaintext (--insecure): anyone who reaches it can "
                 "read the tasks and submit results; use CURVE (--curve-secret, --allow)", endpoint);
    return t;
}

void transport_destroy(Transport **tp)
{
    Transport *t = *tp;
    if (!t)
        return;
    if (t->monitor)
        zmq_close(t->monitor);
    if (t->router)
        zmq_close(t->router);
    zap_destroy(&t->zap);
    conns_destroy(&t->conns);
    free(t->closed);
    if (t->ctx)
        zmq_ctx_term(t->ctx);
    free(t);
    *tp = NULL;
}

/* Why a handshake failed, for the log (the monitor gives the listening endpoint, not the peer's). */
static void handshake_why(uint16_t event, uint32_t value, char *out, size_t size)
{
    if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL && value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
        snprintf(out, size, "security mechanism mismatch (a plaintext worker against CURVE, or the reverse)");
    else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL && value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC)
        snprintf(out, size, "cryptographic error (a CURVE worker with a wrong --server-key?)");
    else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
        snprintf(out, size, "protocol error 0x%08x", (unsigned)value);
    else
        snprintf(out, size, "%s (a plaintext worker, or one with a wrong key?)", strerror((int)value));
}

/* A connection's peer address and port, hashed: tells it from a later connection under the same descriptor. 0: none. */
static uint64_t peer_tag(int fd)
{
    struct sockaddr_storage a;
    socklen_t len = sizeof a;
    memset(&a, 0, sizeof a);
    if (getpeername(fd, (struct sockaddr *)&a, &len) != 0 || len == 0)
        return 0;
    uint64_t tag = ratelimit_key(&a, len);
    return tag ? tag : 1;
}

/* Queues fd's connection (if the table knows it) for transport_closed, before the table forgets it. */
static void note_closed(Transport *t, int fd)
{
    uint64_t conn = conns_id(t->conns, fd);
    if (!conn)
        return;
    if (t->closed_n == t->closed_cap) {
        size_t cap = t->closed_cap ? 2 * t->closed_cap : 256;
        struct Closed *c = cap <= TRANSPORT_CLOSED_MAX ? malloc(cap * sizeof *c) : NULL;
        if (!c)
            return;                  /* not reported: the caller falls back on silence */
        for (size_t i = 0; i < t->closed_n; i++)
            c[i] = t->closed[(t->closed_at + i) % t->closed_cap];
        free(t->closed);
        t->closed = c;
        t->closed_cap = cap;
        t->closed_at = 0;
    }
    t->closed[(t->closed_at + t->closed_n++) % t->closed_cap] = (struct Closed){ fd, conn };
}

int transport_closed(Transport *t, int *fds, uint64_t *conns, int n)
{
    int got = 0;
    for (; got < n && t->closed_n > 0; got++, t->closed_n--) {
        fds[got] = t->closed[t->closed_at].fd;
        conns[got] = t->closed[t->closed_at].conn;
        t->closed_at = (t->closed_at + 1) % t->closed_cap;
    }
    return got;
}

/*
 * Takes the monitor's events: connections accepted and disconnected into
 * the table (in the order they happened: a descriptor's disconnect comes
 * before its number's next accept), failed handshakes logged once a
 * minute per kind.
 */
static void note_events(Transport *t)
{
    uint16_t event;
    uint32_t value;
    while (zmq_monitor_next(t->monitor, &event, &value)) {
        if (event == ZMQ_EVENT_ACCEPTED) {
            note_closed(t, (int)value);  /* a number still known as open: its disconnect went unseen */
            conns_accepted(t->conns, (int)value, peer_tag((int)value), clock_now_ms());
            continue;
        }
        if (event == ZMQ_EVENT_DISCONNECTED) {
            note_closed(t, (int)value);
            conns_closed(t->conns, (int)value);
            continue;
        }
        char why[160], subject[32], tail[NOTES_MORE_MAX];
        handshake_why(event, value, why, sizeof why);
        snprintf(subject, sizeof subject, "handshake %x %x", (unsigned)event, (unsigned)value);
        if (notes_due(&t->notes, subject, tail))
            log_warn("transport: a peer failed the handshake: %s%s", why, tail);
    }
}

/*
 * Closes the connections the table says are due (silent, refused, evicted).
 *
 * ZeroMQ 4.3.4 cannot close one connection of a ROUTER (no call for it;
 * ZMQ_ROUTER_NOTIFY and zmq_socket_monitor_versioned are draft API), so
 * the socket is shut down under it: shutdown(SHUT_RDWR) on the descriptor
 * the monitor reported makes ZeroMQ's I/O thread read end-of-file, and
 * it closes the connection as if the peer had (a DISCONNECTED event,
 * the peer's pipe and routing id dropped).  shutdown, not close: the
 * descriptor stays ZeroMQ's to close, so its number cannot be reused
 * under it.
 *
 * The danger is a number reused by the time it is shut down: ZeroMQ's
 * I/O thread closes and accepts on its own.  Guarded twice: the events
 * are drained first, so only a descriptor the table knows as open (its
 * accept seen, its disconnect not) is touched; and its peer address and
 * port must still be those it was accepted with (peer_tag), which a new
 * connection under the same number has not (a client does not reuse its
 * port while the old connection lasts).  What a race past both costs: one
 * other connection shut down, whose worker reconnects (ZeroMQ does it)
 * and says hello again, as after a lost link.
 */
static void close_due(Transport *t, int64_t now, bool drained)
{
    int fds[64];
    uint64_t tags[64];
    note_events(t);
    for (int n; (n = conns_due(t->conns, now, drained, fds, tags, 64)) > 0;)
        for (int i = 0; i < n; i++)
            if (tags[i] && peer_tag(fds[i]) == tags[i]) {
                note_closed(t, fds[i]);  /* closed now for its peers: its disconnect follows */
                shutdown(fds[i], SHUT_RDWR);
            }
}

int transport_wait(Transport *t, int timeout_ms, int fd)
{
    zmq_pollitem_t items[3] = { { t->router, 0, ZMQ_POLLIN, 0 }, { t->monitor, 0, ZMQ_POLLIN, 0 },
                                { NULL, fd, ZMQ_POLLIN, 0 } };
    int rc = zmq_poll(items, fd >= 0 ? 3 : 2, timeout_ms);
    if (rc < 0)
        return zmq_errno() == EINTR ? 0 : -1;
    if (items[1].revents & ZMQ_POLLIN)
        note_events(t);
    int64_t now = clock_now_ms();
    if (now >= t->next_sweep_ms) {
        t->next_sweep_ms = now + TRANSPORT_SWEEP_MS;
        close_due(t, now, false);
    }
    return (items[0].revents & ZMQ_POLLIN ? 1 : 0) | (fd >= 0 && items[2].revents ? 2 : 0);
}

/* Receives one part; returns its size, -2 when nothing is waiting, -1 on error. */
static int recv_part(void *sock, zmq_msg_t *part, bool *more)
{
    if (zmq_msg_recv(part, sock, ZMQ_DONTWAIT) < 0)
        return zmq_errno() == EAGAIN ? -2 : -1;
    *more = zmq_msg_more(part);
    return 0;
}

/*
 * Under CURVE, the allow-list name of a message's connection into
 * peer->user; false when that name and key are no longer allowed (the
 * key was revoked or replaced since the connection was accepted): the
 * message is dropped.  Without CURVE, user is "" and everything passes.
 */
static bool authorize(Transport *t, zmq_msg_t *body, Peer *peer)
{
    peer->user[0] = '\0';
    if (!t->zap)
        return true;
    const char *user = zmq_msg_gets(body, "User-Id"), *key = zmq_msg_gets(body, ZAP_KEY_PROPERTY);
    if (user && key && zap_allows(t->zap, user, key)) {
        snprintf(peer->user, sizeof peer->user, "%s", user);
        return true;
    }
    char tail[NOTES_MORE_MAX];
    if (notes_due(&t->notes, user ? user : "(no user)", tail))
        log_warn("transport: dropped a message of %s: its key is no longer in the allow-list%s",
                 user ? user : "a connection without a user id", tail);
    return false;
}

/*
 * Counts a message against its connection (ZMQ_SRCFD: the descriptor it
 * was read from; deprecated in ZeroMQ, still set on every message read
 * from a TCP connection in 4.3.4): its first message gives the
 * connection its key, which may hold no more (conns.h).  Names the
 * connection in peer (fd, conn).
 *
 * The monitor's events are taken first, every time: ZeroMQ's I/O thread
 * reports a connection's accept (and the disconnect of the one that had
 * its descriptor before) before any of its messages reach the socket, so
 * with those read, a message is never put down to the connection that
 * last held its descriptor (as it could be in a reconnection storm,
 * where the closed connections' numbers are reused at once), and a
 * descriptor unknown here is one whose connection closed.  (One I/O
 * thread, ZeroMQ's default, reports the accept in the same step as it
 * takes the connection, before its handshake.)  An empty monitor costs
 * one non-blocking read.
 */
static ConnsVerdict admit(Transport *t, zmq_msg_t *body, Peer *peer)
{
    int fd = zmq_msg_get(body, ZMQ_SRCFD);
    int64_t now = clock_now_ms();
    peer->over_connections = false;
    if (fd < 0)
        return CONNS_OK;
    note_events(t);
    if (!conns_knows(t->conns, fd)) {
        /*
         * Its accept, reported before any of its messages, was read above:
         * its connection closed already, and this is one of its last
         * messages, still queued.  Counted as a connection of its own (the
         * key's bound holds), reported closed at once.
         */
        conns_accepted(t->conns, fd, peer_tag(fd), now);
        note_closed(t, fd);
    }
    ConnsVerdict v = conns_message(t->conns, fd, peer->user, now);
    peer->over_connections = v == CONNS_REFUSED;
    peer->fd = fd;
    peer->conn = conns_id(t->conns, fd);
    return v;
}

/* Copies a frame's bytes into data (grown as needed). 0, or -1 out of memory. */
static int copy_body(XqfBuf *data, zmq_msg_t *body)
{
    size_t len = zmq_msg_size(body);
    if (len > data->cap) {
        char *d = realloc(data->data, len ? len : 1);
        if (!d)
            return -1;
        data->data = d;
        data->cap = len;
    }
    memcpy(data->data, zmq_msg_data(body), len);
    data->len = len;
    return 0;
}

/*
 * Every frame that had arrived is read: a connection that still sent
 * none is silent, not merely unread (so not before: a loop stalled past
 * the bound has first messages waiting).  Closes those past the bound,
 * at most every TRANSPORT_SWEEP_MS.
 */
static void queue_drained(Transport *t)
{
    int64_t now = clock_now_ms();
    if (now < t->next_silent_ms)
        return;
    t->next_silent_ms = now + TRANSPORT_SWEEP_MS;
    close_due(t, now, true);
}

int transport_recv(Transport *t, Peer *peer, XqfBuf *data)
{
    for (;;) {
        zmq_msg_t id, body;
        bool more = false;
        zmq_msg_init(&id);
        int rc = recv_part(t->router, &id, &more);
        if (rc != 0) {
            zmq_msg_close(&id);
            if (rc == -2)
                queue_drained(t);
            return rc == -2 ? 0 : (zmq_errno() == EINTR ? 0 : -1);
        }
        bool ok = more && zmq_msg_size(&id) <= PEER_ID_MAX;
        peer->fd = -1;
        peer->conn = 0;
        if (ok) {
            peer->len = zmq_msg_size(&id);
            memcpy(peer->id, zmq_msg_data(&id), peer->len);
        }
        zmq_msg_close(&id);
        if (!more)
            continue;
        zmq_msg_init(&body);
        if (recv_part(t->router, &body, &more) != 0) {
            zmq_msg_close(&body);
            continue;
        }
        bool allowed = authorize(t, &body, peer);
        ConnsVerdict v = ok && !more && allowed ? admit(t, &body, peer) : CONNS_OK;
        if (v == CONNS_CLOSING)
            ok = false;
        if (ok && !more && allowed && copy_body(data, &body) != 0)
            ok = false;
        zmq_msg_close(&body);
        while (more) {                     /* extra parts: drop the whole message */
            ok = false;
            zmq_msg_init(&body);
            if (recv_part(t->router, &body, &more) != 0)
                more = false;
            zmq_msg_close(&body);
        }
        if (ok && allowed)
            return 1;
        if (allowed && v != CONNS_CLOSING)
            log_warn("transport: dropped a message that was not one frame");
    }
}

int transport_send(Transport *t, const Peer *peer, const void *data, size_t len)
{
    /* ZMQ_ROUTER_MANDATORY: the routing id part fails (EAGAIN, EHOSTUNREACH) when the peer cannot take it */
    if (zmq_send(t->router, peer->id, peer->len, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
        bool full = zmq_errno() == EAGAIN;
        char tail[NOTES_MORE_MAX];
        t->dropped++;
        if (full && notes_due(&t->notes, "peer queue full", tail))
            log_warn("transport: a reply dropped: the peer's queue is full (%d messages; it does not read)%s",
                     TRANSPORT_SNDHWM, tail);
        return full ? -2 : -1;
    }
    return zmq_send(t->router, data, len, ZMQ_DONTWAIT) < 0 ? -1 : 0;
}

int transport_sent(Transport *t, const Peer *peer, uint64_t *written, uint64_t *acked)
{
    if (peer->fd < 0 || !peer->conn)
        return -1;
    /* the descriptor still holds the connection the message came on (its close would have been read here) */
    note_events(t);
    if (conns_id(t->conns, peer->fd) != peer->conn)
        return -1;
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    int unacked = 0;
    memset(&ti, 0, sizeof ti);
    if (getsockopt(peer->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
        len < offsetof(struct tcp_info, tcpi_bytes_acked) + sizeof ti.tcpi_bytes_acked ||
        ioctl(peer->fd, SIOCOUTQ, &unacked) != 0 || unacked < 0)
        return -1;
    *acked = ti.tcpi_bytes_acked;
    *written = ti.tcpi_bytes_acked + (uint64_t)unacked;
    return 0;
}

int64_t transport_dropped(const Transport *t) { return t->dropped; }

int transport_key_connections(const Transport *t, const char *key) { return conns_of_key(t->conns, key); }

int transport_connections(const Transport *t) { return conns_open(t->conns); }

ConnsStats transport_conn_stats(const Transport *t) { return conns_stats(t->conns); }

#include "worker_transport.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "keys.h"
#include "clock.h"
#include "log.h"
#include "zmq_monitor.h"

#define MONITOR_ENDPOINT "inproc://xqf-worker-monitor"

enum { HANDSHAKE_NOTE_MS = 60000 };

struct WorkerTransport {
    void *ctx, *dealer;
    void *monitor;                   /* PAIR: the DEALER's handshakes */
    uint32_t shown;                  /* the handshake outcome logged last (event << 16 ^ value), 0 none */
    int64_t shown_ms;
    XqfBuf buf;
};

/* Makes the DEALER a CURVE client with our key pair and the coordinator's public key. 0 or -1 (logged). */
int wt_check(const char *endpoint, const WtSecurity *security, char *err, size_t size)
{
    bool curve = security->curve_secret != NULL;
    if (curve != (security->server_key != NULL)) {
        snprintf(err, size, "--curve-secret and --server-key go together (CURVE needs this worker's key pair "
                            "and the coordinator's public key)");
        return -1;
    }
    if (curve && security->insecure) {
        snprintf(err, size, "--insecure connects in plaintext: it does not go with CURVE (--curve-secret)");
        return -1;
    }
    if (!curve && !security->insecure && !keys_endpoint_local(endpoint)) {
        snprintf(err, size, "%s is not a loopback address: in plaintext anyone on the way could read the "
                            "traffic and forge the coordinator's tasks. Connect with CURVE (--curve-secret and "
                            "--server-key, keys from xqf-keys), or give --insecure to connect in plaintext all "
                            "the same", endpoint);
        return -1;
    }
    return 0;
}

static int curve_client(WorkerTransport *t, const WtSecurity *sec)
{
    KeyPair mine, server;
    char err[512];
    if (keys_read(sec->curve_secret, true, &mine, err, sizeof err) != 0 ||
        keys_read(sec->server_key, false, &server, err, sizeof err) != 0) {
        log_error("transport: %s", err);
        keys_wipe(&mine);
        return -1;
    }
    int rc = zmq_setsockopt(t->dealer, ZMQ_CURVE_SERVERKEY, server.public_key, KEYS_Z85_LEN) == 0 &&
                     zmq_setsockopt(t->dealer, ZMQ_CURVE_PUBLICKEY, mine.public_key, KEYS_Z85_LEN) == 0 &&
                     zmq_setsockopt(t->dealer, ZMQ_CURVE_SECRETKEY, mine.secret_key, KEYS_Z85_LEN) == 0
                 ? 0
                 : -1;
    if (rc != 0)
        log_error("transport: cannot set up CURVE: %s", zmq_strerror(zmq_errno()));
    else
        log_info("transport: CURVE on, our key %s, the coordinator's %s", mine.public_key, server.public_key);
    keys_wipe(&mine);
    return rc;
}

/* Watches the DEALER's handshakes through a PAIR (ZeroMQ socket monitor). 0 or -1 (logged). */
static int watch_handshakes(WorkerTransport *t)
{
    int linger = 0;
    int events = ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                 ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
    if (zmq_socket_monitor(t->dealer, MONITOR_ENDPOINT, events) != 0 || !(t->monitor = zmq_socket(t->ctx, ZMQ_PAIR)) ||
        zmq_setsockopt(t->monitor, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_connect(t->monitor, MONITOR_ENDPOINT) != 0) {
        log_error("transport: cannot monitor the socket: %s", zmq_strerror(zmq_errno()));
        return -1;
    }
    return 0;
}

/* Logs a handshake outcome: a change at once, the same failure again once a minute. */
static void show_handshake(WorkerTransport *t, uint16_t event, uint32_t value)
{
    uint32_t outcome = ((uint32_t)event << 16) ^ value;
    int64_t now = clock_now_ms();
    if (outcome == t->shown && (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED || now - t->shown_ms < HANDSHAKE_NOTE_MS))
        return;
    bool first_success = event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED && !t->shown;
    t->shown = outcome;
    t->shown_ms = now;
    if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
        if (!first_success)
            log_info("transport: handshake with the coordinator succeeded");
    } else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
        log_warn("transport: the coordinator refused our key (status %u): is it in the coordinator's "
                 "allow-list (xqf-keys allow)?", (unsigned)value);
    else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL && value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
        log_warn("transport: handshake failed: security mechanism mismatch (the coordinator uses CURVE and we "
                 "do not, or the reverse: --curve-secret, --server-key)");
    else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
        log_warn("transport: handshake failed: protocol error 0x%08x", (unsigned)value);
    else
        log_warn("transport: the coordinator hung up during the handshake (%s): a wrong --server-key?",
                 strerror((int)value));
}

/* Takes the monitor's events without waiting. */
static void drain_monitor(WorkerTransport *t)
{
    uint16_t event;
    uint32_t value;
    while (zmq_monitor_next(t->monitor, &event, &value)) {
        show_handshake(t, event, value);
    }
}

WorkerTransport *wt_new(const char *endpoint, const WtSecurity *security)
{
    static const WtSecurity plaintext = { NULL, NULL, false };
    char err[512];
    if (wt_check(endpoint, security ? security : &plaintext, err, sizeof err) != 0) {
        log_error("transport: %s", err);
        return NULL;
    }
    WorkerTransport *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    int one = 1, linger = 1000, ivl = 100, ivl_max = 5000;
    int64_t maxsize = 4 * (int64_t)XQF_FRAME_MAX;
    /*
     * No ZMQ_ROUTING_ID: the ROUTER would refuse a reconnection under an id
     * it still holds for a link it has not seen die.  Each connection gets
     * ZeroMQ's own id; the coordinator knows the worker by its hello
     * (name and key), which takes its old connection's place (peers.h).
     */
    if (!(t->ctx = zmq_ctx_new()) || !(t->dealer = zmq_socket(t->ctx, ZMQ_DEALER)) ||
        zmq_setsockopt(t->dealer, ZMQ_IMMEDIATE, &one, sizeof one) != 0 ||
        zmq_setsockopt(t->dealer, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_setsockopt(t->dealer, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl) != 0 ||
        zmq_setsockopt(t->dealer, ZMQ_RECONNECT_IVL_MAX, &ivl_max, sizeof ivl_max) != 0 ||
        zmq_setsockopt(t->dealer, ZMQ_MAXMSGSIZE, &maxsize, sizeof maxsize) != 0) {
        log_error("transport: cannot make a DEALER socket: %s", zmq_strerror(zmq_errno()));
        wt_destroy(&t);
        return NULL;
    }
    if ((security && security->curve_secret && curve_client(t, security) != 0) || watch_handshakes(t) != 0) {
        wt_destroy(&t);
        return NULL;
    }
    if (zmq_connect(t->dealer, endpoint) != 0) {
        log_error("transport: cannot connect to %s: %s", endpoint, zmq_strerror(zmq_errno()));
        wt_destroy(&t);
        return NULL;
    }
    return t;
}

void wt_destroy(WorkerTransport **tp)
{
    WorkerTransport *t = *tp;
    if (!t)
        return;
    if (t->monitor)
        zmq_close(t->monitor);
    if (t->dealer)
        zmq_close(t->dealer);
    if (t->ctx)
        zmq_ctx_term(t->ctx);
    xqf_buf_free(&t->buf);
    free(t);
    *tp = NULL;
}

int wt_send(WorkerTransport *t, const XqfMsg *m)
{
    if (xqf_msg_encode(m, &t->buf) != 0) {
        log_error("transport: cannot encode a %s message", xqf_msg_type_name(m->type));
        return -1;
    }
    return zmq_send(t->dealer, t->buf.data, t->buf.len, ZMQ_DONTWAIT) < 0 ? -1 : 0;
}

int wt_wait(WorkerTransport *t, int timeout_ms, int fd)
{
    zmq_pollitem_t items[3] = { { t->dealer, 0, ZMQ_POLLIN, 0 }, { t->monitor, 0, ZMQ_POLLIN, 0 },
                                { NULL, fd, ZMQ_POLLIN, 0 } };
    int rc = zmq_poll(items, fd >= 0 ? 3 : 2, timeout_ms);
    if (rc < 0)
        return zmq_errno() == EINTR ? 0 : -1;
    if (items[1].revents & ZMQ_POLLIN)
        drain_monitor(t);
    return (items[0].revents & ZMQ_POLLIN ? 1 : 0) | (fd >= 0 && items[2].revents ? 2 : 0);
}

int wt_recv(WorkerTransport *t, XqfMsg *m)
{
    zmq_msg_t part;
    zmq_msg_init(&part);
    if (zmq_msg_recv(&part, t->dealer, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&part);
        return 0;
    }
    bool more = zmq_msg_more(&part);
    char err[160] = "a multipart message";
    XqfDecodeStatus st = more ? XQF_DECODE_MALFORMED
                              : xqf_msg_decode(zmq_msg_data(&part), zmq_msg_size(&part), m, err, sizeof err);
    zmq_msg_close(&part);
    while (more) {
        zmq_msg_init(&part);
        more = zmq_msg_recv(&part, t->dealer, ZMQ_DONTWAIT) >= 0 && zmq_msg_more(&part);
        zmq_msg_close(&part);
    }
    if (st != XQF_DECODE_OK) {
        log_warn("transport: dropped a bad message from the coordinator: %s", err);
        xqf_msg_free(m);
        return -1;
    }
    return 1;
}

static int link_send(void *ctx, const XqfMsg *m) { return wt_send(ctx, m); }
static int link_wait(void *ctx, int timeout_ms, int fd) { return wt_wait(ctx, timeout_ms, fd); }
static int link_recv(void *ctx, XqfMsg *m) { return wt_recv(ctx, m); }

WorkerLink wt_link(WorkerTransport *t) { return (WorkerLink){ t, link_send, link_wait, link_recv }; }

#include "transport.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "log.h"

struct Transport {
    void *ctx, *router;
};

Transport *transport_new(const char *endpoint)
{
    Transport *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    int64_t maxsize = 4 * (int64_t)XQF_FRAME_MAX;
    int hwm = 100000, linger = 0;
    if (!(t->ctx = zmq_ctx_new()) || !(t->router = zmq_socket(t->ctx, ZMQ_ROUTER)) ||
        zmq_setsockopt(t->router, ZMQ_MAXMSGSIZE, &maxsize, sizeof maxsize) != 0 ||
        zmq_setsockopt(t->router, ZMQ_SNDHWM, &hwm, sizeof hwm) != 0 ||
        zmq_setsockopt(t->router, ZMQ_RCVHWM, &hwm, sizeof hwm) != 0 ||
        zmq_setsockopt(t->router, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_bind(t->router, endpoint) != 0) {
        log_error("transport: cannot bind %s: %s", endpoint, zmq_strerror(zmq_errno()));
        transport_destroy(&t);
        return NULL;
    }
    return t;
}

void transport_destroy(Transport **tp)
{
    Transport *t = *tp;
    if (!t)
        return;
    if (t->router)
        zmq_close(t->router);
    if (t->ctx)
        zmq_ctx_term(t->ctx);
    free(t);
    *tp = NULL;
}

int transport_wait(Transport *t, int timeout_ms, int fd)
{
    zmq_pollitem_t items[2] = { { t->router, 0, ZMQ_POLLIN, 0 }, { NULL, fd, ZMQ_POLLIN, 0 } };
    int rc = zmq_poll(items, fd >= 0 ? 2 : 1, timeout_ms);
    if (rc < 0)
        return zmq_errno() == EINTR ? 0 : -1;
    return (items[0].revents & ZMQ_POLLIN ? 1 : 0) | (fd >= 0 && items[1].revents ? 2 : 0);
}

/* Receives one part; returns its size, -2 when nothing is waiting, -1 on error. */
static int recv_part(void *sock, zmq_msg_t *part, bool *more)
{
    if (zmq_msg_recv(part, sock, ZMQ_DONTWAIT) < 0)
        return zmq_errno() == EAGAIN ? -2 : -1;
    *more = zmq_msg_more(part);
    return 0;
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
            return rc == -2 ? 0 : (zmq_errno() == EINTR ? 0 : -1);
        }
        bool ok = more && zmq_msg_size(&id) <= PEER_ID_MAX;
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
        size_t len = zmq_msg_size(&body);
        if (ok && !more && len > data->cap) {
            char *d = realloc(data->data, len ? len : 1);
            if (!d)
                ok = false;
            else {
                data->data = d;
                data->cap = len;
            }
        }
        if (ok && !more) {
            memcpy(data->data, zmq_msg_data(&body), len);
            data->len = len;
        }
        zmq_msg_close(&body);
        while (more) {                     /* extra parts: drop the whole message */
            ok = false;
            zmq_msg_init(&body);
            if (recv_part(t->router, &body, &more) != 0)
                more = false;
            zmq_msg_close(&body);
        }
        if (ok)
            return 1;
        log_warn("transport: dropped a message that was not one frame");
    }
}

int transport_send(Transport *t, const Peer *peer, const void *data, size_t len)
{
    if (zmq_send(t->router, peer->id, peer->len, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
        zmq_send(t->router, data, len, ZMQ_DONTWAIT) < 0)
        return -1;
    return 0;
}

#include "worker_transport.h"

#include <errno.h>
#include <stdlib.h>
#include <zmq.h>

#include "log.h"

struct WorkerTransport {
    void *ctx, *dealer;
    XqfBuf buf;
};

WorkerTransport *wt_new(const char *endpoint)
{
    WorkerTransport *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    int one = 1, linger = 1000, ivl = 100, ivl_max = 5000;
    int64_t maxsize = 4 * (int64_t)XQF_FRAME_MAX;
    if (!(t->ctx = zmq_ctx_new()) || !(t->dealer = zmq_socket(t->ctx, ZMQ_DEALER)) ||
        zmq_setsockopt(t->dealer, ZMQ_IMMEDIATE, &one, sizeof one) != 0 ||
        zmq_setsockopt(t->dealer, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_setsockopt(t->dealer, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl) != 0 ||
        zmq_setsockopt(t->dealer, ZMQ_RECONNECT_IVL_MAX, &ivl_max, sizeof ivl_max) != 0 ||
        zmq_setsockopt(t->dealer, ZMQ_MAXMSGSIZE, &maxsize, sizeof maxsize) != 0 ||
        zmq_connect(t->dealer, endpoint) != 0) {
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
    zmq_pollitem_t items[2] = { { t->dealer, 0, ZMQ_POLLIN, 0 }, { NULL, fd, ZMQ_POLLIN, 0 } };
    int rc = zmq_poll(items, fd >= 0 ? 2 : 1, timeout_ms);
    if (rc < 0)
        return zmq_errno() == EINTR ? 0 : -1;
    return (items[0].revents & ZMQ_POLLIN ? 1 : 0) | (fd >= 0 && items[1].revents ? 2 : 0);
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

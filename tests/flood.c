/*
 * xqf-flood: what a coordinator's receive buffers cost it under a flood,
 * for ops/bench buffers.  Stalls the coordinator's loop (its test hook
 * XQF_TEST_STALL_MS hangs the first batch with a heartbeat: one is sent
 * first), then opens N connections, each sending F frames of the largest
 * size a connection may send (TRANSPORT_MSG_MAX) without waiting, and
 * reads the coordinator's resident memory (VmRSS of /proc/PID/status)
 * before and once the frames stop moving (no frame sent, the memory
 * still within 256 KiB, for --settle seconds).  The frames are sent without a
 * copy (every message points at one buffer), so the flood costs this
 * process nothing per frame.
 *
 * Prints one line: connections, frames sent (those the coordinator and
 * the kernel took), the coordinator's memory before and after, and the
 * growth per connection.
 *
 * With --chunks SHA (the coordinator not stalled), the send side instead:
 * each connection says hello, then asks for the build SHA's chunks (of
 * --size bytes) one offset after the other, every --every ms for
 * --seconds, from 0 again past the end, and reads nothing (its receive
 * queue one message, its kernel buffer the least Linux gives: what it is
 * sent stays with the coordinator).  Prints the coordinator's memory
 * before, at its highest while asked, and once the connections closed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "clock.h"
#include "codec.h"
#include "opts.h"
#include "transport.h"

static const OptSpec OPTIONS[] = {
    { "--connect", OPT_TEXT, "ENDPOINT", "tcp://127.0.0.1:5555", .help = "the coordinator (plaintext)" },
    { "--pid", OPT_INT, "PID", NULL, .imin = 1, .imax = 1 << 30, .help = "the coordinator's process" },
    { "--connections", OPT_INT, "N", "100", .imin = 1, .imax = 60000, .help = "connections" },
    { "--frames", OPT_INT, "F", "16", .imin = 1, .imax = 100000, .help = "frames each connection tries to send" },
    { "--settle", OPT_REAL, "S", "2", .rmin = 0.1, .rmax = 600,
      .help = "the flood is over when no frame was sent and the coordinator's memory held still this long" },
    { "--chunks", OPT_TEXT, "SHA", NULL, .help = "ask for this build's chunks and never read them (the send side)" },
    { "--size", OPT_INT, "BYTES", "4194304", .imin = 1, .imax = INT32_MAX, .help = "the build's size (--chunks)" },
    { "--seconds", OPT_REAL, "S", "20", .rmin = 0.1, .rmax = 3600, .help = "how long to ask (--chunks)" },
    { "--every", OPT_INT, "MS", "50", .imin = 1, .imax = 60000, .help = "a request per connection this often (--chunks)" },
    OPTS_END,
};

static const OptTable TABLE = {
    .program = "xqf-flood", .spec = OPTIONS,
    .usage = "Usage: xqf-flood --pid PID [--connect ENDPOINT] [--connections N] [--frames F] [--settle S]\n"
             "       xqf-flood --pid PID --chunks SHA [--size BYTES] [--seconds S] [--every MS] [--connect ENDPOINT]\n"
             "                 [--connections N]\n"
             "\n"
             "Floods a stalled coordinator (started with XQF_TEST_STALL_MS) with frames of the\n"
             "largest size from N connections and prints its resident memory before and after;\n"
             "with --chunks, asks for a build's chunks from N connections that never read them.\n",
};

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* VmRSS of a process in KiB, or -1. */
static long rss_kib(long pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

/* A DEALER to ep; rcvhwm and rcvbuf > 0 set its receive queue and kernel buffer. */
static void *dealer(void *ctx, const char *ep, int sndhwm, int rcvhwm, int rcvbuf)
{
    void *s = zmq_socket(ctx, ZMQ_DEALER);
    int linger = 0;
    if (!s || zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_setsockopt(s, ZMQ_SNDHWM, &sndhwm, sizeof sndhwm) != 0 ||
        (rcvhwm > 0 && zmq_setsockopt(s, ZMQ_RCVHWM, &rcvhwm, sizeof rcvhwm) != 0) ||
        (rcvbuf > 0 && zmq_setsockopt(s, ZMQ_RCVBUF, &rcvbuf, sizeof rcvbuf) != 0) || zmq_connect(s, ep) != 0) {
        fprintf(stderr, "xqf-flood: cannot connect to %s: %s\n", ep, zmq_strerror(zmq_errno()));
        exit(1);
    }
    return s;
}

/* Encodes and sends m on sock without waiting. 0, or -1 (its queue full). */
static int send_msg(void *sock, const XqfMsg *m)
{
    XqfBuf b = { 0 };
    int rc = xqf_msg_encode(m, &b) == 0 && zmq_send(sock, b.data, b.len, ZMQ_DONTWAIT) >= 0 ? 0 : -1;
    xqf_buf_free(&b);
    return rc;
}

/* The send side (--chunks): n connections ask for sha's chunks and read none. 0, or 1 on failure. */
static int flood_chunks(void *ctx, const char *ep, long pid, int n, const char *sha, int64_t size, double seconds,
                        int every_ms)
{
    long before = rss_kib(pid), high = before;
    if (before < 0) {
        fprintf(stderr, "xqf-flood: no process %ld\n", pid);
        return 1;
    }
    void **socks = calloc((size_t)n, sizeof *socks);
    int64_t *next = calloc((size_t)n, sizeof *next);
    if (!socks || !next)
        return 1;
    XqfMsg m;
    for (int i = 0; i < n; i++) {
        socks[i] = dealer(ctx, ep, 1000, 1, 4096);
        xqf_msg_init(&m, XQF_MSG_HELLO);
        snprintf(m.u.hello.name, sizeof m.u.hello.name, "flood-%d", i);
        m.u.hello.cores = 1;
        m.u.hello.concurrency = 1;
        char reply[256];
        int got = send_msg(socks[i], &m) == 0 ? zmq_recv(socks[i], reply, sizeof reply, 0) : -1;
        xqf_msg_free(&m);
        if (got < 0) {
            fprintf(stderr, "xqf-flood: connection %d: no welcome\n", i);
            return 1;
        }
    }
    long asked = 0;
    int64_t end = clock_now_ms() + (int64_t)(seconds * 1000);
    while (clock_now_ms() < end) {
        for (int i = 0; i < n; i++) {
            xqf_msg_init(&m, XQF_MSG_BUILD_REQUEST);
            snprintf(m.u.build_request.sha256, sizeof m.u.build_request.sha256, "%s", sha);
            snprintf(m.u.build_request.kind, sizeof m.u.build_request.kind, "build");
            m.u.build_request.offset = (uint64_t)next[i];
            if (send_msg(socks[i], &m) == 0) {
                asked++;
                next[i] = next[i] + XQF_CHUNK_MAX < size ? next[i] + XQF_CHUNK_MAX : 0;
            }
            xqf_msg_free(&m);
        }
        long rss = rss_kib(pid);
        high = rss > high ? rss : high;
        sleep_ms(every_ms);
    }
    for (int i = 0; i < n; i++)
        zmq_close(socks[i]);
    sleep_ms(3000);                          /* the coordinator sees the connections close and frees their queues */
    long after = rss_kib(pid);
    printf("chunks: %d connections asked %ld times for chunks of %d KiB without reading; coordinator resident "
           "%.1f MiB before, %.1f MiB at most while asked (+%.2f MiB a connection), %.1f MiB after they closed\n",
           n, asked, XQF_CHUNK_MAX / 1024, before / 1024.0, high / 1024.0, (high - before) / 1024.0 / n,
           after / 1024.0);
    free(socks);
    free(next);
    return 0;
}

int main(int argc, char **argv)
{
    Opts o;
    int rc = opts_parse(&o, &TABLE, argc - 1, argv + 1);
    if (rc != OPTS_OK)
        return rc == OPTS_HELP ? 0 : 2;
    if (!opts_given(&o, "--pid"))
        return opts_error(TABLE.program, "give --pid PID (the coordinator's)"), 2;
    long pid = (long)opts_int(&o, "--pid");
    int n = (int)opts_int(&o, "--connections"), frames = (int)opts_int(&o, "--frames");
    const char *ep = opts_text(&o, "--connect");
    double settle = opts_real(&o, "--settle");
    void *ctx = zmq_ctx_new();
    zmq_ctx_set(ctx, ZMQ_IO_THREADS, 2);
    zmq_ctx_set(ctx, ZMQ_MAX_SOCKETS, n + 16);
    if (opts_given(&o, "--chunks"))
        return flood_chunks(ctx, ep, pid, n, opts_text(&o, "--chunks"), opts_int(&o, "--size"),
                            opts_real(&o, "--seconds"), (int)opts_int(&o, "--every"));

    /* the stall: a heartbeat makes the coordinator's next batch hang (its test hook) */
    void *first = dealer(ctx, ep, 8, 0, 0);
    XqfMsg m;
    XqfBuf b = { 0 };
    xqf_msg_init(&m, XQF_MSG_HEARTBEAT);
    if (xqf_msg_encode(&m, &b) != 0 || zmq_send(first, b.data, b.len, 0) < 0) {
        fprintf(stderr, "xqf-flood: cannot send the heartbeat\n");
        return 1;
    }
    xqf_buf_free(&b);
    sleep_ms(500);
    long before = rss_kib(pid);
    if (before < 0) {
        fprintf(stderr, "xqf-flood: no process %ld\n", pid);
        return 1;
    }

    static char frame[TRANSPORT_MSG_MAX];
    memset(frame, 0xc1, sizeof frame);    /* no msgpack value starts so: the codec refuses it */
    void **socks = calloc((size_t)n, sizeof *socks);
    int *sent = calloc((size_t)n, sizeof *sent);
    if (!socks || !sent)
        return 1;
    for (int i = 0; i < n; i++)
        socks[i] = dealer(ctx, ep, frames, 0, 0);
    double last = (double)clock_now_ms() / 1000;
    long seen = before;
    for (;;) {
        long rss = rss_kib(pid);
        bool moved = rss > seen + 256 || rss < seen - 256;   /* the coordinator still takes frames in */
        seen = moved ? rss : seen;
        for (int i = 0; i < n; i++) {
            while (sent[i] < frames) {
                zmq_msg_t msg;
                zmq_msg_init_data(&msg, frame, sizeof frame, NULL, NULL);
                if (zmq_msg_send(&msg, socks[i], ZMQ_DONTWAIT) < 0) {
                    zmq_msg_close(&msg);
                    break;
                }
                sent[i]++;
                moved = true;
            }
        }
        double now = (double)clock_now_ms() / 1000;
        if (moved)
            last = now;
        if (now - last >= settle)
            break;
        sleep_ms(20);
    }
    long after = rss_kib(pid);
    long total = 0;
    for (int i = 0; i < n; i++)
        total += sent[i];
    printf("flood: %d connections, %ld frames of %d KiB handed to ZeroMQ (%d tried a connection); coordinator "
           "resident %.1f MiB before, %.1f MiB after: +%.1f MiB, %.2f MiB a connection\n",
           n, total, TRANSPORT_MSG_MAX / 1024, frames, before / 1024.0, after / 1024.0, (after - before) / 1024.0,
           (after - before) / 1024.0 / n);
    for (int i = 0; i < n; i++)
        zmq_close(socks[i]);
    zmq_close(first);
    zmq_ctx_term(ctx);
    free(socks);
    free(sent);
    return 0;
}

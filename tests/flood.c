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
    OPTS_END,
};

static const OptTable TABLE = {
    .program = "xqf-flood", .spec = OPTIONS,
    .usage = "Usage: xqf-flood --pid PID [--connect ENDPOINT] [--connections N] [--frames F] [--settle S]\n"
             "\n"
             "Floods a stalled coordinator (started with XQF_TEST_STALL_MS) with frames of the\n"
             "largest size from N connections and prints its resident memory before and after.\n",
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

static void *dealer(void *ctx, const char *ep, int sndhwm)
{
    void *s = zmq_socket(ctx, ZMQ_DEALER);
    int linger = 0;
    if (!s || zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_setsockopt(s, ZMQ_SNDHWM, &sndhwm, sizeof sndhwm) != 0 || zmq_connect(s, ep) != 0) {
        fprintf(stderr, "xqf-flood: cannot connect to %s: %s\n", ep, zmq_strerror(zmq_errno()));
        exit(1);
    }
    return s;
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

    /* the stall: a heartbeat makes the coordinator's next batch hang (its test hook) */
    void *first = dealer(ctx, ep, 8);
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
        socks[i] = dealer(ctx, ep, frames);
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

/*
 * xqf-loadgen: simulated workers against a coordinator, for ops/bench
 * cluster.  No engine: each simulated worker says hello, then loops
 * task_request -> task -> result (the whole task as draws) -> ack.
 *
 *   xqf-loadgen --db CONNINFO [--connect EP] [--workers N] [--rate R] [--seconds S] [--warmup S]
 *
 * --create-only --book FILE --pairs P --nodes N --pairs-per-task K: creates
 * a real SPRT run instead (NullR=2 against the defaults, P pairs, the
 * book's lines), prints its id and exits (ops/bench cluster times a real
 * worker on it).
 *
 * --rate R paces the workers (open loop): each starts a cycle every N/R
 * seconds (at once when the previous one ended late), for R results per
 * second in all;
 * without it (closed loop) every worker goes again at once, which measures
 * the most the coordinator can take (round trips then grow as N / rate).
 * Creates an SPRT run of one pair per task (so every result completes a
 * task) with bounds no result can cross, then measures for S seconds:
 * results acknowledged "accepted" per second (an ack is sent only after its
 * transaction committed) and the round trip of every request (task_request
 * -> task, result -> ack): median, p99, max.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "clock.h"
#include "codec.h"
#include "log.h"
#include "store.h"

typedef struct {
    void *sock;
    double sent_at;                  /* of the request in flight, 0: none */
    double next_at;                  /* paced: when to start the next cycle, 0: not waiting */
    double planned;                  /* paced: when the current cycle was due */
    bool welcomed;
} Sim;

static double now_s(void) { return (double)clock_now_us() / 1e6; }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void send(Sim *s, const XqfMsg *m, XqfBuf *buf)
{
    if (xqf_msg_encode(m, buf) == 0 && zmq_send(s->sock, buf->data, buf->len, ZMQ_DONTWAIT) >= 0)
        s->sent_at = now_s();
}

int main(int argc, char **argv)
{
    const char *db = getenv("XQF_DB"), *ep = "tcp://127.0.0.1:5555";
    int workers = 1000;
    double seconds = 10, warmup = 3, rate = 0;
    const char *book_path = NULL;
    bool create_only = false;
    long pairs = 20, nodes = 20000, per_task = 4;
    for (int i = 1; i < argc; i += 2) {
        if (strcmp(argv[i], "--create-only") == 0) {
            create_only = true;
            i--;
            continue;
        }
        if (i + 1 >= argc)
            break;
        if (strcmp(argv[i], "--db") == 0)
            db = argv[i + 1];
        else if (strcmp(argv[i], "--connect") == 0)
            ep = argv[i + 1];
        else if (strcmp(argv[i], "--workers") == 0)
            workers = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--seconds") == 0)
            seconds = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--book") == 0)
            book_path = argv[i + 1];
        else if (strcmp(argv[i], "--pairs") == 0)
            pairs = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--nodes") == 0)
            nodes = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--pairs-per-task") == 0)
            per_task = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--rate") == 0)
            rate = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--warmup") == 0)
            warmup = atof(argv[i + 1]);
    }
    if (!db || workers < 1 || workers > 20000 || seconds <= 0) {
        fprintf(stderr, "usage: xqf-loadgen --db CONNINFO [--connect EP] [--workers N] [--seconds S] [--warmup S]\n");
        return 2;
    }
    xqf_log_init("loadgen");
    Store *store = store_new(db);
    const char *book[1] = { "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1" };
    StoreSprtSpec spec = { .name = "loadgen", .test_params = "", .base_params = "", .build_id = "",
                           .book_name = "loadgen", .book = book, .book_lines = 1, .seed = 1,
                           .nodes = 1000, .margin_ms = 100, .pairs_per_task = 1,
                           .max_pairs = INT64_C(1) << 40, .elo0 = -1e6, .elo1 = 1e6,
                           .alpha = 0.05, .beta = 0.05, .priority = 1000 };
    static char lines[4096][512];
    const char *real[4096];
    int n = 0;
    FILE *f = create_only && book_path ? fopen(book_path, "r") : NULL;
    while (f && n < 4096 && fgets(lines[n], sizeof lines[n], f))
        if (lines[n][0] != '#' && lines[n][0] != '\n') {
            lines[n][strcspn(lines[n], "\n")] = '\0';
            real[n] = lines[n];
            n++;
        }
    if (f)
        fclose(f);
    if (create_only) {
        if (n == 0 || pairs < 1 || nodes < 1 || per_task < 1 || per_task > 1024) {
            fprintf(stderr, "xqf-loadgen: --create-only needs --book FILE and sane --pairs, --nodes, --pairs-per-task\n");
            return 2;
        }
        spec = (StoreSprtSpec){ .name = "bench", .test_params = "NullR=2", .base_params = "",
                                .build_id = "", .book_name = book_path, .book = real, .book_lines = n,
                                .seed = 1, .nodes = nodes, .margin_ms = 100, .pairs_per_task = (int)per_task,
                                .max_pairs = pairs, .elo0 = -1e6, .elo1 = 1e6, .alpha = 0.05, .beta = 0.05 };
    }
    int64_t run;
    if (!store || store_connect(store) != 0 || store_create_sprt(store, &spec, &run) != 0) {
        fprintf(stderr, "xqf-loadgen: cannot create the run\n");
        return 1;
    }
    if (create_only) {
        printf("%lld\n", (long long)run);
        store_destroy(&store);
        return 0;
    }
    void *ctx = zmq_ctx_new();
    zmq_ctx_set(ctx, ZMQ_MAX_SOCKETS, workers + 64);
    Sim *sims = calloc((size_t)workers, sizeof *sims);
    zmq_pollitem_t *items = calloc((size_t)workers, sizeof *items);
    size_t cap = 1 << 22, nrtt = 0;
    double *rtt = malloc(cap * sizeof *rtt);
    XqfBuf buf = { 0 };
    XqfMsg m;
    for (int i = 0; i < workers; i++) {
        int linger = 0;
        sims[i].sock = zmq_socket(ctx, ZMQ_DEALER);
        if (!sims[i].sock) {
            fprintf(stderr, "xqf-loadgen: socket %d: %s (raise ulimit -n)\n", i, zmq_strerror(zmq_errno()));
            return 1;
        }
        zmq_setsockopt(sims[i].sock, ZMQ_LINGER, &linger, sizeof linger);
        zmq_connect(sims[i].sock, ep);
        items[i] = (zmq_pollitem_t){ sims[i].sock, 0, ZMQ_POLLIN, 0 };
        xqf_msg_init(&m, XQF_MSG_HELLO);
        snprintf(m.u.hello.name, sizeof m.u.hello.name, "sim-%d", i);
        snprintf(m.u.hello.build, sizeof m.u.hello.build, "loadgen");
        m.u.hello.cores = m.u.hello.concurrency = 1;
        send(&sims[i], &m, &buf);
    }
    double start = now_s(), measure_from = start + warmup, end = measure_from + seconds;
    long accepted = 0, other = 0, requests = 0;
    double interval = rate > 0 ? workers / rate : 0;
    while (now_s() < end) {
        double t = now_s(), wake = t + 0.1;
        for (int i = 0; i < workers; i++) {
            if (sims[i].next_at > 0 && sims[i].next_at <= t) {
                sims[i].next_at = 0;
                xqf_msg_init(&m, XQF_MSG_TASK_REQUEST);
                send(&sims[i], &m, &buf);
            } else if (sims[i].next_at > 0 && sims[i].next_at < wake) {
                wake = sims[i].next_at;
            }
        }
        if (zmq_poll(items, workers, (long)((wake - t) * 1000) + 1) < 0)
            break;
        t = now_s();
        bool measuring = t >= measure_from;
        for (int i = 0; i < workers; i++) {
            if (!(items[i].revents & ZMQ_POLLIN))
                continue;
            zmq_msg_t part;
            zmq_msg_init(&part);
            if (zmq_msg_recv(&part, sims[i].sock, ZMQ_DONTWAIT) < 0) {
                zmq_msg_close(&part);
                continue;
            }
            XqfMsg in;
            XqfDecodeStatus st = xqf_msg_decode(zmq_msg_data(&part), zmq_msg_size(&part), &in, NULL, 0);
            zmq_msg_close(&part);
            if (st != XQF_DECODE_OK)
                continue;
            if (measuring && sims[i].sent_at > 0 && nrtt < cap)
                rtt[nrtt++] = t - sims[i].sent_at;
            sims[i].sent_at = 0;
            if (in.type == XQF_MSG_TASK) {
                xqf_msg_init(&m, XQF_MSG_RESULT);
                XqfMsg_result *r = &m.u.result;
                r->task_id = in.u.task.task_id;
                r->lease = in.u.task.lease;
                r->pairs = in.u.task.pairs;
                r->draws = 2 * in.u.task.pairs;
                r->penta.count = 5;
                r->penta.v[2] = in.u.task.pairs;
                r->reasons.count = 5;
                r->reasons.v[4] = 2 * in.u.task.pairs;
                send(&sims[i], &m, &buf);
            } else {
                if (in.type == XQF_MSG_ACK && strcmp(in.u.ack.status, "accepted") == 0)
                    accepted += measuring;
                else if (in.type != XQF_MSG_WELCOME && in.type != XQF_MSG_IDLE)
                    other += measuring;
                if (interval > 0 && (in.type == XQF_MSG_ACK || in.type == XQF_MSG_WELCOME)) {
                    /*
                     * A fixed cadence: the first cycles spread evenly over one
                     * interval, then each one interval after the previous was
                     * due (at once when late), whatever the round trips took.
                     */
                    sims[i].planned = sims[i].welcomed ? sims[i].planned + interval
                                                       : t + interval * (double)rand() / RAND_MAX;
                    sims[i].next_at = sims[i].planned > t ? sims[i].planned : t;
                    sims[i].welcomed = true;
                } else {
                    xqf_msg_init(&m, XQF_MSG_TASK_REQUEST);
                    send(&sims[i], &m, &buf);
                }
            }
            requests += measuring;
            xqf_msg_free(&in);
        }
    }
    qsort(rtt, nrtt, sizeof *rtt, cmp_double);
    double p50 = nrtt ? rtt[nrtt / 2] : NAN, p99 = nrtt ? rtt[(size_t)(nrtt * 0.99)] : NAN,
           max = nrtt ? rtt[nrtt - 1] : NAN;
    printf("simulated workers: %d, %s, measured: %.1f s (after %.1f s warm-up)\n", workers,
           rate > 0 ? "paced" : "closed loop (as fast as answered)", seconds, warmup);
    if (rate > 0)
        printf("offered: %.0f results per second\n", rate);
    printf("results committed: %.0f per second (%ld accepted; %ld other replies)\n", accepted / seconds,
           accepted, other);
    printf("requests answered: %.0f per second\n", requests / seconds);
    printf("round trip: median %.2f ms, p99 %.2f ms, max %.2f ms (%zu samples)\n", p50 * 1e3,
           p99 * 1e3, max * 1e3, nrtt);
    store_finish_run(store, run, "stopped", "loadgen done");
    for (int i = 0; i < workers; i++)
        zmq_close(sims[i].sock);
    zmq_ctx_term(ctx);
    store_destroy(&store);
    free(sims);
    free(items);
    free(rtt);
    xqf_buf_free(&buf);
    return 0;
}

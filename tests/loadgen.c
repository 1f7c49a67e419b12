/*
 * xqf-loadgen: simulated workers against a coordinator, for ops/bench
 * cluster.  No engine: each simulated worker says hello, then loops
 * task_request -> task -> result (the whole task as draws) -> ack.
 *
 * --create-only --book FILE --pairs P --nodes N --pairs-per-task K: creates
 * a real SPRT run instead (NullR=2 against the defaults, P pairs, the
 * book's openings), prints its id and exits (ops/bench cluster times a real
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
 *
 * Each result carries the records of its pair's two games (the coordinator
 * counts a result by its records), of --games PLIES moves each (moves only,
 * as a real worker's: the cost of storing every game; 0: no move).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "book.h"
#include "gamepack.h"
#include "games.h"
#include "clock.h"
#include "codec.h"
#include "log.h"
#include "opts.h"
#include "rng.h"
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

static const OptSpec OPTIONS[] = {
    { "--db", OPT_TEXT, "CONNINFO", NULL, .help = "libpq connection string (default: $XQF_DB)" },
    { "--connect", OPT_TEXT, "ENDPOINT", "tcp://127.0.0.1:5555", .help = "the coordinator" },
    { "--workers", OPT_INT, "N", "1000", .imin = 1, .imax = 20000, .help = "simulated workers" },
    { "--rate", OPT_REAL, "R", "0", .rmin = 0, .rmax = 1e9, .help = "results per second in all (0: closed loop)" },
    { "--seconds", OPT_REAL, "S", "10", .rmin = 0.001, .rmax = 86400, .help = "how long to measure" },
    { "--warmup", OPT_REAL, "S", "3", .rmin = 0, .rmax = 86400, .help = "before measuring" },
    { "--games", OPT_INT, "PLIES", "0", .imin = 0, .imax = 1000, .help = "each result's 2 game records have PLIES moves" },
    { "--create-only", OPT_FLAG, NULL, NULL, .help = "create a real SPRT run instead, print its id" },
    { "--book", OPT_TEXT, "FILE", NULL, .help = "with --create-only: its openings" },
    { "--pairs", OPT_INT, "P", "20", .imin = 1, .imax = INT64_C(1) << 40, .help = "with --create-only: game pairs" },
    { "--nodes", OPT_INT, "N", "20000", .imin = 1, .imax = INT64_C(1) << 40, .help = "with --create-only: nodes per move" },
    { "--pairs-per-task", OPT_INT, "K", "4", .imin = 1, .imax = 1024, .help = "with --create-only: pairs per task" },
    OPTS_END,
};

static const OptTable TABLE = {
    .program = "xqf-loadgen", .spec = OPTIONS,
    .usage = "Usage: xqf-loadgen --db CONNINFO [--connect ENDPOINT] [--workers N] [--rate R] [--seconds S]\n"
             "                   [--warmup S]\n"
             "       xqf-loadgen --create-only --book FILE [--pairs P] [--nodes N] [--pairs-per-task K]\n"
             "\n"
             "Simulated workers against a coordinator (ops/bench load), or a real SPRT run\n"
             "for a real worker (--create-only).\n",
};

/* The book's openings as lines for the store (read and checked by the worker's reader). 0 or -1. */
static int book_lines(const char *path, Book **book, char ***lines, int *n)
{
    char err[512], line[BOOK_TEXT_MAX];
    if (!(*book = book_load(path, err, sizeof err))) {
        fprintf(stderr, "xqf-loadgen: error: --book: %s\n", err);
        return -1;
    }
    *n = book_size(*book);
    if (!(*lines = calloc((size_t)*n, sizeof **lines)))
        return -1;
    for (int i = 0; i < *n; i++) {
        book_opening_text(*book, i, line);
        if (!((*lines)[i] = strdup(line)))
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    Opts o;
    int rc = opts_parse(&o, &TABLE, argc - 1, argv + 1);
    if (rc != OPTS_OK)
        return rc == OPTS_HELP ? 0 : 2;
    const char *db = opts_given(&o, "--db") ? opts_text(&o, "--db") : getenv("XQF_DB");
    const char *ep = opts_text(&o, "--connect"), *book_path = opts_text(&o, "--book");
    int workers = (int)opts_int(&o, "--workers");
    double seconds = opts_real(&o, "--seconds"), warmup = opts_real(&o, "--warmup"), rate = opts_real(&o, "--rate");
    bool create_only = opts_given(&o, "--create-only");
    if (!db)
        return opts_error(TABLE.program, "give --db CONNINFO or set XQF_DB"), 2;
    if (create_only && !book_path)
        return opts_error(TABLE.program, "--create-only needs --book FILE"), 2;
    xqf_log_init("loadgen");
    /* the two game records (drawn, as the result says) every result carries */
    PackBuf games = { 0 };
    for (int g = 0; g < 2; g++) {
        GameRecord rec;
        game_record_init(&rec);
        snprintf(rec.fen, sizeof rec.fen, "%s", "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1");
        rec.capacity = (int)opts_int(&o, "--games");
        if (!(rec.moves = calloc((size_t)rec.capacity + 1, sizeof *rec.moves)))
            return 1;
        for (rec.count = 0; rec.count < rec.capacity; rec.count++)
            rec.moves[rec.count].move = (Move)((rec.count * 37 + 11) & 0x3fff);
        rec.result = RESULT_DRAW;
        rec.reason = GAME_REPETITION;
        if (gamepack_append(&rec, XQF_GAME_MOVES, &games) != 0)
            return 1;
        game_record_free(&rec);
    }
    Store *store = store_new(db);
    const char *book[1] = { "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1" };
    /* its run is for its own workers only (their build "loadgen"): real workers beside them play their own runs */
    StoreSprtSpec spec = { .name = "loadgen", .test_params = "", .base_params = "", .build_id = "loadgen",
                           .book_name = "loadgen", .book = book, .book_lines = 1, .seed = 1,
                           .nodes = 1000, .margin_ms = 100, .pairs_per_task = 1,
                           .max_pairs = INT64_C(1) << 40, .elo0 = -1e6, .elo1 = 1e6,
                           .alpha = 0.05, .beta = 0.05, .priority = 1000 };
    Book *real_book = NULL;
    char **real = NULL;
    int n = 0;
    if (create_only) {
        if (book_lines(book_path, &real_book, &real, &n) != 0)
            return 2;
        spec = (StoreSprtSpec){ .name = "bench", .test_params = "NullR=2", .base_params = "",
                                .build_id = "", .book_name = book_path, .book = (const char *const *)real,
                                .book_lines = n, .seed = 1, .nodes = opts_int(&o, "--nodes"), .margin_ms = 100,
                                .pairs_per_task = (int)opts_int(&o, "--pairs-per-task"),
                                .max_pairs = opts_int(&o, "--pairs"), .elo0 = -1e6, .elo1 = 1e6, .alpha = 0.05,
                                .beta = 0.05 };
    }
    int64_t run;
    if (!store || store_connect(store) != 0 || store_create_sprt(store, &spec, &run) != 0) {
        fprintf(stderr, "xqf-loadgen: cannot create the run\n");
        return 1;
    }
    for (int i = 0; i < n; i++)
        free(real[i]);
    free(real);
    book_destroy(&real_book);
    if (create_only) {
        printf("%lld\n", (long long)run);
        store_destroy(&store);
        return 0;
    }
    void *ctx = zmq_ctx_new();
    zmq_ctx_set(ctx, ZMQ_MAX_SOCKETS, workers + 64);
    Rng rng;                         /* the paced cycles' first offsets */
    rng_seed(&rng, 1);
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
                if (in.u.task.pairs == 1) {   /* the message never owns them: not freed */
                    r->games.data = games.data;
                    r->games.len = (uint32_t)games.len;
                }
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
                                                       : t + interval * rng_unit(&rng);
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

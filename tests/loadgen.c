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
 *
 * --hold S: each worker holds its task S seconds before its result,
 * heartbeating it at the welcome's interval (a quarter of the
 * coordinator's --lease), as a worker playing it would: the heartbeats
 * answered otherwise than ok and the leases that expired count the
 * heartbeats the coordinator did not hear in time.
 *
 * --pid PID (the coordinator's): its resident memory (VmRSS) before and
 * after each wave.  At the end, from the database: the leases given and
 * those that ended without their result (with instant results, none
 * should: each one a lease that expired before its result was heard).
 *
 * A storm (--storm): after the measured wave every worker vanishes at once
 * (sockets closed, linger 0, no bye), and --gone S later as many connect at
 * once, under the same names or --new-names; or (--restart COMMAND) the
 * workers stay and COMMAND kills and restarts the coordinator (its last
 * line of output: the new pid).  In a storm the workers behave as real
 * ones do (worker.c): a result unanswered for 2 s, a hello or a task
 * request for 5 s is sent again, error 5 is answered by a hello, and a
 * worker back after the storm first re-sends the result its predecessor
 * had not seen answered.  The second wave runs --seconds from the storm
 * on (longer, up to a minute, until every worker was served again): the
 * time until 99 % of the workers had a result accepted, the
 * results accepted in each second (paced: the first second with 99 % of
 * the offered rate).
 *
 * At the end (storm or not) the workers ask for no more tasks, every
 * result sent or held is awaited (30 s at most), and the database's books
 * are checked against the answers (ledger): nothing counted twice,
 * nothing acknowledged and not counted, nothing lost without a reason.
 * --check S: exit 1 unless all holds and, after a storm, 99 % were
 * served again within S seconds.
 *
 * A fleet of processes (a simulated worker takes about 2 open files, and
 * a process may be allowed no more than 20,000): --new-run creates the
 * run once; each process joins it (--run), names its workers from its
 * own --first (sim-I, sim-G-I: a storm back under the same names reuses
 * each process's own), begins its warm-up at the shared --start-at (wall
 * clock, ms), so that the measured waves and the storm fall at the same
 * moments in all, and writes what it measured to --figures FILE instead
 * of printing it: the counts, every round trip, every worker's time until
 * served again, the results per bin after the storm, and every result it
 * offered with its answers.  --merge FILES prints the fleet's figures as
 * one process prints its own: counts added, percentiles over the pooled
 * samples (a percentile of percentiles is not one), and the books checked
 * once over every result any process offered (alone, each would see the
 * others' results as counted but never offered).  In a restart storm the
 * first process runs --restart, the others --restart-elsewhere (their
 * workers stay, as real ones); the coordinator's memory is the first
 * file's.
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
#include "store_games.h"
#include "store_runs.h"
#include "store_test.h"

enum { WAIT_NONE, WAIT_HELLO, WAIT_REQUEST, WAIT_RESULT };
enum { HEARD_ACCEPTED = 1, HEARD_DUPLICATE = 2, HEARD_STALE = 4, HEARD_INVALID = 8, HEARD_ERROR = 16 };

/* A result offered: the lease it reports, and every answer it got (HEARD_ bits). */
typedef struct {
    int64_t task_id, lease;
    int pairs;
    uint8_t heard;
} Offered;

typedef struct {
    void *sock;
    double sent_at;                  /* of the request in flight, 0: none */
    int waiting;                     /* what that request is (WAIT_) */
    double next_at;                  /* when to go next (paced cycle, a retry after an error), 0: not waiting */
    double planned;                  /* paced: when the current cycle was due */
    bool welcomed;                   /* paced: its cycles began */
    bool hello_ok;                   /* its connection said hello */
    long result;                     /* its result not yet answered: an index of offered, -1 none */
    double served_at;                /* its first result accepted after the storm, 0 none yet */
    double beat_at;                  /* --hold: its next heartbeat of the task it holds, 0 none */
    unsigned heard, sent;            /* messages received and sent on its connection */
    int last_type;                   /* of the last message received (XQF_MSG_), 0 none */
    double last_at;                  /* when it was received */
    unsigned audits_ok, stale;       /* replay audits accepted; results answered stale */
} Sim;

/* The simulated workers and what they measure. */
typedef struct {
    Sim *sims;
    zmq_pollitem_t *items;
    int workers;
    void *ctx;
    const char *endpoint;
    int generation;                  /* of the names: 0 sim-I, then sim-G-I with --new-names */
    int first;                       /* the I of the first worker's name (one process of a fleet: --first) */
    bool new_names;
    Offered *offered;
    size_t noffered, offered_cap;
    PackBuf games;                   /* the records every result of one pair carries */
    XqfBuf buf;
    Rng rng;                         /* the paced cycles' first offsets */
    double interval;                 /* paced: seconds between a worker's cycles, 0 closed loop */
    bool retry;                      /* re-send unanswered requests, as a real worker (storms) */
    bool draining;                   /* no new task requests */
    long send_failed;                /* requests ZeroMQ did not take (no connection then) */
    long handed_back;                /* tasks not asked for (late answers), handed back */
    double hold;                     /* seconds a task is held (heartbeated) before its result, 0 none */
    double beat;                     /* the heartbeat interval the welcome gave */
    long beats, beats_refused;       /* heartbeats sent, and answered otherwise than ok (the lease lost) */
    double *rtt;                     /* the wave's round trips */
    size_t nrtt, cap;
    long accepted, duplicate, other, requests;
    long audits_accepted;            /* replay audits answered accepted (not in the run's counts) */
    double storm_at;                 /* 0 before the storm */
    long *bins;                      /* results accepted per STORM_BIN_S after the storm */
    size_t nbins;
} Gen;

enum { HELLO_RETRY_S = 5, REQUEST_RETRY_S = 5, RESULT_RETRY_S = 2, ERROR_RETRY_S = 1 };
#define STORM_BIN_S 0.1
#define STORM_MORE_S 60.0                /* the wave after a storm goes on this long at most for the last workers */

static double now_s(void) { return (double)clock_now_us() / 1e6; }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_offered(const void *a, const void *b)
{
    return cmp_i64(&((const Offered *)a)->lease, &((const Offered *)b)->lease);
}

/*
 * A request, in flight from now even when ZeroMQ could not take it (no
 * connection at that moment: one dropped and being made again): it is
 * then lost as a message on a dropped connection is, and sent again when
 * overdue (storms), as a real worker does.
 */
static void send(Gen *g, Sim *s, const XqfMsg *m, int waiting)
{
    if (xqf_msg_encode(m, &g->buf) == 0 && zmq_send(s->sock, g->buf.data, g->buf.len, ZMQ_DONTWAIT) >= 0)
        s->sent++;
    else
        g->send_failed++;
    s->sent_at = now_s();
    s->waiting = waiting;
}

/* Sends what is due: hello on a new connection, else its unanswered result, else a task request (not when draining). */
static void go(Gen *g, Sim *s)
{
    XqfMsg m;
    if (!s->hello_ok) {
        int i = g->first + (int)(s - g->sims);
        xqf_msg_init(&m, XQF_MSG_HELLO);
        if (g->generation > 0)
            snprintf(m.u.hello.name, sizeof m.u.hello.name, "sim-%d-%d", g->generation, i);
        else
            snprintf(m.u.hello.name, sizeof m.u.hello.name, "sim-%d", i);
        snprintf(m.u.hello.build, sizeof m.u.hello.build, "loadgen");
        m.u.hello.cores = m.u.hello.concurrency = 1;
        send(g, s, &m, WAIT_HELLO);
    } else if (s->result >= 0) {
        const Offered *o = &g->offered[s->result];
        s->beat_at = 0;
        xqf_msg_init(&m, XQF_MSG_RESULT);
        XqfMsg_result *r = &m.u.result;
        r->task_id = (uint64_t)o->task_id;
        r->lease = (uint64_t)o->lease;
        r->pairs = o->pairs;
        r->draws = 2 * o->pairs;
        r->penta.count = 5;
        r->penta.v[2] = o->pairs;
        r->reasons.count = 5;
        r->reasons.v[4] = 2 * o->pairs;
        if (o->pairs == 1) {             /* the message never owns them: not freed */
            r->games.data = g->games.data;
            r->games.len = (uint32_t)g->games.len;
        }
        send(g, s, &m, WAIT_RESULT);
    } else if (!g->draining) {
        xqf_msg_init(&m, XQF_MSG_TASK_REQUEST);
        send(g, s, &m, WAIT_REQUEST);
    } else {
        s->sent_at = 0;
        s->waiting = WAIT_NONE;
    }
}

/* A heartbeat of the task s holds: its answer is not waited for (the request in flight is left as it is). */
static void heartbeat(Gen *g, Sim *s, double t)
{
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_HEARTBEAT);
    m.u.heartbeat.task_id = (uint64_t)g->offered[s->result].task_id;
    m.u.heartbeat.lease = (uint64_t)g->offered[s->result].lease;
    if (xqf_msg_encode(&m, &g->buf) == 0 && zmq_send(s->sock, g->buf.data, g->buf.len, ZMQ_DONTWAIT) >= 0)
        g->beats++;
    s->beat_at = t + g->beat;
}

/* A new connection for worker i (its unanswered result kept: re-sent after hello). 0 or -1. */
static int sim_open(Gen *g, int i)
{
    Sim *s = &g->sims[i];
    int linger = 0;
    *s = (Sim){ .result = s->result };
    if (!(s->sock = zmq_socket(g->ctx, ZMQ_DEALER))) {
        fprintf(stderr, "xqf-loadgen: socket %d: %s (raise ulimit -n)\n", i, zmq_strerror(zmq_errno()));
        return -1;
    }
    zmq_setsockopt(s->sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_connect(s->sock, g->endpoint);
    g->items[i] = (zmq_pollitem_t){ s->sock, 0, ZMQ_POLLIN, 0 };
    go(g, s);
    return 0;
}

/* Paced: the next cycle one interval after the previous was due (the first spread over one interval). */
static void pace(Gen *g, Sim *s, double t)
{
    s->planned = s->welcomed ? s->planned + g->interval : t + g->interval * rng_unit(&g->rng);
    s->next_at = s->planned > t ? s->planned : t;
    s->welcomed = true;
}

static uint8_t heard_of(const char *status)
{
    return strcmp(status, "accepted") == 0    ? HEARD_ACCEPTED
           : strcmp(status, "duplicate") == 0 ? HEARD_DUPLICATE
           : strcmp(status, "stale") == 0     ? HEARD_STALE
           : strcmp(status, "invalid") == 0   ? HEARD_INVALID
                                              : HEARD_ERROR;
}

/* One message to worker s at t. */
static void on_message(Gen *g, Sim *s, const XqfMsg *in, double t, bool measuring)
{
    s->heard++;
    s->last_type = (int)in->type;
    s->last_at = t;
    /*
     * A heartbeat's answer carries no pairs (a result's, its own: at least
     * one); told apart by that, not by whether a heartbeat is due, since
     * the answer to the last heartbeat may come after the result was sent.
     */
    if (in->type == XQF_MSG_ACK && in->u.ack.pairs == 0 && s->result >= 0 &&
        g->offered[s->result].lease == (int64_t)in->u.ack.lease) {
        g->beats_refused += strcmp(in->u.ack.status, "ok") != 0;   /* a heartbeat's answer */
        return;
    }
    if (in->type == XQF_MSG_ACK &&
        (s->waiting != WAIT_RESULT || s->result < 0 || g->offered[s->result].lease != (int64_t)in->u.ack.lease))
        return;                          /* the answer to a re-sent report answered already, or to a heartbeat */
    /*
     * A task while the worker holds one (the answer to a request it sent
     * again, the first answer having come after all) or drains: handed
     * back, as a real worker does with a late answer (its ack is ignored).
     * Not an answer to what it waits for: the result in flight still is.
     */
    if (in->type == XQF_MSG_TASK && (g->draining || s->result >= 0)) {
        XqfMsg m;
        xqf_msg_init(&m, XQF_MSG_HANDBACK);
        m.u.handback.task_id = in->u.task.task_id;
        m.u.handback.lease = in->u.task.lease;
        snprintf(m.u.handback.reason, sizeof m.u.handback.reason, "not asked for (a late answer)");
        if (xqf_msg_encode(&m, &g->buf) == 0 && zmq_send(s->sock, g->buf.data, g->buf.len, ZMQ_DONTWAIT) >= 0)
            g->handed_back++;
        return;
    }
    if (measuring && s->sent_at > 0 && g->nrtt < g->cap)
        g->rtt[g->nrtt++] = t - s->sent_at;
    g->requests += measuring;
    s->sent_at = 0;
    s->waiting = WAIT_NONE;
    switch (in->type) {
    case XQF_MSG_WELCOME:
        s->hello_ok = true;
        g->beat = (double)in->u.welcome.heartbeat_ms / 1000;
        if (g->interval > 0 && !s->welcomed && s->result < 0)
            pace(g, s, t);
        else
            go(g, s);
        return;
    case XQF_MSG_TASK:
        if (g->noffered == g->offered_cap) {
            size_t cap = g->offered_cap ? 2 * g->offered_cap : 1 << 16;
            Offered *v = realloc(g->offered, cap * sizeof *v);
            if (!v)
                return;
            g->offered = v;
            g->offered_cap = cap;
        }
        g->offered[g->noffered] = (Offered){ (int64_t)in->u.task.task_id, (int64_t)in->u.task.lease,
                                             (int)in->u.task.pairs, 0 };
        s->result = (long)g->noffered++;
        if (g->hold > 0) {               /* played for a while: heartbeats, then the result (go) */
            s->next_at = t + g->hold;
            s->beat_at = t + g->beat;
        } else {
            go(g, s);
        }
        return;
    case XQF_MSG_ACK: {
        uint8_t h = heard_of(in->u.ack.status);
        g->offered[s->result].heard |= h;
        bool audit = (g->offered[s->result].task_id & STORE_AUDIT_BIT) != 0;
        s->result = -1;
        s->audits_ok += h == HEARD_ACCEPTED && audit;
        s->stale += h == HEARD_STALE;
        if (h == HEARD_ACCEPTED && audit) {
            g->audits_accepted += measuring;   /* judged, not counted: not a result the run's books hold */
        } else if (h == HEARD_ACCEPTED) {
            g->accepted += measuring;
            if (g->storm_at > 0 && t >= g->storm_at) {
                size_t b = (size_t)((t - g->storm_at) / STORM_BIN_S);
                if (b < g->nbins)
                    g->bins[b]++;
                if (s->served_at == 0)
                    s->served_at = t;
            }
        } else if (h == HEARD_DUPLICATE) {
            g->duplicate += measuring;
        } else {
            g->other += measuring;
        }
        if (g->interval > 0)
            pace(g, s, t);
        else
            go(g, s);
        return;
    }
    case XQF_MSG_ERROR:
        g->other += measuring;
        if (in->u.error.code == XQF_ERR_NEED_HELLO) {
            s->hello_ok = false;         /* the coordinator restarted, or dropped this worker */
            go(g, s);
        } else {
            s->next_at = t + ERROR_RETRY_S;   /* a bound, the database: again a little later */
        }
        return;
    case XQF_MSG_IDLE:
    default:
        if (in->type != XQF_MSG_IDLE)
            g->other += measuring;
        go(g, s);
        return;
    }
}

/* Whether s waited too long for an answer (storms: the coordinator went away, or the connection did). */
static bool overdue(const Sim *s, double t)
{
    double limit = s->waiting == WAIT_RESULT ? RESULT_RETRY_S : s->waiting == WAIT_HELLO ? HELLO_RETRY_S : REQUEST_RETRY_S;
    return s->sent_at > 0 && t - s->sent_at > limit;
}

static bool all_served(const Gen *g)
{
    for (int i = 0; i < g->workers; i++)
        if (g->sims[i].served_at == 0)
            return false;
    return true;
}

static bool any_result_unanswered(const Gen *g)
{
    for (int i = 0; i < g->workers; i++)
        if (g->sims[i].result >= 0)
            return true;
    return false;
}

/*
 * The workers never served again after a storm, by what they wait for
 * and what they last heard (stderr, each process of a fleet its own):
 * where a recovery that does not end is stuck.
 */
static void stderr_unserved(const Gen *g)
{
    int never = 0, no_hello = 0, by_wait[4] = { 0 }, silent = 0, by_last[32] = { 0 };
    unsigned heard = 0, sent = 0, audits_ok = 0, stale = 0;
    double last = 0;
    for (int i = 0; i < g->workers; i++) {
        const Sim *s = &g->sims[i];
        if (s->served_at > 0)
            continue;
        never++;
        audits_ok += s->audits_ok;
        stale += s->stale;
        last += s->last_at > 0 ? s->last_at - g->storm_at : 0;
        no_hello += !s->hello_ok;
        by_wait[s->waiting & 3]++;
        silent += s->heard == 0;
        by_last[s->last_type & 31]++;
        heard += s->heard;
        sent += s->sent;
    }
    if (never == 0)
        return;
    fprintf(stderr, "xqf-loadgen: %d of %d workers never served again: %d without a welcome; waiting for nothing %d, "
            "a welcome %d, a task %d, a result's answer %d; %d heard nothing on their connection; %.1f messages "
            "sent and %.1f heard each (the process: %ld sends failed, %ld late tasks handed back); the last heard by "
            "type:", never, g->workers, no_hello, by_wait[WAIT_NONE], by_wait[WAIT_HELLO], by_wait[WAIT_REQUEST],
            by_wait[WAIT_RESULT], silent, (double)sent / never, (double)heard / never, g->send_failed, g->handed_back);
    for (int k = 1; k < 32; k++)
        if (by_last[k])
            fprintf(stderr, " %d: %d", k, by_last[k]);
    fprintf(stderr, "; %u audits accepted, %u results answered stale; the last heard %.1f s after the storm on average\n",
            audits_ok, stale, last / never);
}

/*
 * The workers' loop until `until`, measuring what is answered within
 * [from, to); when draining, it ends as soon as no result waits for its
 * answer.
 */
static void run_loop(Gen *g, double until, double from, double to)
{
    XqfMsg in;
    while (now_s() < until) {
        if (g->draining && !any_result_unanswered(g))
            return;
        double t = now_s(), wake = t + 0.1;
        for (int i = 0; i < g->workers; i++) {
            Sim *s = &g->sims[i];
            if (s->next_at > 0 && s->next_at <= t) {
                s->next_at = 0;
                go(g, s);
            } else if (s->next_at > 0 && s->next_at < wake) {
                wake = s->next_at;
            } else if (g->retry && overdue(s, t)) {
                go(g, s);
            }
            if (s->beat_at > 0 && s->beat_at <= t)
                heartbeat(g, s, t);
            if (s->beat_at > 0 && s->beat_at < wake)
                wake = s->beat_at;
        }
        if (zmq_poll(g->items, g->workers, (long)((wake - t) * 1000) + 1) < 0)
            break;
        t = now_s();
        bool measuring = t >= from && t < to;
        for (int i = 0; i < g->workers; i++) {
            if (!(g->items[i].revents & ZMQ_POLLIN))
                continue;
            zmq_msg_t part;
            zmq_msg_init(&part);
            if (zmq_msg_recv(&part, g->sims[i].sock, ZMQ_DONTWAIT) < 0) {
                zmq_msg_close(&part);
                continue;
            }
            XqfDecodeStatus st = xqf_msg_decode(zmq_msg_data(&part), zmq_msg_size(&part), &in, NULL, 0);
            zmq_msg_close(&part);
            if (st != XQF_DECODE_OK)
                continue;
            on_message(g, &g->sims[i], &in, t, measuring);
            xqf_msg_free(&in);
        }
    }
}

/* The resident memory of process pid in KB (VmRSS of /proc/PID/status), -1 when unknown. */
static long rss_kb(long pid)
{
    char path[64], line[256];
    long kb = -1;
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = pid > 0 ? fopen(path, "r") : NULL;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

/*
 * What one process (or a fleet of them, merged) measured.  A fleet's
 * figures are the union of its processes': counts added, round trips and
 * recovery times pooled before their percentiles are taken (a percentile
 * of percentiles is not one), the books checked once over every result
 * any of them offered.
 */
typedef struct {
    int workers;
    double rate, warmup, hold, beat;
    long pid;                            /* the coordinator's, 0: not watched */
    int64_t run;
} Fleet;

typedef struct {
    double seconds;
    long accepted, duplicate, other, requests, audits_accepted, beats, beats_refused;
    long rss_before, rss_after;
    double *rtt;
    size_t nrtt;
} Wave;

enum { STORM_SAME, STORM_NEW, STORM_RESTART, STORM_RESTART_ELSEWHERE };

typedef struct {
    int kind;                            /* STORM_ */
    int workers;
    double took;                         /* s from the storm until all were back (or the restart command ended) */
    long new_pid;                        /* STORM_RESTART: the restarted coordinator's */
    double *served;                      /* each worker's first result accepted after the storm (s; INFINITY: never) */
    size_t nserved;
    long *bins;                          /* results accepted per STORM_BIN_S after the storm */
    size_t nbins;
    double span;                         /* s measured after the storm */
} Storm;

/* The wave's figures out of g (its round trips still g's), g's counters emptied for the next. */
static Wave take_wave(Gen *g, double seconds, long pid, long rss_before)
{
    Wave w = { .seconds = seconds, .accepted = g->accepted, .duplicate = g->duplicate, .other = g->other,
               .requests = g->requests, .audits_accepted = g->audits_accepted, .beats = g->beats,
               .beats_refused = g->beats_refused, .rss_before = rss_before, .rss_after = rss_kb(pid),
               .rtt = g->rtt, .nrtt = g->nrtt };
    g->nrtt = 0;
    g->beats = g->beats_refused = 0;
    g->accepted = g->duplicate = g->other = g->requests = g->audits_accepted = 0;
    return w;
}

static void print_head(const Fleet *f)
{
    printf("simulated workers: %d, %s, after %.1f s warm-up", f->workers,
           f->rate > 0 ? "paced" : "closed loop (as fast as answered)", f->warmup);
    if (f->hold > 0)
        printf(", each task held %.1f s (heartbeats every %.2f s)", f->hold, f->beat);
    printf("\n");
    if (f->rate > 0)
        printf("offered: %.0f results per second\n", f->rate);
}

/* Prints a wave's figures (its round trips sorted in place). */
static void print_wave(const Fleet *f, Wave *w, const char *what)
{
    qsort(w->rtt, w->nrtt, sizeof *w->rtt, cmp_double);
    size_t n = w->nrtt;
    double p50 = n ? w->rtt[n / 2] : NAN, p99 = n ? w->rtt[(size_t)((double)n * 0.99)] : NAN,
           max = n ? w->rtt[n - 1] : NAN;
    printf("%s: measured %.1f s\n", what, w->seconds);
    printf("results committed: %.0f per second (%ld accepted; %ld duplicate; %ld other replies; "
           "%ld replay audits accepted, not counted)\n",
           (double)w->accepted / w->seconds, w->accepted, w->duplicate, w->other, w->audits_accepted);
    printf("requests answered: %.0f per second\n", (double)w->requests / w->seconds);
    printf("round trip: median %.2f ms, p99 %.2f ms, max %.2f ms (%zu samples)\n", p50 * 1e3, p99 * 1e3,
           max * 1e3, n);
    if (f->hold > 0)
        printf("heartbeats: %ld sent, %ld answered otherwise than ok (the lease was lost)\n", w->beats,
               w->beats_refused);
    if (f->pid > 0)
        printf("coordinator resident memory: %ld KB before, %ld KB after\n", w->rss_before, w->rss_after);
}

static void print_storm(const Storm *st)
{
    if (st->kind == STORM_RESTART)
        printf("storm: the coordinator restarted under %d connected workers (%.2f s; pid %ld)\n", st->workers,
               st->took, st->new_pid);
    else
        printf("storm: %d workers gone at once (no bye), %d back %.2f s later under %s names\n", st->workers,
               st->workers, st->took, st->kind == STORM_NEW ? "new" : "the same");
}

/*
 * Recovery: the time until 99 % of the workers had a result accepted, and
 * the results accepted in each second from the storm on (before_rate: the
 * wave's before it; paced, the first second with 99 % of the offered
 * rate).  Returns whether --check failed.
 */
static bool print_recovery(Storm *st, double before_rate, double rate, double check)
{
    size_t workers = st->nserved;
    int never = 0;
    for (size_t i = 0; i < workers; i++)
        never += isinf(st->served[i]);
    qsort(st->served, workers, sizeof *st->served, cmp_double);
    double p99_served = st->served[(size_t)ceil((double)workers * 0.99) - 1], all_served = st->served[workers - 1];
    printf("storm: served again: 99%% of the workers had a result accepted %.2f s after the storm "
           "(all: %.2f s; never: %d)\n", p99_served, all_served, never);
    long per_s = (long)lround(1 / STORM_BIN_S), window = 0;
    double rate_back = INFINITY;
    printf("storm: results accepted in each second after it (before: %.0f/s):", before_rate);
    for (size_t b = 0; b < st->nbins && (double)b * STORM_BIN_S < st->span; b++) {
        window += st->bins[b] - (b >= (size_t)per_s ? st->bins[b - (size_t)per_s] : 0);
        if (rate > 0 && rate_back == INFINITY && b + 1 >= (size_t)per_s && window >= 0.99 * rate)
            rate_back = (double)(b + 1) * STORM_BIN_S;
        if ((b + 1) % (size_t)per_s == 0)
            printf(" %ld", window);
    }
    printf("\n");
    if (rate > 0)
        printf("storm: results back: the first second with at least 99%% of the offered %.0f results accepted "
               "ended %.2f s after the storm\n", rate, rate_back);
    if (check > 0 && !(p99_served <= check)) {
        printf("FAIL: 99%% of the workers served again only after %.2f s (limit %.1f s)\n", p99_served, check);
        return true;
    }
    return false;
}

/*
 * The database's books against the answers: every lease that counted pairs
 * is one the workers offered, no task holds more pairs than it has, the
 * run's pairs are its results' and its games two a pair; each offered
 * result was counted (answered accepted or duplicate, or its answer lost
 * with a connection the storm dropped), or refused with a reason (stale,
 * invalid, an error), or lost without one.  Also the leases that expired.
 * offered: every result the fleet offered (sorted here).  Returns 0, 1
 * when something was counted twice, acknowledged and not counted, or lost
 * without a reason, -1 on a database error.
 */
static int ledger(Offered *offered, size_t noffered, Store *store, int64_t run)
{
    StoreLeases l;
    StoreAudit a;
    int64_t *tokens = NULL;
    int n = store_run_counted_leases(store, run, &tokens);
    if (n < 0 || store_run_leases(store, run, &l) != 0 || store_audit_run(store, run, &a) != 1) {
        fprintf(stderr, "xqf-loadgen: cannot read the run's books\n");
        free(tokens);
        return -1;
    }
    printf("leases: %lld given, %lld ended without their result (expired: a worker gone, or a heartbeat not heard "
           "in time; %lld tasks' last lease expired)\n",
           (long long)l.leases, (long long)l.requeued, (long long)l.expired_tasks);
    if (noffered > 0)
        qsort(offered, noffered, sizeof *offered, cmp_offered);
    long counted_answered = 0, counted_unanswered = 0, answered_not_counted = 0, refused = 0, lost = 0, unknown = 0;
    long audits = 0, audits_unanswered = 0;
    size_t k = 0;
    for (size_t i = 0; i < noffered; i++) {
        const Offered *o = &offered[i];
        if (o->task_id & STORE_AUDIT_BIT) {  /* a replay audit: judged against the first records, not counted */
            audits++;
            audits_unanswered += !o->heard;
            continue;
        }
        while (k < (size_t)n && tokens[k] < o->lease)
            unknown++, k++;
        bool counted = k < (size_t)n && tokens[k] == o->lease;
        k += counted;
        bool said_counted = o->heard & (HEARD_ACCEPTED | HEARD_DUPLICATE);
        if (counted && said_counted)
            counted_answered++;
        else if (counted)
            counted_unanswered++;
        else if (said_counted)
            answered_not_counted++;
        else if (o->heard)
            refused++;
        else
            lost++;
    }
    unknown += (long)((size_t)n - k);
    free(tokens);
    bool twice = l.tasks_over > 0 || a.run_pairs != a.result_pairs || a.task_pairs != a.result_pairs ||
                 a.stored_games != 2 * a.run_pairs || a.run_games != 2 * a.run_pairs;
    printf("results offered: %zu; counted %ld (answered accepted or duplicate %ld; its answer lost with its "
           "connection %ld: re-sent, a finished task's report is answered stale); refused with a reason %ld; "
           "lost without an answer %ld; replay audits %ld (judged, not counted; unanswered %ld)\n",
           noffered - (size_t)audits, counted_answered + counted_unanswered, counted_answered, counted_unanswered,
           refused, lost, audits, audits_unanswered);
    printf("database: %lld pairs counted (run %lld, tasks %lld, results %lld), %lld games (run %lld); tasks "
           "counted twice %lld; answered accepted but not counted %ld; counted but never offered %ld\n",
           (long long)a.result_pairs, (long long)a.run_pairs, (long long)a.task_pairs, (long long)a.result_pairs,
           (long long)a.stored_games, (long long)a.run_games, (long long)l.tasks_over, answered_not_counted, unknown);
    bool bad = twice || answered_not_counted > 0 || unknown > 0 || lost + audits_unanswered > 0;
    if (bad)
        printf("FAIL: %s\n", twice ? "something was counted twice" : lost > 0 ? "results lost without a reason"
                                                                         : "the answers and the database disagree");
    return bad ? 1 : 0;
}

/*
 * The figures file of one process of a fleet (--figures), read back by
 * --merge: text, one record a line, in the order they were measured:
 *   xqf-loadgen-figures 1
 *   fleet RUN WORKERS RATE WARMUP HOLD BEAT PID
 *   wave SECONDS ACCEPTED DUPLICATE OTHER REQUESTS AUDITS BEATS REFUSED RSS0 RSS1 N, then N round trips (s)
 *   storm KIND WORKERS TOOK NEW_PID
 *   recovery N NBINS SPAN, then N times served again (s, inf: never), then NBINS counts
 *   wave ... (after the storm)
 *   offered N, then N lines TASK LEASE PAIRS HEARD
 *   end
 * (%.17g: a double read back is the double written.)
 */
#define FIGURES_MAGIC "xqf-loadgen-figures 1"

static void fig_fleet(FILE *f, const Fleet *fl)
{
    fprintf(f, FIGURES_MAGIC "\nfleet %lld %d %.17g %.17g %.17g %.17g %ld\n", (long long)fl->run, fl->workers,
            fl->rate, fl->warmup, fl->hold, fl->beat, fl->pid);
}

static void fig_wave(FILE *f, const Wave *w)
{
    fprintf(f, "wave %.17g %ld %ld %ld %ld %ld %ld %ld %ld %ld %zu\n", w->seconds, w->accepted, w->duplicate,
            w->other, w->requests, w->audits_accepted, w->beats, w->beats_refused, w->rss_before, w->rss_after,
            w->nrtt);
    for (size_t i = 0; i < w->nrtt; i++)
        fprintf(f, "%.17g\n", w->rtt[i]);
}

static void fig_storm(FILE *f, const Storm *st)
{
    fprintf(f, "storm %d %d %.17g %ld\n", st->kind, st->workers, st->took, st->new_pid);
}

static void fig_recovery(FILE *f, const Storm *st)
{
    fprintf(f, "recovery %zu %zu %.17g\n", st->nserved, st->nbins, st->span);
    for (size_t i = 0; i < st->nserved; i++)
        fprintf(f, "%.17g\n", st->served[i]);
    for (size_t i = 0; i < st->nbins; i++)
        fprintf(f, "%ld\n", st->bins[i]);
}

static void fig_offered(FILE *f, const Offered *o, size_t n)
{
    fprintf(f, "offered %zu\n", n);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%lld %lld %d %u\n", (long long)o[i].task_id, (long long)o[i].lease, o[i].pairs, o[i].heard);
    fprintf(f, "end\n");
}

/* Grows *v (of *cap elements of size) to hold at least n. 0 or -1. */
static int grow(void **v, size_t *cap, size_t n, size_t size)
{
    if (n <= *cap)
        return 0;
    size_t c = *cap ? *cap : 1024;
    while (c < n)
        c *= 2;
    void *p = realloc(*v, c * size);
    if (!p)
        return -1;
    *v = p;
    *cap = c;
    return 0;
}

/* A fleet's figures merged from its processes' files. */
typedef struct {
    Fleet fleet;
    Wave waves[2];
    size_t wave_cap[2];
    int nwaves;
    bool storm;
    Storm st;
    size_t served_cap;
    Offered *offered;
    size_t noffered, offered_cap;
} Merged;

/* Adds one process's file to m. 0, or -1 after a message naming the file and what is wrong. */
static int merge_file(Merged *m, const char *path, bool first)
{
    FILE *f = fopen(path, "r");
    char word[32], magic[64];
    int rc = -1, nwaves = 0;
    bool ended = false, saw_storm = false;
    if (!f) {
        fprintf(stderr, "xqf-loadgen: error: --merge: cannot read %s\n", path);
        return -1;
    }
    if (!fgets(magic, sizeof magic, f) || strncmp(magic, FIGURES_MAGIC "\n", sizeof magic) != 0)
        goto bad;
    while (!ended && fscanf(f, "%31s", word) == 1) {
        if (strcmp(word, "fleet") == 0) {
            Fleet fl;
            long long run;
            if (fscanf(f, "%lld %d %lf %lf %lf %lf %ld", &run, &fl.workers, &fl.rate, &fl.warmup, &fl.hold, &fl.beat,
                       &fl.pid) != 7)
                goto bad;
            fl.run = run;
            if (first) {
                m->fleet = fl;
            } else {
                if (fl.run != m->fleet.run) {
                    fprintf(stderr, "xqf-loadgen: error: --merge: %s is of run %lld, the first file's of run %lld\n",
                            path, run, (long long)m->fleet.run);
                    goto out;
                }
                m->fleet.workers += fl.workers;
                m->fleet.rate += fl.rate;
            }
        } else if (strcmp(word, "wave") == 0) {
            Wave w;
            if (nwaves == 2 || fscanf(f, "%lf %ld %ld %ld %ld %ld %ld %ld %ld %ld %zu", &w.seconds, &w.accepted,
                                      &w.duplicate, &w.other, &w.requests, &w.audits_accepted, &w.beats,
                                      &w.beats_refused, &w.rss_before, &w.rss_after, &w.nrtt) != 11)
                goto bad;
            Wave *to = &m->waves[nwaves];
            if (!first && nwaves >= m->nwaves)
                goto bad;
            if (grow((void **)&to->rtt, &m->wave_cap[nwaves], to->nrtt + w.nrtt, sizeof *to->rtt) != 0)
                goto out;
            for (size_t i = 0; i < w.nrtt; i++)
                if (fscanf(f, "%lf", &to->rtt[to->nrtt++]) != 1)
                    goto bad;
            to->seconds = w.seconds > to->seconds ? w.seconds : to->seconds;
            to->accepted += w.accepted;
            to->duplicate += w.duplicate;
            to->other += w.other;
            to->requests += w.requests;
            to->audits_accepted += w.audits_accepted;
            to->beats += w.beats;
            to->beats_refused += w.beats_refused;
            if (first) {                 /* the memory: the first process's (the one that runs any restart) */
                to->rss_before = w.rss_before;
                to->rss_after = w.rss_after;
            }
            nwaves++;
            if (first)
                m->nwaves = nwaves;
        } else if (strcmp(word, "storm") == 0) {
            Storm st;
            if (fscanf(f, "%d %d %lf %ld", &st.kind, &st.workers, &st.took, &st.new_pid) != 4 ||
                st.kind < STORM_SAME || st.kind > STORM_RESTART_ELSEWHERE || saw_storm || (!first && !m->storm))
                goto bad;
            if (first && st.kind == STORM_RESTART_ELSEWHERE) {
                fprintf(stderr, "xqf-loadgen: error: --merge: the first file must be the process that ran the "
                                "restart (--restart), not %s\n", path);
                goto out;
            }
            if (!first && st.kind != (m->st.kind == STORM_RESTART ? STORM_RESTART_ELSEWHERE : m->st.kind))
                goto bad;
            if (first) {
                m->st.kind = st.kind;
                m->st.new_pid = st.new_pid;
            }
            m->st.took = st.took > m->st.took ? st.took : m->st.took;
            m->storm = saw_storm = true;
            m->st.workers += st.workers;
        } else if (strcmp(word, "recovery") == 0) {
            size_t ns, nb;
            double span;
            if (!m->storm || fscanf(f, "%zu %zu %lf", &ns, &nb, &span) != 3 || (!first && nb != m->st.nbins))
                goto bad;
            if (grow((void **)&m->st.served, &m->served_cap, m->st.nserved + ns, sizeof *m->st.served) != 0)
                goto out;
            for (size_t i = 0; i < ns; i++)
                if (fscanf(f, "%lf", &m->st.served[m->st.nserved++]) != 1)
                    goto bad;
            if (first && !(m->st.bins = calloc(nb ? nb : 1, sizeof *m->st.bins)))
                goto out;
            m->st.nbins = nb;
            for (size_t i = 0; i < nb; i++) {
                long c;
                if (fscanf(f, "%ld", &c) != 1)
                    goto bad;
                m->st.bins[i] += c;
            }
            m->st.span = span > m->st.span ? span : m->st.span;
        } else if (strcmp(word, "offered") == 0) {
            size_t n;
            if (fscanf(f, "%zu", &n) != 1)
                goto bad;
            if (grow((void **)&m->offered, &m->offered_cap, m->noffered + n, sizeof *m->offered) != 0)
                goto out;
            for (size_t i = 0; i < n; i++) {
                long long task, lease;
                unsigned heard;
                Offered *o = &m->offered[m->noffered++];
                if (fscanf(f, "%lld %lld %d %u", &task, &lease, &o->pairs, &heard) != 4)
                    goto bad;
                o->task_id = task;
                o->lease = lease;
                o->heard = (uint8_t)heard;
            }
        } else if (strcmp(word, "end") == 0) {
            ended = true;
        } else {
            goto bad;
        }
    }
    if (!ended || nwaves != m->nwaves || saw_storm != m->storm)
        goto bad;
    rc = 0;
    goto out;
bad:
    fprintf(stderr, "xqf-loadgen: error: --merge: %s is not a complete figures file of the same fleet "
                    "(xqf-loadgen --figures; did that process end?)\n", path);
out:
    fclose(f);
    return rc;
}

/* --merge: the fleet's figures, in the format of one process's, and its books checked once over them all. */
static int merge(Store *store, const char *const *paths, int n, double check)
{
    Merged m = { 0 };
    int rc = 1;
    for (int i = 0; i < n; i++)
        if (merge_file(&m, paths[i], i == 0) != 0)
            goto out;
    if (m.nwaves < 1 || (m.storm && (m.nwaves != 2 || m.st.nserved == 0))) {
        fprintf(stderr, "xqf-loadgen: error: --merge: the files hold no complete measurement\n");
        goto out;
    }
    print_head(&m.fleet);
    print_wave(&m.fleet, &m.waves[0], m.storm ? "before the storm" : "the wave");
    bool failed = false;
    if (m.storm) {
        double before_rate = (double)m.waves[0].accepted / m.waves[0].seconds;
        print_storm(&m.st);
        print_wave(&m.fleet, &m.waves[1], "after the storm");
        failed = print_recovery(&m.st, before_rate, m.fleet.rate, check);
    }
    if (store_connect(store) != 0) {
        fprintf(stderr, "xqf-loadgen: cannot connect to the database\n");
        goto out;
    }
    failed |= ledger(m.offered, m.noffered, store, m.fleet.run) != 0 && check > 0;
    store_finish_run(store, m.fleet.run, "stopped", "loadgen done");
    if (check > 0)
        printf("%s\n", failed ? "FAIL" : "PASS");
    rc = failed ? 1 : 0;
out:
    for (int w = 0; w < 2; w++)
        free(m.waves[w].rtt);
    free(m.st.served);
    free(m.st.bins);
    free(m.offered);
    return rc;
}

static const OptSpec OPTIONS[] = {
    { "--db", OPT_TEXT, "CONNINFO", NULL, .help = "libpq connection string (default: $XQF_DB)" },
    { "--connect", OPT_TEXT, "ENDPOINT", "tcp://127.0.0.1:5555", .help = "the coordinator" },
    { "--workers", OPT_INT, "N", "1000", .imin = 1, .imax = 20000, .help = "simulated workers" },
    { "--rate", OPT_REAL, "R", "0", .rmin = 0, .rmax = 1e9, .help = "results per second in all (0: closed loop)" },
    { "--seconds", OPT_REAL, "S", "10", .rmin = 0.001, .rmax = 86400, .help = "how long to measure" },
    { "--warmup", OPT_REAL, "S", "3", .rmin = 0, .rmax = 86400, .help = "before measuring" },
    { "--games", OPT_INT, "PLIES", "0", .imin = 0, .imax = 1000, .help = "each result's 2 game records have PLIES moves" },
    { "--hold", OPT_REAL, "S", "0", .rmin = 0, .rmax = 86400, .help = "hold each task S s, heartbeating it, before its result" },
    { "--pid", OPT_INT, "PID", "0", .imin = 0, .imax = INT64_C(1) << 31, .help = "the coordinator's: its resident memory before and after each wave" },
    { "--storm", OPT_FLAG, NULL, NULL, .help = "then every worker gone at once (no bye) and as many back at once" },
    { "--new-names", OPT_FLAG, NULL, NULL, .help = "with --storm: the workers back under new names" },
    { "--gone", OPT_REAL, "S", "0", .rmin = 0, .rmax = 86400, .help = "with --storm: seconds before they are back" },
    { "--restart", OPT_TEXT, "COMMAND", NULL, .help = "a storm that restarts the coordinator: sh -c COMMAND, its last line the new pid" },
    { "--check", OPT_REAL, "S", "0", .rmin = 0, .rmax = 86400, .help = "with a storm: exit 1 unless served again within S s, nothing lost or counted twice" },
    { "--create-only", OPT_FLAG, NULL, NULL, .help = "create a real SPRT run instead, print its id" },
    { "--book", OPT_TEXT, "FILE", NULL, .help = "with --create-only: its openings" },
    { "--pairs", OPT_INT, "P", "20", .imin = 1, .imax = INT64_C(1) << 40, .help = "with --create-only: game pairs" },
    { "--nodes", OPT_INT, "N", "20000", .imin = 1, .imax = INT64_C(1) << 40, .help = "with --create-only: nodes per move" },
    { "--pairs-per-task", OPT_INT, "K", "4", .imin = 1, .imax = 1024, .help = "with --create-only: pairs per task" },
    { "--new-run", OPT_FLAG, NULL, NULL, .help = "create the simulated workers' run for a fleet of processes (--run), print its id" },
    { "--run", OPT_INT, "ID", NULL, .imin = 1, .imax = INT64_MAX, .help = "a fleet's process: the run from --new-run (not created, not ended)" },
    { "--first", OPT_INT, "I", "0", .imin = 0, .imax = 1000000, .help = "the number in the first worker's name (sim-I): a fleet's processes, each its own" },
    { "--start-at", OPT_INT, "MS", NULL, .imin = 1, .imax = INT64_MAX, .help = "the warm-up begins at this time (ms since the epoch), the fleet's storm with it" },
    { "--restart-elsewhere", OPT_FLAG, NULL, NULL, .help = "a storm: another process of the fleet restarts the coordinator (its --restart)" },
    { "--figures", OPT_TEXT, "FILE", NULL, .help = "write the figures and the results' answers to FILE for --merge, print none" },
    { "--merge", OPT_FLAG, NULL, NULL, .help = "print a fleet's figures from its FILES (the first: the one with --restart) and check its books" },
    OPTS_END,
};

static const OptTable TABLE = {
    .program = "xqf-loadgen", .spec = OPTIONS, .max_positional = OPTS_POSITIONAL_MAX,
    .usage = "Usage: xqf-loadgen --db CONNINFO [--connect ENDPOINT] [--workers N] [--rate R] [--seconds S]\n"
             "                   [--warmup S] [--games PLIES] [--hold S] [--pid PID]\n"
             "                   [--storm [--new-names] [--gone S] | --restart COMMAND] [--check S]\n"
             "       xqf-loadgen --create-only --book FILE [--pairs P] [--nodes N] [--pairs-per-task K]\n"
             "       xqf-loadgen --new-run --db CONNINFO\n"
             "       xqf-loadgen ... --run ID --first I --start-at MS [--restart-elsewhere] --figures FILE\n"
             "       xqf-loadgen --merge --db CONNINFO [--check S] FILE...\n"
             "\n"
             "Simulated workers against a coordinator (ops/bench load), or a real SPRT run\n"
             "for a real worker (--create-only).  A storm (--storm, --restart) follows the\n"
             "measured wave with a second one of --seconds from the storm on.  At the end\n"
             "every result's answer is awaited and the database's counts checked against\n"
             "the answers.\n"
             "\n"
             "A fleet too big for one process's open files (about 2 a worker): P processes\n"
             "on one run (--new-run, then --run), each naming its workers from its own\n"
             "--first, all with the same --start-at (their waves and storm at the same\n"
             "moments), each writing its --figures; --merge then prints the fleet's\n"
             "figures as one process prints its own (round trips and recovery times\n"
             "pooled, not averaged) and checks the books once over every result offered.\n",
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

/* Sleeps until now_s() reaches t. */
static void sleep_until(double t)
{
    double d = t - now_s();
    if (d > 0)
        nanosleep(&(struct timespec){ (time_t)d, (long)((d - floor(d)) * 1e9) }, NULL);
}

int main(int argc, char **argv)
{
    Opts o;
    int rc = opts_parse(&o, &TABLE, argc - 1, argv + 1);
    if (rc != OPTS_OK)
        return rc == OPTS_HELP ? 0 : 2;
    const char *db = opts_given(&o, "--db") ? opts_text(&o, "--db") : getenv("XQF_DB");
    const char *ep = opts_text(&o, "--connect"), *book_path = opts_text(&o, "--book");
    const char *figures = opts_text(&o, "--figures"), *restart = opts_text(&o, "--restart");
    int workers = (int)opts_int(&o, "--workers");
    double seconds = opts_real(&o, "--seconds"), warmup = opts_real(&o, "--warmup"), rate = opts_real(&o, "--rate");
    double check = opts_real(&o, "--check"), gone = opts_real(&o, "--gone");
    bool create_only = opts_given(&o, "--create-only"), new_run = opts_given(&o, "--new-run");
    bool elsewhere = opts_given(&o, "--restart-elsewhere"), joined = opts_given(&o, "--run");
    bool storm = opts_given(&o, "--storm") || restart || elsewhere;
    if (!db)
        return opts_error(TABLE.program, "give --db CONNINFO or set XQF_DB"), 2;
    if (create_only && !book_path)
        return opts_error(TABLE.program, "--create-only needs --book FILE"), 2;
    if (opts_given(&o, "--merge") != (o.npositional > 0))
        return opts_error(TABLE.program, o.npositional > 0 ? "FILES are read only with --merge"
                                                           : "--merge needs the fleet's figures FILES"), 2;
    if ((opts_given(&o, "--storm") != 0) + (restart != NULL) + elsewhere > 1)
        return opts_error(TABLE.program, "give one of --storm, --restart COMMAND, --restart-elsewhere"), 2;
    if (figures && check > 0)
        return opts_error(TABLE.program, "--check is --merge's with --figures (a process sees only its own results)"), 2;
    if (elsewhere && !opts_given(&o, "--start-at"))
        return opts_error(TABLE.program, "--restart-elsewhere needs --start-at MS (the fleet's storm time)"), 2;
    xqf_log_init("loadgen");
    Store *store = store_new(db);
    if (!store)
        return 1;
    if (opts_given(&o, "--merge")) {
        rc = merge(store, o.positional, o.npositional, check);
        store_destroy(&store);
        return rc;
    }
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
    int64_t run = joined ? opts_int(&o, "--run") : 0;
    if (store_connect(store) != 0 || (!joined && store_create_sprt(store, &spec, &run) != 0)) {
        fprintf(stderr, "xqf-loadgen: cannot create the run\n");
        return 1;
    }
    for (int i = 0; i < n; i++)
        free(real[i]);
    free(real);
    book_destroy(&real_book);
    if (create_only || new_run) {
        printf("%lld\n", (long long)run);
        store_destroy(&store);
        return 0;
    }
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
    FILE *fig = NULL;
    if (figures && !(fig = fopen(figures, "w"))) {
        fprintf(stderr, "xqf-loadgen: error: --figures: cannot write %s\n", figures);
        return 2;
    }
    long pid = (long)opts_int(&o, "--pid");
    Gen g = { .workers = workers, .endpoint = ep, .new_names = opts_given(&o, "--new-names"), .games = games,
              .interval = rate > 0 ? workers / rate : 0, .retry = storm, .cap = 1 << 22,
              .hold = opts_real(&o, "--hold"), .first = (int)opts_int(&o, "--first") };
    rng_seed(&g.rng, 1 + (uint64_t)g.first);   /* a fleet's processes pace their workers apart */
    g.ctx = zmq_ctx_new();
    zmq_ctx_set(g.ctx, ZMQ_MAX_SOCKETS, 2 * workers + 64);   /* a storm's closed sockets linger a moment */
    g.sims = calloc((size_t)workers, sizeof *g.sims);
    g.items = calloc((size_t)workers, sizeof *g.items);
    g.rtt = malloc(g.cap * sizeof *g.rtt);
    if (!g.sims || !g.items || !g.rtt)
        return 1;
    long rss0 = rss_kb(pid);
    for (int i = 0; i < workers; i++) {
        g.sims[i].result = -1;
        if (sim_open(&g, i) != 0)
            return 1;
    }
    double start = now_s();
    if (opts_given(&o, "--start-at")) {
        /* the fleet's shared moment (the wall clock's), on this process's monotonic clock */
        struct timespec wall;
        clock_gettime(CLOCK_REALTIME, &wall);
        start += (double)opts_int(&o, "--start-at") / 1e3 - ((double)wall.tv_sec + (double)wall.tv_nsec / 1e9);
        if (now_s() > start + warmup)
            fprintf(stderr, "xqf-loadgen: warning: --start-at: %.2f s late, past the warm-up\n", now_s() - start);
    }
    double measure_from = start + warmup, end = measure_from + seconds;
    run_loop(&g, end, measure_from, end);
    Fleet fleet = { .workers = workers, .rate = rate, .warmup = warmup, .hold = g.hold, .beat = g.beat, .pid = pid,
                    .run = run };
    double before_rate = (double)g.accepted / seconds;
    Wave w = take_wave(&g, seconds, pid, rss0);
    if (fig) {
        fig_fleet(fig, &fleet);
        fig_wave(fig, &w);
    } else {
        print_head(&fleet);
        print_wave(&fleet, &w, storm ? "before the storm" : "the wave");
    }
    bool failed = false;
    if (storm) {
        long rss1 = rss_kb(pid);
        Storm st = { .workers = workers };
        st.nbins = (size_t)((gone + seconds + STORM_MORE_S) / STORM_BIN_S) + 1;
        if (!(g.bins = calloc(st.nbins, sizeof *g.bins)))
            return 1;
        g.nbins = st.nbins;
        /* a fleet's storm at its shared moment (the end of the measured wave), not at each one's own */
        g.storm_at = opts_given(&o, "--start-at") ? end : now_s();
        if (restart) {
            /* the workers stay: the coordinator goes; its new pid is the command's last line */
            FILE *f = popen(restart, "r");
            char line[256];
            long new_pid = 0;
            while (f && fgets(line, sizeof line, f))
                new_pid = strtol(line, NULL, 10) > 0 ? strtol(line, NULL, 10) : new_pid;
            if (!f || pclose(f) != 0) {
                fprintf(stderr, "xqf-loadgen: the restart command failed\n");
                return 1;
            }
            st = (Storm){ .kind = STORM_RESTART, .workers = workers, .took = now_s() - g.storm_at, .new_pid = new_pid,
                          .nbins = st.nbins };
            pid = new_pid;
            rss1 = rss_kb(pid);
        } else if (elsewhere) {
            st.kind = STORM_RESTART_ELSEWHERE;   /* the workers stay, and find out as real ones do */
        } else {
            for (int i = 0; i < workers; i++)
                zmq_close(g.sims[i].sock);   /* linger 0: the connection drops, no bye */
            sleep_until(g.storm_at + gone);
            if (g.new_names)
                g.generation++;
            for (int i = 0; i < workers; i++)
                if (sim_open(&g, i) != 0)
                    return 1;
            st.kind = g.new_names ? STORM_NEW : STORM_SAME;
            st.took = now_s() - g.storm_at;
        }
        if (fig)
            fig_storm(fig, &st);
        else
            print_storm(&st);
        fflush(stdout);
        /* the wave goes on (up to STORM_MORE_S more) until every worker was served again */
        double until = g.storm_at + gone + seconds, last = until + STORM_MORE_S;
        run_loop(&g, until, g.storm_at, last);
        while (!all_served(&g) && now_s() < last) {
            until = now_s() + 0.5 < last ? now_s() + 0.5 : last;
            run_loop(&g, until, g.storm_at, last);
        }
        st.span = until - g.storm_at;
        w = take_wave(&g, st.span, pid, rss1);
        if (!(st.served = malloc((size_t)workers * sizeof *st.served)))
            return 1;
        st.nserved = (size_t)workers;
        for (int i = 0; i < workers; i++)
            st.served[i] = g.sims[i].served_at > 0 ? g.sims[i].served_at - g.storm_at : INFINITY;
        stderr_unserved(&g);
        st.bins = g.bins;
        if (fig) {
            fig_wave(fig, &w);
            fig_recovery(fig, &st);
        } else {
            print_wave(&fleet, &w, "after the storm");
            failed = print_recovery(&st, before_rate, rate, check);
        }
        free(st.served);
    }
    /* every result offered (or held) answered before the books are read */
    g.draining = true;
    /* a task held (--hold) is cut short: its result goes now, not after the 30 s this waits */
    for (int i = 0; i < g.workers; i++)
        if (g.sims[i].result >= 0 && g.sims[i].next_at > 0)
            g.sims[i].next_at = now_s();
    run_loop(&g, now_s() + 30, 0, 0);
    if (fig) {
        fig_offered(fig, g.offered, g.noffered);
        if (fclose(fig) != 0) {
            fprintf(stderr, "xqf-loadgen: error: --figures: cannot write %s\n", figures);
            failed = true;
        }
    } else {
        failed |= ledger(g.offered, g.noffered, store, run) != 0 && check > 0;
    }
    if (!joined)
        store_finish_run(store, run, "stopped", "loadgen done");
    for (int i = 0; i < workers; i++)
        zmq_close(g.sims[i].sock);
    zmq_ctx_term(g.ctx);
    store_destroy(&store);
    free(g.sims);
    free(g.items);
    free(g.rtt);
    free(g.bins);
    free(g.offered);
    xqf_buf_free(&g.buf);
    pack_buf_free(&g.games);
    if (check > 0)
        printf("%s\n", failed ? "FAIL" : "PASS");
    return failed ? 1 : 0;
}

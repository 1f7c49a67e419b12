/*
 * xqf-worker: plays tasks of the coordinator's runs and reports their
 * results.
 *
 *   xqf-worker [--connect ENDPOINT] [--name NAME] [--concurrency N]
 *              [--curve-secret FILE --server-key FILE.pub]
 *
 * With --curve-secret (this worker's key pair, from xqf-keys new) and
 * --server-key (the coordinator's public key) the connection uses
 * ZeroMQ's CURVE: encrypted, and the coordinator lets the worker in only
 * if its public key is in its allow-list (worker_transport.h).
 *
 * The worker plays N games side by side (default: online cores) on a pool
 * of N game threads (task.h) that take the games of the tasks it holds,
 * oldest task first, so a task's pairs are spread over every thread.  It
 * holds tasks in slots (up to 2N + 1) and asks for one more, one request
 * at a time, whenever fewer than N games are left to hand out: the next
 * task is there before the current one's last games end, and no thread
 * waits on the network.  Each held task's cumulative counts are reported
 * after every pair, so that a report repeated or lost changes nothing.
 * The main thread alone owns the socket: game threads wake it through a
 * pipe.  Timers re-send what is not answered (results, requests, hello),
 * heartbeat the tasks (queued ones too), and say hello again when the
 * coordinator has been silent (it may have restarted).
 *
 * Build id (sent in hello, checked against a run's required build):
 * "xqf-<bench nodes at depth 5>-<hash of the default parameters>", computed
 * at start (0.2 s): the search's signature at a small depth and the
 * compiled-in parameters (a tuned build has other defaults).
 *
 * SIGTERM/SIGINT: the running games are abandoned, the complete pairs
 * reported, the tasks handed back, then bye.  Exit status 0, 1 on failure,
 * 2 on bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "builds.h"
#include "clock.h"
#include "codec.h"
#include "log.h"
#include "params.h"
#include "task.h"
#include "worker_transport.h"

enum {
    MAX_THREADS = 256,
    MAX_SLOTS = 2 * MAX_THREADS + 1,
    REQUEST_TIMEOUT_MS = 5000,       /* a task_request unanswered this long is re-sent */
    RESEND_MS = 2000,                /* an unacknowledged result is re-sent after this */
    HELLO_RETRY_MS = 10,             /* a hello that could not go out is tried again after this */
    HELLO_BACKOFF_MIN_MS = 500,
    HELLO_BACKOFF_MAX_MS = 10000,
    SILENCE_MS = 15000,              /* nothing heard this long: hello again */
    SHUTDOWN_MS = 5000,              /* at most this long to hand back at SIGTERM */
    BUILD_DEPTH = 5
};

typedef enum { SLOT_IDLE, SLOT_REQUESTED, SLOT_FETCHING, SLOT_PLAYING, SLOT_STOPPING } SlotState;

/* A task held (or asked for): the slot number is echoed by the coordinator. */
typedef struct {
    SlotState state;
    Task *task;
    uint64_t task_id, lease;
    int64_t pairs;                   /* of the task */
    TaskCounts sent;                 /* last reported */
    int64_t acked;                   /* pairs the coordinator confirmed */
    int64_t since_ms;                /* request sent / last contact about the task */
    bool handback;                   /* hand back once its games are done */
    bool lease_gone;                 /* told to stop: nothing more to report */
    XqfMsg pending;                  /* SLOT_FETCHING: the task, waiting for its engine builds */
} Slot;

typedef struct {
    WorkerTransport *t;
    char name[XQF_NAME_MAX + 1];
    char build[XQF_NAME_MAX + 1];
    int cores, threads, nslots;
    Slot slots[MAX_SLOTS];
    TaskPool *pool;
    int64_t next_request_ms;         /* no task request before (after an idle or a refusal) */
    bool welcomed;
    int64_t hello_ms, hello_backoff, heard_ms, heartbeat_ms;
    int pipe_fd[2];
    BuildCache *builds;              /* engine builds of the tasks' players (builds.h) */
} Worker;

static volatile sig_atomic_t stop_flag = 0;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

/* Says hello; false when it could not go out (no connection yet: ZMQ_IMMEDIATE). */
static bool send_hello(Worker *w, int64_t now)
{
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_HELLO);
    snprintf(m.u.hello.name, sizeof m.u.hello.name, "%s", w->name);
    snprintf(m.u.hello.build, sizeof m.u.hello.build, "%s", w->build);
    m.u.hello.cores = (uint64_t)w->cores;
    m.u.hello.concurrency = (uint64_t)w->threads;
    w->hello_ms = now;
    return wt_send(w->t, &m) == 0;
}

static void send_result(Worker *w, Slot *s, const TaskCounts *c, int64_t now)
{
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_RESULT);
    XqfMsg_result *r = &m.u.result;
    r->task_id = s->task_id;
    r->lease = s->lease;
    r->pairs = c->pairs;
    r->wins = c->wins;
    r->draws = c->draws;
    r->losses = c->losses;
    r->penta.count = 5;
    memcpy(r->penta.v, c->penta, sizeof c->penta);
    r->reasons.count = GAME_REASONS;
    memcpy(r->reasons.v, c->reasons, sizeof c->reasons);
    wt_send(w->t, &m);
    s->sent = *c;
    s->since_ms = now;
}

static void send_task_msg(Worker *w, XqfMsgType type, uint64_t task, uint64_t lease, bool refused,
                          const char *reason)
{
    XqfMsg m;
    xqf_msg_init(&m, type);
    if (type == XQF_MSG_HEARTBEAT) {
        m.u.heartbeat.task_id = task;
        m.u.heartbeat.lease = lease;
    } else {
        m.u.handback.task_id = task;
        m.u.handback.lease = lease;
        m.u.handback.refused = refused;
        snprintf(m.u.handback.reason, sizeof m.u.handback.reason, "%s", reason);
    }
    wt_send(w->t, &m);
}

static Slot *slot_of_task(Worker *w, uint64_t task, uint64_t lease)
{
    for (int i = 0; i < w->nslots; i++) {
        Slot *s = &w->slots[i];
        if ((s->task || s->state == SLOT_FETCHING) && s->task_id == task && s->lease == lease)
            return s;
    }
    return NULL;
}

static void slot_reset(Slot *s)
{
    task_destroy(&s->task);
    xqf_msg_free(&s->pending);
    memset(s, 0, sizeof *s);
    s->state = SLOT_IDLE;
}

/* The engine build a task's player plays: "" for the built-in engine, else its SHA-256. */
static const char *task_build(const XqfMsg_task *m, int player) { return player ? m->build1 : m->build0; }

/* Starts what a fetching slot waits for, or gives it back when a build cannot be had. */
static void start_task(Worker *w, Slot *s, const XqfMsg_task *m, int64_t now);

static void fetching_slots_retry(Worker *w, const char *failed_why, int64_t now)
{
    for (int i = 0; i < w->nslots; i++) {
        Slot *s = &w->slots[i];
        if (s->state != SLOT_FETCHING)
            continue;
        const XqfMsg_task *m = &s->pending.u.task;
        bool ready = true, lost = false;
        for (int k = 0; k < 2; k++) {
            const char *sha = task_build(m, k);
            if (!*sha || builds_path(w->builds, sha))
                continue;
            ready = false;
            lost = lost || !builds_fetching(w->builds, sha);
        }
        if (ready) {
            XqfMsg task = s->pending;          /* moved out: start_task takes the slot over */
            xqf_msg_init(&s->pending, XQF_MSG_NONE);
            s->state = SLOT_REQUESTED;
            start_task(w, s, &task.u.task, now);
            xqf_msg_free(&task);
        } else if (lost) {
            char why[XQF_TEXT_MAX];
            snprintf(why, sizeof why, "engine build unavailable: %s", failed_why ? failed_why : "fetch failed");
            log_warn("task %" PRIu64 ": %s", s->task_id, why);
            send_task_msg(w, XQF_MSG_HANDBACK, s->task_id, s->lease, true, why);
            slot_reset(s);
            w->next_request_ms = now + 2000;
        }
    }
}

/*
 * A task arrived for slot m->slot.  When a player needs an engine build the
 * worker lacks, the task waits in the slot (heartbeated) while the build is
 * fetched; else it starts at once.
 */
static void on_task(Worker *w, XqfMsg *msg, int64_t now)
{
    const XqfMsg_task *m = &msg->u.task;
    Slot *s = m->slot < (uint64_t)w->nslots ? &w->slots[m->slot] : NULL;
    if (!s || s->state != SLOT_REQUESTED || stop_flag) {
        send_task_msg(w, XQF_MSG_HANDBACK, m->task_id, m->lease, false, "not asked for (a late answer)");
        return;
    }
    bool missing = false;
    for (int k = 0; k < 2; k++) {
        const char *sha = task_build(m, k);
        if (!*sha || builds_path(w->builds, sha))
            continue;
        if (!builds_sha_ok(sha) || builds_want(w->builds, sha) != 0) {
            send_task_msg(w, XQF_MSG_HANDBACK, m->task_id, m->lease, true, "cannot fetch its engine build");
            slot_reset(s);
            w->next_request_ms = now + 2000;
            return;
        }
        missing = true;
    }
    if (!missing) {
        start_task(w, s, m, now);
        return;
    }
    s->state = SLOT_FETCHING;
    s->task_id = m->task_id;
    s->lease = m->lease;
    s->pairs = m->pairs;
    s->since_ms = now;
    s->pending = *msg;                       /* the slot keeps the message (and its lists) */
    xqf_msg_init(msg, XQF_MSG_NONE);
    log_info("slot %d: task %" PRIu64 " waits for its engine builds", (int)(s - w->slots), s->task_id);
}

static void start_task(Worker *w, Slot *s, const XqfMsg_task *m, int64_t now)
{
    char err[512];
    const char *engines[2] = { NULL, NULL };
    char paths[2][PATH_MAX];
    for (int k = 0; k < 2; k++) {
        const char *sha = task_build(m, k);
        const char *path = *sha ? builds_path(w->builds, sha) : NULL;
        if (*sha && !path) {
            snprintf(err, sizeof err, "engine build %.16s... not in the cache", sha);
            break;
        }
        if (path) {
            snprintf(paths[k], sizeof paths[k], "%s", path);
            engines[k] = paths[k];
        }
    }
    Task *t = (*m->build0 && !engines[0]) || (*m->build1 && !engines[1])
                  ? NULL : task_new(m, w->build, engines, err, sizeof err);
    if (!t) {
        log_warn("refusing task %" PRIu64 ": %s", m->task_id, err);
        send_task_msg(w, XQF_MSG_HANDBACK, m->task_id, m->lease, true, err);
        slot_reset(s);
        w->next_request_ms = now + 2000;
        return;
    }
    task_start(t, w->pool);
    log_info("slot %d: task %" PRIu64 " of run %" PRIu64 ", pairs %" PRId64 "-%" PRId64, (int)m->slot,
             m->task_id, m->run_id, m->first_pair, m->first_pair + m->pairs - 1);
    s->state = SLOT_PLAYING;
    s->task = t;
    s->task_id = m->task_id;
    s->lease = m->lease;
    s->pairs = m->pairs;
    s->acked = 0;
    memset(&s->sent, 0, sizeof s->sent);
    s->since_ms = now;
}

static void on_message(Worker *w, XqfMsg *m, int64_t now)
{
    w->heard_ms = now;
    switch (m->type) {
    case XQF_MSG_WELCOME:
        if (!w->welcomed)
            log_info("welcomed as worker %" PRIu64 " (lease %" PRIu64 " ms)", m->u.welcome.worker_id,
                     m->u.welcome.lease_ms);
        w->welcomed = true;
        w->hello_backoff = HELLO_BACKOFF_MIN_MS;
        /* after a (re)connect: what was not acknowledged goes again at once, before its lease runs out */
        for (int i = 0; i < w->nslots; i++)
            if (w->slots[i].task && w->slots[i].acked < w->slots[i].sent.pairs)
                w->slots[i].since_ms = 0;
        w->heartbeat_ms = m->u.welcome.heartbeat_ms > 0 ? (int64_t)m->u.welcome.heartbeat_ms : 10000;
        break;
    case XQF_MSG_TASK:
        on_task(w, m, now);
        break;
    case XQF_MSG_BUILD_CHUNK: {
        char err[XQF_TEXT_MAX];
        int rc = builds_on_chunk(w->builds, &m->u.build_chunk, err, sizeof err);
        if (rc != 0)
            fetching_slots_retry(w, rc < 0 ? err : NULL, now);
        break;
    }
    case XQF_MSG_IDLE: {
        Slot *s = m->u.idle.slot < (uint64_t)w->nslots ? &w->slots[m->u.idle.slot] : NULL;
        if (s && s->state == SLOT_REQUESTED) {
            slot_reset(s);
            w->next_request_ms = now + (int64_t)(m->u.idle.retry_ms < 60000 ? m->u.idle.retry_ms : 60000);
        }
        break;
    }
    case XQF_MSG_ACK: {
        const XqfMsg_ack *a = &m->u.ack;
        Slot *s = slot_of_task(w, a->task_id, a->lease);
        if (!s)
            break;
        if ((strcmp(a->status, "accepted") == 0 || strcmp(a->status, "duplicate") == 0) &&
            a->pairs > s->acked)
            s->acked = a->pairs;
        if (strcmp(a->status, "invalid") == 0) {
            log_error("task %" PRIu64 ": the coordinator found our counts invalid; dropping it", a->task_id);
            s->lease_gone = true;
        }
        if (a->stop && !s->lease_gone) {
            log_info("task %" PRIu64 ": stopped by the coordinator (%s)", a->task_id, a->status);
            s->lease_gone = true;
        }
        if (s->lease_gone && s->state == SLOT_FETCHING) {
            slot_reset(s);
        } else if (s->lease_gone) {
            task_stop(s->task);
            s->state = SLOT_STOPPING;
        }
        break;
    }
    case XQF_MSG_ERROR:
        if (m->u.error.code == XQF_ERR_NEED_HELLO) {
            w->welcomed = false;
            w->hello_ms = 0;
            w->hello_backoff = HELLO_BACKOFF_MIN_MS;
        } else {
            log_warn("coordinator error %" PRIu64 ": %s", m->u.error.code, m->u.error.text);
            /* a refused build_request: the build is not to be had */
            if (m->u.error.code == XQF_ERR_REFUSED && builds_abandon(w->builds) > 0)
                fetching_slots_retry(w, m->u.error.text, now);
        }
        break;
    default:
        log_warn("unexpected %s message ignored", xqf_msg_type_name(m->type));
        break;
    }
}

/*
 * Asks for a task into a free slot when fewer games than threads are left
 * to hand out and no request is pending: one request at a time, so the
 * worker holds no more than it needs to keep every thread busy.
 */
static void request_task(Worker *w, int64_t now)
{
    if (!w->welcomed || stop_flag || now < w->next_request_ms ||
        task_pool_waiting(w->pool) >= w->threads)
        return;
    Slot *free_slot = NULL;
    for (int i = 0; i < w->nslots; i++) {
        Slot *s = &w->slots[i];
        if (s->state == SLOT_REQUESTED && now - s->since_ms > REQUEST_TIMEOUT_MS)
            s->state = SLOT_IDLE;            /* lost on the way: ask again */
        if (s->state == SLOT_REQUESTED)
            return;
        if (s->state == SLOT_IDLE && !free_slot)
            free_slot = s;
    }
    if (!free_slot)
        return;
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_TASK_REQUEST);
    m.u.task_request.slot = (uint64_t)(free_slot - w->slots);
    wt_send(w->t, &m);
    free_slot->state = SLOT_REQUESTED;
    free_slot->since_ms = now;
}

/* Tasks waiting for builds: heartbeats, and handed back at shutdown; then the build requests due. */
static void tend_fetching(Worker *w, int64_t now)
{
    for (int i = 0; i < w->nslots; i++) {
        Slot *s = &w->slots[i];
        if (s->state != SLOT_FETCHING)
            continue;
        if (stop_flag) {
            send_task_msg(w, XQF_MSG_HANDBACK, s->task_id, s->lease, false, "worker shutting down");
            slot_reset(s);
        } else if (now - s->since_ms > w->heartbeat_ms) {
            send_task_msg(w, XQF_MSG_HEARTBEAT, s->task_id, s->lease, false, "");
            s->since_ms = now;
        }
    }
    XqfMsg m;
    while (w->welcomed && builds_next_request(w->builds, now, &m))
        wt_send(w->t, &m);
}

/* One pass over the slots: results, heartbeats, the end of tasks; then a request if one is due. */
static void tend_slots(Worker *w, int64_t now)
{
    tend_fetching(w, now);
    for (int i = 0; i < w->nslots; i++) {
        Slot *s = &w->slots[i];
        if (!s->task)
            continue;
        TaskCounts c;
        bool done, failed;
        task_poll(s->task, &c, &done, &failed);
        if (stop_flag && !s->handback && !s->lease_gone) {
            task_stop(s->task);
            s->handback = true;
        }
        if (s->lease_gone) {
            if (done)
                slot_reset(s);
            continue;
        }
        if (c.pairs > s->sent.pairs || (s->acked < c.pairs && now - s->since_ms > RESEND_MS))
            send_result(w, s, &c, now);
        else if (now - s->since_ms > w->heartbeat_ms && !done) {
            send_task_msg(w, XQF_MSG_HEARTBEAT, s->task_id, s->lease, false, "");
            s->since_ms = now;
        }
        if (!done || s->acked < c.pairs)
            continue;
        /* Done and every pair acknowledged. */
        if (c.pairs < s->pairs) {
            const char *why = failed ? "a game thread failed" : "worker shutting down";
            send_task_msg(w, XQF_MSG_HANDBACK, s->task_id, s->lease, failed, why);
            log_info("task %" PRIu64 ": handed back after %" PRId64 " of %" PRId64 " pairs (%s)",
                     s->task_id, c.pairs, s->pairs, why);
        } else {
            log_info("task %" PRIu64 ": done, %" PRId64 " pairs W/D/L %" PRId64 "/%" PRId64 "/%" PRId64,
                     s->task_id, c.pairs, c.wins, c.draws, c.losses);
        }
        slot_reset(s);
    }
    request_task(w, now);
}

static bool busy(const Worker *w)
{
    for (int i = 0; i < w->nslots; i++)
        if (w->slots[i].task)
            return true;
    return false;
}

static void compute_build(char *out, size_t size)
{
    FILE *null = fopen("/dev/null", "w");
    uint64_t nodes = bench_run(BUILD_DEPTH, null ? null : stderr);
    if (null)
        fclose(null);
    Params p;
    params_default(&p);
    snprintf(out, size, "xqf-%" PRIu64 "-%016" PRIx64, nodes, params_hash(&p));
}

static void usage(FILE *out)
{
    fputs("Usage: xqf-worker [--connect ENDPOINT] [--name NAME] [--concurrency N]\n"
          "                  [--curve-secret FILE --server-key FILE.pub]\n"
          "\n"
          "Plays tasks of the coordinator's runs with the built-in engine and reports\n"
          "their results.\n"
          "\n"
          "  --connect ENDPOINT  the coordinator (default tcp://127.0.0.1:5555)\n"
          "  --name NAME         this worker's name (default HOST-PID)\n"
          "  --concurrency N     games played side by side (default: cores)\n"
          "  --curve-secret FILE this worker's CURVE key pair (xqf-keys new FILE; its\n"
          "                      FILE.pub goes into the coordinator's allow-list)\n"
          "  --server-key FILE.pub  the coordinator's public key (with --curve-secret)\n"
          "  --cache DIR         engine builds fetched from the coordinator, by SHA-256\n"
          "                      (default $XQF_CACHE, else $XDG_CACHE_HOME/xqf-worker,\n"
          "                      else ~/.cache/xqf-worker)\n"
          "  --build-id          print the build id and exit\n"
          "SIGTERM hands the tasks back and leaves. Logs: stderr (XQF_LOG=debug|info|warn|error).\n",
          out);
}

int main(int argc, char **argv)
{
    static Worker w;
    const char *endpoint = "tcp://127.0.0.1:5555";
    WtSecurity security = { NULL, NULL };
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    w.cores = online > 0 ? (int)online : 1;
    w.threads = w.cores;
    char host[64] = "worker";
    gethostname(host, sizeof host - 1);
    snprintf(w.name, sizeof w.name, "%.40s-%ld", host, (long)getpid());
    bool build_only = false;
    char cache_dir[PATH_MAX / 2];
    builds_default_dir(cache_dir, sizeof cache_dir);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--build-id") == 0) {
            build_only = true;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "xqf-worker: error: %s needs a value (see --help)\n", a);
            return 2;
        }
        const char *v = argv[++i];
        if (strcmp(a, "--connect") == 0) {
            endpoint = v;
        } else if (strcmp(a, "--curve-secret") == 0) {
            security.curve_secret = v;
        } else if (strcmp(a, "--server-key") == 0) {
            security.server_key = v;
        } else if (strcmp(a, "--cache") == 0) {
            if (!*v || strlen(v) >= sizeof cache_dir) {
                fprintf(stderr, "xqf-worker: error: --cache: a folder, please\n");
                return 2;
            }
            snprintf(cache_dir, sizeof cache_dir, "%s", v);
        } else if (strcmp(a, "--name") == 0) {
            if (!*v || strlen(v) > XQF_NAME_MAX) {
                fprintf(stderr, "xqf-worker: error: --name: 1-%d characters\n", XQF_NAME_MAX);
                return 2;
            }
            snprintf(w.name, sizeof w.name, "%s", v);
        } else if (strcmp(a, "--concurrency") == 0) {
            char *end;
            long n = strtol(v, &end, 10);
            if (end == v || *end || n < 1 || n > MAX_THREADS) {
                fprintf(stderr, "xqf-worker: error: --concurrency: '%s' is not 1-%d\n", v, MAX_THREADS);
                return 2;
            }
            w.threads = (int)n;
        } else {
            fprintf(stderr, "xqf-worker: error: unknown option '%s' (see --help)\n", a);
            return 2;
        }
    }
    if (!security.curve_secret != !security.server_key) {
        fprintf(stderr, "xqf-worker: error: --curve-secret and --server-key go together (CURVE needs "
                        "this worker's key pair and the coordinator's public key)\n");
        return 2;
    }
    compute_build(w.build, sizeof w.build);
    if (build_only) {
        printf("%s\n", w.build);
        return 0;
    }
    xqf_log_init(w.name);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (pipe(w.pipe_fd) != 0 || fcntl(w.pipe_fd[0], F_SETFL, O_NONBLOCK) != 0 ||
        fcntl(w.pipe_fd[1], F_SETFL, O_NONBLOCK) != 0 || !(w.builds = builds_new(cache_dir)) ||
        !(w.t = wt_new(endpoint, &security)) ||
        !(w.pool = task_pool_new(w.threads, w.pipe_fd[1])))
        return 1;
    w.nslots = 2 * w.threads + 1;
    log_info("build %s, %d game threads, coordinator %s", w.build, w.threads, endpoint);
    w.hello_backoff = HELLO_BACKOFF_MIN_MS;
    w.heartbeat_ms = 10000;
    w.heard_ms = clock_now_ms();
    int64_t stop_at = 0;
    for (;;) {
        int64_t now = clock_now_ms();
        if (stop_flag && !stop_at)
            stop_at = now + SHUTDOWN_MS;
        if (stop_flag && (!busy(&w) || now >= stop_at))
            break;
        if (w.welcomed && now - w.heard_ms > SILENCE_MS) {
            log_warn("the coordinator is silent: saying hello again");
            w.welcomed = false;
            w.heard_ms = now;
        }
        /* Not sent (not connected yet): nothing to back off from, try again in a moment. */
        bool hello_unsent = false;
        if (!w.welcomed && now - w.hello_ms >= w.hello_backoff) {
            hello_unsent = !send_hello(&w, now);
            if (hello_unsent)
                w.hello_ms = now - w.hello_backoff + HELLO_RETRY_MS;
            else
                w.hello_backoff = w.hello_backoff * 2 > HELLO_BACKOFF_MAX_MS ? HELLO_BACKOFF_MAX_MS
                                                                            : w.hello_backoff * 2;
        }
        tend_slots(&w, now);
        int ready = wt_wait(w.t, hello_unsent ? HELLO_RETRY_MS : 100, w.pipe_fd[0]);
        if (ready < 0)
            break;
        if (ready & 2) {
            char drain[256];
            while (read(w.pipe_fd[0], drain, sizeof drain) > 0) {
            }
        }
        XqfMsg m;
        int rc;
        while ((rc = wt_recv(w.t, &m)) != 0) {
            if (rc > 0)
                on_message(&w, &m, clock_now_ms());
            xqf_msg_free(&m);
        }
    }
    for (int i = 0; i < w.nslots; i++)
        slot_reset(&w.slots[i]);
    task_pool_destroy(&w.pool);
    builds_destroy(&w.builds);
    XqfMsg bye;
    xqf_msg_init(&bye, XQF_MSG_BYE);
    snprintf(bye.u.bye.reason, sizeof bye.u.bye.reason, "%s", stop_flag ? "stopped by a signal" : "transport failure");
    wt_send(w.t, &bye);
    log_info("leaving");
    wt_destroy(&w.t);
    close(w.pipe_fd[0]);
    close(w.pipe_fd[1]);
    return stop_flag ? 0 : 1;
}

#include "worker.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "builds.h"
#include "clock.h"
#include "log.h"
#include "nnue.h"
#include "release.h"
#include "task.h"

enum {
    MAX_SLOTS = 2 * WORKER_MAX_THREADS + 1,
    REQUEST_TIMEOUT_MS = 5000,       /* a task_request unanswered this long is re-sent */
    RESEND_MS = 2000,                /* an unacknowledged result is re-sent after this */
    HELLO_RETRY_MS = 10,             /* a hello that could not go out is tried again after this */
    HELLO_BACKOFF_MIN_MS = 500,
    HELLO_BACKOFF_MAX_MS = 10000,
    SILENCE_MS = 15000,              /* a message unanswered this long: hello again (WorkerConfig.silence_ms) */
    SHUTDOWN_MS = 5000               /* at most this long to hand back at SIGTERM */
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
    int64_t cut_logged;              /* 1 + acked when a result from there was last logged as cut; 0: never */
    int64_t since_ms;                /* request sent / last contact about the task */
    bool handback;                   /* hand back once its games are done */
    bool lease_gone;                 /* told to stop: nothing more to report */
    XqfMsg pending;                  /* SLOT_FETCHING: the task, waiting for its engine builds */
} Slot;

enum { NETS_READ_MAX = 16 };       /* nets remembered as read (each is hashed again at each use) */
enum { RELEASES_REFUSED_MAX = 8 };  /* worker releases refused, not fetched again until the worker restarts */

struct Worker {
    WorkerLink link;
    atomic_bool stop;                /* worker_stop */
    int64_t stop_at;                 /* when stopping: hand back until then at the latest */
    char name[XQF_NAME_MAX + 1];
    char build[XQF_NAME_MAX + 1];
    int cores, threads, nslots;
    Slot slots[MAX_SLOTS];
    TaskPool *pool;
    int64_t next_request_ms;         /* no task request before (after an idle or a refusal) */
    bool welcomed;
    int64_t hello_ms, hello_backoff, heartbeat_ms;
    int64_t awaiting_ms;             /* when the oldest message still waiting for an answer went (0: none) */
    int64_t silence_ms;              /* unanswered this long: the coordinator is gone, hello again */
    int pipe_fd[2];
    BuildCache *builds;              /* engine builds of the tasks' players (builds.h) */
    BuildCache *nets;                /* their nets (builds.h, SIGN_NET): DIR/nets of the cache */
    char nets_read[NETS_READ_MAX][XQF_SHA256_HEX + 1]; /* nets the engine's reader took, a ring */
    int nnets_read;
    int64_t own_nps;                 /* the built-in engine's bench speed (0: not measured yet) */
    bool boxed;                      /* engine builds run in the sandbox (process.h) */
    int max_hash_mb;                 /* a task asking for more hash is refused */
    unsigned protocol;               /* the protocol version this worker speaks (its frames') */
    char update_dir[PATH_MAX / 2];   /* versions/ and the current link ("": no self-update) */
    BuildCache *releases;            /* worker releases (SIGN_WORKER) in update_dir/versions; NULL: none */
    char release_sha[XQF_SHA256_HEX + 1]; /* the release being fetched ("" none) */
    char release_name[XQF_NAME_MAX + 1];
    char refused[RELEASES_REFUSED_MAX][XQF_SHA256_HEX + 1]; /* releases refused, a ring */
    int nrefused;
    char restart[PATH_MAX];          /* the verified release to restart into once the tasks are handed back */
};

enum { TC_SCALE_MIN_PERCENT = 25, TC_SCALE_MAX_PERCENT = 400 };  /* --tc-scale's factor, held in 0.25-4 */

/*
 * Sends m; a message the coordinator answers (all but a bench report, a
 * bye and an error) starts the wait for an answer, unless one is running.
 */
static int link_send(Worker *w, XqfMsg *m)
{
    m->version = w->protocol;
    int rc = w->link.send(w->link.ctx, m);
    bool answered = m->type != XQF_MSG_BENCH && m->type != XQF_MSG_BYE && m->type != XQF_MSG_ERROR;
    if (rc == 0 && answered && !w->awaiting_ms)
        w->awaiting_ms = clock_now_ms();
    return rc;
}

static bool stopping(Worker *w) { return atomic_load(&w->stop); }

/* Says hello; false when it could not go out (no connection yet: ZMQ_IMMEDIATE). */
static bool send_hello(Worker *w, int64_t now)
{
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_HELLO);
    xqf_text_sanitize(m.u.hello.name, sizeof m.u.hello.name, w->name);
    xqf_text_sanitize(m.u.hello.build, sizeof m.u.hello.build, w->build);
    m.u.hello.cores = (uint64_t)w->cores;
    m.u.hello.concurrency = (uint64_t)w->threads;
    w->hello_ms = now;
    return link_send(w, &m) == 0;
}

/*
 * Reports the task's pairs after those acknowledged with their games: as
 * many as fit one result (task_report), the next report takes the rest
 * once this one is acknowledged.  Nothing is sent when out of memory
 * (tried again at the next resend).
 */
static void send_result(Worker *w, Slot *s, int64_t now)
{
    XqfMsg m;
    TaskCounts c;
    xqf_msg_init(&m, XQF_MSG_RESULT);
    XqfMsg_result *r = &m.u.result;
    s->since_ms = now;
    if (task_report(s->task, s->acked, XQF_GAMES_MAX, &c, &r->games) != 0) {
        log_error("task %" PRIu64 ": out of memory for the games of a result", s->task_id);
        return;
    }
    r->task_id = s->task_id;
    r->lease = s->lease;
    r->pairs = c.pairs;
    r->wins = c.wins;
    r->draws = c.draws;
    r->losses = c.losses;
    r->penta.count = 5;
    memcpy(r->penta.v, c.penta, sizeof c.penta);
    r->reasons.count = GAME_REASONS;
    memcpy(r->reasons.v, c.reasons, sizeof c.reasons);
    r->games_from = s->acked;
    link_send(w, &m);
    xqf_msg_free(&m);
    s->sent = c;
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
        /* a reason may quote an engine or the system: sent as text the coordinator's decoder accepts */
        xqf_text_sanitize(m.u.handback.reason, sizeof m.u.handback.reason, reason);
    }
    link_send(w, &m);
}

/* Tells the coordinator what a build's bench found (sha "" the built-in engine; refused "" it plays it). */
static void send_bench(Worker *w, const char *sha, int64_t nodes, int64_t nps, const char *refused)
{
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_BENCH);
    snprintf(m.u.bench.sha256, sizeof m.u.bench.sha256, "%s", sha);
    m.u.bench.nodes = nodes;
    m.u.bench.nps = nps;
    snprintf(m.u.bench.refused, sizeof m.u.bench.refused, "%.*s", (int)sizeof m.u.bench.refused - 1, refused);
    link_send(w, &m);
}

/* The built-in engine's speed, from its bench (run once, in this process, when a scaled clock first needs it). */
static int64_t own_nps(Worker *w)
{
    if (w->own_nps)
        return w->own_nps;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    uint64_t nodes = out ? bench_run(0, NULL, out) : 0;
    if (out)
        fclose(out);
    const char *line = text ? strstr(text, "Nodes/second: ") : NULL;
    long long nps = 0;
    if (nodes && line && sscanf(line, "Nodes/second: %lld", &nps) == 1 && nps > 0) {
        w->own_nps = nps;
        log_info("built-in engine: bench %llu, %lld nodes/s", (unsigned long long)nodes, nps);
        send_bench(w, "", (int64_t)nodes, nps, "");
    }
    free(text);
    return w->own_nps;
}

/*
 * Checks the engine builds of a task against their recorded bench
 * signatures (the first use of each runs its bench, builds_bench) and,
 * with ref_nps, scales the clock of *m by ref_nps / this worker's speed
 * for its two engines.  NULL, or why the task is refused (in err).
 */
static const char *check_engines(Worker *w, XqfMsg_task *m, char *const paths[2], char *err, size_t errlen)
{
    int64_t nps[2] = { 0, 0 };
    char why[2][XQF_TEXT_MAX];
    for (int k = 0; k < 2; k++) {
        const char *sha = k ? m->build1 : m->build0;
        int64_t recorded = k ? m->bench1 : m->bench0;
        why[k][0] = '\0';
        /* another engine benched otherwise than `BINARY bench` (recorded 0): its bench is the builder's only */
        if (!*sha || ((k ? m->engine1 : m->engine)[0] && recorded == 0))
            continue;
        BuildBench b;
        bool fresh = builds_bench(w->builds, sha, paths[k], &b);
        if (!b.nodes)
            snprintf(why[k], sizeof why[k], "engine build %.16s: %.400s", sha, b.why);
        else if (recorded > 0 && b.nodes != recorded)
            snprintf(why[k], sizeof why[k], "engine build %.16s: bench signature %lld here, %lld recorded "
                     "(another architecture or libc, or a miscompile)", sha, (long long)b.nodes, (long long)recorded);
        if (fresh || why[k][0])
            send_bench(w, sha, b.nodes, b.nps, why[k]);
        nps[k] = b.nps;
    }
    for (int k = 0; k < 2; k++)
        if (why[k][0]) {
            snprintf(err, errlen, "%s", why[k]);
            return err;
        }
    /* a clock within xqf-tune's limits (a day, an hour), a reference within --ref-nps': no overflow below */
    bool clock = m->nodes == 0 && m->depth == 0 && m->base_ms > 0 && m->base_ms <= 86400000 && m->inc_ms >= 0 &&
                 m->inc_ms <= 3600000;
    if (m->ref_nps > 0 && m->ref_nps <= UINT64_C(1) << 40 && clock) {
        for (int k = 0; k < 2; k++)
            if (!nps[k])
                nps[k] = own_nps(w);
        int64_t mean = (nps[0] + nps[1]) / 2;
        if (mean > 0) {
            int64_t percent = (int64_t)m->ref_nps * 100 / mean;
            percent = percent < TC_SCALE_MIN_PERCENT ? TC_SCALE_MIN_PERCENT
                      : percent > TC_SCALE_MAX_PERCENT ? TC_SCALE_MAX_PERCENT : percent;
            m->base_ms = m->base_ms * percent / 100;
            m->inc_ms = m->inc_ms * percent / 100;
            log_info("task %" PRIu64 ": clock scaled by %.2f (%lld nodes/s here, reference %llu): %lld+%lld ms",
                     m->task_id, percent / 100.0, (long long)mean, (unsigned long long)m->ref_nps,
                     (long long)m->base_ms, (long long)m->inc_ms);
        }
    }
    return NULL;
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

/*
 * A task's artifact i (0-3: build0, build1, net0, net1), its SHA-256 in
 * *sha and its cache in *c: false when there is nothing to fetch (the
 * built-in engine, the engine's own evaluation, "none": hand-crafted).
 */
static bool task_artifact(Worker *w, const XqfMsg_task *m, int i, BuildCache **c, const char **sha)
{
    const char *const shas[4] = { m->build0, m->build1, m->net0, m->net1 };
    *sha = shas[i];
    *c = i < 2 ? w->builds : w->nets;
    return **sha && !(i >= 2 && strcmp(*sha, "none") == 0);
}

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
        for (int a = 0; a < 4; a++) {
            BuildCache *c;
            const char *sha;
            if (!task_artifact(w, m, a, &c, &sha) || builds_path(c, sha))
                continue;
            ready = false;
            lost = lost || !builds_fetching(c, sha);
        }
        if (ready) {
            XqfMsg task = s->pending;          /* moved out: start_task takes the slot over */
            xqf_msg_init(&s->pending, XQF_MSG_NONE);
            s->state = SLOT_REQUESTED;
            start_task(w, s, &task.u.task, now);
            xqf_msg_free(&task);
        } else if (lost) {
            char why[XQF_TEXT_MAX];
            snprintf(why, sizeof why, "engine build or net unavailable: %s", failed_why ? failed_why : "fetch failed");
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
    if (!s || s->state != SLOT_REQUESTED || stopping(w)) {
        send_task_msg(w, XQF_MSG_HANDBACK, m->task_id, m->lease, false, "not asked for (a late answer)");
        return;
    }
    char why[128] = "";
    if (m->hash_mb > w->max_hash_mb)
        /* every game holds two hash tables: a coordinator must not make this machine run out of memory */
        snprintf(why, sizeof why, "a hash of %" PRId64 " MB is over this worker's --max-hash of %d MB", m->hash_mb,
                 w->max_hash_mb);
    else if (m->threads > w->threads)
        /* a game's engines would search with more threads than this worker gives its games: its cores */
        snprintf(why, sizeof why, "%" PRId64 " threads per engine are over this worker's concurrency of %d",
                 m->threads, w->threads);
    if (why[0]) {
        log_warn("task %" PRIu64 ": %s", m->task_id, why);
        send_task_msg(w, XQF_MSG_HANDBACK, m->task_id, m->lease, true, why);
        slot_reset(s);
        w->next_request_ms = now + 2000;
        return;
    }
    bool missing = false;
    for (int i = 0; i < 4; i++) {
        BuildCache *c;
        const char *sha;
        if (!task_artifact(w, m, i, &c, &sha) || builds_path(c, sha))
            continue;
        if (!builds_sha_ok(sha) || builds_want(c, sha) != 0) {
            send_task_msg(w, XQF_MSG_HANDBACK, m->task_id, m->lease, true,
                          i < 2 ? "cannot fetch its engine build" : "cannot fetch its net");
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
    log_info("slot %d: task %" PRIu64 " waits for its engine builds or nets", (int)(s - w->slots), s->task_id);
}

/*
 * Whether the engine's reader takes the cached net sha at path (read once
 * per process: the file is hashed again at each use, so it cannot change
 * since).  A net it refuses is reported per worker as a refused build is
 * (the coordinator then offers this worker no task of it).  NULL, or why
 * the task is refused (in err).
 */
static const char *check_net(Worker *w, const char *sha, const char *path, char *err, size_t errlen)
{
    int n = w->nnets_read < NETS_READ_MAX ? w->nnets_read : NETS_READ_MAX;
    for (int i = 0; i < n; i++)
        if (strcmp(w->nets_read[i], sha) == 0)
            return NULL;
    char why[XQF_TEXT_MAX - 64];
    NnueNet *net = nnue_load_file(path, why, sizeof why);
    if (!net) {
        snprintf(err, errlen, "net %.16s...: refused by the engine's reader: %s", sha, why);
        log_warn("%s", err);
        send_bench(w, sha, 0, 0, err);
        return err;
    }
    nnue_destroy(&net);
    snprintf(w->nets_read[w->nnets_read++ % NETS_READ_MAX], XQF_SHA256_HEX + 1, "%s", sha);
    return NULL;
}

static void start_task(Worker *w, Slot *s, const XqfMsg_task *m, int64_t now)
{
    char err[512] = "";
    const char *engines[2] = { NULL, NULL }, *nets[2] = { NULL, NULL };
    char paths[4][PATH_MAX];
    bool missing = false;
    for (int i = 0; i < 4 && !missing; i++) {
        BuildCache *c;
        const char *sha;
        if (!task_artifact(w, m, i, &c, &sha)) {
            if (i >= 2 && *sha)
                nets[i - 2] = "none";
            continue;
        }
        const char *path = builds_path(c, sha);
        if (!path) {
            snprintf(err, sizeof err, "%s %.16s... not in the cache", i < 2 ? "engine build" : "net", sha);
            missing = true;
        } else {
            snprintf(paths[i], sizeof paths[i], "%s", path);
            if (i < 2)
                engines[i] = paths[i];
            else if (check_net(w, sha, paths[i], err, sizeof err))
                missing = true;
            else
                nets[i - 2] = paths[i];
        }
    }
    XqfMsg_task checked = *m;                /* its clock scaled (the lists stay m's) */
    char *const engine_paths[2] = { paths[0], paths[1] };
    Task *t = missing || check_engines(w, &checked, engine_paths, err, sizeof err)
                  ? NULL : task_new(&checked, w->build, engines, nets, w->boxed, err, sizeof err);
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

/* ---- updates: a newer worker release (docs/cluster.md, "Rolling upgrades") ---------- */

static bool release_refused(const Worker *w, const char *sha)
{
    for (int i = 0; i < w->nrefused && i < RELEASES_REFUSED_MAX; i++)
        if (strcmp(w->refused[i], sha) == 0)
            return true;
    return false;
}

/* The release sha is not taken: said in the log and to the coordinator; this worker plays on as it is. */
static void update_refused(Worker *w, const char *sha, const char *why)
{
    log_warn("update to the worker release %s (%.16s...) refused: %s; this worker runs on as it is (protocol %u)",
             w->release_name[0] ? w->release_name : "?", sha, why, w->protocol);
    snprintf(w->refused[w->nrefused++ % RELEASES_REFUSED_MAX], XQF_SHA256_HEX + 1, "%s", sha);
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_UPDATE_FAILED);
    snprintf(m.u.update_failed.sha256, sizeof m.u.update_failed.sha256, "%s", sha);
    xqf_text_sanitize(m.u.update_failed.reason, sizeof m.u.update_failed.reason, why);
    link_send(w, &m);
    w->release_sha[0] = '\0';
}

/*
 * Removes the releases of update_dir/versions but keep and keep2 (their
 * binaries and signature files; lock and part files are left to the
 * fetches that own them): a release per protocol change would pile up.
 * The one current named before is kept, to go back to by hand.
 */
static void prune_versions(const Worker *w, const char *keep, const char *keep2)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/versions", w->update_dir);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        size_t hex = strspn(n, "0123456789abcdef");
        if (hex != XQF_SHA256_HEX || (n[hex] && strcmp(n + hex, ".sig") != 0) || strncmp(n, keep, hex) == 0 ||
            (keep2[0] && strncmp(n, keep2, hex) == 0))
            continue;
        if (unlinkat(dirfd(d), n, 0) == 0)
            log_info("update: an older worker release removed: %s/%s", dir, n);
    }
    closedir(d);
}

/*
 * Makes update_dir/current point at versions/SHA: a new link beside it
 * renamed over it, so that whoever reads it (the worker's start) sees the
 * old one or the new one, never none; then the releases older than the
 * one it named are removed.  0 or -1 (errno).
 */
static int swap_current(const Worker *w, const char *sha)
{
    char link[PATH_MAX], tmp[PATH_MAX], target[XQF_SHA256_HEX + 16], before[PATH_MAX] = "";
    snprintf(target, sizeof target, "versions/%s", sha);
    snprintf(link, sizeof link, "%s/current", w->update_dir);
    ssize_t n = readlink(link, before, sizeof before - 1);
    before[n > 0 ? n : 0] = '\0';
    const char *previous = strrchr(before, '/') ? strrchr(before, '/') + 1 : before;
    snprintf(tmp, sizeof tmp, "%s/.current-%ld", w->update_dir, (long)getpid());
    unlink(tmp);
    if (symlink(target, tmp) != 0)
        return -1;
    if (rename(tmp, link) != 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    prune_versions(w, sha, previous);
    return 0;
}

/*
 * The release is cached and verified (its SHA-256, its signature by a
 * trusted key): its signed name's protocol must be newer than ours and be
 * what the binary itself says it speaks (`--protocol`), else it would be
 * offered again after the restart, and again.  Then the current link
 * names it, the tasks are handed back (the worker stops as at SIGTERM)
 * and worker_restart_path answers it.
 */
static void release_ready(Worker *w)
{
    char sha[XQF_SHA256_HEX + 1], name[XQF_NAME_MAX + 1], why[512];
    if (stopping(w))
        return;                      /* leaving (a signal): it stays cached, taken at the next notice */
    snprintf(sha, sizeof sha, "%s", w->release_sha);
    const char *path = builds_path(w->releases, sha);
    unsigned signed_protocol = 0, says = 0;
    if (!path || builds_name(w->releases, sha, name) != 0) {
        update_refused(w, sha, "fetched, but its copy or its signature did not verify again");
        return;
    }
    char exe[PATH_MAX];
    snprintf(exe, sizeof exe, "%s", path);
    signed_protocol = release_protocol(name);
    if (signed_protocol <= w->protocol) {
        snprintf(why, sizeof why, "its signed name %s is not of a newer protocol than %u", name, w->protocol);
        update_refused(w, sha, why);
        return;
    }
    if (release_ask_protocol(exe, &says, why, sizeof why) != 0 || says != signed_protocol) {
        if (says)
            snprintf(why, sizeof why, "it speaks protocol %u, its signature says %u", says, signed_protocol);
        update_refused(w, sha, why);
        return;
    }
    if (swap_current(w, sha) != 0) {
        snprintf(why, sizeof why, "cannot point %.300s/current at it: %s", w->update_dir, strerror(errno));
        update_refused(w, sha, why);
        return;
    }
    snprintf(w->restart, sizeof w->restart, "%s", exe);
    log_info("update: worker release %s (%.16s...) verified; handing the tasks back, then restarting into %s", name,
             sha, exe);
    worker_stop(w);
}

/* The coordinator serves a newer worker release: fetched (unless refused before, or this worker updates not). */
static void on_update(Worker *w, const XqfMsg_update *u)
{
    if (u->protocol <= w->protocol || w->restart[0] || release_refused(w, u->sha256) ||
        (w->release_sha[0] && strcmp(w->release_sha, u->sha256) == 0))
        return;
    if (!w->releases) {
        log_info("the coordinator serves the worker release %s (protocol %u; this worker speaks %u): not taken, "
                 "this worker does not update itself (--no-update, or no --trust file)", u->name,
                 (unsigned)u->protocol, w->protocol);
        snprintf(w->refused[w->nrefused++ % RELEASES_REFUSED_MAX], XQF_SHA256_HEX + 1, "%s", u->sha256);
        return;
    }
    snprintf(w->release_name, sizeof w->release_name, "%s", u->name);
    if (!builds_sha_ok(u->sha256) || release_protocol(u->name) != u->protocol) {
        update_refused(w, u->sha256, "the notice's name and protocol disagree");
        return;
    }
    snprintf(w->release_sha, sizeof w->release_sha, "%s", u->sha256);
    log_info("update: the coordinator serves the worker release %s (protocol %u, %llu bytes; this worker speaks "
             "%u): fetching it", u->name, (unsigned)u->protocol, (unsigned long long)u->total, w->protocol);
    if (builds_path(w->releases, u->sha256)) {
        release_ready(w);
        return;
    }
    if (builds_want(w->releases, u->sha256) != 0)
        update_refused(w, u->sha256, "cannot start its fetch");
}

const char *worker_restart_path(const Worker *w) { return w->restart[0] ? w->restart : NULL; }

static void on_message(Worker *w, XqfMsg *m, int64_t now)
{
    w->awaiting_ms = 0;
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
    case XQF_MSG_UPDATE:
        on_update(w, &m->u.update);
        break;
    case XQF_MSG_BUILD_CHUNK: {
        char err[XQF_TEXT_MAX];
        if (strcmp(m->u.build_chunk.kind, "worker") == 0) {
            int rc = w->releases && w->release_sha[0] ? builds_on_chunk(w->releases, &m->u.build_chunk, err, sizeof err)
                                                      : 0;
            if (rc == 1)
                release_ready(w);
            else if (rc < 0)
                update_refused(w, m->u.build_chunk.sha256, err);
            break;
        }
        BuildCache *c = strcmp(m->u.build_chunk.kind, "net") == 0 ? w->nets : w->builds;
        int rc = builds_on_chunk(c, &m->u.build_chunk, err, sizeof err);
        /* a build this worker will not run: said per build first, as a bench mismatch is, so that
           the coordinator offers this worker no task of it and counts its refusals for no quarantine */
        if (rc == -2)
            send_bench(w, m->u.build_chunk.sha256, 0, 0, err);
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
            if (m->u.error.code == XQF_ERR_REFUSED && builds_abandon(w->builds) + builds_abandon(w->nets) > 0)
                fetching_slots_retry(w, m->u.error.text, now);
            else if (m->u.error.code == XQF_ERR_REFUSED && w->release_sha[0] && builds_abandon(w->releases) > 0)
                update_refused(w, w->release_sha, m->u.error.text);
        }
        break;
    default:
        log_warn("unexpected %s message ignored", xqf_msg_type_name(m->type));
        break;
    }
}

/*
 * Asks for a task into a free slot when the games left to hand out need
 * fewer cores than the worker's concurrency (a game takes its task's
 * threads) and no request is pending: one request at a time, so the
 * worker holds no more than it needs to keep every core busy.
 */
static void request_task(Worker *w, int64_t now)
{
    if (!w->welcomed || stopping(w) || now < w->next_request_ms ||
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
    link_send(w, &m);
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
        if (stopping(w)) {
            send_task_msg(w, XQF_MSG_HANDBACK, s->task_id, s->lease, false, "worker shutting down");
            slot_reset(s);
        } else if (now - s->since_ms > w->heartbeat_ms) {
            send_task_msg(w, XQF_MSG_HEARTBEAT, s->task_id, s->lease, false, "");
            s->since_ms = now;
        }
    }
    if (builds_poll(w->builds) + builds_poll(w->nets) > 0)
        fetching_slots_retry(w, NULL, now);
    if (w->releases && w->release_sha[0] && !stopping(w) && builds_poll(w->releases) > 0)
        release_ready(w);            /* another worker process of this folder installed it */
    /* nets after builds, a release last: one chunk is in flight per connection, a second request would be refused */
    XqfMsg m;
    while (w->welcomed && (builds_next_request(w->builds, now, &m) ||
                           (!builds_receiving(w->builds) && builds_next_request(w->nets, now, &m)) ||
                           (w->releases && !stopping(w) && !builds_receiving(w->builds) &&
                            !builds_receiving(w->nets) && builds_next_request(w->releases, now, &m))))
        link_send(w, &m);
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
        bool done;
        char failed[256];
        task_poll(s->task, &c, &done, failed, sizeof failed);
        if (stopping(w) && !s->handback && !s->lease_gone) {
            task_stop(s->task);
            s->handback = true;
        }
        if (s->lease_gone) {
            if (done)
                slot_reset(s);
            continue;
        }
        /* the pairs the next report can carry: fewer than counted when their games fill a result */
        TaskCounts next;
        task_report(s->task, s->acked, XQF_GAMES_MAX, &next, NULL);
        if (next.pairs < c.pairs && s->cut_logged != s->acked + 1) {
            /* once per part: when the games counted first fill a result (also while the coordinator is away) */
            s->cut_logged = s->acked + 1;
            log_info("task %" PRIu64 ": pairs %" PRId64 "-%" PRId64 " reported with their games, which fill a "
                     "result; pairs %" PRId64 "-%" PRId64 " follow once it is acknowledged", s->task_id, s->acked,
                     next.pairs - 1, next.pairs, c.pairs - 1);
        }
        if (next.pairs > s->sent.pairs || (s->acked < next.pairs && now - s->since_ms > RESEND_MS))
            send_result(w, s, now);
        else if (now - s->since_ms > w->heartbeat_ms && !done) {
            send_task_msg(w, XQF_MSG_HEARTBEAT, s->task_id, s->lease, false, "");
            s->since_ms = now;
        }
        if (!done || s->acked < c.pairs)
            continue;
        /* Done and every pair acknowledged. */
        if (c.pairs < s->pairs) {
            /* refused (a game that cannot be played as asked, e.g. an option its build refuses) as at its start */
            const char *why = failed[0] ? failed : "worker shutting down";
            send_task_msg(w, XQF_MSG_HANDBACK, s->task_id, s->lease, failed[0], why);
            log_info("task %" PRIu64 ": handed back after %" PRId64 " of %" PRId64 " pairs (%s)",
                     s->task_id, c.pairs, s->pairs, why);
            if (failed[0])
                w->next_request_ms = now + 2000;
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

Worker *worker_new(const WorkerConfig *cfg, const WorkerLink *link)
{
    Worker *w = calloc(1, sizeof *w);
    char nets_dir[PATH_MAX];
    if (!w) {
        log_error("worker: out of memory");
        return NULL;
    }
    w->link = *link;
    atomic_init(&w->stop, false);
    w->pipe_fd[0] = w->pipe_fd[1] = -1;
    snprintf(w->name, sizeof w->name, "%s", cfg->name);
    snprintf(w->build, sizeof w->build, "%s", cfg->build);
    w->cores = cfg->cores;
    w->threads = cfg->threads < 1 ? 1 : cfg->threads > WORKER_MAX_THREADS ? WORKER_MAX_THREADS : cfg->threads;
    w->nslots = 2 * w->threads + 1;
    w->hello_backoff = HELLO_BACKOFF_MIN_MS;
    w->heartbeat_ms = 10000;
    w->silence_ms = cfg->silence_ms > 0 ? cfg->silence_ms : SILENCE_MS;
    w->boxed = !cfg->no_sandbox;
    w->max_hash_mb = cfg->max_hash_mb > 0 ? cfg->max_hash_mb : 4096;
    w->protocol = cfg->protocol ? cfg->protocol : XQF_PROTOCOL_VERSION;
    char versions[PATH_MAX];
    if (cfg->update_dir && cfg->trust) {
        snprintf(w->update_dir, sizeof w->update_dir, "%s", cfg->update_dir);
        snprintf(versions, sizeof versions, "%s/versions", cfg->update_dir);
        /* a release runs with this worker's rights: its cache trusts signatures only, --allow-unsigned or not */
        if (!(w->releases = builds_new_kind(versions, SIGN_WORKER, cfg->trust, false, false))) {
            worker_destroy(&w);
            return NULL;
        }
    }
    /* close-on-exec before any thread exists: no engine inherits the pipe */
    if (pipe(w->pipe_fd) != 0 || fcntl(w->pipe_fd[0], F_SETFL, O_NONBLOCK) != 0 ||
        fcntl(w->pipe_fd[1], F_SETFL, O_NONBLOCK) != 0 || fcntl(w->pipe_fd[0], F_SETFD, FD_CLOEXEC) != 0 ||
        fcntl(w->pipe_fd[1], F_SETFD, FD_CLOEXEC) != 0 || !(w->builds = builds_new(cfg->cache_dir, cfg->trust, cfg->allow_unsigned, w->boxed)) ||
        snprintf(nets_dir, sizeof nets_dir, "%s/nets", cfg->cache_dir) >= (int)sizeof nets_dir ||
        !(w->nets = builds_new_kind(nets_dir, SIGN_NET, cfg->trust, cfg->allow_unsigned, false)) ||
        !(w->pool = task_pool_new(w->threads, w->pipe_fd[1]))) {
        log_error("worker: cannot start (pipe, build cache or game threads)");
        worker_destroy(&w);
        return NULL;
    }
    return w;
}

void worker_destroy(Worker **wp)
{
    Worker *w = *wp;
    if (!w)
        return;
    for (int i = 0; i < w->nslots; i++)
        slot_reset(&w->slots[i]);
    task_pool_destroy(&w->pool);
    builds_destroy(&w->builds);
    builds_destroy(&w->nets);
    builds_destroy(&w->releases);
    for (int i = 0; i < 2; i++)
        if (w->pipe_fd[i] >= 0)
            close(w->pipe_fd[i]);
    free(w);
    *wp = NULL;
}

void worker_stop(Worker *w) { atomic_store(&w->stop, true); }

int worker_turn(Worker *w, int wait_ms)
{
    int64_t now = clock_now_ms();
    if (stopping(w) && !w->stop_at)
        w->stop_at = now + SHUTDOWN_MS;
    if (stopping(w) && (!busy(w) || now >= w->stop_at))
        return 0;
    /*
     * Silence is a message unanswered, not a quiet spell: a worker told to
     * wait before its next request, or between heartbeats, hears nothing
     * because it says nothing.
     */
    if (w->welcomed && w->awaiting_ms && now - w->awaiting_ms > w->silence_ms) {
        log_warn("the coordinator is silent: saying hello again");
        w->welcomed = false;
        w->awaiting_ms = 0;
    }
    /* Not sent (not connected yet): nothing to back off from, try again in a moment. */
    bool hello_unsent = false;
    if (!w->welcomed && now - w->hello_ms >= w->hello_backoff) {
        hello_unsent = !send_hello(w, now);
        if (hello_unsent)
            w->hello_ms = now - w->hello_backoff + HELLO_RETRY_MS;
        else
            w->hello_backoff = w->hello_backoff * 2 > HELLO_BACKOFF_MAX_MS ? HELLO_BACKOFF_MAX_MS
                                                                           : w->hello_backoff * 2;
    }
    tend_slots(w, now);
    int ready = w->link.wait(w->link.ctx, hello_unsent && wait_ms > HELLO_RETRY_MS ? HELLO_RETRY_MS : wait_ms,
                             w->pipe_fd[0]);
    if (ready < 0)
        return -1;
    if (ready & 2) {
        char drain[256];
        while (read(w->pipe_fd[0], drain, sizeof drain) > 0) {
        }
    }
    XqfMsg m;
    int rc;
    while ((rc = w->link.recv(w->link.ctx, &m)) != 0) {
        if (rc > 0)
            on_message(w, &m, clock_now_ms());
        xqf_msg_free(&m);
    }
    return 1;
}

int worker_run(Worker *w)
{
    int rc;
    while ((rc = worker_turn(w, 100)) > 0) {
    }
    for (int i = 0; i < w->nslots; i++)
        slot_reset(&w->slots[i]);
    XqfMsg bye;
    xqf_msg_init(&bye, XQF_MSG_BYE);
    snprintf(bye.u.bye.reason, sizeof bye.u.bye.reason, "%s",
             rc != 0         ? "transport failure"
             : w->restart[0] ? "restarting into a newer worker release"
                             : "stopped by a signal");
    link_send(w, &bye);
    log_info("leaving");
    return rc == 0 ? 0 : -1;
}

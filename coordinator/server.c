#include "server.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "codec.h"
#include "log.h"
#include "peers.h"
#include "sched.h"
#include "status.h"
#include "store.h"
#include "transport.h"

enum {
    EXPIRE_EVERY_MS = 1000,
    REFRESH_EVERY_MS = 3000,
    BACKOFF_MIN_MS = 100,
    BACKOFF_MAX_MS = 5000,
    WAIT_MS = 100,
    LOAD_EVERY_MS = 10000
};

/* What the loop did since the last load line (logged every LOAD_EVERY_MS when busy). */
typedef struct {
    int64_t since_us, batches, messages, largest, busy_us, longest_us;
} LoadStats;

static void load_note(LoadStats *l, int n, int64_t busy_us)
{
    l->batches++;
    l->messages += n;
    l->largest = n > l->largest ? n : l->largest;
    l->busy_us += busy_us;
    l->longest_us = busy_us > l->longest_us ? busy_us : l->longest_us;
}

static void load_log(LoadStats *l, int64_t now)
{
    double secs = (double)(now - l->since_us) / 1e6;
    if (secs * 1000 < LOAD_EVERY_MS)
        return;
    if (l->messages)
        log_info("load: %.0f messages/s in %.0f batches/s (mean %.1f, largest %lld); batch %.1f ms mean, "
                 "%.1f ms longest; busy %.0f %%", (double)l->messages / secs, (double)l->batches / secs,
                 (double)l->messages / (double)l->batches, (long long)l->largest,
                 (double)l->busy_us / 1e3 / (double)l->batches, (double)l->longest_us / 1e3,
                 100.0 * (double)l->busy_us / 1e6 / secs);
    *l = (LoadStats){ .since_us = now };
}

/* ---- one message ------------------------------------------------------------------ */

typedef struct {
    Peer peer;
    XqfMsg in, out;
    bool reply;
    bool decoded;                    /* in is a message (else out is the refusal) */
} Item;

struct Server {
    ServerConfig cfg_copy;
    const ServerConfig *cfg;         /* &cfg_copy */
    atomic_bool stop;                /* server_stop */
    Transport *transport;
    Store *store;
    Sched *sched;
    Peers peers;
    int64_t backoff_ms, next_connect_ms;
    int64_t next_expire_ms;          /* expired leases re-queued then */
    LoadStats load;
    int batch;                       /* items' length */
    Item *items;                     /* the batch being handled */
    XqfBuf frame, buf;               /* a frame in, a reply out */
    uint8_t *chunk;                  /* XQF_CHUNK_MAX bytes for build chunks, made when first asked */
};

static bool needs_db(XqfMsgType t)
{
    return t == XQF_MSG_HELLO || t == XQF_MSG_TASK_REQUEST || t == XQF_MSG_RESULT ||
           t == XQF_MSG_HEARTBEAT || t == XQF_MSG_HANDBACK || t == XQF_MSG_STATUS_REQUEST ||
           t == XQF_MSG_BUILD_REQUEST;
}

static void make_ack(XqfMsg *out, uint64_t task, uint64_t lease, const char *status, int64_t pairs,
                     bool stop)
{
    xqf_msg_init(out, XQF_MSG_ACK);
    out->u.ack.pairs = pairs;
    out->u.ack.task_id = task;
    out->u.ack.lease = lease;
    snprintf(out->u.ack.status, sizeof out->u.ack.status, "%s", status);
    out->u.ack.stop = stop;
}

static void refuse(Item *it, XqfErrorCode code, const char *text)
{
    xqf_msg_free(&it->out);
    xqf_msg_error(&it->out, code, "%s", text);
    it->reply = true;
}

/* Checks a result's shape before it reaches the database. */
static bool result_shape_ok(const XqfMsg_result *r)
{
    return r->penta.count == 5 && r->reasons.count <= STORE_REASONS && r->pairs >= 0 &&
           r->task_id <= INT64_MAX && r->lease <= INT64_MAX;
}

/* Handles a message that needs the database, inside the caller's transaction. 0, or -1 on a database error. */
static int handle_db(Server *S, Item *it)
{
    const XqfMsg *in = &it->in;
    int64_t lease_ms = S->cfg->lease_ms;
    xqf_msg_free(&it->out);
    it->reply = true;
    switch (in->type) {
    case XQF_MSG_HELLO: {
        const XqfMsg_hello *h = &in->u.hello;
        int64_t id;
        if (!h->name[0] || h->cores > 1 << 16 || h->concurrency > 1 << 16) {
            refuse(it, XQF_ERR_REFUSED, "hello: a name, and sane cores and concurrency, please");
            return 0;
        }
        /* under CURVE the name is tied to the connection's key (its allow-list name) */
        int rc = store_hello(S->store, h->name, h->build, (int)h->cores, (int)h->concurrency, it->peer.user, &id);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            log_warn("worker %s: hello refused, the name belongs to another key than %s", h->name,
                     it->peer.user[0] ? it->peer.user : "none");
            refuse(it, XQF_ERR_REFUSED, "hello: this worker name belongs to another key");
            return 0;
        }
        if (peer_set(&S->peers, &it->peer, id, h->build) != 0)
            return -1;
        xqf_msg_init(&it->out, XQF_MSG_WELCOME);
        it->out.u.welcome.worker_id = (uint64_t)id;
        it->out.u.welcome.lease_ms = (uint64_t)lease_ms;
        it->out.u.welcome.heartbeat_ms = (uint64_t)(lease_ms / 4 > 0 ? lease_ms / 4 : 1);
        log_info("worker %s (id %lld, build %s, %llu cores%s%s) said hello", h->name, (long long)id,
                 h->build, (unsigned long long)h->cores, it->peer.user[0] ? ", key " : "", it->peer.user);
        return 0;
    }
    case XQF_MSG_HEARTBEAT: {
        const XqfMsg_heartbeat *h = &in->u.heartbeat;
        PeerEntry *e = peer_find(&S->peers, &it->peer);
        if (!e) {
            refuse(it, XQF_ERR_NEED_HELLO, "heartbeat: say hello first");
            return 0;
        }
        int rc = h->task_id <= INT64_MAX && h->lease <= INT64_MAX
                     ? store_heartbeat(S->store, e->worker, (int64_t)h->task_id, (int64_t)h->lease, lease_ms)
                     : 0;
        if (rc < 0)
            return -1;
        make_ack(&it->out, h->task_id, h->lease, rc ? "ok" : "stale", 0, rc == 0);
        return 0;
    }
    case XQF_MSG_HANDBACK: {
        const XqfMsg_handback *h = &in->u.handback;
        PeerEntry *e = peer_find(&S->peers, &it->peer);
        if (!e) {
            refuse(it, XQF_ERR_NEED_HELLO, "handback: say hello first");
            return 0;
        }
        int rc = h->task_id <= INT64_MAX && h->lease <= INT64_MAX
                     ? store_handback(S->store, e->worker, (int64_t)h->task_id, (int64_t)h->lease, h->reason)
                     : 0;
        if (rc < 0)
            return -1;
        if (rc > 0) {
            log_info("task %llu handed back%s: %s", (unsigned long long)h->task_id,
                     h->refused ? " (refused)" : "", h->reason);
            sched_invalidate(S->sched);
        }
        make_ack(&it->out, h->task_id, h->lease, rc ? "ok" : "stale", 0, true);
        return 0;
    }
    case XQF_MSG_BUILD_REQUEST: {
        const XqfMsg_build_request *b = &in->u.build_request;
        if (!peer_find(&S->peers, &it->peer)) {
            refuse(it, XQF_ERR_NEED_HELLO, "build_request: say hello first");
            return 0;
        }
        if (!S->chunk && !(S->chunk = malloc(XQF_CHUNK_MAX)))
            return -1;
        size_t len = 0;
        int64_t total = 0;
        int rc = b->offset <= INT64_MAX
                     ? store_build_chunk(S->store, b->sha256, (int64_t)b->offset, XQF_CHUNK_MAX, S->chunk,
                                         &len, &total)
                     : 0;
        if (rc < 0)
            return -1;
        if (rc == 0) {
            log_warn("build %.64s (from byte %llu) asked for: not stored", b->sha256,
                     (unsigned long long)b->offset);
            refuse(it, XQF_ERR_REFUSED, "build_request: no such build stored (xqf-tune build registers them)");
            return 0;
        }
        xqf_msg_init(&it->out, XQF_MSG_BUILD_CHUNK);
        XqfMsg_build_chunk *c = &it->out.u.build_chunk;
        snprintf(c->sha256, sizeof c->sha256, "%s", b->sha256);
        c->offset = b->offset;
        c->total = (uint64_t)total;
        return xqf_bin_set(&c->data, S->chunk, len);
    }
    case XQF_MSG_STATUS_REQUEST:
        xqf_msg_init(&it->out, XQF_MSG_STATUS);
        return status_lines(S->store, (int)(in->u.status_request.max_runs > 1000 ? 1000 : in->u.status_request.max_runs),
                            &it->out.u.status.workers, &it->out.u.status.runs);
    default:
        return 0;
    }
}

/*
 * The results of a batch in one statement (per distinct task), as
 * handle_db would answer each.  0, or -1 on a database error.
 */
static int handle_results(Server *S, Item *items, int n)
{
    StoreReportItem *rep = malloc(sizeof *rep * (size_t)(n > 0 ? n : 1));
    int *of = malloc(sizeof *of * (size_t)(n > 0 ? n : 1));
    int m = 0, rc = rep && of ? 0 : -1;
    for (int i = 0; rc == 0 && i < n; i++) {
        Item *it = &items[i];
        if (it->in.type != XQF_MSG_RESULT)
            continue;
        const XqfMsg_result *r = &it->in.u.result;
        PeerEntry *e = peer_find(&S->peers, &it->peer);
        xqf_msg_free(&it->out);
        it->reply = true;
        if (!e) {
            refuse(it, XQF_ERR_NEED_HELLO, "result: say hello first");
            continue;
        }
        if (!result_shape_ok(r)) {
            log_warn("worker %lld: task %llu: a result of impossible shape", (long long)e->worker,
                     (unsigned long long)r->task_id);
            make_ack(&it->out, r->task_id, r->lease, "invalid", r->pairs, false);
            continue;
        }
        StoreReportItem *x = &rep[m];
        *x = (StoreReportItem){ .worker = e->worker, .task = (int64_t)r->task_id, .token = (int64_t)r->lease,
                                .games = r->games.data, .games_len = r->games.len };
        x->counts = (StoreCounts){ r->pairs, r->wins, r->draws, r->losses, { 0 }, (int)r->reasons.count, { 0 } };
        memcpy(x->counts.penta, r->penta.v, sizeof x->counts.penta);
        memcpy(x->counts.reasons, r->reasons.v, sizeof(int64_t) * r->reasons.count);
        of[m++] = i;
    }
    if (rc == 0 && m > 0)
        rc = store_report_batch(S->store, rep, m, S->cfg->lease_ms);
    for (int k = 0; rc == 0 && k < m; k++) {
        Item *it = &items[of[k]];
        const XqfMsg_result *r = &it->in.u.result;
        const StoreReportItem *x = &rep[k];
        if (x->status == REPORT_ACCEPTED && sched_report(S->sched, x->run, x->task, x->task_done) != 0)
            rc = -1;
        if (x->status == REPORT_STALE && x->run == 0)
            log_warn("worker %lld: a result for task %llu, which does not exist: ignored", (long long)x->worker,
                     (unsigned long long)r->task_id);
        if (x->status == REPORT_INVALID)
            log_warn("worker %lld: task %llu: impossible counts rejected (%lld pairs, %lld/%lld/%lld)",
                     (long long)x->worker, (unsigned long long)r->task_id, (long long)r->pairs,
                     (long long)r->wins, (long long)r->draws, (long long)r->losses);
        make_ack(&it->out, r->task_id, r->lease, store_report_text(x->status), r->pairs,
                 x->status == REPORT_STALE);
    }
    free(rep);
    free(of);
    return rc;
}

/* The task requests of a batch, each run serving its share in one statement. 0 or -1. */
static int handle_requests(Server *S, Item *items, int n)
{
    int64_t *workers = malloc(sizeof *workers * (size_t)(n > 0 ? n : 1));
    const char **builds = malloc(sizeof *builds * (size_t)(n > 0 ? n : 1));
    XqfMsg *out = malloc(sizeof *out * (size_t)(n > 0 ? n : 1));
    int *of = malloc(sizeof *of * (size_t)(n > 0 ? n : 1));
    int m = 0, rc = workers && builds && out && of ? 0 : -1;
    for (int i = 0; rc == 0 && i < n; i++) {
        Item *it = &items[i];
        if (it->in.type != XQF_MSG_TASK_REQUEST)
            continue;
        PeerEntry *e = peer_find(&S->peers, &it->peer);
        if (!e) {
            refuse(it, XQF_ERR_NEED_HELLO, "task_request: say hello first");
            continue;
        }
        workers[m] = e->worker;
        builds[m] = e->build;
        xqf_msg_init(&out[m], XQF_MSG_NONE);
        of[m++] = i;
    }
    if (rc == 0 && m > 0 && sched_claim_batch(S->sched, workers, builds, m, S->cfg->lease_ms, out) != 0)
        rc = -1;
    for (int k = 0; k < m; k++) {
        Item *it = &items[of[k]];
        xqf_msg_free(&it->out);
        if (rc != 0) {
            xqf_msg_free(&out[k]);
            continue;
        }
        it->out = out[k];                  /* the message moves: its lists go with it */
        it->reply = true;
        if (it->out.type == XQF_MSG_TASK) {
            it->out.u.task.slot = it->in.u.task_request.slot;
            log_debug("task %llu (run %llu, %lld pairs) leased", (unsigned long long)it->out.u.task.task_id,
                      (unsigned long long)it->out.u.task.run_id, (long long)it->out.u.task.pairs);
        } else {
            it->out.u.idle.slot = it->in.u.task_request.slot;
        }
    }
    free(workers);
    free(builds);
    free(out);
    free(of);
    return rc;
}

/* Every database message of items, in one transaction the caller opened: the others one by one, in order, then results and requests in bulk. 0 or -1. */
static int handle_items(Server *S, Item *items, int n)
{
    for (int i = 0; i < n; i++)
        if (needs_db(items[i].in.type) && items[i].in.type != XQF_MSG_RESULT &&
            items[i].in.type != XQF_MSG_TASK_REQUEST && handle_db(S, &items[i]) != 0)
            return -1;
    return handle_results(S, items, n) == 0 && handle_requests(S, items, n) == 0 ? 0 : -1;
}

/* Handles a message that does not need the database. */
static void handle_local(Server *S, Item *it)
{
    switch (it->in.type) {
    case XQF_MSG_BYE: {
        PeerEntry *e = peer_find(&S->peers, &it->peer);
        if (e)
            e->worker = 0;
        log_info("a worker left: %s", it->in.u.bye.reason);
        it->reply = false;
        break;
    }
    case XQF_MSG_ERROR:
        log_warn("a worker reports error %llu: %s", (unsigned long long)it->in.u.error.code,
                 it->in.u.error.text);
        it->reply = false;
        break;
    default:
        refuse(it, XQF_ERR_TYPE, "this message type is not accepted by the coordinator");
        break;
    }
}

/* ---- the database's health ------------------------------------------------- */

static void ensure_connected(Server *S, int64_t now)
{
    if (store_ok(S->store) || now < S->next_connect_ms)
        return;
    if (store_connect(S->store) == 0) {
        int64_t n = store_extend_leases(S->store, S->cfg->lease_ms);
        log_info("database: connected%s (%lld leases extended)",
                 S->backoff_ms > BACKOFF_MIN_MS ? " again" : "", (long long)(n > 0 ? n : 0));
        S->backoff_ms = BACKOFF_MIN_MS;
        sched_invalidate(S->sched);
        return;
    }
    S->next_connect_ms = now + S->backoff_ms;
    log_warn("database: unavailable, next try in %lld ms", (long long)S->backoff_ms);
    S->backoff_ms = S->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : S->backoff_ms * 2;
}

/* Handles a batch of decoded messages in one transaction (see server.h). */
static void handle_batch(Server *S, Item *items, int n)
{
    int64_t now = clock_now_ms();
    int db_items = 0;
    for (int i = 0; i < n; i++)
        db_items += needs_db(items[i].in.type);
    if (!db_items)
        return;
    ensure_connected(S, now);
    bool ok = store_ok(S->store) && sched_refresh(S->sched, now, REFRESH_EVERY_MS) == 0 &&
              store_begin(S->store) == 0;
    if (ok && handle_items(S, items, n) != 0)
        ok = false;
    if (ok && store_commit(S->store) == 0) {
        if (sched_after_commit(S->sched) != 0)
            sched_invalidate(S->sched);
        return;
    }
    store_rollback(S->store);
    sched_rollback(S->sched);
    for (int i = 0; i < n; i++)
        if (items[i].in.type == XQF_MSG_HELLO) {
            PeerEntry *e = peer_find(&S->peers, &items[i].peer);
            if (e)
                e->worker = 0;
        }
    /* Connection up: a statement failed; redo each message alone so that only it is refused. */
    for (int i = 0; i < n; i++) {
        Item *it = &items[i];
        if (!needs_db(it->in.type))
            continue;
        bool done = store_ok(S->store) && store_begin(S->store) == 0 && handle_items(S, it, 1) == 0 &&
                    store_commit(S->store) == 0;
        if (done) {
            sched_after_commit(S->sched);
            continue;
        }
        store_rollback(S->store);
        sched_rollback(S->sched);
        refuse(it, XQF_ERR_INTERNAL, "database unavailable, retry later");
    }
}

static void timers(Server *S)
{
    int64_t now = clock_now_ms();
    if (store_ok(S->store) && sched_progress(S->sched, now) != 0)
        sched_invalidate(S->sched);
    if (now < S->next_expire_ms)
        return;
    S->next_expire_ms = now + EXPIRE_EVERY_MS;
    ensure_connected(S, now);
    if (!store_ok(S->store))
        return;
    int64_t n = store_expire_leases(S->store);
    if (n > 0) {
        log_info("%lld expired leases re-queued", (long long)n);
        sched_invalidate(S->sched);
    }
}

/* Takes the frames waiting, up to a batch, decoded (or refused) into S->items. Returns how many. */
static int take_frames(Server *S)
{
    int n = 0;
    while (n < S->batch) {
        Item *it = &S->items[n];
        if (transport_recv(S->transport, &it->peer, &S->frame) <= 0)
            break;
        char err[160];
        xqf_msg_init(&it->out, XQF_MSG_NONE);
        it->reply = false;
        XqfDecodeStatus st = xqf_msg_decode(S->frame.data, S->frame.len, &it->in, err, sizeof err);
        it->decoded = st == XQF_DECODE_OK;
        if (!it->decoded) {
            log_warn("refused a frame of %zu bytes: %s", S->frame.len, err);
            xqf_msg_free(&it->in);
            xqf_msg_init(&it->in, XQF_MSG_NONE);
            refuse(it, xqf_decode_error_code(st), err);
        }
        n++;
    }
    return n;
}

/* Sends the replies of the batch and frees its messages. */
static void send_replies(Server *S, int n)
{
    for (int i = 0; i < n; i++) {
        Item *it = &S->items[i];
        if (it->reply && xqf_msg_encode(&it->out, &S->buf) == 0)
            transport_send(S->transport, &it->peer, S->buf.data, S->buf.len);
        else if (it->reply)
            log_error("could not encode a %s reply", xqf_msg_type_name(it->out.type));
        xqf_msg_free(&it->in);
        xqf_msg_free(&it->out);
    }
}

Server *server_new(const ServerConfig *cfg)
{
    Server *S = calloc(1, sizeof *S);
    if (!S) {
        log_error("server: out of memory");
        return NULL;
    }
    S->cfg_copy = *cfg;
    S->cfg = &S->cfg_copy;
    atomic_init(&S->stop, false);
    S->backoff_ms = BACKOFF_MIN_MS;
    S->batch = cfg->batch_max > 0 ? cfg->batch_max : SERVER_BATCH_DEFAULT;
    if (!(S->items = calloc((size_t)S->batch, sizeof *S->items)) ||
        !(S->transport = transport_new(cfg->bind, &cfg->security)) || !(S->store = store_new(cfg->db)) ||
        !(S->sched = sched_new(S->store))) {
        server_destroy(&S);
        return NULL;
    }
    return S;
}

void server_destroy(Server **sp)
{
    Server *S = *sp;
    if (!S)
        return;
    for (int i = 0; S->items && i < S->batch; i++) {
        xqf_msg_free(&S->items[i].in);
        xqf_msg_free(&S->items[i].out);
    }
    free(S->items);
    peers_free(&S->peers);
    free(S->chunk);
    xqf_buf_free(&S->frame);
    xqf_buf_free(&S->buf);
    sched_destroy(&S->sched);
    store_destroy(&S->store);
    transport_destroy(&S->transport);
    free(S);
    *sp = NULL;
}

void server_stop(Server *S) { atomic_store(&S->stop, true); }

int server_run(Server *S)
{
    log_info("serving on %s, lease %lld ms", S->cfg->bind, (long long)S->cfg->lease_ms);
    ensure_connected(S, clock_now_ms());
    S->load = (LoadStats){ .since_us = clock_now_us() };
    while (!atomic_load(&S->stop)) {
        int ready = transport_wait(S->transport, WAIT_MS, store_socket(S->store));
        if (ready < 0) {
            log_error("transport: poll failed");
            break;
        }
        if ((ready & 2) && store_notifications(S->store) != 0)
            sched_invalidate(S->sched);
        int64_t started = clock_now_us();
        int n = take_frames(S);
        handle_batch(S, S->items, n);
        /* after the batch: a bye ends what came before it (a worker's last handbacks) */
        for (int i = 0; i < n; i++)
            if (S->items[i].decoded && !needs_db(S->items[i].in.type))
                handle_local(S, &S->items[i]);
        send_replies(S, n);
        if (n > 0)
            load_note(&S->load, n, clock_now_us() - started);
        load_log(&S->load, clock_now_us());
        timers(S);
    }
    log_info("stopping");
    return 0;
}

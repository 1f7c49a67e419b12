#include "server.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "clock.h"
#include "codec.h"
#include "leases.h"
#include "log.h"
#include "metrics.h"
#include "peers.h"
#include "ratelimit.h"
#include "release.h"
#include "sha256.h"
#include "sched.h"
#include "status.h"
#include "store_builds.h"
#include "store_games.h"
#include "store_nets.h"
#include "store_tasks.h"
#include "transport.h"

enum {
    EXPIRE_EVERY_MS = 1000,
    /*
     * Leases re-queued in one statement at most: the loop waits on each
     * statement, so it is sized to take a few tens of ms where a loaded
     * machine ran 10,000 into the 30 s statement timeout (the figures:
     * docs/measurements.md, "Expiry in batches").  More due: further
     * statements while the tick's EXPIRE_TICK_MS last, the rest at the
     * next tick.
     */
    EXPIRE_BATCH_MAX = 1000,
    EXPIRE_BATCH_MIN = 50,           /* a failed statement is tried at half its size, down to this */
    EXPIRE_TICK_MS = 200,
    REFRESH_EVERY_MS = 3000,
    BACKOFF_MIN_MS = 100,
    BACKOFF_MAX_MS = 5000,
    WAIT_MS = 100,
    LOAD_EVERY_MS = 10000,
    CHUNK_LOST_MS = 3000,            /* a chunk unacknowledged this long counts as lost (workers ask again after 5 s) */
    CHUNK_LOST_MAX = 3,              /* chunks lost in a row: the peer does not read them, no more for it */
    BENCH_REFRESH_MS = 1000,         /* bench refusals refresh the scheduler at most this often */
    LEASES_PER_SLOT = 2,             /* leases a worker may hold per slot it announced */
    CAPPED_RETRY_MS = 2000,          /* idle's retry_ms for a worker at its lease cap */
    STALL_MIN_MS = 2000,             /* a loop iteration this long (or a quarter lease) is a stall */
    TRIM_IDLE_MS = 2000,             /* no message this long after a burst: the heap's free pages go back */
    TRIM_EVERY_MS = 10000,           /* at most this often */
    TRIM_FLEET_LEFT = 256,           /* workers' connections closed since the last trim: trimmed even when busy */
    NAMES_PER_KEY = 1000,            /* worker names a CURVE key may have (workers rows) */
    GAUGES_EVERY_MS = 1000           /* the metrics' gauges that scan a table published this often */
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

static void load_log(LoadStats *l, int64_t now, const Transport *t)
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
    if (l->messages) {
        ConnsStats c = transport_conn_stats(t);
        log_info("connections: %d open; since the start %lld refused beyond --key-connections, %lld silent ones "
                 "of a key closed for its newcomers, %lld closed silent past --first-message",
                 transport_connections(t), (long long)c.refused, (long long)c.evicted, (long long)c.silent);
    }
    *l = (LoadStats){ .since_us = now };
}

/* ---- one message ------------------------------------------------------------------ */

/* What a committed message does to the in-memory leases (leases.h): applied only once its transaction commits. */
typedef enum { LEASE_NONE, LEASE_PUT, LEASE_DROP, LEASE_TOUCH } LeaseOp;

typedef struct {
    Peer peer;
    XqfMsg in, out;
    bool reply;
    bool decoded;                    /* in is a message (else out is the refusal) */
    bool notice_update;              /* after the reply (a welcome), the update notice (S->update) */
    LeaseOp lease_op;
    int64_t lease_token, lease_task, lease_worker;
} Item;

/* Status requests a second, for all workers and tools together (a few people watching), and for one key. */
#define STATUS_PER_SECOND 5
#define STATUS_PER_KEY_SECOND 1
#define STR_OF_(x) #x
#define STR_OF(x) STR_OF_(x)

struct Server {
    ServerConfig cfg_copy;
    const ServerConfig *cfg;         /* &cfg_copy */
    TransportSecurity security;      /* cfg's, with the defaults that depend on other settings filled in */
    atomic_bool stop;                /* server_stop */
    bool schema_refused;             /* the database's schema does not suit this coordinator */
    Transport *transport;
    Store *store;
    Sched *sched;
    Peers peers;
    Leases leases;                   /* every task lease's deadline (heartbeats extend them here only) */
    int64_t expired;                 /* leases re-queued by their in-memory deadline since the start */
    int64_t heartbeats;              /* task heartbeats answered since the start */
    RateLimit *limit;                /* messages per key */
    RateLimit *status_limit;         /* status requests, all keys together: each runs the status queries */
    RateLimit *status_key_limit;     /* and per key, so that no key spends the whole of it */
    int64_t bench_refreshed_ms;      /* the scheduler last refreshed for a bench refusal */
    RateLimit *hello_limit;          /* hellos per key (cfg.key_hellos a minute) */
    int64_t hellos_refused, key_leases_capped;
    Notes notes;                     /* limits hit, logged once a minute per kind */
    int64_t chunks_refused, leases_capped;
    uint64_t frames_taken;           /* frames taken since the start (numbers the messages) */
    int taken;                       /* of the batch being handled */
    int64_t backoff_ms, next_connect_ms;
    int64_t next_expire_ms;          /* expired leases re-queued then */
    size_t expire_batch;             /* leases in the next expiry statement (leases_batch_next) */
    int64_t last_tick_ms;            /* the previous timers(): a much longer gap is a stall */
    int64_t overdue_since_ms;        /* expiry waiting for the queue to drain since then (0: not waiting) */
    int64_t expiry_failing_since_ms; /* the expiry's statements fail since then (0: they do not) */
    int64_t last_busy_ms;            /* the last batch with a message */
    int64_t last_trim_ms;            /* the heap last trimmed then (0: never) */
    bool busy_since_trim;            /* a message came since */
    int64_t closed_at_trim;          /* peers.disconnected then */
    int64_t test_stall_ms;           /* XQF_TEST_STALL_MS: one stall, in the first batch with a heartbeat */
    LoadStats load;
    int batch;                       /* items' length */
    Item *items;                     /* the batch being handled */
    XqfBuf frame, buf;               /* a frame in, a reply out */
    uint8_t *chunk;                  /* XQF_CHUNK_MAX bytes for build chunks, made when first asked */
    Metrics *metrics;                /* --metrics (NULL: none; metrics_* then do nothing) */
    Release release;                 /* --worker-release's signature file (protocol 0: no release) */
    uint8_t *release_bytes;          /* its binary, served from memory to the workers that update */
    size_t release_len;
    XqfMsg update;                   /* the update notice sent after each welcome of an older worker */
    int64_t gauges_ms;               /* the gauges last published */
};

/* Replay audits travel as tasks whose id has STORE_AUDIT_BIT (store.h). */
static const uint64_t AUDIT_BIT = (uint64_t)STORE_AUDIT_BIT;
static bool is_audit(uint64_t task_id) { return (task_id & AUDIT_BIT) != 0; }

/* A task's heartbeat is answered from memory (leases.h); an audit's lease still lives in the database. */
static bool needs_db(const XqfMsg *m)
{
    XqfMsgType t = m->type;
    return t == XQF_MSG_HELLO || t == XQF_MSG_TASK_REQUEST || t == XQF_MSG_RESULT ||
           (t == XQF_MSG_HEARTBEAT && is_audit(m->u.heartbeat.task_id)) || t == XQF_MSG_HANDBACK ||
           t == XQF_MSG_STATUS_REQUEST || t == XQF_MSG_BUILD_REQUEST || t == XQF_MSG_BENCH;
}

static void lease_op(Item *it, LeaseOp op, int64_t token, int64_t task, int64_t worker)
{
    it->lease_op = op;
    it->lease_token = token;
    it->lease_task = task;
    it->lease_worker = worker;
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
    it->lease_op = LEASE_NONE;
}

/* Whether every one of n counts is in [0, max]. */
static bool counts_within(const int64_t *v, uint32_t n, int64_t max)
{
    for (uint32_t i = 0; i < n; i++)
        if (v[i] < 0 || v[i] > max)
            return false;
    return true;
}

/*
 * Checks a result's shape and ranges before it reaches the database: no
 * task has more than XQF_TASK_PAIRS_MAX pairs, so no count can exceed its
 * games and no sum can overflow a bigint (the database then checks them
 * against the task's own pairs).
 */
static bool result_shape_ok(const XqfMsg_result *r)
{
    int64_t games = 2 * r->pairs;
    const int64_t wdl[3] = { r->wins, r->draws, r->losses };
    return r->penta.count == 5 && r->reasons.count <= STORE_REASONS && r->pairs >= 0 &&
           r->pairs <= XQF_TASK_PAIRS_MAX && r->games_from >= 0 && r->games_from <= r->pairs &&
           counts_within(wdl, 3, games) &&
           counts_within(r->penta.v, 5, r->pairs) && counts_within(r->reasons.v, r->reasons.count, games) &&
           r->task_id <= INT64_MAX && r->lease <= INT64_MAX;
}

/* The length of s cut to at most max bytes without splitting a UTF-8 character (s is valid UTF-8). */
static size_t utf8_cut(const char *s, size_t max)
{
    size_t len = strlen(s);
    if (len <= max)
        return len;
    while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
        max--;
    return max;
}

/*
 * The name a worker is recorded under: asked, or under CURVE (user, its
 * key's allow-list name, not "") asked when it is user or starts with
 * "user/", else "user/asked" cut to XQF_NAME_MAX bytes.
 */
static void worker_name(const char *user, const char *asked, char out[XQF_NAME_MAX + 1])
{
    size_t u = strlen(user);
    if (!u || (strncmp(asked, user, u) == 0 && (asked[u] == '\0' || asked[u] == '/'))) {
        snprintf(out, XQF_NAME_MAX + 1, "%s", asked);
        return;
    }
    char full[2 * XQF_NAME_MAX + 2];
    snprintf(full, sizeof full, "%s/%s", user, asked);
    size_t len = utf8_cut(full, XQF_NAME_MAX);
    memcpy(out, full, len);
    out[len] = '\0';
}

/*
 * Whether a peer may have the chunk b asks for now: NULL, or why not.
 * One chunk is in flight per peer, and asking for the next is no proof
 * that the last arrived: a client may ask for every offset in a row and
 * read nothing, each chunk then waiting in ZeroMQ's queue for it (up to
 * TRANSPORT_SNDHWM of them).  So where the connection's TCP counters can
 * be read (acked, transport_sent), a chunk goes out only once the peer's
 * TCP acknowledged, since the last one was queued, as many bytes as that
 * one held (c->due): credit-based flow control, as HTTP/2's windows (RFC
 * 9113, section 6.9), the credit being the kernel's own acknowledgements.
 * A peer that does not read then holds at most about two chunks here; the
 * rest of what it asked waits unsent, or in its own buffers.  Where they
 * cannot (ipc), asking for the bytes after the last acknowledges it; one
 * unacknowledged for CHUNK_LOST_MS is lost (asked again, or the peer
 * moved on); after CHUNK_LOST_MAX lost in a row the peer gets no more on
 * this connection.
 */
static const char *chunk_allowed(PeerChunk *c, const XqfMsg_build_request *b, int64_t now, uint64_t by,
                                 const uint64_t *acked)
{
    if (c->sha256[0] && c->by == by)
        return NULL;                 /* the same message again (its transaction redone) */
    if (c->sha256[0] && c->due)
        return acked && *acked >= c->due
                   ? NULL
                   : "build_request: the last chunk sent has not reached you yet: ask again once it has (retry later)";
    if (c->lost >= CHUNK_LOST_MAX)
        return "build_request: chunks sent were never acknowledged: no more on this connection";
    if (!c->sha256[0])
        return NULL;
    if (strcmp(c->sha256, b->sha256) == 0 && b->offset == c->next) {
        c->lost = 0;
        return NULL;
    }
    if (now - c->sent_ms >= CHUNK_LOST_MS) {
        c->lost++;
        return c->lost >= CHUNK_LOST_MAX ? "build_request: chunks sent were never acknowledged: no more on this connection" : NULL;
    }
    return "build_request: one chunk at a time: ask for the next after receiving the last (retry later)";
}

/* Whether text is a SHA-256 in hex (64 lowercase hex digits), as the builds table keeps them. */
static bool valid_sha(const char *text)
{
    return strlen(text) == 64 && strspn(text, "0123456789abcdef") == 64;
}

/*
 * Whether the replay of audit (lease token, by worker) starts from its
 * pair's opening, as results do (sched_check_records).  Records from
 * elsewhere are the auditor's fault: judged against the pair's stored
 * games they would differ and flag the honest worker that played them
 * first.  1 (or not this lease: the report is stale), 0, or -1.
 */
static int audit_from_opening(Server *S, const XqfMsg_result *r, int64_t worker, int64_t audit)
{
    int64_t run, pair;
    int rc = store_audit_start(S->store, worker, audit, (int64_t)r->lease, &run, &pair);
    if (rc <= 0)
        return rc < 0 ? -1 : 1;
    char why[256];
    rc = sched_check_records(S->sched, run, pair, r->games.data, r->games.len, why, sizeof why);
    if (rc == 0) {
        char tail[NOTES_MORE_MAX];
        if (notes_due(&S->notes, "audit records from elsewhere", tail))
            log_warn("worker %lld: replay audit %lld: invalid, its records are not the pair's games: %s%s",
                     (long long)worker, (long long)audit, why, tail);
    }
    return rc;
}

/* The replay of an audit: judged against the pair's stored games, answered as a result is. 0 or -1. */
static int audit_result(Server *S, Item *it, int64_t worker)
{
    const XqfMsg_result *r = &it->in.u.result;
    int64_t audit = (int64_t)(r->task_id & ~AUDIT_BIT);
    if (r->pairs == 0) {
        make_ack(&it->out, r->task_id, r->lease, "duplicate", 0, false);
        return 0;
    }
    /* its one pair's two records, from its start and from the pair's opening */
    int from = r->games_from != 0 ? 0 : audit_from_opening(S, r, worker, audit);
    if (from < 0)
        return -1;
    StoreAuditStatus st = from == 0 ? AUDIT_INVALID
                                    : store_audit_report(S->store, worker, audit, (int64_t)r->lease, r->games.data,
                                                         r->games.len);
    if (st == AUDIT_ERROR)
        return -1;
    if (st == AUDIT_MISMATCH)
        log_warn("replay audit %lld: worker %lld played its pair otherwise than the first worker",
                 (long long)audit, (long long)worker);
    make_ack(&it->out, r->task_id, r->lease,
             st == AUDIT_STALE ? "stale" : st == AUDIT_INVALID ? "invalid" : "accepted", r->pairs, st == AUDIT_STALE);
    return 0;
}

/*
 * Answers build request b (message by) of peer e with len bytes of data
 * from its offset, of an artifact of total bytes named and signed so; the
 * chunk is then in flight (written: the connection's bytes written before
 * it, NULL when not measured).  0, or -1 out of memory.
 */
static int chunk_reply(Item *it, PeerEntry *e, const XqfMsg_build_request *b, uint64_t by, const uint64_t *written,
                       const char *name, const char *signature, uint64_t total, const uint8_t *data, size_t len)
{
    snprintf(e->chunk.sha256, sizeof e->chunk.sha256, "%s", b->sha256);
    e->chunk.offset = b->offset;
    e->chunk.next = b->offset + len;
    e->chunk.sent_ms = clock_now_ms();
    e->chunk.by = by;
    e->chunk.due = written ? *written + len : 0;
    xqf_msg_init(&it->out, XQF_MSG_BUILD_CHUNK);
    XqfMsg_build_chunk *c = &it->out.u.build_chunk;
    snprintf(c->sha256, sizeof c->sha256, "%s", b->sha256);
    c->offset = b->offset;
    c->total = total;
    snprintf(c->name, sizeof c->name, "%s", name);
    snprintf(c->signature, sizeof c->signature, "%s", signature);
    snprintf(c->kind, sizeof c->kind, "%s", b->kind);
    return xqf_bin_set(&c->data, data, len);
}

/*
 * A chunk of the worker release (--worker-release), from memory: the one
 * release served, to any worker that said hello (the worker checks its
 * signature; the bytes are no secret).  0, or -1 out of memory.
 */
static int release_chunk(Server *S, Item *it, PeerEntry *e, const XqfMsg_build_request *b, uint64_t by,
                         const uint64_t *written)
{
    if (!S->release.protocol || strcmp(b->sha256, S->release.sha256) != 0 || b->offset > S->release_len) {
        char tail[NOTES_MORE_MAX];
        if (notes_due(&S->notes, "release not served", tail))
            log_warn("worker release %.64s (from byte %llu) asked for: not the one served (--worker-release), "
                     "or past its end%s", b->sha256, (unsigned long long)b->offset, tail);
        refuse(it, XQF_ERR_REFUSED, "build_request: no such worker release served (--worker-release), or offset "
                                    "past its end");
        return 0;
    }
    size_t len = S->release_len - b->offset < XQF_CHUNK_MAX ? S->release_len - b->offset : XQF_CHUNK_MAX;
    return chunk_reply(it, e, b, by, written, S->release.name, S->release.signature, S->release_len,
                       S->release_bytes + b->offset, len);
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
        char name[XQF_NAME_MAX + 1];
        if (!h->name[0] || h->cores > 1 << 16 || h->concurrency > 1 << 16) {
            refuse(it, XQF_ERR_REFUSED, "hello: a name, and sane cores and concurrency, please");
            return 0;
        }
        /* under CURVE the name is tied to the connection's key (its allow-list name, as a prefix) */
        worker_name(it->peer.user, h->name, name);
        /*
         * Each hello is a transaction and may evict a worker for a newcomer:
         * a key saying hello in a loop (one name after another) would churn
         * the workers of every key.  Plaintext: per name, each its own key.
         */
        const char *key = it->peer.user[0] ? it->peer.user : name;
        if (!ratelimit_take(S->hello_limit, ratelimit_key(key, strlen(key)), clock_now_ms())) {
            S->hellos_refused++;
            char tail[NOTES_MORE_MAX];
            if (notes_due(&S->notes, "hellos per key", tail))
                log_warn("key %s: hello as %s refused: over %.0f hellos a minute (--key-hellos)%s", key, name,
                         S->cfg->key_hellos, tail);
            refuse(it, XQF_ERR_LIMIT, "hello: too many hellos from this key (--key-hellos a minute): retry later");
            return 0;
        }
        /*
         * A worker's leases are bounded by the concurrency it announces, kept
         * alive by its heartbeats: one announcing 65,536 could hold a run's
         * every task.  Held to what a real machine plays side by side.
         */
        int cap = S->cfg->max_concurrency > 0 ? S->cfg->max_concurrency : SERVER_MAX_CONCURRENCY_DEFAULT;
        int concurrency = h->concurrency > (uint64_t)cap ? cap : (int)h->concurrency;
        if (concurrency < (int)h->concurrency)
            log_warn("worker %s announced a concurrency of %llu: held to %d (--max-concurrency)", name,
                     (unsigned long long)h->concurrency, cap);
        int rc = store_hello_capped(S->store, name, h->build, (int)h->cores, concurrency, it->peer.user,
                                    NAMES_PER_KEY, &id);
        if (rc == -2) {
            char tail[NOTES_MORE_MAX];
            if (notes_due(&S->notes, "names per key", tail))
                log_warn("key %s: hello as %s refused: the key has %d worker names already%s", it->peer.user, name,
                         NAMES_PER_KEY, tail);
            refuse(it, XQF_ERR_LIMIT, "hello: this key has as many worker names as it may (reuse one)");
            return 0;
        }
        if (rc < 0)
            return -1;
        if (rc == 0) {
            log_warn("worker %s: hello refused, the name belongs to another key than %s", name,
                     it->peer.user[0] ? it->peer.user : "none");
            refuse(it, XQF_ERR_REFUSED, "hello: this worker name belongs to another key");
            return 0;
        }
        rc = peer_set(&S->peers, &it->peer, id, h->build, concurrency);
        if (rc == -2) {
            refuse(it, XQF_ERR_LIMIT, "hello: the coordinator has as many workers as it takes (--max-peers): retry later");
            return 0;
        }
        if (rc == -3) {
            refuse(it, XQF_ERR_LIMIT, "hello: this key has as many workers connected as it may (--key-peers): retry later");
            return 0;
        }
        if (rc != 0)
            return -1;
        PeerEntry *entry = peer_find(&S->peers, &it->peer);
        if (entry)
            entry->protocol = in->version;
        xqf_msg_init(&it->out, XQF_MSG_WELCOME);
        it->out.u.welcome.worker_id = (uint64_t)id;
        it->out.u.welcome.lease_ms = (uint64_t)lease_ms;
        it->out.u.welcome.heartbeat_ms = (uint64_t)S->peers.heartbeat_ms;
        log_info("worker %s (id %lld, build %s, %llu cores, protocol %u%s%s) said hello", name, (long long)id,
                 h->build, (unsigned long long)h->cores, in->version, it->peer.user[0] ? ", key " : "",
                 it->peer.user);
        /* an older worker is told, on each hello, of the release it may update itself to */
        it->notice_update = S->release.protocol > in->version;
        return 0;
    }
    case XQF_MSG_HEARTBEAT: {
        const XqfMsg_heartbeat *h = &in->u.heartbeat;
        PeerEntry *e = peer_find(&S->peers, &it->peer);
        if (!e) {
            refuse(it, XQF_ERR_NEED_HELLO, "heartbeat: say hello first");
            return 0;
        }
        /* an audit's (a task's is answered by handle_local) */
        int rc = h->task_id > INT64_MAX || h->lease > INT64_MAX
                     ? 0
                     : store_audit_heartbeat(S->store, e->worker, (int64_t)(h->task_id & ~AUDIT_BIT),
                                             (int64_t)h->lease, lease_ms);
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
        int rc = h->task_id > INT64_MAX || h->lease > INT64_MAX ? 0
                 : is_audit(h->task_id) ? store_audit_handback(S->store, e->worker, (int64_t)(h->task_id & ~AUDIT_BIT),
                                                               (int64_t)h->lease)
                                        : store_handback(S->store, e->worker, (int64_t)h->task_id, (int64_t)h->lease,
                                                         h->reason, h->refused, S->cfg->quarantine_after);
        if (rc < 0)
            return -1;
        if (rc == 2)
            log_warn("task %llu quarantined: refused by %d keys (or every key of the cluster), the last by worker "
                     "%lld: %s", (unsigned long long)h->task_id, S->cfg->quarantine_after, (long long)e->worker,
                     h->reason);
        else if (rc > 0)
            log_info("task %llu handed back%s: %s", (unsigned long long)h->task_id,
                     h->refused ? " (refused)" : "", h->reason);
        if (rc > 0)
            sched_invalidate(S->sched);
        if (rc > 0 && !is_audit(h->task_id))
            lease_op(it, LEASE_DROP, (int64_t)h->lease, (int64_t)h->task_id, e->worker);
        /*
         * A worker hands a task back when it gave its build up (a refused
         * signature, a failed fetch): the chunk it last got is no longer
         * awaited, and its next task may fetch a build from the start.
         */
        if (rc > 0 && h->refused)
            e->chunk.sha256[0] = '\0';
        make_ack(&it->out, h->task_id, h->lease, rc ? "ok" : "stale", 0, true);
        return 0;
    }
    case XQF_MSG_BENCH: {
        /* A worker's bench of a build: its speed, or a refusal that keeps the build from it (sched.c). */
        const XqfMsg_bench *b = &in->u.bench;
        PeerEntry *e = peer_find(&S->peers, &it->peer);
        it->reply = false;
        if (!e || (b->sha256[0] && !valid_sha(b->sha256)) || b->nodes < 0 || b->nps < 0) {
            log_warn("a bench report ignored (%s)", e ? "bad values" : "no hello");
            return 0;
        }
        /*
         * Taken only for a build or net handed out now (or the worker's own
         * engine): each report is a row, and any well-formed SHA-256 would
         * do, a thousand a second a key.  A refusal is logged and refreshes
         * the scheduler only when it changed, the lines at most once a
         * minute with a count (notes), the refreshes at most once a
         * BENCH_REFRESH_MS (the periodic refresh, REFRESH_EVERY_MS, picks
         * up one left over).
         */
        int rc = store_worker_bench(S->store, e->worker, b->sha256, b->nodes, b->nps, b->refused);
        if (rc < 0)
            return -1;
        char tail[NOTES_MORE_MAX];
        if (rc == 0 && notes_due(&S->notes, "bench not due", tail))
            log_warn("worker %lld: a bench report of %.16s ignored: no run hands it out%s", (long long)e->worker,
                     b->sha256, tail);
        if (rc == 2 && b->refused[0] && notes_due(&S->notes, "bench refusals", tail))
            log_warn("worker %lld refuses build %.16s: %s%s", (long long)e->worker, b->sha256, b->refused, tail);
        int64_t now = clock_now_ms();
        if (rc == 2 && now - S->bench_refreshed_ms >= BENCH_REFRESH_MS) {
            S->bench_refreshed_ms = now;
            sched_invalidate(S->sched);
        }
        return 0;
    }
    case XQF_MSG_BUILD_REQUEST: {
        const XqfMsg_build_request *b = &in->u.build_request;
        PeerEntry *e = peer_find(&S->peers, &it->peer);
        if (!e) {
            refuse(it, XQF_ERR_NEED_HELLO, "build_request: say hello first");
            return 0;
        }
        uint64_t by = S->frames_taken - (uint64_t)S->taken + (uint64_t)(it - S->items), written = 0, acked = 0;
        bool measured = transport_sent(S->transport, &it->peer, &written, &acked) == 0;
        const char *why = chunk_allowed(&e->chunk, b, clock_now_ms(), by, measured ? &acked : NULL);
        if (why) {
            S->chunks_refused++;
            char tail[NOTES_MORE_MAX];
            if (notes_due(&S->notes, "chunk in flight", tail))
                log_warn("worker %lld: build_request refused: %s%s", (long long)e->worker, why, tail);
            refuse(it, XQF_ERR_LIMIT, why);
            return 0;
        }
        if (!S->chunk && !(S->chunk = malloc(XQF_CHUNK_MAX)))
            return -1;
        size_t len = 0;
        int64_t total = 0;
        char name[STORE_NAME_MAX + 1] = "", signature[STORE_SIG_HEX + 1] = "";
        /* builds and nets travel alike (content addressed, signed, chunked); only their tables differ */
        bool net = strcmp(b->kind, "net") == 0;
        if (strcmp(b->kind, "worker") == 0)
            return release_chunk(S, it, e, b, by, measured ? &written : NULL);
        if (!net && strcmp(b->kind, "build") != 0) {
            refuse(it, XQF_ERR_REFUSED, "build_request: kind must be \"build\", \"net\" or \"worker\"");
            return 0;
        }
        /*
         * Only what a worker may be given now (store_artifact_due): a test
         * nobody approved has its builds stored, and any allow-listed key
         * could read them by SHA-256.  A worker still holding a lease of a
         * run that just ended needs none: its task is stopped at its next
         * heartbeat.  Offsets past any blob never reach the database (an
         * int4 there).
         */
        int rc = b->offset >= INT32_MAX ? 0 : store_artifact_due(S->store, b->sha256);
        if (rc < 0)
            return -1;
        rc = rc == 0 ? 0
                 : net ? store_net_chunk(S->store, b->sha256, (int64_t)b->offset, XQF_CHUNK_MAX, S->chunk, &len,
                                         &total, name, signature)
                       : store_build_chunk(S->store, b->sha256, (int64_t)b->offset, XQF_CHUNK_MAX, S->chunk, &len,
                                           &total, name, signature);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            char tail[NOTES_MORE_MAX];
            if (notes_due(&S->notes, "artifact not served", tail))
                log_warn("%s %.64s (from byte %llu) asked for: not stored, no run hands it out, or past its end%s",
                         b->kind, b->sha256, (unsigned long long)b->offset, tail);
            refuse(it, XQF_ERR_REFUSED,
                   net ? "build_request: no such net handed out (stored, and a player of an active run), or offset "
                         "past its end"
                       : "build_request: no such build handed out (stored, and a player of an active run), or offset "
                         "past its end");
            return 0;
        }
        return chunk_reply(it, e, b, by, measured ? &written : NULL, name, signature, (uint64_t)total, S->chunk,
                           len);
    }
    case XQF_MSG_STATUS_REQUEST: {
        const PeerEntry *e = peer_find(&S->peers, &it->peer);
        if (!e) {
            refuse(it, XQF_ERR_NEED_HELLO, "status_request: say hello first");
            return 0;
        }
        /*
         * The status queries read every run and worker: at the message rate
         * limit (1,000 a second a key) they would be the database's whole
         * load.  A few a second for everyone together is what people watch,
         * and one a second a key first: against the shared bound alone, one
         * key asking without a pause would take every answer.
         */
        if (!ratelimit_take(S->status_key_limit, e->key, clock_now_ms())) {
            refuse(it, XQF_ERR_LIMIT, "status_request: at most " STR_OF(STATUS_PER_KEY_SECOND)
                                      " a second a key: retry in a moment");
            return 0;
        }
        if (!ratelimit_take(S->status_limit, 0, clock_now_ms())) {
            refuse(it, XQF_ERR_LIMIT, "status_request: at most " STR_OF(STATUS_PER_SECOND)
                                      " a second (all together): retry in a moment");
            return 0;
        }
        xqf_msg_init(&it->out, XQF_MSG_STATUS);
        return status_lines(S->store, (int)(in->u.status_request.max_runs > 1000 ? 1000 : in->u.status_request.max_runs),
                            &it->out.u.status.workers, &it->out.u.status.runs);
    }
    default:
        return 0;
    }
}

/*
 * Answers invalid the results among rep (m items, rep[k] of items[of[k]])
 * whose game records do not start as their task gave them to be played
 * (sched_check_records: the opening of each pair, a data run's random
 * plies), and drops them from rep and of.  Returns the items left, or -1
 * on a database error.
 */
static int records_from_openings(Server *S, Item *items, StoreReportItem *rep, int *of, int m)
{
    int64_t *run = malloc(sizeof *run * (size_t)m), *first = malloc(sizeof *first * (size_t)m);
    int left = 0, rc = run && first && store_lease_starts(S->store, rep, m, run, first) == 0 ? 0 : -1;
    for (int k = 0; rc == 0 && k < m; k++) {
        char why[256];
        int ok = run[k] && rep[k].games_len ? sched_check_records(S->sched, run[k], first[k] + rep[k].games_from,
                                                                  rep[k].games, rep[k].games_len, why, sizeof why)
                                            : 1;
        if (ok < 0) {
            rc = -1;
        } else if (ok == 0) {
            Item *it = &items[of[k]];
            const XqfMsg_result *r = &it->in.u.result;
            char tail[NOTES_MORE_MAX];
            if (notes_due(&S->notes, "records from elsewhere", tail))
                log_warn("worker %lld: task %llu: result invalid, its records are not the task's games: %s%s",
                         (long long)rep[k].worker, (unsigned long long)r->task_id, why, tail);
            make_ack(&it->out, r->task_id, r->lease, "invalid", r->pairs, false);
        } else {
            rep[left] = rep[k];
            of[left++] = of[k];
        }
    }
    free(run);
    free(first);
    return rc == 0 ? left : -1;
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
        if (is_audit(r->task_id)) {
            rc = audit_result(S, it, e->worker);
            continue;
        }
        StoreReportItem *x = &rep[m];
        *x = (StoreReportItem){ .worker = e->worker, .task = (int64_t)r->task_id, .token = (int64_t)r->lease,
                                .games = r->games.data, .games_len = r->games.len,
                                .games_from = r->games_from };
        x->counts = (StoreCounts){ r->pairs, r->wins, r->draws, r->losses, { 0 }, (int)r->reasons.count, { 0 } };
        memcpy(x->counts.penta, r->penta.v, sizeof x->counts.penta);
        memcpy(x->counts.reasons, r->reasons.v, sizeof(int64_t) * r->reasons.count);
        of[m++] = i;
    }
    if (rc == 0 && m > 0 && (m = records_from_openings(S, items, rep, of, m)) < 0) {
        m = 0;
        rc = -1;
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
            log_warn("worker %lld: task %llu: result invalid: impossible counts, or counts its records do not carry "
                     "(%lld pairs, %lld/%lld/%lld; %u bytes of records from pair %lld)",
                     (long long)x->worker, (unsigned long long)r->task_id, (long long)r->pairs, (long long)r->wins,
                     (long long)r->draws, (long long)r->losses, (unsigned)r->games.len, (long long)r->games_from);
        make_ack(&it->out, r->task_id, r->lease, store_report_text(x->status), r->pairs,
                 x->status == REPORT_STALE);
        /* an accepted result is a sign of life, as a heartbeat; the last one ends the lease */
        if (x->status == REPORT_ACCEPTED)
            lease_op(it, x->task_done ? LEASE_DROP : LEASE_TOUCH, x->token, x->task, x->worker);
    }
    free(rep);
    free(of);
    return rc;
}

/* Answers a task request idle: its worker or key holds its most leases, it asks again in CAPPED_RETRY_MS. */
static void capped(Item *it)
{
    xqf_msg_free(&it->out);
    xqf_msg_init(&it->out, XQF_MSG_IDLE);
    it->out.u.idle.slot = it->in.u.task_request.slot;
    it->out.u.idle.retry_ms = CAPPED_RETRY_MS;
    it->reply = true;
}

/*
 * Answers idle the task requests of items whose worker holds its most
 * leases already (LEASES_PER_SLOT x its concurrency) or whose key does
 * (cfg.key_leases), counting the requests before it in the batch, and
 * "say hello first" those of unknown peers.  Returns the requests left,
 * as asks for the scheduler (their keys' leases in them), their items in
 * of; -1 on a database error.
 */
static int capped_requests(Server *S, Item *items, int n, SchedAsk *asks, int *of)
{
    int m = 0;
    int64_t *workers = malloc(sizeof *workers * (size_t)(n > 0 ? n : 1));
    if (!workers)
        return -1;
    for (int i = 0; i < n; i++) {
        Item *it = &items[i];
        if (it->in.type != XQF_MSG_TASK_REQUEST)
            continue;
        PeerEntry *e = peer_find(&S->peers, &it->peer);
        if (!e) {
            refuse(it, XQF_ERR_NEED_HELLO, "task_request: say hello first");
            continue;
        }
        asks[m] = (SchedAsk){ .worker = e->worker, .build = e->build, .key = e->key, .concurrency = e->concurrency };
        workers[m] = e->worker;
        of[m++] = i;
    }
    int64_t *held = malloc(sizeof *held * (size_t)(m > 0 ? m : 1)), *keyed = malloc(sizeof *keyed * (size_t)(m > 0 ? m : 1));
    if (!held || !keyed || (m > 0 && store_leased_counts(S->store, workers, m, held, keyed) != 0)) {
        free(workers);
        free(held);
        free(keyed);
        return -1;
    }
    int left = 0;
    int64_t key_cap = S->cfg->key_leases > 0 ? S->cfg->key_leases : SERVER_KEY_LEASES_DEFAULT;
    for (int k = 0; k < m; k++) {
        Item *it = &items[of[k]];
        const PeerEntry *e = peer_find(&S->peers, &it->peer);
        int64_t cap = LEASES_PER_SLOT * (int64_t)(e->concurrency > 0 ? e->concurrency : 1), asked = 0, key_asked = 0;
        for (int j = 0; j < left; j++) {
            asked += asks[j].worker == asks[k].worker;
            key_asked += asks[j].key == asks[k].key;
        }
        char tail[NOTES_MORE_MAX];
        if (held[k] + asked >= cap) {
            S->leases_capped++;
            if (notes_due(&S->notes, "lease cap", tail))
                log_warn("worker %lld holds %lld leases, its most (%d per slot): no more until it returns some%s",
                         (long long)asks[k].worker, (long long)(held[k] + asked), LEASES_PER_SLOT, tail);
            capped(it);
            continue;
        }
        if (keyed[k] + key_asked >= key_cap) {
            S->key_leases_capped++;
            if (notes_due(&S->notes, "key lease cap", tail))
                log_warn("key %s holds %lld leases, its most (--key-leases): no more for its workers until it "
                         "returns some%s", it->peer.user[0] ? it->peer.user : "(plaintext worker)",
                         (long long)(keyed[k] + key_asked), tail);
            capped(it);
            continue;
        }
        asks[left] = asks[k];
        asks[left].key_leases = keyed[k];
        of[left++] = of[k];
    }
    free(workers);
    free(held);
    free(keyed);
    return left;
}

/* The task requests of a batch, each run serving its share in one statement. 0 or -1. */
static int handle_requests(Server *S, Item *items, int n)
{
    SchedAsk *asks = malloc(sizeof *asks * (size_t)(n > 0 ? n : 1));
    XqfMsg *out = malloc(sizeof *out * (size_t)(n > 0 ? n : 1));
    int *of = malloc(sizeof *of * (size_t)(n > 0 ? n : 1));
    int m = 0, rc = asks && out && of ? 0 : -1;
    if (rc == 0 && (m = capped_requests(S, items, n, asks, of)) < 0) {
        m = 0;
        rc = -1;
    }
    for (int k = 0; k < m; k++)
        xqf_msg_init(&out[k], XQF_MSG_NONE);
    /* the keys sharing the cluster: those with a worker connected */
    int keys = (int)peers_keys(&S->peers);
    if (rc == 0 && m > 0 && sched_claim_batch(S->sched, asks, m, keys, S->cfg->lease_ms, out) != 0)
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
            if (!is_audit(it->out.u.task.task_id))
                lease_op(it, LEASE_PUT, (int64_t)it->out.u.task.lease, (int64_t)it->out.u.task.task_id,
                         asks[k].worker);
            log_debug("task %llu (run %llu, %lld pairs) leased", (unsigned long long)it->out.u.task.task_id,
                      (unsigned long long)it->out.u.task.run_id, (long long)it->out.u.task.pairs);
        } else {
            it->out.u.idle.slot = it->in.u.task_request.slot;
        }
    }
    free(asks);
    free(out);
    free(of);
    return rc;
}

static bool is_single(const XqfMsg *m)
{
    return needs_db(m) && m->type != XQF_MSG_RESULT && m->type != XQF_MSG_TASK_REQUEST;
}
static bool is_result(const XqfMsg *m) { return m->type == XQF_MSG_RESULT; }
static bool is_request(const XqfMsg *m) { return m->type == XQF_MSG_TASK_REQUEST; }

/* The messages that take one statement each (hello, heartbeat, ...), in order. 0 or -1. */
static int handle_singles(Server *S, Item *items, int n)
{
    for (int i = 0; i < n; i++)
        if (is_single(&items[i].in) && handle_db(S, &items[i]) != 0)
            return -1;
    return 0;
}

typedef int (*Phase)(Server *S, Item *items, int n);

/*
 * Runs a phase of the batch (the messages `mine` picks) under a savepoint.
 * A statement that fails (the input was checked before, so this is the
 * rare case: a constraint, a bug) undoes that phase alone, which is redone
 * message by message, each under a savepoint of its own: the one whose
 * statement fails is refused, the rest of the batch stands.  0, or -1
 * when the transaction cannot go on (the connection is lost).
 */
static int guarded(Server *S, Item *items, int n, Phase phase, bool (*mine)(const XqfMsg *))
{
    int count = 0;
    for (int i = 0; i < n; i++)
        count += mine(&items[i].in);
    if (!count)
        return 0;
    if (store_savepoint(S->store) != 0)
        return -1;
    if (phase(S, items, n) == 0)
        return store_release(S->store);
    if (!store_ok(S->store) || store_rollback_to(S->store) != 0)
        return -1;
    sched_invalidate(S->sched);
    for (int i = 0; i < n; i++)
        if (mine(&items[i].in))
            items[i].lease_op = LEASE_NONE;      /* undone with the phase */
    log_warn("a statement failed: its %d message%s redone one by one", count, count > 1 ? "s are" : " is");
    for (int i = 0; i < n; i++) {
        Item *it = &items[i];
        if (!mine(&it->in))
            continue;
        if (store_savepoint(S->store) != 0)
            return -1;
        if (phase(S, it, 1) == 0) {
            if (store_release(S->store) != 0)
                return -1;
            continue;
        }
        if (!store_ok(S->store) || store_rollback_to(S->store) != 0 || store_release(S->store) != 0)
            return -1;
        log_warn("a %s refused: its statement failed (above)", xqf_msg_type_name(it->in.type));
        refuse(it, XQF_ERR_REFUSED, "a database statement failed on this message (the coordinator logged it)");
    }
    return store_release(S->store);
}

/*
 * Every database message of items, in one transaction the caller opened:
 * the single ones one by one, in order, then results and requests in
 * bulk, each phase guarded (a failing statement costs its message). 0 or -1.
 */
static int handle_items(Server *S, Item *items, int n)
{
    return guarded(S, items, n, handle_singles, is_single) == 0 &&
                   guarded(S, items, n, handle_results, is_result) == 0 &&
                   guarded(S, items, n, handle_requests, is_request) == 0
               ? 0
               : -1;
}

/* Handles a message that does not need the database. */
static void handle_local(Server *S, Item *it)
{
    switch (it->in.type) {
    case XQF_MSG_BYE: {
        peer_drop(&S->peers, peer_find(&S->peers, &it->peer));
        log_info("a worker left: %s", it->in.u.bye.reason);
        it->reply = false;
        break;
    }
    case XQF_MSG_ERROR:
        log_warn("a worker reports error %llu: %s", (unsigned long long)it->in.u.error.code,
                 it->in.u.error.text);
        it->reply = false;
        break;
    case XQF_MSG_UPDATE_FAILED: {
        /* a worker that refused the release runs on as it is: said once a minute per kind, with a count */
        const PeerEntry *e = peer_find(&S->peers, &it->peer);
        char tail[NOTES_MORE_MAX];
        if (e && notes_due(&S->notes, "update refused", tail))
            log_warn("worker %lld (protocol %u) refused the worker release %.16s: %s; it runs on as it is%s",
                     (long long)e->worker, it->in.version, it->in.u.update_failed.sha256,
                     it->in.u.update_failed.reason, tail);
        it->reply = false;
        break;
    }
    case XQF_MSG_HEARTBEAT: {
        /* a task's: its deadline moves in memory, the database is not written (leases.h) */
        const XqfMsg_heartbeat *h = &it->in.u.heartbeat;
        PeerEntry *e = peer_find(&S->peers, &it->peer);
        if (!e) {
            refuse(it, XQF_ERR_NEED_HELLO, "heartbeat: say hello first");
            break;
        }
        int rc = h->task_id > INT64_MAX || h->lease > INT64_MAX
                     ? 0
                     : leases_beat(&S->leases, (int64_t)h->lease, (int64_t)h->task_id, e->worker,
                                   clock_now_ms() + S->cfg->lease_ms);
        S->heartbeats++;
        metrics_add(S->metrics, METRIC_HEARTBEATS, 1);
        make_ack(&it->out, h->task_id, h->lease, rc ? "ok" : "stale", 0, rc == 0);
        it->reply = true;
        break;
    }
    default:
        refuse(it, XQF_ERR_TYPE, "this message type is not accepted by the coordinator");
        break;
    }
}

/* ---- the database's health ------------------------------------------------- */

/*
 * On every connection to the database: the leases it holds that memory
 * does not know (all of them after a restart) are taken in, and every
 * lease gets at least one lease from now, so that no worker still
 * playing is robbed by the restart or by the outage (whose results could
 * not be recorded); those not heard within that lease expire.  Returns
 * the leases now timed, or -1 (the connection failed: retried then).
 */
static int64_t adopt_leases(Server *S, int64_t now)
{
    StoreHeldLease *held = NULL;
    int n = store_leases_held(S->store, &held);
    int64_t deadline = now + S->cfg->lease_ms;
    for (int i = 0; i < n; i++)
        if (leases_adopt(&S->leases, held[i].token, held[i].task, held[i].worker, deadline) != 0) {
            log_error("leases: out of memory taking in the database's leases");
            break;
        }
    free(held);
    return n < 0 ? -1 : (int64_t)leases_extend_all(&S->leases, deadline);
}

static void ensure_connected(Server *S, int64_t now)
{
    if (store_ok(S->store) || now < S->next_connect_ms)
        return;
    int rc = store_connect(S->store);
    if (rc == STORE_SCHEMA_MISMATCH) {
        log_error("database: its schema does not suit this coordinator (see above): stopping");
        S->schema_refused = true;
        atomic_store(&S->stop, true);
        return;
    }
    if (rc == 0) {
        store_set_migrate(S->store, false);   /* migrations at start only: a reconnect checks the version */
        int64_t n = adopt_leases(S, now);
        log_info("database: connected%s as %s (%lld leases held, each given a lease from now)",
                 S->backoff_ms > BACKOFF_MIN_MS ? " again" : "", store_role(S->store), (long long)(n > 0 ? n : 0));
        if (store_owns_schema(S->store))
            log_warn("database: %s owns the schema: the coordinator needs only a member of xqf_coordinator "
                     "(docs/cluster.md, \"Database roles\")", store_role(S->store));
        S->backoff_ms = BACKOFF_MIN_MS;
        sched_invalidate(S->sched);
        return;
    }
    S->next_connect_ms = now + S->backoff_ms;
    log_warn("database: unavailable, next try in %lld ms", (long long)S->backoff_ms);
    S->backoff_ms = S->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : S->backoff_ms * 2;
}

/* The test hook XQF_TEST_STALL_MS: the first batch with a heartbeat hangs that long in its transaction. */
static void test_stall(Server *S, const Item *items, int n)
{
    for (int i = 0; i < n; i++)
        if (items[i].in.type == XQF_MSG_HEARTBEAT) {
            log_warn("test hook: stalling %lld ms in a transaction", (long long)S->test_stall_ms);
            struct timespec ts = { (time_t)(S->test_stall_ms / 1000), (long)(S->test_stall_ms % 1000) * 1000000 };
            while (nanosleep(&ts, &ts) != 0)
                ;
            S->test_stall_ms = 0;
            return;
        }
}

/*
 * What the committed messages of items did to the leases, now that it
 * stands (leases.h).  A lease's end (LEASE_DROP) waits for drop_leases,
 * after the batch's heartbeats are answered: a heartbeat sent before the
 * task's last result, and taken in the same batch, is answered ok, as
 * its order says.
 */
static void apply_leases(Server *S, Item *items, int n)
{
    int64_t deadline = clock_now_ms() + S->cfg->lease_ms;
    for (int i = 0; i < n; i++) {
        Item *it = &items[i];
        if (it->lease_op == LEASE_PUT)
            metrics_add(S->metrics, METRIC_LEASES_GIVEN, 1);
        if (it->lease_op == LEASE_PUT && leases_put(&S->leases, it->lease_token, it->lease_task, it->lease_worker,
                                                    deadline) != 0)
            log_error("leases: out of memory: lease %lld of task %lld is not timed (the next start adopts it)",
                      (long long)it->lease_token, (long long)it->lease_task);
        else if (it->lease_op == LEASE_DROP)
            continue;
        else if (it->lease_op == LEASE_TOUCH) {
            Lease *l = leases_find(&S->leases, it->lease_token);
            if (l && l->deadline_ms < deadline)
                l->deadline_ms = deadline;
        }
        it->lease_op = LEASE_NONE;
    }
}

/* The leases the committed messages of items ended, forgotten once the batch's heartbeats were answered. */
static void drop_leases(Server *S, Item *items, int n)
{
    for (int i = 0; i < n; i++)
        if (items[i].lease_op == LEASE_DROP) {
            leases_drop(&S->leases, items[i].lease_token);
            items[i].lease_op = LEASE_NONE;
        }
}

static void clear_leases(Item *items, int n)
{
    for (int i = 0; i < n; i++)
        items[i].lease_op = LEASE_NONE;
}

/* Handles a batch of decoded messages in one transaction (see server.h). */
static void handle_batch(Server *S, Item *items, int n)
{
    int64_t now = clock_now_ms();
    int db_items = 0;
    for (int i = 0; i < n; i++)
        db_items += needs_db(&items[i].in);
    if (!db_items) {
        if (S->test_stall_ms > 0)
            test_stall(S, items, n);         /* heartbeats alone: the stall outside a transaction */
        return;
    }
    ensure_connected(S, now);
    bool ok = store_ok(S->store) && sched_refresh(S->sched, now, REFRESH_EVERY_MS) == 0 &&
              store_begin(S->store) == 0;
    if (ok && handle_items(S, items, n) != 0)
        ok = false;
    if (ok && S->test_stall_ms > 0)
        test_stall(S, items, n);
    if (ok && store_commit(S->store) == 0) {
        apply_leases(S, items, n);
        if (sched_after_commit(S->sched) != 0)
            sched_invalidate(S->sched);
        return;
    }
    store_rollback(S->store);
    sched_rollback(S->sched);
    clear_leases(items, n);
    for (int i = 0; i < n; i++)
        if (items[i].in.type == XQF_MSG_HELLO)
            peer_drop(&S->peers, peer_find(&S->peers, &items[i].peer));
    /* Connection up: a statement failed; redo each message alone so that only it is refused. */
    for (int i = 0; i < n; i++) {
        Item *it = &items[i];
        if (!needs_db(&it->in))
            continue;
        bool done = store_ok(S->store) && store_begin(S->store) == 0 && handle_items(S, it, 1) == 0 &&
                    store_commit(S->store) == 0;
        if (done) {
            apply_leases(S, it, 1);
            sched_after_commit(S->sched);
            continue;
        }
        store_rollback(S->store);
        sched_rollback(S->sched);
        clear_leases(it, 1);
        refuse(it, XQF_ERR_INTERNAL, "database unavailable, retry later");
    }
}

/*
 * After a stall (the loop held up much longer than an iteration: a
 * database that hung, the machine suspended), the heartbeats that workers
 * sent meanwhile are still queued: every lease is extended by a lease
 * before any may expire, and expiry waits until the queue is drained.
 */
static void after_stall(Server *S, int64_t now)
{
    int64_t gap = now - S->last_tick_ms, stall = S->cfg->lease_ms / 4;
    S->last_tick_ms = now;
    if (gap < (stall > STALL_MIN_MS ? stall : STALL_MIN_MS))
        return;
    size_t n = leases_extend_all(&S->leases, now + S->cfg->lease_ms);
    log_warn("the loop stalled for %lld ms: %zu leases extended by a lease before any expires", (long long)gap, n);
    S->next_expire_ms = now + EXPIRE_EVERY_MS;
}

static int64_t expire_given(void *store, const int64_t *tasks, const int64_t *tokens, int n)
{
    return store_expire_given(store, tasks, tokens, n);
}

/*
 * The leases whose deadline in memory passed, re-queued in statements of
 * at most EXPIRE_BATCH_MAX (for EXPIRE_TICK_MS at most, the rest at the
 * next tick), each batch forgotten once its statement succeeded: those
 * the database had ended meanwhile are passed over there.  A statement
 * that fails (its timeout, the connection lost) leaves its leases and the
 * rest in memory for the next tick, and the next statement is half its
 * size (leases_batch_next; back up by doubling once they succeed):
 * logged when it starts failing and when it works again, not at every
 * tick.  No statement when none is
 * due.  Returns how many tasks were re-queued.
 */
static int64_t expire_leases(Server *S, int64_t now)
{
    int64_t total = 0, n = 0, start = clock_now_ms();
    size_t given;
    size_t size;
    do {
        size = S->expire_batch ? S->expire_batch : EXPIRE_BATCH_MAX;
        given = leases_expire_batch(&S->leases, now, size, expire_given, S->store, &n);
        total += n > 0 ? n : 0;
        if (given)
            S->expire_batch = leases_batch_next(size, n < 0, EXPIRE_BATCH_MIN, EXPIRE_BATCH_MAX);
    } while (n >= 0 && given == size && clock_now_ms() - start < EXPIRE_TICK_MS);
    if (n < 0 && !S->expiry_failing_since_ms) {
        S->expiry_failing_since_ms = now;
        log_warn("leases: their expiry failed (above): the %zu held stay in memory and are tried again each "
                 "second, at most %zu a statement (logged once until it works)", S->leases.count, S->expire_batch);
    } else if (n >= 0 && S->expiry_failing_since_ms) {
        log_warn("leases: their expiry works again after %lld ms", (long long)(now - S->expiry_failing_since_ms));
        S->expiry_failing_since_ms = 0;
    }
    S->expired += total;
    metrics_add(S->metrics, METRIC_LEASES_EXPIRED, total);
    return total;
}

/* Timers; drained: the last batch took every frame waiting (expiry waits for that, up to half a lease). */
static void timers(Server *S, bool drained)
{
    int64_t now = clock_now_ms();
    after_stall(S, now);
    if (store_ok(S->store) && sched_progress(S->sched, now) != 0)
        sched_invalidate(S->sched);
    if (now < S->next_expire_ms)
        return;
    if (!drained && (!S->overdue_since_ms || now - S->overdue_since_ms < S->cfg->lease_ms / 2)) {
        S->overdue_since_ms = S->overdue_since_ms ? S->overdue_since_ms : now;
        return;                      /* heartbeats still queued come first */
    }
    S->overdue_since_ms = 0;
    S->next_expire_ms = now + EXPIRE_EVERY_MS;
    ensure_connected(S, now);
    if (!store_ok(S->store))
        return;
    int64_t n = expire_leases(S, now);
    if (n > 0) {
        log_info("%lld expired leases re-queued", (long long)n);
        sched_invalidate(S->sched);
    }
}

#ifdef __GLIBC__
/* The process's resident memory in kB (/proc/self/statm), or 0. */
static long resident_kb(void)
{
    long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%ld %ld", &pages, &rss) != 2)
        rss = 0;
    if (f)
        fclose(f);
    return rss * (sysconf(_SC_PAGESIZE) / 1024);
}
#endif

/*
 * Once the loop is idle after a burst (no message for TRIM_IDLE_MS, at
 * most every TRIM_EVERY_MS), the free pages of the heap go back to the
 * system: glibc's malloc_trim(0), which in every arena also gives back
 * the whole free pages between chunks in use (madvise MADV_DONTNEED,
 * glibc 2.8 on).  A wave of workers that leaves frees its peers' ZeroMQ
 * queues in the I/O thread's arena, which keeps them: without this the
 * resident memory only rose from wave to wave while the memory in use
 * stayed the same (docs/measurements.md, "Memory over waves").  A fleet
 * that leaves while the loop stays busy (a storm: the next fleet is
 * already there) is trimmed for at once, since the loop may never be idle
 * again: TRIM_FLEET_LEFT workers' connections closed since the last trim
 * (a trim of 400 MB takes about 40 ms).
 */
static void trim_heap(Server *S, bool busy, int64_t now)
{
    int64_t left = S->peers.disconnected - S->closed_at_trim;
    bool recent = S->last_trim_ms && now - S->last_trim_ms < TRIM_EVERY_MS;
    if (busy) {
        S->last_busy_ms = now;
        S->busy_since_trim = true;
        if (left < TRIM_FLEET_LEFT || recent)
            return;
    } else if (!S->busy_since_trim || now - S->last_busy_ms < TRIM_IDLE_MS || recent) {
        return;
    }
    S->busy_since_trim = false;
    S->last_trim_ms = now;
    S->closed_at_trim = S->peers.disconnected;
#ifdef __GLIBC__
    long before = resident_kb();
    int64_t started = clock_now_us();
    malloc_trim(0);
    log_info("memory: %s, the heap trimmed in %lld ms: resident %ld -> %ld MB",
             busy ? "workers gone" : "idle", (long long)((clock_now_us() - started) / 1000), before / 1024,
             resident_kb() / 1024);
#endif
}

/* Takes a token of the frame's key (its CURVE name, or its connection): false when it is over the limit (counted, logged). */
static bool within_limit(Server *S, const Item *it)
{
    const Peer *p = &it->peer;
    uint64_t key = p->user[0] ? ratelimit_key(p->user, strlen(p->user)) : ratelimit_key(p->id, p->len);
    if (ratelimit_take(S->limit, key, clock_now_ms()))
        return true;
    metrics_add(S->metrics, METRIC_RATE_LIMITED, 1);
    char tail[NOTES_MORE_MAX], subject[KEYS_NAME_MAX + 16];
    snprintf(subject, sizeof subject, "rate %s", p->user[0] ? p->user : "plaintext");
    if (notes_due(&S->notes, subject, tail))
        log_warn("%s%s: over the rate limit (%.0f messages/s): refused, %lld so far%s",
                 p->user[0] ? "key " : "a plaintext peer", p->user, S->cfg->rate,
                 (long long)ratelimit_refused(S->limit), tail);
    return false;
}

/*
 * Refuses the first message of a connection one too many for its key
 * (transport.h: it is closed in a moment), logged once a minute per key.
 */
static void over_connections(Server *S, Item *it)
{
    char tail[NOTES_MORE_MAX], subject[KEYS_NAME_MAX + 16], text[160];
    snprintf(subject, sizeof subject, "connections %s", it->peer.user);
    if (notes_due(&S->notes, subject, tail))
        log_warn("key %s: a connection refused and closed: the key holds %d open connections, its most "
                 "(--key-connections)%s", it->peer.user, S->security.key_connections, tail);
    snprintf(text, sizeof text, "this key holds %d open connections, its most (--key-connections): this one is closed",
             S->security.key_connections);
    refuse(it, XQF_ERR_LIMIT, text);
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
        it->notice_update = false;
        it->lease_op = LEASE_NONE;
        n++;
        S->frames_taken++;
        metrics_add(S->metrics, METRIC_MESSAGES, 1);
        if (it->peer.over_connections) {
            xqf_msg_init(&it->in, XQF_MSG_NONE);
            it->decoded = false;
            over_connections(S, it);
            continue;
        }
        if (!within_limit(S, it)) {
            xqf_msg_init(&it->in, XQF_MSG_NONE);
            it->decoded = false;
            refuse(it, XQF_ERR_LIMIT, "too many messages: slow down (the coordinator's --rate-limit per key)");
            continue;
        }
        XqfDecodeStatus st = xqf_msg_decode(S->frame.data, S->frame.len, &it->in, err, sizeof err);
        unsigned version = it->in.version;
        /* a version this code decodes but the operator no longer serves (--accept-protocol) */
        if (st == XQF_DECODE_OK && version < (unsigned)S->cfg->accept_protocol) {
            st = XQF_DECODE_VERSION;
            snprintf(err, sizeof err, "protocol version %u, this coordinator serves %d-%d (--accept-protocol)", version,
                     S->cfg->accept_protocol, XQF_PROTOCOL_VERSION);
        }
        it->decoded = st == XQF_DECODE_OK;
        if (!it->decoded) {
            log_warn("refused a frame of %zu bytes: %s", S->frame.len, err);
            xqf_msg_free(&it->in);
            xqf_msg_init(&it->in, XQF_MSG_NONE);
            /* an older peer is refused in its own version, so that it can read why (error has not changed
               since version 1); a newer one in ours, which it is likelier to know than we know its */
            it->in.version = version > XQF_PROTOCOL_VERSION ? 0 : version;
            refuse(it, xqf_decode_error_code(st), err);
        }
    }
    return n;
}

/*
 * What a reply tells the metrics: a result's answer (what the worker hears
 * is what was committed, after any redo), a chunk sent.  Audits' results
 * are the auditors' and not counted.
 */
static void count_reply(Server *S, const Item *it, bool sent)
{
    if (it->in.type == XQF_MSG_RESULT && it->out.type == XQF_MSG_ACK && !is_audit(it->in.u.result.task_id)) {
        const char *status = it->out.u.ack.status;
        if (strcmp(status, "accepted") == 0) {
            metrics_add(S->metrics, METRIC_RESULTS, 1);
        } else {
            metrics_add(S->metrics, strcmp(status, "duplicate") == 0 ? METRIC_DUPLICATE
                                    : strcmp(status, "stale") == 0   ? METRIC_STALE
                                                                     : METRIC_INVALID, 1);
        }
    } else if (it->out.type == XQF_MSG_BUILD_CHUNK && sent) {
        bool net = strcmp(it->out.u.build_chunk.kind, "net") == 0;
        metrics_add(S->metrics, net ? METRIC_NET_CHUNKS : METRIC_BUILD_CHUNKS, 1);
        metrics_add(S->metrics, net ? METRIC_NET_BYTES : METRIC_BUILD_BYTES, it->out.u.build_chunk.data.len);
    }
}

/* Sends the replies of the batch and frees its messages. */
static void send_replies(Server *S, int n)
{
    for (int i = 0; i < n; i++) {
        Item *it = &S->items[i];
        /* each peer is answered in the version it speaks (one this coordinator accepts) */
        it->out.version = it->in.version;
        if (it->reply && xqf_msg_encode(&it->out, &S->buf) == 0) {
            bool sent = transport_send(S->transport, &it->peer, S->buf.data, S->buf.len) == 0;
            if (!sent && it->out.type == XQF_MSG_BUILD_CHUNK) {
                PeerEntry *e = peer_find(&S->peers, &it->peer);
                if (e)
                    e->chunk.sha256[0] = '\0';   /* not sent: not in flight */
            }
            if (S->metrics)
                count_reply(S, it, sent);
        } else if (it->reply)
            log_error("could not encode a %s reply", xqf_msg_type_name(it->out.type));
        if (it->reply && it->out.type == XQF_MSG_WELCOME && it->notice_update) {
            S->update.version = it->in.version;
            if (xqf_msg_encode(&S->update, &S->buf) == 0)
                transport_send(S->transport, &it->peer, S->buf.data, S->buf.len);
        }
        it->notice_update = false;
        xqf_msg_free(&it->in);
        xqf_msg_free(&it->out);
    }
}

/*
 * Reads the worker release FILE and FILE.release into S: the bytes must
 * be the signature file's SHA-256, of a protocol version this coordinator
 * speaks (a newer worker's frames would be refused) and newer than the
 * oldest it serves.  The signature is the workers' to check.  0, or -1
 * (logged).
 */
static int load_release(Server *S, const char *path)
{
    char sig_path[4096], why[512], hex[SHA256_HEX_LEN + 1];
    snprintf(sig_path, sizeof sig_path, "%s.release", path);
    if (release_read(sig_path, &S->release, why, sizeof why) != 0) {
        log_error("--worker-release: %s", why);
        return -1;
    }
    FILE *f = fopen(path, "rbe");
    long size = -1;
    if (f && fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    if (f && size > 0 && size <= XQF_RELEASE_MAX && fseek(f, 0, SEEK_SET) == 0 &&
        (S->release_bytes = malloc((size_t)size)) && fread(S->release_bytes, 1, (size_t)size, f) == (size_t)size)
        S->release_len = (size_t)size;
    if (f)
        fclose(f);
    const char *bad = !S->release_len ? "cannot be read, is empty or larger than 256 MiB"
                      : sha256_memory(S->release_bytes, S->release_len, hex) != 0 || strcmp(hex, S->release.sha256) != 0
                          ? "its bytes are not the SHA-256 its .release file signs (signed before a rebuild?)"
                      : S->release.protocol > XQF_PROTOCOL_VERSION
                          ? "it speaks a newer protocol than this coordinator (upgrade the coordinator first)"
                      : (int)S->release.protocol < S->cfg->accept_protocol
                          ? "it speaks a protocol older than this coordinator serves (--accept-protocol)"
                          : NULL;
    if (bad) {
        log_error("--worker-release %s (%s): %s", path, S->release.name, bad);
        S->release.protocol = 0;
        return -1;
    }
    xqf_msg_init(&S->update, XQF_MSG_UPDATE);
    snprintf(S->update.u.update.sha256, sizeof S->update.u.update.sha256, "%s", S->release.sha256);
    snprintf(S->update.u.update.name, sizeof S->update.u.update.name, "%s", S->release.name);
    S->update.u.update.protocol = S->release.protocol;
    S->update.u.update.total = S->release_len;
    log_info("worker release %s (%zu bytes, SHA-256 %.16s...) served: workers of an older protocol are told to "
             "update themselves to it", S->release.name, S->release_len, S->release.sha256);
    return 0;
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
    if (S->cfg_copy.accept_protocol <= 0)
        S->cfg_copy.accept_protocol = XQF_PROTOCOL_VERSION;
    atomic_init(&S->stop, false);
    S->backoff_ms = BACKOFF_MIN_MS;
    S->batch = cfg->batch_max > 0 ? cfg->batch_max : SERVER_BATCH_DEFAULT;
    S->peers.max = cfg->max_peers > 0 ? (size_t)cfg->max_peers : SERVER_MAX_PEERS_DEFAULT;
    S->peers.key_max = cfg->key_peers > 0 ? (size_t)cfg->key_peers : SERVER_KEY_PEERS_DEFAULT;
    /* the interval the welcome tells workers, by which the peer table judges them gone */
    S->peers.heartbeat_ms = cfg->lease_ms / 4 > 0 ? cfg->lease_ms / 4 : 1;
    /*
     * A key's connections: twice its workers (each reconnects now and
     * then); a silent one gives way to the key's newcomer after two
     * heartbeat intervals, as a worker gives way in the peer table.
     */
    S->security = cfg->security;
    if (S->security.key_connections <= 0)
        S->security.key_connections = 2 * (int)S->peers.key_max;
    if (S->security.quiet_ms <= 0)
        S->security.quiet_ms = 2 * S->peers.heartbeat_ms > PEER_QUIET_MIN_MS ? 2 * S->peers.heartbeat_ms
                                                                              : PEER_QUIET_MIN_MS;
    const char *stall = getenv("XQF_TEST_STALL_MS");
    S->test_stall_ms = stall ? strtoll(stall, NULL, 10) : 0;
    if (!(S->items = calloc((size_t)S->batch, sizeof *S->items)) ||
        !(S->limit = ratelimit_new(cfg->rate, cfg->rate)) ||
        !(S->status_limit = ratelimit_new(STATUS_PER_SECOND, STATUS_PER_SECOND)) ||
        !(S->status_key_limit = ratelimit_new(STATUS_PER_KEY_SECOND, STATUS_PER_KEY_SECOND)) ||
        !(S->hello_limit = ratelimit_new(cfg->key_hellos / 60.0, cfg->key_hellos)) ||
        !(S->transport = transport_new(cfg->bind, &S->security)) || !(S->store = store_new(cfg->db)) ||
        !(S->sched = sched_new(S->store))) {
        server_destroy(&S);
        return NULL;
    }
    if (cfg->worker_release && load_release(S, cfg->worker_release) != 0) {
        server_destroy(&S);
        return NULL;
    }
    store_set_migrate(S->store, true);        /* the coordinator's start migrates the schema */
    if (cfg->metrics) {
        char why[256];
        if (!(S->metrics = metrics_new()) ||
            metrics_serve(S->metrics, cfg->metrics, cfg->db, why, sizeof why) != 0) {
            log_error("%s", S->metrics ? why : "metrics: out of memory");
            server_destroy(&S);
            return NULL;
        }
        store_observe(S->store, metrics_statement, S->metrics);
        metrics_gauge(S->metrics, METRIC_BATCH_LIMIT, S->batch);
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
    metrics_destroy(&S->metrics);           /* its HTTP thread stopped first, before the store it observes */
    free(S->items);
    peers_free(&S->peers);
    leases_free(&S->leases);
    ratelimit_destroy(&S->limit);
    ratelimit_destroy(&S->status_key_limit);
    ratelimit_destroy(&S->status_limit);
    ratelimit_destroy(&S->hello_limit);
    free(S->chunk);
    free(S->release_bytes);
    xqf_buf_free(&S->frame);
    xqf_buf_free(&S->buf);
    sched_destroy(&S->sched);
    store_destroy(&S->store);
    transport_destroy(&S->transport);
    free(S);
    *sp = NULL;
}

void server_stop(Server *S) { atomic_store(&S->stop, true); }

/*
 * The connections closed since the last batch: their workers count no
 * more against --max-peers and --key-peers.  After the batch's hellos, so
 * that a hello read before its connection's close was seen is entered
 * first, then found closed.
 */
static void peers_disconnected(Server *S)
{
    int fds[256];
    uint64_t conns[256];
    for (int n; (n = transport_closed(S->transport, fds, conns, 256)) > 0;)
        for (int i = 0; i < n; i++)
            peers_closed(&S->peers, fds[i], conns[i]);
}

/*
 * The loop's gauges for the metrics: the batch's size at every iteration,
 * the rest (a scan of the peer table among them) every GAUGES_EVERY_MS.
 */
static void publish_gauges(Server *S, int n)
{
    metrics_gauge(S->metrics, METRIC_BATCH_MESSAGES, n);
    int64_t now = clock_now_ms();
    if (now - S->gauges_ms < GAUGES_EVERY_MS)
        return;
    S->gauges_ms = now;
    metrics_gauge(S->metrics, METRIC_WORKERS, (int64_t)peers_live(&S->peers));
    metrics_gauge(S->metrics, METRIC_KEYS, (int64_t)peers_keys(&S->peers));
    metrics_gauge(S->metrics, METRIC_WORKERS_OLDER, (int64_t)peers_live_below(&S->peers, XQF_PROTOCOL_VERSION));
    metrics_gauge(S->metrics, METRIC_LEASES_HELD, (int64_t)S->leases.count);
    metrics_gauge(S->metrics, METRIC_CONNECTIONS, transport_connections(S->transport));
    metrics_gauge(S->metrics, METRIC_DB_CONNECTED, store_ok(S->store));
    metrics_total(S->metrics, METRIC_REPLIES_DROPPED, transport_dropped(S->transport));
}

int server_run(Server *S)
{
    log_info("serving on %s, lease %lld ms", S->cfg->bind, (long long)S->cfg->lease_ms);
    ensure_connected(S, clock_now_ms());
    S->last_tick_ms = clock_now_ms();
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
        int n = S->taken = take_frames(S);
        handle_batch(S, S->items, n);
        /* after the batch: a bye ends what came before it (a worker's last handbacks) */
        for (int i = 0; i < n; i++)
            if (S->items[i].decoded && !needs_db(&S->items[i].in))
                handle_local(S, &S->items[i]);
        drop_leases(S, S->items, n);
        peers_disconnected(S);
        send_replies(S, n);
        if (n > 0) {
            int64_t busy = clock_now_us() - started;
            load_note(&S->load, n, busy);
            metrics_batch(S->metrics, busy);
        }
        if (S->metrics)
            publish_gauges(S, n);
        load_log(&S->load, clock_now_us(), S->transport);
        timers(S, n < S->batch);
        trim_heap(S, n > 0, clock_now_ms());
    }
    log_info("leases: %lld heartbeats answered from memory, %lld leases expired, %zu held at the stop",
             (long long)S->heartbeats, (long long)S->expired, S->leases.count);
    ConnsStats conns = transport_conn_stats(S->transport);
    log_info("stopping: %lld messages over the rate limit, %lld build requests and %lld claims refused "
             "by the bounds, %lld hellos beyond --max-peers, %lld silent workers evicted for newcomers, "
             "%lld connections taken over by a worker's new one, %lld workers no longer counted as their "
             "connection closed, %lld replies dropped (peer not reading); "
             "per key: %lld hellos over --key-hellos, %lld beyond --key-peers, %lld claims beyond --key-leases, "
             "%lld workers of a key filling the table evicted for another key's, %lld connections beyond "
             "--key-connections (%lld silent ones of a key closed for its newcomers); %lld connections closed "
             "silent past --first-message",
             (long long)ratelimit_refused(S->limit), (long long)S->chunks_refused, (long long)S->leases_capped,
             (long long)S->peers.refused, (long long)S->peers.evicted, (long long)S->peers.replaced,
             (long long)S->peers.disconnected, (long long)transport_dropped(S->transport), (long long)S->hellos_refused,
             (long long)S->peers.key_refused, (long long)S->key_leases_capped, (long long)S->peers.shared,
             (long long)conns.refused, (long long)conns.evicted, (long long)conns.silent);
    return S->schema_refused ? -1 : 0;
}

#include "peers.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"

enum { PEERS_MIN = 1024 };

/* A worker that missed a heartbeat at the last scan: evicted only if still unheard since (seen_ms unchanged). */
struct PeerQuiet {
    size_t slot;
    int64_t seen_ms;
};

/* A key's entries with a worker: key 0 is a free slot. */
struct PeerKey {
    uint64_t key;
    size_t count;
};

/* A key of the index by worker id: worker 0 is a free slot. */
struct PeerByWorker {
    int64_t worker;
    size_t slot;                     /* in v; slots never move between rebuilds */
};

static size_t peer_hash(const Peer *p)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (size_t i = 0; i < p->len; i++)
        h = (h ^ p->id[i]) * UINT64_C(1099511628211);
    return (size_t)h;
}

static bool peer_eq(const Peer *a, const Peer *b)
{
    return a->len == b->len && memcmp(a->id, b->id, a->len) == 0;
}

/* The entry of p, or the free slot where it would go (NULL when the table is empty). */
static PeerEntry *peer_slot(Peers *ps, const Peer *p)
{
    if (!ps->cap)
        return NULL;
    for (size_t i = peer_hash(p) & (ps->cap - 1);; i = (i + 1) & (ps->cap - 1))
        if (!ps->v[i].peer.len || peer_eq(&ps->v[i].peer, p))
            return &ps->v[i];
}

/* The index key of worker, or the free slot where it would go (the table is not empty). */
static struct PeerByWorker *by_slot(Peers *ps, int64_t worker)
{
    uint64_t h = (uint64_t)worker * UINT64_C(0x9e3779b97f4a7c15);
    for (size_t i = (size_t)(h >> 32) & (ps->cap - 1);; i = (i + 1) & (ps->cap - 1))
        if (!ps->by[i].worker || ps->by[i].worker == worker)
            return &ps->by[i];
}

PeerEntry *peer_find(Peers *ps, const Peer *p)
{
    PeerEntry *e = peer_slot(ps, p);
    if (!e || !e->peer.len || !e->worker)
        return NULL;
    e->seen_ms = clock_now_ms();
    return e;
}

static int64_t heartbeat_ms(const Peers *ps)
{
    return ps->heartbeat_ms > 0 ? ps->heartbeat_ms : PEERS_HEARTBEAT_DEFAULT_MS;
}

/* How long a worker may be silent and still be live. */
static int64_t gone_ms(const Peers *ps)
{
    int64_t ms = PEER_MISSED * heartbeat_ms(ps);
    return ms > PEER_GONE_MIN_MS ? ms : PEER_GONE_MIN_MS;
}

/* Silent this long, a worker missed a heartbeat: two intervals (a busy worker speaks once an interval, give or take). */
static int64_t quiet_ms(const Peers *ps)
{
    return 2 * heartbeat_ms(ps) > PEER_QUIET_MIN_MS ? 2 * heartbeat_ms(ps) : PEER_QUIET_MIN_MS;
}

/* Whether e counts against the bounds: a worker's, its connection not known closed (maybe silent, though). */
static bool counted(const PeerEntry *e) { return e->peer.len && e->worker && !e->closed; }

static bool peer_live(const PeerEntry *e, int64_t now, int64_t gone)
{
    return e && counted(e) && now - e->seen_ms < gone;
}

static size_t peers_max(const Peers *ps) { return ps->max ? ps->max : PEERS_MAX_DEFAULT; }

/* Adds e (a slot of v) to the index by descriptor, when its connection is known (else its closing is not). */
static void fd_put(Peers *ps, const PeerEntry *e)
{
    int fd = e->peer.fd;
    if (fd < 0 || !e->peer.conn)
        return;
    if ((size_t)fd >= ps->fd_cap) {
        size_t cap = ps->fd_cap ? ps->fd_cap : 256;
        while (cap <= (size_t)fd)
            cap *= 2;
        size_t *by = realloc(ps->by_fd, cap * sizeof *by);
        if (!by)
            return;                  /* out of memory: found gone by its silence instead */
        memset(by + ps->fd_cap, 0, (cap - ps->fd_cap) * sizeof *by);
        ps->by_fd = by;
        ps->fd_cap = cap;
    }
    ps->by_fd[fd] = (size_t)(e - ps->v) + 1;
}

/* Adds e (a slot of v) to the index by worker. */
static void by_put(Peers *ps, const PeerEntry *e)
{
    struct PeerByWorker *b = by_slot(ps, e->worker);
    if (!b->worker)
        ps->by_count++;
    b->worker = e->worker;
    b->slot = (size_t)(e - ps->v);
}

static size_t peers_scan(const Peers *ps, int64_t now);

static uint64_t fnv(const void *bytes, size_t len, uint64_t h)
{
    for (size_t i = 0; i < len; i++)
        h = (h ^ ((const uint8_t *)bytes)[i]) * UINT64_C(1099511628211);
    return h;
}

uint64_t peers_key(const Peer *p, int64_t worker)
{
    /* a name and a worker id never hash alike: their first bytes differ (a tag) */
    uint64_t h = p->user[0] ? fnv(p->user, strlen(p->user), fnv("n", 1, UINT64_C(1469598103934665603)))
                            : fnv(&worker, sizeof worker, fnv("w", 1, UINT64_C(1469598103934665603)));
    return h ? h : 1;
}

/* The slot of key in the key table, or the free one where it would go (the table is not empty). */
static struct PeerKey *key_slot(struct PeerKey *keys, size_t cap, uint64_t key)
{
    for (size_t i = (size_t)(key >> 17) & (cap - 1);; i = (i + 1) & (cap - 1))
        if (!keys[i].key || keys[i].key == key)
            return &keys[i];
}

size_t peers_of_key(const Peers *ps, uint64_t key)
{
    return ps->keys_cap ? key_slot(ps->keys, ps->keys_cap, key)->count : 0;
}

size_t peers_keys(const Peers *ps) { return ps->keys_live; }

/* Adds delta (+1, -1) to key's count (room made before: keys_recount). */
static void key_add(Peers *ps, uint64_t key, int delta)
{
    if (!ps->keys_cap)
        return;
    struct PeerKey *k = key_slot(ps->keys, ps->keys_cap, key);
    if (!k->key) {
        if (delta < 0)
            return;
        k->key = key;
        ps->keys_used++;
    }
    if (delta < 0 && k->count > 0 && --k->count == 0)
        ps->keys_live--;
    else if (delta > 0 && k->count++ == 0)
        ps->keys_live++;
}

/*
 * Counts the keys of the entries with a worker afresh, in a table at most
 * a quarter full (keys left without an entry dropped).  0, or -1 out of
 * memory (the old table kept).
 */
static int keys_recount(Peers *ps)
{
    size_t cap = 64;
    while ((ps->active + 1) * 4 > cap)
        cap *= 2;
    struct PeerKey *keys = calloc(cap, sizeof *keys);
    if (!keys)
        return -1;
    free(ps->keys);
    ps->keys = keys;
    ps->keys_cap = cap;
    ps->keys_used = ps->keys_live = 0;
    for (size_t i = 0; i < ps->cap; i++)
        if (counted(&ps->v[i]))
            key_add(ps, ps->v[i].key, +1);
    return 0;
}

/* Rebuilds the table with the live entries only, at most a quarter full. 0 or -1. */
static int peers_rebuild(Peers *ps, int64_t now)
{
    int64_t gone = gone_ms(ps);
    size_t live = peers_scan(ps, now);
    size_t cap = PEERS_MIN;
    while ((live + 1) * 4 > cap)
        cap *= 2;
    Peers fresh = *ps;
    fresh.v = calloc(cap, sizeof(PeerEntry));
    fresh.by = calloc(cap, sizeof(struct PeerByWorker));
    if (!fresh.v || !fresh.by) {
        free(fresh.v);
        free(fresh.by);
        return -1;
    }
    fresh.cap = cap;
    fresh.count = fresh.by_count = fresh.active = 0;
    for (size_t i = 0; i < ps->cap; i++) {
        const PeerEntry *e = &ps->v[i];
        if (peer_live(e, now, gone)) {
            PeerEntry *f = peer_slot(&fresh, &e->peer);
            *f = *e;
            fresh.count++;
            fresh.active++;
            by_put(&fresh, f);
        }
    }
    /* the eviction queue follows its workers to their new slots */
    size_t k = 0;
    for (size_t j = ps->quiet_at; j < ps->nquiet; j++) {
        const PeerEntry *o = &ps->v[ps->quiet[j].slot];
        if (!peer_live(o, now, gone))
            continue;
        fresh.quiet[k] = ps->quiet[j];
        fresh.quiet[k++].slot = (size_t)(peer_slot(&fresh, &o->peer) - fresh.v);
    }
    fresh.nquiet = k;
    fresh.quiet_at = 0;
    if (ps->cap)
        log_debug("peers: table rebuilt, %zu live of %zu slots used", live, ps->count);
    free(ps->v);
    free(ps->by);
    *ps = fresh;
    if (ps->fd_cap)
        memset(ps->by_fd, 0, ps->fd_cap * sizeof *ps->by_fd);
    for (size_t i = 0; i < ps->cap; i++)
        if (ps->v[i].peer.len)
            fd_put(ps, &ps->v[i]);
    return keys_recount(ps);
}

/* Live entries (a scan). */
/* Live entries of a protocol version below `below`. */
static size_t scan_below(const Peers *ps, int64_t now, unsigned below)
{
    int64_t gone = gone_ms(ps);
    size_t live = 0;
    for (size_t i = 0; i < ps->cap; i++)
        live += peer_live(&ps->v[i], now, gone) && ps->v[i].protocol < below;
    return live;
}

static size_t peers_scan(const Peers *ps, int64_t now) { return scan_below(ps, now, UINT_MAX); }

size_t peers_live(const Peers *ps) { return peers_scan(ps, clock_now_ms()); }

size_t peers_live_below(const Peers *ps, unsigned protocol) { return scan_below(ps, clock_now_ms(), protocol); }

/* Takes e out of the counts (it stays, as it is, for peer_find). */
static void uncount(Peers *ps, PeerEntry *e)
{
    if (counted(e)) {
        ps->active--;
        key_add(ps, e->key, -1);
    }
}

void peer_drop(Peers *ps, PeerEntry *e)
{
    if (e) {
        uncount(ps, e);
        e->worker = 0;
        e->closed = false;
    }
}

void peers_closed(Peers *ps, int fd, uint64_t conn)
{
    if (fd < 0 || (size_t)fd >= ps->fd_cap || !ps->by_fd[fd] || !conn)
        return;
    PeerEntry *e = &ps->v[ps->by_fd[fd] - 1];
    if (e->peer.fd != fd || e->peer.conn != conn || !counted(e))
        return;
    uncount(ps, e);
    e->closed = true;
    ps->disconnected++;
}

static int by_silence(const void *a, const void *b)
{
    const struct PeerQuiet *x = a, *y = b;
    return x->seen_ms < y->seen_ms ? -1 : x->seen_ms > y->seen_ms;
}

/*
 * Scans a full table: drops the workers gone (past PEER_MISSED
 * heartbeats), and queues those that missed a heartbeat, longest-silent first,
 * so that the newcomers that follow evict them one by one without a scan
 * each (a full table of 10,000 gone workers meets 10,000 newcomers).
 */
static void scan_for_room(Peers *ps, int64_t now)
{
    int64_t gone = gone_ms(ps), quiet = quiet_ms(ps);
    ps->scanned_ms = now;
    ps->nquiet = ps->quiet_at = 0;
    struct PeerQuiet *q = realloc(ps->quiet, (ps->active ? ps->active : 1) * sizeof *q);
    if (q)
        ps->quiet = q;
    for (size_t i = 0; i < ps->cap; i++) {
        PeerEntry *e = &ps->v[i];
        if (!counted(e))
            continue;
        if (!peer_live(e, now, gone))
            peer_drop(ps, e);
        else if (q && now - e->seen_ms >= quiet)
            q[ps->nquiet++] = (struct PeerQuiet){ i, e->seen_ms };
    }
    if (ps->nquiet)
        qsort(ps->quiet, ps->nquiet, sizeof *ps->quiet, by_silence);
}

/* Evicts the next queued worker still unheard since the scan (not e). True if one was. */
static bool evict_quiet(Peers *ps, const PeerEntry *e, int64_t now)
{
    while (ps->quiet_at < ps->nquiet) {
        const struct PeerQuiet *q = &ps->quiet[ps->quiet_at++];
        PeerEntry *c = &ps->v[q->slot];
        if (c == e || !counted(c) || c->seen_ms != q->seen_ms)
            continue;
        char tail[NOTES_MORE_MAX];
        if (notes_due(&ps->notes, "peers evicted", tail))
            log_info("peers: worker %lld, silent for %lld ms, evicted for a newcomer (--max-peers %zu)%s",
                     (long long)c->worker, (long long)(now - c->seen_ms), peers_max(ps), tail);
        peer_drop(ps, c);
        ps->evicted++;
        return true;
    }
    return false;
}

static size_t key_max(const Peers *ps) { return ps->key_max ? ps->key_max : PEERS_KEY_MAX_DEFAULT; }

/*
 * Makes room among key's entries (not spare): drops those gone, else
 * drops the longest-silent one if it has been silent min_silent_ms at
 * least.  A scan of the table.  Returns the worker dropped while live
 * (0 when only gone ones were, or none: then *any says whether some were).
 */
static int64_t evict_of_key(Peers *ps, uint64_t key, const PeerEntry *spare, int64_t min_silent_ms, int64_t now,
                            bool *any)
{
    int64_t gone = gone_ms(ps);
    PeerEntry *oldest = NULL;
    *any = false;
    for (size_t i = 0; i < ps->cap; i++) {
        PeerEntry *c = &ps->v[i];
        if (!counted(c) || c->key != key || c == spare)
            continue;
        if (!peer_live(c, now, gone)) {
            peer_drop(ps, c);
            *any = true;
        } else if (!oldest || c->seen_ms < oldest->seen_ms) {
            oldest = c;
        }
    }
    if (*any || !oldest || now - oldest->seen_ms < min_silent_ms)
        return 0;
    int64_t worker = oldest->worker;
    peer_drop(ps, oldest);
    *any = true;
    return worker;
}

/*
 * A newcomer (e, of key) within its key's bound: at key_max live workers
 * the key's own gone ones are dropped, else its longest-silent one that
 * missed a heartbeat.  0, or -3 (refused, logged once a minute).
 */
static int room_in_key(Peers *ps, const PeerEntry *e, uint64_t key, int64_t now)
{
    bool any;
    if (peers_of_key(ps, key) < key_max(ps))
        return 0;
    int64_t w = evict_of_key(ps, key, e, quiet_ms(ps), now, &any);
    if (any) {
        if (w)
            ps->evicted++;
        return 0;
    }
    ps->key_refused++;
    char tail[NOTES_MORE_MAX];
    if (notes_due(&ps->notes, "peers of a key", tail))
        log_warn("peers: a new worker refused: its key has %zu workers connected already (--key-peers), "
                 "none silent for two heartbeats%s", key_max(ps), tail);
    return -3;
}

/* The key with the most entries with a worker, and how many (0 when none). */
static size_t greediest(const Peers *ps, uint64_t *key)
{
    size_t most = 0;
    for (size_t i = 0; i < ps->keys_cap; i++)
        if (ps->keys[i].key && ps->keys[i].count > most) {
            most = ps->keys[i].count;
            *key = ps->keys[i].key;
        }
    return most;
}

/*
 * Makes room for one more worker (e, of key, not live itself) when the
 * table holds its most: drops the gone, else evicts the longest-silent
 * worker that missed a heartbeat.  A table full of workers all heard
 * lately is scanned again at most every PEER_RESCAN_MS; then a key
 * holding at least two entries more than key gives up its longest-silent
 * one.  True when there is room.
 */
static bool make_room(Peers *ps, const PeerEntry *e, uint64_t key, int64_t now)
{
    if (ps->active < peers_max(ps) || evict_quiet(ps, e, now))
        return true;
    if (!ps->scanned_ms || now - ps->scanned_ms >= PEER_RESCAN_MS) {
        scan_for_room(ps, now);
        if (ps->active < peers_max(ps) || evict_quiet(ps, e, now))
            return true;
    }
    uint64_t greedy = 0;
    size_t most = greediest(ps, &greedy);
    bool any = false;
    int64_t w = greedy != key && most >= peers_of_key(ps, key) + 2 ? evict_of_key(ps, greedy, e, 0, now, &any) : 0;
    char tail[NOTES_MORE_MAX];
    if (any) {
        ps->shared += w != 0;
        if (w && notes_due(&ps->notes, "peers shared", tail))
            log_info("peers: worker %lld evicted for another key's newcomer: its key holds %zu of the %zu workers "
                     "(--max-peers)%s", (long long)w, most, peers_max(ps), tail);
        return true;
    }
    ps->refused++;
    if (notes_due(&ps->notes, "peers full", tail))
        log_warn("peers: a new worker refused: %zu workers connected already (--max-peers), "
                 "none silent for two heartbeats%s", peers_max(ps), tail);
    return false;
}

int peer_set(Peers *ps, const Peer *p, int64_t worker, const char *build, int concurrency)
{
    int64_t now = clock_now_ms();
    size_t used = ps->count > ps->by_count ? ps->count : ps->by_count;
    if ((used + 1) * 2 > ps->cap && peers_rebuild(ps, now) != 0)
        return -1;
    if ((ps->keys_used + 1) * 2 > ps->keys_cap && keys_recount(ps) != 0)
        return -1;
    uint64_t key = peers_key(p, worker);
    PeerEntry *e = peer_slot(ps, p);
    if (e->worker && e->key != key)
        peer_drop(ps, e);            /* a plaintext connection's hello as another worker: a newcomer of that key */
    /* the same worker on another connection (it reconnected): this hello takes its place */
    struct PeerByWorker *b = by_slot(ps, worker);
    PeerEntry *old = b->worker ? &ps->v[b->slot] : NULL;
    bool took = false;
    if (old && old != e && old->worker == worker) {
        took = peer_live(old, now, gone_ms(ps));
        /* heard within a heartbeat: a quick restart, or two workers started under one name (they take turns) */
        char tail[NOTES_MORE_MAX];
        if (!old->closed && now - old->seen_ms < heartbeat_ms(ps) && notes_due(&ps->notes, "peers same name", tail))
            log_info("peers: worker %lld said hello on a new connection while its old one spoke %lld ms ago "
                     "(a restart, or two workers under one name taking each other's place)%s",
                     (long long)worker, (long long)(now - old->seen_ms), tail);
        peer_drop(ps, old);
        ps->replaced++;
    }
    if (!took && !peer_live(e, now, gone_ms(ps))) {
        int rc = room_in_key(ps, e, key, now);
        if (rc != 0)
            return rc;
        if (!make_room(ps, e, key, now))
            return -2;
    }
    if (!e->peer.len)
        ps->count++;
    e->peer = *p;                    /* its connection's descriptor and number too */
    if (!counted(e)) {
        ps->active++;
        e->key = key;
        key_add(ps, key, +1);
    }
    e->closed = false;
    e->worker = worker;
    e->seen_ms = now;
    e->concurrency = concurrency;
    e->chunk = (PeerChunk){ .sha256 = "" };
    snprintf(e->build, sizeof e->build, "%s", build);
    by_put(ps, e);
    fd_put(ps, e);
    return 0;
}

void peers_free(Peers *ps)
{
    free(ps->v);
    free(ps->by);
    free(ps->quiet);
    free(ps->keys);
    free(ps->by_fd);
    ps->by_fd = NULL;
    ps->fd_cap = 0;
    ps->v = NULL;
    ps->by = NULL;
    ps->quiet = NULL;
    ps->keys = NULL;
    ps->keys_cap = ps->keys_used = ps->keys_live = 0;
    ps->cap = ps->count = ps->by_count = ps->active = ps->nquiet = ps->quiet_at = 0;
}

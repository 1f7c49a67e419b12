#include "peers.h"

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

static bool peer_live(const PeerEntry *e, int64_t now, int64_t gone)
{
    return e && e->peer.len && e->worker && now - e->seen_ms < gone;
}

static size_t peers_max(const Peers *ps) { return ps->max ? ps->max : PEERS_MAX_DEFAULT; }

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
    return 0;
}

/* Live entries (a scan). */
static size_t peers_scan(const Peers *ps, int64_t now)
{
    int64_t gone = gone_ms(ps);
    size_t live = 0;
    for (size_t i = 0; i < ps->cap; i++)
        live += peer_live(&ps->v[i], now, gone);
    return live;
}

size_t peers_live(const Peers *ps) { return peers_scan(ps, clock_now_ms()); }

void peer_drop(Peers *ps, PeerEntry *e)
{
    if (e && e->worker) {
        e->worker = 0;
        ps->active--;
    }
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
    /* two intervals: a busy worker speaks once an interval, give or take its loop's tick */
    int64_t gone = gone_ms(ps), quiet = 2 * heartbeat_ms(ps) > PEER_QUIET_MIN_MS ? 2 * heartbeat_ms(ps) : PEER_QUIET_MIN_MS;
    ps->scanned_ms = now;
    ps->nquiet = ps->quiet_at = 0;
    struct PeerQuiet *q = realloc(ps->quiet, (ps->active ? ps->active : 1) * sizeof *q);
    if (q)
        ps->quiet = q;
    for (size_t i = 0; i < ps->cap; i++) {
        PeerEntry *e = &ps->v[i];
        if (!e->peer.len || !e->worker)
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
        if (c == e || !c->worker || c->seen_ms != q->seen_ms)
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

/*
 * Makes room for one more worker (e, not live itself) when the table
 * holds its most: drops the gone, else evicts the longest-silent worker
 * that missed a heartbeat.  A table full of workers all heard lately is
 * scanned again at most every PEER_RESCAN_MS.  True when there is room.
 */
static bool make_room(Peers *ps, const PeerEntry *e, int64_t now)
{
    if (ps->active < peers_max(ps) || evict_quiet(ps, e, now))
        return true;
    if (!ps->scanned_ms || now - ps->scanned_ms >= PEER_RESCAN_MS) {
        scan_for_room(ps, now);
        if (ps->active < peers_max(ps) || evict_quiet(ps, e, now))
            return true;
    }
    ps->refused++;
    char tail[NOTES_MORE_MAX];
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
    PeerEntry *e = peer_slot(ps, p);
    /* the same worker on another connection (it reconnected): this hello takes its place */
    struct PeerByWorker *b = by_slot(ps, worker);
    PeerEntry *old = b->worker ? &ps->v[b->slot] : NULL;
    bool took = false;
    if (old && old != e && old->worker == worker) {
        took = peer_live(old, now, gone_ms(ps));
        /* heard within a heartbeat: a quick restart, or two workers started under one name (they take turns) */
        char tail[NOTES_MORE_MAX];
        if (now - old->seen_ms < heartbeat_ms(ps) && notes_due(&ps->notes, "peers same name", tail))
            log_info("peers: worker %lld said hello on a new connection while its old one spoke %lld ms ago "
                     "(a restart, or two workers under one name taking each other's place)%s",
                     (long long)worker, (long long)(now - old->seen_ms), tail);
        peer_drop(ps, old);
        ps->replaced++;
    }
    if (!took && !peer_live(e, now, gone_ms(ps)) && !make_room(ps, e, now))
        return -2;
    if (!e->peer.len) {
        e->peer = *p;
        ps->count++;
    }
    if (!e->worker)
        ps->active++;
    e->worker = worker;
    e->seen_ms = now;
    e->concurrency = concurrency;
    e->chunk = (PeerChunk){ .sha256 = "" };
    snprintf(e->build, sizeof e->build, "%s", build);
    by_put(ps, e);
    return 0;
}

void peers_free(Peers *ps)
{
    free(ps->v);
    free(ps->by);
    free(ps->quiet);
    ps->v = NULL;
    ps->by = NULL;
    ps->quiet = NULL;
    ps->cap = ps->count = ps->by_count = ps->active = ps->nquiet = ps->quiet_at = 0;
}

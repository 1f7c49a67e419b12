#include "peers.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"

enum { PEERS_MIN = 1024, PEER_IDLE_MS = 10 * 60 * 1000 };

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

PeerEntry *peer_find(Peers *ps, const Peer *p)
{
    PeerEntry *e = peer_slot(ps, p);
    if (!e || !e->peer.len || !e->worker)
        return NULL;
    e->seen_ms = clock_now_ms();
    return e;
}

static bool peer_live(const PeerEntry *e, int64_t now)
{
    return e->peer.len && e->worker && now - e->seen_ms < PEER_IDLE_MS;
}

static size_t peers_max(const Peers *ps) { return ps->max ? ps->max : PEERS_MAX_DEFAULT; }

/* Rebuilds the table with the live entries only, at most a quarter full. 0 or -1. */
static int peers_rebuild(Peers *ps, int64_t now)
{
    size_t live = 0;
    for (size_t i = 0; i < ps->cap; i++)
        live += peer_live(&ps->v[i], now);
    size_t cap = PEERS_MIN;
    while ((live + 1) * 4 > cap)
        cap *= 2;
    Peers fresh = { calloc(cap, sizeof(PeerEntry)), cap, 0, ps->max, ps->refused, ps->notes };
    if (!fresh.v)
        return -1;
    for (size_t i = 0; i < ps->cap; i++) {
        const PeerEntry *e = &ps->v[i];
        if (peer_live(e, now)) {
            *peer_slot(&fresh, &e->peer) = *e;
            fresh.count++;
        }
    }
    if (ps->cap)
        log_debug("peers: table rebuilt, %zu live of %zu slots used", live, ps->count);
    free(ps->v);
    *ps = fresh;
    return 0;
}

/* Live entries of the table (a scan: only when a new peer would exceed the bound). */
static size_t peers_live(const Peers *ps, int64_t now)
{
    size_t live = 0;
    for (size_t i = 0; i < ps->cap; i++)
        live += peer_live(&ps->v[i], now);
    return live;
}

int peer_set(Peers *ps, const Peer *p, int64_t worker, const char *build, int concurrency)
{
    int64_t now = clock_now_ms();
    if ((ps->count + 1) * 2 > ps->cap && peers_rebuild(ps, now) != 0)
        return -1;
    PeerEntry *e = peer_slot(ps, p);
    if (!peer_live(e, now) && ps->count >= peers_max(ps) && peers_live(ps, now) >= peers_max(ps)) {
        ps->refused++;
        char tail[NOTES_MORE_MAX];
        if (notes_due(&ps->notes, "peers full", tail))
            log_warn("peers: a new worker refused: %zu workers connected already (--max-peers)%s",
                     peers_max(ps), tail);
        return -2;
    }
    if (!e->peer.len) {
        e->peer = *p;
        ps->count++;
    }
    e->worker = worker;
    e->seen_ms = now;
    e->concurrency = concurrency;
    e->chunk = (PeerChunk){ .sha256 = "" };
    snprintf(e->build, sizeof e->build, "%s", build);
    return 0;
}

void peers_free(Peers *ps)
{
    free(ps->v);
    ps->v = NULL;
    ps->cap = ps->count = 0;
}

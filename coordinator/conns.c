#include "conns.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ratelimit.h"

enum { FREE, SILENT, KEYED, DUE, SHUT };

typedef struct {
    uint8_t state;                   /* FREE; SILENT: no message yet; KEYED: counted; DUE: to close; SHUT: closed by us */
    uint64_t key;                    /* KEYED (and DUE after it): its key's hash; 0 none (plaintext) */
    uint64_t tag;
    uint64_t id;                     /* this connection's number (conns_id): never reused */
    int64_t accepted_ms, last_ms, close_ms;
} Conn;

/* A key's count, in an open-addressing table of key hashes (never 0; keys are allow-list names: few). */
typedef struct {
    uint64_t key;
    int open;
} KeyCount;

struct Conns {
    ConnsLimits lim;
    Conn *v;                         /* indexed by descriptor */
    int size;
    KeyCount *keys;
    size_t keys_cap, keys_used;      /* a power of two; used at most half */
    int open;
    uint64_t ids;                    /* the last connection's number */
    ConnsStats stats;
};

Conns *conns_new(const ConnsLimits *lim)
{
    Conns *c = calloc(1, sizeof *c);
    if (c)
        c->lim = *lim;
    return c;
}

void conns_destroy(Conns **cp)
{
    Conns *c = *cp;
    if (!c)
        return;
    free(c->v);
    free(c->keys);
    free(c);
    *cp = NULL;
}

static uint64_t key_of(const char *name)
{
    if (!name || !*name)
        return 0;
    uint64_t k = ratelimit_key(name, strlen(name));
    return k ? k : 1;
}

/* The count of key, made (0) when missing; NULL only out of memory. */
static KeyCount *key_slot(Conns *c, uint64_t key, bool make)
{
    if (make && (c->keys_used + 1) * 2 > c->keys_cap) {
        size_t cap = c->keys_cap ? c->keys_cap * 2 : 64;
        KeyCount *k = calloc(cap, sizeof *k);
        if (!k)
            return NULL;
        for (size_t i = 0; i < c->keys_cap; i++)
            if (c->keys[i].key) {
                size_t j = c->keys[i].key & (cap - 1);
                while (k[j].key)
                    j = (j + 1) & (cap - 1);
                k[j] = c->keys[i];
            }
        free(c->keys);
        c->keys = k;
        c->keys_cap = cap;
    }
    if (!c->keys_cap)
        return NULL;
    size_t i = key & (c->keys_cap - 1);
    while (c->keys[i].key && c->keys[i].key != key)
        i = (i + 1) & (c->keys_cap - 1);
    if (!c->keys[i].key) {
        if (!make)
            return NULL;
        c->keys[i].key = key;
        c->keys_used++;
    }
    return &c->keys[i];
}

/* Takes e out of its key's count (it closes, or is due to). */
static void uncount(Conns *c, Conn *e)
{
    KeyCount *k = e->state == KEYED && e->key ? key_slot(c, e->key, false) : NULL;
    if (k && k->open > 0)
        k->open--;
}

int conns_accepted(Conns *c, int fd, uint64_t tag, int64_t now_ms)
{
    if (fd < 0)
        return -1;
    if (fd >= c->size) {
        int size = c->size ? c->size : 256;
        while (size <= fd)
            size *= 2;
        Conn *v = realloc(c->v, (size_t)size * sizeof *v);
        if (!v)
            return -1;
        memset(v + c->size, 0, (size_t)(size - c->size) * sizeof *v);
        c->v = v;
        c->size = size;
    }
    Conn *e = &c->v[fd];
    if (e->state != FREE)
        conns_closed(c, fd);
    *e = (Conn){ .state = SILENT, .tag = tag, .id = ++c->ids, .accepted_ms = now_ms, .last_ms = now_ms };
    c->open++;
    return 0;
}

void conns_closed(Conns *c, int fd)
{
    if (fd < 0 || fd >= c->size || c->v[fd].state == FREE)
        return;
    uncount(c, &c->v[fd]);
    c->v[fd] = (Conn){ .state = FREE };
    c->open--;
}

/* Marks e due to close at when (it counts no more). */
static void make_due(Conns *c, Conn *e, int64_t when)
{
    uncount(c, e);
    e->state = DUE;
    e->close_ms = when;
}

/* The longest-silent connection of key other than fd, or NULL. */
static Conn *quietest(Conns *c, uint64_t key, int fd)
{
    Conn *best = NULL;
    for (int i = 0; i < c->size; i++) {
        Conn *e = &c->v[i];
        if (i != fd && e->state == KEYED && e->key == key && (!best || e->last_ms < best->last_ms))
            best = e;
    }
    return best;
}

ConnsVerdict conns_message(Conns *c, int fd, const char *name, int64_t now_ms)
{
    if (fd < 0)
        return CONNS_OK;               /* not a socket (inproc): nothing to bound */
    if ((fd >= c->size || c->v[fd].state == FREE) && conns_accepted(c, fd, 0, now_ms) != 0)
        return CONNS_OK;               /* no memory for the entry: the connection goes unbounded, not refused */
    Conn *e = &c->v[fd];
    if (e->state == DUE || e->state == SHUT)
        return CONNS_CLOSING;
    e->last_ms = now_ms;
    if (e->state == KEYED)
        return CONNS_OK;
    uint64_t key = key_of(name);
    KeyCount *k = key ? key_slot(c, key, true) : NULL;
    if (key && !k)
        return CONNS_OK;               /* out of memory: as above */
    if (k && c->lim.key_max > 0 && k->open >= c->lim.key_max) {
        Conn *q = c->lim.quiet_ms > 0 ? quietest(c, key, fd) : NULL;
        if (q && now_ms - q->last_ms >= c->lim.quiet_ms) {
            make_due(c, q, now_ms);
            c->stats.evicted++;
        } else {
            make_due(c, e, now_ms + c->lim.grace_ms);
            c->stats.refused++;
            return CONNS_REFUSED;
        }
    }
    e->state = KEYED;
    e->key = key;
    if (k)
        k->open++;
    return CONNS_OK;
}

int conns_due(Conns *c, int64_t now_ms, bool drained, int *fds, uint64_t *tags, int n)
{
    int got = 0;
    for (int i = 0; i < c->size && got < n; i++) {
        Conn *e = &c->v[i];
        if (drained && e->state == SILENT && c->lim.first_ms > 0 && now_ms - e->accepted_ms >= c->lim.first_ms) {
            c->stats.silent++;
            e->state = DUE;
            e->close_ms = now_ms;
        }
        if (e->state == DUE && now_ms >= e->close_ms) {
            e->state = SHUT;
            fds[got] = i;
            tags[got++] = e->tag;
        }
    }
    return got;
}

int conns_of_key(const Conns *c, const char *name)
{
    uint64_t key = key_of(name);
    if (!key || !c->keys_cap)
        return 0;
    for (size_t i = key & (c->keys_cap - 1); c->keys[i].key; i = (i + 1) & (c->keys_cap - 1))
        if (c->keys[i].key == key)
            return c->keys[i].open;
    return 0;
}

bool conns_knows(const Conns *c, int fd) { return fd >= 0 && fd < c->size && c->v[fd].state != FREE; }

uint64_t conns_id(const Conns *c, int fd) { return conns_knows(c, fd) ? c->v[fd].id : 0; }

int conns_open(const Conns *c) { return c->open; }

ConnsStats conns_stats(const Conns *c) { return c->stats; }

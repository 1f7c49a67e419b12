/*
 * pool.c - the dashboard's connections (pool.h): a slot per Store, lent
 * under one mutex; takers wait on a condition variable (on the monotonic
 * clock: a change of the wall clock neither ends nor stretches a wait).
 */
#include "pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "store_web.h"

typedef struct {
    Store *store;
    bool lent, heavy;
} Slot;

struct Pool {
    pthread_mutex_t lock;
    pthread_cond_t freed;
    Slot *slots;
    int size, heavy_lent, heavy_max;
};

/* Connects s as the dashboard uses it. 0 or -1 (logged by the store). */
static int connect_store(Store *s) { return store_connect(s) == 0 && store_web_session(s) == 0 ? 0 : -1; }

Pool *pool_new(const char *conninfo, int size)
{
    Pool *p = calloc(1, sizeof *p);
    if (!p || size < 1 || !(p->slots = calloc((size_t)size, sizeof *p->slots))) {
        free(p);
        return NULL;
    }
    p->size = size;
    p->heavy_max = size > 1 ? size - 1 : 1;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->freed, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&p->lock, NULL);
    bool ok = true;
    for (int i = 0; i < size && ok; i++)
        ok = (p->slots[i].store = store_new(conninfo)) != NULL;
    if (!ok || connect_store(p->slots[0].store) != 0)
        pool_destroy(&p);
    return p;
}

void pool_destroy(Pool **pp)
{
    Pool *p = *pp;
    if (!p)
        return;
    for (int i = 0; i < p->size; i++)
        store_destroy(&p->slots[i].store);
    free(p->slots);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->freed);
    free(p);
    *pp = NULL;
}

/* A free slot use may take now, or NULL (under the lock). */
static Slot *free_slot(Pool *p, PoolUse use)
{
    if (use == POOL_HEAVY && p->heavy_lent >= p->heavy_max)
        return NULL;
    for (int i = 0; i < p->size; i++)
        if (!p->slots[i].lent)
            return &p->slots[i];
    return NULL;
}

Store *pool_take(Pool *p, PoolUse use, int wait_ms, bool *busy)
{
    struct timespec until = clock_deadline(CLOCK_MONOTONIC, wait_ms);
    pthread_mutex_lock(&p->lock);
    Slot *slot;
    int rc = 0;
    while (!(slot = free_slot(p, use)) && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&p->freed, &p->lock, &until);
    if (slot) {
        slot->lent = true;
        slot->heavy = use == POOL_HEAVY;
        p->heavy_lent += slot->heavy;
    }
    pthread_mutex_unlock(&p->lock);
    *busy = !slot;
    if (!slot)
        return NULL;
    Store *s = slot->store;
    /* (re)connecting outside the lock: a database slow to answer holds up this request only */
    if (!store_ok(s) && connect_store(s) != 0) {
        pool_give(p, &s);
        return NULL;
    }
    return s;
}

void pool_give(Pool *p, Store **sp)
{
    Store *s = *sp;
    if (!s)
        return;
    /*
     * The store LISTENs on "xqf_runs" (store_connect) and the dashboard
     * never asks for those notifications on these connections: read them
     * away here, else libpq would queue every one for as long as the
     * connection lives.
     */
    if (store_ok(s))
        store_notifications(s);
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < p->size; i++)
        if (p->slots[i].store == s) {
            p->heavy_lent -= p->slots[i].heavy;
            p->slots[i].lent = p->slots[i].heavy = false;
        }
    pthread_cond_broadcast(&p->freed);
    pthread_mutex_unlock(&p->lock);
    *sp = NULL;
}

#include "ratelimit.h"

#include <stdlib.h>

typedef struct {
    uint64_t key;                    /* 0: free (a key of 0 is made 1) */
    double tokens;
    int64_t at_ms;                   /* tokens as of then */
} Bucket;

struct RateLimit {
    double rate, burst;              /* per second; the most a bucket holds */
    Bucket *v;                       /* RATELIMIT_KEYS * 2 slots, open addressing */
    size_t used;
    int64_t refused;
    int64_t swept_ms;                /* the last forget_full: at most one per SWEEP_EVERY_MS */
};

enum { SLOTS = RATELIMIT_KEYS * 2, SWEEP_EVERY_MS = 100 };

RateLimit *ratelimit_new(double rate, double burst)
{
    RateLimit *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->rate = rate;
    r->burst = burst >= 1 ? burst : 1;
    r->swept_ms = INT64_MIN / 2;
    if (rate > 0 && !(r->v = calloc(SLOTS, sizeof *r->v))) {
        free(r);
        return NULL;
    }
    return r;
}

void ratelimit_destroy(RateLimit **rp)
{
    if (!*rp)
        return;
    free((*rp)->v);
    free(*rp);
    *rp = NULL;
}

uint64_t ratelimit_key(const void *bytes, size_t len)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (size_t i = 0; i < len; i++)
        h = (h ^ ((const uint8_t *)bytes)[i]) * UINT64_C(1099511628211);
    return h ? h : 1;
}

/* A bucket's tokens at now_ms (refilled since it was last used). */
static double level(const RateLimit *r, const Bucket *b, int64_t now_ms)
{
    double t = b->tokens + r->rate * (double)(now_ms - b->at_ms) / 1000.0;
    return t < r->burst ? t : r->burst;
}

/* Drops the buckets that are full again (no different from none), keeping the table's probes intact. */
static void forget_full(RateLimit *r, int64_t now_ms)
{
    Bucket *old = r->v;
    Bucket *fresh = calloc(SLOTS, sizeof *fresh);
    if (!fresh)
        return;
    r->v = fresh;
    r->used = 0;
    for (size_t i = 0; i < SLOTS; i++) {
        if (!old[i].key || level(r, &old[i], now_ms) >= r->burst)
            continue;
        size_t j = (size_t)old[i].key & (SLOTS - 1);
        while (fresh[j].key)
            j = (j + 1) & (SLOTS - 1);
        fresh[j] = old[i];
        r->used++;
    }
    free(old);
}

bool ratelimit_take(RateLimit *r, uint64_t key, int64_t now_ms)
{
    if (r->rate <= 0)
        return true;
    key = key ? key : 1;
    size_t i = (size_t)key & (SLOTS - 1);
    while (r->v[i].key && r->v[i].key != key)
        i = (i + 1) & (SLOTS - 1);
    Bucket *b = &r->v[i];
    if (!b->key) {
        if (r->used >= RATELIMIT_KEYS) {
            if (now_ms - r->swept_ms >= SWEEP_EVERY_MS || now_ms < r->swept_ms) {
                r->swept_ms = now_ms;
                forget_full(r, now_ms);
            }
            if (r->used >= RATELIMIT_KEYS) {
                r->refused++;
                return false;
            }
            return ratelimit_take(r, key, now_ms);
        }
        *b = (Bucket){ key, r->burst, now_ms };
        r->used++;
    }
    b->tokens = level(r, b, now_ms);
    b->at_ms = now_ms;
    if (b->tokens < 1) {
        r->refused++;
        return false;
    }
    b->tokens -= 1;
    return true;
}

int64_t ratelimit_refused(const RateLimit *r) { return r->refused; }

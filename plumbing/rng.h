/*
 * rng.h - the small deterministic random generator (splitmix64) of the
 * programs and tools, so that a seed reproduces an opening order, a
 * generated book or a fault campaign on any machine.  (The engine keeps
 * its own, depending on nothing; SPSA's flips keep theirs, stats/spsa.h,
 * which runs already under way depend on.)
 */
#ifndef XQF_RNG_H
#define XQF_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t state;
} Rng;

/* Seeds the generator; any value (0 included) is fine. */
static inline void rng_seed(Rng *r, uint64_t seed) { r->state = seed; }

/* The next 64 random bits. */
static inline uint64_t rng_next(Rng *r)
{
    uint64_t z = (r->state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* A number in [0, 1) with 53 random bits. */
static inline double rng_unit(Rng *r) { return (double)(rng_next(r) >> 11) / 9007199254740992.0; }

/* A number in [0, n); n > 0.  The modulo bias is negligible for small n. */
static inline uint32_t rng_below(Rng *r, uint32_t n) { return (uint32_t)(rng_next(r) % n); }

#endif

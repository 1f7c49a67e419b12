/*
 * rng.h - a small deterministic random generator (splitmix64), so that a
 * seed reproduces an opening order or a generated book on any machine.
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

/* A number in [0, n); n > 0.  The modulo bias is negligible for small n. */
static inline uint32_t rng_below(Rng *r, uint32_t n) { return (uint32_t)(rng_next(r) % n); }

#endif

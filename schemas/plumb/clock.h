/*
 * clock.h - the monotonic clock every program measures with (the engine
 * keeps its own: it depends on nothing).
 *
 * Times are microseconds (int64_t) so that fast games at fixed nodes can be
 * measured, or milliseconds for timers and leases.
 */
#ifndef XQF_CLOCK_H
#define XQF_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Microseconds on the monotonic clock (arbitrary origin). Can't fail. */
static inline int64_t clock_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Milliseconds on the monotonic clock (arbitrary origin). Can't fail. */
static inline int64_t clock_now_ms(void) { return clock_now_us() / 1000; }

#endif

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

/*
 * The time ms milliseconds from now on clock `id`: the absolute deadline
 * pthread_cond_timedwait takes (on the clock its condition was made with).
 */
static inline struct timespec clock_deadline(clockid_t id, int ms)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    return ts;
}

#endif

/*
 * libxqf-clockshift.so: a wrong wall clock for one process, for the fault
 * suite (tests/test_chaos.c, ops/chaos).
 *
 *   LD_PRELOAD=.../libxqf-clockshift.so XQF_CLOCK_SHIFT_S=-7200 xqf-worker ...
 *
 * Interposes clock_gettime (CLOCK_REALTIME, CLOCK_REALTIME_COARSE,
 * CLOCK_TAI), gettimeofday and time so that they return the real time plus
 * XQF_CLOCK_SHIFT_S seconds (may be negative or fractional; read once, when
 * the library is loaded).  The monotonic clocks are left alone: they have no
 * meaning across machines, and a machine's wrong date does not change how
 * fast its seconds go.  The coordinator keeps leases on its own (database)
 * clock, so such a worker must be served and counted like any other.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

typedef int (*ClockGettime)(clockid_t, struct timespec *);

static ClockGettime real_clock_gettime;
static int64_t shift_ns;

/* At load, before any thread: the real clock_gettime and the shift (XQF_CLOCK_SHIFT_S, seconds). */
__attribute__((constructor)) static void clock_shift_init(void)
{
    real_clock_gettime = (ClockGettime)dlsym(RTLD_NEXT, "clock_gettime");
    const char *v = getenv("XQF_CLOCK_SHIFT_S");
    shift_ns = v ? (int64_t)(strtod(v, NULL) * 1e9) : 0;
}

static void shifted(struct timespec *ts)
{
    int64_t ns = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec + shift_ns;
    ts->tv_sec = (time_t)(ns / 1000000000);
    ts->tv_nsec = (long)(ns % 1000000000);
    if (ts->tv_nsec < 0) {
        ts->tv_nsec += 1000000000;
        ts->tv_sec--;
    }
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
    if (!real_clock_gettime)         /* called by another library's constructor, before ours */
        clock_shift_init();
    int rc = real_clock_gettime(id, ts);
    if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE || id == CLOCK_TAI))
        shifted(ts);
    return rc;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    (void)tz;
    struct timespec ts;
    int rc = clock_gettime(CLOCK_REALTIME, &ts);
    if (rc == 0) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return rc;
}

time_t time(time_t *out)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out)
        *out = ts.tv_sec;
    return ts.tv_sec;
}

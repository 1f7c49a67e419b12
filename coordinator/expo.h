/*
 * expo.h - Prometheus's text exposition format, version 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/), and the
 * histogram it exposes.
 *
 * A family is one "# HELP" and one "# TYPE" line, then its samples, each
 * "name{label="value",...} number".  Label values escape backslash, double
 * quote and line feed (\\, \", \n); HELP text escapes backslash and line
 * feed only.  A histogram's samples are name_bucket{le="B"} with the count
 * of observations <= B (cumulative: each bucket holds every one below it),
 * the last le="+Inf" equal to name_count, then name_sum.
 *
 * An ExpoHist is written by one thread and read by another without a lock:
 * each bucket is an atomic count of the observations that fell in it alone
 * (not cumulative, so an observation is one increment), the sum an atomic
 * count of microseconds.  A reader adds the buckets up itself and takes
 * the count from their total, so that +Inf and _count always agree even
 * while observations go on (client_golang reaches the same with two
 * halves it swaps; one total read once is enough here, where the sum may
 * lag a bucket by an observation).
 */
#ifndef XQF_EXPO_H
#define XQF_EXPO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The latency buckets' upper bounds, seconds: 0.5 ms to 10 s, about x2.5 apart (Prometheus's defaults, finer below). */
#define EXPO_BUCKETS 14
extern const double EXPO_BOUNDS[EXPO_BUCKETS];

typedef struct {
    atomic_uint_fast64_t bucket[EXPO_BUCKETS + 1];   /* observations in (bound[i-1], bound[i]]; the last: over all */
    atomic_uint_fast64_t sum_us;
} ExpoHist;

/* Records one observation of us microseconds (negative counts as 0). Can't fail; safe against a concurrent reader. */
void expo_observe(ExpoHist *h, int64_t us);
/* Observations so far (the buckets' total). */
uint64_t expo_count(const ExpoHist *h);

/* A growing text; its data is NULL once an allocation failed (every later call does nothing). */
typedef struct {
    char *data;
    size_t len, cap;
    bool failed;
} ExpoText;

/* Frees t's text; t is empty again. */
void expo_free(ExpoText *t);
/* A family's "# HELP name help" and "# TYPE name type" lines (type: counter, gauge, histogram). */
void expo_family(ExpoText *t, const char *name, const char *type, const char *help);
/*
 * One sample: name, its labels (n pairs of key, value; values escaped as
 * the format says; n 0: none) and its value (an integer is written without
 * a fraction).
 */
void expo_sample(ExpoText *t, const char *name, const char *const *labels, int n, double value);
/*
 * A histogram's samples under name: _bucket (cumulative, le="+Inf" last),
 * _sum (seconds) and _count, each with the one label key=value (key NULL:
 * none) before le.
 */
void expo_histogram(ExpoText *t, const char *name, const char *key, const char *value, const ExpoHist *h);

#endif

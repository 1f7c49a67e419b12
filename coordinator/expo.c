/*
 * expo.c - Prometheus's text exposition format (expo.h).
 */
#include "expo.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const double EXPO_BOUNDS[EXPO_BUCKETS] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                           0.1,    0.25,  0.5,    1,     2.5,  5,     10 };

void expo_observe(ExpoHist *h, int64_t us)
{
    us = us > 0 ? us : 0;
    int i = 0;
    while (i < EXPO_BUCKETS && (double)us > EXPO_BOUNDS[i] * 1e6)
        i++;
    atomic_fetch_add_explicit(&h->bucket[i], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_us, (uint64_t)us, memory_order_relaxed);
}

uint64_t expo_count(const ExpoHist *h)
{
    uint64_t n = 0;
    for (int i = 0; i <= EXPO_BUCKETS; i++)
        n += atomic_load_explicit(&h->bucket[i], memory_order_relaxed);
    return n;
}

void expo_free(ExpoText *t)
{
    free(t->data);
    *t = (ExpoText){ 0 };
}

static void add(ExpoText *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(ExpoText *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = t->cap - t->len;
        int n = vsnprintf(t->data ? t->data + t->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = true;
            return;
        }
        if ((size_t)n < room) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? t->cap * 2 : 4096;
        while (cap - t->len <= (size_t)n)
            cap *= 2;
        char *d = realloc(t->data, cap);
        if (!d) {
            expo_free(t);
            t->failed = true;
            return;
        }
        t->data = d;
        t->cap = cap;
    }
}

/* text with backslash and line feed escaped, and double quote too when quote (a label value). */
static void add_escaped(ExpoText *t, const char *text, bool quote)
{
    for (const char *p = text; *p; p++) {
        size_t run = strcspn(p, quote ? "\\\"\n" : "\\\n");
        if (run)
            add(t, "%.*s", (int)run, p);
        p += run;
        if (!*p)
            break;
        add(t, "%s", *p == '\n' ? "\\n" : *p == '"' ? "\\\"" : "\\\\");
    }
}

void expo_family(ExpoText *t, const char *name, const char *type, const char *help)
{
    add(t, "# HELP %s ", name);
    add_escaped(t, help, false);
    add(t, "\n# TYPE %s %s\n", name, type);
}

/* "{k="v",...}" of n pairs, and le="bound" after them when le is not NULL; nothing when there are none. */
static void add_labels(ExpoText *t, const char *const *labels, int n, const char *le)
{
    if (n == 0 && !le)
        return;
    add(t, "{");
    for (int i = 0; i < n; i++) {
        add(t, "%s%s=\"", i ? "," : "", labels[2 * i]);
        add_escaped(t, labels[2 * i + 1], true);
        add(t, "\"");
    }
    if (le)
        add(t, "%sle=\"%s\"", n ? "," : "", le);
    add(t, "}");
}

/* A value as the format takes it: integers without a fraction, others in 17 digits (a double's round trip). */
static void add_value(ExpoText *t, double v)
{
    if (isnan(v))
        add(t, " NaN\n");
    else if (isinf(v))
        add(t, " %s\n", v > 0 ? "+Inf" : "-Inf");
    else if (v == floor(v) && fabs(v) < 9e15)
        add(t, " %.0f\n", v);
    else
        add(t, " %.17g\n", v);
}

void expo_sample(ExpoText *t, const char *name, const char *const *labels, int n, double value)
{
    add(t, "%s", name);
    add_labels(t, labels, n, NULL);
    add_value(t, value);
}

void expo_histogram(ExpoText *t, const char *name, const char *key, const char *value, const ExpoHist *h)
{
    const char *labels[2] = { key, value };
    int n = key ? 1 : 0;
    uint64_t cumulative = 0;
    for (int i = 0; i <= EXPO_BUCKETS; i++) {
        char le[32];
        if (i < EXPO_BUCKETS)
            snprintf(le, sizeof le, "%g", EXPO_BOUNDS[i]);
        else
            snprintf(le, sizeof le, "+Inf");
        cumulative += atomic_load_explicit(&h->bucket[i], memory_order_relaxed);
        add(t, "%s_bucket", name);
        add_labels(t, labels, n, le);
        add_value(t, (double)cumulative);
    }
    double sum = (double)atomic_load_explicit(&h->sum_us, memory_order_relaxed) / 1e6;
    add(t, "%s_sum", name);
    add_labels(t, labels, n, NULL);
    add_value(t, sum);
    add(t, "%s_count", name);
    add_labels(t, labels, n, NULL);
    add_value(t, (double)cumulative);
}

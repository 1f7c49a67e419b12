/*
 * The coordinator's monitoring, without a cluster: Prometheus's text
 * exposition (coordinator/expo.h) as the format's specification writes
 * it (label values escaped, HELP escaped, histogram buckets cumulative
 * with +Inf equal to the count), the page metrics_write makes, and the
 * --metrics addresses refused.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "expo.h"
#include "metrics.h"

/* The text as a NUL-terminated string (the writer's length checked against it). */
static const char *text_of(const ExpoText *t)
{
    cr_assert(!t->failed && t->data);
    cr_assert_eq(strlen(t->data), t->len);
    return t->data;
}

Test(metrics, label_values_are_escaped_as_the_format_says)
{
    ExpoText t = { 0 };
    const char *labels[4] = { "path", "C:\\dir \"x\"\nnext", "empty", "" };
    expo_sample(&t, "xqf_test", labels, 2, 3);
    cr_assert_str_eq(text_of(&t), "xqf_test{path=\"C:\\\\dir \\\"x\\\"\\nnext\",empty=\"\"} 3\n");
    expo_free(&t);
}

Test(metrics, help_escapes_backslash_and_line_feed_only)
{
    ExpoText t = { 0 };
    expo_family(&t, "xqf_test_total", "counter", "a \"quoted\" back\\slash\nand a line");
    cr_assert_str_eq(text_of(&t), "# HELP xqf_test_total a \"quoted\" back\\\\slash\\nand a line\n"
                                  "# TYPE xqf_test_total counter\n");
    expo_free(&t);
}

Test(metrics, values_integers_without_a_fraction_others_exactly)
{
    ExpoText t = { 0 };
    expo_sample(&t, "a", NULL, 0, 12345678901234.0);
    expo_sample(&t, "b", NULL, 0, 0.25);
    expo_sample(&t, "c", NULL, 0, 1.0 / 0.0);
    cr_assert_str_eq(text_of(&t), "a 12345678901234\nb 0.25\nc +Inf\n");
    expo_free(&t);
}

/* The value of the line starting with prefix in text (the first), or -1 when there is none. */
static double value_of(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, prefix, n) == 0 && p[n] == ' ')
            return strtod(p + n + 1, NULL);
    return -1;
}

Test(metrics, histogram_buckets_are_cumulative_and_inf_is_the_count)
{
    ExpoHist h = { 0 };
    expo_observe(&h, 300);           /* 0.3 ms: the first bucket, 0.5 ms */
    expo_observe(&h, 500);           /* on the bound: le is "less than or equal" */
    expo_observe(&h, 2000);          /* 2 ms: le 0.0025 */
    expo_observe(&h, 20000000);      /* 20 s: over every bound */
    expo_observe(&h, -5);            /* a clock that stepped back counts as 0 */
    cr_assert_eq(expo_count(&h), 5);
    ExpoText t = { 0 };
    expo_histogram(&t, "xqf_x_seconds", "statement", "xqf_a\"b", &h);
    const char *s = text_of(&t);
    cr_assert_eq(value_of(s, "xqf_x_seconds_bucket{statement=\"xqf_a\\\"b\",le=\"0.0005\"}"), 3, "%s", s);
    cr_assert_eq(value_of(s, "xqf_x_seconds_bucket{statement=\"xqf_a\\\"b\",le=\"0.001\"}"), 3, "%s", s);
    cr_assert_eq(value_of(s, "xqf_x_seconds_bucket{statement=\"xqf_a\\\"b\",le=\"0.0025\"}"), 4, "%s", s);
    cr_assert_eq(value_of(s, "xqf_x_seconds_bucket{statement=\"xqf_a\\\"b\",le=\"10\"}"), 4, "%s", s);
    cr_assert_eq(value_of(s, "xqf_x_seconds_bucket{statement=\"xqf_a\\\"b\",le=\"+Inf\"}"), 5, "%s", s);
    cr_assert_eq(value_of(s, "xqf_x_seconds_count{statement=\"xqf_a\\\"b\"}"), 5, "%s", s);
    cr_assert_float_eq(value_of(s, "xqf_x_seconds_sum{statement=\"xqf_a\\\"b\"}"), 20.0028, 1e-9, "%s", s);
    /* every bucket line is at least the one before it, and +Inf comes last */
    double last = 0;
    int buckets = 0;
    for (const char *p = strstr(s, "_bucket"); p; p = strstr(p + 1, "_bucket")) {
        double v = strtod(strchr(p, ' ') + 1, NULL);
        cr_assert_geq(v, last);
        last = v;
        buckets++;
    }
    cr_assert_eq(buckets, EXPO_BUCKETS + 1);
    cr_assert(strstr(s, "le=\"+Inf\"} 5\nxqf_x_seconds_sum"), "%s", s);
    expo_free(&t);
}

Test(metrics, the_page_has_every_family_typed_once)
{
    Metrics *m = metrics_new();
    cr_assert(m);
    metrics_add(m, METRIC_RESULTS, 3);
    metrics_add(m, METRIC_NET_BYTES, 4096);
    metrics_gauge(m, METRIC_WORKERS, 2);
    metrics_statement(m, 0, 1500);
    metrics_statement(m, 10000000, 1500);   /* no such statement: ignored */
    StoreMetricRow rows[4] = { { "runs", "active", 2 }, { "runs", "archived", 1 }, { "tasks", "queued", 7 },
                               { "games", "counted", 48 } };
    ExpoText t = { 0 };
    metrics_write(m, &t, rows, 4, 1000);
    const char *s = text_of(&t);
    cr_assert_eq(value_of(s, "xqf_results_total"), 3, "%s", s);
    cr_assert_eq(value_of(s, "xqf_artifact_bytes_total{kind=\"net\"}"), 4096);
    cr_assert_eq(value_of(s, "xqf_artifact_bytes_total{kind=\"build\"}"), 0);
    cr_assert_eq(value_of(s, "xqf_workers_connected"), 2);
    cr_assert_eq(value_of(s, "xqf_runs{state=\"active\"}"), 2);
    cr_assert_eq(value_of(s, "xqf_runs{state=\"finished\"}"), 0, "a known state with no run is 0");
    cr_assert_eq(value_of(s, "xqf_runs{state=\"archived\"}"), 1, "a state not known is written too");
    cr_assert_eq(value_of(s, "xqf_tasks{state=\"queued\"}"), 7);
    cr_assert_eq(value_of(s, "xqf_games_total"), 48);
    cr_assert_eq(value_of(s, "xqf_metrics_database_up"), 1);
    cr_assert_eq(value_of(s, "xqf_db_statement_seconds_count{statement=\"xqf_BEGIN\"}"), 1, "%s", s);
    /* each family typed once, before its samples */
    const char *families[] = { "xqf_results_rejected_total", "xqf_artifact_chunks_total", "xqf_runs",
                               "xqf_db_statement_seconds" };
    for (size_t i = 0; i < sizeof families / sizeof *families; i++) {
        char type[128];
        snprintf(type, sizeof type, "# TYPE %s ", families[i]);
        const char *first = strstr(s, type);
        cr_assert(first, "%s untyped", families[i]);
        cr_assert_null(strstr(first + 1, type), "%s typed twice", families[i]);
    }
    expo_free(&t);
    /* the database unread: said, and its families left out */
    metrics_write(m, &t, NULL, -1, 0);
    s = text_of(&t);
    cr_assert_eq(value_of(s, "xqf_metrics_database_up"), 0);
    cr_assert_null(strstr(s, "xqf_runs{"));
    expo_free(&t);
    metrics_destroy(&m);
    metrics_destroy(&m);
    cr_assert_null(m);
}

Test(metrics, bad_addresses_are_refused)
{
    struct sockaddr_storage a;
    char why[256];
    const char *bad[] = { "", "9711", ":9711", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536",
                          "127.0.0.1:97x", "example.org:9711", "::1:9711", "[127.0.0.1]:9711", "[::1:9711" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        cr_assert_eq(metrics_address(bad[i], &a, why, sizeof why), -1, "'%s' taken", bad[i]);
    cr_assert(strstr(why, "--metrics"), "%s", why);
    const char *good[] = { "127.0.0.1:9711", "localhost:1", "0.0.0.0:65535", "[::1]:9711" };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        cr_assert_eq(metrics_address(good[i], &a, why, sizeof why), 0, "'%s': %s", good[i], why);
    cr_assert_eq(a.ss_family, AF_INET6);
}

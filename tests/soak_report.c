/*
 * xqf-soakreport: the verdict and the HTML page of a soak (ops/soak).
 *
 * Reads the soak's samples, a tab-separated file with a header line: the
 * first column the seconds since the start ("t_s"), then one column per
 * series ("rss_mb", "fds", "db_mb", a table's "tasks_mb", ...); an empty
 * field or "-" is a sample not taken.  The series named by --flat (the
 * coordinator's memory and descriptors) must stay flat after the warm-up:
 * their growth is the median of the last tenth of the samples against the
 * median of the first tenth after the warm-up (medians: one sample taken
 * during a burst does not decide), under --limit.  Prints one line per
 * flat series and per --check given (lines "PASS ..." or "FAIL ...", from
 * the soak's other checks), writes the page (report/report.c's charts) and
 * ends with "PASS: ..." or "FAIL: ...".  Exit status 0 pass, 1 fail, 2
 * bad usage or an unreadable file.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "report.h"

enum { SERIES_MAX = 16, LINE_MAX_LEN = 4096, CHECKS_MAX = 32 };

static const OptSpec OPTIONS[] = {
    { "--samples", OPT_TEXT, "FILE", NULL, .help = "the samples (tab-separated, a header line)" },
    { "--html", OPT_TEXT, "FILE", NULL, .help = "the page to write" },
    { "--flat", OPT_TEXT, "NAME", NULL, .repeat = true, .help = "a series that must stay flat (repeatable)" },
    { "--warmup", OPT_REAL, "S", "300", .rmin = 0, .rmax = 1e7, .help = "seconds of warm-up not judged" },
    { "--limit", OPT_REAL, "F", "0.05", .rmin = 0, .rmax = 10, .help = "the growth allowed (0.05: 5 %)" },
    { "--title", OPT_TEXT, "TEXT", "soak", .help = "the page's title" },
    { "--conditions", OPT_TEXT, "TEXT", NULL, .help = "the conditions, shown under the checks" },
    { "--check", OPT_TEXT, "LINE", NULL, .repeat = true, .help = "another check's line, \"PASS ...\" or \"FAIL ...\"" },
    OPTS_END,
};

static const OptTable TABLE = {
    .program = "xqf-soakreport", .spec = OPTIONS,
    .usage = "Usage: xqf-soakreport --samples FILE --html FILE [--flat NAME]... [--warmup S] [--limit F]\n"
             "                      [--title TEXT] [--conditions TEXT] [--check LINE]...\n"
             "\n"
             "The verdict and the HTML page of a soak (ops/soak).\n",
};

typedef struct {
    char names[SERIES_MAX][64];
    int ncols;                       /* series, the time column not counted */
    double *t, *y[SERIES_MAX];
    size_t n, cap;
} Samples;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of the finite values of v[from..to), NaN when none. */
static double median(const double *v, size_t from, size_t to)
{
    double *w = malloc(sizeof *w * (to > from ? to - from : 1));
    size_t n = 0;
    for (size_t i = from; w && i < to; i++)
        if (isfinite(v[i]))
            w[n++] = v[i];
    double m = NAN;
    if (n) {
        qsort(w, n, sizeof *w, cmp_double);
        m = n % 2 ? w[n / 2] : (w[n / 2 - 1] + w[n / 2]) / 2;
    }
    free(w);
    return m;
}

/* Reads the samples file. 0, or -1 after a message. */
static int read_samples(const char *path, Samples *s)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "xqf-soakreport: error: cannot read %s\n", path);
        return -1;
    }
    char line[LINE_MAX_LEN];
    int rc = 0;
    if (!fgets(line, sizeof line, f)) {
        fprintf(stderr, "xqf-soakreport: error: %s is empty\n", path);
        rc = -1;
    }
    for (char *save = NULL, *tok = rc ? NULL : strtok_r(line, "\t\n", &save); tok; tok = strtok_r(NULL, "\t\n", &save)) {
        if (s->ncols == SERIES_MAX) {
            fprintf(stderr, "xqf-soakreport: error: more than %d series\n", SERIES_MAX);
            rc = -1;
            break;
        }
        if (tok != line)             /* the first column is the time */
            snprintf(s->names[s->ncols++], sizeof s->names[0], "%s", tok);
    }
    while (rc == 0 && fgets(line, sizeof line, f)) {
        if (s->n == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 256;
            double *t = realloc(s->t, sizeof *t * s->cap);
            if (!t)
                return fclose(f), -1;
            s->t = t;
            for (int c = 0; c < s->ncols; c++) {
                double *y = realloc(s->y[c], sizeof *y * s->cap);
                if (!y)
                    return fclose(f), -1;
                s->y[c] = y;
            }
        }
        char *p = line, *end;
        s->t[s->n] = strtod(p, &end);
        if (end == p || !isfinite(s->t[s->n]))
            continue;                /* not a sample line */
        p = end;
        for (int c = 0; c < s->ncols; c++) {
            double v = NAN;
            if (*p == '\t') {
                p++;
                v = strtod(p, &end);
                if (end == p)
                    v = NAN;
                p = end;
                while (*p && *p != '\t' && *p != '\n')
                    p++;
            }
            s->y[c][s->n] = v;
        }
        s->n++;
    }
    fclose(f);
    return rc;
}

int main(int argc, char **argv)
{
    Opts o;
    int rc = opts_parse(&o, &TABLE, argc - 1, argv + 1);
    if (rc != OPTS_OK)
        return rc == OPTS_HELP ? 0 : 2;
    if (!opts_given(&o, "--samples") || !opts_given(&o, "--html"))
        return opts_error(TABLE.program, "give --samples FILE and --html FILE"), 2;
    Samples s = { .ncols = 0 };
    if (read_samples(opts_text(&o, "--samples"), &s) != 0)
        return 2;
    double warmup = opts_real(&o, "--warmup"), limit = opts_real(&o, "--limit");
    xqf_report_series series[SERIES_MAX];
    const char *checks[CHECKS_MAX + SERIES_MAX];
    char lines[SERIES_MAX][256];
    size_t nchecks = 0, from = 0;
    bool passed = true;
    while (from < s.n && s.t[from] < warmup)
        from++;
    size_t tenth = (s.n - from) / 10 ? (s.n - from) / 10 : 1;
    for (int c = 0; c < s.ncols; c++) {
        series[c] = (xqf_report_series){ .name = s.names[c], .unit = "", .y = s.y[c], .growth = NAN };
        const char *unit = strrchr(s.names[c], '_');
        if (unit && strcmp(unit, "_mb") == 0) {
            series[c].unit = "MB";
            s.names[c][unit - s.names[c]] = '\0';
        } else
            series[c].unit = "count";
    }
    for (int i = 0; opts_nth(&o, "--flat", i); i++) {
        const char *want = opts_nth(&o, "--flat", i);
        int c = 0;
        while (c < s.ncols && strcmp(s.names[c], want) != 0)
            c++;
        if (c == s.ncols) {
            fprintf(stderr, "xqf-soakreport: error: --flat %s: no such series\n", want);
            return 2;
        }
        xqf_report_series *x = &series[c];
        double base = s.n > from ? median(x->y, from, from + tenth) : NAN;
        double last = s.n > from ? median(x->y, s.n - tenth, s.n) : NAN;
        x->flat_checked = true;
        x->growth = base > 0 ? last / base - 1 : NAN;
        bool ok = s.n - from >= 2 && isfinite(x->growth) && x->growth < limit;
        passed = passed && ok;
        snprintf(lines[c], sizeof lines[c], "%s %s: %.1f -> %.1f %s after the warm-up, growth %+.1f %% (limit %.0f %%%s)",
                 ok ? "PASS" : "FAIL", x->name, base, last, x->unit, 100 * x->growth, 100 * limit,
                 s.n - from >= 2 ? "" : "; too few samples after the warm-up");
        checks[nchecks++] = lines[c];
    }
    for (int i = 0; opts_nth(&o, "--check", i) && nchecks < CHECKS_MAX + SERIES_MAX; i++) {
        checks[nchecks] = opts_nth(&o, "--check", i);
        passed = passed && strncmp(checks[nchecks], "PASS", 4) == 0;
        nchecks++;
    }
    for (size_t i = 0; i < nchecks; i++)
        printf("%s\n", checks[i]);
    xqf_report_soak soak = { .title = opts_text(&o, "--title"), .conditions = opts_text(&o, "--conditions"),
                             .warmup_s = warmup, .limit = limit, .t = s.t, .count = s.n, .series = series,
                             .series_count = (size_t)s.ncols, .checks = checks, .check_count = nchecks,
                             .passed = passed };
    FILE *out = fopen(opts_text(&o, "--html"), "w");
    if (!out || xqf_report_soak_html(out, &soak) != 0) {
        fprintf(stderr, "xqf-soakreport: error: cannot write %s\n", opts_text(&o, "--html"));
        passed = false;
    }
    if (out)
        fclose(out);
    printf("%s: %s (%zu samples over %.1f min; page %s)\n", passed ? "PASS" : "FAIL", opts_text(&o, "--title"), s.n,
           s.n ? s.t[s.n - 1] / 60 : 0.0, opts_text(&o, "--html"));
    free(s.t);
    for (int c = 0; c < s.ncols; c++)
        free(s.y[c]);
    return passed ? 0 : 1;
}

/*
 * The run report page: structure of a synthetic SPSA run (3 parameters,
 * 50 samples) and SPRT test, edge cases (no data, one sample, infinite
 * Elo, HTML in names), the write-error contract, and rendering in headless
 * Chromium (skipped when /usr/bin/chromium is absent).
 *
 * Pages and screenshots go to a temporary directory that is removed at the
 * end, or to $XQF_REPORT_DIR (kept) when that is set.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"
#include "sprt_calc.h"

#define CHROMIUM "/usr/bin/chromium"
#define NPARAMS 3
#define NSAMPLES 50

/* ---- synthetic runs -------------------------------------------------------- */

static xqf_report_param params[NPARAMS];
static xqf_report_point history[NPARAMS][NSAMPLES];
static xqf_report_sample samples[NSAMPLES];

/* Cumulative results of NSAMPLES tasks of `pairs` pairs each, the first player scoring `edge` more. */
static void make_samples(int64_t pairs, double edge)
{
    uint64_t rng = 12345;
    xqf_report_sample total = { 0 };
    for (int k = 0; k < NSAMPLES; k++) {
        for (int64_t p = 0; p < pairs; p++) {
            int score = 0; /* half points of the pair: 0..4 */
            for (int g = 0; g < 2; g++) {
                rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
                double u = (double)(rng >> 11) / 9007199254740992.0;
                int r = u < 0.3 - edge ? 0 : u < 0.7 ? 1 : 2; /* loss, draw, win */
                score += r;
                total.wins += r == 2, total.draws += r == 1, total.losses += r == 0;
            }
            total.penta[score]++;
        }
        total.games = 2 * pairs * (k + 1);
        samples[k] = total;
    }
}

static xqf_report_run spsa_run(void)
{
    static const struct { const char *name; double start, min, max, c_end, target; } P[NPARAMS] = {
        { "Null<R>", 3, 1, 5, 0.5, 2.2 },
        { "Rook&Mg", 900, 300, 2000, 30, 1040 },
        { "King\"Safety'", 50, 0, 100, 4, 38.5 },
    };
    for (int i = 0; i < NPARAMS; i++) {
        for (int k = 0; k < NSAMPLES; k++) {
            double v = P[i].target + (P[i].start - P[i].target) * exp(-k / 12.0) +
                       0.03 * (P[i].max - P[i].min) * sin(k * 1.7 + i) * exp(-k / 30.0);
            history[i][k] = (xqf_report_point){ 40 * (k + 1), v };
        }
        params[i] = (xqf_report_param){ P[i].name, P[i].start, P[i].min, P[i].max, P[i].c_end,
                                        0.002, history[i][NSAMPLES - 1].value, history[i],
                                        NSAMPLES };
    }
    make_samples(20, 0.0);
    return (xqf_report_run){
        .id = 7, .name = "Tune <search> & eval", .kind = XQF_REPORT_SPSA, .state = "finished",
        .created = "2024-05-01 20:00:00+00", .finished = "2024-05-02 06:12:31+00",
        .nodes = 20000, .book = "xqf-book.epd", .pairs_per_task = 10, .planned_pairs = 1000,
        .elo0 = NAN, .elo1 = NAN, .alpha = NAN, .beta = NAN, .spsa_alpha = 0.602,
        .spsa_gamma = 0.101, .spsa_A = 100, .params = params, .param_count = NPARAMS,
        .samples = samples, .sample_count = NSAMPLES,
    };
}

static xqf_report_run sprt_run(void)
{
    make_samples(40, 0.06);
    return (xqf_report_run){
        .id = 8, .name = "LMR tweak <b>vs</b> base", .kind = XQF_REPORT_SPRT, .state = "finished",
        .created = "2024-05-02 07:00:00+00", .finished = "2024-05-02 08:30:00+00", .tc = "10+0.1",
        .book = "xqf-book.epd", .pairs_per_task = 8, .planned_pairs = 20000, .elo0 = 0, .elo1 = 5,
        .alpha = 0.05, .beta = 0.05, .verdict = "H1 accepted", .spsa_alpha = NAN,
        .spsa_gamma = NAN, .spsa_A = NAN, .samples = samples, .sample_count = NSAMPLES,
    };
}

/* ---- helpers --------------------------------------------------------------- */

static char dir[256];

static void dir_setup(void)
{
    const char *keep = getenv("XQF_REPORT_DIR");
    if (keep && *keep) {
        snprintf(dir, sizeof dir, "%s", keep);
        mkdir(dir, 0755);
    } else {
        snprintf(dir, sizeof dir, "/tmp/xqf-report-XXXXXX");
        cr_assert_not_null(mkdtemp(dir));
    }
}

static void dir_teardown(void)
{
    const char *keep = getenv("XQF_REPORT_DIR");
    if (!(keep && *keep)) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        cr_assert_eq(system(cmd), 0);
    }
}

TestSuite(report, .init = dir_setup, .fini = dir_teardown);

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    cr_assert_not_null(s);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

/* Renders run to dir/name and returns the page (malloc'd). */
static char *render(const xqf_report_run *run, const char *name, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    cr_assert_eq(xqf_report_html(f, run), 0);
    cr_assert_eq(fclose(f), 0);
    return slurp(path);
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + strlen(needle), needle))
        n++;
    return n;
}

/* Do the container elements nest properly (every one closed, in order)? */
static bool balanced(const char *html)
{
    static const char *const TAGS[] = { "html", "head", "body", "header", "main", "section",
                                        "div", "table", "tr", "figure", "svg", "p" };
    const char *stack[64];
    size_t lens[64];
    int depth = 0;
    for (const char *p = strchr(html, '<'); p; p = strchr(p + 1, '<')) {
        bool close = p[1] == '/';
        const char *name = p + 1 + close;
        size_t len = strspn(name, "abcdefghijklmnopqrstuvwxyz");
        bool container = false;
        for (size_t i = 0; i < sizeof TAGS / sizeof *TAGS; i++)
            container |= strlen(TAGS[i]) == len && strncmp(TAGS[i], name, len) == 0;
        if (!container)
            continue;
        if (!close) {
            if (depth == 64)
                return false;
            stack[depth] = name, lens[depth++] = len;
        } else if (depth == 0 || lens[depth - 1] != len || strncmp(stack[depth - 1], name, len) != 0)
            return false;
        else
            depth--;
    }
    return depth == 0;
}

/* Self-contained: the only "http" is the SVG namespace, nothing is fetched or scripted. */
static void assert_self_contained(const char *html)
{
    static const char XMLNS[] = "xmlns=\"http://www.w3.org/2000/svg\"";
    cr_assert_eq(count(html, "http"), count(html, XMLNS), "\"http\" outside the SVG namespace");
    cr_assert_eq(count(html, XMLNS), count(html, "<svg"));
    static const char *const BANNED[] = { "<script", "<link", "<img", "<iframe", "src=", "href=",
                                          "url(", "@import" };
    for (size_t i = 0; i < sizeof BANNED / sizeof *BANNED; i++)
        cr_assert_null(strstr(html, BANNED[i]), "page contains %s", BANNED[i]);
}

/* ---- structure --------------------------------------------------------------- */

Test(report, spsa_page_structure)
{
    xqf_report_run run = spsa_run();
    char path[300];
    char *html = render(&run, "spsa.html", path, sizeof path);

    cr_assert(strncmp(html, "<!DOCTYPE html>", 15) == 0);
    cr_assert_not_null(strstr(html, "<meta charset=\"utf-8\">"));
    cr_assert_eq(count(html, "<svg"), NPARAMS + 1, "one chart per parameter and the Elo chart");
    cr_assert_eq(count(html, "</svg>"), NPARAMS + 1);
    cr_assert(balanced(html), "svg/div/table/... do not nest properly");
    assert_self_contained(html);

    /* Names and text from the data are escaped, never raw. */
    cr_assert_not_null(strstr(html, "Null&lt;R&gt;"));
    cr_assert_not_null(strstr(html, "Rook&amp;Mg"));
    cr_assert_not_null(strstr(html, "King&quot;Safety&#39;"));
    cr_assert_not_null(strstr(html, "Tune &lt;search&gt; &amp; eval"));
    cr_assert_null(strstr(html, "Null<R>"));
    cr_assert_null(strstr(html, "<search>"));

    /* Start values as labelled reference lines; bounds in each caption, and as lines only
       when the zoomed view reaches them (here none: theta moves well inside its range). */
    static const char *const REFS[] = { "start 3<", "start 900<", "start 50<", "(bounds 1&ndash;5)",
                                        "(bounds 300&ndash;2000)", "(bounds 0&ndash;100)" };
    for (size_t i = 0; i < sizeof REFS / sizeof *REFS; i++)
        cr_assert_not_null(strstr(html, REFS[i]), "missing reference label %s", REFS[i]);
    cr_assert_eq(count(html, "class=\"ref bound\""), 0);
    cr_assert_eq(count(html, "class=\"ref start\""), NPARAMS);
    cr_assert_eq(count(html, "<polyline class=\"line\""), NPARAMS + 1);
    cr_assert_eq(count(html, "<polygon class=\"band\""), 1);
    cr_assert_not_null(strstr(html, "20000 nodes per move"));
    cr_assert_not_null(strstr(html, "2000 of 2000 (100&nbsp;%)"));
    cr_assert_not_null(strstr(html, ">Final<"));
    cr_assert_null(strstr(html, "no data yet"));
    cr_assert_null(strstr(html, "nan"));
    free(html);
}

Test(report, sprt_page_structure)
{
    xqf_report_run run = sprt_run();
    char path[300];
    char *html = render(&run, "sprt.html", path, sizeof path);

    cr_assert_eq(count(html, "<svg"), 2, "the Elo and the LLR chart");
    cr_assert(balanced(html));
    assert_self_contained(html);
    cr_assert_not_null(strstr(html, "LMR tweak &lt;b&gt;vs&lt;/b&gt; base"));
    /* alpha = beta = 0.05: A = ln(0.05/0.95) = -2.94, B = 2.94, drawn and tabled. */
    cr_assert_not_null(strstr(html, "B = 2.94: accept H1"));
    cr_assert_not_null(strstr(html, "A = -2.94: accept H0"));
    cr_assert_not_null(strstr(html, "[-2.94, 2.94]"));
    cr_assert_not_null(strstr(html, "class=\"ref h1\""));
    cr_assert_not_null(strstr(html, "class=\"ref h0\""));
    cr_assert_not_null(strstr(html, "H1 accepted"));
    cr_assert_not_null(strstr(html, "10+0.1"));

    /* The summary holds the totals of the last sample and the statistics of stats.h. */
    const xqf_report_sample *s = &samples[NSAMPLES - 1];
    char text[200];
    snprintf(text, sizeof text, "%lld, %lld, %lld, %lld, %lld", (long long)s->penta[0],
             (long long)s->penta[1], (long long)s->penta[2], (long long)s->penta[3],
             (long long)s->penta[4]);
    cr_assert_not_null(strstr(html, text));
    xqf_elo e;
    double llr;
    cr_assert_eq(xqf_elo_penta(s->penta, &e), XQF_STATS_OK);
    cr_assert_eq(xqf_llr_penta(s->penta, 0, 5, &llr), XQF_STATS_OK);
    snprintf(text, sizeof text, "<b>%+.1f</b> &plusmn; %.1f", e.elo, e.elo_ci95);
    cr_assert_not_null(strstr(html, text), "missing %s", text);
    snprintf(text, sizeof text, "%+.2f</b> [-2.94, 2.94]", llr);
    cr_assert_not_null(strstr(html, text), "missing %s", text);
    /* past a bound (the fixture's test passed): the Elo corrected for the overshoot (sprt_calc.h) */
    cr_assert(llr >= 2.94, "LLR %f", llr);
    xqf_sprt_design d = { 0, 5, 0.05, 0.05 };
    xqf_sprt_estimate est;
    cr_assert_eq(xqf_sprt_estimate_elo(&d, e.samples, llr, &est), XQF_STATS_OK);
    snprintf(text, sizeof text, "corrected for the overshoot: <b>%+.1f</b> [%+.1f, %+.1f]", est.nelo, est.lo, est.hi);
    cr_assert_not_null(strstr(html, text), "missing %s", text);
    free(html);
}

Test(report, no_data_one_sample_and_infinite_elo)
{
    xqf_report_run run = spsa_run();
    char path[300];

    /* Nothing played yet: every chart says so, the page is still whole. */
    xqf_report_param bare[NPARAMS];
    for (int i = 0; i < NPARAMS; i++)
        bare[i] = params[i], bare[i].history = NULL, bare[i].history_count = 0;
    run.params = bare;
    run.samples = NULL;
    run.sample_count = 0;
    run.finished = NULL;
    char *html = render(&run, "empty.html", path, sizeof path);
    cr_assert_eq(count(html, "<svg"), NPARAMS + 1);
    cr_assert_eq(count(html, "no data yet"), NPARAMS + 2, "each chart and the results table");
    cr_assert(balanced(html));
    cr_assert_not_null(strstr(html, ">Current<"));
    free(html);

    /* One sample, all wins: Elo and its interval are infinite, clamped and marked. */
    xqf_report_sample won = { .games = 4, .penta = { 0, 0, 0, 0, 2 }, .wins = 4 };
    run = sprt_run();
    run.samples = &won;
    run.sample_count = 1;
    run.verdict = NULL;
    html = render(&run, "one.html", path, sizeof path);
    cr_assert_eq(count(html, "<svg"), 2);
    cr_assert_null(strstr(html, "no data yet"));
    cr_assert_eq(count(html, "<path class=\"clamp\""), 1);
    cr_assert_not_null(strstr(html, "1 point beyond -500&nbsp;&hellip;&nbsp;500"));
    cr_assert_not_null(strstr(html, "+&infin;"));
    cr_assert_eq(count(html, "<line class=\"errbar\""), 1);
    cr_assert_not_null(strstr(html, "no verdict yet"));
    cr_assert(balanced(html));
    cr_assert_null(strstr(html, "nan"));
    free(html);
}

Test(report, long_runs_are_thinned_keeping_the_last_point)
{
    enum { LONG = 1234 };
    static xqf_report_sample many[LONG];
    for (int k = 0; k < LONG; k++)
        many[k] = (xqf_report_sample){ .games = 2 * (k + 1), .penta = { k / 5, 0, k / 2, 0, k / 3 + 1 },
                                       .wins = k / 3 + 1, .draws = k / 2, .losses = k / 5 };
    xqf_report_run run = sprt_run();
    run.samples = many;
    run.sample_count = LONG;
    char path[300];
    char *html = render(&run, "long.html", path, sizeof path);
    cr_assert_eq(count(html, "<svg"), 2);
    /* Each polyline keeps 500 points (one space after each), the last at the last sample. */
    for (const char *p = strstr(html, "<polyline"); p; p = strstr(p + 1, "<polyline")) {
        const char *end = strchr(p, '/');
        int points = 0;
        for (const char *q = strstr(p, "points=\""); q < end; q++)
            points += *q == ' ';
        cr_assert_eq(points, 500);
    }
    cr_assert_not_null(strstr(html, "2468 of 40000"));
    cr_assert(balanced(html));
    free(html);
}

Test(report, write_error_is_reported)
{
    xqf_report_run run = sprt_run();
    FILE *f = fopen("/dev/null", "r");
    cr_assert_not_null(f);
    cr_assert_eq(xqf_report_html(f, &run), -1);
    fclose(f);
}

/* ---- rendering in headless Chromium ---------------------------------------- */

/* Runs chromium on dir/page with `action` (shell words); stdout to dir/out. */
static int chromium(const char *page, const char *action, const char *out)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "timeout 60 " CHROMIUM " --headless --no-sandbox --disable-gpu --disable-quic "
             "--no-first-run --disable-background-networking --disable-component-update "
             "--disable-sync --user-data-dir='%s/profile' --window-size=1200,2000 %s "
             "'file://%s/%s' >'%s/%s' 2>>'%s/chromium.log'",
             dir, action, dir, page, dir, out, dir);
    return system(cmd);
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

Test(report, renders_in_headless_chromium, .timeout = 150)
{
    if (access(CHROMIUM, X_OK) != 0)
        cr_skip("headless Chromium test skipped: " CHROMIUM " is absent (apt-get install chromium)");
    char path[300];
    xqf_report_run run = spsa_run();
    free(render(&run, "report-spsa.html", path, sizeof path));
    run = sprt_run();
    free(render(&run, "report-sprt.html", path, sizeof path));

    /* The SPSA page as a 1200 x 2000 screenshot. */
    char action[512];
    snprintf(action, sizeof action, "--screenshot='%s/report-spsa.png'", dir);
    cr_assert_eq(chromium("report-spsa.html", action, "screenshot.out"), 0,
                 "chromium failed, see %s/chromium.log", dir);
    snprintf(path, sizeof path, "%s/report-spsa.png", dir);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0, "no screenshot at %s", path);
    cr_assert_gt(st.st_size, 40000, "screenshot too small (%lld bytes): blank page?",
                 (long long)st.st_size);
    unsigned char head[24];
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    cr_assert_eq(fread(head, 1, sizeof head, f), sizeof head);
    fclose(f);
    cr_assert(memcmp(head, "\x89PNG\r\n\x1a\n", 8) == 0 && memcmp(head + 12, "IHDR", 4) == 0);
    cr_assert_eq(be32(head + 16), 1200);
    cr_assert_eq(be32(head + 20), 2000);

    /* The SPRT page's DOM after parsing: both charts are SVG elements with their content. */
    cr_assert_eq(chromium("report-sprt.html", "--dump-dom", "sprt.dom"), 0,
                 "chromium failed, see %s/chromium.log", dir);
    snprintf(path, sizeof path, "%s/sprt.dom", dir);
    char *dom = slurp(path);
    cr_assert_eq(count(dom, "<svg"), 2, "the rendered DOM lost the charts");
    cr_assert_eq(count(dom, "</svg>"), 2);
    cr_assert_eq(count(dom, "<polyline class=\"line\""), 2);
    cr_assert_eq(count(dom, "<polygon class=\"band\""), 1);
    cr_assert_not_null(strstr(dom, "accept H1</text>"), "LLR bound labels inside the svg");
    cr_assert_not_null(strstr(dom, "</footer>"), "the page was parsed to its end");
    cr_assert_null(strstr(dom, "<parsererror"));
    free(dom);
}

/* A parameter that runs into its bound gets the bound drawn. */
Test(report, a_bound_reached_is_drawn)
{
    xqf_report_run run = spsa_run();
    for (int k = 0; k < NSAMPLES; k++)
        history[0][k].value = 3 - 2.0 * k / (NSAMPLES - 1);   /* 3 down to its min, 1 */
    char path[300];
    char *html = render(&run, "spsa-bound.html", path, sizeof path);
    cr_assert_eq(count(html, "class=\"ref bound\""), 1);
    cr_assert_not_null(strstr(html, "min 1<"));
    free(html);
}

/*
 * progressions.c - progressions (xqf-tune progression new): the list
 * (store_lists.def's PROGRESSIONS), and one progression's page, as
 * Fishtest's regression tests show main's strength: a chart of each
 * commit's Elo against the base with its 95 % interval, drawn against the
 * commit's date (an inline SVG written here: no script), and a table of
 * the commits with their runs' results.  The Elo is run_elo_of's, the
 * estimate xqf-tune show and the run's page give for the same counts.
 */
#include "frame.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run_settings.h"
#include "run_view.h"
#include "store_progressions.h"

static void progression_link(Buf *b, const StoreTable *t, int row)
{
    int c = store_table_column(t, "_id");
    buf_puts(b, "<td><a href=\"/progressions/");
    buf_html(b, store_table_cell(t, row, c));
    buf_puts(b, "\">chart</a></td>");
}

int page_progressions(const PageIn *in, Buf *b)
{
    StoreTable *t = store_list(in->s, STORE_LIST_PROGRESSIONS, NULL);
    if (!t) {
        page_error(b, 503, "the run database cannot be read now");
        return 503;
    }
    head(b, "Progressions", in->u);
    buf_printf(b, "<h1>Progressions</h1>\n<p>An engine's commits, each played against one base with one set of "
                  "settings, their Elo drawn by the commits' dates (%d). Made by <code>xqf-tune progression new "
                  "ENGINE --base REF --refs REF,REF,...</code>.</p>\n",
               store_table_rows(t));
    if (session_is(in->u, "tester"))
        buf_puts(b, "<p><a href=\"/new/progression\">New progression</a></p>\n");
    list_table(b, t, "Page", progression_link);
    foot(b);
    store_table_free(&t);
    return 200;
}

/* ---- the chart ------------------------------------------------------------------- */

enum { CHART_W = 920, CHART_H = 380, CHART_LEFT = 64, CHART_RIGHT = 24, CHART_TOP = 18, CHART_BOTTOM = 52 };
typedef struct {
    double x0, x1, y0, y1;
} Frame;

static double chart_x(const Frame *f, double x)
{
    return CHART_LEFT + (x - f->x0) / (f->x1 - f->x0) * (CHART_W - CHART_LEFT - CHART_RIGHT);
}

static double chart_y(const Frame *f, double y)
{
    return CHART_TOP + (f->y1 - y) / (f->y1 - f->y0) * (CHART_H - CHART_TOP - CHART_BOTTOM);
}

/* A round step (1, 2 or 5 times a power of ten) that cuts span into about n parts. */
static double nice_step(double span, int n)
{
    double raw = span / n, p = pow(10, floor(log10(raw)));
    return raw / p < 1.5 ? p : raw / p < 3.5 ? 2 * p : raw / p < 7.5 ? 5 * p : 10 * p;
}

static void date_text(int64_t epoch, char *out, size_t size)
{
    time_t t = (time_t)epoch;
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(out, size, "%Y-%m-%d", &tm))
        snprintf(out, size, "?");
}

/* A point's Elo and its interval's ends (infinite where the interval has no end: every game won or lost); false when it has none (no games). */
static bool point_elo(const StoreCounts *c, double *elo, double *lo, double *hi)
{
    xqf_elo e;
    if (!run_elo_of(c, &e) || isnan(e.elo))
        return false;
    *elo = e.elo;
    *lo = isfinite(e.elo_ci95) ? e.elo - e.elo_ci95 : -INFINITY;
    *hi = isfinite(e.elo_ci95) ? e.elo + e.elo_ci95 : INFINITY;
    return true;
}

/* Whether a point is drawn: its commit's date known (the builder has pinned it) and an Elo (it has games). */
static bool point_drawn(const StoreProgressionPoint *pt, double *elo, double *lo, double *hi)
{
    return pt->epoch != 0 && point_elo(&pt->counts, elo, lo, hi);
}

/*
 * The axes around the base (its date, Elo 0) and every point with an
 * estimate, its interval's finite ends included (an endless one runs to
 * the edge), a little room on each side; a day either side when all share
 * one date.
 */
static Frame chart_frame(int64_t base_epoch, const StoreProgressionPoint *pts, int n)
{
    Frame f = { (double)base_epoch, (double)base_epoch, 0, 0 };
    bool dated = base_epoch != 0;
    for (int i = 0; i < n; i++) {
        double elo, lo, hi;
        if (!point_drawn(&pts[i], &elo, &lo, &hi))
            continue;
        f.x0 = dated ? fmin(f.x0, (double)pts[i].epoch) : (double)pts[i].epoch;
        f.x1 = dated ? fmax(f.x1, (double)pts[i].epoch) : (double)pts[i].epoch;
        dated = true;
        if (isfinite(elo))
            f.y0 = fmin(f.y0, fmin(elo, lo)), f.y1 = fmax(f.y1, fmax(elo, hi));
    }
    if (!dated)
        f.x0 = f.x1 = (double)time(NULL);
    double dx = f.x1 - f.x0 > 0 ? (f.x1 - f.x0) * 0.05 : 86400;
    f.x0 -= dx, f.x1 += dx;
    double dy = f.y1 - f.y0 > 0 ? (f.y1 - f.y0) * 0.08 : 10;
    f.y0 -= dy, f.y1 += dy;
    return f;
}

static void chart_grid(Buf *b, const Frame *f)
{
    double step = nice_step(f->y1 - f->y0, 6);
    for (double v = ceil(f->y0 / step) * step; v <= f->y1; v += step) {
        double y = chart_y(f, v);
        buf_printf(b, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
                      "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.0f</text>\n",
                   CHART_LEFT, y, CHART_W - CHART_RIGHT, y, CHART_LEFT - 6, y + 4, fabs(v) < step / 2 ? 0 : v);
    }
    /* dates: about six ticks at round days */
    double days = (f->x1 - f->x0) / 86400, dstep = fmax(1, nice_step(days, 6));
    for (double d = ceil(f->x0 / 86400 / dstep) * dstep; d * 86400 <= f->x1; d += dstep) {
        char text[16];
        date_text((int64_t)(d * 86400), text, sizeof text);
        double x = chart_x(f, d * 86400);
        buf_printf(b, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
                      "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                   x, CHART_TOP, x, CHART_H - CHART_BOTTOM, x, CHART_H - CHART_BOTTOM + 16, text);
    }
}

/*
 * The chart: the base at Elo 0 (a line, and a hollow diamond at its
 * date), each commit's Elo as a dot with its 95 % interval as a bar, the
 * dots joined in date order; each dot links to its run and says its
 * figures in a tooltip.
 */
static void chart_svg(Buf *b, const StoreProgression *p, const StoreProgressionPoint *pts, int n)
{
    Frame f = chart_frame(p->base_epoch, pts, n);
    buf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"progression\" viewBox=\"0 0 %d %d\" "
                  "role=\"img\" aria-label=\"Elo of each commit against the base, by commit date\">\n",
               CHART_W, CHART_H);
    buf_printf(b, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n", CHART_LEFT, CHART_TOP,
               CHART_W - CHART_LEFT - CHART_RIGHT, CHART_H - CHART_TOP - CHART_BOTTOM);
    chart_grid(b, &f);
    double y0 = chart_y(&f, 0), bx = chart_x(&f, (double)p->base_epoch);
    buf_printf(b, "<line class=\"zero\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", CHART_LEFT, y0,
               CHART_W - CHART_RIGHT, y0);
    if (p->base_epoch) {
        buf_printf(b, "<path class=\"base\" d=\"M%.1f,%.1f l6,6 l-6,6 l-6,-6 Z\"><title>base ", bx, y0 - 6);
        buf_html(b, p->base_ref);
        buf_printf(b, " (%.12s), %s: Elo 0 by definition</title></path>\n", p->base_commit, p->base_date);
    }
    buf_puts(b, "<polyline class=\"line\" points=\"");
    for (int i = 0; i < n; i++) {
        double elo, lo, hi;
        if (point_drawn(&pts[i], &elo, &lo, &hi))
            buf_printf(b, "%.1f,%.1f ", chart_x(&f, (double)pts[i].epoch), chart_y(&f, fmax(f.y0, fmin(f.y1, elo))));
    }
    buf_puts(b, "\"/>\n");
    for (int i = 0; i < n; i++) {
        double elo, lo, hi;
        if (!point_drawn(&pts[i], &elo, &lo, &hi))
            continue;
        /* an endless interval (or an infinite Elo: every game won or lost) runs to the frame's edge, uncapped */
        double x = chart_x(&f, (double)pts[i].epoch), y = chart_y(&f, fmax(f.y0, fmin(f.y1, elo))),
               ylo = chart_y(&f, fmax(f.y0, lo)), yhi = chart_y(&f, fmin(f.y1, hi));
        double cap_lo = isfinite(lo) ? 5 : 0, cap_hi = isfinite(hi) ? 5 : 0;
        char elo_text[48];
        run_elo_text(&pts[i].counts, elo_text, sizeof elo_text);
        buf_printf(b, "<a href=\"/runs/%" PRId64 "\"><g class=\"point\"><title>", pts[i].run);
        buf_html(b, pts[i].ref);
        buf_printf(b, " (%.12s), %s: Elo %s, %" PRId64 " games</title>", pts[i].commit, pts[i].date, elo_text,
                   pts[i].counts.wins + pts[i].counts.draws + pts[i].counts.losses);
        buf_printf(b, "<line class=\"errbar\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                      "<line class=\"errbar\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                      "<line class=\"errbar\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                      "<circle class=\"dot\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\"/>",
                   x, ylo, x, yhi, x - cap_lo, ylo, x + cap_lo, ylo, x - cap_hi, yhi, x + cap_hi, yhi, x, y);
        /* the ref beside its dot, above or below by turns: commits a day apart stay apart */
        buf_printf(b, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"start\">", x + 7,
                   i % 2 ? y + 14 : y - 7);
        buf_html(b, pts[i].ref);
        buf_puts(b, "</text></g></a>\n");
    }
    buf_printf(b, "<text class=\"axis\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">commit date (UTC)</text>\n",
               (CHART_LEFT + CHART_W - CHART_RIGHT) / 2, CHART_H - 8);
    buf_printf(b, "<text class=\"axis\" transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">Elo "
                  "against the base (95 %%)</text>\n</svg>\n",
               (CHART_TOP + CHART_H - CHART_BOTTOM) / 2);
}

/* ---- one progression -------------------------------------------------------------- */

static void points_table(Buf *b, const StoreProgressionPoint *pts, int n)
{
    buf_puts(b, "<table class=\"list sortable\"><thead><tr><th>Commit</th><th>Ref</th><th>Subject</th>"
                "<th>Date (UTC)</th><th>Run</th><th>State</th><th class=\"num\">Games</th><th>W/D/L</th>"
                "<th class=\"num\">Elo</th><th class=\"num\">95 %</th></tr></thead><tbody>\n");
    for (int i = 0; i < n; i++) {
        const StoreCounts *c = &pts[i].counts;
        xqf_elo e;
        bool has = run_elo_of(c, &e);
        if (pts[i].commit[0])
            buf_printf(b, "<tr><td><code>%.12s</code></td><td>", pts[i].commit);
        else
            buf_puts(b, "<tr><td>(not built yet)</td><td>");
        buf_html(b, pts[i].ref);
        buf_puts(b, "</td><td>");
        buf_html(b, pts[i].subject);
        buf_printf(b, "</td><td class=\"nowrap\">%s</td><td><a href=\"/runs/%" PRId64 "\">%" PRId64 "</a></td><td>", pts[i].date,
                   pts[i].run, pts[i].run);
        buf_html(b, pts[i].state);
        buf_printf(b, "</td><td class=\"num\">%" PRId64 "</td><td>%" PRId64 "/%" PRId64 "/%" PRId64 "</td>",
                   c->wins + c->draws + c->losses, c->wins, c->draws, c->losses);
        if (has)
            buf_printf(b, "<td class=\"num\">%.1f</td><td class=\"num nowrap\">&plusmn; %.1f</td></tr>\n", e.elo,
                       e.elo_ci95);
        else
            buf_puts(b, "<td class=\"num\">-</td><td class=\"num\">-</td></tr>\n");
    }
    buf_puts(b, "</tbody></table>\n");
}

int page_progression(const PageIn *in, Buf *b)
{
    StoreProgression p;
    StoreProgressionPoint *pts = NULL;
    int n = 0;
    int found = store_progression_load(in->s, in->rt->progression, &p, &pts, &n);
    if (found <= 0) {
        free(pts);
        page_error(b, found < 0 ? 503 : 404,
                   found < 0 ? "the run database cannot be read now" : "no such progression");
        return found < 0 ? 503 : 404;
    }
    head(b, p.name, in->u);
    buf_printf(b, "<h1>Progression %" PRId64 ": ", p.id);
    buf_html(b, p.name);
    buf_puts(b, "</h1>\n<table class=\"settings\">");
    row(b, "Engine", p.engine, NULL);
    char base[STORE_PROGRESSION_REF_MAX + STORE_TEXT_MAX + 64];
    if (p.base_commit[0])
        snprintf(base, sizeof base, "%s (%.12s, %s): %s", p.base_ref, p.base_commit, p.base_date, p.base_subject);
    else
        snprintf(base, sizeof base, "%s (not built yet)", p.base_ref);
    row(b, "Base", base, NULL);
    row(b, "Made by", p.created_by, NULL);
    row(b, "Made (UTC)", p.created_at, NULL);
    buf_puts(b, "</table>\n");
    chart_svg(b, &p, pts, n);
    buf_puts(b, "<p class=\"note\">Each commit's Elo against the base with its 95 % interval (the run's estimate: "
                "pentanomial when its pairs are complete), at the commit's date; the base is the diamond on the "
                "zero line. An interval without an end (every game of a side won or lost) runs to the chart's edge, uncapped. A dot links to its run.</p>\n");
    points_table(b, pts, n);
    foot(b);
    free(pts);
    return 200;
}

/* ---- the form ---------------------------------------------------------------------- */

/* A setting's field (run_settings.def), as the New run forms show it. */
#define SETTING_FIELD(field_name, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, ...) \
    field(&fo, form_field, label, #def, form_help);

int page_new_progression(const Form *values, const FieldError *errors, int nerrors, const Session *u, Buf *b)
{
    Buf form = { 0 };
    FormOut fo = { .b = &form, .values = values, .errors = errors, .nerrors = nerrors };
    field(&fo, "name", "Name", "", "the progression's name (its runs are named by their refs)");
    field(&fo, "engine", "Engine", "xqf", "xqf (ours) or an engine record's name");
    field(&fo, "base_ref", "Base git ref", "", "the base every commit plays against: a branch, tag or commit");
    field(&fo, "refs", "Commits", "", "the git refs measured, comma-separated: a games run each against the base");
    field(&fo, "pairs", "Game pairs", "", "of each commit against the base");
    field(&fo, "tc", "Time control", "", "BASE+INC in seconds (10+0.1), or");
    field(&fo, "nodes", "Nodes per move", "", "fixed nodes (give one of the two)");
    field(&fo, "threads", "Threads per engine", "1", "1-64 (UCI Threads)");
    RUN_SETTINGS_EVERY_KIND(SETTING_FIELD)
    head(b, "New progression", u);
    buf_puts(b, "<h1>New progression</h1>\n<p>An engine's commits, each a games run against one base with these "
                "settings, as <code>xqf-tune progression new</code> makes them; the builder builds each ref and the "
                "base before its run starts, and the page learns each commit's date from it.</p>\n");
    form_unshown_errors(b, &fo, "The progression was not created: see the messages below.");
    if (!session_is(u, "admin"))
        buf_puts(b, "<p class=\"notice\">The runs you create wait for an admin's approval before workers play "
                    "them.</p>\n");
    buf_puts(b, "<form method=\"post\" action=\"/new/progression\" class=\"new\">");
    csrf_field(b, u);
    if (buf_failed(&form))
        b->failed = true;
    else if (form.len)
        buf_add(b, form.data, form.len);
    buf_free(&form);
    buf_puts(b, "<button>Create</button></form>\n");
    foot(b);
    return nerrors ? 400 : 200;
}

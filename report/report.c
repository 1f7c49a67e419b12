/*
 * report.c - the run report page (see report.h).
 *
 * The page is written top to bottom: head and style, a header with the
 * run's badges, the settings, the charts, the final tables.  Every line
 * chart goes through chart_svg(): points (x, y and optionally an interval
 * lo..hi), reference lines, and y limits beyond which values are clamped to
 * the edge and marked; it picks 1/2/5 x 10^k ticks and shows a message
 * when there is nothing to draw.  Series longer than CHART_MAX_POINTS are
 * thinned evenly (first and last point kept) so that the page stays small
 * for long runs.
 *
 * Static text is written as HTML (with entities); text from the model only
 * through put_text(), which escapes it (html.h, the escaper xqf-web uses too).
 */
#include "report.h"
#include "html.h"
#include "sprt_calc.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

enum { CHART_MAX_POINTS = 500, CHART_MAX_REFS = 3 };

/* The limits of a chart whose values have no natural bound: only infinities are clamped. */
#define NO_LIMIT 1e12

/* ---- text and numbers ---------------------------------------------------- */

static void file_sink(void *to, const char *s, size_t n) { fwrite(s, 1, n, to); }

/* Writes s HTML-escaped (html.h: control characters become U+FFFD). */
static void put_text(FILE *out, const char *s) { xqf_html_escape(s, file_sink, out); }

/* Writes s escaped, or a dash when s is NULL or empty. */
static void put_opt(FILE *out, const char *s)
{
    if (s && *s)
        put_text(out, s);
    else
        fputs("&mdash;", out);
}

static bool has_text(const char *s)
{
    return s && *s;
}

/* A formatted number (HTML), returned by value so that several fit in one printf. */
typedef struct numtext {
    char s[64];
} numtext;

/* v with `decimals` decimals (a sign when sign is set), never "-0"; NaN is a dash, infinities "+-inf". */
static numtext fmt_fixed(double v, int decimals, bool sign)
{
    numtext t;
    if (isnan(v))
        snprintf(t.s, sizeof t.s, "&mdash;");
    else if (isinf(v))
        snprintf(t.s, sizeof t.s, "%s&infin;", v < 0 ? "-" : sign ? "+" : "");
    else {
        if (fabs(v) < 0.5 * pow(10, -decimals))
            v = 0;
        snprintf(t.s, sizeof t.s, sign ? "%+.*f" : "%.*f", decimals, v);
    }
    return t;
}

/* A parameter value: at most two decimals, trailing zeros dropped. */
static numtext fmt_value(double v, bool sign)
{
    numtext t = fmt_fixed(v, 2, sign);
    if (strchr(t.s, '.') && !strchr(t.s, '&')) {
        size_t n = strlen(t.s);
        while (t.s[n - 1] == '0')
            t.s[--n] = '\0';
        if (t.s[n - 1] == '.')
            t.s[n - 1] = '\0';
    }
    return t;
}

static numtext fmt_count(int64_t v)
{
    numtext t;
    snprintf(t.s, sizeof t.s, "%" PRId64, v);
    return t;
}

/* A tick label for v on an axis with this step: just enough decimals, k/M for big steps. */
static numtext fmt_tick(double v, double step)
{
    const char *suffix = "";
    if (step >= 1e7) {
        v /= 1e6, step /= 1e6, suffix = "M";
    } else if (step >= 1e4) {
        v /= 1e3, step /= 1e3, suffix = "k";
    }
    int decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    numtext t = fmt_fixed(v, decimals, false);
    strncat(t.s, suffix, sizeof t.s - strlen(t.s) - 1);
    return t;
}

/* ---- statistics of a sample ------------------------------------------------ */

/* Pentanomial statistics apply once a pair is complete, else W/D/L. */
static bool has_pairs(const xqf_report_sample *s)
{
    for (int i = 0; i < XQF_PENTA_CELLS; i++)
        if (s->penta[i] != 0)
            return true;
    return false;
}

static xqf_stats_status sample_elo(const xqf_report_sample *s, xqf_elo *e)
{
    return has_pairs(s) ? xqf_elo_penta(s->penta, e)
                        : xqf_elo_wdl(s->wins, s->draws, s->losses, e);
}

static xqf_stats_status sample_llr(const xqf_report_run *run, const xqf_report_sample *s,
                                   double *llr)
{
    return has_pairs(s) ? xqf_llr_penta(s->penta, run->elo0, run->elo1, llr)
                        : xqf_llr_wdl(s->wins, s->draws, s->losses, run->elo0, run->elo1, llr);
}

static const xqf_report_sample *last_sample(const xqf_report_run *run)
{
    return run->sample_count ? &run->samples[run->sample_count - 1] : NULL;
}

/* Games played so far: the last sample, or the furthest trajectory point. */
static int64_t games_played(const xqf_report_run *run)
{
    int64_t games = run->sample_count ? last_sample(run)->games : 0;
    for (size_t i = 0; i < run->param_count; i++) {
        const xqf_report_param *p = &run->params[i];
        if (p->history_count && p->history[p->history_count - 1].games > games)
            games = p->history[p->history_count - 1].games;
    }
    return games;
}

/* The SPRT's LLR bounds A and B; false (both NaN) when alpha/beta are invalid. */
static bool sprt_bounds(const xqf_report_run *run, double *lower, double *upper)
{
    if (xqf_sprt_bounds(run->alpha, run->beta, lower, upper) == XQF_STATS_OK)
        return true;
    *lower = *upper = NAN;
    return false;
}

/* The LLR of the last sample, NaN when there is none. */
static double last_llr(const xqf_report_run *run)
{
    double llr;
    const xqf_report_sample *s = last_sample(run);
    return s && sample_llr(run, s, &llr) == XQF_STATS_OK ? llr : NAN;
}

/* SPRT: "pass", "fail" or "open" from the last LLR against the bounds (a CSS class). */
static const char *sprt_outcome(const xqf_report_run *run)
{
    double lower, upper, llr = last_llr(run);
    sprt_bounds(run, &lower, &upper);
    return llr >= upper ? "pass" : llr <= lower ? "fail" : "open";
}

/* ---- charts ---------------------------------------------------------------- */

typedef struct chart_point {
    double x, y, lo, hi;     /* lo/hi: the interval, when the chart has a band */
    bool clamped;            /* y was outside the limits */
} chart_point;

typedef struct chart_ref {
    double y;
    const char *cls;         /* CSS class of the line and its label */
    bool left;               /* label at the left end (else the right) */
    char label[64];          /* HTML */
} chart_ref;

typedef struct chart {
    int width, height;
    const char *aria;        /* static text: what the chart shows */
    const char *x_label, *y_label; /* static HTML */
    const char *empty;       /* static text shown without points */
    double floor, ceil;      /* y limits: values beyond are clamped and marked */
    bool band;
    double view_lo, view_hi; /* NaN, or a y range the axis covers at least (a zoom) */
    int nrefs;
    chart_ref refs[CHART_MAX_REFS];
    size_t n;
    chart_point pts[CHART_MAX_POINTS];
} chart;

/* An empty chart of that size and y limits ("no data yet" until points are added). */
static void chart_init(chart *c, int width, int height, double floor, double ceil)
{
    memset(c, 0, sizeof *c);
    c->width = width;
    c->height = height;
    c->floor = floor < ceil ? floor : -NO_LIMIT; /* NaN or crossed limits: none */
    c->ceil = floor < ceil ? ceil : NO_LIMIT;
    c->empty = "no data yet";
    c->view_lo = c->view_hi = NAN;
}

/* Adds a point; one with a NaN coordinate is skipped. lo/hi are ignored without a band. */
static void chart_add(chart *c, double x, double y, double lo, double hi)
{
    assert(c->n < CHART_MAX_POINTS);
    if (isnan(x) || isnan(y))
        return;
    c->pts[c->n++] = (chart_point){ x, y, isnan(lo) ? y : lo, isnan(hi) ? y : hi, false };
}

/* Adds a reference line at y with a printf-formatted HTML label (may be empty); none when y is not finite. */
__attribute__((format(printf, 5, 6)))
static void chart_ref_add(chart *c, double y, const char *cls, bool left, const char *fmt, ...)
{
    assert(c->nrefs < CHART_MAX_REFS);
    if (!isfinite(y))
        return;
    chart_ref *r = &c->refs[c->nrefs++];
    r->y = y;
    r->cls = cls;
    r->left = left;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->label, sizeof r->label, fmt, ap);
    va_end(ap);
}

/* How many of n points a chart keeps, and the index of the k-th kept one of m. */
static size_t thin_count(size_t n)
{
    return n < CHART_MAX_POINTS ? n : CHART_MAX_POINTS;
}

static size_t thin_index(size_t k, size_t m, size_t n)
{
    return m <= 1 ? n - 1 : k * (n - 1) / (m - 1);
}

typedef struct axis {
    double lo, hi, step;
} axis;

/* An axis covering [lo, hi] in about `target` steps of 1, 2 or 5 x 10^k, at least min_step. */
static axis axis_of(double lo, double hi, int target, double min_step)
{
    if (!(hi > lo)) {
        double pad = lo != 0 ? fabs(lo) * 0.1 : 1;
        lo -= pad, hi += pad;
    }
    double raw = (hi - lo) / target;
    double mag = pow(10, floor(log10(raw)));
    double f = raw / mag;
    double step = fmax((f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag, min_step);
    return (axis){ floor(lo / step) * step, ceil(hi / step) * step, step };
}

/* The plot area inside the chart and the mapping of data to it. */
typedef struct plot {
    double left, top, w, h;
    axis x, y;
} plot;

static double px(const plot *p, double x)
{
    return p->left + (x - p->x.lo) / (p->x.hi - p->x.lo) * p->w;
}

static double py(const plot *p, double y)
{
    return p->top + (p->y.hi - y) / (p->y.hi - p->y.lo) * p->h;
}

/* Clamps *v into [floor, ceil]; returns whether it had to. */
static bool clamp(double *v, double floor, double ceil)
{
    if (*v < floor)
        *v = floor;
    else if (*v > ceil)
        *v = ceil;
    else
        return false;
    return true;
}

/* Grid lines and tick labels of one axis (vertical: the x axis). */
static void chart_ticks(FILE *out, const plot *p, bool vertical)
{
    const axis *a = vertical ? &p->x : &p->y;
    long steps = lround((a->hi - a->lo) / a->step);
    for (long i = 0; i <= steps; i++) {
        double v = a->lo + (double)i * a->step;
        if (fabs(v) < a->step * 1e-9)
            v = 0;
        if (vertical) {
            double x = px(p, v);
            fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                    x, p->top, x, p->top + p->h);
            fprintf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                    x, p->top + p->h + 15, fmt_tick(v, a->step).s);
        } else {
            double y = py(p, v);
            fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                    p->left, y, p->left + p->w, y);
            fprintf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                    p->left - 6, y + 4, fmt_tick(v, a->step).s);
        }
    }
}

/* The plot area: the chart less the margins for ticks and axis labels. */
static void chart_area(const chart *c, plot *p)
{
    p->left = 58, p->top = 12;
    p->w = c->width - p->left - 14;
    p->h = c->height - p->top - 38;
}

/* Clamps the points to the limits and fits both axes (x: whole games) around points and reference lines. */
static void chart_fit(chart *c, plot *p)
{
    double x0 = 0, x1 = c->pts[0].x, y0 = INFINITY, y1 = -INFINITY;
    for (size_t i = 0; i < c->n; i++) {
        chart_point *q = &c->pts[i];
        q->clamped = clamp(&q->y, c->floor, c->ceil);
        clamp(&q->lo, c->floor, c->ceil);
        clamp(&q->hi, c->floor, c->ceil);
        x0 = fmin(x0, q->x), x1 = fmax(x1, q->x);
        y0 = fmin(y0, c->band ? fmin(q->y, q->lo) : q->y);
        y1 = fmax(y1, c->band ? fmax(q->y, q->hi) : q->y);
    }
    for (int i = 0; i < c->nrefs; i++)
        y0 = fmin(y0, c->refs[i].y), y1 = fmax(y1, c->refs[i].y);
    if (isfinite(c->view_lo) && isfinite(c->view_hi))
        y0 = fmin(y0, c->view_lo), y1 = fmax(y1, c->view_hi);
    p->x = axis_of(x0, x1, c->width / 110, 1);
    p->y = axis_of(y0, y1, c->height / 48 > 2 ? c->height / 48 : 2, 0);
}

/*
 * Writes chart c as an inline <svg>: frame, grid and ticks, the interval
 * band, reference lines with labels, the line with its last point (every
 * point when there are few), clamped points as triangles at the edge, and
 * the axis labels; without points only the frame and c->empty.  When a
 * point was clamped, a note follows the svg.
 */
static void chart_svg(FILE *out, chart *c)
{
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 %d %d\" "
            "role=\"img\" aria-label=\"%s\">\n",
            c->width, c->height, c->aria);
    plot p;
    chart_area(c, &p);
    fprintf(out, "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
            p.left, p.top, p.w, p.h);
    if (c->n == 0) {
        fprintf(out, "<text class=\"empty\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n</svg>\n",
                p.left + p.w / 2, p.top + p.h / 2 + 5, c->empty);
        return;
    }
    chart_fit(c, &p);
    chart_ticks(out, &p, true);
    chart_ticks(out, &p, false);

    if (c->band && c->n == 1)
        fprintf(out, "<line class=\"errbar\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
                px(&p, c->pts[0].x), py(&p, c->pts[0].lo), px(&p, c->pts[0].x), py(&p, c->pts[0].hi));
    else if (c->band) {
        fputs("<polygon class=\"band\" points=\"", out);
        for (size_t i = 0; i < c->n; i++)
            fprintf(out, "%.1f,%.1f ", px(&p, c->pts[i].x), py(&p, c->pts[i].hi));
        for (size_t i = c->n; i-- > 0;)
            fprintf(out, "%.1f,%.1f ", px(&p, c->pts[i].x), py(&p, c->pts[i].lo));
        fputs("\"/>\n", out);
    }

    double last_y = py(&p, c->pts[c->n - 1].y);
    for (int i = 0; i < c->nrefs; i++) {
        const chart_ref *r = &c->refs[i];
        double y = py(&p, r->y);
        /* Above the line, unless it is the top or (at the right) the line ends just above it. */
        bool below = y - p.top < 14 || (!r->left && last_y < y && last_y > y - 16);
        double ly = below ? y + 12 : y - 4;
        fprintf(out, "<line class=\"ref %s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
                r->cls, p.left, y, p.left + p.w, y);
        if (*r->label)
            fprintf(out, "<text class=\"reflabel %s\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s</text>\n",
                    r->cls, r->left ? p.left + 5 : p.left + p.w - 5, ly, r->left ? "start" : "end",
                    r->label);
    }

    if (c->n > 1) {
        fputs("<polyline class=\"line\" points=\"", out);
        for (size_t i = 0; i < c->n; i++)
            fprintf(out, "%.1f,%.1f ", px(&p, c->pts[i].x), py(&p, c->pts[i].y));
        fputs("\"/>\n", out);
    }
    size_t clamped = 0;
    for (size_t i = 0; i < c->n; i++) {
        const chart_point *q = &c->pts[i];
        double x = px(&p, q->x), y = py(&p, q->y);
        if (q->clamped) {
            double d = q->y >= c->ceil ? -1 : 1; /* the triangle points out of the chart */
            fprintf(out,
                    "<path class=\"clamp\" d=\"M%.1f,%.1f L%.1f,%.1f L%.1f,%.1f Z\"/>\n",
                    x, y + 6 * d, x - 5, y - 3 * d, x + 5, y - 3 * d);
            clamped++;
        } else if (c->n <= 40 || i == c->n - 1)
            fprintf(out, "<circle class=\"dot\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\"/>\n", x, y,
                    i == c->n - 1 ? "3.5" : "2.2");
    }

    fprintf(out, "<text class=\"axis\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
            p.left + p.w / 2, c->height - 4, c->x_label);
    fprintf(out,
            "<text class=\"axis\" transform=\"translate(14 %.1f) rotate(-90)\" "
            "text-anchor=\"middle\">%s</text>\n</svg>\n",
            p.top + p.h / 2, c->y_label);
    if (clamped)
        fprintf(out,
                "<p class=\"note\"><span class=\"tri\">&#9650;&#9660;</span> %zu point%s beyond "
                "%s&nbsp;&hellip;&nbsp;%s (or infinite), drawn at the edge.</p>\n",
                clamped, clamped == 1 ? "" : "s", fmt_value(c->floor, false).s,
                fmt_value(c->ceil, false).s);
}

/* ---- the page -------------------------------------------------------------- */

static const char STYLE[] =
    ":root{--ink:#1f2328;--muted:#656d76;--line:#d0d7de;--soft:#f6f8fa;--blue:#0969da;"
    "--green:#1a7f37;--red:#cf222e;--amber:#9a6700}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;background:#eef1f5;color:var(--ink);"
    "font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif}\n"
    "header.top{background:#24292f;color:#fff;padding:18px 32px}\n"
    "header.top .brand{font-size:12px;letter-spacing:.08em;text-transform:uppercase;color:#9ea7b3}\n"
    "header.top h1{margin:4px 0 8px;font-size:24px;font-weight:600}\n"
    "header.top h1 .id{color:#9ea7b3;font-weight:400;margin-right:8px}\n"
    ".badge{display:inline-block;padding:2px 10px;margin-right:6px;border-radius:12px;"
    "font-size:12px;font-weight:600;background:#57606a;color:#fff}\n"
    ".badge.kind{background:var(--blue)}\n"
    ".badge.pass{background:var(--green)}.badge.fail{background:var(--red)}"
    ".badge.open{background:var(--amber)}\n"
    "main{max-width:1180px;margin:0 auto;padding:20px 16px 8px}\n"
    "section.card{background:#fff;border:1px solid var(--line);border-radius:8px;"
    "padding:14px 18px 16px;margin-bottom:18px}\n"
    "section.card.pass{border-left:5px solid var(--green)}"
    "section.card.fail{border-left:5px solid var(--red)}"
    "section.card.open{border-left:5px solid var(--amber)}\n"
    "h2{font-size:16px;margin:0 0 10px;font-weight:600}\n"
    "table+h2{margin-top:22px}\n"
    "h2 .sub{font-weight:400;color:var(--muted);font-size:13px;margin-left:8px}\n"
    ".settings{display:grid;grid-template-columns:1fr 1fr;gap:0 28px}\n"
    "table{border-collapse:collapse;width:100%}\n"
    "th,td{padding:5px 8px;border-bottom:1px solid #eaeef2;text-align:left;vertical-align:top}\n"
    "table.kv th{width:42%;color:var(--muted);font-weight:500}\n"
    "table.data th{background:var(--soft);font-weight:600;font-size:13px}\n"
    "table.data td.num,table.data th.num{text-align:right;font-variant-numeric:tabular-nums}\n"
    "table.data tr:hover td{background:#f6f8fa}\n"
    ".up{color:var(--green)}.down{color:var(--red)}.same{color:var(--muted)}\n"
    ".grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(340px,1fr));gap:14px}\n"
    "figure{margin:0}\n"
    "figcaption{display:flex;justify-content:space-between;align-items:baseline;"
    "margin:0 2px 4px;gap:8px}\n"
    "figcaption b{font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:13px;"
    "overflow-wrap:anywhere}\n"
    "figcaption span{color:var(--muted);font-size:12px;white-space:nowrap}\n"
    ".grid figure{border:1px solid #eaeef2;border-radius:6px;padding:8px}\n"
    "svg.chart{display:block;width:100%;height:auto}\n"
    ".chart .frame{fill:#fff;stroke:var(--line)}\n"
    ".chart .grid{stroke:#eaeef2}\n"
    ".chart text{font-family:system-ui,sans-serif;font-size:11px;fill:var(--muted)}\n"
    ".chart text.axis{font-size:12px;fill:var(--ink)}\n"
    ".chart text.empty{font-size:15px;font-style:italic}\n"
    ".chart .line{fill:none;stroke:var(--blue);stroke-width:2;stroke-linejoin:round}\n"
    ".chart .dot{fill:var(--blue)}\n"
    ".chart .band{fill:var(--blue);fill-opacity:.14}\n"
    ".chart .errbar{stroke:var(--blue);stroke-opacity:.4;stroke-width:6}\n"
    ".chart .clamp{fill:#d4a72c;stroke:#9a6700}\n"
    ".chart .ref{stroke-width:1.3;stroke-dasharray:6 4}\n"
    ".chart .ref.zero{stroke:#8c959f;stroke-dasharray:none;stroke-width:1}\n"
    ".chart .ref.start{stroke:#8250df}.chart text.start{fill:#8250df}\n"
    ".chart .ref.bound{stroke:#bc4c00}.chart text.bound{fill:#bc4c00}\n"
    ".chart .ref.h1{stroke:var(--green)}.chart text.h1{fill:var(--green)}\n"
    ".chart .ref.h0{stroke:var(--red)}.chart text.h0{fill:var(--red)}\n"
    ".chart text.reflabel{font-size:10.5px;font-weight:600;paint-order:stroke;stroke:#fff;"
    "stroke-width:3px;stroke-linejoin:round}\n"
    ".note{color:var(--muted);font-size:12px;margin:6px 2px 0}\n"
    ".note .tri{color:#d4a72c}\n"
    ".legend{color:var(--muted);font-size:12px;margin:6px 2px 0}\n"
    ".key{display:inline-block;width:18px;height:0;border-top:2px solid var(--blue);"
    "vertical-align:middle;margin:0 4px 0 10px}\n"
    ".key.band{height:10px;border:0;background:rgba(9,105,218,.14)}\n"
    ".key.dash{border-top-style:dashed}.key.start{border-color:#8250df}"
    ".key.bound{border-color:#bc4c00}.key.h1{border-color:var(--green)}"
    ".key.h0{border-color:var(--red)}\n"
    "footer{text-align:center;color:var(--muted);font-size:12px;padding:4px 0 24px}\n";

/* One settings row: the key is static HTML, the value text from the model (escaped). */
static void setting_text(FILE *out, const char *key, const char *text)
{
    fprintf(out, "<tr><th>%s</th><td>", key);
    put_opt(out, text);
    fputs("</td></tr>\n", out);
}

/* One settings row whose value is formatted HTML. */
static void setting_html(FILE *out, const char *key, const char *html)
{
    fprintf(out, "<tr><th>%s</th><td>%s</td></tr>\n", key, html);
}

static void page_head(FILE *out, const xqf_report_run *run)
{
    fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                 "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                 "<title>Run %" PRId64 " ", run->id);
    put_text(out, has_text(run->name) ? run->name : "");
    fprintf(out, " &middot; Xiangqi Forge</title>\n<style>\n%s</style>\n</head>\n<body>\n", STYLE);
}

static void page_header(FILE *out, const xqf_report_run *run)
{
    fprintf(out, "<header class=\"top\">\n<div class=\"brand\">Xiangqi Forge &middot; run report</div>\n"
                 "<h1><span class=\"id\">#%" PRId64 "</span>", run->id);
    put_text(out, has_text(run->name) ? run->name : "(unnamed)");
    fprintf(out, "</h1>\n<div><span class=\"badge kind\">%s</span>",
            run->kind == XQF_REPORT_SPSA ? "SPSA" : run->kind == XQF_REPORT_GAMES ? "GAMES" : "SPRT");
    if (has_text(run->state)) {
        fputs("<span class=\"badge\">", out);
        put_text(out, run->state);
        fputs("</span>", out);
    }
    if (run->kind == XQF_REPORT_SPRT && has_text(run->verdict)) {
        fprintf(out, "<span class=\"badge %s\">", sprt_outcome(run));
        put_text(out, run->verdict);
        fputs("</span>", out);
    }
    fputs("</div>\n</header>\n<main>\n", out);
}

static void page_settings(FILE *out, const xqf_report_run *run)
{
    char html[160];
    fputs("<section class=\"card\">\n<h2>Settings</h2>\n<div class=\"settings\">\n"
          "<table class=\"kv\">\n", out);
    setting_html(out, "Run", fmt_count(run->id).s);
    setting_text(out, "Name", run->name);
    if (has_text(run->kind_title))
        setting_text(out, "Type", run->kind_title);
    else
        setting_html(out, "Type", run->kind == XQF_REPORT_SPSA    ? "SPSA tuning"
                                  : run->kind == XQF_REPORT_GAMES ? "fixed number of games"
                                                                  : "SPRT test");
    setting_text(out, "State", run->state);
    setting_text(out, "Created", run->created);
    setting_text(out, "Finished", run->finished);
    if (run->nodes > 0) {
        snprintf(html, sizeof html, "%s nodes per move", fmt_count(run->nodes).s);
        setting_html(out, "Time control", html);
    } else
        setting_text(out, "Time control", run->tc);
    snprintf(html, sizeof html, "%d", run->threads > 1 ? run->threads : 1);
    setting_html(out, "Threads per engine", html);
    setting_text(out, "Opening book", run->book);
    fputs("</table>\n<table class=\"kv\">\n", out);

    snprintf(html, sizeof html, "%s (%s games)", fmt_count(run->pairs_per_task).s,
             fmt_count(2 * run->pairs_per_task).s);
    setting_html(out, "Game pairs per task", html);
    int64_t games = games_played(run);
    if (run->planned_pairs > 0)
        snprintf(html, sizeof html, "%s of %s (%.0f&nbsp;%%)", fmt_count(games).s,
                 fmt_count(2 * run->planned_pairs).s, 50.0 * (double)games / (double)run->planned_pairs);
    else
        snprintf(html, sizeof html, "%s", fmt_count(games).s);
    setting_html(out, "Games played", html);
    if (run->kind == XQF_REPORT_SPSA) {
        setting_html(out, "Iterations N (game pairs)", fmt_count(run->planned_pairs).s);
        setting_html(out, "&alpha; (step exponent)", fmt_fixed(run->spsa_alpha, 3, false).s);
        setting_html(out, "&gamma; (perturbation exponent)", fmt_fixed(run->spsa_gamma, 3, false).s);
        setting_html(out, "A (stability)", fmt_value(run->spsa_A, false).s);
        setting_html(out, "Parameters", fmt_count((int64_t)run->param_count).s);
    } else if (run->kind == XQF_REPORT_SPRT) {
        double lower, upper;
        sprt_bounds(run, &lower, &upper);
        snprintf(html, sizeof html, "[%s, %s]", fmt_fixed(run->elo0, 2, false).s,
                 fmt_fixed(run->elo1, 2, false).s);
        setting_html(out, "nElo bounds [elo0, elo1]", html);
        snprintf(html, sizeof html, "&alpha; %s, &beta; %s", fmt_fixed(run->alpha, 3, false).s,
                 fmt_fixed(run->beta, 3, false).s);
        setting_html(out, "Error rates", html);
        snprintf(html, sizeof html, "[%s, %s]", fmt_fixed(lower, 2, false).s,
                 fmt_fixed(upper, 2, false).s);
        setting_html(out, "LLR bounds [A, B]", html);
        setting_html(out, "Max game pairs",
                     run->planned_pairs > 0 ? fmt_count(run->planned_pairs).s : "none");
        setting_text(out, "Verdict", run->verdict);
    }
    fputs("</table>\n</div>\n</section>\n", out);
}

/* SPSA: one small chart per parameter, theta over games with start and bounds. */
static void page_params(FILE *out, const xqf_report_run *run)
{
    fputs("<section class=\"card\">\n<h2>Parameters<span class=\"sub\">&theta; over games</span></h2>\n"
          "<p class=\"legend\"><span class=\"key\"></span>&theta;"
          "<span class=\"key dash start\"></span>start value"
          "<span class=\"key dash bound\"></span>bounds</p>\n<div class=\"grid\">\n", out);
    if (run->param_count == 0)
        fputs("<p class=\"note\">no parameters</p>\n", out);
    for (size_t i = 0; i < run->param_count; i++) {
        const xqf_report_param *prm = &run->params[i];
        chart c;
        chart_init(&c, 360, 210, prm->min, prm->max);
        c.aria = "Parameter value over games";
        c.x_label = "games";
        c.y_label = "&theta;";
        /*
         * Zoomed on the trajectory (and the start): theta moves a few percent
         * of a wide range, which would draw as a flat line.  A bound is drawn
         * when it lies within the view; the caption gives both.
         */
        double lo = prm->start, hi = prm->start;
        for (size_t k = 0; k < prm->history_count; k++)
            lo = fmin(lo, prm->history[k].value), hi = fmax(hi, prm->history[k].value);
        double pad = fmax(0.15 * (hi - lo), 0.02 * (prm->max - prm->min));
        if (lo - pad <= prm->min)
            chart_ref_add(&c, prm->min, "bound", true, "min %s", fmt_value(prm->min, false).s);
        if (hi + pad >= prm->max)
            chart_ref_add(&c, prm->max, "bound", true, "max %s", fmt_value(prm->max, false).s);
        chart_ref_add(&c, prm->start, "start", false, "start %s", fmt_value(prm->start, false).s);
        c.view_lo = fmax(lo - pad, prm->min);
        c.view_hi = fmin(hi + pad, prm->max);
        for (size_t k = 0, m = thin_count(prm->history_count); k < m; k++) {
            const xqf_report_point *q = &prm->history[thin_index(k, m, prm->history_count)];
            chart_add(&c, (double)q->games, q->value, NAN, NAN);
        }
        fputs("<figure>\n<figcaption><b>", out);
        put_opt(out, prm->name);
        fprintf(out, "</b><span>%s &rarr; %s <small>(bounds %s&ndash;%s)</small></span></figcaption>\n",
                fmt_value(prm->start, false).s, fmt_value(prm->theta, false).s, fmt_value(prm->min, false).s,
                fmt_value(prm->max, false).s);
        chart_svg(out, &c);
        fputs("</figure>\n", out);
    }
    fputs("</div>\n</section>\n", out);
}

/* Every run: Elo with its 95 % interval over games. */
static void page_elo(FILE *out, const xqf_report_run *run)
{
    chart c;
    chart_init(&c, 1100, 300, -XQF_REPORT_ELO_LIMIT, XQF_REPORT_ELO_LIMIT);
    c.aria = "Elo with its 95 percent interval over games";
    c.x_label = "games";
    c.y_label = "Elo";
    c.band = true;
    chart_ref_add(&c, 0, "zero", false, "%s", "");
    for (size_t k = 0, m = thin_count(run->sample_count); k < m; k++) {
        const xqf_report_sample *s = &run->samples[thin_index(k, m, run->sample_count)];
        xqf_elo e;
        if (sample_elo(s, &e) != XQF_STATS_OK)
            continue;
        double lo = isinf(e.elo_ci95) ? -INFINITY : e.elo - e.elo_ci95;
        double hi = isinf(e.elo_ci95) ? INFINITY : e.elo + e.elo_ci95;
        chart_add(&c, (double)s->games, e.elo, lo, hi);
    }
    fprintf(out, "<section class=\"card\">\n<h2>Elo<span class=\"sub\">%s, with its 95&nbsp;%% "
                 "interval</span></h2>\n",
            run->kind == XQF_REPORT_SPSA ? "&theta;&nbsp;+&nbsp;c&Delta; against "
                                           "&theta;&nbsp;&minus;&nbsp;c&Delta;"
                                         : "test against base");
    chart_svg(out, &c);
    fputs("<p class=\"legend\"><span class=\"key\"></span>Elo<span class=\"key band\"></span>"
          "95&nbsp;% interval</p>\n</section>\n", out);
}

/* SPRT: the LLR over games with the bounds A and B. */
static void page_llr(FILE *out, const xqf_report_run *run)
{
    double lower, upper;
    chart c;
    chart_init(&c, 1100, 300, -NO_LIMIT, NO_LIMIT);
    c.aria = "Log-likelihood ratio over games with the SPRT bounds";
    c.x_label = "games";
    c.y_label = "LLR";
    if (sprt_bounds(run, &lower, &upper)) {
        chart_ref_add(&c, upper, "h1", true, "B = %s: accept H1", fmt_fixed(upper, 2, false).s);
        chart_ref_add(&c, lower, "h0", true, "A = %s: accept H0", fmt_fixed(lower, 2, false).s);
    }
    chart_ref_add(&c, 0, "zero", false, "%s", "");
    for (size_t k = 0, m = thin_count(run->sample_count); k < m; k++) {
        const xqf_report_sample *s = &run->samples[thin_index(k, m, run->sample_count)];
        double llr;
        if (sample_llr(run, s, &llr) == XQF_STATS_OK)
            chart_add(&c, (double)s->games, llr, NAN, NAN);
    }
    if (c.n == 0 && run->sample_count > 0)
        c.empty = "no LLR: the SPRT settings or counts are invalid";
    fprintf(out, "<section class=\"card %s\">\n<h2>LLR<span class=\"sub\">", sprt_outcome(run));
    put_text(out, has_text(run->verdict) ? run->verdict : "no verdict yet");
    fputs("</span></h2>\n", out);
    chart_svg(out, &c);
    fputs("<p class=\"legend\"><span class=\"key\"></span>LLR<span class=\"key dash h1\"></span>"
          "upper bound<span class=\"key dash h0\"></span>lower bound</p>\n</section>\n", out);
}

/* SPSA: start -> final (or current) per parameter, with the change. */
static void page_param_table(FILE *out, const xqf_report_run *run)
{
    fprintf(out, "<h2>Parameters</h2>\n<table class=\"data\">\n<tr><th>Parameter</th>"
                 "<th class=\"num\">Start</th><th class=\"num\">%s</th><th class=\"num\">Change</th>"
                 "<th class=\"num\">of range</th><th class=\"num\">Min</th><th class=\"num\">Max</th>"
                 "<th class=\"num\">c_end</th><th class=\"num\">r_end</th></tr>\n",
            has_text(run->finished) ? "Final" : "Current");
    for (size_t i = 0; i < run->param_count; i++) {
        const xqf_report_param *p = &run->params[i];
        double change = p->theta - p->start;
        double share = p->max > p->min ? 100 * change / (p->max - p->min) : NAN;
        const char *cls = !(fabs(change) >= 0.005) ? "same" : change > 0 ? "up" : "down";
        fputs("<tr><td>", out);
        put_opt(out, p->name);
        fprintf(out,
                "</td><td class=\"num\">%s</td><td class=\"num\"><b>%s</b></td>"
                "<td class=\"num %s\">%s</td><td class=\"num %s\">%s&nbsp;%%</td>"
                "<td class=\"num\">%s</td><td class=\"num\">%s</td>"
                "<td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n",
                fmt_value(p->start, false).s, fmt_value(p->theta, false).s, cls,
                fmt_value(change, true).s, cls, fmt_fixed(share, 1, true).s,
                fmt_value(p->min, false).s, fmt_value(p->max, false).s,
                fmt_value(p->c_end, false).s, fmt_fixed(p->r_end, 4, false).s);
    }
    fputs("</table>\n", out);
}

/* Every run: the totals of the last sample; SPRT adds the LLR. */
static void page_result_table(FILE *out, const xqf_report_run *run)
{
    bool sprt = run->kind == XQF_REPORT_SPRT, games = run->kind == XQF_REPORT_GAMES;
    fprintf(out, "<h2>Results<span class=\"sub\">%s</span></h2>\n<table class=\"data\">\n"
                 "<tr><th class=\"num\">Games</th><th class=\"num\">Wins</th><th class=\"num\">Draws</th>"
                 "<th class=\"num\">Losses</th><th class=\"num\">Pentanomial LL, LD, DD+WL, WD, WW</th>"
                 "<th class=\"num\">Elo &plusmn; 95&nbsp;%%</th><th class=\"num\">nElo &plusmn; 95&nbsp;%%</th>%s</tr>\n",
            sprt || games ? "test against base" : "first engine against second",
            sprt ? "<th class=\"num\">LLR [A, B]</th>" : games ? "<th class=\"num\">LOS</th>" : "");
    const xqf_report_sample *s = last_sample(run);
    if (!s) {
        fprintf(out, "<tr><td colspan=\"%d\">no data yet</td></tr>\n</table>\n", sprt || games ? 8 : 7);
        return;
    }
    fprintf(out, "<tr><td class=\"num\">%s</td><td class=\"num up\">%s</td><td class=\"num\">%s</td>"
                 "<td class=\"num down\">%s</td><td class=\"num\">",
            fmt_count(s->games).s, fmt_count(s->wins).s, fmt_count(s->draws).s,
            fmt_count(s->losses).s);
    for (int i = 0; i < XQF_PENTA_CELLS; i++)
        fprintf(out, "%s%s", i ? ", " : "", fmt_count(s->penta[i]).s);
    xqf_elo e;
    if (sample_elo(s, &e) == XQF_STATS_OK)
        fprintf(out, "</td><td class=\"num\"><b>%s</b> &plusmn; %s</td><td class=\"num\">%s &plusmn; %s</td>",
                fmt_fixed(e.elo, 1, true).s, fmt_fixed(e.elo_ci95, 1, false).s,
                fmt_fixed(e.nelo, 1, true).s, fmt_fixed(e.nelo_ci95, 1, false).s);
    else
        fputs("</td><td class=\"num\">&mdash;</td><td class=\"num\">&mdash;</td>", out);
    if (games && sample_elo(s, &e) == XQF_STATS_OK)
        fprintf(out, "<td class=\"num\">%s&nbsp;%%</td>", fmt_fixed(100 * xqf_los(&e), 1, false).s);
    else if (games)
        fputs("<td class=\"num\">&mdash;</td>", out);
    if (sprt) {
        double lower, upper, llr = last_llr(run);
        sprt_bounds(run, &lower, &upper);
        fprintf(out, "<td class=\"num\"><b class=\"%s\">%s</b> [%s, %s]</td>",
                llr >= upper ? "up" : llr <= lower ? "down" : "", fmt_fixed(llr, 2, true).s,
                fmt_fixed(lower, 2, false).s, fmt_fixed(upper, 2, false).s);
    }
    fputs("</tr>\n</table>\n", out);
    /* an SPRT stopped at a bound: its Elo corrected for the stop (sprt_calc.h) */
    xqf_sprt_design d = { run->elo0, run->elo1, run->alpha, run->beta };
    xqf_sprt_estimate est;
    int64_t pairs = 0;
    for (int i = 0; i < XQF_PENTA_CELLS; i++)
        pairs += s->penta[i];
    if (sprt && xqf_sprt_estimate_elo(&d, pairs, last_llr(run), &est) == XQF_STATS_OK && est.stopped)
        fprintf(out, "<p>nElo at the bound, corrected for the overshoot: <b>%s</b> [%s, %s] (95&nbsp;%%), "
                     "LOS %s&nbsp;%%</p>\n", fmt_fixed(est.nelo, 1, true).s, fmt_fixed(est.lo, 1, true).s,
                fmt_fixed(est.hi, 1, true).s, fmt_fixed(100 * est.los, 1, false).s);
}

/* The run's workers: games, faults, residual and flags (table). */
static void page_workers(FILE *out, const xqf_report_run *run)
{
    if (run->worker_count == 0)
        return;
    fputs("<h2>Workers<span class=\"sub\">residual: Fishtest's chi-square z of a worker's pairs against the "
          "others'</span></h2>\n<table>\n<tr><th>Worker</th><th>Games</th><th>Crashes</th><th>Time losses</th>"
          "<th>Illegal moves</th><th>Disconnects</th><th>Replays (differ)</th><th>Residual</th><th></th></tr>\n", out);
    for (size_t i = 0; i < run->worker_count; i++) {
        const xqf_report_worker *w = &run->workers[i];
        fputs("<tr><td>", out);
        put_text(out, w->name);
        fprintf(out, "</td><td class=\"num\">%s</td>", fmt_count(w->games).s);
        fprintf(out, "<td class=\"num\">%s</td>", fmt_count(w->crashes).s);
        fprintf(out, "<td class=\"num\">%s</td>", fmt_count(w->time_losses).s);
        fprintf(out, "<td class=\"num\">%s</td>", fmt_count(w->illegal_moves).s);
        fprintf(out, "<td class=\"num\">%s</td>", fmt_count(w->disconnects).s);
        fprintf(out, "<td class=\"num\">%s", fmt_count(w->replays).s);
        fprintf(out, " (%s)</td>", fmt_count(w->mismatches).s);
        fprintf(out, "<td class=\"num\">%s</td><td>%s</td></tr>\n",
                isnan(w->residual) ? "&mdash;" : fmt_fixed(w->residual, 2, false).s,
                w->flagged ? "<b class=\"down\">flagged</b>" : "");
    }
    fputs("</table>\n", out);
}

int xqf_report_html(FILE *out, const xqf_report_run *run)
{
    assert(out && run);
    assert(run->params || run->param_count == 0);
    assert(run->samples || run->sample_count == 0);
    page_head(out, run);
    page_header(out, run);
    page_settings(out, run);
    if (run->kind == XQF_REPORT_SPSA)
        page_params(out, run);
    page_elo(out, run);
    if (run->kind == XQF_REPORT_SPRT)
        page_llr(out, run);
    fputs("<section class=\"card\">\n", out);
    if (run->kind == XQF_REPORT_SPSA)
        page_param_table(out, run);
    page_result_table(out, run);
    page_workers(out, run);
    fputs("</section>\n</main>\n<footer>Generated by xqf-tune report &middot; "
          "a self-contained page: no scripts, no external resources</footer>\n</body>\n</html>\n",
          out);
    return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}

/* ---- the page of an evaluation fit ----------------------------------------- */

int xqf_report_fit_html(FILE *out, const xqf_report_fit *fit)
{
    assert(out && fit);
    assert(fit->params || fit->param_count == 0);
    fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                 "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                 "<title>Evaluation fit &middot; Xiangqi Forge</title>\n<style>\n%s</style>\n</head>\n<body>\n"
                 "<header class=\"top\">\n<div class=\"brand\">Xiangqi Forge &middot; evaluation fit</div>\n"
                 "<h1>Texel fit of %zu weights</h1>\n<div><span class=\"badge kind\">TEXEL</span></div>\n"
                 "</header>\n<main>\n",
            STYLE, fit->param_count);
    double first = fit->curve_count ? fit->curve[0] : NAN;
    double last = fit->curve_count ? fit->curve[fit->curve_count - 1] : NAN;
    fputs("<section class=\"card\">\n<h2>Settings</h2>\n<table class=\"kv\">\n", out);
    setting_text(out, "Data", fit->data);
    setting_html(out, "Positions fitted", fmt_count(fit->positions).s);
    setting_html(out, "Positions left out (not quiet)", fmt_count(fit->skipped).s);
    setting_html(out, "Scale K (per centipawn)", fmt_fixed(fit->K, 6, false).s);
    setting_html(out, "&lambda; (weight of the game result)", fmt_fixed(fit->lambda, 2, false).s);
    setting_html(out, "Adam step (centipawns)", fmt_fixed(fit->rate, 2, false).s);
    setting_html(out, "Epochs", fmt_count(fit->curve_count ? (int64_t)fit->curve_count - 1 : 0).s);
    setting_html(out, "Loss before", fmt_fixed(first, 7, false).s);
    setting_html(out, "Loss after", fmt_fixed(last, 7, false).s);
    setting_html(out, "Time (s)", fmt_fixed(fit->seconds, 1, false).s);
    fputs("</table>\n</section>\n", out);

    chart c;
    chart_init(&c, 900, 300, 0, 1);
    c.aria = "Loss over epochs";
    c.x_label = "epoch";
    c.y_label = "loss";
    for (size_t k = 0, m = thin_count(fit->curve_count); k < m; k++) {
        size_t i = thin_index(k, m, fit->curve_count);
        chart_add(&c, (double)i, fit->curve[i], NAN, NAN);
    }
    fputs("<section class=\"card\">\n<h2>Loss<span class=\"sub\">mean squared error over epochs</span></h2>\n",
          out);
    chart_svg(out, &c);
    fputs("</section>\n", out);

    fputs("<section class=\"card\">\n<h2>Weights</h2>\n<table class=\"data\">\n<tr><th>Parameter</th>"
          "<th class=\"num\">Before</th><th class=\"num\">After</th><th class=\"num\">Change</th>"
          "<th class=\"num\">Min</th><th class=\"num\">Max</th></tr>\n",
          out);
    for (size_t i = 0; i < fit->param_count; i++) {
        const xqf_report_fit_param *p = &fit->params[i];
        double change = p->after - p->before;
        const char *cls = !(fabs(change) >= 0.5) ? "same" : change > 0 ? "up" : "down";
        fputs("<tr><td>", out);
        put_opt(out, p->name);
        fprintf(out,
                "</td><td class=\"num\">%s</td><td class=\"num\"><b>%s</b></td><td class=\"num %s\">%s</td>"
                "<td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n",
                fmt_value(p->before, false).s, fmt_value(p->after, false).s, cls, fmt_value(change, true).s,
                fmt_value(p->min, false).s, fmt_value(p->max, false).s);
    }
    fputs("</table>\n</section>\n</main>\n<footer>Generated by xqf-tune texel &middot; "
          "a self-contained page: no scripts, no external resources</footer>\n</body>\n</html>\n",
          out);
    return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}

/* ---- the soak's page (ops/soak) ---------------------------------------------- */

/* The index of the first sample at or after warm-up (count when none). */
static size_t soak_first_after(const xqf_report_soak *soak)
{
    size_t i = 0;
    while (i < soak->count && soak->t[i] < soak->warmup_s)
        i++;
    return i;
}

static void soak_chart(FILE *out, const xqf_report_soak *soak, const xqf_report_series *s)
{
    chart c;
    chart_init(&c, 560, 240, -NO_LIMIT, NO_LIMIT);
    c.aria = "a series of the soak over minutes";
    c.x_label = "minutes";
    c.y_label = "";
    size_t from = soak_first_after(soak);
    double base = from < soak->count ? s->y[from] : NAN;
    if (s->flat_checked && isfinite(base)) {
        chart_ref_add(&c, base, "start", true, "after warm-up %s", fmt_value(base, false).s);
        chart_ref_add(&c, base * (1 + soak->limit), "bound", false, "+%.0f %%", 100 * soak->limit);
    }
    for (size_t k = 0, m = thin_count(soak->count); k < m; k++) {
        size_t i = thin_index(k, m, soak->count);
        chart_add(&c, soak->t[i] / 60, s->y[i], NAN, NAN);
    }
    fputs("<figure><figcaption><b>", out);
    put_text(out, s->name);
    fputs("</b><span>", out);
    put_opt(out, s->unit);
    if (s->flat_checked)
        fprintf(out, " &middot; growth after warm-up %s %%", fmt_fixed(100 * s->growth, 1, true).s);
    fputs("</span></figcaption>\n", out);
    chart_svg(out, &c);
    fputs("</figure>\n", out);
}

int xqf_report_soak_html(FILE *out, const xqf_report_soak *soak)
{
    assert(out && soak);
    assert(soak->t || soak->count == 0);
    assert(soak->series || soak->series_count == 0);
    assert(soak->checks || soak->check_count == 0);
    fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                 "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                 "<title>Soak &middot; Xiangqi Forge</title>\n<style>\n%s</style>\n</head>\n<body>\n"
                 "<header class=\"top\">\n<div class=\"brand\">Xiangqi Forge &middot; soak</div>\n<h1>",
            STYLE);
    put_opt(out, soak->title);
    fprintf(out, "</h1>\n<div><span class=\"badge %s\">%s</span></div>\n</header>\n<main>\n",
            soak->passed ? "pass" : "fail", soak->passed ? "PASS" : "FAIL");
    fprintf(out, "<section class=\"card %s\">\n<h2>Checks</h2>\n<table class=\"data\">\n",
            soak->passed ? "pass" : "fail");
    for (size_t i = 0; i < soak->check_count; i++) {
        fputs("<tr><td>", out);
        put_text(out, soak->checks[i]);
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
    if (has_text(soak->conditions)) {
        fputs("<p class=\"note\">", out);
        put_text(out, soak->conditions);
        fputs("</p>\n", out);
    }
    fprintf(out, "<p class=\"note\">%s samples; warm-up %s min; a flat series grows less than %s %% "
                 "from the end of the warm-up to the end.</p>\n</section>\n",
            fmt_count((int64_t)soak->count).s, fmt_fixed(soak->warmup_s / 60, 1, false).s,
            fmt_fixed(100 * soak->limit, 0, false).s);
    fputs("<section class=\"card\">\n<h2>Over time</h2>\n<div class=\"grid\">\n", out);
    for (size_t i = 0; i < soak->series_count; i++)
        soak_chart(out, soak, &soak->series[i]);
    fputs("</div>\n</section>\n", out);
    size_t from = soak_first_after(soak);
    fputs("<section class=\"card\">\n<h2>Values</h2>\n<table class=\"data\">\n<tr><th>Series</th>"
          "<th class=\"num\">Start</th><th class=\"num\">After warm-up</th><th class=\"num\">End</th>"
          "<th class=\"num\">Growth after warm-up</th></tr>\n",
          out);
    for (size_t i = 0; i < soak->series_count; i++) {
        const xqf_report_series *s = &soak->series[i];
        fputs("<tr><td>", out);
        put_text(out, s->name);
        fputs(" (", out);
        put_opt(out, s->unit);
        fprintf(out, ")</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
                     "<td class=\"num\">%s</td></tr>\n",
                fmt_value(soak->count ? s->y[0] : NAN, false).s,
                fmt_value(from < soak->count ? s->y[from] : NAN, false).s,
                fmt_value(soak->count ? s->y[soak->count - 1] : NAN, false).s,
                s->flat_checked ? fmt_fixed(100 * s->growth, 1, true).s : "&mdash;");
    }
    fputs("</table>\n</section>\n</main>\n<footer>Generated by ops/soak &middot; "
          "a self-contained page: no scripts, no external resources</footer>\n</body>\n</html>\n",
          out);
    return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}

/*
 * sprt_calc.c - the SPRT calculator as a page: xqf-tune stats --expected
 * (tuner/cli/main.c) in a form.  The same library function answers
 * (xqf_sprt_expected, sprt_calc.h: a Brownian model of the normalized-Elo
 * GSPRT's LLR, which needs no draw ratio), printed as the command prints
 * it, so a page and a command line agree to the digit.  A GET form: its
 * query is the calculation, so a result is a link.
 *
 * What it shows, as Fishtest's SPRT calculator does (its page
 * /sprt_calc, after Michel Van den Bergh's sprta.pdf): the LLR's bounds,
 * the expected game pairs and games to a decision and the probability of
 * passing at H0, at H1 and at a true Elo given, and the same over a sweep
 * of Elo values around the bounds (the test's operating characteristic).
 */
#include "frame.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "form_fields.h"
#include "sprt_calc.h"

/*
 * The fields with xqf-tune stats's options' bounds (tuner/cli/main.c),
 * elo0 and elo1 held to --elo's range: a bound outside it tests nothing
 * an engine change could show.
 */
static const OptSpec F_ELO0 = { .name = "elo0", .type = OPT_REAL, .def = "0", .rmin = -1000, .rmax = 1000 };
static const OptSpec F_ELO1 = { .name = "elo1", .type = OPT_REAL, .def = "5", .rmin = -1000, .rmax = 1000 };
static const OptSpec F_ALPHA = { .name = "alpha", .type = OPT_REAL, .def = "0.05" };
static const OptSpec F_BETA = { .name = "beta", .type = OPT_REAL, .def = "0.05" };
static const OptSpec F_ELO = { .name = "elo", .type = OPT_REAL, .rmin = -1000, .rmax = 1000 };

/* Points of the sweep: from elo0 - (elo1 - elo0) to elo1 + (elo1 - elo0). */
enum { SWEEP_POINTS = 13 };

/*
 * One row of the results: its label (NULL: none), the true Elo, and the
 * CLI's three numbers (with a key: data-k KEY-pairs, -games, -pass).
 */
static void result_row(Buf *b, const xqf_sprt_design *d, const char *label, const char *key, double nelo)
{
    double pairs = 0, pass = 0;
    xqf_sprt_expected(d, nelo, &pairs, &pass);   /* the design was checked: it can't fail */
    buf_puts(b, "<tr>");
    if (label) {
        buf_puts(b, "<th>");
        buf_html(b, label);
        buf_puts(b, "</th>");
    }
    buf_printf(b, "<td>%g</td>", nelo);
    if (key)
        buf_printf(b, "<td data-k=\"%s-pairs\">%.0f</td><td data-k=\"%s-games\">%.0f</td>"
                      "<td data-k=\"%s-pass\">%.1f %%</td></tr>\n",
                   key, pairs, key, 2 * pairs, key, 100 * pass);
    else
        buf_printf(b, "<td>%.0f</td><td>%.0f</td><td>%.1f %%</td></tr>\n", pairs, 2 * pairs, 100 * pass);
}

/* Field spec's number from the query into *v (absent or empty: left as it is); false after its message. */
static bool number(const Form *q, Errors *er, const OptSpec *spec, double *v)
{
    const char *text = form_get(q, spec->name);
    char why[320], t[400];
    if (!text || !*text)
        return true;
    if (!opts_value_ok(spec, text, why, sizeof why)) {
        snprintf(t, sizeof t, "%s: %s", spec->name, why);
        field_error(er, spec->name, "%s", t);
        return false;
    }
    *v = strtod(text, NULL);
    return true;
}

/* The text of field spec as the query gives it, or its default. */
static const char *text_of(const Form *q, const OptSpec *spec)
{
    const char *text = form_get(q, spec->name);
    return text && *text ? text : spec->def;
}

/*
 * The design of the query into *d (defaults for absent fields) and the
 * true Elo if one is given; false after a message per bad field, each
 * naming its field.
 */
static bool read_design(const Form *q, Errors *er, xqf_sprt_design *d, bool *has_elo, double *elo)
{
    d->nelo0 = 0, d->nelo1 = 5, d->alpha = 0.05, d->beta = 0.05;
    number(q, er, &F_ELO0, &d->nelo0);
    number(q, er, &F_ELO1, &d->nelo1);
    number(q, er, &F_ALPHA, &d->alpha);
    number(q, er, &F_BETA, &d->beta);
    const char *e = form_get(q, "elo");
    *has_elo = e && *e;
    number(q, er, &F_ELO, elo);
    if (er->n)
        return false;
    /* the CLI's checks, in its order and words (sprt_settings), on the field they name */
    if (!(d->alpha > 0 && d->alpha < 1))
        field_error(er, "alpha", "alpha: %s is not between 0 and 1 (exclusive)", text_of(q, &F_ALPHA));
    if (!(d->beta > 0 && d->beta < 1))
        field_error(er, "beta", "beta: %s is not between 0 and 1 (exclusive)", text_of(q, &F_BETA));
    if (!(d->nelo0 < d->nelo1)) {
        char t[320];
        snprintf(t, sizeof t, "elo1 (%s) must be above elo0 (%s)", text_of(q, &F_ELO1), text_of(q, &F_ELO0));
        field_error(er, "elo1", "%s", t);
    }
    if (!er->n && !(d->alpha + d->beta < 1))
        field_error(er, "beta", "%s", "alpha plus beta must be below 1");
    return er->n == 0;
}

int page_sprt_calc(const PageIn *in, Buf *b)
{
    Errors er = { .n = 0 };
    xqf_sprt_design d;
    bool has_elo = false;
    double elo = 0;
    bool ok = read_design(in->query, &er, &d, &has_elo, &elo);

    head(b, "SPRT calculator", in->u);
    buf_puts(b, "<h1>SPRT calculator</h1>\n<p>What an SPRT of normalized-Elo bounds elo0 and elo1 and error rates "
                "alpha and beta is expected to do: the game pairs it takes to a decision and the probability that it "
                "passes (H1 accepted), at H0, at H1 and at a true normalized Elo. A Brownian model of the LLR "
                "(<code>stats/sprt_calc.h</code>, as Fishtest's calculator): in normalized Elo it needs no draw "
                "ratio. The discrete LLR overshoots its bounds, so real tests run slightly longer.</p>\n");
    if (!ok) {
        buf_puts(b, "<p class=\"error\">The calculation was not made (");
        for (int i = 0; i < er.n; i++)
            buf_printf(b, "%s%s", i ? ", " : "", er.e[i].field);
        buf_puts(b, "): see the messages below.</p>\n");
    }
    buf_puts(b, "<form method=\"get\" action=\"/sprt-calc\" class=\"new\">");
    FormOut fo = { .b = b, .values = in->query, .errors = er.e, .nerrors = er.n };
    field(&fo, "elo0", "elo0 (H0, normalized Elo)", "0", NULL);
    field(&fo, "elo1", "elo1 (H1, normalized Elo)", "5", NULL);
    field(&fo, "alpha", "alpha (false positives)", "0.05", "the probability of passing at elo0");
    field(&fo, "beta", "beta (false negatives)", "0.05", "the probability of failing at elo1");
    field(&fo, "elo", "True normalized Elo", "", "optional: the Elo to compute the test at");
    buf_puts(b, "<button>Calculate</button></form>\n");
    if (!ok) {
        foot(b);
        return 400;
    }

    double lower, upper;
    xqf_sprt_bounds(d.alpha, d.beta, &lower, &upper);
    buf_printf(b, "<h2>The test</h2>\n<table class=\"settings\"><tr><th>LLR bounds</th>"
                  "<td data-k=\"bounds\">[%.2f, %.2f]</td></tr>\n", lower, upper);
    char cmd[1024];
    int n = snprintf(cmd, sizeof cmd, "xqf-tune stats --expected --elo0 %s --elo1 %s --alpha %s --beta %s --elo %s",
                     text_of(in->query, &F_ELO0), text_of(in->query, &F_ELO1), text_of(in->query, &F_ALPHA),
                     text_of(in->query, &F_BETA), has_elo ? text_of(in->query, &F_ELO) : text_of(in->query, &F_ELO0));
    if (n > 0 && (size_t)n < sizeof cmd)
        row(b, "The same from the command line", cmd, NULL);
    buf_puts(b, "</table>\n<table><thead><tr><th></th><th>True nElo</th><th>Expected pairs</th><th>Expected games</th>"
                "<th>Pass probability</th></tr></thead><tbody>\n");
    result_row(b, &d, "At H0 (elo0)", "h0", d.nelo0);
    result_row(b, &d, "At H1 (elo1)", "h1", d.nelo1);
    if (has_elo)
        result_row(b, &d, "At the true Elo", "elo", elo);
    buf_puts(b, "</tbody></table>\n<h2>Over a range of Elo</h2>\n<table><thead><tr><th>True nElo</th>"
                "<th>Expected pairs</th><th>Expected games</th><th>Pass probability</th></tr></thead><tbody>\n");
    double w = d.nelo1 - d.nelo0;
    for (int i = 0; i < SWEEP_POINTS; i++) {
        double x = d.nelo0 - w + 3 * w * i / (SWEEP_POINTS - 1);
        result_row(b, &d, NULL, NULL, fabs(x) < 1e-12 * w ? 0 : x);
    }
    buf_puts(b, "</tbody></table>\n");
    foot(b);
    return 200;
}

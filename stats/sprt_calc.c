/*
 * sprt_calc.c - the SPRT calculator, the overshoot-corrected Elo of an
 * SPRT and the LOS (sprt_calc.h for the model).
 */
#include "sprt_calc.h"

#include <math.h>
#include <stdbool.h>

/* Per-pair t-value per normalized Elo: sqrt(2) ln(10) / 800. */
static const double T_PER_NELO = 1.4142135623730951 * 2.302585092994046 / 800.0;
static const double Z95 = 1.959963984540054;
static const double PI = 3.14159265358979323846;
/* Points of the numerical integration over the LLR between the bounds (even). */
enum { GRID = 800, BISECT_STEPS = 60 };
/* The estimates are searched in this range of normalized Elo. */
static const double NELO_RANGE = 1000.0;

double xqf_phi(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

double xqf_los(const xqf_elo *e)
{
    if (e->nelo == 0.0)
        return 0.5;
    if (isinf(e->nelo) || !(e->nelo_ci95 > 0.0))
        return e->nelo > 0.0 ? 1.0 : 0.0;
    return xqf_phi(Z95 * e->nelo / e->nelo_ci95);
}

/* The LLR's Brownian motion for a design and a true t-value. */
typedef struct {
    double a, b;                     /* bounds */
    double mu, sigma2;               /* drift and variance per pair */
} Motion;

static xqf_stats_status motion(const xqf_sprt_design *d, double nelo, Motion *m)
{
    if (!isfinite(d->nelo0) || !isfinite(d->nelo1) || !(d->nelo0 < d->nelo1) || !isfinite(nelo))
        return XQF_STATS_BAD_BOUNDS;
    xqf_stats_status st = xqf_sprt_bounds(d->alpha, d->beta, &m->a, &m->b);
    if (st != XQF_STATS_OK)
        return st;
    double t0 = d->nelo0 * T_PER_NELO, t1 = d->nelo1 * T_PER_NELO, t = nelo * T_PER_NELO;
    m->mu = (t1 - t0) * (2 * t - t0 - t1) / 2;
    m->sigma2 = (t1 - t0) * (t1 - t0);
    return XQF_STATS_OK;
}

/* The probability of reaching b before a from x (see the header). */
static double pass_from(const Motion *m, double x)
{
    double g = 2 * m->mu / m->sigma2, width = m->b - m->a;
    if (fabs(g * width) < 1e-9)
        return (x - m->a) / width;
    if (g > 0)
        return expm1(-g * (x - m->a)) / expm1(-g * width);
    /* g < 0: the same ratio multiplied out, without overflow */
    return exp(g * (m->b - x)) * expm1(g * (x - m->a)) / expm1(g * width);
}

xqf_stats_status xqf_sprt_expected(const xqf_sprt_design *d, double nelo, double *pairs, double *pass)
{
    Motion m;
    *pairs = *pass = 0;
    xqf_stats_status st = motion(d, nelo, &m);
    if (st != XQF_STATS_OK)
        return st;
    *pass = pass_from(&m, 0.0);
    if (fabs(2 * m.mu / m.sigma2 * (m.b - m.a)) < 1e-6)
        *pairs = -m.a * m.b / m.sigma2;
    else
        *pairs = (*pass * m.b + (1 - *pass) * m.a) / m.mu;
    return XQF_STATS_OK;
}

/*
 * The density at x (a < x < b) of the motion started at 0 and not yet
 * absorbed at time T: the eigenfunction series of the interval, in log
 * space for the drift's exponentials.
 */
static double density(const Motion *m, double T, double x)
{
    double width = m->b - m->a, sum = 0.0;
    double drift = m->mu / m->sigma2 * x - m->mu * m->mu * T / (2 * m->sigma2);
    double first = 0.0;
    for (int n = 1; n < 100000; n++) {
        double k = n * PI / width;
        double decay = k * k * m->sigma2 * T / 2;
        if (n == 1)
            first = decay;
        else if (decay - first > 40)
            break;                   /* the rest is below e^-40 of the first term */
        sum += exp(drift - decay) * sin(k * (x - m->a)) * sin(k * -m->a);
    }
    /* an overflow: a drift so strong that nothing is left between the bounds */
    return isfinite(sum) ? 2.0 / width * sum : 0.0;
}

/*
 * The probability, for the motion m, of an outcome worse than the observed
 * one: absorbed at a by time T (stopped -1), not absorbed at b by T
 * (stopped 1), or absorbed at a or below y at T (stopped 0).
 */
static double worse(const Motion *m, double T, double y, int stopped)
{
    double h = (m->b - m->a) / GRID, below = 0.0, surv = 0.0, later_pass = 0.0;
    /* Simpson's rule over the grid; the density is 0 at both bounds */
    for (int i = 1; i < GRID; i++) {
        double x = m->a + i * h, w = (i % 2 ? 4.0 : 2.0) * h / 3.0;
        double p = density(m, T, x);
        surv += w * p;
        later_pass += w * p * pass_from(m, x);
        if (x < y)
            below += w * p;
    }
    double pass_by_T = pass_from(m, 0.0) - later_pass;
    double fail_by_T = 1.0 - surv - pass_by_T;
    double r = stopped < 0 ? fail_by_T : stopped > 0 ? 1.0 - pass_by_T : fail_by_T + below;
    return r < 0 ? 0 : r > 1 ? 1 : r;
}

/* The normalized Elo at which the worse outcome's probability is p (it falls as Elo rises). */
static double solve(const xqf_sprt_design *d, double T, double y, int stopped, double p)
{
    double lo = -NELO_RANGE, hi = NELO_RANGE;
    for (int i = 0; i < BISECT_STEPS; i++) {
        double mid = (lo + hi) / 2;
        Motion m;
        motion(d, mid, &m);
        if (worse(&m, T, y, stopped) > p)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

xqf_stats_status xqf_sprt_estimate_elo(const xqf_sprt_design *d, int64_t pairs, double llr,
                                       xqf_sprt_estimate *out)
{
    Motion m;
    *out = (xqf_sprt_estimate){ 0 };
    xqf_stats_status st = motion(d, 0.0, &m);
    if (st != XQF_STATS_OK)
        return st;
    if (pairs <= 0 || !isfinite(llr))
        return XQF_STATS_EMPTY;
    double T = (double)pairs, y = llr;
    if (llr >= m.b || llr <= m.a) {
        /* clamped to the bound crossed, at the time the line from the origin meets it */
        out->stopped = llr >= m.b ? 1 : -1;
        y = out->stopped > 0 ? m.b : m.a;
        T = y / (llr / (double)pairs);
    }
    out->nelo = solve(d, T, y, out->stopped, 0.5);
    out->lo = solve(d, T, y, out->stopped, 0.975);
    out->hi = solve(d, T, y, out->stopped, 0.025);
    out->los = worse(&m, T, y, out->stopped);
    return XQF_STATS_OK;
}

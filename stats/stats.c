/*
 * Match statistics: Elo/nElo estimates and the normalized-Elo GSPRT LLR.
 * See stats.h for the contracts.
 *
 * Internally a result set is a distribution over k equally spaced scores
 * a_i = i/(k-1) in [0,1]: k = 3 for losses/draws/wins, k = 5 for the
 * pentanomial pair cells. Per-sample t-values relate to normalized Elo by
 * t = nElo * ln(10)/800 * sqrt((k-1)/2), i.e. a factor sqrt(2) for pairs.
 */
#include "stats.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#define MAX_CELLS XQF_PENTA_CELLS
#define WDL_CELLS 3

/* Two-sided 95% normal quantile. */
static const double Z95 = XQF_STATS_Z95;
/* Normalized Elo per unit of per-game t-value: 800/ln(10). */
static const double NELO_PER_T = 347.43558552260146;
/* Fishtest's stand-in for an empty cell in the LLR computation. */
static const double EMPTY_CELL = 1e-3;
/*
 * Fixed-point iterations allowed for one maximum-likelihood fit. Fishtest
 * stops after 10; allowing more changes nothing where its fit has settled
 * (the usual case: a handful of iterations) and is more accurate elsewhere.
 */
enum { MLE_MAX_ITER = 100, SECULAR_MAX_ITER = 200 };
/* Convergence of the fit: largest change of a probability. */
static const double MLE_STEP_TOL = 1e-9;
/* Accepted error of the fitted t-value. */
static const double MLE_T_TOL = 1e-5;

const char *xqf_stats_strerror(xqf_stats_status status)
{
    switch (status) {
    case XQF_STATS_OK:
        return "ok";
    case XQF_STATS_BAD_COUNT:
        return "a count is negative or too large";
    case XQF_STATS_EMPTY:
        return "no games: all counts are zero";
    case XQF_STATS_BAD_BOUNDS:
        return "elo0 and elo1 must be finite with elo0 < elo1";
    case XQF_STATS_BAD_ERROR_RATE:
        return "alpha and beta must be positive with alpha + beta < 1";
    case XQF_STATS_NO_CONVERGENCE:
        return "maximum-likelihood fit did not converge";
    }
    return "unknown status";
}

/* Checks k counts and stores their sum; XQF_STATS_EMPTY when it is zero. */
static xqf_stats_status check_counts(const int64_t *counts, int k, int64_t *total)
{
    int64_t sum = 0;
    for (int i = 0; i < k; i++) {
        if (counts[i] < 0 || counts[i] > XQF_STATS_MAX_COUNT)
            return XQF_STATS_BAD_COUNT;
        sum += counts[i];
    }
    *total = sum;
    return sum == 0 ? XQF_STATS_EMPTY : XQF_STATS_OK;
}

/* Score of cell i among k equally spaced cells on [0,1]. */
static double cell_score(int i, int k)
{
    return (double)i / (double)(k - 1);
}

/* Ratio of the per-sample t-value to the per-game one: sqrt((k-1)/2). */
static double t_scale(int k)
{
    return sqrt((double)(k - 1) / 2.0);
}

/* Mean and variance of the distribution p over the k cell scores. */
static void mean_var(const double *p, int k, double *mean, double *var)
{
    double m = 0.0, v = 0.0;
    for (int i = 0; i < k; i++)
        m += p[i] * cell_score(i, k);
    for (int i = 0; i < k; i++) {
        double d = cell_score(i, k) - m;
        v += p[i] * d * d;
    }
    *mean = m;
    *var = v;
}

/*
 * Logistic Elo of a score, -400 log10(1/s - 1), written so that s = 1/2
 * gives +0 rather than -0; unbounded at and beyond 0 and 1.
 */
static double score_to_elo(double s)
{
    if (s <= 0.0)
        return -INFINITY;
    if (s >= 1.0)
        return INFINITY;
    return 400.0 * log10(s / (1.0 - s));
}

static xqf_stats_status elo_estimate(const int64_t *counts, int k, xqf_elo *out)
{
    memset(out, 0, sizeof *out);
    int64_t n = 0;
    xqf_stats_status st = check_counts(counts, k, &n);
    if (st != XQF_STATS_OK)
        return st;

    double p[MAX_CELLS];
    for (int i = 0; i < k; i++)
        p[i] = (double)counts[i] / (double)n;
    double s, var;
    mean_var(p, k, &s, &var);

    double half = Z95 * sqrt(var / (double)n);
    double elo_lo = score_to_elo(s - half), elo_hi = score_to_elo(s + half);

    out->samples = n;
    out->games = n * (k - 1) / 2;
    out->score = s;
    out->elo = score_to_elo(s);
    out->elo_ci95 = isinf(elo_lo) || isinf(elo_hi) ? INFINITY : (elo_hi - elo_lo) / 2.0;
    if (var > 0.0)
        out->nelo = (s - 0.5) / (t_scale(k) * sqrt(var)) * NELO_PER_T;
    else /* every sample has the same score s */
        out->nelo = s == 0.5 ? 0.0 : copysign(INFINITY, s - 0.5);
    out->nelo_ci95 = Z95 / (t_scale(k) * sqrt((double)n)) * NELO_PER_T;
    return XQF_STATS_OK;
}

xqf_stats_status xqf_elo_wdl(int64_t wins, int64_t draws, int64_t losses, xqf_elo *out)
{
    const int64_t counts[WDL_CELLS] = {losses, draws, wins};
    return elo_estimate(counts, WDL_CELLS, out);
}

bool xqf_penta_consistent(int64_t pairs, int64_t wins, int64_t draws, int64_t losses,
                          const int64_t penta[XQF_PENTA_CELLS])
{
    const int64_t all[4] = { pairs, wins, draws, losses };
    int64_t cells = 0, points = 0;
    for (int i = 0; i < 4; i++)
        if (all[i] < 0 || all[i] > XQF_STATS_MAX_COUNT)
            return false;
    for (int i = 0; i < XQF_PENTA_CELLS; i++) {
        if (penta[i] < 0 || penta[i] > XQF_STATS_MAX_COUNT)
            return false;
        cells += penta[i];
        points += i * penta[i];
    }
    int64_t sure_wins = 2 * penta[XQF_PENTA_WW] + penta[XQF_PENTA_WD];
    return cells == pairs && wins + draws + losses == 2 * pairs && 2 * wins + draws == points &&
           wins >= sure_wins && wins <= sure_wins + penta[XQF_PENTA_DD];
}

xqf_stats_status xqf_elo_penta(const int64_t counts[XQF_PENTA_CELLS], xqf_elo *out)
{
    return elo_estimate(counts, XQF_PENTA_CELLS, out);
}

/*
 * Root of the secular equation sum_i w_i g_i / (1 + x g_i) = 0 with all
 * w_i > 0. The left side decreases strictly from +inf to -inf on
 * (-1/max g, -1/min g), so a root exists iff min g < 0 < max g; it is found
 * by Newton steps kept inside a shrinking bracket (bisection otherwise).
 */
static bool solve_secular(const double *g, const double *w, int k, double *root)
{
    double gmin = g[0], gmax = g[0];
    for (int i = 1; i < k; i++) {
        gmin = fmin(gmin, g[i]);
        gmax = fmax(gmax, g[i]);
    }
    if (!(gmin < 0.0 && gmax > 0.0))
        return false;

    double lo = -1.0 / gmax, hi = -1.0 / gmin, x = 0.0;
    for (int iter = 0; iter < SECULAR_MAX_ITER; iter++) {
        double f = 0.0, df = 0.0;
        for (int i = 0; i < k; i++) {
            double q = g[i] / (1.0 + x * g[i]);
            f += w[i] * q;
            df -= w[i] * q * q;
        }
        if (f == 0.0)
            break;
        if (f > 0.0)
            lo = x;
        else
            hi = x;
        double next = x - f / df;
        if (!(next > lo && next < hi))
            next = lo + (hi - lo) / 2.0;
        if (fabs(next - x) <= 1e-15 * (1.0 + fabs(x))) {
            x = next;
            break;
        }
        x = next;
    }
    *root = x;
    return true;
}

/*
 * Maximum-likelihood distribution p (all k cells) given the empirical
 * distribution phat, under the constraint (mean - 1/2)/stdev = t. The
 * stationarity condition is p_i = phat_i / (1 + x g_i) with
 * g_i = a_i - 1/2 - t sigma (1 + ((mu - a_i)/sigma)^2) / 2, where mu and
 * sigma are those of p itself: iterate from the uniform distribution,
 * solving for the multiplier x each time, until p settles (Fishtest's
 * MLE_t_value; theory in Fishtest's normalized_elo_practical.pdf, section
 * 4.1), then verify the constraint.
 */
static xqf_stats_status mle_t_value(const double *phat, int k, double t, double *p)
{
    for (int i = 0; i < k; i++)
        p[i] = 1.0 / k;

    for (int iter = 0; iter < MLE_MAX_ITER; iter++) {
        double mu, var;
        mean_var(p, k, &mu, &var);
        double sigma = sqrt(var);
        if (!(sigma > 0.0))
            return XQF_STATS_NO_CONVERGENCE;

        double g[MAX_CELLS];
        for (int i = 0; i < k; i++) {
            double a = cell_score(i, k);
            double d = (mu - a) / sigma;
            g[i] = a - 0.5 - t * sigma * (1.0 + d * d) / 2.0;
        }
        double x;
        if (!solve_secular(g, phat, k, &x))
            return XQF_STATS_NO_CONVERGENCE;

        double step = 0.0;
        for (int i = 0; i < k; i++) {
            double next = phat[i] / (1.0 + x * g[i]);
            step = fmax(step, fabs(next - p[i]));
            p[i] = next;
        }
        if (step < MLE_STEP_TOL)
            break;
    }

    double mu, var;
    mean_var(p, k, &mu, &var);
    if (!(var > 0.0) || !(fabs((mu - 0.5) / sqrt(var) - t) < MLE_T_TOL))
        return XQF_STATS_NO_CONVERGENCE;
    return XQF_STATS_OK;
}

static xqf_stats_status llr_normalized(const int64_t *counts, int k, double nelo0, double nelo1,
                                       double *llr)
{
    *llr = 0.0;
    int64_t n = 0;
    xqf_stats_status st = check_counts(counts, k, &n);
    if (st != XQF_STATS_OK)
        return st;
    if (!isfinite(nelo0) || !isfinite(nelo1) || !(nelo0 < nelo1))
        return XQF_STATS_BAD_BOUNDS;

    double total = 0.0, phat[MAX_CELLS];
    for (int i = 0; i < k; i++) {
        phat[i] = counts[i] > 0 ? (double)counts[i] : EMPTY_CELL;
        total += phat[i];
    }
    for (int i = 0; i < k; i++)
        phat[i] /= total;

    double p0[MAX_CELLS], p1[MAX_CELLS];
    st = mle_t_value(phat, k, nelo0 / NELO_PER_T * t_scale(k), p0);
    if (st == XQF_STATS_OK)
        st = mle_t_value(phat, k, nelo1 / NELO_PER_T * t_scale(k), p1);
    if (st != XQF_STATS_OK)
        return st;

    double sum = 0.0;
    for (int i = 0; i < k; i++)
        sum += phat[i] * (log(p1[i]) - log(p0[i]));
    *llr = total * sum;
    return XQF_STATS_OK;
}

xqf_stats_status xqf_llr_wdl(int64_t wins, int64_t draws, int64_t losses, double nelo0,
                             double nelo1, double *llr)
{
    const int64_t counts[WDL_CELLS] = {losses, draws, wins};
    return llr_normalized(counts, WDL_CELLS, nelo0, nelo1, llr);
}

xqf_stats_status xqf_llr_penta(const int64_t counts[XQF_PENTA_CELLS], double nelo0, double nelo1,
                               double *llr)
{
    return llr_normalized(counts, XQF_PENTA_CELLS, nelo0, nelo1, llr);
}

xqf_stats_status xqf_sprt_bounds(double alpha, double beta, double *lower, double *upper)
{
    *lower = 0.0;
    *upper = 0.0;
    if (!(alpha > 0.0 && beta > 0.0 && alpha + beta < 1.0))
        return XQF_STATS_BAD_ERROR_RATE;
    *lower = log(beta / (1.0 - alpha));
    *upper = log((1.0 - beta) / alpha);
    return XQF_STATS_OK;
}

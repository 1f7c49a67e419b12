/*
 * The SPRT calculator, the overshoot-corrected Elo and the LOS
 * (stats/sprt_calc.h): closed forms computed here independently, and a
 * simulation of the real GSPRT (xqf_llr_penta on drawn pentanomial pairs,
 * checked every 2 pairs as a coordinator checks now and then), whose
 * lengths, pass rates and Elo estimates the model must predict.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sprt_calc.h"
#include "stats.h"

/* Per-pair t-value per normalized Elo, from its definition: sqrt(2) ln(10) / 800. */
#define T_PER_NELO (sqrt(2.0) * log(10.0) / 800.0)

Test(sprt_calc, closed_forms)
{
    xqf_sprt_design d = { 0, 5, 0.05, 0.05 };
    double pairs, pass;
    /* the error rates are the pass probabilities at the bounds */
    cr_assert_eq(xqf_sprt_expected(&d, 0, &pairs, &pass), XQF_STATS_OK);
    cr_assert_float_eq(pass, 0.05, 1e-9);
    cr_assert_eq(xqf_sprt_expected(&d, 5, &pairs, &pass), XQF_STATS_OK);
    cr_assert_float_eq(pass, 0.95, 1e-9);
    /* halfway: no drift, Wald's length -a b / sigma^2 with sigma the bounds' t-value gap */
    double a = log(0.05 / 0.95), b = log(0.95 / 0.05), sigma = 5 * T_PER_NELO;
    cr_assert_eq(xqf_sprt_expected(&d, 2.5, &pairs, &pass), XQF_STATS_OK);
    cr_assert_float_eq(pass, 0.5, 1e-9);
    cr_assert_float_eq(pairs, -a * b / (sigma * sigma), 1e-6 * pairs);
    cr_assert(fabs(pairs - 20931) < 1, "%f", pairs);
    /* at H1: drift (t1 - t0)^2 / 2, length (P b + (1 - P) a) / mu */
    double mu = sigma * sigma / 2;
    cr_assert_eq(xqf_sprt_expected(&d, 5, &pairs, &pass), XQF_STATS_OK);
    cr_assert_float_eq(pairs, (0.95 * b + 0.05 * a) / mu, 1e-6 * pairs);
    /* symmetric about the middle; bad designs refused */
    double p2, s2;
    xqf_sprt_expected(&d, 1, &pairs, &pass);
    xqf_sprt_expected(&d, 4, &p2, &s2);
    cr_assert_float_eq(pairs, p2, 1e-6 * pairs);
    cr_assert_float_eq(pass, 1 - s2, 1e-9);
    xqf_sprt_design bad = { 5, 0, 0.05, 0.05 };
    cr_assert_eq(xqf_sprt_expected(&bad, 1, &pairs, &pass), XQF_STATS_BAD_BOUNDS);
    bad = (xqf_sprt_design){ 0, 5, 0.6, 0.5 };
    cr_assert_eq(xqf_sprt_expected(&bad, 1, &pairs, &pass), XQF_STATS_BAD_ERROR_RATE);
}

Test(sprt_calc, los)
{
    xqf_elo e = { .nelo = 0 };
    cr_assert_float_eq(xqf_los(&e), 0.5, 1e-12);
    /* nElo one standard error above 0: Phi(1) */
    e = (xqf_elo){ .nelo = 10, .nelo_ci95 = 1.959963984540054 * 10 };
    cr_assert_float_eq(xqf_los(&e), 0.8413447460685429, 1e-9);
    e = (xqf_elo){ .nelo = -INFINITY, .nelo_ci95 = 5 };
    cr_assert_float_eq(xqf_los(&e), 0.0, 1e-12);
}

/* ---- simulation ---------------------------------------------------------------- */

static uint64_t rng_state = 88172645463325252u;

static double uniform(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

/* A pentanomial distribution of normalized Elo nelo: a draw-heavy one tilted (exponentially) to it. */
static void distribution(double nelo, double p[5])
{
    static const double BASE[5] = { 0.05, 0.2, 0.5, 0.2, 0.05 };
    double lo = -20, hi = 20;
    for (int it = 0; it < 100; it++) {
        double l = (lo + hi) / 2, z = 0, m = 0, v = 0;
        for (int i = 0; i < 5; i++)
            z += p[i] = BASE[i] * exp(l * i / 4.0);
        for (int i = 0; i < 5; i++)
            m += (p[i] /= z) * i / 4.0;
        for (int i = 0; i < 5; i++)
            v += p[i] * (i / 4.0 - m) * (i / 4.0 - m);
        if ((m - 0.5) / sqrt(2 * v) * 800 / log(10.0) < nelo)
            lo = l;
        else
            hi = l;
    }
}

typedef struct {
    double mean_pairs, pass_rate;
    double below, naive_below;       /* shares of estimates below the truth: corrected, raw counts' */
    double covered;                  /* share of corrected intervals holding the truth */
} SimResult;

static SimResult simulate(const xqf_sprt_design *d, double truth, int runs)
{
    double p[5], lo, hi;
    distribution(truth, p);
    xqf_sprt_bounds(d->alpha, d->beta, &lo, &hi);
    SimResult s = { 0 };
    for (int r = 0; r < runs; r++) {
        int64_t c[5] = { 0 }, n = 0;
        double llr = 0;
        do {
            double u = uniform(), acc = 0;
            int k = 4;
            for (int i = 0; i < 5 && k == 4; i++)
                if (u < (acc += p[i]))
                    k = i;
            c[k]++;
            n++;
        } while (n % 2 || (xqf_llr_penta(c, d->nelo0, d->nelo1, &llr) == XQF_STATS_OK && llr > lo && llr < hi));
        xqf_sprt_estimate est;
        xqf_elo raw;
        cr_assert_eq(xqf_sprt_estimate_elo(d, n, llr, &est), XQF_STATS_OK);
        cr_assert_eq(est.stopped, llr >= hi ? 1 : -1);
        cr_assert(est.lo <= est.nelo && est.nelo <= est.hi);
        xqf_elo_penta(c, &raw);
        s.mean_pairs += (double)n / runs;
        s.pass_rate += (llr >= hi) / (double)runs;
        s.below += (est.nelo < truth) / (double)runs;
        s.naive_below += (raw.nelo < truth) / (double)runs;
        s.covered += (est.lo <= truth && truth <= est.hi) / (double)runs;
    }
    return s;
}

/*
 * 150 tests at H1 and 150 at H0 of a [0, 20] SPRT: the model's length
 * within 20 % (measured: 4 % shorter at H1, 11 % longer at H0: the
 * overshoot), its pass probability within 0.05; the corrected estimate is
 * median-unbiased (about half below the truth, where the raw counts' Elo
 * is biased away from the middle), and its 95 % interval covers.
 */
Test(sprt_calc, simulated_gsprt, .timeout = 240)
{
    xqf_sprt_design d = { 0, 20, 0.05, 0.05 };
    const double truths[2] = { 20, 0 };
    for (int i = 0; i < 2; i++) {
        SimResult s = simulate(&d, truths[i], 150);
        double pairs, pass;
        xqf_sprt_expected(&d, truths[i], &pairs, &pass);
        fprintf(stderr, "nElo %g: %.0f pairs (model %.0f), pass %.3f (model %.3f), estimates below %.2f "
                        "(raw %.2f), covered %.2f\n", truths[i], s.mean_pairs, pairs, s.pass_rate, pass, s.below,
                s.naive_below, s.covered);
        cr_assert(fabs(s.mean_pairs / pairs - 1) < 0.2, "mean %f, model %f", s.mean_pairs, pairs);
        cr_assert(fabs(s.pass_rate - pass) < 0.05, "pass rate %f, model %f", s.pass_rate, pass);
        cr_assert(fabs(s.below - 0.5) < 0.1, "corrected estimates below the truth: %f", s.below);
        cr_assert(fabs(s.below - 0.5) < fabs(s.naive_below - 0.5), "corrected %f, raw %f", s.below, s.naive_below);
        cr_assert(s.covered >= 0.9, "covered %f", s.covered);
    }
}

Test(sprt_calc, estimates_at_a_bound_shrink_to_the_middle)
{
    xqf_sprt_design d = { 0, 5, 0.05, 0.05 };
    xqf_sprt_estimate est;
    /* passed after 5000 pairs: the raw slope says about 9.6 nElo; corrected lower, inside its interval */
    cr_assert_eq(xqf_sprt_estimate_elo(&d, 5000, 2.95, &est), XQF_STATS_OK);
    cr_assert_eq(est.stopped, 1);
    cr_assert(est.nelo > 5 && est.nelo < 9.6, "%f", est.nelo);
    cr_assert(est.lo > 0 && est.hi > est.nelo && est.los > 0.95, "[%f, %f] %f", est.lo, est.hi, est.los);
    /* a failed test mirrors it */
    xqf_sprt_estimate low;
    cr_assert_eq(xqf_sprt_estimate_elo(&d, 5000, -2.95, &low), XQF_STATS_OK);
    cr_assert_eq(low.stopped, -1);
    cr_assert_float_eq(low.nelo, 5 - est.nelo, 0.05);
    cr_assert_eq(xqf_sprt_estimate_elo(&d, 0, 1, &est), XQF_STATS_EMPTY);
}

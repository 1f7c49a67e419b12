/*
 * sprt_calc.h - what an SPRT is expected to do, and what one that ended
 * says about Elo: the SPRT calculator (expected game pairs and pass
 * probability for a true Elo), the Elo estimate of a test corrected for
 * where it stopped, and the likelihood of superiority (LOS).
 *
 * The model, as Fishtest's (Michel Van den Bergh's) analysis uses it: the
 * LLR of the normalized-Elo GSPRT (stats.h) moves like a Brownian motion.
 * With per-pair t-values t = nElo * sqrt(2) * ln(10)/800 for the true Elo
 * and t0, t1 for the bounds, the LLR of one pair is that of a normal
 * sample of known variance: its drift per pair is
 *     mu = (t1 - t0) (2 t - t0 - t1) / 2
 * and its variance per pair sigma^2 = (t1 - t0)^2, whatever the draw
 * ratio: in normalized Elo, the calculator needs no draw model.  Bounds
 * a = ln(beta/(1-alpha)) < 0 < b = ln((1-beta)/alpha).  With
 * gamma = 2 mu / sigma^2 (closed forms of a Brownian motion with drift
 * between absorbing bounds):
 *     P(pass) = h(0), h(x) = (1 - e^(-gamma (x - a))) / (1 - e^(-gamma (b - a)))
 *               (the probability of reaching b before a from x; (x - a) / (b - a) when mu = 0)
 *     E[pairs] = (P b + (1 - P) a) / mu     (Wald's identity; -a b / sigma^2 when mu = 0)
 * The discrete LLR overshoots its bounds, so real tests run slightly longer
 * (tests/test_sprt_calc.c measures it by simulating the GSPRT itself).
 *
 * Overshoot correction: a test that stopped at a bound stopped because
 * its LLR happened to get there; its counts' Elo is biased away from the
 * middle (passed tests overestimate).  As Fishtest does, the observed LLR
 * is clamped to the bound it crossed and the time rescaled to where the
 * line from the origin meets it (T = bound / (LLR / pairs)); outcomes are
 * ordered (failed earlier < failed later < running at a lower LLR <
 * passed later < passed earlier), and for a true Elo the probability of
 * an outcome worse than the observed one is computed from the Brownian
 * motion's density between the bounds at time T (its eigenfunction
 * series, integrated numerically).  The estimate is the Elo at which that
 * probability is 1/2 (median-unbiased), the 95 % interval where it is
 * 0.975 and 0.025, and the LOS is that probability at Elo 0.
 */
#ifndef XQF_TUNER_SPRT_CALC_H
#define XQF_TUNER_SPRT_CALC_H

#include <stdint.h>

#include "stats.h"

/* An SPRT's design: normalized-Elo bounds and error rates. */
typedef struct {
    double nelo0, nelo1, alpha, beta;
} xqf_sprt_design;

/*
 * The expected game pairs and the probability of passing (H1 accepted) of
 * an SPRT of design d when the true normalized Elo is nelo (model above).
 * XQF_STATS_OK, or XQF_STATS_BAD_BOUNDS / XQF_STATS_BAD_ERROR_RATE (the
 * outputs then 0).  pairs and pass must not be NULL.
 */
xqf_stats_status xqf_sprt_expected(const xqf_sprt_design *d, double nelo, double *pairs, double *pass);

/* An SPRT's Elo corrected for where it stopped. */
typedef struct {
    double nelo;                     /* median-unbiased estimate, normalized Elo */
    double lo, hi;                   /* its 95 % interval */
    double los;                      /* likelihood of superiority, 0-1 */
    int stopped;                     /* -1 at the lower bound, 1 at the upper, 0 not at a bound */
} xqf_sprt_estimate;

/*
 * The estimate for a test of design d after pairs game pairs at LLR llr
 * (a bound crossed or not).  XQF_STATS_OK, XQF_STATS_EMPTY (no pairs),
 * XQF_STATS_BAD_BOUNDS or XQF_STATS_BAD_ERROR_RATE.  out must not be NULL.
 */
xqf_stats_status xqf_sprt_estimate_elo(const xqf_sprt_design *d, int64_t pairs, double llr,
                                       xqf_sprt_estimate *out);

/*
 * The likelihood of superiority of a result set: the probability that the
 * first player is the stronger, Phi(nelo / standard error) with the
 * estimate's normal approximation (0.5 when nelo is 0, 1 or 0 when every
 * sample agrees).  This function can't fail.
 */
double xqf_los(const xqf_elo *e);

/* The normal distribution's CDF. This function can't fail. */
double xqf_phi(double x);

#endif

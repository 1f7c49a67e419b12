/*
 * Match statistics for Xiangqi Forge: Elo and normalized Elo with 95%
 * confidence intervals, and the generalized SPRT log-likelihood ratio.
 *
 * Pure computation, no I/O. The formulas follow fastchess (Elo, nElo and
 * their intervals) and Fishtest (LLR with normalized-Elo bounds, computed
 * from maximum-likelihood distributions under a t-value constraint).
 *
 * Results come in two shapes:
 *   trinomial   - per-game counts of wins, draws and losses;
 *   pentanomial - per-pair counts of game pairs (each pair is two games
 *                 with colours reversed), indexed by enum xqf_penta_cell in
 *                 ascending order of pair score: LL (0), LD (1/2 point),
 *                 DD or WL (1 point), WD (3/2 points), WW (2 points).
 */
#ifndef XQF_TUNER_STATS_H
#define XQF_TUNER_STATS_H

#include <stdbool.h>
#include <stdint.h>

/* Indices into a pentanomial count array. */
enum xqf_penta_cell {
    XQF_PENTA_LL,
    XQF_PENTA_LD,
    XQF_PENTA_DD, /* DD and WL pairs together: both score one point */
    XQF_PENTA_WD,
    XQF_PENTA_WW,
    XQF_PENTA_CELLS
};

/* Largest count accepted in any cell (2^48): sums stay exact in a double. */
#define XQF_STATS_MAX_COUNT (INT64_C(1) << 48)
/* The 97.5% quantile of the standard normal: every 95% interval here. */
#define XQF_STATS_Z95 1.959963984540054

/* Outcome of every function below. */
typedef enum xqf_stats_status {
    XQF_STATS_OK = 0,
    XQF_STATS_BAD_COUNT,      /* a count is negative or above XQF_STATS_MAX_COUNT */
    XQF_STATS_EMPTY,          /* all counts are zero: nothing to estimate */
    XQF_STATS_BAD_BOUNDS,     /* elo0/elo1 not finite, or elo0 >= elo1 */
    XQF_STATS_BAD_ERROR_RATE, /* alpha/beta not in (0,1), or alpha + beta >= 1 */
    XQF_STATS_NO_CONVERGENCE  /* the constrained maximum-likelihood fit failed */
} xqf_stats_status;

/* Elo estimate of one result set. */
typedef struct xqf_elo {
    int64_t games;    /* games played (twice the pairs for pentanomial) */
    int64_t samples;  /* independent samples: games (W/D/L) or pairs (penta) */
    double score;     /* mean score per game, in [0,1] */
    double elo;       /* logistic Elo of score; -INFINITY/+INFINITY at 0/1 */
    double elo_ci95;  /* half-width of the 95% interval; +INFINITY when an end is unbounded */
    double nelo;      /* normalized Elo; +-INFINITY when the variance is zero
                         and score != 0.5, 0 when every sample scored 0.5 */
    double nelo_ci95; /* half-width of the 95% nElo interval, always finite */
} xqf_elo;

/*
 * xqf_stats_strerror: a short lower-case English description of status.
 * Never returns NULL; an unknown value gives "unknown status".
 */
const char *xqf_stats_strerror(xqf_stats_status status);

/*
 * xqf_elo_wdl: Elo and nElo of wins/draws/losses, as fastchess computes
 * them from the per-game score distribution (1, 1/2, 0):
 *   mean s, variance v per game, N = games;
 *   elo(x) = -400 log10(1/x - 1);
 *   z = 1.959963984540054 (the 97.5% quantile of the standard normal);
 *   interval: s +- z sqrt(v/N), Elo half-width (elo(hi) - elo(lo))/2;
 *   nelo = (s - 0.5) / sqrt(v) * 800/ln(10), half-width
 *          z / sqrt(N) * 800/ln(10) (nElo is linear in the score).
 * Interval ends at or beyond 0 or 1 map to -INFINITY/+INFINITY.
 * Counts are not regularized (unlike the LLR functions).
 * Returns XQF_STATS_OK and fills *out; XQF_STATS_BAD_COUNT or
 * XQF_STATS_EMPTY leave *out zeroed. out must not be NULL.
 */
xqf_stats_status xqf_elo_wdl(int64_t wins, int64_t draws, int64_t losses, xqf_elo *out);

/*
 * xqf_elo_penta: as xqf_elo_wdl for pentanomial counts (indexed by enum
 * xqf_penta_cell). The sample is the pair, its score the pair score / 2
 * (0, 1/4, 1/2, 3/4, 1); N = pairs; sigma is the per-pair standard
 * deviation in those units and
 *   nelo = (s - 0.5) / (sqrt(2) sigma) * 800/ln(10),
 * half-width z / sqrt(2 N) * 800/ln(10).
 * Same return values and conventions as xqf_elo_wdl. counts and out must
 * not be NULL.
 */
xqf_stats_status xqf_elo_penta(const int64_t counts[XQF_PENTA_CELLS], xqf_elo *out);

/*
 * Whether game counts and pair counts describe the same games, as a
 * worker counts them (pair score 0..4 half-points indexes the cell): the
 * cells sum to pairs, W + D + L = 2 pairs, the points agree (2W + D =
 * LD + 2 DD + 3 WD + 4 WW, in half-points), and the wins are those of the
 * WW and WD pairs plus one per WL pair among the DD+WL cell
 * (2 WW + WD <= W <= 2 WW + WD + DD; the losses follow).  Every count must
 * lie in 0..XQF_STATS_MAX_COUNT.  For counts from the network before they
 * are stored.  This function can't fail.
 */
bool xqf_penta_consistent(int64_t pairs, int64_t wins, int64_t draws, int64_t losses,
                          const int64_t penta[XQF_PENTA_CELLS]);

/*
 * xqf_llr_wdl: generalized log-likelihood ratio of H1 (nElo = nelo1) against
 * H0 (nElo = nelo0) for wins/draws/losses, exactly as Fishtest's
 * LLR_normalized for trinomial results:
 *   - every zero count is replaced by 0.001 (Fishtest's regularization) and
 *     the empirical distribution p^ over the scores 0, 1/2, 1 is formed;
 *   - for each hypothesis the maximum-likelihood distribution p with
 *     (mean - 1/2)/stdev = nelo * ln(10)/800 is found (Lagrange multiplier
 *     fixed-point iteration, Fishtest's MLE_t_value);
 *   - LLR = N * sum_i p^_i ln(p1_i / p0_i), N the regularized count total.
 * Returns XQF_STATS_OK and stores the ratio in *llr; otherwise (bad count,
 * no games, bad bounds, no convergence) *llr is 0. llr must not be NULL.
 */
xqf_stats_status xqf_llr_wdl(int64_t wins, int64_t draws, int64_t losses, double nelo0,
                             double nelo1, double *llr);

/*
 * xqf_llr_penta: as xqf_llr_wdl for pentanomial counts (scores 0, 1/4, 1/2,
 * 3/4, 1 per pair), with the pair t-value constrained to
 * sqrt(2) * nelo * ln(10)/800, as in Fishtest. counts and llr must not be
 * NULL; same return values as xqf_llr_wdl.
 */
xqf_stats_status xqf_llr_penta(const int64_t counts[XQF_PENTA_CELLS], double nelo0, double nelo1,
                               double *llr);

/*
 * xqf_sprt_bounds: SPRT stopping bounds for type I error alpha and type II
 * error beta: *lower = ln(beta/(1-alpha)), *upper = ln((1-beta)/alpha).
 * Returns XQF_STATS_OK, or XQF_STATS_BAD_ERROR_RATE (bounds set to 0) unless
 * 0 < alpha, 0 < beta and alpha + beta < 1. lower and upper must not be NULL.
 */
xqf_stats_status xqf_sprt_bounds(double alpha, double beta, double *lower, double *upper);

#endif

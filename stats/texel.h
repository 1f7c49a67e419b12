/*
 * texel.h - fitting evaluation weights to labelled positions (Texel's
 * method), as pure computation: xqf-tune texel reads the data, traces the
 * evaluation (eval_trace) and hands the result here.
 *
 * Each position i has an evaluation that is linear in the fitted weights:
 *     e_i(theta) = fixed_i + sum_j coef_ij * theta_j     (centipawns)
 * and a target between 0 and 1 from the side to move's view:
 *     t_i = lambda * result_i + (1 - lambda) * sigmoid(K * score_i)
 * (result 0, 0.5 or 1; score the search's).  The loss is the mean of
 * (sigmoid(K * e_i) - t_i)^2 with sigmoid(x) = 1 / (1 + exp(-x)).  Its
 * gradient is exact (the coefficients are the derivatives), summed over
 * positions on several threads.  Steps are Adam's; each weight is kept
 * within its bounds after every step.
 */
#ifndef XQF_TUNER_TEXEL_H
#define XQF_TUNER_TEXEL_H

#include <stddef.h>
#include <stdint.h>

typedef struct xqf_texel_data {
    size_t n;                  /* positions */
    size_t k;                  /* fitted weights */
    const double *fixed;       /* n: the evaluation's part that is not fitted */
    const uint32_t *start;     /* n + 1: position i's terms are start[i] .. start[i + 1] - 1 */
    const uint16_t *index;     /* a term's weight (0 .. k - 1) */
    const float *coef;         /* a term's coefficient */
    const float *result;       /* n: 0, 0.5 or 1 */
    const float *score;        /* n: the search's score */
} xqf_texel_data;

/* The loss at theta for scale K and blend lambda, on `threads` threads. */
double xqf_texel_loss(const xqf_texel_data *d, const double *theta, double K, double lambda, int threads);

/*
 * The scale K (per centipawn) that minimizes the loss against the results
 * alone (lambda 1) at theta: a golden-section search in [1e-4, 0.05].
 */
double xqf_texel_fit_k(const xqf_texel_data *d, const double *theta, int threads);

typedef struct xqf_texel_config {
    double K, lambda;
    int epochs;                /* full-data gradient steps */
    double rate;               /* Adam's step size, centipawns */
    int threads;
    const double *lo, *hi;     /* k bounds */
    /* Called after every epoch (may be NULL): the loss, the largest weight change, positions per second. */
    void (*progress)(void *ctx, int epoch, double loss, double change, double positions_per_s);
    void *ctx;
} xqf_texel_config;

/*
 * Fits theta (k weights, updated in place) and writes the loss before the
 * first epoch and after each one to curve (epochs + 1 values; may be NULL).
 * Returns 0, or -1 when out of memory or a thread cannot be started.
 */
int xqf_texel_fit(const xqf_texel_data *d, const xqf_texel_config *cfg, double *theta, double *curve);

#endif

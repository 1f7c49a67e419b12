/*
 * SPSA for Xiangqi Forge, as Fishtest runs it (pure computation, no I/O).
 *
 * Each parameter has a start value theta, bounds [min, max] and the two end
 * hints c_end (perturbation size at the last iteration) and r_end (learning
 * rate at the last iteration).  With N planned iterations (game pairs),
 * A = a_ratio * N (Fishtest: 0.1 N), alpha = 0.602, gamma = 0.101:
 *     c = c_end * N^gamma            a = r_end * c_end^2 * (A + N)^alpha
 *     c_k = c / k^gamma              R_k = a / (A + k)^alpha / c_k^2
 * so that c_N = c_end and R_N = r_end.  A task of P game pairs starting at
 * iteration k gets a random flip (+-1) per parameter; its first engine
 * plays clip(theta + c_k flip), its second clip(theta - c_k flip), rounded
 * stochastically to integers (a float parameter, OpenBench's `float` spec
 * lines, is played as it is).  When the whole batch is in,
 *     theta <- clip(theta + R_k c_k (W - L) flip)
 * from the first engine's side, and the iteration count grows by P.
 *
 * The caller owns persistence: a run keeps theta and iter (in PostgreSQL)
 * and a task keeps its perturbation until its result is applied, once.
 */
#ifndef XQF_TUNER_SPSA_H
#define XQF_TUNER_SPSA_H

#include <stdbool.h>
#include <stdint.h>

#define XQF_SPSA_NAME 64
#define XQF_SPSA_MAX_PARAMS 512

typedef struct xqf_spsa_param {
    char name[XQF_SPSA_NAME];
    double theta;          /* current value (real: rounding happens per task) */
    double min, max;
    double c_end, r_end;
    bool is_float;         /* played as a decimal (param_set.h), not rounded */
} xqf_spsa_param;

typedef struct xqf_spsa {
    int count;
    xqf_spsa_param params[XQF_SPSA_MAX_PARAMS];
    int64_t iterations;    /* N: planned game pairs */
    int64_t iter;          /* game pairs applied so far */
    double alpha, gamma, A;
} xqf_spsa;

/* One task's perturbation: what both engines play and what the update needs. */
typedef struct xqf_spsa_step {
    int count;
    int64_t k;             /* the iteration the task starts at (1-based) */
    int flip[XQF_SPSA_MAX_PARAMS];
    double c_k[XQF_SPSA_MAX_PARAMS];
    double R_k[XQF_SPSA_MAX_PARAMS];
    double plus[XQF_SPSA_MAX_PARAMS];   /* the first engine's values (integers unless is_float) */
    double minus[XQF_SPSA_MAX_PARAMS];  /* the second engine's values */
} xqf_spsa_step;

/*
 * Sets defaults for a run of `iterations` game pairs: alpha 0.602,
 * gamma 0.101, A = 0.1 * iterations, no parameters, iter 0.
 * Returns 0, or -1 when iterations < 1.
 */
int xqf_spsa_init(xqf_spsa *s, int64_t iterations);

/*
 * Adds a parameter. Returns 0, or -1 when the table is full, the name is
 * empty or too long, min >= max, theta is outside [min, max], or c_end or
 * r_end is not positive.
 */
int xqf_spsa_add(xqf_spsa *s, const char *name, double theta, double min, double max,
                 double c_end, double r_end);

/* c_k of parameter i at iteration k (k >= 1). */
double xqf_spsa_c(const xqf_spsa *s, int i, int64_t k);
/* R_k of parameter i at iteration k (k >= 1). */
double xqf_spsa_r(const xqf_spsa *s, int i, int64_t k);

/*
 * Draws the perturbation of a task starting at iteration k (usually
 * s->iter + 1), using and advancing *rng (any non-zero seed).
 * Can't fail.
 */
void xqf_spsa_perturb(const xqf_spsa *s, int64_t k, uint64_t *rng, xqf_spsa_step *out);

/*
 * Applies a finished task's result exactly once: theta moves by
 * R_k c_k (wins - losses) flip, clipped to the bounds, and iter grows by
 * pairs.  Returns 0, or -1 when the step does not match s (count) or
 * pairs < 0.
 */
int xqf_spsa_update(xqf_spsa *s, const xqf_spsa_step *step, int64_t pairs, int64_t wins,
                    int64_t losses);

/* A uniform double in [0, 1) from *rng (xorshift64*). */
double xqf_spsa_random(uint64_t *rng);

#endif

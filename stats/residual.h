/*
 * residual.h - how far each worker's results are from the run's: the
 * chi-square test of homogeneity Fishtest runs over a run's workers, and
 * each worker's residual (a z-score) derived from it.
 *
 * Each worker's complete pairs are put in three columns by the pair's
 * score: below even (LL, LD), even (DD and WL), above even (WD, WW).  A
 * worker whose expected count in some column is 5 or less is left out and
 * the table computed again (the chi-square approximation needs it), until
 * every row left qualifies.  A row's residual is the chi-square of the
 * 2 x 3 table of that worker against all the others together (its row's
 * chi-square divided by 1 - its share of the pairs), which under "every
 * worker plays the same" follows a chi-square law of 2 degrees of freedom;
 * it is shown as the standard normal z with the same upper tail (0 at
 * least: a worker closer to the run than chance is not suspect).
 *
 * A worker is flagged when its residual is above XQF_RESIDUAL_FLAG (the
 * threshold Fishtest uses to call a worker bad), or when it lost games by
 * crashes (more than 3) or on time (more than 10 % of more than 20 games).
 */
#ifndef XQF_RESIDUAL_H
#define XQF_RESIDUAL_H

#include <stdbool.h>
#include <stdint.h>

#define XQF_RESIDUAL_FLAG 7.0

typedef struct {
    int64_t penta[5];      /* in: LL, LD, DD+WL, WD, WW pairs */
    bool used;             /* out: qualified for the test */
    double z;              /* out: its residual (NAN when not used) */
} XqfResidualRow;

/*
 * Fills each row's used and z; *chi2 and *p (either may be NULL) get the
 * whole table's statistic and p-value (NAN when fewer than two rows
 * qualify).  Returns the rows used.  Can't fail.
 */
int xqf_residuals(XqfResidualRow *rows, int n, double *chi2, double *p);

/*
 * The standard normal z whose upper tail is exp(log_p) (log_p <= 0), for
 * tails far below what a double holds.  Can't fail.
 */
double xqf_normal_isf_log(double log_p);

/* Whether a worker's faults flag it: crashes > 3, or time losses > 10 % of more than 20 games. */
bool xqf_faults_flag(int64_t games, int64_t crashes, int64_t time_losses);

#endif

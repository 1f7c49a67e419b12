#include "residual.h"

#include <math.h>

enum { COLUMNS = 3 };

static const double PI = 3.14159265358979323846;

/* Column of each pentanomial cell: below even, even, above even. */
static const int COLUMN_OF[5] = { 0, 0, 1, 2, 2 };

/* log of the standard normal upper tail at z. */
static double log_sf(double z)
{
    if (z < 30)
        return log(0.5 * erfc(z / sqrt(2.0)));
    /* Mills' ratio: sf(z) ~ pdf(z) / z (1 - 1/z^2), close enough this far out */
    return -0.5 * z * z - log(z * sqrt(2 * PI)) + log1p(-1 / (z * z));
}

double xqf_normal_isf_log(double log_p)
{
    if (!(log_p < 0))
        return -INFINITY;
    double lo = -40, hi = 40;
    while (log_sf(hi) > log_p)
        hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12; i++) {
        double mid = 0.5 * (lo + hi);
        if (log_sf(mid) > log_p)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

bool xqf_faults_flag(int64_t games, int64_t crashes, int64_t time_losses)
{
    return crashes > 3 || (games > 20 && 10 * time_losses > games);
}

int xqf_residuals(XqfResidualRow *rows, int n, double *chi2, double *p)
{
    double obs[n > 0 ? n : 1][COLUMNS];
    for (int i = 0; i < n; i++) {
        for (int c = 0; c < COLUMNS; c++)
            obs[i][c] = 0;
        for (int k = 0; k < 5; k++)
            obs[i][COLUMN_OF[k]] += (double)rows[i].penta[k];
        rows[i].used = obs[i][0] + obs[i][1] + obs[i][2] > 0;
        rows[i].z = NAN;
    }
    double col[COLUMNS], total, row_sum[n > 0 ? n : 1];
    int used;
    /* Leave out the rows whose expected counts are too small, until none is. */
    for (bool again = true; again;) {
        again = false;
        used = 0;
        total = 0;
        for (int c = 0; c < COLUMNS; c++)
            col[c] = 0;
        for (int i = 0; i < n; i++) {
            row_sum[i] = obs[i][0] + obs[i][1] + obs[i][2];
            if (!rows[i].used)
                continue;
            used++;
            total += row_sum[i];
            for (int c = 0; c < COLUMNS; c++)
                col[c] += obs[i][c];
        }
        for (int i = 0; used > 1 && i < n; i++)
            for (int c = 0; rows[i].used && c < COLUMNS; c++)
                if (row_sum[i] * col[c] / total <= 5) {
                    rows[i].used = false;
                    again = true;
                }
    }
    double sum = 0;
    int nonzero = 0;
    for (int c = 0; c < COLUMNS; c++)
        nonzero += col[c] > 0;
    if (used < 2 || nonzero < 2) {
        for (int i = 0; i < n; i++)
            rows[i].used = false;
        if (chi2)
            *chi2 = NAN;
        if (p)
            *p = NAN;
        return 0;
    }
    for (int i = 0; i < n; i++) {
        if (!rows[i].used)
            continue;
        double row_chi2 = 0;
        for (int c = 0; c < COLUMNS; c++) {
            double e = row_sum[i] * col[c] / total;
            if (e > 0)
                row_chi2 += (obs[i][c] - e) * (obs[i][c] - e) / e;
        }
        sum += row_chi2;
        /* this row against the others together: 2 degrees of freedom, upper tail exp(-x / 2) */
        double adjusted = row_chi2 / (1 - row_sum[i] / total);
        double z = xqf_normal_isf_log(-adjusted / 2);
        rows[i].z = z > 0 ? z : 0;
    }
    int dof = (used - 1) * (nonzero - 1);
    if (chi2)
        *chi2 = sum;
    if (p) {
        /* upper tail of chi-square with dof degrees of freedom: closed forms for even and odd dof */
        double y = sum / 2, term, q;
        if (dof % 2 == 0) {
            term = exp(-y);
            q = term;
            for (int i = 1; i < dof / 2; i++)
                q += term *= y / i;
        } else {
            q = erfc(sqrt(y));
            term = exp(-y) * sqrt(y) / sqrt(PI) * 2;   /* e^-y y^(1/2) / Gamma(3/2) */
            for (int i = 0; i < dof / 2; i++) {
                q += term;
                term *= y / (i + 1.5);
            }
        }
        *p = q < 1 ? q : 1;
    }
    return used;
}

/*
 * Tests of stats (Elo, nElo, normalized-Elo GSPRT) and of the
 * `xqf-tune stats` command.
 *
 * The LLR is checked three ways: against the reference vectors in
 * XQF_DATA/sprt-examples.tsv, against an independent computation written
 * here (empirical-likelihood profile maximisation, see below), and for
 * sign/degenerate behaviour.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "stats.h"

#define NELO_PER_T (800.0 / log(10.0))

/* ---- reference vectors ------------------------------------------------ */

typedef struct reference {
    int64_t penta[XQF_PENTA_CELLS];
    double llr_0_2, llr_0_5, elo, elo_ci95, nelo, nelo_ci95;
} reference;

enum { MAX_REFERENCES = 16 };

/* Reads sprt-examples.tsv (header line, then one vector per line). */
static int read_references(reference *refs)
{
    const char *path = XQF_DATA "/sprt-examples.tsv";
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);
    char line[512];
    cr_assert_not_null(fgets(line, sizeof line, f), "empty %s", path);
    int n = 0;
    while (n < MAX_REFERENCES && fgets(line, sizeof line, f) != NULL) {
        reference *r = &refs[n];
        long long c[XQF_PENTA_CELLS];
        int got = sscanf(line, "%lld,%lld,%lld,%lld,%lld %lf %lf %lf %lf %lf %lf", &c[0], &c[1],
                         &c[2], &c[3], &c[4], &r->llr_0_2, &r->llr_0_5, &r->elo, &r->elo_ci95,
                         &r->nelo, &r->nelo_ci95);
        if (got <= 0)
            continue;
        cr_assert_eq(got, 11, "malformed line in %s: %s", path, line);
        for (int i = 0; i < XQF_PENTA_CELLS; i++)
            r->penta[i] = c[i];
        n++;
    }
    fclose(f);
    return n;
}

/* |got - want| within what printing want with 2 decimals allows. */
static void assert_2dp(double got, double want, const char *what)
{
    cr_assert(fabs(got - want) <= 0.005 + 1e-9, "%s: got %.6f, reference %.2f", what, got, want);
}

Test(stats_reference, three_vectors_match)
{
    reference refs[MAX_REFERENCES];
    int n = read_references(refs);
    cr_assert_eq(n, 3, "expected 3 reference vectors, read %d", n);
    for (int i = 0; i < n; i++) {
        const reference *r = &refs[i];
        double llr;
        cr_assert_eq(xqf_llr_penta(r->penta, 0.0, 2.0, &llr), XQF_STATS_OK);
        cr_assert(fabs(llr - r->llr_0_2) < 1e-3, "vector %d <0,2>: %.6f vs %.4f", i, llr,
                  r->llr_0_2);
        cr_assert_eq(xqf_llr_penta(r->penta, 0.0, 5.0, &llr), XQF_STATS_OK);
        cr_assert(fabs(llr - r->llr_0_5) < 1e-3, "vector %d <0,5>: %.6f vs %.4f", i, llr,
                  r->llr_0_5);

        xqf_elo e;
        cr_assert_eq(xqf_elo_penta(r->penta, &e), XQF_STATS_OK);
        assert_2dp(e.elo, r->elo, "elo");
        assert_2dp(e.elo_ci95, r->elo_ci95, "elo_ci95");
        assert_2dp(e.nelo, r->nelo, "nelo");
        assert_2dp(e.nelo_ci95, r->nelo_ci95, "nelo_ci95");
        int64_t pairs = 0;
        for (int c = 0; c < XQF_PENTA_CELLS; c++)
            pairs += r->penta[c];
        cr_assert_eq(e.samples, pairs);
        cr_assert_eq(e.games, 2 * pairs);
    }
}

/* ---- independent LLR ----------------------------------------------------
 *
 * The GSPRT LLR is N * (l(t1) - l(t0)), where l(t) is the largest mean
 * log-likelihood sum_i phat_i ln p_i over distributions p on the cell
 * scores with (mean - 1/2)/stdev = t. Here l(t) is computed without
 * Lagrange fixed points: for a fixed stdev s the mean is m = 1/2 + t s and
 * both moments are linear constraints, whose maximum follows from the
 * convex two-parameter empirical-likelihood dual (minimised by damped
 * Newton); l(t) is then the maximum over s of that profile (grid scan plus
 * golden-section refinement).
 */

/* sum phat ln p at p_i = phat_i / (1 + lam . h_i). */
static double dual_value(const double *phat, const double (*h)[2], int k, const double *lam)
{
    double l = 0.0;
    for (int i = 0; i < k; i++)
        l += phat[i] * log(phat[i] / (1.0 + lam[0] * h[i][0] + lam[1] * h[i][1]));
    return l;
}

/* max sum phat ln p subject to E_p[a] = m, Var_p = v; -INFINITY if infeasible. */
static double moment_profile(const double *a, const double *phat, int k, double m, double v)
{
    double h[XQF_PENTA_CELLS][2];
    for (int i = 0; i < k; i++) {
        h[i][0] = a[i] - m;
        h[i][1] = (a[i] - m) * (a[i] - m) - v;
    }
    double lam[2] = {0.0, 0.0};
    for (int iter = 0; iter < 200; iter++) {
        double g[2] = {0.0, 0.0}, H[3] = {0.0, 0.0, 0.0}, F = 0.0;
        for (int i = 0; i < k; i++) {
            double u = 1.0 + lam[0] * h[i][0] + lam[1] * h[i][1];
            F -= phat[i] * log(u);
            g[0] -= phat[i] * h[i][0] / u;
            g[1] -= phat[i] * h[i][1] / u;
            H[0] += phat[i] * h[i][0] * h[i][0] / (u * u);
            H[1] += phat[i] * h[i][0] * h[i][1] / (u * u);
            H[2] += phat[i] * h[i][1] * h[i][1] / (u * u);
        }
        double det = H[0] * H[2] - H[1] * H[1];
        if (!(det > 0.0))
            return -INFINITY;
        double d[2] = {-(H[2] * g[0] - H[1] * g[1]) / det, -(H[0] * g[1] - H[1] * g[0]) / det};
        double decrement = -(g[0] * d[0] + g[1] * d[1]); /* Newton decrement squared */
        if (decrement < 1e-16) /* F is within 1e-16 of its minimum */
            return dual_value(phat, h, k, lam);
        double step = 1.0;
        for (;;) {
            double l0 = lam[0] + step * d[0], l1 = lam[1] + step * d[1], Fn = 0.0;
            int inside = 1;
            for (int i = 0; i < k && inside; i++) {
                double u = 1.0 + l0 * h[i][0] + l1 * h[i][1];
                if (u <= 0.0)
                    inside = 0;
                else
                    Fn -= phat[i] * log(u);
            }
            if (inside && Fn <= F + 1e-4 * step * (g[0] * d[0] + g[1] * d[1])) {
                lam[0] = l0;
                lam[1] = l1;
                break;
            }
            step /= 2.0;
            if (step < 1e-30) /* no progress left: converged to rounding, or unbounded */
                return decrement < 1e-12 ? dual_value(phat, h, k, lam) : -INFINITY;
        }
        if (fabs(lam[0]) + fabs(lam[1]) > 1e12)
            return -INFINITY;
    }
    return -INFINITY;
}

static double profile_at(const double *a, const double *phat, int k, double t, double s)
{
    return moment_profile(a, phat, k, 0.5 + t * s, s * s);
}

/* l(t): maximum of the profile over the stdev s in (0, 1/(2 sqrt(1+t^2))). */
static double best_loglik(const double *a, const double *phat, int k, double t)
{
    enum { GRID = 400 };
    const double smax = 0.5 / sqrt(1.0 + t * t);
    int best = 1;
    double best_l = -INFINITY;
    for (int j = 1; j < GRID; j++) {
        double l = profile_at(a, phat, k, t, smax * j / GRID);
        if (l > best_l) {
            best_l = l;
            best = j;
        }
    }
    cr_assert(isfinite(best_l), "no feasible stdev for t=%g", t);
    double lo = smax * (best - 1) / GRID, hi = smax * (best + 1) / GRID;
    const double r = (sqrt(5.0) - 1.0) / 2.0;
    double x1 = hi - r * (hi - lo), x2 = lo + r * (hi - lo);
    double f1 = profile_at(a, phat, k, t, x1), f2 = profile_at(a, phat, k, t, x2);
    while (hi - lo > 1e-12) {
        if (f1 < f2) {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + r * (hi - lo);
            f2 = profile_at(a, phat, k, t, x2);
        } else {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - r * (hi - lo);
            f1 = profile_at(a, phat, k, t, x1);
        }
    }
    return fmax(fmax(f1, f2), best_l);
}

/*
 * Independent LLR of counts (ascending score order, k = 3 or 5), with
 * Fishtest's regularization of empty cells (0.001) as part of the
 * definition. Pair t-values are sqrt(2) times per-game ones.
 */
static double independent_llr(const int64_t *counts, int k, double nelo0, double nelo1)
{
    double a[XQF_PENTA_CELLS], phat[XQF_PENTA_CELLS], n = 0.0;
    for (int i = 0; i < k; i++) {
        a[i] = (double)i / (k - 1);
        phat[i] = counts[i] > 0 ? (double)counts[i] : 1e-3;
        n += phat[i];
    }
    for (int i = 0; i < k; i++)
        phat[i] /= n;
    double scale = k == 5 ? sqrt(2.0) : 1.0;
    double l0 = best_loglik(a, phat, k, nelo0 / NELO_PER_T * scale);
    double l1 = best_loglik(a, phat, k, nelo1 / NELO_PER_T * scale);
    return n * (l1 - l0);
}

static void check_penta_independent(int64_t ll, int64_t ld, int64_t dd, int64_t wd, int64_t ww,
                                    double nelo0, double nelo1)
{
    const int64_t c[XQF_PENTA_CELLS] = {ll, ld, dd, wd, ww};
    double llr;
    cr_assert_eq(xqf_llr_penta(c, nelo0, nelo1, &llr), XQF_STATS_OK);
    double want = independent_llr(c, XQF_PENTA_CELLS, nelo0, nelo1);
    cr_assert(fabs(llr - want) < 1e-3, "penta %lld,%lld,%lld,%lld,%lld <%g,%g>: %.6f vs %.6f",
              (long long)ll, (long long)ld, (long long)dd, (long long)wd, (long long)ww, nelo0,
              nelo1, llr, want);
}

static void check_wdl_independent(int64_t w, int64_t d, int64_t l, double nelo0, double nelo1)
{
    const int64_t c[3] = {l, d, w};
    double llr;
    cr_assert_eq(xqf_llr_wdl(w, d, l, nelo0, nelo1, &llr), XQF_STATS_OK);
    double want = independent_llr(c, 3, nelo0, nelo1);
    cr_assert(fabs(llr - want) < 1e-3, "wdl %lld,%lld,%lld <%g,%g>: %.6f vs %.6f", (long long)w,
              (long long)d, (long long)l, nelo0, nelo1, llr, want);
}

Test(stats_independent, pentanomial_llr)
{
    check_penta_independent(40, 120, 260, 150, 50, 0.0, 5.0);
    check_penta_independent(40, 120, 260, 150, 50, -1.0, 4.0);
    check_penta_independent(1187, 7410, 13475, 7378, 1164, -3.0, 1.0);
    check_penta_independent(0, 22, 61, 30, 4, 0.0, 5.0); /* an empty cell */
    check_penta_independent(307, 619, 1202, 725, 353, 0.0, 2.0);
}

Test(stats_independent, trinomial_llr)
{
    check_wdl_independent(480, 1020, 420, 0.0, 5.0);
    check_wdl_independent(480, 1020, 420, -2.0, 2.0);
    check_wdl_independent(95, 0, 80, 0.0, 10.0); /* no draws */
}

/* ---- trinomial Elo ------------------------------------------------------ */

Test(stats_trinomial, hand_computed_elo)
{
    /* 60 wins, 20 draws, 20 losses: score 0.7, variance 0.16, 100 games.
     * Elo = 400 log10(0.7/0.3); interval 0.7 +- 1.959964 * 0.04;
     * nElo = 0.2/0.4 * 800/ln(10); nElo half-width 1.959964/10 * 800/ln(10). */
    xqf_elo e;
    cr_assert_eq(xqf_elo_wdl(60, 20, 20, &e), XQF_STATS_OK);
    cr_assert_eq(e.games, 100);
    cr_assert_eq(e.samples, 100);
    cr_assert(fabs(e.score - 0.7) < 1e-12);
    cr_assert(fabs(e.elo - 147.190714) < 1e-5, "elo %.6f", e.elo);
    cr_assert(fabs(e.elo_ci95 - 66.013381) < 1e-5, "ci %.6f", e.elo_ci95);
    cr_assert(fabs(e.nelo - 173.717793) < 1e-5, "nelo %.6f", e.nelo);
    cr_assert(fabs(e.nelo_ci95 - 68.096123) < 1e-5, "nelo ci %.6f", e.nelo_ci95);
}

Test(stats_trinomial, symmetric_result)
{
    xqf_elo e;
    cr_assert_eq(xqf_elo_wdl(300, 400, 300, &e), XQF_STATS_OK);
    cr_assert(fabs(e.elo) < 1e-9);
    cr_assert(fabs(e.nelo) < 1e-9);
    double llr;
    cr_assert_eq(xqf_llr_wdl(300, 400, 300, 0.0, 5.0, &llr), XQF_STATS_OK);
    cr_assert(llr < 0.0, "llr %.6f", llr);
    /* the same for pairs */
    const int64_t c[XQF_PENTA_CELLS] = {50, 200, 400, 200, 50};
    cr_assert_eq(xqf_llr_penta(c, 0.0, 5.0, &llr), XQF_STATS_OK);
    cr_assert(llr < 0.0, "llr %.6f", llr);
}

/* ---- degenerate inputs -------------------------------------------------- */

Test(stats_degenerate, no_games)
{
    const int64_t zero[XQF_PENTA_CELLS] = {0};
    xqf_elo e;
    e.elo = 123.0;
    cr_assert_eq(xqf_elo_penta(zero, &e), XQF_STATS_EMPTY);
    cr_assert_eq(e.games, 0);
    cr_assert_eq(e.elo, 0.0);
    cr_assert_eq(xqf_elo_wdl(0, 0, 0, &e), XQF_STATS_EMPTY);
    double llr = 1.0;
    cr_assert_eq(xqf_llr_penta(zero, 0.0, 5.0, &llr), XQF_STATS_EMPTY);
    cr_assert_eq(llr, 0.0);
    cr_assert_eq(xqf_llr_wdl(0, 0, 0, 0.0, 5.0, &llr), XQF_STATS_EMPTY);
}

Test(stats_degenerate, bad_counts)
{
    const int64_t neg[XQF_PENTA_CELLS] = {1, 2, -3, 4, 5};
    const int64_t big[XQF_PENTA_CELLS] = {1, 2, XQF_STATS_MAX_COUNT + 1, 4, 5};
    xqf_elo e;
    double llr = 1.0;
    cr_assert_eq(xqf_elo_penta(neg, &e), XQF_STATS_BAD_COUNT);
    cr_assert_eq(xqf_elo_penta(big, &e), XQF_STATS_BAD_COUNT);
    cr_assert_eq(xqf_elo_wdl(5, -1, 5, &e), XQF_STATS_BAD_COUNT);
    cr_assert_eq(xqf_llr_penta(neg, 0.0, 5.0, &llr), XQF_STATS_BAD_COUNT);
    cr_assert_eq(llr, 0.0);
    cr_assert_eq(xqf_llr_wdl(-1, 5, 5, 0.0, 5.0, &llr), XQF_STATS_BAD_COUNT);
}

Test(stats_degenerate, all_wins_and_all_losses)
{
    xqf_elo e;
    cr_assert_eq(xqf_elo_wdl(10, 0, 0, &e), XQF_STATS_OK);
    cr_assert(isinf(e.elo) && e.elo > 0);
    cr_assert(isinf(e.elo_ci95) && e.elo_ci95 > 0);
    cr_assert(isinf(e.nelo) && e.nelo > 0);
    cr_assert(isfinite(e.nelo_ci95));
    cr_assert_eq(xqf_elo_wdl(0, 0, 10, &e), XQF_STATS_OK);
    cr_assert(isinf(e.elo) && e.elo < 0);
    cr_assert(isinf(e.nelo) && e.nelo < 0);

    const int64_t ww[XQF_PENTA_CELLS] = {0, 0, 0, 0, 12};
    const int64_t ll[XQF_PENTA_CELLS] = {12, 0, 0, 0, 0};
    cr_assert_eq(xqf_elo_penta(ww, &e), XQF_STATS_OK);
    cr_assert(isinf(e.elo) && e.elo > 0);
    cr_assert_eq(xqf_elo_penta(ll, &e), XQF_STATS_OK);
    cr_assert(isinf(e.elo) && e.elo < 0);

    /* the LLR stays finite thanks to the regularization */
    double llr;
    cr_assert_eq(xqf_llr_penta(ww, 0.0, 5.0, &llr), XQF_STATS_OK);
    cr_assert(isfinite(llr) && llr > 0.0, "llr %g", llr);
    cr_assert_eq(xqf_llr_penta(ll, 0.0, 5.0, &llr), XQF_STATS_OK);
    cr_assert(isfinite(llr) && llr < 0.0, "llr %g", llr);
    cr_assert_eq(xqf_llr_wdl(10, 0, 0, 0.0, 5.0, &llr), XQF_STATS_OK);
    cr_assert(isfinite(llr) && llr > 0.0, "llr %g", llr);
}

Test(stats_degenerate, zero_variance)
{
    xqf_elo e;
    cr_assert_eq(xqf_elo_wdl(0, 10, 0, &e), XQF_STATS_OK);
    cr_assert_eq(e.elo, 0.0);
    cr_assert_eq(e.elo_ci95, 0.0);
    cr_assert_eq(e.nelo, 0.0);
    const int64_t dd[XQF_PENTA_CELLS] = {0, 0, 7, 0, 0};
    cr_assert_eq(xqf_elo_penta(dd, &e), XQF_STATS_OK);
    cr_assert_eq(e.nelo, 0.0);
    const int64_t wd[XQF_PENTA_CELLS] = {0, 0, 0, 5, 0};
    cr_assert_eq(xqf_elo_penta(wd, &e), XQF_STATS_OK);
    cr_assert(fabs(e.elo - 190.848502) < 1e-5, "elo %.6f", e.elo);
    cr_assert_eq(e.elo_ci95, 0.0);
    cr_assert(isinf(e.nelo) && e.nelo > 0);
    double llr;
    cr_assert_eq(xqf_llr_penta(dd, 0.0, 5.0, &llr), XQF_STATS_OK);
    cr_assert(isfinite(llr));
}

Test(stats_degenerate, interval_beyond_score_range)
{
    xqf_elo e;
    cr_assert_eq(xqf_elo_wdl(10, 1, 0, &e), XQF_STATS_OK);
    cr_assert(isfinite(e.elo));
    cr_assert(isinf(e.elo_ci95) && e.elo_ci95 > 0);
}

Test(stats_degenerate, bad_bounds)
{
    const int64_t c[XQF_PENTA_CELLS] = {1, 2, 3, 4, 5};
    double llr = 1.0;
    cr_assert_eq(xqf_llr_penta(c, 5.0, 0.0, &llr), XQF_STATS_BAD_BOUNDS);
    cr_assert_eq(llr, 0.0);
    cr_assert_eq(xqf_llr_penta(c, 2.0, 2.0, &llr), XQF_STATS_BAD_BOUNDS);
    cr_assert_eq(xqf_llr_penta(c, NAN, 2.0, &llr), XQF_STATS_BAD_BOUNDS);
    cr_assert_eq(xqf_llr_wdl(1, 2, 3, 0.0, INFINITY, &llr), XQF_STATS_BAD_BOUNDS);
}

Test(stats_sprt, bounds)
{
    double lo, hi;
    cr_assert_eq(xqf_sprt_bounds(0.05, 0.05, &lo, &hi), XQF_STATS_OK);
    cr_assert(fabs(lo - log(0.05 / 0.95)) < 1e-12 && fabs(lo + 2.944439) < 1e-6);
    cr_assert(fabs(hi - log(0.95 / 0.05)) < 1e-12);
    cr_assert_eq(xqf_sprt_bounds(0.1, 0.2, &lo, &hi), XQF_STATS_OK);
    cr_assert(fabs(lo - log(0.2 / 0.9)) < 1e-12 && fabs(hi - log(0.8 / 0.1)) < 1e-12);
    cr_assert_eq(xqf_sprt_bounds(0.0, 0.05, &lo, &hi), XQF_STATS_BAD_ERROR_RATE);
    cr_assert_eq(lo, 0.0);
    cr_assert_eq(hi, 0.0);
    cr_assert_eq(xqf_sprt_bounds(0.05, 1.0, &lo, &hi), XQF_STATS_BAD_ERROR_RATE);
    cr_assert_eq(xqf_sprt_bounds(0.5, 0.5, &lo, &hi), XQF_STATS_BAD_ERROR_RATE);
    cr_assert_eq(xqf_sprt_bounds(NAN, 0.05, &lo, &hi), XQF_STATS_BAD_ERROR_RATE);
}

Test(stats_sprt, strerror)
{
    for (int s = XQF_STATS_OK; s <= XQF_STATS_NO_CONVERGENCE; s++)
        cr_assert(strlen(xqf_stats_strerror((xqf_stats_status)s)) > 0);
    cr_assert_str_eq(xqf_stats_strerror((xqf_stats_status)99), "unknown status");
}

/* ---- the xqf-tune program ------------------------------------------------ */

/* Runs a shell command, returns its exit status and output in out. */
static int run(const char *command, char *out, size_t size)
{
    FILE *p = popen(command, "r");
    cr_assert_not_null(p, "popen %s", command);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    cr_assert(WIFEXITED(status), "%s did not exit normally", command);
    return WEXITSTATUS(status);
}

#define TUNE XQF_BIN "/xqf-tune"

Test(stats_cli, first_reference_vector)
{
    char out[1024];
    int status = run(TUNE " stats --penta 307,619,1202,725,353 --elo0 0 --elo1 2", out,
                     sizeof out);
    cr_assert_eq(status, 0, "exit %d: %s", status, out);
    cr_assert_str_eq(out, "Games: 6412\n"
                          "Pairs: 3206\n"
                          "Elo: 10.73 +/- 6.70\n"
                          "nElo: 13.63 +/- 8.50\n"
                          "LOS: 99.9 %\n"
                          "LLR: 1.34 [-2.94, 2.94]\n");

    status = run(TUNE " stats --penta=307,619,1202,725,353 --elo0 0 --elo1 5 --alpha 0.1"
                      " --beta 0.2",
                 out, sizeof out);
    cr_assert_eq(status, 0, "exit %d: %s", status, out);
    cr_assert(strstr(out, "LLR: 2.95 [-1.50, 2.08]\n") != NULL, "%s", out);
}

Test(stats_cli, wdl_without_sprt)
{
    char out[1024];
    int status = run(TUNE " stats --wdl 60,20,20", out, sizeof out);
    cr_assert_eq(status, 0, "exit %d: %s", status, out);
    cr_assert_str_eq(out, "Games: 100\n"
                          "Elo: 147.19 +/- 66.01\n"
                          "nElo: 173.72 +/- 68.10\n"
                          "LOS: 100.0 %\n");
}

/* The SPRT calculator: Wald's length -a b / sigma^2 halfway between the bounds (tests/test_sprt_calc.c). */
Test(stats_cli, expected_games)
{
    char out[1024];
    int status = run(TUNE " stats --expected --elo0 0 --elo1 5 --elo 2.5", out, sizeof out);
    cr_assert_eq(status, 0, "exit %d: %s", status, out);
    cr_assert_str_eq(out, "Expected pairs: 20931\n"
                          "Expected games: 41861\n"
                          "Pass probability: 50.0 %\n");
    status = run(TUNE " stats --expected --elo0 0 --elo1 5 --elo 5 --alpha 0.05 --beta 0.1", out, sizeof out);
    cr_assert_eq(status, 0, "exit %d: %s", status, out);
    cr_assert(strstr(out, "Pass probability: 90.0 %\n"), "%s", out);
    cr_assert_eq(run(TUNE " stats --expected --elo0 0 --elo1 5 2>/dev/null", out, sizeof out), 2);
    cr_assert_eq(run(TUNE " stats --expected --elo 1 2>/dev/null", out, sizeof out), 2);
    cr_assert_eq(run(TUNE " stats --expected --elo0 5 --elo1 0 --elo 1 2>/dev/null", out, sizeof out), 2);
    cr_assert_eq(run(TUNE " stats --expected --wdl 1,1,1 --elo0 0 --elo1 5 --elo 1 2>/dev/null", out, sizeof out), 2);
}

Test(stats_cli, help)
{
    char out[4096];
    cr_assert_eq(run(TUNE " --help", out, sizeof out), 0);
    cr_assert(strstr(out, "stats") != NULL, "%s", out);
    cr_assert_eq(run(TUNE " stats --help", out, sizeof out), 0);
    cr_assert(strstr(out, "--penta") != NULL && strstr(out, "--wdl") != NULL, "%s", out);
}

Test(stats_cli, malformed_arguments)
{
    static const char *const bad[] = {
        " stats --penta 1,2,3,4",
        " stats --penta 1,2,3,4,5,6",
        " stats --penta 1,2,x,4,5",
        " stats --penta 1,2,-3,4,5",
        " stats --penta 1,,3,4,5",
        " stats --wdl 1,2",
        " stats --penta 1,2,3,4,5 --wdl 1,2,3",
        " stats",
        " stats --penta",
        " stats --penta 1,2,3,4,5 --bogus 1",
        " stats --penta 1,2,3,4,5 --elo0 0",
        " stats --penta 1,2,3,4,5 --elo0 5 --elo1 0",
        " stats --penta 1,2,3,4,5 --elo0 0 --elo1 five",
        " stats --penta 1,2,3,4,5 --elo0 0 --elo1 5 --alpha 1.5",
        " stats --penta 1,2,3,4,5 --elo0 0 --elo1 5 --beta 0",
        " stats --penta 1,2,3,4,5 --elo0 0 --elo1 5 --alpha 0.6 --beta 0.6",
        " stats --penta 1,2,3,4,5 --alpha 0.1",
        " stats --penta 0,0,0,0,0",
        " stats --penta 1,2,3,4,5 --penta 1,2,3,4,5",
        " frobnicate",
        "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char command[256], out[1024];
        snprintf(command, sizeof command, "%s%s 2>&1", TUNE, bad[i]);
        int status = run(command, out, sizeof out);
        cr_assert_eq(status, 2, "'%s': exit %d", bad[i], status);
        cr_assert(strncmp(out, "xqf-tune: error: ", 17) == 0 && strchr(out, '\n') != NULL,
                  "'%s': %s", bad[i], out);
    }
}

/* Pair cells against game counts, as a worker counts them. */
Test(stats_penta, consistency_with_wdl)
{
    const int64_t ll_ld_wl_wd_ww[5] = { 1, 1, 1, 1, 1 }, dd[5] = { 0, 0, 1, 0, 0 }, wd[5] = { 0, 0, 0, 1, 0 };
    /* LL+LD+WL+WD+WW: wins 0+0+1+1+2, draws 0+1+0+1+0, losses 2+1+1+0+0 */
    cr_assert(xqf_penta_consistent(5, 4, 2, 4, ll_ld_wl_wd_ww));
    /* the middle cell as DD instead of WL: 3/4/3 */
    cr_assert(xqf_penta_consistent(5, 3, 4, 3, ll_ld_wl_wd_ww));
    cr_assert(xqf_penta_consistent(1, 0, 2, 0, dd));
    cr_assert(xqf_penta_consistent(1, 1, 0, 1, dd));
    cr_assert(xqf_penta_consistent(0, 0, 0, 0, (const int64_t[5]){ 0 }));
    cr_assert(xqf_penta_consistent(1, 1, 1, 0, wd));
    cr_assert(!xqf_penta_consistent(1, 1, 0, 1, wd));           /* W+D+L and the bounds hold, the points do not */
    cr_assert(!xqf_penta_consistent(1, 2, 0, 0, wd));
    cr_assert(!xqf_penta_consistent(2, 1, 1, 0, wd));           /* the cells are one pair */
    cr_assert(!xqf_penta_consistent(5, 5, 0, 5, ll_ld_wl_wd_ww));
    cr_assert(!xqf_penta_consistent(5, 2, 6, 2, ll_ld_wl_wd_ww)); /* points right, wins below WW and WD's */
    cr_assert(!xqf_penta_consistent(1, -1, 4, -1, dd));
    const int64_t huge[5] = { 0, 0, 0, 0, INT64_MAX / 2 };
    cr_assert(!xqf_penta_consistent(INT64_MAX / 2, INT64_MAX, 0, 0, huge));
}

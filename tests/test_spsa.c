/*
 * SPSA as Fishtest runs it: the schedule (c_N = c_end, R_N = r_end), the
 * perturbation (flips, clipping, stochastic rounding), the update applied
 * from the first engine's side, and convergence on a noisy synthetic match
 * whose optimum is known.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "spsa.h"

static xqf_spsa run_of(int64_t n)
{
    xqf_spsa s;
    cr_assert_eq(xqf_spsa_init(&s, n), 0);
    cr_assert_eq(xqf_spsa_add(&s, "NullR", 3, 1, 5, 0.5, 0.002), 0);
    cr_assert_eq(xqf_spsa_add(&s, "RookMg", 900, 300, 2000, 30, 0.002), 0);
    return s;
}

Test(spsa, schedule_ends_at_the_hints)
{
    xqf_spsa s = run_of(10000);
    cr_assert_float_eq(s.A, 1000.0, 1e-9);
    for (int i = 0; i < s.count; i++) {
        cr_assert_float_eq(xqf_spsa_c(&s, i, s.iterations), s.params[i].c_end, 1e-9);
        cr_assert_float_eq(xqf_spsa_r(&s, i, s.iterations), s.params[i].r_end, 1e-12);
        /* c_1 = c_end N^gamma; both c_k and a_k shrink with k. */
        cr_assert_float_eq(xqf_spsa_c(&s, i, 1), s.params[i].c_end * pow(10000, 0.101), 1e-9);
        cr_assert_gt(xqf_spsa_c(&s, i, 10), xqf_spsa_c(&s, i, 100));
    }
}

Test(spsa, rejects_bad_parameters)
{
    xqf_spsa s;
    cr_assert_eq(xqf_spsa_init(&s, 0), -1);
    cr_assert_eq(xqf_spsa_init(&s, 100), 0);
    cr_assert_eq(xqf_spsa_add(&s, "", 1, 0, 2, 1, 0.002), -1);
    cr_assert_eq(xqf_spsa_add(&s, "X", 3, 0, 2, 1, 0.002), -1);
    cr_assert_eq(xqf_spsa_add(&s, "X", 1, 2, 2, 1, 0.002), -1);
    cr_assert_eq(xqf_spsa_add(&s, "X", 1, 0, 2, 0, 0.002), -1);
    cr_assert_eq(xqf_spsa_add(&s, "X", 1, 0, 2, 1, -1), -1);
    cr_assert_eq(s.count, 0);
}

Test(spsa, perturbation_is_symmetric_clipped_and_rounded_without_bias)
{
    xqf_spsa s = run_of(1000);
    s.params[1].theta = 900.3;
    uint64_t rng = 42;
    double sum_plus = 0, sum_minus = 0;
    int flips = 0, n = 20000;
    for (int t = 0; t < n; t++) {
        xqf_spsa_step st;
        xqf_spsa_perturb(&s, 1000, &rng, &st);
        cr_assert(st.flip[1] == 1 || st.flip[1] == -1);
        flips += st.flip[1];
        double c = st.c_k[1];
        cr_assert_float_eq(c, 30.0, 1e-9);
        double expect_plus = 900.3 + c * st.flip[1], expect_minus = 900.3 - c * st.flip[1];
        cr_assert(st.plus[1] == (int)floor(expect_plus) || st.plus[1] == (int)floor(expect_plus) + 1);
        cr_assert(st.minus[1] == (int)floor(expect_minus) || st.minus[1] == (int)floor(expect_minus) + 1);
        sum_plus += st.plus[1] - c * st.flip[1];
        sum_minus += st.minus[1] + c * st.flip[1];
        /* NullR = 3 +- 0.5 stays in [1, 5]; at the bound it is clipped. */
        cr_assert(st.plus[0] >= 1 && st.plus[0] <= 5);
    }
    cr_assert_lt(fabs((double)flips) / n, 0.03, "flips are not balanced");
    cr_assert_lt(fabs(sum_plus / n - 900.3), 0.02, "stochastic rounding is biased: %f", sum_plus / n);
    cr_assert_lt(fabs(sum_minus / n - 900.3), 0.02);

    s.params[0].theta = 5; /* at the upper bound */
    xqf_spsa_step st;
    for (int t = 0; t < 100; t++) {
        xqf_spsa_perturb(&s, 1, &rng, &st);
        cr_assert_leq(st.plus[0], 5);
        cr_assert_leq(st.minus[0], 5);
    }
}

Test(spsa, update_moves_theta_towards_the_winner_once)
{
    xqf_spsa s = run_of(1000);
    uint64_t rng = 7;
    xqf_spsa_step st;
    xqf_spsa_perturb(&s, 1, &rng, &st);
    double before = s.params[1].theta;
    cr_assert_eq(xqf_spsa_update(&s, &st, 4, 5, 1), 0);
    double expect = before + st.R_k[1] * st.c_k[1] * 4 * st.flip[1];
    if (expect > 2000)
        expect = 2000;
    if (expect < 300)
        expect = 300;
    cr_assert_float_eq(s.params[1].theta, expect, 1e-9);
    cr_assert_eq(s.iter, 4);
    xqf_spsa_step wrong = st;
    wrong.count = 1;
    cr_assert_eq(xqf_spsa_update(&s, &wrong, 4, 5, 1), -1);
    cr_assert_eq(s.iter, 4, "a rejected update must not count");
}

/* A synthetic engine: Elo falls quadratically with the distance from a known optimum. */
static const double OPT[3] = { 100, 50, 300 }, START[3] = { 130, 35, 210 };

static double elo_of(const double *x)
{
    double e = 0;
    for (int i = 0; i < 3; i++) {
        double d = (x[i] - OPT[i]) / (START[i] - OPT[i]);
        e -= 60.0 / 3 * d * d; /* the start is 60 Elo below the optimum */
    }
    return e;
}

/* One game from the first engine's side: 1 win, 0 draw, -1 loss; 40 % draws. */
static int play(double elo_diff, uint64_t *rng)
{
    double score = 1 / (1 + pow(10, -elo_diff / 400));
    double draw = 0.4, win = score - draw / 2;
    if (win < 0)
        win = 0;
    double u = xqf_spsa_random(rng);
    return u < win ? 1 : u < win + draw ? 0 : -1;
}

Test(spsa, converges_on_a_noisy_objective)
{
    const int64_t pairs = 40000, batch = 8;
    xqf_spsa s;
    xqf_spsa_init(&s, pairs);
    xqf_spsa_add(&s, "A", START[0], 0, 200, 4, 0.002);
    xqf_spsa_add(&s, "B", START[1], 0, 100, 2, 0.002);
    xqf_spsa_add(&s, "C", START[2], 0, 600, 10, 0.002);
    uint64_t rng = 12345;
    while (s.iter < pairs) {
        xqf_spsa_step st;
        xqf_spsa_perturb(&s, s.iter + 1, &rng, &st);
        double diff = elo_of(st.plus) - elo_of(st.minus);
        int64_t w = 0, l = 0;
        for (int g = 0; g < 2 * batch; g++) {
            int r = play(diff, &rng);
            w += r > 0;
            l += r < 0;
        }
        xqf_spsa_update(&s, &st, batch, w, l);
    }
    double final[3], start[3];
    for (int i = 0; i < 3; i++) {
        final[i] = (double)lround(s.params[i].theta);
        start[i] = (double)(int)START[i];
    }
    double lost_before = -elo_of(start), lost_after = -elo_of(final);
    cr_log_info("theta %.1f %.1f %.1f, Elo loss %.1f -> %.1f", s.params[0].theta, s.params[1].theta,
                s.params[2].theta, lost_before, lost_after);
    cr_assert_lt(lost_after, lost_before * 0.25, "SPSA recovered too little: %.1f of %.1f Elo still lost",
                 lost_after, lost_before);
}

/* A float parameter is played as theta +- c_k, clipped, unrounded; an int one beside it stays an integer. */
Test(spsa, a_float_parameter_is_not_rounded)
{
    xqf_spsa s;
    xqf_spsa_init(&s, 1000);
    xqf_spsa_add(&s, "Scale", 0.5, 0.1, 0.9, 0.04, 0.002);
    xqf_spsa_add(&s, "NullR", 3, 1, 6, 0.7, 0.002);
    s.params[0].is_float = true;
    uint64_t rng = 99;
    int fractional = 0;
    for (int n = 0; n < 200; n++) {
        xqf_spsa_step st;
        xqf_spsa_perturb(&s, 1000, &rng, &st);
        double c = st.c_k[0];
        cr_assert_float_eq(st.plus[0], 0.5 + c * st.flip[0], 1e-12, "plus: %.17g", st.plus[0]);
        cr_assert_float_eq(st.minus[0], 0.5 - c * st.flip[0], 1e-12, "minus: %.17g", st.minus[0]);
        fractional += st.plus[0] != floor(st.plus[0]);
        cr_assert(st.plus[1] == floor(st.plus[1]) && st.minus[1] == floor(st.minus[1]), "an int: %g", st.plus[1]);
    }
    cr_assert_eq(fractional, 200);
}

/*
 * test_eval.c - the evaluation's trace (eval_trace), which the Texel fit
 * of xqf-tune relies on: in positions from random games, the trace's
 * linear form gives the evaluation, and each parameter's coefficient is
 * what the evaluation really moves by when that parameter changes.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>

#include "eval.h"
#include "fen.h"
#include "movegen.h"

static uint64_t rng_state = 12345;

static uint32_t next_random(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

/* Up to `count` positions from random games from the start position. */
static int random_positions(Board *out, int count)
{
    int n = 0;
    while (n < count) {
        Board b;
        char err[128];
        cr_assert_eq(fen_parse(&b, START_FEN, FEN_GAME, err, sizeof err), 0);
        for (int ply = 0; ply < 120 && n < count; ply++) {
            MoveList list;
            movegen_legal(&b, &list);
            if (!list.count)
                break;
            board_make(&b, list.moves[next_random() % (unsigned)list.count]);
            if (ply >= 4 && next_random() % 4 == 0)
                out[n++] = b;
        }
    }
    return n;
}

static double linear_value(const double *coef, const Params *p)
{
    double v = 0;
    for (int i = 0; i < PARAM_TOTAL; i++)
        v += coef[i] * params_value(p, &PARAM_INFO[i]);
    return v;
}

Test(eval, trace_gives_the_evaluation)
{
    enum { N = 400 };
    static Board boards[N];
    random_positions(boards, N);
    Params p;
    params_default(&p);
    EvalTables t;
    eval_init(&t, &p);
    double coef[PARAM_TOTAL];
    for (int i = 0; i < N; i++) {
        int v = eval_trace(&boards[i], &t, coef);
        cr_assert_eq(v, evaluate(&boards[i], &t));
        double lin = linear_value(coef, &p);
        cr_assert(fabs(lin - v) < 1.0, "position %d: evaluation %d, trace %.2f", i, v, lin);
    }
}

/* Each evaluation parameter raised by 40: the evaluation moves by 40 times its coefficient. */
Test(eval, each_coefficient_is_the_parameters_effect)
{
    enum { N = 60 };
    static Board boards[N];
    random_positions(boards, N);
    Params base;
    params_default(&base);
    EvalTables t;
    eval_init(&t, &base);
    static double coef[N][PARAM_TOTAL];
    int before[N];
    for (int i = 0; i < N; i++)
        before[i] = eval_trace(&boards[i], &t, coef[i]);
    int moved = 0;
    for (int k = 0; k < PARAM_TOTAL; k++) {
        Params p = base;
        const ParamInfo *info = &PARAM_INFO[k];
        int delta = params_value(&p, info) + 40 <= info->max ? 40 : -40;
        params_store(&p, info, params_value(&p, info) + delta);
        EvalTables t2;
        eval_init(&t2, &p);
        for (int i = 0; i < N; i++) {
            double expected = before[i] + delta * coef[i][k];
            int got = evaluate(&boards[i], &t2);
            cr_assert(fabs(got - expected) < 2.0, "%s in position %d: evaluation %d, trace says %.2f",
                      info->name, i, got, expected);
            moved += got != before[i];
        }
    }
    cr_assert_gt(moved, N * 8, "the parameters moved the evaluation only %d times", moved);
}

/*
 * test_bench.c - the search's pinned signature (Stockfish's signature.sh).
 *
 * bench searches a fixed set of positions to a fixed depth; its node count
 * changes with any change of the search or the evaluation, so a change
 * that claims to keep the search must keep it, and one that changes the
 * search updates BENCH_SIGNATURE (engine/bench.h) with its "Bench: N".
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>

#include "bench.h"
#include "params.h"

/* bench's nodes at its default depth with the parameters p (NULL: the defaults). */
static uint64_t bench_nodes(const Params *p)
{
    FILE *out = fopen("/dev/null", "w");
    cr_assert_not_null(out);
    uint64_t nodes = bench_run(0, p, out);
    fclose(out);
    return nodes;
}

Test(bench, signature_is_pinned)
{
    Params p;
    params_default(&p);
    Params table;
    for (int i = 0; i < PARAM_COUNT; i++)
        params_store(&table, &PARAM_INFO[i], PARAM_INFO[i].def);
    cr_assert(params_equal(&p, &table), "a tuned build: its signature is its own");
    uint64_t nodes = bench_nodes(NULL);
    cr_expect_eq(nodes, BENCH_SIGNATURE, "bench gives %" PRIu64 " nodes; engine/bench.h pins %" PRIu64
                 ": a search change updates BENCH_SIGNATURE and says Bench: %" PRIu64,
                 nodes, (uint64_t)BENCH_SIGNATURE, nodes);
}

/* Captures that check pruned by SEE again give back the search before the change (bench 2764757). */
Test(bench, sacrifice_checks_are_a_switch)
{
    Params p;
    params_default(&p);
    p.SacrificeChecks = 0;
    uint64_t nodes = bench_nodes(&p);
    cr_expect_eq(nodes, UINT64_C(2764757), "bench with SacrificeChecks=0 gives %" PRIu64 " nodes", nodes);
    cr_expect_neq(nodes, BENCH_SIGNATURE);
}

/* The correction history switched off (and the sacrifice rule) gives back the search before it (bench 3367740). */
Test(bench, correction_history_is_a_switch)
{
    Params p;
    params_default(&p);
    p.CorrHist = 0;
    p.SacrificeChecks = 0;
    uint64_t nodes = bench_nodes(&p);
    cr_expect_eq(nodes, UINT64_C(3367740), "bench with CorrHist=0 gives %" PRIu64 " nodes", nodes);
    cr_expect_neq(nodes, BENCH_SIGNATURE);
}

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
#include <stdbool.h>
#include <stdio.h>

#include "bench.h"
#include "nnue.h"
#include "params.h"

/*
 * bench's nodes at its default depth with the parameters p (NULL: the
 * defaults), with the default evaluation (the compiled-in net, if any) or
 * the hand-crafted one.
 */
static uint64_t bench_nodes_with(const Params *p, bool hand_crafted)
{
    FILE *out = fopen("/dev/null", "w");
    cr_assert_not_null(out);
    Engine *like = engine_new();
    cr_assert_not_null(like);
    if (p)
        engine_set_params(like, p);
    if (hand_crafted)
        engine_set_use_nnue(like, false);
    uint64_t nodes = bench_run_like(0, like, out);
    engine_destroy(&like);
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
    uint64_t nodes = bench_nodes_with(NULL, false);
    cr_expect_eq(nodes, bench_signature(), "bench gives %" PRIu64 " nodes; engine/bench.h pins %" PRIu64
                 ": a search or net change updates BENCH_SIGNATURE and says Bench: %" PRIu64,
                 nodes, bench_signature(), nodes);
}

/* The hand-crafted evaluation keeps the search's own signature, net or no net. */
Test(bench, hand_crafted_signature_is_pinned)
{
    uint64_t nodes = bench_nodes_with(NULL, true);
    cr_expect_eq(nodes, BENCH_SIGNATURE_HCE, "bench UseNNUE=false gives %" PRIu64 " nodes; engine/bench.h pins %" PRIu64
                 ": a search change updates BENCH_SIGNATURE_HCE", nodes, (uint64_t)BENCH_SIGNATURE_HCE);
    size_t size;
    if (nnue_default_data(&size))
        cr_expect_neq(nodes, BENCH_SIGNATURE, "the compiled-in net changes nothing");
}

/*
 * Each landed change is a switch: turned off, with the ones after it, the
 * bench gives back the signature before it (the hand-crafted evaluation's:
 * these changes were made and pinned on it).  Newest first.  A change under
 * test, off by default, is turned on instead: its bench is pinned too.
 * The evaluation's fourth fit (bench 3935029) is no switch: the nodes below
 * are with its weights (before it: 3381558, 2764757, 3367740).  Nor is the
 * search going on past a mate it sees (the shortest mate, hand-crafted
 * bench 3284432): the nodes below are with it (before it: 3935029,
 * 2911536, 2967968).
 */
static const struct {
    const char *change, *switches;
    uint64_t nodes;
} SWITCHES[] = {
    { "correction by attacking pieces", "CorrMajorWeight=0", UINT64_C(3938974) },
    { "sacrifices that check", "CorrMajorWeight=0,SacrificeChecks=0", UINT64_C(2915478) },
    { "correction history", "CorrMajorWeight=0,SacrificeChecks=0,CorrHist=0", UINT64_C(2971428) },
};

Test(bench, each_change_is_a_switch)
{
    for (size_t i = 0; i < sizeof SWITCHES / sizeof SWITCHES[0]; i++) {
        Params p;
        params_default(&p);
        char err[256];
        cr_assert_eq(params_apply_list(&p, SWITCHES[i].switches, err, sizeof err), 0, "%s", err);
        uint64_t nodes = bench_nodes_with(&p, true);
        cr_expect_eq(nodes, SWITCHES[i].nodes, "%s (%s): bench gives %" PRIu64 " nodes", SWITCHES[i].change,
                     SWITCHES[i].switches, nodes);
        cr_expect_neq(nodes, BENCH_SIGNATURE_HCE, "%s: the switch changes nothing", SWITCHES[i].change);
    }
}

/*
 * bench with the engine's threads (the UCI bench after setoption Threads,
 * as Stockfish's bench takes a thread count): Lazy SMP's helpers search
 * too, so the nodes are not one thread's (every thread's, racing: they
 * vary); 1 thread keeps the signature.
 */
Test(bench, bench_searches_with_the_engines_threads)
{
    FILE *out = fopen("/dev/null", "w");
    cr_assert_not_null(out);
    Engine *like = engine_new();
    cr_assert_not_null(like);
    uint64_t one = bench_run_like(6, like, out);
    cr_assert_eq(engine_set_threads(like, 2), 0);
    bool differs = false;
    for (int i = 0; i < 3 && !differs; i++) {
        uint64_t two = bench_run_like(6, like, out);
        cr_assert_gt(two, 0);
        differs = two != one;
    }
    cr_assert(differs, "three benches at 2 threads gave 1 thread's %" PRIu64 " nodes: the helpers did not search", one);
    cr_assert_eq(engine_set_threads(like, 1), 0);
    cr_assert_eq(bench_run_like(6, like, out), one, "1 thread: the same tree again");
    engine_destroy(&like);
    fclose(out);
}

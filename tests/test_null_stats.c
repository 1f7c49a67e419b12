/*
 * The null move's counters (engine_null_stats), through a counting
 * search.c (xqf_engine_stats, built with XQF_SEARCH_STATS): what they
 * count is consistent, they follow the parameters, counting does not
 * change the search, and bench prints them.  The release library counts
 * nothing (engine_null_stats is NULL there: tests/test_engine.c).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "fen.h"
#include "search.h"

static const char *const FENS[] = {
    START_FEN,
    "r1bakab1r/9/1cn4cn/p1p1p1p1p/9/9/P1P1P1P1P/1CN1C1N2/9/R1BAKAB1R w - - 4 3",
    "1rbakabnr/9/nc7/p1p1C1p2/9/4P1P1p/P1P4cP/9/2C1A4/RNBAK1BNR w - - 7 9",
};

/* Searches FENS to depth 9 on a new engine with params (NULL: defaults); the counters in *s, the nodes returned. */
static uint64_t count(const Params *params, NullStats *s)
{
    Engine *e = engine_new();
    cr_assert_not_null(e);
    if (params)
        engine_set_params(e, params);
    /* the hand-crafted evaluation: the figures below are about the null
     * move's mechanics, and a few thousand nodes of a net's search may
     * happen to refute no null cut */
    engine_set_use_nnue(e, false);
    SearchLimits limits;
    search_limits_init(&limits);
    limits.depth = 9;
    uint64_t nodes = 0;
    for (size_t i = 0; i < sizeof FENS / sizeof FENS[0]; i++) {
        Board b;
        char err[128];
        cr_assert_eq(fen_parse(&b, FENS[i], FEN_GAME, err, sizeof err), 0, "%s", err);
        SearchResult r;
        engine_clear(e); /* keeps the counters */
        engine_search(e, &b, &limits, NULL, NULL, &r);
        nodes += r.nodes;
    }
    const NullStats *got = engine_null_stats(e);
    cr_assert_not_null(got, "a counting search.c returns its counters");
    *s = *got;
    engine_destroy(&e);
    return nodes;
}

static uint64_t sum(const uint64_t *row)
{
    uint64_t t = 0;
    for (int d = 0; d < NULL_STATS_DEPTHS; d++)
        t += row[d];
    return t;
}

Test(null_stats, counts_are_consistent)
{
    NullStats s;
    uint64_t nodes = count(NULL, &s);
    for (int d = 0; d < NULL_STATS_DEPTHS; d++) {
        cr_assert_leq(s.tried[d], s.nodes[d], "depth %d", d);
        cr_assert_leq(s.cut[d], s.tried[d], "depth %d", d);
        cr_assert_leq(s.kept[d], s.cut[d], "depth %d", d);
    }
    /* no null move below depth 2 (the null move's guard 2), but asked there */
    cr_assert_gt(s.nodes[1], 0);
    cr_assert_eq(s.tried[0] + s.tried[1], 0);
    cr_assert_gt(s.tried[2], 0);
    cr_assert_gt(s.cut[2], 0);
    cr_assert_lt(s.cut[2], s.tried[2], "some null searches fail");
    /* the outermost null searches' nodes are part of the search's, and of the nested rows' sums */
    cr_assert_eq(s.nesting, 0, "every null search and verification ended");
    cr_assert_gt(s.outer_failed, 0);
    cr_assert_gt(s.outer_cut, 0);
    cr_assert_lt(s.outer_failed + s.outer_cut + s.outer_verify, nodes);
    cr_assert_leq(s.outer_failed, sum(s.failed_cost));
    cr_assert_leq(s.outer_cut, sum(s.cut_cost));
    cr_assert_leq(s.outer_verify, sum(s.verify_cost));
    /* the rows nest: null searches run inside null searches */
    cr_assert_gt(sum(s.failed_cost) + sum(s.cut_cost), s.outer_failed + s.outer_cut);
    cr_assert_lt(sum(s.nodes), nodes);
}

Test(null_stats, follow_the_parameters)
{
    Params p;
    params_default(&p);
    p.NullMove = 0;
    NullStats off, small, verified;
    count(&p, &off);
    cr_assert_gt(sum(off.nodes), 0, "step 7 is still asked");
    cr_assert_eq(sum(off.tried) + sum(off.cut) + sum(off.failed_cost) + sum(off.cut_cost), 0, "NullMove=0 tries none");
    /* the depth-1 verification of small-depth null cuts at depth <= 3: its nodes are counted there only */
    params_default(&p);
    p.NullSmallVerify = 3;
    count(&p, &small);
    cr_assert_gt(small.verify_cost[2] + small.verify_cost[3], 0);
    for (int d = 4; d < NULL_STATS_DEPTHS; d++)
        cr_assert_eq(small.verify_cost[d], 0, "depth %d", d);
    /* Tabibi-Netanyahu from depth 2: verifications at every depth the pass cuts, and some cuts do not survive */
    params_default(&p);
    p.NullVerifyDepth = 2;
    p.NullSmallVerify = 0;
    count(&p, &verified);
    uint64_t lost = 0;
    for (int d = 2; d < 8; d++) {
        cr_assert_gt(verified.verify_cost[d], 0, "depth %d", d);
        lost += verified.cut[d] - verified.kept[d];
    }
    cr_assert_gt(lost, 0, "no verification refuted a null cut");
}

/* The counting search is the same search: bench 6 gives the nodes of xqf-engine (the release library's) bench 6. */
Test(null_stats, bench_prints_them_and_counting_changes_no_node)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    cr_assert_not_null(out);
    uint64_t nodes = bench_run(6, NULL, out);
    fclose(out);
    cr_assert(strstr(text, "Null move by remaining depth"), "%s", text);
    cr_assert(strstr(text, "Share of all nodes (outermost ones; the rows above nest): failed null searches "), "%s",
              text);
    free(text);
    FILE *engine = popen(XQF_BIN "/xqf-engine bench 6 2>&1", "r");
    cr_assert_not_null(engine);
    char line[256];
    unsigned long long plain = 0;
    while (fgets(line, sizeof line, engine))
        sscanf(line, "Nodes searched: %llu", &plain);
    cr_assert_eq(pclose(engine), 0);
    cr_assert_gt(plain, 1000);
    cr_assert_eq(nodes, plain, "counting changed the search: %llu nodes against xqf-engine's %llu",
                 (unsigned long long)nodes, plain);
}

/*
 * The full engine: mates found at the right depth (checked against a
 * brute-force mate search), the verified null move finding what plain null
 * move misses (Tabibi and Netanyahu's verified null-move pruning), every switch of the ablation study
 * (docs/null-move.md) really changing the search,
 * bench determinism, and engines with different parameters in one process.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "fen.h"
#include "movegen.h"
#include "search.h"

static Board position(const char *fen)
{
    Board b;
    char err[200];
    cr_assert_eq(fen_parse(&b, fen, FEN_GAME, err, sizeof err), 0, "%s: %s", fen, err);
    return b;
}

static SearchResult search_depth(Engine *e, const Board *b, int depth)
{
    SearchLimits l;
    search_limits_init(&l);
    l.depth = depth;
    SearchResult r;
    engine_search(e, b, &l, NULL, NULL, &r);
    return r;
}

/* Brute force, independent of the search: can the side to move force mate within `moves` moves? */
static bool forced_mate(Board *b, int moves)
{
    MoveList list;
    movegen_legal(b, &list);
    for (int i = 0; i < list.count; i++) {
        board_make(b, list.moves[i]);
        MoveList replies;
        movegen_legal(b, &replies);
        bool mates = replies.count == 0;
        if (!mates && moves > 1) {
            mates = true;
            for (int j = 0; j < replies.count && mates; j++) {
                board_make(b, replies.moves[j]);
                mates = forced_mate(b, moves - 1);
                board_unmake(b);
            }
        }
        board_unmake(b);
        if (mates)
            return true;
    }
    return false;
}

static const struct {
    const char *fen;
    int moves; /* mate in this many moves of the side to move */
} MATES[] = {
    { "3k5/9/9/9/9/9/9/9/R8/4K4 w - - 0 1", 1 },             /* rook check, flying general covers e9 */
    { "9/9/N2k5/1P7/9/9/9/9/7p1/4K4 w - - 0 1", 3 },
    { "4rk3/9/9/9/P8/9/9/3K5/9/9 b - - 0 1", 3 },
    { "7P1/9/3k5/2rn5/9/2p6/9/9/9/3K5 b - - 0 1", 3 },
};

Test(engine, finds_mates_at_the_right_depth)
{
    Engine *e = engine_new();
    for (size_t i = 0; i < sizeof MATES / sizeof MATES[0]; i++) {
        Board b = position(MATES[i].fen);
        int plies = 2 * MATES[i].moves - 1;
        engine_clear(e);
        /*
         * Pruning and reductions may hide a mate at its own depth: seven
         * plies deeper a mate is found, at most two moves longer than the
         * shortest, and never shorter.  (Four plies were enough with the
         * hand-set evaluation; with the fitted one, whose scores are
         * larger, late-move pruning hides the quiet king move of the
         * fourth position's mate in 3 until depth 11, and until depth 12
         * since the fourth fit, whose material is larger still.)
         */
        SearchResult r = search_depth(e, &b, plies + 7);
        cr_assert_geq(r.score, MATE_BOUND, "%s: score %d, expected a mate in %d", MATES[i].fen, r.score,
                      MATES[i].moves);
        int found = (MATE - r.score + 1) / 2;
        cr_assert(found >= MATES[i].moves && found <= MATES[i].moves + 2, "%s: mate in %d, shortest %d",
                  MATES[i].fen, found, MATES[i].moves);
        /* The brute force agrees: a mate in N exists and none is shorter. */
        cr_assert(forced_mate(&b, MATES[i].moves), "%s", MATES[i].fen);
        if (MATES[i].moves > 1)
            cr_assert_not(forced_mate(&b, MATES[i].moves - 1), "%s", MATES[i].fen);
        /* The move played starts the mate announced (checked by brute force up to a mate in 3). */
        if (found > 3)
            continue;
        board_make(&b, r.best);
        MoveList replies;
        movegen_legal(&b, &replies);
        if (found == 1)
            cr_assert_eq(replies.count, 0);
        for (int j = 0; j < replies.count; j++) {
            board_make(&b, replies.moves[j]);
            cr_assert(forced_mate(&b, found - 1), "%s: reply leaves no mate", MATES[i].fen);
            board_unmake(&b);
        }
    }
    engine_destroy(&e);
}

/* Verified null-move pruning (Tabibi and Netanyahu, ICGA Journal 25(3), 2002): plain null move prunes a line the verified null move searches, and the mate is missed. */
Test(engine, verified_null_move_finds_what_plain_null_move_misses)
{
    Board b = position("4rk3/9/9/9/P8/9/9/3K5/9/9 b - - 0 1");
    Engine *verified = engine_new(), *plain = engine_new();
    Params p;
    params_default(&p);
    cr_assert_eq(p.NullVerify, 1);
    p.NullVerifyDepth = 2; /* verification at every depth, with R = 2-3, as the seed describes it */
    p.NullAdaptive = 1;
    p.Rfp = 0; /* reverse futility would hide this mate at depth 5 whatever the null move does */
    engine_set_params(verified, &p);
    p.NullVerify = 0;
    p.NullSmallVerify = 0;
    engine_set_params(plain, &p);
    /* the hand-crafted evaluation, on which this position was chosen: which
     * lines a plain null move hides at depth 5 depends on the scores */
    engine_set_use_nnue(verified, false);
    engine_set_use_nnue(plain, false);
    SearchResult rv = search_depth(verified, &b, 5);
    SearchResult rp = search_depth(plain, &b, 5);
    cr_assert_geq(rv.score, MATE_BOUND, "verified null move should see the mate, got %d", rv.score);
    cr_assert_lt(rp.score, MATE_BOUND, "plain null move was expected to miss it at depth 5, got %d", rp.score);
    engine_destroy(&verified);
    engine_destroy(&plain);
}

/*
 * Verification where zugzwang can be: the null moves that hide this mate
 * are Red's, and Red has no rook, horse or cannon, so even with
 * NullVerifyPieces 0 (verify only a side that has none) they are still
 * verified and the mate is found; the plain null move above misses it.
 */
Test(engine, verification_is_kept_where_few_pieces_are_left)
{
    Board b = position("4rk3/9/9/9/P8/9/9/3K5/9/9 b - - 0 1");
    Params p;
    params_default(&p);
    p.NullVerifyDepth = 2;
    p.NullAdaptive = 1;
    p.Rfp = 0;
    p.NullVerifyPieces = 0;
    Engine *e = engine_new();
    engine_set_params(e, &p);
    engine_set_use_nnue(e, false); /* as above: the position was chosen on this evaluation */
    int score = search_depth(e, &b, 5).score;
    engine_destroy(&e);
    cr_assert_geq(score, MATE_BOUND, "verification of a side without attacking pieces should see the mate, got %d",
                  score);
}

/* Nodes to depth 10 from the start with one parameter set (and optionally a second). */
static uint64_t nodes_with2(const char *name, int value, const char *name2, int value2)
{
    Engine *e = engine_new();
    Params p;
    params_default(&p);
    p.NullVerifyDepth = 2; /* so that verification happens in this short search */
    params_store(&p, params_find(name), value);
    if (name2)
        params_store(&p, params_find(name2), value2);
    engine_set_params(e, &p);
    Board b;
    board_startpos(&b);
    SearchResult r = search_depth(e, &b, 10);
    engine_destroy(&e);
    return r.nodes;
}

static uint64_t nodes_with(const char *name, int value)
{
    return nodes_with2(name, value, NULL, 0);
}

/* Each switch the ablation study turns off must really reach the search. */
Test(engine, every_seed_switch_changes_the_search)
{
    const char *switches[] = { "NullMove", "NullAdaptive", "NullVerify", "HistoryPruning", "Futility",
                               "DeltaPruning", "Razoring", "CheckExtension", "QsSeePruning", "Lmr", "Rfp",
                               "Lmp", "SeePruning", "ProbCut", "Singular", "Iir", "IID" };
    for (size_t i = 0; i < sizeof switches / sizeof switches[0]; i++) {
        int def = params_find(switches[i])->def;
        cr_assert_neq(nodes_with(switches[i], def), nodes_with(switches[i], !def),
                      "%s has no effect on the search", switches[i]);
    }
    cr_assert_neq(nodes_with("QsCheckPlies", 0), nodes_with("QsCheckPlies", 1));
    /* The null move's verification choices: at the start each side has six attacking pieces. */
    cr_assert_neq(nodes_with("NullVerifyAtR", 0), nodes_with("NullVerifyAtR", 1));
    cr_assert_neq(nodes_with("NullVerifyPieces", 6), nodes_with("NullVerifyPieces", 5));
    cr_assert_neq(nodes_with("NullDoublePieces", 6), nodes_with("NullDoublePieces", 5));
    cr_assert_neq(nodes_with("HistoryThreshold", 9830), nodes_with("HistoryThreshold", 7373));
    /* The null move with the eval below beta, from a depth this search reaches. */
    cr_assert_neq(nodes_with2("NullLowEvalDepth", 4, "NullLowEvalMargin", 0),
                  nodes_with2("NullLowEvalDepth", 4, "NullLowEvalMargin", 100));
    /* The threat a failed pass shows: escapes reduced less, then also ordered higher. */
    cr_assert_neq(nodes_with("NullThreat", 0), nodes_with("NullThreat", 1));
    cr_assert_neq(nodes_with("NullThreat", 1), nodes_with2("NullThreat", 1, "NullThreatOrder", 16384));
    /* The null move only at nodes expected to fail high. */
    cr_assert_neq(nodes_with("NullCutOnly", 0), nodes_with("NullCutOnly", 1));
}

/*
 * The search's switches that are off by default (each a Stockfish/Pikafish
 * technique waiting for its SPRT, docs/programs/xqf-engine.md): turned on,
 * one must change the bench tree (so it is wired), and the search must
 * still play a legal move in a middlegame and find each mate of MATES
 * within seven plies more than its length, as with the defaults.
 */
static uint64_t bench_with(const char *name, int value)
{
    Params p;
    params_default(&p);
    if (name) {
        const ParamInfo *info = params_find(name);
        cr_assert_not_null(info, "no parameter %s", name);
        cr_assert(value >= info->min && value <= info->max, "%s=%d is out of range", name, value);
        params_store(&p, info, value);
    }
    FILE *null = fopen("/dev/null", "w");
    cr_assert_not_null(null);
    uint64_t n = bench_run(9, &p, null);
    fclose(null);
    return n;
}

static void switch_on_still_searches(const char *name, int value)
{
    static uint64_t off;
    if (!off)
        off = bench_with(NULL, 0);
    cr_assert_eq(params_find(name)->def, 0, "%s must be off by default", name);
    uint64_t on = bench_with(name, value);
    cr_assert_neq(on, off, "%s=%d leaves the bench tree as it is (%llu nodes): not wired", name, value,
                  (unsigned long long)on);

    Params p;
    params_default(&p);
    params_store(&p, params_find(name), value);
    Engine *e = engine_new();
    engine_set_params(e, &p);
    Board b = position("1rbak4/c4n2r/2na5/2N6/p1b3P1p/3C4P/P1P1P2C1/N7B/4A3R/R1BA1K3 w - - 5 31");
    SearchResult r = search_depth(e, &b, 8);
    cr_assert(r.best != MOVE_NONE && movegen_is_legal(&b, r.best), "%s=%d: no legal move in a middlegame", name, value);
    for (size_t i = 0; i < sizeof MATES / sizeof MATES[0]; i++) {
        b = position(MATES[i].fen);
        engine_clear(e);
        r = search_depth(e, &b, 2 * MATES[i].moves - 1 + 7);
        cr_assert_geq(r.score, MATE_BOUND, "%s=%d: %s: score %d, expected a mate in %d", name, value, MATES[i].fen,
                      r.score, MATES[i].moves);
        cr_assert(movegen_is_legal(&b, r.best), "%s=%d: %s: the move is not legal", name, value, MATES[i].fen);
        int found = (MATE - r.score + 1) / 2;
        cr_assert(found >= MATES[i].moves && found <= MATES[i].moves + 2, "%s=%d: %s: mate in %d, shortest %d", name,
                  value, MATES[i].fen, found, MATES[i].moves);
    }
    engine_destroy(&e);
}

/* Late-move reductions: at the root, more at expected cut nodes, good captures too. */
Test(engine, lmr_switches_are_wired_and_still_find_mates)
{
    switch_on_still_searches("LmrRoot", 1);
    switch_on_still_searches("LmrCutNode", 100);
    switch_on_still_searches("LmrCaptures", 1);
}

/* Singular extensions: doubled far below the singular beta, negative when not singular. */
Test(engine, singular_switches_are_wired_and_still_find_mates)
{
    switch_on_still_searches("SingularDouble", 20);
    switch_on_still_searches("SingularNegative", 1);
}

/* Checks: extended only from a depth (Pikafish: 9), quiet checks losing material pruned at low depth. */
Test(engine, check_switches_are_wired_and_still_find_mates)
{
    switch_on_still_searches("CheckExtDepth", 9);
    switch_on_still_searches("PruneLosingChecks", 6);
}

/* Continuation-history pruning, capture futility, continuation history four and six plies back. */
Test(engine, history_and_futility_switches_are_wired_and_still_find_mates)
{
    switch_on_still_searches("ContHistPrune", 2000);
    switch_on_still_searches("CaptureFutility", 300);
    switch_on_still_searches("ContHist46", 1);
}

/* Quiescence: a limit on quiet evasions, late non-recaptures skipped deep in it. */
Test(engine, quiescence_switches_are_wired_and_still_find_mates)
{
    switch_on_still_searches("QsEvasionLimit", 2);
    switch_on_still_searches("QsLateCaptures", 2);
}

/*
 * TmComplexity (time, so not in the bench tree): the optimum follows the
 * game's length, less than the fixed share in the opening and more in the
 * middle game, the maximum (a multiple of it) stays the cap and within
 * TmMaxShare of the clock, a movestogo given by the GUI
 * keeps its own share, the net's complexity changes the plan again, and a
 * timed search still plays a legal move.
 */
Test(engine, tm_complexity_scales_the_optimum_by_the_game_and_the_position)
{
    Params p;
    params_default(&p);
    cr_assert_eq(p.TmComplexity, 0);
    Engine *off = engine_new(), *on = engine_new();
    p.TmComplexity = 1;
    engine_set_params(on, &p);
    engine_set_use_nnue(off, false);
    engine_set_use_nnue(on, false); /* first the game's length alone */
    SearchLimits l;
    search_limits_init(&l);
    l.time[RED] = l.time[BLACK] = 600000;
    Board opening = position(START_FEN);
    Board middle = position("1rbak4/c4n2r/2na5/2N6/p1b3P1p/3C4P/P1P1P2C1/N7B/4A3R/R1BA1K3 w - - 5 31");
    int64_t opt_off, max_off, opt_on, max_on;
    engine_plan_time(off, &opening, &l, &opt_off, &max_off);
    engine_plan_time(on, &opening, &l, &opt_on, &max_on);
    cr_assert_gt(opt_off, 0);
    cr_assert_lt(opt_on, opt_off * 3 / 4, "opening: %lld ms, without TmComplexity %lld", (long long)opt_on,
                 (long long)opt_off);
    cr_assert(opt_on <= max_on && max_on <= max_off, "the maximum (%lld ms) still caps the optimum", (long long)max_on);
    engine_plan_time(off, &middle, &l, &opt_off, &max_off);
    engine_plan_time(on, &middle, &l, &opt_on, &max_on);
    cr_assert_gt(opt_on, opt_off, "move 31: %lld ms, without TmComplexity %lld", (long long)opt_on, (long long)opt_off);
    cr_assert_leq(opt_on, max_on);
    cr_assert_leq(max_on, (600000 - l.overhead) * p.TmMaxShare / 1000, "never more than TmMaxShare of the clock");
    l.movestogo = 10;
    engine_plan_time(off, &opening, &l, &opt_off, &max_off);
    engine_plan_time(on, &opening, &l, &opt_on, &max_on);
    cr_assert_eq(opt_on, opt_off, "movestogo given: the game's length does not count");
    l.movestogo = 0;
    if (engine_net(on)) {
        int64_t plain;
        engine_plan_time(on, &middle, &l, &plain, &max_on);
        engine_set_use_nnue(on, true);
        engine_plan_time(on, &middle, &l, &opt_on, &max_on);
        cr_assert_neq(opt_on, plain, "the net's complexity does not change the plan");
    }
    engine_set_use_nnue(on, true);
    l.time[RED] = l.time[BLACK] = 1500;
    SearchResult r;
    engine_search(on, &middle, &l, NULL, NULL, &r);
    cr_assert(r.best != MOVE_NONE && movegen_is_legal(&middle, r.best));
    engine_destroy(&off);
    engine_destroy(&on);
}

/* The release library counts nothing (a counting build: cmake -DXQF_SEARCH_STATS=ON, tests/test_null_stats.c). */
Test(engine, the_release_search_keeps_no_counters)
{
#ifdef XQF_SEARCH_STATS
    cr_skip("n/a: this tree is configured with -DXQF_SEARCH_STATS=ON: its engine counts");
#endif
    Engine *e = engine_new();
    cr_assert_not_null(e);
    cr_assert_null(engine_null_stats(e));
    engine_destroy(&e);
}

Test(engine, bench_is_deterministic)
{
    FILE *null = fopen("/dev/null", "w");
    uint64_t a = bench_run(5, NULL, null), b = bench_run(5, NULL, null);
    fclose(null);
    cr_assert_gt(a, 1000);
    cr_assert_eq(a, b);
}

/* Two engines with different parameters, searching in turns, give what each gives alone. */
Test(engine, engines_with_different_params_do_not_interfere)
{
    Board b = position("r1bakab1r/9/1cn4cn/p1p1p1p1p/9/9/P1P1P1P1P/1CN1C1N2/9/R1BAKAB1R w - - 4 3");
    Params strong, weak;
    params_default(&strong);
    params_default(&weak);
    weak.NullMove = 0;
    weak.RookMg = 500;
    SearchResult alone[2];
    for (int k = 0; k < 2; k++) {
        Engine *e = engine_new();
        engine_set_params(e, k ? &weak : &strong);
        alone[k] = search_depth(e, &b, 6);
        engine_destroy(&e);
    }
    Engine *e1 = engine_new(), *e2 = engine_new();
    engine_set_params(e1, &strong);
    engine_set_params(e2, &weak);
    SearchResult r1 = search_depth(e1, &b, 6);
    SearchResult r2 = search_depth(e2, &b, 6);
    cr_assert_eq(r1.nodes, alone[0].nodes);
    cr_assert_eq(r1.best, alone[0].best);
    cr_assert_eq(r2.nodes, alone[1].nodes);
    cr_assert_eq(r2.best, alone[1].best);
    cr_assert_neq(r1.nodes, r2.nodes);
    engine_destroy(&e1);
    engine_destroy(&e2);
}

/*
 * The shortest mate, reported exactly: a search that sees a mate goes on
 * until its limits end it, so the mate it reports is the shortest a deeper
 * iteration proves, not the first one it saw (a mate in 3 was reported as
 * a mate in 6 when the search stopped at the first iteration whose depth
 * covered the mate it had).  Positions made for this test by a random
 * generator of sparse endgames (Red to move and mate in 2 to 5), each
 * distance checked here by brute force: a mate in N exists and none in
 * N - 1.  Each is searched with the net and with the hand-crafted
 * evaluation, to a fixed depth and for a second, from a cleared engine;
 * the score must be the mate in exactly N and the move its first move (a
 * move after which every reply still leaves a mate in N - 1).
 */
static const struct {
    const char *fen;
    int moves;
} SHORTEST[] = {
    { "3k5/R8/3a1a3/1P7/1R7/9/9/4K4/9/9 w - - 0 1", 2 },
    { "4H4/4k4/b8/9/6C2/7R1/9/9/3K5/9 w - - 0 1", 3 },
    { "4P1b2/5C2R/2Pak4/9/6b2/2B6/9/3AB4/5K3/3A5 w - - 0 1", 3 },
    { "8H/9/5k2b/9/5Hb2/9/9/9/5K1p1/9 w - - 0 1", 4 },
    { "4k1b2/9/7P1/9/6r2/9/9/9/3K5/6R2 w - - 0 1", 5 },
};

/* Every reply to `first` leaves a mate in moves - 1 (moves 1: there is no reply). */
static bool starts_mate(Board *b, Move first, int moves)
{
    board_make(b, first);
    MoveList replies;
    movegen_legal(b, &replies);
    bool ok = moves == 1 ? replies.count == 0 : replies.count > 0;
    for (int j = 0; j < replies.count && ok && moves > 1; j++) {
        board_make(b, replies.moves[j]);
        ok = forced_mate(b, moves - 1);
        board_unmake(b);
    }
    board_unmake(b);
    return ok;
}

Test(engine, reports_the_shortest_mate, .timeout = 240)
{
    Engine *e = engine_new();
    for (size_t i = 0; i < sizeof SHORTEST / sizeof SHORTEST[0]; i++) {
        Board b = position(SHORTEST[i].fen);
        int n = SHORTEST[i].moves;
        cr_assert(forced_mate(&b, n), "%s: no mate in %d", SHORTEST[i].fen, n);
        cr_assert_not(forced_mate(&b, n - 1), "%s: a mate in %d", SHORTEST[i].fen, n - 1);
        for (int net = 0; net < 2; net++) {
            engine_set_use_nnue(e, net == 1);
            for (int timed = 0; timed < 2; timed++) {
                SearchLimits l;
                search_limits_init(&l);
                if (timed)
                    l.movetime = 1000;
                else
                    l.depth = 2 * n - 1 + 12;
                engine_clear(e);
                SearchResult r;
                engine_search(e, &b, &l, NULL, NULL, &r);
                const char *how = timed ? "1 s" : "fixed depth";
                cr_assert_geq(r.score, MATE_BOUND, "%s (%s, %s): score %d, not a mate", SHORTEST[i].fen,
                              net ? "net" : "hand-crafted", how, r.score);
                cr_assert_eq((MATE - r.score + 1) / 2, n, "%s (%s, %s): mate in %d reported, the shortest is %d",
                             SHORTEST[i].fen, net ? "net" : "hand-crafted", how, (MATE - r.score + 1) / 2, n);
                cr_assert(starts_mate(&b, r.best, n), "%s (%s, %s): the move played does not start a mate in %d",
                          SHORTEST[i].fen, net ? "net" : "hand-crafted", how, n);
            }
        }
    }
    engine_destroy(&e);
}

/* UCI's go mate N: the search stops once it sees a mate in at most N moves, with no other limit. */
Test(engine, go_mate_stops_at_a_mate_within_its_moves, .timeout = 60)
{
    Engine *e = engine_new();
    Board b = position(SHORTEST[2].fen);
    SearchLimits l;
    search_limits_init(&l);
    l.mate = 3;
    SearchResult r;
    engine_search(e, &b, &l, NULL, NULL, &r);
    cr_assert_geq(r.score, MATE_BOUND);
    cr_assert_leq((MATE - r.score + 1) / 2, 3);
    cr_assert(starts_mate(&b, r.best, (MATE - r.score + 1) / 2));
    cr_assert_lt(r.depth, 50, "it searched to depth %d instead of stopping at the mate", r.depth);
    engine_destroy(&e);
}

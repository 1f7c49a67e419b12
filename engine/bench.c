#include "bench.h"

#include <inttypes.h>
#include <time.h>

#include "fen.h"

static const char *const BENCH_FENS[] = {
    START_FEN,
    "r1bakab1r/9/1cn4cn/p1p1p1p1p/9/9/P1P1P1P1P/1CN1C1N2/9/R1BAKAB1R w - - 4 3",
    "rnbakabnr/9/6cc1/p1p1p1p1p/9/6P2/P1P1P3P/NC5C1/4A4/R1BAK1BNR w - - 6 4",
    "rnbaka1nr/2c6/7cb/p1p1p3p/6p2/P7P/1CP1P1P2/2N1BC2N/9/R2AKAB1R w - - 16 9",
    "r1bakabn1/1r7/nc1c5/p1p1p1p1p/9/9/P1P1P1P1P/NC1C4B/9/R1BAKA1NR w - - 10 6",
    "r1b1kabn1/4a3r/2nc5/p3p3p/2p2Cp2/9/P1P1P1P1P/2C3N2/4A1R2/RNBAK1B2 w - - 1 9",
    "1rbakabnr/9/nc7/p1p1C1p2/9/4P1P1p/P1P4cP/9/2C1A4/RNBAK1BNR w - - 7 9",
    "1nbakabnr/r1c6/1c7/p3p1p1p/2p6/8P/P1P1P1P2/1C1AB2C1/8R/RNBAK2N1 w - - 10 6",
    "1rbak4/c4n2r/2na5/2N6/p1b3P1p/3C4P/P1P1P2C1/N7B/4A3R/R1BA1K3 w - - 5 31",
    "1nb1ka1n1/9/1r1a2crb/2p1p1p2/9/p1B1P3p/P1C2R3/N2CN4/4A4/R2AK1B2 w - - 6 31",
    "cn3a3/4k1r2/b2a1n3/p1P5p/2C1p4/2P6/P3p4/4BN2B/2r1AN1R1/R3KA3 w - - 19 51",
    "1Rb1kab2/r3a4/4n4/n3p3p/2p3P2/p1P1P3P/3c5/3A1A2B/rR7/2B2KN2 w - - 19 51",
    "3k5/9/4b4/9/9/9/9/4B4/4A4/3AKR3 w - - 0 1",
    "4k4/4a4/4ba3/9/2p3p2/9/2P3P2/4B4/4A4/3AK4 b - - 0 1",
};

int bench_position_count(void)
{
    return (int)(sizeof BENCH_FENS / sizeof BENCH_FENS[0]);
}

const char *bench_position(int i)
{
    return i >= 0 && i < bench_position_count() ? BENCH_FENS[i] : NULL;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The null move's counters of a stats build (cmake -DXQF_SEARCH_STATS=ON), by remaining depth. */
static void print_null_stats(const NullStats *s, uint64_t total, FILE *out)
{
    fprintf(out, "\nNull move by remaining depth (the last row: this depth and deeper); "
                 "cost: nodes of the null searches that failed, cut, and of verifications\n");
    fprintf(out, "depth      asked      tried   cut%%  kept%%  failed-cost    cut-cost  verify-cost\n");
    for (int d = 0; d < NULL_STATS_DEPTHS; d++) {
        if (!s->nodes[d])
            continue;
        fprintf(out, "%5d %10" PRIu64 " %10" PRIu64 " %6.1f %5.1f %12" PRIu64 " %11" PRIu64 " %12" PRIu64 "\n", d,
                s->nodes[d], s->tried[d], s->tried[d] ? 100.0 * (double)s->cut[d] / (double)s->tried[d] : 0.0,
                s->tried[d] ? 100.0 * (double)s->kept[d] / (double)s->tried[d] : 0.0, s->failed_cost[d],
                s->cut_cost[d], s->verify_cost[d]);
    }
    double all = total ? (double)total : 1.0;
    fprintf(out, "Share of all nodes (outermost ones; the rows above nest): failed null searches %.1f %%, "
                 "cutting ones %.1f %%, verifications %.1f %%\n",
            100.0 * (double)s->outer_failed / all, 100.0 * (double)s->outer_cut / all,
            100.0 * (double)s->outer_verify / all);
}

/* Searches every position with e, then destroys it. */
static uint64_t run(int depth, Engine *e, FILE *out)
{
    SearchLimits limits;
    search_limits_init(&limits);
    limits.depth = depth > 0 ? depth : BENCH_DEPTH;
    uint64_t total = 0;
    int64_t start = now_ms();
    size_t n = sizeof BENCH_FENS / sizeof BENCH_FENS[0];
    for (size_t i = 0; i < n; i++) {
        Board b;
        char err[128];
        if (fen_parse(&b, BENCH_FENS[i], FEN_GAME, err, sizeof err) != 0) {
            fprintf(out, "bench position %zu: %s\n", i + 1, err);
            continue;
        }
        SearchResult r;
        engine_clear(e);
        engine_search(e, &b, &limits, NULL, NULL, &r);
        char move[8] = "none";
        if (r.best)
            move_text(r.best, move);
        fprintf(out, "Position %2zu/%zu: bestmove %s nodes %" PRIu64 "\n", i + 1, n, move, r.nodes);
        total += r.nodes;
    }
    int64_t ms = now_ms() - start;
    fprintf(out, "\nNodes searched: %" PRIu64 "\n", total);
    fprintf(out, "Total time (ms): %" PRId64 "\n", ms);
    fprintf(out, "Nodes/second: %" PRIu64 "\n", total * 1000 / (uint64_t)(ms > 0 ? ms : 1));
    if (engine_net(e) && engine_use_nnue(e))
        fprintf(out, "Evaluation: net (%s arithmetic)\n", nnue_simd_name(engine_net(e)->simd));
    else
        fprintf(out, "Evaluation: hand-crafted\n");
    if (engine_null_stats(e))
        print_null_stats(engine_null_stats(e), total, out);
    fflush(out);
    engine_destroy(&e);
    return total;
}

uint64_t bench_signature(void)
{
    size_t size;
    return nnue_default_data(&size) ? BENCH_SIGNATURE : BENCH_SIGNATURE_HCE;
}

uint64_t bench_run(int depth, const Params *params, FILE *out)
{
    Engine *e = engine_new();
    if (!e)
        return 0;
    if (params)
        engine_set_params(e, params);
    return run(depth, e, out);
}

uint64_t bench_run_like(int depth, const Engine *like, FILE *out)
{
    Engine *e = engine_new();
    if (!e)
        return 0;
    engine_set_params(e, engine_params(like));
    engine_set_use_nnue(e, engine_use_nnue(like));
    if (engine_set_net(e, engine_net(like)) != 0 || engine_set_threads(e, engine_threads(like)) != 0) {
        engine_destroy(&e);
        return 0;
    }
    return run(depth, e, out);
}

/*
 * Gauntlets and another engine's nets (docs/programs/xqf-tune.md,
 * "Gauntlets"), against a real PostgreSQL (XQF_TEST_DB; skipped without
 * it).  A gauntlet of an engine's ref against two of its other refs is one
 * games run per opponent, each waiting for the builder; results are
 * written into the runs as reports would leave them, and gauntlet show's
 * table is compared with what show's statistics (run_elo_text) give for
 * each opponent and for the total.  Opponents of other engines are the
 * base engines of their runs.  Bad input (no opponent, an unknown engine,
 * another engine's without a ref, one given twice, a taken name, a net
 * for an engine that needs one left out, an unknown base engine) ends
 * with status 2 and no run.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cluster_util.h"
#include "store_builds.h"
#include "store_engines.h"
#include "store_runs.h"

TestSuite(gauntlet, .init = cu_fixture_init, .fini = cu_fixture_fini, .timeout = 120);

static int tune(char *out, size_t size, const char *args)
{
    int st = cu_tune(out, size, args, cu_fx.logfile);
    cr_assert_geq(st, -1, "cannot run xqf-tune");
    return st;
}

/* The runs in the database (no books). */
static int run_count(void)
{
    StoreRun *runs = NULL;
    int n = store_list_runs(cu_fx.store, 1000, &runs);
    free(runs);
    cr_assert_geq(n, 0);
    return n;
}

/* Writes c into run id as its reports would have (the counts show reads). */
static void set_counts(int64_t id, const StoreCounts *c)
{
    char cmd[1024], out[256];
    snprintf(cmd, sizeof cmd,
             "psql -X -q '%s' -c \"UPDATE runs SET pairs = %" PRId64 ", wins = %" PRId64 ", draws = %" PRId64
             ", losses = %" PRId64 ", ll = %" PRId64 ", ld = %" PRId64 ", dd = %" PRId64 ", wd = %" PRId64
             ", ww = %" PRId64 " WHERE id = %" PRId64 "\"",
             cu_fx.db, c->pairs, c->wins, c->draws, c->losses, c->penta[0], c->penta[1], c->penta[2], c->penta[3],
             c->penta[4], id);
    cr_assert_eq(cu_sh(out, sizeof out, cmd, cu_fx.logfile), 0, "psql failed (log: %s)", cu_fx.logfile);
}

/* The engines of these tests: refs are built by the builder later, so no repository needs to exist here. */
static void add_engines(void)
{
    char out[4096];
    cr_assert_eq(tune(out, sizeof out, "engine add toy --repo /nonexistent/toy.git"), 0, "log: %s", cu_fx.logfile);
    cr_assert_eq(tune(out, sizeof out, "engine add pika --repo /nonexistent/pika.git --net-option EvalFile "
                                       "--needs-net yes"), 0, "log: %s", cu_fx.logfile);
    cr_assert_eq(tune(out, sizeof out, "engine add nonet --repo /nonexistent/nonet.git --net-option ''"), 0,
                 "log: %s", cu_fx.logfile);
}

Test(gauntlet, made_of_games_runs_and_shown_as_one_table)
{
    CU_REQUIRE_DB();
    add_engines();
    char out[8192], line[512];
    cr_assert_eq(tune(out, sizeof out, "gauntlet new --engine toy --ref main --opponent toy@v1 --opponent toy@v2 "
                                       "--pairs 10 --nodes 300 --name nightly"), 0, "log: %s", cu_fx.logfile);
    int64_t ids[2];
    cr_assert_eq(sscanf(out, "Gauntlet: nightly\n%" SCNd64 " toy@v1\n%" SCNd64 " toy@v2\n", &ids[0], &ids[1]), 2,
                 "%s", out);
    /* each a games run of the side against one opponent, waiting for the builds of both refs */
    for (int i = 0; i < 2; i++) {
        StoreRun r;
        cr_assert_eq(store_load_run(cu_fx.store, ids[i], &r, false), 1);
        cr_assert_str_eq(r.kind, "games");
        cr_assert_str_eq(r.engine, "toy");
        cr_assert_str_eq(r.state, "building");
        cr_assert_eq(r.max_pairs, 10);
        snprintf(line, sizeof line, "nightly vs toy@v%d", i + 1);
        cr_assert_str_eq(r.name, line);
    }
    StoreCounts c[2] = { { .pairs = 10, .wins = 9, .draws = 6, .losses = 5, .penta = { 0, 2, 5, 2, 1 } },
                         { .pairs = 6, .wins = 2, .draws = 4, .losses = 6, .penta = { 1, 2, 2, 1, 0 } } };
    StoreCounts total = { .pairs = 16, .wins = 11, .draws = 10, .losses = 11, .penta = { 1, 4, 7, 3, 1 } };
    for (int i = 0; i < 2; i++)
        set_counts(ids[i], &c[i]);
    /* by name and by any of its runs' ids, the same table */
    char by_id[64];
    snprintf(by_id, sizeof by_id, "gauntlet show %" PRId64, ids[1]);
    const char *asks[2] = { "gauntlet show nightly", by_id };
    for (int a = 0; a < 2; a++) {
        cr_assert_eq(tune(out, sizeof out, asks[a]), 0, "log: %s", cu_fx.logfile);
        cr_assert(strstr(out, "Gauntlet: nightly\n"), "%s", out);
        for (int i = 0; i < 3; i++) {
            const StoreCounts *k = i < 2 ? &c[i] : &total;
            char elo[48], opp[24], run[24];
            run_elo_text(k, elo, sizeof elo);
            cr_assert_neq(strcmp(elo, "-"), 0);
            snprintf(opp, sizeof opp, i < 2 ? "toy@v%d" : "total", i + 1);
            snprintf(run, sizeof run, i < 2 ? "%" PRId64 : "", i < 2 ? ids[i] : 0);
            snprintf(line, sizeof line, "%-24s %-6s %-9s %8" PRId64 " %" PRId64 "/%" PRId64 "/%" PRId64, opp, run,
                     i < 2 ? "building" : "", k->pairs, k->wins, k->draws, k->losses);
            const char *row = strstr(out, line);
            cr_assert(row, "no row '%s' in:\n%s", line, out);
            const char *end = strchr(row, '\n');
            char penta[96];
            snprintf(penta, sizeof penta, "[%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "]",
                     k->penta[0], k->penta[1], k->penta[2], k->penta[3], k->penta[4]);
            const char *p = strstr(row, penta), *e = strstr(row, elo);
            cr_assert(p && p < end && e && e < end, "row '%.*s' lacks %s or %s", (int)(end - row), row, penta, elo);
        }
    }
    /* a second gauntlet of the name would merge into the first's table: refused */
    int before = run_count();
    cr_assert_eq(tune(out, sizeof out, "gauntlet new --engine toy --ref main --opponent toy@v3 --pairs 10 --nodes 300 "
                                       "--name nightly"), 2);
    cr_assert_eq(tune(out, sizeof out, "gauntlet show nosuch"), 2);
    snprintf(line, sizeof line, "sprt new --base '' --test NullR=2 --nodes 300");
    cr_assert_eq(tune(out, sizeof out, line), 0, "log: %s", cu_fx.logfile);
    snprintf(line, sizeof line, "gauntlet show %lld", atoll(out));
    cr_assert_eq(tune(out, sizeof out, line), 2, "an SPRT is no gauntlet's run");
    cr_assert_eq(run_count(), before + 1);
}

/* Our engine: a set against the workers' engine at its defaults, no builds. */
Test(gauntlet, of_our_engine_plays_the_workers_engine)
{
    CU_REQUIRE_DB();
    char out[4096];
    cr_assert_eq(tune(out, sizeof out, "gauntlet new --set NullR=2 --opponent xqf --pairs 4 --tc 1+0.01"), 0,
                 "log: %s", cu_fx.logfile);
    int64_t id;
    cr_assert_eq(sscanf(out, "Gauntlet: gauntlet xqf NullR=2\n%" SCNd64 " xqf\n", &id), 1, "%s", out);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, id, &r, false), 1);
    cr_assert_str_eq(r.state, "active");
    cr_assert_str_eq(r.engine, "xqf");
    cr_assert_eq(r.base_ms, 1000);
}

/* Opponents of other engines: each run's base side is of the opponent's engine, built by its record. */
Test(gauntlet, opponents_of_other_engines_are_their_runs_base_engines)
{
    CU_REQUIRE_DB();
    add_engines();
    char out[8192];
    cr_assert_eq(tune(out, sizeof out, "gauntlet new --engine toy --ref main --opponent nonet@v2 --opponent xqf "
                                       "--opponent toy@v1 --pairs 4 --nodes 300 --name mixed"), 0, "%s (log: %s)",
                 out, cu_fx.logfile);
    int64_t ids[3];
    cr_assert_eq(sscanf(out, "Gauntlet: mixed\n%" SCNd64 " nonet@v2\n%" SCNd64 " xqf\n%" SCNd64 " toy@v1\n", &ids[0],
                        &ids[1], &ids[2]), 3, "%s", out);
    const char *base[3] = { "nonet", "xqf", "toy" };
    for (int i = 0; i < 3; i++) {
        StoreRun r;
        cr_assert_eq(store_load_run(cu_fx.store, ids[i], &r, false), 1);
        cr_assert_str_eq(r.engine, "toy");
        cr_assert_str_eq(r.base_engine, base[i]);
        /* its games' PGN names each side by its engine when they are two, by its role when one */
        const char *first, *second;
        run_pgn_players(&r, &first, &second);
        cr_assert_str_eq(first, i == 2 ? "test" : "toy");
        cr_assert_str_eq(second, i == 2 ? "base" : base[i]);
        /* the builder is asked for the base ref of another engine as for any ref: it reads the side's engine */
        StoreBuildRequest *q = NULL;
        int n = store_build_requests(cu_fx.store, ids[i], &q);
        cr_assert_eq(n, i == 1 ? 1 : 2, "run %" PRId64, ids[i]);
        free(q);
        char name[64] = "";
        cr_assert_eq(store_run_engine(cu_fx.store, ids[i], "base", name, sizeof name), 1);
        cr_assert_str_eq(name, base[i]);
        cr_assert_eq(store_run_engine(cu_fx.store, ids[i], "test", name, sizeof name), 1);
        cr_assert_str_eq(name, "toy");
        char args[64];
        snprintf(args, sizeof args, "show %" PRId64, ids[i]);
        cr_assert_eq(tune(out, sizeof out, args), 0, "log: %s", cu_fx.logfile);
        cr_assert(strstr(out, "Engine: toy"), "%s", out);
        cr_assert(!strstr(out, "Base engine: ") == (i == 2), "%s", out);
        if (i < 2)
            cr_assert(strstr(out, i ? "Base engine: xqf" : "Base engine: nonet"), "%s", out);
    }
}

Test(gauntlet, bad_input_records_nothing)
{
    CU_REQUIRE_DB();
    add_engines();
    char out[4096];
    const char *cases[] = {
        "gauntlet new --engine toy --ref main --pairs 4 --nodes 300",                          /* no opponent */
        "gauntlet new --engine toy --ref main --opponent nosuch@v1 --pairs 4 --nodes 300",     /* unknown */
        "gauntlet new --engine nosuch --ref main --opponent nosuch@v1 --pairs 4 --nodes 300",
        "gauntlet new --engine toy --ref main --opponent pika@v1 --pairs 4 --nodes 300",       /* pika needs a net */
        "gauntlet new --engine toy --ref main --opponent nonet --pairs 4 --nodes 300",         /* another's, no ref */
        "gauntlet new --engine toy --ref main --opponent toy@v1 --opponent toy@v1 --pairs 4 --nodes 300",
        "gauntlet new --engine toy --ref main --opponent toy --pairs 4 --nodes 300",           /* no ref */
        "gauntlet new --engine toy --ref main --opponent toy@main --pairs 4 --nodes 300",      /* itself */
        "gauntlet new --engine toy --ref main --opponent toy@v1 --nodes 300",                  /* no pairs */
        "gauntlet new --engine toy --ref main --opponent toy@v1 --pairs 4",                    /* no clock */
        "gauntlet new --engine toy --set NullR=2 --opponent toy@v1 --pairs 4 --nodes 300",     /* our set */
        "gauntlet new --engine toy --ref main --opponent toy@v1 --opponent toy@v2 --pairs 4 --nodes 300 "
        "--name 'a vs b'",
        /* a net engine without its nets, one side's only, and an engine that takes none */
        "gauntlet new --engine pika --ref main --opponent pika@v1 --opponent pika@v2 --pairs 4 --nodes 300",
        "gauntlet new --engine nonet --ref main --opponent nonet@v1 --pairs 4 --nodes 300 --test-net none",
        "games new --engine pika --test-ref main --base-ref v1 --pairs 4 --nodes 300",
        "sprt new --engine pika --test-ref main --base-ref v1 --nodes 300",
        /* a base engine unknown, or not ours and without a ref or build */
        "games new --engine toy --test-ref main --base-engine nosuch --base-ref v1 --pairs 4 --nodes 300",
        "games new --engine toy --test-ref main --base-engine nonet --pairs 4 --nodes 300",
        "sprt new --test '' --base-engine nonet --base '' --nodes 300",
        "gauntlet new --set NullR=2 --opponent xqf --pairs 4 --nodes 300 --test-net nosuchnet",
        "gauntlet frobnicate",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cr_assert_eq(tune(out, sizeof out, cases[i]), 2, "%s (log: %s)", cases[i], cu_fx.logfile);
        cr_assert_eq(run_count(), 0, "%s made a run", cases[i]);
    }
}

/*
 * Nets for another engine's runs: with a net registered, a run of an
 * engine whose record has a net option is made with each side's net (the
 * worker sends it as the record's option: test_match's players tests).
 */
Test(gauntlet, another_engines_run_takes_nets)
{
    CU_REQUIRE_DB();
    add_engines();
    char out[4096], path[512], why[256], args[1024];
    snprintf(path, sizeof path, "%s/pika.nnue", cu_fx.dir);
    cr_assert_eq(cu_random_net(path, 7, why, sizeof why), 0, "%s", why);
    snprintf(args, sizeof args, "net add '%s' --name pika-net", path);
    cr_assert_eq(tune(out, sizeof out, args), 0, "log: %s", cu_fx.logfile);
    cr_assert_eq(tune(out, sizeof out, "gauntlet new --engine pika --ref main --opponent pika@v1 --pairs 4 "
                                       "--nodes 300 --test-net pika-net --base-net pika-net"), 0,
                 "log: %s", cu_fx.logfile);
    int64_t id;
    cr_assert_eq(sscanf(out, "Gauntlet: gauntlet pika@main\n%" SCNd64 " pika@v1\n", &id), 1, "%s", out);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, id, &r, false), 1);
    cr_assert_str_eq(r.net_name0, "pika-net");
    cr_assert_str_eq(r.net_name1, "pika-net");
    cr_assert_str_eq(r.engine, "pika");
}

/*
 * Tests of another engine's branches, end to end (docs/programs/xqf-tune.md,
 * "Tests of any engine"), against a real PostgreSQL (XQF_TEST_DB; skipped
 * without it).  An engine's git repository is made on the fly: a Makefile
 * that takes EXE= and makes the engine from a copy of xqf-engine with a
 * tag appended (the same engine, another binary for each tag), benched by
 * a command that prints Stockfish's "Nodes searched  : N" lines.  It is
 * registered with xqf-tune engine add; two of its commits (with Bench: N
 * lines) are built by its record in the sandbox, signed and tested against
 * each other with an SPRT on a local cluster, whose worker plays them as
 * the record says (the binaries the builder made from each commit, fetched
 * by their SHA-256).  A second record builds the same repository's CMake
 * target (a games run of its commits, its binary taken from the build
 * folder).  Bad input: an unknown engine, a ref whose build fails (the
 * log's tail shown; through the builder, the run failed with it), a bench
 * that is not the commit's Bench: line; nothing recorded.  A bench that
 * prints its summary on stderr (Stockfish's family) is read there; an
 * engine without one is benched by searching the bench positions to its
 * record's depth, the nodes it reports summed.  A branch of an engine
 * registered by a URL, moved after its test was approved, is refused.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster_util.h"
#include "pages.h"
#include "run_service.h"
#include "store_lists.h"
#include "store_builds.h"
#include "store_runs.h"
#include "store_steer.h"

TestSuite(engine_runs, .init = cu_fixture_init, .fini = cu_fixture_fini_rmdir, .timeout = 240);

static char errbuf[1 << 16];

/* Runs a shell command in the test's folder: stdout in out, stderr in errbuf (both kept in the log). Exit status. */
static int sh(char *out, size_t size, const char *cmd)
{
    char full[12288], errfile[512];
    snprintf(errfile, sizeof errfile, "%s/stderr", cu_fx.dir);
    snprintf(full, sizeof full, "cd '%s' && { %s ; } 2>'%s'", cu_fx.dir, cmd, errfile);
    FILE *p = popen(full, "r");
    cr_assert(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    FILE *e = fopen(errfile, "r");
    n = e ? fread(errbuf, 1, sizeof errbuf - 1, e) : 0;
    errbuf[n] = '\0';
    if (e)
        fclose(e);
    FILE *l = fopen(cu_fx.logfile, "a");
    if (l) {
        fprintf(l, "$ %s\n%s%s", cmd, out, errbuf);
        fclose(l);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* xqf-tune with args (a shell fragment). */
static int tune(char *out, size_t size, const char *args)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s/xqf-tune' %s", XQF_BIN, args);
    return sh(out, size, cmd);
}

/* The number after prefix in text, or -1. */
static int64_t number(const char *text, const char *prefix)
{
    const char *p = strstr(text, prefix);
    int64_t v;
    return p && sscanf(p + strlen(prefix), "%" SCNd64, &v) == 1 ? v : -1;
}

/* The run id xqf-tune printed: the line that is only a number (0: none). */
static int64_t run_id(const char *out)
{
    int64_t run = 0;
    for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strspn(p, "0123456789") == strcspn(p, "\n") && sscanf(p, "%" SCNd64, &run) == 1)
            return run;
    return 0;
}

static char repo[512];

/* A commit of the toy engine's repository: its tag file and Makefile's recipe, the message; its hash into hash. */
static void commit(const char *tag, const char *recipe, const char *message, char hash[41])
{
    char cmd[4096], out[256];
    snprintf(cmd, sizeof cmd,
             "printf '%%s\\n' '%s' > '%s/tag' && printf 'EXE = toy\\n$(EXE): engine.bin tag\\n\\t%s\\n' > '%s/Makefile' "
             "&& git -C '%s' add -A && git -C '%s' -c user.name=t -c user.email=t@t commit -q -m '%s' && "
             "git -C '%s' rev-parse HEAD",
             tag, repo, recipe, repo, repo, repo, message, repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s: %s", cmd, errbuf);
    snprintf(hash, 41, "%.40s", out);
}

/* How many builds and runs the database holds. */
static void totals(int64_t *builds, int64_t *runs)
{
    StoreBuild b;
    *builds = 0;
    while (store_load_build(cu_fx.store, *builds + 1, &b) == 1)
        ++*builds;
    StoreRun *r;
    int n = store_list_runs(cu_fx.store, 1000, &r);
    cr_assert_geq(n, 0);
    free(r);
    *runs = n;
}

#define GOOD_RECIPE "cat engine.bin tag > $(EXE) && chmod +x $(EXE)"

Test(engine_runs, an_sprt_of_two_commits_of_another_engine)
{
    CU_REQUIRE_DB();
    char out[65536], cmd[4096], args[4096], key[512], pub[600], cache[512];
    snprintf(repo, sizeof repo, "%s/toy", cu_fx.dir);
    snprintf(key, sizeof key, "%s/operator.key", cu_fx.dir);
    snprintf(pub, sizeof pub, "%s.pub", key);
    snprintf(cache, sizeof cache, "%s/cache", cu_fx.dir);

    /* the engine's repository: xqf-engine's bytes behind a Makefile with EXE= */
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && git -C '%s' init -q", repo, repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    snprintf(cmd, sizeof cmd, "%s/engine.bin", repo);
    cr_assert_eq(cu_engine_copy(cmd, 0), 0);
    snprintf(cmd, sizeof cmd, "'%s/engine.bin' bench 5", repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    int64_t bench = number(out, "Nodes searched: ");
    cr_assert_gt(bench, 0, "%s", out);
    /* the same engine built by a CMake target too (another record): its binary with a line more */
    snprintf(cmd, sizeof cmd, "%s/CMakeLists.txt", repo);
    FILE *f = fopen(cmd, "w");
    cr_assert(f);
    fputs("cmake_minimum_required(VERSION 3.16)\nproject(toy NONE)\n"
          "add_custom_command(OUTPUT toy COMMAND sh ${CMAKE_SOURCE_DIR}/mk.sh ${CMAKE_SOURCE_DIR} toy "
          "DEPENDS engine.bin tag mk.sh)\nadd_custom_target(toy-engine ALL DEPENDS toy)\n", f);
    cr_assert_eq(fclose(f), 0);
    snprintf(cmd, sizeof cmd, "%s/mk.sh", repo);
    cr_assert(f = fopen(cmd, "w"));
    fputs("cat \"$1/engine.bin\" \"$1/tag\" > \"$2\" && echo cmake >> \"$2\" && chmod +x \"$2\"\n", f);
    cr_assert_eq(fclose(f), 0);
    char a[41], b_[41], broken[41], wrong[41], message[256];
    snprintf(message, sizeof message, "A: the base\n\nBench: %" PRId64, bench);
    commit("1", GOOD_RECIPE, message, a);
    snprintf(message, sizeof message, "B: another tag\n\nBench: %" PRId64, bench);
    commit("2", GOOD_RECIPE, message, b_);

    /* registered: its bench prints Stockfish's lines, a command after the handshake */
    snprintf(args, sizeof args,
             "engine add toy --repo '%s' --bench '<binary> bench 5 | sed \"s/: /  : /\"' "
             "--init 'setoption name Hash value 8'", repo);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    snprintf(cmd, sizeof cmd, "'%s/xqf-keys' sign-new '%s' >/dev/null", XQF_BIN, key);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);

    /* the SPRT of B against A: both built by the record, benched, checked, signed */
    snprintf(args, sizeof args,
             "sprt new --engine toy --test-ref %s --base-ref %s --nodes 1000 --pairs-per-task 2 --max-pairs 4 "
             "--elo0 -500 --elo1 500 --sign-key '%s'", b_, a, key);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    snprintf(message, sizeof message, "Bench: %" PRId64 "\n", bench);
    cr_assert(strstr(out, message), "the bench read from the Stockfish-style lines:\n%s", out);
    int64_t run = run_id(out);
    cr_assert_gt(run, 0, "%s", out);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.engine, "toy");
    /* each side is the binary its commit makes: xqf-engine's bytes and its tag */
    const char *sides[2] = { b_, a }, *tags[2] = { "2", "1" };
    char sha[2][80];
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "{ cat '%s/engine.bin'; echo %s; } | sha256sum | cut -c1-64", repo, tags[i]);
        cr_assert_eq(sh(sha[i], sizeof sha[i], cmd), 0);
        sha[i][strcspn(sha[i], "\n")] = '\0';
        cr_assert_str_eq(i ? r.build1 : r.build0, sha[i], "side %d plays its commit's binary", i);
        int64_t id = 0;
        cr_assert_eq(store_run_builds(cu_fx.store, run, i ? &(int64_t){ 0 } : &id, i ? &id : &(int64_t){ 0 }), 1);
        StoreBuild sb;
        cr_assert_eq(store_load_build(cu_fx.store, id, &sb), 1);
        snprintf(message, sizeof message, "toy-%.12s", sides[i]);
        cr_assert_str_eq(sb.build_id, message);
        cr_assert_eq(sb.bench_nodes, bench);
        cr_assert(sb.signature[0], "signed with --sign-key");
    }
    store_run_free(&r);
    snprintf(args, sizeof args, "show %" PRId64, run);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", errbuf);
    cr_assert(strstr(out, "Engine: toy"), "%s", out);

    /* played on the cluster: the worker fetches both builds and plays them as the record says */
    setenv("XQF_CACHE", cache, 1);
    cu_track(cu_coordinator(cu_fx.db_coordinator, cu_fx.port, "30", cu_fx.logfile));
    const char *extra[] = { "--trust", pub, NULL };
    cu_track(cu_worker_args(cu_fx.port, "w1", 2, cu_fx.logfile, extra));
    cr_assert(cu_wait_finished(cu_fx.store, run, 150, &r), "run %" PRId64 " did not finish (log: %s)", run,
              cu_fx.logfile);
    unsetenv("XQF_CACHE");
    cr_assert_str_eq(r.verdict, "max pairs");
    cr_assert_eq(r.counts.pairs, 4);
    store_run_free(&r);
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "%s/%s", cache, sha[i]);
        cr_assert_eq(access(cmd, X_OK), 0, "%s not fetched", cmd);
    }

    /* bad input: status 2, the problem named, nothing recorded */
    int64_t builds0, runs0, builds1, runs1;
    totals(&builds0, &runs0);
    snprintf(args, sizeof args, "sprt new --engine nope --test-ref %s --base-ref %s --nodes 1000", b_, a);
    cr_assert_eq(tune(out, sizeof out, args), 2, "%s", out);
    cr_assert(strstr(errbuf, "--engine: no engine named 'nope'"), "%s", errbuf);
    snprintf(args, sizeof args, "sprt new --engine toy --test '' --base '' --nodes 1000");
    cr_assert_eq(tune(out, sizeof out, args), 2, "%s", out);
    cr_assert(strstr(errbuf, "--engine: engine toy plays its builds"), "%s", errbuf);
    snprintf(args, sizeof args, "sprt new --engine toy --test-ref %s --base-ref %s --repo . --nodes 1000", b_, a);
    cr_assert_eq(tune(out, sizeof out, args), 2, "%s", out);
    snprintf(message, sizeof message, "B: a wrong bench line\n\nBench: %" PRId64, bench + 1);
    commit("3", GOOD_RECIPE, message, wrong);
    snprintf(args, sizeof args, "sprt new --engine toy --test-ref %s --base-ref %s --nodes 1000", wrong, a);
    cr_assert_eq(tune(out, sizeof out, args), 2, "%s", out);
    snprintf(message, sizeof message, "the bench signature is %" PRId64 " but commit %.12s says Bench: %" PRId64,
             bench, wrong, bench + 1);
    cr_assert(strstr(errbuf, message), "both numbers: %s", errbuf);
    commit("4", "echo the toy engine does not build here >&2; exit 1", "C: a broken Makefile", broken);
    snprintf(args, sizeof args, "sprt new --engine toy --test-ref %s --base-ref %s --nodes 1000", broken, a);
    cr_assert_eq(tune(out, sizeof out, args), 2, "%s", out);
    cr_assert(strstr(errbuf, "the end of the build log") && strstr(errbuf, "the toy engine does not build here") &&
                  strstr(errbuf, "does not build: nothing recorded"), "%s", errbuf);
    /* its binary a link to a file outside the box (another engine's build, engine_compile): refused, not copied */
    char linked[41];
    commit("5", "ln -sf /bin/true $(EXE)", "D: a link as the binary", linked);
    snprintf(args, sizeof args, "sprt new --engine toy --test-ref %s --base-ref %s --nodes 1000", linked, a);
    cr_assert_eq(tune(out, sizeof out, args), 2, "%s", out);
    cr_assert(strstr(errbuf, "the build's binary is refused") && strstr(errbuf, "a symbolic link on its path"), "%s",
              errbuf);
    totals(&builds1, &runs1);
    cr_assert_eq(builds1, builds0);
    cr_assert_eq(runs1, runs0);

    /* through the builder (a test made as the web makes it): the run ends failed with the log's tail */
    RunSpec sp = run_spec_default(RUN_KIND_SPRT);
    sp.engine = "toy", sp.test_ref = broken, sp.base_ref = a, sp.nodes = 1000, sp.book = XQF_DEFAULT_BOOK;
    RunProblem problem;
    cr_assert_eq(run_create(cu_fx.store, &sp, &run, &problem), RUN_OK, "%s: %s", problem.field, problem.why);
    snprintf(args, sizeof args, "build --serve --db '%s' --out built", cu_fx.db_builder);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.state, "failed");
    cr_assert_str_eq(r.engine, "toy");
    store_run_free(&r);
    StoreBuildRequest *q = NULL;
    int n = store_build_requests(cu_fx.store, run, &q);
    cr_assert_geq(n, 1);
    cr_assert(strstr(q[0].error, "the end of the build log") && strstr(q[0].error, "the toy engine does not build here"),
              "%s", q[0].error);
    free(q);
    /* an unknown engine is the run service's problem too, nothing written */
    sp.engine = "nope";
    totals(&builds0, &runs0);
    cr_assert_eq(run_create(cu_fx.store, &sp, &run, &problem), RUN_BAD);
    cr_assert_str_eq(problem.field, "engine");
    totals(&builds1, &runs1);
    cr_assert_eq(runs1, runs0);

    /* --tc-scale's reference: the record's speed (here the same builds again: registered once) */
    cr_assert_eq(tune(out, sizeof out, "engine modify toy --ref-nps 123456"), 0, "%s", errbuf);
    snprintf(args, sizeof args, "games new --engine toy --test-ref %s --base-ref %s --tc 10+0.1 --tc-scale --pairs 2",
             b_, a);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    cr_assert_gt(run = run_id(out), 0, "%s", out);
    int64_t ref_nps = 0;
    cr_assert_eq(store_run_ref_nps(cu_fx.store, run, &ref_nps), 1);
    cr_assert_eq(ref_nps, 123456);
    totals(&builds1, &runs1);
    cr_assert_eq(builds1, builds0, "the same binaries are the same builds");
    /* build --ref of another engine: the same build again */
    snprintf(args, sizeof args, "build --ref %s --engine toy --out built", a);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    snprintf(message, sizeof message, "%s/built/toy-%.12s", cu_fx.dir, a);
    cr_assert(strstr(out, message) && strstr(out, sha[1]), "%s", out);
    cr_assert_eq(tune(out, sizeof out, "build --serve --engine toy"), 2, "%s", out);
    /* a bench that prints its summary on stderr, as Stockfish's family does: read there too */
    snprintf(args, sizeof args, "engine add toyerr --repo '%s' --bench '<binary> bench 5 | sed \"s/: /  : /\" >&2'",
             repo);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    snprintf(args, sizeof args, "build --ref %s --engine toyerr --out built", a);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    snprintf(message, sizeof message, "Bench: %" PRId64 "\n", bench);
    cr_assert(strstr(out, message), "the bench read from stderr:\n%s", out);
    /* an engine without a bench command (ElephantEye's case): the bench positions searched to its depth */
    snprintf(args, sizeof args, "engine add toyd --repo '%s' --bench none --bench-depth 3", repo);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    char c[41];
    commit("3", GOOD_RECIPE, "C: no Bench line", c);
    int64_t depth_bench[2];
    for (int i = 0; i < 2; i++) {
        /* built and benched each time (another engine's tree): the same search, the same nodes */
        snprintf(args, sizeof args, "build --ref %s --engine toyd --out built", c);
        cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
        depth_bench[i] = number(out, "Bench: ");
        cr_assert_gt(depth_bench[i], 0, "%s", out);
        cr_assert_gt(number(out, "Speed: "), 0, "%s", out);
    }
    cr_assert_eq(depth_bench[0], depth_bench[1], "the same search, the same nodes at a fixed depth");
    /* checked against a commit's Bench: line as any bench (A's is xqf-engine's bench 5, not this) */
    snprintf(args, sizeof args, "build --ref %s --engine toyd --out built", a);
    cr_assert_eq(tune(out, sizeof out, args), 2, "%s\n%s", out, errbuf);
    snprintf(message, sizeof message, "the bench signature is %" PRId64 " but commit", depth_bench[0]);
    cr_assert(strstr(errbuf, message), "%s", errbuf);

    /* a record that builds a CMake target: configured and built in the sandbox, its binary in the build folder */
    snprintf(args, sizeof args,
             "engine add toyc --repo '%s' --cmake-target toy-engine --binary toy "
             "--bench '<binary> bench 5 | sed \"s/: /  : /\"'", repo);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    snprintf(args, sizeof args, "games new --engine toyc --test-ref %s --base-ref %s --nodes 1000 --pairs 2", b_, a);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    cr_assert_gt(run = run_id(out), 0, "%s", out);
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.engine, "toyc");
    snprintf(cmd, sizeof cmd, "{ cat '%s/engine.bin'; echo 2; echo cmake; } | sha256sum | cut -c1-64", repo);
    cr_assert_eq(sh(sha[0], sizeof sha[0], cmd), 0);
    sha[0][strcspn(sha[0], "\n")] = '\0';
    cr_assert_str_eq(r.build0, sha[0], "the test side plays the CMake target's binary");
    store_run_free(&r);
    snprintf(message, sizeof message, "Build: ");
    cr_assert(strstr(out, message), "%s", out);
}

/*
 * A run of two engines: the same repository registered twice, as toy and
 * as eleeye with other commands after the handshake.  The builder builds
 * each side's ref by its side's record, the signer starts the run, and the
 * task the coordinator hands out carries each player's own settings.
 */
Test(engine_runs, a_run_of_two_engines_builds_and_speaks_to_each_side_by_its_record)
{
    CU_REQUIRE_DB();
    char out[65536], cmd[4096], args[4096], key[512], message[256], a[41], b_[41];
    snprintf(repo, sizeof repo, "%s/toy", cu_fx.dir);
    snprintf(key, sizeof key, "%s/operator.key", cu_fx.dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && git -C '%s' init -q", repo, repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    snprintf(cmd, sizeof cmd, "%s/engine.bin", repo);
    cr_assert_eq(cu_engine_copy(cmd, 0), 0);
    snprintf(cmd, sizeof cmd, "'%s/engine.bin' bench 5", repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    int64_t bench = number(out, "Nodes searched: ");
    cr_assert_gt(bench, 0, "%s", out);
    snprintf(message, sizeof message, "A: the base\n\nBench: %" PRId64, bench);
    commit("1", GOOD_RECIPE, message, a);
    snprintf(message, sizeof message, "B: another tag\n\nBench: %" PRId64, bench);
    commit("2", GOOD_RECIPE, message, b_);
    const char *names[2] = { "toy", "eleeye" }, *inits[2] = { "setoption name Hash value 8", "isready" };
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args, "engine add %s --repo '%s' --bench '<binary> bench 5 | sed \"s/: /  : /\"' "
                                    "--init '%s'%s", names[i], repo, inits[i], i ? " --hash-option ''" : "");
        cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    }
    snprintf(cmd, sizeof cmd, "'%s/xqf-keys' sign-new '%s' >/dev/null", XQF_BIN, key);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);

    /* as the web makes it: the builder builds each ref by its side's record, the signer starts the run */
    RunSpec sp = run_spec_default(RUN_KIND_GAMES);
    sp.engine = "toy", sp.base_engine = "eleeye", sp.test_ref = b_, sp.base_ref = a, sp.nodes = 1000;
    sp.max_pairs = 2, sp.book = XQF_DEFAULT_BOOK;
    RunProblem problem;
    int64_t run = 0;
    cr_assert_eq(run_create(cu_fx.store, &sp, &run, &problem), RUN_OK, "%s: %s", problem.field, problem.why);
    snprintf(args, sizeof args, "build --serve --db '%s' --out built", cu_fx.db_builder);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    snprintf(args, sizeof args, "build --sign-serve --db '%s' --sign-key '%s'", cu_fx.db_signer, key);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.state, "active", "%s", r.verdict);
    cr_assert_str_eq(r.engine, "toy");
    cr_assert_str_eq(r.base_engine, "eleeye");
    store_run_free(&r);
    int64_t ids[2] = { 0, 0 };
    cr_assert_eq(store_run_builds(cu_fx.store, run, &ids[0], &ids[1]), 1);
    const char *refs[2] = { b_, a };
    for (int i = 0; i < 2; i++) {
        StoreBuild sb;
        cr_assert_eq(store_load_build(cu_fx.store, ids[i], &sb), 1);
        snprintf(message, sizeof message, "%s-%.12s", names[i], refs[i]);
        cr_assert_str_eq(sb.build_id, message, "side %d built by its engine's record", i);
    }
    snprintf(args, sizeof args, "show %" PRId64, run);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", errbuf);
    cr_assert(strstr(out, "Engine: toy") && strstr(out, "Base engine: eleeye"), "%s", out);

    /* the task: each player's engine and its commands after the handshake */
    cu_track(cu_coordinator(cu_fx.db_coordinator, cu_fx.port, "30", cu_fx.logfile));
    CuClient c;
    XqfMsg m;
    char why[512];
    cr_assert_eq(cu_client_first_task(&c, cu_fx.port, "sides-probe", 20, &m, why, sizeof why), 0, "%s (log: %s)", why,
                 cu_fx.logfile);
    const XqfMsg_task *t = &m.u.task;
    cr_assert_eq((int64_t)t->run_id, run);
    cr_assert_str_eq(t->engine, "toy");
    cr_assert_str_eq(t->engine1, "eleeye");
    cr_assert(t->init.count == 1 && strcmp(t->init.v[0], inits[0]) == 0);
    cr_assert(t->init1.count == 1 && strcmp(t->init1.v[0], inits[1]) == 0);
    cr_assert_str_eq(t->hash_option, "Hash");
    cr_assert_str_eq(t->hash_option1, "");
    cr_assert_str_eq(t->proto, "uci");
    cr_assert_str_eq(t->proto1, "uci");
    xqf_msg_free(&m);
    cu_client_close(&c);
}

/*
 * An engine registered by a URL is read from the builder's mirror of it,
 * fetched at each read: a branch force-pushed in the engine's repository
 * after a test of it was approved moves the mirror's ref too, and the
 * builder refuses it as it refuses a moved branch of ours (nothing built,
 * the test failed naming both commits).
 */
Test(engine_runs, a_mirrored_branch_moved_after_the_approval_is_refused)
{
    CU_REQUIRE_DB();
    char out[65536], cmd[4096], args[4096], a[41], approved[41], moved[41], expect[512];
    snprintf(repo, sizeof repo, "%s/toy", cu_fx.dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && git -C '%s' init -q", repo, repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    snprintf(cmd, sizeof cmd, "%s/engine.bin", repo);
    cr_assert_eq(cu_engine_copy(cmd, 0), 0);
    commit("1", GOOD_RECIPE, "A: the base", a);
    snprintf(cmd, sizeof cmd, "git -C '%s' checkout -q -b topic", repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    commit("2", GOOD_RECIPE, "B: harmless", approved);
    snprintf(args, sizeof args, "engine add toyurl --repo 'file://%s' --bench '<binary> bench 5 | sed \"s/: /  : /\"'",
             repo);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);

    /* a tester's test of the branch: the builder mirrors the repository and pins the commits */
    RunSpec sp = run_spec_default(RUN_KIND_SPRT);
    sp.engine = "toyurl", sp.test_ref = "topic", sp.base_ref = a, sp.nodes = 1000, sp.book = XQF_DEFAULT_BOOK;
    sp.owner = "tess", sp.pending = true;
    RunProblem problem;
    int64_t run = 0;
    cr_assert_eq(run_create(cu_fx.store, &sp, &run, &problem), RUN_OK, "%s: %s", problem.field, problem.why);
    snprintf(args, sizeof args, "build --serve --db '%s' --out built", cu_fx.db_builder);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    snprintf(expect, sizeof expect, "the test ref topic is commit %s; the run is pending", approved);
    cr_assert(strstr(out, expect), "%s\n%s", out, errbuf);
    cr_assert_eq(store_approve_run(cu_fx.store, run, approved, a), 1);

    /* the engine's branch force-pushed: the mirror's fetch moves it, the builder refuses it */
    snprintf(cmd, sizeof cmd, "git -C '%s' -c user.name=t -c user.email=t@t commit -q --amend -m 'B: harmful' && "
                              "git -C '%s' rev-parse topic", repo, repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    snprintf(moved, sizeof moved, "%.40s", out);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    snprintf(expect, sizeof expect, "the test ref topic moved: approved at %s, now %s: refused; the run is failed",
             approved, moved);
    cr_assert(strstr(out, expect), "%s\n%s", out, errbuf);
    cr_assert(!strstr(errbuf, "in a sandbox"), "nothing built: %s", errbuf);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.state, "failed");
    snprintf(expect, sizeof expect, "test ref moved: %.12s approved, now %.12s", approved, moved);
    cr_assert_str_eq(r.verdict, expect);
    store_run_free(&r);
}

/*
 * A run's adjudication (run_settings.def's ADJUDICATION group), as a front
 * end gives it to the run service, reaches the worker in each task of the
 * run: every rule in its field of the task (the store's column, then the
 * scheduler's copy), none left at its default.
 */
Test(engine_runs, a_runs_adjudication_reaches_its_task)
{
    CU_REQUIRE_DB();
    RunSpec sp = run_spec_default(RUN_KIND_GAMES);
    sp.test_params = "NullR=2", sp.nodes = 1000, sp.max_pairs = 2, sp.book = XQF_DEFAULT_BOOK;
    sp.adjudication = (StoreAdjudication){ .resign_moves = 3, .resign_score = 700, .draw_after = 30,
                                           .draw_moves = 6, .draw_score = 5, .max_plies = 300 };
    RunProblem problem;
    int64_t run = 0;
    cr_assert_eq(run_create(cu_fx.store, &sp, &run, &problem), RUN_OK, "%s: %s", problem.field, problem.why);
    cu_track(cu_coordinator(cu_fx.db_coordinator, cu_fx.port, "30", cu_fx.logfile));
    CuClient c;
    XqfMsg m;
    char why[512];
    cr_assert_eq(cu_client_first_task(&c, cu_fx.port, "adjudication-probe", 20, &m, why, sizeof why), 0,
                 "%s (log: %s)", why, cu_fx.logfile);
    const XqfMsg_task *t = &m.u.task;
    cr_assert_eq((int64_t)t->run_id, run);
    cr_assert_eq(t->resign_moves, 3);
    cr_assert_eq(t->resign_score, 700);
    cr_assert_eq(t->draw_after, 30);
    cr_assert_eq(t->draw_moves, 6);
    cr_assert_eq(t->draw_score, 5);
    cr_assert_eq(t->max_plies, 300);
    xqf_msg_free(&m);
    cu_client_close(&c);
}

/* ---- what a test changes: its name, its commits and diff (064_run_changes.sql) ---- */

/* Run run's page as the dashboard's role reads it (xqf_web: the grants of 064), for a visitor not signed in. */
static char *run_page(int64_t run)
{
    Store *web = store_new(cu_fx.db_web);
    cr_assert(web && store_connect(web) == 0, "xqf-web's role cannot connect");
    static const Session nobody = { 0 };
    Buf b = { 0 };
    cr_assert_eq(page_run(web, run, &nobody, NULL, &b), 200, "%s", b.data ? b.data : "");
    store_destroy(&web);
    char *html = buf_take(&b, NULL);
    cr_assert(html);
    return html;
}

/* A commit of everything in the toy's repository with message (its hash into hash). */
static void commit_all(const char *message, char hash[41])
{
    char cmd[4096], out[256];
    snprintf(cmd, sizeof cmd, "git -C '%s' add -A && git -C '%s' -c user.name='Tess & Co' -c user.email=t@t commit -q "
                              "-m '%s' && git -C '%s' rev-parse HEAD", repo, repo, message, repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s: %s", cmd, errbuf);
    snprintf(hash, 41, "%.40s", out);
}

/*
 * A test of two branches of an engine's repository, made as the web makes
 * it (the run service, refs to build): named by its refs, then, once the
 * builder has read them, by its test commit's subject too; the commits
 * between main and the branch (author, date, subject) and the diff
 * recorded and shown by xqf-tune show (the diff with --diff) and on the
 * run's page, a hostile subject and diff line escaped there.  A branch
 * whose diff passes the cap, tested by sprt new --test-ref, is cut at a
 * line and said to be; a run of two sets is named by the values it
 * changes, which its page lists beside their defaults.
 */
Test(engine_runs, a_test_of_refs_is_named_and_shows_its_commits_and_diff)
{
    CU_REQUIRE_DB();
    char out[1 << 16], cmd[4096], args[4096], a[41], b_[41], c[41], big[41];
    snprintf(repo, sizeof repo, "%s/toy", cu_fx.dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && git -C '%s' init -q", repo, repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    snprintf(cmd, sizeof cmd, "%s/engine.bin", repo);
    cr_assert_eq(cu_engine_copy(cmd, 0), 0);
    commit("1", GOOD_RECIPE, "A: the base", a);
    snprintf(cmd, sizeof cmd, "git -C '%s' branch -M main && git -C '%s' checkout -q -b no-null && "
                              "printf 'a note\\n<script>alert(\"diff\")</script>\\n' > '%s/notes.txt'", repo, repo, repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    commit_all("B: <script>alert(1)</script> a hostile subject", b_);
    snprintf(cmd, sizeof cmd, "printf '2\\n' > '%s/tag'", repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    commit_all("Switch off the null move", c);
    snprintf(args, sizeof args, "engine add toy --repo '%s' --bench '<binary> bench 5 | sed \"s/: /  : /\"'", repo);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);

    /* made on the web: named by its refs until the builder reads the test commit's subject */
    RunSpec sp = run_spec_default(RUN_KIND_SPRT);
    sp.engine = "toy", sp.test_ref = "no-null", sp.base_ref = "main", sp.nodes = 5000, sp.book = XQF_DEFAULT_BOOK;
    RunProblem problem;
    int64_t run = 0;
    cr_assert_eq(run_create(cu_fx.store, &sp, &run, &problem), RUN_OK, "%s: %s", problem.field, problem.why);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.name, "no-null vs main");
    store_run_free(&r);
    snprintf(args, sizeof args, "build --serve --db '%s' --out built", cu_fx.db_builder);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.name, "no-null vs main: Switch off the null move", "%s", out);
    cr_assert_str_eq(r.state, "building", "built, waiting for the signer: %s", out);
    store_run_free(&r);
    /* the events log: the run's creation, then each side's build, the builder's, of the build */
    char run_text[24], limit[] = "10";
    snprintf(run_text, sizeof run_text, "%" PRId64, run);
    const char *params[5] = { NULL, NULL, run_text, limit, "true" };
    StoreTable *t = store_list(cu_fx.store, STORE_LIST_EVENTS, params);
    cr_assert_not_null(t);
    int builds = 0, creates = 0;
    for (int i = 0; i < store_table_rows(t); i++) {
        const char *of = store_table_cell(t, i, store_table_column(t, "Of")),
                   *action = store_table_cell(t, i, store_table_column(t, "Action")),
                   *detail = store_table_cell(t, i, store_table_column(t, "Detail"));
        builds += strcmp(of, "build") == 0 && strcmp(action, "build") == 0 &&
                  (strncmp(detail, "test ref no-null: build ", 24) == 0 || strncmp(detail, "base ref main: build ", 21) == 0);
        creates += strcmp(of, "run") == 0 && strcmp(action, "create") == 0;
    }
    store_table_free(&t);
    cr_assert(builds == 2 && creates == 1, "%d builds, %d creations in the log", builds, creates);
    StoreRunChanges ch;
    cr_assert_eq(store_run_changes(cu_fx.store, run, &ch), 1, "%s\n%s", out, errbuf);
    cr_assert_str_eq(ch.test_ref, "no-null");
    cr_assert_str_eq(ch.base_ref, "main");
    cr_assert_str_eq(ch.test_commit, c);
    cr_assert_str_eq(ch.base_commit, a);
    cr_assert_eq(ch.total, 2);
    cr_assert_eq(ch.count, 2);
    cr_assert_str_eq(ch.commits[0].hash, c, "the newest first");
    cr_assert_str_eq(ch.commits[0].subject, "Switch off the null move");
    cr_assert_str_eq(ch.commits[0].author, "Tess & Co");
    cr_assert_eq(strncmp(ch.commits[0].at, "20", 2), 0, "an ISO date: %s", ch.commits[0].at);
    cr_assert_str_eq(ch.commits[1].subject, "B: <script>alert(1)</script> a hostile subject");
    cr_assert(strstr(ch.diff, "diff --git a/notes.txt b/notes.txt") && strstr(ch.diff, "\n-1\n+2\n") &&
                  strstr(ch.diff, "\n+<script>alert(\"diff\")</script>\n"), "%s", ch.diff);
    cr_assert(!ch.diff_cut);
    store_run_changes_free(&ch);

    /* xqf-tune show: the refs and the commits; the diff with --diff only */
    snprintf(args, sizeof args, "show %" PRId64, run);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", errbuf);
    snprintf(cmd, sizeof cmd, "Refs: no-null (%.12s) vs main (%.12s)\nCommits: 2\n", c, a);
    cr_assert(strstr(out, cmd), "%s", out);
    snprintf(cmd, sizeof cmd, "  %.12s 20", c);
    cr_assert(strstr(out, cmd) && strstr(out, " Tess & Co Switch off the null move\n") &&
                  strstr(out, "<script>alert(1)</script> a hostile subject\n"), "%s", out);
    cr_assert(!strstr(out, "+2\n") && strstr(out, "--diff)"), "%s", out);
    snprintf(args, sizeof args, "show %" PRId64 " --diff", run);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", errbuf);
    cr_assert(strstr(out, "\n-1\n+2\n") && strstr(out, "+++ b/notes.txt\n"), "%s", out);

    /* the run's page: its name, the commits and the diff, every text escaped, each line's kind a class */
    char *html = run_page(run);
    cr_assert(strstr(html, "no-null vs main: Switch off the null move"), "%s", html);
    cr_assert(strstr(html, "B: &lt;script&gt;alert(1)&lt;/script&gt; a hostile subject"), "%s", html);
    cr_assert(strstr(html, "<span class=\"add\">+&lt;script&gt;alert(&quot;diff&quot;)&lt;/script&gt;</span>") ||
                  strstr(html, "<span class=\"add\">+&lt;script&gt;alert(&#34;diff&#34;)&lt;/script&gt;</span>"),
              "%s", html);
    cr_assert(strstr(html, "<span class=\"del\">-1</span><span class=\"add\">+2</span>"), "%s", html);
    cr_assert(!strstr(html, "<script>alert"), "nothing of the branch runs in the page");
    cr_assert(strstr(html, "<td>Tess &amp; Co</td>"), "%s", html);
    snprintf(cmd, sizeof cmd, "<td class=\"mono\">%.12s</td><td>Switch off the null move</td>", c);
    cr_assert(strstr(html, cmd), "%s", html);
    free(html);

    /* a diff over the cap, by sprt new --test-ref: cut at a line, marked; the run named by its refs and subject */
    snprintf(cmd, sizeof cmd, "git -C '%s' checkout -q -b big main && seq 1 60000 | sed 's/^/a line of the big file /' "
                              "> '%s/big.txt' && printf '3\\n' > '%s/tag'", repo, repo, repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    commit_all("A big table", big);
    snprintf(args, sizeof args, "sprt new --engine toy --test-ref big --base-ref main --nodes 5000");
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    int64_t cut = run_id(out);
    cr_assert_gt(cut, 0, "%s", out);
    cr_assert(strstr(out, "(cut)"), "%s", out);
    cr_assert_eq(store_load_run(cu_fx.store, cut, &r, false), 1);
    cr_assert_str_eq(r.name, "big vs main: A big table");
    store_run_free(&r);
    cr_assert_eq(store_run_changes(cu_fx.store, cut, &ch), 1);
    cr_assert(ch.diff_cut);
    size_t len = strlen(ch.diff);
    cr_assert(len > STORE_DIFF_MAX - 200 && len <= STORE_DIFF_MAX, "%zu bytes", len);
    cr_assert_eq(ch.diff[len - 1], '\n', "cut at a line");
    cr_assert(strstr(ch.diff, "\n+a line of the big file 1\n") && !strstr(ch.diff, "file 60000"));
    cr_assert_eq(ch.total, 1);
    store_run_changes_free(&ch);
    html = run_page(cut);
    cr_assert(strstr(html, "(cut: longer than 256 KiB") && strstr(html, "... (cut here)"), "the page says it");
    free(html);
    snprintf(args, sizeof args, "show %" PRId64 " --diff | tail -n 3", cut);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", errbuf);
    cr_assert(strstr(out, "\n(the diff is cut here: longer than 256 KiB)\n"), "%s", out);

    /* a run of two sets: named by what differs, its page lists each value beside its default */
    RunSpec sets = run_spec_default(RUN_KIND_SPRT);
    sets.test_params = "NullR=4,NullMove=1", sets.base_params = "NullMove=1", sets.nodes = 5000;
    sets.book = XQF_DEFAULT_BOOK;
    cr_assert_eq(run_create(cu_fx.store, &sets, &run, &problem), RUN_OK, "%s: %s", problem.field, problem.why);
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.name, "NullR=4 vs default");
    store_run_free(&r);
    html = run_page(run);
    cr_assert(strstr(html, "<h2 id=\"values\">Changed values</h2>") &&
                  strstr(html, "<tr class=\"differs\"><td class=\"mono\">NullR</td><td>3</td><td><strong>4</strong>"
                               "</td><td class=\"muted\">default</td></tr>") &&
                  strstr(html, "<tr><td class=\"mono\">NullMove</td><td>1</td><td><strong>1</strong></td><td>"
                               "<strong>1</strong></td></tr>"), "%s", html);
    free(html);
    /* a name given wins */
    sets.name = "my own";
    cr_assert_eq(run_create(cu_fx.store, &sets, &run, &problem), RUN_OK);
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.name, "my own");
    store_run_free(&r);
}

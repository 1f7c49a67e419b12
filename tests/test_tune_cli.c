/*
 * The xqf-tune program against a real PostgreSQL (XQF_TEST_DB; skipped
 * without it): creating an SPRT test and an SPSA run, list, show, stop,
 * export and report, with a coordinator and a worker playing the SPSA run;
 * bad arguments exit 2, an unreachable database 1.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster_util.h"
#include "keys.h"
#include "store_builds.h"
#include "store_runs.h"
#include "store_spsa.h"

TestSuite(tune_cli, .init = cu_fixture_init, .fini = cu_fixture_fini, .timeout = 150);

/* Runs xqf-tune with args (a shell fragment); its stdout in out. Returns the exit status. */
static int tune(char *out, size_t size, const char *args)
{
    int st = cu_tune(out, size, args, cu_fx.logfile);
    cr_assert_geq(st, -1, "cannot run xqf-tune");
    return st;
}

static bool file_has(const char *path, const char *text)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strstr(buf, text) != NULL;
}

static int tune_says(const char *args, const char *message, bool *said);

Test(tune_cli, bad_arguments)
{
    char out[4096];
    cr_assert_eq(tune(out, sizeof out, "spsa new --nodes 300"), 2);  /* no --pairs */
    cr_assert_eq(tune(out, sizeof out, "spsa new --pairs 8 --nodes 300 --tc 10+0.1"), 2);
    cr_assert_eq(tune(out, sizeof out, "spsa new --pairs 8 --nodes 300 --params NoSuchParam"), 2);
    cr_assert_eq(tune(out, sizeof out, "spsa old --pairs 8 --nodes 300"), 2);
    cr_assert_eq(tune(out, sizeof out, "sprt new --base '' --test NullR=9 --nodes 300"), 2);
    cr_assert_eq(tune(out, sizeof out, "sprt new --base '' --test NullR=2 --tc fast"), 2);
    cr_assert_eq(tune(out, sizeof out, "show abc"), 2);
    cr_assert_eq(tune(out, sizeof out, "report 1"), 2);
    cr_assert_eq(tune(out, sizeof out, "list --bogus 1"), 2);
    /* threads per engine: 1-64, a number */
    const char *threads[] = { "0", "65", "two", "2x" };
    for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
        char args[256];
        bool said;
        snprintf(args, sizeof args, "sprt new --base '' --test NullR=2 --nodes 300 --threads %s", threads[i]);
        cr_assert_eq(tune_says(args, "--threads", &said), 2, "--threads %s", threads[i]);
        cr_assert(said, "no message naming --threads for %s", threads[i]);
        snprintf(args, sizeof args, "games new --pairs 2 --base '' --test NullR=2 --nodes 300 --threads %s", threads[i]);
        cr_assert_eq(tune_says(args, "--threads", &said), 2, "games new --threads %s", threads[i]);
    }
    cr_assert_eq(tune(out, sizeof out, "list --db 'host=/nonexistent port=1 connect_timeout=2'"), 1);
}

Test(tune_cli, runs)
{
    CU_REQUIRE_DB();
    char out[16384], args[1024], spec[256], path[256];
    snprintf(spec, sizeof spec, "%s/spec", cu_fx.dir);
    FILE *f = fopen(spec, "w");
    cr_assert(f);
    fputs("# two parameters\nNullR, int, 3, 1, 5, 0.5, 0.002\nNullAdaptLowDepth, int, 6, 1, 12, 1, 0.002\n", f);
    fclose(f);
    snprintf(args, sizeof args, "spsa new --spec '%s' --pairs 8 --pairs-per-task 2 --nodes 300 --name cli", spec);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    long long spsa = atoll(out);
    cr_assert_gt(spsa, 0, "%s", out);
    cr_assert_eq(tune(out, sizeof out, "sprt new --base '' --test NullR=2 --nodes 300 --max-pairs 1000 "
                                       "--priority -1 --seed 9 --resign-score 800 --max-plies 200"), 0);
    long long sprt = atoll(out);
    cr_assert_gt(sprt, spsa);
    cr_assert_eq(tune(out, sizeof out, "list"), 0);
    cr_assert(strstr(out, "spsa") && strstr(out, "sprt") && strstr(out, "cli"), "%s", out);

    cu_track(cu_coordinator(cu_fx.db_coordinator, cu_fx.port, "10", cu_fx.logfile));
    cu_track(cu_worker(cu_fx.port, "w1", 2, cu_fx.logfile));
    cr_assert(cu_wait_finished(cu_fx.store, spsa, 120, NULL), "SPSA run did not finish (log: %s)", cu_fx.logfile);

    snprintf(args, sizeof args, "show %lld", spsa);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    cr_assert(strstr(out, "Iterations: 8/8") && strstr(out, "NullAdaptLowDepth") && strstr(out, "Elo:"), "%s",
              out);
    snprintf(args, sizeof args, "show %lld", sprt);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    cr_assert(strstr(out, "LLR:") && strstr(out, "Pentanomial"), "%s", out);
    /* the settings run_settings.def shows as they are, as given (the rest are in sentences) */
    cr_assert(strstr(out, "\nPriority: -1\nSeed: 9\nResign plies: 4\nResign score: 800\nDraw from move: 40\n"
                          "Draw plies: 8\nDraw score: 10\nMax plies: 200\n") && !strstr(out, "Pairs per task:"),
              "%s", out);
    snprintf(args, sizeof args, "stop %lld", sprt);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", out);
    cr_assert_eq(tune(out, sizeof out, args), 2, "stopping twice: refused by its state");
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, sprt, &r, false), 1);
    cr_assert_str_eq(r.state, "stopped");

    snprintf(path, sizeof path, "%s/tuned.params", cu_fx.dir);
    snprintf(args, sizeof args, "export %lld --out '%s'", spsa, path);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    cr_assert(file_has(path, "NullR = ") && file_has(path, "NullAdaptLowDepth = "));
    snprintf(args, sizeof args, "'%s/xqf-engine' params '%s' >/dev/null", XQF_BIN, path);
    cr_assert_eq(system(args), 0, "the engine refuses the exported file");
    snprintf(args, sizeof args, "export %lld", sprt);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    cr_assert(strstr(out, "NullR = 2"), "%s", out);

    snprintf(path, sizeof path, "%s/report.html", cu_fx.dir);
    snprintf(args, sizeof args, "report %lld --html '%s'", spsa, path);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    cr_assert(file_has(path, "<svg") && file_has(path, "NullR"));
    snprintf(args, sizeof args, "report %lld --html '%s'", sprt, path);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    cr_assert(file_has(path, "<svg"));
    cr_assert_eq(tune(out, sizeof out, "show 999999"), 1);
}

/*
 * Writes a stand-in engine at path (a real bench takes long under ASan):
 * `bench` prints the signature nodes as xqf-engine does; `uci` is answered
 * with the option lines given (options ending in "uciok\n" to finish the
 * answer; options NULL: it ends at once, as a program that is no engine).
 */
static void fake_engine(const char *path, int nodes, const char *options)
{
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fprintf(f, "#!/bin/sh\n[ \"$1\" = bench ] && echo 'Nodes searched: %d' && exit 0\n", nodes);
    if (options)
        fprintf(f, "while read -r line; do\n  case $line in\n    uci) cat <<'EOF'\nid name fake\n%sEOF\n    ;;\n"
                   "    quit) exit 0 ;;\n  esac\ndone\n", options);
    fputs("exit 1\n", f);
    fclose(f);
    cr_assert_eq(chmod(path, 0755), 0);
}

/* A stand-in engine (file in the test's folder, answering uci with options) registered as name; its id. */
static int64_t fake_build(const char *file, const char *name, const char *options, char *out, size_t size)
{
    char engine[256], args[512];
    snprintf(engine, sizeof engine, "%s/%s", cu_fx.dir, file);
    fake_engine(engine, 4242, options);
    snprintf(args, sizeof args, "build --binary '%s' --name %s", engine, name);
    cr_assert_eq(tune(out, size, args), 0, "%s", out);
    int64_t id = 0;
    const char *b = strstr(out, "Build: ");
    cr_assert(b && sscanf(b, "Build: %" SCNd64, &id) == 1 && id > 0, "%s", out);
    return id;
}

/* build --binary: any engine binary registered by SHA-256 with its bench, parameters and bytes; bad ones refused. */
Test(tune_cli, build_binary_registers_an_engine)
{
    CU_REQUIRE_DB();
    char out[4096], args[512];
    int64_t id = fake_build("fake-engine", "my-change", "option name Hash type spin default 16 min 1 max 4096\n"
                                                        "option name Clear Hash type button\n"
                                                        "option name NullR type spin default 3 min 1 max 4\nuciok\n",
                            out, sizeof out);
    cr_assert_not_null(strstr(out, "Bench: 4242"), "%s", out);
    cr_assert_not_null(strstr(out, "Spin options: 2"), "%s", out);
    StoreBuild sb;
    cr_assert_eq(store_load_build(cu_fx.store, id, &sb), 1);
    cr_assert_str_eq(sb.build_id, "my-change");
    cr_assert_eq(sb.bench_nodes, 4242);
    cr_assert_not_null(strstr(out, sb.sha256));
    /* the parameters it knows: its spin options, in its order, with their bounds */
    StoreBuildParam *params;
    bool listed;
    cr_assert_eq(store_build_params(cu_fx.store, id, &listed, &params), 2);
    cr_assert(listed);
    cr_assert_str_eq(params[0].name, "Hash");
    cr_assert_str_eq(params[1].name, "NullR");
    cr_assert(params[1].min == 1 && params[1].max == 4, "NullR %d-%d", params[1].min, params[1].max);
    free(params);
    /* the bytes are stored: a chunk comes back whole */
    static char bytes[1024];
    size_t len = 0;
    int64_t total = 0;
    char name[STORE_NAME_MAX + 1], sig[STORE_SIG_HEX + 1];
    cr_assert_eq(store_build_chunk(cu_fx.store, sb.sha256, 0, sizeof bytes, bytes, &len, &total, name, sig), 1);
    cr_assert_eq((int64_t)len, total);
    cr_assert(len > 20 && memcmp(bytes, "#!/bin/sh", 9) == 0);
    cr_assert_str_eq(name, "my-change");
    cr_assert_str_eq(sig, "");                              /* unsigned: said so */
    cr_assert_not_null(strstr(out, "Signature: none"), "%s", out);
    cr_assert_eq(store_build_chunk(cu_fx.store, "0000", 0, sizeof bytes, bytes, &len, &total, name, sig), 0);
    /* SPRT of builds: unknown ids and the same build twice are refused */
    cr_assert_eq(tune(out, sizeof out, "sprt new --test-build 999 --base-build 1 --nodes 300"), 2);
    snprintf(args, sizeof args, "sprt new --test-build %" PRId64 " --base-build %" PRId64 " --nodes 300", id, id);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    /* not an executable, not an engine, a second name form */
    cr_assert_eq(tune(out, sizeof out, "build --binary /nonexistent"), 2);
    cr_assert_eq(tune(out, sizeof out, "build --binary /bin/true"), 1);   /* no bench output */
    cr_assert_eq(tune(out, sizeof out, "build 1 --name x"), 2);
}

/*
 * A binary that benches but does not list its options (it ends, or it
 * never says uciok) is not registered: status 1 as for a bench that fails,
 * a message saying why, nothing recorded.
 */
Test(tune_cli, build_binary_refuses_an_engine_that_lists_no_options)
{
    CU_REQUIRE_DB();
    char out[4096], engine[256], args[512], sha[65];
    const struct {
        const char *options, *why;
    } bad[] = {
        { NULL, "it ended before uciok" },
        { "option name NullR type spin default 3 min 1 max 4\n", "no uciok within 10 s" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(engine, sizeof engine, "%s/mute-engine-%zu", cu_fx.dir, i);
        fake_engine(engine, 4242, bad[i].options);
        truncate(cu_fx.logfile, 0);
        snprintf(args, sizeof args, "build --binary '%s' --name mute", engine);
        cr_expect_eq(tune(out, sizeof out, args), 1, "%s", bad[i].why);
        cr_expect(file_has(cu_fx.logfile, "does not list its options") && file_has(cu_fx.logfile, bad[i].why),
                  "%s: the message (log %s)", bad[i].why, cu_fx.logfile);
        cr_expect(!strstr(out, "Build: "), "%s", out);
        char bytes[16], name[STORE_NAME_MAX + 1], sig[STORE_SIG_HEX + 1];
        size_t len;
        int64_t total;
        cr_assert_eq(cu_sha256(engine, sha), 0);
        cr_expect_eq(store_build_chunk(cu_fx.store, sha, 0, sizeof bytes, bytes, &len, &total, name, sig), 0,
                     "%s: nothing recorded", bad[i].why);
    }
}

/* Runs xqf-tune with args; its exit status, and whether its stderr holds message (NULL: nothing asked). */
static int tune_says(const char *args, const char *message, bool *said)
{
    char out[4096];
    truncate(cu_fx.logfile, 0);
    int st = tune(out, sizeof out, args);
    *said = !message || file_has(cu_fx.logfile, message);
    return st;
}

/*
 * A set a build plays is checked against the parameters that build listed
 * when it was registered, not against this xqf-tune's table: a branch's
 * switch that main does not know is taken, a parameter of main's that the
 * build lacks and a value outside the build's bounds are refused (status
 * 2, the build named).  A side without a build keeps the check against the
 * table; so does a build registered before builds recorded their
 * parameters, with a warning.  chain new checks the start set its SPRTs'
 * base plays on --base-build the same way.  A build's set must be what a
 * worker sends it as `setoption` lines: identifiers and integers.  The
 * export of a run on a build names only what its test set sets.
 */
Test(tune_cli, sets_are_checked_against_the_build_that_plays_them)
{
    CU_REQUIRE_DB();
    char out[4096], args[1024], message[256];
    int64_t id = fake_build("branch-engine", "branch", "option name Hash type spin default 16 min 1 max 4096\n"
                                                       "option name NullR type spin default 3 min 1 max 4\n"
                                                       "option name NewSwitch type spin default 0 min 0 max 1\nuciok\n",
                            out, sizeof out);
    struct {
        const char *sides, *message;
        int status;
    } cases[] = {
        { "--test-build %1$lld --test NewSwitch=1 --base ''", NULL, 0 },
        { "--base-build %1$lld --base 'NewSwitch = 1, NullR=4' --test NullR=2", NULL, 0 },
        { "--test-build %1$lld --test NullThreat=1", "--test: unknown parameter 'NullThreat' in build %1$lld (branch)", 2 },
        { "--test-build %1$lld --test NullR=5", "--test: parameter NullR needs an integer from 1 to 4 in build %1$lld "
                                                "(branch), got '5'", 2 },
        { "--base-build %1$lld --base NewSwitch=2", "--base: parameter NewSwitch needs an integer from 0 to 1 in build "
                                                    "%1$lld (branch)", 2 },
        { "--test-build %1$lld --test NewSwitch=1 --base NewSwitch=1", "--base: unknown parameter 'NewSwitch'", 2 },
        /* sent to the build as setoption lines on the workers: identifiers and integers only */
        { "--test-build %1$lld --test 'New Switch=1'", "--test: 'New Switch' is not a parameter name", 2 },
        { "--test-build %1$lld --test 'NewSwitch=1 value 0'", "--test: parameter NewSwitch needs an integer", 2 },
        /* the build lists Hash, but a worker sizes its engines' memory itself */
        { "--test-build %1$lld --test Hash=4096", "--test: 'Hash' is the worker's to set", 2 },
        { "--base-build %1$lld --base 'threads=8'", "--base: 'threads' is the worker's to set", 2 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int games = 0; games < 2; games++) {
            char sides[256];
            bool said;
            snprintf(sides, sizeof sides, cases[i].sides, (long long)id);
            if (cases[i].message)
                snprintf(message, sizeof message, cases[i].message, (long long)id);
            snprintf(args, sizeof args, "%s new %s %s --nodes 300", games ? "games" : "sprt", sides,
                     games ? "--pairs 2" : "");
            cr_expect_eq(tune_says(args, cases[i].message ? message : NULL, &said), cases[i].status, "%s", args);
            cr_expect(said, "%s: the message lacks \"%s\" (log %s)", args, message, cu_fx.logfile);
        }

    /* export of a run on the build: only what its test set sets (this table does not know NewSwitch) */
    snprintf(args, sizeof args, "sprt new --test-build %lld --test 'NewSwitch=1, NullR=4,NullR=2' --nodes 300",
             (long long)id);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", out);
    long long on_build = atoll(out);
    cr_assert_gt(on_build, 0, "%s", out);
    snprintf(args, sizeof args, "export %lld", on_build);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", out);
    cr_expect(strstr(out, "NewSwitch = 1\n") && strstr(out, "NullR = 2\n") && !strstr(out, "NullR = 4")
              && !strstr(out, "NullThreat") && strstr(out, "build's defaults stand for the rest"), "%s", out);

    /* chain new: its SPRTs' base plays the start set on --base-build */
    bool said;
    snprintf(args, sizeof args, "chain new --params NullR --pairs 4 --nodes 100 --then-sprt 0,5,500n --base-build %lld",
             (long long)id);
    cr_expect_eq(tune_says(args, NULL, &said), 0, "%s", args);
    snprintf(args, sizeof args, "chain new --params NullR,NullThreatOrder --pairs 4 --nodes 100 --then-sprt 0,5,500n "
             "--base-build %lld", (long long)id);
    snprintf(message, sizeof message, "unknown parameter 'NullThreatOrder' in build %lld (branch)", (long long)id);
    cr_expect_eq(tune_says(args, message, &said), 2, "%s", args);
    cr_expect(said, "chain new: the message lacks \"%s\" (log %s)", message, cu_fx.logfile);

    /* a build registered before builds recorded their parameters: this xqf-tune's table, with a warning */
    StoreBuild old = { .bench_nodes = 4242 };
    snprintf(old.path, sizeof old.path, "%s/old-engine", cu_fx.dir);
    fake_engine(old.path, 4242, "uciok\n");
    cr_assert_eq(cu_sha256(old.path, old.sha256), 0);
    snprintf(old.build_id, sizeof old.build_id, "old");
    int64_t legacy = cu_build_add(cu_fx.store, &old);
    cr_assert_gt(legacy, 0);
    snprintf(args, sizeof args, "sprt new --test-build %lld --test NullR=2 --nodes 300", (long long)legacy);
    cr_expect_eq(tune_says(args, "registered before builds recorded their parameters", &said), 0, "%s", args);
    cr_expect(said, "no warning (log %s)", cu_fx.logfile);
    snprintf(args, sizeof args, "sprt new --test-build %lld --test NewSwitch=1 --nodes 300", (long long)legacy);
    cr_expect_eq(tune_says(args, "--test: unknown parameter 'NewSwitch'", &said), 2, "%s", args);
    cr_expect(said, "the message (log %s)", cu_fx.logfile);
}

/*
 * Signed builds: xqf-keys sign-new makes an operator key; build --binary
 * --sign-key stores a signature that the key's trust file accepts for the
 * build's SHA-256 and name; xqf-keys sign makes the same signature on its
 * own (Ed25519 is deterministic), which --signature stores as it is.
 */
Test(tune_cli, build_signed_by_the_operator_key)
{
    CU_REQUIRE_DB();
    char out[4096], engine[256], key[256], args[1024], cmd[1024], err[256], sig[SIGN_SIG_HEX + 1] = "";
    snprintf(engine, sizeof engine, "%s/signed-engine", cu_fx.dir);
    fake_engine(engine, 77, "uciok\n");
    snprintf(key, sizeof key, "%s/operator.key", cu_fx.dir);
    snprintf(cmd, sizeof cmd, "'%s/xqf-keys' sign-new '%s' >/dev/null", XQF_BIN, key);
    cr_assert_eq(system(cmd), 0);
    snprintf(args, sizeof args, "build --binary '%s' --name signed-change --sign-key '%s'", engine, key);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", out);
    int64_t id = 0;
    const char *b = strstr(out, "Build: ");
    cr_assert(b && sscanf(b, "Build: %" SCNd64, &id) == 1, "%s", out);
    StoreBuild sb;
    cr_assert_eq(store_load_build(cu_fx.store, id, &sb), 1);
    cr_assert_eq(strlen(sb.signature), SIGN_SIG_HEX);
    cr_assert_not_null(strstr(out, sb.signature), "%s", out);
    char pub[300];
    snprintf(pub, sizeof pub, "%s.pub", key);
    TrustList t;
    cr_assert_eq(trust_read(pub, &t, err, sizeof err), 0, "%s", err);
    cr_assert_eq(trust_verify_build(&t, sb.sha256, "signed-change", sb.signature, err, sizeof err), 0, "%s", err);
    cr_assert_neq(trust_verify_build(&t, sb.sha256, "other-name", sb.signature, err, sizeof err), 0);
    /* signed elsewhere: the same signature, stored as given */
    snprintf(cmd, sizeof cmd, "'%s/xqf-keys' sign '%s' '%s' signed-change", XQF_BIN, key, engine);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    char line[512];
    while (fgets(line, sizeof line, p))
        sscanf(line, "Signature: %128s", sig);
    cr_assert_eq(pclose(p), 0);
    cr_assert_str_eq(sig, sb.signature);
    snprintf(args, sizeof args, "build --binary '%s' --name signed-change --signature %s", engine, sig);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", out);
    /* a bad key file or signature is a usage error, before anything is recorded */
    snprintf(args, sizeof args, "build --binary '%s' --sign-key '%s'", engine, pub);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    snprintf(args, sizeof args, "build --binary '%s' --signature 1234", engine);
    cr_assert_eq(tune(out, sizeof out, args), 2);
}

/* --start-file with --spec: the file's values are where the run starts. */
Test(tune_cli, start_file_overrides_the_spec_start)
{
    CU_REQUIRE_DB();
    char out[4096], spec[256], start[256], args[1024];
    snprintf(spec, sizeof spec, "%s/spec", cu_fx.dir);
    snprintf(start, sizeof start, "%s/start.params", cu_fx.dir);
    FILE *f = fopen(spec, "w");
    fputs("RookMg, int, 900, 300, 2000, 60, 0.01\nHorseMg, int, 400, 100, 1000, 40, 0.01\n", f);
    fclose(f);
    f = fopen(start, "w");
    fputs("RookMg = 630\nPawnMg = 78\n", f);
    fclose(f);
    snprintf(args, sizeof args, "spsa new --spec '%s' --start-file '%s' --pairs 16 --nodes 300", spec, start);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", out);
    int64_t run = atoll(out);
    StoreSpsa st;
    cr_assert_eq(store_spsa_load(cu_fx.store, run, &st), 1);
    cr_assert_eq(st.count, 2);
    cr_assert_float_eq(st.params[0].theta, 630, 1e-9);   /* from the start file */
    cr_assert_float_eq(st.params[1].theta, 400, 1e-9);   /* from the spec */
    cr_assert_str_eq(st.fixed, "PawnMg=78");
    /* a start value outside the spec's bounds is refused */
    f = fopen(start, "w");
    fputs("RookMg = 250\n", f);
    fclose(f);
    cr_assert_eq(tune(out, sizeof out, args), 2);
}

/* Writes a data file: the header (unless bad_header), then n records of real games' positions. */
static void write_data(const char *path, bool bad_header, int n, int cut)
{
    char cmd[1024];
    /* Records from a short self-play match of xqf-match --data. */
    snprintf(cmd, sizeof cmd,
             "'%s/xqf-match' --engine name=a --engine name=b option.Tempo=12 --nodes 400 --pairs 6 "
             "--concurrency 1 --seed 3 --quiet --data '%s/all.data' >/dev/null 2>>'%s'",
             XQF_BIN, cu_fx.dir, cu_fx.logfile);
    cr_assert_eq(system(cmd), 0);
    char all[256];
    snprintf(all, sizeof all, "%s/all.data", cu_fx.dir);
    FILE *in = fopen(all, "rb"), *out = fopen(path, "wb");
    cr_assert(in && out);
    static unsigned char buf[1 << 20];
    size_t got = fread(buf, 1, sizeof buf, in);
    cr_assert_gt(got, 8 + (size_t)n * 54, "the match gave %zu bytes", got);
    if (bad_header)
        memcpy(buf, "XQFDATA9", 8);
    fwrite(buf, 1, 8 + (size_t)n * 54 - (size_t)cut, out);
    fclose(in);
    fclose(out);
}

Test(tune_cli, texel_fits_and_refuses_bad_input)
{
    char out[8192], args[1024], data[256], params[256], html[256];
    snprintf(data, sizeof data, "%s/good.data", cu_fx.dir);
    snprintf(params, sizeof params, "%s/fit.params", cu_fx.dir);
    snprintf(html, sizeof html, "%s/fit.html", cu_fx.dir);
    write_data(data, false, 300, 0);
    snprintf(args, sizeof args, "texel '%s' --out '%s' --html '%s' --epochs 30 --params group:material,Tempo --quiet",
             data, params, html);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    cr_assert(strstr(out, "Loss: "), "%s", out);
    cr_assert(file_has(params, "RookMg = "));
    cr_assert(file_has(html, "Loss before"));
    /* The fitted file is a parameter file the engine takes. */
    snprintf(args, sizeof args, "'%s/xqf-engine' params '%s' >/dev/null", XQF_BIN, params);
    cr_assert_eq(system(args), 0);

    struct {
        const char *what, *extra;
        bool bad_header;
        int cut;
        const char *message;
    } bad[] = {
        { "wrong header", "", true, 0, "not a training data file" },
        { "truncated record", "", false, 10, "record 300 is cut short" },
        { "unknown parameter", "--params NoSuchWeight", false, 0, "no parameter or group 'NoSuchWeight'" },
        { "search parameter", "--params NullR", false, 0, "not an evaluation weight" },
        { "lambda out of range", "--lambda 1.5", false, 0, "--lambda" },
        { "no data", "", false, -1, "no quiet position" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(data, sizeof data, "%s/bad%zu.data", cu_fx.dir, i);
        if (bad[i].cut >= 0)
            write_data(data, bad[i].bad_header, 300, bad[i].cut);
        else
            write_data(data, false, 0, 0);
        truncate(cu_fx.logfile, 0);
        snprintf(args, sizeof args, "texel '%s' --out '%s/x.params' %s", data, cu_fx.dir, bad[i].extra);
        cr_expect_eq(tune(out, sizeof out, args), 2, "%s: not refused with status 2", bad[i].what);
        cr_expect(file_has(cu_fx.logfile, bad[i].message), "%s: the message lacks '%s'", bad[i].what, bad[i].message);
    }
}

/* A book line that is not legal from its position stops the run's creation, naming the line. */
Test(tune_cli, a_bad_book_line_is_named)
{
    CU_REQUIRE_DB();
    char path[512], args[2048], out[4096];
    snprintf(path, sizeof path, "%s/bad.book", cu_fx.dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fprintf(f, "# a good line, then a bad one\n"
               "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w moves h2e2\n"
               "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w moves h2e2 a0a9\n");
    fclose(f);
    snprintf(args, sizeof args, "sprt new --test NullR=2 --base NullR=3 --nodes 500 --book '%s' --db '%s'", path, cu_fx.db);
    cr_assert_eq(tune(out, sizeof out, args), 2, "%s", out);
    snprintf(args, sizeof args, "bad.book:3: move 2 'a0a9'");
    cr_assert(file_has(cu_fx.logfile, args), "the error names the line and the move (log: %s)", cu_fx.logfile);
    StoreRun *runs;
    int n = store_list_runs(cu_fx.store, 10, &runs);
    free(runs);
    cr_assert_eq(n, 0, "no run was created");
}

/*
 * Books in other formats: an EPD book's repeated position dropped and
 * counted, its balance from "ce", its SHA-256 shown as sha256sum prints
 * it; a PGN book cut at a ply; a book's every bad opening named, nothing
 * recorded.
 */
Test(tune_cli, books_of_other_formats)
{
    CU_REQUIRE_DB();
    char epd[512], pgn[512], bad[512], args[2048], out[8192];
    snprintf(epd, sizeof epd, "%s/openings.epd", cu_fx.dir);
    snprintf(pgn, sizeof pgn, "%s/games.pgn", cu_fx.dir);
    snprintf(bad, sizeof bad, "%s/bad.fen", cu_fx.dir);
    FILE *f = fopen(epd, "w");
    cr_assert(f);
    fprintf(f, "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - ce 10; id \"start\";\n"
               "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - ce -30;\n"
               "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - id \"again\";\n");
    fclose(f);
    cr_assert(f = fopen(pgn, "w"));
    fprintf(f, "[White \"a\"]\n[Black \"b\"]\n\n1. h2e2 h9g7 2. h0g2 1-0\n\n"
               "[White \"a\"]\n[Black \"b\"]\n\n1. c3c4 b9c7 2. b0c2 0-1\n");
    fclose(f);
    cr_assert(f = fopen(bad, "w"));
    fprintf(f, "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w\nnot a fen\n"
               "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w moves h2e2 h2e2\n");
    fclose(f);

    snprintf(args, sizeof args, "sprt new --test NullR=2 --base NullR=3 --nodes 500 --book '%s'", epd);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", out);
    int64_t run = strtoll(out, NULL, 10);
    cr_assert(file_has(cu_fx.logfile, "openings.epd: 2 openings, 1 duplicates dropped, |score| 10-30 (mean 20.0)"),
              "stderr says what was dropped (log: %s)", cu_fx.logfile);
    char sha[80] = "", cmd[600];
    snprintf(cmd, sizeof cmd, "sha256sum '%s'", epd);
    FILE *p = popen(cmd, "r");
    cr_assert(p && fgets(sha, sizeof sha, p));
    pclose(p);
    sha[12] = '\0';
    snprintf(args, sizeof args, "show %" PRId64, run);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    char want[256];
    snprintf(want, sizeof want, "Book: openings.epd, 2 openings (epd), 1 duplicates dropped, SHA-256 %s, |score| 10-30 (mean 20.0)",
             sha);
    cr_assert(strstr(out, want), "want '%s' in: %s", want, out);

    snprintf(args, sizeof args, "games new --pairs 2 --test NullR=2 --base NullR=3 --nodes 500 --book '%s' --book-plies 2", pgn);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", out);
    run = strtoll(out, NULL, 10);
    snprintf(args, sizeof args, "show %" PRId64, run);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    cr_assert(strstr(out, "Book: games.pgn, 2 openings (pgn games cut at ply 2), SHA-256 "), "%s", out);
    /* plies are a PGN's; an unknown format is named */
    snprintf(args, sizeof args, "sprt new --test NullR=2 --base NullR=3 --nodes 500 --book '%s' --book-plies 2", epd);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    snprintf(args, sizeof args, "sprt new --test NullR=2 --base NullR=3 --nodes 500 --book '%s' --book-format xml", epd);
    cr_assert_eq(tune(out, sizeof out, args), 2);

    StoreRun *runs;
    int before = store_list_runs(cu_fx.store, 10, &runs);
    free(runs);
    snprintf(args, sizeof args, "sprt new --test NullR=2 --base NullR=3 --nodes 500 --book '%s'", bad);
    cr_assert_eq(tune(out, sizeof out, args), 2, "%s", out);
    cr_assert(file_has(cu_fx.logfile, "bad.fen:2: bad FEN"), "log: %s", cu_fx.logfile);
    cr_assert(file_has(cu_fx.logfile, "bad.fen:3: move 2 'h2e2'"), "log: %s", cu_fx.logfile);
    cr_assert(file_has(cu_fx.logfile, "2 bad openings"), "log: %s", cu_fx.logfile);
    int after = store_list_runs(cu_fx.store, 10, &runs);
    free(runs);
    cr_assert_eq(after, before, "no run was created");
}

/*
 * Names others chose reach the terminal escaped: a run named with a
 * terminal's control sequence (clear the screen, retitle the window) is
 * listed and shown with the escape byte spelled out, never sent raw.
 */
Test(tune_cli, names_are_shown_escaped)
{
    CU_REQUIRE_DB();
    char out[16384];
    cr_assert_eq(tune(out, sizeof out, "sprt new --test '' --base '' --nodes 100 --name \"$(printf 'evil\\033[2J\\033]0;x\\007')\""),
                 0, "%s", out);
    int64_t run = strtoll(out, NULL, 10);
    cr_assert_gt(run, 0);
    cr_assert_eq(tune(out, sizeof out, "list"), 0);
    cr_assert(strstr(out, "evil") && !strchr(out, '\033') && !strchr(out, '\007'), "list: %s", out);
    char args[64];
    snprintf(args, sizeof args, "show %" PRId64, run);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    cr_assert(strstr(out, "Name: evil") && !strchr(out, '\033') && !strchr(out, '\007'), "show: %s", out);
    /* an error that quotes its input (an engine's words, a branch's) escapes it too, C1 controls included */
    cr_assert_neq(cu_sh(out, sizeof out, "( '" XQF_BIN "/xqf-tune' show \"$(printf 'x\033[2J\302\233y')\" 2>&1 )",
                        cu_fx.logfile), 0);
    cr_assert(strstr(out, "is not a run id") && !strchr(out, '\033') && !strstr(out, "\302\233"), "error: %s", out);
}

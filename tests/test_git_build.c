/*
 * Tests from git (issue 13): xqf-tune build --ref and sprt new
 * --test-ref/--base-ref against a real PostgreSQL (XQF_TEST_DB; skipped
 * without it, or when the source tree is not a git checkout).  A
 * throwaway clone of the project gets commits on top: one without a
 * Bench: line, empty ones of the same tree with a wrong and a right Bench:
 * line, one that changes the binary, one that does not configure.  Two
 * engine builds in all (a tree built once is reused).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster_util.h"
#include "keys.h"

static char repo[256];

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
    snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse --git-dir >/dev/null 2>&1", XQF_SOURCE_DIR);
    if (system(cmd) != 0)
        cr_skip("%s is not a git checkout", XQF_SOURCE_DIR);
    snprintf(cmd, sizeof cmd, "git clone -q --local --no-hardlinks '%s' '%s'", XQF_SOURCE_DIR, repo);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s", errbuf);

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

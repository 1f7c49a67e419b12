/*
 * xqf-tune build against a real PostgreSQL (XQF_TEST_DB; skipped without
 * it): an SPSA run whose theta is set through the store is built once; the
 * binary exists, `xqf-engine params` on it shows the exported values as its
 * defaults, the printed bench signature is the binary's own, and the
 * engine builds row holds its SHA-256 (as sha256sum computes it), the run,
 * the parameter hash and the path.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster_util.h"
#include "store_builds.h"
#include "store_runs.h"
#include "store_spsa.h"

TestSuite(tune_build, .init = cu_fixture_init, .fini = cu_fixture_fini_rmdir, .timeout = 240);

/* Runs a shell command; its stdout in out (stderr to the log). Returns the exit status. */
static int sh(char *out, size_t size, const char *cmd)
{
    int st = cu_sh(out, size, cmd, cu_fx.logfile);
    cr_assert_geq(st, -1, "cannot run %s", cmd);
    return st;
}

/* The rest of the line after prefix in text, into out; false when absent. */
static bool field(const char *text, const char *prefix, char *out, size_t size)
{
    const char *p = strstr(text, prefix);
    if (!p)
        return false;
    p += strlen(prefix);
    size_t n = strcspn(p, "\n");
    snprintf(out, size, "%.*s", (int)n, p);
    return true;
}

Test(tune_build, bad_arguments)
{
    char out[4096], cmd[512];
    snprintf(cmd, sizeof cmd, "'%s/xqf-tune' build", XQF_BIN);
    cr_assert_eq(sh(out, sizeof out, cmd), 2, "no run");
    snprintf(cmd, sizeof cmd, "'%s/xqf-tune' build 1 --source /nonexistent", XQF_BIN);
    cr_assert_eq(sh(out, sizeof out, cmd), 2, "not a source tree");
    snprintf(cmd, sizeof cmd, "'%s/xqf-tune' build 1 --jobs 0", XQF_BIN);
    cr_assert_eq(sh(out, sizeof out, cmd), 2);
}

Test(tune_build, tuned_engine)
{
    CU_REQUIRE_DB();
    char out[65536], cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s/xqf-tune' spsa new --params NullR,PawnMg,RookMobility --pairs 100 "
                              "--nodes 300 --name build", XQF_BIN);
    cr_assert_eq(sh(out, sizeof out, cmd), 0);
    int64_t run = atoll(out);
    cr_assert_gt(run, 0, "%s", out);
    /* theta as if tuned: exported rounded (2, 75, 6) */
    const double theta[3] = { 2.2, 74.6, 5.5 };
    cr_assert_eq(store_spsa_save(cu_fx.store, run, theta, 3, 100), 0);
    cr_assert_eq(store_finish_run(cu_fx.store, run, "finished", ""), 0);

    snprintf(cmd, sizeof cmd, "'%s/xqf-tune' build %" PRId64 " --out '%s/tuned'", XQF_BIN, run, cu_fx.dir);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "build failed: %s (log %s)", out, cu_fx.logfile);
    char binary[1024], bench[64], sha[128], build[64], params[1024];
    cr_assert(field(out, "Binary: ", binary, sizeof binary) && field(out, "Bench: ", bench, sizeof bench) &&
                  field(out, "SHA-256: ", sha, sizeof sha) && field(out, "Build: ", build, sizeof build) &&
                  field(out, "Parameters: ", params, sizeof params),
              "%s", out);
    cr_assert_eq(access(binary, X_OK), 0, "no binary %s", binary);
    char name[512], hash[17];
    const char *h = strstr(params, "(set ");
    cr_assert(h, "%s", params);
    snprintf(hash, sizeof hash, "%.16s", h + 5);
    snprintf(name, sizeof name, "%s/tuned/xqf-engine-run%" PRId64 "-%s", cu_fx.dir, run, hash);
    cr_assert_str_eq(binary, name);

    /* the exported values are the binary's defaults */
    char engine_out[65536];
    snprintf(cmd, sizeof cmd, "'%s' params", binary);
    cr_assert_eq(sh(engine_out, sizeof engine_out, cmd), 0);
    cr_assert(strstr(engine_out, "\nNullR, int, 2, ") && strstr(engine_out, "\nPawnMg, int, 75, ") &&
                  strstr(engine_out, "\nRookMobility, int, 6, "),
              "%s", engine_out);

    /* the printed bench is the binary's */
    snprintf(cmd, sizeof cmd, "'%s' bench", binary);
    cr_assert_eq(sh(engine_out, sizeof engine_out, cmd), 0);
    char nodes[64];
    cr_assert(field(engine_out, "Nodes searched: ", nodes, sizeof nodes), "%s", engine_out);
    cr_assert_str_eq(bench, nodes);

    /* the builds row */
    snprintf(cmd, sizeof cmd, "sha256sum '%s'", binary);
    cr_assert_eq(sh(engine_out, sizeof engine_out, cmd), 0);
    engine_out[64] = '\0';
    cr_assert_str_eq(sha, engine_out);
    StoreBuild b;
    cr_assert_eq(store_load_build(cu_fx.store, atoll(build), &b), 1);
    cr_assert_str_eq(b.sha256, engine_out);
    cr_assert_eq(b.run_id, run);
    cr_assert_str_eq(b.params_hash, hash);
    cr_assert_eq(b.bench_nodes, atoll(bench));
    cr_assert_str_eq(b.path, binary);
}

/*
 * SPSA of another engine's UCI options (docs/programs/xqf-tune.md, "SPSA
 * of any engine"), against a real PostgreSQL (XQF_TEST_DB; skipped
 * without it).  The toy engine of test_engine_runs (xqf-engine's bytes
 * behind a Makefile with EXE=, so its `uci` lists xqf-engine's spin
 * options) is registered; spsa new --engine toy --ref REF builds its
 * commit and tunes a spec of its options, the end hints derived when left
 * out.  Bad specs end with status 2 and record nothing.  A tune of 300
 * options is made and the task the coordinator hands out carries every
 * one of them on both sides, each playing the build.  modify changes the
 * running tune's bounds, end hints and schedule, recorded in its history;
 * export writes setoption lines and Fishtest's paste block.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cluster_util.h"
#include "store_runs.h"
#include "store_spsa.h"

TestSuite(engine_spsa, .init = cu_fixture_init, .fini = cu_fixture_fini_rmdir, .timeout = 240);

static char out[1 << 17];

/* A shell command in the test's folder, stdout and stderr both into out. Exit status. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[8192], full[8400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "cd '%s' && { { %s ; } 2>&1 ; }", cu_fx.dir, cmd);
    return cu_sh(out, sizeof out, full, cu_fx.logfile);
}

/* The run id xqf-tune printed: the last line that is only a number (0: none). */
static int64_t run_id(void)
{
    int64_t run = 0;
    for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strspn(p, "0123456789") == strcspn(p, "\n") && strcspn(p, "\n") > 0)
            sscanf(p, "%" SCNd64, &run);
    return run;
}

static int runs_count(void)
{
    StoreRun *r;
    int n = store_list_runs(cu_fx.store, 1000, &r);
    cr_assert_geq(n, 0);
    free(r);
    return n;
}

#define TUNE "'" XQF_BIN "/xqf-tune'"

Test(engine_spsa, another_engines_options_tuned_modified_and_exported)
{
    CU_REQUIRE_DB();
    char commit[41];
    cr_assert_eq(cu_toy_engine(commit), 0, "the toy engine (see %s)", cu_fx.logfile);

    /* a spec of its options: one with its hints, two without (derived), one without the type column */
    cr_assert_eq(sh("printf '# the toy engine\\nNullR, int, 3, 1, 6, 0.5, 0.002\\nNullMargin, int, 2, 0, 600\\n"
                    "NullMarginDepth, 2, 0, 100\\n' > spec"), 0, "%s", out);
    const char *common = "--nodes 1000 --pairs 8 --pairs-per-task 2 --sign-key operator.key";
    cr_assert_eq(sh(TUNE " spsa new --engine toy --ref %s --spec spec %s", commit, common), 0, "%s", out);
    int64_t run = run_id();
    cr_assert_gt(run, 0, "%s", out);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.engine, "toy");
    cr_assert_str_eq(r.kind, "spsa");
    cr_assert(r.build0[0] && strcmp(r.build0, r.build1) == 0, "both sides play the build: %s %s", r.build0, r.build1);
    store_run_free(&r);
    StoreSpsa *st = malloc(sizeof *st);
    cr_assert_eq(store_spsa_load(cu_fx.store, run, st), 1);
    cr_assert_eq(st->count, 3);
    cr_assert_str_eq(st->params[1].name, "NullMargin");
    cr_assert_float_eq(st->params[1].c_end, 30, 1e-9, "(600 - 0) / 20");
    cr_assert_float_eq(st->params[1].r_end, 0.002, 1e-12);
    cr_assert_float_eq(st->params[2].c_end, 5, 1e-9, "(100 - 0) / 20");
    cr_assert_float_eq(st->params[0].c_end, 0.5, 1e-12, "given");

    /* bad specs: status 2, the problem named, no run */
    int before = runs_count();
    static const struct { const char *lines, *expect; } BAD[] = {
        { "NullR, int, 9, 1, 6\\n", "--spec bad: line 1: NullR: start 9 is outside [1, 6]" },
        { "NullR, int, 3, 6, 6\\n", "line 1: NullR: min 6 is not below max 6" },
        { "NullR, int, 3, 1, 6\\nNullMargin, int, 2\\n", "line 2: expected 'name, int|float, start, min, max" },
        { "NullR, int, 3, 1, 6\\nNullR, int, 3, 1, 5\\n", "line 2: NullR given twice" },
        { "NullR, int, 3, 1, 6\\nNoSuchOption, int, 3, 1, 6\\n", "engine toy (build " },
        { "NullR, int, 3, 1, 100000\\n", "NullR: [1, 100000] is outside the option's bounds" },
        { "Skill Level, int, 3, 1, 20\\n", "--params: " },
        { "Hash, int, 16, 1, 64\\n", "'Hash' is the worker's to set" },
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        cr_assert_eq(sh("printf '%s' > bad && " TUNE " spsa new --engine toy --ref %s --spec bad %s", BAD[i].lines,
                        commit, common), 2, "%s: %s", BAD[i].lines, out);
        cr_assert(strstr(out, BAD[i].expect), "'%s' does not say '%s'", out, BAD[i].expect);
    }
    cr_assert_eq(sh(TUNE " spsa new --engine toy --spec spec %s", common), 2, "%s", out);
    cr_assert(strstr(out, "--engine: engine toy plays its builds: give a ref"), "%s", out);
    cr_assert_eq(runs_count(), before, "nothing recorded");

    /* modify: new bounds and hints, a schedule, in the history; a name it does not tune changes nothing */
    cr_assert_eq(sh("printf 'NullMargin, int, 20, 10, 300, 12, 0.001\\n' > spec2 && " TUNE
                    " modify %" PRId64 " --spsa-spec spec2 --alpha 0.7", run), 0, "%s", out);
    cr_assert_eq(store_spsa_load(cu_fx.store, run, st), 1);
    cr_assert_float_eq(st->params[1].min, 10, 1e-9);
    cr_assert_float_eq(st->params[1].max, 300, 1e-9);
    cr_assert_float_eq(st->params[1].theta, 10, 1e-9, "theta moved into the new bounds");
    cr_assert_float_eq(st->params[1].c_end, 12, 1e-9);
    cr_assert_float_eq(st->alpha, 0.7, 1e-12);
    cr_assert_eq(sh(TUNE " show %" PRId64, run), 0, "%s", out);
    cr_assert(strstr(out, "modify spsa NullMargin [0, 600] c_end 30 r_end 0.002 -> [10, 300] c_end 12 r_end 0.001 "
                          "(theta 2 -> 10), alpha 0.602 -> 0.7"), "%s", out);
    cr_assert_eq(sh("printf 'Bogus, int, 20, 10, 300\\n' > spec3 && " TUNE " modify %" PRId64
                    " --spsa-spec spec3 --priority 5", run), 2, "%s", out);
    cr_assert(strstr(out, "Bogus is not a parameter of run"), "%s", out);
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_eq(r.priority, 0, "all or nothing");
    store_run_free(&r);

    /* export: setoption lines and Fishtest's paste block of theta rounded */
    cr_assert_eq(sh(TUNE " export %" PRId64 " --format setoption", run), 0, "%s", out);
    cr_assert(strstr(out, "setoption name NullR value 3\nsetoption name NullMargin value 10\n"
                          "setoption name NullMarginDepth value 2\n"), "%s", out);
    cr_assert_eq(sh(TUNE " export %" PRId64 " --format paste", run), 0, "%s", out);
    cr_assert_str_eq(out, "NullR, 3\nNullMargin, 10\nNullMarginDepth, 2\n");
    cr_assert_eq(sh(TUNE " export %" PRId64, run), 0, "%s", out);
    cr_assert(strstr(out, "NullMargin = 10\n"), "%s", out);
    cr_assert_eq(sh(TUNE " export %" PRId64 " --format json", run), 2, "%s", out);
    cr_assert_eq(sh(TUNE " stop %" PRId64, run), 0, "%s", out);

    /* 300 options: the run and the task the coordinator hands out carry every one */
    cr_assert_eq(sh("'%s/xqf-engine' params | head -n 300 | cut -d, -f1-5 > spec300 && wc -l < spec300", XQF_BIN), 0,
                 "%s", out);
    cr_assert_eq(atoi(out), 300, "%s", out);
    cr_assert_eq(sh(TUNE " spsa new --engine toy --ref %s --spec spec300 %s", commit, common), 0, "%s", out);
    int64_t big = run_id();
    cr_assert_gt(big, 0, "%s", out);
    cr_assert_eq(store_spsa_load(cu_fx.store, big, st), 1);
    cr_assert_eq(st->count, 300);
    cu_track(cu_coordinator(cu_fx.db_coordinator, cu_fx.port, "30", cu_fx.logfile));
    CuClient c;
    XqfMsg m;
    char why[512];
    cr_assert_eq(cu_client_first_task(&c, cu_fx.port, "spsa-probe", 20, &m, why, sizeof why), 0, "%s (log: %s)", why,
                 cu_fx.logfile);
    const XqfMsg_task *t = &m.u.task;
    cr_assert_eq((int64_t)t->run_id, big);
    cr_assert_str_eq(t->kind, "spsa");
    cr_assert_str_eq(t->engine, "toy");
    cr_assert(t->build0[0] && strcmp(t->build0, t->build1) == 0);
    cr_assert_gt(strlen(t->params0), 4096, "longer than protocol 10 allowed");
    /* each side's set with a comma before it: ",Name=" finds a name whole */
    static char sets[2][XQF_PARAMS_MAX + 2];
    snprintf(sets[0], sizeof sets[0], ",%s", t->params0);
    snprintf(sets[1], sizeof sets[1], ",%s", t->params1);
    for (int i = 0; i < st->count; i++) {
        char item[96];
        snprintf(item, sizeof item, ",%s=", st->params[i].name);
        for (int side = 0; side < 2; side++) {
            const char *at = strstr(sets[side], item);
            cr_assert(at, "%s missing from side %d's set", st->params[i].name, side);
            int v = atoi(at + strlen(item));
            cr_assert(v >= st->params[i].min && v <= st->params[i].max, "%s=%d out of bounds", st->params[i].name, v);
        }
    }
    xqf_msg_free(&m);
    cu_client_close(&c);
    free(st);
}

/*
 * A float option (OpenBench's `float` line) of another engine: a float
 * for an option the build lists as a spin is refused, naming it; one the
 * build does not list (a string option to UCI) is tuned, each task's sets
 * carrying it as a decimal beside the integers, and the export writes
 * theta as that decimal.
 */
Test(engine_spsa, a_float_option_travels_as_a_decimal)
{
    CU_REQUIRE_DB();
    char commit[41];
    cr_assert_eq(cu_toy_engine(commit), 0, "the toy engine (see %s)", cu_fx.logfile);
    const char *common = "--nodes 1000 --pairs 8 --pairs-per-task 2 --sign-key operator.key";
    int before = runs_count();
    cr_assert_eq(sh("printf 'NullR, float, 3, 1, 6\\n' > spin.spec && " TUNE " spsa new --engine toy --ref %s "
                    "--spec spin.spec %s", commit, common), 2, "%s", out);
    cr_assert(strstr(out, "--spec: NullR is a float, but build ") && strstr(out, "lists it as a spin option"), "%s",
              out);
    cr_assert_eq(runs_count(), before, "nothing recorded");
    cr_assert_eq(sh("printf 'Scale, float, 0.5, 0.1, 0.9\\nNullR, int, 3, 1, 6\\n' > float.spec && " TUNE
                    " spsa new --engine toy --ref %s --spec float.spec %s", commit, common), 0, "%s", out);
    cr_assert(strstr(out, "warning: --spec: Scale is a float, not one of the spin options"), "%s", out);
    int64_t run = run_id();
    cr_assert_gt(run, 0, "%s", out);
    StoreSpsa *st = malloc(sizeof *st);
    cr_assert(st);
    cr_assert_eq(store_spsa_load(cu_fx.store, run, st), 1);
    cr_assert(st->params[0].is_float && !st->params[1].is_float, "the types are kept");
    cr_assert_float_eq(st->params[0].c_end, 0.04, 1e-12, "(0.9 - 0.1) / 20, no int floor");
    free(st);
    cr_assert_eq(sh(TUNE " export %" PRId64 " --format setoption", run), 0, "%s", out);
    cr_assert_str_eq(out, "setoption name Scale value 0.5\nsetoption name NullR value 3\n");

    cu_track(cu_coordinator(cu_fx.db_coordinator, cu_fx.port, "30", cu_fx.logfile));
    CuClient c;
    XqfMsg m;
    char why[512];
    cr_assert_eq(cu_client_first_task(&c, cu_fx.port, "spsa-probe", 20, &m, why, sizeof why), 0, "%s (log: %s)", why,
                 cu_fx.logfile);
    const XqfMsg_task *t = &m.u.task;
    cr_assert_eq((int64_t)t->run_id, run);
    const char *sets[2] = { t->params0, t->params1 };
    double scale[2];
    for (int side = 0; side < 2; side++) {
        char text[32];
        int nullr;
        cr_assert_eq(sscanf(sets[side], "Scale=%31[^,],NullR=%d", text, &nullr), 2, "%s", sets[side]);
        cr_assert(strchr(text, '.') && !strchr(text, 'e'), "a decimal: %s", text);
        scale[side] = strtod(text, NULL);
        cr_assert(scale[side] > 0.1 && scale[side] < 0.9, "%s", text);
        cr_assert(nullr >= 1 && nullr <= 6, "%s", sets[side]);
    }
    cr_assert_float_eq(scale[0] + scale[1], 1.0, 1e-6, "0.5 + c_k against 0.5 - c_k, unrounded: %s %s", sets[0],
                       sets[1]);
    cr_assert_gt(scale[0] - scale[1] > 0 ? scale[0] - scale[1] : scale[1] - scale[0], 0.01, "perturbed");
    xqf_msg_free(&m);
    cu_client_close(&c);
}

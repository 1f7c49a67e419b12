/*
 * Engines as records (032_engines.sql) against a real PostgreSQL
 * (XQF_TEST_DB; skipped without it): ours, xqf, present after the
 * migration as today's builds make it; xqf-tune engine add, list, show and
 * modify round trip, with the modification's history; every bad record
 * refused with its message and exit status 2, nothing recorded; only an
 * operator (the schema's owner) adds or changes engines, and the programs'
 * roles read what role_grants gives them.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster_util.h"
#include "store_test.h"
#include "store_engines.h"

TestSuite(engines, .init = cu_fixture_init, .fini = cu_fixture_fini, .timeout = 120);

/* Runs xqf-tune with args (a shell fragment); its stdout in out. Returns the exit status. */
static int tune(char *out, size_t size, const char *args)
{
    int st = cu_tune(out, size, args, cu_fx.logfile);
    cr_assert_geq(st, -1, "cannot run xqf-tune");
    return st;
}

/* Whether the log of the test's processes (xqf-tune's stderr) says text. */
static bool log_says(const char *text)
{
    FILE *f = fopen(cu_fx.logfile, "r");
    if (!f)
        return false;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strstr(buf, text) != NULL;
}

/* How many engines and history rows there are: what a refused command must leave as it was. */
static void counts(int *engines, int *history)
{
    EngineRecord *es = NULL;
    *engines = store_engine_list(cu_fx.store, &es);
    cr_assert_geq(*engines, 0);
    *history = 0;
    for (int i = 0; i < *engines; i++) {
        StoreEngineChange *h = NULL;
        int n = store_engine_history(cu_fx.store, es[i].name, &h);
        cr_assert_geq(n, 0);
        *history += n;
        free(h);
    }
    free(es);
}

/* A statement run as a program's role, and whether the role may run it. */
typedef struct {
    const char *conninfo, *sql;
    bool ok;
} PrivilegeCase;

/* Each case run as its role: done when it may, else refused for privilege (42501). */
static void check_privileges(const PrivilegeCase *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        Store *s = store_new(cases[i].conninfo);
        cr_assert(s && store_connect(s) == 0, "cannot connect with %s", cases[i].conninfo);
        char error[512] = "";
        int rc = store_exec(s, cases[i].sql, error, sizeof error);
        if (cases[i].ok)
            cr_assert_eq(rc, 0, "%s: %s: %s", store_role(s), cases[i].sql, error);
        else
            cr_assert(rc == -1 && strncmp(error, "42501 ", 6) == 0, "%s: %s: not refused for privilege: %s",
                      store_role(s), cases[i].sql, error);
        store_destroy(&s);
    }
}

Test(engines, ours_is_the_first_record)
{
    CU_REQUIRE_DB();
    EngineRecord e;
    cr_assert_eq(store_engine_load(cu_fx.store, "xqf", &e), 1);
    cr_assert_eq(e.id, 1);
    cr_assert_str_eq(e.cmake_target, "xqf-engine");
    cr_assert_str_empty(e.build_command);
    cr_assert_str_eq(e.binary, "bin/xqf-engine");
    cr_assert_str_eq(e.bench_command, "<binary> bench");
    cr_assert_eq(e.protocol, ENGINE_UCI);
    cr_assert(!e.ranks_from_one && !e.he_letters && e.init_count == 0 && !e.needs_net);
    cr_assert_str_eq(e.hash_option, "Hash");
    cr_assert_str_eq(e.threads_option, "Threads");
    cr_assert_str_eq(e.net_option, "EvalFile");
    cr_assert_eq(e.ref_nps, 1000000, "xqf-tune's --ref-nps default");
    char why[256];
    cr_assert(engine_record_check(&e, why, sizeof why), "%s", why);
    /* its regexes read its bench's format */
    int64_t nodes, nps;
    cr_assert_eq(engine_record_bench(&e, "Position  1/14: bestmove h2e2 nodes 7\n\nNodes searched: 3920475\n"
                                         "Nodes/second: 812345\nEvaluation: hand-crafted\n",
                                     &nodes, &nps, why, sizeof why), 0, "%s", why);
    cr_assert(nodes == 3920475 && nps == 812345);

    char out[4096];
    cr_assert_eq(tune(out, sizeof out, "engine list"), 0);
    cr_assert_eq(strncmp(out, "1 xqf uci bench .\n", 18), 0, "%s", out);
    cr_assert_eq(tune(out, sizeof out, "engine show xqf"), 0);
    cr_assert_not_null(strstr(out, "Build: cmake target xqf-engine\n"), "%s", out);
    cr_assert_not_null(strstr(out, "Reference speed: 1000000 nodes/s\n"), "%s", out);
    cr_assert_not_null(strstr(out, "History: none\n"), "%s", out);
}

Test(engines, add_list_show_modify_round_trip)
{
    CU_REQUIRE_DB();
    char out[8192];
    cr_assert_eq(tune(out, sizeof out, "engine add pikafish --repo https://github.com/official-pikafish/Pikafish "
                                       "--build 'make -C src -j build EXE=<out>' --needs-net yes --ref-nps 900000 "
                                       "--init 'setoption name UCI_Variant value xiangqi' --init isready"), 0);
    cr_assert_not_null(strstr(out, "Engine: pikafish\nId: "), "%s", out);
    cr_assert_eq(tune(out, sizeof out, "engine add eleeye --repo /srv/eleeye --bench none --bench-depth 8 "
                                       "--protocol ucci --hash-option hashsize --threads-option '' "
                                       "--net-option ''"), 0);
    cr_assert_eq(tune(out, sizeof out, "engine list"), 0);
    cr_assert_not_null(strstr(out, " pikafish uci bench https://github.com/official-pikafish/Pikafish\n"), "%s", out);
    cr_assert_not_null(strstr(out, " eleeye ucci no-bench /srv/eleeye\n"), "%s", out);

    /* what add was given, what it defaulted */
    EngineRecord e;
    cr_assert_eq(store_engine_load(cu_fx.store, "pikafish", &e), 1);
    cr_assert_str_eq(e.build_command, "make -C src -j build EXE=<out>");
    cr_assert_str_eq(e.binary, "<out>");
    cr_assert_str_eq(e.bench_command, "<binary> bench");
    cr_assert_str_eq(e.nodes_re, ENGINE_DEFAULT_NODES_RE);
    cr_assert(e.needs_net && e.ref_nps == 900000 && e.init_count == 2);
    cr_assert_str_eq(e.init[0], "setoption name UCI_Variant value xiangqi");
    cr_assert_str_eq(e.init[1], "isready");
    cr_assert_eq(store_engine_load(cu_fx.store, "eleeye", &e), 1);
    cr_assert(e.protocol == ENGINE_UCCI && !e.bench_command[0] && e.bench_depth == 8);
    cr_assert(!e.threads_option[0] && !e.net_option[0]);
    cr_assert_str_eq(e.hash_option, "hashsize");
    cr_assert_eq(tune(out, sizeof out, "engine show eleeye"), 0);
    cr_assert_not_null(strstr(out, "Bench: none (the bench positions searched to depth 8"), "%s", out);
    cr_assert_not_null(strstr(out, "Protocol: ucci (ranks 0-9, letters N/B)\n"), "%s", out);
    cr_assert_not_null(strstr(out, "Threads option: none\n"), "%s", out);
    cr_assert_eq(tune(out, sizeof out, "engine modify eleeye --threads-option Threads --bench '<binary> bench'"), 0);
    cr_assert_not_null(strstr(out, "Changed: threads_option: none -> Threads\n"), "%s", out);
    cr_assert_not_null(strstr(out, "Changed: bench_command: none -> <binary> bench\n"), "%s", out);

    /* modify: what is given changes, the rest stays, the history says who changed what */
    cr_assert_eq(tune(out, sizeof out, "engine modify pikafish --ranks 1 --letters he --init '' --ref-nps 1200000 "
                                       "--bench-nps 'speed ([0-9]+)'"), 0);
    cr_assert_not_null(strstr(out, "Changed: ref_nps: 900000 -> 1200000\n"), "%s", out);
    cr_assert_not_null(strstr(out, "Changed: ranks_from_one: false -> true\n"), "%s", out);
    cr_assert_eq(store_engine_load(cu_fx.store, "pikafish", &e), 1);
    cr_assert(e.ranks_from_one && e.he_letters && e.init_count == 0 && e.ref_nps == 1200000);
    cr_assert_str_eq(e.nps_re, "speed ([0-9]+)");
    cr_assert_str_eq(e.build_command, "make -C src -j build EXE=<out>", "left as it was");
    StoreEngineChange *h = NULL;
    int n = store_engine_history(cu_fx.store, "pikafish", &h);
    cr_assert_eq(n, 5, "bench_nps_re, he_letters, init, ranks_from_one, ref_nps: %d rows", n);
    for (int i = 0; i < n; i++)
        cr_assert_eq(strncmp(h[i].actor, "xqf-tune:", 9), 0, "%s", h[i].actor);
    cr_assert_str_eq(h[0].field, "bench_nps_re");
    cr_assert_str_eq(h[0].old_value, ENGINE_DEFAULT_NPS_RE);
    cr_assert_str_eq(h[0].new_value, "speed ([0-9]+)");
    free(h);

    /* without $USER (cron, systemd, docker exec) the actor is still the account that ran the command */
    char *user = getenv("USER") ? strdup(getenv("USER")) : NULL;
    unsetenv("USER");
    int st = tune(out, sizeof out, "engine modify eleeye --ref-nps 777000");
    if (user) {
        setenv("USER", user, 1);
        free(user);
    }
    cr_assert_eq(st, 0, "%s", out);
    const struct passwd *pw = getpwuid(geteuid());
    cr_assert_not_null(pw);
    char want[128];
    snprintf(want, sizeof want, "xqf-tune:%s", pw->pw_name);
    n = store_engine_history(cu_fx.store, "eleeye", &h);
    bool seen = false;
    for (int i = 0; i < n; i++)
        if (!strcmp(h[i].field, "ref_nps")) {
            cr_assert_str_eq(h[i].actor, want);
            seen = true;
        }
    cr_assert(seen, "the ref_nps change is in eleeye's history");
    free(h);

    /* a build command replaced by a CMake target, and back */
    cr_assert_eq(tune(out, sizeof out, "engine modify pikafish --cmake-target pikafish --binary build/pikafish"), 0);
    cr_assert_eq(store_engine_load(cu_fx.store, "pikafish", &e), 1);
    cr_assert(!e.build_command[0] && strcmp(e.cmake_target, "pikafish") == 0);
    cr_assert_eq(tune(out, sizeof out, "engine modify pikafish --build 'make -j EXE=<out>' --binary '<out>'"), 0);
    cr_assert_eq(store_engine_load(cu_fx.store, "pikafish", &e), 1);
    cr_assert(!e.cmake_target[0] && strcmp(e.build_command, "make -j EXE=<out>") == 0);

    /* the same again changes nothing, and says so */
    cr_assert_eq(tune(out, sizeof out, "engine modify pikafish --ref-nps 1200000"), 0);
    cr_assert_not_null(strstr(out, "Unchanged"), "%s", out);
    cr_assert_eq(tune(out, sizeof out, "engine show pikafish"), 0);
    cr_assert_not_null(strstr(out, "History:\n  "), "%s", out);
    cr_assert_not_null(strstr(out, ": ref_nps: 900000 -> 1200000\n"), "%s", out);
    cr_assert_not_null(strstr(out, "Protocol: uci (ranks 1-10, letters H/E)\n"), "%s", out);
}

/* Each bad record or command: exit status 2, the message naming the problem, nothing recorded. */
Test(engines, bad_records_are_refused_and_nothing_is_recorded)
{
    CU_REQUIRE_DB();
    char out[4096];
    cr_assert_eq(tune(out, sizeof out, "engine add sjaak --repo /srv/sjaak"), 0);
    int engines0, history0;
    counts(&engines0, &history0);
    const struct {
        const char *args, *message;
    } bad[] = {
        { "engine add x --repo r --build ''", "--build: give the build command" },
        { "engine add x --repo r --binary ''", "--binary: give the binary" },
        { "engine add x --repo r --binary /usr/games/x", "--binary: '/usr/games/x' is not a path inside" },
        { "engine add x --repo r --cmake-target x", "--binary: with --cmake-target" },
        { "engine add x --repo r --build make --cmake-target x --binary x", "give one of them, not both" },
        { "engine add x --repo r --protocol xboard", "--protocol: 'xboard' is not a protocol" },
        { "engine add x --repo r --letters hx", "--letters: 'hx'" },
        { "engine add x --repo r --ranks 2", "--ranks: '2'" },
        { "engine add x --repo r --bench-nodes 'Nodes ([0-9]+'", "--bench-nodes: 'Nodes ([0-9]+' does not compile" },
        { "engine add x --repo r --bench-nps 'nps [0-9]+'", "--bench-nps: 'nps [0-9]+' has no group" },
        { "engine add x --repo r --ref-nps -5", "--ref-nps: '-5'" },
        { "engine add x --repo r --hash-option \"$(printf 'Hash\\nX')\"", "--hash-option: a control character" },
        { "engine add x --repo r --net-option \"$(printf 'Eval\\tFile')\"", "--net-option: a control character" },
        { "engine add x --repo r --init \"$(printf 'a\\nb')\"", "--init: a control character" },
        { "engine add x --repo r --needs-net maybe", "--needs-net: yes or no" },
        { "engine add x --repo r --needs-net yes --net-option ''", "--net-option: an engine that needs a net" },
        { "engine add x --repo r --bench none --bench-depth 0", "--bench-depth: '0'" },
        { "engine add x --repo r --bench ''", "--bench: a command" },
        { "engine add x", "give --repo" },
        { "engine add x --repo ''", "--repo: give the engine's git repository" },
        { "engine add 'bad name' --repo r", "NAME: 'bad name' is not an engine name" },
        { "engine add sjaak --repo r", "'sjaak' exists" },
        { "engine add xqf --repo r", "'xqf' exists" },
        { "engine modify nosuch --ranks 1", "no engine 'nosuch'" },
        { "engine modify sjaak", "nothing to change" },
        { "engine modify sjaak --bench-nodes '('", "--bench-nodes: '(' does not compile" },
        { "engine modify sjaak --protocol xboard", "--protocol: 'xboard'" },
        { "engine modify xqf --binary '<out>'", "--binary: with --cmake-target" },
        { "engine show nosuch", "no engine 'nosuch'" },
        { "engine show", "give the engine's NAME" },
        { "engine list --repo r", "takes no settings" },
        { "engine remove sjaak", "add, list, show or modify" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        truncate(cu_fx.logfile, 0);
        cr_assert_eq(tune(out, sizeof out, bad[i].args), 2, "%s", bad[i].args);
        cr_assert(log_says(bad[i].message), "%s: no message '%s'", bad[i].args, bad[i].message);
        int engines, history;
        counts(&engines, &history);
        cr_assert(engines == engines0 && history == history0, "%s recorded something", bad[i].args);
    }
    EngineRecord e;
    cr_assert_eq(store_engine_load(cu_fx.store, "x", &e), 0);
}

/*
 * Only an operator adds or changes engines: xqf-tune connected as a
 * program's role (here the coordinator's and the dashboard's) is refused
 * with status 2, and the roles read what role_grants gives them.
 */
Test(engines, only_an_operator_changes_them)
{
    CU_REQUIRE_DB();
    if (!cu_fx.roles)
        cr_skip("the programs' login roles cannot be used on XQF_TEST_DB's cluster (ops/pg start makes them)");
    char out[4096], args[1024];
    const char *as[] = { cu_fx.db_coordinator, cu_fx.db_web };
    for (size_t i = 0; i < sizeof as / sizeof as[0]; i++) {
        truncate(cu_fx.logfile, 0);
        snprintf(args, sizeof args, "engine add x --repo r --db '%s'", as[i]);
        cr_assert_eq(tune(out, sizeof out, args), 2, "%s", args);
        cr_assert(log_says("only an operator adds or changes engines"), "%s", args);
        snprintf(args, sizeof args, "engine modify xqf --ref-nps 5 --db '%s'", as[i]);
        cr_assert_eq(tune(out, sizeof out, args), 2, "%s", args);
        snprintf(args, sizeof args, "engine list --db '%s'", as[i]);
        cr_assert_eq(tune(out, sizeof out, args), 0, "%s reads the engines", args);
    }
    EngineRecord e;
    cr_assert_eq(store_engine_load(cu_fx.store, "xqf", &e), 1);
    cr_assert_eq(e.ref_nps, 1000000);

    /* in SQL: the builder and the coordinator read the engines, the dashboard their history too; none writes */
    const PrivilegeCase cases[] = {
        { cu_fx.db_coordinator, "SELECT count(*) FROM engines", true },
        { cu_fx.db_coordinator, "UPDATE engines SET ref_nps = 5", false },
        { cu_fx.db_coordinator, "SELECT count(*) FROM engine_history", false },
        { cu_fx.db_builder, "SELECT count(*) FROM engines", true },
        { cu_fx.db_builder, "INSERT INTO engines (name, repo, build_command, binary_path) VALUES ('y', 'r', 'm', 'b')",
          false },
        { cu_fx.db_web, "SELECT count(*) FROM engines", true },
        { cu_fx.db_web, "SELECT count(*) FROM engine_history", true },
        { cu_fx.db_web, "DELETE FROM engines", false },
        { cu_fx.db_web, "INSERT INTO engine_history (engine_id, actor, field) VALUES (1, 'me', 'x')", false },
        { cu_fx.db_signer, "SELECT count(*) FROM engines", false },
    };
    check_privileges(cases, sizeof cases / sizeof cases[0]);
}

/* The presets of engine as xqf-tune preset list prints them (one line each), into out. */
static void preset_lines(const char *engine, char *out, size_t size)
{
    char args[128];
    snprintf(args, sizeof args, "preset list %s", engine);
    cr_assert_eq(tune(out, size, args), 0, "%s", args);
}

/* The number a query (psql, the fixture's database) answers. */
static int64_t sql_count(const char *sql)
{
    char cmd[1024], out[64] = "";
    snprintf(cmd, sizeof cmd, "psql -qAt '%s' -c \"%s\" 2>>'%s'", cu_fx.db, sql, cu_fx.logfile);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    cr_assert_eq(WEXITSTATUS(pclose(p)), 0, "%s", sql);
    return strtoll(out, NULL, 10);
}

/* How many lines the events log has (web_audit), of action like pattern. */
static int64_t events(const char *pattern)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM web_audit WHERE action LIKE '%s'", pattern);
    return sql_count(sql);
}

/*
 * Ours has its presets from the migration (STC, LTC, SMP, regression);
 * preset set stores one after checking each value by its option's
 * parsing, with the events log's line in the same statement; a second
 * set replaces it whole; remove takes it out, logged too.
 */
Test(engines, presets_are_set_listed_and_removed_with_their_events)
{
    CU_REQUIRE_DB();
    char out[8192];
    preset_lines("xqf", out, sizeof out);
    cr_assert_not_null(strstr(out, "xqf STC --alpha 0.05 --beta 0.05 --elo0 0 --elo1 5 --max-pairs 50000 --tc 10+0.1 "),
                       "%s", out);
    cr_assert_not_null(strstr(out, "xqf LTC "), "%s", out);
    cr_assert_not_null(strstr(out, "xqf SMP ") && strstr(out, "--threads 8"), "%s", out);
    cr_assert_not_null(strstr(out, "xqf regression --pairs 10000 --tc 60+0.6"), "%s", out);

    int64_t set0 = events("engine preset set"), removed0 = events("engine preset remove");
    cr_assert_eq(tune(out, sizeof out, "preset set xqf quick --tc 2+0.02 --elo1 3 max-pairs=400 resign-moves=0"), 0);
    cr_assert_str_eq(out, "Preset: xqf quick\n");
    cr_assert_eq(events("engine preset set"), set0 + 1, "set writes its line of the events log");
    cr_assert_eq(sql_count("SELECT count(*) FROM web_audit WHERE action = 'engine preset set' AND detail = "
                           "'xqf quick: tc=2+0.02 elo1=3 max-pairs=400 resign-moves=0' AND actor LIKE 'xqf-tune:%'"),
                 1, "the line says the engine, the preset and its settings, and who set it");
    StorePreset *ps = NULL;
    int n = store_preset_list(cu_fx.store, "xqf", &ps);
    cr_assert_eq(n, 5);
    const StorePreset *q = NULL;
    for (int i = 0; i < n; i++)
        if (strcmp(ps[i].name, "quick") == 0)
            q = &ps[i];
    cr_assert_not_null(q);
    cr_assert_eq(q->count, 4);
    cr_assert(strcmp(q->settings[0].key, "elo1") == 0 && strcmp(q->settings[0].value, "3") == 0);
    cr_assert(strcmp(q->settings[3].key, "tc") == 0 && strcmp(q->settings[3].value, "2+0.02") == 0);
    free(ps);

    /* set again: replaced whole, not merged */
    cr_assert_eq(tune(out, sizeof out, "preset set xqf quick --nodes 5000"), 0);
    preset_lines("xqf", out, sizeof out);
    cr_assert_not_null(strstr(out, "xqf quick --nodes 5000  ("), "%s", out);
    cr_assert_eq(events("engine preset set"), set0 + 2);

    cr_assert_eq(tune(out, sizeof out, "preset remove xqf quick"), 0);
    cr_assert_str_eq(out, "Removed: xqf quick\n");
    cr_assert_eq(events("engine preset remove"), removed0 + 1, "remove writes its line of the events log");
    preset_lines("xqf", out, sizeof out);
    cr_assert_null(strstr(out, "quick"), "%s", out);
    /* the log lists them as the engines' events */
    cr_assert_eq(tune(out, sizeof out, "log --of engine"), 0);
    cr_assert_not_null(strstr(out, "engine preset remove"), "%s", out);
}

/* A preset the rules refuse: its problem named, exit status 2, nothing stored and nothing logged. */
Test(engines, bad_presets_are_refused_and_nothing_is_stored)
{
    CU_REQUIRE_DB();
    char out[8192], before[8192], after[8192];
    preset_lines("", before, sizeof before);
    int64_t set0 = events("engine preset%");
    const struct {
        const char *args, *message;
    } bad[] = {
        { "preset set xqf Q --elo0 x", "--elo0: 'x' is not a number" },
        { "preset set xqf Q elo0=x", "--elo0: 'x' is not a number" },
        { "preset set xqf Q --max-pairs 0", "--max-pairs: '0'" },
        { "preset set xqf Q --threads 1000", "--threads: '1000'" },
        { "preset set xqf Q tc=abc", "--tc: 'abc' is not BASE+INC" },
        { "preset set xqf Q --tc 10+x", "--tc: '10+x'" },
        { "preset set xqf Q --tc 10+0.1 --nodes 500", "--tc and --nodes" },
        { "preset set xqf Q --tc-base 5+0.05", "--tc-base (time odds) needs --tc" },
        { "preset set xqf Q --book-format docx --tc 1+0.01", "--book-format: 'docx' is none of" },
        { "preset set xqf Q --colour red", "unknown option '--colour'" },
        { "preset set xqf Q colour=red", "--colour: not a setting a preset holds" },
        { "preset set xqf Q gamma=0.1", "--gamma: not a setting a preset holds" },
        { "preset set xqf Q tc=1+0.01 tc=2+0.02", "--tc given twice" },
        { "preset set xqf Q --tc 1+0.01 tc=2+0.02", "--tc given twice" },
        { "preset set xqf Q notavalue", "'notavalue' is no OPTION=VALUE" },
        { "preset set xqf Q", "a preset has 1-32 settings" },
        { "preset set xqf 'bad name' --tc 1+0.01", "a preset's name is 1-32 letters" },
        { "preset set xqf Q -x", "'-x' is no OPTION=VALUE" },
        { "preset set nosuch Q --tc 1+0.01", "no engine 'nosuch'" },
        { "preset set xqf", "give the ENGINE and the preset's NAME" },
        { "preset remove xqf nosuch", "engine 'xqf' has no preset 'nosuch'" },
        { "preset list --tc 1+0.01", "takes no settings" },
        { "preset drop xqf STC", "set, list or remove" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        truncate(cu_fx.logfile, 0);
        cr_assert_eq(tune(out, sizeof out, bad[i].args), 2, "%s", bad[i].args);
        cr_assert(log_says(bad[i].message), "%s: no message '%s'", bad[i].args, bad[i].message);
        preset_lines("", after, sizeof after);
        cr_assert_str_eq(after, before, "%s stored something", bad[i].args);
        cr_assert_eq(events("engine preset%"), set0, "%s logged something", bad[i].args);
    }
}

/* Only an operator sets or removes presets; the dashboard's role reads them (its forms and the engine's page). */
Test(engines, only_an_operator_sets_presets)
{
    CU_REQUIRE_DB();
    if (!cu_fx.roles)
        cr_skip("the programs' login roles cannot be used on XQF_TEST_DB's cluster (ops/pg start makes them)");
    char out[4096], args[1024];
    const char *as[] = { cu_fx.db_coordinator, cu_fx.db_web };
    for (size_t i = 0; i < sizeof as / sizeof as[0]; i++) {
        truncate(cu_fx.logfile, 0);
        snprintf(args, sizeof args, "preset set xqf Q --tc 1+0.01 --db '%s'", as[i]);
        cr_assert_eq(tune(out, sizeof out, args), 2, "%s", args);
        cr_assert(log_says("only an operator sets presets"), "%s", args);
        snprintf(args, sizeof args, "preset remove xqf STC --db '%s'", as[i]);
        cr_assert_eq(tune(out, sizeof out, args), 2, "%s", args);
    }
    const PrivilegeCase cases[] = {
        { cu_fx.db_web, "SELECT count(*) FROM engine_presets", true },
        { cu_fx.db_web, "DELETE FROM engine_presets", false },
        { cu_fx.db_web, "SELECT xqf_engine_preset_remove('xqf', 'STC', 'me')", false },
        { cu_fx.db_coordinator, "SELECT count(*) FROM engine_presets", false },
    };
    check_privileges(cases, sizeof cases / sizeof cases[0]);
    StorePreset *ps = NULL;
    cr_assert_eq(store_preset_list(cu_fx.store, "xqf", &ps), 4, "nothing changed");
    free(ps);
}

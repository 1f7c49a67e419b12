/*
 * Least privilege in PostgreSQL (schemas/sql/migrations/030_roles.sql) against
 * a real PostgreSQL (XQF_TEST_DB; skipped without it, and without the
 * programs' login roles, which ops/pg makes): each program's role tries
 * what it must not do, directly in SQL, and is refused (SQLSTATE 42501,
 * insufficient privilege), then does its work through the store as the
 * program would.  The dashboard's role changes runs and accounts only
 * through the SECURITY DEFINER functions; the coordinator's never touches
 * accounts, signatures or approvals; the builder cannot sign, the signer
 * cannot build; only the owner migrates, and a migration run gives each
 * role exactly what role_grants says.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cluster_util.h"
#include "migrations.h"
#include "store_builds.h"
#include "store_runs.h"
#include "store_spsa.h"
#include "store_steer.h"
#include "store_tasks.h"
#include "store_users.h"
#include "store_web.h"

TestSuite(roles, .init = cu_fixture_init, .fini = cu_fixture_fini, .timeout = 120);

#define REQUIRE_ROLES()                                                                          \
    do {                                                                                         \
        CU_REQUIRE_DB();                                                                         \
        if (!cu_fx.roles)                                                                        \
            cr_skip("the programs' login roles cannot be used on XQF_TEST_DB's cluster "          \
                    "(ops/pg start makes them)");                                                \
    } while (0)

/* A store connected as conninfo's role. */
static Store *connect_as(const char *conninfo)
{
    Store *s = store_new(conninfo);
    cr_assert_not_null(s);
    cr_assert_eq(store_connect(s), 0, "cannot connect with %s", conninfo);
    cr_assert(!store_owns_schema(s), "%s owns the schema", store_role(s));
    return s;
}

/* sql (a format) run by s is refused for want of privilege. */
static void refused(Store *s, const char *fmt, ...)
{
    char sql[16384], error[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    cr_assert_eq(store_exec(s, sql, error, sizeof error), -1, "%s may: %s", store_role(s), sql);
    cr_assert(strncmp(error, "42501 ", 6) == 0, "%s: %s: not refused for privilege but: %s", store_role(s), sql,
              error);
}

/* sql (a format) run by s succeeds. */
static void allowed(Store *s, const char *fmt, ...)
{
    char sql[16384], error[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    cr_assert_eq(store_exec(s, sql, error, sizeof error), 0, "%s: %s: %s", store_role(s), sql, error);
}

/*
 * xqf_create_run as a role calls it in SQL: a pending SPRT owned by tester
 * named by the first %s, the settings kept as columns the second (JSON).
 */
#define CREATE_RUN_SQL                                                                                                \
    "SELECT xqf_create_run('%s', '', '', '', '', '{}', 1, 'sprt', 'test', 'base', "                          \
    "'{}', 0, 0, true, 0, 0, 0, false, '', '', 'tester', true, '%s')"

/* An SPRT created as the owner; pending (waiting for an admin) when pending. */
static int64_t new_run(bool pending)
{
    const char *book[1];
    cr_assert_eq(cu_book(book, 1), 1);
    StoreSprtSpec sp = { .name = "roles", .test_params = "", .base_params = "", .book = book, .book_lines = 1,
                         .seed = 1, .nodes = 300, .pairs_per_task = 2, .max_pairs = 10, .elo0 = 0, .elo1 = 5,
                         .alpha = 0.05, .beta = 0.05, .owner = "tester", .pending = pending };
    int64_t id;
    cr_assert_eq(store_create_sprt(cu_fx.store, &sp, &id), 0);
    return id;
}

static void state_is(int64_t run, const char *want)
{
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.state, want, "run %" PRId64, run);
}

/*
 * The dashboard's role reads everything it shows but writes nothing
 * directly: it cannot activate a pending run (the approval an admin's
 * form gives), finish one, drop a table, write accounts or sessions; it
 * approves, stops, adds an account and signs in through the functions,
 * and the account function never replaces an existing password.
 */
Test(roles, the_dashboard_writes_only_through_its_functions)
{
    REQUIRE_ROLES();
    int64_t run = new_run(true);
    state_is(run, "pending");
    Store *web = connect_as(cu_fx.db_web);
    allowed(web, "SELECT count(*) FROM runs, tasks, results, workers, web_users, web_sessions, web_audit");
    refused(web, "UPDATE runs SET state = 'active' WHERE id = %" PRId64, run);
    refused(web, "SELECT xqf_finish_run(%" PRId64 ", 'stopped', 'by sql', NULL)", run);
    refused(web, "DELETE FROM runs WHERE id = %" PRId64, run);
    refused(web, "DROP TABLE runs");
    refused(web, "TRUNCATE results");
    refused(web, "CREATE TABLE mine (x integer)");
    refused(web, "INSERT INTO web_users (name, role, pwhash) VALUES ('mallory', 'admin', 'x')");
    refused(web, "UPDATE web_users SET pwhash = 'x'");
    refused(web, "DELETE FROM web_sessions");
    refused(web, "INSERT INTO web_audit (actor, action) VALUES ('mallory', 'nothing happened')");
    refused(web, "UPDATE engine_builds SET signature = NULL");
    refused(web, "SELECT xqf_apply_grants()");
    refused(web, "SELECT xqf_build_signed(1, 'x', 'x')");
    refused(web, "SELECT xqf_build_pin(1, repeat('a', 40), 'subject', '')");
    state_is(run, "pending");

    /* through the functions, as the dashboard's actions go */
    cr_assert_eq(store_approve_run(web, run, NULL, NULL), 1);
    state_is(run, "active");
    cr_assert_eq(store_set_run_limits(web, run, 3, 20, 4), 1);
    char why[64];
    cr_assert_eq(store_plain_verb(web, "xqf_stop_run", run, "admin", why, sizeof why), 1);
    state_is(run, "stopped");
    cr_assert_eq(store_plain_verb(web, "xqf_stop_run", run, "admin", why, sizeof why), 0);
    cr_assert_str_eq(why, "has ended (stopped)");
    cr_assert_eq(store_web_audit(web, "admin", run, "stop", ""), 0);
    cr_assert_eq(store_web_user_add(web, "alice", "tester", "hash-1", false, "admin"), 1);
    cr_assert_eq(store_web_user_add(web, "alice", "admin", "hash-2", false, "admin"), 0, "an account is never replaced");
    StoreWebUser u;
    cr_assert_eq(store_web_user_get(web, "alice", &u), 1);
    cr_assert(strcmp(u.pwhash, "hash-1") == 0 && strcmp(u.role, "tester") == 0, "%s %s", u.role, u.pwhash);
    cr_assert_eq(store_web_user_add(web, "alice", "admin", "hash-2", true, "admin"), -1, "replacing is the owner's");
    cr_assert_eq(store_web_session_add(web, "token-hash", u.id, "csrf", 60), 0);
    char csrf[64];
    cr_assert_eq(store_web_session_get(web, "token-hash", &u, csrf, sizeof csrf), 1);
    cr_assert_eq(store_web_session_end(web, "token-hash"), 0);
    cr_assert_eq(store_web_session_get(web, "token-hash", &u, csrf, sizeof csrf), 0);

    /* a run created from a form: the run and its SPSA parameters through their functions */
    const char *book[1];
    cr_assert_eq(cu_book(book, 1), 1);
    StoreSpsaParam params[2] = { { .name = "NullR", .start = 3, .min = 1, .max = 5, .c_end = 1, .r_end = 0.002 },
                                 { .name = "RookMg", .start = 900, .min = 700, .max = 1100, .c_end = 20,
                                   .r_end = 0.002 } };
    StoreSpsaSpec ss = { .run = { .name = "tune", .test_params = "", .book = book, .book_lines = 1, .seed = 1,
                                  .nodes = 300, .pairs_per_task = 2, .max_pairs = 10, .owner = "tester",
                                  .pending = true },
                         .params = params, .count = 2, .alpha = 0.602, .gamma = 0.101, .a_ratio = 0.1 };
    int64_t spsa;
    cr_assert_eq(store_begin(web), 0);
    cr_assert_eq(store_create_spsa(web, &ss, &spsa), 0);
    cr_assert_eq(store_commit(web), 0);
    state_is(spsa, "pending");
    StoreSpsa *st = calloc(1, sizeof *st);
    cr_assert_eq(store_spsa_load(cu_fx.store, spsa, st), 1);
    cr_assert(st->count == 2 && strcmp(st->params[1].name, "RookMg") == 0 && st->params[1].theta == 900,
              "%d parameters", st->count);
    free(st);
    /* what a run tunes is fixed once it is created */
    refused(web, "INSERT INTO run_params (run_id, idx, name, start, min, max, c_end, r_end, theta) "
                 "VALUES (%" PRId64 ", 2, 'KnightMg', 1, 0, 2, 1, 1, 1)", spsa);
    allowed(web, "SELECT 1 WHERE xqf_create_spsa_params(%" PRId64 ", '{KnightMg}', '{1}', '{0}', '{2}', '{1}', '{1}') = 0",
            spsa);

    /* a chain from a form: through its functions, stages appended to a new chain only, in order */
    StoreChainStage sprt = { .kind = CHAIN_SPRT, .elo0 = 0, .elo1 = 5, .alpha = 0.05, .beta = 0.05, .max_pairs = 10,
                             .nodes = 300 };
    StoreChainSpec cs = { .name = "from a form", .spsa = &ss, .stages = &sprt, .count = 1 };
    int64_t chain;
    cr_assert_eq(store_create_chain(web, &cs, &chain), 0);
    refused(web, "INSERT INTO chains (name) VALUES ('mallory')");
    refused(web, "UPDATE chain_stages SET state = 'passed' WHERE chain_id = %" PRId64, chain);
    refused(web, "SELECT xqf_chain_add_stage(%" PRId64 ", 1, 'sprt', 'waiting', NULL, 0, 5, 0.05, 0.05, 10, 300, NULL, "
                 "NULL, NULL, NULL, NULL, NULL)", chain);   /* stage 1 is there: no rewrite */
    refused(web, "SELECT xqf_chain_add_stage(%" PRId64 ", 2, 'sprt', 'running', %" PRId64 ", 0, 5, 0.05, 0.05, 10, 300, "
                 "NULL, NULL, NULL, NULL, NULL, NULL)", chain, run);   /* another run tied to it */
    allowed(web, "SELECT xqf_chain_add_stage(%" PRId64 ", 2, 'sprt', 'waiting', NULL, 0, 5, 0.05, 0.05, 10, 300, NULL, "
                 "NULL, NULL, NULL, NULL, NULL)", chain);
    store_destroy(&web);
}

/*
 * The dashboard's role makes runs only through xqf_create_run, whose one
 * object of settings writes only the columns run_setting_columns names
 * (046): a key for the owner, the state, the approval or any other column
 * refuses the whole run as a column the role may not write would; the
 * settings it may write arrive in their columns, read back by the store.
 */
Test(roles, the_run_settings_object_writes_only_setting_columns)
{
    REQUIRE_ROLES();
    Store *web = connect_as(cu_fx.db_web);
    refused(web, CREATE_RUN_SQL, "sneaky", "{\"priority\": 5, \"state\": \"active\"}");
    refused(web, CREATE_RUN_SQL, "sneaky", "{\"owner\": \"admin\"}");
    refused(web, CREATE_RUN_SQL, "sneaky", "{\"tasks_on_claim\": false}");
    refused(web, CREATE_RUN_SQL, "sneaky", "{\"id\": 1}");
    char error[512];
    cr_assert_eq(store_exec(web, "SELECT xqf_create_run('sneaky', '', '', '', '', '{}', 1, "
                                 "'sprt', 'test', 'base', '{}', 0, 0, true, 0, 0, 0, false, '', "
                                 "'', 'tester', true, '[1]')", error, sizeof error), -1,
                 "a settings array was taken");
    allowed(web, CREATE_RUN_SQL, "settings",
            "{\"priority\": 7, \"pairs_per_task\": 3, \"max_pairs\": 11, \"seed\": 42, \"elo0\": -1.5, "
            "\"elo1\": 4.25, \"alpha\": 0.1, \"beta\": null}");
    StoreRun *runs;
    int n = store_list_runs(cu_fx.store, 10, &runs);
    cr_assert_gt(n, 0);
    int found = 0;
    for (int i = 0; i < n; i++) {
        const StoreRun *r = &runs[i];
        cr_assert_str_neq(r->name, "sneaky", "a refused call made run %" PRId64, r->id);
        if (strcmp(r->name, "settings") != 0)
            continue;
        found++;
        cr_assert_str_eq(r->state, "pending");
        cr_assert_eq(r->priority, 7);
        cr_assert_eq(r->pairs_per_task, 3);
        cr_assert_eq(r->max_pairs, 11);
        cr_assert_eq(r->seed, 42);
        cr_assert_float_eq(r->elo0, -1.5, 1e-12);
        cr_assert_float_eq(r->elo1, 4.25, 1e-12);
        cr_assert_float_eq(r->alpha, 0.1, 1e-12);
        cr_assert(isnan(r->beta), "beta %g, not NULL", r->beta);
    }
    free(runs);
    cr_assert_eq(found, 1);
    store_destroy(&web);
}

/*
 * The coordinator's role plays runs and nothing else: no accounts or
 * sessions (it cannot read them, let alone change a password), no
 * signatures, no approvals, no new runs, no schema changes.
 */
Test(roles, the_coordinator_cannot_touch_accounts_signatures_or_approvals)
{
    REQUIRE_ROLES();
    int64_t run = new_run(true);
    Store *c = connect_as(cu_fx.db_coordinator);
    refused(c, "SELECT count(*) FROM web_users");
    refused(c, "UPDATE web_users SET pwhash = 'x' WHERE name = 'admin'");
    refused(c, "SELECT count(*) FROM web_sessions");
    refused(c, "INSERT INTO web_sessions (token_hash, user_id, csrf, expires_at) VALUES ('t', 1, 'c', now())");
    refused(c, "SELECT xqf_user_add('mallory', 'admin', 'x', 'mallory')");
    refused(c, "SELECT xqf_session_add('t', 1, 'c', 60)");
    refused(c, "SELECT xqf_approve(%" PRId64 ", NULL, NULL)", run);
    refused(c, "SELECT xqf_build_pin(1, repeat('a', 40), 'subject', '')");
    refused(c, "SELECT xqf_stop_run(%" PRId64 ", 'x')", run);
    refused(c, "UPDATE engine_builds SET signature = NULL");
    refused(c, "UPDATE nets SET signature = NULL");
    refused(c, "INSERT INTO runs (kind, book, pairs_per_task, max_pairs, resign_moves, resign_score, draw_after, "
               "draw_moves, draw_score, max_plies, tasks_on_claim) VALUES ('sprt', '{}', 1, 1, 0, 0, 0, 0, 0, 0, false)");
    refused(c, CREATE_RUN_SQL, "x", "{\"pairs_per_task\": 1, \"max_pairs\": 1}");
    refused(c, "DROP TABLE tasks");
    refused(c, "ALTER TABLE runs ADD COLUMN x integer");
    refused(c, "CREATE TABLE mine (x integer)");
    state_is(run, "pending");
    /* its own work: a worker's hello, a task of an active run, its finish */
    int64_t worker;
    cr_assert_eq(store_hello(c, "w1", "b", 2, 2, "", &worker), 1);
    cr_assert_eq(store_approve_run(cu_fx.store, run, NULL, NULL), 1);
    allowed(c, "SELECT xqf_finish_run(%" PRId64 ", 'finished', 'done', NULL)", run);
    state_is(run, "finished");
    store_destroy(&c);
}

/*
 * The builder registers builds but never signs them (a registration that
 * carries a signature is refused), and changes runs only through its
 * requests' functions; the signer signs through xqf_build_signed only and
 * registers nothing.
 */
Test(roles, the_builder_cannot_sign_and_the_signer_cannot_build)
{
    REQUIRE_ROLES();
    int64_t run = new_run(false);
    Store *b = connect_as(cu_fx.db_builder);
    StoreBuild build = { .build_id = "xqf-engine-roles", .bench_nodes = 1234, .path = "/nonexistent" };
    snprintf(build.sha256, sizeof build.sha256, "%064d", 1);
    int64_t id;
    cr_assert_eq(store_add_build(b, &build, &id), 0, "the builder registers an unsigned build");
    cr_assert_eq(store_build_blob(b, id, "bytes", 5), 0);
    memset(build.signature, 'a', STORE_SIG_HEX);
    build.signature[STORE_SIG_HEX] = '\0';
    cr_assert_eq(store_add_build(b, &build, &id), -1, "a signature from the builder");
    refused(b, "UPDATE engine_builds SET signature = repeat('a', 128) WHERE id = %" PRId64, id);
    refused(b, "UPDATE engine_builds SET sha256 = repeat('0', 64) WHERE id = %" PRId64, id);
    refused(b, "UPDATE runs SET state = 'active' WHERE id = %" PRId64, run);
    refused(b, "UPDATE build_requests SET state = 'done'");
    refused(b, "UPDATE build_requests SET git_commit = repeat('a', 40)");
    allowed(b, "SELECT xqf_build_pin(0, repeat('a', 40), 'subject', '')");
    refused(b, "SELECT xqf_build_signed(%" PRId64 ", repeat('0', 64), repeat('a', 128))", id);
    refused(b, "SELECT xqf_approve(%" PRId64 ", NULL, NULL)", run);
    refused(b, "SELECT count(*) FROM web_users");
    allowed(b, "SELECT * FROM xqf_build_claim('test:1', 60)");
    store_destroy(&b);

    Store *sg = connect_as(cu_fx.db_signer);
    refused(sg, "INSERT INTO engine_builds (sha256, build_id) VALUES (repeat('1', 64), 'mine')");
    refused(sg, "UPDATE engine_builds SET blob = 'x' WHERE id = %" PRId64, id);
    refused(sg, "UPDATE engine_builds SET signature = repeat('a', 128) WHERE id = %" PRId64, id);
    refused(sg, "UPDATE runs SET state = 'active' WHERE id = %" PRId64, run);
    refused(sg, "SELECT * FROM xqf_build_claim('test:1', 60)");
    refused(sg, "SELECT xqf_build_pin(0, repeat('a', 40), 'subject', '')");
    refused(sg, "SELECT count(*) FROM web_users");
    int64_t next;
    char sha[STORE_NAME_MAX + 1], name[STORE_NAME_MAX + 1];
    cr_assert_geq(store_sign_next(sg, &next, sha, name), 0);
    int started;
    cr_assert_eq(store_build_signed(sg, id, build.sha256, build.signature, &started), 1, "signed through its function");
    store_destroy(&sg);
    StoreBuild back;
    cr_assert_eq(store_load_build(cu_fx.store, id, &back), 1);
    cr_assert_str_eq(back.signature, build.signature);
}

/*
 * The search audit's service (xqf-tune audit --active as xqf-auditor)
 * reads runs, tasks, results, games, workers and nets and writes only its
 * verdicts, its passes and the run's history (xqf_audit): it changes no
 * run, result or game, reads no account, session or the replay audit's
 * secret, and signs, approves or stops nothing.
 */
Test(roles, the_auditor_writes_only_its_verdicts_and_passes)
{
    REQUIRE_ROLES();
    int64_t run = new_run(false);
    Store *a = connect_as(cu_fx.db_auditor);
    refused(a, "SELECT count(*) FROM web_users");
    refused(a, "SELECT count(*) FROM web_sessions");
    refused(a, "SELECT count(*) FROM audit_secret");
    refused(a, "UPDATE runs SET state = 'stopped' WHERE id = %" PRId64, run);
    refused(a, "UPDATE tasks SET wins = wins + 1 WHERE run_id = %" PRId64, run);
    refused(a, "DELETE FROM games WHERE run_id = %" PRId64, run);
    refused(a, "UPDATE results SET purged = true");
    refused(a, "UPDATE search_audits SET verdict = 'clean'");
    refused(a, "DELETE FROM search_audits");
    refused(a, "UPDATE nets SET signature = NULL");
    refused(a, "SELECT xqf_approve(%" PRId64 ", NULL, NULL)", run);
    refused(a, "SELECT xqf_stop_run(%" PRId64 ", 'x')", run);
    refused(a, "SELECT xqf_purge_worker(%" PRId64 ", 1)", run);
    refused(a, "CREATE TABLE mine (x integer)");
    state_is(run, "active");
    /* its own work: what a pass reads, its verdict, the pass, the history */
    allowed(a, "SELECT count(*) FROM games g JOIN game_fens f ON f.id = g.fen_id JOIN tasks t ON t.run_id = g.run_id "
               "JOIN workers w ON w.id = g.worker_id, results, replay_audits, nets, engine_builds, engines");
    allowed(a, "INSERT INTO search_audits (run_id, worker_id, depth, positions, agree, honest, llr, verdict, plies) "
               "VALUES (%" PRId64 ", 1, 8, 10, 9, 0.6, -3, 'clean', 100)", run);
    allowed(a, "WITH p AS (INSERT INTO search_audit_passes DEFAULT VALUES RETURNING id) "
               "UPDATE search_audit_passes SET finished_at = now() WHERE id = (SELECT max(id) FROM search_audit_passes)");
    allowed(a, "SELECT xqf_audit('xqf-tune', %" PRId64 ", 'audit', 'search audit: a test')", run);
    store_destroy(&a);
}

/*
 * What PostgreSQL's manual asks of SECURITY DEFINER functions, for every
 * one of the schema (a later migration's too): a fixed search_path with
 * pg_temp last, and no EXECUTE for PUBLIC.  And the dashboard's role holds
 * no INSERT, UPDATE, DELETE or TRUNCATE on any table or column.
 */
Test(roles, definer_functions_are_pinned_and_the_dashboard_writes_no_table)
{
    REQUIRE_ROLES();
    allowed(cu_fx.store,
            "DO $$ DECLARE bad text; BEGIN "
            "SELECT string_agg(p.oid::regprocedure::text, ', ') INTO bad FROM pg_proc p "
            " WHERE p.pronamespace = 'public'::regnamespace AND p.prosecdef "
            "   AND (NOT EXISTS (SELECT 1 FROM unnest(p.proconfig) c WHERE c LIKE 'search_path=%%, pg_temp') "
            "        OR p.proacl IS NULL OR EXISTS (SELECT 1 FROM aclexplode(p.proacl) a WHERE a.grantee = 0)); "
            "IF bad IS NOT NULL THEN RAISE EXCEPTION 'unpinned or PUBLIC: %%', bad; END IF; "
            "SELECT string_agg(c.relname, ', ') INTO bad FROM pg_class c "
            " WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' "
            "   AND (has_table_privilege('xqf_web', c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE') "
            "        OR has_any_column_privilege('xqf_web', c.oid, 'INSERT, UPDATE')); "
            "IF bad IS NOT NULL THEN RAISE EXCEPTION 'xqf_web writes: %%', bad; END IF; "
            "IF (SELECT count(*) FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace AND p.prosecdef) < 15 "
            "THEN RAISE EXCEPTION 'too few definer functions'; END IF; END $$");
}

static int program(char *out, size_t size, const char *fmt, const char *conninfo)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, fmt, conninfo);
    char full[2200];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * Only the owner migrates: the coordinator's role, told to migrate a
 * database that lacks the schema, refuses and says who must; the owner's
 * migration then runs, and every migration run gives the roles exactly
 * what role_grants says (a privilege taken away by hand comes back).
 */
Test(roles, only_the_owner_migrates_and_a_migration_restores_the_grants)
{
    REQUIRE_ROLES();
    char fresh[512], name[64], as_coordinator[600], out[8192];
    cr_assert_eq(cu_db_create(fresh, sizeof fresh, name, sizeof name), 0);
    snprintf(as_coordinator, sizeof as_coordinator, "%.511s user=xqf-coordinator", fresh);
    Store *s = store_new(as_coordinator);
    store_set_migrate(s, true);
    cr_assert_eq(store_connect(s), STORE_SCHEMA_MISMATCH);
    cr_assert_neq(program(out, sizeof out, "'" XQF_BIN "/xqf-coordinator' --migrate --db '%s'", as_coordinator), 0);
    cr_assert_not_null(strstr(out, "may not migrate it"), "%s", out);
    cr_assert_eq(program(out, sizeof out, "'" XQF_BIN "/xqf-coordinator' --migrate --db '%s'", fresh), 0, "%s", out);
    cr_assert_eq(store_connect(s), 0, "migrated by the owner, the coordinator's role connects");
    cr_assert(!store_owns_schema(s));
    store_destroy(&s);
    cu_db_drop(name);

    /* a privilege taken by hand comes back with the next migration run; one given by hand goes */
    allowed(cu_fx.store, "REVOKE SELECT ON runs FROM xqf_web; GRANT UPDATE ON runs TO xqf_web");
    Store *web = connect_as(cu_fx.db_web);
    refused(web, "SELECT count(*) FROM runs");
    cr_assert_eq(program(out, sizeof out, "'" XQF_BIN "/xqf-coordinator' --migrate --db '%s'", cu_fx.db), 0, "%s", out);
    allowed(web, "SELECT count(*) FROM runs");
    refused(web, "UPDATE runs SET priority = 1");

    /*
     * who may execute a function is its file's "-- grant:" line, and only
     * that: a function row given by hand goes with the next migration run,
     * and the rows left are exactly the files' lines
     */
    allowed(cu_fx.store, "INSERT INTO role_grants VALUES ('xqf_web', 'function', 'xqf_build_signed', 'EXECUTE')");
    cr_assert_eq(program(out, sizeof out, "'" XQF_BIN "/xqf-coordinator' --migrate --db '%s'", cu_fx.db), 0, "%s", out);
    refused(web, "SELECT xqf_build_signed(1, 'x', 'x')");
    int lines = 0;
    char values[8192] = "";
    for (int i = 0; i < XQF_FUNCTION_COUNT; i++) {
        char grants[128];
        snprintf(grants, sizeof grants, "%s", XQF_FUNCTIONS[i].grants);
        for (char *save = NULL, *r = strtok_r(grants, " ", &save); r; r = strtok_r(NULL, " ", &save), lines++)
            snprintf(values + strlen(values), sizeof values - strlen(values), "%s('%s', '%s')", lines ? ", " : "",
                     r, XQF_FUNCTIONS[i].name);
    }
    cr_assert_gt(lines, 20, "the files grant the dashboard's and the builders' functions");
    allowed(cu_fx.store,
            "DO $$ BEGIN IF EXISTS ((SELECT role, object FROM role_grants WHERE kind = 'function' "
            "EXCEPT VALUES %s) UNION ALL (VALUES %s EXCEPT SELECT role, object FROM role_grants "
            "WHERE kind = 'function')) THEN RAISE EXCEPTION 'role_grants are not the files'' lines'; END IF; END $$",
            values, values);
    allowed(web, "SELECT xqf_stop_run(0, 'admin')");
    store_destroy(&web);
}

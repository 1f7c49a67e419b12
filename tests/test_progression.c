/*
 * Progressions (docs/programs/xqf-tune.md, "Progressions"), against a real
 * PostgreSQL (XQF_TEST_DB; skipped without it).  A small repository of
 * this project's shape (engine/params.def and CMakeLists.txt, commits
 * dated by hand) gives the refs: progression new makes one games run per
 * ref against the one base, every run with the same settings, each
 * waiting for the builder to build its commit and the base's, and the
 * progression keeps each commit's hash, date and subject.  Results are
 * written into the runs as reports would leave them; progression show
 * and the dashboard's page give each commit's Elo as show's statistics
 * (run_elo_text) do, and the page draws a dot and an interval per commit.
 * Bad input (an unknown engine, a ref that does not resolve, no refs, a
 * ref twice or two refs of one commit, the base's own commit, a name
 * taken) ends with status 2 and nothing stored.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli.h"
#include "cluster_util.h"
#include "run_view.h"
#include "store_runs.h"

TestSuite(progression, .init = cu_fixture_init, .fini = cu_fixture_fini, .timeout = 120);

static int tune(char *out, size_t size, const char *args)
{
    int st = cu_tune(out, size, args, cu_fx.logfile);
    cr_assert_geq(st, -1, "cannot run xqf-tune");
    return st;
}

/* xqf-tune with its messages (stderr) in out too. */
static int tune_said(char *out, size_t size, const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "{ '%s/xqf-tune' %s 2>&1; }", XQF_BIN, args);
    int st = cu_sh(out, size, cmd, cu_fx.logfile);
    cr_assert_geq(st, -1, "cannot run xqf-tune");
    return st;
}

static void sh_ok(char *out, size_t size, const char *cmd)
{
    cr_assert_eq(cu_sh(out, size, cmd, cu_fx.logfile), 0, "'%s' failed (log: %s)", cmd, cu_fx.logfile);
}

/* The first column of a query's first row, as psql prints it unaligned. */
static void query(char *out, size_t size, const char *sql)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "psql -X -q -At '%s' -c \"%s\"", cu_fx.db, sql);
    sh_ok(out, size, cmd);
    out[strcspn(out, "\n")] = '\0';
}

static int64_t count_of(const char *table)
{
    char sql[128], out[64];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
    query(out, sizeof out, sql);
    return atoll(out);
}

/* What the tables hold, to see that a refusal stored nothing. */
typedef struct {
    int64_t runs, requests, progressions, points;
} Totals;

static Totals totals(void)
{
    return (Totals){ count_of("runs"), count_of("build_requests"), count_of("progressions"),
                     count_of("progression_points") };
}

/* The repository: four commits v0..v3 of this project's shape, dated one after another. */
static const char *const DATES[4] = { "2026-11-01T10:00:00Z", "2026-11-05T12:00:00Z", "2026-11-12T09:30:00Z",
                                      "2026-11-20T18:00:00Z" };
static char repo[256], commits[4][41];

static void make_repo(void)
{
    char cmd[2048], out[256];
    snprintf(repo, sizeof repo, "%s/proj", cu_fx.dir);
    snprintf(cmd, sizeof cmd, "git init -q '%s' && mkdir -p '%s/engine' && echo 'project(t C)' > '%s/CMakeLists.txt'",
             repo, repo, repo);
    sh_ok(out, sizeof out, cmd);
    for (int i = 0; i < 4; i++) {
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && echo 'P(%d)' > engine/params.def && git add -A && "
                 "GIT_AUTHOR_DATE=%s GIT_COMMITTER_DATE=%s git -c user.name=t -c user.email=t@t commit -qm "
                 "'step %d: a change' && git tag v%d && git rev-parse HEAD",
                 repo, i, DATES[i], DATES[i], i, i);
        sh_ok(out, sizeof out, cmd);
        snprintf(commits[i], sizeof commits[i], "%.40s", out);
    }
}

/* Writes c into run id as its reports would have (the counts show reads). */
static void set_counts(int64_t id, const StoreCounts *c)
{
    char sql[1024], out[64];
    snprintf(sql, sizeof sql,
             "UPDATE runs SET pairs = %" PRId64 ", wins = %" PRId64 ", draws = %" PRId64 ", losses = %" PRId64
             ", ll = %" PRId64 ", ld = %" PRId64 ", dd = %" PRId64 ", wd = %" PRId64 ", ww = %" PRId64
             " WHERE id = %" PRId64,
             c->pairs, c->wins, c->draws, c->losses, c->penta[0], c->penta[1], c->penta[2], c->penta[3], c->penta[4],
             id);
    query(out, sizeof out, sql);
}

/* GET path from xqf-web on cu_fx.port: the status, the body into body (size bytes). */
static int http_get(const char *path, char *body, size_t size)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)cu_fx.port) };
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char req[512];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path);
    cr_assert_eq(send(fd, req, (size_t)n, MSG_NOSIGNAL), n);
    char *buf = malloc(1 << 20);
    size_t got = 0;
    ssize_t r;
    while (got < (1 << 20) - 1 && (r = recv(fd, buf + got, (1 << 20) - 1 - got, 0)) > 0)
        got += (size_t)r;
    close(fd);
    buf[got] = '\0';
    int status = 0;
    sscanf(buf, "HTTP/1.%*d %d", &status);
    const char *split = strstr(buf, "\r\n\r\n");
    snprintf(body, size, "%s", split ? split + 4 : "");
    free(buf);
    return status;
}

static void start_web(void)
{
    char p[16];
    cu_fx.port = cu_free_port();
    snprintf(p, sizeof p, "%d", cu_fx.port);
    const char *args[] = { "--db", cu_fx.db_web, "--port", p, NULL };
    cr_assert_gt(cu_track(cu_spawn_env("xqf-web", cu_fx.logfile, args, (const char *const[]){ NULL })), 0);
    for (int i = 0; i < 500; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)cu_fx.port) };
        inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
        int rc = connect(fd, (struct sockaddr *)&a, sizeof a);
        close(fd);
        if (rc == 0)
            return;
        cu_sleep_ms(20);
    }
    cr_assert_fail("xqf-web did not start (see %s)", cu_fx.logfile);
}

/* Makes the progression of v1..v3 against v0; its id into *id and its runs' ids into ids. */
static void make_progression(int64_t *id, int64_t ids[3])
{
    char out[8192], args[1024];
    snprintf(args, sizeof args, "progression new xqf --base v0 --refs v1,v2,v3 --pairs 50 --nodes 5000 "
                                "--repo '%s' --name history --seed 7",
             repo);
    cr_assert_eq(tune(out, sizeof out, args), 0, "log: %s", cu_fx.logfile);
    const char *p = strstr(out, "Progression: ");
    cr_assert(p, "%s", out);
    cr_assert_eq(sscanf(p, "Progression: %" SCNd64 " history\n%" SCNd64 " v1\n%" SCNd64 " v2\n%" SCNd64 " v3\n", id,
                        &ids[0], &ids[1], &ids[2]),
                 4, "%s", out);
}

Test(progression, makes_one_run_per_ref_against_the_base)
{
    CU_REQUIRE_DB();
    make_repo();
    int64_t id, ids[3];
    make_progression(&id, ids);
    char sql[512], out[1024];
    for (int i = 0; i < 3; i++) {
        StoreRun r;
        cr_assert_eq(store_load_run(cu_fx.store, ids[i], &r, false), 1);
        cr_assert_str_eq(r.kind, "games");
        cr_assert_str_eq(r.engine, "xqf");
        cr_assert_str_eq(r.state, "building", "run %" PRId64 " waits for the builder", ids[i]);
        cr_assert_eq(r.max_pairs, 50);
        cr_assert_eq(r.nodes, 5000);
        cr_assert_eq(r.seed, 7);
        /* the builder builds the ref's commit on the test side and the base's on the base side */
        snprintf(sql, sizeof sql, "SELECT string_agg(side || '=' || ref, ' ' ORDER BY side) FROM build_requests "
                                  "WHERE run_id = %" PRId64, ids[i]);
        query(out, sizeof out, sql);
        char want[128];
        snprintf(want, sizeof want, "base=%s test=%s", commits[0], commits[i + 1]);
        cr_assert_str_eq(out, want);
        /* the point: its run, ref, commit, date and subject */
        snprintf(sql, sizeof sql, "SELECT ref || ' ' || git_commit || ' ' || to_char(committed_at AT TIME ZONE 'UTC', "
                                  "'YYYY-MM-DD\\\"T\\\"HH24:MI:SS\\\"Z\\\"') || ' ' || subject FROM progression_points "
                                  "WHERE progression_id = %" PRId64 " AND run_id = %" PRId64, id, ids[i]);
        query(out, sizeof out, sql);
        snprintf(want, sizeof want, "v%d %s %s step %d: a change", i + 1, commits[i + 1], DATES[i + 1], i + 1);
        cr_assert_str_eq(out, want);
    }
    /* every run has the same settings but its test side */
    snprintf(sql, sizeof sql, "SELECT count(DISTINCT (kind, nodes, max_pairs, seed, pairs_per_task, book_name, "
                              "base_ms, inc_ms, settings)) FROM runs WHERE id IN (%" PRId64 ", %" PRId64 ", %" PRId64 ")",
             ids[0], ids[1], ids[2]);
    query(out, sizeof out, sql);
    cr_assert_str_eq(out, "1");
    snprintf(sql, sizeof sql, "SELECT base_ref || ' ' || base_commit || ' ' || engine FROM progressions WHERE id = %"
                              PRId64, id);
    query(out, sizeof out, sql);
    char want[128];
    snprintf(want, sizeof want, "v0 %s xqf", commits[0]);
    cr_assert_str_eq(out, want);
}

/*
 * --preset: ENGINE's preset gives every point's settings (xqf's regression:
 * 60+0.6 and 10,000 pairs), an option typed beside it overrides it (the
 * pairs), an unknown preset is refused naming the engine's, nothing made.
 */
Test(progression, takes_its_engines_preset)
{
    CU_REQUIRE_DB();
    make_repo();
    char out[8192], args[1024];
    snprintf(args, sizeof args, "progression new xqf --base v0 --refs v1,v2 --preset regression --pairs 30 "
                                "--repo '%s' --name preset", repo);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", out);
    query(out, sizeof out, "SELECT string_agg(base_ms || '+' || inc_ms || ' ' || max_pairs || ' ' || nodes, ',') "
                           "FROM runs");
    cr_assert_str_eq(out, "60000+600 30 0,60000+600 30 0");
    snprintf(args, sizeof args, "progression new xqf --base v0 --refs v3 --preset nosuch --pairs 30 --repo '%s'",
             repo);
    cr_assert_eq(tune_said(out, sizeof out, args), 2, "%s", out);
    cr_assert(strstr(out, "engine xqf has no preset 'nosuch'") && strstr(out, "regression"), "%s", out);
    query(out, sizeof out, "SELECT count(*) FROM runs");
    cr_assert_str_eq(out, "2");
}

Test(progression, show_and_page_give_each_commits_elo)
{
    CU_REQUIRE_DB();
    make_repo();
    int64_t id, ids[3];
    make_progression(&id, ids);
    StoreCounts c[3] = { { .pairs = 50, .wins = 30, .draws = 40, .losses = 30, .penta = { 5, 10, 20, 10, 5 } },
                         { .pairs = 40, .wins = 45, .draws = 20, .losses = 15, .penta = { 1, 4, 15, 12, 8 } },
                         { .pairs = 0 } };
    for (int i = 0; i < 3; i++)
        set_counts(ids[i], &c[i]);
    char out[16384], elo[3][48], args[64];
    for (int i = 0; i < 3; i++)
        run_elo_text(&c[i], elo[i], sizeof elo[i]);
    cr_assert_str_eq(elo[2], "-", "no games: no estimate");
    /* by id, by name and by one of its runs: the same table */
    const char *asks[3] = { args, "progression show history", NULL };
    snprintf(args, sizeof args, "progression show %" PRId64, id);
    char by_run[64];
    snprintf(by_run, sizeof by_run, "progression show run:%" PRId64, ids[1]);
    asks[2] = by_run;
    for (int a = 0; a < 3; a++) {
        cr_assert_eq(tune(out, sizeof out, asks[a]), 0, "log: %s", cu_fx.logfile);
        cr_assert(strstr(out, "Progression "), "%s", out);
        for (int i = 0; i < 3; i++) {
            char head[64];
            snprintf(head, sizeof head, "%.12s 2026-11-", commits[i + 1]);
            const char *row = strstr(out, head);
            cr_assert(row, "no row of v%d in:\n%s", i + 1, out);
            const char *end = strchr(row, '\n'), *e = strstr(row, elo[i]);
            cr_assert(e && e < end, "row '%.*s' lacks %s", (int)(end - row), row, elo[i]);
        }
    }
    cr_assert_eq(tune(out, sizeof out, "progression show nosuch"), 2);
    cr_assert_eq(tune(out, sizeof out, "progression show 999"), 2);
    /* the dashboard: listed, and its page draws a dot and a bar per commit with games, in date order */
    start_web();
    cr_assert_eq(http_get("/progressions", out, sizeof out), 200);
    cr_assert(strstr(out, "history"), "%s", out);
    char path[64];
    snprintf(path, sizeof path, "/progressions/%" PRId64, id);
    cr_assert_eq(http_get(path, out, sizeof out), 200);
    cr_assert(strstr(out, "<svg"), "no chart");
    int dots = 0;
    for (const char *p = out; (p = strstr(p, "<circle class=\"dot\"")); p++)
        dots++;
    cr_assert_eq(dots, 2, "a dot per commit with games (v3 has none)");
    const char *first = strstr(out, "/runs/"), *v1 = NULL, *v2 = NULL;
    char link[64];
    snprintf(link, sizeof link, "<a href=\"/runs/%" PRId64 "\">", ids[0]);
    v1 = strstr(out, link);
    snprintf(link, sizeof link, "<a href=\"/runs/%" PRId64 "\">", ids[1]);
    v2 = strstr(out, link);
    cr_assert(first && v1 && v2 && v1 < v2, "the points link their runs, oldest first");
    /* the table: each commit's Elo and interval as run_elo_of gives them */
    for (int i = 0; i < 2; i++) {
        xqf_elo e;
        cr_assert(run_elo_of(&c[i], &e));
        char cells[128];
        snprintf(cells, sizeof cells, "<td class=\"num\">%.1f</td><td class=\"num nowrap\">&plusmn; %.1f</td>", e.elo,
                 e.elo_ci95);
        cr_assert(strstr(out, cells), "no '%s' in the page", cells);
    }
    cr_assert(strstr(out, "step 2: a change"), "the subjects are listed");
    cr_assert_eq(http_get("/progressions/999", out, sizeof out), 404);
    cr_assert_eq(http_get("/progressions/x", out, sizeof out), 400);
}

Test(progression, bad_input_stores_nothing)
{
    CU_REQUIRE_DB();
    make_repo();
    char out[8192], args[1024];
    Totals before = totals();
    struct {
        const char *args, *says;
    } bad[] = {
        { "progression new nosuch --base v0 --refs v1 --pairs 10 --nodes 1000", "no engine named 'nosuch'" },
        { "progression new xqf --base v0 --refs v1,nosuch --pairs 10 --nodes 1000", "unknown ref 'nosuch'" },
        { "progression new xqf --base nosuch --refs v1 --pairs 10 --nodes 1000", "unknown ref 'nosuch'" },
        { "progression new xqf --base v0 --pairs 10 --nodes 1000", "--refs REF,REF,... is required" },
        { "progression new xqf --base v0 --refs '' --pairs 10 --nodes 1000", "an empty ref" },
        { "progression new xqf --base v0 --refs v1,v2,v1 --pairs 10 --nodes 1000", "v1 given twice" },
        { "progression new xqf --base v0 --refs v1,v1~0 --pairs 10 --nodes 1000", "are one commit" },
        { "progression new xqf --base v0 --refs v2,v0 --pairs 10 --nodes 1000", "the base's commit" },
        { "progression new xqf --base v0 --refs v1 --nodes 1000", "--pairs N is required" },
        { "progression new xqf --base v0 --refs v1 --pairs 10", "exactly one of --tc and --nodes" },
        { "progression new --base v0 --refs v1 --pairs 10 --nodes 1000", "give the engine" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(args, sizeof args, "%s --repo '%s'", bad[i].args, repo);
        int st = tune_said(out, sizeof out, args);
        cr_assert_eq(st, 2, "'%s' exited %d", bad[i].args, st);
        cr_assert(strstr(out, bad[i].says), "'%s' said:\n%s\nnot '%s'", bad[i].args, out, bad[i].says);
    }
    Totals after = totals();
    cr_assert_eq(memcmp(&before, &after, sizeof before), 0, "a refusal stored something");
    /* a name taken: refused, nothing more stored */
    int64_t id, ids[3];
    make_progression(&id, ids);
    before = totals();
    snprintf(args, sizeof args, "progression new xqf --base v0 --refs v2 --pairs 10 --nodes 1000 --repo '%s' "
                                "--name history", repo);
    cr_assert_eq(tune_said(out, sizeof out, args), 2);
    cr_assert(strstr(out, "a progression named 'history' exists"), "%s", out);
    after = totals();
    cr_assert_eq(memcmp(&before, &after, sizeof before), 0, "a refusal stored something");
}

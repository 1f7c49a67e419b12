/*
 * Reconnection storms at a small scale (ops/bench load storm runs them at
 * 10,000 workers by hand): xqf-loadgen's 500 simulated workers in a closed
 * loop against a coordinator, then all gone at once without bye and as
 * many back (the same names, or new ones to a table with room for them
 * or without); or the coordinator killed and restarted under them.  Each
 * storm passes when xqf-loadgen --check says so: 99 % of the workers had a
 * result accepted again within the limit, and its books against the
 * database's: nothing counted twice, nothing acknowledged and not counted,
 * no result lost without a reason (integration, XQF_TEST_DB).  Also the
 * same storm by a fleet of two load generators, merged (ops/bench at
 * 10,000 workers needs two: a process may open 20,000 files here).
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_util.h"

enum { STORM_WORKERS = 500 };

TestSuite(storm, .init = cu_fixture_init, .fini = cu_fixture_fini, .timeout = 90);

/* A coordinator for the fixture's database and port, at most max_peers workers, leases of lease_s. */
static pid_t coordinator(int max_peers, const char *lease_s)
{
    char bind[64], peers[16];
    snprintf(bind, sizeof bind, "tcp://127.0.0.1:%d", cu_fx.port);
    snprintf(peers, sizeof peers, "%d", max_peers);
    const char *args[] = { "--bind", bind, "--db", cu_fx.db_coordinator, "--lease", lease_s, "--max-peers", peers, NULL };
    pid_t pid = cu_track(cu_spawn("xqf-coordinator", cu_fx.logfile, args));
    cr_assert(pid > 0, "the coordinator did not start");
    cu_sleep_ms(500);
    return pid;
}

/* Runs xqf-loadgen with the storm's options; asserts its PASS. Its output in out. */
static void loadgen(pid_t coord, const char *storm, double limit_s, char *out, size_t size)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "ulimit -n 4096 2>/dev/null; '%s/xqf-loadgen' --db '%s' --connect tcp://127.0.0.1:%d --workers %d "
             "--warmup 1 --seconds 3 --pid %d --check %.1f %s",
             XQF_BIN, cu_fx.db, cu_fx.port, STORM_WORKERS, (int)coord, limit_s, storm);
    int rc = cu_sh(out, size, cmd, cu_fx.logfile);
    fprintf(stderr, "%s", out);
    cr_assert(rc == 0 && strstr(out, "\nPASS\n"), "the storm did not pass (exit %d):\n%s", rc, out);
    cr_assert(strstr(out, "lost without an answer 0;"), "a result was lost without a reason:\n%s", out);
    cr_assert(strstr(out, "tasks counted twice 0;"), "a task was counted twice:\n%s", out);
}

/* The same names back: each takes over its own entry at once, with --max-peers at the fleet's size. */
Test(storm, same_names_back)
{
    CU_REQUIRE_DB();
    static char out[16384];
    loadgen(coordinator(STORM_WORKERS, "60"), "--storm", 10, out, sizeof out);
    cr_assert(strstr(out, "under the same names"), "%s", out);
}

/* New names: room enough beside the vanished (their entries are not live after a few heartbeats). */
Test(storm, new_names)
{
    CU_REQUIRE_DB();
    static char out[16384];
    loadgen(coordinator(2 * STORM_WORKERS, "60"), "--storm --new-names", 10, out, sizeof out);
    cr_assert(strstr(out, "under new names"), "%s", out);
}

/*
 * New names to a full table (--max-peers at the fleet's size), as after a
 * restart or a rollout (a worker's default name is HOST-PID): the
 * vanished workers' connections closed, so their places are free at
 * once, not after two heartbeats of silence (30 s at --lease 60).
 */
Test(storm, new_names_back_to_a_full_table)
{
    CU_REQUIRE_DB();
    static char out[16384];
    loadgen(coordinator(STORM_WORKERS, "60"), "--storm --new-names", 10, out, sizeof out);
    cr_assert(strstr(out, "under new names"), "%s", out);
}

/*
 * Leases of 2 s, every worker holding its task 1 s (heartbeating it), all
 * gone for 3 s: their leases expire and are re-queued, and the results
 * their successors re-send are refused (stale) with the reason, none
 * counted (the books: nothing counted twice, nothing lost without one).
 */
Test(storm, results_of_requeued_leases_refused)
{
    CU_REQUIRE_DB();
    static char out[16384];
    loadgen(coordinator(STORM_WORKERS, "2"), "--storm --gone 3 --hold 1", 10, out, sizeof out);
    const char *at = strstr(out, "refused with a reason ");
    cr_assert(at && atoi(at + strlen("refused with a reason ")) > 0, "no result of a re-queued lease refused:\n%s", out);
}

/*
 * The coordinator killed (-9) and started again under the connected
 * workers: they are told to say hello, re-send what was not answered (a
 * request lost with the coordinator after 5 s, as a real worker), and
 * are all served again.  The new coordinator is the restart script's
 * child, not this test's: its pid comes from xqf-loadgen's output.
 */
Test(storm, coordinator_restart)
{
    CU_REQUIRE_DB();
    static char out[16384];
    pid_t first = coordinator(STORM_WORKERS, "60");
    char script[300], bind[64];
    snprintf(script, sizeof script, "%s/restart.sh", cu_fx.dir);
    snprintf(bind, sizeof bind, "tcp://127.0.0.1:%d", cu_fx.port);
    FILE *f = fopen(script, "w");
    cr_assert(f);
    fprintf(f,
            "kill -9 %d; sleep 0.2\n"
            "'%s/xqf-coordinator' --bind %s --db '%s' --lease 60 --max-peers %d >>'%s' 2>&1 </dev/null &\n"
            "echo $!\n",
            (int)first, XQF_BIN, bind, cu_fx.db_coordinator, STORM_WORKERS, cu_fx.logfile);
    fclose(f);
    char storm[400];
    snprintf(storm, sizeof storm, "--restart 'sh %s'", script);
    int second = 0;
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "ulimit -n 4096 2>/dev/null; '%s/xqf-loadgen' --db '%s' --connect tcp://127.0.0.1:%d --workers %d "
             "--warmup 1 --seconds 3 --pid %d --check 10 %s",
             XQF_BIN, cu_fx.db, cu_fx.port, STORM_WORKERS, (int)first, storm);
    int rc = cu_sh(out, sizeof out, cmd, cu_fx.logfile);
    fprintf(stderr, "%s", out);
    const char *at = strstr(out, "; pid ");
    if (at)
        second = atoi(at + 6);
    if (second > 0)
        kill(second, SIGKILL);
    cr_assert(second > 0, "no restarted coordinator:\n%s", out);
    cr_assert(rc == 0 && strstr(out, "\nPASS\n"), "the restart did not pass (exit %d):\n%s", rc, out);
    cr_assert(strstr(out, "lost without an answer 0;") && strstr(out, "tasks counted twice 0;"), "%s", out);
}

/* The first value of a query on the test's database (psql), as a number; -1 when none. */
static long query_long(const char *query)
{
    char cmd[2048], out[256];
    snprintf(cmd, sizeof cmd, "psql -X -q -A -t '%s' -c \"%s\"", cu_fx.db, query);
    return cu_sh(out, sizeof out, cmd, cu_fx.logfile) == 0 && out[0] ? atol(out) : -1;
}

/*
 * A fleet of two processes (ops/bench at 10,000 workers: one process
 * cannot open the files of all), each half the workers, on one run
 * (--new-run, --run), named apart (--first), storming at the same moment
 * (--start-at); --merge gives one fleet's figures: 500 workers, every
 * result either process offered counted once, none lost, none counted
 * and never offered (each process alone would see the other's results
 * as unexplained), 99 % served again; and 500 distinct names seen by the
 * coordinator (the same names would have been 250).
 */
Test(storm, fleet_of_two_processes_merged)
{
    CU_REQUIRE_DB();
    static char out[16384];
    pid_t coord = coordinator(STORM_WORKERS, "60");
    static char cmd[8192], lg[700], proc[2][1600];
    snprintf(lg, sizeof lg, "'%s/xqf-loadgen' --db '%s'", XQF_BIN, cu_fx.db);
    for (int k = 0; k < 2; k++)
        snprintf(proc[k], sizeof proc[k],
                 "%s --connect tcp://127.0.0.1:%d --workers %d --first %d --run $run --start-at $at --warmup 1 "
                 "--seconds 3 --pid %d --storm --figures '%s/fig%d'",
                 lg, cu_fx.port, STORM_WORKERS / 2, k * STORM_WORKERS / 2, (int)coord, cu_fx.dir, k);
    snprintf(cmd, sizeof cmd,
             "ulimit -n 4096 2>/dev/null; run=$(%s --new-run) || exit 3; at=$(( $(date +%%s%%3N) + 1500 ));"
             "%s & p0=$!; %s & p1=$!; wait $p0 || exit 4; wait $p1 || exit 4;"
             "%s --merge --check 10 '%s/fig0' '%s/fig1'",
             lg, proc[0], proc[1], lg, cu_fx.dir, cu_fx.dir);
    int rc = cu_sh(out, sizeof out, cmd, cu_fx.logfile);
    fprintf(stderr, "%s", out);
    cr_assert(rc == 0 && strstr(out, "\nPASS\n"), "the fleet's storm did not pass (exit %d):\n%s", rc, out);
    cr_assert(strstr(out, "simulated workers: 500, closed loop"), "not one fleet's figures:\n%s", out);
    cr_assert(strstr(out, "storm: 500 workers gone at once (no bye), 500 back"), "%s", out);
    cr_assert(strstr(out, "lost without an answer 0;") && strstr(out, "tasks counted twice 0;") &&
              strstr(out, "answered accepted but not counted 0; counted but never offered 0"), "%s", out);
    const char *at = strstr(out, "results offered: ");
    cr_assert(at, "%s", out);
    long offered = 0, counted = -1;
    cr_assert(sscanf(at, "results offered: %ld; counted %ld", &offered, &counted) == 2, "%s", out);
    cr_assert(offered > 0 && counted == offered, "offered %ld, counted %ld:\n%s", offered, counted, out);
    long names = query_long("SELECT count(DISTINCT name) FROM workers WHERE name LIKE 'sim-%'");
    cr_assert_eq(names, STORM_WORKERS, "the coordinator saw %ld names, not %d", names, STORM_WORKERS);
    /* a figures file of a process that did not end is refused, not merged as if complete */
    snprintf(cmd, sizeof cmd, "head -c 200 '%s/fig1' > '%s/cut'; %s --merge '%s/fig0' '%s/cut'", cu_fx.dir, cu_fx.dir,
             lg, cu_fx.dir, cu_fx.dir);
    rc = cu_sh(out, sizeof out, cmd, cu_fx.logfile);
    cr_assert(rc != 0, "an incomplete figures file was merged:\n%s", out);
}

/*
 * test_netns.c - the cluster as deployed, across hosts: two network
 * namespaces joined by a veth pair, the coordinator's "host" on
 * 10.77.0.1/24 and the worker's on 10.77.0.2/24, each program started in
 * its own (cu_spawn_netns), set up as docs/cluster.md says (CURVE keys, an
 * allow-list, --trust on an operator key, signed builds).  Everything else
 * of the suite runs on loopback, where the refusal of plaintext off
 * loopback cannot be tried and a link never goes down.
 *
 * PostgreSQL stays on the host, on its Unix socket (XQF_TEST_DB, ops/pg):
 * a socket file is reached through the file system from any network
 * namespace, as a coordinator reaches its database on its own machine, and
 * xqf-tune on the host writes the runs and builds the coordinator serves.
 *
 * Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN), `ip` and network
 * namespaces: without them every test is skipped with the reason, which
 * ctest reports as skipped (SKIP_REGULAR_EXPRESSION, tests/CMakeLists.txt).
 * The namespaces are named after the test's process (xqfnet-PID-c, -w),
 * made for each test and deleted at its end, failed or not; those of a
 * run that was killed (its PID gone) are deleted at the next one's start.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster_util.h"
#include "store_games.h"
#include "store_runs.h"
#include "store_tasks.h"

#define COORD_ADDR "10.77.0.1"
#define WORKER_ADDR "10.77.0.2"

enum { LINK_CUT_S = 12, LEASE_S = 60 };

/* The two namespaces and the two ends of the veth pair of this test ("" none). */
typedef struct {
    char coord[32], worker[32];          /* namespaces */
    char coord_if[16], worker_if[16];    /* interface names: 15 characters at most */
    char skip[2048];                     /* why the namespaces could not be made ("" they were) */
} Net;

static Net net;

/* Runs a shell command, its stderr with its stdout in out. Its exit status, or -1. */
static int sh(char *out, size_t size, const char *cmd)
{
    char full[1200];
    snprintf(full, sizeof full, "{ %s; } 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (!p)
        return -1;
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Deletes the namespaces xqfnet-PID-* whose PID is gone (a run killed at its timeout). */
static void sweep_stale(void)
{
    char out[8192];
    if (sh(out, sizeof out, "ip netns list") != 0)
        return;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        long pid;
        char role;
        if (sscanf(line, "xqfnet-%ld-%c", &pid, &role) != 2 || pid <= 0)
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char cmd[128], ignored[256];
        snprintf(cmd, sizeof cmd, "ip netns del xqfnet-%ld-%c", pid, role);
        sh(ignored, sizeof ignored, cmd);
    }
}

/*
 * Makes the two namespaces and the veth pair between them, addresses up.
 * On failure net.skip says why (the test skips) and nothing is left.
 */
static void net_up(void)
{
    net.skip[0] = '\0';
    long pid = (long)getpid();
    snprintf(net.coord, sizeof net.coord, "xqfnet-%ld-c", pid);
    snprintf(net.worker, sizeof net.worker, "xqfnet-%ld-w", pid);
    snprintf(net.coord_if, sizeof net.coord_if, "xqc%ld", pid);
    snprintf(net.worker_if, sizeof net.worker_if, "xqw%ld", pid);
    char out[1024];
    if (sh(out, sizeof out, "command -v ip") != 0) {
        snprintf(net.skip, sizeof net.skip, "no `ip` program (iproute2)");
        net.coord[0] = net.worker[0] = '\0';
        return;
    }
    sweep_stale();
    const char *const steps[] = {
        "ip netns add %1$s",
        "ip netns add %2$s",
        "ip link add %3$s netns %1$s type veth peer name %4$s netns %2$s",
        "ip -n %1$s addr add " COORD_ADDR "/24 dev %3$s",
        "ip -n %2$s addr add " WORKER_ADDR "/24 dev %4$s",
        "ip -n %1$s link set lo up",
        "ip -n %2$s link set lo up",
        "ip -n %1$s link set %3$s up",
        "ip -n %2$s link set %4$s up",
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, steps[i], net.coord, net.worker, net.coord_if, net.worker_if);
        if (sh(out, sizeof out, cmd) != 0) {
            out[strcspn(out, "\n")] = '\0';
            snprintf(net.skip, sizeof net.skip, "`%s` failed (%s): this needs root and network namespaces", cmd,
                     out);
            break;
        }
    }
    if (net.skip[0]) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "ip netns del %s; ip netns del %s", net.coord, net.worker);
        sh(out, sizeof out, cmd);
        net.coord[0] = net.worker[0] = '\0';
    }
}

/* Deletes the namespaces (the veth pair goes with them); safe twice. */
static void net_down(void)
{
    char cmd[128], out[512];
    for (int i = 0; i < 2; i++) {
        char *ns = i == 0 ? net.coord : net.worker;
        if (!ns[0])
            continue;
        snprintf(cmd, sizeof cmd, "ip netns del %s", ns);
        if (sh(out, sizeof out, cmd) != 0)
            fprintf(stderr, "cannot delete network namespace %s: %s", ns, out);
        ns[0] = '\0';
    }
}

/* Brings the coordinator's end of the link down or up (as a cable pulled, then put back). */
static void link_set(const char *state)
{
    char cmd[128], out[512];
    snprintf(cmd, sizeof cmd, "ip -n %s link set %s %s", net.coord, net.coord_if, state);
    cr_assert_eq(sh(out, sizeof out, cmd), 0, "%s: %s", cmd, out);
}

/*
 * A test skipped in its body (cr_skip) does not get its .fini: the
 * namespaces are made only where there is a database (CU_REQUIRE_DB skips
 * otherwise), and the test's database is dropped at once where they
 * cannot be made (REQUIRE_NET skips).
 */
static void setup(void)
{
    cu_fixture_init();
    net = (Net){ .skip = "" };
    if (!getenv("XQF_TEST_DB") || !*getenv("XQF_TEST_DB"))
        return;
    net_up();
    if (net.skip[0])
        cu_fixture_fini();
}

/* The processes first (they hold the namespaces' sockets), then the namespaces. */
static void teardown(void)
{
    cu_fixture_fini();
    net_down();
}

/*
 * Skips without the namespaces or the database.  The reason goes to stderr
 * too: Criterion prints skips only with --verbose, and ctest tells a skip
 * by this line.
 */
#define REQUIRE_NET()                                                                            \
    do {                                                                                         \
        CU_REQUIRE_DB();                                                                         \
        if (net.skip[0]) {                                                                       \
            fprintf(stderr, "netns: cross-host test skipped: %s\n", net.skip);                  \
            cr_skip("netns: cross-host test skipped: %s", net.skip);                            \
        }                                                                                        \
    } while (0)

/* dir/name, in one of 8 buffers used in turn: copy what must outlive the next 7 calls. */
static const char *at(const char *name)
{
    static char bufs[8][256];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", cu_fx.dir, name);
    return b;
}

/* How many times text occurs in the file at path (its first MiB). */
static int count_in(const char *path, const char *text)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    int count = 0;
    for (const char *p = buf; (p = strstr(p, text)); p += strlen(text))
        count++;
    return count;
}

static bool file_has(const char *path, const char *text) { return count_in(path, text) > 0; }

/* Waits until the file at path holds text, up to timeout_s. */
static bool shows(const char *path, const char *text, double timeout_s)
{
    for (double end = cu_now() + timeout_s; !file_has(path, text);) {
        if (cu_now() > end)
            return false;
        cu_sleep_ms(50);
    }
    return true;
}

/* Runs xqf-keys with the arguments (a shell fragment); asserts it succeeded. */
static void keys(const char *args)
{
    char cmd[1024], out[1024];
    snprintf(cmd, sizeof cmd, "'%s/xqf-keys' %s", XQF_BIN, args);
    cr_assert_eq(cu_sh(out, sizeof out, cmd, cu_fx.logfile), 0, "xqf-keys %s (log: %s)", args, cu_fx.logfile);
}

/* A key pair at dir/name (and name.pub). */
static void new_keys(const char *name)
{
    char args[512];
    snprintf(args, sizeof args, "new '%s' >/dev/null", at(name));
    keys(args);
}

/* The public key of the key pair name in the allow-list, under worker name. */
static void allow(const char *worker, const char *name)
{
    char args[768];
    snprintf(args, sizeof args, "allow '%s' %s '%s.pub' >/dev/null", at("allow"), worker, at(name));
    keys(args);
}

static char endpoint[64];

static const char *coord_endpoint(void)
{
    snprintf(endpoint, sizeof endpoint, "tcp://" COORD_ADDR ":%d", cu_fx.port);
    return endpoint;
}

/*
 * The coordinator in its namespace, bound on 10.77.0.1, with CURVE keys and
 * the allow-list; up to 8 more options in extra (NULL-terminated, may be NULL).
 */
static pid_t coordinator_with(const char *const extra[])
{
    char bind[64], key[256], list[256];
    snprintf(bind, sizeof bind, "%s", coord_endpoint());
    snprintf(key, sizeof key, "%s", at("coord"));
    snprintf(list, sizeof list, "%s", at("allow"));
    const char *args[20] = { "--bind", bind, "--db", cu_fx.db_coordinator, "--lease", "60", "--curve-secret", key,
                             "--allow", list };
    for (int i = 0; extra && extra[i] && i < 8; i++)
        args[10 + i] = extra[i];
    return cu_track(cu_spawn_netns(net.coord, "xqf-coordinator", at("coordinator.log"), args));
}

static pid_t coordinator(void) { return coordinator_with(NULL); }

/*
 * A worker in its namespace named name, connecting to 10.77.0.1; with the
 * key pair key and the coordinator's public key server (key NULL: plaintext),
 * more options in extra (NULL-terminated, may be NULL).  Its log is dir/NAME.log.
 */
static pid_t worker(const char *name, const char *key, const char *server, const char *const extra[])
{
    char ep[64], key_path[256], server_path[256], cache[256], log[256];
    snprintf(ep, sizeof ep, "%s", coord_endpoint());
    snprintf(key_path, sizeof key_path, "%s", key ? at(key) : "");
    snprintf(server_path, sizeof server_path, "%s.pub", server ? at(server) : "");
    snprintf(cache, sizeof cache, "%s-cache", at(name));
    snprintf(log, sizeof log, "%s.log", at(name));
    const char *args[24] = { "--connect", ep, "--name", name, "--concurrency", "2", "--cache", cache };
    int n = 8;
    if (key) {
        args[n++] = "--curve-secret";
        args[n++] = key_path;
        args[n++] = "--server-key";
        args[n++] = server_path;
    }
    for (int i = 0; extra && extra[i] && n < 23; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    return cu_track(cu_spawn_netns(net.worker, "xqf-worker", log, args));
}

/* Waits for pid's end (up to timeout_s); its exit status, or -1 (still running, killed, or a signal). */
static int exit_status(pid_t pid, double timeout_s)
{
    int status = 0;
    for (double end = cu_now() + timeout_s; !cu_ended(pid, &status);) {
        if (cu_now() > end) {
            cu_kill9(pid);
            return -1;
        }
        cu_sleep_ms(50);
    }
    cu_untrack(pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The pairs accepted from the worker called name, all runs; -1 when the coordinator never welcomed it. */
static int64_t worker_pairs(const char *name)
{
    StoreWorker *w = NULL;
    int n = store_list_workers(cu_fx.store, 0, &w);
    cr_assert_geq(n, 0);
    int64_t pairs = -1;
    for (int i = 0; i < n; i++)
        if (strcmp(w[i].name, name) == 0)
            pairs = w[i].pairs;
    free(w);
    return pairs;
}

static bool worker_known(const char *name) { return worker_pairs(name) >= 0; }

static int64_t run_pairs(int64_t run)
{
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    int64_t pairs = r.counts.pairs;
    store_run_free(&r);
    return pairs;
}

/* xqf-tune with args; the id it prints after key (NULL: its output is the id), asserted > 0. */
static int64_t tune_id(const char *args, const char *key)
{
    char out[16384];
    cr_assert_eq(cu_tune(out, sizeof out, args, cu_fx.logfile), 0, "xqf-tune %s (log: %s)", args, cu_fx.logfile);
    const char *p = key ? strstr(out, key) : out;
    int64_t id = p ? strtoll(p + (key ? strlen(key) : 0), NULL, 10) : -1;
    cr_assert_gt(id, 0, "xqf-tune %s printed: %s", args, out);
    return id;
}

TestSuite(netns, .init = setup, .fini = teardown, .timeout = 150);

/*
 * Without keys the coordinator will not serve 10.77.0.1 and the worker
 * will not connect to it: both exit with status 2 and the reason, before
 * anything crosses the link.
 */
Test(netns, plaintext_off_loopback_is_refused)
{
    REQUIRE_NET();
    const char *ep = coord_endpoint();
    const char *cargs[] = { "--bind", ep, "--db", cu_fx.db_coordinator, NULL };
    pid_t c = cu_track(cu_spawn_netns(net.coord, "xqf-coordinator", at("coordinator.log"), cargs));
    cr_assert_eq(exit_status(c, 20), 2, "a plaintext coordinator on " COORD_ADDR " did not exit 2 (log: %s)",
                 at("coordinator.log"));
    char why[160];
    snprintf(why, sizeof why, "%s is not a loopback address: anyone who reaches it could submit results", ep);
    cr_assert(file_has(at("coordinator.log"), why), "log: %s", at("coordinator.log"));

    pid_t w = worker("plain", NULL, NULL, NULL);
    cr_assert_eq(exit_status(w, 20), 2, "a plaintext worker to " COORD_ADDR " did not exit 2 (log: %s)",
                 at("plain.log"));
    snprintf(why, sizeof why, "%s is not a loopback address: in plaintext anyone on the way", ep);
    cr_assert(file_has(at("plain.log"), why), "log: %s", at("plain.log"));
}

/*
 * The coordinator with CURVE on 10.77.0.1: a worker whose key is not in
 * the allow-list is refused at the handshake (both ends say so, the
 * coordinator with the worker's address on the other host); a worker
 * whose --server-key is another coordinator's (it does not trust this
 * one) fails the handshake, both ends say so; a plaintext worker
 * (--insecure) is not heard.  None of them reaches the database, while an
 * allowed worker with the right key, from the same namespace, does.
 */
Test(netns, strangers_and_impostors_get_nothing)
{
    REQUIRE_NET();
    new_keys("coord");
    new_keys("other-coord");
    new_keys("w1");
    new_keys("intruder");
    allow("w1", "w1");
    coordinator();
    char clog[256];
    snprintf(clog, sizeof clog, "%s", at("coordinator.log"));

    worker("intruder", "intruder", "coord", NULL);
    cr_assert(shows(clog, "zap: refused a CURVE client from " WORKER_ADDR, 30), "log: %s", clog);
    cr_assert(shows(clog, "is not in the allow-list", 1), "log: %s", clog);
    cr_assert(shows(at("intruder.log"), "the coordinator refused our key", 10), "log: %s", at("intruder.log"));

    worker("distrusts", "w1", "other-coord", NULL);
    cr_assert(shows(clog, "a peer failed the handshake", 30), "log: %s", clog);
    cr_assert(shows(clog, "a CURVE worker with a wrong --server-key?", 1), "log: %s", clog);
    cr_assert(shows(at("distrusts.log"), "hung up during the handshake", 30), "log: %s", at("distrusts.log"));

    const char *insecure[] = { "--insecure", NULL };
    worker("plaintext", NULL, NULL, insecure);
    cr_assert(shows(at("plaintext.log"), "security mechanism mismatch", 30), "log: %s", at("plaintext.log"));

    worker("w1", "w1", "coord", NULL);
    for (double end = cu_now() + 30; !worker_known("w1") && cu_now() < end;)
        cu_sleep_ms(100);
    cr_assert(worker_known("w1"), "the allowed worker was not welcomed across the link (logs: %s, %s)", clog,
              at("w1.log"));
    cr_assert(!worker_known("intruder"), "the refused worker reached the database");
    cr_assert(!worker_known("distrusts"), "a worker that does not trust the coordinator's key reached the database");
    cr_assert(!worker_known("plaintext"), "a plaintext worker reached the database");
}

/*
 * A signed-build SPRT played across the link: two builds (copies of
 * xqf-engine, signed with an operator key) registered on the host, the
 * worker trusting that key fetches both from the coordinator over CURVE.
 * Once pairs come in, the link is cut for LINK_CUT_S seconds (well under
 * the lease): nothing is counted meanwhile, and after it the run finishes
 * with every planned pair, each counted once (cu_audit: run = tasks =
 * results, every game stored once).
 */
Test(netns, signed_sprt_across_hosts_survives_a_link_cut)
{
    REQUIRE_NET();
    enum { PAIRS = 64 };
    new_keys("coord");
    new_keys("w1");
    allow("w1", "w1");
    char args[1400];
    snprintf(args, sizeof args, "sign-new '%s' >/dev/null", at("operator.key"));
    keys(args);
    cr_assert_eq(cu_engine_copy(at("engine-1"), 1), 0);
    cr_assert_eq(cu_engine_copy(at("engine-2"), 2), 0);
    snprintf(args, sizeof args, "build --binary '%s' --name one --sign-key '%s'", at("engine-1"), at("operator.key"));
    int64_t b1 = tune_id(args, "Build: ");
    snprintf(args, sizeof args, "build --binary '%s' --name two --sign-key '%s'", at("engine-2"), at("operator.key"));
    int64_t b2 = tune_id(args, "Build: ");
    snprintf(args, sizeof args,
             "sprt new --test-build %" PRId64 " --base-build %" PRId64 " --nodes 1000 --pairs-per-task 4 "
             "--max-pairs %d --elo0 -500 --elo1 500",
             b1, b2, PAIRS);
    int64_t run = tune_id(args, NULL);

    coordinator();
    char trust[256];
    snprintf(trust, sizeof trust, "%s.pub", at("operator.key"));
    const char *extra[] = { "--trust", trust, NULL };
    worker("w1", "w1", "coord", extra);
    char clog[256], wlog[256];
    snprintf(clog, sizeof clog, "%s", at("coordinator.log"));
    snprintf(wlog, sizeof wlog, "%s", at("w1.log"));

    cr_assert(cu_wait_pairs(cu_fx.store, run, 4, 90), "no pairs came across the link (logs: %s, %s)", clog, wlog);
    link_set("down");
    int64_t at_cut = run_pairs(run);
    cr_assert_lt(at_cut, PAIRS, "the run ended before the link was cut: make it longer");
    cu_sleep_ms(LINK_CUT_S * 1000);
    int64_t before_up = run_pairs(run);
    link_set("up");
    cr_assert_eq(before_up, at_cut, "pairs were counted while the link was down (logs: %s, %s)", clog, wlog);

    StoreRun r;
    cr_assert(cu_wait_finished(cu_fx.store, run, 90, &r), "the run did not finish after the link came back (logs: %s, %s)",
              clog, wlog);
    cr_assert_str_eq(r.state, "finished", "%s: %s (logs: %s, %s)", r.state, r.verdict, clog, wlog);
    cr_assert_str_eq(r.verdict, "max pairs", "logs: %s, %s", clog, wlog);
    store_run_free(&r);
    char why[256];
    cr_assert(cu_audit(cu_fx.store, run, PAIRS, why, sizeof why), "run %" PRId64 ": %s (logs: %s, %s)", run, why,
              clog, wlog);
    /* both builds came over the link, signed and verified, once each */
    cr_assert_eq(count_in(wlog, ", signed) fetched ("), 2, "log: %s", wlog);
}

/*
 * A key that floods the coordinator from the other host: --key-hellos 2
 * (a bucket of two handshakes and two hellos, one more every 30 s), and
 * FLOOD workers of the key started at once in the worker's namespace, as
 * a stolen key used in a loop would be.  The ZAP handler refuses the
 * handshakes beyond the bucket before any message (its log names the key
 * and the address across the link), so at most the bucket's workers (and
 * one of its refills) are ever welcomed; meanwhile a worker of another key
 * in the same namespace gets in and has pairs counted.  Without the bound
 * every worker of the key would be welcomed.
 */
Test(netns, a_key_flooding_handshakes_from_the_other_host_is_held_to_its_bound)
{
    REQUIRE_NET();
    enum { FLOOD = 8 };
    new_keys("coord");
    new_keys("greedy");
    new_keys("honest");
    allow("greedy", "greedy");
    allow("honest", "honest");
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 1, 1000, 500, -500, 500);
    const char *opts[] = { "--key-hellos", "2", NULL };
    coordinator_with(opts);
    char clog[256];
    snprintf(clog, sizeof clog, "%s", at("coordinator.log"));
    double start = cu_now();
    for (int i = 0; i < FLOOD; i++) {
        char name[32];
        snprintf(name, sizeof name, "greedy%d", i);
        worker(name, "greedy", "coord", NULL);
    }
    cr_assert(shows(clog, "zap: refused a CURVE client of greedy from " WORKER_ADDR, 30), "log: %s", clog);
    cr_assert(shows(clog, "over its handshakes a minute (--key-hellos)", 1), "log: %s", clog);

    worker("honest", "honest", "coord", NULL);
    for (double end = cu_now() + 60; worker_pairs("honest") < 1 && cu_now() < end;)
        cu_sleep_ms(200);
    cr_assert_geq(worker_pairs("honest"), 1, "the other key's worker played no pair beside the flood (logs: %s, %s)",
                  clog, at("honest.log"));
    cr_assert_gt(run_pairs(run), 0);
    int welcomed = 0;
    for (int i = 0; i < FLOOD; i++) {
        char name[32];
        snprintf(name, sizeof name, "greedy/greedy%d", i);   /* a worker not named after its key is KEY/NAME */
        welcomed += worker_known(name);
    }
    /* two at once, and one more for each 30 s the test has run */
    int most = 2 + (int)((cu_now() - start) / 30);
    cr_assert(welcomed > 0, "no worker of the flooding key was welcomed: are its workers named so? (log: %s)", clog);
    cr_assert_leq(welcomed, most, "%d of %d workers of one key welcomed in %.0f s with --key-hellos 2 (log: %s)",
                  welcomed, FLOOD, cu_now() - start, clog);
}

/*
 * An engine build that reaches out from the worker's host: a copy of
 * tests/fake_engine.c marked to read the worker's own CURVE secret key,
 * to connect to the coordinator's port on 10.77.0.1 (across the link,
 * where the worker itself connects) and to see the worker's environment,
 * signed and played by the worker in its namespace against a plain copy.
 * In the worker's sandbox every attempt fails, so the marked engine
 * crashes at its first move: each of its games is scored as its crash,
 * and it never said ESCAPED.  Without the sandbox's network the connect
 * succeeds (the coordinator listens there), without its file system the
 * key is read: either way the engine says ESCAPED and plays on.
 */
Test(netns, an_engine_build_cannot_reach_the_coordinator_or_the_workers_key)
{
    REQUIRE_NET();
    new_keys("coord");
    new_keys("w1");
    allow("w1", "w1");
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "sign-new '%s' >/dev/null", at("operator.key"));
    keys(cmd);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && printf '\\nXQF-ESCAPE %s %d " COORD_ADDR "\\n' >> '%s' && "
             "cp '%s' '%s' && printf '\\n' >> '%s'",
             FAKE_ENGINE, at("escape-engine"), at("w1"), cu_fx.port, at("escape-engine"), FAKE_ENGINE,
             at("plain-engine"), at("plain-engine"));
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(cmd, sizeof cmd, "build --binary '%s' --name escape --sign-key '%s'", at("escape-engine"),
             at("operator.key"));
    int64_t escape = tune_id(cmd, "Build: ");
    snprintf(cmd, sizeof cmd, "build --binary '%s' --name plain --sign-key '%s'", at("plain-engine"),
             at("operator.key"));
    int64_t plain = tune_id(cmd, "Build: ");
    snprintf(cmd, sizeof cmd,
             "sprt new --test-build %" PRId64 " --base-build %" PRId64 " --nodes 200 --pairs-per-task 2 "
             "--max-pairs 2 --elo0 -500 --elo1 500",
             escape, plain);
    int64_t run = tune_id(cmd, NULL);

    coordinator();
    char trust[256];
    snprintf(trust, sizeof trust, "%s.pub", at("operator.key"));
    const char *extra[] = { "--trust", trust, NULL };
    setenv("XQF_TEST_SECRET", "the worker's environment", 1);
    worker("w1", "w1", "coord", extra);
    unsetenv("XQF_TEST_SECRET");
    char clog[256], wlog[256];
    snprintf(clog, sizeof clog, "%s", at("coordinator.log"));
    snprintf(wlog, sizeof wlog, "%s", at("w1.log"));
    StoreRun r;
    cr_assert(cu_wait_finished(cu_fx.store, run, 90, &r), "the run did not end (logs: %s, %s)", clog, wlog);
    cr_assert_eq(count_in(wlog, "ESCAPED"), 0, "the engine got out of its box (log: %s)", wlog);
    cr_assert_eq(r.counts.pairs, 2, "(logs: %s, %s)", clog, wlog);
    cr_assert_eq(r.counts.reasons[STORE_REASON_CRASH], 4, "every game of the boxed engine is its crash (log: %s)", wlog);
    cr_assert_eq(r.counts.wins, 0, "the boxed engine won a game (log: %s)", wlog);
    store_run_free(&r);
}

/* A book line from a position no task of the shipped book starts from. */
#define OTHER_LINE "r1bakabnr/4n4/7c1/p1p1p1p2/8p/4P1P2/PcP5P/1C5C1/9/RNBAKABNR w - - 8 5 moves a0a1"

/* Sends a result's bytes from c and expects an ack with status (fails the test otherwise). */
static void expect_report(CuClient *c, const XqfBuf *b, const char *status, const char *what)
{
    char got[512];
    bool stop = false;
    cr_assert_eq(cu_client_report(c, b, got, sizeof got, &stop), 0, "%s: %s (log: %s)", what, got,
                 at("coordinator.log"));
    cr_assert_str_eq(got, status, "%s: %s, expected %s (log: %s)", what, got, status, at("coordinator.log"));
}

static StoreCounts run_counts(int64_t run)
{
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    StoreCounts c = r.counts;
    store_run_free(&r);
    return c;
}

/*
 * An allow-listed but malicious worker on the other host: a hand-made
 * client (cu_client_open in the worker's namespace, CURVE with its key)
 * takes a task across the link and reports its first pair honestly
 * (accepted), then forges the second pair three ways: records from
 * another position than the task's opening, a result without records,
 * W/D/L that say a win where its records say two draws.  Each is answered
 * invalid with its reason in the coordinator's log and counts nothing;
 * the pair reported honestly after them is accepted.
 */
Test(netns, a_malicious_worker_across_hosts_has_its_forged_records_refused)
{
    REQUIRE_NET();
    new_keys("coord");
    new_keys("mallory");
    allow("mallory", "mallory");
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 2, 100, 500, -500, 500);
    coordinator();
    char clog[256], why[512], key[256], pub[256];
    snprintf(clog, sizeof clog, "%s", at("coordinator.log"));
    snprintf(key, sizeof key, "%s", at("mallory"));
    snprintf(pub, sizeof pub, "%s", at("coord.pub"));
    CuClient m;
    cr_assert_eq(cu_client_open(&m, coord_endpoint(), key, pub, net.worker, why, sizeof why), 0, "%s", why);
    cr_assert_eq(cu_client_hello(&m, "mallory", why, sizeof why), 0, "hello across the link: %s (log: %s)", why, clog);
    cr_assert(shows(clog, "zap: mallory connected from " WORKER_ADDR, 5), "not from the other host (log: %s)", clog);
    XqfMsg t;
    cr_assert_eq(cu_client_task(&m, &t, why, sizeof why), 0, "%s (log: %s)", why, clog);
    cr_assert_eq(t.u.task.pairs, 2);

    XqfBuf b = { 0 };
    cr_assert_eq(cu_forged_result(&t, OTHER_LINE, 0, 1, CU_HONEST, false, &b, why, sizeof why), 0, "%s", why);
    expect_report(&m, &b, "accepted", "the first pair, as the task says");
    StoreCounts one = run_counts(run);
    cr_assert_eq(one.pairs, 1);
    static const struct {
        CuForgery f;
        const char *what, *reason;
    } BAD[] = {
        { CU_OTHER_POSITION, "records from another position than the task's opening",
          "result invalid, its records are not the task's games" },
        { CU_NO_RECORDS, "a result without records", "result invalid: impossible counts, or counts its records do "
                                                     "not carry (2 pairs, 0/4/0; 0 bytes of records from pair 1)" },
        { CU_COUNTS_DISAGREE, "W/D/L that disagree with the records",
          "result invalid: impossible counts, or counts its records do not carry (2 pairs, 1/3/0;" },
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        cr_assert_eq(cu_forged_result(&t, OTHER_LINE, 1, 2, BAD[i].f, false, &b, why, sizeof why), 0, "%s", why);
        expect_report(&m, &b, "invalid", BAD[i].what);
        cr_assert(shows(clog, BAD[i].reason, 5), "%s: no reason logged (log: %s)", BAD[i].what, clog);
        StoreCounts now = run_counts(run);
        cr_assert(now.pairs == one.pairs && now.wins == one.wins && now.draws == one.draws &&
                      memcmp(now.penta, one.penta, sizeof now.penta) == 0,
                  "%s was counted: %lld pairs", BAD[i].what, (long long)now.pairs);
    }
    cr_assert_eq(cu_forged_result(&t, OTHER_LINE, 1, 2, CU_HONEST, false, &b, why, sizeof why), 0, "%s", why);
    expect_report(&m, &b, "accepted", "the second pair, as the task says");
    StoreCounts two = run_counts(run);
    cr_assert(two.pairs == 2 && two.draws == 4 && two.wins == 0, "%lld pairs, %lld draws, %lld wins",
              (long long)two.pairs, (long long)two.draws, (long long)two.wins);
    xqf_buf_free(&b);
    xqf_msg_free(&t);
    cu_client_close(&m);
}

/*
 * A key opening more connections than --key-connections from the other
 * host (hand-made clients in the worker's namespace, each its own CURVE
 * connection, all kept open): two are welcomed, every one beyond is
 * answered with the bound by name (and closed), and another key's client
 * from the same host is welcomed and given a task.
 */
Test(netns, a_key_holding_connections_from_the_other_host_is_held_to_its_bound)
{
    REQUIRE_NET();
    enum { OPENED = 6 };
    new_keys("coord");
    new_keys("greedy");
    new_keys("honest");
    allow("greedy", "greedy");
    allow("honest", "honest");
    cu_sprt(cu_fx.store, "NullR=2", 2, 100, 500, -500, 500);
    const char *opts[] = { "--key-connections", "2", NULL };
    coordinator_with(opts);
    char clog[256], why[512], key[256], pub[256];
    snprintf(clog, sizeof clog, "%s", at("coordinator.log"));
    snprintf(key, sizeof key, "%s", at("greedy"));
    snprintf(pub, sizeof pub, "%s", at("coord.pub"));
    CuClient c[OPENED];
    int welcomed = 0, bounded = 0;
    for (int i = 0; i < OPENED; i++) {
        char name[32];
        snprintf(name, sizeof name, "greedy%d", i);
        cr_assert_eq(cu_client_open(&c[i], coord_endpoint(), key, pub, net.worker, why, sizeof why), 0, "%s", why);
        if (cu_client_hello(&c[i], name, why, sizeof why) == 0)
            welcomed++;
        else
            bounded += strstr(why, "(--key-connections)") != NULL;
    }
    cr_assert(welcomed == 2 && bounded == OPENED - 2, "%d welcomed, %d refused by the bound (the last: %s; log: %s)",
              welcomed, bounded, why, clog);
    cr_assert(shows(clog, "key greedy: a connection refused and closed: the key holds 2 open connections", 5),
              "log: %s", clog);
    CuClient h;
    snprintf(key, sizeof key, "%s", at("honest"));
    cr_assert_eq(cu_client_open(&h, coord_endpoint(), key, pub, net.worker, why, sizeof why), 0, "%s", why);
    cr_assert_eq(cu_client_hello(&h, "honest", why, sizeof why), 0, "the other key: %s (log: %s)", why, clog);
    XqfMsg t;
    cr_assert_eq(cu_client_task(&h, &t, why, sizeof why), 0, "the other key: %s (log: %s)", why, clog);
    xqf_msg_free(&t);
    cu_client_close(&h);
    for (int i = 0; i < OPENED; i++)
        cu_client_close(&c[i]);
}

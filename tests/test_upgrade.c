/*
 * Rolling upgrades (docs/cluster.md, "Rolling upgrades"; the versions
 * rule: docs/architecture.md): a real PostgreSQL (XQF_TEST_DB; skipped
 * without it), xqf-coordinator and workers on loopback ZeroMQ.  The
 * workers of the previous protocol version are xqf-worker-prev, this
 * worker built to speak XQF_PROTOCOL_OLDEST (tests/CMakeLists.txt); the
 * release they update themselves to is this build's xqf-worker, signed
 * with xqf-keys sign-worker.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster_util.h"
#include "codec.h"
#include "release.h"

TestSuite(upgrade, .init = cu_fixture_init, .fini = cu_fixture_fini, .timeout = 280);

enum { OPENINGS = 16, NODES = 1000 };

/* The previous version's worker, from XQF_BIN (build/bin) to the tests' folder. */
#define WORKER_PREV "../tests/xqf-worker-prev"

/* A shell command that must succeed (its stderr in the log). */
static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
    char cmd[2048], out[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    cr_assert_eq(cu_sh(out, sizeof out, cmd, cu_fx.logfile), 0, "%s failed (log: %s)", cmd, cu_fx.logfile);
}

/*
 * An operator key (DIR/NAME.key, its public half the trust file
 * DIR/NAME.key.pub) and this build's xqf-worker copied to DIR/release/
 * and signed by the key `signer` into its .release: the release's path
 * in out.
 */
static void make_release(const char *signer, char *out, size_t size)
{
    snprintf(out, size, "%s/release/xqf-worker", cu_fx.dir);
    sh("'%s/xqf-keys' sign-new '%s/%s.key' >/dev/null", XQF_BIN, cu_fx.dir, signer);
    sh("mkdir -p '%s/release' && cp '%s/xqf-worker' '%s'", cu_fx.dir, XQF_BIN, out);
    sh("'%s/xqf-keys' sign-worker '%s/%s.key' '%s'", XQF_BIN, cu_fx.dir, signer, out);
}

/*
 * A coordinator on the test's port serving protocol `accept` on (NULL:
 * its own only), with the release (NULL: none), its metrics on
 * 127.0.0.1:metrics (0: none).
 */
static pid_t coordinator(const char *accept, const char *release, int metrics)
{
    char bind[64], at[32];
    snprintf(bind, sizeof bind, "tcp://127.0.0.1:%d", cu_fx.port);
    snprintf(at, sizeof at, "127.0.0.1:%d", metrics);
    const char *args[14] = { "--bind", bind, "--db", cu_fx.db_coordinator, "--lease", "10", NULL };
    int n = 6;
    if (metrics) {
        args[n++] = "--metrics";
        args[n++] = at;
    }
    if (accept) {
        args[n++] = "--accept-protocol";
        args[n++] = accept;
    }
    if (release) {
        args[n++] = "--worker-release";
        args[n++] = release;
    }
    args[n] = NULL;
    return cu_track(cu_spawn_env("xqf-coordinator", cu_fx.logfile, args, NULL));
}

/* A worker of the previous version named name, trusting DIR/operator.key.pub, its folders under DIR/name. */
static pid_t prev_worker(const char *name)
{
    char ep[64], trust[300], cache[300], updates[300];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", cu_fx.port);
    snprintf(trust, sizeof trust, "%s/operator.key.pub", cu_fx.dir);
    snprintf(cache, sizeof cache, "%s/%s/cache", cu_fx.dir, name);
    snprintf(updates, sizeof updates, "%s/%s/updates", cu_fx.dir, name);
    const char *args[] = { "--connect", ep, "--name", name, "--concurrency", "1", "--trust", trust,
                           "--cache", cache, "--update-dir", updates, "--no-sandbox", NULL };
    return cu_track(cu_spawn_env(WORKER_PREV, cu_fx.logfile, args, NULL));
}

/* The program process pid runs now (/proc/PID/exe), into out. */
static void exe_of(pid_t pid, char *out, size_t size)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(link, out, size - 1);
    out[n > 0 ? n : 0] = '\0';
}

/* Waits up to 15 s for the gauge name of the metrics on port to read value (its last value else). */
static double wait_gauge(int port, const char *name, double value)
{
    static char page[1 << 20];
    double end = cu_now() + 15, got = -1;
    while ((got = cu_http(port, "GET", "/metrics", page, sizeof page) == 200 ? cu_sample(page, name) : -1) != value &&
           cu_now() < end)
        cu_sleep_ms(200);
    return got;
}

/* Waits up to seconds for at least n lines of the log holding text. */
static bool wait_log(const char *text, int n, double seconds)
{
    double end = cu_now() + seconds;
    while (cu_log_lines(cu_fx.logfile, text) < n && cu_now() < end)
        cu_sleep_ms(100);
    return cu_log_lines(cu_fx.logfile, text) >= n;
}

Test(upgrade, the_coordinator_first_then_the_workers_update_themselves_mid_sprt)
{
    CU_REQUIRE_DB();
    char release[300], prev[16];
    make_release("operator", release, sizeof release);
    Release r;
    char sig_path[320], why[256];
    snprintf(sig_path, sizeof sig_path, "%s.release", release);
    cr_assert_eq(release_read(sig_path, &r, why, sizeof why), 0, "%s", why);
    cr_assert_eq(r.protocol, XQF_PROTOCOL_VERSION);
    snprintf(prev, sizeof prev, "%d", XQF_PROTOCOL_OLDEST);

    /*
     * The cluster as it was: workers of the previous version, one game at
     * a time, each opening played once at fixed nodes: the run's totals
     * are then what an uninterrupted xqf-match plays over the same openings.
     */
    int64_t run = cu_sprt_openings(cu_fx.store, "NullR=2", 2, OPENINGS, NODES, -500, 500);
    /* an older release left in w1's folder: removed once the new one is current */
    char old[64 + 1];
    memset(old, 'a', 64);
    old[64] = '\0';
    sh("mkdir -p '%s/w1/updates' && mkdir -m 700 '%s/w1/updates/versions' && printf x > '%s/w1/updates/versions/%s' "
       "&& printf 'name xqf-worker-12\\nsignature \\n' > '%s/w1/updates/versions/%s.sig'", cu_fx.dir, cu_fx.dir,
       cu_fx.dir, old, cu_fx.dir, old);
    pid_t c = coordinator(prev, NULL, 0);
    pid_t w[2] = { prev_worker("w1"), prev_worker("w2") };
    cr_assert(cu_wait_pairs(cu_fx.store, run, 2, 90), "no pairs reported (log: %s)", cu_fx.logfile);

    /* the coordinator upgraded first: restarted with the release, the old workers still served */
    cu_stop(c, SIGTERM);
    cu_untrack(c);
    int metrics = cu_free_port();
    coordinator(prev, release, metrics);
    cr_assert(wait_log("restarting into", 2, 90), "the workers did not restart (log: %s)", cu_fx.logfile);
    StoreRun now;
    cr_assert_eq(store_load_run(cu_fx.store, run, &now, false), 1);
    cr_assert_lt(now.counts.pairs, OPENINGS, "the run ended before the workers updated: nothing shown (log: %s)",
                 cu_fx.logfile);

    StoreRun done;
    cr_assert(cu_wait_finished(cu_fx.store, run, 150, &done), "run %lld did not finish (log: %s)", (long long)run,
              cu_fx.logfile);
    cr_assert_str_eq(done.verdict, "max pairs", "log: %s", cu_fx.logfile);
    /* nothing lost, nothing counted twice: the run's counts are its tasks', its leases' and its stored games' */
    cr_assert(cu_audit(cu_fx.store, run, OPENINGS, why, sizeof why), "run %lld: %s (log: %s)", (long long)run, why,
              cu_fx.logfile);
    const char *book[OPENINGS];
    StoreCounts ref;
    cr_assert_eq(cu_book(book, OPENINGS), OPENINGS);
    cr_assert_eq(cu_match_pairs(book, OPENINGS, "NullR=2", "", NODES, 1, NULL, &ref), 0, "log: %s", cu_fx.logfile);
    const StoreCounts *got = &done.counts;
    cr_assert(got->wins == ref.wins && got->draws == ref.draws && got->losses == ref.losses,
              "W/D/L %lld/%lld/%lld, uninterrupted %lld/%lld/%lld (log: %s)", (long long)got->wins,
              (long long)got->draws, (long long)got->losses, (long long)ref.wins, (long long)ref.draws,
              (long long)ref.losses, cu_fx.logfile);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(got->penta[i], ref.penta[i], "pentanomial [%d]: %lld, uninterrupted %lld (log: %s)", i,
                     (long long)got->penta[i], (long long)ref.penta[i], cu_fx.logfile);

    /* each worker is the same process, now running the verified release from its versions folder */
    for (int i = 0; i < 2; i++) {
        char exe[PATH_MAX], want[PATH_MAX], link[PATH_MAX], target[PATH_MAX];
        exe_of(w[i], exe, sizeof exe);
        snprintf(want, sizeof want, "%s/w%d/updates/versions/%s", cu_fx.dir, i + 1, r.sha256);
        cr_assert_str_eq(exe, want, "worker %d runs %s (log: %s)", i + 1, exe, cu_fx.logfile);
        snprintf(link, sizeof link, "%s/w%d/updates/current", cu_fx.dir, i + 1);
        ssize_t n = readlink(link, target, sizeof target - 1);
        cr_assert(n > 0, "no %s", link);
        target[n] = '\0';
        snprintf(want, sizeof want, "versions/%s", r.sha256);
        cr_assert_str_eq(target, want);
    }
    char gone[PATH_MAX];
    snprintf(gone, sizeof gone, "%s/w1/updates/versions/%s", cu_fx.dir, old);
    cr_assert_neq(access(gone, F_OK), 0, "the older release was not removed (log: %s)", cu_fx.logfile);
    cr_assert_geq(cu_log_lines(cu_fx.logfile, "an older worker release removed"), 2, "log: %s", cu_fx.logfile);
    char hello[64];
    snprintf(hello, sizeof hello, "cores, protocol %d) said hello", XQF_PROTOCOL_VERSION);
    cr_assert_geq(cu_log_lines(cu_fx.logfile, hello), 2, "the workers did not come back as version %d (log: %s)",
                  XQF_PROTOCOL_VERSION, cu_fx.logfile);
    cr_assert_eq(cu_log_lines(cu_fx.logfile, "refused the worker release"), 0, "log: %s", cu_fx.logfile);
    /* the monitoring's count of workers yet to update: none of the two */
    cr_assert_eq(wait_gauge(metrics, "xqf_workers_connected", 2), 2, "log: %s", cu_fx.logfile);
    cr_assert_eq(wait_gauge(metrics, "xqf_workers_older_protocol", 0), 0, "log: %s", cu_fx.logfile);

    /* restarted as the old binary, the worker runs the newest verified one in its place */
    cu_stop(w[0], SIGTERM);
    cu_untrack(w[0]);
    pid_t again = prev_worker("w1");
    cr_assert(wait_log("running the newest verified worker", 1, 30), "log: %s", cu_fx.logfile);
    cu_sleep_ms(500);
    char exe[PATH_MAX], want[PATH_MAX];
    exe_of(again, exe, sizeof exe);
    snprintf(want, sizeof want, "%s/w1/updates/versions/%s", cu_fx.dir, r.sha256);
    cr_assert_str_eq(exe, want, "log: %s", cu_fx.logfile);
}

Test(upgrade, a_badly_signed_release_is_refused_and_the_old_worker_plays_on)
{
    CU_REQUIRE_DB();
    /* the workers trust operator.key; the release is signed by another key */
    sh("'%s/xqf-keys' sign-new '%s/operator.key' >/dev/null", XQF_BIN, cu_fx.dir);
    char release[300], prev[16];
    make_release("intruder", release, sizeof release);
    snprintf(prev, sizeof prev, "%d", XQF_PROTOCOL_OLDEST);
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 2, 8, 500, -500, 500);
    int metrics = cu_free_port();
    coordinator(prev, release, metrics);
    pid_t w = prev_worker("w1");
    StoreRun done;
    cr_assert(cu_wait_finished(cu_fx.store, run, 120, &done), "run %lld did not finish (log: %s)", (long long)run,
              cu_fx.logfile);
    char why[256];
    cr_assert(cu_audit(cu_fx.store, run, 8, why, sizeof why), "run %lld: %s (log: %s)", (long long)run, why,
              cu_fx.logfile);
    /* said by the worker, reported to the coordinator; the old binary runs on, no current link made */
    cr_assert_geq(cu_log_lines(cu_fx.logfile, "refused: worker "), 1, "log: %s", cu_fx.logfile);
    cr_assert_geq(cu_log_lines(cu_fx.logfile, "not signed by a trusted operator key"), 1, "log: %s", cu_fx.logfile);
    cr_assert(wait_log("refused the worker release", 1, 10), "not reported to the coordinator (log: %s)",
              cu_fx.logfile);
    cr_assert_eq(cu_log_lines(cu_fx.logfile, "restarting into"), 0, "log: %s", cu_fx.logfile);
    char exe[PATH_MAX], link[PATH_MAX], target[64];
    exe_of(w, exe, sizeof exe);
    cr_assert(strstr(exe, "xqf-worker-prev") != NULL, "the worker runs %s (log: %s)", exe, cu_fx.logfile);
    snprintf(link, sizeof link, "%s/w1/updates/current", cu_fx.dir);
    cr_assert_lt(readlink(link, target, sizeof target), 0, "%s was made", link);
    /* it still counts as a worker yet to update */
    cr_assert_eq(wait_gauge(metrics, "xqf_workers_older_protocol", 1), 1, "log: %s", cu_fx.logfile);
    /* and it does not fetch the refused release again at every hello */
    cr_assert_eq(cu_log_lines(cu_fx.logfile, "update to the worker release"), 1, "log: %s", cu_fx.logfile);
}

/*
 * A hello in version v: the answer's type and frame version, and the
 * error code when refused; type XQF_MSG_NONE when the answer is a frame
 * this code does not decode (one of a version before XQF_PROTOCOL_OLDEST).
 */
static void hello_in(unsigned v, XqfMsgType *type, unsigned *version, uint64_t *code)
{
    CuClient cl;
    char ep[64], why[256];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", cu_fx.port);
    cr_assert_eq(cu_client_open(&cl, ep, NULL, NULL, NULL, why, sizeof why), 0, "%s", why);
    XqfMsg m, a;
    XqfBuf b = { 0 };
    xqf_msg_init(&m, XQF_MSG_HELLO);
    m.version = v;
    snprintf(m.u.hello.name, sizeof m.u.hello.name, "probe-%u", v);
    m.u.hello.cores = m.u.hello.concurrency = 1;
    int got = 0;
    for (int i = 0; i < 100 && got == 0; i++) {
        cr_assert_eq(cu_client_send_msg(&cl, &m, &b), 0);
        got = cu_client_next(&cl, 200, &a);
    }
    cr_assert_neq(got, 0, "no answer to a hello of version %u (log: %s)", v, cu_fx.logfile);
    *type = got == 1 ? a.type : XQF_MSG_NONE;
    *version = got == 1 ? a.version : 0;
    *code = got == 1 && a.type == XQF_MSG_ERROR ? a.u.error.code : 0;
    xqf_msg_free(&a);
    xqf_buf_free(&b);
    cu_client_close(&cl);
}

Test(upgrade, the_window_of_versions_served)
{
    CU_REQUIRE_DB();
    XqfMsgType type;
    unsigned version;
    uint64_t code;
    /* by default only this version: the previous one is refused, in its own version so that it can read why */
    pid_t c = coordinator(NULL, NULL, 0);
    hello_in(XQF_PROTOCOL_OLDEST, &type, &version, &code);
    cr_assert_eq(type, XQF_MSG_ERROR);
    cr_assert_eq(code, XQF_ERR_VERSION);
    cr_assert_eq(version, XQF_PROTOCOL_OLDEST);
    hello_in(XQF_PROTOCOL_VERSION, &type, &version, &code);
    cr_assert_eq(type, XQF_MSG_WELCOME);
    cr_assert_eq(version, XQF_PROTOCOL_VERSION);
    cu_stop(c, SIGTERM);
    cu_untrack(c);
    /* with --accept-protocol: welcomed in its version; older than the oldest decoded: refused still */
    char prev[16];
    snprintf(prev, sizeof prev, "%d", XQF_PROTOCOL_OLDEST);
    coordinator(prev, NULL, 0);
    hello_in(XQF_PROTOCOL_OLDEST, &type, &version, &code);
    cr_assert_eq(type, XQF_MSG_WELCOME, "log: %s", cu_fx.logfile);
    cr_assert_eq(version, XQF_PROTOCOL_OLDEST);
    hello_in(XQF_PROTOCOL_OLDEST - 1, &type, &version, &code);
    cr_assert_eq(type, XQF_MSG_NONE, "an answer this code decodes: its version is not the hello's");
    char said[80];
    snprintf(said, sizeof said, "protocol version %d, expected %d-%d", XQF_PROTOCOL_OLDEST - 1, XQF_PROTOCOL_OLDEST,
             XQF_PROTOCOL_VERSION);
    cr_assert_geq(cu_log_lines(cu_fx.logfile, said), 1, "log: %s", cu_fx.logfile);
}

Test(upgrade, a_release_the_coordinator_cannot_serve_stops_its_start)
{
    CU_REQUIRE_DB();
    char release[300], out[1024], cmd[1200];
    make_release("operator", release, sizeof release);
    /* its bytes changed after it was signed */
    sh("chmod u+w '%s' && printf x >> '%s'", release, release);
    snprintf(cmd, sizeof cmd, "'%s/xqf-coordinator' --bind tcp://127.0.0.1:%d --db '%s' --worker-release '%s'",
             XQF_BIN, cu_fx.port, cu_fx.db_coordinator, release);
    cr_assert_eq(cu_sh(out, sizeof out, cmd, cu_fx.logfile), 1, "log: %s", cu_fx.logfile);
    cr_assert_geq(cu_log_lines(cu_fx.logfile, "are not the SHA-256 its .release file signs"), 1, "log: %s",
                  cu_fx.logfile);
    /* no signature file at all */
    snprintf(cmd, sizeof cmd,
             "'%s/xqf-coordinator' --bind tcp://127.0.0.1:%d --db '%s' --worker-release '%s/xqf-worker'", XQF_BIN,
             cu_fx.port, cu_fx.db_coordinator, XQF_BIN);
    cr_assert_eq(cu_sh(out, sizeof out, cmd, cu_fx.logfile), 1, "log: %s", cu_fx.logfile);
    cr_assert_geq(cu_log_lines(cu_fx.logfile, "sign the release: xqf-keys sign-worker"), 1, "log: %s", cu_fx.logfile);
    /* sign-worker refuses a binary that is no worker of version 14 or later */
    snprintf(cmd, sizeof cmd, "'%s/xqf-keys' sign-worker '%s/operator.key' /bin/true", XQF_BIN, cu_fx.dir);
    cr_assert_eq(cu_sh(out, sizeof out, cmd, cu_fx.logfile), 1, "log: %s", cu_fx.logfile);
    cr_assert_geq(cu_log_lines(cu_fx.logfile, "did not print a protocol version"), 1, "log: %s", cu_fx.logfile);
}

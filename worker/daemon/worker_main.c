/*
 * xqf-worker: plays tasks of the coordinator's runs and reports their
 * results (the worker itself: worker.h; its ZeroMQ link:
 * worker_transport.h).
 *
 * With --curve-secret (this worker's key pair, from xqf-keys new) and
 * --server-key (the coordinator's public key) the connection uses
 * ZeroMQ's CURVE: encrypted, and the coordinator lets the worker in only
 * if its public key is in its allow-list.  Without them, only a loopback,
 * ipc or inproc endpoint is connected to, unless --insecure says
 * otherwise (checked before anything is sent: exit status 2).
 *
 * Engine builds (SPRT tests of a code change) run only when signed by an
 * operator key of the --trust file (keys.h); --allow-unsigned lets
 * unsigned ones run too, for local tests.  With neither, every task that
 * needs a build is refused (the built-in engine's tasks are played).
 *
 * Build id (sent in hello, checked against a run's required build):
 * "xqf-<bench nodes at depth 5>-<hash of the default parameters>", computed
 * at start (0.2 s): the search's signature at a small depth and the
 * compiled-in parameters (a tuned build has other defaults).
 *
 * Updates (docs/cluster.md, "Rolling upgrades"): told by the coordinator
 * of a worker release of a newer protocol, the worker fetches it into
 * --update-dir's versions/, checks it (its SHA-256, an operator's
 * signature of its --trust file), points DIR/current at it, hands its
 * tasks back and restarts into it (execv, the same arguments).  At start,
 * a DIR/current newer than this worker and verified again is run in its
 * place: whatever starts the packaged worker runs the newest verified one.
 *
 * SIGTERM/SIGINT: the running games are abandoned, the complete pairs
 * reported, the tasks handed back, then bye.  Exit status 0, 1 on failure,
 * 2 on bad usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "builds.h"
#include "codec.h"
#include "log.h"
#include "opts.h"
#include "params.h"
#include "release.h"
#include "sandbox.h"
#include "worker.h"
#include "worker_transport.h"

enum { BUILD_DEPTH = 5, EXIT_USAGE = 2 };

/*
 * The protocol version this worker speaks.  The tests build a worker of
 * the previous version (xqf-worker-prev, tests/CMakeLists.txt) with
 * -DXQF_WORKER_PROTOCOL=13: a worker whose frames say 13, to be updated.
 */
#ifndef XQF_WORKER_PROTOCOL
#define XQF_WORKER_PROTOCOL XQF_PROTOCOL_VERSION
#endif

static Worker *running;              /* for the signal handler */
static volatile sig_atomic_t signalled; /* told to stop: leave, even when a release was about to take over */

static void on_signal(int sig)
{
    (void)sig;
    signalled = 1;
    if (running)
        worker_stop(running);
}

static void compute_build(char *out, size_t size)
{
    FILE *null = fopen("/dev/null", "we");   /* close-on-exec */
    uint64_t nodes = bench_run(BUILD_DEPTH, NULL, null ? null : stderr);
    if (null)
        fclose(null);
    Params p;
    params_default(&p);
    snprintf(out, size, "xqf-%" PRIu64 "-%016" PRIx64, nodes, params_hash(&p));
}

static const OptSpec OPTIONS[] = {
    { "--connect", OPT_TEXT, "ENDPOINT", "tcp://127.0.0.1:5555", .help = "the coordinator" },
    { "--name", OPT_TEXT, "NAME", NULL, .help = "this worker's name, 1-64 characters (default HOST-PID)" },
    { "--concurrency", OPT_INT, "N", NULL, .imin = 1, .imax = WORKER_MAX_THREADS,
      .help = "games played side by side (default: cores)" },
    { "--curve-secret", OPT_TEXT, "FILE", NULL,
      .help = "this worker's CURVE key pair (xqf-keys new FILE; FILE.pub goes into the allow-list)" },
    { "--server-key", OPT_TEXT, "FILE.pub", NULL, .help = "the coordinator's public key (with --curve-secret)" },
    { "--insecure", OPT_FLAG, NULL, NULL, .help = "connect in plaintext to a non-loopback ENDPOINT all the same" },
    { "--cache", OPT_TEXT, "DIR", NULL,
      .help = "engine builds fetched by SHA-256, nets in DIR/nets (default $XQF_CACHE, else "
              "$XDG_CACHE_HOME/xqf-worker, else ~/.cache/xqf-worker)" },
    { "--trust", OPT_TEXT, "FILE", NULL,
      .help = "operator public keys (xqf-keys sign-new's FILE.pub lines): engine builds and nets they signed may be used" },
    { "--allow-unsigned", OPT_FLAG, NULL, NULL,
      .help = "run unsigned engine builds and load unsigned nets too (local tests only: anyone who can register a build runs code here)" },
    { "--max-hash", OPT_INT, "MB", NULL, .imin = 1, .imax = 4096,
      .help = "refuse tasks whose hash is larger (default: a quarter of the memory over the games' two tables each, 16-4096)" },
    { "--no-sandbox", OPT_FLAG, NULL, NULL,
      .help = "run engine builds with this worker's rights, its environment and network (no bubblewrap here)" },
    { "--update-dir", OPT_TEXT, "DIR", NULL,
      .help = "worker releases the coordinator serves go to DIR/versions, DIR/current names the newest verified "
              "one, run in this one's place at start (default: the cache's worker/; needs --trust)" },
    { "--no-update", OPT_FLAG, NULL, NULL, .help = "never update to a worker release, nor run DIR/current" },
    { "--build-id", OPT_FLAG, NULL, NULL, .help = "print the build id and exit" },
    { "--protocol", OPT_FLAG, NULL, NULL, .help = "print the protocol version this worker speaks and exit" },
    OPTS_END,
};

static const OptTable TABLE = {
    .program = "xqf-worker", .spec = OPTIONS,
    .usage = "Usage: xqf-worker [--connect ENDPOINT] [--name NAME] [--concurrency N] [--cache DIR]\n"
             "                  [--curve-secret FILE --server-key FILE.pub | --insecure]\n"
             "                  [--trust FILE] [--allow-unsigned] [--max-hash MB] [--no-sandbox]\n"
             "                  [--update-dir DIR | --no-update] [--build-id] [--protocol]\n"
             "\n"
             "Plays tasks of the coordinator's runs with the built-in engine and reports\n"
             "their results.  Engine builds a task names run only when signed by an\n"
             "operator key of the --trust file; without --trust (or --allow-unsigned)\n"
             "such tasks are refused.  Engine builds (and their benches) run in a sandbox\n"
             "(bubblewrap): as nobody, with an empty environment, no network, nothing of\n"
             "the machine but the system's /usr (no key, no cache, no home), under memory\n"
             "and process limits; without bubblewrap the worker does not start, unless\n"
             "--no-sandbox.  A worker release of a newer protocol the coordinator serves,\n"
             "signed by a key of the --trust file, is fetched, checked, and restarted into.\n",
    .epilog = "\nSIGTERM hands the tasks back and leaves. Logs: stderr (XQF_LOG=debug|info|warn|error).\n",
};

/*
 * Runs DIR/current in this process's place (execv, the same arguments)
 * when it names a cached release (versions/SHA) verified now (its
 * SHA-256, its signature by a trusted key) of a newer protocol than
 * this worker's; returns when there is none, or it cannot run (said).
 */
static void run_newest(const char *dir, const TrustList *trust, char **argv)
{
    char link[PATH_MAX], target[PATH_MAX], versions[PATH_MAX], name[XQF_NAME_MAX + 1];
    snprintf(link, sizeof link, "%s/current", dir);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0)
        return;
    target[n] = '\0';
    const char *sha = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
    snprintf(versions, sizeof versions, "%s/versions", dir);
    BuildCache *c = builds_sha_ok(sha) ? builds_new_kind(versions, SIGN_WORKER, trust, false, false) : NULL;
    const char *path = c ? builds_path(c, sha) : NULL;
    unsigned protocol = path && builds_name(c, sha, name) == 0 ? release_protocol(name) : 0;
    if (!path)
        log_warn("%s does not name a verified worker release (%s): running this worker (protocol %d)", link, target,
                 XQF_WORKER_PROTOCOL);
    if (protocol > XQF_WORKER_PROTOCOL) {
        char exe[PATH_MAX];
        snprintf(exe, sizeof exe, "%s", path);
        builds_destroy(&c);
        log_info("running the newest verified worker, %s (protocol %u), in place of this one (protocol %d)", name,
                 protocol, XQF_WORKER_PROTOCOL);
        execv(exe, argv);
        log_warn("cannot run %s: %s: running this worker", exe, strerror(errno));
    }
    builds_destroy(&c);
}

int main(int argc, char **argv)
{
    Opts o;
    int rc = opts_parse(&o, &TABLE, argc - 1, argv + 1);
    if (rc != OPTS_OK)
        return rc == OPTS_HELP ? 0 : EXIT_USAGE;
    if (opts_given(&o, "--protocol")) {
        printf("%d\n", XQF_WORKER_PROTOCOL);
        return 0;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    char host[64] = "worker", name[XQF_NAME_MAX + 1], build[XQF_NAME_MAX + 1], cache_dir[PATH_MAX / 2];
    gethostname(host, sizeof host - 1);
    snprintf(name, sizeof name, "%.40s-%ld", host, (long)getpid());
    builds_default_dir(cache_dir, sizeof cache_dir);
    const char *v;
    if ((v = opts_text(&o, "--name")) && (!*v || strlen(v) > XQF_NAME_MAX))
        return opts_error(TABLE.program, "--name: 1-%d characters", XQF_NAME_MAX), EXIT_USAGE;
    if (v)
        snprintf(name, sizeof name, "%s", v);
    if ((v = opts_text(&o, "--cache")) && (!*v || strlen(v) >= sizeof cache_dir))
        return opts_error(TABLE.program, "--cache: a folder, please"), EXIT_USAGE;
    char cwd[PATH_MAX / 4];
    /* an absolute cache: the paths of its nets are told to boxed engines, whose working folder is / */
    if (v && v[0] != '/' && getcwd(cwd, sizeof cwd))
        snprintf(cache_dir, sizeof cache_dir, "%s/%s", cwd, v);
    else if (v)
        snprintf(cache_dir, sizeof cache_dir, "%s", v);
    const char *endpoint = opts_text(&o, "--connect");
    WtSecurity security = { opts_text(&o, "--curve-secret"), opts_text(&o, "--server-key"),
                            opts_given(&o, "--insecure") };
    char why[512];
    if (!opts_given(&o, "--build-id") && wt_check(endpoint, &security, why, sizeof why) != 0)
        return opts_error(TABLE.program, "%s", why), EXIT_USAGE;
    TrustList trust;
    if ((v = opts_text(&o, "--trust")) && trust_read(v, &trust, why, sizeof why) != 0)
        return opts_error(TABLE.program, "--trust: %s", why), EXIT_USAGE;
    char update_dir[PATH_MAX / 2 + 16];
    snprintf(update_dir, sizeof update_dir, "%s/worker", cache_dir);
    if ((v = opts_text(&o, "--update-dir")) && (!*v || strlen(v) >= sizeof update_dir || opts_given(&o, "--no-update")))
        return opts_error(TABLE.program, "--update-dir: a folder, and not with --no-update"), EXIT_USAGE;
    if (v)
        snprintf(update_dir, sizeof update_dir, "%s", v);
    bool updates = !opts_given(&o, "--no-update") && opts_given(&o, "--trust");
    if (updates && !opts_given(&o, "--build-id")) {
        xqf_log_init(name);
        run_newest(update_dir, &trust, argv);
    }
    compute_build(build, sizeof build);
    if (opts_given(&o, "--build-id")) {
        printf("%s\n", build);
        return 0;
    }
    int cores = online > 0 ? (int)online : 1;
    WorkerConfig cfg = { .name = name, .build = build, .cores = cores, .cache_dir = cache_dir,
                         .trust = opts_given(&o, "--trust") ? &trust : NULL,
                         .allow_unsigned = opts_given(&o, "--allow-unsigned"),
                         .no_sandbox = opts_given(&o, "--no-sandbox"),
                         .protocol = XQF_WORKER_PROTOCOL, .update_dir = updates ? update_dir : NULL,
                         .threads = opts_given(&o, "--concurrency") ? (int)opts_int(&o, "--concurrency") : cores };
    if (cfg.threads > WORKER_MAX_THREADS)
        cfg.threads = WORKER_MAX_THREADS;
    /* each game holds two engines' tables: a quarter of the memory for all of them by default */
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    long long memory_mb = pages > 0 && page > 0 ? (long long)pages * page / (1 << 20) : 4096;
    long long fit = memory_mb / 4 / 2 / cfg.threads;
    cfg.max_hash_mb = opts_given(&o, "--max-hash") ? (int)opts_int(&o, "--max-hash")
                      : (int)(fit < 16 ? 16 : fit > 4096 ? 4096 : fit);
    if (!cfg.no_sandbox && !sandbox_program(why, sizeof why))
        return opts_error(TABLE.program, "no sandbox for engine builds: %s; install it, or start with --no-sandbox "
                          "to run them with this worker's rights", why), EXIT_USAGE;
    xqf_log_init(name);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    WorkerTransport *t = wt_new(endpoint, &security);
    WorkerLink link = wt_link(t);
    Worker *w = t ? worker_new(&cfg, &link) : NULL;
    rc = 1;
    if (w) {
        log_info("build %s, protocol %d, %d game threads, coordinator %s", build, XQF_WORKER_PROTOCOL, cfg.threads,
                 endpoint);
        if (cfg.trust)
            log_info("engine builds and nets: used when signed by one of the %d operator keys of %s%s", trust.count,
                     opts_text(&o, "--trust"), cfg.allow_unsigned ? " (unsigned ones too: --allow-unsigned)" : "");
        else if (cfg.allow_unsigned)
            log_warn("engine builds and nets: --allow-unsigned without --trust: ANY build the coordinator serves runs here");
        else
            log_info("engine builds and nets: none used here (no --trust FILE of operator keys)");
        running = w;
        rc = worker_run(w) == 0 ? 0 : 1;
        running = NULL;
    }
    char restart[PATH_MAX] = "";
    if (w && worker_restart_path(w) && !signalled)
        snprintf(restart, sizeof restart, "%s", worker_restart_path(w));
    worker_destroy(&w);
    wt_destroy(&t);
    if (restart[0]) {
        /* the tasks are handed back and the link closed: the release takes this process's place */
        log_info("restarting into %s", restart);
        execv(restart, argv);
        log_error("cannot run %s: %s", restart, strerror(errno));
        return 1;
    }
    return rc;
}

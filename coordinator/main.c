/*
 * xqf-coordinator: hands game pairs to workers over ZeroMQ and keeps every
 * result in PostgreSQL.
 *
 *   xqf-coordinator [--bind ENDPOINT] [--db CONNINFO] [--lease SECONDS] [--batch N]
 *                   [--curve-secret FILE --allow FILE | --insecure]
 *   xqf-coordinator --status [--db CONNINFO] [--runs N]
 *
 * Security: with --curve-secret (the coordinator's key pair, from xqf-keys
 * new) and --allow (the allow-list of worker public keys, edited with
 * xqf-keys allow / revoke), ZeroMQ's CURVE encrypts every connection and
 * only allowed workers get in (transport.h, zap.h); the list is re-read
 * when it changes, so a revocation needs no restart.  Without CURVE only
 * a loopback, ipc or inproc endpoint is served, unless --insecure says
 * plaintext on a network is meant (a warning is logged).
 *
 * Exit status: 0 stopped by SIGTERM/SIGINT (or status printed), 1 failure
 * (a key file or the allow-list unreadable included), 2 bad usage (a
 * non-loopback --bind without CURVE or --insecure included).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec.h"
#include "log.h"
#include "server.h"
#include "status.h"
#include "store.h"
#include "transport.h"

static volatile sig_atomic_t stop_flag = 0;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void usage(FILE *out)
{
    fputs("Usage: xqf-coordinator [--bind ENDPOINT] [--db CONNINFO] [--lease SECONDS] [--batch N]\n"
          "                       [--curve-secret FILE --allow FILE | --insecure]\n"
          "       xqf-coordinator --status [--db CONNINFO] [--runs N]\n"
          "\n"
          "Serves tasks of the active runs to xqf-worker processes over a ZeroMQ ROUTER\n"
          "and records their results in PostgreSQL (schema migrations applied at start).\n"
          "\n"
          "  --bind ENDPOINT   ZeroMQ endpoint (default tcp://127.0.0.1:5555); one others\n"
          "                    can reach needs CURVE, or --insecure\n"
          "  --db CONNINFO     libpq connection string (default: $XQF_DB)\n"
          "  --lease SECONDS   a task not heard of this long is re-queued (default 60)\n"
          "  --batch N         messages per transaction at most (default 512)\n"
          "  --curve-secret FILE\n"
          "                    the coordinator's CURVE key pair (xqf-keys new FILE):\n"
          "                    encrypted connections, workers authenticated by their keys\n"
          "  --allow FILE      with --curve-secret: the allow-list of worker keys (xqf-keys\n"
          "                    allow / revoke; re-read when it changes)\n"
          "  --insecure        serve plaintext on a non-loopback ENDPOINT all the same\n"
          "  --status          print workers and runs (from the database) and exit\n"
          "  --runs N          with --status: the N newest runs (default 20)\n"
          "Logs go to stderr (XQF_LOG=debug|info|warn|error).\n",
          out);
}

static int print_status(const char *db, int runs)
{
    Store *store = store_new(db);
    XqfStrs workers = { 0, NULL }, lines = { 0, NULL };
    int rc = store && store_connect(store) == 0 && status_lines(store, runs, &workers, &lines) == 0 ? 0 : 1;
    if (rc == 0) {
        printf("Workers (seen in the last 10 minutes): %u\n", workers.count);
        for (uint32_t i = 0; i < workers.count; i++)
            printf("  %s\n", workers.v[i]);
        printf("Runs: %u\n", lines.count);
        for (uint32_t i = 0; i < lines.count; i++)
            printf("  %s\n", lines.v[i]);
    }
    xqf_strs_free(&workers);
    xqf_strs_free(&lines);
    store_destroy(&store);
    return rc;
}

int main(int argc, char **argv)
{
    ServerConfig cfg = { "tcp://127.0.0.1:5555", getenv("XQF_DB"), 60000, 512 };
    TransportSecurity sec = { NULL, NULL, false };
    bool status = false;
    int runs = 20;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--status") == 0) {
            status = true;
            continue;
        }
        if (strcmp(a, "--insecure") == 0) {
            sec.insecure = true;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "xqf-coordinator: error: %s needs a value (see --help)\n", a);
            return 2;
        }
        const char *v = argv[++i];
        char *end;
        errno = 0;
        if (strcmp(a, "--bind") == 0) {
            cfg.bind = v;
        } else if (strcmp(a, "--db") == 0) {
            cfg.db = v;
        } else if (strcmp(a, "--curve-secret") == 0) {
            sec.curve_secret = v;
        } else if (strcmp(a, "--allow") == 0) {
            sec.allow = v;
        } else if (strcmp(a, "--lease") == 0) {
            double s = strtod(v, &end);
            if (end == v || *end || !(s >= 0.2 && s <= 86400)) {
                fprintf(stderr, "xqf-coordinator: error: --lease: '%s' is not 0.2-86400 seconds\n", v);
                return 2;
            }
            cfg.lease_ms = (int64_t)(s * 1000);
        } else if (strcmp(a, "--batch") == 0 || strcmp(a, "--runs") == 0) {
            long n = strtol(v, &end, 10);
            if (end == v || *end || n < 1 || n > 100000) {
                fprintf(stderr, "xqf-coordinator: error: %s: '%s' is not 1-100000\n", a, v);
                return 2;
            }
            *(a[2] == 'b' ? &cfg.batch_max : &runs) = (int)n;
        } else {
            fprintf(stderr, "xqf-coordinator: error: unknown option '%s' (see --help)\n", a);
            return 2;
        }
    }
    char why[512];
    if (!status && transport_check(cfg.bind, &sec, why, sizeof why) != 0) {
        fprintf(stderr, "xqf-coordinator: error: %s\n", why);
        return 2;
    }
    if (!cfg.db) {
        fprintf(stderr, "xqf-coordinator: error: give --db CONNINFO or set XQF_DB\n");
        return 2;
    }
    transport_set_security(&sec);
    xqf_log_init("coordinator");
    if (status)
        return print_status(cfg.db, runs);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    return server_run(&cfg, &stop_flag) == 0 ? 0 : 1;
}

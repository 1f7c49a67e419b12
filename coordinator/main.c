/*
 * xqf-coordinator: hands game pairs to workers over ZeroMQ and keeps every
 * result in PostgreSQL.
 *
 *   xqf-coordinator [--bind ENDPOINT] [--db CONNINFO] [--lease SECONDS] [--batch N]
 *                   [--rate-limit N] [--max-peers N] [--quarantine-after N] [--max-concurrency N]
 *                   [--key-peers N] [--key-leases N] [--key-hellos N]
 *                   [--key-connections N] [--first-message SECONDS]
 *                   [--curve-secret FILE --allow FILE | --insecure] [--metrics HOST:PORT]
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
 * Monitoring: with --metrics HOST:PORT, GET /metrics on that address
 * answers Prometheus's text format (metrics.h; docs/cluster.md,
 * "Monitoring"); off by default.
 *
 * Exit status: 0 stopped by SIGTERM/SIGINT (or status printed), 1 failure
 * (a key file or the allow-list unreadable, the --metrics port in use
 * included), 2 bad usage (a non-loopback --bind without CURVE or
 * --insecure, a --metrics that is not HOST:PORT included).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "log.h"
#include "metrics.h"
#include "opts.h"
#include "server.h"
#include "status.h"
#include "store.h"
#include "transport.h"

#define STR_(x) #x
#define STR(x) STR_(x)

enum { EXIT_USAGE = 2 };

static Server *running;              /* for the signal handler */

static void on_signal(int sig)
{
    (void)sig;
    if (running)
        server_stop(running);
}

static const OptSpec OPTIONS[] = {
    { "--bind", OPT_TEXT, "ENDPOINT", SERVER_BIND_DEFAULT,
      .help = "ZeroMQ endpoint; one others can reach needs CURVE, or --insecure" },
    { "--db", OPT_TEXT, "CONNINFO", NULL, .help = "libpq connection string (default: $XQF_DB)" },
    { "--lease", OPT_REAL, "SECONDS", STR(SERVER_LEASE_S_DEFAULT), .rmin = 0.2, .rmax = 86400,
      .help = "a task not heard of this long is re-queued" },
    { "--batch", OPT_INT, "N", STR(SERVER_BATCH_DEFAULT), .imin = 1, .imax = 100000,
      .help = "messages per transaction at most" },
    { "--rate-limit", OPT_REAL, "N", STR(SERVER_RATE_DEFAULT), .rmin = 0, .rmax = 1e9,
      .help = "messages per second per key (per connection in plaintext), as many at once; more are "
              "refused; 0: no limit" },
    { "--max-peers", OPT_INT, "N", STR(SERVER_MAX_PEERS_DEFAULT), .imin = 1, .imax = 1000000,
      .help = "live workers at most (those whose connection closed do not count; silent ones evicted for "
              "newcomers; new ones refused beyond)" },
    { "--max-concurrency", OPT_INT, "N", STR(SERVER_MAX_CONCURRENCY_DEFAULT), .imin = 1, .imax = 65536,
      .help = "games side by side a worker may announce (more is held to N: its leases are bounded by it)" },
    { "--key-peers", OPT_INT, "N", STR(SERVER_KEY_PEERS_DEFAULT), .imin = 1, .imax = 1000000,
      .help = "live workers per key (a CURVE allow-list name; in plaintext each worker is its own key): one "
              "more evicts the key's longest-silent, else is refused; a key filling --max-peers gives way to "
              "another key's newcomers" },
    { "--key-leases", OPT_INT, "N", STR(SERVER_KEY_LEASES_DEFAULT), .imin = 1, .imax = 100000000,
      .help = "leases a key's workers may hold together (more claims are answered idle); while another key "
              "waits for a run's task, a key at its fair share of the leases gets none of that run's" },
    { "--key-hellos", OPT_REAL, "N", STR(SERVER_KEY_HELLOS_DEFAULT), .rmin = 0, .rmax = 1e9,
      .help = "hellos a key may say a minute, and as many CURVE handshakes (as many at once); more are "
              "refused; 0: no limit" },
    { "--key-connections", OPT_INT, "N", NULL, .imin = 1, .imax = 1000000,
      .help = "open connections a key may hold under CURVE (default: twice --key-peers); one more first "
              "closes the key's longest-silent connection, if silent two heartbeat intervals, else is refused "
              "and closed" },
    { "--first-message", OPT_REAL, "SECONDS", STR(SERVER_FIRST_MESSAGE_S_DEFAULT), .rmin = 0.2, .rmax = 3600,
      .help = "a connection that sends no message this long after it is accepted (its handshake included) "
              "is closed" },
    { "--quarantine-after", OPT_INT, "N", STR(SERVER_QUARANTINE_DEFAULT), .imin = 1, .imax = 1000000,
      .help = "a task refused by workers of N distinct keys (or of every key, when fewer) is set aside "
              "with their reasons (status, xqf-tune show); a worker never gets a task it refused again" },
    { "--curve-secret", OPT_TEXT, "FILE", NULL,
      .help = "the coordinator's CURVE key pair (xqf-keys new FILE): encrypted connections, workers "
              "authenticated by their keys" },
    { "--allow", OPT_TEXT, "FILE", NULL,
      .help = "with --curve-secret: the allow-list of worker keys (xqf-keys allow / revoke; re-read when it "
              "changes)" },
    { "--insecure", OPT_FLAG, NULL, NULL, .help = "serve plaintext on a non-loopback ENDPOINT all the same" },
    { "--metrics", OPT_TEXT, "HOST:PORT", NULL,
      .help = "serve GET /metrics (Prometheus's text format) on this address, e.g. 127.0.0.1:9711 (HOST an IPv4 "
              "address, [IPv6] or localhost; no authentication: keep it on loopback or a monitoring network)" },
    { "--accept-protocol", OPT_INT, "N", NULL, .imin = XQF_PROTOCOL_OLDEST, .imax = XQF_PROTOCOL_VERSION,
      .help = "serve workers of protocol version N and later (default: this coordinator's own version only): "
              "the window of a rolling upgrade, in which older workers play on and update themselves" },
    { "--worker-release", OPT_TEXT, "FILE", NULL,
      .help = "a newer xqf-worker signed by xqf-keys sign-worker (FILE.release beside it): workers of an older "
              "protocol are told of it, fetch it, check its signature against their --trust file, and restart "
              "into it" },
    { "--status", OPT_FLAG, NULL, NULL, .help = "print workers and runs (from the database) and exit" },
    { "--runs", OPT_INT, "N", "20", .imin = 1, .imax = 100000, .help = "with --status: the N newest runs" },
    { "--migrate", OPT_FLAG, NULL, NULL,
      .help = "apply the schema migrations the database lacks, and the roles' privileges, and exit (as the "
              "schema's owner; the coordinator's start does it too when it connects as the owner)" },
    OPTS_END,
};

static const OptTable TABLE = {
    .program = "xqf-coordinator", .spec = OPTIONS,
    .usage = "Usage: xqf-coordinator [--bind ENDPOINT] [--db CONNINFO] [--lease SECONDS] [--batch N]\n"
             "                       [--rate-limit N] [--max-peers N] [--quarantine-after N] [--max-concurrency N]\n"
             "                       [--key-peers N] [--key-leases N] [--key-hellos N]\n"
             "                       [--key-connections N] [--first-message SECONDS]\n"
             "                       [--curve-secret FILE --allow FILE | --insecure] [--metrics HOST:PORT]\n"
             "                       [--accept-protocol N] [--worker-release FILE]\n"
             "       xqf-coordinator --status [--db CONNINFO] [--runs N]\n"
             "       xqf-coordinator --migrate [--db CONNINFO]\n"
             "\n"
             "Serves tasks of the active runs to xqf-worker processes over a ZeroMQ ROUTER\n"
             "and records their results in PostgreSQL.  The schema migrations are applied\n"
             "by --migrate or at the coordinator's start, only when connected as the\n"
             "schema's owner, never by --status or xqf-tune; every program refuses a\n"
             "database whose schema is newer than it knows.  Each program connects as a\n"
             "role of its own (xqf-coordinator: a member of xqf_coordinator, which may not\n"
             "migrate); see docs/cluster.md, \"Database roles\".\n",
    .epilog = "\nLogs go to stderr (XQF_LOG=debug|info|warn|error).\n",
};

/* --migrate: applies the missing migrations and says where the schema stands. Exit status. */
static int migrate_only(const char *db)
{
    Store *store = store_new(db);
    int rc = 1;
    if (store) {
        store_set_migrate(store, true);
        if (store_connect(store) == 0) {
            printf("schema at version %d (%d migrations applied now)\n", store_schema_version(store),
                   store_migrations_applied(store));
            rc = 0;
        }
    }
    store_destroy(&store);
    return rc;
}

static int print_status(const char *db, int runs)
{
    Store *store = store_new(db);
    XqfStrs workers = { 0, NULL }, lines = { 0, NULL };
    int rc = store && store_connect(store) == 0 && status_lines(store, runs, &workers, &lines) == 0 ? 0 : 1;
    if (rc == 0) {
        printf("Workers (seen in the last %d minutes): %u\n", STATUS_WORKER_WINDOW_S / 60, workers.count);
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
    Opts o;
    int rc = opts_parse(&o, &TABLE, argc - 1, argv + 1);
    if (rc != OPTS_OK)
        return rc == OPTS_HELP ? 0 : EXIT_USAGE;
    ServerConfig cfg = {
        .bind = opts_text(&o, "--bind"),
        .db = opts_given(&o, "--db") ? opts_text(&o, "--db") : getenv("XQF_DB"),
        .lease_ms = (int64_t)(opts_real(&o, "--lease") * 1000),
        .batch_max = (int)opts_int(&o, "--batch"),
        .security = { .curve_secret = opts_text(&o, "--curve-secret"), .allow = opts_text(&o, "--allow"),
                      .insecure = opts_given(&o, "--insecure"), .handshakes = opts_real(&o, "--key-hellos"),
                      .key_connections = opts_given(&o, "--key-connections") ? (int)opts_int(&o, "--key-connections")
                                                                             : 0,
                      .first_message_ms = (int64_t)(opts_real(&o, "--first-message") * 1000) },
        .rate = opts_real(&o, "--rate-limit"),
        .max_peers = (int)opts_int(&o, "--max-peers"),
        .max_concurrency = (int)opts_int(&o, "--max-concurrency"),
        .quarantine_after = (int)opts_int(&o, "--quarantine-after"),
        .key_peers = (int)opts_int(&o, "--key-peers"),
        .key_leases = (int)opts_int(&o, "--key-leases"),
        .key_hellos = opts_real(&o, "--key-hellos"),
        .metrics = opts_text(&o, "--metrics"),
        .accept_protocol = opts_given(&o, "--accept-protocol") ? (int)opts_int(&o, "--accept-protocol") : 0,
        .worker_release = opts_text(&o, "--worker-release"),
    };
    bool status = opts_given(&o, "--status"), migrate = opts_given(&o, "--migrate");
    char why[512];
    if (status && migrate)
        return opts_error(TABLE.program, "--status or --migrate, not both"), EXIT_USAGE;
    if (!status && !migrate && transport_check(cfg.bind, &cfg.security, why, sizeof why) != 0)
        return opts_error(TABLE.program, "%s", why), EXIT_USAGE;
    struct sockaddr_storage metrics_addr;
    if (!status && !migrate && cfg.metrics && metrics_address(cfg.metrics, &metrics_addr, why, sizeof why) != 0)
        return opts_error(TABLE.program, "%s", why), EXIT_USAGE;
    if (!cfg.db)
        return opts_error(TABLE.program, "give --db CONNINFO or set XQF_DB"), EXIT_USAGE;
    xqf_log_init("coordinator");
    if (status)
        return print_status(cfg.db, (int)opts_int(&o, "--runs"));
    if (migrate)
        return migrate_only(cfg.db);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    Server *server = server_new(&cfg);
    if (!server)
        return 1;
    running = server;
    rc = server_run(server);
    running = NULL;
    server_destroy(&server);
    return rc == 0 ? 0 : 1;
}

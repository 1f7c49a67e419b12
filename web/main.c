/*
 * xqf-web: the cluster's live dashboard (runs, a run's live charts,
 * machines, forms and actions for signed-in users), read from the same
 * PostgreSQL as the coordinator.
 *
 * Security: 127.0.0.1 by default; TLS with --cert and --key (a key that
 * group or others may read is refused); any other address without TLS is
 * refused unless --insecure says plaintext on a network is meant.
 *
 * Exit status: 0 stopped by SIGTERM/SIGINT, 1 failure (the database, the
 * socket, the certificate), 2 bad usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "http.h"
#include "keys.h"
#include "log.h"
#include "opts.h"
#include "web.h"

#ifndef XQF_DEFAULT_BOOK
#define XQF_DEFAULT_BOOK "ops/books/default.book"
#endif

enum { EXIT_USAGE = 2 };

static const OptSpec OPTIONS[] = {
    { "--listen", OPT_TEXT, "ADDRESS", "127.0.0.1", .help = "IPv4 or IPv6 address; a non-loopback one needs TLS, or --insecure" },
    { "--port", OPT_INT, "N", "8080", .imin = 0, .imax = 65535, .help = "TCP port (0: any free one, printed)" },
    { "--db", OPT_TEXT, "CONNINFO", NULL, .help = "libpq connection string (default: $XQF_DB)" },
    { "--db-connections", OPT_INT, "N", "4", .imin = 2, .imax = 100,
      .help = "database connections for pages (PGN downloads and reports hold at most N-1)" },
    { "--cert", OPT_TEXT, "FILE", NULL, .help = "TLS certificate (PEM), with --key: HTTPS" },
    { "--key", OPT_TEXT, "FILE", NULL, .help = "TLS private key (PEM)" },
    { "--insecure", OPT_FLAG, NULL, NULL, .help = "serve plain HTTP on a non-loopback ADDRESS all the same" },
    { "--login-required", OPT_FLAG, NULL, NULL, .help = "no read-only view without logging in" },
    { "--max-connections", OPT_INT, "N", "256", .imin = 4, .imax = 10000, .help = "connections at once (each a thread)" },
    { "--per-ip", OPT_INT, "N", "64", .imin = 1, .imax = 10000,
      .help = "connections at once from one address (an IPv6 /64), at most its fair share of the free ones" },
    { "--max-streams", OPT_INT, "N", NULL, .imin = 0, .imax = 5000,
      .help = "live pages (event streams) at once (default and most: half of --max-connections)" },
    { "--streams-per-ip", OPT_INT, "N", "16", .imin = 1, .imax = 10000,
      .help = "live pages at once from one address, at most its fair share of the free ones" },
    { "--timeout", OPT_INT, "SECONDS", "30", .imin = 1, .imax = 3600, .help = "an idle connection is closed after this" },
    { "--session-hours", OPT_INT, "H", "12", .imin = 1, .imax = 24 * 90, .help = "a login lasts this long" },
    { "--login-rate", OPT_INT, "N", "10", .imin = 1, .imax = 10000, .help = "failed logins per address and minute" },
    { "--login-account-rate", OPT_INT, "N", "10", .imin = 1, .imax = 10000,
      .help = "failed logins per account and minute from addresses it never logged in from" },
    { "--login-verifiers", OPT_INT, "N", "2", .imin = 1, .imax = 64,
      .help = "passwords verified at once (Argon2id: 64 MiB each; more logins wait)" },
    { "--pgn-max", OPT_INT, "N", "20000", .imin = 1, .imax = 10000000,
      .help = "games of one PGN download at most (built in memory; more: xqf-tune pgn)" },
    { "--tester-quota", OPT_INT, "N", "20", .imin = 1, .imax = 100000,
      .help = "runs a tester may have waiting for approval or builds (more are refused)" },
    { "--book", OPT_TEXT, "FILE", XQF_DEFAULT_BOOK, .help = "opening book of runs created on the web" },
    { "--trusted-proxy", OPT_TEXT, "ADDRESS", NULL,
      .help = "a reverse proxy's IP address: its X-Forwarded-For (last hop) is the client's (limits, logs)" },
    { "--secure-cookies", OPT_FLAG, NULL, NULL,
      .help = "session cookies only over HTTPS (Secure) without --cert: behind a TLS proxy" },
    { "--chart-js", OPT_TEXT, "FILE", "/usr/share/javascript/chart.js/chart.min.js", .help = "Chart.js (Debian libjs-chart.js)" },
    OPTS_END,
};

static const OptTable TABLE = {
    .program = "xqf-web", .spec = OPTIONS,
    .usage = "Usage: xqf-web [--listen ADDRESS] [--port N] [--db CONNINFO] [--cert FILE --key FILE | --insecure]\n"
             "               [--login-required] [options]\n"
             "\n"
             "Serves the live dashboard of the runs in PostgreSQL: runs, a run's numbers and\n"
             "charts (pushed as workers report), machines; signed-in users (xqf-tune user add)\n"
             "create, approve, stop and modify runs.\n",
    .epilog = "\nLogs go to stderr (XQF_LOG=debug|info|warn|error).\n",
};

/*
 * The TLS certificate's and key's texts, read before anything starts.  The
 * key is refused when group or others may read it (keys.h's rule for the
 * CURVE and operator keys, as ssh's for a private key): whoever reads it
 * can pose as this server.  0, or -1 (logged).
 */
static int read_tls(const char *cert, const char *key, char **cert_pem, char **key_pem)
{
    char err[512];
    if (!(*cert_pem = files_read(cert, 1 << 20, NULL))) {
        log_error("--cert %s: cannot read it: %s", cert, strerror(errno));
        return -1;
    }
    if (keys_read_secret_file(key, key_pem, err, sizeof err) != 0) {
        log_error("--key: %s", err);
        return -1;
    }
    return 0;
}

static bool ip_address(const char *address)
{
    unsigned char bin[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, address, bin) == 1 || inet_pton(AF_INET6, address, bin) == 1;
}

static bool loopback(const char *address)
{
    struct in_addr v4;
    struct in6_addr v6;
    if (inet_pton(AF_INET, address, &v4) == 1)
        return (ntohl(v4.s_addr) >> 24) == 127;
    return inet_pton(AF_INET6, address, &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

int main(int argc, char **argv)
{
    Opts o;
    int rc = opts_parse(&o, &TABLE, argc - 1, argv + 1);
    if (rc != OPTS_OK)
        return rc == OPTS_HELP ? 0 : EXIT_USAGE;
    const char *db = opts_given(&o, "--db") ? opts_text(&o, "--db") : getenv("XQF_DB");
    const char *cert = opts_text(&o, "--cert"), *key = opts_text(&o, "--key"), *listen = opts_text(&o, "--listen");
    if (!db)
        return opts_error(TABLE.program, "give --db CONNINFO or set XQF_DB"), EXIT_USAGE;
    if (!cert != !key)
        return opts_error(TABLE.program, "give both --cert and --key (or neither)"), EXIT_USAGE;
    if (!cert && !loopback(listen) && !opts_given(&o, "--insecure"))
        return opts_error(TABLE.program, "--listen %s is reachable from other machines: give --cert and --key "
                          "(TLS), or --insecure", listen), EXIT_USAGE;
    int max_connections = (int)opts_int(&o, "--max-connections");
    int max_streams = opts_given(&o, "--max-streams") ? (int)opts_int(&o, "--max-streams") : max_connections / 2;
    if (max_streams > max_connections / 2)      /* live pages never take the table from the pages */
        return opts_error(TABLE.program, "--max-streams %d is over half of --max-connections %d", max_streams,
                          max_connections), EXIT_USAGE;
    const char *proxy = opts_text(&o, "--trusted-proxy");
    if (proxy && !ip_address(proxy))
        return opts_error(TABLE.program, "--trusted-proxy %s is not an IPv4 or IPv6 address", proxy), EXIT_USAGE;
    xqf_log_init("web");
    if (!cert && !loopback(listen))
        log_warn("serving plain HTTP on %s (--insecure): passwords and cookies cross the network in clear", listen);
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);      /* every thread inherits it; main waits for them */
    signal(SIGPIPE, SIG_IGN);
    char *cert_pem = NULL, *key_pem = NULL;
    if (cert && read_tls(cert, key, &cert_pem, &key_pem) != 0) {
        free(cert_pem);
        return 1;
    }
    WebConfig wc = {
        .db = db, .db_connections = (int)opts_int(&o, "--db-connections"), .chart_js = opts_text(&o, "--chart-js"), .tls = cert != NULL || opts_given(&o, "--secure-cookies"),
        .login_required = opts_given(&o, "--login-required"), .session_hours = (int)opts_int(&o, "--session-hours"),
        .login_per_minute = (int)opts_int(&o, "--login-rate"),
        .login_per_account = (int)opts_int(&o, "--login-account-rate"),
        .login_verifiers = (int)opts_int(&o, "--login-verifiers"), .book = opts_text(&o, "--book"),
        .tester_quota = (int)opts_int(&o, "--tester-quota"), .pgn_max = (int)opts_int(&o, "--pgn-max"),
    };
    Web *web = web_new(&wc);
    HttpConfig hc = {
        .listen = listen, .port = (int)opts_int(&o, "--port"), .cert_pem = cert_pem, .key_pem = key_pem,
        .max_connections = max_connections, .per_ip = (int)opts_int(&o, "--per-ip"),
        .timeout_s = (int)opts_int(&o, "--timeout"), .max_streams = max_streams,
        .streams_per_ip = (int)opts_int(&o, "--streams-per-ip"),
        .trusted_proxy = proxy,
    };
    char err[256];
    Http *http = web ? http_start(web, &hc, err, sizeof err) : NULL;
    if (web && !http)
        log_error("%s", err);
    if (http) {
        log_info("serving %s://%s:%d/", cert ? "https" : "http", listen, http_port(http));
        int sig;
        sigwait(&stop, &sig);
        log_info("stopping (signal %d)", sig);
        web_shutdown(web);
    }
    http_stop(&http);
    web_destroy(&web);
    free(cert_pem);
    if (key_pem)
        memset(key_pem, 0, strlen(key_pem));   /* a secret key */
    free(key_pem);
    return http ? 0 : 1;
}

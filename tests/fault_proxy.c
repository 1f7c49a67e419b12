/*
 * xqf-faultproxy: a TCP proxy that misbehaves on purpose, for the fault
 * suite (tests/test_chaos.c, ops/chaos).  Workers connect to it, it
 * connects to the coordinator, and it forwards the bytes both ways while
 * doing to the link what a bad network does (this machine has no netem):
 *
 *   xqf-faultproxy --listen PORT --connect PORT [--host 127.0.0.1]
 *                  [--delay MS] [--jitter MS] [--drop-mean S] [--drops on|off]
 *                  [--blackhole AT_S:FOR_S]... [--blackhole-ms MIN[-MAX]] [--seed N]
 *
 *   --listen, --connect  it listens on 127.0.0.1:PORT and connects each client
 *                      to --host:PORT (a client is reset when that fails)
 *   --delay, --jitter  every chunk read is held delay + uniform(0, jitter) ms
 *                      before it is written on, keeping the order of each
 *                      direction (a chunk never overtakes the one before it)
 *   --drop-mean S      random connection drops: each connection lives an
 *                      exponential time of mean S seconds, then both of its
 *                      sides are reset (SO_LINGER 0: an RST, no FIN), what was
 *                      in flight is lost, as when a link dies under a TCP
 *                      stream (a drop due in a black-hole comes at its end);
 *                      --drops off starts with them disabled
 *   --blackhole AT:FOR from AT seconds after start, for FOR seconds, nothing
 *                      is read, written or accepted: the packets of every
 *                      connection are dropped, TCP keeps the connection and
 *                      delivers the bytes afterwards (repeatable)
 *
 * Signals (ops/chaos drives the proxy with them):
 *   SIGUSR1  reset every connection now
 *   SIGUSR2  a black-hole from now, of --blackhole-ms (default 5000; MIN-MAX: uniform)
 *   SIGHUP   random drops on/off
 *   SIGTERM, SIGINT  print the totals and exit 0
 *
 * Every event is logged on stderr; the last line is the totals:
 *   totals: connections N, resets R (random A, signal B), black-holes H, up U bytes, down D bytes
 * Exit status 0, 1 on failure, 2 on bad usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "opts.h"
#include "rng.h"

enum {
    CHUNK_MAX = 64 * 1024,
    QUEUE_MAX = 8 * 1024 * 1024,     /* bytes held per direction before reading stops */
    MAX_CONNS = 512,
    MAX_BLACKHOLES = 16
};

/* A chunk of one direction, written on once its release time has come. */
typedef struct Chunk {
    struct Chunk *next;
    int64_t release_us;
    size_t len, off;
    char data[];
} Chunk;

/* One direction of a connection: bytes read from `from`, queued, written to the other side. */
typedef struct {
    Chunk *head, *tail;
    size_t bytes;
    int64_t last_release_us;
} Queue;

typedef struct {
    int fd[2];                       /* 0: the client (worker), 1: upstream (coordinator) */
    bool connecting;                 /* upstream connect in progress */
    Queue q[2];                      /* q[0]: client -> upstream, q[1]: upstream -> client */
    int64_t drop_at_us;              /* random reset at this time (0: none) */
    int64_t opened_us;
    long long bytes[2];              /* read from each side */
    int id;
} Conn;

typedef struct {
    int64_t at_us, for_us;
} Blackhole;

typedef struct {
    const char *host;
    int listen_port, connect_port;
    int64_t delay_us, jitter_us;
    double drop_mean_s;
    bool drops;
    Blackhole planned[MAX_BLACKHOLES];
    int nplanned;
    int64_t signal_min_us, signal_max_us;
    uint64_t seed;
} Options;

typedef struct {
    long connections, resets_random, resets_signal, blackholes;
    long long up, down;
} Totals;

static volatile sig_atomic_t got_term, got_usr1, got_usr2, got_hup;

static void on_signal(int sig)
{
    if (sig == SIGUSR1)
        got_usr1 = 1;
    else if (sig == SIGUSR2)
        got_usr2 = 1;
    else if (sig == SIGHUP)
        got_hup = 1;
    else
        got_term = 1;
}

static int64_t now_us(void) { return clock_now_us(); }

/* The proxy's own random stream (reproducible by --seed). */
static Rng rng;

static int64_t rng_between(int64_t lo, int64_t hi)
{
    return hi > lo ? lo + (int64_t)(rng_unit(&rng) * (double)(hi - lo)) : lo;
}

/* ---- connections ------------------------------------------------------------- */

static Conn conns[MAX_CONNS];
static int nconns;
static int next_id = 1;

static void queue_clear(Queue *q)
{
    while (q->head) {
        Chunk *c = q->head;
        q->head = c->next;
        free(c);
    }
    q->tail = NULL;
    q->bytes = 0;
}

static void schedule_drop(const Options *o, Conn *c, int64_t now)
{
    c->drop_at_us = 0;
    if (o->drops && o->drop_mean_s > 0) {
        double life = -log(1.0 - rng_unit(&rng)) * o->drop_mean_s;
        c->drop_at_us = now + (int64_t)(life * 1e6) + 1000;
    }
}

/* Closes both sides: reset (an RST, what a dead link leaves) or an orderly close; logs why. */
static void conn_close(int i, bool reset, const char *why)
{
    Conn *c = &conns[i];
    log_info("connection %d %s after %.1f s (%lld bytes up, %lld down)", c->id, why,
             (double)(now_us() - c->opened_us) / 1e6, c->bytes[0], c->bytes[1]);
    for (int k = 0; k < 2; k++) {
        if (c->fd[k] < 0)
            continue;
        if (reset) {
            struct linger l = { 1, 0 };
            setsockopt(c->fd[k], SOL_SOCKET, SO_LINGER, &l, sizeof l);
        }
        close(c->fd[k]);
    }
    queue_clear(&c->q[0]);
    queue_clear(&c->q[1]);
    conns[i] = conns[--nconns];
}

static int nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

static void accept_one(const Options *o, int lfd, Totals *tot, int64_t now)
{
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0)
        return;
    if (nconns == MAX_CONNS || nonblocking(fd) != 0) {
        close(fd);
        return;
    }
    int up = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)o->connect_port) };
    inet_pton(AF_INET, o->host, &a.sin_addr);
    if (up < 0 || nonblocking(up) != 0 ||
        (connect(up, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS)) {
        if (up >= 0)
            close(up);
        struct linger l = { 1, 0 };
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        close(fd);
        return;
    }
    Conn *c = &conns[nconns++];
    memset(c, 0, sizeof *c);
    c->fd[0] = fd;
    c->fd[1] = up;
    c->connecting = true;
    c->id = next_id++;
    c->opened_us = now;
    schedule_drop(o, c, now);
    tot->connections++;
    log_info("connection %d opened", c->id);
}

/* Reads what side k has into queue k. Returns -1 when the side is closed or failed. */
static int conn_read(const Options *o, Conn *c, int k, Totals *tot, int64_t now)
{
    Chunk *ch = malloc(sizeof *ch + CHUNK_MAX);
    if (!ch)
        return 0;
    ssize_t n = read(c->fd[k], ch->data, CHUNK_MAX);
    if (n <= 0) {
        free(ch);
        return n < 0 && (errno == EAGAIN || errno == EINTR) ? 0 : -1;
    }
    Queue *q = &c->q[k];
    int64_t release = now + o->delay_us + rng_between(0, o->jitter_us);
    if (release < q->last_release_us)
        release = q->last_release_us;          /* never overtakes the chunk before it */
    q->last_release_us = release;
    ch->next = NULL;
    ch->release_us = release;
    ch->len = (size_t)n;
    ch->off = 0;
    if (q->tail)
        q->tail->next = ch;
    else
        q->head = ch;
    q->tail = ch;
    q->bytes += (size_t)n;
    c->bytes[k] += n;
    *(k == 0 ? &tot->up : &tot->down) += n;
    return 0;
}

/* Writes the released chunks of queue k to the other side. Returns -1 when that side failed. */
static int conn_write(Conn *c, int k, int64_t now)
{
    Queue *q = &c->q[k];
    int fd = c->fd[1 - k];
    while (q->head && q->head->release_us <= now) {
        Chunk *ch = q->head;
        ssize_t n = write(fd, ch->data + ch->off, ch->len - ch->off);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        ch->off += (size_t)n;
        q->bytes -= (size_t)n;
        if (ch->off < ch->len)
            return 0;
        q->head = ch->next;
        if (!q->head)
            q->tail = NULL;
        free(ch);
    }
    return 0;
}

/* ---- options ------------------------------------------------------------------ */

static const OptSpec OPTIONS[] = {
    { "--listen", OPT_INT, "PORT", NULL, .imin = 1, .imax = 65535, .help = "listen on 127.0.0.1:PORT (required)" },
    { "--connect", OPT_INT, "PORT", NULL, .imin = 1, .imax = 65535, .help = "connect each client to --host:PORT (required)" },
    { "--host", OPT_TEXT, "ADDR", "127.0.0.1", .help = "the upstream's IPv4 address" },
    { "--delay", OPT_REAL, "MS", "0", .rmin = 0, .rmax = 600000, .help = "every chunk is held this long" },
    { "--jitter", OPT_REAL, "MS", "0", .rmin = 0, .rmax = 600000, .help = "plus uniform(0, MS)" },
    { "--drop-mean", OPT_REAL, "S", "0", .rmin = 0, .rmax = 86400,
      .help = "random resets: each connection lives an exponential time of this mean (0: none)" },
    { "--drops", OPT_TEXT, "on|off", "on", .help = "random resets on at start" },
    { "--blackhole", OPT_TEXT, "AT_S:FOR_S", NULL, .help = "a black-hole from AT_S s after start, for FOR_S s", .repeat = true },
    { "--blackhole-ms", OPT_TEXT, "MIN[-MAX]", "5000", .help = "the black-hole of SIGUSR2 (MIN-MAX: uniform)" },
    { "--seed", OPT_TEXT, "N", NULL, .help = "the random stream (default: from the clock)" },
    OPTS_END,
};

static const OptTable TABLE = {
    .program = "xqf-faultproxy", .spec = OPTIONS,
    .usage = "Usage: xqf-faultproxy --listen PORT --connect PORT [--host 127.0.0.1]\n"
             "                      [--delay MS] [--jitter MS] [--drop-mean S] [--drops on|off]\n"
             "                      [--blackhole AT_S:FOR_S]... [--blackhole-ms MIN[-MAX]] [--seed N]\n"
             "\n"
             "Forwards TCP between clients and host:PORT, delaying every chunk (order kept),\n"
             "resetting connections at random and black-holing all traffic for a while.\n",
    .epilog = "\nSIGUSR1 resets every connection, SIGUSR2 starts a black-hole of --blackhole-ms,\n"
              "SIGHUP turns random drops on/off, SIGTERM prints the totals and exits.\n",
};

static bool parse_num(const char *v, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || *end || errno || !(d >= lo && d <= hi))
        return false;
    *out = d;
    return true;
}

/* The options into *o. 0, or -1 after the message. */
static int parse_options(int argc, char **argv, Options *o)
{
    Opts opts;
    *o = (Options){ 0 };
    int rc = opts_parse(&opts, &TABLE, argc - 1, argv + 1);
    if (rc == OPTS_HELP)
        exit(0);
    if (rc != OPTS_OK)
        return -1;
    if (!opts_given(&opts, "--listen") || !opts_given(&opts, "--connect"))
        return opts_error(TABLE.program, "--listen and --connect are required");
    *o = (Options){ .host = opts_text(&opts, "--host"), .listen_port = (int)opts_int(&opts, "--listen"),
                    .connect_port = (int)opts_int(&opts, "--connect"),
                    .delay_us = (int64_t)(opts_real(&opts, "--delay") * 1000),
                    .jitter_us = (int64_t)(opts_real(&opts, "--jitter") * 1000),
                    .drop_mean_s = opts_real(&opts, "--drop-mean"), .seed = (uint64_t)time(NULL) };
    struct in_addr x;
    if (inet_pton(AF_INET, o->host, &x) != 1)
        return opts_error(TABLE.program, "--host: '%s' is not an IPv4 address", o->host);
    const char *v = opts_text(&opts, "--drops");
    if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
        return opts_error(TABLE.program, "--drops: '%s' is not on or off", v);
    o->drops = strcmp(v, "on") == 0;
    for (int i = 0; (v = opts_nth(&opts, "--blackhole", i)); i++) {
        char at[32], *colon;
        double d, e;
        snprintf(at, sizeof at, "%s", v);
        if (!(colon = strchr(at, ':')) || o->nplanned == MAX_BLACKHOLES)
            return opts_error(TABLE.program, "--blackhole: '%s' is not AT_S:FOR_S (at most %d)", v, MAX_BLACKHOLES);
        *colon = '\0';
        if (!parse_num(at, 0, 86400, &d) || !parse_num(colon + 1, 0, 86400, &e))
            return opts_error(TABLE.program, "--blackhole: '%s' is not AT_S:FOR_S in 0-86400 s", v);
        o->planned[o->nplanned++] = (Blackhole){ (int64_t)(d * 1e6), (int64_t)(e * 1e6) };
    }
    char lo[32];
    double d, e = 0;
    v = opts_text(&opts, "--blackhole-ms");
    snprintf(lo, sizeof lo, "%s", v);
    char *dash = strchr(lo, '-');
    if (dash)
        *dash = '\0';
    if (!parse_num(lo, 0, 3600000, &d) || (dash && !parse_num(dash + 1, d, 3600000, &e)))
        return opts_error(TABLE.program, "--blackhole-ms: '%s' is not MIN[-MAX] in 0-3600000 ms", v);
    o->signal_min_us = (int64_t)(d * 1000);
    o->signal_max_us = (int64_t)((dash ? e : d) * 1000);
    if ((v = opts_text(&opts, "--seed"))) {
        char *end;
        o->seed = strtoull(v, &end, 10);
        if (end == v || *end)
            return opts_error(TABLE.program, "--seed: '%s' is not a number", v);
    }
    return 0;
}

static int listen_on(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 128) != 0 || nonblocking(fd) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* ---- the loop ------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    Options o;
    if (parse_options(argc, argv, &o) != 0)
        return 2;
    xqf_log_init("faultproxy");
    rng_seed(&rng, o.seed);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    int sigs[] = { SIGTERM, SIGINT, SIGUSR1, SIGUSR2, SIGHUP };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    int lfd = listen_on(o.listen_port);
    if (lfd < 0) {
        log_error("cannot listen on 127.0.0.1:%d: %s", o.listen_port, strerror(errno));
        return 1;
    }
    log_info("listening on 127.0.0.1:%d for %s:%d: delay %lld ms + jitter %lld ms, random drops %s "
             "(a connection lives %.1f s on average), seed %llu", o.listen_port, o.host, o.connect_port,
             (long long)(o.delay_us / 1000), (long long)(o.jitter_us / 1000),
             o.drops && o.drop_mean_s > 0 ? "on" : "off", o.drop_mean_s, (unsigned long long)o.seed);
    Totals tot = { 0 };
    int64_t start = now_us(), hole_until = 0;
    bool in_hole = false;
    static struct pollfd pfd[1 + 2 * MAX_CONNS];
    while (!got_term) {
        int64_t now = now_us();
        if (got_usr1) {
            got_usr1 = 0;
            log_info("signal: resetting %d connections", nconns);
            tot.resets_signal += nconns;
            while (nconns)
                conn_close(nconns - 1, true, "reset (signal)");
        }
        if (got_hup) {
            got_hup = 0;
            o.drops = !o.drops;
            for (int i = 0; i < nconns; i++)
                schedule_drop(&o, &conns[i], now);
            log_info("random drops %s", o.drops && o.drop_mean_s > 0 ? "on" : "off");
        }
        if (got_usr2) {
            got_usr2 = 0;
            int64_t len = rng_between(o.signal_min_us, o.signal_max_us);
            hole_until = now + len > hole_until ? now + len : hole_until;
        }
        for (int i = 0; i < o.nplanned; i++)
            if (o.planned[i].at_us >= 0 && now - start >= o.planned[i].at_us) {
                int64_t end = now + o.planned[i].for_us;
                hole_until = end > hole_until ? end : hole_until;
                o.planned[i].at_us = -1;
            }
        if (!in_hole && now < hole_until) {
            in_hole = true;
            tot.blackholes++;
            log_info("black-hole for %.1f s", (double)(hole_until - now) / 1e6);
        } else if (in_hole && now >= hole_until) {
            in_hole = false;
            log_info("black-hole over");
        }
        for (int i = nconns - 1; i >= 0; i--)
            if (o.drops && conns[i].drop_at_us && now >= conns[i].drop_at_us && !in_hole) {
                tot.resets_random++;
                conn_close(i, true, "reset (random drop)");
            }
        /* what to wait for, and until when */
        int64_t wake = now + 1000000;
        int n = 0;
        pfd[n++] = (struct pollfd){ lfd, in_hole || nconns == MAX_CONNS ? 0 : POLLIN, 0 };
        for (int i = 0; i < nconns; i++) {
            Conn *c = &conns[i];
            for (int k = 0; k < 2; k++) {
                short ev = 0;
                if (k == 1 && c->connecting)
                    ev = POLLOUT;
                else {
                    /* reads into queue k; writes queue 1 - k */
                    if (c->q[k].bytes < QUEUE_MAX && !(k == 0 && c->connecting))
                        ev |= POLLIN;
                    const Chunk *h = c->q[1 - k].head;
                    if (h && !c->connecting) {
                        if (h->release_us <= now)
                            ev |= POLLOUT;
                        else if (h->release_us < wake)
                            wake = h->release_us;
                    }
                }
                /* in a black-hole the connection is not looked at, not even for hang-ups */
                pfd[n++] = (struct pollfd){ in_hole ? -1 : c->fd[k], ev, 0 };
            }
            if (c->drop_at_us && o.drops && c->drop_at_us < wake)
                wake = c->drop_at_us;
        }
        if (in_hole && hole_until < wake)
            wake = hole_until;
        for (int i = 0; i < o.nplanned; i++)
            if (o.planned[i].at_us >= 0 && start + o.planned[i].at_us < wake)
                wake = start + o.planned[i].at_us;
        int timeout = (int)((wake - now + 999) / 1000);
        int ready = poll(pfd, (nfds_t)n, timeout > 0 ? timeout : 0);
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            log_error("poll: %s", strerror(errno));
            return 1;
        }
        now = now_us();
        int count = nconns;
        /* back to front: closing moves the last connection into the closed one's place */
        for (int i = count - 1; i >= 0; i--) {
            Conn *c = &conns[i];
            const struct pollfd *p = &pfd[1 + 2 * i];
            bool failed = false;
            if (c->connecting && p[1].revents) {
                int err = 0;
                socklen_t len = sizeof err;
                getsockopt(c->fd[1], SOL_SOCKET, SO_ERROR, &err, &len);
                if (err) {
                    conn_close(i, true, err == ECONNREFUSED ? "reset (upstream refused)" : "reset (upstream failed)");
                    continue;
                }
                c->connecting = false;
                continue;
            }
            for (int k = 0; k < 2 && !failed; k++) {
                if (p[k].revents & (POLLIN | POLLHUP | POLLERR))
                    failed = conn_read(&o, c, k, &tot, now) != 0;
                if (!failed && (p[k].revents & POLLOUT))
                    failed = conn_write(c, 1 - k, now) != 0;
            }
            if (failed)
                conn_close(i, false, "closed by a peer");
        }
        if (pfd[0].revents & POLLIN)
            accept_one(&o, lfd, &tot, now);
    }
    while (nconns)
        conn_close(nconns - 1, false, "closed (proxy stopping)");
    close(lfd);
    log_info("totals: connections %ld, resets %ld (random %ld, signal %ld), black-holes %ld, up %lld bytes, "
             "down %lld bytes", tot.connections, tot.resets_random + tot.resets_signal, tot.resets_random,
             tot.resets_signal, tot.blackholes, tot.up, tot.down);
    return 0;
}

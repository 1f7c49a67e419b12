#define _DEFAULT_SOURCE /* struct tcp_info, usleep */
/*
 * CURVE security (issue "Hardening", part 1): key files, the allow-list
 * and xqf-keys (no database); the transport's policy and its CURVE server
 * with the ZAP handler (loopback ZeroMQ, no database); then the cluster
 * with CURVE against a real PostgreSQL (XQF_TEST_DB; skipped without it):
 * an allowed worker plays a run to its end while a worker with an unknown
 * key, a plaintext client and a client with a wrong server key get
 * nothing, and a revoked key is shut out of new connections and of the
 * one it had open, without a restart.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "clock.h"
#include "cluster_util.h"
#include "codec.h"
#include "keys.h"
#include "log.h"
#include "ratelimit.h"
#include "store_runs.h"
#include "store_tasks.h"
#include "transport.h"
#include "worker_transport.h"

/* A file of the test's folder, in one of 8 rotating buffers: copy what must outlive a few more calls. */
static const char *at(const char *name)
{
    static char bufs[8][256];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", cu_fx.dir, name);
    return b;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return strdup("");
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strdup(buf);
}

static bool file_has(const char *path, const char *text)
{
    char *s = slurp(path);
    bool found = strstr(s, text) != NULL;
    free(s);
    return found;
}

/* Waits up to timeout_s for text to appear in the log. */
static bool log_shows(const char *text, double timeout_s)
{
    double end = cu_now() + timeout_s;
    while (!file_has(cu_fx.logfile, text)) {
        if (cu_now() > end)
            return false;
        cu_sleep_ms(50);
    }
    return true;
}

/* Runs a program of build/bin to its end, its output in the file out (emptied first). Returns its exit status. */
static int run(const char *out, const char *program, const char *const args[])
{
    unlink(out);
    pid_t pid = cu_spawn(program, out, args);
    int status = 0;
    double end = cu_now() + 60;
    while (!cu_ended(pid, &status)) {
        if (cu_now() > end) {
            cu_stop(pid, SIGKILL);
            return -1;
        }
        cu_sleep_ms(10);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* xqf-keys with up to 3 arguments; its output in dir/keys.out. */
static int xqf_keys(const char *a, const char *b, const char *c, const char *d)
{
    const char *args[] = { a, b, c, d, NULL };
    return run(at("keys.out"), "xqf-keys", args);
}

static void new_keys(const char *name)
{
    cr_assert_eq(xqf_keys("new", at(name), NULL, NULL), 0, "xqf-keys new %s: %s", name, slurp(at("keys.out")));
}

static void allow(const char *name, const char *key_name)
{
    char pub[64];
    snprintf(pub, sizeof pub, "%s.pub", key_name);
    cr_assert_eq(xqf_keys("allow", at("allow"), name, at(pub)), 0, "xqf-keys allow %s", name);
}

static void public_key(const char *file, char out[KEYS_Z85_LEN + 1])
{
    KeyPair k;
    char err[512];
    cr_assert_eq(keys_read(at(file), false, &k, err, sizeof err), 0, "%s", err);
    memcpy(out, k.public_key, KEYS_Z85_LEN + 1);
}

static void make_dir(void)
{
    snprintf(cu_fx.dir, sizeof cu_fx.dir, "/tmp/xqf-curve-XXXXXX");
    cr_assert(mkdtemp(cu_fx.dir));
    snprintf(cu_fx.logfile, sizeof cu_fx.logfile, "%s/log", cu_fx.dir);
    cu_fx.port = cu_free_port();
}

/* ---- key files and the allow-list (no database) -------------------------------- */

TestSuite(keys, .init = make_dir, .fini = cu_stop_all, .timeout = 60);

static const char *K1 = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
static const char *K2 = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";

static void expect_parse_error(const char *text, const char *message)
{
    AllowList a;
    char err[512] = "";
    cr_assert_eq(allow_parse(text, "list", &a, err, sizeof err), -1, "accepted: %s", text);
    cr_assert(strstr(err, message), "for\n%s\nexpected '%s', got '%s'", text, message, err);
    cr_assert_eq(a.count, 0);
    allow_free(&a);
}

Test(keys, names_and_keys)
{
    cr_assert(keys_name_ok("w1"));
    cr_assert(keys_name_ok("host-3.rack_2"));
    cr_assert(!keys_name_ok(""));
    cr_assert(!keys_name_ok("a b"));
    cr_assert(!keys_name_ok("ü"));
    char long_name[80];
    memset(long_name, 'a', 65);
    long_name[65] = '\0';
    cr_assert(!keys_name_ok(long_name));
    long_name[64] = '\0';
    cr_assert(keys_name_ok(long_name));
    cr_assert(keys_z85_ok(K1));
    cr_assert(keys_z85_ok(K2));
    cr_assert(!keys_z85_ok(""));
    cr_assert(!keys_z85_ok("rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf"));          /* 39 */
    cr_assert(!keys_z85_ok("rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7a"));        /* 41 */
    cr_assert(!keys_z85_ok("rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf\""));        /* not Z85 */
    cr_assert(!keys_z85_ok("#####00000000000000000000000000000000000"));         /* a group over 2^32 */
}

Test(keys, allow_list_parses)
{
    char text[1024];
    snprintf(text, sizeof text,
             "# allowed workers\n"
             "\n"
             "zeta %s\r\n"
             "  \t# indented comment\n"
             "alpha\t%s   \n"
             "   ",
             K1, K2);
    AllowList a;
    char err[512];
    cr_assert_eq(allow_parse(text, "list", &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(a.count, 2);
    cr_assert_str_eq(a.v[0].name, "alpha");             /* sorted by name */
    cr_assert_str_eq(a.v[1].key, K1);
    cr_assert_str_eq(allow_find_name(&a, "zeta")->key, K1);
    cr_assert_null(allow_find_name(&a, "beta"));
    cr_assert_str_eq(allow_find_key(&a, K2)->name, "alpha");
    cr_assert_null(allow_find_key(&a, "0000000000000000000000000000000000000000"));
    allow_free(&a);
    cr_assert_eq(allow_parse("# nobody yet\n", "list", &a, err, sizeof err), 0);
    cr_assert_eq(a.count, 0);
    allow_free(&a);
}

Test(keys, allow_list_errors_name_the_line)
{
    char text[1024];
    snprintf(text, sizeof text, "# c\nw1 %s\nbad/name %s\n", K1, K2);
    expect_parse_error(text, "list: line 3: bad name 'bad/name'");
    snprintf(text, sizeof text, "w1 %.39s\n", K1);
    expect_parse_error(text, "line 1: '");
    expect_parse_error(text, "is not a public key");
    expect_parse_error("w1 #####00000000000000000000000000000000000\n", "line 1: '#####");
    snprintf(text, sizeof text, "w1 %s extra\n", K1);
    expect_parse_error(text, "line 1: expected 'NAME PUBLIC-KEY'");
    expect_parse_error("\n\nw1\n", "line 3: expected 'NAME PUBLIC-KEY'");
    snprintf(text, sizeof text, "w1 %s\n\nw1 %s\n", K1, K2);
    expect_parse_error(text, "line 3: w1 is already on line 1");
    snprintf(text, sizeof text, "w1 %s\nw2 %s\n", K1, K1);
    expect_parse_error(text, "line 2: this key is already allowed as w1 (line 1)");
}

Test(keys, key_files)
{
    KeyPair k, r;
    char err[512];
    cr_assert_eq(keys_generate(at("a"), &k, err, sizeof err), 0, "%s", err);
    struct stat st;
    cr_assert_eq(stat(at("a"), &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600);
    cr_assert_eq(keys_read(at("a"), true, &r, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(r.public_key, k.public_key);
    cr_assert_str_eq(r.secret_key, k.secret_key);
    cr_assert_eq(keys_read(at("a.pub"), false, &r, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(r.public_key, k.public_key);
    cr_assert_str_eq(r.secret_key, "");
    cr_assert_eq(keys_read(at("a"), false, &r, err, sizeof err), 0);    /* a pair gives its public key */
    cr_assert_str_eq(r.secret_key, "");
    cr_assert_eq(keys_generate(at("a"), &k, err, sizeof err), -1);
    cr_assert(strstr(err, "exists already"), "%s", err);

    cr_assert_eq(keys_read(at("a.pub"), true, &r, err, sizeof err), -1);
    cr_assert(strstr(err, "not a key pair"), "%s", err);
    cr_assert_eq(keys_read(at("missing"), false, &r, err, sizeof err), -1);
    cr_assert(strstr(err, "missing: cannot open"), "%s", err);
    chmod(at("a"), 0640);
    cr_assert_eq(keys_read(at("a"), true, &r, err, sizeof err), -1);
    cr_assert(strstr(err, "others may read (mode 0640)"), "%s", err);

    FILE *f = fopen(at("mixed"), "w");
    fprintf(f, "public %s\nsecret %s\n", K1, k.secret_key);   /* not the secret's public key */
    fclose(f);
    chmod(at("mixed"), 0600);
    cr_assert_eq(keys_read(at("mixed"), true, &r, err, sizeof err), -1);
    cr_assert(strstr(err, "not the secret key's"), "%s", err);
    f = fopen(at("odd"), "w");
    fprintf(f, "# ok\npublik %s\n", K1);
    fclose(f);
    cr_assert_eq(keys_read(at("odd"), false, &r, err, sizeof err), -1);
    cr_assert(strstr(err, "odd: line 2: expected 'public KEY'"), "%s", err);
    f = fopen(at("short"), "w");
    fprintf(f, "public %.30s\n", K1);
    fclose(f);
    cr_assert_eq(keys_read(at("short"), false, &r, err, sizeof err), -1);
    cr_assert(strstr(err, "short: line 1: not a key"), "%s", err);
}

Test(keys, xqf_keys_program)
{
    char out[256];
    snprintf(out, sizeof out, "%s", at("keys.out"));
    new_keys("w1");
    new_keys("w2");
    cr_assert_eq(xqf_keys("new", at("w1"), NULL, NULL), 1);     /* never overwrites */
    cr_assert(file_has(out, "exists already"));

    cr_assert_eq(xqf_keys("list", at("allow"), NULL, NULL), 1);    /* no list yet */
    cr_assert(file_has(out, "cannot open"));
    cr_assert_eq(xqf_keys("revoke", at("allow"), "w1", NULL), 1);
    allow("w1", "w1");
    cr_assert(file_has(at("allow"), "# Workers allowed"), "a new list starts with a comment");
    allow("w2", "w2");
    cr_assert_eq(xqf_keys("allow", at("allow"), "w1", at("w1.pub")), 0);
    cr_assert(file_has(out, "already allowed"));
    cr_assert_eq(xqf_keys("allow", at("allow"), "w3", at("w1.pub")), 1);   /* a key under one name only */
    cr_assert(file_has(out, "already allowed as w1"));
    char k1[KEYS_Z85_LEN + 1], k2[KEYS_Z85_LEN + 1], line[128];
    public_key("w1.pub", k1);
    public_key("w2.pub", k2);
    cr_assert_eq(xqf_keys("list", at("allow"), NULL, NULL), 0);
    char *listed = slurp(out);
    snprintf(line, sizeof line, "w1 %s\nw2 %s\n", k1, k2);
    cr_assert_str_eq(listed, line);
    free(listed);

    /* a comment of the operator's survives edits; w1 gets w2's key once w2 is gone */
    FILE *f = fopen(at("allow"), "a");
    fputs("# keep me\n", f);
    fclose(f);
    cr_assert_eq(xqf_keys("revoke", at("allow"), "w2", NULL), 0);
    cr_assert_eq(xqf_keys("allow", at("allow"), "w1", at("w2.pub")), 0);
    char *text = slurp(at("allow"));
    snprintf(line, sizeof line, "w1 %s\n", k2);
    cr_assert(strstr(text, line), "%s", text);
    cr_assert(strstr(text, "# keep me\n"), "%s", text);
    cr_assert_null(strstr(text, k1), "%s", text);
    free(text);

    /* usage errors: 2, naming the problem */
    cr_assert_eq(xqf_keys("allow", at("allow"), "no/slash", at("w1.pub")), 2);
    cr_assert(file_has(out, "bad NAME 'no/slash'"));
    cr_assert_eq(xqf_keys("revoke", at("allow"), "", NULL), 2);
    cr_assert_eq(xqf_keys("frob", NULL, NULL, NULL), 2);
    cr_assert(file_has(out, "unknown command 'frob'"));
    cr_assert_eq(xqf_keys("allow", at("allow"), "w3", NULL), 2);
    cr_assert(file_has(out, "allow takes 3 arguments"));
    cr_assert_eq(xqf_keys("--help", NULL, NULL, NULL), 0);

    /* bad files: 1, naming the file and the line; a malformed list is left as it is */
    f = fopen(at("junk.pub"), "w");
    fputs("public not-a-key\n", f);
    fclose(f);
    cr_assert_eq(xqf_keys("allow", at("allow"), "w3", at("junk.pub")), 1);
    cr_assert(file_has(out, "junk.pub: line 1: not a key"));
    f = fopen(at("allow"), "a");
    fputs("w9 short\n", f);
    fclose(f);
    char *before = slurp(at("allow"));
    cr_assert_eq(xqf_keys("allow", at("allow"), "w3", at("w1.pub")), 1);
    cr_assert(file_has(out, "line 5: 'short' is not a public key"), "%s", slurp(out));
    cr_assert_eq(xqf_keys("revoke", at("allow"), "w1", NULL), 1);
    char *after = slurp(at("allow"));
    cr_assert_str_eq(before, after);
    free(before);
    free(after);
    cr_assert_eq(xqf_keys("list", at("allow"), NULL, NULL), 1);
}

/* ---- the transport's policy and its CURVE server (no database) ----------------- */

TestSuite(transport, .init = make_dir, .fini = cu_stop_all, .timeout = 60);

Test(transport, local_endpoints)
{
    const char *local[] = { "tcp://127.0.0.1:5555", "tcp://127.3.2.1:1", "tcp://[::1]:5555",
                            "tcp://localhost:5555", "tcp://LocalHost:1", "ipc:///tmp/x", "inproc://x" };
    const char *open[] = { "tcp://0.0.0.0:5555", "tcp://*:5555", "tcp://192.168.1.10:5555", "tcp://[::]:5555",
                           "tcp://eth0:5555", "tcp://lo:5555", "tcp://coordinator.example:5555",
                           "tcp://128.0.0.1:5555", "ws://127.0.0.1:5555", "tcp://", "" };
    for (size_t i = 0; i < sizeof local / sizeof *local; i++)
        cr_assert(keys_endpoint_local(local[i]), "%s", local[i]);
    for (size_t i = 0; i < sizeof open / sizeof *open; i++)
        cr_assert(!keys_endpoint_local(open[i]), "%s", open[i]);
    char err[512];
    TransportSecurity plain = { .insecure = false }, insecure = { .insecure = true },
                      curve = { .curve_secret = "k", .allow = "a" };
    cr_assert_eq(transport_check("tcp://127.0.0.1:1", &plain, err, sizeof err), 0);
    cr_assert_eq(transport_check("tcp://0.0.0.0:1", &plain, err, sizeof err), -1);
    cr_assert(strstr(err, "not a loopback address"), "%s", err);
    cr_assert_eq(transport_check("tcp://0.0.0.0:1", &insecure, err, sizeof err), 0);
    cr_assert_eq(transport_check("tcp://0.0.0.0:1", &curve, err, sizeof err), 0);
    curve.allow = NULL;
    cr_assert_eq(transport_check("tcp://127.0.0.1:1", &curve, err, sizeof err), -1);
    cr_assert(strstr(err, "--allow"), "%s", err);
    curve.allow = "a";
    curve.insecure = true;
    cr_assert_eq(transport_check("tcp://0.0.0.0:1", &curve, err, sizeof err), -1);
}

/* A plaintext transport on the fixture's loopback port, its endpoint in ep (64 bytes). */
static Transport *plain_transport(char *ep)
{
    xqf_log_init("test");
    snprintf(ep, 64, "tcp://127.0.0.1:%d", cu_fx.port);
    Transport *t = transport_new(ep, NULL);
    cr_assert(t);
    return t;
}

/*
 * The listen queue of the coordinator's socket is as long as the kernel
 * allows (net.core.somaxconn), not ZeroMQ's default of 100: a fleet that
 * reconnects at once is accepted, not left to TCP's SYN back-off.  Linux
 * reports a listening socket's backlog as TCP_INFO's tcpi_sacked (ss(8)
 * reads the same value); the socket is found among this process's files
 * by its port.
 */
Test(transport, its_listen_queue_holds_a_fleet_reconnecting_at_once)
{
    char ep[64];
    Transport *t = plain_transport(ep);
    FILE *f = fopen("/proc/sys/net/core/somaxconn", "r");
    long somaxconn = 0;
    cr_assert(f && fscanf(f, "%ld", &somaxconn) == 1);
    fclose(f);
    long backlog = -1;
    for (int fd = 3; fd < 4096 && backlog < 0; fd++) {
        struct sockaddr_in a;
        socklen_t alen = sizeof a;
        int listening = 0;
        socklen_t llen = sizeof listening;
        struct tcp_info info;
        socklen_t ilen = sizeof info;
        if (getsockname(fd, (struct sockaddr *)&a, &alen) == 0 && a.sin_family == AF_INET &&
            ntohs(a.sin_port) == cu_fx.port && getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &llen) == 0 &&
            listening && getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &ilen) == 0)
            backlog = info.tcpi_sacked;
    }
    long want = somaxconn < TRANSPORT_BACKLOG ? somaxconn : TRANSPORT_BACKLOG;
    cr_assert_eq(backlog, want, "the listen queue holds %ld connections, not %ld (somaxconn %ld)", backlog, want,
                 somaxconn);
    transport_destroy(&t);
}

/*
 * A coordinator started while its port is still held (its predecessor
 * closing thousands of connections after a kill) binds once the port is
 * free, not failing at once: a child process listens on the port for
 * 500 ms.
 */
Test(transport, a_port_still_held_is_bound_once_free)
{
    xqf_log_init("test");
    int ready[2];
    cr_assert_eq(pipe(ready), 0);
    pid_t child = fork();
    cr_assert(child >= 0);
    if (child == 0) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)cu_fx.port),
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        char ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && listen(fd, 1) == 0 ? 'y' : 'n';
        if (write(ready[1], &ok, 1) != 1)
            _exit(1);
        usleep(500 * 1000);
        _exit(0);
    }
    char ok = 0;
    cr_assert_eq(read(ready[0], &ok, 1), 1);
    cr_assert_eq(ok, 'y', "the child could not hold the port");
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", cu_fx.port);
    int64_t t0 = clock_now_ms();
    Transport *t = transport_new(ep, NULL);
    int64_t waited = clock_now_ms() - t0;
    waitpid(child, NULL, 0);
    cr_assert(t, "the transport did not bind once the port was free");
    cr_assert_geq(waited, 300, "bound after %lld ms: the port was not held?", (long long)waited);
    cr_assert_lt(waited, TRANSPORT_BIND_WAIT_MS, "%lld ms", (long long)waited);
    transport_destroy(&t);
    close(ready[0]);
    close(ready[1]);
}

/*
 * A DEALER to 127.0.0.1:port: CURVE with the key pair in key (NULL:
 * plaintext) and the server key in server_pub; reconnecting as ZeroMQ
 * does unless once (a closed connection stays closed).
 */
static void *client_once(void *ctx, const char *key, const char *server_pub, bool once)
{
    void *s = zmq_socket(ctx, ZMQ_DEALER);
    int linger = 0, never = -1;
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    if (once)
        cr_assert_eq(zmq_setsockopt(s, ZMQ_RECONNECT_IVL, &never, sizeof never), 0);
    if (key) {
        KeyPair mine, server;
        char err[512];
        cr_assert_eq(keys_read(at(key), true, &mine, err, sizeof err), 0, "%s", err);
        cr_assert_eq(keys_read(at(server_pub), false, &server, err, sizeof err), 0, "%s", err);
        cr_assert_eq(zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, server.public_key, KEYS_Z85_LEN), 0);
        cr_assert_eq(zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, mine.public_key, KEYS_Z85_LEN), 0);
        cr_assert_eq(zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, mine.secret_key, KEYS_Z85_LEN), 0);
    }
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", cu_fx.port);
    cr_assert_eq(zmq_connect(s, ep), 0);
    return s;
}

static void *client(void *ctx, const char *key, const char *server_pub) { return client_once(ctx, key, server_pub, false); }

static void send_hello(void *sock, const char *name)
{
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_HELLO);
    snprintf(m.u.hello.name, sizeof m.u.hello.name, "%s", name);
    m.u.hello.cores = 1;
    m.u.hello.concurrency = 1;
    XqfBuf b = { 0 };
    cr_assert_eq(xqf_msg_encode(&m, &b), 0);
    /* may fail for a client the coordinator refused (its connection is gone): the answer, or none, says it all */
    zmq_send(sock, b.data, b.len, ZMQ_DONTWAIT);
    xqf_buf_free(&b);
}

/* The type of the next message within ms (XQF_MSG_NONE when none came). */
static XqfMsgType answer(void *sock, int ms)
{
    zmq_pollitem_t it = { sock, 0, ZMQ_POLLIN, 0 };
    if (zmq_poll(&it, 1, ms) <= 0)
        return XQF_MSG_NONE;
    zmq_msg_t part;
    zmq_msg_init(&part);
    cr_assert_geq(zmq_msg_recv(&part, sock, 0), 0);
    XqfMsg m;
    cr_assert_eq(xqf_msg_decode(zmq_msg_data(&part), zmq_msg_size(&part), &m, NULL, 0), XQF_DECODE_OK);
    zmq_msg_close(&part);
    XqfMsgType t = m.type;
    xqf_msg_free(&m);
    return t;
}

/* The next frame the transport takes within ms: 1 with its peer, 0 none. */
static int take(Transport *t, Peer *peer, int ms)
{
    XqfBuf buf = { 0 };
    double end = cu_now() + ms / 1000.0;
    int rc = 0;
    while (rc == 0 && cu_now() < end) {
        transport_wait(t, 50, -1);
        rc = transport_recv(t, peer, &buf);
    }
    xqf_buf_free(&buf);
    return rc;
}

Test(transport, curve_peers_carry_their_allow_list_name)
{
    xqf_log_init("test");
    new_keys("coord");
    new_keys("w1");
    new_keys("w2");
    allow("w1", "w1");
    char key[256], list[256];
    snprintf(key, sizeof key, "%s", at("coord"));
    snprintf(list, sizeof list, "%s", at("allow"));
    TransportSecurity sec = { .curve_secret = key, .allow = list };
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", cu_fx.port);
    Transport *t = transport_new(ep, &sec);
    cr_assert(t);
    void *ctx = zmq_ctx_new(), *c1 = client(ctx, "w1", "coord.pub"), *c2 = client(ctx, "w2", "coord.pub");
    Peer p;
    send_hello(c1, "one");
    cr_assert_eq(take(t, &p, 5000), 1);
    cr_assert_str_eq(p.user, "w1");
    send_hello(c2, "two");                                /* not allowed: never gets through */
    cr_assert_eq(take(t, &p, 1000), 0);
    /* revoked: the open connection is no longer heard (the list is looked at once a second) */
    cr_assert_eq(xqf_keys("revoke", at("allow"), "w1", NULL), 0);
    cu_sleep_ms(1100);
    send_hello(c1, "one");
    cr_assert_eq(take(t, &p, 1000), 0);
    /* allowed again, under another name: heard again, as that name (its key is the same) */
    allow("w1-again", "w1");
    cu_sleep_ms(1100);
    void *c3 = client(ctx, "w1", "coord.pub");
    send_hello(c3, "three");
    cr_assert_eq(take(t, &p, 5000), 1);
    cr_assert_str_eq(p.user, "w1-again");
    zmq_close(c1);
    zmq_close(c2);
    zmq_close(c3);
    zmq_ctx_term(ctx);
    transport_destroy(&t);
    transport_destroy(&t);                                /* safe twice */

    /* plaintext: no user */
    TransportSecurity plain = { .insecure = false };
    cu_fx.port = cu_free_port();
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", cu_fx.port);
    t = transport_new(ep, &plain);
    cr_assert(t);
    ctx = zmq_ctx_new();
    c1 = client(ctx, NULL, NULL);
    send_hello(c1, "plain");
    cr_assert_eq(take(t, &p, 5000), 1);
    cr_assert_str_eq(p.user, "");
    zmq_close(c1);
    zmq_ctx_term(ctx);
    transport_destroy(&t);
}

/*
 * An allow-list that no longer parses (a slip in a hand edit, maybe of a
 * revocation) lets nobody in: neither a new connection nor the messages of
 * an open one, logged as an error at once; the old list is not used.  The
 * fixed file lets workers in again without a restart.
 */
Test(transport, a_broken_allow_list_lets_nobody_in)
{
    new_keys("coord");
    new_keys("w1");
    allow("w1", "w1");
    char key[256], list[256];
    snprintf(key, sizeof key, "%s", at("coord"));
    snprintf(list, sizeof list, "%s", at("allow"));
    int saved = dup(STDERR_FILENO), fd = open(cu_fx.logfile, O_WRONLY | O_CREAT | O_APPEND, 0644);
    cr_assert(saved >= 0 && fd >= 0);
    dup2(fd, STDERR_FILENO);                              /* the transport's log, to look at */
    close(fd);
    xqf_log_init("test");
    TransportSecurity sec = { .curve_secret = key, .allow = list };
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", cu_fx.port);
    Transport *t = transport_new(ep, &sec);
    cr_assert(t);
    void *ctx = zmq_ctx_new(), *c1 = client(ctx, "w1", "coord.pub");
    Peer p;
    send_hello(c1, "one");
    cr_assert_eq(take(t, &p, 5000), 1);
    FILE *f = fopen(list, "a");                           /* a hand edit gone wrong */
    cr_assert(f);
    fputs("w2 not-a-key\n", f);
    fclose(f);
    cu_sleep_ms(1100);
    send_hello(c1, "one");                                /* the open connection is no longer heard */
    cr_assert_eq(take(t, &p, 1000), 0, "a message was heard under a broken allow-list");
    void *c2 = client(ctx, "w1", "coord.pub");            /* nor is a new one let in */
    send_hello(c2, "two");
    cr_assert_eq(take(t, &p, 1500), 0, "a connection was let in under a broken allow-list");
    cr_assert(file_has(cu_fx.logfile, "REFUSING EVERY WORKER"), "no error logged");
    cr_assert(unlink(list) == 0);                         /* fixed: in again, without a restart */
    allow("w1", "w1");
    cu_sleep_ms(1100);
    void *c3 = client(ctx, "w1", "coord.pub");
    send_hello(c3, "three");
    cr_assert_eq(take(t, &p, 5000), 1, "the fixed list lets nobody in");
    cr_assert_str_eq(p.user, "w1");
    cr_assert(file_has(cu_fx.logfile, "reads again"));
    zmq_close(c1);
    zmq_close(c2);
    zmq_close(c3);
    zmq_ctx_term(ctx);
    transport_destroy(&t);
    dup2(saved, STDERR_FILENO);
    close(saved);
}

/*
 * Edits of the allow-list are serialised by a flock on ALLOWLIST.lock:
 * an edit waits while another holds it (and so never works on a list
 * read before the other's rename: a revocation is never undone); and
 * many edits at once all land.
 */
Test(keys, allow_list_edits_wait_for_each_other)
{
    new_keys("w1");
    new_keys("w2");
    allow("w1", "w1");
    char lock[300];
    snprintf(lock, sizeof lock, "%s.lock", at("allow"));
    int fd = open(lock, O_RDWR | O_CREAT, 0600);
    cr_assert(fd >= 0);
    cr_assert_eq(flock(fd, LOCK_EX), 0);                  /* another edit under way */
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        char err[512];
        _exit(allow_edit(at("allow"), "w1", NULL, err, sizeof err) == 0 ? 0 : 1);   /* revoke w1 */
    }
    cu_sleep_ms(300);
    int status;
    cr_assert_eq(waitpid(pid, &status, WNOHANG), 0, "an edit went ahead while another held the lock");
    cr_assert_eq(flock(fd, LOCK_UN), 0);
    close(fd);
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* a burst of edits at once, each adding a name: none lost */
    enum { EDITS = 12 };
    KeyPair k;
    char err[512];
    pid_t pids[EDITS];
    for (int i = 0; i < EDITS; i++) {
        char name[16];
        snprintf(name, sizeof name, "k%d", i);
        new_keys(name);
        cr_assert_eq(keys_read(at(name), false, &k, err, sizeof err), 0);
        if ((pids[i] = fork()) == 0)
            _exit(allow_edit(at("allow"), name, k.public_key, err, sizeof err) == 0 ? 0 : 1);
    }
    for (int i = 0; i < EDITS; i++) {
        cr_assert_eq(waitpid(pids[i], &status, 0), pids[i]);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    AllowList a;
    cr_assert_eq(allow_read(at("allow"), &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(a.count, EDITS, "%d of %d edits landed", a.count, EDITS);
    cr_assert_null(allow_find_name(&a, "w1"), "the revocation was undone");
    allow_free(&a);
}

/* xqf-coordinator with args; waits for its exit (or 1.5 s of running: -2, stopped by SIGTERM). */
static int coordinator_exit(const char *const args[], int *term_status)
{
    unlink(cu_fx.logfile);
    pid_t pid = cu_spawn("xqf-coordinator", cu_fx.logfile, args);
    int status = 0;
    for (int i = 0; i < 150; i++) {
        if (cu_ended(pid, &status))
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        cu_sleep_ms(10);
    }
    *term_status = cu_stop(pid, SIGTERM);
    return -2;
}

Test(transport, programs_refuse_open_plaintext_and_bad_keys)
{
    char bind[64];
    snprintf(bind, sizeof bind, "tcp://0.0.0.0:%d", cu_fx.port);
    const char *nodb = "host=/nonexistent dbname=none connect_timeout=1";
    int term = 0;
    const char *open[] = { "--bind", bind, "--db", nodb, NULL };
    cr_assert_eq(coordinator_exit(open, &term), 2);
    cr_assert(file_has(cu_fx.logfile, "is not a loopback address"), "%s", slurp(cu_fx.logfile));
    const char *insecure[] = { "--bind", bind, "--db", nodb, "--insecure", NULL };
    cr_assert_eq(coordinator_exit(insecure, &term), -2, "%s", slurp(cu_fx.logfile));
    cr_assert(WIFEXITED(term) && WEXITSTATUS(term) == 0, "status %d", term);
    cr_assert(file_has(cu_fx.logfile, "INSECURE"), "%s", slurp(cu_fx.logfile));

    new_keys("coord");
    char key[256], pub[256], list[256];
    snprintf(key, sizeof key, "%s", at("coord"));
    snprintf(pub, sizeof pub, "%s", at("coord.pub"));
    snprintf(list, sizeof list, "%s", at("allow"));
    const char *half[] = { "--bind", bind, "--db", nodb, "--curve-secret", key, NULL };
    cr_assert_eq(coordinator_exit(half, &term), 2);
    cr_assert(file_has(cu_fx.logfile, "--allow"));
    FILE *f = fopen(list, "w");
    fputs("# fine\nw1 nope\n", f);
    fclose(f);
    const char *bad_list[] = { "--bind", bind, "--db", nodb, "--curve-secret", key, "--allow", list, NULL };
    cr_assert_eq(coordinator_exit(bad_list, &term), 1);
    cr_assert(file_has(cu_fx.logfile, "line 2: 'nope' is not a public key"), "%s", slurp(cu_fx.logfile));
    f = fopen(list, "w");
    fclose(f);
    chmod(key, 0644);
    cr_assert_eq(coordinator_exit(bad_list, &term), 1);
    cr_assert(file_has(cu_fx.logfile, "others may read"), "%s", slurp(cu_fx.logfile));
    chmod(key, 0600);
    cr_assert_eq(coordinator_exit(bad_list, &term), -2, "%s", slurp(cu_fx.logfile));   /* an empty list is a list */
    cr_assert(file_has(cu_fx.logfile, "is empty: every worker is refused"), "%s", slurp(cu_fx.logfile));

    const char *worker_half[] = { "--curve-secret", key, NULL };
    cr_assert_eq(run(cu_fx.logfile, "xqf-worker", worker_half), 2);
    cr_assert(file_has(cu_fx.logfile, "--server-key go together"), "%s", slurp(cu_fx.logfile));
    const char *worker_bad[] = { "--curve-secret", pub, "--server-key", pub, NULL };
    cr_assert_eq(run(cu_fx.logfile, "xqf-worker", worker_bad), 1);
    cr_assert(file_has(cu_fx.logfile, "not a key pair"), "%s", slurp(cu_fx.logfile));
}

/* The worker's policy: plaintext to another host only with --insecure, judged before connecting. */
Test(transport, worker_policy)
{
    char err[512];
    WtSecurity plain = { NULL, NULL, false }, insecure = { NULL, NULL, true }, curve = { "k", "k.pub", false };
    cr_assert_eq(wt_check("tcp://127.0.0.1:5555", &plain, err, sizeof err), 0);
    cr_assert_eq(wt_check("ipc:///tmp/x", &plain, err, sizeof err), 0);
    cr_assert_eq(wt_check("tcp://10.1.2.3:5555", &plain, err, sizeof err), -1);
    cr_assert(strstr(err, "tcp://10.1.2.3:5555 is not a loopback address"), "%s", err);
    cr_assert(strstr(err, "--insecure"), "%s", err);
    cr_assert_eq(wt_check("tcp://coordinator.example:5555", &plain, err, sizeof err), -1);
    cr_assert_eq(wt_check("tcp://10.1.2.3:5555", &insecure, err, sizeof err), 0);
    cr_assert_eq(wt_check("tcp://10.1.2.3:5555", &curve, err, sizeof err), 0);
    curve.insecure = true;
    cr_assert_eq(wt_check("tcp://10.1.2.3:5555", &curve, err, sizeof err), -1);
    cr_assert(strstr(err, "does not go with CURVE"), "%s", err);
    curve = (WtSecurity){ "k", NULL, false };
    cr_assert_eq(wt_check("tcp://127.0.0.1:5555", &curve, err, sizeof err), -1);
    cr_assert(strstr(err, "go together"), "%s", err);

    /* The program: refused with status 2 before its build id is computed or anything is connected. */
    const char *open_plain[] = { "--connect", "tcp://10.1.2.3:5555", NULL };
    cr_assert_eq(run(cu_fx.logfile, "xqf-worker", open_plain), 2, "%s", slurp(cu_fx.logfile));
    cr_assert(file_has(cu_fx.logfile, "xqf-worker: error: tcp://10.1.2.3:5555 is not a loopback address"), "%s", slurp(cu_fx.logfile));
    cr_assert(!file_has(cu_fx.logfile, "build xqf-"), "%s", slurp(cu_fx.logfile));
    const char *insecure_id[] = { "--connect", "tcp://10.1.2.3:5555", "--insecure", "--build-id", NULL };
    cr_assert_eq(run(cu_fx.logfile, "xqf-worker", insecure_id), 0, "%s", slurp(cu_fx.logfile));   /* the option is known */
}

/* A peer that sends and never reads: its replies are dropped at the queue's limit, not buffered. */
Test(transport, a_peer_that_does_not_read_is_not_buffered_for)
{
    char ep[64];
    Transport *t = plain_transport(ep);
    void *ctx = zmq_ctx_new(), *c = zmq_socket(ctx, ZMQ_DEALER);
    int one = 1, small = 4096, linger = 0;
    zmq_setsockopt(c, ZMQ_RCVHWM, &one, sizeof one);
    zmq_setsockopt(c, ZMQ_RCVBUF, &small, sizeof small);
    zmq_setsockopt(c, ZMQ_LINGER, &linger, sizeof linger);
    cr_assert_eq(zmq_connect(c, ep), 0);
    send_hello(c, "silent");
    Peer p;
    cr_assert_eq(take(t, &p, 5000), 1);
    static char frame[4096];
    int sent = 0, rc = 0;
    double end = cu_now() + 10;
    while (cu_now() < end && (rc = transport_send(t, &p, frame, sizeof frame)) == 0)
        sent++;
    cr_assert_eq(rc, -2, "the coordinator queued %d frames of 4 KiB for a peer that reads none", sent);
    /* the queue, plus what the two TCP buffers hold */
    cr_assert_lt(sent, TRANSPORT_SNDHWM + 2000, "%d frames queued", sent);
    cr_assert_geq(transport_dropped(t), 1);
    fprintf(stderr, "transport: a peer that does not read: %d frames of 4 KiB queued, then dropped\n", sent);
    zmq_close(c);
    zmq_ctx_term(ctx);
    transport_destroy(&t);
}

/*
 * Each frame names the connection it came on (its descriptor and a
 * number), and a connection that closes is reported once, under the same
 * descriptor and number, while the one still open is not; a connection
 * made after it is numbered afresh, even on the same descriptor.
 */
Test(transport, closed_connections_are_reported)
{
    char ep[64];
    Transport *t = plain_transport(ep);
    void *ctx = zmq_ctx_new(), *a = client_once(ctx, NULL, NULL, true), *b = client_once(ctx, NULL, NULL, true);
    Peer pa, pb;
    send_hello(a, "a");
    cr_assert_eq(take(t, &pa, 5000), 1);
    send_hello(b, "b");
    cr_assert_eq(take(t, &pb, 5000), 1);
    cr_assert(pa.fd >= 0 && pb.fd >= 0 && pa.fd != pb.fd, "descriptors %d and %d", pa.fd, pb.fd);
    cr_assert(pa.conn != 0 && pb.conn != 0 && pa.conn != pb.conn);
    int fds[8];
    uint64_t conns[8];
    cr_assert_eq(transport_closed(t, fds, conns, 8), 0, "nothing closed yet");
    zmq_close(a);
    int n = 0;
    for (double end = cu_now() + 5; n == 0 && cu_now() < end;) {
        transport_wait(t, 50, -1);
        n = transport_closed(t, fds, conns, 8);
    }
    cr_assert_eq(n, 1, "the closed connection reported");
    cr_assert(fds[0] == pa.fd && conns[0] == pa.conn, "fd %d conn %llu", fds[0], (unsigned long long)conns[0]);
    Peer pc;
    void *c = client_once(ctx, NULL, NULL, true);
    send_hello(c, "c");
    cr_assert_eq(take(t, &pc, 5000), 1);
    cr_assert(pc.conn != pa.conn && pc.conn != pb.conn, "a new connection, a new number (descriptor %d)", pc.fd);
    cr_assert_eq(transport_closed(t, fds, conns, 8), 0, "once, and the open ones not");
    zmq_close(b);
    zmq_close(c);
    zmq_ctx_term(ctx);
    transport_destroy(&t);
}

/*
 * A peer that sends frames of the largest size while the coordinator
 * reads none (its loop stalled): ZeroMQ queues TRANSPORT_RCVHWM of them
 * for the loop and decodes one more, then reads no further, so the peer
 * gets only a few out (the rest wait in it), not the thousand the old
 * queue took (over a gigabyte a connection).
 */
Test(transport, a_stalled_reader_buffers_a_few_frames_a_peer)
{
    char ep[64];
    Transport *t = plain_transport(ep);
    enum { TRIES = 64 };
    void *ctx = zmq_ctx_new(), *c = zmq_socket(ctx, ZMQ_DEALER);
    int hwm = 1, small = 4096, linger = 0;
    zmq_setsockopt(c, ZMQ_SNDHWM, &hwm, sizeof hwm);
    zmq_setsockopt(c, ZMQ_SNDBUF, &small, sizeof small);
    zmq_setsockopt(c, ZMQ_LINGER, &linger, sizeof linger);
    cr_assert_eq(zmq_connect(c, ep), 0);
    static char frame[TRANSPORT_MSG_MAX];   /* sent without a copy: every message points at it */
    int sent = 0;
    double end = cu_now() + 10, progress = cu_now();
    while (sent < TRIES && cu_now() < end && cu_now() - progress < 1.5) {
        zmq_msg_t m;
        zmq_msg_init_data(&m, frame, sizeof frame, NULL, NULL);
        if (zmq_msg_send(&m, c, ZMQ_DONTWAIT) >= 0) {
            sent++;
            progress = cu_now();
        } else {
            zmq_msg_close(&m);
            cu_sleep_ms(20);
        }
    }
    /*
     * The coordinator's queue (2) and the frame it decodes (3.2 MiB in
     * all), the peer's queue (1) and the frame it writes, and a spare:
     * the rest waits in the peer.
     */
    cr_assert_leq(sent, 6, "a peer got %d frames of %d bytes out to a reader that reads none", sent, (int)sizeof frame);
    fprintf(stderr, "transport: a stalled reader took %d frames of %d KiB from a peer (queue %d)\n", sent,
            (int)sizeof frame / 1024, TRANSPORT_RCVHWM);
    /* and every one of them is there to be read once the loop reads again */
    Peer p;
    int got = 0;
    while (got < sent && take(t, &p, 2000) == 1)
        got++;
    cr_assert_eq(got, sent);
    zmq_close(c);
    zmq_ctx_term(ctx);
    transport_destroy(&t);
}

/* A monitor of sock's handshake and disconnect (a PAIR on inproc://NAME). */
static void *watch(void *ctx, void *sock, const char *name)
{
    char ep[64];
    snprintf(ep, sizeof ep, "inproc://%s", name);
    cr_assert_eq(zmq_socket_monitor(sock, ep, ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED), 0);
    void *m = zmq_socket(ctx, ZMQ_PAIR);
    cr_assert_eq(zmq_connect(m, ep), 0);
    return m;
}

/* The events of the monitor so far, or-ed into *seen. */
static void events(void *mon, int *seen)
{
    uint8_t head[6], tail[256];
    while (zmq_recv(mon, head, sizeof head, ZMQ_DONTWAIT) >= 0) {
        uint16_t e;
        memcpy(&e, head, sizeof e);
        *seen |= e;
        zmq_recv(mon, tail, sizeof tail, 0);
    }
}

/*
 * Runs the transport's loop (frames taken and dropped) for ms, or until
 * each of the n monitors has seen event; returns how many have.
 */
static int pump(Transport *t, void **mons, int *seen, int n, int event, int ms)
{
    XqfBuf buf = { 0 };
    Peer p;
    double end = cu_now() + ms / 1000.0;
    int done = 0;
    do {
        transport_wait(t, 20, -1);
        while (transport_recv(t, &p, &buf) == 1)
            ;
        done = 0;
        for (int i = 0; i < n; i++) {
            events(mons[i], &seen[i]);
            done += (seen[i] & event) != 0;
        }
    } while (done < n && cu_now() < end);
    xqf_buf_free(&buf);
    return done;
}

static void reply_error(Transport *t, const Peer *p)
{
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_ERROR);
    m.u.error.code = XQF_ERR_LIMIT;
    snprintf(m.u.error.text, sizeof m.u.error.text, "over --key-connections");
    XqfBuf b = { 0 };
    cr_assert_eq(xqf_msg_encode(&m, &b), 0);
    cr_assert_eq(transport_send(t, p, b.data, b.len), 0);
    xqf_buf_free(&b);
}


/*
 * The transport's count of open connections once it is want, or after 3 s:
 * a client sees its end before the coordinator's monitor reports it, so
 * the table follows a moment later.
 */
static int settled_connections(Transport *t, int want)
{
    for (double end = cu_now() + 3; transport_connections(t) != want && cu_now() < end;)
        transport_wait(t, 20, -1);
    return transport_connections(t);
}
/*
 * One key opening many more connections than its bound and holding them
 * open (they never reconnect): the first message of each one beyond comes
 * marked over the bound, is answered (the answer gets out) and its
 * connection is closed; the key's count stays at the bound, the others
 * stay open, and another key's connection gets in.  A connection that
 * makes its handshake and says nothing is closed after first_message_ms.
 */
Test(transport, a_key_holds_at_most_its_connections)
{
    xqf_log_init("test");
    new_keys("coord");
    new_keys("greedy");
    new_keys("modest");
    allow("greedy", "greedy");
    allow("modest", "modest");
    char key[256], list[256], ep[64];
    snprintf(key, sizeof key, "%s", at("coord"));
    snprintf(list, sizeof list, "%s", at("allow"));
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", cu_fx.port);
    enum { CAP = 3, OPENED = 10 };
    TransportSecurity sec = { .curve_secret = key, .allow = list, .key_connections = CAP, .first_message_ms = 1000 };
    Transport *t = transport_new(ep, &sec);
    cr_assert(t);
    void *ctx = zmq_ctx_new(), *c[OPENED], *mon[OPENED];
    int seen[OPENED] = { 0 };
    for (int i = 0; i < OPENED; i++) {
        char name[32];
        snprintf(name, sizeof name, "greedy-%d", i);
        c[i] = client_once(ctx, "greedy", "coord.pub", true);
        mon[i] = watch(ctx, c[i], name);
        send_hello(c[i], name);
    }
    int passed = 0, over = 0;
    bool refused[OPENED] = { false };
    for (int n = 0; n < OPENED; n++) {
        Peer p;
        XqfBuf buf = { 0 };
        double end = cu_now() + 5;
        while (transport_recv(t, &p, &buf) != 1 && cu_now() < end)
            transport_wait(t, 20, -1);
        cr_assert_lt(cu_now(), end, "%d frames of %d came", n, OPENED);
        XqfMsg m;
        cr_assert_eq(xqf_msg_decode(buf.data, buf.len, &m, NULL, 0), XQF_DECODE_OK);
        int i = atoi(strchr(m.u.hello.name, '-') + 1);
        xqf_msg_free(&m);
        xqf_buf_free(&buf);
        cr_assert_str_eq(p.user, "greedy");
        if (p.over_connections) {
            over++;
            refused[i] = true;
            reply_error(t, &p);
        } else
            passed++;
    }
    cr_assert(passed == CAP && over == OPENED - CAP, "%d passed, %d over the bound of %d", passed, over, CAP);
    cr_assert_eq(transport_key_connections(t, "greedy"), CAP);
    /* the refused are answered, then closed; the others stay */
    for (int i = 0; i < OPENED; i++)
        if (refused[i])
            cr_assert_eq(answer(c[i], 3000), XQF_MSG_ERROR, "connection %d: the refusal came before the close", i);
    void *closing[OPENED];
    int closing_seen[OPENED] = { 0 }, k = 0;
    for (int i = 0; i < OPENED; i++)
        if (refused[i])
            closing[k++] = mon[i];
    cr_assert_eq(pump(t, closing, closing_seen, k, ZMQ_EVENT_DISCONNECTED, 5000), k, "every refused one closed");
    for (int i = 0, j = 0; i < OPENED; i++)
        if (refused[i])
            seen[i] = closing_seen[j++];
    pump(t, mon, seen, OPENED, ZMQ_EVENT_DISCONNECTED, 300);
    for (int i = 0; i < OPENED; i++)
        cr_assert_eq((seen[i] & ZMQ_EVENT_DISCONNECTED) != 0, refused[i], "connection %d (refused: %d)", i, refused[i]);
    cr_assert_eq(transport_key_connections(t, "greedy"), CAP);
    cr_assert_eq(settled_connections(t, CAP), CAP, "the closed ones are gone from the table");
    cr_assert_eq(transport_conn_stats(t).refused, OPENED - CAP);
    /* another key gets in, and the key's connections still talk */
    void *m = client(ctx, "modest", "coord.pub");
    send_hello(m, "modest");
    Peer p;
    cr_assert_eq(take(t, &p, 5000), 1);
    cr_assert(!p.over_connections && strcmp(p.user, "modest") == 0, "%s over: %d", p.user, p.over_connections);
    cr_assert_eq(transport_key_connections(t, "modest"), 1);
    for (int i = 0; i < OPENED; i++)
        if (!refused[i]) {
            send_hello(c[i], "again");
            cr_assert_eq(take(t, &p, 5000), 1);
            cr_assert(!p.over_connections);
        }
    /* a handshake and then nothing: closed after first_message_ms (1 s) */
    void *silent = client_once(ctx, "modest", "coord.pub", true), *smon = watch(ctx, silent, "silent");
    int sseen = 0;
    double start = cu_now();
    cr_assert_eq(pump(t, &smon, &sseen, 1, ZMQ_EVENT_DISCONNECTED, 5000), 1, "a silent connection stays open");
    cr_assert(sseen & ZMQ_EVENT_HANDSHAKE_SUCCEEDED, "it made its handshake first");
    cr_assert_geq(cu_now() - start, 0.9, "closed after %.2f s, before its bound", cu_now() - start);
    cr_assert_eq(transport_conn_stats(t).silent, 1);
    cr_assert_eq(settled_connections(t, CAP + 1), CAP + 1);
    for (int i = 0; i < OPENED; i++) {
        zmq_close(mon[i]);
        zmq_close(c[i]);
    }
    zmq_close(smon);
    zmq_close(silent);
    zmq_close(m);
    zmq_ctx_term(ctx);
    transport_destroy(&t);
}

/* Token buckets: a burst, then the rate; a bucket per key (docs/programs/xqf-coordinator.md). */
Test(transport, rate_limit_per_key)
{
    RateLimit *r = ratelimit_new(10, 10);
    cr_assert(r);
    uint64_t a = ratelimit_key("alice", 5), b = ratelimit_key("bob", 3);
    int passed = 0;
    for (int i = 0; i < 30; i++)
        passed += ratelimit_take(r, a, 1000);
    cr_assert_eq(passed, 10, "a burst of 10, then none in the same millisecond");
    cr_assert(ratelimit_take(r, b, 1000), "another key has its own bucket");
    cr_assert(!ratelimit_take(r, a, 1050), "half a token after 50 ms");
    cr_assert(ratelimit_take(r, a, 1100), "one token after 100 ms");
    cr_assert_eq(ratelimit_refused(r), 21);
    /* keys beyond the table's size: refused only while every bucket is in use */
    for (uint64_t k = 1; k <= RATELIMIT_KEYS; k++)
        ratelimit_take(r, k * 7919, 2000);
    cr_assert(!ratelimit_take(r, UINT64_C(1) << 40, 2000), "a full table takes no new key");
    cr_assert(ratelimit_take(r, UINT64_C(1) << 40, 4000), "buckets full again are forgotten");
    ratelimit_destroy(&r);
    ratelimit_destroy(&r);
    RateLimit *off = ratelimit_new(0, 0);
    for (int i = 0; i < 1000; i++)
        cr_assert(ratelimit_take(off, a, 0));
    ratelimit_destroy(&off);
}

/* ---- the cluster with CURVE (XQF_TEST_DB) --------------------------------------- */

TestSuite(curve, .init = cu_fixture_init, .fini = cu_fixture_fini, .timeout = 150);

/* The coordinator with CURVE, and up to 8 more arguments (NULL-terminated; NULL: none). */
static pid_t coordinator_with(const char *const *extra)
{
    char bind[64], key[256], list[256];
    snprintf(bind, sizeof bind, "tcp://127.0.0.1:%d", cu_fx.port);
    snprintf(key, sizeof key, "%s", at("coord"));
    snprintf(list, sizeof list, "%s", at("allow"));
    const char *args[24] = { "--bind", bind, "--db", cu_fx.db_coordinator, "--lease", "10", "--curve-secret", key,
                             "--allow", list };
    for (int i = 0; extra && extra[i] && i < 8; i++)
        args[10 + i] = extra[i];
    return cu_track(cu_spawn("xqf-coordinator", cu_fx.logfile, args));
}

static pid_t coordinator(void) { return coordinator_with(NULL); }

/* A worker process named name with the key pair key. */
static pid_t worker(const char *name, const char *key)
{
    char ep[64], key_path[256], server_path[256];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", cu_fx.port);
    snprintf(key_path, sizeof key_path, "%s", at(key));
    snprintf(server_path, sizeof server_path, "%s", at("coord.pub"));
    const char *args[] = { "--connect", ep, "--name", name, "--concurrency", "1", "--curve-secret", key_path,
                           "--server-key", server_path, NULL };
    return cu_track(cu_spawn("xqf-worker", cu_fx.logfile, args));
}

static bool worker_known(const char *name)
{
    StoreWorker *w = NULL;
    int n = store_list_workers(cu_fx.store, 0, &w);
    cr_assert_geq(n, 0);
    bool found = false;
    for (int i = 0; i < n; i++)
        found |= strcmp(w[i].name, name) == 0;
    free(w);
    return found;
}

/* Waits for the run's end and checks that every count agrees with max_pairs. */
static void finish_and_audit(int64_t run_id, int64_t pairs)
{
    StoreRun r;
    cr_assert(cu_wait_finished(cu_fx.store, run_id, 90, &r), "run %lld did not finish (log: %s)", (long long)run_id,
              cu_fx.logfile);
    cr_assert_str_eq(r.verdict, "max pairs", "log: %s", cu_fx.logfile);
    char why[256];
    cr_assert(cu_audit(cu_fx.store, run_id, pairs, why, sizeof why), "run %lld: %s (log: %s)", (long long)run_id, why,
              cu_fx.logfile);
}

Test(curve, allowed_worker_plays_and_strangers_get_nothing)
{
    CU_REQUIRE_DB();
    new_keys("coord");
    new_keys("other-coord");
    new_keys("w1");
    new_keys("intruder");
    allow("w1", "w1");
    char intruder_key[KEYS_Z85_LEN + 1];
    public_key("intruder.pub", intruder_key);
    int64_t run_id = cu_sprt(cu_fx.store, "NullR=2", 4, 8, 500, -500, 500);
    coordinator();
    worker("intruder", "intruder");
    cr_assert(log_shows("zap: refused a CURVE client from 127.0.0.1", 30), "log: %s", cu_fx.logfile);
    char refusal[128];
    snprintf(refusal, sizeof refusal, "key %s is not in the allow-list", intruder_key);
    cr_assert(log_shows(refusal, 1), "the refusal names the key (log: %s)", cu_fx.logfile);
    cr_assert(log_shows("the coordinator refused our key", 10), "log: %s", cu_fx.logfile);

    /* plaintext, and CURVE with a wrong server key: no answer to a good hello */
    void *ctx = zmq_ctx_new(), *plain = client(ctx, NULL, NULL), *wrong = client(ctx, "w1", "other-coord.pub");
    send_hello(plain, "plaintext");
    send_hello(wrong, "wrong-server");
    cr_assert_eq(answer(plain, 2000), XQF_MSG_NONE, "a plaintext client was answered");
    cr_assert_eq(answer(wrong, 500), XQF_MSG_NONE, "a client with a wrong server key was answered");
    cr_assert(log_shows("a peer failed the handshake", 5), "log: %s", cu_fx.logfile);
    cr_assert(log_shows("cryptographic error (a CURVE worker with a wrong --server-key?)", 5), "log: %s", cu_fx.logfile);
    zmq_close(plain);
    zmq_close(wrong);
    zmq_ctx_term(ctx);

    worker("w1", "w1");
    finish_and_audit(run_id, 8);
    cr_assert(worker_known("w1"));
    cr_assert(!worker_known("intruder"), "the refused worker reached the database");
    cr_assert(!worker_known("plaintext"));
    cr_assert(!worker_known("wrong-server"));
}

Test(curve, revoked_key_is_shut_out_without_a_restart)
{
    CU_REQUIRE_DB();
    new_keys("coord");
    new_keys("w1");
    new_keys("w2");
    allow("w1", "w1");
    allow("w2", "w2");
    char w1_key[KEYS_Z85_LEN + 1];
    public_key("w1.pub", w1_key);
    coordinator();
    void *ctx = zmq_ctx_new(), *open = client(ctx, "w1", "coord.pub");
    send_hello(open, "w1-first");
    cr_assert_eq(answer(open, 10000), XQF_MSG_WELCOME, "an allowed client was not welcomed (log: %s)", cu_fx.logfile);

    cr_assert_eq(xqf_keys("revoke", at("allow"), "w1", NULL), 0);
    /* a new connection with the key: refused at once */
    void *again = client(ctx, "w1", "coord.pub");
    send_hello(again, "w1-again");
    cr_assert_eq(answer(again, 2000), XQF_MSG_NONE, "a revoked key connected anew");
    char refusal[128];
    snprintf(refusal, sizeof refusal, "key %s is not in the allow-list", w1_key);
    cr_assert(log_shows(refusal, 5), "the refusal names the revoked key (log: %s)", cu_fx.logfile);
    /* the connection it had open: no longer heard */
    send_hello(open, "w1-first");
    cr_assert_eq(answer(open, 2000), XQF_MSG_NONE, "a revoked connection was still answered");
    cr_assert(log_shows("dropped a message of w1", 5), "log: %s", cu_fx.logfile);
    zmq_close(open);
    zmq_close(again);
    zmq_ctx_term(ctx);

    /* the others play on */
    int64_t run_id = cu_sprt(cu_fx.store, "NullR=2", 4, 8, 500, -500, 500);
    worker("w2", "w2");
    finish_and_audit(run_id, 8);
    cr_assert(!worker_known("w1-again"));
}

/*
 * A worker name is its key's: it starts with the key's allow-list name
 * ("alice" or "alice/..."), or is put under it; another key cannot report
 * under it (docs/programs/xqf-coordinator.md; 006_auth.sql before).
 */
Test(curve, a_worker_name_stays_with_its_key)
{
    CU_REQUIRE_DB();
    new_keys("coord");
    new_keys("alice");
    new_keys("mallory");
    allow("alice", "alice");
    allow("mallory", "mallory");
    coordinator();
    void *ctx = zmq_ctx_new(), *a = client(ctx, "alice", "coord.pub"), *m = client(ctx, "mallory", "coord.pub");
    send_hello(a, "box-1");
    cr_assert_eq(answer(a, 10000), XQF_MSG_WELCOME, "log: %s", cu_fx.logfile);
    cr_assert(worker_known("alice/box-1"), "a name is put under its key's (log: %s)", cu_fx.logfile);
    send_hello(a, "alice/box-2");
    cr_assert_eq(answer(a, 5000), XQF_MSG_WELCOME, "log: %s", cu_fx.logfile);
    cr_assert(worker_known("alice/box-2"), "a name under the key's stays as it is");
    send_hello(m, "alice/box-1");
    cr_assert_eq(answer(m, 5000), XQF_MSG_WELCOME, "log: %s", cu_fx.logfile);
    cr_assert(worker_known("mallory/alice/box-1"), "another key's name is put under mallory's");
    cr_assert(log_shows("worker mallory/alice/box-1 (id", 5), "log: %s", cu_fx.logfile);
    StoreWorker *w = NULL;
    int n = store_list_workers(cu_fx.store, 0, &w);
    for (int i = 0; i < n; i++)
        cr_assert(strncmp(w[i].name, "alice", 5) == 0 || strncmp(w[i].name, "mallory/", 8) == 0, "%s", w[i].name);
    free(w);
    /* a long name is cut on a character boundary */
    send_hello(m, "x\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
    cr_assert_eq(answer(m, 5000), XQF_MSG_WELCOME, "log: %s", cu_fx.logfile);
    cr_assert(log_shows("worker mallory/x\xc3\xa9\xc3\xa9", 5), "log: %s", cu_fx.logfile);
    zmq_close(a);
    zmq_close(m);
    zmq_ctx_term(ctx);
}

/*
 * A flood of handshakes with fresh keys (anyone who knows the
 * coordinator's public key can make them) writes one refusal line a
 * minute, the others counted, not a line each.
 */
/* How many lines of the log hold text. */
static int count_lines(const char *text)
{
    char *s = slurp(cu_fx.logfile);
    int n = 0;
    for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n"))
        n += strstr(line, text) != NULL;
    free(s);
    return n;
}

Test(curve, refused_keys_do_not_flood_the_log)
{
    CU_REQUIRE_DB();
    new_keys("coord");
    new_keys("friend");
    allow("friend", "friend");
    coordinator();
    void *ctx = zmq_ctx_new();
    void *socks[12];
    for (int i = 0; i < 12; i++) {
        char name[32];
        snprintf(name, sizeof name, "stranger%d", i);
        new_keys(name);
        socks[i] = client(ctx, name, "coord.pub");
        send_hello(socks[i], name);
    }
    cr_assert(log_shows("zap: refused a CURVE client", 30), "log: %s", cu_fx.logfile);
    for (int i = 0; i < 12; i++)
        cr_assert_eq(answer(socks[i], i == 0 ? 1000 : 10), XQF_MSG_NONE, "a stranger was answered");
    cr_assert_eq(count_lines("zap: refused a CURVE client"), 1, "a line per refused key (log: %s)", cu_fx.logfile);
    for (int i = 0; i < 12; i++)
        zmq_close(socks[i]);
    zmq_ctx_term(ctx);
}

/* Asks for a task on slot. */
static void send_request(void *sock, uint64_t slot)
{
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_TASK_REQUEST);
    m.u.task_request.slot = slot;
    XqfBuf b = { 0 };
    cr_assert_eq(xqf_msg_encode(&m, &b), 0);
    cr_assert_geq(zmq_send(sock, b.data, b.len, 0), 0);
    xqf_buf_free(&b);
}

/*
 * The bounds per key (--key-peers, --key-leases, --key-hellos) hold for a
 * key whatever its workers' names, and for that key only: another key's
 * worker is welcomed and served beside it.  Handshakes count against
 * --key-hellos as hellos do: the connection beyond is refused by the ZAP
 * handler before any message.
 */
Test(curve, bounds_per_key)
{
    CU_REQUIRE_DB();
    new_keys("coord");
    new_keys("greedy");
    new_keys("modest");
    allow("greedy", "greedy");
    allow("modest", "modest");
    cu_sprt(cu_fx.store, "NullR=2", 1, 100, 500, -500, 500);
    const char *opts[] = { "--key-peers", "2", "--key-leases", "3", "--key-hellos", "6", NULL };
    coordinator_with(opts);
    void *ctx = zmq_ctx_new(), *c[7];
    for (int i = 0; i < 3; i++)
        c[i] = client(ctx, "greedy", "coord.pub");
    /* two workers of the key at most */
    send_hello(c[0], "g1");
    cr_assert_eq(answer(c[0], 10000), XQF_MSG_WELCOME, "log: %s", cu_fx.logfile);
    send_hello(c[1], "g2");
    cr_assert_eq(answer(c[1], 5000), XQF_MSG_WELCOME, "log: %s", cu_fx.logfile);
    send_hello(c[2], "g3");
    cr_assert_eq(answer(c[2], 5000), XQF_MSG_ERROR, "a third worker of the key was welcomed");
    cr_assert(log_shows("its key has 2 workers connected already (--key-peers)", 5), "log: %s", cu_fx.logfile);
    /* three leases for the key: each worker may hold two, the key three */
    int tasks = 0, idle = 0;
    for (int i = 0; i < 4; i++)
        send_request(c[i / 2], (uint64_t)i);
    for (int i = 0; i < 4; i++) {
        XqfMsgType t = answer(c[i / 2], 5000);
        tasks += t == XQF_MSG_TASK;
        idle += t == XQF_MSG_IDLE;
    }
    cr_assert(tasks == 3 && idle == 1, "%d tasks and %d idle for 4 requests of the key (log: %s)", tasks, idle,
              cu_fx.logfile);
    cr_assert(log_shows("key greedy holds 3 leases, its most (--key-leases)", 5), "log: %s", cu_fx.logfile);
    /* the other key is welcomed and served */
    void *m = client(ctx, "modest", "coord.pub");
    send_hello(m, "m1");
    cr_assert_eq(answer(m, 5000), XQF_MSG_WELCOME, "log: %s", cu_fx.logfile);
    send_request(m, 0);
    cr_assert_eq(answer(m, 5000), XQF_MSG_TASK, "log: %s", cu_fx.logfile);
    /* six hellos a minute: three said, three more, then refused */
    for (int i = 0; i < 3; i++) {
        send_hello(c[0], "g1");
        cr_assert_eq(answer(c[0], 5000), XQF_MSG_WELCOME, "hello %d of the key", 4 + i);
    }
    send_hello(c[0], "g1");
    cr_assert_eq(answer(c[0], 5000), XQF_MSG_ERROR, "a seventh hello in a minute was welcomed");
    cr_assert(log_shows("over 6 hellos a minute (--key-hellos)", 5), "log: %s", cu_fx.logfile);
    /* and six handshakes: three made, three more get in (their hellos refused), the seventh does not */
    for (int i = 3; i < 7; i++) {
        c[i] = client(ctx, "greedy", "coord.pub");
        send_hello(c[i], "g4");
        cr_assert_eq(answer(c[i], i < 6 ? 5000 : 2000), i < 6 ? XQF_MSG_ERROR : XQF_MSG_NONE, "connection %d", i + 1);
    }
    cr_assert(log_shows("over its handshakes a minute (--key-hellos)", 5), "log: %s", cu_fx.logfile);
    send_hello(m, "m1");
    cr_assert_eq(answer(m, 5000), XQF_MSG_WELCOME, "the other key's hello (log: %s)", cu_fx.logfile);
    for (int i = 0; i < 7; i++)
        zmq_close(c[i]);
    zmq_close(m);
    zmq_ctx_term(ctx);
}

/* The next message within ms, decoded into m (false when none came). */
static bool next_message(void *sock, int ms, XqfMsg *m)
{
    zmq_pollitem_t it = { sock, 0, ZMQ_POLLIN, 0 };
    if (zmq_poll(&it, 1, ms) <= 0)
        return false;
    zmq_msg_t part;
    zmq_msg_init(&part);
    cr_assert_geq(zmq_msg_recv(&part, sock, 0), 0);
    cr_assert_eq(xqf_msg_decode(zmq_msg_data(&part), zmq_msg_size(&part), m, NULL, 0), XQF_DECODE_OK);
    zmq_msg_close(&part);
    return true;
}

/*
 * --key-connections and --first-message in the coordinator: a key's
 * connections beyond its bound are answered with the limit by name and
 * closed, counted in the stop line; another key's worker is welcomed and
 * served; a connection that says nothing is closed after --first-message.
 */
Test(curve, connections_per_key)
{
    CU_REQUIRE_DB();
    new_keys("coord");
    new_keys("greedy");
    new_keys("modest");
    allow("greedy", "greedy");
    allow("modest", "modest");
    cu_sprt(cu_fx.store, "NullR=2", 1, 100, 500, -500, 500);
    const char *opts[] = { "--key-connections", "2", "--first-message", "1", NULL };
    pid_t coord = coordinator_with(opts);
    enum { OPENED = 5 };
    void *ctx = zmq_ctx_new(), *c[OPENED], *mon[OPENED];
    /* the other key first, which reconnects until the coordinator listens (the greedy ones never reconnect) */
    void *m = client(ctx, "modest", "coord.pub");
    send_hello(m, "m1");
    cr_assert_eq(answer(m, 10000), XQF_MSG_WELCOME, "log: %s", cu_fx.logfile);
    int seen[OPENED] = { 0 }, welcomed = 0, limited = 0;
    for (int i = 0; i < OPENED; i++) {
        char name[32];
        snprintf(name, sizeof name, "g%d", i);
        c[i] = client_once(ctx, "greedy", "coord.pub", true);
        mon[i] = watch(ctx, c[i], name);
        send_hello(c[i], name);
        XqfMsg a;
        cr_assert(next_message(c[i], 10000, &a), "connection %d got no answer (log: %s)", i, cu_fx.logfile);
        if (a.type == XQF_MSG_WELCOME)
            welcomed++;
        else if (a.type == XQF_MSG_ERROR && a.u.error.code == XQF_ERR_LIMIT &&
                 strstr(a.u.error.text, "(--key-connections)"))
            limited++;
        else
            cr_assert_fail("connection %d: %s %s", i, xqf_msg_type_name(a.type),
                           a.type == XQF_MSG_ERROR ? a.u.error.text : "");
        xqf_msg_free(&a);
    }
    cr_assert(welcomed == 2 && limited == OPENED - 2, "%d welcomed, %d refused for the key's connections", welcomed,
              limited);
    cr_assert(log_shows("key greedy: a connection refused and closed: the key holds 2 open connections", 5), "log: %s",
              cu_fx.logfile);
    double end = cu_now() + 5;
    int closed = 0;
    while (closed < OPENED - 2 && cu_now() < end) {
        cu_sleep_ms(50);
        closed = 0;
        for (int i = 0; i < OPENED; i++) {
            events(mon[i], &seen[i]);
            closed += (seen[i] & ZMQ_EVENT_DISCONNECTED) != 0;
        }
    }
    cr_assert_eq(closed, OPENED - 2, "%d connections closed (log: %s)", closed, cu_fx.logfile);
    /* the other key is still welcomed, and served */
    send_hello(m, "m1");
    cr_assert_eq(answer(m, 5000), XQF_MSG_WELCOME, "log: %s", cu_fx.logfile);
    send_request(m, 0);
    cr_assert_eq(answer(m, 5000), XQF_MSG_TASK, "log: %s", cu_fx.logfile);
    /* a handshake and then nothing: closed after --first-message */
    void *silent = client_once(ctx, "modest", "coord.pub", true), *smon = watch(ctx, silent, "silent");
    int sseen = 0;
    end = cu_now() + 5;
    while (!(sseen & ZMQ_EVENT_DISCONNECTED) && cu_now() < end) {
        cu_sleep_ms(50);
        events(smon, &sseen);
    }
    cr_assert(sseen & ZMQ_EVENT_HANDSHAKE_SUCCEEDED, "the silent connection made its handshake");
    cr_assert(sseen & ZMQ_EVENT_DISCONNECTED, "the silent connection was not closed (log: %s)", cu_fx.logfile);
    cu_stop(coord, SIGTERM);
    cu_untrack(coord);
    cr_assert(log_shows("3 connections beyond --key-connections", 5), "log: %s", cu_fx.logfile);
    cr_assert(log_shows("1 connections closed silent past --first-message", 1), "log: %s", cu_fx.logfile);
    for (int i = 0; i < OPENED; i++) {
        zmq_close(mon[i]);
        zmq_close(c[i]);
    }
    zmq_close(smon);
    zmq_close(silent);
    zmq_close(m);
    zmq_ctx_term(ctx);
}

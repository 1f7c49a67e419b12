/*
 * xqf-web against a real PostgreSQL (XQF_TEST_DB; skipped without it),
 * over real HTTP on loopback: status codes and error pages (malformed
 * URLs, unknown runs, oversize and malformed bodies, wrong methods),
 * escaping of user text, sessions, CSRF refusal, rights (a viewer's POST
 * is refused with 403 and changes nothing; a tester's run waits for an
 * admin's approval; the audit shows it), forms with bad values create
 * nothing and say why per field, login rate limits, the read-only view
 * switched off, a non-loopback bind without TLS refused, and a committed
 * change of a run pushed to its event stream within a second.  A test of
 * git refs from the form waits for its builds (bad refs refused per
 * field), and the form's messages are xqf-tune's for the same bad values.
 * A set is checked against what plays it: a build's own parameters, a
 * ref's syntax only (the builder checks the rest), the engine's table.
 * Every run kind has its form, and the same settings from a form and
 * from xqf-tune make the same stored run (the one run service); a bad
 * setting, the book's size included, gets xqf-tune's message.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cluster_util.h"
#include "nnue.h"
#include "params.h"
#include "residual.h"
#include "sha256.h"
#include "spsa_spec.h"
#include "store_builds.h"
#include "store_engines.h"
#include "store_nets.h"
#include "store_runs.h"
#include "store_spsa.h"
#include "store_steer.h"
#include "store_tasks.h"
#include "store_users.h"

static pid_t web;

/* Starts xqf-web with extra options (NULL-terminated, may be NULL) and waits until it answers. */
static void start_web(const char *const extra[])
{
    char p[16];
    cu_fx.port = cu_free_port();
    snprintf(p, sizeof p, "%d", cu_fx.port);
    const char *args[24] = { "--db", cu_fx.db_web, "--port", p, "--login-rate", "5" };
    int n = 6;
    for (int i = 0; extra && extra[i]; i++)
        if (strcmp(extra[i], "--login-rate") == 0)
            n = 4; /* the test's own rate instead */
    for (int i = 0; extra && extra[i] && n < 23; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    web = cu_track(cu_spawn_env("xqf-web", cu_fx.logfile, args, (const char *const[]){ NULL }));
    cr_assert_gt(web, 0);
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

TestSuite(web, .init = cu_fixture_init, .fini = cu_fixture_fini, .timeout = 120);

/* ---- a small HTTP client ---------------------------------------------------------- */

typedef struct {
    int status;
    char head[8192];
    char *body;                      /* malloc'd, terminated */
    size_t len;                      /* its bytes (a download's may hold NULs) */
} Reply;

static void reply_free(Reply *r) { free(r->body), r->body = NULL; }

/* A connection to xqf-web, from the loopback address `from` (any of 127.0.0.0/8) when not NULL. */
static int dial_from(const char *from)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (from) {
        struct sockaddr_in b = { .sin_family = AF_INET };
        inet_pton(AF_INET, from, &b.sin_addr);
        cr_assert_eq(bind(fd, (struct sockaddr *)&b, sizeof b), 0, "bind to %s", from);
    }
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)cu_fx.port) };
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

static int dial(void) { return dial_from(NULL); }

/* Sends raw bytes from `from` (may be NULL) and reads the whole reply (the server closes: Connection: close). */
static Reply raw_from(const char *from, const char *request, size_t len)
{
    int fd = dial_from(from);
    size_t off = 0;
    while (off < len) {
        ssize_t n = send(fd, request + off, len - off, MSG_NOSIGNAL);
        if (n <= 0)
            break;                   /* the server may answer (413) and close before reading it all */
        off += (size_t)n;
    }
    size_t cap = 1 << 16, got = 0;
    char *buf = malloc(cap);
    ssize_t n;
    while ((n = recv(fd, buf + got, cap - got - 1, 0)) > 0)
        if ((got += (size_t)n) + 1 >= cap)
            buf = realloc(buf, cap *= 2);
    close(fd);
    buf[got] = '\0';
    Reply r = { 0 };
    sscanf(buf, "HTTP/1.%*d %d", &r.status);
    char *split = strstr(buf, "\r\n\r\n");
    size_t hlen = split ? (size_t)(split - buf) : got;
    snprintf(r.head, sizeof r.head, "%.*s", (int)(hlen < sizeof r.head - 1 ? hlen : sizeof r.head - 1), buf);
    r.len = split ? got - (size_t)(split + 4 - buf) : 0;
    r.body = malloc(r.len + 1);
    memcpy(r.body, split ? split + 4 : "", r.len);
    r.body[r.len] = '\0';
    free(buf);
    return r;
}

static Reply raw(const char *request, size_t len) { return raw_from(NULL, request, len); }

/* A request from `from` (may be NULL) with a cookie (may be NULL) and a form body (POST when not NULL). */
static Reply http_from(const char *from, const char *method, const char *path, const char *cookie, const char *form)
{
    char *req = malloc(strlen(path) + (form ? strlen(form) : 0) + 1024);
    int n = sprintf(req, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n", method, path);
    if (cookie && *cookie)
        n += sprintf(req + n, "Cookie: xqf_session=%s\r\n", cookie);
    if (form)
        n += sprintf(req + n, "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %zu\r\n\r\n%s",
                     strlen(form), form);
    else
        n += sprintf(req + n, "\r\n");
    Reply r = raw_from(from, req, (size_t)n);
    free(req);
    return r;
}

static Reply http(const char *method, const char *path, const char *cookie, const char *form)
{
    return http_from(NULL, method, path, cookie, form);
}

static int status_of(const char *method, const char *path, const char *cookie, const char *form)
{
    Reply r = http(method, path, cookie, form);
    reply_free(&r);
    return r.status;
}

/* Runs xqf-tune user add NAME --role ROLE with password on stdin. */
static void add_user(const char *name, const char *role, const char *password)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "echo '%s' | '%s/xqf-tune' user add %s --role %s --db '%s' >/dev/null 2>>'%s'", password,
             XQF_BIN, name, role, cu_fx.db, cu_fx.logfile);
    cr_assert_eq(system(cmd), 0, "xqf-tune user add %s failed", name);
}

/* The login page's cookie (its nonce, from the head) and its form's token (from the body): false when either lacks. */
static bool login_page_of(const char *head, const char *body, char nonce[128], char token[128])
{
    const char *c = strstr(head, "xqf_login="), *t = strstr(body, "name=\"login_csrf\" value=\"");
    nonce[0] = token[0] = '\0';
    if (c)
        sscanf(c + 10, "%127[0-9a-f]", nonce);
    if (t)
        sscanf(t + 25, "%127[0-9a-f]", token);
    return nonce[0] && token[0];
}

/*
 * A POST /login from `from` (NULL: 127.0.0.1) with an X-Forwarded-For
 * header (NULL: none), the login cookie's value nonce (NULL: none) and a
 * form body.
 */
static Reply login_raw(const char *from, const char *forwarded, const char *nonce, const char *form)
{
    char req[2048];
    int n = snprintf(req, sizeof req, "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n%s%s%s%s%s%s"
                     "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %zu\r\n\r\n%s",
                     forwarded ? "X-Forwarded-For: " : "", forwarded ? forwarded : "", forwarded ? "\r\n" : "",
                     nonce ? "Cookie: xqf_login=" : "", nonce ? nonce : "", nonce ? "\r\n" : "", strlen(form), form);
    return raw_from(from, req, (size_t)n);
}

/*
 * A login as user, as a browser does it: the login page (from the same
 * address, `from`; NULL: 127.0.0.1), then its form with the page's token
 * and cookie (and forwarded as X-Forwarded-For, NULL: none).
 */
static Reply login_post(const char *from, const char *forwarded, const char *user, const char *password)
{
    char nonce[128], token[128], form[512];
    Reply page = http_from(from, "GET", "/login", NULL, NULL);
    cr_assert_eq(page.status, 200);
    cr_assert(login_page_of(page.head, page.body, nonce, token), "no login token:\n%s\n%s", page.head, page.body);
    reply_free(&page);
    snprintf(form, sizeof form, "login_csrf=%s&user=%s&password=%s", token, user, password);
    return login_raw(from, forwarded, nonce, form);
}

static int login_status(const char *user, const char *password)
{
    Reply r = login_post(NULL, NULL, user, password);
    reply_free(&r);
    return r.status;
}

/* Logs in: the session cookie's value into cookie, the CSRF token of the forms into csrf. */
static void login(const char *name, const char *password, char *cookie, char *csrf)
{
    Reply r = login_post(NULL, NULL, name, password);
    cr_assert_eq(r.status, 303, "login of %s: %d", name, r.status);
    const char *c = strstr(r.head, "xqf_session=");
    cr_assert(c);
    cr_assert(strstr(r.head, "HttpOnly") && strstr(r.head, "SameSite=Strict"));
    sscanf(c + 12, "%127[0-9a-f]", cookie);
    reply_free(&r);
    r = http("GET", "/runs", cookie, NULL);
    const char *t = strstr(r.body, "name=\"csrf\" value=\"");
    cr_assert(t, "no CSRF token in a signed-in page");
    sscanf(t + 19, "%127[0-9a-f]", csrf);
    reply_free(&r);
}

static int64_t count_runs(void)
{
    StoreRun *runs = NULL;
    int n = store_list_runs(cu_fx.store, 1000, &runs);
    free(runs);
    return n;
}

static void load(int64_t id, StoreRun *r) { cr_assert_eq(store_load_run(cu_fx.store, id, r, false), 1); }

/* ---- tests ---------------------------------------------------------------------------- */

Test(web, status_codes_and_error_pages)
{
    CU_REQUIRE_DB();
    int64_t id = cu_sprt(cu_fx.store, "NullR=2", 4, 100, 300, 0, 5);
    start_web(NULL);
    char path[64];
    snprintf(path, sizeof path, "/runs/%" PRId64, id);
    cr_assert_eq(status_of("GET", "/", NULL, NULL), 200);
    cr_assert_eq(status_of("GET", path, NULL, NULL), 200);
    cr_assert_eq(status_of("GET", "/machines", NULL, NULL), 200);
    cr_assert_eq(status_of("GET", "/static/web.js", NULL, NULL), 200);
    cr_assert_eq(status_of("GET", "/runs/abc", NULL, NULL), 400);
    cr_assert_eq(status_of("GET", "/runs/-1", NULL, NULL), 400);
    cr_assert_eq(status_of("GET", "/runs/99999", NULL, NULL), 404);
    cr_assert_eq(status_of("GET", "/runs/99999/events", NULL, NULL), 404);
    cr_assert_eq(status_of("GET", "/no/such/page", NULL, NULL), 404);
    cr_assert_eq(status_of("GET", "/runs/%3Cscript%3E", NULL, NULL), 400);
    cr_assert_eq(status_of("DELETE", "/", NULL, NULL), 405);
    cr_assert_eq(status_of("POST", "/", NULL, "a=1"), 405);
    cr_assert_eq(status_of("POST", "/login", NULL, "user=%zz"), 400);
    Reply r = http("GET", "/runs/99999", NULL, NULL);
    cr_assert(strstr(r.body, "there is no run 99999"), "the error page says why");
    cr_assert(strstr(r.head, "Content-Security-Policy"));
    reply_free(&r);
    /* a body over 64 KiB: refused from its Content-Length, and when it comes without one */
    size_t big = 200000;
    char *form = malloc(big + 1);
    memset(form, 'a', big);
    form[big] = '\0';
    memcpy(form, "user=", 5);
    cr_assert_eq(status_of("POST", "/login", NULL, form), 413);
    char *req = malloc(big + 512);
    int n = sprintf(req, "POST /login HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n"
                         "Content-Type: application/x-www-form-urlencoded\r\n\r\n%zx\r\n", big);
    memcpy(req + n, form, big);
    n += (int)big;
    n += sprintf(req + n, "\r\n0\r\n\r\n");
    r = raw(req, (size_t)n);
    cr_assert_eq(r.status, 413);
    reply_free(&r);
    free(req);
    free(form);
    /* a head over the memory limit gets an error, not a crash */
    char *head = malloc(70000);
    n = sprintf(head, "GET / HTTP/1.1\r\nHost: x\r\nX-Big: ");
    memset(head + n, 'b', 60000);
    n += 60000;
    n += sprintf(head + n, "\r\nConnection: close\r\n\r\n");
    r = raw(head, (size_t)n);
    cr_assert(r.status == 431 || r.status == 413 || r.status == 400 || r.status == 0, "status %d", r.status);
    reply_free(&r);
    free(head);
    cr_assert_eq(status_of("GET", "/", NULL, NULL), 200, "still serving");
}

Test(web, user_text_is_escaped)
{
    CU_REQUIRE_DB();
    const char *book[1];
    cr_assert_eq(cu_book(book, 1), 1);
    StoreSprtSpec sp = { .name = "<script>alert('x')</script>&\"", .test_params = "", .base_params = "",
                         .book = book, .book_lines = 1, .seed = 77, .nodes = 300, .pairs_per_task = 2,
                         .max_pairs = 10, .elo0 = 0, .elo1 = 5, .alpha = 0.05, .beta = 0.05, .priority = 3 };
    int64_t id;
    cr_assert_eq(store_create_sprt(cu_fx.store, &sp, &id), 0);
    start_web(NULL);
    char path[64];
    snprintf(path, sizeof path, "/runs/%" PRId64, id);
    const char *pages[] = { "/", path };
    for (int i = 0; i < 2; i++) {
        Reply r = http("GET", pages[i], NULL, NULL);
        cr_assert_eq(r.status, 200);
        cr_assert_null(strstr(r.body, "<script>alert"), "%s shows the name as markup", pages[i]);
        cr_assert(strstr(r.body, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"), "%s", pages[i]);
        /* the run's page lists the settings run_settings.def shows, as the store read them */
        cr_assert(i == 0 || strstr(r.body, "<tr><th>Priority</th><td>3</td></tr>\n<tr><th>Seed</th><td>77</td></tr>\n"
                                           "<tr><th>Resign plies</th><td>4</td></tr>"),
                  "%s", r.body);
        reply_free(&r);
    }
    Reply r = http("GET", "/runs?owner=%3Cb%3E", NULL, NULL);
    cr_assert(strstr(r.body, "value=\"&lt;b&gt;\""), "the filter's value is escaped");
    reply_free(&r);
}

Test(web, viewer_cannot_act_and_csrf_is_checked)
{
    CU_REQUIRE_DB();
    int64_t id = cu_sprt(cu_fx.store, "NullR=2", 4, 100, 300, 0, 5);
    add_user("vic", "viewer", "viewpass1");
    add_user("ada", "admin", "adminpass1");
    start_web(NULL);
    char cookie[128], csrf[128], path[64], form[256];
    login("vic", "viewpass1", cookie, csrf);
    snprintf(path, sizeof path, "/runs/%" PRId64, id);
    Reply r = http("GET", path, cookie, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert_null(strstr(r.body, ">Stop</button>"), "a viewer sees no Stop button");
    reply_free(&r);
    snprintf(path, sizeof path, "/runs/%" PRId64 "/stop", id);
    snprintf(form, sizeof form, "csrf=%s", csrf);
    cr_assert_eq(status_of("POST", path, cookie, form), 403, "a viewer's POST");
    cr_assert_eq(status_of("POST", path, NULL, "csrf=x"), 403, "no session");
    cr_assert_eq(status_of("POST", "/new/sprt", cookie, form), 403, "a viewer creates no run");
    StoreRun run;
    load(id, &run);
    cr_assert_str_eq(run.state, "active");
    /* an admin with a wrong or missing token is refused too; with the right one the run stops */
    char acookie[128], acsrf[128];
    login("ada", "adminpass1", acookie, acsrf);
    cr_assert_eq(status_of("POST", path, acookie, "csrf=0123"), 403);
    cr_assert_eq(status_of("POST", path, acookie, ""), 403);
    cr_assert_eq(status_of("POST", path, acookie, form), 403, "another session's token");
    load(id, &run);
    cr_assert_str_eq(run.state, "active");
    snprintf(form, sizeof form, "csrf=%s", acsrf);
    cr_assert_eq(status_of("POST", path, acookie, form), 303);
    load(id, &run);
    cr_assert_str_eq(run.state, "stopped");
    cr_assert_str_eq(run.verdict, "stopped by ada");
    snprintf(path, sizeof path, "/runs/%" PRId64, id);
    r = http("GET", path, NULL, NULL);
    cr_assert(strstr(r.body, "<td>ada</td><td>stop</td>"), "the audit shows the stop");
    reply_free(&r);
    /* logging out ends the session */
    cr_assert_eq(status_of("POST", "/logout", acookie, form), 303);
    snprintf(path, sizeof path, "/runs/%" PRId64 "/approve", id);
    cr_assert_eq(status_of("POST", path, acookie, form), 403);
}

Test(web, tester_run_waits_for_approval)
{
    CU_REQUIRE_DB();
    add_user("tess", "tester", "testpass1");
    add_user("ada", "admin", "adminpass1");
    start_web(NULL);
    char cookie[128], csrf[128], form[512], acookie[128], acsrf[128];
    login("tess", "testpass1", cookie, csrf);
    int64_t before = count_runs();
    /* bad values: 400, a message next to each field, nothing created */
    snprintf(form, sizeof form, "csrf=%s&name=x&test=NoSuchParam%%3D1&base=&elo0=0&elo1=-3&alpha=0.05&beta=2"
                                "&max_pairs=0&tc=&nodes=&pairs_per_task=9999&priority=0&test_build=77&base_build=x",
             csrf);
    Reply r = http("POST", "/new/sprt", cookie, form);
    cr_assert_eq(r.status, 400);
    const char *fields[] = { "err-test", "err-elo1", "err-beta", "err-max_pairs", "err-tc", "err-pairs_per_task",
                             "err-test_build", "err-base_build" };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        cr_assert(strstr(r.body, fields[i]), "no message for %s", fields[i]);
    cr_assert(strstr(r.body, "value=\"NoSuchParam=1\""), "the values given are kept");
    reply_free(&r);
    cr_assert_eq(count_runs(), before, "a bad form created a run");
    /* a wrong CSRF token: 403, nothing created */
    snprintf(form, sizeof form, "csrf=%s&name=t&test=NullR%%3D2&base=&elo0=0&elo1=5&alpha=0.05&beta=0.05"
                                "&max_pairs=100&tc=&nodes=300&pairs_per_task=8&priority=0", "deadbeef");
    cr_assert_eq(status_of("POST", "/new/sprt", cookie, form), 403);
    cr_assert_eq(count_runs(), before);
    /* a good form: a pending run of tess */
    snprintf(form, sizeof form, "csrf=%s&name=t&test=NullR%%3D2&base=&elo0=0&elo1=5&alpha=0.05&beta=0.05"
                                "&max_pairs=100&tc=&nodes=300&pairs_per_task=8&priority=0", csrf);
    r = http("POST", "/new/sprt", cookie, form);
    cr_assert_eq(r.status, 303);
    const char *loc = strstr(r.head, "Location: /runs/");
    cr_assert(loc);
    int64_t id = strtoll(loc + 16, NULL, 10);
    reply_free(&r);
    StoreRun run;
    load(id, &run);
    cr_assert_str_eq(run.state, "pending", "a tester's run waits");
    StoreRun *active = NULL;
    int n = store_active_runs(cu_fx.store, &active);
    for (int i = 0; i < n; i++)
        cr_assert_neq(active[i].id, id, "the coordinator would serve a pending run");
    free(active);
    /* the tester may not approve it; an admin does */
    char path[64];
    snprintf(path, sizeof path, "/runs/%" PRId64 "/approve", id);
    snprintf(form, sizeof form, "csrf=%s", csrf);
    cr_assert_eq(status_of("POST", path, cookie, form), 403);
    login("ada", "adminpass1", acookie, acsrf);
    snprintf(form, sizeof form, "csrf=%s", acsrf);
    cr_assert_eq(status_of("POST", path, acookie, form), 303);
    load(id, &run);
    cr_assert_str_eq(run.state, "active");
    cr_assert_eq(status_of("POST", path, acookie, form), 409, "approved twice");
    /* an admin modifies it; bad numbers are refused */
    snprintf(path, sizeof path, "/runs/%" PRId64 "/modify", id);
    snprintf(form, sizeof form, "csrf=%s&priority=7&max_pairs=500&pairs_per_task=4", acsrf);
    cr_assert_eq(status_of("POST", path, acookie, form), 303);
    snprintf(form, sizeof form, "csrf=%s&priority=x&max_pairs=500&pairs_per_task=4", acsrf);
    cr_assert_eq(status_of("POST", path, acookie, form), 400);
    snprintf(form, sizeof form, "csrf=%s&priority=7&max_pairs=500&pairs_per_task=300", acsrf);
    r = http("POST", path, acookie, form);
    cr_assert(r.status == 400 && strstr(r.body, "pairs_per_task: at most 256"), "the cap of xqf-tune's runs");
    reply_free(&r);
    load(id, &run);
    cr_assert_eq(run.priority, 7);
    cr_assert_eq(run.max_pairs, 500);
    cr_assert_eq(run.pairs_per_task, 4);
    /* the tester stops their own run */
    snprintf(path, sizeof path, "/runs/%" PRId64 "/stop", id);
    snprintf(form, sizeof form, "csrf=%s", csrf);
    cr_assert_eq(status_of("POST", path, cookie, form), 303);
    snprintf(path, sizeof path, "/runs/%" PRId64, id);
    r = http("GET", path, NULL, NULL);
    cr_assert(strstr(r.body, "<td>tess</td><td>create</td>") && strstr(r.body, "<td>ada</td><td>approve</td>") &&
              strstr(r.body, "<td>ada</td><td>modify</td>") && strstr(r.body, "<td>tess</td><td>stop</td>"),
              "the audit lists every action");
    reply_free(&r);
}

Test(web, logins_are_rate_limited)
{
    CU_REQUIRE_DB();
    add_user("ada", "admin", "adminpass1");
    start_web(NULL);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(login_status("ada", "wrong"), 401);
    cr_assert_eq(login_status("ada", "adminpass1"), 429, "the sixth try");
}

/*
 * The limit drains continuously (a leaky bucket), not per calendar minute:
 * at 5 a minute, 5 failures use it up, twelve seconds later there is room
 * for exactly one more try, and no minute boundary frees a second burst.
 * (Each failure costs an Argon2id verification, unknown users' too: the
 * rate is low enough that the tries themselves drain next to nothing.)
 */
Test(web, login_limit_drains_one_try_at_a_time)
{
    CU_REQUIRE_DB();
    const char *extra[] = { "--login-rate", "5", NULL };
    start_web(extra);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(login_status("nobody", "wrong"), 401, "try %d", i + 1);
    cr_assert_eq(login_status("nobody", "wrong"), 429, "the limit is used up");
    struct timespec t = { 12, 300000000 };
    nanosleep(&t, NULL);
    cr_assert_eq(login_status("nobody", "wrong"), 401, "3 s later: one try");
    cr_assert_eq(login_status("nobody", "wrong"), 429, "and only one");
}

/* The status of a login as user with password from the loopback address `from`. */
static int login_status_from(const char *from, const char *user, const char *password)
{
    Reply r = login_post(from, NULL, user, password);
    reply_free(&r);
    return r.status;
}

/*
 * One password guessed from many addresses meets the account's limit
 * (--login-account-rate), whoever sends the guesses; the address the
 * account logged in from before is spared, so its owner gets in during
 * the attack.  (The tables' eviction, a full table included, is
 * test_web_login's: filling 1,024 entries here would take 1,024 Argon2id
 * verifications.)
 */
Test(web, an_account_is_limited_across_addresses)
{
    CU_REQUIRE_DB();
    add_user("ada", "admin", "adminpass1");
    const char *extra[] = { "--login-account-rate", "3", NULL };
    start_web(extra);
    cr_assert_eq(login_status_from("127.0.7.1", "ada", "adminpass1"), 303, "the owner, at home");
    char from[32];
    for (int i = 10; i < 13; i++) {
        snprintf(from, sizeof from, "127.0.7.%d", i);
        cr_assert_eq(login_status_from(from, "ada", "guess"), 401, "a guess from %s", from);
    }
    Reply r = login_post("127.0.7.13", NULL, "ada", "adminpass1");
    cr_assert_eq(r.status, 429, "a fourth address, right password or not: %d", r.status);
    cr_assert(strstr(r.body, "too many failed logins for this account"), "%s", r.body);
    reply_free(&r);
    cr_assert_eq(login_status_from("127.0.7.13", "nobody", "guess"), 401, "that address may try other accounts");
    cr_assert_eq(login_status_from("127.0.7.1", "ada", "adminpass1"), 303, "the owner's address is spared");
}

/*
 * The login form carries a token that must match the login page's cookie
 * (signed double submit): a POST /login without either, with a token of
 * its own making or with another page's cookie is refused (403) before
 * any password is checked, and counts for no limit.
 */
Test(web, a_login_needs_the_login_pages_token)
{
    CU_REQUIRE_DB();
    add_user("ada", "admin", "adminpass1");
    const char *extra[] = { "--login-rate", "1", NULL };
    start_web(extra);
    char nonce[128], token[128], other_nonce[128], other_token[128], form[512];
    Reply page = http("GET", "/login", NULL, NULL);
    cr_assert(login_page_of(page.head, page.body, nonce, token));
    const char *cookie = strstr(page.head, "xqf_login=");
    cr_assert(strstr(cookie, "Path=/login") && strstr(cookie, "HttpOnly") && strstr(cookie, "SameSite=Strict"),
              "%s", page.head);
    reply_free(&page);
    page = http("GET", "/login", NULL, NULL);
    cr_assert(login_page_of(page.head, page.body, other_nonce, other_token));
    cr_assert_str_neq(nonce, other_nonce, "a nonce per visitor");
    reply_free(&page);
    Reply r = login_raw(NULL, NULL, NULL, "user=ada&password=adminpass1");
    cr_assert_eq(r.status, 403, "no token, no cookie: %d", r.status);
    cr_assert(strstr(r.body, "token is missing or wrong"), "%s", r.body);
    reply_free(&r);
    snprintf(form, sizeof form, "login_csrf=%s&user=ada&password=adminpass1", token);
    r = login_raw(NULL, NULL, NULL, form);
    cr_assert_eq(r.status, 403, "a token without its cookie (another site's form)");
    reply_free(&r);
    r = login_raw(NULL, NULL, nonce, "user=ada&password=adminpass1");
    cr_assert_eq(r.status, 403, "a cookie without the token");
    reply_free(&r);
    snprintf(form, sizeof form, "login_csrf=%s&user=ada&password=adminpass1", nonce);
    r = login_raw(NULL, NULL, nonce, form);
    cr_assert_eq(r.status, 403, "the nonce as its own token (a plain double submit, forgeable by a planted cookie)");
    reply_free(&r);
    snprintf(form, sizeof form, "login_csrf=%s&user=ada&password=adminpass1", other_token);
    r = login_raw(NULL, NULL, nonce, form);
    cr_assert_eq(r.status, 403, "another page's token");
    reply_free(&r);
    snprintf(form, sizeof form, "login_csrf=%s&user=ada&password=wrong", token);
    r = login_raw(NULL, NULL, nonce, form);
    cr_assert_eq(r.status, 401, "the refusals above counted for no limit (1 a minute)");
    cr_assert(strstr(r.body, token), "a failed login's page carries its token again");
    reply_free(&r);
}

/* A login as user from the loopback address `from` with an X-Forwarded-For header (NULL: none): its status. */
static int login_forwarded(const char *from, const char *forwarded, const char *user, const char *password)
{
    Reply r = login_post(from, forwarded, user, password);
    reply_free(&r);
    return r.status;
}

/*
 * --trusted-proxy: only from that address is X-Forwarded-For believed, and
 * only its last hop (what the proxy appended), for the limits and the
 * audit; from anyone else the header is ignored.
 */
Test(web, x_forwarded_for_only_from_the_trusted_proxy)
{
    CU_REQUIRE_DB();
    add_user("ada", "admin", "adminpass1");
    const char *extra[] = { "--login-rate", "1", "--trusted-proxy", "127.0.8.1", NULL };
    start_web(extra);
    cr_assert_eq(login_forwarded("127.0.8.1", "203.0.113.9", "nobody", "guess"), 401);
    cr_assert_eq(login_forwarded("127.0.8.1", "203.0.113.9", "nobody", "guess"), 429, "that client's limit");
    cr_assert_eq(login_forwarded("127.0.8.1", "203.0.113.9, 127.0.8.1", "nobody", "guess"), 401,
                 "another last hop, another client (whatever the client wrote first)");
    cr_assert_eq(login_forwarded("127.0.8.1", "198.51.100.4, 203.0.113.9", "nobody", "guess"), 429,
                 "a client cannot pose as another by writing the header itself: the proxy's hop counts");
    cr_assert_eq(login_forwarded("127.0.8.2", "192.0.2.1", "nobody", "guess"), 401);
    cr_assert_eq(login_forwarded("127.0.8.2", "192.0.2.2", "nobody", "guess"), 429,
                 "not the proxy: the header is ignored, the peer's limit counts");
    cr_assert_eq(login_forwarded("127.0.8.1", "192.0.2.77", "ada", "adminpass1"), 303);
    char cmd[1024], detail[256];
    snprintf(cmd, sizeof cmd, "psql -qAt '%s' -c \"SELECT detail FROM web_audit WHERE action = 'login'\"", cu_fx.db);
    cr_assert_eq(cu_sh(detail, sizeof detail, cmd, cu_fx.logfile), 0);
    cr_assert_str_eq(detail, "192.0.2.77\n", "the audit names the client, not the proxy");
}

Test(web, login_required_and_bind_rules)
{
    CU_REQUIRE_DB();
    const char *extra[] = { "--login-required", NULL };
    start_web(extra);
    cr_assert_eq(status_of("GET", "/", NULL, NULL), 401);
    cr_assert_eq(status_of("GET", "/login", NULL, NULL), 200);
    cr_assert_eq(status_of("GET", "/static/style.css", NULL, NULL), 200);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s/xqf-web' --db '%s' --listen 0.0.0.0 --port 1 2>/dev/null", XQF_BIN, cu_fx.db);
    int st = system(cmd);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "a non-loopback bind without TLS must be refused");
    snprintf(cmd, sizeof cmd, "'%s/xqf-web' --db '%s' --cert /nonexistent 2>/dev/null", XQF_BIN, cu_fx.db);
    st = system(cmd);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "--cert without --key");
}

/* Reads from fd until text arrives or timeout_ms passes; true when it came. */
static bool wait_for(int fd, const char *text, int timeout_ms, char *buf, size_t size)
{
    size_t got = strlen(buf);
    double end = cu_now() + timeout_ms / 1000.0;
    while (!strstr(buf, text) && cu_now() < end && got + 1 < size) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll(&p, 1, 50) == 1) {
            ssize_t n = recv(fd, buf + got, size - got - 1, 0);
            if (n <= 0)
                break;
            buf[got += (size_t)n] = '\0';
        }
    }
    return strstr(buf, text) != NULL;
}

Test(web, a_commit_is_pushed_within_a_second)
{
    CU_REQUIRE_DB();
    int64_t id = cu_sprt(cu_fx.store, "NullR=2", 4, 100, 300, 0, 5);
    start_web(NULL);
    int fds[2];
    char req[256], buf[2][16384];
    for (int i = 0; i < 2; i++) {     /* the run's page and the runs page */
        fds[i] = dial();
        int n = i == 0 ? snprintf(req, sizeof req, "GET /runs/%" PRId64 "/events HTTP/1.1\r\nHost: x\r\n\r\n", id)
                       : snprintf(req, sizeof req, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
        cr_assert_eq(send(fds[i], req, (size_t)n, 0), n);
        buf[i][0] = '\0';
        cr_assert(wait_for(fds[i], "retry:", 2000, buf[i], sizeof buf[i]), "no event stream");
        cr_assert(strstr(buf[i], "text/event-stream"));
    }
    cu_sleep_ms(300);                /* the listener is up */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "psql -q '%s' -c \"UPDATE runs SET pairs = 3, wins = 2, draws = 2, losses = 2, "
                              "dd = 3, llr = 0.25 WHERE id = %" PRId64 "\" >/dev/null", cu_fx.db, id);
    double t0 = cu_now();
    cr_assert_eq(system(cmd), 0);
    /* the pages' LLR is the run service's, of the counts (3 pairs DD), not the llr column */
    for (int i = 0; i < 2; i++)
        cr_assert(wait_for(fds[i], "\"games\":\"6\"", 1500, buf[i], sizeof buf[i]), "stream %d got no event:\n%s", i,
                  buf[i]);
    double latency = cu_now() - t0;
    cr_assert_lt(latency, 1.0 + 0.1, "pushed %.3f s after the commit (psql included)", latency);
    cr_assert(strstr(buf[0], "\"llr\":\"") && !strstr(buf[0], "\"llr\":\"0.25 ["), "%s", buf[0]);
    for (int i = 0; i < 2; i++)
        close(fds[i]);
}

/*
 * One request on an open connection fd (kept open: HTTP/1.1 keep-alive),
 * with an X-Forwarded-For header (NULL: none); the reply read to the end of
 * its Content-Length.  Its status, 0 when the server closed first.
 */
static int keep_request(int fd, const char *path, const char *forwarded)
{
    char req[512], buf[1 << 16] = "";
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\n%s%s%s\r\n", path,
                     forwarded ? "X-Forwarded-For: " : "", forwarded ? forwarded : "", forwarded ? "\r\n" : "");
    if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n || !wait_for(fd, "\r\n\r\n", 3000, buf, sizeof buf))
        return 0;
    size_t length = 0, head = (size_t)(strstr(buf, "\r\n\r\n") + 4 - buf);
    const char *cl = strstr(buf, "Content-Length: ");
    if (cl)
        length = strtoul(cl + 16, NULL, 10);
    for (double end = cu_now() + 3; strlen(buf) < head + length && cu_now() < end;) {
        size_t got = strlen(buf);
        ssize_t r = recv(fd, buf + got, sizeof buf - got - 1, 0);
        if (r <= 0)
            break;
        buf[got + (size_t)r] = '\0';
    }
    int status = 0;
    sscanf(buf, "HTTP/1.%*d %d", &status);
    return status;
}

/* Whether the server closed fd (its accept refused it): EOF or a reset within timeout_ms. */
static bool closed_by_server(int fd, int timeout_ms)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    char c;
    return poll(&p, 1, timeout_ms) == 1 && recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

/*
 * Four addresses each holding --per-ip connections filled the table
 * (--per-ip 64 of --max-connections 256; here 4 of 16): a fifth was kept
 * out.  Each now gets its fair share of what is free, and the fifth's page
 * loads.
 */
Test(web, four_addresses_cannot_keep_a_fifth_out)
{
    CU_REQUIRE_DB();
    const char *extra[] = { "--max-connections", "16", "--per-ip", "4", NULL };
    start_web(extra);
    int fds[16], refused = 0;
    char from[32];
    for (int i = 0; i < 16; i++) {
        snprintf(from, sizeof from, "127.0.10.%d", i / 4 + 1);
        fds[i] = dial_from(from);
    }
    cu_sleep_ms(300);                /* every accept decided */
    for (int i = 0; i < 16; i++)
        refused += closed_by_server(fds[i], 0);
    cr_assert_gt(refused, 0, "four addresses held all 16 connections");
    Reply r = http_from("127.0.10.5", "GET", "/static/style.css", NULL, NULL);
    cr_assert_eq(r.status, 200, "a fifth address was kept out");
    reply_free(&r);
    for (int i = 0; i < 16; i++)
        close(fds[i]);
}

/*
 * Behind --trusted-proxy every connection comes from the proxy: they are
 * counted under the client its X-Forwarded-For names (its last hop), not
 * under the proxy's one share; an IPv6 client by its /64 (its many
 * addresses hold one share), and one over its share is answered 503.
 */
Test(web, behind_the_proxy_each_client_and_each_64_has_its_share)
{
    CU_REQUIRE_DB();
    const char *extra[] = { "--max-connections", "16", "--per-ip", "4", "--trusted-proxy", "127.0.11.1", NULL };
    start_web(extra);
    int fds[7];
    char client[64];
    for (int i = 0; i < 6; i++) {
        fds[i] = dial_from("127.0.11.1");
        snprintf(client, sizeof client, "192.0.2.%d", i + 1);
        cr_assert_eq(keep_request(fds[i], "/static/style.css", client), 200,
                     "client %d behind the proxy was refused: all share the proxy's --per-ip", i + 1);
    }
    for (int i = 0; i < 6; i++)
        close(fds[i]);
    cu_sleep_ms(200);                /* the server sees them closed */
    int ok = 0;
    for (int i = 0; i < 6; i++) {
        fds[i] = dial_from("127.0.11.1");
        snprintf(client, sizeof client, "198.51.100.7, 2001:db8:0:1::%x", i + 1);
        int status = keep_request(fds[i], "/static/style.css", client);
        cr_assert(status == 200 || status == 503, "status %d", status);
        ok += status == 200;
    }
    cr_assert_eq(ok, 4, "six addresses of one /64 held %d connections over --per-ip 4", ok);
    fds[6] = dial_from("127.0.11.1");
    cr_assert_eq(keep_request(fds[6], "/static/style.css", "2001:db8:0:2::1"), 200, "another /64 is another client");
    for (int i = 0; i < 7; i++)
        close(fds[i]);
}

/* An event stream's reply head from `from`: its status (0: none within 2 s); fd is left open (the stream). */
static int open_stream(const char *from, int *fd)
{
    char buf[4096] = "";
    *fd = dial_from(from);
    const char req[] = "GET /events HTTP/1.1\r\nHost: x\r\n\r\n";
    int status = 0;
    if (send(*fd, req, sizeof req - 1, MSG_NOSIGNAL) == (ssize_t)(sizeof req - 1) &&
        wait_for(*fd, "\r\n\r\n", 2000, buf, sizeof buf))
        sscanf(buf, "HTTP/1.%*d %d", &status);
    return status;
}

/*
 * Event streams are bounded apart: --streams-per-ip an address, --max-streams
 * in all (at most half of --max-connections), and beyond either a stream is
 * refused (503) while pages still load.
 */
Test(web, event_streams_beyond_their_bounds_are_refused_while_pages_load)
{
    CU_REQUIRE_DB();
    const char *extra[] = { "--max-connections", "16", "--per-ip", "8", "--max-streams", "4", "--streams-per-ip", "2",
                            NULL };
    start_web(extra);
    int fds[6];
    cr_assert_eq(open_stream("127.0.12.1", &fds[0]), 200);
    cr_assert_eq(open_stream("127.0.12.1", &fds[1]), 200);
    cr_assert_eq(open_stream("127.0.12.1", &fds[2]), 503, "a third stream of one address over --streams-per-ip 2");
    cr_assert_eq(open_stream("127.0.12.2", &fds[3]), 200);
    cr_assert_eq(open_stream("127.0.12.2", &fds[4]), 200);
    cr_assert_eq(open_stream("127.0.12.3", &fds[5]), 503, "over --max-streams 4 in all");
    Reply r = http_from("127.0.12.3", "GET", "/", NULL, NULL);
    cr_assert_eq(r.status, 200, "pages load while the streams are full");
    reply_free(&r);
    for (int i = 0; i < 6; i++)
        close(fds[i]);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s/xqf-web' --db '%s' --max-connections 16 --max-streams 9 2>/dev/null", XQF_BIN,
             cu_fx.db);
    int st = system(cmd);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "streams over half the table must be refused at start");
}

/* A self-signed certificate and its key (mode 0600) in the test's directory (skips without openssl). */
static void make_certificate(char crt[256], char key[256])
{
    if (system("command -v openssl >/dev/null") != 0)
        cr_skip("openssl (to make a certificate and speak TLS) is not installed");
    char cmd[2048];
    snprintf(crt, 256, "%s/web.crt", cu_fx.dir);
    snprintf(key, 256, "%s/web.key", cu_fx.dir);
    snprintf(cmd, sizeof cmd, "openssl req -x509 -newkey rsa:2048 -nodes -keyout '%s' -out '%s' -days 1 "
                              "-subj /CN=localhost 2>/dev/null && chmod 600 '%s'", key, crt, key);
    cr_assert_eq(system(cmd), 0);
}

Test(web, tls_with_a_certificate)
{
    CU_REQUIRE_DB();
    char cmd[2048], crt[256], key[256];
    make_certificate(crt, key);
    const char *extra[] = { "--listen", "0.0.0.0", "--cert", crt, "--key", key, NULL };
    start_web(extra);                /* a non-loopback address is fine with TLS */
    snprintf(cmd, sizeof cmd, "printf 'GET /runs HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n' | "
                              "timeout 10 openssl s_client -quiet -connect 127.0.0.1:%d 2>/dev/null | head -20", cu_fx.port);
    FILE *p = popen(cmd, "r");
    char line[256] = "";
    cr_assert(p);
    cr_assert(fgets(line, sizeof line, p));
    cr_assert(strncmp(line, "HTTP/1.1 200", 12) == 0, "over TLS: %s", line);
    bool hsts = false;
    char head[256];
    while (fgets(head, sizeof head, p))
        hsts = hsts || strncmp(head, "Strict-Transport-Security: max-age=", 35) == 0;
    pclose(p);
    cr_assert(hsts, "no HSTS header over TLS");
    Reply r = http("GET", "/runs", NULL, NULL);
    cr_assert_neq(r.status, 200, "plain HTTP on the TLS port");
    reply_free(&r);
}

/*
 * A TLS key that group or others may read is refused at start (status 1,
 * the file and the fix named), before the database is even tried: keys.c's
 * rule for every secret key file of the project.
 */
Test(web, a_tls_key_others_may_read_is_refused)
{
    CU_REQUIRE_DB();
    char cmd[2048], crt[256], key[256], out[1024];
    make_certificate(crt, key);
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "chmod %s '%s' && '%s/xqf-web' --db 'host=/nonexistent' --cert '%s' --key '%s' "
                                  "--port 1 2>&1; echo status $?", i ? "604" : "640", key, XQF_BIN, crt, key);
        cr_assert_eq(cu_sh(out, sizeof out, cmd, cu_fx.logfile), 0);
        cr_assert(strstr(out, "status 1\n"), "%s", out);
        cr_assert(strstr(out, i ? "(mode 0604)" : "(mode 0640)") && strstr(out, "a secret key that others may read") &&
                  strstr(out, "chmod 600"), "%s", out);
        cr_assert_null(strstr(out, "database"), "the key is checked first: %s", out);
    }
}

Test(web, spsa_from_the_form_and_its_page)
{
    CU_REQUIRE_DB();
    add_user("ada", "admin", "adminpass1");
    start_web(NULL);
    char cookie[128], csrf[128], form[512];
    login("ada", "adminpass1", cookie, csrf);
    int64_t before = count_runs();
    snprintf(form, sizeof form, "csrf=%s&name=s&params=RookMg%%2CNoSuch&pairs=0&alpha=0.602&gamma=0.101"
                                "&a_ratio=0.1&tc=10%%2B&nodes=&pairs_per_task=2&priority=0", csrf);
    Reply r = http("POST", "/new/spsa", cookie, form);
    cr_assert_eq(r.status, 400);
    cr_assert(strstr(r.body, "id=\"err-params\"") && strstr(r.body, "unknown parameter &#39;NoSuch&#39;"));
    cr_assert(strstr(r.body, "id=\"err-pairs\"") && strstr(r.body, "id=\"err-tc\""));
    reply_free(&r);
    cr_assert_eq(count_runs(), before);
    snprintf(form, sizeof form, "csrf=%s&name=s&params=RookMg%%2CHorseMg&pairs=50&alpha=0.602&gamma=0.101"
                                "&a_ratio=0.1&tc=&nodes=500&pairs_per_task=2&priority=0", csrf);
    r = http("POST", "/new/spsa", cookie, form);
    cr_assert_eq(r.status, 303, "an admin's SPSA run: %d", r.status);
    int64_t id = strtoll(strstr(r.head, "Location: /runs/") + 16, NULL, 10);
    reply_free(&r);
    StoreRun run;
    load(id, &run);
    cr_assert_str_eq(run.state, "active", "an admin's run starts at once");
    cr_assert_str_eq(run.kind, "spsa");
    char path[64];
    snprintf(path, sizeof path, "/runs/%" PRId64, id);
    r = http("GET", path, NULL, NULL);
    cr_assert_eq(r.status, 200);
    char cell[64], line[64];   /* the start value: the engine's default */
    snprintf(cell, sizeof cell, "<td>RookMg</td><td>%d</td>", params_find("RookMg")->def);
    snprintf(line, sizeof line, "RookMg = %d", params_find("RookMg")->def);
    cr_assert(strstr(r.body, cell) && strstr(r.body, "<td>HorseMg</td>"), "the parameter table");
    cr_assert(strstr(r.body, "<textarea id=\"tuned\"") && strstr(r.body, line), "the tuned values");
    cr_assert(strstr(r.body, "id=\"theta-1\""), "a chart per parameter");
    cr_assert(strstr(r.body, "\"theta\":[{\"name\":\"RookMg\""), "the chart data");
    cr_assert(strstr(r.body, "/report\">The run's report page</a>"), "a link to the report");
    reply_free(&r);
    /* the download is xqf-tune export's file, byte for byte: the run service's one export */
    snprintf(path, sizeof path, "/runs/%" PRId64 "/export", id);
    r = http("GET", path, NULL, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.head, "attachment; filename=\"run-"), "a file to save: %s", r.head);
    char cmd[1024], exported[8192];
    snprintf(cmd, sizeof cmd, "'%s/xqf-tune' export %" PRId64 " --db '%s' 2>&1", XQF_BIN, id, cu_fx.db);
    FILE *pipe = popen(cmd, "r");
    cr_assert(pipe);
    size_t got = fread(exported, 1, sizeof exported - 1, pipe);
    exported[got] = '\0';
    cr_assert_eq(WEXITSTATUS(pclose(pipe)), 0, "%s", exported);
    cr_assert(strstr(r.body, line) && strlen(r.body) == got && memcmp(r.body, exported, got) == 0,
              "the web's export is xqf-tune's:\n%s\n---\n%s", r.body, exported);
    reply_free(&r);
    cr_assert_eq(status_of("GET", "/runs/999999/export", NULL, NULL), 404);
    snprintf(path, sizeof path, "/runs/%" PRId64 "/report", id);
    r = http("GET", path, NULL, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "Generated by xqf-tune report") && strstr(r.body, "RookMg"), "the static report");
    reply_free(&r);
    cr_assert_eq(status_of("GET", "/runs/99999/report", NULL, NULL), 404);
}

/* The runs list tells what an unnamed run tests, and an SPSA run shows no Elo (theta+ against theta- is none). */
Test(web, runs_list_titles_unnamed_runs_and_no_spsa_elo)
{
    CU_REQUIRE_DB();
    add_user("ada", "admin", "adminpass1");
    start_web(NULL);
    char cookie[128], csrf[128], form[512];
    login("ada", "adminpass1", cookie, csrf);
    snprintf(form, sizeof form, "csrf=%s&name=&params=RookMg&pairs=50&alpha=0.602&gamma=0.101"
                                "&a_ratio=0.1&tc=&nodes=700&pairs_per_task=2&priority=0", csrf);
    Reply r = http("POST", "/new/spsa", cookie, form);
    cr_assert_eq(r.status, 303, "%d %s", r.status, r.body);
    int64_t id = strtoll(strstr(r.head, "Location: /runs/") + 16, NULL, 10);
    reply_free(&r);
    r = http("GET", "/", NULL, NULL);
    cr_assert_eq(r.status, 200);
    char row[128];
    snprintf(row, sizeof row, "<tr data-run=\"%" PRId64 "\">", id);
    const char *at = strstr(r.body, row);
    cr_assert(at, "the run is listed: %s", r.body);
    const char *end = strstr(at, "</tr>");
    cr_assert(end);
    char *line = strndup(at, (size_t)(end - at));
    cr_assert(strstr(line, "<span class=\"muted\">tune, 700 nodes</span>"), "what it tests: %s", line);
    cr_assert_null(strstr(line, "(unnamed)"), "%s", line);
    cr_assert(strstr(line, "<td data-k=\"elo\">-</td>"), "no Elo of theta+ against theta-: %s", line);
    free(line);
    reply_free(&r);
}

/* The engines page lists the records; an admin adds one with xqf-tune engine add's rules, as the web's role. */
Test(web, engines_page_and_an_admin_adds_one)
{
    CU_REQUIRE_DB();
    add_user("ada", "admin", "adminpass1");
    add_user("tess", "tester", "testerpass1");
    start_web(NULL);
    Reply r = http("GET", "/engines", NULL, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "<a href=\"/engines/xqf\">xqf</a>"), "ours is the first record: %s", r.body);
    cr_assert_null(strstr(r.body, "action=\"/engines\""), "a visitor sees no form");
    reply_free(&r);
    r = http("GET", "/engines/xqf", NULL, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "<th>Build</th><td>CMake target xqf-engine</td>") &&
              strstr(r.body, "<th>Net option</th><td>EvalFile</td>"), "%s", r.body);
    reply_free(&r);
    cr_assert_eq(status_of("GET", "/engines/nosuch", NULL, NULL), 404);
    cr_assert_eq(status_of("GET", "/engines/..", NULL, NULL), 400);

    char cookie[128], csrf[128], form[1024];
    login("tess", "testerpass1", cookie, csrf);
    snprintf(form, sizeof form, "csrf=%s&name=pika&repo=https%%3A%%2F%%2Fexample.org%%2Fpika.git", csrf);
    cr_assert_eq(status_of("POST", "/engines", cookie, form), 403, "a tester may not add engines");

    login("ada", "adminpass1", cookie, csrf);
    r = http("GET", "/engines", cookie, NULL);
    cr_assert(strstr(r.body, "action=\"/engines\"") && strstr(r.body, "value=\"make -j EXE=&lt;out&gt;\""),
              "the admin's form, with the defaults of a new engine");
    reply_free(&r);
    /* a bench regex without a group for the number: the field's message, nothing added */
    snprintf(form, sizeof form, "csrf=%s&name=pika&repo=https%%3A%%2F%%2Fexample.org%%2Fpika.git"
                                "&build=make+-j+EXE%%3D%%3Cout%%3E&binary=%%3Cout%%3E&bench=%%3Cbinary%%3E+bench"
                                "&bench_nodes=Nodes&bench_nps=Nodes%%2Fsecond+%%3A+%%28%%5B0-9%%5D%%2B%%29"
                                "&protocol=uci&ranks=0&letters=nb&hash_option=Hash&threads_option=Threads"
                                "&net_option=EvalFile&needs_net=1&ref_nps=800000"
                                "&init=setoption+name+UCI_Variant+value+xiangqi%%3B+isready", csrf);
    r = http("POST", "/engines", cookie, form);
    cr_assert_eq(r.status, 400, "%d", r.status);
    cr_assert(strstr(r.body, "id=\"err-bench_nodes\""), "the regex's field is named: %s", r.body);
    cr_assert(strstr(r.body, "value=\"pika\""), "the values given are kept");
    reply_free(&r);
    EngineRecord e;
    cr_assert_eq(store_engine_load(cu_fx.store, "pika", &e), 0, "nothing added");
    char *nodes = strstr(form, "&bench_nodes=Nodes&");
    cr_assert(nodes);
    char fixed[1024];
    snprintf(fixed, sizeof fixed, "%.*s&bench_nodes=Nodes+searched+%%3A+%%28%%5B0-9%%5D%%2B%%29&%s",
             (int)(nodes - form), form, nodes + strlen("&bench_nodes=Nodes&"));
    r = http("POST", "/engines", cookie, fixed);
    cr_assert_eq(r.status, 200, "%d %s", r.status, r.body);
    cr_assert(strstr(r.body, "Added the engine pika."), "%s", r.body);
    reply_free(&r);
    cr_assert_eq(store_engine_load(cu_fx.store, "pika", &e), 1, "added, by the web's role");
    cr_assert_str_eq(e.added_by, "ada");
    cr_assert(e.needs_net && e.ref_nps == 800000 && e.protocol == ENGINE_UCI);
    cr_assert_eq(e.init_count, 2);
    cr_assert_str_eq(e.init[0], "setoption name UCI_Variant value xiangqi");
    cr_assert_str_eq(e.init[1], "isready");
    r = http("POST", "/engines", cookie, fixed);
    cr_assert_eq(r.status, 400);
    cr_assert(strstr(r.body, "an engine named pika exists"), "%s", r.body);
    reply_free(&r);
    r = http("GET", "/engines/pika", NULL, NULL);
    cr_assert(r.status == 200 && strstr(r.body, "setoption name UCI_Variant value xiangqi; isready"), "%s", r.body);
    reply_free(&r);
    /* the events log: the engine added once, by ada; the two refusals wrote nothing */
    r = http("GET", "/log?of=engine", NULL, NULL);
    cr_assert(r.status == 200 && strstr(r.body, "<td>ada</td><td>engine</td><td>engine add</td><td>pika</td>") &&
              strstr(r.body, "<p>1 event,"), "%s", r.body);
    reply_free(&r);
}

/* Accounts made and replaced, from either front end, each write their line of the events log; a refusal none. */
Test(web, accounts_are_in_the_events_log)
{
    CU_REQUIRE_DB();
    add_user("ada", "admin", "adminpass1");
    start_web(NULL);
    char cookie[128], csrf[128], form[512], cmd[1024];
    login("ada", "adminpass1", cookie, csrf);
    snprintf(form, sizeof form, "csrf=%s&name=tess&role=tester&password=testerpass1", csrf);
    cr_assert_eq(status_of("POST", "/users", cookie, form), 200);
    cr_assert_eq(status_of("POST", "/users", cookie, form), 400, "tess exists");
    snprintf(cmd, sizeof cmd, "echo 'otherpass22' | '%s/xqf-tune' user add tess --role tester --db '%s' >/dev/null 2>&1",
             XQF_BIN, cu_fx.db);
    cr_assert_neq(system(cmd), 0, "tess exists, and xqf-tune says so");
    snprintf(cmd, sizeof cmd, "echo 'otherpass22' | '%s/xqf-tune' user add tess --role viewer --replace --db '%s' "
             ">/dev/null 2>>'%s'", XQF_BIN, cu_fx.db, cu_fx.logfile);
    cr_assert_eq(system(cmd), 0);
    Reply r = http("GET", "/log?of=user", NULL, NULL);
    cr_assert_eq(r.status, 200);
    const char *replaced = strstr(r.body, "<td>user</td><td>user replace</td><td>tess (viewer): its password set"),
               *by_web = strstr(r.body, "<td>ada</td><td>user</td><td>user add</td><td>tess (tester)</td>"),
               *by_cli = strstr(r.body, "<td>user</td><td>user add</td><td>ada (admin)</td>");
    cr_assert(replaced && by_web && by_cli && replaced < by_web && by_web < by_cli && strstr(r.body, "<p>3 events,"),
              "three rows, newest first, none for the two refusals: %s", r.body);
    cr_assert(strstr(r.body, "<td>xqf-tune:"), "xqf-tune's operator is who: %s", r.body);
    reply_free(&r);
}

Test(web, an_expired_session_is_refused)
{
    CU_REQUIRE_DB();
    int64_t id = cu_sprt(cu_fx.store, "NullR=2", 4, 100, 300, 0, 5);
    add_user("ada", "admin", "adminpass1");
    start_web(NULL);
    char cookie[128], csrf[128], form[256], path[64], cmd[1024];
    login("ada", "adminpass1", cookie, csrf);
    snprintf(cmd, sizeof cmd, "psql -q '%s' -c \"UPDATE web_sessions SET expires_at = now() - interval '1 s'\" "
                              ">/dev/null", cu_fx.db);
    cr_assert_eq(system(cmd), 0);
    snprintf(path, sizeof path, "/runs/%" PRId64 "/stop", id);
    snprintf(form, sizeof form, "csrf=%s", csrf);
    Reply r = http("POST", path, cookie, form);
    cr_assert_eq(r.status, 403);
    cr_assert(strstr(r.body, "expired"));
    reply_free(&r);
    StoreRun run;
    load(id, &run);
    cr_assert_str_eq(run.state, "active");
}

Test(web, an_admin_creates_accounts)
{
    CU_REQUIRE_DB();
    add_user("ada", "admin", "adminpass1");
    add_user("tess", "tester", "testpass1");
    start_web(NULL);
    char cookie[128], csrf[128], form[512];
    login("ada", "adminpass1", cookie, csrf);
    Reply r = http("GET", "/users", cookie, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "action=\"/users\"") && strstr(r.body, "href=\"/users\""), "the form and the link");
    reply_free(&r);

    /* bad values: a message next to each field, nothing created */
    snprintf(form, sizeof form, "csrf=%s&name=bad%%20name&role=king&password=short", csrf);
    r = http("POST", "/users", cookie, form);
    cr_assert_eq(r.status, 400);
    cr_assert(strstr(r.body, "id=\"err-name\"") && strstr(r.body, "id=\"err-role\"") &&
              strstr(r.body, "id=\"err-password\""), "a message per field: %s", r.body);
    reply_free(&r);
    StoreWebUser u;
    cr_assert_eq(store_web_user_get(cu_fx.store, "bad name", &u), 0);

    /* a tester may not, nor a form without the token */
    char tcookie[128], tcsrf[128];
    login("tess", "testpass1", tcookie, tcsrf);
    snprintf(form, sizeof form, "csrf=%s&name=newbie&role=admin&password=newbiepass", tcsrf);
    cr_assert_eq(status_of("GET", "/users", tcookie, NULL), 403);
    cr_assert_eq(status_of("POST", "/users", tcookie, form), 403);
    cr_assert_eq(status_of("POST", "/users", cookie, "name=newbie&role=admin&password=newbiepass"), 403);
    cr_assert_eq(store_web_user_get(cu_fx.store, "newbie", &u), 0, "nothing created by the refused posts");

    /* the admin creates one; it logs in with its role; a second with the same name is refused */
    snprintf(form, sizeof form, "csrf=%s&name=newbie&role=tester&password=newbiepass", csrf);
    r = http("POST", "/users", cookie, form);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "Created the account newbie (tester)"), "%s", r.body);
    reply_free(&r);
    cr_assert_eq(store_web_user_get(cu_fx.store, "newbie", &u), 1);
    cr_assert_str_eq(u.role, "tester");
    char ncookie[128], ncsrf[128];
    login("newbie", "newbiepass", ncookie, ncsrf);
    cr_assert_eq(status_of("GET", "/new/sprt", ncookie, NULL), 200, "the new tester may create runs");
    snprintf(form, sizeof form, "csrf=%s&name=newbie&role=admin&password=otherpass1", csrf);
    r = http("POST", "/users", cookie, form);
    cr_assert_eq(r.status, 400);
    cr_assert(strstr(r.body, "an account named newbie exists"));
    reply_free(&r);
    cr_assert_eq(store_web_user_get(cu_fx.store, "newbie", &u), 1);
    cr_assert_str_eq(u.role, "tester", "the existing account is unchanged");
}

Test(web, games_purge_and_throughput_from_the_run_page)
{
    CU_REQUIRE_DB();
    int64_t id = cu_sprt(cu_fx.store, "NullR=2", 4, 100, 300, 0, 5);
    add_user("ada", "admin", "adminpass1");
    add_user("vic", "viewer", "viewpass1");
    start_web(NULL);
    char cookie[128], csrf[128], path[96], form[256];

    /* the run's games as PGN (none played yet), its filters checked */
    snprintf(path, sizeof path, "/runs/%" PRId64, id);
    Reply r = http("GET", path, NULL, NULL);
    snprintf(form, sizeof form, "href=\"/runs/%" PRId64 "/pgn\"", id);
    cr_assert(strstr(r.body, form), "the run page links its games");
    reply_free(&r);
    snprintf(path, sizeof path, "/runs/%" PRId64 "/pgn", id);
    r = http("GET", path, NULL, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.head, "application/vnd.chess-pgn"), "%s", r.head);
    cr_assert_str_eq(r.body, "", "no game played, no game written");
    reply_free(&r);
    snprintf(path, sizeof path, "/runs/%" PRId64 "/pgn?worker=nobody", id);
    cr_assert_eq(status_of("GET", path, NULL, NULL), 404);
    snprintf(path, sizeof path, "/runs/%" PRId64 "/pgn?task=999999", id);
    cr_assert_eq(status_of("GET", path, NULL, NULL), 404);
    snprintf(path, sizeof path, "/runs/%" PRId64 "/pgn?task=x", id);
    cr_assert_eq(status_of("GET", path, NULL, NULL), 404);
    cr_assert_eq(status_of("GET", "/runs/999999/pgn", NULL, NULL), 404);

    /* purge: a viewer is refused; an admin gets the reason for a missing or unknown worker, nothing changes */
    login("vic", "viewpass1", cookie, csrf);
    snprintf(path, sizeof path, "/runs/%" PRId64 "/purge", id);
    snprintf(form, sizeof form, "csrf=%s&worker=w1", csrf);
    cr_assert_eq(status_of("POST", path, cookie, form), 403);
    login("ada", "adminpass1", cookie, csrf);
    snprintf(form, sizeof form, "csrf=%s", csrf);
    r = http("POST", path, cookie, form);
    cr_assert_eq(r.status, 400);
    cr_assert(strstr(r.body, "give the name of the worker"), "%s", r.body);
    reply_free(&r);
    snprintf(form, sizeof form, "csrf=%s&worker=nobody", csrf);
    r = http("POST", path, cookie, form);
    cr_assert_eq(r.status, 400);
    cr_assert(strstr(r.body, "no worker"), "%s", r.body);
    reply_free(&r);
    StoreRun run;
    load(id, &run);
    cr_assert_str_eq(run.state, "active");

    /* throughput from the modify form: recorded; out of range refused and nothing changed */
    snprintf(path, sizeof path, "/runs/%" PRId64 "/modify", id);
    snprintf(form, sizeof form, "csrf=%s&priority=0&max_pairs=300&pairs_per_task=4&throughput=5000", csrf);
    cr_assert_eq(status_of("POST", path, cookie, form), 400);
    load(id, &run);
    cr_assert_eq(run.throughput, 100);
    snprintf(form, sizeof form, "csrf=%s&priority=0&max_pairs=300&pairs_per_task=4&throughput=50", csrf);
    cr_assert_eq(status_of("POST", path, cookie, form), 303);
    load(id, &run);
    cr_assert_eq(run.throughput, 50);
}

/*
 * The contributors page: CPU-hours are the union of a machine's lease
 * spans (overlaps once) times its concurrency, exactly; users sum their
 * machines; the faults flag is the machines page's rule; names escaped;
 * a bad ?by refused.
 */
Test(web, contributors_by_machine_and_by_user)
{
    CU_REQUIRE_DB();
    int64_t id = cu_sprt(cu_fx.store, "NullR=2", 4, 100, 300, 0, 5);
    char cmd[4096];
    /*
     * alice's box-a, concurrency 4: leases over [0, 2 h], [1 h, 3 h] and
     * [5 h, 6 h] of a day: a union of 4 h, 16 CPU-hours; 10 pairs, 5 crashes
     * (faults). alice's <b>x</b>, concurrency 2: [0, 30 min], 1 CPU-hour, 3 pairs.
     * A keyless worker: 2 pairs over [0, 6 min], concurrency 1: 0.1.
     */
    snprintf(cmd, sizeof cmd,
             "psql -q '%s' -c \"INSERT INTO workers (name, cores, concurrency, auth_name, last_seen) VALUES "
             "('box-a', 8, 4, 'alice', '2026-01-01'), ('<b>x</b>', 2, 2, 'alice', '2026-01-01'), "
             "('loose', 1, 1, NULL, '2026-01-01');"
             "INSERT INTO tasks (run_id, first_pair, n_pairs, state, params0, params1, worker_id) "
             "  SELECT %" PRId64 ", 10 * row_number() OVER (ORDER BY id), 4, 'done', '', '', id FROM workers;"
             "INSERT INTO results (task_id, lease_token, worker_id, base_pairs, pairs, reasons, created_at, updated_at) "
             "  SELECT t.id, v.token, w.id, 0, v.pairs, v.reasons, "
             "         '2026-01-01'::timestamptz + v.s * interval '1 minute', "
             "         '2026-01-01'::timestamptz + v.e * interval '1 minute' "
             "  FROM (VALUES ('box-a', 1, 4, '{0,0,0,0,0,0,0,0,0,0,0,0,5}'::bigint[], 0, 120), "
             "               ('box-a', 2, 4, '{}'::bigint[], 60, 180), ('box-a', 3, 2, '{}'::bigint[], 300, 360), "
             "               ('<b>x</b>', 1, 3, '{}'::bigint[], 0, 30), ('loose', 1, 2, '{}'::bigint[], 0, 6)) "
             "       v(name, token, pairs, reasons, s, e) "
             "  JOIN workers w ON w.name = v.name JOIN tasks t ON t.worker_id = w.id\" >/dev/null 2>>'%s'",
             cu_fx.db, id, cu_fx.logfile);
    cr_assert_eq(system(cmd), 0, "seeding the workers");
    start_web(NULL);
    Reply r = http("GET", "/contributors", NULL, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "<table class=\"list sortable\">"), "a sortable list: %s", r.body);
    cr_assert(strstr(r.body, "<th>Machine</th><th>User</th><th class=\"num\">Cores</th><th class=\"num\">CPU-hours</th>"
                             "<th class=\"num\">Games</th><th class=\"num\">Pairs</th><th class=\"num\">Tasks</th>"
                             "<th class=\"num\">Crashes</th><th class=\"num\">Time losses</th><th>Last seen (UTC)</th>"
                             "<th>Flags</th>"),
              "the columns: %s", r.body);
    cr_assert(strstr(r.body, "<td>box-a</td><td>alice</td><td class=\"num\">4</td><td class=\"num\">16.00</td>"
                             "<td class=\"num\">20</td><td class=\"num\">10</td><td class=\"num\">1</td>"
                             "<td class=\"num\">5</td><td class=\"num\">0</td><td>2026-01-01 06:00</td>"
                             "<td class=\"error\">faults</td>"),
              "box-a: 4 h of leases (overlap once) x 4 cores, flagged by xqf_faults_flag(20, 5, 0) = %d: %s",
              xqf_faults_flag(20, 5, 0), r.body);
    cr_assert(strstr(r.body, "<td>&lt;b&gt;x&lt;/b&gt;</td><td>alice</td><td class=\"num\">2</td>"
                             "<td class=\"num\">1.00</td>") && !strstr(r.body, "<b>x</b>"),
              "the name escaped, 30 min x 2 cores: %s", r.body);
    cr_assert(strstr(r.body, "<td>loose</td><td>-</td><td class=\"num\">1</td><td class=\"num\">0.10</td>"),
              "a keyless machine: %s", r.body);
    /* sorted by CPU-hours, most first */
    cr_assert(strstr(r.body, "box-a") < strstr(r.body, "&lt;b&gt;x") && strstr(r.body, "&lt;b&gt;x") <
              strstr(r.body, "<td>loose</td>"), "most CPU-hours first: %s", r.body);
    reply_free(&r);

    r = http("GET", "/contributors?by=user", NULL, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "<td>alice</td><td class=\"num\">2</td><td class=\"num\">17.00</td>"
                             "<td class=\"num\">26</td><td class=\"num\">13</td><td class=\"num\">2</td>"
                             "<td class=\"num\">5</td>"),
              "alice's two machines summed: %s", r.body);
    cr_assert(strstr(r.body, "<td>(no key)</td><td class=\"num\">1</td><td class=\"num\">0.10</td>"),
              "the keyless machines: %s", r.body);
    reply_free(&r);
    cr_assert_eq(status_of("GET", "/contributors?by=cpu", NULL, NULL), 400);

    /* the figures are made again once they are a minute old, not at every view */
    snprintf(cmd, sizeof cmd,
             "psql -q '%s' -c \"INSERT INTO workers (name, cores, concurrency) VALUES ('late', 1, 1);"
             "INSERT INTO results (task_id, lease_token, worker_id, base_pairs, pairs) "
             "  SELECT t.id, 9, w.id, 0, 1 FROM tasks t, workers w WHERE w.name = 'late' LIMIT 1\" "
             ">/dev/null 2>>'%s'", cu_fx.db, cu_fx.logfile);
    cr_assert_eq(system(cmd), 0);
    r = http("GET", "/contributors", NULL, NULL);
    cr_assert(r.status == 200 && !strstr(r.body, "<td>late</td>"), "within the minute, the figures made before");
    reply_free(&r);
    snprintf(cmd, sizeof cmd, "psql -q '%s' -c \"UPDATE contributors_made SET as_of = now() - interval '61 s'\" "
             ">/dev/null 2>>'%s'", cu_fx.db, cu_fx.logfile);
    cr_assert_eq(system(cmd), 0);
    r = http("GET", "/contributors", NULL, NULL);
    cr_assert(r.status == 200 && strstr(r.body, "<td>late</td>"), "a minute on, made again: %s", r.body);
    reply_free(&r);
}

Test(web, machines_show_speed_and_faults)
{
    CU_REQUIRE_DB();
    int64_t id = cu_sprt(cu_fx.store, "NullR=2", 4, 100, 300, 0, 5);
    char cmd[2048];
    /* a worker with a bench and the results of one lease: 6 pairs, 2 crashes, 1 time loss, 1 illegal move */
    snprintf(cmd, sizeof cmd,
             "psql -q '%s' -c \"INSERT INTO workers (name, cores, concurrency) VALUES ('box-7', 8, 4);"
             "INSERT INTO worker_builds (worker_id, sha256, bench_nodes, nps) "
             "  SELECT id, '', 2770588, 1234567 FROM workers WHERE name = 'box-7';"
             "INSERT INTO tasks (run_id, first_pair, n_pairs, state, params0, params1, worker_id) "
             "  SELECT %" PRId64 ", 0, 6, 'done', '', '', id FROM workers WHERE name = 'box-7';"
             "INSERT INTO results (task_id, lease_token, worker_id, base_pairs, pairs, reasons) "
             "  SELECT t.id, 1, w.id, 0, 6, '{0,0,0,0,0,0,0,0,0,1,1,0,2}' FROM tasks t, workers w "
             "  WHERE t.run_id = %" PRId64 " AND w.name = 'box-7' LIMIT 1\" >/dev/null 2>>'%s'", cu_fx.db, id, id, cu_fx.logfile);
    cr_assert_eq(system(cmd), 0, "seeding the worker");
    start_web(NULL);
    Reply r = http("GET", "/machines", NULL, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "<th>Nodes/s</th>") && strstr(r.body, "<th>Crashes</th>"), "the columns");
    cr_assert(strstr(r.body, "<td>box-7</td>"), "the worker: %s", r.body);
    cr_assert(strstr(r.body, "<td>1.23 M</td><td>0</td><td>6</td><td>2</td><td>1</td><td>1</td>"),
              "its speed, pairs, crashes, time losses and illegal moves: %s", r.body);
    reply_free(&r);
    /* the flag is the library's (xqf_faults_flag), at each side of its bounds */
    static const struct { const char *name; int64_t pairs, crashes, time_losses, illegal; } W[] = {
        { "f-crash3", 6, 3, 0, 0 }, { "f-crash4", 6, 4, 0, 0 }, { "f-time20", 10, 0, 3, 0 },
        { "f-time22", 11, 0, 3, 0 }, { "f-time10pc", 11, 0, 2, 0 }, { "f-illegal", 6, 0, 0, 1 },
    };
    int nw = (int)(sizeof W / sizeof W[0]);
    for (int i = 0; i < nw; i++) {
        snprintf(cmd, sizeof cmd,
                 "psql -q '%s' -c \"INSERT INTO workers (name, cores, concurrency) VALUES ('%s', 8, 4);"
                 "INSERT INTO tasks (run_id, first_pair, n_pairs, state, params0, params1, worker_id) "
                 "  SELECT %" PRId64 ", %d, %" PRId64 ", 'done', '', '', id FROM workers WHERE name = '%s';"
                 "INSERT INTO results (task_id, lease_token, worker_id, base_pairs, pairs, reasons) "
                 "  SELECT t.id, 1, w.id, 0, %" PRId64 ", '{0,0,0,0,0,0,0,0,0,%" PRId64 ",%" PRId64 ",0,%" PRId64 "}' "
                 "  FROM tasks t JOIN workers w ON w.id = t.worker_id WHERE w.name = '%s'\" >/dev/null 2>>'%s'",
                 cu_fx.db, W[i].name, id, 100 + 20 * i, W[i].pairs, W[i].name, W[i].pairs, W[i].time_losses,
                 W[i].illegal, W[i].crashes, W[i].name, cu_fx.logfile);
        cr_assert_eq(system(cmd), 0, "seeding %s", W[i].name);
    }
    r = http("GET", "/machines", NULL, NULL);
    cr_assert_eq(r.status, 200);
    bool some = false, none = false;
    for (int i = -1; i < nw; i++) {
        const char *name = i < 0 ? "box-7" : W[i].name;
        bool want = i < 0 ? xqf_faults_flag(12, 2, 1) : xqf_faults_flag(2 * W[i].pairs, W[i].crashes, W[i].time_losses);
        char td[64];
        snprintf(td, sizeof td, "<td>%s</td>", name);
        const char *row = strstr(r.body, td), *end = row ? strstr(row, "</tr>") : NULL;
        cr_assert(row && end, "%s's row: %s", name, r.body);
        const char *flag = strstr(row, ", faults</td>");
        cr_assert_eq(flag && flag < end, want, "%s: the page flags it %s the library", name, want ? "as" : "unlike");
        some |= want, none |= !want;
    }
    cr_assert(some && none, "both sides of the rule are seen");
    reply_free(&r);
    /* the run's page: its tasks by worker with the residual and the flag columns (xqf-tune show's) */
    char path[64];
    snprintf(path, sizeof path, "/runs/%" PRId64, id);
    r = http("GET", path, NULL, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "<th>Residual</th><th>Flag</th>") && strstr(r.body, "<td>box-7</td><td>1</td>"),
              "the worker's row: %s", r.body);
    reply_free(&r);
}

/* The runs list's progress bar of run id: its width, and the text after the bar up to the cell's end. */
static double listed_progress(const char *body, int64_t id, char *after, size_t size)
{
    char key[64];
    snprintf(key, sizeof key, "<tr data-run=\"%" PRId64 "\">", id);
    const char *row = strstr(body, key);
    cr_assert(row, "run %" PRId64 " listed: %s", id, body);
    const char *bar = strstr(row, "data-k=\"bar\" style=\"width:");
    cr_assert(bar, "its bar: %s", row);
    double width = strtod(bar + strlen("data-k=\"bar\" style=\"width:"), NULL);
    const char *rest = strstr(bar, "</div></div>") + strlen("</div></div>");
    size_t k = (size_t)(strstr(rest, "</td>") - rest);
    cr_assert(k < size);
    memcpy(after, rest, k);
    after[k] = '\0';
    return width;
}

Test(web, the_runs_list_shows_how_far_each_run_got)
{
    CU_REQUIRE_DB();
    /* stopped at 0 of 100000 pairs, passed at 250 of 1000, still playing at 300 of 1000 */
    static const struct { int64_t max_pairs, pairs; const char *state, *verdict; double width; } R[] = {
        { 100000, 0, "stopped", "stopped by ada", 0.0 },
        { 1000, 250, "finished", "H1 accepted", 25.0 },
        { 1000, 300, "active", "", 30.0 },
    };
    int64_t ids[3];
    for (int i = 0; i < 3; i++) {
        ids[i] = cu_sprt(cu_fx.store, "NullR=2", 4, R[i].max_pairs, 300, 0, 5);
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 "psql -q '%s' -c \"UPDATE runs SET pairs = %" PRId64 ", wins = %" PRId64 ", draws = %" PRId64
                 ", dd = %" PRId64 ", state = '%s', verdict = nullif('%s', '') WHERE id = %" PRId64 "\" >/dev/null 2>>'%s'",
                 cu_fx.db, R[i].pairs, R[i].pairs, R[i].pairs, R[i].pairs, R[i].state, R[i].verdict, ids[i],
                 cu_fx.logfile);
        cr_assert_eq(system(cmd), 0, "setting run %d", i);
    }
    start_web(NULL);
    Reply r = http("GET", "/runs?state=all", NULL, NULL);
    cr_assert_eq(r.status, 200);
    for (int i = 0; i < 3; i++) {
        char after[256], want[128];
        double width = listed_progress(r.body, ids[i], after, sizeof after);
        cr_assert_float_eq(width, R[i].width, 1e-9, "run %d: %.1f %% shown, %" PRId64 " of %" PRId64 " played", i,
                           width, R[i].pairs, R[i].max_pairs);
        snprintf(want, sizeof want, "<div class=\"verdict\">%s</div>", R[i].verdict);
        if (R[i].verdict[0])
            cr_assert_str_eq(after, want, "run %d's verdict by its bar", i);
        else
            cr_assert_str_eq(after, "", "an open run has no verdict yet");
    }
    reply_free(&r);
}

/* What xqf-tune prints for args on the line that starts with label, without the label. */
static void cli_line(const char *args, const char *label, char *line, size_t size)
{
    char cmd[2048], out[8192] = "";
    snprintf(cmd, sizeof cmd, "'%s/xqf-tune' %s --db '%s' 2>>'%s'", XQF_BIN, args, cu_fx.db, cu_fx.logfile);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    cr_assert_eq(WEXITSTATUS(pclose(p)), 0, "%s: %s", args, out);
    const char *m = strstr(out, label);
    cr_assert(m, "%s: no %s in %s", args, label, out);
    m += strlen(label);
    size_t k = strcspn(m, "\n");
    cr_assert(k < size);
    memcpy(line, m, k);
    line[k] = '\0';
}

/* The text of a page's "<td data-k=KEY>" cell. */
static void cell_of(const char *body, const char *key, char *text, size_t size)
{
    char open[64];
    snprintf(open, sizeof open, "<td data-k=\"%s\">", key);
    const char *m = strstr(body, open);
    cr_assert(m, "no %s cell: %s", key, body);
    m += strlen(open);
    size_t k = strcspn(m, "<");
    cr_assert(k < size);
    memcpy(text, m, k);
    text[k] = '\0';
}

Test(web, los_is_the_one_xqf_tune_show_prints)
{
    CU_REQUIRE_DB();
    /* W/D/L and pentanomial counts where the decisive-game approximation and the library's LOS differ */
    static const struct { int64_t pairs, w, d, l, penta[5]; } CASES[] = {
        { 100, 60, 110, 30, { 5, 10, 50, 25, 10 } },
        { 40, 20, 45, 15, { 4, 8, 13, 10, 5 } },
        { 0, 3, 1, 2, { 0, 0, 0, 0, 0 } },          /* no complete pair: W/D/L */
    };
    int64_t ids[3];
    for (int i = 0; i < 3; i++) {
        ids[i] = cu_sprt(cu_fx.store, "NullR=2", 4, 1000, 300, 0, 5);
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 "psql -q '%s' -c \"UPDATE runs SET pairs = %" PRId64 ", wins = %" PRId64 ", draws = %" PRId64
                 ", losses = %" PRId64 ", ll = %" PRId64 ", ld = %" PRId64 ", dd = %" PRId64 ", wd = %" PRId64
                 ", ww = %" PRId64 " WHERE id = %" PRId64 "\" >/dev/null 2>>'%s'",
                 cu_fx.db, CASES[i].pairs, CASES[i].w, CASES[i].d, CASES[i].l, CASES[i].penta[0], CASES[i].penta[1],
                 CASES[i].penta[2], CASES[i].penta[3], CASES[i].penta[4], ids[i], cu_fx.logfile);
        cr_assert_eq(system(cmd), 0, "setting the counts");
    }
    start_web(NULL);
    for (int i = 0; i < 3; i++) {
        char path[64], args[64], page[64], cli[64];
        snprintf(path, sizeof path, "/runs/%" PRId64, ids[i]);
        Reply r = http("GET", path, NULL, NULL);
        cr_assert_eq(r.status, 200);
        cell_of(r.body, "los", page, sizeof page);
        reply_free(&r);
        snprintf(args, sizeof args, "show %" PRId64, ids[i]);
        cli_line(args, "LOS: ", cli, sizeof cli);
        cr_assert_str_eq(page, cli, "run %d: the page's LOS against show's", i);
        cr_assert_str_neq(page, "-");
    }
}

/* xqf-tune's message for args (after "error: " and the option's "NAME: "), as the page escapes it. */
static void cli_message(const char *args, const char *option, char *html, size_t size)
{
    char cmd[2048], out[2048] = "";
    snprintf(cmd, sizeof cmd, "'%s/xqf-tune' %s --db '%s' 2>&1 >/dev/null", XQF_BIN, args, cu_fx.db);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    cr_assert_eq(WEXITSTATUS(pclose(p)), 2, "%s: %s", args, out);
    const char *m = strstr(out, "error: ");
    cr_assert(m, "%s", out);
    m += 7;
    if (option && strncmp(m, option, strlen(option)) == 0 && m[strlen(option)] == ':')
        m += strlen(option) + 2;
    size_t k = 0;
    for (; *m && *m != '\n' && k + 6 < size; m++)
        k += (size_t)snprintf(html + k, size - k, "%s", *m == '\'' ? "&#39;" : (char[2]){ *m, 0 });
    html[k] = '\0';
}

Test(web, a_test_of_git_refs_waits_for_its_builds)
{
    CU_REQUIRE_DB();
    add_user("tess", "tester", "testpass1");
    start_web(NULL);
    char cookie[128], csrf[128], form[1024], msg[1024];
    login("tess", "testpass1", cookie, csrf);
    int64_t before = count_runs();
    /* bad refs, and values xqf-tune refuses with the same words */
    snprintf(form, sizeof form, "csrf=%s&name=g&test=&base=&test_ref=a..b&base_ref=main%%3Ax&base_build=1"
                                "&elo0=2000&elo1=5&alpha=0.05&beta=0.05&max_pairs=100&tc=10%%2B&nodes="
                                "&pairs_per_task=300&priority=0", csrf);
    Reply r = http("POST", "/new/sprt", cookie, form);
    cr_assert_eq(r.status, 400);
    cr_assert(strstr(r.body, "id=\"err-test_ref\"") && strstr(r.body, "id=\"err-base_ref\""), "a message per ref");
    cr_assert(strstr(r.body, "value=\"a..b\""), "the refs given are kept");
    const struct { const char *args, *option; } same[] = {
        { "sprt new --test-ref a..b --base-ref HEAD --nodes 100", NULL },
        { "sprt new --elo0 2000 --test '' --base '' --nodes 100", "--elo0" },
        { "sprt new --tc 10+ --test '' --base ''", "--tc" },
        { "sprt new --pairs-per-task 300 --test NullR=2 --base '' --nodes 100", "--pairs-per-task" },
    };
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        cli_message(same[i].args, same[i].option, msg, sizeof msg);
        cr_assert(strstr(r.body, msg), "the form does not say what xqf-tune %s says: %s", same[i].args, msg);
    }
    reply_free(&r);
    snprintf(form, sizeof form, "csrf=%s&name=g&test=&base=&test_ref=topic&base_ref=main&elo0=3&elo1=1&alpha=0.05"
                                "&beta=0.05&max_pairs=100&tc=&nodes=300&pairs_per_task=8&priority=0", csrf);
    r = http("POST", "/new/sprt", cookie, form);
    cr_assert_eq(r.status, 400);
    cli_message("sprt new --elo0 3 --elo1 1 --test '' --base '' --nodes 100", "--elo1", msg, sizeof msg);
    cr_assert(strstr(r.body, "id=\"err-elo1\"") && strstr(r.body, msg), "%s", msg);
    reply_free(&r);
    /* an engine without a record: the field's message, xqf-tune's words */
    snprintf(form, sizeof form, "csrf=%s&name=g&test=&base=&test_ref=topic&base_ref=main&engine=nope&elo0=0"
                                "&elo1=5&alpha=0.05&beta=0.05&max_pairs=100&tc=&nodes=300&pairs_per_task=8&priority=0",
             csrf);
    r = http("POST", "/new/sprt", cookie, form);
    cr_assert_eq(r.status, 400, "%d", r.status);
    cli_message("sprt new --engine nope --test-ref topic --base-ref main --nodes 100", "--engine", msg, sizeof msg);
    cr_assert(strstr(r.body, "id=\"err-engine\"") && strstr(r.body, msg), "%s", msg);
    reply_free(&r);
    cr_assert_eq(count_runs(), before, "a bad form created a run");

    /* good refs: a tester's run waits for approval with its requests queued, nothing built, no task */
    snprintf(form, sizeof form, "csrf=%s&name=g&test=&base=&test_ref=topic&base_ref=main&elo0=0&elo1=5&alpha=0.05"
                                "&beta=0.05&max_pairs=100&tc=&nodes=300&pairs_per_task=8&priority=0", csrf);
    r = http("POST", "/new/sprt", cookie, form);
    cr_assert_eq(r.status, 303, "%d %s", r.status, r.body);
    int64_t id = strtoll(strstr(r.head, "Location: /runs/") + 16, NULL, 10);
    reply_free(&r);
    StoreRun run;
    load(id, &run);
    cr_assert_str_eq(run.state, "pending", "a tester's branch waits for an admin before it is built");
    StoreBuildRequest *q = NULL;
    cr_assert_eq(store_build_requests(cu_fx.store, id, &q), 2);
    cr_assert(strcmp(q[0].ref, "topic") == 0 && strcmp(q[0].state, "queued") == 0 && strcmp(q[1].ref, "main") == 0);
    free(q);
    StoreRun *active = NULL;
    int n = store_active_runs(cu_fx.store, &active);
    free(active);
    cr_assert_eq(n, 0, "the coordinator serves no building run");
    char path[64];
    snprintf(path, sizeof path, "/runs/%" PRId64, id);
    r = http("GET", path, NULL, NULL);
    cr_assert(strstr(r.body, "Builds of its git refs") &&
                  strstr(r.body, "<td data-k=\"build-test\">waiting for approval</td>"),
              "the page shows the requests waiting for approval");
    reply_free(&r);
    StoreBuildRequest taken;
    char state[16];
    cr_assert_eq(store_build_claim(cu_fx.store, "test:1", 3600, &taken), 0, "no builder takes an unapproved branch");

    /* an admin approves the commits its refs were pinned to, and nothing else */
    add_user("ada", "admin", "adminpass1");
    char admin_cookie[128], admin_csrf[128], action[64];
    login("ada", "adminpass1", admin_cookie, admin_csrf);
    snprintf(action, sizeof action, "/runs/%" PRId64 "/approve", id);
    snprintf(form, sizeof form, "csrf=%s", admin_csrf);
    cr_assert_eq(status_of("POST", action, admin_cookie, form), 409, "no commit read yet: nothing to approve");
    r = http("GET", path, admin_cookie, NULL);
    cr_assert(!strstr(r.body, "/approve\"") && strstr(r.body, "Approve once the builder has read the commits"),
              "no approval before the commits are read");
    reply_free(&r);
    /* the builder reads the refs (xqf-tune build --serve pins them before any approval) */
    const char *topic = "1111111111111111111111111111111111111111", *main_ = "2222222222222222222222222222222222222222";
    cr_assert_eq(store_build_requests(cu_fx.store, id, &q), 2);
    cr_assert_eq(store_build_pin(cu_fx.store, q[0].id, topic, "T: the topic's <b>change</b>", "", state, sizeof state),
                 1);
    cr_assert_str_eq(state, "pending");
    cr_assert_eq(store_build_pin(cu_fx.store, q[1].id, main_, "M: the base", "", state, sizeof state), 1);
    free(q);
    r = http("GET", path, admin_cookie, NULL);
    cr_assert(strstr(r.body, topic) && strstr(r.body, "T: the topic&#39;s &lt;b&gt;change&lt;/b&gt;") &&
                  strstr(r.body, main_) && strstr(r.body, "name=\"test_commit\" value=\"1111111111"),
              "the approval shows both commits and their subjects, and names them");
    reply_free(&r);
    snprintf(form, sizeof form, "csrf=%s&test_commit=%s&base_commit=%s", admin_csrf, main_, main_);
    cr_assert_eq(status_of("POST", action, admin_cookie, form), 409, "another commit than the one pinned");
    snprintf(form, sizeof form, "csrf=%s&test_commit=%s", admin_csrf, topic);
    cr_assert_eq(status_of("POST", action, admin_cookie, form), 409, "one side's commit missing");
    load(id, &run);
    cr_assert_str_eq(run.state, "pending");

    /* approved: now it waits for its builds, and the builder may take them */
    snprintf(form, sizeof form, "csrf=%s&test_commit=%s&base_commit=%s", admin_csrf, topic, main_);
    cr_assert_eq(status_of("POST", action, admin_cookie, form), 303);
    load(id, &run);
    cr_assert_str_eq(run.state, "building");
    r = http("GET", path, NULL, NULL);
    cr_assert(strstr(r.body, "<td data-k=\"build-test\">queued</td>"), "the page shows the requests queued");
    reply_free(&r);
    r = http("GET", "/runs", NULL, NULL);
    cr_assert(strstr(r.body, "Waiting for their builds"), "the runs page lists it");
    reply_free(&r);

    /* the builder takes the test's ref and fails it: the run fails, its page says why */
    cr_assert_eq(store_build_claim(cu_fx.store, "test:1", 3600, &taken), 1);
    cr_assert_str_eq(taken.ref, "topic");
    cr_assert_str_eq(taken.commit, topic, "the builder is given the commit approved");
    r = http("GET", path, NULL, NULL);
    cr_assert(strstr(r.body, "<td data-k=\"build-test\">building</td>"), "the builder took it");
    reply_free(&r);
    cr_assert_eq(store_build_done(cu_fx.store, taken.id, 0, "unknown ref 'topic' in /src", state, sizeof state), 1);
    cr_assert_str_eq(state, "failed");
    r = http("GET", path, NULL, NULL);
    cr_assert(strstr(r.body, "build of test ref topic failed") && strstr(r.body, "unknown ref &#39;topic&#39; in /src"),
              "the page gives the reason");
    reply_free(&r);

    /* a waiting test stopped by its tester: the builder builds none of it */
    snprintf(form, sizeof form, "csrf=%s&name=h&test=&base=&test_ref=other&base_ref=main&elo0=0&elo1=5&alpha=0.05"
                                "&beta=0.05&max_pairs=100&tc=&nodes=300&pairs_per_task=8&priority=0", csrf);
    r = http("POST", "/new/sprt", cookie, form);
    cr_assert_eq(r.status, 303);
    id = strtoll(strstr(r.head, "Location: /runs/") + 16, NULL, 10);
    reply_free(&r);
    snprintf(path, sizeof path, "/runs/%" PRId64 "/stop", id);
    snprintf(form, sizeof form, "csrf=%s", csrf);
    cr_assert_eq(status_of("POST", path, cookie, form), 303);
    load(id, &run);
    cr_assert_str_eq(run.state, "stopped");
    cr_assert_eq(store_build_claim(cu_fx.store, "test:1", 3600, &taken), 0, "nothing to build");
    cr_assert_eq(store_build_requests(cu_fx.store, id, &q), 2);
    cr_assert(strcmp(q[0].state, "failed") == 0 && strstr(q[0].error, "the run was stopped first"), "%s", q[0].error);
    free(q);
}

/*
 * A run's page names the net compiled into each build it plays
 * (026_build_nets.sql, xqf-tune build --net): the build's provenance.
 */
Test(web, a_builds_compiled_in_net_is_named)
{
    CU_REQUIRE_DB();
    char net[256], err[256], out[4096], args[1024];
    snprintf(net, sizeof net, "%s/page.nnue", cu_fx.dir);
    cr_assert_eq(cu_random_net(net, 8, err, sizeof err), 0, "%s", err);
    snprintf(args, sizeof args, "net add '%s' --name page-net", net);
    cr_assert_eq(cu_tune(out, sizeof out, args, cu_fx.logfile), 0, "%s", out);
    StoreBuild b = { .bench_nodes = 4242, .net_id = strtoll(strstr(out, "Net: ") + 5, NULL, 10) };
    char sha[80];
    cr_assert(sscanf(strstr(out, "SHA-256: "), "SHA-256: %64s", sha) == 1);
    snprintf(b.path, sizeof b.path, "%s/xqf-engine", XQF_BIN);
    cr_assert_eq(cu_sha256(b.path, b.sha256), 0);
    snprintf(b.build_id, sizeof b.build_id, "with-net");
    int64_t build = cu_build_add(cu_fx.store, &b);
    cr_assert_gt(build, 0);
    snprintf(args, sizeof args, "sprt new --test-build %" PRId64 " --nodes 100", build);
    cr_assert_eq(cu_tune(out, sizeof out, args, cu_fx.logfile), 0, "%s", out);
    int64_t id = strtoll(out, NULL, 10);
    start_web(NULL);
    char path[64], want[256];
    snprintf(path, sizeof path, "/runs/%" PRId64, id);
    Reply r = http("GET", path, NULL, NULL);
    cr_assert_eq(r.status, 200);
    snprintf(want, sizeof want, "<tr><th>Test build's compiled-in net</th><td>page-net (%s)</td></tr>", sha);
    cr_assert(strstr(r.body, want), "%s not in the page", want);
    cr_assert_null(strstr(r.body, "Base build's compiled-in net"), "the base plays the workers' engine");
    reply_free(&r);
}

/* A build registered with the parameters it lists (as xqf-tune build records them): its id. */
static int64_t listed_build(const char *name, const StoreBuildParam *params, int n)
{
    StoreBuild b = { .bench_nodes = 4242 };
    snprintf(b.path, sizeof b.path, "%s/xqf-engine", XQF_BIN);
    cr_assert_eq(cu_sha256(b.path, b.sha256), 0);
    snprintf(b.build_id, sizeof b.build_id, "%s", name);
    int64_t id = cu_build_add(cu_fx.store, &b);
    cr_assert_gt(id, 0);
    cr_assert_eq(store_begin(cu_fx.store), 0);
    cr_assert_eq(store_set_build_params(cu_fx.store, id, params, n), 0);
    cr_assert_eq(store_commit(cu_fx.store), 0);
    return id;
}

/*
 * The form checks a set against what plays it, with xqf-tune's rules and
 * words: on a registered build, the parameters that build listed (a
 * branch's switch the engine's table lacks is taken; a name the build
 * lacks, or a value out of its bounds, is refused naming the build); on a
 * git ref not built yet, its syntax only (the builder checks the rest
 * against the build it makes); on the workers' engine, the engine's table.
 */
Test(web, sets_are_checked_against_what_plays_them)
{
    CU_REQUIRE_DB();
    const StoreBuildParam params[] = { { "Hash", 1, 4096 }, { "NullR", 1, 4 }, { "NewSwitch", 0, 1 } };
    int64_t build = listed_build("branch", params, 3);
    add_user("ada", "admin", "adminpass1");
    start_web(NULL);
    char cookie[128], csrf[128], form[1024], args[512], msg[1024];
    login("ada", "adminpass1", cookie, csrf);
    const struct {
        const char *sides;           /* form fields; %1$lld the build */
        const char *field, *cli;     /* refused: the field, and xqf-tune's arguments for the same words */
    } cases[] = {
        { "test=NewSwitch%%3D1&test_build=%1$lld&base=", NULL, NULL },
        { "test=NullR%%3D2&base=NewSwitch%%3D1%%2CNullR%%3D4&base_build=%1$lld", NULL, NULL },
        { "test=NewSwitch%%3D1&test_ref=topic&base=&base_ref=main", NULL, NULL },
        { "test=NullThreat%%3D1&test_build=%1$lld&base=", "test",
          "sprt new --test-build %1$lld --test NullThreat=1 --nodes 100" },
        { "test=&base=NullR%%3D5&base_build=%1$lld", "base", "sprt new --base-build %1$lld --base NullR=5 --nodes 100" },
        { "test=New+Switch%%3D1&test_ref=topic&base=&base_ref=main", "test",
          "sprt new --test-build %1$lld --test 'New Switch=1' --nodes 100" },
        { "test=NewSwitch%%3D1&base=", "test", "sprt new --test NewSwitch=1 --base '' --nodes 100" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char sides[256];
        snprintf(sides, sizeof sides, cases[i].sides, (long long)build);
        int64_t before = count_runs();
        snprintf(form, sizeof form, "csrf=%s&name=s%zu&%s&elo0=0&elo1=5&alpha=0.05&beta=0.05&max_pairs=100&tc="
                                    "&nodes=300&pairs_per_task=8&priority=0", csrf, i, sides);
        Reply r = http("POST", "/new/sprt", cookie, form);
        if (!cases[i].field) {
            cr_assert_eq(r.status, 303, "%s: %d %s", sides, r.status, r.body);
            cr_assert_eq(count_runs(), before + 1);
            reply_free(&r);
            continue;
        }
        cr_assert_eq(r.status, 400, "%s: %d", sides, r.status);
        char id[32];
        snprintf(id, sizeof id, "id=\"err-%s\"", cases[i].field);
        snprintf(args, sizeof args, cases[i].cli, (long long)build);
        cli_message(args, cases[i].field[0] == 't' ? "--test" : "--base", msg, sizeof msg);
        cr_assert(strstr(r.body, id) && strstr(r.body, msg), "%s: the form does not say what xqf-tune %s says: %s",
                  sides, args, msg);
        if (strstr(sides, "_build"))
            cr_assert(strstr(msg, "in build ") && strstr(msg, "(branch)"), "the build is named: %s", msg);
        reply_free(&r);
        cr_assert_eq(count_runs(), before, "%s: a bad form created a run", sides);
    }
}

/* Whether cookie is a live session: a signed-in page carries a CSRF token. */
static bool signed_in(const char *cookie)
{
    Reply r = http("GET", "/runs", cookie, NULL);
    bool in = r.status == 200 && strstr(r.body, "name=\"csrf\"") != NULL;
    reply_free(&r);
    return in;
}

/* xqf-tune user ARGS (a shell fragment, stdin from input when not NULL): its exit status. */
static int user_cmd(const char *args, const char *input)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s%s%s'%s/xqf-tune' user %s --db '%s' >/dev/null 2>>'%s'", input ? "echo '" : "",
             input ? input : "", input ? "' | " : "", XQF_BIN, args, cu_fx.db, cu_fx.logfile);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * An account's sessions end when its password changes, when it is disabled
 * and when it is deleted; a disabled or deleted account cannot sign in.
 */
Test(web, password_change_disable_and_delete_end_sessions)
{
    CU_REQUIRE_DB();
    add_user("pat", "tester", "password1");
    start_web(NULL);
    char cookie[128], csrf[128];
    login("pat", "password1", cookie, csrf);
    cr_assert(signed_in(cookie));
    cr_assert_eq(user_cmd("add pat --role tester --replace", "password2"), 0);
    cr_assert(!signed_in(cookie), "a session outlived the password change");
    cr_assert_neq(login_status("pat", "password1"), 303, "the old password still signs in");
    login("pat", "password2", cookie, csrf);
    cr_assert_eq(user_cmd("disable pat", NULL), 0);
    cr_assert(!signed_in(cookie), "a session of a disabled account");
    cr_assert_neq(login_status("pat", "password2"), 303, "a disabled account signs in");
    cr_assert_eq(user_cmd("enable pat", NULL), 0);
    login("pat", "password2", cookie, csrf);
    cr_assert_eq(user_cmd("delete pat", NULL), 0);
    cr_assert(!signed_in(cookie), "a session of a deleted account");
    cr_assert_neq(login_status("pat", "password2"), 303, "a deleted account signs in");
    cr_assert_eq(user_cmd("disable nobody", NULL), 2, "an unknown account");
    cr_assert_eq(user_cmd("frobnicate pat", NULL), 2, "an unknown subcommand");
}

/* Behind a TLS proxy (--secure-cookies), the session cookie is Secure though this server speaks HTTP. */
Test(web, secure_cookies_behind_a_proxy)
{
    CU_REQUIRE_DB();
    add_user("pat", "tester", "password1");
    const char *extra[] = { "--secure-cookies", NULL };
    start_web(extra);
    Reply page = http("GET", "/login", NULL, NULL);
    cr_assert(strstr(page.head, "xqf_login=") && strstr(page.head, "; Secure"), "%s", page.head);
    reply_free(&page);
    Reply r = login_post(NULL, NULL, "pat", "password1");
    cr_assert_eq(r.status, 303);
    const char *c = strstr(r.head, "xqf_session=");
    cr_assert(c && strstr(c, "; Secure"), "%s", r.head);
    reply_free(&r);
}

/* A tester's runs waiting for an admin are bounded (--tester-quota): one more is refused, an admin's are not. */
Test(web, a_testers_waiting_runs_are_bounded)
{
    CU_REQUIRE_DB();
    add_user("tess", "tester", "testpass1");
    const char *extra[] = { "--tester-quota", "2", NULL };
    start_web(extra);
    char cookie[128], csrf[128], form[1024];
    login("tess", "testpass1", cookie, csrf);
    snprintf(form, sizeof form, "csrf=%s&name=q&test=NullR%%3D2&base=&elo0=0&elo1=5&alpha=0.05&beta=0.05"
                                "&max_pairs=100&tc=&nodes=300&pairs_per_task=8&priority=0", csrf);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(status_of("POST", "/new/sprt", cookie, form), 303, "run %d", i);
    int64_t before = count_runs();
    Reply r = http("POST", "/new/sprt", cookie, form);
    cr_assert_eq(r.status, 429);
    cr_assert(strstr(r.body, "2 runs waiting for approval or builds already (at most 2)"), "%s", r.body);
    reply_free(&r);
    cr_assert_eq(count_runs(), before, "a run over the quota was made");
}

/* Every PGN download is bounded (--pgn-max), a worker's or a task's too: anyone may ask for one. */
Test(web, pgn_downloads_are_bounded_whatever_the_filter)
{
    CU_REQUIRE_DB();
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 2, 2, 300, 0, 5), worker;
    cr_assert_eq(store_hello(cu_fx.store, "w1", "b", 1, 1, "", &worker), 1);
    StoreLease l;
    bool given;
    cr_assert_eq(store_claim_batch(cu_fx.store, run, &worker, 1, 60000, &l, &given), 1);
    StoreCounts c = { .pairs = 2, .draws = 4, .penta = { 0, 0, 2, 0, 0 }, .nreasons = 1, .reasons = { 4 } };
    cr_assert_eq(cu_report(cu_fx.store, worker, l.task_id, l.token, &c, NULL, 60000, NULL, NULL), REPORT_ACCEPTED);
    const char *extra[] = { "--pgn-max", "3", NULL };
    start_web(extra);
    char path[96];
    snprintf(path, sizeof path, "/runs/%" PRId64 "/pgn?worker=w1", run);
    Reply r = http("GET", path, NULL, NULL);
    cr_assert_eq(r.status, 413, "4 games of one worker past --pgn-max 3: %d", r.status);
    cr_assert(strstr(r.body, "too many games for one page"), "%s", r.body);
    reply_free(&r);
    snprintf(path, sizeof path, "/runs/%" PRId64 "/pgn", run);
    cr_assert_eq(status_of("GET", path, NULL, NULL), 413, "the whole run past --pgn-max");
}

/* ---- GET / while logins and a large download run -------------------------------------------- */

/*
 * One request from the loopback address `from` (NULL: 127.0.0.1) on a
 * connection of its own, without assertions (it runs in the load's
 * threads): its status (-1 when the connection failed), the bytes of the
 * answer in *bytes, its first 16 KiB in head (may be NULL).
 */
static int quiet_request(const char *from, const char *req, size_t len, size_t *bytes, char *head, size_t head_size)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)cu_fx.port) }, b = a;
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    b.sin_port = 0;
    inet_pton(AF_INET, from ? from : "127.0.0.1", &b.sin_addr);
    *bytes = 0;
    if (fd < 0 || bind(fd, (struct sockaddr *)&b, sizeof b) != 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    char buf[65536], first[16384];
    size_t kept = 0;
    ssize_t n;
    while ((n = recv(fd, buf, sizeof buf, 0)) > 0) {
        size_t take = kept + (size_t)n < sizeof first - 1 ? (size_t)n : sizeof first - 1 - kept;
        memcpy(first + kept, buf, take);
        kept += take;
        *bytes += (size_t)n;
    }
    close(fd);
    first[kept] = '\0';
    if (head)
        snprintf(head, head_size, "%s", first);
    int status = -1;
    sscanf(first, "HTTP/1.%*d %d", &status);
    return status;
}

static int quiet_get(const char *path, size_t *bytes)
{
    char req[512];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path);
    return quiet_request(NULL, req, (size_t)n, bytes, NULL, 0);
}

/* A login of user (password "password-" user) from `from`, the login page first: 303 when it worked. */
static int quiet_login(const char *from, const char *user)
{
    char req[1024], page[16384], nonce[128], token[128];
    size_t bytes;
    int n = snprintf(req, sizeof req, "GET /login HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    if (quiet_request(from, req, (size_t)n, &bytes, page, sizeof page) != 200 || !login_page_of(page, page, nonce, token))
        return -1;
    char form[512];
    int flen = snprintf(form, sizeof form, "login_csrf=%s&user=%s&password=password-%s", token, user, user);
    n = snprintf(req, sizeof req, "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                 "Cookie: xqf_login=%s\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                 "Content-Length: %d\r\n\r\n%s", nonce, flen, form);
    return quiet_request(from, req, (size_t)n, &bytes, NULL, 0);
}

typedef struct {
    pthread_t thread;
    const char *path;                /* a download's; NULL: a login's */
    char user[16], from[16];         /* a login's account and address */
    volatile bool *stop;
    int done, failed;                /* answered as expected, or not */
    size_t bytes;                    /* of the largest answer */
} Load;

/* Downloads (path) or logs in again and again until *stop. */
static void *load_main(void *arg)
{
    Load *l = arg;
    while (!*l->stop) {
        size_t bytes = 0;
        int status = l->path ? quiet_get(l->path, &bytes) : quiet_login(l->from, l->user);
        *(status == (l->path ? 200 : 303) ? &l->done : &l->failed) += 1;
        if (bytes > l->bytes)
            l->bytes = bytes;
    }
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/*
 * n GET / one after the other, 50 ms apart, their times sorted into ms[];
 * once more than a tenth took over bound_ms, the p90 is over it whatever
 * comes: the rest are not waited for (they count as the slowest, INFINITY).
 * Returns how many were measured.
 */
static int time_runs_page(double *ms, int n, double bound_ms)
{
    int i = 0, over = 0;
    for (; i < n && over <= n / 10; i++) {
        size_t bytes;
        double t0 = cu_now();
        cr_assert_eq(quiet_get("/", &bytes), 200, "GET / %d", i);
        ms[i] = (cu_now() - t0) * 1000;
        over += ms[i] > bound_ms;
        cu_sleep_ms(50);
    }
    int measured = i;
    for (; i < n; i++)
        ms[i] = INFINITY;
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    return measured;
}

/*
 * A run of 20,000 games (the default --pgn-max) of 200 plies each: a PGN
 * of about 35 MB, seconds of a core to write.  The 4 games of one reported
 * lease, then copies of a longer record.
 */
static int64_t run_of_many_games(void)
{
    int64_t run = cu_sprt(cu_fx.store, "NullR=2", 2, 20000, 300, 0, 5), worker;
    cr_assert_eq(store_hello(cu_fx.store, "w1", "b", 1, 1, "", &worker), 1);
    StoreLease l;
    bool given;
    cr_assert_eq(store_claim_batch(cu_fx.store, run, &worker, 1, 60000, &l, &given), 1);
    StoreCounts c = { .pairs = 2, .draws = 4, .penta = { 0, 0, 2, 0, 0 }, .nreasons = 1, .reasons = { 4 } };
    cr_assert_eq(cu_report(cu_fx.store, worker, l.task_id, l.token, &c, NULL, 60000, NULL, NULL), REPORT_ACCEPTED);
    /* a stored record (games.h, its FEN apart): moves only and a draw, a reason, 200 plies: two horses to and fro */
    static const char *const CYCLE[4] = { "010a", "d220", "9400", "4129" };   /* b0c2 b9c7 c2b0 c7b9, little-endian */
    char record[2 * (5 + 400) + 1] = "830100c800", *p = record + 10;
    for (int i = 0; i < 200; i++, p += 4)
        memcpy(p, CYCLE[i % 4], 4);
    *p = '\0';
    char sql[4096];
    snprintf(sql, sizeof sql, "psql -q '%s' -c \"INSERT INTO games (run_id, game, worker_id, fen_id, record) "
                              "SELECT %" PRId64 ", g, %" PRId64 ", (SELECT fen_id FROM games LIMIT 1), "
                              "decode('%s', 'hex') FROM generate_series(4, 19999) g\" >/dev/null",
             cu_fx.db, run, worker, record);
    cr_assert_eq(system(sql), 0);
    return run;
}

/*
 * GET / stays under 100 ms while 20 people log in again and again, each
 * from an address of its own (an Argon2id verification a login: 64 MiB
 * and a fraction of a second of a core), and a 20,000-game PGN (35 MB) is
 * downloaded again and again.  Behind the one lock of old, GET / waited
 * for the download under way: a median of 1.4 s.
 *
 * The bound holds for the 90th percentile of 60 GET /, 50 ms apart: the
 * tail is the point (a page fast only half the time still stalls), but
 * the slowest few of a loaded shared machine (this one runs other jobs'
 * builds and tests) are its scheduler's, not the dashboard's.  A round
 * over the bound is measured again once under the same load before the
 * test fails: the regressions this test is for (a connection held by a
 * download, a login's verification or its thread) are over it every time.
 * The median of a round with no load at all is logged beside it, and the
 * load's requests are checked to have been answered (else there was no load).
 */
#ifdef __SANITIZE_ADDRESS__
/* AddressSanitizer's build answers each page a few times slower (p90 117 ms
 * seen on the loaded machine): the regressions above still stall it for a
 * second and more */
enum { RUNS_PAGE_P90_MS = 400 };
#else
enum { RUNS_PAGE_P90_MS = 100 };
#endif

Test(web, the_runs_page_stays_fast_under_logins_and_downloads, .timeout = 240)
{
    CU_REQUIRE_DB();
    enum { SAMPLES = 60, LOGINS = 20, LOADS = LOGINS + 1 };
    int64_t run = run_of_many_games();
    Load load[LOADS];
    volatile bool stop = false;
    char path[64];
    snprintf(path, sizeof path, "/runs/%" PRId64 "/pgn", run);
    for (int i = 0; i < LOADS; i++) {
        load[i] = (Load){ .path = i == LOGINS ? path : NULL, .stop = &stop };
        snprintf(load[i].user, sizeof load[i].user, "user%d", i);
        snprintf(load[i].from, sizeof load[i].from, "127.0.6.%d", i + 1);
        char password[32];
        snprintf(password, sizeof password, "password-user%d", i);
        if (i < LOGINS)
            add_user(load[i].user, "viewer", password);
    }
    start_web(NULL);
    double idle[SAMPLES], busy[SAMPLES];
    time_runs_page(idle, SAMPLES, INFINITY);
    for (int i = 0; i < LOADS; i++)
        cr_assert_eq(pthread_create(&load[i].thread, NULL, load_main, &load[i]), 0);
    cu_sleep_ms(500);                /* the download and the logins are under way */
    double p90 = 0;
    for (int round = 0; round < 2 && (round == 0 || p90 >= RUNS_PAGE_P90_MS); round++) {
        int measured = time_runs_page(busy, SAMPLES, RUNS_PAGE_P90_MS);
        p90 = busy[SAMPLES * 9 / 10 - 1];
        cr_log_info("GET / idle: median %.1f ms, p90 %.1f ms; under load (round %d, %d measured): median %.1f ms, "
                    "p90 %.1f ms, max %.1f ms", idle[SAMPLES / 2], idle[SAMPLES * 9 / 10 - 1], round + 1, measured,
                    busy[SAMPLES / 2], p90, busy[SAMPLES - 1]);
    }
    stop = true;
    int logins = 0, downloads = 0, failed = 0;
    size_t largest = 0;
    for (int i = 0; i < LOADS; i++) {
        pthread_join(load[i].thread, NULL);
        *(i == LOGINS ? &downloads : &logins) += load[i].done;
        failed += load[i].failed;
        if (load[i].bytes > largest)
            largest = load[i].bytes;
    }
    cr_log_info("the load: %d logins, %d downloads of %.1f MB, %d failed", logins, downloads, largest / 1e6, failed);
    cr_assert_eq(failed, 0, "requests of the load failed (%d)", failed);
    cr_assert_geq(logins, LOGINS, "the logins ran");
    cr_assert_geq(downloads, 1, "a download ran");
    cr_assert_gt(largest, 30 * 1000 * 1000, "the download is large: %zu bytes", largest);
    cr_assert_lt(p90, (double)RUNS_PAGE_P90_MS, "GET / under load: p90 %.1f ms", p90);
}

/* ---- every kind from its form, through the run service ------------------------------ */

/*
 * The stored row of run id as text, without what differs between two runs
 * of the same settings (and the columns less drops, "- 'col' ..."), its
 * book as a digest (the row stays small).
 */
static void run_row_less(int64_t id, const char *less, char *out, size_t size)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "psql -qAt '%s' -c \"SELECT (to_jsonb(r) - 'id' - 'created_at' - 'owner' - 'updated_at' - "
             "'started_at' - 'finished_at' - 'book' %s || jsonb_build_object('book_md5', md5(array_to_string(book, "
             "'|'))))::text FROM runs r WHERE id = %" PRId64 "\" 2>>'%s'",
             cu_fx.db, less, id, cu_fx.logfile);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    cr_assert_eq(WEXITSTATUS(pclose(p)), 0);
    cr_assert_gt(n, 10, "no row of run %" PRId64, id);
}

static void run_row(int64_t id, char *out, size_t size) { run_row_less(id, "", out, size); }

/* xqf-tune's new command (args), which must succeed: the run's id. */
static int64_t cli_new(const char *args)
{
    char cmd[2048], out[4096] = "";
    snprintf(cmd, sizeof cmd, "'%s/xqf-tune' %s --db '%s' 2>>'%s'", XQF_BIN, args, cu_fx.db, cu_fx.logfile);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    cr_assert_eq(WEXITSTATUS(pclose(p)), 0, "%s: %s (see %s)", args, out, cu_fx.logfile);
    /* the last line that is only a number (a build's report comes before it) */
    int64_t id = 0;
    for (const char *l = out; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
        if (strspn(l, "0123456789") == strcspn(l, "\n") && strcspn(l, "\n") > 0)
            id = strtoll(l, NULL, 10);
    return id;
}

/* The form's POST to /new/kind: the new run's id (303), else 0 with the reply kept in *r. */
static int64_t form_new(const char *kind, const char *cookie, const char *csrf, const char *fields, Reply *r)
{
    char path[32], form[2048];
    snprintf(path, sizeof path, "/new/%s", kind);
    snprintf(form, sizeof form, "csrf=%s&%s", csrf, fields);
    *r = http("POST", path, cookie, form);
    if (r->status != 303)
        return 0;
    int64_t id = strtoll(strstr(r->head, "Location: /runs/") + 16, NULL, 10);
    reply_free(r);
    return id;
}

#define BOOK XQF_SOURCE_DIR "/ops/books/default.book"

Test(web, every_kind_from_its_form_is_xqf_tunes_run)
{
    CU_REQUIRE_DB();
    add_user("ada", "admin", "adminpass1");
    start_web((const char *const[]){ "--book", BOOK, NULL });
    char cookie[128], csrf[128];
    login("ada", "adminpass1", cookie, csrf);
    /* the same settings as xqf-tune's options and as the form's fields (an admin's run: active, as xqf-tune's) */
    static const struct {
        const char *kind, *cli, *form;
    } SAME[] = {
        { "sprt",
          "sprt new --test NullR=2 --base '' --tc 10+0.1 --tc-base 5+0.05 --elo0 -1 --elo1 4 --alpha 0.1 --beta 0.2 "
          "--max-pairs 300 --threads 2 --replay 0 --keep-scores --pairs-per-task 4 --priority 3 --seed 7 --name same "
          "--tc-scale --ref-nps 2000000 --resign-moves 3 --resign-score 700 --draw-after 30 --draw-moves 6 "
          "--draw-score 5 --max-plies 300",
          "test=NullR%3D2&base=&tc=10%2B0.1&tc_base=5%2B0.05&nodes=&elo0=-1&elo1=4&alpha=0.1&beta=0.2&max_pairs=300"
          "&threads=2&replay=0&keep_scores=1&pairs_per_task=4&priority=3&seed=7&name=same&ref_nps=2000000"
          "&resign_moves=3&resign_score=700&draw_after=30&draw_moves=6&draw_score=5&max_plies=300" },
        { "games",
          "games new --pairs 20 --test NullR=2 --base '' --nodes 500 --replay 5 --pairs-per-task 2 --seed 9 --name g "
          "--resign-moves 0 --draw-moves 0",
          "pairs=20&test=NullR%3D2&base=&nodes=500&tc=&replay=5&pairs_per_task=2&priority=0&seed=9&name=g"
          "&resign_moves=0&draw_moves=0" },
        /* several threads and the replay share left empty: the default, no replay audit, as xqf-tune's */
        { "games", "games new --pairs 8 --test NullR=2 --base '' --nodes 300 --threads 2",
          "pairs=8&test=NullR%3D2&base=&nodes=300&tc=&threads=2&replay=&pairs_per_task=8&priority=0&seed=1" },
        { "spsa",
          "spsa new --params RookMg,HorseMg --pairs 50 --alpha 0.7 --gamma 0.2 --a-ratio 0.3 --nodes 400 "
          "--pairs-per-task 2 --seed 11 --name s --max-plies 400 --draw-after 60",
          "params=RookMg%2CHorseMg&pairs=50&alpha=0.7&gamma=0.2&a_ratio=0.3&nodes=400&tc=&pairs_per_task=2"
          "&priority=0&seed=11&name=s&max_plies=400&draw_after=60" },
        { "data",
          "data new --games 41 --params NullR=2 --depth 3 --random-plies 4 --skip-plies 2 --keep-check "
          "--max-score 2000 --pairs-per-task 3 --seed 13 --name d --resign-score 900 --draw-score 0",
          "games=41&params=NullR%3D2&depth=3&tc=&nodes=&random_plies=4&skip_plies=2&keep_check=1&max_score=2000"
          "&pairs_per_task=3&priority=0&seed=13&name=d&resign_score=900&draw_score=0" },
    };
    for (size_t i = 0; i < sizeof SAME / sizeof *SAME; i++) {
        char path[32], args[1024], cli_row[8192], web_row[8192];
        snprintf(path, sizeof path, "/new/%s", SAME[i].kind);
        Reply r = http("GET", path, cookie, NULL);
        cr_assert_eq(r.status, 200, "%s: the form", SAME[i].kind);
        cr_assert(strstr(r.body, "name=\"seed\""), "%s: the form has a seed", SAME[i].kind);
        cr_assert(strstr(r.body, "name=\"resign_score\"") && strstr(r.body, "name=\"max_plies\""),
                  "%s: the form has the adjudication's rules", SAME[i].kind);
        /* the THREADS group of the kinds that play an engine test's games (run_kinds.def's threads), not data's */
        bool threads = strcmp(SAME[i].kind, "data") != 0;
        cr_assert_eq(strstr(r.body, "name=\"threads\"") != NULL, threads, "%s: the threads field", SAME[i].kind);
        cr_assert_eq(strstr(r.body, "name=\"replay\"") != NULL, threads, "%s: the replay field", SAME[i].kind);
        cr_assert_eq(strstr(r.body, "name=\"tc_base\"") != NULL, strcmp(SAME[i].kind, "sprt") == 0 ||
                     strcmp(SAME[i].kind, "games") == 0, "%s: the time odds' field", SAME[i].kind);
        reply_free(&r);
        int64_t web_id = form_new(SAME[i].kind, cookie, csrf, SAME[i].form, &r);
        cr_assert_gt(web_id, 0, "%s: the form's run: %d %s", SAME[i].kind, r.status, r.body ? r.body : "");
        snprintf(args, sizeof args, "%s --book '%s'", SAME[i].cli, BOOK);
        int64_t cli_id = cli_new(args);
        StoreRun run;
        load(web_id, &run);
        cr_assert_str_eq(run.kind, SAME[i].kind);
        cr_assert_eq(run.seed, (uint64_t)strtoll(strstr(SAME[i].form, "seed=") + 5, NULL, 10), "the seed is the form's");
        run_row(web_id, web_row, sizeof web_row);
        run_row(cli_id, cli_row, sizeof cli_row);
        cr_assert_str_eq(web_row, cli_row, "%s: the form's run and xqf-tune's differ", SAME[i].kind);
        if (i == 0)   /* what the setters after the insert used to write, now in the row itself */
            cr_assert(strstr(web_row, "\"ref_nps\": 2000000") && strstr(web_row, "\"game_scores\": true"), "%s",
                      web_row);
        /*
         * the settings of run_settings.def's THREADS and KEPT groups and its
         * text settings (the clock, time odds), each in its column as given,
         * else its default (the replay share derived from the threads)
         */
        static const char *const MOVED[][8] = {
            { "\"base_ms\": 10000,", "\"inc_ms\": 100,", "\"base1_ms\": 5000,", "\"inc1_ms\": 50,", "\"threads\": 2,",
              "\"replay_share\": 0,", "\"hash_mb\": 16,", "\"margin_ms\": 100," },
            { "\"nodes\": 500,", "\"base_ms\": 0,", "\"base1_ms\": 0,", "\"threads\": 1,", "\"replay_share\": 0.05,",
              "\"hash_mb\": 16,", "\"margin_ms\": 100,", "\"inc_ms\": 0," },
            { "\"nodes\": 300,", "\"base_ms\": 0,", "\"threads\": 2,", "\"replay_share\": 0,", "\"hash_mb\": 16,",
              "\"margin_ms\": 100,", "\"inc1_ms\": 0,", "\"base1_ms\": 0," },
            { "\"nodes\": 400,", "\"base_ms\": 0,", "\"threads\": 1,", "\"replay_share\": 0.01,", "\"hash_mb\": 16,",
              "\"margin_ms\": 100,", "\"base1_ms\": 0,", "\"inc_ms\": 0," },
            { "\"nodes\": 0,", "\"base_ms\": 0,", "\"threads\": 1,", "\"replay_share\": 0.01,", "\"hash_mb\": 16,",
              "\"margin_ms\": 100,", "\"base1_ms\": 0,", "\"inc_ms\": 0," },
        };
        for (size_t m = 0; m < sizeof MOVED[i] / sizeof *MOVED[i]; m++)
            cr_assert(strstr(web_row, MOVED[i][m]), "%s: %s not in the row %s", SAME[i].kind, MOVED[i][m], web_row);
        /* the adjudication given, each rule in its column; those not given the defaults (as before they were settable) */
        static const char *const ADJ[] = {
            "\"resign_moves\": 3, \"resign_score\": 700, \"draw_after\": 30, \"draw_moves\": 6, \"draw_score\": 5, "
            "\"max_plies\": 300",
            "\"resign_moves\": 0, \"resign_score\": 600, \"draw_after\": 40, \"draw_moves\": 0, \"draw_score\": 10, "
            "\"max_plies\": 0",
            "\"resign_moves\": 4, \"resign_score\": 600, \"draw_after\": 40, \"draw_moves\": 8, \"draw_score\": 10, "
            "\"max_plies\": 0",
            "\"resign_moves\": 4, \"resign_score\": 600, \"draw_after\": 60, \"draw_moves\": 8, \"draw_score\": 10, "
            "\"max_plies\": 400",
            "\"resign_moves\": 4, \"resign_score\": 900, \"draw_after\": 40, \"draw_moves\": 8, \"draw_score\": 0, "
            "\"max_plies\": 0",
        };
        const StoreAdjudication *a = &run.adjudication;
        char adj[256];
        snprintf(adj, sizeof adj, "\"resign_moves\": %" PRId64 ", \"resign_score\": %" PRId64 ", \"draw_after\": %" PRId64
                 ", \"draw_moves\": %" PRId64 ", \"draw_score\": %" PRId64 ", \"max_plies\": %" PRId64, a->resign_moves,
                 a->resign_score, a->draw_after, a->draw_moves, a->draw_score, a->max_plies);
        cr_assert_str_eq(adj, ADJ[i], "%s: the store read %s", SAME[i].kind, adj);
    }
    /* the runs page filters by every kind */
    Reply r = http("GET", "/runs?kind=data", NULL, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "<option value=\"games\""), "the kind filter offers games");
    reply_free(&r);
}

/* psql's one value of query (a row as JSON, a count), which must succeed. */
static void sql_value(const char *query, char *out, size_t size)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "psql -qAt '%s' -c \"%s\" 2>>'%s'", cu_fx.db, query, cu_fx.logfile);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    cr_assert_eq(WEXITSTATUS(pclose(p)), 0, "%s", query);
}

/* A chain as stored, its ids left out: its row, its stages', its first run's (the book as its MD5). */
static void chain_rows(int64_t chain, char *out, size_t size)
{
    char q[1024], stages[8192], first[32];
    snprintf(q, sizeof q, "SELECT (to_jsonb(c) - 'id' - 'created_at')::text || (SELECT jsonb_agg(to_jsonb(st) - "
             "'chain_id' - 'run_id' ORDER BY idx)::text FROM chain_stages st WHERE chain_id = c.id) FROM chains c "
             "WHERE id = %" PRId64, chain);
    sql_value(q, stages, sizeof stages);
    snprintf(q, sizeof q, "SELECT run_id FROM chain_stages WHERE chain_id = %" PRId64 " AND idx = 0", chain);
    sql_value(q, first, sizeof first);
    cr_assert_gt(strtoll(first, NULL, 10), 0, "chain %" PRId64 " has no first run", chain);
    char run[8192];
    run_row(strtoll(first, NULL, 10), run, sizeof run);
    snprintf(out, size, "%s %s", stages, run);
}

/* The chain form's POST: the new chain's id (303 to the chains' page), else 0 with the reply kept in *r. */
static int64_t chain_form(const char *cookie, const char *csrf, const char *fields, Reply *r)
{
    char form[2048];
    snprintf(form, sizeof form, "csrf=%s&%s", csrf, fields);
    *r = http("POST", "/new/chain", cookie, form);
    if (r->status != 303)
        return 0;
    const char *at = strstr(r->head, "Location: /chains#chain-");
    cr_assert(at, "%s", r->head);
    int64_t id = strtoll(at + 24, NULL, 10);
    reply_free(r);
    return id;
}

Test(web, a_chain_from_its_form_is_xqf_tunes_chain)
{
    CU_REQUIRE_DB();
    add_user("ada", "admin", "adminpass1");
    add_user("tess", "tester", "testerpass1");
    add_user("vic", "viewer", "viewerpass1");
    start_web((const char *const[]){ "--book", BOOK, NULL });
    char cookie[128], csrf[128];
    login("ada", "adminpass1", cookie, csrf);
    Reply r = http("GET", "/new/chain", cookie, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "name=\"then_sprt\"") && strstr(r.body, "name=\"then_build\"") &&
              !strstr(r.body, "name=\"ref\""), "the SPSA chain's form");
    reply_free(&r);
    r = http("GET", "/new/chain?first=data", cookie, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "name=\"epochs\"") && strstr(r.body, "name=\"random_plies\"") &&
              strstr(r.body, "value=\"data\""), "the net chain's form");
    reply_free(&r);
    /* an SPSA chain and a net chain: the form's and xqf-tune's are the same, stages and first run */
    static const struct {
        const char *cli, *form;
    } SAME[] = {
        { "chain new --params NullR,LmrBase --pairs 40 --nodes 100 --then-build --then-sprt 0,5,2000n "
          "--then-sprt -1,3,10+0.1 --sprt-max-pairs 300 --seed 5 --name nightly",
          "first=spsa&params=NullR%2CLmrBase&pairs=40&nodes=100&tc=&alpha=0.602&gamma=0.101&a_ratio=0.1&then_build=1"
          "&then_sprt=0%2C5%2C2000n%0D%0A-1%2C3%2C10%2B0.1%0D%0A&sprt_max_pairs=300&pairs_per_task=8&priority=0"
          "&seed=5&name=nightly" },
        { "chain new --data-games 40 --nodes 100 --then-train --epochs 2 --batch 256 --lambda 0.5 --lr 0.002 "
          "--then-sprt 0,5,300n --sprt-max-pairs 20 --name net",
          "first=data&games=40&params=&nodes=100&tc=&random_plies=8&skip_plies=0&max_score=3000&epochs=2&batch=256"
          "&lambda=0.5&lr=0.002&then_sprt=0%2C5%2C300n&sprt_max_pairs=20&pairs_per_task=8&priority=0&seed=1"
          "&name=net" },
    };
    int64_t web_ids[2];
    for (size_t i = 0; i < sizeof SAME / sizeof *SAME; i++) {
        int64_t web_id = chain_form(cookie, csrf, SAME[i].form, &r);
        cr_assert_gt(web_id, 0, "chain %zu: %d %s", i, r.status, r.body ? r.body : "");
        char args[1024], web_rows[16384], cli_rows[16384];
        snprintf(args, sizeof args, "%s --book '%s'", SAME[i].cli, BOOK);
        int64_t cli_id = cli_new(args);
        chain_rows(web_id, web_rows, sizeof web_rows);
        chain_rows(cli_id, cli_rows, sizeof cli_rows);
        cr_assert_str_eq(web_rows, cli_rows, "chain %zu: the form's and xqf-tune's differ", i);
        web_ids[i] = web_id;
    }
    char q[256], n[32];
    snprintf(q, sizeof q, "SELECT count(*) FROM chain_stages WHERE chain_id = %" PRId64, web_ids[0]);
    sql_value(q, n, sizeof n);
    cr_assert_eq(atoi(n), 4, "spsa, build, two SPRTs: %s", n);
    /* the chains' page lists them, each stage with what it made */
    r = http("GET", "/chains", NULL, NULL);
    cr_assert_eq(r.status, 200);
    for (int i = 0; i < 2; i++) {
        char row[64];
        snprintf(row, sizeof row, "id=\"chain-%" PRId64 "\"", web_ids[i]);
        cr_assert(strstr(r.body, row), "chain %" PRId64 " is not listed", web_ids[i]);
    }
    cr_assert(strstr(r.body, "[-1, 3] at 10+0.1") && strstr(r.body, "2 epochs, batch 256") &&
              strstr(r.body, "<a href=\"/runs/"), "%.2000s", r.body);
    reply_free(&r);
    /* a bad stage: the same words from both, nothing made */
    char before[32], after[32], out[4096];
    sql_value("SELECT count(*) FROM chains", before, sizeof before);
    cr_assert_eq(chain_form(cookie, csrf, "first=spsa&params=NullR&pairs=4&nodes=100&tc=&alpha=0.602&gamma=0.101&a_ratio=0.1"
                                         "&pairs_per_task=8&priority=0&seed=1&then_sprt=0%2C5", &r), 0);
    cr_assert_eq(r.status, 400);
    cr_assert(strstr(r.body, "&#39;0,5&#39; is not ELO0,ELO1,TC") || strstr(r.body, "'0,5' is not ELO0,ELO1,TC"),
              "%.3000s", r.body);
    reply_free(&r);
    cr_assert_eq(chain_form(cookie, csrf, "first=spsa&params=NullR&pairs=4&nodes=100&tc=&alpha=0.602&gamma=0.101&a_ratio=0.1"
                                         "&pairs_per_task=8&priority=0&seed=1&then_sprt=", &r), 0);
    cr_assert(strstr(r.body, "give at least one SPRT stage"), "%.3000s", r.body);
    reply_free(&r);
    char errlog[300];
    snprintf(errlog, sizeof errlog, "%s/chain-err.log", cu_fx.dir);
    cr_assert_eq(cu_tune(out, sizeof out, "chain new --params NullR --pairs 4 --nodes 100 --then-sprt 0,5", errlog), 2);
    FILE *ef = fopen(errlog, "r");
    cr_assert(ef);
    size_t got = fread(out, 1, sizeof out - 1, ef);
    out[got] = '\0';
    fclose(ef);
    cr_assert(strstr(out, "--then-sprt: '0,5' is not ELO0,ELO1,TC"), "xqf-tune's words differ: %s", out);
    sql_value("SELECT count(*) FROM chains", after, sizeof after);
    cr_assert_str_eq(before, after, "a refused chain was made");
    /* a tester's chain waits with its first run for an admin; a viewer may make none */
    login("tess", "testerpass1", cookie, csrf);
    int64_t id = chain_form(cookie, csrf, "first=data&games=10&nodes=100&pairs_per_task=8&priority=0&seed=1&then_sprt=0%2C5%2C300n", &r);
    cr_assert_gt(id, 0, "%d %s", r.status, r.body ? r.body : "");
    snprintf(q, sizeof q, "SELECT run_id FROM chain_stages WHERE chain_id = %" PRId64 " AND idx = 0", id);
    sql_value(q, n, sizeof n);
    StoreRun run;
    load(strtoll(n, NULL, 10), &run);
    cr_assert_str_eq(run.state, "pending", "a tester's chain waits");
    login("vic", "viewerpass1", cookie, csrf);
    cr_assert_eq(chain_form(cookie, csrf, "first=data&games=10&nodes=100&pairs_per_task=8&priority=0&seed=1&then_sprt=0%2C5%2C300n", &r), 0);
    cr_assert_eq(r.status, 403);
    reply_free(&r);
}

Test(web, a_bad_setting_gets_xqf_tunes_message_from_each_form)
{
    CU_REQUIRE_DB();
    add_user("ada", "admin", "adminpass1");
    /* a book of more openings than a run holds: refused by both, not cut */
    char big[300];
    snprintf(big, sizeof big, "%s/big.book", cu_fx.dir);
    FILE *f = fopen(big, "w");
    cr_assert(f);
    /*
     * distinct positions (a book's repeated ones count once): the kings on
     * d0 and f9, two red rooks on ranks 1-4 off the f-file, two black rooks
     * on ranks 5-8 off the d-file, so that neither king is in check
     */
    int written = 0;
    for (int r1 = 0; r1 < 32 && written <= 100000; r1++)
        for (int r2 = r1 + 1; r2 < 32 && written <= 100000; r2++)
            for (int b1 = 0; b1 < 32 && written <= 100000; b1++)
                for (int b2 = b1 + 1; b2 < 32 && written <= 100000; b2++, written++) {
                    char board[10][9];
                    memset(board, 0, sizeof board);
                    board[0][3] = 'K', board[9][5] = 'k';
                    /* square q of 32: rank 1 + q / 8 (red) or 5 + q / 8 (black), a file skipping f (red) or d (black) */
                    board[1 + r1 / 8][r1 % 8 + (r1 % 8 >= 5)] = 'R';
                    board[1 + r2 / 8][r2 % 8 + (r2 % 8 >= 5)] = 'R';
                    board[5 + b1 / 8][b1 % 8 + (b1 % 8 >= 3)] = 'r';
                    board[5 + b2 / 8][b2 % 8 + (b2 % 8 >= 3)] = 'r';
                    for (int rank = 9; rank >= 0; rank--) {
                        for (int file = 0, empty = 0; file < 9; file++) {
                            if (board[rank][file] && empty)
                                fprintf(f, "%d", empty), empty = 0;
                            if (board[rank][file])
                                fputc(board[rank][file], f);
                            else if (++empty, file == 8)
                                fprintf(f, "%d", empty);
                        }
                        fputc(rank ? '/' : ' ', f);
                    }
                    fputs("w - - 0 1\n", f);
                }
    fclose(f);
    start_web((const char *const[]){ "--book", big, NULL });
    char cookie[128], csrf[128], html[1024], args[1024];
    login("ada", "adminpass1", cookie, csrf);
    int64_t before = count_runs();
    static const struct {
        const char *kind, *cli, *option, *form, *field;
    } BAD[] = {
        { "data", "data new --games 10 --nodes 100 --pairs-per-task 20", "--pairs-per-task",
          "games=10&nodes=100&tc=&pairs_per_task=20&priority=0", "pairs_per_task" },
        { "games", "games new --pairs 10 --test NullR=2 --base '' --tc 10+0.1 --tc-base 5+x", "--tc-base",
          "pairs=10&test=NullR%3D2&base=&tc=10%2B0.1&nodes=&tc_base=5%2Bx&pairs_per_task=8&priority=0", "tc_base" },
        { "games", "games new --pairs 10 --test NullR=2 --base '' --nodes 100 --threads 2 --replay 1", "--replay",
          "pairs=10&test=NullR%3D2&base=&tc=&nodes=100&threads=2&replay=1&pairs_per_task=8&priority=0", "replay" },
        { "sprt", "sprt new --test NullR=2 --base '' --nodes 100 --elo0 5 --elo1 0", "--elo1",
          "test=NullR%3D2&base=&tc=&nodes=100&elo0=5&elo1=0&alpha=0.05&beta=0.05&max_pairs=100&pairs_per_task=8"
          "&priority=0", "elo1" },
        { "data", "data new --games 10 --nodes 100 --params NoSuch=1", "--params",
          "games=10&nodes=100&tc=&params=NoSuch%3D1&pairs_per_task=8&priority=0", "params" },
        /* the adjudication's rules within the worker's bounds, from every kind's form */
        { "games", "games new --pairs 10 --test NullR=2 --base '' --nodes 100 --resign-score 100001", "--resign-score",
          "pairs=10&test=NullR%3D2&base=&tc=&nodes=100&resign_score=100001&pairs_per_task=8&priority=0",
          "resign_score" },
        { "sprt", "sprt new --test NullR=2 --base '' --nodes 100 --max-plies -1", "--max-plies",
          "test=NullR%3D2&base=&tc=&nodes=100&elo0=0&elo1=5&alpha=0.05&beta=0.05&max_pairs=100&pairs_per_task=8"
          "&priority=0&max_plies=-1", "max_plies" },
        { "spsa", "spsa new --params RookMg --pairs 10 --nodes 100 --draw-moves x", "--draw-moves",
          "params=RookMg&pairs=10&nodes=100&tc=&alpha=0.602&gamma=0.101&a_ratio=0.1&pairs_per_task=8&priority=0"
          "&draw_moves=x", "draw_moves" },
        { "data", "data new --games 10 --nodes 100 --draw-after 200000", "--draw-after",
          "games=10&nodes=100&tc=&draw_after=200000&pairs_per_task=8&priority=0", "draw_after" },
    };
    for (size_t i = 0; i < sizeof BAD / sizeof *BAD; i++) {
        Reply r;
        cr_assert_eq(form_new(BAD[i].kind, cookie, csrf, BAD[i].form, &r), 0, "%s: created", BAD[i].cli);
        cr_assert_eq(r.status, 400, "%s: %d", BAD[i].cli, r.status);
        char err[64];
        snprintf(err, sizeof err, "id=\"err-%s\">", BAD[i].field);
        const char *at = strstr(r.body, err);
        cr_assert(at, "%s: no message at field %s: %s", BAD[i].kind, BAD[i].field, r.body);
        snprintf(args, sizeof args, "%s --book '%s'", BAD[i].cli, BOOK);
        cli_message(args, BAD[i].option, html, sizeof html);
        cr_assert(strncmp(at + strlen(err), html, strlen(html)) == 0, "%s: the form says %.200s, xqf-tune %s",
                  BAD[i].cli, at + strlen(err), html);
        reply_free(&r);
    }
    /* the book: the form's message on top (no field of its own), xqf-tune's for --book */
    Reply r;
    cr_assert_eq(form_new("games", cookie, csrf, "pairs=10&test=NullR%3D2&base=&tc=&nodes=100&pairs_per_task=8&priority=0",
                          &r), 0);
    cr_assert_eq(r.status, 400);
    const char *at = strstr(r.body, "id=\"err-book\">book: ");
    cr_assert(at, "%s", r.body);
    snprintf(args, sizeof args, "games new --pairs 10 --test NullR=2 --base '' --nodes 100 --book '%s'", big);
    cli_message(args, "--book", html, sizeof html);
    cr_assert(strstr(html, "holds more than 100000 openings"), "%s", html);
    cr_assert(strncmp(at + strlen("id=\"err-book\">book: "), html, strlen(html)) == 0, "%.300s against %s", at, html);
    reply_free(&r);
    cr_assert_eq(count_runs(), before, "nothing was created");
}

/* The base side's engine, as sprt new and games new take --base-engine: an unknown one in xqf-tune's words. */
Test(web, a_base_engine_is_checked_as_xqf_tune_checks_it)
{
    CU_REQUIRE_DB();
    add_user("ada", "admin", "adminpass1");
    start_web(NULL);
    char cookie[128], csrf[128], msg[1024];
    login("ada", "adminpass1", cookie, csrf);
    int64_t before = count_runs();
    cli_message("sprt new --test-ref topic --base-engine nope --base-ref main --nodes 100", "--base-engine", msg,
                sizeof msg);
    cr_assert(strstr(msg, "no engine named &#39;nope&#39;"), "%s", msg);
    static const struct { const char *kind, *form; } FORMS[] = {
        { "sprt", "test=&base=&test_ref=topic&base_ref=main&base_engine=nope&elo0=0&elo1=5&alpha=0.05&beta=0.05"
                  "&max_pairs=100&tc=&nodes=100&pairs_per_task=8&priority=0" },
        { "games", "test=&base=&test_ref=topic&base_ref=main&base_engine=nope&pairs=10&tc=&nodes=100"
                   "&pairs_per_task=8&priority=0" },
    };
    for (size_t i = 0; i < sizeof FORMS / sizeof *FORMS; i++) {
        Reply r;
        cr_assert_eq(form_new(FORMS[i].kind, cookie, csrf, FORMS[i].form, &r), 0, "%s: created", FORMS[i].kind);
        cr_assert_eq(r.status, 400, "%s: %d", FORMS[i].kind, r.status);
        const char *at = strstr(r.body, "id=\"err-base_engine\">");
        cr_assert(at, "%s: no message at base_engine: %s", FORMS[i].kind, r.body);
        at += strlen("id=\"err-base_engine\">");
        cr_assert(strncmp(at, msg, strlen(msg)) == 0, "%s: the form says %.200s, xqf-tune %s", FORMS[i].kind, at,
                  msg);
        cr_assert(strstr(r.body, "name=\"base_engine\" value=\"nope\""), "the base engine given is kept");
        reply_free(&r);
    }
    cr_assert_eq(count_runs(), before, "nothing was created");
}

/*
 * A spec pasted in the SPSA form (Fishtest's lines, as spsa new --spec's
 * file): the run tunes those parameters with their start, bounds and end
 * hints, c_end derived when left out; a bad line is named by number, in
 * spsa new --spec's words, and nothing is created.
 */
Test(web, an_spsa_spec_pasted_in_the_form_makes_the_run)
{
    CU_REQUIRE_DB();
    add_user("ada", "admin", "adminpass1");
    start_web(NULL);
    char cookie[128], csrf[128], msg[1024];
    login("ada", "adminpass1", cookie, csrf);
    int64_t before = count_runs();
    /* line 2 names an option our engine lacks */
    char path[300];
    snprintf(path, sizeof path, "%s/bad.spec", cu_fx.dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("RookMg, int, 1500, 1000, 2000\nNoSuch, int, 1, 0, 2\n", f);
    fclose(f);
    char args[600];
    snprintf(args, sizeof args, "spsa new --spec '%s' --pairs 10 --nodes 100 --book '%s'", path,
             XQF_SOURCE_DIR "/ops/books/default.book");
    cli_message(args, NULL, msg, sizeof msg);
    const char *line = strstr(msg, "line 2: ");
    cr_assert(line && strstr(line, "NoSuch"), "xqf-tune names the line: %s", msg);
    Reply r;
    cr_assert_eq(form_new("spsa", cookie, csrf,
                          "name=s&params=&spec=RookMg%2C+int%2C+1500%2C+1000%2C+2000%0ANoSuch%2C+int%2C+1%2C+0%2C+2"
                          "&pairs=10&alpha=0.602&gamma=0.101&a_ratio=0.1&tc=&nodes=100&pairs_per_task=2&priority=0",
                          &r),
                 0, "a bad spec made a run");
    cr_assert_eq(r.status, 400);
    const char *at = strstr(r.body, "id=\"err-spec\">");
    cr_assert(at, "no message at the spec: %s", r.body);
    at += strlen("id=\"err-spec\">");
    cr_assert(strncmp(at, line, strlen(line)) == 0, "the form says %.200s, xqf-tune %s", at, line);
    cr_assert(strstr(r.body, "NoSuch, int, 1, 0, 2</textarea>"), "the spec given is kept");
    reply_free(&r);
    cr_assert_eq(count_runs(), before, "nothing was created");

    /* a good one: RookMg's c_end derived ((2000 - 1000) / 20), HorseMg's hints as given */
    int64_t id = form_new("spsa", cookie, csrf,
                          "name=s&spec=%23+tuned%0ARookMg%2C+int%2C+1500%2C+1000%2C+2000%0A"
                          "HorseMg%2C+int%2C+600%2C+500%2C+700%2C+4%2C+0.003%0A"
                          "&pairs=10&alpha=0.602&gamma=0.101&a_ratio=0.1&tc=&nodes=100&pairs_per_task=2&priority=0",
                          &r);
    cr_assert_gt(id, 0, "%d %s", r.status, r.status == 303 ? "" : r.body);
    StoreSpsa *st = malloc(sizeof *st);
    cr_assert(st);
    cr_assert_eq(store_spsa_load(cu_fx.store, id, st), 1);
    cr_assert_eq(st->count, 2);
    cr_assert_str_eq(st->params[0].name, "RookMg");
    cr_assert(st->params[0].start == 1500 && st->params[0].theta == 1500 && st->params[0].min == 1000 &&
              st->params[0].max == 2000, "RookMg's start and bounds");
    cr_assert_float_eq(st->params[0].c_end, 50.0, 1e-9, "RookMg's c_end derived: %g", st->params[0].c_end);
    cr_assert_float_eq(st->params[0].r_end, XQF_SPSA_SPEC_R_END, 1e-12);
    cr_assert_str_eq(st->params[1].name, "HorseMg");
    cr_assert(st->params[1].start == 600 && st->params[1].min == 500 && st->params[1].max == 700);
    cr_assert_float_eq(st->params[1].c_end, 4.0, 1e-9);
    cr_assert_float_eq(st->params[1].r_end, 0.003, 1e-12);
    free(st);
    /* the comma list and a spec together: one or the other */
    cr_assert_eq(form_new("spsa", cookie, csrf,
                          "name=s&params=RookMg&spec=RookMg%2C+int%2C+1500%2C+1000%2C+2000"
                          "&pairs=10&alpha=0.602&gamma=0.101&a_ratio=0.1&tc=&nodes=100&pairs_per_task=2&priority=0",
                          &r),
                 0);
    cr_assert(r.status == 400 && strstr(r.body, "give the parameters or a spec, not both"), "%s", r.body);
    reply_free(&r);
    cr_assert_eq(count_runs(), before + 1);
}

/* A shell command in the test's folder (stdout into out, stderr to the log). Exit status. */
static int sh_in_dir(char *out, size_t size, const char *cmd)
{
    char full[4096];
    snprintf(full, sizeof full, "cd '%s' && { %s ; }", cu_fx.dir, cmd);
    return cu_sh(out, size, full, cu_fx.logfile);
}

/*
 * Another engine's SPSA from the form (spsa new --engine NAME --ref REF
 * --spec FILE): the form makes the run waiting for the build of its ref;
 * the builder (build --serve, as its role) builds it, checks the spec's
 * names against the options the build lists and gives the build both
 * sides; signed, the run starts.  Its stored row and tuned options are
 * those xqf-tune makes of the same inputs (the same commit builds the same
 * bytes: the same build), save built_state, which says it waited for a
 * build.  A bad spec line is named in the form's field in xqf-tune's
 * words; a name the build lacks fails the build request with the CLI's
 * message.
 */
Test(web, another_engines_spsa_from_the_form_is_xqf_tunes_run, .timeout = 240)
{
    CU_REQUIRE_DB();
    char commit[41], out[4096], args[2048], fields[2048], msg[1024];
    cr_assert_eq(cu_toy_engine(commit), 0, "the toy engine (see %s)", cu_fx.logfile);
    add_user("ada", "admin", "adminpass1");
    start_web((const char *const[]){ "--book", BOOK, NULL });
    char cookie[128], csrf[128];
    login("ada", "adminpass1", cookie, csrf);
    int64_t before = count_runs();

    /* a bad line: the form's spec field says what spsa new --engine --spec says, nothing is made */
    cr_assert_eq(sh_in_dir(out, sizeof out, "printf 'NullR, int, 3, 1, 6\\nNullMargin, int, 700, 0, 600\\n' > bad.spec"), 0);
    snprintf(args, sizeof args, "spsa new --engine toy --ref %s --spec '%s/bad.spec' --pairs 8 --nodes 1000 --book '%s'",
             commit, cu_fx.dir, BOOK);
    cli_message(args, NULL, msg, sizeof msg);
    const char *line = strstr(msg, "line 2: ");
    cr_assert(line && strstr(line, "NullMargin: start 700 is outside [0, 600]"), "%s", msg);
    Reply r;
    snprintf(fields, sizeof fields, "name=t&engine=toy&ref=%s&params=&spec=NullR%%2C+int%%2C+3%%2C+1%%2C+6%%0A"
             "NullMargin%%2C+int%%2C+700%%2C+0%%2C+600&pairs=8&alpha=0.602&gamma=0.101&a_ratio=0.1&tc=&nodes=1000"
             "&pairs_per_task=2&priority=0&seed=5", commit);
    cr_assert_eq(form_new("spsa", cookie, csrf, fields, &r), 0, "a bad spec made a run");
    cr_assert_eq(r.status, 400);
    const char *at = strstr(r.body, "id=\"err-spec\">");
    cr_assert(at, "no message at the spec: %s", r.body);
    cr_assert(strncmp(at + strlen("id=\"err-spec\">"), line, strlen(line)) == 0, "the form says %.200s, xqf-tune %s",
              at, line);
    cr_assert(strstr(r.body, "name=\"engine\" value=\"toy\" list=\"engines\""), "the engine given is kept");
    const char *offered = strstr(r.body, "<datalist id=\"engines\">");
    cr_assert(offered && strstr(offered, "<option value=\"toy\">") &&
                  strstr(offered, "<option value=\"toy\">") < strstr(offered, "</datalist>"),
              "the records are offered");
    reply_free(&r);
    /* another engine's options come from a spec, with a ref to build */
    snprintf(fields, sizeof fields, "name=t&engine=toy&ref=%s&params=NullR&spec=&pairs=8&tc=&nodes=1000"
             "&pairs_per_task=2&priority=0", commit);
    cr_assert_eq(form_new("spsa", cookie, csrf, fields, &r), 0);
    cr_assert(r.status == 400 && strstr(r.body, "id=\"err-params\">the parameter names are our engine&#39;s"), "%s",
              r.body);
    reply_free(&r);
    cr_assert_eq(form_new("spsa", cookie, csrf, "name=t&engine=toy&ref=&spec=NullR%2C+3%2C+1%2C+6&pairs=8&tc="
                          "&nodes=1000&pairs_per_task=2&priority=0", &r), 0);
    cr_assert_eq(sh_in_dir(out, sizeof out, "printf 'NullR, int, 3, 1, 6\\n' > one.spec"), 0);
    snprintf(args, sizeof args, "spsa new --engine toy --spec '%s/one.spec' --pairs 8 --nodes 1000 --book '%s'",
             cu_fx.dir, BOOK);
    cli_message(args, "--engine", msg, sizeof msg);
    cr_assert(strstr(msg, "engine toy plays its builds: give a ref"), "%s", msg);
    at = strstr(r.body, "id=\"err-engine\">");
    cr_assert(r.status == 400 && at && strncmp(at + strlen("id=\"err-engine\">"), msg, strlen(msg)) == 0,
              "the form says %.200s, xqf-tune %s", at ? at : r.body, msg);
    reply_free(&r);
    cr_assert_eq(count_runs(), before, "nothing was created");

    /* a good spec: the run waits for the build of its ref, both sides to play it */
    static const char SPEC[] = "NullR, int, 3, 1, 6, 0.5, 0.002\nNullMargin, int, 2, 0, 600\nNullMarginDepth, 2, 0, 100\n";
    snprintf(fields, sizeof fields, "name=t&engine=toy&ref=%s&params=&spec=NullR%%2C+int%%2C+3%%2C+1%%2C+6%%2C+0.5"
             "%%2C+0.002%%0ANullMargin%%2C+int%%2C+2%%2C+0%%2C+600%%0ANullMarginDepth%%2C+2%%2C+0%%2C+100%%0A"
             "&pairs=8&alpha=0.602&gamma=0.101&a_ratio=0.1&tc=&nodes=1000&pairs_per_task=2&priority=0&seed=5", commit);
    int64_t web_id = form_new("spsa", cookie, csrf, fields, &r);
    cr_assert_gt(web_id, 0, "%d %s", r.status, r.status == 303 ? "" : r.body);
    StoreRun run;
    load(web_id, &run);
    cr_assert_str_eq(run.state, "building", "it waits for its build");
    StoreBuildRequest *q = NULL;
    cr_assert_eq(store_build_requests(cu_fx.store, web_id, &q), 1, "one request: the build plays both sides");
    cr_assert(strcmp(q[0].side, "test") == 0 && strcmp(q[0].ref, commit) == 0);
    free(q);
    snprintf(args, sizeof args, "'%s/xqf-tune' build --serve --out builds --db '%s' && '%s/xqf-tune' build "
             "--sign-serve --sign-key operator.key --db '%s'", XQF_BIN, cu_fx.db_builder, XQF_BIN, cu_fx.db_signer);
    cr_assert_eq(sh_in_dir(out, sizeof out, args), 0, "%s (see %s)", out, cu_fx.logfile);
    load(web_id, &run);
    cr_assert_str_eq(run.state, "active", "built and signed, it runs: %s", out);
    cr_assert(run.build0[0] && strcmp(run.build0, run.build1) == 0, "both sides play the build: %s %s", run.build0,
              run.build1);

    /* xqf-tune of the same inputs: the same stored run and tuned options */
    snprintf(args, sizeof args, "printf '%s' > good.spec", SPEC);
    cr_assert_eq(sh_in_dir(out, sizeof out, args), 0);
    snprintf(args, sizeof args, "spsa new --engine toy --ref %s --spec '%s/good.spec' --sign-key '%s/operator.key' "
             "--pairs 8 --nodes 1000 --pairs-per-task 2 --seed 5 --name t --book '%s'",
             commit, cu_fx.dir, cu_fx.dir, BOOK);
    int64_t cli_id = cli_new(args);
    char web_row[8192], cli_row[8192];
    run_row_less(web_id, "- 'built_state'", web_row, sizeof web_row);
    run_row_less(cli_id, "- 'built_state'", cli_row, sizeof cli_row);
    cr_assert_str_eq(web_row, cli_row, "the form's run and xqf-tune's differ");
    StoreSpsa *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    cr_assert(a && b);
    cr_assert_eq(store_spsa_load(cu_fx.store, web_id, a), 1);
    cr_assert_eq(store_spsa_load(cu_fx.store, cli_id, b), 1);
    cr_assert_eq(a->count, 3);
    cr_assert_eq(a->count, b->count);
    for (int i = 0; i < a->count; i++)
        cr_assert(strcmp(a->params[i].name, b->params[i].name) == 0 && a->params[i].start == b->params[i].start &&
                      a->params[i].min == b->params[i].min && a->params[i].max == b->params[i].max &&
                      a->params[i].c_end == b->params[i].c_end && a->params[i].r_end == b->params[i].r_end,
                  "option %d differs: %s", i, a->params[i].name);
    cr_assert_float_eq(a->params[1].c_end, 30, 1e-9, "NullMargin's c_end derived: (600 - 0) / 20");
    free(a);
    free(b);

    /* a name the build does not list: the builder fails the request with xqf-tune's words */
    snprintf(fields, sizeof fields, "name=u&engine=toy&ref=%s&spec=NoSuchOption%%2C+int%%2C+3%%2C+1%%2C+6&pairs=8"
             "&alpha=0.602&gamma=0.101&a_ratio=0.1&tc=&nodes=1000&pairs_per_task=2&priority=0", commit);
    int64_t bad = form_new("spsa", cookie, csrf, fields, &r);
    cr_assert_gt(bad, 0, "%d %s", r.status, r.status == 303 ? "" : r.body);
    snprintf(args, sizeof args, "'%s/xqf-tune' build --serve --out builds --db '%s'", XQF_BIN, cu_fx.db_builder);
    cr_assert_eq(sh_in_dir(out, sizeof out, args), 0, "%s", out);
    load(bad, &run);
    cr_assert_str_eq(run.state, "failed");
    cr_assert_eq(store_build_requests(cu_fx.store, bad, &q), 1);
    cr_assert(strstr(q[0].error, "the spec: engine toy (build ") && strstr(q[0].error, "has no option 'NoSuchOption'"),
              "%s", q[0].error);
    free(q);
}

/*
 * xqf-tune's exit status for args and what it said, as a page escapes it:
 * its error's text after "error: VERB: " (a refusal), or its output (done).
 */
static int tune_said(const char *verb, const char *args, char *html, size_t size)
{
    char cmd[2048], out[2048] = "", prefix[64];
    snprintf(cmd, sizeof cmd, "'%s/xqf-tune' %s %s --db '%s' 2>&1", XQF_BIN, verb, args, cu_fx.db);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int status = WEXITSTATUS(pclose(p));
    snprintf(prefix, sizeof prefix, "error: %s: ", verb);
    const char *m = strstr(out, prefix);
    m = m ? m + strlen(prefix) : out;
    size_t k = 0;
    for (; *m && *m != '\n' && k + 6 < size; m++)
        k += (size_t)snprintf(html + k, size - k, "%s", *m == '\'' ? "&#39;" : (char[2]){ *m, 0 });
    html[k] = '\0';
    return status;
}

/* POSTs form (after the CSRF token) to /runs/RUN/VERB as cookie's session: its status, the body in *r. */
static Reply act(int64_t run, const char *verb, const char *cookie, const char *csrf, const char *form)
{
    char path[64], body[512];
    snprintf(path, sizeof path, "/runs/%" PRId64 "/%s", run, verb);
    snprintf(body, sizeof body, "csrf=%s%s%s", csrf, form && *form ? "&" : "", form ? form : "");
    return http("POST", path, cookie, body);
}

/* Asserts that the page says what xqf-tune said. */
#define SAME_WORDS(r, said) cr_assert(strstr((r).body, said), "the web's words differ from xqf-tune's '%s': %s", said, (r).body)

Test(web, each_verb_on_a_run_is_the_run_services_from_either_front_end)
{
    CU_REQUIRE_DB();
    add_user("ada", "admin", "adminpass1");
    add_user("tess", "tester", "testpass1");
    add_user("tom", "tester", "testpass2");
    start_web(NULL);
    char acookie[128], acsrf[128], tcookie[128], tcsrf[128], ocookie[128], ocsrf[128], said[1024], args[256];
    login("ada", "adminpass1", acookie, acsrf);
    login("tess", "testpass1", tcookie, tcsrf);
    login("tom", "testpass2", ocookie, ocsrf);
    /* a pair of like runs, one for each front end */
    int64_t cli = cu_sprt_of(cu_fx.store, "tess", true, "NullR=2", 4, 100, 300, 0, 5);
    int64_t onweb = cu_sprt_of(cu_fx.store, "tess", true, "NullR=2", 4, 100, 300, 0, 5);
    StoreRun a, b;

    /* approve: both active, recorded; again: refused by its state, in the same words */
    snprintf(args, sizeof args, "%" PRId64, cli);
    cr_assert_eq(tune_said("approve", args, said, sizeof said), 0, "%s", said);
    Reply r = act(onweb, "approve", tcookie, tcsrf, NULL);
    cr_assert_eq(r.status, 403, "a tester approves nothing, not even their own run");
    reply_free(&r);
    r = act(onweb, "approve", acookie, acsrf, NULL);
    cr_assert_eq(r.status, 303);
    reply_free(&r);
    load(cli, &a), load(onweb, &b);
    cr_assert(strcmp(a.state, "active") == 0 && strcmp(b.state, "active") == 0, "%s %s", a.state, b.state);
    cr_assert_eq(tune_said("approve", args, said, sizeof said), 2, "approved twice");
    r = act(cli, "approve", acookie, acsrf, NULL);
    cr_assert_eq(r.status, 409);
    SAME_WORDS(r, said);
    reply_free(&r);

    /* modify: the same change from either side; bad values and no such run refused in the same words */
    snprintf(args, sizeof args, "%" PRId64 " --priority 3 --max-pairs 200 --throughput 50", cli);
    cr_assert_eq(tune_said("modify", args, said, sizeof said), 0, "%s", said);
    r = act(onweb, "modify", acookie, acsrf, "priority=3&max_pairs=200&pairs_per_task=4&throughput=50");
    cr_assert_eq(r.status, 303);
    reply_free(&r);
    load(cli, &a), load(onweb, &b);
    cr_assert(a.priority == 3 && b.priority == 3 && a.max_pairs == 200 && b.max_pairs == 200 &&
              a.throughput == 50 && b.throughput == 50, "cli %d %" PRId64 " %d, web %d %" PRId64 " %d", a.priority,
              a.max_pairs, a.throughput, b.priority, b.max_pairs, b.throughput);
    r = act(onweb, "modify", tcookie, tcsrf, "priority=9&max_pairs=200&pairs_per_task=4");
    cr_assert_eq(r.status, 403, "a tester modifies nothing");
    reply_free(&r);
    cr_assert_eq(tune_said("modify", "999999 --priority 1", said, sizeof said), 2);
    r = act(999999, "modify", acookie, acsrf, "priority=1&max_pairs=200&pairs_per_task=4");
    cr_assert_eq(r.status, 404);
    SAME_WORDS(r, "no run 999999");
    cr_assert(strstr(said, "no run 999999"), "%s", said);
    reply_free(&r);
    r = act(onweb, "modify", acookie, acsrf, "priority=3&max_pairs=200&pairs_per_task=4&throughput=5000");
    cr_assert_eq(r.status, 400);
    cr_assert(strstr(r.body, "throughput is a share of the game pairs in percent, 1..1000"), "%s", r.body);
    reply_free(&r);
    load(onweb, &b);
    cr_assert_eq(b.throughput, 50, "a refused change changes nothing");

    /* purge: an unknown worker refused in the same words */
    snprintf(args, sizeof args, "%" PRId64 " --worker nobody", cli);
    cr_assert_eq(tune_said("purge", args, said, sizeof said), 2);
    r = act(cli, "purge", acookie, acsrf, "worker=nobody");
    cr_assert_eq(r.status, 400);
    SAME_WORDS(r, said);
    reply_free(&r);

    /* stop: another tester may not; the owner and xqf-tune may; again: refused in the same words */
    r = act(onweb, "stop", ocookie, ocsrf, NULL);
    cr_assert_eq(r.status, 403, "not the owner");
    cr_assert(strstr(r.body, "tom may not stop run"), "%s", r.body);
    reply_free(&r);
    snprintf(args, sizeof args, "%" PRId64, cli);
    cr_assert_eq(tune_said("stop", args, said, sizeof said), 0, "%s", said);
    r = act(onweb, "stop", tcookie, tcsrf, NULL);
    cr_assert_eq(r.status, 303);
    reply_free(&r);
    load(cli, &a), load(onweb, &b);
    cr_assert(strcmp(a.state, "stopped") == 0 && strcmp(b.state, "stopped") == 0);
    cr_assert(strncmp(a.verdict, "stopped by xqf-tune:", 20) == 0 && strcmp(b.verdict, "stopped by tess") == 0,
              "%s / %s", a.verdict, b.verdict);
    cr_assert_eq(tune_said("stop", args, said, sizeof said), 2, "stopped twice");
    r = act(cli, "stop", acookie, acsrf, NULL);
    cr_assert_eq(r.status, 409);
    SAME_WORDS(r, said);
    reply_free(&r);
    cr_assert_eq(tune_said("stop", "999999", said, sizeof said), 2);
    r = act(999999, "stop", acookie, acsrf, NULL);
    cr_assert_eq(r.status, 404);
    SAME_WORDS(r, said);
    reply_free(&r);

    /* each verb in each run's history, whoever did it */
    StoreHistory *h;
    int n = store_run_history(cu_fx.store, cli, &h);
    bool seen[3] = { false };
    for (int i = 0; i < n; i++)
        for (int v = 0; v < 3; v++)
            seen[v] |= strcmp(h[i].action, (const char *[]){ "approve", "modify", "stop" }[v]) == 0 &&
                       strncmp(h[i].actor, "xqf-tune:", 9) == 0;
    free(h);
    cr_assert(seen[0] && seen[1] && seen[2], "xqf-tune's approve, modify and stop are in the history");

    /*
     * the events log: each verb done wrote its row, and no refusal wrote
     * one (onweb's were refused five times: a tester's approve and modify,
     * a throughput out of range, another tester's stop, a second stop)
     */
    char path[96];
    snprintf(path, sizeof path, "/log?run=%" PRId64, onweb);
    r = http("GET", path, NULL, NULL);
    cr_assert_eq(r.status, 200);
    int rows = 0;
    for (const char *p = r.body; (p = strstr(p, "<td>run</td>")); p++)
        rows++;
    cr_assert_eq(rows, 4, "approve, modify (its throughput, its limits) and stop, nothing refused: %s", r.body);
    const char *ap = strstr(r.body, "<td>ada</td><td>run</td><td>approve</td>"),
               *mo = strstr(r.body, "<td>ada</td><td>run</td><td>modify</td><td>priority 0 -&gt; 3, max pairs 100 -&gt; 200<"),
               *st = strstr(r.body, "<td>tess</td><td>run</td><td>stop</td>");
    cr_assert(ap && mo && st && st < mo && mo < ap, "newest first, who and the old and new values: %s", r.body);
    reply_free(&r);
    snprintf(args, sizeof args, "--run %" PRId64, cli);
    char out[4096], cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s/xqf-tune' log %s --db '%s' 2>&1", XQF_BIN, args, cu_fx.db);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t got = fread(out, 1, sizeof out - 1, p);
    out[got] = '\0';
    cr_assert_eq(WEXITSTATUS(pclose(p)), 0, "%s", out);
    cr_assert(strstr(out, " approve ") && strstr(out, " modify ") && strstr(out, " stop ") &&
              strstr(out, "xqf-tune:"), "xqf-tune log lists xqf-tune's verbs: %s", out);
    cr_assert_eq(status_of("GET", "/log?of=bogus", NULL, NULL), 400);
    cr_assert_eq(status_of("GET", "/log?of=login", NULL, NULL), 400, "sign-ins are an admin's to see");
    r = http("GET", "/log", NULL, NULL);
    cr_assert(r.status == 200 && !strstr(r.body, "<td>login</td>"), "no sign-in in a visitor's log");
    reply_free(&r);
    r = http("GET", "/log?of=login", acookie, NULL);
    cr_assert(r.status == 200 && strstr(r.body, "<td>ada</td><td>login</td><td>login</td>"), "an admin's: %s", r.body);
    reply_free(&r);
}

/* ---- nets: the page, uploads, approval, downloads ------------------------------------ */

/* A net file of random weights (cu_random_net), its bytes (malloc'd) and their count. */
static uint8_t *net_bytes(const char *name, uint64_t seed, size_t *len)
{
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/%s", cu_fx.dir, name);
    cr_assert_eq(cu_random_net(path, seed, err, sizeof err), 0, "%s", err);
    FILE *f = fopen(path, "rb");
    cr_assert(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    uint8_t *b = malloc(*len);
    cr_assert_eq(fread(b, 1, *len, f), *len);
    fclose(f);
    return b;
}

/*
 * The upload form's POST, as a browser sends it (multipart/form-data): the
 * CSRF token, the name and provenance fields (NULL: left out) and the file
 * (NULL: none).
 */
static Reply upload(const char *cookie, const char *csrf, const char *name, const char *provenance,
                    const uint8_t *file, size_t len)
{
    static const char B[] = "xqfBoundary7MA4YWxkTrZu0gW";
    size_t cap = len + 8192, n = 0;
    char *body = malloc(cap);
    const char *names[3] = { "csrf", "name", "provenance" }, *values[3] = { csrf, name, provenance };
    for (int i = 0; i < 3; i++)
        if (values[i])
            n += (size_t)snprintf(body + n, cap - n, "--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n",
                                  B, names[i], values[i]);
    if (file) {
        n += (size_t)snprintf(body + n, cap - n, "--%s\r\nContent-Disposition: form-data; name=\"net\"; "
                              "filename=\"up.nnue\"\r\nContent-Type: application/octet-stream\r\n\r\n", B);
        memcpy(body + n, file, len);
        n += len;
        n += (size_t)snprintf(body + n, cap - n, "\r\n");
    }
    n += (size_t)snprintf(body + n, cap - n, "--%s--\r\n", B);
    char *req = malloc(n + 1024);
    int h = sprintf(req, "POST /nets HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nCookie: xqf_session=%s\r\n"
                         "Content-Type: multipart/form-data; boundary=%s\r\nContent-Length: %zu\r\n\r\n",
                    cookie ? cookie : "", B, n);
    memcpy(req + h, body, n);
    Reply r = raw(req, (size_t)h + n);
    free(req);
    free(body);
    return r;
}

static int count_nets(void)
{
    StoreNet *nets = NULL;
    int n = store_list_nets(cu_fx.store, &nets);
    free(nets);
    return n;
}

/* xqf-tune with args (--db added), its stdout and stderr in out: the exit status. */
static int tune_all(char *out, size_t size, const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "('%s/xqf-tune' %s --db '%s' 2>&1)", XQF_BIN, args, cu_fx.db);
    return cu_sh(out, size, cmd, cu_fx.logfile);
}

Test(web, nets_are_uploaded_approved_and_downloaded)
{
    CU_REQUIRE_DB();
    add_user("ada", "admin", "adminpass1");
    add_user("tess", "tester", "testerpass1");
    add_user("vic", "viewer", "viewerpass1");
    start_web(NULL);
    size_t len;
    uint8_t *bytes = net_bytes("a.nnue", 11, &len);
    char sha[SHA256_HEX_LEN + 1], text[512];
    cr_assert_eq(sha256_memory(bytes, len, sha), 0);

    /* the list, empty, with our engine's default net by its SHA-256 */
    Reply r = http("GET", "/nets", NULL, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "No nets yet."), "%s", r.body);
    size_t dlen = 0;
    const uint8_t *def = nnue_default_data(&dlen);
    if (def) {
        char dsha[SHA256_HEX_LEN + 1];
        sha256_memory(def, dlen, dsha);
        snprintf(text, sizeof text, "<code title=\"%s\">%.12s</code>", dsha, dsha);
        cr_assert(strstr(r.body, text), "the default net's SHA-256: %s", r.body);
    }
    cr_assert_null(strstr(r.body, "id=\"net-upload\""), "a visitor sees no upload form");
    reply_free(&r);

    char vcookie[128], vcsrf[128], tcookie[128], tcsrf[128], acookie[128], acsrf[128];
    login("vic", "viewerpass1", vcookie, vcsrf);
    login("tess", "testerpass1", tcookie, tcsrf);
    login("ada", "adminpass1", acookie, acsrf);
    r = upload(vcookie, vcsrf, "vic.nnue", NULL, bytes, len);
    cr_assert_eq(r.status, 403, "a viewer may not upload: %d", r.status);
    reply_free(&r);
    cr_assert_eq(count_nets(), 0);

    /* a tester's upload: stored as it came, waiting */
    r = http("GET", "/nets", tcookie, NULL);
    cr_assert(strstr(r.body, "id=\"net-upload\"") && strstr(r.body, "enctype=\"multipart/form-data\""),
              "a tester's form: %s", r.body);
    reply_free(&r);
    r = upload(tcookie, tcsrf, "tess-a.nnue", "data: run 5 <b>; trainer: xqf-tune nnue train, 10 epochs", bytes, len);
    cr_assert_eq(r.status, 200, "%d %s", r.status, r.body);
    cr_assert(strstr(r.body, "Uploaded tess-a.nnue: it waits for an admin"), "%s", r.body);
    reply_free(&r);
    StoreNet net;
    cr_assert_eq(store_load_net(cu_fx.store, "tess-a.nnue", &net), 1);
    cr_assert(!net.approved && strcmp(net.sha256, sha) == 0 && net.size == (int64_t)len);
    cr_assert_str_eq(net.added_by, "tess");
    cr_assert_str_eq(net.signature, "");

    r = http("GET", "/nets", NULL, NULL);
    cr_assert_eq(r.status, 200);
    snprintf(text, sizeof text, "<code title=\"%s\">%.12s</code>", sha, sha);
    cr_assert(strstr(r.body, "<tr id=\"net-tess-a.nnue\"><td>tess-a.nnue</td>") && strstr(r.body, text),
              "its row, the SHA-256 short with the full one in its title: %s", r.body);
    cr_assert(strstr(r.body, "data: run 5 &lt;b&gt;; trainer"), "the provenance, escaped: %s", r.body);
    cr_assert(strstr(r.body, "net-state waiting") && !strstr(r.body, "/nets/tess-a.nnue/download"),
              "waiting, and no file for a visitor: %s", r.body);
    cr_assert_null(strstr(r.body, "/approve"), "no approval button but an admin's");
    reply_free(&r);

    /* not downloadable but by an admin, not fetched by workers, not named by a run */
    cr_assert_eq(status_of("GET", "/nets/tess-a.nnue/download", NULL, NULL), 403);
    cr_assert_eq(status_of("GET", "/nets/tess-a.nnue/download", vcookie, NULL), 403);
    cr_assert_eq(status_of("GET", "/nets/nosuch.nnue/download", acookie, NULL), 404);
    r = http("GET", "/nets/tess-a.nnue/download", acookie, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(r.len == len && memcmp(r.body, bytes, len) == 0, "an admin reviews the bytes uploaded");
    reply_free(&r);
    char cname[STORE_NAME_MAX + 1], csig[STORE_SIG_HEX + 1];
    uint8_t chunk[64];
    size_t got;
    int64_t total;
    cr_assert_eq(store_net_chunk(cu_fx.store, sha, 0, sizeof chunk, chunk, &got, &total, cname, csig), 0,
                 "the coordinator serves no waiting net");
    int64_t runs = count_runs();
    char out[4096];
    cr_assert_eq(tune_all(out, sizeof out, "sprt new --test-net tess-a.nnue --nodes 300 --max-pairs 4"), 2, "%s", out);
    cr_assert(strstr(out, "waits for an admin's approval"), "%s", out);
    cr_assert_eq(count_runs(), runs, "no run names a waiting net");

    /* the approval: an admin's only, once, audited */
    snprintf(text, sizeof text, "csrf=%s", tcsrf);
    cr_assert_eq(status_of("POST", "/nets/tess-a.nnue/approve", tcookie, text), 403, "a tester may not approve");
    cr_assert_eq(store_load_net(cu_fx.store, "tess-a.nnue", &net), 1);
    cr_assert(!net.approved);
    r = http("GET", "/nets", acookie, NULL);
    cr_assert(strstr(r.body, "action=\"/nets/tess-a.nnue/approve\"") && strstr(r.body, "/nets/tess-a.nnue/download"),
              "an admin's button and file: %s", r.body);
    reply_free(&r);
    snprintf(text, sizeof text, "csrf=%s", acsrf);
    cr_assert_eq(status_of("POST", "/nets/tess-a.nnue/approve", acookie, text), 303);
    cr_assert_eq(status_of("POST", "/nets/tess-a.nnue/approve", acookie, text), 409, "approved already");
    cr_assert_eq(status_of("POST", "/nets/nosuch.nnue/approve", acookie, text), 404);
    cr_assert_eq(store_load_net(cu_fx.store, "tess-a.nnue", &net), 1);
    cr_assert(net.approved);
    cr_assert_str_eq(net.approved_by, "ada");
    sql_value("SELECT string_agg(actor || ' ' || action, ',' ORDER BY id) FROM web_audit WHERE action LIKE 'net %'",
              text, sizeof text);
    cr_assert_str_eq(text, "tess net upload,ada net approve\n");

    /* approved: anyone's download, the bytes uploaded; workers fetch it; a run names it */
    r = http("GET", "/nets/tess-a.nnue/download", NULL, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.head, "Content-Disposition: attachment; filename=\"tess-a.nnue\"") &&
              strstr(r.head, "Content-Type: application/octet-stream"), "%s", r.head);
    cr_assert(r.len == len && memcmp(r.body, bytes, len) == 0, "the download is the upload, byte for byte");
    reply_free(&r);
    cr_assert_eq(store_net_chunk(cu_fx.store, sha, 0, sizeof chunk, chunk, &got, &total, cname, csig), 1);
    cr_assert(total == (int64_t)len && got == sizeof chunk && memcmp(chunk, bytes, got) == 0);
    cr_assert_eq(tune_all(out, sizeof out, "sprt new --test-net tess-a.nnue --nodes 300 --max-pairs 4"), 0, "%s", out);
    cr_assert_eq(count_runs(), runs + 1);
    StoreRun *list = NULL;
    cr_assert_gt(store_list_runs(cu_fx.store, 1, &list), 0);
    int64_t run = list[0].id;
    free(list);
    r = http("GET", "/nets", NULL, NULL);
    snprintf(text, sizeof text, "<span class=\"net-runs\">1</span><ul class=\"net-run-list\"><li><a href=\"/runs/%"
             PRId64 "\">%" PRId64 "</a> ", run, run);
    cr_assert(strstr(r.body, text) && strstr(r.body, "<span class=\"net-state\">approved</span> by ada"),
              "the run that named it, linked: %s", r.body);
    reply_free(&r);
    free(bytes);
}

Test(web, bad_net_uploads_are_refused_and_store_nothing)
{
    CU_REQUIRE_DB();
    add_user("tess", "tester", "testerpass1");
    start_web(NULL);
    char cookie[128], csrf[128];
    login("tess", "testerpass1", cookie, csrf);
    size_t len, len_b;
    uint8_t *a = net_bytes("a.nnue", 21, &len), *b = net_bytes("b.nnue", 22, &len_b);
    Reply r = upload(cookie, csrf, "first.nnue", NULL, a, len);
    cr_assert_eq(r.status, 200, "%d %s", r.status, r.body);
    reply_free(&r);
    cr_assert_eq(count_nets(), 1);

    /* each refusal: its status, its reason on the page, nothing stored */
    static const char NOT_A_NET[] = "\x89PNG\r\n\x1a\n this is an image, not a net";
    int64_t max = (int64_t)NNUE_HEADER_BYTES + NNUE_DESCRIPTION_MAX + NNUE_BODY_BYTES;
    uint8_t *big = calloc(1, (size_t)max + 1);
    memcpy(big, b, len_b);
    const struct {
        const char *what, *name;
        const uint8_t *file;
        size_t len;
        int status;
        const char *says;
    } BAD[] = {
        { "truncated", "cut.nnue", b, len_b / 2, 400, "not a net the engine takes" },
        { "another format", "png.nnue", (const uint8_t *)NOT_A_NET, sizeof NOT_A_NET - 1, 400,
          "not a net the engine takes" },
        { "over the size cap", "big.nnue", big, (size_t)max + 1, 413, "larger than a net file may be" },
        { "a duplicate", "again.nnue", a, len, 409, "the same file is net first.nnue already" },
        { "a name taken", "first.nnue", b, len_b, 409, "the name first.nnue is taken" },
        { "a bad name", "bad name/..", b, len_b, 400, "the name: 1 to 64 letters" },
        { "no file", "nofile.nnue", NULL, 0, 400, "choose a net file" },
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        r = upload(cookie, csrf, BAD[i].name, NULL, BAD[i].file, BAD[i].len);
        cr_assert_eq(r.status, BAD[i].status, "%s: %d %s", BAD[i].what, r.status, r.body);
        cr_assert(strstr(r.body, BAD[i].says), "%s: %s", BAD[i].what, r.body);
        reply_free(&r);
        cr_assert_eq(count_nets(), 1, "%s: nothing stored", BAD[i].what);
    }
    r = upload(cookie, "0000", "nocsrf.nnue", NULL, b, len_b);
    cr_assert_eq(r.status, 403, "the form's CSRF token is checked");
    reply_free(&r);
    r = upload(cookie, csrf, NULL, NULL, b, len_b);
    cr_assert_eq(r.status, 200, "without a name, named as xqf-tune net add names it: %s", r.body);
    reply_free(&r);
    char sha[SHA256_HEX_LEN + 1], name[64];
    sha256_memory(b, len_b, sha);
    snprintf(name, sizeof name, "xqf-%.12s.nnue", sha);
    StoreNet net;
    cr_assert_eq(store_load_net(cu_fx.store, name, &net), 1);
    cr_assert_eq(count_nets(), 2);
    free(big);
    free(a);
    free(b);
}

/*
 * A net's upload is refused from its head to a visitor who may not upload:
 * the 403 comes back while the announced 3.9 MB body is still unsent, so
 * the server never read it.  A tester's head is not refused (the server
 * waits for the body).
 */
Test(web, an_upload_is_refused_from_its_head_before_its_body_is_read)
{
    CU_REQUIRE_DB();
    add_user("vic", "viewer", "viewpass1");
    add_user("tess", "tester", "testerpass1");
    start_web(NULL);
    char viewer[128], tester[128], csrf[128];
    login("vic", "viewpass1", viewer, csrf);
    login("tess", "testerpass1", tester, csrf);
    size_t big = (size_t)NNUE_HEADER_BYTES + NNUE_BODY_BYTES + 4096;
    const char *who[] = { viewer, "", tester };
    for (int i = 0; i < 3; i++) {
        char head[512];
        int n = snprintf(head, sizeof head, "POST /nets HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                         "Cookie: xqf_session=%s\r\nContent-Type: multipart/form-data; boundary=xqfB\r\n"
                         "Content-Length: %zu\r\n\r\n", who[i], big);
        int fd = dial();
        cr_assert_eq(send(fd, head, (size_t)n, MSG_NOSIGNAL), n);
        char buf[4096] = "";
        bool answered = wait_for(fd, "HTTP/1.1 ", i < 2 ? 3000 : 500, buf, sizeof buf);
        if (i < 2) {
            cr_assert(answered && strstr(buf, "HTTP/1.1 403"), "visitor %d: 403 before the body: %s", i, buf);
            cr_assert(strstr(buf, i == 0 ? "may not upload nets" : "log in first"),
                      "visitor %d: the reason: %s", i, buf);
        } else {
            cr_assert(!answered || strstr(buf, "100 Continue"), "a tester's head is not refused: %s", buf);
        }
        close(fd);
    }
    cr_assert_eq(count_nets(), 0);
}

/* A chain's outcome, its ids and names left out: its state, each stage's with its run's. */
static void chain_outcome(int64_t chain, char *out, size_t size)
{
    char q[512];
    snprintf(q, sizeof q, "SELECT c.state || ' ' || string_agg(st.kind || ':' || st.state || coalesce(':' || r.state, ''), "
             "',' ORDER BY st.idx) FROM chains c JOIN chain_stages st ON st.chain_id = c.id LEFT JOIN runs r ON "
             "r.id = st.run_id WHERE c.id = %" PRId64 " GROUP BY c.state", chain);
    sql_value(q, out, size);
}

/* POSTs the CSRF token to /chains/CHAIN/stop as cookie's session. */
static Reply chain_stop(int64_t chain, const char *cookie, const char *csrf)
{
    char path[64], body[256];
    snprintf(path, sizeof path, "/chains/%" PRId64 "/stop", chain);
    snprintf(body, sizeof body, "csrf=%s", csrf);
    return http("POST", path, cookie, body);
}

/*
 * A chain stopped by xqf-tune chain stop and by the chains page's Stop
 * button: the same outcome (its run stopped, the stages not started
 * cancelled), in the history; an ended chain and no chain refused in the
 * same words; a viewer and a tester refused (a chain has no owner: an
 * admin's); the button only for who may, only on a chain not ended.
 */
Test(web, a_chain_is_stopped_alike_from_either_front_end)
{
    CU_REQUIRE_DB();
    add_user("ada", "admin", "adminpass1");
    add_user("tess", "tester", "testpass1");
    add_user("vic", "viewer", "viewerpass1");
    start_web(NULL);
    char acookie[128], acsrf[128], tcookie[128], tcsrf[128], vcookie[128], vcsrf[128], said[1024], args[64];
    login("ada", "adminpass1", acookie, acsrf);
    login("tess", "testpass1", tcookie, tcsrf);
    login("vic", "viewerpass1", vcookie, vcsrf);
    const char *make = "chain new --params NullR --pairs 4 --nodes 100 --then-build --then-sprt 0,5,500n "
                       "--then-sprt 0,5,1000n";
    int64_t cli = cli_new(make), onweb = cli_new(make), left = cli_new(make);

    /* a viewer and a tester may not; nothing changes */
    char before[512], after[512], other[512];
    chain_outcome(onweb, before, sizeof before);
    Reply r = chain_stop(onweb, vcookie, vcsrf);
    cr_assert_eq(r.status, 403, "a viewer stops no chain");
    char who[96];
    snprintf(who, sizeof who, "vic may not stop chain %" PRId64, onweb);
    SAME_WORDS(r, who);
    reply_free(&r);
    r = chain_stop(onweb, tcookie, tcsrf);
    cr_assert_eq(r.status, 403, "a tester stops no chain");
    reply_free(&r);
    chain_outcome(onweb, after, sizeof after);
    cr_assert_str_eq(before, after, "a refused stop changed the chain");

    /* the button: an admin's, on a chain not ended; no one else's */
    char button[96];
    snprintf(button, sizeof button, "action=\"/chains/%" PRId64 "/stop\"", onweb);
    r = http("GET", "/chains", acookie, NULL);
    cr_assert(r.status == 200 && strstr(r.body, button), "no Stop for an admin: %.3000s", r.body);
    reply_free(&r);
    const char *cookies[] = { vcookie, tcookie, NULL };
    for (int i = 0; i < 3; i++) {
        r = http("GET", "/chains", cookies[i], NULL);
        cr_assert(r.status == 200 && !strstr(r.body, "/stop\""), "a Stop for who may not (%d)", i);
        reply_free(&r);
    }

    /* stopped from either front end: the same outcome, the stop by each actor in the history */
    snprintf(args, sizeof args, "%" PRId64, cli);
    cr_assert_eq(tune_said("chain stop", args, said, sizeof said), 0, "%s", said);
    r = chain_stop(onweb, acookie, acsrf);
    cr_assert_eq(r.status, 303, "%d %s", r.status, r.body ? r.body : "");
    char back[64];
    snprintf(back, sizeof back, "Location: /chains#chain-%" PRId64, onweb);
    cr_assert(strstr(r.head, back), "%s", r.head);
    reply_free(&r);
    chain_outcome(cli, before, sizeof before);
    chain_outcome(onweb, after, sizeof after);
    cr_assert_str_eq(before, after, "xqf-tune's stop and the web's differ");
    cr_assert_str_eq(after, "stopped spsa:stopped:stopped,build:cancelled,sprt:cancelled,sprt:cancelled\n");
    chain_outcome(left, other, sizeof other);
    cr_assert_str_eq(other, "active spsa:running:active,build:waiting,sprt:waiting,sprt:waiting\n", "only the chain stopped");
    char q[256], v[256];
    snprintf(q, sizeof q, "SELECT actor || ' ' || action || ' ' || coalesce(run_id, 0) FROM web_audit WHERE chain_id = %" PRId64
             " AND action <> 'create'", onweb);
    sql_value(q, v, sizeof v);
    StoreChain *c = malloc(sizeof *c);
    cr_assert(c && store_load_chain(cu_fx.store, onweb, c) == 1);
    char want[128];
    snprintf(want, sizeof want, "ada stop %" PRId64 "\n", c->stages[0].run_id);
    cr_assert_str_eq(v, want);
    StoreRun run;
    load(c->stages[0].run_id, &run);
    cr_assert_str_eq(run.verdict, "stopped by ada");
    snprintf(want, sizeof want, "stage 0 (spsa, run %" PRId64 "): stopped by ada", c->stages[0].run_id);
    cr_assert_str_eq(c->note, want);
    free(c);
    r = http("GET", "/chains", acookie, NULL);
    cr_assert(r.status == 200 && !strstr(r.body, button), "a Stop on a stopped chain");
    snprintf(button, sizeof button, "action=\"/chains/%" PRId64 "/stop\"", left);
    cr_assert(strstr(r.body, button), "no Stop on the chain left");
    reply_free(&r);

    /* again, and no such chain: refused in the same words */
    cr_assert_eq(tune_said("chain stop", args, said, sizeof said), 2, "stopped twice");
    r = chain_stop(cli, acookie, acsrf);
    cr_assert_eq(r.status, 409);
    SAME_WORDS(r, said);
    reply_free(&r);
    cr_assert_eq(tune_said("chain stop", "999999", said, sizeof said), 2);
    cr_assert(strstr(said, "no chain 999999"), "%s", said);
    r = chain_stop(999999, acookie, acsrf);
    cr_assert_eq(r.status, 404);
    SAME_WORDS(r, said);
    reply_free(&r);
}

/*
 * The New progression form (xqf-tune progression new's): a tester's games
 * run per ref against the base, waiting for an admin and the builder, and
 * the progression with its commits unknown until the builder pins them
 * (xqf_progression_pin, the builder's: done here as it does it); a
 * viewer may not; bad input (no refs, a ref twice, the base as a ref, no
 * name, a name taken, a bad setting) is answered on the form with a
 * message by the field and stores nothing.
 */
Test(web, progression_form_makes_a_run_per_ref_waiting_for_the_builder)
{
    CU_REQUIRE_DB();
    start_web(NULL);
    add_user("tess", "tester", "secret-tess-1");
    add_user("vic", "viewer", "secret-vic-1");
    char cookie[128], csrf[128], form[1024];
    login("vic", "secret-vic-1", cookie, csrf);
    cr_assert_eq(status_of("GET", "/new/progression", cookie, NULL), 403);
    snprintf(form, sizeof form, "csrf=%s&name=h&base_ref=main&refs=v1&pairs=10&nodes=1000&pairs_per_task=8&priority=0", csrf);
    cr_assert_eq(status_of("POST", "/new/progression", cookie, form), 403);
    login("tess", "secret-tess-1", cookie, csrf);
    cr_assert_eq(status_of("GET", "/new/progression", cookie, NULL), 200);
    int64_t runs0 = count_runs();
    struct {
        const char *fields, *says;
    } bad[] = {
        { "name=h&base_ref=main&refs=&pairs=10&nodes=1000&pairs_per_task=8&priority=0", "give the commits to measure" },
        { "name=h&base_ref=main&refs=v1,v2,v1&pairs=10&nodes=1000&pairs_per_task=8&priority=0", "v1 given twice" },
        { "name=h&base_ref=main&refs=v1,main&pairs=10&nodes=1000&pairs_per_task=8&priority=0", "main is the base" },
        { "name=&base_ref=main&refs=v1&pairs=10&nodes=1000&pairs_per_task=8&priority=0", "the progression&#39;s name" },
        { "name=h&base_ref=&refs=v1&pairs=10&nodes=1000&pairs_per_task=8&priority=0", "the base every commit plays against" },
        { "name=h&base_ref=main&refs=v1&pairs=10", "nodes" },
        { "name=h&base_ref=main&refs=v1..v2&pairs=10&nodes=1000&pairs_per_task=8&priority=0", "refs" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(form, sizeof form, "csrf=%s&%s", csrf, bad[i].fields);
        Reply r = http("POST", "/new/progression", cookie, form);
        cr_assert_eq(r.status, 400, "'%s': %d", bad[i].fields, r.status);
        cr_assert(strstr(r.body, bad[i].says), "'%s' lacks '%s':\n%s", bad[i].fields, bad[i].says, r.body);
        reply_free(&r);
    }
    cr_assert_eq(count_runs(), runs0, "a refusal made a run");
    snprintf(form, sizeof form, "csrf=%s&name=web-history&engine=xqf&base_ref=main&refs=v1,%%20v2&pairs=10&nodes=1000&pairs_per_task=8&priority=0",
             csrf);
    Reply r = http("POST", "/new/progression", cookie, form);
    cr_assert_eq(r.status, 303, "%d %s", r.status, r.body);
    const char *at = strstr(r.head, "Location: /progressions/");
    cr_assert(at, "%s", r.head);
    int64_t id = atoll(at + strlen("Location: /progressions/"));
    reply_free(&r);
    cr_assert_eq(count_runs(), runs0 + 2);
    int64_t ids[2];
    for (int i = 0; i < 2; i++) {
        char sql[512], out[256], cmd[2048];
        snprintf(sql, sizeof sql, "SELECT run_id FROM progression_points WHERE progression_id = %" PRId64
                                  " AND ref = 'v%d' AND git_commit IS NULL AND committed_at IS NULL", id, i + 1);
        snprintf(cmd, sizeof cmd, "psql -X -q -At '%s' -c \"%s\"", cu_fx.db, sql);
        cr_assert_eq(cu_sh(out, sizeof out, cmd, cu_fx.logfile), 0);
        ids[i] = atoll(out);
        cr_assert_gt(ids[i], 0, "no point of v%d", i + 1);
        StoreRun run;
        load(ids[i], &run);
        cr_assert_str_eq(run.kind, "games");
        cr_assert_str_eq(run.state, "pending", "a tester's run waits for an admin");
        cr_assert_eq(run.max_pairs, 10);
        cr_assert_eq(run.nodes, 1000);
        snprintf(sql, sizeof sql, "SELECT string_agg(side || '=' || ref, ' ' ORDER BY side) FROM build_requests "
                                  "WHERE run_id = %" PRId64, ids[i]);
        snprintf(cmd, sizeof cmd, "psql -X -q -At '%s' -c \"%s\"", cu_fx.db, sql);
        cr_assert_eq(cu_sh(out, sizeof out, cmd, cu_fx.logfile), 0);
        char want[64];
        snprintf(want, sizeof want, "base=main test=v%d\n", i + 1);
        cr_assert_str_eq(out, want);
    }
    /* a name taken: refused on the form, nothing made */
    snprintf(form, sizeof form, "csrf=%s&name=web-history&base_ref=main&refs=v3&pairs=10&nodes=1000&pairs_per_task=8&priority=0", csrf);
    r = http("POST", "/new/progression", cookie, form);
    cr_assert_eq(r.status, 400);
    cr_assert(strstr(r.body, "exists"), "%s", r.body);
    reply_free(&r);
    cr_assert_eq(count_runs(), runs0 + 2);
    /* the builder pins the refs (as serve_pin does): the point and the base learn their commits and dates */
    char cmd[1024], out[256];
    snprintf(cmd, sizeof cmd, "psql -X -q -At '%s' -c \"SELECT xqf_progression_pin(%" PRId64 ", 'test', '%s', "
                              "'2026-11-05T12:00:00Z', 'step one'); SELECT xqf_progression_pin(%" PRId64 ", 'base', "
                              "'%s', '2026-11-01T10:00:00Z', 'the base')\"",
             cu_fx.db, ids[0], "1111111111111111111111111111111111111111", ids[0],
             "2222222222222222222222222222222222222222");
    cr_assert_eq(cu_sh(out, sizeof out, cmd, cu_fx.logfile), 0);
    char path[64];
    snprintf(path, sizeof path, "/progressions/%" PRId64, id);
    r = http("GET", path, NULL, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "111111111111</code>") && strstr(r.body, "2026-11-05 12:00") &&
                  strstr(r.body, "step one") && strstr(r.body, "main (222222222222, 2026-11-01 10:00): the base"),
              "%s", r.body);
    cr_assert(strstr(r.body, "(not built yet)"), "v2 is not pinned yet");
    reply_free(&r);
}

/* The run's row (run_row) of each id is the first's. */
static void same_rows(const int64_t *ids, int n, const char *what)
{
    static char first[8192], row[8192];
    run_row(ids[0], first, sizeof first);
    for (int i = 1; i < n; i++) {
        run_row(ids[i], row, sizeof row);
        cr_assert_str_eq(row, first, "%s: run %" PRId64 " is not run %" PRId64 "'s", what, ids[i], ids[0]);
    }
}

/*
 * An engine's preset (run_presets.h) fills the new-run form
 * (?engine=xqf&preset=NAME), and the form posted with it makes the run
 * xqf-tune's --preset makes, which is the run of the options typed: the
 * book the preset names (not the server's), a field given beside it
 * overriding its setting as an option typed does (a clock its clock), the
 * SPRT's alpha kept out of an SPSA run.  An unknown preset is refused by
 * both, naming the engine's presets; the engine's page lists them.
 */
Test(web, a_preset_fills_the_form_and_makes_xqf_tunes_run)
{
    CU_REQUIRE_DB();
    char book[256], args[1024], out[4096];
    snprintf(book, sizeof book, "/tmp/xqf-presets-%d.fen", (int)getpid());
    FILE *f = fopen(book, "w");
    cr_assert(f);
    fputs("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1\n"
          "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1\n", f);
    fclose(f);
    add_user("ada", "admin", "adminpass1");
    start_web((const char *const[]){ "--book", BOOK, NULL });
    char cookie[128], csrf[128];
    login("ada", "adminpass1", cookie, csrf);
    snprintf(args, sizeof args, "preset set xqf Q --tc 5+0.05 --tc-base 4+0.04 --elo0 -1 --elo1 4 --alpha 0.1 "
                                "--max-pairs 300 --threads 2 --resign-moves 3 --draw-after 30 --pairs-per-task 4 "
                                "--book '%s'", book);
    cr_assert_eq(tune_all(out, sizeof out, args), 0, "%s", out);

    /* the form filled from it */
    Reply r = http("GET", "/new/sprt?engine=xqf&preset=Q", cookie, NULL);
    cr_assert_eq(r.status, 200, "%s", r.body);
    static const char *const FILLED[] = {
        "name=\"tc\" value=\"5+0.05\"", "name=\"tc_base\" value=\"4+0.04\"", "name=\"elo0\" value=\"-1\"",
        "name=\"elo1\" value=\"4\"", "name=\"alpha\" value=\"0.1\"", "name=\"beta\" value=\"0.05\"",
        "name=\"threads\" value=\"2\"", "name=\"resign_moves\" value=\"3\"", "name=\"pairs_per_task\" value=\"4\"",
        "type=\"hidden\" name=\"preset\" value=\"Q\"", "id=\"preset-notice\"", "<option selected value=\"Q\">",
    };
    for (size_t i = 0; i < sizeof FILLED / sizeof *FILLED; i++)
        cr_assert(strstr(r.body, FILLED[i]), "the filled form lacks %s", FILLED[i]);
    reply_free(&r);

    /* the options typed, --preset with one overridden, the form with it and the same field */
    snprintf(args, sizeof args, "sprt new --test NullR=2 --base '' --name p --tc 5+0.05 --tc-base 4+0.04 --elo0 -1 "
                                "--elo1 2 --alpha 0.1 --max-pairs 300 --threads 2 --resign-moves 3 --draw-after 30 "
                                "--pairs-per-task 4 --book '%s'", book);
    int64_t ids[4];
    ids[0] = cli_new(args);
    ids[1] = cli_new("sprt new --preset Q --test NullR=2 --base '' --name p --elo1 2");
    ids[2] = form_new("sprt", cookie, csrf, "preset=Q&engine=xqf&test=NullR%3D2&base=&name=p&elo1=2&tc=&nodes=&beta=0.05&priority=0", &r);
    cr_assert_gt(ids[2], 0, "the form with a preset: %d %s", r.status, r.body ? r.body : "");
    same_rows(ids, 3, "a preset");
    StoreRun run;
    load(ids[2], &run);
    cr_assert(run.base_ms == 5000 && run.elo1 == 2 && run.max_pairs == 300, "the preset's, elo1 the field's");
    /* their "create" lines say the preset (the typed run's says none) */
    for (int i = 0; i < 3; i++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "psql -qAt '%s' -c \"SELECT detail FROM web_audit WHERE run_id = %" PRId64
                 " AND action = 'create'\"", cu_fx.db, ids[i]);
        cr_assert_eq(cu_sh(out, sizeof out, cmd, cu_fx.logfile), 0);
        cr_assert_str_eq(out, i ? "active; from preset Q of engine xqf\n" : "active\n", "run %d: %s", i, out);
    }

    /* fixed nodes typed beside a preset of a clock: nodes, neither of its clocks */
    ids[0] = cli_new("sprt new --preset Q --test NullR=2 --base '' --name n --nodes 500");
    ids[1] = form_new("sprt", cookie, csrf, "preset=Q&test=NullR%3D2&base=&name=n&nodes=500&beta=0.05&priority=0", &r);
    cr_assert_gt(ids[1], 0, "%d %s", r.status, r.body ? r.body : "");
    snprintf(args, sizeof args, "sprt new --test NullR=2 --base '' --name n --nodes 500 --elo0 -1 --elo1 4 --alpha 0.1 "
                                "--max-pairs 300 --threads 2 --resign-moves 3 --draw-after 30 --pairs-per-task 4 "
                                "--book '%s'", book);
    ids[2] = cli_new(args);
    same_rows(ids, 3, "nodes beside a preset of a clock");
    load(ids[1], &run);
    cr_assert(run.nodes == 500 && run.base_ms == 0 && run.base1_ms == 0);

    /* an SPSA run takes the clock and the rest, not the SPRT's alpha (its --alpha is the schedule's) */
    ids[0] = cli_new("spsa new --preset Q --params RookMg --pairs 10 --name s");
    ids[1] = form_new("spsa", cookie, csrf, "preset=Q&params=RookMg&pairs=10&name=s&alpha=0.602&gamma=0.101&a_ratio=0.1&priority=0",
                     &r);
    cr_assert_gt(ids[1], 0, "%d %s", r.status, r.body ? r.body : "");
    same_rows(ids, 2, "an SPSA run of a preset");
    run_row(ids[1], out, sizeof out);
    cr_assert(strstr(out, "\"settings\": {\"alpha\": 0.60"), "the SPSA schedule's default alpha: %s", out);

    /* the other new commands: a games run takes its pairs, a data run and a chain's first run its clock */
    ids[0] = cli_new("games new --preset regression --test NullR=2 --base '' --name g");
    ids[1] = cli_new("games new --pairs 10000 --tc 60+0.6 --test NullR=2 --base '' --name g");
    same_rows(ids, 2, "games new of a preset");
    ids[0] = cli_new("data new --games 10 --preset STC --name d");
    ids[1] = cli_new("data new --games 10 --tc 10+0.1 --name d");
    same_rows(ids, 2, "data new of a preset");
    /* SMP's threads are the engines': not chain new's --threads (its trainer's), which plays one */
    ids[0] = cli_new("chain new --params RookMg --pairs 10 --preset SMP --then-sprt 0,5,1+0.01 --name c");
    cr_assert_gt(ids[0], 0);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "psql -qAt '%s' -c \"SELECT base_ms, threads FROM runs WHERE id = (SELECT max(id) FROM "
             "runs)\"", cu_fx.db);
    cr_assert_eq(cu_sh(out, sizeof out, cmd, cu_fx.logfile), 0);
    cr_assert_str_eq(out, "5000|1\n", "the chain's first run: SMP's clock, one thread");

    /* an unknown preset: refused by both, naming the engine's presets; nothing made */
    int64_t before = cli_new("sprt new --test NullR=2 --base '' --nodes 100");
    cr_assert_eq(tune_all(out, sizeof out, "sprt new --preset NOPE --test NullR=2 --base ''"), 2);
    cr_assert(strstr(out, "engine xqf has no preset 'NOPE' (its presets: LTC, Q, SMP, STC, regression"), "%s", out);
    r = http("GET", "/new/sprt?preset=NOPE", cookie, NULL);
    cr_assert_eq(r.status, 400);
    cr_assert(strstr(r.body, "engine xqf has no preset &#39;NOPE&#39; (its presets: LTC, Q, SMP, STC, regression)"),
              "%s", r.body);
    reply_free(&r);
    cr_assert_eq(form_new("sprt", cookie, csrf, "preset=NOPE&test=NullR%3D2&base=&nodes=100&elo0=0&elo1=5&alpha=0.05&beta=0.05&max_pairs=9&priority=0&pairs_per_task=8", &r), 0);
    cr_assert_eq(r.status, 400);
    reply_free(&r);
    cr_assert_eq(cli_new("sprt new --test NullR=2 --base '' --nodes 100"), before + 1, "nothing made between");

    /* the engine's page: each preset's settings, and the forms it fills */
    r = http("GET", "/engines/xqf", NULL, NULL);
    cr_assert_eq(r.status, 200);
    cr_assert(strstr(r.body, "id=\"presets\"") && strstr(r.body, "<tr id=\"preset-STC\"><td>STC</td>"), "%s", r.body);
    cr_assert(strstr(r.body, "--max-pairs 50000 --tc 10+0.1"), "%s", r.body);
    cr_assert(strstr(r.body, "href=\"/new/sprt?engine=xqf&amp;preset=STC\""), "%s", r.body);
    reply_free(&r);
    unlink(book);
}

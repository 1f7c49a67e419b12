/*
 * The worker's state machine (worker.h) without a cluster: a fake link
 * feeds it messages and records what it sends.  Hello and welcome, task
 * requests, idle answers, late tasks, refused tasks, a task played to its
 * result and acknowledged, a coordinator that forgot the worker, shutdown
 * handing a task back.  A side that plays an engine build (here a copy of
 * tests/fake_engine.c, fetched from the fake link, which knows a switch
 * the worker's table lacks): its set is checked for its syntax only and
 * judged by the build, which may refuse it.  A task's net that the
 * engine's reader refuses, or that is wrongly signed, is refused and
 * reported.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "games.h"
#include "keys.h"
#include "sha256.h"
#include "worker.h"

enum { QUEUE = 64, SENT = 4096 };

static const char START[] = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";

/* The fake transport: messages to deliver, messages sent, whether sending works. */
typedef struct {
    XqfMsg in[QUEUE];
    int nin, next;
    XqfMsg sent[SENT];
    int64_t records[SENT];           /* of a result: its game records (the bytes are the worker's) */
    int nsent, seen;                 /* seen: sent[] before it were looked at already */
    bool down;
} Fake;

static int fake_send(void *ctx, const XqfMsg *m)
{
    Fake *f = ctx;
    if (f->down)
        return -1;
    cr_assert_lt(f->nsent, SENT, "the worker sends too much");
    f->records[f->nsent] = m->type == XQF_MSG_RESULT ? xqf_games_count(m->u.result.games.data, m->u.result.games.len) : 0;
    f->sent[f->nsent++] = *m;        /* kept without what it owns (a result's games are freed) */
    return 0;
}

static int fake_wait(void *ctx, int timeout_ms, int fd)
{
    Fake *f = ctx;
    (void)fd;
    if (f->next < f->nin)
        return 1;
    struct timespec ts = { 0, (long)(timeout_ms < 5 ? timeout_ms : 5) * 1000000 };
    nanosleep(&ts, NULL);
    return 0;
}

static int fake_recv(void *ctx, XqfMsg *m)
{
    Fake *f = ctx;
    if (f->next >= f->nin)
        return 0;
    *m = f->in[f->next++];           /* the worker frees it */
    return 1;
}

static Fake fake;
static Worker *worker;
static char cache[64];

static void setup(void)
{
    memset(&fake, 0, sizeof fake);
    snprintf(cache, sizeof cache, "/tmp/xqf-test-worker-XXXXXX");
    cr_assert_not_null(mkdtemp(cache));
    WorkerConfig cfg = { .name = "w1", .build = "xqf-test", .cores = 2, .threads = 1, .cache_dir = cache };
    WorkerLink link = { &fake, fake_send, fake_wait, fake_recv };
    worker = worker_new(&cfg, &link);
    cr_assert_not_null(worker);
}

static void teardown(void)
{
    worker_destroy(&worker);
    for (int i = fake.next; i < fake.nin; i++)
        xqf_msg_free(&fake.in[i]);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(worker, .init = setup, .fini = teardown, .timeout = 60);

static XqfMsg *feed(XqfMsgType type)
{
    cr_assert_lt(fake.nin, QUEUE);
    XqfMsg *m = &fake.in[fake.nin++];
    xqf_msg_init(m, type);
    return m;
}

/* Turns the worker until it sends a message of type a or b (among those not seen yet), at most ms. */
static const XqfMsg *await_either(XqfMsgType a, XqfMsgType b, int ms)
{
    for (int waited = 0; waited <= ms; waited += 5) {
        for (; fake.seen < fake.nsent; fake.seen++)
            if (fake.sent[fake.seen].type == a || fake.sent[fake.seen].type == b)
                return &fake.sent[fake.seen++];
        cr_assert_eq(worker_turn(worker, 5), 1);
    }
    return NULL;
}

static const XqfMsg *await(XqfMsgType type, int ms) { return await_either(type, type, ms); }

/* How many messages of type were sent and not seen yet, after n turns. */
static int count_after(XqfMsgType type, int turns)
{
    for (int i = 0; i < turns; i++)
        cr_assert_eq(worker_turn(worker, 5), 1);
    int n = 0;
    for (; fake.seen < fake.nsent; fake.seen++)
        n += fake.sent[fake.seen].type == type;
    return n;
}

static void welcome(void)
{
    const XqfMsg *hello = await(XQF_MSG_HELLO, 100);
    cr_assert_not_null(hello, "no hello");
    cr_assert_str_eq(hello->u.hello.name, "w1");
    cr_assert_str_eq(hello->u.hello.build, "xqf-test");
    cr_assert_eq(hello->u.hello.cores, 2);
    cr_assert_eq(hello->u.hello.concurrency, 1);
    XqfMsg *w = feed(XQF_MSG_WELCOME);
    w->u.welcome.worker_id = 7;
    w->u.welcome.lease_ms = 60000;
    w->u.welcome.heartbeat_ms = 10000;
}

/* A task of pairs pairs at nodes per move for slot, from the start position. */
static void feed_task(uint64_t slot, uint64_t task_id, int64_t pairs, const char *build, uint64_t nodes)
{
    XqfMsg *m = feed(XQF_MSG_TASK);
    XqfMsg_task *t = &m->u.task;
    t->slot = slot;
    t->task_id = task_id;
    t->lease = 100 + task_id;
    t->run_id = 1;
    strcpy(t->kind, "sprt");
    snprintf(t->build, sizeof t->build, "%s", build);
    t->pairs = pairs;
    for (int64_t i = 0; i < pairs; i++)
        cr_assert_eq(xqf_strs_push(&t->openings, START), 0);
    t->nodes = nodes;
    t->margin_ms = 100;
    t->hash_mb = 1;
    t->threads = 1;
    strcpy(t->name0, "test");
    strcpy(t->params0, "NullR=2");
    strcpy(t->name1, "base");
    t->resign_moves = 4;
    t->resign_score = 600;
    t->draw_after = 40;
    t->draw_moves = 8;
    t->draw_score = 10;
    t->max_plies = 400;
}

Test(worker, says_hello_until_welcomed_then_asks_for_a_task)
{
    fake.down = true;                /* not connected: the hello cannot go out */
    cr_assert_eq(count_after(XQF_MSG_HELLO, 3), 0);
    fake.down = false;
    welcome();
    const XqfMsg *req = await(XQF_MSG_TASK_REQUEST, 200);
    cr_assert_not_null(req, "no task request after the welcome");
    cr_assert_eq(req->u.task_request.slot, 0);
    cr_assert_eq(count_after(XQF_MSG_TASK_REQUEST, 5), 0, "one request at a time");
}

Test(worker, idle_answer_waits_before_asking_again)
{
    welcome();
    cr_assert_not_null(await(XQF_MSG_TASK_REQUEST, 200));
    XqfMsg *idle = feed(XQF_MSG_IDLE);
    idle->u.idle.slot = 0;
    idle->u.idle.retry_ms = 60000;
    cr_assert_eq(count_after(XQF_MSG_TASK_REQUEST, 10), 0);
}

/* The worker again, with silence_ms: a message unanswered this long and it says hello again. */
static void restart_with_silence(int silence_ms)
{
    worker_destroy(&worker);
    WorkerConfig cfg = { .name = "w1", .build = "xqf-test", .cores = 2, .threads = 1, .cache_dir = cache,
                         .silence_ms = silence_ms };
    WorkerLink link = { &fake, fake_send, fake_wait, fake_recv };
    worker = worker_new(&cfg, &link);
    cr_assert_not_null(worker);
}

Test(worker, a_quiet_wait_for_its_next_request_is_not_silence)
{
    restart_with_silence(200);
    welcome();
    cr_assert_not_null(await(XQF_MSG_TASK_REQUEST, 200));
    XqfMsg *idle = feed(XQF_MSG_IDLE);
    idle->u.idle.slot = 0;
    idle->u.idle.retry_ms = 60000;
    /* about a second, five times the silence: it asked nothing, so it waits for nothing */
    cr_assert_eq(count_after(XQF_MSG_HELLO, 200), 0, "hello again although nothing went unanswered");
}

Test(worker, says_hello_again_when_a_message_goes_unanswered)
{
    restart_with_silence(200);
    welcome();
    cr_assert_not_null(await(XQF_MSG_TASK_REQUEST, 200));
    /* the request is never answered */
    cr_assert_not_null(await(XQF_MSG_HELLO, 2000), "no hello after the request went unanswered");
}

Test(worker, hands_back_a_task_it_did_not_ask_for)
{
    welcome();
    cr_assert_not_null(await(XQF_MSG_TASK_REQUEST, 200));
    feed_task(2, 5, 1, "", 64);          /* slot 2 asked for nothing */
    const XqfMsg *back = await(XQF_MSG_HANDBACK, 200);
    cr_assert_not_null(back);
    cr_assert_eq(back->u.handback.task_id, 5);
    cr_assert(!back->u.handback.refused);
    cr_assert(strstr(back->u.handback.reason, "not asked for"), "%s", back->u.handback.reason);
}

Test(worker, refuses_a_task_for_another_build)
{
    welcome();
    cr_assert_not_null(await(XQF_MSG_TASK_REQUEST, 200));
    feed_task(0, 6, 1, "xqf-other", 64);
    const XqfMsg *back = await(XQF_MSG_HANDBACK, 200);
    cr_assert_not_null(back);
    cr_assert(back->u.handback.refused);
    cr_assert(strstr(back->u.handback.reason, "wrong build"), "%s", back->u.handback.reason);
}

/* A coordinator asking for more hash than the worker's --max-hash (4,096 MB when none given) is refused. */
Test(worker, refuses_a_hash_over_its_cap)
{
    welcome();
    cr_assert_not_null(await(XQF_MSG_TASK_REQUEST, 200));
    feed_task(0, 6, 1, "xqf-test", 64);
    fake.in[fake.nin - 1].u.task.hash_mb = 4097;
    const XqfMsg *back = await(XQF_MSG_HANDBACK, 200);
    cr_assert_not_null(back);
    cr_assert(back->u.handback.refused);
    cr_assert(strstr(back->u.handback.reason, "over this worker's --max-hash of 4096 MB"), "%s",
              back->u.handback.reason);
}

/*
 * A task of more threads per engine than the worker's concurrency (1 here)
 * is handed back refused: its games would have more search threads than
 * the worker gives its games cores.
 */
Test(worker, refuses_more_threads_than_its_concurrency)
{
    welcome();
    cr_assert_not_null(await(XQF_MSG_TASK_REQUEST, 200));
    feed_task(0, 6, 1, "xqf-test", 64);
    fake.in[fake.nin - 1].u.task.threads = 2;
    const XqfMsg *back = await(XQF_MSG_HANDBACK, 200);
    cr_assert_not_null(back);
    cr_assert(back->u.handback.refused);
    cr_assert(strstr(back->u.handback.reason, "2 threads per engine are over this worker's concurrency of 1"), "%s",
              back->u.handback.reason);
    cr_assert_eq(count_after(XQF_MSG_RESULT, 5), 0, "a refused task played");
}

/* Whether a message of type was sent at index from or later. */
static bool sent_since(int from, XqfMsgType type)
{
    for (int i = from; i < fake.nsent; i++)
        if (fake.sent[i].type == type)
            return true;
    return false;
}

Test(worker, plays_a_task_reports_it_and_asks_for_more)
{
    welcome();
    cr_assert_not_null(await(XQF_MSG_TASK_REQUEST, 200));
    int from = fake.nsent;
    feed_task(0, 9, 1, "", 64);
    const XqfMsg *res = await(XQF_MSG_RESULT, 30000);
    cr_assert_not_null(res, "no result");
    const XqfMsg_result *r = &res->u.result;
    cr_assert_eq(r->task_id, 9);
    cr_assert_eq(r->lease, 109);
    cr_assert_eq(r->pairs, 1);
    cr_assert_eq(r->wins + r->draws + r->losses, 2);
    cr_assert_eq(r->penta.count, 5);
    XqfMsg *ack = feed(XQF_MSG_ACK);
    ack->u.ack.task_id = 9;
    ack->u.ack.lease = 109;
    strcpy(ack->u.ack.status, "accepted");
    ack->u.ack.pairs = 1;
    /* the next task is asked for once fewer games than threads are left: while playing, or now */
    for (int i = 0; i < 200 && !sent_since(from, XQF_MSG_TASK_REQUEST); i++)
        cr_assert_eq(worker_turn(worker, 5), 1);
    cr_assert(sent_since(from, XQF_MSG_TASK_REQUEST), "no request for the next task");
    cr_assert_eq(count_after(XQF_MSG_RESULT, 5), 0, "an acknowledged result is not sent again");
}

/*
 * A result carries the records of the pairs not acknowledged yet: from
 * games_from, the pairs of the last acknowledgement, on (protocol 7).
 */
Test(worker, reports_the_games_of_the_pairs_not_acknowledged)
{
    welcome();
    cr_assert_not_null(await(XQF_MSG_TASK_REQUEST, 200));
    feed_task(0, 9, 3, "", 64);
    const XqfMsg *res = await(XQF_MSG_RESULT, 30000);
    cr_assert_not_null(res, "no result");
    int64_t acked = res->u.result.pairs;
    cr_assert_eq(res->u.result.games_from, 0);
    cr_assert_eq(fake.records[res - fake.sent], 2 * acked);
    XqfMsg *ack = feed(XQF_MSG_ACK);
    ack->u.ack.task_id = 9;
    ack->u.ack.lease = 109;
    strcpy(ack->u.ack.status, "accepted");
    ack->u.ack.pairs = acked;
    /* the last pairs' report (or its resend, once the acknowledgement is in): from the acknowledged pairs on */
    bool last = acked == 3;
    while (!last) {
        res = await(XQF_MSG_RESULT, 30000);
        cr_assert_not_null(res, "no result of the last pairs");
        const XqfMsg_result *r = &res->u.result;
        cr_assert_eq(fake.records[res - fake.sent], 2 * (r->pairs - r->games_from));
        last = r->pairs == 3 && r->games_from == acked;
    }
}

Test(worker, says_hello_again_when_the_coordinator_forgot_it)
{
    welcome();
    cr_assert_not_null(await(XQF_MSG_TASK_REQUEST, 200));
    XqfMsg *e = feed(XQF_MSG_ERROR);
    e->u.error.code = XQF_ERR_NEED_HELLO;
    cr_assert_not_null(await(XQF_MSG_HELLO, 200));
}

Test(worker, stop_hands_the_task_back)
{
    welcome();
    cr_assert_not_null(await(XQF_MSG_TASK_REQUEST, 200));
    feed_task(0, 11, 8, "", 50000000);   /* games far longer than the test */
    for (int i = 0; i < 4; i++)
        cr_assert_eq(worker_turn(worker, 5), 1);
    worker_stop(worker);
    int rc = 1;
    bool handed_back = false;
    for (int i = 0; i < 2000 && rc == 1; i++) {
        rc = worker_turn(worker, 5);
        for (; fake.seen < fake.nsent; fake.seen++) {
            const XqfMsg *sent = &fake.sent[fake.seen];
            handed_back = handed_back || (sent->type == XQF_MSG_HANDBACK && sent->u.handback.task_id == 11);
            if (sent->type != XQF_MSG_RESULT)
                continue;
            XqfMsg *ack = feed(XQF_MSG_ACK);   /* every report answered: the hand-back need not wait */
            ack->u.ack.task_id = 11;
            ack->u.ack.lease = 111;
            strcpy(ack->u.ack.status, "accepted");
            ack->u.ack.pairs = sent->u.result.pairs;
        }
    }
    cr_assert_eq(rc, 0, "the worker did not finish stopping");
    cr_assert(handed_back, "the task was not handed back");
}

/* Marks in open[] the descriptors now open (below 1024). */
static void open_fds(bool open[1024])
{
    memset(open, 0, 1024 * sizeof *open);
    DIR *d = opendir("/proc/self/fd");
    cr_assert_not_null(d);
    for (struct dirent *e; (e = readdir(d));) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] != '.' && fd != dirfd(d) && fd < 1024)
            open[fd] = true;
    }
    closedir(d);
}

/* Every descriptor a worker makes (its wake-up pipe, build cache, game threads) is close-on-exec. */
Test(worker, its_descriptors_are_close_on_exec)
{
    static bool before[1024], after[1024];
    open_fds(before);
    WorkerConfig cfg = { .name = "w2", .build = "xqf-test", .cores = 2, .threads = 2, .cache_dir = cache };
    WorkerLink link = { &fake, fake_send, fake_wait, fake_recv };
    Worker *w = worker_new(&cfg, &link);
    cr_assert_not_null(w);
    open_fds(after);
    int made = 0;
    for (int fd = 0; fd < 1024; fd++) {
        if (!after[fd] || before[fd])
            continue;
        made++;
        cr_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC, "descriptor %d is not close-on-exec", fd);
    }
    cr_assert_geq(made, 2, "the worker's pipe");
    worker_destroy(&w);
}

/* Whether s is text the coordinator's decoder takes and a terminal shows as is: UTF-8, no control characters. */
static bool clean_text(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return false;
    return xqf_utf8_valid(s, strlen(s));
}

/* A reason quoting what the worker does not control (here its build's name) goes out as valid text. */
Test(worker, sends_reasons_as_valid_text)
{
    worker_destroy(&worker);
    WorkerConfig cfg = { .name = "w\x1b[2J\xff", .build = "xqf-\xc3(\x1b]0;x\x07\xe8\xb1", .cores = 2,
                         .threads = 1, .cache_dir = cache };
    WorkerLink link = { &fake, fake_send, fake_wait, fake_recv };
    worker = worker_new(&cfg, &link);
    cr_assert_not_null(worker);
    const XqfMsg *hello = await(XQF_MSG_HELLO, 100);
    cr_assert_not_null(hello);
    cr_assert(clean_text(hello->u.hello.name), "name '%s'", hello->u.hello.name);
    cr_assert(clean_text(hello->u.hello.build), "build '%s'", hello->u.hello.build);
    XqfMsg *w = feed(XQF_MSG_WELCOME);
    w->u.welcome.worker_id = 7;
    w->u.welcome.lease_ms = 60000;
    w->u.welcome.heartbeat_ms = 10000;
    cr_assert_not_null(await(XQF_MSG_TASK_REQUEST, 200));
    feed_task(0, 6, 1, "xqf-other", 64);
    const XqfMsg *back = await(XQF_MSG_HANDBACK, 200);
    cr_assert_not_null(back);
    cr_assert(strstr(back->u.handback.reason, "wrong build"), "%s", back->u.handback.reason);
    cr_assert(clean_text(back->u.handback.reason), "reason '%s'", back->u.handback.reason);
}

/* ---- a side that plays an engine build ------------------------------------------------- */

/*
 * A worker that takes unsigned builds (its cache empty), welcomed and
 * asking for a task, and a task for it whose first player plays the fake
 * engine as a build with set (the second the built-in engine).
 */
static void build_task(uint64_t task_id, const char *set)
{
    worker_destroy(&worker);
    for (int i = fake.next; i < fake.nin; i++)
        xqf_msg_free(&fake.in[i]);
    memset(&fake, 0, sizeof fake);
    char cmd[160];                   /* an empty cache: the build is fetched again */
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -m 700 '%s'", cache, cache);
    cr_assert_eq(system(cmd), 0);
    WorkerConfig cfg = { .name = "w1", .build = "xqf-test", .cores = 2, .threads = 1, .cache_dir = cache,
                         .allow_unsigned = true };
    WorkerLink link = { &fake, fake_send, fake_wait, fake_recv };
    worker = worker_new(&cfg, &link);
    cr_assert_not_null(worker);
    welcome();
    cr_assert_not_null(await(XQF_MSG_TASK_REQUEST, 200));
    feed_task(0, task_id, 1, "", 64);
    XqfMsg_task *t = &fake.in[fake.nin - 1].u.task;
    cr_assert_eq(sha256_file(FAKE_ENGINE, t->build0), 0);
    snprintf(t->params0, sizeof t->params0, "%s", set);
}

/* Answers the worker's requests for the fake engine's bytes, chunk by chunk, as the coordinator does. */
static void serve_build(void)
{
    FILE *f = fopen(FAKE_ENGINE, "rb");
    cr_assert(f);
    static char bytes[16 << 20];
    size_t total = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    cr_assert(total > 0 && total < sizeof bytes);
    char sha[XQF_SHA256_HEX + 1];
    cr_assert_eq(sha256_file(FAKE_ENGINE, sha), 0);
    for (size_t at = 0; at < total;) {
        const XqfMsg *q = await(XQF_MSG_BUILD_REQUEST, 5000);
        cr_assert_not_null(q, "no build_request (at %zu of %zu bytes)", at, total);
        cr_assert_str_eq(q->u.build_request.sha256, sha);
        cr_assert_eq(q->u.build_request.offset, at);
        size_t n = total - at < XQF_CHUNK_MAX ? total - at : XQF_CHUNK_MAX;
        XqfMsg_build_chunk *ch = &feed(XQF_MSG_BUILD_CHUNK)->u.build_chunk;
        snprintf(ch->sha256, sizeof ch->sha256, "%s", sha);
        snprintf(ch->name, sizeof ch->name, "fake");
        ch->offset = at;
        ch->total = total;
        cr_assert_eq(xqf_bin_set(&ch->data, bytes + at, n), 0);
        at += n;
    }
}

/* Whether a result was sent since the worker started. */
static bool any_result(void)
{
    for (int i = 0; i < fake.nsent; i++)
        if (fake.sent[i].type == XQF_MSG_RESULT)
            return true;
    return false;
}

/*
 * A build plays a set with a switch only it knows (NewSwitch, which a
 * branch added): the worker's table does not judge it, the build takes it,
 * the task is played and reported.
 */
Test(worker, a_build_plays_a_switch_the_workers_table_lacks)
{
    build_task(21, "NewSwitch = 1");
    serve_build();
    const XqfMsg *res = await_either(XQF_MSG_RESULT, XQF_MSG_HANDBACK, 50000);
    cr_assert_not_null(res, "no result: the games were not played");
    cr_assert_eq(res->type, XQF_MSG_RESULT, "handed back: %s", res->u.handback.reason);
    cr_assert_eq(res->u.result.task_id, 21);
    cr_assert_eq(res->u.result.pairs, 1);
}

/*
 * The reason a task is handed back with whose first player plays the fake
 * engine as a build with set: asserts that it is handed back refused and
 * that no result is sent.
 */
static const char *refusal(const char *set)
{
    build_task(31, set);
    serve_build();
    const XqfMsg *back = await_either(XQF_MSG_RESULT, XQF_MSG_HANDBACK, 30000);
    cr_assert(back && back->type == XQF_MSG_HANDBACK, "%s: not handed back", set);
    cr_assert(back->u.handback.refused, "%s", set);
    cr_assert_eq(count_after(XQF_MSG_RESULT, 20), 0);
    cr_assert(!any_result(), "%s: a result was sent", set);
    return back->u.handback.reason;
}

/*
 * A set whose name or value the build refuses (`info string error` before
 * readyok: here NullR, which the worker's table knows and the build does
 * not, and a value out of the build's bounds) is not played with the
 * option left out: the task is handed back refused, the reason naming the
 * player, the option and the build's words, and no result is sent.
 */
Test(worker, a_set_the_build_refuses_is_handed_back_with_its_words)
{
    const struct {
        const char *set, *words;
    } cases[] = {
        { "NewSwitch=1,NullR=2", "test: option NullR=2 refused: unknown option 'NullR'" },
        { "NewSwitch=2", "test: option NewSwitch=2 refused: parameter NewSwitch needs an integer from 0 to 1, got '2'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *reason = refusal(cases[i].set);
        cr_assert(strstr(reason, cases[i].words), "%s: reason '%s'", cases[i].set, reason);
    }
}

/*
 * Another engine's build (the task names its engine) is spoken to as its
 * record says: its hash option by its own name (a name the build does not
 * know is refused with the build's words, the task handed back, so the
 * name is the one sent), its commands after the handshake, no threads
 * option for one thread; with names it knows, the games are played.
 */
Test(worker, another_engines_build_gets_its_records_option_names)
{
    build_task(41, "");
    XqfMsg_task *t = &fake.in[fake.nin - 1].u.task;
    snprintf(t->engine, sizeof t->engine, "toy");
    snprintf(t->proto, sizeof t->proto, "uci");
    snprintf(t->hash_option, sizeof t->hash_option, "Bogus Hash");
    snprintf(t->threads_option, sizeof t->threads_option, "Cores");
    serve_build();
    const XqfMsg *back = await_either(XQF_MSG_RESULT, XQF_MSG_HANDBACK, 30000);
    cr_assert(back && back->type == XQF_MSG_HANDBACK && back->u.handback.refused, "not handed back");
    cr_assert(strstr(back->u.handback.reason, "option Bogus Hash=1 refused: unknown option 'Bogus Hash'"), "%s",
              back->u.handback.reason);
    build_task(42, "NewSwitch=1");
    t = &fake.in[fake.nin - 1].u.task;
    snprintf(t->engine, sizeof t->engine, "toy");
    snprintf(t->proto, sizeof t->proto, "uci");
    snprintf(t->hash_option, sizeof t->hash_option, "Hash");
    cr_assert_eq(xqf_strs_push(&t->init, "setoption name NewSwitch value 0"), 0);
    serve_build();
    const XqfMsg *res = await_either(XQF_MSG_RESULT, XQF_MSG_HANDBACK, 50000);
    cr_assert_not_null(res, "no result: the games were not played");
    cr_assert_eq(res->type, XQF_MSG_RESULT, "handed back: %s", res->u.handback.reason);
    cr_assert_eq(res->u.result.pairs, 1);
}

/*
 * A set a build plays goes to it as `setoption` lines: one whose item could
 * end a line or carry another command (a newline, a blank inside a name,
 * a value that is not an integer within int) is refused by the worker
 * before the engine starts.  The codec carries such text (a task's set is
 * any UTF-8 without NUL): the worker is the layer that stops it.
 */
Test(worker, a_malformed_set_never_reaches_the_build)
{
    const struct {
        const char *set, *words;
    } cases[] = {
        { "NewSwitch=1\nquit", "parameter NewSwitch needs an integer" },
        { "Hash\nsetoption name NewSwitch value 1=1", "'Hash?setoption name NewSwitch value 1' is not a parameter name" },
        { "New Switch=1", "'New Switch' is not a parameter name" },
        { "NewSwitch=1 value 0", "got '1 value 0'" },
        { "NewSwitch=one", "got 'one'" },
        { "NewSwitch=4294967297", "got '4294967297'" },
        { "NewSwitch", "'NewSwitch' is not Name=value" },
        { "NewSwitch=1,hash=65536", "'hash' is the worker's to set" },
        { "Threads=64", "'Threads' is the worker's to set" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* what the coordinator would send arrives as it is */
        XqfMsg sent, got;
        XqfBuf frame = { 0 };
        xqf_msg_init(&sent, XQF_MSG_TASK);
        snprintf(sent.u.task.params0, sizeof sent.u.task.params0, "%s", cases[i].set);
        char err[256];
        cr_assert_eq(xqf_msg_encode(&sent, &frame), 0);
        cr_assert_eq(xqf_msg_decode(frame.data, frame.len, &got, err, sizeof err), XQF_DECODE_OK, "%s", err);
        cr_assert_str_eq(got.u.task.params0, cases[i].set);
        xqf_msg_free(&got);
        xqf_msg_free(&sent);
        xqf_buf_free(&frame);
        const char *reason = refusal(cases[i].set);
        cr_assert(strstr(reason, "players: ") && strstr(reason, cases[i].words), "%s: reason '%s'", cases[i].set,
                  reason);
    }
}

/*
 * A worker (trusting trust, or taking unsigned nets when it is NULL) and a
 * task for it whose first player evaluates with the net of SHA-256 sha
 * (both players the built-in engine).
 */
static void net_task(uint64_t task_id, const char *sha, const TrustList *trust)
{
    worker_destroy(&worker);
    for (int i = fake.next; i < fake.nin; i++)
        xqf_msg_free(&fake.in[i]);
    memset(&fake, 0, sizeof fake);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -m 700 '%s'", cache, cache);
    cr_assert_eq(system(cmd), 0);
    WorkerConfig cfg = { .name = "w1", .build = "xqf-test", .cores = 2, .threads = 1, .cache_dir = cache,
                         .trust = trust, .allow_unsigned = trust == NULL };
    WorkerLink link = { &fake, fake_send, fake_wait, fake_recv };
    worker = worker_new(&cfg, &link);
    cr_assert_not_null(worker);
    welcome();
    cr_assert_not_null(await(XQF_MSG_TASK_REQUEST, 200));
    feed_task(0, task_id, 1, "", 64);
    snprintf(fake.in[fake.nin - 1].u.task.net0, XQF_SHA256_HEX + 1, "%s", sha);
}

/* Answers the worker's request for a net (it must say kind "net") with bytes, named and signed as given. */
static void serve_net(const char *sha, const void *bytes, size_t len, const char *name, const char *signature)
{
    const XqfMsg *q = await(XQF_MSG_BUILD_REQUEST, 5000);
    cr_assert_not_null(q, "no request for the net");
    cr_assert_str_eq(q->u.build_request.sha256, sha);
    cr_assert_str_eq(q->u.build_request.kind, "net");
    XqfMsg_build_chunk *ch = &feed(XQF_MSG_BUILD_CHUNK)->u.build_chunk;
    snprintf(ch->sha256, sizeof ch->sha256, "%s", sha);
    snprintf(ch->name, sizeof ch->name, "%s", name);
    snprintf(ch->signature, sizeof ch->signature, "%s", signature);
    snprintf(ch->kind, sizeof ch->kind, "net");
    ch->total = len;
    cr_assert_eq(xqf_bin_set(&ch->data, bytes, len), 0);
}

/*
 * The worker's refusal of a task's net: a bench message naming the net
 * and the reason (the coordinator then offers this worker no task of it),
 * the task handed back refused, no result.  Returns the hand-back's reason.
 */
static const char *net_refused(const char *sha, const char *words)
{
    const XqfMsg *b = await(XQF_MSG_BENCH, 5000);
    cr_assert_not_null(b, "the refusal of the net was not reported");
    cr_assert_str_eq(b->u.bench.sha256, sha);
    cr_assert(strstr(b->u.bench.refused, words), "reported: '%s'", b->u.bench.refused);
    const XqfMsg *back = await_either(XQF_MSG_RESULT, XQF_MSG_HANDBACK, 5000);
    cr_assert(back && back->type == XQF_MSG_HANDBACK, "not handed back");
    cr_assert(back->u.handback.refused);
    cr_assert(strstr(back->u.handback.reason, words), "reason '%s'", back->u.handback.reason);
    cr_assert(!any_result(), "a result was sent");
    return back->u.handback.reason;
}

/*
 * A net the engine's reader refuses (here bytes of no net at all, fetched
 * and hashed right) is not played with the engine's own evaluation: the
 * task is handed back refused with the reader's words.
 */
Test(worker, a_net_the_reader_refuses_is_handed_back_and_reported)
{
    static const char BYTES[] = "not a net at all";
    char path[128], sha[XQF_SHA256_HEX + 1];
    snprintf(path, sizeof path, "%s.bytes", cache);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(BYTES, f);
    fclose(f);
    cr_assert_eq(sha256_file(path, sha), 0);
    unlink(path);
    net_task(41, sha, NULL);
    serve_net(sha, BYTES, sizeof BYTES - 1, "bad.nnue", "");
    net_refused(sha, "refused by the engine's reader");
}

/*
 * A net signed by a key the worker does not trust, or with a build's
 * signature by a key it trusts, is refused at its first chunk, before
 * its bytes are written: reported and handed back with the reason.
 */
Test(worker, a_wrongly_signed_net_is_refused)
{
    char dir[64], path[160], err[256], sha[XQF_SHA256_HEX + 1], sig[SIGN_SIG_HEX + 1];
    snprintf(dir, sizeof dir, "/tmp/xqf-test-netkeys-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    SignKey op, other;
    TrustList trust;
    snprintf(path, sizeof path, "%s/op", dir);
    cr_assert_eq(sign_key_generate(path, &op, err, sizeof err), 0, "%s", err);
    snprintf(path, sizeof path, "%s/op.pub", dir);
    cr_assert_eq(trust_read(path, &trust, err, sizeof err), 0, "%s", err);
    snprintf(path, sizeof path, "%s/other", dir);
    cr_assert_eq(sign_key_generate(path, &other, err, sizeof err), 0, "%s", err);
    static const char BYTES[] = "the bytes of a net";
    snprintf(path, sizeof path, "%s/net", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(BYTES, f);
    fclose(f);
    cr_assert_eq(sha256_file(path, sha), 0);
    for (int by_build = 0; by_build < 2; by_build++) {
        cr_assert_eq(sign_artifact(by_build ? &op : &other, by_build ? SIGN_BUILD : SIGN_NET, sha, "n.nnue", sig,
                                   err, sizeof err), 0, "%s", err);
        net_task(51 + (uint64_t)by_build, sha, &trust);
        serve_net(sha, BYTES, sizeof BYTES - 1, "n.nnue", sig);
        net_refused(sha, "not signed by a trusted operator key");
        snprintf(path, sizeof path, "%s/nets/%s", cache, sha);
        cr_assert_neq(access(path, F_OK), 0, "a wrongly signed net was cached");
    }
    sign_key_wipe(&op);
    sign_key_wipe(&other);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    cr_assert_eq(system(path), 0);
}

/*
 * A task that needs a build and a net asks for the net only once the
 * build's bytes are in (the coordinator sends one chunk at a time per
 * connection): no request of the net while the build is fetched.
 */
Test(worker, a_net_is_asked_for_after_the_build)
{
    static const char BYTES[] = "still not a net";
    char path[128], sha[XQF_SHA256_HEX + 1];
    snprintf(path, sizeof path, "%s.bytes", cache);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(BYTES, f);
    fclose(f);
    cr_assert_eq(sha256_file(path, sha), 0);
    unlink(path);
    build_task(61, "");
    snprintf(fake.in[fake.nin - 1].u.task.net0, XQF_SHA256_HEX + 1, "%s", sha);
    int from = fake.nsent;
    serve_build();                   /* asserts each request is the build's */
    for (int i = from; i < fake.nsent; i++)
        cr_assert(fake.sent[i].type != XQF_MSG_BUILD_REQUEST || strcmp(fake.sent[i].u.build_request.kind, "build") == 0,
                  "the net was asked for while the build was fetched");
    serve_net(sha, BYTES, sizeof BYTES - 1, "bad.nnue", "");
    net_refused(sha, "refused by the engine's reader");
}

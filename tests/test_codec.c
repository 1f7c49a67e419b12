/* The wire codec: round trips of every message type, and a corpus of bad frames. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "malformed.h"

/* ---- a tiny MessagePack writer, to build frames the codec would never send ---- */

typedef struct {
    unsigned char b[4096];
    size_t n;
} Raw;

static void raw_byte(Raw *r, unsigned v) { r->b[r->n++] = (unsigned char)v; }
static void raw_str(Raw *r, const char *s)
{
    size_t len = strlen(s);
    if (len < 32) {
        raw_byte(r, 0xa0 | (unsigned)len);
    } else {
        raw_byte(r, 0xd9);
        raw_byte(r, (unsigned)len);
    }
    memcpy(r->b + r->n, s, len);
    r->n += len;
}
static void raw_uint(Raw *r, unsigned v)
{
    if (v < 128) {
        raw_byte(r, v);
    } else {
        raw_byte(r, 0xce);
        for (int i = 3; i >= 0; i--)
            raw_byte(r, (v >> (8 * i)) & 0xff);
    }
}
static void raw_map(Raw *r, unsigned n) { raw_byte(r, 0x80 | n); }
/* The header: sig, v, t (3 of the map's entries). */
static void raw_header(Raw *r, unsigned entries, const char *sig, unsigned version, const char *type)
{
    raw_map(r, entries);
    raw_str(r, "sig");
    raw_str(r, sig);
    raw_str(r, "v");
    raw_uint(r, version);
    raw_str(r, "t");
    raw_str(r, type);
}

static XqfDecodeStatus decode_raw(const Raw *r)
{
    XqfMsg m;
    char err[160];
    XqfDecodeStatus st = xqf_msg_decode(r->b, r->n, &m, err, sizeof err);
    xqf_msg_free(&m);
    return st;
}

/* ---- round trips --------------------------------------------------------- */

static void fill(XqfMsg *m, XqfMsgType type)
{
    xqf_msg_init(m, type);
    switch (type) {
    case XQF_MSG_HELLO:
        strcpy(m->u.hello.name, "box-1");
        strcpy(m->u.hello.build, "xqf-271074-00ff");
        m->u.hello.cores = 8;
        m->u.hello.concurrency = 7;
        break;
    case XQF_MSG_WELCOME:
        m->u.welcome.worker_id = 42;
        m->u.welcome.lease_ms = 60000;
        m->u.welcome.heartbeat_ms = 15000;
        break;
    case XQF_MSG_TASK_REQUEST: m->u.task_request.slot = 3; break;
    case XQF_MSG_TASK: {
        XqfMsg_task *t = &m->u.task;
        t->slot = 1;
        t->task_id = UINT64_MAX;
        t->lease = 77;
        t->run_id = 5;
        strcpy(t->kind, "sprt");
        t->first_pair = 1LL << 40;
        t->pairs = 2;
        const char *lines[2] = { "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
                                 "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 moves h2e2" };
        cr_assert_eq(xqf_strs_set(&t->openings, 2, lines), 0);
        t->seed = 99;
        t->nodes = 500;
        t->margin_ms = 100;
        t->hash_mb = 16;
        t->threads = 2;
        strcpy(t->engine, "fsf");
        strcpy(t->proto, "ucci");
        t->he_letters = true;
        xqf_strs_push(&t->init, "setoption name UCI_Variant value xiangqi");
        strcpy(t->hash_option, "Hash Size");
        strcpy(t->net_option, "EvalFile");
        /* the second player another engine (a run of two engines): its own settings */
        strcpy(t->engine1, "eleeye");
        strcpy(t->proto1, "ucci");
        t->ranks1_1 = true;
        xqf_strs_push(&t->init1, "setoption usebook false");
        xqf_strs_push(&t->init1, "setoption promotion false");
        strcpy(t->hash_option1, "hashsize");
        strcpy(t->threads_option1, "threads");
        strcpy(t->name0, "test");
        strcpy(t->params0, "NullR=2,FutilityMargin1=130");
        strcpy(t->name1, "base");
        t->resign_moves = -5;
        t->resign_score = 5;
        t->draw_after = 15;
        t->draw_moves = 25;
        t->draw_score = 35;
        t->max_plies = 45;
        break;
    }
    case XQF_MSG_IDLE: m->u.idle.retry_ms = 1000; break;
    case XQF_MSG_RESULT:
        m->u.result.task_id = 9;
        m->u.result.lease = 10;
        m->u.result.pairs = 3;
        m->u.result.wins = 2;
        m->u.result.draws = 3;
        m->u.result.losses = 1;
        m->u.result.penta.count = 5;
        m->u.result.penta.v[2] = 2;
        m->u.result.penta.v[3] = 1;
        m->u.result.reasons.count = 17;
        m->u.result.reasons.v[1] = 6;
        break;
    case XQF_MSG_HEARTBEAT: m->u.heartbeat.task_id = 1; m->u.heartbeat.lease = 2; break;
    case XQF_MSG_HANDBACK:
        m->u.handback.task_id = 1;
        m->u.handback.refused = true;
        strcpy(m->u.handback.reason, "unknown parameter 'Foo'");
        break;
    case XQF_MSG_ACK: strcpy(m->u.ack.status, "accepted"); m->u.ack.pairs = 4; m->u.ack.stop = true; break;
    case XQF_MSG_BYE: strcpy(m->u.bye.reason, "bye"); break;
    case XQF_MSG_ERROR: m->u.error.code = XQF_ERR_VERSION; strcpy(m->u.error.text, "v"); break;
    case XQF_MSG_STATUS_REQUEST: m->u.status_request.max_runs = 5; break;
    case XQF_MSG_BUILD_REQUEST:
        memset(m->u.build_request.sha256, 'a', XQF_SHA256_HEX);
        m->u.build_request.offset = 4096;
        break;
    case XQF_MSG_BUILD_CHUNK: {
        static uint8_t bytes[300];
        for (size_t i = 0; i < sizeof bytes; i++)
            bytes[i] = (uint8_t)(i * 7);
        memset(m->u.build_chunk.sha256, 'b', XQF_SHA256_HEX);
        m->u.build_chunk.offset = 300;
        m->u.build_chunk.total = 900;
        cr_assert_eq(xqf_bin_set(&m->u.build_chunk.data, bytes, sizeof bytes), 0);
        break;
    }
    case XQF_MSG_UPDATE:
        memset(m->u.update.sha256, 'c', XQF_SHA256_HEX);
        strcpy(m->u.update.name, "xqf-worker-14");
        m->u.update.protocol = 14;
        m->u.update.total = 1 << 20;
        break;
    case XQF_MSG_UPDATE_FAILED:
        memset(m->u.update_failed.sha256, 'd', XQF_SHA256_HEX);
        strcpy(m->u.update_failed.reason, "not signed by a trusted operator key");
        break;
    case XQF_MSG_STATUS:
        xqf_strs_push(&m->u.status.workers, "worker a");
        xqf_strs_push(&m->u.status.runs, "run 1");
        xqf_strs_push(&m->u.status.runs, "");
        break;
    default: break;
    }
}

/* Encoding the decoded message gives the same bytes (fields compared through their encoding). */
Test(codec, round_trip_every_type)
{
    for (int t = XQF_MSG_NONE + 1; t < XQF_MSG_COUNT; t++) {
        XqfMsg m, back;
        fill(&m, (XqfMsgType)t);
        XqfBuf a = { 0 }, b = { 0 };
        cr_assert_eq(xqf_msg_encode(&m, &a), 0, "encode %s", xqf_msg_type_name((XqfMsgType)t));
        char err[160];
        cr_assert_eq(xqf_msg_decode(a.data, a.len, &back, err, sizeof err), XQF_DECODE_OK, "%s: %s",
                     xqf_msg_type_name((XqfMsgType)t), err);
        cr_assert_eq(back.type, (XqfMsgType)t);
        cr_assert_eq(xqf_msg_encode(&back, &b), 0);
        cr_assert_eq(a.len, b.len);
        cr_assert(memcmp(a.data, b.data, a.len) == 0, "%s differs after a round trip",
                  xqf_msg_type_name((XqfMsgType)t));
        xqf_msg_free(&m);
        xqf_msg_free(&back);
        xqf_msg_free(&back); /* safe twice */
        xqf_buf_free(&a);
        xqf_buf_free(&b);
    }
}

Test(codec, task_fields_survive)
{
    XqfMsg m, back;
    fill(&m, XQF_MSG_TASK);
    XqfBuf a = { 0 };
    cr_assert_eq(xqf_msg_encode(&m, &a), 0);
    cr_assert_eq(xqf_msg_decode(a.data, a.len, &back, NULL, 0), XQF_DECODE_OK);
    cr_assert_eq(back.u.task.task_id, UINT64_MAX);
    cr_assert_eq(back.u.task.first_pair, 1LL << 40);
    cr_assert_eq(back.u.task.openings.count, 2);
    cr_assert_str_eq(back.u.task.openings.v[1], m.u.task.openings.v[1]);
    cr_assert_str_eq(back.u.task.params0, "NullR=2,FutilityMargin1=130");
    cr_assert_eq(back.u.task.resign_moves, -5);
    cr_assert_eq(back.u.task.max_plies, 45);
    cr_assert_eq(back.u.task.threads, 2);
    cr_assert_str_eq(back.u.task.engine, "fsf");
    cr_assert_str_eq(back.u.task.proto, "ucci");
    cr_assert(back.u.task.he_letters && !back.u.task.ranks1);
    cr_assert_eq(back.u.task.init.count, 1);
    cr_assert_str_eq(back.u.task.init.v[0], "setoption name UCI_Variant value xiangqi");
    cr_assert_str_eq(back.u.task.hash_option, "Hash Size");
    cr_assert_str_eq(back.u.task.threads_option, "");
    cr_assert_str_eq(back.u.task.net_option, "EvalFile");
    cr_assert_str_eq(back.u.task.engine1, "eleeye");
    cr_assert_str_eq(back.u.task.proto1, "ucci");
    cr_assert(back.u.task.ranks1_1 && !back.u.task.he_letters1);
    cr_assert_eq(back.u.task.init1.count, 2);
    cr_assert_str_eq(back.u.task.init1.v[1], "setoption promotion false");
    cr_assert_str_eq(back.u.task.hash_option1, "hashsize");
    cr_assert_str_eq(back.u.task.threads_option1, "threads");
    cr_assert_str_eq(back.u.task.net_option1, "");
    xqf_msg_free(&m);
    xqf_msg_free(&back);
    xqf_buf_free(&a);
}

Test(codec, bytes_survive_and_are_bounded)
{
    XqfMsg m, back;
    fill(&m, XQF_MSG_BUILD_CHUNK);
    XqfBuf a = { 0 };
    cr_assert_eq(xqf_msg_encode(&m, &a), 0);
    cr_assert_eq(xqf_msg_decode(a.data, a.len, &back, NULL, 0), XQF_DECODE_OK);
    cr_assert_eq(back.u.build_chunk.data.len, 300);
    cr_assert(memcmp(back.u.build_chunk.data.data, m.u.build_chunk.data.data, 300) == 0);
    xqf_msg_free(&back);
    /* a chunk above XQF_CHUNK_MAX is not sent, and not taken */
    static uint8_t big[XQF_CHUNK_MAX + 1];
    cr_assert_eq(xqf_bin_set(&m.u.build_chunk.data, big, sizeof big), 0);
    cr_assert_eq(xqf_msg_encode(&m, &a), -1);
    m.u.build_chunk.data.len = XQF_CHUNK_MAX;
    cr_assert_eq(xqf_msg_encode(&m, &a), 0);
    /* the data is the last field: one byte more, and its bin 32 length says so */
    size_t at = a.len - XQF_CHUNK_MAX - 5;
    cr_assert_eq((uint8_t)a.data[at], 0xc6);
    char *grown = malloc(a.len + 1);
    memcpy(grown, a.data, a.len);
    grown[a.len] = 0;
    grown[at + 4] = 0x01;                  /* 0x00080000 -> 0x00080001 */
    cr_assert_eq(xqf_msg_decode(grown, a.len + 1, &back, NULL, 0), XQF_DECODE_MALFORMED);
    xqf_msg_free(&back);
    free(grown);
    xqf_msg_free(&m);
    xqf_buf_free(&a);
}

Test(codec, encode_refuses_what_breaks_a_limit)
{
    XqfMsg m;
    fill(&m, XQF_MSG_STATUS);
    char big[XQF_TEXT_MAX + 2];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    xqf_strs_push(&m.u.status.runs, big);
    XqfBuf a = { 0 };
    cr_assert_eq(xqf_msg_encode(&m, &a), -1);
    xqf_msg_free(&m);
    xqf_buf_free(&a);
}

/* ---- the corpus of bad frames ------------------------------------------------ */

Test(codec, bad_frames)
{
    Raw r;
    XqfMsg m;
    /* empty, not a map, a bare string */
    cr_assert_eq(xqf_msg_decode("", 0, &m, NULL, 0), XQF_DECODE_MALFORMED);
    cr_assert_eq(xqf_msg_decode("\x01", 1, &m, NULL, 0), XQF_DECODE_MALFORMED);
    cr_assert_eq(xqf_msg_decode("\xa3xqf", 4, &m, NULL, 0), XQF_DECODE_MALFORMED);
    /* reserved byte 0xc1, bin and ext types */
    cr_assert_eq(xqf_msg_decode("\xc1", 1, &m, NULL, 0), XQF_DECODE_MALFORMED);
    cr_assert_eq(xqf_msg_decode("\xc4\x01\x00", 3, &m, NULL, 0), XQF_DECODE_MALFORMED);
    cr_assert_eq(xqf_msg_decode("\xd4\x01\x00", 3, &m, NULL, 0), XQF_DECODE_MALFORMED);
    /* an array claiming 2^32-1 elements in a tiny frame */
    cr_assert_eq(xqf_msg_decode("\xdd\xff\xff\xff\xff\x01", 6, &m, NULL, 0), XQF_DECODE_MALFORMED);
    cr_assert_eq(xqf_msg_decode("\xdf\xff\xff\xff\xff\x01", 6, &m, NULL, 0), XQF_DECODE_MALFORMED);
    /* a string longer than the frame */
    cr_assert_eq(xqf_msg_decode("\xdb\x00\x10\x00\x00zz", 7, &m, NULL, 0), XQF_DECODE_MALFORMED);
    /* deep nesting */
    cr_assert_eq(xqf_msg_decode("\x91\x91\x91\x91\x91\x01", 6, &m, NULL, 0), XQF_DECODE_MALFORMED);

    /* wrong signature, missing signature */
    r.n = 0;
    raw_header(&r, 4, "xqg", XQF_PROTOCOL_VERSION, "task_request");
    raw_str(&r, "slot");
    raw_uint(&r, 0);
    cr_assert_eq(decode_raw(&r), XQF_DECODE_MALFORMED);
    /* the same frame, right: decodes */
    r.n = 0;
    raw_header(&r, 4, "xqf", XQF_PROTOCOL_VERSION, "task_request");
    raw_str(&r, "slot");
    raw_uint(&r, 0);
    cr_assert_eq(decode_raw(&r), XQF_DECODE_OK);
    /* trailing byte */
    Raw t = r;
    raw_byte(&t, 0x00);
    cr_assert_eq(decode_raw(&t), XQF_DECODE_MALFORMED);
    /* truncated at every length */
    for (size_t len = 0; len < r.n; len++)
        cr_assert_eq(xqf_msg_decode(r.b, len, &m, NULL, 0), XQF_DECODE_MALFORMED, "cut at %zu", len);
    /* wrong version, unknown type */
    r.n = 0;
    raw_header(&r, 4, "xqf", XQF_PROTOCOL_VERSION + 1, "task_request");
    raw_str(&r, "slot");
    raw_uint(&r, 0);
    cr_assert_eq(decode_raw(&r), XQF_DECODE_VERSION);
    /* a version before the oldest decoded (12: one engine's settings in a task): said plainly, its version kept */
    r.n = 0;
    raw_header(&r, 4, "xqf", 12, "task_request");
    raw_str(&r, "slot");
    raw_uint(&r, 0);
    char why[160];
    cr_assert_eq(xqf_msg_decode(r.b, r.n, &m, why, sizeof why), XQF_DECODE_VERSION);
    cr_assert_eq(m.version, 12);
    xqf_msg_free(&m);
    cr_assert_str_eq(why, "protocol version 12, expected 13-14");
    /* the previous version (13, the same messages) decodes, and says which it was */
    r.n = 0;
    raw_header(&r, 4, "xqf", XQF_PROTOCOL_OLDEST, "task_request");
    raw_str(&r, "slot");
    raw_uint(&r, 7);
    cr_assert_eq(xqf_msg_decode(r.b, r.n, &m, why, sizeof why), XQF_DECODE_OK, "%s", why);
    cr_assert_eq(m.version, XQF_PROTOCOL_OLDEST);
    cr_assert_eq(m.u.task_request.slot, 7);
    /* answered in it: encoded with its version, decoded back with it */
    XqfBuf back = { 0 };
    cr_assert_eq(xqf_msg_encode(&m, &back), 0);
    XqfMsg again;
    cr_assert_eq(xqf_msg_decode(back.data, back.len, &again, why, sizeof why), XQF_DECODE_OK, "%s", why);
    cr_assert_eq(again.version, XQF_PROTOCOL_OLDEST);
    xqf_msg_init(&again, XQF_MSG_TASK_REQUEST);
    cr_assert_eq(xqf_msg_encode(&again, &back), 0);          /* version 0: this code's own */
    cr_assert_eq(xqf_msg_decode(back.data, back.len, &again, why, sizeof why), XQF_DECODE_OK, "%s", why);
    cr_assert_eq(again.version, XQF_PROTOCOL_VERSION);
    xqf_msg_free(&again);
    xqf_buf_free(&back);
    xqf_msg_free(&m);
    cr_assert_eq(xqf_decode_error_code(XQF_DECODE_VERSION), XQF_ERR_VERSION);
    r.n = 0;
    raw_header(&r, 3, "xqf", XQF_PROTOCOL_VERSION, "launch_missiles");
    cr_assert_eq(decode_raw(&r), XQF_DECODE_TYPE);
    /* wrong field type, missing field, unknown field, duplicate field, negative unsigned */
    r.n = 0;
    raw_header(&r, 4, "xqf", XQF_PROTOCOL_VERSION, "task_request");
    raw_str(&r, "slot");
    raw_str(&r, "0");
    cr_assert_eq(decode_raw(&r), XQF_DECODE_MALFORMED);
    r.n = 0;
    raw_header(&r, 3, "xqf", XQF_PROTOCOL_VERSION, "task_request");
    cr_assert_eq(decode_raw(&r), XQF_DECODE_MALFORMED);
    r.n = 0;
    raw_header(&r, 5, "xqf", XQF_PROTOCOL_VERSION, "task_request");
    raw_str(&r, "slot");
    raw_uint(&r, 0);
    raw_str(&r, "extra");
    raw_uint(&r, 0);
    cr_assert_eq(decode_raw(&r), XQF_DECODE_MALFORMED);
    r.n = 0;
    raw_header(&r, 5, "xqf", XQF_PROTOCOL_VERSION, "task_request");
    raw_str(&r, "slot");
    raw_uint(&r, 0);
    raw_str(&r, "slot");
    raw_uint(&r, 1);
    cr_assert_eq(decode_raw(&r), XQF_DECODE_MALFORMED);
    r.n = 0;
    raw_header(&r, 4, "xqf", XQF_PROTOCOL_VERSION, "task_request");
    raw_str(&r, "slot");
    raw_byte(&r, 0xff); /* -1 */
    cr_assert_eq(decode_raw(&r), XQF_DECODE_MALFORMED);
    /* an oversize string field, a NUL inside a string */
    r.n = 0;
    raw_header(&r, 4, "xqf", XQF_PROTOCOL_VERSION, "bye");
    raw_str(&r, "reason");
    char big[XQF_TEXT_MAX + 2];
    memset(big, 'y', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    raw_byte(&r, 0xda);
    raw_byte(&r, (unsigned)(strlen(big) >> 8));
    raw_byte(&r, (unsigned)(strlen(big) & 0xff));
    memcpy(r.b + r.n, big, strlen(big));
    r.n += strlen(big);
    cr_assert_eq(decode_raw(&r), XQF_DECODE_MALFORMED);
    r.n = 0;
    raw_header(&r, 4, "xqf", XQF_PROTOCOL_VERSION, "bye");
    raw_str(&r, "reason");
    raw_byte(&r, 0xa3);
    raw_byte(&r, 'a');
    raw_byte(&r, 0);
    raw_byte(&r, 'b');
    cr_assert_eq(decode_raw(&r), XQF_DECODE_MALFORMED);
    /* too big a frame */
    size_t huge = (size_t)XQF_FRAME_MAX + 1;
    char *h = calloc(1, huge);
    cr_assert_eq(xqf_msg_decode(h, huge, &m, NULL, 0), XQF_DECODE_TOO_BIG);
    free(h);
    cr_assert_eq(xqf_decode_error_code(XQF_DECODE_TOO_BIG), XQF_ERR_TOO_BIG);
}

/* Random bytes and random corruptions of valid frames: never a crash, leak or false success on garbage. */
Test(codec, fuzz)
{
    srand(12345);
    XqfBuf valid = { 0 };
    for (int round = 0; round < 20000; round++) {
        XqfMsg m;
        fill(&m, (XqfMsgType)(1 + round % (XQF_MSG_COUNT - 1)));
        cr_assert_eq(xqf_msg_encode(&m, &valid), 0);
        xqf_msg_free(&m);
        int flips = 1 + rand() % 4;
        for (int i = 0; i < flips; i++)
            valid.data[rand() % (int)valid.len] = (char)rand();
        size_t len = round % 3 == 0 ? (size_t)(rand() % (int)valid.len + 1) : valid.len;
        XqfMsg out;
        xqf_msg_decode(valid.data, len, &out, NULL, 0);
        xqf_msg_free(&out);
    }
    xqf_buf_free(&valid);
}

/* ---- every malformed variant of every type (tests/malformed.c) ---------------- */

typedef struct {
    int refused, total;
    char last_type[32];
    int per_type;
} Tally;

static void expect_valid(const char *type, const char *what, const uint8_t *data, size_t len, void *arg)
{
    (void)what, (void)arg;
    XqfMsg m;
    char err[160];
    cr_assert_eq(xqf_msg_decode(data, len, &m, err, sizeof err), XQF_DECODE_OK, "%s: %s", type, err);
    cr_assert_str_eq(xqf_msg_type_name(m.type), type);
    xqf_msg_free(&m);
}

static void expect_refused(const char *type, const char *what, const uint8_t *data, size_t len, void *arg)
{
    Tally *t = arg;
    XqfMsg m;
    XqfDecodeStatus st = xqf_msg_decode(data, len, &m, NULL, 0);
    xqf_msg_free(&m);
    cr_expect_neq(st, XQF_DECODE_OK, "%s with %s was accepted", type, what);
    t->refused += st != XQF_DECODE_OK;
    t->total++;
}

Test(codec, every_malformed_variant_refused)
{
    cr_assert_eq(malformed_valid_each(expect_valid, NULL), XQF_MSG_COUNT - 1);
    Tally t = { 0 };
    int n = malformed_each(expect_refused, &t);
    cr_assert_eq(t.refused, n);
    cr_assert_gt(n, 10 * (XQF_MSG_COUNT - 1), "only %d variants", n);
    fprintf(stderr, "codec: %d malformed frames over %d message types, all refused\n", n, XQF_MSG_COUNT - 1);
}

/* Every text from the network is well-formed UTF-8 before it reaches SQL (PostgreSQL refuses the rest). */
Test(codec, utf8_checked)
{
    const char *good[] = { "", "plain", "\xc3\xa9t\xc3\xa9", "\xe5\xb8\x85", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf",
                           "\xed\x9f\xbf", "\xee\x80\x80" };
    const char *bad[] = { "\xff", "\xfe", "a\xc3", "\xc0\xaf", "\xc1\xbf", "\xe0\x80\xaf", "\xed\xa0\x80",
                          "\xed\xbf\xbf", "\xf0\x80\x80\xaf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\x80",
                          "\xe5\xb8", "\xe5\x28\x85", "\xf0\x9f\x98" };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        cr_expect(xqf_utf8_valid(good[i], strlen(good[i])), "good case %zu refused", i);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        cr_expect(!xqf_utf8_valid(bad[i], strlen(bad[i])), "bad case %zu accepted", i);
    /* in a message: a hello whose name is not UTF-8 is malformed */
    XqfMsg m, back;
    xqf_msg_init(&m, XQF_MSG_HELLO);
    snprintf(m.u.hello.name, sizeof m.u.hello.name, "w\xff");
    XqfBuf b = { 0 };
    cr_assert_eq(xqf_msg_encode(&m, &b), 0);
    char err[160];
    cr_assert_eq(xqf_msg_decode(b.data, b.len, &back, err, sizeof err), XQF_DECODE_MALFORMED);
    cr_assert(strstr(err, "name"), "%s", err);
    xqf_msg_free(&back);
    xqf_buf_free(&b);
}

/* xqf_text_sanitize: what any decoder accepts, cut at a character boundary. */
Test(codec, text_sanitized_for_the_wire)
{
    char out[64];
    cr_assert_eq(xqf_text_sanitize(out, sizeof out, "plain text"), 10);
    cr_assert_str_eq(out, "plain text");
    xqf_text_sanitize(out, sizeof out, "a\nb\tc\x1b[2Jd\x7f");
    cr_assert_str_eq(out, "a b c [2Jd ");
    xqf_text_sanitize(out, sizeof out, "caf\xc3\xa9 \xe8\xb1\xa1\xe6\xa3\x8b \xf0\x9f\x98\x80");
    cr_assert_str_eq(out, "caf\xc3\xa9 \xe8\xb1\xa1\xe6\xa3\x8b \xf0\x9f\x98\x80", "valid UTF-8 kept");
    xqf_text_sanitize(out, sizeof out, "x\xff" "y\xc0\xaf" "z\xed\xa0\x80" "w\xe4\xb8");
    cr_assert_str_eq(out, "x?y??z???w??", "invalid, overlong, surrogate and cut sequences");
    xqf_text_sanitize(out, sizeof out, "a\xc2\x9b" "2Jb\xc2\xa0");
    cr_assert_str_eq(out, "a 2Jb\xc2\xa0", "a C1 control (CSI) is a control, U+00A0 is not");
    /* cut to fit: never inside a character */
    char small[5];
    cr_assert_eq(xqf_text_sanitize(small, sizeof small, "ab\xe8\xb1\xa1"), 2);
    cr_assert_str_eq(small, "ab");
    cr_assert_eq(xqf_text_sanitize(small, 1, "abc"), 0);
    cr_assert_str_eq(small, "");
    char big[1200], cut[XQF_TEXT_MAX + 1];
    for (int i = 0; i < 600; i++)
        memcpy(big + 2 * i, "\xc3\xa9", 2);
    big[1199] = '\0';                /* 599 characters and a lone lead byte */
    size_t n = xqf_text_sanitize(cut, sizeof cut, big);
    cr_assert_eq(n, XQF_TEXT_MAX);
    cr_assert(xqf_utf8_valid(cut, n));
}

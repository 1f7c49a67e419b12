#define _GNU_SOURCE
/*
 * Writes the codec fuzz seed corpus into argv[1]: one valid frame per
 * message type, and a few broken ones, each of the current version so that
 * it reaches the check it is for (a seed of an old version stops at the
 * version).  Run it again, into an emptied folder, when messages.def or
 * the protocol version changes:
 *   cc -Ischemas tests/fuzz/make_codec_corpus.c build/lib/libxqf_codec.a \
 *      $(pkg-config --libs msgpack) -o /tmp/mkcorpus && /tmp/mkcorpus tests/fuzz/corpus/codec
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "codec.h"

static const char *dir;
static void put(const char *name, const void *d, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(d, 1, n, f) != n) { perror(path); exit(1); }
    fclose(f);
}
static void enc(const XqfMsg *m, XqfBuf *b)
{
    if (xqf_msg_encode(m, b) != 0) { fprintf(stderr, "encode %s\n", xqf_msg_type_name(m->type)); exit(1); }
    XqfMsg back; char err[160];
    if (xqf_msg_decode(b->data, b->len, &back, err, sizeof err) != XQF_DECODE_OK) { fprintf(stderr, "%s\n", err); exit(1); }
    xqf_msg_free(&back);
}

static void fill(XqfMsg *m, XqfMsgType type)
{
    xqf_msg_init(m, type);
    switch (type) {
    case XQF_MSG_HELLO:
        strcpy(m->u.hello.name, "box-1"); strcpy(m->u.hello.build, "xqf-271074-00ff");
        m->u.hello.cores = 8; m->u.hello.concurrency = 7; break;
    case XQF_MSG_WELCOME:
        m->u.welcome.worker_id = 42; m->u.welcome.lease_ms = 60000; m->u.welcome.heartbeat_ms = 15000; break;
    case XQF_MSG_TASK_REQUEST: m->u.task_request.slot = 3; break;
    case XQF_MSG_TASK: {
        XqfMsg_task *t = &m->u.task;
        t->slot = 1; t->task_id = UINT64_MAX; t->lease = 77; t->run_id = 5;
        strcpy(t->kind, "spsa"); strcpy(t->build, "xqf-271074-00ff");
        t->first_pair = 1LL << 40; t->pairs = 2;
        const char *lines[2] = { "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
                                 "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 moves h2e2" };
        xqf_strs_set(&t->openings, 2, lines);
        t->seed = 99; t->nodes = 0; t->base_ms = 10000; t->inc_ms = 100; t->margin_ms = 100; t->hash_mb = 16; t->threads = 1;
        strcpy(t->name0, "test"); strcpy(t->params0, "NullR=2,FutilityMargin1=130");
        strcpy(t->name1, "base"); strcpy(t->params1, "");
        t->resign_moves = 4; t->resign_score = 600; t->draw_after = 40;
        t->draw_moves = 8; t->draw_score = 10; t->max_plies = -1;
        t->bench0 = 2770588; t->bench1 = 0; t->ref_nps = 1000000;
        break;
    }
    case XQF_MSG_IDLE: m->u.idle.slot = 1; m->u.idle.retry_ms = 1000; break;
    case XQF_MSG_RESULT:
        m->u.result.task_id = 9; m->u.result.lease = 10; m->u.result.pairs = 3;
        m->u.result.wins = 2; m->u.result.draws = 3; m->u.result.losses = 1;
        m->u.result.penta.count = 5; m->u.result.penta.v[2] = 2; m->u.result.penta.v[3] = 1; m->u.result.games_from = 1;
        m->u.result.reasons.count = 17; m->u.result.reasons.v[1] = 6; m->u.result.reasons.v[16] = INT64_MIN;
        break;
    case XQF_MSG_HEARTBEAT: m->u.heartbeat.task_id = 1; m->u.heartbeat.lease = 2; break;
    case XQF_MSG_HANDBACK:
        m->u.handback.task_id = 1; m->u.handback.lease = 300; m->u.handback.refused = true;
        strcpy(m->u.handback.reason, "unknown parameter 'Foo'"); break;
    case XQF_MSG_ACK:
        m->u.ack.task_id = 70000; m->u.ack.lease = 1ULL << 33;
        strcpy(m->u.ack.status, "accepted"); m->u.ack.pairs = 4; m->u.ack.stop = true; break;
    case XQF_MSG_BYE: strcpy(m->u.bye.reason, "shutdown"); break;
    case XQF_MSG_ERROR: m->u.error.code = XQF_ERR_VERSION; strcpy(m->u.error.text, "protocol version 2, expected 1"); break;
    case XQF_MSG_STATUS_REQUEST: m->u.status_request.max_runs = 5; break;
    case XQF_MSG_BUILD_REQUEST:
        memset(m->u.build_request.sha256, 'a', XQF_SHA256_HEX);
        m->u.build_request.offset = 524288;
        break;
    case XQF_MSG_BUILD_CHUNK: {
        static const unsigned char bytes[] = { 0x7f, 'E', 'L', 'F', 2, 1, 1, 0 };
        memset(m->u.build_chunk.sha256, 'b', XQF_SHA256_HEX);
        m->u.build_chunk.offset = 0;
        m->u.build_chunk.total = 81312;
        xqf_bin_set(&m->u.build_chunk.data, bytes, sizeof bytes);
        break;
    }
    case XQF_MSG_BENCH:
        memset(m->u.bench.sha256, 'c', XQF_SHA256_HEX);
        m->u.bench.nodes = 2770588; m->u.bench.nps = 1171000;
        strcpy(m->u.bench.refused, "bench signature 123, recorded 2770588");
        break;
    case XQF_MSG_STATUS:
        xqf_strs_push(&m->u.status.workers, "worker box-1 slots 2 busy 1");
        xqf_strs_push(&m->u.status.runs, "run 1 sprt games 200 W/D/L 80/40/80");
        xqf_strs_push(&m->u.status.runs, "");
        break;
    default: break;
    }
}

int main(int argc, char **argv)
{
    dir = argv[1];
    (void)argc;
    XqfBuf b = { 0 };
    char name[64];
    for (int t = XQF_MSG_NONE + 1; t < XQF_MSG_COUNT; t++) {
        XqfMsg m;
        fill(&m, (XqfMsgType)t);
        enc(&m, &b);
        snprintf(name, sizeof name, "%s", xqf_msg_type_name((XqfMsgType)t));
        put(name, b.data, b.len);
        xqf_msg_free(&m);
    }
    /* Invalid: cut short, a trailing byte, another version, names not UTF-8,
     * unknown type, a field missing, a hostile count, deep nesting, not a
     * map, an array. */
    XqfMsg m;
    fill(&m, XQF_MSG_TASK);
    enc(&m, &b);
    put("bad-truncated-task", b.data, b.len / 2);
    xqf_msg_free(&m);
    fill(&m, XQF_MSG_HELLO);
    enc(&m, &b);
    char tmp[512];
    memcpy(tmp, b.data, b.len);
    tmp[b.len] = (char)0xc0;
    put("bad-trailing-byte", tmp, b.len + 1);
    tmp[0] = (char)(0x80 | 6);                /* one entry fewer: concurrency missing */
    put("bad-missing-field", tmp, b.len - 13);
    /* the version value follows "v" = a1 76 */
    tmp[0] = (char)(0x80 | 7);
    char *v = memmem(tmp, b.len, "\xa1v", 2);
    v[2] = XQF_PROTOCOL_VERSION + 1;
    put("bad-version", tmp, b.len);
    xqf_msg_free(&m);
    /* names for the codec's UTF-8 check: 2-, 3- and 4-byte characters; a 0xff byte; a surrogate (same length) */
    fill(&m, XQF_MSG_HELLO);
    strcpy(m.u.hello.name, "bo\xc3\xa9\xe5\xb8\x85\xf0\x9f\x98\x80");
    enc(&m, &b);
    put("hello-utf8", b.data, b.len);
    xqf_msg_free(&m);
    fill(&m, XQF_MSG_HELLO);
    enc(&m, &b);
    memcpy(tmp, b.data, b.len);
    char *name5 = memmem(tmp, b.len, "box-1", 5);
    memcpy(name5, "box\xff" "1", 5);
    put("bad-utf8-name", tmp, b.len);
    memcpy(name5, "b\xed\xa0\x80x", 5);
    put("bad-utf8-surrogate", tmp, b.len);
    xqf_msg_free(&m);
    static const unsigned char unknown[] = { 0x84, 0xa3, 's', 'i', 'g', 0xa3, 'x', 'q', 'f', 0xa1, 'v', XQF_PROTOCOL_VERSION,
                                             0xa1, 't', 0xa4, 'p', 'i', 'n', 'g', 0xa1, 'x', 0x01 };
    put("bad-unknown-type", unknown, sizeof unknown);
    static const unsigned char count[] = { 0x83, 0xa3, 's', 'i', 'g', 0xdd, 0xff, 0xff, 0xff, 0xff, 0x00 };
    put("bad-huge-count", count, sizeof count);
    static const unsigned char deep[] = { 0x91, 0x91, 0x91, 0x91, 0x91, 0x91, 0x90 };
    put("bad-deep", deep, sizeof deep);
    static const unsigned char notmap[] = { 0x93, 0xa3, 's', 'i', 'g', 0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0xc4, 0x01, 0x00 };
    put("bad-not-a-map", notmap, sizeof notmap);
    put("bad-text", "hello world\n", 12);
    static const unsigned char array[] = { 0x93, 0x01, 0xa3, 's', 'i', 'g', 0xcb, 0x40, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18 };
    put("bad-array", array, sizeof array);
    xqf_buf_free(&b);
    return 0;
}

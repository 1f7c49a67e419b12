/*
 * test_nnue.c - the network evaluation (engine/nnue.h) against docs/nnue.md:
 * feature indexes worked out by hand and by an independent transcription
 * of the doc; the incremental accumulators of a search line against a
 * refresh from scratch after every make and unmake (king walks, mirror
 * flips, captures, null moves); the AVX2 and portable paths against each
 * other; the integer output against a plain reference written here; the
 * reader's refusals, through the API and through the UCI EvalFile option
 * (which keeps the net it had); and `xqf-engine evalnet`.  Nets are random,
 * made here and written with nnue_save.
 */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "fen.h"
#include "movegen.h"
#include "nnue.h"
#include "protocol.h"
#include "search.h"
#include "sha256.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint32_t next_random(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

/* Uniform in [-limit, limit]. */
static int random_in(int limit)
{
    return (int)(next_random() % (2u * (unsigned)limit + 1)) - limit;
}

/*
 * A random net within the training clamps of docs/nnue.md (|b1|, |W1| <=
 * 6 QA = 762, |W2| <= 127), or, wild, with any int16 and int32 values.
 */
static NnueNet *random_net(uint64_t seed, bool wild)
{
    rng_state = seed;
    NnueNet *net = nnue_new();
    cr_assert(net);
    int lim1 = wild ? 32767 : 6 * NNUE_QA, lim2 = wild ? 32767 : NNUE_QA;
    for (int i = 0; i < NNUE_HIDDEN; i++)
        net->b1[i] = (int16_t)random_in(lim1);
    for (int f = 0; f < NNUE_FEATURES; f++)
        for (int i = 0; i < NNUE_HIDDEN; i++)
            net->w1[f][i] = (int16_t)random_in(lim1 / 8 + 1); /* accumulators spread over the clamp range */
    for (int o = 0; o < NNUE_OUTPUT_BUCKETS; o++) {
        for (int i = 0; i < 2 * NNUE_HIDDEN; i++)
            net->w2[o][i] = (int16_t)random_in(lim2);
        net->b2[o] = wild ? (int32_t)next_random() : random_in(NNUE_QA * NNUE_QB * 4);
    }
    if (wild)
        for (int k = 0; k < 2000; k++)
            net->w1[next_random() % NNUE_FEATURES][next_random() % NNUE_HIDDEN] = (int16_t)random_in(32767);
    const char *desc = "random net of test_nnue";
    net->description_length = (uint32_t)strlen(desc);
    memcpy(net->description, desc, net->description_length + 1);
    return net;
}

/* Start positions of the walks: both colours to move, kings off their files, few pieces (kings walk). */
static const char *const FENS[] = {
    START_FEN,
    "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 1",
    "r1bakab1r/9/1cn4cn/p1p1p1p1p/9/9/P1P1P1P1P/1CN1C1N2/9/R1BAKAB1R w - - 4 3",
    "1rbak4/c4n2r/2na5/2N6/p1b3P1p/3C4P/P1P1P2C1/N7B/4A3R/R1BA1K3 w - - 5 31",
    "cn3a3/4k1r2/b2a1n3/p1P5p/2C1p4/2P6/P3p4/4BN2B/2r1AN1R1/R3KA3 b - - 19 51",
    "3k5/9/4b4/9/9/9/9/4B4/4A4/3AKR3 w - - 0 1",
    "4k4/4a4/4ba3/9/2p3p2/9/2P3P2/4B4/4A4/3AK4 b - - 0 1",
    "5k3/4P4/9/9/2r6/9/9/6R2/9/3K5 w - - 0 1",
    "3k5/9/9/2n6/9/6c2/9/4N4/4C4/5K3 b - - 0 1",
    "4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1",
};

static Board parse(const char *fen)
{
    Board b;
    char err[256];
    cr_assert_eq(fen_parse(&b, fen, FEN_GAME, err, sizeof err), 0, "%s: %s", fen, err);
    return b;
}

/* ---- the features, by hand and by a transcription of docs/nnue.md ---- */

Test(nnue, features_by_hand)
{
    /* Red king e0: file e, no mirror, bucket 0 * 2 + 1 = 1; a Red rook on a0 is piece index 4. */
    cr_assert_eq(nnue_feature(RED, sq_make(4, 0), make_piece(RED, ROOK), sq_make(0, 0)), (1 * 14 + 4) * 90 + 0);
    /* Red king f1: mirrored to d1, bucket 1 * 2 + 0 = 2; a Black pawn on c6 (index 13) is seen on g6. */
    cr_assert_eq(nnue_feature(RED, sq_make(5, 1), make_piece(BLACK, PAWN), sq_make(2, 6)),
                 (2 * 14 + 13) * 90 + 6 * 9 + 6);
    /* Black king f9: oriented f0, mirrored to d0, bucket 0; a Red rook on a0 is oriented a9, mirrored i9. */
    cr_assert_eq(nnue_feature(BLACK, sq_make(5, 9), make_piece(RED, ROOK), sq_make(0, 0)), (0 * 14 + 11) * 90 + 89);
    /* Black king e7: oriented e2, bucket 5; its own king (index 0) on e7 is oriented e2 = 22. */
    cr_assert_eq(nnue_feature(BLACK, sq_make(4, 7), make_piece(BLACK, KING), sq_make(4, 7)), (5 * 14 + 0) * 90 + 22);
    cr_assert_eq(nnue_king_slot(RED, sq_make(3, 0)), 0);
    cr_assert_eq(nnue_king_slot(RED, sq_make(5, 0)), 1);
    cr_assert_eq(nnue_king_slot(BLACK, sq_make(4, 8)), 3 * 2);
    cr_assert_eq(nnue_architecture_hash(), 0xe38c69a2u, "FNV-1a of " NNUE_ARCHITECTURE ": %08x",
                 nnue_architecture_hash());
}

/* docs/nnue.md, "Input features", step by step. */
static int doc_feature(int c, int k, int piece, int s)
{
    int kr = sq_rank(k), kf = sq_file(k), r = sq_rank(s), f = sq_file(s);
    if (c == BLACK) {
        kr = 9 - kr;
        r = 9 - r;
    }
    if (kf == 5) {
        kf = 8 - kf;
        f = 8 - f;
    }
    int bucket = kr * 2 + (kf == 4 ? 1 : 0);
    int index = piece_color(piece) == c ? piece_type(piece) - 1 : 7 + piece_type(piece) - 1;
    return (bucket * 14 + index) * 90 + r * 9 + f;
}

Test(nnue, features_follow_the_doc)
{
    bool seen[NNUE_FEATURES] = { false };
    for (int c = RED; c <= BLACK; c++)
        for (int kr = 0; kr < 3; kr++)
            for (int kf = 3; kf <= 5; kf++) {
                int k = sq_make(kf, c == RED ? kr : 9 - kr);
                for (int piece = 1; piece < 16; piece++) {
                    if (piece_type(piece) == EMPTY)
                        continue;
                    for (int s = 0; s < SQUARES; s++) {
                        int f = nnue_feature(c, k, piece, s);
                        cr_assert_eq(f, doc_feature(c, k, piece, s), "c %d k %d piece %d s %d", c, k, piece, s);
                        cr_assert(f >= 0 && f < NNUE_FEATURES);
                        seen[f] = true;
                    }
                }
            }
    for (int f = 0; f < NNUE_FEATURES; f++)
        cr_assert(seen[f], "feature %d is never used", f);
    Board b = parse(START_FEN);
    cr_assert_eq(nnue_output_bucket(&b), 7);
    b = parse("4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1");
    cr_assert_eq(nnue_output_bucket(&b), 0);
    b = parse("3k5/9/4b4/9/9/9/9/4B4/4A4/3AKR3 w - - 0 1"); /* 7 pieces */
    cr_assert_eq(nnue_output_bucket(&b), 1);
}

/* ---- the reference output: docs/nnue.md's integer arithmetic, plainly ---- */

static int reference_eval(const NnueNet *net, const Board *b)
{
    int32_t acc[2][NNUE_HIDDEN];
    int pieces = 0;
    for (int v = 0; v < 2; v++) {
        int c = v == 0 ? b->side : b->side ^ 1;
        int k = -1;
        for (int s = 0; s < SQUARES; s++)
            if (b->squares[s] == make_piece(c, KING))
                k = s;
        for (int i = 0; i < NNUE_HIDDEN; i++)
            acc[v][i] = net->b1[i];
        for (int s = 0; s < SQUARES; s++) {
            if (!b->squares[s])
                continue;
            pieces += v == 0;
            const int16_t *row = net->w1[doc_feature(c, k, b->squares[s], s)];
            for (int i = 0; i < NNUE_HIDDEN; i++)
                acc[v][i] += row[i];
        }
    }
    int ob = (pieces - 2) / 4;
    int64_t sum = 0;
    for (int v = 0; v < 2; v++)
        for (int i = 0; i < NNUE_HIDDEN; i++) {
            int64_t a = acc[v][i] < 0 ? 0 : acc[v][i] > NNUE_QA ? NNUE_QA : acc[v][i];
            sum += a * a * net->w2[ob][v * NNUE_HIDDEN + i];
        }
    int64_t out = sum / NNUE_QA + net->b2[ob];
    return (int)(out * 400 / (NNUE_QA * NNUE_QB));
}

/* Up to `count` positions from random games from the FENS. */
static int random_positions(Board *out, int count)
{
    int n = 0;
    for (int g = 0; n < count; g++) {
        Board b = parse(FENS[g % (int)(sizeof FENS / sizeof FENS[0])]);
        for (int ply = 0; ply < 100 && n < count; ply++) {
            MoveList list;
            movegen_legal(&b, &list);
            if (!list.count)
                break;
            board_make(&b, list.moves[next_random() % (unsigned)list.count]);
            if (next_random() % 3 == 0)
                out[n++] = b;
        }
    }
    return n;
}

Test(nnue, output_equals_the_reference)
{
    enum { N = 600 };
    static Board boards[N];
    for (int k = 0; k < 3; k++) {
        NnueNet *net = random_net(1000 + (uint64_t)k, false);
        rng_state = 77 + (uint64_t)k;
        random_positions(boards, N);
        int distinct = 0, last = 0;
        for (int i = 0; i < N; i++) {
            int want = reference_eval(net, &boards[i]);
            for (int path = NNUE_SIMD_PORTABLE; path <= NNUE_SIMD_AVX2; path++) {
                if (nnue_set_simd(net, (NnueSimd)path) != 0)
                    continue;
                cr_assert_eq(nnue_evaluate(net, &boards[i]), want, "net %d position %d, %s path", k, i,
                             nnue_simd_name((NnueSimd)path));
            }
            distinct += i > 0 && want != last;
            last = want;
        }
        cr_assert_gt(distinct, N / 2, "the random net should evaluate positions differently");
        nnue_destroy(&net);
    }
}

/* ---- the incremental accumulators along a search line ---- */

static void assert_line_exact(NnueStack *s, const NnueNet *net, const Board *b, int ply, const char *what)
{
    const NnueAccumulator *acc = nnue_stack_accumulator(s, net, b, ply);
    int16_t fresh[NNUE_HIDDEN];
    for (int c = RED; c <= BLACK; c++) {
        nnue_refresh(net, b, c, fresh);
        cr_assert(!memcmp(acc->v[c], fresh, sizeof fresh), "%s at ply %d: perspective %d differs from a refresh",
                  what, ply, c);
    }
    cr_assert_eq(nnue_stack_evaluate(s, net, b, ply), nnue_evaluate(net, b));
}

/*
 * Random lines of makes, unmakes and null moves, moves chosen to favour
 * king steps (buckets and mirror flips) and captures.  `eager` checks
 * after every make and unmake; the other stack, checked at random
 * moments only, takes the lazy path over several uncomputed plies.
 */
static void walk(const NnueNet *net, int steps, int *king_moves, int *flips, int *captures)
{
    NnueStack *eager = nnue_stack_new(), *lazy = nnue_stack_new();
    cr_assert(eager && lazy);
    bool null_at[MAX_PLY + 1];
    for (size_t f = 0; f < sizeof FENS / sizeof FENS[0]; f++) {
        Board b = parse(FENS[f]);
        nnue_stack_reset(eager, net, &b);
        nnue_stack_reset(lazy, net, &b);
        assert_line_exact(eager, net, &b, 0, FENS[f]);
        int ply = 0;
        for (int step = 0; step < steps; step++) {
            MoveList list;
            movegen_legal(&b, &list);
            bool back = ply > 0 && (list.count == 0 || ply >= MAX_PLY - 1 || next_random() % 100 < 35);
            if (back) {
                if (null_at[ply])
                    board_unmake_null(&b);
                else
                    board_unmake(&b);
                ply--;
                assert_line_exact(eager, net, &b, ply, "unmake");
            } else if (list.count == 0) {
                break;
            } else if (!board_in_check(&b) && next_random() % 100 < 4) {
                nnue_stack_push_null(eager, ply, &b);
                nnue_stack_push_null(lazy, ply, &b);
                board_make_null(&b);
                null_at[++ply] = true;
                assert_line_exact(eager, net, &b, ply, "null move");
            } else {
                Move m = list.moves[next_random() % (unsigned)list.count];
                unsigned want = next_random() % 3; /* 0: a king move if any, 1: a capture if any */
                for (int i = 0; i < list.count && want < 2; i++) {
                    Move c = list.moves[((unsigned)i + next_random()) % (unsigned)list.count];
                    if ((want == 0 && piece_type(b.squares[move_from(c)]) == KING)
                        || (want == 1 && b.squares[move_to(c)])) {
                        m = c;
                        break;
                    }
                }
                int piece = b.squares[move_from(m)];
                if (piece_type(piece) == KING) {
                    (*king_moves)++;
                    int c = piece_color(piece);
                    *flips += (nnue_king_slot(c, move_from(m)) & 1) != (nnue_king_slot(c, move_to(m)) & 1);
                }
                *captures += b.squares[move_to(m)] != EMPTY;
                nnue_stack_push(eager, ply, &b, m);
                nnue_stack_push(lazy, ply, &b, m);
                board_make(&b, m);
                null_at[++ply] = false;
                assert_line_exact(eager, net, &b, ply, "make");
            }
            if (next_random() % 5 == 0)
                assert_line_exact(lazy, net, &b, ply, "lazy");
        }
    }
    nnue_stack_destroy(&eager);
    nnue_stack_destroy(&lazy);
}

Test(nnue, incremental_equals_refresh)
{
    int king_moves = 0, flips = 0, captures = 0;
    NnueNet *net = random_net(42, false);
    rng_state = 4242;
    walk(net, 1500, &king_moves, &flips, &captures);
    cr_assert_gt(king_moves, 1000, "king moves: %d", king_moves);
    cr_assert_gt(flips, 200, "mirror flips: %d", flips);
    cr_assert_gt(captures, 200, "captures: %d", captures);
    nnue_destroy(&net);
}

/* ---- the AVX2 path against the portable one ---- */

Test(nnue, avx2_equals_portable)
{
    if (!nnue_simd_available(NNUE_SIMD_AVX2))
        cr_skip_test("n/a: this CPU (or build) has no AVX2: only the portable path runs here");
    enum { N = 500 };
    static Board boards[N];
    for (int wild = 0; wild <= 1; wild++) {
        NnueNet *avx = random_net(7 + (uint64_t)wild, wild);
        NnueNet *plain = nnue_clone(avx);
        cr_assert(plain);
        cr_assert_eq(nnue_set_simd(avx, NNUE_SIMD_AVX2), 0);
        cr_assert_eq(nnue_set_simd(plain, NNUE_SIMD_PORTABLE), 0);
        rng_state = 99 + (uint64_t)wild;
        random_positions(boards, N);
        for (int i = 0; i < N; i++) {
            int16_t a[2][NNUE_HIDDEN], p[2][NNUE_HIDDEN];
            for (int c = RED; c <= BLACK; c++) {
                nnue_refresh(avx, &boards[i], c, a[c]);
                nnue_refresh(plain, &boards[i], c, p[c]);
            }
            cr_assert(!memcmp(a, p, sizeof a), "accumulators differ, position %d (wild %d)", i, wild);
            for (int ob = 0; ob < NNUE_OUTPUT_BUCKETS; ob++)
                cr_assert_eq(nnue_output(avx, a[0], a[1], ob), nnue_output(plain, p[0], p[1], ob),
                             "outputs differ, position %d bucket %d (wild %d)", i, ob, wild);
            if (!wild)
                cr_assert_eq(nnue_evaluate(avx, &boards[i]), reference_eval(avx, &boards[i]));
        }
        /* The incremental paths too: the walks of both nets check against their own refreshes. */
        int k = 0, f = 0, c = 0;
        rng_state = 5 + (uint64_t)wild;
        walk(plain, 300, &k, &f, &c);
        nnue_destroy(&avx);
        nnue_destroy(&plain);
    }
}

/* ---- the reader's refusals ---- */

static uint8_t *good_bytes(size_t *size)
{
    NnueNet *net = random_net(3, false);
    uint8_t *d = nnue_write_memory(net, size);
    cr_assert(d);
    nnue_destroy(&net);
    return d;
}

static void expect_refused(const uint8_t *d, size_t size, const char *want, const char *what)
{
    char err[512] = "";
    NnueNet *net = nnue_load_memory(d, size, err, sizeof err);
    cr_assert_null(net, "%s: accepted", what);
    cr_assert(strstr(err, want), "%s: message '%s' lacks '%s'", what, err, want);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

Test(nnue, corrupt_files_refused)
{
    size_t size;
    uint8_t *d = good_bytes(&size);
    uint32_t n = (uint32_t)strlen("random net of test_nnue");
    size_t body = 20 + n;
    cr_assert_eq(size, body + NNUE_BODY_BYTES);
    char err[512];
    NnueNet *net = nnue_load_memory(d, size, err, sizeof err);
    cr_assert(net, "the good file: %s", err);
    cr_assert_str_eq(net->description, "random net of test_nnue");
    size_t again_size;
    uint8_t *again = nnue_write_memory(net, &again_size);
    cr_assert(again_size == size && !memcmp(again, d, size), "write(read(file)) is the file");
    free(again);
    nnue_destroy(&net);

    uint8_t *bad = malloc(size + 1);
    cr_assert(bad);
#define MUTATE(stmt, len, want, what) \
    do { \
        memcpy(bad, d, size); \
        stmt; \
        expect_refused(bad, (len), (want), (what)); \
    } while (0)
    MUTATE(bad[3] ^= 1, size, "wrong magic", "magic");
    MUTATE(put32(bad + 8, 2), size, "wrong format version 2", "version");
    MUTATE(put32(bad + 12, nnue_architecture_hash() ^ 1), size, "wrong architecture hash", "hash");
    MUTATE(put32(bad + 16, 5000), size, "description length 5000 is over the limit", "description length");
    MUTATE(put32(bad + 16, 0xffffffffu), size, "description length 4294967295 is over", "huge description");
    MUTATE((void)0, 0, "truncated inside the header", "empty file");
    MUTATE((void)0, 5, "truncated inside the header", "5 bytes");
    MUTATE((void)0, 12, "truncated inside the header", "12 bytes");
    MUTATE((void)0, 19, "truncated inside the header", "19 bytes");
    MUTATE((void)0, 20 + 3, "truncated inside the description", "in the description");
    MUTATE((void)0, body, "truncated inside b1", "b1 missing");
    MUTATE((void)0, body + 100, "truncated inside b1", "in b1");
    MUTATE((void)0, body + 512 + 1000, "truncated inside W1", "in W1");
    MUTATE((void)0, body + 512 + 2 * NNUE_FEATURES * NNUE_HIDDEN - 1, "truncated inside W1", "end of W1");
    MUTATE((void)0, size - 32 - 100, "truncated inside W2", "in W2");
    MUTATE((void)0, size - 5, "truncated inside b2", "in b2");
    MUTATE((void)0, size - 1, "truncated inside b2", "last byte");
    MUTATE(bad[size] = 0, size + 1, "1 trailing bytes after b2", "trailing byte");
    MUTATE(put32(bad + 16, n - 1), size, "1 trailing bytes after b2", "description one shorter");
    MUTATE(put32(bad + 16, n + 1), size, "truncated inside b2", "description one longer");
#undef MUTATE
    /* The same through a file, and a file that is not there. */
    char dir[] = "/tmp/test_nnue_XXXXXX", path[256];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/cut.nnue", dir);
    FILE *f = fopen(path, "wb");
    cr_assert(f && fwrite(d, 1, size / 2, f) == size / 2);
    fclose(f);
    cr_assert_null(nnue_load_file(path, err, sizeof err));
    cr_assert(strstr(err, "truncated inside W1"), "%s", err);
    cr_assert_null(nnue_load_file("/nonexistent/x.nnue", err, sizeof err));
    cr_assert(strstr(err, "cannot open net file /nonexistent/x.nnue"), "%s", err);
    unlink(path);
    rmdir(dir);
    free(bad);
    free(d);
}

/* ---- the engine: UCI's EvalFile and UseNNUE, bench, two engines ---- */

/* Runs a UCI session on `script`; returns its output (malloc'd). */
static char *uci_session(const char *script)
{
    FILE *in = fmemopen((void *)script, strlen(script), "r");
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert(in && out);
    cr_assert_eq(protocol_run(in, out), 0);
    fclose(in);
    fclose(out);
    return text;
}

static uint64_t bench_nodes(const char *text)
{
    const char *line = strstr(text, "Nodes searched: ");
    cr_assert(line, "no node count in:\n%s", text);
    return strtoull(line + 16, NULL, 10);
}

Test(nnue, evalfile_refusals_keep_the_net)
{
    char dir[] = "/tmp/test_nnue_XXXXXX", good[256], bad[256], script[4096];
    cr_assert(mkdtemp(dir));
    snprintf(good, sizeof good, "%s/good.nnue", dir);
    snprintf(bad, sizeof bad, "%s/bad.nnue", dir);
    NnueNet *net = random_net(11, false);
    char err[512];
    cr_assert_eq(nnue_save(net, good, err, sizeof err), 0, "%s", err);

    snprintf(script, sizeof script, "setoption name EvalFile value %s\nbench 4\nquit\n", good);
    char *text = uci_session(script);
    cr_assert(strstr(text, "Evaluation: net"), "%s", text);
    uint64_t with_net = bench_nodes(text);
    free(text);
    text = uci_session("setoption name UseNNUE value false\nbench 4\nquit\n");
    cr_assert(strstr(text, "Evaluation: hand-crafted"), "%s", text);
    uint64_t hce = bench_nodes(text);
    free(text);
    cr_assert_neq(with_net, hce, "the net should change the tree");
    /* UseNNUE=false: the hand-crafted evaluation's tree, the net kept. */
    snprintf(script, sizeof script, "setoption name EvalFile value %s\nsetoption name UseNNUE value false\nbench 4\nquit\n",
             good);
    text = uci_session(script);
    cr_assert_eq(bench_nodes(text), hce);
    free(text);

    size_t size;
    uint8_t *d = nnue_write_memory(net, &size);
    cr_assert(d);
    static const struct {
        size_t offset;     /* where to write `value`, or SIZE_MAX: cut the file to `cut` */
        uint32_t value;
        long cut;          /* bytes kept (negative: from the end); 1: one byte added */
        const char *want;
    } CASES[] = {
        { 0, 0x00514658u, 0, "wrong magic" },
        { 8, 7, 0, "wrong format version 7" },
        { 12, 0, 0, "wrong architecture hash" },
        { 16, 100000, 0, "description length 100000 is over the limit" },
        { SIZE_MAX, 0, 10, "truncated inside the header" },
        { SIZE_MAX, 0, 20 + 23 + 10, "truncated inside b1" },
        { SIZE_MAX, 0, 200000, "truncated inside W1" },
        { SIZE_MAX, 0, -1000, "truncated inside W2" },
        { SIZE_MAX, 0, -3, "truncated inside b2" },
        { SIZE_MAX, 0, 1, "1 trailing bytes after b2" },
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        uint8_t *copy = malloc(size + 1);
        cr_assert(copy);
        memcpy(copy, d, size);
        copy[size] = 0;
        size_t len = size;
        if (CASES[i].offset != SIZE_MAX)
            put32(copy + CASES[i].offset, CASES[i].value);
        else if (CASES[i].cut == 1)
            len = size + 1;
        else
            len = CASES[i].cut > 0 ? (size_t)CASES[i].cut : size - (size_t)-CASES[i].cut;
        FILE *f = fopen(bad, "wb");
        cr_assert(f && fwrite(copy, 1, len, f) == len);
        fclose(f);
        free(copy);
        snprintf(script, sizeof script, "setoption name EvalFile value %s\nsetoption name EvalFile value %s\nbench 4\nquit\n",
                 good, bad);
        text = uci_session(script);
        const char *line = strstr(text, "info string error: EvalFile: ");
        cr_assert(line, "case %zu: no error line in\n%s", i, text);
        cr_assert(strstr(line, CASES[i].want) && strstr(line, "keeps the evaluation it had"),
                  "case %zu: the error line lacks '%s':\n%s", i, CASES[i].want, text);
        cr_assert(strstr(text, "Evaluation: net"), "case %zu: the net was lost", i);
        cr_assert_eq(bench_nodes(text), with_net, "case %zu: the engine lost the good net", i);
        free(text);
    }
    free(d);
    nnue_destroy(&net);
    unlink(good);
    unlink(bad);
    rmdir(dir);
}

Test(nnue, engines_hold_their_own_nets)
{
    NnueNet *n1 = random_net(21, false), *n2 = random_net(22, false);
    Engine *a = engine_new(), *b = engine_new(), *plain = engine_new();
    cr_assert(a && b && plain);
    size_t default_size;
    bool default_net = nnue_default_data(&default_size) != NULL;
    cr_assert_eq(engine_net(plain) != NULL, default_net, "a new engine holds the default net, if any");
    cr_assert_eq(engine_set_net(plain, NULL), 0);
    cr_assert_eq(engine_set_net(a, n1), 0);
    cr_assert_eq(engine_set_net(b, n2), 0);
    nnue_destroy(&n1); /* the engines hold copies */
    nnue_destroy(&n2);
    FILE *null = fopen("/dev/null", "w");
    cr_assert(null);
    uint64_t na = bench_run_like(5, a, null), nb = bench_run_like(5, b, null), nh = bench_run_like(5, plain, null);
    cr_assert(na && nb && nh);
    cr_assert_neq(na, nb, "two nets, two trees");
    cr_assert_eq(bench_run_like(5, a, null), na, "the same net, the same tree");
    if (!default_net)
        cr_assert_eq(nh, bench_run(5, NULL, null), "no net: the hand-crafted tree");
    engine_set_use_nnue(a, false);
    cr_assert_eq(bench_run_like(5, a, null), nh, "UseNNUE off: the hand-crafted tree");
    /* A search with the net: a legal best move and a score within the clamp. */
    engine_set_use_nnue(a, true);
    Board root = parse(FENS[3]);
    SearchLimits l;
    search_limits_init(&l);
    l.depth = 8;
    SearchResult r;
    engine_search(a, &root, &l, NULL, NULL, &r);
    cr_assert(movegen_is_legal(&root, r.best));
    cr_assert(r.score > -MATE_BOUND && r.score < MATE_BOUND);
    fclose(null);
    engine_destroy(&a);
    engine_destroy(&b);
    engine_destroy(&plain);
}

/* ---- xqf-engine evalnet ---- */

Test(nnue, evalnet_prints_the_net_evaluation)
{
    char dir[] = "/tmp/test_nnue_XXXXXX", netpath[256], input[256], output[256], cmd[1024];
    cr_assert(mkdtemp(dir));
    snprintf(netpath, sizeof netpath, "%s/n.nnue", dir);
    snprintf(input, sizeof input, "%s/in.txt", dir);
    snprintf(output, sizeof output, "%s/out.txt", dir);
    NnueNet *net = random_net(31, false);
    char err[512];
    cr_assert_eq(nnue_save(net, netpath, err, sizeof err), 0, "%s", err);
    static const char *const LINES[] = {
        START_FEN,
        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 1",
        "not a fen",
        "1rbak4/c4n2r/2na5/2N6/p1b3P1p/3C4P/P1P1P2C1/N7B/4A3R/R1BA1K3 w - - 5 31",
        "",
        "4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1",
        "3k5/9/9/2n6/9/6c2/9/4N4/4C4/5K3 b",
    };
    enum { LINES_N = sizeof LINES / sizeof LINES[0] };
    FILE *f = fopen(input, "w");
    cr_assert(f);
    for (int i = 0; i < LINES_N; i++)
        fprintf(f, "%s\n", LINES[i]);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s/xqf-engine' evalnet '%s' < '%s' > '%s'", XQF_BIN, netpath, input, output);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    f = fopen(output, "r");
    cr_assert(f);
    char line[512];
    for (int i = 0; i < LINES_N; i++) {
        cr_assert(fgets(line, sizeof line, f), "line %d missing", i);
        Board b;
        if (fen_parse(&b, LINES[i], FEN_ANALYSIS, err, sizeof err) != 0) {
            cr_assert(!strncmp(line, "error: ", 7), "line %d: '%s'", i, line);
        } else {
            char want[32];
            snprintf(want, sizeof want, "%d\n", nnue_evaluate(net, &b));
            cr_assert_str_eq(line, want, "line %d (%s)", i, LINES[i]);
            cr_assert_eq(nnue_evaluate(net, &b), reference_eval(net, &b));
        }
    }
    cr_assert_null(fgets(line, sizeof line, f), "one line per input line");
    fclose(f);
    /* A net the reader refuses: exit status 2, the message on stderr. */
    snprintf(cmd, sizeof cmd, "'%s/xqf-engine' evalnet '%s' < '%s' > '%s' 2>&1", XQF_BIN, input, input, output);
    int status = system(cmd);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 2, "status %d", status);
    f = fopen(output, "r");
    cr_assert(f && fgets(line, sizeof line, f));
    cr_assert(strstr(line, "wrong magic"), "%s", line);
    fclose(f);
    /* bench with the net from the command line. */
    snprintf(cmd, sizeof cmd, "'%s/xqf-engine' bench 3 EvalFile='%s' > '%s'", XQF_BIN, netpath, output);
    cr_assert_eq(system(cmd), 0);
    f = fopen(output, "r");
    cr_assert(f);
    bool named = false;
    while (fgets(line, sizeof line, f))
        named = named || strstr(line, "Evaluation: net");
    fclose(f);
    cr_assert(named, "bench EvalFile=NET evaluates with the net");
    nnue_destroy(&net);
    unlink(netpath);
    unlink(input);
    unlink(output);
    rmdir(dir);
}

/*
 * The engine as shipped evaluates with the committed net: the net
 * compiled into the engine library (what xqf-engine links) is, byte for
 * byte, engine/nets/default.nnue, and that file is the pinned default
 * (its SHA-256 below, changed with the net as BENCH_SIGNATURE is changed
 * with the search); the program's own bench says it evaluated with a net.
 * A tree without the file no longer builds (engine/CMakeLists.txt), so a
 * build without a net is one asked for by name (-DXQF_DEFAULT_NET=none).
 */
#define DEFAULT_NET_SHA256 "ce40876e386b1bd1421933009202123192aa4be9bbe5d5e4fc93d4e64e7e1ef9"

Test(nnue, the_shipped_engine_carries_the_committed_net)
{
    size_t size;
    const uint8_t *data = nnue_default_data(&size);
    if (!data)
        cr_skip_test("n/a: this tree is built without a net, by name (-DXQF_DEFAULT_NET=none)");
    FILE *f = tmpfile();
    cr_assert(f && fwrite(data, 1, size, f) == size && fflush(f) == 0);
    char embedded[SHA256_HEX_LEN + 1], committed[SHA256_HEX_LEN + 1];
    cr_assert_eq(sha256_fd(fileno(f), embedded), 0);
    fclose(f);
    cr_assert_eq(sha256_file(XQF_SOURCE_DIR "/engine/nets/default.nnue", committed), 0);
    cr_assert_str_eq(committed, DEFAULT_NET_SHA256, "engine/nets/default.nnue is not the pinned default net: a new "
                     "default changes DEFAULT_NET_SHA256 here, with its SPRT in docs/nnue.md");
    cr_assert_str_eq(embedded, committed, "the net compiled in is not engine/nets/default.nnue");

    FILE *p = popen(XQF_BIN "/xqf-engine bench 1 2>&1", "r");
    cr_assert(p);
    char line[256], last[256] = "";
    while (fgets(line, sizeof line, p))
        if (strncmp(line, "Evaluation: ", 12) == 0)
            snprintf(last, sizeof last, "%s", line);
    cr_assert_eq(pclose(p), 0);
    cr_assert(strncmp(last, "Evaluation: net", 15) == 0, "xqf-engine's bench says '%s'", last);
}

/*
 * test_datagen.c - training positions (worker/game/datagen.c) and the Texel fit
 * (stats/texel.c): records survive packing, malformed records are refused,
 * the filter keeps what it should with the right result, and the fit finds
 * known weights and a known scale.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "datagen.h"
#include "fen.h"
#include "movegen.h"
#include "texel.h"

static void parse(Board *b, const char *fen)
{
    char err[128];
    cr_assert_eq(fen_parse(b, fen, FEN_GAME, err, sizeof err), 0, "%s", err);
}

static Move move_of(Board *b, const char *text)
{
    Move m;
    char err[128];
    cr_assert_eq(move_parse(b, text, &m, err, sizeof err), 0, "%s: %s", text, err);
    return m;
}

Test(datagen, pack_and_unpack_keep_the_position)
{
    static DataPosition in, out;
    parse(&in.board, "1rbakab1r/9/1cn4cn/p1p1p1p1p/9/9/P1P1P1P1P/1CN1C1N2/9/R1BAKAB1R b - - 4 3");
    in.score = -1234;
    in.move = move_of(&in.board, "b9b8");
    in.result = 2;
    in.ply = 301;
    uint8_t rec[DATA_RECORD_BYTES];
    data_pack(&in, rec);
    cr_assert_eq(data_unpack(rec, &out), 0);
    char a[FEN_MAX], b[FEN_MAX];
    fen_write(&in.board, a);
    fen_write(&out.board, b);
    /* The counters are not kept: compare the placement and the side. */
    cr_assert_eq(strncmp(a, b, (size_t)(strchr(a, ' ') - a + 2)), 0, "%s vs %s", a, b);
    cr_assert_eq(out.score, -1234);
    cr_assert_eq(out.move, in.move);
    cr_assert_eq(out.result, 2);
    cr_assert_eq(out.ply, 301);
    cr_assert_eq(board_key(&out.board), board_key(&in.board));
}

Test(datagen, malformed_records_are_refused)
{
    static DataPosition pos;
    parse(&pos.board, START_FEN);
    pos.result = 1;
    uint8_t good[DATA_RECORD_BYTES], rec[DATA_RECORD_BYTES];
    data_pack(&pos, good);
    cr_assert_eq(data_unpack(good, &pos), 0);

    struct {
        const char *what;
        int byte, value;
    } cases[] = {
        { "nibble 8 (a colour without a piece)", 20, 0x08 },
        { "side to move 2", 45, 2 },
        { "result 3", 50, 3 },
        { "no red king", 2, 0x00 },        /* e0 is square 4: byte 2, lower nibble */
        { "a sixth red pawn", 24, 0x77 },  /* squares 48, 49 on an empty rank */
        { "a king outside its palace", 22, 0x01 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(rec, good, sizeof rec);
        rec[cases[i].byte] = (uint8_t)cases[i].value;
        cr_expect_neq(data_unpack(rec, &pos), 0, "accepted: %s", cases[i].what);
    }
    /* Random bytes never crash it, and what it accepts is a legal position. */
    srand(7);
    for (int k = 0; k < 20000; k++) {
        for (int j = 0; j < DATA_RECORD_BYTES; j++)
            rec[j] = (uint8_t)rand();
        if (data_unpack(rec, &pos) == 0)
            cr_assert(!board_king_attacked(&pos.board, pos.board.side ^ 1));
    }
}

static DataPosition kept[64];
static int nkept;

static void keep(void *ctx, const DataPosition *pos)
{
    (void)ctx;
    cr_assert_lt(nkept, 64);
    kept[nkept++] = *pos;
}

/*
 * A short game from the start: two book moves, then five scored moves
 * (ply 2 takes a pawn); no position is in check.
 */
static void build_game(GameRecord *g, GameResult result)
{
    static GameMove moves[16];
    static const char *const text[] = { "h2e2", "h9g7", "e2e6", "b9c7", "b0c2", "i9h9", "e6e5" };
    Board b;
    parse(&b, START_FEN);
    game_record_init(g);
    snprintf(g->fen, sizeof g->fen, "%s", START_FEN);
    for (int i = 0; i < 7; i++) {
        moves[i] = (GameMove){ move_of(&b, text[i]), i < 2, i >= 2, 10 * i, 5, 0 };
        board_make(&b, moves[i].move);
    }
    g->moves = moves;
    g->count = 7;
    g->result = result;
}

Test(datagen, the_filter_and_the_results)
{
    GameRecord g;
    build_game(&g, RESULT_RED_WINS);
    DataFilter f;
    data_filter_default(&f);
    nkept = 0;
    int n = data_extract(&g, &f, keep, NULL);
    cr_assert_eq(n, 4, "plies 3-6 kept (0-1 book, 2 a capture), got %d", n);
    cr_assert_eq(nkept, 4);
    for (int i = 0; i < nkept; i++) {
        cr_assert_eq(kept[i].ply, 3 + i);
        cr_assert_eq(kept[i].board.squares[move_to(kept[i].move)], EMPTY, "kept a capture");
        cr_assert_eq(kept[i].result, kept[i].board.side == RED ? 2 : 0);
        cr_assert_eq(kept[i].score, 10 * kept[i].ply);
    }

    f.keep_captures = true;
    f.keep_check = true;
    nkept = 0;
    cr_assert_eq(data_extract(&g, &f, keep, NULL), 5, "every scored move with captures and checks kept");
    f.skip_plies = 3;
    nkept = 0;
    cr_assert_eq(data_extract(&g, &f, keep, NULL), 2);
    cr_assert_eq(kept[0].ply, 5);

    build_game(&g, RESULT_DRAW);
    nkept = 0;
    data_extract(&g, &f, keep, NULL);
    for (int i = 0; i < nkept; i++)
        cr_assert_eq(kept[i].result, 1);
    build_game(&g, RESULT_NONE);
    cr_assert_eq(data_extract(&g, &f, keep, NULL), 0, "an abandoned game gives nothing");

    /* An illegal move in the record: refused. */
    build_game(&g, RESULT_RED_WINS);
    g.moves[4].move = move_make(sq_make(0, 0), sq_make(8, 9));
    cr_assert_eq(data_extract(&g, &f, keep, NULL), -1);
}

/* Synthetic data from known weights: the fit finds them, and K is recovered from results. */
static double sigmoid(double x)
{
    return 1 / (1 + exp(-x));
}

Test(texel, the_fit_finds_known_weights)
{
    enum { N = 20000, K = 3, T = 3 };
    static double fixed[N];
    static uint32_t start[N + 1];
    static uint16_t index[N * T];
    static float coef[N * T], result[N], score[N];
    const double truth[K] = { 120, -40, 300 }, scale = 0.006;
    srand(11);
    for (int i = 0; i < N; i++) {
        start[i] = (uint32_t)(i * T);
        double e = fixed[i] = (rand() % 200) - 100;
        for (int j = 0; j < T; j++) {
            index[i * T + j] = (uint16_t)j;
            coef[i * T + j] = (float)((rand() % 7) - 3) * 0.5f;
            e += coef[i * T + j] * truth[j];
        }
        score[i] = (float)e;
        double u = rand() / (double)RAND_MAX;
        result[i] = u < sigmoid(scale * e) ? 1.0f : 0.0f;
    }
    start[N] = N * T;
    xqf_texel_data d = { N, K, fixed, start, index, coef, result, score };

    double theta[K] = { 120, -40, 300 };
    double k = xqf_texel_fit_k(&d, theta, 2);
    cr_assert(fabs(k - scale) < 0.0008, "K %.5f, truth %.5f", k, scale);

    /* lambda 0: the target is the score itself; from a wrong start the fit goes back to the truth. */
    double lo[K] = { -1000, -1000, -1000 }, hi[K] = { 1000, 1000, 1000 };
    double curve[401];
    xqf_texel_config cfg = { scale, 0.0, 400, 4.0, 2, lo, hi, NULL, NULL };
    double start_theta[K] = { 60, 20, 200 };
    memcpy(theta, start_theta, sizeof theta);
    cr_assert_eq(xqf_texel_fit(&d, &cfg, theta, curve), 0);
    for (int j = 0; j < K; j++)
        cr_assert(fabs(theta[j] - truth[j]) < 3, "weight %d: %.2f, truth %.0f", j, theta[j], truth[j]);
    cr_assert_lt(curve[400], curve[0] / 100);

    /* Bounds hold. */
    hi[2] = 250;
    memcpy(theta, start_theta, sizeof theta);
    cr_assert_eq(xqf_texel_fit(&d, &cfg, theta, NULL), 0);
    cr_assert_leq(theta[2], 250);
    cr_assert(fabs(theta[2] - 250) < 1e-9, "the bounded weight rests on its bound: %.3f", theta[2]);
}

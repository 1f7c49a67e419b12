/*
 * Game records (schemas/formats/games.h, worker/game/gamepack.h): a record round trip
 * (book flags, scores clamped, results), the moves-only and depth forms of
 * every run kind, malformed
 * bytes refused, the random plies reproducible per game index and
 * distinct between games, and a worker task of kind "data" played on the
 * game threads: its result's records, one per game, each game its own.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "book.h"
#include "datagen.h"
#include "fen.h"
#include "gamepack.h"
#include "games.h"
#include "movegen.h"
#include "rng.h"
#include "task.h"

static const char START[] = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";

/* A game of n random legal moves from the start, the first `book` of them from the opening. */
static void random_game(GameRecord *g, int n, int book, uint64_t seed)
{
    Board b;
    char err[128];
    cr_assert_eq(fen_parse(&b, START, FEN_GAME, err, sizeof err), 0);
    snprintf(g->fen, sizeof g->fen, "%s", START);
    g->moves = calloc((size_t)n, sizeof *g->moves);
    g->capacity = n;
    g->count = 0;
    Rng rng;
    rng_seed(&rng, seed);
    for (int i = 0; i < n; i++) {
        MoveList legal;
        movegen_legal(&b, &legal);
        if (legal.count == 0)
            break;
        Move m = legal.moves[rng_below(&rng, (uint32_t)legal.count)];
        int score = (int)(rng_next(&rng) % 2001) - 1000;
        g->moves[g->count++] = (GameMove){ .move = m, .book = i < book, .has_score = i >= book && i % 7 != 3,
                                           .score = i == n - 1 ? 29990 : i == n - 2 ? -29990 : score };
        board_make(&b, m);
    }
    g->result = RESULT_BLACK_WINS;
    g->reason = GAME_ADJUDICATED_WIN;
}

/*
 * The forms of every run kind (schemas/formats/games.h): moves only, 2 bytes a ply (no
 * scores come back, the book flags do), and with scores and depths, 5
 * bytes a ply; a form with both bits, or a FEN missing or present where
 * it must not be, is malformed.
 */
Test(gamepack, moves_only_and_depth_forms)
{
    GameRecord g, back;
    game_record_init(&g);
    game_record_init(&back);
    random_game(&g, 40, 6, 11);
    for (int i = 0; i < g.count; i++)
        g.moves[i].depth = i % 300;
    const unsigned FORMS[2] = { XQF_GAME_MOVES, XQF_GAME_DEPTHS };
    const size_t PLY[2] = { 2, 5 };
    for (int f = 0; f < 2; f++) {
        PackBuf buf = { 0 };
        cr_assert_eq(gamepack_append(&g, FORMS[f], &buf), 0);
        cr_assert_eq(buf.len, 4 + 3 + strlen(START) + 2 + PLY[f] * (size_t)g.count);
        size_t off = 0, len;
        const uint8_t *rec;
        cr_assert_eq(xqf_games_next(buf.data, buf.len, &off, &rec, &len), 1);
        cr_assert_eq(xqf_game_ply_bytes(rec[0]), (int)PLY[f]);
        char err[128];
        cr_assert_eq(gamepack_read(rec, len, &back, err, sizeof err), 0, "%s", err);
        cr_assert_eq(back.count, g.count);
        cr_assert_eq(back.result, RESULT_BLACK_WINS);
        cr_assert_eq(back.reason, GAME_ADJUDICATED_WIN);
        for (int i = 0; i < g.count; i++) {
            cr_assert_eq(back.moves[i].move, g.moves[i].move, "ply %d", i);
            cr_assert_eq(back.moves[i].book, g.moves[i].book, "ply %d", i);
            if (FORMS[f] == XQF_GAME_MOVES) {
                cr_assert(!back.moves[i].has_score && back.moves[i].depth == 0, "ply %d", i);
            } else {
                cr_assert_eq(back.moves[i].has_score, g.moves[i].has_score, "ply %d", i);
                cr_assert_eq(back.moves[i].depth, g.moves[i].depth > 255 ? 255 : g.moves[i].depth, "ply %d", i);
                if (g.moves[i].has_score)
                    cr_assert_eq(back.moves[i].score, g.moves[i].score, "ply %d", i);
            }
        }
        /* both form bits: malformed; the FEN put apart: only the bare check takes it */
        uint8_t *copy = malloc(len);
        memcpy(copy, rec, len);
        copy[0] |= XQF_GAME_MOVES | XQF_GAME_DEPTHS;
        cr_assert(!xqf_game_check(copy, len, NULL));
        cr_assert(!xqf_game_check_bare(rec, len, NULL));
        size_t fen = rec[2], bare_len = len - fen;
        memcpy(copy, rec, 2);
        copy[2] = 0;
        memcpy(copy + 3, rec + 3 + fen, len - 3 - fen);
        int plies;
        cr_assert(xqf_game_check_bare(copy, bare_len, &plies));
        cr_assert_eq(plies, g.count);
        cr_assert(!xqf_game_check(copy, bare_len, NULL));
        free(copy);
        pack_buf_free(&buf);
    }
    PackBuf buf = { 0 };
    cr_assert_eq(gamepack_append(&g, XQF_GAME_MOVES | XQF_GAME_DEPTHS, &buf), -1);
    cr_assert_eq(buf.len, 0);
    game_record_free(&g);
    game_record_free(&back);
}

/* data_extract's callback: counts the positions kept. */
static void count(void *ctx, const DataPosition *pos)
{
    (void)pos;
    ++*(int *)ctx;
}

Test(gamepack, record_round_trip)
{
    GameRecord g, back;
    game_record_init(&g);
    game_record_init(&back);
    random_game(&g, 60, 9, 3);
    PackBuf buf = { 0 };
    cr_assert_eq(gamepack_append(&g, 0, &buf), 0);
    cr_assert_eq(gamepack_append(&g, 0, &buf), 0);
    cr_assert_eq(buf.len, 2 * (4 + 3 + strlen(START) + 2 + 4 * (size_t)g.count));
    cr_assert_eq(xqf_games_count(buf.data, buf.len), 2);
    size_t off = 0, len;
    const uint8_t *rec;
    cr_assert_eq(xqf_games_next(buf.data, buf.len, &off, &rec, &len), 1);
    char err[128];
    cr_assert_eq(gamepack_read(rec, len, &back, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(back.fen, g.fen);
    cr_assert_eq(back.count, g.count);
    cr_assert_eq(back.result, RESULT_BLACK_WINS);
    cr_assert_eq(back.reason, GAME_ADJUDICATED_WIN);
    for (int i = 0; i < g.count; i++) {
        cr_assert_eq(back.moves[i].move, g.moves[i].move, "ply %d", i);
        cr_assert_eq(back.moves[i].book, g.moves[i].book, "ply %d", i);
        cr_assert_eq(back.moves[i].has_score, g.moves[i].has_score, "ply %d", i);
        if (g.moves[i].has_score)
            cr_assert_eq(back.moves[i].score, g.moves[i].score, "ply %d", i);
    }
    /* the same positions come out of both */
    DataFilter f;
    data_filter_default(&f);
    f.keep_captures = f.keep_check = true;
    f.max_score = 30000;
    static int kept[2];
    cr_assert_eq(data_extract(&g, &f, count, &kept[0]), data_extract(&back, &f, count, &kept[1]));
    cr_assert_eq(kept[0], kept[1]);
    cr_assert_gt(kept[0], 30);
    pack_buf_free(&buf);
    game_record_free(&g);
    game_record_free(&back);
}

Test(gamepack, malformed_records_refused)
{
    GameRecord g, back;
    game_record_init(&g);
    game_record_init(&back);
    random_game(&g, 20, 4, 5);
    PackBuf buf = { 0 };
    cr_assert_eq(gamepack_append(&g, 0, &buf), 0);
    size_t off = 0, len;
    const uint8_t *rec;
    char err[128];
    /* cut short anywhere: not a sequence of records */
    for (size_t cut = 1; cut < buf.len; cut++)
        cr_assert_eq(xqf_games_count(buf.data, cut), -1, "cut at %zu", cut);
    uint8_t *copy = malloc(buf.len);
    struct { size_t at; uint8_t value; const char *what; } BAD[] = {
        { 4, 9, "a result past draw" },
        { 5, 200, "a reason out of range" },
        { 6, 0, "an empty FEN" },
        { 7, 0x07, "a control character in the FEN" },
        { 4 + 3 + sizeof START - 1, 21, "one ply too many" },
        { 0, 0xff, "a length past the end" },
    };
    for (size_t k = 0; k < sizeof BAD / sizeof BAD[0]; k++) {
        memcpy(copy, buf.data, buf.len);
        copy[BAD[k].at] = BAD[k].value;
        off = 0;
        cr_assert_eq(xqf_games_next(copy, buf.len, &off, &rec, &len), -1, "%s", BAD[k].what);
        if (BAD[k].at >= 4)
            cr_assert_eq(gamepack_read(copy + 4, buf.len - 4, &back, err, sizeof err), -1, "%s", BAD[k].what);
    }
    /* an illegal move: well formed, but data_extract refuses the game */
    memcpy(copy, buf.data, buf.len);
    size_t ply0 = 4 + 3 + strlen(START) + 2;
    copy[ply0] = 0;
    copy[ply0 + 1] = (uint8_t)(copy[ply0 + 1] & 0xc0);
    cr_assert_eq(gamepack_read(copy + 4, buf.len - 4, &back, err, sizeof err), 0);
    DataFilter f;
    data_filter_default(&f);
    int n = 0;
    cr_assert_eq(data_extract(&back, &f, count, &n), -1);
    free(copy);
    pack_buf_free(&buf);
    game_record_free(&g);
    game_record_free(&back);
}

Test(gamepack, random_plies_per_game_index)
{
    Opening base = { .moves = NULL, .count = 0 };
    snprintf(base.fen, sizeof base.fen, "%s", START);
    Move a[16], b[16];
    Opening oa, ob;
    cr_assert_eq(gamepack_opening(&base, 8, 42, 17, a, &oa), 0);
    cr_assert_eq(gamepack_opening(&base, 8, 42, 17, b, &ob), 0);
    cr_assert_eq(oa.count, 8);
    cr_assert_eq(memcmp(a, b, sizeof a[0] * 8), 0, "the same game index gives the same plies");
    int differ = 0;
    for (int game = 0; game < 20; game++) {
        cr_assert_eq(gamepack_opening(&base, 8, 42, game, b, &ob), 0);
        differ += memcmp(a, b, sizeof a[0] * 8) != 0;
    }
    cr_assert_geq(differ, 19, "other games share the plies");
    /* after an opening's own moves, which are kept first */
    Move line[2];
    Board bd;
    char err[64];
    cr_assert_eq(fen_parse(&bd, START, FEN_GAME, err, sizeof err), 0);
    cr_assert_eq(move_parse(&bd, "h2e2", &line[0], err, sizeof err), 0);
    board_make(&bd, line[0]);
    cr_assert_eq(move_parse(&bd, "h9g7", &line[1], err, sizeof err), 0);
    Opening two = { .moves = line, .count = 2 };
    snprintf(two.fen, sizeof two.fen, "%s", START);
    cr_assert_eq(gamepack_opening(&two, 5, 1, 0, a, &oa), 0);
    cr_assert_eq(oa.count, 7);
    cr_assert_eq(a[0], line[0]);
    cr_assert_eq(a[1], line[1]);
}

/* Plays a task of kind data to its end on a pool of two threads; its counts and records in *c and *bin. */
static void play_task(XqfMsg_task *t, TaskCounts *c, XqfBin *bin)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    TaskPool *pool = task_pool_new(2, fds[1]);
    cr_assert_not_null(pool);
    char err[256];
    Task *task = task_new(t, "", NULL, NULL, false, err, sizeof err);
    cr_assert_not_null(task, "%s", err);
    task_start(task, pool);
    bool done = false;
    char failed[256] = "";
    while (!done) {
        char byte;
        if (read(fds[0], &byte, 1) < 0)
            break;
        task_poll(task, c, &done, failed, sizeof failed);
    }
    cr_assert(!failed[0], "%s", failed);
    TaskCounts part;
    cr_assert_eq(task_report(task, 0, XQF_GAMES_MAX, &part, bin), 0);
    cr_assert_eq(memcmp(&part, c, sizeof part), 0, "a report within budget: every pair counted");
    /* a budget of one byte: a report a pair, its records from the pair acknowledged on, counts of the first */
    uint8_t *joined = malloc(bin->len + 1);
    size_t at = 0;
    for (int64_t k = 0; k < c->pairs; k++) {
        XqfBin one = { 0 };
        cr_assert_eq(task_report(task, k, 1, &part, &one), 0);
        cr_assert_eq(part.pairs, k + 1);
        cr_assert_eq(xqf_games_count(one.data, one.len), 2);
        cr_assert_leq(at + one.len, bin->len);
        memcpy(joined + at, one.data, one.len);
        at += one.len;
        xqf_bin_free(&one);
    }
    cr_assert_eq(memcmp(&part, c, sizeof part), 0);
    cr_assert(at == bin->len && memcmp(joined, bin->data, at) == 0, "the reports' records are the task's");
    free(joined);
    XqfBin none = { 0 };
    cr_assert_eq(task_report(task, c->pairs + 3, 1, &part, &none), 0);
    cr_assert_eq(part.pairs, c->pairs, "pairs not counted yet are not reported");
    cr_assert_eq(none.len, 0);
    task_destroy(&task);
    task_pool_destroy(&pool);
    close(fds[0]);
    close(fds[1]);
}

Test(gamepack, data_task_at_fixed_depth, .timeout = 120)
{
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_TASK);
    XqfMsg_task *t = &m.u.task;
    strcpy(t->kind, "data");
    t->pairs = 1;
    cr_assert_eq(xqf_strs_push(&t->openings, START), 0);
    t->depth = 3;
    t->hash_mb = 1;
    t->threads = 1;
    strcpy(t->name0, "first");
    strcpy(t->name1, "second");
    t->resign_moves = 4;
    t->resign_score = 600;
    t->max_plies = 100;
    t->random_plies = 2;
    char err[256];
    t->depth = XQF_DEPTH_MAX + 1;
    Task *bad = task_new(t, "", NULL, NULL, false, err, sizeof err);
    cr_assert_null(bad, "a depth past %d taken", XQF_DEPTH_MAX);
    t->depth = 3;
    TaskCounts c;
    XqfBin bin = { 0 };
    play_task(t, &c, &bin);
    cr_assert_eq(c.pairs, 1);
    cr_assert_eq(xqf_games_count(bin.data, bin.len), 2);
    xqf_bin_free(&bin);
    xqf_msg_free(&m);
}

Test(gamepack, data_task_records_each_game, .timeout = 120)
{
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_TASK);
    XqfMsg_task *t = &m.u.task;
    t->task_id = 1;
    t->lease = 2;
    t->run_id = 1;
    strcpy(t->kind, "data");
    t->first_pair = 5;
    t->pairs = 2;
    for (int i = 0; i < 2; i++)
        cr_assert_eq(xqf_strs_push(&t->openings, START), 0);
    t->nodes = 300;
    t->margin_ms = 100;
    t->hash_mb = 1;
    t->threads = 1;
    strcpy(t->name0, "first");
    strcpy(t->name1, "second");
    t->resign_moves = 4;
    t->resign_score = 600;
    t->max_plies = 120;
    t->random_plies = 6;
    t->data_seed = 99;
    char err[256];
    TaskCounts c;
    XqfBin bin = { 0 };
    play_task(t, &c, &bin);
    cr_assert_eq(c.pairs, 2);
    cr_assert_eq(xqf_games_count(bin.data, bin.len), 4);
    size_t off = 0, len;
    const uint8_t *rec;
    GameRecord g[4];
    for (int i = 0; i < 4; i++) {
        game_record_init(&g[i]);
        cr_assert_eq(xqf_games_next(bin.data, bin.len, &off, &rec, &len), 1);
        cr_assert_eq(gamepack_read(rec, len, &g[i], err, sizeof err), 0, "%s", err);
        int book = 0;
        while (book < g[i].count && g[i].moves[book].book)
            book++;
        cr_assert_eq(book, 6, "game %d: %d opening moves", i, book);
        cr_assert_neq(g[i].result, RESULT_NONE);
        /* the plies are those of the game's run-wide index: 2 * (first_pair + pair) + game */
        Opening base = { .count = 0 }, o;
        snprintf(base.fen, sizeof base.fen, "%s", START);
        Move want[8];
        cr_assert_eq(gamepack_opening(&base, 6, 99, 10 + i, want, &o), 0);
        for (int k = 0; k < 6; k++)
            cr_assert_eq(g[i].moves[k].move, want[k], "game %d ply %d", i, k);
        /* the coordinator's start check takes it with the run's random plies, not without */
        XqfOpening start;
        cr_assert_eq(xqf_opening_parse(START, &start), 0);
        const char *why = xqf_game_from_opening(rec, len, &start, 6);
        cr_assert_null(why, "game %d: %s", i, why);
        cr_assert_not_null(xqf_game_from_opening(rec, len, &start, 5));
    }
    int same = 0;
    for (int i = 1; i < 4; i++)
        same += memcmp(&g[0].moves[0].move, &g[i].moves[0].move, sizeof(Move)) == 0 &&
                g[0].count == g[i].count;
    cr_assert_lt(same, 3, "the games are not their own");
    for (int i = 0; i < 4; i++)
        game_record_free(&g[i]);
    xqf_bin_free(&bin);
    xqf_msg_free(&m);
}

/* One record of opening line (its moves flagged), then engine moves: the bytes in *buf (replaced). */
static void record_of_line(const char *line, int engine_moves, PackBuf *buf)
{
    char err[256];
    Book *b = book_parse(line, "test", err, sizeof err);
    cr_assert_not_null(b, "%s", err);
    const Opening *o = book_opening(b, 0);
    Board bd;
    cr_assert_eq(fen_parse(&bd, o->fen, FEN_GAME, err, sizeof err), 0);
    GameRecord g;
    game_record_init(&g);
    snprintf(g.fen, sizeof g.fen, "%s", o->fen);
    for (int i = 0; i < o->count; i++) {
        cr_assert_eq(game_record_push(&g, &(GameMove){ .move = o->moves[i], .book = true }), 0);
        board_make(&bd, o->moves[i]);
    }
    for (int i = 0; i < engine_moves; i++) {
        MoveList legal;
        movegen_legal(&bd, &legal);
        cr_assert_gt(legal.count, 0);
        cr_assert_eq(game_record_push(&g, &(GameMove){ .move = legal.moves[0] }), 0);
        board_make(&bd, legal.moves[0]);
    }
    g.result = RESULT_DRAW;
    g.reason = GAME_REPETITION;
    buf->len = 0;
    cr_assert_eq(gamepack_append(&g, XQF_GAME_MOVES, buf), 0);
    game_record_free(&g);
    book_destroy(&b);
}

/* The record of buf (one record of a games field). */
static void only_record(const PackBuf *buf, const uint8_t **rec, size_t *len)
{
    size_t off = 0;
    cr_assert_eq(xqf_games_next(buf->data, buf->len, &off, rec, len), 1);
}

/*
 * The coordinator's reading of a task's opening line (games.h) agrees
 * with the worker's (book.h): any FEN of a position (E/H letters, 'r' for
 * Red, counters left out) is the position the worker writes, comments and
 * EPD operations are ignored, the moves are the worker's; and a record
 * from another line, side to move, counters or moves is told apart.
 */
Test(gamepack, records_start_from_their_opening)
{
    static const char *const SAME[] = {
        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1 moves h2e2 h9g7",
        "rheakaehr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RHEAKAEHR r moves h2e2 h9g7",
        "  rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w moves\th2e2  h9g7 ; c0 \"x\"",
        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - moves h2e2 h9g7 # (+5)",
    };
    PackBuf buf = { 0 };
    const uint8_t *rec;
    size_t len;
    record_of_line(SAME[0], 10, &buf);
    only_record(&buf, &rec, &len);
    for (size_t i = 0; i < sizeof SAME / sizeof SAME[0]; i++) {
        XqfOpening o;
        cr_assert_eq(xqf_opening_parse(SAME[i], &o), 0, "%s", SAME[i]);
        cr_assert_eq(o.count, 2);
        const char *why = xqf_game_from_opening(rec, len, &o, 0);
        cr_assert_null(why, "%s: %s", SAME[i], why);
    }
    static const struct {
        const char *line, *why;
    } OTHER[] = {
        { "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 1 moves h7e7 h0g2", "other side" },
        { "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 2 moves h2e2 h9g7", "counters" },
        { "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w moves h2e2", "moves" },
        { "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w moves b0c2 h9g7", "moves" },
        { "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w moves h2e2 h9g7 b0c2", "moves" },
        { "r1bakabnr/4n4/7c1/p1p1p1p2/8p/4P1P2/PcP5P/1C5C1/9/RNBAKABNR w - - 8 5", "position" },
    };
    for (size_t i = 0; i < sizeof OTHER / sizeof OTHER[0]; i++) {
        XqfOpening o;
        cr_assert_eq(xqf_opening_parse(OTHER[i].line, &o), 0, "%s", OTHER[i].line);
        cr_assert_not_null(xqf_game_from_opening(rec, len, &o, 0), "a record of another %s taken", OTHER[i].why);
    }
    /* an opening's own record with one of its engine moves flagged as the opening's: only as a random ply */
    XqfOpening o;
    cr_assert_eq(xqf_opening_parse(SAME[0], &o), 0);
    uint8_t *copy = malloc(len);
    memcpy(copy, rec, len);
    size_t third = XQF_GAME_HEAD + copy[2] + 2 + 2 * 2;     /* the first engine move's ply */
    copy[third + 1] |= XQF_GAME_BOOK >> 8;
    cr_assert_not_null(xqf_game_from_opening(copy, len, &o, 0));
    cr_assert_null(xqf_game_from_opening(copy, len, &o, 1));
    /* an opening move after an engine move: never */
    copy[third + 1] &= (uint8_t)~(XQF_GAME_BOOK >> 8);
    copy[third + 3] |= XQF_GAME_BOOK >> 8;
    cr_assert_not_null(xqf_game_from_opening(copy, len, &o, 4));
    free(copy);
    static const char *const BAD[] = { "", "rnbakabnr/9/1c5c1 w", "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNX w",
                                       "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w moves h2e",
                                       "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR x" };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++)
        cr_assert_eq(xqf_opening_parse(BAD[i], &o), -1, "'%s' read", BAD[i]);
    pack_buf_free(&buf);
}

/*
 * A task of `threads` threads per engine, both players engine builds (the
 * fake engine, which says the Threads it was told as its depth), played to
 * its end on a pool of two threads (a worker of concurrency 2).  Returns
 * the most games the pool played at once; every move of its records
 * (scores kept) has the depth `threads`.
 */
static int play_threaded(int threads)
{
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_TASK);
    XqfMsg_task *t = &m.u.task;
    strcpy(t->kind, "sprt");
    t->pairs = 2;
    for (int i = 0; i < 2; i++)
        cr_assert_eq(xqf_strs_push(&t->openings, START), 0);
    t->nodes = 100;
    t->hash_mb = 1;
    t->threads = threads;
    t->max_plies = 12;
    t->scores = true;
    strcpy(t->name0, "first");
    strcpy(t->name1, "second");
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    TaskPool *pool = task_pool_new(2, fds[1]);
    cr_assert_not_null(pool);
    const char *engines[2] = { FAKE_ENGINE, FAKE_ENGINE };
    char err[256];
    Task *task = task_new(t, "", engines, NULL, false, err, sizeof err);
    cr_assert_not_null(task, "%s", err);
    task_start(task, pool);
    TaskCounts c;
    bool done = false;
    char failed[256] = "";
    while (!done) {
        char byte;
        if (read(fds[0], &byte, 1) < 0)
            break;
        task_poll(task, &c, &done, failed, sizeof failed);
    }
    cr_assert(!failed[0], "%s", failed);
    cr_assert_eq(c.pairs, 2);
    XqfBin bin = { 0 };
    cr_assert_eq(task_report(task, 0, XQF_GAMES_MAX, &c, &bin), 0);
    size_t off = 0, len;
    const uint8_t *rec;
    int games = 0, moves = 0;
    GameRecord g;
    game_record_init(&g);
    while (xqf_games_next(bin.data, bin.len, &off, &rec, &len) > 0) {
        cr_assert_eq(gamepack_read(rec, len, &g, err, sizeof err), 0, "%s", err);
        for (int i = 0; i < g.count; i++, moves++)
            cr_assert_eq(g.moves[i].depth, threads, "game %d move %d: depth %d", games, i, g.moves[i].depth);
        games++;
    }
    cr_assert_eq(games, 4);
    cr_assert_gt(moves, 0);
    game_record_free(&g);
    xqf_bin_free(&bin);
    int peak = task_pool_peak(pool);
    task_destroy(&task);
    task_pool_destroy(&pool);
    xqf_msg_free(&m);
    close(fds[0]);
    close(fds[1]);
    return peak;
}

/*
 * A worker of concurrency 2 plays a task of 2 threads per engine one game
 * at a time (games x threads <= concurrency), both engines set to
 * Threads 2; a task of one thread plays two games at once on it.
 */
Test(gamepack, a_task_of_two_threads_plays_one_game_at_a_time_on_two_cores, .timeout = 60)
{
    cr_assert_eq(play_threaded(2), 1, "games of 2 threads side by side on 2 cores");
    cr_assert_eq(play_threaded(1), 2, "games of 1 thread not side by side on 2 cores");
}

/*
 * Reading games back from PGN, finding a player's blunders in them, suites
 * of positions (EPD am/bm) and running an engine on them; xqf-match's
 * blunders and tactics commands end to end.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fen.h"
#include "pgn.h"
#include "run_util.h"
#include "search.h"
#include "tactics.h"

/* A mate in one for red (b0b9: the rook on a8 holds the eighth rank, the red king the d-file). */
#define MATE_IN_ONE "4k4/R8/9/9/9/9/9/9/9/1R1K5 w - - 0 1"

static char *write_temp(const char *text)
{
    static char paths[4][64];
    static int next;
    char *path = paths[next++ % 4];
    snprintf(path, 64, "/tmp/xqf-tactics-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

/*
 * A game from the start: five moves, red's scores +0.20, +2.00, then -7.00
 * (red's third move's comment), black's -0.15 and a mate score; red is
 * "alpha", black "beta".  plies: how many of the five.
 */
static void make_game(GameRecord *g, int plies, GameResult result)
{
    static const char *const MOVES[] = { "h2e2", "h9g7", "b0c2", "b9c7", "h0g2" };
    static const int SCORES[] = { 20, -15, 200, MATE - 3, -700 };
    game_record_init(g);
    snprintf(g->fen, sizeof g->fen, "%s", START_FEN);
    Board b;
    char err[128];
    cr_assert_eq(fen_parse(&b, START_FEN, FEN_GAME, err, sizeof err), 0);
    for (int i = 0; i < plies; i++) {
        GameMove m = { .has_score = true, .score = SCORES[i], .depth = 10 + i, .time_us = 1000 * (i + 1) };
        cr_assert_eq(move_parse(&b, MOVES[i], &m.move, err, sizeof err), 0, "%s", err);
        board_make(&b, m.move);
        cr_assert_eq(game_record_push(g, &m), 0);
    }
    g->result = result;
    snprintf(g->detail, sizeof g->detail, "Black wins by checkmate {sic}");
}

static char *game_pgn(const GameRecord *g, int round)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/xqf-tactics-pgn-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    PgnTags tags = { "test", "alpha", "beta", round, NULL, 1000, NULL, NULL, 0, NULL };
    cr_assert_eq(pgn_write(f, g, &tags), 0);
    cr_assert_eq(pgn_write(f, g, &tags), 0); /* two games */
    fclose(f);
    return path;
}

static int read_one(const char *path, PgnGame *g, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    int line = 0, rc = pgn_read(f, g, &line, err, errlen);
    fclose(f);
    return rc;
}

Test(pgn_read, reads_back_what_pgn_write_writes)
{
    GameRecord g;
    make_game(&g, 5, RESULT_BLACK_WINS);
    g.moves[1].book = true;
    g.moves[3].has_score = false;
    char *path = game_pgn(&g, 7);
    FILE *f = fopen(path, "r");
    PgnGame r = { 0 };
    char err[256];
    int line = 0;
    for (int game = 0; game < 2; game++) {
        cr_assert_eq(pgn_read(f, &r, &line, err, sizeof err), 1, "%s", err);
        cr_assert_str_eq(r.red, "alpha");
        cr_assert_str_eq(r.black, "beta");
        cr_assert_eq(r.round, 7);
        cr_assert_str_eq(r.rec.fen, START_FEN);
        cr_assert_eq(r.rec.result, RESULT_BLACK_WINS);
        cr_assert_eq(r.rec.count, 5);
        for (int i = 0; i < 5; i++) {
            cr_assert_eq(r.rec.moves[i].move, g.moves[i].move, "ply %d", i);
            cr_assert_eq(r.rec.moves[i].book, g.moves[i].book, "ply %d", i);
            if (g.moves[i].book)
                continue;
            cr_assert_eq(r.rec.moves[i].has_score, g.moves[i].has_score, "ply %d", i);
            if (g.moves[i].has_score)
                cr_assert_eq(r.rec.moves[i].score, g.moves[i].score, "ply %d", i);
            cr_assert_eq(r.rec.moves[i].depth, g.moves[i].depth, "ply %d", i);
            cr_assert_eq(r.rec.moves[i].time_us, g.moves[i].time_us, "ply %d", i);
        }
        cr_assert_str_eq(r.rec.detail, "Black wins by checkmate {sic)", "pgn_write turns a closing brace into a parenthesis");
    }
    cr_assert_eq(pgn_read(f, &r, &line, err, sizeof err), 0, "the end of the file");
    fclose(f);
    unlink(path);
    pgn_game_free(&r);
    game_record_free(&g);
}

/* Two inputs ops/fuzz found (fuzz_pgn): neither may change a game between pgn_write and pgn_read. */
Test(pgn_read, a_last_comment_like_a_moves_stays_the_games)
{
    static const char *const DETAILS[] = { "book", "+1.00/3 0.100s", "?/0 0s" };
    for (size_t i = 0; i < sizeof DETAILS / sizeof DETAILS[0]; i++) {
        GameRecord g;
        make_game(&g, 3, RESULT_RED_WINS);
        g.moves[2].has_score = false; /* a stored game's move: no comment of its own */
        g.moves[2].time_us = 0;
        snprintf(g.detail, sizeof g.detail, "%s", DETAILS[i]);
        char *path = game_pgn(&g, 1);
        PgnGame r = { 0 };
        char err[256];
        cr_assert_eq(read_one(path, &r, err, sizeof err), 1, "%s", err);
        cr_assert_eq(r.rec.count, 3);
        cr_assert_not(r.rec.moves[2].book, "detail '%s'", DETAILS[i]);
        cr_assert_not(r.rec.moves[2].has_score, "detail '%s'", DETAILS[i]);
        cr_assert_str_eq(r.rec.detail, DETAILS[i]);
        unlink(path);
        pgn_game_free(&r);
        game_record_free(&g);
    }
}

Test(pgn_read, a_score_that_rounds_to_a_mate_is_no_score)
{
    /* 298.7199 pawns round to 29872 = MATE_BOUND, which pgn_write would write as a mate in 64 */
    char *path = write_temp("[White \"a\"]\n\n1. h2e2 {+298.7199/1 0s} 1-0\n");
    PgnGame r = { 0 };
    char err[256];
    cr_assert_eq(read_one(path, &r, err, sizeof err), 1, "%s", err);
    cr_assert_not(r.rec.moves[0].has_score);
    cr_assert_str_eq(r.rec.detail, "+298.7199/1 0s");
    unlink(path);
    pgn_game_free(&r);
}

Test(pgn_read, names_the_line_of_a_bad_game)
{
    static const struct {
        const char *text, *why;
    } CASES[] = {
        { "[White \"a\"]\n[Black \"b\"]\n\n1. h2e2 h9g7 2. h2h9 1-0\n", "move 3 'h2h9'" },
        { "[White \"a\"]\n\n1. h2e2 {+0.10/3 0.1s} h9g7\n", "without a result" },
        { "[White \"a\"]\n\n1. h2e2 {+0.10/3 0.1s h9g7 1-0\n", "without its '}'" },
        { "\n\n[White a]\n\n1. h2e2 1-0\n", "line 3: not a tag" },
        { "[FEN \"9/9/9 w\"]\n\n1. h2e2 1-0\n", "bad FEN tag" },
        { "[White \"a\"]\n", "without moves" },
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        char *path = write_temp(CASES[i].text);
        PgnGame g = { 0 };
        char err[256] = "";
        cr_assert_eq(read_one(path, &g, err, sizeof err), -1, "case %zu", i);
        cr_assert_not_null(strstr(err, CASES[i].why), "case %zu: '%s'", i, err);
        unlink(path);
        pgn_game_free(&g);
    }
}

typedef struct {
    int count;
    Blunder last;
    char line[SUITE_LINE_MAX];
} Found;

static void on_blunder(void *ctx, const Blunder *b)
{
    Found *f = ctx;
    f->count++;
    f->last = *b;
    blunder_line(b, "games.pgn", f->line);
}

static Found scan(const GameRecord *rec, const char *player, int before, int after)
{
    PgnGame g = { .red = "alpha", .black = "beta", .round = 3, .rec = *rec };
    BlunderRule rule = { before, after };
    Found f = { 0 };
    cr_assert_eq(blunders_scan(&g, player, &rule, on_blunder, &f), f.count);
    return f;
}

Test(blunders, a_score_that_falls_by_the_next_move)
{
    GameRecord g;
    make_game(&g, 5, RESULT_BLACK_WINS);
    Found f = scan(&g, "alpha", 150, -500);
    cr_assert_eq(f.count, 1);
    cr_assert_eq(f.last.ply, 2, "red's second move, b0c2, scored +2.00 before -7.00");
    cr_assert_eq(f.last.before, 200);
    cr_assert_eq(f.last.after, -700);
    cr_assert_not_null(strstr(f.line, " moves h2e2 h9g7 ; am b0c2; id \"games.pgn round 3 ply 3: +2.00 then -7.00\";"),
                       "%s", f.line);
    cr_assert_eq(scan(&g, "alpha", 250, -500).count, 0, "+2.00 is below --before 250");
    cr_assert_eq(scan(&g, "alpha", 150, -800).count, 0, "-7.00 is above --after -800");
    cr_assert_eq(scan(&g, "beta", -10000, 10000).count, 0, "black's scores never fall: -0.15 then a mate");
    cr_assert_eq(scan(&g, "gamma", -10000, 10000).count, 0, "not a player of the game");
    game_record_free(&g);
}

Test(blunders, a_move_answered_by_a_lost_game)
{
    GameRecord g;
    make_game(&g, 4, RESULT_RED_WINS); /* red's +2.00 move is the last but one: no score after it */
    cr_assert_eq(scan(&g, "alpha", 150, -500).count, 0, "red won: nothing fell");
    g.result = RESULT_BLACK_WINS;
    Found f = scan(&g, "alpha", 150, -500);
    cr_assert_eq(f.count, 1, "red's +2.00 move was answered by the losing end of the game");
    cr_assert_eq(f.last.ply, 2);
    cr_assert_eq(f.last.after, -MATE);
    cr_assert_not_null(strstr(f.line, "then lost"), "%s", f.line);
    game_record_free(&g);
}

static char *suite_of(const char *text, Suite **s, char *err, size_t errlen)
{
    char *path = write_temp(text);
    *s = suite_load(path, err, errlen);
    return path;
}

Test(suite, reads_the_blunder_lines_back)
{
    GameRecord g;
    make_game(&g, 5, RESULT_BLACK_WINS);
    Found f = scan(&g, "alpha", 150, -500);
    char text[SUITE_LINE_MAX + 128];
    snprintf(text, sizeof text, "# a comment\n\n%s\n" MATE_IN_ONE " ; bm b0b9 a8a9; id \"two\";\n", f.line);
    Suite *s;
    char err[256];
    char *path = suite_of(text, &s, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    cr_assert_eq(suite_size(s), 2);
    cr_assert_str_eq(suite_id(s, 0), "games.pgn round 3 ply 3: +2.00 then -7.00");
    cr_assert_str_eq(suite_id(s, 1), "two");
    suite_destroy(&s);
    suite_destroy(&s);
    unlink(path);
    game_record_free(&g);
}

Test(suite, names_the_line_of_a_bad_one)
{
    static const struct {
        const char *text, *why;
    } CASES[] = {
        { "# c\n\n" MATE_IN_ONE "\n", ":3: no am or bm" },
        { MATE_IN_ONE " ; am b0b9;\n" MATE_IN_ONE " ; am z9z9;\n", ":2: am 'z9z9'" },
        { MATE_IN_ONE " ; am b0b1 b0b9;\n" MATE_IN_ONE " ; am b9b0;\n", ":2: am 'b9b0'" },
        { MATE_IN_ONE " ; xx b0b9;\n", ":1: unknown operation 'xx'" },
        { MATE_IN_ONE " ; am;\n", ":1: am without a move" },
        { MATE_IN_ONE " ; bm b0b9; id \"open\n", ":1: id: a quoted text" },
        { MATE_IN_ONE " ; am a1 b2 c3 d4 e5 f6 g7 h8 i9;\n", ":1: am 'a1'" },
        { "4k4/R8/9 w ; am b0b9;\n", ":1: bad FEN" },
        { "# only comments\n", "no openings" },
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        Suite *s;
        char err[256] = "";
        char *path = suite_of(CASES[i].text, &s, err, sizeof err);
        cr_assert_null(s, "case %zu", i);
        cr_assert_not_null(strstr(err, CASES[i].why), "case %zu: '%s'", i, err);
        unlink(path);
    }
}

/* The suites shipped in ops/suites still read: their moves legal, their operations whole. */
Test(suite, the_shipped_suites_load)
{
    DIR *d = opendir(XQF_SOURCE_DIR "/ops/suites");
    cr_assert_not_null(d);
    int suites = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 6, ".suite") != 0)
            continue;
        char path[512], err[256];
        snprintf(path, sizeof path, "%s/ops/suites/%s", XQF_SOURCE_DIR, e->d_name);
        Suite *s = suite_load(path, err, sizeof err);
        cr_assert_not_null(s, "%s", err);
        cr_assert_gt(suite_size(s), 10, "%s", path);
        suite_destroy(&s);
        suites++;
    }
    closedir(d);
    cr_assert_gt(suites, 0);
}

typedef struct {
    int count;
    TacticResult r[4];
} Results;

static void on_result(void *ctx, const TacticResult *r)
{
    Results *out = ctx;
    cr_assert_eq(r->index, out->count, "results come in suite order");
    out->r[out->count++] = *r;
}

Test(tactics, the_engine_finds_a_mate_in_one)
{
    Suite *s;
    char err[256];
    char *path = suite_of(MATE_IN_ONE " ; bm b0b9; id \"mate\";\n"
                          MATE_IN_ONE " ; am b0b9; id \"avoid the mate\";\n"
                          MATE_IN_ONE " ; am a8a9 b0b1;\n",
                          &s, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    PlayerSpec spec;
    char *words[] = { "name=xqf" };
    cr_assert_eq(spec_parse(&spec, 1, words, 4, err, sizeof err), 0, "%s", err);
    for (int threads = 1; threads <= 2; threads++) {
        TacticsConfig cfg = { .depth = 3, .threads = threads };
        Results out = { 0 };
        cr_assert_eq(tactics_run(s, &spec, &cfg, on_result, &out, err, sizeof err), 2, "%s", err);
        cr_assert_eq(out.count, 3);
        char mv[8];
        move_text(out.r[0].move, mv);
        cr_assert_str_eq(mv, "b0b9");
        cr_assert(out.r[0].pass && !out.r[1].pass && out.r[2].pass);
        cr_assert(out.r[0].has_score && out.r[0].score >= MATE_BOUND);
        cr_assert_eq(out.r[1].fault, GAME_REASON_NONE);
    }
    suite_destroy(&s);
    unlink(path);
}

/* Runs an xqf-match command line (stdout and stderr into out); returns its exit status. */
static int run(const char *args, char *out, size_t len)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s/xqf-match %s", XQF_BIN, args);
    return run_command(cmd, out, len);
}

Test(cli, blunders_then_tactics)
{
    GameRecord g;
    make_game(&g, 5, RESULT_BLACK_WINS);
    char *pgn = game_pgn(&g, 4);
    char suite[] = "/tmp/xqf-tactics-suite-XXXXXX";
    close(mkstemp(suite));
    char args[512], out[4096];
    snprintf(args, sizeof args, "blunders --pgn %s --pgn %s --player alpha --out %s", pgn, pgn, suite);
    cr_assert_eq(run(args, out, sizeof out), 0, "%s", out);
    cr_assert_not_null(strstr(out, "4 games read, 4 played by alpha, 4 blunders written"), "%s", out);
    snprintf(args, sizeof args, "tactics --suite %s --engine name=xqf --depth 2 --concurrency 2 --verbose", suite);
    cr_assert_eq(run(args, out, sizeof out), 0, "%s", out);
    cr_assert_not_null(strstr(out, "ply 3: +2.00 then -7.00"), "%s", out);
    cr_assert_not_null(strstr(out, "xqf: "), "%s", out);
    cr_assert_not_null(strstr(out, " of 4 passed"), "%s", out);

    static const struct {
        const char *args, *why;
    } BAD[] = {
        { "blunders --pgn %s --out /tmp/x", "--player and --out are required" },
        { "blunders --pgn %s --player alpha --out /tmp/xqf-no-such-dir/x", "cannot write" },
        { "blunders --pgn %s --player nobody --out /dev/null", "no game of 'nobody' among the 2 games" },
        { "blunders --pgn %s --player alpha --out /dev/null --before 100 --after 200", "must be below --before" },
        { "blunders --pgn /nonexistent%s --player alpha --out /dev/null", "cannot read" },
        { "tactics --suite %s --engine name=x --nodes 10 --depth 2", "one of --nodes and --depth" },
        { "tactics --suite %s --nodes 10", "--suite and --engine are required" },
        { "tactics --suite %s --engine name=x bogus=1 --nodes 10", "engine:" },
        { "tactics --suite %s --engine name=x --engine name=y --nodes 10", "one --engine only" },
        { "tactics --suite %s.missing --engine name=x --nodes 10", "missing" },
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        snprintf(args, sizeof args, BAD[i].args, i < 5 ? pgn : suite);
        cr_assert_eq(run(args, out, sizeof out), 2, "%s: %s", args, out);
        cr_assert_not_null(strstr(out, BAD[i].why), "%s: '%s'", args, out);
    }
    unlink(pgn);
    unlink(suite);
    game_record_free(&g);
}

/* Nodes of a search of fen to depth with the parameters (NULL: the defaults), from an empty table. */
static uint64_t nodes_to_depth(const char *fen, int depth, const char *params)
{
    Engine *e = engine_new();
    cr_assert_not_null(e);
    Params p;
    params_default(&p);
    char err[256];
    cr_assert_eq(params_apply_list(&p, params ? params : "", err, sizeof err), 0, "%s", err);
    engine_set_params(e, &p);
    engine_set_hash(e, 16);
    Board b;
    cr_assert_eq(fen_parse(&b, fen, FEN_GAME, err, sizeof err), 0, "%s", err);
    SearchLimits limits;
    search_limits_init(&limits);
    limits.depth = depth;
    SearchResult r;
    engine_search(e, &b, &limits, NULL, NULL, &r);
    engine_destroy(&e);
    return r.nodes;
}

/* The number after `label` in out (a double). */
static double number_after(const char *out, const char *label)
{
    const char *at = strstr(out, label);
    cr_assert_not_null(at, "no '%s' in:\n%s", label, out);
    return strtod(at + strlen(label), NULL);
}

Test(cli, tree_compares_two_trees)
{
    static const char *const FENS[] = {
        START_FEN,
        "r1bakabnr/9/1cn4c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C1N2/9/RNBAKAB1R w - - 4 3",
        "rnbakab1r/9/1c4nc1/p1p1p1p1p/9/2P6/P3P1P1P/1C2C4/9/RNBAKABNR w - - 2 2",
        "4k4/4a4/4ba3/9/2p3p2/9/2P3P2/4B4/4A4/3AK4 b - - 0 1",
    };
    char text[1024] = "# four positions\n", args[512], out[8192];
    for (size_t i = 0; i < 4; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s\n", FENS[i]);
    char *book = write_temp(text);

    /* The same parameters twice: the same trees, a ratio of exactly 1 and no interval. */
    snprintf(args, sizeof args, "tree --engine name=a --engine name=b --depth 4 --book %s", book);
    cr_assert_eq(run(args, out, sizeof out), 0, "%s", out);
    cr_assert_not_null(strstr(out, "Positions: 4 at depth 4"), "%s", out);
    cr_assert_not_null(strstr(out, "geometric mean 1.000, 95% interval [1.000, 1.000]; fewer nodes in 0, more in 0, "
                                   "as many in 4"), "%s", out);
    cr_assert_not_null(strstr(out, "Same best move: 4 of 4"), "%s", out);

    /* Without the null move against with it: the totals and the mean of the ratios are the engine's own. */
    snprintf(args, sizeof args, "tree --engine name=off option.NullMove=0 --engine name=on --depth 6 --book %s "
                                "--count 3 --verbose", book);
    cr_assert_eq(run(args, out, sizeof out), 0, "%s", out);
    uint64_t off = 0, on = 0;
    double logs = 0;
    for (int i = 0; i < 3; i++) {
        uint64_t a = nodes_to_depth(FENS[i], 6, "NullMove=0"), b = nodes_to_depth(FENS[i], 6, NULL);
        off += a;
        on += b;
        logs += log((double)a / (double)b);
        char line[64];
        snprintf(line, sizeof line, "%4d %10" PRIu64 " %10" PRIu64, i + 1, a, b);
        cr_expect_not_null(strstr(out, line), "position %d: '%s' not in:\n%s", i + 1, line, out);
    }
    cr_assert_neq(off, on, "the null move changes no tree at depth 6");
    cr_expect_eq((uint64_t)number_after(out, "Nodes: off "), off, "%s", out);
    cr_expect_eq((uint64_t)number_after(out, ", on "), on, "%s", out);
    cr_expect_float_eq(number_after(out, "geometric mean "), exp(logs / 3), 0.0006, "%s", out);
    cr_assert_not_null(strstr(out, "Positions: 3 at depth 6"), "%s", out);

    static const struct {
        const char *args, *why;
    } BAD[] = {
        { "tree --engine name=a --depth 3 --book %s", "two parameter sets" },
        { "tree --engine name=a --engine name=b --engine name=c --depth 3 --book %s", "two --engine only" },
        { "tree --engine name=a --engine name=b --book %s", "--depth is required" },
        { "tree --engine name=a --engine name=a --depth 3 --book %s", "different names" },
        { "tree --engine name=a cmd=/bin/true --engine name=b --depth 3 --book %s", "the built-in engine only" },
        { "tree --engine name=a option.NullMove=7 --engine name=b --depth 3 --book %s", "engine 1:" },
        { "tree --engine name=a --engine name=b --depth 3 --count 1 --book %s", "--count" },
        { "tree --engine name=a --engine name=b --depth 0 --book %s", "--depth" },
        { "tree --engine name=a --engine name=b --depth 3 --book %s.missing", "missing" },
        { "tree --engine name=a --engine name=b --depth 3 --book %s", "one position" },
        { "tree --engine name=a --engine name=b --depth 3 --book %s", ":2: bad FEN" },
    };
    char *one = write_temp(START_FEN "\n"), *bad = write_temp(START_FEN "\nnot a fen\n");
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        snprintf(args, sizeof args, BAD[i].args, i == 9 ? one : i == 10 ? bad : book);
        cr_assert_eq(run(args, out, sizeof out), 2, "%s: %s", args, out);
        cr_assert_not_null(strstr(out, BAD[i].why), "%s: '%s'", args, out);
    }
    unlink(book);
    unlink(one);
    unlink(bad);
}

/*
 * Tests of worker/ game play: the referee (rules endings through real games
 * between scripted engines), adjudication, player specs and opening books.
 */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "book.h"
#include "game.h"
#include "pgn.h"
#include "player.h"
#include "spec.h"

/* ---- helpers ------------------------------------------------------------- */

/* A spec for the scripted fake engine: mode and its argument. */
static void fake_spec(PlayerSpec *s, const char *name, const char *mode, const char *arg)
{
    char w[4][512];
    snprintf(w[0], sizeof w[0], "name=%s", name);
    snprintf(w[1], sizeof w[1], "cmd=%s", FAKE_ENGINE);
    snprintf(w[2], sizeof w[2], "arg=%s", mode);
    snprintf(w[3], sizeof w[3], "arg=%s", arg);
    char *words[4] = { w[0], w[1], w[2], w[3] };
    char err[256];
    cr_assert_eq(spec_parse(s, 4, words, 0, err, sizeof err), 0, "%s", err);
}

static const TimeControl FIXED = { .nodes = 100, .move_timeout_ms = 5000 };

/* Plays one game between two scripts from fen; the record goes to *g. */
static void scripted_game(const char *fen, const char *red_script, const char *black_script,
                          const Adjudication *adj, GameRecord *g)
{
    PlayerSpec rs, bs;
    fake_spec(&rs, "red", "script", red_script);
    fake_spec(&bs, "black", "script", black_script);
    Player *red = player_new(&rs), *black = player_new(&bs);
    cr_assert(red && black);
    Opening o = { .count = 0 };
    snprintf(o.fen, sizeof o.fen, "%s", fen);
    static const Adjudication none;
    game_record_init(g);
    cr_assert_eq(game_play(red, black, &o, &FIXED, adj ? adj : &none, NULL, g), 0);
    player_destroy(&red);
    player_destroy(&black);
    cr_assert_null(red);
    int status;
    cr_assert(waitpid(-1, &status, WNOHANG) == -1 && errno == ECHILD, "an engine process is left");
}

/* ---- referee ------------------------------------------------------------- */

Test(referee, checkmate_ends_the_game)
{
    GameRecord g;
    scripted_game("3k5/8R/9/9/9/9/9/9/9/R3K4 w - - 0 1", "a0a9:500", "d9d8:0", NULL, &g);
    cr_assert_eq(g.result, RESULT_RED_WINS);
    cr_assert_eq(g.reason, GAME_CHECKMATE);
    cr_assert_eq(g.count, 1, "the game went on after mate: %d plies", g.count);
    cr_assert_eq(g.moves[0].score, 500);
    game_record_free(&g);
}

Test(referee, stalemate_loses_for_the_side_to_move)
{
    GameRecord g;
    scripted_game("4k4/9/4P4/9/9/9/9/9/3R2R2/4K4 w - - 0 1", "g1f1:0", "e9e8:0", NULL, &g);
    cr_assert_eq(g.result, RESULT_RED_WINS);
    cr_assert_eq(g.reason, GAME_STALEMATE);
    cr_assert_eq(g.count, 1);
    game_record_free(&g);
}

Test(referee, perpetual_check_loses_for_the_checker)
{
    GameRecord g;
    scripted_game("3k5/R8/9/9/9/9/9/9/9/4K4 w - - 0 1",
                  "a8a9:0 a9a8:0 a8a9:0 a9a8:0 a8a9:0 a9a8:0",
                  "d9d8:0 d8d9:0 d9d8:0 d8d9:0 d9d8:0 d8d9:0", NULL, &g);
    cr_assert_eq(g.result, RESULT_BLACK_WINS, "result %d reason %d", g.result, g.reason);
    cr_assert_eq(g.reason, GAME_PERPETUAL_CHECK);
    cr_assert_eq(g.count, 8, "third occurrence after 8 plies, got %d", g.count);
    game_record_free(&g);
}

/* A horse chasing a rook back and forth (tests/test_chase.c, horse_chases_rook): the chaser loses. */
Test(referee, perpetual_chase_loses_for_the_chaser)
{
    GameRecord g;
    scripted_game("5k3/9/2r6/3N5/9/9/9/9/9/3K5 w - - 0 1", "d6b5:0 b5d6:0 d6b5:0 b5d6:0 d6b5:0",
                  "c7c8:0 c8c7:0 c7c8:0 c8c7:0 c7c8:0", NULL, &g);
    cr_assert_eq(g.result, RESULT_BLACK_WINS, "result %d reason %d", g.result, g.reason);
    cr_assert_eq(g.reason, GAME_PERPETUAL_CHASE);
    cr_assert_eq(g.count, 8, "third occurrence after 8 plies, got %d", g.count);
    cr_assert_str_eq(game_reason_text(g.reason), "perpetual chase");
    cr_assert_not(game_reason_is_fault(g.reason));
    /* in PGN: a normal termination, the reason in the last comment */
    char *pgn = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&pgn, &len);
    cr_assert_not_null(f);
    PgnTags tags = { .event = "test", .red = "red", .black = "black", .round = 1, .nodes = 100 };
    cr_assert_eq(pgn_write(f, &g, &tags), 0);
    fclose(f);
    cr_expect(strstr(pgn, "[Result \"0-1\"]") && strstr(pgn, "[Termination \"normal\"]"), "%s", pgn);
    cr_expect(strstr(pgn, "Black wins by perpetual chase"), "%s", pgn);
    free(pgn);
    game_record_free(&g);
}

Test(referee, plain_repetition_is_a_draw)
{
    GameRecord g;
    scripted_game(START_FEN, "h0g2:0 g2h0:0 h0g2:0 g2h0:0 h0g2:0",
                  "h9g7:0 g7h9:0 h9g7:0 g7h9:0 h9g7:0", NULL, &g);
    cr_assert_eq(g.result, RESULT_DRAW);
    cr_assert_eq(g.reason, GAME_REPETITION);
    cr_assert_eq(g.count, 8);
    game_record_free(&g);
}

Test(referee, no_capture_limit_draws)
{
    GameRecord g;
    scripted_game("3k5/9/9/9/9/9/9/9/9/R3K4 w - - 117 60", "a0a1:0 a1a0:0", "d9d8:0 d8d9:0", NULL,
                  &g);
    cr_assert_eq(g.result, RESULT_DRAW);
    cr_assert_eq(g.reason, GAME_NO_CAPTURE);
    cr_assert_eq(g.count, 3);
    game_record_free(&g);
}

Test(referee, maximum_length_draws)
{
    Adjudication adj = { .max_plies = 4 };
    GameRecord g;
    scripted_game(START_FEN, "h0g2:0 g2h0:0 h0g2:0", "h9g7:0 g7h9:0 h9g7:0", &adj, &g);
    cr_assert_eq(g.result, RESULT_DRAW);
    cr_assert_eq(g.reason, GAME_MAX_LENGTH);
    cr_assert_eq(g.count, 4);
    game_record_free(&g);
}

/* ---- adjudication ---------------------------------------------------------- */

Test(adjudication, agreeing_scores_adjudicate_a_win)
{
    Adjudication adj = { .resign_moves = 4, .resign_score = 600 };
    GameRecord g;
    scripted_game(START_FEN, "h0g2:650 g2h0:700 h0g2:800", "h9g7:-650 g7h9:-900 h9g7:-700",
                  &adj, &g);
    cr_assert_eq(g.result, RESULT_RED_WINS);
    cr_assert_eq(g.reason, GAME_ADJUDICATED_WIN);
    cr_assert_eq(g.count, 4);
    game_record_free(&g);
}

Test(adjudication, disagreeing_scores_do_not)
{
    Adjudication adj = { .resign_moves = 4, .resign_score = 600 };
    GameRecord g;
    /* Both sides claim to be winning: no agreement, the game ends by repetition. */
    scripted_game(START_FEN, "h0g2:700 g2h0:700 h0g2:700 g2h0:700 h0g2:700",
                  "h9g7:700 g7h9:700 h9g7:700 g7h9:700 h9g7:700", &adj, &g);
    cr_assert_eq(g.reason, GAME_REPETITION);
    game_record_free(&g);
}

Test(adjudication, quiet_scores_adjudicate_a_draw_after_move_m)
{
    Adjudication adj = { .draw_after = 2, .draw_moves = 3, .draw_score = 10 };
    GameRecord g;
    scripted_game(START_FEN, "h0g2:5 g2h0:-10 h0g2:0", "h9g7:0 g7h9:8 h9g7:0", &adj, &g);
    cr_assert_eq(g.result, RESULT_DRAW);
    cr_assert_eq(g.reason, GAME_ADJUDICATED_DRAW);
    /* Plies from full move 2 on: 3 (g2h0), 4, 5: adjudicated after the fifth ply. */
    cr_assert_eq(g.count, 5);
    game_record_free(&g);
}

Test(adjudication, rules_unit)
{
    Adjudication adj = { .resign_moves = 3, .resign_score = 500, .draw_after = 10, .draw_moves = 4, .draw_score = 20 };
    AdjudicationState st = { 0, 0, 0 };
    GameReason why = GAME_REASON_NONE;
    /* Black winning: Red says -600, Black says +550, ... */
    cr_assert_eq(adjudication_update(&st, &adj, RED, true, -600, 1, &why), RESULT_NONE);
    cr_assert_eq(adjudication_update(&st, &adj, BLACK, true, 550, 1, &why), RESULT_NONE);
    /* A move without a score breaks the run. */
    cr_assert_eq(adjudication_update(&st, &adj, RED, false, 0, 2, &why), RESULT_NONE);
    cr_assert_eq(adjudication_update(&st, &adj, BLACK, true, 550, 2, &why), RESULT_NONE);
    cr_assert_eq(adjudication_update(&st, &adj, RED, true, -500, 3, &why), RESULT_NONE);
    cr_assert_eq(adjudication_update(&st, &adj, BLACK, true, 30000 - 5, 3, &why), RESULT_BLACK_WINS);
    cr_assert_eq(why, GAME_ADJUDICATED_WIN);
    /* Draw: not before move 10, then 4 plies within 20. */
    AdjudicationState d = { 0, 0, 0 };
    for (int i = 0; i < 6; i++)
        cr_assert_eq(adjudication_update(&d, &adj, i % 2, true, 0, 6 + i / 2, &why), RESULT_NONE);
    cr_assert_eq(adjudication_update(&d, &adj, RED, true, 0, 10, &why), RESULT_NONE);
    cr_assert_eq(adjudication_update(&d, &adj, BLACK, true, -20, 10, &why), RESULT_NONE);
    cr_assert_eq(adjudication_update(&d, &adj, RED, true, 21, 11, &why), RESULT_NONE);
    cr_assert_eq(adjudication_update(&d, &adj, BLACK, true, 0, 11, &why), RESULT_NONE);
    cr_assert_eq(adjudication_update(&d, &adj, RED, true, 0, 12, &why), RESULT_NONE);
    cr_assert_eq(adjudication_update(&d, &adj, BLACK, true, 3, 12, &why), RESULT_NONE);
    cr_assert_eq(adjudication_update(&d, &adj, RED, true, -3, 13, &why), RESULT_DRAW);
    cr_assert_eq(why, GAME_ADJUDICATED_DRAW);
}

Test(time_control, parse)
{
    TimeControl tc = { 0 };
    cr_assert_eq(time_control_parse(&tc, "10+0.1"), 0);
    cr_assert_eq(tc.base_ms, 10000);
    cr_assert_eq(tc.inc_ms, 100);
    cr_assert_eq(time_control_parse(&tc, "0.5"), 0);
    cr_assert_eq(tc.base_ms, 500);
    cr_assert_eq(tc.inc_ms, 0);
    cr_assert_eq(time_control_parse(&tc, "10+"), -1);
    cr_assert_eq(time_control_parse(&tc, "-1+1"), -1);
    cr_assert_eq(time_control_parse(&tc, "abc"), -1);
}

/* ---- player specs ---------------------------------------------------------- */

static int parse_words(PlayerSpec *s, const char *text, char *err, size_t errlen)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", text);
    char *words[16];
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, " ", &save); t && n < 16; t = strtok_r(NULL, " ", &save))
        words[n++] = t;
    return spec_parse(s, n, words, 16, err, errlen);
}

Test(spec, builtin_with_options)
{
    PlayerSpec s;
    char err[256];
    cr_assert_eq(parse_words(&s, "name=base option.NullR=2 option.Hash=8", err, sizeof err), 0, "%s", err);
    cr_assert_not(s.external);
    cr_assert_str_eq(s.name, "base");
    cr_assert_eq(s.params.NullR, 2);
    cr_assert_eq(s.hash_mb, 8);
}

Test(spec, preset_and_overrides)
{
    PlayerSpec s;
    char err[256];
    cr_assert_eq(parse_words(&s, "option.Hash=32 preset=sjaakii ranks=0", err, sizeof err), 0, "%s", err);
    cr_assert(s.external);
    cr_assert_str_eq(s.cmd, "/usr/games/sjaakii");
    cr_assert_str_eq(s.name, "sjaakii");
    cr_assert_eq(s.arg_count, 1);
    cr_assert_str_eq(s.args[0], "-uci");
    cr_assert(s.he_letters);
    cr_assert_not(s.ranks_from_one, "an explicit key must override the preset");
    cr_assert_eq(s.init_count, 1);
    cr_assert_eq(s.option_count, 1);
}

Test(spec, bad_specs_are_rejected_with_a_reason)
{
    static const struct {
        const char *words, *message;
    } cases[] = {
        { "name=x colour=red", "unknown key" },
        { "name=x option.NoSuchParam=3", "NoSuchParam" },
        { "option.NullR=99", "NullR" },
        { "params=/nonexistent/file.params", "/nonexistent/file.params" },
        { "cmd=/nonexistent/engine", "not an executable" },
        { "preset=fairy-stockfish proto=xboard", "proto" },
        { "preset=nosuch", "unknown preset" },
        { "preset=fairy-stockfish params=/dev/null", "built-in engine only" },
        { "name", "not key=value" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        PlayerSpec s;
        char err[256] = "";
        cr_assert_eq(parse_words(&s, cases[i].words, err, sizeof err), -1, "accepted '%s'",
                     cases[i].words);
        cr_assert(strstr(err, cases[i].message), "'%s': message '%s' lacks '%s'", cases[i].words,
                  err, cases[i].message);
    }
}

/* ---- opening books --------------------------------------------------------- */

static char *write_temp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/xqf-book-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

Test(book, reads_fens_moves_and_comments)
{
    char *path = write_temp("# a comment\n"
                            "\n"
                            START_FEN " moves h2e2 h9g7  # central cannon\n"
                            "rheakaehr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RHEAKAEHR w\n"
                            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1; id \"epd\";\n");
    char err[256];
    Book *b = book_load(path, err, sizeof err);
    unlink(path);
    cr_assert_not_null(b, "%s", err);
    cr_assert_eq(book_size(b), 3);
    const Opening *o = book_opening(b, 0);
    cr_assert_eq(o->count, 2);
    cr_assert_str_eq(o->fen, START_FEN);
    cr_assert_str_eq(book_opening(b, 1)->fen, START_FEN, "H/E letters are read");
    book_destroy(&b);
    cr_assert_null(b);
}

Test(book, bad_lines_name_the_line)
{
    static const struct {
        const char *text, *message;
    } cases[] = {
        { START_FEN "\n# ok\nrnbakabnr/9/9 w\n", ":3: bad FEN" },
        { START_FEN " moves h2e2 h2e2\n", ":1: move 2 'h2e2'" },
        { START_FEN " moves z9z9\n", ":1: move 1" },
        { "3k5/8R/9/9/9/9/9/9/9/R3K4 w - - 0 1 moves a0a9\n", "already over" },
        { "# nothing\n", "no openings" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *path = write_temp(cases[i].text);
        char err[256] = "";
        Book *b = book_load(path, err, sizeof err);
        unlink(path);
        cr_assert_null(b, "accepted case %zu", i);
        cr_assert(strstr(err, cases[i].message), "case %zu: '%s' lacks '%s'", i, err,
                  cases[i].message);
    }
    char err[256];
    cr_assert_null(book_load("/nonexistent/book", err, sizeof err));
}

Test(book, parses_text_in_memory)
{
    /* CRLF line ends, no final newline, a comment line: what a task's lines joined may hold. */
    char err[256];
    Book *b = book_parse("# first\r\n" START_FEN " moves h2e2\r\n\n"
                         "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
                         "task", err, sizeof err);
    cr_assert_not_null(b, "%s", err);
    cr_assert_eq(book_size(b), 2);
    cr_assert_eq(book_opening(b, 0)->count, 1);
    cr_assert_eq(book_opening(b, 1)->count, 0);
    book_destroy(&b);

    cr_assert_null(book_parse(START_FEN "\nrnbakabnr/9/9 w\n", "task", err, sizeof err));
    cr_assert(strstr(err, "task:2: bad FEN"), "'%s'", err);
    cr_assert_null(book_parse("", "task", err, sizeof err));
    cr_assert(strstr(err, "no openings"), "'%s'", err);
    static char long_line[5000];
    memset(long_line, ' ', sizeof long_line - 1);
    cr_assert_null(book_parse(long_line, "task", err, sizeof err));
    cr_assert(strstr(err, "task:1: line too long"), "'%s'", err);
}

Test(book, shipped_default_book_is_large_and_distinct)
{
    char err[256];
    Book *b = book_load(XQF_SOURCE_DIR "/ops/books/default.book", err, sizeof err);
    cr_assert_not_null(b, "%s", err);
    int n = book_size(b);
    cr_assert_geq(n, 1000);
    char (*fens)[FEN_MAX] = malloc(sizeof *fens * (size_t)n);
    for (int i = 0; i < n; i++)
        snprintf(fens[i], FEN_MAX, "%s", book_opening(b, i)->fen);
    qsort(fens, (size_t)n, sizeof *fens, (int (*)(const void *, const void *))strcmp);
    for (int i = 1; i < n; i++)
        cr_assert_str_neq(fens[i - 1], fens[i], "duplicate position %s", fens[i]);
    free(fens);
    book_destroy(&b);
}

/* ---- time odds --------------------------------------------------------------- */

/*
 * The side to move never answers: it loses on time with its own clock
 * left, which the forfeit names.  tc holds the first player's clock and
 * the second's (time odds); first_red says which colour the first has.
 */
static void silent_red_loses_with(const TimeControl *tc, bool first_red, double left)
{
    PlayerSpec rs, bs;
    fake_spec(&rs, "red", "silent", "0");
    fake_spec(&bs, "black", "good", "0");
    Player *red = player_new(&rs), *black = player_new(&bs);
    Opening o = { .count = 0 };
    snprintf(o.fen, sizeof o.fen, "%s", "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1");
    static const Adjudication none;
    GameRecord g;
    game_record_init(&g);
    TimeControl game_tc = time_control_game(tc, first_red);
    cr_assert_eq(game_play(red, black, &o, &game_tc, &none, NULL, &g), 0);
    cr_assert_eq(g.reason, GAME_TIME_FORFEIT, "%s", g.detail);
    /* "Red no bestmove after 0.305 s": its deadline was its clock (the margin 0) */
    const char *after = strstr(g.detail, "after ");
    double used = after ? strtod(after + 6, NULL) : 0;
    cr_assert(used >= left && used < left + 0.35, "%s (its clock: %.3f s)", g.detail, left);
    game_record_free(&g);
    player_destroy(&red);
    player_destroy(&black);
}

Test(time_control, each_side_plays_its_own_clock)
{
    const TimeControl odds = { .base_ms = 300, .inc_ms = 0, .base1_ms = 700, .inc1_ms = 10 };
    silent_red_loses_with(&odds, true, 0.3);     /* red is the first player */
    silent_red_loses_with(&odds, false, 0.7);    /* red is the second player */
    const TimeControl even = { .base_ms = 300 };
    silent_red_loses_with(&even, false, 0.3);    /* no odds: both the same */
    TimeControl g = time_control_game(&odds, false);
    cr_assert(g.base_ms == 700 && g.inc_ms == 10 && g.base1_ms == 300 && g.inc1_ms == 0);
    g = time_control_game(&even, false);
    cr_assert(g.base_ms == 300 && g.base1_ms == 0);
}

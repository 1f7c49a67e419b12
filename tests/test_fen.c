/*
 * Positions and moves as text (fen.h): FEN round trips, the accepted
 * variants, the rejection of malformed or impossible FENs (corpus
 * tests/data/bad_fens.txt) and of malformed or illegal move text (corpus
 * tests/data/bad_moves.txt).
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fen.h"
#include "movegen.h"

#define MUTUAL_CHECK_FEN "4k4/9/9/9/9/4c4/9/9/4C4/4K4 w - - 0 1"

/* ---- corpus files ------------------------------------------------------ */

/*
 * Corpus format: one entry per line; '#' lines are comments, except the
 * marker "#@game-only" that starts the second section; "@empty" is the
 * empty string; "\xHH" is a byte and "\\" a backslash.
 */
typedef struct {
    char *text;
    size_t len;       /* may contain NUL bytes */
    bool game_only;   /* after the #@game-only marker */
    int line;
} Entry;

typedef struct {
    Entry *items;
    int count;
} Corpus;

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static Corpus read_corpus(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    Corpus c = { NULL, 0 };
    bool game_only = false;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    for (int lineno = 1; (n = getline(&line, &cap, f)) >= 0; lineno++) {
        if (n > 0 && line[n - 1] == '\n')
            line[--n] = '\0';
        if (!strcmp(line, "#@game-only")) {
            game_only = true;
            continue;
        }
        if (line[0] == '#')
            continue;
        Entry e = { malloc((size_t)n + 1), 0, game_only, lineno };
        cr_assert_not_null(e.text);
        if (strcmp(line, "@empty") != 0) {
            for (ssize_t i = 0; i < n; i++) {
                if (line[i] == '\\' && line[i + 1] == '\\') {
                    e.text[e.len++] = '\\';
                    i++;
                } else if (line[i] == '\\' && line[i + 1] == 'x' && i + 3 < n
                           && hex_value(line[i + 2]) >= 0 && hex_value(line[i + 3]) >= 0) {
                    e.text[e.len++] = (char)(hex_value(line[i + 2]) * 16 + hex_value(line[i + 3]));
                    i += 3;
                } else {
                    e.text[e.len++] = line[i];
                }
            }
        }
        e.text[e.len] = '\0';
        c.items = realloc(c.items, sizeof *c.items * (size_t)(c.count + 1));
        cr_assert_not_null(c.items);
        c.items[c.count++] = e;
    }
    free(line);
    fclose(f);
    return c;
}

static void free_corpus(Corpus *c)
{
    for (int i = 0; i < c->count; i++)
        free(c->items[i].text);
    free(c->items);
}

/* ---- helpers ----------------------------------------------------------- */

static void parse_or_fail(Board *b, const char *fen, int mode)
{
    char err[256] = "";
    cr_assert_eq(fen_parse(b, fen, mode, err, sizeof err), 0, "cannot parse '%s': %s", fen, err);
}

/* Parses fen and expects fen_write to give `want` back. */
static void check_writes(const char *fen, int mode, const char *want)
{
    Board b;
    parse_or_fail(&b, fen, mode);
    char out[FEN_MAX];
    fen_write(&b, out);
    cr_expect_str_eq(out, want, "fen_write after parsing '%s'", fen);
    cr_expect_eq(board_key(&b), board_compute_key(&b));
}

/* A board with some history, as a caller's target would be. */
static void busy_board(Board *b)
{
    board_startpos(b);
    static const char *const moves[] = { "h2e2", "h9g7", "h0g2", "i9h9" };
    for (size_t i = 0; i < sizeof moves / sizeof moves[0]; i++) {
        Move m;
        char err[128];
        cr_assert_eq(move_parse(b, moves[i], &m, err, sizeof err), 0, "%s", err);
        board_make(b, m);
    }
}

/* fen must be refused with a message, leaving *target bit-for-bit as it was. */
static void expect_rejected(const char *fen, int mode, int line)
{
    static Board target, copy; /* static: a Board is ~10 KB */
    busy_board(&target);
    memcpy(&copy, &target, sizeof copy);
    char err[256];
    memset(err, 0, sizeof err);
    int rc = fen_parse(&target, fen, mode, err, sizeof err);
    cr_expect_eq(rc, -1, "line %d: '%s' accepted (mode %d)", line, fen, mode);
    cr_expect_neq(err[0], '\0', "line %d: '%s' rejected without a message", line, fen);
    cr_expect(memcmp(&target, &copy, sizeof copy) == 0, "line %d: '%s' modified the board", line, fen);
}

/* ---- round trips and variants ------------------------------------------ */

Test(fen, start_position_round_trip)
{
    check_writes(START_FEN, FEN_GAME, START_FEN);
    Board parsed, built;
    parse_or_fail(&parsed, START_FEN, FEN_GAME);
    board_startpos(&built);
    cr_expect(memcmp(parsed.squares, built.squares, sizeof built.squares) == 0);
    cr_expect_eq(board_key(&parsed), board_key(&built));
    cr_expect_eq(parsed.side, RED);
    cr_expect_eq(board_state(&parsed)->rule60, 0);
    cr_expect_eq(parsed.fullmove, 1);
}

/* Every distinct FEN of the reference table but the mutual check round-trips in FEN_GAME. */
Test(fen, reference_table_round_trips)
{
    FILE *f = fopen(XQF_DATA "/perft.tsv", "r");
    cr_assert_not_null(f);
    char line[512], last[512] = "";
    int distinct = 0;
    cr_assert_not_null(fgets(line, sizeof line, f));
    while (fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        if (!tab)
            continue;
        *tab = '\0';
        if (!strcmp(line, last))
            continue;
        snprintf(last, sizeof last, "%s", line);
        if (!strcmp(line, MUTUAL_CHECK_FEN))
            continue;
        check_writes(line, FEN_GAME, line);
        distinct++;
    }
    fclose(f);
    cr_expect_geq(distinct, 30, "only %d FENs in the table", distinct);
}

/* Side, clocks and full-move number survive, whatever the side to move. */
Test(fen, fields_round_trip)
{
    check_writes("4k4/9/9/9/4R4/9/9/9/9/4K4 b - - 0 1", FEN_GAME, "4k4/9/9/9/4R4/9/9/9/9/4K4 b - - 0 1");
    check_writes("3k5/9/9/9/9/9/9/9/9/4K4 w - - 117 200", FEN_GAME, "3k5/9/9/9/9/9/9/9/9/4K4 w - - 117 200");
    check_writes(MUTUAL_CHECK_FEN, FEN_ANALYSIS, MUTUAL_CHECK_FEN);
}

Test(fen, red_to_move_as_r)
{
    check_writes("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR r - - 0 1", FEN_GAME, START_FEN);
}

Test(fen, elephant_and_horse_letters)
{
    check_writes("rheakaehr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RHEAKAEHR w - - 0 1", FEN_GAME, START_FEN);
    check_writes("rnbakaehr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RHBAKAENR w - - 0 1", FEN_GAME, START_FEN);
}

Test(fen, cut_after_side_field)
{
    check_writes("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w", FEN_GAME, START_FEN);
    check_writes("4k4/9/9/9/4R4/9/9/9/9/4K4 b", FEN_GAME, "4k4/9/9/9/4R4/9/9/9/9/4K4 b - - 0 1");
}

/* The halfmove clock read from a FEN is the state's rule60 counter. */
Test(fen, halfmove_clock_is_rule60)
{
    Board b;
    parse_or_fail(&b, "3k5/9/9/9/9/9/9/9/9/R3K4 w - - 119 80", FEN_GAME);
    cr_expect_eq(board_state(&b)->rule60, 119);
    cr_expect_eq(b.fullmove, 80);
    cr_expect_eq(b.top, 0);
    cr_expect_eq(b.plies, 0);
}

/* ---- rejected FENs ----------------------------------------------------- */

/* Every corpus entry is refused with a message and leaves the target untouched. */
Test(fen, bad_fen_corpus)
{
    Corpus c = read_corpus(XQF_DATA "/bad_fens.txt");
    cr_assert_geq(c.count, 40, "the corpus has only %d entries", c.count);
    int game_only = 0;
    for (int i = 0; i < c.count; i++) {
        const Entry *e = &c.items[i];
        cr_assert_eq(strlen(e->text), e->len, "line %d: a FEN cannot hold NUL bytes", e->line);
        expect_rejected(e->text, FEN_GAME, e->line);
        if (!e->game_only) {
            expect_rejected(e->text, FEN_ANALYSIS, e->line);
        } else {
            Board b;
            parse_or_fail(&b, e->text, FEN_ANALYSIS);
            game_only++;
        }
    }
    cr_expect_geq(game_only, 3);
    free_corpus(&c);
}

/* Messages name the problem. */
Test(fen, messages_name_the_problem)
{
    static const struct {
        const char *fen, *word;
    } cases[] = {
        { "4k4/9/9/9/9/9/9/9/9/2K6 w - - 0 1", "king" },
        { "4k4/9/9/9/9/9/9/9/9/3KA4 w - - 0 1", "advisor" },
        { "4k4/9/9/9/2B6/9/9/9/9/3K5 w - - 0 1", "elephant" },
        { "4k4/9/9/9/9/9/1P7/9/9/3K5 w - - 0 1", "pawn" },
        { "4k4/9/9/9/9/9/9/9/9/RR1K4R w - - 0 1", "rook" },
        { "4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1", "face" },
        { "4k4/9/9/9/9/9/9/9/9/3KR4 w - - 0 1", "check" },
        { "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR x - - 0 1", "side" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Board b;
        char err[256] = "";
        cr_expect_eq(fen_parse(&b, cases[i].fen, FEN_GAME, err, sizeof err), -1, "%s", cases[i].fen);
        cr_expect_not_null(strstr(err, cases[i].word), "'%s': message '%s' does not say '%s'",
                           cases[i].fen, err, cases[i].word);
    }
}

/* A short error buffer gets a truncated, terminated message and no overflow. */
Test(fen, short_error_buffer)
{
    for (size_t len = 1; len <= 8; len++) {
        char *err = malloc(len);
        cr_assert_not_null(err);
        memset(err, 'x', len);
        Board b;
        cr_expect_eq(fen_parse(&b, "4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1", FEN_GAME, err, len), -1);
        cr_expect_lt(strnlen(err, len), len, "message not terminated in a %zu-byte buffer", len);
        free(err);
    }
}

/* ---- move text --------------------------------------------------------- */

Test(fen, move_and_square_text)
{
    char text[8];
    move_text(move_make(sq_make(7, 2), sq_make(4, 2)), text);
    cr_expect_str_eq(text, "h2e2");
    move_text(move_make(sq_make(0, 9), sq_make(8, 0)), text);
    cr_expect_str_eq(text, "a9i0");
    square_text(sq_make(4, 0), text);
    cr_expect_str_eq(text, "e0");
    square_text(sq_make(8, 9), text);
    cr_expect_str_eq(text, "i9");
}

/* Every corpus entry is refused by move_parse with a message, and the board is untouched. */
Test(fen, bad_move_corpus)
{
    Corpus c = read_corpus(XQF_DATA "/bad_moves.txt");
    cr_assert_geq(c.count, 30, "the corpus has only %d entries", c.count);
    Board b, copy;
    board_startpos(&b);
    memcpy(&copy, &b, sizeof copy);
    for (int i = 0; i < c.count; i++) {
        const Entry *e = &c.items[i];
        Move m = MOVE_NONE;
        char err[256] = "";
        cr_expect_eq(move_parse(&b, e->text, &m, err, sizeof err), -1, "line %d: '%s' accepted", e->line,
                     e->text);
        cr_expect_neq(err[0], '\0', "line %d: '%s' rejected without a message", e->line, e->text);
        cr_expect(memcmp(&b, &copy, sizeof copy) == 0, "line %d: '%s' modified the board", e->line, e->text);
    }
    free_corpus(&c);
}

Test(fen, legal_moves_accepted)
{
    static const char *const legal[] = {
        "h2e2", "b2e2", "h2h9", "b2b9", "h2h3", "b2b1", "b0c2", "b0a2", "h0g2", "h0i2", "c0e2", "c0a2",
        "g0e2", "g0i2", "d0e1", "f0e1", "e0e1", "a0a1", "a0a2", "i0i2", "a3a4", "c3c4", "e3e4", "i3i4",
    };
    Board b;
    board_startpos(&b);
    for (size_t i = 0; i < sizeof legal / sizeof legal[0]; i++) {
        Move m = MOVE_NONE;
        char err[256] = "";
        cr_expect_eq(move_parse(&b, legal[i], &m, err, sizeof err), 0, "%s refused: %s", legal[i], err);
        char back[8];
        move_text(m, back);
        cr_expect_str_eq(back, legal[i]);
    }
}

/* Exhaustively: move_parse accepts exactly the generator's legal moves. */
static void check_parse_matches_movegen(const char *fen)
{
    Board b;
    parse_or_fail(&b, fen, FEN_GAME);
    MoveList legal;
    movegen_legal(&b, &legal);
    int accepted = 0;
    for (int from = 0; from < SQUARES; from++) {
        for (int to = 0; to < SQUARES; to++) {
            char text[8];
            Move want = move_make(from, to);
            move_text(want, text);
            Move m = MOVE_NONE;
            char err[128] = "";
            bool is_legal = false;
            for (int i = 0; i < legal.count; i++)
                is_legal |= legal.moves[i] == want;
            int rc = move_parse(&b, text, &m, err, sizeof err);
            if (is_legal) {
                cr_expect_eq(rc, 0, "%s: legal %s refused: %s", fen, text, err);
                cr_expect_eq(m, want);
                accepted++;
            } else {
                cr_expect_eq(rc, -1, "%s: illegal %s accepted", fen, text);
                cr_expect_neq(err[0], '\0');
            }
        }
    }
    cr_expect_eq(accepted, legal.count);
}

Test(fen, parse_accepts_exactly_legal_moves)
{
    check_parse_matches_movegen(START_FEN);
    check_parse_matches_movegen("1rbak4/c4n2r/2na5/2N6/p1b3P1p/3C4P/P1P1P2C1/N7B/4A3R/R1BA1K3 w - - 5 31");
    /* in check: only the evasions */
    check_parse_matches_movegen("3k5/9/9/9/9/9/9/9/9/4Kr3 w - - 0 1");
}

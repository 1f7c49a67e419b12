/*
 * Books as a run's inputs: our format, FEN, EPD and PGN cut at a ply
 * (book_import), every bad opening named, duplicate positions dropped,
 * the balance read from the lines' scores; and the opening order a run
 * walks (sched_book_order): each opening once before any again.
 */
#define _GNU_SOURCE    /* mkstemps */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "book.h"
#include "fen.h"
#include "sched.h"

#define START "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w"

/* Writes text to a new temporary file ending in suffix (".epd"); returns its path (static, 4 in turn). */
static const char *write_temp(const char *suffix, const char *text)
{
    static char paths[4][64];
    static int next;
    char *path = paths[next++ % 4];
    snprintf(path, 64, "/tmp/xqf-book-XXXXXX%s", suffix);
    int fd = mkstemps(path, (int)strlen(suffix));
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

/* Opening i of b as a book line. */
static const char *line_of(const Book *b, int i)
{
    static char text[BOOK_TEXT_MAX];
    book_opening_text(b, i, text);
    return text;
}

Test(book, format_by_extension_or_name)
{
    cr_expect_eq(book_format_of("a/b.epd"), BOOK_FORMAT_EPD);
    cr_expect_eq(book_format_of("games.pgn"), BOOK_FORMAT_PGN);
    cr_expect_eq(book_format_of("x.fen"), BOOK_FORMAT_FEN);
    cr_expect_eq(book_format_of("default.book"), BOOK_FORMAT_BOOK);
    cr_expect_eq(book_format_of("dir.pgn/openings"), BOOK_FORMAT_BOOK);
    BookFormat f;
    cr_expect_eq(book_format_named("pgn", &f), 0);
    cr_expect_eq(f, BOOK_FORMAT_PGN);
    cr_expect_eq(book_format_named("xml", &f), -1);
    cr_expect_str_eq(book_format_name(BOOK_FORMAT_EPD), "epd");
}

Test(book, ours_with_duplicates_and_scores)
{
    /* the third line reaches the second's position by another move order; the fourth repeats the first */
    const char *path = write_temp(".book", "# a comment\n"
                                           START " moves h2e2 # h2e2 (+12)\n"
                                           START " moves h2e2 h9g7 b2c2 # (-40)\n"
                                           "\n"
                                           START " moves b2c2 h9g7 h2e2 # (+7)\n"
                                           START " moves h2e2\n");
    BookReport rep;
    char err[512];
    Book *b = book_import(path, BOOK_FORMAT_BOOK, 0, &rep, err, sizeof err);
    cr_assert(b, "%s", err);
    cr_expect_eq(book_size(b), 2);
    cr_expect_eq(rep.read, 4);
    cr_expect_eq(rep.duplicates, 2);
    cr_expect_eq(rep.bad, 0);
    /* the kept openings' scores: 12 and 40 (the dropped ones do not count) */
    cr_expect_eq(rep.scored, 2);
    cr_expect_eq(rep.score_min, 12);
    cr_expect_eq(rep.score_max, 40);
    cr_expect_float_eq(rep.score_mean, 26.0, 1e-9);
    cr_expect_eq(strlen(rep.sha256), 64);
    cr_expect(strstr(line_of(b, 1), " moves h2e2 h9g7 b2c2"));
    book_destroy(&b);
    book_report_free(&rep);
    unlink(path);
}

Test(book, fen_lines)
{
    const char *path = write_temp(".fen", START " - - 0 1\n"
                                          "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 0 1\n");
    BookReport rep;
    char err[512];
    Book *b = book_import(path, book_format_of(path), 0, &rep, err, sizeof err);
    cr_assert(b, "%s", err);
    cr_expect_eq(book_size(b), 2);
    cr_expect_eq(book_opening(b, 1)->count, 0);
    cr_expect_eq(rep.scored, 0);
    book_destroy(&b);
    book_report_free(&rep);
    unlink(path);
}

Test(book, epd_operations_ignored_but_ce)
{
    const char *path = write_temp(".epd", START " - - bm h2e2; ce 35; id \"start\";\n"
                                          "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - "
                                          "id \"central cannon\"; ce -15;\n");
    BookReport rep;
    char err[512];
    Book *b = book_import(path, book_format_of(path), 0, &rep, err, sizeof err);
    cr_assert(b, "%s", err);
    cr_expect_eq(book_size(b), 2);
    cr_expect_eq(rep.scored, 2);
    cr_expect_eq(rep.score_min, 15);
    cr_expect_eq(rep.score_max, 35);
    /* the operations are gone from what the run stores */
    cr_expect_null(strchr(line_of(b, 0), ';'));
    book_destroy(&b);
    book_report_free(&rep);
    unlink(path);
}

Test(book, pgn_cut_at_a_ply)
{
    const char *path = write_temp(".pgn", "[Event \"a\"]\n[White \"x\"]\n[Black \"y\"]\n\n"
                                          "1. h2e2 h9g7 2. h0g2 i9h9 1-0\n\n"
                                          "[White \"x\"]\n[Black \"y\"]\n\n"
                                          "1. b2e2 1/2-1/2\n\n"
                                          "[White \"x\"]\n[Black \"y\"]\n\n"
                                          "1. c3c4 b9c7 2. b0c2 0-1\n");
    BookReport rep;
    char err[512];
    Book *b = book_import(path, BOOK_FORMAT_PGN, 2, &rep, err, sizeof err);
    cr_assert(b, "%s", err);
    /* the second game has one ply: too short for two, skipped and counted */
    cr_expect_eq(book_size(b), 2);
    cr_expect_eq(rep.short_games, 1);
    cr_expect_eq(book_opening(b, 0)->count, 2);
    cr_expect(strstr(line_of(b, 0), " moves h2e2 h9g7"), "%s", line_of(b, 0));
    cr_expect(strstr(line_of(b, 1), " moves c3c4 b9c7"), "%s", line_of(b, 1));
    book_destroy(&b);
    book_report_free(&rep);
    /* cut at the start: both long games start from the same position, one opening */
    b = book_import(path, BOOK_FORMAT_PGN, 0, &rep, err, sizeof err);
    cr_assert(b, "%s", err);
    cr_expect_eq(book_size(b), 1);
    cr_expect_eq(rep.duplicates, 2);
    book_destroy(&b);
    book_report_free(&rep);
    unlink(path);
}

Test(book, every_bad_opening_named)
{
    const char *path = write_temp(".book", START "\n"
                                           "rnbakabnr/9/1c5c1 w\n"
                                           START " moves h2e2\n"
                                           START " moves a2a5\n"
                                           START " moves h2e2 h2e2\n");
    BookReport rep;
    char err[512];
    Book *b = book_import(path, BOOK_FORMAT_BOOK, 0, &rep, err, sizeof err);
    cr_assert_null(b);
    cr_expect_eq(rep.bad, 3);
    char where[128];
    snprintf(where, sizeof where, "%s:2: bad FEN", path);
    cr_expect(strstr(rep.problems, where), "%s", rep.problems);
    snprintf(where, sizeof where, "%s:4: move 1 'a2a5'", path);
    cr_expect(strstr(rep.problems, where), "%s", rep.problems);
    snprintf(where, sizeof where, "%s:5: move 2 'h2e2'", path);
    cr_expect(strstr(rep.problems, where), "%s", rep.problems);
    cr_expect(strstr(err, "3 bad openings"), "%s", err);
    book_report_free(&rep);
    book_report_free(&rep);
    unlink(path);
}

Test(book, bad_pgn_named)
{
    const char *path = write_temp(".pgn", "[White \"x\"]\n\n1. h2e2 1-0\n\n[White \"x\"]\n\n1. a2a5 1-0\n");
    BookReport rep;
    char err[512];
    Book *b = book_import(path, BOOK_FORMAT_PGN, 1, &rep, err, sizeof err);
    cr_assert_null(b);
    cr_expect_eq(rep.bad, 1);
    cr_expect(strstr(rep.problems, "game at line 5"), "%s", rep.problems);
    book_report_free(&rep);
    unlink(path);
}

/* A run's pairs walk the order: fewer pairs than openings repeat none; every opening comes before any repeat. */
Test(book, each_opening_once_per_run)
{
    enum { N = 1000 };
    static int perm[N], other[N], used[N];
    sched_book_order(42, perm, N);
    for (int64_t p = 0; p < N - 1; p++)
        cr_assert_eq(used[sched_opening(perm, N, p)]++, 0, "pair %lld repeats an opening", (long long)p);
    used[sched_opening(perm, N, N - 1)]++;
    /* the book exhausted: the order starts again, each opening once more */
    for (int64_t p = N; p < 2 * N; p++)
        cr_assert_eq(used[sched_opening(perm, N, p)]++, 1);
    /* another seed, another order; the same seed, the same one */
    sched_book_order(43, other, N);
    cr_expect_neq(memcmp(perm, other, sizeof perm), 0);
    sched_book_order(42, other, N);
    cr_expect_eq(memcmp(perm, other, sizeof perm), 0);
}

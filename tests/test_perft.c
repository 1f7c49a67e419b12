/*
 * Move-generator correctness against the reference perft table
 * (XQF_DATA/perft.tsv: a header line, then fen<TAB>depth<TAB>nodes).
 *
 * The same source builds two suites: `perft` (compiled with
 * PERFT_MAX_NODES=5000000, the fast rows, run under the sanitizers too)
 * and `perft_deep` (every row, Release only).
 */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fen.h"
#include "movegen.h"
#include "perft.h"

#ifndef PERFT_MAX_NODES
#define PERFT_MAX_NODES UINT64_MAX
#endif

/* Both sides in check (a red and a black cannon screening each other). */
#define MUTUAL_CHECK_FEN "4k4/9/9/9/9/4c4/9/9/4C4/4K4 w - - 0 1"

typedef struct {
    char fen[256];
    int depth;
    uint64_t nodes;
} PerftRow;

enum { MAX_ROWS = 512 };

/* Reads the whole reference table; fails the test on any malformed line. */
static int read_table(PerftRow *rows)
{
    const char *path = XQF_DATA "/perft.tsv";
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);
    char line[512];
    cr_assert_not_null(fgets(line, sizeof line, f), "%s is empty", path);
    cr_assert(strncmp(line, "fen\t", 4) == 0, "%s: unexpected header %s", path, line);
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '\n' || line[0] == '\0')
            continue;
        cr_assert_lt(n, MAX_ROWS, "%s has too many rows", path);
        char *tab1 = strchr(line, '\t');
        char *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
        cr_assert(tab1 && tab2, "%s: malformed line %s", path, line);
        *tab1 = '\0';
        cr_assert_lt(strlen(line), sizeof rows[n].fen);
        strcpy(rows[n].fen, line);
        char *end;
        rows[n].depth = (int)strtol(tab1 + 1, &end, 10);
        cr_assert(end == tab2 && rows[n].depth >= 1, "%s: bad depth in %s", path, tab1 + 1);
        rows[n].nodes = strtoull(tab2 + 1, &end, 10);
        cr_assert(end != tab2 + 1 && (*end == '\n' || *end == '\0' || *end == '\r'),
                  "%s: bad node count in %s", path, tab2 + 1);
        n++;
    }
    fclose(f);
    return n;
}

static void parse_or_fail(Board *b, const char *fen, int mode)
{
    char err[256] = "";
    cr_assert_eq(fen_parse(b, fen, mode, err, sizeof err), 0, "cannot parse %s: %s", fen, err);
}

/* Every row (up to PERFT_MAX_NODES) gives the reference count; perft leaves the board as it was. */
Test(perft, reference_table)
{
    static PerftRow rows[MAX_ROWS];
    int n = read_table(rows);
    cr_assert_geq(n, 100, "the reference table has only %d rows", n);
    int checked = 0;
    bool saw_mutual_check = false;
    for (int i = 0; i < n; i++) {
        if (rows[i].nodes > (uint64_t)PERFT_MAX_NODES)
            continue;
        Board b;
        parse_or_fail(&b, rows[i].fen, FEN_ANALYSIS);
        saw_mutual_check |= strcmp(rows[i].fen, MUTUAL_CHECK_FEN) == 0;
        uint64_t key = board_key(&b);
        uint64_t got = perft(&b, rows[i].depth);
        cr_expect_eq(got, rows[i].nodes, "perft(%s, %d) = %" PRIu64 ", reference %" PRIu64,
                     rows[i].fen, rows[i].depth, got, rows[i].nodes);
        cr_expect_eq(board_key(&b), key, "perft changed the position %s", rows[i].fen);
        cr_expect_eq(b.top, 0);
        checked++;
    }
    cr_assert_geq(checked, 100, "only %d rows were checked", checked);
    cr_assert(saw_mutual_check, "the mutual-check row is missing from the table");
}

/* The mutual-check position exists only for analysis: FEN_GAME refuses it. */
Test(perft, mutual_check_needs_analysis_mode)
{
    Board b;
    char err[256] = "";
    cr_expect_neq(fen_parse(&b, MUTUAL_CHECK_FEN, FEN_GAME, err, sizeof err), 0);
    cr_expect_neq(err[0], '\0');
    parse_or_fail(&b, MUTUAL_CHECK_FEN, FEN_ANALYSIS);
    cr_expect(board_in_check(&b));
    cr_expect(board_king_attacked(&b, BLACK));
    /* Red may take the black king: that capture is one of its 11 moves. */
    cr_expect_eq(perft(&b, 1), 11);
}

Test(perft, depth_zero_is_one)
{
    Board b;
    board_startpos(&b);
    cr_expect_eq(perft(&b, 0), 1);
}

/* Runs perft_divide into a memory buffer; returns its text (caller frees). */
static char *divide_text(Board *b, int depth, uint64_t *total)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cr_assert_not_null(out);
    *total = perft_divide(b, depth, out);
    fclose(out);
    return text;
}

/* Per-move lines are the legal moves, once each; they sum to the total, printed last. */
static void check_divide(const char *fen, int depth)
{
    Board b;
    parse_or_fail(&b, fen, FEN_ANALYSIS);
    uint64_t total;
    char *text = divide_text(&b, depth, &total);
    cr_assert_eq(total, perft(&b, depth), "%s: divide total differs from perft", fen);

    MoveList legal;
    movegen_legal(&b, &legal);
    bool seen[MAX_MOVES] = { false };
    uint64_t sum = 0;
    int lines = 0;
    const char *last = NULL;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        last = line;
        if (strncmp(line, "Nodes searched: ", 16) == 0)
            continue;
        char move[8];
        uint64_t n;
        cr_assert_eq(sscanf(line, "%7[a-i0-9]: %" SCNu64, move, &n), 2, "bad divide line '%s'", line);
        Move m;
        char err[128];
        cr_assert_eq(move_parse(&b, move, &m, err, sizeof err), 0, "divide lists %s: %s", move, err);
        int index = -1;
        for (int i = 0; i < legal.count; i++)
            if (legal.moves[i] == m)
                index = i;
        cr_assert_geq(index, 0);
        cr_assert_not(seen[index], "divide lists %s twice", move);
        seen[index] = true;
        board_make(&b, m);
        cr_expect_eq(n, perft(&b, depth - 1), "divide count of %s", move);
        board_unmake(&b);
        sum += n;
        lines++;
    }
    cr_expect_eq(lines, legal.count, "%s: %d divide lines for %d legal moves", fen, lines, legal.count);
    cr_expect_eq(sum, total, "%s: divide lines sum to %" PRIu64 ", total %" PRIu64, fen, sum, total);
    char want[64];
    snprintf(want, sizeof want, "Nodes searched: %" PRIu64, total);
    cr_assert_not_null(last);
    cr_expect_str_eq(last, want, "last divide line");
    free(text);
}

Test(perft, divide_startpos)
{
    check_divide(START_FEN, 3);
}

Test(perft, divide_middlegame)
{
    check_divide("1rbak4/c4n2r/2na5/2N6/p1b3P1p/3C4P/P1P1P2C1/N7B/4A3R/R1BA1K3 w - - 5 31", 2);
}

/* No legal move: no move lines, total 0. */
Test(perft, divide_without_moves)
{
    check_divide("3k5/4P4/9/9/9/9/9/9/9/4K4 b - - 0 1", 2);
}

/*
 * The board and the move generators (board.h, movegen.h):
 * - incremental state (Zobrist key, piece lists, line bits) against a
 *   recomputation, over long random games, make/unmake and null moves;
 * - every generator (and board_gives_check, board_square_attacked) against
 *   an independent definition built from movegen_pseudo + board_make +
 *   board_king_attacked;
 * - the piece rules on small hand positions with their exact move sets;
 * - games longer than the state stack.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fen.h"
#include "movegen.h"
#include "rules.h"

/* ---- helpers ----------------------------------------------------------- */

static void parse_or_fail(Board *b, const char *fen)
{
    char err[256] = "";
    cr_assert_eq(fen_parse(b, fen, FEN_GAME, err, sizeof err), 0, "cannot parse '%s': %s", fen, err);
}

static Move parse_move(Board *b, const char *text)
{
    Move m = MOVE_NONE;
    char err[256] = "";
    cr_assert_eq(move_parse(b, text, &m, err, sizeof err), 0, "move %s: %s", text, err);
    return m;
}

static int square(const char *name)
{
    return sq_make(name[0] - 'a', name[1] - '0');
}

/* Fixed-seed xorshift64*, so every run plays the same games. */
static uint64_t rng_state = 0x243f6a8885a308d3ULL;
static uint32_t rng_next(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545f4914f6cdd1dULL) >> 32);
}

/* Key, lists, counts, line bits and the check flag agree with the squares. */
static void check_invariants(const Board *b, const char *where)
{
    cr_assert_eq(board_key(b), board_compute_key(b), "%s: incremental key differs from a fresh one", where);
    uint8_t pieces[2][PIECE_TYPES] = { { 0 } };
    uint16_t ranks[RANKS] = { 0 }, files[FILES] = { 0 };
    uint64_t structure = 0, attack[2] = { 0, 0 };
    for (int sq = 0; sq < SQUARES; sq++) {
        int p = b->squares[sq];
        if (!p)
            continue;
        int c = piece_color(p), t = piece_type(p);
        bool attacker = t == ROOK || t == HORSE || t == CANNON;
        if (!attacker)
            structure ^= zobrist_piece[p][sq];
        if (attacker || t == KING)
            attack[c] ^= zobrist_piece[p][sq];
        pieces[c][t]++;
        ranks[sq_rank(sq)] |= (uint16_t)(1u << sq_file(sq));
        files[sq_file(sq)] |= (uint16_t)(1u << sq_rank(sq));
        cr_assert_lt(b->slot[sq], b->count[c][t], "%s: bad slot", where);
        cr_assert_eq(b->list[c][t][b->slot[sq]], sq, "%s: piece list out of step", where);
    }
    cr_assert(memcmp(pieces, b->count, sizeof pieces) == 0, "%s: piece counts out of step", where);
    cr_assert(memcmp(ranks, b->rank_bits, sizeof ranks) == 0, "%s: rank bits out of step", where);
    cr_assert(memcmp(files, b->file_bits, sizeof files) == 0, "%s: file bits out of step", where);
    cr_assert_eq(board_in_check(b), board_king_attacked(b, b->side), "%s: check flag wrong", where);
    cr_assert_eq(b->structure_key, structure, "%s: structure key out of step", where);
    cr_assert(b->attack_key[RED] == attack[RED] && b->attack_key[BLACK] == attack[BLACK],
              "%s: attacking pieces' keys out of step", where);
}

/* The parts of a Board that make/unmake must restore. */
typedef struct {
    uint8_t squares[SQUARES];
    uint8_t count[2][PIECE_TYPES];
    uint16_t rank_bits[RANKS], file_bits[FILES];
    int side, fullmove, plies, top;
    uint64_t key;
    State state;
} Snapshot;

static Snapshot snapshot(const Board *b)
{
    Snapshot s;
    memset(&s, 0, sizeof s);
    memcpy(s.squares, b->squares, sizeof s.squares);
    memcpy(s.count, b->count, sizeof s.count);
    memcpy(s.rank_bits, b->rank_bits, sizeof s.rank_bits);
    memcpy(s.file_bits, b->file_bits, sizeof s.file_bits);
    s.side = b->side;
    s.fullmove = b->fullmove;
    s.plies = b->plies;
    s.top = b->top;
    s.key = board_key(b);
    s.state = *board_state(b);
    return s;
}

static void expect_same(const Snapshot *a, const Snapshot *b, const char *where)
{
    cr_expect(memcmp(a->squares, b->squares, sizeof a->squares) == 0, "%s: squares differ", where);
    cr_expect(memcmp(a->count, b->count, sizeof a->count) == 0, "%s: counts differ", where);
    cr_expect(memcmp(a->rank_bits, b->rank_bits, sizeof a->rank_bits) == 0, "%s: rank bits differ", where);
    cr_expect(memcmp(a->file_bits, b->file_bits, sizeof a->file_bits) == 0, "%s: file bits differ", where);
    cr_expect_eq(a->side, b->side, "%s: side", where);
    cr_expect_eq(a->fullmove, b->fullmove, "%s: fullmove", where);
    cr_expect_eq(a->plies, b->plies, "%s: plies", where);
    cr_expect_eq(a->top, b->top, "%s: top", where);
    cr_expect_eq(a->key, b->key, "%s: key", where);
    cr_expect_eq(a->state.rule60, b->state.rule60, "%s: rule60", where);
    cr_expect_eq(a->state.check, b->state.check, "%s: check flag", where);
}

static bool contains(const MoveList *l, Move m)
{
    for (int i = 0; i < l->count; i++)
        if (l->moves[i] == m)
            return true;
    return false;
}

/* Same moves, each once. */
static void expect_same_set(const MoveList *got, const MoveList *want, const char *what, const char *fen)
{
    for (int i = 0; i < got->count; i++) {
        char text[8];
        move_text(got->moves[i], text);
        cr_expect(contains(want, got->moves[i]), "%s in %s: extra move %s", what, fen, text);
        for (int j = 0; j < i; j++)
            cr_expect_neq(got->moves[i], got->moves[j], "%s in %s: %s twice", what, fen, text);
    }
    for (int i = 0; i < want->count; i++) {
        char text[8];
        move_text(want->moves[i], text);
        cr_expect(contains(got, want->moves[i]), "%s in %s: missing move %s", what, fen, text);
    }
    cr_expect_eq(got->count, want->count, "%s in %s: %d moves, expected %d", what, fen, got->count, want->count);
}

/*
 * board_square_attacked against its definition: a piece of `by` attacks sq
 * when it could capture an enemy piece standing there (the square is
 * filled with, or turned into, an enemy advisor for the question; sliders
 * see the same lines, and no leg or eye is ever sq itself).
 */
static bool attacked_by_definition(const Board *b0, int sq, int by)
{
    static Board b;
    b = *b0;
    b.side = by;
    int p = b.squares[sq];
    if (!p) {
        b.rank_bits[sq_rank(sq)] |= (uint16_t)(1u << sq_file(sq));
        b.file_bits[sq_file(sq)] |= (uint16_t)(1u << sq_rank(sq));
    }
    b.squares[sq] = (uint8_t)make_piece(by ^ 1, ADVISOR);
    MoveList l;
    l.count = 0;
    movegen_pseudo(&b, &l, GEN_CAPTURES);
    for (int i = 0; i < l.count; i++)
        if (move_to(l.moves[i]) == sq && move_from(l.moves[i]) != sq)
            return true;
    return false;
}

static void check_square_attacks(const Board *b)
{
    for (int sq = 0; sq < SQUARES; sq++)
        for (int by = RED; by <= BLACK; by++) {
            char fen[FEN_MAX], name[4];
            bool want = attacked_by_definition(b, sq, by);
            if (board_square_attacked(b, sq, by) != want) {
                fen_write(b, fen);
                square_text(sq, name);
                cr_expect_fail("%s: board_square_attacked(%s, %s) should be %d", fen, name, by == RED ? "Red" : "Black",
                               want);
            }
        }
}

/*
 * Checks every generator in the position against definitions that only use
 * movegen_pseudo, board_make/unmake and board_king_attacked.
 */
static void check_generators(Board *b)
{
    char fen[FEN_MAX];
    fen_write(b, fen);
    int us = b->side;

    MoveList all, caps, quiets;
    all.count = caps.count = quiets.count = 0;
    movegen_pseudo(b, &all, GEN_ALL);
    movegen_pseudo(b, &caps, GEN_CAPTURES);
    movegen_pseudo(b, &quiets, GEN_QUIETS);
    MoveList merged = caps;
    for (int i = 0; i < quiets.count; i++)
        merged.moves[merged.count++] = quiets.moves[i];
    expect_same_set(&merged, &all, "captures + quiets vs all", fen);

    MoveList legal, legal_caps, quiet_checks;
    legal.count = legal_caps.count = quiet_checks.count = 0;
    for (int i = 0; i < all.count; i++) {
        Move m = all.moves[i];
        int from = move_from(m), to = move_to(m);
        cr_assert_eq(piece_color(b->squares[from]), us);
        cr_assert(b->squares[from] != EMPTY);
        cr_assert(b->squares[to] == EMPTY || piece_color(b->squares[to]) != us);
        bool capture = b->squares[to] != EMPTY;
        board_make(b, m);
        bool ok = !board_king_attacked(b, us);
        bool check = board_king_attacked(b, us ^ 1);
        board_unmake(b);
        if (!ok) {
            cr_expect_not(movegen_is_legal(b, m), "%s: movegen_is_legal accepts an illegal move", fen);
            continue;
        }
        legal.moves[legal.count++] = m;
        if (capture)
            legal_caps.moves[legal_caps.count++] = m;
        else if (check)
            quiet_checks.moves[quiet_checks.count++] = m;
        cr_expect(movegen_is_legal(b, m), "%s: movegen_is_legal refuses a legal move", fen);
        cr_expect_eq(board_gives_check(b, m), check, "%s: board_gives_check wrong", fen);
    }

    MoveList got;
    movegen_legal(b, &got);
    expect_same_set(&got, &legal, "movegen_legal", fen);
    cr_expect_eq(movegen_count_legal(b), legal.count, "%s: movegen_count_legal", fen);
    movegen_legal_captures(b, &got);
    expect_same_set(&got, &legal_caps, "movegen_legal_captures", fen);
    movegen_quiet_checks(b, &got);
    expect_same_set(&got, &quiet_checks, "movegen_quiet_checks", fen);
}

/* ---- random games ------------------------------------------------------ */

static const char *const GAME_FENS[] = {
    START_FEN,
    "r1bakab1r/9/1cn4cn/p1p1p1p1p/9/9/P1P1P1P1P/1CN1C1N2/9/R1BAKAB1R w - - 4 3",
    "1rbak4/c4n2r/2na5/2N6/p1b3P1p/3C4P/P1P1P2C1/N7B/4A3R/R1BA1K3 w - - 5 31",
    "1Rb1kab2/r3a4/4n4/n3p3p/2p3P2/p1P1P3P/3c5/3A1A2B/rR7/2B2KN2 w - - 19 51",
    "2ba1aCR1/9/3P1k2b/7R1/3nr1p2/p5P1P/2p6/N4A3/3K5/2Bn1AN2 w - - 8 51",
    "3k5/9/9/3P1P3/2P3P2/9/9/9/9/4K4 w - - 0 1",
    "2bak4/4a4/4b4/9/9/9/9/9/4A4/3AK1R2 w - - 0 1",
};

enum { GAMES = 20, GAME_PLIES = 200 };

/*
 * 20 random games of up to 200 plies: after every move the incremental
 * state matches a recomputation and every generator matches its
 * definition; unmaking the whole game restores the starting board.
 */
Test(board, random_games_keep_state_consistent)
{
    static Board b;
    size_t nfens = sizeof GAME_FENS / sizeof GAME_FENS[0];
    int total_plies = 0;
    for (int g = 0; g < GAMES; g++) {
        const char *fen = GAME_FENS[(size_t)g % nfens];
        parse_or_fail(&b, fen);
        check_invariants(&b, fen);
        Snapshot start = snapshot(&b);
        int plies = 0;
        for (; plies < GAME_PLIES; plies++) {
            check_generators(&b);
            if (plies % 8 == 0)
                check_square_attacks(&b);
            MoveList legal;
            movegen_legal(&b, &legal);
            if (legal.count == 0)
                break;
            Move m = legal.moves[rng_next() % (uint32_t)legal.count];
            uint64_t before = board_key(&b);
            board_make(&b, m);
            cr_assert_neq(board_key(&b), before);
            check_invariants(&b, fen);
            cr_assert_eq(b.plies, plies + 1);
        }
        total_plies += plies;
        for (int i = 0; i < plies; i++) {
            board_unmake(&b);
            check_invariants(&b, fen);
        }
        Snapshot end = snapshot(&b);
        expect_same(&end, &start, fen);
    }
    cr_expect_gt(total_plies, GAMES * 50, "the random games were too short (%d plies)", total_plies);
}

/*
 * Positions built to hold every kind of check (pawn forward and sideways,
 * horse, rook, cannon with a screen, discovered by a screen leaving): the
 * generators agree with their definitions, and the named moves check.
 */
Test(board, generators_on_checking_positions)
{
    static const struct {
        const char *fen, *checks; /* moves that must give check */
    } cases[] = {
        { "4k4/9/4P4/9/9/9/9/9/9/3K5 w - - 0 1", "e7e8" },                       /* pawn forward */
        { "9/2P1k4/9/9/9/9/9/9/9/3K5 w - - 0 1", "c8d8" },                       /* pawn sideways */
        { "3k5/9/9/9/9/9/9/9/9/4K4 b - - 0 1", "" },                             /* bare kings */
        { "4k4/9/9/4P4/4N4/9/9/9/4C4/3K5 w - - 0 1", "e5d3 e5c4 e5g6 e6d6 e6f6" },    /* discovered cannon */
        { "3k5/9/9/2N6/9/9/9/9/9/4K4 w - - 0 1", "c6b8 c6e7" },                  /* horse */
        { "3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1", "a0a9 a0d0" },                   /* rook along a rank and a file */
        { "3k5/9/9/9/9/3N5/9/9/9/1C2K4 w - - 0 1", "b0d0" },                     /* cannon over a screen */
        { "4k4/4a4/9/9/9/9/9/4N4/4C4/3K5 w - - 0 1", "e2c1 e2c3 e2g1 e2g3 e2d4 e2f4" }, /* horse unmasking a cannon */
    };
    static Board b;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        parse_or_fail(&b, cases[i].fen);
        check_generators(&b);
        char buf[128];
        snprintf(buf, sizeof buf, "%s", cases[i].checks);
        char *save = NULL;
        for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
            Move m = parse_move(&b, t);
            cr_expect(board_gives_check(&b, m), "%s: %s gives check", cases[i].fen, t);
        }
    }
}

/* A null move flips the side and the key by zobrist_side only; unmaking it restores both. */
Test(board, null_move_restores_key)
{
    static Board b;
    for (size_t i = 0; i < sizeof GAME_FENS / sizeof GAME_FENS[0]; i++) {
        parse_or_fail(&b, GAME_FENS[i]);
        if (board_in_check(&b))
            continue;
        Snapshot before = snapshot(&b);
        board_make_null(&b);
        cr_expect_eq(b.side, before.side ^ 1);
        cr_expect_eq(board_key(&b), before.key ^ zobrist_side);
        cr_expect_eq(board_key(&b), board_compute_key(&b));
        cr_expect_eq(board_state(&b)->move, MOVE_NONE);
        board_unmake_null(&b);
        Snapshot after = snapshot(&b);
        expect_same(&after, &before, GAME_FENS[i]);
    }
}

/* The side to move is part of the key. */
Test(board, side_is_hashed)
{
    Board red, black;
    parse_or_fail(&red, "4k4/9/9/9/R8/9/9/9/9/3K5 w - - 0 1");
    parse_or_fail(&black, "4k4/9/9/9/R8/9/9/9/9/3K5 b - - 0 1");
    cr_expect_eq(board_key(&red) ^ zobrist_side, board_key(&black));
    cr_expect_neq(zobrist_side, 0);
}

/* ---- piece rules on hand positions ------------------------------------- */

/*
 * The legal moves of the piece on `from` in fen are exactly `want`
 * (space-separated destination squares, "" for none).
 */
static void expect_piece_moves(const char *fen, const char *from, const char *want)
{
    static Board b;
    parse_or_fail(&b, fen);
    int sq = square(from);
    cr_assert(b.squares[sq] != EMPTY && piece_color(b.squares[sq]) == b.side, "%s: no piece to move on %s", fen, from);
    MoveList legal, got, expected;
    movegen_legal(&b, &legal);
    got.count = expected.count = 0;
    for (int i = 0; i < legal.count; i++)
        if (move_from(legal.moves[i]) == sq)
            got.moves[got.count++] = legal.moves[i];
    char buf[128];
    snprintf(buf, sizeof buf, "%s", want);
    char *save = NULL;
    for (char *to = strtok_r(buf, " ", &save); to; to = strtok_r(NULL, " ", &save))
        expected.moves[expected.count++] = move_make(sq, square(to));
    char what[64];
    snprintf(what, sizeof what, "moves of %s", from);
    expect_same_set(&got, &expected, what, fen);
}

/* Flying general: the only piece between the kings cannot leave the file. */
Test(board, flying_general_pins_the_screen)
{
    const char *fen = "4k4/9/9/9/9/4N4/9/9/9/4K4 w - - 0 1";
    expect_piece_moves(fen, "e4", "");
    expect_piece_moves(fen, "e0", "d0 f0 e1");
    /* ... though the horse alone could go to eight squares */
    Board b;
    parse_or_fail(&b, fen);
    MoveList pseudo;
    pseudo.count = 0;
    movegen_pseudo(&b, &pseudo, GEN_ALL);
    int horse = 0;
    for (int i = 0; i < pseudo.count; i++)
        horse += move_from(pseudo.moves[i]) == square("e4");
    cr_expect_eq(horse, 8);
}

/* Flying general: a king may not step onto the open file of the other king. */
Test(board, flying_general_king_step)
{
    expect_piece_moves("3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1", "e0", "e1 f0");
    expect_piece_moves("3k5/9/9/9/9/9/9/9/9/4K4 b - - 0 1", "d9", "d8");
}

/* Horse leg: a piece of either colour next to the horse blocks the two moves past it. */
Test(board, horse_leg)
{
    expect_piece_moves("5k3/9/9/9/4P4/3pN4/9/9/9/3K5 w - - 0 1", "e4", "d2 f2 g3 g5");
    expect_piece_moves("5k3/9/9/9/9/4N4/9/9/9/3K5 w - - 0 1", "e4", "d2 f2 g3 g5 c3 c5 d6 f6");
    /* corner horse: two moves at most, one blocked by its own rook */
    expect_piece_moves("5k3/9/9/9/9/9/9/9/R8/N2K5 w - - 0 1", "a0", "c1");
}

/* Elephant eye blocks; an elephant never crosses the river. */
Test(board, elephant_eye_and_river)
{
    expect_piece_moves("5k3/9/9/9/9/9/3p5/4B4/3K5/9 w - - 0 1", "e2", "g0 g4");
    expect_piece_moves("5k3/9/9/9/9/2B6/9/9/9/3K5 w - - 0 1", "c4", "a2 e2");
    expect_piece_moves("5k3/9/9/9/6b2/9/9/9/9/3K5 b - - 0 1", "g5", "e7 i7");
}

/* Cannon: slides over empty squares; captures over exactly one screen, never its own side. */
Test(board, cannon_screens)
{
    expect_piece_moves("1r1k5/1n7/9/1P7/9/1C2p1P1p/9/9/1p2K4/1r7 w - - 0 1", "b4",
                       "b5 b3 b2 a4 c4 d4 b8 b0");
}

/* Pawns: forward only before the river, sideways too after it, never back. */
Test(board, pawn_sideways_after_river)
{
    const char *red = "P4k3/9/9/6p2/4P4/6p2/2P6/9/9/3K5 w - - 0 1";
    const char *black = "P4k3/9/9/6p2/4P4/6p2/2P6/9/9/3K5 b - - 0 1";
    expect_piece_moves(red, "c3", "c4");
    expect_piece_moves(red, "e5", "e6 d5 f5");
    expect_piece_moves(red, "a9", "b9");
    expect_piece_moves(black, "g6", "g5");
    expect_piece_moves(black, "g4", "g3 f4 h4");
}

/* Advisors on the palace diagonals; kings inside the palace. */
Test(board, palace_pieces)
{
    const char *fen = "4k4/9/9/9/9/9/9/9/4A4/3K5 w - - 0 1";
    expect_piece_moves(fen, "e1", "f0 d2 f2");
    expect_piece_moves(fen, "d0", "e0 d1");
}

/* In check only the evasions are legal, and the generators still agree. */
Test(board, evasions)
{
    static Board b;
    parse_or_fail(&b, "3k5/9/9/9/9/9/9/9/9/4Kr3 w - - 0 1");
    cr_expect(board_in_check(&b));
    expect_piece_moves("3k5/9/9/9/9/9/9/9/9/4Kr3 w - - 0 1", "e0", "e1 f0");
    check_generators(&b);
    /* a cannon check is answered by moving the screen away too */
    parse_or_fail(&b, "3k5/9/9/9/9/4c4/9/9/4N4/3AK4 w - - 0 1");
    cr_expect(board_in_check(&b));
    check_generators(&b);
    expect_piece_moves("3k5/9/9/9/9/4c4/9/9/4N4/3AK4 w - - 0 1", "e1", "c0 c2 d3 f3 g0 g2");
}

Test(board, has_attackers)
{
    Board b;
    board_startpos(&b);
    cr_expect(board_has_attackers(&b, RED));
    cr_expect(board_has_attackers(&b, BLACK));
    parse_or_fail(&b, "3aka3/9/4b4/9/9/9/4P4/4B4/4A4/3AK4 w - - 0 1");
    cr_expect_not(board_has_attackers(&b, RED), "a pawn before the river cannot attack");
    cr_expect_not(board_has_attackers(&b, BLACK));
    parse_or_fail(&b, "3aka3/9/4b4/4P4/9/9/9/4B4/4A4/3AK4 w - - 0 1");
    cr_expect(board_has_attackers(&b, RED), "a pawn across the river attacks");
}

/* ---- long games -------------------------------------------------------- */

/*
 * 1200 plies of horses going out and back (no capture, the start position
 * every 4 plies): the state stack is compacted instead of overflowing, the
 * key, counters and position stay right, and what is left of the history
 * still unmakes cleanly.
 */
Test(board, game_longer_than_state_stack)
{
    static Board b;
    board_startpos(&b);
    const uint64_t start_key = board_key(&b);
    uint8_t start_squares[SQUARES];
    memcpy(start_squares, b.squares, sizeof start_squares);
    static const char *const cycle[][4] = {
        { "h0g2", "h9g7", "g2h0", "g7h9" },
        { "b0c2", "b9c7", "c2b0", "c7b9" },
        { "b0a2", "h9i7", "a2b0", "i7h9" },
    };
    enum { PLIES = 1200 };
    cr_assert_gt(PLIES, STATE_STACK);
    for (int i = 0; i < PLIES; i++) {
        Move m = parse_move(&b, cycle[(i / 4) % 3][i % 4]);
        board_make(&b, m);
        cr_assert_lt(b.top, STATE_STACK);
        if (i + 1 >= STATE_STACK)
            cr_assert_geq(b.top, STATE_KEEP, "ply %d: only %d states kept", i + 1, b.top);
        cr_assert_eq(board_key(&b), board_compute_key(&b), "ply %d", i + 1);
        cr_assert_eq(b.plies, i + 1);
        cr_assert_eq(board_state(&b)->rule60, i + 1);
        cr_assert_eq(b.fullmove, 1 + (i + 1) / 2);
        cr_assert_eq(board_state(&b)->move, m);
        if ((i + 1) % 4 == 0) {
            cr_assert_eq(board_key(&b), start_key, "ply %d: back at the start", i + 1);
            cr_assert(memcmp(b.squares, start_squares, sizeof start_squares) == 0);
        }
    }
    /* the history kept is still usable for repetition */
    cr_expect_eq(rules_repetition(&b, 3), REP_DRAW);
    /* unmake what is left: keys stay consistent, the position follows the cycle back */
    int left = b.top;
    for (int i = 0; i < left; i++) {
        board_unmake(&b);
        cr_assert_eq(board_key(&b), board_compute_key(&b));
        if ((PLIES - i - 1) % 4 == 0)
            cr_assert_eq(board_key(&b), start_key);
    }
    cr_expect_eq(b.top, 0);
    cr_expect_eq(b.plies, PLIES - left);
}

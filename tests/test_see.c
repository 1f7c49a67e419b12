/*
 * test_see.c - the Xiangqi static exchange evaluation (engine/see.c).
 *
 * Each position isolates one rule the exchange must get right: an
 * undefended piece, a defender by each piece type, a cannon's screen, a
 * horse leg, the king recapturing only when nothing takes it back, and a
 * screen that a capture removes.  Each is checked with colours mirrored.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "fen.h"
#include "see.h"

/* Red's rank r is Black's rank 9 - r: mirror a FEN's ranks and swap colours and side. */
static void mirror_fen(const char *fen, char *out)
{
    char board[128], side[8];
    cr_assert_eq(sscanf(fen, "%127s %7s", board, side), 2);
    char *ranks[10];
    int n = 0;
    for (char *r = strtok(board, "/"); r && n < 10; r = strtok(NULL, "/"))
        ranks[n++] = r;
    cr_assert_eq(n, 10);
    out[0] = '\0';
    for (int i = 9; i >= 0; i--) {
        for (char *c = ranks[i]; *c; c++)
            *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
        strcat(out, ranks[i]);
        if (i)
            strcat(out, "/");
    }
    strcat(out, side[0] == 'w' ? " b - - 0 1" : " w - - 0 1");
}

static void mirror_move(const char *m, char *out)
{
    out[0] = m[0];
    out[1] = (char)('9' - (m[1] - '0'));
    out[2] = m[2];
    out[3] = (char)('9' - (m[3] - '0'));
    out[4] = '\0';
}

static int see_of(const char *fen, const char *move)
{
    Board b;
    char err[128];
    cr_assert_eq(fen_parse(&b, fen, FEN_GAME, err, sizeof err), 0, "%s: %s", fen, err);
    Move m = move_make(sq_make(move[0] - 'a', move[1] - '0'), sq_make(move[2] - 'a', move[3] - '0'));
    Board before = b;
    int v = see(&b, m);
    cr_assert(memcmp(b.squares, before.squares, sizeof b.squares) == 0 &&
              memcmp(b.rank_bits, before.rank_bits, sizeof b.rank_bits) == 0 &&
              memcmp(b.file_bits, before.file_bits, sizeof b.file_bits) == 0, "%s %s: board not restored", fen, move);
    cr_assert_eq(see_ge(&b, m, v), true);
    cr_assert_eq(see_ge(&b, m, v + 1), false);
    return v;
}

static void expect_see(const char *fen, const char *move, int expected)
{
    cr_expect_eq(see_of(fen, move), expected, "%s %s: SEE %d, expected %d", fen, move, see_of(fen, move), expected);
    char mf[128], mm[8];
    mirror_fen(fen, mf);
    mirror_move(move, mm);
    cr_expect_eq(see_of(mf, mm), expected, "mirrored %s %s: SEE %d, expected %d", mf, mm, see_of(mf, mm), expected);
}

Test(see, undefended_piece)
{
    expect_see("4k4/9/9/9/4n4/9/9/9/4R4/3K5 w - - 0 1", "e1e5", 400);
}

Test(see, pawn_defender)
{
    /* the black pawn on e6 takes back on e5: a horse for a rook */
    expect_see("4k4/9/9/4p4/4n4/9/9/9/4R4/3K5 w - - 0 1", "e1e5", 400 - 900);
}

Test(see, cannon_defends_over_its_screen)
{
    /* the cannon on e9 takes back over the elephant on e7 */
    expect_see("4ck3/9/4b4/9/4n4/9/9/9/4R4/3K5 w - - 0 1", "e1e5", 400 - 900);
}

Test(see, horse_defends_unless_its_leg_is_blocked)
{
    expect_see("4k4/9/3n5/9/4p4/9/9/9/4R4/3K5 w - - 0 1", "e1e5", 100 - 900);
    /* a red pawn on d6 blocks the horse's leg */
    expect_see("4k4/9/3n5/3P5/4p4/9/9/9/4R4/3K5 w - - 0 1", "e1e5", 100);
}

Test(see, king_recaptures_only_when_nothing_takes_it_back)
{
    expect_see("4k4/4a4/9/9/9/9/9/9/4R4/3K5 w - - 0 1", "e1e8", 200 - 900);
    /* the horse on f6 covers e8: the king may not take */
    expect_see("4k4/4a4/9/5N3/9/9/9/9/4R4/3K5 w - - 0 1", "e1e8", 200);
}

Test(see, a_cannon_needs_exactly_one_screen)
{
    /* the cannon on e0 takes back over the elephant on e2 */
    expect_see("3kr4/9/9/9/R3n4/9/9/4B4/9/4CK3 w - - 0 1", "a5e5", 400);
    /* without a screen it does not */
    expect_see("3kr4/9/9/9/R3n4/9/9/9/9/4CK3 w - - 0 1", "a5e5", 400 - 900);
}

Test(see, quiet_move_onto_an_attacked_square)
{
    /* a quiet move risks what stands on the square against its attackers */
    expect_see("4k4/9/9/4p4/9/9/9/9/R8/3K5 w - - 0 1", "a1a5", 0);
    expect_see("4k4/9/9/p8/9/9/9/9/R8/3K5 w - - 0 1", "a1a5", -900);
    /* a crossed pawn attacks sideways */
    expect_see("4k4/9/9/9/9/1p7/9/9/R8/3K5 w - - 0 1", "a1a4", -900);
    expect_see("4k4/9/9/9/9/1p7/9/9/R8/3K5 w - - 0 1", "a1a3", 0);
}

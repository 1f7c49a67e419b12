/*
 * Perpetual chase (rules.h): hand-built repetitions, each judged by the
 * referee (rules_outcome at the third occurrence), by the search's count
 * (rules_repetition(b, 2) after one cycle) and by `xqf-engine judge`, and
 * each again with the colours mirrored (ranks flipped, colours and side to
 * move swapped), so every verdict is checked from both sides.  Every move
 * goes through move_parse, so it is legal, and each case says which of its
 * moves give check.
 *
 * In the comments, "chases X" means: after the move the mover attacks X as
 * a chase (rules.h) and did not before it.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "fen.h"
#include "movegen.h"
#include "rules.h"
#include "run_util.h"

/* Strings held in the struct: Criterion may run each parameter in a new process image. */
typedef struct {
    char name[40];
    char fen[FEN_MAX];
    char cycle[40];  /* the moves of one cycle; the position recurs after them */
    char checks[8];  /* per move of the cycle: '+' gives check, '-' does not */
    GameResult result;  /* at the third occurrence */
    ResultReason reason;
} Case;

#define RED_WINS RESULT_RED_WINS
#define BLACK_WINS RESULT_BLACK_WINS
#define DRAW RESULT_DRAW
#define CHASE REASON_PERPETUAL_CHASE
#define CHECK REASON_PERPETUAL_CHECK
#define REP REASON_REPETITION

static Case cases[] = {
    /* A horse chases a rook: d6-b5 hits c7, the rook steps to c8, b5-d6 hits c8, and back. */
    { "horse_chases_rook", "5k3/9/2r6/3N5/9/9/9/9/9/3K5 w - - 0 1", "d6b5 c7c8 b5d6 c8c7", "----", BLACK_WINS,
      CHASE },
    /* The same with the rook protected by the rook on c9: a horse attacking a rook chases it all the same. */
    { "horse_chases_protected_rook", "2r2k3/9/2r6/3N5/9/9/9/9/9/3K5 w - - 0 1", "d6b5 c7c8 b5d6 c8c7", "----",
      BLACK_WINS, CHASE },
    /* A cannon chases a rook over the elephants on c5 and g5: c3-g3 hits g7, the rook runs to c7, ... */
    { "cannon_chases_rook", "5k3/9/6r2/9/2b3b2/9/2C6/9/9/4K4 w - - 0 1", "c3g3 g7c7 g3c3 c7g7", "----", BLACK_WINS,
      CHASE },
    /* A rook chases an unprotected cannon along ranks 7 and 8 (the cannon has no screen to hit back). */
    { "rook_chases_cannon", "5k3/7R1/2c6/9/9/9/9/9/9/3K5 w - - 0 1", "h8h7 c7c8 h7h8 c8c7", "----", BLACK_WINS,
      CHASE },
    /* The same cannon protected by the rook on c9 (on c7 and c8 alike): an attack, not a chase. */
    { "rook_attacks_protected_cannon", "2r2k3/7R1/2c6/9/9/9/9/9/9/3K5 w - - 0 1", "h8h7 c7c8 h7h8 c8c7", "----",
      DRAW, REP },
    /* A cannon chases an unprotected horse over the pawns e7/e8 (a horse is worth no more than a cannon). */
    { "cannon_chases_horse", "5k3/4P2C1/n3P4/9/9/9/9/9/9/3K5 w - - 0 1", "h8h7 a7c8 h7h8 c8a7", "----", BLACK_WINS,
      CHASE },
    /* A horse chases an unprotected cannon, as it chased the rook. */
    { "horse_chases_cannon", "5k3/9/2c6/3N5/9/9/9/9/9/3K5 w - - 0 1", "d6b5 c7c8 b5d6 c8c7", "----", BLACK_WINS,
      CHASE },
    /* The same cannon protected by the rook on c9: not a chase. */
    { "horse_attacks_protected_cannon", "2r2k3/9/2c6/3N5/9/9/9/9/9/3K5 w - - 0 1", "d6b5 c7c8 b5d6 c8c7", "----",
      DRAW, REP },
    /* A rook chases an unprotected horse shuttling a7-c8. */
    { "rook_chases_horse", "5k3/7R1/n8/9/9/9/9/9/9/3K5 w - - 0 1", "h8h7 a7c8 h7h8 c8a7", "----", BLACK_WINS,
      CHASE },
    /*
     * The same horse protected by the rook on a8; when the horse leaves c8 the
     * black rook faces the red one: an offered exchange, not a chase.
     */
    { "rook_attacks_protected_horse", "5k3/r6R1/n8/9/9/9/9/9/9/3K5 w - - 0 1", "h8h7 a7c8 h7h8 c8a7", "----", DRAW,
      REP },
    /*
     * The rook chases a cannon shuttling g7-c7; the horse on e8 would take
     * back on either square but is pinned against its king by the rook on e5.
     */
    { "pinned_protector", "4k4/4n4/6c2/9/4R4/9/2R6/9/9/3K5 w - - 0 1", "c3g3 g7c7 g3c3 c7g7", "----", BLACK_WINS,
      CHASE },
    /* Without the pinning rook the horse protects the cannon: a draw. */
    { "free_protector", "4k4/4n4/6c2/9/9/9/2R6/9/9/3K5 w - - 0 1", "c3g3 g7c7 g3c3 c7g7", "----", DRAW, REP },
    /* Rook against unprotected rook: each could take the other, an exchange, not a chase. */
    { "rook_faces_rook", "5k3/7R1/2r6/9/9/9/9/9/9/3K5 w - - 0 1", "h8h7 c7c8 h7h8 c8c7", "----", DRAW, REP },
    /* Cannon against unprotected cannon over the pawns on e7/e8: the same exchange. */
    { "cannon_faces_cannon", "5k3/4P2C1/2c1P4/9/9/9/9/9/9/3K5 w - - 0 1", "h8h7 c7c8 h7h8 c8c7", "----", DRAW,
      REP },
    /*
     * Discovered chase: e7-g6 uncovers the rook h7 on the cannon c7, g6-e7
     * attacks it on c8 with the horse.  (The cannon's c8-c7, over the horse
     * on e7, hits the rook h7: a chase, but not on every black move.)
     */
    { "discovered_chase", "4k4/9/2c1N2R1/9/9/9/9/9/9/3K5 w - - 0 1", "e7g6 c7c8 g6e7 c8c7", "----", BLACK_WINS,
      CHASE },
    /* Check (a5-a9) and chase of the horse e5 (a9-a5) in turn: neither is perpetual, a draw. */
    { "check_then_chase", "3k5/9/9/9/R3n4/9/9/9/9/4K4 w - - 0 1", "a5a9 d9d8 a9a5 d8d9", "+---", DRAW, REP },
    /*
     * Red checks on every move; each king step uncovers a cannon (h9 over the
     * elephant g9, h8 over the horse g8) on the checking rook, so Black chases
     * on every move: the perpetual checker loses.
     */
    { "checker_loses_to_chaser", "3k2bc1/R5nc1/9/9/9/9/9/9/9/4K4 w - - 0 1", "a8a9 d9d8 a9a8 d8d9", "+-+-",
      BLACK_WINS, CHECK },
    /* Horses out and back, nothing attacked: a plain draw. */
    { "idle_repetition", "1n3k3/9/9/9/9/9/9/9/9/1N1K5 w - - 0 1", "b0c2 b9c7 c2b0 c7b9", "----", DRAW, REP },
    /* The king attacks an unprotected cannon on every move (e1, then d1): kings attack freely. */
    { "king_attacks_freely", "5k3/9/9/9/9/9/9/9/4c4/3K5 w - - 0 1", "d0e0 e1d1 e0d0 d1e1", "----", DRAW, REP },
    /* A crossed pawn attacks an unprotected cannon on every move (e7, then d7): pawns attack freely. */
    { "pawn_attacks_freely", "4k4/9/4c4/3P5/9/9/9/9/9/5K3 w - - 0 1", "d6e6 e7d7 e6d6 d7e7", "----", DRAW, REP },
    /*
     * The cannon c1 hits the pawn c6 whenever exactly one of the horses
     * stands on the c-file between them, which Red's moves bring about: a
     * pawn on its own side of the river is no victim.
     */
    { "uncrossed_pawn_is_no_victim", "4k4/9/9/n1p6/9/9/9/N8/2C6/3K5 w - - 0 1", "a2c3 a6c5 c3a2 c5a6", "----", DRAW,
      REP },
    /* The same one screen lower, on a pawn across the river (c4): a chase. */
    { "crossed_pawn_is_a_victim", "4k4/9/9/9/9/2p1n4/1N7/9/9/2CK5 w - - 0 1", "b3c1 e4c3 c1b3 c3e4", "----",
      BLACK_WINS, CHASE },
    /* The rook chases the horse b6 and the cannon b5 in turn: not one same piece, a draw. */
    { "different_pieces_each_move", "4k4/9/9/1n7/1c5R1/9/9/9/9/3K5 w - - 0 1", "h5h6 e9e8 h6h5 e8e9", "----", DRAW,
      REP },
    /*
     * Both sides chase on every move, a screen war on the i-file: the cannon
     * to i6 lets the cannon i2 hit the rook i7; the black cannon to i4 blocks
     * that and cuts i2's protection of the horse i8, which the rook then
     * chases; the cannon back to g6 lets i2 hit i7 over i4; the black cannon
     * back to d4 leaves the horse i8 unprotected again.  Both: a draw.
     */
    { "both_sides_chase", "1N7/8N/3k4r/6C2/9/3c5/9/3r4C/9/4K4 w - - 0 1", "g6i6 d4i4 i6g6 i4d4", "----", DRAW,
      REP },
    /* A rook attacking an unprotected horse all along while the others shuffle: nothing new, no chase. */
    { "standing_attack_is_no_chase", "5k3/9/9/9/R3n4/9/9/9/9/1N1K5 w - - 0 1", "b0c2 f9f8 c2b0 f8f9", "----", DRAW,
      REP },
    /* cannon_chases_rook with the rook protected by the rook a7: a cannon attacking a rook chases it all the same. */
    { "cannon_chases_protected_rook", "5k3/9/r5r2/9/2b3b2/9/2C6/9/9/4K4 w - - 0 1", "c3g3 g7c7 g3c3 c7g7", "----",
      BLACK_WINS, CHASE },
    /* discovered_chase with the cannon protected by the rook c9 (on c7 and c8): a draw. */
    { "discovered_attack_on_protected_piece", "2r1k4/9/2c1N2R1/9/9/9/9/9/9/3K5 w - - 0 1", "e7g6 c7c8 g6e7 c8c7",
      "----", DRAW, REP },
    /*
     * Both sides chase by moving screens on rank 6: the cannon c6-c3 takes
     * away the screen by which the cannon b6 protects the horse h6 (the rook
     * g6 chases it); the horse e8-f6 becomes a screen for b6 on the rook g6;
     * c3-c6 makes two screens, so h6 is unprotected again; f6-e8 leaves b6
     * one screen to the rook.  A draw.
     */
    { "both_sides_chase_by_screens", "9/3kn4/9/1cC3Rn1/9/9/9/2N5C/9/c3K4 w - - 0 1", "c6c3 e8f6 c3c6 f6e8", "----",
      DRAW, REP },
    /* Plain perpetual check (the rook checks on a9 and a8), the chase rules untouched. */
    { "perpetual_check", "3k5/R8/9/9/9/9/9/9/9/5K3 w - - 0 1", "a8a9 d9d8 a9a8 d8d9", "+-+-", BLACK_WINS, CHECK },
    /* Both sides check on every move (cannon and rook batteries): a draw. */
    { "mutual_perpetual_check", "4ck3/5r3/9/9/4C4/9/9/9/4KR3/9 w - - 0 1", "e5f5 f8e8 f5e5 e8f8", "++++", DRAW, REP },
};

/* ---- mirroring ----------------------------------------------------------- */

/* The FEN with ranks flipped and colours swapped (the side to move too). */
static void mirror_fen(const char *fen, char *out, size_t len)
{
    char placement[FEN_MAX], side, rest[FEN_MAX] = "";
    cr_assert(sscanf(fen, "%127s %c %127[^\n]", placement, &side, rest) >= 2, "FEN '%s'", fen);
    char *ranks[RANKS];
    int n = 0;
    for (char *save = NULL, *r = strtok_r(placement, "/", &save); r && n < RANKS; r = strtok_r(NULL, "/", &save))
        ranks[n++] = r;
    cr_assert_eq(n, RANKS, "FEN '%s'", fen);
    size_t used = 0;
    out[0] = '\0';
    for (int i = n - 1; i >= 0; i--) {
        for (char *c = ranks[i]; *c; c++)
            *c = (char)(isupper((unsigned char)*c) ? tolower((unsigned char)*c) : toupper((unsigned char)*c));
        used += (size_t)snprintf(out + used, len - used, "%s%s", ranks[i], i ? "/" : "");
    }
    snprintf(out + used, len - used, " %c %s", side == 'b' ? 'w' : 'b', rest);
}

/* ICCS moves with ranks flipped ("d6b5" -> "d3b4"). */
static void mirror_moves(const char *moves, char *out, size_t len)
{
    snprintf(out, len, "%s", moves);
    for (char *c = out; *c; c++)
        if (isdigit((unsigned char)*c))
            *c = (char)('9' - (*c - '0'));
}

static GameResult mirror_result(GameResult r)
{
    return r == RESULT_RED_WINS ? RESULT_BLACK_WINS : r == RESULT_BLACK_WINS ? RESULT_RED_WINS : r;
}

/* ---- running a case ------------------------------------------------------ */

/* Plays the cycle once, asserting each move legal, its check flag, and that the game goes on. */
static void play_cycle(Board *b, const Case *c, const char *cycle)
{
    char buf[256], err[256];
    snprintf(buf, sizeof buf, "%s", cycle);
    int i = 0;
    for (char *save = NULL, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save), i++) {
        Move m;
        cr_assert_eq(move_parse(b, t, &m, err, sizeof err), 0, "%s: move %s: %s", c->name, t, err);
        board_make(b, m);
        cr_assert(c->checks[i] == '+' || c->checks[i] == '-', "%s: checks pattern too short", c->name);
        cr_assert_eq(board_in_check(b), c->checks[i] == '+', "%s: move %s %s", c->name, t,
                     board_in_check(b) ? "gives check" : "gives no check");
    }
    cr_assert_eq(c->checks[i], '\0', "%s: checks pattern too long", c->name);
}

/* The search's view of `result` for the side to move. */
static RepetitionStatus status_for(GameResult result, int side)
{
    if (result == RESULT_DRAW)
        return REP_DRAW;
    return (result == RESULT_RED_WINS) == (side == RED) ? REP_WIN : REP_LOSS;
}

/* Runs `xqf-engine ARGS` through the shell; its stdout and stderr go to out. Returns the exit status. */
static int run_engine(const char *args, char *out, size_t len)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s/xqf-engine %s", XQF_BIN, args);
    return run_command(cmd, out, len);
}

static void run_case(const Case *c, bool mirrored)
{
    char fen[FEN_MAX * 2], cycle[64];
    GameResult result = c->result;
    if (mirrored) {
        mirror_fen(c->fen, fen, sizeof fen);
        mirror_moves(c->cycle, cycle, sizeof cycle);
        result = mirror_result(result);
    } else {
        snprintf(fen, sizeof fen, "%s", c->fen);
        snprintf(cycle, sizeof cycle, "%s", c->cycle);
    }
    Board b;
    char err[256] = "";
    cr_assert_eq(fen_parse(&b, fen, FEN_GAME, err, sizeof err), 0, "%s: '%s': %s", c->name, fen, err);

    /* one cycle: the search judges the first recurrence, and leaves the board as it was */
    play_cycle(&b, c, cycle);
    Board copy = b;
    cr_expect_eq(rules_repetition(&b, 2), status_for(result, b.side), "%s%s: search verdict", c->name,
                 mirrored ? " (mirrored)" : "");
    cr_expect(!memcmp(&copy, &b, offsetof(Board, states) + (size_t)(b.top + 1) * sizeof b.states[0]),
              "%s: rules_repetition changed the board", c->name);
    cr_expect_eq(rules_repetition(&b, 3), REP_NONE, "%s: only two occurrences", c->name);
    cr_expect_eq(rules_outcome(&b).result, RESULT_NONE, "%s: the referee waits for the third", c->name);

    /* a second cycle: the referee's verdict */
    play_cycle(&b, c, cycle);
    Outcome o = rules_outcome(&b);
    cr_expect(o.result == result && o.reason == c->reason, "%s%s: %s (%s), expected %s (%s)", c->name,
              mirrored ? " (mirrored)" : "", rules_result_text(o.result), rules_reason_text(o.reason),
              rules_result_text(result), rules_reason_text(c->reason));

    /* the same through the judge command */
    char args[512], out[512], expected[128];
    snprintf(args, sizeof args, "judge '%s' %s %s", fen, cycle, cycle);
    snprintf(expected, sizeof expected, "result: %s (%s)\n", rules_result_text(result), rules_reason_text(c->reason));
    cr_expect_eq(run_engine(args, out, sizeof out), 0, "%s: judge: %s", c->name, out);
    cr_expect_str_eq(out, expected, "%s%s: judge", c->name, mirrored ? " (mirrored)" : "");
}

ParameterizedTestParameters(chase, verdict)
{
    return cr_make_param_array(Case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(Case *c, chase, verdict)
{
    run_case(c, false);
}

ParameterizedTestParameters(chase, verdict_mirrored)
{
    return cr_make_param_array(Case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(Case *c, chase, verdict_mirrored)
{
    run_case(c, true);
}

/* ---- the judge command's input ------------------------------------------ */

/* Runs judge with `args`; it must fail with status 2 and a message containing `needle`. */
static void judge_fails(const char *args, const char *needle)
{
    char cmd[512], out[1024];
    snprintf(cmd, sizeof cmd, "judge %s", args);
    cr_expect_eq(run_engine(cmd, out, sizeof out), 2, "judge %s: %s", args, out);
    cr_expect(strstr(out, "error:") && strstr(out, needle), "judge %s: '%s' lacks '%s'", args, out, needle);
}

Test(judge, bad_input_exits_2)
{
    judge_fails("", "judge needs a FEN");
    judge_fails("'rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNX w - - 0 1'", "bad FEN");
    judge_fails("'4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1'", "bad FEN"); /* the kings face each other */
    judge_fails("garbage", "bad FEN");
    judge_fails("startpos h2e2 h2e2", "move 2 (h2e2)");         /* no piece of Black's there */
    judge_fails("startpos a0a5", "move 1 (a0a5)");              /* the rook jumps its pawn */
    judge_fails("startpos h0g2 xyzzy", "move 2 (xyzzy)");
    judge_fails("'3k5/9/9/9/R8/9/9/9/9/4K4 w - - 0 1' a5d5 d9e9", "game is over"); /* a move after mate */
}

Test(judge, verdicts)
{
    char out[512];
    cr_expect_eq(run_engine("judge startpos", out, sizeof out), 0);
    cr_expect_str_eq(out, "result: * (none)\n");
    /* the FEN's fields as separate arguments, as for perft */
    cr_expect_eq(run_engine("judge 3k5/9/9/9/R8/9/9/9/9/4K4 w - - 0 1 a5d5", out, sizeof out), 0);
    cr_expect_str_eq(out, "result: 1-0 (checkmate)\n");
    cr_expect_eq(run_engine("judge startpos h0g2 h9g7 g2h0 g7h9 h0g2 h9g7 g2h0 g7h9", out, sizeof out), 0);
    cr_expect_str_eq(out, "result: 1/2-1/2 (repetition)\n");
    cr_expect_eq(run_engine("judge '3k5/9/9/9/9/9/9/9/9/R3K4 w - - 119 80' a0a1", out, sizeof out), 0);
    cr_expect_str_eq(out, "result: 1/2-1/2 (120 plies without capture)\n");
}

/*
 * The chase of horse_chases_rook reached after other moves: the horse walks
 * in (f0-e2-d4, the king idles), then chases.  The first position to occur
 * a third time is the one after its d6-b5 (ply 13), judged with the victim
 * to move: Black wins at once.
 */
Test(chase, verdict_after_other_moves)
{
    Board b;
    char err[256];
    cr_assert_eq(fen_parse(&b, "5k3/9/2r6/9/9/9/9/9/9/3K1N3 w - - 0 1", FEN_GAME, err, sizeof err), 0, "%s", err);
    const char *line[] = { "f0e2", "f9e9", "e2d4", "e9f9", "d4b5", "c7c8", "b5d6", "c8c7",
                           "d6b5", "c7c8", "b5d6", "c8c7", "d6b5", "c7c8", "b5d6", "c8c7" };
    int ply = 0;
    while (rules_outcome(&b).result == RESULT_NONE) {
        Move m;
        cr_assert_lt(ply, (int)(sizeof line / sizeof line[0]), "no verdict after the whole line");
        cr_assert_eq(move_parse(&b, line[ply], &m, err, sizeof err), 0, "%s: %s", line[ply], err);
        board_make(&b, m);
        ply++;
    }
    cr_expect_eq(ply, 13);
    cr_expect_eq(b.side, BLACK);
    cr_expect_eq(rules_repetition(&b, 3), REP_WIN, "the side to move wins");
    Outcome o = rules_outcome(&b);
    cr_expect_eq(o.result, RESULT_BLACK_WINS);
    cr_expect_eq(o.reason, REASON_PERPETUAL_CHASE);
}

/*
 * How games end (rules.h): mate, stalemate, perpetual check, repetition, the
 * 120-ply rule, and the result texts (perpetual chase: test_chase.c).  Every
 * line of moves is played through move_parse, so it is legal, and the tests
 * assert which moves give check instead of trusting the comments.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "fen.h"
#include "movegen.h"
#include "rules.h"

/* ---- helpers ----------------------------------------------------------- */

static void setup(Board *b, const char *fen)
{
    char err[256] = "";
    cr_assert_eq(fen_parse(b, fen, FEN_GAME, err, sizeof err), 0, "cannot parse '%s': %s", fen, err);
}

/* Plays one move, which must be legal, and says whether it gave check. */
static bool play(Board *b, const char *text)
{
    Move m = MOVE_NONE;
    char err[256] = "";
    cr_assert_eq(move_parse(b, text, &m, err, sizeof err), 0, "move %s: %s", text, err);
    board_make(b, m);
    return board_in_check(b);
}

/* Plays a space-separated line of moves; `checks` says for each one whether it must give check ('+') or not ('-'). */
static void play_line(Board *b, const char *moves, const char *checks)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", moves);
    char *save = NULL;
    int i = 0;
    for (char *m = strtok_r(buf, " ", &save); m; m = strtok_r(NULL, " ", &save), i++) {
        cr_assert(checks[i] == '+' || checks[i] == '-', "checks pattern too short for %s", moves);
        bool check = play(b, m);
        cr_assert_eq(check, checks[i] == '+', "move %d (%s) %s", i + 1, m,
                     check ? "gives check, the test expects it not to" : "gives no check, the test expects one");
        /* before the end of the line the game must still be going on */
        if (save && *save)
            cr_assert_eq(rules_outcome(b).result, RESULT_NONE, "game over after move %d (%s) of %s", i + 1, m, moves);
    }
    cr_assert_eq(checks[i], '\0', "checks pattern too long for %s", moves);
}

static void expect_outcome(Board *b, GameResult result, ResultReason reason)
{
    Outcome o = rules_outcome(b);
    cr_expect_eq(o.result, result, "result %s (%s), expected %s (%s)", rules_result_text(o.result),
                 rules_reason_text(o.reason), rules_result_text(result), rules_reason_text(reason));
    cr_expect_eq(o.reason, reason, "reason %s, expected %s", rules_reason_text(o.reason), rules_reason_text(reason));
}

/* Red rook a5, kings d9/e0: a5d5 mates (the e-file is covered by the facing red king). */
#define MATE_IN_ONE "3k5/9/9/9/R8/9/9/9/9/4K4 w - - 0 1"

/* ---- no legal move ----------------------------------------------------- */

Test(rules, checkmate)
{
    Board b;
    setup(&b, MATE_IN_ONE);
    expect_outcome(&b, RESULT_NONE, REASON_NONE);
    cr_assert(play(&b, "a5d5"));
    cr_expect_eq(movegen_count_legal(&b), 0);
    expect_outcome(&b, RESULT_RED_WINS, REASON_CHECKMATE);
}

Test(rules, checkmate_of_red)
{
    Board b;
    setup(&b, "4k4/9/9/9/r8/9/9/9/9/3K5 b - - 0 1");
    /* the rook takes the d-file, the black king covers the e-file */
    cr_assert(play(&b, "a5d5"));
    cr_expect_eq(movegen_count_legal(&b), 0);
    expect_outcome(&b, RESULT_BLACK_WINS, REASON_CHECKMATE);
}

/* No legal move without being in check loses too. */
Test(rules, stalemate_loses)
{
    Board b;
    setup(&b, "3k5/9/4P4/9/9/9/9/9/9/4K4 w - - 0 1");
    cr_assert_not(play(&b, "e7e8"));
    cr_expect_eq(movegen_count_legal(&b), 0);
    cr_expect_not(board_in_check(&b));
    expect_outcome(&b, RESULT_RED_WINS, REASON_STALEMATE);
}

/* ---- repetition -------------------------------------------------------- */

/*
 * Red rook checks from a9 and a8 in turn, the black king steps d9-d8-d9:
 * the start position recurs every 4 plies.
 */
Test(rules, perpetual_check_loses)
{
    Board b;
    setup(&b, "3k5/R8/9/9/9/9/9/9/9/5K3 w - - 0 1");
    /* the checks are real: a9 hits d9 along rank 9, a8 hits d8 along rank 8 */
    play_line(&b, "a8a9 d9d8 a9a8 d8d9", "+-+-");
    cr_expect_eq(rules_repetition(&b, 2), REP_LOSS, "Red to move, it checked on every move");
    cr_expect_eq(rules_repetition(&b, 3), REP_NONE, "only two occurrences so far");
    expect_outcome(&b, RESULT_NONE, REASON_NONE);
    play_line(&b, "a8a9 d9d8 a9a8 d8d9", "+-+-");
    cr_expect_eq(rules_repetition(&b, 3), REP_LOSS);
    expect_outcome(&b, RESULT_BLACK_WINS, REASON_PERPETUAL_CHECK);
}

/* The same, judged right after the checking move: the side to move (Black) wins. */
Test(rules, perpetual_check_judged_after_the_check)
{
    Board b;
    /* the rook comes from a7, so the position with Red to move occurs only twice */
    setup(&b, "3k5/9/R8/9/9/9/9/9/9/5K3 w - - 0 1");
    play_line(&b, "a7a9 d9d8 a9a8 d8d9 a8a9", "+-+-+");
    cr_expect_eq(rules_repetition(&b, 2), REP_WIN);
    expect_outcome(&b, RESULT_NONE, REASON_NONE);
    play_line(&b, "d9d8 a9a8 d8d9 a8a9", "-+-+");
    cr_expect_eq(rules_repetition(&b, 3), REP_WIN);
    expect_outcome(&b, RESULT_BLACK_WINS, REASON_PERPETUAL_CHECK);
}

/* Horses out and back, no checks: a draw at the third occurrence. */
Test(rules, plain_repetition_draws)
{
    Board b;
    board_startpos(&b);
    play_line(&b, "h0g2 h9g7 g2h0 g7h9", "----");
    cr_expect_eq(rules_repetition(&b, 2), REP_DRAW);
    cr_expect_eq(rules_repetition(&b, 3), REP_NONE);
    expect_outcome(&b, RESULT_NONE, REASON_NONE);
    play_line(&b, "h0g2 h9g7 g2h0 g7h9", "----");
    cr_expect_eq(rules_repetition(&b, 3), REP_DRAW);
    expect_outcome(&b, RESULT_DRAW, REASON_REPETITION);
}

/* A check on some moves only is not perpetual: still a draw. */
Test(rules, occasional_check_is_a_draw)
{
    Board b;
    setup(&b, "3k5/R8/9/9/9/9/9/9/9/5K3 w - - 0 1");
    /* the rook shuttles a8-a7 (no check), the king d9-d8 */
    play_line(&b, "a8a7 d9d8 a7a8 d8d9 a8a7 d9d8 a7a8 d8d9", "--+---+-");
    cr_expect_eq(rules_repetition(&b, 3), REP_DRAW);
    expect_outcome(&b, RESULT_DRAW, REASON_REPETITION);
}

/*
 * Both sides check on every move (cannon and rook batteries on the e- and
 * f-files: each move removes a screen from one line and adds one to
 * another): a draw, not a loss for either.
 */
Test(rules, mutual_perpetual_check_draws)
{
    Board b;
    setup(&b, "4ck3/5r3/9/9/4C4/9/9/9/4KR3/9 w - - 0 1");
    cr_assert(board_in_check(&b), "the cycle starts with Red in check");
    play_line(&b, "e5f5 f8e8 f5e5 e8f8", "++++");
    cr_expect_eq(rules_repetition(&b, 2), REP_DRAW);
    play_line(&b, "e5f5 f8e8 f5e5 e8f8", "++++");
    cr_expect_eq(rules_repetition(&b, 3), REP_DRAW);
    expect_outcome(&b, RESULT_DRAW, REASON_REPETITION);
}

/* A null move ends the history that repetition looks at. */
Test(rules, null_move_cuts_repetition)
{
    Board b;
    board_startpos(&b);
    play_line(&b, "h0g2 h9g7 g2h0 g7h9", "----");
    cr_assert_eq(rules_repetition(&b, 2), REP_DRAW);
    uint64_t key = board_key(&b);
    board_make_null(&b);
    board_make_null(&b);
    cr_expect_eq(board_key(&b), key, "two null moves give the same position back");
    cr_expect_eq(rules_repetition(&b, 2), REP_NONE);
}

/* ---- the 120-ply rule -------------------------------------------------- */

Test(rules, no_capture_rule_draws)
{
    Board b;
    setup(&b, "3k5/9/9/9/9/9/9/9/9/R3K4 w - - 119 80");
    expect_outcome(&b, RESULT_NONE, REASON_NONE);
    cr_assert_not(play(&b, "a0a1"));
    cr_expect_eq(board_state(&b)->rule60, 120);
    expect_outcome(&b, RESULT_DRAW, REASON_NO_CAPTURE);
}

/* A check on the 120th ply is still a draw when it is not mate. */
Test(rules, no_capture_rule_check_is_not_enough)
{
    Board b;
    setup(&b, "3k5/9/9/9/9/9/9/9/9/R3K4 w - - 119 80");
    cr_assert(play(&b, "a0a9"));
    expect_outcome(&b, RESULT_DRAW, REASON_NO_CAPTURE);
}

/* A capture resets the counter. */
Test(rules, capture_resets_the_count)
{
    Board b;
    setup(&b, "3k5/9/9/9/9/9/9/9/r8/R3K4 w - - 119 80");
    play(&b, "a0a1");
    cr_expect_eq(board_state(&b)->rule60, 0);
    expect_outcome(&b, RESULT_NONE, REASON_NONE);
    play(&b, "d9d8");
    cr_expect_eq(board_state(&b)->rule60, 1);
}

/* Mate on the 120th ply counts as mate. */
Test(rules, mate_on_the_last_ply_counts)
{
    Board b;
    setup(&b, "3k5/9/9/9/R8/9/9/9/9/4K4 w - - 119 60");
    cr_assert(play(&b, "a5d5"));
    cr_expect_eq(board_state(&b)->rule60, 120);
    expect_outcome(&b, RESULT_RED_WINS, REASON_CHECKMATE);
}

/* ---- texts ------------------------------------------------------------- */

Test(rules, result_texts)
{
    cr_expect_str_eq(rules_result_text(RESULT_RED_WINS), "1-0");
    cr_expect_str_eq(rules_result_text(RESULT_BLACK_WINS), "0-1");
    cr_expect_str_eq(rules_result_text(RESULT_DRAW), "1/2-1/2");
    cr_expect_str_eq(rules_result_text(RESULT_NONE), "*");
}

Test(rules, reason_texts)
{
    const ResultReason reasons[] = { REASON_NONE, REASON_CHECKMATE, REASON_STALEMATE, REASON_PERPETUAL_CHECK,
                                     REASON_PERPETUAL_CHASE, REASON_REPETITION, REASON_NO_CAPTURE };
    enum { N = sizeof reasons / sizeof reasons[0] };
    cr_expect_str_eq(rules_reason_text(REASON_CHECKMATE), "checkmate");
    cr_expect_str_eq(rules_reason_text(REASON_PERPETUAL_CHECK), "perpetual check");
    cr_expect_str_eq(rules_reason_text(REASON_PERPETUAL_CHASE), "perpetual chase");
    for (int i = 0; i < N; i++) {
        const char *t = rules_reason_text(reasons[i]);
        cr_assert_not_null(t);
        cr_expect_gt(strlen(t), 0);
        for (int j = 0; j < i; j++)
            cr_expect_str_neq(t, rules_reason_text(reasons[j]), "two reasons share the text '%s'", t);
    }
}

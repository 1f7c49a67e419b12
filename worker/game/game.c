#include "game.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "movegen.h"
#include "player.h"
#include "search.h"

int time_control_parse(TimeControl *tc, const char *text)
{
    char *end;
    double base = strtod(text, &end), inc = 0.0;
    if (end == text)
        return -1;
    if (*end == '+') {
        const char *p = end + 1;
        inc = strtod(p, &end);
        if (end == p)
            return -1;
    }
    if (*end || !(base > 0.0) || !(inc >= 0.0) || base > 1e7 || inc > 1e6)
        return -1;
    tc->nodes = 0;
    tc->depth = 0;
    tc->base_ms = llround(base * 1000.0);
    tc->inc_ms = llround(inc * 1000.0);
    return 0;
}

TimeControl time_control_game(const TimeControl *tc, bool first_red)
{
    TimeControl g = *tc;
    if (tc->base1_ms > 0 && !first_red) {
        g.base_ms = tc->base1_ms;
        g.inc_ms = tc->inc1_ms;
        g.base1_ms = tc->base_ms;
        g.inc1_ms = tc->inc_ms;
    }
    return g;
}

/* The base time and increment of colour c in a game (time_control_game's form). */
static int64_t colour_base_ms(const TimeControl *tc, int c)
{
    return c == BLACK && tc->base1_ms > 0 ? tc->base1_ms : tc->base_ms;
}

static int64_t colour_inc_ms(const TimeControl *tc, int c)
{
    return c == BLACK && tc->base1_ms > 0 ? tc->inc1_ms : tc->inc_ms;
}

GameResult adjudication_update(AdjudicationState *st, const Adjudication *adj, int mover,
                               bool has_score, int score, int fullmove, GameReason *reason)
{
    if (!has_score) {
        st->win_run = st->draw_run = 0;
        return RESULT_NONE;
    }
    /* Win: every ply of the run rates the same side as winning by resign_score or more. */
    int winner = score >= 0 ? mover : mover ^ 1;
    if (adj->resign_moves > 0 && abs(score) >= adj->resign_score) {
        st->win_run = st->win_run > 0 && st->win_side == winner ? st->win_run + 1 : 1;
        st->win_side = winner;
        if (st->win_run >= adj->resign_moves) {
            *reason = GAME_ADJUDICATED_WIN;
            return winner == RED ? RESULT_RED_WINS : RESULT_BLACK_WINS;
        }
    } else {
        st->win_run = 0;
    }
    if (adj->draw_moves > 0 && fullmove >= adj->draw_after && abs(score) <= adj->draw_score) {
        if (++st->draw_run >= adj->draw_moves) {
            *reason = GAME_ADJUDICATED_DRAW;
            return RESULT_DRAW;
        }
    } else {
        st->draw_run = 0;
    }
    return RESULT_NONE;
}

static GameReason rules_reason(ResultReason r)
{
    switch (r) {
    case REASON_CHECKMATE: return GAME_CHECKMATE;
    case REASON_STALEMATE: return GAME_STALEMATE;
    case REASON_PERPETUAL_CHECK: return GAME_PERPETUAL_CHECK;
    case REASON_PERPETUAL_CHASE: return GAME_PERPETUAL_CHASE;
    case REASON_REPETITION: return GAME_REPETITION;
    case REASON_NO_CAPTURE: return GAME_NO_CAPTURE;
    case REASON_NONE: break;
    }
    return GAME_REASON_NONE;
}

static const char *const COLOR_NAME[2] = { "Red", "Black" };

/* Ends the game; the detail names the winner and the reason. */
static void finish(GameRecord *g, GameResult result, GameReason reason, const char *detail)
{
    g->result = result;
    g->reason = reason;
    const char *who = result == RESULT_RED_WINS ? "Red wins" : result == RESULT_BLACK_WINS
                                                               ? "Black wins" : "Draw";
    if (reason == GAME_ABANDONED)
        snprintf(g->detail, sizeof g->detail, "abandoned");
    else
        snprintf(g->detail, sizeof g->detail, "%s by %s%s%s", who, game_reason_text(reason),
                 detail && *detail ? ": " : "", detail ? detail : "");
}

/* The side `loser` loses because of its fault. */
static void forfeit(GameRecord *g, int loser, const Reply *r)
{
    if (r->fault == GAME_ABANDONED) {
        finish(g, RESULT_NONE, GAME_ABANDONED, NULL);
        return;
    }
    char detail[256];
    snprintf(detail, sizeof detail, "%s %s", COLOR_NAME[loser], r->detail);
    finish(g, loser == RED ? RESULT_BLACK_WINS : RESULT_RED_WINS, r->fault, detail);
}

/*
 * Sets up the opening on b and records its moves; *fen_fullmove and
 * *fen_side get the FEN's move number and side to move.
 * Returns 0 or -1 (out of memory).
 */
static int play_opening(GameRecord *g, const Opening *o, Board *b, int *fen_fullmove,
                        int *fen_side)
{
    char err[128];
    if (fen_parse(b, o->fen, FEN_GAME, err, sizeof err) != 0)
        return -1; /* openings are checked when the book is read */
    snprintf(g->fen, sizeof g->fen, "%s", o->fen);
    *fen_fullmove = b->fullmove;
    *fen_side = b->side;
    for (int i = 0; i < o->count; i++) {
        GameMove gm = { .move = o->moves[i], .book = true };
        if (game_record_push(g, &gm) != 0)
            return -1;
        board_make(b, o->moves[i]);
    }
    return 0;
}

/* Asks the side to move for its move within the clock or node limit. */
static void think(Player *p, const GameRecord *g, Board *b, const TimeControl *tc,
                  const int64_t clock_us[2], const atomic_bool *stop, Reply *r)
{
    GameView view = { g->fen, g->moves, g->count, b };
    ThinkLimits lim = { .nodes = tc->nodes, .depth = tc->nodes ? 0 : tc->depth, .stop = stop };
    bool fixed = tc->nodes || tc->depth > 0;
    for (int c = RED; c <= BLACK; c++) {
        lim.time_ms[c] = clock_us[c] / 1000;
        lim.inc_ms[c] = colour_inc_ms(tc, c);
    }
    int us = b->side;
    int64_t allowed_us = fixed ? tc->move_timeout_ms * 1000
                                   : clock_us[us] + tc->margin_ms * 1000;
    lim.deadline_us = clock_now_us() + allowed_us;
    player_think(p, &view, &lim, r);
    if (r->fault == GAME_REASON_NONE && !fixed && r->time_us > allowed_us) {
        r->fault = GAME_TIME_FORFEIT;
        snprintf(r->detail, sizeof r->detail, "used %.3f s with %.3f s left", r->time_us / 1e6,
                 clock_us[us] / 1e6);
    }
    if (r->fault == GAME_REASON_NONE && !movegen_is_legal(b, r->move)) {
        char text[8];
        move_text(r->move, text);
        r->fault = GAME_ILLEGAL_MOVE;
        snprintf(r->detail, sizeof r->detail, "illegal move '%s'", text);
    }
}

int game_play(Player *red, Player *black, const Opening *o, const TimeControl *tc,
              const Adjudication *adj, const atomic_bool *stop, GameRecord *g)
{
    Player *players[2] = { red, black };
    game_record_free(g);
    Board b;
    int fen_fullmove = 1, fen_side = RED;
    int rc = play_opening(g, o, &b, &fen_fullmove, &fen_side);
    for (int c = RED; c <= BLACK && rc == 0 && g->reason == GAME_REASON_NONE; c++) {
        Reply r;
        if (player_new_game(players[c], stop, &r) == 0)
            continue;
        if (!r.refused) {
            forfeit(g, c, &r);
            continue;
        }
        finish(g, RESULT_NONE, GAME_ABANDONED, NULL);
        snprintf(g->detail, sizeof g->detail, "%s: %s", player_name(players[c]), r.detail);
        return -1;
    }
    int64_t clock_us[2] = { colour_base_ms(tc, RED) * 1000, colour_base_ms(tc, BLACK) * 1000 };
    AdjudicationState adj_state = { 0, 0, 0 };
    while (rc == 0 && g->reason == GAME_REASON_NONE) {
        Outcome out = rules_outcome(&b);
        if (out.result != RESULT_NONE) {
            finish(g, out.result, rules_reason(out.reason), NULL);
            break;
        }
        if (stop && atomic_load(stop)) {
            finish(g, RESULT_NONE, GAME_ABANDONED, NULL);
            break;
        }
        if (adj->max_plies > 0 && g->count >= adj->max_plies) {
            finish(g, RESULT_DRAW, GAME_MAX_LENGTH, NULL);
            break;
        }
        int us = b.side;
        Reply r;
        think(players[us], g, &b, tc, clock_us, stop, &r);
        g->search_us += r.time_us;
        if (r.fault != GAME_REASON_NONE) {
            forfeit(g, us, &r);
            break;
        }
        if (!tc->nodes && tc->depth <= 0) {
            clock_us[us] -= r.time_us;
            if (clock_us[us] < 0)
                clock_us[us] = 0;
            clock_us[us] += colour_inc_ms(tc, us) * 1000;
        }
        int fullmove = fen_fullmove + (g->count + fen_side) / 2;
        GameMove gm = { r.move, false, r.has_score, r.score, r.depth, r.time_us };
        rc = game_record_push(g, &gm);
        board_make(&b, r.move);
        GameReason why = GAME_REASON_NONE;
        GameResult adjudged = adjudication_update(&adj_state, adj, us, r.has_score, r.score,
                                                  fullmove, &why);
        if (adjudged != RESULT_NONE && rules_outcome(&b).result == RESULT_NONE)
            finish(g, adjudged, why, NULL);
    }
    if (rc != 0)
        snprintf(g->detail, sizeof g->detail, "out of memory for the game's record");
    return rc;
}

#include "rules.h"

#include "movegen.h"

RepetitionStatus rules_repetition(const Board *b, int occurrences)
{
    const State *st = b->states;
    int top = b->top;
    int limit = st[top].rule60 < top ? st[top].rule60 : top;
    int seen = 1;
    for (int d = 4; d <= limit; d += 2) {
        if (st[top - d].key != st[top].key || ++seen < occurrences)
            continue;
        /* The moves leading to states top-d+1 .. top; the last one was the opponent's. */
        bool they_always_check = true, we_always_check = true;
        for (int i = 0; i < d; i++) {
            if (st[top - i].check)
                continue;
            if (i % 2 == 0)
                they_always_check = false;
            else
                we_always_check = false;
        }
        if (they_always_check && !we_always_check)
            return REP_WIN;
        if (we_always_check && !they_always_check)
            return REP_LOSS;
        return REP_DRAW;
    }
    return REP_NONE;
}

static Outcome win_for(int color, ResultReason reason)
{
    Outcome o = { color == RED ? RESULT_RED_WINS : RESULT_BLACK_WINS, reason };
    return o;
}

Outcome rules_outcome(Board *b)
{
    Outcome o = { RESULT_NONE, REASON_NONE };
    int us = b->side;
    if (movegen_count_legal(b) == 0)
        return win_for(us ^ 1, board_in_check(b) ? REASON_CHECKMATE : REASON_STALEMATE);
    switch (rules_repetition(b, 3)) {
    case REP_WIN:
        return win_for(us, REASON_PERPETUAL_CHECK);
    case REP_LOSS:
        return win_for(us ^ 1, REASON_PERPETUAL_CHECK);
    case REP_DRAW:
        o.result = RESULT_DRAW;
        o.reason = REASON_REPETITION;
        return o;
    case REP_NONE:
        break;
    }
    if (board_state(b)->rule60 >= RULE_NO_CAPTURE_PLIES) {
        o.result = RESULT_DRAW;
        o.reason = REASON_NO_CAPTURE;
    }
    return o;
}

const char *rules_result_text(GameResult r)
{
    switch (r) {
    case RESULT_RED_WINS: return "1-0";
    case RESULT_BLACK_WINS: return "0-1";
    case RESULT_DRAW: return "1/2-1/2";
    case RESULT_NONE: break;
    }
    return "*";
}

const char *rules_reason_text(ResultReason r)
{
    switch (r) {
    case REASON_CHECKMATE: return "checkmate";
    case REASON_STALEMATE: return "stalemate";
    case REASON_PERPETUAL_CHECK: return "perpetual check";
    case REASON_REPETITION: return "repetition";
    case REASON_NO_CAPTURE: return "120 plies without capture";
    case REASON_NONE: break;
    }
    return "none";
}

#include "rules.h"

#include <stddef.h>
#include <string.h>

#include "movegen.h"

/* ---- chases -------------------------------------------------------------- */

/* A set of squares: bit sq % 64 of w[sq / 64]. */
typedef struct {
    uint64_t w[2];
} SquareSet;

static inline void set_add(SquareSet *s, int sq) { s->w[sq >> 6] |= 1ull << (sq & 63); }
static inline void set_del(SquareSet *s, int sq) { s->w[sq >> 6] &= ~(1ull << (sq & 63)); }
static inline bool set_has(const SquareSet *s, int sq) { return s->w[sq >> 6] >> (sq & 63) & 1; }
static inline bool set_empty(const SquareSet *s) { return !(s->w[0] | s->w[1]); }

/*
 * Piece classes for "a lesser piece attacking a greater one chases it even
 * when it is protected": a horse or cannon attacking a rook, an advisor or
 * elephant attacking a rook, horse or cannon.  Kings and pawns never chase.
 */
static const int CHASE_VALUE[PIECE_TYPES] = {
    [ADVISOR] = 1, [ELEPHANT] = 1, [PAWN] = 1, [HORSE] = 2, [CANNON] = 2, [ROOK] = 3,
};

/* The pseudo-legal captures of colour c, whichever side is to move. Can't fail. */
static void captures_of(Board *b, int c, MoveList *list)
{
    int side = b->side;
    b->side = c;
    list->count = 0;
    movegen_pseudo(b, list, GEN_CAPTURES);
    b->side = side;
}

/* Can the owner of the piece on m's to-square legally take back there after the capture m? */
static bool recapturable(Board *b, Move m)
{
    int to = move_to(m), victim_color = piece_color(b->squares[to]);
    MoveList replies;
    bool found = false;
    board_make(b, m);
    captures_of(b, victim_color, &replies);
    for (int i = 0; i < replies.count && !found; i++)
        found = move_to(replies.moves[i]) == to && board_move_safe(b, replies.moves[i]);
    board_unmake(b);
    return found;
}

/* Could the piece on `to` legally capture the piece on `from`, whichever side is to move? */
static bool can_take_back(Board *b, int to, int from)
{
    MoveList replies;
    Move back = move_make(to, from);
    captures_of(b, piece_color(b->squares[to]), &replies);
    for (int i = 0; i < replies.count; i++)
        if (replies.moves[i] == back)
            return board_move_safe(b, back);
    return false;
}

/*
 * The enemy pieces that colour c attacks "as a chase" in the current
 * position, whichever side is to move: c has a legal capture of the piece
 * by a rook, horse, cannon, advisor or elephant (a king or pawn may attack
 * freely); the piece is not the king (that is check) nor a pawn on its own
 * side of the river; and either it is worth more than the attacker, or its
 * side has no legal recapture and it is not a piece of the attacker's type
 * that could legally take the attacker back (an offered exchange).
 */
static SquareSet chased_by(Board *b, int c)
{
    SquareSet chased = { { 0, 0 } };
    MoveList attacks;
    captures_of(b, c, &attacks);
    for (int i = 0; i < attacks.count; i++) {
        Move m = attacks.moves[i];
        int from = move_from(m), to = move_to(m);
        int attacker = piece_type(b->squares[from]), victim = piece_type(b->squares[to]);
        if (attacker == KING || attacker == PAWN || victim == KING || set_has(&chased, to))
            continue;
        if (victim == PAWN && (c == RED ? sq_rank(to) >= 5 : sq_rank(to) <= 4))
            continue; /* the victim pawn has not crossed the river */
        if (!board_move_safe(b, m))
            continue;
        if (CHASE_VALUE[victim] <= CHASE_VALUE[attacker]
            && (recapturable(b, m) || (victim == attacker && can_take_back(b, to, from))))
            continue;
        set_add(&chased, to);
    }
    return chased;
}

/*
 * Which colours chased one same enemy piece with every one of their moves
 * in the last d plies of b (d even, no capture among them): bit c of the
 * result for colour c.  A move chases the pieces it newly attacks as a
 * chase (chased_by after the move, not before it), directly or by
 * discovery; a chased piece is followed as it moves along the cycle.
 * Works on a copy of the position and the cycle's states, so b is not
 * touched.
 */
static int perpetual_chasers(const Board *b, int d)
{
    Board s;
    Move moves[STATE_STACK];
    memcpy(&s, b, offsetof(Board, states));
    memcpy(s.states, &b->states[b->top - d], (size_t)(d + 1) * sizeof s.states[0]);
    s.top = d;
    for (int i = 0; i < d; i++) {
        moves[d - 1 - i] = s.states[s.top].move;
        board_unmake(&s);
    }

    SquareSet victims[2] = { { { 0, 0 } }, { { 0, 0 } } };
    bool alive[2] = { true, true };
    for (int i = 0; i < d && (alive[RED] || alive[BLACK]); i++) {
        Move m = moves[i];
        int c = s.side, from = move_from(m), to = move_to(m);
        /* the mover's pieces are the opponent's victims: follow the one that moves */
        if (set_has(&victims[c ^ 1], from)) {
            set_del(&victims[c ^ 1], from);
            set_add(&victims[c ^ 1], to);
        }
        if (!alive[c]) {
            board_make(&s, m);
            continue;
        }
        SquareSet before = chased_by(&s, c);
        board_make(&s, m);
        SquareSet now = chased_by(&s, c);
        for (int w = 0; w < 2; w++) {
            now.w[w] &= ~before.w[w];
            if (i >= 2)
                now.w[w] &= victims[c].w[w];
        }
        victims[c] = now;
        alive[c] = !set_empty(&now);
    }
    return alive[RED] | alive[BLACK] << 1;
}

/* ---- repetition ---------------------------------------------------------- */

/*
 * rules_repetition with the reason of a win or loss: perpetual check or
 * perpetual chase (REASON_REPETITION for a draw).
 */
static RepetitionStatus repetition(const Board *b, int occurrences, ResultReason *reason)
{
    const State *st = b->states;
    int top = b->top;
    int limit = st[top].rule60 < top ? st[top].rule60 : top;
    int seen = 1;
    *reason = REASON_REPETITION;
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
        if (they_always_check || we_always_check) {
            if (they_always_check == we_always_check)
                return REP_DRAW;
            *reason = REASON_PERPETUAL_CHECK;
            return they_always_check ? REP_WIN : REP_LOSS;
        }
        int chasers = perpetual_chasers(b, d);
        int us = 1 << b->side, them = 1 << (b->side ^ 1);
        if (chasers != us && chasers != them)
            return REP_DRAW;
        *reason = REASON_PERPETUAL_CHASE;
        return chasers == them ? REP_WIN : REP_LOSS;
    }
    return REP_NONE;
}

RepetitionStatus rules_repetition(const Board *b, int occurrences)
{
    ResultReason reason;
    return repetition(b, occurrences, &reason);
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
    ResultReason why;
    switch (repetition(b, 3, &why)) {
    case REP_WIN:
        return win_for(us, why);
    case REP_LOSS:
        return win_for(us ^ 1, why);
    case REP_DRAW:
        o.result = RESULT_DRAW;
        o.reason = why;
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
    case REASON_PERPETUAL_CHASE: return "perpetual chase";
    case REASON_REPETITION: return "repetition";
    case REASON_NO_CAPTURE: return "120 plies without capture";
    case REASON_NONE: break;
    }
    return "none";
}

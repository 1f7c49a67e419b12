#include "bookgen.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fen.h"
#include "movegen.h"
#include "rng.h"
#include "rules.h"
#include "search.h"

/* Classical opening lines, Red first, ICCS. */
static const char *const LINES[] = {
    "h2e2 h9g7 h0g2 i9h9 i0h0 b9c7",     /* central cannon v screen horses */
    "h2e2 h9g7 h0g2 i9h9 i0h0 b9c7 b2c2", /* five-seven cannons */
    "h2e2 h9g7 h0g2 b7f7 b0c2 b9c7",     /* v reverse palace horse */
    "h2e2 h7e7 h0g2 h9g7",               /* same-direction cannons */
    "h2e2 b7e7 h0g2 b9c7",               /* opposite-direction cannons */
    "h2e2 h9g7 h0g2 g6g5",               /* v three-step tiger */
    "b2e2 b9c7 b0c2 a9b9",               /* left central cannon */
    "c0e2 h9g7 h0g2 i9h9",               /* elephant opening */
    "c0e2 c6c5",                         /* elephant v pawn */
    "c0e2 h7e7",                         /* elephant v central cannon */
    "c3c4 b7c7",                         /* pawn opening v pawn-base cannon */
    "c3c4 c6c5",                         /* pawn v pawn */
    "g3g4 h9g7",                         /* pawn opening v horse */
    "e3e4 h9g7",                         /* central pawn */
    "h0g2 c6c5",                         /* horse opening v pawn */
    "b0c2 g6g5",                         /* horse opening, left */
    "h2d2 h9g7",                         /* cross-palace cannon */
    "b2d2 h9g7",                         /* advisor-corner cannon */
    "d0e1 h7e7",                         /* advisor opening */
};
enum {
    LINE_COUNT = sizeof LINES / sizeof LINES[0],
    MAX_LINE = 16,
    ATTEMPTS_PER_POSITION = 200,
    SENSIBLE_DEPTH = 3,      /* the search judging a random move */
    SENSIBLE_LOSS = 60,      /* a random move may lose this much against the best one */
    SENSIBLE_TRIES = 6       /* random moves tried before the best one is played */
};

static Move mirror(Move m)
{
    int from = move_from(m), to = move_to(m);
    return move_make(sq_make(FILES - 1 - sq_file(from), sq_rank(from)),
                     sq_make(FILES - 1 - sq_file(to), sq_rank(to)));
}

/* A set of Zobrist keys (open addressing, grows at half load). */
typedef struct {
    uint64_t *keys;
    size_t size, used;
} KeySet;

/* Adds key; returns 1 when new, 0 when present, -1 when out of memory. */
static int keyset_add(KeySet *s, uint64_t key)
{
    key |= 1; /* 0 marks an empty slot */
    if (2 * (s->used + 1) > s->size) {
        size_t size = s->size ? s->size * 2 : 4096;
        uint64_t *keys = calloc(size, sizeof *keys);
        if (!keys)
            return -1;
        for (size_t i = 0; i < s->size; i++) {
            if (!s->keys[i])
                continue;
            size_t j = s->keys[i] & (size - 1);
            while (keys[j])
                j = (j + 1) & (size - 1);
            keys[j] = s->keys[i];
        }
        free(s->keys);
        s->keys = keys;
        s->size = size;
    }
    size_t j = key & (s->size - 1);
    while (s->keys[j]) {
        if (s->keys[j] == key)
            return 0;
        j = (j + 1) & (s->size - 1);
    }
    s->keys[j] = key;
    s->used++;
    return 1;
}

/* Parses the hand lines once; a bad one is a programming error reported as such. */
static int parse_lines(Move lines[][MAX_LINE], int lengths[], char *err, size_t errlen)
{
    for (int i = 0; i < LINE_COUNT; i++) {
        Board b;
        board_startpos(&b);
        char text[128], msg[128];
        snprintf(text, sizeof text, "%s", LINES[i]);
        lengths[i] = 0;
        for (char *save = NULL, *tok = strtok_r(text, " ", &save); tok;
             tok = strtok_r(NULL, " ", &save)) {
            if (lengths[i] == MAX_LINE || move_parse(&b, tok, &lines[i][lengths[i]], msg, sizeof msg) != 0) {
                snprintf(err, errlen, "internal: opening line '%s' at '%s'", LINES[i], tok);
                return -1;
            }
            board_make(&b, lines[i][lengths[i]++]);
        }
    }
    return 0;
}

static int search_score(Engine *e, const Board *b, int depth, Move *best)
{
    SearchLimits limits;
    search_limits_init(&limits);
    limits.depth = depth;
    SearchResult res;
    engine_search(e, b, &limits, NULL, NULL, &res);
    if (best)
        *best = res.best;
    return res.score;
}

/*
 * A random legal move that a shallow search does not rate much worse than
 * its best move (and that does not simply take back the side's last move);
 * the best move when none of a few random tries qualifies.
 */
static Move sensible_random_move(Engine *e, Rng *rng, Board *b)
{
    MoveList list;
    movegen_legal(b, &list);
    Move best;
    int best_score = search_score(e, b, SENSIBLE_DEPTH, &best);
    Move last = b->top >= 2 ? b->states[b->top - 1].move : MOVE_NONE;
    for (int t = 0; t < SENSIBLE_TRIES; t++) {
        Move m = list.moves[rng_below(rng, (uint32_t)list.count)];
        if (last != MOVE_NONE && move_from(m) == move_to(last) && move_to(m) == move_from(last))
            continue;
        board_make(b, m);
        int score = -search_score(e, b, SENSIBLE_DEPTH - 1, NULL);
        board_unmake(b);
        if (score >= best_score - SENSIBLE_LOSS)
            return m;
    }
    return best;
}

/* Plays a candidate line into b and writes its moves' text to text. False when it ends the game early. */
static bool play_candidate(Engine *e, Rng *rng, const BookGenConfig *cfg, Move lines[][MAX_LINE],
                           const int lengths[], Board *b, char *text, size_t len)
{
    int line = (int)rng_below(rng, LINE_COUNT);
    bool flip = rng_below(rng, 2) == 1;
    int plies = cfg->min_plies + (int)rng_below(rng, (uint32_t)(cfg->max_plies - cfg->min_plies + 1));
    board_startpos(b);
    size_t used = 0;
    text[0] = '\0';
    for (int i = 0; i < plies; i++) {
        if (rules_outcome(b).result != RESULT_NONE)
            return false;
        Move m;
        if (i < lengths[line])
            m = flip ? mirror(lines[line][i]) : lines[line][i];
        else
            m = sensible_random_move(e, rng, b);
        char mt[8];
        move_text(m, mt);
        used += (size_t)snprintf(text + used, len - used, "%s%s", used ? " " : "", mt);
        board_make(b, m);
    }
    return rules_outcome(b).result == RESULT_NONE && !board_in_check(b);
}

int bookgen_run(const BookGenConfig *cfg, FILE *out, char *err, size_t errlen)
{
    Move lines[LINE_COUNT][MAX_LINE];
    int lengths[LINE_COUNT];
    if (parse_lines(lines, lengths, err, errlen) != 0)
        return -1;
    Engine *engine = engine_new();
    KeySet seen = { NULL, 0, 0 };
    if (!engine || engine_set_hash(engine, 8) != 0) {
        engine_destroy(&engine);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    Rng rng;
    rng_seed(&rng, cfg->seed);
    int written = 0, rc = 0;
    for (long attempt = 0; written < cfg->count && rc == 0; attempt++) {
        if (attempt >= (long)cfg->count * ATTEMPTS_PER_POSITION) {
            snprintf(err, errlen, "only %d of %d positions found in %ld attempts (raise "
                     "--max-score or widen --plies)", written, cfg->count, attempt);
            rc = -1;
            break;
        }
        Board b;
        char moves[MAX_PLY * 6];
        engine_clear(engine);
        if (!play_candidate(engine, &rng, cfg, lines, lengths, &b, moves, sizeof moves))
            continue;
        int fresh = keyset_add(&seen, board_key(&b));
        if (fresh <= 0) {
            if (fresh < 0) {
                snprintf(err, errlen, "out of memory");
                rc = -1;
            }
            continue;
        }
        engine_clear(engine);
        int score = search_score(engine, &b, cfg->depth, NULL);
        if (abs(score) > cfg->max_score)
            continue;
        char fen[FEN_MAX];
        fen_write(&b, fen);
        if (fprintf(out, "%s # %s (%+d)\n", fen, moves, score) < 0) {
            snprintf(err, errlen, "write error");
            rc = -1;
        }
        written++;
    }
    free(seen.keys);
    engine_destroy(&engine);
    return rc;
}

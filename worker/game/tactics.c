#include "tactics.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "book.h"
#include "fen.h"
#include "pgn.h"
#include "player.h"
#include "search.h"

/* ---- blunders ----------------------------------------------------------- */

int blunders_scan(const PgnGame *g, const char *player, const BlunderRule *rule,
                  void (*found)(void *ctx, const Blunder *b), void *ctx)
{
    Board b;
    char err[160];
    if (fen_parse(&b, g->rec.fen, FEN_GAME, err, sizeof err) != 0)
        return 0;
    int first = b.side; /* the colour of ply 0's mover */
    int count = 0;
    for (int colour = RED; colour <= BLACK; colour++) {
        if (strcmp(colour == RED ? g->red : g->black, player) != 0)
            continue;
        GameResult lost = colour == RED ? RESULT_BLACK_WINS : RESULT_RED_WINS;
        for (int i = colour == first ? 0 : 1; i < g->rec.count; i += 2) {
            const GameMove *m = &g->rec.moves[i];
            if (m->book || !m->has_score || m->score < rule->before)
                continue;
            int after;
            if (i + 2 < g->rec.count) {
                const GameMove *next = &g->rec.moves[i + 2];
                if (next->book || !next->has_score)
                    continue;
                after = next->score;
            } else if (i + 2 == g->rec.count && g->rec.result == lost) {
                after = -MATE; /* the opponent's reply ended the game */
            } else {
                continue;
            }
            if (after > rule->after)
                continue;
            Blunder bl = { g, i, m->score, after };
            found(ctx, &bl);
            count++;
        }
    }
    return count;
}

static void score_text(int score, char *out, size_t len)
{
    if (score <= -MATE)
        snprintf(out, len, "lost");
    else if (score >= MATE_BOUND)
        snprintf(out, len, "+M%d", (MATE - score + 1) / 2);
    else if (score <= -MATE_BOUND)
        snprintf(out, len, "-M%d", (MATE + score) / 2);
    else
        snprintf(out, len, "%+.2f", score / 100.0);
}

enum { BLUNDER_HISTORY = 200 };

void blunder_line(const Blunder *bl, const char *source, char out[SUITE_LINE_MAX])
{
    const GameRecord *r = &bl->game->rec;
    Board b;
    char err[160], fen[FEN_MAX], mv[8], s0[16], s1[16];
    fen_parse(&b, r->fen, FEN_GAME, err, sizeof err); /* blunders_scan read it */
    int from = bl->ply > BLUNDER_HISTORY ? bl->ply - BLUNDER_HISTORY : 0;
    for (int i = 0; i < from; i++)
        board_make(&b, r->moves[i].move);
    fen_write(&b, fen);
    size_t len = (size_t)snprintf(out, SUITE_LINE_MAX, "%s%s", fen, from < bl->ply ? " moves" : "");
    for (int i = from; i < bl->ply; i++) {
        move_text(r->moves[i].move, mv);
        len += (size_t)snprintf(out + len, SUITE_LINE_MAX - len, " %s", mv);
    }
    move_text(r->moves[bl->ply].move, mv);
    score_text(bl->before, s0, sizeof s0);
    score_text(bl->after, s1, sizeof s1);
    snprintf(out + len, SUITE_LINE_MAX - len, " ; am %s; id \"%s round %d ply %d: %s then %s\";", mv,
             source, bl->game->round, bl->ply + 1, s0, s1);
}

/* ---- suites ------------------------------------------------------------- */

enum { SUITE_MAX_TARGETS = 8 };

typedef struct {
    Move am[SUITE_MAX_TARGETS], bm[SUITE_MAX_TARGETS];
    int n_am, n_bm;
    char id[160];
} Targets;

struct Suite {
    Book *book;            /* the positions */
    Targets *targets;      /* one per position */
};

/*
 * The EPD operations of a line ("am X Y; bm Z; id \"...\";") for the
 * position b.  Returns 0, or -1 with a message.
 */
static int parse_operations(const char *ops, Board *b, Targets *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    const char *p = ops;
    while (*(p += strspn(p, " \t;"))) {
        size_t n = strcspn(p, " \t;");
        char op[16];
        snprintf(op, sizeof op, "%.*s", (int)(n < sizeof op ? n : sizeof op - 1), p);
        p += n;
        p += strspn(p, " \t");
        if (strcmp(op, "id") == 0 || strcmp(op, "c0") == 0) {
            if (*p != '"' || !strchr(p + 1, '"')) {
                snprintf(err, errlen, "%s: a quoted text expected", op);
                return -1;
            }
            const char *end = strchr(p + 1, '"');
            if (strcmp(op, "id") == 0)
                snprintf(t->id, sizeof t->id, "%.*s", (int)(end - p - 1), p + 1);
            p = end + 1;
            continue;
        }
        bool avoid = strcmp(op, "am") == 0;
        if (!avoid && strcmp(op, "bm") != 0) {
            snprintf(err, errlen, "unknown operation '%s' (am, bm, id and c0 are read)", op);
            return -1;
        }
        int *count = avoid ? &t->n_am : &t->n_bm;
        Move *list = avoid ? t->am : t->bm;
        while (*p && *p != ';') {
            size_t len = strcspn(p, " \t;");
            char text[16], msg[160];
            snprintf(text, sizeof text, "%.*s", (int)(len < sizeof text ? len : sizeof text - 1), p);
            if (*count == SUITE_MAX_TARGETS) {
                snprintf(err, errlen, "%s: more than %d moves", op, SUITE_MAX_TARGETS);
                return -1;
            }
            if (len >= sizeof text || move_parse(b, text, &list[*count], msg, sizeof msg) != 0) {
                snprintf(err, errlen, "%s '%.*s': %s", op, (int)len, p, len >= sizeof text ? "not a move" : msg);
                return -1;
            }
            ++*count;
            p += len;
            p += strspn(p, " \t");
        }
        if (*count == 0) {
            snprintf(err, errlen, "%s without a move", op);
            return -1;
        }
    }
    if (t->n_am + t->n_bm == 0) {
        snprintf(err, errlen, "no am or bm operation: nothing to test");
        return -1;
    }
    return 0;
}

Suite *suite_parse(const char *text, const char *name, char *err, size_t errlen)
{
    Suite *s = calloc(1, sizeof *s);
    if (!s || !(s->book = book_parse(text, name, err, errlen))) {
        if (!s)
            snprintf(err, errlen, "%s: out of memory", name);
        free(s);
        return NULL;
    }
    if (!(s->targets = calloc((size_t)book_size(s->book), sizeof *s->targets))) {
        snprintf(err, errlen, "%s: out of memory", name);
        suite_destroy(&s);
        return NULL;
    }
    /* The book read the positions; the operations follow them on the same lines. */
    int number = 1, index = 0;
    for (const char *line = text; *line; number++) {
        size_t len = strcspn(line, "\n"), head = strcspn(line, "#;\r\n");
        if (strspn(line, " \t") < head) {
            char ops[SUITE_LINE_MAX], msg[256];
            size_t end = strcspn(line, "#\r\n");
            snprintf(ops, sizeof ops, "%.*s", (int)(end - head < sizeof ops ? end - head : sizeof ops - 1), line + head);
            Board b;
            book_board(book_opening(s->book, index), &b);
            if (parse_operations(ops, &b, &s->targets[index], msg, sizeof msg) != 0) {
                snprintf(err, errlen, "%s:%d: %s", name, number, msg);
                suite_destroy(&s);
                return NULL;
            }
            index++;
        }
        line += len + (line[len] == '\n');
    }
    return s;
}

Suite *suite_load(const char *path, char *err, size_t errlen)
{
    char *text = book_read_text(path, err, errlen);
    Suite *s = text ? suite_parse(text, path, err, errlen) : NULL;
    free(text);
    return s;
}

void suite_destroy(Suite **sp)
{
    Suite *s = *sp;
    if (!s)
        return;
    book_destroy(&s->book);
    free(s->targets);
    free(s);
    *sp = NULL;
}

int suite_size(const Suite *s)
{
    return book_size(s->book);
}

const char *suite_id(const Suite *s, int i)
{
    return s->targets[i].id;
}

static bool listed(const Move *list, int n, Move m)
{
    for (int i = 0; i < n; i++)
        if (list[i] == m)
            return true;
    return false;
}

/* ---- running a suite ---------------------------------------------------- */

typedef struct {
    const Suite *suite;
    const PlayerSpec *spec;
    const TacticsConfig *cfg;
    TacticResult *results;
    atomic_int next;
    atomic_bool *ready;    /* per position */
    atomic_bool stop;      /* the stop flag as the players see it */
    atomic_int failed;     /* a thread's player could not be created */
} RunState;

static void solve(RunState *st, Player *player, int i)
{
    const Opening *o = book_opening(st->suite->book, i);
    const Targets *t = &st->suite->targets[i];
    TacticResult *r = &st->results[i];
    memset(r, 0, sizeof *r);
    r->index = i;
    r->move = MOVE_NONE;
    GameMove history[BOOK_TEXT_MAX / 5];
    for (int m = 0; m < o->count; m++)
        history[m] = (GameMove){ .move = o->moves[m], .book = true };
    Board b;
    book_board(o, &b);
    Reply reply;
    if (player_new_game(player, &st->stop, &reply) == 0) {
        GameView view = { o->fen, history, o->count, &b };
        ThinkLimits limits = { .nodes = st->cfg->nodes, .depth = st->cfg->depth, .stop = &st->stop };
        limits.deadline_us = INT64_MAX;
        player_think(player, &view, &limits, &reply);
    }
    r->fault = reply.fault;
    snprintf(r->detail, sizeof r->detail, "%s", reply.detail);
    if (reply.fault == GAME_REASON_NONE) {
        r->move = reply.move;
        r->has_score = reply.has_score;
        r->score = reply.score;
        r->depth = reply.depth;
        r->time_us = reply.time_us;
        r->pass = t->n_bm ? listed(t->bm, t->n_bm, reply.move) : !listed(t->am, t->n_am, reply.move);
    }
}

static void *run_thread(void *arg)
{
    RunState *st = arg;
    Player *player = player_new(st->spec);
    if (!player)
        atomic_store(&st->failed, 1);
    for (int i; (i = atomic_fetch_add(&st->next, 1)) < suite_size(st->suite);) {
        if (player && !atomic_load(&st->stop))
            solve(st, player, i);
        else {
            st->results[i] = (TacticResult){ .index = i, .move = MOVE_NONE, .fault = GAME_ABANDONED };
            snprintf(st->results[i].detail, sizeof st->results[i].detail, "%s",
                     player ? "stopped" : "the player could not be created");
        }
        atomic_store(&st->ready[i], true);
    }
    player_destroy(&player);
    return NULL;
}

int tactics_run(const Suite *s, const PlayerSpec *spec, const TacticsConfig *cfg,
                void (*done)(void *ctx, const TacticResult *r), void *ctx, char *err, size_t errlen)
{
    int n = suite_size(s), threads = cfg->threads > 0 ? cfg->threads : 1;
    if (threads > n)
        threads = n;
    RunState st = { .suite = s, .spec = spec, .cfg = cfg };
    atomic_init(&st.next, 0);
    atomic_init(&st.stop, false);
    atomic_init(&st.failed, 0);
    st.results = calloc((size_t)n, sizeof *st.results);
    st.ready = calloc((size_t)n, sizeof *st.ready);
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    if (!st.results || !st.ready || !tid) {
        free(st.results);
        free(st.ready);
        free(tid);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++)
        atomic_init(&st.ready[i], false);
    int started = 0;
    while (started < threads && pthread_create(&tid[started], NULL, run_thread, &st) == 0)
        started++;
    if (started == 0)
        run_thread(&st); /* no thread: this one does the work */
    int passed = 0;
    for (int i = 0; i < n; i++) {
        while (!atomic_load(&st.ready[i])) {
            if (cfg->stop && *cfg->stop)
                atomic_store(&st.stop, true);
            nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
        }
        passed += st.results[i].pass;
        done(ctx, &st.results[i]);
    }
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    free(st.results);
    free(st.ready);
    free(tid);
    if (atomic_load(&st.failed)) {
        snprintf(err, errlen, "a player could not be created (out of memory?)");
        return -1;
    }
    return passed;
}

#include "protocol.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench.h"
#include "fen.h"
#include "movegen.h"
#include "params.h"
#include "perft.h"
#include "search.h"
#include "tt.h"

#define ENGINE_NAME "Xiangqi Forge 0.1"
#define ENGINE_AUTHOR "the Xiangqi Forge developers"

enum { DIALECT_UCI, DIALECT_UCCI };
enum { MAX_LINE = 1 << 20, MAX_TOKENS = 4096, MAX_OVERHEAD = 5000, MAX_PERFT_DEPTH = 8 };

typedef struct {
    FILE *out;
    pthread_mutex_t out_lock;
    int dialect;
    Engine *engine;
    Board board;
    int banned_count;
    Move banned[MAX_MOVES];
    int move_overhead;
    int multipv;   /* MultiPV: lines reported per iteration */
    bool millisec; /* UCCI: times in milliseconds instead of seconds */
    /* The running search, if any. */
    bool thread_live;
    atomic_bool search_done;
    pthread_t thread;
    Board search_board;
    SearchLimits limits;
} Session;

typedef struct {
    int count;
    char *tok[MAX_TOKENS];
} Tokens;

static void say(Session *s, const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&s->out_lock);
    va_start(ap, fmt);
    vfprintf(s->out, fmt, ap);
    va_end(ap);
    fputc('\n', s->out);
    fflush(s->out);
    pthread_mutex_unlock(&s->out_lock);
}

#define error_line(s, ...) say((s), "info string error: " __VA_ARGS__)

/* Parses a whole decimal integer in [min, max]. */
static bool parse_int(const char *text, int64_t min, int64_t max, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

/* ---- the search thread ---- */

static void report(void *ctx, const SearchInfo *info)
{
    Session *s = ctx;
    char line[MAX_PLY * 5 + 256];
    char score[32];
    int n;
    /* UCCI 1.x has no MultiPV: its GUIs get the best line only. */
    if (s->dialect == DIALECT_UCCI && info->multipv > 1)
        return;
    if (s->dialect == DIALECT_UCI) {
        search_score_text(info->score, score, sizeof score);
        uint64_t nps = info->time_ms > 0 ? info->nodes * 1000 / (uint64_t)info->time_ms : info->nodes;
        char rank[24] = "";
        if (info->multipv)
            snprintf(rank, sizeof rank, " multipv %d", info->multipv);
        n = snprintf(line, sizeof line,
                     "info depth %d seldepth %d%s score %s nodes %" PRIu64 " nps %" PRIu64
                     " time %" PRId64 " hashfull %d pv",
                     info->depth, info->seldepth, rank, score, info->nodes, nps, info->time_ms, info->hashfull);
    } else {
        n = snprintf(line, sizeof line, "info depth %d score %d time %" PRId64 " nodes %" PRIu64 " pv",
                     info->depth, info->score, info->time_ms, info->nodes);
    }
    for (int i = 0; i < info->pv_length; i++) {
        line[n++] = ' ';
        move_text(info->pv[i], line + n);
        n += 4;
    }
    line[n] = '\0';
    say(s, "%s", line);
}

static void *search_thread(void *arg)
{
    Session *s = arg;
    SearchResult r;
    engine_search(s->engine, &s->search_board, &s->limits, report, s, &r);
    /* Done before bestmove is written: a GUI may send the next command as soon as it reads it
     * (search_running() then joins this thread, which only has the line left to print). */
    atomic_store(&s->search_done, true);
    char best[8], ponder[8];
    if (r.best == MOVE_NONE) {
        say(s, s->dialect == DIALECT_UCI ? "bestmove (none)" : "nobestmove");
    } else {
        move_text(r.best, best);
        if (r.ponder != MOVE_NONE) {
            move_text(r.ponder, ponder);
            say(s, "bestmove %s ponder %s", best, ponder);
        } else {
            say(s, "bestmove %s", best);
        }
    }
    return NULL;
}

/* Joins a finished search; returns true when a search is still running. */
static bool search_running(Session *s)
{
    if (!s->thread_live)
        return false;
    if (!atomic_load(&s->search_done))
        return true;
    pthread_join(s->thread, NULL);
    s->thread_live = false;
    return false;
}

static void stop_search(Session *s)
{
    if (!s->thread_live)
        return;
    engine_stop(s->engine);
    pthread_join(s->thread, NULL);
    s->thread_live = false;
}

/* ---- commands ---- */

static void cmd_uci(Session *s, const Tokens *t)
{
    (void)t;
    s->dialect = DIALECT_UCI;
    say(s, "id name " ENGINE_NAME);
    say(s, "id author " ENGINE_AUTHOR);
    say(s, "option name Hash type spin default %d min 1 max %d", TT_DEFAULT_MB, TT_MAX_MB);
    say(s, "option name Clear Hash type button");
    say(s, "option name Move Overhead type spin default 10 min 0 max %d", MAX_OVERHEAD);
    say(s, "option name UseNNUE type check default %s", engine_net(s->engine) ? "true" : "false");
    say(s, "option name EvalFile type string default <empty>");
    say(s, "option name MultiPV type spin default 1 min 1 max %d", MULTIPV_MAX);
    say(s, "option name Threads type spin default 1 min 1 max %d", ENGINE_MAX_THREADS);
    Params d;
    params_default(&d);
    for (int i = 0; i < PARAM_COUNT; i++)
        say(s, "option name %s type spin default %d min %d max %d", PARAM_INFO[i].name,
            params_value(&d, &PARAM_INFO[i]), PARAM_INFO[i].min, PARAM_INFO[i].max);
    say(s, "uciok");
}

static void cmd_ucci(Session *s, const Tokens *t)
{
    (void)t;
    s->dialect = DIALECT_UCCI;
    say(s, "id name " ENGINE_NAME);
    say(s, "id author " ENGINE_AUTHOR);
    say(s, "option usemillisec type check default false");
    say(s, "option hashsize type spin min 1 max %d default %d", TT_MAX_MB, TT_DEFAULT_MB);
    say(s, "option Move Overhead type spin min 0 max %d default 10", MAX_OVERHEAD);
    say(s, "option UseNNUE type check default %s", engine_net(s->engine) ? "true" : "false");
    say(s, "option EvalFile type string default <empty>");
    say(s, "option Threads type spin min 1 max %d default 1", ENGINE_MAX_THREADS);
    Params d;
    params_default(&d);
    for (int i = 0; i < PARAM_COUNT; i++)
        say(s, "option %s type spin min %d max %d default %d", PARAM_INFO[i].name, PARAM_INFO[i].min,
            PARAM_INFO[i].max, params_value(&d, &PARAM_INFO[i]));
    say(s, "ucciok");
}

static void cmd_isready(Session *s, const Tokens *t)
{
    (void)t;
    say(s, "readyok");
}

static void cmd_newgame(Session *s, const Tokens *t)
{
    (void)t;
    engine_clear(s->engine);
    board_startpos(&s->board);
    s->banned_count = 0;
}

/* Printable rendering of a token for error messages. */
static void clean_text(const char *in, char *out, size_t len)
{
    size_t n = 0;
    for (; *in && n + 1 < len; in++)
        out[n++] = isprint((unsigned char)*in) ? *in : '?';
    out[n] = '\0';
}

/* A check option's value: true or false. */
static bool parse_check(const char *value, bool *out)
{
    if (!value || (strcasecmp(value, "true") && strcasecmp(value, "false")))
        return false;
    *out = !strcasecmp(value, "true");
    return true;
}

static void set_option(Session *s, const char *name, const char *value)
{
    int64_t v;
    bool on;
    if (!strcasecmp(name, "Hash") || !strcasecmp(name, "hashsize")) {
        if (!value || !parse_int(value, 1, TT_MAX_MB, &v))
            error_line(s, "option %s needs a value from 1 to %d (MB), got '%s'", name, TT_MAX_MB,
                       value ? value : "");
        else if (engine_set_hash(s->engine, (size_t)v) != 0)
            error_line(s, "cannot allocate %" PRId64 " MB of hash; the old table is kept", v);
    } else if (!strcasecmp(name, "Clear Hash")) {
        engine_clear(s->engine);
    } else if (!strcasecmp(name, "Move Overhead")) {
        if (!value || !parse_int(value, 0, MAX_OVERHEAD, &v))
            error_line(s, "option Move Overhead needs a value from 0 to %d, got '%s'", MAX_OVERHEAD,
                       value ? value : "");
        else
            s->move_overhead = (int)v;
    } else if (!strcasecmp(name, "Threads")) {
        /* Never during a search: setoption is refused then (see the command table). */
        if (!value || !parse_int(value, 1, ENGINE_MAX_THREADS, &v))
            error_line(s, "option Threads needs a value from 1 to %d, got '%s'", ENGINE_MAX_THREADS,
                       value ? value : "");
        else if (engine_set_threads(s->engine, (int)v) != 0)
            error_line(s, "out of memory for %" PRId64 " threads; %d now", v, engine_threads(s->engine));
    } else if (!strcasecmp(name, "MultiPV")) {
        if (!value || !parse_int(value, 1, MULTIPV_MAX, &v))
            error_line(s, "option MultiPV needs a value from 1 to %d, got '%s'", MULTIPV_MAX, value ? value : "");
        else
            s->multipv = (int)v;
    } else if (!strcasecmp(name, "usemillisec")) {
        if (!parse_check(value, &on))
            error_line(s, "option usemillisec needs true or false, got '%s'", value ? value : "");
        else
            s->millisec = on;
    } else if (!strcasecmp(name, "UseNNUE")) {
        /* With a net: evaluate with it (true) or by hand (false); without one, nothing changes. */
        if (!parse_check(value, &on))
            error_line(s, "option UseNNUE needs true or false, got '%s'", value ? value : "");
        else
            engine_set_use_nnue(s->engine, on);
    } else if (!strcasecmp(name, "EvalFile")) {
        /* A net file (docs/nnue.md); one the reader refuses leaves the engine's evaluation as it was. */
        char err[512];
        if (!value || !*value || !strcmp(value, "<empty>"))
            error_line(s, "option EvalFile needs a net file");
        else if (engine_load_net(s->engine, value, err, sizeof err) != 0)
            error_line(s, "EvalFile: %s; the engine keeps the evaluation it had", err);
        else
            say(s, "info string EvalFile: net loaded from %s", value);
    } else if (params_find_nocase(name)) {
        /* An engine parameter (params.def): set it by its canonical name. */
        Params next = *engine_params(s->engine);
        char err[200];
        if (params_set(&next, params_find_nocase(name)->name, value ? value : "", err, sizeof err) != 0)
            error_line(s, "%s", err);
        else
            engine_set_params(s->engine, &next);
    } else {
        char shown[64];
        clean_text(name, shown, sizeof shown);
        error_line(s, "unknown option '%s'", shown);
    }
}

/* Joins tokens [from, to) with single spaces into buf. */
static void join_tokens(const Tokens *t, int from, int to, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = from; i < to; i++) {
        if (i > from)
            strncat(buf, " ", len - strlen(buf) - 1);
        strncat(buf, t->tok[i], len - strlen(buf) - 1);
    }
}

static void cmd_setoption(Session *s, const Tokens *t)
{
    char name[256], value[256];
    if (t->count < 2) {
        error_line(s, "setoption needs an option name");
        return;
    }
    if (!strcmp(t->tok[1], "name")) {
        int v = 2;
        while (v < t->count && strcmp(t->tok[v], "value"))
            v++;
        join_tokens(t, 2, v, name, sizeof name);
        join_tokens(t, v + 1, t->count, value, sizeof value);
        set_option(s, name, v < t->count ? value : NULL);
    } else {
        /* UCCI: setoption <name> <value>; the name may have spaces, the value has none. */
        int last = t->count > 2 ? t->count - 1 : t->count;
        join_tokens(t, 1, last, name, sizeof name);
        set_option(s, name, last < t->count ? t->tok[last] : NULL);
    }
}

/* Applies tokens [from, count) as moves to b; message in err on failure. */
static bool apply_moves(Board *b, const Tokens *t, int from, char *err, size_t errlen)
{
    for (int i = from; i < t->count; i++) {
        Move m;
        if (move_parse(b, t->tok[i], &m, err, errlen) != 0)
            return false;
        board_make(b, m);
    }
    return true;
}

static void cmd_position(Session *s, const Tokens *t)
{
    char err[256], fen[512];
    int i = 2;
    Board *b = malloc(sizeof *b);
    if (!b) {
        error_line(s, "out of memory");
        return;
    }
    if (t->count >= 2 && !strcmp(t->tok[1], "startpos")) {
        board_startpos(b);
    } else if (t->count >= 3 && !strcmp(t->tok[1], "fen")) {
        while (i < t->count && strcmp(t->tok[i], "moves"))
            i++;
        join_tokens(t, 2, i, fen, sizeof fen);
        if (fen_parse(b, fen, FEN_GAME, err, sizeof err) != 0) {
            error_line(s, "bad FEN: %s", err);
            free(b);
            return;
        }
    } else {
        error_line(s, "position needs 'startpos' or 'fen <FEN>'");
        free(b);
        return;
    }
    if (i < t->count && strcmp(t->tok[i], "moves")) {
        error_line(s, "unexpected '%s' after the position (expected 'moves')", t->tok[i]);
    } else if (!apply_moves(b, t, i + 1, err, sizeof err)) {
        error_line(s, "%s", err);
    } else {
        s->board = *b;
        s->banned_count = 0;
    }
    free(b);
}

static void cmd_banmoves(Session *s, const Tokens *t)
{
    Move moves[MAX_MOVES];
    char err[128];
    int n = 0;
    for (int i = 1; i < t->count; i++) {
        if (n == MAX_MOVES || move_parse(&s->board, t->tok[i], &moves[n], err, sizeof err) != 0) {
            error_line(s, "banmoves: %s", n == MAX_MOVES ? "too many moves" : err);
            return;
        }
        n++;
    }
    memcpy(s->banned, moves, sizeof(Move) * (size_t)n);
    s->banned_count = n;
}

static void cmd_perft(Session *s, const Tokens *t, int at)
{
    int64_t depth;
    if (at + 1 >= t->count || !parse_int(t->tok[at + 1], 1, MAX_PERFT_DEPTH, &depth)) {
        error_line(s, "go perft needs a depth from 1 to %d", MAX_PERFT_DEPTH);
        return;
    }
    Board b = s->board;
    pthread_mutex_lock(&s->out_lock);
    perft_divide(&b, (int)depth, s->out);
    pthread_mutex_unlock(&s->out_lock);
}

/* Reads a time value: milliseconds, or UCCI seconds unless usemillisec. */
static bool parse_time(const Session *s, const char *text, int64_t *ms)
{
    int64_t scale = s->dialect == DIALECT_UCCI && !s->millisec ? 1000 : 1;
    if (!parse_int(text, -INT64_C(1000000000), INT64_C(1000000000), ms))
        return false;
    *ms *= scale;
    return true;
}

/* The words that start a go parameter (where a searchmoves list ends). */
static bool go_keyword(const char *w)
{
    static const char *const KEYWORDS[] = { "perft", "infinite", "ponder", "draw", "searchmoves", "depth",
                                            "mate", "nodes", "movetime", "movestogo", "oppmovestogo", "wtime",
                                            "btime", "winc", "binc", "time", "opptime", "increment",
                                            "oppincrement" };
    for (size_t i = 0; i < sizeof KEYWORDS / sizeof KEYWORDS[0]; i++)
        if (!strcmp(w, KEYWORDS[i]))
            return true;
    return false;
}

static void cmd_go(Session *s, const Tokens *t)
{
    SearchLimits l;
    search_limits_init(&l);
    l.overhead = s->move_overhead;
    l.multipv = s->multipv;
    int us = s->board.side, them = us ^ 1;
    for (int i = 1; i < t->count; i++) {
        const char *k = t->tok[i];
        const char *v = i + 1 < t->count ? t->tok[i + 1] : NULL;
        int64_t n = 0;
        bool ok = true, has_value = true;
        if (!strcmp(k, "perft")) {
            cmd_perft(s, t, i);
            return;
        } else if (!strcmp(k, "infinite")) {
            l.infinite = true;
            has_value = false;
        } else if (!strcmp(k, "ponder")) {
            l.ponder = true;
            has_value = false;
        } else if (!strcmp(k, "searchmoves")) {
            /*
             * UCI: the moves up to the next go keyword.  A word that is not
             * a legal move refuses the whole go: searching all moves when a
             * GUI asked for a few would answer a question it did not ask.
             */
            has_value = false;
            while (i + 1 < t->count && !go_keyword(t->tok[i + 1])) {
                char err[128];
                if (l.only_count == MAX_MOVES
                    || move_parse(&s->board, t->tok[i + 1], &l.only[l.only_count], err, sizeof err) != 0) {
                    error_line(s, "go searchmoves: %s", l.only_count == MAX_MOVES ? "too many moves" : err);
                    return;
                }
                l.only_count++;
                i++;
            }
            if (!l.only_count) {
                error_line(s, "go searchmoves needs at least one move");
                return;
            }
        } else if (!strcmp(k, "draw")) {
            has_value = false; /* UCCI: the opponent offers a draw; we play on */
        } else if (!v) {
            ok = false;
        } else if (!strcmp(k, "depth")) {
            ok = parse_int(v, 1, 127, &n);
            l.depth = (int)n;
        } else if (!strcmp(k, "mate")) {
            /* UCI: search for a mate in this many moves (no limit of its own: stop, depth or the clock ends it) */
            ok = parse_int(v, 1, MAX_PLY / 2, &n);
            l.mate = (int)n;
        } else if (!strcmp(k, "nodes")) {
            ok = parse_int(v, 1, INT64_MAX, &n);
            l.nodes = (uint64_t)n;
        } else if (!strcmp(k, "movetime")) {
            ok = parse_int(v, 1, INT64_C(1000000000), &l.movetime);
        } else if (!strcmp(k, "movestogo") || !strcmp(k, "oppmovestogo")) {
            ok = parse_int(v, 1, 1000, &n);
            if (!strcmp(k, "movestogo"))
                l.movestogo = (int)n;
        } else if (!strcmp(k, "wtime") || !strcmp(k, "btime")) {
            ok = parse_int(v, INT64_C(-1000000000), INT64_C(1000000000), &n);
            l.time[k[0] == 'w' ? RED : BLACK] = n < 0 ? 0 : n;
        } else if (!strcmp(k, "winc") || !strcmp(k, "binc")) {
            ok = parse_int(v, 0, INT64_C(1000000000), &l.inc[k[0] == 'w' ? RED : BLACK]);
        } else if (!strcmp(k, "time") || !strcmp(k, "opptime")) {
            ok = parse_time(s, v, &n);
            l.time[!strcmp(k, "time") ? us : them] = n < 0 ? 0 : n;
        } else if (!strcmp(k, "increment") || !strcmp(k, "oppincrement")) {
            ok = parse_time(s, v, &n) && n >= 0;
            l.inc[!strcmp(k, "increment") ? us : them] = n;
        } else {
            error_line(s, "go: unknown parameter '%s'", k);
            return;
        }
        if (!ok) {
            error_line(s, "go: '%s' needs a valid number%s%s", k, v ? ", got " : "", v ? v : "");
            return;
        }
        i += has_value;
    }
    l.banned_count = s->banned_count;
    memcpy(l.banned, s->banned, sizeof(Move) * (size_t)s->banned_count);
    s->limits = l;
    s->search_board = s->board;
    engine_reset_stop(s->engine);
    atomic_store(&s->search_done, false);
    if (pthread_create(&s->thread, NULL, search_thread, s) != 0) {
        error_line(s, "cannot start the search thread");
        return;
    }
    s->thread_live = true;
}

static void cmd_stop(Session *s, const Tokens *t)
{
    (void)t;
    stop_search(s);
}

static void cmd_ponderhit(Session *s, const Tokens *t)
{
    (void)t;
    if (s->thread_live)
        engine_ponderhit(s->engine);
}

static void cmd_display(Session *s, const Tokens *t)
{
    (void)t;
    char fen[FEN_MAX];
    fen_write(&s->board, fen);
    say(s, "info string fen %s", fen);
}

static void cmd_bench(Session *s, const Tokens *t)
{
    int64_t depth = 0;
    if (t->count > 1 && !parse_int(t->tok[1], 1, 30, &depth)) {
        error_line(s, "bench depth must be from 1 to 30");
        return;
    }
    pthread_mutex_lock(&s->out_lock);
    bench_run_like((int)depth, s->engine, s->out);
    pthread_mutex_unlock(&s->out_lock);
}

typedef struct {
    const char *name;
    void (*run)(Session *s, const Tokens *t);
    bool while_searching; /* allowed during a search */
} Command;

static const Command COMMANDS[] = {
    { "uci", cmd_uci, false },
    { "ucci", cmd_ucci, false },
    { "isready", cmd_isready, true },
    { "ucinewgame", cmd_newgame, false },
    { "setoption", cmd_setoption, false },
    { "position", cmd_position, false },
    { "banmoves", cmd_banmoves, false },
    { "go", cmd_go, false },
    { "stop", cmd_stop, true },
    { "ponderhit", cmd_ponderhit, true },
    { "d", cmd_display, true },
    { "bench", cmd_bench, false },
};

static void tokenize(char *line, Tokens *t)
{
    t->count = 0;
    char *save = NULL;
    for (char *w = strtok_r(line, " \t\r\n", &save); w && t->count < MAX_TOKENS;
         w = strtok_r(NULL, " \t\r\n", &save))
        t->tok[t->count++] = w;
}

int protocol_run(FILE *in, FILE *out)
{
    Session *s = calloc(1, sizeof *s);
    if (!s)
        return 1;
    s->out = out;
    s->engine = engine_new();
    if (!s->engine) {
        fprintf(out, "info string error: out of memory\n");
        free(s);
        return 1;
    }
    pthread_mutex_init(&s->out_lock, NULL);
    s->move_overhead = 10;
    s->multipv = 1;
    board_startpos(&s->board);

    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    Tokens *t = malloc(sizeof *t);
    bool quit = false;
    while (t && !quit && (len = getline(&line, &cap, in)) >= 0) {
        if (len > MAX_LINE) {
            error_line(s, "line of %zd bytes is too long (limit %d)", len, MAX_LINE);
            continue;
        }
        if (memchr(line, '\0', (size_t)len)) {
            error_line(s, "line contains a NUL byte");
            continue;
        }
        tokenize(line, t);
        if (t->count == 0)
            continue;
        if (t->count == MAX_TOKENS) {
            error_line(s, "line has too many words (limit %d)", MAX_TOKENS - 1);
            continue;
        }
        if (!strcmp(t->tok[0], "quit")) {
            quit = true;
            break;
        }
        const Command *cmd = NULL;
        for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
            if (!strcmp(t->tok[0], COMMANDS[i].name))
                cmd = &COMMANDS[i];
        char name[64];
        clean_text(t->tok[0], name, sizeof name);
        if (!cmd)
            error_line(s, "unknown command '%s'", name);
        else if (!cmd->while_searching && search_running(s))
            error_line(s, "'%s' is not allowed while searching (send stop first)", name);
        else
            cmd->run(s, t);
    }
    stop_search(s);
    if (s->dialect == DIALECT_UCCI && quit)
        say(s, "bye");
    free(t);
    free(line);
    engine_destroy(&s->engine);
    pthread_mutex_destroy(&s->out_lock);
    free(s);
    return 0;
}

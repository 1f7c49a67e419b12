#define _DEFAULT_SOURCE /* realpath */
#include "external.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "fen.h"
#include "movegen.h"
#include "process.h"
#include "search.h"

enum {
    HANDSHAKE_TIMEOUT_MS = 10000, /* for uciok / readyok */
    QUIT_GRACE_MS = 300,          /* after quit, before SIGKILL */
    CRASH_WAIT_MS = 200,          /* for the exit status of a crashed engine */
    LINE_MAX_LEN = 8192
};

struct External {
    PlayerSpec spec;
    Process *proc;
    char line[LINE_MAX_LEN];
};

External *external_new(const PlayerSpec *spec)
{
    External *x = calloc(1, sizeof *x);
    if (x)
        x->spec = *spec;
    return x;
}

/* Sends quit and ends the process (the grace lets it exit on its own). */
static void stop_process(External *x, int grace_ms)
{
    if (!x->proc)
        return;
    if (grace_ms > 0)
        process_write_line(x->proc, "quit");
    process_destroy(&x->proc, grace_ms);
}

void external_destroy(External **xp)
{
    External *x = *xp;
    if (!x)
        return;
    stop_process(x, QUIT_GRACE_MS);
    free(x);
    *xp = NULL;
}

/* Records a fault, ends the process (it is restarted for the next game) and returns -1. */
static int fault(External *x, Reply *r, GameReason reason, const char *fmt, ...)
{
    r->fault = reason;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->detail, sizeof r->detail, fmt, ap);
    va_end(ap);
    if (reason == GAME_CRASH && x->proc) {
        char how[64];
        process_exit_status(x->proc, CRASH_WAIT_MS, how, sizeof how);
        size_t n = strlen(r->detail);
        snprintf(r->detail + n, sizeof r->detail - n, " (%s)", how);
    }
    stop_process(x, 0);
    return -1;
}

/* Writes one command; a failed write means the engine is gone. */
static int send_line(External *x, Reply *r, const char *fmt, ...)
{
    char buf[2 * SPEC_TEXT_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (process_write_line(x->proc, buf) == 0)
        return 0;
    return fault(x, r, GAME_CRASH, "engine gone while sending '%s'", buf);
}

/* True when the line's first word is word. */
static bool starts_with_word(const char *line, const char *word)
{
    size_t n = strlen(word);
    return strncmp(line, word, n) == 0 && (line[n] == '\0' || isspace((unsigned char)line[n]));
}

/*
 * Reads lines until one starting with the word `want`; with refusal (else
 * NULL), the first "info string error: ..." line before it goes there (its
 * text after the colon, "" when none).  Returns 0 or -1 (fault recorded).
 */
static int wait_for(External *x, const char *want, int64_t deadline_us, const atomic_bool *stop, Reply *r,
                    char *refusal, size_t size)
{
    static const char ERROR_LINE[] = "info string error:";
    if (refusal)
        refusal[0] = '\0';
    for (;;) {
        switch (process_read_line(x->proc, deadline_us, stop, x->line, sizeof x->line)) {
        case PROCESS_LINE:
            if (starts_with_word(x->line, want))
                return 0;
            if (refusal && !refusal[0] && strncmp(x->line, ERROR_LINE, sizeof ERROR_LINE - 1) == 0) {
                const char *text = x->line + sizeof ERROR_LINE - 1;
                snprintf(refusal, size, "%s", text + (*text == ' '));
            }
            break;
        case PROCESS_TIMEOUT:
            return fault(x, r, GAME_NO_RESPONSE, "no '%s' in time", want);
        case PROCESS_STOPPED:
            return fault(x, r, GAME_ABANDONED, "stopped");
        case PROCESS_EOF:
            return fault(x, r, GAME_CRASH, "engine ended while waiting for '%s'", want);
        }
    }
}

static bool has_option(const PlayerSpec *s, const char *name)
{
    for (int i = 0; i < s->option_count; i++)
        if (strcmp(s->options[i].name, name) == 0)
            return true;
    return false;
}

/*
 * Sets an option and waits until the engine has taken it (isready,
 * readyok): an "info string error" line in between is the engine refusing
 * it (xqf-engine: an unknown option, a value out of range, engine/
 * protocol.c), and the game cannot be played as asked: a fault with
 * r->refused, the option and the engine's words in its detail.  Returns 0
 * or -1 (fault recorded).
 */
static int send_option(External *x, const atomic_bool *stop, Reply *r, const char *name, const char *value)
{
    char refusal[128];
    int64_t deadline = clock_now_us() + (int64_t)HANDSHAKE_TIMEOUT_MS * 1000;
    int rc = x->spec.proto == PROTO_UCI ? send_line(x, r, "setoption name %s value %s", name, value)
                                        : send_line(x, r, "setoption %s %s", name, value);
    if (rc != 0 || send_line(x, r, "isready") != 0 || wait_for(x, "readyok", deadline, stop, r, refusal,
                                                                sizeof refusal) != 0)
        return -1;
    if (!refusal[0])
        return 0;
    r->refused = true;
    return fault(x, r, GAME_START_FAILURE, "option %.64s=%.32s refused: %s", name, value, refusal);
}

/* The address space an engine in the box may use: its hash (at most 4,096 MB a task) and the rest. */
enum { ENGINE_BOX_MB = 6144 };

/* Starts the process and goes through the handshake and the spec's settings. */
static int start(External *x, const atomic_bool *stop, Reply *r)
{
    const PlayerSpec *s = &x->spec;
    char *argv[SPEC_MAX_ARGS + 2];
    argv[0] = x->spec.cmd;
    for (int i = 0; i < s->arg_count; i++)
        argv[i + 1] = x->spec.args[i];
    argv[s->arg_count + 1] = NULL;
    char err[256];
    /* an engine a worker was sent runs in the box: as nobody, no network, no environment, no keys;
       the net it is told to load (EvalFile) is the one file of the worker's it may read */
    char net[PATH_MAX];
    SandboxSpec box = { .memory_mb = ENGINE_BOX_MB };
    if (s->sandbox && s->net[0]) {
        if (!realpath(s->net, net))
            return fault(x, r, GAME_START_FAILURE, "net %.200s: %s", s->net, strerror(errno));
        box.ro[0] = net;
    }
    x->proc = s->sandbox ? process_spawn_boxed(argv, s->sha256[0] ? s->sha256 : NULL, &box, err, sizeof err)
                         : process_spawn(argv, s->sha256[0] ? s->sha256 : NULL, err, sizeof err);
    if (!x->proc)
        return fault(x, r, GAME_START_FAILURE, "%s", err);
    bool uci = s->proto == PROTO_UCI;
    int64_t deadline = clock_now_us() + (int64_t)HANDSHAKE_TIMEOUT_MS * 1000;
    if (send_line(x, r, uci ? "uci" : "ucci") != 0
        || wait_for(x, uci ? "uciok" : "ucciok", deadline, stop, r, NULL, 0) != 0)
        return -1;
    if (!uci && send_line(x, r, "setoption usemillisec true") != 0)
        return -1;
    for (int i = 0; i < s->init_count; i++)
        if (send_line(x, r, "%s", s->init[i]) != 0)
            return -1;
    const char *hash_name = uci ? "Hash" : "hashsize";
    if (s->hash_mb && !has_option(s, hash_name)) {
        char mb[16];
        snprintf(mb, sizeof mb, "%d", s->hash_mb);
        if (send_option(x, stop, r, hash_name, mb) != 0)
            return -1;
    }
    /* Threads is UCI's name (Stockfish's, Pikafish's, ours in both protocols); one thread needs no word */
    if (s->threads > 1 && !has_option(s, "Threads")) {
        char n[16];
        snprintf(n, sizeof n, "%d", s->threads);
        if (send_option(x, stop, r, "Threads", n) != 0)
            return -1;
    }
    for (int i = 0; i < s->option_count; i++)
        if (send_option(x, stop, r, s->options[i].name, s->options[i].value) != 0)
            return -1;
    return 0;
}

int external_new_game(External *x, const atomic_bool *stop, Reply *r)
{
    r->fault = GAME_REASON_NONE;
    r->detail[0] = '\0';
    if (!x->proc && start(x, stop, r) != 0) {
        if (r->fault != GAME_ABANDONED)
            r->fault = GAME_START_FAILURE;
        return -1;
    }
    if (x->spec.proto == PROTO_UCI && send_line(x, r, "ucinewgame") != 0)
        return -1;
    int64_t deadline = clock_now_us() + (int64_t)HANDSHAKE_TIMEOUT_MS * 1000;
    if (send_line(x, r, "isready") != 0
        || wait_for(x, "readyok", deadline, stop, r, NULL, 0) != 0)
        return -1;
    return 0;
}

/* Appends a move in the engine's notation. */
static char *put_move(char *out, Move m, bool ranks_from_one)
{
    int from = move_from(m), to = move_to(m), add = ranks_from_one ? 1 : 0;
    return out + sprintf(out, " %c%d%c%d", 'a' + sq_file(from), sq_rank(from) + add,
                         'a' + sq_file(to), sq_rank(to) + add);
}

/* "position fen F [moves ...]" in the engine's notation (malloc'd; NULL when out of memory). */
static char *position_command(const External *x, const GameView *v)
{
    char *buf = malloc(64 + FEN_MAX + (size_t)v->count * 8);
    if (!buf)
        return NULL;
    char *p = buf + sprintf(buf, "position fen %s", v->fen);
    if (x->spec.he_letters)
        for (char *c = buf + 13; *c && *c != ' '; c++)
            *c = *c == 'N' ? 'H' : *c == 'n' ? 'h' : *c == 'B' ? 'E' : *c == 'b' ? 'e' : *c;
    if (v->count > 0)
        p += sprintf(p, " moves");
    for (int i = 0; i < v->count; i++)
        p = put_move(p, v->moves[i].move, x->spec.ranks_from_one);
    return buf;
}

/* Parses one square ("h2", or "h10" with ranks 1-10); returns the text after it or NULL. */
static const char *parse_square(const char *t, bool ranks_from_one, int *sq)
{
    if (*t < 'a' || *t > 'i' || !isdigit((unsigned char)t[1]))
        return NULL;
    int file = *t - 'a', rank = t[1] - '0', used = 2;
    if (isdigit((unsigned char)t[2])) {
        rank = rank * 10 + t[2] - '0';
        used = 3;
    }
    rank -= ranks_from_one ? 1 : 0;
    if (rank < 0 || rank >= RANKS)
        return NULL;
    *sq = sq_make(file, rank);
    return t + used;
}

/* Reads "bestmove X": a malformed X is bad output, a well-formed illegal one an illegal move. */
static void parse_bestmove(External *x, const GameView *v, const char *text, Reply *r)
{
    const char *t = text;
    while (*t == ' ')
        t++;
    int from, to;
    const char *rest = parse_square(t, x->spec.ranks_from_one, &from);
    rest = rest ? parse_square(rest, x->spec.ranks_from_one, &to) : NULL;
    if (!rest || (*rest && *rest != ' ')) {
        fault(x, r, GAME_BAD_OUTPUT, "unparsable move in '%.100s'", x->line);
        return;
    }
    Board b = *v->board;
    Move m = move_make(from, to);
    if (!movegen_is_legal(&b, m)) {
        fault(x, r, GAME_ILLEGAL_MOVE, "illegal move '%.*s'", (int)(rest - t), t);
        return;
    }
    r->move = m;
}

/* Picks depth, nodes and score out of an info line (ElephantEye reports nodes on lines of their own). */
static void parse_info(const char *line, Reply *r)
{
    const char *p = strstr(line, " depth ");
    if (p)
        r->depth = atoi(p + 7);
    long long nodes;
    p = strstr(line, " nodes ");
    if (p && sscanf(p + 7, "%lld", &nodes) == 1 && nodes > 0)
        r->nodes = nodes;
    p = strstr(line, " score ");
    if (!p)
        return;
    int n;
    if (sscanf(p, " score cp %d", &n) == 1) {
        r->score = n;
        r->has_score = true;
    } else if (sscanf(p, " score mate %d", &n) == 1) {
        r->score = n > 0 ? MATE - (2 * n - 1) : -(MATE + 2 * n);
        r->has_score = true;
    }
}

void external_think(External *x, const GameView *v, const ThinkLimits *l, Reply *r)
{
    memset(r, 0, sizeof *r);
    int64_t t0 = clock_now_us();
    if (!x->proc) {
        fault(x, r, GAME_CRASH, "engine not running");
        return;
    }
    char *pos = position_command(x, v);
    int rc = pos ? process_write_line(x->proc, pos) : -1;
    free(pos);
    if (rc != 0) {
        fault(x, r, GAME_CRASH, "engine gone while sending the position");
        return;
    }
    int us = v->board->side;
    if (l->nodes)
        rc = send_line(x, r, "go nodes %" PRIu64, l->nodes);
    else if (l->depth > 0)
        rc = send_line(x, r, "go depth %d", l->depth);
    else if (x->spec.proto == PROTO_UCI)
        rc = send_line(x, r, "go wtime %" PRId64 " btime %" PRId64 " winc %" PRId64 " binc %" PRId64,
                  l->time_ms[RED], l->time_ms[BLACK], l->inc_ms[RED], l->inc_ms[BLACK]);
    else
        rc = send_line(x, r, "go time %" PRId64 " increment %" PRId64 " opptime %" PRId64
                  " oppincrement %" PRId64, l->time_ms[us], l->inc_ms[us], l->time_ms[us ^ 1],
                  l->inc_ms[us ^ 1]);
    if (rc != 0)
        return;
    for (;;) {
        ProcessRead got = process_read_line(x->proc, l->deadline_us, l->stop, x->line, sizeof x->line);
        r->time_us = clock_now_us() - t0;
        if (got == PROCESS_TIMEOUT) {
            fault(x, r, l->nodes ? GAME_NO_RESPONSE : GAME_TIME_FORFEIT, "no bestmove after %.3f s",
                  r->time_us / 1e6);
            return;
        }
        if (got == PROCESS_STOPPED) {
            fault(x, r, GAME_ABANDONED, "stopped");
            return;
        }
        if (got == PROCESS_EOF) {
            fault(x, r, GAME_CRASH, "engine ended while thinking");
            return;
        }
        if (starts_with_word(x->line, "info")) {
            parse_info(x->line, r);
        } else if (starts_with_word(x->line, "bestmove")) {
            parse_bestmove(x, v, x->line + 8, r);
            return;
        } else if (starts_with_word(x->line, "nobestmove")) {
            fault(x, r, GAME_BAD_OUTPUT, "nobestmove with legal moves on the board");
            return;
        }
    }
}

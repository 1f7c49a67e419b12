/*
 * The xqf-engine program, driven through pipes as a GUI or a match runner
 * would: UCI and UCCI handshakes, searches under every kind of limit,
 * banmoves, stop, the command-line perft and bench, and bad input (corpus
 * tests/data/bad_commands.txt) which must get exactly one error line and
 * change nothing.  Every read has a deadline, so a hang fails the test.
 */
#define _GNU_SOURCE /* sched_setaffinity */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fen.h"
#include "movegen.h"

#define ENGINE XQF_BIN "/xqf-engine"

enum { LINE_MAX_LEN = 4096, READY_MS = 10000, SEARCH_MS = 20000 };

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- a child process on pipes ------------------------------------------ */

typedef struct {
    pid_t pid;
    int in;            /* the child's stdin, -1 once closed */
    int out, err;      /* its stdout and stderr, -1 at EOF */
    char pending[1 << 16];
    size_t pending_len;
    char *err_text;    /* everything read from stderr */
    size_t err_len;
} Proc;

static void proc_start(Proc *p, const char *const *args)
{
    signal(SIGPIPE, SIG_IGN); /* a dead child must fail a check, not kill the test */
    int in[2], out[2], err[2];
    cr_assert(pipe(in) == 0 && pipe(out) == 0 && pipe(err) == 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork failed");
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err[1], 2);
        for (int fd = 3; fd < 64; fd++)
            close(fd);
        char *argv[8] = { ENGINE };
        for (int i = 0; args && args[i] && i < 6; i++)
            argv[i + 1] = (char *)args[i];
        execv(ENGINE, argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->in = in[1];
    p->out = out[0];
    p->err = err[0];
}

static void proc_write(Proc *p, const char *data, size_t len)
{
    cr_assert_geq(p->in, 0, "stdin already closed");
    while (len > 0) {
        ssize_t n = write(p->in, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        cr_assert_gt(n, 0, "cannot write to the engine: %s", strerror(errno));
        data += n;
        len -= (size_t)n;
    }
}

/* Sends one line (a newline is added). */
static void proc_send(Proc *p, const char *fmt, ...)
{
    char line[LINE_MAX_LEN];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    cr_assert(n >= 0 && n < (int)sizeof line - 1);
    line[n++] = '\n';
    proc_write(p, line, (size_t)n);
}

static void proc_close_input(Proc *p)
{
    if (p->in >= 0)
        close(p->in);
    p->in = -1;
}

/* Reads what is available from stderr into err_text. */
static void drain_stderr(Proc *p)
{
    char buf[4096];
    ssize_t n = read(p->err, buf, sizeof buf);
    if (n <= 0) {
        close(p->err);
        p->err = -1;
        return;
    }
    p->err_text = realloc(p->err_text, p->err_len + (size_t)n + 1);
    cr_assert_not_null(p->err_text);
    memcpy(p->err_text + p->err_len, buf, (size_t)n);
    p->err_len += (size_t)n;
    p->err_text[p->err_len] = '\0';
}

/*
 * Reads one stdout line (without its newline) into line, waiting until the
 * deadline.  Returns false on timeout or end of output.
 */
static bool proc_read_line(Proc *p, char *line, size_t cap, int64_t deadline)
{
    for (;;) {
        char *nl = memchr(p->pending, '\n', p->pending_len);
        if (nl) {
            size_t len = (size_t)(nl - p->pending);
            size_t copy = len < cap - 1 ? len : cap - 1;
            memcpy(line, p->pending, copy);
            line[copy] = '\0';
            memmove(p->pending, nl + 1, p->pending_len - len - 1);
            p->pending_len -= len + 1;
            return true;
        }
        if (p->out < 0)
            return false;
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return false;
        struct pollfd fds[2] = { { p->out, POLLIN, 0 }, { p->err, POLLIN, 0 } };
        int r = poll(fds, p->err >= 0 ? 2 : 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        if (p->err >= 0 && fds[1].revents)
            drain_stderr(p);
        if (fds[0].revents) {
            cr_assert_lt(p->pending_len, sizeof p->pending, "an output line is too long");
            ssize_t n = read(p->out, p->pending + p->pending_len, sizeof p->pending - p->pending_len);
            if (n <= 0) {
                close(p->out);
                p->out = -1;
            } else {
                p->pending_len += (size_t)n;
            }
        }
    }
}

/*
 * Reads lines until one starts with prefix (copied to found when not NULL).
 * Lines read on the way are appended to `seen` when not NULL.
 */
static bool proc_expect(Proc *p, const char *prefix, int timeout_ms, char *found, size_t cap, char *seen,
                        size_t seen_cap)
{
    int64_t deadline = now_ms() + timeout_ms;
    char line[LINE_MAX_LEN];
    while (proc_read_line(p, line, sizeof line, deadline)) {
        if (!strncmp(line, prefix, strlen(prefix))) {
            if (found)
                snprintf(found, cap, "%s", line);
            return true;
        }
        if (seen && strlen(seen) + strlen(line) + 2 < seen_cap) {
            strcat(seen, line);
            strcat(seen, "\n");
        }
    }
    return false;
}

/* Asserts that a line starting with prefix arrives within ms (copied to found, LINE_MAX_LEN bytes, when not NULL). */
static void expect_line(Proc *p, const char *prefix, int ms, char *found)
{
    cr_assert(proc_expect(p, prefix, ms, found, LINE_MAX_LEN, NULL, 0), "no line starting with '%s' within %d ms",
              prefix, ms);
}

/* Closes stdin, waits for the exit (killing the child after timeout_ms); returns the exit status or -1. */
static int proc_finish(Proc *p, int timeout_ms)
{
    proc_close_input(p);
    int64_t deadline = now_ms() + timeout_ms;
    int status = 0;
    pid_t r;
    char line[LINE_MAX_LEN];
    while ((r = waitpid(p->pid, &status, WNOHANG)) == 0 && now_ms() < deadline) {
        /* keep the pipes flowing so the child can't block on a full one */
        if (!proc_read_line(p, line, sizeof line, now_ms() + 10) && p->err >= 0) {
            struct pollfd fd = { p->err, POLLIN, 0 };
            if (poll(&fd, 1, 0) > 0)
                drain_stderr(p);
        }
    }
    if (r == 0) {
        kill(p->pid, SIGKILL);
        waitpid(p->pid, &status, 0);
        status = -1;
    } else {
        status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    while (p->err >= 0)
        drain_stderr(p);
    if (p->out >= 0)
        close(p->out);
    p->out = -1;
    return status;
}

static void proc_free(Proc *p)
{
    free(p->err_text);
    p->err_text = NULL;
}

/* Runs the engine with arguments and no input; collects stdout. */
static int run_cli(const char *const *args, char *out, size_t cap, char **err_text)
{
    Proc p;
    proc_start(&p, args);
    proc_close_input(&p);
    out[0] = '\0';
    char line[LINE_MAX_LEN];
    int64_t deadline = now_ms() + SEARCH_MS;
    while (proc_read_line(&p, line, sizeof line, deadline)) {
        if (strlen(out) + strlen(line) + 2 < cap) {
            strcat(out, line);
            strcat(out, "\n");
        }
    }
    int status = proc_finish(&p, 5000);
    *err_text = p.err_text ? p.err_text : strdup("");
    return status;
}

/* The last non-empty line of text. */
static const char *last_line(char *text)
{
    char *end = text + strlen(text);
    while (end > text && end[-1] == '\n')
        *--end = '\0';
    char *nl = strrchr(text, '\n');
    return nl ? nl + 1 : text;
}

/* ---- checking moves with the library ----------------------------------- */

/* The position reached by `moves` (space-separated) from fen. */
static void position_after(Board *b, const char *fen, const char *moves)
{
    char err[256] = "";
    cr_assert_eq(fen_parse(b, fen, FEN_GAME, err, sizeof err), 0, "%s", err);
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", moves);
    char *save = NULL;
    for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        Move m;
        cr_assert_eq(move_parse(b, t, &m, err, sizeof err), 0, "%s", err);
        board_make(b, m);
    }
}

/* "bestmove X [ponder Y]": X (and Y after it) are legal in b; returns X. */
static Move check_bestmove(Board *b, const char *line)
{
    char best[16] = "", ponder[16] = "";
    int n = sscanf(line, "bestmove %15s ponder %15s", best, ponder);
    cr_assert_geq(n, 1, "bad bestmove line '%s'", line);
    Move m, pm;
    char err[256];
    cr_assert_eq(move_parse(b, best, &m, err, sizeof err), 0, "'%s': %s", line, err);
    if (n == 2) {
        Board after = *b;
        board_make(&after, m);
        cr_expect_eq(move_parse(&after, ponder, &pm, err, sizeof err), 0, "ponder move in '%s': %s", line, err);
    }
    return m;
}

/*
 * Tests of other features give the engine a moment after bestmove before
 * their next command, so that a regression of the race guarded by
 * commands_right_after_bestmove fails that test only.
 */
static void after_bestmove(void)
{
    struct timespec pause = { 0, 50 * 1000000L };
    nanosleep(&pause, NULL);
}

static void start_uci(Proc *p)
{
    proc_start(p, NULL);
    proc_send(p, "uci");
    expect_line(p, "uciok", READY_MS, NULL);
}

/* Asks for the position and returns its FEN. */
static void current_fen(Proc *p, char *fen, size_t cap)
{
    char line[LINE_MAX_LEN];
    proc_send(p, "d");
    expect_line(p, "info string fen ", READY_MS, line);
    snprintf(fen, cap, "%s", line + strlen("info string fen "));
}

/* ---- handshakes -------------------------------------------------------- */

Test(protocol, uci_handshake)
{
    Proc p;
    proc_start(&p, NULL);
    proc_send(&p, "uci");
    char seen[8192] = "";
    cr_assert(proc_expect(&p, "uciok", READY_MS, NULL, 0, seen, sizeof seen), "no uciok");
    cr_expect_not_null(strstr(seen, "id name "), "no 'id name' before uciok:\n%s", seen);
    cr_expect_not_null(strstr(seen, "option name Hash type spin"), "no Hash option before uciok:\n%s", seen);
    proc_send(&p, "isready");
    expect_line(&p, "readyok", READY_MS, NULL);
    proc_send(&p, "quit");
    char line[LINE_MAX_LEN];
    cr_expect_not(proc_read_line(&p, line, sizeof line, now_ms() + 5000), "output after quit: '%s'", line);
    cr_expect_eq(proc_finish(&p, 5000), 0);
    proc_free(&p);
}

Test(protocol, ucci_handshake_and_bye)
{
    Proc p;
    proc_start(&p, NULL);
    proc_send(&p, "ucci");
    char seen[8192] = "";
    cr_assert(proc_expect(&p, "ucciok", READY_MS, NULL, 0, seen, sizeof seen), "no ucciok");
    cr_expect_not_null(strstr(seen, "id name "), "no 'id name' before ucciok:\n%s", seen);
    cr_expect_not_null(strstr(seen, "option "), "no option line before ucciok:\n%s", seen);
    proc_send(&p, "isready");
    expect_line(&p, "readyok", READY_MS, NULL);
    proc_send(&p, "position startpos moves h2e2");
    proc_send(&p, "go depth 2");
    char line[LINE_MAX_LEN];
    expect_line(&p, "bestmove ", SEARCH_MS, line);
    Board b;
    position_after(&b, START_FEN, "h2e2");
    check_bestmove(&b, line);
    proc_send(&p, "quit");
    expect_line(&p, "bye", READY_MS, NULL);
    cr_expect_eq(proc_finish(&p, 5000), 0);
    proc_free(&p);
}

/* ---- searches ---------------------------------------------------------- */

Test(protocol, go_depth_gives_legal_bestmove)
{
    Proc p;
    start_uci(&p);
    proc_send(&p, "position startpos moves h2e2 h9g7");
    proc_send(&p, "go depth 3");
    char seen[65536] = "", line[LINE_MAX_LEN];
    cr_assert(proc_expect(&p, "bestmove ", SEARCH_MS, line, sizeof line, seen, sizeof seen), "no bestmove");
    cr_expect_not_null(strstr(seen, "info depth 3"), "no depth-3 info line:\n%s", seen);
    Board b;
    position_after(&b, START_FEN, "h2e2 h9g7");
    check_bestmove(&b, line);
    cr_expect_eq(proc_finish(&p, 5000), 0);
    proc_free(&p);
}

Test(protocol, go_nodes)
{
    Proc p;
    start_uci(&p);
    proc_send(&p, "position startpos");
    proc_send(&p, "go nodes 5000");
    char line[LINE_MAX_LEN];
    expect_line(&p, "bestmove ", SEARCH_MS, line);
    Board b;
    position_after(&b, START_FEN, "");
    check_bestmove(&b, line);
    cr_expect_eq(proc_finish(&p, 5000), 0);
    proc_free(&p);
}

Test(protocol, go_perft)
{
    Proc p;
    start_uci(&p);
    proc_send(&p, "position startpos");
    proc_send(&p, "go perft 3");
    char line[LINE_MAX_LEN];
    expect_line(&p, "Nodes searched:", SEARCH_MS, line);
    cr_expect_str_eq(line, "Nodes searched: 79666");
    cr_expect_eq(proc_finish(&p, 5000), 0);
    proc_free(&p);
}

Test(protocol, go_movetime_answers_in_time)
{
    Proc p;
    start_uci(&p);
    proc_send(&p, "position startpos");
    int64_t t0 = now_ms();
    proc_send(&p, "go movetime 200");
    char line[LINE_MAX_LEN];
    expect_line(&p, "bestmove ", 5000, line);
    int64_t took = now_ms() - t0;
    cr_expect_leq(took, 1000, "go movetime 200 answered after %" PRId64 " ms", took);
    Board b;
    position_after(&b, START_FEN, "");
    check_bestmove(&b, line);
    cr_expect_eq(proc_finish(&p, 5000), 0);
    proc_free(&p);
}

Test(protocol, go_infinite_waits_for_stop)
{
    Proc p;
    start_uci(&p);
    proc_send(&p, "position startpos");
    proc_send(&p, "go infinite");
    /* no answer without stop, even in a position searched quickly */
    char seen[65536] = "", line[LINE_MAX_LEN];
    cr_expect_not(proc_expect(&p, "bestmove", 400, NULL, 0, seen, sizeof seen), "bestmove before stop");
    proc_send(&p, "isready");
    expect_line(&p, "readyok", READY_MS, NULL);
    int64_t t0 = now_ms();
    proc_send(&p, "stop");
    expect_line(&p, "bestmove ", 5000, line);
    int64_t took = now_ms() - t0;
    cr_expect_leq(took, 1000, "stop answered after %" PRId64 " ms", took);
    Board b;
    position_after(&b, START_FEN, "");
    check_bestmove(&b, line);
    cr_expect_eq(proc_finish(&p, 5000), 0);
    proc_free(&p);
}

/* A ponder search answers only after ponderhit (then on its own clock) or stop. */
Test(protocol, go_ponder_waits_for_ponderhit)
{
    Proc p;
    start_uci(&p);
    Board b;
    position_after(&b, START_FEN, "h2e2");
    proc_send(&p, "position startpos moves h2e2");
    proc_send(&p, "go ponder depth 2");
    cr_expect_not(proc_expect(&p, "bestmove", 400, NULL, 0, NULL, 0), "bestmove while pondering");
    int64_t t0 = now_ms();
    proc_send(&p, "ponderhit");
    char line[LINE_MAX_LEN];
    expect_line(&p, "bestmove ", 5000, line);
    cr_expect_leq(now_ms() - t0, 1000, "ponderhit answered late");
    check_bestmove(&b, line);
    after_bestmove();

    proc_send(&p, "go ponder movetime 100");
    cr_expect_not(proc_expect(&p, "bestmove", 400, NULL, 0, NULL, 0), "bestmove while pondering");
    proc_send(&p, "stop");
    expect_line(&p, "bestmove ", 5000, line);
    check_bestmove(&b, line);
    cr_expect_eq(proc_finish(&p, 5000), 0);
    proc_free(&p);
}

/* With a clock (UCI milliseconds, UCCI seconds) the engine answers well inside it. */
Test(protocol, go_with_clock_answers_in_time)
{
    Proc p;
    start_uci(&p);
    proc_send(&p, "position startpos");
    int64_t t0 = now_ms();
    proc_send(&p, "go wtime 3000 btime 3000 winc 0 binc 0");
    char line[LINE_MAX_LEN];
    expect_line(&p, "bestmove ", 5000, line);
    cr_expect_leq(now_ms() - t0, 1200, "answered after %" PRId64 " ms with 3 s on the clock", now_ms() - t0);
    cr_expect_eq(proc_finish(&p, 5000), 0);
    proc_free(&p);

    proc_start(&p, NULL);
    proc_send(&p, "ucci");
    expect_line(&p, "ucciok", READY_MS, NULL);
    proc_send(&p, "position startpos");
    t0 = now_ms();
    proc_send(&p, "go time 3 increment 0");
    expect_line(&p, "bestmove ", 5000, line);
    cr_expect_leq(now_ms() - t0, 1200, "answered after %" PRId64 " ms with 3 s on the clock", now_ms() - t0);
    proc_send(&p, "quit");
    expect_line(&p, "bye", READY_MS, NULL);
    cr_expect_eq(proc_finish(&p, 5000), 0);
    proc_free(&p);
}

/* Even with nothing to search (no legal move), go infinite answers only after stop. */
Test(protocol, go_infinite_without_moves_waits_for_stop)
{
    Proc p;
    start_uci(&p);
    proc_send(&p, "position fen 3k5/4P4/9/9/9/9/9/9/9/4K4 b - - 0 1");
    proc_send(&p, "go infinite");
    cr_expect_not(proc_expect(&p, "bestmove", 400, NULL, 0, NULL, 0), "bestmove before stop");
    proc_send(&p, "stop");
    char line[LINE_MAX_LEN];
    expect_line(&p, "bestmove", 5000, line);
    cr_expect_str_eq(line, "bestmove (none)");
    cr_expect_eq(proc_finish(&p, 5000), 0);
    proc_free(&p);
}

/* End of input during an infinite search: the engine still exits cleanly. */
Test(protocol, eof_during_search)
{
    Proc p;
    start_uci(&p);
    proc_send(&p, "go infinite");
    struct timespec pause = { 0, 100 * 1000000L };
    nanosleep(&pause, NULL);
    cr_expect_eq(proc_finish(&p, 5000), 0);
    proc_free(&p);
}

/*
 * After bestmove the engine is idle: a GUI may send the next position and
 * go at once, and they must be accepted.  (Repeated, since it is a race.)
 */
Test(protocol, commands_right_after_bestmove)
{
    /* One CPU for the test and the engine (inherited): the engine's threads then interleave like on a busy machine. */
    cpu_set_t allowed, one;
    CPU_ZERO(&one);
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
        for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
            if (CPU_ISSET(cpu, &allowed)) {
                CPU_SET(cpu, &one);
                sched_setaffinity(0, sizeof one, &one);
                break;
            }
    Proc p;
    start_uci(&p);
    const int tries = 200;
    char refusal[LINE_MAX_LEN] = "";
    int failed_try = 0;
    for (int i = 1; i <= tries && !failed_try; i++) {
        proc_send(&p, "position fen 3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1");
        proc_send(&p, "go depth 1");
        char line[LINE_MAX_LEN];
        int64_t deadline = now_ms() + SEARCH_MS;
        do
            cr_assert(proc_read_line(&p, line, sizeof line, deadline), "no bestmove (try %d)", i);
        while (strncmp(line, "bestmove", 8) && strncmp(line, "info string error:", 18));
        if (strncmp(line, "bestmove", 8)) { /* the previous search still counted as running */
            snprintf(refusal, sizeof refusal, "%s", line);
            failed_try = i;
            break;
        }
        proc_send(&p, "position startpos moves h2e2");
        proc_send(&p, "isready");
        deadline = now_ms() + READY_MS;
        do
            cr_assert(proc_read_line(&p, line, sizeof line, deadline), "no readyok (try %d)", i);
        while (strcmp(line, "readyok") && strncmp(line, "info string error:", 18));
        if (strcmp(line, "readyok")) {
            snprintf(refusal, sizeof refusal, "%s", line);
            failed_try = i;
        }
    }
    cr_expect_eq(failed_try, 0, "a command sent right after bestmove was refused (try %d of %d): %s", failed_try,
                 tries, refusal);
    proc_finish(&p, 5000);
    proc_free(&p);
}

/* Two kings and two legal moves: banning one leaves the other. */
static void expect_banned_leaves(Proc *p, const char *ban, const char *want)
{
    proc_send(p, "position fen 3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1");
    proc_send(p, "banmoves %s", ban);
    proc_send(p, "go depth 3");
    char line[LINE_MAX_LEN], expected[64];
    expect_line(p, "bestmove", SEARCH_MS, line);
    snprintf(expected, sizeof expected, "bestmove %s", want);
    cr_expect_eq(strncmp(line, expected, strlen(expected)), 0, "banmoves %s: got '%s', expected '%s'", ban, line,
                 expected);
    after_bestmove();
}

Test(protocol, banmoves)
{
    Proc p;
    proc_start(&p, NULL);
    proc_send(&p, "ucci");
    expect_line(&p, "ucciok", READY_MS, NULL);
    expect_banned_leaves(&p, "e0e1", "e0f0");
    expect_banned_leaves(&p, "e0f0", "e0e1");

    /* the start position with every move but b2b9 banned */
    Board b;
    position_after(&b, START_FEN, "");
    MoveList legal;
    movegen_legal(&b, &legal);
    char cmd[LINE_MAX_LEN] = "banmoves";
    for (int i = 0; i < legal.count; i++) {
        char t[8];
        move_text(legal.moves[i], t);
        if (strcmp(t, "b2b9") != 0) {
            strcat(cmd, " ");
            strcat(cmd, t);
        }
    }
    proc_send(&p, "position startpos");
    proc_send(&p, "%s", cmd);
    proc_send(&p, "go depth 2");
    char line[LINE_MAX_LEN];
    expect_line(&p, "bestmove", SEARCH_MS, line);
    cr_expect_eq(strncmp(line, "bestmove b2b9", 13), 0, "got '%s'", line);
    proc_send(&p, "quit");
    expect_line(&p, "bye", READY_MS, NULL);
    cr_expect_eq(proc_finish(&p, 5000), 0);
    proc_free(&p);
}

/* `d` shows the position set by `position`. */
Test(protocol, d_shows_position)
{
    Proc p;
    start_uci(&p);
    proc_send(&p, "position startpos moves h2e2 h9g7");
    char fen[LINE_MAX_LEN], want[FEN_MAX];
    current_fen(&p, fen, sizeof fen);
    Board b;
    position_after(&b, START_FEN, "h2e2 h9g7");
    fen_write(&b, want);
    cr_expect_str_eq(fen, want);
    cr_expect_eq(proc_finish(&p, 5000), 0);
    proc_free(&p);
}

/* Lines ending in CR LF (as from a Windows GUI) work like plain ones. */
Test(protocol, crlf_line_endings)
{
    Proc p;
    proc_start(&p, NULL);
    const char *input = "uci\r\nisready\r\nposition startpos moves h2e2\r\n";
    proc_write(&p, input, strlen(input));
    expect_line(&p, "uciok", READY_MS, NULL);
    expect_line(&p, "readyok", READY_MS, NULL);
    char fen[LINE_MAX_LEN], want[FEN_MAX];
    current_fen(&p, fen, sizeof fen);
    Board b;
    position_after(&b, START_FEN, "h2e2");
    fen_write(&b, want);
    cr_expect_str_eq(fen, want);
    cr_expect_eq(proc_finish(&p, 5000), 0);
    proc_free(&p);
}

/* ---- bad input --------------------------------------------------------- */

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decodes a corpus line ("@empty", "\xHH", "\\"); returns its length. */
static size_t decode(const char *line, char *out)
{
    size_t n = 0, len = strlen(line);
    if (!strcmp(line, "@empty"))
        return 0;
    for (size_t i = 0; i < len; i++) {
        if (line[i] == '\\' && line[i + 1] == '\\') {
            out[n++] = '\\';
            i++;
        } else if (line[i] == '\\' && line[i + 1] == 'x' && i + 3 < len && hex_value(line[i + 2]) >= 0
                   && hex_value(line[i + 3]) >= 0) {
            out[n++] = (char)(hex_value(line[i + 2]) * 16 + hex_value(line[i + 3]));
            i += 3;
        } else {
            out[n++] = line[i];
        }
    }
    return n;
}

static bool is_blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return false;
    return true;
}

/*
 * Sends one raw line, then isready: up to readyok there must be exactly
 * `errors` lines, all "info string error: ...", besides the "info depth"
 * progress lines a running search may print at any moment.  Then the
 * position must still be `fen`.
 */
static void expect_refused(Proc *p, const char *data, size_t len, int errors, const char *fen, const char *what)
{
    proc_write(p, data, len);
    proc_write(p, "\n", 1);
    proc_send(p, "isready");
    char line[LINE_MAX_LEN];
    int got = 0;
    int64_t deadline = now_ms() + READY_MS;
    for (;;) {
        cr_assert(proc_read_line(p, line, sizeof line, deadline), "%s: no readyok after it (engine dead or hung)",
                  what);
        if (!strcmp(line, "readyok"))
            break;
        if (!strncmp(line, "info depth ", 11))
            continue;
        cr_expect_eq(strncmp(line, "info string error: ", 19), 0, "%s: unexpected answer '%s'", what, line);
        got++;
    }
    cr_expect_eq(got, errors, "%s: %d error lines, expected %d", what, got, errors);
    char now[LINE_MAX_LEN];
    current_fen(p, now, sizeof now);
    cr_expect_str_eq(now, fen, "%s changed the position", what);
}

Test(protocol, bad_commands)
{
    FILE *f = fopen(XQF_DATA "/bad_commands.txt", "r");
    cr_assert_not_null(f);
    Proc p;
    start_uci(&p);
    /* a position with some moves, so that a reset to the start would show */
    proc_send(&p, "position startpos moves h2e2 h9g7");
    char fen[LINE_MAX_LEN];
    current_fen(&p, fen, sizeof fen);

    char raw[LINE_MAX_LEN], data[LINE_MAX_LEN], what[LINE_MAX_LEN + 32];
    int entries = 0;
    for (int lineno = 1; fgets(raw, sizeof raw, f); lineno++) {
        raw[strcspn(raw, "\n")] = '\0';
        if (raw[0] == '#')
            continue;
        size_t len = decode(raw, data);
        snprintf(what, sizeof what, "bad_commands.txt:%d '%s'", lineno, raw);
        expect_refused(&p, data, len, is_blank(data, len) ? 0 : 1, fen, what);
        entries++;
    }
    fclose(f);
    cr_expect_geq(entries, 40);

    /* generated: a very long line, a line over the 1 MiB limit, too many words */
    size_t big = (1u << 20) + 100;
    char *line = malloc(big);
    cr_assert_not_null(line);
    memset(line, 'x', big);
    expect_refused(&p, line, 100000, 1, fen, "a 100000-byte line");
    expect_refused(&p, line, big, 1, fen, "a line over 1 MiB");
    size_t n = 0;
    memcpy(line, "position startpos moves", 23);
    n = 23;
    for (int i = 0; i < 5000; i++) {
        memcpy(line + n, " h2e2", 5);
        n += 5;
    }
    expect_refused(&p, line, n, 1, fen, "a line with 5001 words");
    free(line);

    /* still alive and well: a search works */
    proc_send(&p, "go depth 2");
    char best[LINE_MAX_LEN];
    expect_line(&p, "bestmove ", SEARCH_MS, best);
    Board b;
    position_after(&b, START_FEN, "h2e2 h9g7");
    check_bestmove(&b, best);
    cr_expect_eq(proc_finish(&p, 5000), 0);
    proc_free(&p);
}

/* A bad option value keeps the old one; good values are accepted silently. */
Test(protocol, good_options_are_silent)
{
    Proc p;
    start_uci(&p);
    static const char *const good[] = {
        "setoption name Hash value 2",
        "setoption name Clear Hash",
        "setoption name Move Overhead value 30",
        "ucinewgame",
        "position startpos",
        "banmoves h2e2",
        "stop",
        "ponderhit",
    };
    char fen[LINE_MAX_LEN];
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        current_fen(&p, fen, sizeof fen);
        expect_refused(&p, good[i], strlen(good[i]), 0, fen, good[i]);
    }
    cr_expect_eq(proc_finish(&p, 5000), 0);
    proc_free(&p);
}

/* Commands that need the engine idle are refused during a search, and the search goes on. */
Test(protocol, busy_while_searching)
{
    Proc p;
    start_uci(&p);
    char fen[LINE_MAX_LEN];
    current_fen(&p, fen, sizeof fen);
    proc_send(&p, "go infinite");
    expect_refused(&p, "position startpos moves h2e2", strlen("position startpos moves h2e2"), 1, fen, "position during a search");
    expect_refused(&p, "go depth 1", strlen("go depth 1"), 1, fen, "go during a search");
    proc_send(&p, "stop");
    char line[LINE_MAX_LEN];
    expect_line(&p, "bestmove ", 5000, line);
    cr_expect_eq(proc_finish(&p, 5000), 0);
    proc_free(&p);
}

/* ---- command line ------------------------------------------------------ */

Test(protocol, cli_perft)
{
    char out[1 << 16];
    char *err = NULL;
    const char *args[] = { "perft", "2", NULL };
    cr_expect_eq(run_cli(args, out, sizeof out, &err), 0, "stderr: %s", err);
    cr_expect_str_eq(last_line(out), "Nodes searched: 1920");
    free(err);

    const char *args_fen[] = { "perft", "3", "4k4/9/9/9/4R4/9/9/9/9/4K4 b - - 0 1", NULL };
    cr_expect_eq(run_cli(args_fen, out, sizeof out, &err), 0, "stderr: %s", err);
    cr_expect_str_eq(last_line(out), "Nodes searched: 32");
    free(err);
}

/* Bad arguments: exit status 2 and a message on stderr. */
static void expect_usage_error(const char *const *args, const char *what)
{
    char out[1 << 16];
    char *err = NULL;
    cr_expect_eq(run_cli(args, out, sizeof out, &err), 2, "%s: exit status", what);
    cr_expect_gt(strlen(err), 0, "%s: nothing on stderr", what);
    cr_expect_eq(out[0], '\0', "%s: output on stdout: %s", what, out);
    free(err);
}

Test(protocol, cli_errors)
{
    const char *perft0[] = { "perft", "0", NULL };
    expect_usage_error(perft0, "perft 0");
    const char *perft9[] = { "perft", "9", NULL };
    expect_usage_error(perft9, "perft 9");
    const char *perftx[] = { "perft", "x", NULL };
    expect_usage_error(perftx, "perft x");
    const char *perft_none[] = { "perft", NULL };
    expect_usage_error(perft_none, "perft");
    const char *badfen[] = { "perft", "2", "badfen", NULL };
    expect_usage_error(badfen, "perft 2 badfen");
    const char *extra[] = { "perft", "2", START_FEN, "extra", NULL };
    expect_usage_error(extra, "perft with an extra argument");
    const char *bench0[] = { "bench", "0", NULL };
    expect_usage_error(bench0, "bench 0");
    const char *bench_param[] = { "bench", "3", "NullMove=3", NULL };
    expect_usage_error(bench_param, "bench with an out-of-range parameter");
    const char *bench_unknown[] = { "bench", "3", "Frob=1", NULL };
    expect_usage_error(bench_unknown, "bench with an unknown parameter");
    const char *bench_word[] = { "bench", "3", "NullMove", NULL };
    expect_usage_error(bench_word, "bench with a word that is not NAME=VALUE");
    const char *unknown[] = { "frobnicate", NULL };
    expect_usage_error(unknown, "unknown command");
}

/* Parses "Nodes searched: N" out of the output of bench 3 with these extra arguments. */
static uint64_t bench_nodes_with(const char *param)
{
    char out[1 << 16];
    char *err = NULL;
    const char *args[] = { "bench", "3", param, NULL };
    cr_assert_eq(run_cli(args, out, sizeof out, &err), 0, "stderr: %s", err);
    free(err);
    const char *nodes = strstr(out, "Nodes searched: ");
    cr_assert_not_null(nodes, "no 'Nodes searched:' in:\n%s", out);
    cr_expect_not_null(strstr(out, "Nodes/second: "), "no 'Nodes/second:' in:\n%s", out);
    uint64_t n = strtoull(nodes + 16, NULL, 10);
    cr_expect_gt(n, 0);
    return n;
}

static uint64_t bench_nodes(void)
{
    return bench_nodes_with(NULL);
}

Test(protocol, cli_bench_is_deterministic)
{
    uint64_t a = bench_nodes(), b = bench_nodes();
    cr_expect_eq(a, b, "bench 3 gave %" PRIu64 " then %" PRIu64 " nodes", a, b);
}

/* Parameters on bench's command line change the tree; the defaults given explicitly do not. */
Test(protocol, cli_bench_takes_parameters)
{
    uint64_t plain = bench_nodes();
    cr_expect_eq(bench_nodes_with("NullMove=1"), plain, "the default given explicitly changed the tree");
    uint64_t off = bench_nodes_with("NullMove=0,Rfp=0");
    cr_expect_neq(off, plain, "switching null move and RFP off left the tree alone");

    /* The protocol's bench searches with the session's options: the same tree as the command line's. */
    Proc p;
    start_uci(&p);
    proc_send(&p, "setoption name NullMove value 0");
    proc_send(&p, "setoption name Rfp value 0");
    proc_send(&p, "bench 3");
    char line[LINE_MAX_LEN];
    expect_line(&p, "Nodes searched:", SEARCH_MS, line);
    cr_expect_eq(strtoull(line + 16, NULL, 10), off, "%s, the command line's %" PRIu64, line, off);
    cr_expect_eq(proc_finish(&p, 5000), 0);
    proc_free(&p);
}

/*
 * MultiPV 3 at the start position: every completed depth reports lines
 * 1, 2 and 3 with three distinct first moves and non-increasing scores,
 * and bestmove is line 1's first move.  Bad values are refused and the
 * old value kept.
 */
Test(protocol, multipv)
{
    Proc p;
    start_uci(&p);
    proc_send(&p, "setoption name MultiPV value 3");
    proc_send(&p, "position startpos");
    proc_send(&p, "go depth 6");
    char line[LINE_MAX_LEN], first[4][8] = { "", "", "", "" };
    int score[4] = { 0 }, depth_seen[4] = { 0 }, last_complete = 0, last_depth = 0;
    int64_t deadline = now_ms() + SEARCH_MS;
    while (proc_read_line(&p, line, sizeof line, deadline) && strncmp(line, "bestmove", 8)) {
        int depth, k, sc;
        char move[8];
        const char *pv = strstr(line, " pv ");
        const char *cp = strstr(line, " score cp ");
        if (sscanf(line, "info depth %d seldepth %*d multipv %d", &depth, &k) != 2 || !pv || !cp)
            continue;
        cr_assert(k >= 1 && k <= 3, "multipv %d out of range: '%s'", k, line);
        cr_assert(sscanf(cp, " score cp %d", &sc) == 1 && sscanf(pv, " pv %7s", move) == 1, "'%s'", line);
        if (depth != last_depth) {
            last_depth = depth;
            memset(depth_seen, 0, sizeof depth_seen);
        }
        depth_seen[k] = 1;
        score[k] = sc;
        snprintf(first[k], sizeof first[k], "%s", move);
        if (k == 3) {
            cr_assert(depth_seen[1] && depth_seen[2], "depth %d: line 3 before lines 1 and 2", depth);
            cr_expect(strcmp(first[1], first[2]) && strcmp(first[1], first[3]) && strcmp(first[2], first[3]),
                      "depth %d: first moves not distinct: %s %s %s", depth, first[1], first[2], first[3]);
            cr_expect(score[1] >= score[2] && score[2] >= score[3], "depth %d: scores %d %d %d increase", depth,
                      score[1], score[2], score[3]);
            last_complete = depth;
        }
    }
    cr_assert_eq(strncmp(line, "bestmove ", 9), 0, "no bestmove");
    cr_expect_eq(last_complete, 6, "the last complete depth was %d", last_complete);
    cr_expect_eq(strncmp(line + 9, first[1], strlen(first[1])), 0, "'%s' is not line 1's %s", line, first[1]);
    after_bestmove();

    const char *bad[] = { "0", "129", "-1", "x", "" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        proc_send(&p, "setoption name MultiPV value %s", bad[i]);
        expect_line(&p, "info string error: option MultiPV", READY_MS, NULL);
    }
    /* still 3 */
    proc_send(&p, "go depth 1");
    char seen[LINE_MAX_LEN * 4] = "";
    cr_expect(proc_expect(&p, "bestmove", SEARCH_MS, NULL, 0, seen, sizeof seen));
    cr_expect(strstr(seen, " multipv 3 ") != NULL, "MultiPV is no longer 3: %s", seen);
    proc_send(&p, "quit");
    cr_expect_eq(proc_finish(&p, READY_MS), 0);
    proc_free(&p);
}

/* go searchmoves restricts the root; a word that is not a legal move refuses the go. */
Test(protocol, searchmoves)
{
    Proc p;
    start_uci(&p);
    Board b;
    position_after(&b, START_FEN, "");
    const char *lists[] = { "a0a1", "i3i4 a3a4", "h2h9 b2b9" };
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        proc_send(&p, "position startpos");
        proc_send(&p, "go depth 4 searchmoves %s", lists[i]);
        char line[LINE_MAX_LEN], best[8];
        expect_line(&p, "bestmove", SEARCH_MS, line);
        check_bestmove(&b, line);
        cr_assert_eq(sscanf(line, "bestmove %7s", best), 1);
        cr_expect(strstr(lists[i], best) != NULL, "searchmoves %s: played %s", lists[i], best);
        after_bestmove();
    }
    /* searchmoves before another parameter ends at that keyword */
    proc_send(&p, "go searchmoves c3c4 depth 3");
    char line[LINE_MAX_LEN];
    expect_line(&p, "bestmove", SEARCH_MS, line);
    cr_expect_eq(strncmp(line, "bestmove c3c4", 13), 0, "got '%s'", line);
    after_bestmove();

    const char *bad[] = { "go depth 3 searchmoves zz", "go depth 3 searchmoves a0a5", "go searchmoves",
                          "go searchmoves depth 3" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        proc_send(&p, "%s", bad[i]);
        expect_line(&p, "info string error: go searchmoves", READY_MS, NULL);
    }
    /* nothing was started: isready answers at once and no bestmove is pending */
    proc_send(&p, "isready");
    char seen[LINE_MAX_LEN * 4] = "";
    cr_expect(proc_expect(&p, "readyok", READY_MS, NULL, 0, seen, sizeof seen));
    cr_expect(!strstr(seen, "bestmove"), "a refused go searched: %s", seen);
    proc_send(&p, "quit");
    cr_expect_eq(proc_finish(&p, READY_MS), 0);
    proc_free(&p);
}

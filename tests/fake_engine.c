/*
 * fake_engine: a scripted UCI engine for the game-play tests.
 *
 *   fake_engine MODE [N]      plays N good moves (the first legal move,
 *                             score 0), then misbehaves as MODE says:
 *       crash    exits with status 3 when asked for a move
 *       signal   kills itself with SIGSEGV
 *       illegal  answers a well-formed illegal move
 *       silent   never answers
 *       garbage  prints binary junk, then an unparsable bestmove
 *       good     never misbehaves
 *   fake_engine fds           first prints "fds" and its open descriptors
 *                             ("fds 0 1 2"), then plays good moves
 *   fake_engine spawn         first starts a child that sleeps a minute
 *                             (stdout still open) and prints "child PID",
 *                             then plays good moves
 *   fake_engine script "m1:s1 m2:s2 ..."   answers the moves in turn
 *                             (ICCS), each with its score (cp), depth 1;
 *                             ucinewgame starts the script again
 *   fake_engine [random]      plays a random legal move, a quiet one
 *                             mostly: games of hundreds of plies, score 0
 *   A copy whose file ends with a line "XQF-ESCAPE KEYFILE PORT [ADDR]"
 *   (random mode) tries, at its start, what an engine build must not be
 *   able to do on a worker: read KEYFILE, connect to ADDR:PORT (an IPv4
 *   address; 127.0.0.1 when left out: another host's, across network
 *   namespaces, in test_netns.c), see a variable
 *   of the worker's environment (XQF_TEST_SECRET).  If any succeeds it says
 *   "info string ESCAPED: ..." (stdout and stderr) and plays on; if all
 *   fail it exits with status 5 when first asked for a move (a crash).
 *   fake_engine bench         prints a bench signature (4242) as
 *                             xqf-engine bench does: with no argument, a
 *                             copy of fake_engine serves as an engine build
 *
 * The move count runs over the life of the process, so a restarted engine
 * starts again from its first move.
 *
 * Options, in every mode, as xqf-engine takes them (engine/protocol.c):
 * `uci` lists two spin options, Hash (1-4096) and NewSwitch (0-1), a
 * parameter xqf-engine's table lacks (as a branch's new switch would be);
 * `setoption name N value V` answers "info string error: ..." for any
 * other name or a value out of range, with xqf-engine's words.  It also
 * takes Threads (1-256, not listed, as an engine whose list a test
 * compares), and says its value as the depth of its `info` lines, so that
 * a game's records show the threads its engine was told to use.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fen.h"
#include "movegen.h"

static void say(const char *text)
{
    fputs(text, stdout);
    fputc('\n', stdout);
    fflush(stdout);
}

/* Plays the ICCS moves of text (space-separated) on b; -1 at the first bad one. */
static int play_moves(Board *b, char *text)
{
    char err[128];
    for (char *save = NULL, *tok = strtok_r(text, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
        Move m;
        if (move_parse(b, tok, &m, err, sizeof err) != 0)
            return -1;
        board_make(b, m);
    }
    return 0;
}

/*
 * Sets b from "position fen F [moves ...]"; keeps b on bad input.  A line
 * that only adds moves to the last one with moves (the same game, a ply
 * or two on) plays just the new ones: replaying the whole game at every
 * ply made the 1,300-ply games of test_games quadratic, most of a minute.
 */
static void set_position(Board *b, const char *line)
{
    static char last[1 << 16];
    static size_t last_len; /* 0: no line with moves to go on from */
    static Board last_board;
    size_t len = strlen(line);
    if (len >= sizeof last)
        return;
    char text[sizeof last];
    memcpy(text, line, len + 1);
    Board nb;
    if (last_len && len > last_len && line[last_len] == ' ' && memcmp(line, last, last_len) == 0) {
        nb = last_board;
        if (play_moves(&nb, text + last_len) != 0)
            return;
    } else {
        char *fen = strstr(text, "fen ");
        if (!fen)
            return;
        fen += 4;
        char *moves = strstr(fen, " moves ");
        if (moves)
            *moves = '\0';
        char err[128];
        if (fen_parse(&nb, fen, FEN_GAME, err, sizeof err) != 0 || (moves && play_moves(&nb, moves + 7) != 0))
            return;
    }
    last_len = strstr(line, " moves ") ? len : 0;
    memcpy(last, line, len + 1);
    last_board = nb;
    *b = nb;
}

static int threads = 1;                /* setoption name Threads: said as the depth of each info line */

/* "N value V" of a setoption line: the two options above, or xqf-engine's error line. */
static void set_option(const char *text)
{
    static const struct { const char *name; long min, max; } OPTIONS[] = { { "Hash", 1, 4096 }, { "NewSwitch", 0, 1 },
                                                                           { "Threads", 1, 256 } };
    const char *value = strstr(text, " value ");
    int len = value ? (int)(value - text) : (int)strlen(text);
    value = value ? value + 7 : "";
    char out[512], *end;
    for (size_t i = 0; i < sizeof OPTIONS / sizeof OPTIONS[0]; i++) {
        if ((int)strlen(OPTIONS[i].name) != len || strncmp(text, OPTIONS[i].name, (size_t)len) != 0)
            continue;
        long v = strtol(value, &end, 10);
        if (end == value || *end || v < OPTIONS[i].min || v > OPTIONS[i].max) {
            snprintf(out, sizeof out, "info string error: parameter %s needs an integer from %ld to %ld, got '%.64s'",
                     OPTIONS[i].name, OPTIONS[i].min, OPTIONS[i].max, value);
            say(out);
        } else if (strcmp(OPTIONS[i].name, "Threads") == 0) {
            threads = (int)v;
        }
        return;
    }
    snprintf(out, sizeof out, "info string error: unknown option '%.*s'", len < 64 ? len : 64, text);
    say(out);
}

static void misbehave(const char *mode)
{
    if (strcmp(mode, "crash") == 0)
        exit(3);
    if (strcmp(mode, "signal") == 0) {
        signal(SIGSEGV, SIG_DFL); /* not a sanitizer's handler */
        raise(SIGSEGV);
    }
    if (strcmp(mode, "illegal") == 0)
        say("bestmove e0e5");
    if (strcmp(mode, "garbage") == 0) {
        static const char junk[] = "\x01\x02garbage\x00\xff\xfe more junk\n###\n";
        fwrite(junk, 1, sizeof junk - 1, stdout);
        say("bestmove zz99");
    }
    /* silent: nothing */
}

/* Prints "fds" and the descriptors open in this process (the listing's own left out). */
static void show_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    char text[4096] = "fds";
    size_t n = 3;
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d) && n < sizeof text - 16)
            n += (size_t)snprintf(text + n, sizeof text - n, " %s", e->d_name);
    if (d)
        closedir(d);
    say(text);
}

/* Starts a child that outlives us unless someone kills it, and prints "child PID". */
static void spawn_sleeper(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        sleep(60);
        _exit(0);
    }
    char text[64];
    snprintf(text, sizeof text, "child %ld", (long)pid);
    say(text);
}

/*
 * A random legal move: a quiet one that gives no check while there are
 * some (no mate), a capture only now and then or when the 60-move rule
 * comes near, so that games last hundreds of plies.  0 when there is no
 * move.
 */
static int random_pick(Board *b, const MoveList *list, uint64_t *rng)
{
    int quiet[MAX_MOVES], n = 0;
    for (int i = 0; i < list->count; i++) {
        if (b->squares[move_to(list->moves[i])])
            continue;
        board_make(b, list->moves[i]);
        if (!board_in_check(b))
            quiet[n++] = i;
        board_unmake(b);
    }
    *rng ^= *rng << 13, *rng ^= *rng >> 7, *rng ^= *rng << 17;
    bool capture = n == 0 || board_state(b)->rule60 > 100 || *rng % 256 == 0;
    *rng ^= *rng << 13, *rng ^= *rng >> 7, *rng ^= *rng << 17;
    if (!list->count)
        return 0;
    return capture ? (int)(*rng % (uint64_t)list->count) : quiet[*rng % (uint64_t)n];
}

/*
 * The escape attempts of a copy marked "XQF-ESCAPE KEYFILE PORT [ADDR]" at its
 * file's end: 1 when one succeeded (said), 0 when all failed, -1 when the
 * copy is not marked.
 */
static int try_escape(void)
{
    char tail[512];
    int fd = open("/proc/self/exe", O_RDONLY);
    off_t end = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
    ssize_t n = end > (off_t)sizeof tail - 1 ? pread(fd, tail, sizeof tail - 1, end - (off_t)sizeof tail + 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return -1;
    tail[n] = '\0';
    for (ssize_t i = 0; i < n; i++)
        if (!tail[i])
            tail[i] = ' ';
    const char *mark = strstr(tail, "XQF-ESCAPE ");
    char key[300], addr[64] = "127.0.0.1";
    int port;
    if (!mark || sscanf(mark, "XQF-ESCAPE %299s %d %63s", key, &port, addr) < 2)
        return -1;
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    if (inet_pton(AF_INET, addr, &a.sin_addr) != 1)
        return -1;
    char what[512] = "";
    int kfd = open(key, O_RDONLY);
    if (kfd >= 0) {
        strcat(what, " read the key;");
        close(kfd);
    }
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0)
        strcat(what, " connected;");
    if (s >= 0)
        close(s);
    if (getenv("XQF_TEST_SECRET"))
        strcat(what, " saw the worker's environment;");
    if (!what[0])
        return 0;
    printf("info string ESCAPED:%s\n", what);
    fflush(stdout);
    fprintf(stderr, "fake_engine: ESCAPED:%s\n", what);
    return 1;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "random";
    if (strcmp(mode, "bench") == 0) {
        say("Nodes searched: 4242");
        say("Nodes/second: 1000000");
        return 0;
    }
    if (strcmp(mode, "fds") == 0)
        show_fds();
    if (strcmp(mode, "spawn") == 0)
        spawn_sleeper();
    if (strcmp(mode, "fds") == 0 || strcmp(mode, "spawn") == 0)
        mode = "good";
    bool random = strcmp(mode, "random") == 0;
    bool boxed = random && argc == 1 && try_escape() == 0;   /* every escape failed: crash at the first go */
    uint64_t rng = (uint64_t)getpid() * 0x9e3779b97f4a7c15u | 1;
    int good = argc > 2 ? atoi(argv[2]) : 0;
    const char *script = strcmp(mode, "script") == 0 && argc > 2 ? argv[2] : NULL;
    char copy[4096] = "";
    char *script_pos = NULL, *next = NULL;
    Board b;
    board_startpos(&b);
    int played = 0;
    char line[1 << 16];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strcmp(line, "uci") == 0) {
            say("id name fake_engine");
            say("option name Hash type spin default 16 min 1 max 4096");
            say("option name NewSwitch type spin default 0 min 0 max 1");
            say("uciok");
        } else if (strncmp(line, "setoption name ", 15) == 0) {
            set_option(line + 15);
        } else if (strcmp(line, "isready") == 0) {
            say("readyok");
        } else if (strcmp(line, "ucinewgame") == 0 && script) {
            snprintf(copy, sizeof copy, "%s", script);
            next = strtok_r(copy, " ", &script_pos);
        } else if (strcmp(line, "quit") == 0) {
            return 0;
        } else if (strncmp(line, "position", 8) == 0) {
            set_position(&b, line);
        } else if (strncmp(line, "go", 2) == 0) {
            char out[64];
            if (boxed)
                return 5;
            if (script) {
                if (!next)
                    return 4;
                char *colon = strchr(next, ':');
                printf("info depth %d score cp %d pv %.*s\n", threads, colon ? atoi(colon + 1) : 0,
                       colon ? (int)(colon - next) : (int)strlen(next), next);
                printf("bestmove %.*s\n", colon ? (int)(colon - next) : (int)strlen(next), next);
                fflush(stdout);
                next = strtok_r(NULL, " ", &script_pos);
            } else if (played < good || strcmp(mode, "good") == 0 || random) {
                MoveList list;
                movegen_legal(&b, &list);
                int pick = random ? random_pick(&b, &list, &rng) : 0;
                char mt[8];
                move_text(list.count ? list.moves[pick] : MOVE_NONE, mt);
                snprintf(out, sizeof out, "bestmove %s", mt);
                printf("info depth %d score cp 0\n", threads);
                say(out);
            } else {
                misbehave(mode);
            }
            played++;
        }
    }
    return 0;
}

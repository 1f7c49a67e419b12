/*
 * Tests of worker/ matches: game pairs and the pentanomial, misbehaving
 * engines (crash, signal, illegal move, garbage, silence) losing with the
 * right reason while the match goes on and no process is left, stopping a
 * match, PGN output replayed move by move, a real match against
 * fairy-stockfish, and the xqf-match command line (errors, Ctrl-C).
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "book.h"
#include "clock.h"
#include "fen.h"
#include "match.h"
#include "pgn.h"
#include "process.h"
#include "player.h"
#include "rules.h"
#include "run_util.h"
#include "sha256.h"

#define FSF "/usr/games/fairy-stockfish"
#define XQF_MATCH XQF_BIN "/xqf-match"

enum { MAX_GAMES = 64 };

/* ---- helpers ------------------------------------------------------------- */

static void spec_from(PlayerSpec *s, const char *text)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", text);
    char *words[16];
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, " ", &save); t && n < 16; t = strtok_r(NULL, " ", &save))
        words[n++] = t;
    char err[256];
    cr_assert_eq(spec_parse(s, n, words, 4, err, sizeof err), 0, "%s: %s", text, err);
}

static char *write_temp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/xqf-test-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

static Book *load_book(const char *text)
{
    char *path = write_temp(text);
    char err[256];
    Book *b = book_load(path, err, sizeof err);
    unlink(path);
    cr_assert_not_null(b, "%s", err);
    return b;
}

static const char TWO_OPENINGS[] =
    START_FEN " moves h2e2 h9g7\n"
    START_FEN " moves c3c4 b7c7\n";

/* What the callbacks saw. */
typedef struct {
    int games;
    GameReason reason[MAX_GAMES];
    int plies[MAX_GAMES];
    char detail[MAX_GAMES][256];
    int pairs;
    FILE *pgn;
    const MatchConfig *config;
    int stop_after_games;      /* tick stops the match from this many games on (0: never) */
} Seen;

static void seen_game(void *ctx, const GameRecord *g, const PairResult *pair, int game)
{
    Seen *s = ctx;
    cr_assert_neq(g->reason, GAME_ABANDONED, "abandoned games are not reported");
    if (s->games < MAX_GAMES) {
        s->reason[s->games] = g->reason;
        s->plies[s->games] = g->count;
        snprintf(s->detail[s->games], sizeof s->detail[0], "%s", g->detail);
    }
    s->games++;
    if (s->pgn) {
        const PlayerSpec *p = s->config->players;
        PgnTags tags = { "test", p[game].name, p[game ^ 1].name, (int)(2 * pair->pair + game + 1),
                         NULL, s->config->tc.nodes, NULL, NULL, 0, NULL };
        cr_assert_eq(pgn_write(s->pgn, g, &tags), 0);
    }
}

static bool seen_pair(void *ctx, const PairResult *pair, const MatchCounts *c)
{
    Seen *s = ctx;
    (void)pair;
    s->pairs++;
    cr_assert_eq(c->pairs, s->pairs);
    return false;
}

static bool seen_tick(void *ctx, const MatchCounts *c)
{
    Seen *s = ctx;
    return s->stop_after_games > 0 && c->games >= s->stop_after_games;
}

static void assert_no_children(void)
{
    int status;
    errno = 0;
    cr_assert(waitpid(-1, &status, WNOHANG) == -1 && errno == ECHILD,
              "an engine process (or zombie) is left");
}

/* Plays n_pairs between first and second (spec texts) on the book text. */
static void play(const char *first, const char *second, const TimeControl *tc, const char *book_text,
                 int n_pairs, int concurrency, Seen *seen, MatchCounts *counts)
{
    MatchConfig cfg = { .tc = *tc, .concurrency = concurrency, .seed = 7 };
    spec_from(&cfg.players[0], first);
    spec_from(&cfg.players[1], second);
    Book *book = load_book(book_text);
    seen->config = &cfg;
    Match *m = match_new(&cfg, book);
    cr_assert_not_null(m);
    MatchCallbacks cb = { seen_game, seen_pair, seen_tick, 20, seen };
    cr_assert_eq(match_play_pairs(m, 0, n_pairs, &cb), 0);
    match_counts(m, counts);
    match_destroy(&m);
    cr_assert_null(m);
    book_destroy(&book);
    assert_no_children();
}

static const TimeControl FAST = { .nodes = 300, .move_timeout_ms = 1000 };

/* ---- misbehaving engines ---------------------------------------------------- */

/* The fake engine misbehaving as mode after `good` moves loses both games of a pair by `reason`. */
static void fault_case(const char *mode, int good, const TimeControl *tc, GameReason reason,
                       const char *detail)
{
    char second[512];
    snprintf(second, sizeof second, "name=fake cmd=%s arg=%s arg=%d", FAKE_ENGINE, mode, good);
    Seen seen = { 0 };
    MatchCounts c;
    play("name=xqf", second, tc, TWO_OPENINGS, 2, 2, &seen, &c);
    cr_assert_eq(c.games, 4, "the match must go on: %ld games", (long)c.games);
    cr_assert_eq(c.pairs, 2);
    cr_assert_eq(c.penta[XQF_PENTA_WW], 2);
    cr_assert_eq(c.wins, 4);
    cr_assert_eq(c.lost_by[1][reason], 4, "%s: expected 4 losses by %s; first game: %s", mode,
                 game_reason_text(reason), seen.detail[0]);
    for (int i = 0; i < seen.games; i++) {
        cr_assert_eq(seen.reason[i], reason);
        cr_assert(strstr(seen.detail[i], detail), "'%s' lacks '%s'", seen.detail[i], detail);
    }
}

Test(faults, crash_loses_and_the_engine_is_restarted)
{
    fault_case("crash", 2, &FAST, GAME_CRASH, "exit status 3");
}

Test(faults, crash_by_signal)
{
    fault_case("signal", 0, &FAST, GAME_CRASH, "signal 11");
}

Test(faults, illegal_move)
{
    fault_case("illegal", 1, &FAST, GAME_ILLEGAL_MOVE, "e0e5");
}

Test(faults, garbage_output)
{
    fault_case("garbage", 0, &FAST, GAME_BAD_OUTPUT, "zz99");
}

Test(faults, silence_at_fixed_nodes_is_no_response)
{
    fault_case("silent", 1, &FAST, GAME_NO_RESPONSE, "no bestmove");
}

Test(faults, silence_on_the_clock_is_a_time_forfeit)
{
    TimeControl tc = { .base_ms = 300, .inc_ms = 0, .margin_ms = 50 };
    fault_case("silent", 0, &tc, GAME_TIME_FORFEIT, "no bestmove");
}

Test(faults, engine_that_cannot_start)
{
    Seen seen = { 0 };
    MatchCounts c;
    play("name=xqf", "name=false cmd=/bin/false", &FAST, TWO_OPENINGS, 1, 1, &seen, &c);
    cr_assert_eq(c.lost_by[1][GAME_START_FAILURE], 2, "%s", seen.detail[0]);
}

Test(faults, restart_after_crash_plays_again)
{
    /* Crashing after two moves: with a restart, each game sees two good moves again. */
    char second[512];
    snprintf(second, sizeof second, "name=fake cmd=%s arg=crash arg=2", FAKE_ENGINE);
    Seen seen = { 0 };
    MatchCounts c;
    play("name=xqf", second, &FAST, START_FEN "\n", 1, 1, &seen, &c);
    cr_assert_eq(seen.games, 2);
    /* Game 0: xqf Red, 2 fake moves, crash on the third: 5 plies; game 1: fake Red: 4 plies. */
    cr_assert_eq(seen.plies[0], 5);
    cr_assert_eq(seen.plies[1], 4);
}

/* ---- pairs ------------------------------------------------------------------- */

Test(pairs, colours_alternate_and_the_pentanomial_counts_pairs)
{
    /* Red mates at once from this opening, whoever plays Red: one win and one loss per pair. */
    char first[512], second[512];
    snprintf(first, sizeof first, "name=a cmd=%s arg=script arg=a0a9:900", FAKE_ENGINE);
    snprintf(second, sizeof second, "name=b cmd=%s arg=script arg=a0a9:900", FAKE_ENGINE);
    Seen seen = { 0 };
    MatchCounts c;
    play(first, second, &FAST, "3k5/8R/9/9/9/9/9/9/9/R3K4 w - - 0 1\n", 3, 2, &seen, &c);
    cr_assert_eq(c.pairs, 3);
    cr_assert_eq(c.penta[XQF_PENTA_DD], 3, "WL pairs count with DD");
    cr_assert_eq(c.wins, 3);
    cr_assert_eq(c.losses, 3);
    cr_assert_eq(c.lost_by[0][GAME_CHECKMATE], 3);
    cr_assert_eq(c.lost_by[1][GAME_CHECKMATE], 3);
}

Test(pairs, first_player_view)
{
    char crasher[512];
    snprintf(crasher, sizeof crasher, "name=fake cmd=%s arg=crash arg=0", FAKE_ENGINE);
    Seen seen = { 0 };
    MatchCounts c;
    play(crasher, "name=xqf", &FAST, TWO_OPENINGS, 2, 2, &seen, &c);
    cr_assert_eq(c.penta[XQF_PENTA_LL], 2);
    cr_assert_eq(c.losses, 4);
    cr_assert_eq(c.lost_by[0][GAME_CRASH], 4);
}

Test(pairs, stop_abandons_running_games)
{
    Seen seen = { .stop_after_games = 2 };
    MatchCounts c;
    TimeControl tc = { .nodes = 2000, .move_timeout_ms = 5000 };
    play("name=a", "name=b option.NullR=1", &tc, TWO_OPENINGS, 100, 2, &seen, &c);
    cr_assert_geq(c.games, 2);
    cr_assert_lt(c.games, 20, "the match did not stop: %ld games", (long)c.games);
    cr_assert_eq(c.games, seen.games);
    cr_assert_leq(c.pairs * 2, c.games);
}

/* ---- players kept from task to task (the worker's game threads) ---------- */

/* Plays one game from the book's opening 0 at fixed nodes; its moves and result go to *g. */
static void builtin_game(Player *red, Player *black, const Book *b, GameRecord *g)
{
    static const Adjudication adj = { .resign_moves = 4, .resign_score = 600, .draw_after = 40, .draw_moves = 8,
                                      .draw_score = 10, .max_plies = 200 };
    TimeControl tc = { .nodes = 3000, .move_timeout_ms = 5000 };
    game_record_init(g);
    cr_assert_eq(game_play(red, black, book_opening(b, 0), &tc, &adj, NULL, g), 0);
}

Test(players, a_reused_builtin_player_plays_as_a_new_one)
{
    PlayerSpec a, b, other;
    spec_from(&a, "name=a option.NullR=1");
    spec_from(&b, "name=b");
    spec_from(&other, "name=other option.NullR=3 hash=8");
    Book *book = load_book(TWO_OPENINGS);
    Player *fresh[2] = { player_new(&a), player_new(&b) };
    cr_assert(fresh[0] && fresh[1]);
    GameRecord expected, got;
    builtin_game(fresh[0], fresh[1], book, &expected);

    /* Other parameters and hash size first, a game to fill their tables, then the specs. */
    Player *kept[2] = { player_new(&other), player_new(&a) };
    cr_assert(kept[0] && kept[1]);
    builtin_game(kept[1], kept[0], book, &got);
    game_record_free(&got);
    cr_assert_eq(player_set_spec(kept[0], &a), 0);
    cr_assert_eq(player_set_spec(kept[1], &b), 0);
    cr_assert_str_eq(player_name(kept[0]), "a");
    builtin_game(kept[0], kept[1], book, &got);

    cr_assert_eq(got.count, expected.count);
    for (int i = 0; i < got.count; i++)
        cr_assert_eq(got.moves[i].move, expected.moves[i].move, "ply %d differs", i + 1);
    cr_assert_eq(got.result, expected.result);
    cr_assert_eq(got.reason, expected.reason);

    PlayerSpec external;
    spec_from(&external, "name=ext cmd=" FAKE_ENGINE);
    cr_assert_eq(player_set_spec(kept[0], &external), -1, "a built-in player cannot become external");
    game_record_free(&expected);
    game_record_free(&got);
    for (int i = 0; i < 2; i++) {
        player_destroy(&fresh[i]);
        player_destroy(&kept[i]);
    }
    book_destroy(&book);
}

/* ---- PGN ------------------------------------------------------------------ */

/* Reads a PGN file back: every game has its tags, its moves are legal, its result matches. */
static int check_pgn(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    static char text[1 << 22];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    int games = 0;
    char *p = text;
    while (*p) {
        while (*p == '\n')
            p++;
        if (!*p)
            break;
        char fen[256] = "", result[256] = "", termination[256] = "", variant[256] = "";
        int tags = 0, plycount = -1;
        while (*p == '[') {
            char name[32], value[256];
            cr_assert_eq(sscanf(p, "[%31s \"%255[^\"]\"]", name, value), 2, "bad tag: %.60s", p);
            if (strcmp(name, "FEN") == 0)
                snprintf(fen, sizeof fen, "%s", value);
            else if (strcmp(name, "Result") == 0)
                snprintf(result, sizeof result, "%s", value);
            else if (strcmp(name, "Termination") == 0)
                snprintf(termination, sizeof termination, "%s", value);
            else if (strcmp(name, "Variant") == 0)
                snprintf(variant, sizeof variant, "%s", value);
            else if (strcmp(name, "PlyCount") == 0)
                plycount = atoi(value);
            tags++;
            p = strchr(p, '\n') + 1;
        }
        cr_assert_geq(tags, 12, "game %d has %d tags", games + 1, tags);
        cr_assert_str_eq(variant, "xiangqi");
        cr_assert(*result && *termination);
        Board b;
        char err[128];
        cr_assert_eq(fen_parse(&b, fen, FEN_GAME, err, sizeof err), 0, "%s", err);
        char *end = strstr(p, "\n\n");
        cr_assert_not_null(end, "game %d is not terminated", games + 1);
        *end = '\0';
        int plies = 0;
        char last[16] = "";
        for (char *q = p; *q;) {
            if (*q == ' ' || *q == '\n') {
                q++;
                continue;
            }
            if (*q == '{') {
                q = strchr(q, '}');
                cr_assert_not_null(q, "open comment");
                q++;
                continue;
            }
            size_t n = strcspn(q, " \n");
            snprintf(last, sizeof last, "%.*s", (int)n, q);
            if (last[n - 1] != '.' && strchr(last, '-') == NULL) {
                Move m;
                cr_assert_eq(move_parse(&b, last, &m, err, sizeof err), 0,
                             "game %d ply %d: %s: %s", games + 1, plies + 1, last, err);
                board_make(&b, m);
                plies++;
            }
            q += n;
        }
        cr_assert_str_eq(last, result, "the movetext must end with the result");
        cr_assert_eq(plies, plycount);
        if (strcmp(termination, "normal") == 0)
            cr_assert_str_eq(rules_result_text(rules_outcome(&b).result), result,
                             "game %d: the final position does not give the result", games + 1);
        p = end + 2;
        games++;
    }
    return games;
}

static void match_with_pgn(const char *first, const char *second, const TimeControl *tc, int pairs)
{
    char path[] = "/tmp/xqf-pgn-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    Seen seen = { 0 };
    seen.pgn = fdopen(fd, "w");
    MatchCounts c;
    play(first, second, tc, TWO_OPENINGS, pairs, 2, &seen, &c);
    fclose(seen.pgn);
    cr_assert_eq(c.games, 2 * pairs);
    cr_assert_eq(check_pgn(path), 2 * pairs);
    unlink(path);
}

Test(pgn, builtin_games_replay_legally)
{
    TimeControl tc = { .nodes = 1000, .move_timeout_ms = 5000 };
    match_with_pgn("name=a", "name=b option.NullR=1", &tc, 2);
}

Test(pgn, real_match_against_fairy_stockfish, .timeout = 60)
{
    cr_assert_eq(access(FSF, X_OK), 0, FSF " is not installed (run ops/setup)");
    TimeControl tc = { .nodes = 2000, .move_timeout_ms = 10000 };
    match_with_pgn("name=xqf", "name=fsf preset=fairy-stockfish", &tc, 2);
}

/* ---- the command line --------------------------------------------------------- */

/* --tc-second: time odds; silent engines lose on time, each after its own clock (the PGN's comments say when). */
Test(cli, each_player_keeps_its_own_clock)
{
    char pgn[64], book[64], cmd[2048], out[8192];
    snprintf(pgn, sizeof pgn, "%s", write_temp(""));
    snprintf(book, sizeof book, "%s", write_temp(START_FEN "\n"));   /* Red moves first */
    snprintf(cmd, sizeof cmd,
             XQF_MATCH " --engine name=a cmd=%s arg=silent arg=0 --engine name=b cmd=%s arg=silent arg=0"
             " --tc 0.3 --tc-second 0.9 --timemargin 0 --pairs 1 --concurrency 1 --book %s --pgn %s",
             FAKE_ENGINE, FAKE_ENGINE, book, pgn);
    cr_assert_eq(run_command(cmd, out, sizeof out), 0, "%s", out);
    FILE *f = fopen(pgn, "r");
    cr_assert_not_null(f);
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    fclose(f);
    unlink(pgn);
    unlink(book);
    /* game 1: a (first) is Red and times out after 0.3 s; game 2: b is Red, after 0.9 s */
    const char *first = strstr(out, "Red no bestmove after "), *second = first ? strstr(first + 1, "Red no bestmove after ") : NULL;
    cr_assert(first && second, "%s", out);
    double t1 = strtod(first + 22, NULL), t2 = strtod(second + 22, NULL);
    cr_assert(t1 >= 0.3 && t1 < 0.65, "%s", out);
    cr_assert(t2 >= 0.9 && t2 < 1.25, "%s", out);
    cr_assert(strstr(out, "[TimeControl \"0.3/0.9\"]"), "%s", out);
    snprintf(cmd, sizeof cmd, XQF_MATCH " --engine name=a --engine name=b --nodes 100 --tc-second 1 --pairs 1");
    cr_assert_eq(run_command(cmd, out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "--tc-second"), "%s", out);
}

Test(cli, bad_input_exits_2_before_any_game)
{
    static const struct {
        const char *args, *message;
    } cases[] = {
        { "--engine name=a --engine name=b proto=carrier-pigeon cmd=/bin/true", "proto" },
        { "--engine name=a params=/nonexistent.params --engine name=b", "/nonexistent.params" },
        { "--engine name=a --engine name=b option.Nope=1", "Nope" },
        { "--engine name=a --engine name=b --book /nonexistent.book", "/nonexistent.book" },
        { "--engine name=a --engine name=b --tc 10+x", "--tc" },
        { "--engine name=a --engine name=b --sprt elo0=5,elo1=0", "--sprt" },
        { "--engine name=a", "two players" },
        { "--engine name=a --engine name=a", "different names" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char cmd[1024], out[4096];
        snprintf(cmd, sizeof cmd, XQF_MATCH " %s --pairs 1 --nodes 100", cases[i].args);
        cr_assert_eq(run_command(cmd, out, sizeof out), 2, "%s: %s", cases[i].args, out);
        cr_assert(strstr(out, "error:") && strstr(out, cases[i].message), "%s: %s",
                  cases[i].args, out);
        cr_assert_null(strstr(out, "Games:"), "games were played: %s", out);
    }
    char *bad = write_temp(START_FEN "\nnot a fen\n");
    char cmd[1024], out[4096];
    snprintf(cmd, sizeof cmd, XQF_MATCH " --engine name=a --engine name=b --book %s", bad);
    cr_assert_eq(run_command(cmd, out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, ":2: bad FEN"), "%s", out);
    unlink(bad);
}

/*
 * An option an engine program refuses (xqf-engine answers `info string
 * error: ...` to a name it does not know) is not left out silently: the
 * match ends, naming the player, the option and the engine's words, and
 * no game is counted.
 */
Test(cli, an_option_the_engine_refuses_ends_the_match)
{
    char cmd[1024], out[4096];
    snprintf(cmd, sizeof cmd, XQF_MATCH " --engine name=a --engine name=prog cmd=%s/xqf-engine option.NoSuchParam=1"
                              " option.NullR=2 --nodes 100 --pairs 2 --quiet", XQF_BIN);
    cr_assert_eq(run_command(cmd, out, sizeof out), 1, "%s", out);
    cr_assert(strstr(out, "a game could not be played: prog: option NoSuchParam=1 refused: unknown option "
                          "'NoSuchParam'"), "%s", out);
    cr_assert(strstr(out, "Games: 0"), "%s", out);
}

Test(cli, summary_lines_match_xqf_tune_stats)
{
    char out[8192], cmd[1024];
    cr_assert_eq(run_command(XQF_MATCH " --engine name=a --engine name=b option.NullR=1 --nodes 500"
                     " --pairs 3 --concurrency 2 --seed 3 --quiet --sprt elo0=0,elo1=10",
                     out, sizeof out), 0, "%s", out);
    long p[5];
    const char *penta = strstr(out, "Pentanomial [LL, LD, DD+WL, WD, WW]: ");
    cr_assert_not_null(penta, "%s", out);
    cr_assert_eq(sscanf(penta + 37, "%ld, %ld, %ld, %ld, %ld", &p[0], &p[1], &p[2], &p[3], &p[4]), 5);
    snprintf(cmd, sizeof cmd, XQF_BIN "/xqf-tune stats --penta %ld,%ld,%ld,%ld,%ld --elo0 0 --elo1 10",
             p[0], p[1], p[2], p[3], p[4]);
    char tune[1024];
    cr_assert_eq(run_command(cmd, tune, sizeof tune), 0, "%s", tune);
    static const char *const lines[] = { "Games: ", "Pairs: ", "Elo: ", "nElo: ", "LLR: " };
    for (size_t i = 0; i < 5; i++) {
        const char *t = strstr(tune, lines[i]);
        cr_assert_not_null(t);
        char want[128];
        snprintf(want, sizeof want, "\n%.*s", (int)strcspn(t, "\n") + 1, t);
        cr_assert(strstr(out, want), "xqf-tune says '%s', xqf-match: %s", want + 1, out);
    }
}

/* True when a process whose command line contains marker is running. */
static bool process_with(const char *marker)
{
    DIR *d = opendir("/proc");
    cr_assert_not_null(d);
    bool found = false;
    for (struct dirent *e; !found && (e = readdir(d));) {
        char path[300], cmdline[4096];
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t n = fread(cmdline, 1, sizeof cmdline - 1, f);
        fclose(f);
        for (size_t i = 0; i < n; i++)
            if (cmdline[i] == '\0')
                cmdline[i] = ' ';
        cmdline[n] = '\0';
        found = strstr(cmdline, marker) != NULL && strstr(cmdline, "xqf-match") == NULL;
    }
    closedir(d);
    return found;
}

Test(cli, ctrl_c_prints_the_summary_and_leaves_no_engine, .timeout = 30)
{
    char marker[64], out_path[] = "/tmp/xqf-sigint-XXXXXX";
    snprintf(marker, sizeof marker, "sigint-marker-%d", (int)getpid());
    int fd = mkstemp(out_path);
    cr_assert(fd >= 0);
    char fake[512];
    snprintf(fake, sizeof fake, "cmd=%s", FAKE_ENGINE);
    char marker_arg[80];
    snprintf(marker_arg, sizeof marker_arg, "arg=%s", marker);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        dup2(fd, STDOUT_FILENO);
        execl(XQF_MATCH, "xqf-match", "--engine", "name=xqf", "--engine", "name=fake", fake,
              "arg=good", "arg=0", marker_arg, "--nodes", "5000", "--pairs", "1000",
              "--concurrency", "2", "--quiet", (char *)NULL);
        _exit(127);
    }
    struct timespec ts = { 1, 500000000 };
    nanosleep(&ts, NULL);
    cr_assert(process_with(marker), "the fake engine is not running");
    kill(pid, SIGINT);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
    char out[8192];
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, out, sizeof out - 1);
    close(fd);
    unlink(out_path);
    out[n > 0 ? n : 0] = '\0';
    cr_assert(strstr(out, "Games: ") && strstr(out, "Stopped by the user"), "%s", out);
    cr_assert_not(process_with(marker), "an engine outlived xqf-match");
}

/* ---- engine processes ----------------------------------------------------- */

/* A line of the process within a second. */
static void first_line(Process *p, char *line, size_t cap)
{
    cr_assert_eq(process_read_line(p, clock_now_us() + 1000000, NULL, line, cap), PROCESS_LINE);
}

/* An engine inherits nothing but its stdin, stdout and stderr. */
Test(process, an_engine_gets_only_its_three_descriptors)
{
    char err[256], line[256];
    char *argv[] = { FAKE_ENGINE, "fds", NULL };
    Process *p = process_spawn(argv, NULL, err, sizeof err);
    cr_assert_not_null(p, "%s", err);
    first_line(p, line, sizeof line);
    cr_assert_str_eq(line, "fds 0 1 2");
    process_destroy(&p, 1000);
}

/* What an engine starts dies with it: it runs in its own process group, killed as a whole. */
static void engine_child_is_gone(int grace_ms, bool quit)
{
    cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);   /* the orphan comes to us, to be reaped and judged */
    char err[256], line[256];
    char *argv[] = { FAKE_ENGINE, "spawn", NULL };
    Process *p = process_spawn(argv, NULL, err, sizeof err);
    cr_assert_not_null(p, "%s", err);
    first_line(p, line, sizeof line);
    long child = 0;
    cr_assert_eq(sscanf(line, "child %ld", &child), 1, "%s", line);
    if (quit)
        cr_assert_eq(process_write_line(p, "quit"), 0);
    process_destroy(&p, grace_ms);
    int status = 0;
    pid_t r = 0;
    for (int i = 0; i < 200 && (r = waitpid((pid_t)child, &status, WNOHANG)) == 0; i++)
        nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
    cr_assert_eq(r, (pid_t)child, "the engine's child is still running");
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %d", status);
}

Test(process, an_engine_that_quits_takes_its_children_along)
{
    engine_child_is_gone(1000, true);
}

Test(process, a_killed_engine_takes_its_children_along)
{
    engine_child_is_gone(0, false);
}

/*
 * A boxed program's stderr (an engine build's, on a worker) reaches the
 * log bounded and escaped: its first 20 lines, control bytes written
 * visibly (a screen-clearing CSI, an OSC that retitles the window), then
 * how much more was dropped; never raw, never all of it.
 */
Test(process, a_boxed_programs_stderr_is_bounded_and_escaped)
{
    char why[256], err[256], line[256], path[] = "/tmp/xqf-stderr-XXXXXX";
    if (!sandbox_program(why, sizeof why))
        cr_skip("no sandbox: %s", why);
    int file = mkstemp(path), saved = dup(STDERR_FILENO);
    cr_assert(file >= 0 && saved >= 0);
    unlink(path);
    fflush(stderr);
    dup2(file, STDERR_FILENO);
    char *argv[] = { "sh", "-c",
                     "i=0; while [ $i -lt 500 ]; do printf '\\033[2J\\033]0;PWNED\\007 line %d\\n' $i >&2; "
                     "i=$((i+1)); done; echo ready; read x", NULL };
    SandboxSpec box = { 0 };
    Process *p = process_spawn_boxed(argv, NULL, &box, err, sizeof err);
    cr_assert_not_null(p, "%s", err);
    first_line(p, line, sizeof line);
    process_destroy(&p, 0);
    char text[65536] = "";
    for (int i = 0; i < 500 && !strstr(text, "not logged"); i++) {
        nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
        ssize_t n = pread(file, text, sizeof text - 1, 0);
        text[n > 0 ? n : 0] = '\0';
    }
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(file);
    cr_assert(strstr(text, "sh (stderr): \\x1b[2J\\x1b]0;PWNED\\x07 line 0\n"), "%s", text);
    cr_assert(strstr(text, " line 19\n") && !strstr(text, " line 20\n"), "the first 20 lines only: %s", text);
    cr_assert(strstr(text, "sh (stderr): 480 more lines ("), "%s", text);
    cr_assert(!strchr(text, '\033') && !strchr(text, '\007'), "a raw control byte in the log");
}

/*
 * A verified start: the program is hashed right before it starts and run
 * from the descriptor that was hashed.  The right SHA-256 starts it (with
 * still only its three descriptors); a file changed after it was verified
 * (a tampered cache) is refused; so is a missing one.
 */
Test(process, a_verified_start_runs_only_the_bytes_it_hashed)
{
    char dir[] = "/tmp/xqf-verified-XXXXXX", path[256], cmd[1024], sha[SHA256_HEX_LEN + 1], err[256], line[256];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/engine", dir);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", FAKE_ENGINE, path);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(sha256_file(path, sha), 0);
    char *argv[] = { path, "fds", NULL };
    Process *p = process_spawn(argv, sha, err, sizeof err);
    cr_assert_not_null(p, "%s", err);
    first_line(p, line, sizeof line);
    cr_assert_str_eq(line, "fds 0 1 2");
    process_destroy(&p, 1000);
    snprintf(cmd, sizeof cmd, "printf x >> '%s'", path);    /* changed on disk after it was verified */
    cr_assert_eq(system(cmd), 0);
    cr_assert_null(process_spawn(argv, sha, err, sizeof err));
    cr_assert_not_null(strstr(err, "changed on disk"), "%s", err);
    unlink(path);
    cr_assert_null(process_spawn(argv, sha, err, sizeof err));
    rmdir(dir);
}

/*
 * An external engine's net goes to it by the option its record names
 * (netopt=, Pikafish's EvalFile, another engine's own name): the line
 * `setoption name PikaNet value FILE` reaches the engine, which here knows
 * no such option and refuses it with its own words, so the game names the
 * option that was sent.  Without netopt= the file goes as EvalFile.
 */
Test(players, a_net_goes_to_an_external_engine_by_its_option_name)
{
    const struct {
        const char *netopt, *sent;
    } cases[] = { { " netopt=PikaNet", "PikaNet" }, { "", "EvalFile" } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char second[512];
        snprintf(second, sizeof second, "name=fake cmd=%s arg=good net=/tmp/xqf-none.nnue%s", FAKE_ENGINE,
                 cases[i].netopt);
        /* static: a spec holds hundreds of options, too large for a test's stack twice over */
        static MatchConfig cfg;
        cfg = (MatchConfig){ .tc = FAST, .concurrency = 1, .seed = 7 };
        spec_from(&cfg.players[0], "name=xqf");
        spec_from(&cfg.players[1], second);
        const PlayerSpec *s = &cfg.players[1];
        cr_assert_eq(s->option_count, 1);
        cr_assert_str_eq(s->options[0].name, cases[i].sent);
        cr_assert_str_eq(s->options[0].value, "/tmp/xqf-none.nnue");
        Book *book = load_book(TWO_OPENINGS);
        Match *m = match_new(&cfg, book);
        cr_assert_not_null(m);
        /* a refused option stops the match (game.h): its failure names the option sent */
        MatchCallbacks none = { 0 };
        cr_assert_eq(match_play_pairs(m, 0, 1, &none), -1);
        char want[64];
        snprintf(want, sizeof want, "option %s=/tmp/xqf-none.nnue refused", cases[i].sent);
        cr_assert(strstr(match_failure(m), want), "'%s' lacks '%s'", match_failure(m), want);
        match_destroy(&m);
        book_destroy(&book);
    }
    assert_no_children();
}

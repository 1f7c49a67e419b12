/*
 * xqf-match: local matches of game pairs between two players, with live
 * statistics and SPRT, and the generator of balanced opening books.
 *
 *   xqf-match --engine SPEC... --engine SPEC... [options]
 *   xqf-match makebook --out FILE [options]
 *
 * Exit status: 0 done (also after Ctrl-C, with the summary so far),
 * 1 failure while playing, 2 bad usage (nothing was played).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "book.h"
#include "bookgen.h"
#include "clock.h"
#include "match.h"
#include "pgn.h"
#include "stats.h"

enum { EXIT_USAGE = 2, DEFAULT_PAIRS = 100, SPRT_PAIRS = 1000000, TICK_MS = 100 };

static const char PROGRAM[] = "xqf-match";

static volatile sig_atomic_t interrupted = 0;

static void on_signal(int sig)
{
    interrupted = 1;
    signal(sig, SIG_DFL); /* a second Ctrl-C ends the program at once */
}

static int fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: error: ", PROGRAM);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return status;
}

static void usage(FILE *out)
{
    fprintf(out,
"Usage: %s --engine SPEC... --engine SPEC... [options]\n"
"       %s makebook --out FILE [--count N] [--seed S] [--plies A-B]\n"
"                       [--max-score CP] [--depth D]\n"
"\n"
"Plays game pairs (each opening once with each colour) between two players\n"
"and prints W/D/L, the pentanomial, Elo and nElo with 95%% intervals and the\n"
"SPRT LLR, from the first player's view.\n"
"\n"
"Player spec (key=value words after --engine, up to the next --option):\n"
"  name=NAME            name in output and PGN\n"
"  option.NAME=VALUE    built-in: a parameter (or Hash); external: setoption\n"
"  params=FILE          built-in: a parameter file\n"
"  hash=MB              hash size (default: --hash)\n"
"  cmd=PROGRAM          an external engine (otherwise the built-in engine)\n"
"  arg=ARG              an argument for it (repeatable)\n"
"  proto=uci|ucci       its protocol (default uci)\n"
"  ranks=0|1            its move ranks: 0-9 (default) or 1-10\n"
"  letters=nb|he        its FEN letters for horse/elephant\n"
"  init=LINE            a command sent after the handshake (repeatable)\n"
"  preset=fairy-stockfish|sjaakii   settings for these engines\n"
"\n"
"Options:\n"
"  --concurrency N      games at once (default: online cores)\n"
"  --tc BASE[+INC]      clock in seconds, e.g. 10+0.1 (default)\n"
"  --nodes N            fixed nodes per move instead of a clock\n"
"  --timemargin MS      clock overrun tolerated (default 100)\n"
"  --move-timeout S     with --nodes: an engine silent this long hangs (default 30)\n"
"  --pairs N            game pairs (default %d; %d with --sprt)\n"
"  --book FILE          opening book (default: the shipped ops/books/default.book)\n"
"  --seed S             opening order (default: from the clock)\n"
"  --sprt elo0=X,elo1=Y[,alpha=A,beta=B]   stop at an SPRT bound (nElo)\n"
"  --pgn FILE           write every game as PGN\n"
"  --hash MB            hash size of every player (default 16)\n"
"  --resign moves=N,score=CP | off   both engines agree for N plies (default 4,600)\n"
"  --draw after=M,moves=N,score=CP | off  |score| <= CP for N plies from move M\n"
"                       (default 40,8,10)\n"
"  --maxmoves N         a game reaching N moves is a draw (default 0: no limit)\n"
"  --quiet              no progress line\n"
"Ctrl-C stops: running games are abandoned and the summary so far is printed.\n",
            PROGRAM, PROGRAM, DEFAULT_PAIRS, SPRT_PAIRS);
}

/* ---- small parsers ------------------------------------------------------ */

static int parse_long(const char *text, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end || errno == ERANGE || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/*
 * Parses "k1=v1,k2=v2" with the given keys into values (numbers); keys not
 * in the text keep their values.  Returns 0 or -1 with a message in err.
 */
static int parse_fields(const char *text, const char *const keys[], double values[], int n,
                        char *err, size_t errlen)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        int k = 0;
        if (eq) {
            *eq = '\0';
            while (k < n && strcmp(keys[k], tok) != 0)
                k++;
        }
        char *end = NULL;
        double v = eq && k < n ? strtod(eq + 1, &end) : 0.0;
        if (!eq || k == n || end == eq + 1 || *end || !isfinite(v)) {
            snprintf(err, errlen, "bad field '%s%s%s' in '%s'", tok, eq ? "=" : "", eq ? eq + 1 : "",
                     text);
            return -1;
        }
        values[k] = v;
    }
    return 0;
}

/* The shipped book: next to an installed program, else in the source tree. */
static const char *default_book(void)
{
    static char path[PATH_MAX + 64];
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(path, sizeof path, "%s/../share/xqf/default.book", exe);
            if (access(path, R_OK) == 0)
                return path;
        }
    }
    return XQF_SOURCE_BOOK;
}

/* ---- the match ---------------------------------------------------------- */

typedef struct {
    bool on;
    double elo0, elo1, alpha, beta, lower, upper;
} Sprt;

typedef struct {
    MatchConfig config;
    int64_t pairs;
    const char *book_path;
    const char *pgn_path;
    Sprt sprt;
    bool quiet;
    int hash_mb;
    char tc_text[32];
} Options;

typedef struct {
    const Options *opt;
    FILE *pgn;
    bool tty;
    bool progress_shown;
    int64_t start_us, last_progress_us;
    int sprt_decision;       /* -1 H0 accepted, 1 H1 accepted, 0 none */
    bool write_failed;
} Run;

static int llr_of(const Sprt *s, const MatchCounts *c, double *llr)
{
    return c->pairs > 0 && xqf_llr_penta(c->penta, s->elo0, s->elo1, llr) == XQF_STATS_OK ? 0 : -1;
}

static void clear_progress(Run *run)
{
    if (run->progress_shown && run->tty)
        fputs("\r\033[K", stderr);
    run->progress_shown = false;
}

static void show_progress(Run *run, const MatchCounts *c)
{
    int64_t now = clock_now_us();
    int64_t every = run->tty ? 250000 : 10000000;
    if (run->opt->quiet || now - run->last_progress_us < every)
        return;
    run->last_progress_us = now;
    double minutes = (now - run->start_us) / 6e7;
    double rate = minutes > 0 ? c->games / minutes : 0.0;
    char line[512];
    int n = snprintf(line, sizeof line,
                     "Games %" PRId64 " W/D/L %" PRId64 "/%" PRId64 "/%" PRId64
                     " penta [%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "]",
                     c->games, c->wins, c->draws, c->losses, c->penta[0], c->penta[1],
                     c->penta[2], c->penta[3], c->penta[4]);
    xqf_elo e;
    if (c->pairs > 0 && xqf_elo_penta(c->penta, &e) == XQF_STATS_OK)
        n += snprintf(line + n, sizeof line - (size_t)n, " Elo %.1f +/- %.1f", e.elo, e.elo_ci95);
    double llr;
    if (run->opt->sprt.on && llr_of(&run->opt->sprt, c, &llr) == 0)
        n += snprintf(line + n, sizeof line - (size_t)n, " LLR %.2f [%.2f, %.2f]", llr,
                      run->opt->sprt.lower, run->opt->sprt.upper);
    n += snprintf(line + n, sizeof line - (size_t)n, " %.1f games/min", rate);
    int64_t left = 2 * run->opt->pairs - c->games;
    if (rate > 0 && !run->opt->sprt.on) {
        long eta = lround(left / rate * 60.0);
        snprintf(line + n, sizeof line - (size_t)n, " ETA %ldh%02ldm%02lds", eta / 3600,
                 eta / 60 % 60, eta % 60);
    }
    fprintf(stderr, run->tty ? "\r\033[K%s" : "%s\n", line);
    run->progress_shown = true;
}

static void on_game(void *ctx, const GameRecord *g, const PairResult *pair, int game)
{
    Run *run = ctx;
    const PlayerSpec *p = run->opt->config.players;
    const char *red = p[game].name, *black = p[game ^ 1].name;
    if (game_reason_is_fault(g->reason)) {
        clear_progress(run);
        fprintf(stderr, "%s: game %" PRId64 " (%s - %s): %s\n", PROGRAM, 2 * pair->pair + game + 1,
                red, black, g->detail);
    }
    if (!run->pgn)
        return;
    PgnTags tags = { "xqf-match", red, black, (int)(2 * pair->pair + game + 1),
                     run->opt->config.tc.nodes ? NULL : run->opt->tc_text,
                     run->opt->config.tc.nodes };
    if (pgn_write(run->pgn, g, &tags) != 0 || fflush(run->pgn) != 0)
        run->write_failed = true;
}

static bool on_pair(void *ctx, const PairResult *pair, const MatchCounts *c)
{
    (void)pair;
    Run *run = ctx;
    double llr;
    if (!run->opt->sprt.on || llr_of(&run->opt->sprt, c, &llr) != 0)
        return false;
    if (llr >= run->opt->sprt.upper)
        run->sprt_decision = 1;
    else if (llr <= run->opt->sprt.lower)
        run->sprt_decision = -1;
    return run->sprt_decision != 0;
}

static bool on_tick(void *ctx, const MatchCounts *c)
{
    Run *run = ctx;
    show_progress(run, c);
    return interrupted != 0;
}

/* Lists "reason N, reason N" for the nonzero counts (or "none"). */
static void print_reasons(const char *label, const int64_t counts[GAME_REASONS])
{
    printf("%s:", label);
    bool any = false;
    for (int r = 0; r < GAME_REASONS; r++)
        if (counts[r]) {
            printf("%s %s %" PRId64, any ? "," : "", game_reason_text((GameReason)r), counts[r]);
            any = true;
        }
    printf("%s\n", any ? "" : " none");
}

static void print_summary(const Run *run, const MatchCounts *c)
{
    const Options *o = run->opt;
    const PlayerSpec *p = o->config.players;
    printf("Match: %s vs %s (%s view)\n", p[0].name, p[1].name, p[0].name);
    printf("Games: %" PRId64 "\n", c->games);
    printf("Pairs: %" PRId64 "\n", c->pairs);
    printf("W/D/L: %" PRId64 "/%" PRId64 "/%" PRId64 "\n", c->wins, c->draws, c->losses);
    printf("Pentanomial [LL, LD, DD+WL, WD, WW]: %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
           ", %" PRId64 "\n", c->penta[0], c->penta[1], c->penta[2], c->penta[3], c->penta[4]);
    xqf_elo e;
    if (c->pairs > 0 && xqf_elo_penta(c->penta, &e) == XQF_STATS_OK) {
        printf("Elo: %.2f +/- %.2f\n", e.elo, e.elo_ci95);
        printf("nElo: %.2f +/- %.2f\n", e.nelo, e.nelo_ci95);
    }
    double llr;
    if (o->sprt.on && llr_of(&o->sprt, c, &llr) == 0) {
        printf("LLR: %.2f [%.2f, %.2f]\n", llr, o->sprt.lower, o->sprt.upper);
        printf("SPRT: elo0=%g elo1=%g alpha=%g beta=%g (nElo): %s\n", o->sprt.elo0, o->sprt.elo1,
               o->sprt.alpha, o->sprt.beta,
               run->sprt_decision > 0 ? "H1 accepted" : run->sprt_decision < 0 ? "H0 accepted"
                                                                               : "no decision");
    }
    print_reasons("Endings", c->by_reason);
    for (int i = 0; i < 2; i++) {
        char label[SPEC_NAME_MAX + 16];
        snprintf(label, sizeof label, "Losses of %.*s", SPEC_NAME_MAX - 1, p[i].name);
        print_reasons(label, c->lost_by[i]);
    }
    if (c->thread_us > 0)
        printf("Time in engine search: %.2f%% of game-thread time (outside: %.2f%%)\n",
               100.0 * c->search_us / c->thread_us, 100.0 - 100.0 * c->search_us / c->thread_us);
    double minutes = (clock_now_us() - run->start_us) / 6e7;
    printf("Games per minute: %.2f\n", minutes > 0 ? c->games / minutes : 0.0);
    if (interrupted)
        printf("Stopped by the user: games in progress were abandoned.\n");
}

/* ---- command line ------------------------------------------------------- */

/* Sets the adjudication from "--resign" / "--draw" text. */
static int parse_adjudication(const char *option, const char *text, Adjudication *adj, char *err,
                              size_t errlen)
{
    bool resign = strcmp(option, "--resign") == 0;
    if (strcmp(text, "off") == 0) {
        if (resign)
            adj->resign_moves = 0;
        else
            adj->draw_moves = 0;
        return 0;
    }
    static const char *const RESIGN_KEYS[] = { "moves", "score" };
    static const char *const DRAW_KEYS[] = { "after", "moves", "score" };
    double v[3] = { resign ? adj->resign_moves : adj->draw_after,
                    resign ? adj->resign_score : adj->draw_moves, adj->draw_score };
    if (parse_fields(text, resign ? RESIGN_KEYS : DRAW_KEYS, v, resign ? 2 : 3, err, errlen) != 0)
        return -1;
    for (int i = 0; i < 3; i++)
        if (v[i] < 0 || v[i] > 100000 || v[i] != floor(v[i])) {
            snprintf(err, errlen, "values must be whole numbers from 0 to 100000 in '%s'", text);
            return -1;
        }
    if (resign) {
        adj->resign_moves = (int)v[0];
        adj->resign_score = (int)v[1];
    } else {
        adj->draw_after = (int)v[0];
        adj->draw_moves = (int)v[1];
        adj->draw_score = (int)v[2];
    }
    return 0;
}

static int parse_sprt(const char *text, Sprt *s, char *err, size_t errlen)
{
    static const char *const KEYS[] = { "elo0", "elo1", "alpha", "beta" };
    double v[4] = { NAN, NAN, 0.05, 0.05 };
    if (parse_fields(text, KEYS, v, 4, err, errlen) != 0)
        return -1;
    if (isnan(v[0]) || isnan(v[1]) || !(v[0] < v[1])) {
        snprintf(err, errlen, "give elo0 < elo1 in '%s'", text);
        return -1;
    }
    if (xqf_sprt_bounds(v[2], v[3], &s->lower, &s->upper) != XQF_STATS_OK) {
        snprintf(err, errlen, "alpha and beta must be in (0,1) with alpha + beta < 1");
        return -1;
    }
    s->on = true;
    s->elo0 = v[0];
    s->elo1 = v[1];
    s->alpha = v[2];
    s->beta = v[3];
    return 0;
}

/* The value of option argv[*i] (the next argument). */
static const char *value_of(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

/* Parses the match options; returns -1 when all is well, else the exit status. */
static int parse_options(int argc, char **argv, Options *o)
{
    memset(o, 0, sizeof *o);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    o->config.concurrency = online > 0 ? (int)online : 1;
    o->config.seed = (uint64_t)time(NULL);
    o->config.tc.base_ms = 10000;
    o->config.tc.inc_ms = 100;
    o->config.tc.margin_ms = 100;
    o->config.tc.move_timeout_ms = 30000;
    o->config.adj = (Adjudication){ 4, 600, 40, 8, 10, 0 };
    snprintf(o->tc_text, sizeof o->tc_text, "10+0.1");
    o->hash_mb = SPEC_DEFAULT_HASH_MB;
    o->pairs = -1;
    int engine_at[2], engines = 0;
    bool tc_given = false;
    char err[512];
    /* Pass 1: everything but the player specs (which need --hash). */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        long n;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return EXIT_SUCCESS;
        }
        if (strcmp(a, "--quiet") == 0) {
            o->quiet = true;
            continue;
        }
        if (strcmp(a, "--engine") == 0) {
            if (engines == 2)
                return fail(EXIT_USAGE, "more than two --engine");
            engine_at[engines++] = i;
            while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
                i++;
            continue;
        }
        if (strncmp(a, "--", 2) != 0)
            return fail(EXIT_USAGE, "unexpected argument '%s' (see --help)", a);
        if (!(v = value_of(argc, argv, &i)))
            return fail(EXIT_USAGE, "%s needs a value", a);
        if (strcmp(a, "--concurrency") == 0) {
            if (parse_long(v, 1, 1024, &n) != 0)
                return fail(EXIT_USAGE, "--concurrency: '%s' is not 1-1024", v);
            o->config.concurrency = (int)n;
        } else if (strcmp(a, "--tc") == 0) {
            if (time_control_parse(&o->config.tc, v) != 0)
                return fail(EXIT_USAGE, "--tc: '%s' is not BASE[+INC] in seconds", v);
            snprintf(o->tc_text, sizeof o->tc_text, "%s", v);
            tc_given = true;
        } else if (strcmp(a, "--nodes") == 0) {
            if (parse_long(v, 1, LONG_MAX, &n) != 0)
                return fail(EXIT_USAGE, "--nodes: '%s' is not a positive count", v);
            o->config.tc.nodes = (uint64_t)n;
        } else if (strcmp(a, "--timemargin") == 0) {
            if (parse_long(v, 0, 3600000, &n) != 0)
                return fail(EXIT_USAGE, "--timemargin: '%s' is not milliseconds", v);
            o->config.tc.margin_ms = n;
        } else if (strcmp(a, "--move-timeout") == 0) {
            if (parse_long(v, 1, 86400, &n) != 0)
                return fail(EXIT_USAGE, "--move-timeout: '%s' is not seconds", v);
            o->config.tc.move_timeout_ms = n * 1000;
        } else if (strcmp(a, "--pairs") == 0) {
            if (parse_long(v, 1, LONG_MAX / 4, &n) != 0)
                return fail(EXIT_USAGE, "--pairs: '%s' is not a positive count", v);
            o->pairs = n;
        } else if (strcmp(a, "--book") == 0) {
            o->book_path = v;
        } else if (strcmp(a, "--pgn") == 0) {
            o->pgn_path = v;
        } else if (strcmp(a, "--seed") == 0) {
            char *end;
            errno = 0;
            o->config.seed = strtoull(v, &end, 10);
            if (end == v || *end || errno == ERANGE || *v == '-')
                return fail(EXIT_USAGE, "--seed: '%s' is not a number", v);
        } else if (strcmp(a, "--hash") == 0) {
            if (parse_long(v, 1, 65536, &n) != 0)
                return fail(EXIT_USAGE, "--hash: '%s' is not MB (1-65536)", v);
            o->hash_mb = (int)n;
        } else if (strcmp(a, "--maxmoves") == 0) {
            if (parse_long(v, 0, 100000, &n) != 0)
                return fail(EXIT_USAGE, "--maxmoves: '%s' is not a move count", v);
            o->config.adj.max_plies = (int)n * 2;
        } else if (strcmp(a, "--resign") == 0 || strcmp(a, "--draw") == 0) {
            if (parse_adjudication(a, v, &o->config.adj, err, sizeof err) != 0)
                return fail(EXIT_USAGE, "%s: %s", a, err);
        } else if (strcmp(a, "--sprt") == 0) {
            if (parse_sprt(v, &o->sprt, err, sizeof err) != 0)
                return fail(EXIT_USAGE, "--sprt: %s", err);
        } else {
            return fail(EXIT_USAGE, "unknown option '%s' (see --help)", a);
        }
    }
    if (engines != 2)
        return fail(EXIT_USAGE, "give two players with --engine (see --help)");
    if (tc_given && o->config.tc.nodes)
        return fail(EXIT_USAGE, "--tc and --nodes exclude each other");
    for (int e = 0; e < 2; e++) {
        int at = engine_at[e], count = 0;
        while (at + 1 + count < argc && strncmp(argv[at + 1 + count], "--", 2) != 0)
            count++;
        if (spec_parse(&o->config.players[e], count, argv + at + 1, o->hash_mb, err, sizeof err) != 0)
            return fail(EXIT_USAGE, "engine %d: %s", e + 1, err);
    }
    if (strcmp(o->config.players[0].name, o->config.players[1].name) == 0)
        return fail(EXIT_USAGE, "the two players need different names (name=...)");
    if (o->pairs < 0)
        o->pairs = o->sprt.on ? SPRT_PAIRS : DEFAULT_PAIRS;
    if (!o->book_path)
        o->book_path = default_book();
    return -1;
}

static int run_match(int argc, char **argv)
{
    Options o;
    int status = parse_options(argc, argv, &o);
    if (status >= 0)
        return status;
    char err[512];
    Book *book = book_load(o.book_path, err, sizeof err);
    if (!book)
        return fail(EXIT_USAGE, "book: %s", err);
    Run run = { &o, NULL, isatty(STDERR_FILENO) != 0, false, clock_now_us(), 0, 0, false };
    if (o.pgn_path && !(run.pgn = fopen(o.pgn_path, "w"))) {
        book_destroy(&book);
        return fail(EXIT_USAGE, "--pgn: cannot write %s: %s", o.pgn_path, strerror(errno));
    }
    Match *m = match_new(&o.config, book);
    if (!m) {
        book_destroy(&book);
        if (run.pgn)
            fclose(run.pgn);
        return fail(EXIT_FAILURE, "out of memory");
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (!o.quiet)
        fprintf(stderr, "%s: %s vs %s, %" PRId64 " pairs, %d threads, book %s (%d openings), seed %"
                PRIu64 "\n", PROGRAM, o.config.players[0].name, o.config.players[1].name, o.pairs,
                o.config.concurrency, o.book_path, book_size(book), o.config.seed);
    MatchCallbacks cb = { on_game, on_pair, on_tick, TICK_MS, &run };
    int rc = match_play_pairs(m, 0, o.pairs, &cb);
    MatchCounts counts;
    match_counts(m, &counts);
    clear_progress(&run);
    print_summary(&run, &counts);
    match_destroy(&m);
    book_destroy(&book);
    if (run.pgn && fclose(run.pgn) != 0)
        run.write_failed = true;
    if (run.write_failed)
        return fail(EXIT_FAILURE, "--pgn: write error on %s", o.pgn_path);
    if (rc != 0)
        return fail(EXIT_FAILURE, "a game thread failed (out of memory?)");
    return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* ---- makebook ----------------------------------------------------------- */

static int run_makebook(int argc, char **argv)
{
    BookGenConfig cfg = { 1000, 1, 6, 12, 60, 6 };
    const char *out_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        long n;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return EXIT_SUCCESS;
        }
        if (!(v = value_of(argc, argv, &i)))
            return fail(EXIT_USAGE, "makebook: %s needs a value", a);
        if (strcmp(a, "--out") == 0) {
            out_path = v;
        } else if (strcmp(a, "--count") == 0 && parse_long(v, 1, 10000000, &n) == 0) {
            cfg.count = (int)n;
        } else if (strcmp(a, "--seed") == 0 && parse_long(v, 0, LONG_MAX, &n) == 0) {
            cfg.seed = (uint64_t)n;
        } else if (strcmp(a, "--max-score") == 0 && parse_long(v, 0, 10000, &n) == 0) {
            cfg.max_score = (int)n;
        } else if (strcmp(a, "--depth") == 0 && parse_long(v, 1, 30, &n) == 0) {
            cfg.depth = (int)n;
        } else if (strcmp(a, "--plies") == 0) {
            int lo, hi, used = 0;
            if (sscanf(v, "%d-%d%n", &lo, &hi, &used) != 2 || v[used] || lo < 1 || hi < lo || hi > 60)
                return fail(EXIT_USAGE, "makebook: --plies: '%s' is not A-B with 1 <= A <= B <= 60", v);
            cfg.min_plies = lo;
            cfg.max_plies = hi;
        } else {
            return fail(EXIT_USAGE, "makebook: bad option or value: %s %s", a, v);
        }
    }
    if (!out_path)
        return fail(EXIT_USAGE, "makebook: --out FILE is required");
    FILE *out = fopen(out_path, "w");
    if (!out)
        return fail(EXIT_USAGE, "makebook: cannot write %s: %s", out_path, strerror(errno));
    fprintf(out,
            "# Xiangqi Forge opening book: one position per line, FEN [moves ...] [# comment].\n"
            "# Generated by: xqf-match makebook --out %s --count %d --seed %" PRIu64
            " --plies %d-%d --max-score %d --depth %d\n"
            "# Each line: the position, then the line that led to it and the engine's score.\n",
            out_path, cfg.count, cfg.seed, cfg.min_plies, cfg.max_plies, cfg.max_score, cfg.depth);
    char err[256];
    int rc = bookgen_run(&cfg, out, err, sizeof err);
    if (fclose(out) != 0 && rc == 0) {
        snprintf(err, sizeof err, "write error on %s", out_path);
        rc = -1;
    }
    return rc == 0 ? EXIT_SUCCESS : fail(EXIT_FAILURE, "makebook: %s", err);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "makebook") == 0)
        return run_makebook(argc - 1, argv + 1);
    if (argc < 2)
        return fail(EXIT_USAGE, "no players given (see %s --help)", PROGRAM);
    return run_match(argc, argv);
}

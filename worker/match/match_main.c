/*
 * xqf-match: local matches of game pairs between two players, with live
 * statistics and SPRT, and the generator of balanced opening books.
 *
 *   xqf-match --engine SPEC... --engine SPEC... [options]
 *   xqf-match makebook --out FILE [options]
 *   xqf-match blunders --pgn FILE... --player NAME --out SUITE [options]
 *   xqf-match tactics --suite SUITE --engine SPEC... (--nodes N | --depth D) [options]
 *   xqf-match tree --engine SPEC... --engine SPEC... --depth D [options]
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
#include "match_args.h"
#include "match_tactics.h"
#include "opts.h"
#include "datagen.h"
#include "pgn.h"
#include "stats.h"

#define DEFAULT_PAIRS_N 100
#define SPRT_PAIRS_N 1000000
enum { EXIT_USAGE = 2, DEFAULT_PAIRS = DEFAULT_PAIRS_N, SPRT_PAIRS = SPRT_PAIRS_N, TICK_MS = 100 };

static const char PROGRAM[] = "xqf-match";

static volatile sig_atomic_t interrupted = 0;

static void on_signal(int sig)
{
    interrupted = 1;
    signal(sig, SIG_DFL); /* a second Ctrl-C ends the program at once */
}

#define STR_(x) #x
#define STR(x) STR_(x)

static const OptSpec MATCH_OPTIONS[] = {
    { "--engine", OPT_TEXT, "SPEC...", NULL, .help = "a player (twice: the first one's view is reported)" },
    { "--concurrency", OPT_INT, "N", NULL, .imin = 1, .imax = 1024, .help = "games at once (default: online cores)" },
    { "--tc", OPT_TEXT, "BASE[+INC]", "10+0.1", .help = "clock in seconds" },
    { "--tc-second", OPT_TEXT, "BASE[+INC]", NULL, .help = "time odds: the second player's own clock (--tc the first's)" },
    { "--nodes", OPT_INT, "N", NULL, .imin = 1, .imax = INT64_MAX, .help = "fixed nodes per move instead of a clock" },
    { "--timemargin", OPT_INT, "MS", "100", .imin = 0, .imax = 3600000, .help = "clock overrun tolerated" },
    { "--move-timeout", OPT_INT, "S", "30", .imin = 1, .imax = 86400,
      .help = "with --nodes: an engine silent this long hangs" },
    { "--pairs", OPT_INT, "N", NULL, .imin = 1, .imax = INT64_MAX / 4,
      .help = "game pairs (default " STR(DEFAULT_PAIRS_N) "; " STR(SPRT_PAIRS_N) " with --sprt)" },
    { "--book", OPT_TEXT, "FILE", NULL, .help = "opening book (default: the shipped ops/books/default.book)" },
    { "--seed", OPT_TEXT, "S", NULL, .help = "opening order, 0-2^64-1 (default: from the clock)" },
    { "--sprt", OPT_TEXT, "elo0=X,elo1=Y[,alpha=A,beta=B]", NULL, .help = "stop at an SPRT bound (nElo)" },
    { "--pgn", OPT_TEXT, "FILE", NULL, .help = "write every game as PGN" },
    { "--data", OPT_TEXT, "FILE", NULL, .help = "write training positions (xqf-tune texel's format)" },
    { "--data-skip", OPT_INT, "N", "0", .imin = 0, .imax = 1000, .help = "--data: plies after the opening not kept" },
    { "--hash", OPT_INT, "MB", STR(SPEC_DEFAULT_HASH_MB), .imin = 1, .imax = 65536, .help = "hash size of every player" },
    { "--resign", OPT_TEXT, "moves=N,score=CP|off", "moves=4,score=600",
      .help = "a win once both engines agree for N plies on a score of at least CP" },
    { "--draw", OPT_TEXT, "after=M,moves=N,score=CP|off", "after=40,moves=8,score=10",
      .help = "a draw once |score| <= CP for N plies from move M" },
    { "--maxmoves", OPT_INT, "N", "0", .imin = 0, .imax = 100000, .help = "a game reaching N moves is a draw (0: no limit)" },
    { "--quiet", OPT_FLAG, NULL, NULL, .help = "no progress line" },
    OPTS_END,
};

static const OptTable MATCH_TABLE = {
    .program = "xqf-match", .spec = MATCH_OPTIONS,
    .usage =
        "Usage: xqf-match --engine SPEC... --engine SPEC... [options]\n"
        "       xqf-match makebook --out FILE [--count N] [--seed S] [--plies A-B]\n"
        "                       [--max-score CP] [--depth D]\n"
        "       xqf-match blunders --pgn FILE... --player NAME --out SUITE [--before CP] [--after CP]\n"
        "       xqf-match tactics --suite SUITE --engine SPEC... (--nodes N | --depth D)\n"
        "                         [--concurrency N] [--hash MB] [--verbose]\n"
        "       xqf-match tree --engine SPEC... --engine SPEC... --depth D [--book FILE]\n"
        "                      [--count N] [--hash MB] [--verbose]\n"
        "\n"
        "Plays game pairs (each opening once with each colour) between two players\n"
        "and prints W/D/L, the pentanomial, Elo and nElo with 95% intervals and the\n"
        "SPRT LLR, from the first player's view.\n"
        "\n"
        "Player spec (key=value words after --engine, up to the next --option):\n"
        "  name=NAME            name in output and PGN\n"
        "  option.NAME=VALUE    built-in: a parameter (or Hash); external: setoption\n"
        "  params=FILE          built-in: a parameter file\n"
        "  hash=MB              hash size (default: --hash)\n"
        "  net=FILE|none        the net it evaluates with (external: setoption EvalFile;\n"
        "                       none: the hand-crafted evaluation, UseNNUE false)\n"
        "  cmd=PROGRAM          an external engine (otherwise the built-in engine)\n"
        "  arg=ARG              an argument for it (repeatable)\n"
        "  proto=uci|ucci       its protocol (default uci)\n"
        "  ranks=0|1            its move ranks: 0-9 (default) or 1-10\n"
        "  letters=nb|he        its FEN letters for horse/elephant\n"
        "  init=LINE            a command sent after the handshake (repeatable)\n"
        "  preset=fairy-stockfish|sjaakii   settings for these engines\n",
    .epilog = "\nCtrl-C stops: running games are abandoned and the summary so far is printed.\n"
              "See xqf-match makebook --help for the book generator, xqf-match blunders --help\n"
              "and xqf-match tactics --help for test suites of positions taken from games,\n"
              "xqf-match tree --help to compare two parameter sets' trees.\n",
};

static const OptSpec MAKEBOOK_OPTIONS[] = {
    { "--out", OPT_TEXT, "FILE", NULL, .help = "the book to write, required" },
    { "--count", OPT_INT, "N", "1000", .imin = 1, .imax = 10000000, .help = "positions" },
    { "--seed", OPT_INT, "S", "1", .imin = 0, .imax = INT64_MAX, .help = "random walk seed" },
    { "--plies", OPT_TEXT, "A-B", "6-12", .help = "random plies from the start, 1 <= A <= B <= 60" },
    { "--max-score", OPT_INT, "CP", "60", .imin = 0, .imax = 10000, .help = "keep positions the engine scores within this" },
    { "--depth", OPT_INT, "D", "6", .imin = 1, .imax = 30, .help = "search depth of the score" },
    OPTS_END,
};

static const OptTable MAKEBOOK_TABLE = {
    .program = "xqf-match", .spec = MAKEBOOK_OPTIONS,
    .usage = "Usage: xqf-match makebook --out FILE [--count N] [--seed S] [--plies A-B]\n"
             "                          [--max-score CP] [--depth D]\n"
             "\n"
             "Writes a book of balanced opening positions: random walks from the start\n"
             "position, kept when the engine's score at the depth stays within --max-score.\n",
};

/* ---- small parsers ------------------------------------------------------ */

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
    const char *data_path;
    DataFilter data_filter;
    Sprt sprt;
    bool quiet;
    int hash_mb;
    char tc_text[32];
} Options;

typedef struct {
    const Options *opt;
    FILE *pgn;
    FILE *data;
    int64_t data_positions;
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

/* data_extract's callback: one record to the --data file. */
static void write_position(void *ctx, const DataPosition *pos)
{
    Run *run = ctx;
    uint8_t record[DATA_RECORD_BYTES];
    data_pack(pos, record);
    if (fwrite(record, 1, sizeof record, run->data) != sizeof record)
        run->write_failed = true;
    run->data_positions++;
}

/* A book's file name without its folder, for the games' [Book] tag. */
static const char *book_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
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
    if (run->data && data_extract(g, &run->opt->data_filter, write_position, run) < 0) {
        clear_progress(run);
        fprintf(stderr, "%s: game %" PRId64 " (%s - %s): its record does not replay (an illegal move): no positions kept after it\n",
                PROGRAM, 2 * pair->pair + game + 1, red, black);
    }
    if (!run->pgn)
        return;
    PgnTags tags = { "xqf-match", red, black, (int)(2 * pair->pair + game + 1),
                     run->opt->config.tc.nodes ? NULL : run->opt->tc_text,
                     run->opt->config.tc.nodes, spec_net_name(&p[game]), spec_net_name(&p[game ^ 1]),
                     /* the tag when both sides were given one count (threads=N) */
                     p[0].threads == p[1].threads ? p[0].threads : 0, book_name(run->opt->book_path) };
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

/* The default of one of xqf-match's options. */
static const char *option_default(const char *name)
{
    for (const OptSpec *o = MATCH_OPTIONS; o->name; o++)
        if (strcmp(o->name, name) == 0)
            return o->def;
    return NULL;
}

/* Whether --help or -h is among the words. */
static bool asks_help(char **words, int n)
{
    bool help = false;
    for (int i = 0; i < n; i++)
        help = help || strcmp(words[i], "--help") == 0 || strcmp(words[i], "-h") == 0;
    return help;
}

/* The table's values into o (the players aside). Returns -1 when all is well, else the exit status. */
static int apply_options(const Opts *opts, Options *o)
{
    char err[512];
    const char *v;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    o->config.concurrency = opts_given(opts, "--concurrency") ? (int)opts_int(opts, "--concurrency")
                                                               : online > 0 ? (int)online : 1;
    o->config.seed = (uint64_t)time(NULL);
    if ((v = opts_text(opts, "--seed"))) {
        char *end;
        errno = 0;
        o->config.seed = strtoull(v, &end, 10);
        if (end == v || *end || errno == ERANGE || *v == '-')
            return match_fail(EXIT_USAGE, "--seed: '%s' is not a number", v);
    }
    if (time_control_parse(&o->config.tc, opts_text(opts, "--tc")) != 0)
        return match_fail(EXIT_USAGE, "--tc: '%s' is not BASE[+INC] in seconds", opts_text(opts, "--tc"));
    snprintf(o->tc_text, sizeof o->tc_text, "%s", opts_text(opts, "--tc"));
    if (opts_given(opts, "--tc") && opts_given(opts, "--nodes"))
        return match_fail(EXIT_USAGE, "--tc and --nodes exclude each other");
    if ((v = opts_text(opts, "--tc-second"))) {
        TimeControl second;
        if (opts_given(opts, "--nodes"))
            return match_fail(EXIT_USAGE, "--tc-second (time odds) goes with a clock, not --nodes");
        if (time_control_parse(&second, v) != 0)
            return match_fail(EXIT_USAGE, "--tc-second: '%s' is not BASE[+INC] in seconds", v);
        o->config.tc.base1_ms = second.base_ms;
        o->config.tc.inc1_ms = second.inc_ms;
        snprintf(o->tc_text, sizeof o->tc_text, "%s/%s", opts_text(opts, "--tc"), v);
    }
    o->config.tc.nodes = (uint64_t)opts_int(opts, "--nodes");
    o->config.tc.margin_ms = opts_int(opts, "--timemargin");
    o->config.tc.move_timeout_ms = opts_int(opts, "--move-timeout") * 1000;
    o->hash_mb = (int)opts_int(opts, "--hash");
    o->book_path = opts_text(opts, "--book");
    o->pgn_path = opts_text(opts, "--pgn");
    o->data_path = opts_text(opts, "--data");
    data_filter_default(&o->data_filter);
    o->data_filter.skip_plies = (int)opts_int(opts, "--data-skip");
    o->quiet = opts_given(opts, "--quiet");
    o->config.adj = (Adjudication){ 0 };
    o->config.adj.max_plies = (int)opts_int(opts, "--maxmoves") * 2;
    static const char *const ADJ_OPTIONS[] = { "--resign", "--draw" };
    for (int i = 0; i < 2; i++) {
        /* the table's default first: a value given may set some of the fields only */
        const char *name = ADJ_OPTIONS[i], *given = opts_given(opts, name) ? opts_text(opts, name) : NULL;
        if (parse_adjudication(name, option_default(name), &o->config.adj, err, sizeof err) != 0 ||
            (given && parse_adjudication(name, given, &o->config.adj, err, sizeof err) != 0))
            return match_fail(EXIT_USAGE, "%s: %s", name, err);
    }
    if ((v = opts_text(opts, "--sprt")) && parse_sprt(v, &o->sprt, err, sizeof err) != 0)
        return match_fail(EXIT_USAGE, "--sprt: %s", err);
    o->pairs = opts_given(opts, "--pairs") ? opts_int(opts, "--pairs") : o->sprt.on ? SPRT_PAIRS : DEFAULT_PAIRS;
    if (!o->book_path)
        o->book_path = match_default_book();
    return -1;
}

/* Parses the match options; returns -1 when all is well, else the exit status. */
static int parse_options(int argc, char **argv, Options *o)
{
    memset(o, 0, sizeof *o);
    char **rest = malloc(sizeof *rest * (size_t)(argc + 1));
    int nrest, at[2], count[2], engines, status = rest ? -1 : match_fail(EXIT_FAILURE, "out of memory");
    Opts opts;
    if (status < 0)
        status = match_split_engines(argc, argv, rest, &nrest, at, count, 2, &engines, "");
    if (status < 0 && engines != 2 && !asks_help(rest, nrest))
        status = match_fail(EXIT_USAGE, "give two players with --engine (see --help)");
    if (status < 0) {
        int rc = opts_parse(&opts, &MATCH_TABLE, nrest, rest);
        status = rc == OPTS_OK ? -1 : rc == OPTS_HELP ? EXIT_SUCCESS : EXIT_USAGE;
    }
    if (status < 0)
        status = apply_options(&opts, o);
    char err[512];
    for (int e = 0; status < 0 && e < 2; e++)
        if (spec_parse(&o->config.players[e], count[e], argv + at[e], o->hash_mb, err, sizeof err) != 0)
            status = match_fail(EXIT_USAGE, "engine %d: %s", e + 1, err);
    if (status < 0 && strcmp(o->config.players[0].name, o->config.players[1].name) == 0)
        status = match_fail(EXIT_USAGE, "the two players need different names (name=...)");
    free(rest);
    return status;
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
        return match_fail(EXIT_USAGE, "book: %s", err);
    Run run = { .opt = &o, .tty = isatty(STDERR_FILENO) != 0, .start_us = clock_now_us() };
    if (o.pgn_path && !(run.pgn = fopen(o.pgn_path, "we"))) {
        book_destroy(&book);
        return match_fail(EXIT_USAGE, "--pgn: cannot write %s: %s", o.pgn_path, strerror(errno));
    }
    if (o.data_path && (!(run.data = fopen(o.data_path, "we")) || data_write_header(run.data) != 0)) {
        int e = errno;
        book_destroy(&book);
        if (run.pgn)
            fclose(run.pgn);
        if (run.data)
            fclose(run.data);
        return match_fail(EXIT_USAGE, "--data: cannot write %s: %s", o.data_path, strerror(e));
    }
    Match *m = match_new(&o.config, book);
    if (!m) {
        book_destroy(&book);
        if (run.pgn)
            fclose(run.pgn);
        if (run.data)
            fclose(run.data);
        return match_fail(EXIT_FAILURE, "out of memory");
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (!o.quiet)
        fprintf(stderr, "%s: %s vs %s, %" PRId64 " pairs, %d games at once, book %s (%d openings), seed %"
                PRIu64 "\n", PROGRAM, o.config.players[0].name, o.config.players[1].name, o.pairs,
                o.config.concurrency, o.book_path, book_size(book), o.config.seed);
    MatchCallbacks cb = { on_game, on_pair, on_tick, TICK_MS, &run };
    int rc = match_play_pairs(m, 0, o.pairs, &cb);
    char failure[256];
    snprintf(failure, sizeof failure, "%s", match_failure(m));
    MatchCounts counts;
    match_counts(m, &counts);
    clear_progress(&run);
    print_summary(&run, &counts);
    match_destroy(&m);
    book_destroy(&book);
    if (run.pgn && fclose(run.pgn) != 0)
        run.write_failed = true;
    if (run.data && fclose(run.data) != 0)
        run.write_failed = true;
    if (run.data && !o.quiet)
        fprintf(stderr, "%s: %" PRId64 " training positions written to %s\n", PROGRAM, run.data_positions,
                o.data_path);
    if (run.write_failed)
        return match_fail(EXIT_FAILURE, "write error on %s", o.pgn_path ? o.pgn_path : o.data_path);
    if (rc != 0)
        return match_fail(EXIT_FAILURE, "a game could not be played: %s", failure);
    return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* ---- makebook ----------------------------------------------------------- */

static int run_makebook(int argc, char **argv)
{
    Opts opts;
    int rc = opts_parse(&opts, &MAKEBOOK_TABLE, argc - 1, argv + 1);
    if (rc != OPTS_OK)
        return rc == OPTS_HELP ? EXIT_SUCCESS : EXIT_USAGE;
    BookGenConfig cfg = { (int)opts_int(&opts, "--count"), (uint64_t)opts_int(&opts, "--seed"), 0, 0,
                          (int)opts_int(&opts, "--max-score"), (int)opts_int(&opts, "--depth") };
    const char *out_path = opts_text(&opts, "--out"), *plies = opts_text(&opts, "--plies");
    int lo, hi, used = 0;
    if (sscanf(plies, "%d-%d%n", &lo, &hi, &used) != 2 || plies[used] || lo < 1 || hi < lo || hi > 60)
        return match_fail(EXIT_USAGE, "makebook: --plies: '%s' is not A-B with 1 <= A <= B <= 60", plies);
    cfg.min_plies = lo;
    cfg.max_plies = hi;
    if (!out_path)
        return match_fail(EXIT_USAGE, "makebook: --out FILE is required");
    FILE *out = fopen(out_path, "we");
    if (!out)
        return match_fail(EXIT_USAGE, "makebook: cannot write %s: %s", out_path, strerror(errno));
    fprintf(out,
            "# Xiangqi Forge opening book: one position per line, FEN [moves ...] [# comment].\n"
            "# Generated by: xqf-match makebook --out %s --count %d --seed %" PRIu64
            " --plies %d-%d --max-score %d --depth %d\n"
            "# Each line: the position, then the line that led to it and the engine's score.\n",
            out_path, cfg.count, cfg.seed, cfg.min_plies, cfg.max_plies, cfg.max_score, cfg.depth);
    char err[256];
    rc = bookgen_run(&cfg, out, err, sizeof err);
    if (fclose(out) != 0 && rc == 0) {
        snprintf(err, sizeof err, "write error on %s", out_path);
        rc = -1;
    }
    return rc == 0 ? EXIT_SUCCESS : match_fail(EXIT_FAILURE, "makebook: %s", err);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "makebook") == 0)
        return run_makebook(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "blunders") == 0)
        return match_blunders(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "tactics") == 0)
        return match_tactics(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "tree") == 0)
        return match_tree(argc - 1, argv + 1);
    if (argc < 2)
        return match_fail(EXIT_USAGE, "no players given (see %s --help)", PROGRAM);
    return run_match(argc, argv);
}

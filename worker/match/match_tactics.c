#include "match_tactics.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "book.h"
#include "clock.h"
#include "fen.h"
#include "match_args.h"
#include "opts.h"
#include "search.h"
#include "stats.h"
#include "tactics.h"

enum { EXIT_USAGE = 2 };

static const char PROGRAM[] = "xqf-match";

/* ---- blunders ----------------------------------------------------------- */

static const OptSpec BLUNDERS_OPTIONS[] = {
    { "--pgn", OPT_TEXT, "FILE", NULL, .repeat = true, .help = "games as xqf-match --pgn or xqf-tune pgn write them (repeatable)" },
    { "--player", OPT_TEXT, "NAME", NULL, .help = "whose moves are looked at (its name in the games), required" },
    { "--out", OPT_TEXT, "FILE", NULL, .help = "the suite to write, required" },
    { "--before", OPT_INT, "CP", "150", .imin = -MATE_BOUND + 1, .imax = MATE_BOUND - 1, .help = "the player's score before the move, at least" },
    { "--after", OPT_INT, "CP", "-500", .imin = -MATE_BOUND + 1, .imax = MATE_BOUND - 1, .help = "its score at its next move, at most (a mate counts)" },
    OPTS_END,
};

static const OptTable BLUNDERS_TABLE = {
    .program = "xqf-match blunders", .spec = BLUNDERS_OPTIONS,
    .usage = "Usage: xqf-match blunders --pgn FILE... --player NAME --out SUITE [--before CP] [--after CP]\n"
             "\n"
             "Writes the positions where the player's score fell from --before or more\n"
             "to --after or less by its next move (or it was mated at once): the\n"
             "position before its move, with the move to avoid (EPD 'am'), one line\n"
             "each, a suite for xqf-match tactics.\n",
};

typedef struct {
    FILE *out;
    const char *source;
} BlunderOut;

static void write_blunder(void *ctx, const Blunder *b)
{
    BlunderOut *o = ctx;
    char line[SUITE_LINE_MAX];
    blunder_line(b, o->source, line);
    fprintf(o->out, "%s\n", line);
}

int match_blunders(int argc, char **argv)
{
    Opts opts;
    int rc = opts_parse(&opts, &BLUNDERS_TABLE, argc - 1, argv + 1);
    if (rc != OPTS_OK)
        return rc == OPTS_HELP ? EXIT_SUCCESS : EXIT_USAGE;
    const char *player = opts_text(&opts, "--player"), *out_path = opts_text(&opts, "--out");
    if (!opts_given(&opts, "--pgn") || !player || !out_path)
        return match_fail(EXIT_USAGE, "blunders: --pgn, --player and --out are required");
    BlunderRule rule = { (int)opts_int(&opts, "--before"), (int)opts_int(&opts, "--after") };
    if (rule.after >= rule.before)
        return match_fail(EXIT_USAGE, "blunders: --after (%d) must be below --before (%d)", rule.after, rule.before);
    FILE *out = fopen(out_path, "we");
    if (!out)
        return match_fail(EXIT_USAGE, "blunders: cannot write %s: %s", out_path, strerror(errno));
    fprintf(out, "# Positions where %s's score fell from %+.2f or more to %+.2f or less by its next move:\n"
                 "# the move it played is to be avoided (am).  xqf-match blunders",
            player, rule.before / 100.0, rule.after / 100.0);
    for (int i = 0; opts_nth(&opts, "--pgn", i); i++)
        fprintf(out, " --pgn %s", opts_nth(&opts, "--pgn", i));
    fprintf(out, " --player %s --before %d --after %d\n", player, rule.before, rule.after);
    int status = EXIT_SUCCESS;
    long games = 0, played = 0, found = 0;
    for (int i = 0; status == EXIT_SUCCESS && opts_nth(&opts, "--pgn", i); i++) {
        const char *path = opts_nth(&opts, "--pgn", i);
        FILE *in = fopen(path, "re");
        if (!in) {
            status = match_fail(EXIT_USAGE, "blunders: cannot read %s: %s", path, strerror(errno));
            break;
        }
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        BlunderOut ctx = { out, base };
        PgnGame g = { 0 };
        char err[256];
        int line = 0, got;
        while ((got = pgn_read(in, &g, &line, err, sizeof err)) > 0) {
            games++;
            if (strcmp(g.red, player) == 0 || strcmp(g.black, player) == 0) {
                played++;
                found += blunders_scan(&g, player, &rule, write_blunder, &ctx);
            }
        }
        pgn_game_free(&g);
        fclose(in);
        if (got < 0)
            status = match_fail(EXIT_USAGE, "blunders: %s: %s", path, err);
    }
    if (fclose(out) != 0 && status == EXIT_SUCCESS)
        status = match_fail(EXIT_FAILURE, "blunders: write error on %s", out_path);
    if (status == EXIT_SUCCESS && played == 0)
        status = match_fail(EXIT_USAGE, "blunders: no game of '%s' among the %ld games read", player, games);
    if (status == EXIT_SUCCESS)
        printf("%ld games read, %ld played by %s, %ld blunders written to %s\n", games, played, player, found,
               out_path);
    return status;
}

/* ---- tactics ------------------------------------------------------------ */

static const OptSpec TACTICS_OPTIONS[] = {
    { "--suite", OPT_TEXT, "FILE", NULL, .help = "the positions (xqf-match blunders writes such a file), required" },
    { "--engine", OPT_TEXT, "SPEC...", NULL, .help = "the player, as xqf-match --engine takes it" },
    { "--nodes", OPT_INT, "N", NULL, .imin = 1, .imax = INT64_MAX, .help = "fixed nodes per position" },
    { "--depth", OPT_INT, "D", NULL, .imin = 1, .imax = MAX_PLY - 1, .help = "fixed depth per position" },
    { "--concurrency", OPT_INT, "N", "1", .imin = 1, .imax = 1024, .help = "positions searched at once" },
    { "--hash", OPT_INT, "MB", "16", .imin = 1, .imax = 65536, .help = "hash size (unless the spec says hash=)" },
    { "--verbose", OPT_FLAG, NULL, NULL, .help = "a line per position" },
    OPTS_END,
};

static const OptTable TACTICS_TABLE = {
    .program = "xqf-match tactics", .spec = TACTICS_OPTIONS,
    .usage = "Usage: xqf-match tactics --suite SUITE --engine SPEC... (--nodes N | --depth D)\n"
             "                         [--concurrency N] [--hash MB] [--verbose]\n"
             "\n"
             "Searches each position of the suite (a new game each: an empty hash table)\n"
             "and counts those the engine gets right: none of the 'am' moves played, or\n"
             "one of the 'bm' moves.\n",
};

/* Ctrl-C during tactics or tree: stop after the positions being searched (a second one ends the program). */
static volatile int positions_stop = 0;

static void on_positions_signal(int sig)
{
    positions_stop = 1;
    signal(sig, SIG_DFL);
}

typedef struct {
    const Suite *suite;
    bool verbose;
    int faults, skipped;
} TacticsOut;

static void report_result(void *ctx, const TacticResult *r)
{
    TacticsOut *o = ctx;
    if (r->fault != GAME_REASON_NONE) {
        o->faults += r->fault != GAME_ABANDONED;
        o->skipped += r->fault == GAME_ABANDONED;
        if (r->fault != GAME_ABANDONED)
            fprintf(stderr, "%s: position %d: %s%s%s\n", PROGRAM, r->index + 1, game_reason_text(r->fault),
                    r->detail[0] ? ": " : "", r->detail);
        return;
    }
    if (!o->verbose)
        return;
    char mv[8];
    move_text(r->move, mv);
    printf("%4d %s %s", r->index + 1, r->pass ? "pass" : "FAIL", mv);
    if (r->has_score)
        printf(" %+d/%d", r->score, r->depth);
    printf(" %.3fs  %s\n", r->time_us / 1e6, suite_id(o->suite, r->index));
}

int match_tactics(int argc, char **argv)
{
    char **rest = malloc(sizeof *rest * (size_t)(argc + 1));
    if (!rest)
        return match_fail(EXIT_FAILURE, "out of memory");
    int nrest, at = -1, count = 0, engines;
    int status = match_split_engines(argc, argv, rest, &nrest, &at, &count, 1, &engines, "tactics: ");
    Opts opts;
    if (status < 0) {
        int rc = opts_parse(&opts, &TACTICS_TABLE, nrest, rest);
        status = rc == OPTS_OK ? -1 : rc == OPTS_HELP ? EXIT_SUCCESS : EXIT_USAGE;
    }
    const char *suite_path = status < 0 ? opts_text(&opts, "--suite") : NULL;
    if (status < 0 && (!suite_path || at < 0))
        status = match_fail(EXIT_USAGE, "tactics: --suite and --engine are required");
    if (status < 0 && opts_given(&opts, "--nodes") == opts_given(&opts, "--depth"))
        status = match_fail(EXIT_USAGE, "tactics: give one of --nodes and --depth");
    PlayerSpec spec;
    char err[512];
    if (status < 0 && spec_parse(&spec, count, argv + at, (int)opts_int(&opts, "--hash"), err, sizeof err) != 0)
        status = match_fail(EXIT_USAGE, "tactics: engine: %s", err);
    free(rest);
    if (status >= 0)
        return status;
    Suite *suite = suite_load(suite_path, err, sizeof err);
    if (!suite)
        return match_fail(EXIT_USAGE, "tactics: %s", err);
    TacticsConfig cfg = { (uint64_t)opts_int(&opts, "--nodes"), (int)opts_int(&opts, "--depth"),
                          (int)opts_int(&opts, "--concurrency"), &positions_stop };
    TacticsOut out = { suite, opts_given(&opts, "--verbose"), 0, 0 };
    signal(SIGINT, on_positions_signal);
    signal(SIGTERM, on_positions_signal);
    int passed = tactics_run(suite, &spec, &cfg, report_result, &out, err, sizeof err);
    int n = suite_size(suite);
    suite_destroy(&suite);
    if (passed < 0)
        return match_fail(EXIT_FAILURE, "tactics: %s", err);
    printf("%s: %d of %d passed (%.1f %%)", spec.name, passed, n, 100.0 * passed / n);
    if (out.faults)
        printf(", %d faults", out.faults);
    if (out.skipped)
        printf(", stopped: %d not searched", out.skipped);
    printf(" [%s %s]\n", cfg.nodes ? "nodes" : "depth",
           cfg.nodes ? opts_text(&opts, "--nodes") : opts_text(&opts, "--depth"));
    return out.faults ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* ---- tree --------------------------------------------------------------- */

static const OptSpec TREE_OPTIONS[] = {
    { "--engine", OPT_TEXT, "SPEC...", NULL, .help = "a parameter set of the built-in engine, twice (the first is compared with the second)" },
    { "--depth", OPT_INT, "D", NULL, .imin = 1, .imax = MAX_PLY - 1, .help = "search depth, required" },
    { "--book", OPT_TEXT, "FILE", NULL, .help = "the positions (default: the shipped ops/books/default.book)" },
    { "--count", OPT_INT, "N", "200", .imin = 2, .imax = INT_MAX, .help = "the book's first N positions (all when it has fewer)" },
    { "--hash", OPT_INT, "MB", "16", .imin = 1, .imax = 65536, .help = "hash size (unless a spec says hash=)" },
    { "--verbose", OPT_FLAG, NULL, NULL, .help = "a line per position" },
    OPTS_END,
};

static const OptTable TREE_TABLE = {
    .program = "xqf-match tree", .spec = TREE_OPTIONS,
    .usage = "Usage: xqf-match tree --engine SPEC... --engine SPEC... --depth D [--book FILE]\n"
             "                      [--count N] [--hash MB] [--verbose]\n"
             "\n"
             "Searches each position to the depth (an empty hash table each) with two\n"
             "parameter sets of the built-in engine and compares their trees: the node\n"
             "totals, and the geometric mean of the per-position ratios (first/second)\n"
             "with its 95% interval.  A tree to a fixed depth is chaotic (a small change\n"
             "can halve or double one position's nodes): a difference whose interval\n"
             "holds 1 is noise, whatever the totals say.\n",
};

/* Per-position log ratios and the counts the summary reports. */
typedef struct {
    int n, fewer, more, same_move;
    uint64_t nodes[2];
    int64_t us[2];
    double sum, sum2;
} TreeTally;

/* One position searched by both engines; adds it to t. */
static void tree_position(Engine *const e[2], const Board *b, int depth, int index, bool verbose, TreeTally *t)
{
    SearchLimits limits;
    search_limits_init(&limits);
    limits.depth = depth;
    SearchResult r[2];
    for (int k = 0; k < 2; k++) {
        engine_clear(e[k]);
        int64_t start = clock_now_us();
        engine_search(e[k], b, &limits, NULL, NULL, &r[k]);
        t->us[k] += clock_now_us() - start;
        t->nodes[k] += r[k].nodes;
    }
    double lr = log((double)(r[0].nodes ? r[0].nodes : 1) / (double)(r[1].nodes ? r[1].nodes : 1));
    t->n++;
    t->sum += lr;
    t->sum2 += lr * lr;
    t->fewer += r[0].nodes < r[1].nodes;
    t->more += r[0].nodes > r[1].nodes;
    t->same_move += r[0].best == r[1].best;
    if (verbose) {
        char m0[8] = "none", m1[8] = "none";
        if (r[0].best)
            move_text(r[0].best, m0);
        if (r[1].best)
            move_text(r[1].best, m1);
        printf("%4d %10" PRIu64 " %10" PRIu64 " %6.3f %s %s\n", index + 1, r[0].nodes, r[1].nodes, exp(lr), m0, m1);
    }
}

/* The summary of the positions searched (at least two). */
static void tree_summary(const PlayerSpec spec[2], const TreeTally *t, int depth, const char *book)
{
    const char *a = spec[0].name, *b = spec[1].name;
    double mean = t->sum / t->n, var = (t->sum2 - t->n * mean * mean) / (t->n - 1);
    double half = XQF_STATS_Z95 * sqrt(var > 0 ? var / t->n : 0);
    printf("Positions: %d at depth %d (%s)\n", t->n, depth, book);
    printf("Nodes: %s %" PRIu64 ", %s %" PRIu64 ", %s/%s %.3f\n", a, t->nodes[0], b, t->nodes[1], a, b,
           (double)t->nodes[0] / (double)(t->nodes[1] ? t->nodes[1] : 1));
    printf("Per position %s/%s: geometric mean %.3f, 95%% interval [%.3f, %.3f]; fewer nodes in %d, more in %d, "
           "as many in %d\n", a, b, exp(mean), exp(mean - half), exp(mean + half), t->fewer, t->more,
           t->n - t->fewer - t->more);
    printf("Time: %s %.2f s, %s %.2f s, %s/%s %.3f\n", a, t->us[0] / 1e6, b, t->us[1] / 1e6, a, b,
           (double)t->us[0] / (double)(t->us[1] > 0 ? t->us[1] : 1));
    printf("Same best move: %d of %d (%.1f %%)\n", t->same_move, t->n, 100.0 * t->same_move / t->n);
}

/* Parses the options and both specs; returns -1 when all is well, else the exit status. */
static int tree_options(int argc, char **argv, Opts *opts, PlayerSpec spec[2])
{
    char **rest = malloc(sizeof *rest * (size_t)(argc + 1));
    if (!rest)
        return match_fail(EXIT_FAILURE, "out of memory");
    int nrest, at[2], count[2], engines;
    int status = match_split_engines(argc, argv, rest, &nrest, at, count, 2, &engines, "tree: ");
    if (status < 0) {
        int rc = opts_parse(opts, &TREE_TABLE, nrest, rest);
        status = rc == OPTS_OK ? -1 : rc == OPTS_HELP ? EXIT_SUCCESS : EXIT_USAGE;
    }
    free(rest);
    if (status < 0 && engines != 2)
        status = match_fail(EXIT_USAGE, "tree: give two parameter sets with --engine");
    if (status < 0 && !opts_given(opts, "--depth"))
        status = match_fail(EXIT_USAGE, "tree: --depth is required");
    char err[512];
    for (int k = 0; status < 0 && k < 2; k++) {
        if (spec_parse(&spec[k], count[k], argv + at[k], (int)opts_int(opts, "--hash"), err, sizeof err) != 0)
            status = match_fail(EXIT_USAGE, "tree: engine %d: %s", k + 1, err);
        else if (spec[k].external)
            status = match_fail(EXIT_USAGE, "tree: engine %d: the built-in engine only (its node counts)", k + 1);
    }
    if (status < 0 && strcmp(spec[0].name, spec[1].name) == 0)
        status = match_fail(EXIT_USAGE, "tree: the two parameter sets need different names (name=...)");
    return status;
}

int match_tree(int argc, char **argv)
{
    Opts opts;
    PlayerSpec spec[2];
    int status = tree_options(argc, argv, &opts, spec);
    if (status >= 0)
        return status;
    const char *path = opts_given(&opts, "--book") ? opts_text(&opts, "--book") : match_default_book();
    char err[512];
    Book *book = book_load(path, err, sizeof err);
    if (!book)
        return match_fail(EXIT_USAGE, "tree: %s", err);
    Engine *e[2] = { engine_new(), engine_new() };
    for (int k = 0; k < 2 && e[0] && e[1]; k++) {
        engine_set_params(e[k], &spec[k].params);
        if (engine_set_hash(e[k], (size_t)spec[k].hash_mb) != 0)
            status = match_fail(EXIT_FAILURE, "tree: no memory for a %d MB hash table", spec[k].hash_mb);
    }
    if (!e[0] || !e[1])
        status = match_fail(EXIT_FAILURE, "out of memory");
    int depth = (int)opts_int(&opts, "--depth"), n = book_size(book);
    if (opts_int(&opts, "--count") < n)
        n = (int)opts_int(&opts, "--count");
    TreeTally tally = { 0 };
    signal(SIGINT, on_positions_signal);
    signal(SIGTERM, on_positions_signal);
    if (status < 0 && opts_given(&opts, "--verbose"))
        printf("   #   %-10.10s %-10.10s  ratio moves\n", spec[0].name, spec[1].name);
    for (int i = 0; status < 0 && i < n && !positions_stop; i++) {
        Board b;
        book_board(book_opening(book, i), &b);
        tree_position(e, &b, depth, i, opts_given(&opts, "--verbose"), &tally);
    }
    if (status < 0 && tally.n < 2)
        status = positions_stop ? match_fail(EXIT_FAILURE, "tree: stopped before two positions were searched")
                           : match_fail(EXIT_USAGE, "tree: %s has one position: a comparison needs two", path);
    if (status < 0) {
        if (tally.n < n)
            printf("Stopped: %d of %d positions searched\n", tally.n, n);
        tree_summary(spec, &tally, depth, path);
        status = fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
    }
    engine_destroy(&e[0]);
    engine_destroy(&e[1]);
    book_destroy(&book);
    return status;
}

#include "match_tactics.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fen.h"
#include "opts.h"
#include "search.h"
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

static volatile int tactics_stop = 0;

static void on_tactics_signal(int sig)
{
    tactics_stop = 1;
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

/* Takes the words after --engine out of argv (up to the next --option). */
static int split_engine(int argc, char **argv, char **rest, int *nrest, int *at, int *count)
{
    *at = -1;
    *count = 0;
    *nrest = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--engine") != 0) {
            rest[(*nrest)++] = argv[i];
            continue;
        }
        if (*at >= 0)
            return match_fail(EXIT_USAGE, "tactics: one --engine only");
        *at = i + 1;
        while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
            i++, ++*count;
    }
    return -1;
}

int match_tactics(int argc, char **argv)
{
    char **rest = malloc(sizeof *rest * (size_t)(argc + 1));
    if (!rest)
        return match_fail(EXIT_FAILURE, "out of memory");
    int nrest, at, count;
    int status = split_engine(argc - 1, argv + 1, rest, &nrest, &at, &count);
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
    if (status < 0 && spec_parse(&spec, count, argv + 1 + at, (int)opts_int(&opts, "--hash"), err, sizeof err) != 0)
        status = match_fail(EXIT_USAGE, "tactics: engine: %s", err);
    free(rest);
    if (status >= 0)
        return status;
    Suite *suite = suite_load(suite_path, err, sizeof err);
    if (!suite)
        return match_fail(EXIT_USAGE, "tactics: %s", err);
    TacticsConfig cfg = { (uint64_t)opts_int(&opts, "--nodes"), (int)opts_int(&opts, "--depth"),
                          (int)opts_int(&opts, "--concurrency"), &tactics_stop };
    TacticsOut out = { suite, opts_given(&opts, "--verbose"), 0, 0 };
    signal(SIGINT, on_tactics_signal);
    signal(SIGTERM, on_tactics_signal);
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

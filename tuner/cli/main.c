/*
 * xqf-tune: command-line front end of the Xiangqi Forge tuner.
 *
 * Each command is an entry of COMMANDS; its handler receives the
 * arguments after "xqf-tune" (argv[0] is the command's name) and returns
 * the exit status (cli.h): 0 success, 1 failure, 2 bad usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "run_kind.h"
#include "sprt_calc.h"
#include "stats.h"

typedef struct {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} Command;

static const Command COMMANDS[] = {
    { "stats", "Elo, nElo and SPRT log-likelihood ratio of a result set", tune_cmd_stats },
    /* a command per run kind, its help line from the kind's record */
#define RUN_KIND(id, name, player0, player1, sprt, spsa, on_claim, two_sides, threads, title, doc) { name, doc, tune_cmd_run_kind },
#include "run_kinds.def"
#undef RUN_KIND
    { "gauntlet", "gauntlet new|show: one side against several opponents, a games run each, one table", tune_cmd_gauntlet },
    { "progression", "progression new|show: commits of an engine against one base, a games run each, Elo by date", tune_cmd_progression },
    { "chain", "chain new|show|list|advance|stop: SPSA, then a build, then SPRTs, each when the one before passed", tune_cmd_chain },
    { "modify", "change a run while it runs: priority, throughput, max pairs, SPSA pairs", tune_cmd_modify },
    { "list", "the newest runs with their progress", tune_cmd_list },
    { "log", "the events log: every action on runs, chains, nets, engines, accounts, builds", tune_cmd_log },
    { "show", "one run: results, Elo, LLR or theta, rate and ETA", tune_cmd_show },
#define RUN_PLAIN_VERB(ID, NAME, WHO, WRITE, DONE, BUTTON, HELP, TEXT) { NAME, HELP, tune_cmd_plain_verb },
#define RUN_VERB(ID, NAME, WHO)
#include "run_verbs.def"
    { "approve", "approve a run waiting for an admin, binding its refs' commits", tune_cmd_approve },
    { "export", "a run's parameter file (SPSA: current theta; SPRT: the test set)", tune_cmd_export },
    { "report", "a run's report page (self-contained HTML with charts)", tune_cmd_report },
    { "build", "a tuned xqf-engine: the run's export compiled in, bench, recorded", tune_cmd_build },
    { "net", "net add|list|show: nets (NNUE weights) registered, signed, for runs to name", tune_cmd_net },
    { "engine", "engine add|list|show|modify: the engines built, benched and played (ours: xqf)", tune_cmd_engine },
    { "preset", "preset set|list|remove: an engine's named settings of new runs (STC, LTC, SMP), for --preset", tune_cmd_preset },
    { "pgn", "a run's stored games as PGN (by task or worker)", tune_cmd_pgn },
    { "purge", "take a worker's results out of an SPRT", tune_cmd_purge },
    { "audit", "search a run's games again: flags workers whose moves the engine does not choose", tune_cmd_audit },
    { "texel", "fit the evaluation's weights to training positions (Texel's method)", tune_cmd_texel },
    { "nnue", "nnue train: the network evaluation trained on training positions (PyTorch)", tune_cmd_nnue },
    { "user", "user add: an account of the web dashboard (xqf-web)", tune_cmd_user },
};
enum { COMMAND_COUNT = sizeof COMMANDS / sizeof COMMANDS[0] };

static bool is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: %s <command> [options]\n"
            "       %s <command> --help\n"
            "\n"
            "Commands:\n",
            CLI_PROGRAM, CLI_PROGRAM);
    for (int i = 0; i < COMMAND_COUNT; i++)
        fprintf(out, "  %-8s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
    fprintf(out, "\nExit status: 0 success, 1 computation failure, 2 bad usage.\n");
}

/* ---- stats ------------------------------------------------------------ */

enum { WDL_FIELDS = 3 }; /* W,D,L */

static const OptSpec STATS_OPTIONS[] = {
    { "--penta", OPT_TEXT, "LL,LD,DD,WD,WW", NULL, .help = "game-pair counts: two losses, a loss and a draw, two draws or a win and a loss, a win and a draw, two wins" },
    { "--wdl", OPT_TEXT, "W,D,L", NULL, .help = "game counts: wins, draws, losses" },
    { "--elo0", OPT_REAL, "X", NULL, .help = "SPRT hypothesis H0 in normalized Elo, X < Y" },
    { "--elo1", OPT_REAL, "Y", NULL, .help = "SPRT hypothesis H1 in normalized Elo" },
    { "--alpha", OPT_REAL, "A", "0.05", .help = "SPRT error rate in (0,1)" },
    { "--beta", OPT_REAL, "B", "0.05", .help = "SPRT error rate in (0,1)" },
    { "--expected", OPT_FLAG, NULL, NULL, .help = "the SPRT calculator: expected games and pass probability at --elo" },
    { "--elo", OPT_REAL, "E", NULL, .rmin = -1000, .rmax = 1000, .help = "with --expected: the true normalized Elo" },
    OPTS_END,
};

static const OptTable STATS_TABLE = {
    .program = "xqf-tune", .spec = STATS_OPTIONS,
    .usage =
        "Usage: xqf-tune stats (--penta LL,LD,DD,WD,WW | --wdl W,D,L)\n"
        "                     [--elo0 X --elo1 Y [--alpha A] [--beta B]]\n"
        "       xqf-tune stats --expected --elo0 X --elo1 Y --elo E [--alpha A] [--beta B]\n"
        "\n"
        "Prints the Elo and normalized Elo (nElo) of a result set with their 95%\n"
        "confidence half-widths, the LOS and, given --elo0 and --elo1, the generalized\n"
        "SPRT log-likelihood ratio (Fishtest's normalized-Elo GSPRT) with its bounds.\n"
        "--expected is the SPRT calculator: for an SPRT of bounds X, Y (normalized\n"
        "Elo) and a true normalized Elo E, the expected number of game pairs and games\n"
        "and the probability that it passes (a Brownian model of the LLR: in\n"
        "normalized Elo it needs no draw ratio; stats/sprt_calc.h).\n"
        "Options take their value as the next argument or after '='.\n",
    .epilog =
        "\n"
        "Output, one item per line (inf/-inf when all games are won or lost):\n"
        "  Games: N\n"
        "  Pairs: N                  (with --penta)\n"
        "  Elo: ELO +/- HALFWIDTH\n"
        "  nElo: NELO +/- HALFWIDTH\n"
        "  LOS: PERCENT %\n"
        "  LLR: LLR [LOWER, UPPER]   (with --elo0 and --elo1)\n"
        "With --expected:\n"
        "  Expected pairs: N\n"
        "  Expected games: N\n"
        "  Pass probability: PERCENT %\n",
};

/* Parses "C1,C2,...,Cn" into n counts. Exit status. */
static int parse_counts(const char *option, const char *layout, const char *text, int n, int64_t *counts)
{
    const char *p = text;
    for (int i = 0; i < n; i++) {
        size_t len = strcspn(p, ",");
        if (len == 0)
            return cli_fail(CLI_USAGE, "%s: missing count %d in '%s' (expected %s)", option, i + 1, text, layout);
        if (p[0] == '-')
            return cli_fail(CLI_USAGE, "%s: negative count '%.*s'", option, (int)len, p);
        if (strspn(p, "0123456789") != len)
            return cli_fail(CLI_USAGE, "%s: '%.*s' is not a count", option, (int)len, p);
        errno = 0;
        long long value = strtoll(p, NULL, 10);
        if (errno == ERANGE || value > XQF_STATS_MAX_COUNT)
            return cli_fail(CLI_USAGE, "%s: count '%.*s' is too large", option, (int)len, p);
        counts[i] = value;
        p += len;
        if (i + 1 < n) {
            if (*p != ',')
                return cli_fail(CLI_USAGE, "%s: %d counts expected (%s), got %d in '%s'", option, n, layout, i + 1,
                                text);
            p++;
        }
    }
    if (*p != '\0')
        return cli_fail(CLI_USAGE, "%s: %d counts expected (%s), got more in '%s'", option, n, layout, text);
    return CLI_OK;
}

/* The SPRT settings of stats: hypotheses, error rates and the LLR's bounds. Exit status. */
static int sprt_settings(const Opts *o, double *elo0, double *elo1, double *lower, double *upper)
{
    double alpha = opts_real(o, "--alpha"), beta = opts_real(o, "--beta");
    *elo0 = opts_real(o, "--elo0");
    *elo1 = opts_real(o, "--elo1");
    if (!(alpha > 0.0 && alpha < 1.0))
        return cli_fail(CLI_USAGE, "--alpha: %s is not between 0 and 1 (exclusive)", opts_text(o, "--alpha"));
    if (!(beta > 0.0 && beta < 1.0))
        return cli_fail(CLI_USAGE, "--beta: %s is not between 0 and 1 (exclusive)", opts_text(o, "--beta"));
    if (!(*elo0 < *elo1))
        return cli_fail(CLI_USAGE, "--elo0 (%s) must be below --elo1 (%s)", opts_text(o, "--elo0"),
                        opts_text(o, "--elo1"));
    if (xqf_sprt_bounds(alpha, beta, lower, upper) != XQF_STATS_OK)
        return cli_fail(CLI_USAGE, "--alpha plus --beta must be below 1");
    return CLI_OK;
}

/* stats --expected: the SPRT calculator. Exit status. */
static int expected(const Opts *o)
{
    if (!opts_given(o, "--expected") || !opts_given(o, "--elo"))
        return cli_fail(CLI_USAGE, "--expected and --elo go together");
    if (opts_given(o, "--penta") || opts_given(o, "--wdl"))
        return cli_fail(CLI_USAGE, "--expected takes no results (--penta, --wdl)");
    if (!opts_given(o, "--elo0") || !opts_given(o, "--elo1"))
        return cli_fail(CLI_USAGE, "--expected needs the SPRT's --elo0 and --elo1");
    double lower, upper;
    xqf_sprt_design d;
    int status = sprt_settings(o, &d.nelo0, &d.nelo1, &lower, &upper);
    if (status != CLI_OK)
        return status;
    d.alpha = opts_real(o, "--alpha");
    d.beta = opts_real(o, "--beta");
    double pairs, pass;
    xqf_stats_status st = xqf_sprt_expected(&d, opts_real(o, "--elo"), &pairs, &pass);
    if (st != XQF_STATS_OK)
        return cli_fail(CLI_USAGE, "%s", xqf_stats_strerror(st));
    printf("Expected pairs: %.0f\n", pairs);
    printf("Expected games: %.0f\n", 2 * pairs);
    printf("Pass probability: %.1f %%\n", 100 * pass);
    return fflush(stdout) == 0 ? CLI_OK : cli_fail(CLI_FAIL, "cannot write output");
}

int tune_cmd_stats(int argc, char **argv)
{
    Opts o;
    int status = cli_parse(&o, &STATS_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO)
        return status;
    if (opts_given(&o, "--expected") || opts_given(&o, "--elo"))
        return expected(&o);
    const bool penta = opts_given(&o, "--penta");
    if (penta == opts_given(&o, "--wdl"))
        return cli_fail(CLI_USAGE, "give exactly one of --penta and --wdl");
    const bool sprt = opts_given(&o, "--elo0") || opts_given(&o, "--elo1");
    if (sprt && !(opts_given(&o, "--elo0") && opts_given(&o, "--elo1")))
        return cli_fail(CLI_USAGE, "--elo0 and --elo1 go together");
    if (!sprt && (opts_given(&o, "--alpha") || opts_given(&o, "--beta")))
        return cli_fail(CLI_USAGE, "--alpha and --beta need --elo0 and --elo1");

    int64_t counts[XQF_PENTA_CELLS];
    status = penta ? parse_counts("--penta", "LL,LD,DD,WD,WW", opts_text(&o, "--penta"), XQF_PENTA_CELLS, counts)
                   : parse_counts("--wdl", "W,D,L", opts_text(&o, "--wdl"), WDL_FIELDS, counts);
    double elo0 = 0.0, elo1 = 0.0, lower = 0.0, upper = 0.0;
    if (status != CLI_OK || (sprt && (status = sprt_settings(&o, &elo0, &elo1, &lower, &upper)) != CLI_OK))
        return status;

    xqf_elo elo;
    xqf_stats_status st = penta ? xqf_elo_penta(counts, &elo) : xqf_elo_wdl(counts[0], counts[1], counts[2], &elo);
    if (st != XQF_STATS_OK)
        return cli_fail(CLI_USAGE, "%s", xqf_stats_strerror(st));
    double llr = 0.0;
    if (sprt) {
        st = penta ? xqf_llr_penta(counts, elo0, elo1, &llr)
                   : xqf_llr_wdl(counts[0], counts[1], counts[2], elo0, elo1, &llr);
        if (st != XQF_STATS_OK)
            return cli_fail(CLI_FAIL, "LLR: %s", xqf_stats_strerror(st));
    }

    printf("Games: %" PRId64 "\n", elo.games);
    if (penta)
        printf("Pairs: %" PRId64 "\n", elo.samples);
    printf("Elo: %.2f +/- %.2f\n", elo.elo, elo.elo_ci95);
    printf("nElo: %.2f +/- %.2f\n", elo.nelo, elo.nelo_ci95);
    printf("LOS: %.1f %%\n", 100 * xqf_los(&elo));
    if (sprt)
        printf("LLR: %.2f [%.2f, %.2f]\n", llr, lower, upper);
    return fflush(stdout) == 0 ? CLI_OK : cli_fail(CLI_FAIL, "cannot write output");
}

/* ---- main ------------------------------------------------------------- */

int main(int argc, char **argv)
{
    if (argc < 2)
        return cli_fail(CLI_USAGE, "missing command (see %s --help)", CLI_PROGRAM);
    if (is_help(argv[1])) {
        print_usage(stdout);
        return CLI_OK;
    }
    for (int i = 0; i < COMMAND_COUNT; i++)
        if (strcmp(argv[1], COMMANDS[i].name) == 0)
            return COMMANDS[i].run(argc - 1, argv + 1);
    return cli_fail(CLI_USAGE, "unknown command '%s' (see %s --help)", argv[1], CLI_PROGRAM);
}

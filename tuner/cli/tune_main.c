/*
 * xqf-tune: command-line front end of the Xiangqi Forge tuner.
 *
 * Each subcommand is an entry of SUBCOMMANDS; its handler receives the
 * arguments after the subcommand name (argv[0] is the name itself).
 * Exit status: 0 success, 1 computation failure, 2 bad usage.
 */
#include "stats.h"
#include "tune_db.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_USAGE = 2 };

static const char PROGRAM[] = "xqf-tune";

typedef struct subcommand {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} subcommand;

static int cmd_stats(int argc, char **argv);

static const subcommand SUBCOMMANDS[] = {
    {"stats", "Elo, nElo and SPRT log-likelihood ratio of a result set", cmd_stats},
    {"spsa", "spsa new: create an SPSA tuning run", tune_cmd_spsa},
    {"sprt", "sprt new: create an SPRT test of two parameter sets", tune_cmd_sprt},
    {"list", "the newest runs with their progress", tune_cmd_list},
    {"show", "one run: results, Elo, LLR or theta, rate and ETA", tune_cmd_show},
    {"stop", "stop an active run", tune_cmd_stop},
    {"export", "a run's parameter file (SPSA: current theta; SPRT: the test set)", tune_cmd_export},
    {"report", "a run's report page (self-contained HTML with charts)", tune_cmd_report},
    {"build", "a tuned xqf-engine: the run's export compiled in, bench, recorded", tune_cmd_build},
};
enum { SUBCOMMAND_COUNT = sizeof SUBCOMMANDS / sizeof SUBCOMMANDS[0] };

/* Prints "xqf-tune: error: <message>" on stderr; returns status. */
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
            PROGRAM, PROGRAM);
    for (int i = 0; i < SUBCOMMAND_COUNT; i++)
        fprintf(out, "  %-8s %s\n", SUBCOMMANDS[i].name, SUBCOMMANDS[i].summary);
    fprintf(out, "\nExit status: 0 success, 1 computation failure, 2 bad usage.\n");
}

/* ---- stats ------------------------------------------------------------ */

enum stats_option { OPT_PENTA, OPT_WDL, OPT_ELO0, OPT_ELO1, OPT_ALPHA, OPT_BETA, OPT_COUNT };

static const char *const STATS_OPTION_NAMES[OPT_COUNT] = {
    "--penta", "--wdl", "--elo0", "--elo1", "--alpha", "--beta",
};

enum { WDL_FIELDS = 3 }; /* W,D,L */

static const double DEFAULT_ERROR_RATE = 0.05;

static void print_stats_usage(FILE *out)
{
    fprintf(out,
            "Usage: %s stats (--penta LL,LD,DD,WD,WW | --wdl W,D,L)\n"
            "                     [--elo0 X --elo1 Y [--alpha A] [--beta B]]\n"
            "\n"
            "Prints the Elo and normalized Elo (nElo) of a result set with their 95%%\n"
            "confidence half-widths and, given --elo0 and --elo1, the generalized SPRT\n"
            "log-likelihood ratio (Fishtest's normalized-Elo GSPRT) with its bounds.\n"
            "\n"
            "  --penta LL,LD,DD,WD,WW  game-pair counts: two losses, a loss and a draw,\n"
            "                          two draws or a win and a loss, a win and a draw,\n"
            "                          two wins\n"
            "  --wdl W,D,L             game counts: wins, draws, losses\n"
            "  --elo0 X, --elo1 Y      SPRT hypotheses in normalized Elo, X < Y\n"
            "  --alpha A, --beta B     SPRT error rates in (0,1), default 0.05 each\n"
            "  -h, --help              print this help\n"
            "Options take their value as the next argument or after '='.\n"
            "\n"
            "Output, one item per line (inf/-inf when all games are won or lost):\n"
            "  Games: N\n"
            "  Pairs: N                  (with --penta)\n"
            "  Elo: ELO +/- HALFWIDTH\n"
            "  nElo: NELO +/- HALFWIDTH\n"
            "  LLR: LLR [LOWER, UPPER]   (with --elo0 and --elo1)\n",
            PROGRAM);
}

/* Parses "C1,C2,...,Cn" into n counts; on error prints it and returns false. */
static bool parse_counts(const char *option, const char *layout, const char *text, int n,
                         int64_t *counts)
{
    const char *p = text;
    for (int i = 0; i < n; i++) {
        size_t len = strcspn(p, ",");
        if (len == 0) {
            fail(EXIT_USAGE, "%s: missing count %d in '%s' (expected %s)", option, i + 1, text,
                 layout);
            return false;
        }
        if (p[0] == '-') {
            fail(EXIT_USAGE, "%s: negative count '%.*s'", option, (int)len, p);
            return false;
        }
        if (strspn(p, "0123456789") != len) {
            fail(EXIT_USAGE, "%s: '%.*s' is not a count", option, (int)len, p);
            return false;
        }
        errno = 0;
        long long value = strtoll(p, NULL, 10);
        if (errno == ERANGE || value > XQF_STATS_MAX_COUNT) {
            fail(EXIT_USAGE, "%s: count '%.*s' is too large", option, (int)len, p);
            return false;
        }
        counts[i] = value;
        p += len;
        if (i + 1 < n) {
            if (*p != ',') {
                fail(EXIT_USAGE, "%s: %d counts expected (%s), got %d in '%s'", option, n,
                     layout, i + 1, text);
                return false;
            }
            p++;
        }
    }
    if (*p != '\0') {
        fail(EXIT_USAGE, "%s: %d counts expected (%s), got more in '%s'", option, n, layout,
             text);
        return false;
    }
    return true;
}

/* Parses a finite number; on error prints it and returns false. */
static bool parse_number(const char *option, const char *text, double *value)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || errno == ERANGE || !isfinite(v)) {
        fail(EXIT_USAGE, "%s: '%s' is not a finite number", option, text);
        return false;
    }
    *value = v;
    return true;
}

/* Parses an error rate in (0,1), defaulting when text is NULL. */
static bool parse_error_rate(const char *option, const char *text, double *value)
{
    *value = DEFAULT_ERROR_RATE;
    if (text == NULL)
        return true;
    if (!parse_number(option, text, value))
        return false;
    if (!(*value > 0.0 && *value < 1.0)) {
        fail(EXIT_USAGE, "%s: %s is not between 0 and 1 (exclusive)", option, text);
        return false;
    }
    return true;
}

/*
 * Collects the option values of `stats` into values[] (NULL when absent).
 * Returns -1 when all is well, otherwise the exit status to end with.
 */
static int collect_stats_options(int argc, char **argv, const char *values[OPT_COUNT])
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (is_help(arg)) {
            print_stats_usage(stdout);
            return EXIT_SUCCESS;
        }
        const char *eq = strchr(arg, '=');
        size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
        int opt = 0;
        while (opt < OPT_COUNT && !(strlen(STATS_OPTION_NAMES[opt]) == name_len &&
                                    strncmp(STATS_OPTION_NAMES[opt], arg, name_len) == 0))
            opt++;
        if (opt == OPT_COUNT)
            return fail(EXIT_USAGE, "unknown argument '%s' (see %s stats --help)", arg,
                        PROGRAM);
        if (values[opt] != NULL)
            return fail(EXIT_USAGE, "%s given twice", STATS_OPTION_NAMES[opt]);
        if (eq != NULL)
            values[opt] = eq + 1;
        else if (i + 1 < argc)
            values[opt] = argv[++i];
        else
            return fail(EXIT_USAGE, "%s needs a value", STATS_OPTION_NAMES[opt]);
    }
    return -1;
}

static int cmd_stats(int argc, char **argv)
{
    const char *values[OPT_COUNT] = {0};
    int status = collect_stats_options(argc, argv, values);
    if (status >= 0)
        return status;

    const bool penta = values[OPT_PENTA] != NULL;
    if (penta == (values[OPT_WDL] != NULL))
        return fail(EXIT_USAGE, "give exactly one of --penta and --wdl");
    const bool sprt = values[OPT_ELO0] != NULL || values[OPT_ELO1] != NULL;
    if (sprt && (values[OPT_ELO0] == NULL || values[OPT_ELO1] == NULL))
        return fail(EXIT_USAGE, "--elo0 and --elo1 go together");
    if (!sprt && (values[OPT_ALPHA] != NULL || values[OPT_BETA] != NULL))
        return fail(EXIT_USAGE, "--alpha and --beta need --elo0 and --elo1");

    int64_t counts[XQF_PENTA_CELLS];
    if (penta ? !parse_counts("--penta", "LL,LD,DD,WD,WW", values[OPT_PENTA], XQF_PENTA_CELLS,
                              counts)
              : !parse_counts("--wdl", "W,D,L", values[OPT_WDL], WDL_FIELDS, counts))
        return EXIT_USAGE;

    double elo0 = 0.0, elo1 = 0.0, alpha, beta, lower = 0.0, upper = 0.0;
    if (sprt) {
        if (!parse_number("--elo0", values[OPT_ELO0], &elo0) ||
            !parse_number("--elo1", values[OPT_ELO1], &elo1) ||
            !parse_error_rate("--alpha", values[OPT_ALPHA], &alpha) ||
            !parse_error_rate("--beta", values[OPT_BETA], &beta))
            return EXIT_USAGE;
        if (!(elo0 < elo1))
            return fail(EXIT_USAGE, "--elo0 (%s) must be below --elo1 (%s)",
                        values[OPT_ELO0], values[OPT_ELO1]);
        if (xqf_sprt_bounds(alpha, beta, &lower, &upper) != XQF_STATS_OK)
            return fail(EXIT_USAGE, "--alpha plus --beta must be below 1");
    }

    xqf_elo elo;
    xqf_stats_status st = penta ? xqf_elo_penta(counts, &elo)
                                : xqf_elo_wdl(counts[0], counts[1], counts[2], &elo);
    if (st != XQF_STATS_OK)
        return fail(EXIT_USAGE, "%s", xqf_stats_strerror(st));

    double llr = 0.0;
    if (sprt) {
        st = penta ? xqf_llr_penta(counts, elo0, elo1, &llr)
                   : xqf_llr_wdl(counts[0], counts[1], counts[2], elo0, elo1, &llr);
        if (st != XQF_STATS_OK)
            return fail(EXIT_FAILURE, "LLR: %s", xqf_stats_strerror(st));
    }

    printf("Games: %" PRId64 "\n", elo.games);
    if (penta)
        printf("Pairs: %" PRId64 "\n", elo.samples);
    printf("Elo: %.2f +/- %.2f\n", elo.elo, elo.elo_ci95);
    printf("nElo: %.2f +/- %.2f\n", elo.nelo, elo.nelo_ci95);
    if (sprt)
        printf("LLR: %.2f [%.2f, %.2f]\n", llr, lower, upper);
    return fflush(stdout) == 0 ? EXIT_SUCCESS : fail(EXIT_FAILURE, "cannot write output");
}

/* ---- main ------------------------------------------------------------- */

int main(int argc, char **argv)
{
    if (argc < 2)
        return fail(EXIT_USAGE, "missing command (see %s --help)", PROGRAM);
    if (is_help(argv[1])) {
        print_usage(stdout);
        return EXIT_SUCCESS;
    }
    for (int i = 0; i < SUBCOMMAND_COUNT; i++)
        if (strcmp(argv[1], SUBCOMMANDS[i].name) == 0)
            return SUBCOMMANDS[i].run(argc - 1, argv + 1);
    return fail(EXIT_USAGE, "unknown command '%s' (see %s --help)", argv[1], PROGRAM);
}

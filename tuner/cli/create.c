/*
 * create.c - xqf-tune spsa new, sprt new and data new (and the data
 * command's options): a run's settings checked and
 * written to the run database, its book read (and checked) with the
 * worker's book reader.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "book.h"
#include "cli.h"
#include "codec.h"

enum { BOOK_LINES_MAX = 100000 };

/* The options every new run takes (what it plays, and where it goes). */
#define NEW_RUN_OPTIONS                                                                                        \
    { "--tc", OPT_TEXT, "BASE+INC", NULL, .help = "time control in seconds (10+0.1), or" },                     \
    { "--nodes", OPT_INT, "N", NULL, .imin = 1, .imax = INT64_C(1) << 40, .help = "fixed nodes per move" },    \
    { "--book", OPT_TEXT, "FILE", XQF_DEFAULT_BOOK, .help = "opening book, one opening per line" },             \
    { "--pairs-per-task", OPT_INT, "P", "8", .imin = 1, .imax = 1024, .help = "game pairs per task" },          \
    { "--name", OPT_TEXT, "TEXT", "", .help = "a label" },                                                     \
    { "--priority", OPT_INT, "N", "0", .imin = -1000000, .imax = 1000000, .help = "higher runs first" },        \
    { "--seed", OPT_INT, "S", "1", .imin = 0, .imax = INT64_MAX, .help = "opening order" },                    \
    CLI_DB_OPTION

/*
 * What the games of an SPRT or SPSA run keep (issue 13).  A result carries
 * its pairs' games: a task's fit in one (768 KiB) with games of 400 plies.
 */
enum { GAMES_PAIRS_PER_TASK_MAX = 256, SCORED_PAIRS_PER_TASK_MAX = 128 };
#define GAME_OPTIONS                                                                                           \
    { "--keep-scores", OPT_FLAG, NULL, NULL, .help = "game records keep each move's score and depth" },                \
    { "--replay", OPT_REAL, "PERCENT", "1", .rmin = 0, .rmax = 100,                                                \
      .help = "with --nodes: the share of pairs a second worker plays again to compare (replay audit)" }

/* A run's book: read and checked with the worker's reader, each opening as a line for the store. */
typedef struct {
    Book *book;
    char **lines;
    int count;
} RunBook;

static void run_book_free(RunBook *rb)
{
    for (int i = 0; rb->lines && i < rb->count; i++)
        free(rb->lines[i]);
    free(rb->lines);
    book_destroy(&rb->book);
    memset(rb, 0, sizeof *rb);
}

/* Reads the book at path into *rb (empty on failure). Exit status. */
static int run_book_read(const char *path, RunBook *rb)
{
    char err[512], line[BOOK_TEXT_MAX];
    memset(rb, 0, sizeof *rb);
    if (!(rb->book = book_load(path, err, sizeof err)))
        return cli_fail(CLI_USAGE, "--book: %s", err);
    int n = book_size(rb->book);
    if (n > BOOK_LINES_MAX) {
        run_book_free(rb);
        return cli_fail(CLI_USAGE, "--book: '%s' holds more than %d openings", path, BOOK_LINES_MAX);
    }
    if (!(rb->lines = calloc((size_t)n, sizeof *rb->lines))) {
        run_book_free(rb);
        return cli_fail(CLI_FAIL, "out of memory");
    }
    for (rb->count = 0; rb->count < n; rb->count++) {
        book_opening_text(rb->book, rb->count, line);
        if (!(rb->lines[rb->count] = strdup(line))) {
            run_book_free(rb);
            return cli_fail(CLI_FAIL, "out of memory");
        }
    }
    return CLI_OK;
}

/* Fills the common part of a new run from the options and reads its book into *rb. Exit status. */
static int new_run_spec(const Opts *o, StoreSprtSpec *sp, RunBook *rb, bool fixed_depth)
{
    const char *tc = opts_text(o, "--tc");
    memset(rb, 0, sizeof *rb);
    if (!fixed_depth && !tc == !opts_given(o, "--nodes"))
        return cli_fail(CLI_USAGE, "give exactly one of --tc and --nodes");
    sp->nodes = opts_int(o, "--nodes");
    if (tc) {
        char *end;
        double base = strtod(tc, &end), inc = 0;
        if (end != tc && *end == '+') {
            const char *p = end + 1;
            inc = strtod(p, &end);
            if (end == p)
                end = (char *)"x";
        }
        if (end == tc || *end || !(base > 0 && base <= 86400) || !(inc >= 0 && inc <= 3600))
            return cli_fail(CLI_USAGE, "--tc: '%s' is not BASE+INC in seconds (10+0.1)", tc);
        sp->base_ms = (int64_t)llround(base * 1000);
        sp->inc_ms = (int64_t)llround(inc * 1000);
    }
    sp->margin_ms = 100;
    sp->pairs_per_task = (int)opts_int(o, "--pairs-per-task");
    sp->priority = (int)opts_int(o, "--priority");
    sp->seed = (uint64_t)opts_int(o, "--seed");
    sp->name = opts_text(o, "--name");
    const char *path = opts_text(o, "--book");
    int status = run_book_read(path, rb);
    if (status != CLI_OK)
        return status;
    const char *slash = strrchr(path, '/');
    sp->book_name = slash ? slash + 1 : path;
    sp->book = (const char *const *)rb->lines;
    sp->book_lines = rb->count;
    return CLI_OK;
}

/* Checks a "Name=value,..." set against the engine's table. Exit status. */
static int check_set(const char *option, const char *set)
{
    Params p;
    params_default(&p);
    char err[256];
    if (params_apply_list(&p, set, err, sizeof err) != 0)
        return cli_fail(CLI_USAGE, "%s: %s", option, err);
    return CLI_OK;
}

/* The "new" of "spsa new" / "sprt new". Exit status. */
static int check_new(const Opts *o, const char *command)
{
    if (o->npositional != 1 || strcmp(o->positional[0], "new") != 0)
        return cli_fail(CLI_USAGE, "%s: the only subcommand is 'new' (see xqf-tune %s --help)", command, command);
    return CLI_OK;
}

/* Creates the run (SPSA when spsa is given, else SPRT) and prints its id. Exit status. */
static int create(const Opts *o, StoreSprtSpec *sp, StoreSpsaSpec *spsa)
{
    Store *s = NULL;
    int64_t id;
    bool scores = opts_given(o, "--keep-scores");
    int most = scores ? SCORED_PAIRS_PER_TASK_MAX : GAMES_PAIRS_PER_TASK_MAX;
    if (sp->pairs_per_task > most)
        return cli_fail(CLI_USAGE, "--pairs-per-task: at most %d%s (a result carries its pairs' games)", most,
                        scores ? " with --keep-scores" : "");
    int status = cli_open_db(o, &s);
    const int64_t build_ids[2] = { sp->test_build, sp->base_build };
    for (int i = 0; status == CLI_OK && i < 2; i++) {
        StoreBuild b;
        int found = build_ids[i] ? store_load_build(s, build_ids[i], &b) : 1;
        if (found < 0)
            status = cli_fail(CLI_FAIL, "cannot read the builds");
        else if (found == 0)
            status = cli_fail(CLI_USAGE, "%s: no build %" PRId64 " (see xqf-tune build)",
                              i ? "--base-build" : "--test-build", build_ids[i]);
    }
    if (status == CLI_OK && (spsa ? store_create_spsa(s, spsa, &id) : store_create_sprt(s, sp, &id)) != 0)
        status = cli_fail(CLI_FAIL, "cannot create the run");
    if (status == CLI_OK && scores && store_set_game_scores(s, id, true) != 0)
        status = cli_fail(CLI_FAIL, "cannot set --keep-scores of run %" PRId64, id);
    if (status == CLI_OK && opts_given(o, "--replay") && store_set_replay_share(s, id, opts_real(o, "--replay") / 100) != 0)
        status = cli_fail(CLI_FAIL, "cannot set --replay of run %" PRId64, id);
    if (status == CLI_OK)
        printf("%" PRId64 "\n", id);
    store_destroy(&s);
    return status;
}

/* ---- spsa new ------------------------------------------------------------------ */

static const OptSpec SPSA_OPTIONS[] = {
    { "--params", OPT_TEXT, "NAME,...", NULL, .help = "the parameters tuned (default: every one with c_end > 0)" },
    { "--spec", OPT_TEXT, "FILE", NULL, .help = "or a spec file (the lines of `xqf-engine params`)" },
    { "--start-file", OPT_TEXT, "FILE", NULL, .help = "start values (and fixed values) from a parameter file" },
    { "--pairs", OPT_INT, "N", NULL, .imin = 1, .imax = INT64_C(1) << 40, .help = "game pairs (iterations), required" },
    { "--alpha", OPT_REAL, "A", "0.602", .rmin = 0.001, .rmax = 10, .help = "SPSA schedule: a_k = a / (A + k)^alpha" },
    { "--gamma", OPT_REAL, "G", "0.101", .rmin = 0.001, .rmax = 10, .help = "c_k = c / k^gamma" },
    { "--a-ratio", OPT_REAL, "R", "0.1", .rmin = 0, .rmax = 100, .help = "A = R N" },
    NEW_RUN_OPTIONS,
    GAME_OPTIONS,
    OPTS_END,
};

static const OptTable SPSA_TABLE = {
    .program = "xqf-tune", .spec = SPSA_OPTIONS, .max_positional = 1,
    .usage =
        "Usage: xqf-tune spsa new [--params NAME,NAME,... | --spec FILE] [--start-file PARAMS_FILE]\n"
        "                         --pairs N (--tc 10+0.1 | --nodes N) [options]\n"
        "\n"
        "Creates an SPSA run of N game pairs (iterations) over the named parameters\n"
        "(default: every parameter of the engine's table with c_end > 0), with start\n"
        "values, bounds, c_end and r_end from the engine's table, or from a spec file\n"
        "with one line per parameter as `xqf-engine params` prints them:\n"
        "    Name, int, start, min, max, c_end, r_end\n"
        "--start-file takes start values (and the fixed values of the parameters not\n"
        "tuned) from a parameter file; with --spec, the values the file changes\n"
        "override the spec's start.  Prints the run id.\n",
};

/* One line of a spec file: *got true with *q filled, false for a blank or comment line. Exit status. */
static int spec_line(const char *path, int lineno, const char *line, StoreSpsaParam *q, bool *got)
{
    const char *p = line + strspn(line, " \t");
    *got = false;
    if (!*p || *p == '\n' || *p == '\r' || *p == '#')
        return CLI_OK;
    char name[128], type[16];
    double v[5];
    int end = 0;
    if (sscanf(p, " %127[^, ] , %15[^, ] , %lf , %lf , %lf , %lf , %lf %n", name, type, &v[0], &v[1], &v[2],
               &v[3], &v[4], &end) != 7 || p[end])
        return cli_fail(CLI_USAGE, "--spec %s:%d: expected 'Name, int, start, min, max, c_end, r_end'", path,
                        lineno);
    const ParamInfo *info = params_find(name);
    if (!info || strcmp(type, "int") != 0)
        return cli_fail(CLI_USAGE, "--spec %s:%d: %s", path, lineno,
                        info ? "only int parameters are tuned" : "unknown parameter");
    if (!(v[1] >= info->min && v[2] <= info->max && v[1] < v[2] && v[0] >= v[1] && v[0] <= v[2]))
        return cli_fail(CLI_USAGE, "--spec %s:%d: %s: need %d <= min <= start <= max <= %d, min < max", path,
                        lineno, name, info->min, info->max);
    if (!(v[3] > 0 && v[4] > 0))
        return cli_fail(CLI_USAGE, "--spec %s:%d: %s: c_end and r_end must be positive", path, lineno, name);
    snprintf(q->name, sizeof q->name, "%s", info->name);
    q->start = v[0], q->min = v[1], q->max = v[2], q->c_end = v[3], q->r_end = v[4];
    *got = true;
    return CLI_OK;
}

/* Reads a spec file into params[*count...]. Exit status. */
static int read_spec(const char *path, StoreSpsaParam *params, int *count)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return cli_fail(CLI_USAGE, "--spec: cannot open '%s': %s", path, strerror(errno));
    char line[1024];
    int lineno = 0, status = CLI_OK;
    *count = 0;
    while (status == CLI_OK && fgets(line, sizeof line, f)) {
        StoreSpsaParam q;
        bool got;
        status = spec_line(path, ++lineno, line, &q, &got);
        for (int i = 0; status == CLI_OK && got && i < *count; i++)
            if (strcmp(params[i].name, q.name) == 0)
                status = cli_fail(CLI_USAGE, "--spec %s:%d: %s given twice", path, lineno, q.name);
        if (status == CLI_OK && got && *count >= STORE_SPSA_MAX)
            status = cli_fail(CLI_USAGE, "--spec: more than %d parameters", STORE_SPSA_MAX);
        if (status == CLI_OK && got)
            params[(*count)++] = q;
    }
    fclose(f);
    if (status == CLI_OK && *count == 0)
        status = cli_fail(CLI_USAGE, "--spec: '%s' names no parameter", path);
    return status;
}

/* The table's entry of a parameter as an SPSA parameter starting at value. */
static void from_table(const ParamInfo *info, int value, StoreSpsaParam *q)
{
    snprintf(q->name, sizeof q->name, "%s", info->name);
    q->start = value, q->min = info->min, q->max = info->max;
    q->c_end = info->c_end, q->r_end = info->r_end;
}

/* The tuned parameters, from --spec (start overridden by the start set), --params or the table. Exit status. */
static int tuned_params(const Opts *o, const Params *start, StoreSpsaParam *params, int *count)
{
    Params defaults;
    params_default(&defaults);
    *count = 0;
    if (opts_given(o, "--spec")) {
        int status = read_spec(opts_text(o, "--spec"), params, count);
        for (int i = 0; status == CLI_OK && i < *count; i++) {
            const ParamInfo *info = params_find(params[i].name);
            int v = params_value(start, info);
            if (v == params_value(&defaults, info))
                continue;
            if (v < params[i].min || v > params[i].max)
                return cli_fail(CLI_USAGE, "--start-file: %s = %d is outside the spec's bounds %g-%g", info->name,
                                v, params[i].min, params[i].max);
            params[i].start = params[i].theta = v;
        }
        return status;
    }
    if (!opts_given(o, "--params")) {
        for (int i = 0; i < PARAM_COUNT; i++)
            if (PARAM_INFO[i].c_end > 0)
                from_table(&PARAM_INFO[i], params_value(start, &PARAM_INFO[i]), &params[(*count)++]);
        return CLI_OK;
    }
    char list[4096];
    snprintf(list, sizeof list, "%s", opts_text(o, "--params"));
    for (char *save = NULL, *name = strtok_r(list, ", ", &save); name; name = strtok_r(NULL, ", ", &save)) {
        const ParamInfo *info = params_find(name);
        if (!info)
            return cli_fail(CLI_USAGE, "--params: unknown parameter '%s'", name);
        if (!(info->c_end > 0))
            return cli_fail(CLI_USAGE, "--params: %s is a switch (c_end 0): give it in a --spec file", name);
        for (int i = 0; i < *count; i++)
            if (strcmp(params[i].name, name) == 0)
                return cli_fail(CLI_USAGE, "--params: %s given twice", name);
        if (*count >= STORE_SPSA_MAX)
            return cli_fail(CLI_USAGE, "--params: more than %d parameters", STORE_SPSA_MAX);
        from_table(info, params_value(start, info), &params[(*count)++]);
    }
    return *count ? CLI_OK : cli_fail(CLI_USAGE, "--params: no parameter named");
}

/* The fixed set: every parameter not tuned that the start set changes, "Name=value,...". Exit status. */
static int fixed_set(const Params *start, const StoreSpsaParam *params, int count, char *fixed, size_t size)
{
    Params defaults;
    params_default(&defaults);
    size_t len = 0;
    fixed[0] = '\0';
    for (int i = 0; i < PARAM_COUNT && len < size; i++) {
        const ParamInfo *info = &PARAM_INFO[i];
        bool tuned = false;
        for (int j = 0; j < count && !tuned; j++)
            tuned = strcmp(params[j].name, info->name) == 0;
        if (!tuned && params_value(start, info) != params_value(&defaults, info))
            len += (size_t)snprintf(fixed + len, size - len, "%s%s=%d", len ? "," : "", info->name,
                                    params_value(start, info));
    }
    return len < size ? CLI_OK : cli_fail(CLI_USAGE, "--start-file: too many changed parameters");
}

int tune_cmd_spsa(int argc, char **argv)
{
    Opts o;
    int status = cli_parse(&o, &SPSA_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO)
        return status;
    if ((status = check_new(&o, "spsa")) != CLI_OK)
        return status;
    if (!opts_given(&o, "--pairs"))
        return cli_fail(CLI_USAGE, "spsa new: --pairs N is required");
    if (opts_given(&o, "--params") && opts_given(&o, "--spec"))
        return cli_fail(CLI_USAGE, "spsa new: give --params or --spec, not both");
    StoreSpsaSpec spec = { .alpha = opts_real(&o, "--alpha"), .gamma = opts_real(&o, "--gamma"),
                           .a_ratio = opts_real(&o, "--a-ratio"), .run.max_pairs = opts_int(&o, "--pairs") };
    Params start;
    params_default(&start);
    char err[256], *fixed = malloc(STORE_PARAMS_MAX + 1);
    StoreSpsaParam *params = calloc(STORE_SPSA_MAX, sizeof *params);
    RunBook book = { 0 };
    if (!fixed || !params)
        status = cli_fail(CLI_FAIL, "out of memory");
    else if (opts_given(&o, "--start-file") && params_load(&start, opts_text(&o, "--start-file"), err, sizeof err) != 0)
        status = cli_fail(CLI_USAGE, "--start-file: %s", err);
    else if ((status = tuned_params(&o, &start, params, &spec.count)) == CLI_OK &&
             (status = fixed_set(&start, params, spec.count, fixed, STORE_PARAMS_MAX + 1)) == CLI_OK &&
             (status = new_run_spec(&o, &spec.run, &book, false)) == CLI_OK) {
        spec.run.test_params = fixed;
        spec.params = params;
        status = create(&o, &spec.run, &spec);
    }
    run_book_free(&book);
    free(params);
    free(fixed);
    return status;
}

/* ---- sprt new ------------------------------------------------------------------ */

static const OptSpec SPRT_OPTIONS[] = {
    { "--test", OPT_TEXT, "SET", NULL, .help = "the test side's set, Name=value,... over the defaults" },
    { "--base", OPT_TEXT, "SET", NULL, .help = "the base side's set (\"\" for the defaults)" },
    { "--test-build", OPT_INT, "ID", NULL, .imin = 1, .imax = INT64_MAX, .help = "the build the test side plays (default: the workers' own engine)" },
    { "--base-build", OPT_INT, "ID", NULL, .imin = 1, .imax = INT64_MAX, .help = "the build the base side plays (default: the workers' own engine)" },
    { "--elo0", OPT_REAL, "X", "0", .rmin = -1000, .rmax = 1000, .help = "normalized Elo of H0" },
    { "--elo1", OPT_REAL, "Y", "5", .rmin = -1000, .rmax = 1000, .help = "normalized Elo of H1" },
    { "--alpha", OPT_REAL, "A", "0.05", .rmin = 1e-6, .rmax = 0.5, .help = "error rate of type I" },
    { "--beta", OPT_REAL, "B", "0.05", .rmin = 1e-6, .rmax = 0.5, .help = "error rate of type II" },
    { "--max-pairs", OPT_INT, "N", "50000", .imin = 1, .imax = INT64_C(1) << 40, .help = "at most N game pairs" },
    NEW_RUN_OPTIONS,
    GAME_OPTIONS,
    OPTS_END,
};

static const OptTable SPRT_TABLE = {
    .program = "xqf-tune", .spec = SPRT_OPTIONS, .max_positional = 1,
    .usage =
        "Usage: xqf-tune sprt new --base SET --test SET (--tc 10+0.1 | --nodes N) [options]\n"
        "       xqf-tune sprt new --base-build ID --test-build ID (--tc | --nodes) [options]\n"
        "\n"
        "Creates an SPRT test of two parameter sets (Name=value,... over the engine's\n"
        "defaults; \"\" for the defaults), or of two engine builds registered with\n"
        "xqf-tune build (a search change is code: its binary against the base's; a\n"
        "set given too is applied to that build as options), stopped when the LLR\n"
        "crosses a bound or after --max-pairs.  Prints the run id.\n",
};

int tune_cmd_sprt(int argc, char **argv)
{
    Opts o;
    int status = cli_parse(&o, &SPRT_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO)
        return status;
    if ((status = check_new(&o, "sprt")) != CLI_OK)
        return status;
    bool builds = opts_given(&o, "--base-build") || opts_given(&o, "--test-build");
    if (!builds && (!opts_given(&o, "--base") || !opts_given(&o, "--test")))
        return cli_fail(CLI_USAGE, "sprt new: --base and --test (sets), or --base-build and --test-build, are required");
    StoreSprtSpec sp = {
        .elo0 = opts_real(&o, "--elo0"), .elo1 = opts_real(&o, "--elo1"), .alpha = opts_real(&o, "--alpha"),
        .beta = opts_real(&o, "--beta"), .max_pairs = opts_int(&o, "--max-pairs"),
        .test_build = opts_int(&o, "--test-build"), .base_build = opts_int(&o, "--base-build"),
        .base_params = opts_given(&o, "--base") ? opts_text(&o, "--base") : "",
        .test_params = opts_given(&o, "--test") ? opts_text(&o, "--test") : "",
    };
    if (builds && sp.test_build == sp.base_build)
        return cli_fail(CLI_USAGE, "sprt new: --test-build and --base-build are the same build");
    if ((status = check_set("--base", sp.base_params)) != CLI_OK || (status = check_set("--test", sp.test_params)) != CLI_OK)
        return status;
    if (!(sp.elo0 < sp.elo1))
        return cli_fail(CLI_USAGE, "--elo0 must be below --elo1");
    RunBook book;
    if ((status = new_run_spec(&o, &sp, &book, false)) == CLI_OK)
        status = create(&o, &sp, NULL);
    run_book_free(&book);
    return status;
}

/* ---- data new, and the data command's options ---------------------------------- */

enum { DATA_PAIRS_PER_TASK_MAX = 16 };  /* a result carries its games' records: a small task keeps it small */

static const OptSpec DATA_OPTIONS[] = {
    { "--depth", OPT_INT, "D", NULL, .imin = 1, .imax = XQF_DEPTH_MAX, .help = "new: fixed depth per move (instead of --nodes or --tc)" },
    { "--games", OPT_INT, "N", NULL, .imin = 2, .imax = INT64_C(1) << 40, .help = "new: games to play (rounded up to pairs), required" },
    { "--params", OPT_TEXT, "FILE|SET", "", .help = "new: the engine's set, a parameter file or Name=value,... (default: the defaults)" },
    { "--random-plies", OPT_INT, "N", "8", .imin = 0, .imax = XQF_RANDOM_PLIES_MAX, .help = "new: random plies after the opening" },
    { "--skip-plies", OPT_INT, "N", "0", .imin = 0, .imax = 1000, .help = "new: plies kept out after the opening and random plies" },
    { "--keep-check", OPT_FLAG, NULL, NULL, .help = "new: keep positions where the side to move is in check" },
    { "--keep-captures", OPT_FLAG, NULL, NULL, .help = "new: keep positions whose played move captures" },
    { "--max-score", OPT_INT, "CP", "3000", .imin = 0, .imax = 30000, .help = "new: keep out |score| above CP" },
    { "--out", OPT_TEXT, "FILE", NULL, .help = "export: the data file written" },
    { "--text", OPT_FLAG, NULL, NULL, .help = "export: lines 'FEN | score | move | result | ply' instead" },
    NEW_RUN_OPTIONS,
    OPTS_END,
};

static const OptTable DATA_TABLE = {
    .program = "xqf-tune", .spec = DATA_OPTIONS, .max_positional = 1,
    .usage =
        "Usage: xqf-tune data new --games N (--nodes N | --depth D | --tc 10+0.1) [--params FILE|SET]\n"
        "                         [--book FILE] [--random-plies N] [--skip-plies N] [--keep-check]\n"
        "                         [--keep-captures] [--max-score CP] [--pairs-per-task P] [--name TEXT]\n"
        "                         [--priority N] [--seed S] [--db CONNINFO]\n"
        "       xqf-tune data export RUN --out FILE [--text] [--db CONNINFO]\n"
        "       xqf-tune data stats RUN [--db CONNINFO]\n"
        "\n"
        "new: creates a data-generation run: the cluster's workers play the engine\n"
        "(its set) against itself from the book's openings, each game with its own\n"
        "random plies after the opening, and report every game with the scores of\n"
        "its searches, at fixed nodes, a fixed depth or a clock.  The filter\n"
        "(--skip-plies, --keep-check, --keep-captures, --max-score) is the run's\n"
        "and applies when its positions are exported.\n"
        "Prints the run id.\n"
        "export: writes the run's kept positions as a data file (XQFDATA1, worker/\n"
        "datagen.h; what xqf-tune texel reads), or as text.\n"
        "stats: positions, games, results (Red's view), a score histogram, duplicate\n"
        "positions and the bytes the database spends per position.\n",
};

/* --params: a parameter file when one is there, else a set; as a set over the defaults. Exit status. */
static int data_set(const char *given, char *set, size_t size)
{
    if (!*given || strchr(given, '=')) {
        if (check_set("--params", given) != CLI_OK)
            return CLI_USAGE;
        snprintf(set, size, "%s", given);
        return strlen(given) < size ? CLI_OK : cli_fail(CLI_USAGE, "--params: the set is too long");
    }
    Params p;
    params_default(&p);
    char err[256];
    if (params_load(&p, given, err, sizeof err) != 0)
        return cli_fail(CLI_USAGE, "--params: %s", err);
    return fixed_set(&p, NULL, 0, set, size);
}

/* Options of the data command that belong to another of its subcommands. Exit status. */
static int data_only(const Opts *o, const char *sub, const char *prefix)
{
    for (const OptSpec *spec = DATA_OPTIONS; spec->name; spec++) {
        bool mine = strncmp(spec->help, prefix, strlen(prefix)) == 0 || strcmp(spec->name, "--db") == 0 ||
                    (strcmp(prefix, "new:") == 0 && strchr(spec->help, ':') == NULL);
        if (!mine && opts_given(o, spec->name))
            return cli_fail(CLI_USAGE, "data %s does not take %s (see xqf-tune data --help)", sub, spec->name);
    }
    return CLI_OK;
}

static int data_new(const Opts *o)
{
    if (o->npositional)
        return cli_fail(CLI_USAGE, "data new: no RUN argument, options only");
    if (!opts_given(o, "--games"))
        return cli_fail(CLI_USAGE, "data new: --games N is required");
    if (opts_int(o, "--pairs-per-task") > DATA_PAIRS_PER_TASK_MAX)
        return cli_fail(CLI_USAGE, "--pairs-per-task: at most %d for a data run (a result carries its games)",
                        DATA_PAIRS_PER_TASK_MAX);
    if (opts_given(o, "--depth") && (opts_given(o, "--nodes") || opts_given(o, "--tc")))
        return cli_fail(CLI_USAGE, "data new: give one of --nodes, --depth and --tc");
    char *set = malloc(STORE_PARAMS_MAX + 1);
    StoreDataSpec spec = { .run.max_pairs = (opts_int(o, "--games") + 1) / 2 };
    spec.settings = (StoreDataSettings){ .random_plies = (int)opts_int(o, "--random-plies"),
                                         .skip_plies = (int)opts_int(o, "--skip-plies"),
                                         .keep_check = opts_given(o, "--keep-check"),
                                         .keep_captures = opts_given(o, "--keep-captures"),
                                         .max_score = (int)opts_int(o, "--max-score"),
                                         .depth = (int)opts_int(o, "--depth") };
    RunBook book = { 0 };
    Store *s = NULL;
    int64_t id;
    int status = set ? data_set(opts_text(o, "--params"), set, STORE_PARAMS_MAX + 1) : cli_fail(CLI_FAIL, "out of memory");
    if (status == CLI_OK && (status = new_run_spec(o, &spec.run, &book, spec.settings.depth > 0)) == CLI_OK &&
        (status = cli_open_db(o, &s)) == CLI_OK) {
        spec.run.test_params = set;
        if (store_create_data(s, &spec, &id) != 0)
            status = cli_fail(CLI_FAIL, "cannot create the run");
        else
            printf("%" PRId64 "\n", id);
    }
    store_destroy(&s);
    run_book_free(&book);
    free(set);
    return status;
}

int tune_cmd_data(int argc, char **argv)
{
    static const char *const SUBS[] = { "new", "export", "stats" };
    const char *sub = argc > 1 ? argv[1] : "";
    int which = -1;
    for (int i = 0; i < 3; i++)
        if (strcmp(sub, SUBS[i]) == 0)
            which = i;
    Opts o;
    if (which < 0 && (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0))
        return cli_parse(&o, &DATA_TABLE, argc - 1, argv + 1);
    if (which < 0)
        return cli_fail(CLI_USAGE, "data: say new, export or stats (see xqf-tune data --help)");
    int status = cli_parse(&o, &DATA_TABLE, argc - 2, argv + 2);
    if (status != CLI_GO)
        return status;
    char prefix[16];
    snprintf(prefix, sizeof prefix, "%s:", sub);
    if ((status = data_only(&o, sub, prefix)) != CLI_OK)
        return status;
    return which == 0 ? data_new(&o) : which == 1 ? cli_data_export(&o) : cli_data_stats(&o);
}

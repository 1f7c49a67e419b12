/*
 * create.c - xqf-tune spsa new, sprt new, games new, chain new and data
 * new (and the options of the data and chain commands): the options read
 * into a run's settings (RunSpec), which the run service (run_service.h)
 * checks, with its book, and writes to the run database, as it does the
 * dashboard's forms.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "codec.h"
#include "run_rules.h"
#include "run_service.h"
#include "store_builds.h"
#include "store_runs.h"
#include "store_spsa.h"
#include "store_steer.h"

/* Where sprt new puts the binaries of --test-ref and --base-ref (as xqf-tune build's --out). */
#define GIT_BUILD_DIR "build-tuned"

/* Fishtest's scaling of the clock by each worker's speed (sprt new, games new, spsa new). */
#define TC_SCALE_OPTIONS                                                                                      \
    { "--tc-scale", OPT_FLAG, NULL, NULL, .help = "with --tc: scale the clock on each worker by --ref-nps / its speed" }, \
    RULE_REF_NPS

/* The options every new run takes (what it plays, and where it goes). */
#define NEW_RUN_OPTIONS                                                                                        \
    RUN_TEXT_SETTINGS_EVERY_KIND(RUN_TEXT_SETTING_OPTION)                                                      \
    RULE_NODES,                                                                                                \
    RUN_BOOK_OPTIONS,                                                                                          \
    { "--name", OPT_TEXT, "TEXT", "", .help = "a label" },                                                     \
    CLI_PRESET_OPTION,                                                                                         \
    RUN_SETTINGS_EVERY_KIND(RUN_SETTING_OPTION)                                                                \
    CLI_DB_OPTION


/*
 * The run service's problem as xqf-tune's message, its setting named as
 * the option ("pairs_per_task" is --pairs-per-task). Exit status.
 */
static int problem_status(RunStatus status, const RunProblem *p)
{
    if (status == RUN_OK)
        return CLI_OK;
    if (status == RUN_FAILED)
        return cli_fail(CLI_FAIL, "cannot create the run: %s", p->why);
    char option[sizeof p->field + 2] = "--";
    for (size_t i = 0; p->field[i] && i + 3 < sizeof option; i++)
        option[i + 2] = p->field[i] == '_' ? '-' : p->field[i], option[i + 3] = '\0';
    return cli_fail(CLI_USAGE, "%s: %s", option, p->why);
}

/* Whether o's table has an option of this name (chain new's tables differ from spsa new's). */
static bool opts_table_has(const Opts *o, const char *name)
{
    for (const OptSpec *spec = o->table->spec; spec->name; spec++)
        if (strcmp(spec->name, name) == 0)
            return true;
    return false;
}

/*
 * A setting of run_settings.def read from its option into *sp (given,
 * else its default; a derived one not given stays -1, the database's to
 * derive).
 */
#define READ_SETTING_INT opts_int
#define READ_SETTING_REAL opts_real
#define READ_SETTING_PERCENT opts_real
#define READ_SETTING(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, ...) \
    if ((required) != RUN_SETTING_DERIVED || opts_given(o, option))                                  \
        sp->field = RUN_SETTING_FROM_##TYPE(READ_SETTING_##TYPE(o, option));

/* A text setting of run_settings.def parsed from its option, when given, into *sp's two numbers. */
#define READ_TEXT_SETTING(name, option, arg, help, form_field, label, form_help, parse, format, first, second) \
    if (status == CLI_OK && opts_given(o, option) && !parse(opts_text(o, option), &sp->first, &sp->second, why,  \
                                                            sizeof why))                                        \
        status = cli_fail(CLI_USAGE, "%s: %s", option, why);

static void read_sprt_settings(const Opts *o, RunSpec *sp) { RUN_SETTINGS_SPRT(READ_SETTING) }
/* Time odds: the second side's own clock. Exit status. */
static int read_odds(const Opts *o, RunSpec *sp)
{
    char why[512];
    int status = CLI_OK;
    RUN_TEXT_SETTINGS_TWO_SIDES(READ_TEXT_SETTING)
    return status;
}
static void read_spsa_settings(const Opts *o, RunSpec *sp) { RUN_SETTINGS_SPSA(READ_SETTING) }
/* A kind's own setting (RUN_SETTINGS_KINDS), read when the command's table has its option (its kind's). */
#define READ_OWN_SETTING(field, TYPE, option, ...)                                                            \
    if (opts_table_has(o, option))                                                                             \
        sp->field = READ_SETTING_##TYPE(o, option);

static void read_every_kind_settings(const Opts *o, RunSpec *sp)
{
    RUN_SETTINGS_EVERY_KIND(READ_SETTING)
    RUN_SETTINGS_OWN(READ_OWN_SETTING)
}

/* Fills the settings every new run has from the options (the run service checks them). Exit status. */
static int new_run_spec(const Opts *o, RunSpec *sp, bool fixed_depth)
{
    if (!fixed_depth && !opts_given(o, "--tc") == !opts_given(o, "--nodes"))
        return cli_fail(CLI_USAGE, "give exactly one of --tc and --nodes");
    sp->nodes = opts_int(o, "--nodes");
    char why[512];
    int status = CLI_OK;
    RUN_TEXT_SETTINGS_EVERY_KIND(READ_TEXT_SETTING)
    if (status != CLI_OK)
        return status;
    /* the engines' threads: GAME_OPTIONS' THREADS group (chain's --threads is its trainer's, its runs play one) */
    bool games = opts_table_has(o, "--keep-scores");
    if (games) {
        RUN_SETTINGS_THREADS(READ_SETTING)
    }
    sp->keep_scores = games && opts_given(o, "--keep-scores");
    if (opts_table_has(o, "--tc-scale") && opts_given(o, "--tc-scale"))
        sp->ref_nps = opts_int(o, "--ref-nps");
    read_every_kind_settings(o, sp);
    sp->name = opts_text(o, "--name");
    sp->preset = opts_text(o, "--preset");
    sp->book = opts_text(o, "--book");
    sp->book_format = opts_text(o, "--book-format");
    sp->book_plies = (int)opts_int(o, "--book-plies");
    sp->book_notes = stderr;
    return CLI_OK;
}

/* Checks a "Name=value,..." set against the engine's table (run_rules.h). Exit status. */
static int check_set(const char *option, const char *set)
{
    char why[512];
    return rule_set(set, why, sizeof why) ? CLI_OK : cli_fail(CLI_USAGE, "%s: %s", option, why);
}

/* The "new" of "spsa new" / "sprt new". Exit status. */
static int check_new(const Opts *o, const char *command)
{
    if (o->npositional != 1 || strcmp(o->positional[0], "new") != 0)
        return cli_fail(CLI_USAGE, "%s: the only subcommand is 'new' (see xqf-tune %s --help)", command, command);
    return CLI_OK;
}

/* --tc-scale goes with a clock. Exit status. */
static int check_tc_scale(const Opts *o)
{
    if (!opts_table_has(o, "--tc-scale"))
        return CLI_OK;
    if (opts_given(o, "--ref-nps") && !opts_given(o, "--tc-scale"))
        return cli_fail(CLI_USAGE, "--ref-nps goes with --tc-scale");
    if (opts_given(o, "--tc-scale") && !opts_given(o, "--tc"))
        return cli_fail(CLI_USAGE, "--tc-scale scales a clock: give --tc (fixed nodes need no scaling)");
    return CLI_OK;
}

/*
 * Creates the run of sp, with each side's net and the sets of sides that
 * play a build checked here first (xqf-tune's warnings), and prints its id;
 * with refs (the test's and the base's refs resolved and built, of one
 * repository; NULL: none), then what the test changes (cli_record_changes:
 * not recorded, the run stands).  Exit status.
 */
static int create_run(const Opts *o, RunSpec *sp, const CliGitRef *refs)
{
    Store *s = NULL;
    int64_t id;
    RunProblem problem;
    int status = problem_status(run_check(sp, &problem), &problem);
    if (status == CLI_OK)
        status = cli_open_db(o, &s);
    /* each side's net: spsa new's and data new's --net is both sides' (both play the one engine) */
    bool one_net = opts_table_has(o, "--net");
    for (int i = 0; status == CLI_OK && i < 2; i++) {
        const char *option = one_net ? "--net" : i ? "--base-net" : "--test-net";
        if (opts_table_has(o, option) && (!one_net || i == 0))
            status = cli_net_arg(s, option, opts_text(o, option), i ? &sp->base_net : &sp->test_net);
    }
    const int64_t build_ids[2] = { sp->test_build, sp->base_build };
    const char *sets[2] = { sp->test_params, sp->base_params };
    for (int i = 0; status == CLI_OK && i < 2; i++)
        if (build_ids[i])
            status = cli_check_build_set(s, i ? "--base-build" : "--test-build", i ? "--base" : "--test", sets[i],
                                         build_ids[i]);
    char actor[STORE_NAME_MAX + 1];
    cli_actor(actor, sizeof actor);
    sp->actor = actor;
    if (status == CLI_OK && (status = problem_status(run_create(s, sp, &id, &problem), &problem)) == CLI_OK)
        printf("%" PRId64 "\n", id);
    if (status == CLI_OK && refs)
        cli_record_changes(s, id, refs[0].repo, refs[0].ref, refs[0].commit, refs[0].tree, refs[0].subject,
                           refs[1].ref, refs[1].commit);
    store_destroy(&s);
    return status;
}

/* ---- spsa new ------------------------------------------------------------------ */

static int build_refs(const Opts *o, RunSpec *sp, const char *command, const char *const refs[2], CliGitRef *made);
static int engine_ref_nps(const Opts *o, RunSpec *sp);

static const OptSpec SPSA_OPTIONS[] = {
    { "--params", OPT_TEXT, "NAME,...", NULL, .help = "the parameters tuned (default: every one with c_end > 0)" },
    { "--spec", OPT_TEXT, "FILE", NULL, .help = "or a spec file: `name, int|float, start, min, max[, c_end, r_end]` a line" },
    { "--start-file", OPT_TEXT, "FILE", NULL, .help = "start values (and fixed values) from a parameter file" },
    { "--engine", OPT_TEXT, "NAME", RUN_OUR_ENGINE, .help = "the engine whose options are tuned (xqf-tune engine list)" },
    { "--ref", OPT_TEXT, "REF", NULL, .help = "with --engine: the git commit of it built and played" },
    { "--sign-key", OPT_TEXT, "FILE", NULL, .help = "with --ref: sign the build with this operator key" },
    RULE_PAIRS("game pairs (iterations), required"),
    RUN_SETTINGS_SPSA(RUN_SETTING_OPTION)
    { "--net", OPT_TEXT, "NET|none", NULL, .help = "the net both sides evaluate with (xqf-tune net add; none: hand-crafted; default: the engine's own)" },
    TC_SCALE_OPTIONS,
    NEW_RUN_OPTIONS,
    GAME_OPTIONS,
    OPTS_END,
};

static const OptTable SPSA_TABLE = {
    .program = "xqf-tune", .spec = SPSA_OPTIONS, .max_positional = 1,
    .usage =
        "Usage: xqf-tune spsa new [--params NAME,NAME,... | --spec FILE] [--start-file PARAMS_FILE]\n"
        "                         --pairs N (--tc 10+0.1 | --nodes N) [options]\n"
        "       xqf-tune spsa new --engine NAME --ref REF --spec FILE [--sign-key FILE]\n"
        "                         --pairs N (--tc 10+0.1 | --nodes N) [options]\n"
        "\n"
        "Creates an SPSA run of N game pairs (iterations) over the named parameters\n"
        "(default: every parameter of the engine's table with c_end > 0), with start\n"
        "values, bounds, c_end and r_end from the engine's table, or from a spec file\n"
        "with one line per parameter, Fishtest's format (`xqf-engine params` prints it):\n"
        "    Name, int|float, start, min, max[, c_end, r_end]\n"
        "The type may be left out (int); float is another engine's option, sent as a\n"
        "decimal (0.5312), never ours.  Without c_end and r_end, c_end is (max-min)/20\n"
        "(at least 0.5: an int perturbed by less is rounded back half of the time) and\n"
        "r_end 0.002 (Fishtest's common practice, and engine/params.def's r_end).  A\n"
        "start outside [min, max], min >= max, a malformed line, a name given twice or\n"
        "one the engine does not offer ends with status 2 and no run.\n"
        "--engine NAME --ref REF tunes another engine's UCI options (an engine record,\n"
        "xqf-tune engine add): REF is built as sprt new --engine builds a ref, both\n"
        "sides play that build with `setoption name N value V` of theta +- c_k\n"
        "(rounded; a float's unrounded), and the spec's names are checked against the\n"
        "spin options the build listed to `uci` (a UCCI engine lists none: its names go\n"
        "unchecked; a float must not be a listed spin).  The web's SPSA form does the\n"
        "same with an engine, a ref and a pasted spec.\n"
        "--start-file takes start values (and the fixed values of the parameters not\n"
        "tuned) from a parameter file; with --spec, the values the file changes\n"
        "override the spec's start.  Prints the run id.\n"
        "--tc-scale (with --tc) scales the clock on each worker by --ref-nps divided\n"
        "by that worker's speed (its bench's nodes per second for the run's engines,\n"
        "the factor held within 0.25-4), as Fishtest does for mixed hardware.\n"
        "--net NET evaluates both sides with a net of xqf-tune net add (none: the\n"
        "hand-crafted evaluation; default: the engine's own, its compiled-in net if it\n"
        "has one).\n"
        "--threads N has each engine search with N threads (UCI Threads, Lazy SMP):\n"
        "a worker plays its concurrency / N games of the run at once, and a worker of\n"
        "concurrency below N gets none of its tasks (sprt new and games new too).\n",
};

/* Whether our engine's table has the option (the spec's check of names for our engine). */
static bool our_option(const char *name, void *ctx)
{
    (void)ctx;
    return params_find(name) != NULL;
}

/*
 * Reads a spec file (spsa_spec.h: Fishtest's lines, the end hints derived
 * when left out) into params[*count...], each name asked of known (NULL:
 * any).  Our engine's options are integers within its table's bounds.
 * Exit status: 2 with the file and the line for any bad input.
 */
static int read_spec(const char *option, const char *path, bool ours, bool (*known)(const char *, void *),
                     void *ctx, StoreSpsaParam *params, int *count)
{
    XqfSpsaSpecLine *lines = NULL;
    int n = cli_read_spsa_spec(option, path, known, ctx, &lines);
    int status = n < 0 ? -n : CLI_OK;
    char why[512];
    if (status == CLI_OK && !rule_spsa_spec_lines(lines, n, ours, params, why, sizeof why))
        status = cli_fail(CLI_USAGE, "%s %s: %s", option, path, why);
    *count = status == CLI_OK ? n : 0;
    free(lines);
    return status;
}

/* The tuned parameters, from --spec (start overridden by the start set), --params or the table. Exit status. */
static int tuned_params(const Opts *o, const Params *start, StoreSpsaParam *params, int *count)
{
    Params defaults;
    params_default(&defaults);
    *count = 0;
    const char *spec_option = opts_table_has(o, "--spsa") ? "--spsa" : "--spec";
    if (opts_given(o, spec_option)) {
        int status = read_spec(spec_option, opts_text(o, spec_option), true, our_option, NULL, params, count);
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
    char why[512];
    if (!rule_spsa_params(opts_given(o, "--params") ? opts_text(o, "--params") : NULL, start, params, count, why,
                          sizeof why))
        return cli_fail(CLI_USAGE, "--params: %s", why);
    return CLI_OK;
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

/*
 * spsa new --engine NAME --ref REF: the settings and the book checked
 * first (a bad one costs no build), the ref built and registered, the
 * spec read with its names checked against the options the build listed,
 * and the run made with both sides playing the build.  Exit status.
 */
static int engine_spsa(const Opts *o, RunSpec *spec, int (*make)(const Opts *o, RunSpec *spec, void *ctx), void *ctx)
{
    if (opts_given(o, "--params") || opts_given(o, "--start-file") || opts_given(o, "--net"))
        return cli_fail(CLI_USAGE, "--params, --start-file and --net tune our engine: engine %s's options come "
                                   "from --spec FILE", spec->engine);
    /* no --ref: the run service's words (run_check), as the web's form gets them */
    if (!opts_given(o, "--spec"))
        return cli_fail(CLI_USAGE, "spsa new: engine %s's options come from a spec: give --spec FILE", spec->engine);
    StoreSpsaParam *params = calloc(STORE_SPSA_MAX, sizeof *params);
    if (!params)
        return cli_fail(CLI_FAIL, "out of memory");
    /* the spec's syntax before any build, its names once the build has listed its options */
    int status = read_spec("--spec", opts_text(o, "--spec"), false, NULL, NULL, params, &spec->count);
    if (status == CLI_OK)
        status = new_run_spec(o, spec, false);
    if (status == CLI_OK && opts_given(o, "--tc-scale") && !opts_given(o, "--ref-nps"))
        status = engine_ref_nps(o, spec);
    spec->params = params;
    spec->test_params = "";
    if (status == CLI_OK) {
        RunBook book;
        StoreSprtSpec st;
        RunProblem problem;
        spec->test_ref = opts_given(o, "--ref") ? opts_text(o, "--ref") : NULL;
        status = problem_status(run_prepare(spec, &book, &st, &problem), &problem);
        run_book_free(&book);
        spec->test_ref = NULL;
    }
    const char *refs[2] = { opts_text(o, "--ref"), NULL };
    Store *s = NULL;
    if (status == CLI_OK && (status = build_refs(o, spec, "spsa", refs, NULL)) == CLI_OK &&
        (status = cli_open_db(o, &s)) == CLI_OK)
        status = cli_check_build_spsa(s, "--spec", spec->engine, spec->test_build, spec->params, spec->count);
    store_destroy(&s);
    if (status == CLI_OK) {
        spec->base_build = spec->test_build;
        status = make(o, spec, ctx);
    }
    free(params);
    return status;
}

/*
 * The SPSA run of spsa new's options (chain new's: its spec file is
 * --spsa), handed to make; make creates it. Exit status.
 */
static int spsa_run(const Opts *o, const char *command, int (*make)(const Opts *o, RunSpec *spec, void *ctx),
                    void *ctx)
{
    const char *spec_option = opts_table_has(o, "--spsa") ? "--spsa" : "--spec";
    if (!opts_given(o, "--pairs"))
        return cli_fail(CLI_USAGE, "%s new: --pairs N is required", command);
    if (opts_given(o, "--params") && opts_given(o, spec_option))
        return cli_fail(CLI_USAGE, "%s new: give --params or %s, not both", command, spec_option);
    int checked = check_tc_scale(o);
    if (checked != CLI_OK)
        return checked;
    RunSpec spec = run_spec_default(RUN_KIND_SPSA);
    read_spsa_settings(o, &spec);
    spec.max_pairs = opts_int(o, "--pairs");
    if (opts_table_has(o, "--engine")) {
        spec.engine = opts_text(o, "--engine");
        if (run_spec_other_engine(&spec))
            return engine_spsa(o, &spec, make, ctx);
        if (opts_given(o, "--ref") || opts_given(o, "--sign-key"))
            return cli_fail(CLI_USAGE, "%s new: --ref and --sign-key go with --engine NAME (another engine's "
                                       "build; ours tunes the workers' engine)", command);
    }
    Params start;
    params_default(&start);
    char err[256], *fixed = malloc(STORE_PARAMS_MAX + 1);
    StoreSpsaParam *params = calloc(STORE_SPSA_MAX, sizeof *params);
    int status = CLI_OK;
    if (!fixed || !params)
        status = cli_fail(CLI_FAIL, "out of memory");
    else if (opts_given(o, "--start-file") && params_load(&start, opts_text(o, "--start-file"), err, sizeof err) != 0)
        status = cli_fail(CLI_USAGE, "--start-file: %s", err);
    else if ((status = tuned_params(o, &start, params, &spec.count)) == CLI_OK &&
             (status = fixed_set(&start, params, spec.count, fixed, STORE_PARAMS_MAX + 1)) == CLI_OK &&
             (status = new_run_spec(o, &spec, false)) == CLI_OK) {
        spec.test_params = fixed;
        spec.params = params;
        status = make(o, &spec, ctx);
    }
    free(params);
    free(fixed);
    return status;
}

static int make_spsa(const Opts *o, RunSpec *spec, void *ctx)
{
    (void)ctx;
    return create_run(o, spec, NULL);
}

static int spsa_cmd(int argc, char **argv)
{
    Opts o;
    char **held = NULL;
    int status = cli_parse(&o, &SPSA_TABLE, argc - 1, argv + 1);
    if (status == CLI_GO)
        status = cli_parse_preset(&o, &SPSA_TABLE, argc - 1, argv + 1, RUN_KIND_SPSA, &held);
    if (status == CLI_GO && (status = check_new(&o, "spsa")) == CLI_OK)
        status = spsa_run(&o, "spsa", make_spsa, NULL);
    free(held);
    return status;
}

/* ---- chain new ------------------------------------------------------------------ */

/* The trainer's settings of a chain's train stage (as xqf-tune nnue train's, docs/nnue.md). */
static const OptSpec CHAIN_OPTIONS[] = {
    { "--spsa", OPT_TEXT, "FILE", NULL, .help = "new: the SPSA stage's spec file (as spsa new --spec)" },
    { "--params", OPT_TEXT, "NAME,...", NULL, .help = "new: or the parameters tuned (as spsa new)" },
    { "--start-file", OPT_TEXT, "FILE", NULL, .help = "new: start values (as spsa new)" },
    { "--pairs", OPT_INT, "N", NULL, .imin = 1, .imax = INT64_C(1) << 40, .help = "new: the SPSA stage's game pairs, required" },
    { "--alpha", OPT_REAL, "A", "0.602", .rmin = 0.001, .rmax = 10, .help = "new: SPSA schedule (as spsa new)" },
    { "--gamma", OPT_REAL, "G", "0.101", .rmin = 0.001, .rmax = 10, .help = "new: SPSA schedule (as spsa new)" },
    { "--a-ratio", OPT_REAL, "R", "0.1", .rmin = 0, .rmax = 100, .help = "new: SPSA schedule (as spsa new)" },
    { "--data-games", OPT_INT, "N", NULL, .imin = 2, .imax = INT64_C(1) << 40, .help = "new: or a data run of N games first (a net chain)" },
    { "--random-plies", OPT_INT, "N", "8", .imin = 0, .imax = XQF_RANDOM_PLIES_MAX, .help = "new: the data run's random plies (as data new)" },
    { "--net", OPT_TEXT, "NET|none", NULL, .help = "new: the net the first run plays (SPSA: both sides, as spsa new; data: the engine)" },
    { "--then-build", OPT_FLAG, NULL, NULL, .help = "new: then the tuned engine, compiled by chain advance", .repeat = true },
    { "--then-train", OPT_FLAG, NULL, NULL, .help = "new: then a net trained on the data run's positions and registered, by chain advance" },
    RULE_CHAIN_TRAIN,
    { "--then-sprt", OPT_TEXT, "ELO0,ELO1,TC", NULL, .help = "new: then an SPRT of the tuned set against the start set, or of the new net against --base-net (TC 10+0.1 or 5000n nodes)", .repeat = true },
    RULE_SPRT_MAX_PAIRS,
    { "--base-build", OPT_INT, "ID", NULL, .imin = 1, .imax = INT64_MAX, .help = "new: the build the SPRTs' base side plays (default: the workers' engine)" },
    { "--base-net", OPT_TEXT, "NET|none", NULL, .help = "new: what the new net is tested against (default: the engine's own evaluation, its default net)" },
    { "--sign-key", OPT_TEXT, "FILE", NULL, .help = "advance: sign the tuned build and the trained net with this operator key" },
    { "--out", OPT_TEXT, "DIR", "build-tuned", .help = "advance: where the tuned builds and trained nets go (a folder per chain)" },
    { "--source", OPT_TEXT, "DIR", XQF_SOURCE_DIR, .help = "advance: the source tree" },
    { "--threads", OPT_INT, "N", NULL, .imin = 1, .imax = 256, .help = "advance: the trainer's threads (default: online cores)" },
    { "--with-data", OPT_TEXT, "PATH", NULL, .repeat = true, .help = "advance: also train on this data file or folder of *.data (earlier generations' positions; at most 3)" },
    { "--watch", OPT_INT, "SECONDS", NULL, .imin = 1, .imax = 86400, .help = "advance: repeat every SECONDS until no chain is active" },
    NEW_RUN_OPTIONS,
    OPTS_END,
};

static const OptTable CHAIN_TABLE = {
    .program = "xqf-tune", .spec = CHAIN_OPTIONS, .max_positional = 2,
    .usage =
        "Usage: xqf-tune chain new (--spsa SPEC_FILE | --params NAME,...) --pairs N (--tc 10+0.1 | --nodes N)\n"
        "                          [--then-build] --then-sprt ELO0,ELO1,TC [--then-sprt ELO0,ELO1,TC ...]\n"
        "                          [--sprt-max-pairs N] [--base-build ID] [--net NET|none] [spsa new's options]\n"
        "       xqf-tune chain new --data-games N (--tc 10+0.1 | --nodes N) [--random-plies N] [--net NET|none]\n"
        "                          --then-train [--epochs N] [--batch N] [--lambda X] [--lr X]\n"
        "                          --then-sprt ELO0,ELO1,TC [--then-sprt ELO0,ELO1,TC ...] [--base-net NET|none]\n"
        "                          [--sprt-max-pairs N] [--book FILE] [--name TEXT] [--priority N] [--seed S]\n"
        "       xqf-tune chain show CHAIN [--db CONNINFO]\n"
        "       xqf-tune chain list [--db CONNINFO]\n"
        "       xqf-tune chain advance [CHAIN] [--sign-key FILE] [--out DIR] [--source DIR] [--threads N]\n"
        "                              [--with-data PATH ...] [--watch SECONDS]\n"
        "       xqf-tune chain stop CHAIN [--db CONNINFO]\n"
        "\n"
        "new: a run chain: an SPSA run now, then each stage in the order given when\n"
        "the one before finished and passed: --then-build compiles the tuned engine\n"
        "(xqf-tune build of the SPSA run, with the net it played compiled in),\n"
        "--then-sprt an SPRT of the tuned set (on the tuned build when one was made)\n"
        "against the SPSA's start set, each side with the SPSA run's net (--net), TC\n"
        "a clock (10+0.1) or fixed nodes (5000n), bounds in normalized Elo; the\n"
        "SPRTs' base plays the start set on --base-build (checked against that\n"
        "build's parameters, as sprt new checks a set) or the workers' engine.\n"
        "The second form closes the network's loop: a data run of N games now (as\n"
        "data new: self-play from the book and --random-plies, the engine with --net\n"
        "or its own evaluation), then --then-train: its positions exported and a net\n"
        "trained on them (xqf-tune nnue train with --epochs, --batch, --lambda, --lr\n"
        "and the run's --seed) and registered (xqf-tune net add, signed with chain\n"
        "advance's --sign-key), then each --then-sprt an SPRT of that net (test)\n"
        "against --base-net (a registered net, none for the hand-crafted\n"
        "evaluation, or by default the engine's own: its compiled-in net, the\n"
        "current default), both sides the workers' engine at the data run's set.\n"
        "A failed SPRT (H0 or its pair cap) ends the chain; so does a stopped run.\n"
        "The database starts each run as the stage before ends, with no one\n"
        "present; a build needs the source tree and a compiler, a training PyTorch:\n"
        "chain advance does the builds and trainings that are due (run it on such a\n"
        "host, or keep it running with --watch; its files in --out/chain-N/).\n"
        "--with-data adds earlier generations' positions (files or folders of\n"
        "*.data on the advancing host, at most 3) to every training it does: a net\n"
        "of the next generation learns from the new data run and the old data, as\n"
        "the stage's detail and the net's provenance record.\n"
        "Prints the chain id.\n"
        "show: the stages with their runs, nets and state.  list: the newest chains.\n"
        "stop: a chain that has not ended, as its Stop button on the dashboard's\n"
        "chains page does: the run of its running stage stopped (as xqf-tune stop),\n"
        "a build or training waiting for chain advance stopped, the stages not\n"
        "started cancelled, the chain stopped; recorded in the run's history.  An\n"
        "ended chain is refused (exit 2).\n",
};

/* Makes the chain of first run spec (checked, its book read, by the run service) and prints its id. Exit status. */
static int record_chain(Store *s, const RunSpec *first, const RunChainSpec *chain)
{
    RunProblem problem;
    int64_t id;
    char actor[STORE_NAME_MAX + 1];
    cli_actor(actor, sizeof actor);
    RunSpec made = *first;
    made.actor = actor;
    int status = problem_status(run_chain_create(s, &made, chain, &id, &problem), &problem);
    if (status == CLI_OK)
        printf("%" PRId64 "\n", id);
    return status;
}

static int make_chain(const Opts *o, RunSpec *spec, void *ctx)
{
    RunChainSpec *chain = ctx;
    Store *s = NULL;
    int status = cli_open_db(o, &s);
    chain->base_build = opts_int(o, "--base-build");
    /* the SPSA run's net, both sides' (spsa new --net); the chain's SPRTs play it too (027_net_chains.sql) */
    if (status == CLI_OK)
        status = cli_net_arg(s, "--net", opts_text(o, "--net"), &spec->test_net);
    if (status == CLI_OK)
        status = record_chain(s, spec, chain);
    store_destroy(&s);
    return status;
}

/* A net chain: its data run (as data new makes one, the default filter), then the stages. Exit status. */
static int data_chain(const Opts *o, RunChainSpec *chain)
{
    RunSpec spec = run_spec_default(RUN_KIND_DATA);
    spec.max_pairs = (opts_int(o, "--data-games") + 1) / 2;
    spec.data.random_plies = (int)opts_int(o, "--random-plies");
    Store *s = NULL;
    int status = new_run_spec(o, &spec, false);
    if (status == CLI_OK && (status = cli_open_db(o, &s)) == CLI_OK)
        status = cli_net_arg(s, "--net", opts_text(o, "--net"), &spec.test_net);
    if (status == CLI_OK)
        status = cli_net_arg(s, "--base-net", opts_text(o, "--base-net"), &chain->base_net);
    if (status == CLI_OK)
        status = record_chain(s, &spec, chain);
    store_destroy(&s);
    return status;
}

/* Options of one kind of chain given to the other. Exit status. */
static int chain_kind_only(const Opts *o, bool data)
{
    static const char *const SPSA_ONLY[] = { "--spsa", "--params", "--start-file", "--pairs", "--alpha", "--gamma",
                                             "--a-ratio", "--then-build", "--base-build" };
    static const char *const DATA_ONLY[] = { "--data-games", "--random-plies", "--then-train", "--epochs", "--batch",
                                             "--lambda", "--lr", "--base-net" };
    const char *const *other = data ? SPSA_ONLY : DATA_ONLY;
    size_t n = data ? sizeof SPSA_ONLY / sizeof *SPSA_ONLY : sizeof DATA_ONLY / sizeof *DATA_ONLY;
    for (size_t i = 0; i < n; i++)
        if (opts_given(o, other[i]))
            return cli_fail(CLI_USAGE, "chain new: %s goes with %s (see xqf-tune chain --help)", other[i],
                            data ? "an SPSA chain (--spsa or --params)" : "a net chain (--data-games)");
    return CLI_OK;
}

/*
 * chain new: the stages in the order given (argv), then the first run and
 * the chain: an SPSA chain (build and SPRT stages) or a net chain (one
 * train stage, which brings the net stage that registers its net, then
 * SPRTs).  Exit status.
 */
static int chain_new(const Opts *o)
{
    RunChainSpec chain = { .name = opts_text(o, "--name") };
    bool data = opts_given(o, "--data-games");
    int status = chain_kind_only(o, data);
    if (status != CLI_OK)
        return status;
    StoreChainStage train = { .epochs = (int)opts_int(o, "--epochs"), .batch = (int)opts_int(o, "--batch"),
                              .lambda = opts_real(o, "--lambda"), .lr = opts_real(o, "--lr") };
    RunProblem problem;
    for (int i = 0; i < o->argc; i++) {
        const char *arg = o->argv[i];
        bool build = strcmp(arg, "--then-build") == 0, trains = strcmp(arg, "--then-train") == 0;
        bool test = strncmp(arg, "--then-sprt", 11) == 0 && (arg[11] == '=' || arg[11] == '\0');
        if (!build && !test && !trains)
            continue;
        const char *text = test ? (arg[11] == '=' ? arg + 12 : o->argv[++i]) : NULL;
        RunStatus st = run_chain_stage(&chain, build ? CHAIN_BUILD : trains ? CHAIN_TRAIN : CHAIN_SPRT, text,
                                       opts_int(o, "--sprt-max-pairs"), &train, &problem);
        if (st != RUN_OK)
            return problem_status(st, &problem);
    }
    /* the order of the stages by the first run's kind is the run service's (run_chain_create) */
    return data ? data_chain(o, &chain) : spsa_run(o, "chain", make_chain, &chain);
}

int tune_cmd_chain(int argc, char **argv)
{
    static const char *const SUBS[] = { "new", "show", "list", "advance", "stop" };
    const char *sub = argc > 1 ? argv[1] : "";
    int which = -1;
    for (int i = 0; i < (int)(sizeof SUBS / sizeof *SUBS); i++)
        if (strcmp(sub, SUBS[i]) == 0)
            which = i;
    Opts o;
    /* play has options of its own (dataplay.c): no database, no run */
    if (strcmp(sub, "play") == 0)
        return cli_data_play(argc - 2, argv + 2);
    if (which < 0 && (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0))
        return cli_parse(&o, &CHAIN_TABLE, argc - 1, argv + 1);
    if (which < 0)
        return cli_fail(CLI_USAGE, "chain: say new, show, list, advance or stop (see xqf-tune chain --help)");
    int status = cli_parse(&o, &CHAIN_TABLE, argc - 2, argv + 2);
    if (status != CLI_GO)
        return status;
    for (const OptSpec *spec = CHAIN_OPTIONS; spec->name; spec++) {
        bool mine = which == 0 ? strncmp(spec->help, "advance:", 8) != 0
                  : which == 3 ? strncmp(spec->help, "advance:", 8) == 0
                               : false;
        if (!mine && strcmp(spec->name, "--db") != 0 && opts_given(&o, spec->name))
            return cli_fail(CLI_USAGE, "chain %s does not take %s (see xqf-tune chain --help)", sub, spec->name);
    }
    if (which == 0 && o.npositional)
        return cli_fail(CLI_USAGE, "chain new: no argument, options only");
    if (which == 0) {
        char **held = NULL;
        RunKindId first = opts_given(&o, "--data-games") ? RUN_KIND_DATA : RUN_KIND_SPSA;
        status = cli_parse_preset(&o, &CHAIN_TABLE, argc - 2, argv + 2, first, &held);
        if (status == CLI_GO)
            status = chain_new(&o);
        free(held);
        return status;
    }
    return which == 1 ? cli_chain_show(&o) : which == 2 ? cli_chain_list(&o)
         : which == 3 ? cli_chain_advance(&o) : cli_chain_stop(&o);
}

/* ---- sprt new ------------------------------------------------------------------ */

/* What the two sides of an SPRT or a fixed-games run play. */
#define TWO_SIDES_OPTIONS                                                                                      \
    { "--test", OPT_TEXT, "SET", NULL, .help = "the test side's set, Name=value,... over the defaults" },       \
    { "--base", OPT_TEXT, "SET", NULL, .help = "the base side's set (\"\" for the defaults)" },                 \
    { "--test-build", OPT_INT, "ID", NULL, .imin = 1, .imax = INT64_MAX, .help = "the build the test side plays (default: the workers' own engine)" }, \
    { "--base-build", OPT_INT, "ID", NULL, .imin = 1, .imax = INT64_MAX, .help = "the build the base side plays (default: the workers' own engine)" }, \
    RUN_TEXT_SETTINGS_TWO_SIDES(RUN_TEXT_SETTING_OPTION)                                                       \
    { "--test-ref", OPT_TEXT, "REF", NULL, .help = "or the test side's git commit, built (xqf-tune build --ref)" },  \
    { "--base-ref", OPT_TEXT, "REF", NULL, .help = "or the base side's git commit, built" },                   \
    { "--repo", OPT_TEXT, "DIR", ".", .help = "with --test-ref/--base-ref: the git repository" },               \
    { "--sign-key", OPT_TEXT, "FILE", NULL, .help = "with --test-ref/--base-ref: sign the builds with this operator key" }, \
    { "--engine", OPT_TEXT, "NAME", RUN_OUR_ENGINE, .help = "the engine whose refs or builds both sides play (xqf-tune engine list)" }, \
    { "--base-engine", OPT_TEXT, "NAME", NULL, .help = "the base side's engine, when another (default: --engine's)" }, \
    { "--test-net", OPT_TEXT, "NET|none", NULL, .help = "the net the test side evaluates with (xqf-tune net add; none: hand-crafted; default: the engine's own)" }, \
    { "--base-net", OPT_TEXT, "NET|none", NULL, .help = "the net the base side evaluates with" }, \
    TC_SCALE_OPTIONS

static const OptSpec SPRT_OPTIONS[] = {
    TWO_SIDES_OPTIONS,
    RUN_SETTINGS_SPRT(RUN_SETTING_OPTION)
    NEW_RUN_OPTIONS,
    GAME_OPTIONS,
    OPTS_END,
};

static const OptTable SPRT_TABLE = {
    .program = "xqf-tune", .spec = SPRT_OPTIONS, .max_positional = 1,
    .usage =
        "Usage: xqf-tune sprt new --base SET --test SET (--tc 10+0.1 | --nodes N) [options]\n"
        "       xqf-tune sprt new --base-build ID --test-build ID (--tc | --nodes) [options]\n"
        "       xqf-tune sprt new --base-ref REF --test-ref REF [--repo DIR] [--sign-key FILE] (--tc | --nodes) [options]\n"
        "       xqf-tune sprt new --engine NAME --base-ref REF --test-ref REF [--sign-key FILE] (--tc | --nodes)\n"
        "                         [options]\n"
        "       xqf-tune sprt new [--engine NAME] --test-ref REF --base-engine NAME --base-ref REF (--tc | --nodes)\n"
        "                         [options]\n"
        "\n"
        "Creates an SPRT test of two parameter sets (Name=value,... over the engine's\n"
        "defaults; \"\" for the defaults), or of two engine builds registered with\n"
        "xqf-tune build (a search change is code: its binary against the base's; a\n"
        "set given too is applied to that build as options), stopped when the LLR\n"
        "crosses a bound or after --max-pairs.  --tc-base BASE+INC gives the base\n"
        "side its own clock (time odds; --tc is then the test side's).  Prints the\n"
        "run id.\n"
        "--test-ref/--base-ref test a git commit against another (a branch against\n"
        "main): each is built and registered as `xqf-tune build --ref` does (its\n"
        "binary in ./build-tuned; a tree built before is reused; the commit's\n"
        "`Bench: N` checked), then the test is created as with --test-build and\n"
        "--base-build (a ref and a build id may be mixed).  A ref that does not\n"
        "resolve or build, or whose bench is not its Bench: line, ends with\n"
        "status 2 and no test.\n"
        "--engine NAME (default xqf, ours) tests another engine's refs (or builds)\n"
        "on both sides: each ref is read from the repository of its record (xqf-tune\n"
        "engine add), built by the record's build command (or CMake target) in the\n"
        "sandbox, benched by its bench command, the nodes read by its regexes and\n"
        "checked against the commit's Bench: line, registered as NAME-COMMIT12 and\n"
        "signed; workers play the builds with the record's protocol, commands after\n"
        "the handshake and option names; --tc-scale's reference is the record's speed\n"
        "unless --ref-nps says otherwise.  --test-net/--base-net go to its builds as\n"
        "`setoption name NET_OPTION value PATH` (the record's net option, Pikafish's\n"
        "EvalFile).  An unknown engine, --repo, a net for an engine without a net\n"
        "option, none, no net for one that needs one (--needs-net) or a side without a\n"
        "ref or build end with status 2 and no test.\n"
        "--base-engine NAME gives the base side another engine than --engine (ours\n"
        "against Pikafish or ElephantEye, each a record: a gauntlet's opponent in one\n"
        "run): --base-ref is built by NAME's record as --engine's refs are by theirs,\n"
        "--base-net checked against it, and workers speak to each side as its own\n"
        "record says (protocol, dialect, commands after the handshake, option names).\n"
        "An unknown base engine, or one not ours without --base-ref or --base-build,\n"
        "ends with status 2 and no test.\n"
        "A set is checked against what plays it: the set of a side that plays a\n"
        "build (--test with --test-build or --test-ref, --base likewise) against\n"
        "the parameters that build listed when it was registered (a branch's new\n"
        "switch is taken; a name the build does not list, or a value outside its\n"
        "bounds there, ends with status 2 and no test, a ref's build once it is\n"
        "built); the set of a side that plays the workers' own engine against this\n"
        "xqf-tune's table.  A build registered before builds recorded their\n"
        "parameters is checked against the table too, with a warning.\n"
        "--tc-scale (with --tc) scales the clock on each worker by --ref-nps divided\n"
        "by that worker's speed, as for spsa new.\n"
        "--test-net and --base-net name the net each side evaluates with (an ID,\n"
        "SHA-256 or name of xqf-tune net add; none: the hand-crafted evaluation, which stays a\n"
        "choice once the engine has a default net; absent: the engine's own).  With\n"
        "nets, the sets may be left out (\"\": the defaults).\n",
};

/*
 * The builds of --test-ref and --base-ref: both resolved (cheap checks
 * first), then built, then registered, so that a bad ref or a failed
 * build records nothing.  Each ref is built by its side's engine record
 * (the base side's may be another engine's).  Their ids go to sp, the
 * refs resolved to made (two, or NULL; its engines not kept).  Exit
 * status.
 */
static int build_refs(const Opts *o, RunSpec *sp, const char *command, const char *const refs[2], CliGitRef *made)
{
    const char *repo = opts_table_has(o, "--repo") ? opts_text(o, "--repo") : NULL;
    int64_t *ids[2] = { &sp->test_build, &sp->base_build };
    CliGitRef *g = calloc(2, sizeof *g);
    EngineRecord *engines[2] = { run_spec_side_other(sp, 0) ? malloc(sizeof *engines[0]) : NULL,
                                 run_spec_side_other(sp, 1) ? malloc(sizeof *engines[1]) : NULL };
    Store *s = NULL;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int status = g && (engines[0] || !run_spec_side_other(sp, 0)) && (engines[1] || !run_spec_side_other(sp, 1))
                     ? cli_open_db(o, &s)
                     : cli_fail(CLI_FAIL, "out of memory");
    for (int i = 0; status == CLI_OK && i < 2; i++)
        if (engines[i])
            status = cli_engine_load(s, i ? "--base-engine" : "--engine", run_spec_side_engine(sp, i), engines[i]);
    for (int i = 0; status == CLI_OK && i < 2; i++)
        if (refs[i])
            status = cli_git_resolve(s, repo, refs[i], NULL, engines[i], GIT_BUILD_DIR "/repos", &g[i]);
    if (status == CLI_OK && refs[0] && refs[1] && strcmp(g[0].tree, g[1].tree) == 0)
        status = cli_fail(CLI_USAGE, "%s new: --test-ref and --base-ref are the same source (tree %.12s)", command,
                          g[0].tree);
    for (int i = 0; status == CLI_OK && i < 2; i++)
        if (refs[i])
            status = cli_git_build(s, &g[i], GIT_BUILD_DIR, cores > 0 ? cores : 1);
    for (int i = 0; status == CLI_OK && i < 2; i++)
        if (refs[i])
            status = cli_git_register(s, &g[i], opts_text(o, "--sign-key"), ids[i]);
    if (status == CLI_OK && sp->base_build && sp->test_build == sp->base_build)
        status = cli_fail(CLI_USAGE, "%s new: the test and the base are the same build %" PRId64, command,
                          sp->test_build);
    for (int i = 0; status == CLI_OK && made && i < 2; i++) {
        made[i] = g[i];
        made[i].engine = NULL;
    }
    store_destroy(&s);
    free(g);
    free(engines[0]);
    free(engines[1]);
    return status;
}

/* --tc-scale's reference speed without --ref-nps: the engine record's, when it knows one. Exit status. */
static int engine_ref_nps(const Opts *o, RunSpec *sp)
{
    EngineRecord *e = malloc(sizeof *e);
    Store *s = NULL;
    int status = e ? cli_open_db(o, &s) : cli_fail(CLI_FAIL, "out of memory");
    if (status == CLI_OK && (status = cli_engine_load(s, "--engine", sp->engine, e)) == CLI_OK && e->ref_nps > 0)
        sp->ref_nps = e->ref_nps;
    store_destroy(&s);
    free(e);
    return status;
}

/*
 * Each side's engine (another's than ours) by its record, and its nets
 * against it (run_engine_nets) before anything is built: which sides name
 * a net (create_run looks them up).  An unknown engine is CLI_USAGE,
 * naming its option.  Exit status.
 */
static int check_engine_nets(const Opts *o, const RunSpec *sp)
{
    RunSpec given = *sp;
    int64_t *ids[2] = { &given.test_net, &given.base_net };
    for (int i = 0; i < 2; i++) {
        const char *option = i ? "--base-net" : "--test-net";
        *ids[i] = !opts_given(o, option) ? 0 : strcmp(opts_text(o, option), "none") == 0 ? STORE_NET_NONE : 1;
    }
    EngineRecord *e = malloc(sizeof *e);
    Store *s = NULL;
    RunProblem problem;
    int status = e ? cli_open_db(o, &s) : cli_fail(CLI_FAIL, "out of memory");
    for (int i = 0; status == CLI_OK && i < 2; i++)
        if (run_spec_side_other(sp, i) &&
            (status = cli_engine_load(s, i ? "--base-engine" : "--engine", run_spec_side_engine(sp, i), e)) == CLI_OK)
            status = problem_status(run_engine_nets(e, &given, &problem), &problem);
    store_destroy(&s);
    free(e);
    return status;
}

/*
 * KIND new for a kind of two sides that tunes nothing (sprt, games): the
 * two sides (sets, builds, time odds) and the run; a kind with SPRT
 * bounds reads them, one without plays --pairs.  Exit status.
 */
static int two_sides_run(Opts *o, RunKindId kind);

static int two_sides_new(int argc, char **argv, const OptTable *table, RunKindId kind)
{
    Opts o;
    char **held = NULL;
    int status = cli_parse(&o, table, argc - 1, argv + 1);
    if (status == CLI_GO)
        status = cli_parse_preset(&o, table, argc - 1, argv + 1, kind, &held);
    if (status == CLI_GO)
        status = two_sides_run(&o, kind);
    free(held);
    return status;
}

static int two_sides_run(Opts *op, RunKindId kind)
{
    Opts o = *op;
    const RunKind *k = run_kind_get(kind);
    const char *command = k->name;
    bool games = !k->sprt;
    int status;
    if ((status = check_new(&o, command)) != CLI_OK)
        return status;
    for (int i = 0; i < 2; i++)
        if (opts_given(&o, i ? "--base-ref" : "--test-ref") && opts_given(&o, i ? "--base-build" : "--test-build"))
            return cli_fail(CLI_USAGE, "%s new: give %s or %s, not both", command, i ? "--base-ref" : "--test-ref",
                            i ? "--base-build" : "--test-build");
    if ((status = check_tc_scale(&o)) != CLI_OK)
        return status;
    bool refs = opts_given(&o, "--base-ref") || opts_given(&o, "--test-ref");
    if (!refs && (opts_given(&o, "--repo") || opts_given(&o, "--sign-key")))
        return cli_fail(CLI_USAGE, "%s new: --repo and --sign-key go with --test-ref/--base-ref", command);
    bool builds = refs || opts_given(&o, "--base-build") || opts_given(&o, "--test-build");
    bool nets = opts_given(&o, "--base-net") || opts_given(&o, "--test-net");
    if (!builds && !nets && (!opts_given(&o, "--base") || !opts_given(&o, "--test")))
        return cli_fail(CLI_USAGE, "%s new: --base and --test (sets), --base-build and --test-build, "
                                   "--base-ref and --test-ref, or --test-net/--base-net are required", command);
    if (games && !opts_given(&o, "--pairs"))
        return cli_fail(CLI_USAGE, "%s new: --pairs N is required", command);
    RunSpec sp = run_spec_default(kind);
    sp.engine = opts_text(&o, "--engine");
    sp.base_engine = opts_given(&o, "--base-engine") ? opts_text(&o, "--base-engine") : NULL;
    if (run_spec_other_engine(&sp) && opts_given(&o, "--repo"))
        return cli_fail(CLI_USAGE, "--repo: engine %s's refs are read from its record's repository "
                                   "(xqf-tune engine show %s)", sp.engine, sp.engine);
    if (games)
        sp.max_pairs = opts_int(&o, "--pairs");
    else
        read_sprt_settings(&o, &sp);
    sp.test_build = opts_int(&o, "--test-build"), sp.base_build = opts_int(&o, "--base-build");
    sp.base_params = opts_given(&o, "--base") ? opts_text(&o, "--base") : "";
    sp.test_params = opts_given(&o, "--test") ? opts_text(&o, "--test") : "";
    if (builds && !refs && sp.test_build == sp.base_build)
        return cli_fail(CLI_USAGE, "%s new: --test-build and --base-build are the same build", command);
    /* a side that plays a build has its set checked against the build's parameters once it exists (create_run) */
    for (int i = 0; i < 2; i++)
        if (!opts_given(&o, i ? "--base-build" : "--test-build") && !opts_given(&o, i ? "--base-ref" : "--test-ref") &&
            (status = check_set(i ? "--base" : "--test", i ? sp.base_params : sp.test_params)) != CLI_OK)
            return status;
    if (opts_given(&o, "--tc-base") && !opts_given(&o, "--tc"))
        return cli_fail(CLI_USAGE, "--tc-base (time odds) needs --tc, the test side's clock");
    if ((status = read_odds(&o, &sp)) != CLI_OK)
        return status;
    if ((status = new_run_spec(&o, &sp, false)) != CLI_OK)
        return status;
    if (run_spec_other_engine(&sp) && opts_given(&o, "--tc-scale") && !opts_given(&o, "--ref-nps") &&
        (status = engine_ref_nps(&o, &sp)) != CLI_OK)
        return status;
    if ((run_spec_side_other(&sp, 0) || run_spec_side_other(&sp, 1)) && (status = check_engine_nets(&o, &sp)) != CLI_OK)
        return status;
    CliGitRef *made = NULL;
    char name[RUN_NAME_MADE_MAX + 1] = "";
    if (refs) {
        /* the settings and the book before anything is built: a bad one costs no build */
        RunBook book;
        StoreSprtSpec st;
        RunProblem problem;
        sp.test_ref = opts_text(&o, "--test-ref"), sp.base_ref = opts_text(&o, "--base-ref");
        status = problem_status(run_prepare(&sp, &book, &st, &problem), &problem);
        run_book_free(&book);
        /* built here, not by the builder: the run is made with the builds, waiting for none */
        sp.test_ref = sp.base_ref = NULL;
        const char *sides[2] = { opts_text(&o, "--test-ref"), opts_text(&o, "--base-ref") };
        if (status == CLI_OK && !(made = calloc(2, sizeof *made)))
            status = cli_fail(CLI_FAIL, "out of memory");
        if (status == CLI_OK)
            status = build_refs(&o, &sp, command, sides, made);
        /* unnamed, it is named by what it tests: its refs (or a side's build) and the test commit's subject */
        char label[2][32];
        for (int i = 0; i < 2; i++)
            if ((i ? sp.base_build : sp.test_build) > 0)
                snprintf(label[i], sizeof label[i], "build %" PRId64, i ? sp.base_build : sp.test_build);
            else
                snprintf(label[i], sizeof label[i], "the workers' engine");
        if (status == CLI_OK && !sp.name[0] && (sides[0] || sides[1]))
            run_refs_name(sides[0] ? sides[0] : label[0], sides[1] ? sides[1] : label[1],
                          sides[0] ? made[0].subject : NULL, name, sizeof name);
        if (name[0])
            sp.name = name;
    }
    /* the diff of two refs of one repository (two engines' have none) */
    bool one_repo = made && opts_given(&o, "--test-ref") && opts_given(&o, "--base-ref") &&
                    strcmp(made[0].repo, made[1].repo) == 0;
    if (status == CLI_OK)
        status = create_run(&o, &sp, one_repo ? made : NULL);
    free(made);
    return status;
}

static int sprt_cmd(int argc, char **argv) { return two_sides_new(argc, argv, &SPRT_TABLE, RUN_KIND_SPRT); }

/* ---- games new ----------------------------------------------------------------- */

static const OptSpec GAMES_OPTIONS[] = {
    RULE_PAIRS("game pairs to play, required"),
    TWO_SIDES_OPTIONS,
    NEW_RUN_OPTIONS,
    GAME_OPTIONS,
    OPTS_END,
};

static const OptTable GAMES_TABLE = {
    .program = "xqf-tune", .spec = GAMES_OPTIONS, .max_positional = 1,
    .usage =
        "Usage: xqf-tune games new --pairs N --base SET --test SET (--tc 10+0.1 [--tc-base 5+0.05] | --nodes N)\n"
        "                          [options]\n"
        "       xqf-tune games new --pairs N --base-build ID --test-build ID (--tc | --nodes) [options]\n"
        "       xqf-tune games new --pairs N [--engine NAME] --base-ref REF --test-ref REF (--tc | --nodes) [options]\n"
        "       xqf-tune games new --pairs N [--engine NAME] --test-ref REF --base-engine NAME --base-ref REF\n"
        "                          (--tc | --nodes) [options]\n"
        "\n"
        "Creates a fixed-games run: exactly N game pairs of the test side against the\n"
        "base (sets, builds or refs, of our engine or of --engine NAME's, the base\n"
        "side's of --base-engine NAME's when another, as sprt new takes and checks\n"
        "them), no SPRT; show and report give its Elo and nElo with\n"
        "their 95 % intervals and the LOS.\n"
        "--tc-base gives the base side a clock of its own (time odds: --tc is then\n"
        "the test side's), for sprt new too.  Prints the run id.\n",
};

static int games_cmd(int argc, char **argv) { return two_sides_new(argc, argv, &GAMES_TABLE, RUN_KIND_GAMES); }

int cli_new_run_spec(const Opts *o, RunSpec *sp) { return new_run_spec(o, sp, false); }

int cli_run_problem(RunStatus status, const RunProblem *p) { return problem_status(status, p); }

/* ---- data new, and the data command's options ---------------------------------- */


static const OptSpec DATA_OPTIONS[] = {
    RULE_DEPTH,
    RULE_DATA_GAMES,
    { "--params", OPT_TEXT, "FILE|SET", "", .help = "new: the engine's set, a parameter file or Name=value,... (default: the defaults)" },
    RULE_RANDOM_PLIES,
    RULE_SKIP_PLIES,
    { "--keep-check", OPT_FLAG, NULL, NULL, .help = "new: keep positions where the side to move is in check" },
    { "--keep-captures", OPT_FLAG, NULL, NULL, .help = "new: keep positions whose played move captures" },
    RULE_MAX_SCORE,
    { "--net", OPT_TEXT, "NET|none", NULL, .help = "new: the net the engine evaluates with (xqf-tune net add; none: hand-crafted)" },
    { "--out", OPT_TEXT, "FILE", NULL, .help = "export,merge: the data file written" },
    { "--text", OPT_FLAG, NULL, NULL, .help = "export: lines 'FEN | score | move | result | ply' instead" },
    { "--dedup", OPT_FLAG, NULL, NULL, .help = "merge: drop repeated positions (same board and side to move), keeping the first" },
    { "--keep-order", OPT_FLAG, NULL, NULL, .help = "merge: the inputs' positions in their order, not shuffled" },
    { "--memory", OPT_INT, "MB", "256", .imin = 1, .imax = 1 << 20, .help = "merge,stats: memory for the shuffle and the duplicates (FILE...)" },
    { "--tmp", OPT_TEXT, "DIR", NULL, .help = "merge,stats: temporary files (default: the output's folder, else $TMPDIR or /tmp)" },
    NEW_RUN_OPTIONS,
    OPTS_END,
};

#define DATA_USAGE\
        "Usage: xqf-tune data new --games N (--nodes N | --depth D | --tc 10+0.1) [--params FILE|SET]\n"\
        "                         [--book FILE] [--random-plies N] [--skip-plies N] [--keep-check]\n"\
        "                         [--keep-captures] [--max-score CP] [--pairs-per-task P] [--name TEXT]\n"\
        "                         [--priority N] [--seed S] [--net NET|none] [--db CONNINFO]\n"\
        "       xqf-tune data play --games N --nodes N --out FILE [--seed S] [--as-run ID] [--random-plies N]\n"\
        "                          [--threads N] [--hash MB] [--net FILE|none] [--book FILE] [--skip-plies N]\n"\
        "                          [--keep-check] [--keep-captures] [--max-score CP] [--quiet]\n"\
        "       xqf-tune data export RUN --out FILE [--text] [--db CONNINFO]\n"\
        "       xqf-tune data stats RUN [--db CONNINFO]\n"\
        "       xqf-tune data merge FILE... --out FILE [--dedup] [--keep-order] [--seed S] [--memory MB]\n"\
        "                           [--tmp DIR]\n"\
        "       xqf-tune data stats FILE... [--memory MB] [--tmp DIR]\n"\
        "\n"\
        "new: creates a data-generation run: the cluster's workers play the engine\n"\
        "(its set) against itself from the book's openings, each game with its own\n"\
        "random plies after the opening, and report every game with the scores of\n"\
        "its searches, at fixed nodes, a fixed depth or a clock.  The filter\n"\
        "(--skip-plies, --keep-check, --keep-captures, --max-score) is the run's\n"\
        "and applies when its positions are exported.  --net plays the engine with a\n"\
        "net of xqf-tune net add (an ID, SHA-256 or name; none: the hand-crafted\n"\
        "evaluation; default: the engine's own).\n"\
        "Prints the run id.\n"\
        "play: the games of a data run played on this machine without the cluster,\n"\
        "their kept positions written straight to a data file (faster: no database,\n"\
        "a small hash).\n"\
        "export: writes the run's kept positions as a data file (XQFDATA1, worker/\n"\
        "datagen.h; what xqf-tune texel reads), or as text.\n"\
        "stats: positions, games, results (Red's view), a score histogram, duplicate\n"\
        "positions and the bytes the database spends per position.\n"\
        "merge: data files (a folder: its *.data files) into one, in a random order\n"\
        "drawn from --seed (an external sort by random keys: the same inputs and seed\n"\
        "give the same file whatever --memory), with --dedup each position (board and\n"\
        "side to move) once, its first record kept; --keep-order writes them in\n"\
        "their order instead.  Memory stays within --memory (temporary buckets in\n"\
        "--tmp take about 1.15 times the inputs' size); the file is written under a\n"\
        "temporary name and renamed when complete.\n"\
        "stats FILE...: positions, games (where the files keep game order), side to\n"\
        "move, results, exact duplicates, scores and material (the net's output\n"\
        "buckets), within --memory.  A RUN is a number: give a file named by digits\n"\
        "as ./NAME.  Every input is checked first: a file that cannot be read, has\n"\
        "no XQFDATA1 header, is truncated or holds a record that is no position ends\n"\
        "with status 2, naming it, and leaves no output.\n"

static const OptTable DATA_TABLE = {
    .program = "xqf-tune", .spec = DATA_OPTIONS, .max_positional = 1, .usage = DATA_USAGE,
};

/* The same options for the subcommands of files (merge, stats FILE...): as many files as the parser keeps. */
static const OptTable DATA_FILES_TABLE = {
    .program = "xqf-tune", .spec = DATA_OPTIONS, .max_positional = OPTS_POSITIONAL_MAX, .usage = DATA_USAGE,
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

/* Whether an option's help starts with a list of subcommands ("export,merge: ...") that names sub. */
static bool help_names(const char *help, const char *sub)
{
    size_t list = strcspn(help, ": ");
    if (help[list] != ':')
        return false;
    for (const char *p = help; p < help + list; p += strcspn(p, ",") + 1) {
        size_t len = strcspn(p, ",:");
        if (len == strlen(sub) && strncmp(p, sub, len) == 0)
            return true;
    }
    return false;
}

/*
 * Options of the data command that belong to another of its subcommands
 * (files: stats of FILE... rather than of a RUN). Exit status.
 */
static int data_only(const Opts *o, const char *sub, bool files)
{
    bool merge = strcmp(sub, "merge") == 0;
    for (const OptSpec *spec = DATA_OPTIONS; spec->name; spec++) {
        bool mine = help_names(spec->help, sub) || (strcmp(spec->name, "--db") == 0 && !files && !merge) ||
                    (strcmp(sub, "new") == 0 && strchr(spec->help, ':') == NULL) ||
                    (merge && strcmp(spec->name, "--seed") == 0);
        if (strcmp(sub, "stats") == 0 && !files && (strcmp(spec->name, "--memory") == 0 || strcmp(spec->name, "--tmp") == 0))
            mine = false;
        if (!mine && opts_given(o, spec->name))
            return cli_fail(CLI_USAGE, "data %s%s does not take %s (see xqf-tune data --help)", sub,
                            strcmp(sub, "stats") == 0 ? files ? " FILE..." : " RUN" : "", spec->name);
    }
    return CLI_OK;
}

/* Whether the arguments of data stats are a RUN (one number) rather than files. */
static bool one_run(const Opts *o)
{
    return o->npositional == 1 && o->positional[0][0] && strspn(o->positional[0], "0123456789") == strlen(o->positional[0]);
}

static int data_new(const Opts *o)
{
    if (o->npositional)
        return cli_fail(CLI_USAGE, "data new: no RUN argument, options only");
    if (!opts_given(o, "--games"))
        return cli_fail(CLI_USAGE, "data new: --games N is required");
    if (opts_given(o, "--depth") && (opts_given(o, "--nodes") || opts_given(o, "--tc")))
        return cli_fail(CLI_USAGE, "data new: give one of --nodes, --depth and --tc");
    char *set = malloc(STORE_PARAMS_MAX + 1);
    RunSpec spec = run_spec_default(RUN_KIND_DATA);
    spec.max_pairs = (opts_int(o, "--games") + 1) / 2;
    spec.data = (StoreDataSettings){ .random_plies = (int)opts_int(o, "--random-plies"),
                                     .skip_plies = (int)opts_int(o, "--skip-plies"),
                                     .keep_check = opts_given(o, "--keep-check"),
                                     .keep_captures = opts_given(o, "--keep-captures"),
                                     .max_score = (int)opts_int(o, "--max-score"),
                                     .depth = (int)opts_int(o, "--depth") };
    int status = set ? data_set(opts_text(o, "--params"), set, STORE_PARAMS_MAX + 1) : cli_fail(CLI_FAIL, "out of memory");
    if (status == CLI_OK && (status = new_run_spec(o, &spec, spec.data.depth > 0)) == CLI_OK) {
        spec.test_params = set;
        status = create_run(o, &spec, NULL);
    }
    free(set);
    return status;
}

static int data_cmd(int argc, char **argv)
{
    static const char *const SUBS[] = { "new", "export", "stats", "merge" };
    const char *sub = argc > 1 ? argv[1] : "";
    int which = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(sub, SUBS[i]) == 0)
            which = i;
    Opts o;
    /* play has options of its own (dataplay.c): no database, no run */
    if (strcmp(sub, "play") == 0)
        return cli_data_play(argc - 2, argv + 2);
    if (which < 0 && (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0))
        return cli_parse(&o, &DATA_TABLE, argc - 1, argv + 1);
    if (which < 0)
        return cli_fail(CLI_USAGE, "data: say new, play, export, stats or merge (see xqf-tune data --help)");
    int status = cli_parse(&o, which >= 2 ? &DATA_FILES_TABLE : &DATA_TABLE, argc - 2, argv + 2);
    if (status != CLI_GO)
        return status;
    bool files = which == 3 || (which == 2 && !one_run(&o));
    if (which < 2 && o.npositional > 1)
        return cli_fail(CLI_USAGE, "data %s: one RUN at most (see xqf-tune data --help)", sub);
    if ((status = data_only(&o, sub, files)) != CLI_OK)
        return status;
    if (which == 0) {
        char **held = NULL;
        status = cli_parse_preset(&o, &DATA_TABLE, argc - 2, argv + 2, RUN_KIND_DATA, &held);
        if (status == CLI_GO)
            status = data_new(&o);
        free(held);
        return status;
    }
    return which == 1 ? cli_data_export(&o) : which == 3 ? cli_data_merge(&o)
         : files ? cli_data_file_stats(&o) : cli_data_stats(&o);
}

/* ---- a command per run kind ------------------------------------------------------ */

/*
 * Each kind's command (xqf-tune KIND new ...; run_kinds.def lists the
 * kinds, xqf-tune's command table takes them from there): a new kind's
 * row here, with its options' table and usage above.
 */
static int (*const KIND_COMMANDS[RUN_KIND_COUNT])(int argc, char **argv) = {
    [RUN_KIND_SPRT] = sprt_cmd,
    [RUN_KIND_SPSA] = spsa_cmd,
    [RUN_KIND_DATA] = data_cmd,
    [RUN_KIND_GAMES] = games_cmd,
};

int tune_cmd_run_kind(int argc, char **argv)
{
    RunKindId id = run_kind_id(argv[0]);
    if (id == RUN_KIND_COUNT || !KIND_COMMANDS[id])
        return cli_fail(CLI_FAIL, "%s: a run kind without a creation command (run_kinds.def)", argv[0]);
    return KIND_COMMANDS[id](argc, argv);
}

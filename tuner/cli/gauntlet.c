/*
 * gauntlet.c - xqf-tune gauntlet new and show: one side against several
 * opponents, as cutechess-cli's gauntlet tournaments and OpenBench's
 * "multiple opponents" tests play it.
 *
 * A gauntlet is no new kind of record: it is one fixed-games run per
 * opponent, each made by the run service (run_create) like games new
 * makes one, named "NAME vs OPPONENT".  The shared name is the gauntlet:
 * show finds its runs by that prefix (store_prefixed_runs) and prints
 * each opponent's result and the total in one table.  The side is the
 * test side of the gauntlet's engine (runs.engine); an opponent of
 * another engine is the base side of its own (runs.base_engine), as
 * cutechess plays ours against Pikafish or ElephantEye.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "run_rules.h"
#include "store_runs.h"
#include "store_steer.h"

enum { GAUNTLET_OPPONENTS_MAX = 64 };

/* What separates a gauntlet's name from each run's opponent. */
#define GAUNTLET_VS " vs "

static const OptSpec GAUNTLET_OPTIONS[] = {
    { "--opponent", OPT_TEXT, "ENGINE[@REF]", NULL, .repeat = true,
      .help = "new: an opponent (repeat for each): a ref of any engine, built by the builder by its record (ours without @REF: the workers' engine)" },
    { "--engine", OPT_TEXT, "NAME", RUN_OUR_ENGINE, .help = "new: the engine of the gauntlet's side (xqf-tune engine list)" },
    { "--ref", OPT_TEXT, "REF", NULL, .help = "new: the gauntlet's side: a git commit of the engine, built by the builder" },
    { "--build", OPT_INT, "ID", NULL, .imin = 1, .imax = INT64_MAX, .help = "new: or a registered build" },
    { "--set", OPT_TEXT, "SET", NULL, .help = "new: our engine's set the side plays, Name=value,... over the defaults" },
    { "--test-net", OPT_TEXT, "NET|none", NULL, .help = "new: the net the side evaluates with (xqf-tune net add)" },
    { "--base-net", OPT_TEXT, "NET|none", NULL, .help = "new: the net every opponent evaluates with" },
    RULE_PAIRS("new: game pairs against each opponent, required"),
    /* the settings of every new run, as games new takes them (create.c's NEW_RUN_OPTIONS, run_rules.h) */
    { "--tc", OPT_TEXT, "BASE+INC", NULL, .help = "new: time control in seconds (10+0.1), or" },
    RULE_NODES,
    RUN_BOOK_OPTIONS,
    { "--name", OPT_TEXT, "TEXT", NULL, .help = "new: the gauntlet's name (default: gauntlet ENGINE@REF, or its build or set)" },
    { "--preset", OPT_TEXT, "NAME", NULL, .help = "new: the engine's preset of settings (xqf-tune preset list); an option typed overrides it" },
    RUN_SETTINGS_EVERY_KIND(RUN_SETTING_OPTION)
    GAME_OPTIONS,
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable GAUNTLET_TABLE = {
    .program = "xqf-tune", .spec = GAUNTLET_OPTIONS, .max_positional = 2,
    .usage =
        "Usage: xqf-tune gauntlet new [--engine NAME] [--ref REF | --build ID | --set SET]\n"
        "                             --opponent ENGINE[@REF] [--opponent ENGINE[@REF] ...] --pairs N\n"
        "                             (--tc 10+0.1 | --nodes N) [--name TEXT] [games new's options]\n"
        "       xqf-tune gauntlet show GAUNTLET [--db CONNINFO]\n"
        "\n"
        "new: one side against each opponent, a fixed-games run of N pairs each (as\n"
        "games new makes one: the side is the test, the opponent the base), named\n"
        "\"NAME vs OPPONENT\"; NAME (--name, default \"gauntlet ENGINE@REF\") is the\n"
        "gauntlet.  The side is a ref of --engine (built by the builder before the\n"
        "runs start), a registered build, or for our engine a set of the workers'\n"
        "engine; each opponent is a ref of any engine, the same or another (its run's\n"
        "base engine, built by that engine's record and played as it says), or for\n"
        "ours, without @REF, the workers' engine at its defaults.\n"
        "Every run is checked first; an unknown engine, an opponent of another engine\n"
        "without @REF, one given twice, none at all, or a name a gauntlet has already\n"
        "end with status 2 and no run.  The runs are made in order, each in its own transaction: when\n"
        "one fails, those made before are stopped.  Prints the gauntlet's name, then\n"
        "each run's id and opponent.\n"
        "show: each opponent's run, W/D/L, pentanomial and the side's Elo against it\n"
        "with its 95 % interval (as show), and the total over all opponents.\n"
        "GAUNTLET is its name or the id of any of its runs.\n",
};

/* One opponent: its engine and ref (NULL: none), split from the argument. */
typedef struct {
    char engine[ENGINE_NAME_MAX + 1];
    const char *ref;
    const char *text;
} Opponent;

/* Splits ENGINE[@REF] into *op. Exit status. */
static int parse_opponent(const char *text, Opponent *op)
{
    const char *at = strchr(text, '@');
    size_t len = at ? (size_t)(at - text) : strlen(text);
    if (len == 0 || len > ENGINE_NAME_MAX || (at && !at[1]))
        return cli_fail(CLI_USAGE, "--opponent: '%s' is not ENGINE[@REF]", text);
    memcpy(op->engine, text, len);
    op->engine[len] = '\0';
    op->ref = at ? at + 1 : NULL;
    op->text = text;
    return CLI_OK;
}

/*
 * The opponents' runs, specs (each with its nets), before any run is
 * made: each opponent's engine loaded (another than the side's plays the
 * base side, runs.base_engine), none given twice, and each side's nets
 * against its engine's record when it is not ours (run_engine_nets).
 * Exit status.
 */
static int check_opponents(Store *s, const RunSpec *specs, const Opponent *ops, int n)
{
    EngineRecord *e = malloc(sizeof *e);
    int status = e ? CLI_OK : cli_fail(CLI_FAIL, "out of memory");
    RunProblem problem;
    for (int i = 0; status == CLI_OK && i < n; i++) {
        if ((status = cli_engine_load(s, "--opponent", ops[i].engine, e)) != CLI_OK)
            break;
        for (int j = 0; status == CLI_OK && j < i; j++)
            if (strcmp(ops[i].text, ops[j].text) == 0)
                status = cli_fail(CLI_USAGE, "--opponent %s: given twice", ops[i].text);
        for (int k = 0; status == CLI_OK && k < 2; k++)
            if (run_spec_side_other(&specs[i], k) &&
                (status = cli_engine_load(s, k ? "--opponent" : "--engine", run_spec_side_engine(&specs[i], k), e)) ==
                    CLI_OK)
                status = cli_run_problem(run_engine_nets(e, &specs[i], &problem), &problem);
    }
    free(e);
    return status;
}

/* A gauntlet's name: --name, else what its side plays. */
static void gauntlet_name(const Opts *o, const char *engine, char *out, size_t size)
{
    if (opts_given(o, "--name"))
        snprintf(out, size, "%s", opts_text(o, "--name"));
    else if (opts_given(o, "--ref"))
        snprintf(out, size, "gauntlet %s@%s", engine, opts_text(o, "--ref"));
    else if (opts_given(o, "--build"))
        snprintf(out, size, "gauntlet %s build %" PRId64, engine, opts_int(o, "--build"));
    else
        snprintf(out, size, "gauntlet %s %s", engine, opts_given(o, "--set") ? opts_text(o, "--set") : "defaults");
}

/* Whether runs of a gauntlet of this name exist: 1, 0, or -1 (the database). */
static int gauntlet_exists(Store *s, const char *name)
{
    char prefix[STORE_TEXT_MAX + 8];
    StoreRun *runs = NULL;
    snprintf(prefix, sizeof prefix, "%s" GAUNTLET_VS, name);
    int n = store_prefixed_runs(s, run_kind_get(RUN_KIND_GAMES)->name, prefix, &runs);
    free(runs);
    return n < 0 ? -1 : n > 0;
}

/*
 * Each opponent's spec from the side's (sp) into specs, named into names
 * (STORE_TEXT_MAX each), checked by the run service. Exit status.
 */
static int opponent_specs(const RunSpec *sp, const char *name, const Opponent *ops, int n, RunSpec *specs,
                          char (*names)[STORE_TEXT_MAX])
{
    for (int i = 0; i < n; i++) {
        specs[i] = *sp;
        int len = snprintf(names[i], STORE_TEXT_MAX, "%s" GAUNTLET_VS "%s", name, ops[i].text);
        if (len < 0 || len >= STORE_TEXT_MAX)
            return cli_fail(CLI_USAGE, "--name: '%s" GAUNTLET_VS "%s' is longer than %d bytes", name, ops[i].text,
                            STORE_TEXT_MAX - 1);
        if (!ops[i].ref && strcmp(ops[i].engine, RUN_OUR_ENGINE) != 0)
            return cli_fail(CLI_USAGE, "--opponent %s: engine %s plays its builds: give %s@REF", ops[i].text,
                            ops[i].engine, ops[i].engine);
        specs[i].name = names[i];
        specs[i].base_ref = ops[i].ref;
        specs[i].base_engine = ops[i].engine;
        RunProblem problem;
        int status = cli_run_problem(run_check(&specs[i], &problem), &problem);
        if (status != CLI_OK)
            return status;
    }
    return CLI_OK;
}

/* The side's settings from the options (the run service checks them further). Exit status. */
static int side_spec(const Opts *o, RunSpec *sp)
{
    int given = opts_given(o, "--ref") + opts_given(o, "--build") + opts_given(o, "--set");
    if (given > 1)
        return cli_fail(CLI_USAGE, "gauntlet new: give one of --ref, --build and --set");
    if (!opts_given(o, "--pairs"))
        return cli_fail(CLI_USAGE, "gauntlet new: --pairs N is required");
    sp->engine = opts_text(o, "--engine");
    if (run_spec_other_engine(sp) && opts_given(o, "--set"))
        return cli_fail(CLI_USAGE, "--set: engine %s's builds take no set of ours: give --ref or --build",
                        sp->engine);
    if (opts_given(o, "--set")) {
        char why[512];
        if (!rule_set(opts_text(o, "--set"), why, sizeof why))
            return cli_fail(CLI_USAGE, "--set: %s", why);
        sp->test_params = opts_text(o, "--set");
    }
    sp->test_ref = opts_text(o, "--ref");
    sp->test_build = opts_int(o, "--build");
    sp->max_pairs = opts_int(o, "--pairs");
    return cli_new_run_spec(o, sp);
}

static int gauntlet_new(const Opts *o)
{
    Opponent ops[GAUNTLET_OPPONENTS_MAX];
    int n = 0;
    for (const char *text; (text = opts_nth(o, "--opponent", n)); n++) {
        if (n == GAUNTLET_OPPONENTS_MAX)
            return cli_fail(CLI_USAGE, "--opponent: at most %d opponents", GAUNTLET_OPPONENTS_MAX);
        if (parse_opponent(text, &ops[n]) != CLI_OK)
            return CLI_USAGE;
    }
    if (n == 0)
        return cli_fail(CLI_USAGE, "gauntlet new: give at least one --opponent ENGINE[@REF]");
    RunSpec side = run_spec_default(RUN_KIND_GAMES);
    int status = side_spec(o, &side);
    if (status != CLI_OK)
        return status;
    char name[STORE_TEXT_MAX];
    gauntlet_name(o, side.engine, name, sizeof name);
    if (strstr(name, GAUNTLET_VS))
        return cli_fail(CLI_USAGE, "--name: '%s' holds '" GAUNTLET_VS "', which parts a run's name from its opponent",
                        cli_shown(name));
    RunSpec *specs = calloc((size_t)n, sizeof *specs);
    char(*names)[STORE_TEXT_MAX] = calloc((size_t)n, sizeof *names);
    int64_t ids[GAUNTLET_OPPONENTS_MAX];
    Store *s = NULL;
    if (!specs || !names)
        status = cli_fail(CLI_FAIL, "out of memory");
    if (status == CLI_OK)
        status = opponent_specs(&side, name, ops, n, specs, names);
    if (status == CLI_OK)
        status = cli_open_db(o, &s);
    for (int i = 0; status == CLI_OK && i < 2; i++)
        status = cli_net_arg(s, i ? "--base-net" : "--test-net", opts_text(o, i ? "--base-net" : "--test-net"),
                             i ? &side.base_net : &side.test_net);
    for (int i = 0; status == CLI_OK && i < n; i++)
        specs[i].test_net = side.test_net, specs[i].base_net = side.base_net;
    if (status == CLI_OK)
        status = check_opponents(s, specs, ops, n);
    int exists = status == CLI_OK ? gauntlet_exists(s, name) : 0;
    if (exists < 0)
        status = cli_fail(CLI_FAIL, "cannot read the runs");
    else if (exists)
        status = cli_fail(CLI_USAGE, "a gauntlet named '%s' exists (xqf-tune gauntlet show): give another --name",
                          cli_shown(name));
    int made = 0;
    char actor[STORE_NAME_MAX + 1];
    cli_actor(actor, sizeof actor);
    for (; status == CLI_OK && made < n; made++) {
        RunProblem problem;
        /* one book, its notes once */
        specs[made].book_notes = made == 0 ? stderr : NULL;
        specs[made].actor = actor;
        status = cli_run_problem(run_create(s, &specs[made], &ids[made], &problem), &problem);
        if (status != CLI_OK) {
            fprintf(stderr, "xqf-tune: gauntlet '%s': the run against %s was not made\n", cli_shown(name),
                    ops[made].text);
            cli_stop_made(s, ids, made);
            break;
        }
    }
    if (status == CLI_OK) {
        printf("Gauntlet: %s\n", cli_shown(name));
        for (int i = 0; i < n; i++)
            printf("%" PRId64 " %s\n", ids[i], ops[i].text);
    }
    store_destroy(&s);
    free(specs);
    free(names);
    return status;
}

/* The gauntlet named by arg (its name, or the id of one of its runs) into name. Exit status. */
static int gauntlet_of(Store *s, const char *arg, char *name, size_t size)
{
    bool digits = *arg != '\0';
    for (const char *c = arg; *c; c++)
        digits = digits && isdigit((unsigned char)*c);
    if (!digits) {
        snprintf(name, size, "%s", arg);
        return CLI_OK;
    }
    StoreRun r;
    int status = cli_load_run(s, strtoll(arg, NULL, 10), &r);
    if (status != CLI_OK)
        return status;
    /* the opponent holds no blank: the name is what comes before the last separator */
    const char *vs = NULL;
    for (const char *p = strstr(r.name, GAUNTLET_VS); p; p = strstr(p + 1, GAUNTLET_VS))
        vs = p;
    if (run_kind_id(r.kind) != RUN_KIND_GAMES || !vs)
        return cli_fail(CLI_USAGE, "run %s is no gauntlet's (a games run named NAME" GAUNTLET_VS "OPPONENT)", arg);
    snprintf(name, size, "%.*s", (int)(vs - r.name), r.name);
    return CLI_OK;
}

/* One row of the table: the opponent (or "total"), its run, state, pairs, W/D/L, pentanomial and Elo. */
static void print_row(const char *opponent, const char *run, const char *state, const StoreCounts *c)
{
    char wdl[64], penta[96], elo[48];
    snprintf(wdl, sizeof wdl, "%" PRId64 "/%" PRId64 "/%" PRId64, c->wins, c->draws, c->losses);
    snprintf(penta, sizeof penta, "[%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "]", c->penta[0],
             c->penta[1], c->penta[2], c->penta[3], c->penta[4]);
    run_elo_text(c, elo, sizeof elo);
    printf("%-24s %-6s %-9s %8" PRId64 " %-16s %-28s %s\n", opponent, run, state, c->pairs, wdl, penta, elo);
}

static int gauntlet_show(const Opts *o)
{
    if (o->npositional != 2)
        return cli_fail(CLI_USAGE, "gauntlet show: give the gauntlet (its name or a run's id)");
    Store *s = NULL;
    char name[STORE_TEXT_MAX], prefix[STORE_TEXT_MAX + 8];
    StoreRun *runs = NULL;
    int status = cli_open_db(o, &s);
    if (status == CLI_OK)
        status = gauntlet_of(s, o->positional[1], name, sizeof name);
    int n = 0;
    if (status == CLI_OK) {
        snprintf(prefix, sizeof prefix, "%s" GAUNTLET_VS, name);
        n = store_prefixed_runs(s, run_kind_get(RUN_KIND_GAMES)->name, prefix, &runs);
        if (n < 0)
            status = cli_fail(CLI_FAIL, "cannot read the runs");
        else if (n == 0)
            status = cli_fail(CLI_USAGE, "no gauntlet named '%s' (xqf-tune list)", cli_shown(name));
    }
    if (status == CLI_OK) {
        StoreCounts total = { 0 };
        printf("Gauntlet: %s\n", cli_shown(name));
        printf("%-24s %-6s %-9s %8s %-16s %-28s %s\n", "opponent", "run", "state", "pairs", "W/D/L",
               "[LL, LD, DD+WL, WD, WW]", "Elo (95 %)");
        for (int i = 0; i < n; i++) {
            const StoreCounts *c = &runs[i].counts;
            char run[24];
            snprintf(run, sizeof run, "%" PRId64, runs[i].id);
            print_row(cli_shown(runs[i].name + strlen(prefix)), run, runs[i].state, c);
            total.pairs += c->pairs, total.wins += c->wins, total.draws += c->draws, total.losses += c->losses;
            for (int k = 0; k < 5; k++)
                total.penta[k] += c->penta[k];
        }
        print_row("total", "", "", &total);
    }
    free(runs);
    store_destroy(&s);
    return status;
}

int tune_cmd_gauntlet(int argc, char **argv)
{
    Opts o;
    int status = cli_parse(&o, &GAUNTLET_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO)
        return status;
    const char *sub = o.npositional > 0 ? o.positional[0] : "";
    if (strcmp(sub, "new") == 0 && o.npositional == 1) {
        /* each run is a games run: a preset gives what games new would take of it */
        char **held = NULL;
        status = cli_parse_preset(&o, &GAUNTLET_TABLE, argc - 1, argv + 1, RUN_KIND_GAMES, &held);
        if (status == CLI_GO)
            status = gauntlet_new(&o);
        free(held);
        return status;
    }
    if (strcmp(sub, "show") == 0)
        return gauntlet_show(&o);
    return cli_fail(CLI_USAGE, "gauntlet: the subcommands are 'new' and 'show' (see xqf-tune gauntlet --help)");
}

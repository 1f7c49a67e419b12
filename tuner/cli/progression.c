/*
 * progression.c - xqf-tune progression new and show: the strength of an
 * engine's chosen commits over time, each played against one fixed base
 * with one set of settings, as Fishtest's regression tests measure main
 * (its "regression" runs: a release or a month's main against a fixed
 * base, the Elo drawn by date).
 *
 * A point is a fixed-games run made by the run service (run_create) as
 * games new makes one, its test side the commit and its base side the
 * progression's base, both refs built by the builder before the run
 * starts (the run waits in building).  Every ref is resolved here first
 * (cli_git_resolve: the repository of ours, --repo, or of the engine's
 * record) and the runs are given the commits' hashes, so that a branch
 * that moves later changes no point.  The progression (069) groups the
 * runs and keeps each commit's hash, date and subject, which its page
 * and show draw and print without asking git again.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "run_rules.h"
#include "run_view.h"
#include "store_progressions.h"

enum { PROGRESSION_POINTS_MAX = 64 };

/* Where the refs of another engine's repository are mirrored (as sprt new's refs: create.c). */
#define PROGRESSION_REPOS "build-tuned/repos"

static const OptSpec PROGRESSION_OPTIONS[] = {
    { "--base", OPT_TEXT, "REF", NULL, .help = "new: the base every commit plays against (a git ref), required" },
    { "--refs", OPT_TEXT, "REF,REF,...", NULL, .help = "new: the commits measured (git refs), each a games run against the base, required" },
    { "--repo", OPT_TEXT, "DIR", ".", .help = "new: our engine's git repository (another engine's is its record's)" },
    RULE_PAIRS("new: game pairs of each commit against the base, required"),
    /* the settings of every run, as games new takes them (create.c's NEW_RUN_OPTIONS, run_rules.h) */
    { "--tc", OPT_TEXT, "BASE+INC", NULL, .help = "new: time control in seconds (10+0.1), or" },
    RULE_NODES,
    RUN_BOOK_OPTIONS,
    { "--name", OPT_TEXT, "TEXT", NULL, .help = "new: the progression's name (default: progression ENGINE vs BASE)" },
    { "--preset", OPT_TEXT, "NAME", NULL,
      .help = "new: ENGINE's preset of settings (xqf-tune preset list; regression, say); an option typed overrides it" },
    RUN_SETTINGS_EVERY_KIND(RUN_SETTING_OPTION)
    GAME_OPTIONS,
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable PROGRESSION_TABLE = {
    .program = "xqf-tune", .spec = PROGRESSION_OPTIONS, .max_positional = 2,
    .usage =
        "Usage: xqf-tune progression new ENGINE --base REF --refs REF,REF,... --pairs N\n"
        "                                (--tc 10+0.1 | --nodes N) [--repo DIR] [--name TEXT]\n"
        "                                [--preset NAME]\n"
        "                                [games new's options]\n"
        "       xqf-tune progression show PROGRESSION [--db CONNINFO]\n"
        "\n"
        "new: the strength of ENGINE's commits over time (xqf, ours, or an engine's\n"
        "record): each ref of --refs is the test side of a fixed-games run of N pairs\n"
        "against --base, every run with the same settings (as games new makes one).\n"
        "Every ref is resolved first (ours in --repo, another engine's in its\n"
        "record's repository), and the runs name the commits, which the builder\n"
        "builds before they start.  An unknown engine, a ref that does not resolve,\n"
        "no refs, a ref given twice or two refs of one commit, a ref that is the\n"
        "base's commit, or a name a progression has already end with status 2 and no\n"
        "run.  The runs are made in order, each in its own transaction, then the\n"
        "progression with its commits' dates and subjects: when one fails, the runs\n"
        "made before are stopped.  Prints each ref's Commit: and Tree: as it is\n"
        "resolved, then the progression's id and name, and each run's id and ref.\n"
        "show: each commit by date, its run, state, games, W/D/L and Elo against the\n"
        "base with its 95 % interval (as show).  PROGRESSION is its id or name, or\n"
        "run:ID, the progression of a run.\n",
};

/* The refs of --refs, split at commas into refs (each a pointer into text): their count, or -1 after cli_fail. */
static int split_refs(char *text, const char **refs)
{
    int n = 0;
    char why[512];
    for (char *p = text;; p++) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (!*p)
            return cli_fail(CLI_USAGE, "--refs: an empty ref (REF,REF,...)"), -1;
        if (!rule_git_ref(p, why, sizeof why))
            return cli_fail(CLI_USAGE, "--refs: %s", why), -1;
        if (n == PROGRESSION_POINTS_MAX)
            return cli_fail(CLI_USAGE, "--refs: at most %d refs", PROGRESSION_POINTS_MAX), -1;
        for (int j = 0; j < n; j++)
            if (strcmp(refs[j], p) == 0)
                return cli_fail(CLI_USAGE, "--refs: %s given twice", p), -1;
        refs[n++] = p;
        if (!comma)
            return n;
        p = comma;
    }
}

/*
 * Resolves the base (g[0]) and the n refs (g[1..n]) of engine e (NULL:
 * ours, in repo): an unknown ref, two refs of one commit, or a ref that is
 * the base's commit is CLI_USAGE.  Exit status.
 */
static int resolve_refs(Store *s, const char *repo, const EngineRecord *e, const char *base, const char **refs, int n,
                        CliGitRef *g)
{
    int status = cli_git_resolve(s, repo, base, NULL, e, PROGRESSION_REPOS, &g[0]);
    if (status != CLI_OK)
        return cli_fail(status, "--base %s: not resolved: nothing made", base);
    for (int i = 1; status == CLI_OK && i <= n; i++) {
        if ((status = cli_git_resolve(s, repo, refs[i - 1], NULL, e, PROGRESSION_REPOS, &g[i])) != CLI_OK)
            return cli_fail(status, "--refs %s: not resolved: nothing made", refs[i - 1]);
        if (strcmp(g[i].commit, g[0].commit) == 0)
            return cli_fail(CLI_USAGE, "--refs %s: it is the base's commit %.12s (Elo 0 by definition)", refs[i - 1],
                            g[0].commit);
        for (int j = 1; j < i; j++)
            if (strcmp(g[i].commit, g[j].commit) == 0)
                return cli_fail(CLI_USAGE, "--refs: %s and %s are one commit %.12s", refs[j - 1], refs[i - 1],
                                g[i].commit);
    }
    return status;
}

/* The settings every point's run shares, from the options (the run service checks them further). Exit status. */
static int shared_spec(const Opts *o, const char *engine, RunSpec *sp)
{
    if (!opts_given(o, "--base"))
        return cli_fail(CLI_USAGE, "progression new: --base REF is required");
    if (!opts_given(o, "--refs"))
        return cli_fail(CLI_USAGE, "progression new: --refs REF,REF,... is required (the commits to measure)");
    if (!opts_given(o, "--pairs"))
        return cli_fail(CLI_USAGE, "progression new: --pairs N is required");
    sp->engine = engine;
    sp->max_pairs = opts_int(o, "--pairs");
    return cli_new_run_spec(o, sp);
}

/*
 * Each point's run spec (specs[i], named into names[i]) from the shared
 * one and the resolved commits, checked by the run service: the test side
 * the commit, the base side the base's commit, each built by the builder.
 * Exit status.
 */
static int point_specs(const RunSpec *sp, const CliGitRef *g, const char **refs, const char *base, int n,
                       RunSpec *specs, char (*names)[RUN_NAME_MADE_MAX + 1])
{
    for (int i = 0; i < n; i++) {
        specs[i] = *sp;
        run_refs_name(refs[i], base, g[i + 1].subject, names[i], sizeof names[i]);
        specs[i].name = names[i];
        specs[i].test_ref = g[i + 1].commit;
        specs[i].base_ref = g[0].commit;
        RunProblem problem;
        int status = cli_run_problem(run_check(&specs[i], &problem), &problem);
        if (status != CLI_OK)
            return status;
    }
    return CLI_OK;
}

static int progression_new(const Opts *o)
{
    const char *engine = o->positional[1];
    RunSpec shared = run_spec_default(RUN_KIND_GAMES);
    int status = shared_spec(o, engine, &shared);
    if (status != CLI_OK)
        return status;
    char *list = strdup(opts_text(o, "--refs"));
    const char *refs[PROGRESSION_POINTS_MAX];
    const char *base = opts_text(o, "--base");
    char why[512];
    int n = list ? split_refs(list, refs) : -1;
    if (!list)
        status = cli_fail(CLI_FAIL, "out of memory");
    else if (n < 0)
        status = CLI_USAGE;
    else if (!rule_git_ref(base, why, sizeof why))
        status = cli_fail(CLI_USAGE, "--base: %s", why);
    StoreProgression *p = calloc(1, sizeof *p);
    StoreProgressionPoint *points = calloc(PROGRESSION_POINTS_MAX, sizeof *points);
    CliGitRef *g = calloc(PROGRESSION_POINTS_MAX + 1, sizeof *g);
    RunSpec *specs = calloc(PROGRESSION_POINTS_MAX, sizeof *specs);
    char(*names)[RUN_NAME_MADE_MAX + 1] = calloc(PROGRESSION_POINTS_MAX, sizeof *names);
    EngineRecord *e = malloc(sizeof *e);
    int64_t ids[PROGRESSION_POINTS_MAX], id = 0;
    Store *s = NULL;
    if (status == CLI_OK && (!p || !points || !g || !specs || !names || !e))
        status = cli_fail(CLI_FAIL, "out of memory");
    if (status == CLI_OK)
        status = cli_open_db(o, &s);
    /* ours has a record too (032): an unknown name is refused before any git is read */
    if (status == CLI_OK)
        status = cli_engine_load(s, "ENGINE", engine, e);
    bool ours = strcmp(engine, RUN_OUR_ENGINE) == 0;
    if (status == CLI_OK && !ours && opts_given(o, "--repo"))
        status = cli_fail(CLI_USAGE, "--repo: engine %s's refs are read from its record's repository "
                                     "(xqf-tune engine show %s)", engine, engine);
    if (status == CLI_OK)
        status = resolve_refs(s, opts_text(o, "--repo"), ours ? NULL : e, base, refs, n, g);
    if (status == CLI_OK)
        status = point_specs(&shared, g, refs, base, n, specs, names);
    if (status == CLI_OK) {
        if (opts_given(o, "--name"))
            snprintf(p->name, sizeof p->name, "%s", opts_text(o, "--name"));
        else
            snprintf(p->name, sizeof p->name, "progression %s vs %s", engine, base);
        int found = store_progression_find(s, p->name, 0, &id);
        if (found < 0)
            status = cli_fail(CLI_FAIL, "cannot read the progressions");
        else if (found)
            status = cli_fail(CLI_USAGE, "a progression named '%s' exists (progression %" PRId64 "): give another "
                                         "--name", cli_shown(p->name), id);
    }
    char actor[STORE_NAME_MAX + 1];
    cli_actor(actor, sizeof actor);
    int made = 0;
    for (; status == CLI_OK && made < n; made++) {
        RunProblem problem;
        /* one book, its notes once */
        specs[made].book_notes = made == 0 ? stderr : NULL;
        specs[made].actor = actor;
        status = cli_run_problem(run_create(s, &specs[made], &ids[made], &problem), &problem);
        if (status != CLI_OK) {
            fprintf(stderr, "xqf-tune: the run of %s was not made\n", refs[made]);
            cli_stop_made(s, ids, made);
        }
    }
    if (status == CLI_OK) {
        snprintf(p->engine, sizeof p->engine, "%s", engine);
        snprintf(p->base_ref, sizeof p->base_ref, "%s", base);
        snprintf(p->base_commit, sizeof p->base_commit, "%s", g[0].commit);
        snprintf(p->base_date, sizeof p->base_date, "%s", g[0].date);
        snprintf(p->base_subject, sizeof p->base_subject, "%s", g[0].subject);
        snprintf(p->created_by, sizeof p->created_by, "%s", actor);
        for (int i = 0; i < n; i++) {
            points[i].run = ids[i];
            snprintf(points[i].ref, sizeof points[i].ref, "%s", refs[i]);
            snprintf(points[i].commit, sizeof points[i].commit, "%s", g[i + 1].commit);
            snprintf(points[i].date, sizeof points[i].date, "%s", g[i + 1].date);
            snprintf(points[i].subject, sizeof points[i].subject, "%s", g[i + 1].subject);
        }
        int added = store_progression_add(s, p, points, n, &id);
        if (added != 1) {
            status = added == 0 ? cli_fail(CLI_USAGE, "a progression named '%s' was made meanwhile", cli_shown(p->name))
                                : cli_fail(CLI_FAIL, "cannot record the progression");
            cli_stop_made(s, ids, n);
        }
    }
    if (status == CLI_OK) {
        printf("Progression: %" PRId64 " %s\n", id, cli_shown(p->name));
        for (int i = 0; i < n; i++)
            printf("%" PRId64 " %s\n", ids[i], refs[i]);
    }
    store_destroy(&s);
    free(e);
    free(names);
    free(specs);
    free(g);
    free(points);
    free(p);
    free(list);
    return status;
}

/* The progression named by arg (its id, name, or run:ID) into *id. Exit status. */
static int progression_of(Store *s, const char *arg, int64_t *id)
{
    char *end;
    bool run = strncmp(arg, "run:", 4) == 0;
    long long v = strtoll(run ? arg + 4 : arg, &end, 10);
    bool number = (run ? arg[4] : arg[0]) != '\0' && *end == '\0' && v > 0;
    if (run && !number)
        return cli_fail(CLI_USAGE, "'%s': run:ID takes a run's id", cli_shown(arg));
    int found = number && !run ? 1 : store_progression_find(s, arg, run ? v : 0, id);
    if (number && !run)
        *id = v;
    if (found < 0)
        return cli_fail(CLI_FAIL, "cannot read the progressions");
    return found ? CLI_OK : cli_fail(CLI_USAGE, "no progression '%s' (xqf-tune progression show ID|NAME|run:ID)",
                                     cli_shown(arg));
}

static int progression_show(const Opts *o)
{
    if (o->npositional != 2)
        return cli_fail(CLI_USAGE, "progression show: give the progression (its id, name or run:ID)");
    Store *s = NULL;
    StoreProgression p;
    StoreProgressionPoint *points = NULL;
    int n = 0;
    int64_t id = 0;
    int status = cli_open_db(o, &s);
    if (status == CLI_OK)
        status = progression_of(s, o->positional[1], &id);
    int found = status == CLI_OK ? store_progression_load(s, id, &p, &points, &n) : 1;
    if (found < 0)
        status = cli_fail(CLI_FAIL, "cannot read the progression");
    else if (found == 0)
        status = cli_fail(CLI_USAGE, "no progression %" PRId64 " (xqf-tune progression show ID|NAME|run:ID)", id);
    if (status == CLI_OK) {
        printf("Progression %" PRId64 ": %s\nEngine: %s\nBase: %s (%.12s) %s %s\n", p.id, cli_shown(p.name), p.engine,
               cli_shown(p.base_ref), p.base_commit, p.base_date, cli_shown(p.base_subject));
        printf("%-12s %-16s %-6s %-9s %6s %-14s %-20s %s\n", "commit", "date", "run", "state", "games", "W/D/L",
               "Elo (95 %)", "subject");
        for (int i = 0; i < n; i++) {
            const StoreCounts *c = &points[i].counts;
            char wdl[64], elo[48];
            snprintf(wdl, sizeof wdl, "%" PRId64 "/%" PRId64 "/%" PRId64, c->wins, c->draws, c->losses);
            run_elo_text(c, elo, sizeof elo);
            printf("%-12.12s %-16s %-6" PRId64 " %-9s %6" PRId64 " %-14s %-20s %s\n", points[i].commit,
                   points[i].date, points[i].run, points[i].state, c->wins + c->draws + c->losses, wdl, elo,
                   cli_shown(points[i].subject));
        }
    }
    free(points);
    store_destroy(&s);
    return status;
}

int tune_cmd_progression(int argc, char **argv)
{
    Opts o;
    int status = cli_parse(&o, &PROGRESSION_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO)
        return status;
    const char *sub = o.npositional > 0 ? o.positional[0] : "";
    if (strcmp(sub, "new") == 0) {
        if (o.npositional != 2)
            return cli_fail(CLI_USAGE, "progression new: give the engine (xqf, ours, or xqf-tune engine list)");
        /* every point is a games run: a preset of ENGINE gives what games new would take of it */
        char **held = NULL;
        status = cli_parse_preset_of(&o, &PROGRESSION_TABLE, argc - 1, argv + 1, RUN_KIND_GAMES, o.positional[1],
                                     &held);
        if (status == CLI_GO)
            status = progression_new(&o);
        free(held);
        return status;
    }
    if (strcmp(sub, "show") == 0)
        return progression_show(&o);
    return cli_fail(CLI_USAGE, "progression: the subcommands are 'new' and 'show' (see xqf-tune progression --help)");
}

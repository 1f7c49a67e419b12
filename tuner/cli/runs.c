/*
 * runs.c - xqf-tune list, show and stop: the runs of the database as
 * text.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "log.h"
#include "run_kind.h"
#include "run_service.h"
#include "stats.h"
#include "store_games.h"
#include "store_runs.h"
#include "store_spsa.h"
#include "store_tasks.h"
#include "store_lists.h"
#include "store_web.h"

static const OptSpec LIST_OPTIONS[] = {
    { "--runs", OPT_INT, "N", "20", .imin = 1, .imax = 100000, .help = "how many of the newest runs" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable LIST_TABLE = {
    .program = "xqf-tune", .spec = LIST_OPTIONS,
    .usage = "Usage: xqf-tune list [--db CONNINFO] [--runs N]\n"
             "The newest runs, one line each.\n",
};

int tune_cmd_list(int argc, char **argv)
{
    Opts o;
    Store *s = NULL;
    StoreRun *runs = NULL;
    int status = cli_parse(&o, &LIST_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO || (status = cli_open_db(&o, &s)) != CLI_OK)
        return status;
    int n = store_list_runs(s, (int)opts_int(&o, "--runs"), &runs);
    if (n < 0)
        status = cli_fail(CLI_FAIL, "cannot read the runs");
    else
        printf("%-6s %-5s %-9s %-14s %-16s %-22s %s\n", "id", "kind", "state", "pairs", "tc", "Elo", "name");
    for (int i = 0; i < n; i++) {
        char pairs[32], tc[32], elo[48];
        snprintf(pairs, sizeof pairs, "%" PRId64 "/%" PRId64, runs[i].counts.pairs, runs[i].max_pairs);
        run_tc_text(&runs[i], tc, sizeof tc);
        run_elo_text(&runs[i].counts, elo, sizeof elo);
        StoreGameTotals data;
        StoreDataSettings set;
        if (run_kind_id(runs[i].kind) == RUN_KIND_DATA && store_game_totals(s, runs[i].id, &data) == 0)
            snprintf(elo, sizeof elo, "%" PRId64 " games stored", data.games);
        if (run_kind_id(runs[i].kind) == RUN_KIND_DATA && store_data_settings(s, runs[i].id, &set) == 1 &&
            set.depth > 0)
            snprintf(tc, sizeof tc, "depth %d", set.depth);
        char chain[32];
        cli_chain_tag(s, runs[i].id, chain, sizeof chain);
        printf("%-6" PRId64 " %-5s %-9s %-14s %-16s %-22s %s%s\n", runs[i].id, runs[i].kind, runs[i].state,
               pairs, tc, elo, cli_shown(runs[i].name), chain);
    }
    free(runs);
    store_destroy(&s);
    return status;
}

static const OptSpec LOG_OPTIONS[] = {
    { "--of", OPT_TEXT, "WHAT", NULL, .help = "only events of run, chain, net, engine, user, build or login" },
    { "--who", OPT_TEXT, "NAME", NULL, .help = "only those done by NAME" },
    { "--run", OPT_INT, "RUN", NULL, .imin = 1, .imax = INT64_MAX, .help = "only those of run RUN" },
    { "--limit", OPT_INT, "N", "50", .imin = 1, .imax = 100000, .help = "at most N, newest first" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable LOG_TABLE = {
    .program = "xqf-tune", .spec = LOG_OPTIONS,
    .usage = "Usage: xqf-tune log [--of WHAT] [--who NAME] [--run RUN] [--limit N] [--db CONNINFO]\n"
             "The events log, newest first: every action on runs, chains, nets, engines, accounts and\n"
             "builds (who, when, what), as the dashboard's /log shows it, sign-ins included.\n",
};

int tune_cmd_log(int argc, char **argv)
{
    Opts o;
    Store *s = NULL;
    int status = cli_parse(&o, &LOG_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO)
        return status;
    const char *of = opts_text(&o, "--of");
    if (of && !store_event_of_known(of))
        return cli_fail(CLI_USAGE, "--of: '%s' is not run, chain, net, engine, user, build or login", of);
    if ((status = cli_open_db(&o, &s)) != CLI_OK)
        return status;
    char run[24], limit[24];
    snprintf(run, sizeof run, "%" PRId64, opts_int(&o, "--run"));
    snprintf(limit, sizeof limit, "%" PRId64, opts_int(&o, "--limit"));
    const char *params[5] = { of, opts_text(&o, "--who"), opts_given(&o, "--run") ? run : NULL, limit, "true" };
    StoreTable *t = store_list(s, STORE_LIST_EVENTS, params);
    if (!t) {
        store_destroy(&s);
        return cli_fail(CLI_FAIL, "cannot read the events");
    }
    printf("%-7s %-19s %-20s %-6s %-6s %-12s %s\n", "id", "when (UTC)", "who", "of", "run", "action", "detail");
    int id = store_table_column(t, "#"), at = store_table_column(t, "When (UTC)"), who = store_table_column(t, "Who"),
        kind = store_table_column(t, "Of"), action = store_table_column(t, "Action"),
        detail = store_table_column(t, "Detail"), of_run = store_table_column(t, "_run");
    for (int r = 0; r < store_table_rows(t); r++)
        printf("%-7s %-19s %-20s %-6s %-6s %-12s %s\n", store_table_cell(t, r, id), store_table_cell(t, r, at),
               cli_shown(store_table_cell(t, r, who)), store_table_cell(t, r, kind),
               store_table_null(t, r, of_run) ? "-" : store_table_cell(t, r, of_run),
               cli_shown(store_table_cell(t, r, action)), cli_shown(store_table_cell(t, r, detail)));
    store_table_free(&t);
    store_destroy(&s);
    return CLI_OK;
}

/* An SPSA run's theta, one line per parameter. Exit status. */
static int show_spsa(Store *s, int64_t id)
{
    StoreSpsa *st = malloc(sizeof *st);
    int status = CLI_OK;
    if (!st || store_spsa_load(s, id, st) != 1)
        status = cli_fail(CLI_FAIL, "cannot read the SPSA state of run %" PRId64, id);
    else {
        printf("Iterations: %" PRId64 "/%" PRId64 "\n", st->iter, st->iterations);
        printf("%-24s %10s %10s %8s %8s\n", "parameter", "theta", "start", "min", "max");
        for (int i = 0; i < st->count; i++)
            printf("%-24s %10.3f %10g %8g %8g\n", st->params[i].name, st->params[i].theta, st->params[i].start,
                   st->params[i].min, st->params[i].max);
    }
    free(st);
    return status;
}

/* The run's quarantined tasks, with the workers' reasons (escaped: they came from the network). Exit status. */
static int show_quarantined(Store *s, int64_t id)
{
    StoreQuarantined *q;
    int n = store_quarantined(s, id, &q);
    if (n < 0)
        return cli_fail(CLI_FAIL, "cannot read the quarantined tasks of run %" PRId64, id);
    printf("Quarantined: %d tasks (refused by workers too many times; not played)\n", n);
    for (int i = 0; i < n; i++) {
        char shown[sizeof q[i].reasons * 2];
        xqf_escape(shown, sizeof shown, q[i].reasons);
        printf("  task %" PRId64 " (pairs %" PRId64 "-%" PRId64 "), refused %" PRId64 " times: %s\n", q[i].task,
               q[i].first_pair, q[i].first_pair + q[i].pairs - 1, q[i].refusals, shown);
    }
    free(q);
    return CLI_OK;
}

/* Prints one run (with diff, a test's whole diff); *active tells whether it still runs. Exit status. */
static int show_run(Store *s, int64_t id, bool diff, bool *active)
{
    StoreRun r;
    int status = cli_load_run(s, id, &r);
    *active = false;
    if (status != CLI_OK)
        return status;
    const StoreCounts *c = &r.counts;
    char tc[32], elo[48];
    run_tc_text(&r, tc, sizeof tc);
    run_elo_text(c, elo, sizeof elo);
    printf("Run: %" PRId64 " (%s) %s%s%s\n", r.id, r.kind, r.state, r.verdict[0] ? ": " : "", cli_shown(r.verdict));
    if (r.name[0])
        printf("Name: %s\n", cli_shown(r.name));
    printf("Time control: %s, book %s, %d pairs per task\n", tc, cli_shown(r.book_name), r.pairs_per_task);
    char threads[256], book[512];
    if (run_book_text(s, &r, book, sizeof book) != 0)
        return cli_fail(CLI_FAIL, "cannot read run %" PRId64 "'s book", r.id);
    printf("Book: %s\n", cli_shown(book));
    if (run_threads_text(s, &r, threads, sizeof threads) != 0)
        return cli_fail(CLI_FAIL, "cannot read the workers");
    printf("Threads: %s\n", threads);
    /* the settings run_settings.def shows as they are (priority, seed); the rest are said in sentences here */
    RunSettingShown shown[RUN_SETTINGS_SHOWN_MAX];
    for (int i = 0, n = run_settings_shown(&r, shown); i < n; i++)
        printf("%s: %s\n", shown[i].label, shown[i].text);
    if (strcmp(r.engine, RUN_OUR_ENGINE) != 0)
        printf("Engine: %s (builds of its refs, xqf-tune engine show %s)\n", r.engine, r.engine);
    /* a run of two engines (041): the second player's, the base side */
    if (r.base_engine[0] && strcmp(r.base_engine, r.engine) != 0)
        printf("Base engine: %s (xqf-tune engine show %s)\n", r.base_engine, r.base_engine);
    /* each side's evaluation, when the run names one (025_nets.sql) */
    for (int i = 0; (r.net0[0] || r.net1[0]) && i < 2; i++) {
        const char *sha = i ? r.net1 : r.net0, *name = i ? r.net_name1 : r.net_name0;
        if (strcmp(sha, "none") == 0)
            printf("Net (%s): none (hand-crafted evaluation)\n", i ? r.name1 : r.name0);
        else if (sha[0])
            printf("Net (%s): %s (SHA-256 %s)\n", i ? r.name1 : r.name0, cli_shown(name), sha);
        else
            printf("Net (%s): the engine's own evaluation\n", i ? r.name1 : r.name0);
    }
    printf("Created: %s UTC%s%s\n", r.created, r.finished[0] ? ", finished " : "", r.finished);
    printf("Pairs: %" PRId64 "/%" PRId64 "\n", c->pairs, r.max_pairs);
    printf("Games: %" PRId64 "\n", 2 * c->pairs);
    printf("W/D/L: %" PRId64 "/%" PRId64 "/%" PRId64 "\n", c->wins, c->draws, c->losses);
    printf("Pentanomial [LL, LD, DD+WL, WD, WW]: [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
           "]\n", c->penta[0], c->penta[1], c->penta[2], c->penta[3], c->penta[4]);
    printf("Elo: %s\n", elo);
    RunSprtState sprt;
    if (run_sprt_state(&r, c, &sprt))
        printf("LLR: %.2f [%.2f, %.2f] (elo0 %g, elo1 %g)\n", sprt.llr, sprt.lower, sprt.upper, r.elo0, r.elo1);
    if ((status = cli_show_steer(s, &r)) != CLI_OK)
        return status;
    if ((status = cli_show_builds(s, id)) != CLI_OK)
        return status;
    if ((status = cli_show_changes(s, id, diff)) != CLI_OK)
        return status;
    if (run_kind_is_spsa(r.kind) && (status = show_spsa(s, id)) != CLI_OK)
        return status;
    if (r.quarantined > 0 && (status = show_quarantined(s, id)) != CLI_OK)
        return status;
    if ((status = cli_show_workers(s, id)) != CLI_OK)
        return status;
    if (run_kind_id(r.kind) == RUN_KIND_DATA && (status = cli_data_progress(s, &r)) != CLI_OK)
        return status;
    double minutes = r.elapsed_s / 60;
    *active = strcmp(r.state, "active") == 0;
    if (c->pairs > 0 && minutes > 0) {
        double rate = (double)c->pairs / minutes;
        printf("Rate: %.1f pairs/min", rate);
        if (*active)
            printf(", ETA %.0f min (at most)", (double)(r.max_pairs - c->pairs) / rate);
        printf("\n");
    }
    return CLI_OK;
}

static const OptSpec SHOW_OPTIONS[] = {
    { "--watch", OPT_INT, "SECONDS", NULL, .imin = 1, .imax = 86400, .help = "repeat every SECONDS until the run ends" },
    { "--diff", OPT_FLAG, NULL, NULL, .help = "a test of git refs: its diff too" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable SHOW_TABLE = {
    .program = "xqf-tune", .spec = SHOW_OPTIONS, .max_positional = 1,
    .usage = "Usage: xqf-tune show RUN [--diff] [--db CONNINFO] [--watch SECONDS]\n"
             "A run's results, Elo, LLR (SPRT) or theta (SPSA), rate and ETA; a test of\n"
             "git refs its refs and the commits between them (--diff: and its diff).\n",
};

int tune_cmd_show(int argc, char **argv)
{
    Opts o;
    Store *s = NULL;
    int64_t id;
    int status = cli_parse(&o, &SHOW_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO || (status = cli_run_id(&o, &id)) != CLI_OK || (status = cli_open_db(&o, &s)) != CLI_OK)
        return status;
    int64_t watch = opts_int(&o, "--watch");
    bool active;
    while ((status = show_run(s, id, opts_given(&o, "--diff"), &active)) == CLI_OK && watch > 0 && active) {
        fflush(stdout);
        sleep((unsigned)watch);
        printf("\n");
    }
    store_destroy(&s);
    return status;
}

static const OptSpec PLAIN_VERB_OPTIONS[] = { CLI_DB_OPTION, OPTS_END };

int tune_cmd_plain_verb(int argc, char **argv)
{
    const RunVerbInfo *v = run_verb_named(argv[0]);
    if (!v || !v->plain)
        return cli_fail(CLI_USAGE, "%s is no verb of a run", argv[0]);
    char usage[2048];
    snprintf(usage, sizeof usage, "Usage: xqf-tune %s RUN [--db CONNINFO]\n%s", v->name, v->text);
    OptTable table = { .program = "xqf-tune", .spec = PLAIN_VERB_OPTIONS, .max_positional = 1, .usage = usage };
    Opts o;
    Store *s = NULL;
    int64_t id;
    int status = cli_parse(&o, &table, argc - 1, argv + 1);
    if (status != CLI_GO || (status = cli_run_id(&o, &id)) != CLI_OK || (status = cli_open_db(&o, &s)) != CLI_OK)
        return status;
    char name[STORE_NAME_MAX + 1];
    RunActor actor = cli_run_actor(name, sizeof name);
    RunProblem problem;
    status = cli_verb_said(run_plain(s, &actor, v->id, id, &problem), v->name, &problem);
    store_destroy(&s);
    return status;
}

static const OptSpec APPROVE_OPTIONS[] = {
    { "--test-commit", OPT_TEXT, "SHA", NULL, .help = "the commit the test side's ref was pinned to (show lists it)" },
    { "--base-commit", OPT_TEXT, "SHA", NULL, .help = "the commit the base side's ref was pinned to" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable APPROVE_TABLE = {
    .program = "xqf-tune", .spec = APPROVE_OPTIONS, .max_positional = 1,
    .usage = "Usage: xqf-tune approve RUN [--test-commit SHA] [--base-commit SHA] [--db CONNINFO]\n"
             "Approves a run a tester made on the dashboard (state pending), as its Approve\n"
             "button does: a test of git refs is approved for exactly the commits its refs\n"
             "were pinned to (each side's, as the builder read them), then waits for their\n"
             "builds; a run without refs starts at once.  A run that is not pending, or\n"
             "other commits, are refused (exit 2).  Recorded in the run's history.\n",
};

int tune_cmd_approve(int argc, char **argv)
{
    Opts o;
    Store *s = NULL;
    int64_t id;
    int status = cli_parse(&o, &APPROVE_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO || (status = cli_run_id(&o, &id)) != CLI_OK || (status = cli_open_db(&o, &s)) != CLI_OK)
        return status;
    char name[STORE_NAME_MAX + 1];
    RunActor actor = cli_run_actor(name, sizeof name);
    RunProblem problem;
    RunStatus st = run_approve(s, &actor, id, opts_text(&o, "--test-commit"), opts_text(&o, "--base-commit"),
                               &problem);
    status = cli_verb_said(st, "approve", &problem);
    store_destroy(&s);
    return status;
}

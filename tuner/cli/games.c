/*
 * games.c - xqf-tune pgn: a run's stored games (every run kind keeps them,
 * 014_games.sql) as PGN with the tags xqf-match writes (worker/game/pgn.h);
 * the trust in a run's workers (show's section) and xqf-tune purge.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "gamepack.h"
#include "log.h"
#include "pgn.h"
#include "residual.h"
#include "run_kind.h"
#include "stats.h"
#include "store_games.h"
#include "store_runs.h"
#include "store_tasks.h"

static const OptSpec PGN_OPTIONS[] = {
    { "--task", OPT_INT, "N", NULL, .imin = 1, .imax = INT64_MAX, .help = "only the games of task N of the run" },
    { "--worker", OPT_TEXT, "NAME", NULL, .help = "only the games the worker NAME played" },
    { "--out", OPT_TEXT, "FILE", NULL, .help = "write the file here (default: stdout)" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable PGN_TABLE = {
    .program = "xqf-tune", .spec = PGN_OPTIONS, .max_positional = 1,
    .usage = "Usage: xqf-tune pgn RUN [--task N] [--worker NAME] [--out FILE] [--db CONNINFO]\n"
             "The run's stored games as PGN (Xiangqi tags as xqf-match writes them), in the\n"
             "run's game order: game 2k is pair k with the first player (test, theta+) as Red,\n"
             "game 2k+1 its colours reversed.  Moves carry their score and depth when the run\n"
             "was created with --keep-scores (data runs: their score).\n",
};

/* Resolves --task and --worker against run id: CLI_OK, CLI_USAGE (unknown) or CLI_FAIL. */
static int pgn_filters(const Opts *o, Store *s, int64_t id, int64_t *task, int64_t *worker)
{
    *task = opts_given(o, "--task") ? opts_int(o, "--task") : 0;
    *worker = 0;
    int rc = *task ? store_task_of_run(s, *task, id) : 1;
    if (rc < 0)
        return cli_fail(CLI_FAIL, "cannot read the tasks of run %" PRId64, id);
    if (rc == 0)
        return cli_fail(CLI_USAGE, "--task: run %" PRId64 " has no task %" PRId64, id, *task);
    const char *name = opts_text(o, "--worker");
    rc = name ? store_worker_id(s, name, worker) : 1;
    if (rc < 0)
        return cli_fail(CLI_FAIL, "cannot read the workers");
    if (rc == 0)
        return cli_fail(CLI_USAGE, "--worker: no worker '%s'", name);
    return CLI_OK;
}

int tune_cmd_pgn(int argc, char **argv)
{
    Opts o;
    Store *s = NULL;
    StoreRun r;
    int64_t id, task, worker;
    int status = cli_parse(&o, &PGN_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO || (status = cli_run_id(&o, &id)) != CLI_OK || (status = cli_open_db(&o, &s)) != CLI_OK)
        return status;
    int found = store_load_run(s, id, &r, false);
    if (found <= 0)
        status = found < 0 ? cli_fail(CLI_FAIL, "cannot read run %" PRId64, id) : cli_fail(CLI_USAGE, "no run %" PRId64, id);
    if (status == CLI_OK)
        status = pgn_filters(&o, s, id, &task, &worker);
    const char *path = opts_text(&o, "--out");
    FILE *out = NULL;
    char why[512];
    int64_t written = 0;
    if (status == CLI_OK && !(out = path ? fopen(path, "w") : stdout))
        status = cli_fail(CLI_FAIL, "--out: cannot write '%s': %s", path, strerror(errno));
    if (status == CLI_OK && (status = run_pgn_write(s, &r, task, worker, 0, out, why, sizeof why, &written)) != CLI_OK)
        cli_fail(status, "%s", why);
    if (out && out != stdout && fclose(out) != 0 && status == CLI_OK)
        status = cli_fail(CLI_FAIL, "cannot write '%s'", path);
    if (status != CLI_OK && out && out != stdout)
        unlink(path);
    else if (status == CLI_OK && path)
        fprintf(stderr, "%" PRId64 " games written to %s\n", written, path);
    store_destroy(&s);
    return status;
}

/* ---- trust in workers: show's section and purge ---------------------------------- */

int cli_show_workers(Store *s, int64_t id)
{
    StoreWorkerTrust *w;
    StoreReplayTotals rt;
    int n = store_run_workers(s, id, &w);
    if (n < 0 || store_replay_totals(s, id, &rt) != 1) {
        free(n > 0 ? w : NULL);
        return cli_fail(CLI_FAIL, "cannot read the workers of run %" PRId64, id);
    }
    if (rt.fixed_nodes && rt.share > 0) {
        int64_t judged = rt.agree + rt.mismatch;
        printf("Replay audit: %g %% of the pairs played again by a second worker: %" PRId64 " judged, ", 100 * rt.share,
               judged);
        if (judged > 0)
            printf("%.1f %% agree, %" PRId64 " mismatches", 100.0 * (double)rt.agree / (double)judged, rt.mismatch);
        else
            printf("none yet");
        printf(", %" PRId64 " open\n", rt.open);
    }
    if (n == 0)
        return CLI_OK;
    printf("Workers: %d (residual: Fishtest's chi-square z of a worker's pairs against the others', flagged above %.0f)\n",
           n, XQF_RESIDUAL_FLAG);
    printf("  %-24s %8s %8s %8s %8s %8s %8s\n", "worker", "games", "crashes", "time", "illegal", "discon.", "residual");
    for (int i = 0; i < n; i++) {
        char name[sizeof w[i].name * 4], residual[32];
        xqf_escape(name, sizeof name, w[i].name);   /* came from the network */
        if (isnan(w[i].residual))
            snprintf(residual, sizeof residual, "-");
        else
            snprintf(residual, sizeof residual, "%.2f", w[i].residual);
        printf("  %-24s %8" PRId64 " %8" PRId64 " %8" PRId64 " %8" PRId64 " %8" PRId64 " %8s%s\n", name, w[i].games,
               w[i].crashes, w[i].time_losses, w[i].illegal_moves, w[i].disconnects, residual,
               w[i].flagged ? "  FLAGGED" : "");
        if (w[i].mismatches > 0) {
            char pairs[sizeof w[i].mismatched * 4];
            xqf_escape(pairs, sizeof pairs, w[i].mismatched);
            printf("    replays differ: %" PRId64 " of %" PRId64 ": %s\n", w[i].mismatches, w[i].replays, pairs);
        }
        if (w[i].search_verdict[0])
            printf("    search audit: %" PRId64 " of %" PRId64 " positions agree: %s\n", w[i].search_agree,
                   w[i].search_positions, w[i].search_verdict);
    }
    free(w);
    return CLI_OK;
}

static const OptSpec PURGE_OPTIONS[] = {
    { "--worker", OPT_TEXT, "NAME", NULL, .help = "the worker whose results are taken out, required" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable PURGE_TABLE = {
    .program = "xqf-tune", .spec = PURGE_OPTIONS, .max_positional = 1,
    .usage = "Usage: xqf-tune purge RUN --worker NAME [--db CONNINFO]\n"
             "Takes a worker's results out of an SPRT: its pairs out of the counts, its games\n"
             "deleted, the LLR computed again (a run finished at a bound the LLR no longer\n"
             "reaches is active again), the purge in the run's history.  Its pairs are not\n"
             "played again: the run goes on with new ones.  SPSA runs are refused (their\n"
             "updates cannot be undone).\n",
};

int tune_cmd_purge(int argc, char **argv)
{
    Opts o;
    Store *s = NULL;
    int64_t id;
    int status = cli_parse(&o, &PURGE_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO || (status = cli_run_id(&o, &id)) != CLI_OK)
        return status;
    const char *name = opts_text(&o, "--worker");
    if (!name)
        return cli_fail(CLI_USAGE, "purge: --worker NAME is required");
    if ((status = cli_open_db(&o, &s)) != CLI_OK)
        return status;
    char actor_name[STORE_NAME_MAX + 1];
    RunActor actor = cli_run_actor(actor_name, sizeof actor_name);
    RunProblem problem;
    status = cli_verb_said(run_purge(s, &actor, id, name, &problem), "purge", &problem);
    store_destroy(&s);
    return status;
}

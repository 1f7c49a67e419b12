/*
 * games.c - xqf-tune pgn: a run's stored games (every run kind keeps them,
 * 014_games.sql) as PGN with the tags xqf-match writes (worker/pgn.h);
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

typedef struct {
    FILE *out;
    const StoreRun *run;
    GameRecord g;
    int64_t written, bad_game, max_games;
    char why[256];
} PgnPass;

void cli_pgn_players(const StoreRun *r, const char **first, const char **second)
{
    bool two = r->engine[0] && r->base_engine[0] && strcmp(r->engine, r->base_engine) != 0;
    *first = two ? r->engine : r->name0;
    *second = two ? r->base_engine : r->name1;
}

static int write_game(void *ctx, int64_t game, const uint8_t *rec, size_t len)
{
    PgnPass *p = ctx;
    if (p->max_games > 0 && p->written >= p->max_games)
        return 2;
    if (gamepack_read(rec, len, &p->g, p->why, sizeof p->why) != 0) {
        p->bad_game = game;
        return 1;
    }
    const StoreRun *r = p->run;
    char event[STORE_TEXT_MAX + 64], tc[64];
    snprintf(event, sizeof event, "xqf run %" PRId64 " (%s)%s%s", r->id, r->kind, r->name[0] ? " " : "", r->name);
    snprintf(tc, sizeof tc, "%g+%g", (double)r->base_ms / 1000, (double)r->inc_ms / 1000);
    if (p->g.result != RESULT_NONE) {
        const char *who = p->g.result == RESULT_RED_WINS ? "Red wins" : p->g.result == RESULT_BLACK_WINS ? "Black wins" : "Draw";
        snprintf(p->g.detail, sizeof p->g.detail, "%s by %s", who, game_reason_text(p->g.reason));
    }
    bool first_red = game % 2 == 0;
    const char *name0, *name1;
    cli_pgn_players(r, &name0, &name1);
    /* a side's net by its name (its SHA-256 is in show); "" (the engine's own evaluation): no tag */
    const char *net0 = r->net0[0] ? r->net_name0 : NULL, *net1 = r->net1[0] ? r->net_name1 : NULL;
    PgnTags tags = { .event = event, .red = first_red ? name0 : name1, .black = first_red ? name1 : name0,
                     .round = (int)(game + 1), .time_control = r->nodes > 0 ? NULL : tc, .nodes = (uint64_t)r->nodes,
                     .red_net = first_red ? net0 : net1, .black_net = first_red ? net1 : net0,
                     .threads = r->threads > 0 ? r->threads : 1, .book = r->book_name[0] ? r->book_name : NULL };
    if (pgn_write(p->out, &p->g, &tags) != 0) {
        snprintf(p->why, sizeof p->why, "its record does not replay from its FEN, or a write error");
        p->bad_game = game;
        return 1;
    }
    p->written++;
    return 0;
}

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

int cli_pgn_write(Store *s, const StoreRun *r, int64_t task, int64_t worker, int64_t max_games, FILE *out,
                  char *why, size_t size, int64_t *written)
{
    PgnPass p = { .out = out, .run = r, .bad_game = -1, .max_games = max_games };
    game_record_init(&p.g);
    int rc = store_each_game(s, r->id, task, worker, write_game, &p), status = CLI_OK;
    if (rc < 0) {
        snprintf(why, size, "cannot read the games of run %" PRId64, r->id);
        status = CLI_FAIL;
    } else if (rc == 2) {
        snprintf(why, size, "more than %" PRId64 " games", max_games);
        status = CLI_USAGE;
    } else if (rc > 0) {
        snprintf(why, size, "run %" PRId64 ": game %" PRId64 ": %s", r->id, p.bad_game, p.why);
        status = CLI_FAIL;
    }
    *written = p.written;
    game_record_free(&p.g);
    return status;
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
    if (status == CLI_OK && (status = cli_pgn_write(s, &r, task, worker, 0, out, why, sizeof why, &written)) != CLI_OK)
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

/* The purge in a transaction: worker's results out of SPRT run r; msg what was done or why not. Exit status. */
static int purge(Store *s, const StoreRun *r, int64_t worker, const char *name, const char *actor, char *msg,
                 size_t size)
{
    int64_t pairs, games;
    StoreRun after;
    if (store_begin(s) != 0 || store_purge_worker(s, r->id, worker, &pairs, &games) != 0) {
        store_rollback(s);
        snprintf(msg, size, "cannot purge run %" PRId64, r->id);
        return CLI_FAIL;
    }
    if (pairs == 0 && games == 0) {
        store_rollback(s);
        snprintf(msg, size, "worker '%s' has no results in run %" PRId64, name, r->id);
        return CLI_USAGE;
    }
    if (store_load_run(s, r->id, &after, false) != 1) {
        store_rollback(s);
        snprintf(msg, size, "cannot read run %" PRId64, r->id);
        return CLI_FAIL;
    }
    double before = 0, llr = NAN, lo, hi;
    if (r->counts.pairs == 0 || xqf_llr_penta(r->counts.penta, r->elo0, r->elo1, &before) != XQF_STATS_OK)
        before = 0;
    bool bounds = xqf_sprt_bounds(after.alpha, after.beta, &lo, &hi) == XQF_STATS_OK;
    if (after.counts.pairs > 0 && xqf_llr_penta(after.counts.penta, after.elo0, after.elo1, &llr) != XQF_STATS_OK)
        llr = NAN;
    bool at_bound = strncmp(after.verdict, "H0", 2) == 0 || strncmp(after.verdict, "H1", 2) == 0;
    bool reopen = strcmp(after.state, "finished") == 0 && at_bound && bounds && after.next_pair < after.max_pairs &&
                  !(llr >= hi || llr <= lo);
    char detail[STORE_TEXT_MAX];
    snprintf(detail, sizeof detail, "worker %s: %" PRId64 " pairs, %" PRId64 " games taken out; LLR %.2f -> %.2f%s", name,
             pairs, games, before, isnan(llr) ? 0.0 : llr, reopen ? "; active again" : "");
    if (store_purge_done(s, r->id, llr, reopen, actor, detail) != 0 || store_commit(s) != 0) {
        store_rollback(s);
        snprintf(msg, size, "cannot purge run %" PRId64, r->id);
        return CLI_FAIL;
    }
    snprintf(msg, size, "run %" PRId64 ": %s", r->id, detail);
    return CLI_OK;
}

int cli_purge(Store *s, int64_t id, const char *name, const char *actor, char *msg, size_t size)
{
    StoreRun r;
    int64_t worker;
    int found = store_load_run(s, id, &r, false);
    if (found <= 0) {
        snprintf(msg, size, found < 0 ? "cannot read run %" PRId64 : "no run %" PRId64, id);
        return found < 0 ? CLI_FAIL : CLI_USAGE;
    }
    if (run_kind_is_spsa(r.kind)) {
        snprintf(msg, size, "run %" PRId64 " is an SPSA run: its updates of theta cannot be undone, so its results "
                 "cannot be purged", id);
        return CLI_USAGE;
    }
    if (!run_kind_is_sprt(r.kind)) {
        snprintf(msg, size, "run %" PRId64 " is a %s run: only an SPRT's results can be purged", id, r.kind);
        return CLI_USAGE;
    }
    if ((found = store_worker_id(s, name, &worker)) <= 0) {
        snprintf(msg, size, found < 0 ? "cannot read the workers" : "no worker '%s'", name);
        return found < 0 ? CLI_FAIL : CLI_USAGE;
    }
    return purge(s, &r, worker, name, actor, msg, size);
}

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
    char msg[STORE_TEXT_MAX + 64];
    status = cli_purge(s, id, name, "xqf-tune", msg, sizeof msg);
    if (status == CLI_OK)
        printf("%s\n", msg);
    else
        cli_fail(status, "purge: %s", msg);
    store_destroy(&s);
    return status;
}

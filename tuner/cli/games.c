/*
 * games.c - xqf-tune pgn: a run's stored games (every run kind keeps them,
 * 014_games.sql) as PGN with the tags xqf-match writes (worker/pgn.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "gamepack.h"
#include "pgn.h"

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
    int64_t written, bad_game;
    char why[256];
} PgnPass;

static int write_game(void *ctx, int64_t game, const uint8_t *rec, size_t len)
{
    PgnPass *p = ctx;
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
    PgnTags tags = { .event = event, .red = first_red ? r->name0 : r->name1, .black = first_red ? r->name1 : r->name0,
                     .round = (int)(game + 1), .time_control = r->nodes > 0 ? NULL : tc, .nodes = (uint64_t)r->nodes };
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
    PgnPass p = { .run = &r, .bad_game = -1 };
    game_record_init(&p.g);
    if (status == CLI_OK && !(p.out = path ? fopen(path, "w") : stdout))
        status = cli_fail(CLI_FAIL, "--out: cannot write '%s': %s", path, strerror(errno));
    int rc = status == CLI_OK ? store_each_game(s, id, task, worker, write_game, &p) : 0;
    if (rc < 0)
        status = cli_fail(CLI_FAIL, "cannot read the games of run %" PRId64, id);
    else if (rc > 0)
        status = cli_fail(CLI_FAIL, "run %" PRId64 ": game %" PRId64 ": %s", id, p.bad_game, p.why);
    if (p.out && p.out != stdout && fclose(p.out) != 0 && status == CLI_OK)
        status = cli_fail(CLI_FAIL, "cannot write '%s'", path);
    if (status != CLI_OK && p.out && p.out != stdout)
        unlink(path);
    else if (status == CLI_OK && path)
        fprintf(stderr, "%" PRId64 " games written to %s\n", p.written, path);
    game_record_free(&p.g);
    store_destroy(&s);
    return status;
}

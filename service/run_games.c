/*
 * run_games.c - a run's stored games as PGN (worker/game/pgn.h, the tags
 * xqf-match writes) and the purge of a worker's results from an SPRT
 * (run_verbs.h): xqf-tune pgn and purge, xqf-web's /runs/ID/pgn and its
 * purge action.
 */
#include "run_view.h"
#include "run_verbs.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gamepack.h"
#include "pgn.h"
#include "run_kind.h"
#include "sprt_calc.h"
#include "store_games.h"
#include "store_tasks.h"

typedef struct {
    FILE *out;
    const StoreRun *run;
    GameRecord g;
    int64_t written, bad_game, max_games;
    char why[256];
} PgnPass;

void run_pgn_players(const StoreRun *r, const char **first, const char **second)
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
    run_pgn_players(r, &name0, &name1);
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

RunStatus run_pgn_write(Store *s, const StoreRun *r, int64_t task, int64_t worker, int64_t max_games, FILE *out,
                        char *why, size_t size, int64_t *written)
{
    PgnPass p = { .out = out, .run = r, .bad_game = -1, .max_games = max_games };
    game_record_init(&p.g);
    int rc = store_each_game(s, r->id, task, worker, write_game, &p);
    RunStatus status = RUN_OK;
    if (rc < 0) {
        snprintf(why, size, "cannot read the games of run %" PRId64, r->id);
        status = RUN_FAILED;
    } else if (rc == 2) {
        snprintf(why, size, "more than %" PRId64 " games", max_games);
        status = RUN_BAD;
    } else if (rc > 0) {
        snprintf(why, size, "run %" PRId64 ": game %" PRId64 ": %s", r->id, p.bad_game, p.why);
        status = RUN_FAILED;
    }
    *written = p.written;
    game_record_free(&p.g);
    return status;
}

/* The purge in a transaction: worker's results out of SPRT run r; *problem what was done or why not. */
static RunStatus purge(Store *s, const StoreRun *r, int64_t worker, const char *name, const char *actor,
                       RunProblem *problem)
{
    int64_t pairs, games;
    StoreRun after;
    if (store_begin(s) != 0 || store_purge_worker(s, r->id, worker, &pairs, &games) != 0) {
        store_rollback(s);
        return run_say(problem, RUN_FAILED, "", "cannot purge run %" PRId64, r->id);
    }
    if (pairs == 0 && games == 0) {
        store_rollback(s);
        return run_say(problem, RUN_BAD, "worker", "worker '%s' has no results in run %" PRId64, name, r->id);
    }
    if (store_load_run(s, r->id, &after, false) != 1) {
        store_rollback(s);
        return run_say(problem, RUN_FAILED, "", "cannot read run %" PRId64, r->id);
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
        return run_say(problem, RUN_FAILED, "", "cannot purge run %" PRId64, r->id);
    }
    return run_say(problem, RUN_OK, "", "run %" PRId64 ": %s", r->id, detail);
}

RunStatus run_purge(Store *s, const RunActor *actor, int64_t id, const char *name, RunProblem *problem)
{
    StoreRun r;
    int64_t worker;
    RunStatus st = run_admit(s, actor, RUN_VERB_PURGE, id, problem);
    if (st != RUN_OK)
        return st;
    if (!name || !*name)
        return run_say(problem, RUN_BAD, "worker", "give the name of the worker whose results to purge");
    int found = store_load_run(s, id, &r, false);
    if (found <= 0)
        return found < 0 ? run_say(problem, RUN_FAILED, "", "cannot read run %" PRId64, id)
                         : run_say(problem, RUN_BAD, RUN_FIELD_RUN, "no run %" PRId64, id);
    if (run_kind_is_spsa(r.kind))
        return run_say(problem, RUN_BAD, RUN_FIELD_STATE, "run %" PRId64 " is an SPSA run: its updates of theta "
                       "cannot be undone, so its results cannot be purged", id);
    if (!run_kind_is_sprt(r.kind))
        return run_say(problem, RUN_BAD, RUN_FIELD_STATE, "run %" PRId64 " is a %s run: only an SPRT's results can "
                       "be purged", id, r.kind);
    if ((found = store_worker_id(s, name, &worker)) <= 0)
        return found < 0 ? run_say(problem, RUN_FAILED, "", "cannot read the workers")
                         : run_say(problem, RUN_BAD, "worker", "no worker '%s'", name);
    return purge(s, &r, worker, name, actor->name, problem);
}

#include "status.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "run_kind.h"
#include "sched.h"
#include "stats.h"
#include "store_builds.h"
#include "store_games.h"
#include "store_runs.h"
#include "store_tasks.h"


static void run_line(const StoreRun *r, char *out, size_t size)
{
    const StoreCounts *c = &r->counts;
    int n = snprintf(out, size, "run %lld %s %s prio %d pairs %lld/%lld games %lld W/D/L %lld/%lld/%lld "
                     "penta %lld,%lld,%lld,%lld,%lld leased %lld",
                     (long long)r->id, r->kind, r->state, r->priority, (long long)c->pairs,
                     (long long)r->max_pairs, (long long)(2 * c->pairs), (long long)c->wins,
                     (long long)c->draws, (long long)c->losses, (long long)c->penta[0],
                     (long long)c->penta[1], (long long)c->penta[2], (long long)c->penta[3],
                     (long long)c->penta[4], (long long)r->leased);
    xqf_elo e;
    if (c->pairs > 0 && xqf_elo_penta(c->penta, &e) == XQF_STATS_OK && n > 0 && (size_t)n < size)
        n += snprintf(out + n, size - (size_t)n, " Elo %.1f +/- %.1f", e.elo, e.elo_ci95);
    double lo, hi;
    if (run_kind_is_sprt(r->kind) && n > 0 && (size_t)n < size &&
        xqf_sprt_bounds(r->alpha, r->beta, &lo, &hi) == XQF_STATS_OK) {
        const char *verdict;
        double llr = sched_sprt_llr(r, &verdict);
        n += snprintf(out + n, size - (size_t)n, " LLR %.2f [%.2f, %.2f] (elo0 %g elo1 %g)",
                      isnan(llr) ? 0.0 : llr, lo, hi, r->elo0, r->elo1);
    }
    if (run_kind_is_spsa(r->kind) && n > 0 && (size_t)n < size)
        n += snprintf(out + n, size - (size_t)n, " iter %lld/%lld", (long long)r->iter, (long long)r->max_pairs);
    if (r->quarantined > 0 && n > 0 && (size_t)n < size)
        n += snprintf(out + n, size - (size_t)n, " QUARANTINED %lld tasks (xqf-tune show %lld)",
                      (long long)r->quarantined, (long long)r->id);
    if (r->verdict[0] && n > 0 && (size_t)n < size)
        snprintf(out + n, size - (size_t)n, " verdict: %s", r->verdict);
}

/* One line per worker of run (its trust: 014_games.sql), after the run's, while rows are left. 0 or -1. */
static int trust_lines(Store *store, int64_t run, XqfStrs *runs)
{
    StoreWorkerTrust *w;
    int n = store_run_workers(store, run, &w);
    if (n < 0)
        return -1;
    char line[XQF_TEXT_MAX + 1], shown[XQF_TEXT_MAX + 1], residual[32];
    int rc = 0;
    StoreReplayTotals rt;
    if (store_replay_totals(store, run, &rt) != 1)
        rc = -1;
    else if (rt.agree + rt.mismatch + rt.open > 0) {
        snprintf(line, sizeof line, "  run %lld replay audit: %lld judged, %lld agree, %lld mismatches, %lld open",
                 (long long)run, (long long)(rt.agree + rt.mismatch), (long long)rt.agree, (long long)rt.mismatch,
                 (long long)rt.open);
        rc = xqf_strs_push(runs, line);
    }
    for (int i = 0; i < n && rc == 0 && runs->count < XQF_STATUS_ROWS; i++) {
        if (isnan(w[i].residual))
            snprintf(residual, sizeof residual, "-");
        else
            snprintf(residual, sizeof residual, "%.2f", w[i].residual);
        snprintf(line, sizeof line, "  run %lld worker %s games %lld crashes %lld time losses %lld illegal %lld "
                 "disconnects %lld residual %s replays %lld mismatches %lld%s%.120s%s", (long long)run, w[i].name,
                 (long long)w[i].games, (long long)w[i].crashes, (long long)w[i].time_losses,
                 (long long)w[i].illegal_moves, (long long)w[i].disconnects, residual, (long long)w[i].replays,
                 (long long)w[i].mismatches, w[i].mismatches ? " (" : "", w[i].mismatched,
                 w[i].mismatches ? ")" : "");
        if (w[i].flagged)
            snprintf(line + strlen(line), sizeof line - strlen(line), " FLAGGED");
        xqf_escape(shown, sizeof shown, line);   /* the name came from the network */
        rc = xqf_strs_push(runs, shown);
    }
    free(w);
    return rc;
}

int status_lines(Store *store, int max_runs, XqfStrs *workers, XqfStrs *runs)
{
    xqf_strs_free(workers);
    xqf_strs_free(runs);
    StoreWorker *w;
    int nw = store_list_workers(store, STATUS_WORKER_WINDOW_S, &w);
    if (nw < 0)
        return -1;
    char line[XQF_TEXT_MAX + 1], shown[XQF_TEXT_MAX + 1];
    int rc = 0;
    for (int i = 0; i < nw && i < XQF_STATUS_ROWS && rc == 0; i++) {
        snprintf(line, sizeof line, "worker %s build %s cores %d concurrency %d pairs %lld leased %lld seen %.0fs ago",
                 w[i].name, w[i].build_id, w[i].cores, w[i].concurrency, (long long)w[i].pairs,
                 (long long)w[i].leased, w[i].idle_s);
        xqf_escape(shown, sizeof shown, line);   /* names and builds came from the network */
        rc = xqf_strs_push(workers, shown);
    }
    free(w);
    /* the builds workers refused (their bench did not match): the coordinator offers them no more */
    StoreWorkerBench *wb = NULL;
    int nb = rc == 0 ? store_worker_benches(store, 0, &wb) : 0;
    if (nb < 0)
        return -1;
    for (int i = 0; i < nb && rc == 0 && (int)workers->count < XQF_STATUS_ROWS; i++) {
        snprintf(line, sizeof line, "worker %s REFUSES %s %.16s: %.400s", wb[i].worker_name,
                 wb[i].net ? "net" : "build", wb[i].sha256, wb[i].refused);
        xqf_escape(shown, sizeof shown, line);
        rc = xqf_strs_push(workers, shown);
    }
    free(wb);
    StoreRun *r;
    int nr = rc == 0 ? store_list_runs(store, max_runs > 0 && max_runs < XQF_STATUS_ROWS ? max_runs : XQF_STATUS_ROWS, &r) : -1;
    if (nr < 0)
        return -1;
    for (int i = 0; i < nr && rc == 0 && runs->count < XQF_STATUS_ROWS; i++) {
        run_line(&r[i], line, sizeof line);
        xqf_escape(shown, sizeof shown, line);
        rc = xqf_strs_push(runs, shown);
        if (rc == 0)
            rc = trust_lines(store, r[i].id, runs);
    }
    free(r);
    return rc;
}

/*
 * report_page.c - a run's report page (report/report.h) from the run
 * database: the model the report draws (samples over games, each SPSA
 * parameter's trajectory, the settings), for xqf-tune report and
 * xqf-web's /runs/ID/report.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "run_view.h"
#include "report.h"
#include "run_kind.h"
#include "store_games.h"
#include "store_runs.h"
#include "store_spsa.h"

/* The report's model of a run, filled from the database; free with model_free. */
typedef struct {
    StoreProgress *prog;
    StoreHistoryRow *hist;
    StoreSpsa *st;
    xqf_report_sample *samples;
    xqf_report_param *params;
    xqf_report_point *points;
    StoreWorkerTrust *trust;
    xqf_report_worker *workers;
    char tc[32];
    xqf_report_run run;
} Model;

static void model_free(Model *m)
{
    free(m->prog);
    free(m->hist);
    free(m->st);
    free(m->samples);
    free(m->params);
    free(m->points);
    free(m->trust);
    free(m->workers);
}

/* The result samples over games: the progress rows, and the run's counts last. */
static size_t fill_samples(const StoreRun *r, const StoreProgress *prog, int np, xqf_report_sample *samples)
{
    size_t ns = 0;
    for (int i = 0; i < np; i++) {
        const StoreCounts *c = &prog[i].counts;
        xqf_report_sample *x = &samples[ns++];
        x->games = 2 * c->pairs;
        memcpy(x->penta, c->penta, sizeof x->penta);
        x->wins = c->wins, x->draws = c->draws, x->losses = c->losses;
    }
    if (r->counts.pairs > 0 && (ns == 0 || samples[ns - 1].games != 2 * r->counts.pairs)) {
        xqf_report_sample *x = &samples[ns++];
        x->games = 2 * r->counts.pairs;
        memcpy(x->penta, r->counts.penta, sizeof x->penta);
        x->wins = r->counts.wins, x->draws = r->counts.draws, x->losses = r->counts.losses;
    }
    return ns;
}

/* Each SPSA parameter with its trajectory (start, then theta after each update). */
static void fill_params(Model *m, int nh)
{
    size_t used = 0;
    for (int i = 0; i < m->st->count; i++) {
        const StoreSpsaParam *q = &m->st->params[i];
        xqf_report_param *x = &m->params[i];
        x->name = q->name;
        x->start = q->start, x->min = q->min, x->max = q->max;
        x->c_end = q->c_end, x->r_end = q->r_end, x->theta = q->theta;
        x->history = &m->points[used];
        m->points[used++] = (xqf_report_point){ 0, q->start };
        for (int j = 0; j < nh; j++)
            if (m->hist[j].idx == i)
                m->points[used++] = (xqf_report_point){ 2 * m->hist[j].iteration, m->hist[j].theta };
        x->history_count = (size_t)(&m->points[used] - x->history);
    }
}

/* Reads what the report of run r shows into *m. Exit status. */
/* why, from fmt: RUN_FAILED (the caller says it: xqf-tune on stderr, xqf-web in its answer). */
__attribute__((format(printf, 3, 4))) static int fail(char *why, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, size, fmt, ap);
    va_end(ap);
    return RUN_FAILED;
}

/* The report's model of run r. RUN_OK, or RUN_FAILED with why. */
static int model_load(Store *s, const StoreRun *r, Model *m, char *why, size_t size)
{
    memset(m, 0, sizeof *m);
    bool spsa = run_kind_is_spsa(r->kind);
    int np = store_run_progress(s, r->id, &m->prog);
    int nh = np >= 0 ? store_spsa_history(s, r->id, &m->hist) : -1;
    if (!(m->st = calloc(1, sizeof *m->st)) || np < 0 || nh < 0 || (spsa && store_spsa_load(s, r->id, m->st) != 1))
        return fail(why, size, "cannot read run %" PRId64, r->id);
    m->samples = calloc((size_t)np + 1, sizeof *m->samples);
    m->params = calloc((size_t)m->st->count + 1, sizeof *m->params);
    m->points = calloc((size_t)nh + (size_t)m->st->count + 1, sizeof *m->points);
    if (!m->samples || !m->params || !m->points)
        return fail(why, size, "out of memory");
    int nw = store_run_workers(s, r->id, &m->trust);
    if (nw < 0)
        return fail(why, size, "cannot read the workers of run %" PRId64, r->id);
    if (!(m->workers = calloc((size_t)nw + 1, sizeof *m->workers)))
        return fail(why, size, "out of memory");
    for (int i = 0; i < nw; i++) {
        const StoreWorkerTrust *t = &m->trust[i];
        m->workers[i] = (xqf_report_worker){ .name = t->name, .games = t->games, .crashes = t->crashes,
                                             .time_losses = t->time_losses, .illegal_moves = t->illegal_moves,
                                             .disconnects = t->disconnects, .replays = t->replays,
                                             .mismatches = t->mismatches, .residual = t->residual,
                                             .flagged = t->flagged };
    }
    size_t ns = fill_samples(r, m->prog, np, m->samples);
    fill_params(m, nh);
    run_tc_text(r, m->tc, sizeof m->tc);
    const StoreSpsa *st = m->st;
    m->run = (xqf_report_run){
        .id = r->id, .name = r->name, .kind = spsa ? XQF_REPORT_SPSA : run_kind_is_sprt(r->kind) ? XQF_REPORT_SPRT : XQF_REPORT_GAMES,
        .kind_title = run_kind_find(r->kind) ? run_kind_find(r->kind)->title : NULL,
        .state = r->state, .created = r->created, .finished = r->finished,
        .tc = r->nodes > 0 ? NULL : m->tc, .nodes = r->nodes, .threads = r->threads,
        .book = r->book_name,
        .pairs_per_task = r->pairs_per_task, .planned_pairs = r->max_pairs,
        .elo0 = spsa ? NAN : r->elo0, .elo1 = spsa ? NAN : r->elo1,
        .alpha = spsa ? NAN : r->alpha, .beta = spsa ? NAN : r->beta, .verdict = r->verdict,
        .spsa_alpha = spsa ? st->alpha : NAN, .spsa_gamma = spsa ? st->gamma : NAN,
        .spsa_A = spsa ? st->a_ratio * (double)st->iterations : NAN,
        .params = m->params, .param_count = (size_t)st->count, .samples = m->samples, .sample_count = ns,
        .workers = m->workers, .worker_count = (size_t)nw,
    };
    return RUN_OK;
}

RunStatus run_report_html(Store *s, const StoreRun *r, FILE *out, char *why, size_t size)
{
    Model m;
    int status = model_load(s, r, &m, why, size);
    if (status == RUN_OK && xqf_report_html(out, &m.run) != 0)
        status = fail(why, size, "cannot write the report");
    model_free(&m);
    return status;
}

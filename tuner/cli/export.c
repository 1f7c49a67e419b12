/*
 * export.c - xqf-tune export (a run's parameter file) and report (its
 * HTML page, drawn by the tuner's report module).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report.h"
#include "run_kind.h"

static const OptSpec EXPORT_OPTIONS[] = {
    { "--out", OPT_TEXT, "FILE", NULL, .help = "write the file here (default: stdout)" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable EXPORT_TABLE = {
    .program = "xqf-tune", .spec = EXPORT_OPTIONS, .max_positional = 1,
    .usage = "Usage: xqf-tune export RUN [--db CONNINFO] [--out FILE]\n"
             "A parameter file (every parameter, `Name = value`): for SPSA the current theta\n"
             "rounded, for SPRT the test set; to stdout or FILE.\n",
};

int tune_cmd_export(int argc, char **argv)
{
    Opts o;
    Store *s = NULL;
    StoreRun r;
    Params p;
    int64_t id;
    int status = cli_parse(&o, &EXPORT_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO || (status = cli_run_id(&o, &id)) != CLI_OK || (status = cli_open_db(&o, &s)) != CLI_OK)
        return status;
    if ((status = cli_load_run(s, id, &r)) == CLI_OK && (status = cli_export_set(s, &r, &p)) == CLI_OK)
        status = cli_write_export(&r, &p, opts_text(&o, "--out"));
    store_destroy(&s);
    return status;
}

/* The report's model of a run, filled from the database; free with model_free. */
typedef struct {
    StoreProgress *prog;
    StoreHistoryRow *hist;
    StoreSpsa *st;
    xqf_report_sample *samples;
    xqf_report_param *params;
    xqf_report_point *points;
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
static int model_load(Store *s, const StoreRun *r, Model *m)
{
    memset(m, 0, sizeof *m);
    bool spsa = run_kind_is_spsa(r->kind);
    int np = store_run_progress(s, r->id, &m->prog);
    int nh = np >= 0 ? store_spsa_history(s, r->id, &m->hist) : -1;
    if (!(m->st = calloc(1, sizeof *m->st)) || np < 0 || nh < 0 || (spsa && store_spsa_load(s, r->id, m->st) != 1))
        return cli_fail(CLI_FAIL, "cannot read run %" PRId64, r->id);
    m->samples = calloc((size_t)np + 1, sizeof *m->samples);
    m->params = calloc((size_t)m->st->count + 1, sizeof *m->params);
    m->points = calloc((size_t)nh + (size_t)m->st->count + 1, sizeof *m->points);
    if (!m->samples || !m->params || !m->points)
        return cli_fail(CLI_FAIL, "out of memory");
    size_t ns = fill_samples(r, m->prog, np, m->samples);
    fill_params(m, nh);
    cli_tc_text(r, m->tc, sizeof m->tc);
    const StoreSpsa *st = m->st;
    m->run = (xqf_report_run){
        .id = r->id, .name = r->name, .kind = spsa ? XQF_REPORT_SPSA : XQF_REPORT_SPRT,
        .state = r->state, .created = r->created, .finished = r->finished,
        .tc = r->nodes > 0 ? NULL : m->tc, .nodes = r->nodes, .book = r->book_name,
        .pairs_per_task = r->pairs_per_task, .planned_pairs = r->max_pairs,
        .elo0 = spsa ? NAN : r->elo0, .elo1 = spsa ? NAN : r->elo1,
        .alpha = spsa ? NAN : r->alpha, .beta = spsa ? NAN : r->beta, .verdict = r->verdict,
        .spsa_alpha = spsa ? st->alpha : NAN, .spsa_gamma = spsa ? st->gamma : NAN,
        .spsa_A = spsa ? st->a_ratio * (double)st->iterations : NAN,
        .params = m->params, .param_count = (size_t)st->count, .samples = m->samples, .sample_count = ns,
    };
    return CLI_OK;
}

/* Writes run r's report page to path. Exit status. */
static int write_report(Store *s, const StoreRun *r, const char *path)
{
    Model m;
    FILE *out = NULL;
    int status = model_load(s, r, &m);
    if (status == CLI_OK && !(out = fopen(path, "w")))
        status = cli_fail(CLI_FAIL, "--html: cannot write '%s': %s", path, strerror(errno));
    if (status == CLI_OK && xqf_report_html(out, &m.run) != 0)
        status = cli_fail(CLI_FAIL, "cannot write the report");
    if (out && fclose(out) != 0 && status == CLI_OK)
        status = cli_fail(CLI_FAIL, "cannot write '%s'", path);
    model_free(&m);
    return status;
}

static const OptSpec REPORT_OPTIONS[] = {
    { "--html", OPT_TEXT, "FILE", NULL, .help = "the page to write, required" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable REPORT_TABLE = {
    .program = "xqf-tune", .spec = REPORT_OPTIONS, .max_positional = 1,
    .usage = "Usage: xqf-tune report RUN --html FILE [--db CONNINFO]\n"
             "Writes the run's report: one self-contained HTML page with its settings, each\n"
             "SPSA parameter's trajectory, Elo with its interval and the SPRT LLR over games.\n",
};

int tune_cmd_report(int argc, char **argv)
{
    Opts o;
    Store *s = NULL;
    StoreRun r;
    int64_t id;
    int status = cli_parse(&o, &REPORT_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO || (status = cli_run_id(&o, &id)) != CLI_OK)
        return status;
    const char *path = opts_text(&o, "--html");
    if (!path)
        return cli_fail(CLI_USAGE, "report: --html FILE is required");
    if ((status = cli_open_db(&o, &s)) != CLI_OK)
        return status;
    if ((status = cli_load_run(s, id, &r)) == CLI_OK && (status = write_report(s, &r, path)) == CLI_OK)
        printf("%s\n", path);
    store_destroy(&s);
    return status;
}

/*
 * run_view.c - what both front ends show of a run (run_view.h): the exit
 * status convention with its error line, a run's book, threads, Elo and LOS
 * as text, an SPSA state's theta as a parameter set.
 */
#include "run_view.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "run_rules.h"
#include "sprt_calc.h"
#include "store_spsa.h"
#include "store_tasks.h"

int run_book_text(Store *s, const StoreRun *r, char *out, size_t size)
{
    StoreRunBook b;
    int rc = store_run_book(s, r->id, &b);
    size_t n = (size_t)snprintf(out, size, "%s", r->book_name[0] ? r->book_name : "(no name)");
    if (rc <= 0 || n >= size)
        return rc < 0 ? -1 : 0;
    n += (size_t)snprintf(out + n, size - n, ", %d openings", b.openings);
    if (b.format[0] && n < size && b.plies > 0)
        n += (size_t)snprintf(out + n, size - n, " (%s games cut at ply %d)", b.format, b.plies);
    else if (b.format[0] && n < size && strcmp(b.format, "book") != 0)
        n += (size_t)snprintf(out + n, size - n, " (%s)", b.format);
    if (b.duplicates > 0 && n < size)
        n += (size_t)snprintf(out + n, size - n, ", %d duplicates dropped", b.duplicates);
    if (b.sha256[0] && n < size)
        n += (size_t)snprintf(out + n, size - n, ", SHA-256 %.12s", b.sha256);
    if (b.scored > 0 && n < size)
        snprintf(out + n, size - n, ", |score| %d-%d (mean %.1f%s)", b.score_min, b.score_max, b.score_mean,
                 b.scored < b.openings ? ", some unscored" : "");
    return 0;
}

int run_threads_text(Store *s, const StoreRun *r, char *out, size_t size)
{
    int threads = r->threads > 0 ? r->threads : 1;
    if (threads == 1) {
        snprintf(out, size, "1");
        return 0;
    }
    int n = snprintf(out, size, "%d (a game takes %d cores of a worker)", threads, threads);
    if (strcmp(r->state, "active") != 0 || n < 0 || (size_t)n >= size)
        return 0;
    StoreWorker *w;
    int count = store_list_workers(s, RUN_WORKERS_RECENT_S, &w);
    if (count < 0)
        return -1;
    int most = 0;
    for (int i = 0; i < count; i++)
        most = w[i].concurrency > most ? w[i].concurrency : most;
    free(w);
    if (most < threads)
        snprintf(out + n, size - (size_t)n, "; no worker can play it: none seen in the last %d minutes has a "
                 "concurrency of %d or more (the most: %d; xqf-worker --concurrency)", RUN_WORKERS_RECENT_S / 60, threads, most);
    return 0;
}

bool run_elo_of(const StoreCounts *c, xqf_elo *e)
{
    if (c->pairs > 0 && xqf_elo_penta(c->penta, e) == XQF_STATS_OK)
        return true;
    return xqf_elo_wdl(c->wins, c->draws, c->losses, e) == XQF_STATS_OK;
}

void run_elo_text(const StoreCounts *c, char *out, size_t size)
{
    xqf_elo e;
    if (run_elo_of(c, &e))
        snprintf(out, size, "%.2f +/- %.2f", e.elo, e.elo_ci95);
    else
        snprintf(out, size, "-");
}

void run_los_text(const StoreCounts *c, char *out, size_t size)
{
    xqf_elo e;
    if (run_elo_of(c, &e))
        snprintf(out, size, "%.1f %%", 100 * xqf_los(&e));
    else
        snprintf(out, size, "-");
}

bool run_sprt_state(const StoreRun *r, const StoreCounts *c, RunSprtState *out)
{
    if (!run_kind_is_sprt(r->kind) || xqf_sprt_bounds(r->alpha, r->beta, &out->lower, &out->upper) != XQF_STATS_OK)
        return false;
    if (c->pairs == 0 || xqf_llr_penta(c->penta, r->elo0, r->elo1, &out->llr) != XQF_STATS_OK)
        out->llr = 0;
    return true;
}

void run_apply_theta(const StoreSpsa *st, Params *p)
{
    for (int i = 0; i < st->count; i++) {
        const ParamInfo *info = params_find(st->params[i].name);
        if (info) {
            double v = round(st->params[i].theta);
            params_store(p, info, (int)(v < info->min ? info->min : v > info->max ? info->max : v));
        }
    }
}

/* A text setting of run_settings.def as its format writes it, after a '/' when out holds one already. */
#define TEXT_SETTING_SHOWN(name, option, arg, help, form_field, label, form_help, parse, format, first, second) \
    if (r->first > 0) {                                                                                         \
        size_t n_ = strlen(out);                                                                                \
        if (n_ && n_ + 1 < size)                                                                                \
            out[n_++] = '/', out[n_] = '\0';                                                                   \
        format(r->first, r->second, out + n_, size - n_);                                                       \
    }

void run_tc_text(const StoreRun *r, char *out, size_t size)
{
    if (r->nodes > 0) {
        snprintf(out, size, "%" PRId64 " nodes", r->nodes);
        return;
    }
    /* the first player's clock, then with time odds the second's (a clock of base 0 is none) */
    out[0] = '\0';
    RUN_TEXT_SETTINGS(TEXT_SETTING_SHOWN)
    if (!out[0])
        rule_tc_text(r->base_ms, r->inc_ms, out, size);
}

/* A shown setting (a label, of a group the kind takes) appended to out; the count after. */
static int shown_add(RunSettingShown *out, int n, const char *label, bool taken, const char *text)
{
    if (!label || !taken || n >= RUN_SETTINGS_SHOWN_MAX)
        return n;
    out[n].label = label;
    snprintf(out[n].text, sizeof out[n].text, "%s", text);
    return n + 1;
}

static const char *shown_int(char *text, size_t size, int64_t v)
{
    snprintf(text, size, "%" PRId64, v);
    return text;
}

static const char *shown_real(char *text, size_t size, double v)
{
    snprintf(text, size, "%g", v);
    return text;
}

/* A setting of a group (taken: whether r's kind takes it) as its type shows it. */
#define SHOWN_INT(v) shown_int(text, sizeof text, (int64_t)(v))
#define SHOWN_REAL(v) shown_real(text, sizeof text, (double)(v))
#define SHOWN_PERCENT(v) shown_real(text, sizeof text, 100 * (double)(v))
#define SETTING_SHOWN(taken, field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, \
                      store, ctype, shown)                                                                         \
    n = shown_add(out, n, shown, taken, SHOWN_##TYPE(r->store));
#define SETTING_SHOWN_SPRT(...) SETTING_SHOWN(sprt, __VA_ARGS__)
#define SETTING_SHOWN_TASK(...) SETTING_SHOWN(true, __VA_ARGS__)
#define SETTING_SHOWN_THREADS(...) SETTING_SHOWN(threads, __VA_ARGS__)
/* the adjudication's rules, members of the run's record (every kind's) */
#define SETTING_SHOWN_ADJUDICATION(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, \
                                   store, ctype, shown)                                                                \
    n = shown_add(out, n, shown, true, SHOWN_##TYPE(r->adjudication.store));

/* a kind's own settings (RUN_SETTINGS_KINDS), for a run of that kind only */
#define SETTING_SHOWN_OWN(ID, r)                                                                                     \
    if (run_kind_id((r)->kind) == RUN_KIND_##ID) {                                                                   \
        RUN_SETTINGS_OWN_##ID(SETTING_SHOWN_TASK)                                                                    \
    }

int run_settings_shown(const StoreRun *r, RunSettingShown *out)
{
    char text[32];
    int n = 0;
    bool sprt = run_kind_is_sprt(r->kind);
    const RunKind *k = run_kind_find(r->kind);
    bool threads = k && k->threads;
    RUN_SETTINGS_SPRT(SETTING_SHOWN_SPRT)
    RUN_SETTINGS_TASK(SETTING_SHOWN_TASK)
    RUN_SETTINGS_THREADS(SETTING_SHOWN_THREADS)
    RUN_SETTINGS_KEPT(SETTING_SHOWN_TASK)
    RUN_SETTINGS_ADJUDICATION(SETTING_SHOWN_ADJUDICATION)
    RUN_SETTINGS_KINDS(SETTING_SHOWN_OWN, r)
    return n;
}

RunStatus run_export_params(Store *s, const StoreRun *r, Params *p, char *why, size_t size)
{
    char *sets = malloc(2 * (STORE_PARAMS_MAX + 1)), err[256];
    StoreSpsa *st = NULL;
    RunStatus status = RUN_OK;
    params_default(p);
    if (!sets)
        status = RUN_FAILED, snprintf(why, size, "out of memory");
    else if (store_run_sets(s, r->id, sets, sets + STORE_PARAMS_MAX + 1, STORE_PARAMS_MAX + 1) != 1)
        status = RUN_FAILED, snprintf(why, size, "cannot read the sets of run %" PRId64, r->id);
    else if (params_apply_list(p, sets, err, sizeof err) != 0)
        status = RUN_FAILED, snprintf(why, size, "run %" PRId64 ": %s", r->id, err);
    else if (run_kind_is_spsa(r->kind) && (!(st = malloc(sizeof *st)) || store_spsa_load(s, r->id, st) != 1))
        status = RUN_FAILED, snprintf(why, size, "cannot read the SPSA state of run %" PRId64, r->id);
    if (status == RUN_OK && st)
        run_apply_theta(st, p);
    free(st);
    free(sets);
    return status;
}

RunStatus run_export_write(const StoreRun *r, const Params *p, FILE *out, char *why, size_t size)
{
    fprintf(out, "# export of run %" PRId64 " (%s, %s, %" PRId64 " pairs%s)\n", r->id, r->kind, r->state,
            run_kind_is_spsa(r->kind) ? r->iter : r->counts.pairs, run_kind_is_spsa(r->kind) ? " of SPSA" : "");
    if (params_write(p, out) != 0 || ferror(out)) {
        snprintf(why, size, "cannot write the parameter file");
        return RUN_FAILED;
    }
    return RUN_OK;
}

#include "sched.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "games.h"
#include "log.h"
#include "param_set.h"
#include "rng.h"
#include "run_kind.h"
#include "spsa.h"
#include "stats.h"
#include "store_builds.h"
#include "store_engines.h"
#include "store_games.h"
#include "store_runs.h"
#include "store_spsa.h"
#include "store_tasks.h"

/*
 * PROGRESS_EVERY_MS: the stop rules (an SPRT's LLR, recorded with the run)
 * are checked at most this often, not after every batch: under load a
 * batch commits every few milliseconds, and each check is a read, an update
 * and a commit of its own.  A run stops at most this much later.
 */
enum { MAX_TOUCHED = 64, IDLE_RETRY_MS = 1000, PROGRESS_EVERY_MS = 250 };

/* AUDITS_EVERY_MS: with no replay audit open, task requests look for one again after this long. */
enum { AUDITS_EVERY_MS = 1000, AUDIT_MISSES = 4 };

/*
 * What load_book reads once per run, beside the row a refresh reads again:
 * a refresh hands it on whole to the run's new entry, so no setting added
 * here can be dropped there (copied field by field, one was: its tasks went
 * out with the setting's zero value after the first refresh).
 */
typedef struct {
    bool done;                       /* read: the rest is valid */
    char **book;                     /* opening lines (store_load_run's, moved here) */
    int book_lines;
    int *perm;                       /* opening order over the book */
    int random_plies, depth;         /* data runs (store_data_settings) */
    bool scores;                     /* its games keep scores and depths (store_game_scores) */
    EngineRecord *engines[2];        /* each player's engine record (runs.engine, runs.base_engine); NULL: ours */
} SchedLoaded;

typedef struct {
    StoreRun run;                    /* the row of the last refresh (no book: that is in loaded) */
    SchedLoaded loaded;              /* once a task was made */
    bool exhausted;                  /* nothing to give until the next refresh */
    int64_t bench0, bench1;          /* the recorded bench signatures of build0, build1 (0: none) */
    int64_t ref_nps;                 /* --tc-scale's reference speed (0: the clock is not scaled) */
    double pass;                     /* pairs given out per throughput share (stride scheduling, serve_order) */
    struct {
        uint64_t key;
        int64_t ms;
    } starved[SCHED_STARVED_KEYS];   /* keys it had nothing for lately, and when (sched.h: fair share) */
    int64_t threads_noted_ms;        /* when a worker of too little concurrency for its threads was last logged */
} SchedRun;

/* The scheduling hooks of a run kind (run_kinds.def). */
typedef struct {
    /* A new task when the database has none queued; NULL for a kind whose tasks the database makes on claim
       (RunKind.on_claim, xqf_claim_batch). 1/0/-1. */
    int (*new_task)(Sched *s, SchedRun *r, int64_t worker, int64_t lease_ms, StoreLease *out);
    /* In the accepting transaction, when a task's last pair came in. 0/-1. */
    int (*task_done)(Sched *s, int64_t run, int64_t task);
    /* After commit, for runs that got results: stop rules. 0/-1. */
    int (*progress)(Sched *s, int64_t run);
} RunKindOps;

struct Sched {
    Store *store;
    SchedRun *runs;
    int count;
    bool stale;
    int64_t refreshed_ms;
    int64_t touched[MAX_TOUCHED];    /* runs with accepted results since their last check */
    int ntouched;
    bool touched_overflow;
    int64_t progress_ms;             /* when the stop rules were last checked */
    StoreWorkerBench *refused;       /* builds workers refused (013_git_builds.sql), read with the runs */
    int nrefused;
    int64_t open_audits;             /* replay audits open when last counted (014_games.sql) */
    int64_t audits_ms;               /* when they were counted */
};

/* ---- run kinds --------------------------------------------------------------- */

double sched_sprt_llr(const StoreRun *r, const char **verdict)
{
    double llr = 0, lo, hi;
    *verdict = "";
    if (r->counts.pairs == 0 || xqf_llr_penta(r->counts.penta, r->elo0, r->elo1, &llr) != XQF_STATS_OK ||
        xqf_sprt_bounds(r->alpha, r->beta, &lo, &hi) != XQF_STATS_OK)
        return r->counts.pairs ? NAN : 0.0;
    if (llr >= hi)
        *verdict = "H1 accepted";
    else if (llr <= lo)
        *verdict = "H0 accepted";
    return llr;
}

static int sprt_progress(Sched *s, int64_t id)
{
    StoreRun r;
    int rc = store_load_run(s->store, id, &r, false);
    if (rc <= 0 || strcmp(r.state, "active") != 0)
        return rc < 0 ? -1 : 0;
    const char *verdict;
    double llr = sched_sprt_llr(&r, &verdict);
    if (isnan(llr))
        return 0;
    if (*verdict)
        log_info("run %lld: %s (LLR %.2f after %lld pairs)", (long long)id, verdict, llr,
                 (long long)r.counts.pairs);
    if (*verdict)
        s->stale = true;
    return store_update_sprt(s->store, id, llr, *verdict ? verdict : NULL);
}

/*
 * SPSA: a new task draws a perturbation at k = iter + 1 and plays
 * theta + c_k flip (first player) against theta - c_k flip; its record goes
 * with the task (003_spsa.sql).  When its last pair is in, the update is
 * applied from the first player's side, exactly once (the task is marked in
 * the same transaction), and theta joins the history.
 */

/* The tuner's model of a stored SPSA run. Returns 0, or -1 when the stored parameters are unusable. */
static int spsa_model(const StoreSpsa *st, xqf_spsa *x)
{
    if (xqf_spsa_init(x, st->iterations) != 0)
        return -1;
    x->alpha = st->alpha;
    x->gamma = st->gamma;
    x->A = st->a_ratio * (double)st->iterations;
    x->iter = st->iter;
    for (int i = 0; i < st->count; i++) {
        const StoreSpsaParam *q = &st->params[i];
        if (xqf_spsa_add(x, q->name, q->theta, q->min, q->max, q->c_end, q->r_end) != 0)
            return -1;
        x->params[x->count - 1].is_float = q->is_float;
    }
    return x->count > 0 ? 0 : -1;
}

/*
 * The set "fixed,Name=value,..." of the tuned values: an integer each, a
 * float parameter's as a decimal (param_set.h, xqf_set_decimal: UCI has no
 * float type, the engine reads the text).  Returns 0, or -1 when it does
 * not fit.
 */
static int spsa_set(const StoreSpsa *st, const double *values, char *out, size_t size)
{
    size_t len = (size_t)snprintf(out, size, "%s", st->fixed);
    for (int i = 0; i < st->count && len < size; i++) {
        const StoreSpsaParam *q = &st->params[i];
        char value[XQF_SET_VALUE_MAX + 1];
        if (!q->is_float)
            snprintf(value, sizeof value, "%d", (int)values[i]);
        else if (xqf_set_decimal(values[i], q->max - q->min, value, sizeof value) != 0)
            return -1;
        len += (size_t)snprintf(out + len, size - len, "%s%s=%s", len ? "," : "", q->name, value);
    }
    return len < size ? 0 : -1;
}

/* Appends "key": [v, ...] (ints when iv, else doubles) to out at *len. */
static void json_list(char *out, size_t *len, const char *key, const int *iv, const double *dv, int n)
{
    *len += (size_t)sprintf(out + *len, ", \"%s\": [", key);
    for (int i = 0; i < n; i++)
        *len += iv ? (size_t)sprintf(out + *len, "%s%d", i ? ", " : "", iv[i])
                   : (size_t)sprintf(out + *len, "%s%.17g", i ? ", " : "", dv[i]);
    *len += (size_t)sprintf(out + *len, "]");
}

/* The task's perturbation record (malloc'd JSON), or NULL when out of memory. */
static char *spsa_json(const xqf_spsa_step *st)
{
    char *out = malloc(64 + (size_t)st->count * 5 * 28);
    if (!out)
        return NULL;
    size_t len = (size_t)sprintf(out, "{\"k\": %lld", (long long)st->k);
    json_list(out, &len, "flip", st->flip, NULL, st->count);
    json_list(out, &len, "c_k", NULL, st->c_k, st->count);
    json_list(out, &len, "R_k", NULL, st->R_k, st->count);
    json_list(out, &len, "plus", NULL, st->plus, st->count);
    json_list(out, &len, "minus", NULL, st->minus, st->count);
    strcpy(out + len, "}");
    return out;
}

static int spsa_new_task(Sched *s, SchedRun *r, int64_t worker, int64_t lease_ms, StoreLease *out)
{
    StoreSpsa st;
    xqf_spsa x;
    xqf_spsa_step step;
    char p0[STORE_PARAMS_MAX + 1], p1[STORE_PARAMS_MAX + 1];
    int rc = store_spsa_load(s->store, r->run.id, &st);
    if (rc <= 0)
        return rc;
    if (spsa_model(&st, &x) != 0) {
        log_warn("run %lld: unusable SPSA parameters: skipped", (long long)r->run.id);
        return 0;
    }
    /* one random stream per task, reproducible from the run's seed and the task's first pair */
    uint64_t rng = st.seed ^ (UINT64_C(0x9E3779B97F4A7C15) * (uint64_t)(st.next_pair + 1));
    rng = (rng ^ (rng >> 31)) * UINT64_C(0xBF58476D1CE4E5B9);
    xqf_spsa_perturb(&x, x.iter + 1, &rng, &step);
    if (spsa_set(&st, step.plus, p0, sizeof p0) != 0 || spsa_set(&st, step.minus, p1, sizeof p1) != 0) {
        log_warn("run %lld: parameter sets too long: skipped", (long long)r->run.id);
        return 0;
    }
    char *json = spsa_json(&step);
    if (!json)
        return -1;
    rc = store_create_task(s->store, r->run.id, worker, lease_ms, p0, p1, json, out);
    free(json);
    return rc;
}

static int spsa_task_done(Sched *s, int64_t run, int64_t task)
{
    int rc = store_spsa_claim_update(s->store, task);
    if (rc <= 0)
        return rc;
    StoreSpsa st;
    StoreSpsaTask t;
    xqf_spsa x;
    xqf_spsa_step step = { 0 };
    if ((rc = store_spsa_load(s->store, run, &st)) <= 0 || (rc = store_spsa_task(s->store, task, &t)) <= 0 ||
        spsa_model(&st, &x) != 0 || t.count != x.count) {
        if (rc < 0)
            return -1;
        log_warn("run %lld: task %lld: no usable perturbation: no update", (long long)run, (long long)task);
        return 0;
    }
    step.count = t.count;
    step.k = t.k;
    memcpy(step.flip, t.flip, sizeof t.flip[0] * (size_t)t.count);
    memcpy(step.c_k, t.c_k, sizeof t.c_k[0] * (size_t)t.count);
    memcpy(step.R_k, t.R_k, sizeof t.R_k[0] * (size_t)t.count);
    if (xqf_spsa_update(&x, &step, t.pairs, t.wins, t.losses) != 0)
        return 0;
    double theta[STORE_SPSA_MAX];
    for (int i = 0; i < x.count; i++)
        theta[i] = x.params[i].theta;
    log_debug("run %lld: SPSA iteration %lld (task %lld, W-L %lld)", (long long)run, (long long)x.iter,
              (long long)task, (long long)(t.wins - t.losses));
    return store_spsa_save(s->store, run, theta, x.count, x.iter);
}

static const RunKindOps OPS[RUN_KIND_COUNT] = {
    [RUN_KIND_SPRT] = { NULL, NULL, sprt_progress },
    [RUN_KIND_SPSA] = { spsa_new_task, spsa_task_done, NULL },
    [RUN_KIND_DATA] = { NULL, NULL, NULL },  /* tasks on claim; the games come with the reports (store) */
    [RUN_KIND_GAMES] = { NULL, NULL, NULL }, /* tasks on claim; ends after its pairs (xqf_report_batch) */
};

static const RunKindOps *kind_of(const char *name)
{
    const RunKind *k = run_kind_find(name);
    return k ? &OPS[k->id] : NULL;
}

/* ---- the cache of active runs ------------------------------------------------ */

Sched *sched_new(Store *store)
{
    Sched *s = calloc(1, sizeof *s);
    if (s) {
        s->store = store;
        s->stale = true;
    }
    return s;
}

static void run_free(SchedRun *r)
{
    store_run_free(&r->run);
    store_run_free(&(StoreRun){ .book = r->loaded.book, .book_lines = r->loaded.book_lines });
    free(r->loaded.perm);
    free(r->loaded.engines[0]);
    free(r->loaded.engines[1]);
    r->loaded = (SchedLoaded){ 0 };
}

void sched_destroy(Sched **sp)
{
    Sched *s = *sp;
    if (!s)
        return;
    for (int i = 0; i < s->count; i++)
        run_free(&s->runs[i]);
    free(s->runs);
    free(s->refused);
    free(s);
    *sp = NULL;
}

void sched_invalidate(Sched *s) { s->stale = true; }

/*
 * Long controls get their share (sched.h, sched_tc_ratio): Fishtest's
 * rule, server/fishtest/rundb.py calc_itp and util.py
 * estimate_game_duration and get_tc_ratio.  A game lasts, by estimate,
 * base + 60 increments on each side's clock (60 moves a side: our
 * games' 114-120 plies, docs/measurements.md; Fishtest's 68 are chess's),
 * or 60 moves of nodes at SCHED_REF_NPS; twice that with time odds'
 * two clocks averaged, times the threads each engine searches with.
 */
enum { SCHED_MOVES_A_SIDE = 60 };
static const double SCHED_REF_NPS = 1e6;           /* xqf-engine bench on one core: 0.9-1.9 M nodes/s */
static const double SCHED_REF_BASE_S = 10, SCHED_REF_INC_S = 0.1;

/* One side's estimated seconds on the clock (base_ms, inc_ms) or at nodes per move (0: neither). */
static double side_seconds(int64_t nodes, int64_t base_ms, int64_t inc_ms)
{
    if (nodes > 0)
        return SCHED_MOVES_A_SIDE * (double)nodes / SCHED_REF_NPS;
    return (double)base_ms / 1000 + SCHED_MOVES_A_SIDE * (double)inc_ms / 1000;
}

double sched_tc_ratio(const StoreRun *r)
{
    double ref = SCHED_REF_BASE_S + SCHED_MOVES_A_SIDE * SCHED_REF_INC_S;
    double one = side_seconds(r->nodes, r->base_ms, r->inc_ms);
    double two = r->nodes <= 0 && r->base1_ms > 0 ? side_seconds(0, r->base1_ms, r->inc1_ms) : one;
    double game = (one + two) / 2;
    if (!(game > 0))
        return 1;                                   /* fixed depth: no estimate (sched.h) */
    return (r->threads > 1 ? r->threads : 1) * game / ref;
}

double sched_pair_weight(const StoreRun *r)
{
    double ratio = sched_tc_ratio(r);
    return ratio > 1 ? pow(ratio, SCHED_TC_EXPONENT - 1) : 1;
}

/* A run's share of the pairs: its throughput (percent; 100 when unset) weighed by its time control. */
static double share(const SchedRun *r)
{
    return (r->run.throughput > 0 ? r->run.throughput : 100) * sched_pair_weight(&r->run);
}

/* The pass of pairs given out to r. */
static double stride(const SchedRun *r, int64_t pairs) { return (double)pairs / share(r); }

/* The pairs a task of r is counted for before it is claimed (its size once it is). */
static int64_t task_pairs(const SchedRun *r) { return r->run.pairs_per_task > 0 ? r->run.pairs_per_task : 1; }

/*
 * The passes of the refreshed runs (n of them): a run the scheduler had
 * keeps its own.  One that joins (new, resumed, or every run when the
 * coordinator starts) starts at the pairs its leases hold now per share,
 * and not below the least pass of the runs of its priority already
 * there: a newcomer gets its share from now on, not the pairs it would
 * have had since the others started.
 */
static void join_passes(const Sched *s, SchedRun *runs, int n)
{
    bool *kept = calloc(n > 0 ? (size_t)n : 1, sizeof *kept);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < s->count; j++)
            if (s->runs[j].run.id == runs[i].run.id) {
                runs[i].pass = s->runs[j].pass;
                memcpy(runs[i].starved, s->runs[j].starved, sizeof runs[i].starved);
                runs[i].threads_noted_ms = s->runs[j].threads_noted_ms;
                if (kept)
                    kept[i] = true;
            }
    for (int i = 0; kept && i < n; i++) {
        if (kept[i])
            continue;
        runs[i].pass = stride(&runs[i], runs[i].run.leased * task_pairs(&runs[i]));
        bool any = false;
        double least = 0;
        for (int j = 0; j < n; j++)
            if (kept[j] && runs[j].run.priority == runs[i].run.priority && (!any || runs[j].pass < least)) {
                least = runs[j].pass;
                any = true;
            }
        if (any && runs[i].pass < least)
            runs[i].pass = least;
    }
    free(kept);
}

int sched_refresh(Sched *s, int64_t now_ms, int64_t max_age_ms)
{
    if (!s->stale && now_ms - s->refreshed_ms < max_age_ms)
        return 0;
    StoreRun *fresh;
    StoreWorkerBench *refused;
    StoreRunCheck *checks;
    int nrefused = store_worker_benches(s->store, 0, &refused);
    if (nrefused < 0)
        return -1;
    free(s->refused);
    s->refused = refused;
    s->nrefused = nrefused;
    int n = store_active_runs(s->store, &fresh);
    if (n < 0)
        return -1;
    /* after the runs: every run read has its row (one created meanwhile waits for the next refresh) */
    int nchecks = store_active_checks(s->store, &checks);
    if (nchecks < 0) {
        free(fresh);
        return -1;
    }
    SchedRun *runs = calloc(n > 0 ? (size_t)n : 1, sizeof *runs);
    if (!runs) {
        free(fresh);
        free(checks);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        runs[i].run = fresh[i];
        /* read at each refresh: a build registered again may have another signature */
        for (int j = 0; j < nchecks; j++)
            if (checks[j].run == fresh[i].id) {
                runs[i].bench0 = checks[j].bench0;
                runs[i].bench1 = checks[j].bench1;
                runs[i].ref_nps = checks[j].ref_nps;
            }
        for (int j = 0; j < s->count; j++)
            if (s->runs[j].loaded.done && s->runs[j].run.id == fresh[i].id) {
                /* keep what was loaded with the book, all of it; the old entry gives it up */
                runs[i].loaded = s->runs[j].loaded;
                s->runs[j].loaded = (SchedLoaded){ 0 };
            }
    }
    join_passes(s, runs, n);
    for (int j = 0; j < s->count; j++)
        run_free(&s->runs[j]);
    free(s->runs);
    free(fresh);
    free(checks);
    s->runs = runs;
    s->count = n;
    s->stale = false;
    s->refreshed_ms = now_ms;
    /* A restart or a missed commit may have left a crossed SPRT bound unrecorded. */
    for (int i = 0; i < n; i++) {
        const RunKindOps *k = kind_of(runs[i].run.kind);
        const char *verdict;
        if (k && k->progress == sprt_progress && !isnan(sched_sprt_llr(&runs[i].run, &verdict)) &&
            *verdict && sprt_progress(s, runs[i].run.id) != 0)
            return -1;
    }
    return 0;
}

void sched_book_order(uint64_t seed, int *perm, int n)
{
    /* the "inside-out" Fisher-Yates shuffle: builds the permutation as it shuffles it */
    Rng rng;
    rng_seed(&rng, seed);
    for (int i = 0; i < n; i++) {
        int j = (int)(rng_next(&rng) % (uint64_t)(i + 1));
        perm[i] = perm[j];
        perm[j] = i;
    }
}

/* Loads a run's book and its opening order (sched_book_order), with the settings read once. */
static int load_book(Sched *s, SchedRun *r)
{
    if (r->loaded.done)
        return 0;
    SchedLoaded *l = &r->loaded;
    /* A data run's random plies and depth go with each of its tasks. */
    StoreDataSettings data = { 0 };
    bool data_run = run_kind_id(r->run.kind) == RUN_KIND_DATA;
    int rc = data_run ? store_data_settings(s->store, r->run.id, &data) : 1;
    if (rc <= 0)
        return rc < 0 ? -1 : 1;
    l->random_plies = data.random_plies;
    l->depth = data.depth;
    if ((rc = store_game_scores(s->store, r->run.id)) < 0)
        return -1;
    l->scores = rc == 1;
    /* another engine's builds are spoken to as its record says (ours: xqf-engine's settings, the worker's own);
       the second player's engine is the run's base engine, another than the first's in a gauntlet's run */
    for (int k = 0; k < 2; k++) {
        const char *name = k ? r->run.base_engine : r->run.engine;
        if (!name[0] || strcmp(name, "xqf") == 0 || l->engines[k])
            continue;
        if (!(l->engines[k] = malloc(sizeof *l->engines[k])))
            return -1;
        if ((rc = store_engine_load(s->store, name, l->engines[k])) <= 0) {
            free(l->engines[k]);
            l->engines[k] = NULL;
            return rc < 0 ? -1 : 1;
        }
    }
    StoreRun full;
    rc = store_load_run(s->store, r->run.id, &full, true);
    if (rc <= 0)
        return rc < 0 ? -1 : 1;
    if (full.book_lines == 0 || !(l->perm = malloc(sizeof *l->perm * (size_t)full.book_lines))) {
        store_run_free(&full);
        return 1;
    }
    l->book = full.book;
    l->book_lines = full.book_lines;
    sched_book_order(r->run.seed, l->perm, full.book_lines);
    l->done = true;
    return 0;
}

/*
 * How a player's engine is spoken to, from its record, into one player's
 * fields of a task (each player has its own: a run's two sides may be two
 * engines).  Returns 0 or -1 (out of memory).
 */
static int fill_side_engine(const EngineRecord *e, char engine[XQF_NAME_MAX + 1], char proto[8 + 1], bool *ranks1,
                            bool *he_letters, XqfStrs *init, char hash_option[XQF_NAME_MAX + 1],
                            char threads_option[XQF_NAME_MAX + 1], char net_option[XQF_NAME_MAX + 1])
{
    snprintf(engine, XQF_NAME_MAX + 1, "%s", e->name);
    snprintf(proto, 8 + 1, "%s", engine_protocol_name(e->protocol));
    *ranks1 = e->ranks_from_one;
    *he_letters = e->he_letters;
    for (int i = 0; i < e->init_count && i < XQF_INIT_MAX; i++)
        if (xqf_strs_push(init, e->init[i]) != 0)
            return -1;
    snprintf(hash_option, XQF_NAME_MAX + 1, "%s", e->hash_option);
    snprintf(threads_option, XQF_NAME_MAX + 1, "%s", e->threads_option);
    snprintf(net_option, XQF_NAME_MAX + 1, "%s", e->net_option);
    return 0;
}

/* A rule of the run's adjudication (run_settings.def) into the task's field of its name (messages.def). */
#define TASK_ADJUDICATION(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, store, \
                          ctype, shown)                                                                               \
    t->store = run->adjudication.store;

/* Fills a task message from a lease of run r. Returns 0 or -1 (out of memory). */
static int fill_task(const SchedRun *r, const StoreLease *l, XqfMsg *m)
{
    xqf_msg_init(m, XQF_MSG_TASK);
    XqfMsg_task *t = &m->u.task;
    const StoreRun *run = &r->run;
    t->task_id = (uint64_t)l->task_id;
    t->lease = (uint64_t)l->token;
    t->run_id = (uint64_t)run->id;
    snprintf(t->kind, sizeof t->kind, "%s", run->kind);
    snprintf(t->build, sizeof t->build, "%s", run->build_id);
    t->first_pair = l->first_pair;
    t->pairs = l->pairs;
    for (int64_t p = l->first_pair; p < l->first_pair + l->pairs; p++)
        if (xqf_strs_push(&t->openings, r->loaded.book[sched_opening(r->loaded.perm, r->loaded.book_lines, p)]) != 0)
            return -1;
    t->seed = run->seed ^ (uint64_t)l->task_id;
    t->nodes = (uint64_t)run->nodes;
    t->base_ms = run->base_ms;
    t->inc_ms = run->inc_ms;
    t->base1_ms = run->base1_ms;
    t->inc1_ms = run->base1_ms > 0 ? run->inc1_ms : 0;
    t->margin_ms = run->margin_ms;
    t->hash_mb = run->hash_mb;
    t->threads = run->threads > 0 ? run->threads : 1;
    snprintf(t->name0, sizeof t->name0, "%s", run->name0);
    snprintf(t->params0, sizeof t->params0, "%s", l->params0);
    snprintf(t->name1, sizeof t->name1, "%s", run->name1);
    snprintf(t->params1, sizeof t->params1, "%s", l->params1);
    snprintf(t->build0, sizeof t->build0, "%s", run->build0);
    snprintf(t->build1, sizeof t->build1, "%s", run->build1);
    snprintf(t->net0, sizeof t->net0, "%s", run->net0);
    snprintf(t->net1, sizeof t->net1, "%s", run->net1);
    t->bench0 = r->bench0;
    t->bench1 = r->bench1;
    t->ref_nps = r->ref_nps > 0 ? (uint64_t)r->ref_nps : 0;
    RUN_SETTINGS_ADJUDICATION(TASK_ADJUDICATION)
    t->scores = r->loaded.scores;
    for (int k = 0; k < 2; k++) {
        const EngineRecord *e = r->loaded.engines[k];
        if (!e)
            continue;
        if (fill_side_engine(e, k ? t->engine1 : t->engine, k ? t->proto1 : t->proto, k ? &t->ranks1_1 : &t->ranks1,
                             k ? &t->he_letters1 : &t->he_letters, k ? &t->init1 : &t->init,
                             k ? t->hash_option1 : t->hash_option, k ? t->threads_option1 : t->threads_option,
                             k ? t->net_option1 : t->net_option) != 0)
            return -1;
        /* workers bench a build as `BINARY bench`: an engine benched otherwise is not checked there */
        if (strcmp(e->bench_command, ENGINE_DEFAULT_BENCH) != 0)
            *(k ? &t->bench1 : &t->bench0) = 0;
    }
    if (run_kind_id(run->kind) == RUN_KIND_DATA) {
        t->random_plies = r->loaded.random_plies;
        t->depth = r->loaded.depth;
        /* the run's seed and its id: runs created with the same seed play different games */
        t->data_seed = run->seed * UINT64_C(0x9E3779B97F4A7C15) + (uint64_t)run->id;
    }
    return 0;
}

/*
 * Runs in the order a worker should be served: priority (strictly: a run
 * of a lower priority gets a task only when none above can give one), then
 * the least pairs given out per throughput share (stride scheduling: each
 * task given adds its pairs / throughput to the run's pass, so over time
 * runs of one priority get pairs in proportion to their throughput, even
 * with fewer workers than runs), then the fewest leases per share
 * (leased / share, compared crosswise: a run of share 50 is served
 * when it has half the leases of a run of share 100), then age.  The
 * share is the throughput weighed by the time control (share()).
 */
static int serve_order(const void *a, const void *b)
{
    const SchedRun *x = *(SchedRun *const *)a, *y = *(SchedRun *const *)b;
    if (x->run.priority != y->run.priority)
        return x->run.priority > y->run.priority ? -1 : 1;
    /* passes are sums of fractions: equal up to rounding is a tie, left to the leases */
    if (fabs(x->pass - y->pass) > 1e-9 * (fabs(x->pass) + fabs(y->pass)))
        return x->pass < y->pass ? -1 : 1;
    double wx = (double)x->run.leased * share(y), wy = (double)y->run.leased * share(x);
    if (fabs(wx - wy) > 1e-9 * (wx + wy))
        return wx < wy ? -1 : 1;
    return x->run.id < y->run.id ? -1 : x->run.id > y->run.id;
}

/* Whether worker refused one of the builds or nets r plays (a bench that did not match, a signature, a net's file). */
static bool refused_by(const Sched *s, const SchedRun *r, int64_t worker)
{
    for (int i = 0; i < s->nrefused; i++)
        if (s->refused[i].worker == worker && s->refused[i].sha256[0] &&
            (strcmp(s->refused[i].sha256, r->run.build0) == 0 || strcmp(s->refused[i].sha256, r->run.build1) == 0 ||
             strcmp(s->refused[i].sha256, r->run.net0) == 0 || strcmp(s->refused[i].sha256, r->run.net1) == 0))
            return true;
    return false;
}

/* Logged at most this often per run: a worker it skips for its threads. */
enum { THREADS_NOTE_MS = 60000 };

/*
 * Whether a worker that plays concurrency games at once (0: not known) can
 * play r's: a game of r takes its threads' cores (Fishtest's and
 * OpenBench's tests carry a thread count the same way), so a worker of
 * fewer gets none of its tasks, and says why once in a while.
 */
static bool enough_cores(SchedRun *r, const SchedAsk *a, int64_t now)
{
    if (a->concurrency <= 0 || r->run.threads <= a->concurrency)
        return true;
    if (!r->threads_noted_ms || now - r->threads_noted_ms >= THREADS_NOTE_MS) {
        r->threads_noted_ms = now;
        log_info("run %lld plays %d threads per engine: worker %lld (concurrency %d) gets none of its tasks; it "
                 "needs a worker of concurrency %d or more", (long long)r->run.id, r->run.threads,
                 (long long)a->worker, a->concurrency, r->run.threads);
    }
    return false;
}

/*
 * Whether r can serve this request now (its book loaded): not when it
 * plays a build the worker refused, or more threads than the worker's
 * concurrency.  1, 0, or -1 on a database error.
 */
static int can_serve(Sched *s, SchedRun *r, const SchedAsk *a, int64_t now)
{
    if (r->exhausted || (r->run.build_id[0] && strcmp(r->run.build_id, a->build) != 0) ||
        refused_by(s, r, a->worker) || !enough_cores(r, a, now))
        return 0;
    int rc = load_book(s, r);
    if (rc < 0)
        return -1;
    if (rc > 0 || !kind_of(r->run.kind)) {
        log_warn("run %lld: no book or unknown kind '%s': skipped", (long long)r->run.id, r->run.kind);
        r->exhausted = true;
        return 0;
    }
    return 1;
}

/*
 * Gives run r's tasks to the m requests listed in idx: queued and (SPRT)
 * new tasks in one statement, then (SPSA) new tasks one by one.  A
 * request left without a task stays in *pending and the run counts as
 * exhausted until the next refresh.  0 or -1.
 */
static int claim_from(Sched *s, SchedRun *r, const int *idx, int m, const int64_t *workers,
                      int64_t lease_ms, XqfMsg *out, bool *pending)
{
    int64_t *ws = malloc(sizeof *ws * (size_t)m);
    StoreLease *leases = malloc(sizeof *leases * (size_t)m);
    bool *given = malloc(sizeof *given * (size_t)m);
    int rc = ws && leases && given ? 0 : -1;
    for (int j = 0; rc == 0 && j < m; j++)
        ws[j] = workers[idx[j]];
    if (rc == 0)
        rc = store_claim_batch(s->store, r->run.id, ws, m, lease_ms, leases, given) < 0 ? -1 : 0;
    const RunKindOps *k = kind_of(r->run.kind);
    for (int j = 0; rc == 0 && j < m; j++) {
        if (!given[j] && k->new_task && !r->exhausted) {
            int got = k->new_task(s, r, ws[j], lease_ms, &leases[j]);
            if (got < 0)
                rc = -1;
            given[j] = got > 0;
        }
        if (!given[j]) {
            r->exhausted = true;
            r->run.leased--;                 /* counted when the request was assigned */
            r->pass -= stride(r, task_pairs(r));
            continue;
        }
        r->pass += stride(r, leases[j].pairs - task_pairs(r));   /* the task's own size */
        if (fill_task(r, &leases[j], &out[idx[j]]) != 0)
            rc = -1;
        pending[idx[j]] = false;
    }
    free(ws);
    free(leases);
    free(given);
    return rc;
}

/*
 * Run id as the scheduler has it into *r, or (paused or finished since)
 * loaded into *own for this once (run_free it when *r is own).  1, 0 (no
 * such run) or -1.
 */
static int cached_or_loaded(Sched *s, int64_t id, SchedRun *own, SchedRun **r)
{
    *r = NULL;
    for (int i = 0; i < s->count; i++)
        if (s->runs[i].run.id == id)
            return *r = &s->runs[i], 1;
    int rc = store_load_run(s->store, id, &own->run, false);
    if (rc == 1)
        *r = own;
    return rc;
}

/*
 * A replay audit for worker, into *out (a task message): the pair its run
 * played under the sets of its first task, from the run's book in the
 * run's order.  1 (given), 0 (none open for it) or -1.
 */
static int claim_audit(Sched *s, int64_t worker, const char *build, int64_t lease_ms, XqfMsg *out)
{
    StoreAuditLease a;
    int rc = store_claim_audit(s->store, worker, build, lease_ms, &a);
    if (rc <= 0)
        return rc;
    SchedRun own = { 0 }, *r;
    if ((rc = cached_or_loaded(s, a.run_id, &own, &r)) <= 0)
        return rc;
    rc = load_book(s, r);
    StoreLease l = { .task_id = STORE_AUDIT_BIT | a.audit, .token = a.token, .run_id = a.run_id,
                     .first_pair = a.pair, .pairs = 1 };
    snprintf(l.params0, sizeof l.params0, "%s", a.params0);
    snprintf(l.params1, sizeof l.params1, "%s", a.params1);
    if (rc == 0 && r->loaded.book_lines > 0 && fill_task(r, &l, out) != 0)
        rc = -1;
    bool given = rc == 0 && r->loaded.book_lines > 0;
    if (r == &own)
        run_free(&own);
    if (given)
        log_debug("replay audit %lld (run %lld, pair %lld) leased to worker %lld", (long long)a.audit,
                  (long long)a.run_id, (long long)a.pair, (long long)worker);
    return rc < 0 ? -1 : given;
}

int sched_check_records(Sched *s, int64_t run, int64_t first_pair, const uint8_t *games, size_t len, char *why,
                        size_t size)
{
    SchedRun own = { 0 }, *r;
    int rc = cached_or_loaded(s, run, &own, &r);
    if (rc <= 0)
        return rc < 0 ? -1 : 1;             /* no such run: the report is stale, nothing to check */
    rc = load_book(s, r);
    if (rc == 0) {
        /* a data run's games begin with random plies after the opening, flagged as opening moves */
        int random = run_kind_id(r->run.kind) == RUN_KIND_DATA ? r->loaded.random_plies : 0;
        size_t off = 0, rlen;
        const uint8_t *rec;
        XqfOpening o;
        int64_t pair = -1;
        const char *bad = NULL;
        rc = 1;
        for (int64_t k = 0; rc == 1 && xqf_games_next(games, len, &off, &rec, &rlen) > 0; k++) {
            const char *line = r->loaded.book[sched_opening(r->loaded.perm, r->loaded.book_lines, first_pair + k / 2)];
            if (pair != first_pair + k / 2 && xqf_opening_parse(line, &o) != 0)
                bad = "the task's opening does not parse";
            pair = first_pair + k / 2;
            if (bad || (bad = xqf_game_from_opening(rec, rlen, &o, random))) {
                snprintf(why, size, "game %lld (pair %lld): %s", (long long)(2 * first_pair + k), (long long)pair, bad);
                rc = 0;
            }
        }
    } else {
        rc = rc < 0 ? -1 : 1;               /* no book: the run serves no task, nothing to check against */
    }
    if (r == &own)
        run_free(&own);
    return rc;
}

/* Requests get replay audits first while some are open (counted every AUDITS_EVERY_MS when none). 0 or -1. */
static int claim_audits(Sched *s, const int64_t *workers, const char *const *builds, int n, int64_t lease_ms,
                        XqfMsg *out, bool *pending)
{
    int64_t now = clock_now_ms();
    if (s->open_audits <= 0 && now - s->audits_ms < AUDITS_EVERY_MS)
        return 0;
    if ((s->open_audits = store_open_audits(s->store)) < 0)
        return -1;
    s->audits_ms = now;
    /* a few workers without one (each had played the open pairs first) and the runs serve the batch */
    for (int i = 0, misses = 0; i < n && s->open_audits > 0 && misses < AUDIT_MISSES; i++) {
        int rc = claim_audit(s, workers[i], builds[i], lease_ms, &out[i]);
        if (rc < 0)
            return -1;
        misses += rc == 0;
        if (rc == 1) {
            pending[i] = false;
            s->open_audits--;
        }
    }
    return 0;
}

/* Notes that run r had nothing for a request of key at now (sched.h: fair share). */
static void starve(SchedRun *r, uint64_t key, int64_t now)
{
    int slot = 0;
    for (int i = 0; i < SCHED_STARVED_KEYS; i++) {
        if (r->starved[i].key == key) {
            slot = i;
            break;
        }
        if (r->starved[i].ms < r->starved[slot].ms)
            slot = i;
    }
    r->starved[slot].key = key;
    r->starved[slot].ms = now;
}

/* Whether r had nothing lately for a key other than key. */
static bool others_starve(const SchedRun *r, uint64_t key, int64_t now)
{
    for (int i = 0; i < SCHED_STARVED_KEYS; i++)
        if (r->starved[i].ms && r->starved[i].key != key && now - r->starved[i].ms < SCHED_STARVED_MS)
            return true;
    return false;
}

/* Whether r could serve this request were it not exhausted (its book read, its builds not refused, its threads). */
static bool could_serve(const Sched *s, const SchedRun *r, const SchedAsk *a)
{
    return r->loaded.done && kind_of(r->run.kind) && (!r->run.build_id[0] || strcmp(r->run.build_id, a->build) == 0) &&
           !refused_by(s, r, a->worker) && (a->concurrency <= 0 || r->run.threads <= a->concurrency);
}

/* The leases of asks[i]'s key with the requests of the batch given a task so far (pending false, or run_of set). */
static int64_t key_held(const SchedAsk *asks, int n, int i, const bool *pending, const int *run_of)
{
    int64_t held = asks[i].key_leases;
    for (int j = 0; j < n; j++)
        held += j != i && asks[j].key == asks[i].key && (!pending[j] || run_of[j] >= 0);
    return held;
}

int sched_claim_batch(Sched *s, const SchedAsk *asks, int n, int keys, int64_t lease_ms, XqfMsg *out)
{
    bool *pending = malloc(sizeof *pending * (size_t)(n > 0 ? n : 1));
    bool *capped = malloc(sizeof *capped * (size_t)(n > 0 ? n : 1));
    int *run_of = malloc(sizeof *run_of * (size_t)(n > 0 ? n : 1));
    int *idx = malloc(sizeof *idx * (size_t)(n > 0 ? n : 1));
    int64_t *workers = malloc(sizeof *workers * (size_t)(n > 0 ? n : 1));
    const char **builds = malloc(sizeof *builds * (size_t)(n > 0 ? n : 1));
    int rc = pending && capped && run_of && idx && workers && builds ? 0 : -1;
    int64_t now = clock_now_ms(), leased = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        pending[i] = true;
        capped[i] = false;
        run_of[i] = -1;
        workers[i] = asks[i].worker;
        builds[i] = asks[i].build;
    }
    for (int j = 0; j < s->count; j++)
        leased += s->runs[j].run.leased > 0 ? s->runs[j].run.leased : 0;
    /* a key's fair share of the leases: those of the active runs over the keys sharing them */
    int64_t share = keys > 1 ? (leased + keys - 1) / keys : leased;
    share = share > 1 ? share : 1;
    if (rc == 0)
        rc = claim_audits(s, workers, builds, n, lease_ms, out, pending);
    /*
     * Rounds: each pending request goes to the run it should be served from
     * (priority, fewest leases, age: counting the requests already given to
     * it), then each run serves its requests in one statement.  A run that
     * runs short is exhausted, and its unserved requests try the next round.
     * A run that another key waits on serves no key at its fair share.
     */
    for (bool assigned = true; rc == 0 && assigned;) {
        assigned = false;
        for (int i = 0; i < n; i++)
            run_of[i] = -1;
        for (int i = 0; rc == 0 && i < n; i++) {
            if (!pending[i])
                continue;
            bool over = key_held(asks, n, i, pending, run_of) >= share;
            SchedRun *best = NULL;
            for (int j = 0; rc == 0 && j < s->count; j++) {
                SchedRun *r = &s->runs[j];
                int ok = can_serve(s, r, &asks[i], now);
                if (ok > 0 && over && others_starve(r, asks[i].key, now)) {
                    capped[i] = true;
                    ok = 0;
                }
                if (ok < 0)
                    rc = -1;
                else if (ok && (!best || serve_order(&r, &best) < 0))
                    best = r;
            }
            if (best) {
                run_of[i] = (int)(best - s->runs);
                best->run.leased++;
                best->pass += stride(best, task_pairs(best));
                assigned = true;
            }
        }
        for (int j = 0; rc == 0 && j < s->count; j++) {
            int m = 0;
            for (int i = 0; i < n; i++)
                if (run_of[i] == j)
                    idx[m++] = i;
            if (m)
                rc = claim_from(s, &s->runs[j], idx, m, workers, lease_ms, out, pending);
        }
    }
    for (int i = 0; rc == 0 && i < n; i++) {
        if (!pending[i])
            continue;
        xqf_msg_init(&out[i], XQF_MSG_IDLE);
        out[i].u.idle.retry_ms = IDLE_RETRY_MS;
        /* a key below its share found nothing: the runs that could have served it are starved by it */
        if (capped[i] || key_held(asks, n, i, pending, run_of) >= share)
            continue;
        for (int j = 0; j < s->count; j++)
            if (s->runs[j].exhausted && could_serve(s, &s->runs[j], &asks[i]))
                starve(&s->runs[j], asks[i].key, now);
    }
    free(pending);
    free(capped);
    free(run_of);
    free(idx);
    free(workers);
    free(builds);
    return rc;
}

static SchedRun *find(Sched *s, int64_t id)
{
    for (int i = 0; i < s->count; i++)
        if (s->runs[i].run.id == id)
            return &s->runs[i];
    return NULL;
}

int sched_report(Sched *s, int64_t run, int64_t task, bool task_done)
{
    SchedRun *r = find(s, run);
    if (task_done) {
        /* a run missing from the cache (paused, finished by this very report) still gets its hook */
        StoreRun loaded = { .kind = "" };
        if (r)
            r->run.leased--;
        else if (store_load_run(s->store, run, &loaded, false) < 0)
            return -1;
        const RunKindOps *k = kind_of(r ? r->run.kind : loaded.kind);
        if (k && k->task_done && k->task_done(s, run, task) != 0)
            return -1;
    }
    for (int i = 0; i < s->ntouched; i++)
        if (s->touched[i] == run)
            return 0;
    if (s->ntouched < MAX_TOUCHED)
        s->touched[s->ntouched++] = run;
    else
        s->touched_overflow = true;
    return 0;
}

void sched_rollback(Sched *s)
{
    s->ntouched = 0;
    s->touched_overflow = false;
    s->stale = true;
}

int sched_progress(Sched *s, int64_t now_ms)
{
    if (now_ms - s->progress_ms < PROGRESS_EVERY_MS || (!s->ntouched && !s->touched_overflow))
        return 0;
    s->progress_ms = now_ms;
    int rc = 0;
    for (int i = 0; i < s->ntouched && rc == 0; i++) {
        SchedRun *r = find(s, s->touched[i]);
        const RunKindOps *k = r ? kind_of(r->run.kind) : NULL;
        if (k && k->progress)
            rc = k->progress(s, s->touched[i]);
    }
    if (s->touched_overflow)
        s->stale = true;                   /* the refresh checks every run */
    s->ntouched = 0;
    s->touched_overflow = false;
    return rc;
}

int sched_after_commit(Sched *s) { return sched_progress(s, clock_now_ms()); }

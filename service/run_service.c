/*
 * run_service.c - making a run (run_service.h): the rules of its settings
 * and the one transaction that writes it, for xqf-tune and xqf-web alike.
 */
#include "run_service.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "param_set.h"
#include "params.h"
#include "run_rules.h"
#include "store_builds.h"
#include "store_engines.h"
#include "store_nets.h"
#include "store_runs.h"
#include "store_users.h"
#include "store_spsa.h"
#include "store_web.h"

/* A setting's default (run_settings.def), a designated initializer of RunSpec: -1 for a derived one. */
#define SETTING_DEFAULT(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, ...) \
    .field = (required) == RUN_SETTING_DERIVED ? -1 : def,

RunSpec run_spec_default(RunKindId kind)
{
    return (RunSpec){ .kind = kind, .name = "", .test_params = "", .base_params = "",
                      RUN_SETTINGS_SPRT(SETTING_DEFAULT) RUN_SETTINGS_SPSA(SETTING_DEFAULT)
                      RUN_SETTINGS_EVERY_KIND(SETTING_DEFAULT) RUN_SETTINGS_THREADS(SETTING_DEFAULT)
                      RUN_SETTINGS_KEPT(SETTING_DEFAULT)
                      RUN_SETTINGS_OWN(SETTING_DEFAULT) .data = { .random_plies = 8, .max_score = 3000 } };
}

static void set_problem(RunProblem *p, const char *field, const char *fmt, va_list ap)
{
    snprintf(p->field, sizeof p->field, "%s", field);
    vsnprintf(p->why, sizeof p->why, fmt, ap);
}

/* A problem of field (RUN_BAD), or of no field (RUN_FAILED: the database, memory). */
__attribute__((format(printf, 3, 4))) static RunStatus problem_of(RunProblem *p, const char *field,
                                                                   const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_problem(p, field, fmt, ap);
    va_end(ap);
    return *field ? RUN_BAD : RUN_FAILED;
}

void run_book_free(RunBook *rb)
{
    for (int i = 0; rb->lines && i < rb->count; i++)
        free(rb->lines[i]);
    free(rb->lines);
    book_destroy(&rb->book);
    memset(rb, 0, sizeof *rb);
}

/* What was dropped from the book and its balance, one line to out (NULL: nowhere). */
static void book_notes(FILE *out, const char *path, const BookReport *rep, int kept)
{
    if (!out)
        return;
    fprintf(out, "%s: %d openings", path, kept);
    if (rep->duplicates)
        fprintf(out, ", %d duplicates dropped", rep->duplicates);
    if (rep->short_games)
        fprintf(out, ", %d games too short skipped", rep->short_games);
    if (rep->scored)
        fprintf(out, ", |score| %d-%d (mean %.1f) over %d scored", rep->score_min, rep->score_max, rep->score_mean,
                rep->scored);
    fprintf(out, ", SHA-256 %s\n", rep->sha256);
}

RunStatus run_book_read(const RunSpec *sp, RunBook *rb, RunProblem *problem)
{
    char err[512], line[BOOK_TEXT_MAX];
    const char *path = sp->book;
    memset(rb, 0, sizeof *rb);
    if (!path)
        return problem_of(problem, "book", "no book given");
    BookFormat format = book_format_of(path);
    if (sp->book_format && sp->book_format[0] && book_format_named(sp->book_format, &format) != 0)
        return problem_of(problem, "book_format", "'%.32s' is none of book, fen, epd, pgn", sp->book_format);
    if (sp->book_plies > 0 && format != BOOK_FORMAT_PGN)
        return problem_of(problem, "book_plies", "only a PGN book's games are cut at a ply (this book is read as %s)",
                          book_format_name(format));
    BookReport rep;
    rb->book = book_import(path, format, sp->book_plies, &rep, err, sizeof err);
    if (!rb->book && rep.problems && sp->book_notes)
        fputs(rep.problems, sp->book_notes);
    book_report_free(&rep);
    if (!rb->book)
        return problem_of(problem, "book", "%s", err);
    int n = book_size(rb->book);
    /* refused rather than cut: a run of a book's first openings would not be the run asked for */
    if (n > RUN_BOOK_LINES_MAX) {
        run_book_free(rb);
        return problem_of(problem, "book", "'%.200s' holds more than %d openings", path, RUN_BOOK_LINES_MAX);
    }
    if (!(rb->lines = calloc((size_t)n + 1, sizeof *rb->lines))) {
        run_book_free(rb);
        return problem_of(problem, "", "out of memory");
    }
    for (rb->count = 0; rb->count < n; rb->count++) {
        book_opening_text(rb->book, rb->count, line);
        if (!(rb->lines[rb->count] = strdup(line))) {
            run_book_free(rb);
            return problem_of(problem, "", "out of memory");
        }
    }
    book_notes(sp->book_notes, path, &rep, n);   /* rep's counts outlive its problems, freed above */
    StoreRunBook *f = &rb->facts;
    *f = (StoreRunBook){ .openings = n, .duplicates = rep.duplicates, .plies = format == BOOK_FORMAT_PGN ? sp->book_plies : 0,
                         .scored = rep.scored, .score_min = rep.score_min, .score_max = rep.score_max,
                         .score_mean = rep.score_mean };
    snprintf(f->format, sizeof f->format, "%s", book_format_name(format));
    memcpy(f->sha256, rep.sha256, sizeof f->sha256);
    const char *slash = strrchr(path, '/');
    rb->name = slash ? slash + 1 : path;
    return RUN_OK;
}

/* Adds a problem to the list when there is room; counts it in any case. */
typedef struct {
    RunProblem *out;
    int max, n;
} Problems;

__attribute__((format(printf, 3, 4))) static void add(Problems *ps, const char *field, const char *fmt, ...)
{
    if (ps->n < ps->max) {
        va_list ap;
        va_start(ap, fmt);
        set_problem(&ps->out[ps->n], field, fmt, ap);
        va_end(ap);
    }
    ps->n++;
}

bool run_spec_other_engine(const RunSpec *sp)
{
    return sp->engine && sp->engine[0] && strcmp(sp->engine, RUN_OUR_ENGINE) != 0;
}

/* The engine of sp's side, k being sp's kind (run_spec_side_engine). */
static const char *side_engine(const RunKind *k, const RunSpec *sp, int side)
{
    if (side && k->two_sides && sp->base_engine && sp->base_engine[0])
        return sp->base_engine;
    return run_spec_other_engine(sp) ? sp->engine : RUN_OUR_ENGINE;
}

static bool side_other(const RunKind *k, const RunSpec *sp, int side)
{
    return strcmp(side_engine(k, sp, side), RUN_OUR_ENGINE) != 0;
}

const char *run_spec_side_engine(const RunSpec *sp, int side)
{
    return side_engine(run_kind_get(sp->kind), sp, side);
}

bool run_spec_side_other(const RunSpec *sp, int side)
{
    return side_other(run_kind_get(sp->kind), sp, side);
}

/* run_problems of sp, k being its kind. */
static int problems(const RunKind *k, const RunSpec *sp, RunProblem *out, int max)
{
    Problems ps = { .out = out, .max = max, .n = 0 };
    char why[512];
    bool data = sp->kind == RUN_KIND_DATA, depth = data && sp->data.depth > 0;
    if (!rule_name(sp->name ? sp->name : "", why, sizeof why))
        add(&ps, "name", "%s", why);
    if ((sp->nodes > 0) + (sp->base_ms > 0) + depth != 1)
        add(&ps, "tc", "give exactly one of %s", data ? "a time control, nodes and a depth per move"
                                                      : "a time control and nodes per move");
    if (k->two_sides && sp->base1_ms > 0 && sp->base_ms <= 0)
        add(&ps, "tc_base", "time odds give the second side a clock of its own: give the first side's clock too "
                            "(a time control, not nodes)");
    if (sp->ref_nps > 0 && sp->base_ms <= 0)
        add(&ps, "ref_nps", "scaling scales a clock: give a time control (fixed nodes need no scaling)");
    if (data && sp->pairs_per_task > RUN_DATA_PAIRS_PER_TASK_MAX)
        add(&ps, "pairs_per_task", "at most %d for a data run (a result carries its games)",
            RUN_DATA_PAIRS_PER_TASK_MAX);
    else if (!rule_pairs_per_task(sp->pairs_per_task, sp->keep_scores, why, sizeof why))
        add(&ps, "pairs_per_task", "%s", why);
    if (sp->replay_share >= 0 && !rule_threads_replay(sp->threads, sp->replay_share, why, sizeof why))
        add(&ps, "replay", "%s", why);
    if (k->sprt && !rule_sprt_bounds(sp->elo0, sp->elo1, why, sizeof why))
        add(&ps, "elo1", "%s", why);
    if (k->two_sides && sp->test_build && sp->test_build == sp->base_build)
        add(&ps, "base_build", "the same build as the test's");
    if (k->two_sides && sp->test_ref && sp->base_ref && strcmp(sp->test_ref, sp->base_ref) == 0)
        add(&ps, "base_ref", "the same ref as the test's");
    /* an SPSA run's one build plays both sides: theta + c_k flip against theta - c_k flip */
    if (run_spec_other_engine(sp) && k->spsa) {
        if (!sp->test_build && !sp->test_ref)
            add(&ps, "engine", "engine %s plays its builds: give a ref (or a build) to tune", sp->engine);
    } else if (k->spsa && sp->test_ref)
        add(&ps, "ref", "a ref goes with another engine than ours (its build is tuned); ours tunes the workers' "
                        "engine");
    else if (run_spec_other_engine(sp) && !k->two_sides)
        add(&ps, "engine", "another engine than ours plays sprt, games and spsa runs of its builds, not %s runs",
            k->name);
    else if (k->two_sides && side_other(k, sp, 0) && !(sp->test_build || sp->test_ref))
        add(&ps, "engine", "engine %s plays its builds: give the test side a ref (or a build)", sp->engine);
    if (sp->base_engine && sp->base_engine[0] && !k->two_sides)
        add(&ps, "base_engine", "a %s run plays one engine: a base engine is a side's of sprt and games runs", k->name);
    else if (k->two_sides && side_other(k, sp, 1) && !(sp->base_build || sp->base_ref))
        add(&ps, strcmp(side_engine(k, sp, 1), side_engine(k, sp, 0)) ? "base_engine" : "engine",
            "engine %s plays its builds: give the base side a ref (or a build)", side_engine(k, sp, 1));
    if (k->spsa && (sp->count < 1 || sp->count > STORE_SPSA_MAX || !sp->params))
        add(&ps, "params", "from 1 to %d parameters", STORE_SPSA_MAX);
    else if (k->spsa) {
        /* a task's set "fixed,Name=value,..." must fit its field whatever the values (an int: 11 characters) */
        size_t len = sp->test_params ? strlen(sp->test_params) : 0;
        for (int i = 0; i < sp->count; i++)
            len += strlen(sp->params[i].name) + (sp->params[i].is_float ? XQF_SET_VALUE_MAX + 2 : 13);
        /* each name as a task's set carries it (an identifier, not the worker's Hash or Threads) */
        for (int i = 0; i < sp->count; i++) {
            char item[STORE_NAME_MAX + 8];
            snprintf(item, sizeof item, "%s=0", sp->params[i].name);
            if (!xqf_set_check(item, why, sizeof why)) {
                add(&ps, "params", "%s", why);
                break;
            }
        }
        if (len > STORE_PARAMS_MAX)
            add(&ps, "params", "the tuned names are too long together: a task's set holds %d bytes", STORE_PARAMS_MAX);
    }
    return ps.n;
}

int run_problems(const RunSpec *sp, RunProblem *out, int max)
{
    return problems(run_kind_get(sp->kind), sp, out, max);
}

RunStatus run_check(const RunSpec *sp, RunProblem *problem)
{
    return run_problems(sp, problem, 1) ? RUN_BAD : RUN_OK;
}

/*
 * A setting into the member of the store's spec that keeps it
 * (run_settings.def), an initializer; a derived one with whether it was
 * given (its field -1: left to the database).
 */
#define SETTING_GIVEN_0(store, v)
#define SETTING_GIVEN_1(store, v)
#define SETTING_GIVEN_2(store, v) .store##_given = (v) >= 0,
#define SETTING_GIVEN_RUN_SETTING_DERIVED(store, v) SETTING_GIVEN_2(store, v)
#define SETTING_COPY(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, store, ...) \
    .store = sp->field, SETTING_GIVEN_##required(store, sp->field)
/* A text setting's two numbers, likewise. */
#define TEXT_SETTING_COPY(name, option, arg, help, form_field, label, form_help, parse, format, first, second) \
    .first = sp->first, .second = sp->second,
#define TEXT_SETTING_SET(name, option, arg, help, form_field, label, form_help, parse, format, first, second) \
    st.first = sp->first, st.second = sp->second;

/* The store's spec of the settings every kind has (k: sp's kind), with the book's lines. */
static StoreSprtSpec store_spec(const RunKind *k, const RunSpec *sp, const RunBook *rb)
{
    StoreSprtSpec st = {
        .name = sp->name ? sp->name : "", .test_params = sp->test_params ? sp->test_params : "",
        .base_params = sp->base_params ? sp->base_params : "", .book_name = rb->name,
        .book = (const char *const *)rb->lines, .book_lines = rb->count, .book_facts = &rb->facts, .nodes = sp->nodes,
        RUN_TEXT_SETTINGS_EVERY_KIND(TEXT_SETTING_COPY) RUN_SETTINGS_COLUMNS(SETTING_COPY)
        .adjudication = &sp->adjudication,
        .test_build = sp->test_build, .base_build = sp->base_build, .test_net = sp->test_net,
        .base_net = sp->base_net, .ref_nps = sp->ref_nps > 0 ? sp->ref_nps : 0, .game_scores = sp->keep_scores,
        .engine = side_engine(k, sp, 0), .base_engine = side_engine(k, sp, 1),
        /* owner and approval state are the spec's, written by the one insert (xqf_create_run) */
        .owner = sp->owner, .pending = sp->pending,
    };
    /* time odds: a kind of two sides', when its second side has a clock of its own */
    if (k->two_sides && sp->base1_ms > 0) {
        RUN_TEXT_SETTINGS_TWO_SIDES(TEXT_SETTING_SET)
    }
    return st;
}

/* The run's row by its kind k: a kind's own settings with it (an SPSA run's parameters, a data run's filter). 0 or -1. */
static int insert_run(Store *s, const RunKind *k, const RunSpec *sp, const StoreSprtSpec *st, int64_t *id)
{
    switch (k->id) {
    case RUN_KIND_SPSA: {
        StoreSpsaSpec spsa = { .run = *st, RUN_SETTINGS_SPSA(SETTING_COPY) .params = sp->params, .count = sp->count };
        return store_create_spsa(s, &spsa, id);
    }
    case RUN_KIND_DATA: {
        StoreDataSpec data = { .run = *st, .settings = sp->data };
        return store_create_data(s, &data, id);
    }
    default: return store_create_run(s, k, st, "{}", id);
    }
}

/* run_prepare of sp, k being its kind. */
static RunStatus prepare(const RunKind *k, const RunSpec *sp, RunBook *rb, StoreSprtSpec *st, RunProblem *problem)
{
    memset(rb, 0, sizeof *rb);
    RunStatus status = problems(k, sp, problem, 1) ? RUN_BAD : RUN_OK;
    if (status == RUN_OK && (status = run_book_read(sp, rb, problem)) == RUN_OK)
        *st = store_spec(k, sp, rb);
    return status;
}

RunStatus run_prepare(const RunSpec *sp, RunBook *rb, StoreSprtSpec *st, RunProblem *problem)
{
    return prepare(run_kind_get(sp->kind), sp, rb, st, problem);
}

/* ---- a run's name when none is given ------------------------------------------------- */

/* text into out, cut to RUN_NAME_MADE_MAX bytes (and size) at a character's first byte, "..." ending a cut one. */
static void name_cut(const char *text, char *out, size_t size)
{
    size_t max = size - 1 < RUN_NAME_MADE_MAX ? size - 1 : RUN_NAME_MADE_MAX, len = strlen(text);
    if (len <= max) {
        memcpy(out, text, len + 1);
        return;
    }
    size_t keep = max - 3;
    while (keep > 0 && ((unsigned char)text[keep] & 0xc0) == 0x80)
        keep--;
    memcpy(out, text, keep);
    memcpy(out + keep, "...", 4);
}

void run_refs_name(const char *test, const char *base, const char *subject, char *out, size_t size)
{
    char whole[3 * STORE_TEXT_MAX];
    snprintf(whole, sizeof whole, "%.*s vs %.*s%s%.*s", STORE_TEXT_MAX, test, STORE_TEXT_MAX, base,
             subject && *subject ? ": " : "", STORE_TEXT_MAX, subject ? subject : "");
    name_cut(whole, out, size);
}

/* The value set gives name (a copy into value), false when it gives none. */
static bool set_value(const char *set, const char *name, char *value, size_t size)
{
    size_t nlen = strlen(name);
    for (const char *p = set; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        p += strspn(p, " ");
        if (strncmp(p, name, nlen) == 0 && p[nlen] == '=') {
            snprintf(value, size, "%.*s", (int)strcspn(p + nlen + 1, ", "), p + nlen + 1);
            return true;
        }
    }
    return false;
}

int run_set_changes(const char *test, const char *base, RunSetChange *out, int max)
{
    int n = 0;
    const char *sets[2] = { test ? test : "", base ? base : "" };
    for (int side = 0; side < 2; side++)
        for (const char *p = sets[side]; p && *p && n < max; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
            p += strspn(p, " ");
            size_t len = strcspn(p, "=,");
            if (len == 0 || len >= sizeof out->name || p[len] != '=')
                continue;
            RunSetChange *c = &out[n];
            memset(c, 0, sizeof *c);
            snprintf(c->name, sizeof c->name, "%.*s", (int)len, p);
            bool seen = false;
            for (int i = 0; i < n && !seen; i++)
                seen = strcmp(out[i].name, c->name) == 0;
            if (seen)
                continue;
            set_value(sets[0], c->name, c->test, sizeof c->test);
            set_value(sets[1], c->name, c->base, sizeof c->base);
            const ParamInfo *info = params_find(c->name);
            if (info)
                snprintf(c->def, sizeof c->def, "%d", info->def);
            /* a side that leaves it plays the default: the same as a side that names the default */
            const char *t = c->test[0] ? c->test : c->def, *b = c->base[0] ? c->base : c->def;
            c->differs = strcmp(t, b) != 0;
            n++;
        }
    return n;
}

void run_sets_name(const char *test, const char *base, char *out, size_t size)
{
    enum { CHANGES_MAX = 64 };
    RunSetChange c[CHANGES_MAX];
    int n = run_set_changes(test, base, c, CHANGES_MAX);
    /* every difference fits: CHANGES_MAX of a name and a value each */
    char sides[2][CHANGES_MAX * (sizeof c->name + sizeof c->test + 2)] = { "", "" }, whole[sizeof sides + 8];
    for (int side = 0; side < 2; side++) {
        size_t len = 0;
        for (int i = 0; i < n; i++) {
            const char *v = side ? c[i].base : c[i].test;
            if (c[i].differs && v[0])
                len += (size_t)snprintf(sides[side] + len, sizeof sides[side] - len, "%s%s=%s", len ? "," : "",
                                        c[i].name, v);
        }
    }
    if (!sides[0][0] && !sides[1][0])
        whole[0] = '\0';
    else
        snprintf(whole, sizeof whole, "%s vs %s", sides[0][0] ? sides[0] : "default", sides[1][0] ? sides[1] : "default");
    name_cut(whole, out, size);
}

/*
 * The name of a run given none, from what it tests (k: sp's kind): a test
 * of refs by them ("T vs B": the builder adds the test commit's subject
 * once it has read it, xqf_run_changes), a test of two sets by the values
 * they differ in; "" for the rest (builds, nets: the pages say them).
 */
static void made_name(const RunKind *k, const RunSpec *sp, char *out, size_t size)
{
    char build[32];
    out[0] = '\0';
    if (!k->two_sides)
        return;
    if (sp->test_ref && (sp->base_ref || sp->base_build)) {
        snprintf(build, sizeof build, "build %" PRId64, sp->base_build);
        run_refs_name(sp->test_ref, sp->base_ref ? sp->base_ref : build, NULL, out, size);
    } else if (sp->base_ref && sp->test_build) {
        snprintf(build, sizeof build, "build %" PRId64, sp->test_build);
        run_refs_name(build, sp->base_ref, NULL, out, size);
    } else if (!sp->test_ref && !sp->base_ref && !sp->test_build && !sp->base_build && sp->test_net == sp->base_net)
        run_sets_name(sp->test_params, sp->base_params, out, size);
}

/* run_engine_nets, k being sp's kind. */
static RunStatus engine_nets(const RunKind *k, const EngineRecord *e, const RunSpec *sp, RunProblem *problem)
{
    const int64_t nets[2] = { sp->test_net, sp->base_net };
    const char *fields[2] = { "test_net", "base_net" };
    for (int i = 0; i < (k->two_sides ? 2 : 1); i++) {
        if (strcmp(side_engine(k, sp, i), e->name) != 0)
            continue;   /* the other side's engine (a run of two engines): its own record judges it */
        if (nets[i] == STORE_NET_NONE)
            return problem_of(problem, fields[i], "none is our engine's hand-crafted evaluation: engine %s plays "
                                                  "a net or its own", e->name);
        if (nets[i] && !e->net_option[0])
            return problem_of(problem, fields[i], "engine %s has no net option to load a net by (xqf-tune engine "
                                                  "modify %s --net-option NAME)", e->name, e->name);
        if (!nets[i] && e->needs_net)
            return problem_of(problem, fields[i], "engine %s plays only with a net (needs_net): give each side "
                                                  "one (xqf-tune net add)", e->name);
    }
    return RUN_OK;
}

RunStatus run_engine_nets(const EngineRecord *e, const RunSpec *sp, RunProblem *problem)
{
    return engine_nets(run_kind_get(sp->kind), e, sp, problem);
}

/*
 * Whether each net named (ids[i] > 0; 0 and STORE_NET_NONE name none) may
 * play: a net uploaded from the dashboard waits for an admin's approval
 * (063_net_uploads.sql), and until then no run names it (xqf_create_run
 * refuses it too; this says which and why, per field).
 */
static RunStatus nets_approved(Store *s, const int64_t *ids, const char *const *fields, int n, RunProblem *problem)
{
    StoreNet *net = malloc(sizeof *net);
    RunStatus status = net ? RUN_OK : problem_of(problem, "", "out of memory");
    for (int i = 0; i < n && status == RUN_OK; i++) {
        char key[24];
        if (ids[i] <= 0)
            continue;
        snprintf(key, sizeof key, "%lld", (long long)ids[i]);
        int found = store_load_net(s, key, net);
        if (found < 0)
            status = problem_of(problem, "", "the database cannot be read");
        else if (found > 0 && !net->approved)
            status = problem_of(problem, fields[i], "net %lld (%s) waits for an admin's approval (xqf-web /nets): "
                                "no run may name it before", (long long)ids[i], net->name);
    }
    free(net);
    return status;
}

/* A new run's line of the events log: waiting or active, and the refs it waits for. */
static void created_detail(const RunSpec *sp, char *out, size_t size)
{
    size_t n;
    if (sp->test_ref || sp->base_ref)
        n = (size_t)snprintf(out, size, "%stest ref %s, base ref %s to build",
                             sp->pending ? "pending approval; then " : "", sp->test_ref ? sp->test_ref : "-",
                             sp->base_ref ? sp->base_ref : "-");
    else
        n = (size_t)snprintf(out, size, "%s", sp->pending ? "pending approval" : "active");
    if (sp->preset && sp->preset[0] && n < size)
        snprintf(out + n, size - n, "; from preset %s of engine %s", sp->preset, run_spec_side_engine(sp, 0));
}

RunStatus run_create(Store *s, const RunSpec *sp, int64_t *id, RunProblem *problem)
{
    /* the kind's flags, looked up once: every rule, the store's spec and the insert take it */
    const RunKind *k = run_kind_get(sp->kind);
    RunBook rb;
    StoreSprtSpec st;
    const int64_t nets[2] = { sp->test_net, sp->base_net };
    const char *const net_fields[2] = { "test_net", "base_net" };
    RunStatus status = nets_approved(s, nets, net_fields, 2, problem);
    if (status != RUN_OK)
        return status;
    if ((status = prepare(k, sp, &rb, &st, problem)) != RUN_OK)
        return status;
    char made[RUN_NAME_MADE_MAX + 1];
    if (!st.name[0]) {
        made_name(k, sp, made, sizeof made);
        st.name = made;
    }
    /* each side's engine by its record: the base side's may be another (041), ours has none to check against */
    for (int i = 0; i < (k->two_sides ? 2 : 1); i++) {
        const char *name = side_engine(k, sp, i);
        if (!side_other(k, sp, i) || (i && strcmp(name, side_engine(k, sp, 0)) == 0))
            continue;
        EngineRecord *e = malloc(sizeof *e);
        int found = e ? store_engine_load(s, name, e) : -1;
        status = found == 1 ? engine_nets(k, e, sp, problem)
                 : found == 0 ? problem_of(problem, i ? "base_engine" : "engine",
                                           "no engine named '%.64s' (xqf-tune engine list)", name)
                              : problem_of(problem, "", "the database cannot be read");
        free(e);
        if (status != RUN_OK) {
            run_book_free(&rb);
            return status;
        }
    }
    /* an SPSA run of another engine waits for the one build of its ref, which then plays both sides */
    const char *refs[2] = { k->two_sides || k->spsa ? sp->test_ref : NULL, k->two_sides ? sp->base_ref : NULL };
    int rc = store_begin(s);
    if (rc == 0)
        rc = insert_run(s, k, sp, &st, id);
    if (rc == 0 && (refs[0] || refs[1]))
        rc = store_await_builds(s, *id, refs[0], refs[1]);
    char detail[2 * STORE_REF_MAX + ENGINE_NAME_MAX + 160];
    created_detail(sp, detail, sizeof detail);
    if (rc == 0)
        rc = store_web_audit(s, sp->actor ? sp->actor : "xqf-tune", *id, "create", detail);
    if (rc == 0)
        rc = store_commit(s);
    else
        store_rollback(s);
    run_book_free(&rb);
    return rc == 0 ? RUN_OK : problem_of(problem, "", "the database refused the run or cannot be reached");
}

/* ---- chains ---------------------------------------------------------------------- */

RunStatus run_chain_stage(RunChainSpec *c, StoreChainKind kind, const char *sprt, int64_t max_pairs,
                          const StoreChainStage *train, RunProblem *problem)
{
    const char *field = kind == CHAIN_BUILD ? "then_build" : kind == CHAIN_TRAIN ? "then_train" : "then_sprt";
    if (c->count + (kind == CHAIN_TRAIN ? 2 : 1) > STORE_CHAIN_STAGES - 1)
        return problem_of(problem, field, "at most %d stages after the first run", STORE_CHAIN_STAGES - 1);
    bool sprts = false;
    for (int i = 0; i < c->count; i++)
        sprts |= c->stages[i].kind == CHAIN_SPRT;
    if (kind == CHAIN_BUILD && sprts)
        return problem_of(problem, field, "a build comes before the SPRTs it feeds");
    if (kind == CHAIN_TRAIN && sprts)
        return problem_of(problem, field, "a training comes before the SPRTs of its net");
    StoreChainStage st = { .kind = kind, .alpha = 0.05, .beta = 0.05, .max_pairs = max_pairs };
    if (kind == CHAIN_SPRT) {
        char tc[64], why[256];
        int end = 0;
        if (!sprt || sscanf(sprt, "%lf,%lf,%63[^,]%n", &st.elo0, &st.elo1, tc, &end) != 3 || sprt[end] ||
            !isfinite(st.elo0) || !isfinite(st.elo1))
            return problem_of(problem, field, "'%.64s' is not ELO0,ELO1,TC (0,5,10+0.1 or 0,5,5000n)", sprt ? sprt : "");
        if (!rule_sprt_bounds(st.elo0, st.elo1, why, sizeof why))
            return problem_of(problem, field, "'%.64s': %s", sprt, why);
        size_t len = strlen(tc);
        char *stop;
        if (len > 1 && tc[len - 1] == 'n') {
            st.nodes = strtoll(tc, &stop, 10);
            if (stop != tc + len - 1 || st.nodes < 1 || st.nodes > (INT64_C(1) << 40))
                return problem_of(problem, field, "'%.64s' is not a node count (5000n)", tc);
        } else if (!rule_tc(tc, &st.base_ms, &st.inc_ms, why, sizeof why))
            return problem_of(problem, field, "'%.64s': %s", sprt, why);
    }
    if (kind == CHAIN_TRAIN && train)
        st.epochs = train->epochs, st.batch = train->batch, st.lambda = train->lambda, st.lr = train->lr;
    c->stages[c->count++] = st;
    if (kind == CHAIN_TRAIN)
        c->stages[c->count++] = (StoreChainStage){ .kind = CHAIN_NET };
    return RUN_OK;
}

char *run_chain_start_set(const RunSpec *spec)
{
    const char *fixed = spec->test_params ? spec->test_params : "";
    size_t size = strlen(fixed) + (size_t)spec->count * (STORE_NAME_MAX + 24) + 1;
    char *set = malloc(size);
    if (!set)
        return NULL;
    size_t len = (size_t)snprintf(set, size, "%s", fixed);
    for (int i = 0; i < spec->count; i++)
        len += (size_t)snprintf(set + len, size - len, "%s%s=%lld", len ? "," : "", spec->params[i].name,
                                llround(spec->params[i].start));
    return set;
}

/* The order of a chain's stages by its first run's kind. RUN_OK or RUN_BAD with *problem. */
static RunStatus chain_stages_check(const RunSpec *first, const RunChainSpec *c, RunProblem *problem)
{
    bool data = first->kind == RUN_KIND_DATA, sprt = false, train = false;
    if (!data && first->kind != RUN_KIND_SPSA)
        return problem_of(problem, "kind", "a chain starts with an SPSA run or a data run, not a %s run",
                          run_kind_get(first->kind)->name);
    if (run_spec_other_engine(first) || first->test_ref)
        return problem_of(problem, "engine", "a chain tunes, builds and tests our engine (another engine's SPSA is "
                                             "a run of its own)");
    for (int i = 0; i < c->count; i++) {
        StoreChainKind k = c->stages[i].kind;
        if (k == CHAIN_BUILD && data)
            return problem_of(problem, "then_build", "a build follows an SPSA run (a net chain trains a net)");
        if (k == CHAIN_TRAIN && !data)
            return problem_of(problem, "then_train", "a training follows a data run (an SPSA chain builds)");
        sprt |= k == CHAIN_SPRT;
        train |= k == CHAIN_TRAIN;
    }
    if (!sprt)
        return problem_of(problem, "then_sprt", "give at least one SPRT stage, ELO0,ELO1,TC");
    if (data && !train)
        return problem_of(problem, "then_train", "a net chain trains its net before its SPRTs");
    if (data && c->base_build)
        return problem_of(problem, "base_build", "a net chain's SPRTs play the workers' engine");
    if (!data && c->base_net)
        return problem_of(problem, "base_net", "an SPSA chain's SPRTs play the SPSA run's net on both sides");
    return RUN_OK;
}

RunStatus run_chain_create(Store *s, const RunSpec *first, const RunChainSpec *chain, int64_t *id,
                           RunProblem *problem)
{
    const int64_t nets[3] = { first->test_net, first->base_net, chain->base_net };
    const char *const net_fields[3] = { "test_net", "base_net", "base_net" };
    RunStatus status = nets_approved(s, nets, net_fields, 3, problem);
    if (status == RUN_OK)
        status = chain_stages_check(first, chain, problem);
    if (status == RUN_OK && chain->base_build) {
        /* the SPRTs' base side plays the start set on the base build: checked against the build's parameters */
        char *base = run_chain_start_set(first), why[512];
        StoreBuild b;
        bool listed = true;
        int rc = base ? rule_registered_build_set(s, chain->base_build, base, &b, &listed, why, sizeof why) : -1;
        free(base);
        if (!base)
            status = problem_of(problem, "", "out of memory");
        else if (rc == -1)
            status = problem_of(problem, "", "%s", why);
        else if (rc == -2)
            status = problem_of(problem, "base_build", "%s", why);
        else if (rc != 1)
            status = problem_of(problem, "base_build", "the SPRTs' base plays the start set: %s", why);
    }
    if (status != RUN_OK)
        return status;
    RunBook book;
    StoreSprtSpec st;
    if ((status = run_prepare(first, &book, &st, problem)) != RUN_OK)
        return status;
    const RunSpec *sp = first;
    StoreSpsaSpec spsa = { .run = st, RUN_SETTINGS_SPSA(SETTING_COPY) .params = sp->params, .count = sp->count };
    StoreDataSpec data = { .run = st, .settings = first->data };
    char detail[2 * STORE_REF_MAX + ENGINE_NAME_MAX + 160];
    created_detail(first, detail, sizeof detail);
    StoreChainSpec c = { .name = chain->name ? chain->name : "", .base_build = chain->base_build,
                         .base_net = chain->base_net, .stages = chain->stages, .count = chain->count,
                         .actor = first->actor, .detail = detail };
    if (first->kind == RUN_KIND_SPSA)
        c.spsa = &spsa;
    else
        c.data = &data;
    if (store_create_chain(s, &c, id) != 0)
        status = problem_of(problem, "", "the database refused the chain or cannot be reached");
    run_book_free(&book);
    return status;
}

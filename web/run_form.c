/*
 * run_form.c - a run's form, or a chain's, read into the run service's
 * spec: each field by xqf-tune's rule, a message per field; what the
 * service then checks as a whole (run_problems) is its caller's.
 */
#include "run_form.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "param_set.h"
#include "params.h"
#include "run_presets.h"
#include "run_rules.h"
#include "store_builds.h"

/*
 * A set field by what plays it, with xqf-tune's rules (run_rules.h): on a
 * registered build (build > 0), the parameters that build listed; on a git
 * ref not built yet (ref), its syntax only (param_set.h), the builder
 * checking it against the build it makes (xqf-tune build --serve); on the
 * workers' own engine, the engine's table.
 */
static void check_set(Store *s, Errors *er, const char *field, const char *set, int64_t build, const char *ref)
{
    char why[320];
    StoreBuild b;
    bool listed;
    bool ok = build ? rule_registered_build_set(s, build, set, &b, &listed, why, sizeof why) == 1
              : ref ? xqf_set_check(set, why, sizeof why)
                    : rule_set(set, why, sizeof why);
    if (!ok)
        field_error(er, field, "%s", why);
}

/*
 * A setting of run_settings.def from its form field into *v, by its
 * option's bounds: true when given and good.  A required field must be
 * given; an optional one left empty keeps the default, a derived one -1
 * (both of run_spec_default: the field is not written).  A field of an INT
 * is read as int64 and stored into the setting's own type, a PERCENT's
 * fraction from its percent.
 */
static bool setting_int(Errors *er, const Form *f, const OptSpec spec, const char *field, int required, int64_t *v)
{
    const char *text = form_get(f, field);
    if (required != RUN_SETTING_REQUIRED && !(text && *text))
        return false;
    return rule_int(er, f, spec, field, v);
}

static bool setting_real(Errors *er, const Form *f, const OptSpec spec, const char *field, int required, double *v)
{
    const char *text = form_get(f, field);
    if (required != RUN_SETTING_REQUIRED && !(text && *text))
        return false;
    return rule_number(er, f, spec, field, v);
}

#define SETTING_VALUE_INT int64_t
#define SETTING_VALUE_REAL double
#define SETTING_VALUE_PERCENT double
#define SETTING_READ_INT setting_int
#define SETTING_READ_REAL setting_real
#define SETTING_READ_PERCENT setting_real
#define READ_SETTING(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, ...) \
    {                                                                                                            \
        SETTING_VALUE_##TYPE v_;                                                                                 \
        if (SETTING_READ_##TYPE(er, f, (OptSpec)RUN_SETTING_SPEC(field, TYPE, option, arg, def, lo, hi, help),   \
                                form_field, required, &v_))                                                      \
            sp->field = RUN_SETTING_FROM_##TYPE(v_);                                                             \
    }

/* A text setting of run_settings.def parsed from its form field, when given, into *sp's two numbers. */
#define READ_TEXT_SETTING(name, option, arg, help, form_field, label, form_help, parse, format, first, second) \
    {                                                                                                            \
        const char *text_ = form_get(f, form_field);                                                             \
        char why_[320];                                                                                          \
        if (text_ && *text_ && !parse(text_, &sp->first, &sp->second, why_, sizeof why_))                        \
            field_error(er, form_field, "%s", why_);                                                             \
    }

/* A kind's own settings (RUN_SETTINGS_KINDS), read on its form only. */
#define READ_OWN_SETTINGS(ID, sp)                                                                                \
    if ((sp)->kind == RUN_KIND_##ID) {                                                                           \
        RUN_SETTINGS_OWN_##ID(READ_SETTING)                                                                      \
    }

/*
 * The fields every run has (time control or nodes, pairs per task,
 * priority, name, seed) and, for the kinds that play a test's games,
 * threads, clock scaling, kept scores and the replay share.  A field a
 * form of before it leaves out keeps xqf-tune's default.
 */
static void common_fields(const Form *f, RunSpec *sp, Errors *er)
{
    const char *nodes = form_get(f, "nodes");
    int64_t v;
    if (nodes && *nodes && rule_int(er, f, (OptSpec)RULE_NODES, "nodes", &v))
        sp->nodes = v;
    RUN_TEXT_SETTINGS_EVERY_KIND(READ_TEXT_SETTING)
    RUN_SETTINGS_EVERY_KIND(READ_SETTING)
    RUN_SETTINGS_KINDS(READ_OWN_SETTINGS, sp)
    const char *name = form_get(f, "name");
    sp->name = name ? name : "";
    if (!run_kind_get(sp->kind)->threads)
        return;
    RUN_SETTINGS_THREADS(READ_SETTING)
    rule_int_opt(er, f, (OptSpec)RULE_REF_NPS, "ref_nps", &sp->ref_nps);
    sp->keep_scores = ticked(f, "keep_scores");
}

/* An engine build id field: empty (the workers' own engine) or a build xqf-tune build registered. */
static int64_t build_field(Store *s, const Form *f, const char *field, Errors *er)
{
    const char *text = form_get(f, field);
    int64_t id;
    StoreBuild b;
    if (!text || !*text)
        return 0;
    if (!int_in(text, 1, INT64_MAX, &id))
        field_error(er, field, "a build id (a positive number; see xqf-tune build)%s", NULL);
    else if (store_load_build(s, id, &b) != 1)
        field_error(er, field, "no build %s (see xqf-tune build)", text);
    else
        return id;
    return 0;
}

/* A git ref field (NULL when empty): its syntax only; the builder resolves and builds it (never this thread). */
static const char *ref_field(const Form *f, const char *field, const char *build_field_name, Errors *er)
{
    const char *ref = form_get(f, field), *build = form_get(f, build_field_name);
    char why[320];
    if (!ref || !*ref)
        return NULL;
    if (!rule_git_ref(ref, why, sizeof why))
        field_error(er, field, "%s", why);
    else if (build && *build)
        field_error(er, field, "give a git ref or a build id for this side, not both%s", NULL);
    return ref;
}

/* The two sides of an SPRT or a games run: sets, builds, refs, the base side's own clock. */
static void two_sides_fields(Store *s, const Form *f, RunSpec *sp, Errors *er)
{
    sp->test_params = form_get(f, "test") ? form_get(f, "test") : "";
    sp->base_params = form_get(f, "base") ? form_get(f, "base") : "";
    sp->test_build = build_field(s, f, "test_build", er);
    sp->base_build = build_field(s, f, "base_build", er);
    sp->test_ref = ref_field(f, "test_ref", "test_build", er);
    sp->base_ref = ref_field(f, "base_ref", "base_build", er);
    sp->engine = form_get(f, "engine");      /* empty: ours; an unknown name is the run service's problem */
    sp->base_engine = form_get(f, "base_engine");   /* empty: the run's engine (xqf-tune's --base-engine) */
    check_set(s, er, "test", sp->test_params, sp->test_build, sp->test_ref);
    check_set(s, er, "base", sp->base_params, sp->base_build, sp->base_ref);
    RUN_TEXT_SETTINGS_TWO_SIDES(READ_TEXT_SETTING)
}

/* The SPRT's bounds and pair cap. */
static void sprt_fields(const Form *f, RunSpec *sp, Errors *er)
{
    RUN_SETTINGS_SPRT(READ_SETTING)
}

/*
 * SPSA: the tuned parameters, as xqf-tune spsa new takes them: a pasted
 * spec (field "spec": Fishtest's lines, rule_spsa_spec, a bad line named
 * by number) or the named parameters (or every tunable) from the engine's
 * table (--params), not both.  Another engine (field "engine", spsa new
 * --engine) tunes its options of a spec only, on the build of its git ref
 * (field "ref"): the builder builds it (never this thread) and checks the
 * spec's names against the options the build lists, as spsa new --engine
 * --ref does once it has built.
 */
static void spsa_fields(const Form *f, RunSpec *sp, StoreSpsaParam *params, Errors *er)
{
    char why[512];
    rule_int(er, f, (OptSpec)RULE_PAIRS(""), "pairs", &sp->max_pairs);
    RUN_SETTINGS_SPSA(READ_SETTING)
    const char *names = form_get(f, "params"), *spec = form_get(f, "spec");
    sp->engine = form_get(f, "engine");   /* empty: ours; an unknown name is the run service's problem */
    sp->test_ref = ref_field(f, "ref", "", er);
    bool ours = !run_spec_other_engine(sp);
    sp->params = params;
    if (!ours && names && *names) {
        snprintf(why, sizeof why, "the parameter names are our engine's: engine %.64s's options come from a spec",
                 sp->engine);
        field_error(er, "params", "%s", why);
    } else if (spec && *spec) {
        if (names && *names)
            field_error(er, "params", "give the parameters or a spec, not both%s", "");
        else if (!rule_spsa_spec(spec, ours, params, &sp->count, why, sizeof why))
            field_error(er, "spec", "%s", why);
    } else if (!ours) {
        snprintf(why, sizeof why, "engine %.64s's options come from a spec: paste its lines", sp->engine);
        field_error(er, "spec", "%s", why);
    } else {
        Params defaults;
        params_default(&defaults);
        if (!rule_spsa_params(names && *names ? names : NULL, &defaults, params, &sp->count, why, sizeof why))
            field_error(er, "params", "%s", why);
    }
}

/* A data run: the set both sides play, its games, a fixed depth, random plies and the filter, as data new. */
static void data_fields(const Form *f, RunSpec *sp, Errors *er)
{
    char why[320];
    int64_t v;
    sp->test_params = form_get(f, "params") ? form_get(f, "params") : "";
    if (!rule_set(sp->test_params, why, sizeof why))
        field_error(er, "params", "%s", why);
    if (rule_int(er, f, (OptSpec)RULE_DATA_GAMES, "games", &v))
        sp->max_pairs = (v + 1) / 2;
    StoreDataSettings *d = &sp->data;
    v = 0;
    rule_int_opt(er, f, (OptSpec)RULE_DEPTH, "depth", &v);
    d->depth = (int)v;
    v = d->random_plies;
    rule_int_opt(er, f, (OptSpec)RULE_RANDOM_PLIES, "random_plies", &v);
    d->random_plies = (int)v;
    v = d->skip_plies;
    rule_int_opt(er, f, (OptSpec)RULE_SKIP_PLIES, "skip_plies", &v);
    d->skip_plies = (int)v;
    v = d->max_score;
    rule_int_opt(er, f, (OptSpec)RULE_MAX_SCORE, "max_score", &v);
    d->max_score = (int)v;
    d->keep_check = ticked(f, "keep_check");
    d->keep_captures = ticked(f, "keep_captures");
}

/* The form of a run kind into *sp (params: an SPSA run's parameters' room); messages per field in *er. */
void run_form_spec(Store *s, const Form *f, RunSpec *sp, StoreSpsaParam *params, Errors *er)
{
    const RunKind *k = run_kind_get(sp->kind);
    common_fields(f, sp, er);
    if (k->two_sides)
        two_sides_fields(s, f, sp, er);
    if (k->sprt)
        sprt_fields(f, sp, er);
    else if (k->spsa)
        spsa_fields(f, sp, params, er);
    else if (k->two_sides)
        rule_int(er, f, (OptSpec)RULE_PAIRS(""), "pairs", &sp->max_pairs);
    else
        data_fields(f, sp, er);
}

/*
 * A chain's stages from its form (chain_fields, web/pages/new_run.c), in
 * xqf-tune chain new's order: the build or the training, then the SPRTs,
 * a line each; the run service says what is wrong with them.
 */
void run_form_chain(Store *s, const Form *f, const RunSpec *first, RunChainSpec *c, Errors *er)
{
    RunProblem problem;
    int64_t max_pairs = 50000;
    rule_int_opt(er, f, (OptSpec)RULE_SPRT_MAX_PAIRS, "sprt_max_pairs", &max_pairs);
    c->name = first->name;
    if (first->kind == RUN_KIND_SPSA) {
        c->base_build = build_field(s, f, "base_build", er);
        if (ticked(f, "then_build") && run_chain_stage(c, CHAIN_BUILD, NULL, 0, NULL, &problem) != RUN_OK)
            field_error(er, problem.field, "%s", problem.why);
    } else {
        static const OptSpec TRAIN[] = { RULE_CHAIN_TRAIN };
        int64_t epochs = 10, batch = 16384;
        double lambda = 0.75, lr = 0.001;
        rule_int_opt(er, f, TRAIN[0], "epochs", &epochs);
        rule_int_opt(er, f, TRAIN[1], "batch", &batch);
        rule_number_opt(er, f, TRAIN[2], "lambda", &lambda);
        rule_number_opt(er, f, TRAIN[3], "lr", &lr);
        StoreChainStage train = { .epochs = (int)epochs, .batch = (int)batch, .lambda = lambda, .lr = lr };
        if (run_chain_stage(c, CHAIN_TRAIN, NULL, 0, &train, &problem) != RUN_OK)
            field_error(er, problem.field, "%s", problem.why);
    }
    const char *lines = form_get(f, "then_sprt");
    for (const char *p = lines ? lines : ""; *p;) {
        size_t len = strcspn(p, "\r\n");
        char line[128];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line - 1 ? len : sizeof line - 1), p);
        if (line[strspn(line, " \t")] &&
            run_chain_stage(c, CHAIN_SPRT, line + strspn(line, " \t"), max_pairs, NULL, &problem) != RUN_OK) {
            field_error(er, problem.field, "%s", problem.why);
            break;
        }
        p += len;
        p += strspn(p, "\r\n");
    }
}

/* Whether the form gives a value to the field of a preset's key (the preset's setting is then overridden). */
static bool form_typed(const char *key, void *ctx)
{
    char name[FORM_NAME_MAX + 1];
    run_preset_field(key, name, sizeof name);
    const char *v = form_get(ctx, name);
    return v && *v;
}

/* Sets field name of f to value (replacing an empty one, else added). 0, or -1 (no room, out of memory). */
static int form_put(Form *f, const char *name, const char *value)
{
    int i = 0;
    while (i < f->count && strcmp(f->name[i], name) != 0)
        i++;
    if (i == f->count && f->count == FORM_FIELDS_MAX)
        return -1;
    char *v = strdup(value);
    if (!v)
        return -1;
    if (i == f->count)
        snprintf(f->name[f->count++], sizeof f->name[0], "%s", name);
    else
        free(f->value[i]);
    f->value[i] = v;
    return 0;
}

int run_form_preset(Store *s, const Form *f, RunKindId kind, Form *merged, StorePreset *p, Errors *er)
{
    const char *name = form_get(f, "preset"), *engine = form_get(f, "engine");
    if (!name || !*name)
        return 0;
    const RunKind *k = run_kind_get(kind);
    /* a kind without an engine field plays ours (data new has no --engine) */
    if (!engine || !*engine || (!k->two_sides && !k->spsa))
        engine = RUN_OUR_ENGINE;
    StorePreset *ps = NULL;
    int n = store_preset_list(s, engine, &ps);
    const StorePreset *found = n > 0 ? run_preset_find(ps, n, name) : NULL;
    char why[720];
    if (n < 0)
        field_error(er, "preset", "%s", "the presets cannot be read now");
    else if (!found) {
        char names[400];
        run_preset_names(ps, n, names, sizeof names);
        snprintf(why, sizeof why, "engine %.64s has no preset '%.40s' (its presets: %s)", engine, name, names);
        field_error(er, "preset", "%s", why);
    } else
        *p = *found;
    free(ps);
    if (!found)
        return -1;
    memset(merged, 0, sizeof *merged);
    int failed = 0;
    for (int i = 0; i < f->count && !failed; i++)
        failed = form_put(merged, f->name[i], f->value[i]);
    for (int i = 0; i < p->count && !failed; i++) {
        const char *key = p->settings[i].key;
        char field_name[FORM_NAME_MAX + 1];
        if (!run_preset_applies(key, kind) || run_preset_is_book(key) || run_preset_displaced(key, form_typed, (void *)f))
            continue;
        run_preset_field(key, field_name, sizeof field_name);
        failed = form_put(merged, field_name, p->settings[i].value);
    }
    if (failed) {
        form_free(merged);
        field_error(er, "preset", "%s", "the form with the preset's settings is too large");
        return -1;
    }
    return 1;
}

void run_form_preset_book(const StorePreset *p, RunSpec *sp)
{
    for (int i = 0; i < p->count; i++) {
        const char *key = p->settings[i].key, *v = p->settings[i].value;
        if (strcmp(key, "book") == 0)
            sp->book = v;
        else if (strcmp(key, "book-format") == 0)
            sp->book_format = v;
        else if (strcmp(key, "book-plies") == 0)
            sp->book_plies = atoi(v);    /* checked against its bounds when the preset was set */
    }
}

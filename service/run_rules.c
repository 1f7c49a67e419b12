/*
 * run_rules.c - the rules of a new run's settings (run_rules.h), shared by
 * xqf-tune and xqf-web.
 */
#include "run_rules.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "param_set.h"
#include "store_builds.h"
#include "store_spsa.h"

/* Every setting of run_settings.def by its RunSpec field, each group after the other. */
#define SETTING_ENTRY(field, ...) { #field, RUN_SETTING_SPEC(field, __VA_ARGS__) },
static const struct {
    const char *field;
    OptSpec spec;
} SETTINGS[] = { RUN_SETTINGS_SPRT(SETTING_ENTRY) RUN_SETTINGS_SPSA(SETTING_ENTRY) RUN_SETTINGS_EVERY_KIND(SETTING_ENTRY)
                 RUN_SETTINGS_THREADS(SETTING_ENTRY) RUN_SETTINGS_OWN(SETTING_ENTRY) };
#undef SETTING_ENTRY

const OptSpec *run_setting_option(const char *field)
{
    for (size_t i = 0; i < sizeof SETTINGS / sizeof SETTINGS[0]; i++)
        if (strcmp(SETTINGS[i].field, field) == 0)
            return &SETTINGS[i].spec;
    assert(!"a setting of run_settings.def");
    return NULL;
}

bool rule_tc(const char *text, int64_t *base_ms, int64_t *inc_ms, char *why, size_t size)
{
    char *end;
    double base = strtod(text, &end), inc = 0;
    if (end != text && *end == '+') {
        const char *p = end + 1;
        inc = strtod(p, &end);
        if (end == p)
            end = (char *)"x";
    }
    if (end == text || *end || !(base > 0 && base <= 86400) || !(inc >= 0 && inc <= 3600)) {
        snprintf(why, size, "'%s' is not BASE+INC in seconds (10+0.1)", text);
        return false;
    }
    *base_ms = (int64_t)llround(base * 1000);
    *inc_ms = (int64_t)llround(inc * 1000);
    return true;
}

void rule_tc_text(int64_t base_ms, int64_t inc_ms, char *out, size_t size)
{
    snprintf(out, size, "%g+%g", (double)base_ms / 1000, (double)inc_ms / 1000);
}

bool rule_threads_replay(int64_t threads, double replay_share, char *why, size_t size)
{
    if (threads <= 1 || replay_share <= 0)
        return true;
    snprintf(why, size, "a run of %lld threads per engine is not reproducible (Lazy SMP's threads race), so it "
             "has no replay audit: leave --replay out or give 0", (long long)threads);
    return false;
}

bool rule_sprt_bounds(double elo0, double elo1, char *why, size_t size)
{
    if (elo0 < elo1)
        return true;
    snprintf(why, size, "elo0 (%g) must be below elo1 (%g)", elo0, elo1);
    return false;
}

bool rule_pairs_per_task(int64_t pairs, bool scores, char *why, size_t size)
{
    int most = scores ? RULE_SCORED_PAIRS_PER_TASK_MAX : RULE_GAMES_PAIRS_PER_TASK_MAX;
    if (pairs <= most)
        return true;
    snprintf(why, size, "at most %d%s (a result carries its pairs' games)", most,
             scores ? " when the games keep their scores" : "");
    return false;
}

bool rule_name(const char *name, char *why, size_t size)
{
    if (strlen(name) < STORE_TEXT_MAX)
        return true;
    snprintf(why, size, "at most %d bytes", STORE_TEXT_MAX - 1);
    return false;
}

bool rule_set(const char *set, char *why, size_t size)
{
    Params p;
    params_default(&p);
    return params_apply_list(&p, set, why, size) == 0;
}

bool rule_build_set(const char *set, const StoreBuildParam *params, int count, const char *build, char *why,
                    size_t size)
{
    XqfSetItem item;
    int rc;
    while ((rc = xqf_set_next(&set, &item, why, size)) > 0) {
        const StoreBuildParam *p = NULL;
        for (int i = 0; i < count && !p; i++)
            if (strcmp(params[i].name, item.name) == 0)
                p = &params[i];
        if (!p) {
            snprintf(why, size, "unknown parameter '%s' in %s", item.name, build);
            return false;
        }
        if (item.is_decimal) {
            snprintf(why, size, "parameter %s is a spin option (an integer) in %s, got the decimal '%s'", p->name,
                     build, item.text);
            return false;
        }
        if (item.value < p->min || item.value > p->max) {
            snprintf(why, size, "parameter %s needs an integer from %d to %d in %s, got '%d'", p->name, p->min,
                     p->max, build, item.value);
            return false;
        }
    }
    return rc == 0;
}

int rule_registered_build_set(Store *s, int64_t build, const char *set, StoreBuild *b, bool *listed, char *why,
                              size_t size)
{
    StoreBuildParam *params = NULL;
    int found = store_load_build(s, build, b);
    int count = found == 1 ? store_build_params(s, build, listed, &params) : -1;
    if (found == 0) {
        snprintf(why, size, "no build %" PRId64 " (see xqf-tune build)", build);
        return -2;
    }
    if (count < 0) {
        snprintf(why, size, "cannot read the builds");
        return -1;
    }
    char where[STORE_NAME_MAX + 48];
    snprintf(where, sizeof where, "build %" PRId64 " (%s)", build, b->build_id);
    bool ok = *listed ? rule_build_set(set, params, count, where, why, size) : rule_set(set, why, size);
    free(params);
    return ok;
}

bool rule_git_ref(const char *ref, char *why, size_t size)
{
    const char *problem = NULL;
    if (!*ref)
        problem = "empty";
    else if (strlen(ref) > STORE_REF_MAX)
        problem = "longer than 255 bytes";
    else if (*ref == '-')
        problem = "it starts with '-'";
    else if (strstr(ref, ".."))
        problem = "it holds '..' (one commit, not a range)";
    for (const unsigned char *c = (const unsigned char *)ref; *c && !problem; c++)
        if (*c <= ' ' || *c == 0x7f || strchr(":?*[\\", *c))
            problem = "it holds a blank, a control character or one of : ? * [ \\";
    if (!problem)
        return true;
    snprintf(why, size, "'%.64s%s' is not a git ref (a branch, tag or commit): %s", ref,
             strlen(ref) > 64 ? "..." : "", problem);
    return false;
}

/* The table's entry of a parameter as an SPSA parameter starting at value. */
static void from_table(const ParamInfo *info, int value, StoreSpsaParam *q)
{
    snprintf(q->name, sizeof q->name, "%s", info->name);
    q->start = q->theta = value, q->min = info->min, q->max = info->max;
    q->c_end = info->c_end, q->r_end = info->r_end;
}

bool rule_spsa_params(const char *list, const Params *start, StoreSpsaParam *params, int *count, char *why,
                      size_t size)
{
    *count = 0;
    if (!list) {
        for (int i = 0; i < PARAM_COUNT && *count < STORE_SPSA_MAX; i++)
            if (PARAM_INFO[i].c_end > 0)
                from_table(&PARAM_INFO[i], params_value(start, &PARAM_INFO[i]), &params[(*count)++]);
        return true;
    }
    char *copy = strdup(list);
    if (!copy) {
        snprintf(why, size, "out of memory");
        return false;
    }
    bool ok = true;
    for (char *save = NULL, *name = strtok_r(copy, ", ", &save); name && ok; name = strtok_r(NULL, ", ", &save)) {
        const ParamInfo *info = params_find(name);
        bool twice = false;
        for (int i = 0; info && i < *count; i++)
            twice |= strcmp(params[i].name, info->name) == 0;
        if (!info)
            snprintf(why, size, "unknown parameter '%.64s'", name);
        else if (!(info->c_end > 0))
            snprintf(why, size, "%s is a switch (c_end 0): tune it with a spec file (xqf-tune spsa new --spec)",
                     info->name);
        else if (twice)
            snprintf(why, size, "%s given twice", info->name);
        else if (*count >= STORE_SPSA_MAX)
            snprintf(why, size, "more than %d parameters", STORE_SPSA_MAX);
        else {
            from_table(info, params_value(start, info), &params[(*count)++]);
            continue;
        }
        ok = false;
    }
    free(copy);
    if (ok && *count == 0) {
        snprintf(why, size, "no parameter named");
        ok = false;
    }
    return ok;
}

bool rule_spsa_spec_lines(const XqfSpsaSpecLine *lines, int n, bool ours, StoreSpsaParam *params, char *why,
                          size_t size)
{
    for (int i = 0; i < n; i++) {
        const XqfSpsaSpecLine *q = &lines[i];
        const ParamInfo *info = ours ? params_find(q->name) : NULL;
        /* our engine's parameters are ints (engine/params.def); another engine's float goes as a decimal */
        if (q->is_float && ours) {
            snprintf(why, size, "%s: our engine's parameters are integers: a float line is another engine's "
                                "option (give the type int)", q->name);
            return false;
        }
        if (info && !(q->min >= info->min && q->max <= info->max)) {
            snprintf(why, size, "%s: need %d <= min <= start <= max <= %d, min < max", q->name, info->min,
                     info->max);
            return false;
        }
        snprintf(params[i].name, sizeof params[i].name, "%s", info ? info->name : q->name);
        params[i].start = params[i].theta = q->start, params[i].min = q->min, params[i].max = q->max;
        params[i].c_end = q->c_end, params[i].r_end = q->r_end, params[i].is_float = q->is_float;
    }
    return true;
}

/* Whether our engine's table has the option (a spec's check of names for our engine). */
static bool our_option(const char *name, void *ctx)
{
    (void)ctx;
    return params_find(name) != NULL;
}

bool rule_spsa_spec(const char *text, bool ours, StoreSpsaParam *params, int *count, char *why, size_t size)
{
    *count = 0;
    XqfSpsaSpecLine *lines = calloc(STORE_SPSA_MAX, sizeof *lines);
    if (!lines) {
        snprintf(why, size, "out of memory");
        return false;
    }
    int n = xqf_spsa_spec_parse(text, lines, STORE_SPSA_MAX, ours ? our_option : NULL, NULL, why, size);
    bool ok = n > 0 && rule_spsa_spec_lines(lines, n, ours, params, why, size);
    if (n == 0)
        snprintf(why, size, "the spec names no parameter");
    free(lines);
    if (ok)
        *count = n;
    return ok;
}

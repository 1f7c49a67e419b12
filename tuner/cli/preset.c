/*
 * preset.c - xqf-tune preset set|list|remove: an engine's presets
 * (068_engine_presets.sql, run_presets.h), named settings of new runs, and
 * --preset NAME of the new commands, which gives a preset's settings
 * before the options typed.  Only an operator sets or removes one (as
 * engines are changed); each change writes its line of the events log in
 * the same statement.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "run_presets.h"
#include "store_engines.h"

#define PRESET_USAGE                                                                                          \
    "Usage: xqf-tune preset set ENGINE NAME [--OPTION VALUE ...] [OPTION=VALUE ...] [--db CONNINFO]\n"        \
    "       xqf-tune preset list [ENGINE] [--db CONNINFO]\n"                                                  \
    "       xqf-tune preset remove ENGINE NAME [--db CONNINFO]\n"                                             \
    "\n"                                                                                                      \
    "An engine's presets: named settings of new runs kept with its record, as\n"                             \
    "OpenBench keeps STC, LTC and SMP per engine (ours, xqf, has STC, LTC, SMP and\n"                       \
    "regression).  A preset's settings are the options below (the new commands'\n"                          \
    "options of the same names), given as options or as OPTION=VALUE (tc=10+0.1).\n"                        \
    "`xqf-tune sprt new --preset NAME` (and games, spsa, data, chain and gauntlet\n"                         \
    "new) takes the preset of its --engine (default xqf) first: an option typed\n"                          \
    "beside it overrides its setting (--nodes or --tc typed replaces its clock),\n"                         \
    "and a run takes only the settings its command has as the same option (the\n"                           \
    "SPRT's bounds and cap an SPRT's only); the dashboard's new-run form fills its\n"                        \
    "fields from it.\n"                                                                                      \
    "set: the preset made, or replaced whole; each value is parsed as its option\n"                          \
    "is (type, bounds, a clock's syntax), and a bad value, an unknown option, a\n"                           \
    "setting given twice, both --tc and --nodes, or an unknown engine is refused\n"                          \
    "with its problem and exit status 2, nothing stored.  list: the presets of\n"                            \
    "ENGINE, or of every engine.  remove: one preset.  set and remove are an\n"                              \
    "operator's (xqf-tune connected as the schema's owner) and each writes its\n"                            \
    "line of the events log (xqf-tune log --of engine).\n"

/* The options of the command: every one a preset may hold, then --db. */
static OptSpec OPTIONS[RUN_PRESET_OPTIONS_MAX + 2];
static const OptTable TABLE = {
    .program = "xqf-tune", .spec = OPTIONS, .max_positional = 3 + STORE_PRESETS_MAX, .usage = PRESET_USAGE,
};

static void make_options(void)
{
    int n = run_preset_options(OPTIONS, RUN_PRESET_OPTIONS_MAX);
    /* a preset holds what is given: no default to show */
    for (int i = 0; i < n; i++)
        OPTIONS[i].def = NULL;
    OPTIONS[n] = (OptSpec)CLI_DB_OPTION;
    OPTIONS[n + 1] = (OptSpec)OPTS_END;
}

/* Adds key's value to p, refusing a key given twice or too many settings (run_preset_check says the rest). Exit status. */
static int add_setting(StorePreset *p, const char *key, size_t klen, const char *value)
{
    if (p->count == STORE_PRESETS_MAX)
        return cli_fail(CLI_USAGE, "preset set: at most %d settings", STORE_PRESETS_MAX);
    if (klen > STORE_PRESET_KEY_MAX || strlen(value) > STORE_PRESET_VALUE_MAX)
        return cli_fail(CLI_USAGE, "preset set: --%.*s: too long", (int)(klen > 40 ? 40 : klen), key);
    StorePresetSetting *st = &p->settings[p->count++];
    snprintf(st->key, sizeof st->key, "%.*s", (int)klen, key);
    snprintf(st->value, sizeof st->value, "%s", value);
    return CLI_OK;
}

/* preset set ENGINE NAME: the options given, then OPTION=VALUE arguments, checked, then stored. */
static int preset_set(const Opts *o)
{
    StorePreset *p = calloc(1, sizeof *p);
    if (!p)
        return cli_fail(CLI_FAIL, "out of memory");
    int status = strlen(o->positional[1]) <= ENGINE_NAME_MAX ? CLI_OK
                 : cli_fail(CLI_USAGE, "ENGINE: at most %d bytes", ENGINE_NAME_MAX);
    snprintf(p->engine, sizeof p->engine, "%s", o->positional[1]);
    snprintf(p->name, sizeof p->name, "%.*s", (int)sizeof p->name - 1, o->positional[2]);
    if (status == CLI_OK && strlen(o->positional[2]) > STORE_PRESET_NAME_MAX)
        status = cli_fail(CLI_USAGE, "NAME: at most %d bytes", STORE_PRESET_NAME_MAX);
    for (const OptSpec *spec = OPTIONS; status == CLI_OK && spec->name; spec++)
        if (strcmp(spec->name, "--db") != 0 && opts_given(o, spec->name))
            status = add_setting(p, spec->name + 2, strlen(spec->name + 2), opts_text(o, spec->name));
    for (int i = 3; status == CLI_OK && i < o->npositional; i++) {
        const char *arg = o->positional[i], *eq = strchr(arg, '=');
        if (!eq || eq == arg)
            status = cli_fail(CLI_USAGE, "preset set: '%s' is no OPTION=VALUE (tc=10+0.1)", cli_shown(arg));
        else
            status = add_setting(p, arg, (size_t)(eq - arg), eq + 1);
    }
    char why[512];
    if (status == CLI_OK && !run_preset_check(p, why, sizeof why))
        status = cli_fail(CLI_USAGE, "preset set: %s", why);
    Store *s = NULL;
    if (status == CLI_OK)
        status = cli_open_operator(o, "preset set", "sets presets", &s);
    char actor[STORE_NAME_MAX + 1];
    cli_actor(actor, sizeof actor);
    int rc = status == CLI_OK ? store_preset_set(s, p, actor) : 1;
    if (rc < 0)
        status = cli_fail(CLI_FAIL, "cannot record the preset");
    else if (rc == 0)
        status = cli_fail(CLI_USAGE, "preset set: no engine '%s' (xqf-tune engine list)", cli_shown(p->engine));
    if (status == CLI_OK)
        printf("Preset: %s %s\n", cli_shown(p->engine), cli_shown(p->name));
    store_destroy(&s);
    free(p);
    return status;
}

static int preset_list(const Opts *o)
{
    if (o->npositional > 2)
        return cli_fail(CLI_USAGE, "preset list: one ENGINE at most");
    Store *s = NULL;
    int status = cli_open_db(o, &s);
    StorePreset *ps = NULL;
    int n = status == CLI_OK ? store_preset_list(s, o->npositional == 2 ? o->positional[1] : NULL, &ps) : 0;
    if (n < 0)
        status = cli_fail(CLI_FAIL, "cannot read the presets");
    for (int i = 0; i < n; i++) {
        printf("%s %s", cli_shown(ps[i].engine), cli_shown(ps[i].name));
        for (int j = 0; j < ps[i].count; j++)
            printf(" --%s %s", ps[i].settings[j].key, cli_shown(ps[i].settings[j].value));
        printf("  (%s, %s)\n", cli_shown(ps[i].updated_by), ps[i].updated_at);
    }
    free(ps);
    store_destroy(&s);
    return status;
}

static int preset_remove(const Opts *o)
{
    Store *s = NULL;
    int status = cli_open_operator(o, "preset remove", "removes presets", &s);
    char actor[STORE_NAME_MAX + 1];
    cli_actor(actor, sizeof actor);
    int rc = status == CLI_OK ? store_preset_remove(s, o->positional[1], o->positional[2], actor) : 1;
    if (rc < 0)
        status = cli_fail(CLI_FAIL, "cannot remove the preset");
    else if (rc == 0)
        status = cli_fail(CLI_USAGE, "preset remove: engine '%s' has no preset '%s' (xqf-tune preset list)",
                          cli_shown(o->positional[1]), cli_shown(o->positional[2]));
    if (status == CLI_OK)
        printf("Removed: %s %s\n", cli_shown(o->positional[1]), cli_shown(o->positional[2]));
    store_destroy(&s);
    return status;
}

int tune_cmd_preset(int argc, char **argv)
{
    make_options();
    Opts o;
    int status = cli_parse(&o, &TABLE, argc - 1, argv + 1);
    if (status != CLI_GO)
        return status;
    const char *sub = o.npositional ? o.positional[0] : "";
    bool set = strcmp(sub, "set") == 0;
    for (const OptSpec *spec = OPTIONS; !set && spec->name; spec++)
        if (strcmp(spec->name, "--db") != 0 && opts_given(&o, spec->name))
            return cli_fail(CLI_USAGE, "preset %s takes no settings (they go with set)", sub);
    if (strcmp(sub, "list") == 0)
        return preset_list(&o);
    if ((set && o.npositional < 3) || (strcmp(sub, "remove") == 0 && o.npositional != 3))
        return cli_fail(CLI_USAGE, "preset %s: give the ENGINE and the preset's NAME (see xqf-tune preset --help)",
                        sub);
    if (set)
        return preset_set(&o);
    if (strcmp(sub, "remove") == 0)
        return preset_remove(&o);
    return cli_fail(CLI_USAGE, "preset: set, list or remove (see xqf-tune preset --help)");
}

/* Whether the command's table has the option and it was given (opts_given asks only a table's own). */
static bool typed(const char *key, void *ctx)
{
    const Opts *o = ctx;
    char name[STORE_PRESET_KEY_MAX + 3];
    snprintf(name, sizeof name, "--%s", key);
    for (const OptSpec *spec = o->table->spec; spec->name; spec++)
        if (strcmp(spec->name, name) == 0)
            return opts_given(o, name);
    return false;
}

static bool table_has(const Opts *o, const char *name)
{
    for (const OptSpec *spec = o->table->spec; spec->name; spec++)
        if (strcmp(spec->name, name) == 0)
            return true;
    return false;
}

/*
 * Whether the command's option of key is the option a preset holds under
 * that name: of the same type and bounds (chain new's --threads is its
 * trainer's, 1-256, not the engines' of RULE_THREADS), so that a setting
 * goes only where it means what it meant when it was checked.
 */
static bool same_option(const Opts *o, const char *key, const char *name)
{
    const OptSpec *p = run_preset_option(key);
    for (const OptSpec *spec = o->table->spec; p && spec->name; spec++)
        if (strcmp(spec->name, name) == 0)
            return spec->type == p->type && spec->imin == p->imin && spec->imax == p->imax &&
                   spec->rmin == p->rmin && spec->rmax == p->rmax;
    return false;
}

/* A preset's settings as options: "--key" each, and the values (a block after the arguments' pointers). */
typedef struct {
    char option[STORE_PRESETS_MAX][STORE_PRESET_KEY_MAX + 3];
    StorePreset p;
} PresetText;

static int preset_args(const Opts *o, RunKindId kind, const char *engine, int argc, char **argv, char ***out,
                       int *out_argc)
{
    *out = NULL;
    *out_argc = argc;
    if (!opts_given(o, "--preset"))
        return CLI_OK;
    if (!engine)
        engine = table_has(o, "--engine") ? opts_text(o, "--engine") : RUN_OUR_ENGINE;
    const char *name = opts_text(o, "--preset");
    Store *s = NULL;
    StorePreset *ps = NULL;
    int status = cli_open_db(o, &s);
    int n = status == CLI_OK ? store_preset_list(s, engine, &ps) : 0;
    store_destroy(&s);
    if (n < 0)
        status = cli_fail(CLI_FAIL, "cannot read the presets");
    const StorePreset *p = status == CLI_OK ? run_preset_find(ps, n, name) : NULL;
    if (status == CLI_OK && !p) {
        char names[512];
        run_preset_names(ps, n, names, sizeof names);
        status = cli_fail(CLI_USAGE, "--preset: engine %s has no preset '%s' (its presets: %s; xqf-tune preset "
                          "list)", cli_shown(engine), cli_shown(name), names);
    }
    /* the arguments typed, then each of the preset's settings this command takes and the user did not type */
    size_t room = (size_t)argc + 2 * STORE_PRESETS_MAX;
    char **args = status == CLI_OK ? malloc(sizeof *args * room + sizeof(PresetText)) : NULL;
    if (status == CLI_OK && !args)
        status = cli_fail(CLI_FAIL, "out of memory");
    if (status == CLI_OK) {
        /* the options' text lives after the pointers, in the same block: one free */
        PresetText *t = (PresetText *)(args + room);
        t->p = *p;
        int k = 0;
        for (int i = 0; i < argc; i++)
            args[k++] = argv[i];
        for (int i = 0; i < t->p.count; i++) {
            StorePresetSetting *st = &t->p.settings[i];
            snprintf(t->option[i], sizeof t->option[i], "--%s", st->key);
            if (same_option(o, st->key, t->option[i]) && run_preset_applies(st->key, kind) &&
                !run_preset_displaced(st->key, typed, (void *)o)) {
                args[k++] = t->option[i];
                args[k++] = st->value;
            }
        }
        *out = args;
        *out_argc = k;
    }
    free(ps);
    return status;
}

int cli_parse_preset_of(Opts *o, const OptTable *t, int argc, char **argv, RunKindId kind, const char *engine,
                        char ***held)
{
    *held = NULL;
    int n;
    int status = preset_args(o, kind, engine, argc, argv, held, &n);
    return status != CLI_OK ? status : *held ? cli_parse(o, t, n, *held) : CLI_GO;
}

int cli_parse_preset(Opts *o, const OptTable *t, int argc, char **argv, RunKindId kind, char ***held)
{
    return cli_parse_preset_of(o, t, argc, argv, kind, NULL, held);
}

/*
 * run_presets.c - an engine's presets (run_presets.h): what a preset may
 * name, from the settings' table and a short list by hand, its check and
 * how a run takes it.
 */
#include "run_presets.h"

#include <stdio.h>
#include <string.h>

#include "book.h"
#include "run_rules.h"

/*
 * Each option a preset may name: its spec (the option's own, so that a
 * value is parsed as the option parses it), its form field (NULL: by the
 * option's name), and whose it is: any kind's, an SPRT's, or a kind's own
 * (RUN_SETTINGS_KINDS).  The settings' table gives its lines (SPSA's
 * schedule left out); the hand list is what the table does not hold yet,
 * and shrinks as it does.
 */
typedef enum { FOR_ANY, FOR_SPRT, FOR_OWN } Whose;

#define HAND(...) { __VA_ARGS__, NULL, FOR_ANY },
#define TABLE_ENTRY(whose, field, TYPE, option, arg, def, lo, hi, help, form_field, ...)                        \
    { RUN_SETTING_SPEC(field, TYPE, option, arg, def, lo, hi, help), form_field, whose },
#define SPRT_ENTRY(...) TABLE_ENTRY(FOR_SPRT, __VA_ARGS__)
#define ANY_ENTRY(...) TABLE_ENTRY(FOR_ANY, __VA_ARGS__)
#define OWN_ENTRY(...) TABLE_ENTRY(FOR_OWN, __VA_ARGS__)
#define TEXT_ENTRY(name, option, arg, help_text, form_field, ...)                                              \
    { { option, OPT_TEXT, arg, NULL, .help = help_text }, form_field, FOR_ANY },

static const struct {
    OptSpec spec;
    const char *field;
    Whose whose;
} ENTRIES[] = {
    RUN_TEXT_SETTINGS_EVERY_KIND(TEXT_ENTRY)  /* the clock, "or" */
    HAND(RULE_NODES)
    RUN_TEXT_SETTINGS_TWO_SIDES(TEXT_ENTRY)
    HAND(RULE_PAIRS("game pairs (games new; spsa new's iterations)"))
    RUN_SETTINGS_SPRT(SPRT_ENTRY)
    RUN_SETTINGS_EVERY_KIND(ANY_ENTRY)
    RUN_SETTINGS_THREADS(ANY_ENTRY)
    RUN_SETTINGS_OWN(OWN_ENTRY)
};
#define NENTRIES (sizeof ENTRIES / sizeof ENTRIES[0])

/* The book's options, as every new command has them (any kind's; a form has no field for them). */
static const OptSpec BOOK[] = { RUN_BOOK_OPTIONS };
#define NBOOK (sizeof BOOK / sizeof BOOK[0])

/* A kind's own settings by kind: whether option is one of kind's. */
#define OWN_NAME(field, TYPE, option, ...)                                                                       \
    if (strcmp(key, (option) + 2) == 0)                                                                          \
        return true;
#define OWN_OF_KIND(ID, S)                                                                                       \
    if (kind == RUN_KIND_##ID) {                                                                                 \
        RUN_SETTINGS_OWN_##ID(OWN_NAME)                                                                          \
    }
static bool own_of(const char *key, RunKindId kind)
{
    (void)key, (void)kind;
    RUN_SETTINGS_KINDS(OWN_OF_KIND, _)
    return false;
}

/* Adds spec to out[0..*n) unless an option of its name is there (a hand line the table has come to hold). */
static void add_option(OptSpec *out, int *n, int max, const OptSpec *spec)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(out[i].name, spec->name) == 0)
            return;
    if (*n < max)
        out[(*n)++] = *spec;
}

int run_preset_options(OptSpec *out, int max)
{
    int n = 0;
    for (size_t i = 0; i < NENTRIES; i++)
        add_option(out, &n, max, &ENTRIES[i].spec);
    for (size_t i = 0; i < NBOOK; i++)
        add_option(out, &n, max, &BOOK[i]);
    out[n] = (OptSpec)OPTS_END;
    return n;
}

static int entry_of(const char *key)
{
    for (size_t i = 0; i < NENTRIES; i++)
        if (strcmp(ENTRIES[i].spec.name + 2, key) == 0)
            return (int)i;
    return -1;
}

static const OptSpec *book_option(const char *key)
{
    for (size_t i = 0; i < NBOOK; i++)
        if (strcmp(BOOK[i].name + 2, key) == 0)
            return &BOOK[i];
    return NULL;
}

const OptSpec *run_preset_option(const char *key)
{
    int i = key ? entry_of(key) : -1;
    return i >= 0 ? &ENTRIES[i].spec : key ? book_option(key) : NULL;
}

/* The clock's options: one of them typed displaces the preset's clock. */
static bool is_clock(const char *key)
{
    return strcmp(key, "tc") == 0 || strcmp(key, "nodes") == 0 || strcmp(key, "tc-base") == 0 ||
           strcmp(key, "depth") == 0;
}

bool run_preset_is_book(const char *key) { return book_option(key) != NULL; }

/* Whether the preset has a setting of key. */
static const char *value_of(const StorePreset *p, const char *key)
{
    for (int i = 0; i < p->count; i++)
        if (strcmp(p->settings[i].key, key) == 0)
            return p->settings[i].value;
    return NULL;
}

bool run_preset_check(const StorePreset *p, char *why, size_t size)
{
    size_t len = strlen(p->name);
    if (len == 0 || len > STORE_PRESET_NAME_MAX || strspn(p->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                                  "0123456789_.-") != len ||
        !strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", p->name[0])) {
        snprintf(why, size, "a preset's name is 1-%d letters, digits, '_', '.' or '-', from a letter or digit, "
                 "not '%.40s'", STORE_PRESET_NAME_MAX, p->name);
        return false;
    }
    if (p->count < 1 || p->count > STORE_PRESETS_MAX) {
        snprintf(why, size, "a preset has 1-%d settings, not %d", STORE_PRESETS_MAX, p->count);
        return false;
    }
    for (int i = 0; i < p->count; i++) {
        const char *key = p->settings[i].key, *v = p->settings[i].value;
        const OptSpec *spec = run_preset_option(key);
        char detail[320];
        if (!spec) {
            snprintf(why, size, "--%.40s: not a setting a preset holds (xqf-tune preset --help lists them)", key);
            return false;
        }
        for (int j = 0; j < i; j++)
            if (strcmp(p->settings[j].key, key) == 0) {
                snprintf(why, size, "%s given twice", spec->name);
                return false;
            }
        for (const char *c = v; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f) {
                snprintf(why, size, "%s: no control character (a newline) in a value", spec->name);
                return false;
            }
        int64_t base, inc;
        BookFormat format;
        bool ok = !*v ? (snprintf(detail, sizeof detail, "a value, not nothing"), false)
                : strlen(v) > STORE_PRESET_VALUE_MAX ? (snprintf(detail, sizeof detail, "at most %d bytes",
                                                                 STORE_PRESET_VALUE_MAX), false)
                : spec->type == OPT_TEXT && strncmp(key, "tc", 2) == 0 ? rule_tc(v, &base, &inc, detail, sizeof detail)
                : strcmp(key, "book-format") == 0 && book_format_named(v, &format) != 0
                    ? (snprintf(detail, sizeof detail, "'%.32s' is none of book, fen, epd, pgn", v), false)
                    : opts_value_ok(spec, v, detail, sizeof detail);
        if (!ok) {
            snprintf(why, size, "%s: %s", spec->name, detail);
            return false;
        }
    }
    if (value_of(p, "tc") && value_of(p, "nodes")) {
        snprintf(why, size, "--tc and --nodes: a preset's clock is one of them");
        return false;
    }
    if (value_of(p, "tc-base") && !value_of(p, "tc")) {
        snprintf(why, size, "--tc-base (time odds) needs --tc, the test side's clock");
        return false;
    }
    return true;
}

bool run_preset_applies(const char *key, RunKindId kind)
{
    int i = entry_of(key);
    if (i < 0)
        return book_option(key) != NULL;
    switch (ENTRIES[i].whose) {
    case FOR_SPRT:
        return run_kind_get(kind)->sprt;
    case FOR_OWN:
        return own_of(key, kind);
    default:
        return true;
    }
}

bool run_preset_displaced(const char *key, bool (*given)(const char *key, void *ctx), void *ctx)
{
    if (given(key, ctx))
        return true;
    return is_clock(key) && (given("tc", ctx) || given("nodes", ctx) || given("depth", ctx));
}

void run_preset_field(const char *key, char *field, size_t size)
{
    int i = entry_of(key);
    if (i >= 0 && ENTRIES[i].field) {
        snprintf(field, size, "%s", ENTRIES[i].field);
        return;
    }
    snprintf(field, size, "%s", key);
    for (char *c = field; *c; c++)
        if (*c == '-')
            *c = '_';
}

const StorePreset *run_preset_find(const StorePreset *ps, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (strcmp(ps[i].name, name) == 0)
            return &ps[i];
    return NULL;
}

void run_preset_names(const StorePreset *ps, int n, char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < n && len < size; i++)
        len += (size_t)snprintf(out + len, size - len, "%s%s", i ? ", " : "", ps[i].name);
    if (!n)
        snprintf(out, size, "none");
}

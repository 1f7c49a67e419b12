/*
 * new_run.c - the form that creates a run of a kind, its fields by the
 * kind's record (run_kinds.def) and the settings' table
 * (run_settings.def), with the values given and a message per field; the
 * engine fields offer the registered engines' names.
 */
#include "frame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_kind.h"
#include "run_presets.h"
#include "run_service.h"
#include "run_settings.h"
#include "store_engines.h"

/*
 * The fields of a kind's form, by its record in run_kinds.def: what every
 * run has, the two sides of a kind that has them, the kind's own
 * settings, and what the games keep for kinds that play a test's games.
 * The names are xqf-tune's options without "--" and with '_' for '-'.
 */
/*
 * A setting's field (run_settings.def), its default shown as xqf-tune's
 * option's (a derived one's empty: left to the database, as its help says).
 */
#define SETTING_FIELD(field_name, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, ...) \
    field(fo, form_field, label, (required) == RUN_SETTING_DERIVED ? "" : #def, form_help);
/* A text setting's field, empty (xqf-tune's option has no default). */
#define TEXT_SETTING_FIELD(name, option, arg, help, form_field, label, form_help, ...) \
    field(fo, form_field, label, "", form_help);

/* A kind's own settings' fields (RUN_SETTINGS_KINDS), on its form only. */
#define OWN_FIELDS(ID, k)                                                                                            \
    if ((k)->id == RUN_KIND_##ID) {                                                                                  \
        RUN_SETTINGS_OWN_##ID(SETTING_FIELD)                                                                         \
    }

static void new_run_fields(FormOut *fo, const RunKind *k, bool chain)
{
    field(fo, "name", "Name", "", NULL);
    if (k->two_sides) {
        field(fo, "test", "Test set", "",
              "Name=value,... over the defaults, checked against what plays it (a build: its own parameters)");
        field(fo, "base", "Base set", "", "empty: the defaults");
        field(fo, "test_build", "Test build", "", "id from xqf-tune build (empty: the workers' engine)");
        field(fo, "base_build", "Base build", "", "id from xqf-tune build (empty: the workers' engine)");
        field(fo, "test_ref", "Test git ref", "",
              "or a branch, tag or commit: built by the builder (xqf-tune build --serve) before the test starts");
        field(fo, "base_ref", "Base git ref", "", "or the base side's branch, tag or commit");
        field(fo, "engine", "Engine", RUN_OUR_ENGINE,
              "a record of xqf-tune engine list: another engine's refs (from its repository) or builds, both sides");
        field(fo, "base_engine", "Base engine", "",
              "the base side's, when another (empty: the engine above): its base ref or base build plays");
    }
    if (k->sprt) {
        RUN_SETTINGS_SPRT(SETTING_FIELD)
    } else if (k->spsa) {
        field(fo, "params", "Parameters", "", "names, comma-separated (empty: every tunable), or");
        textarea_field(fo, "spec", "Spec", "`name, int, start, min, max[, c_end, r_end]` a line (Fishtest's): "
                                           "the parameters with their own start, bounds and end hints");
        if (!chain) {   /* a chain tunes, builds and tests our engine */
            field(fo, "engine", "Engine", RUN_OUR_ENGINE,
                  "a record of xqf-tune engine list: another engine's UCI options are tuned from a spec");
            field(fo, "ref", "Git ref", "",
                  "with another engine: its branch, tag or commit, built by the builder (xqf-tune build --serve); "
                  "both sides play the build");
        }
        field(fo, "pairs", "Game pairs (iterations)", "", NULL);
        RUN_SETTINGS_SPSA(SETTING_FIELD)
    } else if (k->two_sides)
        field(fo, "pairs", "Game pairs", "", "exactly this many pairs, no SPRT: the Elo with its interval");
    else {
        field(fo, "params", "Set", "", "Name=value,... over the defaults, the engine both sides play");
        field(fo, "games", "Games", "", "rounded up to pairs");
        field(fo, "depth", "Depth per move", "", "or a fixed depth (instead of a time control or nodes)");
        field(fo, "random_plies", "Random plies", "8", "after the opening");
        field(fo, "skip_plies", "Skipped plies", "0", "kept out after the opening and random plies");
        check_field(fo, "keep_check", "Keep checks", "positions where the side to move is in check");
        check_field(fo, "keep_captures", "Keep captures", "positions whose played move captures");
        field(fo, "max_score", "Max score", "3000", "keep out |score| above it (centipawns)");
    }
    RUN_TEXT_SETTINGS_EVERY_KIND(TEXT_SETTING_FIELD)
    field(fo, "nodes", "Nodes per move", "", "fixed nodes (give one of the two)");
    if (k->two_sides) {
        RUN_TEXT_SETTINGS_TWO_SIDES(TEXT_SETTING_FIELD)
    }
    if (k->threads) {
        RUN_SETTINGS_THREADS(SETTING_FIELD)
        field(fo, "ref_nps", "Reference speed", "", "nodes/s: scale the clock by it / each worker's speed (empty: no)");
        check_field(fo, "keep_scores", "Keep scores", "game records keep each move's score and depth");
    }
    RUN_SETTINGS_EVERY_KIND(SETTING_FIELD)
    RUN_SETTINGS_KINDS(OWN_FIELDS, k)
}

/* A chain's stages after its first run, as xqf-tune chain new's --then-* options (RULE_CHAIN_TRAIN's defaults). */
static void chain_fields(FormOut *fo, const RunKind *first)
{
    if (first->spsa) {
        check_field(fo, "then_build", "Then build", "the tuned engine, compiled by xqf-tune chain advance, before "
                                                    "the SPRTs (which then play the build)");
        field(fo, "base_build", "SPRTs' base build", "", "the build the SPRTs' base side plays with the start set "
                                                         "(empty: the workers' engine)");
    } else {
        field(fo, "epochs", "Training epochs", "10", "then a net trained on the data run's positions (xqf-tune chain "
                                                     "advance) and registered");
        field(fo, "batch", "Training batch", "16384", NULL);
        field(fo, "lambda", "Training lambda", "0.75", "the score's weight against the game's result");
        field(fo, "lr", "Learning rate", "0.001", NULL);
    }
    textarea_field(fo, "then_sprt", "Then SPRTs", first->spsa ? "a line each, `ELO0,ELO1,TC` (0,5,10+0.1 or "
                                                                "0,5,5000n): the tuned set against the start set"
                                                              : "a line each, `ELO0,ELO1,TC` (0,5,10+0.1 or "
                                                                "0,5,5000n): the new net against the engine's own");
    field(fo, "sprt_max_pairs", "SPRTs' max pairs", "50000", NULL);
}

/*
 * The preset picker: a form of its own (GET, so that no CSRF token goes
 * into a URL) that reloads this one filled from the preset chosen of the
 * engine named (?engine=NAME&preset=NAME), the kinds without an engine
 * field taking ours'.  Its fields: the engine (where the kind names one),
 * a choice of that engine's presets with their settings.
 */
static void preset_picker(Buf *b, const RunKind *k, bool chain, bool named_engine, const char *engine,
                          const char *chosen, const StorePreset *ps, int n)
{
    if (chain)
        buf_printf(b, "<form method=\"get\" action=\"/new/chain\" class=\"new preset\" id=\"preset\">"
                      "<input type=\"hidden\" name=\"first\" value=\"%s\">", k->name);
    else
        buf_printf(b, "<form method=\"get\" action=\"/new/%s\" class=\"new preset\" id=\"preset\">", k->name);
    buf_puts(b, "<div class=\"field\"><label for=\"p-preset\">Preset</label><span>");
    if (named_engine) {
        buf_puts(b, "<input id=\"p-engine\" name=\"engine\" size=\"10\" list=\"engines\" value=\"");
        buf_html(b, engine);
        buf_puts(b, "\"> ");
    }
    buf_puts(b, "<select id=\"p-preset\" name=\"preset\"><option value=\"\">none</option>");
    for (int i = 0; i < n; i++) {
        buf_printf(b, "<option%s value=\"", chosen && strcmp(chosen, ps[i].name) == 0 ? " selected" : "");
        buf_html(b, ps[i].name);
        buf_puts(b, "\">");
        buf_html(b, ps[i].name);
        buf_puts(b, ":");
        for (int j = 0; j < ps[i].count; j++) {
            buf_puts(b, " ");
            buf_html(b, ps[i].settings[j].key);
            buf_puts(b, "=");
            buf_html(b, ps[i].settings[j].value);
        }
        buf_puts(b, "</option>");
    }
    buf_puts(b, "</select> <button>Fill</button></span><small>the engine's named settings (<a href=\"/engines/");
    buf_html(b, engine);
    buf_puts(b, "\">its page</a>): the fields below are filled from it, and a field changed overrides it</small>"
                "</div></form>\n");
}

int page_new_run(Store *s, RunKindId kind, bool chain, const Form *values, const FieldError *errors, int nerrors,
                 const Session *u, Buf *b)
{
    const RunKind *k = run_kind_get(kind);
    char title[64];
    if (chain)
        snprintf(title, sizeof title, "%s", k->spsa ? "New chain (an SPSA run first)" : "New net chain (a data run first)");
    else
        snprintf(title, sizeof title, "New %s", k->title);
    Buf form = { 0 };
    /* the registered engines to choose from (xqf-tune engine list); a name typed is still the run service's to check */
    EngineRecord *engines = NULL;
    int nengines = k->two_sides || k->spsa ? store_engine_list(s, &engines) : 0;
    FormOut fo = { .b = &form, .engines = nengines > 0, .values = values, .errors = errors, .nerrors = nerrors };
    new_run_fields(&fo, k, chain);
    if (chain)
        chain_fields(&fo, k);
    if (nengines > 0) {
        buf_puts(&form, "<datalist id=\"engines\">");
        for (int i = 0; i < nengines; i++) {
            buf_puts(&form, "<option value=\"");
            buf_html(&form, engines[i].name);
            buf_puts(&form, "\">");
        }
        buf_puts(&form, "</datalist>\n");
    }
    free(engines);
    /* the presets of the engine the values name (ours when none, or for a kind without an engine field) */
    bool named_engine = k->two_sides || (k->spsa && !chain);
    const char *engine = named_engine && values && form_get(values, "engine") && *form_get(values, "engine")
                             ? form_get(values, "engine") : RUN_OUR_ENGINE;
    const char *chosen = values ? form_get(values, "preset") : NULL;
    StorePreset *ps = NULL;
    int npresets = store_preset_list(s, engine, &ps);
    head(b, title, u);
    buf_puts(b, "<h1>");
    buf_html(b, title);
    buf_puts(b, "</h1>\n");
    form_unshown_errors(b, &fo, chain ? "The chain was not created: see the messages below."
                                      : "The run was not created: see the messages below.");
    if (!session_is(u, "admin"))
        buf_puts(b, chain ? "<p class=\"notice\">A chain you create waits with its first run for an admin's approval "
                            "before workers play it.</p>\n"
                          : "<p class=\"notice\">A run you create waits for an admin's approval before workers play "
                            "it.</p>\n");
    if (npresets > 0 || (chosen && *chosen))
        preset_picker(b, k, chain, named_engine, engine, chosen, ps, npresets > 0 ? npresets : 0);
    if (chain)
        buf_printf(b, "<form method=\"post\" action=\"/new/chain\" class=\"new\"><input type=\"hidden\" "
                      "name=\"first\" value=\"%s\">", k->name);
    else
        buf_printf(b, "<form method=\"post\" action=\"/new/%s\" class=\"new\">", k->name);
    csrf_field(b, u);
    /* the preset the fields were filled from: its book goes with the run, and a field emptied takes its value */
    if (chosen && npresets > 0 && run_preset_find(ps, npresets, chosen)) {
        buf_puts(b, "<input type=\"hidden\" name=\"preset\" value=\"");
        buf_html(b, chosen);
        buf_puts(b, "\"><p class=\"notice\" id=\"preset-notice\">Filled from preset ");
        buf_html(b, chosen);
        buf_puts(b, " of engine ");
        buf_html(b, engine);
        buf_puts(b, ": a field changed overrides it, a field left empty takes its value.</p>");
    }
    free(ps);
    if (buf_failed(&form))
        b->failed = true;     /* answered 500, as any page out of memory */
    else if (form.len)
        buf_add(b, form.data, form.len);
    buf_free(&form);
    buf_puts(b, "<button>Create</button></form>\n");
    foot(b);
    return nerrors ? 400 : 200;
}

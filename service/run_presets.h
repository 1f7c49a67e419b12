/*
 * run_presets.h - an engine's presets (068_engine_presets.sql), named
 * settings of new runs as OpenBench keeps its STC, LTC and SMP settings per
 * engine: xqf-tune's options without "--" ("tc", "elo0", "max-pairs") and
 * their values as text.  One set of rules for both front ends: which
 * options a preset may name, a preset checked by the parsing those options
 * get (so a bad value is refused when it is saved, not when a run is made
 * of it), and which of its settings a run takes: xqf-tune's --preset gives
 * them before the options typed, which override them; the dashboard's form
 * is filled from them, its fields overriding them the same way.
 */
#ifndef XQF_RUN_PRESETS_H
#define XQF_RUN_PRESETS_H

#include <stdbool.h>
#include <stddef.h>

#include "opts.h"
#include "run_kind.h"
#include "store_engines.h"

/*
 * The options a preset may name: every setting of run_settings.def but
 * the SPSA schedule's (its --alpha is not the SPRT's, and a schedule is a
 * tuning's, not a kind of test's), and by hand the clock, the pairs, the
 * threads, the replay share and the book.  No flag: a preset sets values.
 */
enum { RUN_PRESET_OPTIONS_MAX = 48 };
/* Copies them into out (room for max, one more for OPTS_END); returns their count. This can't fail. */
int run_preset_options(OptSpec *out, int max);

/* The spec of a preset's key ("tc": the option "--tc"), or NULL when a preset cannot name it. */
const OptSpec *run_preset_option(const char *key);

/*
 * Checks a preset before it is stored: its name (a letter or digit, then
 * letters, digits, '_', '.', '-', at most 32), at least one setting, each
 * key one of run_preset_options' given once, each value by its option's
 * type and bounds (opts_value_ok) and rule (rule_tc for a clock, the
 * book's format), no newline or control character, and the clock given
 * once (tc or nodes, tc-base only with tc).  False with why ("--elo0: 'x'
 * is not a number ...", naming the option as xqf-tune does).
 */
bool run_preset_check(const StorePreset *p, char *why, size_t size);

/*
 * Whether a run of kind takes setting key of a preset: the SPRT's bounds
 * and pair cap go to SPRT kinds only (elsewhere alpha is SPSA's), a kind's
 * own settings to that kind only; the rest to every kind whose command
 * has the option (xqf-tune asks its table, the form its fields).
 */
bool run_preset_applies(const char *key, RunKindId kind);

/*
 * Whether key is displaced by what the user gave (given(option key) says
 * whether one was given): any setting by itself given, and the preset's
 * clock (tc, nodes, tc-base) by any clock given (tc, nodes or depth), so
 * that --nodes typed beside a preset of a time control plays nodes.
 */
bool run_preset_displaced(const char *key, bool (*given)(const char *key, void *ctx), void *ctx);

/* Whether key is the book's (book, book-format, book-plies): a form has no field for it. */
bool run_preset_is_book(const char *key);

/* The form field of key: the option's name without "--", '_' for '-' ("max-pairs": "max_pairs"). */
void run_preset_field(const char *key, char *field, size_t size);

/* The preset named name in ps[0..n) (an engine's list), or NULL. */
const StorePreset *run_preset_find(const StorePreset *ps, int n, const char *name);

/* The names of ps[0..n) as "STC, LTC" (or "none") into out. This can't fail. */
void run_preset_names(const StorePreset *ps, int n, char *out, size_t size);

#endif

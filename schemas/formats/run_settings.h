/*
 * run_settings.h - what every floor makes of run_settings.def: the groups
 * kept as columns of runs, and a setting as a struct member, so that the
 * run service's RunSpec and the store's records (StoreSprtSpec, StoreRun)
 * carry every setting of the table without a hand-written field each
 * (the X-macro technique of engine/params.def).
 */
#ifndef XQF_RUN_SETTINGS_H
#define XQF_RUN_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>

#include "codec.h"
#include "run_settings.def"

/* A line's required: a form must give it, may leave it (its default), or leaves it to be derived. */
#define RUN_SETTING_OPTIONAL 0
#define RUN_SETTING_REQUIRED 1
#define RUN_SETTING_DERIVED 2

/* The groups every kind takes, in the order both front ends list them. */
#define RUN_SETTINGS_EVERY_KIND(S) RUN_SETTINGS_TASK(S) RUN_SETTINGS_ADJUDICATION(S)

/* The text settings every kind takes, and those of the kinds of two sides. */
#define RUN_TEXT_SETTINGS_EVERY_KIND(T) RUN_TEXT_SETTINGS_CLOCK(T)
#define RUN_TEXT_SETTINGS_TWO_SIDES(T) RUN_TEXT_SETTINGS_ODDS(T)
#define RUN_TEXT_SETTINGS(T) RUN_TEXT_SETTINGS_EVERY_KIND(T) RUN_TEXT_SETTINGS_TWO_SIDES(T)

/* Every kind's own settings (RUN_SETTINGS_KINDS), one group after the other. */
#define RUN_SETTINGS_OWN_OF(ID, S) RUN_SETTINGS_OWN_##ID(S)
#define RUN_SETTINGS_OWN(S) RUN_SETTINGS_KINDS(RUN_SETTINGS_OWN_OF, S)

/*
 * The groups kept as columns of runs, one each (SPSA's schedule is in the
 * run's settings JSON: store_spsa.h; the adjudication's in its record).
 */
#define RUN_SETTINGS_COLUMNS(S) \
    RUN_SETTINGS_SPRT(S) RUN_SETTINGS_TASK(S) RUN_SETTINGS_OWN(S) RUN_SETTINGS_THREADS(S) RUN_SETTINGS_KEPT(S)

/* A setting as a member of RunSpec (named by its field) and of the store's records (named by its column). */
#define RUN_SETTING_FIELD(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, store, \
                          ctype, shown)                                                                               \
    ctype field;
#define RUN_SETTING_COLUMN(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, store, \
                           ctype, shown)                                                                               \
    ctype store;
/*
 * The same in the store's spec of a new run (StoreSprtSpec), where a
 * derived setting has beside it whether it was given (store_given): left
 * out, the database derives it (a spec zeroed by a test is one that left
 * it out, as before the table had it).
 */
#define RUN_SETTING_GIVEN_0(store)
#define RUN_SETTING_GIVEN_1(store)
#define RUN_SETTING_GIVEN_2(store) bool store##_given;
#define RUN_SETTING_GIVEN_RUN_SETTING_DERIVED(store) RUN_SETTING_GIVEN_2(store)
#define RUN_SETTING_SPEC_COLUMN(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, \
                                store, ctype, shown)                                                               \
    ctype store;                                                                                                   \
    RUN_SETTING_GIVEN_##required(store)

/* A text setting's two numbers as members of RunSpec and of the store's records. */
#define RUN_TEXT_SETTING_FIELDS(name, option, arg, help, form_field, label, form_help, parse, format, first, second) \
    int64_t first, second;

#endif

/*
 * run_settings.h - what every floor makes of run_settings.def: the groups
 * kept as columns of runs, and a setting as a struct member, so that the
 * run service's RunSpec and the store's records (StoreSprtSpec, StoreRun)
 * carry every setting of the table without a hand-written field each
 * (the X-macro technique of engine/params.def).
 */
#ifndef XQF_RUN_SETTINGS_H
#define XQF_RUN_SETTINGS_H

#include <stdint.h>

#include "run_settings.def"

/* The groups every kind takes, in the order both front ends list them. */
#define RUN_SETTINGS_EVERY_KIND(S) RUN_SETTINGS_TASK(S) RUN_SETTINGS_ADJUDICATION(S)

/* Every kind's own settings (RUN_SETTINGS_KINDS), one group after the other. */
#define RUN_SETTINGS_OWN_OF(ID, S) RUN_SETTINGS_OWN_##ID(S)
#define RUN_SETTINGS_OWN(S) RUN_SETTINGS_KINDS(RUN_SETTINGS_OWN_OF, S)

/*
 * The groups kept as columns of runs, one each (SPSA's schedule is in the
 * run's settings JSON: store_spsa.h; the adjudication's in its record).
 */
#define RUN_SETTINGS_COLUMNS(S) RUN_SETTINGS_SPRT(S) RUN_SETTINGS_TASK(S) RUN_SETTINGS_OWN(S)

/* A setting as a member of RunSpec (named by its field) and of the store's records (named by its column). */
#define RUN_SETTING_FIELD(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, store, \
                          ctype, shown)                                                                               \
    ctype field;
#define RUN_SETTING_COLUMN(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, store, \
                           ctype, shown)                                                                               \
    ctype store;

#endif

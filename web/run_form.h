/*
 * run_form.h - the forms that create runs and chains (web/pages/new_run.c
 * draws them) read into the run service's spec (run_service.h), each
 * field by xqf-tune's rule for its option, with a message per field.
 */
#ifndef XQF_WEB_RUN_FORM_H
#define XQF_WEB_RUN_FORM_H

#include "form_fields.h"
#include "run_service.h"
#include "store.h"
#include "store_engines.h"

/*
 * The form of a run of sp->kind into *sp (params: an SPSA run's
 * parameters' room, STORE_SPSA_MAX): the settings of run_settings.def,
 * the two sides of a kind that has them (sets checked against what plays
 * them, builds against the registered ones), the kind's own fields.
 */
void run_form_spec(Store *s, const Form *f, RunSpec *sp, StoreSpsaParam *params, Errors *er);

/*
 * A chain's stages after its first run first (read by run_form_spec), as
 * xqf-tune chain new's --then-* options: a build or a training, then the
 * SPRTs, a line each of the field then_sprt.
 */
void run_form_chain(Store *s, const Form *f, const RunSpec *first, RunChainSpec *c, Errors *er);

/*
 * The preset the form's field "preset" names (run_presets.h), of the engine
 * its field "engine" names (ours when empty), as xqf-tune's --preset takes
 * it: *merged is the form with each of the preset's settings that a run of
 * kind takes put in its field (run_preset_field) where the form leaves
 * that field empty or out (a field given overrides the preset; a clock
 * given, tc, nodes or depth, its clock), *p the preset (its book settings,
 * which no field holds: run_form_preset_book).  Returns 1 (form_free
 * *merged after), 0 when the form names no preset, -1 with field
 * "preset"'s message in er (an unknown preset, naming the engine's; the
 * database failed).
 */
int run_form_preset(Store *s, const Form *f, RunKindId kind, Form *merged, StorePreset *p, Errors *er);
/* The book's settings of preset p into *sp (its strings point into p), after the server's book is set. */
void run_form_preset_book(const StorePreset *p, RunSpec *sp);

#endif

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

#endif

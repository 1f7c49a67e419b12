/*
 * form_fields.h - a form's fields read by xqf-tune's rules (run_rules.h:
 * a field "max_pairs" is the option "--max-pairs", with its bounds), and
 * the messages per field a page shows next to each (pages.h, FieldError).
 */
#ifndef XQF_WEB_FORM_FIELDS_H
#define XQF_WEB_FORM_FIELDS_H

#include <stdbool.h>
#include <stdint.h>

#include "opts.h"
#include "pages.h"
#include "request.h"

enum { FORM_ERRORS_MAX = 16 };

/* The messages of a form, one per field at most FORM_ERRORS_MAX (those past it are dropped). */
typedef struct {
    FieldError e[FORM_ERRORS_MAX];
    char text[FORM_ERRORS_MAX][512];
    int n;
} Errors;

/* Adds field's message: fmt with one %s, detail. This function can't fail. */
void field_error(Errors *er, const char *field, const char *fmt, const char *detail);

/* A whole number in [lo, hi] from text (NULL or empty: false). */
bool int_in(const char *text, int64_t lo, int64_t hi, int64_t *out);

/* A number field by its option's bounds into *v; false after its message (a missing field too). */
bool rule_number(Errors *er, const Form *f, const OptSpec spec, const char *field, double *v);
bool rule_int(Errors *er, const Form *f, const OptSpec spec, const char *field, int64_t *v);
/* An optional number field: *v left as it is (the default) when the form leaves it out or empty. */
void rule_int_opt(Errors *er, const Form *f, const OptSpec spec, const char *field, int64_t *v);
void rule_number_opt(Errors *er, const Form *f, const OptSpec spec, const char *field, double *v);

/* A checkbox: ticked when the form sends it with a value other than "0". */
bool ticked(const Form *f, const char *field);

#endif

/*
 * form_fields.c - a form's fields read by xqf-tune's rules: numbers by
 * their option's bounds, checkboxes, and a message per field.
 */
#include "form_fields.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool int_in(const char *text, int64_t lo, int64_t hi, int64_t *out)
{
    if (!text || !*text)
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

void field_error(Errors *er, const char *field, const char *fmt, const char *detail)
{
    if (er->n >= FORM_ERRORS_MAX)
        return;
    snprintf(er->text[er->n], sizeof er->text[er->n], fmt, detail ? detail : "");
    er->e[er->n] = (FieldError){ field, er->text[er->n] };
    er->n++;
}

/*
 * A number field by the bounds of its xqf-tune option (run_rules.h: field
 * "max_pairs" is "--max-pairs"): its text, or NULL after its message.
 */
static const char *rule_field(Errors *er, const Form *f, const OptSpec spec, const char *field)
{
    const char *text = form_get(f, field);
    char why[320];
    if (opts_value_ok(&spec, text ? text : "", why, sizeof why))
        return text;
    field_error(er, field, "%s", why);
    return NULL;
}

bool rule_number(Errors *er, const Form *f, const OptSpec spec, const char *field, double *v)
{
    const char *text = rule_field(er, f, spec, field);
    if (text)
        *v = strtod(text, NULL);
    return text != NULL;
}

bool rule_int(Errors *er, const Form *f, const OptSpec spec, const char *field, int64_t *v)
{
    const char *text = rule_field(er, f, spec, field);
    if (text)
        *v = strtoll(text, NULL, 10);
    return text != NULL;
}

void rule_int_opt(Errors *er, const Form *f, const OptSpec spec, const char *field, int64_t *v)
{
    const char *text = form_get(f, field);
    if (text && *text)
        rule_int(er, f, spec, field, v);
}

void rule_number_opt(Errors *er, const Form *f, const OptSpec spec, const char *field, double *v)
{
    const char *text = form_get(f, field);
    if (text && *text)
        rule_number(er, f, spec, field, v);
}

bool ticked(const Form *f, const char *field)
{
    const char *text = form_get(f, field);
    return text && *text && strcmp(text, "0") != 0;
}

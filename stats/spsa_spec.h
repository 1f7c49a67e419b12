/*
 * spsa_spec.h - an SPSA spec file: the tuned options of any engine, one a
 * line, in Fishtest's format (pure parsing, no I/O).
 *
 *     name, int|float, start, min, max[, c_end, r_end]
 *     name, start, min, max[, c_end, r_end]          (the type column left out: int)
 *
 * Blank lines and lines starting with '#' are skipped.  The line format of
 * `xqf-engine params` is the first form with every column, so its lines
 * are specs as they are.  Left out, the end hints follow Fishtest's common
 * practice, from the range alone:
 *     c_end = (max - min) / 20    (at least 0.5 for an int option)
 *     r_end = 0.002
 * c_end a twentieth of the range perturbs by a few percent of it at the
 * end, enough for W - L to see a change; an int option perturbed by less
 * than 0.5 is rounded back to theta half of the time, so 0.5 is its floor
 * (engine/params.def's smallest c_end).  r_end 0.002 is what every tuned
 * entry of engine/params.def has, and Fishtest's usual choice.
 */
#ifndef XQF_TUNER_SPSA_SPEC_H
#define XQF_TUNER_SPSA_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#define XQF_SPSA_SPEC_NAME 64        /* an option's name: 63 bytes at most (the store's names) */
#define XQF_SPSA_SPEC_R_END 0.002    /* r_end left out */
#define XQF_SPSA_SPEC_C_DIV 20.0     /* c_end left out: the range over this */
#define XQF_SPSA_SPEC_C_INT_MIN 0.5  /* ... but not below this for an int option */
#define XQF_SPSA_SPEC_FLOAT_MAX 1e15 /* a float's bounds below this in magnitude (its decimal fits a set's value) */

/* One tuned option. */
typedef struct {
    char name[XQF_SPSA_SPEC_NAME];
    bool is_float;                   /* float: played as a decimal; int: rounded */
    double start, min, max, c_end, r_end;
    bool hints_given;                /* c_end and r_end came from the line */
} XqfSpsaSpecLine;

/* c_end left out, by the rule above. This can't fail. */
double xqf_spsa_spec_c_end(double min, double max, bool is_float);

/*
 * Parses one line (a NUL-terminated text, its newline allowed).  Returns 1
 * with *out filled, 0 for a blank or comment line, -1 with why (one line,
 * no line number: the caller names the line) when it is malformed, names
 * a type other than int and float, has min >= max, a start outside
 * [min, max], a non-finite number, an end hint that is not positive, or,
 * for a float, a bound of XQF_SPSA_SPEC_FLOAT_MAX or more in magnitude (a
 * float is sent as a decimal without exponent, param_set.h).
 */
int xqf_spsa_spec_line(const char *line, XqfSpsaSpecLine *out, char *why, size_t size);

/*
 * Parses a whole spec text (lines separated by '\n') into out[0..max-1].
 * Returns the count (0: no option named), or -1 with why naming the line
 * ("line 3: ...") for a bad line, a name given twice, or more than max
 * options.  known, when not NULL, is asked of each name: false makes it
 * "line N: the engine has no option 'X'".
 */
int xqf_spsa_spec_parse(const char *text, XqfSpsaSpecLine *out, int max,
                        bool (*known)(const char *name, void *ctx), void *ctx, char *why, size_t size);

#endif

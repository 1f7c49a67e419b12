/*
 * opts.h - a program's options from one table (as Redis reads its config):
 * each option's name, type, value name, default, bounds and help.  The
 * table parses argv ("--name VALUE" or "--name=VALUE", once each; "--help"
 * or "-h"), checks every value against its type and bounds with a message
 * naming the option, and prints --help.
 *
 *     static const OptSpec OPTIONS[] = {
 *         { "--pairs", OPT_INT, "N", "8", .imin = 1, .imax = 1024, .help = "game pairs per task" },
 *         { "--db", OPT_TEXT, "CONNINFO", NULL, .help = "libpq connection string (default: $XQF_DB)" },
 *         OPTS_END,
 *     };
 *
 * Messages go to stderr as "PROGRAM: error: ...", help to stdout.  An
 * option asked for by a name not in the table is a programmer error
 * (assert).
 */
#ifndef XQF_OPTS_H
#define XQF_OPTS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef enum { OPT_TEXT, OPT_INT, OPT_REAL, OPT_FLAG } OptType;

typedef struct {
    const char *name;        /* "--pairs"; NULL ends a table */
    OptType type;
    const char *arg;         /* the value's name in help ("N"); NULL for a flag */
    const char *def;         /* the default as text, or NULL: none (the option is absent) */
    int64_t imin, imax;      /* bounds of an OPT_INT (both 0: any int64) */
    double rmin, rmax;       /* bounds of an OPT_REAL (both 0: any finite number) */
    const char *help;        /* one line; "%s" in it is not expanded */
    bool repeat;             /* may be given several times (opts_nth); else once */
} OptSpec;

/* The end of an option table. */
#define OPTS_END { .name = NULL }

typedef struct {
    const char *program;     /* "xqf-tune", for messages */
    const char *usage;       /* printed by --help before the options: usage lines and what it does */
    const OptSpec *spec;     /* the options, ended by OPTS_END */
    int max_positional;      /* arguments not starting with "--" (at most OPTS_POSITIONAL_MAX) */
    const char *epilog;      /* printed after the options, or NULL */
} OptTable;

/* A table of more options than OPTS_MAX is refused by opts_parse (OPTS_BAD), never read past given[]. */
enum { OPTS_MAX = 96, OPTS_POSITIONAL_MAX = 256 };

typedef struct {
    const OptTable *table;
    int argc;                                      /* what was parsed (opts_nth reads it again) */
    char **argv;
    const char *given[OPTS_MAX];                   /* the text given (the last), NULL when absent ("" for a flag) */
    const char *positional[OPTS_POSITIONAL_MAX];
    int npositional;
} Opts;

enum { OPTS_OK = 0, OPTS_HELP = 1, OPTS_BAD = -1 };

/*
 * Parses argv[0..argc) against t into *o (its strings point into argv).
 * Returns OPTS_OK; OPTS_HELP when --help was asked for and printed; or
 * OPTS_BAD after "PROGRAM: error: ..." (unknown option, given twice but
 * not repeatable,
 * missing value, too many arguments, a value not of its type or out of
 * its bounds).  A program exits 0 after OPTS_HELP and 2 after OPTS_BAD.
 */
int opts_parse(Opts *o, const OptTable *t, int argc, char **argv);
/*
 * Whether text is a value of spec's type within its bounds; when not, why
 * gets the message opts_parse gives after the option's name ("'x' is not a
 * number in [0, 1]"), for a form that checks a field by the same rule.
 */
bool opts_value_ok(const OptSpec *spec, const char *text, char *why, size_t size);
/* Prints t's help: usage, one line per option (with its default and bounds), epilog. */
void opts_help(FILE *out, const OptTable *t);

/* The i-th value (0 first) given for a repeatable option, or NULL past the last. */
const char *opts_nth(const Opts *o, const char *name, int i);

/* Whether the option was given. */
bool opts_given(const Opts *o, const char *name);
/* The option's text: given, else its default, else NULL. */
const char *opts_text(const Opts *o, const char *name);
/* An OPT_INT's value: given, else its default, else 0 (checked against its bounds). */
int64_t opts_int(const Opts *o, const char *name);
/* An OPT_REAL's value: given, else its default, else 0. */
double opts_real(const Opts *o, const char *name);

/* Prints "program: error: <message>" on stderr. Returns OPTS_BAD. */
int opts_error(const char *program, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with a va_list (for a program's own error function). */
void opts_verror(const char *program, const char *fmt, va_list ap);

#endif

#include "opts.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void opts_verror(const char *program, const char *fmt, va_list ap)
{
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    fprintf(stderr, "%s: error: %s\n", program, line);   /* one write: lines of processes do not mix */
}

int opts_error(const char *program, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    opts_verror(program, fmt, ap);
    va_end(ap);
    return OPTS_BAD;
}

static int find(const OptTable *t, const char *name, size_t len)
{
    for (int i = 0; t->spec[i].name; i++)
        if (strlen(t->spec[i].name) == len && strncmp(t->spec[i].name, name, len) == 0)
            return i;
    return -1;
}

bool opts_value_ok(const OptSpec *s, const char *text, char *why, size_t size)
{
    char *end;
    errno = 0;
    if (s->type == OPT_INT) {
        long long v = strtoll(text, &end, 10);
        bool bounded = s->imin || s->imax;
        if (end == text || *end || errno == ERANGE || (bounded && (v < s->imin || v > s->imax))) {
            if (bounded)
                snprintf(why, size, "'%s' is not an integer in %" PRId64 "..%" PRId64, text, s->imin, s->imax);
            else
                snprintf(why, size, "'%s' is not an integer", text);
            return false;
        }
    } else if (s->type == OPT_REAL) {
        double v = strtod(text, &end);
        bool bounded = s->rmin || s->rmax;
        if (end == text || *end || errno == ERANGE || !isfinite(v) || (bounded && !(v >= s->rmin && v <= s->rmax))) {
            if (bounded)
                snprintf(why, size, "'%s' is not a number in [%g, %g]", text, s->rmin, s->rmax);
            else
                snprintf(why, size, "'%s' is not a finite number", text);
            return false;
        }
    }
    return true;
}

/* Checks a value against its option's type and bounds. 0, or OPTS_BAD after the message. */
static int check(const OptTable *t, const OptSpec *s, const char *text)
{
    char why[512];
    return opts_value_ok(s, text, why, sizeof why) ? 0 : opts_error(t->program, "%s: %s", s->name, why);
}

int opts_parse(Opts *o, const OptTable *t, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->table = t;
    o->argc = argc;
    o->argv = argv;
    /* A table past the bounds is the program's error, but its reads of given[] would go past the
     * array in a build without assertions (a table grew by a settings group): refused, loudly. */
    int n = 0;
    while (t->spec[n].name)
        n++;
    if (n > OPTS_MAX || t->max_positional > OPTS_POSITIONAL_MAX)
        return opts_error(t->program, "internal error: an option table of %d options and %d arguments "
                                      "(at most %d and %d)", n, t->max_positional, OPTS_MAX, OPTS_POSITIONAL_MAX);
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            opts_help(stdout, t);
            return OPTS_HELP;
        }
        if (strncmp(arg, "--", 2) != 0) {
            if (o->npositional >= t->max_positional)
                return opts_error(t->program, "unexpected argument '%s' (see --help)", arg);
            o->positional[o->npositional++] = arg;
            continue;
        }
        const char *eq = strchr(arg, '=');
        int k = find(t, arg, eq ? (size_t)(eq - arg) : strlen(arg));
        if (k < 0)
            return opts_error(t->program, "unknown option '%s' (see --help)", arg);
        const OptSpec *s = &t->spec[k];
        if (o->given[k] && !s->repeat)
            return opts_error(t->program, "%s given twice", s->name);
        if (s->type == OPT_FLAG) {
            if (eq)
                return opts_error(t->program, "%s takes no value", s->name);
            o->given[k] = "";
            continue;
        }
        if (eq)
            o->given[k] = eq + 1;
        else if (i + 1 < argc)
            o->given[k] = argv[++i];
        else
            return opts_error(t->program, "%s needs a value", s->name);
        if (check(t, s, o->given[k]) != 0)
            return OPTS_BAD;
    }
    return OPTS_OK;
}

void opts_help(FILE *out, const OptTable *t)
{
    fputs(t->usage, out);
    bool any = false;
    for (int i = 0; t->spec[i].name; i++) {
        const OptSpec *s = &t->spec[i];
        char left[64], range[96] = "";
        snprintf(left, sizeof left, "%s%s%s", s->name, s->arg ? " " : "", s->arg ? s->arg : "");
        if (s->type == OPT_INT && (s->imin || s->imax))
            snprintf(range, sizeof range, ", %" PRId64 "-%" PRId64, s->imin, s->imax);
        else if (s->type == OPT_REAL && (s->rmin || s->rmax))
            snprintf(range, sizeof range, ", %g-%g", s->rmin, s->rmax);
        if (!any)
            fputs("\nOptions:\n", out);
        any = true;
        fprintf(out, "  %-22s %s", left, s->help ? s->help : "");
        bool def = s->def && *s->def;
        if (def || range[0])
            fprintf(out, " (%s%s%s)", def ? "default " : "", def ? s->def : "", def ? range : range + 2);
        fputs(s->repeat ? " (repeatable)\n" : "\n", out);
    }
    if (t->epilog)
        fputs(t->epilog, out);
}

static int index_of(const Opts *o, const char *name)
{
    int k = find(o->table, name, strlen(name));
    assert(k >= 0 && "an option missing from its table");
    return k;
}

bool opts_given(const Opts *o, const char *name) { return o->given[index_of(o, name)] != NULL; }

const char *opts_nth(const Opts *o, const char *name, int n)
{
    size_t len = strlen(name);
    assert(o->table->spec[index_of(o, name)].type != OPT_FLAG);
    for (int i = 0; i < o->argc; i++) {
        const char *arg = o->argv[i];
        if (strncmp(arg, "--", 2) != 0)
            continue;
        const char *eq = strchr(arg, '=');
        int k = find(o->table, arg, eq ? (size_t)(eq - arg) : strlen(arg));
        const char *value = eq ? eq + 1 : i + 1 < o->argc ? o->argv[i + 1] : NULL;
        if (k >= 0 && o->table->spec[k].type != OPT_FLAG && !eq)
            i++;                     /* the value: not an option even if it looks like one */
        if (k >= 0 && strlen(o->table->spec[k].name) == len && strcmp(o->table->spec[k].name, name) == 0 && n-- == 0)
            return value;
    }
    return NULL;
}

const char *opts_text(const Opts *o, const char *name)
{
    int k = index_of(o, name);
    return o->given[k] ? o->given[k] : o->table->spec[k].def;
}

int64_t opts_int(const Opts *o, const char *name)
{
    assert(o->table->spec[index_of(o, name)].type == OPT_INT);
    const char *text = opts_text(o, name);
    return text ? strtoll(text, NULL, 10) : 0;
}

double opts_real(const Opts *o, const char *name)
{
    assert(o->table->spec[index_of(o, name)].type == OPT_REAL);
    const char *text = opts_text(o, name);
    return text ? strtod(text, NULL) : 0;
}

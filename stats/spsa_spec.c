/*
 * spsa_spec.c - SPSA spec lines of any engine's options (spsa_spec.h).
 */
#include "spsa_spec.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double xqf_spsa_spec_c_end(double min, double max, bool is_float)
{
    double c = (max - min) / XQF_SPSA_SPEC_C_DIV;
    return !is_float && c < XQF_SPSA_SPEC_C_INT_MIN ? XQF_SPSA_SPEC_C_INT_MIN : c;
}

/* The line's comma-separated fields, trimmed, into f (at most max). Returns the count, or max + 1 when more. */
static int split(char *line, char **f, int max)
{
    int n = 0;
    for (char *p = line;; p++) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        while (isspace((unsigned char)*p))
            p++;
        char *end = p + strlen(p);
        while (end > p && isspace((unsigned char)end[-1]))
            *--end = '\0';
        if (n == max)
            return max + 1;
        f[n++] = p;
        if (!comma)
            return n;
        p = comma;
    }
}

/* A finite decimal number filling the whole field. */
static bool number(const char *s, double *v)
{
    char *end;
    if (!*s)
        return false;
    *v = strtod(s, &end);
    return !*end && isfinite(*v);
}

int xqf_spsa_spec_line(const char *line, XqfSpsaSpecLine *out, char *why, size_t size)
{
    char copy[512], *f[8];
    const char *p = line + strspn(line, " \t\r\n");
    if (!*p || *p == '#')
        return 0;
    if (strlen(p) >= sizeof copy) {
        snprintf(why, size, "longer than %zu bytes", sizeof copy - 1);
        return -1;
    }
    strcpy(copy, p);
    int n = split(copy, f, 7);
    /* a type column is the second field when it is not a number */
    double v;
    bool typed = n >= 2 && !number(f[1], &v);
    int values = n - 1 - typed;
    if (n > 7 || (values != 3 && values != 5)) {
        snprintf(why, size, "expected 'name, int|float, start, min, max[, c_end, r_end]' (the type may be left out)");
        return -1;
    }
    memset(out, 0, sizeof *out);
    const char *name = f[0];
    size_t len = strlen(name);
    bool ok_name = len > 0 && len < sizeof out->name;
    for (size_t i = 0; ok_name && i < len; i++)
        ok_name = isgraph((unsigned char)name[i]) || name[i] == ' ';
    if (!ok_name) {
        snprintf(why, size, "'%.64s' is not an option name (1-%zu printable characters)", name, sizeof out->name - 1);
        return -1;
    }
    strcpy(out->name, name);
    if (typed && strcmp(f[1], "int") != 0 && strcmp(f[1], "float") != 0) {
        snprintf(why, size, "%s: type '%.16s' is neither int nor float", name, f[1]);
        return -1;
    }
    out->is_float = typed && strcmp(f[1], "float") == 0;
    double x[5];
    for (int i = 0; i < values; i++)
        if (!number(f[1 + typed + i], &x[i])) {
            snprintf(why, size, "%s: '%.32s' is not a number", name, f[1 + typed + i]);
            return -1;
        }
    out->start = x[0], out->min = x[1], out->max = x[2];
    if (!(out->min < out->max)) {
        snprintf(why, size, "%s: min %g is not below max %g", name, out->min, out->max);
        return -1;
    }
    if (out->is_float && !(fabs(out->min) < XQF_SPSA_SPEC_FLOAT_MAX && fabs(out->max) < XQF_SPSA_SPEC_FLOAT_MAX)) {
        snprintf(why, size, "%s: a float's bounds must be below %g in magnitude (it is sent as a decimal)", name,
                 XQF_SPSA_SPEC_FLOAT_MAX);
        return -1;
    }
    if (out->start < out->min || out->start > out->max) {
        snprintf(why, size, "%s: start %g is outside [%g, %g]", name, out->start, out->min, out->max);
        return -1;
    }
    out->hints_given = values == 5;
    out->c_end = out->hints_given ? x[3] : xqf_spsa_spec_c_end(out->min, out->max, out->is_float);
    out->r_end = out->hints_given ? x[4] : XQF_SPSA_SPEC_R_END;
    if (!(out->c_end > 0 && out->r_end > 0)) {
        snprintf(why, size, "%s: c_end and r_end must be positive", name);
        return -1;
    }
    return 1;
}

int xqf_spsa_spec_parse(const char *text, XqfSpsaSpecLine *out, int max,
                        bool (*known)(const char *name, void *ctx), void *ctx, char *why, size_t size)
{
    int count = 0, lineno = 0;
    char line[1024], err[256];
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        lineno++;
        if (len >= sizeof line) {
            snprintf(why, size, "line %d: longer than %zu bytes", lineno, sizeof line - 1);
            return -1;
        }
        memcpy(line, p, len);
        line[len] = '\0';
        p += len + (p[len] == '\n');
        XqfSpsaSpecLine q;
        int got = xqf_spsa_spec_line(line, &q, err, sizeof err);
        if (got < 0) {
            snprintf(why, size, "line %d: %s", lineno, err);
            return -1;
        }
        if (!got)
            continue;
        for (int i = 0; i < count; i++)
            if (strcmp(out[i].name, q.name) == 0) {
                snprintf(why, size, "line %d: %s given twice", lineno, q.name);
                return -1;
            }
        if (known && !known(q.name, ctx)) {
            snprintf(why, size, "line %d: the engine has no option '%s'", lineno, q.name);
            return -1;
        }
        if (count >= max) {
            snprintf(why, size, "line %d: more than %d options", lineno, max);
            return -1;
        }
        out[count++] = q;
    }
    return count;
}

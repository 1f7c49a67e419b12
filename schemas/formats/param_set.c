#include "param_set.h"

#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

enum { SHOWN_MAX = 64 };

/* [from, to) with its blanks at both ends left out. */
static void trim(const char **from, const char **to)
{
    while (*from < *to && isspace((unsigned char)**from))
        (*from)++;
    while (*to > *from && isspace((unsigned char)(*to)[-1]))
        (*to)--;
}

/* [from, to) as a message quotes it: at most SHOWN_MAX bytes, '?' for what a line must not hold. */
static const char *shown(const char *from, const char *to, char out[SHOWN_MAX + 4])
{
    size_t n = 0;
    for (; from < to && n < SHOWN_MAX; from++)
        out[n++] = *from >= ' ' && *from != 0x7f ? *from : '?';
    if (from < to)
        out[n++] = '.', out[n++] = '.', out[n++] = '.';
    out[n] = '\0';
    return out;
}

static bool is_name(const char *from, const char *to)
{
    if (from == to || to - from > XQF_SET_NAME_MAX || !(isalpha((unsigned char)*from) || *from == '_'))
        return false;
    for (; from < to; from++)
        if (!(isalnum((unsigned char)*from) || *from == '_'))
            return false;
    return true;
}

/*
 * Options a worker sets itself, never a run: the hash size (its memory) and
 * the threads (its cores), as UCI and UCCI name them; option names compare
 * without case (UCI).
 */
static bool is_reserved(const char *from, const char *to)
{
    static const char *const reserved[] = { "Hash", "Threads", "hashsize" };
    size_t len = (size_t)(to - from);
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (strlen(reserved[i]) == len && strncasecmp(reserved[i], from, len) == 0)
            return true;
    return false;
}

/* A decimal integer within int: an optional sign, then digits only. */
static bool is_int(const char *from, const char *to, int *value)
{
    bool minus = from < to && *from == '-';
    if (from < to && (*from == '-' || *from == '+'))
        from++;
    if (from == to)
        return false;
    int64_t v = 0;
    for (; from < to; from++) {
        if (!isdigit((unsigned char)*from))
            return false;
        v = v * 10 + (*from - '0');
        if (v > (int64_t)INT_MAX + 1)
            return false;
    }
    v = minus ? -v : v;
    if (v < INT_MIN || v > INT_MAX)
        return false;
    *value = (int)v;
    return true;
}

/* A decimal with a point: an optional sign, digits, '.', digits (no exponent), at most XQF_SET_VALUE_MAX bytes. */
static bool is_decimal(const char *from, const char *to)
{
    if (to - from > XQF_SET_VALUE_MAX)
        return false;
    if (from < to && (*from == '-' || *from == '+'))
        from++;
    const char *dot = memchr(from, '.', (size_t)(to - from));
    if (!dot || dot == from || dot + 1 == to)
        return false;
    for (const char *c = from; c < to; c++)
        if (c != dot && !isdigit((unsigned char)*c))
            return false;
    return true;
}

int xqf_set_decimal(double v, double range, char *out, size_t size)
{
    int places = 6;
    for (double r = range; r > 0 && r < 1 && places < 15; r *= 10)
        places++;
    char text[64];
    int len;
    for (;;) {
        len = snprintf(text, sizeof text, "%.*f", places, v == 0 ? 0.0 : v);   /* no "-0.0" */
        if (len <= XQF_SET_VALUE_MAX || places == 1)
            break;
        places--;
    }
    while (len > 0 && text[len - 1] == '0' && text[len - 2] != '.')
        text[--len] = '\0';
    if (len > XQF_SET_VALUE_MAX || (size_t)len >= size)
        return -1;
    memcpy(out, text, (size_t)len + 1);
    return 0;
}

int xqf_set_next(const char **at, XqfSetItem *item, char *why, size_t size)
{
    const char *p = *at;
    while (*p == ',')
        p++;
    if (!*p) {
        *at = p;
        return 0;
    }
    const char *end = p + strcspn(p, ","), *eq = memchr(p, '=', (size_t)(end - p));
    char text[SHOWN_MAX + 4];
    const char *name = p, *name_end = eq ? eq : end, *value = eq ? eq + 1 : end, *value_end = end;
    trim(&name, &name_end);
    trim(&value, &value_end);
    bool integer = eq && value_end - value <= XQF_SET_VALUE_MAX && is_int(value, value_end, &item->value);
    bool decimal = eq && !integer && is_decimal(value, value_end);
    if (eq && is_name(name, name_end) && !is_reserved(name, name_end) && (integer || decimal)) {
        memcpy(item->name, name, (size_t)(name_end - name));
        item->name[name_end - name] = '\0';
        memcpy(item->text, value, (size_t)(value_end - value));
        item->text[value_end - value] = '\0';
        item->is_decimal = decimal;
        if (decimal)
            item->value = 0;
        *at = end;
        return 1;
    }
    if (!eq)
        snprintf(why, size, "'%s' is not Name=value", shown(name, name_end, text));
    else if (!is_name(name, name_end))
        snprintf(why, size, "'%s' is not a parameter name (a letter or _, then letters, digits or _; at most %d)",
                 shown(name, name_end, text), XQF_SET_NAME_MAX);
    else if (is_reserved(name, name_end))
        snprintf(why, size, "'%s' is the worker's to set (its memory and cores), not a run's", shown(name, name_end, text));
    else
        snprintf(why, size, "parameter %.*s needs an integer from %d to %d (or a decimal such as 0.25), got '%s'",
                 (int)(name_end - name), name, INT_MIN, INT_MAX, shown(value, value_end, text));
    return -1;
}

bool xqf_set_check(const char *set, char *why, size_t size)
{
    XqfSetItem item;
    int rc;
    while ((rc = xqf_set_next(&set, &item, why, size)) > 0) {
    }
    return rc == 0;
}

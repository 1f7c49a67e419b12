#include "params.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef XQF_TUNED_PARAMS_HEADER
#include XQF_TUNED_PARAMS_HEADER /* defines XQF_TUNED_PARAMS, the text of a parameter file */
#endif

const ParamInfo PARAM_INFO[] = {
#define PARAM(name, def, lo, hi, c_end, r_end) \
    { #name, offsetof(Params, name), def, lo, hi, c_end, r_end },
#include "params.def"
#undef PARAM
};

const int PARAM_COUNT = (int)(sizeof PARAM_INFO / sizeof PARAM_INFO[0]);

enum { MAX_NAME = 64, MAX_FILE = 1 << 20 };

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static Params compiled_defaults;

static void init_defaults(void)
{
    for (int i = 0; i < PARAM_COUNT; i++)
        params_store(&compiled_defaults, &PARAM_INFO[i], PARAM_INFO[i].def);
#ifdef XQF_TUNED_PARAMS
    char err[256];
    if (params_parse(&compiled_defaults, XQF_TUNED_PARAMS, err, sizeof err) != 0) {
        /* The build checks the file (xqf-engine params runs after linking), so this is a build error. */
        fprintf(stderr, "xqf-engine: the compiled-in parameter file is invalid: %s\n", err);
        abort();
    }
#endif
}

void params_default(Params *p)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_defaults);
    *p = compiled_defaults;
}

const ParamInfo *params_find(const char *name)
{
    for (int i = 0; i < PARAM_COUNT; i++)
        if (!strcmp(PARAM_INFO[i].name, name))
            return &PARAM_INFO[i];
    return NULL;
}

const ParamInfo *params_find_nocase(const char *name)
{
    for (int i = 0; i < PARAM_COUNT; i++)
        if (!strcasecmp(PARAM_INFO[i].name, name))
            return &PARAM_INFO[i];
    return NULL;
}

/* Printable, bounded copy of untrusted text for messages. */
static void clean(const char *in, size_t n, char *out, size_t len)
{
    size_t k = 0;
    for (size_t i = 0; i < n && in[i] && k + 1 < len; i++)
        out[k++] = isprint((unsigned char)in[i]) ? in[i] : '?';
    out[k] = '\0';
}

int params_set(Params *p, const char *name, const char *value, char *err, size_t errlen)
{
    char shown[MAX_NAME + 1];
    const ParamInfo *info = params_find(name);
    if (!info) {
        clean(name, strlen(name), shown, sizeof shown);
        return fail(err, errlen, "unknown parameter '%s'", shown);
    }
    char *end;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (errno || end == value || *end || v < info->min || v > info->max) {
        clean(value, strlen(value), shown, sizeof shown);
        return fail(err, errlen, "parameter %s needs an integer from %d to %d, got '%s'", info->name,
                    info->min, info->max, shown);
    }
    params_store(p, info, (int)v);
    return 0;
}

/* Trims spaces at both ends in place; returns the start. */
static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

int params_apply_list(Params *p, const char *list, char *err, size_t errlen)
{
    char *copy = strdup(list);
    if (!copy)
        return fail(err, errlen, "out of memory");
    Params next = *p;
    int rc = 0;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item && rc == 0; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) {
            char shown[MAX_NAME + 1];
            clean(item, strlen(item), shown, sizeof shown);
            rc = fail(err, errlen, "'%s' is not Name=value", shown);
            break;
        }
        *eq = '\0';
        rc = params_set(&next, trim(item), trim(eq + 1), err, errlen);
    }
    free(copy);
    if (rc == 0)
        *p = next;
    return rc;
}

int params_parse(Params *p, const char *text, char *err, size_t errlen)
{
    Params next = *p;
    bool seen[sizeof PARAM_INFO / sizeof PARAM_INFO[0]] = { false };
    int line_no = 0;
    const char *line = text;
    char buf[256];
    while (*line) {
        line_no++;
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        if (n >= sizeof buf)
            return fail(err, errlen, "line %d: too long", line_no);
        memcpy(buf, line, n);
        buf[n] = '\0';
        line = nl ? nl + 1 : line + n;
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = '\0';
        char *s = trim(buf);
        if (!*s)
            continue;
        /* name, then '=' or spaces, then value */
        char *name = s;
        size_t len = strcspn(s, " \t=");
        char *rest = s + len;
        if (*rest)
            *rest++ = '\0';
        rest = trim(rest);
        if (*rest == '=')
            rest = trim(rest + 1);
        const ParamInfo *info = params_find(name);
        char msg[200];
        if (info && seen[info - PARAM_INFO])
            return fail(err, errlen, "line %d: %s is set twice", line_no, info->name);
        if (!*rest) {
            char shown[MAX_NAME + 1];
            clean(name, strlen(name), shown, sizeof shown);
            return fail(err, errlen, "line %d: '%s' has no value", line_no, shown);
        }
        if (params_set(&next, name, rest, msg, sizeof msg) != 0)
            return fail(err, errlen, "line %d: %s", line_no, msg);
        seen[info - PARAM_INFO] = true;
    }
    *p = next;
    return 0;
}

int params_load(Params *p, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rbe");   /* close-on-exec (glibc, BSDs, musl) */
    if (!f)
        return fail(err, errlen, "cannot open parameter file %s: %s", path, strerror(errno));
    char *text = malloc(MAX_FILE + 1);
    if (!text) {
        fclose(f);
        return fail(err, errlen, "out of memory");
    }
    size_t n = fread(text, 1, MAX_FILE + 1, f);
    bool read_error = ferror(f);
    fclose(f);
    int rc;
    if (read_error)
        rc = fail(err, errlen, "cannot read parameter file %s", path);
    else if (n > MAX_FILE)
        rc = fail(err, errlen, "parameter file %s is larger than %d bytes", path, MAX_FILE);
    else if (memchr(text, '\0', n))
        rc = fail(err, errlen, "parameter file %s contains a NUL byte", path);
    else {
        text[n] = '\0';
        char msg[240];
        rc = params_parse(p, text, msg, sizeof msg);
        if (rc != 0)
            fail(err, errlen, "%s: %s", path, msg);
    }
    free(text);
    return rc;
}

int params_write(const Params *p, FILE *out)
{
    for (int i = 0; i < PARAM_COUNT; i++)
        if (fprintf(out, "%s = %d\n", PARAM_INFO[i].name, params_value(p, &PARAM_INFO[i])) < 0)
            return -1;
    return fflush(out) == 0 ? 0 : -1;
}

uint64_t params_hash(const Params *p)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    char buf[MAX_NAME + 32];
    for (int i = 0; i < PARAM_COUNT; i++) {
        int n = snprintf(buf, sizeof buf, "%s=%d\n", PARAM_INFO[i].name, params_value(p, &PARAM_INFO[i]));
        for (int k = 0; k < n; k++) {
            h ^= (unsigned char)buf[k];
            h *= 0x100000001b3ULL;
        }
    }
    return h;
}

bool params_equal(const Params *a, const Params *b)
{
    for (int i = 0; i < PARAM_COUNT; i++)
        if (params_value(a, &PARAM_INFO[i]) != params_value(b, &PARAM_INFO[i]))
            return false;
    return true;
}

#include "request.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A run id: decimal digits only, 1..2^62. Returns it, or 0 when malformed. */
static int64_t parse_id(const char *s, size_t len)
{
    if (len == 0 || len > 18)
        return 0;
    int64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

Route route_parse(const char *path)
{
    static const struct {
        const char *path;
        RouteKind kind;
    } FIXED[] = {
        { "/", ROUTE_RUNS }, { "/runs", ROUTE_RUNS }, { "/events", ROUTE_RUNS_EVENTS },
        { "/machines", ROUTE_MACHINES }, 
        { "/login", ROUTE_LOGIN }, { "/logout", ROUTE_LOGOUT }, { "/users", ROUTE_USERS }, { "/engines", ROUTE_ENGINES }, { "/static/chart.js", ROUTE_CHART_JS },
        { "/static/web.js", ROUTE_WEB_JS }, { "/static/style.css", ROUTE_STYLE },
    };
    Route r = { .kind = ROUTE_UNKNOWN };
    if (!path || path[0] != '/') {
        r.kind = ROUTE_BAD, r.why = "the path does not start with /";
        return r;
    }
    for (const unsigned char *p = (const unsigned char *)path; *p; p++)
        if (*p < 0x21 || *p > 0x7e) {
            r.kind = ROUTE_BAD, r.why = "the path holds a control, space or non-ASCII character";
            return r;
        }
    for (size_t i = 0; i < sizeof FIXED / sizeof FIXED[0]; i++)
        if (strcmp(path, FIXED[i].path) == 0) {
            r.kind = FIXED[i].kind;
            return r;
        }
    if (strncmp(path, "/new/", 5) == 0 && (r.run_kind = run_kind_id(path + 5)) != RUN_KIND_COUNT) {
        r.kind = ROUTE_NEW_RUN;
        return r;
    }
    if (strncmp(path, "/engines/", 9) == 0) {
        const char *name = path + 9;
        size_t n = strlen(name);
        bool ok = n > 0 && n <= ENGINE_NAME_MAX && isalnum((unsigned char)name[0]);
        for (size_t i = 0; ok && i < n; i++)
            ok = isalnum((unsigned char)name[i]) || strchr("._+-", name[i]);
        if (!ok) {
            r.kind = ROUTE_BAD, r.why = "an engine's name is 1-64 letters, digits, '.', '_', '+' or '-'";
            return r;
        }
        r.kind = ROUTE_ENGINE;
        memcpy(r.engine, name, n + 1);
        return r;
    }
    if (strncmp(path, "/runs/", 6) != 0)
        return r;
    const char *id = path + 6, *slash = strchr(id, '/');
    size_t idlen = slash ? (size_t)(slash - id) : strlen(id);
    if (!(r.run = parse_id(id, idlen))) {
        r.kind = ROUTE_BAD, r.why = "a run id is a positive decimal number";
        return r;
    }
    if (!slash) {
        r.kind = ROUTE_RUN;
        return r;
    }
    const char *rest = slash + 1;
    if (strcmp(rest, "events") == 0 || strcmp(rest, "report") == 0 || strcmp(rest, "pgn") == 0) {
        r.kind = rest[0] == 'e' ? ROUTE_RUN_EVENTS : rest[0] == 'r' ? ROUTE_RUN_REPORT : ROUTE_RUN_PGN;
        return r;
    }
    static const char *const ACTIONS[] = { "stop", "approve", "modify", "purge" };
    for (size_t i = 0; i < sizeof ACTIONS / sizeof ACTIONS[0]; i++)
        if (strcmp(rest, ACTIONS[i]) == 0) {
            r.kind = ROUTE_RUN_ACTION;
            strcpy(r.action, ACTIONS[i]);
            return r;
        }
    return r;
}

static int hex(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decodes [p, end) into out (room for max bytes and a terminator). Returns the length, or -1 with *why. */
static long decode(const char *p, const char *end, char *out, size_t max, const char **why)
{
    size_t n = 0;
    out[0] = '\0';
    for (; p < end; out[n] = '\0') {   /* out stays terminated, even when the rest is malformed */
        int c = (unsigned char)*p++;
        if (c == '+')
            c = ' ';
        else if (c == '%') {
            int hi = end - p >= 2 ? hex(p[0]) : -1, lo = end - p >= 2 ? hex(p[1]) : -1;
            if (hi < 0 || lo < 0)
                return *why = "a malformed %-escape", -1;
            c = hi * 16 + lo;
            p += 2;
        }
        if (c == 0)
            return *why = "a NUL byte", -1;
        if (n >= max)
            return *why = "a field too long", -1;
        out[n++] = (char)c;
    }
    return (long)n;
}

int form_decode(Form *f, const char *body, size_t len, const char **why)
{
    memset(f, 0, sizeof *f);
    const char *p = body, *end = body + len;
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *fend = amp ? amp : end;
        if (fend == p) {                 /* "a=1&&b=2": an empty field is skipped */
            p = fend + 1;
            continue;
        }
        if (f->count >= FORM_FIELDS_MAX)
            return *why = "too many fields", -1;
        const char *eq = memchr(p, '=', (size_t)(fend - p));
        const char *nend = eq ? eq : fend;
        int i = f->count;
        if (decode(p, nend, f->name[i], FORM_NAME_MAX, why) < 0)
            return -1;
        size_t vlen = eq ? (size_t)(fend - eq - 1) : 0;
        if (vlen > 3 * (size_t)FORM_VALUE_MAX)
            return *why = "a field too long", -1;
        if (!(f->value[i] = malloc(vlen + 1)))
            return *why = "out of memory", -1;
        f->count++;
        if (decode(eq ? eq + 1 : fend, fend, f->value[i], vlen < FORM_VALUE_MAX ? vlen : FORM_VALUE_MAX, why) < 0)
            return -1;
        p = amp ? amp + 1 : end;
    }
    return 0;
}

void form_free(Form *f)
{
    for (int i = 0; i < f->count; i++)
        free(f->value[i]);
    memset(f, 0, sizeof *f);
}

const char *form_get(const Form *f, const char *name)
{
    for (int i = 0; i < f->count; i++)
        if (strcmp(f->name[i], name) == 0)
            return f->value[i];
    return NULL;
}

/* text (len bytes, blanks around it ignored) as an IP address written canonically into out. */
static bool canonical_address(const char *text, size_t len, char *out, size_t size)
{
    while (len && (*text == ' ' || *text == '\t'))
        text++, len--;
    while (len && (text[len - 1] == ' ' || text[len - 1] == '\t'))
        len--;
    char copy[INET6_ADDRSTRLEN + 1];
    unsigned char bin[sizeof(struct in6_addr)];
    if (len == 0 || len >= sizeof copy)
        return false;
    memcpy(copy, text, len);
    copy[len] = '\0';
    int family = strchr(copy, ':') ? AF_INET6 : AF_INET;
    return inet_pton(family, copy, bin) == 1 && inet_ntop(family, bin, out, (socklen_t)size) != NULL;
}

void request_client(const char *peer, const char *trusted, const char *forwarded, char *out, size_t size)
{
    char peer_c[INET6_ADDRSTRLEN], trusted_c[INET6_ADDRSTRLEN];
    bool from_proxy = peer && trusted && forwarded && canonical_address(peer, strlen(peer), peer_c, sizeof peer_c) &&
                      canonical_address(trusted, strlen(trusted), trusted_c, sizeof trusted_c) &&
                      strcmp(peer_c, trusted_c) == 0;
    if (from_proxy) {
        const char *last = strrchr(forwarded, ',');
        last = last ? last + 1 : forwarded;
        if (canonical_address(last, strlen(last), out, size))
            return;
    }
    snprintf(out, size, "%s", peer ? peer : "");
}

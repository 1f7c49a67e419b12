#include "request.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A run, chain or progression id: decimal digits only, 1..2^62. Returns it, or 0 when malformed. */
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

typedef enum { MATCH_NO, MATCH_YES, MATCH_BAD } Match;

/*
 * One placeholder of a pattern ({id}, {chain}, {progression}, {action},
 * {kind}, {engine}, {net}) over the path's text of len bytes into *r.  A
 * malformed run, chain or progression id, engine or net name is a bad path (MATCH_BAD, r->why); an action or a kind that is not
 * one is another page's path (MATCH_NO).
 */
static Match placeholder(const char *name, size_t nlen, const char *text, size_t len, Route *r)
{
    static const char *const ACTIONS[] = {
#define RUN_VERB(ID, NAME, WHO) NAME,
#define RUN_PLAIN_VERB(ID, NAME, WHO, WRITE, DONE, BUTTON, HELP, TEXT) NAME,
#include "run_verbs.def"
    };
    if (nlen == 2 && strncmp(name, "id", 2) == 0) {
        if (!(r->run = parse_id(text, len)))
            return r->why = "a run id is a positive decimal number", MATCH_BAD;
        return MATCH_YES;
    }
    if (nlen == 11 && strncmp(name, "progression", 11) == 0) {
        if (!(r->progression = parse_id(text, len)))
            return r->why = "a progression id is a positive decimal number", MATCH_BAD;
        return MATCH_YES;
    }
    if (nlen == 5 && strncmp(name, "chain", 5) == 0) {
        if (!(r->chain = parse_id(text, len)))
            return r->why = "a chain id is a positive decimal number", MATCH_BAD;
        return MATCH_YES;
    }
    if (nlen == 6 && strncmp(name, "action", 6) == 0) {
        for (size_t i = 0; i < sizeof ACTIONS / sizeof ACTIONS[0]; i++)
            if (strlen(ACTIONS[i]) == len && strncmp(text, ACTIONS[i], len) == 0) {
                memcpy(r->action, text, len);
                r->action[len] = '\0';
                return MATCH_YES;
            }
        return MATCH_NO;
    }
    if (nlen == 4 && strncmp(name, "kind", 4) == 0) {
        char kind[32];
        if (len >= sizeof kind)
            return MATCH_NO;
        memcpy(kind, text, len);
        kind[len] = '\0';
        return (r->run_kind = run_kind_id(kind)) != RUN_KIND_COUNT ? MATCH_YES : MATCH_NO;
    }
    if (nlen == 3 && strncmp(name, "net", 3) == 0) {
        /* nets.name's own rule (025_nets.sql: printable ASCII without spaces), but for '/', the path's */
        bool ok = len > 0 && len <= NET_NAME_MAX;
        for (size_t i = 0; ok && i < len; i++)
            ok = text[i] >= '!' && text[i] <= '~' && text[i] != '/';
        if (!ok)
            return r->why = "a net's name is 1-64 printable characters without spaces or '/'", MATCH_BAD;
        memcpy(r->net, text, len);
        r->net[len] = '\0';
        return MATCH_YES;
    }
    /* {engine} */
    bool ok = len > 0 && len <= ENGINE_NAME_MAX && isalnum((unsigned char)text[0]);
    for (size_t i = 0; ok && i < len; i++)
        ok = isalnum((unsigned char)text[i]) || strchr("._+-", text[i]);
    if (!ok)
        return r->why = "an engine's name is 1-64 letters, digits, '.', '_', '+' or '-'", MATCH_BAD;
    memcpy(r->engine, text, len);
    r->engine[len] = '\0';
    return MATCH_YES;
}

/* Whether path is pattern's: its literal text the same, each placeholder's text one (an {engine} to the end). */
static Match path_match(const char *pattern, const char *path, Route *r)
{
    const char *p = pattern, *q = path;
    while (*p) {
        if (*p != '{') {
            if (*p++ != *q++)
                return MATCH_NO;
            continue;
        }
        const char *close = strchr(p, '}');
        size_t nlen = (size_t)(close - p - 1);
        bool last = nlen == 6 && strncmp(p + 1, "engine", 6) == 0;
        size_t len = last ? strlen(q) : strcspn(q, "/");
        Match m = placeholder(p + 1, nlen, q, len, r);
        if (m != MATCH_YES)
            return m;
        p = close + 1;
        q += len;
    }
    return *q ? MATCH_NO : MATCH_YES;
}

Route route_parse(const char *path)
{
    static const struct {
        const char *path;
        RouteKind kind;
    } ROUTES[] = {
#define ROUTE(KIND, PATH, ...) { PATH, ROUTE_##KIND },
#include "routes.def"
#undef ROUTE
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
    for (size_t i = 0; i < sizeof ROUTES / sizeof ROUTES[0]; i++) {
        Route m = { .kind = ROUTES[i].kind };
        Match how = path_match(ROUTES[i].path, path, &m);
        if (how == MATCH_BAD)
            m.kind = ROUTE_BAD;
        if (how != MATCH_NO)
            return m;
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

/*
 * request.h - what xqf-web reads from a request before it touches the
 * database: the route of a path and the fields of a form
 * (application/x-www-form-urlencoded, the body of every POST and the
 * query of a GET), and the client's address behind a trusted proxy.  Pure
 * parsing with fixed limits, no allocation beyond the Form itself; fuzzed
 * by tests/fuzz/fuzz_web.c.
 */
#ifndef XQF_WEB_REQUEST_H
#define XQF_WEB_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "engine_record.h"
#include "run_kind.h"

enum {
    FORM_FIELDS_MAX = 64,            /* fields in one form */
    FORM_NAME_MAX = 64,              /* bytes of a field's name */
    FORM_VALUE_MAX = 8192,           /* bytes of a field's value (decoded) */
    WEB_BODY_MAX = 65536,            /* bytes of a request body (but a net's upload: web_nets.h) */
    NET_NAME_MAX = 64                /* bytes of a net's name (025_nets.sql) */
};

/* The pages (routes.def: ROUTE_HOME, ROUTE_RUNS, ...), and two answers that are no page. */
typedef enum {
    ROUTE_BAD,                       /* malformed: 400 */
    ROUTE_UNKNOWN,                   /* no such page: 404 */
#define ROUTE(KIND, ...) ROUTE_##KIND,
#include "routes.def"
#undef ROUTE
    ROUTE_KINDS
} RouteKind;

typedef struct {
    RouteKind kind;
    int64_t run;                     /* {id}: the run id (> 0) */
    int64_t chain;                   /* {chain}: the chain id (> 0) */
    int64_t progression;             /* {progression}: the progression id (> 0) */
    char action[16];                 /* {action} */
    RunKindId run_kind;              /* {kind} */
    char engine[ENGINE_NAME_MAX + 1]; /* {engine}: its name, of engine_record.h's letters */
    char net[NET_NAME_MAX + 1];      /* {net}: a net's name, printable ASCII but '/' */
    const char *why;                 /* ROUTE_BAD: what is wrong, for the error page */
} Route;

/* The route of a path (without its query): the first row of routes.def whose path matches. This function can't fail. */
Route route_parse(const char *path);

typedef struct {
    int count;
    char name[FORM_FIELDS_MAX][FORM_NAME_MAX + 1];
    char *value[FORM_FIELDS_MAX];    /* decoded, terminated; owned by the form */
} Form;

/*
 * Decodes len bytes of "a=1&b=x%20y" into *f ('+' is a space, %XX a
 * byte).  Returns 0, or -1 with *why (static text) when the body is
 * malformed: a bad %-escape, a NUL byte, a name over FORM_NAME_MAX, a
 * value over FORM_VALUE_MAX, more than FORM_FIELDS_MAX fields, or out of
 * memory.  *f is always valid for form_free afterwards.
 */
int form_decode(Form *f, const char *body, size_t len, const char **why);
void form_free(Form *f);
/* The first value of name, or NULL. */
const char *form_get(const Form *f, const char *name);

/*
 * The client's address, for the login limits and the logs: the TCP peer's
 * address (peer), unless peer is the trusted proxy's (trusted: the
 * address xqf-web --trusted-proxy names; NULL: none) and forwarded (the
 * X-Forwarded-For it sent, the last header's value when there were
 * several; NULL: none) ends in an IP address: then that last address, the
 * one the proxy appended (what comes before it is whatever the client
 * said).  Any other peer's X-Forwarded-For is ignored: anyone can send
 * one.  Addresses are compared and written in their canonical form
 * (inet_pton, inet_ntop).  This function can't fail.
 */
void request_client(const char *peer, const char *trusted, const char *forwarded, char *out, size_t size);

#endif

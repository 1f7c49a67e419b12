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
    WEB_BODY_MAX = 65536             /* bytes of a request body */
};

typedef enum {
    ROUTE_BAD,                       /* malformed: 400 */
    ROUTE_UNKNOWN,                   /* no such page: 404 */
    ROUTE_RUNS,                      /* GET /  and /runs */
    ROUTE_RUN,                       /* /runs/ID */
    ROUTE_RUN_EVENTS,                /* /runs/ID/events: Server-Sent Events of one run */
    ROUTE_RUN_REPORT,                /* /runs/ID/report: the run's static report page (xqf-tune report) */
    ROUTE_RUN_PGN,                   /* /runs/ID/pgn[?worker=NAME&task=N]: its games as PGN (xqf-tune pgn) */
    ROUTE_RUNS_EVENTS,               /* /events: Server-Sent Events of every run */
    ROUTE_RUN_ACTION,                /* POST /runs/ID/ACTION (stop, approve, modify, purge) */
    ROUTE_MACHINES,                  /* /machines */
    ROUTE_NEW_RUN,                   /* /new/KIND: the form of a run kind (run_kinds.def) */
    ROUTE_LOGIN,                     /* /login */
    ROUTE_LOGOUT,                    /* /logout */
    ROUTE_USERS,                     /* /users: an admin creates accounts */
    ROUTE_ENGINES,                   /* /engines: the engine records (an admin adds one by POST) */
    ROUTE_ENGINE,                    /* /engines/NAME: one record and its history */
    ROUTE_CHART_JS,                  /* /static/chart.js (the Debian package's) */
    ROUTE_WEB_JS,                    /* /static/web.js (ours) */
    ROUTE_STYLE,                     /* /static/style.css */
} RouteKind;

typedef struct {
    RouteKind kind;
    int64_t run;                     /* ROUTE_RUN*: the run id (> 0) */
    char action[16];                 /* ROUTE_RUN_ACTION */
    RunKindId run_kind;              /* ROUTE_NEW_RUN */
    char engine[ENGINE_NAME_MAX + 1]; /* ROUTE_ENGINE: its name, of engine_record.h's letters */
    const char *why;                 /* ROUTE_BAD: what is wrong, for the error page */
} Route;

/* The route of a path (without its query). This function can't fail. */
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

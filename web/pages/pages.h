/*
 * pages.h - the dashboard's pages as server-rendered HTML, the bottom of
 * web/: what a page knows of its visitor (Session), the messages of a
 * form's fields, and one function per page that renders it from the store
 * into a Buf and returns its HTTP status (200 unless it says otherwise).
 * A page knows nothing of HTTP, the dispatcher or the live events: web.c
 * and live.c call down into these, never the other way (one file per area
 * in web/pages/, their shared frame and form fields in frame.h).
 */
#ifndef XQF_WEB_PAGES_H
#define XQF_WEB_PAGES_H

#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "request.h"
#include "run_kind.h"
#include "store.h"

/* The visitor: signed in or not. */
typedef struct {
    bool in;
    char name[STORE_NAME_MAX + 1];
    char role[16];                   /* viewer, tester, admin */
    char csrf[72];
} Session;

bool session_is(const Session *u, const char *role);   /* role or above (viewer < tester < admin) */

/* The message of one field of a form that was refused. */
typedef struct {
    const char *field, *message;
} FieldError;

/* An error page: status and a one-line reason, escaped. */
void page_error(Buf *b, int status, const char *reason);

/*
 * What a page of routes.def's PAGE cells is given: the connection, the
 * parsed path (the run's id, the engine's name), the query string's
 * fields and the visitor.  Each such page is declared here from its row:
 *     int page_NAME(const PageIn *in, Buf *b);
 * the runs (runs.c: filtered by the query's state, kind and owner), the
 * workers seen lately (machines.c), one engine record with its history
 * (engines.c: 404 when there is none), the SPRT calculator (sprt_calc.c:
 * the query is the calculation; 400 with a message beside each bad field).
 */
typedef struct {
    Store *s;
    const Route *rt;
    const Form *query;
    const Session *u;
} PageIn;

#define ROUTE(KIND, PATH, CONN, get, post) get
#define PAGE(RIGHT, page, refused) int page(const PageIn *in, Buf *b);
#define GET(RIGHT, handler, refused)
#define NO_GET
#include "routes.def"
#undef NO_GET
#undef GET
#undef PAGE
#undef ROUTE

/* runs.c: one run, and its live numbers. */
int page_run(Store *s, int64_t id, const Session *u, const char *notice, Buf *b);
/* A run's live numbers as one Server-Sent Event into out. Returns 1, 0 (no such run) or -1. */
int page_run_event(Store *s, int64_t run, Buf *out);

/*
 * new_run.c: the form that creates a run of kind (its fields by its record
 * in run_kinds.def), or with chain a chain whose first run is of kind
 * (SPSA or data) and its stages, with the values given and a message per
 * field (may be NULL; a message of a setting the form has no field for
 * goes on top).
 */
int page_new_run(Store *s, RunKindId kind, bool chain, const Form *values, const FieldError *errors, int nerrors,
                 const Session *u, Buf *b);

/*
 * progressions.c: the form that makes a progression (xqf-tune progression
 * new's settings: the engine, the base ref, the refs, a games run's
 * settings), with the values given and a message per field (may be NULL;
 * a message of a setting the form has no field for goes on top).
 */
int page_new_progression(const Form *values, const FieldError *errors, int nerrors, const Session *u, Buf *b);

/*
 * engines.c: the engine records (store_engines.h) and, for an admin, the
 * form that adds one, with the values given, a message per field and a
 * notice (may be NULL).
 */
int page_engines(Store *s, const Form *values, const FieldError *errors, int nerrors, const char *notice,
                 const Session *u, Buf *b);

/* What the nets page says that no table keeps: our engine's default net and the net format's size (web_nets.c). */
typedef struct {
    char default_sha256[65];         /* of the net compiled into our engine; "" when the build has none */
    int64_t default_size;
    int64_t upload_max;              /* the largest file the net format allows (engine/nnue.h) */
} NetFacts;

/*
 * nets.c: the nets (store_nets.h): each one's SHA-256, size, provenance,
 * the runs that named it with their verdicts, its state and its file;
 * our engine's default net (facts); for a tester the upload form, for an
 * admin the approval of uploads.  values (a refused upload's fields), error
 * (its reason) and notice may be NULL.
 */
int page_nets(Store *s, const NetFacts *facts, const Form *values, const char *error, const char *notice,
              const Session *u, Buf *b);

/* users.c: the login form, carrying token (the login CSRF token: web.c, login_token). */
int page_login(const char *message, const char *token, const Session *u, Buf *b);
/* The admin's form for a new account, with the values given, a message per field and a notice (may be NULL). */
int page_users(const Form *values, const FieldError *errors, int nerrors, const char *notice, const Session *u,
               Buf *b);

#endif

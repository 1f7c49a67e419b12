/*
 * web.h - the dashboard itself, independent of the HTTP library: a
 * request (method, route, decoded query and form, session cookie, client)
 * in, a response (status, type, body, cookie, redirect) out.  http.c puts
 * it on libmicrohttpd; tests and the fuzz target call the parsing parts
 * (request.h) directly.
 *
 * Rights: without a session a visitor may read (unless --login-required);
 * a viewer reads; a tester creates runs (pending until an admin approves
 * them) and stops their own; an admin approves, stops, modifies any run
 * and creates active runs.  Every POST carries the session's CSRF token,
 * a login the login form's (a cookie and a field that must match: login
 * CSRF, where a forged form signs the victim in as the attacker); every
 * action is written to the audit table.
 */
#ifndef XQF_WEB_WEB_H
#define XQF_WEB_WEB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "live.h"
#include "request.h"

typedef struct {
    const char *db;                  /* libpq conninfo */
    int db_connections;              /* connections to it for pages and actions (<= 0: 4) */
    const char *chart_js;            /* path of the Chart.js file served as /static/chart.js */
    bool tls;                        /* cookies get Secure (TLS here, or --secure-cookies behind a TLS proxy) */
    bool login_required;             /* no read-only view without a session */
    int session_hours;
    int login_per_minute;            /* failed logins per client address and minute */
    int login_per_account;           /* failed logins per account and minute (from addresses new to it) */
    int login_verifiers;             /* threads that verify passwords (Argon2id, 64 MiB each) */
    int pgn_max;                     /* games of one PGN download at most (<= 0: 20,000) */
    int tester_quota;                /* a tester's runs waiting for approval or builds at most (<= 0: 20) */
    const char *book;                /* the book of runs created from the web */
} WebConfig;

typedef struct Web Web;

/* The dashboard (connects to the database, starts the live listener). NULL on failure (logged). */
Web *web_new(const WebConfig *cfg);
/* Stops the listener and ends every event stream: before stopping the HTTP server. */
void web_shutdown(Web *w);
/* Frees the dashboard (after the HTTP server stopped). Safe twice. */
void web_destroy(Web **w);

typedef struct {
    const char *method;              /* "GET", "POST", ... */
    const char *path;                /* without the query */
    const Form *query;               /* decoded query (never NULL) */
    const Form *form;                /* decoded POST body (never NULL, empty for GET) */
    const char *session;             /* the session cookie's value, or NULL */
    const char *login_nonce;         /* the login form's cookie's value (xqf_login), or NULL */
    const char *client;              /* the client's address (rate limits), "" when unknown */
    const uint8_t *file;             /* a multipart form's file (a net's upload: POST /nets), NULL: none */
    size_t file_len;
} WebRequest;

typedef struct {
    int status;
    const char *type;                /* Content-Type */
    Buf body;
    char cookie[256];                /* a Set-Cookie value, or "" */
    char location[256];              /* a redirect target (status 303), or "" */
    char disposition[160];           /* a Content-Disposition (a file to save: a net's download), or "" */
    const char *static_body;         /* served instead of body when set (a static file) */
    size_t static_len;
    int64_t events_run;              /* >= 0: answer with the event stream of this run (0: the list) */
    bool close;                      /* the connection (and its thread) ends with this answer */
} WebResponse;

/* Handles a request into *rs (rs->body empty on entry; the caller frees it). This function can't fail. */
void web_handle(Web *w, const WebRequest *rq, WebResponse *rs);
/*
 * Whether a POST to path, from the holder of session (the cookie's value,
 * NULL for none), may go on to send its body: the route's right, checked
 * from the request's head alone, so that a large body (a net's upload) is
 * never read for a visitor who may not post it.  The form's token is in
 * the body: web_handle checks it, and the right again, when the body is
 * in.  0, or the refusal's status (403, or 503 when the database cannot
 * say) with its words in rs.
 */
int web_head_admits(Web *w, const char *path, const char *session, WebResponse *rs);

/* An error page (status and a one-line reason, escaped) into *rs. */
void web_error(WebResponse *rs, int status, const char *reason);

/* ---- live events (live.h) -------------------------------------------------------- */

typedef LiveCursor WebCursor;        /* run: the run watched, 0: every run (the runs page); seq: the newest sent */

/* A cursor at the newest event: what a new stream starts from. */
WebCursor web_cursor(Web *w, int64_t run);
/*
 * Waits up to timeout_ms for events newer than *c and writes them to out
 * as Server-Sent Events ("event: run\ndata: {...}\n\n").  Returns 1 (events
 * written), 0 (timed out: nothing written) or -1 (the server is stopping).
 */
int web_wait(Web *w, WebCursor *c, Buf *out, int timeout_ms);

#endif

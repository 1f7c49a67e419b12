/*
 * app.h - what the dashboard's files share inside web/ (not a public
 * contract): the Web object, the signed-in user, and the pages and the
 * live event text that pages.c renders from the store.
 */
#ifndef XQF_WEB_APP_H
#define XQF_WEB_APP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "buf.h"
#include "login.h"
#include "password.h"
#include "pool.h"
#include "run_kind.h"
#include "store.h"
#include "web.h"

enum { EVENT_SLOTS = 512 };

/* The newest event of one run (run -1: the list of runs changed). */
typedef struct {
    int64_t run;
    uint64_t seq;
    char *text;                      /* "event: ...\ndata: ...\n\n" */
} Event;

struct Web {
    WebConfig cfg;
    Pool *pool;                      /* the database connections of pages and actions */
    pthread_mutex_t create_lock;     /* a tester's quota counted and a run created, one request at a time */
    char *chart_js;                  /* the file's bytes (NULL when it could not be read) */
    size_t chart_js_len;
    /* live events (live.c), under ev_lock */
    pthread_mutex_t ev_lock;
    pthread_cond_t ev_cond;
    Event events[EVENT_SLOTS];
    uint64_t seq;
    bool stopping;
    int streams;
    pthread_t listener;
    bool listening;
    LoginGuard *logins;              /* login limits and password verification (login.h) */
    /* the hash of a random password, verified against when the user is unknown (web.c): read only */
    char dummy_hash[XQF_PWHASH_MAX];
    /* the key of the login forms' tokens, random at each start (web.c, login_token): read only */
    char login_key[XQF_TOKEN_HEX + 1];
};

/* The visitor: signed in or not. */
typedef struct {
    bool in;
    char name[STORE_NAME_MAX + 1];
    char role[16];                   /* viewer, tester, admin */
    char csrf[72];
} Session;

bool session_is(const Session *u, const char *role);   /* role or above (viewer < tester < admin) */

/* A run's live numbers as one Server-Sent Event into out. Returns 1, 0 (no such run) or -1. */
int page_run_event(Store *s, int64_t run, Buf *out);

/* The pages (status 200 unless they say otherwise); each returns the HTTP status. */
int page_runs(Store *s, const WebRequest *rq, const Session *u, Buf *b);
int page_run(Store *s, int64_t id, const Session *u, const char *notice, Buf *b);
int page_machines(Store *s, const Session *u, Buf *b);
/*
 * The form that creates a run of kind (its fields by its record in
 * run_kinds.def), with the values given and a message per field (may be
 * NULL; a message of a setting the form has no field for goes on top).
 */
typedef struct {
    const char *field, *message;
} FieldError;
int page_new_run(Store *s, RunKindId kind, const Form *values, const FieldError *errors, int nerrors,
                 const Session *u, Buf *b);
/* The login form, carrying token (the login CSRF token: web.c, login_token). */
int page_login(const char *message, const char *token, const Session *u, Buf *b);
/* The admin's form for a new account, with the values given, a message per field and a notice (may be NULL). */
int page_users(const Form *values, const FieldError *errors, int nerrors, const char *notice, const Session *u,
               Buf *b);
/*
 * The engine records (store_engines.h) and, for an admin, the form that
 * adds one, with the values given, a message per field and a notice (may
 * be NULL); one record with its history (404 when there is none).
 */
int page_engines(Store *s, const Form *values, const FieldError *errors, int nerrors, const char *notice,
                 const Session *u, Buf *b);
int page_engine(Store *s, const char *name, const Session *u, Buf *b);
void page_error(Buf *b, int status, const char *reason);

/* The live listener (live.c): starts and stops the thread that LISTENs and publishes. */
int live_start(Web *w);
void live_stop(Web *w);

#endif

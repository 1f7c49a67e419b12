/*
 * store_users.h - the dashboard's accounts (name, role, password hash),
 * their sessions (a token's hash with its CSRF token), and the audit of
 * what they did to runs (011_web.sql; they write through functions the
 * dashboard's role may call, 030_roles.sql).
 */
#ifndef XQF_STORE_USERS_H
#define XQF_STORE_USERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

typedef struct {
    int64_t id;
    char name[STORE_NAME_MAX + 1];
    char role[16];                   /* viewer, tester, admin */
    char pwhash[256];                /* crypto_pwhash_str */
} StoreWebUser;

/*
 * Creates or (replace) updates an account; a replaced password ends its
 * sessions.  Its line of the events log (actor's "user add" or "user
 * replace") is written in the same statement.  Returns 1, 0 (exists and
 * !replace, or a bad name/role) or -1.
 */
int store_web_user_add(Store *s, const char *name, const char *role, const char *pwhash, bool replace,
                       const char *actor);
/* Returns 1 with *out, 0 (no such user, or disabled) or -1. */
int store_web_user_get(Store *s, const char *name, StoreWebUser *out);
/* Disables (its sessions ended) or enables an account. Returns 1, 0 (no such user) or -1. */
int store_web_user_set_disabled(Store *s, const char *name, bool disabled);
/* Deletes an account and its sessions. Returns 1, 0 (no such user) or -1. */
int store_web_user_delete(Store *s, const char *name);

/* A session of user for ttl_s seconds under the token's hash, with its CSRF token. Returns 0 or -1. */
int store_web_session_add(Store *s, const char *token_hash, int64_t user, const char *csrf, int64_t ttl_s);
/* The live session of token_hash: 1 with its user and CSRF token, 0 (none or expired) or -1. */
int store_web_session_get(Store *s, const char *token_hash, StoreWebUser *user, char *csrf, size_t csrf_size);
/* Ends a session (and every expired one). Returns 0 or -1. */
int store_web_session_end(Store *s, const char *token_hash);

/* Records an action (run 0: none). Returns 0 or -1. */
int store_web_audit(Store *s, const char *actor, int64_t run, const char *action, const char *detail);
/* Records an action done to chain (> 0), with its run (0: none). Returns 0 or -1. */
int store_web_audit_chain(Store *s, const char *actor, int64_t chain, int64_t run, const char *action,
                          const char *detail);

typedef struct {
    char at[32];                     /* "YYYY-MM-DD HH:MM:SS" UTC */
    char actor[STORE_NAME_MAX + 1];
    char action[32];
    char detail[STORE_TEXT_MAX];
} StoreWebAudit;

/* A run's audit, newest first, at most max rows. Returns the count or -1; *out malloc'd. */
int store_web_audit_list(Store *s, int64_t run, int max, StoreWebAudit **out);

#endif

/*
 * password.h - passwords and secret tokens for the web dashboard's
 * accounts (xqf-web, xqf-tune user): libsodium's crypto_pwhash_str
 * (Argon2id, "interactive" limits) and its random bytes.
 */
#ifndef XQF_PASSWORD_H
#define XQF_PASSWORD_H

#include <stdbool.h>
#include <stddef.h>

enum {
    XQF_PWHASH_MAX = 128,            /* = crypto_pwhash_STRBYTES */
    XQF_TOKEN_HEX = 64,              /* hex digits of a token (32 random bytes) */
    XQF_PASSWORD_MIN = 8,            /* characters of a new account's password, at least */
    XQF_PASSWORD_MAX = 1024,         /* ... and at most */
    XQF_USER_NAME_MAX = 64           /* bytes of an account's name */
};

/*
 * The account rules both xqf-tune user add and xqf-web's users page apply:
 * a name of 1-64 letters, digits, '_', '.' or '-'; a role of viewer,
 * tester or admin; a password of 8-1024 bytes.  NULL when acceptable,
 * else what is wrong (a sentence to show the user).
 */
const char *xqf_user_name_problem(const char *name);
const char *xqf_role_problem(const char *role);
const char *xqf_password_problem(const char *password);

/* Hashes password into out (XQF_PWHASH_MAX bytes). Returns 0, or -1 (libsodium failed, out of memory). */
int xqf_password_hash(const char *password, char out[XQF_PWHASH_MAX]);
/* Whether password matches hash (a malformed hash matches nothing). */
bool xqf_password_verify(const char *hash, const char *password);
/* A fresh random token as XQF_TOKEN_HEX hex digits and a terminator. Returns 0 or -1. */
int xqf_token(char out[XQF_TOKEN_HEX + 1]);
/* The SHA-256 of text as 64 hex digits and a terminator (what the database keeps of a token). */
void xqf_token_hash(const char *text, char out[XQF_TOKEN_HEX + 1]);
/*
 * HMAC-SHA-256 of text under key (any length) as 64 hex digits and a
 * terminator: a token the server can check again from text without
 * keeping it (the login form's, signed double-submit).
 */
void xqf_token_mac(const char *key, const char *text, char out[XQF_TOKEN_HEX + 1]);
/* Compares two strings in time independent of where they differ (CSRF tokens). */
bool xqf_token_equal(const char *a, const char *b);

#endif

/*
 * login.h - what stands between the login form and a password: limits
 * of failed logins per client address and per account, the addresses each
 * account signed in from, and the threads that verify passwords.
 *
 * Limits are leaky buckets (up to N failures at once, then one more each
 * 60 / N seconds) in tables of fixed size.  A try is charged before its
 * verification and refunded when it succeeds, so tries in flight count:
 * 64 connections of one address cannot all pass a check that counts only
 * finished failures.  The account limit (against one password guessed from
 * many addresses) spares the addresses the account signed in from before
 * (Azure AD's "smart lockout" idea: familiar locations are not locked out
 * by an attack from unfamiliar ones); those pairs are written only by
 * successful logins, so no one without the password can crowd them out.
 *
 * Passwords are verified (Argon2id: 64 MiB and a fraction of a second of a
 * core each) by a fixed number of threads at a lower priority: twenty
 * logins at once cost what `verifiers` do, in memory and in cores, and the
 * pages go first.
 *
 * Thread-safe.  The tables alone (LimitTable) are not: login.c holds them
 * under its lock; they are in this header for their unit tests.
 */
#ifndef XQF_WEB_LOGIN_H
#define XQF_WEB_LOGIN_H

#include <stdbool.h>
#include <stdint.h>

enum {
    LIMIT_KEY_MAX = 160,             /* an account name, a newline and an address */
    LOGIN_SLOTS = 1024               /* entries of each table */
};

/* ---- one table of counts -------------------------------------------------------------- */

typedef struct {
    char key[LIMIT_KEY_MAX + 1];     /* "" free */
    int64_t at_ms;                   /* monotonic time of the count below */
    double count;                    /* at at_ms; drains at per_minute a minute */
} LimitSlot;

typedef struct {
    LimitSlot *slots;
    int size;
    double per_minute;               /* 0: counts never drain */
} LimitTable;

/* A table of size entries draining per_minute a minute. 0, or -1 out of memory. */
int limit_init(LimitTable *t, int size, double per_minute);
void limit_free(LimitTable *t);
/* The count of key at now_ms (0 when absent). */
double limit_count(const LimitTable *t, const char *key, int64_t now_ms);
/*
 * Adds delta to key's count at now_ms (a negative delta stops at 0; an
 * absent key with a negative delta changes nothing).  An absent key takes
 * a free or drained entry, else the entry of the smallest count (the
 * least recent of equal ones): a newcomer always starts at 0 and is never
 * refused, and crowding the table with fresh keys never frees a key whose
 * count is higher than theirs.  This function can't fail.
 */
void limit_add(LimitTable *t, const char *key, double delta, int64_t now_ms);

/* ---- the guard ------------------------------------------------------------------------ */

typedef struct {
    int per_address;                 /* failed logins per address and minute */
    int per_account;                 /* failed logins per account and minute, from addresses it did not sign in from */
    int verifiers;                   /* password verification threads */
} LoginConfig;

typedef struct LoginGuard LoginGuard;

/* Starts the verification threads. NULL when out of memory or threads (logged). */
LoginGuard *login_new(const LoginConfig *cfg);
/* Stops the threads (no verification may be waiting). Safe twice. */
void login_destroy(LoginGuard **g);

typedef enum { LOGIN_GO, LOGIN_ADDRESS_LIMIT, LOGIN_ACCOUNT_LIMIT } LoginAdmit;

/*
 * Whether a try of account from address may go on at now_ms; when it may,
 * it is charged as a failure to both (to the account only from an address
 * it did not sign in from) until login_done says otherwise.
 */
LoginAdmit login_admit(LoginGuard *g, const char *address, const char *account, int64_t now_ms);
typedef enum {
    LOGIN_FAILED,                    /* the charge stays */
    LOGIN_SUCCEEDED,                 /* refunded, and the address remembered for the account */
    LOGIN_NOT_TRIED                  /* refunded (the database failed before the password was checked) */
} LoginEnd;

/* The end of an admitted try. */
void login_done(LoginGuard *g, const char *address, const char *account, LoginEnd end, int64_t now_ms);
/* Whether password matches hash, verified on a verification thread (waiting for a free one). */
bool login_verify(LoginGuard *g, const char *hash, const char *password);

/*
 * The key of a client address in the limits: an IPv6 address by its /64
 * (one customer's network: whoever has one address there has 2^64),
 * anything else as it is.  This function can't fail.
 */
void login_address_key(const char *address, char out[LIMIT_KEY_MAX + 1]);

#endif

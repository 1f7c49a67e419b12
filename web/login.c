/*
 * login.c - the login guard (login.h): three tables under one lock and a
 * queue of verifications that a few threads at a lower priority work off.
 */
#include "login.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "password.h"
#include "thread.h"

/*
 * The verification threads' nice value: a page's thread (nice 0) weighs
 * about three times one of them with the kernel's fair scheduler
 * (sched_prio_to_weight: 1024 against 335), so pages keep their pace
 * while logins queue, and logins still go on on a machine busy elsewhere.
 */
enum { VERIFY_NICE = 5, VERIFIERS_MAX = 64 };

/* ---- one table ---------------------------------------------------------------------- */

int limit_init(LimitTable *t, int size, double per_minute)
{
    t->size = size;
    t->per_minute = per_minute;
    t->slots = calloc((size_t)size, sizeof *t->slots);
    return t->slots ? 0 : -1;
}

void limit_free(LimitTable *t)
{
    free(t->slots);
    t->slots = NULL;
}

/* A slot's count at now_ms, drained since its last change. */
static double drained(const LimitTable *t, const LimitSlot *s, int64_t now_ms)
{
    double left = s->count - (double)(now_ms - s->at_ms) * t->per_minute / 60000.0;
    return left > 0 ? left : 0;
}

/* What a slot is worth keeping: its count, -1 when free. */
static double weight(const LimitTable *t, const LimitSlot *s, int64_t now_ms)
{
    return s->key[0] ? drained(t, s, now_ms) : -1;
}

static LimitSlot *find(const LimitTable *t, const char *key)
{
    for (int i = 0; i < t->size; i++)
        if (t->slots[i].key[0] && strncmp(t->slots[i].key, key, LIMIT_KEY_MAX) == 0)
            return &t->slots[i];
    return NULL;
}

double limit_count(const LimitTable *t, const char *key, int64_t now_ms)
{
    const LimitSlot *s = find(t, key);
    return s ? drained(t, s, now_ms) : 0;
}

void limit_add(LimitTable *t, const char *key, double delta, int64_t now_ms)
{
    LimitSlot *s = find(t, key);
    if (!s && delta <= 0)
        return;
    if (!s) {                        /* a free slot, else the smallest count, the least recent of equal ones */
        s = &t->slots[0];
        double least = weight(t, s, now_ms);
        for (int i = 1; i < t->size; i++) {
            double c = weight(t, &t->slots[i], now_ms);
            if (c < least || (c == least && t->slots[i].at_ms < s->at_ms)) {
                s = &t->slots[i];
                least = c;
            }
        }
        snprintf(s->key, sizeof s->key, "%s", key);
        s->count = 0;
    } else
        s->count = drained(t, s, now_ms);
    s->count = s->count + delta > 0 ? s->count + delta : 0;
    s->at_ms = now_ms;
}

void login_address_key(const char *address, char out[LIMIT_KEY_MAX + 1])
{
    struct in6_addr a;
    char text[INET6_ADDRSTRLEN];
    if (inet_pton(AF_INET6, address, &a) == 1 && !IN6_IS_ADDR_V4MAPPED(&a)) {
        memset(a.s6_addr + 8, 0, 8);
        inet_ntop(AF_INET6, &a, text, sizeof text);
        snprintf(out, LIMIT_KEY_MAX + 1, "%s/64", text);
    } else
        snprintf(out, LIMIT_KEY_MAX + 1, "%s", address);
}

/* ---- the guard ------------------------------------------------------------------------ */

/* A verification waiting for a thread (on its caller's stack). */
typedef struct Job {
    const char *hash, *password;
    bool ok, done;
    struct Job *next;
} Job;

struct LoginGuard {
    LoginConfig cfg;
    pthread_mutex_t lock;            /* the tables and the queue */
    LimitTable addresses, accounts, known;
    pthread_cond_t queued, finished;
    Job *head, *tail;
    bool stopping;
    pthread_t threads[VERIFIERS_MAX];
    int nthreads;
};

static void *verifier_main(void *arg)
{
    LoginGuard *g = arg;
    if (thread_nice(VERIFY_NICE) != 0)
        log_debug("login: the verification thread keeps its priority");
    pthread_mutex_lock(&g->lock);
    for (;;) {
        while (!g->stopping && !g->head)
            pthread_cond_wait(&g->queued, &g->lock);
        if (g->stopping)
            break;
        Job *j = g->head;
        if (!(g->head = j->next))
            g->tail = NULL;
        pthread_mutex_unlock(&g->lock);
        bool ok = xqf_password_verify(j->hash, j->password);
        pthread_mutex_lock(&g->lock);
        j->ok = ok;
        j->done = true;
        pthread_cond_broadcast(&g->finished);
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

LoginGuard *login_new(const LoginConfig *cfg)
{
    LoginGuard *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->cfg = *cfg;
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->queued, NULL);
    pthread_cond_init(&g->finished, NULL);
    int n = cfg->verifiers < 1 ? 1 : cfg->verifiers > VERIFIERS_MAX ? VERIFIERS_MAX : cfg->verifiers;
    bool ok = limit_init(&g->addresses, LOGIN_SLOTS, cfg->per_address) == 0 &&
              limit_init(&g->accounts, LOGIN_SLOTS, cfg->per_account) == 0 &&
              limit_init(&g->known, LOGIN_SLOTS, 0) == 0;
    while (ok && g->nthreads < n && pthread_create(&g->threads[g->nthreads], NULL, verifier_main, g) == 0)
        g->nthreads++;
    if (!ok || g->nthreads < n) {
        log_error("login: no memory or threads for the login guard");
        login_destroy(&g);
    }
    return g;
}

void login_destroy(LoginGuard **gp)
{
    LoginGuard *g = *gp;
    if (!g)
        return;
    pthread_mutex_lock(&g->lock);
    g->stopping = true;
    pthread_cond_broadcast(&g->queued);
    pthread_mutex_unlock(&g->lock);
    for (int i = 0; i < g->nthreads; i++)
        pthread_join(g->threads[i], NULL);
    limit_free(&g->addresses);
    limit_free(&g->accounts);
    limit_free(&g->known);
    pthread_mutex_destroy(&g->lock);
    pthread_cond_destroy(&g->queued);
    pthread_cond_destroy(&g->finished);
    free(g);
    *gp = NULL;
}

/* The keys of a try: its address's, its account's, and the pair's. */
typedef struct {
    char address[LIMIT_KEY_MAX + 1], account[LIMIT_KEY_MAX + 1], pair[LIMIT_KEY_MAX + 1];
} Keys;

static void keys_of(const char *address, const char *account, Keys *k)
{
    login_address_key(address, k->address);
    snprintf(k->account, sizeof k->account, "%s", account);
    snprintf(k->pair, sizeof k->pair, "%.64s\n%.94s", account, k->address);   /* names have 64 bytes at most */
}

LoginAdmit login_admit(LoginGuard *g, const char *address, const char *account, int64_t now_ms)
{
    Keys k;
    keys_of(address, account, &k);
    pthread_mutex_lock(&g->lock);
    bool familiar = limit_count(&g->known, k.pair, now_ms) > 0;
    LoginAdmit a = limit_count(&g->addresses, k.address, now_ms) + 1 > g->cfg.per_address ? LOGIN_ADDRESS_LIMIT
                   : !familiar && limit_count(&g->accounts, k.account, now_ms) + 1 > g->cfg.per_account
                       ? LOGIN_ACCOUNT_LIMIT
                       : LOGIN_GO;
    if (a == LOGIN_GO) {
        limit_add(&g->addresses, k.address, 1, now_ms);
        if (!familiar)
            limit_add(&g->accounts, k.account, 1, now_ms);
    }
    pthread_mutex_unlock(&g->lock);
    return a;
}

void login_done(LoginGuard *g, const char *address, const char *account, LoginEnd end, int64_t now_ms)
{
    if (end == LOGIN_FAILED)
        return;                      /* the failure was charged at login_admit */
    Keys k;
    keys_of(address, account, &k);
    pthread_mutex_lock(&g->lock);
    bool familiar = limit_count(&g->known, k.pair, now_ms) > 0;
    if (!familiar)
        limit_add(&g->accounts, k.account, -1, now_ms);
    limit_add(&g->addresses, k.address, -1, now_ms);
    /* a known pair's count stays 1 (it marks the pair): a repeat only makes it recent */
    if (end == LOGIN_SUCCEEDED)
        limit_add(&g->known, k.pair, familiar ? 0 : 1, now_ms);
    pthread_mutex_unlock(&g->lock);
}

bool login_verify(LoginGuard *g, const char *hash, const char *password)
{
    Job j = { .hash = hash, .password = password };
    pthread_mutex_lock(&g->lock);
    if (g->tail)
        g->tail->next = &j;
    else
        g->head = &j;
    g->tail = &j;
    pthread_cond_signal(&g->queued);
    while (!j.done)
        pthread_cond_wait(&g->finished, &g->lock);
    pthread_mutex_unlock(&g->lock);
    return j.ok;
}

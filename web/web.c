/*
 * web.c - the dashboard's requests: the dispatcher over the routes' table
 * (routes.def: the method, the CSRF token and the right checked from the
 * row, once), sessions, login rate limits, the handlers of the routes,
 * actions on runs (audited), and runs and chains created from their forms
 * (read by run_form.c, a message per field).  The pages themselves are
 * web/pages/ (pages.h).
 */
#include "web.h"

#include <pthread.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_form.h"
#include "run_view.h"
#include "files.h"
#include "form_fields.h"
#include "clock.h"
#include "live.h"
#include "log.h"
#include "login.h"
#include "pages.h"
#include "param_set.h"
#include "params.h"
#include "password.h"
#include "pool.h"
#include "run_rules.h"
#include "store_builds.h"
#include "store_engines.h"
#include "store_progressions.h"
#include "store_games.h"
#include "store_runs.h"
#include "store_spsa.h"
#include "store_steer.h"
#include "store_tasks.h"
#include "store_users.h"
#include "store_web.h"
#include "run_service.h"
#include "run_verbs.h"
#include "thread.h"
#include "web_nets.h"
#include "store_nets.h"

/* POOL_WAIT_MS: a request waits this long for a connection, then is told the dashboard is busy (503) */
/* HEAVY_NICE: the nice steps a PGN download's or a report's thread gives up (login.c: VERIFY_NICE) */
enum { SESSION_COOKIE_MAX = 128, POOL_WAIT_MS = 10000, HEAVY_NICE = 5 };

static const char SESSION_COOKIE[] = "xqf_session", LOGIN_COOKIE[] = "xqf_login";

struct Web {
    WebConfig cfg;
    Pool *pool;                      /* the database connections of pages and actions */
    pthread_mutex_t create_lock;     /* a tester's quota counted and a run created, one request at a time */
    char *chart_js;                  /* the file's bytes (NULL when it could not be read) */
    size_t chart_js_len;
    Live *live;                      /* the live events (live.h) */
    LoginGuard *logins;              /* login limits and password verification (login.h) */
    /* the hash of a random password, verified against when the user is unknown (do_login): read only */
    char dummy_hash[XQF_PWHASH_MAX];
    /* the key of the login forms' tokens, random at each start (login_token): read only */
    char login_key[XQF_TOKEN_HEX + 1];
    NetFacts nets;                   /* our engine's default net, the net format's size (web_nets.h): read only */
};

/* ---- the object ---------------------------------------------------------------- */

Web *web_new(const WebConfig *cfg)
{
    Web *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->cfg = *cfg;
    char random_password[XQF_TOKEN_HEX + 1];
    if (xqf_token(random_password) != 0 || xqf_password_hash(random_password, w->dummy_hash) != 0 ||
        xqf_token(w->login_key) != 0) {
        log_error("web: no random numbers or memory for the login's dummy hash and key");
        free(w);
        return NULL;
    }
    pthread_mutex_init(&w->create_lock, NULL);
    web_net_facts(&w->nets);
    if (cfg->chart_js && !(w->chart_js = files_read(cfg->chart_js, SIZE_MAX, &w->chart_js_len)))
        log_warn("cannot read %s (%s): pages have no charts", cfg->chart_js, strerror(errno));
    LoginConfig lc = { .per_address = cfg->login_per_minute, .per_account = cfg->login_per_account,
                       .verifiers = cfg->login_verifiers };
    if (!(w->logins = login_new(&lc))) {
        web_destroy(&w);
        return NULL;
    }
    if (!(w->pool = pool_new(cfg->db, cfg->db_connections > 0 ? cfg->db_connections : 4)) ||
        !(w->live = live_new(cfg->db))) {
        log_error("cannot start: the database is not reachable");
        web_destroy(&w);
        return NULL;
    }
    return w;
}

void web_shutdown(Web *w)
{
    if (w->live)
        live_stop(w->live);
}

void web_destroy(Web **wp)
{
    Web *w = *wp;
    if (!w)
        return;
    live_destroy(&w->live);
    pool_destroy(&w->pool);
    login_destroy(&w->logins);
    free(w->chart_js);
    pthread_mutex_destroy(&w->create_lock);
    free(w);
    *wp = NULL;
}

WebCursor web_cursor(Web *w, int64_t run) { return live_cursor(w->live, run); }

int web_wait(Web *w, WebCursor *c, Buf *out, int timeout_ms) { return live_wait(w->live, c, out, timeout_ms); }


void web_error(WebResponse *rs, int status, const char *reason)
{
    buf_free(&rs->body);
    rs->status = status;
    rs->type = "text/html; charset=utf-8";
    page_error(&rs->body, status, reason);
}

/* A connection of the pool for a request, or NULL with a 503 in rs (busy, or the database is down). */
static Store *take_store(Web *w, PoolUse use, WebResponse *rs)
{
    bool busy;
    Store *s = pool_take(w->pool, use, POOL_WAIT_MS, &busy);
    if (!s)
        web_error(rs, 503, busy ? "the dashboard is busy: try again in a moment"
                                : "the run database is not reachable now");
    return s;
}

/* ---- sessions ------------------------------------------------------------------- */

/* The visitor of the request. */
static void session_of(Store *s, const WebRequest *rq, Session *u)
{
    memset(u, 0, sizeof *u);
    if (!rq->session || !*rq->session || strlen(rq->session) > SESSION_COOKIE_MAX)
        return;
    char hash[XQF_TOKEN_HEX + 1];
    xqf_token_hash(rq->session, hash);
    StoreWebUser user;
    if (store_web_session_get(s, hash, &user, u->csrf, sizeof u->csrf) == 1) {
        u->in = true;
        snprintf(u->name, sizeof u->name, "%s", user.name);
        snprintf(u->role, sizeof u->role, "%s", user.role);
    }
}

/* Whether text can be a login nonce (XQF_TOKEN_HEX lowercase hex digits, as xqf_token makes them). */
static bool nonce_ok(const char *text)
{
    return text && strlen(text) == XQF_TOKEN_HEX && strspn(text, "0123456789abcdef") == XQF_TOKEN_HEX;
}

/*
 * The login form's CSRF token, a signed double submit (OWASP's CSRF
 * prevention cheat sheet): a random nonce in a cookie of the login page
 * (HttpOnly, SameSite=Strict, Path=/login) and, in the form, its HMAC
 * under login_key (random at each start).  A POST /login must bring both,
 * matching (login_token_ok).  Another site can make a browser post a login
 * form, but can neither read the cookie (nor, SameSite, have it sent) nor
 * compute its HMAC: it cannot sign a visitor in to the attacker's account
 * to watch what they do there (login CSRF: Barth, Jackson and Mitchell,
 * "Robust Defenses for Cross-Site Request Forgery", 2008).  The request's
 * nonce when it has one, else a new one set as a cookie in rs; the token
 * into token.
 */
static int login_token(Web *w, const WebRequest *rq, WebResponse *rs, char token[XQF_TOKEN_HEX + 1])
{
    char fresh[XQF_TOKEN_HEX + 1];
    const char *nonce = rq->login_nonce;
    if (!nonce_ok(nonce)) {
        if (xqf_token(fresh) != 0)
            return -1;
        nonce = fresh;
        snprintf(rs->cookie, sizeof rs->cookie, "%s=%s; Path=/login; HttpOnly; SameSite=Strict%s", LOGIN_COOKIE,
                 nonce, w->cfg.tls ? "; Secure" : "");
    }
    xqf_token_mac(w->login_key, nonce, token);
    return 0;
}

/* Whether a POST /login brings a login nonce and its token (login_token), compared in constant time. */
static bool login_token_ok(Web *w, const WebRequest *rq)
{
    const char *field = form_get(rq->form, "login_csrf");
    char token[XQF_TOKEN_HEX + 1];
    if (!nonce_ok(rq->login_nonce) || !field)
        return false;
    xqf_token_mac(w->login_key, rq->login_nonce, token);
    return xqf_token_equal(field, token);
}

/* The login page (a failed login's, with message), its token and maybe its cookie into rs. */
static void login_page(Web *w, const WebRequest *rq, const char *message, const Session *u, WebResponse *rs)
{
    char token[XQF_TOKEN_HEX + 1];
    if (login_token(w, rq, rs, token) != 0)
        web_error(rs, 500, "no random numbers");
    else
        rs->status = page_login(message, token, u, &rs->body);
}

/*
 * A login on *sp, a connection of the pool, which it gives back around the
 * password's verification (and takes again after: *sp NULL when none came).
 * The try is charged to the client's address and to the account before the
 * verification (login.h: tries in flight count).
 */
static void do_login(Web *w, Store **sp, const WebRequest *rq, const Session *u, WebResponse *rs)
{
    const char *client = rq->client ? rq->client : "";
    const char *name = form_get(rq->form, "user"), *password = form_get(rq->form, "password");
    const char *account = name ? name : "";
    LoginAdmit admit = login_admit(w->logins, client, account, clock_now_ms());
    if (admit != LOGIN_GO) {
        web_error(rs, 429, admit == LOGIN_ADDRESS_LIMIT
                               ? "too many failed logins from your address: wait a minute"
                               : "too many failed logins for this account: wait a minute, or log in from where "
                                 "you did before");
        return;
    }
    Store *s = *sp;
    StoreWebUser user;
    int found = name && password ? store_web_user_get(s, name, &user) : 0;
    if (found < 0) {
        login_done(w->logins, client, account, LOGIN_NOT_TRIED, clock_now_ms());
        web_error(rs, 503, "the database cannot be read now");
        return;
    }
    /*
     * An unknown (or disabled) user costs the same Argon2id verification as
     * a known one, against the hash of a random password (web_new): the
     * answer's time tells no one which names exist.  The verification (a
     * fraction of a second of memory-hard work, on login.c's threads) holds
     * no connection, so that logins never keep the pages of everyone else
     * waiting for one.
     */
    pool_give(w->pool, sp);
    bool ok = password && login_verify(w->logins, found == 1 ? user.pwhash : w->dummy_hash, password) && found == 1;
    login_done(w->logins, client, account, ok ? LOGIN_SUCCEEDED : LOGIN_FAILED, clock_now_ms());
    if (!ok) {
        login_page(w, rq, "wrong user name or password", u, rs);
        return;
    }
    if (!(s = *sp = take_store(w, POOL_LIGHT, rs)))
        return;
    char token[XQF_TOKEN_HEX + 1], csrf[XQF_TOKEN_HEX + 1], hash[XQF_TOKEN_HEX + 1];
    int64_t ttl = (int64_t)w->cfg.session_hours * 3600;
    if (xqf_token(token) != 0 || xqf_token(csrf) != 0) {
        web_error(rs, 500, "no random numbers");
        return;
    }
    xqf_token_hash(token, hash);
    if (store_web_session_add(s, hash, user.id, csrf, ttl) != 0) {
        web_error(rs, 503, "the database cannot be written now");
        return;
    }
    store_web_audit(s, user.name, 0, "login", client);
    snprintf(rs->cookie, sizeof rs->cookie, "%s=%s; Path=/; Max-Age=%" PRId64 "; HttpOnly; SameSite=Strict%s",
             SESSION_COOKIE, token, ttl, w->cfg.tls ? "; Secure" : "");
    rs->status = 303;
    snprintf(rs->location, sizeof rs->location, "/");
}

static void do_logout(Web *w, Store *s, const WebRequest *rq, WebResponse *rs)
{
    char hash[XQF_TOKEN_HEX + 1];
    xqf_token_hash(rq->session, hash);
    store_web_session_end(s, hash);
    snprintf(rs->cookie, sizeof rs->cookie, "%s=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict%s", SESSION_COOKIE,
             w->cfg.tls ? "; Secure" : "");
    rs->status = 303;
    snprintf(rs->location, sizeof rs->location, "/");
}

/* ---- creating runs ------------------------------------------------------------------ */

/*
 * A run of kind from its form, or with chain a chain whose first run it
 * is (its stages from the same form): checked by the run service, made
 * for the visitor (a tester's waits for an admin's approval), then the
 * visitor is sent to the run's page or the chains'.
 */
static void create_run(Web *w, Store *s, const WebRequest *rq, RunKindId kind, bool chain, const Session *u,
                       WebResponse *rs)
{
    Errors er = { .n = 0 };
    RunSpec spec = run_spec_default(kind);
    StoreSpsaParam *params = calloc(STORE_SPSA_MAX, sizeof *params);
    RunChainSpec *stages = chain ? calloc(1, sizeof *stages) : NULL;
    if (!params || (chain && !stages)) {
        free(params);
        free(stages);
        web_error(rs, 500, "out of memory");
        return;
    }
    /* a preset named: its settings in the fields the form leaves empty, as xqf-tune's --preset gives them */
    Form filled;
    StorePreset *preset = malloc(sizeof *preset);
    int got = preset ? run_form_preset(s, rq->form, kind, &filled, preset, &er) : -1;
    const Form *f = got == 1 ? &filled : rq->form;
    if (!preset)
        field_error(&er, "preset", "%s", "out of memory");
    run_form_spec(s, f, &spec, params, &er);
    if (chain)
        run_form_chain(s, f, &spec, stages, &er);
    /* the rules beyond each field's range: the run service's (the same words as xqf-tune's), each field once */
    RunProblem problem, found[8];
    int nfound = run_problems(&spec, found, 8);
    for (int i = 0; i < nfound && i < 8; i++) {
        bool told = false;
        /* a bad spec leaves no parameters: its own message says why, not the count's */
        for (int j = 0; j < er.n && !told; j++)
            told = strcmp(er.e[j].field, found[i].field) == 0 ||
                   (strcmp(found[i].field, "params") == 0 && strcmp(er.e[j].field, "spec") == 0);
        if (!told)
            field_error(&er, found[i].field, "%s", found[i].why);
    }
    if (er.n) {
        rs->status = page_new_run(s, kind, chain, f, er.e, er.n, u, &rs->body);
        if (got == 1)
            form_free(&filled);
        free(preset);
        free(params);
        free(stages);
        return;
    }
    int64_t id = 0;
    spec.book = w->cfg.book;
    if (got == 1) {
        run_form_preset_book(preset, &spec);
        spec.preset = preset->name;
    }
    spec.owner = spec.actor = u->name;
    spec.pending = !session_is(u, "admin");
    /*
     * A tester's waiting runs are an admin's queue to read and its builds
     * the builder's: bounded per tester.  The count and the creation hold
     * create_lock (requests run on several connections at once): two
     * requests cannot both take the last place.
     */
    int quota = w->cfg.tester_quota > 0 ? w->cfg.tester_quota : 20;
    pthread_mutex_lock(&w->create_lock);
    int64_t waiting = spec.pending ? store_web_waiting(s, u->name) : 0;
    RunStatus status = waiting < 0 || waiting >= quota ? RUN_OK
                     : chain ? run_chain_create(s, &spec, stages, &id, &problem)
                             : run_create(s, &spec, &id, &problem);
    pthread_mutex_unlock(&w->create_lock);
    if (waiting < 0)
        web_error(rs, 503, "the database cannot be read now");
    else if (waiting >= quota) {
        char why[160];
        snprintf(why, sizeof why, "you have %" PRId64 " runs waiting for approval or builds already (at most %d): "
                 "wait for an admin", waiting, quota);
        web_error(rs, 429, why);
    } else if (status == RUN_BAD) {
        field_error(&er, problem.field, "%s", problem.why);
        rs->status = page_new_run(s, kind, chain, f, er.e, er.n, u, &rs->body);
    } else if (status != RUN_OK)
        web_error(rs, 503, "the run could not be created (the database failed)");
    else if (chain) {
        /* its "create" line of the events log was written with it (the run service) */
        rs->status = 303;
        snprintf(rs->location, sizeof rs->location, "/chains#chain-%" PRId64, id);
    } else {
        rs->status = 303;
        snprintf(rs->location, sizeof rs->location, "/runs/%" PRId64, id);
    }
    if (got == 1)
        form_free(&filled);
    free(preset);
    free(params);
    free(stages);
}

/* ---- a new progression ------------------------------------------------------------ */

enum { WEB_PROGRESSION_REFS_MAX = 64 };

/*
 * The refs of the field "refs" (comma-separated, each checked as a git
 * ref's syntax; none twice, not the base's) split into refs (pointers into
 * text, which is cut): their count, messages into er.  The builder resolves
 * them (never this thread): a ref that does not resolve fails its run.
 */
static int progression_refs(char *text, const char *base, const char **refs, Errors *er)
{
    int n = 0;
    char why[320];
    for (char *p = text; p && *p;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        while (*p == ' ')
            p++;
        for (char *end = p + strlen(p); end > p && end[-1] == ' ';)
            *--end = '\0';
        if (!*p || !rule_git_ref(p, why, sizeof why))
            field_error(er, "refs", "%s", *p ? why : "an empty ref: REF,REF,...");
        else if (n == WEB_PROGRESSION_REFS_MAX)
            field_error(er, "refs", "at most 64 refs%s", "");
        else if (base && strcmp(p, base) == 0)
            field_error(er, "refs", "%s is the base (Elo 0 by definition)", p);
        else {
            for (int j = 0; j < n; j++)
                if (strcmp(refs[j], p) == 0)
                    field_error(er, "refs", "%s given twice", p);
            refs[n++] = p;
        }
        p = comma ? comma + 1 : NULL;
    }
    return n;
}

/*
 * POST /new/progression: a games run per ref against the base, each made
 * by the run service as the New games form makes one (its settings read by
 * run_form_spec, checked by run_problems), then the progression
 * (xqf_progression_add) with its commits unknown until the builder pins
 * them (xqf_progression_pin).  A tester's runs wait for an admin, within
 * the tester's quota; when a run or the progression fails, the runs made
 * before are stopped.
 */
static void create_progression(Web *w, Store *s, const WebRequest *rq, const Session *u, WebResponse *rs)
{
    Errors er = { .n = 0 };
    RunSpec spec = run_spec_default(RUN_KIND_GAMES);
    StoreSpsaParam *params = calloc(STORE_SPSA_MAX, sizeof *params);
    RunSpec *specs = calloc(WEB_PROGRESSION_REFS_MAX, sizeof *specs);
    char(*names)[RUN_NAME_MADE_MAX + 1] = calloc(WEB_PROGRESSION_REFS_MAX, sizeof *names);
    StoreProgressionPoint *points = calloc(WEB_PROGRESSION_REFS_MAX, sizeof *points);
    StoreProgression *p = calloc(1, sizeof *p);
    const char *given = form_get(rq->form, "refs");
    char *text = strdup(given ? given : "");
    if (!params || !specs || !names || !points || !p || !text) {
        web_error(rs, 500, "out of memory");
        goto done;
    }
    run_form_spec(s, rq->form, &spec, params, &er);
    const char *name = form_get(rq->form, "name");
    if (!name || !*name)
        field_error(&er, "name", "the progression's name%s", "");
    if (!spec.base_ref)
        field_error(&er, "base_ref", "the base every commit plays against: a git ref%s", "");
    const char *refs[WEB_PROGRESSION_REFS_MAX];
    int n = progression_refs(text, spec.base_ref, refs, &er);
    if (n == 0 && !er.n)
        field_error(&er, "refs", "give the commits to measure: REF,REF,...%s", "");
    int64_t id = 0;
    int found = name && *name ? store_progression_find(s, name, 0, &id) : 0;
    if (found > 0)
        field_error(&er, "name", "a progression named '%s' exists", name);
    for (int i = 0; !er.n && i < n; i++) {
        specs[i] = spec;
        specs[i].test_ref = refs[i];
        run_refs_name(refs[i], spec.base_ref, NULL, names[i], sizeof names[i]);
        specs[i].name = names[i];
        specs[i].book = w->cfg.book;
        specs[i].owner = specs[i].actor = u->name;
        specs[i].pending = !session_is(u, "admin");
        RunProblem problem;
        if (run_problems(&specs[i], &problem, 1) > 0)
            field_error(&er, problem.field, "%s", problem.why);
    }
    if (found < 0) {
        web_error(rs, 503, "the database cannot be read now");
        goto done;
    }
    if (er.n) {
        rs->status = page_new_progression(rq->form, er.e, er.n, u, &rs->body);
        goto done;
    }
    int quota = w->cfg.tester_quota > 0 ? w->cfg.tester_quota : 20;
    int64_t ids[WEB_PROGRESSION_REFS_MAX];
    int made = 0;
    RunStatus status = RUN_OK;
    RunProblem problem = { .field = "", .why = "" };
    pthread_mutex_lock(&w->create_lock);
    int64_t waiting = spec.pending || !session_is(u, "admin") ? store_web_waiting(s, u->name) : 0;
    if (waiting >= 0 && waiting + n <= quota)
        for (; status == RUN_OK && made < n; made++)
            if ((status = run_create(s, &specs[made], &ids[made], &problem)) != RUN_OK)
                break;
    pthread_mutex_unlock(&w->create_lock);
    int added = 0;
    if (waiting >= 0 && waiting + n <= quota && status == RUN_OK) {
        snprintf(p->name, sizeof p->name, "%s", name);
        snprintf(p->engine, sizeof p->engine, "%s", spec.engine && *spec.engine ? spec.engine : RUN_OUR_ENGINE);
        snprintf(p->base_ref, sizeof p->base_ref, "%s", spec.base_ref);
        snprintf(p->created_by, sizeof p->created_by, "%s", u->name);
        for (int i = 0; i < n; i++) {
            points[i].run = ids[i];
            snprintf(points[i].ref, sizeof points[i].ref, "%s", refs[i]);
        }
        added = store_progression_add(s, p, points, n, &id);
    }
    if (status != RUN_OK || (made == n && added != 1)) {
        /* no progression is left half-made to run: the runs made before are stopped, each in its history */
        RunActor actor = { .name = u->name, .role = u->role };
        for (int i = 0; i < made; i++) {
            RunProblem ignored;
            run_plain(s, &actor, RUN_VERB_STOP, ids[i], &ignored);
        }
    }
    if (waiting < 0)
        web_error(rs, 503, "the database cannot be read now");
    else if (waiting + n > quota) {
        char why[200];
        snprintf(why, sizeof why, "you have %" PRId64 " runs waiting for approval or builds already, and this "
                 "progression makes %d (at most %d): wait for an admin", waiting, n, quota);
        web_error(rs, 429, why);
    } else if (status == RUN_BAD) {
        field_error(&er, problem.field, "%s", problem.why);
        rs->status = page_new_progression(rq->form, er.e, er.n, u, &rs->body);
    } else if (status != RUN_OK || added < 0)
        web_error(rs, 503, "the progression could not be created (the database failed)");
    else if (added == 0) {
        field_error(&er, "name", "a progression named '%s' was made meanwhile", name);
        rs->status = page_new_progression(rq->form, er.e, er.n, u, &rs->body);
    } else {
        rs->status = 303;
        snprintf(rs->location, sizeof rs->location, "/progressions/%" PRId64, id);
    }
done:
    free(text);
    free(p);
    free(points);
    free(names);
    free(specs);
    free(params);
}

/* ---- actions on a run ------------------------------------------------------------- */

/* A modify action's change: the form's numbers, parsed by xqf-tune's option specs (run_rules.h). */
static bool modify_fields(const Form *f, RunModify *m, char *why, size_t size)
{
    Errors er = { .n = 0 };
    int64_t priority = 0, throughput = 0;
    bool ok = rule_int(&er, f, *run_setting_option("priority"), "priority", &priority) &&
              rule_int(&er, f, *run_setting_option("max_pairs"), "max_pairs", &m->steer.max_pairs) &&
              rule_int(&er, f, *run_setting_option("pairs_per_task"), "pairs_per_task", &m->pairs_per_task);
    const char *share = form_get(f, "throughput");
    if (ok && share && *share && !int_in(share, INT32_MIN, INT32_MAX, &throughput))
        field_error(&er, "throughput", "%s", "a share of the game pairs in percent, 1..1000");
    if (er.n) {
        snprintf(why, size, "%s: %s", er.e[0].field, er.e[0].message);
        return false;
    }
    m->steer.set_priority = true, m->steer.priority = (int)priority;
    m->steer.throughput = share && *share ? (int)throughput : STORE_KEEP;
    return true;
}

/*
 * A verb's outcome (run_verbs.h) as HTTP: done, to back (303); a refusal
 * as the status of its kind (no such run or chain 404, the actor 403, the
 * state 409, a value 400) with the service's words; the database 503.
 */
static void verb_said(RunStatus status, const RunProblem *problem, const char *back, WebResponse *rs)
{
    if (status == RUN_OK) {
        rs->status = 303;
        snprintf(rs->location, sizeof rs->location, "%s", back);
    } else if (status == RUN_FAILED)
        web_error(rs, 503, "the database cannot be written now");
    else
        web_error(rs, strcmp(problem->field, RUN_FIELD_RUN) == 0 || strcmp(problem->field, RUN_FIELD_CHAIN) == 0 ? 404
                      : strcmp(problem->field, RUN_FIELD_ACTOR) == 0                                           ? 403
                      : strcmp(problem->field, RUN_FIELD_STATE) == 0                                           ? 409
                                                                                                               : 400,
                  problem->why);
}

/*
 * POST /runs/ID/ACTION: the run service's verb (run_verbs.h), which says
 * who may: a plain verb of run_verbs.def by its line, the others from
 * their forms; a refusal as the HTTP status of its kind.
 */
static void run_action(Store *s, const WebRequest *rq, const Route *rt, const Session *u, WebResponse *rs)
{
    RunActor actor = { .name = u->name, .role = u->role };
    RunProblem problem = { .field = "", .why = "" };
    const RunVerbInfo *verb = run_verb_named(rt->action);
    RunStatus status;
    if (verb && verb->plain)
        status = run_plain(s, &actor, verb->id, rt->run, &problem);
    else if (strcmp(rt->action, "approve") == 0)
        /* the commits the approval page showed: the approval binds them, not the refs' names */
        status = run_approve(s, &actor, rt->run, form_get(rq->form, "test_commit"), form_get(rq->form, "base_commit"),
                             &problem);
    else if (strcmp(rt->action, "modify") == 0) {
        RunModify m = run_modify_none();
        status = modify_fields(rq->form, &m, problem.why, sizeof problem.why)
                     ? run_modify(s, &actor, rt->run, &m, &problem) : RUN_BAD;
    } else
        status = run_purge(s, &actor, rt->run, form_get(rq->form, "worker"), &problem);
    char back[64];
    snprintf(back, sizeof back, "/runs/%" PRId64, rt->run);
    verb_said(status, &problem, back, rs);
}

/* POST /chains/ID/stop: the run service's chain stop, which says who may; back to the chain's row. */
static void chain_stop(Store *s, const Route *rt, const Session *u, WebResponse *rs)
{
    RunActor actor = { .name = u->name, .role = u->role };
    RunProblem problem = { .field = "", .why = "" };
    char back[64];
    snprintf(back, sizeof back, "/chains#chain-%" PRId64, rt->chain);
    verb_said(run_chain_stop(s, &actor, rt->chain, &problem), &problem, back, rs);
}

/* ---- accounts ------------------------------------------------------------------------------- */

/* POST /users (an admin): the account rules of xqf-tune user add, the password hashed, the action audited. */
static void create_user(Store *s, const WebRequest *rq, const Session *u, WebResponse *rs)
{
    Errors er = { .n = 0 };
    const char *name = form_get(rq->form, "name"), *role = form_get(rq->form, "role"),
               *password = form_get(rq->form, "password"), *problem;
    if ((problem = xqf_user_name_problem(name ? name : "")))
        field_error(&er, "name", "%s", problem);
    if ((problem = xqf_role_problem(role ? role : "")))
        field_error(&er, "role", "%s", problem);
    if ((problem = xqf_password_problem(password ? password : "")))
        field_error(&er, "password", "%s", problem);
    char hash[XQF_PWHASH_MAX];
    if (!er.n && xqf_password_hash(password, hash) != 0) {
        web_error(rs, 500, "the password could not be hashed");
        return;
    }
    int rc = er.n ? 0 : store_web_user_add(s, name, role, hash, false, u->name);
    if (rc < 0) {
        web_error(rs, 503, "the account could not be written (the database failed)");
        return;
    }
    if (!er.n && rc == 0)
        field_error(&er, "name", "an account named %s exists", name);
    if (er.n) {
        rs->status = page_users(rq->form, er.e, er.n, NULL, u, &rs->body);
        return;
    }
    char notice[XQF_USER_NAME_MAX + 64];
    snprintf(notice, sizeof notice, "Created the account %s (%s).", name, role);
    rs->status = page_users(NULL, NULL, 0, notice, u, &rs->body);
}

/* ---- engines ------------------------------------------------------------------------------ */

/* A text field of the engine form into out (size bytes): false, with the field's message, when too long. */
static bool engine_text(Errors *er, const Form *f, const char *field, char *out, size_t size)
{
    const char *v = form_get(f, field);
    if (!v)
        v = "";
    if (strlen(v) >= size) {
        char limit[32];
        snprintf(limit, sizeof limit, "%zu", size - 1);
        field_error(er, field, "at most %s bytes", limit);
        return false;
    }
    memcpy(out, v, strlen(v) + 1);
    return true;
}

/*
 * POST /engines (an admin): the form's record over the defaults of a new
 * engine, checked by the rules xqf-tune engine add checks
 * (engine_record_check, whose message names the option: the field is the
 * option without "--", '_' for '-'), added as the admin's, audited.  The
 * dashboard's role may add records but not change one (xqf-tune engine
 * modify, the owner's): a stolen dashboard cannot point an engine that
 * runs use at other code.
 */
static void add_engine(Store *s, const WebRequest *rq, const Session *u, WebResponse *rs)
{
    Errors er = { .n = 0 };
    const Form *f = rq->form;
    EngineRecord e;
    engine_record_default(&e);
    const char *bench = form_get(f, "bench"), *cmake = form_get(f, "cmake_target");
    engine_text(&er, f, "name", e.name, sizeof e.name);
    engine_text(&er, f, "repo", e.repo, sizeof e.repo);
    if (cmake && *cmake) {
        e.build_command[0] = '\0';
        engine_text(&er, f, "cmake_target", e.cmake_target, sizeof e.cmake_target);
    } else
        engine_text(&er, f, "build", e.build_command, sizeof e.build_command);
    engine_text(&er, f, "binary", e.binary, sizeof e.binary);
    if (bench && strcmp(bench, "none") == 0)
        e.bench_command[0] = '\0';
    else
        engine_text(&er, f, "bench", e.bench_command, sizeof e.bench_command);
    engine_text(&er, f, "bench_nodes", e.nodes_re, sizeof e.nodes_re);
    engine_text(&er, f, "bench_nps", e.nps_re, sizeof e.nps_re);
    int64_t v = e.bench_depth;
    rule_int_opt(&er, f, (OptSpec){ "--bench-depth", OPT_INT, "N", NULL, .imin = 1, .imax = ENGINE_DEPTH_MAX },
                 "bench_depth", &v);
    e.bench_depth = (int)v;
    const char *protocol = form_get(f, "protocol"), *letters = form_get(f, "letters"), *ranks = form_get(f, "ranks");
    if (engine_protocol_parse(protocol ? protocol : "", &e.protocol) != 0)
        field_error(&er, "protocol", "'%s' is not a protocol (uci or ucci)", protocol);
    if (ranks && strcmp(ranks, "0") != 0 && strcmp(ranks, "1") != 0)
        field_error(&er, "ranks", "'%s': 0 (ranks 0-9) or 1 (ranks 1-10)", ranks);
    e.ranks_from_one = ranks && strcmp(ranks, "1") == 0;
    if (letters && strcmp(letters, "nb") != 0 && strcmp(letters, "he") != 0)
        field_error(&er, "letters", "'%s' is not a dialect's letters (nb: N/B, he: H/E)", letters);
    e.he_letters = letters && strcmp(letters, "he") == 0;
    /* the commands after the handshake, ';' between them (a form field is one line) */
    const char *init = form_get(f, "init");
    e.init_count = 0;
    for (const char *p = init ? init : ""; *p && er.n == 0;) {
        const char *end = strchr(p, ';');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        while (n && p[0] == ' ')
            p++, n--;
        while (n && p[n - 1] == ' ')
            n--;
        if (n && e.init_count == ENGINE_INIT_MAX)
            field_error(&er, "init", "at most %s commands", "8");
        else if (n > ENGINE_INIT_LINE_MAX)
            field_error(&er, "init", "at most %s bytes a command", "255");
        else if (n) {
            memcpy(e.init[e.init_count], p, n);
            e.init[e.init_count++][n] = '\0';
        }
        p = end ? end + 1 : p + n;
        if (!end)
            break;
    }
    engine_text(&er, f, "hash_option", e.hash_option, sizeof e.hash_option);
    engine_text(&er, f, "threads_option", e.threads_option, sizeof e.threads_option);
    engine_text(&er, f, "net_option", e.net_option, sizeof e.net_option);
    const char *needs = form_get(f, "needs_net");
    e.needs_net = needs && *needs && strcmp(needs, "0") != 0;
    v = e.ref_nps;
    rule_int_opt(&er, f, (OptSpec){ "--ref-nps", OPT_INT, "N", NULL, .imin = 0, .imax = ENGINE_REF_NPS_MAX },
                 "ref_nps", &v);
    e.ref_nps = v;
    char why[512], field[32] = "name";
    if (!er.n && !engine_record_check(&e, why, sizeof why)) {
        /* "--bench-nodes: ..." names the field bench_nodes */
        const char *colon = strchr(why, ':');
        if (strncmp(why, "--", 2) == 0 && colon && (size_t)(colon - why - 2) < sizeof field) {
            snprintf(field, sizeof field, "%.*s", (int)(colon - why - 2), why + 2);
            for (char *c = field; *c; c++)
                *c = *c == '-' ? '_' : *c;
        }
        static const char *const FIELDS[] = { "name", "repo", "build", "cmake_target", "binary", "bench",
                                              "bench_nodes", "bench_nps", "bench_depth", "protocol", "ranks",
                                              "letters", "init", "hash_option", "threads_option", "net_option",
                                              "needs_net", "ref_nps" };
        const char *known = "name";
        for (size_t i = 0; i < sizeof FIELDS / sizeof FIELDS[0]; i++)
            if (strcmp(FIELDS[i], field) == 0)
                known = FIELDS[i];
        field_error(&er, known, "%s", colon && strncmp(why, "--", 2) == 0 ? colon + 2 : why);
    }
    int64_t id = 0;
    int rc = er.n ? 0 : store_engine_add(s, &e, u->name, &id);
    if (rc < 0) {
        web_error(rs, 503, "the engine could not be written (the database failed)");
        return;
    }
    if (!er.n && rc == 0)
        field_error(&er, "name", "an engine named %s exists", e.name);
    if (er.n) {
        rs->status = page_engines(s, f, er.e, er.n, NULL, u, &rs->body);
        return;
    }
    char notice[ENGINE_NAME_MAX + 32];
    snprintf(notice, sizeof notice, "Added the engine %s.", e.name);
    rs->status = page_engines(s, NULL, NULL, 0, notice, u, &rs->body);
}

/* ---- nets -------------------------------------------------------------------------------- */

/*
 * POST /nets (a tester or an admin): the multipart form's file, checked by
 * the engine's reader and stored waiting for an admin (web_nets.h); a
 * refusal is the nets page again with its reason, under its status.
 */
static void upload_net(Web *w, Store *s, const WebRequest *rq, const Session *u, WebResponse *rs)
{
    WebNetUpload up = { .name = form_get(rq->form, "name"), .provenance = form_get(rq->form, "provenance"),
                        .bytes = rq->file, .len = rq->file_len, .actor = u->name };
    char why[512];
    int64_t id = 0;
    int status = web_net_upload(s, &up, &id, why, sizeof why);
    if (status == 0) {
        rs->status = page_nets(s, &w->nets, NULL, NULL, why, u, &rs->body);
        return;
    }
    if (status == 503) {
        web_error(rs, 503, why);
        return;
    }
    int shown = page_nets(s, &w->nets, rq->form, why, NULL, u, &rs->body);
    rs->status = shown == 200 ? status : shown;
}

/* GET /nets/NAME/download: the file, of an approved net, or of any for an admin (an upload under review). */
static void download_net(Store *s, const Route *rt, const Session *u, WebResponse *rs)
{
    StoreNet *n = calloc(1, sizeof *n);
    int found = n ? store_load_net(s, rt->net, n) : -1;
    if (found > 0 && strcmp(n->name, rt->net) != 0)
        found = 0;                   /* an id or a SHA-256 is no net's name here: one URL per net */
    bool may = found > 0 && (n->approved || session_is(u, "admin"));
    free(n);
    uint8_t *bytes = NULL;
    size_t len = 0;
    if (found < 0)
        web_error(rs, 503, "the nets cannot be read now");
    else if (found == 0)
        web_error(rs, 404, "there is no net of that name");
    else if (!may)
        web_error(rs, 403, "this net waits for an admin's approval: only an admin may download it");
    else if (store_net_bytes(s, rt->net, &bytes, &len) != 1)
        web_error(rs, 503, "the net's file cannot be read now");
    else {
        rs->type = "application/octet-stream";
        buf_add(&rs->body, (const char *)bytes, len);
        /* the name is nets.name's letters (printable, no space, no '/'): quoted with its quotes escaped */
        size_t at = 0;
        at += (size_t)snprintf(rs->disposition, sizeof rs->disposition, "attachment; filename=\"");
        for (const char *p = rt->net; *p && at + 3 < sizeof rs->disposition; p++) {
            if (*p == '"' || *p == '\\')
                rs->disposition[at++] = '\\';
            rs->disposition[at++] = *p;
        }
        snprintf(rs->disposition + at, sizeof rs->disposition - at, "\"");
    }
    free(bytes);
}

/* POST /nets/NAME/approve (an admin): workers may fetch it and runs name it from now on (audited). */
static void approve_net(Store *s, const Route *rt, const Session *u, WebResponse *rs)
{
    int rc = store_net_approve(s, rt->net, u->name);
    if (rc == -2)
        web_error(rs, 404, "there is no net of that name");
    else if (rc < 0)
        web_error(rs, 503, "the database cannot be written now");
    else if (rc == 0)
        web_error(rs, 409, "this net is approved already");
    else {
        rs->status = 303;
        snprintf(rs->location, sizeof rs->location, "/nets");
    }
}

/* ---- the static report ------------------------------------------------------------------ */

/* Run id into *r: false when there is none (404) or the database failed (503), the answer then set. */
static bool load_run(Store *s, int64_t id, StoreRun *r, WebResponse *rs)
{
    int found = store_load_run(s, id, r, false);
    if (found <= 0)
        web_error(rs, found < 0 ? 503 : 404, found < 0 ? "the database cannot be read now" : "there is no such run");
    return found > 0;
}

/* The run's report page as xqf-tune report writes it (report/report.h): self-contained, inline SVG. */
static void run_report(Store *s, int64_t id, WebResponse *rs)
{
    StoreRun r;
    if (!load_run(s, id, &r, rs))
        return;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    char why[256] = "out of memory";
    RunStatus status = f ? run_report_html(s, &r, f, why, sizeof why) : RUN_FAILED;
    if (f && fclose(f) != 0)
        status = RUN_FAILED;
    if (status == RUN_OK)
        buf_add(&rs->body, text, len);
    else {
        char reason[320];
        snprintf(reason, sizeof reason, "the report cannot be made now: %s", why);
        web_error(rs, 503, reason);
    }
    free(text);
}

/* The run's parameter file (xqf-tune export), from the run service, to save. */
static void run_export(Store *s, int64_t id, WebResponse *rs)
{
    StoreRun r;
    if (!load_run(s, id, &r, rs))
        return;
    Params p;
    char *text = NULL, why[256] = "out of memory";
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    RunStatus status = f ? run_export_params(s, &r, &p, why, sizeof why) : RUN_FAILED;
    if (status == RUN_OK)
        status = run_export_write(&r, &p, f, why, sizeof why);
    if (f && fclose(f) != 0)
        status = RUN_FAILED;
    if (status == RUN_OK) {
        rs->type = "text/plain; charset=utf-8";
        snprintf(rs->disposition, sizeof rs->disposition, "attachment; filename=\"run-%" PRId64 ".params\"", id);
        buf_add(&rs->body, text, len);
    } else {
        char reason[320];
        snprintf(reason, sizeof reason, "the export cannot be made now: %s", why);
        web_error(rs, 503, reason);
    }
    free(text);
}

/*
 * The run's games as PGN (xqf-tune pgn), those of one worker (?worker=NAME)
 * or task (?task=N) when asked; up to --pgn-max games whatever the filter
 * (the page is built in memory, and anyone may ask for it): beyond, 413
 * asks for a narrower filter or the CLI.
 */
static void run_pgn(Web *w, Store *s, const WebRequest *rq, int64_t id, WebResponse *rs)
{
    StoreRun r;
    if (!load_run(s, id, &r, rs))
        return;
    const char *name = form_get(rq->query, "worker"), *task_text = form_get(rq->query, "task");
    int64_t worker = 0, task = 0;
    int found = 1;
    if (task_text && (!int_in(task_text, 1, INT64_MAX, &task) || (found = store_task_of_run(s, task, id)) == 0)) {
        web_error(rs, 404, "this run has no such task");
        return;
    }
    if (name && (found = store_worker_id(s, name, &worker)) == 0) {
        web_error(rs, 404, "there is no worker of that name");
        return;
    }
    StoreGameTotals totals;
    if (found < 0 || store_game_totals(s, id, &totals) != 0) {
        web_error(rs, 503, "the database cannot be read now");
        return;
    }
    int64_t most = w->cfg.pgn_max > 0 ? w->cfg.pgn_max : 20000;
    if (!worker && !task && totals.games > most) {
        web_error(rs, 413, "the run has too many games for one page: ask for one worker's (?worker=NAME) or "
                           "task's (?task=N), or use xqf-tune pgn");
        return;
    }
    char *text = NULL, why[512];
    size_t len = 0;
    int64_t written = 0;
    FILE *f = open_memstream(&text, &len);
    RunStatus status = f ? run_pgn_write(s, &r, task, worker, most, f, why, sizeof why, &written) : RUN_FAILED;
    if (f && fclose(f) != 0)
        status = RUN_FAILED;
    if (status == RUN_BAD)
        web_error(rs, 413, "too many games for one page: ask for one task's (?task=N), or use xqf-tune pgn");
    else if (status == RUN_OK) {
        rs->type = "application/vnd.chess-pgn; charset=utf-8";
        buf_add(&rs->body, text, len);
    } else
        web_error(rs, 503, "the games cannot be read now");
    free(text);
}

/* ---- the handlers: one request being answered ------------------------------------------ */

typedef struct Cell Cell;

typedef struct {
    Web *w;
    Store *s;                        /* a connection of the pool (NULL for a static file; do_login may swap it) */
    const WebRequest *rq;
    const Route *rt;
    const Session *u;                /* the visitor (NULL for a static file) */
    WebResponse *rs;
    const Cell *cell;                /* the row's cell of the method */
} Call;

static void get_page(Call *c);

static void get_run(Call *c) { c->rs->status = page_run(c->s, c->rt->run, c->u, NULL, &c->rs->body); }

static void get_run_report(Call *c) { run_report(c->s, c->rt->run, c->rs); }

static void get_run_pgn(Call *c) { run_pgn(c->w, c->s, c->rq, c->rt->run, c->rs); }

static void get_run_export(Call *c) { run_export(c->s, c->rt->run, c->rs); }

static void get_engines(Call *c) { c->rs->status = page_engines(c->s, NULL, NULL, 0, NULL, c->u, &c->rs->body); }

static void get_nets(Call *c)
{
    c->rs->status = page_nets(c->s, &c->w->nets, NULL, NULL, NULL, c->u, &c->rs->body);
}

static void get_net_download(Call *c) { download_net(c->s, c->rt, c->u, c->rs); }

static void get_login(Call *c) { login_page(c->w, c->rq, NULL, c->u, c->rs); }

static void get_users(Call *c) { c->rs->status = page_users(NULL, NULL, 0, NULL, c->u, &c->rs->body); }

/*
 * A new run's form, or a chain's (its first run of kind): filled from the
 * preset the query names (?engine=NAME&preset=NAME: run_form_preset), its
 * fields given in the query kept; an unknown preset is the form with its
 * message (400).
 */
static void new_run_form(Call *c, RunKindId kind, bool chain)
{
    Errors er = { .n = 0 };
    Form filled;
    StorePreset *p = malloc(sizeof *p);
    int got = p ? run_form_preset(c->s, c->rq->query, kind, &filled, p, &er) : -1;
    if (!p)
        web_error(c->rs, 500, "out of memory");
    else
        c->rs->status = page_new_run(c->s, kind, chain, got == 1 ? &filled : got < 0 ? c->rq->query : NULL, er.e,
                                     er.n, c->u, &c->rs->body);
    if (got == 1)
        form_free(&filled);
    free(p);
}

static void get_new_run(Call *c) { new_run_form(c, c->rt->run_kind, false); }

/* A chain's first run: an SPSA run, or with first=data (the query's, the form's) a data run. */
static RunKindId chain_first(const Form *f)
{
    const char *first = form_get(f, "first");
    return first && strcmp(first, run_kind_get(RUN_KIND_DATA)->name) == 0 ? RUN_KIND_DATA : RUN_KIND_SPSA;
}

static void get_new_chain(Call *c) { new_run_form(c, chain_first(c->rq->query), true); }

/* An event stream (http.c streams it): of one run (that must exist), or of every run. */
static void get_events(Call *c)
{
    StoreRun r;
    bool one = c->rt->kind == ROUTE_RUN_EVENTS;
    if (!one || load_run(c->s, c->rt->run, &r, c->rs))
        c->rs->events_run = one ? c->rt->run : 0;
}

static void post_login(Call *c) { do_login(c->w, &c->s, c->rq, c->u, c->rs); }

static void post_logout(Call *c) { do_logout(c->w, c->s, c->rq, c->rs); }

static void post_run_action(Call *c) { run_action(c->s, c->rq, c->rt, c->u, c->rs); }

static void post_chain_stop(Call *c) { chain_stop(c->s, c->rt, c->u, c->rs); }

static void post_new_run(Call *c) { create_run(c->w, c->s, c->rq, c->rt->run_kind, false, c->u, c->rs); }

static void get_new_progression(Call *c)
{
    c->rs->status = page_new_progression(NULL, NULL, 0, c->u, &c->rs->body);
}

static void post_new_progression(Call *c) { create_progression(c->w, c->s, c->rq, c->u, c->rs); }

static void post_new_chain(Call *c) { create_run(c->w, c->s, c->rq, chain_first(c->rq->form), true, c->u, c->rs); }

static void post_users(Call *c) { create_user(c->s, c->rq, c->u, c->rs); }

static void post_engine(Call *c) { add_engine(c->s, c->rq, c->u, c->rs); }

static void post_nets(Call *c) { upload_net(c->w, c->s, c->rq, c->u, c->rs); }

static void post_net_approve(Call *c) { approve_net(c->s, c->rt, c->u, c->rs); }

/* ---- static files ----------------------------------------------------------------------- */

extern const char WEB_JS[], WEB_CSS[];      /* assets.c, generated from web/static/ */

static void static_chart_js(Call *c)
{
    if (!c->w->chart_js) {
        web_error(c->rs, 404, "Chart.js is not installed (Debian libjs-chart.js)");
        return;
    }
    c->rs->type = "application/javascript";
    c->rs->static_body = c->w->chart_js;
    c->rs->static_len = c->w->chart_js_len;
}

static void static_web_js(Call *c)
{
    c->rs->type = "application/javascript";
    c->rs->static_body = WEB_JS;
    c->rs->static_len = strlen(WEB_JS);
}

static void static_style(Call *c)
{
    c->rs->type = "text/css";
    c->rs->static_body = WEB_CSS;
    c->rs->static_len = strlen(WEB_CSS);
}

/* ---- the dispatcher ------------------------------------------------------------------ */

typedef enum { RIGHT_OPEN, RIGHT_READ, RIGHT_VIEWER, RIGHT_TESTER, RIGHT_ADMIN } Right;
typedef enum { CSRF_NONE, CSRF_SESSION, CSRF_LOGIN } Csrf;
typedef enum { CONN_NONE, CONN_LIGHT, CONN_HEAVY } Conn;

/* What one method does on a page: who may, the token it must bring, the handler (NULL: 405). */
struct Cell {
    Right right;
    Csrf csrf;
    void (*handler)(Call *c);
    const char *refused;
    int (*page)(const PageIn *in, Buf *b);     /* a PAGE cell's page (get_page calls it) */
};

typedef struct {
    Conn conn;
    Cell get, post;
} RouteRow;

static const RouteRow ROUTES[ROUTE_KINDS] = {
#define GET(RIGHT, handler, refused) { RIGHT_##RIGHT, CSRF_NONE, handler, refused, NULL }
#define PAGE(RIGHT, page, refused) { RIGHT_##RIGHT, CSRF_NONE, get_page, refused, page }
#define POST(RIGHT, CSRF, handler, refused) { RIGHT_##RIGHT, CSRF_##CSRF, handler, refused, NULL }
#define NO_GET { RIGHT_OPEN, CSRF_NONE, NULL, NULL, NULL }
#define NO_POST NO_GET
#define ROUTE(KIND, PATH, CONN, get, post) [ROUTE_##KIND] = { CONN_##CONN, get, post },
#include "routes.def"
#undef ROUTE
#undef NO_POST
#undef NO_GET
#undef POST
#undef PAGE
#undef GET
};

/* A page that only shows (a PAGE cell): its status and its HTML. */
static void get_page(Call *c)
{
    PageIn in = { .s = c->s, .rt = c->rt, .query = c->rq->query, .u = c->u };
    c->rs->status = c->cell->page(&in, &c->rs->body);
}

/*
 * Whether the visitor may use the cell: a handler for the method, the
 * cell's token (the login form's; or a session and its token), the cell's
 * right.  The refusal into rs when not.
 */
static bool admitted(Web *w, const Call *c, const Cell *m, bool is_get)
{
    static const char *const ROLE[] = { [RIGHT_VIEWER] = "viewer", [RIGHT_TESTER] = "tester",
                                        [RIGHT_ADMIN] = "admin" };
    const Session *u = c->u;
    if (!m->handler) {
        web_error(c->rs, 405, is_get ? "this page takes only POST" : "this page takes no POST");
        return false;
    }
    /* checked before the limits and the password: a forged login costs nothing and counts for nothing */
    if (m->csrf == CSRF_LOGIN && !login_token_ok(w, c->rq)) {
        web_error(c->rs, 403, "the login form's token is missing or wrong: load the login page again (it sets a "
                              "cookie) and log in from there");
        return false;
    }
    if (m->csrf == CSRF_SESSION) {
        const char *csrf = form_get(c->rq->form, "csrf");
        if (!u->in) {
            web_error(c->rs, 403, "log in first (or your session has expired)");
            return false;
        }
        if (!csrf || !xqf_token_equal(csrf, u->csrf)) {
            web_error(c->rs, 403, "the form's CSRF token is missing or wrong: reload the page and try again");
            return false;
        }
    }
    if (m->right >= RIGHT_VIEWER && !session_is(u, ROLE[m->right])) {
        web_error(c->rs, 403, m->refused ? m->refused : "log in first (or your session has expired)");
        return false;
    }
    return true;
}

int web_head_admits(Web *w, const char *path, const char *session, WebResponse *rs)
{
    static const char *const ROLE[] = { [RIGHT_VIEWER] = "viewer", [RIGHT_TESTER] = "tester",
                                        [RIGHT_ADMIN] = "admin" };
    Route rt = route_parse(path);
    if (rt.kind == ROUTE_BAD || rt.kind == ROUTE_UNKNOWN)
        return 0;                    /* web_handle answers those, with nothing read that matters */
    const Cell *m = &ROUTES[rt.kind].post;
    if (!m->handler || m->right < RIGHT_VIEWER)
        return 0;
    Store *s = take_store(w, POOL_LIGHT, rs);
    if (!s)
        return rs->status;
    WebRequest rq = { .method = "POST", .path = path, .session = session };
    Session u;
    session_of(s, &rq, &u);
    pool_give(w->pool, &s);
    if (session_is(&u, ROLE[m->right]))
        return 0;
    web_error(rs, 403, u.in && m->refused ? m->refused : "log in first (or your session has expired)");
    return 403;
}

void web_handle(Web *w, const WebRequest *rq, WebResponse *rs)
{
    rs->status = 200;
    rs->type = "text/html; charset=utf-8";
    rs->events_run = -1;
    Route rt = route_parse(rq->path);
    bool is_get = strcmp(rq->method, "GET") == 0 || strcmp(rq->method, "HEAD") == 0;
    if (rt.kind == ROUTE_BAD) {
        web_error(rs, 400, rt.why);
        return;
    }
    if (rt.kind == ROUTE_UNKNOWN) {
        web_error(rs, 404, "there is no such page");
        return;
    }
    if (!is_get && strcmp(rq->method, "POST") != 0) {
        web_error(rs, 405, "only GET, HEAD and POST are served");
        return;
    }
    const RouteRow *row = &ROUTES[rt.kind];
    const Cell *m = is_get ? &row->get : &row->post;
    Call c = { .w = w, .rq = rq, .rt = &rt, .rs = rs, .cell = m };
    if (row->conn == CONN_NONE) {    /* a static file: no session, no database */
        if (m->handler)
            m->handler(&c);
        else
            web_error(rs, 405, is_get ? "this page takes only POST" : "this page takes no POST");
        return;
    }
    /*
     * A PGN download or a report may take seconds of a core: the pool keeps
     * a connection for everything else, and the thread, at a lower priority,
     * leaves the cores to the pages first; it ends with this answer (the
     * connection closes), its priority with it.
     */
    bool heavy = row->conn == CONN_HEAVY;
    if (heavy) {
        rs->close = true;
        if (thread_nice(HEAVY_NICE) != 0)
            log_debug("a heavy request keeps its thread's priority");
    }
    if (!(c.s = take_store(w, heavy ? POOL_HEAVY : POOL_LIGHT, rs)))
        return;
    Session u;
    session_of(c.s, rq, &u);
    c.u = &u;
    bool open = m->handler && m->right == RIGHT_OPEN;
    if (!u.in && w->cfg.login_required && !open)
        web_error(rs, 401, "log in to see the dashboard (at /login)");
    else if (admitted(w, &c, m, is_get))
        m->handler(&c);
    pool_give(w->pool, &c.s);
    if (buf_failed(&rs->body))
        web_error(rs, 500, "out of memory");
}

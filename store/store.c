/*
 * store.c - the store's core (store.h): the connection and its bounds, the
 * schema check and migrations (with the SQL functions and the roles'
 * grants), transactions, and the registry of every domain's statements
 * (store_internal.h), prepared at each connect; the conversions the
 * domains share; the administration tests ask for (store_test.h).
 */
#include "store.h"
#include "store_internal.h"
#include "store_test.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "migrations.h"

/* Advisory lock key of the migrations ("xqf" "mig"). */
#define MIGRATION_LOCK "7893734960017"

/* The core's own statements (transaction control): name, SQL, parameter count. */
#define STATEMENTS(S)                                                                            \
    S(BEGIN, "BEGIN", 0)                                                                         \
    S(SAVEPOINT, "SAVEPOINT xqf_sp", 0)                                                          \
    S(RELEASE, "RELEASE SAVEPOINT xqf_sp", 0)                                                    \
    S(ROLLBACK_TO, "ROLLBACK TO SAVEPOINT xqf_sp", 0)                                            \
    S(COMMIT, "COMMIT", 0)

STORE_STATEMENTS(STATEMENTS, store_statements_core);

/* The registry: every domain's statements, prepared at each connect. */
static const StoreStatements *const REGISTRY[] = {
    &store_statements_core,  &store_statements_runs,  &store_statements_spsa,  &store_statements_tasks,
    &store_statements_games, &store_statements_builds, &store_statements_nets, &store_statements_web,
    &store_statements_users, &store_statements_steer, &store_statements_verbs, &store_statements_engines, &store_statements_metrics,
    &store_statements_lists, &store_statements_progressions,
};

struct Store {
    char *conninfo;
    PGconn *conn;
    bool in_tx;
    bool migrate;                    /* store_connect applies missing migrations */
    bool owner;                      /* the connected role owns the schema (may migrate it) */
    char role[STORE_NAME_MAX + 1];   /* the connected role (current_user) */
    int migrated;
    int version;                     /* the schema version found */
    StoreObserver observe;           /* store_observe: told each statement's time */
    void *observe_arg;
};

/* ---- connection and the one error path ------------------------------------ */

Store *store_new(const char *conninfo)
{
    Store *s = calloc(1, sizeof *s);
    if (s && !(s->conninfo = strdup(conninfo ? conninfo : ""))) {
        free(s);
        return NULL;
    }
    return s;
}

static void disconnect(Store *s)
{
    if (s->conn)
        PQfinish(s->conn);
    s->conn = NULL;
    s->in_tx = false;
}

void store_destroy(Store **sp)
{
    Store *s = *sp;
    if (!s)
        return;
    disconnect(s);
    free(s->conninfo);
    free(s);
    *sp = NULL;
}

bool store_ok(const Store *s) { return s->conn && PQstatus(s->conn) == CONNECTION_OK; }

int store_socket(const Store *s) { return s->conn ? PQsocket(s->conn) : -1; }

int store_migrations_applied(const Store *s) { return s->migrated; }

void store_set_migrate(Store *s, bool on) { s->migrate = on; }

int store_schema_version(const Store *s) { return s->version; }

bool store_owns_schema(const Store *s) { return s->owner; }

const char *store_role(const Store *s) { return s->role; }

PGconn *store_pgconn(Store *s) { return s->conn; }

bool store_connected(const Store *s) { return s->conn != NULL; }

bool store_in_tx(const Store *s) { return s->in_tx; }

int store_db_error(Store *s, const char *what, const PGresult *res)
{
    const char *msg = res ? PQresultErrorMessage(res) : "";
    if (!msg || !*msg)
        msg = s->conn ? PQerrorMessage(s->conn) : "not connected";
    char line[512];
    snprintf(line, sizeof line, "%s", msg);
    line[strcspn(line, "\n")] = '\0';
    log_error("database: %s: %s", what, line);
    if (s->conn && PQstatus(s->conn) != CONNECTION_OK) {
        log_warn("database: connection lost");
        disconnect(s);
    }
    return -1;
}

void store_observe(Store *s, StoreObserver fn, void *arg)
{
    s->observe = fn;
    s->observe_arg = arg;
}

int store_statement_total(void)
{
    int n = 0;
    for (size_t d = 0; d < sizeof REGISTRY / sizeof *REGISTRY; d++)
        n += REGISTRY[d]->count;
    return n;
}

const char *store_statement_name(int i)
{
    for (size_t d = 0; i >= 0 && d < sizeof REGISTRY / sizeof *REGISTRY; d++) {
        if (i < REGISTRY[d]->count)
            return REGISTRY[d]->list[i].name;
        i -= REGISTRY[d]->count;
    }
    return NULL;
}

/* st's index in the registry (store_statement_name): the domain whose table holds it, by address. */
static int statement_index(const StoreStatement *st)
{
    int base = 0;
    for (size_t d = 0; d < sizeof REGISTRY / sizeof *REGISTRY; d++) {
        const StoreStatements *t = REGISTRY[d];
        if (st >= t->list && st < t->list + t->count)
            return base + (int)(st - t->list);
        base += t->count;
    }
    return -1;
}

/* Tells the observer st took since started_us (a clock read only when there is one). */
static void observed(Store *s, const StoreStatement *st, int64_t started_us)
{
    int i = statement_index(st);
    if (i >= 0)
        s->observe(s->observe_arg, i, clock_now_us() - started_us);
}

/* st run as prepared, or planned for this call; its result when its status is want. */
static PGresult *run_text(Store *s, const StoreStatement *st, const char *const *params, ExecStatusType want,
                          bool prepared)
{
    if (!s->conn) {
        store_db_error(s, st->name, NULL);
        return NULL;
    }
    int64_t started = s->observe ? clock_now_us() : 0;
    PGresult *res = prepared ? PQexecPrepared(s->conn, st->name, st->nparams, params, NULL, NULL, 0)
                             : PQexecParams(s->conn, st->sql, st->nparams, NULL, params, NULL, NULL, 0);
    if (s->observe)
        observed(s, st, started);
    if (PQresultStatus(res) == want)
        return res;
    store_db_error(s, st->name, res);
    PQclear(res);
    return NULL;
}

PGresult *store_run(Store *s, const StoreStatement *st, const char *const *params, ExecStatusType want)
{
    return run_text(s, st, params, want, true);
}

PGresult *store_run_planned(Store *s, const StoreStatement *st, const char *const *params, ExecStatusType want)
{
    return run_text(s, st, params, want, false);
}

PGresult *store_exec_prepared(Store *s, const StoreStatement *st, int n, const char *const *params,
                              const int *lengths, const int *formats, int result_format)
{
    if (!s->conn)
        return NULL;
    int64_t started = s->observe ? clock_now_us() : 0;
    PGresult *res = PQexecPrepared(s->conn, st->name, n, params, lengths, formats, result_format);
    if (s->observe)
        observed(s, st, started);
    return res;
}

/* A plain command without parameters (migrations, LISTEN, ROLLBACK). */
static int exec_simple(Store *s, const char *sql, const char *what)
{
    PGresult *res = PQexec(s->conn, sql);
    ExecStatusType st = PQresultStatus(res);
    int rc = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK ? 0 : store_db_error(s, what, res);
    PQclear(res);
    return rc;
}

/*
 * Who may execute each function, as its file's "-- grant:" line says
 * (embed_migrations.cmake): role_grants' function rows made again from the
 * files, so that a grant taken off a file's line is taken off the role
 * too.  Migrations before this rule inserted function rows of their own;
 * the files now carry every one of them.  0 or -1.
 */
static int function_grants(Store *s)
{
    int rc = exec_simple(s, "DELETE FROM role_grants WHERE kind = 'function'", "function grants");
    for (int i = 0; rc == 0 && i < XQF_FUNCTION_COUNT; i++) {
        const char *params[2] = { XQF_FUNCTIONS[i].name, XQF_FUNCTIONS[i].grants };
        PGresult *res = PQexecParams(s->conn,
                                     "INSERT INTO role_grants (role, kind, object, privileges) "
                                     "SELECT r, 'function', $1, 'EXECUTE' FROM regexp_split_to_table($2, ' ') r "
                                     "WHERE r <> ''",
                                     2, NULL, params, NULL, NULL, 0);
        rc = PQresultStatus(res) == PGRES_COMMAND_OK ? 0 : store_db_error(s, XQF_FUNCTIONS[i].name, res);
        PQclear(res);
    }
    return rc;
}

/*
 * Every SQL function with its current body (schemas/sql/functions), in one
 * transaction, then their grants (function_grants), then each role's
 * privileges from role_grants (030_roles.sql):
 * roles an administrator made since get theirs, and what the table says is
 * all they have.  In one transaction because CREATE OR REPLACE resets a
 * function's settings, the search_path xqf_apply_grants pins for SECURITY
 * DEFINER functions: no other session sees one without it.  Idempotent:
 * run at every migration run, after the migrations, which may have dropped
 * a function whose signature changed.  0 or -1.
 */
static int apply_functions(Store *s)
{
    if (exec_simple(s, "BEGIN", "functions") != 0)
        return -1;
    int rc = 0;
    for (int i = 0; rc == 0 && i < XQF_FUNCTION_COUNT; i++)
        rc = exec_simple(s, XQF_FUNCTIONS[i].sql, XQF_FUNCTIONS[i].name);
    if (rc == 0)
        rc = function_grants(s);
    if (rc == 0)
        rc = exec_simple(s, "SELECT xqf_apply_grants()", "grants");
    if (!s->conn)
        return -1;
    if (exec_simple(s, rc == 0 ? "COMMIT" : "ROLLBACK", "functions") != 0)
        rc = -1;
    return rc;
}

/* Applies the migrations not yet recorded, in order, each in its transaction, then the functions. */
static int migrate(Store *s)
{
    s->migrated = 0;
    if (exec_simple(s, "SET client_min_messages = warning", "settings") != 0 ||
        exec_simple(s, "SELECT pg_advisory_lock(" MIGRATION_LOCK ")", "migration lock") != 0)
        return -1;
    int rc = exec_simple(s, "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, "
                            "name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
                         "schema_migrations");
    for (int i = 0; rc == 0 && i < XQF_MIGRATION_COUNT; i++) {
        const XqfMigration *m = &XQF_MIGRATIONS[i];
        char version[16];
        snprintf(version, sizeof version, "%d", m->version);
        const char *params[2] = { version, m->name };
        if (exec_simple(s, "BEGIN", "migration") != 0)
            return -1;
        PGresult *res = PQexecParams(s->conn, "SELECT 1 FROM schema_migrations WHERE version = $1",
                                     1, NULL, params, NULL, NULL, 0);
        bool done = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1;
        rc = PQresultStatus(res) == PGRES_TUPLES_OK ? 0 : store_db_error(s, m->name, res);
        PQclear(res);
        if (rc == 0 && !done) {
            rc = exec_simple(s, m->sql, m->name);
            if (rc == 0) {
                res = PQexecParams(s->conn, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                                   2, NULL, params, NULL, NULL, 0);
                rc = PQresultStatus(res) == PGRES_COMMAND_OK ? 0 : store_db_error(s, m->name, res);
                PQclear(res);
            }
            if (rc == 0) {
                s->migrated++;
                log_info("database: applied migration %s", m->name);
            }
        }
        if (!s->conn)
            return -1;
        if (exec_simple(s, rc == 0 ? "COMMIT" : "ROLLBACK", "migration") != 0)
            rc = -1;
    }
    if (rc == 0)
        rc = apply_functions(s);
    if (s->conn && exec_simple(s, "SELECT pg_advisory_unlock(" MIGRATION_LOCK ")", "migration unlock") != 0)
        rc = -1;
    return rc;
}

/*
 * Connects with the settings a long-lived connection needs, under what
 * conninfo sets: a connect that gives up (connect_timeout, unless
 * PGCONNECT_TIMEOUT says otherwise) and TCP keepalives, so that a database
 * that drops packets is noticed in about a minute instead of never.  The
 * conninfo comes last (expanded as dbname), so what it sets wins.
 */
static PGconn *connect_bounded(const char *conninfo)
{
    const char *keys[8], *vals[8];
    int n = 0;
    if (!getenv("PGCONNECT_TIMEOUT"))
        keys[n] = "connect_timeout", vals[n++] = STORE_CONNECT_TIMEOUT_S;
    keys[n] = "keepalives", vals[n++] = "1";
    keys[n] = "keepalives_idle", vals[n++] = STORE_KEEPALIVES_IDLE_S;
    keys[n] = "keepalives_interval", vals[n++] = STORE_KEEPALIVES_INTERVAL_S;
    keys[n] = "keepalives_count", vals[n++] = STORE_KEEPALIVES_COUNT;
    keys[n] = "dbname", vals[n++] = conninfo;
    keys[n] = NULL, vals[n] = NULL;
    return PQconnectdbParams(keys, vals, 1);
}

/*
 * A statement_timeout of STORE_STATEMENT_TIMEOUT_MS unless one was set
 * anywhere (conninfo options, PGOPTIONS, the role, the database, the
 * server's configuration): a statement that hangs ends in an error the
 * loop survives.  After the migrations, which may take longer.  0 or -1.
 */
static int bound_statements(Store *s)
{
    PGresult *res = PQexec(s->conn, "SELECT source FROM pg_settings WHERE name = 'statement_timeout'");
    int rc = PQresultStatus(res) == PGRES_TUPLES_OK ? 0 : store_db_error(s, "statement_timeout", res);
    bool unset = rc == 0 && PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "default") == 0;
    PQclear(res);
    if (rc == 0 && unset)
        rc = exec_simple(s, "SET statement_timeout = " STORE_STATEMENT_TIMEOUT_MS, "statement_timeout");
    return rc;
}

int store_setting(Store *s, const char *name, char *out, size_t size)
{
    if (!s->conn)
        return store_db_error(s, "setting", NULL);
    const char *p[1] = { name };
    PGresult *res = PQexecParams(s->conn, "SELECT current_setting($1)", 1, NULL, p, NULL, NULL, 0);
    int rc = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 ? 0 : store_db_error(s, "setting", res);
    if (rc == 0)
        snprintf(out, size, "%s", PQgetvalue(res, 0, 0));
    PQclear(res);
    return rc;
}

int store_conn_option(const Store *s, const char *keyword, char *out, size_t size)
{
    PQconninfoOption *opts = s->conn ? PQconninfo(s->conn) : NULL;
    int rc = -1;
    for (PQconninfoOption *o = opts; o && o->keyword; o++)
        if (strcmp(o->keyword, keyword) == 0) {
            snprintf(out, size, "%s", o->val ? o->val : "");
            rc = 0;
        }
    PQconninfoFree(opts);
    return rc;
}

/* The highest version in schema_migrations into *version (0 when there is no such table). 0 or -1. */
static int schema_version(Store *s, int *version)
{
    PGresult *res = PQexec(s->conn, "SELECT to_regclass('schema_migrations') IS NOT NULL");
    bool ok = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1;
    bool table = ok && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    int rc = ok ? 0 : store_db_error(s, "schema version", res);
    PQclear(res);
    *version = 0;
    if (rc != 0 || !table)
        return rc;
    res = PQexec(s->conn, "SELECT coalesce(max(version), 0) FROM schema_migrations");
    ok = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1;
    if (ok)
        *version = atoi(PQgetvalue(res, 0, 0));
    rc = ok ? 0 : store_db_error(s, "schema version", res);
    PQclear(res);
    return rc;
}

/*
 * The connected role into s->role, and into s->owner whether it may
 * migrate: a member of the role that owns schema_migrations (the owner of
 * every table), or, in a database without it, a role that may create
 * tables where they would go.  The programs' own roles (030_roles.sql)
 * may not.  0 or -1.
 */
static int ownership(Store *s)
{
    PGresult *res = PQexec(s->conn, "SELECT current_user, CASE WHEN to_regclass('schema_migrations') IS NULL "
                                    "THEN coalesce(has_schema_privilege(current_schema(), 'CREATE'), false) "
                                    "ELSE pg_has_role((SELECT relowner FROM pg_class WHERE oid = "
                                    "to_regclass('schema_migrations')), 'MEMBER') END");
    bool ok = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1;
    if (ok) {
        snprintf(s->role, sizeof s->role, "%s", PQgetvalue(res, 0, 0));
        s->owner = strcmp(PQgetvalue(res, 0, 1), "t") == 0;
    }
    int rc = ok ? 0 : store_db_error(s, "role", res);
    PQclear(res);
    return rc;
}

/*
 * Checks the schema version against the migrations compiled in, migrating
 * when allowed (and the connected role owns the schema).  0, -1 (a
 * database error) or STORE_SCHEMA_MISMATCH.
 */
static int check_schema(Store *s)
{
    const int known = XQF_MIGRATION_COUNT ? XQF_MIGRATIONS[XQF_MIGRATION_COUNT - 1].version : 0;
    s->migrated = 0;
    if (schema_version(s, &s->version) != 0 || ownership(s) != 0)
        return -1;
    if (s->version > known) {
        log_error("database: its schema is at version %d, newer than this program knows (%d, %s): "
                  "refusing it (an older program would misread it); use the programs of the newer release",
                  s->version, known, XQF_MIGRATIONS[XQF_MIGRATION_COUNT - 1].name);
        return STORE_SCHEMA_MISMATCH;
    }
    if (s->version < known && !s->migrate) {
        log_error("database: its schema is at version %d, this program needs %d: migrate it first "
                  "(xqf-coordinator --migrate --db ..., as the schema's owner)", s->version, known);
        return STORE_SCHEMA_MISMATCH;
    }
    if (s->version < known && !s->owner) {
        log_error("database: its schema is at version %d, this program needs %d, and it connects as %s, which "
                  "does not own the schema and may not migrate it: migrate first with the owner's conninfo "
                  "(xqf-coordinator --migrate --db ...)", s->version, known, s->role);
        return STORE_SCHEMA_MISMATCH;
    }
    if (!s->migrate || !s->owner)
        return 0;
    if (migrate(s) != 0 || schema_version(s, &s->version) != 0)
        return -1;
    if (s->version != known) {
        log_error("database: after migrating, the schema is at version %d, not %d", s->version, known);
        return STORE_SCHEMA_MISMATCH;
    }
    return 0;
}

/* The server's notices in the log (its warnings, a migration's say, as warnings), not raw on stderr. */
static void notice(void *arg, const PGresult *res)
{
    (void)arg;
    const char *severity = PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);
    const char *text = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
    if (severity && strcmp(severity, "WARNING") == 0)
        log_warn("database: %s", text ? text : "");
    else
        log_info("database: %s", text ? text : "");
}

/*
 * Whether one host of a conninfo (a name, an address or a socket folder) is
 * this machine, decided by what it parses as, never by how it begins (a
 * name like "127.evil.example" is a name, resolved by DNS): empty (libpq's
 * default socket), a socket folder ('/') or an abstract socket ('@'),
 * "localhost" exactly, or an address inet_pton reads in 127.0.0.0/8, ::1
 * or ::ffff:127.0.0.0/104.  Anything else is another machine.
 */
static bool host_is_local(const char *h, size_t len)
{
    char host[256];
    if (len == 0 || h[0] == '/' || h[0] == '@')
        return true;
    if (len >= sizeof host)
        return false;
    memcpy(host, h, len);
    host[len] = '\0';
    struct in_addr v4;
    struct in6_addr v6;
    if (inet_pton(AF_INET, host, &v4) == 1)
        return (ntohl(v4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, host, &v6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
    return strcmp(host, "localhost") == 0;
}

/* The i-th element of a comma-separated list (libpq's host and hostaddr), its length in *len; NULL past the end. */
static const char *list_item(const char *list, int i, size_t *len)
{
    const char *p = list ? list : "";
    for (; i > 0; i--) {
        p = strchr(p, ',');
        if (!p)
            return NULL;
        p++;
    }
    *len = strcspn(p, ",");
    return p;
}

/* A conninfo keyword's value, or the environment variable libpq falls back to when the conninfo has none. */
static const char *option_or_env(const PQconninfoOption *opts, const char *keyword, const char *env)
{
    for (const PQconninfoOption *o = opts; o->keyword; o++)
        if (strcmp(o->keyword, keyword) == 0 && o->val && *o->val)
            return o->val;
    const char *v = env ? getenv(env) : NULL;
    return v && *v ? v : NULL;
}

bool store_conninfo_problem(const char *conninfo, char *why, size_t size)
{
    char *err = NULL;
    PQconninfoOption *opts = PQconninfoParse(conninfo ? conninfo : "", &err);
    if (!opts) {
        snprintf(why, size, "the conninfo does not parse: %s", err ? err : "out of memory");
        PQfreemem(err);
        return true;
    }
    /*
     * What libpq connects to, each keyword from the conninfo or else from its
     * environment variable (libpq's own order: a keyword given explicitly,
     * then its service's, then PGHOST...).  Each host pairs with the
     * hostaddr at the same place in its list; a hostaddr, where given, is
     * where the connection goes (libpq's connectOptions2).
     */
    const char *host = option_or_env(opts, "host", "PGHOST");
    const char *hostaddr = option_or_env(opts, "hostaddr", "PGHOSTADDR");
    const char *sslmode = option_or_env(opts, "sslmode", "PGSSLMODE");
    const char *service = option_or_env(opts, "service", "PGSERVICE");
    bool verified = sslmode && strcmp(sslmode, "verify-full") == 0;
    const char *remote = NULL;
    size_t remote_len = 0;
    for (int i = 0; !remote; i++) {
        size_t hlen = 0, alen = 0;
        const char *h = list_item(host, i, &hlen), *a = list_item(hostaddr, i, &alen);
        if (!h && !a)
            break;
        const char *where = a && alen ? a : h;
        size_t len = a && alen ? alen : h ? hlen : 0;
        if (!host_is_local(where ? where : "", len))
            remote = where, remote_len = len;
    }
    bool problem = false;
    if (service) {
        /*
         * A service (pg_service.conf, found through PGSERVICEFILE,
         * ~/.pg_service.conf or the system's folder, or an LDAP URL in it)
         * fills in every keyword the conninfo leaves out, hostaddr and
         * sslmode too, and above PGSSLMODE: only an sslmode the conninfo
         * itself says is sure.  Reading the file as libpq would means
         * following its search order and syntax, LDAP included, which
         * differ between versions and builds; a wrong guess would be a hole.
         * So a service is taken only with sslmode=verify-full in the
         * conninfo.
         */
        const char *given = NULL;
        for (const PQconninfoOption *o = opts; o->keyword; o++)
            if (strcmp(o->keyword, "sslmode") == 0)
                given = o->val;
        problem = !(given && strcmp(given, "verify-full") == 0);
        if (problem)
            snprintf(why, size, "the conninfo names service '%.100s', which may name another machine: give "
                     "sslmode=verify-full (and sslrootcert=FILE) in the conninfo itself, or host= instead of the "
                     "service; without verified TLS anyone on the way can read and change the cluster's results "
                     "and builds", service);
    } else if (remote && !verified) {
        problem = true;
        snprintf(why, size, "the database at %.*s is not on this machine: give sslmode=verify-full (and "
                 "sslrootcert=FILE) in the conninfo; without verified TLS anyone on the way can read and change "
                 "the cluster's results and builds", (int)(remote_len < 200 ? remote_len : 200), remote);
    }
    PQconninfoFree(opts);
    return problem;
}

int store_connect(Store *s)
{
    disconnect(s);
    char why[512];
    if (store_conninfo_problem(s->conninfo, why, sizeof why)) {
        log_error("database: %s", why);
        return -1;
    }
    s->conn = connect_bounded(s->conninfo);
    if (PQstatus(s->conn) != CONNECTION_OK)
        return store_db_error(s, "connect", NULL);
    PQsetNoticeReceiver(s->conn, notice, NULL);
    int schema = check_schema(s);
    if (schema != 0) {
        disconnect(s);
        return schema;
    }
    for (size_t d = 0; d < sizeof REGISTRY / sizeof REGISTRY[0]; d++)
        for (int i = 0; i < REGISTRY[d]->count; i++) {
            const StoreStatement *st = &REGISTRY[d]->list[i];
            PGresult *res = PQprepare(s->conn, st->name, st->sql, st->nparams, NULL);
            int rc = PQresultStatus(res) == PGRES_COMMAND_OK ? 0 : store_db_error(s, st->name, res);
            PQclear(res);
            if (rc != 0)
                return -1;
        }
    if (bound_statements(s) != 0 || exec_simple(s, "LISTEN xqf_runs", "listen") != 0)
        return -1;
    return 0;
}

int store_notifications(Store *s)
{
    if (!s->conn || PQconsumeInput(s->conn) == 0) {
        if (s->conn)
            store_db_error(s, "notifications", NULL);
        return -1;
    }
    int n = 0;
    PGnotify *note;
    while ((note = PQnotifies(s->conn))) {
        n++;
        PQfreemem(note);
    }
    return n;
}

int store_begin(Store *s)
{
    PGresult *res = store_run(s, &STMT[ST_BEGIN], NULL, PGRES_COMMAND_OK);
    PQclear(res);
    s->in_tx = res != NULL;
    return res ? 0 : -1;
}

int store_commit(Store *s)
{
    PGresult *res = store_run(s, &STMT[ST_COMMIT], NULL, PGRES_COMMAND_OK);
    PQclear(res);
    s->in_tx = false;
    return res ? 0 : -1;
}

/* Runs a statement without parameters or rows (transaction control). 0 or -1. */
static int command(Store *s, Stmt st)
{
    PGresult *res = store_run(s, &STMT[st], NULL, PGRES_COMMAND_OK);
    PQclear(res);
    return res ? 0 : -1;
}

int store_savepoint(Store *s) { return command(s, ST_SAVEPOINT); }

int store_release(Store *s) { return command(s, ST_RELEASE); }

int store_rollback_to(Store *s) { return command(s, ST_ROLLBACK_TO); }

void store_rollback(Store *s)
{
    if (s->conn && PQtransactionStatus(s->conn) != PQTRANS_IDLE)
        exec_simple(s, "ROLLBACK", "rollback");
    s->in_tx = false;
}

/* ---- text conversions ----------------------------------------------------- */

const char *store_num(StoreNums *n, int i, int64_t v)
{
    snprintf(n->v[i], sizeof n->v[i], "%" PRId64, v);
    return n->v[i];
}

const char *store_num_or_null(StoreNums *n, int i, int64_t v, bool null)
{
    return null ? NULL : store_num(n, i, v);
}

const char *store_dbl(StoreNums *n, int i, double v)
{
    snprintf(n->v[i], sizeof n->v[i], "%.17g", v);
    return n->v[i];
}

int64_t store_i64(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? 0 : strtoll(PQgetvalue(r, row, col), NULL, 10);
}

double store_get_dbl(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? NAN : strtod(PQgetvalue(r, row, col), NULL);
}

void store_text(const PGresult *r, int row, int col, char *out, size_t size)
{
    snprintf(out, size, "%s", PQgetvalue(r, row, col));
}

/* Parses "1,2,3" into at most max numbers; returns the count. */
int store_parse_list(const char *text, int64_t *out, int max)
{
    int n = 0;
    const char *p = text;
    while (*p && n < max) {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p)
            break;
        out[n++] = v;
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

/* A PostgreSQL array literal of texts, each quoted and escaped; NULL when out of memory. */
char *store_text_array(const char *const *items, int n)
{
    size_t size = 3;
    for (int i = 0; i < n; i++)
        size += 2 * strlen(items[i]) + 3;
    char *out = malloc(size), *p = out;
    if (!out)
        return NULL;
    *p++ = '{';
    for (int i = 0; i < n; i++) {
        if (i)
            *p++ = ',';
        *p++ = '"';
        for (const char *c = items[i]; *c; c++) {
            if (*c == '"' || *c == '\\')
                *p++ = '\\';
            *p++ = *c;
        }
        *p++ = '"';
    }
    *p++ = '}';
    *p = '\0';
    return out;
}

void store_text_add(StoreText *t, const char *fmt, ...)
{
    for (;;) {
        if (!t->data && t->cap)
            return;
        size_t room = t->cap - t->len;
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(t->data ? t->data + t->len : NULL, t->data ? room : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            free(t->data);
            t->data = NULL;
            return;
        }
        if ((size_t)k < room) {
            t->len += (size_t)k;
            return;
        }
        size_t cap = (t->cap ? t->cap * 2 : 1024) + (size_t)k;
        char *bigger = realloc(t->data, cap);
        if (!bigger) {
            free(t->data);
            t->data = NULL;
            t->cap = 1;
            return;
        }
        t->data = bigger;
        t->cap = cap;
    }
}

void store_text_ints(StoreText *t, const void *base, size_t stride, int n)
{
    store_text_add(t, "{");
    for (int i = 0; i < n; i++)
        store_text_add(t, "%s%" PRId64, i ? "," : "", *(const int64_t *)((const char *)base + (size_t)i * stride));
    store_text_add(t, "}");
}

/*
 * Runs a query that returns rows and allocates one zeroed element of
 * `size` bytes per row in *rows (NULL when there are none).  Returns the
 * result for the caller to read and PQclear, with *count set, or NULL
 * (nothing allocated) on a database error or when out of memory.
 */
PGresult *store_fetch_rows(Store *s, const StoreStatement *st, const char *const *params, size_t size, void **rows,
                           int *count)
{
    *rows = NULL;
    PGresult *res = store_run(s, st, params, PGRES_TUPLES_OK);
    if (!res)
        return NULL;
    *count = PQntuples(res);
    if (*count > 0 && !(*rows = calloc((size_t)*count, size))) {
        PQclear(res);
        return NULL;
    }
    return res;
}

/*
 * One zeroed element of `size` bytes per row of res into *out (NULL when
 * there are none): the row count, or -1 when res is NULL (the query
 * failed) or out of memory (res then cleared).
 */
int store_rows_alloc(PGresult *res, size_t size, void **out)
{
    if (!res)
        return -1;
    int n = PQntuples(res);
    if (n && !(*out = calloc((size_t)n, size))) {
        PQclear(res);
        return -1;
    }
    return n;
}

int store_command_rows(Store *s, const StoreStatement *st, const char *const *params)
{
    PGresult *res = store_run(s, st, params, PGRES_COMMAND_OK);
    if (!res)
        return -1;
    int rows = atoi(PQcmdTuples(res));
    PQclear(res);
    return rows;
}

int store_void_call(Store *s, const StoreStatement *st, const char *const *params)
{
    PGresult *res = store_run(s, st, params, PGRES_TUPLES_OK);
    PQclear(res);
    return res ? 0 : -1;
}

/* The id a lookup of parameters p finds (its first column): 1 with *id, 0 (none) or -1. */
int store_id_of(Store *s, const StoreStatement *st, const char *const *p, int64_t *id)
{
    PGresult *res = store_run(s, st, p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int found = PQntuples(res) == 1;
    if (found)
        *id = store_i64(res, 0, 0);
    PQclear(res);
    return found;
}

/* Runs a statement answering 'ok' or 'stale': 1, 0 or -1. */
int store_ok_or_stale(Store *s, const StoreStatement *st, const char *const *p)
{
    PGresult *res = store_run(s, st, p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int ok = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "ok") == 0;
    PQclear(res);
    return ok;
}

int64_t store_count_of(Store *s, const StoreStatement *st, const char *const *p)
{
    PGresult *res = store_run(s, st, p, PGRES_TUPLES_OK);
    if (!res)
        return -1;
    int64_t v = store_i64(res, 0, 0);
    PQclear(res);
    return v;
}

/* A chunk of a stored blob by statement st (BUILD_CHUNK or NET_CHUNK: length, bytes, name, signature). */
int store_blob_chunk(Store *s, const StoreStatement *st, const char *sha256, int64_t offset, size_t max, void *out,
                     size_t *len, int64_t *total, char name[STORE_NAME_MAX + 1], char signature[STORE_SIG_HEX + 1])
{
    if (!store_connected(s))
        return store_db_error(s, st->name, NULL);
    /* substring's FROM is an int4 and gets + 1: offsets from INT32_MAX on are past any blob (1 GB at most) */
    if (offset < 0 || offset >= INT32_MAX || max > INT32_MAX)
        return 0;
    StoreNums n;
    const char *p[3] = { sha256, store_num(&n, 0, offset), store_num(&n, 1, (int64_t)max) };
    /* binary results: the bytea as bytes, the length as a big-endian int8 */
    PGresult *res = store_exec_prepared(s, st, 3, p, NULL, NULL, 1);
    if (PQresultStatus(res) != PGRES_TUPLES_OK) {
        store_db_error(s, st->name, res);
        PQclear(res);
        return -1;
    }
    int found = PQntuples(res) == 1 && PQgetlength(res, 0, 0) == 8;
    if (found) {
        const unsigned char *b = (const unsigned char *)PQgetvalue(res, 0, 0);
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
            v = v << 8 | b[i];
        *total = (int64_t)v;
        *len = (size_t)PQgetlength(res, 0, 1);
        found = *len <= max && (offset < *total || (offset == 0 && *total == 0)) &&
                PQgetlength(res, 0, 2) <= STORE_NAME_MAX && PQgetlength(res, 0, 3) <= STORE_SIG_HEX;
        if (found) {
            memcpy(out, PQgetvalue(res, 0, 1), *len);
            snprintf(name, STORE_NAME_MAX + 1, "%.*s", PQgetlength(res, 0, 2), PQgetvalue(res, 0, 2));
            snprintf(signature, STORE_SIG_HEX + 1, "%.*s", PQgetlength(res, 0, 3), PQgetvalue(res, 0, 3));
        }
    }
    PQclear(res);
    return found;
}

int store_exec(Store *s, const char *sql, char *error, size_t size)
{
    snprintf(error, size, "%s", s->conn ? "" : "08003 not connected");
    if (!store_connected(s))
        return -1;
    PGresult *res = PQexec(s->conn, sql);
    ExecStatusType st = PQresultStatus(res);
    int rc = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK ? 0 : -1;
    if (rc != 0) {
        const char *code = PQresultErrorField(res, PG_DIAG_SQLSTATE);
        const char *text = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
        snprintf(error, size, "%s %s", code ? code : "?", text ? text : PQerrorMessage(s->conn));
        log_debug("database: %s", error);
    }
    PQclear(res);
    return rc;
}

static void quiet(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

int store_admin_database(const char *conninfo, const char *name, bool drop)
{
    PGconn *conn = PQconnectdb(conninfo);
    int rc = -1;
    if (PQstatus(conn) == CONNECTION_OK) {
        PQsetNoticeProcessor(conn, quiet, NULL);
        char *ident = PQescapeIdentifier(conn, name, strlen(name));
        char sql[256];
        snprintf(sql, sizeof sql, drop ? "DROP DATABASE IF EXISTS %s WITH (FORCE)" : "CREATE DATABASE %s",
                 ident ? ident : "\"\"");
        PQfreemem(ident);
        PGresult *res = PQexec(conn, sql);
        rc = PQresultStatus(res) == PGRES_COMMAND_OK ? 0 : -1;
        if (rc != 0)
            log_error("database: %s: %s", sql, PQresultErrorMessage(res));
        PQclear(res);
    } else {
        log_error("database: connect: %s", PQerrorMessage(conn));
    }
    PQfinish(conn);
    return rc;
}

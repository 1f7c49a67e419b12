#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "log.h"
#include "run_kind.h"
#include "run_rules.h"
#include "sprt_calc.h"
#include "stats.h"
#include "store_builds.h"
#include "store_runs.h"
#include "store_spsa.h"
#include "store_tasks.h"

const char CLI_PROGRAM[] = "xqf-tune";

/* per thread, as the builder's server records a failed build's reason (cli_last_error) */
static _Thread_local char last_error[1024];

int cli_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    /* a message may quote an engine's or a branch's words: never raw to the terminal */
    char shown[4 * sizeof last_error];
    xqf_escape(shown, sizeof shown, last_error);
    opts_error(CLI_PROGRAM, "%s", shown);
    return status;
}

const char *cli_last_error(void) { return last_error; }

int cli_check_build_set(Store *s, const char *build_option, const char *set_option, const char *set, int64_t build)
{
    StoreBuild b;
    bool listed = true;
    char why[512];
    int rc = rule_registered_build_set(s, build, set, &b, &listed, why, sizeof why);
    if (rc < 0)
        return rc == -2 ? cli_fail(CLI_USAGE, "%s: %s", build_option, why) : cli_fail(CLI_FAIL, "%s", why);
    /*
     * A build registered before builds recorded their parameters (018): its
     * list is unknown.  Such builds are this project's engine at some commit
     * (what xqf-tune build made and registered), so this xqf-tune's table is
     * the better guess: the set is checked against it, as before, with a
     * warning that says how to record the build's own list.  A check of the
     * syntax only would let a misspelt name through, to be refused by the
     * build on every worker instead (a task handed back, then quarantined).
     */
    if (!listed && *set)
        fprintf(stderr, "xqf-tune: warning: build %" PRId64 " (%s) was registered before builds recorded their "
                        "parameters: %s is checked against this xqf-tune's table (`xqf-tune build --binary %s --name "
                        "%s%s` records the build's own)\n",
                build, b.build_id, set_option, b.path, b.build_id, b.signature[0] ? " --sign-key FILE" : "");
    return rc == 1 ? CLI_OK : cli_fail(CLI_USAGE, "%s: %s", set_option, why);
}

int cli_check_build_spsa(Store *s, const char *option, const char *engine, int64_t build,
                         const StoreSpsaParam *params, int count)
{
    StoreBuildParam *list = NULL;
    bool listed = false;
    int n = store_build_params(s, build, &listed, &list);
    int status = n < 0 ? cli_fail(CLI_FAIL, "cannot read the options of build %" PRId64, build) : CLI_OK;
    for (int i = 0; status == CLI_OK && n > 0 && i < count; i++) {
        const StoreSpsaParam *q = &params[i];
        const StoreBuildParam *opt = NULL;
        for (int j = 0; j < n && !opt; j++)
            opt = strcmp(list[j].name, q->name) == 0 ? &list[j] : NULL;
        /* a build lists its spin options (integers): a float is some other option of it (UCI's string) */
        if (!opt && q->is_float)
            fprintf(stderr, "xqf-tune: warning: %s: %s is a float, not one of the spin options build %" PRId64
                            " lists: it goes unchecked until played\n", option, q->name, build);
        else if (!opt)
            status = cli_fail(CLI_USAGE, "%s: engine %s (build %" PRId64 ") has no option '%s'", option, engine,
                              build, q->name);
        else if (q->is_float)
            status = cli_fail(CLI_USAGE, "%s: %s is a float, but build %" PRId64 " lists it as a spin option "
                                         "(integers): give it the type int", option, q->name, build);
        else if (q->min < opt->min || q->max > opt->max)
            status = cli_fail(CLI_USAGE, "%s: %s: [%g, %g] is outside the option's bounds [%d, %d] in build %" PRId64,
                              option, q->name, q->min, q->max, opt->min, opt->max, build);
    }
    if (status == CLI_OK && n == 0)
        fprintf(stderr, "xqf-tune: warning: build %" PRId64 " listed no options (a UCCI engine answers no `uci`): "
                        "the spec's names go unchecked until played\n", build);
    free(list);
    return status;
}

int cli_parse(Opts *o, const OptTable *t, int argc, char **argv)
{
    switch (opts_parse(o, t, argc, argv)) {
    case OPTS_OK:
        return CLI_GO;
    case OPTS_HELP:
        return CLI_OK;
    default:
        return CLI_USAGE;
    }
}

int cli_open_db(const Opts *o, Store **out)
{
    const char *db = opts_text(o, "--db");
    *out = NULL;
    if (!db)
        db = getenv("XQF_DB");
    if (!db || !*db)
        return cli_fail(CLI_USAGE, "give --db CONNINFO or set XQF_DB");
    xqf_log_init(CLI_PROGRAM);
    Store *s = store_new(db);
    int rc = s ? store_connect(s) : -1;
    if (rc == STORE_SCHEMA_MISMATCH) {
        store_destroy(&s);
        return cli_fail(CLI_FAIL, "the database's schema does not suit this xqf-tune (see above)");
    }
    if (rc != 0) {
        store_destroy(&s);
        return cli_fail(CLI_FAIL, "cannot connect to the database '%s'", db);
    }
    *out = s;
    return CLI_OK;
}

int cli_open_operator(const Opts *o, const char *command, const char *does, Store **out)
{
    int status = cli_open_db(o, out);
    if (status == CLI_OK && !store_owns_schema(*out)) {
        status = cli_fail(CLI_USAGE, "%s: only an operator %s: this connection's role %s does not own the schema "
                          "(connect as its owner)", command, does, store_role(*out));
        store_destroy(out);
    }
    return status;
}

int cli_run_id(const Opts *o, int64_t *id)
{
    if (o->npositional < 1)
        return cli_fail(CLI_USAGE, "give the run id (see --help)");
    const char *text = o->positional[0];
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end || errno == ERANGE || v < 1)
        return cli_fail(CLI_USAGE, "RUN: '%s' is not a run id (a positive integer)", text);
    *id = v;
    return CLI_OK;
}

int cli_load_run(Store *s, int64_t id, StoreRun *r)
{
    int rc = store_load_run(s, id, r, false);
    if (rc < 0)
        return cli_fail(CLI_FAIL, "cannot read run %" PRId64, id);
    if (rc == 0)
        return cli_fail(CLI_FAIL, "no run %" PRId64, id);
    return CLI_OK;
}

const char *cli_shown(const char *text)
{
    static char ring[8][2048];
    static unsigned next;
    char *out = ring[next++ % 8];
    xqf_escape(out, sizeof ring[0], text ? text : "");
    return out;
}

void cli_actor(char *out, size_t size)
{
    /* $USER is unset under cron, systemd and `docker exec`; the password
       database still knows who runs the program */
    const char *user = getenv("USER");
    if (!user || !*user) {
        const struct passwd *pw = getpwuid(geteuid());
        user = pw && pw->pw_name ? pw->pw_name : NULL;
    }
    if (user && *user)
        snprintf(out, size, "xqf-tune:%.50s", user);
    else
        snprintf(out, size, "xqf-tune:uid%ld", (long)geteuid());
}

int cli_export_set(Store *s, const StoreRun *r, Params *p)
{
    char why[256];
    return run_export_params(s, r, p, why, sizeof why) == RUN_OK ? CLI_OK : cli_fail(CLI_FAIL, "%s", why);
}

int cli_write_export(const StoreRun *r, const Params *p, const char *path)
{
    FILE *out = path ? fopen(path, "w") : stdout;
    if (!out)
        return cli_fail(CLI_FAIL, "--out: cannot write '%s': %s", path, strerror(errno));
    char why[256];
    RunStatus st = run_export_write(r, p, out, why, sizeof why);
    if ((path ? fclose(out) : fflush(out)) != 0 || st != RUN_OK)
        return cli_fail(CLI_FAIL, "cannot write the parameter file");
    return CLI_OK;
}

int cli_read_spsa_spec(const char *option, const char *path, bool (*known)(const char *name, void *ctx), void *ctx,
                       XqfSpsaSpecLine **out)
{
    char why[512];
    *out = NULL;
    /* a line is at most 1 KiB: the file of the most options fits 4 MiB */
    char *text = files_read(path, (size_t)STORE_SPSA_MAX * 1024 + 1, NULL);
    if (!text)
        return -cli_fail(CLI_USAGE, "%s: cannot read '%s': %s", option, path, strerror(errno));
    XqfSpsaSpecLine *lines = calloc(STORE_SPSA_MAX, sizeof *lines);
    int n = lines ? xqf_spsa_spec_parse(text, lines, STORE_SPSA_MAX, known, ctx, why, sizeof why) : -2;
    free(text);
    int status = n == -2 ? cli_fail(CLI_FAIL, "out of memory")
                 : n < 0 ? cli_fail(CLI_USAGE, "%s %s: %s", option, path, why)
                 : n == 0 ? cli_fail(CLI_USAGE, "%s: '%s' names no parameter", option, path) : CLI_OK;
    if (status != CLI_OK) {
        free(lines);
        return -status;
    }
    *out = lines;
    return n;
}

RunActor cli_run_actor(char *name, size_t size)
{
    cli_actor(name, size);
    /* who holds the database's credentials may do what an admin of the dashboard may */
    return (RunActor){ .name = name, .role = "admin" };
}

int cli_verb_said(RunStatus status, const char *verb, const RunProblem *problem)
{
    if (status != RUN_OK)
        return cli_fail(status, "%s: %s", verb, problem->why);
    printf("%s\n", problem->why);
    return CLI_OK;
}

void cli_stop_made(Store *s, const int64_t *ids, int made)
{
    char name[STORE_NAME_MAX + 1];
    RunActor actor = cli_run_actor(name, sizeof name);
    for (int i = 0; i < made; i++) {
        RunProblem problem;
        if (run_plain(s, &actor, RUN_VERB_STOP, ids[i], &problem) != RUN_OK)
            fprintf(stderr, "xqf-tune: warning: run %" PRId64 " could not be stopped (%s): stop it (xqf-tune stop %"
                            PRId64 ")\n", ids[i], problem.why, ids[i]);
    }
    if (made)
        fprintf(stderr, "xqf-tune: the %d run%s made before were stopped\n", made, made == 1 ? "" : "s");
}

/*
 * build_serve.c - xqf-tune build --serve: the builder of the tests of git
 * refs made on the web: their commits pinned, then the approved ones
 * built as build --ref builds, checked against the sets they play, and
 * the outcome recorded.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build_internal.h"
#include "store_progressions.h"
#include "codec.h"
#include "store_engines.h"
#include "store_web.h"

enum { SERVE_LEASE_S = 3600 };

/*
 * The set the side of request q plays on build, checked against the
 * parameters the build listed (cli_check_build_set, as sprt new checks a
 * ref's set once it is built): the form could check its syntax only.
 * Exit status.
 */
static int serve_check_set(Store *s, const StoreBuildRequest *q, int64_t build)
{
    char *sets = malloc(2 * (STORE_PARAMS_MAX + 1)), option[32];
    if (!sets)
        return cli_fail(CLI_FAIL, "out of memory");
    bool test = strcmp(q->side, "test") == 0;
    int found = store_run_sets(s, q->run_id, sets, sets + STORE_PARAMS_MAX + 1, STORE_PARAMS_MAX + 1);
    snprintf(option, sizeof option, "the %s set", q->side);
    int status = found < 0    ? cli_fail(CLI_FAIL, "cannot read the sets of run %" PRId64, q->run_id)
                 : found == 0 ? cli_fail(CLI_FAIL, "no run %" PRId64, q->run_id)
                              : cli_check_build_set(s, "the build", option, test ? sets : sets + STORE_PARAMS_MAX + 1,
                                                    build);
    free(sets);
    return status;
}

/*
 * An SPSA run's tuned options against the build of its ref (of another
 * engine, made on the web: its form could check the spec's syntax only),
 * as spsa new --engine checks them once it has built.  A run of another
 * kind has none.  Exit status.
 */
static int serve_check_spsa(Store *s, const StoreBuildRequest *q, int64_t build, const char *engine)
{
    StoreSpsa *st = malloc(sizeof *st);
    int found = st ? store_spsa_load(s, q->run_id, st) : -1;
    int status = found < 0    ? cli_fail(CLI_FAIL, "cannot read the SPSA state of run %" PRId64, q->run_id)
                 : found == 0 ? CLI_OK
                              : cli_check_build_spsa(s, "the spec", engine, build, st->params, st->count);
    free(st);
    return status;
}

/*
 * Resolves the ref of request q as build --ref does, in the repository of
 * its side's engine (ours: --repo; another's: its record's, a URL's mirror
 * fetched first) into *g, the engine's name into name (ENGINE_NAME_MAX + 1)
 * and its record into *engine.  Exit status.
 */
static int serve_resolve(Store *s, const Opts *o, const StoreBuildRequest *q, const char *out, CliGitRef *g,
                         EngineRecord *engine, char *name)
{
    char cache[PATH_MAX];
    int status = store_run_engine(s, q->run_id, q->side, name, ENGINE_NAME_MAX + 1) == 1
                     ? CLI_OK
                     : cli_fail(CLI_FAIL, "cannot read the engine of run %" PRId64, q->run_id);
    bool other = status == CLI_OK && name[0] && strcmp(name, "xqf") != 0;
    if (other)
        status = cli_engine_load(s, "the side's engine", name, engine);
    if (status == CLI_OK && !build_path_fmt(cache, sizeof cache, "%s/repos", out))
        status = cli_fail(CLI_USAGE, "--out: '%s' is too long", out);
    if (status == CLI_OK)
        status = cli_git_resolve(s, opts_text(o, "--repo"), q->ref, NULL, other ? engine : NULL, cache, g);
    return status;
}

/*
 * The commit the ref of request q names now, told to the database
 * (store_build_pin): pinned for a test just made, checked against the
 * pinned one before a build.  A ref that does not resolve, or moved, fails
 * the request and its run there.  Exit status: CLI_OK when the commit is
 * the request's, CLI_USAGE when refused (or its run ended), CLI_FAIL when
 * not recorded.
 */
static int serve_pin(Store *s, const Opts *o, const StoreBuildRequest *q, const char *out, CliGitRef *g,
                     EngineRecord *engine, char *name)
{
    int status = serve_resolve(s, o, q, out, g, engine, name);
    char state[16];
    int rc = store_build_pin(s, q->id, status == CLI_OK ? g->commit : NULL, g->subject,
                             status == CLI_OK ? "" : cli_last_error(), state, sizeof state);
    if (rc < 0)
        return cli_fail(CLI_FAIL, "cannot record the commit of request %" PRId64, q->id);
    if (rc == 0)
        return cli_fail(CLI_USAGE, "request %" PRId64 " was ended meanwhile: not built", q->id);
    if (strcmp(state, "failed") == 0 && q->commit[0] && status == CLI_OK)
        printf("run %" PRId64 ": the %s ref %s moved: approved at %s, now %s: refused; the run is failed\n",
               q->run_id, q->side, q->ref, q->commit, g->commit);
    else if (strcmp(state, "failed") == 0 && q->commit[0])
        printf("run %" PRId64 ": the %s ref %s (approved at %s) cannot be read now: refused; the run is failed\n",
               q->run_id, q->side, q->ref, q->commit);
    else if (strcmp(state, "failed") == 0)
        printf("run %" PRId64 ": the %s ref %s does not resolve; the run is failed\n", q->run_id, q->side, q->ref);
    else if (strcmp(state, "pending") != 0 && strcmp(state, "building") != 0)
        printf("run %" PRId64 ": the run is %s: the %s ref is not built\n", q->run_id, state, q->side);
    if (strcmp(state, "pending") != 0 && strcmp(state, "building") != 0)
        return CLI_USAGE;
    /* a progression made on the dashboard learns its commits here, with their dates (the chart's x) */
    if (store_progression_pin(s, q->run_id, q->side, g->commit, g->date, g->subject) != 0)
        fprintf(stderr, "xqf-tune: run %" PRId64 ": its progression's %s commit was not recorded\n", q->run_id,
                q->side);
    if (!q->commit[0])
        printf("run %" PRId64 ": the %s ref %s is commit %s; the run is %s\n", q->run_id, q->side, q->ref, g->commit,
               state);
    return CLI_OK;
}

/*
 * What a test of two refs of one repository changes (the commits between
 * them, the diff), recorded with its run once both refs are pinned: the
 * approval page then shows what an admin approves, and each build reads
 * them again from the pinned commits (never the refs).  repo is where the
 * ref just pinned was read (its side's engine's repository); a run whose
 * sides are two engines has no diff.  Nothing else depends on it: a
 * failure is said and the build goes on.
 */
static void serve_changes(Store *s, int64_t run, const char *repo)
{
    StoreBuildRequest *q = NULL;
    char engines[2][ENGINE_NAME_MAX + 1] = { "", "" };
    int n = store_build_requests(s, run, &q);
    const StoreBuildRequest *test = NULL, *base = NULL;
    for (int i = 0; i < n; i++)
        if (q[i].commit[0] && strcmp(q[i].state, "failed") != 0)
            *(strcmp(q[i].side, "test") == 0 ? &test : &base) = &q[i];
    if (test && base && store_run_engine(s, run, "test", engines[0], sizeof engines[0]) == 1 &&
        store_run_engine(s, run, "base", engines[1], sizeof engines[1]) == 1 &&
        strcmp(engines[0][0] ? engines[0] : "xqf", engines[1][0] ? engines[1] : "xqf") == 0)
        cli_record_changes(s, run, repo, test->ref, test->commit, "", test->subject, base->ref, base->commit);
    free(q);
}

/*
 * Builds one request's pinned commit as build --ref does, once its ref
 * still names it, checks the set its side plays against the build, and
 * records the outcome: a set the build refuses fails the request (and the
 * run) as a failed build does.  Exit status: CLI_FAIL when not recorded.
 */
static int serve_one(Store *s, const Opts *o, const StoreBuildRequest *q, const char *out, int64_t jobs)
{
    CliGitRef *g = calloc(1, sizeof *g);
    EngineRecord *engine = malloc(sizeof *engine);
    int64_t id = 0;
    char name[ENGINE_NAME_MAX + 1] = "";
    printf("run %" PRId64 ": building the %s ref %s at %.12s (request %" PRId64 ")\n", q->run_id, q->side, q->ref,
           q->commit, q->id);
    fflush(stdout);
    int status = g && engine ? CLI_OK : cli_fail(CLI_FAIL, "out of memory");
    /*
     * The ref read again: one that moved since the approval is refused (the
     * request and the run failed there).  Otherwise g->commit is the pinned
     * commit, and what follows reads that object (git archive of the hash),
     * never the ref: a push between this check and the export builds nothing
     * else.
     */
    if (status == CLI_OK) {
        int pinned = serve_pin(s, o, q, out, g, engine, name);
        if (pinned != CLI_OK) {
            free(g);
            free(engine);
            return pinned == CLI_USAGE ? CLI_OK : pinned;
        }
    }
    if (status == CLI_OK && strcmp(q->side, "test") == 0)
        serve_changes(s, q->run_id, g->repo);
    if (status == CLI_OK)
        status = cli_git_build(s, g, out, jobs);
    if (status == CLI_OK)
        status = cli_git_register(s, g, NULL, &id);
    if (status == CLI_OK)
        status = serve_check_set(s, q, id);
    if (status == CLI_OK)
        status = serve_check_spsa(s, q, id, name[0] ? name : "xqf");
    char *why = malloc(sizeof ((StoreBuildRequest *)NULL)->error), state[16];
    if (!why) {
        free(g);
        free(engine);
        return cli_fail(CLI_FAIL, "out of memory");
    }
    /* the reason as PostgreSQL's text takes it (an engine's words may be in it; the tail is clean already) */
    size_t size = sizeof ((StoreBuildRequest *)NULL)->error,
           n = xqf_text_sanitize(why, size, status == CLI_OK ? "" : cli_last_error());
    if (g && g->log_tail[0])
        snprintf(why + n, size - n, "\n--- the end of the build log ---\n%s", g->log_tail);
    int rc = store_build_done(s, q->id, status == CLI_OK ? id : 0, why, state, sizeof state);
    free(why);
    free(g);
    free(engine);
    if (rc < 0)
        return cli_fail(CLI_FAIL, "cannot record the outcome of request %" PRId64, q->id);
    if (rc == 0)
        fprintf(stderr, "xqf-tune: request %" PRId64 " was taken again by another builder: not recorded\n", q->id);
    else if (status == CLI_OK)
        printf("run %" PRId64 ": the %s side is build %" PRId64 "; the run is %s\n", q->run_id, q->side, id, state);
    else
        printf("run %" PRId64 ": the %s ref %s failed; the run is %s\n", q->run_id, q->side, q->ref, state);
    return CLI_OK;
}

/* xqf-tune build --serve: the queued requests built (with --watch, forever). Exit status. */
int build_serve(const Opts *o, int64_t jobs)
{
    if (o->npositional != 0 || opts_given(o, "--binary") || opts_given(o, "--name") || opts_given(o, "--ref") ||
        opts_given(o, "--signature") || opts_given(o, "--source"))
        return cli_fail(CLI_USAGE, "build --serve takes only --repo, --watch, --out, --jobs and --db");
    if (opts_given(o, "--sign-key"))
        return cli_fail(CLI_USAGE, "build --serve: the builder holds no key (it runs the branches it builds); "
                        "sign its builds with a signer of their own: xqf-tune build --sign-serve --sign-key FILE");
    char host[128] = "", builder[192];
    gethostname(host, sizeof host - 1);
    snprintf(builder, sizeof builder, "%s:%ld", host, (long)getpid());
    int64_t watch = opts_int(o, "--watch");
    Store *s = NULL;
    int status = cli_open_db(o, &s);
    while (status == CLI_OK) {
        StoreBuildRequest q;
        /* the refs of tests just made pinned first, before any approval: resolving runs no branch's code */
        int got = store_build_to_pin(s, &q);
        if (got == 1) {
            CliGitRef *g = calloc(1, sizeof *g);
            EngineRecord *engine = malloc(sizeof *engine);
            char name[ENGINE_NAME_MAX + 1] = "";
            int st = g && engine ? serve_pin(s, o, &q, opts_text(o, "--out"), g, engine, name)
                                 : cli_fail(CLI_FAIL, "out of memory");
            if (st == CLI_OK)
                serve_changes(s, q.run_id, g->repo);
            free(g);
            free(engine);
            if (st == CLI_FAIL)
                status = st;    /* not recorded: the same request would come back at once */
            continue;
        }
        if (got == 0)
            got = store_build_claim(s, builder, SERVE_LEASE_S, &q);
        if (got == 1) {
            int st = serve_one(s, o, &q, opts_text(o, "--out"), jobs);
            if (st != CLI_OK && !watch)
                status = st;
            continue;
        }
        if (got < 0 && !watch)
            status = cli_fail(CLI_FAIL, "cannot read the build requests");
        if (!watch)
            break;
        fflush(stdout);
        sleep((unsigned)watch);
        if (!store_ok(s) && store_connect(s) != 0)
            fprintf(stderr, "xqf-tune: the database is not reachable: trying again in %" PRId64 " s\n", watch);
    }
    store_destroy(&s);
    return status;
}

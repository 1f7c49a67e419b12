/*
 * steer.c - xqf-tune modify (a run changed while it runs), what show adds
 * for it (time odds, throughput share, the SPRT's Elo corrected for where
 * it stopped, LOS, the run's history and chain), and chain show, list,
 * advance (the chain's stages that need a host with the source tree or
 * PyTorch: builds compiled, nets trained and registered) and stop.
 */
#define _DEFAULT_SOURCE /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "files.h"
#include "fork_exec.h"
#include "sha256.h"
#include "log.h"
#include "run_kind.h"
#include "sprt_calc.h"
#include "stats.h"
#include "store_nets.h"
#include "store_runs.h"
#include "store_spsa.h"
#include "store_steer.h"

/* ---- modify ------------------------------------------------------------------ */

static const OptSpec MODIFY_OPTIONS[] = {
    { "--priority", OPT_INT, "N", NULL, .imin = -1000000, .imax = 1000000, .help = "higher runs first" },
    { "--throughput", OPT_INT, "PCT", NULL, .imin = 1, .imax = 1000, .help = "share of the game pairs among runs of its priority, over time (100: equal)" },
    { "--max-pairs", OPT_INT, "N", NULL, .imin = 1, .imax = INT64_C(1) << 40, .help = "the pair cap (SPSA: its iterations), not below the pairs given out" },
    { "--extend-pairs", OPT_INT, "N", NULL, .imin = 1, .imax = INT64_C(1) << 40, .help = "SPSA: add N iterations" },
    { "--spsa-spec", OPT_TEXT, "FILE", NULL, .help = "SPSA: new bounds, c_end and r_end of the parameters it names (spsa new's spec lines)" },
    { "--alpha", OPT_REAL, "A", NULL, .rmin = 0.001, .rmax = 10, .help = "SPSA: the schedule's alpha" },
    { "--gamma", OPT_REAL, "G", NULL, .rmin = 0.001, .rmax = 10, .help = "SPSA: the schedule's gamma" },
    { "--a-ratio", OPT_REAL, "R", NULL, .rmin = 0, .rmax = 100, .help = "SPSA: A = R N" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable MODIFY_TABLE = {
    .program = "xqf-tune", .spec = MODIFY_OPTIONS, .max_positional = 1,
    .usage = "Usage: xqf-tune modify RUN [--priority N] [--throughput PCT] [--max-pairs N] [--extend-pairs N]\n"
             "                         [--spsa-spec FILE] [--alpha A] [--gamma G] [--a-ratio R] [--db CONNINFO]\n"
             "Changes a run that has not ended, while it runs: its priority, its share of\n"
             "the workers among the runs of its priority (percent), its pair cap, or (SPSA)\n"
             "its iterations, its parameters' bounds and end hints (--spsa-spec: spsa new's\n"
             "lines, c_end and r_end derived as there when left out; start is checked but\n"
             "not applied: theta keeps its course, moved into new bounds) and its schedule.\n"
             "All or nothing, recorded in the run's history (show).  A change that would\n"
             "make the run inconsistent (a cap below the pairs already given out, an ended\n"
             "run, a name the run does not tune, a bad spec line) changes nothing and exits 2.\n",
};

int tune_cmd_modify(int argc, char **argv)
{
    Opts o;
    Store *s = NULL;
    int64_t id;
    int status = cli_parse(&o, &MODIFY_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO || (status = cli_run_id(&o, &id)) != CLI_OK)
        return status;
    RunModify m = run_modify_none();
    m.steer = (StoreModify){ .set_priority = opts_given(&o, "--priority"), .priority = (int)opts_int(&o, "--priority"),
                             .throughput = opts_given(&o, "--throughput") ? (int)opts_int(&o, "--throughput") : STORE_KEEP,
                             .max_pairs = opts_given(&o, "--max-pairs") ? opts_int(&o, "--max-pairs") : STORE_KEEP,
                             .extend = opts_given(&o, "--extend-pairs") ? opts_int(&o, "--extend-pairs") : STORE_KEEP };
    m.spsa.alpha = opts_given(&o, "--alpha") ? opts_real(&o, "--alpha") : NAN;
    m.spsa.gamma = opts_given(&o, "--gamma") ? opts_real(&o, "--gamma") : NAN;
    m.spsa.a_ratio = opts_given(&o, "--a-ratio") ? opts_real(&o, "--a-ratio") : NAN;
    if (!opts_given(&o, "--spsa-spec") && !m.steer.set_priority &&
        m.steer.throughput == STORE_KEEP && m.steer.max_pairs == STORE_KEEP && m.steer.extend == STORE_KEEP &&
        isnan(m.spsa.alpha) && isnan(m.spsa.gamma) && isnan(m.spsa.a_ratio))
        return cli_fail(CLI_USAGE, "modify: say what to change (see xqf-tune modify --help)");
    XqfSpsaSpecLine *lines = NULL;
    StoreSpsaParam *params = NULL;
    if (opts_given(&o, "--spsa-spec")) {
        int n = cli_read_spsa_spec("--spsa-spec", opts_text(&o, "--spsa-spec"), NULL, NULL, &lines);
        if (n < 0)
            return -n;
        if (!(params = calloc((size_t)n, sizeof *params))) {
            free(lines);
            return cli_fail(CLI_FAIL, "out of memory");
        }
        for (int i = 0; i < n; i++) {
            snprintf(params[i].name, sizeof params[i].name, "%s", lines[i].name);
            params[i].min = lines[i].min, params[i].max = lines[i].max;
            params[i].c_end = lines[i].c_end, params[i].r_end = lines[i].r_end;
        }
        m.spsa.params = params, m.spsa.count = n;
        free(lines);
    }
    if ((status = cli_open_db(&o, &s)) != CLI_OK) {
        free(params);
        return status;
    }
    char name[STORE_NAME_MAX + 1];
    RunActor actor = cli_run_actor(name, sizeof name);
    RunProblem problem;
    RunStatus st = run_modify(s, &actor, id, &m, &problem);
    free(params);
    if (st == RUN_BAD)
        /* the words xqf-tune modify always said: a refusal changes nothing */
        status = cli_fail(CLI_USAGE, "modify: %s; nothing changed", problem.why);
    else
        status = cli_verb_said(st, "modify", &problem);
    store_destroy(&s);
    return status;
}

/* ---- show ------------------------------------------------------------------------ */

/*
 * A chain's stages on one line: "spsa 12 passed -> build #4 passed -> sprt
 * 13 running", or "data 5 passed -> train passed -> net @3 passed -> sprt
 * 6 running" (runs by number, builds by #, nets by @).
 */
static void chain_line(const StoreChain *c, char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < c->count && len < size; i++) {
        const StoreChainStage *st = &c->stages[i];
        int64_t ref = st->kind == CHAIN_BUILD ? st->build_id : st->kind == CHAIN_NET ? st->net_id : st->run_id;
        char what[32] = "";
        if (ref)
            snprintf(what, sizeof what, " %s%" PRId64, st->kind == CHAIN_BUILD ? "#" : st->kind == CHAIN_NET ? "@" : "",
                     ref);
        len += (size_t)snprintf(out + len, size - len, "%s%s%s %s", i ? " -> " : "", store_chain_kind_name(st->kind),
                                what, st->state);
    }
}

void cli_chain_tag(Store *s, int64_t run, char *out, size_t size)
{
    int64_t chain;
    out[0] = '\0';
    if (store_chain_of_run(s, run, &chain) == 1)
        snprintf(out, size, " [chain %" PRId64 "]", chain);
}

int cli_show_steer(Store *s, const StoreRun *r)
{
    const StoreCounts *c = &r->counts;
    xqf_elo e;
    if (r->throughput != 100)
        printf("Throughput: %d %% (share among runs of priority %d)\n", r->throughput, r->priority);
    if (r->base1_ms > 0)
        printf("Time odds: %s %g+%g, %s %g+%g\n", r->name0, (double)r->base_ms / 1000, (double)r->inc_ms / 1000,
               r->name1, (double)r->base1_ms / 1000, (double)r->inc1_ms / 1000);
    if (run_elo_of(c, &e)) {
        char los[32];
        run_los_text(c, los, sizeof los);
        printf("nElo: %.2f +/- %.2f\n", e.nelo, e.nelo_ci95);
        printf("LOS: %s\n", los);
    }
    /* an SPRT that stopped at a bound: its Elo corrected for the stop (sprt_calc.h) */
    xqf_sprt_design d = { r->elo0, r->elo1, r->alpha, r->beta };
    xqf_sprt_estimate est;
    if (run_kind_is_sprt(r->kind) && c->pairs > 0 && !isnan(r->llr) &&
        xqf_sprt_estimate_elo(&d, c->pairs, r->llr, &est) == XQF_STATS_OK && est.stopped)
        printf("nElo at the bound (overshoot corrected): %.2f [%.2f, %.2f], LOS %.1f %%\n", est.nelo, est.lo,
               est.hi, 100 * est.los);
    StoreHistory *h;
    int n = store_run_history(s, r->id, &h);
    if (n < 0)
        return cli_fail(CLI_FAIL, "cannot read the history of run %" PRId64, r->id);
    for (int i = 0; i < n; i++) {
        char detail[sizeof h[i].detail * 2];
        xqf_escape(detail, sizeof detail, h[i].detail);
        printf("%s %s UTC %s: %s %s\n", i ? "        " : "History:", h[i].at, h[i].actor, h[i].action, detail);
    }
    free(h);
    int64_t chain;
    StoreChain ch;
    if (store_chain_of_run(s, r->id, &chain) == 1 && store_load_chain(s, chain, &ch) == 1) {
        char line[1024];
        chain_line(&ch, line, sizeof line);
        printf("Chain: %" PRId64 " %s: %s\n", chain, ch.state, line);
    }
    return CLI_OK;
}

/* ---- chains ------------------------------------------------------------------- */

/* Prints one chain. Exit status. */
static int show_chain(Store *s, int64_t id)
{
    StoreChain c;
    int rc = store_load_chain(s, id, &c);
    if (rc <= 0)
        return rc < 0 ? cli_fail(CLI_FAIL, "cannot read chain %" PRId64, id)
                      : cli_fail(CLI_USAGE, "no chain %" PRId64, id);
    printf("Chain: %" PRId64 " %s%s%s\n", c.id, c.state, c.note[0] ? ": " : "", cli_shown(c.note));
    if (c.name[0])
        printf("Name: %s\n", cli_shown(c.name));
    if (c.stages[0].kind == CHAIN_DATA)
        printf("Base net: %s\n", c.base_net == STORE_NET_NONE ? "none (the hand-crafted evaluation)"
                                  : c.base_net ? cli_shown(c.base_net_name)
                                               : "the engine's own evaluation (its default net, if it has one)");
    for (int i = 0; i < c.count; i++) {
        const StoreChainStage *st = &c.stages[i];
        printf("  %d. ", i);
        if (st->kind == CHAIN_SPSA || st->kind == CHAIN_DATA)
            printf("%-6s run %" PRId64, store_chain_kind_name(st->kind), st->run_id);
        else if (st->kind == CHAIN_BUILD)
            printf("build  the tuned engine%s", st->build_id ? "" : " (xqf-tune chain advance compiles it)");
        else if (st->kind == CHAIN_TRAIN)
            printf("train  %d epochs, batch %d, lambda %g, lr %g%s", st->epochs, st->batch, st->lambda, st->lr,
                   strcmp(st->state, "waiting") && strcmp(st->state, "running") ? ""
                                                                                : " (xqf-tune chain advance trains it)");
        else if (st->kind == CHAIN_NET)
            printf("net    the trained net registered");
        else if (st->nodes > 0)
            printf("sprt   [%g, %g] at %" PRId64 " nodes", st->elo0, st->elo1, st->nodes);
        else
            printf("sprt   [%g, %g] at %g+%g", st->elo0, st->elo1, (double)st->base_ms / 1000,
                   (double)st->inc_ms / 1000);
        if (st->kind == CHAIN_BUILD && st->build_id)
            printf(" build %" PRId64, st->build_id);
        StoreNet *n = st->kind == CHAIN_NET && st->net_id ? calloc(1, sizeof *n) : NULL;
        char key[24];
        snprintf(key, sizeof key, "%" PRId64, st->net_id);
        if (n && store_load_net(s, key, n) == 1)
            printf(": net %" PRId64 " %s (SHA-256 %.16s, %s)", n->id, cli_shown(n->name), n->sha256,
                   n->signature[0] ? "signed" : "unsigned");
        free(n);
        if (st->kind == CHAIN_SPRT && st->run_id)
            printf(", run %" PRId64, st->run_id);
        StoreRun r;
        char elo[48] = "";
        if (st->run_id && store_load_run(s, st->run_id, &r, false) == 1) {
            run_elo_text(&r.counts, elo, sizeof elo);
            printf(": %s%s%s, %" PRId64 "/%" PRId64 " pairs, Elo %s", r.state, r.verdict[0] ? " " : "", cli_shown(r.verdict),
                   r.counts.pairs, r.max_pairs, elo);
        }
        printf("  [%s]\n", st->state);
        if (st->detail[0])
            printf("       %s\n", cli_shown(st->detail));
    }
    return CLI_OK;
}

int cli_chain_show(const Opts *o)
{
    Store *s = NULL;
    int64_t id;
    int status = cli_run_id(o, &id);
    if (status != CLI_OK || (status = cli_open_db(o, &s)) != CLI_OK)
        return status;
    status = show_chain(s, id);
    store_destroy(&s);
    return status;
}

int cli_chain_list(const Opts *o)
{
    Store *s = NULL;
    int64_t *ids = NULL;
    int status = cli_open_db(o, &s);
    if (status != CLI_OK)
        return status;
    int n = store_list_chains(s, 20, &ids);
    if (n < 0)
        status = cli_fail(CLI_FAIL, "cannot read the chains");
    else
        printf("%-6s %-8s %s\n", "chain", "state", "stages");
    for (int i = 0; i < n && status == CLI_OK; i++) {
        StoreChain c;
        char line[1024];
        if (store_load_chain(s, ids[i], &c) != 1) {
            status = cli_fail(CLI_FAIL, "cannot read chain %" PRId64, ids[i]);
            break;
        }
        chain_line(&c, line, sizeof line);
        printf("%-6" PRId64 " %-8s %s%s%s\n", c.id, c.state, line, c.name[0] ? "  " : "", cli_shown(c.name));
    }
    free(ids);
    store_destroy(&s);
    return status;
}

/*
 * A stage's outcome the chain no longer waits for (it was stopped while
 * the stage ran here, xqf-tune chain stop or the dashboard's Stop): said;
 * it was not recorded and no stage started.
 */
static void not_waiting(int64_t chain, const char *what)
{
    printf("chain %" PRId64 ": no longer waits for its %s (stopped meanwhile, or recorded by another chain "
           "advance): not recorded, nothing started\n", chain, what);
}

/*
 * The build stage of chain c: the tuned engine of its SPSA run, with the
 * net that run played compiled in (the chain carries it). Exit status.
 */
static int advance_build(Store *s, const StoreChain *c, const Opts *o, const char *out)
{
    int64_t spsa = c->stages[0].run_id, build = 0, net = 0;
    StoreRun r;
    if (store_load_run(s, spsa, &r, false) != 1)
        return cli_fail(CLI_FAIL, "cannot read run %" PRId64, spsa);
    char key[24];
    if (r.net0[0] && strcmp(r.net0, "none") != 0 && store_net_of_sha(s, r.net0, &net) != 1)
        return cli_fail(CLI_FAIL, "cannot read the net of run %" PRId64, spsa);
    snprintf(key, sizeof key, "%" PRId64, net);
    printf("chain %" PRId64 ": building the tuned engine of run %" PRId64 "%s%s\n", c->id, spsa, net ? " with net " : "",
           net ? cli_shown(r.net_name0) : "");
    fflush(stdout);
    int status = cli_build_run(s, spsa, opts_text(o, "--source"), out, opts_text(o, "--sign-key"), net ? key : NULL,
                               &build);
    int rc = store_chain_built(s, c->id, status == CLI_OK ? build : 0,
                               status == CLI_OK ? "" : "the build failed (see xqf-tune chain advance's output)");
    if (rc < 0)
        return cli_fail(CLI_FAIL, "cannot record chain %" PRId64 "'s build", c->id);
    if (rc == 0)
        not_waiting(c->id, "build");
    else if (status == CLI_OK)
        printf("chain %" PRId64 ": build %" PRId64 " recorded, the next stage started\n", c->id, build);
    return status;
}

/* dir/name into out: false when it does not fit. */
static bool path_join(char *out, size_t size, const char *dir, const char *name)
{
    int n = snprintf(out, size, "%s/%s", dir, name);
    return n >= 0 && (size_t)n < size;
}

/* This program's path (to run its nnue train as a child). */
static bool self_path(char *out, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", out, size - 1);
    if (n <= 0)
        return false;
    out[n] = '\0';
    return true;
}

/* Runs argv[0] with argv, its stdout and stderr into the file log. Its exit status, or -1. */
static int run_logged(const char *const *argv, const char *log)
{
    fflush(NULL);
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return 127;    /* as a child that cannot open it exits */
    ForkExec fe;
    fork_exec_init(&fe);
    fe.out = fe.err = fd;
    pid_t pid = -1;
    fork_exec_start(&fe, (char *const *)argv, &pid);
    close(fd);
    return fork_exec_wait(pid);
}

/* The last line of a file that starts with prefix, into out ("" when none). */
static void last_line(const char *path, const char *prefix, char *out, size_t size)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    out[0] = '\0';
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, prefix, strlen(prefix)) == 0)
            snprintf(out, size, "%.*s", (int)strcspn(line, "\n"), line);
    if (f)
        fclose(f);
}

/*
 * The train stage of chain c (stage idx): the data run's kept positions
 * exported to DIR/data-RUN.data, then `xqf-tune nnue train` on them (this
 * program, a child: its checks, then the trainer) into DIR/net.nnue with
 * the stage's settings and the data run's seed, log in DIR/train.log; a
 * training cut short goes on from its checkpoints (--resume).  The
 * --with-data inputs are trained on too; with (" with N positions of
 * PATH, ...") says them in the stage's detail.  Exit status; the stage
 * recorded either way.
 */
static int advance_train(Store *s, const StoreChain *c, int idx, const Opts *o, const char *dir, const char *with)
{
    const StoreChainStage *st = &c->stages[idx];
    int64_t run = c->stages[0].run_id, positions = 0, games = 0;
    StoreRun r;
    char data[PATH_MAX], net[PATH_MAX], log[PATH_MAX], ckpt[PATH_MAX], last[PATH_MAX], self[PATH_MAX];
    char why[STORE_TEXT_MAX] = "", name[32];
    snprintf(name, sizeof name, "data-%" PRId64 ".data", run);
    if (!path_join(data, sizeof data, dir, name) || !path_join(net, sizeof net, dir, "net.nnue") ||
        !path_join(log, sizeof log, dir, "train.log") || !path_join(ckpt, sizeof ckpt, dir, "checkpoints") ||
        !path_join(last, sizeof last, ckpt, "last.pt"))
        return cli_fail(CLI_USAGE, "--out: '%s' is too long", dir);
    printf("chain %" PRId64 ": training a net on the positions of data run %" PRId64 " (log %s)\n", c->id, run, log);
    fflush(stdout);
    int status = store_load_run(s, run, &r, false) == 1 ? CLI_OK : cli_fail(CLI_FAIL, "cannot read run %" PRId64, run);
    if (status == CLI_OK && (status = cli_data_export_run(s, run, data, &positions, &games)) != CLI_OK)
        snprintf(why, sizeof why, "the export of data run %" PRId64 " failed: %s", run, cli_last_error());
    if (status == CLI_OK && positions == 0)
        status = cli_fail(CLI_FAIL, "%s", strcpy(why, "the data run kept no position to train on"));
    if (status == CLI_OK && !self_path(self, sizeof self))
        status = cli_fail(CLI_FAIL, "%s", strcpy(why, "cannot find this program (/proc/self/exe) to train"));
    if (status == CLI_OK) {
        char epochs[16], batch[16], lambda[32], lr[32], seed[24], threads[16];
        snprintf(epochs, sizeof epochs, "%d", st->epochs);
        snprintf(batch, sizeof batch, "%d", st->batch);
        snprintf(lambda, sizeof lambda, "%.17g", st->lambda);
        snprintf(lr, sizeof lr, "%.17g", st->lr);
        snprintf(seed, sizeof seed, "%" PRIu64, r.seed % ((uint64_t)INT32_MAX + 1));
        snprintf(threads, sizeof threads, "%" PRId64, opts_int(o, "--threads"));
        const char *argv[32] = { self, "nnue", "train", data };
        int n = 4;
        for (int i = 0; opts_nth(o, "--with-data", i); i++)
            argv[n++] = opts_nth(o, "--with-data", i);
        const char *rest[] = { "--out", net, "--epochs", epochs, "--batch", batch, "--lambda", lambda, "--lr", lr,
                               "--seed", seed, "--checkpoints", ckpt };
        for (size_t i = 0; i < sizeof rest / sizeof *rest; i++)
            argv[n++] = rest[i];
        if (opts_given(o, "--threads"))
            argv[n++] = "--threads", argv[n++] = threads;
        /* a training cut short (the host went down) goes on from its last epoch */
        if (access(last, R_OK) == 0)
            argv[n++] = "--resume", argv[n++] = ckpt;
        argv[n] = NULL;
        int rc = run_logged(argv, log);
        if (rc != 0) {
            char tail[256];
            last_line(log, "xqf-tune: error:", tail, sizeof tail);
            if (!tail[0])
                last_line(log, "", tail, sizeof tail);
            snprintf(why, sizeof why, "xqf-tune nnue train exited with %d (see %.200s): %.200s", rc, log, tail);
            status = cli_fail(CLI_FAIL, "%s", why);
        }
    }
    if (status == CLI_OK) {
        char sha[SHA256_HEX_LEN + 1] = "", done[256];
        last_line(log, "epoch", done, sizeof done);
        sha256_file(net, sha);
        /* bounded parts: the line is stored in a STORE_TEXT_MAX column */
        snprintf(why, sizeof why, "%" PRId64 " positions of %" PRId64 " games of data run %" PRId64 "%.120s -> "
                 "%.120s (SHA-256 %.16s); %.120s", positions, games, run, with, net, sha, done);
    } else if (!why[0])
        snprintf(why, sizeof why, "%s", cli_last_error());
    int rc = store_chain_done(s, c->id, CHAIN_TRAIN, status == CLI_OK, 0, 0, why);
    if (rc < 0)
        return cli_fail(CLI_FAIL, "cannot record chain %" PRId64 "'s training", c->id);
    if (rc == 0)
        not_waiting(c->id, "training");
    else if (status == CLI_OK)
        printf("chain %" PRId64 ": trained: %s\n", c->id, why);
    return status;
}

/*
 * The net stage of chain c: DIR/net.nnue (the train stage's) registered as
 * net add does, with its provenance (the chain, the data run, the
 * training's settings), signed with --sign-key; the database then starts
 * the SPRT of the new net.  A net registered already (the same training
 * again) is taken as it is.  Exit status; the stage recorded either way.
 */
static int advance_net(Store *s, const StoreChain *c, int idx, const Opts *o, const char *dir)
{
    const StoreChainStage *train = idx > 0 ? &c->stages[idx - 1] : NULL;
    char net[PATH_MAX], prov[STORE_TEXT_MAX], why[STORE_TEXT_MAX] = "";
    if (!path_join(net, sizeof net, dir, "net.nnue"))
        return cli_fail(CLI_USAGE, "--out: '%s' is too long", dir);
    snprintf(prov, sizeof prov, "chain %" PRId64 "%s%.100s: data run %" PRId64 ", xqf-tune nnue train %d epochs, "
             "batch %d, lambda %g, lr %g; %.300s", c->id, c->name[0] ? " " : "", c->name, c->stages[0].run_id,
             train ? train->epochs : 0, train ? train->batch : 0, train ? train->lambda : 0, train ? train->lr : 0,
             train ? train->detail : "");
    printf("chain %" PRId64 ": registering %s\n", c->id, net);
    fflush(stdout);
    CliSigning sg = { .has_key = false };
    const char *key = opts_text(o, "--sign-key");
    char err[512];
    int64_t id = 0;
    int status = key && sign_key_read(key, true, &sg.key, err, sizeof err) != 0 ? cli_fail(CLI_USAGE, "--sign-key: %s", err)
                                                                                : CLI_OK;
    sg.has_key = key != NULL;
    if (status == CLI_OK && access(net, R_OK) != 0)
        status = cli_fail(CLI_FAIL, "%s", strcpy(why, "the trained net is not on this host (its train stage ran "
                                                       "elsewhere): train it again with a new chain"));
    if (status == CLI_OK)
        status = cli_net_register(s, net, NULL, prov, &sg, true, &id);
    sign_key_wipe(&sg.key);
    StoreNet *n = status == CLI_OK ? calloc(1, sizeof *n) : NULL;
    char net_key[24];
    snprintf(net_key, sizeof net_key, "%" PRId64, id);
    if (n && store_load_net(s, net_key, n) == 1)
        snprintf(why, sizeof why, "net %" PRId64 " %s, %s", id, n->name, n->signature[0] ? "signed" : "unsigned");
    free(n);
    if (status != CLI_OK && !why[0])
        snprintf(why, sizeof why, "%s", cli_last_error());
    int rc = store_chain_done(s, c->id, CHAIN_NET, status == CLI_OK, 0, id, why);
    if (rc < 0)
        return cli_fail(CLI_FAIL, "cannot record chain %" PRId64 "'s net", c->id);
    if (rc == 0)
        not_waiting(c->id, "net");
    else if (status == CLI_OK)
        printf("chain %" PRId64 ": %s recorded, the next stage started\n", c->id, why);
    return status;
}

/* The stages of chain id that wait for chain advance, one after the other while they pass. Exit status. */
static int advance_one(Store *s, int64_t id, const Opts *o, const char *out, const char *with)
{
    char dir[PATH_MAX], name[32];
    snprintf(name, sizeof name, "chain-%" PRId64, id);
    if (!path_join(dir, sizeof dir, out, name))
        return cli_fail(CLI_USAGE, "--out: '%s' is too long", out);
    for (;;) {
        StoreChain c;
        if (store_load_chain(s, id, &c) != 1)
            return cli_fail(CLI_FAIL, "cannot read chain %" PRId64, id);
        int idx = -1;
        for (int i = 0; i < c.count && idx < 0; i++)
            if (strcmp(c.state, "active") == 0 && strcmp(c.stages[i].state, "running") == 0 &&
                (c.stages[i].kind == CHAIN_BUILD || c.stages[i].kind == CHAIN_TRAIN || c.stages[i].kind == CHAIN_NET))
                idx = i;
        if (idx < 0)
            return CLI_OK;
        if (c.stages[idx].kind != CHAIN_BUILD && files_make_dirs(dir) != 0)
            return cli_fail(CLI_FAIL, "--out: cannot create '%s'", dir);
        int status = c.stages[idx].kind == CHAIN_BUILD ? advance_build(s, &c, o, out)
                   : c.stages[idx].kind == CHAIN_TRAIN ? advance_train(s, &c, idx, o, dir, with)
                                                       : advance_net(s, &c, idx, o, dir);
        if (status != CLI_OK)
            return status;
    }
}

int cli_chain_advance(const Opts *o)
{
    Store *s = NULL;
    int64_t only = 0;
    char out[PATH_MAX];
    int status = o->npositional ? cli_run_id(o, &only) : CLI_OK;
    if (status != CLI_OK)
        return status;
    const char *out_opt = opts_text(o, "--out"), *key = opts_text(o, "--sign-key");
    if (files_make_dirs(out_opt) != 0 || !realpath(out_opt, out))
        return cli_fail(CLI_FAIL, "--out: cannot use '%s'", out_opt);
    /* a key that cannot be read is said now, not after a build or a training */
    SignKey sk;
    char err[512];
    if (key && sign_key_read(key, true, &sk, err, sizeof err) != 0)
        return cli_fail(CLI_USAGE, "--sign-key: %s", err);
    if (key)
        sign_key_wipe(&sk);
    /*
     * Earlier generations' data: checked now, not after a data run (nnue
     * train takes CLI_DATA_FILES_MAX inputs, the run's one of them), and
     * said once with their positions for every training's detail.
     */
    char with[STORE_TEXT_MAX / 2] = "";
    size_t len = 0;
    for (int i = 0; opts_nth(o, "--with-data", i); i++) {
        int64_t positions;
        const char *path = opts_nth(o, "--with-data", i);
        if (i + 1 >= CLI_DATA_FILES_MAX)
            return cli_fail(CLI_USAGE, "--with-data: at most %d (the trainer takes %d inputs, the data run's one)",
                            CLI_DATA_FILES_MAX - 1, CLI_DATA_FILES_MAX);
        if ((status = cli_data_input_check("--with-data", path, &positions)) != CLI_OK)
            return status;
        int w = len < sizeof with ? snprintf(with + len, sizeof with - len, "%s %" PRId64 " positions of %.150s",
                                             i ? "," : " with", positions, path) : 0;
        len += w > 0 ? (size_t)w : 0;
    }
    if ((status = cli_open_db(o, &s)) != CLI_OK)
        return status;
    int64_t watch = opts_int(o, "--watch");
    for (;;) {
        int64_t *ids;
        int n = store_chains_to_advance(s, &ids);
        if (n < 0) {
            status = cli_fail(CLI_FAIL, "cannot read the chains");
            break;
        }
        for (int i = 0; i < n; i++)
            if (!only || ids[i] == only) {
                int st = advance_one(s, ids[i], o, out, with);
                status = st != CLI_OK ? st : status;
            }
        free(ids);
        /* with --watch: again while a chain (the one given) is active */
        int64_t *chains = NULL;
        int left = watch > 0 ? store_list_chains(s, 1000, &chains) : 0;
        bool any = false;
        for (int i = 0; i < left; i++) {
            StoreChain c;
            if ((!only || chains[i] == only) && store_load_chain(s, chains[i], &c) == 1 &&
                strcmp(c.state, "active") == 0)
                any = true;
        }
        free(chains);
        if (left < 0)
            status = cli_fail(CLI_FAIL, "cannot read the chains");
        if (!any)
            break;
        fflush(stdout);
        sleep((unsigned)watch);
    }
    store_destroy(&s);
    return status;
}

int cli_chain_stop(const Opts *o)
{
    Store *s = NULL;
    int64_t id;
    int status = cli_run_id(o, &id);
    if (status != CLI_OK || (status = cli_open_db(o, &s)) != CLI_OK)
        return status;
    char name[STORE_NAME_MAX + 1];
    RunActor actor = cli_run_actor(name, sizeof name);
    RunProblem problem;
    status = cli_verb_said(run_chain_stop(s, &actor, id, &problem), "chain stop", &problem);
    store_destroy(&s);
    return status;
}

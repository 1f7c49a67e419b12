/*
 * steer.c - xqf-tune modify (a run changed while it runs), what show adds
 * for it (time odds, throughput share, the SPRT's Elo corrected for where
 * it stopped, LOS, the run's history and chain), and chain show, list and
 * advance (the chain's build stages compiled where the source tree is).
 */
#define _DEFAULT_SOURCE /* realpath */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "files.h"
#include "log.h"
#include "run_kind.h"
#include "sprt_calc.h"
#include "stats.h"
#include "store_steer.h"

/* ---- modify ------------------------------------------------------------------ */

static const OptSpec MODIFY_OPTIONS[] = {
    { "--priority", OPT_INT, "N", NULL, .imin = -1000000, .imax = 1000000, .help = "higher runs first" },
    { "--throughput", OPT_INT, "PCT", NULL, .imin = 1, .imax = 1000, .help = "share of the game pairs among runs of its priority, over time (100: equal)" },
    { "--max-pairs", OPT_INT, "N", NULL, .imin = 1, .imax = INT64_C(1) << 40, .help = "the pair cap (SPSA: its iterations), not below the pairs given out" },
    { "--extend-pairs", OPT_INT, "N", NULL, .imin = 1, .imax = INT64_C(1) << 40, .help = "SPSA: add N iterations" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable MODIFY_TABLE = {
    .program = "xqf-tune", .spec = MODIFY_OPTIONS, .max_positional = 1,
    .usage = "Usage: xqf-tune modify RUN [--priority N] [--throughput PCT] [--max-pairs N] [--extend-pairs N]\n"
             "                         [--db CONNINFO]\n"
             "Changes a run that has not ended, while it runs: its priority, its share of\n"
             "the workers among the runs of its priority (percent), its pair cap, or (SPSA)\n"
             "its iterations.  All or nothing, recorded in the run's history (show).  A\n"
             "change that would make the run inconsistent (a cap below the pairs already\n"
             "given out, an ended run) changes nothing and exits 2.\n",
};

int tune_cmd_modify(int argc, char **argv)
{
    Opts o;
    Store *s = NULL;
    int64_t id;
    int status = cli_parse(&o, &MODIFY_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO || (status = cli_run_id(&o, &id)) != CLI_OK)
        return status;
    StoreModify m = { .set_priority = opts_given(&o, "--priority"), .priority = (int)opts_int(&o, "--priority"),
                      .throughput = opts_given(&o, "--throughput") ? (int)opts_int(&o, "--throughput") : STORE_KEEP,
                      .max_pairs = opts_given(&o, "--max-pairs") ? opts_int(&o, "--max-pairs") : STORE_KEEP,
                      .extend = opts_given(&o, "--extend-pairs") ? opts_int(&o, "--extend-pairs") : STORE_KEEP };
    if (!m.set_priority && m.throughput == STORE_KEEP && m.max_pairs == STORE_KEEP && m.extend == STORE_KEEP)
        return cli_fail(CLI_USAGE, "modify: say what to change (see xqf-tune modify --help)");
    if ((status = cli_open_db(&o, &s)) != CLI_OK)
        return status;
    const char *user = getenv("USER");
    char actor[STORE_NAME_MAX + 1], why[STORE_TEXT_MAX];
    snprintf(actor, sizeof actor, "xqf-tune:%s", user && *user ? user : "?");
    int rc = store_modify_run(s, id, actor, &m, why, sizeof why);
    if (rc < 0)
        status = cli_fail(CLI_FAIL, "cannot change run %" PRId64, id);
    else if (rc == 0)
        status = cli_fail(CLI_USAGE, "modify: %s; nothing changed", why);
    else
        printf("run %" PRId64 " changed\n", id);
    store_destroy(&s);
    return status;
}

/* ---- show ------------------------------------------------------------------------ */

/* A chain's stages on one line: "spsa 12 passed -> build 4 passed -> sprt 13 running". */
static void chain_line(const StoreChain *c, char *out, size_t size)
{
    static const char *const KIND[] = { "spsa", "build", "sprt" };
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < c->count && len < size; i++) {
        const StoreChainStage *st = &c->stages[i];
        int64_t ref = st->kind == CHAIN_BUILD ? st->build_id : st->run_id;
        char what[32] = "";
        if (ref)
            snprintf(what, sizeof what, " %s%" PRId64, st->kind == CHAIN_BUILD ? "#" : "", ref);
        len += (size_t)snprintf(out + len, size - len, "%s%s%s %s", i ? " -> " : "", KIND[st->kind], what, st->state);
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
    if (c->pairs > 0 && xqf_elo_penta(c->penta, &e) == XQF_STATS_OK) {
        printf("nElo: %.2f +/- %.2f\n", e.nelo, e.nelo_ci95);
        printf("LOS: %.1f %%\n", 100 * xqf_los(&e));
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
    printf("Chain: %" PRId64 " %s%s%s\n", c.id, c.state, c.note[0] ? ": " : "", c.note);
    if (c.name[0])
        printf("Name: %s\n", cli_shown(c.name));
    for (int i = 0; i < c.count; i++) {
        const StoreChainStage *st = &c.stages[i];
        printf("  %d. ", i);
        if (st->kind == CHAIN_SPSA)
            printf("spsa   run %" PRId64, st->run_id);
        else if (st->kind == CHAIN_BUILD)
            printf("build  the tuned engine%s", st->build_id ? "" : " (xqf-tune chain advance compiles it)");
        else if (st->nodes > 0)
            printf("sprt   [%g, %g] at %" PRId64 " nodes", st->elo0, st->elo1, st->nodes);
        else
            printf("sprt   [%g, %g] at %g+%g", st->elo0, st->elo1, (double)st->base_ms / 1000,
                   (double)st->inc_ms / 1000);
        if (st->kind == CHAIN_BUILD && st->build_id)
            printf(" build %" PRId64, st->build_id);
        if (st->kind == CHAIN_SPRT && st->run_id)
            printf(", run %" PRId64, st->run_id);
        StoreRun r;
        char elo[48] = "";
        if (st->kind != CHAIN_BUILD && st->run_id && store_load_run(s, st->run_id, &r, false) == 1) {
            cli_elo_text(&r.counts, elo, sizeof elo);
            printf(": %s%s%s, %" PRId64 "/%" PRId64 " pairs, Elo %s", r.state, r.verdict[0] ? " " : "", cli_shown(r.verdict),
                   r.counts.pairs, r.max_pairs, elo);
        }
        printf("  [%s]\n", st->state);
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

/* Compiles the build stage of chain id (waiting for it): the tuned engine of its SPSA run. Exit status. */
static int advance_one(Store *s, int64_t id, const Opts *o, const char *out)
{
    StoreChain c;
    if (store_load_chain(s, id, &c) != 1)
        return cli_fail(CLI_FAIL, "cannot read chain %" PRId64, id);
    int64_t spsa = c.stages[0].run_id, build = 0;
    printf("chain %" PRId64 ": building the tuned engine of run %" PRId64 "\n", id, spsa);
    fflush(stdout);
    int status = cli_build_run(s, spsa, opts_text(o, "--source"), out, opts_text(o, "--sign-key"), NULL, &build);
    int rc = store_chain_built(s, id, status == CLI_OK ? build : 0,
                               status == CLI_OK ? "" : "the build failed (see xqf-tune chain advance's output)");
    if (rc < 0)
        return cli_fail(CLI_FAIL, "cannot record chain %" PRId64 "'s build", id);
    if (status == CLI_OK)
        printf("chain %" PRId64 ": build %" PRId64 " recorded, the next stage started\n", id, build);
    return status;
}

int cli_chain_advance(const Opts *o)
{
    Store *s = NULL;
    int64_t only = 0;
    char out[PATH_MAX];
    int status = o->npositional ? cli_run_id(o, &only) : CLI_OK;
    if (status != CLI_OK)
        return status;
    const char *out_opt = opts_text(o, "--out");
    if (files_make_dirs(out_opt) != 0 || !realpath(out_opt, out))
        return cli_fail(CLI_FAIL, "--out: cannot use '%s'", out_opt);
    if ((status = cli_open_db(o, &s)) != CLI_OK)
        return status;
    int64_t watch = opts_int(o, "--watch");
    for (;;) {
        int64_t *ids;
        int n = store_chains_to_build(s, &ids);
        if (n < 0) {
            status = cli_fail(CLI_FAIL, "cannot read the chains");
            break;
        }
        for (int i = 0; i < n; i++)
            if (!only || ids[i] == only) {
                int st = advance_one(s, ids[i], o, out);
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

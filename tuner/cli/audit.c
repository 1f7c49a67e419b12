/*
 * audit.c - xqf-tune audit: the search audit of a run's stored games, for
 * the runs the replay audit cannot check (a clock, or several threads: a
 * game is not played again move for move).
 *
 * Of each worker's games, positions are drawn at random (reservoir
 * sampling, Vitter's algorithm R, seeded from the kernel's getrandom at
 * each audit, after the games were stored: nothing a worker knows tells
 * which) among the moves its engines chose (opening and
 * random plies left out), and each is searched again here at a fixed
 * depth by the built-in engine with the set of the player that moved
 * (tactics.h: a new game each, one thread).  The share of positions where
 * the search chooses the move the game holds is the worker's agreement.
 * An honest worker's agreement is high but below 100 % (its games were
 * searched to another depth, with a clock and maybe several threads); one
 * that made up a share F of its moves agrees about (1 - F) times as often
 * (a made-up move is another move than the search's best).  Each worker is
 * judged by Wald's SPRT for a binomial proportion: H0 its agreement is
 * the honest one p0 (--agree, else the run's other workers' together),
 * H1 it is p0 (1 - F); flagged when the LLR reaches log((1 - beta) /
 * alpha), cleared at log(beta / (1 - alpha)), undecided between (more
 * positions, or more games, then decide).  Each verdict is recorded
 * (search_audits, 051): a worker's last one of a run flags it in the trust
 * table (show, --status, the report) as a replay's mismatch does; a
 * flagged worker is also written in the run's history (web_audit, as a
 * purge is), and purge takes its results out.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "cli.h"
#include "games.h"
#include "log.h"
#include "rng.h"
#include "store_games.h"
#include "store_runs.h"
#include "store_users.h"
#include "tactics.h"

static const OptSpec AUDIT_OPTIONS[] = {
    { "--depth", OPT_INT, "D", "8", .imin = 1, .imax = 30, .help = "the fixed depth of each search again" },
    { "--positions", OPT_INT, "N", "2000", .imin = 1, .imax = 100000,
      .help = "positions drawn from each worker's games (all its engines' moves when fewer)" },
    { "--agree", OPT_REAL, "P", NULL, .rmin = 0.01, .rmax = 0.999,
      .help = "an honest worker's agreement at this depth (default: the run's other workers' together)" },
    { "--fabricated", OPT_REAL, "F", "0.1", .rmin = 0.01, .rmax = 1,
      .help = "the share of made-up moves the test is for (H1: agreement P (1 - F))" },
    { "--alpha", OPT_REAL, "A", "0.001", .rmin = 1e-9, .rmax = 0.5, .help = "the chance an honest worker is flagged" },
    { "--beta", OPT_REAL, "B", "0.05", .rmin = 1e-9, .rmax = 0.5,
      .help = "the chance a worker making up F of its moves is cleared" },
    { "--worker", OPT_TEXT, "NAME", NULL, .help = "only this worker (needs --agree unless others are audited too)" },
    { "--concurrency", OPT_INT, "N", "1", .imin = 1, .imax = 256, .help = "positions searched at once" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable AUDIT_TABLE = {
    .program = "xqf-tune", .spec = AUDIT_OPTIONS, .max_positional = 1,
    .usage = "Usage: xqf-tune audit RUN [--depth D] [--positions N] [--agree P] [--fabricated F]\n"
             "                   [--alpha A] [--beta B] [--worker NAME] [--concurrency N] [--db CONNINFO]\n"
             "The search audit of a run's stored games, for runs played on a clock or with\n"
             "several threads (the replay audit checks fixed-node runs): positions drawn at\n"
             "random from each worker's games are searched again at depth D with the mover's\n"
             "set, and a worker whose moves agree less often than an honest worker's (an SPRT,\n"
             "H1: a share F of its moves made up) is flagged and written in the run's history.\n"
             "The built-in engine only (no engine builds, no registered nets), not SPSA runs.\n",
};

/* One position drawn: its suite line (the search's best move must be the game's) and who moved. */
typedef struct {
    char line[SUITE_LINE_MAX];
    int player;                      /* 0: the first player (test), 1: the second */
} Drawn;

/* The reservoir of one worker's positions. */
typedef struct {
    Drawn *drawn;
    int want, have;
    int64_t seen;                    /* engine moves seen so far */
    int64_t bad;                     /* records that do not read */
    Rng rng;
} Reservoir;

/* A move in the records' encoding (games.h: from | to << 7, square rank * 9 + file) as ICCS text. */
static void iccs(unsigned move, char out[5])
{
    unsigned from = move & 127, to = (move >> 7) & 127;
    out[0] = (char)('a' + from % 9);
    out[1] = (char)('0' + from / 9);
    out[2] = (char)('a' + to % 9);
    out[3] = (char)('0' + to / 9);
    out[4] = '\0';
}

/* The position before ply `ply` of a record (its FEN and the moves before) with the move played there as bm. */
static void position_line(const char *fen, const uint8_t *plies, int stride, int ply, int64_t game, char *out)
{
    size_t n = (size_t)snprintf(out, SUITE_LINE_MAX, "%s", fen);
    char text[5];
    for (int i = 0; i < ply && n + 8 < SUITE_LINE_MAX; i++) {
        iccs((unsigned)(plies[i * stride] | plies[i * stride + 1] << 8), text);
        n += (size_t)snprintf(out + n, SUITE_LINE_MAX - n, "%s%s", i == 0 ? " moves " : " ", text);
    }
    iccs((unsigned)(plies[ply * stride] | plies[ply * stride + 1] << 8), text);
    snprintf(out + n, SUITE_LINE_MAX - n, " ; bm %s; id \"game %" PRId64 " ply %d\";", text, game, ply);
}

/*
 * Draws from one record (store_each_game's callback): every move its
 * engines chose, up to the plies an opening line may carry
 * (XQF_OPENING_PLIES_MAX: the position is given as the game's start and
 * its moves, so that repetitions are judged as in the game).
 */
static int draw_from(void *ctx, int64_t game, const uint8_t *rec, size_t len)
{
    Reservoir *r = ctx;
    int count;
    if (!xqf_game_check(rec, len, &count) || rec[2] == 0) {
        r->bad++;
        return 0;
    }
    char fen[256];
    size_t fen_len = rec[2];
    if (fen_len >= sizeof fen) {
        r->bad++;
        return 0;
    }
    memcpy(fen, rec + XQF_GAME_HEAD, fen_len);
    fen[fen_len] = '\0';
    XqfOpening o;
    if (xqf_opening_parse(fen, &o) != 0) {
        r->bad++;
        return 0;
    }
    int stride = xqf_game_ply_bytes(rec[0]);
    const uint8_t *plies = rec + XQF_GAME_HEAD + fen_len + 2;
    /* game 2k: the first player Red; game 2k + 1 the colours reversed */
    int red = game % 2 == 0 ? 0 : 1, first_red = o.side == 'w';
    for (int i = 0; i < count && i < XQF_OPENING_PLIES_MAX; i++) {
        unsigned ply = (unsigned)(plies[i * stride] | plies[i * stride + 1] << 8);
        if (ply & XQF_GAME_BOOK)
            continue;
        r->seen++;
        int64_t slot = r->have < r->want ? r->have++ : (int64_t)(rng_next(&r->rng) % (uint64_t)r->seen);
        if (slot >= r->want)
            continue;
        bool red_moves = (i % 2 == 0) == (first_red != 0);
        r->drawn[slot].player = red_moves ? red : 1 - red;
        position_line(fen, plies, stride, i, game, r->drawn[slot].line);
    }
    return 0;
}

/* A player of the built-in engine for a set ("Name=value,..."), its net ("" its own, "none") and hash. */
static int set_spec(PlayerSpec *spec, const char *name, const char *set, const char *net, int hash_mb, char *err,
                    size_t errlen)
{
    enum { WORDS = SPEC_MAX_OPTIONS };
    static char text[WORDS][SPEC_TEXT_MAX + 16];
    char *words[WORDS];
    int n = 0;
    snprintf(text[n], sizeof text[n], "name=%s", name);
    words[n] = text[n];
    n++;
    snprintf(text[n], sizeof text[n], "threads=1");
    words[n] = text[n];
    n++;
    if (strcmp(net, "none") == 0) {
        snprintf(text[n], sizeof text[n], "net=none");
        words[n] = text[n];
        n++;
    }
    for (const char *p = set; *p && n < WORDS;) {
        size_t len = strcspn(p, ",");
        if (len > 0) {
            snprintf(text[n], sizeof text[n], "option.%.*s", (int)len, p);
            words[n] = text[n];
            n++;
        }
        p += len + (p[len] == ',');
    }
    return spec_parse(spec, n, words, hash_mb > 0 ? hash_mb : 16, err, errlen);
}

/* Nothing to do per position: tactics_run counts the passes. */
static void searched(void *ctx, const TacticResult *r)
{
    (void)ctx;
    (void)r;
}

/* One worker's audit. */
typedef struct {
    int64_t id;
    char name[STORE_NAME_MAX + 1];
    int64_t positions, agree;
    int64_t illegal;                 /* positions that do not read: an illegal move in the game up to them */
} Audited;

/*
 * Searches a worker's drawn positions again (the first player's with
 * spec[0], the second's with spec[1]) and counts those whose best move is
 * the game's.  A position that does not read (the coordinator stores
 * records without playing them: an illegal move up to it or at it) is
 * counted as not agreeing, and apart.  CLI_OK or CLI_FAIL.
 */
static int search_again(const Reservoir *r, PlayerSpec spec[2], const TacticsConfig *cfg, Audited *a)
{
    size_t size = (size_t)r->have * SUITE_LINE_MAX + 1;
    char *text = malloc(size);
    if (!text)
        return cli_fail(CLI_FAIL, "out of memory");
    a->positions = a->agree = a->illegal = 0;
    int status = CLI_OK;
    char err[512];
    for (int p = 0; p < 2 && status == CLI_OK; p++) {
        size_t n = 0;
        for (int i = 0; i < r->have; i++) {
            if (r->drawn[i].player != p)
                continue;
            Suite *one = suite_parse(r->drawn[i].line, a->name, err, sizeof err);
            if (one)
                n += (size_t)snprintf(text + n, size - n, "%s\n", r->drawn[i].line);
            else
                a->illegal++;
            suite_destroy(&one);
        }
        if (n == 0)
            continue;
        Suite *suite = suite_parse(text, a->name, err, sizeof err);
        if (!suite) {
            status = cli_fail(CLI_FAIL, "worker %s: a drawn position does not read: %s", a->name, err);
            break;
        }
        int passed = tactics_run(suite, &spec[p], cfg, searched, NULL, err, sizeof err);
        if (passed < 0)
            status = cli_fail(CLI_FAIL, "the search again: %s", err);
        else {
            a->positions += suite_size(suite);
            a->agree += passed;
        }
        suite_destroy(&suite);
    }
    a->positions += a->illegal;
    free(text);
    return status;
}

/* The SPRT's log-likelihood ratio of k agreements in n for H1 p1 against H0 p0 (p1 < p0: disagreement raises it). */
static double audit_llr(int64_t k, int64_t n, double p0, double p1)
{
    return (double)k * log(p1 / p0) + (double)(n - k) * log((1 - p1) / (1 - p0));
}

/* Checks that the run is one this audit can search again: CLI_OK or CLI_USAGE. */
static int auditable(const StoreRun *r)
{
    if (strcmp(r->kind, "spsa") == 0)
        return cli_fail(CLI_USAGE, "run %" PRId64 " is an SPSA run: its tasks play sets of their own", r->id);
    if (r->build0[0] || r->build1[0])
        return cli_fail(CLI_USAGE, "run %" PRId64 " plays engine builds: only the built-in engine's games are audited",
                        r->id);
    for (int p = 0; p < 2; p++) {
        const char *net = p == 0 ? r->net0 : r->net1;
        if (net[0] && strcmp(net, "none") != 0)
            return cli_fail(CLI_USAGE, "run %" PRId64 " plays a registered net: not audited", r->id);
    }
    return CLI_OK;
}

int tune_cmd_audit(int argc, char **argv)
{
    Opts o;
    Store *s = NULL;
    StoreRun run;
    int64_t id;
    int found = 0;
    int status = cli_parse(&o, &AUDIT_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO || (status = cli_run_id(&o, &id)) != CLI_OK)
        return status;
    uint64_t seed;
    if (getrandom(&seed, sizeof seed, 0) != (ssize_t)sizeof seed)
        return cli_fail(CLI_FAIL, "no random seed from the kernel");
    if ((status = cli_open_db(&o, &s)) != CLI_OK)
        return status;
    found = store_load_run(s, id, &run, false);
    if (found <= 0)
        status = found < 0 ? cli_fail(CLI_FAIL, "cannot read run %" PRId64, id)
                           : cli_fail(CLI_USAGE, "no run %" PRId64, id);
    if (status == CLI_OK)
        status = auditable(&run);
    static char params[2][STORE_PARAMS_MAX + 1];
    if (status == CLI_OK && store_run_sets(s, id, params[0], params[1], sizeof params[0]) != 1)
        status = cli_fail(CLI_FAIL, "cannot read the sets of run %" PRId64, id);
    PlayerSpec spec[2];
    char err[512];
    for (int p = 0; p < 2 && status == CLI_OK; p++)
        if (set_spec(&spec[p], p == 0 ? "test" : "base", params[p], p == 0 ? run.net0 : run.net1, run.hash_mb, err,
                     sizeof err) != 0)
            status = cli_fail(CLI_FAIL, "the run's %s set: %s", p == 0 ? "test" : "base", err);
    StoreWorkerTrust *w = NULL;
    int nw = status == CLI_OK ? store_run_workers(s, id, &w) : 0;
    if (nw < 0)
        status = cli_fail(CLI_FAIL, "cannot read the workers of run %" PRId64, id);
    const char *only = opts_text(&o, "--worker");
    bool given_p0 = opts_given(&o, "--agree");
    Audited *a = status == CLI_OK ? calloc((size_t)(nw > 0 ? nw : 1), sizeof *a) : NULL;
    Reservoir r = { .want = (int)opts_int(&o, "--positions") };
    rng_seed(&r.rng, seed);
    r.drawn = status == CLI_OK ? malloc((size_t)r.want * sizeof *r.drawn) : NULL;
    if (status == CLI_OK && (!a || !r.drawn))
        status = cli_fail(CLI_FAIL, "out of memory");
    TacticsConfig cfg = { .depth = (int)opts_int(&o, "--depth"), .threads = (int)opts_int(&o, "--concurrency") };
    int na = 0;
    for (int i = 0; i < nw && status == CLI_OK; i++) {
        if (only && strcmp(w[i].name, only) != 0)
            continue;
        Audited *x = &a[na++];
        x->id = w[i].worker_id;
        snprintf(x->name, sizeof x->name, "%s", w[i].name);
        r.have = 0;
        r.seen = r.bad = 0;
        if (store_each_game(s, id, 0, x->id, draw_from, &r) < 0)
            status = cli_fail(CLI_FAIL, "cannot read the games of run %" PRId64, id);
        else if (r.bad > 0)
            log_warn("worker %s: %" PRId64 " records do not read (left out)", x->name, r.bad);
        if (status == CLI_OK)
            status = search_again(&r, spec, &cfg, x);
    }
    if (status == CLI_OK && only && na == 0)
        status = cli_fail(CLI_USAGE, "--worker: '%s' played no game of run %" PRId64, only, id);
    if (status == CLI_OK && !given_p0 && na < 2)
        status = cli_fail(CLI_USAGE, "one worker audited: say an honest worker's agreement with --agree");
    int64_t all_k = 0, all_n = 0;
    for (int i = 0; i < na; i++) {
        all_k += a[i].agree;
        all_n += a[i].positions;
    }
    double alpha = opts_real(&o, "--alpha"), beta = opts_real(&o, "--beta"), f = opts_real(&o, "--fabricated");
    double lower = log(beta / (1 - alpha)), upper = log((1 - beta) / alpha);
    int flagged = 0;
    if (status == CLI_OK)
        printf("Search audit of run %" PRId64 ": %d workers, positions searched again at depth %d "
               "(SPRT H1: %g %% of the moves made up; alpha %g, beta %g)\n",
               id, na, cfg.depth, 100 * f, alpha, beta);
    for (int i = 0; i < na && status == CLI_OK; i++) {
        Audited *x = &a[i];
        int64_t ok = all_k - x->agree, of = all_n - x->positions;
        double p0 = given_p0 ? opts_real(&o, "--agree") : of > 0 ? (double)ok / (double)of : NAN;
        char name[sizeof x->name * 4];
        xqf_escape(name, sizeof name, x->name);     /* came from the network */
        if (x->positions == 0 || !(p0 > 0 && p0 < 1)) {
            printf("  %-24s %6" PRId64 " positions: not judged (%s)\n", name, x->positions,
                   x->positions == 0 ? "none drawn" : "the others' agreement is 0 or 1: say --agree");
            continue;
        }
        double p1 = p0 * (1 - f), llr = audit_llr(x->agree, x->positions, p0, p1);
        const char *verdict = llr >= upper ? "flagged" : llr <= lower ? "clean" : "undecided";
        char line[512], illegal[64] = "";
        if (x->illegal > 0)
            snprintf(illegal, sizeof illegal, ", %" PRId64 " illegal", x->illegal);
        snprintf(line, sizeof line,
                 "%" PRId64 " of %" PRId64 " positions agree (%.1f %%%s) at depth %d, honest %.1f %%: "
                 "LLR %.2f [%.2f, %.2f]",
                 x->agree, x->positions, 100.0 * (double)x->agree / (double)x->positions, illegal, cfg.depth, 100 * p0,
                 llr, lower, upper);
        printf("  %-24s %s: %s\n", name, line, llr >= upper ? "FLAGGED" : verdict);
        StoreSearchAudit rec = { .depth = cfg.depth, .positions = x->positions, .agree = x->agree, .honest = p0,
                                 .llr = llr, .verdict = verdict };
        if (store_search_audit_add(s, id, x->id, &rec) != 0) {
            status = cli_fail(CLI_FAIL, "cannot record the audit of worker %s", name);
            break;
        }
        if (llr >= upper) {
            flagged++;
            char detail[1024];
            snprintf(detail, sizeof detail, "search audit: worker %s flagged: %s", name, line);
            if (store_web_audit(s, CLI_PROGRAM, id, "audit", detail) != 0)
                status = cli_fail(CLI_FAIL, "cannot write the run's history");
        }
    }
    if (status == CLI_OK)
        printf("Flagged: %d\n", flagged);
    free(a);
    free(r.drawn);
    free(w);
    if (found == 1)
        store_run_free(&run);
    store_destroy(&s);
    return status;
}

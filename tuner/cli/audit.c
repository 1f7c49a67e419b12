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
 * depth with the set of the player that moved, by the engine it played
 * (the built-in one, or its build: below; tactics.h: a new game each, one
 * thread).  The share of positions where
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
 *
 * A side that plays a registered net is searched with that net: its
 * stored bytes written to a private file, checked against their SHA-256
 * and by the engine's reader (cli_net_write, as build --net does).  An
 * SPSA run's tasks each play a perturbed pair of sets (tasks.params0 and
 * params1): each position drawn is searched with the sets of the task that
 * played it.  A side that plays an engine build of ours (a set compiled
 * in) is searched by that build: its stored bytes written to a private
 * file, checked against their SHA-256, and run as a worker runs one, in
 * the sandbox (sandbox.h: no network, no environment, nothing of this
 * process's, which holds the database's credentials), from the descriptor
 * it was hashed on.  Another engine's build is spoken to as its engine
 * record says (protocol, coordinates, commands after the handshake, its
 * hash and net options), as a worker speaks to it.
 *
 * With --active, no operator has to remember: each pass looks for the
 * workers due (store_search_audit_due: runs not replayed, active or ended
 * since their last search audit, each worker whose games since its last
 * audit hold --new-plies more plies) and audits those, each verdict
 * written as soon as it is judged with the plies its games held (the next
 * pass's watermark), so that a pass run again, or taken up after a crash,
 * audits nothing twice.  Without --agree, H0 is the other workers'
 * agreement of this pass and of their last audits.  --watch loops as
 * build --serve --watch does.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "games.h"
#include "log.h"
#include "rng.h"
#include "sha256.h"
#include "store_builds.h"
#include "store_engines.h"
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
    { "--active", OPT_FLAG, NULL, NULL,
      .help = "instead of RUN: every run due (not replayed, active or ended since its last search audit)" },
    { "--new-plies", OPT_INT, "N", "2000", .imin = 1, .imax = 100000000,
      .help = "with --active: a worker is due once its games since its last audit hold N plies" },
    { "--watch", OPT_INT, "SECONDS", NULL, .imin = 1, .imax = 86400,
      .help = "with --active: keep auditing, looking every SECONDS" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable AUDIT_TABLE = {
    .program = "xqf-tune", .spec = AUDIT_OPTIONS, .max_positional = 1,
    .usage = "Usage: xqf-tune audit RUN [--depth D] [--positions N] [--agree P] [--fabricated F]\n"
             "                   [--alpha A] [--beta B] [--worker NAME] [--concurrency N] [--db CONNINFO]\n"
             "       xqf-tune audit --active [--new-plies N] [--watch SECONDS] [--depth D] [--positions N]\n"
             "                   [--agree P] [--fabricated F] [--alpha A] [--beta B] [--concurrency N]\n"
             "                   [--db CONNINFO]\n"
             "The search audit of a run's stored games, for runs played on a clock or with\n"
             "several threads (the replay audit checks fixed-node runs): positions drawn at\n"
             "random from each worker's games are searched again at depth D with the mover's\n"
             "set and net (an SPSA task's own sets), and a worker whose moves agree less often\n"
             "than an honest worker's (an SPRT, H1: a share F of its moves made up) is flagged\n"
             "and written in the run's history.  A side's engine build (ours or another\n"
             "engine's) is searched by that build, in the sandbox.  --active audits every\n"
             "worker due: of each such run\n"
             "that is active or ended since its last search audit, each worker whose games\n"
             "since its last audit hold N plies (any, once the run ended); each pass is\n"
             "recorded, and a second finds nothing new.  With --watch it keeps going (the\n"
             "xqf-auditor service).\n",
};

/* One position drawn: its suite line (the search's best move must be the game's) and who moved. */
typedef struct {
    char line[SUITE_LINE_MAX];
    int player;                      /* 0: the first player (test), 1: the second */
    int64_t game;
    int64_t task;                    /* an SPSA run's: the task that played it (its sets); else 0 */
} Drawn;

/* The reservoir of one worker's positions. */
typedef struct {
    Drawn *drawn;
    int want, have;
    int64_t seen;                    /* engine moves seen so far */
    int64_t bad;                     /* records that do not read */
    int64_t plies;                   /* every ply of the records read (the next audit's watermark) */
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
    /* the plies as the database counts them (xqf_game_plies), a record that does not read included */
    if (len >= (size_t)XQF_GAME_HEAD + rec[2] + 2)
        r->plies += rec[XQF_GAME_HEAD + rec[2]] | rec[XQF_GAME_HEAD + rec[2] + 1] << 8;
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
        r->drawn[slot].game = game;
        r->drawn[slot].task = 0;
        position_line(fen, plies, stride, i, game, r->drawn[slot].line);
    }
    return 0;
}

/*
 * A player for a set ("Name=value,..."), its net ("" its own, "none", a
 * file) and hash: the built-in engine, or (cmd not NULL) a build of ours
 * at cmd, spoken to over UCI (its set as options, as a worker does).
 */
static int set_spec(PlayerSpec *spec, const char *name, const char *set, const char *net, const char *cmd,
                    const EngineRecord *other, int hash_mb, char *err, size_t errlen)
{
    enum { WORDS = SPEC_MAX_OPTIONS };
    static char text[WORDS][SPEC_TEXT_MAX + 16];
    char *words[WORDS];
    int n = 0;
    snprintf(text[n], sizeof text[n], "name=%s", name);
    words[n] = text[n];
    n++;
    if (!other) {
        snprintf(text[n], sizeof text[n], "threads=1");
        words[n] = text[n];
        n++;
    }
    if (cmd) {
        if ((size_t)snprintf(text[n], sizeof text[n], "cmd=%s", cmd) >= sizeof text[n])
            return snprintf(err, errlen, "the build's path is too long (TMPDIR)"), -1;
        words[n] = text[n];
        n++;
    }
    if (cmd && !other) {
        snprintf(text[n], sizeof text[n], "preset=xqf-engine");
        words[n] = text[n];
        n++;
    }
    if (cmd && other) {
        /* another engine's build, spoken to as its record says (as a worker does: worker/daemon/task.c) */
        snprintf(text[n++], sizeof text[0], "proto=%s", engine_protocol_name(other->protocol));
        snprintf(text[n++], sizeof text[0], "ranks=%d", other->ranks_from_one ? 1 : 0);
        snprintf(text[n++], sizeof text[0], "letters=%s", other->he_letters ? "he" : "nb");
        for (int i = 0; i < other->init_count; i++)
            snprintf(text[n++], sizeof text[0], "init=%s", other->init[i]);
        if (other->hash_option[0])
            snprintf(text[n++], sizeof text[0], "option.%s=%d", other->hash_option, hash_mb > 0 ? hash_mb : 16);
        if (net[0] && other->net_option[0])
            snprintf(text[n++], sizeof text[0], "netopt=%s", other->net_option);
        for (int i = 0; i < n; i++)
            words[i] = text[i];
        hash_mb = 0;     /* sent by its own name above, or not at all */
    }
    if (net[0]) {
        if ((size_t)snprintf(text[n], sizeof text[n], "net=%s", net) >= sizeof text[n])
            return snprintf(err, errlen, "the net's path is too long (TMPDIR)"), -1;
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
    return spec_parse(spec, n, words, other ? 0 : hash_mb > 0 ? hash_mb : 16, err, errlen);
}

/* The searches that failed (tactics_run counts the passes): the engine's fault, not the worker's. */
typedef struct {
    int64_t faults;
    char detail[200];
} Faults;

static void searched(void *ctx, const TacticResult *r)
{
    Faults *f = ctx;
    if (r->fault != GAME_REASON_NONE && f->faults++ == 0)
        snprintf(f->detail, sizeof f->detail, "%s", r->detail);
}

/* One worker's audit. */
typedef struct {
    int64_t id;
    char name[STORE_NAME_MAX + 1];
    int64_t positions, agree;
    int64_t illegal;                 /* positions that do not read: an illegal move in the game up to them */
    int64_t plies;                   /* its games' plies when read */
} Audited;

/* An engine build's stored bytes in a private file. */
typedef struct {
    char dir[CLI_PATH_MAX], path[CLI_PATH_MAX];   /* "" until written */
} BuildFile;

/*
 * Writes the stored binary whose SHA-256 is sha into a private folder
 * (mode 0700, the file 0500) and checks the bytes against it.  The file
 * runs only in the sandbox, from the descriptor it is hashed on (spec's
 * sha256: process_spawn_boxed), as a worker runs a build.  Exit status.
 */
static int build_write(Store *s, const char *sha, BuildFile *bf)
{
    const char *tmpdir = getenv("TMPDIR");
    snprintf(bf->dir, sizeof bf->dir, "%s/xqf-build-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(bf->dir)) {
        bf->dir[0] = '\0';
        return cli_fail(CLI_FAIL, "cannot make a temporary folder: %s", strerror(errno));
    }
    if ((size_t)snprintf(bf->path, sizeof bf->path, "%s/xqf-engine-%.12s", bf->dir, sha) >= sizeof bf->path) {
        bf->path[0] = '\0';
        return cli_fail(CLI_FAIL, "TMPDIR is too long");
    }
    enum { CHUNK = 1 << 20 };
    char *buf = malloc(CHUNK), name[STORE_NAME_MAX + 1], sig[STORE_SIG_HEX + 1], hex[SHA256_HEX_LEN + 1];
    FILE *f = buf ? fopen(bf->path, "wb") : NULL;
    int status = f ? CLI_OK : cli_fail(CLI_FAIL, "cannot write '%s': %s", bf->path, strerror(errno));
    for (int64_t off = 0, total = 1; status == CLI_OK && off < total;) {
        size_t len = 0;
        if (store_build_chunk(s, sha, off, CHUNK, buf, &len, &total, name, sig) != 1 || (len == 0 && total > 0))
            status = cli_fail(CLI_FAIL, "cannot read the bytes of build %.16s", sha);
        else if (fwrite(buf, 1, len, f) != len)
            status = cli_fail(CLI_FAIL, "cannot write '%s': %s", bf->path, strerror(errno));
        off += (int64_t)len;
    }
    free(buf);
    if (f && fclose(f) != 0 && status == CLI_OK)
        status = cli_fail(CLI_FAIL, "cannot write '%s': %s", bf->path, strerror(errno));
    if (status == CLI_OK && (sha256_file(bf->path, hex) != 0 || strcmp(hex, sha) != 0))
        status = cli_fail(CLI_FAIL, "build %.16s: its stored bytes are not its SHA-256", sha);
    if (status == CLI_OK)
        chmod(bf->path, 0500);
    return status;
}

static void build_drop(BuildFile *bf)
{
    if (bf->path[0])
        unlink(bf->path);
    if (bf->dir[0])
        rmdir(bf->dir);
    bf->path[0] = bf->dir[0] = '\0';
}

/* A run's two sides as the audit searches them: their sets, their nets and builds written to files. */
typedef struct {
    StoreRun run;
    bool spsa;                       /* each task plays sets of its own (tasks.params0, params1) */
    char params[2][STORE_PARAMS_MAX + 1];
    CliNetFile net[2];
    const char *net_arg[2];          /* "" the engine's own, "none", or net[p].path */
    BuildFile build[2];              /* a side's engine build ("": the built-in engine) */
    EngineRecord engine[2];          /* the engine a side's build is of, when another than ours */
    bool other[2];
    PlayerSpec spec[2];
} Sides;

/* Side p's player for set (the run's, or its task's). 0, or -1 with err. */
static int side_spec(const Sides *sd, int p, const char *set, PlayerSpec *spec, char *err, size_t errlen)
{
    const char *build = p == 0 ? sd->run.build0 : sd->run.build1;
    if (set_spec(spec, p == 0 ? "test" : "base", set, sd->net_arg[p], build[0] ? sd->build[p].path : NULL,
                 sd->other[p] ? &sd->engine[p] : NULL, sd->run.hash_mb, err, errlen) != 0)
        return -1;
    if (build[0]) {
        /* untrusted code: in the sandbox, started from the descriptor its SHA-256 is checked on */
        spec->sandbox = true;
        snprintf(spec->sha256, sizeof spec->sha256, "%s", build);
    }
    return 0;
}

/* Positions by task, then player: each group is searched with one player. */
static int by_task_player(const void *a, const void *b)
{
    const Drawn *x = a, *y = b;
    if (x->task != y->task)
        return x->task < y->task ? -1 : 1;
    return x->player - y->player;
}

/*
 * Searches a worker's drawn positions again (the first player's with
 * spec[0], the second's with spec[1]; an SPSA run's with the sets of the
 * task that played each) and counts those whose best move is the game's.
 * A position that does not read (the coordinator stores records without
 * playing them: an illegal move up to it or at it) is counted as not
 * agreeing, and apart.  CLI_OK or CLI_FAIL.
 */
static int search_again(Store *s, Reservoir *r, Sides *sd, const TacticsConfig *cfg, Audited *a)
{
    size_t size = (size_t)r->have * SUITE_LINE_MAX + 1;
    char *text = malloc(size);
    if (!text)
        return cli_fail(CLI_FAIL, "out of memory");
    a->positions = a->agree = a->illegal = 0;
    int status = CLI_OK;
    char err[512];
    static char sets[2][STORE_PARAMS_MAX + 1];
    for (int i = 0; i < r->have && sd->spsa && status == CLI_OK; i++) {
        int got = store_task_sets(s, sd->run.id, r->drawn[i].game / 2, &r->drawn[i].task, sets[0], sets[1],
                                  sizeof sets[0]);
        if (got != 1)
            status = cli_fail(CLI_FAIL, "run %" PRId64 ": cannot read the task of game %" PRId64, sd->run.id,
                              r->drawn[i].game);
    }
    qsort(r->drawn, (size_t)r->have, sizeof *r->drawn, by_task_player);
    for (int from = 0, to; from < r->have && status == CLI_OK; from = to) {
        const Drawn *d = &r->drawn[from];
        size_t n = 0;
        for (to = from; to < r->have && r->drawn[to].task == d->task && r->drawn[to].player == d->player; to++) {
            Suite *one = suite_parse(r->drawn[to].line, a->name, err, sizeof err);
            if (one)
                n += (size_t)snprintf(text + n, size - n, "%s\n", r->drawn[to].line);
            else
                a->illegal++;
            suite_destroy(&one);
        }
        if (n == 0)
            continue;
        PlayerSpec task_spec, *spec = &sd->spec[d->player];
        if (sd->spsa) {
            int64_t task;
            if (store_task_sets(s, sd->run.id, d->game / 2, &task, sets[0], sets[1], sizeof sets[0]) != 1) {
                status = cli_fail(CLI_FAIL, "run %" PRId64 ": cannot read task %" PRId64, sd->run.id, d->task);
                break;
            }
            if (side_spec(sd, d->player, sets[d->player], &task_spec, err, sizeof err) != 0) {
                status = cli_fail(CLI_FAIL, "task %" PRId64 "'s %s set: %s", task, d->player == 0 ? "first" : "second",
                                  err);
                break;
            }
            spec = &task_spec;
        }
        Suite *suite = suite_parse(text, a->name, err, sizeof err);
        if (!suite) {
            status = cli_fail(CLI_FAIL, "worker %s: a drawn position does not read: %s", a->name, err);
            break;
        }
        Faults faults = { 0 };
        int passed = tactics_run(suite, spec, cfg, searched, &faults, err, sizeof err);
        if (passed < 0)
            status = cli_fail(CLI_FAIL, "the search again: %s", err);
        else if (faults.faults > 0)
            /* a search that failed judges the engine, not the worker: nothing recorded */
            status = cli_fail(CLI_FAIL, "worker %s: %" PRId64 " searches failed (%s): not judged", cli_shown(a->name),
                              faults.faults, cli_shown(faults.detail));
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


/* The run's sides: its sets, each side's registered net written to a file, their players. Exit status. */
static int sides_load(Store *s, int64_t id, Sides *sd, int *found)
{
    char err[512];
    *found = store_load_run(s, id, &sd->run, false);
    if (*found <= 0)
        return *found < 0 ? cli_fail(CLI_FAIL, "cannot read run %" PRId64, id)
                          : cli_fail(CLI_USAGE, "no run %" PRId64, id);
    int status = CLI_OK;
    sd->spsa = strcmp(sd->run.kind, "spsa") == 0;
    if (status == CLI_OK && store_run_sets(s, id, sd->params[0], sd->params[1], sizeof sd->params[0]) != 1)
        status = cli_fail(CLI_FAIL, "cannot read the sets of run %" PRId64, id);
    for (int p = 0; p < 2 && status == CLI_OK; p++) {
        const char *net = p == 0 ? sd->run.net0 : sd->run.net1;
        sd->net_arg[p] = net;
        if (net[0] && strcmp(net, "none") != 0) {
            if ((status = cli_net_lookup(s, p == 0 ? "the first side's net" : "the second side's net", net,
                                         &sd->net[p])) == CLI_OK &&
                (status = cli_net_write(s, &sd->net[p])) == CLI_OK)
                sd->net_arg[p] = sd->net[p].path;
        }
        const char *build = p == 0 ? sd->run.build0 : sd->run.build1;
        const char *engine = p == 1 && sd->run.base_engine[0] ? sd->run.base_engine : sd->run.engine;
        sd->other[p] = build[0] && engine[0] && strcmp(engine, "xqf") != 0;
        if (status == CLI_OK && sd->other[p]) {
            int got = store_engine_load(s, engine, &sd->engine[p]);
            if (got != 1)
                status = got < 0 ? cli_fail(CLI_FAIL, "cannot read the engines")
                                 : cli_fail(CLI_FAIL, "run %" PRId64 ": no engine %s", id, cli_shown(engine));
        }
        if (status == CLI_OK && build[0])
            status = build_write(s, build, &sd->build[p]);
        if (status == CLI_OK && side_spec(sd, p, sd->params[p], &sd->spec[p], err, sizeof err) != 0)
            status = cli_fail(CLI_FAIL, "the run's %s set: %s", p == 0 ? "test" : "base", err);
    }
    return status;
}

static void sides_free(Sides *sd, int found)
{
    for (int p = 0; p < 2; p++) {
        cli_net_drop(&sd->net[p]);
        build_drop(&sd->build[p]);
    }
    if (found == 1)
        store_run_free(&sd->run);
}

/* What one run's audit is told: the workers due (NULL: every worker, or --worker), and the pass's counts. */
typedef struct {
    const StoreAuditDue *due;
    int ndue;
    int workers, flagged;
} AuditAsk;

static bool is_due(const AuditAsk *ask, int64_t worker)
{
    for (int i = 0; i < ask->ndue; i++)
        if (ask->due[i].worker_id == worker)
            return true;
    return false;
}

/* The search audit of run id (its workers as ask says), each verdict recorded. Exit status. */
static int audit_run(Store *s, const Opts *o, int64_t id, AuditAsk *ask)
{
    int found = 0;
    uint64_t seed;
    if (getrandom(&seed, sizeof seed, 0) != (ssize_t)sizeof seed)
        return cli_fail(CLI_FAIL, "no random seed from the kernel");
    Sides *sd = calloc(1, sizeof *sd);
    if (!sd)
        return cli_fail(CLI_FAIL, "out of memory");
    int status = sides_load(s, id, sd, &found);
    StoreWorkerTrust *w = NULL;
    int nw = status == CLI_OK ? store_run_workers(s, id, &w) : 0;
    if (nw < 0)
        status = cli_fail(CLI_FAIL, "cannot read the workers of run %" PRId64, id);
    const char *only = ask->due ? NULL : opts_text(o, "--worker");
    bool given_p0 = opts_given(o, "--agree");
    Audited *a = status == CLI_OK ? calloc((size_t)(nw > 0 ? nw : 1), sizeof *a) : NULL;
    Reservoir r = { .want = (int)opts_int(o, "--positions") };
    rng_seed(&r.rng, seed);
    r.drawn = status == CLI_OK ? malloc((size_t)r.want * sizeof *r.drawn) : NULL;
    if (status == CLI_OK && (!a || !r.drawn))
        status = cli_fail(CLI_FAIL, "out of memory");
    TacticsConfig cfg = { .depth = (int)opts_int(o, "--depth"), .threads = (int)opts_int(o, "--concurrency") };
    int na = 0;
    /* the honest agreement without --agree: the others' of this audit, and (--active) of their last audits */
    int64_t all_k = 0, all_n = 0;
    for (int i = 0; i < nw && status == CLI_OK; i++) {
        if ((only && strcmp(w[i].name, only) != 0) || (ask->due && !is_due(ask, w[i].worker_id))) {
            if (ask->due) {
                all_k += w[i].search_agree;
                all_n += w[i].search_positions;
            }
            continue;
        }
        Audited *x = &a[na++];
        x->id = w[i].worker_id;
        snprintf(x->name, sizeof x->name, "%s", w[i].name);
        r.have = 0;
        r.seen = r.bad = r.plies = 0;
        if (store_each_game(s, id, 0, x->id, draw_from, &r) < 0)
            status = cli_fail(CLI_FAIL, "cannot read the games of run %" PRId64, id);
        else if (r.bad > 0)
            log_warn("worker %s: %" PRId64 " records do not read (left out)", x->name, r.bad);
        x->plies = r.plies;
        if (status == CLI_OK)
            status = search_again(s, &r, sd, &cfg, x);
    }
    if (status == CLI_OK && only && na == 0)
        status = cli_fail(CLI_USAGE, "--worker: '%s' played no game of run %" PRId64, only, id);
    if (status == CLI_OK && !ask->due && !given_p0 && na < 2)
        status = cli_fail(CLI_USAGE, "one worker audited: say an honest worker's agreement with --agree");
    for (int i = 0; i < na; i++) {
        all_k += a[i].agree;
        all_n += a[i].positions;
    }
    double alpha = opts_real(o, "--alpha"), beta = opts_real(o, "--beta"), f = opts_real(o, "--fabricated");
    double lower = log(beta / (1 - alpha)), upper = log((1 - beta) / alpha);
    if (status == CLI_OK)
        printf("Search audit of run %" PRId64 ": %d workers, positions searched again at depth %d "
               "(SPRT H1: %g %% of the moves made up; alpha %g, beta %g)\n",
               id, na, cfg.depth, 100 * f, alpha, beta);
    for (int i = 0; i < na && status == CLI_OK; i++) {
        Audited *x = &a[i];
        int64_t ok = all_k - x->agree, of = all_n - x->positions;
        double p0 = given_p0 ? opts_real(o, "--agree") : of > 0 ? (double)ok / (double)of : NAN;
        char name[sizeof x->name * 4];
        xqf_escape(name, sizeof name, x->name);     /* came from the network */
        StoreSearchAudit rec = { .depth = cfg.depth, .positions = x->positions, .agree = x->agree, .honest = p0,
                                 .llr = 0, .verdict = "undecided", .plies = x->plies };
        if (x->positions == 0 || !(p0 > 0 && p0 < 1)) {
            printf("  %-24s %6" PRId64 " positions: not judged (%s)\n", name, x->positions,
                   x->positions == 0 ? "none drawn" : "the others' agreement is 0 or 1: say --agree");
            /* --active: recorded undecided all the same, so that its games are not searched again next pass */
            if (ask->due && store_search_audit_add(s, id, x->id, &rec) != 0)
                status = cli_fail(CLI_FAIL, "cannot record the audit of worker %s", name);
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
        rec.llr = llr;
        rec.verdict = verdict;
        if (store_search_audit_add(s, id, x->id, &rec) != 0) {
            status = cli_fail(CLI_FAIL, "cannot record the audit of worker %s", name);
            break;
        }
        ask->workers++;
        if (llr >= upper) {
            ask->flagged++;
            char detail[1024];
            snprintf(detail, sizeof detail, "search audit: worker %s flagged: %s", name, line);
            if (store_web_audit(s, CLI_PROGRAM, id, "audit", detail) != 0)
                status = cli_fail(CLI_FAIL, "cannot write the run's history");
        }
    }
    free(a);
    free(r.drawn);
    free(w);
    sides_free(sd, found);
    free(sd);
    return status;
}

/*
 * One pass of --active: the workers due, run by run, the pass recorded
 * (search_audit_passes).  A run whose audit fails is said and left for
 * the next pass; the others go on.  Exit status.
 */
static int audit_pass(Store *s, const Opts *o)
{
    StoreAuditDue *due = NULL;
    int64_t pass;
    int n = store_search_audit_due(s, opts_int(o, "--new-plies"), &due);
    if (n < 0)
        return cli_fail(CLI_FAIL, "cannot read the runs due for a search audit");
    if (store_search_pass_begin(s, &pass) != 0) {
        free(due);
        return cli_fail(CLI_FAIL, "cannot record the pass");
    }
    int status = CLI_OK, runs = 0, workers = 0, flagged = 0;
    for (int from = 0, to; from < n; from = to) {
        for (to = from; to < n && due[to].run_id == due[from].run_id; to++)
            ;
        AuditAsk ask = { .due = due + from, .ndue = to - from };
        int st = audit_run(s, o, due[from].run_id, &ask);
        if (st != CLI_OK)
            status = st;
        runs++;
        workers += ask.workers;
        flagged += ask.flagged;
    }
    free(due);
    if (store_search_pass_end(s, pass, runs, workers, flagged) != 0)
        status = cli_fail(CLI_FAIL, "cannot record the pass");
    printf("Pass %" PRId64 ": %d runs, %d workers judged, %d flagged\n", pass, runs, workers, flagged);
    fflush(stdout);
    return status;
}

/* xqf-tune audit --active [--watch SECONDS]: the passes. Exit status. */
static int audit_active(const Opts *o)
{
    if (o->npositional != 0 || opts_given(o, "--worker"))
        return cli_fail(CLI_USAGE, "audit --active takes no RUN and no --worker: it audits every worker due");
    int64_t watch = opts_given(o, "--watch") ? opts_int(o, "--watch") : 0;
    Store *s = NULL;
    int status = cli_open_db(o, &s);
    while (status == CLI_OK) {
        int st = audit_pass(s, o);
        if (!watch) {
            status = st;
            break;
        }
        sleep((unsigned)watch);
        if (!store_ok(s) && store_connect(s) != 0)
            fprintf(stderr, "xqf-tune: the database is not reachable: trying again in %" PRId64 " s\n", watch);
    }
    store_destroy(&s);
    return status;
}

int tune_cmd_audit(int argc, char **argv)
{
    Opts o;
    Store *s = NULL;
    int64_t id;
    int status = cli_parse(&o, &AUDIT_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO)
        return status;
    if (opts_given(&o, "--active"))
        return audit_active(&o);
    if (opts_given(&o, "--watch") || opts_given(&o, "--new-plies"))
        return cli_fail(CLI_USAGE, "--watch and --new-plies go with --active");
    if ((status = cli_run_id(&o, &id)) != CLI_OK)
        return status;
    if ((status = cli_open_db(&o, &s)) != CLI_OK)
        return status;
    AuditAsk ask = { 0 };
    status = audit_run(s, &o, id, &ask);
    if (status == CLI_OK)
        printf("Flagged: %d\n", ask.flagged);
    store_destroy(&s);
    return status;
}

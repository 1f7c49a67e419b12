/*
 * dataplay.c - xqf-tune data play: training positions made on this
 * machine, without the cluster, straight into a data file (XQFDATA1,
 * worker/game/datagen.h).
 *
 * The games are a data run's (data new): the built-in engine against
 * itself, each side its own engine and hash, at fixed nodes, the run's
 * adjudication (store_runs.h's STORE_ADJUDICATION_DEFAULT), pair p from
 * the book's opening perm[p % n] (the coordinator's order: an inside-out
 * Fisher-Yates shuffle seeded by --seed, sched_book_order), each game
 * with its own random plies (gamepack_opening, seeded by the run's data
 * seed --seed * 0x9E3779B97F4A7C15 + --as-run and the game's index), and
 * the kept positions are the run's filter's (data_extract, the one
 * xqf-tune data export replays a stored game through).  With --hash 16 and
 * --as-run ID, the file is the one data export writes for run ID made with
 * that seed (the same games, byte for byte).
 *
 * What it leaves out is what training never reads: no coordinator, no
 * database, no game records stored and replayed (PostgreSQL, the script's
 * polls and the coordinator were 13% of a chunk's CPU time), and a small
 * hash (the default 1 MB: a 3,000-node search writes a few thousand
 * entries; with 16 MB the table's cache and TLB misses and its clearing
 * twice a game were about a third of a game thread's search time).  The
 * search itself stays: docs/nnue.md "A faster data mode" has the profile
 * and the measured ratio (about 1.2x).  Games run on --threads
 * threads and are written in their order, so the same options give the
 * same file whatever the threads.  The file is written as FILE.part and
 * renamed when complete: an interrupted play leaves no FILE.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "book.h"
#include "cli.h"
#include "clock.h"
#include "datagen.h"
#include "game.h"
#include "gamepack.h"
#include "player.h"
#include "rng.h"
#include "run_rules.h"
#include "run_service.h"
#include "spec.h"
#include "store_runs.h"

enum { PLAY_GAMES_MAX = 1000000, MOVE_TIMEOUT_MS = 30000 };

static const OptSpec PLAY_OPTIONS[] = {
    { "--games", OPT_INT, "N", NULL, .imin = 1, .imax = PLAY_GAMES_MAX, .help = "games to play, required" },
    { "--nodes", OPT_INT, "N", NULL, .imin = 1, .imax = INT64_C(1) << 40, .help = "nodes per move, required" },
    { "--out", OPT_TEXT, "FILE", NULL, .help = "the data file written, required" },
    { "--seed", OPT_INT, "S", "1", .imin = 0, .imax = INT64_MAX, .help = "the openings' order and the random plies" },
    { "--as-run", OPT_INT, "ID", "0", .imin = 0, .imax = INT64_MAX, .help = "the random plies of data run ID made with --seed (its data seed)" },
    { "--random-plies", OPT_INT, "N", "8", .imin = 0, .imax = XQF_RANDOM_PLIES_MAX, .help = "random plies after the opening" },
    { "--threads", OPT_INT, "N", NULL, .imin = 1, .imax = 1024, .help = "games at once (default: online cores)" },
    { "--hash", OPT_INT, "MB", "1", .imin = 1, .imax = 4096, .help = "each engine's hash (a data run's: 16)" },
    { "--net", OPT_TEXT, "FILE|none", NULL, .help = "the net the engine evaluates with (none: hand-crafted; default: its own)" },
    { "--book", OPT_TEXT, "FILE", XQF_DEFAULT_BOOK, .help = "opening book, read as data new reads it (duplicates dropped)" },
    { "--skip-plies", OPT_INT, "N", "0", .imin = 0, .imax = 1000, .help = "plies kept out after the opening and random plies" },
    { "--keep-check", OPT_FLAG, NULL, NULL, .help = "keep positions where the side to move is in check" },
    { "--keep-captures", OPT_FLAG, NULL, NULL, .help = "keep positions whose played move captures" },
    { "--max-score", OPT_INT, "CP", "3000", .imin = 0, .imax = 30000, .help = "keep out |score| above CP" },
    { "--quiet", OPT_FLAG, NULL, NULL, .help = "no progress lines" },
    OPTS_END,
};

static const OptTable PLAY_TABLE = {
    .program = "xqf-tune", .spec = PLAY_OPTIONS, .max_positional = 0,
    .usage =
        "Usage: xqf-tune data play --games N --nodes N --out FILE [--seed S] [--as-run ID] [--random-plies N]\n"
        "                          [--threads N] [--hash MB] [--net FILE|none] [--book FILE] [--skip-plies N]\n"
        "                          [--keep-check] [--keep-captures] [--max-score CP] [--quiet]\n"
        "\n"
        "Plays a data run's games on this machine, without the cluster: the engine\n"
        "against itself at fixed nodes from the book's openings, each game with its\n"
        "own random plies, and writes the kept positions (the filter of data new)\n"
        "as a data file (XQFDATA1), in the games' order: the same options give the\n"
        "same file whatever --threads.  The file is complete when it has its name\n"
        "(written as FILE.part, renamed at the end).  Prints the positions, the games\n"
        "and the positions per core-hour of this process's CPU time.\n",
};

/* A finished game's kept positions, waiting for the games before it to be written. */
typedef struct {
    uint8_t *data;
    size_t len;
    bool done;
} Slot;

typedef struct {
    /* settings, read only once the threads run */
    int64_t games;
    PlayerSpec spec;
    TimeControl tc;
    Adjudication adj;
    DataFilter filter;
    const Book *book;
    int *perm;               /* opening of pair p: perm[p % book size] */
    int random_plies;
    uint64_t data_seed;
    bool quiet;
    atomic_bool stop;
    atomic_int_fast64_t next_game;
    /* under the lock */
    pthread_mutex_t lock;
    Slot *slots;
    int64_t written;         /* games written, always the first ones */
    int64_t positions;
    int64_t searched;        /* moves the engine searched (not the opening's) in the games written */
    FILE *out;
    bool failed;
    char why[256];
} Play;

static atomic_bool interrupted;

static void on_signal(int sig)
{
    atomic_store(&interrupted, true);
    signal(sig, SIG_DFL); /* a second one ends the program at once */
}

/* The coordinator's opening order (coordinator/sched.c, sched_book_order): the inside-out Fisher-Yates shuffle. */
static void book_order(uint64_t seed, int *perm, int n)
{
    Rng rng;
    rng_seed(&rng, seed);
    for (int i = 0; i < n; i++) {
        int j = (int)(rng_next(&rng) % (uint64_t)(i + 1));
        perm[i] = perm[j];
        perm[j] = i;
    }
}

/* A game's kept positions as records, grown as they come. */
typedef struct {
    uint8_t *data;
    size_t len, cap;
    bool oom;
} Records;

static void keep_record(void *ctx, const DataPosition *pos)
{
    Records *r = ctx;
    if (r->oom)
        return;
    if (r->len + DATA_RECORD_BYTES > r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 128 * DATA_RECORD_BYTES;
        uint8_t *grown = realloc(r->data, cap);
        if (!grown) {
            r->oom = true;
            return;
        }
        r->data = grown;
        r->cap = cap;
    }
    data_pack(pos, r->data + r->len);
    r->len += DATA_RECORD_BYTES;
}

/* Records why the play failed (the first reason) and stops it. Under the lock. */
static void fail_locked(Play *p, const char *why)
{
    if (!p->failed)
        snprintf(p->why, sizeof p->why, "%s", why);
    p->failed = true;
    atomic_store(&p->stop, true);
}

/* Hands over game index's records and writes every game now complete in order. */
static void finish_game(Play *p, int64_t index, Records *r, const GameRecord *g)
{
    int searched = 0;
    for (int i = 0; i < g->count; i++)
        searched += !g->moves[i].book;
    pthread_mutex_lock(&p->lock);
    p->searched += searched;
    p->slots[index] = (Slot){ r->data, r->len, true };
    *r = (Records){ 0 };
    while (p->written < p->games && p->slots[p->written].done) {
        Slot *s = &p->slots[p->written];
        if (!p->failed && s->len && fwrite(s->data, 1, s->len, p->out) != s->len)
            fail_locked(p, "cannot write the data file");
        p->positions += (int64_t)(s->len / DATA_RECORD_BYTES);
        free(s->data);
        *s = (Slot){ .done = true };
        p->written++;
    }
    pthread_mutex_unlock(&p->lock);
}

/* Plays game index with red and black into g: the pair's opening with the game's random plies. game_play's status. */
static int play_game(Play *p, Player *red, Player *black, int64_t index, GameRecord *g)
{
    const Opening *base = book_opening(p->book, p->perm[(index / 2) % book_size(p->book)]);
    Move *moves = malloc(sizeof *moves * (size_t)(base->count + p->random_plies + 1));
    Opening opening;
    int rc = -1;
    if (!moves)
        snprintf(g->detail, sizeof g->detail, "out of memory for the opening's moves");
    else if (gamepack_opening(base, p->random_plies, p->data_seed, index, moves, &opening) != 0)
        snprintf(g->detail, sizeof g->detail, "the opening's FEN does not parse");
    else {
        TimeControl tc = time_control_game(&p->tc, index % 2 == 0);
        rc = game_play(red, black, &opening, &tc, &p->adj, &p->stop, g);
    }
    free(moves);
    return rc;
}

static void *play_thread(void *arg)
{
    Play *p = arg;
    /* each side its own engine and hash, kept from game to game (player_new_game clears them), as a worker's */
    Player *players[2] = { player_new(&p->spec), player_new(&p->spec) };
    GameRecord g;
    game_record_init(&g);
    Records r = { 0 };
    const char *why = !players[0] || !players[1] ? "out of memory for the players" : NULL;
    int64_t index;
    while (!why && !atomic_load(&p->stop) && (index = atomic_fetch_add(&p->next_game, 1)) < p->games) {
        /* the first player has Red in a pair's first game (task.c) */
        int rc = play_game(p, players[index % 2], players[(index + 1) % 2], index, &g);
        if (rc != 0)
            why = g.detail[0] ? g.detail : "a game could not be played";
        else if (g.reason == GAME_ABANDONED)
            break;
        else if (data_extract(&g, &p->filter, keep_record, &r) < 0)
            why = "a game's record does not replay (an illegal move)";
        else if (r.oom)
            why = "out of memory for a game's positions";
        else
            finish_game(p, index, &r, &g);
    }
    if (why) {
        pthread_mutex_lock(&p->lock);
        fail_locked(p, why);
        pthread_mutex_unlock(&p->lock);
    }
    free(r.data);
    game_record_free(&g);
    player_destroy(&players[0]);
    player_destroy(&players[1]);
    return NULL;
}

/* The options into p (the book aside). Exit status. */
static int play_settings(const Opts *o, Play *p)
{
    char words[3][SPEC_TEXT_MAX + 8], err[512];
    char *argv[3] = { words[0], words[1], words[2] };
    int n = 0;
    snprintf(words[n++], sizeof words[0], "name=xqf");
    snprintf(words[n++], sizeof words[0], "threads=1");
    const char *net = opts_text(o, "--net");
    if (net && (!*net || strlen(net) > SPEC_TEXT_MAX - 1))
        return cli_fail(CLI_USAGE, "--net: give a net file or none");
    if (net)
        snprintf(words[n++], sizeof words[0], "net=%s", net);
    if (spec_parse(&p->spec, n, argv, (int)opts_int(o, "--hash"), err, sizeof err) != 0)
        return cli_fail(CLI_USAGE, "--net: %s", err);
    p->games = opts_int(o, "--games");
    p->tc = (TimeControl){ .nodes = (uint64_t)opts_int(o, "--nodes"), .move_timeout_ms = MOVE_TIMEOUT_MS };
    const StoreAdjudication a = STORE_ADJUDICATION_DEFAULT;
    p->adj = (Adjudication){ .resign_moves = (int)a.resign_moves, .resign_score = (int)a.resign_score,
                             .draw_after = (int)a.draw_after, .draw_moves = (int)a.draw_moves,
                             .draw_score = (int)a.draw_score, .max_plies = (int)a.max_plies };
    data_filter_default(&p->filter);
    p->filter.skip_plies = (int)opts_int(o, "--skip-plies");
    p->filter.keep_check = opts_given(o, "--keep-check");
    p->filter.keep_captures = opts_given(o, "--keep-captures");
    p->filter.max_score = (int)opts_int(o, "--max-score");
    p->random_plies = (int)opts_int(o, "--random-plies");
    /* a data run's data seed (coordinator/sched.c, fill_task): its seed and its id */
    p->data_seed = (uint64_t)opts_int(o, "--seed") * UINT64_C(0x9E3779B97F4A7C15) + (uint64_t)opts_int(o, "--as-run");
    p->quiet = opts_given(o, "--quiet");
    return CLI_OK;
}

/* This process's CPU time (user and system, every thread), seconds. */
static double cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0.0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Starts the threads, reports progress, joins them. Exit status. */
static int play_all(Play *p, int threads)
{
    pthread_t *tids = malloc(sizeof *tids * (size_t)threads);
    int started = 0;
    for (; tids && started < threads; started++)
        if (pthread_create(&tids[started], NULL, play_thread, p) != 0)
            break;
    if (started == 0) {
        free(tids);
        return cli_fail(CLI_FAIL, "cannot start a game thread");
    }
    int64_t t0 = clock_now_us(), shown = t0;
    for (;;) {
        struct timespec ts = { 0, 100 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        if (atomic_load(&interrupted))
            atomic_store(&p->stop, true);
        pthread_mutex_lock(&p->lock);
        int64_t written = p->written, positions = p->positions;
        pthread_mutex_unlock(&p->lock);
        bool end = written == p->games || atomic_load(&p->stop);
        int64_t now = clock_now_us();
        if (!p->quiet && !end && now - shown >= 30 * 1000000) {
            shown = now;
            fprintf(stderr, "%s: data play: %" PRId64 "/%" PRId64 " games, %" PRId64 " positions, %.0f s\n",
                    CLI_PROGRAM, written, p->games, positions, (now - t0) / 1e6);
        }
        if (end)
            break;
    }
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    free(tids);
    return CLI_OK;
}

int cli_data_play(int argc, char **argv)
{
    Opts o;
    int status = cli_parse(&o, &PLAY_TABLE, argc, argv);
    if (status != CLI_GO)
        return status;
    if (!opts_given(&o, "--games") || !opts_given(&o, "--nodes") || !opts_text(&o, "--out") || !*opts_text(&o, "--out"))
        return cli_fail(CLI_USAGE, "data play: --games N, --nodes N and --out FILE are required");
    Play *p = calloc(1, sizeof *p);
    if (!p)
        return cli_fail(CLI_FAIL, "out of memory");
    status = play_settings(&o, p);
    char part[CLI_PATH_MAX];
    const char *path = opts_text(&o, "--out");
    /* the book as data new reads it (run_service.h: duplicates dropped), so the openings are a run's */
    RunBook rb = { 0 };
    RunSpec sp = run_spec_default(RUN_KIND_DATA);
    sp.book = opts_text(&o, "--book");
    sp.book_notes = stderr;
    RunProblem problem;
    if (status == CLI_OK && run_book_read(&sp, &rb, &problem) != RUN_OK)
        status = cli_fail(CLI_USAGE, "--book: %s", problem.why);
    const Book *book = rb.book;
    if (status == CLI_OK && snprintf(part, sizeof part, "%s.part", path) >= (int)sizeof part)
        status = cli_fail(CLI_USAGE, "--out: the path is too long");
    if (status == CLI_OK) {
        p->book = book;
        p->perm = malloc(sizeof *p->perm * (size_t)book_size(book));
        p->slots = calloc((size_t)p->games, sizeof *p->slots);
        if (!p->perm || !p->slots)
            status = cli_fail(CLI_FAIL, "out of memory");
    }
    bool opened = status == CLI_OK && (p->out = fopen(part, "wb")) != NULL;
    if (status == CLI_OK && (!opened || data_write_header(p->out) != 0))
        status = cli_fail(CLI_USAGE, "--out: cannot write '%s': %s", part, strerror(errno));
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = opts_given(&o, "--threads") ? (int)opts_int(&o, "--threads") : online > 0 ? (int)online : 1;
    if (threads > p->games)
        threads = (int)p->games;
    if (status == CLI_OK) {
        book_order((uint64_t)opts_int(&o, "--seed"), p->perm, book_size(book));
        pthread_mutex_init(&p->lock, NULL);
        atomic_init(&p->stop, false);
        atomic_init(&p->next_game, 0);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        int64_t t0 = clock_now_us();
        status = play_all(p, threads);
        double wall = (clock_now_us() - t0) / 1e6, cpu = cpu_seconds();
        if (status == CLI_OK && p->failed)
            status = cli_fail(CLI_FAIL, "data play: %s", p->why);
        else if (status == CLI_OK && p->written < p->games)
            status = cli_fail(CLI_FAIL, "data play: interrupted after %" PRId64 " of %" PRId64 " games: no file written",
                              p->written, p->games);
        if (fclose(p->out) != 0 && status == CLI_OK)
            status = cli_fail(CLI_FAIL, "--out: cannot write '%s': %s", part, strerror(errno));
        p->out = NULL;
        if (status == CLI_OK && rename(part, path) != 0)
            status = cli_fail(CLI_FAIL, "--out: cannot rename '%s' to '%s': %s", part, path, strerror(errno));
        if (status == CLI_OK)
            fprintf(stderr,
                    "%s: %" PRId64 " positions of %" PRId64 " games written to %s (%.1f a game, %.2f moves searched a "
                    "position); %.1f s, %d threads, %.1f CPU s: %.3f M positions per core-hour\n",
                    CLI_PROGRAM, p->positions, p->written, path, (double)p->positions / (double)p->written,
                    p->positions ? (double)p->searched / (double)p->positions : 0.0, wall,
                    threads, cpu, cpu > 0 ? p->positions / cpu * 3600 / 1e6 : 0.0);
        pthread_mutex_destroy(&p->lock);
    }
    if (p->out)
        fclose(p->out);
    if (status != CLI_OK && opened)
        remove(part);
    for (int64_t i = 0; p->slots && i < p->games; i++)
        free(p->slots[i].data);
    free(p->slots);
    free(p->perm);
    run_book_free(&rb);
    free(p);
    return status;
}

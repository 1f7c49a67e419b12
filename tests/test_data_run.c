/*
 * Data-generation runs (docs/programs/xqf-tune.md) against a real PostgreSQL (XQF_TEST_DB;
 * skipped without it): a run end to end with workers killed (kill -9)
 * mid-task, where every game is stored exactly once and the stored games
 * are exactly the counted ones (their results add up to the run's W/D/L);
 * xqf-tune data export reproduces data_extract's positions of the stored
 * games (binary and text), and xqf-tune data play (no cluster) with the
 * run's settings, seed and id writes the same bytes; stats and show; bad input to data new and
 * data export refused with exit status 2 (1 for what fails later).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster_util.h"
#include "datagen.h"
#include "fen.h"
#include "gamepack.h"
#include "games.h"
#include "store_games.h"
#include "store_runs.h"
#include "store_tasks.h"

TestSuite(data_run, .init = cu_fixture_init, .fini = cu_fixture_fini, .timeout = 300);

/* Runs xqf-tune with args (a shell fragment); its stdout in out. Returns the exit status. */
static int tune(char *out, size_t size, const char *args)
{
    int st = cu_tune(out, size, args, cu_fx.logfile);
    cr_assert_geq(st, -1, "cannot run xqf-tune");
    return st;
}

/* The last line of the log (xqf-tune's message), for the refusals' checks. */
static const char *last_message(void)
{
    static char line[1024];
    FILE *f = fopen(cu_fx.logfile, "r");
    line[0] = '\0';
    if (f) {
        char buf[1024];
        while (fgets(buf, sizeof buf, f))
            snprintf(line, sizeof line, "%s", buf);
        fclose(f);
    }
    return line;
}

enum { PAIRS = 24, PER_TASK = 3, NODES = 1500, RANDOM_PLIES = 4 };

static int64_t data_run(int64_t pairs)
{
    const char *book[40];
    int n = cu_book(book, 40);
    cr_assert_eq(n, 40);
    StoreDataSpec spec = { 0 };
    spec.run = (StoreSprtSpec){ .name = "data test", .test_params = "", .book_name = "default.book", .book = book,
                                .book_lines = n, .seed = 5, .nodes = NODES, .margin_ms = 100,
                                .pairs_per_task = PER_TASK, .max_pairs = pairs };
    spec.settings = (StoreDataSettings){ .random_plies = RANDOM_PLIES, .skip_plies = 2, .max_score = 2500 };
    int64_t id;
    cr_assert_eq(store_create_data(cu_fx.store, &spec, &id), 0);
    return id;
}

/* What the stored games of a run add up to, replayed as export does. */
typedef struct {
    int64_t games, next, wins, draws, losses;   /* wins...: the first player's view (game 0 of a pair is Red) */
    bool in_order;
    FILE *expect, *text;                        /* data_extract's records and lines, as export should write them */
    GameRecord g;
} Replay;

static void keep(void *ctx, const DataPosition *pos)
{
    Replay *r = ctx;
    uint8_t rec[DATA_RECORD_BYTES];
    data_pack(pos, rec);
    fwrite(rec, 1, sizeof rec, r->expect);
}

static int replay_game(void *ctx, int64_t game, const uint8_t *rec, size_t len)
{
    Replay *r = ctx;
    char err[160];
    r->in_order = r->in_order && game == r->next;
    r->next = game + 1;
    cr_assert_eq(gamepack_read(rec, len, &r->g, err, sizeof err), 0, "game %lld: %s", (long long)game, err);
    DataFilter f = { .skip_plies = 2, .max_score = 2500 };
    cr_assert_geq(data_extract(&r->g, &f, keep, r), 0, "game %lld does not replay", (long long)game);
    int book = 0;
    while (book < r->g.count && r->g.moves[book].book)
        book++;
    cr_assert_geq(book, RANDOM_PLIES, "game %lld: %d opening moves, fewer than the random plies", (long long)game, book);
    bool red_first = game % 2 == 0;
    GameResult first_won = red_first ? RESULT_RED_WINS : RESULT_BLACK_WINS;
    r->wins += r->g.result == first_won;
    r->draws += r->g.result == RESULT_DRAW;
    r->losses += r->g.result != first_won && r->g.result != RESULT_DRAW;
    r->games++;
    return 0;
}

static size_t slurp(const char *path, uint8_t **out)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    *out = malloc((size_t)n + 1);
    cr_assert_eq(fread(*out, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return (size_t)n;
}

Test(data_run, killed_workers_every_game_once_and_export)
{
    CU_REQUIRE_DB();
    int64_t run = data_run(PAIRS);
    cu_track(cu_coordinator(cu_fx.db_coordinator, cu_fx.port, "2", cu_fx.logfile));
    pid_t w[2] = { cu_track(cu_worker(cu_fx.port, "w1", 1, cu_fx.logfile)), cu_track(cu_worker(cu_fx.port, "w2", 1, cu_fx.logfile)) };
    /* kill -9 a worker three times while it plays (it always holds a lease: it fetches the next task early) */
    for (int k = 0; k < 3; k++) {
        cr_assert(cu_wait_pairs(cu_fx.store, run, 3 + 5 * k, 120), "no progress (log: %s)", cu_fx.logfile);
        cu_kill9(w[k % 2]);
        char name[16];
        snprintf(name, sizeof name, "w%d-%d", k % 2 + 1, k);
        w[k % 2] = cu_track(cu_worker(cu_fx.port, name, 1, cu_fx.logfile));
    }
    StoreRun r;
    cr_assert(cu_wait_finished(cu_fx.store, run, 200, &r), "run did not finish (log: %s)", cu_fx.logfile);
    char why[256];
    cr_assert(cu_audit(cu_fx.store, run, PAIRS, why, sizeof why), "%s (log: %s)", why, cu_fx.logfile);
    StoreAudit a;
    cr_assert_eq(store_audit_run(cu_fx.store, run, &a), 1);
    cr_assert_geq(a.max_attempts, 2, "no killed worker's task was re-issued (log: %s)", cu_fx.logfile);

    /* every game once: indexes 0 .. 2 PAIRS - 1, their results the run's counts */
    StoreGameTotals tot;
    cr_assert_eq(store_game_totals(cu_fx.store, run, &tot), 0);
    cr_assert_eq(tot.games, 2 * PAIRS, "%lld games stored", (long long)tot.games);
    char expect[300];
    snprintf(expect, sizeof expect, "%s/expect.data", cu_fx.dir);
    Replay rp = { .in_order = true, .expect = fopen(expect, "wb") };
    cr_assert(rp.expect);
    cr_assert_eq(data_write_header(rp.expect), 0);
    game_record_init(&rp.g);
    cr_assert_eq(store_each_game(cu_fx.store, run, 0, 0, replay_game, &rp), 0);
    game_record_free(&rp.g);
    fclose(rp.expect);
    cr_assert_eq(rp.games, 2 * PAIRS);
    cr_assert(rp.in_order && rp.next == 2 * PAIRS, "game indexes are not 0 .. %d", 2 * PAIRS - 1);
    cr_assert_eq(rp.wins, r.counts.wins, "stored games %lld/%lld/%lld, counted %lld/%lld/%lld", (long long)rp.wins,
                 (long long)rp.draws, (long long)rp.losses, (long long)r.counts.wins, (long long)r.counts.draws,
                 (long long)r.counts.losses);
    cr_assert_eq(rp.draws, r.counts.draws);
    cr_assert_eq(rp.losses, r.counts.losses);

    /* export: data_extract's positions of the stored games, byte for byte; text one line each */
    char out[8192], args[600], got[300], text[300];
    snprintf(got, sizeof got, "%s/got.data", cu_fx.dir);
    snprintf(text, sizeof text, "%s/got.txt", cu_fx.dir);
    snprintf(args, sizeof args, "data export %lld --out '%s'", (long long)run, got);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", last_message());
    uint8_t *a1, *a2;
    size_t n1 = slurp(expect, &a1), n2 = slurp(got, &a2);
    cr_assert_gt(n1, DATA_HEADER_BYTES + 20 * DATA_RECORD_BYTES, "too few positions");
    cr_assert_eq(n1, n2, "export wrote %zu bytes, data_extract gives %zu", n2, n1);
    cr_assert_eq(memcmp(a1, a2, n1), 0, "export differs from data_extract");
    snprintf(args, sizeof args, "data export %lld --text --out '%s'", (long long)run, text);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", last_message());
    uint8_t *t;
    size_t nt = slurp(text, &t);
    size_t lines = 0;
    for (size_t i = 0; i < nt; i++)
        lines += t[i] == '\n';
    cr_assert_eq(lines, (n1 - DATA_HEADER_BYTES) / DATA_RECORD_BYTES);
    cr_assert(strstr((char *)t, " | ") != NULL);
    free(t);

    /*
     * data play (no cluster) with the run's settings, its hash (16 MB), seed
     * and id: the same games, so export's file byte for byte
     */
    char bookf[300], played[300];
    snprintf(bookf, sizeof bookf, "%s/book40.book", cu_fx.dir);
    snprintf(played, sizeof played, "%s/played.data", cu_fx.dir);
    const char *blines[40];
    cr_assert_eq(cu_book(blines, 40), 40);
    FILE *bf = fopen(bookf, "w");
    cr_assert(bf);
    for (int i = 0; i < 40; i++)
        fprintf(bf, "%s\n", blines[i]);
    fclose(bf);
    char play[1024];
    snprintf(play, sizeof play,
             "data play --games %d --nodes %d --random-plies %d --skip-plies 2 --max-score 2500 --seed 5 --as-run %lld "
             "--hash 16 --threads 2 --quiet --book '%s' --out '%s'",
             2 * PAIRS, NODES, RANDOM_PLIES, (long long)run, bookf, played);
    cr_assert_eq(tune(out, sizeof out, play), 0, "%s", last_message());
    uint8_t *a3;
    size_t n3 = slurp(played, &a3);
    cr_assert(n3 == n2 && memcmp(a2, a3, n2) == 0, "data play wrote %zu bytes, not the run's export (%zu bytes)", n3, n2);
    free(a3);
    free(a1);
    free(a2);

    /* stats and show: the counts, the bytes per position under 40 */
    snprintf(args, sizeof args, "data stats %lld", (long long)run);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", last_message());
    char line[64];
    snprintf(line, sizeof line, "Games: %d ", 2 * PAIRS);
    cr_assert(strstr(out, line), "%s", out);
    snprintf(line, sizeof line, "Positions: %zu ", (n1 - DATA_HEADER_BYTES) / DATA_RECORD_BYTES);
    cr_assert(strstr(out, line), "%s", out);
    cr_assert(strstr(out, "Duplicate positions: "), "%s", out);
    const char *bpp = strstr(out, "Stored: ");
    cr_assert(bpp);
    double per_position = strtod(strstr(bpp, "(") + 1, NULL);
    cr_assert(per_position > 0 && per_position < 40, "%g bytes per position", per_position);
    snprintf(args, sizeof args, "show %lld", (long long)run);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    snprintf(line, sizeof line, "Data: %d games stored", 2 * PAIRS);
    cr_assert(strstr(out, line), "%s", out);
    cr_assert_eq(tune(out, sizeof out, "list"), 0);
    snprintf(line, sizeof line, "%d games stored", 2 * PAIRS);
    cr_assert(strstr(out, line), "%s", out);

    /* a broken record in the database: export fails naming the game, and leaves no file */
    char sql[1024];
    snprintf(sql, sizeof sql,
             "psql -qAt '%s' -c \"UPDATE games SET record = overlay(record PLACING '\\\\xff'::bytea "
             "FROM 4) WHERE run_id = %lld AND game = 7\" >> '%s' 2>&1",
             cu_fx.db, (long long)run, cu_fx.logfile);
    cr_assert_eq(system(sql), 0, "psql failed (log: %s)", cu_fx.logfile);
    snprintf(args, sizeof args, "data export %lld --out '%s'", (long long)run, got);
    cr_assert_eq(tune(out, sizeof out, args), 1);
    cr_assert(strstr(last_message(), "game 7 is broken"), "%s", last_message());
    cr_assert_neq(access(got, F_OK), 0, "a partial export was left");
}

Test(data_run, bad_input_refused)
{
    char out[4096], args[600];
    /* refused before the database is asked */
    static const char *const USAGE[] = {
        "data",
        "data bogus",
        "data new --nodes 300",                                  /* no --games */
        "data new --games 10",                                   /* neither --nodes nor --tc */
        "data new --games 10 --nodes 300 --tc 10+0.1",
        "data new --games 10 --nodes 300 --pairs-per-task 17",
        "data new --games 10 --nodes 300 --random-plies 65",
        "data new --games 10 --nodes 300 --depth 4",
        "data new --games 10 --tc 10+0.1 --depth 4",
        "data new --games 10 --depth 65",
        "data new --games 10 --nodes 300 --max-score -1",
        "data new --games 10 --nodes 300 --params NoSuchParam=3",
        "data new --games 10 --nodes 300 --params /no/such/file",
        "data new --games 10 --nodes 300 --book /no/such/book",
        "data new --games 10 --nodes 300 --out x.data",          /* export's option */
        "data new 3 --games 10 --nodes 300",
        "data export",
        "data export 1",                                         /* no --out */
        "data export x1 --out x.data",
        "data export 1 --out x.data --games 4",
        "data stats",
        "data stats 1 --text",
    };
    for (size_t i = 0; i < sizeof USAGE / sizeof USAGE[0]; i++) {
        cr_assert_eq(tune(out, sizeof out, USAGE[i]), 2, "'%s' not refused with 2", USAGE[i]);
        cr_assert(strstr(last_message(), "error: "), "'%s': no message", USAGE[i]);
    }
    CU_REQUIRE_DB();
    /* not a data run: 2; no such run: 1; nowhere to write: 1 */
    int64_t sprt = cu_sprt(cu_fx.store, "", 2, 10, 300, -5, 5), data = data_run(2);
    snprintf(args, sizeof args, "data export %lld --out '%s/x.data'", (long long)sprt, cu_fx.dir);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    cr_assert(strstr(last_message(), "is not a data run"), "%s", last_message());
    snprintf(args, sizeof args, "data stats %lld", (long long)sprt);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    snprintf(args, sizeof args, "data export 9999 --out '%s/x.data'", cu_fx.dir);
    cr_assert_eq(tune(out, sizeof out, args), 1);
    snprintf(args, sizeof args, "data export %lld --out /no/such/dir/x.data", (long long)data);
    cr_assert_eq(tune(out, sizeof out, args), 1);
    cr_assert(strstr(last_message(), "cannot write"), "%s", last_message());
    /* an empty data run exports a header and no position */
    snprintf(args, sizeof args, "data export %lld --out '%s/empty.data'", (long long)data, cu_fx.dir);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", last_message());
    snprintf(args, sizeof args, "%s/empty.data", cu_fx.dir);
    struct stat st;
    cr_assert_eq(stat(args, &st), 0);
    cr_assert_eq(st.st_size, DATA_HEADER_BYTES);
    /* a good one is created, and shows its settings */
    snprintf(args, sizeof args, "data new --games 7 --nodes 300 --random-plies 3 --keep-check --skip-plies 4");
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", last_message());
    int64_t id = strtoll(out, NULL, 10);
    StoreDataSettings set;
    cr_assert_eq(store_data_settings(cu_fx.store, id, &set), 1);
    cr_assert_eq(set.random_plies, 3);
    cr_assert_eq(set.skip_plies, 4);
    cr_assert(set.keep_check && !set.keep_captures);
    cr_assert_eq(set.max_score, 3000);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, id, &r, false), 1);
    cr_assert_eq(r.max_pairs, 4);
    cr_assert_str_eq(r.kind, "data");
    cr_assert_eq(store_data_settings(cu_fx.store, sprt, &set), 0);
    /* at a fixed depth */
    cr_assert_eq(tune(out, sizeof out, "data new --games 4 --depth 5"), 0, "%s", last_message());
    id = strtoll(out, NULL, 10);
    cr_assert_eq(store_data_settings(cu_fx.store, id, &set), 1);
    cr_assert_eq(set.depth, 5);
    cr_assert_eq(store_load_run(cu_fx.store, id, &r, false), 1);
    cr_assert_eq(r.nodes, 0);
    cr_assert_eq(tune(out, sizeof out, "list"), 0);
    cr_assert(strstr(out, "depth 5"), "%s", out);
}

/* A report's counts: pairs pairs, each a draw and a loss (LD), by checkmate and repetition. */
/* The counts of pairs drawn twice: what records() says (every result a draw; the coordinator checks). */
static StoreCounts dd_counts(int64_t pairs)
{
    StoreCounts c = { .pairs = pairs, .draws = 2 * pairs, .nreasons = GAME_REASONS };
    c.penta[2] = pairs;
    c.reasons[GAME_REPETITION] = 2 * pairs;
    return c;
}

/* The records of n short games, game k with k + 1 moves (told apart when read back). */
static void records(PackBuf *buf, int n)
{
    static const char *const LINE[] = { "h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "b9c7", "b2d2", "a9b9" };
    buf->len = 0;
    for (int k = 0; k < n; k++) {
        GameRecord g;
        game_record_init(&g);
        snprintf(g.fen, sizeof g.fen, "%s", "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1");
        Board b;
        char err[64];
        cr_assert_eq(fen_parse(&b, g.fen, FEN_GAME, err, sizeof err), 0);
        g.moves = calloc(8, sizeof *g.moves);
        g.capacity = 8;
        for (int i = 0; i <= k % 8; i++) {
            Move m;
            cr_assert_eq(move_parse(&b, LINE[i], &m, err, sizeof err), 0);
            g.moves[g.count++] = (GameMove){ .move = m, .has_score = true, .score = 10 * i };
            board_make(&b, m);
        }
        g.result = RESULT_DRAW;
        g.reason = GAME_REPETITION;
        cr_assert_eq(gamepack_append(&g, 0, buf), 0);
        game_record_free(&g);
    }
}

/* One report through the batch; its status. */
static StoreReport report(int64_t worker, const StoreLease *l, int64_t pairs, const PackBuf *games, int ngames)
{
    PackBuf sub = { 0 };
    if (games) {
        size_t off = 0, len;
        const uint8_t *rec;
        for (int k = 0; k < ngames; k++)
            cr_assert_eq(xqf_games_next(games->data, games->len, &off, &rec, &len), 1);
        sub.data = games->data;
        sub.len = off;
    }
    StoreReportItem it = { .worker = worker, .task = l->task_id, .token = l->token, .counts = dd_counts(pairs),
                           .games = sub.data, .games_len = sub.len };
    cr_assert_eq(store_report_batch(cu_fx.store, &it, 1, 60000), 0);
    return it.status;
}

static int64_t stored_games(int64_t run)
{
    StoreGameTotals t;
    cr_assert_eq(store_game_totals(cu_fx.store, run, &t), 0);
    return t.games;
}

/* The plies of each stored game, by index (-1: none). */
static int collect_plies(void *ctx, int64_t game, const uint8_t *rec, size_t len)
{
    int *plies = ctx;
    cr_assert(game >= 0 && game < 16);
    cr_assert(xqf_game_check(rec, len, &plies[game]));
    return 0;
}

Test(data_run, replayed_and_stale_reports_store_games_once)
{
    CU_REQUIRE_DB();
    int64_t run = data_run(5), w1, w2;
    cr_assert_eq(store_hello(cu_fx.store, "w1", "", 1, 1, "", &w1), 1);
    cr_assert_eq(store_hello(cu_fx.store, "w2", "", 1, 1, "", &w2), 1);
    StoreLease l1, l2;
    bool given;
    cr_assert_eq(store_claim_batch(cu_fx.store, run, &w1, 1, 60000, &l1, &given), 1);
    cr_assert_eq(l1.first_pair, 0);
    cr_assert_eq(l1.pairs, PER_TASK);
    PackBuf buf = { 0 };
    records(&buf, 6);
    /* records that are not one per game: invalid, nothing stored */
    cr_assert_eq(report(w1, &l1, 2, &buf, 3), REPORT_INVALID);
    cr_assert_eq(report(w1, &l1, 2, &buf, 5), REPORT_INVALID);
    cr_assert_eq(stored_games(run), 0);
    /* 1 pair, then 2 (cumulative: the first pair's records again), replayed: 4 games */
    cr_assert_eq(report(w1, &l1, 1, &buf, 2), REPORT_ACCEPTED);
    cr_assert_eq(stored_games(run), 2);
    cr_assert_eq(report(w1, &l1, 2, &buf, 4), REPORT_ACCEPTED);
    cr_assert_eq(report(w1, &l1, 2, &buf, 4), REPORT_DUPLICATE);
    cr_assert_eq(report(w1, &l1, 1, &buf, 2), REPORT_INVALID);
    cr_assert_eq(stored_games(run), 4);
    /* another worker's report under w1's lease: stale, nothing stored */
    cr_assert_eq(report(w2, &l1, 3, &buf, 6), REPORT_STALE);
    cr_assert_eq(stored_games(run), 4);
    /* w1 hands the task back after 2 pairs; w2 plays its last pair from game 4 on */
    cr_assert_eq(store_handback(cu_fx.store, w1, l1.task_id, l1.token, "test", false, 5), 1);
    cr_assert_eq(store_claim_batch(cu_fx.store, run, &w2, 1, 60000, &l2, &given), 1);
    cr_assert_eq(l2.task_id, l1.task_id);
    cr_assert_eq(l2.first_pair, 2);
    cr_assert_eq(l2.pairs, 1);
    records(&buf, 2);
    cr_assert_eq(report(w1, &l1, 1, &buf, 2), REPORT_STALE);    /* the old lease, too late */
    cr_assert_eq(report(w2, &l2, 1, &buf, 2), REPORT_ACCEPTED);
    cr_assert_eq(stored_games(run), 6);
    int plies[16];
    memset(plies, -1, sizeof plies);
    cr_assert_eq(store_each_game(cu_fx.store, run, 0, 0, collect_plies, plies), 0);
    /* games 0-3 from w1's first lease (1..4 moves), 4-5 from w2's (1, 2 moves) */
    const int want[6] = { 1, 2, 3, 4, 1, 2 };
    for (int k = 0; k < 6; k++)
        cr_assert_eq(plies[k], want[k], "game %d: %d plies", k, plies[k]);
    cr_assert_eq(plies[6], -1);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_eq(2 * r.counts.pairs, stored_games(run));
    pack_buf_free(&buf);
}

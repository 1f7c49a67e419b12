/*
 * data.c - xqf-tune data export and data stats: a data-generation run's
 * stored games (schemas/formats/games.h) replayed with the run's filter
 * (worker/game/datagen.h's data_extract) into training positions, written as a
 * data file or text, or summed up.  (data new: create.c.)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "datagen.h"
#include "fen.h"
#include "gamepack.h"
#include "run_kind.h"
#include "store_games.h"
#include "store_runs.h"

/* A data run of the database: the run, its filter and the store, for a subcommand. */
typedef struct {
    Store *store;
    StoreRun run;
    DataFilter filter;
} DataRun;

static DataFilter filter_of(const StoreDataSettings *set)
{
    return (DataFilter){ .skip_plies = set->skip_plies, .keep_check = set->keep_check,
                         .keep_captures = set->keep_captures, .max_score = set->max_score };
}

/* Loads run id of d's store, a data run, with its filter. Exit status. */
static int data_load(DataRun *d, int64_t id)
{
    StoreDataSettings set;
    int status = cli_load_run(d->store, id, &d->run);
    if (status != CLI_OK)
        return status;
    if (run_kind_id(d->run.kind) != RUN_KIND_DATA)
        return cli_fail(CLI_USAGE, "run %" PRId64 " is not a data run (its kind is %s)", id, d->run.kind);
    int rc = store_data_settings(d->store, id, &set);
    if (rc != 1)
        return cli_fail(CLI_FAIL, "cannot read the settings of data run %" PRId64, id);
    d->filter = filter_of(&set);
    return CLI_OK;
}

/* Opens the database and loads RUN, a data run. Exit status (*d's store to destroy either way). */
static int data_open(const Opts *o, DataRun *d)
{
    int64_t id;
    memset(d, 0, sizeof *d);
    int status = cli_run_id(o, &id);
    if (status != CLI_OK || (status = cli_open_db(o, &d->store)) != CLI_OK)
        return status;
    return data_load(d, id);
}

/* What a pass over a run's games does with each game and each kept position. */
typedef struct {
    const DataFilter *filter;
    GameRecord game;
    void (*position)(void *ctx, const DataPosition *pos);
    void (*played)(void *ctx, const GameRecord *g);
    void *ctx;
    int64_t games, positions;
    int64_t bad_game;                /* the first broken record's index, or -1 */
    char why[160];
} Pass;

static int pass_game(void *arg, int64_t index, const uint8_t *rec, size_t len)
{
    Pass *p = arg;
    int kept = gamepack_read(rec, len, &p->game, p->why, sizeof p->why) == 0
                   ? data_extract(&p->game, p->filter, p->position, p->ctx)
                   : -1;
    if (kept < 0) {
        if (!p->why[0])
            snprintf(p->why, sizeof p->why, "a move is not legal or the start position does not parse");
        p->bad_game = index;
        return 1;
    }
    p->games++;
    p->positions += kept;
    if (p->played)
        p->played(p->ctx, &p->game);
    return 0;
}

/* Replays every stored game of d's run. Exit status (a broken record: CLI_FAIL naming it). */
static int data_pass(DataRun *d, Pass *p)
{
    p->filter = &d->filter;
    p->bad_game = -1;
    p->why[0] = '\0';
    game_record_init(&p->game);
    int rc = store_each_game(d->store, d->run.id, 0, 0, pass_game, p);
    game_record_free(&p->game);
    if (rc < 0)
        return cli_fail(CLI_FAIL, "cannot read the games of run %" PRId64, d->run.id);
    if (rc > 0)
        return cli_fail(CLI_FAIL, "run %" PRId64 ": game %" PRId64 " is broken: %s", d->run.id, p->bad_game, p->why);
    return CLI_OK;
}

static void count_only(void *ctx, const DataPosition *pos)
{
    (void)ctx;
    (void)pos;
}

int cli_data_progress(Store *s, const StoreRun *r)
{
    DataRun d = { .store = s, .run = *r };
    StoreDataSettings set;
    StoreGameTotals tot;
    Pass p = { .position = count_only };
    if (store_data_settings(s, r->id, &set) != 1 || store_game_totals(s, r->id, &tot) != 0)
        return cli_fail(CLI_FAIL, "cannot read the data of run %" PRId64, r->id);
    d.filter = filter_of(&set);
    int status = data_pass(&d, &p);
    if (status == CLI_OK)
        printf("Data: %" PRId64 " games stored, %" PRId64 " positions kept, %d random plies%s, %.1f bytes per position\n",
               p.games, p.positions, set.random_plies, set.depth > 0 ? ", fixed depth" : "",
               p.positions ? (double)tot.bytes / (double)p.positions : 0.0);
    if (status == CLI_OK && set.depth > 0)
        printf("Depth: %d per move\n", set.depth);
    return status;
}

/* ---- export ------------------------------------------------------------------- */

typedef struct {
    FILE *out;
    bool text;
} Writer;

static void write_position(void *ctx, const DataPosition *pos)
{
    Writer *w = ctx;
    if (!w->text) {
        uint8_t rec[DATA_RECORD_BYTES];
        data_pack(pos, rec);
        fwrite(rec, 1, sizeof rec, w->out);
        return;
    }
    static const char *const RESULT[3] = { "0", "0.5", "1" };
    char fen[FEN_MAX], move[8];
    fen_write(&pos->board, fen);
    move_text(pos->move, move);
    fprintf(w->out, "%s | %d | %s | %s | %d\n", fen, pos->score, move, RESULT[pos->result], pos->ply);
}

/* Writes d's run's kept positions to path (text: as lines). Exit status; *p the counts. */
static int data_write(DataRun *d, const char *path, bool text, Pass *p)
{
    Writer w = { NULL, text };
    *p = (Pass){ .position = write_position, .ctx = &w };
    int status = CLI_OK;
    if (!(w.out = fopen(path, w.text ? "w" : "wb")))
        status = cli_fail(CLI_FAIL, "--out: cannot write '%s': %s", path, strerror(errno));
    if (status == CLI_OK && !w.text && data_write_header(w.out) != 0)
        status = cli_fail(CLI_FAIL, "--out: cannot write '%s'", path);
    if (status == CLI_OK)
        status = data_pass(d, p);
    if (w.out && fclose(w.out) != 0 && status == CLI_OK)
        status = cli_fail(CLI_FAIL, "--out: cannot write '%s': %s", path, strerror(errno));
    if (status != CLI_OK && w.out)
        remove(path);
    if (status == CLI_OK)
        fprintf(stderr, "%s: %" PRId64 " positions of %" PRId64 " games of run %" PRId64 " written to %s\n",
                CLI_PROGRAM, p->positions, p->games, d->run.id, path);
    return status;
}

int cli_data_export(const Opts *o)
{
    const char *path = opts_text(o, "--out");
    if (!path || !*path)
        return cli_fail(CLI_USAGE, "data export: --out FILE is required");
    DataRun d;
    Pass p;
    int status = data_open(o, &d);
    if (status == CLI_OK)
        status = data_write(&d, path, opts_given(o, "--text"), &p);
    store_destroy(&d.store);
    return status;
}

int cli_data_export_run(Store *s, int64_t run, const char *path, int64_t *positions, int64_t *games)
{
    DataRun d = { .store = s };
    Pass p;
    int status = data_load(&d, run);
    if (status == CLI_OK)
        status = data_write(&d, path, false, &p);
    *positions = status == CLI_OK ? p.positions : 0;
    *games = status == CLI_OK ? p.games : 0;
    return status;
}

/* ---- stats -------------------------------------------------------------------- */

/* The score histogram's upper bounds (centipawns, side to move's view); the last bin is open. */
static const int BINS[] = { -1600, -800, -400, -200, -100, -50, -1, 0, 50, 100, 200, 400, 800, 1600 };
enum { NBINS = sizeof BINS / sizeof BINS[0] + 1 };

typedef struct {
    int64_t bins[NBINS];
    int64_t red[3];                  /* games by result, Red's view: loss, draw, win */
    uint64_t *seen;                  /* open addressing over position hashes (0 empty) */
    size_t cap, count;
    int64_t duplicates;
    bool oom;
} Tally;

/* FNV-1a over a position's board and side (a record's first 46 bytes); never 0. */
static uint64_t position_hash(const DataPosition *pos)
{
    uint8_t rec[DATA_RECORD_BYTES];
    data_pack(pos, rec);
    uint64_t h = UINT64_C(1469598103934665603);
    for (int i = 0; i < 46; i++)
        h = (h ^ rec[i]) * UINT64_C(1099511628211);
    return h ? h : 1;
}

/* Adds h to the set; true when it was there already. */
static bool seen_before(Tally *t, uint64_t h)
{
    if (2 * (t->count + 1) > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 1 << 16;
        uint64_t *grown = calloc(cap, sizeof *grown);
        if (!grown) {
            t->oom = true;
            return false;
        }
        for (size_t i = 0; i < t->cap; i++)
            for (size_t j = t->seen[i] & (cap - 1); t->seen[i]; j = (j + 1) & (cap - 1))
                if (!grown[j]) {
                    grown[j] = t->seen[i];
                    break;
                }
        free(t->seen);
        t->seen = grown;
        t->cap = cap;
    }
    size_t j = h & (t->cap - 1);
    for (; t->seen[j]; j = (j + 1) & (t->cap - 1))
        if (t->seen[j] == h)
            return true;
    t->seen[j] = h;
    t->count++;
    return false;
}

static void tally_position(void *ctx, const DataPosition *pos)
{
    Tally *t = ctx;
    int bin = 0;
    while (bin < NBINS - 1 && pos->score > BINS[bin])
        bin++;
    t->bins[bin]++;
    if (!t->oom && seen_before(t, position_hash(pos)))
        t->duplicates++;
}

static void tally_game(void *ctx, const GameRecord *g)
{
    Tally *t = ctx;
    t->red[g->result == RESULT_RED_WINS ? 2 : g->result == RESULT_DRAW ? 1 : 0]++;
}

int cli_data_stats(const Opts *o)
{
    DataRun d;
    Tally t = { 0 };
    Pass p = { .position = tally_position, .played = tally_game, .ctx = &t };
    StoreGameTotals tot;
    int status = data_open(o, &d);
    if (status == CLI_OK && (status = data_pass(&d, &p)) == CLI_OK && store_game_totals(d.store, d.run.id, &tot) != 0)
        status = cli_fail(CLI_FAIL, "cannot read the totals of run %" PRId64, d.run.id);
    if (status == CLI_OK) {
        printf("Run: %" PRId64 " (data) %s\n", d.run.id, d.run.state);
        printf("Games: %" PRId64 " (%" PRId64 " of %" PRId64 " pairs counted)\n", p.games, d.run.counts.pairs,
               d.run.max_pairs);
        printf("Positions: %" PRId64 " (%.1f per game)\n", p.positions, p.games ? (double)p.positions / (double)p.games : 0.0);
        printf("Filter: skip %d plies after the opening, %s checks, %s captures, |score| <= %d\n",
               d.filter.skip_plies, d.filter.keep_check ? "with" : "no", d.filter.keep_captures ? "with" : "no",
               d.filter.max_score);
        printf("Results (Red's view) W/D/L: %" PRId64 "/%" PRId64 "/%" PRId64 "\n", t.red[2], t.red[1], t.red[0]);
        if (t.oom)
            printf("Duplicate positions: unknown (out of memory)\n");
        else
            printf("Duplicate positions: %" PRId64 " (%.2f%%)\n", t.duplicates,
                   p.positions ? 100.0 * (double)t.duplicates / (double)p.positions : 0.0);
        printf("Stored: %" PRId64 " bytes, %" PRId64 " plies (%.1f bytes per position, %.1f per ply)\n", tot.bytes,
               tot.plies, p.positions ? (double)tot.bytes / (double)p.positions : 0.0,
               tot.plies ? (double)tot.bytes / (double)tot.plies : 0.0);
        printf("Scores (side to move, cp):\n");
        int64_t most = 1;
        for (int i = 0; i < NBINS; i++)
            most = t.bins[i] > most ? t.bins[i] : most;
        for (int i = 0; i < NBINS; i++) {
            char range[32];
            if (i == 0)
                snprintf(range, sizeof range, "<= %d", BINS[0]);
            else if (i == NBINS - 1)
                snprintf(range, sizeof range, "> %d", BINS[NBINS - 2]);
            else
                snprintf(range, sizeof range, "%d .. %d", BINS[i - 1] + 1, BINS[i]);
            int bar = (int)(40 * t.bins[i] / most);
            printf("  %-14s %10" PRId64 " %.*s\n", range, t.bins[i], bar, "########################################");
        }
    }
    free(t.seen);
    store_destroy(&d.store);
    return status;
}

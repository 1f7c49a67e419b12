/*
 * texel.c - xqf-tune texel: the evaluation's weights fitted to training
 * positions (xqf-match --data, or a data-generation run's export).
 *
 * Loading: every record is unpacked and checked; positions where the side
 * to move has a capture that wins material by SEE are left out (the fit
 * uses the static evaluation, which is only meaningful in quiet
 * positions).  Each kept position is traced (eval_trace) once, at the
 * start set: its evaluation is then a linear form of the fitted weights,
 * kept sparse, and the other parameters' share is a constant.  The
 * arithmetic (loss, gradient, K, Adam) is stats/texel.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "datagen.h"
#include "eval.h"
#include "movegen.h"
#include "report.h"
#include "see.h"
#include "texel.h"

static const OptSpec TEXEL_OPTIONS[] = {
    { "--out", OPT_TEXT, "FILE", NULL, .help = "the fitted parameter file (every parameter), required" },
    { "--params", OPT_TEXT, "LIST", "all",
      .help = "weights to fit: names, group:material|psqt|mobility|king|combo|tables|kingrel, or all (comma-separated)" },
    { "--start", OPT_TEXT, "FILE", NULL, .help = "parameter file to start from (default: the built-in set)" },
    { "--lambda", OPT_REAL, "X", "0.5", .rmin = 0, .rmax = 1, .help = "weight of the game result against the search score" },
    { "--epochs", OPT_INT, "N", "400", .imin = 1, .imax = 100000, .help = "gradient steps over all positions" },
    { "--rate", OPT_REAL, "CP", "1.0", .rmin = 0.001, .rmax = 100, .help = "Adam's step size in centipawns" },
    { "--threads", OPT_INT, "N", NULL, .imin = 1, .imax = 64, .help = "threads (default: online cores)" },
    { "--limit", OPT_INT, "N", NULL, .imin = 1, .imax = INT64_MAX, .help = "read at most N positions" },
    { "--html", OPT_TEXT, "FILE", NULL, .help = "write the fit's page (loss curve, weights before and after)" },
    { "--quiet", OPT_FLAG, NULL, NULL, .help = "no progress line per epoch" },
    OPTS_END,
};

static const OptTable TEXEL_TABLE = {
    .program = "xqf-tune", .spec = TEXEL_OPTIONS, .max_positional = CLI_DATA_FILES_MAX,
    .usage = "Usage: xqf-tune texel DATA... --out FILE [--params LIST] [--start FILE] [--lambda X]\n"
             "                      [--epochs N] [--rate CP] [--threads N] [--limit N] [--html FILE] [--quiet]\n"
             "Fits the evaluation's weights to training positions (Texel's method): the scale K\n"
             "first, then Adam steps on exact gradients from the evaluation's trace.\n",
};

/* The groups of evaluation weights, by their first and last parameter in the table. */
static const struct {
    const char *name;
    int first, last;
} GROUPS[] = {
    { "material", PARAM_AdvisorMg, PARAM_PawnEg },
    { "psqt", PARAM_PawnCrossedMg, PARAM_KingRaised },
    { "mobility", PARAM_HorseMobility, PARAM_CannonMobility },
    { "king", PARAM_KsEmptyCannon, PARAM_KsMissingElephant },
    { "combo", PARAM_PawnLinked, PARAM_Tempo },
    { "tables", PARAM_PsqKingD0, PARAM_PsqPawnE9 },
    { "kingrel", PARAM_KrHorseF0R0, PARAM_KrCannonF4R5 },
};

/* Marks the weights of list in chosen; "all" marks every evaluation weight. CLI_OK or CLI_USAGE. */
static int choose_params(const char *list, bool *chosen)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", list) >= (int)sizeof buf)
        return cli_fail(CLI_USAGE, "--params: the list is too long");
    char *save = NULL;
    for (char *w = strtok_r(buf, ", ", &save); w; w = strtok_r(NULL, ", ", &save)) {
        bool found = false;
        if (!strcmp(w, "all")) {
            for (int i = GROUPS[0].first; i <= GROUPS[sizeof GROUPS / sizeof GROUPS[0] - 1].last; i++)
                chosen[i] = true;
            found = true;
        } else if (!strncmp(w, "group:", 6)) {
            for (size_t g = 0; g < sizeof GROUPS / sizeof GROUPS[0]; g++)
                if (!strcmp(w + 6, GROUPS[g].name)) {
                    for (int i = GROUPS[g].first; i <= GROUPS[g].last; i++)
                        chosen[i] = true;
                    found = true;
                }
        } else {
            const ParamInfo *info = params_find(w);
            if (info && info - PARAM_INFO >= GROUPS[0].first) {
                chosen[info - PARAM_INFO] = true;
                found = true;
            } else if (info) {
                return cli_fail(CLI_USAGE, "--params: %s is not an evaluation weight", w);
            }
        }
        if (!found)
            return cli_fail(CLI_USAGE, "--params: no parameter or group '%s'", w);
    }
    return CLI_OK;
}

/* The positions, traced, growing as they are read. */
typedef struct {
    size_t n, cap, terms, terms_cap;
    double *fixed;
    uint32_t *start;
    uint16_t *index;
    float *coef, *result, *score;
    int64_t skipped;
} Loaded;

static void loaded_free(Loaded *l)
{
    free(l->fixed);
    free(l->start);
    free(l->index);
    free(l->coef);
    free(l->result);
    free(l->score);
}

/* Resizes *p to n elements; false (p unchanged) when out of memory. */
#define RESIZE(p, n) resize((void **)&(p), (n), sizeof *(p))
static bool resize(void **p, size_t n, size_t size)
{
    void *q = realloc(*p, n * size);
    if (q)
        *p = q;
    return q != NULL;
}

/* Does the side to move have a capture that wins material (SEE > 0)? */
static bool has_winning_capture(Board *b)
{
    MoveList list;
    movegen_legal_captures(b, &list);
    for (int i = 0; i < list.count; i++)
        if (see_ge(b, list.moves[i], 1))
            return true;
    return false;
}

/* Adds one position: traced at the start set, the chosen weights as terms (slot[i]: weight i's index). */
static bool add_position(Loaded *l, DataPosition *pos, const EvalTables *t, const Params *p, const int *slot)
{
    static double coef[PARAM_TOTAL];
    if (l->n + 2 > l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 65536;
        if (!RESIZE(l->fixed, cap) || !RESIZE(l->result, cap) || !RESIZE(l->score, cap) || !RESIZE(l->start, cap + 1))
            return false;
        l->cap = cap;
    }
    int v = eval_trace(&pos->board, t, coef);
    double fixed = v;
    l->start[l->n] = (uint32_t)l->terms;
    for (int i = 0; i < PARAM_TOTAL; i++) {
        if (slot[i] < 0 || coef[i] == 0)
            continue;
        if (l->terms + 1 > l->terms_cap) {
            size_t cap = l->terms_cap ? l->terms_cap * 2 : 1 << 20;
            if (!RESIZE(l->index, cap) || !RESIZE(l->coef, cap))
                return false;
            l->terms_cap = cap;
        }
        l->index[l->terms] = (uint16_t)slot[i];
        l->coef[l->terms] = (float)coef[i];
        l->terms++;
        fixed -= coef[i] * params_value(p, &PARAM_INFO[i]);
    }
    l->fixed[l->n] = fixed;
    l->result[l->n] = (float)(pos->result / 2.0);
    l->score[l->n] = (float)pos->score;
    l->n++;
    l->start[l->n] = (uint32_t)l->terms;
    return true;
}

/* Reads one data file into l. Exit status. */
static int load_file(const char *path, Loaded *l, const EvalTables *t, const Params *p, const int *slot,
                     int64_t limit)
{
    FILE *in = fopen(path, "rbe");
    if (!in)
        return cli_fail(CLI_FAIL, "%s: %s", path, strerror(errno));
    char err[128];
    if (data_read_header(in, err, sizeof err) != 0) {
        fclose(in);
        return cli_fail(CLI_USAGE, "%s: %s", path, err);
    }
    static DataPosition pos;
    uint8_t rec[DATA_RECORD_BYTES];
    int64_t record = 0;
    size_t got;
    int status = CLI_OK;
    while ((limit <= 0 || (int64_t)l->n < limit) && (got = fread(rec, 1, sizeof rec, in)) > 0) {
        record++;
        if (got != sizeof rec) {
            status = cli_fail(CLI_USAGE, "%s: record %" PRId64 " is cut short (%zu of %d bytes)", path, record, got,
                              DATA_RECORD_BYTES);
            break;
        }
        if (data_unpack(rec, &pos) != 0) {
            status = cli_fail(CLI_USAGE, "%s: record %" PRId64 " is not a legal position", path, record);
            break;
        }
        if (board_in_check(&pos.board) || has_winning_capture(&pos.board)) {
            l->skipped++;
            continue;
        }
        if (!add_position(l, &pos, t, p, slot)) {
            status = cli_fail(CLI_FAIL, "out of memory after %zu positions", l->n);
            break;
        }
    }
    if (status == CLI_OK && ferror(in))
        status = cli_fail(CLI_FAIL, "%s: read error", path);
    fclose(in);
    return status;
}

static void on_epoch(void *ctx, int epoch, double loss, double change, double rate)
{
    const bool *quiet = ctx;
    if (!*quiet && (epoch <= 5 || epoch % 20 == 0))
        fprintf(stderr, "epoch %4d  loss %.7f  largest change %.3f cp  %.2f M positions/s\n", epoch, loss, change,
                rate / 1e6);
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Writes the fitted set (every parameter) with a header. Exit status. */
static int write_params(const char *path, const Params *p, double loss0, double loss1, size_t n)
{
    FILE *out = fopen(path, "we");
    if (!out)
        return cli_fail(CLI_FAIL, "--out: cannot write %s: %s", path, strerror(errno));
    fprintf(out, "# xqf-tune texel: %zu positions, loss %.7f -> %.7f\n", n, loss0, loss1);
    bool ok = params_write(p, out) == 0;
    ok = fclose(out) == 0 && ok;
    return ok ? CLI_OK : cli_fail(CLI_FAIL, "--out: write error on %s", path);
}

static int write_html(const char *path, const char *data, const Loaded *l, const xqf_texel_config *cfg,
                      const double *curve, int epochs, const int *chosen, int k, const double *before,
                      const double *after, double seconds)
{
    xqf_report_fit_param *rows = calloc((size_t)k, sizeof *rows);
    if (!rows)
        return cli_fail(CLI_FAIL, "out of memory");
    for (int j = 0; j < k; j++) {
        const ParamInfo *info = &PARAM_INFO[chosen[j]];
        rows[j] = (xqf_report_fit_param){ info->name, before[j], round(after[j]), info->min, info->max };
    }
    xqf_report_fit fit = { data, (int64_t)l->n, l->skipped, cfg->K, cfg->lambda, cfg->rate, seconds,
                           curve, (size_t)epochs + 1, rows, (size_t)k };
    FILE *out = fopen(path, "we");
    int status = out ? CLI_OK : cli_fail(CLI_FAIL, "--html: cannot write %s: %s", path, strerror(errno));
    if (out) {
        bool ok = xqf_report_fit_html(out, &fit) == 0;
        ok = fclose(out) == 0 && ok;
        if (!ok)
            status = cli_fail(CLI_FAIL, "--html: write error on %s", path);
    }
    free(rows);
    return status;
}

int tune_cmd_texel(int argc, char **argv)
{
    Opts o;
    int status = cli_parse(&o, &TEXEL_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO)
        return status;
    if (o.npositional == 0)
        return cli_fail(CLI_USAGE, "texel needs at least one data file");
    if (!opts_given(&o, "--out"))
        return cli_fail(CLI_USAGE, "texel needs --out FILE");
    Params p;
    params_default(&p);
    char err[256];
    if (opts_given(&o, "--start") && params_load(&p, opts_text(&o, "--start"), err, sizeof err) != 0)
        return cli_fail(CLI_USAGE, "--start: %s", err);
    bool chosen_mask[PARAM_TOTAL] = { false };
    if ((status = choose_params(opts_text(&o, "--params"), chosen_mask)) != CLI_OK)
        return status;
    int slot[PARAM_TOTAL], chosen[PARAM_TOTAL], k = 0;
    for (int i = 0; i < PARAM_TOTAL; i++) {
        slot[i] = chosen_mask[i] ? k : -1;
        if (chosen_mask[i])
            chosen[k++] = i;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = opts_given(&o, "--threads") ? (int)opts_int(&o, "--threads") : cores > 0 ? (int)cores : 1;
    bool quiet = opts_given(&o, "--quiet");

    EvalTables tables;
    eval_init(&tables, &p);
    Loaded l = { 0 };
    double t0 = seconds_now();
    char data_text[1024] = "";
    for (int f = 0; f < o.npositional && status == CLI_OK; f++) {
        status = load_file(o.positional[f], &l, &tables, &p, slot,
                           opts_given(&o, "--limit") ? opts_int(&o, "--limit") : 0);
        size_t used = strlen(data_text);
        snprintf(data_text + used, sizeof data_text - used, "%s%s", f ? ", " : "", o.positional[f]);
    }
    if (status == CLI_OK && l.n == 0)
        status = cli_fail(CLI_USAGE, "no quiet position in the data");
    if (status != CLI_OK) {
        loaded_free(&l);
        return status;
    }
    if (!quiet)
        fprintf(stderr, "%zu positions (%" PRId64 " left out: not quiet), %d weights, %zu terms, read in %.1f s\n",
                l.n, l.skipped, k, l.terms, seconds_now() - t0);

    double *theta = calloc((size_t)k + 1, sizeof *theta), *before = calloc((size_t)k + 1, sizeof *before);
    double *lo = calloc((size_t)k + 1, sizeof *lo), *hi = calloc((size_t)k + 1, sizeof *hi);
    int epochs = (int)opts_int(&o, "--epochs");
    double *curve = calloc((size_t)epochs + 1, sizeof *curve);
    if (!theta || !before || !lo || !hi || !curve) {
        status = cli_fail(CLI_FAIL, "out of memory");
    } else {
        for (int j = 0; j < k; j++) {
            const ParamInfo *info = &PARAM_INFO[chosen[j]];
            theta[j] = before[j] = params_value(&p, info);
            lo[j] = info->min;
            hi[j] = info->max;
        }
        xqf_texel_data d = { l.n, (size_t)k, l.fixed, l.start, l.index, l.coef, l.result, l.score };
        xqf_texel_config cfg = { 0, opts_real(&o, "--lambda"), epochs, opts_real(&o, "--rate"), threads, lo, hi,
                                 on_epoch, &quiet };
        cfg.K = xqf_texel_fit_k(&d, theta, threads);
        if (!quiet)
            fprintf(stderr, "K = %.6f per centipawn (results alone: loss %.7f)\n", cfg.K,
                    xqf_texel_loss(&d, theta, cfg.K, 1, threads));
        double t1 = seconds_now();
        if (xqf_texel_fit(&d, &cfg, theta, curve) != 0) {
            status = cli_fail(CLI_FAIL, "the fit failed (out of memory or threads)");
        } else {
            for (int j = 0; j < k; j++)
                params_store(&p, &PARAM_INFO[chosen[j]], (int)lround(theta[j]));
            printf("Positions: %zu\nWeights: %d\nK: %.6f\nLoss: %.7f -> %.7f\n", l.n, k, cfg.K, curve[0],
                   curve[epochs]);
            for (int j = 0; j < k; j++)
                if (lround(theta[j]) != lround(before[j]))
                    printf("%s: %ld -> %ld\n", PARAM_INFO[chosen[j]].name, lround(before[j]), lround(theta[j]));
            status = write_params(opts_text(&o, "--out"), &p, curve[0], curve[epochs], l.n);
            if (status == CLI_OK && opts_given(&o, "--html"))
                status = write_html(opts_text(&o, "--html"), data_text, &l, &cfg, curve, epochs, chosen, k, before,
                                    theta, seconds_now() - t1);
        }
    }
    free(theta);
    free(before);
    free(lo);
    free(hi);
    free(curve);
    loaded_free(&l);
    return status;
}

/*
 * The run report of Xiangqi Forge: one self-contained HTML page (UTF-8,
 * inline CSS, inline SVG charts, no script, no external resource) showing
 * a run's settings, each SPSA parameter's trajectory, the Elo with its 95 %
 * interval over games, the SPRT log-likelihood ratio with its bounds, and
 * a final table.  Behind `xqf-tune report RUN --html FILE`.
 *
 * Pure computation: the caller reads the run (from PostgreSQL) into the
 * model below and passes an open stream; the renderer writes the page to
 * that stream and does no other I/O.  Elo, nElo, LLR and the SPRT bounds
 * are computed here with stats.h from the counts of each progress sample.
 *
 * Every string is borrowed (the caller keeps it alive during the call), is
 * expected to be UTF-8 and may be NULL or "" where it says "optional"; all
 * text taken from the model is HTML-escaped.  Numbers that are not set are
 * NaN (shown as a dash).  The data is not trusted: counts a statistic
 * rejects, NaN values and values outside a chart's limits are skipped or
 * clamped and marked, never asserted on.
 */
#ifndef XQF_TUNER_REPORT_H
#define XQF_TUNER_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "stats.h"

/* GAMES: a fixed number of pairs (no SPRT): its Elo and nElo with their intervals and the LOS. */
typedef enum xqf_report_kind { XQF_REPORT_SPSA, XQF_REPORT_SPRT, XQF_REPORT_GAMES } xqf_report_kind;

/* One point of a parameter's trajectory. */
typedef struct xqf_report_point {
    int64_t games;           /* games played when theta had this value (2 x iterations) */
    double value;            /* theta */
} xqf_report_point;

/* One SPSA parameter (SPRT runs have none). */
typedef struct xqf_report_param {
    const char *name;
    double start, min, max;  /* the run's start value and bounds */
    double c_end, r_end;     /* the SPSA end hints */
    double theta;            /* current value (running) or final value */
    const xqf_report_point *history; /* ascending games; may be NULL when history_count is 0 */
    size_t history_count;
} xqf_report_param;

/*
 * Cumulative results at one point of the run, from the first player's side
 * (SPRT: test against base; SPSA: theta + c flip against theta - c flip).
 * Statistics use the pentanomial counts when any pair is complete, else
 * wins/draws/losses.
 */
typedef struct xqf_report_sample {
    int64_t games;
    int64_t penta[XQF_PENTA_CELLS]; /* LL, LD, DD+WL, WD, WW pairs */
    int64_t wins, draws, losses;
} xqf_report_sample;

/* One worker's part of the run (its trust: games, faults, residual (stats/residual.h), replay audits). */
typedef struct xqf_report_worker {
    const char *name;
    int64_t games, crashes, time_losses, illegal_moves, disconnects;
    int64_t replays, mismatches; /* replay audits judged, and those whose records differed */
    double residual;         /* NAN: not enough pairs for the test */
    bool flagged;
} xqf_report_worker;

typedef struct xqf_report_run {
    int64_t id;
    const char *name;        /* optional */
    xqf_report_kind kind;    /* what the page shows: theta, an SPRT's LLR, or the Elo of fixed games */
    const char *kind_title;  /* optional: the run kind's own name ("data run"), else the kind's */
    const char *state;       /* optional: "active", "finished", "stopped", ... */
    const char *created;     /* optional timestamps as text */
    const char *finished;
    const char *tc;          /* optional time control text, e.g. "10+0.1" */
    int64_t nodes;           /* > 0: fixed nodes per move (shown instead of tc) */
    int threads;             /* search threads of each engine (UCI Threads; <= 1: one) */
    const char *book;        /* optional opening book name */
    int64_t pairs_per_task;  /* game pairs per task */
    int64_t planned_pairs;   /* SPSA: N iterations; SPRT: max pairs (<= 0: none) */
    /* SPRT: normalized Elo bounds, error rates, verdict (optional: running) */
    double elo0, elo1, alpha, beta;
    const char *verdict;
    /* SPSA: schedule exponents and stability constant */
    double spsa_alpha, spsa_gamma, spsa_A;
    const xqf_report_param *params;   /* SPSA; may be NULL when param_count is 0 */
    size_t param_count;
    const xqf_report_sample *samples; /* ascending games; the last one is the total */
    size_t sample_count;
    const xqf_report_worker *workers; /* may be NULL when worker_count is 0 */
    size_t worker_count;
} xqf_report_run;

/*
 * xqf_report_html: writes the report page of run to out.
 * Charts: SPSA - one small chart per parameter (theta over games, start
 * and bounds as reference lines); every run - Elo with its 95 % interval
 * band (Elo beyond +-XQF_REPORT_ELO_LIMIT or infinite is clamped to it and
 * marked); SPRT - the LLR over games with its bounds and the verdict.
 * A chart without data says "no data yet".  Then the final table(s).
 * Returns 0, or -1 when writing to out failed (ferror or fflush).
 * run and out must not be NULL, nor params/samples when their count > 0.
 */
#define XQF_REPORT_ELO_LIMIT 500.0
int xqf_report_html(FILE *out, const xqf_report_run *run);

/* One fitted weight of an evaluation fit (xqf-tune texel). */
typedef struct xqf_report_fit_param {
    const char *name;
    double before, after, min, max;
} xqf_report_fit_param;

/* An evaluation fit: its data, settings, loss curve and weights. */
typedef struct xqf_report_fit {
    const char *data;        /* optional: the data file(s), as text */
    int64_t positions;       /* positions fitted */
    int64_t skipped;         /* positions read but left out (not quiet, ...) */
    double K, lambda, rate, seconds;
    const double *curve;     /* the loss before the first epoch and after each */
    size_t curve_count;
    const xqf_report_fit_param *params;
    size_t param_count;
} xqf_report_fit;

/*
 * xqf_report_fit_html: the page of an evaluation fit: settings, the loss
 * over epochs, a chart per weight group of before and after, and a table.
 * Returns 0, or -1 when writing failed.
 */
int xqf_report_fit_html(FILE *out, const xqf_report_fit *fit);

/* One measured series of a soak (ops/soak): its values at the soak's sample times. */
typedef struct xqf_report_series {
    const char *name;        /* e.g. "resident memory" */
    const char *unit;        /* e.g. "MB" */
    const double *y;         /* one per sample time; NaN: not measured then */
    bool flat_checked;       /* must stay flat after the warm-up: its growth and limit are drawn */
    double growth;           /* flat_checked: the growth after the warm-up (0.03 = 3 %), NaN: none */
} xqf_report_series;

/* A soak: sample times, series, and the verdict lines of its checks. */
typedef struct xqf_report_soak {
    const char *title;       /* e.g. "60 min, 1,000 simulated workers at 2,000 results/s" */
    const char *conditions;  /* optional: the machine's load, settings (text) */
    double warmup_s;         /* growth is measured from here */
    double limit;            /* the growth allowed (0.05) */
    const double *t;         /* seconds since the start, ascending */
    size_t count;
    const xqf_report_series *series;
    size_t series_count;
    const char *const *checks; /* one line per check, "PASS ..." or "FAIL ..." */
    size_t check_count;
    bool passed;
} xqf_report_soak;

/*
 * xqf_report_soak_html: the soak's page: the verdict, each check's line,
 * a chart per series over minutes (flat-checked ones with their level at
 * the end of the warm-up and the limit above it), and a table of each
 * series at the start, after the warm-up and at the end.  Returns 0, or
 * -1 when writing failed.  soak and out must not be NULL, nor t/series/checks
 * when their count > 0.
 */
int xqf_report_soak_html(FILE *out, const xqf_report_soak *soak);

#endif

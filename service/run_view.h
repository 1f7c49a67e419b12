/*
 * run_view.h - what both front ends (xqf-tune, xqf-web) show of a run and
 * do with it, below either: the exit status convention, a run's settings
 * and results as text, its report page (report_page.c), its games as PGN
 * and the purge of a worker's results (run_games.c).
 *
 * One error convention throughout, the run service's: a function that can
 * fail returns a RunStatus (run_service.h: RUN_OK 0; RUN_FAILED 1,
 * something failed: the database, a file; RUN_BAD 2, refused or bad
 * input; the numbers are xqf-tune's exit statuses) with the reason in the
 * caller's buffer; nothing here prints or exits (xqf-tune prints the
 * reason, xqf-web answers with it).  What is done to a run (stop,
 * approve, modify, purge) is run_verbs.h's.
 */
#ifndef XQF_RUN_VIEW_H
#define XQF_RUN_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "params.h"
#include "run_service.h"
#include "stats.h"
#include "store_runs.h"
#include "store_spsa.h"


/* A run's time control as text: "300 nodes", "10+0.1", or with time odds "10+0.1/5+0.05" (first/second). */
void run_tc_text(const StoreRun *r, char *out, size_t size);

/* A setting of run_settings.def as xqf-tune show and the run's page list it. */
typedef struct {
    const char *label;               /* the table's "shown" */
    char text[32];                   /* its value: an INT as an integer, a REAL as %g */
} RunSettingShown;

/* Enough for every line of run_settings.def. */
enum { RUN_SETTINGS_SHOWN_MAX = 32 };

/*
 * The settings of r that run_settings.def marks shown, of the groups kept
 * as columns that r's kind takes (the task group and the adjudication,
 * the SPRT group for a kind with the SPRT), in the table's order, into out (at most
 * RUN_SETTINGS_SHOWN_MAX).  Returns the count.  This can't fail.
 */
int run_settings_shown(const StoreRun *r, RunSettingShown *out);

/*
 * A run's book as text: "default.book, 1500 openings, SHA-256 1a2b3c4d5e6f,
 * |score| 0-60 (mean 23.4)": its name (not escaped), its openings, what
 * was dropped, the SHA-256's first 12 digits and its balance, each part
 * where known (038_run_books.sql).  Returns 0, or -1 when the database
 * cannot be read (out then holds the name).
 */
int run_book_text(Store *s, const StoreRun *r, char *out, size_t size);
/* How long ago a worker last seen still counts as one that could play a run (run_threads_text). */
enum { RUN_WORKERS_RECENT_S = 600 };
/*
 * A run's threads per engine as text, "1" or "2 (a game takes 2 cores of a
 * worker)", and for an active run of more threads than any worker seen in
 * the last RUN_WORKERS_RECENT_S seconds plays games at once, why it gets
 * no games ("; no worker can play it: ...").  Returns 0, or -1 when the
 * workers cannot be read (out then holds the threads only).
 */
int run_threads_text(Store *s, const StoreRun *r, char *out, size_t size);

/*
 * The Elo estimate of the counts, the report's (report/report.c) rule:
 * pentanomial when pairs are complete, else W/D/L.  False when there is
 * none (no games).  xqf-tune show and xqf-web's run page both use it.
 */
bool run_elo_of(const StoreCounts *c, xqf_elo *e);
/* Elo of the counts (run_elo_of) as "12.3 +/- 4.5", or "-". */
void run_elo_text(const StoreCounts *c, char *out, size_t size);
/*
 * The likelihood of superiority of the counts as "97.3 %", or "-": the
 * library's xqf_los (sprt_calc.h) of run_elo_of's estimate, the number
 * xqf-tune show, the HTML report and xqf-web's run page all print.
 */
void run_los_text(const StoreCounts *c, char *out, size_t size);

/* An SPRT's state: the LLR of the counts and the bounds it is judged against. */
typedef struct {
    double llr;                      /* of the pentanomial counts; 0 before the first pair */
    double lower, upper;             /* log(beta / (1 - alpha)), log((1 - beta) / alpha) */
} RunSprtState;

/*
 * Run r's SPRT state from counts c (the run's own or a window of them):
 * false for a kind without an SPRT (run_kinds.def), or when its alpha and
 * beta give no bounds.  The LLR is computed from the counts, not read from
 * the run's stored llr (written by the coordinator at its reports), so
 * xqf-tune show and xqf-web's pages print the same number for the same
 * counts.
 */
bool run_sprt_state(const StoreRun *r, const StoreCounts *c, RunSprtState *out);

/* Stores an SPSA state's theta in p, each rounded to the nearest integer inside its parameter's bounds. */
void run_apply_theta(const StoreSpsa *st, Params *p);

/*
 * Run r's parameters as the engine takes them (xqf-tune export and build,
 * xqf-web's tuned values and GET /runs/ID/export): the engine's defaults,
 * then the test side's set, then an SPSA run's theta (run_apply_theta)
 * into *p.  RUN_OK, or RUN_FAILED with why.
 */
RunStatus run_export_params(Store *s, const StoreRun *r, Params *p, char *why, size_t size);
/* p as a parameter file, headed by the run it came from, to out. RUN_OK, or RUN_FAILED with why. */
RunStatus run_export_write(const StoreRun *r, const Params *p, FILE *out, char *why, size_t size);

/*
 * Writes run r's report page (report/report.h, one self-contained HTML
 * page) to out.  RUN_OK, or RUN_FAILED with why (nothing is printed).
 */
RunStatus run_report_html(Store *s, const StoreRun *r, FILE *out, char *why, size_t size);

/* ---- a run's games (run_games.c): xqf-tune pgn, xqf-web's PGN ---- */

/*
 * Writes run r's stored games as PGN to out (task, worker: only theirs
 * when not 0), at most max_games of them (0: all), *written the games
 * written.  RUN_OK, RUN_BAD when there were more than max_games, or
 * RUN_FAILED; why says what failed.
 */
RunStatus run_pgn_write(Store *s, const StoreRun *r, int64_t task, int64_t worker, int64_t max_games, FILE *out,
                        char *why, size_t size, int64_t *written);
/*
 * The PGN names of run r's two players (the first, test or theta+, and the
 * second): the names of their engines when the sides are two engines (a
 * gauntlet's opponent of another engine, --base-engine), as cutechess-cli
 * names each player by its engine; else their roles ("test", "base").
 */
void run_pgn_players(const StoreRun *r, const char **first, const char **second);

#endif

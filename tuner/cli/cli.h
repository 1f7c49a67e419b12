/*
 * cli.h - what the commands of xqf-tune share: the error convention, the
 * option tables, the database and the run a command works on, and the
 * export of a run's parameter set (export and build).
 *
 * One error convention throughout: a function that can fail returns an
 * exit status (CLI_OK 0; CLI_FAIL 1, something failed: the database, a
 * file, a build; CLI_USAGE 2, bad arguments) after printing one line
 * "xqf-tune: error: ..." on stderr; main exits with what its command
 * returns.
 *
 * A command (tune_cmd_*) takes the arguments after "xqf-tune" (argv[0]
 * is its name) and returns the exit status.  Every command of the run
 * database takes --db CONNINFO (default: $XQF_DB).
 */
#ifndef XQF_TUNE_CLI_H
#define XQF_TUNE_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "opts.h"
#include "params.h"
#include "store.h"

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2, CLI_GO = -1 };

extern const char CLI_PROGRAM[];     /* "xqf-tune" */

/* Prints "xqf-tune: error: <message>" on stderr; returns status. */
int cli_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The --db option of every database command. */
#define CLI_DB_OPTION { "--db", OPT_TEXT, "CONNINFO", NULL, .help = "libpq connection string (default: $XQF_DB)" }

/* Parses a command's options (opts.h). CLI_GO to go on, else the exit status to end with (help: 0). */
int cli_parse(Opts *o, const OptTable *t, int argc, char **argv);
/* Opens the database of --db or $XQF_DB into *out: CLI_OK, CLI_USAGE (none given) or CLI_FAIL (unreachable). */
int cli_open_db(const Opts *o, Store **out);
/* The RUN argument (the first positional): a positive run id. CLI_OK or CLI_USAGE. */
int cli_run_id(const Opts *o, int64_t *id);
/* Loads a run (without its book): CLI_OK, or CLI_FAIL when there is none or it cannot be read. */
int cli_load_run(Store *s, int64_t id, StoreRun *r);

/* A run's time control as text: "300 nodes" or "10+0.1". */
void cli_tc_text(const StoreRun *r, char *out, size_t size);
/* Elo of the counts as "12.3 +/- 4.5", or "-". */
void cli_elo_text(const StoreCounts *c, char *out, size_t size);

/* The set a run's export gives: SPSA the fixed set and theta rounded; SPRT the test set. Exit status. */
int cli_export_set(Store *s, const StoreRun *r, Params *p);
/* Writes an exported set to path (NULL: stdout) with its header line. Exit status. */
int cli_write_export(const StoreRun *r, const Params *p, const char *path);
/* Writes run r's report page (tuner/report.h, one self-contained HTML page) to out. Exit status. */
int cli_report_html(Store *s, const StoreRun *r, FILE *out);

int tune_cmd_stats(int argc, char **argv);
int tune_cmd_spsa(int argc, char **argv);
int tune_cmd_sprt(int argc, char **argv);
int tune_cmd_list(int argc, char **argv);
int tune_cmd_show(int argc, char **argv);
int tune_cmd_stop(int argc, char **argv);
int tune_cmd_export(int argc, char **argv);
int tune_cmd_report(int argc, char **argv);
int tune_cmd_build(int argc, char **argv);
int tune_cmd_texel(int argc, char **argv);
int tune_cmd_user(int argc, char **argv);
int tune_cmd_data(int argc, char **argv);
int tune_cmd_pgn(int argc, char **argv);
int tune_cmd_purge(int argc, char **argv);
/* A run's workers: games, crashes, time losses, illegal moves, disconnects, residual, flags (show). Exit status. */
int cli_show_workers(Store *s, int64_t run);
/* data export and data stats (data.c), their options parsed and checked by tune_cmd_data (create.c). */
int cli_data_export(const Opts *o);
int cli_data_stats(const Opts *o);
/* A data run's games and positions (its filter applied) for show. Exit status. */
int cli_data_progress(Store *s, const StoreRun *r);

#endif

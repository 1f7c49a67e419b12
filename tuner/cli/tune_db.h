/*
 * tune_db.h - the subcommands of xqf-tune that work on the run database
 * (PostgreSQL through the coordinator's store): creating SPSA runs and SPRT
 * tests, listing, showing, stopping, exporting, reporting and building them.
 * Compiled into the xqf-tune program only: the xqf_tuner library stays
 * pure computation.
 *
 * Each handler takes the arguments after `xqf-tune` (argv[0] is the
 * subcommand) and returns the exit status: 0, 1 (database unreachable or
 * an operation failed), 2 (bad arguments, after "xqf-tune: error: ...").
 * Every one takes --db CONNINFO (default: $XQF_DB).
 */
#ifndef XQF_TUNER_TUNE_DB_H
#define XQF_TUNER_TUNE_DB_H

int tune_cmd_spsa(int argc, char **argv);
int tune_cmd_sprt(int argc, char **argv);
int tune_cmd_list(int argc, char **argv);
int tune_cmd_show(int argc, char **argv);
int tune_cmd_stop(int argc, char **argv);
int tune_cmd_export(int argc, char **argv);
int tune_cmd_report(int argc, char **argv);
int tune_cmd_build(int argc, char **argv);

#endif

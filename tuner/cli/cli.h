/*
 * cli.h - what the commands of xqf-tune share: the option tables, the
 * database and the run a command works on, and the export of a run's
 * parameter set (export and build).
 *
 * One error convention throughout, the run service's
 * (service/run_service.h, RunStatus): a function that can fail
 * returns an exit status (CLI_OK, CLI_FAIL, CLI_USAGE: RUN_OK, RUN_FAILED,
 * RUN_BAD under the names of a program's exit) after printing one line
 * "xqf-tune: error: ..." on stderr (cli_fail); main exits with what its
 * command returns.
 *
 * A command (tune_cmd_*) takes the arguments after "xqf-tune" (argv[0]
 * is its name) and returns the exit status.  Every command of the run
 * database takes --db CONNINFO (default: $XQF_DB).
 */
#ifndef XQF_TUNE_CLI_H
#define XQF_TUNE_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine_record.h"
#include "keys.h"
#include "opts.h"
#include "params.h"
#include "run_service.h"
#include "run_verbs.h"
#include "run_view.h"
#include "spsa_spec.h"
#include "stats.h"
#include "store_builds.h"
#include "store_runs.h"
#include "store_spsa.h"

/* The exit statuses: the run service's statuses (a verb's status is the command's exit), and "go on". */
enum { CLI_OK = RUN_OK, CLI_FAIL = RUN_FAILED, CLI_USAGE = RUN_BAD, CLI_GO = -1 };

extern const char CLI_PROGRAM[];     /* "xqf-tune" */

/* Prints "xqf-tune: error: <message>" on stderr; returns status (run_view.h's exit statuses). */
int cli_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The message of the last cli_fail (what a long-running command records, e.g. build --serve). */
const char *cli_last_error(void);

/* The --db option of every database command. */
#define CLI_DB_OPTION { "--db", OPT_TEXT, "CONNINFO", NULL, .help = "libpq connection string (default: $XQF_DB)" }
/* --preset of every new command (cli_parse_preset). */
#define CLI_PRESET_OPTION { "--preset", OPT_TEXT, "NAME", NULL, .help = "the engine's preset of settings (xqf-tune preset list); an option typed overrides it" }

/* Parses a command's options (opts.h). CLI_GO to go on, else the exit status to end with (help: 0). */
int cli_parse(Opts *o, const OptTable *t, int argc, char **argv);
/* Opens the database of --db or $XQF_DB into *out: CLI_OK, CLI_USAGE (none given) or CLI_FAIL (unreachable). */
int cli_open_db(const Opts *o, Store **out);
/*
 * Opens the database for a change only an operator makes (a role that
 * owns the schema, as xqf-tune connects for build, net add and user):
 * else "COMMAND: only an operator DOES: ..." and CLI_USAGE.  Exit status.
 */
int cli_open_operator(const Opts *o, const char *command, const char *does, Store **out);
/* The RUN argument (the first positional): a positive run id. CLI_OK or CLI_USAGE. */
int cli_run_id(const Opts *o, int64_t *id);
/* Loads a run (without its book): CLI_OK, or CLI_FAIL when there is none or it cannot be read. */
int cli_load_run(Store *s, int64_t id, StoreRun *r);

/*
 * Checks the set registered build `build` plays (set_option names the set
 * in the message: "--test") against the parameters the build listed when
 * it was registered (run_rules.h, rule_registered_build_set): a build of
 * another commit may know a parameter this xqf-tune does not, or lack one
 * it has.  build_option names the build's id when there is no such build.
 * A build registered before builds recorded them is checked against this
 * xqf-tune's table, with a warning.  Exit status.
 */
int cli_check_build_set(Store *s, const char *build_option, const char *set_option, const char *set, int64_t build);

/*
 * An SPSA spec's options (params[0..count-1], of engine `engine`) against
 * the options build `build` listed to `uci`: each name must be one of
 * them, its [min, max] within the option's bounds (a value outside would
 * be refused by the engine on every worker).  A build that listed none (a
 * UCCI engine) is not checked, with a warning.  option names the spec in
 * the message ("--spec").  What spsa new --engine checks once its ref is
 * built, and the builder (build --serve) once it builds the ref of an
 * SPSA run made on the web.  Exit status.
 */
int cli_check_build_spsa(Store *s, const char *option, const char *engine, int64_t build,
                         const StoreSpsaParam *params, int count);

/*
 * How an artifact (a build, a net) is signed: with the operator's key
 * (--sign-key FILE), with a signature made elsewhere (--signature HEX),
 * or not at all.  cli_signing_load reads the options (before any long
 * work); cli_signing_apply signs (sha256, name) as kind into signature
 * (or copies --signature), warns when it stays unsigned and prints
 * "Signature: HEX|none".  Exit status.  Both live in net.c.
 */
typedef struct {
    SignKey key;
    bool has_key;
    const char *signature;           /* --signature, or NULL */
} CliSigning;
int cli_signing_load(const Opts *o, CliSigning *sg);
int cli_signing_apply(CliSigning *sg, SignKind kind, const char *sha256, const char *name,
                      char signature[SIGN_SIG_HEX + 1]);
/*
 * A side's net in a new run (option its name, value its text or NULL):
 * an ID, SHA-256 or name of a registered net into *id (an unsigned one with a
 * warning), "none" STORE_NET_NONE (the hand-crafted evaluation), NULL 0
 * (the engine's own).  Exit status (CLI_USAGE: no such net).  In net.c.
 */
int cli_net_arg(Store *s, const char *option, const char *value, int64_t *id);
/*
 * Registers the net file at path (net add): checked by the engine's
 * reader, named name (NULL: xqf-<12 hex>.nnue), with provenance, signed
 * as sg says; its id into *id.  A net registered already is refused, or
 * with reuse taken as it is.  Prints "SHA-256:", "Signature:", "Net:",
 * "Name:".  Exit status (CLI_USAGE: a file the reader refuses, a name
 * taken).  In net.c.
 */
int cli_net_register(Store *s, const char *path, const char *name, const char *provenance, CliSigning *sg,
                     bool reuse, int64_t *id);

/*
 * A registered net to compile into a build (build --net): looked up by ID,
 * SHA-256 or name (cli_net_lookup; option names it in messages; CLI_USAGE
 * when there is none), then its stored bytes written into a private
 * folder (mode 0755, the file 0444: a sandboxed build binds it read-only),
 * checked against their SHA-256 and by the engine's reader
 * (cli_net_write), and the folder removed (cli_net_drop, safe twice).  In
 * net.c.
 */
enum { CLI_PATH_MAX = 4096 };
typedef struct {
    int64_t id;                      /* 0: none */
    char name[STORE_NAME_MAX + 1], sha256[STORE_NAME_MAX + 1];
    char dir[CLI_PATH_MAX], path[CLI_PATH_MAX];   /* "" until written */
} CliNetFile;
int cli_net_lookup(Store *s, const char *option, const char *key, CliNetFile *nf);
int cli_net_write(Store *s, CliNetFile *nf);
void cli_net_drop(CliNetFile *nf);

/*
 * Text someone else chose (a run's or chain's name, a verdict naming a
 * ref, a commit's subject, a net's name and provenance) as a terminal may
 * show it: control characters and bytes that are not UTF-8 escaped
 * (xqf_escape), so that no one's name moves the cursor or retitles the
 * window of whoever runs xqf-tune.  One of 8 rotating buffers: good
 * until the 8th call after.
 */
const char *cli_shown(const char *text);
/* Who acts, for a run's or a record's history: "xqf-tune:" and the login name ($USER; "?" unknown). */
void cli_actor(char *out, size_t size);
/* The actor of a run service's verb (run_verbs.h): cli_actor's name (into name), an admin's rights. */
RunActor cli_run_actor(char *name, size_t size);
/*
 * Stops the first `made` of ids, runs a command made before one of its
 * later runs failed (a gauntlet's, a progression's), through the run
 * service's stop (each in its history), so that nothing is left half-made
 * to run; a run it cannot stop is named with the command to stop it.
 */
void cli_stop_made(Store *s, const int64_t *ids, int made);
/* A verb's outcome said: what was done on stdout (CLI_OK), or "VERB: why" as cli_fail does. Exit status. */
int cli_verb_said(RunStatus status, const char *verb, const RunProblem *problem);

/* The set a run's export gives: SPSA the fixed set and theta rounded; SPRT the test set. Exit status. */
int cli_export_set(Store *s, const StoreRun *r, Params *p);
/* Writes an exported set to path (NULL: stdout) with its header line. Exit status. */
int cli_write_export(const StoreRun *r, const Params *p, const char *path);

/* ---- builds from git (build.c): build --ref, sprt new --test-ref/--base-ref ---- */

enum { CLI_GIT_REF_MAX = 256 };

/* A git ref on its way to a registered build. */
typedef struct {
    char ref[CLI_GIT_REF_MAX];
    char commit[STORE_NAME_MAX + 1], tree[STORE_NAME_MAX + 1];
    char subject[STORE_TEXT_MAX + 1];
    char date[40];                   /* the commit's committer date, ISO 8601 (git's %cI) */
    int64_t want_bench;              /* the commit message's "Bench: N", 0 when it has none */
    int64_t reuse;                   /* a build of the same tree (its id), or 0 */
    int64_t bench;                   /* the bench signature of what was built */
    char binary[CLI_PATH_MAX];       /* what was built, not yet registered */
    char log_tail[1536];             /* a failed build's: the end of its log */
    CliNetFile net;                  /* the net compiled in (build --ref --net), id 0: none */
    const EngineRecord *engine;      /* another engine's record (borrowed; NULL: ours, this project) */
    char repo[CLI_PATH_MAX];         /* where the ref was read: --repo, or the engine's repository fetched */
} CliGitRef;

/*
 * Resolves ref in the repository repo to its commit, checks it is this
 * project (engine/params.def and CMakeLists.txt), reads its tree, subject,
 * date and Bench: line, looks up net (a registered net to compile in, or NULL)
 * and whether a build of its tree with that net exists.  Prints "Commit:
 * HASH SUBJECT", "Tree: HASH" (and "Net: NAME (SHA-256 HEX)").  Exit
 * status: CLI_USAGE for a folder that is not a git repository of the
 * project, an unknown ref or net.
 *
 * With engine (another engine's record, borrowed until the build is
 * registered; NULL: ours), repo is ignored: the ref is read from the
 * record's repository (a folder, read in place; else a URL, mirrored into
 * cache/NAME.git and fetched again each time), nothing checks what the
 * tree holds, no net is taken and a ref is built each time (no reuse).
 */
int cli_git_resolve(Store *s, const char *repo, const char *ref, const char *net, const EngineRecord *engine,
                    const char *cache, CliGitRef *g);
/* An engine's record by name into *e: CLI_USAGE, naming option, when there is none. Exit status. */
int cli_engine_load(Store *s, const char *option, const char *name, EngineRecord *e);

/*
 * Reads an SPSA spec file (spsa_spec.h) for option: its lines into *out
 * (malloc'd, STORE_SPSA_MAX of them at most), each name asked of known
 * (NULL: any).  Returns the count (at least 1), or minus the exit status
 * after cli_fail: the file and its line for any bad input (2).
 */
int cli_read_spsa_spec(const char *option, const char *path, bool (*known)(const char *name, void *ctx), void *ctx,
                       XqfSpsaSpecLine **out);
/*
 * Builds a resolved commit in a clean temporary folder (git archive,
 * Release, the xqf-engine target, jobs in parallel; another engine's by
 * its record: its build command with <out> replaced, or its CMake target,
 * then its bench command with <binary> replaced, nodes and speed read by
 * the record's regexes; with g's net written
 * to a folder bound read-only into the sandbox and compiled in), copies
 * the binary to out/xqf-engine-COMMIT12 (-netSHA12; another engine's
 * out/NAME-COMMIT12) and benches it
 * against the Bench: line (and, with a net, against its bench with
 * EvalFile= the net); a reused build is only checked.  Nothing is
 * recorded.  Exit status: CLI_USAGE when it does not build (its log's
 * tail printed) or the bench is not the commit's.
 */
int cli_git_build(Store *s, CliGitRef *g, const char *out, int64_t jobs);
/* Registers what cli_git_build made (signed with sign_key, a file, or NULL), its id into *id. Exit status. */
int cli_git_register(Store *s, CliGitRef *g, const char *sign_key, int64_t *id);

/*
 * What the commit test changes against base, both of the repository repo
 * (a folder: --repo, or an engine's, a URL's mirror fetched by
 * cli_git_resolve), into *c (store_run_changes_free it): the commits
 * between them (git log base..test, the newest STORE_COMMITS_MAX, with
 * how many there are) and the diff (git diff base test, cut at a line
 * after STORE_DIFF_MAX bytes), every text as PostgreSQL's text takes it
 * (UTF-8, no control byte but the diff's newlines and tabs).  git runs as
 * the other git commands of a build do (argv, no shell, no external diff
 * or text conversion).  Exit status (CLI_FAIL, nothing in *c, when git
 * fails).
 */
int cli_git_changes(const char *repo, const char *test, const char *base, StoreRunChanges *c);
/*
 * Records what the run of two refs of the repository repo changes (its
 * test side: test_ref resolved to test, of tree tree ("" for a test made
 * on the web: its request is pinned to test), whose subject is subject;
 * its base: base_ref, base): cli_git_changes, then store_run_changes_set,
 * the run named by its refs and the test commit's subject when it was
 * named by its refs only.  A failure is said and changes nothing of the
 * run.  Exit status.
 */
int cli_record_changes(Store *s, int64_t run, const char *repo, const char *test_ref, const char *test,
                       const char *tree, const char *subject, const char *base_ref, const char *base);
/* A run's commits between its base and test (and with diff, the diff), for show. Exit status. */
int cli_show_changes(Store *s, int64_t run, bool diff);

/* A run's test and base builds (when it plays builds), with their commits, for show. Exit status. */
int cli_show_builds(Store *s, int64_t run);

/*
 * The settings every new run has from o (create.c): the clock or nodes,
 * the book, pairs per task, name, priority, seed, and with the games'
 * options (--keep-scores in o's table) threads, kept scores and the
 * replay share.  o's table has NEW_RUN_OPTIONS' options.  Exit status.
 */
int cli_new_run_spec(const Opts *o, RunSpec *sp);
/* The run service's status as an exit status, a problem's setting named as its option (--pairs-per-task). */
int cli_run_problem(RunStatus status, const RunProblem *p);
/* A gauntlet (gauntlet.c): one games run per opponent under a shared name; its table. */
int tune_cmd_gauntlet(int argc, char **argv);
/* A progression (progression.c): one games run per commit against one base, grouped; its table. */
int tune_cmd_progression(int argc, char **argv);

int tune_cmd_stats(int argc, char **argv);
/* xqf-tune KIND ... for each kind of run_kinds.def (argv[0] the kind's name): its creation command (create.c). */
int tune_cmd_run_kind(int argc, char **argv);
int tune_cmd_modify(int argc, char **argv);
int tune_cmd_chain(int argc, char **argv);
int tune_cmd_list(int argc, char **argv);
int tune_cmd_log(int argc, char **argv);
int tune_cmd_show(int argc, char **argv);
/* A plain verb of run_verbs.def (stop): argv[0] names it. */
int tune_cmd_plain_verb(int argc, char **argv);
int tune_cmd_approve(int argc, char **argv);
int tune_cmd_export(int argc, char **argv);
int tune_cmd_report(int argc, char **argv);
int tune_cmd_build(int argc, char **argv);
int tune_cmd_texel(int argc, char **argv);
int tune_cmd_nnue(int argc, char **argv);
int tune_cmd_user(int argc, char **argv);
int tune_cmd_pgn(int argc, char **argv);
int tune_cmd_purge(int argc, char **argv);
int tune_cmd_audit(int argc, char **argv);
int tune_cmd_net(int argc, char **argv);
int tune_cmd_engine(int argc, char **argv);
int tune_cmd_preset(int argc, char **argv);
/*
 * --preset NAME of a new command, whose options o were parsed from
 * argv[0..argc) against its table t: the preset of the command's --engine
 * (xqf without one) read, and o parsed again from argv's arguments
 * followed by each of the preset's settings that a run of kind takes
 * (run_presets.h: run_preset_applies), that t has, and that the options
 * typed leave (run_preset_displaced: what is typed overrides the preset).
 * *held is what o then points into (free it after o; NULL without
 * --preset, o left as it was).  An unknown preset is CLI_USAGE, naming the
 * engine's presets.  CLI_GO to go on, else the exit status.
 */
int cli_parse_preset(Opts *o, const OptTable *t, int argc, char **argv, RunKindId kind, char ***held);
/* The same for a command that names its engine otherwise than by --engine (NULL: by --engine, else ours). */
int cli_parse_preset_of(Opts *o, const OptTable *t, int argc, char **argv, RunKindId kind, const char *engine,
                        char ***held);
/* A run's workers: games, crashes, time losses, illegal moves, disconnects, residual, flags (show). Exit status. */
int cli_show_workers(Store *s, int64_t run);
/* data export and data stats RUN (data.c), their options parsed and checked by data's command (create.c). */
int cli_data_export(const Opts *o);
int cli_data_stats(const Opts *o);
/* data play (dataplay.c): a data run's games played here, written to a data file; its own options. Exit status. */
int cli_data_play(int argc, char **argv);
/* Writes data run run's kept positions as a data file (XQFDATA1) to path, *positions and *games. Exit status. */
int cli_data_export_run(Store *s, int64_t run, const char *path, int64_t *positions, int64_t *games);
/* The data files texel and nnue train take (a folder counts as one; data merge makes one of many). */
enum { CLI_DATA_FILES_MAX = 4 };
/*
 * Checks a data input of nnue train (nnue.c): a file with XQFDATA1's header
 * and whole records, or a folder of *.data files, each such a file (at least
 * one); *positions the records in all. Exit status (usage on a bad input,
 * named after what: "DATA", "--with-data").
 */
int cli_data_input_check(const char *what, const char *path, int64_t *positions);
/*
 * data merge and data stats FILE... (datafile.c): data files of any size in
 * memory bounded by --memory, checked and parsed by data's command (create.c).
 */
int cli_data_merge(const Opts *o);
int cli_data_file_stats(const Opts *o);
/* chain show, list, advance and stop (steer.c), their options parsed and checked by tune_cmd_chain (create.c). */
int cli_chain_show(const Opts *o);
int cli_chain_list(const Opts *o);
int cli_chain_advance(const Opts *o);
int cli_chain_stop(const Opts *o);
/*
 * Compiles, benches and records run's tuned engine (build.c) into out,
 * with the registered net net (an ID, SHA-256 or name; NULL: none)
 * compiled in; *build its id. Exit status.
 */
int cli_build_run(Store *s, int64_t run, const char *source, const char *out, const char *sign_key, const char *net,
                  int64_t *build);
/* What show adds for steering (steer.c): time odds, throughput, the SPRT's corrected Elo, LOS, history, chain. */
int cli_show_steer(Store *s, const StoreRun *r);
/* A run's stage in its chain for list ("" when none). */
void cli_chain_tag(Store *s, int64_t run, char *out, size_t size);
/* A data run's games and positions (its filter applied) for show. Exit status. */
int cli_data_progress(Store *s, const StoreRun *r);

#endif

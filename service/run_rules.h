/*
 * run_rules.h - the rules a new run's settings follow, in one place for
 * xqf-tune's new commands (create.c) and xqf-web's forms (web.c),
 * so that both refuse the same bad value with the same message.
 *
 * The bounds of the numbers are option specs (opts.h): xqf-tune's option
 * tables include them, and a form checks its field with opts_value_ok on
 * the same spec (field "elo0" is option "--elo0", '_' for '-').  The rules
 * beyond a range are functions: each returns true for a good value, else
 * false with the message in why (without the option's or field's name,
 * which the caller puts in front: "--tc: ..." or next to the field).
 */
#ifndef XQF_RUN_RULES_H
#define XQF_RUN_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "opts.h"
#include "params.h"
#include "spsa_spec.h"
#include "store_builds.h"
#include "store_spsa.h"

/* ---- the bounds of numbers, as option specs -------------------------------------------- */

/* The settings of run_settings.def: a group's options are RUN_SETTINGS_GROUP(RUN_SETTING_OPTION). */
#include "run_settings.h"

/* A TYPE's option (a PERCENT is a REAL option in percent) and its bounds. */
#define RUN_SETTING_OPT_INT OPT_INT
#define RUN_SETTING_OPT_REAL OPT_REAL
#define RUN_SETTING_OPT_PERCENT OPT_REAL
#define RUN_SETTING_BOUNDS_INT(lo, hi) .imin = (lo), .imax = (hi)
#define RUN_SETTING_BOUNDS_REAL(lo, hi) .rmin = (lo), .rmax = (hi)
#define RUN_SETTING_BOUNDS_PERCENT RUN_SETTING_BOUNDS_REAL
/* The field's value of the option's (a PERCENT's fraction), and back. */
#define RUN_SETTING_FROM_INT(v) (v)
#define RUN_SETTING_FROM_REAL(v) (v)
#define RUN_SETTING_FROM_PERCENT(v) ((v) / 100)
/* One setting's option spec (its default is the number as written), and as an element of an option table. */
#define RUN_SETTING_SPEC(field, TYPE, option, arg, def, lo, hi, help_text, ...)                                  \
    { option, RUN_SETTING_OPT_##TYPE, arg, #def, RUN_SETTING_BOUNDS_##TYPE(lo, hi), .help = help_text }
#define RUN_SETTING_OPTION(...) RUN_SETTING_SPEC(__VA_ARGS__),
/* A text setting's option (no default: absent, its numbers stay 0), an element of an option table. */
#define RUN_TEXT_SETTING_OPTION(name, option, arg, help_text, ...) { option, OPT_TEXT, arg, NULL, .help = help_text },

/*
 * The option spec of a setting of run_settings.def by its RunSpec field
 * ("max_pairs"), for a form that checks one outside its group.  An unknown
 * name is a programmer error (assert).
 */
const OptSpec *run_setting_option(const char *field);

/* Numbers outside the table: their help differs by command, or a front end converts them. */

#define RULE_PAIRS(help_text) { "--pairs", OPT_INT, "N", NULL, .imin = 1, .imax = INT64_C(1) << 40, .help = help_text }
#define RULE_NODES { "--nodes", OPT_INT, "N", NULL, .imin = 1, .imax = INT64_C(1) << 40, .help = "fixed nodes per move" }
#define RULE_REF_NPS { "--ref-nps", OPT_INT, "N", "1000000", .imin = 1000, .imax = INT64_C(1) << 40, .help = "with --tc-scale: the reference speed, nodes/s of xqf-engine bench" }
/* A run's book (run_service.h: its formats, book.h), for every new command; XQF_DEFAULT_BOOK is the program's. */
#define RUN_BOOK_OPTIONS                                                                                       \
    { "--book", OPT_TEXT, "FILE", XQF_DEFAULT_BOOK, .help = "opening book, ours (.book), FEN (.fen), EPD (.epd) or PGN (.pgn)" }, \
    { "--book-format", OPT_TEXT, "FORMAT", NULL, .help = "the book's format whatever its extension (book, fen, epd or pgn)" }, \
    { "--book-plies", OPT_INT, "N", "0", .imin = 0, .imax = 256, .help = "with a PGN book, each game's position after N plies" }

/*
 * The options of the runs that play a test's games (sprt, spsa, games new, gauntlets): each engine's threads
 * and the replay share (run_settings.def's THREADS group), and what the games keep (docs/programs/xqf-tune.md).
 */
#define GAME_OPTIONS                                                                                           \
    RUN_SETTINGS_THREADS(RUN_SETTING_OPTION)                                                                   \
    { "--keep-scores", OPT_FLAG, NULL, NULL, .help = "game records keep each move's score and depth" }

/* A data run's (the "new: " of their help is the data command's subcommand, create.c) */
#define RULE_DATA_GAMES { "--games", OPT_INT, "N", NULL, .imin = 2, .imax = INT64_C(1) << 40, .help = "new: games to play (rounded up to pairs), required" }
#define RULE_DEPTH { "--depth", OPT_INT, "D", NULL, .imin = 1, .imax = XQF_DEPTH_MAX, .help = "new: fixed depth per move (instead of --nodes or --tc)" }
#define RULE_RANDOM_PLIES { "--random-plies", OPT_INT, "N", "8", .imin = 0, .imax = XQF_RANDOM_PLIES_MAX, .help = "new: random plies after the opening" }
#define RULE_SKIP_PLIES { "--skip-plies", OPT_INT, "N", "0", .imin = 0, .imax = 1000, .help = "new: plies kept out after the opening and random plies" }
#define RULE_MAX_SCORE { "--max-score", OPT_INT, "CP", "3000", .imin = 0, .imax = 30000, .help = "new: keep out |score| above CP" }

/* A chain's (the "new: " of their help is the chain command's subcommand, create.c; the web's chain form reads them too) */
#define RULE_SPRT_MAX_PAIRS { "--sprt-max-pairs", OPT_INT, "N", "50000", .imin = 1, .imax = INT64_C(1) << 40, .help = "new: each SPRT's pair cap" }
#define RULE_CHAIN_TRAIN                                                                                       \
    { "--epochs", OPT_INT, "N", "10", .imin = 1, .imax = 100000, .help = "new: the train stage's epochs" },    \
    { "--batch", OPT_INT, "N", "16384", .imin = 1, .imax = 1 << 20, .help = "new: the train stage's batch" },  \
    { "--lambda", OPT_REAL, "X", "0.75", .rmin = 0, .rmax = 1, .help = "new: the train stage's lambda (score against result)" }, \
    { "--lr", OPT_REAL, "X", "0.001", .rmin = 1e-7, .rmax = 1, .help = "new: the train stage's first learning rate" }

/* ---- rules beyond a range ------------------------------------------------------------ */

/*
 * What the games of an SPRT or SPSA run keep (docs/programs/xqf-tune.md).  A result carries
 * its pairs' games, in parts when they outgrow a frame (protocol 7); the
 * caps keep a task's games of 400 plies within one part.
 */
enum { RULE_GAMES_PAIRS_PER_TASK_MAX = 256, RULE_SCORED_PAIRS_PER_TASK_MAX = 128 };

/* A clock "BASE+INC" in seconds (10+0.1) into milliseconds (run_settings.def's clock and odds parse it). */
bool rule_tc(const char *text, int64_t *base_ms, int64_t *inc_ms, char *why, size_t size);
/* A clock as rule_tc reads it, "10+0.1" ("%g" seconds each). This can't fail. */
void rule_tc_text(int64_t base_ms, int64_t inc_ms, char *out, size_t size);
/*
 * A run's threads with its replay share: a game of more than one thread is
 * not reproducible (Lazy SMP's threads race), so such a run has no replay
 * audit (share 0).
 */
bool rule_threads_replay(int64_t threads, double replay_share, char *why, size_t size);
/* An SPRT's bounds: elo0 below elo1. */
bool rule_sprt_bounds(double elo0, double elo1, char *why, size_t size);
/* Pairs per task of a run whose results carry their games (scores: with each move's score). */
bool rule_pairs_per_task(int64_t pairs, bool scores, char *why, size_t size);
/* A run's name (a label): shorter than the store keeps. */
bool rule_name(const char *name, char *why, size_t size);
/* A parameter set "Name=value,..." over the engine's defaults ("" the defaults). */
bool rule_set(const char *set, char *why, size_t size);
/*
 * A parameter set for an engine build: well-formed as a worker sends it to
 * a build (param_set.h: identifiers, integers), each name one of the count
 * parameters the build lists (store.h), each value within its bounds
 * there; build names it in the message ("build 3 (name)").
 */
bool rule_build_set(const char *set, const StoreBuildParam *params, int count, const char *build, char *why,
                    size_t size);
/*
 * The set registered build `build` plays, read from the store (*b, and
 * *listed: whether the build recorded its parameters): by rule_build_set
 * against its list, or by rule_set against the engine's table for a build
 * registered before builds recorded their parameters (018), which is this
 * project's engine at some commit.  Returns 1 when good, 0 with why, -1
 * when the store fails or -2 when there is no such build (why says which).
 */
int rule_registered_build_set(Store *s, int64_t build, const char *set, StoreBuild *b, bool *listed, char *why,
                              size_t size);
/*
 * A git ref's syntax (a branch, tag, hash or rev like main~2): not empty,
 * at most 255 bytes, no leading '-', no blank, control character, "..",
 * ':' or glob characters.  Whether it resolves is the builder's to say.
 */
bool rule_git_ref(const char *ref, char *why, size_t size);
/*
 * The SPSA parameters named in list ("A,B" or "A B"; empty: every one of the
 * engine's table with c_end > 0) from the engine's table, each starting at
 * its value in start, into params (STORE_SPSA_MAX entries), *count them.
 */
bool rule_spsa_params(const char *list, const Params *start, StoreSpsaParam *params, int *count, char *why,
                      size_t size);

/*
 * The parsed lines of an SPSA spec (spsa_spec.h) as the tuned parameters,
 * into params[0..n-1]: for our engine (ours) integer options only, each
 * within its table's bounds, named as the table names it; another
 * engine's may be floats (played as decimals, param_set.h).  False with
 * why naming the option ("Name: ...") otherwise.
 */
bool rule_spsa_spec_lines(const XqfSpsaSpecLine *lines, int n, bool ours, StoreSpsaParam *params, char *why,
                          size_t size);
/*
 * A whole spec text (xqf-tune spsa new --spec's file, a form's textarea):
 * xqf_spsa_spec_parse, for our engine (ours) with each name asked of the
 * engine's table (a bad line named by number: "line 3: ..."), then
 * rule_spsa_spec_lines; another engine's names are checked against its
 * build once built (cli_check_build_spsa).  True with *count parameters;
 * false with why (no parameter named, or out of memory, too).
 */
bool rule_spsa_spec(const char *text, bool ours, StoreSpsaParam *params, int *count, char *why, size_t size);

#endif

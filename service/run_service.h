/*
 * run_service.h - making a run: the one path every front end takes.
 *
 * xqf-tune's new commands (create.c) and xqf-web's New run forms (web.c)
 * each turn what they were given into a RunSpec, then call run_create,
 * which checks the settings beyond their own ranges (run_rules.h), reads
 * the book and writes the run with every setting in one transaction.  The
 * same settings give the same stored run from either front end, and a
 * bad one the same message, because the rules and the writing are here
 * only.  A front end keeps what is its own: parsing its input into
 * numbers (with the option specs of run_rules.h) and, for SPSA, the
 * tuned parameters.  The service never exits and never prints.
 */
#ifndef XQF_RUN_SERVICE_H
#define XQF_RUN_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <stdio.h>

#include "book.h"
#include "engine_record.h"
#include "run_kind.h"
#include "run_settings.h"
#include "store_runs.h"
#include "store_spsa.h"
#include "store_steer.h"

/* A book's openings a run may hold: the store keeps them in the run's row. */
enum { RUN_BOOK_LINES_MAX = 100000 };
/* A data run's results carry their games' records: a small task keeps them small. */
enum { RUN_DATA_PAIRS_PER_TASK_MAX = 16 };

/*
 * Every setting of a new run.  Fields a kind does not take are ignored
 * (run_kinds.def says which: the SPRT bounds for sprt, the SPSA schedule
 * and parameters for spsa, data for data; the base side's set, build, net,
 * ref and clock only for a kind of two sides).  Text is borrowed.
 */
typedef struct {
    RunKindId kind;
    const char *name;                /* a label ("" or NULL: none) */
    /* the first side ("test"; of a kind of one side, the one engine) and the second ("base") */
    const char *test_params, *base_params;   /* "Name=value,..." over the defaults ("" or NULL: the defaults) */
    int64_t test_build, base_build;  /* registered builds (0: the workers' own engine) */
    const char *test_ref, *base_ref; /* git refs the builder compiles before the run starts (NULL: none) */
    const char *engine;              /* the engine its builds and refs are of (engine_record.h; "" or NULL: ours) */
    const char *base_engine;         /* a kind of two sides: the base side's, when another ("" or NULL: engine) */
    int64_t test_net, base_net;      /* nets (0: the engine's own; STORE_NET_NONE: hand-crafted) */
    /* how a game is played */
    int64_t nodes;                   /* > 0: fixed nodes per move, */
    /*
     * or the clock (base_ms, inc_ms: the first side's when the second has
     * its own) and time odds (base1_ms > 0: the second side's own clock),
     * the text settings of run_settings.def
     */
    RUN_TEXT_SETTINGS(RUN_TEXT_SETTING_FIELDS)
    int64_t ref_nps;                 /* > 0: each worker's clock scaled by ref_nps / its speed */
    bool keep_scores;                /* game records keep each move's score and depth */
    /* the openings */
    const char *book;                /* the book's path, read here */
    const char *book_format;         /* "book", "fen", "epd" or "pgn" (book.h); "" or NULL: by its extension */
    int book_plies;                  /* pgn: each game's position after this many plies */
    FILE *book_notes;                /* each bad opening, or what was dropped, a line each (NULL: nowhere) */
    /*
     * the number settings of run_settings.def, each group's (the openings'
     * order seed; pairs_per_task, priority; the SPRT's bounds, max_pairs: sprt's
     * cap, games' pairs, spsa's iterations, data's games / 2; the SPSA schedule;
     * each engine's threads and the replay share, 0-1, < 0 left to the
     * database; the hash and the clock's margin; the adjudication's rules,
     * one record as the store keeps them)
     */
    RUN_SETTINGS_SPRT(RUN_SETTING_FIELD)
    RUN_SETTINGS_SPSA(RUN_SETTING_FIELD)
    RUN_SETTINGS_TASK(RUN_SETTING_FIELD)
    RUN_SETTINGS_THREADS(RUN_SETTING_FIELD)
    RUN_SETTINGS_KEPT(RUN_SETTING_FIELD)
    StoreAdjudication adjudication;
    RUN_SETTINGS_OWN(RUN_SETTING_FIELD)     /* each kind's own (RUN_SETTINGS_KINDS) */
    const StoreSpsaParam *params;    /* spsa: the tuned parameters (count of them) */
    int count;
    StoreDataSettings data;          /* data: random plies, the filter, a fixed depth */
    /* who made it */
    const char *owner;               /* NULL: the column's default (xqf-tune) */
    const char *actor;               /* its "create" line of the events log (NULL: "xqf-tune") */
    bool pending;                    /* waits for an admin's approval */
    const char *preset;              /* the preset of its engine it was made from (run_presets.h; NULL: none),
                                        said by its "create" line */
} RunSpec;

/*
 * The settings every front end starts from: the defaults of xqf-tune's
 * options and of the forms' fields (seed 1, 8 pairs per task, 1 thread,
 * the database's replay share, 100 ms of clock margin kept by the store).
 */
RunSpec run_spec_default(RunKindId kind);

/* Our engine's record (032_engines.sql): a run of it plays the workers' own engine or its builds. */
#define RUN_OUR_ENGINE "xqf"

/* Whether sp names an engine other than ours (its runs play that engine's builds). This can't fail. */
bool run_spec_other_engine(const RunSpec *sp);
/*
 * The engine of sp's side (0 the test side, 1 the base side): the base
 * side's is base_engine when one is given to a kind of two sides, else
 * the run's engine; RUN_OUR_ENGINE for ours.  This can't fail.
 */
const char *run_spec_side_engine(const RunSpec *sp, int side);
/* Whether sp's side plays another engine's builds than ours. This can't fail. */
bool run_spec_side_other(const RunSpec *sp, int side);

/* ---- a run's name when none is given: what it tests, as people name it ---- */

/* A name made for a run is cut to this many bytes ("..." at its end), so that a list shows it whole. */
enum { RUN_NAME_MADE_MAX = 120 };

/*
 * The name of a test of two refs (or of a ref and a build): "test vs
 * base", and ": subject" when the test commit's subject is known ("no-null
 * vs main: Switch off the null move"), cut to RUN_NAME_MADE_MAX at a
 * character.  This can't fail.
 */
void run_refs_name(const char *test, const char *base, const char *subject, char *out, size_t size);

/* A parameter either side of a run of two sets gives, with its default. */
typedef struct {
    char name[64];
    char def[32];                    /* our engine's default ("" when the name is not ours) */
    char test[32], base[32];         /* each side's value ("" when that side leaves the default) */
    bool differs;                    /* the two sides play it differently */
} RunSetChange;

/*
 * The parameters the sets test and base ("Name=value,...") give, in the
 * order they name them (the test's first), into out (at most max).
 * Returns the count.  This can't fail.
 */
int run_set_changes(const char *test, const char *base, RunSetChange *out, int max);
/*
 * The name of a run of two sets by the values in which they differ:
 * "NullMoveR=3 vs default", "LmrBase=80,LmrDiv=200 vs LmrBase=75"; ""
 * when they do not differ.  Cut as run_refs_name's.  This can't fail.
 */
void run_sets_name(const char *test, const char *base, char *out, size_t size);

/* Why a run was not made: the setting (a form's field name, "pairs_per_task") and the reason. */
typedef struct {
    char field[32];
    char why[512];
} RunProblem;

/*
 * The outcome of every function of the service (this file's, run_verbs.h's,
 * run_view.h's), numbered as xqf-tune's exit statuses (cli.h's CLI_OK,
 * CLI_FAIL, CLI_USAGE are these), so that a number means one thing on
 * both sides of the service.
 */
typedef enum {
    RUN_OK = 0,
    RUN_FAILED = 1,                  /* the database failed (or memory ran out): nothing was written */
    RUN_BAD = 2,                     /* a setting breaks a rule: *problem says which; nothing was written */
} RunStatus;

/* A run's book read with the worker's reader (book.h), each opening as a line for the store. */
typedef struct {
    Book *book;
    char **lines;
    int count;
    const char *name;                /* the file's name, without its folder */
    StoreRunBook facts;              /* its format, SHA-256, duplicates dropped, balance */
} RunBook;

/*
 * Reads the book of sp (its path, format and plies: book_import) into *rb
 * (empty on failure), each bad opening and what was dropped written to
 * sp->book_notes: RUN_BAD with the problem of field "book" when it cannot
 * be read, holds a bad opening or more than RUN_BOOK_LINES_MAX openings,
 * or the format is unknown; RUN_FAILED when out of memory.
 */
RunStatus run_book_read(const RunSpec *sp, RunBook *rb, RunProblem *problem);
/* Frees a book of run_book_read (safe twice). This function can't fail. */
void run_book_free(RunBook *rb);

/*
 * The rules of a spec that need no database: its name, the clock (exactly
 * one of nodes and a clock, or a data run's fixed depth; odds and scaling
 * with a clock only), pairs per task by what a task's result carries,
 * threads against the replay audit, the SPRT bounds, the two sides not one
 * build, an SPSA run's parameters, another engine's run playing its builds
 * on both sides (a kind of two sides only).  RUN_OK or RUN_BAD with *problem.
 */
RunStatus run_check(const RunSpec *spec, RunProblem *problem);
/* Every problem run_check finds, the first max of them into out: how many there are (0: none). */
int run_problems(const RunSpec *spec, RunProblem *out, int max);

/*
 * run_check, the book read into *rb and the store's spec of the run into
 * *st (its book's lines borrowed from *rb: free it after): what a chain
 * writes as its first run with its stages (store_steer.h).  RUN_OK, or
 * RUN_BAD / RUN_FAILED with *problem and *rb empty.
 */
RunStatus run_prepare(const RunSpec *spec, RunBook *rb, StoreSprtSpec *st, RunProblem *problem);

/*
 * Another engine's record e against the nets of sp's sides that play it
 * (test_net, and base_net for a kind of two sides): a net is sent to the engine as its
 * record's net option, so an engine without one takes no net, and "none"
 * (our hand-crafted evaluation) is no other engine's; an engine that
 * needs a net (needs_net) plays none without one on each side.  RUN_OK,
 * or RUN_BAD with *problem ("test_net", "base_net").
 */
RunStatus run_engine_nets(const EngineRecord *e, const RunSpec *sp, RunProblem *problem);

/*
 * Makes the run: run_check, the book read, then in one transaction the
 * run's row with every setting (time odds, clock scaling, kept scores and
 * replay share included: xqf_create_run, 031; its engine, 035, its nets
 * checked against the engine's record by run_engine_nets; the base side's
 * engine, 041, likewise), an SPSA run's parameters, its owner and approval
 * state, and the builds it waits for (its refs).  An engine that has no
 * record is RUN_BAD ("engine", "base_engine").  Returns RUN_OK with *id, RUN_BAD with
 * *problem, or RUN_FAILED (problem's field "" and why).
 */
RunStatus run_create(Store *s, const RunSpec *spec, int64_t *id, RunProblem *problem);

/*
 * A chain's stages after its first run: an SPSA run's builds and SPRTs of
 * the tuned set, or a data run's training (with the stage that registers
 * its net) and SPRTs of the new net.
 */
typedef struct {
    const char *name;
    int64_t base_build;              /* an SPSA chain's SPRTs' base side plays this build (0: the workers' engine) */
    int64_t base_net;                /* a net chain's SPRTs' base net (0: the engine's own, STORE_NET_NONE: none) */
    StoreChainStage stages[STORE_CHAIN_STAGES - 1];
    int count;
} RunChainSpec;

/*
 * Appends a stage of kind (CHAIN_BUILD, CHAIN_SPRT or CHAIN_TRAIN, which
 * brings the CHAIN_NET that registers its net) to c; an SPRT's text is
 * "ELO0,ELO1,TC", TC a clock (10+0.1) or nodes (5000n), with max_pairs;
 * a training's settings from train.  RUN_OK, or RUN_BAD with *problem
 * (the field "then_build", "then_train" or "then_sprt").
 */
RunStatus run_chain_stage(RunChainSpec *c, StoreChainKind kind, const char *sprt, int64_t max_pairs,
                          const StoreChainStage *train, RunProblem *problem);

/*
 * Makes a chain: its first run (an SPSA or a data run, checked as
 * run_create checks a run, its book read) and its stages, in one
 * transaction; the rules of the stages' order (a build or a training
 * before the SPRTs it feeds, at least one SPRT, a data run's training),
 * and the SPSA chain's base build against the start set the SPRTs' base
 * plays.  RUN_OK with *id, RUN_BAD with *problem, RUN_FAILED.
 */
RunStatus run_chain_create(Store *s, const RunSpec *first, const RunChainSpec *chain, int64_t *id,
                           RunProblem *problem);

/* The set an SPSA chain's SPRTs' base side plays: the fixed set and the tuned parameters at their start. Malloc'd or NULL. */
char *run_chain_start_set(const RunSpec *spsa);

#endif

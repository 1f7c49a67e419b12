/*
 * store_runs.h - runs: SPRT tests, fixed-games runs and data runs created
 * with their settings and books (the kinds of run_kind.h), read as the
 * coordinator schedules and reports them, their LLR and end recorded, and
 * their progress.
 */
#ifndef XQF_STORE_RUNS_H
#define XQF_STORE_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run_kind.h"
#include "run_settings.h"
#include "store.h"

/*
 * How a run's games are adjudicated (worker/game/game.h's Adjudication; 0
 * turns a rule off): run_settings.def's ADJUDICATION group, a member each
 * named as its column (resign_moves, resign_score, draw_after, draw_moves,
 * draw_score, max_plies).
 */
typedef struct {
    RUN_SETTINGS_ADJUDICATION(RUN_SETTING_COLUMN)
} StoreAdjudication;

/* The settings of a run created without its own: the table's defaults. */
#define STORE_ADJUDICATION_DEFAULT_MEMBER(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, \
                                          form_help, store, ctype, shown)                                          \
    .store = def,
#define STORE_ADJUDICATION_DEFAULT \
    ((StoreAdjudication){ RUN_SETTINGS_ADJUDICATION(STORE_ADJUDICATION_DEFAULT_MEMBER) })

/*
 * What a run's book was (038_run_books.sql): the file, its format, the
 * positions it repeated, and its balance where its lines carried scores.
 */
typedef struct {
    char format[8];                  /* "book", "fen", "epd", "pgn"; "" when not recorded */
    char sha256[65];                 /* of the file ("" when not recorded) */
    int openings;                    /* the run's openings (its book's lines) */
    int duplicates;                  /* repeated positions the file had, dropped */
    int plies;                       /* pgn: each game's position after this many plies */
    int scored;                      /* openings whose line carried an engine score */
    int score_min, score_max;        /* the range of their |score| (centipawns) */
    double score_mean;               /* their mean |score| */
} StoreRunBook;

/* An SPRT test of a first player ("test") against a second ("base"). */
typedef struct {
    const char *name;                /* a label, may be "" */
    const char *test_params, *base_params;  /* "Name=value,..." over the defaults */
    const char *build_id;            /* workers must report this ("" or NULL: any) */
    const char *book_name;           /* where the book came from (informative) */
    const char *const *book;         /* opening lines (FEN [moves ...]) */
    int book_lines;
    const StoreRunBook *book_facts;  /* written beside the run when given (its openings: book_lines) */
    int64_t nodes;                   /* > 0: fixed nodes per move; else the clock */
    /* the clock, and time odds: the second player's own clock (0: the first's; 015) */
    RUN_TEXT_SETTINGS(RUN_TEXT_SETTING_FIELDS)
    const StoreAdjudication *adjudication; /* NULL: STORE_ADJUDICATION_DEFAULT */
    /*
     * the settings kept as columns (run_settings.def: seed, the opening order;
     * max_pairs, stop with verdict "max pairs" there; the SPRT's normalized
     * Elo bounds and error rates, NaN for a kind without them: NULL; each
     * engine's threads, 0: 1; the replay share when replay_share_given,
     * else 1 %, none for several threads; the hash, 0: 16; the margin)
     */
    RUN_SETTINGS_COLUMNS(RUN_SETTING_SPEC_COLUMN)
    int64_t test_build, base_build;  /* engine builds (ids) the two play, 0: the built-in engine */
    int64_t test_net, base_net;      /* nets (ids) the two evaluate with (025_nets.sql); 0: the engine's
                                        own evaluation, STORE_NET_NONE: the hand-crafted one */
    int64_t ref_nps;                 /* > 0: the clock scaled by ref_nps / each worker's speed (013) */
    bool game_scores;                /* game records keep each move's score and depth (014) */
    const char *engine;              /* the engine its builds are of (035): a record's name; "" or NULL: ours, xqf */
    const char *base_engine;         /* the base side's, when another (041); "" or NULL: the engine */
    const char *owner;               /* the account that made it (the dashboard's); "" or NULL: xqf-tune's */
    bool pending;                    /* waits for an admin's approval (xqf_approve) before it is played */
} StoreSprtSpec;

/* A side's net: the hand-crafted evaluation (UseNNUE false), whatever net the engine holds. */
enum { STORE_NET_NONE = -1 };

/*
 * Creates a run of kind with the spec's settings: the one insert every
 * kind's creation goes through (a kind with no settings of its own calls
 * it directly; store_create_data and store_spsa.h's add theirs).  A kind
 * of one side (run_kinds.def) plays the test side's set, build and net on
 * both; SPRT bounds only for SPRT; settings is the kind's JSON object.
 * Returns 0 with *id, or -1.
 */
int store_create_run(Store *s, const RunKind *kind, const StoreSprtSpec *sp, const char *settings, int64_t *id);

/*
 * Tests' and tools' short ways to a run (the programs go through the run
 * service): an SPRT run (state active; coordinators are notified), and a
 * fixed-games run (kind "games": the spec's max_pairs pairs of the test
 * side against the base, no SPRT; its bounds are ignored).  Return 0 with
 * *id, or -1.
 */
int store_create_sprt(Store *s, const StoreSprtSpec *spec, int64_t *id);
int store_create_games(Store *s, const StoreSprtSpec *sp, int64_t *id);


/* A run's cumulative counts each time they grew (003's run_progress), oldest first. */
typedef struct {
    StoreCounts counts;              /* pairs, wins, draws, losses, penta (no reasons) */
    double age_s;                    /* seconds after the run's creation */
} StoreProgress;

/* Returns the count or -1; *out malloc'd. */
int store_run_progress(Store *s, int64_t run, StoreProgress **out);

/* The two sets a run plays (SPRT: test and base; SPSA: the fixed set twice). Returns 1, 0 or -1. */
int store_run_sets(Store *s, int64_t run, char *params0, char *params1, size_t size);

/* A run as the coordinator schedules and reports it. */
typedef struct {
    int64_t id;
    char kind[8];                    /* sprt, spsa */
    char state[16];
    char name[STORE_TEXT_MAX];
    char build_id[STORE_NAME_MAX + 1];
    char name0[STORE_NAME_MAX + 1], name1[STORE_NAME_MAX + 1];
    int64_t nodes;
    RUN_TEXT_SETTINGS(RUN_TEXT_SETTING_FIELDS)   /* the clock, time odds (base1_ms 0: none) */
    StoreAdjudication adjudication;
    /*
     * the settings of run_settings.def kept as columns; the SPRT's bounds
     * NaN when not set; threads, each engine's: a worker needs this concurrency
     */
    RUN_SETTINGS_COLUMNS(RUN_SETTING_COLUMN)
    int64_t next_pair;
    double llr;                      /* NaN when not computed */
    char verdict[64];
    StoreCounts counts;
    int64_t leased;                  /* tasks under a lease now */
    int64_t iter;                    /* SPSA: game pairs applied to theta */
    char book_name[256];
    char created[32], finished[32];  /* "YYYY-MM-DD HH:MM:SS" (UTC), finished "" while running */
    double elapsed_s;                /* from creation to the end (or now) */
    char build0[STORE_NAME_MAX + 1]; /* SHA-256 of the engine build name0 plays ("" built-in) */
    char build1[STORE_NAME_MAX + 1]; /* name1's */
    int64_t quarantined;             /* tasks set aside, refused too often (010_bounds.sql) */
    int throughput;                  /* share among runs of its priority, percent (015_steer.sql) */
    char net0[STORE_NAME_MAX + 1];   /* SHA-256 of the net name0 evaluates with, "none" (hand-crafted)
                                        or "" (the engine's own evaluation) */
    char net1[STORE_NAME_MAX + 1];   /* name1's */
    char net_name0[STORE_NAME_MAX + 1], net_name1[STORE_NAME_MAX + 1]; /* their names ("none", "") */
    char engine[STORE_NAME_MAX + 1]; /* the engine its builds are of (035_engine_runs.sql; "xqf": ours) */
    char base_engine[STORE_NAME_MAX + 1]; /* the base side's (name1's; 041): engine unless another */
    char **book;                     /* store_load_run only; free with store_run_free */
    int book_lines;
} StoreRun;

/* Runs in state 'active', highest priority first (no books). Returns the count or -1; *out malloc'd. */
int store_active_runs(Store *s, StoreRun **out);
/* The newest runs, at most max, any state (no books). Returns the count or -1; *out malloc'd. */
int store_list_runs(Store *s, int max, StoreRun **out);
/* The runs of kind whose names start with prefix, oldest first (no books): a gauntlet's. Count or -1; *out malloc'd. */
int store_prefixed_runs(Store *s, const char *kind, const char *prefix, StoreRun **out);
/*
 * What run_id's book was: *out with its openings, and the rest when the run
 * was made with them (format "" otherwise).  Returns 1, 0 (no such run) or -1.
 */
int store_run_book(Store *s, int64_t run_id, StoreRunBook *out);
/* One run, with its book or not. Returns 1, 0 (no such run) or -1. */
int store_load_run(Store *s, int64_t id, StoreRun *out, bool with_book);
void store_run_free(StoreRun *r);
/* Records the LLR; with a verdict also ends the run (state "finished"). Returns 0 or -1. */
int store_update_sprt(Store *s, int64_t run, double llr, const char *verdict);

/* What a data run plays and keeps (in runs.settings). */
typedef struct {
    int random_plies;                /* random plies after the opening */
    int skip_plies;                  /* the filter (worker/game/datagen.h's DataFilter) */
    bool keep_check, keep_captures;
    int max_score;
    int depth;                       /* > 0: a fixed depth per move (the run's nodes and clock 0) */
} StoreDataSettings;

/*
 * A data run: `run` gives what is played (test_params the set both sides
 * play, test_build its build or 0, test_net their net; base_*, the SPRT
 * fields ignored; max_pairs = games / 2).
 */
typedef struct {
    StoreSprtSpec run;
    StoreDataSettings settings;
} StoreDataSpec;

/* Creates a data run. Returns 0 with *id, or -1. */
int store_create_data(Store *s, const StoreDataSpec *spec, int64_t *id);
/* A data run's settings. Returns 1, 0 (no such data run) or -1. */
int store_data_settings(Store *s, int64_t run, StoreDataSettings *out);

#endif

/*
 * store_spsa.h - SPSA runs (schemas/sql/migrations/003_spsa.sql): a run of
 * store_runs.h whose tasks carry perturbations of the tuned parameters
 * and whose results move theta (stats/spsa.h applies the updates).
 */
#ifndef XQF_STORE_SPSA_H
#define XQF_STORE_SPSA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "run_settings.h"
#include "store_runs.h"

enum { STORE_SPSA_MAX = 512 };       /* = XQF_SPSA_MAX_PARAMS */

/* One tuned parameter: its bounds, SPSA end hints and current theta (real). */
typedef struct {
    char name[STORE_NAME_MAX + 1];
    double start, min, max, c_end, r_end;
    double theta;
    bool is_float;                   /* played as a decimal (an SPSA spec's float line; settings' "floats") */
} StoreSpsaParam;

/*
 * An SPSA run: `run` gives what is played (test_params = the fixed set
 * both engines play under the tuned values, "" for the defaults;
 * base_params, base_net, build_id and the SPRT fields are ignored: test_net
 * is both sides' net), max_pairs = N
 * iterations; A = a_ratio * N.  The params' theta is ignored (start is used).
 */
typedef struct {
    StoreSprtSpec run;
    RUN_SETTINGS_SPSA(RUN_SETTING_COLUMN)   /* the schedule: alpha, gamma, a_ratio (run_settings.def) */
    const StoreSpsaParam *params;
    int count;
} StoreSpsaSpec;

/* Creates an SPSA run and its parameters in one transaction. Returns 0 with *id, or -1. */
int store_create_spsa(Store *s, const StoreSpsaSpec *spec, int64_t *id);

/* The state of an SPSA run. */
typedef struct {
    RUN_SETTINGS_SPSA(RUN_SETTING_COLUMN)   /* the schedule, as created */
    int64_t iter;                    /* game pairs applied */
    int64_t iterations;              /* N (the run's max_pairs) */
    int64_t next_pair;
    uint64_t seed;
    char fixed[STORE_PARAMS_MAX + 1]; /* the fixed set under the tuned values */
    int count;
    StoreSpsaParam params[STORE_SPSA_MAX];
} StoreSpsa;

/* Loads an SPSA run's state. Returns 1, 0 (no such SPSA run) or -1. */
int store_spsa_load(Store *s, int64_t run, StoreSpsa *out);

/* A task's perturbation (as 003_spsa.sql records it) and its final counts. */
typedef struct {
    int64_t k;
    int count;
    int flip[STORE_SPSA_MAX];
    double c_k[STORE_SPSA_MAX], R_k[STORE_SPSA_MAX];
    int64_t pairs, wins, losses;
} StoreSpsaTask;

/* Reads a task's perturbation and counts. Returns 1, 0 (no such task or no perturbation) or -1. */
int store_spsa_task(Store *s, int64_t task, StoreSpsaTask *out);
/*
 * Marks a done task's update as applied.  Returns 1 the first time (the
 * caller then applies it, in the same transaction), 0 afterwards, -1 on error.
 */
int store_spsa_claim_update(Store *s, int64_t task);
/* Writes theta (count values, in parameter order) and iter, and appends them to the history. 0/-1. */
int store_spsa_save(Store *s, int64_t run, const double *theta, int count, int64_t iter);

/* One row of the theta history: the value of parameter idx after `iteration` pairs. */
typedef struct {
    int64_t iteration;
    int idx;
    double theta;
} StoreHistoryRow;

/* A run's theta history by iteration then idx. Returns the count or -1; *out malloc'd. */
int store_spsa_history(Store *s, int64_t run, StoreHistoryRow **out);

#endif

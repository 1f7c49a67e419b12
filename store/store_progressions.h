/*
 * store_progressions.h - progressions (schemas/sql/migrations/069_progressions.sql):
 * an engine's chosen commits, each the test side of one fixed-games run
 * against one base commit, as Fishtest's regression tests measure main
 * over time.  The record groups the runs and keeps what git said of each
 * commit when the progression was made (hash, date, subject); the results
 * are the runs' own, read with them.  Beyond the store's own contract
 * (store.h), with the same conventions (parameters passed separately,
 * every result checked and cleared, -1 on a database error after logging
 * it).
 */
#ifndef XQF_STORE_PROGRESSIONS_H
#define XQF_STORE_PROGRESSIONS_H

#include <stdint.h>

#include "store.h"

/* A git ref as the builder takes it (build_requests.ref), and a commit's hex name (SHA-1 or SHA-256). */
enum { STORE_PROGRESSION_REF_MAX = 255, STORE_COMMIT_HEX_MAX = 64 };

typedef struct {
    int64_t id;
    char name[STORE_TEXT_MAX + 1];
    char engine[STORE_NAME_MAX + 1];
    char base_ref[STORE_PROGRESSION_REF_MAX + 1];
    char base_commit[STORE_COMMIT_HEX_MAX + 1];  /* "": not pinned yet (made on the dashboard) */
    char base_date[40];              /* written: ISO 8601 as git prints it; read: "YYYY-MM-DD HH:MM" UTC; "": unknown */
    int64_t base_epoch;              /* read: the base commit's date in seconds since 1970 (0: unknown) */
    char base_subject[STORE_TEXT_MAX + 1];
    char created_by[STORE_NAME_MAX + 1];
    char created_at[32];             /* read: "YYYY-MM-DD HH:MM" UTC */
} StoreProgression;

/* One commit of a progression and its run. */
typedef struct {
    int64_t run;
    char ref[STORE_PROGRESSION_REF_MAX + 1];
    char commit[STORE_COMMIT_HEX_MAX + 1];  /* "": not pinned yet (made on the dashboard) */
    char date[40];                   /* written: ISO 8601 as git prints it; read: "YYYY-MM-DD HH:MM" UTC; "": unknown */
    int64_t epoch;                   /* read: the commit's date in seconds since 1970 (0: unknown) */
    char subject[STORE_TEXT_MAX + 1];
    char state[16];                  /* read: its run's */
    StoreCounts counts;              /* read: its run's results (the test side's view) */
} StoreProgressionPoint;

/*
 * Records progression p (its name, engine and base) with its n points,
 * each naming the run made for it, in one statement (xqf_progression_add,
 * which the dashboard's role may call); a commit and date not known yet
 * (the dashboard's: its refs are the builder's to read) are "".  *id its
 * id.  1, 0 (a progression of that name exists) or -1.
 */
int store_progression_add(Store *s, const StoreProgression *p, const StoreProgressionPoint *points, int n,
                          int64_t *id);
/*
 * What the builder read of run's side ("test" or "base") when it pinned
 * its ref: the commit, its date (ISO 8601) and subject, written where the
 * progression of run does not know them yet (xqf_progression_pin); a run
 * of no progression changes nothing.  0 or -1.
 */
int store_progression_pin(Store *s, int64_t run, const char *side, const char *commit, const char *date,
                          const char *subject);
/* The id of the progression named name, or of the one run belongs to (run > 0). 1, 0 (none) or -1. */
int store_progression_find(Store *s, const char *name, int64_t run, int64_t *id);
/*
 * Progression id into *p and its points, oldest commit first, with their
 * runs' state and results, into *points (malloc'd, NULL when none; *n
 * their count).  1, 0 (no such progression) or -1.
 */
int store_progression_load(Store *s, int64_t id, StoreProgression *p, StoreProgressionPoint **points, int *n);

#endif

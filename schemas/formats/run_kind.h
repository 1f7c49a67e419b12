/*
 * run_kind.h - the kinds of run (run_kinds.def) as a table.
 */
#ifndef XQF_RUN_KIND_H
#define XQF_RUN_KIND_H

#include <stdbool.h>

typedef enum {
#define RUN_KIND(id, name, player0, player1, sprt, spsa, on_claim, two_sides, threads, title, doc) RUN_KIND_##id,
#include "run_kinds.def"
#undef RUN_KIND
    RUN_KIND_COUNT
} RunKindId;

typedef struct {
    RunKindId id;
    const char *name;                /* "sprt": on the wire and in the database */
    const char *player0, *player1;   /* the two sides' names ("test", "base") */
    bool sprt;                       /* SPRT bounds; stops at an LLR bound */
    bool spsa;                       /* tunes parameters (theta) */
    bool on_claim;                   /* the database makes its tasks when workers claim */
    bool two_sides;                  /* a first side against a second (else one engine plays both) */
    bool threads;                    /* plays an engine test's games: threads, replays (RUN_SETTINGS_THREADS) */
    const char *title;               /* "SPRT test": what its creation page calls it */
    const char *doc;
} RunKind;

/* The kind named name, or NULL when there is none. */
const RunKind *run_kind_find(const char *name);
/* The id of the kind named name, or RUN_KIND_COUNT when there is none (NULL included). */
RunKindId run_kind_id(const char *name);
/* The kind of id (0 <= id < RUN_KIND_COUNT). */
const RunKind *run_kind_get(RunKindId id);
/* Whether the run of kind name (its text) is an SPRT, an SPSA run: false for unknown kinds. */
bool run_kind_is_sprt(const char *name);
bool run_kind_is_spsa(const char *name);

#endif

/*
 * store_steer.h - runs changed while they run, their history, time odds,
 * and run chains (schemas/sql/migrations/015_steer.sql): beyond the store's own
 * contract (store.h), with the same conventions (parameters passed
 * separately, every result checked and cleared, -1 on a database error
 * after logging it).  The store's third file that includes libpq-fe.h.
 */
#ifndef XQF_STORE_STEER_H
#define XQF_STORE_STEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "store_runs.h"
#include "store_spsa.h"

/* ---- a run's owner, stop, approval and limits ---------------------------------- */

/* One run's owner into out ("" for a run made outside the web). Returns 1, 0 (no such run) or -1. */
int store_run_owner(Store *s, int64_t run, char *out, size_t size);
/*
 * A plain verb's write (run_verbs.def's RUN_PLAIN_VERB): its SQL function
 * write (xqf_stop_run) called with the run and the actor's name, in the
 * caller's transaction.  Returns 1 (done), 0 (refused by the run's state,
 * nothing written: the function's words into why) or -1.
 */
int store_plain_verb(Store *s, const char *write, int64_t run, const char *actor, char *why, size_t size);
/*
 * A pending run approved: building when it waits for builds of its refs,
 * else active.  test_commit and base_commit (NULL or "" for a side without
 * a ref to build) are the commits the approval page showed: each request
 * must be pinned to exactly its side's (050_build_request_commits.sql).
 * Returns 1, 0 (not pending, a ref not pinned yet, or another commit) or -1.
 */
int store_approve_run(Store *s, int64_t run, const char *test_commit, const char *base_commit);
/*
 * Sets a pending, building or active run's priority, max_pairs and
 * pairs_per_task at once (no history: the caller records it).  Returns 1,
 * 0 (over) or -1.
 */
int store_set_run_limits(Store *s, int64_t run, int priority, int64_t max_pairs, int pairs_per_task);

/* ---- modify ------------------------------------------------------------------ */

/* What to change of a run; a negative value (STORE_KEEP) leaves it as is. */
enum { STORE_KEEP = -1 };
typedef struct {
    bool set_priority;               /* priority may be negative: changed only when set */
    int priority;
    int throughput;                  /* percent, 1-1000, or STORE_KEEP */
    int64_t max_pairs;               /* the new cap (SPSA: iterations), or STORE_KEEP */
    int64_t extend;                  /* SPSA: iterations added, or STORE_KEEP */
} StoreModify;

/*
 * Changes a run that has not ended, all or nothing, recorded in its history
 * under actor.  Returns 1, 0 when refused (why, one line: unknown or ended
 * run, a cap below the pairs already given out, an extension of a run that
 * is not SPSA, nothing to change), or -1.
 */
int store_modify_run(Store *s, int64_t run, const char *actor, const StoreModify *m, char *why, size_t size);

/*
 * What to change of an SPSA run's spec and schedule (037_spsa_modify.sql):
 * the bounds and end hints of count of its parameters (by name; start and
 * theta are not taken from here: a theta outside the new bounds moves to
 * the nearer one), and alpha, gamma, a_ratio (NAN: kept).
 */
typedef struct {
    const StoreSpsaParam *params;
    int count;
    double alpha, gamma, a_ratio;
} StoreModifySpsa;

/*
 * Changes a running SPSA run's spec, all or nothing, recorded in its
 * history under actor.  Returns 1, 0 when refused (why: unknown, ended or
 * not SPSA run, a name it does not tune, min >= max, an end hint not
 * positive, nothing to change), or -1.
 */
int store_modify_spsa(Store *s, int64_t run, const char *actor, const StoreModifySpsa *m, char *why, size_t size);

/* One entry of a run's history (web_audit): who did what when. */
typedef struct {
    char at[32];                     /* "YYYY-MM-DD HH:MM:SS" UTC */
    char actor[STORE_NAME_MAX + 1];
    char action[32];
    char detail[STORE_TEXT_MAX];
} StoreHistory;

/* A run's history, oldest first. Returns the count or -1; *out malloc'd (NULL when none). */
int store_run_history(Store *s, int64_t run, StoreHistory **out);

/* ---- chains ------------------------------------------------------------------ */

enum { STORE_CHAIN_STAGES = 16 };

/*
 * Stage kinds (015_steer.sql, 027_net_chains.sql): a chain starts with an
 * SPSA run (then builds and SPRTs of the tuned set) or a data run (then
 * the net trained on its positions, registered, and SPRTs of that net).
 */
typedef enum { CHAIN_SPSA, CHAIN_BUILD, CHAIN_SPRT, CHAIN_DATA, CHAIN_TRAIN, CHAIN_NET } StoreChainKind;

/* The kind's name in the database ("spsa", ...). */
const char *store_chain_kind_name(StoreChainKind kind);

/*
 * A stage: an SPRT's bounds and time control (nodes > 0, or the clock); a
 * training's epochs, batch, lambda and learning rate.
 */
typedef struct {
    StoreChainKind kind;
    double elo0, elo1, alpha, beta;
    int64_t max_pairs, nodes, base_ms, inc_ms;
    int epochs, batch;
    double lambda, lr;
    /* when read */
    char state[16];                  /* waiting, running, passed, failed, stopped, cancelled */
    int64_t run_id, build_id, net_id;/* 0 until made */
    char detail[STORE_TEXT_MAX];     /* a stage chain advance did: what it did, or why it failed */
} StoreChainStage;

typedef struct {
    const char *name;
    const StoreSpsaSpec *spsa;       /* the first stage's run: an SPSA run, */
    const StoreDataSpec *data;       /* or a data run (exactly one of them) */
    int64_t base_build;              /* what the SPRTs' base side plays (0: the workers' engine) */
    int64_t base_net;                /* a data chain's SPRTs' base net (0: the engine's own, STORE_NET_NONE: none) */
    const StoreChainStage *stages;   /* after the first stage */
    int count;
    const char *actor;               /* who made it: its first run's "create" line of the events log */
    const char *detail;              /* that line's detail, after "chain N, " */
} StoreChainSpec;

/* Creates a chain and its first run (running at once) in one transaction. Returns 0 with *id, or -1. */
int store_create_chain(Store *s, const StoreChainSpec *spec, int64_t *id);

typedef struct {
    int64_t id;
    char name[STORE_TEXT_MAX];
    char state[16];                  /* active, passed, failed, stopped */
    char note[STORE_TEXT_MAX];       /* why it ended */
    int64_t base_net;                /* as in StoreChainSpec */
    char base_net_name[STORE_NAME_MAX + 1];
    int count;
    StoreChainStage stages[STORE_CHAIN_STAGES];  /* the first run's stage first */
} StoreChain;

/* A chain with its stages. Returns 1, 0 (no such chain) or -1. */
int store_load_chain(Store *s, int64_t id, StoreChain *out);
/* The chain a run belongs to: 1 with *chain, 0 (none) or -1. */
int store_chain_of_run(Store *s, int64_t run, int64_t *chain);
/* The newest chains, at most max (ids, newest first). Returns the count or -1; *ids malloc'd. */
int store_list_chains(Store *s, int max, int64_t **ids);
/*
 * Active chains with a stage that waits for xqf-tune chain advance (a
 * build, a training, a net to register), ids in order. Returns the count
 * or -1; *ids malloc'd.
 */
int store_chains_to_advance(Store *s, int64_t **ids);
/*
 * Records the build stage's outcome: build (> 0) passes it and starts the
 * next stage; 0 fails the chain with note.  Returns 1, 0 (no build stage
 * waiting) or -1.
 */
int store_chain_built(Store *s, int64_t chain, int64_t build, const char *note);
/*
 * Records the outcome of the running stage of kind (a build, training or
 * net stage): ok passes it with build and net (0: none) and detail, and
 * starts the next stage; else it fails, and the chain with it, with
 * detail.  Returns 1, 0 (no such stage running) or -1.
 */
int store_chain_done(Store *s, int64_t chain, StoreChainKind kind, bool ok, int64_t build, int64_t net,
                     const char *detail);

/* What a chain's stop did: the run it stopped (0: its running stage had none), that stage (-1: none), the stages cancelled. */
typedef struct {
    int64_t run;
    int stage, cancelled;
} StoreChainStopped;

/*
 * Stops an active chain (xqf_chain_stop) for actor: its running stage's
 * run stopped as the plain verb stop stops one ("stopped by NAME"), that
 * stage stopped, the stages not started cancelled, the chain stopped
 * (its note the stage and verdict), so that nothing moves it on after.
 * Returns 1 with *out, 0 (no such chain, or it has ended) or -1.
 */
int store_stop_chain(Store *s, int64_t chain, const char *actor, StoreChainStopped *out);

#endif

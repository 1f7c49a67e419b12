/*
 * store_games.h - every run's games as the store keeps them
 * (014_games.sql): their records, what they add up to, the workers' trust
 * (residuals, faults, the deterministic replay audit of fixed-node pairs,
 * 036_audit_arbiter.sql) and the purge of a worker's results.
 */
#ifndef XQF_STORE_GAMES_H
#define XQF_STORE_GAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* What a run has stored of its games. */
typedef struct {
    int64_t games, plies;            /* plies: every move of the games, opening moves included */
    int64_t bytes;                   /* the rows' size in PostgreSQL (pg_column_size) */
    int64_t fen_bytes;               /* the distinct start FENs they use, kept apart (game_fens) */
} StoreGameTotals;

int store_game_totals(Store *s, int64_t run, StoreGameTotals *out);
/*
 * Calls fn for each stored game of run in index order with its record
 * (games.h, its FEN in place, valid during the call), only those of task
 * and of worker when they are not 0; stops at fn's first non-zero return
 * and returns it, else 0; -1 on a database error.
 */
int store_each_game(Store *s, int64_t run, int64_t task, int64_t worker,
                    int (*fn)(void *ctx, int64_t game, const uint8_t *rec, size_t len), void *ctx);
/* Whether run's games keep each move's score and depth (the run option): 1, 0 (no, or no such run) or -1. */
int store_game_scores(Store *s, int64_t run);

/* Games by how they ended: the indexes of worker/game/game.h's GameReason (the wire's order) that trust counts. */
enum { STORE_REASON_TIME_FORFEIT = 9, STORE_REASON_ILLEGAL_MOVE = 10, STORE_REASON_CRASH = 12 };

/* One worker's part of a run (its purged results left out). */
typedef struct {
    int64_t worker_id;
    char name[STORE_NAME_MAX + 1];
    int64_t pairs, penta[5];
    int64_t games, crashes, time_losses, illegal_moves;
    int64_t disconnects;             /* its leases that ran out */
    /* replay audits of its pairs or by it (or decided by it): judged, and those it is blamed for (a mismatch
     * blames both workers until a third key's replay decides which lied: 036_audit_arbiter.sql) */
    int64_t replays, mismatches;
    char mismatched[STORE_TEXT_MAX]; /* "pair P (game G differ); ..." */
    double residual;                 /* stats/residual.h: NAN when it does not qualify */
    /* its last search audit of the run (051, xqf-tune audit): "clean", "undecided", "flagged" or "" (none) */
    char search_verdict[16];
    int64_t search_agree, search_positions; /* its positions searched again, and those whose move agreed */
    bool flagged;                    /* residual above XQF_RESIDUAL_FLAG, its faults (xqf_faults_flag), a mismatch,
                                        or a search audit's flag */
} StoreWorkerTrust;

/*
 * The workers of run with their counts, residuals and flags, by name.
 * Returns the count or -1; *out malloc'd (NULL when none).
 */
int store_run_workers(Store *s, int64_t run, StoreWorkerTrust **out);
/*
 * The deterministic replay audit (014_games.sql): a fixed-node run's
 * pairs, a share of them (runs.replay_share, 1 % unless set), played
 * again by a second worker, whose records must be the first's bytes.  An
 * audit travels as a task whose id has STORE_AUDIT_BIT set (the audit's
 * id below it); its result, heartbeats and handback go to the functions
 * below instead of the task's.
 */
#define STORE_AUDIT_BIT (INT64_C(1) << 62)

typedef struct {
    double share;                    /* of the pairs replayed */
    bool fixed_nodes;                /* the run plays fixed nodes (else nothing is replayed) */
    int64_t open;                    /* first replays pending or leased */
    int64_t agree;                   /* the pair's records stand (a third replay may have shown the auditor lied) */
    int64_t mismatch;                /* they differ, the auditor not shown to have lied (036_audit_arbiter.sql) */
} StoreReplayTotals;

/* One worker's search audit of a run (051; tuner/cli/audit.c): what xqf-tune audit found. */
typedef struct {
    int64_t depth, positions, agree;
    double honest, llr;              /* H0's agreement, and the SPRT's LLR */
    const char *verdict;             /* "clean", "undecided" or "flagged" */
    int64_t plies;                   /* the plies its games held when read (056: the next audit's watermark) */
} StoreSearchAudit;

/* Records it (the tables' owner, or the auditor's role: xqf-tune audit). 0 or -1. */
int store_search_audit_add(Store *s, int64_t run, int64_t worker, const StoreSearchAudit *a);

/* A worker due for a search audit of a run (xqf-tune audit --active). */
typedef struct {
    int64_t run_id, worker_id;
    int64_t plies, plies_before;     /* its games' plies now, and at its last audit (0: none) */
} StoreAuditDue;

/*
 * The workers due (056): of each run the replay audit does not cover (a
 * clock, or several threads) that is active or ended after its last
 * search audit, each worker whose games hold at least min_plies plies
 * more than at its last audit (any more, once the run ended); by run,
 * then worker.  Returns the count or -1; *out malloc'd (NULL when none).
 */
int store_search_audit_due(Store *s, int64_t min_plies, StoreAuditDue **out);
/* A pass of xqf-tune audit --active recorded (search_audit_passes): begun (*pass its id), and ended. 0 or -1. */
int store_search_pass_begin(Store *s, int64_t *pass);
int store_search_pass_end(Store *s, int64_t pass, int64_t runs, int64_t workers, int64_t flagged);

/*
 * The task of run that played pair, and its two sets (an SPSA task's
 * perturbed ones, each at most size bytes with its NUL).  1 with them, 0
 * (no such task) or -1.
 */
int store_task_sets(Store *s, int64_t run, int64_t pair, int64_t *task, char *params0, char *params1, size_t size);

/* A run's replay audits. Returns 1, 0 (no such run) or -1. */
int store_replay_totals(Store *s, int64_t run, StoreReplayTotals *out);
/* Audits pending or leased, over every run: -1 on error. */
int64_t store_open_audits(Store *s);

typedef struct {
    int64_t audit, token, run_id, pair;
    char params0[STORE_PARAMS_MAX + 1], params1[STORE_PARAMS_MAX + 1]; /* the sets its first task played */
} StoreAuditLease;

/* Leases an audit to worker (not the pair's first; a run its build plays). 1 with *out, 0 none, -1. */
int store_claim_audit(Store *s, int64_t worker, const char *build, int64_t lease_ms, StoreAuditLease *out);

/*
 * The run and pair that audit's lease (token, held by worker) replays, for
 * the check of its records' start before they are judged.  1 with them, 0
 * (not this lease: its report is stale) or -1.
 */
int store_audit_start(Store *s, int64_t worker, int64_t audit, int64_t token, int64_t *run_id, int64_t *pair);
typedef enum { AUDIT_AGREE, AUDIT_MISMATCH, AUDIT_STALE, AUDIT_INVALID, AUDIT_ERROR } StoreAuditStatus;
/* The replay of an audit: games (a result's, games.h) must be its pair's two records. */
StoreAuditStatus store_audit_report(Store *s, int64_t worker, int64_t audit, int64_t token, const uint8_t *games,
                                    size_t games_len);
/* An audit's heartbeat and handback: 1 (ok), 0 (stale) or -1. */
int store_audit_heartbeat(Store *s, int64_t worker, int64_t audit, int64_t token, int64_t lease_ms);
int store_audit_handback(Store *s, int64_t worker, int64_t audit, int64_t token);

/*
 * Takes worker's results out of run (xqf_purge_worker): its leases there
 * re-queued, its counts out of the tasks' and the run's, its games
 * deleted.  Returns 0 with *pairs and *games taken out, or -1.  Inside
 * the caller's transaction with store_purge_done.
 */
int store_purge_worker(Store *s, int64_t run, int64_t worker, int64_t *pairs, int64_t *games);
/*
 * After store_purge_worker: the run's LLR (NAN: none), reopened (active,
 * no verdict) when reopen, and the purge in the run's history (web_audit:
 * actor, detail).  0 or -1.
 */
int store_purge_done(Store *s, int64_t run, double llr, bool reopen, const char *actor, const char *detail);

#endif

/*
 * sched.h - which run a worker's next task comes from, and what a run's
 * kind does with its tasks.
 *
 * The scheduler keeps the active runs (refreshed from the database on
 * NOTIFY xqf_runs, after leases expire or are handed back, and every few
 * seconds) with their books.  A worker gets work from the runs of the
 * highest priority it can play (build), the run with the fewest pairs
 * given out per throughput share first (stride scheduling: shares hold
 * over time, with fewer workers than runs too; a long control's share
 * weighed as Fishtest's, sched_pair_weight); a run with nothing to give
 * is skipped until the next refresh.
 *
 * Run kinds (schemas/formats/run_kinds.def) plug in through RunKindOps (sched.c),
 * indexed by the kind: SPRT tests get their tasks from the database
 * (xqf_claim_batch makes them on claim) and stop on the LLR; SPSA
 * (Fishtest's, stats/spsa.h) fills in new_task (perturbed sets through store_create_task)
 * and task_done (the theta update, applied exactly once in the
 * transaction that accepted the task's last pair).
 */
#ifndef XQF_SCHED_H
#define XQF_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "codec.h"
#include "store_runs.h"

typedef struct Sched Sched;

/*
 * A run's opening order: a permutation of its book's n openings, shuffled
 * (Fisher-Yates, splitmix64 from the run's seed) into perm.  Pair p plays
 * opening perm[p % n] (sched_opening): pairs are numbered in the order
 * they are handed out, so every opening is played once before any is
 * played again, and a run of fewer pairs than openings repeats none.
 * This can't fail.
 */
void sched_book_order(uint64_t seed, int *perm, int n);
/* The opening of pair p in the order perm of n openings (n > 0, p >= 0). This can't fail. */
static inline int sched_opening(const int *perm, int n, int64_t p) { return perm[p % n]; }

Sched *sched_new(Store *store);
void sched_destroy(Sched **s);

/* Marks the cache stale: the next call refreshes it. */
void sched_invalidate(Sched *s);
/* Refreshes the active runs when stale or older than max_age_ms. Returns 0 or -1 (database). */
int sched_refresh(Sched *s, int64_t now_ms, int64_t max_age_ms);

/* A task request as the scheduler weighs it. */
typedef struct {
    int64_t worker;
    const char *build;               /* the worker's build id ("" for any run's) */
    uint64_t key;                    /* its key (peers_key: the CURVE name, or the worker itself in plaintext) */
    int64_t key_leases;              /* the leases its key holds now */
    int concurrency;                 /* the games it plays at once, as its hello said: no task of a run of more
                                        threads (0: not known, any run) */
} SchedAsk;

/*
 * Claims tasks for n requests at once (a batch's), inside the caller's
 * transaction: out[i] becomes a task message or idle.  Requests are
 * spread over the runs as one by one, but each run serves its share in
 * one statement.  Returns 0, or -1 on a database error.
 *
 * Fair share between keys: a run that had nothing for a request it could
 * serve (every pair given out) in the last SCHED_STARVED_MS is starved by
 * that request's key.  A request of another key that holds its fair
 * share of the leases or more (the active runs' leases over `keys`, the
 * keys sharing the cluster, at least one) gets no task of that run: a
 * task that comes back to it (a lease expired or handed back) goes to
 * the key that waits for one, not to the key whose many workers ask
 * most often (max-min fairness between keys, as fair queuing serves
 * flows).  Elsewhere it is served as before.
 */
enum { SCHED_STARVED_MS = 5000, SCHED_STARVED_KEYS = 8 };
int sched_claim_batch(Sched *s, const SchedAsk *asks, int n, int keys, int64_t lease_ms, XqfMsg *out);
/*
 * Checks that the game records of a report (games, len: well formed) start
 * as the task gave them to be played: record k is game k of the lease's
 * pairs from first_pair on (the run's pair, counted over the run), and
 * must start from that pair's opening (games.h, xqf_game_from_opening; a
 * data run's random plies allowed).  A worker that stores games from
 * positions of its choosing would otherwise fill a run, its data and
 * the replay audit's reference with them.  1 when they do (or the run is
 * unknown: the report is stale), 0 with the first offending game in why,
 * -1 on a database error.
 */
int sched_check_records(Sched *s, int64_t run, int64_t first_pair, const uint8_t *games, size_t len, char *why,
                        size_t size);
/* Called in the transaction that accepted a report (task_done: its last pair). Returns 0 or -1. */
int sched_report(Sched *s, int64_t run, int64_t task, bool task_done);
/*
 * After the transaction committed: stop rules of the runs that got
 * results (SPRT: LLR against its bounds, the verdict recorded), at most
 * every 250 ms (sched.c); the rest wait for sched_progress.  Returns 0 or -1.
 */
int sched_after_commit(Sched *s);
/* The stop rules still due, if 250 ms have passed since the last check (call it from the loop). 0 or -1. */
int sched_progress(Sched *s, int64_t now_ms);
/* Forgets the reports noted since the last commit (the transaction was rolled back). */
void sched_rollback(Sched *s);

/*
 * Long controls get their share, as Fishtest weighs a run's throughput
 * (server/fishtest/rundb.py, calc_itp: itp *= tc_ratio ** 0.774 for
 * tc_ratio > 1; its workers go to the run of the fewest cores per itp).
 * sched_tc_ratio: the run's estimated game duration over the reference
 * control's, 10+0.1, times its threads per engine (sched.c: a side's
 * base + 60 increments, or 60 moves of fixed nodes at 1 M nodes/s; time
 * odds' two clocks averaged; a fixed-depth run, no clock and no nodes,
 * has no estimate: 1).  This scheduler gives out game pairs per share,
 * so to give a longer run ratio^0.774 times the CPU of a reference one
 * it gives it ratio^0.774 / ratio of the pairs: sched_pair_weight is
 * ratio^(0.774 - 1) for ratio > 1, else 1 (shorter runs are not boosted,
 * as Fishtest's; and they keep this scheduler's equal pairs per share),
 * and a run's share is its throughput times that weight.  1 / 6^0.226 =
 * 0.667 of the pairs at 60+0.6 (4.0x the CPU).  These can't fail.
 */
#define SCHED_TC_EXPONENT 0.774
double sched_tc_ratio(const StoreRun *r);
double sched_pair_weight(const StoreRun *r);

/* SPRT: the LLR of a run's counts and the verdict it implies ("" when none). */
double sched_sprt_llr(const StoreRun *r, const char **verdict);

#endif

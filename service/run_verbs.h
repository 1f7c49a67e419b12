/*
 * run_verbs.h - what is done to a run after it is made: stop, approve,
 * modify, purge; and to a chain of runs: its stop.  xqf-tune (stop,
 * approve, modify, purge, chain stop) and xqf-web (/runs/ID/stop,
 * approve, modify, purge, /chains/ID/stop) each turn their input into the
 * arguments below and call these, nothing else: who may do what (the
 * rules below), the checks, the writing in one transaction and its record
 * in the run's history are here only, so that the same request gets the
 * same result and the same words from either front end.  Like the run
 * service (run_service.h), nothing here prints or exits.
 *
 * Every verb returns a RunStatus (run_service.h; its numbers are
 * xqf-tune's exit statuses): RUN_OK, RUN_BAD (refused: nothing changed)
 * or RUN_FAILED (the database failed: nothing changed), with *problem.
 * A refusal's field says what was refused, for a front end that answers
 * in kinds (xqf-web's HTTP statuses): RUN_FIELD_RUN (no such run; RUN_FIELD_CHAIN: no such chain),
 * RUN_FIELD_ACTOR (the actor may not), RUN_FIELD_STATE (the run's state
 * does not allow it), else the setting refused (a form's field name:
 * "max_pairs", "worker").  On RUN_OK, problem->why says what was done.
 */
#ifndef XQF_RUN_VERBS_H
#define XQF_RUN_VERBS_H

#include <stdbool.h>
#include <stdint.h>

#include "run_service.h"
#include "store_steer.h"

/* Refusals' fields that name no setting: the run (the chain), the actor, the run's (the chain's) state. */
#define RUN_FIELD_RUN "run"
#define RUN_FIELD_CHAIN "chain"
#define RUN_FIELD_ACTOR "actor"
#define RUN_FIELD_STATE "state"

/*
 * Who does it: a name, recorded in the run's history (and a stop's
 * verdict, "stopped by NAME"), and the role of the dashboard's account
 * ("viewer", "tester", "admin").  xqf-tune holds the database's own
 * credentials and acts as "admin" under cli_actor's name.
 */
typedef struct {
    const char *name;
    const char *role;
} RunActor;

/* The verbs, run_verbs.def's lines. */
typedef enum {
#define RUN_VERB(ID, NAME, WHO) RUN_VERB_##ID,
#include "run_verbs.def"
    RUN_VERBS
} RunVerb;

/* Who may do a verb besides an admin (run_verbs.def's WHO): nobody, or the tester who made the run. */
typedef enum { RUN_MAY_ADMIN, RUN_MAY_OWNER } RunMay;

/* A verb's line of run_verbs.def. */
typedef struct {
    RunVerb id;
    const char *name;
    const char *help;                /* a plain verb's line in xqf-tune --help (NULL: not plain) */
    RunMay who;
    const char *plain;               /* a plain verb's SQL function (run_plain); NULL: its front ends' own command and form */
    const char *done, *button, *text; /* a plain verb's word when done ("stopped"), button and usage text */
} RunVerbInfo;

/* Every verb, in run_verbs.def's order (RUN_VERBS of them). */
extern const RunVerbInfo RUN_VERB_TABLE[RUN_VERBS];
/* The verb named name (xqf-tune's command, xqf-web's action), or NULL. This can't fail. */
const RunVerbInfo *run_verb_named(const char *name);

/*
 * Whether actor may do verb to a run of owner ("" for a run made outside
 * the dashboard): an admin may do all; a tester the verbs run_verbs.def
 * gives the owner (RUN_MAY_OWNER: stop) to their own runs; nothing else.
 * This can't fail.
 */
bool run_may(const RunActor *actor, RunVerb verb, const char *owner);

/*
 * Does a plain verb (RUN_PLAIN_VERB: nothing but the run) to run: the
 * actor admitted (run_admit), its SQL function called in a transaction
 * with its line of the run's history, "run N DONE" in problem->why.
 * Refused (RUN_FIELD_STATE) in the function's words when the run's state
 * does not allow it; verb must be plain (else RUN_BAD, nothing done).
 */
RunStatus run_plain(Store *s, const RunActor *actor, RunVerb verb, int64_t run, RunProblem *problem);

/*
 * The start of every verb: the run's owner read, then whether actor may
 * do verb to it.  RUN_OK (problem emptied), RUN_BAD (RUN_FIELD_RUN: no
 * such run; RUN_FIELD_ACTOR: may not) or RUN_FAILED.
 */
RunStatus run_admit(Store *s, const RunActor *actor, RunVerb verb, int64_t run, RunProblem *problem);
/* *problem from field and the format; returns status (a verb's last line: return run_say(...)). */
RunStatus run_say(RunProblem *problem, RunStatus status, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*
 * Stop (a plain verb, xqf_stop_run): a run that has not ended (pending,
 * building or active) is stopped: state stopped, verdict "stopped by
 * NAME", its tasks in flight cancelled, recorded in its history ("stop").
 */

/*
 * Approves a pending run, binding the commits the approval showed
 * (test_commit, base_commit: NULL or "" for a side without a ref to
 * build): it then waits for the builds of exactly these commits, or is
 * active at once when it has none.  Refused (RUN_FIELD_STATE) when it is
 * not pending, or a ref was not pinned yet or to another commit.
 * Recorded in its history ("approve", the commits).
 */
RunStatus run_approve(Store *s, const RunActor *actor, int64_t run, const char *test_commit, const char *base_commit,
                      RunProblem *problem);

/*
 * A change of a run that has not ended.  steer's fields (store_steer.h:
 * priority, throughput, the cap or an SPSA run's extension, STORE_KEEP:
 * kept) and an SPSA run's spec and schedule (spsa: count 0 and NANs:
 * kept).  pairs_per_task (> 0; STORE_KEEP: kept) is set with the priority
 * and the cap at once, all three given (the dashboard's form: the
 * throughput then changes only when it differs).
 */
typedef struct {
    StoreModify steer;
    int64_t pairs_per_task;
    StoreModifySpsa spsa;
} RunModify;

/* A change of nothing: every field kept. */
RunModify run_modify_none(void);

/*
 * Changes the run by *m in one transaction, all or nothing, recorded in
 * its history ("modify").  Refused: nothing to change, a value out of its
 * range (the field: "priority", "max_pairs", "pairs_per_task",
 * "throughput"), an ended run, a cap below the pairs already given out,
 * an extension or spec of a run that is not SPSA, a name the run does not
 * tune.
 */
RunStatus run_modify(Store *s, const RunActor *actor, int64_t run, const RunModify *m, RunProblem *problem);

/*
 * Takes the results of the worker named worker out of an SPRT: its pairs
 * out of the counts, its games deleted, the LLR computed again (a run
 * ended at a bound the LLR no longer reaches is active again), recorded
 * in its history ("purge").  Refused: no worker named (field "worker"),
 * no such worker, an SPSA run (its updates cannot be undone), a kind
 * without the SPRT.
 */
RunStatus run_purge(Store *s, const RunActor *actor, int64_t run, const char *worker, RunProblem *problem);

/*
 * Whether actor may stop a chain: run_may's stop of a run without an
 * owner, since a chain has none (the chains table keeps no owner; its
 * first run's would not say who made the chain's later runs): an admin,
 * and xqf-tune.  This can't fail.
 */
bool run_chain_may(const RunActor *actor);

/*
 * Stops a chain that has not ended, in one transaction: the run of its
 * running stage stopped as run_stop stops one (verdict "stopped by
 * NAME"), a build, training or net stage waiting for xqf-tune chain
 * advance stopped, its stages not started cancelled, the chain stopped
 * (nothing moves it on after: neither a run's end nor chain advance),
 * recorded in the history ("stop", with the chain, on its run's).
 * Refused: no such chain (RUN_FIELD_CHAIN), the actor may not
 * (run_chain_may), the chain has ended (RUN_FIELD_STATE).
 */
RunStatus run_chain_stop(Store *s, const RunActor *actor, int64_t chain, RunProblem *problem);

#endif

/*
 * run_verbs.c - the plain verbs (stop), approve and modify of a run
 * (run_verbs.h), and the admission every verb starts with; the purge is
 * run_games.c's; a chain's stop.
 */
#include "run_verbs.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_rules.h"
#include "store_runs.h"
#include "store_users.h"

RunStatus run_say(RunProblem *problem, RunStatus status, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    snprintf(problem->field, sizeof problem->field, "%s", field);
    vsnprintf(problem->why, sizeof problem->why, fmt, ap);
    va_end(ap);
    return status;
}

const RunVerbInfo RUN_VERB_TABLE[RUN_VERBS] = {
#define RUN_VERB(ID, NAME, WHO) [RUN_VERB_##ID] = { RUN_VERB_##ID, NAME, NULL, WHO, NULL, NULL, NULL, NULL },
#define RUN_PLAIN_VERB(ID, NAME, WHO, WRITE, DONE, BUTTON, HELP, TEXT) \
    [RUN_VERB_##ID] = { RUN_VERB_##ID, NAME, HELP, WHO, WRITE, DONE, BUTTON, TEXT },
#include "run_verbs.def"
};

const RunVerbInfo *run_verb_named(const char *name)
{
    for (int i = 0; name && i < RUN_VERBS; i++)
        if (strcmp(RUN_VERB_TABLE[i].name, name) == 0)
            return &RUN_VERB_TABLE[i];
    return NULL;
}

bool run_may(const RunActor *actor, RunVerb verb, const char *owner)
{
    const char *role = actor->role ? actor->role : "";
    if (strcmp(role, "admin") == 0)
        return true;
    return RUN_VERB_TABLE[verb].who == RUN_MAY_OWNER && strcmp(role, "tester") == 0 && actor->name && owner[0] &&
           strcmp(owner, actor->name) == 0;
}

RunStatus run_admit(Store *s, const RunActor *actor, RunVerb verb, int64_t run, RunProblem *problem)
{
    char owner[STORE_NAME_MAX + 1];
    int found = store_run_owner(s, run, owner, sizeof owner);
    if (found < 0)
        return run_say(problem, RUN_FAILED, "", "cannot read run %" PRId64, run);
    if (found == 0)
        return run_say(problem, RUN_BAD, RUN_FIELD_RUN, "no run %" PRId64, run);
    if (!run_may(actor, verb, owner))
        return run_say(problem, RUN_BAD, RUN_FIELD_ACTOR, "%s may not %s run %" PRId64 " (%s)",
                       actor->name ? actor->name : "nobody", RUN_VERB_TABLE[verb].name, run,
                       RUN_VERB_TABLE[verb].who == RUN_MAY_OWNER ? "an admin, or the tester who made it, may"
                                                                 : "an admin may");
    problem->field[0] = problem->why[0] = '\0';
    return RUN_OK;
}

/*
 * Commits what a verb wrote, with its history (of run, and of chain when
 * the verb was a chain's: 0 none): RUN_OK with done as what was done, or
 * RUN_FAILED.
 */
static RunStatus finish(Store *s, const RunActor *actor, int64_t run, int64_t chain, RunVerb verb, const char *detail,
                        RunProblem *problem, const char *done)
{
    if ((detail && store_web_audit_chain(s, actor->name, chain, run, RUN_VERB_TABLE[verb].name, detail) != 0) ||
        store_commit(s) != 0) {
        store_rollback(s);
        return run_say(problem, RUN_FAILED, "", "cannot %s %s %" PRId64 " (the database failed)",
                       RUN_VERB_TABLE[verb].name, chain ? "chain" : "run", chain ? chain : run);
    }
    return run_say(problem, RUN_OK, "", "%s", done);
}

/*
 * Why a run could not be approved: its state now, read again (the write
 * found none to change).
 */
static RunStatus refused_by_state(Store *s, int64_t run, const char *what, RunProblem *problem)
{
    StoreRun r;
    store_rollback(s);
    int found = store_load_run(s, run, &r, false);
    if (found < 0)
        return run_say(problem, RUN_FAILED, "", "cannot read run %" PRId64, run);
    return run_say(problem, RUN_BAD, RUN_FIELD_STATE, "run %" PRId64 " is %s: %s", run, found ? r.state : "gone", what);
}

RunStatus run_plain(Store *s, const RunActor *actor, RunVerb verb, int64_t run, RunProblem *problem)
{
    const RunVerbInfo *v = verb >= 0 && verb < RUN_VERBS ? &RUN_VERB_TABLE[verb] : NULL;
    if (!v || !v->plain)
        return run_say(problem, RUN_BAD, "", "not a verb that takes only the run");
    RunStatus st = run_admit(s, actor, verb, run, problem);
    if (st != RUN_OK)
        return st;
    char why[256], done[96];
    if (store_begin(s) != 0)
        return run_say(problem, RUN_FAILED, "", "cannot %s run %" PRId64 " (the database failed)", v->name, run);
    int rc = store_plain_verb(s, v->plain, run, actor->name, why, sizeof why);
    if (rc <= 0)
        store_rollback(s);
    if (rc < 0)
        return run_say(problem, RUN_FAILED, "", "cannot %s run %" PRId64 " (the database failed)", v->name, run);
    if (rc == 0)
        return run_say(problem, RUN_BAD, RUN_FIELD_STATE, "run %" PRId64 " %s", run, why);
    snprintf(done, sizeof done, "run %" PRId64 " %s", run, v->done);
    return finish(s, actor, run, 0, verb, "", problem, done);
}

RunStatus run_approve(Store *s, const RunActor *actor, int64_t run, const char *test_commit, const char *base_commit,
                      RunProblem *problem)
{
    RunStatus st = run_admit(s, actor, RUN_VERB_APPROVE, run, problem);
    if (st != RUN_OK)
        return st;
    if (store_begin(s) != 0)
        return run_say(problem, RUN_FAILED, "", "cannot approve run %" PRId64 " (the database failed)", run);
    int rc = store_approve_run(s, run, test_commit, base_commit);
    if (rc < 0) {
        store_rollback(s);
        return run_say(problem, RUN_FAILED, "", "cannot approve run %" PRId64 " (the database failed)", run);
    }
    if (rc == 0)
        return refused_by_state(s, run, "only a pending run whose refs were pinned to the commits approved (read "
                                "by the builder) is approved: reload its page and approve what it shows", problem);
    char detail[160], done[64];
    snprintf(detail, sizeof detail, "test commit %.64s, base commit %.64s",
             test_commit && *test_commit ? test_commit : "-", base_commit && *base_commit ? base_commit : "-");
    snprintf(done, sizeof done, "run %" PRId64 " approved", run);
    return finish(s, actor, run, 0, RUN_VERB_APPROVE, detail, problem, done);
}

RunModify run_modify_none(void)
{
    return (RunModify){ .steer = { .set_priority = false, .throughput = STORE_KEEP, .max_pairs = STORE_KEEP,
                                   .extend = STORE_KEEP },
                        .pairs_per_task = STORE_KEEP,
                        .spsa = { .params = NULL, .count = 0, .alpha = NAN, .gamma = NAN, .a_ratio = NAN } };
}

/* Whether v is inside the range of run_settings.def's setting field (the options' and the forms'); why if not. */
static bool in_range(const char *field, int64_t v, RunProblem *problem)
{
    const OptSpec *o = run_setting_option(field);
    if (!o || (v >= o->imin && v <= o->imax))
        return true;
    run_say(problem, RUN_BAD, field, "%s: %" PRId64 " is outside %" PRId64 "..%" PRId64, field, v, o->imin, o->imax);
    return false;
}

/* The values of *m against their ranges and rules. RUN_OK, or RUN_BAD with the field. */
static RunStatus modify_check(const RunModify *m, RunProblem *problem)
{
    const StoreModify *sm = &m->steer;
    bool limits = m->pairs_per_task != STORE_KEEP;
    bool steer = sm->set_priority || sm->throughput != STORE_KEEP || sm->max_pairs != STORE_KEEP ||
                 sm->extend != STORE_KEEP;
    bool spsa = m->spsa.count > 0 || !isnan(m->spsa.alpha) || !isnan(m->spsa.gamma) || !isnan(m->spsa.a_ratio);
    char why[320];
    if (!steer && !limits && !spsa)
        return run_say(problem, RUN_BAD, "modify", "nothing to change");
    if (limits && (!sm->set_priority || sm->max_pairs == STORE_KEEP || sm->extend != STORE_KEEP))
        return run_say(problem, RUN_BAD, "pairs_per_task", "pairs per task is set with the priority and the cap");
    if ((sm->set_priority && !in_range("priority", sm->priority, problem)) ||
        (sm->max_pairs != STORE_KEEP && !in_range("max_pairs", sm->max_pairs, problem)) ||
        (limits && !in_range("pairs_per_task", m->pairs_per_task, problem)))
        return RUN_BAD;
    if (limits && !rule_pairs_per_task(m->pairs_per_task, false, why, sizeof why))
        return run_say(problem, RUN_BAD, "pairs_per_task", "pairs_per_task: %s", why);
    if (sm->throughput != STORE_KEEP && (sm->throughput < 1 || sm->throughput > 1000))
        return run_say(problem, RUN_BAD, "throughput", "throughput is a share of the game pairs in percent, 1..1000");
    return RUN_OK;
}

/*
 * The dashboard's change: priority, cap and pairs per task at once, and
 * the throughput when it differs (the form shows it). In the open
 * transaction; 1, 0 (refused: *problem) or -1.
 */
static int modify_limits(Store *s, const RunActor *actor, int64_t run, const RunModify *m, RunProblem *problem)
{
    StoreRun r;
    int rc = store_load_run(s, run, &r, false);
    if (rc <= 0)
        return rc < 0 ? -1 : (run_say(problem, RUN_BAD, RUN_FIELD_RUN, "no run %" PRId64, run), 0);
    rc = store_set_run_limits(s, run, m->steer.priority, m->steer.max_pairs, (int)m->pairs_per_task);
    if (rc == 0)
        run_say(problem, RUN_BAD, RUN_FIELD_STATE, "run %" PRId64 " is %s: only a run that has not ended can be "
                "changed", run, r.state);
    if (rc == 1 && m->steer.throughput != STORE_KEEP && m->steer.throughput != r.throughput) {
        StoreModify t = { .throughput = m->steer.throughput, .max_pairs = STORE_KEEP, .extend = STORE_KEEP };
        rc = store_modify_run(s, run, actor->name, &t, problem->why, sizeof problem->why);
        snprintf(problem->field, sizeof problem->field, "throughput");
    }
    /* the history says what changed, its old value and its new, as xqf_modify_run does */
    char detail[200] = "";
    size_t k = 0;
    if (r.priority != m->steer.priority)
        k += (size_t)snprintf(detail + k, sizeof detail - k, ", priority %d -> %d", r.priority, m->steer.priority);
    if (r.max_pairs != m->steer.max_pairs)
        k += (size_t)snprintf(detail + k, sizeof detail - k, ", max pairs %" PRId64 " -> %" PRId64, r.max_pairs,
                              m->steer.max_pairs);
    if (r.pairs_per_task != m->pairs_per_task && k < sizeof detail)
        snprintf(detail + k, sizeof detail - k, ", pairs per task %d -> %" PRId64, r.pairs_per_task, m->pairs_per_task);
    if (rc == 1 && detail[0] && store_web_audit(s, actor->name, run, "modify", detail + 2) != 0)
        rc = -1;
    return rc;
}

RunStatus run_modify(Store *s, const RunActor *actor, int64_t run, const RunModify *m, RunProblem *problem)
{
    RunStatus st = run_admit(s, actor, RUN_VERB_MODIFY, run, problem);
    if (st != RUN_OK || (st = modify_check(m, problem)) != RUN_OK)
        return st;
    const StoreModify *sm = &m->steer;
    bool steer = sm->set_priority || sm->throughput != STORE_KEEP || sm->max_pairs != STORE_KEEP ||
                 sm->extend != STORE_KEEP;
    bool spsa = m->spsa.count > 0 || !isnan(m->spsa.alpha) || !isnan(m->spsa.gamma) || !isnan(m->spsa.a_ratio);
    /* every part of the change in one transaction: all or nothing */
    int rc = store_begin(s) == 0 ? 1 : -1;
    if (rc == 1 && m->pairs_per_task != STORE_KEEP)
        rc = modify_limits(s, actor, run, m, problem);
    else if (rc == 1 && steer) {
        rc = store_modify_run(s, run, actor->name, sm, problem->why, sizeof problem->why);
        snprintf(problem->field, sizeof problem->field, "modify");
    }
    if (rc == 1 && spsa) {
        rc = store_modify_spsa(s, run, actor->name, &m->spsa, problem->why, sizeof problem->why);
        snprintf(problem->field, sizeof problem->field, "spsa");
    }
    if (rc != 1) {
        store_rollback(s);
        return rc < 0 ? run_say(problem, RUN_FAILED, "", "cannot change run %" PRId64 " (the database failed)", run)
                      : RUN_BAD;
    }
    char done[64];
    snprintf(done, sizeof done, "run %" PRId64 " changed", run);
    return finish(s, actor, run, 0, RUN_VERB_MODIFY, NULL, problem, done);
}

bool run_chain_may(const RunActor *actor) { return run_may(actor, RUN_VERB_STOP, ""); }

/* The state of chain into state: 1, 0 (no such chain) or -1. */
static int chain_state(Store *s, int64_t chain, char *state, size_t size)
{
    StoreChain *c = malloc(sizeof *c);
    int found = c ? store_load_chain(s, chain, c) : -1;
    snprintf(state, size, "%s", found == 1 ? c->state : "gone");
    free(c);
    return found;
}

RunStatus run_chain_stop(Store *s, const RunActor *actor, int64_t chain, RunProblem *problem)
{
    char state[16];
    int found = chain_state(s, chain, state, sizeof state);
    if (found < 0)
        return run_say(problem, RUN_FAILED, "", "cannot read chain %" PRId64, chain);
    if (found == 0)
        return run_say(problem, RUN_BAD, RUN_FIELD_CHAIN, "no chain %" PRId64, chain);
    if (!run_chain_may(actor))
        return run_say(problem, RUN_BAD, RUN_FIELD_ACTOR, "%s may not stop chain %" PRId64 " (an admin may: a chain "
                       "has no owner)", actor->name ? actor->name : "nobody", chain);
    if (strcmp(state, "active") != 0)
        return run_say(problem, RUN_BAD, RUN_FIELD_STATE, "chain %" PRId64 " has ended (%s)", chain, state);
    char done[160];
    StoreChainStopped stopped;
    if (store_begin(s) != 0)
        return run_say(problem, RUN_FAILED, "", "cannot stop chain %" PRId64 " (the database failed)", chain);
    int rc = store_stop_chain(s, chain, actor->name, &stopped);
    if (rc <= 0)
        store_rollback(s);
    if (rc < 0 || (rc == 0 && chain_state(s, chain, state, sizeof state) < 0))
        return run_say(problem, RUN_FAILED, "", "cannot stop chain %" PRId64 " (the database failed)", chain);
    if (rc == 0)   /* ended since it was read (its last stage's end): its state now */
        return run_say(problem, RUN_BAD, RUN_FIELD_STATE, "chain %" PRId64 " has ended (%s)", chain, state);
    int len = snprintf(done, sizeof done, "chain %" PRId64 " stopped", chain);
    if (stopped.stage >= 0)
        len += snprintf(done + len, sizeof done - (size_t)len, " at stage %d", stopped.stage);
    if (stopped.run)
        len += snprintf(done + len, sizeof done - (size_t)len, ", its run %" PRId64 " stopped", stopped.run);
    snprintf(done + len, sizeof done - (size_t)len, ", %d stage%s not started cancelled", stopped.cancelled,
             stopped.cancelled == 1 ? "" : "s");
    return finish(s, actor, stopped.run, chain, RUN_VERB_STOP, done, problem, done);
}

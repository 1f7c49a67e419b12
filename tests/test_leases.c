/*
 * The coordinator's lease deadlines in memory (coordinator/leases.h):
 * found, beaten, dropped and due as a plain array says, through growth
 * and deletions by backward shift.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "leases.h"

Test(leases, beats_only_its_own_worker_and_task)
{
    Leases L = { 0 };
    cr_assert_eq(leases_put(&L, 7, 70, 700, 1000), 0);
    cr_assert_eq(leases_beat(&L, 7, 70, 701, 5000), 0, "another worker's heartbeat is stale");
    cr_assert_eq(leases_beat(&L, 7, 71, 700, 5000), 0, "another task under the token is stale");
    cr_assert_eq(leases_beat(&L, 8, 70, 700, 5000), 0, "an unknown token is stale");
    cr_assert_eq(leases_find(&L, 7)->deadline_ms, 1000, "a stale heartbeat moves nothing");
    cr_assert_eq(leases_beat(&L, 7, 70, 700, 5000), 1);
    cr_assert_eq(leases_find(&L, 7)->deadline_ms, 5000);
    /* adopting a known lease only raises its deadline */
    cr_assert_eq(leases_adopt(&L, 7, 70, 700, 3000), 0);
    cr_assert_eq(leases_find(&L, 7)->deadline_ms, 5000);
    cr_assert_eq(leases_adopt(&L, 7, 70, 700, 9000), 0);
    cr_assert_eq(leases_find(&L, 7)->deadline_ms, 9000);
    int64_t due[4];
    cr_assert_eq(leases_due(&L, 9000, due, 4), 0, "due only past the deadline");
    cr_assert_eq(leases_due(&L, 9001, due, 4), 1);
    cr_assert_eq(due[0], 7);
    leases_drop(&L, 7);
    cr_assert_null(leases_find(&L, 7));
    cr_assert_eq(L.count, 0);
    leases_free(&L);
}

/* Random puts and drops of consecutive tokens (as the database's sequence gives them) against an array. */
Test(leases, agrees_with_an_array_through_growth_and_drops)
{
    enum { N = 20000 };
    static int64_t deadline[N + 1];          /* 0: not held */
    Leases L = { 0 };
    srand(12345);
    for (int step = 0; step < 200000; step++) {
        int64_t t = 1 + rand() % N;
        if (rand() % 3) {
            deadline[t] = 1 + rand() % 1000;
            cr_assert_eq(leases_put(&L, t, t * 10, t % 97, deadline[t]), 0);
        } else {
            deadline[t] = 0;
            leases_drop(&L, t);
        }
    }
    size_t held = 0, due_want = 0;
    for (int64_t t = 1; t <= N; t++) {
        Lease *l = leases_find(&L, t);
        held += deadline[t] != 0;
        due_want += deadline[t] != 0 && deadline[t] < 500;
        if (!deadline[t]) {
            cr_assert_null(l, "token %lld was dropped", (long long)t);
            continue;
        }
        cr_assert_not_null(l, "token %lld is held", (long long)t);
        cr_assert_eq(l->deadline_ms, deadline[t]);
        cr_assert_eq(l->task, t * 10);
        cr_assert_eq(l->worker, t % 97);
    }
    cr_assert_eq(L.count, held);
    int64_t *due = malloc(sizeof *due * N);
    size_t n = leases_due(&L, 500, due, N);
    cr_assert_eq(n, due_want);
    for (size_t i = 0; i < n; i++)
        cr_assert(deadline[due[i]] && deadline[due[i]] < 500);
    cr_assert_eq(leases_due(&L, 500, due, 3), due_want < 3 ? due_want : 3, "at most max");
    cr_assert_eq(leases_extend_all(&L, 800), held);
    cr_assert_eq(leases_due(&L, 800, due, N), 0, "every deadline raised to 800");
    free(due);
    leases_free(&L);
}

/* A fake store_expire_given: records each statement's tokens, re-queues them all, or fails while told to. */
typedef struct {
    int statements, fail;            /* fail: statements still to fail */
    size_t largest;
    int64_t seen[8192];              /* seen[token]: how many times re-queued */
} Expiry;

static int64_t fake_expire(void *ctx, const int64_t *tasks, const int64_t *tokens, int n)
{
    Expiry *e = ctx;
    e->statements++;
    if (e->fail > 0) {
        e->fail--;
        return -1;
    }
    e->largest = (size_t)n > e->largest ? (size_t)n : e->largest;
    for (int i = 0; i < n; i++) {
        cr_assert_eq(tasks[i], tokens[i] * 10, "token %lld given with another lease's task", (long long)tokens[i]);
        e->seen[tokens[i]]++;
    }
    return n;
}

/* Many leases due at once (a fleet gone): every one re-queued once, in statements of at most the batch. */
Test(leases, many_due_at_once_expire_in_bounded_batches)
{
    enum { DUE = 2500, KEPT = 300, BATCH = 1000 };
    static Expiry e;
    Leases L = { 0 };
    for (int64_t t = 1; t <= DUE + KEPT; t++)
        cr_assert_eq(leases_put(&L, t, t * 10, t % 7, t <= DUE ? 100 : 5000), 0);
    int64_t n, total = 0;
    size_t given;
    int rounds = 0;
    while ((given = leases_expire_batch(&L, 1000, BATCH, fake_expire, &e, &n)) > 0) {
        cr_assert_leq(given, BATCH);
        cr_assert_eq(n, (int64_t)given);
        total += n;
        rounds++;
    }
    cr_assert_eq(n, 0, "nothing due: no statement");
    cr_assert_eq(total, DUE);
    cr_assert_eq(rounds, 3, "2,500 due in batches of 1,000: three statements");
    cr_assert_eq(e.statements, 3);
    cr_assert_eq(e.largest, BATCH);
    for (int64_t t = 1; t <= DUE + KEPT; t++) {
        cr_assert_eq(e.seen[t], t <= DUE ? 1 : 0, "token %lld re-queued %lld times", (long long)t, (long long)e.seen[t]);
        cr_assert_eq(leases_find(&L, t) != NULL, t > DUE, "token %lld", (long long)t);
    }
    cr_assert_eq(L.count, KEPT);
    leases_free(&L);
}

/* A statement that fails (its timeout) forgets nothing: the same leases are given again at the next tick. */
Test(leases, a_failed_statement_keeps_its_leases_for_the_next_tick)
{
    static Expiry e;
    Leases L = { 0 };
    for (int64_t t = 1; t <= 1500; t++)
        cr_assert_eq(leases_put(&L, t, t * 10, 1, 100), 0);
    e.fail = 2;
    int64_t n;
    cr_assert_eq(leases_expire_batch(&L, 1000, 1000, fake_expire, &e, &n), 1000);
    cr_assert_eq(n, -1);
    cr_assert_eq(L.count, 1500, "a failed statement's leases stay");
    cr_assert_eq(leases_expire_batch(&L, 1000, 1000, fake_expire, &e, &n), 1000);
    cr_assert_eq(n, -1);
    cr_assert_eq(L.count, 1500);
    /* the database back: every lease re-queued once */
    while (leases_expire_batch(&L, 1000, 1000, fake_expire, &e, &n) > 0)
        cr_assert_geq(n, 0);
    cr_assert_eq(L.count, 0);
    for (int64_t t = 1; t <= 1500; t++)
        cr_assert_eq(e.seen[t], 1, "token %lld re-queued %lld times", (long long)t, (long long)e.seen[t]);
    cr_assert_eq(e.statements, 4);
    leases_free(&L);
}

/* A statement that failed is tried at half its size, down to a floor; successes double it back to the cap. */
Test(leases, a_failed_statement_is_tried_smaller_then_grows_back)
{
    size_t size = 1000;
    const size_t after_failures[] = { 500, 250, 125, 62, 50, 50 };
    for (size_t i = 0; i < sizeof after_failures / sizeof *after_failures; i++) {
        size = leases_batch_next(size, true, 50, 1000);
        cr_assert_eq(size, after_failures[i], "failure %zu: %zu", i + 1, size);
    }
    const size_t after_successes[] = { 100, 200, 400, 800, 1000, 1000 };
    for (size_t i = 0; i < sizeof after_successes / sizeof *after_successes; i++) {
        size = leases_batch_next(size, false, 50, 1000);
        cr_assert_eq(size, after_successes[i], "success %zu: %zu", i + 1, size);
    }
    /* with the batches: the smaller statement after a failure is given fewer leases, none forgotten */
    static Expiry e;
    Leases L = { 0 };
    for (int64_t t = 1; t <= 1500; t++)
        cr_assert_eq(leases_put(&L, t, t * 10, 1, 100), 0);
    e.fail = 1;
    int64_t n;
    size = 1000;
    cr_assert_eq(leases_expire_batch(&L, 1000, size, fake_expire, &e, &n), 1000);
    cr_assert_eq(n, -1);
    size = leases_batch_next(size, true, 50, 1000);
    cr_assert_eq(leases_expire_batch(&L, 1000, size, fake_expire, &e, &n), 500);
    cr_assert_eq(n, 500);
    cr_assert_eq(L.count, 1000);
    leases_free(&L);
}

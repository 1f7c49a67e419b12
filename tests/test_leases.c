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

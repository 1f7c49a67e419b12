/* leases.c - the coordinator's lease deadlines in memory (see leases.h). */
#include "leases.h"

#include <stdlib.h>

enum { LEASES_MIN_CAP = 1024 };

/* A 64-bit mix (the finaliser of MurmurHash3): tokens come from one sequence, so their low bits alone cluster. */
static size_t slot_of(int64_t token, size_t cap)
{
    uint64_t h = (uint64_t)token;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return (size_t)h & (cap - 1);
}

void leases_free(Leases *L)
{
    free(L->slots);
    *L = (Leases){ 0 };
}

static Lease *probe(const Leases *L, int64_t token)
{
    if (!L->cap)
        return NULL;
    for (size_t i = slot_of(token, L->cap);; i = (i + 1) & (L->cap - 1)) {
        Lease *s = &L->slots[i];
        if (s->token == token || s->token == 0)
            return s;
    }
}

/* Keeps the load under a half: probes stay short. 0 or -1. */
static int grow(Leases *L)
{
    if ((L->count + 1) * 2 <= L->cap)
        return 0;
    size_t cap = L->cap ? L->cap * 2 : LEASES_MIN_CAP;
    Lease *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    Leases bigger = { .slots = slots, .cap = cap, .count = L->count };
    for (size_t i = 0; i < L->cap; i++)
        if (L->slots[i].token)
            *probe(&bigger, L->slots[i].token) = L->slots[i];
    free(L->slots);
    *L = bigger;
    return 0;
}

int leases_put(Leases *L, int64_t token, int64_t task, int64_t worker, int64_t deadline_ms)
{
    if (token <= 0 || grow(L) != 0)
        return token <= 0 ? 0 : -1;
    Lease *s = probe(L, token);
    if (s->token == 0)
        L->count++;
    *s = (Lease){ .token = token, .task = task, .worker = worker, .deadline_ms = deadline_ms };
    return 0;
}

int leases_adopt(Leases *L, int64_t token, int64_t task, int64_t worker, int64_t deadline_ms)
{
    Lease *s = leases_find(L, token);
    if (!s)
        return leases_put(L, token, task, worker, deadline_ms);
    if (s->deadline_ms < deadline_ms)
        s->deadline_ms = deadline_ms;
    return 0;
}

Lease *leases_find(Leases *L, int64_t token)
{
    Lease *s = token > 0 ? probe(L, token) : NULL;
    return s && s->token == token ? s : NULL;
}

void leases_drop(Leases *L, int64_t token)
{
    Lease *s = leases_find(L, token);
    if (!s)
        return;
    size_t mask = L->cap - 1, hole = (size_t)(s - L->slots);
    L->slots[hole].token = 0;
    L->count--;
    /* backward shift: an entry after the hole moves into it unless its home lies cyclically in (hole, j] */
    for (size_t j = (hole + 1) & mask; L->slots[j].token; j = (j + 1) & mask) {
        size_t home = slot_of(L->slots[j].token, L->cap);
        bool stays = hole < j ? (hole < home && home <= j) : (hole < home || home <= j);
        if (stays)
            continue;
        L->slots[hole] = L->slots[j];
        L->slots[j].token = 0;
        hole = j;
    }
}

int leases_beat(Leases *L, int64_t token, int64_t task, int64_t worker, int64_t deadline_ms)
{
    Lease *s = leases_find(L, token);
    if (!s || s->task != task || s->worker != worker)
        return 0;
    s->deadline_ms = deadline_ms;
    return 1;
}

size_t leases_extend_all(Leases *L, int64_t deadline_ms)
{
    for (size_t i = 0; i < L->cap; i++)
        if (L->slots[i].token && L->slots[i].deadline_ms < deadline_ms)
            L->slots[i].deadline_ms = deadline_ms;
    return L->count;
}

size_t leases_due(const Leases *L, int64_t now_ms, int64_t *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < L->cap && n < max; i++)
        if (L->slots[i].token && L->slots[i].deadline_ms < now_ms)
            out[n++] = L->slots[i].token;
    return n;
}

size_t leases_expire_batch(Leases *L, int64_t now_ms, size_t max, LeasesExpireFn expire, void *ctx, int64_t *requeued)
{
    *requeued = 0;
    if (!L->count || !max)
        return 0;
    if (max > L->count)
        max = L->count;
    int64_t *tokens = malloc(sizeof *tokens * max), *tasks = malloc(sizeof *tasks * max);
    size_t due = tokens && tasks ? leases_due(L, now_ms, tokens, max) : 0;
    if (!tokens || !tasks)
        *requeued = -1;
    for (size_t i = 0; i < due; i++)
        tasks[i] = leases_find(L, tokens[i])->task;
    if (due)
        *requeued = expire(ctx, tasks, tokens, (int)due);
    for (size_t i = 0; *requeued >= 0 && i < due; i++)
        leases_drop(L, tokens[i]);
    free(tokens);
    free(tasks);
    return due;
}

size_t leases_batch_next(size_t size, bool failed, size_t min, size_t max)
{
    size_t next = failed ? size / 2 : size * 2;
    return next < min ? min : next > max ? max : next;
}

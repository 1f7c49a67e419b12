#include "run_kind.h"

#include <assert.h>
#include <string.h>

static const RunKind KINDS[RUN_KIND_COUNT] = {
#define RUN_KIND(id, name, player0, player1, sprt, spsa, on_claim, two_sides, threads, title, doc)                       \
    { RUN_KIND_##id, name, player0, player1, sprt, spsa, on_claim, two_sides, threads, title, doc },
#include "run_kinds.def"
#undef RUN_KIND
};

const RunKind *run_kind_find(const char *name)
{
    for (int i = 0; i < RUN_KIND_COUNT; i++)
        if (strcmp(KINDS[i].name, name) == 0)
            return &KINDS[i];
    return NULL;
}

RunKindId run_kind_id(const char *name)
{
    const RunKind *k = name ? run_kind_find(name) : NULL;
    return k ? k->id : RUN_KIND_COUNT;
}

const RunKind *run_kind_get(RunKindId id)
{
    assert((unsigned)id < RUN_KIND_COUNT);
    return &KINDS[id];
}

bool run_kind_is_sprt(const char *name)
{
    const RunKind *k = run_kind_find(name);
    return k && k->sprt;
}

bool run_kind_is_spsa(const char *name)
{
    const RunKind *k = run_kind_find(name);
    return k && k->spsa;
}

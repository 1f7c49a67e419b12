#include "tt.h"

#include <stdlib.h>
#include <string.h>


static inline TTEntry *cluster_of(const TT *tt, uint64_t key)
{
    size_t index = (size_t)(((unsigned __int128)(key & 0xffffffffu) * tt->count) >> 32);
    return &tt->clusters[index * TT_CLUSTER];
}

int tt_resize(TT *tt, size_t mb)
{
    size_t count = mb * 1024 * 1024 / (sizeof(TTEntry) * TT_CLUSTER);
    if (count == 0)
        count = 1;
    TTEntry *mem = calloc(count * TT_CLUSTER, sizeof(TTEntry));
    if (!mem)
        return -1;
    free(tt->clusters);
    tt->clusters = mem;
    tt->count = count;
    tt->age = 0;
    return 0;
}

void tt_free(TT *tt)
{
    free(tt->clusters);
    tt->clusters = NULL;
    tt->count = 0;
}

void tt_clear(TT *tt)
{
    memset(tt->clusters, 0, tt->count * TT_CLUSTER * sizeof(TTEntry));
    tt->age = 0;
}

void tt_new_search(TT *tt)
{
    tt->age++;
}

/* Mate scores are stored as distance from this node, read back as distance from the root. */
static int to_tt(int value, int ply)
{
    return value >= TT_MATE_BOUND ? value + ply : value <= -TT_MATE_BOUND ? value - ply : value;
}

static int from_tt(int value, int ply)
{
    return value >= TT_MATE_BOUND ? value - ply : value <= -TT_MATE_BOUND ? value + ply : value;
}

void tt_prefetch(const TT *tt, uint64_t key)
{
    __builtin_prefetch(cluster_of(tt, key));
}

TTProbe tt_probe(const TT *tt, uint64_t key, int ply)
{
    TTProbe p = { false, MOVE_NONE, -TT_INF, TT_INF, -1, -1, false, TT_NO_EVAL };
    TTEntry *c = cluster_of(tt, key);
    uint32_t check = (uint32_t)(key >> 32);
    for (int i = 0; i < TT_CLUSTER; i++) {
        if (c[i].check != check || (!c[i].lower_depth1 && !c[i].upper_depth1 && !c[i].move && !c[i].flags))
            continue;
        p.hit = true;
        p.move = c[i].move;
        p.lower_depth = c[i].lower_depth1 - 1;
        p.upper_depth = c[i].upper_depth1 - 1;
        p.mate_threat = c[i].flags & TT_MATE_THREAT;
        if (c[i].flags & TT_HAS_EVAL)
            p.eval = c[i].eval;
        if (p.lower_depth >= 0)
            p.lower = from_tt(c[i].lower, ply);
        if (p.upper_depth >= 0)
            p.upper = from_tt(c[i].upper, ply);
        break;
    }
    return p;
}

static int entry_worth(const TT *tt, const TTEntry *e)
{
    int depth = (e->lower_depth1 > e->upper_depth1 ? e->lower_depth1 : e->upper_depth1) - 1;
    return depth - 4 * (uint8_t)(tt->age - e->age);
}

/* The entry for key: the existing one, or the least worth in its cluster, emptied. */
static TTEntry *entry_for(TT *tt, uint64_t key)
{
    TTEntry *c = cluster_of(tt, key);
    uint32_t check = (uint32_t)(key >> 32);
    for (int i = 0; i < TT_CLUSTER; i++)
        if (c[i].check == check)
            return &c[i];
    TTEntry *e = &c[0];
    for (int i = 1; i < TT_CLUSTER; i++)
        if (entry_worth(tt, &c[i]) < entry_worth(tt, e))
            e = &c[i];
    memset(e, 0, sizeof *e);
    e->check = check;
    return e;
}

void tt_mark_mate_threat(TT *tt, uint64_t key)
{
    TTEntry *e = entry_for(tt, key);
    e->flags |= TT_MATE_THREAT;
    e->age = tt->age;
}

void tt_store(TT *tt, uint64_t key, int depth, int ply, Move move, int value, int alpha, int beta,
              int eval, bool path_dependent)
{
    TTEntry *e = entry_for(tt, key);
    if (depth > 127)
        depth = 127;
    if (eval != TT_NO_EVAL) {
        e->eval = (int16_t)eval;
        e->flags |= TT_HAS_EVAL;
    }
    if (move)
        e->move = move;
    e->age = tt->age;
    if (path_dependent)
        return;
    int v = to_tt(value, ply);
    if (value > alpha && depth + 1 >= e->lower_depth1) {
        e->lower = (int16_t)v;
        e->lower_depth1 = (uint8_t)(depth + 1);
        if (e->upper_depth1 && e->upper < e->lower)
            e->upper_depth1 = 0; /* an older, contradicted bound */
    }
    if (value < beta && depth + 1 >= e->upper_depth1) {
        e->upper = (int16_t)v;
        e->upper_depth1 = (uint8_t)(depth + 1);
        if (e->lower_depth1 && e->lower > e->upper)
            e->lower_depth1 = 0;
    }
}

int tt_hashfull(const TT *tt)
{
    size_t n = tt->count * TT_CLUSTER < 1000 ? tt->count * TT_CLUSTER : 1000;
    int used = 0;
    for (size_t i = 0; i < n; i++)
        used += tt->clusters[i].age == tt->age
             && (tt->clusters[i].lower_depth1 || tt->clusters[i].upper_depth1);
    return n ? (int)(used * 1000 / n) : 0;
}

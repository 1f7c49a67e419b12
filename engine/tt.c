#include "tt.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(TTSlot) == 16, "four slots to a 64-byte line");

/*
 * A bijective 64-bit mix (the SplitMix64 finaliser, Steele, Lea and Flood,
 * OOPSLA 2014) with mix(0) == 0, so an all-zero slot decodes to an empty
 * entry and every bit of the bounds word changes the key check.
 */
static inline uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static TTEntry load(const TTSlot *slot)
{
    uint64_t keyed = atomic_load_explicit(&((TTSlot *)slot)->keyed, memory_order_relaxed);
    uint64_t bounds = atomic_load_explicit(&((TTSlot *)slot)->bounds, memory_order_relaxed);
    uint64_t w = keyed ^ mix(bounds);
    TTEntry e;
    e.check = (uint32_t)w;
    e.age = (uint8_t)(w >> 32);
    e.flags = (uint8_t)(w >> 40);
    e.eval = (int16_t)(uint16_t)(w >> 48);
    e.move = (Move)bounds;
    e.lower = (int16_t)(uint16_t)(bounds >> 16);
    e.upper = (int16_t)(uint16_t)(bounds >> 32);
    e.lower_depth1 = (uint8_t)(bounds >> 48);
    e.upper_depth1 = (uint8_t)(bounds >> 56);
    return e;
}

static void save(TTSlot *slot, const TTEntry *e)
{
    uint64_t bounds = (uint64_t)e->move | (uint64_t)(uint16_t)e->lower << 16 | (uint64_t)(uint16_t)e->upper << 32
                    | (uint64_t)e->lower_depth1 << 48 | (uint64_t)e->upper_depth1 << 56;
    uint64_t w = (uint64_t)e->check | (uint64_t)e->age << 32 | (uint64_t)e->flags << 40
               | (uint64_t)(uint16_t)e->eval << 48;
    atomic_store_explicit(&slot->keyed, w ^ mix(bounds), memory_order_relaxed);
    atomic_store_explicit(&slot->bounds, bounds, memory_order_relaxed);
}

static inline TTSlot *cluster_of(const TT *tt, uint64_t key)
{
    size_t index = (size_t)(((unsigned __int128)(key & 0xffffffffu) * tt->count) >> 32);
    return &tt->clusters[index * TT_CLUSTER];
}

int tt_resize(TT *tt, size_t mb)
{
    size_t count = mb * 1024 * 1024 / (sizeof(TTSlot) * TT_CLUSTER);
    if (count == 0)
        count = 1;
    TTSlot *mem = calloc(count * TT_CLUSTER, sizeof(TTSlot));
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
    memset(tt->clusters, 0, tt->count * TT_CLUSTER * sizeof(TTSlot)); /* no search is running */
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
    const TTSlot *c = cluster_of(tt, key);
    uint32_t check = (uint32_t)(key >> 32);
    for (int i = 0; i < TT_CLUSTER; i++) {
        TTEntry e = load(&c[i]);
        if (e.check != check || (!e.lower_depth1 && !e.upper_depth1 && !e.move && !e.flags))
            continue;
        p.hit = true;
        p.move = e.move;
        p.lower_depth = e.lower_depth1 - 1;
        p.upper_depth = e.upper_depth1 - 1;
        p.mate_threat = e.flags & TT_MATE_THREAT;
        if (e.flags & TT_HAS_EVAL)
            p.eval = e.eval;
        if (p.lower_depth >= 0)
            p.lower = from_tt(e.lower, ply);
        if (p.upper_depth >= 0)
            p.upper = from_tt(e.upper, ply);
        break;
    }
    return p;
}

static int entry_worth(const TT *tt, const TTEntry *e)
{
    int depth = (e->lower_depth1 > e->upper_depth1 ? e->lower_depth1 : e->upper_depth1) - 1;
    return depth - 4 * (uint8_t)(tt->age - e->age);
}

/*
 * A copy of the entry for key (the existing one, or an empty one in place
 * of the least worth in its cluster), with the slot to save it back to.
 */
static TTEntry entry_for(TT *tt, uint64_t key, TTSlot **slot)
{
    TTSlot *c = cluster_of(tt, key);
    uint32_t check = (uint32_t)(key >> 32);
    TTEntry e[TT_CLUSTER];
    for (int i = 0; i < TT_CLUSTER; i++) {
        e[i] = load(&c[i]);
        if (e[i].check == check) {
            *slot = &c[i];
            return e[i];
        }
    }
    int worst = 0;
    for (int i = 1; i < TT_CLUSTER; i++)
        if (entry_worth(tt, &e[i]) < entry_worth(tt, &e[worst]))
            worst = i;
    *slot = &c[worst];
    TTEntry fresh;
    memset(&fresh, 0, sizeof fresh);
    fresh.check = check;
    return fresh;
}

void tt_mark_mate_threat(TT *tt, uint64_t key)
{
    TTSlot *slot;
    TTEntry entry = entry_for(tt, key, &slot), *e = &entry;
    e->flags |= TT_MATE_THREAT;
    e->age = tt->age;
    save(slot, e);
}

/* tt_store's bounds: raises the lower, lowers the upper, or sets both. */
static void store_value(TTEntry *e, int depth, int ply, int value, int alpha, int beta)
{
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

void tt_store(TT *tt, uint64_t key, int depth, int ply, Move move, int value, int alpha, int beta,
              int eval, bool path_dependent)
{
    TTSlot *slot;
    TTEntry entry = entry_for(tt, key, &slot), *e = &entry;
    if (depth > 127)
        depth = 127;
    if (eval != TT_NO_EVAL) {
        e->eval = (int16_t)eval;
        e->flags |= TT_HAS_EVAL;
    }
    if (move)
        e->move = move;
    e->age = tt->age;
    if (!path_dependent)
        store_value(e, depth, ply, value, alpha, beta);
    save(slot, e);
}

int tt_hashfull(const TT *tt)
{
    size_t n = tt->count * TT_CLUSTER < 1000 ? tt->count * TT_CLUSTER : 1000;
    int used = 0;
    for (size_t i = 0; i < n; i++) {
        TTEntry e = load(&tt->clusters[i]);
        used += e.age == tt->age && (e.lower_depth1 || e.upper_depth1);
    }
    return n ? (int)(used * 1000 / n) : 0;
}

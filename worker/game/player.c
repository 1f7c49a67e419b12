#include "player.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "external.h"
#include "movegen.h"
#include "search.h"

struct Player {
    PlayerSpec spec;
    Engine *engine;         /* built-in */
    External *external;     /* external */
};

Player *player_new(const PlayerSpec *spec)
{
    Player *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->spec = *spec;
    if (spec->external) {
        p->external = external_new(spec);
    } else if ((p->engine = engine_new()) != NULL) {
        engine_set_params(p->engine, &spec->params);
        char err[256];
        /* the spec's net was read when parsed (spec.h): failing now is a file changed since, or memory */
        if (engine_set_hash(p->engine, (size_t)spec->hash_mb) != 0 ||
            engine_set_threads(p->engine, spec->threads > 0 ? spec->threads : 1) != 0 ||
            (spec->net[0] && engine_load_net(p->engine, spec->net, err, sizeof err) != 0))
            engine_destroy(&p->engine);
        else if (spec->no_net)
            engine_set_use_nnue(p->engine, false);
    }
    if (!p->engine && !p->external) {
        free(p);
        return NULL;
    }
    return p;
}

void player_destroy(Player **pp)
{
    Player *p = *pp;
    if (!p)
        return;
    engine_destroy(&p->engine);
    external_destroy(&p->external);
    free(p);
    *pp = NULL;
}

int player_set_spec(Player *p, const PlayerSpec *spec)
{
    /* another evaluation: a new engine (the default net cannot be had back once another is loaded) */
    if (p->external || spec->external || strcmp(spec->net, p->spec.net) != 0 || spec->no_net != p->spec.no_net)
        return -1;
    if (spec->hash_mb != p->spec.hash_mb && engine_set_hash(p->engine, (size_t)spec->hash_mb) != 0)
        return -1;
    if (spec->threads != p->spec.threads && engine_set_threads(p->engine, spec->threads > 0 ? spec->threads : 1) != 0)
        return -1;
    engine_set_params(p->engine, &spec->params);
    p->spec = *spec;
    return 0;
}

const char *player_name(const Player *p)
{
    return p->spec.name;
}

int player_new_game(Player *p, const atomic_bool *stop, Reply *reply)
{
    memset(reply, 0, sizeof *reply);
    if (p->external)
        return external_new_game(p->external, stop, reply);
    engine_clear(p->engine);
    return 0;
}

/* The built-in engine: a search in this thread within the limits. */
static void builtin_think(Player *p, const GameView *v, const ThinkLimits *l, Reply *r)
{
    SearchLimits sl;
    search_limits_init(&sl);
    sl.nodes = l->nodes;
    sl.depth = l->depth;
    if (!l->nodes && l->depth <= 0)
        for (int c = RED; c <= BLACK; c++) {
            sl.time[c] = l->time_ms[c];
            sl.inc[c] = l->inc_ms[c];
        }
    int64_t t0 = clock_now_us();
    engine_reset_stop(p->engine);
    if (l->stop && atomic_load(l->stop)) {
        r->fault = GAME_ABANDONED;
        return;
    }
    SearchResult res;
    engine_search(p->engine, v->board, &sl, NULL, NULL, &res);
    r->time_us = clock_now_us() - t0;
    if (l->stop && atomic_load(l->stop)) {
        r->fault = GAME_ABANDONED;
        return;
    }
    r->move = res.best;
    r->has_score = res.depth > 0;
    r->score = res.score;
    r->depth = res.depth;
}

void player_think(Player *p, const GameView *v, const ThinkLimits *l, Reply *r)
{
    memset(r, 0, sizeof *r);
    if (p->external)
        external_think(p->external, v, l, r);
    else
        builtin_think(p, v, l, r);
}

void player_interrupt(Player *p)
{
    if (p->engine)
        engine_stop(p->engine);
}

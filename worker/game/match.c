#include "match.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "player.h"
#include "rng.h"

/* A pair with one game finished, waiting for the other. */
typedef struct {
    int64_t pair;            /* -1: free */
    int done;                /* games finished */
    PairResult result;
} PairSlot;

typedef struct {
    Match *match;
    pthread_t thread;
    Player *players[2];      /* registered while the thread plays; guarded by the lock */
    bool failed;
} Worker;

struct Match {
    MatchConfig config;
    const Book *book;
    int *order;              /* opening index per pair mod book size */
    pthread_mutex_t lock;
    pthread_cond_t changed;
    atomic_bool stop;
    MatchCounts counts;
    /* the current match_play_pairs call */
    const MatchCallbacks *cb;
    int64_t next_game, end_game;
    int running;
    PairSlot *slots;
    Worker *workers;
    char failure[256];       /* why the first game that could not be played was not ("" none) */
};

Match *match_new(const MatchConfig *config, const Book *book)
{
    Match *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->config = *config;
    m->book = book;
    int n = book_size(book), c = config->concurrency;
    m->order = malloc(sizeof *m->order * (size_t)n);
    m->slots = malloc(sizeof *m->slots * (size_t)(c + 1));
    m->workers = calloc((size_t)c, sizeof *m->workers);
    pthread_condattr_t attr;
    bool ok = m->order && m->slots && m->workers && pthread_condattr_init(&attr) == 0;
    if (ok) {
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        ok = pthread_cond_init(&m->changed, &attr) == 0;
        pthread_condattr_destroy(&attr);
    }
    if (!ok) {
        free(m->order);
        free(m->slots);
        free(m->workers);
        free(m);
        return NULL;
    }
    pthread_mutex_init(&m->lock, NULL);
    atomic_init(&m->stop, false);
    Rng rng;
    rng_seed(&rng, config->seed);
    for (int i = 0; i < n; i++)
        m->order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(&rng, (uint32_t)i + 1), t = m->order[i];
        m->order[i] = m->order[j];
        m->order[j] = t;
    }
    return m;
}

void match_destroy(Match **mp)
{
    Match *m = *mp;
    if (!m)
        return;
    pthread_mutex_destroy(&m->lock);
    pthread_cond_destroy(&m->changed);
    free(m->order);
    free(m->slots);
    free(m->workers);
    free(m);
    *mp = NULL;
}

/* Sets the stop flag and interrupts every running search. Under the lock. */
static void stop_locked(Match *m)
{
    atomic_store(&m->stop, true);
    for (int i = 0; i < m->config.concurrency; i++)
        for (int p = 0; p < 2; p++)
            if (m->workers[i].players[p])
                player_interrupt(m->workers[i].players[p]);
    pthread_cond_broadcast(&m->changed);
}

/* Stops the match: running games are abandoned, their searches interrupted. Thread-safe. */
static void match_stop(Match *m)
{
    pthread_mutex_lock(&m->lock);
    stop_locked(m);
    pthread_mutex_unlock(&m->lock);
}

void match_counts(Match *m, MatchCounts *out)
{
    pthread_mutex_lock(&m->lock);
    *out = m->counts;
    pthread_mutex_unlock(&m->lock);
}

/* The slot of a pair, taking a free one for its first game. Under the lock. */
static PairSlot *pair_slot(Match *m, int64_t pair)
{
    PairSlot *free_slot = NULL;
    for (int i = 0; i <= m->config.concurrency; i++) {
        if (m->slots[i].pair == pair)
            return &m->slots[i];
        if (m->slots[i].pair < 0 && !free_slot)
            free_slot = &m->slots[i];
    }
    /* At most concurrency + 1 pairs are ever incomplete (see match_play_pairs). */
    free_slot->pair = pair;
    free_slot->done = 0;
    return free_slot;
}

int match_points(const GameRecord *g, int game)
{
    return g->result == RESULT_DRAW ? 1 : (g->result == RESULT_RED_WINS) == (game == 0) ? 2 : 0;
}

/* Counts a finished game and, when its pair is complete, the pair. Under the lock. */
static void count_game(Match *m, const GameRecord *g, int64_t pair, int game, int opening)
{
    MatchCounts *c = &m->counts;
    int points = match_points(g, game);
    c->games++;
    c->wins += points == 2;
    c->draws += points == 1;
    c->losses += points == 0;
    c->by_reason[g->reason]++;
    if (points != 1)
        c->lost_by[points == 2 ? 1 : 0][g->reason]++;

    PairSlot *slot = pair_slot(m, pair);
    slot->result.pair = pair;
    slot->result.opening = opening;
    slot->result.points[game] = points;
    slot->result.reason[game] = g->reason;
    slot->done++;
    if (m->cb->game_done)
        m->cb->game_done(m->cb->ctx, g, &slot->result, game);
    if (slot->done < 2)
        return;
    slot->pair = -1;
    c->pairs++;
    c->penta[slot->result.points[0] + slot->result.points[1]]++;
    if (m->cb->pair_done && m->cb->pair_done(m->cb->ctx, &slot->result, c))
        stop_locked(m);
}

/* Takes the next game to play; false when there is none (or the match stopped). */
static bool next_game(Match *m, int64_t *game)
{
    pthread_mutex_lock(&m->lock);
    bool ok = !atomic_load(&m->stop) && m->next_game < m->end_game;
    if (ok)
        *game = m->next_game++;
    pthread_mutex_unlock(&m->lock);
    return ok;
}

static void *worker_main(void *arg)
{
    Worker *w = arg;
    Match *m = w->match;
    int64_t t0 = clock_now_us(), search_us = 0;
    Player *players[2] = { player_new(&m->config.players[0]), player_new(&m->config.players[1]) };
    w->failed = !players[0] || !players[1];
    pthread_mutex_lock(&m->lock);
    w->players[0] = players[0];
    w->players[1] = players[1];
    if (w->failed && !m->failure[0])
        snprintf(m->failure, sizeof m->failure, "out of memory for the players");
    pthread_mutex_unlock(&m->lock);
    GameRecord g;
    game_record_init(&g);
    int64_t index;
    while (!w->failed && next_game(m, &index)) {
        int64_t pair = index / 2;
        int game = (int)(index % 2);
        int opening = m->order[pair % book_size(m->book)];
        Player *first = players[0], *second = players[1];
        TimeControl tc = time_control_game(&m->config.tc, game == 0);
        int rc = game_play(game == 0 ? first : second, game == 0 ? second : first,
                           book_opening(m->book, opening), &tc, &m->config.adj,
                           &m->stop, &g);
        search_us += g.search_us;
        w->failed = rc != 0;
        pthread_mutex_lock(&m->lock);
        if (w->failed && !m->failure[0])
            snprintf(m->failure, sizeof m->failure, "%s", g.detail);
        if (rc == 0 && g.reason != GAME_ABANDONED)
            count_game(m, &g, pair, game, opening);
        pthread_mutex_unlock(&m->lock);
    }
    game_record_free(&g);
    pthread_mutex_lock(&m->lock);
    w->players[0] = w->players[1] = NULL;
    pthread_mutex_unlock(&m->lock);
    player_destroy(&players[0]);
    player_destroy(&players[1]);
    pthread_mutex_lock(&m->lock);
    m->counts.search_us += search_us;
    m->counts.thread_us += clock_now_us() - t0;
    m->running--;
    if (w->failed)
        stop_locked(m);
    pthread_cond_broadcast(&m->changed);
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

/* Waits up to ms for the threads to end (under the lock); true when they have. */
static bool wait_threads(Match *m, int ms)
{
    struct timespec ts = clock_deadline(CLOCK_MONOTONIC, ms);
    while (m->running > 0)
        if (pthread_cond_timedwait(&m->changed, &m->lock, &ts) == ETIMEDOUT)
            break;
    return m->running == 0;
}

int match_play_pairs(Match *m, int64_t first_pair, int64_t n_pairs, const MatchCallbacks *cb)
{
    /*
     * Games are handed out in order, so an incomplete pair has a game
     * running, except the last pair handed out: concurrency + 1 slots.
     */
    m->cb = cb;
    m->next_game = first_pair * 2;
    m->end_game = (first_pair + n_pairs) * 2;
    for (int i = 0; i <= m->config.concurrency; i++)
        m->slots[i].pair = -1;
    int started = 0;
    bool failed = false;
    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < m->config.concurrency; i++) {
        Worker *w = &m->workers[i];
        w->match = m;
        w->failed = false;
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
            failed = true;
            snprintf(m->failure, sizeof m->failure, "cannot start a game thread");
            atomic_store(&m->stop, true);
            break;
        }
        started++;
        m->running++;
    }
    int tick_ms = cb->tick_ms > 0 ? cb->tick_ms : 100;
    while (!wait_threads(m, tick_ms)) {
        MatchCounts snapshot = m->counts;
        pthread_mutex_unlock(&m->lock);
        if (cb->tick && cb->tick(cb->ctx, &snapshot))
            match_stop(m);
        pthread_mutex_lock(&m->lock);
    }
    pthread_mutex_unlock(&m->lock);
    for (int i = 0; i < started; i++) {
        pthread_join(m->workers[i].thread, NULL);
        failed |= m->workers[i].failed;
    }
    return failed ? -1 : 0;
}

const char *match_failure(const Match *m)
{
    return m->failure;
}

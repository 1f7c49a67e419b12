#include "task.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "book.h"
#include "gamepack.h"
#include "games.h"
#include "match.h"
#include "param_set.h"
#include "player.h"
#include "run_kind.h"
#include "spec.h"

enum { MOVE_TIMEOUT_MS = 30000 };

/* A pair of a task: its games finished so far. */
typedef struct {
    int done;
    int points[2];           /* first player's half-points in game 0 and 1 */
    GameReason reason[2];
} PairState;

/* A data-generation run's task (kind "data"): its games start with random plies after the opening. */
typedef struct {
    bool on;
    int random_plies;
    uint64_t seed;           /* the run's data_seed */
    int64_t first_game;      /* run-wide index of the task's game 0 */
} TaskData;

struct Task {
    PlayerSpec players[2];   /* [0] is the first player */
    TimeControl tc;
    Adjudication adj;
    Book *book;              /* opening k for pair k */
    int64_t pairs;
    int threads;             /* each engine's search threads: a game of it takes this many of the pool's cores */
    TaskPool *pool;          /* once started */
    Task *next;              /* in the pool's queue */
    atomic_bool stop;
    /* under the pool's lock once started */
    int64_t next_game;       /* games handed out, 0 .. 2 * pairs: pair = game / 2 */
    int running;             /* games being played */
    PairState *pair_state;
    int64_t counted;         /* pairs counted: always the first ones (see game_ended) */
    TaskCounts counts;
    char failed[256];        /* why a game could not be played (the first such), "" while every one could */
    TaskData data;           /* data runs: random plies */
    /*
     * Every game's record, one per game index (games.h, with its length),
     * in form (games.h): written by the thread that played the game before
     * game_ended counts it.
     */
    PackBuf *records;
    unsigned form;
};

typedef struct {
    TaskPool *pool;
    pthread_t thread;
    Player *players[2];      /* the thread's own, kept between games */
    Task *task;              /* whose game they play; under the lock */
} GameThread;

struct TaskPool {
    pthread_mutex_t lock;
    pthread_cond_t work;     /* a game to take, or quit */
    pthread_cond_t ended;    /* a game ended */
    Task *head;              /* started tasks, oldest first */
    bool quit;
    int notify_fd;
    int cores;               /* the worker's concurrency: games x their threads stay within it */
    int busy;                /* cores the running games take */
    int games;               /* games running */
    int peak;                /* the most games that ran at once */
    int nthreads;            /* started */
    GameThread *threads;
};

static Task *refuse(Task *t, char *err, size_t errlen, const char *fmt, const char *detail)
{
    snprintf(err, errlen, fmt, detail);
    task_destroy(&t);
    return NULL;
}

/*
 * A player: the built-in engine with the defaults and "Name=value,..."
 * over them, checked against the built-in table; or (engine set) that
 * engine build with the set sent as options.  A build may know parameters
 * this worker's table does not (a branch's new switch) and lack some it
 * has, so its set is checked for its syntax only (param_set.h: nothing
 * but an identifier and an integer goes into a `setoption` line); the
 * build itself judges the names and the values (external.h: a refusal
 * hands the task back).  A build is spoken to as xqf-engine when the task
 * names no engine for its player (ours), else as the task says that
 * engine's record does: protocol, dialect, the commands after the
 * handshake, and its hash and threads options by their names (none sent
 * for a name "").  Each player has its own engine fields: the two sides
 * of a run may be two engines (ours against another's, a gauntlet's run).
 */
typedef char WordBuf[SPEC_TEXT_MAX + 16];

/* How one player's engine is spoken to: the task's fields of that player. */
typedef struct {
    const char *engine, *proto, *hash_option, *threads_option, *net_option;
    bool ranks1, he_letters;
    const XqfStrs *init;
} SideEngine;

static SideEngine side_engine(const XqfMsg_task *m, int k)
{
    return k ? (SideEngine){ m->engine1, m->proto1, m->hash_option1, m->threads_option1, m->net_option1,
                             m->ranks1_1, m->he_letters1, &m->init1 }
             : (SideEngine){ m->engine, m->proto, m->hash_option, m->threads_option, m->net_option, m->ranks1,
                             m->he_letters, &m->init };
}

static int make_player_words(PlayerSpec *p, const XqfMsg_task *m, const SideEngine *se, const char *name,
                             const char *params, const char *engine, const char *sha, const char *net, bool boxed,
                             WordBuf *words_buf, char **words, int max_words, char *err, size_t errlen);

static int make_player(PlayerSpec *p, const XqfMsg_task *m, int k, const char *engine, const char *net, bool boxed,
                       char *err, size_t errlen)
{
    enum { MAX_WORDS = 11 + XQF_INIT_MAX + SPEC_MAX_OPTIONS };
    /* on the heap: an SPSA task of hundreds of options makes this too large for a stack */
    WordBuf *words_buf = malloc(MAX_WORDS * sizeof *words_buf);
    char **words = malloc(MAX_WORDS * sizeof *words);
    const SideEngine se = side_engine(m, k);
    int rc = words_buf && words ? make_player_words(p, m, &se, k ? m->name1 : m->name0, k ? m->params1 : m->params0,
                                                    engine, k ? m->build1 : m->build0, net, boxed,
                                                    words_buf, words, MAX_WORDS, err, errlen)
                                : (snprintf(err, errlen, "out of memory"), -1);
    free(words);
    free(words_buf);
    return rc;
}

static int make_player_words(PlayerSpec *p, const XqfMsg_task *m, const SideEngine *se, const char *name,
                             const char *params, const char *engine, const char *sha, const char *net, bool boxed,
                             WordBuf *words_buf, char **words, int max_words, char *err, size_t errlen)
{
    int n = 0, hash_mb = (int)m->hash_mb, threads = (int)m->threads;
    bool other = engine && se->engine[0];
    snprintf(words_buf[n++], sizeof words_buf[0], "name=%s", name);
    if (net)
        snprintf(words_buf[n++], sizeof words_buf[0], "net=%s", net);
    if (!other)
        snprintf(words_buf[n++], sizeof words_buf[0], "threads=%d", threads);
    if (engine) {
        snprintf(words_buf[n++], sizeof words_buf[0], "cmd=%s", engine);
        if (!other)
            snprintf(words_buf[n++], sizeof words_buf[0], "preset=xqf-engine");
        else {
            snprintf(words_buf[n++], sizeof words_buf[0], "proto=%s", se->proto);
            snprintf(words_buf[n++], sizeof words_buf[0], "ranks=%d", se->ranks1 ? 1 : 0);
            snprintf(words_buf[n++], sizeof words_buf[0], "letters=%s", se->he_letters ? "he" : "nb");
            for (uint32_t i = 0; i < se->init->count && i < XQF_INIT_MAX; i++)
                snprintf(words_buf[n++], sizeof words_buf[0], "init=%s", se->init->v[i]);
            if (se->hash_option[0])
                snprintf(words_buf[n++], sizeof words_buf[0], "option.%s=%d", se->hash_option, hash_mb);
            if (se->threads_option[0] && threads > 1)
                snprintf(words_buf[n++], sizeof words_buf[0], "option.%s=%d", se->threads_option, threads);
            /* the net a side evaluates with goes by the record's option name (Pikafish's EvalFile, ...) */
            if (se->net_option[0])
                snprintf(words_buf[n++], sizeof words_buf[0], "netopt=%s", se->net_option);
            hash_mb = 0;     /* sent by its own name above, or not at all */
        }
        XqfSetItem item;
        int rc;
        while ((rc = xqf_set_next(&params, &item, err, errlen)) > 0) {
            if (n == max_words) {
                snprintf(err, errlen, "more than %d options for an engine build", SPEC_MAX_OPTIONS);
                return -1;
            }
            /* an integer, or another engine's float option as the decimal written (param_set.h) */
            if (item.is_decimal)
                snprintf(words_buf[n++], sizeof words_buf[0], "option.%s=%s", item.name, item.text);
            else
                snprintf(words_buf[n++], sizeof words_buf[0], "option.%s=%d", item.name, item.value);
        }
        if (rc < 0)
            return -1;
    }
    for (int i = 0; i < n; i++)
        words[i] = words_buf[i];
    if (spec_parse(p, n, words, hash_mb, err, errlen) != 0)
        return -1;
    if (engine) {
        snprintf(p->sha256, sizeof p->sha256, "%s", sha);
        p->sandbox = boxed;
        return 0;
    }
    return params_apply_list(&p->params, params, err, errlen);
}

/* The openings as a book, one line each: pair k plays line k. */
static Book *make_book(const XqfStrs *lines, char *err, size_t errlen)
{
    size_t len = 1;
    for (uint32_t i = 0; i < lines->count; i++)
        len += strlen(lines->v[i]) + 1;
    char *text = malloc(len), *end = text;
    if (!text) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    for (uint32_t i = 0; i < lines->count; i++) {
        size_t n = strlen(lines->v[i]);
        memcpy(end, lines->v[i], n);
        end += n;
        *end++ = '\n';
    }
    *end = '\0';
    Book *b = book_parse(text, "task", err, errlen);
    free(text);
    if (b && book_size(b) != (int)lines->count) {
        snprintf(err, errlen, "one opening per line, please (%d openings in %u lines)", book_size(b),
                 lines->count);
        book_destroy(&b);
    }
    return b;
}

/* The data-run part of a task (task.h). 0, or -1 with the reason in err. */
static int task_data_init(Task *t, const XqfMsg_task *m, char *err, size_t errlen)
{
    TaskData *d = &t->data;
    if (m->random_plies < 0 || m->random_plies > XQF_RANDOM_PLIES_MAX || m->first_pair < 0) {
        snprintf(err, errlen, "random plies out of 0-%d, or a negative first pair", XQF_RANDOM_PLIES_MAX);
        return -1;
    }
    d->on = true;
    d->random_plies = (int)m->random_plies;
    d->seed = m->data_seed;
    d->first_game = 2 * m->first_pair;
    t->form = 0;             /* the scores: the positions keep them */
    return 0;
}

/*
 * Plays game index of a data task: the opening with its random plies.
 * Returns game_play's status, -1 too (why in g->detail) when the opening
 * cannot be made.
 */
static int play_data_game(Task *t, Player *red, Player *black, int64_t index, GameRecord *g)
{
    const Opening *base = book_opening(t->book, (int)(index / 2));
    TimeControl game_tc = time_control_game(&t->tc, index % 2 == 0);
    Move *moves = malloc(sizeof *moves * (size_t)(base->count + t->data.random_plies + 1));
    Opening opening;
    int rc = -1;
    if (!moves)
        snprintf(g->detail, sizeof g->detail, "out of memory for the opening's moves");
    else if (gamepack_opening(base, t->data.random_plies, t->data.seed, t->data.first_game + index, moves,
                              &opening) != 0)
        snprintf(g->detail, sizeof g->detail, "the opening's FEN does not parse");
    else
        rc = game_play(red, black, &opening, &game_tc, &t->adj, &t->stop, g);
    free(moves);
    return rc;
}

/*
 * A rule of the task's adjudication (run_settings.def: its field of the
 * task by the column's name) checked against the table's bounds, which
 * the run's column keeps too, and copied into the game's Adjudication.
 */
#define ADJUDICATION_CHECK(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, store, \
                           ctype, shown)                                                                               \
    if (m->store < (lo) || m->store > (hi))                                                                            \
        return refuse(t, err, errlen, "%s", "adjudication: " #store " out of " #lo "-" #hi);
#define ADJUDICATION_COPY(field, TYPE, option, arg, def, lo, hi, help, form_field, label, required, form_help, store, \
                          ctype, shown)                                                                               \
    t->adj.store = (int)m->store;

Task *task_new(const XqfMsg_task *m, const char *build, const char *const engines[2], const char *const nets[2],
               bool boxed, char *err, size_t errlen)
{
    Task *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    atomic_init(&t->stop, false);
    if (m->build[0] && strcmp(m->build, build) != 0)
        return refuse(t, err, errlen, "wrong build: this worker is %s", build);
    if (!run_kind_find(m->kind))
        return refuse(t, err, errlen, "unknown run kind '%s'", m->kind);
    if (m->pairs < 1 || m->pairs > XQF_TASK_PAIRS_MAX || m->openings.count != (uint32_t)m->pairs)
        return refuse(t, err, errlen, "%s", "pairs and openings do not match");
    if (m->hash_mb < 1 || m->hash_mb > 4096)
        return refuse(t, err, errlen, "%s", "hash size out of 1-4096 MB");
    if (m->threads < 1 || m->threads > XQF_THREADS_MAX)
        return refuse(t, err, errlen, "%s", "threads out of 1-64");
    RUN_SETTINGS_ADJUDICATION(ADJUDICATION_CHECK)
    if (m->depth < 0 || m->depth > XQF_DEPTH_MAX)
        return refuse(t, err, errlen, "%s", "depth out of 0-64");
    if (!m->nodes && !m->depth && (m->base_ms <= 0 || m->inc_ms < 0 || m->margin_ms < 0))
        return refuse(t, err, errlen, "%s", "neither nodes, a depth nor a valid clock");
    if (m->base1_ms < 0 || m->inc1_ms < 0 || (m->base1_ms == 0 && m->inc1_ms != 0))
        return refuse(t, err, errlen, "%s", "time odds: not a valid clock for the second player");
    char why[512];
    if (make_player(&t->players[0], m, 0, engines ? engines[0] : NULL, nets ? nets[0] : NULL, boxed, why,
                    sizeof why) != 0 ||
        make_player(&t->players[1], m, 1, engines ? engines[1] : NULL, nets ? nets[1] : NULL, boxed, why,
                    sizeof why) != 0)
        return refuse(t, err, errlen, "players: %s", why);
    if (!(t->book = make_book(&m->openings, why, sizeof why)))
        return refuse(t, err, errlen, "openings: %s", why);
    TimeControl *tc = &t->tc;
    tc->nodes = m->nodes;
    tc->depth = (int)m->depth;
    tc->base_ms = m->base_ms;
    tc->inc_ms = m->inc_ms;
    tc->margin_ms = m->margin_ms;
    tc->base1_ms = m->base1_ms;
    tc->inc1_ms = m->inc1_ms;
    tc->move_timeout_ms = MOVE_TIMEOUT_MS;
    RUN_SETTINGS_ADJUDICATION(ADJUDICATION_COPY)
    t->pairs = m->pairs;
    t->threads = (int)m->threads;
    if (!(t->pair_state = calloc((size_t)m->pairs, sizeof *t->pair_state)) ||
        !(t->records = calloc((size_t)(2 * m->pairs), sizeof *t->records)))
        return refuse(t, err, errlen, "%s", "out of memory");
    t->form = m->scores ? XQF_GAME_DEPTHS : XQF_GAME_MOVES;
    if (run_kind_id(m->kind) == RUN_KIND_DATA && task_data_init(t, m, err, errlen) != 0) {
        task_destroy(&t);
        return NULL;
    }
    return t;
}

static void notify(TaskPool *p)
{
    char byte = 1;
    if (write(p->notify_fd, &byte, 1) < 0) {
        /* a full pipe already wakes the main thread */
    }
}

/* Games left to hand out. Under the lock. */
static int64_t games_left(const Task *t)
{
    return atomic_load(&t->stop) ? 0 : 2 * t->pairs - t->next_game;
}

/* The cores a game of t takes: its threads, at most the pool's (a task needing more is refused before). */
static int game_cores(const TaskPool *p, const Task *t)
{
    return t->threads < 1 ? 1 : t->threads > p->cores ? p->cores : t->threads;
}

/* Every game played, or stopped with none running. Under the lock. */
static bool done_locked(const Task *t)
{
    return t->running == 0 && games_left(t) == 0;
}

/* Stops the task and interrupts the searches of its running games. Under the lock. */
static void stop_locked(Task *t)
{
    atomic_store(&t->stop, true);
    TaskPool *p = t->pool;
    for (int i = 0; i < p->nthreads; i++)
        if (p->threads[i].task == t)
            for (int k = 0; k < 2; k++)
                if (p->threads[i].players[k])
                    player_interrupt(p->threads[i].players[k]);
}

/* Counts a complete pair: pair score 0..4 half-points is LL, LD, DD or WL, WD, WW. */
static void count_pair(TaskCounts *c, const PairState *pair)
{
    c->pairs++;
    for (int g = 0; g < 2; g++) {
        int pts = pair->points[g];
        c->wins += pts == 2;
        c->draws += pts == 1;
        c->losses += pts == 0;
        if ((unsigned)pair->reason[g] < GAME_REASONS)
            c->reasons[pair->reason[g]]++;
    }
    c->penta[pair->points[0] + pair->points[1]]++;
}

/*
 * Records the end of a game of t (rc from game_play; when not 0, why it
 * could not be played: the task stops, kept by its first). Under the lock.
 */
static void game_ended(TaskPool *p, Task *t, int64_t index, int rc, const GameRecord *g, const char *why)
{
    t->running--;
    p->busy -= game_cores(p, t);
    p->games--;
    pthread_cond_broadcast(&p->work);    /* its cores are free: a game that waited for them may start */
    if (rc != 0) {
        if (!t->failed[0])
            snprintf(t->failed, sizeof t->failed, "%s", *why ? why : "a game could not be played");
        stop_locked(t);
    } else if (g->reason != GAME_ABANDONED) {
        int game = (int)(index % 2);
        PairState *pair = &t->pair_state[index / 2];
        pair->points[game] = match_points(g, game);
        pair->reason[game] = g->reason;
        /*
         * Pairs are counted in order only: the task's counts are always its
         * first `counted` pairs.  A re-issued lease plays from first_pair +
         * done pairs, so a later pair that ended first waits for the earlier
         * ones; counted out of order, a cut-short lease would have the same
         * pair played twice and the unfinished one never.
         */
        if (++pair->done == 2) {
            bool more = false;
            while (t->counted < t->pairs && t->pair_state[t->counted].done == 2) {
                count_pair(&t->counts, &t->pair_state[t->counted++]);
                more = true;
            }
            if (more)
                notify(p);
        }
    }
    if (done_locked(t))
        notify(p);
    pthread_cond_broadcast(&p->ended);
}

/* The thread's players with the task's specs; made at the first game or when a spec cannot be set. */
static bool ready_players(GameThread *th, const Task *t)
{
    for (int i = 0; i < 2; i++) {
        if (th->players[i] && player_set_spec(th->players[i], &t->players[i]) != 0)
            player_destroy(&th->players[i]);
        if (!th->players[i] && !(th->players[i] = player_new(&t->players[i])))
            return false;
    }
    return true;
}

static void *game_thread(void *arg)
{
    GameThread *th = arg;
    TaskPool *p = th->pool;
    GameRecord g;
    game_record_init(&g);
    pthread_mutex_lock(&p->lock);
    while (!p->quit) {
        Task *t = p->head;
        while (t && games_left(t) == 0)
            t = t->next;
        /*
         * The oldest task's next game waits until its threads are free
         * (Fishtest's and OpenBench's workers play concurrency / threads
         * games at once): more search threads than cores would slow every
         * game and make its clock mean less.  It is not passed over by a
         * later task's smaller games, which would starve it.
         */
        if (!t || p->busy + game_cores(p, t) > p->cores) {
            pthread_cond_wait(&p->work, &p->lock);
            continue;
        }
        int64_t index = t->next_game++;
        t->running++;
        p->busy += game_cores(p, t);
        p->peak = ++p->games > p->peak ? p->games : p->peak;
        notify(p);           /* the worker may want the next task now */
        pthread_mutex_unlock(&p->lock);
        /* th->task is NULL: nothing else touches the players while they change. */
        bool ready = ready_players(th, t);
        pthread_mutex_lock(&p->lock);
        th->task = t;
        pthread_mutex_unlock(&p->lock);
        Player *first = th->players[0], *second = th->players[1];
        Player *red = index % 2 == 0 ? first : second, *black = index % 2 == 0 ? second : first;
        TimeControl game_tc = time_control_game(&t->tc, red == first);
        int rc = !ready        ? -1
                 : t->data.on ? play_data_game(t, red, black, index, &g)
                              : game_play(red, black, book_opening(t->book, (int)(index / 2)), &game_tc, &t->adj,
                                          &t->stop, &g);
        const char *why = !ready ? "the players could not be made (out of memory, or a net file changed since it "
                                   "was read)" : g.detail;
        /* its record kept before the game is counted */
        PackBuf *rec = &t->records[index];
        rec->len = 0;
        if (rc == 0 && g.reason != GAME_ABANDONED && gamepack_append(&g, t->form, rec) != 0) {
            rc = -1;
            why = "out of memory for the game's record";
        }
        pthread_mutex_lock(&p->lock);
        th->task = NULL;
        game_ended(p, t, index, rc, &g, why);
    }
    pthread_mutex_unlock(&p->lock);
    game_record_free(&g);
    player_destroy(&th->players[0]);
    player_destroy(&th->players[1]);
    return NULL;
}

TaskPool *task_pool_new(int threads, int notify_fd)
{
    TaskPool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->notify_fd = notify_fd;
    p->cores = threads;
    if (!(p->threads = calloc((size_t)threads, sizeof *p->threads))) {
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->ended, NULL);
    for (int i = 0; i < threads; i++) {
        GameThread *th = &p->threads[i];
        th->pool = p;
        if (pthread_create(&th->thread, NULL, game_thread, th) != 0) {
            task_pool_destroy(&p);
            return NULL;
        }
        p->nthreads++;
    }
    return p;
}

void task_pool_destroy(TaskPool **pp)
{
    TaskPool *p = *pp;
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->quit = true;
    for (Task *t = p->head; t; t = t->next)
        stop_locked(t);
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i].thread, NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->ended);
    free(p->threads);
    free(p);
    *pp = NULL;
}

int64_t task_pool_waiting(TaskPool *p)
{
    int64_t n = 0;
    pthread_mutex_lock(&p->lock);
    for (const Task *t = p->head; t; t = t->next)
        n += games_left(t) * game_cores(p, t);
    pthread_mutex_unlock(&p->lock);
    return n;
}

int task_pool_peak(TaskPool *p)
{
    pthread_mutex_lock(&p->lock);
    int peak = p->peak;
    pthread_mutex_unlock(&p->lock);
    return peak;
}

void task_start(Task *t, TaskPool *p)
{
    pthread_mutex_lock(&p->lock);
    t->pool = p;
    Task **end = &p->head;
    while (*end)
        end = &(*end)->next;
    *end = t;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
}

void task_poll(Task *t, TaskCounts *counts, bool *done, char *failed, size_t size)
{
    if (t->pool)
        pthread_mutex_lock(&t->pool->lock);
    *counts = t->counts;
    *done = t->pool && done_locked(t);
    snprintf(failed, size, "%s", t->failed);
    if (t->pool)
        pthread_mutex_unlock(&t->pool->lock);
}

void task_stop(Task *t)
{
    if (!t->pool) {
        atomic_store(&t->stop, true);
        return;
    }
    pthread_mutex_lock(&t->pool->lock);
    stop_locked(t);
    if (done_locked(t))
        notify(t->pool);
    pthread_mutex_unlock(&t->pool->lock);
}

void task_destroy(Task **tp)
{
    Task *t = *tp;
    if (!t)
        return;
    TaskPool *p = t->pool;
    if (p) {
        pthread_mutex_lock(&p->lock);
        stop_locked(t);
        while (t->running > 0)
            pthread_cond_wait(&p->ended, &p->lock);
        Task **at = &p->head;
        while (*at != t)
            at = &(*at)->next;
        *at = t->next;
        pthread_mutex_unlock(&p->lock);
    }
    book_destroy(&t->book);
    for (int64_t i = 0; t->records && i < 2 * t->pairs; i++)
        pack_buf_free(&t->records[i]);
    free(t->records);
    free(t->pair_state);
    free(t);
    *tp = NULL;
}

/* The largest pair's two records (games.h: each a u32 length, then the record): a result holds them. */
_Static_assert(2 * (4 + XQF_GAME_HEAD + 255 + 2 + 5 * (int64_t)XQF_GAME_PLIES_MAX) <= XQF_GAMES_MAX,
               "a pair's two game records fit one result");

int task_report(Task *t, int64_t from, size_t budget, TaskCounts *c, XqfBin *out)
{
    if (out)
        xqf_bin_free(out);
    if (t->pool)
        pthread_mutex_lock(&t->pool->lock);
    from = from < 0 ? 0 : from > t->counted ? t->counted : from;
    int64_t pairs = from;
    size_t len = 0;
    while (pairs < t->counted) {
        size_t more = t->records[2 * pairs].len + t->records[2 * pairs + 1].len;
        if (pairs > from && len + more > budget)
            break;
        len += more;
        pairs++;
    }
    *c = (TaskCounts){ 0 };
    for (int64_t k = 0; k < pairs; k++)
        count_pair(c, &t->pair_state[k]);
    uint8_t *all = out && len ? malloc(len) : NULL;
    for (int64_t i = 2 * from, at = 0; all && i < 2 * pairs; at += (int64_t)t->records[i].len, i++)
        memcpy(all + at, t->records[i].data, t->records[i].len);
    if (t->pool)
        pthread_mutex_unlock(&t->pool->lock);
    if (out && len && !all)
        return -1;
    if (all) {
        out->data = all;
        out->len = (uint32_t)len;
    }
    return 0;
}

#include "task.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "book.h"
#include "match.h"
#include "spec.h"

enum { MOVE_TIMEOUT_MS = 30000, TICK_MS = 100 };

struct Task {
    MatchConfig config;
    Book *book;
    Match *match;
    int64_t pairs;
    pthread_t thread;
    bool started;
    int notify_fd;
    atomic_bool stop;
    pthread_mutex_t lock;
    TaskCounts counts;
    bool done, failed;
};

static Task *refuse(Task *t, char *err, size_t errlen, const char *fmt, const char *detail)
{
    snprintf(err, errlen, fmt, detail);
    task_destroy(&t);
    return NULL;
}

/* A player: the built-in engine with the defaults and "Name=value,..." over them. */
static int make_player(PlayerSpec *p, const char *name, const char *params, int hash_mb, char *err,
                       size_t errlen)
{
    char word[96];
    snprintf(word, sizeof word, "name=%s", name);
    char *words[1] = { word };
    if (spec_parse(p, 1, words, hash_mb, err, errlen) != 0)
        return -1;
    return *params ? params_apply_list(&p->params, params, err, errlen) : 0;
}

/* The openings as a book: book_load reads files, so they go through a temporary one. */
static Book *make_book(const XqfStrs *lines, char *err, size_t errlen)
{
    const char *dir = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/xqf-task-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        snprintf(err, errlen, "cannot write a temporary book: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    for (uint32_t i = 0; i < lines->count; i++)
        fprintf(f, "%s\n", lines->v[i]);
    Book *b = fclose(f) == 0 ? book_load(path, err, errlen) : NULL;
    unlink(path);
    return b;
}

Task *task_new(const XqfMsg_task *m, const char *build, char *err, size_t errlen)
{
    Task *t = calloc(1, sizeof *t);
    if (!t || pthread_mutex_init(&t->lock, NULL) != 0) {
        free(t);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    atomic_init(&t->stop, false);
    t->notify_fd = -1;
    if (m->build[0] && strcmp(m->build, build) != 0)
        return refuse(t, err, errlen, "wrong build: this worker is %s", build);
    if (strcmp(m->kind, "sprt") != 0 && strcmp(m->kind, "spsa") != 0)
        return refuse(t, err, errlen, "unknown run kind '%s'", m->kind);
    if (m->pairs < 1 || m->pairs > XQF_TASK_PAIRS_MAX || m->openings.count != (uint32_t)m->pairs)
        return refuse(t, err, errlen, "%s", "pairs and openings do not match");
    if (m->hash_mb < 1 || m->hash_mb > 4096)
        return refuse(t, err, errlen, "%s", "hash size out of 1-4096 MB");
    if (m->adjudication.count != 6)
        return refuse(t, err, errlen, "%s", "adjudication needs 6 values");
    for (int i = 0; i < 6; i++)
        if (m->adjudication.v[i] < 0 || m->adjudication.v[i] > 100000)
            return refuse(t, err, errlen, "%s", "adjudication values out of 0-100000");
    if (!m->nodes && (m->base_ms <= 0 || m->inc_ms < 0 || m->margin_ms < 0))
        return refuse(t, err, errlen, "%s", "neither nodes nor a valid clock");
    char why[512];
    if (make_player(&t->config.players[0], m->name0, m->params0, (int)m->hash_mb, why, sizeof why) != 0 ||
        make_player(&t->config.players[1], m->name1, m->params1, (int)m->hash_mb, why, sizeof why) != 0)
        return refuse(t, err, errlen, "parameters: %s", why);
    if (!(t->book = make_book(&m->openings, why, sizeof why)))
        return refuse(t, err, errlen, "openings: %s", why);
    TimeControl *tc = &t->config.tc;
    tc->nodes = m->nodes;
    tc->base_ms = m->base_ms;
    tc->inc_ms = m->inc_ms;
    tc->margin_ms = m->margin_ms;
    tc->move_timeout_ms = MOVE_TIMEOUT_MS;
    const int64_t *a = m->adjudication.v;
    t->config.adj = (Adjudication){ (int)a[0], (int)a[1], (int)a[2], (int)a[3], (int)a[4], (int)a[5] };
    t->config.concurrency = 1;
    t->config.seed = m->seed;
    t->pairs = m->pairs;
    if (!(t->match = match_new(&t->config, t->book)))
        return refuse(t, err, errlen, "%s", "out of memory");
    return t;
}

static void notify(Task *t)
{
    char byte = 1;
    if (t->notify_fd >= 0 && write(t->notify_fd, &byte, 1) < 0) {
        /* a full pipe already wakes the main thread */
    }
}

static bool on_pair(void *ctx, const PairResult *pair, const MatchCounts *totals)
{
    (void)totals;
    Task *t = ctx;
    pthread_mutex_lock(&t->lock);
    TaskCounts *c = &t->counts;
    c->pairs++;
    for (int g = 0; g < 2; g++) {
        int pts = pair->points[g];
        if (pts == 2)
            c->wins++;
        else if (pts == 1)
            c->draws++;
        else
            c->losses++;
        if ((unsigned)pair->reason[g] < GAME_REASONS)
            c->reasons[pair->reason[g]]++;
    }
    /* pair score 0..4 half-points: LL, LD, DD or WL, WD, WW */
    c->penta[pair->points[0] + pair->points[1]]++;
    pthread_mutex_unlock(&t->lock);
    notify(t);
    return atomic_load(&t->stop);
}

static bool on_tick(void *ctx, const MatchCounts *totals)
{
    (void)totals;
    return atomic_load(&((Task *)ctx)->stop);
}

static void *play(void *arg)
{
    Task *t = arg;
    MatchCallbacks cb = { NULL, on_pair, on_tick, TICK_MS, t };
    int rc = match_play_pairs(t->match, 0, t->pairs, &cb);
    pthread_mutex_lock(&t->lock);
    t->done = true;
    t->failed = rc != 0;
    pthread_mutex_unlock(&t->lock);
    notify(t);
    return NULL;
}

int task_start(Task *t, int notify_fd)
{
    t->notify_fd = notify_fd;
    if (pthread_create(&t->thread, NULL, play, t) != 0)
        return -1;
    t->started = true;
    return 0;
}

void task_poll(Task *t, TaskCounts *counts, bool *done, bool *failed)
{
    pthread_mutex_lock(&t->lock);
    *counts = t->counts;
    *done = t->done;
    *failed = t->failed;
    pthread_mutex_unlock(&t->lock);
}

void task_stop(Task *t)
{
    atomic_store(&t->stop, true);
    if (t->match)
        match_stop(t->match);
}

void task_destroy(Task **tp)
{
    Task *t = *tp;
    if (!t)
        return;
    if (t->started) {
        task_stop(t);
        pthread_join(t->thread, NULL);
    }
    match_destroy(&t->match);
    book_destroy(&t->book);
    pthread_mutex_destroy(&t->lock);
    free(t);
    *tp = NULL;
}

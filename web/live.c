/*
 * live.c - pushed updates: a listener thread with its own database
 * connection LISTENs for "xqf_run_progress" (011_web.sql: one NOTIFY per
 * run per committed batch) and "xqf_runs" (runs created or changed
 * state), renders each run's new numbers at most every THROTTLE_MS, and
 * keeps the newest event of each run in a table; the event streams
 * (http.c, one thread per connection) wait on a condition variable and
 * send what is newer than their cursor.  Events are whole snapshots, so
 * a stream that misses one loses nothing but a chart point.
 */
#include "live.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "pages.h"
#include "store_web.h"

enum { THROTTLE_MS = 250, DIRTY_MAX = 1024, RECONNECT_MS = 1000, EVENT_SLOTS = 512 };

/* The newest event of one run (run -1: the list of runs changed). */
typedef struct {
    int64_t run;
    uint64_t seq;
    char *text;                      /* "event: ...\ndata: ...\n\n" */
} Event;

struct Live {
    char *db;                        /* the listener's conninfo */
    pthread_mutex_t ev_lock;         /* everything below */
    pthread_cond_t ev_cond;
    Event events[EVENT_SLOTS];
    uint64_t seq;
    bool stopping;
    pthread_t listener;
    bool listening;
};

/* Publishes text (taken) as run's newest event (under ev_lock) and wakes the streams. */
static void publish(Live *lv, int64_t run, char *text)
{
    pthread_mutex_lock(&lv->ev_lock);
    Event *slot = NULL;
    for (int i = 0; i < EVENT_SLOTS && !slot; i++)
        if (lv->events[i].text && lv->events[i].run == run)
            slot = &lv->events[i];
    for (int i = 0; i < EVENT_SLOTS && !slot; i++)
        if (!lv->events[i].text)
            slot = &lv->events[i];
    if (!slot) {                     /* full: the oldest event goes */
        slot = &lv->events[0];
        for (int i = 1; i < EVENT_SLOTS; i++)
            if (lv->events[i].seq < slot->seq)
                slot = &lv->events[i];
    }
    free(slot->text);
    slot->run = run;
    slot->text = text;
    slot->seq = ++lv->seq;
    pthread_cond_broadcast(&lv->ev_cond);
    pthread_mutex_unlock(&lv->ev_lock);
}

LiveCursor live_cursor(Live *lv, int64_t run)
{
    pthread_mutex_lock(&lv->ev_lock);
    LiveCursor c = { run, lv->seq };
    pthread_mutex_unlock(&lv->ev_lock);
    return c;
}

/* Appends the events newer than *c that it watches; returns how many (under ev_lock). */
static int collect(Live *lv, LiveCursor *c, Buf *out)
{
    int n = 0;
    uint64_t newest = c->seq;
    for (int i = 0; i < EVENT_SLOTS; i++) {
        const Event *e = &lv->events[i];
        if (!e->text || e->seq <= c->seq)
            continue;
        if (c->run == 0 || e->run == c->run) {
            buf_puts(out, e->text);
            n++;
        }
        if (e->seq > newest)
            newest = e->seq;
    }
    c->seq = newest;
    return n;
}

int live_wait(Live *lv, LiveCursor *c, Buf *out, int timeout_ms)
{
    struct timespec until = clock_deadline(CLOCK_REALTIME, timeout_ms);
    pthread_mutex_lock(&lv->ev_lock);
    int n = 0, rc = 0;
    while (!lv->stopping && (n = collect(lv, c, out)) == 0 && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&lv->ev_cond, &lv->ev_lock, &until);
    bool stopping = lv->stopping;
    pthread_mutex_unlock(&lv->ev_lock);
    return stopping ? -1 : n > 0;
}

/* ---- the listener thread -------------------------------------------------------- */

typedef struct {
    int64_t run, last_ms;
    bool dirty;
} Dirty;

static bool stopping(Live *lv)
{
    pthread_mutex_lock(&lv->ev_lock);
    bool s = lv->stopping;
    pthread_mutex_unlock(&lv->ev_lock);
    return s;
}

/* Marks run changed (a full table forgets the quietest run). */
static void mark(Dirty *d, int *n, int64_t run)
{
    int i = 0;
    while (i < *n && d[i].run != run)
        i++;
    if (i == *n && *n < DIRTY_MAX)
        (*n)++;
    else if (i == *n) {              /* full: the run pushed longest ago goes */
        i = 0;
        for (int j = 1; j < *n; j++)
            if (d[j].last_ms < d[i].last_ms)
                i = j;
    }
    if (d[i].run != run)
        d[i] = (Dirty){ .run = run };
    d[i].dirty = true;
}

static void *listen_main(void *arg)
{
    Live *lv = arg;
    Store *s = store_new(lv->db);
    Dirty *dirty = calloc(DIRTY_MAX, sizeof *dirty);
    int ndirty = 0;
    int64_t runs[256];
    while (s && dirty && !stopping(lv)) {
        if (!store_ok(s) && (store_connect(s) != 0 || store_web_session(s) != 0 || store_web_listen(s) != 0)) {
            store_destroy(&s);
            s = store_new(lv->db);
            struct timespec t = { RECONNECT_MS / 1000, 0 };
            nanosleep(&t, NULL);
            continue;
        }
        struct pollfd p = { .fd = store_socket(s), .events = POLLIN };
        poll(&p, 1, THROTTLE_MS / 2);
        bool list = false;
        int n = store_web_notices(s, runs, 256, &list);
        for (int i = 0; i < n; i++)
            mark(dirty, &ndirty, runs[i]);
        if (list)
            publish(lv, -1, strdup("event: runs\ndata: {}\n\n"));
        int64_t now = clock_now_ms();
        for (int i = 0; i < ndirty && store_ok(s); i++) {
            if (!dirty[i].dirty || now - dirty[i].last_ms < THROTTLE_MS)
                continue;
            Buf b = { 0 };
            if (page_run_event(s, dirty[i].run, &b) == 1) {
                char *text = buf_take(&b, NULL);
                if (text)
                    publish(lv, dirty[i].run, text);
            }
            buf_free(&b);
            dirty[i].dirty = false;
            dirty[i].last_ms = now;
        }
    }
    free(dirty);
    store_destroy(&s);
    return NULL;
}

Live *live_new(const char *db)
{
    Live *lv = calloc(1, sizeof *lv);
    if (!lv || !(lv->db = strdup(db))) {
        free(lv);
        return NULL;
    }
    pthread_mutex_init(&lv->ev_lock, NULL);
    pthread_cond_init(&lv->ev_cond, NULL);
    if (pthread_create(&lv->listener, NULL, listen_main, lv) != 0) {
        live_destroy(&lv);
        return NULL;
    }
    lv->listening = true;
    return lv;
}

void live_stop(Live *lv)
{
    pthread_mutex_lock(&lv->ev_lock);
    lv->stopping = true;
    pthread_cond_broadcast(&lv->ev_cond);
    pthread_mutex_unlock(&lv->ev_lock);
    if (lv->listening)
        pthread_join(lv->listener, NULL);
    lv->listening = false;
}

void live_destroy(Live **lp)
{
    Live *lv = *lp;
    if (!lv)
        return;
    live_stop(lv);
    for (int i = 0; i < EVENT_SLOTS; i++)
        free(lv->events[i].text);
    pthread_mutex_destroy(&lv->ev_lock);
    pthread_cond_destroy(&lv->ev_cond);
    free(lv->db);
    free(lv);
    *lp = NULL;
}

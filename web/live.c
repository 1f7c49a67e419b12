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
#include "app.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "store_web.h"

enum { THROTTLE_MS = 250, DIRTY_MAX = 1024, RECONNECT_MS = 1000 };

/* Publishes text (taken) as run's newest event (under ev_lock) and wakes the streams. */
static void publish(Web *w, int64_t run, char *text)
{
    pthread_mutex_lock(&w->ev_lock);
    Event *slot = NULL;
    for (int i = 0; i < EVENT_SLOTS && !slot; i++)
        if (w->events[i].text && w->events[i].run == run)
            slot = &w->events[i];
    for (int i = 0; i < EVENT_SLOTS && !slot; i++)
        if (!w->events[i].text)
            slot = &w->events[i];
    if (!slot) {                     /* full: the oldest event goes */
        slot = &w->events[0];
        for (int i = 1; i < EVENT_SLOTS; i++)
            if (w->events[i].seq < slot->seq)
                slot = &w->events[i];
    }
    free(slot->text);
    slot->run = run;
    slot->text = text;
    slot->seq = ++w->seq;
    pthread_cond_broadcast(&w->ev_cond);
    pthread_mutex_unlock(&w->ev_lock);
}

WebCursor web_cursor(Web *w, int64_t run)
{
    pthread_mutex_lock(&w->ev_lock);
    WebCursor c = { run, w->seq };
    pthread_mutex_unlock(&w->ev_lock);
    return c;
}

/* Appends the events newer than *c that it watches; returns how many (under ev_lock). */
static int collect(Web *w, WebCursor *c, Buf *out)
{
    int n = 0;
    uint64_t newest = c->seq;
    for (int i = 0; i < EVENT_SLOTS; i++) {
        const Event *e = &w->events[i];
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

int web_wait(Web *w, WebCursor *c, Buf *out, int timeout_ms)
{
    struct timespec until = clock_deadline(CLOCK_REALTIME, timeout_ms);
    pthread_mutex_lock(&w->ev_lock);
    int n = 0, rc = 0;
    while (!w->stopping && (n = collect(w, c, out)) == 0 && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&w->ev_cond, &w->ev_lock, &until);
    bool stopping = w->stopping;
    pthread_mutex_unlock(&w->ev_lock);
    return stopping ? -1 : n > 0;
}

int web_streams(Web *w, int delta)
{
    pthread_mutex_lock(&w->ev_lock);
    int n = w->streams += delta;
    pthread_mutex_unlock(&w->ev_lock);
    return n;
}

/* ---- the listener thread -------------------------------------------------------- */

typedef struct {
    int64_t run, last_ms;
    bool dirty;
} Dirty;

static bool stopping(Web *w)
{
    pthread_mutex_lock(&w->ev_lock);
    bool s = w->stopping;
    pthread_mutex_unlock(&w->ev_lock);
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
    Web *w = arg;
    Store *s = store_new(w->cfg.db);
    Dirty *dirty = calloc(DIRTY_MAX, sizeof *dirty);
    int ndirty = 0;
    int64_t runs[256];
    while (s && dirty && !stopping(w)) {
        if (!store_ok(s) && (store_connect(s) != 0 || store_web_session(s) != 0 || store_web_listen(s) != 0)) {
            store_destroy(&s);
            s = store_new(w->cfg.db);
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
            publish(w, -1, strdup("event: runs\ndata: {}\n\n"));
        int64_t now = clock_now_ms();
        for (int i = 0; i < ndirty && store_ok(s); i++) {
            if (!dirty[i].dirty || now - dirty[i].last_ms < THROTTLE_MS)
                continue;
            Buf b = { 0 };
            if (page_run_event(s, dirty[i].run, &b) == 1) {
                char *text = buf_take(&b, NULL);
                if (text)
                    publish(w, dirty[i].run, text);
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

int live_start(Web *w)
{
    if (pthread_create(&w->listener, NULL, listen_main, w) != 0)
        return -1;
    w->listening = true;
    return 0;
}

void live_stop(Web *w)
{
    pthread_mutex_lock(&w->ev_lock);
    w->stopping = true;
    pthread_cond_broadcast(&w->ev_cond);
    pthread_mutex_unlock(&w->ev_lock);
    if (w->listening)
        pthread_join(w->listener, NULL);
    w->listening = false;
}

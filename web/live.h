/*
 * live.h - pushed updates (Server-Sent Events): a listener thread, with
 * its own database connection, turns the store's notifications into each
 * run's newest event; the event streams wait for what is newer than their
 * cursor.  The dashboard (web.c) owns one and hands its streams over
 * (web.h: web_cursor, web_wait).
 */
#ifndef XQF_WEB_LIVE_H
#define XQF_WEB_LIVE_H

#include <stdint.h>

#include "buf.h"

typedef struct Live Live;

typedef struct {
    int64_t run;                     /* the run watched, 0: every run (the runs page) */
    uint64_t seq;                    /* the newest event already sent */
} LiveCursor;

/* Starts the listener on the database db (libpq conninfo, copied). NULL on failure. */
Live *live_new(const char *db);
/* Stops the listener and wakes every stream (they answer -1 from then on). Safe twice. */
void live_stop(Live *l);
/* Stops and frees. Safe twice. */
void live_destroy(Live **l);

/* A cursor at the newest event: what a new stream starts from. */
LiveCursor live_cursor(Live *l, int64_t run);
/* Waits up to timeout_ms for events newer than *c, written to out: 1 (written), 0 (timed out) or -1 (stopping). */
int live_wait(Live *l, LiveCursor *c, Buf *out, int timeout_ms);

#endif

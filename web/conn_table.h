/*
 * conn_table.h - xqf-web's table of open connections by client: who may open
 * one more, and who may hold one more live page (event stream).
 *
 * A client is an address as login_address_key writes it: an IPv6 address
 * by its /64 (whoever has one address there has 2^64), an IPv4 address as
 * it is.  A client may hold at most its fair share of what is free:
 *
 *     share = min(per_client, max(2, free / clients))
 *
 * where free is the table's free places and clients the clients holding
 * one (the asker included).  The share shrinks as the table fills, so a few
 * clients cannot take it all: k clients arriving one after another leave
 * about max / (k + 1) places free, and the table fills only when about
 * max / 2 clients hold two each; a newcomer (who holds none) gets in
 * whenever one place is free.  Max-min fairness in its simplest form, as
 * the scheduler shares tasks between keys (sched.h): a client below its
 * share is never refused while a client above it holds more.
 *
 * Event streams (a live page: a connection held for as long as the page
 * is open) are bounded apart, by the same rule over their own table:
 * at most streams_max at once (half the connections at most, so that
 * streams never take the table from pages) and streams_per_client's fair
 * share for one client.  A stream is a connection too.
 *
 * Not thread-safe: http.c holds it under its lock.
 */
#ifndef XQF_WEB_CONN_TABLE_H
#define XQF_WEB_CONN_TABLE_H

#include <stdbool.h>

#include "login.h"

typedef struct {
    char key[LIMIT_KEY_MAX + 1];     /* the client (login_address_key); "" free */
    int conns, streams;              /* its connections, and of these its event streams */
} ConnSlot;

typedef struct {
    ConnSlot *slots;
    int size;                        /* max: a connection counts under one client at a time */
    int max, per_client, streams_max, streams_per_client;
    int conns, streams;              /* in all */
    int clients, stream_clients;     /* clients holding a connection, a stream */
} ConnTable;

/* A table of max connections. 0, or -1 out of memory (or a bound below 1, or streams_max over max / 2). */
int conns_init(ConnTable *t, int max, int per_client, int streams_max, int streams_per_client);
void conns_free(ConnTable *t);
/* The connections address holds. */
int conns_held(const ConnTable *t, const char *address);
/* Whether address may open one more connection: one place free and it holds less than its share. */
bool conns_may_open(const ConnTable *t, const char *address);
/* A connection of address opened (delta 1) or closed (-1); counted whether or not conns_may_open said so. */
void conns_count(ConnTable *t, const char *address, int delta);
/*
 * A connection counted under from is now to's (behind a proxy, the client a
 * request came for).  Whether to held less than its share before: when not,
 * the connection is to's all the same, and should be closed.
 */
bool conns_move(ConnTable *t, const char *from, const char *to);
/* Whether address (holding a connection) may open one more event stream; when it may, it is counted. */
bool conns_stream_open(ConnTable *t, const char *address);
/* An event stream of address ended. */
void conns_stream_close(ConnTable *t, const char *address);

#endif

/*
 * peers.h - the coordinator's table of connections: a routing id (the
 * transport's Peer) -> the worker that said hello on it, its build and
 * when it was last heard.
 *
 * An open-addressing table.  A worker that leaves (bye) keeps its slot
 * with worker 0, and one that vanished (kill -9, a lost link: ZeroMQ does
 * not tell a ROUTER) keeps a slot it never uses again; both are dropped
 * when the table is rebuilt, which happens when it fills, so its size
 * follows the live workers rather than every connection ever made.  A
 * worker dropped while alive (silent for PEER_IDLE_MS) is answered "say
 * hello first" and is back at once.
 */
#ifndef XQF_PEERS_H
#define XQF_PEERS_H

#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "transport.h"

typedef struct {
    Peer peer;
    int64_t worker;                  /* 0: left */
    int64_t seen_ms;                 /* last message */
    char build[XQF_NAME_MAX + 1];
} PeerEntry;

typedef struct {
    PeerEntry *v;
    size_t cap, count;               /* count: slots in use, left ones included */
} Peers;

/* The live entry of p (its last-heard time refreshed), or NULL (unknown, or left). */
PeerEntry *peer_find(Peers *ps, const Peer *p);
/* Records a worker for a routing id (the table grows or is rebuilt as needed). 0 or -1. */
int peer_set(Peers *ps, const Peer *p, int64_t worker, const char *build);
/* Frees the table; it is empty (and usable) again. */
void peers_free(Peers *ps);

#endif

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
 *
 * Bounded: at most `max` live workers (peers_init; a hello beyond that is
 * refused, peer_set returning -2, until idle ones are evicted), each with
 * at most one build chunk in flight (PeerChunk).
 */
#ifndef XQF_PEERS_H
#define XQF_PEERS_H

#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "notes.h"
#include "transport.h"

/* The build chunk sent to a peer and not yet acknowledged (by its asking for the next one). */
typedef struct {
    char sha256[XQF_SHA256_HEX + 1]; /* "" none in flight */
    uint64_t offset, next;           /* the chunk's bytes [offset, next) */
    int64_t sent_ms;
    int lost;                        /* chunks in a row never acknowledged */
    uint64_t by;                     /* the message it answers (the server's count): a redo of it may have it again */
} PeerChunk;

typedef struct {
    Peer peer;
    int64_t worker;                  /* 0: left */
    int64_t seen_ms;                 /* last message */
    char build[XQF_NAME_MAX + 1];
    int concurrency;                 /* as its hello announced */
    PeerChunk chunk;
} PeerEntry;

typedef struct {
    PeerEntry *v;
    size_t cap, count;               /* count: slots in use, left ones included */
    size_t max;                      /* live workers at most (0: PEERS_MAX_DEFAULT) */
    int64_t refused;                 /* hellos refused for want of room */
    Notes notes;                     /* the refusals' log lines */
} Peers;

enum { PEERS_MAX_DEFAULT = 10000 };

/* The live entry of p (its last-heard time refreshed), or NULL (unknown, or left). */
PeerEntry *peer_find(Peers *ps, const Peer *p);
/*
 * Records a worker for a routing id (the table grows or is rebuilt as
 * needed, idle entries evicted).  0, -2 when the table holds its most
 * live workers already (refused, logged once a minute), -1 out of memory.
 */
int peer_set(Peers *ps, const Peer *p, int64_t worker, const char *build, int concurrency);
/* Frees the table; it is empty (and usable) again. */
void peers_free(Peers *ps);

#endif

/*
 * peers.h - the coordinator's table of connections: a routing id (the
 * transport's Peer) -> the worker that said hello on it, its build and
 * when it was last heard.
 *
 * An open-addressing table, with an index by worker id and one by the
 * descriptor of the connection each hello came on.  A worker that
 * leaves (bye) keeps its slot with worker 0; one that vanished (kill -9,
 * a lost link) keeps a slot it never uses again; both are dropped when
 * the table is rebuilt, which happens when it fills, so its size follows
 * the live workers rather than every connection ever made.
 *
 * Gone workers are noticed four ways.  ZeroMQ does not say which routing
 * id a disconnect was (ZMQ_ROUTER_NOTIFY is a draft option, refused by
 * Debian's libzmq 4.3.4); the socket monitor's disconnect event names a
 * file descriptor, and each message the descriptor it came from, so the
 * transport numbers each connection it accepts (conns.h) and every entry
 * keeps the descriptor and number of the connection its hello came on
 * (Peer.fd, Peer.conn):
 * - when that connection closes (the worker's process ended or closed its
 *   socket, with or without bye: its kernel sends FIN or RST; or the
 *   transport shut it down), peers_closed takes the entry out of the
 *   counts at once: its place under --max-peers and --key-peers is free
 *   for a newcomer.  The number, not the descriptor alone, says which
 *   connection closed: descriptors are reused at once in a storm.  The
 *   entry stays, so the messages the worker sent before it closed and
 *   the loop reads after are still answered (into the void); its leases
 *   belong to the worker id in the database, not to the connection: they
 *   go on (or expire) as before.
 * - a hello under a worker name that holds an entry already (the same
 *   worker reconnected: ZeroMQ gave it a new routing id) takes that
 *   entry's place at once, whether its old connection's close was seen
 *   or not.
 * - a link that died without a word (a cable cut, a host that lost power,
 *   a NAT that forgot it) closes nothing here until TCP gives up on it
 *   (minutes, and only once written to), so silence remains the
 *   fallback: a worker silent for PEER_MISSED heartbeat intervals (the
 *   welcome's heartbeat_ms; at least PEER_GONE_MIN_MS, over the 1-2 s an
 *   idle worker waits between requests) is not live: it counts for
 *   nothing.
 * - when the table holds its most live workers, a newcomer evicts the
 *   longest-silent one if that one has missed a heartbeat at least
 *   (silent for two heartbeat intervals, at least PEER_QUIET_MIN_MS); only when
 *   every live worker spoke more recently is the newcomer refused.  One
 *   scan of a full table (at most every PEER_RESCAN_MS) drops the gone
 *   and queues the silent longest-silent first, so a flood of newcomers
 *   to a table of vanished workers costs a scan, not a scan each.
 * A worker dropped while alive is answered "say hello first" and is back
 * at once.
 *
 * Workers keep ZeroMQ's own routing ids (no ZMQ_ROUTING_ID): a fixed one
 * would make a ROUTER refuse the reconnection of a worker whose old TCP
 * link it has not yet seen die (or, with ZMQ_ROUTER_HANDOVER, let anyone
 * who knows a worker's id take its replies); the worker is known by its
 * name and key at hello, which is what replaces an entry.  Knowing each
 * connection's close does not change that: a fixed id would still be
 * refused while its dead link lasts (the case the close does not cover),
 * and a name already finds its entry, whatever its id.
 *
 * Keys: every entry belongs to its connection's key (the CURVE
 * allow-list name, Peer.user; in plaintext each worker is a key of its
 * own).  A key has at most `key_max` live workers (Peers.key_max; a hello
 * for one more first evicts that key's own longest-silent worker that
 * missed a heartbeat, else is refused, peer_set returning -3).  When the
 * table holds its most and nobody missed a heartbeat, a newcomer of a
 * key holding fewer entries than the greediest key (two fewer at least,
 * so that the evicted one's return does not evict back) takes the place
 * of that key's longest-silent worker: one key's names filling the table
 * cannot keep another key out (max-min fairness between keys, as
 * fair queuing shares a link between flows).
 *
 * Bounded: at most `max` live workers (Peers.max; a hello beyond that is
 * refused, peer_set returning -2), each with at most one build chunk in
 * flight (PeerChunk).
 */
#ifndef XQF_PEERS_H
#define XQF_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "notes.h"
#include "transport.h"

/* The build chunk sent to a peer and not yet known to have reached it (server.c: chunk_allowed). */
typedef struct {
    char sha256[XQF_SHA256_HEX + 1]; /* "" none in flight */
    uint64_t offset, next;           /* the chunk's bytes [offset, next) */
    uint64_t due;                    /* out of the coordinator once its connection's TCP acknowledged this many
                                        bytes (0: not measured, ipc: asking for the next acknowledges it) */
    int64_t sent_ms;
    int lost;                        /* chunks in a row never acknowledged */
    uint64_t by;                     /* the message it answers (the server's count): a redo of it may have it again */
} PeerChunk;

typedef struct {
    Peer peer;
    uint64_t key;                    /* its key (Peer.user hashed, or its worker in plaintext) */
    int64_t worker;                  /* 0: left */
    bool closed;                     /* its connection closed: counts for nothing, its last messages still answered */
    int64_t seen_ms;                 /* last message */
    char build[XQF_NAME_MAX + 1];
    int concurrency;                 /* as its hello announced */
    unsigned protocol;               /* the protocol version of its hello's frame (0: not said) */
    PeerChunk chunk;
} PeerEntry;

typedef struct {
    PeerEntry *v;
    struct PeerByWorker *by;         /* worker id -> its slot in v, same capacity */
    size_t cap, count;               /* count: slots in use, left ones included */
    size_t by_count;                 /* keys in by (stale ones included) */
    size_t active;                   /* entries with a worker on a connection not known closed (silent ones too,
                                        until a scan or rebuild drops them) */
    size_t *by_fd;                   /* a connection's descriptor -> 1 + the slot in v of its hello's entry (0 none) */
    size_t fd_cap;
    struct PeerQuiet *quiet;         /* the last scan's workers that missed a heartbeat, longest-silent first */
    size_t nquiet, quiet_at;         /* how many, and the next to evict */
    int64_t scanned_ms;              /* when the table was last scanned for room */
    size_t max;                      /* live workers at most (0: PEERS_MAX_DEFAULT) */
    size_t key_max;                  /* live workers of one key at most (0: PEERS_KEY_MAX_DEFAULT) */
    struct PeerKey *keys;            /* key -> its entries with a worker (open addressing, keys_cap slots) */
    size_t keys_cap, keys_used;      /* slots, and slots with a key (zero counts too, until a recount) */
    size_t keys_live;                /* keys with a count */
    int64_t heartbeat_ms;            /* the interval workers are told (0: PEERS_HEARTBEAT_DEFAULT_MS) */
    int64_t refused;                 /* hellos refused for want of room */
    int64_t evicted;                 /* silent workers dropped for a newcomer */
    int64_t replaced;                /* entries taken over by a hello under the same worker */
    int64_t key_refused;             /* hellos refused: their key has key_max live workers */
    int64_t shared;                  /* workers of the greediest key evicted for another key's newcomer */
    int64_t disconnected;            /* entries no longer counted: their connection closed */
    Notes notes;                     /* the refusals' log lines */
} Peers;

enum {
    PEERS_MAX_DEFAULT = 10000,
    PEERS_KEY_MAX_DEFAULT = 64,
    PEERS_HEARTBEAT_DEFAULT_MS = 10000,
    PEER_MISSED = 3,                 /* heartbeats missed: the worker is gone */
    PEER_GONE_MIN_MS = 5000,
    PEER_QUIET_MIN_MS = 2500,        /* over the 2 s retry of a worker at its lease cap */
    PEER_RESCAN_MS = 1000            /* a full table is scanned for room at most this often */
};

/* The live entry of p (its last-heard time refreshed), or NULL (unknown, or left). */
PeerEntry *peer_find(Peers *ps, const Peer *p);
/*
 * Records a worker for a routing id (the table grows or is rebuilt as
 * needed): the worker's entry under another routing id is dropped, and
 * when the table holds its most live workers the longest-silent is
 * evicted if it missed a heartbeat, else the longest-silent of the key
 * holding the most entries, when that key holds at least two more than
 * this one's.  0, -2 when the table is full and neither could be
 * evicted, -3 when the key has key_max live workers and none of them
 * missed a heartbeat (both refused, logged once a minute), -1 out of
 * memory.
 */
int peer_set(Peers *ps, const Peer *p, int64_t worker, const char *build, int concurrency);
/* Drops e (NULL: nothing): the worker left, or its hello was not committed. */
void peer_drop(Peers *ps, PeerEntry *e);
/*
 * The connection numbered conn on descriptor fd closed (transport_closed):
 * the entry whose hello came on it, if it still has a worker, counts no
 * more against the bounds (peer_find still finds it, for the messages it
 * sent before it closed that are yet to be read).  Anything else (an
 * entry of a later connection under fd, none) is left as it is.
 */
void peers_closed(Peers *ps, int fd, uint64_t conn);
/* Live workers: heard within PEER_MISSED heartbeats, their connection not known closed (a scan of the table). */
size_t peers_live(const Peers *ps);
/* Live workers whose protocol version is below protocol (a rolling upgrade's workers yet to update). */
size_t peers_live_below(const Peers *ps, unsigned protocol);
/* The key of a connection's worker: its CURVE name, or in plaintext the worker itself. */
uint64_t peers_key(const Peer *p, int64_t worker);
/* Entries with a worker under key (gone ones too, until a scan or rebuild drops them). */
size_t peers_of_key(const Peers *ps, uint64_t key);
/* Keys with an entry with a worker: the keys sharing the cluster now. */
size_t peers_keys(const Peers *ps);
/* Frees the table; it is empty (and usable) again. */
void peers_free(Peers *ps);

#endif

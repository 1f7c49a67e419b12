/*
 * conns.h - the coordinator's open connections, by file descriptor: when
 * each was accepted, when it last sent a message, and the key it belongs
 * to once it sent one; and how many open connections each key holds.
 * Pure bookkeeping (no ZeroMQ, no system calls): the transport feeds it
 * the socket monitor's events and each message's source descriptor, and
 * closes what it says is due (transport.c says how, and why that is
 * safe).
 *
 * Why by descriptor: ZeroMQ 4.3.4 (Debian's, without its draft API) tells
 * the application about a ROUTER's connections only through the socket
 * monitor, whose ACCEPTED and DISCONNECTED events carry the connection's
 * file descriptor, and through a message's ZMQ_SRCFD (the descriptor it
 * was read from).  The ZAP handler sees a connection's key but neither its
 * descriptor nor its port; ZMQ_ROUTER_NOTIFY is a draft option.  So a
 * connection's key is learnt from its first message (its CURVE User-Id),
 * and a connection is known by its descriptor from its accept to its
 * disconnect.
 *
 * The bounds (ConnsLimits):
 * - first_ms: a connection sends its first message within first_ms of its
 *   accept (its handshake included), else it is closed: one that
 *   handshakes and says nothing has no key to count against, so it may
 *   not stay.  A key makes at most --key-hellos handshakes a minute (the
 *   ZAP handler), so it holds at most key_hellos x first_ms / 60 s such
 *   connections at once.
 * - key_max: a key holds at most key_max connections that sent a message.
 *   The first message of one more first makes room by evicting the key's
 *   longest-silent connection, if it was silent quiet_ms at least (a
 *   worker whose link died without a word: its TCP connection stays open
 *   here until written to, so a key whose links are cut again and again
 *   would otherwise fill its count with the dead); else the newcomer is
 *   refused (CONNS_REFUSED: answered with the limit) and closed grace_ms
 *   later, time for that answer to go out.  Its further messages, and
 *   those of a connection due to close, are CONNS_CLOSING (dropped).
 * Connections without a key (plaintext: each its own) are bounded by
 * first_ms only.
 */
#ifndef XQF_CONNS_H
#define XQF_CONNS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct Conns Conns;

typedef struct {
    int key_max;                     /* connections a key may hold (that sent a message); <= 0: no limit */
    int64_t first_ms;                /* a connection's first message within this of its accept; <= 0: no bound */
    int64_t quiet_ms;                /* a key at key_max gives up a connection silent this long; <= 0: never */
    int64_t grace_ms;                /* a refused connection is closed this long after its refusal */
} ConnsLimits;

typedef enum {
    CONNS_OK,                        /* the message may pass */
    CONNS_REFUSED,                   /* its connection is one too many for its key: answer it with the limit */
    CONNS_CLOSING                    /* its connection is being closed: drop the message */
} ConnsVerdict;

typedef struct {
    int64_t refused;                 /* connections refused: their key held key_max already */
    int64_t evicted;                 /* a key's silent connections closed to make room for its newcomer */
    int64_t silent;                  /* connections closed for sending no message within first_ms */
} ConnsStats;

/* A table with those limits. NULL: no memory. */
Conns *conns_new(const ConnsLimits *lim);
/* Frees it; *c becomes NULL; safe on NULL. */
void conns_destroy(Conns **c);
/*
 * Descriptor fd was accepted at now_ms; tag tells this connection from a
 * later one under the same number (the transport hashes its peer
 * address).  A number still known as open starts afresh (the monitor's
 * events come in order: its disconnect was read before).  0, or -1 (fd
 * negative, or no memory).
 */
int conns_accepted(Conns *c, int fd, uint64_t tag, int64_t now_ms);
/* Descriptor fd was closed (its disconnect); unknown ones are ignored. */
void conns_closed(Conns *c, int fd);
/*
 * A message came at now_ms on fd from key (its allow-list name; NULL or
 * "": no key).  An fd never seen accepted (its event still on the way) is
 * taken as accepted now, with tag 0.
 */
ConnsVerdict conns_message(Conns *c, int fd, const char *key, int64_t now_ms);
/*
 * The descriptors due to close at now_ms, at most n into fds, with the
 * tags they were accepted with: refused past their grace, evicted, and
 * when drained, silent past first_ms.  Each is returned once and counts
 * for its key no more; its number is forgotten at its disconnect.
 * drained says that every message that had arrived was read (the
 * transport found its queue empty at now_ms): only then is a connection
 * without a message silent, not merely unread (a loop that stalled past
 * first_ms has first messages waiting).  Returns how many.
 */
int conns_due(Conns *c, int64_t now_ms, bool drained, int *fds, uint64_t *tags, int n);
/* Whether fd is known as open (accepted, not yet disconnected). */
bool conns_knows(const Conns *c, int fd);
/*
 * The number of the connection open under fd (0: none known): each
 * accept gets the next (from 1), so it tells a connection from a later
 * one under the same descriptor, for as long as the table lives.
 */
uint64_t conns_id(const Conns *c, int fd);
/* Open connections that sent a message under key (those due to close not counted). */
int conns_of_key(const Conns *c, const char *key);
/* Open connections, with a key or not (those due to close and not yet closed included). */
int conns_open(const Conns *c);
ConnsStats conns_stats(const Conns *c);

#endif

/*
 * transport.h - the coordinator's ZeroMQ ROUTER socket: frames in and out,
 * each with the routing id of the worker that sent it.  The only ZeroMQ
 * code of the coordinator.  Frames above a hard limit (4 x XQF_FRAME_MAX)
 * make ZeroMQ drop the sender's connection; anything else is handed up
 * for the codec to judge.
 */
#ifndef XQF_TRANSPORT_H
#define XQF_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "codec.h"

enum { PEER_ID_MAX = 255 };

typedef struct {
    uint8_t id[PEER_ID_MAX];
    size_t len;
} Peer;

typedef struct Transport Transport;

/* Binds a ROUTER to endpoint ("tcp://127.0.0.1:5555"). NULL (logged) on failure. */
Transport *transport_new(const char *endpoint);
void transport_destroy(Transport **t);

/*
 * Waits up to timeout_ms for a frame, or for fd (>= 0) to be readable.
 * Returns a mask: 1 a frame is waiting, 2 fd is readable; 0 on timeout or
 * a signal; -1 on error.
 */
int transport_wait(Transport *t, int timeout_ms, int fd);
/*
 * Takes one frame without waiting: returns 1 with its sender and bytes in
 * *data, 0 when none is waiting, -1 on error.  Messages that are not
 * [routing id, one frame] are dropped.
 */
int transport_recv(Transport *t, Peer *peer, XqfBuf *data);
/* Sends a frame to a peer without blocking (dropped if the peer is gone or slow). Returns 0 or -1. */
int transport_send(Transport *t, const Peer *peer, const void *data, size_t len);

#endif

/*
 * zmq_monitor.h - reading a ZeroMQ socket monitor's events, the same way
 * on both sides (the coordinator's ROUTER and the worker's DEALER watch
 * their CURVE handshakes with zmq_socket_monitor).  The one place outside
 * the transports that includes zmq.h; the caller owns the monitor socket.
 */
#ifndef XQF_ZMQ_MONITOR_H
#define XQF_ZMQ_MONITOR_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Takes the monitor's next event without waiting: *event (ZMQ_EVENT_...)
 * and *value (an errno, a file descriptor or a ZMQ_PROTOCOL_ERROR_...
 * code, by event), dropping the endpoint frame that follows.  False when
 * no event waits.
 */
bool zmq_monitor_next(void *monitor, uint16_t *event, uint32_t *value);

#endif

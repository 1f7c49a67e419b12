#include "zmq_monitor.h"

#include <string.h>
#include <zmq.h>

bool zmq_monitor_next(void *monitor, uint16_t *event, uint32_t *value)
{
    uint8_t head[6] = { 0 };
    if (zmq_recv(monitor, head, sizeof head, ZMQ_DONTWAIT) < 0)
        return false;
    memcpy(event, head, sizeof *event);
    memcpy(value, head + 2, sizeof *value);
    int more = 0;
    size_t len = sizeof more;
    if (zmq_getsockopt(monitor, ZMQ_RCVMORE, &more, &len) == 0 && more)
        zmq_recv(monitor, head, 0, 0);
    return true;
}

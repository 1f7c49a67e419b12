#define _DEFAULT_SOURCE              /* syscall: the thread's own id */
#include "thread.h"

#include <errno.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

int thread_nice(int inc)
{
    id_t self = (id_t)syscall(SYS_gettid);
    errno = 0;
    int now = getpriority(PRIO_PROCESS, self);
    if (now == -1 && errno)
        return -1;
    return setpriority(PRIO_PROCESS, self, now + inc);
}

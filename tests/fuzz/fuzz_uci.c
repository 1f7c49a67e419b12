/*
 * libFuzzer target: the UCI/UCCI command loop, fed the input as a session
 * on stdin.  It must never crash, hang or leak, whatever the bytes.  End of
 * input stops a running search; `bench` and `go perft` run synchronously
 * for seconds by design, so inputs naming them are skipped.
 */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > 4096 || memmem(data, size, "bench", 5) || memmem(data, size, "perft", 5))
        return 0;
    FILE *in = fmemopen((void *)data, size, "r");
    FILE *out = fopen("/dev/null", "w");
    if (in && out)
        protocol_run(in, out);
    if (in)
        fclose(in);
    if (out)
        fclose(out);
    return 0;
}

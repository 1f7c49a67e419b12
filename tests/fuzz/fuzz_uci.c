/*
 * libFuzzer target: the UCI/UCCI command loop, fed the input as a session
 * on stdin.  It must never crash, hang or leak, whatever the bytes.  End of
 * input stops a running search; `bench` and `go perft` run synchronously
 * for seconds by design, so inputs naming them are skipped, and so are
 * inputs that could set a hash table above 512 MB (legal, up to 4096, but
 * clearing one takes over 10 s under ASan: a timeout that is no bug).
 */
#define _GNU_SOURCE /* memmem */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* True when the input says "hash" (any case) and holds a number above 512. */
static bool big_hash(const uint8_t *data, size_t size)
{
    bool hash = false, big = false;
    unsigned v = 0; /* the digits so far, stopping above 512 */
    for (size_t i = 0; i < size; i++) {
        hash |= i + 4 <= size && strncasecmp((const char *)data + i, "hash", 4) == 0;
        v = !isdigit(data[i]) ? 0 : v > 512 ? v : v * 10 + (unsigned)(data[i] - '0');
        big |= v > 512;
    }
    return hash && big;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > 4096 || memmem(data, size, "bench", 5) || memmem(data, size, "perft", 5) ||
        big_hash(data, size))
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

/*
 * libFuzzer target: the wire codec.  Any bytes decode to a message or to a
 * refusal with a reason, never a crash or leak.  A frame that decodes must
 * encode (decoding enforced every limit), and the encoding must decode to
 * a message that encodes to the same bytes (the encoding is canonical, so
 * this compares every field).  The message is printed either way.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *devnull;
    if (!devnull && !(devnull = fopen("/dev/null", "w")))
        abort();
    XqfMsg m, again;
    XqfBuf a = { 0 }, b = { 0 };
    char err[256];
    XqfDecodeStatus st = xqf_msg_decode(data, size, &m, err, sizeof err);
    xqf_msg_print(&m, devnull);
    if (st != XQF_DECODE_OK) {
        if (err[0] == '\0')
            abort();
        xqf_msg_free(&m);
        return 0;
    }
    if (xqf_msg_encode(&m, &a) != 0)
        abort();
    if (xqf_msg_decode(a.data, a.len, &again, err, sizeof err) != XQF_DECODE_OK || again.type != m.type)
        abort();
    if (xqf_msg_encode(&again, &b) != 0 || a.len != b.len || memcmp(a.data, b.data, a.len) != 0)
        abort();
    xqf_msg_free(&m);
    xqf_msg_free(&again);
    xqf_buf_free(&a);
    xqf_buf_free(&b);
    return 0;
}

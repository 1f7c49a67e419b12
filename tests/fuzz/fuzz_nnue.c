/*
 * libFuzzer target: the net reader (nnue_load_memory).  The first byte
 * picks what the rest is:
 *   even: a net file as it is.  It is refused with a message, or (it would
 *         have to be a whole, well-formed net) read and written back to the
 *         same bytes.
 *   odd:  the makings of a file around a valid header: a description length
 *         and a size change (one byte each, signed), a description, and
 *         weights that repeat the input over the whole body (any int16
 *         and int32 values).  Accepted files are written back to the same
 *         bytes and evaluate a few positions identically on every
 *         arithmetic path (incremental or from scratch), with the
 *         sanitizers watching the arithmetic of weights far outside the
 *         training clamps.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fen.h"
#include "movegen.h"
#include "nnue.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const FENS[] = {
    START_FEN,
    "1rbak4/c4n2r/2na5/2N6/p1b3P1p/3C4P/P1P1P2C1/N7B/4A3R/R1BA1K3 w - - 5 31",
    "3k5/9/9/2n6/9/6c2/9/4N4/4C4/5K3 b - - 0 1",
};

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Written back, the net is the file. */
static void check_round_trip(const NnueNet *net, const uint8_t *file, size_t size)
{
    size_t back_size;
    uint8_t *back = nnue_write_memory(net, &back_size);
    if (!back)
        return;
    if (back_size != size || memcmp(back, file, size) != 0)
        abort();
    free(back);
}

/* Every path, from scratch and along a short line, gives the same evaluations. */
static void check_paths(NnueNet *net)
{
    NnueStack *s = nnue_stack_new();
    if (!s)
        return;
    for (size_t f = 0; f < sizeof FENS / sizeof FENS[0]; f++) {
        Board b;
        char err[128];
        if (fen_parse(&b, FENS[f], FEN_GAME, err, sizeof err) != 0)
            abort();
        for (int ply = 0; ply < 4; ply++) {
            int want = 0;
            for (int path = NNUE_SIMD_PORTABLE; path <= NNUE_SIMD_AVX2; path++) {
                if (nnue_set_simd(net, (NnueSimd)path) != 0)
                    continue;
                if (ply == 0)
                    nnue_stack_reset(s, net, &b);
                int v = nnue_evaluate(net, &b);
                if (path == NNUE_SIMD_PORTABLE)
                    want = v;
                if (v != want || nnue_stack_evaluate(s, net, &b, ply) != want)
                    abort();
            }
            MoveList list;
            movegen_legal(&b, &list);
            if (!list.count)
                break;
            Move m = list.moves[(size_t)ply * 7 % (size_t)list.count];
            nnue_stack_push(s, ply, &b, m);
            board_make(&b, m);
        }
    }
    nnue_stack_destroy(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    if (size == 0)
        return 0;
    const uint8_t *in = data + 1;
    size_t n_in = size - 1;
    uint8_t *file = NULL;
    size_t file_size = n_in;
    if (data[0] % 2 == 0) {
        file = malloc(n_in ? n_in : 1);
        if (!file)
            return 0;
        memcpy(file, in, n_in);
    } else {
        if (n_in < 2)
            return 0;
        uint32_t desc = in[0] % 64;
        int change = (int8_t)in[1];
        in += 2;
        n_in -= 2;
        size_t exact = NNUE_HEADER_BYTES + desc + NNUE_BODY_BYTES;
        file_size = change < 0 && (size_t)-change > exact ? 0 : exact + (size_t)(change > 0 ? change : 0)
                                                                     - (size_t)(change < 0 ? -change : 0);
        file = malloc(exact + 128);
        if (!file)
            return 0;
        memcpy(file, NNUE_MAGIC, 8);
        put32(file + 8, NNUE_VERSION);
        put32(file + 12, nnue_architecture_hash());
        put32(file + 16, desc);
        for (size_t i = NNUE_HEADER_BYTES; i < exact + 128; i++)
            file[i] = n_in ? in[(i - NNUE_HEADER_BYTES) % n_in] : (uint8_t)i;
    }
    err[0] = '\0';
    NnueNet *net = nnue_load_memory(file, file_size, err, sizeof err);
    if (!net) {
        if (err[0] == '\0')
            abort();
    } else {
        check_round_trip(net, file, file_size);
        check_paths(net);
        nnue_destroy(&net);
    }
    free(file);
    return 0;
}

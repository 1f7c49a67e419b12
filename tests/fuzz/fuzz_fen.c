/*
 * libFuzzer target: FEN parsing (both modes) and ICCS move text.  A FEN
 * that parses must print back to a FEN that parses to the same position,
 * and a rejected one must leave the board untouched.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fen.h"
#include "movegen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char text[512];
    if (size >= sizeof text)
        size = sizeof text - 1;
    memcpy(text, data, size);
    text[size] = '\0';

    static Board b, before, again;
    char err[256], fen[FEN_MAX];
    for (int mode = FEN_GAME; mode <= FEN_ANALYSIS; mode++) {
        board_startpos(&b);
        before = b;
        if (fen_parse(&b, text, mode, err, sizeof err) != 0) {
            if (memcmp(&b, &before, sizeof b) != 0 || err[0] == '\0')
                abort();
            continue;
        }
        fen_write(&b, fen);
        if (fen_parse(&again, fen, mode, err, sizeof err) != 0 || board_key(&again) != board_key(&b))
            abort();
        /* The same bytes as a move in the parsed position. */
        Move m;
        if (move_parse(&b, text, &m, err, sizeof err) == 0 && !movegen_is_legal(&b, m))
            abort();
    }
    return 0;
}

#include "perft.h"

#include <inttypes.h>

#include "fen.h"
#include "movegen.h"

uint64_t perft(Board *b, int depth)
{
    if (depth <= 0)
        return 1;
    if (depth == 1)
        return (uint64_t)movegen_count_legal(b);
    MoveList list;
    movegen_legal(b, &list);
    uint64_t nodes = 0;
    for (int i = 0; i < list.count; i++) {
        board_make(b, list.moves[i]);
        nodes += perft(b, depth - 1);
        board_unmake(b);
    }
    return nodes;
}

uint64_t perft_divide(Board *b, int depth, FILE *out)
{
    uint64_t total = 0;
    if (depth >= 1) {
        MoveList list;
        movegen_legal(b, &list);
        for (int i = 0; i < list.count; i++) {
            char text[8];
            board_make(b, list.moves[i]);
            uint64_t n = perft(b, depth - 1);
            board_unmake(b);
            move_text(list.moves[i], text);
            fprintf(out, "%s: %" PRIu64 "\n", text, n);
            total += n;
        }
    } else {
        total = 1;
    }
    fprintf(out, "\nNodes searched: %" PRIu64 "\n", total);
    fflush(out);
    return total;
}

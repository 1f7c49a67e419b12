/*
 * libFuzzer target: training-data records (worker/game/datagen.c).  A record
 * that unpacks must be a legal position that packs back to the same bytes
 * (the reserved byte aside); one that does not must not crash anything.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "datagen.h"
#include "eval.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t rec[DATA_RECORD_BYTES] = { 0 }, again[DATA_RECORD_BYTES];
    memcpy(rec, data, size < sizeof rec ? size : sizeof rec);
    static DataPosition pos;
    if (data_unpack(rec, &pos) != 0)
        return 0;
    if (board_king_attacked(&pos.board, pos.board.side ^ 1))
        abort();
    data_pack(&pos, again);
    rec[51] = 0;
    if (memcmp(rec, again, sizeof rec) != 0)
        abort();
    static Params p;
    static EvalTables t;
    static double coef[PARAM_TOTAL];
    params_default(&p);
    eval_init(&t, &p);
    if (eval_trace(&pos.board, &t, coef) != evaluate(&pos.board, &t))
        abort();
    return 0;
}

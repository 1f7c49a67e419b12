/*
 * libFuzzer target: the parameter-file parser and Name=value lists.  A
 * rejected input leaves the set unchanged; an accepted one keeps every
 * value inside its bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "params.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_bounds(const Params *p)
{
    for (int i = 0; i < PARAM_COUNT; i++) {
        int v = params_value(p, &PARAM_INFO[i]);
        if (v < PARAM_INFO[i].min || v > PARAM_INFO[i].max)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    Params p, before;
    char err[256];
    params_default(&p);
    before = p;
    if (params_parse(&p, text, err, sizeof err) != 0 && !params_equal(&p, &before))
        abort();
    check_bounds(&p);
    params_default(&p);
    if (params_apply_list(&p, text, err, sizeof err) != 0 && !params_equal(&p, &before))
        abort();
    check_bounds(&p);
    free(text);
    return 0;
}

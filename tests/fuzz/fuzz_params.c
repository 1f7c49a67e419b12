/*
 * libFuzzer target: the parameter-file parser and Name=value lists.  A
 * rejected input leaves the set unchanged and says why; an accepted one
 * keeps every value inside its bounds, and a file that changed the set is
 * written back (params_write) to a file that reads as the same set.
 */
#include <stdint.h>
#include <stdio.h>
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

/* params_write then params_parse gives back p. */
static void check_round_trip(const Params *p)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return;
    int rc = params_write(p, f);
    fclose(f);
    Params back;
    char err[256];
    params_default(&back);
    if (rc != 0 || params_parse(&back, text, err, sizeof err) != 0 || !params_equal(&back, p) ||
        params_hash(&back) != params_hash(p))
        abort();
    free(text);
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
    err[0] = '\0';
    if (params_parse(&p, text, err, sizeof err) != 0) {
        if (!params_equal(&p, &before) || err[0] == '\0')
            abort();
    } else if (!params_equal(&p, &before)) {
        check_round_trip(&p);
    }
    check_bounds(&p);
    params_default(&p);
    err[0] = '\0';
    if (params_apply_list(&p, text, err, sizeof err) != 0 && (!params_equal(&p, &before) || err[0] == '\0'))
        abort();
    check_bounds(&p);
    free(text);
    return 0;
}

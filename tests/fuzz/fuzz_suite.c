/*
 * libFuzzer target: suites of positions (worker/game/tactics.c): book lines
 * with EPD operations.  Any text must give a suite or a message naming
 * its line, never a crash; a suite has at least one position, each with
 * an am or bm move.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tactics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char err[256];
    Suite *s = suite_parse(text, "fuzz", err, sizeof err);
    if (s) {
        if (suite_size(s) < 1)
            abort();
        for (int i = 0; i < suite_size(s); i++)
            if (strlen(suite_id(s, i)) >= 160)
                abort();
    } else if (strncmp(err, "fuzz:", 5) != 0) {
        abort(); /* every message names the text */
    }
    suite_destroy(&s);
    free(text);
    return 0;
}

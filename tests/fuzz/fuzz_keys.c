/*
 * libFuzzer target: the text formats of plumbing/keys.h that come from
 * files an operator edits: the trust file of operator keys (trust_parse)
 * and the allow-list (allow_parse).  Any input is parsed without a crash
 * or a leak; an accepted trust file holds 1-TRUST_MAX_KEYS keys, and a
 * signature made by none of them verifies against none; an accepted
 * allow-list has valid, unique names and keys, sorted by name.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_trust(const char *text)
{
    TrustList t;
    char err[512];
    if (trust_parse(text, "fuzz", &t, err, sizeof err) != 0) {
        if (!err[0])
            abort();
        return;
    }
    if (t.count < 1 || t.count > TRUST_MAX_KEYS)
        abort();
    static const char SHA[] = "0000000000000000000000000000000000000000000000000000000000000000";
    char zeros[SIGN_SIG_HEX + 1];
    memset(zeros, '0', SIGN_SIG_HEX);
    zeros[SIGN_SIG_HEX] = '\0';
    if (trust_verify_build(&t, SHA, "fuzz", zeros, err, sizeof err) == 0 ||
        trust_verify_build(&t, SHA, "fuzz", "", err, sizeof err) == 0)
        abort();
}

static void check_allow(const char *text)
{
    AllowList a;
    char err[512];
    if (allow_parse(text, "fuzz", &a, err, sizeof err) != 0) {
        if (!err[0] || a.count != 0 || a.v)
            abort();
        return;
    }
    for (int i = 0; i < a.count; i++) {
        if (!keys_name_ok(a.v[i].name) || !keys_z85_ok(a.v[i].key) || allow_find_name(&a, a.v[i].name) != &a.v[i])
            abort();
        if (i > 0 && strcmp(a.v[i - 1].name, a.v[i].name) >= 0)
            abort();
    }
    allow_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';                       /* the files are read as text: a NUL ends them */
    check_trust(text);
    check_allow(text);
    free(text);
    return 0;
}

#include "malformed.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

/* ---- the fields of each type, from messages.def ------------------------------- */

typedef enum { T_U64, T_I64, T_BOOL, T_STR, T_STRS, T_I64S, T_BIN } Kind;

typedef struct {
    const char *name;
    Kind kind;
    size_t limit, limit2;
} Field;

typedef struct {
    const char *name;
    const Field *fields;
    int count;
} Type;

#define DESC(T, n, a, b) { #n, T_##T, (a), (b) },
#define XQF_MSG(ID, name, doc) static const Field FIELDS_##name[] = { XQF_FIELDS_##name(DESC) };
#include "messages.def"
#undef XQF_MSG
#undef DESC

static const Type TYPES[] = {
#define XQF_MSG(ID, name, doc) { #name, FIELDS_##name, (int)(sizeof FIELDS_##name / sizeof(Field)) },
#include "messages.def"
#undef XQF_MSG
};

/* ---- a MessagePack writer --------------------------------------------------------- */

typedef struct {
    uint8_t *b;
    size_t n, cap;
} W;

static void put(W *w, const void *p, size_t len)
{
    if (w->n + len > w->cap) {
        w->cap = (w->n + len) * 2;
        w->b = realloc(w->b, w->cap);
        if (!w->b)
            abort();
    }
    memcpy(w->b + w->n, p, len);
    w->n += len;
}

static void byte(W *w, unsigned v)
{
    uint8_t c = (uint8_t)v;
    put(w, &c, 1);
}

static void be(W *w, uint64_t v, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--)
        byte(w, (unsigned)(v >> (8 * i)) & 0xff);
}

static void str_n(W *w, const char *s, size_t len)
{
    if (len < 32)
        byte(w, 0xa0 | (unsigned)len);
    else if (len < 256)
        byte(w, 0xd9), be(w, len, 1);
    else if (len < 65536)
        byte(w, 0xda), be(w, len, 2);
    else
        byte(w, 0xdb), be(w, len, 4);
    put(w, s, len);
}

static void str(W *w, const char *s) { str_n(w, s, strlen(s)); }
static void uint_(W *w, uint64_t v) { byte(w, 0xcf), be(w, v, 8); }
static void array(W *w, size_t n) { n < 16 ? byte(w, 0x90 | (unsigned)n) : (byte(w, 0xdd), be(w, n, 4)); }
static void map(W *w, size_t n) { n < 16 ? byte(w, 0x80 | (unsigned)n) : (byte(w, 0xdf), be(w, n, 4)); }

static void bin(W *w, size_t n)
{
    byte(w, 0xc6), be(w, n, 4);
    for (size_t i = 0; i < n; i++)
        byte(w, 0x5a);
}

/* A run of 'x' of length n as one string. */
static void str_x(W *w, size_t n)
{
    char *s = malloc(n + 1);
    memset(s, 'x', n);
    str_n(w, s, n);
    free(s);
}

/* A valid value of a field. */
static void good(W *w, const Field *f)
{
    switch (f->kind) {
    case T_U64: byte(w, 1); break;
    case T_I64: byte(w, 2); break;
    case T_BOOL: byte(w, 0xc3); break;
    case T_STR: str(w, "x"); break;
    case T_STRS: array(w, 1), str(w, "x"); break;
    case T_I64S: array(w, 1), byte(w, 1); break;
    case T_BIN: bin(w, 1); break;
    }
}

/* A value of another type. */
static void wrong_type(W *w, const Field *f)
{
    switch (f->kind) {
    case T_U64: case T_I64: case T_BIN: case T_STRS: case T_I64S: str(w, "1"); break;
    case T_BOOL: case T_STR: byte(w, 1); break;
    }
}

/* A value past the field's limit; false when the type has none to break. */
static bool too_big(W *w, const Field *f, int which)
{
    switch (f->kind) {
    case T_U64:
        if (which)
            return false;
        byte(w, 0xff);                                  /* -1 */
        return true;
    case T_I64:
        if (which)
            return false;
        uint_(w, UINT64_MAX);                           /* beyond int64 */
        return true;
    case T_BOOL: return false;
    case T_STR:
        if (which)
            return false;
        str_x(w, f->limit + 1);
        return true;
    case T_STRS:
        if (which == 0) {
            array(w, f->limit + 1);
            for (size_t i = 0; i <= f->limit; i++)
                str(w, "x");
            return true;
        }
        if (which == 1) {
            array(w, 1);
            str_x(w, f->limit2 + 1);
            return true;
        }
        return false;
    case T_I64S:
        if (which)
            return false;
        array(w, f->limit + 1);
        for (size_t i = 0; i <= f->limit; i++)
            byte(w, 1);
        return true;
    case T_BIN:
        if (which)
            return false;
        bin(w, f->limit + 1);
        return true;
    }
    return false;
}

/* Text that is not UTF-8 (which: the case); false past the cases or for a field without text. */
static const char *const NOT_UTF8[] = {
    "\xff",                       /* never a UTF-8 byte */
    "a\xc3",                      /* cut short */
    "\xc0\xaf",                   /* an overlong '/' */
    "\xed\xa0\x80",               /* a UTF-16 surrogate */
    "\xf4\x90\x80\x80",           /* past U+10FFFF */
    "\x80x",                      /* a lone continuation byte */
};

static bool not_utf8(W *w, const Field *f, int which)
{
    if ((f->kind != T_STR && f->kind != T_STRS) || which >= (int)(sizeof NOT_UTF8 / sizeof *NOT_UTF8))
        return false;
    if (f->kind == T_STRS)
        array(w, 2), str(w, "x");
    str(w, NOT_UTF8[which]);
    return true;
}

typedef enum { V_MISSING, V_TWICE, V_TYPE, V_BIG, V_UTF8 } Variant;

/* How many sub-cases a variant has at most. */
static int variant_cases(Variant v)
{
    return v == V_BIG ? 2 : v == V_UTF8 ? (int)(sizeof NOT_UTF8 / sizeof *NOT_UTF8) : 1;
}

/* A frame of type t where field `bad` (or none: -1) is written as variant v (which: its sub-case). */
static void frame(W *w, const Type *t, int bad, Variant v, int which, const char *sig, unsigned version,
                  const char *name, bool extra_key)
{
    int entries = 3 + t->count + (bad >= 0 && v == V_MISSING ? -1 : 0) + (bad >= 0 && v == V_TWICE) + extra_key;
    map(w, (size_t)entries);
    str(w, "sig"), str(w, sig);
    str(w, "v"), byte(w, version);
    str(w, "t"), str(w, name);
    for (int i = 0; i < t->count; i++) {
        const Field *f = &t->fields[i];
        if (i == bad && v == V_MISSING)
            continue;
        str(w, f->name);
        if (i != bad)
            good(w, f);
        else if (v == V_TYPE)
            wrong_type(w, f);
        else if (v == V_BIG)
            too_big(w, f, which);
        else if (v == V_UTF8)
            not_utf8(w, f, which);
        else
            good(w, f);
        if (i == bad && v == V_TWICE)
            str(w, f->name), good(w, f);
    }
    if (extra_key)
        str(w, "no_such_field"), byte(w, 1);
}

int malformed_each(malformed_fn fn, void *arg)
{
    int count = 0;
    W w = { 0 };
    char what[160];
    for (size_t k = 0; k < sizeof TYPES / sizeof TYPES[0]; k++) {
        const Type *t = &TYPES[k];
        for (int i = 0; i < t->count; i++) {
            static const char *const NAMES[] = { "missing", "twice", "of the wrong type", "past its limit",
                                                 "not UTF-8" };
            for (Variant v = V_MISSING; v <= V_UTF8; v++)
                for (int which = 0; which < variant_cases(v); which++) {
                    w.n = 0;
                    if (v == V_BIG || v == V_UTF8) {
                        W probe = { 0 };
                        bool any = v == V_BIG ? too_big(&probe, &t->fields[i], which)
                                              : not_utf8(&probe, &t->fields[i], which);
                        free(probe.b);
                        if (!any)
                            continue;
                    }
                    frame(&w, t, i, v, which, "xqf", XQF_PROTOCOL_VERSION, t->name, false);
                    snprintf(what, sizeof what, "field %s %s%s", t->fields[i].name, NAMES[v],
                             v == V_UTF8 ? (which ? " (another case)" : "")
                                         : which ? " (an element)" : "");
                    fn(t->name, what, w.b, w.n, arg);
                    count++;
                }
        }
        struct { const char *what, *sig; unsigned version; const char *name; bool extra; int cut; } H[] = {
            { "an unknown key", "xqf", XQF_PROTOCOL_VERSION, t->name, true, 0 },
            { "a bad signature", "xqg", XQF_PROTOCOL_VERSION, t->name, false, 0 },
            { "another protocol version", "xqf", XQF_PROTOCOL_VERSION + 1, t->name, false, 0 },
            { "an unknown type name", "xqf", XQF_PROTOCOL_VERSION, "no_such_type", false, 0 },
            { "one byte short", "xqf", XQF_PROTOCOL_VERSION, t->name, false, -1 },
            { "one byte too many", "xqf", XQF_PROTOCOL_VERSION, t->name, false, 1 },
        };
        for (size_t h = 0; h < sizeof H / sizeof H[0]; h++) {
            w.n = 0;
            frame(&w, t, -1, V_MISSING, 0, H[h].sig, H[h].version, H[h].name, H[h].extra);
            if (H[h].cut > 0)
                byte(&w, 0xc0);
            size_t len = H[h].cut < 0 ? w.n - 1 : w.n;
            fn(t->name, H[h].what, w.b, len, arg);
            count++;
        }
    }
    free(w.b);
    return count;
}

int malformed_valid_each(malformed_fn fn, void *arg)
{
    W w = { 0 };
    int count = 0;
    for (size_t k = 0; k < sizeof TYPES / sizeof TYPES[0]; k++, count++) {
        w.n = 0;
        frame(&w, &TYPES[k], -1, V_MISSING, 0, "xqf", XQF_PROTOCOL_VERSION, TYPES[k].name, false);
        fn(TYPES[k].name, "valid", w.b, w.n, arg);
    }
    free(w.b);
    return count;
}

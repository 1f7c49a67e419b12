#include "codec.h"

#include <limits.h>
#include <msgpack.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char SIGNATURE[] = "xqf";
enum { MAX_DEPTH = 3, MAX_FIELDS = 64 };  /* fields in one message (task has 55) */

/* ---- field descriptors, generated from messages.def ---------------------- */

typedef enum { FT_U64, FT_I64, FT_BOOL, FT_STR, FT_STRS, FT_I64S, FT_BIN } FieldType;

typedef struct {
    const char *name;
    FieldType type;
    size_t offset;                 /* in the message's struct */
    size_t limit, limit2;
} Field;

typedef struct {
    const char *name;
    const char *doc;
    const Field *fields;
    int count;
    size_t size;                     /* of its struct: what xqf_msg_init clears */
} MsgInfo;

/* Each message's descriptor, built inside a block where Cur names its struct. */
#define XQF_DESC_FIELD(T, n, a, b) { #n, FT_##T, offsetof(Cur, n), (a), (b) },

static const MsgInfo *msg_info(XqfMsgType type)
{
    switch (type) {
#define XQF_MSG(ID, name, doc)                                                                   \
    case XQF_MSG_##ID: {                                                                         \
        typedef XqfMsg_##name Cur;                                                               \
        static const Field fields[] = { XQF_FIELDS_##name(XQF_DESC_FIELD) };                    \
        static const MsgInfo info = { #name, doc, fields, (int)(sizeof fields / sizeof fields[0]), sizeof(Cur) }; \
        _Static_assert(sizeof fields / sizeof fields[0] <= MAX_FIELDS, #name ": more fields than MAX_FIELDS"); \
        return &info;                                                                            \
    }
#include "messages.def"
#undef XQF_MSG
    default: return NULL;
    }
}

/* The union members all start at the union's address: fields are found from &m->u. */
static void *field_ptr(XqfMsg *m, const Field *f) { return (char *)&m->u + f->offset; }
static const void *field_cptr(const XqfMsg *m, const Field *f)
{
    return (const char *)&m->u + f->offset;
}

const char *xqf_msg_type_name(XqfMsgType type)
{
    const MsgInfo *info = msg_info(type);
    return info ? info->name : "?";
}

XqfErrorCode xqf_decode_error_code(XqfDecodeStatus status)
{
    switch (status) {
    case XQF_DECODE_TOO_BIG: return XQF_ERR_TOO_BIG;
    case XQF_DECODE_VERSION: return XQF_ERR_VERSION;
    case XQF_DECODE_TYPE: return XQF_ERR_TYPE;
    default: return XQF_ERR_MALFORMED;
    }
}

/*
 * Only the type's own member is cleared: the union is as large as its
 * largest message (a task's two sets of up to XQF_PARAMS_MAX bytes), and a
 * heartbeat or an ack cleared whole would cost a coordinator its biggest
 * share of memory traffic (about 70 KB a message).  XQF_MSG_NONE clears
 * nothing: decoding clears the member once it has read the type.
 */
void xqf_msg_init(XqfMsg *m, XqfMsgType type)
{
    const MsgInfo *info = msg_info(type);
    m->type = type;
    m->version = 0;
    if (info)
        memset(&m->u, 0, info->size);
}

void xqf_strs_free(XqfStrs *s)
{
    for (uint32_t i = 0; i < s->count; i++)
        free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->count = 0;
}

int xqf_strs_push(XqfStrs *s, const char *item)
{
    char *copy = strdup(item);
    char **v = copy ? realloc(s->v, sizeof *v * (s->count + 1)) : NULL;
    if (!v) {
        free(copy);
        return -1;
    }
    s->v = v;
    s->v[s->count++] = copy;
    return 0;
}

int xqf_strs_set(XqfStrs *s, uint32_t count, const char *const *items)
{
    xqf_strs_free(s);
    for (uint32_t i = 0; i < count; i++)
        if (xqf_strs_push(s, items[i]) != 0) {
            xqf_strs_free(s);
            return -1;
        }
    return 0;
}

void xqf_bin_free(XqfBin *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
}

int xqf_bin_set(XqfBin *b, const void *data, size_t len)
{
    xqf_bin_free(b);
    if (len > UINT32_MAX || !(b->data = malloc(len ? len : 1)))
        return -1;
    memcpy(b->data, data, len);
    b->len = (uint32_t)len;
    return 0;
}

void xqf_msg_free(XqfMsg *m)
{
    const MsgInfo *info = msg_info(m->type);
    if (!info)
        return;
    for (int i = 0; i < info->count; i++)
        if (info->fields[i].type == FT_STRS)
            xqf_strs_free(field_ptr(m, &info->fields[i]));
        else if (info->fields[i].type == FT_BIN)
            xqf_bin_free(field_ptr(m, &info->fields[i]));
}

void xqf_msg_error(XqfMsg *m, XqfErrorCode code, const char *fmt, ...)
{
    xqf_msg_init(m, XQF_MSG_ERROR);
    m->u.error.code = (uint64_t)code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->u.error.text, sizeof m->u.error.text, fmt, ap);
    va_end(ap);
}

/* ---- encoding ------------------------------------------------------------ */

void xqf_buf_free(XqfBuf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

static int buf_write(void *data, const char *bytes, size_t len)
{
    XqfBuf *b = data;
    if (b->len + len > XQF_FRAME_MAX)
        return -1;
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + len)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d)
            return -1;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, bytes, len);
    b->len += len;
    return 0;
}

static int pack_str(msgpack_packer *pk, const char *s, size_t len)
{
    return msgpack_pack_str(pk, len) == 0 && msgpack_pack_str_body(pk, s, len) == 0 ? 0 : -1;
}

static int pack_cstr(msgpack_packer *pk, const char *s) { return pack_str(pk, s, strlen(s)); }

static int pack_field(msgpack_packer *pk, const XqfMsg *m, const Field *f)
{
    const void *p = field_cptr(m, f);
    if (pack_cstr(pk, f->name) != 0)
        return -1;
    switch (f->type) {
    case FT_U64: return msgpack_pack_uint64(pk, *(const uint64_t *)p);
    case FT_I64: return msgpack_pack_int64(pk, *(const int64_t *)p);
    case FT_BOOL: return *(const bool *)p ? msgpack_pack_true(pk) : msgpack_pack_false(pk);
    case FT_STR: {
        size_t len = strnlen(p, f->limit + 1);
        return len > f->limit ? -1 : pack_str(pk, p, len);
    }
    case FT_STRS: {
        const XqfStrs *s = p;
        if (s->count > f->limit || msgpack_pack_array(pk, s->count) != 0)
            return -1;
        for (uint32_t i = 0; i < s->count; i++) {
            size_t len = strlen(s->v[i]);
            if (len > f->limit2 || pack_str(pk, s->v[i], len) != 0)
                return -1;
        }
        return 0;
    }
    case FT_I64S: {
        const XqfI64s *a = p;
        if (a->count > f->limit || msgpack_pack_array(pk, a->count) != 0)
            return -1;
        for (uint32_t i = 0; i < a->count; i++)
            if (msgpack_pack_int64(pk, a->v[i]) != 0)
                return -1;
        return 0;
    }
    case FT_BIN: {
        const XqfBin *b = p;
        if (b->len > f->limit || msgpack_pack_bin(pk, b->len) != 0)
            return -1;
        return b->len ? msgpack_pack_bin_body(pk, b->data, b->len) : 0;
    }
    }
    return -1;
}

int xqf_msg_encode(const XqfMsg *m, XqfBuf *out)
{
    out->len = 0;
    const MsgInfo *info = msg_info(m->type);
    if (!info)
        return -1;
    msgpack_packer pk;
    msgpack_packer_init(&pk, out, buf_write);
    if (msgpack_pack_map(&pk, 3 + (size_t)info->count) != 0 || pack_cstr(&pk, "sig") != 0 ||
        pack_cstr(&pk, SIGNATURE) != 0 || pack_cstr(&pk, "v") != 0 ||
        msgpack_pack_uint64(&pk, m->version ? m->version : XQF_PROTOCOL_VERSION) != 0 || pack_cstr(&pk, "t") != 0 ||
        pack_cstr(&pk, info->name) != 0)
        return -1;
    for (int i = 0; i < info->count; i++)
        if (pack_field(&pk, m, &info->fields[i]) != 0)
            return -1;
    return 0;
}

/* ---- decoding ------------------------------------------------------------ */

/*
 * Walks one MessagePack value without building it, so that a hostile
 * count (an array of 2^32 elements in a 20-byte frame) is refused before
 * msgpack-c allocates for it: every container must fit in what is left
 * (at least one byte per element), nesting stays shallow, and the type we
 * never send (ext) is refused.  Returns 0 and advances *pos, or -1.
 */
static int skim(const uint8_t *p, size_t len, size_t *pos, int depth)
{
    if (*pos >= len || depth > MAX_DEPTH)
        return -1;
    uint8_t c = p[(*pos)++];
    size_t left = len - *pos, n = 0, skip = 0;
    bool container = false;
    int per = 1;                           /* values per element: 2 for maps */
#define BE(k) ((k) == 1 ? (size_t)p[*pos]                                                         \
               : (k) == 2 ? ((size_t)p[*pos] << 8 | p[*pos + 1])                                   \
               : ((size_t)p[*pos] << 24 | (size_t)p[*pos + 1] << 16 | (size_t)p[*pos + 2] << 8 | p[*pos + 3]))
    if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3)
        return 0;
    if ((c & 0xf0) == 0x80 || (c & 0xf0) == 0x90) {
        n = c & 0x0f;
        per = (c & 0xf0) == 0x80 ? 2 : 1;
        container = true;
    } else if ((c & 0xe0) == 0xa0) {
        skip = c & 0x1f;
    } else {
        switch (c) {
        case 0xca: skip = 4; break;
        case 0xcb: skip = 8; break;
        case 0xcc: case 0xd0: skip = 1; break;
        case 0xcd: case 0xd1: skip = 2; break;
        case 0xce: case 0xd2: skip = 4; break;
        case 0xcf: case 0xd3: skip = 8; break;
        case 0xd9: case 0xda: case 0xdb:        /* str 8/16/32 */
        case 0xc4: case 0xc5: case 0xc6: {      /* bin 8/16/32 */
            size_t k = c == 0xd9 || c == 0xc4 ? 1 : c == 0xda || c == 0xc5 ? 2 : 4;
            if (left < k)
                return -1;
            skip = BE(k);
            *pos += k;
            left -= k;
            break;
        }
        case 0xdc: case 0xdd: case 0xde: case 0xdf: {
            size_t k = c == 0xdc || c == 0xde ? 2 : 4;
            if (left < k)
                return -1;
            n = BE(k);
            *pos += k;
            left -= k;
            per = c >= 0xde ? 2 : 1;
            container = true;
            break;
        }
        default: return -1;                /* 0xc1, ext */
        }
    }
#undef BE
    if (!container) {
        if (skip > left)
            return -1;
        *pos += skip;
        return 0;
    }
    if (n > left / (size_t)per)
        return -1;
    for (size_t i = 0; i < n * (size_t)per; i++)
        if (skim(p, len, pos, depth + 1) != 0)
            return -1;
    return 0;
}

static bool is_str(const msgpack_object *o, const char *s)
{
    size_t n = strlen(s);
    return o->type == MSGPACK_OBJECT_STR && o->via.str.size == n && memcmp(o->via.str.ptr, s, n) == 0;
}

static int get_i64(const msgpack_object *o, int64_t *v)
{
    if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 <= INT64_MAX) {
        *v = (int64_t)o->via.u64;
        return 0;
    }
    if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
        *v = o->via.i64;
        return 0;
    }
    return -1;
}

bool xqf_utf8_valid(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        unsigned c = *p++;
        if (c < 0x80)
            continue;
        int more = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : -1;
        if (more < 0 || end - p < more)
            return false;                            /* a continuation or overlong lead, or cut short */
        unsigned second = p[0];
        /* the second byte's range rules out overlongs (e0, f0), surrogates (ed) and beyond U+10FFFF (f4) */
        unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80, hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
        if (second < lo || second > hi)
            return false;
        for (int i = 1; i < more; i++)
            if ((p[i] & 0xc0) != 0x80)
                return false;
        p += more;
    }
    return true;
}

size_t xqf_text_sanitize(char *out, size_t size, const char *in)
{
    size_t n = 0;
    const unsigned char *p = (const unsigned char *)in;
    while (*p) {
        unsigned c = *p;
        size_t len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        /* the terminator ends a cut sequence: it is no continuation byte */
        bool whole = len > 0 && strnlen((const char *)p, len) == len && xqf_utf8_valid((const char *)p, len);
        if (!whole)
            len = 1;
        if (n + len >= size)
            break;
        /* a C1 control (U+0080-U+009F, c2 80-9f) is a control too: U+009B is CSI to some terminals */
        bool c1 = whole && len == 2 && c == 0xc2 && p[1] <= 0x9f;
        if (!whole)
            out[n] = '?';
        else if (c < 0x20 || c == 0x7f || c1)
            out[n] = ' ';
        else
            memcpy(out + n, p, len);
        n += c1 ? 1 : len;
        p += len;
    }
    out[n] = '\0';
    return n;
}

/* Copies a string object into a C string of at most limit bytes (UTF-8, no NUL inside). */
static int get_str(const msgpack_object *o, size_t limit, char *out)
{
    if (o->type != MSGPACK_OBJECT_STR || o->via.str.size > limit ||
        memchr(o->via.str.ptr, '\0', o->via.str.size) || !xqf_utf8_valid(o->via.str.ptr, o->via.str.size))
        return -1;
    memcpy(out, o->via.str.ptr, o->via.str.size);
    out[o->via.str.size] = '\0';
    return 0;
}

static int unpack_field(XqfMsg *m, const Field *f, const msgpack_object *o)
{
    void *p = field_ptr(m, f);
    switch (f->type) {
    case FT_U64:
        if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
            return -1;
        *(uint64_t *)p = o->via.u64;
        return 0;
    case FT_I64: return get_i64(o, p);
    case FT_BOOL:
        if (o->type != MSGPACK_OBJECT_BOOLEAN)
            return -1;
        *(bool *)p = o->via.boolean;
        return 0;
    case FT_STR: return get_str(o, f->limit, p);
    case FT_STRS: {
        XqfStrs *s = p;
        if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size > f->limit)
            return -1;
        if (o->via.array.size && !(s->v = calloc(o->via.array.size, sizeof *s->v)))
            return -1;
        for (uint32_t i = 0; i < o->via.array.size; i++) {
            const msgpack_object *e = &o->via.array.ptr[i];
            if (e->type != MSGPACK_OBJECT_STR || e->via.str.size > f->limit2 ||
                !(s->v[i] = malloc(e->via.str.size + 1)))
                return -1;
            s->count = i + 1;
            if (get_str(e, f->limit2, s->v[i]) != 0)
                return -1;
        }
        return 0;
    }
    case FT_I64S: {
        XqfI64s *a = p;
        if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size > f->limit)
            return -1;
        for (uint32_t i = 0; i < o->via.array.size; i++)
            if (get_i64(&o->via.array.ptr[i], &a->v[i]) != 0)
                return -1;
        a->count = o->via.array.size;
        return 0;
    }
    case FT_BIN:
        if (o->type != MSGPACK_OBJECT_BIN || o->via.bin.size > f->limit)
            return -1;
        return xqf_bin_set(p, o->via.bin.ptr, o->via.bin.size);
    }
    return -1;
}

static XqfDecodeStatus fail(XqfDecodeStatus st, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static XqfDecodeStatus fail(XqfDecodeStatus st, char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return st;
}

/*
 * Checks the header (sig, v, t) of a map and finds the type; *version gets
 * the frame's version once "v" is read (also when it is refused: the
 * refusal is sent in it, so that the peer can read it).
 */
static XqfDecodeStatus read_header(const msgpack_object_map *map, XqfMsgType *type, unsigned *version, char *err,
                                   size_t errlen)
{
    const msgpack_object *sig = NULL, *ver = NULL, *typ = NULL;
    for (uint32_t i = 0; i < map->size; i++) {
        const msgpack_object *k = &map->ptr[i].key, *v = &map->ptr[i].val;
        const msgpack_object **slot = is_str(k, "sig") ? &sig : is_str(k, "v") ? &ver
                                    : is_str(k, "t") ? &typ : NULL;
        if (slot && *slot)
            return fail(XQF_DECODE_MALFORMED, err, errlen, "duplicate header key");
        if (slot)
            *slot = v;
    }
    if (!sig || !is_str(sig, SIGNATURE))
        return fail(XQF_DECODE_MALFORMED, err, errlen, "no \"sig\": \"%s\" signature", SIGNATURE);
    if (!ver || ver->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return fail(XQF_DECODE_MALFORMED, err, errlen, "no protocol version \"v\"");
    *version = ver->via.u64 > UINT_MAX ? UINT_MAX : (unsigned)ver->via.u64;
    if (ver->via.u64 < XQF_PROTOCOL_OLDEST || ver->via.u64 > XQF_PROTOCOL_VERSION)
        return fail(XQF_DECODE_VERSION, err, errlen, "protocol version %llu, expected %d-%d",
                    (unsigned long long)ver->via.u64, XQF_PROTOCOL_OLDEST, XQF_PROTOCOL_VERSION);
    if (!typ || typ->type != MSGPACK_OBJECT_STR)
        return fail(XQF_DECODE_MALFORMED, err, errlen, "no message type \"t\"");
    for (int t = XQF_MSG_NONE + 1; t < XQF_MSG_COUNT; t++)
        if (is_str(typ, msg_info((XqfMsgType)t)->name)) {
            *type = (XqfMsgType)t;
            return XQF_DECODE_OK;
        }
    return fail(XQF_DECODE_TYPE, err, errlen, "unknown message type '%.*s'",
                (int)(typ->via.str.size > 32 ? 32 : typ->via.str.size), typ->via.str.ptr);
}

static XqfDecodeStatus decode_map(const msgpack_object *root, XqfMsg *out, char *err, size_t errlen)
{
    if (root->type != MSGPACK_OBJECT_MAP)
        return fail(XQF_DECODE_MALFORMED, err, errlen, "a frame must be a map");
    const msgpack_object_map *map = &root->via.map;
    XqfMsgType type = XQF_MSG_NONE;
    unsigned version = 0;
    XqfDecodeStatus st = read_header(map, &type, &version, err, errlen);
    out->version = version;
    if (st != XQF_DECODE_OK)
        return st;
    xqf_msg_init(out, type);
    out->version = version;
    const MsgInfo *info = msg_info(type);
    bool seen[MAX_FIELDS] = { false };
    for (uint32_t i = 0; i < map->size; i++) {
        const msgpack_object *k = &map->ptr[i].key;
        if (is_str(k, "sig") || is_str(k, "v") || is_str(k, "t"))
            continue;
        int f = 0;
        while (f < info->count && !is_str(k, info->fields[f].name))
            f++;
        if (f == info->count)
            return fail(XQF_DECODE_MALFORMED, err, errlen, "%s: unknown field", info->name);
        if (seen[f])
            return fail(XQF_DECODE_MALFORMED, err, errlen, "%s: field %s twice", info->name,
                        info->fields[f].name);
        seen[f] = true;
        if (unpack_field(out, &info->fields[f], &map->ptr[i].val) != 0)
            return fail(XQF_DECODE_MALFORMED, err, errlen, "%s: field %s: wrong type or too large",
                        info->name, info->fields[f].name);
    }
    for (int f = 0; f < info->count; f++)
        if (!seen[f])
            return fail(XQF_DECODE_MALFORMED, err, errlen, "%s: field %s missing", info->name,
                        info->fields[f].name);
    return XQF_DECODE_OK;
}

XqfDecodeStatus xqf_msg_decode(const void *data, size_t len, XqfMsg *out, char *err, size_t errlen)
{
    xqf_msg_init(out, XQF_MSG_NONE);
    if (err && errlen)
        err[0] = '\0';
    if (len > XQF_FRAME_MAX)
        return fail(XQF_DECODE_TOO_BIG, err, errlen, "frame of %zu bytes (limit %d)", len,
                    XQF_FRAME_MAX);
    size_t pos = 0;
    if (len == 0 || skim(data, len, &pos, 0) != 0)
        return fail(XQF_DECODE_MALFORMED, err, errlen, "not one well-formed MessagePack value");
    if (pos != len)
        return fail(XQF_DECODE_MALFORMED, err, errlen, "%zu trailing bytes", len - pos);
    msgpack_unpacked u;
    msgpack_unpacked_init(&u);
    size_t off = 0;
    XqfDecodeStatus st;
    if (msgpack_unpack_next(&u, data, len, &off) != MSGPACK_UNPACK_SUCCESS || off != len)
        st = fail(XQF_DECODE_MALFORMED, err, errlen, "not one well-formed MessagePack value");
    else
        st = decode_map(&u.data, out, err, errlen);
    msgpack_unpacked_destroy(&u);
    if (st != XQF_DECODE_OK) {
        xqf_msg_free(out);
        XqfMsgType t = out->type;
        unsigned version = out->version;
        /* what it claimed to be, its member cleared (a later xqf_msg_free finds nothing to free) */
        xqf_msg_init(out, st == XQF_DECODE_MALFORMED ? t : XQF_MSG_NONE);
        out->version = version;
    }
    return st;
}

/* ---- printing ------------------------------------------------------------ */

void xqf_msg_print(const XqfMsg *m, FILE *out)
{
    const MsgInfo *info = msg_info(m->type);
    if (!info) {
        fputs("(none)\n", out);
        return;
    }
    fputs(info->name, out);
    for (int i = 0; i < info->count; i++) {
        const Field *f = &info->fields[i];
        const void *p = field_cptr(m, f);
        fprintf(out, " %s=", f->name);
        switch (f->type) {
        case FT_U64: fprintf(out, "%llu", (unsigned long long)*(const uint64_t *)p); break;
        case FT_I64: fprintf(out, "%lld", (long long)*(const int64_t *)p); break;
        case FT_BOOL: fputs(*(const bool *)p ? "true" : "false", out); break;
        case FT_STR: fprintf(out, "\"%.80s%s\"", (const char *)p, strlen(p) > 80 ? "..." : ""); break;
        case FT_STRS: {
            const XqfStrs *s = p;
            fprintf(out, "[%u", s->count);
            for (uint32_t k = 0; k < s->count && k < 2; k++)
                fprintf(out, " \"%.40s\"", s->v[k]);
            fputs(s->count > 2 ? " ...]" : "]", out);
            break;
        }
        case FT_I64S: {
            const XqfI64s *a = p;
            fputc('[', out);
            for (uint32_t k = 0; k < a->count; k++)
                fprintf(out, "%s%lld", k ? "," : "", (long long)a->v[k]);
            fputc(']', out);
            break;
        }
        case FT_BIN: fprintf(out, "<%u bytes>", ((const XqfBin *)p)->len); break;
        }
    }
    fputc('\n', out);
}

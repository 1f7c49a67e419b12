/*
 * codec.h - the wire codec: packs, unpacks, validates and prints every
 * message of the coordinator <-> worker protocol (messages.def, described
 * in protocol.md).  The only code in the project that includes msgpack.h.
 *
 * A frame is one MessagePack map: "sig" = "xqf", "v" = the protocol
 * version, "t" = the message type name, then the message's fields by name.
 * Decoding checks the frame size, the structure (counts that cannot fit in
 * the frame, nesting, extension types), the signature, the version and the
 * type first, then every field: present exactly once, of its type, within
 * its limits; unknown keys and trailing bytes are errors.  Bad input is
 * reported, never asserted: the caller answers with an error and goes on.
 */
#ifndef XQF_CODEC_H
#define XQF_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum {
    XQF_PROTOCOL_VERSION = 14,
    /*
     * The oldest version whose frames this code still decodes (and
     * answers in): a version that changes no field of an older one's
     * messages keeps decoding them, so a coordinator can serve the
     * previous version's workers while they update (xqf-coordinator
     * --accept-protocol).  A version that changes a field raises it.
     */
    XQF_PROTOCOL_OLDEST = 13,
    XQF_FRAME_MAX = 1 << 20,       /* bytes in one frame */
    XQF_NAME_MAX = 64,             /* names, build ids */
    XQF_TEXT_MAX = 512,            /* reasons, error texts, status lines */
    XQF_PARAMS_MAX = 32768,        /* "Name=value,...": an SPSA task of hundreds of options */
    XQF_OPENING_MAX = 2048,        /* one book line */
    XQF_TASK_PAIRS_MAX = 1024,     /* pairs in one task */
    XQF_STATUS_ROWS = 1000,
    XQF_SHA256_HEX = 64,           /* an engine build's SHA-256 in hex */
    XQF_SIGNATURE_HEX = 128,       /* an engine build's Ed25519 signature in hex */
    XQF_CHUNK_MAX = 512 * 1024,    /* bytes of a build in one build_chunk */
    XQF_I64S_CAP = 32,             /* the largest I64S limit */
    XQF_GAMES_MAX = 768 * 1024,    /* bytes of game records in one result: a pair's two always fit (games.h) */
    XQF_RANDOM_PLIES_MAX = 64,     /* random plies after a data run's opening */
    XQF_DEPTH_MAX = 64,            /* a task's fixed depth */
    XQF_THREADS_MAX = 64,          /* a task's search threads per engine (runs.threads' bound, 029) */
    XQF_INIT_MAX = 8,              /* commands sent to an engine after its handshake (engine_record.h) */
    XQF_INIT_LINE_MAX = 255        /* bytes of each */
};

/* Error codes carried by the error message. */
typedef enum {
    XQF_ERR_MALFORMED = 1,         /* not a valid frame or message */
    XQF_ERR_TOO_BIG = 2,           /* frame above XQF_FRAME_MAX */
    XQF_ERR_VERSION = 3,           /* another protocol version */
    XQF_ERR_TYPE = 4,              /* unknown type, or one this side does not accept */
    XQF_ERR_NEED_HELLO = 5,        /* say hello first (e.g. after a coordinator restart) */
    XQF_ERR_REFUSED = 6,           /* well formed but refused (bad values, wrong state) */
    XQF_ERR_INTERNAL = 7,          /* the database is unavailable: retry later */
    XQF_ERR_LIMIT = 8              /* a limit was hit (rate, build chunk in flight, peers): slow down, retry later */
} XqfErrorCode;

/* An array of owned strings (STRS fields). */
typedef struct {
    uint32_t count;
    char **v;
} XqfStrs;

/* An array of integers (I64S fields). */
typedef struct {
    uint32_t count;
    int64_t v[XQF_I64S_CAP];
} XqfI64s;

/* Bytes (BIN fields), owned. */
typedef struct {
    uint32_t len;
    uint8_t *data;
} XqfBin;

#define XQF_CT_U64(n, a, b) uint64_t n;
#define XQF_CT_I64(n, a, b) int64_t n;
#define XQF_CT_BOOL(n, a, b) bool n;
#define XQF_CT_STR(n, a, b) char n[(a) + 1];
#define XQF_CT_STRS(n, a, b) XqfStrs n;
#define XQF_CT_I64S(n, a, b) XqfI64s n;
#define XQF_CT_BIN(n, a, b) XqfBin n;
#define XQF_STRUCT_FIELD(T, n, a, b) XQF_CT_##T(n, a, b)

/* One struct per message: XqfMsg_hello, XqfMsg_task, ... */
#define XQF_MSG(ID, name, doc) typedef struct { XQF_FIELDS_##name(XQF_STRUCT_FIELD) } XqfMsg_##name;
#include "messages.def"
#undef XQF_MSG

typedef enum {
    XQF_MSG_NONE = 0,
#define XQF_MSG(ID, name, doc) XQF_MSG_##ID,
#include "messages.def"
#undef XQF_MSG
    XQF_MSG_COUNT
} XqfMsgType;

/*
 * A message: its type and the matching member of the union; version, the
 * protocol version of its frame (decoded; to encode: 0 this code's
 * XQF_PROTOCOL_VERSION, else the version a peer of an older one is
 * answered in; xqf_msg_init sets 0).
 */
typedef struct {
    XqfMsgType type;
    unsigned version;
    union {
#define XQF_MSG(ID, name, doc) XqfMsg_##name name;
#include "messages.def"
#undef XQF_MSG
    } u;
} XqfMsg;

/* A growable byte buffer for encoded frames. */
typedef struct {
    char *data;
    size_t len, cap;
} XqfBuf;

typedef enum {
    XQF_DECODE_OK = 0,
    XQF_DECODE_MALFORMED,          /* structure, signature, field type, size or presence */
    XQF_DECODE_TOO_BIG,            /* larger than XQF_FRAME_MAX */
    XQF_DECODE_VERSION,            /* a valid header with a protocol version outside XQF_PROTOCOL_OLDEST..VERSION */
    XQF_DECODE_TYPE                /* a valid header with an unknown type */
} XqfDecodeStatus;

/* Empties m and sets its type (all fields zero / empty). Can't fail. */
void xqf_msg_init(XqfMsg *m, XqfMsgType type);
/* Frees what m owns (STRS and BIN fields) and empties it; safe twice. */
void xqf_msg_free(XqfMsg *m);
/* The wire name of a type ("hello"), or "?" when out of range. */
const char *xqf_msg_type_name(XqfMsgType type);
/* The error code a decoding failure is answered with. */
XqfErrorCode xqf_decode_error_code(XqfDecodeStatus status);
/*
 * Whether s[0..len) is well-formed UTF-8 (no overlong forms, surrogates or
 * code points past U+10FFFF): every STR field and STRS element decoded
 * must be, or the frame is malformed (PostgreSQL would refuse the text).
 */
bool xqf_utf8_valid(const char *s, size_t len);
/*
 * Copies in to out (size > 0; always terminated) as a string every decoder
 * accepts: well-formed UTF-8 (each byte of an ill-formed or cut sequence
 * becomes '?'), control characters (0x00-0x1f, 0x7f) as spaces, cut at a
 * character boundary to fit.  For text a sender does not control (an
 * engine's output, a system error) put into a STR field.  Returns the
 * length of out.  This function can't fail.
 */
size_t xqf_text_sanitize(char *out, size_t size, const char *in);

/*
 * Packs m into out (replacing its content).  Returns 0, or -1 when out of
 * memory, when a field breaks its limit (a programmer error, reported
 * instead of sent) or the frame would exceed XQF_FRAME_MAX.
 */
int xqf_msg_encode(const XqfMsg *m, XqfBuf *out);
/* Frees a buffer's memory; safe twice. */
void xqf_buf_free(XqfBuf *b);

/*
 * Unpacks one frame into *out (initialised here; free it with
 * xqf_msg_free whatever the result).  On failure, err gets a short reason.
 * out->version is the frame's version whenever its header's "v" could be
 * read (a refused version too), else 0.
 */
XqfDecodeStatus xqf_msg_decode(const void *data, size_t len, XqfMsg *out, char *err, size_t errlen);

/* Prints m on one line ("task task_id=3 lease=9 ..."), long arrays abridged. */
void xqf_msg_print(const XqfMsg *m, FILE *out);

/*
 * Sets a STRS field to copies of count strings (each at most limit2
 * bytes: not checked here, encode checks).  Returns 0 or -1 (out of memory,
 * the field then empty).
 */
int xqf_strs_set(XqfStrs *s, uint32_t count, const char *const *items);
/* Appends a copy of one string. Returns 0 or -1 (out of memory). */
int xqf_strs_push(XqfStrs *s, const char *item);
/* Frees the strings; safe twice. */
void xqf_strs_free(XqfStrs *s);
/* Sets a BIN field to a copy of len bytes. Returns 0 or -1 (out of memory, the field then empty). */
int xqf_bin_set(XqfBin *b, const void *data, size_t len);
/* Frees the bytes; safe twice. */
void xqf_bin_free(XqfBin *b);

/* Builds an error message. */
void xqf_msg_error(XqfMsg *m, XqfErrorCode code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif

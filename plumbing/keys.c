#include "keys.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sodium.h>
#include <unistd.h>

/* Larger than any key file or allow-list of 100,000 workers; anything bigger is not one. */
enum { TEXT_MAX = 16 << 20, FIELDS_MAX = 3 };

static const char ALLOW_HEADER[] =
    "# Workers allowed to connect to the coordinator, one \"NAME PUBLIC-KEY\" per line\n"
    "# (edited by xqf-keys allow / revoke; the coordinator re-reads it when it changes).\n";

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && size)
        vsnprintf(err, size, fmt, ap);
    va_end(ap);
    return -1;
}

bool keys_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n < 1 || n > KEYS_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '_' || c == '-'))
            return false;
    }
    return true;
}

/* ZeroMQ's Z85 (RFC 32): four bytes, big-endian, as five digits base 85 in this alphabet. */
static const char Z85[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

static void z85_encode(char out[KEYS_Z85_LEN + 1], const uint8_t bin[KEYS_BIN_LEN])
{
    for (int g = 0; g < KEYS_BIN_LEN / 4; g++) {
        uint32_t v = (uint32_t)bin[4 * g] << 24 | (uint32_t)bin[4 * g + 1] << 16 |
                     (uint32_t)bin[4 * g + 2] << 8 | bin[4 * g + 3];
        for (int d = 4; d >= 0; d--, v /= 85)
            out[5 * g + d] = Z85[v % 85];
    }
    out[KEYS_Z85_LEN] = '\0';
}

/* Decodes 40 characters of Z85; false on a character outside the alphabet or a group above 2^32 - 1. */
static bool z85_decode(uint8_t bin[KEYS_BIN_LEN], const char *z85)
{
    for (int g = 0; g < KEYS_BIN_LEN / 4; g++) {
        uint64_t v = 0;
        for (int d = 0; d < 5; d++) {
            const char *at = z85[5 * g + d] ? strchr(Z85, z85[5 * g + d]) : NULL;
            if (!at)
                return false;
            v = v * 85 + (uint64_t)(at - Z85);
        }
        if (v > UINT32_MAX)
            return false;
        for (int b = 0; b < 4; b++)
            bin[4 * g + b] = (uint8_t)(v >> (24 - 8 * b));
    }
    return true;
}

bool keys_z85_ok(const char *z85)
{
    uint8_t bin[KEYS_BIN_LEN];
    return strlen(z85) == KEYS_Z85_LEN && z85_decode(bin, z85);
}

void keys_wipe(KeyPair *k)
{
    volatile char *p = k->secret_key;
    for (size_t i = 0; i < sizeof k->secret_key; i++)
        p[i] = 0;
}

/* ---- text files ---------------------------------------------------------------- */

/*
 * Reads a whole text file (at most TEXT_MAX bytes, no NUL) into a malloc'd
 * string; *mode gets its permission bits.  Returns 0, -1 with the reason
 * in err (errno kept for a missing file).
 */
static int read_text(const char *path, char **out, mode_t *mode, char *err, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        fail(err, size, "%s: cannot open: %s", path, strerror(e));
        errno = e;
        return -1;
    }
    struct stat st;
    char *text = NULL;
    int rc = -1;
    if (fstat(fd, &st) != 0)
        fail(err, size, "%s: cannot stat: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        fail(err, size, "%s: not a regular file", path);
    else if (st.st_size > TEXT_MAX)
        fail(err, size, "%s: too big for a key file or an allow-list (%lld bytes)", path, (long long)st.st_size);
    else if (!(text = malloc((size_t)st.st_size + 1)))
        fail(err, size, "%s: out of memory", path);
    else {
        size_t len = 0;
        ssize_t n = 1;
        while (len < (size_t)st.st_size && (n = read(fd, text + len, (size_t)st.st_size - len)) > 0)
            len += (size_t)n;
        text[len] = '\0';
        if (n < 0)
            fail(err, size, "%s: cannot read: %s", path, strerror(errno));
        else if (strlen(text) != len)
            fail(err, size, "%s: not a text file (it holds a NUL byte)", path);
        else
            rc = 0;
    }
    close(fd);
    if (rc != 0) {
        free(text);
        return -1;
    }
    *out = text;
    if (mode)
        *mode = st.st_mode & 07777;
    return 0;
}

/* A secret's file must be its owner's alone, as ssh refuses an open private key. 0, or -1 with err. */
static int private_mode(const char *path, mode_t mode, char *err, size_t size)
{
    if (mode & 077)
        return fail(err, size, "%s: a secret key that others may read (mode %04o): chmod 600 %s", path,
                    (unsigned)mode, path);
    return 0;
}

int keys_read_secret_file(const char *path, char **text, char *err, size_t size)
{
    mode_t mode;
    if (read_text(path, text, &mode, err, size) != 0)
        return -1;
    if (private_mode(path, mode, err, size) == 0)
        return 0;
    sodium_memzero(*text, strlen(*text));
    free(*text);
    *text = NULL;
    return -1;
}

/* Creates path (never over an existing file) with text, flushed to disk. 0, or -1 with err. */
static int write_new(const char *path, const char *text, mode_t mode, char *err, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0 && errno == EEXIST)
        return fail(err, size, "%s exists already: not overwritten", path);
    if (fd < 0)
        return fail(err, size, "%s: cannot create: %s", path, strerror(errno));
    size_t len = strlen(text), done = 0;
    ssize_t n = 1;
    while (done < len && (n = write(fd, text + done, len - done)) > 0)
        done += (size_t)n;
    int e = n < 0 ? errno : 0;
    if (done == len && fsync(fd) != 0)
        e = errno;
    if (close(fd) != 0 && !e)
        e = errno;
    if (done != len || e) {
        unlink(path);
        return fail(err, size, "%s: cannot write: %s", path, strerror(e ? e : EIO));
    }
    return 0;
}

/* Lines of a text, numbered from 1; each without its '\n'. */
typedef struct {
    const char *p;
    int no;
} Lines;

static bool next_line(Lines *it, const char **s, size_t *len)
{
    if (!*it->p)
        return false;
    const char *nl = strchr(it->p, '\n');
    *s = it->p;
    *len = nl ? (size_t)(nl - it->p) : strlen(it->p);
    it->p = nl ? nl + 1 : it->p + *len;
    it->no++;
    return true;
}

typedef struct {
    char v[KEYS_Z85_LEN + KEYS_NAME_MAX + 2];   /* longer fields are cut: they fail validation anyway */
} Field;

/*
 * Splits a line into fields at spaces and tabs (a trailing '\r' is
 * blank); 0 for a blank or comment line ('#' first), else the number of
 * fields (FIELDS_MAX + 1 meaning "more").
 */
static int split(const char *s, size_t len, Field f[FIELDS_MAX])
{
    int n = 0;
    size_t i = 0;
    for (;;) {
        while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
            i++;
        if (i == len || (n == 0 && s[i] == '#'))
            return n;
        size_t start = i;
        while (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            i++;
        if (n == FIELDS_MAX)
            return n + 1;
        size_t w = i - start < sizeof f[n].v - 1 ? i - start : sizeof f[n].v - 1;
        memcpy(f[n].v, s + start, w);
        f[n].v[w] = '\0';
        n++;
    }
}

/* ---- key files ------------------------------------------------------------------- */

/* The public and secret lines of a key file's text. 0, or -1 with "path: line N: ..." in err. */
static int parse_keyfile(const char *text, const char *path, KeyPair *out, char *err, size_t size)
{
    memset(out, 0, sizeof *out);
    Lines it = { text, 0 };
    const char *s;
    size_t len;
    while (next_line(&it, &s, &len)) {
        Field f[FIELDS_MAX];
        int n = split(s, len, f);
        if (n == 0)
            continue;
        bool pub = strcmp(f[0].v, "public") == 0, sec = strcmp(f[0].v, "secret") == 0;
        if (n != 2 || !(pub || sec))
            return fail(err, size, "%s: line %d: expected 'public KEY' or 'secret KEY'", path, it.no);
        if (!keys_z85_ok(f[1].v))
            return fail(err, size, "%s: line %d: not a key (%d characters of Z85, as xqf-keys new writes)",
                        path, it.no, KEYS_Z85_LEN);
        char *dst = pub ? out->public_key : out->secret_key;
        if (*dst)
            return fail(err, size, "%s: line %d: a second %s key", path, it.no, f[0].v);
        memcpy(dst, f[1].v, KEYS_Z85_LEN + 1);
    }
    return 0;
}

/* A key pair's checks: both keys there, the public one derived from the secret one. */
static int check_pair(const KeyPair *k, const char *path, char *err, size_t size)
{
    if (!k->secret_key[0] || !k->public_key[0])
        return fail(err, size, "%s: not a key pair (needs a 'public' and a 'secret' line: the file "
                               "xqf-keys new FILE writes, not FILE.pub)", path);
    char derived[KEYS_Z85_LEN + 1];
    uint8_t secret[KEYS_BIN_LEN], public[KEYS_BIN_LEN];
    int rc = sodium_init() < 0 || !z85_decode(secret, k->secret_key) || crypto_scalarmult_base(public, secret) != 0;
    sodium_memzero(secret, sizeof secret);
    if (rc)
        return fail(err, size, "%s: cannot derive the public key", path);
    z85_encode(derived, public);
    if (strcmp(derived, k->public_key) != 0)
        return fail(err, size, "%s: the public key is not the secret key's", path);
    return 0;
}

int keys_read(const char *path, bool need_secret, KeyPair *out, char *err, size_t size)
{
    char *text;
    mode_t mode;
    if (read_text(path, &text, &mode, err, size) != 0)
        return -1;
    int rc = parse_keyfile(text, path, out, err, size);
    memset(text, 0, strlen(text));           /* it may hold a secret key */
    free(text);
    if (rc == 0 && need_secret)
        rc = check_pair(out, path, err, size);
    if (rc == 0 && need_secret)
        rc = private_mode(path, mode, err, size);
    if (rc == 0 && !need_secret && !out->public_key[0])
        rc = fail(err, size, "%s: no 'public KEY' line", path);
    if (rc == 0 && !need_secret)
        keys_wipe(out);
    if (rc != 0)
        keys_wipe(out);
    return rc;
}

int keys_generate(const char *path, KeyPair *out, char *err, size_t size)
{
    char pub_path[4096], text[256];
    if (snprintf(pub_path, sizeof pub_path, "%s.pub", path) >= (int)sizeof pub_path)
        return fail(err, size, "%s: path too long", path);
    uint8_t public[crypto_box_PUBLICKEYBYTES], secret[crypto_box_SECRETKEYBYTES];
    if (sodium_init() < 0 || crypto_box_keypair(public, secret) != 0)
        return fail(err, size, "cannot make a key pair");
    z85_encode(out->public_key, public);
    z85_encode(out->secret_key, secret);
    sodium_memzero(secret, sizeof secret);
    snprintf(text, sizeof text,
             "# CURVE key pair (xqf-keys new): keep it secret; its .pub file is for the other side.\n"
             "public %s\nsecret %s\n", out->public_key, out->secret_key);
    int rc = write_new(path, text, 0600, err, size);
    memset(text, 0, sizeof text);
    if (rc != 0)
        return -1;
    snprintf(text, sizeof text, "# CURVE public key (xqf-keys new).\npublic %s\n", out->public_key);
    if (write_new(pub_path, text, 0644, err, size) != 0) {
        unlink(path);
        return -1;
    }
    return 0;
}

/* ---- operator keys and signed builds ------------------------------------------- */

/* The first line of the signed text, one per kind of artifact: a net's signature can never pass for a build's. */
static const char *const SIGN_CONTEXT[] = { [SIGN_BUILD] = "xqf-build-v1", [SIGN_NET] = "xqf-net-v1",
                                            [SIGN_WORKER] = "xqf-worker-v1" };
enum { SIGN_CONTEXT_MAX = 16 };

/* A kind's words in messages. */
static const char *kind_word(SignKind kind)
{
    return kind == SIGN_NET ? "net" : kind == SIGN_WORKER ? "worker release" : "build";
}

unsigned release_protocol(const char *name)
{
    static const char prefix[] = "xqf-worker-";
    if (!sign_name_ok(name) || strncmp(name, prefix, sizeof prefix - 1) != 0)
        return 0;
    const char *p = name + sizeof prefix - 1;
    unsigned v = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9' && digits < 6; p++, digits++)
        v = v * 10 + (unsigned)(*p - '0');
    return digits > 0 && (*p == '\0' || *p == '-') && v > 0 ? v : 0;
}

/* Decodes exactly 2 n lowercase hex digits into out. */
static bool hex_decode(uint8_t *out, size_t n, const char *hex)
{
    size_t len = strlen(hex);
    return len == 2 * n && strspn(hex, "0123456789abcdef") == len &&
           sodium_hex2bin(out, n, hex, len, NULL, NULL, NULL) == 0;
}

void sign_key_wipe(SignKey *k)
{
    sodium_memzero(k->secret_key, sizeof k->secret_key);
    k->has_secret = false;
}

void sign_key_hex(const SignKey *k, char out[SIGN_KEY_HEX + 1])
{
    sodium_bin2hex(out, SIGN_KEY_HEX + 1, k->public_key, sizeof k->public_key);
}

bool sign_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n < 1 || n > SIGN_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (name[i] <= ' ' || name[i] > '~')
            return false;
    return true;
}

/* The signed text of an artifact (keys.h), or -1 with err when sha256 or name cannot be signed. */
static int signed_text(SignKind kind, const char *sha256, const char *name, char *out, size_t outsize, char *err,
                       size_t size)
{
    if (strlen(sha256) != SIGN_SHA_HEX || strspn(sha256, "0123456789abcdef") != SIGN_SHA_HEX)
        return fail(err, size, "'%.70s' is not a SHA-256 (64 lowercase hex digits)", sha256);
    if (!sign_name_ok(name))
        return fail(err, size, "the %s name '%.70s' cannot be signed (1-%d printable characters, no space)",
                    kind_word(kind), name, SIGN_NAME_MAX);
    snprintf(out, outsize, "%s\nsha256 %s\nname %s\n", SIGN_CONTEXT[kind], sha256, name);
    return 0;
}

int sign_artifact(const SignKey *k, SignKind kind, const char *sha256, const char *name, char out[SIGN_SIG_HEX + 1],
                  char *err, size_t size)
{
    char text[SIGN_CONTEXT_MAX + SIGN_SHA_HEX + SIGN_NAME_MAX + 32];
    uint8_t sig[crypto_sign_BYTES];
    if (!k->has_secret)
        return fail(err, size, "signing needs the operator's secret key (the file xqf-keys sign-new FILE writes)");
    if (signed_text(kind, sha256, name, text, sizeof text, err, size) != 0)
        return -1;
    if (sodium_init() < 0 ||
        crypto_sign_detached(sig, NULL, (const uint8_t *)text, strlen(text), k->secret_key) != 0)
        return fail(err, size, "cannot sign");
    sodium_bin2hex(out, SIGN_SIG_HEX + 1, sig, sizeof sig);
    return 0;
}

int sign_build(const SignKey *k, const char *sha256, const char *name, char out[SIGN_SIG_HEX + 1], char *err,
               size_t size)
{
    return sign_artifact(k, SIGN_BUILD, sha256, name, out, err, size);
}

int trust_verify_artifact(const TrustList *t, SignKind kind, const char *sha256, const char *name,
                          const char *signature, char *err, size_t size)
{
    char text[SIGN_CONTEXT_MAX + SIGN_SHA_HEX + SIGN_NAME_MAX + 32];
    uint8_t sig[crypto_sign_BYTES];
    if (!*signature)
        return kind == SIGN_NET ? fail(err, size, "unsigned net (sign it: xqf-tune net add --sign-key)")
               : kind == SIGN_WORKER
                   ? fail(err, size, "unsigned worker release (sign it: xqf-keys sign-worker)")
                   : fail(err, size, "unsigned build (sign it: xqf-tune build --sign-key, xqf-keys sign)");
    if (!hex_decode(sig, sizeof sig, signature))
        return fail(err, size, "malformed signature (not %d hex digits)", SIGN_SIG_HEX);
    if (signed_text(kind, sha256, name, text, sizeof text, err, size) != 0)
        return -1;
    for (int i = 0; i < t->nrevoked; i++)
        if (strcmp(t->revoked[i], sha256) == 0)
            return fail(err, size, "revoked (a revoke line of the trust file names this %s)", kind_word(kind));
    if (t->count == 0)
        return fail(err, size, "no trusted operator key to check its signature with (--trust FILE)");
    if (sodium_init() < 0)
        return fail(err, size, "cannot initialise libsodium");
    for (int i = 0; i < t->count; i++)
        if (crypto_sign_verify_detached(sig, (const uint8_t *)text, strlen(text), t->keys[i]) == 0)
            return 0;
    return fail(err, size, "not signed by a trusted operator key (a wrong signature, or a %s or name changed "
                           "since it was signed)", kind_word(kind));
}

int trust_verify_build(const TrustList *t, const char *sha256, const char *name, const char *signature, char *err,
                       size_t size)
{
    return trust_verify_artifact(t, SIGN_BUILD, sha256, name, signature, err, size);
}

/* The sign-public and sign-seed lines of a key file's text (either may be missing). */
static int parse_sign_file(const char *text, const char *path, SignKey *out, bool *has_public, char *err,
                           size_t size)
{
    uint8_t seed[crypto_sign_SEEDBYTES], pk[crypto_sign_PUBLICKEYBYTES];
    bool has_seed = false;
    *has_public = false;
    Lines it = { text, 0 };
    const char *s;
    size_t len;
    int rc = 0;
    while (rc == 0 && next_line(&it, &s, &len)) {
        Field f[FIELDS_MAX];
        int n = split(s, len, f);
        if (n == 0)
            continue;
        bool pub = strcmp(f[0].v, "sign-public") == 0, sec = strcmp(f[0].v, "sign-seed") == 0;
        if (n != 2 || !(pub || sec))
            rc = fail(err, size, "%s: line %d: expected 'sign-public KEY' or 'sign-seed SEED'", path, it.no);
        else if ((pub && *has_public) || (sec && has_seed))
            rc = fail(err, size, "%s: line %d: a second %s line", path, it.no, f[0].v);
        else if (!hex_decode(pub ? out->public_key : seed, 32, f[1].v))
            rc = fail(err, size, "%s: line %d: not a key (%d lowercase hex digits, as xqf-keys sign-new writes)",
                      path, it.no, SIGN_KEY_HEX);
        else if (pub)
            *has_public = true;
        else
            has_seed = true;
    }
    if (rc == 0 && has_seed) {
        if (sodium_init() < 0 || crypto_sign_seed_keypair(pk, out->secret_key, seed) != 0)
            rc = fail(err, size, "%s: cannot derive the key pair", path);
        else if (*has_public && sodium_memcmp(pk, out->public_key, sizeof pk) != 0)
            rc = fail(err, size, "%s: the public key is not the seed's", path);
        out->has_secret = rc == 0;
    }
    sodium_memzero(seed, sizeof seed);
    return rc;
}

int sign_key_read(const char *path, bool need_secret, SignKey *out, char *err, size_t size)
{
    char *text;
    mode_t mode;
    memset(out, 0, sizeof *out);
    if (read_text(path, &text, &mode, err, size) != 0)
        return -1;
    bool has_public;
    int rc = parse_sign_file(text, path, out, &has_public, err, size);
    sodium_memzero(text, strlen(text));
    free(text);
    if (rc == 0 && need_secret && !(out->has_secret && has_public))
        rc = fail(err, size, "%s: not an operator key pair (needs 'sign-public' and 'sign-seed' lines: the file "
                             "xqf-keys sign-new FILE writes, not FILE.pub)", path);
    if (rc == 0 && need_secret)
        rc = private_mode(path, mode, err, size);
    if (rc == 0 && !has_public)
        rc = fail(err, size, "%s: no 'sign-public KEY' line", path);
    if (rc != 0 || !need_secret)
        sign_key_wipe(out);
    return rc;
}

int sign_key_generate(const char *path, SignKey *out, char *err, size_t size)
{
    char pub_path[4096], text[512], pk_hex[SIGN_KEY_HEX + 1], seed_hex[SIGN_KEY_HEX + 1];
    uint8_t seed[crypto_sign_SEEDBYTES];
    if (snprintf(pub_path, sizeof pub_path, "%s.pub", path) >= (int)sizeof pub_path)
        return fail(err, size, "%s: path too long", path);
    if (sodium_init() < 0)
        return fail(err, size, "cannot initialise libsodium");
    randombytes_buf(seed, sizeof seed);
    memset(out, 0, sizeof *out);
    if (crypto_sign_seed_keypair(out->public_key, out->secret_key, seed) != 0) {
        sodium_memzero(seed, sizeof seed);
        return fail(err, size, "cannot make a key pair");
    }
    out->has_secret = true;
    sign_key_hex(out, pk_hex);
    sodium_bin2hex(seed_hex, sizeof seed_hex, seed, sizeof seed);
    sodium_memzero(seed, sizeof seed);
    snprintf(text, sizeof text,
             "# Operator signing key (Ed25519, xqf-keys sign-new): signs engine builds. Keep it secret,\n"
             "# ideally off the coordinator's machine; its .pub file goes in the workers' --trust file.\n"
             "sign-public %s\nsign-seed %s\n", pk_hex, seed_hex);
    int rc = write_new(path, text, 0600, err, size);
    sodium_memzero(text, sizeof text);
    sodium_memzero(seed_hex, sizeof seed_hex);
    if (rc == 0) {
        snprintf(text, sizeof text, "# Operator public key (xqf-keys sign-new): for the workers' --trust file.\n"
                                    "sign-public %s\n", pk_hex);
        if ((rc = write_new(pub_path, text, 0644, err, size)) != 0)
            unlink(path);
    }
    if (rc != 0)
        sign_key_wipe(out);
    return rc;
}

int trust_parse(const char *text, const char *what, TrustList *out, char *err, size_t size)
{
    out->count = 0;
    out->nrevoked = 0;
    Lines it = { text, 0 };
    const char *s;
    size_t len;
    while (next_line(&it, &s, &len)) {
        Field f[FIELDS_MAX];
        int n = split(s, len, f);
        if (n == 0)
            continue;
        if (n == 2 && strcmp(f[0].v, "revoke") == 0) {
            if (strlen(f[1].v) != SIGN_SHA_HEX || strspn(f[1].v, "0123456789abcdef") != SIGN_SHA_HEX)
                return fail(err, size, "%s: line %d: revoke takes a SHA-256 (%d lowercase hex digits)", what, it.no,
                            SIGN_SHA_HEX);
            if (out->nrevoked == TRUST_MAX_REVOKED)
                return fail(err, size, "%s: line %d: more than %d revoke lines", what, it.no, TRUST_MAX_REVOKED);
            memcpy(out->revoked[out->nrevoked++], f[1].v, SIGN_SHA_HEX + 1);
            continue;
        }
        if (n != 2 || strcmp(f[0].v, "sign-public") != 0)
            return fail(err, size, "%s: line %d: expected 'sign-public KEY' (an operator's public key: the .pub "
                                   "file of xqf-keys sign-new) or 'revoke SHA256'", what, it.no);
        if (out->count == TRUST_MAX_KEYS)
            return fail(err, size, "%s: line %d: more than %d keys", what, it.no, TRUST_MAX_KEYS);
        if (!hex_decode(out->keys[out->count], 32, f[1].v))
            return fail(err, size, "%s: line %d: not a key (%d lowercase hex digits)", what, it.no, SIGN_KEY_HEX);
        out->count++;
    }
    if (out->count == 0)
        return fail(err, size, "%s: no 'sign-public KEY' line: a trust file names at least one operator key", what);
    return 0;
}

int trust_read(const char *path, TrustList *out, char *err, size_t size)
{
    char *text;
    out->count = 0;
    if (read_text(path, &text, NULL, err, size) != 0)
        return -1;
    int rc = trust_parse(text, path, out, err, size);
    free(text);
    return rc;
}

/* ---- the allow-list --------------------------------------------------------------- */

typedef struct {
    AllowEntry e;
    int line;
} Parsed;

static int by_name(const void *a, const void *b)
{
    return strcmp(((const AllowEntry *)a)->name, ((const AllowEntry *)b)->name);
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const Parsed *)a)->e.key, ((const Parsed *)b)->e.key);
}

/* Checks that no name and no key appears twice (p sorted by name, as Parsed starts with its entry). */
static int check_unique(Parsed *p, int n, const char *what, char *err, size_t size)
{
    for (int i = 1; i < n; i++)
        if (strcmp(p[i - 1].e.name, p[i].e.name) == 0)
            return fail(err, size, "%s: line %d: %s is already on line %d", what,
                        p[i].line > p[i - 1].line ? p[i].line : p[i - 1].line, p[i].e.name,
                        p[i].line > p[i - 1].line ? p[i - 1].line : p[i].line);
    qsort(p, (size_t)n, sizeof *p, by_key);
    for (int i = 1; i < n; i++)
        if (strcmp(p[i - 1].e.key, p[i].e.key) == 0) {
            const Parsed *first = p[i].line < p[i - 1].line ? &p[i] : &p[i - 1];
            const Parsed *second = first == &p[i] ? &p[i - 1] : &p[i];
            return fail(err, size, "%s: line %d: this key is already allowed as %s (line %d)", what,
                        second->line, first->e.name, first->line);
        }
    qsort(p, (size_t)n, sizeof *p, by_name);
    return 0;
}

/* One "NAME KEY" line (not blank, not a comment) into *p. 0, or -1 with err. */
static int parse_entry(const Field *f, int n, int line, const char *what, Parsed *p, char *err, size_t size)
{
    if (n != 2)
        return fail(err, size, "%s: line %d: expected 'NAME PUBLIC-KEY'", what, line);
    if (!keys_name_ok(f[0].v))
        return fail(err, size, "%s: line %d: bad name '%s' (1-%d characters of A-Z a-z 0-9 . _ -)", what,
                    line, f[0].v, KEYS_NAME_MAX);
    if (!keys_z85_ok(f[1].v))
        return fail(err, size, "%s: line %d: '%s' is not a public key (%d characters of Z85)", what, line,
                    f[1].v, KEYS_Z85_LEN);
    memcpy(p->e.name, f[0].v, strlen(f[0].v) + 1);
    memcpy(p->e.key, f[1].v, KEYS_Z85_LEN + 1);
    p->line = line;
    return 0;
}

int allow_parse(const char *text, const char *what, AllowList *out, char *err, size_t size)
{
    out->v = NULL;
    out->count = 0;
    Parsed *p = NULL;
    int n = 0, cap = 0, rc = 0;
    Lines it = { text, 0 };
    const char *s;
    size_t len;
    while (rc == 0 && next_line(&it, &s, &len)) {
        Field f[FIELDS_MAX];
        int nf = split(s, len, f);
        if (nf == 0)
            continue;
        if (n == cap) {
            Parsed *bigger = realloc(p, sizeof *p * (size_t)(cap = cap ? cap * 2 : 64));
            if (!bigger) {
                rc = fail(err, size, "%s: out of memory", what);
                break;
            }
            p = bigger;
        }
        rc = parse_entry(f, nf, it.no, what, &p[n], err, size);
        n += rc == 0;
    }
    if (rc == 0 && n > 0) {
        qsort(p, (size_t)n, sizeof *p, by_name);
        rc = check_unique(p, n, what, err, size);
    }
    if (rc == 0 && n > 0 && !(out->v = malloc(sizeof *out->v * (size_t)n)))
        rc = fail(err, size, "%s: out of memory", what);
    for (int i = 0; rc == 0 && i < n; i++)
        out->v[i] = p[i].e;
    out->count = rc == 0 ? n : 0;
    free(p);
    return rc;
}

int allow_read(const char *path, AllowList *out, char *err, size_t size)
{
    char *text;
    out->v = NULL;
    out->count = 0;
    if (read_text(path, &text, NULL, err, size) != 0)
        return -1;
    int rc = allow_parse(text, path, out, err, size);
    free(text);
    return rc;
}

void allow_free(AllowList *a)
{
    free(a->v);
    a->v = NULL;
    a->count = 0;
}

const AllowEntry *allow_find_name(const AllowList *a, const char *name)
{
    AllowEntry probe;
    if (!a->count || strlen(name) > KEYS_NAME_MAX)
        return NULL;
    memcpy(probe.name, name, strlen(name) + 1);
    return bsearch(&probe, a->v, (size_t)a->count, sizeof *a->v, by_name);
}

const AllowEntry *allow_find_key(const AllowList *a, const char *key)
{
    for (int i = 0; i < a->count; i++)
        if (strcmp(a->v[i].key, key) == 0)
            return &a->v[i];
    return NULL;
}

/* A growing string. */
typedef struct {
    char *s;
    size_t len, cap;
} Text;

static int text_add(Text *t, const char *s, size_t len)
{
    if (t->len + len + 1 > t->cap) {
        size_t cap = (t->len + len + 1) * 2;
        char *bigger = realloc(t->s, cap);
        if (!bigger)
            return -1;
        t->s = bigger;
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, len);
    t->len += len;
    t->s[t->len] = '\0';
    return 0;
}

/* The new text of the list: old with name's line replaced by "name key" (appended if absent) or dropped (key NULL). */
static int edited_text(const char *old, const char *name, const char *key, Text *out)
{
    char line[KEYS_NAME_MAX + KEYS_Z85_LEN + 3] = "";
    if (key)
        snprintf(line, sizeof line, "%s %s\n", name, key);
    bool placed = false;
    int rc = *old ? 0 : text_add(out, ALLOW_HEADER, strlen(ALLOW_HEADER));
    Lines it = { old, 0 };
    const char *s;
    size_t len;
    while (rc == 0 && next_line(&it, &s, &len)) {
        Field f[FIELDS_MAX];
        if (split(s, len, f) > 0 && strcmp(f[0].v, name) == 0) {
            if (key && !placed)
                rc = text_add(out, line, strlen(line));
            placed = true;
            continue;
        }
        rc = text_add(out, s, len) == 0 && text_add(out, "\n", 1) == 0 ? 0 : -1;
    }
    if (rc == 0 && key && !placed)
        rc = text_add(out, line, strlen(line));
    return rc;
}

/* Replaces path by text: a temporary file of the same mode in the same folder, renamed over it. */
static int replace_file(const char *path, const char *text, mode_t mode, char *err, size_t size)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return fail(err, size, "%s: path too long", path);
    unlink(tmp);                             /* a leftover of a killed run of ours */
    if (write_new(tmp, text, mode, err, size) != 0)
        return -1;
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return fail(err, size, "%s: cannot replace: %s", path, strerror(e));
    }
    return 0;
}

/*
 * Takes the exclusive lock of the list's edits: flock on path.lock (the
 * list itself is replaced by a rename, so a lock on it would be on a file
 * that is gone).  Blocks while another edit holds it.  The descriptor
 * (close it to unlock), or -1 with err.
 */
static int lock_edits(const char *path, char *err, size_t size)
{
    char lock[4096];
    if (snprintf(lock, sizeof lock, "%s.lock", path) >= (int)sizeof lock)
        return fail(err, size, "%s: path too long", path);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return fail(err, size, "%s: cannot open: %s", lock, strerror(errno));
    int rc;
    while ((rc = flock(fd, LOCK_EX)) != 0 && errno == EINTR)
        ;
    if (rc != 0) {
        int e = errno;
        close(fd);
        return fail(err, size, "%s: cannot lock: %s", lock, strerror(e));
    }
    return fd;
}

/* allow_edit's work, the edit lock held. */
static int edit_locked(const char *path, const char *name, const char *key, char *err, size_t size)
{
    char *old = NULL;
    mode_t mode = 0644;
    if (read_text(path, &old, &mode, err, size) != 0) {
        if (errno != ENOENT || !key)
            return -1;
        old = strdup("");                    /* allowing the first worker creates the list */
        if (!old)
            return fail(err, size, "out of memory");
    }
    AllowList list;
    int rc = allow_parse(old, path, &list, err, size);
    const AllowEntry *mine = rc == 0 ? allow_find_name(&list, name) : NULL;
    const AllowEntry *holder = rc == 0 && key ? allow_find_key(&list, key) : NULL;
    if (rc == 0 && holder && strcmp(holder->name, name) != 0)
        rc = fail(err, size, "%s: this key is already allowed as %s (revoke it first)", path, holder->name);
    else if (rc == 0 && !key && !mine)
        rc = fail(err, size, "%s: no worker named %s", path, name);
    else if (rc == 0 && key && mine && strcmp(mine->key, key) == 0)
        rc = 1;
    Text t = { NULL, 0, 0 };
    if (rc == 0 && edited_text(old, name, key, &t) != 0)
        rc = fail(err, size, "out of memory");
    if (rc == 0)
        rc = replace_file(path, t.s, mode, err, size);
    allow_free(&list);
    free(old);
    free(t.s);
    return rc;
}

int allow_edit(const char *path, const char *name, const char *key, char *err, size_t size)
{
    if (!keys_name_ok(name))
        return fail(err, size, "bad name '%s' (1-%d characters of A-Z a-z 0-9 . _ -)", name, KEYS_NAME_MAX);
    if (key && !keys_z85_ok(key))
        return fail(err, size, "'%s' is not a public key (%d characters of Z85)", key, KEYS_Z85_LEN);
    int lock = lock_edits(path, err, size);
    if (lock < 0)
        return -1;
    int rc = edit_locked(path, name, key, err, size);
    close(lock);
    return rc;
}

bool keys_endpoint_local(const char *endpoint)
{
    if (strncmp(endpoint, "ipc://", 6) == 0 || strncmp(endpoint, "inproc://", 9) == 0)
        return true;
    if (strncmp(endpoint, "tcp://", 6) != 0)
        return false;
    const char *host = endpoint + 6, *colon = strrchr(host, ':');
    size_t len = colon ? (size_t)(colon - host) : strlen(host);
    if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
        host++;
        len -= 2;
    }
    char h[INET6_ADDRSTRLEN + 1];
    if (len >= sizeof h)
        return false;
    memcpy(h, host, len);
    h[len] = '\0';
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, h, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, h, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6);
    return strcasecmp(h, "localhost") == 0;   /* other names and interfaces ("*", "eth0") may face a network */
}

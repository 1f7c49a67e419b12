/*
 * keys.h - CURVE key files and the allow-list of worker keys: reading,
 * validating and writing them.  Shared by xqf-keys (which makes and edits
 * them), the coordinator (its key pair, and the allow-list its ZAP handler
 * checks) and the worker (its key pair and the coordinator's public key).
 * No logging and no threads: every failure comes back as a message naming
 * the file, the line and the problem.
 *
 * Keys are the 40-character Z85 text of zmq_curve_keypair (curve25519
 * through libsodium here: no ZeroMQ in this module).  A key file is
 * text: lines starting with '#' and blank lines are comments, and
 *
 *     public <Z85>          (a public key file, FILE.pub: only this line)
 *     secret <Z85>          (a key pair, FILE: both lines; mode 0600)
 *
 * A key pair whose public key is not the secret key's, or that group or
 * others may read, is refused (as ssh refuses an open private key).
 *
 * The allow-list is text too: comment lines ('#' first) and blank lines,
 * and one "NAME KEY" per worker: NAME of 1-64 characters [A-Za-z0-9._-]
 * (what the coordinator knows the connection as), KEY its public key.  A
 * name or a key appears at most once.  A malformed line makes the whole
 * list an error naming the line: half a list is never used.
 *
 * Operator keys (Ed25519, libsodium's crypto_sign) sign engine builds;
 * a worker runs a build only when a key of its trust file signed it.
 * They are apart from the CURVE keys (which only authenticate
 * connections) and from the database (whoever can write engine_builds
 * cannot make a signature).  Keys are 64 lowercase hex digits:
 *
 *     sign-public <HEX>     (an operator's FILE.pub: only this line)
 *     sign-seed <HEX>       (FILE: with its sign-public line; mode 0600;
 *                            the 32-byte seed of crypto_sign_seed_keypair)
 *
 * A trust file (xqf-worker --trust) holds 1-64 sign-public lines, e.g.
 * operators' FILE.pub files one after the other, and comments; and up to
 * 1,024 lines `revoke <SHA-256>`: a build or net of that SHA-256 is
 * refused whoever signed it (a signature cannot be taken back: a worker
 * that was handed the revocation refuses what it signed).
 *
 * What a build's signature signs (crypto_sign_detached) is the text
 *
 *     "xqf-build-v1\nsha256 <SHA>\nname <NAME>\n"
 *
 * SHA the binary's SHA-256 in 64 lowercase hex digits, NAME its name
 * (engine_builds.build_id: 1-64 bytes, printable ASCII, no space).  A
 * signature travels and is stored as 128 lowercase hex digits.
 *
 * A net (NNUE weights, docs/nnue.md) is signed the same way over
 *
 *     "xqf-net-v1\nsha256 <SHA>\nname <NAME>\n"
 *
 * (SHA the net file's, NAME nets.name): the first line differs, so a
 * net's signature never passes for a build's, and a worker never runs
 * a signed net's bytes as a program.
 *
 * A worker release (a new xqf-worker the workers update themselves to,
 * docs/cluster.md "Rolling upgrades") is signed over
 *
 *     "xqf-worker-v1\nsha256 <SHA>\nname <NAME>\n"
 *
 * NAME "xqf-worker-<PROTOCOL>" or "xqf-worker-<PROTOCOL>-<anything>": the
 * protocol version it speaks is signed with it (release_protocol).  A
 * build's signature never passes for a worker's: a build runs sandboxed,
 * a worker with the worker's rights and keys.
 */
#ifndef XQF_KEYS_H
#define XQF_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { KEYS_Z85_LEN = 40, KEYS_BIN_LEN = 32, KEYS_NAME_MAX = 64 };

typedef struct {
    char public_key[KEYS_Z85_LEN + 1];
    char secret_key[KEYS_Z85_LEN + 1];   /* "" when only a public key was read */
} KeyPair;

/* A name of the allow-list: 1-64 of [A-Za-z0-9._-]. */
bool keys_name_ok(const char *name);
/* 40 characters of Z85 that decode to 32 bytes and encode back the same (no overflowing group). */
bool keys_z85_ok(const char *z85);

/*
 * Reads a key file: with need_secret a key pair (both lines, matching,
 * private to its owner), else its public line (a key pair file will do:
 * only its public key is taken).  Returns 0, or -1 with the reason in err.
 */
int keys_read(const char *path, bool need_secret, KeyPair *out, char *err, size_t size);
/*
 * Reads a file that holds another secret (xqf-web's TLS private key) with
 * the key pairs' rule: refused when group or others may read it.  Its
 * text (malloc'd; wipe it before freeing) into *text: 0, or -1 with the
 * reason in err.
 */
int keys_read_secret_file(const char *path, char **text, char *err, size_t size);
/* Writes a new key pair to path (mode 0600) and its public key to path.pub; never overwrites. 0 or -1. */
int keys_generate(const char *path, KeyPair *out, char *err, size_t size);
/* Overwrites the secret key in memory (not optimised away). */
void keys_wipe(KeyPair *k);

typedef struct {
    char name[KEYS_NAME_MAX + 1];
    char key[KEYS_Z85_LEN + 1];
} AllowEntry;

/* The entries of an allow-list, sorted by name. */
typedef struct {
    AllowEntry *v;
    int count;
} AllowList;

/* Parses allow-list text (what names the list in messages). 0, or -1 with "what: line N: ..." in err. */
int allow_parse(const char *text, const char *what, AllowList *out, char *err, size_t size);
/* Reads and parses an allow-list file. 0 or -1. */
int allow_read(const char *path, AllowList *out, char *err, size_t size);
void allow_free(AllowList *a);
/* The entry of a name (binary search), or NULL. */
const AllowEntry *allow_find_name(const AllowList *a, const char *name);
/* The entry of a key (Z85), or NULL. */
const AllowEntry *allow_find_key(const AllowList *a, const char *key);

/*
 * Allows key (Z85) as name in the allow-list at path (created if missing),
 * replacing name's line, or with key NULL revokes name.  The file must
 * parse; its other lines, comments included, are kept in order; it is
 * replaced atomically (a temporary file renamed over it), so a reader
 * never sees half of it.  Edits are serialised by an exclusive flock on
 * path.lock held from the read to the rename: two edits at once cannot
 * lose one another (a revocation is never undone by an allow that read
 * the list before it).  Returns 0 changed, 1 nothing to change (the
 * same line is there already), -1 with the reason in err (name unknown
 * to revoke, key allowed under another name, I/O).
 */
int allow_edit(const char *path, const char *name, const char *key, char *err, size_t size);

/* ---- operator keys and signed builds ---- */

enum { SIGN_KEY_HEX = 64, SIGN_SIG_HEX = 128, SIGN_SHA_HEX = 64, SIGN_NAME_MAX = 64, TRUST_MAX_KEYS = 64,
       TRUST_MAX_REVOKED = 1024 };

typedef struct {
    uint8_t public_key[32];
    uint8_t secret_key[64];          /* all zero when only a public key was read */
    bool has_secret;
} SignKey;

/* Writes a new operator key pair to path (mode 0600) and its public key to path.pub; never overwrites. 0 or -1. */
int sign_key_generate(const char *path, SignKey *out, char *err, size_t size);
/*
 * Reads an operator key file: with need_secret the key pair (seed and
 * public key matching, private to its owner), else its public key.
 * Returns 0, or -1 with the reason in err.
 */
int sign_key_read(const char *path, bool need_secret, SignKey *out, char *err, size_t size);
/* Overwrites the secret key in memory. */
void sign_key_wipe(SignKey *k);
/* The public key as 64 hex digits. */
void sign_key_hex(const SignKey *k, char out[SIGN_KEY_HEX + 1]);
/* Whether name can be a signed build's name (1-64 printable ASCII characters, no space). */
bool sign_name_ok(const char *name);
/* What is signed: the first line of the signed text (above). */
typedef enum { SIGN_BUILD = 0, SIGN_NET = 1, SIGN_WORKER = 2 } SignKind;

/*
 * Signs the artifact of kind (sha256: 64 lowercase hex digits; name as
 * above) with the secret key k: 0 with the signature's hex in out, or -1
 * with err.  sign_build is sign_artifact of SIGN_BUILD.
 */
int sign_artifact(const SignKey *k, SignKind kind, const char *sha256, const char *name, char out[SIGN_SIG_HEX + 1],
                  char *err, size_t size);
int sign_build(const SignKey *k, const char *sha256, const char *name, char out[SIGN_SIG_HEX + 1], char *err,
               size_t size);
/*
 * The protocol version of a worker release's NAME ("xqf-worker-14",
 * "xqf-worker-14-r2"), or 0 when NAME is not a release's name.
 */
unsigned release_protocol(const char *name);

/* The operator public keys a worker trusts. */
typedef struct {
    uint8_t keys[TRUST_MAX_KEYS][32];
    int count;
    char revoked[TRUST_MAX_REVOKED][SIGN_SHA_HEX + 1];   /* the SHA-256s of revoke lines */
    int nrevoked;
} TrustList;

/* Parses a trust file's text (what names it in messages). 0, or -1 with "what: line N: ..." in err. */
int trust_parse(const char *text, const char *what, TrustList *out, char *err, size_t size);
/* Reads and parses a trust file. 0 or -1. */
int trust_read(const char *path, TrustList *out, char *err, size_t size);
/*
 * Whether signature (hex; "" for none) is a signature of the build (sha256,
 * name) by one of the keys of t.  0 when it is, else -1 with the reason
 * in err ("unsigned", "not signed by a trusted operator key", ...).
 */
int trust_verify_build(const TrustList *t, const char *sha256, const char *name, const char *signature, char *err,
                       size_t size);
/* The same for an artifact of kind (trust_verify_build is SIGN_BUILD's). */
int trust_verify_artifact(const TrustList *t, SignKind kind, const char *sha256, const char *name,
                          const char *signature, char *err, size_t size);

/*
 * Whether a ZeroMQ endpoint is reachable from this host only: tcp:// on
 * 127.0.0.0/8, [::1] or localhost; ipc://; inproc://.  Plaintext is safe
 * there and nowhere else: the coordinator binds and the worker connects
 * anywhere else only with CURVE or --insecure.  Names other than
 * localhost and interfaces ("*", "eth0") count as reachable by others.
 */
bool keys_endpoint_local(const char *endpoint);

#endif

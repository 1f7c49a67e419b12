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
 */
#ifndef XQF_KEYS_H
#define XQF_KEYS_H

#include <stdbool.h>
#include <stddef.h>

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
 * never sees half of it.  Returns 0 changed, 1 nothing to change (the
 * same line is there already), -1 with the reason in err (name unknown
 * to revoke, key allowed under another name, I/O).
 */
int allow_edit(const char *path, const char *name, const char *key, char *err, size_t size);

/*
 * Whether a ZeroMQ endpoint is reachable from this host only: tcp:// on
 * 127.0.0.0/8, [::1] or localhost; ipc://; inproc://.  Plaintext is safe
 * there and nowhere else: the coordinator binds and the worker connects
 * anywhere else only with CURVE or --insecure.  Names other than
 * localhost and interfaces ("*", "eth0") count as reachable by others.
 */
bool keys_endpoint_local(const char *endpoint);

#endif

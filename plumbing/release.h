/*
 * release.h - worker releases: a new xqf-worker that the coordinator
 * serves and the workers update themselves to (docs/cluster.md, "Rolling
 * upgrades").  A release is a binary FILE and its signature file
 * FILE.release, written by `xqf-keys sign-worker`:
 *
 *     name xqf-worker-<PROTOCOL>
 *     sha256 <SHA-256 of FILE, 64 lowercase hex digits>
 *     signature <Ed25519 signature, 128 hex digits (keys.h, SIGN_WORKER)>
 *
 * The protocol version is asked of the binary itself (`FILE --protocol`)
 * when it is signed and again by a worker before it restarts into it, so
 * that a release signed under the wrong number is never run in a loop of
 * updates.
 */
#ifndef XQF_RELEASE_H
#define XQF_RELEASE_H

#include <stddef.h>

#include "keys.h"

enum { RELEASE_PROBE_S = 10 };     /* `FILE --protocol` gets this long to answer */

typedef struct {
    char name[SIGN_NAME_MAX + 1];
    char sha256[SIGN_SHA_HEX + 1];
    char signature[SIGN_SIG_HEX + 1];
    unsigned protocol;               /* release_protocol(name) */
} Release;

/*
 * Runs `path --protocol` (stdin and stdout its own, at most
 * RELEASE_PROBE_S seconds) and reads the number it prints: 0 with it in
 * *protocol, or -1 with why in err.
 */
int release_ask_protocol(const char *path, unsigned *protocol, char *err, size_t size);
/* Writes r to path (a new file, replacing an older one atomically). 0, or -1 with err. */
int release_write(const char *path, const Release *r, char *err, size_t size);
/*
 * Reads path (FILE.release): 0 with its lines in *r, or -1 with err (a
 * missing line, a malformed one, a name that is not a release's).  The
 * signature is not checked here: workers check it with their trust file.
 */
int release_read(const char *path, Release *r, char *err, size_t size);

#endif

/*
 * builds.h - the engine builds a worker plays besides its own engine: SPRT
 * tests of a code change name two binaries by SHA-256 (a task's build0 and
 * build1).  A binary the worker lacks is fetched from the coordinator in
 * chunks (build_request / build_chunk), written beside the cache, checked
 * against its SHA-256 and only then moved into the cache (DIR/SHA256, mode
 * 0755).  A cached file is hashed again the first time a process uses it,
 * so a damaged or tampered cache is fetched anew instead of played.
 */
#ifndef XQF_BUILDS_H
#define XQF_BUILDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"

enum {
    BUILDS_MAX_FETCHES = 4,          /* binaries fetched at once */
    BUILDS_RETRY_MS = 5000,          /* a request unanswered this long is sent again */
    BUILDS_SIZE_MAX = 256 << 20      /* the largest binary taken */
};

typedef struct BuildCache BuildCache;

/* The default cache folder: $XQF_CACHE, else $XDG_CACHE_HOME/xqf-worker, else ~/.cache/xqf-worker. */
void builds_default_dir(char *out, size_t size);
/* Opens (creating it) the cache in dir. NULL, logged, on failure. */
BuildCache *builds_new(const char *dir);
void builds_destroy(BuildCache **c);

/* Whether sha is 64 lowercase hex digits. */
bool builds_sha_ok(const char *sha);
/* The path of the verified binary sha, or NULL when it must be fetched first. */
const char *builds_path(BuildCache *c, const char *sha);
/*
 * Starts fetching sha if it is not already on its way.  Returns 0, or -1
 * (logged) when too many fetches run or the part file cannot be made.
 */
int builds_want(BuildCache *c, const char *sha);
/*
 * The next build_request to send (a new fetch, or one unanswered for
 * BUILDS_RETRY_MS): fills m and returns true, else false.
 */
bool builds_next_request(BuildCache *c, int64_t now_ms, XqfMsg *m);
/*
 * Takes a chunk.  Returns 1 when its binary is complete and verified, 0
 * when more is needed (or the chunk was stale and ignored), -1 when the
 * fetch failed (err says why: a wrong hash, a size over the limit, a write
 * error); the fetch is then dropped.
 */
int builds_on_chunk(BuildCache *c, const XqfMsg_build_chunk *m, char *err, size_t errlen);
/* Drops every fetch in progress (the coordinator refused one): returns how many. */
int builds_abandon(BuildCache *c);
/* Whether sha is being fetched. */
bool builds_fetching(const BuildCache *c, const char *sha);

#endif

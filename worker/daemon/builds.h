/*
 * builds.h - the engine builds a worker plays besides its own engine: SPRT
 * tests of a code change name two binaries by SHA-256 (a task's build0 and
 * build1).  A binary the worker lacks is fetched from the coordinator in
 * chunks (build_request / build_chunk), written beside the cache, checked
 * against its SHA-256 and only then moved into the cache (DIR/SHA256, mode
 * 0555).
 *
 * Trust: a build runs only when an operator key of the worker's trust list
 * signed it (keys.h: the signature covers the SHA-256 and the build's
 * name).  The first chunk carries the name and signature: an unsigned or
 * wrongly signed build is refused there, with the reason, before its bytes
 * are fetched.  The signature is kept beside the binary (DIR/SHA256.sig)
 * and checked again each time the cached build is used.  Without a trust
 * list every build is refused, unless allow_unsigned (local tests): then
 * an unsigned build runs, and a signed one is still checked when a trust
 * list is given.
 *
 * The cache folder must be the worker user's and writable by no one else
 * (builds_new refuses it otherwise).  Several processes may share it: a
 * fetch holds an exclusive flock on DIR/SHA256.lock from start to install,
 * so a second process wanting the same build waits for it (and then finds
 * it installed) instead of writing the same file; its bytes go to a fresh
 * file DIR/SHA256.part-XXXXXX (O_EXCL|O_NOFOLLOW), renamed into place once
 * verified.  A cached file is hashed again whenever it is used (and once
 * more right before each engine start, process.h), so a damaged or
 * tampered cache is fetched anew instead of played.
 *
 * Worker releases (a newer xqf-worker, SIGN_WORKER: docs/cluster.md,
 * "Rolling upgrades") travel and are kept the same way too, in the
 * worker's versions folder, with kind "worker"; one runs only when a
 * trusted key signed it, whatever allow_unsigned says (it runs unboxed).
 *
 * Nets (NNUE weights, docs/nnue.md) travel and are kept the same way, in
 * a cache of their own (builds_new_kind with SIGN_NET): the requests say
 * kind "net", the signature is a net's (keys.h), a cached net is
 * readable and not executable (0444).  Whether the engine takes the
 * file is the player's to find out (nnue_load_file), not the cache's.
 *
 * What runs is checked too (docs/cluster.md): on its first use the worker runs
 * a build's bench once (builds_bench) and compares the signature with the
 * one recorded when the build was registered (the task's bench0/bench1):
 * a binary of another architecture or libc, or a miscompile, is refused
 * with the reason instead of playing (or failing) silently.
 */
#ifndef XQF_BUILDS_H
#define XQF_BUILDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "keys.h"

enum {
    BUILDS_MAX_FETCHES = 4,          /* binaries fetched at once */
    BUILDS_RETRY_MS = 5000,          /* a request unanswered this long is sent again */
    BUILDS_SIZE_MAX = 256 << 20      /* the largest binary taken */
};

typedef struct BuildCache BuildCache;

/* The default cache folder: $XQF_CACHE, else $XDG_CACHE_HOME/xqf-worker, else ~/.cache/xqf-worker. */
void builds_default_dir(char *out, size_t size);
/*
 * Opens (creating it) the cache in dir, with the operator keys trusted
 * (NULL: none) and whether unsigned builds may run; with boxed, a build's
 * bench runs in the sandbox (process.h).  NULL, logged, on failure (a
 * folder of another user or writable by group or others).
 */
BuildCache *builds_new(const char *dir, const TrustList *trust, bool allow_unsigned, bool boxed);
/* The same for artifacts of kind (builds_new is SIGN_BUILD's; SIGN_NET: nets). */
BuildCache *builds_new_kind(const char *dir, SignKind kind, const TrustList *trust, bool allow_unsigned,
                            bool boxed);
void builds_destroy(BuildCache **c);

/* Whether sha is 64 lowercase hex digits. */
bool builds_sha_ok(const char *sha);
/*
 * The path of the binary sha, hashed again now and its signature checked,
 * or NULL when it must be fetched first (missing, damaged, or its
 * signature not trusted: the fetch then says why).
 */
const char *builds_path(BuildCache *c, const char *sha);
/* The signed name of the cached binary sha (after builds_path answered it): 0, or -1. */
int builds_name(BuildCache *c, const char *sha, char name[XQF_NAME_MAX + 1]);
/*
 * Starts fetching sha if it is not already on its way (waiting for the
 * per-SHA lock when another process fetches it).  Returns 0, or -1
 * (logged) when too many fetches run or the lock file cannot be made.
 */
int builds_want(BuildCache *c, const char *sha);
/*
 * Tries the locks of the fetches waiting for another process: a build it
 * installed meanwhile ends the fetch.  Returns how many fetches ended so
 * (their builds_path now answers), 0 when none.
 */
int builds_poll(BuildCache *c);
/*
 * The next build_request to send (a new fetch, or one unanswered for
 * BUILDS_RETRY_MS): fills m and returns true, else false.
 */
bool builds_next_request(BuildCache *c, int64_t now_ms, XqfMsg *m);
/*
 * Takes a chunk.  Returns 1 when its binary is complete and verified, 0
 * when more is needed (or the chunk was stale and ignored), -2 when this
 * worker will not run the build (unsigned, not signed by a trusted key, or
 * no key trusted: err says why), -1 when the fetch failed otherwise (a
 * wrong hash, a size over the limit, a write error); the fetch is then
 * dropped.
 */
int builds_on_chunk(BuildCache *c, const XqfMsg_build_chunk *m, char *err, size_t errlen);
/* A build's bench on this machine: its signature and speed, or why it did not run. */
typedef struct {
    int64_t nodes, nps;              /* nodes 0: the bench failed (why says how) */
    char why[XQF_TEXT_MAX + 1];
} BuildBench;

enum { BUILDS_BENCH_TIMEOUT_MS = 300000, BUILDS_BENCHED_MAX = 64 };

/*
 * The bench of the cached build sha at path (builds_path's answer), run
 * once per worker process: the first call runs `path bench` (hashed right
 * before its start, process.h; at most BUILDS_BENCH_TIMEOUT_MS) and keeps
 * its "Nodes searched" and "Nodes/second", or why it failed (it did not
 * start: another architecture, a missing library; it crashed; it printed
 * no signature); later calls give what it found.  Returns true when it
 * ran now.
 */
bool builds_bench(BuildCache *c, const char *sha, const char *path, BuildBench *out);

/* Drops every fetch in progress (the coordinator refused one): returns how many. */
int builds_abandon(BuildCache *c);
/* Whether sha is being fetched. */
bool builds_fetching(const BuildCache *c, const char *sha);
/*
 * Whether bytes are being fetched from the coordinator (a fetch holding
 * its lock, not one waiting for another process): the coordinator sends
 * one chunk at a time per connection, so a second cache's requests wait.
 */
bool builds_receiving(const BuildCache *c);

#endif

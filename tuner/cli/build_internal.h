/*
 * build_internal.h - what the files of xqf-tune build share, and nothing
 * else includes: the steps every form of build takes (build_steps.c: a
 * step run and logged, in the sandbox or not, the binary taken out of its
 * folder, its bench, its registration) and the forms the command
 * (build.c) hands over to: a git commit's build (build_git.c), the builder
 * of the web's tests (build_serve.c) and the signer (build_sign.c).
 */
#ifndef XQF_TUNE_BUILD_INTERNAL_H
#define XQF_TUNE_BUILD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "sandbox.h"
#include "store_builds.h"

/* UCI_TIMEOUT_MS: how long a binary may take to answer uci, as long as a worker waits for its uciok. */
enum { BINARY_MAX = 256 << 20, BENCH_OUT_MAX = 1 << 16, UCI_TIMEOUT_MS = 10000, OPTIONS_MAX = 4096 };
/* A boxed step (configure, compile, bench) may take this long on the wall clock before it is killed. */
enum { BOX_WALL_S = 1800 };

/* snprintf into a path buffer: false when it did not fit. */
bool build_path_fmt(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * A build's log: the descriptor every step appends to, opened once and
 * never by its path again (a path in a folder a branch's build can write
 * may be swapped for a link to any file of the builder's), and its path,
 * for messages.
 */
typedef struct {
    int fd;
    const char *path;
} BuildLog;

/*
 * Opens path as log (appended to; fresh: created, and refused when
 * something is there already), without following a link.  0, or -1 with
 * errno set.
 */
int build_log_open(BuildLog *log, const char *path, bool fresh);
void build_log_close(BuildLog *log);

/*
 * Runs argv (searched in PATH), inside box when box is not NULL (untrusted
 * code: a branch's build, the binary it made): stdout into capture
 * (NUL-terminated, at most size - 1 bytes) or, when capture is NULL,
 * appended to log (NULL: thrown away); stderr appended to log, after a "$ command" line, or
 * with merge (and a capture) into the capture too, as the shell's 2>&1
 * puts it: Stockfish's family prints its bench's summary on stderr.
 * Returns the exit status, or -1 (a box that cannot be made: why in the log).
 */
int build_spawn_io(char *const argv[], const BuildLog *log, char *capture, size_t size, const SandboxSpec *box,
                   bool merge);
/* build_spawn_io with stderr in the log only. */
int build_spawn(char *const argv[], const BuildLog *log, char *capture, size_t size, const SandboxSpec *box);

/*
 * The executable src that a build made in the folder dir, copied to dst
 * (through dst.tmp, renamed), from the descriptor that sandbox_take
 * checked.  0, or -1 with why.
 */
int build_copy_binary(const char *dir, const char *src, const char *dst, char *why, size_t size);

/* The binary's bench signature, printed (in a box when boxed). Exit status. */
int build_bench(const char *binary, const BuildLog *log, int64_t *nodes, bool boxed);
/* The net compiled into binary is the registered one (its bench with the net's file is nodes). Exit status. */
int build_net_check(const char *binary, const BuildLog *log, const CliNetFile *net, int64_t nodes, bool boxed);

/* The signature of b (sha256 and build_id set) into b->signature, printed. Exit status. */
int build_signing_apply(CliSigning *sg, StoreBuild *b);

/* What a build from git adds to its registration: the commit's Bench: line (0: none) and where it came from. */
typedef struct {
    int64_t want_bench;
    int64_t bench;                   /* the binary's bench signature, taken already (0: take it) */
    StoreBuildSource src;
    const EngineRecord *engine;      /* another engine's (NULL: ours) */
} GitOrigin;

/* A bench signature against the commit's Bench: line. Exit status. */
int build_bench_check(int64_t nodes, const GitOrigin *git);

/*
 * The tail of every form of build, with its log at log_path (appended
 * to): the bench (checked against git's Bench: line), SHA-256, the
 * parameters it knows, the signature, its row and bytes in the builds
 * table (build_steps.c's register_logged says it all).  Exit status.
 */
int build_register_binary(Store *s, const char *binary, const char *log_path, StoreBuild *b, CliSigning *sg,
                          const GitOrigin *git, const CliNetFile *net, int64_t *id);

/* "-netSHA12" for a build with a net compiled in, else "". */
void build_net_suffix(const CliNetFile *net, char out[20]);

/* The online cores (at least 1). */
int64_t build_online_cores(void);

/* xqf-tune build --ref REF: one commit built and registered (build_git.c). Exit status. */
int build_ref(const Opts *o, const char *out, int64_t jobs);
/* xqf-tune build --serve: the queued requests built (build_serve.c). Exit status. */
int build_serve(const Opts *o, int64_t jobs);
/* xqf-tune build --sign-serve: the builder's unsigned builds signed (build_sign.c). Exit status. */
int build_sign_serve(const Opts *o, CliSigning *sg);

#endif

/*
 * store_builds.h - the engine builds the store keeps: registered binaries
 * (xqf-tune build) with their bytes, signatures and the parameters each
 * lists (018_build_params.sql), where they came from (013_git_builds.sql),
 * the workers' benches of them, what workers check a run's tasks against,
 * and the build server's queue (017_build_requests.sql).
 */
#ifndef XQF_STORE_BUILDS_H
#define XQF_STORE_BUILDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* A registered engine binary (xqf-tune build): a tuned build of a run, or any build. */
typedef struct {
    int64_t id;
    int64_t run_id;                  /* the run whose parameters it holds (0: none) */
    char params_hash[STORE_NAME_MAX + 1]; /* 16 hex digits of params_hash ("" when none) */
    char sha256[STORE_NAME_MAX + 1]; /* of the binary, 64 hex digits */
    char build_id[STORE_NAME_MAX + 1]; /* its name, e.g. "xqf-engine-run3-0123456789abcdef" */
    int64_t bench_nodes;             /* its bench signature */
    char path[STORE_TEXT_MAX + 1];
    char created[32];                /* "YYYY-MM-DD HH:MM:SS" UTC (when read) */
    char signature[STORE_SIG_HEX + 1]; /* operator's Ed25519 signature (keys.h), hex; "" unsigned */
    int64_t net_id;                  /* the net compiled in as its default evaluation (026), 0: none */
    char net_name[STORE_NAME_MAX + 1], net_sha256[STORE_NAME_MAX + 1]; /* that net's (when read; "" none) */
} StoreBuild;

/*
 * Records a build (id and created ignored); a binary already known by its
 * SHA-256 has its row updated.  Its signature is written when b has one
 * (by the owner or a signer: the builder may not), else the stored one is
 * kept, unless the name changed (a signature covers the SHA-256 and the
 * name).  Returns 0 with *id, or -1.
 */
int store_add_build(Store *s, const StoreBuild *b, int64_t *id);
/* Returns 1 with *out, 0 (no such build) or -1. */
int store_load_build(Store *s, int64_t id, StoreBuild *out);
/* Stores the binary's bytes with build id (what workers fetch). Returns 0 or -1. */
int store_build_blob(Store *s, int64_t id, const void *data, size_t len);
/*
 * Up to max bytes of the stored binary whose SHA-256 is sha256, from
 * offset: returns 1 with *total (its size), *len bytes in out, the build's
 * name and signature ("" unsigned), 0 when no such binary is stored (or
 * offset is past its end), -1 on error.
 */
int store_build_chunk(Store *s, const char *sha256, int64_t offset, size_t max, void *out, size_t *len,
                      int64_t *total, char name[STORE_NAME_MAX + 1], char signature[STORE_SIG_HEX + 1]);

/* A spin option an engine build lists in its answer to `uci`, with its bounds. */
typedef struct {
    char name[STORE_NAME_MAX + 1];
    int min, max;
} StoreBuildParam;

/*
 * Records build id's parameters (n of them, names distinct; 0: it lists
 * none), in place of any recorded before.  Two statements: call it inside
 * a transaction.  0 or -1.
 */
int store_set_build_params(Store *s, int64_t id, const StoreBuildParam *params, int n);
/*
 * Build id's parameters in the order it lists them, *out malloc'd (NULL
 * when none), *listed false when the build was registered before builds
 * recorded them (or there is no such build).  Returns the count or -1.
 */
int store_build_params(Store *s, int64_t id, bool *listed, StoreBuildParam **out);

/* Where a build came from: a git commit (xqf-tune build --ref). */
typedef struct {
    char commit[STORE_NAME_MAX + 1]; /* hex object name ("" not from git) */
    char tree[STORE_NAME_MAX + 1];   /* the commit's tree */
    char subject[STORE_TEXT_MAX + 1];/* the first line of its message */
} StoreBuildSource;

/* Records where build id came from. 0 or -1. */
int store_set_build_source(Store *s, int64_t id, const StoreBuildSource *src);
/* Where build id came from (all "" when not from git). Returns 1, 0 (no such build) or -1. */
int store_build_source(Store *s, int64_t id, StoreBuildSource *out);
/*
 * The first build made from a tree with net compiled in (0: none), its id,
 * to reuse: returns 1 with *id, 0 (none) or -1.
 */
int store_build_of_tree(Store *s, const char *tree, int64_t net, int64_t *id);

/*
 * Whether the build or net sha256 is handed out now: a player of an
 * active run, or of a finished one whose replay audits are open
 * (xqf_artifact_due).  1, 0, or -1.
 */
int store_artifact_due(Store *s, const char *sha256);
/*
 * A worker's bench of a build (sha256 "" its own engine): the signature
 * it found, its nodes per second, and refused the reason it refuses the
 * build ("" or NULL: it matched).  The latest replaces an earlier one.
 * A net a worker refuses is recorded the same way (nodes and nps 0).
 * Taken only for its own engine or a build or net due
 * (store_artifact_due): a report of any other SHA-256 writes nothing.
 * Returns 1 when taken, 2 when taken and its refusal changed (a new
 * one, another reason, or one withdrawn), 0 when not taken, -1.
 */
int store_worker_bench(Store *s, int64_t worker, const char *sha256, int64_t bench_nodes, int64_t nps,
                       const char *refused);

/* Forgets every worker's bench of the binary sha256 (registered again: its signature may differ). 0 or -1. */
int store_forget_benches(Store *s, const char *sha256);

/* A worker's bench of a build, as xqf-tune show and the status list it. */
typedef struct {
    int64_t worker;
    char worker_name[STORE_NAME_MAX + 1];
    char sha256[STORE_NAME_MAX + 1];
    int64_t bench_nodes, nps;
    char refused[STORE_TEXT_MAX + 1];/* "" when it plays the build */
    bool net;                        /* sha256 is a net's (a refused net, 025_nets.sql), not a build's */
} StoreWorkerBench;

/*
 * The benches of the builds run plays (run > 0; its built-in engine's
 * too), or, run 0, every refused one.  Returns the count or -1; *out
 * malloc'd.
 */
int store_worker_benches(Store *s, int64_t run, StoreWorkerBench **out);
/* The builds (ids, 0: the built-in engine) a run's test and base play. Returns 1, 0 (no such run) or -1. */
int store_run_builds(Store *s, int64_t run, int64_t *test_build, int64_t *base_build);
/* What workers check an active run's tasks against, and its --tc-scale reference. */
typedef struct {
    int64_t run;
    int64_t bench0, bench1;          /* the recorded bench signatures of its test and base builds (0: none) */
    int64_t ref_nps;                 /* 0: its clock is not scaled */
} StoreRunCheck;

/* Every active run's checks. Returns the count or -1; *out malloc'd. */
int store_active_checks(Store *s, StoreRunCheck **out);
/* A run's reference speed for --tc-scale (0: its clock is not scaled). Returns 1, 0 (no such run) or -1. */
int store_run_ref_nps(Store *s, int64_t run, int64_t *ref_nps);

/* ---- the build server's queue: runs waiting for builds of git refs (017_build_requests.sql) ---- */

enum { STORE_REF_MAX = 255 };

/* A ref of a run to build: what the web asked, and how far the builder got. */
typedef struct {
    int64_t id, run_id;
    char side[8];                    /* test, base */
    char ref[STORE_REF_MAX + 1];
    char commit[STORE_NAME_MAX + 1]; /* the commit ref named when the test was made ("" until pinned) */
    char subject[STORE_TEXT_MAX + 1];/* that commit's subject */
    char state[16];                  /* queued, building, done, failed */
    int64_t build_id;                /* done: the build registered */
    char error[2048];                /* failed: why, with the build log's tail */
} StoreBuildRequest;

/*
 * Makes the run just created (in this transaction, active or pending) wait
 * in state 'building' for the builds of its refs (NULL: that side plays
 * what the run says); it becomes active or pending again when they are
 * built.  Returns 0, or -1 (also when no ref is given or the run is not new).
 */
int store_await_builds(Store *s, int64_t run, const char *test_ref, const char *base_ref);
/*
 * Takes the oldest request to build for builder ("host:pid"), of an
 * approved run, pinned to its commit (out->commit): queued, or taken more
 * than lease_s seconds ago by a builder that did not finish.  Returns 1
 * with *out, 0 (none) or -1.
 */
int store_build_claim(Store *s, const char *builder, int lease_s, StoreBuildRequest *out);
/*
 * The oldest request whose commit is not pinned yet (its test was just
 * made; pending or building).  Returns 1 with *out, 0 (none) or -1.
 */
int store_build_to_pin(Store *s, StoreBuildRequest *out);
/*
 * The commit request's ref names now, as a builder read it (commit and
 * its subject; NULL with error: the ref does not resolve): pinned when the
 * request has none yet, else checked against the pinned one.  A ref that
 * does not resolve or names another commit fails the request (both
 * commits named), the run's other requests and the run
 * (xqf_build_pin, 050_build_request_commits.sql).  Returns 1 with the
 * run's state after it in run_state ("failed" when refused), 0 (the
 * request is not open) or -1.
 */
int store_build_pin(Store *s, int64_t request, const char *commit, const char *subject, const char *error,
                    char *run_state, size_t size);
/*
 * Records a request's outcome: build (> 0) built, or 0 failed with error.
 * The run takes its builds and its state when the last of its requests is
 * built, or fails with the first failure, in one transaction.  Returns 1
 * with the run's state after it in run_state ("active", "pending",
 * "building", "failed", ...), 0 (the request was not being built) or -1.
 */
int store_build_done(Store *s, int64_t request, int64_t build, const char *error, char *run_state, size_t size);
/*
 * The next build a signer may sign (xqf-tune build --sign-serve): built for
 * an approved run whose requests are all done, not signed yet.  Returns 1
 * with its id, SHA-256 and name, 0 (none) or -1.
 */
int store_sign_next(Store *s, int64_t *build, char sha256[STORE_NAME_MAX + 1], char name[STORE_NAME_MAX + 1]);
/*
 * Stores the signer's signature of build (whose bytes it hashed to sha256)
 * and starts each run that waited only for it; *started their count.
 * Returns 1, 0 (signed already, or the stored SHA-256 is not sha256) or -1.
 */
int store_build_signed(Store *s, int64_t build, const char *sha256, const char *signature, int *started);
/* A run's build requests, test first. Returns the count (0: a run without) or -1; *out malloc'd. */
int store_build_requests(Store *s, int64_t run, StoreBuildRequest **out);

/* ---- what a test of git refs changes (064_run_changes.sql) ---- */

/* The commits and the diff kept of a test, as git gives them (git log base..test, git diff base test). */
enum { STORE_COMMITS_MAX = 100, STORE_DIFF_MAX = 256 << 10 };

/* A commit between the base and the test. */
typedef struct {
    char hash[STORE_NAME_MAX + 1];
    char subject[STORE_TEXT_MAX + 1];
    char author[STORE_REF_MAX + 1];
    char at[48];                     /* its author date, ISO 8601 as git prints it */
} StoreCommit;

/* What a run of two refs changes: its refs, their commits, the commits between and the diff. */
typedef struct {
    char test_ref[STORE_REF_MAX + 1], base_ref[STORE_REF_MAX + 1];
    char test_commit[STORE_NAME_MAX + 1], base_commit[STORE_NAME_MAX + 1];
    char test_tree[STORE_NAME_MAX + 1];  /* to record only: the test commit's tree ("" unknown) */
    int total;                       /* commits between them in all (more than count when cut) */
    int count;                       /* those kept, newest first (at most STORE_COMMITS_MAX) */
    StoreCommit *commits;            /* malloc'd */
    char *diff;                      /* malloc'd, at most STORE_DIFF_MAX bytes, lines whole */
    bool diff_cut;                   /* the diff was longer: cut at a line */
} StoreRunChanges;

/*
 * Records what run changes (its rows replaced; xqf_run_changes): refused
 * unless its test commit is what the run plays (a build request of it
 * pinned there, or its tree its test build's source).  name ("" none): the run's
 * name when it has none, or only its refs' ("T vs B").  Returns 1, 0 (no
 * such run) or -1.
 */
int store_run_changes_set(Store *s, int64_t run, const StoreRunChanges *c, const char *name);
/* What run changes. Returns 1 with *out (store_run_changes_free it), 0 (none recorded) or -1. */
int store_run_changes(Store *s, int64_t run, StoreRunChanges *out);
/* Frees what store_run_changes gave (safe twice; a zeroed record too). This can't fail. */
void store_run_changes_free(StoreRunChanges *c);

#endif

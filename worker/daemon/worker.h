/*
 * worker.h - the worker: plays tasks of the coordinator's runs and reports
 * their results (the state machine of xqf-worker, as an object).
 *
 * It plays N games side by side on a pool of N game threads (task.h) that
 * take the games of the tasks it holds, oldest task first, so a task's
 * pairs are spread over every thread.  It holds tasks in slots (up to
 * 2N + 1) and asks for one more, one request at a time, whenever fewer
 * than N games are left to hand out: the next task is there before the
 * current one's last games end, and no thread waits on the network.  Each
 * held task's cumulative counts are reported after every pair, so that a
 * report repeated or lost changes nothing, with the game records of the
 * pairs not acknowledged yet; when those do not fit a result, fewer pairs
 * are reported and the rest once that is acknowledged (protocol.md,
 * results in parts).  The worker alone talks to the
 * coordinator (through its link): game threads wake it through a pipe.
 * Timers re-send what is not answered (results, requests, hello),
 * heartbeat the tasks (queued ones too), and say hello again when the
 * coordinator has been silent (it may have restarted).  A task whose
 * players need engine builds the worker lacks waits in its slot
 * (heartbeated) while they are fetched (builds.h).
 *
 * worker_stop (e.g. at SIGTERM): the running games are abandoned, the
 * complete pairs reported, the tasks handed back, then bye.
 */
#ifndef XQF_WORKER_H
#define XQF_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include "codec.h"
#include "keys.h"

/*
 * How the worker talks to the coordinator: the transport behind function
 * pointers (worker_transport.h gives the ZeroMQ one; a test gives a fake
 * that feeds messages and records what the worker sends).
 */
typedef struct {
    void *ctx;
    /* Sends a message without blocking: 0, or -1 (not connected, full). */
    int (*send)(void *ctx, const XqfMsg *m);
    /* Waits up to timeout_ms for a message or fd readable: mask 1 message, 2 fd; 0 timeout; -1 error. */
    int (*wait)(void *ctx, int timeout_ms, int fd);
    /* Takes one message without waiting: 1 with *m (the caller frees it), 0 none, -1 malformed (skipped). */
    int (*recv)(void *ctx, XqfMsg *m);
} WorkerLink;

enum { WORKER_MAX_THREADS = 256 };

typedef struct {
    const char *name;                /* 1-XQF_NAME_MAX characters */
    const char *build;               /* this build's id (hello, checked against a run's required build) */
    int cores;                       /* told the coordinator */
    int threads;                     /* games side by side, 1-WORKER_MAX_THREADS */
    const char *cache_dir;           /* engine builds fetched by SHA-256 (builds.h) */
    const TrustList *trust;          /* operator keys whose signed builds run here (NULL: none) */
    bool allow_unsigned;             /* unsigned builds run too (local tests only) */
    bool no_sandbox;                 /* engine builds run with the worker's rights (no bubblewrap here) */
    int max_hash_mb;                 /* a task asking for a larger hash is refused (<= 0: 4,096, the protocol's most) */
    int silence_ms;                  /* a message unanswered this long: hello again (0: 15 s) */
    unsigned protocol;               /* the protocol version it speaks (0: XQF_PROTOCOL_VERSION) */
    const char *update_dir;          /* worker releases go to DIR/versions, DIR/current names the newest
                                        (NULL, or no trust: this worker does not update itself) */
} WorkerConfig;

typedef struct Worker Worker;

/* A worker of cfg talking through link (kept, not owned). NULL (logged) on failure. */
Worker *worker_new(const WorkerConfig *cfg, const WorkerLink *link);
/* Stops the game threads and frees the worker; *w becomes NULL; safe on NULL. */
void worker_destroy(Worker **w);

/*
 * Plays until stopped (worker_stop: tasks handed back, then bye; returns
 * 0) or the link fails (returns -1).
 */
int worker_run(Worker *w);
/*
 * One turn of worker_run's loop: timers, the
 * slots, a wait of at most wait_ms on the link, the messages that came.
 * Returns 1 to go on, 0 when stopped and done, -1 when the link failed.
 * For tests that drive the worker turn by turn.
 */
int worker_turn(Worker *w, int wait_ms);
/* Asks the worker to stop (async-signal-safe). */
void worker_stop(Worker *w);
/*
 * After worker_run: the verified worker release to restart into (execv,
 * the same arguments), or NULL.  A worker told of a release of a newer
 * protocol (the update message) fetches it, checks it as builds are
 * checked (SHA-256, the operator's signature: builds.h), asks it the
 * protocol it speaks, points DIR/current at it, hands its tasks back and
 * stops; one it refuses is logged and reported (update_failed), and this
 * worker plays on.
 */
const char *worker_restart_path(const Worker *w);

#endif

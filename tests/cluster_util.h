/*
 * cluster_util.h - helpers of the integration tests: a database of their
 * own on the PostgreSQL cluster given by XQF_TEST_DB (ops/test starts it
 * with ops/pg), coordinator and worker processes, runs, waiting.
 */
#ifndef XQF_CLUSTER_UTIL_H
#define XQF_CLUSTER_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "codec.h"
#include "store_builds.h"
#include "store_runs.h"
#include "store_tasks.h"
#include "store_test.h"

/* Skips the calling test (cr_skip) when XQF_TEST_DB is not set. */
#define CU_REQUIRE_DB()                                                                          \
    do {                                                                                         \
        if (!getenv("XQF_TEST_DB") || !*getenv("XQF_TEST_DB"))                                   \
            cr_skip("XQF_TEST_DB is not set: integration test skipped (ops/test sets it, "      \
                    "or: export XQF_TEST_DB=\"$(ops/pg start)\")");                              \
        cr_assert(!cu_fx.failed, "the test's set-up failed (see its stderr)");                   \
    } while (0)

/* A fresh database xqf_test_<pid>_<n>; its conninfo in out. Returns 0 or -1. */
int cu_db_create(char *out, size_t size, char *name, size_t name_size);
/* Drops it. */
void cu_db_drop(const char *name);
/*
 * A fresh database (cu_db_create) and a store connected to it with the
 * migrations applied, as the coordinator's start applies them (programs no
 * longer migrate on connect).  NULL when either fails.
 */
Store *cu_store_fresh(char *out, size_t size, char *name, size_t name_size);

/*
 * What an integration suite's tests share, made afresh for each test by
 * cu_fixture_init (a suite's .init) and undone by cu_fixture_fini (its
 * .fini).
 */
typedef struct {
    char db[512], dbname[64];        /* the test's database: conninfo (as the owner) and name ("" none) */
    /*
     * The same database as each program's login role (ops/pg's names,
     * members of 030_roles.sql's group roles), as the programs connect in
     * production; the owner's conninfo when the roles cannot be made
     * (roles false: XQF_TEST_DB's user may not create roles, or cannot
     * sign in as them).
     */
    char db_coordinator[600], db_web[600], db_builder[600], db_signer[600], db_auditor[600];
    bool roles;
    Store *store;                    /* connected to it, migrated; NULL without XQF_TEST_DB */
    char dir[128];                   /* a fresh directory /tmp/xqf-test-XXXXXX */
    char logfile[256];               /* dir/log: the processes' stderr */
    int port;                        /* a free TCP port on 127.0.0.1 */
    bool failed;                     /* the directory or the database could not be made (said on stderr) */
} CuFixture;

extern CuFixture cu_fx;

/*
 * Sets up cu_fx: a fresh directory (and its log's path), a free port and,
 * when XQF_TEST_DB is set, a fresh database with the migrations applied
 * (cu_store_fresh), XQF_DB naming it for the programs the test runs.  A
 * failure is said on stderr and fails the test at CU_REQUIRE_DB.
 */
void cu_fixture_init(void);
/*
 * Makes the programs' login roles of XQF_TEST_DB's cluster (xqf-coordinator,
 * xqf-web, xqf-builder, xqf-signer, xqf-auditor, as ops/pg start does) when missing,
 * through s (a role that may create roles; the group roles exist once a
 * database is migrated), and checks that one can sign in.  Cluster-wide:
 * done once a process.  Returns whether they can be used.
 */
bool cu_roles_ready(Store *s, const char *db);
/* Kills the processes the test started (cu_stop_all), closes the store and drops the database; safe twice. */
void cu_fixture_fini(void);
/* The same, and removes the test's directory (for tests that leave large files there). */
void cu_fixture_fini_rmdir(void);

/*
 * Runs XQF_BIN/xqf-tune with args (a shell fragment), its stderr appended
 * to logfile, its stdout in out.  Returns the exit status, -1 when it did
 * not exit normally, -2 when it could not be started.
 */
int cu_tune(char *out, size_t size, const char *args, const char *logfile);

/* Runs a shell command the same way: its stderr appended to logfile, its stdout in out; the same statuses. */
int cu_sh(char *out, size_t size, const char *command, const char *logfile);
/* How many lines of the file at path hold text (0 when it cannot be read). */
int cu_log_lines(const char *path, const char *text);

/*
 * A copy of xqf-engine at path with n zero bytes appended: the same
 * engine under another SHA-256, to register as an engine build.  The copy
 * is of $XQF_TEST_ENGINE when set (ops/test sets the Release engine for
 * its sanitizer pass: each build is benched several times, 20 s a bench
 * sanitized against 7 s, and the engine is not what those tests check),
 * else of XQF_BIN's.  0 or -1.
 */
int cu_engine_copy(const char *path, int n);

/*
 * The toy engine of another's builds, in cu_fx.dir: a git repository
 * toy/ whose one commit (its hash into commit) is xqf-engine's bytes
 * behind a Makefile with EXE= (so its `uci` lists xqf-engine's spin
 * options and the same commit builds the same bytes), registered as
 * engine "toy" (xqf-tune engine add, the bench's summary as Stockfish
 * prints it), and an operator key operator.key.  0, or -1 with what failed
 * said in the log.
 */
int cu_toy_engine(char commit[41]);

/*
 * Game records (games.h) for the pairs a report adds, from before's counts
 * to now's (before NULL: none yet): pairs whose results count exactly the
 * difference of W/D/L and pentanomial, as a worker's records would (the
 * coordinator checks them, 021_report_records.sql).  An inconsistent
 * difference gives what it can (the report is refused either way).
 * Returns the malloc'd bytes (NULL when there are none) and their length.
 */
uint8_t *cu_records_for(const StoreCounts *now, const StoreCounts *before, size_t *len);
/*
 * The same from the openings of the pairs added (openings[k] the book line
 * of the k-th pair added; NULL: the start position): each record starts
 * from its line's FEN with its moves, as the coordinator checks a
 * report's records against its task's openings (sched.h).
 */
uint8_t *cu_records_from(const StoreCounts *now, const StoreCounts *before, const char *const *openings, size_t *len);
/* One report of a lease through the batch statement, with records for the pairs it adds after before. */
StoreReport cu_report(Store *s, int64_t worker, int64_t task, int64_t token, const StoreCounts *now,
                      const StoreCounts *before, int64_t lease_ms, int64_t *run, bool *task_done);

/* The SHA-256 of the file at path, 64 hex digits (sha256sum). 0 or -1. */
int cu_sha256(const char *path, char out[65]);
/*
 * Records engine build b (id and created ignored) with the bytes of the
 * file b->path, as xqf-tune build --binary does without running its
 * bench.  Its id, or -1.
 */
int64_t cu_build_add(Store *s, const StoreBuild *b);

/*
 * One HTTP/1.0 request on 127.0.0.1:port (a plain socket: the tests need
 * no HTTP client); the whole answer into out.  Its status, or -1 when
 * nothing answered.
 */
int cu_http(int port, const char *method, const char *path, char *out, size_t size);
/* The value of the sample named exactly name (name and labels) in a Prometheus exposition, or -1 when absent. */
double cu_sample(const char *text, const char *name);

/* A free TCP port on 127.0.0.1 (as the kernel picks one). */
int cu_free_port(void);

/* Starts a program of build/bin with arguments (NULL-terminated); stderr to log (appended). */
pid_t cu_spawn(const char *program, const char *log, const char *const args[]);
/*
 * The same with extra environment variables ("NAME=value", NULL-terminated;
 * NULL: none), and the child is killed when this process dies (a test
 * stopped at its timeout leaves nothing running).  So are the *_env
 * variants below and cu_proxy.
 */
pid_t cu_spawn_env(const char *program, const char *log, const char *const args[], const char *const env[]);
/*
 * The same (killed with this process, as cu_spawn_env) in the network
 * namespace netns of `ip netns` (/run/netns/NETNS): a program on another
 * "host" for the cross-host tests (test_netns.c).
 */
pid_t cu_spawn_netns(const char *netns, const char *program, const char *log, const char *const args[]);
/*
 * The processes a test started, killed at its end (cu_stop_all, from the
 * suite's fini): cu_track records pid and returns it (a full table kills
 * it and returns -1), cu_untrack forgets it, cu_kill9 kills and forgets it.
 */
pid_t cu_track(pid_t pid);
void cu_untrack(pid_t pid);
void cu_kill9(pid_t pid);
void cu_stop_all(void);
/* Sends sig and reaps the process (waits up to 10 s, then SIGKILL). Returns its wait status. */
int cu_stop(pid_t pid, int sig);
/* Reaps pid if it has ended; true when it has. */
bool cu_ended(pid_t pid, int *status);

pid_t cu_coordinator(const char *db, int port, const char *lease_s, const char *log);
pid_t cu_worker(int port, const char *name, int concurrency, const char *log);
/* The same with more options (NULL-terminated), e.g. { "--trust", FILE, NULL }. */
pid_t cu_worker_args(int port, const char *name, int concurrency, const char *log, const char *const extra[]);
/* The same with extra environment variables (may be NULL), killed with this process (cu_spawn_env). */
pid_t cu_coordinator_env(const char *db, int port, const char *lease_s, const char *log, const char *const env[]);
pid_t cu_worker_env(int port, const char *name, int concurrency, const char *log, const char *const env[]);
/*
 * xqf-faultproxy (tests/fault_proxy.c) on 127.0.0.1:listen_port, forwarding
 * to 127.0.0.1:target_port, with its options (NULL-terminated, may be NULL).
 */
pid_t cu_proxy(int listen_port, int target_port, const char *const opts[], const char *log);

/*
 * Creates an SPRT run: test_params against the defaults over the first
 * 100 lines of the shipped book, fixed nodes, wide or given bounds.
 */
int64_t cu_sprt(Store *s, const char *test_params, int pairs_per_task, int64_t max_pairs,
                int64_t nodes, double elo0, double elo1);
/* The same, owned by owner (the dashboard's account) and pending (waiting for an admin) when pending. */
int64_t cu_sprt_of(Store *s, const char *owner, bool pending, const char *test_params, int pairs_per_task,
                   int64_t max_pairs, int64_t nodes, double elo0, double elo1);

enum { CU_BOOK_MAX = 400 };
/*
 * The first n (<= CU_BOOK_MAX) openings of the shipped book, in lines
 * (pointers to static storage, valid until the next call). Returns how many, or -1.
 */
int cu_book(const char **lines, int n);
/*
 * An SPRT run as cu_sprt makes it, over the first `openings` lines of the
 * book with max_pairs = openings: every opening is played exactly once
 * (in the run's shuffled order), so the run's totals are those of
 * `xqf-match --pairs N` over the same openings.
 */
int64_t cu_sprt_openings(Store *s, const char *test_params, int pairs_per_task, int openings,
                         int64_t nodes, double elo0, double elo1);

/*
 * Plays n pairs, one over each of openings, with xqf-match (params0
 * against params1 as option words, nodes per move, threads game threads,
 * the games' PGN to pgn unless NULL): the counts a worker must report for
 * them, in *out.  Games at fixed nodes, one at a time per worker, are
 * reproducible: a run of cu_sprt_openings must count the same (the
 * chaos and upgrade tests' reference).  0, or -1 (said on stderr).
 */
int cu_match_pairs(const char *const *openings, int n, const char *params0, const char *params1, int nodes,
                   int threads, const char *pgn, StoreCounts *out);

/* Waits until the run's state is not active (true) or timeout_s passes (false). */
bool cu_wait_finished(Store *s, int64_t run, double timeout_s, StoreRun *out);
/* Waits until the run has at least pairs accepted. */
bool cu_wait_pairs(Store *s, int64_t run, int64_t pairs, double timeout_s);

void cu_sleep_ms(int ms);
double cu_now(void);

/*
 * The audit of a finished run: pairs (unless < 0) planned = the run's =
 * the sum over its tasks = the sum over the results of every lease; games
 * = 2 x pairs in each; pentanomial = pairs; endings = games; and, when
 * pairs is given (the run went to its end), every task done; the games
 * stored = the games counted, their wins and draws the run's.  True, or false with the first discrepancy in why.
 */
bool cu_audit(Store *s, int64_t run, int64_t pairs, char *why, size_t size);

/*
 * Writes a net (docs/nnue.md) of random weights from seed to path: within
 * the training clamps (b1, W1 within 6.0 * QA, W2 within 127/64 * QB),
 * smaller still for W1 so that its accumulators stay far from the int16
 * limits; its description names the seed.  0, or -1 with why.
 */
int cu_random_net(const char *path, uint64_t seed, char *why, size_t size);

/* ---- a hand-made worker: the chaos and cross-host tests' malicious clients ---------- */

/* A DEALER of the test's own (no xqf-worker): it sends whatever the test forges. */
typedef struct {
    void *ctx, *sock;
} CuClient;

/*
 * Connects c to endpoint ("tcp://127.0.0.1:PORT"): with CURVE when key (a
 * key pair file of xqf-keys new) and server_pub (the coordinator's public
 * key file) are given, else in plaintext; from the network namespace
 * netns of `ip netns` when given (NULL: this process's): the calling
 * thread enters it while ZeroMQ starts its I/O thread (whose sockets then
 * live there: a thread keeps the namespace it was made in) and comes back.
 * 0, or -1 with why.
 */
int cu_client_open(CuClient *c, const char *endpoint, const char *key, const char *server_pub, const char *netns,
                   char *why, size_t size);
/* Closes it; safe twice. */
void cu_client_close(CuClient *c);
/* Sends bytes as one frame (waits while its queue is full). 0 or -1. */
int cu_client_send(CuClient *c, const XqfBuf *b);
/* Encodes m into b (kept: for replays) and sends it. 0 or -1. */
int cu_client_send_msg(CuClient *c, const XqfMsg *m, XqfBuf *b);
/* The next message within ms, decoded into m (free it): 1, 0 when none came, -1 when it was no message. */
int cu_client_next(CuClient *c, int ms, XqfMsg *m);
/* Says hello as name (one slot, one core): 0 welcomed, else -1 with the answer in why. */
int cu_client_hello(CuClient *c, const char *name, char *why, size_t size);
/* Asks for a task: 0 with it in *task (free it), else -1 with the answer in why. */
int cu_client_task(CuClient *c, XqfMsg *task, char *why, size_t size);
/*
 * A probe of a freshly started coordinator: opens c to 127.0.0.1:port, says
 * hello as name until welcomed (the coordinator may still be starting; at
 * most `seconds`), then asks for a task. 0 with it in *task (free it, close
 * c), else -1 with why.
 */
int cu_client_first_task(CuClient *c, int port, const char *name, double seconds, XqfMsg *task, char *why,
                         size_t size);
/*
 * Sends a result's bytes and reads the ack: 0 with its status in status
 * ("accepted", "invalid" ...) and *stop, else -1 with the answer in status.
 */
int cu_client_report(CuClient *c, const XqfBuf *b, char *status, size_t size, bool *stop);

/* How a forged result departs from what its task gave to play (cu_forged_result). */
typedef enum {
    CU_HONEST,                       /* as the task says: each opening's FEN and moves, then engine moves */
    CU_OTHER_POSITION,               /* the last pair's records from another line of the book */
    CU_OTHER_SIDE,                   /* ... from its opening's placement, the other side to move */
    CU_NO_OPENING_MOVES,             /* ... from its opening's FEN, its moves left out */
    CU_MORE_OPENING_MOVES,           /* ... with an engine move flagged as an opening move */
    CU_NO_RECORDS,                   /* the counts without a single record */
    CU_COUNTS_DISAGREE               /* honest records, all drawn; the counts say the last pair's first game was won */
} CuForgery;

/*
 * A result of task (a decoded XQF_MSG_TASK) into out: its first `pairs`
 * pairs all drawn, the records of pairs from..pairs-1 sent (games_from =
 * from), forged as f says (other_line: a book line of another position,
 * for CU_OTHER_POSITION), the last pair's two records swapped when swap.
 * The engine moves are made up from the pair and the game (a replay of
 * the same pair writes the same bytes).  0, or -1 with why.
 */
int cu_forged_result(const XqfMsg *task, const char *other_line, int from, int pairs, CuForgery f, bool swap,
                     XqfBuf *out, char *why, size_t size);

#endif

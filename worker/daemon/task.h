/*
 * task.h - the coordinator's tasks played on the worker's game threads.
 *
 * A pool has N game threads (the worker's concurrency), each with two
 * built-in players kept from game to game and task to task: a game only
 * gives them the task's parameters (player_set_spec) and clears their
 * state (player_new_game), as one xqf-match thread does between games.
 * Started tasks wait in a queue in the order they were started; a free
 * thread takes the next unplayed game of the oldest one, so the games of
 * a task, even the two of a pair, are spread over every thread, and the
 * next task (fetched while the current one's last games are played) keeps
 * them busy when it runs out: no thread idles while there is a game.
 * A task's engines may search with several threads each (its `threads`,
 * UCI Threads): a game of it then takes that many of the pool's cores,
 * and the games running at once keep within them (games x threads <=
 * the pool's threads), the oldest task's next game waiting for its cores.
 *
 * Pair k of a task plays the task's opening k twice: game 0 with the
 * first parameter set as Red, game 1 with colours reversed.  Counts are
 * kept over complete pairs only, so that what is reported under a lease
 * is exactly the games of its finished pairs: a pair cut by a stop is
 * neither reported nor lost (the coordinator re-issues it).
 *
 * Every game's record is kept for the results (task_report): its moves,
 * result and reason, and each move's score and depth when the task asks.
 * A data run's task (kind "data") plays both sides with the one set; each
 * game gets its own random plies after the opening (seeded by its
 * run-wide index, so a re-issued task replays the same openings) and its
 * records keep the scores.
 */
#ifndef XQF_TASK_H
#define XQF_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "game.h"

typedef struct {
    int64_t pairs, wins, draws, losses;
    int64_t penta[5];
    int64_t reasons[GAME_REASONS];
} TaskCounts;

typedef struct TaskPool TaskPool;
typedef struct Task Task;

/*
 * Starts threads game threads (players are made at their first game);
 * when a game is taken, after each complete pair and at the end of each
 * task a byte is written to notify_fd (non-blocking, may be dropped).  NULL when out of memory
 * or a thread cannot be started.
 */
TaskPool *task_pool_new(int threads, int notify_fd);
/* Stops every task's games, joins the threads and frees; the tasks must be destroyed first. Safe on NULL. */
void task_pool_destroy(TaskPool **p);
/*
 * The cores the games of the started tasks that no thread has taken yet
 * will take: each game counts its task's threads (stopped tasks excluded).
 * Thread-safe.
 */
int64_t task_pool_waiting(TaskPool *p);
/* The most games the pool played at once since it was made. Thread-safe. */
int task_pool_peak(TaskPool *p);

/*
 * Checks a task message (build, parameters, book lines, time control) and
 * prepares it.  Returns the task, or NULL with the reason to refuse it in
 * err.  build is this worker's build id; engines (or NULL) the paths of
 * the binaries the two players run, NULL for the built-in engine (the
 * caller fetched the task's build0 and build1: builds.h).  The set of the
 * built-in engine is checked against its table; that of a build only for
 * its syntax (param_set.h), the build judging its names and values.
 * nets (or NULL) the net each player evaluates with: NULL the engine's
 * own evaluation, "none" the hand-crafted one, else the path of a net
 * file (the caller fetched the task's net0 and net1): a built-in player
 * loads it, and a file the engine refuses refuses the task with the
 * reader's words; an engine build is sent it as EvalFile (spec.h).
 * With boxed, the engine builds run in the sandbox (process.h).
 */
Task *task_new(const XqfMsg_task *m, const char *build, const char *const engines[2], const char *const nets[2],
               bool boxed, char *err, size_t errlen);
/* Queues the task's games on the pool (once). */
void task_start(Task *t, TaskPool *p);
/*
 * A snapshot: the counts, and whether the task is done (every game played,
 * or stopped and no game of it still running), with in failed (size
 * bytes, "" when none) why a game could not be played: out of memory, or
 * a player's engine refused an option of its set (game.h), which stops
 * the task.  Thread-safe.
 */
void task_poll(Task *t, TaskCounts *counts, bool *done, char *failed, size_t size);
/*
 * A report of the task as a result carries it (protocol.md): its first
 * counted pairs, as many as have their records from pair `from` on (the
 * pairs the coordinator acknowledged) within budget bytes
 * (XQF_GAMES_MAX), at least one when there is one: their counts in *c
 * (c->pairs, >= from) and, with out (else NULL), those records in *out
 * (replaced).  Pairs counted beyond go in the next report.  Returns 0, or
 * -1 when out of memory.  Thread-safe.
 */
int task_report(Task *t, int64_t from, size_t budget, TaskCounts *c, XqfBin *out);
/* Stops the task: its games not started are dropped, running ones abandoned. Returns at once. */
void task_stop(Task *t);
/* Stops, waits until no thread plays a game of it, takes it off the queue and frees; safe on NULL and twice. */
void task_destroy(Task **t);

#endif

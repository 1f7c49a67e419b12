/*
 * task.h - one task of the coordinator played on a thread of its own: the
 * two parameter sets over the built-in engine, the task's openings as a
 * book, its time control and adjudication, one game at a time
 * (match_play_pairs with concurrency 1; a worker runs one task per slot).
 *
 * Counts are kept over complete pairs only, so that what is reported
 * under a lease is exactly the games of its finished pairs: a pair cut by
 * a stop is neither reported nor lost (the coordinator re-issues it).
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

typedef struct Task Task;

/*
 * Checks a task message (build, parameters, book lines, time control) and
 * prepares it.  Returns the task, or NULL with the reason to refuse it in
 * err.  build is this worker's build id.
 */
Task *task_new(const XqfMsg_task *m, const char *build, char *err, size_t errlen);
/*
 * Starts playing on a new thread; after each pair and at the end a byte is
 * written to notify_fd (non-blocking, may be dropped).  Returns 0 or -1.
 */
int task_start(Task *t, int notify_fd);
/* A snapshot: the counts, and whether the thread is done (with *failed when a game thread failed). Thread-safe. */
void task_poll(Task *t, TaskCounts *counts, bool *done, bool *failed);
/* Stops the games (running ones abandoned). Thread-safe, returns at once. */
void task_stop(Task *t);
/* Stops, joins the thread and frees; safe on NULL and twice. */
void task_destroy(Task **t);

#endif

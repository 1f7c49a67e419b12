/*
 * status.h - the status of the cluster as text lines: one per worker seen
 * lately, one per run (newest first) with its progress, Elo and LLR.  The
 * same lines answer a status_request and `xqf-coordinator --status`.
 * Control characters (from worker names and builds, which come from the
 * network) are escaped (xqf_escape).
 */
#ifndef XQF_STATUS_H
#define XQF_STATUS_H

#include "codec.h"
#include "store.h"

enum { STATUS_WORKER_WINDOW_S = 600 };   /* workers heard from in this window are listed */

/* Fills the two lists (emptied first). Returns 0 or -1 (database, memory). */
int status_lines(Store *store, int max_runs, XqfStrs *workers, XqfStrs *runs);

#endif

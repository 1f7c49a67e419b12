/*
 * bench.h - the search signature: a fixed set of positions searched to a
 * fixed depth from a cleared engine.  The total node count identifies the
 * search; a change that claims not to alter the search must not change it.
 */
#ifndef XQF_BENCH_H
#define XQF_BENCH_H

#include <stdint.h>
#include <stdio.h>

#include "params.h"
#include "search.h"

enum { BENCH_DEPTH = 13 };

/*
 * The signature of the default parameters and evaluation: bench's node
 * count at BENCH_DEPTH with the net compiled into the program
 * (engine/nets/default.nnue).  tests/test_bench.c pins it; a commit that
 * changes the search or the default net updates it and says "Bench: N" in
 * its message, as Stockfish's do.
 */
#define BENCH_SIGNATURE UINT64_C(3924357)
/*
 * The same with the hand-crafted evaluation (UseNNUE=false, or a program
 * built without a net: cmake -DXQF_DEFAULT_NET=none): the search's own
 * signature, which a change of the net leaves as it is.
 */
#define BENCH_SIGNATURE_HCE UINT64_C(3284432)

/*
 * The bench positions (FENs with the usual letters, ranks 0-9 in moves):
 * their count, and the i-th (NULL out of range).  Another engine without a
 * bench command is benched on them too (xqf-tune build: each searched to its
 * record's depth, its reported nodes summed).
 */
int bench_position_count(void);
const char *bench_position(int i);

/* The signature this program's bench gives: BENCH_SIGNATURE when it has a net compiled in, else BENCH_SIGNATURE_HCE. */
uint64_t bench_signature(void);

/*
 * Searches every bench position to `depth` (BENCH_DEPTH when <= 0) with
 * `params` (the defaults when NULL), prints one line per position, then
 * "Nodes searched: N" and "Nodes/second: M".  Returns the node count, or 0
 * when the engine cannot be created.  Only the defaults at BENCH_DEPTH
 * give the signature; other parameters or depths measure a change's tree.
 */
uint64_t bench_run(int depth, const Params *params, FILE *out);
/*
 * The same with the settings of `like`: its parameters, its evaluation
 * (its net, copied, and UseNNUE) and its threads, searched by a new engine
 * (so the table size and the history are bench's own).  Without a net the
 * signature is the hand-crafted evaluation's.  With more than one thread
 * the nodes are every thread's and vary from run to run (Lazy SMP's
 * threads race), as Stockfish's `bench` with a thread count: the speed and
 * the time to the depth are the figures, the signature is 1 thread's.
 * Returns 0 when the engine cannot be created.
 */
uint64_t bench_run_like(int depth, const Engine *like, FILE *out);

#endif

/*
 * search.h - the engine object and its search.
 *
 * An Engine owns everything a search touches: its transposition table,
 * move-ordering tables and stop flag.  Two engines in one process share
 * nothing, so a worker can play two of them against each other.
 *
 * engine_search() runs in the caller's thread (and, with Threads > 1, in
 * helper threads it starts and joins) until a limit is reached or
 * engine_stop() is called from another thread; progress is reported through
 * a callback after each iteration.
 */
#ifndef XQF_SEARCH_H
#define XQF_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "board.h"
#include "nnue.h"
#include "params.h"

enum {
    INF = 32000,
    MATE = 30000,
    MATE_BOUND = MATE - MAX_PLY, /* |score| >= this is a mate score */
    BAN = 20000                  /* a perpetual-check or -chase loss inside the tree (never stored) */
};

typedef struct {
    int depth;          /* 0: no limit */
    uint64_t nodes;     /* 0: no limit */
    int64_t movetime;   /* ms for this move, 0: not set */
    int64_t time[2];    /* remaining clock per colour in ms, -1: not set */
    int64_t inc[2];
    int movestogo;      /* 0: not set */
    int mate;           /* UCI go mate N: stop once a mate in at most N moves is found (0: not set) */
    bool infinite;      /* search until stopped */
    bool ponder;        /* pondering: no time limit until engine_ponderhit() */
    int overhead;       /* ms kept in reserve per move */
    int banned_count;   /* root moves not to play (UCCI banmoves) */
    Move banned[MAX_MOVES];
    int only_count;     /* UCI go searchmoves: only these root moves (0: all) */
    Move only[MAX_MOVES];
    int multipv;        /* lines to search and report, best first (MultiPV; 1 in search_limits_init) */
} SearchLimits;

enum { MULTIPV_MAX = 128 };

typedef struct {
    int depth, seldepth;
    int score;          /* centipawns, or +-(MATE - plies) */
    uint64_t nodes;
    int64_t time_ms;
    int hashfull;       /* permille */
    int multipv;        /* the line's rank, 1 = best; 0 when only one line is searched */
    int pv_length;
    Move pv[MAX_PLY];
} SearchInfo;

typedef struct {
    Move best;          /* MOVE_NONE when there is no legal move */
    Move ponder;
    int score, depth;
    uint64_t nodes;
} SearchResult;

typedef void (*SearchReport)(void *ctx, const SearchInfo *info);

typedef struct Engine Engine;

/* A new engine with a TT_DEFAULT_MB table; NULL when out of memory. */
Engine *engine_new(void);
/* Frees the engine and sets *e to NULL; safe on NULL. */
void engine_destroy(Engine **e);
/* Resizes the hash table. Returns 0, or -1 (old table kept) when out of memory. */
int engine_set_hash(Engine *e, size_t mb);
/* Sets the engine's parameters (a copy is kept); not during a search. */
void engine_set_params(Engine *e, const Params *p);
const Params *engine_params(const Engine *e);
/* Forgets everything learned: hash table, killers, history (a new game). */
void engine_clear(Engine *e);

/*
 * The evaluation.  A new engine evaluates with the net compiled into the
 * program (cmake -DXQF_DEFAULT_NET), if any, else with the hand-crafted
 * evaluation (eval.h).  The net is the engine's own (a copy or a file
 * loaded for it), so two engines may hold different nets; with UseNNUE
 * off (engine_set_use_nnue) the engine keeps its net but evaluates by
 * hand.  A change of evaluation clears the engine (engine_clear): the
 * table's stored evaluations were the other one's.  Not during a search.
 */
/* Evaluates with a copy of net (NULL: no net). Returns 0, or -1 when out of memory (nothing changed). */
int engine_set_net(Engine *e, const NnueNet *net);
/* Loads a net file (nnue_load_file). Returns 0, or -1 with a message in err; the net it had is kept. */
int engine_load_net(Engine *e, const char *path, char *err, size_t errlen);
/* The engine's net, or NULL. */
const NnueNet *engine_net(const Engine *e);
/* UseNNUE: evaluate with the net when there is one (true in a new engine). */
void engine_set_use_nnue(Engine *e, bool on);
bool engine_use_nnue(const Engine *e);

/*
 * Threads: the engine searches with threads - 1 helper threads besides the
 * caller's (Lazy SMP, sharing the hash table; see search.c).  Returns 0,
 * or -1 (out of range 1..ENGINE_MAX_THREADS, or out of memory: the count
 * may then be between the old and the new).  Not during a search.
 */
enum { ENGINE_MAX_THREADS = 256 };
int engine_set_threads(Engine *e, int threads);
int engine_threads(const Engine *e);

/* Fills limits with "no limit" defaults. */
void search_limits_init(SearchLimits *l);
/*
 * Searches the position (which is not modified) within the limits,
 * reporting each iteration through report (may be NULL).
 */
void engine_search(Engine *e, const Board *root, const SearchLimits *limits,
                   SearchReport report, void *ctx, SearchResult *out);
/*
 * Which of n threads' results (0 the main engine's, each with a move) a
 * search with one line and no depth limit plays: vote false, Stockfish 9's
 * deeper-and-better helper; true, Stockfish's vote by score and depth (the
 * ThreadVote parameter picks).  The index, or -1 when n is 0.
 */
int engine_pick_thread(const SearchResult *results, int n, bool vote);
/*
 * Asks a running search to stop as soon as possible; thread-safe.  The
 * request stays until engine_reset_stop(): a search started while it is
 * pending returns at once, so a front end resets it before each search.
 */
void engine_stop(Engine *e);
void engine_reset_stop(Engine *e);
/* Ends pondering: the search now runs on its clock; thread-safe. */
void engine_ponderhit(Engine *e);
/*
 * The optimum and maximum time (ms, 0: none) a search of root under
 * limits gets, as engine_search plans them (it sets the engine's board
 * and net accumulators to root, as a search does; not during a search).
 */
void engine_plan_time(Engine *e, const Board *root, const SearchLimits *limits, int64_t *optimum_ms,
                      int64_t *maximum_ms);

/*
 * The null move's counters (step 7) by remaining depth, the last row for
 * that depth and deeper, over the engine's life (engine_clear keeps
 * them).  Only a build with cmake -DXQF_SEARCH_STATS=ON counts (the
 * release build pays nothing); xqf-engine bench prints them there.
 */
enum { NULL_STATS_DEPTHS = 20 };
typedef struct {
    uint64_t nodes[NULL_STATS_DEPTHS];  /* main-search nodes not in check, where step 7 is asked */
    uint64_t tried[NULL_STATS_DEPTHS];  /* the guards let a null search run */
    uint64_t cut[NULL_STATS_DEPTHS];    /* ... which failed high */
    uint64_t kept[NULL_STATS_DEPTHS];   /* ... and survived verification: the node returned */
    /* their nodes; these nest (a null search's nodes include the null searches within it) */
    uint64_t failed_cost[NULL_STATS_DEPTHS], cut_cost[NULL_STATS_DEPTHS], verify_cost[NULL_STATS_DEPTHS];
    uint64_t outer_failed, outer_cut, outer_verify; /* the same, outermost ones only: shares that do not overlap */
    int nesting;                                    /* null searches and verifications now running */
} NullStats;
/* The engine's counters, or NULL in a build without XQF_SEARCH_STATS. */
const NullStats *engine_null_stats(const Engine *e);

/* Score text for humans and logs: "cp 35" or "mate 3" / "mate -2" (UCI style). */
void search_score_text(int score, char *out, size_t len);

#endif

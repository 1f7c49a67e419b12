/*
 * spec.h - what a player is: the built-in engine with a parameter set, or
 * an external engine program and how to talk to it.
 *
 * A spec is written as key=value words (cutechess-cli style), e.g.
 *     name=base params=tuned.params option.NullR=2 hash=32
 *     name=fsf preset=fairy-stockfish option.Hash=16
 *     name=sjaak cmd=/usr/games/sjaakii arg=-uci proto=uci ranks=1 letters=he
 *         init="setoption name UCI_Variant value xiangqi"
 *
 *   name=NAME        shown in output and PGN (default: "xqf" or the command's base name)
 *   cmd=PROGRAM      an external engine (absent: the built-in engine)
 *   arg=ARG          one command-line argument for it (repeatable, in order)
 *   proto=uci|ucci   its protocol (default uci)
 *   ranks=0|1        its move ranks: 0-9 (ICCS, default) or 1-10
 *   letters=nb|he    its FEN letters for horse/elephant: N/B (default) or H/E
 *   init=LINE        a command sent after the handshake (repeatable), e.g. a variant
 *   preset=NAME      fairy-stockfish, sjaakii or xqf-engine: sets cmd (unless given),
 *                    arg, proto, ranks, letters and init as those engines need
 *   option.NAME=V    built-in: a parameter of the table (or Hash, Threads);
 *                    external: `setoption name NAME value V` (UCCI: `setoption NAME V`)
 *   params=FILE      built-in: a parameter file (options apply on top of it)
 *   hash=MB          hash table size (external: the Hash/hashsize option)
 *   net=FILE|none    the network evaluation: a net file (docs/nnue.md; built-in: loaded,
 *                    and checked by the reader when parsing; external: `setoption name
 *                    EvalFile value FILE`), or none for the hand-crafted evaluation
 *                    (UseNNUE false); absent: the engine's own (its compiled-in net, if any)
 *   netopt=NAME      external: the option net=FILE is sent as (default EvalFile)
 *   threads=N        search threads, 1-256 (built-in: Lazy SMP, engine_set_threads; external:
 *                    `setoption name Threads value N`); a game then wants N cores
 *
 * Parsing checks everything that can be checked before a game: keys, values,
 * parameter names and ranges, the parameter file, that the program exists.
 */
#ifndef XQF_SPEC_H
#define XQF_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#include "params.h"

enum {
    SPEC_NAME_MAX = 64,
    SPEC_TEXT_MAX = 256,
    SPEC_MAX_ARGS = 16,
    SPEC_MAX_OPTIONS = 512 + 8,      /* an SPSA task's tuned options (STORE_SPSA_MAX) and the worker's own (hash, threads, net) */
    SPEC_MAX_INIT = 8,
    SPEC_SHA_HEX = 64
};

#define SPEC_DEFAULT_HASH_MB 16      /* a macro: xqf-match's option table shows it as text */

typedef enum { PROTO_UCI = 0, PROTO_UCCI } Protocol;

typedef struct {
    char name[SPEC_TEXT_MAX];
    char value[SPEC_TEXT_MAX];
} SpecOption;

typedef struct {
    char name[SPEC_NAME_MAX];
    bool external;
    int hash_mb;                         /* 0: not given (external: not sent) */
    int threads;                         /* search threads (Lazy SMP); 0: not given (built-in: 1; external: not sent) */
    /* built-in */
    Params params;
    char params_path[SPEC_TEXT_MAX];     /* "" when none */
    char net[SPEC_TEXT_MAX];             /* net=FILE ("" none given; external: sent as EvalFile) */
    bool no_net;                         /* net=none: the hand-crafted evaluation (external: UseNNUE false) */
    char net_option[SPEC_TEXT_MAX];      /* netopt=NAME: the option an external engine's net goes as ("": EvalFile) */
    /* external */
    char cmd[SPEC_TEXT_MAX];
    char sha256[SPEC_SHA_HEX + 1];       /* "" or the SHA-256 cmd must have: hashed and run from one descriptor */
    bool sandbox;                        /* run cmd in the sandbox (process_spawn_boxed): a worker's engine builds */
    char args[SPEC_MAX_ARGS][SPEC_TEXT_MAX];
    int arg_count;
    Protocol proto;
    bool ranks_from_one;
    bool he_letters;
    int option_count;
    SpecOption options[SPEC_MAX_OPTIONS];
    int init_count;
    char init[SPEC_MAX_INIT][SPEC_TEXT_MAX];
} PlayerSpec;

/*
 * Builds a spec from key=value words (format above); default_hash_mb is
 * used when hash= is not given (0: none).  Returns 0, or -1 with a message
 * naming the bad word in err.
 */
int spec_parse(PlayerSpec *s, int count, char *const words[], int default_hash_mb, char *err,
               size_t errlen);
/* The net= of a spec as a PGN tag names it: the file's base name, "none", or NULL when none was given. */
const char *spec_net_name(const PlayerSpec *s);

#endif

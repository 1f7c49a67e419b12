/*
 * engine_record.h - an engine of the system (032_engines.sql): where its
 * source is, how it is built, how its bench is read, how it is spoken to.
 * Shared by the store (which keeps the records), xqf-tune (which adds and
 * changes them), the builder and the workers (which build, bench and play
 * them): one struct, one set of rules for a record, one bench reader.
 *
 * Text fields are C strings ("" where the database has NULL): no control
 * character anywhere (a newline would split a command or a setoption
 * line), valid UTF-8, bounded by the sizes below.  The placeholders of the
 * commands: <out> the path the builder wants the binary at, <binary> the
 * built binary.
 */
#ifndef XQF_ENGINE_RECORD_H
#define XQF_ENGINE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    ENGINE_NAME_MAX = 64,         /* [A-Za-z0-9][A-Za-z0-9._+-]*: a word on the command line */
    ENGINE_TEXT_MAX = 512,        /* repository, commands, regexes */
    ENGINE_OPTION_MAX = 64,       /* a UCI option's name */
    ENGINE_INIT_MAX = 8,          /* commands after the handshake (= the worker's SPEC_MAX_INIT) */
    ENGINE_INIT_LINE_MAX = 255,   /* each (= the worker's SPEC_TEXT_MAX - 1) */
    ENGINE_DEPTH_MAX = 64,
    ENGINE_STAMP_MAX = 19         /* "YYYY-MM-DD HH:MM:SS" */
};
/* The largest reference speed (nodes/s), as xqf-tune's --ref-nps. */
#define ENGINE_REF_NPS_MAX (INT64_C(1) << 40)

typedef enum { ENGINE_UCI = 0, ENGINE_UCCI } EngineProtocol;

/* A new engine's settings where its record says nothing (engine_record_default). */
#define ENGINE_DEFAULT_BUILD "make -j EXE=<out>"
#define ENGINE_DEFAULT_BINARY "<out>"
#define ENGINE_DEFAULT_BENCH "<binary> bench"
/* Ours ("Nodes searched: N") and Stockfish's ("Nodes searched  : N") alike; the group is the number. */
#define ENGINE_DEFAULT_NODES_RE "Nodes searched *: *([0-9]+)"
#define ENGINE_DEFAULT_NPS_RE "Nodes/second *: *([0-9]+)"
#define ENGINE_DEFAULT_DEPTH 10

typedef struct {
    int64_t id;                                   /* 0 before it is stored */
    char name[ENGINE_NAME_MAX + 1];
    char repo[ENGINE_TEXT_MAX + 1];               /* a git URL or a path the builder can fetch */
    /* how it is built: a command run in the tree, or a target of the tree's own CMake; one of the two */
    char build_command[ENGINE_TEXT_MAX + 1];
    char cmake_target[ENGINE_NAME_MAX + 1];
    char binary[ENGINE_TEXT_MAX + 1];             /* what the build makes: in the tree, or the CMake build folder */
    /* its bench: a command whose output the regexes read (each's first group: the number) ... */
    char bench_command[ENGINE_TEXT_MAX + 1];      /* "": none, a search of fixed positions instead */
    char nodes_re[ENGINE_TEXT_MAX + 1];
    char nps_re[ENGINE_TEXT_MAX + 1];
    /* ... or, without one, the bench positions searched to this depth, counting the nodes it reports */
    int bench_depth;
    /* how it is spoken to (the worker's spec.h: proto, ranks, letters, init) */
    EngineProtocol protocol;
    bool ranks_from_one;                          /* move ranks 1-10 instead of 0-9 */
    bool he_letters;                              /* FEN letters H/E for horse and elephant instead of N/B */
    int init_count;
    char init[ENGINE_INIT_MAX][ENGINE_INIT_LINE_MAX + 1];
    /* its options' names ("": it has none) */
    char hash_option[ENGINE_OPTION_MAX + 1];
    char threads_option[ENGINE_OPTION_MAX + 1];
    char net_option[ENGINE_OPTION_MAX + 1];
    bool needs_net;                               /* it plays only with a net given through net_option */
    int64_t ref_nps;                              /* its bench speed for scaling clocks; 0: unknown */
    char added_by[ENGINE_NAME_MAX + 1];
    char created[ENGINE_STAMP_MAX + 1];
} EngineRecord;

/* The settings of a new engine: a Makefile with EXE=, a bench printing nodes and speed, UCI. This can't fail. */
void engine_record_default(EngineRecord *e);

/* "uci" or "ucci". */
const char *engine_protocol_name(EngineProtocol p);
/* The protocol named text into *p. 0, or -1 when text names none. */
int engine_protocol_parse(const char *text, EngineProtocol *p);

/*
 * Whether e is a record the system can keep: false with the problem in
 * why, named by the field as xqf-tune's options call it ("--binary: ..."),
 * the first one found.  The checks are the migration's and more: a name of
 * the allowed letters; a repository; exactly one of a build command and a
 * CMake target; a binary (a path inside the tree: relative, no ".."); the
 * bench regexes compile (POSIX extended, regcomp) with a group for the
 * number; a depth in [1, ENGINE_DEPTH_MAX] without a bench command; no
 * control character in any text (option names and commands are sent as
 * lines); a reference speed in [0, ENGINE_REF_NPS_MAX]; a net option when
 * it needs a net.
 */
bool engine_record_check(const EngineRecord *e, char *why, size_t size);

/*
 * The nodes and speed of e's bench, read from its output: the last match
 * of each regex, the number its first group captured (at most 18 digits,
 * above 0).  0, or -1 with why (the regex that found nothing, an engine
 * without a bench command, a number that does not fit).
 */
int engine_record_bench(const EngineRecord *e, const char *output, int64_t *nodes, int64_t *nps, char *why,
                        size_t size);

#endif

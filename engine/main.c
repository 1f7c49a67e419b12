/*
 * xqf-engine - the Xiangqi Forge engine.
 *
 *   xqf-engine                 UCI / UCCI on stdin and stdout
 *   xqf-engine perft N [FEN]   per-move counts, then "Nodes searched: N"
 *   xqf-engine bench [DEPTH] [NAME=VALUE...]   the search signature: "Nodes searched: N"
 *                              (NAME=VALUE: parameters, EvalFile=NET, UseNNUE=true|false)
 *   xqf-engine evalnet NET     the net's evaluation of each FEN on stdin (docs/nnue.md)
 *   xqf-engine judge FEN|startpos [MOVES...]   the referee's verdict after the moves
 *   xqf-engine params [FILE]   the parameter table, or a parameter file checked and completed
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench.h"
#include "fen.h"
#include "nnue.h"
#include "params.h"
#include "perft.h"
#include "protocol.h"
#include "rules.h"

static int usage(FILE *f, int code)
{
    fprintf(f, "usage: xqf-engine                 speak UCI or UCCI on stdin/stdout\n"
               "       xqf-engine perft N [FEN]   count the legal move tree to depth N (1-8)\n"
               "       xqf-engine bench [DEPTH] [NAME=VALUE...]\n"
               "                                  search the bench positions (with these parameters, EvalFile=NET,\n"
               "                                  UseNNUE=true|false); prints the node count\n"
               "       xqf-engine evalnet NET     the net's evaluation of each FEN on stdin, one line each\n"
               "       xqf-engine judge FEN|startpos [MOVES...]\n"
               "                                  play the moves; print the referee's verdict\n"
               "       xqf-engine params          the parameter table: name, type, default, min, max, c_end, r_end\n"
               "       xqf-engine params FILE     check a parameter file; print the whole set it gives\n");
    return code;
}

static bool parse_depth(const char *text, int max, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < 1 || v > max)
        return false;
    *out = (int)v;
    return true;
}

/*
 * A FEN from the command line at argv[*i]: one argument ("startpos", or the
 * FEN quoted), or its fields as separate arguments (the placement, then a
 * side letter, then up to four "-" or number fields; no move text looks
 * like these).  Advances *i past it and writes it to out (len bytes).
 * Returns false when the fields do not fit.
 */
static bool fen_argument(int argc, char **argv, int *i, char *out, size_t len)
{
    if (!strcmp(argv[*i], "startpos")) {
        (*i)++;
        return (size_t)snprintf(out, len, "%s", START_FEN) < len;
    }
    size_t n = (size_t)snprintf(out, len, "%s", argv[(*i)++]);
    if (n >= len)
        return false;
    if (strchr(out, ' ') || *i >= argc || strlen(argv[*i]) != 1 || !strchr("wbr", argv[*i][0]))
        return true;
    for (int fields = 0; *i < argc && fields < 5; fields++) {
        const char *f = argv[*i];
        if (fields > 0 && strcmp(f, "-") && strspn(f, "0123456789") != strlen(f))
            break;
        n += (size_t)snprintf(out + n, len - n, " %s", f);
        if (n >= len)
            return false;
        (*i)++;
    }
    return true;
}

static int run_perft(int argc, char **argv)
{
    int depth, i = 3;
    char fen[FEN_MAX * 2] = START_FEN;
    if (argc < 3 || !parse_depth(argv[2], 8, &depth) || (argc > 3 && !fen_argument(argc, argv, &i, fen, sizeof fen))
        || i < argc) {
        fprintf(stderr, "xqf-engine: error: perft needs a depth from 1 to 8 and an optional FEN\n");
        return 2;
    }
    Board b;
    char err[256];
    if (fen_parse(&b, fen, FEN_ANALYSIS, err, sizeof err) != 0) {
        fprintf(stderr, "xqf-engine: error: bad FEN: %s\n", err);
        return 2;
    }
    perft_divide(&b, depth, stdout);
    return 0;
}

/*
 * Plays the moves from the position and prints the referee's verdict
 * (rules_outcome: mate, stalemate, repetition at the third occurrence with
 * perpetual check or chase, the 120-ply rule) as "result: 0-1 (perpetual
 * chase)", or "result: * (none)" when the game goes on.  A move after the
 * game has ended is an error, as it is for the referee.
 */
static int run_judge(int argc, char **argv)
{
    int i = 2;
    char fen[FEN_MAX * 2];
    if (argc < 3 || !fen_argument(argc, argv, &i, fen, sizeof fen)) {
        fprintf(stderr, "xqf-engine: error: judge needs a FEN or 'startpos', then the moves\n");
        return 2;
    }
    Board b;
    char err[256];
    if (fen_parse(&b, fen, FEN_GAME, err, sizeof err) != 0) {
        fprintf(stderr, "xqf-engine: error: bad FEN: %s\n", err);
        return 2;
    }
    Outcome o = rules_outcome(&b);
    for (int ply = 1; i < argc; i++, ply++) {
        Move m;
        if (o.result != RESULT_NONE) {
            fprintf(stderr, "xqf-engine: error: move %d (%s): the game is over (%s, %s)\n", ply, argv[i],
                    rules_result_text(o.result), rules_reason_text(o.reason));
            return 2;
        }
        if (move_parse(&b, argv[i], &m, err, sizeof err) != 0) {
            fprintf(stderr, "xqf-engine: error: move %d (%s): %s\n", ply, argv[i], err);
            return 2;
        }
        board_make(&b, m);
        o = rules_outcome(&b);
    }
    printf("result: %s (%s)\n", rules_result_text(o.result), rules_reason_text(o.reason));
    return 0;
}

/*
 * bench [DEPTH] [NAME=VALUE...]: the signature, or a change's tree with
 * parameters set; EvalFile=NET benches with a net file, UseNNUE=false
 * with the hand-crafted evaluation (the engine options of those names).
 */
static int run_bench(int argc, char **argv)
{
    int depth = 0, i = 2;
    if (i < argc && !strchr(argv[i], '=')) {
        if (!parse_depth(argv[i], 30, &depth)) {
            fprintf(stderr, "xqf-engine: error: bench takes an optional depth from 1 to 30, then NAME=VALUE parameters\n");
            return 2;
        }
        i++;
    }
    Engine *like = engine_new();
    if (!like) {
        fprintf(stderr, "xqf-engine: error: bench: cannot create an engine (out of memory, or the compiled-in net is refused)\n");
        return 1;
    }
    Params p;
    params_default(&p);
    int status = 0;
    for (; i < argc && !status; i++) {
        char err[512];
        if (!strncasecmp(argv[i], "EvalFile=", 9)) {
            if (engine_load_net(like, argv[i] + 9, err, sizeof err) != 0) {
                fprintf(stderr, "xqf-engine: error: bench: EvalFile: %s\n", err);
                status = 2;
            }
        } else if (!strncasecmp(argv[i], "UseNNUE=", 8)) {
            const char *v = argv[i] + 8;
            if (strcasecmp(v, "true") && strcasecmp(v, "false")) {
                fprintf(stderr, "xqf-engine: error: bench: UseNNUE needs true or false, got '%s'\n", v);
                status = 2;
            }
            engine_set_use_nnue(like, !strcasecmp(v, "true"));
        } else if (params_apply_list(&p, argv[i], err, sizeof err) != 0) {
            fprintf(stderr, "xqf-engine: error: bench: %s\n", err);
            status = 2;
        }
    }
    if (!status) {
        engine_set_params(like, &p);
        status = bench_run_like(depth, like, stdout) ? 0 : 1;
    }
    engine_destroy(&like);
    return status;
}

/*
 * evalnet NET: for each line of stdin, a FEN, the net's integer evaluation
 * (nnue_evaluate: centipawns, side to move's view, nothing added), or
 * "error: ..." for a line that is no position; the trainer compares these
 * with its float evaluation (docs/nnue.md).  A net the reader refuses: the
 * message on stderr and exit status 2.
 */
static int run_evalnet(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "xqf-engine: error: evalnet needs one net file\n");
        return 2;
    }
    char err[512];
    NnueNet *net = nnue_load_file(argv[2], err, sizeof err);
    if (!net) {
        fprintf(stderr, "xqf-engine: error: evalnet: %s\n", err);
        return 2;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        Board b;
        if (fen_parse(&b, line, FEN_ANALYSIS, err, sizeof err) != 0)
            printf("error: %s\n", err);
        else
            printf("%d\n", nnue_evaluate(net, &b));
        fflush(stdout); /* a caller may write a line and wait for its answer */
    }
    free(line);
    nnue_destroy(&net);
    return 0;
}

/* Without a file: one line per parameter in Fishtest's SPSA input form. */
static int run_params(int argc, char **argv)
{
    Params p;
    params_default(&p);
    if (argc == 2) {
        for (int i = 0; i < PARAM_COUNT; i++) {
            const ParamInfo *info = &PARAM_INFO[i];
            printf("%s, int, %d, %d, %d, %g, %g\n", info->name, params_value(&p, info), info->min, info->max,
                   info->c_end, info->r_end);
        }
        return 0;
    }
    char err[512];
    if (argc != 3) {
        fprintf(stderr, "xqf-engine: error: params takes at most one file\n");
        return 2;
    }
    if (params_load(&p, argv[2], err, sizeof err) != 0) {
        fprintf(stderr, "xqf-engine: error: %s\n", err);
        return 2;
    }
    printf("# parameter set %016llx\n", (unsigned long long)params_hash(&p));
    return params_write(&p, stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 1)
        return protocol_run(stdin, stdout);
    if (!strcmp(argv[1], "perft"))
        return run_perft(argc, argv);
    if (!strcmp(argv[1], "bench"))
        return run_bench(argc, argv);
    if (!strcmp(argv[1], "judge"))
        return run_judge(argc, argv);
    if (!strcmp(argv[1], "evalnet"))
        return run_evalnet(argc, argv);
    if (!strcmp(argv[1], "params"))
        return run_params(argc, argv);
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
        return usage(stdout, 0);
    fprintf(stderr, "xqf-engine: error: unknown command '%s'\n", argv[1]);
    return usage(stderr, 2);
}

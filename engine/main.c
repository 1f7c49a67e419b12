/*
 * xqf-engine - the Xiangqi Forge engine.
 *
 *   xqf-engine                 UCI / UCCI on stdin and stdout
 *   xqf-engine perft N [FEN]   per-move counts, then "Nodes searched: N"
 *   xqf-engine bench [DEPTH] [NAME=VALUE...]   the search signature: "Nodes searched: N"
 *   xqf-engine judge FEN|startpos [MOVES...]   the referee's verdict after the moves
 *   xqf-engine params [FILE]   the parameter table, or a parameter file checked and completed
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "fen.h"
#include "params.h"
#include "perft.h"
#include "protocol.h"
#include "rules.h"

static int usage(FILE *f, int code)
{
    fprintf(f, "usage: xqf-engine                 speak UCI or UCCI on stdin/stdout\n"
               "       xqf-engine perft N [FEN]   count the legal move tree to depth N (1-8)\n"
               "       xqf-engine bench [DEPTH] [NAME=VALUE...]\n"
               "                                  search the bench positions (with these parameters); prints the node count\n"
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

/* bench [DEPTH] [NAME=VALUE...]: the signature, or a change's tree with parameters set. */
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
    Params p;
    params_default(&p);
    for (; i < argc; i++) {
        char err[160];
        if (params_apply_list(&p, argv[i], err, sizeof err) != 0) {
            fprintf(stderr, "xqf-engine: error: bench: %s\n", err);
            return 2;
        }
    }
    return bench_run(depth, &p, stdout) ? 0 : 1;
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
    if (!strcmp(argv[1], "params"))
        return run_params(argc, argv);
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
        return usage(stdout, 0);
    fprintf(stderr, "xqf-engine: error: unknown command '%s'\n", argv[1]);
    return usage(stderr, 2);
}

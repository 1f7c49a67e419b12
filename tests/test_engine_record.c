/*
 * Engine records' rules and bench reader (schemas/formats/engine_record.h), no
 * database: our engine's real bench output (xqf-engine bench at a small
 * depth), Stockfish's format, an engine's own format through its regexes,
 * and output that cannot be read; records the rules refuse, each with the
 * option it names.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_record.h"

/* Ours, as 032_engines.sql records it. */
static EngineRecord xqf(void)
{
    EngineRecord e;
    engine_record_default(&e);
    snprintf(e.name, sizeof e.name, "xqf");
    snprintf(e.repo, sizeof e.repo, ".");
    e.build_command[0] = '\0';
    snprintf(e.cmake_target, sizeof e.cmake_target, "xqf-engine");
    snprintf(e.binary, sizeof e.binary, "bin/xqf-engine");
    e.ref_nps = 1000000;
    return e;
}

/* The sum of the "nodes N" of bench's lines per position: the total it must print. */
static int64_t position_nodes(const char *out)
{
    int64_t sum = 0;
    for (const char *p = strstr(out, "Position "); p; p = strstr(p + 1, "Position ")) {
        const char *n = strstr(p, " nodes ");
        long long v;
        cr_assert(n && sscanf(n, " nodes %lld", &v) == 1, "a position line without nodes");
        sum += v;
    }
    return sum;
}

Test(engine_record, reads_our_real_bench)
{
    static char out[1 << 16];
    FILE *p = popen("'" XQF_BIN "/xqf-engine' bench 3", "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    cr_assert_eq(pclose(p), 0, "%s", out);
    EngineRecord e = xqf();
    char why[512];
    cr_assert(engine_record_check(&e, why, sizeof why), "%s", why);
    int64_t nodes = 0, nps = 0;
    cr_assert_eq(engine_record_bench(&e, out, &nodes, &nps, why, sizeof why), 0, "%s\n%s", why, out);
    cr_assert_eq(nodes, position_nodes(out), "%s", out);
    cr_assert_gt(nps, 0);
}

Test(engine_record, reads_stockfish_format_and_takes_the_last_match)
{
    const char *out = "Position: 1/2 (rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w)\n"
                      "info depth 1 seldepth 1 multipv 1 score cp 18 nodes 20 nps 10000 time 2 pv h2e2\n"
                      "bestmove h2e2\n"
                      "Nodes searched  : 111\n"       /* a partial total: the last one counts */
                      "\n===========================\n"
                      "Total time (ms) : 1234\n"
                      "Nodes searched  : 1652339\n"
                      "Nodes/second    : 1339008\n";
    EngineRecord e;
    engine_record_default(&e);
    snprintf(e.name, sizeof e.name, "pikafish");
    snprintf(e.repo, sizeof e.repo, "https://github.com/official-pikafish/Pikafish");
    char why[256];
    int64_t nodes, nps;
    cr_assert_eq(engine_record_bench(&e, out, &nodes, &nps, why, sizeof why), 0, "%s", why);
    cr_assert_eq(nodes, 1652339);
    cr_assert_eq(nps, 1339008);

    /* an engine's own format, read by its own regexes */
    snprintf(e.nodes_re, sizeof e.nodes_re, "^([0-9]+) nodes");
    snprintf(e.nps_re, sizeof e.nps_re, "nodes ([0-9]+) nps$");
    cr_assert(engine_record_check(&e, why, sizeof why), "%s", why);
    cr_assert_eq(engine_record_bench(&e, "bench done\n4242 nodes 99 nps\n", &nodes, &nps, why, sizeof why), 0,
                 "%s", why);
    cr_assert_eq(nodes, 4242);
    cr_assert_eq(nps, 99);
}

/* Output that cannot be read is refused with why, nothing read. */
Test(engine_record, refuses_garbage_with_a_reason)
{
    EngineRecord e;
    engine_record_default(&e);
    snprintf(e.name, sizeof e.name, "some");
    const struct {
        const char *out, *why;
    } bad[] = {
        { "", "finds nothing" },
        { "Segmentation fault (core dumped)\n", "nodes: 'Nodes searched *: *([0-9]+)' finds nothing" },
        { "Nodes searched: 1234\n", "nps: 'Nodes/second *: *([0-9]+)' finds nothing" },
        { "Nodes searched: 0\nNodes/second: 5\n", "the bench reports 0" },
        { "Nodes searched: 1234567890123456789012\nNodes/second: 5\n", "not a count" },
        { "\x01\x02\xff garbage \n Nodes: lots\n", "finds nothing" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char why[256] = "";
        int64_t nodes = -1, nps = -1;
        cr_assert_eq(engine_record_bench(&e, bad[i].out, &nodes, &nps, why, sizeof why), -1, "case %zu", i);
        cr_assert_not_null(strstr(why, bad[i].why), "case %zu: %s", i, why);
        cr_assert(nodes == 0 && nps == 0, "case %zu", i);
    }
    /* an engine without a bench command has no output to read */
    e.bench_command[0] = '\0';
    char why[256];
    int64_t nodes, nps;
    cr_assert_eq(engine_record_bench(&e, "Nodes searched: 5\nNodes/second: 5\n", &nodes, &nps, why, sizeof why), -1);
    cr_assert_not_null(strstr(why, "no bench command"), "%s", why);
}

/* Each bad record is refused with the option it names; the defaults and ours pass. */
Test(engine_record, bad_records_are_named)
{
    char why[256];
    EngineRecord ok;
    engine_record_default(&ok);
    snprintf(ok.name, sizeof ok.name, "fairy-stockfish");
    snprintf(ok.repo, sizeof ok.repo, "https://github.com/fairy-stockfish/Fairy-Stockfish");
    cr_assert(engine_record_check(&ok, why, sizeof why), "%s", why);
    EngineRecord ours = xqf();
    cr_assert(engine_record_check(&ours, why, sizeof why), "%s", why);

    /* each case spoils one field of a good record; the message starts with the option it names */
    static const char *const names[] = {
        "NAME", "NAME", "--repo", "--build", "--build and --cmake-target", "--binary", "--binary", "--binary",
        "--bench-nodes", "--bench-nps", "--bench-depth", "--protocol", "--init", "--init", "--hash-option",
        "--threads-option", "--net-option", "--ref-nps", "--repo", "--binary: with --cmake-target",
    };
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++) {
        EngineRecord e = ok;
        switch (i) {
        case 0: e.name[0] = '\0'; break;
        case 1: snprintf(e.name, sizeof e.name, "-dash"); break;
        case 2: e.repo[0] = '\0'; break;
        case 3: e.build_command[0] = '\0'; break;
        case 4: snprintf(e.cmake_target, sizeof e.cmake_target, "xqf-engine"); break;
        case 5: e.binary[0] = '\0'; break;
        case 6: snprintf(e.binary, sizeof e.binary, "/usr/games/engine"); break;
        case 7: snprintf(e.binary, sizeof e.binary, "src/../../engine"); break;
        case 8: snprintf(e.nodes_re, sizeof e.nodes_re, "Nodes ([0-9]+"); break;
        case 9: snprintf(e.nps_re, sizeof e.nps_re, "Nodes/second: [0-9]+"); break;
        case 10: e.bench_command[0] = '\0'; e.bench_depth = 0; break;
        case 11: e.protocol = (EngineProtocol)7; break;
        case 12: e.init_count = 1; snprintf(e.init[0], sizeof e.init[0], "setoption name A\nvalue 1"); break;
        case 13: e.init_count = 1; e.init[0][0] = '\0'; break;
        case 14: snprintf(e.hash_option, sizeof e.hash_option, "Ha\nsh"); break;
        case 15: snprintf(e.threads_option, sizeof e.threads_option, "Thr\teads"); break;
        case 16: e.needs_net = true; e.net_option[0] = '\0'; break;
        case 17: e.ref_nps = -1; break;
        case 18: snprintf(e.repo, sizeof e.repo, "bad \xc3\x28 utf-8"); break;
        case 19: e.build_command[0] = '\0'; snprintf(e.cmake_target, sizeof e.cmake_target, "engine"); break;
        }
        why[0] = '\0';
        cr_assert_not(engine_record_check(&e, why, sizeof why), "case %d passed", i);
        cr_assert_eq(strncmp(why, names[i], strlen(names[i])), 0, "case %d: %s", i, why);
    }
    /* without a bench command the regexes are not read: a UCCI engine's record */
    EngineRecord ucci = ok;
    ucci.bench_command[0] = '\0';
    ucci.nodes_re[0] = '\0';
    ucci.protocol = ENGINE_UCCI;
    cr_assert(engine_record_check(&ucci, why, sizeof why), "%s", why);
    EngineProtocol p;
    cr_assert(engine_protocol_parse("ucci", &p) == 0 && p == ENGINE_UCCI);
    cr_assert_eq(engine_protocol_parse("xboard", &p), -1);
    cr_assert_str_eq(engine_protocol_name(ENGINE_UCI), "uci");
}

/*
 * engine.c - xqf-tune engine add|list|show|modify: the engines the system
 * builds, benches and plays (032_engines.sql, schemas/formats/engine_record.h):
 * where each one's source is, how it is built and its bench read, how it
 * is spoken to.  Ours, xqf, is the first record.  Only an operator (the
 * schema's owner, as xqf-tune connects for build, net add and user) adds
 * or changes one; every change goes into the engine's history.  A record
 * the rules refuse is not written: its problem, exit status 2.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "engine_record.h"
#include "store_engines.h"

static const OptSpec ENGINE_OPTIONS[] = {
    { "--repo", OPT_TEXT, "URL|PATH", NULL, .help = "its git repository: a URL or a path the builder can fetch" },
    { "--build", OPT_TEXT, "CMD", NULL, .help = "the build command, run at the tree's root (add: " ENGINE_DEFAULT_BUILD ")" },
    { "--cmake-target", OPT_TEXT, "TARGET", NULL, .help = "instead of --build: this target of the tree's own CMake (ours: xqf-engine)" },
    { "--binary", OPT_TEXT, "PATH", NULL, .help = "what the build makes, in the tree (CMake: in its build folder; add: " ENGINE_DEFAULT_BINARY ")" },
    { "--bench", OPT_TEXT, "CMD|none", NULL, .help = "its bench command (add: " ENGINE_DEFAULT_BENCH "), or none: a search of the bench positions" },
    { "--bench-nodes", OPT_TEXT, "REGEX", NULL, .help = "finds the bench's nodes, its first group the number (add: " ENGINE_DEFAULT_NODES_RE ")" },
    { "--bench-nps", OPT_TEXT, "REGEX", NULL, .help = "finds the bench's nodes/s (add: " ENGINE_DEFAULT_NPS_RE ")" },
    { "--bench-depth", OPT_INT, "N", NULL, .imin = 1, .imax = ENGINE_DEPTH_MAX, .help = "with --bench none: the depth of each search (add: 10)" },
    { "--protocol", OPT_TEXT, "uci|ucci", NULL, .help = "how it is spoken to (add: uci)" },
    { "--ranks", OPT_INT, "0|1", NULL, .imin = 0, .imax = 1, .help = "its moves' ranks: 0-9 (ICCS; add: 0) or 1-10" },
    { "--letters", OPT_TEXT, "nb|he", NULL, .help = "its FEN letters for horse and elephant: N/B (add: nb) or H/E" },
    { "--init", OPT_TEXT, "LINE", NULL, .repeat = true, .help = "a command sent after the handshake, in order (modify: all of them; '' alone: none)" },
    { "--hash-option", OPT_TEXT, "NAME", NULL, .help = "its hash size option ('': none; add: Hash)" },
    { "--threads-option", OPT_TEXT, "NAME", NULL, .help = "its threads option ('': none; add: Threads)" },
    { "--net-option", OPT_TEXT, "NAME", NULL, .help = "the option that takes a net file ('': none; add: EvalFile)" },
    { "--needs-net", OPT_TEXT, "yes|no", NULL, .help = "whether it plays only with a net (add: no)" },
    { "--ref-nps", OPT_INT, "N", NULL, .imin = 0, .imax = ENGINE_REF_NPS_MAX, .help = "its bench speed, nodes/s, for scaling clocks (add: 0, unknown)" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable ENGINE_TABLE = {
    .program = "xqf-tune", .spec = ENGINE_OPTIONS, .max_positional = 2,
    .usage =
        "Usage: xqf-tune engine add NAME --repo URL|PATH [--build CMD | --cmake-target TARGET]\n"
        "                           [--binary PATH] [--bench CMD|none] [--bench-nodes REGEX]\n"
        "                           [--bench-nps REGEX] [--bench-depth N] [--protocol uci|ucci]\n"
        "                           [--ranks 0|1] [--letters nb|he] [--init LINE]...\n"
        "                           [--hash-option NAME] [--threads-option NAME] [--net-option NAME]\n"
        "                           [--needs-net yes|no] [--ref-nps N] [--db CONNINFO]\n"
        "       xqf-tune engine modify NAME [the options of add] [--db CONNINFO]\n"
        "       xqf-tune engine list [--db CONNINFO]\n"
        "       xqf-tune engine show NAME [--db CONNINFO]\n"
        "\n"
        "The engines the system builds, benches and plays, each a record: its git\n"
        "repository; how it is built (a command run at the tree's root, by default\n"
        "`make -j EXE=<out>` as OpenBench's engines take it, or a target of the tree's\n"
        "own CMake) and the binary the build makes (<out>: where the builder wants\n"
        "it); how its bench is read (a command, <binary> the built binary, and two\n"
        "POSIX extended regexes whose first group is the number of nodes and of\n"
        "nodes/s, by default ours and Stockfish's format; or none, for an engine\n"
        "without one: the bench positions searched to --bench-depth, counting the\n"
        "nodes it reports); how it is spoken to (UCI or UCCI, ranks from 0 or 1, N/B\n"
        "or H/E letters, commands after the handshake such as `setoption name\n"
        "UCI_Variant value xiangqi`); the names of its hash, threads and net options,\n"
        "whether it needs a net, and its reference speed for scaling clocks.  Ours is\n"
        "the first record, xqf: this repository's CMake target xqf-engine.\n"
        "add records a new engine, modify changes the options given of one and keeps\n"
        "the change in its history (who, when, the old and new values; show lists\n"
        "it).  Only an operator adds or changes engines: xqf-tune connected as the\n"
        "schema's owner.  A record without a build command or binary, with an\n"
        "unknown protocol or letters, a bench regex that does not compile or has no\n"
        "group, a negative speed, a control character (a newline) in a command or an\n"
        "option's name, a name taken (add) or unknown (modify, show) is refused with\n"
        "its problem and exit status 2, and nothing is recorded.\n",
};

/* The options add and modify take: all but --db. */
static bool any_setting(const Opts *o)
{
    for (const OptSpec *s = ENGINE_OPTIONS; s->name; s++)
        if (strcmp(s->name, "--db") != 0 && opts_given(o, s->name))
            return true;
    return false;
}

/* Copies option's text into dst (size bytes) when given. Exit status (CLI_USAGE: too long). */
static int take(const Opts *o, const char *option, char *dst, size_t size)
{
    const char *v = opts_text(o, option);
    if (!opts_given(o, option))
        return CLI_OK;
    if (strlen(v) >= size)
        return cli_fail(CLI_USAGE, "%s: at most %zu bytes", option, size - 1);
    memcpy(dst, v, strlen(v) + 1);
    return CLI_OK;
}

/* A yes|no option into *flag when given. Exit status. */
static int take_flag(const Opts *o, const char *option, bool *flag)
{
    const char *v = opts_text(o, option);
    if (!opts_given(o, option))
        return CLI_OK;
    if (strcmp(v, "yes") != 0 && strcmp(v, "no") != 0)
        return cli_fail(CLI_USAGE, "%s: yes or no, not '%s'", option, v);
    *flag = strcmp(v, "yes") == 0;
    return CLI_OK;
}

/* The options given, applied over *e (add: the defaults; modify: the record). Exit status. */
static int apply(const Opts *o, EngineRecord *e)
{
    if (opts_given(o, "--build") && opts_given(o, "--cmake-target"))
        return cli_fail(CLI_USAGE, "--build and --cmake-target: give one of them, not both");
    int status = take(o, "--repo", e->repo, sizeof e->repo);
    if (status == CLI_OK && opts_given(o, "--build")) {
        e->cmake_target[0] = '\0';
        status = take(o, "--build", e->build_command, sizeof e->build_command);
    }
    if (status == CLI_OK && opts_given(o, "--cmake-target")) {
        e->build_command[0] = '\0';
        status = take(o, "--cmake-target", e->cmake_target, sizeof e->cmake_target);
    }
    if (status == CLI_OK)
        status = take(o, "--binary", e->binary, sizeof e->binary);
    if (status == CLI_OK && opts_given(o, "--bench")) {
        const char *bench = opts_text(o, "--bench");
        if (!*bench)
            return cli_fail(CLI_USAGE, "--bench: a command (" ENGINE_DEFAULT_BENCH ") or none");
        status = strcmp(bench, "none") == 0 ? (e->bench_command[0] = '\0', CLI_OK)
                                            : take(o, "--bench", e->bench_command, sizeof e->bench_command);
    }
    if (status == CLI_OK)
        status = take(o, "--bench-nodes", e->nodes_re, sizeof e->nodes_re);
    if (status == CLI_OK)
        status = take(o, "--bench-nps", e->nps_re, sizeof e->nps_re);
    if (status != CLI_OK)
        return status;
    if (opts_given(o, "--bench-depth"))
        e->bench_depth = (int)opts_int(o, "--bench-depth");
    if (opts_given(o, "--protocol") && engine_protocol_parse(opts_text(o, "--protocol"), &e->protocol) != 0)
        return cli_fail(CLI_USAGE, "--protocol: '%s' is not a protocol (uci or ucci)", opts_text(o, "--protocol"));
    if (opts_given(o, "--ranks"))
        e->ranks_from_one = opts_int(o, "--ranks") == 1;
    if (opts_given(o, "--letters")) {
        const char *l = opts_text(o, "--letters");
        if (strcmp(l, "nb") != 0 && strcmp(l, "he") != 0)
            return cli_fail(CLI_USAGE, "--letters: '%s' is not a dialect's letters (nb: N/B, he: H/E)", l);
        e->he_letters = strcmp(l, "he") == 0;
    }
    if (opts_given(o, "--init")) {
        int n = 0;
        while (opts_nth(o, "--init", n))
            n++;
        if (n > ENGINE_INIT_MAX)
            return cli_fail(CLI_USAGE, "--init: at most %d commands", ENGINE_INIT_MAX);
        e->init_count = n == 1 && !*opts_nth(o, "--init", 0) ? 0 : n;
        for (int i = 0; i < e->init_count; i++) {
            const char *line = opts_nth(o, "--init", i);
            if (strlen(line) > ENGINE_INIT_LINE_MAX)
                return cli_fail(CLI_USAGE, "--init: at most %d bytes a command", ENGINE_INIT_LINE_MAX);
            memcpy(e->init[i], line, strlen(line) + 1);
        }
    }
    status = take(o, "--hash-option", e->hash_option, sizeof e->hash_option);
    if (status == CLI_OK)
        status = take(o, "--threads-option", e->threads_option, sizeof e->threads_option);
    if (status == CLI_OK)
        status = take(o, "--net-option", e->net_option, sizeof e->net_option);
    if (status == CLI_OK)
        status = take_flag(o, "--needs-net", &e->needs_net);
    if (status == CLI_OK && opts_given(o, "--ref-nps"))
        e->ref_nps = opts_int(o, "--ref-nps");
    if (status != CLI_OK)
        return status;
    char why[512];
    return engine_record_check(e, why, sizeof why) ? CLI_OK : cli_fail(CLI_USAGE, "%s", why);
}

/* The database for a change of the engines: an operator's (cli_open_operator). Exit status. */
static int open_as_operator(const Opts *o, const char *verb, Store **s)
{
    char what[32];
    snprintf(what, sizeof what, "engine %s", verb);
    return cli_open_operator(o, what, "adds or changes engines", s);
}

/* A value of the history as shown: "none" for an empty one (a NULL column, an option the engine lacks). */
static const char *value_shown(const char *v)
{
    return *v ? cli_shown(v) : "none";
}

static int engine_add(const Opts *o, const char *name)
{
    EngineRecord *e = malloc(sizeof *e);
    if (!e)
        return cli_fail(CLI_FAIL, "out of memory");
    engine_record_default(e);
    int status = strlen(name) <= ENGINE_NAME_MAX ? CLI_OK : cli_fail(CLI_USAGE, "NAME: at most %d bytes",
                                                                     ENGINE_NAME_MAX);
    if (status == CLI_OK) {
        memcpy(e->name, name, strlen(name) + 1);
        status = opts_given(o, "--repo") ? apply(o, e)
                 : cli_fail(CLI_USAGE, "engine add: give --repo, the engine's git repository (a URL or a path)");
    }
    Store *s = NULL;
    if (status == CLI_OK)
        status = open_as_operator(o, "add", &s);
    char actor[STORE_NAME_MAX + 1];
    cli_actor(actor, sizeof actor);
    int64_t id = 0;
    int rc = status == CLI_OK ? store_engine_add(s, e, actor, &id) : 1;
    if (rc < 0)
        status = cli_fail(CLI_FAIL, "cannot record the engine");
    else if (rc == 0)
        status = cli_fail(CLI_USAGE, "engine add: '%s' exists (xqf-tune engine show %s; modify changes it)", name,
                          name);
    if (status == CLI_OK)
        printf("Engine: %s\nId: %" PRId64 "\n", e->name, id);
    store_destroy(&s);
    free(e);
    return status;
}

static int engine_modify(const Opts *o, const char *name)
{
    if (!any_setting(o))
        return cli_fail(CLI_USAGE, "engine modify: nothing to change (the options of add; see xqf-tune engine "
                        "--help)");
    Store *s = NULL;
    int status = open_as_operator(o, "modify", &s);
    EngineRecord *e = malloc(sizeof *e);
    int found = status == CLI_OK && e ? store_engine_load(s, name, e) : -1;
    StoreEngineChange *before = NULL, *after = NULL;
    int n0 = found > 0 ? store_engine_history(s, name, &before) : -1;
    if (status == CLI_OK && (found < 0 || (found > 0 && n0 < 0)))
        status = cli_fail(CLI_FAIL, "cannot read the engines");
    else if (status == CLI_OK && found == 0)
        status = cli_fail(CLI_USAGE, "engine modify: no engine '%s' (xqf-tune engine list)", name);
    if (status == CLI_OK)
        status = apply(o, e);
    char actor[STORE_NAME_MAX + 1];
    cli_actor(actor, sizeof actor);
    int rc = status == CLI_OK ? store_engine_modify(s, e, actor) : 1;
    if (rc < 0)
        status = cli_fail(CLI_FAIL, "cannot record the change");
    else if (rc == 0)
        status = cli_fail(CLI_USAGE, "engine modify: no engine '%s' (xqf-tune engine list)", name);
    int n1 = status == CLI_OK ? store_engine_history(s, name, &after) : 0;
    if (status == CLI_OK) {
        printf("Engine: %s\n", e->name);
        if (n1 <= n0)
            printf("Unchanged: the record already said so\n");
        for (int i = n0; i < n1; i++)
            printf("Changed: %s: %s -> %s\n", after[i].field, value_shown(after[i].old_value),
                   value_shown(after[i].new_value));
    }
    free(before);
    free(after);
    free(e);
    store_destroy(&s);
    return status;
}

static int engine_list(const Opts *o)
{
    if (o->npositional != 1)
        return cli_fail(CLI_USAGE, "engine list takes no argument");
    Store *s = NULL;
    int status = cli_open_db(o, &s);
    EngineRecord *es = NULL;
    int n = status == CLI_OK ? store_engine_list(s, &es) : 0;
    if (n < 0)
        status = cli_fail(CLI_FAIL, "cannot read the engines");
    for (int i = 0; i < n; i++)
        printf("%" PRId64 " %s %s %s %s\n", es[i].id, es[i].name, engine_protocol_name(es[i].protocol),
               es[i].bench_command[0] ? "bench" : "no-bench", cli_shown(es[i].repo));
    free(es);
    store_destroy(&s);
    return status;
}

static void print_record(const EngineRecord *e)
{
    printf("Engine: %s\nId: %" PRId64 "\nRepository: %s\n", e->name, e->id, cli_shown(e->repo));
    if (e->cmake_target[0])
        printf("Build: cmake target %s\n", e->cmake_target);
    else
        printf("Build: %s\n", cli_shown(e->build_command));
    printf("Binary: %s\n", cli_shown(e->binary));
    if (e->bench_command[0])
        printf("Bench: %s\nBench nodes: %s\nBench nps: %s\n", cli_shown(e->bench_command), cli_shown(e->nodes_re),
               cli_shown(e->nps_re));
    else
        printf("Bench: none (the bench positions searched to depth %d, the nodes it reports)\n", e->bench_depth);
    printf("Protocol: %s (ranks %s, letters %s)\n", engine_protocol_name(e->protocol),
           e->ranks_from_one ? "1-10" : "0-9", e->he_letters ? "H/E" : "N/B");
    if (!e->init_count)
        printf("Init: none\n");
    for (int i = 0; i < e->init_count; i++)
        printf("Init: %s\n", cli_shown(e->init[i]));
    printf("Hash option: %s\nThreads option: %s\nNet option: %s\nNeeds a net: %s\n",
           e->hash_option[0] ? cli_shown(e->hash_option) : "none",
           e->threads_option[0] ? cli_shown(e->threads_option) : "none",
           e->net_option[0] ? cli_shown(e->net_option) : "none", e->needs_net ? "yes" : "no");
    if (e->ref_nps > 0)
        printf("Reference speed: %" PRId64 " nodes/s\n", e->ref_nps);
    else
        printf("Reference speed: unknown\n");
    printf("Added by: %s\nCreated: %s\n", cli_shown(e->added_by), e->created);
}

static int engine_show(const Opts *o, const char *name)
{
    Store *s = NULL;
    int status = cli_open_db(o, &s);
    EngineRecord *e = malloc(sizeof *e);
    int found = status == CLI_OK && e ? store_engine_load(s, name, e) : -1;
    StoreEngineChange *h = NULL;
    int n = found > 0 ? store_engine_history(s, name, &h) : 0;
    if (status == CLI_OK && (found < 0 || n < 0))
        status = cli_fail(CLI_FAIL, "cannot read the engines");
    else if (status == CLI_OK && found == 0)
        status = cli_fail(CLI_USAGE, "engine show: no engine '%s' (xqf-tune engine list)", name);
    if (status == CLI_OK) {
        print_record(e);
        printf("History:%s\n", n ? "" : " none");
        for (int i = 0; i < n; i++)
            printf("  %s %s: %s: %s -> %s\n", h[i].at, cli_shown(h[i].actor), h[i].field,
                   value_shown(h[i].old_value), value_shown(h[i].new_value));
    }
    free(h);
    free(e);
    store_destroy(&s);
    return status;
}

int tune_cmd_engine(int argc, char **argv)
{
    Opts o;
    int status = cli_parse(&o, &ENGINE_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO)
        return status;
    const char *sub = o.npositional ? o.positional[0] : "";
    bool add = strcmp(sub, "add") == 0, modify = strcmp(sub, "modify") == 0;
    if (!add && !modify && any_setting(&o))
        return cli_fail(CLI_USAGE, "engine %s takes no settings (they go with add and modify)", sub);
    if (strcmp(sub, "list") == 0)
        return engine_list(&o);
    if ((add || modify || strcmp(sub, "show") == 0) && o.npositional != 2)
        return cli_fail(CLI_USAGE, "engine %s: give the engine's NAME (see xqf-tune engine --help)", sub);
    if (add)
        return engine_add(&o, o.positional[1]);
    if (modify)
        return engine_modify(&o, o.positional[1]);
    if (strcmp(sub, "show") == 0)
        return engine_show(&o, o.positional[1]);
    return cli_fail(CLI_USAGE, "engine: add, list, show or modify (see xqf-tune engine --help)");
}

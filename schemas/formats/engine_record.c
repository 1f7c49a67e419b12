#include "engine_record.h"

#include <inttypes.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "codec.h"

static const char *const PROTOCOLS[] = { [ENGINE_UCI] = "uci", [ENGINE_UCCI] = "ucci" };

void engine_record_default(EngineRecord *e)
{
    *e = (EngineRecord){ .bench_depth = ENGINE_DEFAULT_DEPTH, .protocol = ENGINE_UCI };
    snprintf(e->build_command, sizeof e->build_command, "%s", ENGINE_DEFAULT_BUILD);
    snprintf(e->binary, sizeof e->binary, "%s", ENGINE_DEFAULT_BINARY);
    snprintf(e->bench_command, sizeof e->bench_command, "%s", ENGINE_DEFAULT_BENCH);
    snprintf(e->nodes_re, sizeof e->nodes_re, "%s", ENGINE_DEFAULT_NODES_RE);
    snprintf(e->nps_re, sizeof e->nps_re, "%s", ENGINE_DEFAULT_NPS_RE);
    snprintf(e->hash_option, sizeof e->hash_option, "Hash");
    snprintf(e->threads_option, sizeof e->threads_option, "Threads");
    snprintf(e->net_option, sizeof e->net_option, "EvalFile");
}

const char *engine_protocol_name(EngineProtocol p)
{
    return (unsigned)p < sizeof PROTOCOLS / sizeof PROTOCOLS[0] ? PROTOCOLS[p] : "?";
}

int engine_protocol_parse(const char *text, EngineProtocol *p)
{
    for (size_t i = 0; i < sizeof PROTOCOLS / sizeof PROTOCOLS[0]; i++)
        if (strcmp(text, PROTOCOLS[i]) == 0) {
            *p = (EngineProtocol)i;
            return 0;
        }
    return -1;
}

/* false after writing the problem into why. */
static bool refuse(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool refuse(char *why, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, size, fmt, ap);
    va_end(ap);
    return false;
}

/*
 * Whether text may be kept and sent as (part of) a line: valid UTF-8
 * without control characters; else false with why naming field.
 */
static bool line_ok(const char *field, const char *text, char *why, size_t size)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return refuse(why, size, "%s: a control character (byte 0x%02x%s) after '%.*s': commands and option "
                          "names are sent as lines", field, *p, *p == '\n' ? ", a newline" : "",
                          (int)((const char *)p - text > 60 ? 60 : (const char *)p - text), text);
    if (!xqf_utf8_valid(text, strlen(text)))
        return refuse(why, size, "%s: not valid UTF-8", field);
    return true;
}

/* Whether re compiles (POSIX extended) with a group around the number; else false with why. */
static bool regex_ok(const char *field, const char *re, char *why, size_t size)
{
    if (!*re)
        return refuse(why, size, "%s: give the regex that finds the number (its first group)", field);
    regex_t r;
    int rc = regcomp(&r, re, REG_EXTENDED | REG_NEWLINE);
    if (rc != 0) {
        char err[128];
        regerror(rc, &r, err, sizeof err);
        return refuse(why, size, "%s: '%.100s' does not compile: %s", field, re, err);
    }
    size_t groups = r.re_nsub;
    regfree(&r);
    if (groups < 1)
        return refuse(why, size, "%s: '%.100s' has no group: put ( ) around the number", field, re);
    return true;
}

/* A path inside the tree: relative, no ".." component. */
static bool inside_tree(const char *path)
{
    if (path[0] == '/')
        return false;
    for (const char *p = path; *p;) {
        size_t len = strcspn(p, "/");
        if (len == 2 && p[0] == '.' && p[1] == '.')
            return false;
        p += len + (p[len] == '/');
    }
    return true;
}

bool engine_record_check(const EngineRecord *e, char *why, size_t size)
{
    size_t n = strlen(e->name);
    if (n == 0 || n > ENGINE_NAME_MAX || strspn(e->name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                          "0123456789._+-") != n ||
        strchr("._+-", e->name[0]))
        return refuse(why, size, "NAME: '%.80s' is not an engine name (1 to %d letters, digits and . _ + -, "
                      "starting with a letter or digit)", e->name, ENGINE_NAME_MAX);
    if (!e->repo[0])
        return refuse(why, size, "--repo: give the engine's git repository (a URL or a path the builder can fetch)");
    if (!line_ok("--repo", e->repo, why, size))
        return false;
    if (e->build_command[0] && e->cmake_target[0])
        return refuse(why, size, "--build and --cmake-target: give one of them, not both");
    if (!e->build_command[0] && !e->cmake_target[0])
        return refuse(why, size, "--build: give the build command (default " ENGINE_DEFAULT_BUILD ") or a "
                      "--cmake-target");
    if (!line_ok("--build", e->build_command, why, size))
        return false;
    n = strlen(e->cmake_target);
    if (strspn(e->cmake_target, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-") != n)
        return refuse(why, size, "--cmake-target: '%.80s' is not a CMake target name (letters, digits, . _ + -)",
                      e->cmake_target);
    if (!e->binary[0])
        return refuse(why, size, "--binary: give the binary the build makes (default " ENGINE_DEFAULT_BINARY ")");
    if (!line_ok("--binary", e->binary, why, size))
        return false;
    if (!inside_tree(e->binary))
        return refuse(why, size, "--binary: '%.100s' is not a path inside the build's tree (relative, no ..)",
                      e->binary);
    /* <out> is where a build command is told to put it: a CMake target's binary has a path of its own */
    if (e->cmake_target[0] && strstr(e->binary, "<out>"))
        return refuse(why, size, "--binary: with --cmake-target, give the binary's path in the CMake build folder "
                      "(ours: bin/xqf-engine)");
    if (e->bench_command[0]) {
        if (!line_ok("--bench", e->bench_command, why, size) || !regex_ok("--bench-nodes", e->nodes_re, why, size) ||
            !regex_ok("--bench-nps", e->nps_re, why, size))
            return false;
    } else if (e->bench_depth < 1 || e->bench_depth > ENGINE_DEPTH_MAX)
        return refuse(why, size, "--bench-depth: %d is not a depth in [1, %d]", e->bench_depth, ENGINE_DEPTH_MAX);
    if ((unsigned)e->protocol >= sizeof PROTOCOLS / sizeof PROTOCOLS[0])
        return refuse(why, size, "--protocol: uci or ucci");
    if (e->init_count < 0 || e->init_count > ENGINE_INIT_MAX)
        return refuse(why, size, "--init: at most %d commands", ENGINE_INIT_MAX);
    for (int i = 0; i < e->init_count; i++) {
        if (!e->init[i][0])
            return refuse(why, size, "--init: an empty command (--init '' alone: none)");
        if (!line_ok("--init", e->init[i], why, size))
            return false;
    }
    const struct {
        const char *field, *text;
    } options[] = { { "--hash-option", e->hash_option }, { "--threads-option", e->threads_option },
                    { "--net-option", e->net_option } };
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++)
        if (!line_ok(options[i].field, options[i].text, why, size))
            return false;
    if (e->needs_net && !e->net_option[0])
        return refuse(why, size, "--net-option: an engine that needs a net takes it through an option: name it");
    if (e->ref_nps < 0 || e->ref_nps > ENGINE_REF_NPS_MAX)
        return refuse(why, size, "--ref-nps: %" PRId64 " is not a speed in [0, %" PRId64 "] nodes/s (0: unknown)",
                      e->ref_nps, ENGINE_REF_NPS_MAX);
    return true;
}

/* The number of the last match of re (compiled as the record's check compiles it) in output, into *value. */
static int last_number(const char *field, const char *re, const char *output, int64_t *value, char *why,
                       size_t size)
{
    regex_t r;
    if (regcomp(&r, re, REG_EXTENDED | REG_NEWLINE) != 0) {
        refuse(why, size, "%s: '%.100s' does not compile", field, re);
        return -1;
    }
    regmatch_t m[2];
    bool found = false;
    regoff_t so = -1, eo = -1;          /* the last match's group, from output's start */
    size_t off = 0, total = strlen(output);
    while (off <= total && regexec(&r, output + off, 2, m, off > 0 && output[off - 1] != '\n' ? REG_NOTBOL : 0) == 0) {
        found = true;
        so = r.re_nsub >= 1 && m[1].rm_so >= 0 ? (regoff_t)off + m[1].rm_so : -1;
        eo = so >= 0 ? (regoff_t)off + m[1].rm_eo : -1;
        /* on past the match; an empty one would find itself again */
        off += (size_t)(m[0].rm_eo > m[0].rm_so ? m[0].rm_eo : m[0].rm_so + 1);
    }
    regfree(&r);
    if (!found) {
        refuse(why, size, "%s: '%.100s' finds nothing in the bench's output", field, re);
        return -1;
    }
    if (so < 0) {
        refuse(why, size, "%s: '%.100s' matched, but no group of it did", field, re);
        return -1;
    }
    const char *digits = output + so;
    size_t len = (size_t)(eo - so);
    if (len == 0 || len > 18 || strspn(digits, "0123456789") < len) {
        refuse(why, size, "%s: '%.*s' is not a count (1 to 18 digits)", field, (int)(len > 40 ? 40 : len), digits);
        return -1;
    }
    int64_t v = 0;
    for (size_t i = 0; i < len; i++)
        v = v * 10 + (digits[i] - '0');
    if (v <= 0) {
        refuse(why, size, "%s: the bench reports %" PRId64, field, v);
        return -1;
    }
    *value = v;
    return 0;
}

int engine_record_bench(const EngineRecord *e, const char *output, int64_t *nodes, int64_t *nps, char *why,
                        size_t size)
{
    *nodes = *nps = 0;
    if (!e->bench_command[0]) {
        refuse(why, size, "engine %s has no bench command: its nodes come from a search of the bench positions "
               "to depth %d, not from an output to read", e->name, e->bench_depth);
        return -1;
    }
    int64_t n = 0, s = 0;
    if (last_number("nodes", e->nodes_re, output, &n, why, size) != 0 ||
        last_number("nps", e->nps_re, output, &s, why, size) != 0)
        return -1;
    *nodes = n;
    *nps = s;
    return 0;
}

#define _DEFAULT_SOURCE /* realpath */
#include "tune_db.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "sha256.h"
#include "params.h"
#include "report.h"
#include "stats.h"
#include "store.h"

enum { EXIT_USAGE = 2, MAX_OPTS = 24, BOOK_MAX = 100000 };

/* Prints "xqf-tune: error: <message>" on stderr; returns status. */
static int fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "xqf-tune: error: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return status;
}

/* ---- arguments ---------------------------------------------------------------- */

/* A command's options: names (NULL-terminated); values filled by parse_args. */
typedef struct {
    const char *cmd;                 /* for messages: "spsa new" */
    const char *usage;
    const char *const *names;        /* "--db", ... */
    const char *values[MAX_OPTS];
    const char *positional[2];
    int npositional, max_positional;
} Args;

/* Returns -1 when all is well, else the exit status (help printed: 0; error: 2). */
static int parse_args(Args *a, int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            fputs(a->usage, stdout);
            return 0;
        }
        if (strncmp(arg, "--", 2) != 0) {
            if (a->npositional >= a->max_positional)
                return fail(EXIT_USAGE, "%s: unexpected argument '%s' (see --help)", a->cmd, arg);
            a->positional[a->npositional++] = arg;
            continue;
        }
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        int o = 0;
        while (a->names[o] && !(strlen(a->names[o]) == len && strncmp(a->names[o], arg, len) == 0))
            o++;
        if (!a->names[o])
            return fail(EXIT_USAGE, "%s: unknown option '%s' (see --help)", a->cmd, arg);
        if (a->values[o])
            return fail(EXIT_USAGE, "%s: %s given twice", a->cmd, a->names[o]);
        if (eq)
            a->values[o] = eq + 1;
        else if (i + 1 < argc)
            a->values[o] = argv[++i];
        else
            return fail(EXIT_USAGE, "%s: %s needs a value", a->cmd, a->names[o]);
    }
    return -1;
}

static const char *opt(const Args *a, const char *name)
{
    for (int o = 0; a->names[o]; o++)
        if (strcmp(a->names[o], name) == 0)
            return a->values[o];
    return NULL;
}

/* An integer in [lo, hi]; false after the error message. */
static bool parse_int(const char *option, const char *text, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end || errno == ERANGE || v < lo || v > hi) {
        fail(EXIT_USAGE, "%s: '%s' is not an integer in %" PRId64 "..%" PRId64, option, text, lo, hi);
        return false;
    }
    *out = v;
    return true;
}

static bool parse_real(const char *option, const char *text, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end || errno == ERANGE || !(v >= lo && v <= hi)) {
        fail(EXIT_USAGE, "%s: '%s' is not a number in [%g, %g]", option, text, lo, hi);
        return false;
    }
    *out = v;
    return true;
}

/* Opens the database of --db or $XQF_DB: NULL with *status set (2 no conninfo, 1 unreachable). */
static Store *open_db(const Args *a, int *status)
{
    const char *db = opt(a, "--db");
    if (!db)
        db = getenv("XQF_DB");
    if (!db || !*db) {
        *status = fail(EXIT_USAGE, "%s: give --db CONNINFO or set XQF_DB", a->cmd);
        return NULL;
    }
    xqf_log_init("xqf-tune");
    Store *s = store_new(db);
    if (!s || store_connect(s) != 0) {
        *status = fail(EXIT_FAILURE, "cannot connect to the database '%s'", db);
        store_destroy(&s);
        return NULL;
    }
    *status = 0;
    return s;
}

/* The RUN argument: a positive run id. */
static bool run_id(const Args *a, int64_t *id)
{
    if (a->npositional < 1) {
        fail(EXIT_USAGE, "%s: give the run id (see --help)", a->cmd);
        return false;
    }
    return parse_int("RUN", a->positional[0], 1, INT64_MAX, id);
}

/* Loads a run, or says there is none: 1, or the exit status. */
static int load_run(Store *s, int64_t id, StoreRun *r, int *status)
{
    int rc = store_load_run(s, id, r, false);
    if (rc < 0)
        *status = fail(EXIT_FAILURE, "cannot read run %" PRId64, id);
    else if (rc == 0)
        *status = fail(EXIT_FAILURE, "no run %" PRId64, id);
    return rc;
}

/* ---- what a new run plays: time control, book, common options --------------------- */

#define COMMON_OPTS "--db", "--tc", "--nodes", "--book", "--name", "--priority", "--pairs-per-task", "--seed"
#define COMMON_HELP                                                                                \
    "  --tc BASE+INC      time control in seconds (10+0.1), or\n"                                  \
    "  --nodes N          fixed nodes per move\n"                                                  \
    "  --book FILE        opening book, one line per opening (default: ops/books/default.book)\n"  \
    "  --pairs-per-task P game pairs per task (default 8)\n"                                       \
    "  --name TEXT        a label;  --priority N  higher first (default 0);  --seed S  opening order\n" \
    "  --db CONNINFO      libpq connection string (default: $XQF_DB)\n"

typedef struct {
    char *text;                      /* the file, lines cut in place */
    const char **lines;
    int count;
} Book;

static void book_free(Book *b)
{
    free(b->text);
    free(b->lines);
}

/* Reads a book: non-empty lines not starting with '#'. Returns true, or false after the error. */
static bool book_read(const char *path, Book *b)
{
    memset(b, 0, sizeof *b);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail(EXIT_USAGE, "--book: cannot open '%s': %s", path, strerror(errno));
        return false;
    }
    size_t cap = 1 << 16, len = 0;
    b->text = malloc(cap);
    size_t got;
    while (b->text && (got = fread(b->text + len, 1, cap - len - 1, f)) > 0)
        if ((len += got) + 1 >= cap)
            b->text = realloc(b->text, cap *= 2);
    fclose(f);
    b->lines = b->text ? malloc(sizeof *b->lines * BOOK_MAX) : NULL;
    if (!b->lines) {
        book_free(b);
        fail(EXIT_FAILURE, "out of memory");
        return false;
    }
    b->text[len] = '\0';
    for (char *line = strtok(b->text, "\r\n"); line && b->count < BOOK_MAX; line = strtok(NULL, "\r\n"))
        if (line[strspn(line, " \t")] && line[strspn(line, " \t")] != '#')
            b->lines[b->count++] = line;
    if (b->count == 0) {
        book_free(b);
        fail(EXIT_USAGE, "--book: '%s' holds no opening", path);
        return false;
    }
    return true;
}

/* Fills the common part of a new run from the options; false after the error. */
static bool common_spec(const Args *a, StoreSprtSpec *sp, Book *book)
{
    const char *tc = opt(a, "--tc"), *nodes = opt(a, "--nodes");
    if (!tc == !nodes) {
        fail(EXIT_USAGE, "%s: give exactly one of --tc and --nodes", a->cmd);
        return false;
    }
    if (nodes && !parse_int("--nodes", nodes, 1, INT64_C(1) << 40, &sp->nodes))
        return false;
    if (tc) {
        char *end;
        double base = strtod(tc, &end), inc = 0;
        if (end != tc && *end == '+') {
            const char *p = end + 1;
            inc = strtod(p, &end);
            if (end == p)
                end = (char *)"x";
        }
        if (end == tc || *end || !(base > 0 && base <= 86400) || !(inc >= 0 && inc <= 3600)) {
            fail(EXIT_USAGE, "--tc: '%s' is not BASE+INC in seconds (10+0.1)", tc);
            return false;
        }
        sp->base_ms = (int64_t)llround(base * 1000);
        sp->inc_ms = (int64_t)llround(inc * 1000);
    }
    sp->margin_ms = 100;
    int64_t v = 8;
    if (opt(a, "--pairs-per-task") && !parse_int("--pairs-per-task", opt(a, "--pairs-per-task"), 1, 1024, &v))
        return false;
    sp->pairs_per_task = (int)v;
    v = 0;
    if (opt(a, "--priority") && !parse_int("--priority", opt(a, "--priority"), -1000000, 1000000, &v))
        return false;
    sp->priority = (int)v;
    v = 1;
    if (opt(a, "--seed") && !parse_int("--seed", opt(a, "--seed"), 0, INT64_MAX, &v))
        return false;
    sp->seed = (uint64_t)v;
    sp->name = opt(a, "--name") ? opt(a, "--name") : "";
    const char *path = opt(a, "--book") ? opt(a, "--book") : XQF_DEFAULT_BOOK;
    if (!book_read(path, book))
        return false;
    const char *slash = strrchr(path, '/');
    sp->book_name = slash ? slash + 1 : path;
    sp->book = book->lines;
    sp->book_lines = book->count;
    return true;
}

/* Checks a "Name=value,..." set against the engine's table; false after the error. */
static bool check_set(const char *option, const char *set)
{
    Params p;
    params_default(&p);
    char err[256];
    if (params_apply_list(&p, set, err, sizeof err) != 0) {
        fail(EXIT_USAGE, "%s: %s", option, err);
        return false;
    }
    return true;
}

/* ---- spsa new ------------------------------------------------------------------ */

static const char SPSA_USAGE[] =
    "Usage: xqf-tune spsa new [--params NAME,NAME,... | --spec FILE] [--start-file PARAMS_FILE]\n"
    "                         --pairs N (--tc 10+0.1 | --nodes N) [options]\n"
    "\n"
    "Creates an SPSA run of N game pairs (iterations) over the named parameters\n"
    "(default: every parameter of the engine's table with c_end > 0), with start\n"
    "values, bounds, c_end and r_end from the engine's table, or from a spec file\n"
    "with one line per parameter as `xqf-engine params` prints them:\n"
    "    Name, int, start, min, max, c_end, r_end\n"
    "--start-file takes start values (and the fixed values of the parameters not\n"
    "tuned) from a parameter file; with --spec, the values the file changes\n"
    "override the spec's start.  Prints the run id.\n"
    "\n"
    "  --alpha A, --gamma G, --a-ratio R   schedule (default 0.602, 0.101, 0.1: A = R N)\n"
    COMMON_HELP;

/* Reads a spec file into params; false after the error. */
static bool read_spec(const char *path, StoreSpsaParam *params, int *count)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fail(EXIT_USAGE, "--spec: cannot open '%s': %s", path, strerror(errno));
        return false;
    }
    char line[1024];
    int n = 0, lineno = 0;
    bool ok = true;
    while (ok && fgets(line, sizeof line, f)) {
        lineno++;
        char *p = line + strspn(line, " \t");
        if (!*p || *p == '\n' || *p == '\r' || *p == '#')
            continue;
        char name[128], type[16];
        double v[5];
        int end = 0;
        if (sscanf(p, " %127[^, ] , %15[^, ] , %lf , %lf , %lf , %lf , %lf %n", name, type, &v[0], &v[1],
                   &v[2], &v[3], &v[4], &end) != 7 || p[end]) {
            ok = !fail(EXIT_USAGE, "--spec %s:%d: expected 'Name, int, start, min, max, c_end, r_end'",
                       path, lineno);
            break;
        }
        const ParamInfo *info = params_find(name);
        if (!info || strcmp(type, "int") != 0)
            ok = !fail(EXIT_USAGE, "--spec %s:%d: %s", path, lineno,
                       info ? "only int parameters are tuned" : "unknown parameter");
        else if (!(v[1] >= info->min && v[2] <= info->max && v[1] < v[2] && v[0] >= v[1] && v[0] <= v[2]))
            ok = !fail(EXIT_USAGE, "--spec %s:%d: %s: need %d <= min <= start <= max <= %d, min < max", path,
                       lineno, name, info->min, info->max);
        else if (!(v[3] > 0 && v[4] > 0))
            ok = !fail(EXIT_USAGE, "--spec %s:%d: %s: c_end and r_end must be positive", path, lineno, name);
        for (int i = 0; ok && i < n; i++)
            if (strcmp(params[i].name, name) == 0)
                ok = !fail(EXIT_USAGE, "--spec %s:%d: %s given twice", path, lineno, name);
        if (ok && n >= STORE_SPSA_MAX)
            ok = !fail(EXIT_USAGE, "--spec: more than %d parameters", STORE_SPSA_MAX);
        if (ok) {
            StoreSpsaParam *q = &params[n++];
            snprintf(q->name, sizeof q->name, "%s", info->name);
            q->start = v[0], q->min = v[1], q->max = v[2], q->c_end = v[3], q->r_end = v[4];
        }
    }
    fclose(f);
    if (ok && n == 0)
        ok = !fail(EXIT_USAGE, "--spec: '%s' names no parameter", path);
    *count = n;
    return ok;
}

/* The table's entry of a parameter as an SPSA parameter starting at value. */
static void from_table(const ParamInfo *info, int value, StoreSpsaParam *q)
{
    snprintf(q->name, sizeof q->name, "%s", info->name);
    q->start = value, q->min = info->min, q->max = info->max;
    q->c_end = info->c_end, q->r_end = info->r_end;
}

int tune_cmd_spsa(int argc, char **argv)
{
    static const char *const NAMES[] = { COMMON_OPTS, "--params", "--spec", "--start-file", "--pairs",
                                         "--alpha", "--gamma", "--a-ratio", NULL };
    Args a = { .cmd = "spsa new", .usage = SPSA_USAGE, .names = NAMES, .max_positional = 1 };
    int status = parse_args(&a, argc - 1, argv + 1);
    if (status >= 0)
        return status;
    if (a.npositional != 1 || strcmp(a.positional[0], "new") != 0)
        return fail(EXIT_USAGE, "spsa: the only subcommand is 'new' (see xqf-tune spsa --help)");
    if (!opt(&a, "--pairs"))
        return fail(EXIT_USAGE, "spsa new: --pairs N is required");
    if (opt(&a, "--params") && opt(&a, "--spec"))
        return fail(EXIT_USAGE, "spsa new: give --params or --spec, not both");
    StoreSpsaSpec spec = { .alpha = 0.602, .gamma = 0.101, .a_ratio = 0.1 };
    if (!parse_int("--pairs", opt(&a, "--pairs"), 1, INT64_C(1) << 40, &spec.run.max_pairs) ||
        (opt(&a, "--alpha") && !parse_real("--alpha", opt(&a, "--alpha"), 0.001, 10, &spec.alpha)) ||
        (opt(&a, "--gamma") && !parse_real("--gamma", opt(&a, "--gamma"), 0.001, 10, &spec.gamma)) ||
        (opt(&a, "--a-ratio") && !parse_real("--a-ratio", opt(&a, "--a-ratio"), 0, 100, &spec.a_ratio)))
        return EXIT_USAGE;
    Params start;
    params_default(&start);
    char err[256];
    if (opt(&a, "--start-file") && params_load(&start, opt(&a, "--start-file"), err, sizeof err) != 0)
        return fail(EXIT_USAGE, "--start-file: %s", err);
    static StoreSpsaParam params[STORE_SPSA_MAX];
    int count = 0;
    if (opt(&a, "--spec")) {
        if (!read_spec(opt(&a, "--spec"), params, &count))
            return EXIT_USAGE;
        /* a start file overrides the spec's start where it changes a parameter */
        Params defaults;
        params_default(&defaults);
        for (int i = 0; i < count; i++) {
            const ParamInfo *info = params_find(params[i].name);
            int v = info ? params_value(&start, info) : 0;
            if (!info || v == params_value(&defaults, info))
                continue;
            if (v < params[i].min || v > params[i].max)
                return fail(EXIT_USAGE, "--start-file: %s = %d is outside the spec's bounds %g-%g", info->name, v,
                            params[i].min, params[i].max);
            params[i].start = params[i].theta = v;
        }
    } else if (opt(&a, "--params")) {
        char list[4096];
        snprintf(list, sizeof list, "%s", opt(&a, "--params"));
        for (char *name = strtok(list, ", "); name; name = strtok(NULL, ", ")) {
            const ParamInfo *info = params_find(name);
            if (!info)
                return fail(EXIT_USAGE, "--params: unknown parameter '%s'", name);
            if (!(info->c_end > 0))
                return fail(EXIT_USAGE, "--params: %s is a switch (c_end 0): give it in a --spec file", name);
            for (int i = 0; i < count; i++)
                if (strcmp(params[i].name, name) == 0)
                    return fail(EXIT_USAGE, "--params: %s given twice", name);
            from_table(info, params_value(&start, info), &params[count++]);
        }
        if (count == 0)
            return fail(EXIT_USAGE, "--params: no parameter named");
    } else {
        for (int i = 0; i < PARAM_COUNT; i++)
            if (PARAM_INFO[i].c_end > 0)
                from_table(&PARAM_INFO[i], params_value(&start, &PARAM_INFO[i]), &params[count++]);
    }
    /* the fixed set: every other parameter the start file changes */
    Params defaults;
    params_default(&defaults);
    char fixed[STORE_PARAMS_MAX + 1] = "";
    size_t len = 0;
    for (int i = 0; i < PARAM_COUNT; i++) {
        const ParamInfo *info = &PARAM_INFO[i];
        bool tuned = false;
        for (int j = 0; j < count && !tuned; j++)
            tuned = strcmp(params[j].name, info->name) == 0;
        if (!tuned && params_value(&start, info) != params_value(&defaults, info) && len < sizeof fixed)
            len += (size_t)snprintf(fixed + len, sizeof fixed - len, "%s%s=%d", len ? "," : "", info->name,
                                    params_value(&start, info));
    }
    if (len >= sizeof fixed)
        return fail(EXIT_USAGE, "--start-file: too many changed parameters");
    Book book;
    if (!common_spec(&a, &spec.run, &book))
        return EXIT_USAGE;
    spec.run.test_params = fixed;
    spec.params = params;
    spec.count = count;
    Store *s = open_db(&a, &status);
    if (!s) {
        book_free(&book);
        return status;
    }
    int64_t id;
    status = store_create_spsa(s, &spec, &id) == 0 ? 0 : fail(EXIT_FAILURE, "cannot create the run");
    if (status == 0)
        printf("%" PRId64 "\n", id);
    store_destroy(&s);
    book_free(&book);
    return status;
}

/* ---- sprt new ------------------------------------------------------------------ */

static const char SPRT_USAGE[] =
    "Usage: xqf-tune sprt new --base SET --test SET (--tc 10+0.1 | --nodes N) [options]\n"
    "       xqf-tune sprt new --base-build ID --test-build ID (--tc | --nodes) [options]\n"
    "\n"
    "Creates an SPRT test of two parameter sets (Name=value,... over the engine's\n"
    "defaults; \"\" for the defaults), or of two engine builds registered with\n"
    "xqf-tune build (a search change is code: its binary against the base's; a\n"
    "set given too is applied to that build as options), stopped when the LLR\n"
    "crosses a bound or after --max-pairs.  Prints the run id.\n"
    "\n"
    "  --test-build ID        the build the test side plays (default: the workers' own engine)\n"
    "  --base-build ID        the build the base side plays (default: the workers' own engine)\n"
    "  --elo0 X --elo1 Y      normalized Elo hypotheses (default 0 and 5)\n"
    "  --alpha A --beta B     error rates (default 0.05 each)\n"
    "  --max-pairs N          at most N game pairs (default 50000)\n"
    COMMON_HELP;

int tune_cmd_sprt(int argc, char **argv)
{
    static const char *const NAMES[] = { COMMON_OPTS, "--base", "--test", "--elo0", "--elo1", "--alpha",
                                         "--beta", "--max-pairs", "--base-build", "--test-build", NULL };
    Args a = { .cmd = "sprt new", .usage = SPRT_USAGE, .names = NAMES, .max_positional = 1 };
    int status = parse_args(&a, argc - 1, argv + 1);
    if (status >= 0)
        return status;
    if (a.npositional != 1 || strcmp(a.positional[0], "new") != 0)
        return fail(EXIT_USAGE, "sprt: the only subcommand is 'new' (see xqf-tune sprt --help)");
    bool builds = opt(&a, "--base-build") || opt(&a, "--test-build");
    if (!builds && (!opt(&a, "--base") || !opt(&a, "--test")))
        return fail(EXIT_USAGE, "sprt new: --base and --test (sets), or --base-build and --test-build, are required");
    StoreSprtSpec sp = { .elo0 = 0, .elo1 = 5, .alpha = 0.05, .beta = 0.05, .max_pairs = 50000 };
    sp.base_params = opt(&a, "--base") ? opt(&a, "--base") : "";
    sp.test_params = opt(&a, "--test") ? opt(&a, "--test") : "";
    if ((opt(&a, "--test-build") && !parse_int("--test-build", opt(&a, "--test-build"), 1, INT64_MAX, &sp.test_build)) ||
        (opt(&a, "--base-build") && !parse_int("--base-build", opt(&a, "--base-build"), 1, INT64_MAX, &sp.base_build)))
        return EXIT_USAGE;
    if (builds && sp.test_build == sp.base_build)
        return fail(EXIT_USAGE, "sprt new: --test-build and --base-build are the same build");
    if (!check_set("--base", sp.base_params) || !check_set("--test", sp.test_params) ||
        (opt(&a, "--elo0") && !parse_real("--elo0", opt(&a, "--elo0"), -1000, 1000, &sp.elo0)) ||
        (opt(&a, "--elo1") && !parse_real("--elo1", opt(&a, "--elo1"), -1000, 1000, &sp.elo1)) ||
        (opt(&a, "--alpha") && !parse_real("--alpha", opt(&a, "--alpha"), 1e-6, 0.5, &sp.alpha)) ||
        (opt(&a, "--beta") && !parse_real("--beta", opt(&a, "--beta"), 1e-6, 0.5, &sp.beta)) ||
        (opt(&a, "--max-pairs") && !parse_int("--max-pairs", opt(&a, "--max-pairs"), 1, INT64_C(1) << 40,
                                              &sp.max_pairs)))
        return EXIT_USAGE;
    if (!(sp.elo0 < sp.elo1))
        return fail(EXIT_USAGE, "--elo0 must be below --elo1");
    Book book;
    if (!common_spec(&a, &sp, &book))
        return EXIT_USAGE;
    Store *s = open_db(&a, &status);
    if (!s) {
        book_free(&book);
        return status;
    }
    const int64_t build_ids[2] = { sp.test_build, sp.base_build };
    for (int i = 0; i < 2; i++) {
        StoreBuild b;
        int found = build_ids[i] ? store_load_build(s, build_ids[i], &b) : 1;
        if (found <= 0) {
            store_destroy(&s);
            book_free(&book);
            return found < 0 ? fail(EXIT_FAILURE, "cannot read the builds")
                             : fail(EXIT_USAGE, "%s: no build %" PRId64 " (see xqf-tune build)",
                                    i ? "--base-build" : "--test-build", build_ids[i]);
        }
    }
    int64_t id;
    status = store_create_sprt(s, &sp, &id) == 0 ? 0 : fail(EXIT_FAILURE, "cannot create the run");
    if (status == 0)
        printf("%" PRId64 "\n", id);
    store_destroy(&s);
    book_free(&book);
    return status;
}

/* ---- list, show, stop --------------------------------------------------------------- */

static void tc_text(const StoreRun *r, char *out, size_t size)
{
    if (r->nodes > 0)
        snprintf(out, size, "%" PRId64 " nodes", r->nodes);
    else
        snprintf(out, size, "%g+%g", (double)r->base_ms / 1000, (double)r->inc_ms / 1000);
}

/* Elo of the counts as "12.3 +/- 4.5", or "-". */
static void elo_text(const StoreCounts *c, char *out, size_t size)
{
    xqf_elo e;
    if (c->pairs > 0 && xqf_elo_penta(c->penta, &e) == XQF_STATS_OK)
        snprintf(out, size, "%.2f +/- %.2f", e.elo, e.elo_ci95);
    else
        snprintf(out, size, "-");
}

static const char LIST_USAGE[] = "Usage: xqf-tune list [--db CONNINFO] [--runs N]\n"
                                 "The newest runs (default 20), one line each.\n";

int tune_cmd_list(int argc, char **argv)
{
    static const char *const NAMES[] = { "--db", "--runs", NULL };
    Args a = { .cmd = "list", .usage = LIST_USAGE, .names = NAMES };
    int status = parse_args(&a, argc - 1, argv + 1);
    if (status >= 0)
        return status;
    int64_t max = 20;
    if (opt(&a, "--runs") && !parse_int("--runs", opt(&a, "--runs"), 1, 100000, &max))
        return EXIT_USAGE;
    Store *s = open_db(&a, &status);
    if (!s)
        return status;
    StoreRun *runs;
    int n = store_list_runs(s, (int)max, &runs);
    if (n < 0) {
        store_destroy(&s);
        return fail(EXIT_FAILURE, "cannot read the runs");
    }
    printf("%-6s %-5s %-9s %-14s %-16s %-22s %s\n", "id", "kind", "state", "pairs", "tc", "Elo", "name");
    for (int i = 0; i < n; i++) {
        char pairs[32], tc[32], elo[48];
        snprintf(pairs, sizeof pairs, "%" PRId64 "/%" PRId64, runs[i].counts.pairs, runs[i].max_pairs);
        tc_text(&runs[i], tc, sizeof tc);
        elo_text(&runs[i].counts, elo, sizeof elo);
        printf("%-6" PRId64 " %-5s %-9s %-14s %-16s %-22s %s\n", runs[i].id, runs[i].kind, runs[i].state,
               pairs, tc, elo, runs[i].name);
    }
    free(runs);
    store_destroy(&s);
    return 0;
}

/* Prints one run; 0 or 1. */
static int show_run(Store *s, int64_t id)
{
    StoreRun r;
    int status;
    if (load_run(s, id, &r, &status) != 1)
        return status;
    const StoreCounts *c = &r.counts;
    char tc[32], elo[48];
    tc_text(&r, tc, sizeof tc);
    elo_text(c, elo, sizeof elo);
    printf("Run: %" PRId64 " (%s) %s%s%s\n", r.id, r.kind, r.state, r.verdict[0] ? ": " : "", r.verdict);
    if (r.name[0])
        printf("Name: %s\n", r.name);
    printf("Time control: %s, book %s, %d pairs per task\n", tc, r.book_name, r.pairs_per_task);
    printf("Created: %s UTC%s%s\n", r.created, r.finished[0] ? ", finished " : "", r.finished);
    printf("Pairs: %" PRId64 "/%" PRId64 "\n", c->pairs, r.max_pairs);
    printf("Games: %" PRId64 "\n", 2 * c->pairs);
    printf("W/D/L: %" PRId64 "/%" PRId64 "/%" PRId64 "\n", c->wins, c->draws, c->losses);
    printf("Pentanomial [LL, LD, DD+WL, WD, WW]: [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
           "]\n", c->penta[0], c->penta[1], c->penta[2], c->penta[3], c->penta[4]);
    printf("Elo: %s\n", elo);
    double lo, hi, llr;
    if (strcmp(r.kind, "sprt") == 0 && xqf_sprt_bounds(r.alpha, r.beta, &lo, &hi) == XQF_STATS_OK) {
        if (c->pairs == 0 || xqf_llr_penta(c->penta, r.elo0, r.elo1, &llr) != XQF_STATS_OK)
            llr = 0;
        printf("LLR: %.2f [%.2f, %.2f] (elo0 %g, elo1 %g)\n", llr, lo, hi, r.elo0, r.elo1);
    }
    if (strcmp(r.kind, "spsa") == 0) {
        StoreSpsa *st = malloc(sizeof *st);
        if (!st || store_spsa_load(s, id, st) != 1) {
            free(st);
            return fail(EXIT_FAILURE, "cannot read the SPSA state of run %" PRId64, id);
        }
        printf("Iterations: %" PRId64 "/%" PRId64 "\n", st->iter, st->iterations);
        printf("%-24s %10s %10s %8s %8s\n", "parameter", "theta", "start", "min", "max");
        for (int i = 0; i < st->count; i++)
            printf("%-24s %10.3f %10g %8g %8g\n", st->params[i].name, st->params[i].theta, st->params[i].start,
                   st->params[i].min, st->params[i].max);
        free(st);
    }
    double minutes = r.elapsed_s / 60;
    if (c->pairs > 0 && minutes > 0) {
        double rate = (double)c->pairs / minutes;
        printf("Rate: %.1f pairs/min", rate);
        if (strcmp(r.state, "active") == 0)
            printf(", ETA %.0f min (at most)", (double)(r.max_pairs - c->pairs) / rate);
        printf("\n");
    }
    return 0;
}

static const char SHOW_USAGE[] = "Usage: xqf-tune show RUN [--db CONNINFO] [--watch SECONDS]\n"
                                 "A run's results, Elo, LLR (SPRT) or theta (SPSA), rate and ETA;\n"
                                 "--watch repeats every SECONDS until the run ends.\n";

int tune_cmd_show(int argc, char **argv)
{
    static const char *const NAMES[] = { "--db", "--watch", NULL };
    Args a = { .cmd = "show", .usage = SHOW_USAGE, .names = NAMES, .max_positional = 1 };
    int status = parse_args(&a, argc - 1, argv + 1);
    if (status >= 0)
        return status;
    int64_t id, watch = 0;
    if (!run_id(&a, &id) || (opt(&a, "--watch") && !parse_int("--watch", opt(&a, "--watch"), 1, 86400, &watch)))
        return EXIT_USAGE;
    Store *s = open_db(&a, &status);
    if (!s)
        return status;
    for (;;) {
        status = show_run(s, id);
        fflush(stdout);
        StoreRun r;
        if (status != 0 || watch == 0 || store_load_run(s, id, &r, false) != 1 || strcmp(r.state, "active") != 0)
            break;
        sleep((unsigned)watch);
        printf("\n");
    }
    store_destroy(&s);
    return status;
}

static const char STOP_USAGE[] = "Usage: xqf-tune stop RUN [--db CONNINFO]\n"
                                 "Stops an active run (state stopped); its tasks in flight are cancelled.\n";

int tune_cmd_stop(int argc, char **argv)
{
    static const char *const NAMES[] = { "--db", NULL };
    Args a = { .cmd = "stop", .usage = STOP_USAGE, .names = NAMES, .max_positional = 1 };
    int status = parse_args(&a, argc - 1, argv + 1);
    if (status >= 0)
        return status;
    int64_t id;
    if (!run_id(&a, &id))
        return EXIT_USAGE;
    Store *s = open_db(&a, &status);
    if (!s)
        return status;
    StoreRun r;
    if (load_run(s, id, &r, &status) == 1) {
        if (strcmp(r.state, "active") != 0)
            status = fail(EXIT_FAILURE, "run %" PRId64 " is not active (%s)", id, r.state);
        else if (store_finish_run(s, id, "stopped", "stopped") != 0)
            status = fail(EXIT_FAILURE, "cannot stop run %" PRId64, id);
        else
            printf("run %" PRId64 " stopped\n", id);
    }
    store_destroy(&s);
    return status;
}

/* ---- export, report -------------------------------------------------------------- */

/* The set a run's export gives: SPSA the fixed set and theta rounded; SPRT the test set. 0 or status. */
static int export_set(Store *s, const StoreRun *r, Params *p)
{
    static char p0[STORE_PARAMS_MAX + 1], p1[STORE_PARAMS_MAX + 1];
    char err[256];
    params_default(p);
    if (store_run_sets(s, r->id, p0, p1, sizeof p0) != 1)
        return fail(EXIT_FAILURE, "cannot read the sets of run %" PRId64, r->id);
    if (params_apply_list(p, p0, err, sizeof err) != 0)
        return fail(EXIT_FAILURE, "run %" PRId64 ": %s", r->id, err);
    if (strcmp(r->kind, "spsa") != 0)
        return 0;
    StoreSpsa *st = malloc(sizeof *st);
    if (!st || store_spsa_load(s, r->id, st) != 1) {
        free(st);
        return fail(EXIT_FAILURE, "cannot read the SPSA state of run %" PRId64, r->id);
    }
    for (int i = 0; i < st->count; i++) {
        const ParamInfo *info = params_find(st->params[i].name);
        if (info) {
            double v = round(st->params[i].theta);
            params_store(p, info, (int)(v < info->min ? info->min : v > info->max ? info->max : v));
        }
    }
    free(st);
    return 0;
}

/* Writes a run's exported set to path (NULL: stdout) with its header line; 0 or the exit status. */
static int write_export(const StoreRun *r, const Params *p, const char *path)
{
    FILE *out = path ? fopen(path, "w") : stdout;
    if (!out)
        return fail(EXIT_FAILURE, "--out: cannot write '%s': %s", path, strerror(errno));
    fprintf(out, "# xqf-tune export of run %" PRId64 " (%s, %s, %" PRId64 " pairs)\n", r->id, r->kind,
            r->state, r->counts.pairs);
    if (params_write(p, out) != 0 || (path ? fclose(out) : fflush(out)) != 0)
        return fail(EXIT_FAILURE, "cannot write the parameter file");
    return 0;
}

static const char EXPORT_USAGE[] =
    "Usage: xqf-tune export RUN [--db CONNINFO] [--out FILE]\n"
    "A parameter file (every parameter, `Name = value`): for SPSA the current theta\n"
    "rounded, for SPRT the test set; to stdout or FILE.\n";

int tune_cmd_export(int argc, char **argv)
{
    static const char *const NAMES[] = { "--db", "--out", NULL };
    Args a = { .cmd = "export", .usage = EXPORT_USAGE, .names = NAMES, .max_positional = 1 };
    int status = parse_args(&a, argc - 1, argv + 1);
    if (status >= 0)
        return status;
    int64_t id;
    if (!run_id(&a, &id))
        return EXIT_USAGE;
    Store *s = open_db(&a, &status);
    if (!s)
        return status;
    StoreRun r;
    Params p;
    if (load_run(s, id, &r, &status) == 1 && (status = export_set(s, &r, &p)) == 0) {
        status = write_export(&r, &p, opt(&a, "--out"));
    }
    store_destroy(&s);
    return status;
}

static const char REPORT_USAGE[] =
    "Usage: xqf-tune report RUN --html FILE [--db CONNINFO]\n"
    "Writes the run's report: one self-contained HTML page with its settings, each\n"
    "SPSA parameter's trajectory, Elo with its interval and the SPRT LLR over games.\n";

/* Fills the report model from the database and writes the page; 0 or the exit status. */
static int write_report(Store *s, const StoreRun *r, FILE *out)
{
    StoreProgress *prog = NULL;
    StoreHistoryRow *hist = NULL;
    StoreSpsa *st = calloc(1, sizeof *st);
    int np = store_run_progress(s, r->id, &prog);
    int nh = np >= 0 ? store_spsa_history(s, r->id, &hist) : -1;
    bool spsa = strcmp(r->kind, "spsa") == 0;
    int status = 0;
    if (!st || np < 0 || nh < 0 || (spsa && store_spsa_load(s, r->id, st) != 1))
        status = fail(EXIT_FAILURE, "cannot read run %" PRId64, r->id);
    xqf_report_sample *samples = calloc((size_t)(np > 0 ? np : 0) + 1, sizeof *samples);
    xqf_report_param *params = calloc((size_t)st->count + 1, sizeof *params);
    xqf_report_point *points = calloc((size_t)(nh > 0 ? nh : 0) + (size_t)st->count + 1, sizeof *points);
    if (status == 0 && (!samples || !params || !points))
        status = fail(EXIT_FAILURE, "out of memory");
    if (status == 0) {
        size_t ns = 0;
        for (int i = 0; i < np; i++) {
            const StoreCounts *c = &prog[i].counts;
            xqf_report_sample *x = &samples[ns++];
            x->games = 2 * c->pairs;
            memcpy(x->penta, c->penta, sizeof x->penta);
            x->wins = c->wins, x->draws = c->draws, x->losses = c->losses;
        }
        if (r->counts.pairs > 0 && (ns == 0 || samples[ns - 1].games != 2 * r->counts.pairs)) {
            xqf_report_sample *x = &samples[ns++];
            x->games = 2 * r->counts.pairs;
            memcpy(x->penta, r->counts.penta, sizeof x->penta);
            x->wins = r->counts.wins, x->draws = r->counts.draws, x->losses = r->counts.losses;
        }
        size_t used = 0;
        for (int i = 0; i < st->count; i++) {
            const StoreSpsaParam *q = &st->params[i];
            xqf_report_param *x = &params[i];
            x->name = q->name;
            x->start = q->start, x->min = q->min, x->max = q->max;
            x->c_end = q->c_end, x->r_end = q->r_end, x->theta = q->theta;
            x->history = &points[used];
            points[used++] = (xqf_report_point){ 0, q->start };
            for (int j = 0; j < nh; j++)
                if (hist[j].idx == i)
                    points[used++] = (xqf_report_point){ 2 * hist[j].iteration, hist[j].theta };
            x->history_count = (size_t)(&points[used] - x->history);
        }
        char tc[32];
        tc_text(r, tc, sizeof tc);
        xqf_report_run m = {
            .id = r->id, .name = r->name, .kind = spsa ? XQF_REPORT_SPSA : XQF_REPORT_SPRT,
            .state = r->state, .created = r->created, .finished = r->finished,
            .tc = r->nodes > 0 ? NULL : tc, .nodes = r->nodes, .book = r->book_name,
            .pairs_per_task = r->pairs_per_task, .planned_pairs = r->max_pairs,
            .elo0 = spsa ? NAN : r->elo0, .elo1 = spsa ? NAN : r->elo1,
            .alpha = spsa ? NAN : r->alpha, .beta = spsa ? NAN : r->beta, .verdict = r->verdict,
            .spsa_alpha = spsa ? st->alpha : NAN, .spsa_gamma = spsa ? st->gamma : NAN,
            .spsa_A = spsa ? st->a_ratio * (double)st->iterations : NAN,
            .params = params, .param_count = (size_t)st->count, .samples = samples, .sample_count = ns,
        };
        if (xqf_report_html(out, &m) != 0)
            status = fail(EXIT_FAILURE, "cannot write the report");
    }
    free(samples);
    free(params);
    free(points);
    free(prog);
    free(hist);
    free(st);
    return status;
}

int tune_cmd_report(int argc, char **argv)
{
    static const char *const NAMES[] = { "--db", "--html", NULL };
    Args a = { .cmd = "report", .usage = REPORT_USAGE, .names = NAMES, .max_positional = 1 };
    int status = parse_args(&a, argc - 1, argv + 1);
    if (status >= 0)
        return status;
    int64_t id;
    if (!run_id(&a, &id))
        return EXIT_USAGE;
    const char *path = opt(&a, "--html");
    if (!path)
        return fail(EXIT_USAGE, "report: --html FILE is required");
    Store *s = open_db(&a, &status);
    if (!s)
        return status;
    StoreRun r;
    if (load_run(s, id, &r, &status) == 1) {
        FILE *out = fopen(path, "w");
        if (!out)
            status = fail(EXIT_FAILURE, "--html: cannot write '%s': %s", path, strerror(errno));
        else {
            status = write_report(s, &r, out);
            if (fclose(out) != 0 && status == 0)
                status = fail(EXIT_FAILURE, "cannot write '%s'", path);
            if (status == 0)
                printf("%s\n", path);
        }
    }
    store_destroy(&s);
    return status;
}

/* ---- build --------------------------------------------------------------------- */

static const char BUILD_USAGE[] =
    "Usage: xqf-tune build RUN [--out DIR] [--source DIR] [--jobs N] [--db CONNINFO]\n"
    "       xqf-tune build --binary FILE [--name NAME] [--db CONNINFO]\n"
    "A tuned engine: xqf-engine compiled with the run's exported parameters as its\n"
    "defaults (cmake -DXQF_PARAMS_FILE), named with the run id and the parameter\n"
    "set's hash (HASH, 16 hex digits).  In DIR (default ./build-tuned):\n"
    "    run-RUN-HASH.params      the exported parameter file\n"
    "    run-RUN-HASH/            the build directory (its log: build.log)\n"
    "    xqf-engine-runRUN-HASH   the binary\n"
    "Runs the binary's bench, records the build (run, parameter hash, SHA-256,\n"
    "bench signature, path) in the engine builds table and prints:\n"
    "    Parameters: FILE (set HASH)\n"
    "    Bench: N\n"
    "    SHA-256: HEX\n"
    "    Build: ID\n"
    "    Binary: PATH\n"
    "The second form registers any xqf-engine binary (a search change built\n"
    "elsewhere), named NAME (default xqf-engine-SHA12), the same way.  Either way\n"
    "the binary itself is stored in the database: workers fetch it by its SHA-256\n"
    "(checked, cached) to play it, e.g. in `xqf-tune sprt new --test-build ID`.\n"
    "  --source DIR   the source tree (default: the one xqf-tune was built from)\n"
    "  --jobs N       parallel compile jobs (default: online cores)\n"
    "  --db CONNINFO  libpq connection string (default: $XQF_DB)\n";

/* snprintf into a path buffer: false when it did not fit. */
static bool path_fmt(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < size;
}

/* mkdir -p; 0 or -1 (errno set). */
static int make_dirs(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/*
 * Runs argv (searched in PATH): stdout into capture (NUL-terminated, at most
 * size - 1 bytes) or, when capture is NULL, appended to log; stderr appended
 * to log, after a "$ command" line.  Returns the exit status, or -1.
 */
static int spawn(char *const argv[], const char *log, char *capture, size_t size)
{
    int logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (logfd < 0)
        return -1;
    FILE *lf = fdopen(dup(logfd), "a");
    if (lf) {
        fputs("$", lf);
        for (int i = 0; argv[i]; i++)
            fprintf(lf, " %s", argv[i]);
        fputc('\n', lf);
        fclose(lf);
    }
    int fds[2] = { -1, -1 };
    if (capture && pipe(fds) != 0) {
        close(logfd);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(capture ? fds[1] : logfd, STDOUT_FILENO);
        dup2(logfd, STDERR_FILENO);
        if (capture) {
            close(fds[0]);
            close(fds[1]);
        }
        execvp(argv[0], argv);
        dprintf(STDERR_FILENO, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(logfd);
    if (capture) {
        close(fds[1]);
        size_t len = 0;
        ssize_t got;
        char sink[4096];
        while ((got = read(fds[0], len + 1 < size ? capture + len : sink,
                           len + 1 < size ? size - 1 - len : sizeof sink)) > 0 ||
               (got < 0 && errno == EINTR))
            if (got > 0 && len + 1 < size)
                len += (size_t)got;
        capture[len] = '\0';
        close(fds[0]);
    }
    if (pid < 0)
        return -1;
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Copies an executable to dst (through dst.tmp, renamed); 0 or -1. */
static int copy_binary(const char *src, const char *dst)
{
    char tmp[PATH_MAX];
    if (!path_fmt(tmp, sizeof tmp, "%s.tmp", dst))
        return -1;
    FILE *in = fopen(src, "rb"), *out = in ? fopen(tmp, "wb") : NULL;
    int rc = in && out ? 0 : -1;
    char buf[1 << 16];
    size_t n;
    while (rc == 0 && (n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            rc = -1;
    if (in && ferror(in))
        rc = -1;
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        rc = -1;
    if (rc == 0 && (chmod(tmp, 0755) != 0 || rename(tmp, dst) != 0))
        rc = -1;
    if (rc != 0)
        unlink(tmp);
    return rc;
}

/* Reads a whole file (at most max bytes) into a malloc'd buffer; NULL on failure. */
static char *read_file(const char *path, size_t max, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *data = f ? malloc(max) : NULL;
    *len = data ? fread(data, 1, max, f) : 0;
    bool ok = data && !ferror(f) && *len < max;
    if (f)
        fclose(f);
    if (!ok) {
        free(data);
        return NULL;
    }
    return data;
}

/*
 * The tail of both forms of build: the binary's bench signature, SHA-256,
 * its row in the builds table and its bytes (what workers fetch), printed.
 * b has the run, parameter hash and name filled in.  Returns an exit status.
 */
static int register_binary(Store *s, const char *binary, const char *log, StoreBuild *b)
{
    enum { BINARY_MAX = 256 << 20 };
    static char bench_out[1 << 16];
    char *bench[] = { (char *)binary, "bench", NULL };
    const char *nodes = NULL;
    if (spawn(bench, log, bench_out, sizeof bench_out) == 0)
        nodes = strstr(bench_out, "Nodes searched: ");
    if (!nodes || sscanf(nodes, "Nodes searched: %" SCNd64, &b->bench_nodes) != 1)
        return fail(EXIT_FAILURE, "%s bench failed (see %s): is it an xqf-engine?", binary, log);
    printf("Bench: %" PRId64 "\n", b->bench_nodes);
    if (sha256_file(binary, b->sha256) != 0)
        return fail(EXIT_FAILURE, "cannot hash %s", binary);
    printf("SHA-256: %s\n", b->sha256);
    if (!path_fmt(b->path, sizeof b->path, "%s", binary))
        return fail(EXIT_USAGE, "'%s': path too long", binary);
    size_t len;
    char *bytes = read_file(binary, BINARY_MAX, &len);
    if (!bytes)
        return fail(EXIT_FAILURE, "cannot read %s (or larger than %d MB)", binary, BINARY_MAX >> 20);
    int64_t build_id;
    bool own_tx = store_begin(s) == 0;
    int rc = own_tx && store_add_build(s, b, &build_id) == 0 && store_build_blob(s, build_id, bytes, len) == 0 &&
             store_commit(s) == 0;
    free(bytes);
    if (!rc) {
        store_rollback(s);
        return fail(EXIT_FAILURE, "cannot record the build");
    }
    printf("Build: %" PRId64 "\nBinary: %s\n", build_id, binary);
    return 0;
}

/* xqf-tune build --binary FILE: registers a binary built elsewhere. */
static int build_binary(Args *a)
{
    const char *binary = opt(a, "--binary");
    if (a->npositional != 0 || opt(a, "--out") || opt(a, "--source") || opt(a, "--jobs"))
        return fail(EXIT_USAGE, "build --binary FILE takes only --name and --db");
    if (access(binary, X_OK) != 0)
        return fail(EXIT_USAGE, "--binary: '%s' is not an executable file: %s", binary, strerror(errno));
    const char *name = opt(a, "--name");
    if (name && (!*name || strlen(name) > STORE_NAME_MAX))
        return fail(EXIT_USAGE, "--name: 1 to %d characters, please", STORE_NAME_MAX);
    char abs[PATH_MAX], log[PATH_MAX];
    if (!realpath(binary, abs))
        return fail(EXIT_USAGE, "--binary: '%s': %s", binary, strerror(errno));
    if (!path_fmt(log, sizeof log, "%s.bench.log", abs) || access(abs, F_OK) != 0)
        return fail(EXIT_USAGE, "--binary: '%s': path too long", binary);
    int status;
    Store *s = open_db(a, &status);
    if (!s)
        return status;
    StoreBuild b = { 0 };
    char sha[65];
    if (sha256_file(abs, sha) != 0) {
        store_destroy(&s);
        return fail(EXIT_FAILURE, "cannot hash %s", abs);
    }
    if (name)
        snprintf(b.build_id, sizeof b.build_id, "%s", name);
    else
        snprintf(b.build_id, sizeof b.build_id, "xqf-engine-%.12s", sha);
    status = register_binary(s, abs, log, &b);
    store_destroy(&s);
    return status;
}

int tune_cmd_build(int argc, char **argv)
{
    static const char *const NAMES[] = { "--db", "--out", "--source", "--jobs", "--binary", "--name", NULL };
    Args a = { .cmd = "build", .usage = BUILD_USAGE, .names = NAMES, .max_positional = 1 };
    int status = parse_args(&a, argc - 1, argv + 1);
    if (status >= 0)
        return status;
    if (opt(&a, "--binary"))
        return build_binary(&a);
    if (opt(&a, "--name"))
        return fail(EXIT_USAGE, "--name goes with --binary (a run's build is named after the run)");
    int64_t id, jobs = sysconf(_SC_NPROCESSORS_ONLN) > 0 ? sysconf(_SC_NPROCESSORS_ONLN) : 1;
    if (!run_id(&a, &id) || (opt(&a, "--jobs") && !parse_int("--jobs", opt(&a, "--jobs"), 1, 1024, &jobs)))
        return EXIT_USAGE;
    const char *source = opt(&a, "--source") ? opt(&a, "--source") : XQF_SOURCE_DIR;
    char path[PATH_MAX];
    if (!path_fmt(path, sizeof path, "%s/engine/params.def", source) || access(path, R_OK) != 0)
        return fail(EXIT_USAGE, "--source: '%s' is not the project's source tree (no engine/params.def)", source);
    const char *out_opt = opt(&a, "--out") ? opt(&a, "--out") : "build-tuned";
    char out[PATH_MAX / 2], cwd[PATH_MAX / 4];
    if (make_dirs(out_opt) != 0)
        return fail(EXIT_FAILURE, "--out: cannot create '%s': %s", out_opt, strerror(errno));
    if (!(out_opt[0] == '/' ? path_fmt(out, sizeof out, "%s", out_opt)
                            : getcwd(cwd, sizeof cwd) && path_fmt(out, sizeof out, "%s/%s", cwd, out_opt)))
        return fail(EXIT_USAGE, "--out: '%s' is too long", out_opt);

    Store *s = open_db(&a, &status);
    if (!s)
        return status;
    StoreRun r;
    Params p;
    if (load_run(s, id, &r, &status) != 1 || (status = export_set(s, &r, &p)) != 0) {
        store_destroy(&s);
        return status;
    }
    char hash[17], params_file[PATH_MAX], dir[PATH_MAX], log[PATH_MAX], binary[PATH_MAX], built[PATH_MAX];
    snprintf(hash, sizeof hash, "%016" PRIx64, params_hash(&p));
    path_fmt(params_file, sizeof params_file, "%s/run-%" PRId64 "-%s.params", out, id, hash);
    path_fmt(dir, sizeof dir, "%s/run-%" PRId64 "-%s", out, id, hash);
    path_fmt(log, sizeof log, "%s/build.log", dir);
    path_fmt(built, sizeof built, "%s/bin/xqf-engine", dir);
    if (!path_fmt(binary, sizeof binary, "%s/xqf-engine-run%" PRId64 "-%s", out, id, hash) ||
        strlen(binary) > STORE_TEXT_MAX) {
        store_destroy(&s);
        return fail(EXIT_USAGE, "--out: '%s' is too long", out);
    }
    if ((status = write_export(&r, &p, params_file)) != 0) {
        store_destroy(&s);
        return status;
    }
    if (make_dirs(dir) != 0) {
        store_destroy(&s);
        return fail(EXIT_FAILURE, "cannot create '%s': %s", dir, strerror(errno));
    }
    printf("Parameters: %s (set %s)\n", params_file, hash);
    fflush(stdout);

    char def_params[PATH_MAX + 32], src_dir[PATH_MAX], jobs_text[24];
    snprintf(def_params, sizeof def_params, "-DXQF_PARAMS_FILE=%s", params_file);
    snprintf(src_dir, sizeof src_dir, "%s", source);
    snprintf(jobs_text, sizeof jobs_text, "%" PRId64, jobs);
    char *configure[] = { "cmake", "-S", src_dir, "-B", dir, "-DCMAKE_BUILD_TYPE=Release", def_params,
                          "-DXQF_TESTS=OFF", NULL };
    char *compile[] = { "cmake", "--build", dir, "--target", "xqf-engine", "-j", jobs_text, NULL };
    fprintf(stderr, "xqf-tune: building xqf-engine for run %" PRId64 " in %s\n", id, dir);
    if (spawn(configure, log, NULL, 0) != 0 || spawn(compile, log, NULL, 0) != 0) {
        store_destroy(&s);
        return fail(EXIT_FAILURE, "the build failed (see %s)", log);
    }
    if (copy_binary(built, binary) != 0) {
        store_destroy(&s);
        return fail(EXIT_FAILURE, "cannot copy %s to %s: %s", built, binary, strerror(errno));
    }

    StoreBuild b = { .run_id = id };
    snprintf(b.params_hash, sizeof b.params_hash, "%s", hash);
    snprintf(b.build_id, sizeof b.build_id, "xqf-engine-run%" PRId64 "-%s", id, hash);
    status = register_binary(s, binary, log, &b);
    store_destroy(&s);
    return status;
}

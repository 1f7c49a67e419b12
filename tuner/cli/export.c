/*
 * export.c - xqf-tune export (a run's parameter file) and report (its
 * HTML page, drawn by the tuner's report module from report_page.c's model).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "param_set.h"
#include "store_builds.h"
#include "store_runs.h"
#include "store_spsa.h"

static const OptSpec EXPORT_OPTIONS[] = {
    { "--out", OPT_TEXT, "FILE", NULL, .help = "write the file here (default: stdout)" },
    { "--format", OPT_TEXT, "params|setoption|paste", "params", .help = "a parameter file, UCI setoption lines or Fishtest's `name, value` block" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable EXPORT_TABLE = {
    .program = "xqf-tune", .spec = EXPORT_OPTIONS, .max_positional = 1,
    .usage = "Usage: xqf-tune export RUN [--format params|setoption|paste] [--db CONNINFO] [--out FILE]\n"
             "A parameter file (every parameter, `Name = value`): for SPSA the current theta\n"
             "rounded, for SPRT the test set; to stdout or FILE.  For a run on an engine\n"
             "build (--test-build, --test-ref, another engine's SPSA) only the parameters the\n"
             "run sets, which the build's source compiles in over its own defaults\n"
             "(cmake -DXQF_PARAMS_FILE=FILE).  --format setoption writes the same values as\n"
             "`setoption name N value V` lines (any engine's UCI), --format paste as\n"
             "Fishtest's ready-to-paste `N, V` block, one a line.\n",
};

enum { EXPORT_MAX = STORE_PARAMS_MAX / 2 }; /* a set of "N=1," items holds fewer than this */

/* A parameter of a build run's export: its value as a set writes it (an integer, or a float's decimal). */
typedef struct {
    char name[XQF_SET_NAME_MAX + 1];
    char value[XQF_SET_VALUE_MAX + 1];
} ExportItem;

/* Sets name to value in items[0..*n) (added when new). */
static void put(ExportItem *items, int *n, const char *name, const char *value)
{
    int i = 0;
    while (i < *n && strcmp(items[i].name, name) != 0)
        i++;
    if (i == *n && *n == EXPORT_MAX)
        return;
    if (i == *n)
        snprintf(items[(*n)++].name, sizeof items[0].name, "%s", name);
    snprintf(items[i].value, sizeof items[i].value, "%s", value);
}

/*
 * What a run sets, in order: its test set (a name set twice: the last
 * value, as the engine reads a set) and, for SPSA, theta rounded over it.
 * Returns the count, or -1 after cli_fail.
 */
static int run_items(Store *s, const StoreRun *r, ExportItem *items)
{
    char *sets = malloc(2 * (STORE_PARAMS_MAX + 1)), why[256];
    StoreSpsa *spsa = run_kind_is_spsa(r->kind) ? malloc(sizeof *spsa) : NULL;
    int n = 0, rc = 0, status = CLI_OK;
    if (!sets || (run_kind_is_spsa(r->kind) && !spsa))
        status = cli_fail(CLI_FAIL, "out of memory");
    else if (store_run_sets(s, r->id, sets, sets + STORE_PARAMS_MAX + 1, STORE_PARAMS_MAX + 1) != 1)
        status = cli_fail(CLI_FAIL, "cannot read the sets of run %" PRId64, r->id);
    XqfSetItem item;
    const char *at = sets;
    while (status == CLI_OK && n < EXPORT_MAX && (rc = xqf_set_next(&at, &item, why, sizeof why)) > 0)
        put(items, &n, item.name, item.text);
    if (status == CLI_OK && rc < 0)
        status = cli_fail(CLI_FAIL, "run %" PRId64 ": %s", r->id, why);
    if (status == CLI_OK && spsa && store_spsa_load(s, r->id, spsa) != 1)
        status = cli_fail(CLI_FAIL, "cannot read the parameters of run %" PRId64, r->id);
    /* theta: an int parameter rounded, a float one as the decimal its tasks send (xqf_set_decimal) */
    for (int i = 0; status == CLI_OK && spsa && i < spsa->count; i++) {
        const StoreSpsaParam *q = &spsa->params[i];
        char value[XQF_SET_VALUE_MAX + 1];
        if (!q->is_float)
            snprintf(value, sizeof value, "%ld", lround(q->theta));
        else if (xqf_set_decimal(q->theta, q->max - q->min, value, sizeof value) != 0)
            status = cli_fail(CLI_FAIL, "run %" PRId64 ": %s = %g has no decimal form", r->id, q->name, q->theta);
        put(items, &n, q->name, value);
    }
    free(spsa);
    free(sets);
    return status == CLI_OK ? n : -1;
}

/*
 * The export of what a run sets in format ("params": `N = V` with a
 * header, for a run on an engine build, whose defaults stand for the
 * rest; "setoption"; "paste").  Exit status.
 */
static int export_items(Store *s, const StoreRun *r, int64_t build, const char *format, const char *path)
{
    ExportItem *items = calloc(EXPORT_MAX, sizeof *items);
    int n = items ? run_items(s, r, items) : (cli_fail(CLI_FAIL, "out of memory"), -1);
    int status = n < 0 ? CLI_FAIL : CLI_OK;
    FILE *out = status == CLI_OK ? (path ? fopen(path, "w") : stdout) : NULL;
    if (status == CLI_OK && !out)
        status = cli_fail(CLI_FAIL, "--out: cannot write '%s': %s", path, strerror(errno));
    if (out) {
        bool params = strcmp(format, "params") == 0, ok = true;
        if (params)
            ok = fprintf(out, "# xqf-tune export of run %" PRId64 " (%s, %s, %" PRId64 " pairs) on build %" PRId64
                         ": the parameters the run sets; the build's defaults stand for the rest\n",
                         r->id, r->kind, r->state, r->counts.pairs, build) > 0;
        for (int i = 0; ok && i < n; i++)
            ok = fprintf(out, params ? "%s = %s\n" : strcmp(format, "paste") == 0 ? "%s, %s\n"
                                                                                 : "setoption name %s value %s\n",
                         items[i].name, items[i].value) > 0;
        if ((path ? fclose(out) : fflush(out)) != 0 || !ok)
            status = cli_fail(CLI_FAIL, "cannot write the export");
    }
    free(items);
    return status;
}

int tune_cmd_export(int argc, char **argv)
{
    Opts o;
    Store *s = NULL;
    StoreRun r;
    Params p;
    int64_t id;
    int status = cli_parse(&o, &EXPORT_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO || (status = cli_run_id(&o, &id)) != CLI_OK)
        return status;
    const char *format = opts_text(&o, "--format");
    if (strcmp(format, "params") != 0 && strcmp(format, "setoption") != 0 && strcmp(format, "paste") != 0)
        return cli_fail(CLI_USAGE, "--format: '%s' is none of params, setoption and paste", format);
    if ((status = cli_open_db(&o, &s)) != CLI_OK)
        return status;
    int64_t test_build = 0, base_build = 0;
    const char *out = opts_text(&o, "--out");
    if ((status = cli_load_run(s, id, &r)) == CLI_OK && store_run_builds(s, id, &test_build, &base_build) < 0)
        status = cli_fail(CLI_FAIL, "cannot read the builds of run %" PRId64, id);
    /* our engine's parameter file names every parameter; any other form what the run sets */
    if (status == CLI_OK && (test_build || strcmp(format, "params") != 0))
        status = export_items(s, &r, test_build, format, out);
    else if (status == CLI_OK && (status = cli_export_set(s, &r, &p)) == CLI_OK)
        status = cli_write_export(&r, &p, out);
    store_destroy(&s);
    return status;
}

/* Writes run r's report page to path. Exit status. */
static int write_report(Store *s, const StoreRun *r, const char *path)
{
    FILE *out = fopen(path, "w");
    if (!out)
        return cli_fail(CLI_FAIL, "--html: cannot write '%s': %s", path, strerror(errno));
    char why[256];
    int status = run_report_html(s, r, out, why, sizeof why);
    if (status != CLI_OK)
        cli_fail(status, "%s", why);
    if (fclose(out) != 0 && status == CLI_OK)
        status = cli_fail(CLI_FAIL, "cannot write '%s'", path);
    return status;
}

static const OptSpec REPORT_OPTIONS[] = {
    { "--html", OPT_TEXT, "FILE", NULL, .help = "the page to write, required" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable REPORT_TABLE = {
    .program = "xqf-tune", .spec = REPORT_OPTIONS, .max_positional = 1,
    .usage = "Usage: xqf-tune report RUN --html FILE [--db CONNINFO]\n"
             "Writes the run's report: one self-contained HTML page with its settings, each\n"
             "SPSA parameter's trajectory, Elo with its interval and the SPRT LLR over games.\n",
};

int tune_cmd_report(int argc, char **argv)
{
    Opts o;
    Store *s = NULL;
    StoreRun r;
    int64_t id;
    int status = cli_parse(&o, &REPORT_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO || (status = cli_run_id(&o, &id)) != CLI_OK)
        return status;
    const char *path = opts_text(&o, "--html");
    if (!path)
        return cli_fail(CLI_USAGE, "report: --html FILE is required");
    if ((status = cli_open_db(&o, &s)) != CLI_OK)
        return status;
    if ((status = cli_load_run(s, id, &r)) == CLI_OK && (status = write_report(s, &r, path)) == CLI_OK)
        printf("%s\n", path);
    store_destroy(&s);
    return status;
}

/*
 * export.c - xqf-tune export (a run's parameter file) and report (its
 * HTML page, drawn by the tuner's report module from report_page.c's model).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "param_set.h"

static const OptSpec EXPORT_OPTIONS[] = {
    { "--out", OPT_TEXT, "FILE", NULL, .help = "write the file here (default: stdout)" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable EXPORT_TABLE = {
    .program = "xqf-tune", .spec = EXPORT_OPTIONS, .max_positional = 1,
    .usage = "Usage: xqf-tune export RUN [--db CONNINFO] [--out FILE]\n"
             "A parameter file (every parameter, `Name = value`): for SPSA the current theta\n"
             "rounded, for SPRT the test set; to stdout or FILE.  For a run on an engine\n"
             "build (--test-build, --test-ref) only the parameters the run sets, which the\n"
             "build's source compiles in over its own defaults (cmake -DXQF_PARAMS_FILE=FILE).\n",
};

enum { EXPORT_MAX = STORE_PARAMS_MAX / 2 }; /* a set of "N=1," items holds fewer than this */

/* A parameter of a build run's export. */
typedef struct {
    char name[XQF_SET_NAME_MAX + 1];
    int value;
} ExportItem;

/*
 * The export of a run on an engine build (an SPRT or games run; SPSA
 * plays the built-in engine): this engine's table does not know the
 * build's parameters, so the file names only what the run's test set
 * sets (a name set twice: the last value, as the engine reads a set),
 * and the build's defaults stand for the rest.  Exit status.
 */
static int export_build_run(Store *s, const StoreRun *r, int64_t build, const char *path)
{
    char *sets = malloc(2 * (STORE_PARAMS_MAX + 1)), why[256];
    ExportItem *items = calloc(EXPORT_MAX, sizeof *items);
    int n = 0, rc = 0, status = CLI_OK;
    if (!sets || !items)
        status = cli_fail(CLI_FAIL, "out of memory");
    else if (store_run_sets(s, r->id, sets, sets + STORE_PARAMS_MAX + 1, STORE_PARAMS_MAX + 1) != 1)
        status = cli_fail(CLI_FAIL, "cannot read the sets of run %" PRId64, r->id);
    XqfSetItem item;
    const char *at = sets;
    while (status == CLI_OK && n < EXPORT_MAX && (rc = xqf_set_next(&at, &item, why, sizeof why)) > 0) {
        int i = 0;
        while (i < n && strcmp(items[i].name, item.name) != 0)
            i++;
        if (i == n)
            snprintf(items[n++].name, sizeof items[0].name, "%s", item.name);
        items[i].value = item.value;
    }
    if (status == CLI_OK && rc < 0)
        status = cli_fail(CLI_FAIL, "run %" PRId64 ": %s", r->id, why);
    FILE *out = status == CLI_OK ? (path ? fopen(path, "w") : stdout) : NULL;
    if (status == CLI_OK && !out)
        status = cli_fail(CLI_FAIL, "--out: cannot write '%s': %s", path, strerror(errno));
    if (out) {
        bool ok = fprintf(out, "# xqf-tune export of run %" PRId64 " (%s, %s, %" PRId64 " pairs) on build %" PRId64
                          ": the parameters the run sets; the build's defaults stand for the rest\n",
                          r->id, r->kind, r->state, r->counts.pairs, build) > 0;
        for (int i = 0; ok && i < n; i++)
            ok = fprintf(out, "%s = %d\n", items[i].name, items[i].value) > 0;
        if ((path ? fclose(out) : fflush(out)) != 0 || !ok)
            status = cli_fail(CLI_FAIL, "cannot write the parameter file");
    }
    free(items);
    free(sets);
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
    if (status != CLI_GO || (status = cli_run_id(&o, &id)) != CLI_OK || (status = cli_open_db(&o, &s)) != CLI_OK)
        return status;
    int64_t test_build = 0, base_build = 0;
    const char *out = opts_text(&o, "--out");
    if ((status = cli_load_run(s, id, &r)) == CLI_OK && store_run_builds(s, id, &test_build, &base_build) < 0)
        status = cli_fail(CLI_FAIL, "cannot read the builds of run %" PRId64, id);
    if (status == CLI_OK && test_build)
        status = export_build_run(s, &r, test_build, out);
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
    int status = cli_report_html(s, r, out);
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

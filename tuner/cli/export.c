/*
 * export.c - xqf-tune export (a run's parameter file) and report (its
 * HTML page, drawn by the tuner's report module from report_page.c's model).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const OptSpec EXPORT_OPTIONS[] = {
    { "--out", OPT_TEXT, "FILE", NULL, .help = "write the file here (default: stdout)" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable EXPORT_TABLE = {
    .program = "xqf-tune", .spec = EXPORT_OPTIONS, .max_positional = 1,
    .usage = "Usage: xqf-tune export RUN [--db CONNINFO] [--out FILE]\n"
             "A parameter file (every parameter, `Name = value`): for SPSA the current theta\n"
             "rounded, for SPRT the test set; to stdout or FILE.\n",
};

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
    if ((status = cli_load_run(s, id, &r)) == CLI_OK && (status = cli_export_set(s, &r, &p)) == CLI_OK)
        status = cli_write_export(&r, &p, opts_text(&o, "--out"));
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

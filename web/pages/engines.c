/*
 * engines.c - the engine records (store_engines.h): the list with, for an
 * admin, the form that adds one, and one record with its history.
 */
#include "frame.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine_record.h"
#include "run_service.h"
#include "run_kind.h"
#include "store_engines.h"

/* ---- engines ------------------------------------------------------------------------- */

/* An engine's bench as one line: its command and what reads it, or the searches that stand in for it. */
static void bench_text(const EngineRecord *e, char *out, size_t size)
{
    if (e->bench_command[0])
        snprintf(out, size, "%s", e->bench_command);
    else
        snprintf(out, size, "none: the bench positions searched to depth %d", e->bench_depth);
}

static void engine_rows(Buf *b, const EngineRecord *e)
{
    char text[ENGINE_TEXT_MAX + 64];
    row(b, "Repository", e->repo, NULL);
    if (e->cmake_target[0])
        snprintf(text, sizeof text, "CMake target %s", e->cmake_target);
    else
        snprintf(text, sizeof text, "%s", e->build_command);
    row(b, "Build", text, NULL);
    row(b, "Binary", e->binary, NULL);
    bench_text(e, text, sizeof text);
    row(b, "Bench", text, NULL);
    if (e->bench_command[0]) {
        row(b, "Bench nodes read by", e->nodes_re, NULL);
        row(b, "Bench speed read by", e->nps_re, NULL);
    }
    snprintf(text, sizeof text, "%s, ranks %s, letters %s", engine_protocol_name(e->protocol),
             e->ranks_from_one ? "1-10" : "0-9", e->he_letters ? "H/E" : "N/B");
    row(b, "Protocol", text, NULL);
    Buf init = { 0 };
    for (int i = 0; i < e->init_count; i++) {
        buf_puts(&init, i ? "; " : "");
        buf_puts(&init, e->init[i]);
    }
    row(b, "After the handshake", e->init_count && init.data ? init.data : "-", NULL);
    buf_free(&init);
    row(b, "Hash option", e->hash_option[0] ? e->hash_option : "-", NULL);
    row(b, "Threads option", e->threads_option[0] ? e->threads_option : "-", NULL);
    row(b, "Net option", e->net_option[0] ? e->net_option : "-", NULL);
    row(b, "Needs a net", e->needs_net ? "yes" : "no", NULL);
    if (e->ref_nps > 0)
        row_num(b, "Reference speed (nodes/s)", e->ref_nps, NULL);
    else
        row(b, "Reference speed (nodes/s)", "unknown", NULL);
    snprintf(text, sizeof text, "%s, %s UTC", e->added_by, e->created);
    row(b, "Added", text, NULL);
}

int page_engines(Store *s, const Form *values, const FieldError *errors, int nerrors, const char *notice,
                 const Session *u, Buf *b)
{
    EngineRecord *list = NULL;
    int n = store_engine_list(s, &list);
    if (n < 0) {
        page_error(b, 503, "the engines cannot be read now");
        return 503;
    }
    head(b, "Engines", u);
    buf_puts(b, "<h1>Engines</h1>\n");
    notice_line(b, notice);
    buf_puts(b, "<p>The engines the builder builds, benches and the workers play; runs name one with "
                "<code>--engine NAME</code> (ours: <code>" RUN_OUR_ENGINE "</code>).</p>\n"
                "<table class=\"runs\" id=\"engines\"><thead><tr><th>Name</th><th>Repository</th><th>Build</th>"
                "<th>Bench</th><th>Protocol</th><th>Net option</th><th>Reference nodes/s</th><th>Added by</th>"
                "</tr></thead><tbody>\n");
    for (int i = 0; i < n; i++) {
        const EngineRecord *e = &list[i];
        char text[ENGINE_TEXT_MAX + 64];
        buf_puts(b, "<tr><td><a href=\"/engines/");
        buf_html(b, e->name);
        buf_puts(b, "\">");
        buf_html(b, e->name);
        buf_puts(b, "</a></td><td>");
        buf_html(b, e->repo);
        buf_puts(b, "</td><td>");
        buf_html(b, e->cmake_target[0] ? e->cmake_target : e->build_command);
        buf_puts(b, "</td><td>");
        bench_text(e, text, sizeof text);
        buf_html(b, text);
        buf_printf(b, "</td><td>%s</td><td>", engine_protocol_name(e->protocol));
        buf_html(b, e->net_option[0] ? e->net_option : "-");
        if (e->ref_nps > 0)
            buf_printf(b, "</td><td>%" PRId64 "</td><td>", e->ref_nps);
        else
            buf_puts(b, "</td><td>-</td><td>");
        buf_html(b, e->added_by);
        buf_puts(b, "</td></tr>\n");
    }
    buf_puts(b, "</tbody></table>\n");
    free(list);
    if (session_is(u, "admin")) {
        EngineRecord d;
        engine_record_default(&d);
        char depth[16];
        snprintf(depth, sizeof depth, "%d", d.bench_depth);
        buf_puts(b, "<h2>Add an engine</h2>\n");
        form_start(b, u, "/engines", nerrors, "The engine was not added");
        FormOut fo = { .b = b, .values = nerrors ? values : NULL, .errors = errors, .nerrors = nerrors };
        field(&fo, "name", "Name", "", "letters, digits, '.', '_', '+', '-'");
        field(&fo, "repo", "Repository", "", "a git URL or a path the builder can fetch");
        field(&fo, "build", "Build command", d.build_command, "run at the tree's root; &lt;out&gt;: the binary's path");
        field(&fo, "cmake_target", "or CMake target", "", "instead of a build command: a target of the tree's CMake");
        field(&fo, "binary", "Binary", d.binary, "what the build makes, in the tree");
        field(&fo, "bench", "Bench command", d.bench_command, "none: a search of the bench positions to a depth");
        field(&fo, "bench_nodes", "Bench nodes regex", d.nodes_re, "its first group: the number");
        field(&fo, "bench_nps", "Bench speed regex", d.nps_re, "its first group: nodes/s");
        field(&fo, "bench_depth", "Bench depth", depth, "with bench none: the depth of each search");
        field(&fo, "protocol", "Protocol", "uci", "uci or ucci");
        field(&fo, "ranks", "Move ranks", "0", "0: 0-9 (ICCS), 1: 1-10");
        field(&fo, "letters", "FEN letters", "nb", "nb (N/B) or he (H/E) for horse and elephant");
        field(&fo, "init", "After the handshake", "", "commands separated by ';' (for example setoption name UCI_Variant value xiangqi)");
        field(&fo, "hash_option", "Hash option", d.hash_option, "empty: none");
        field(&fo, "threads_option", "Threads option", d.threads_option, "empty: none");
        field(&fo, "net_option", "Net option", d.net_option, "empty: none");
        check_field(&fo, "needs_net", "Needs a net", "it plays only with a net given through its net option");
        field(&fo, "ref_nps", "Reference nodes/s", "0", "its bench speed for scaling clocks (0: unknown)");
        buf_puts(b, "<button>Add</button></form>\n");
    }
    foot(b);
    return nerrors ? 400 : 200;
}

/*
 * The engine's presets (run_presets.h): each one's settings as xqf-tune's
 * options, who set it, and a new SPRT or games run filled from it.
 */
static void presets(Buf *b, const EngineRecord *e, const StorePreset *ps, int n)
{
    buf_puts(b, "<h2>Presets</h2>\n");
    if (n == 0) {
        buf_puts(b, "<p>None (<code>xqf-tune preset set</code> makes one).</p>\n");
        return;
    }
    buf_puts(b, "<table class=\"runs\" id=\"presets\"><thead><tr><th>Preset</th><th>Settings</th><th>Set by</th>"
                "<th>When (UTC)</th><th>New run</th></tr></thead><tbody>\n");
    for (int i = 0; i < n; i++) {
        buf_puts(b, "<tr id=\"preset-");
        buf_html(b, ps[i].name);
        buf_puts(b, "\"><td>");
        buf_html(b, ps[i].name);
        buf_puts(b, "</td><td><code>");
        for (int j = 0; j < ps[i].count; j++) {
            buf_printf(b, "%s--", j ? " " : "");
            buf_html(b, ps[i].settings[j].key);
            buf_puts(b, " ");
            buf_html(b, ps[i].settings[j].value);
        }
        buf_puts(b, "</code></td><td>");
        buf_html(b, ps[i].updated_by);
        buf_puts(b, "</td><td>");
        buf_html(b, ps[i].updated_at);
        buf_puts(b, "</td><td>");
        /* names of engine_record.h's letters and of run_presets.h's: only an engine's '+' is escaped in a query */
        for (int k = 0; k < 2; k++) {
            const char *kind = run_kind_get(k ? RUN_KIND_GAMES : RUN_KIND_SPRT)->name;
            buf_printf(b, "%s<a href=\"/new/%s?engine=", k ? " " : "", kind);
            for (const char *c = e->name; *c; c++)
                buf_printf(b, *c == '+' ? "%%2B" : "%c", *c);
            buf_puts(b, "&amp;preset=");
            buf_html(b, ps[i].name);
            buf_printf(b, "\">%s</a>", kind);
        }
        buf_puts(b, "</td></tr>\n");
    }
    buf_puts(b, "</tbody></table>\n");
}

int page_engine(const PageIn *in, Buf *b)
{
    Store *s = in->s;
    const char *name = in->rt->engine;
    const Session *u = in->u;
    EngineRecord e;
    StoreEngineChange *h = NULL;
    int found = store_engine_load(s, name, &e);
    int nh = found == 1 ? store_engine_history(s, name, &h) : 0;
    StorePreset *ps = NULL;
    int np = found == 1 ? store_preset_list(s, name, &ps) : 0;
    if (found < 0 || nh < 0 || np < 0) {
        free(h);
        free(ps);
        page_error(b, 503, "the engine cannot be read now");
        return 503;
    }
    if (found == 0) {
        char why[ENGINE_NAME_MAX + 32];
        snprintf(why, sizeof why, "there is no engine %s", name);
        page_error(b, 404, why);
        return 404;
    }
    char title[ENGINE_NAME_MAX + 16];
    snprintf(title, sizeof title, "Engine %s", e.name);
    head(b, title, u);
    buf_puts(b, "<h1>Engine ");
    buf_html(b, e.name);
    buf_puts(b, "</h1>\n<table class=\"kv\" id=\"engine\">\n");
    engine_rows(b, &e);
    buf_puts(b, "</table>\n");
    presets(b, &e, ps, np);
    free(ps);
    buf_puts(b, "<h2>Changes</h2>\n");
    if (nh == 0)
        buf_puts(b, "<p>None since it was added (<code>xqf-tune engine modify</code> changes a record).</p>\n");
    else
        buf_puts(b, "<table class=\"runs\" id=\"history\"><thead><tr><th>When (UTC)</th><th>Who</th><th>Field</th>"
                    "<th>From</th><th>To</th></tr></thead><tbody>\n");
    for (int i = 0; i < nh; i++) {
        const char *cells[] = { h[i].at, h[i].actor, h[i].field, h[i].old_value[0] ? h[i].old_value : "none",
                                h[i].new_value[0] ? h[i].new_value : "none" };
        buf_puts(b, "<tr>");
        for (size_t c = 0; c < sizeof cells / sizeof cells[0]; c++) {
            buf_puts(b, "<td>");
            buf_html(b, cells[c]);
            buf_puts(b, "</td>");
        }
        buf_puts(b, "</tr>\n");
    }
    if (nh)
        buf_puts(b, "</tbody></table>\n");
    free(h);
    buf_puts(b, "<p><a href=\"/engines\">Back to the engines</a></p>\n");
    foot(b);
    return 200;
}

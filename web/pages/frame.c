/*
 * frame.c - the frame of every page (head, foot, the error page), the
 * rows of a table of settings and the fields of a form, shared by the page
 * files of web/pages/ (frame.h); the visitor's rights (pages.h).
 */
#include "frame.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "run_kind.h"

/* ---- the visitor ------------------------------------------------------------------ */

bool session_is(const Session *u, const char *role)
{
    static const char *const ORDER[] = { "viewer", "tester", "admin" };
    int have = -1, need = 0;
    for (int i = 0; i < 3; i++) {
        if (u->in && strcmp(u->role, ORDER[i]) == 0)
            have = i;
        if (strcmp(role, ORDER[i]) == 0)
            need = i;
    }
    return have >= need;
}

/* ---- the frame of every page ------------------------------------------------------ */

void head(Buf *b, const char *title, const Session *u)
{
    buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                "<link rel=\"stylesheet\" href=\"/static/style.css\"><title>");
    buf_html(b, title);
    buf_puts(b, " - Xiangqi Forge</title></head><body>\n<nav><a class=\"brand\" href=\"/\">Xiangqi Forge</a> "
                "<a href=\"/runs\">Runs</a> <a href=\"/chains\">Chains</a> <a href=\"/progressions\">Progressions</a> <a href=\"/machines\">Machines</a> "
                "<a href=\"/contributors\">Contributors</a> <a href=\"/log\">Events</a>");
    for (int k = 0; k < RUN_KIND_COUNT && session_is(u, "tester"); k++) {
        const RunKind *kind = run_kind_get((RunKindId)k);
        buf_printf(b, " <a href=\"/new/%s\">New %s</a>", kind->name, kind->title);
    }
    buf_puts(b, " <a href=\"/engines\">Engines</a> <a href=\"/nets\">Nets</a> <a href=\"/sprt-calc\">SPRT calculator</a>");
    if (session_is(u, "admin"))
        buf_puts(b, " <a href=\"/users\">Users</a>");
    buf_puts(b, "<span class=\"user\">");
    if (u->in) {
        buf_html(b, u->name);
        buf_puts(b, " (");
        buf_html(b, u->role);
        buf_puts(b, ") <form class=\"inline\" method=\"post\" action=\"/logout\"><input type=\"hidden\" "
                    "name=\"csrf\" value=\"");
        buf_html(b, u->csrf);
        buf_puts(b, "\"><button>Log out</button></form>");
    } else
        buf_puts(b, "<a href=\"/login\">Log in</a>");
    buf_puts(b, "</span></nav>\n<main>\n");
}

void foot(Buf *b)
{
    buf_puts(b, "</main>\n<script src=\"/static/chart.js\"></script><script src=\"/static/web.js\"></script>"
                "</body></html>\n");
}

void list_table(Buf *b, const StoreTable *t, const char *extra_header, ListExtra *extra)
{
    int cols = store_table_cols(t), rows = store_table_rows(t);
    buf_puts(b, "<table class=\"list sortable\"><thead><tr>");
    for (int c = 0; c < cols; c++) {
        if (store_table_header(t, c)[0] == '_')
            continue;
        buf_puts(b, store_table_numeric(t, c) ? "<th class=\"num\">" : "<th>");
        buf_html(b, store_table_header(t, c));
        buf_puts(b, "</th>");
    }
    if (extra) {
        buf_puts(b, "<th>");
        buf_html(b, extra_header);
        buf_puts(b, "</th>");
    }
    buf_puts(b, "</tr></thead><tbody>\n");
    for (int r = 0; r < rows; r++) {
        buf_puts(b, "<tr>");
        for (int c = 0; c < cols; c++) {
            if (store_table_header(t, c)[0] == '_')
                continue;
            buf_puts(b, store_table_numeric(t, c) ? "<td class=\"num\">" : "<td>");
            buf_html(b, store_table_null(t, r, c) ? "-" : store_table_cell(t, r, c));
            buf_puts(b, "</td>");
        }
        if (extra)
            extra(b, t, r);
        buf_puts(b, "</tr>\n");
    }
    buf_puts(b, "</tbody></table>\n");
}

/* The hidden CSRF field of a form. */
void csrf_field(Buf *b, const Session *u)
{
    buf_puts(b, "<input type=\"hidden\" name=\"csrf\" value=\"");
    buf_html(b, u->csrf);
    buf_puts(b, "\">");
}

void page_error(Buf *b, int status, const char *reason)
{
    static const Session nobody = { 0 };
    char title[64];
    snprintf(title, sizeof title, "Error %d", status);
    head(b, title, &nobody);
    buf_printf(b, "<h1>Error %d</h1><p class=\"error\">", status);
    buf_html(b, reason);
    buf_puts(b, "</p><p><a href=\"/\">Back to the runs</a></p>\n");
    foot(b);
}

/* ---- tables and notices ---------------------------------------------------------- */

/* One "label: value" row of a table of settings (value escaped). */
void row(Buf *b, const char *label, const char *value, const char *key)
{
    buf_printf(b, "<tr><th>%s</th><td%s%s%s>", label, key ? " data-k=\"" : "", key ? key : "", key ? "\"" : "");
    buf_html(b, value);
    buf_puts(b, "</td></tr>\n");
}

void row_num(Buf *b, const char *label, int64_t v, const char *key)
{
    char t[32];
    snprintf(t, sizeof t, "%" PRId64, v);
    row(b, label, t, key);
}

/* A page's notice (NULL: none). */
void notice_line(Buf *b, const char *notice)
{
    if (!notice)
        return;
    buf_puts(b, "<p class=\"notice\" id=\"notice\">");
    buf_html(b, notice);
    buf_puts(b, "</p>\n");
}

/* The start of an admin's form posted to action: the refusal when it had errors ("The X was not Y"), the token. */
void form_start(Buf *b, const Session *u, const char *action, int nerrors, const char *refused)
{
    if (nerrors)
        buf_printf(b, "<p class=\"error\">%s: see the messages below.</p>\n", refused);
    buf_printf(b, "<form method=\"post\" action=\"%s\" class=\"new\">", action);
    csrf_field(b, u);
}

/* ---- forms -------------------------------------------------------------------------- */

/* The message of field name (NULL: none), marked shown. */
static const char *field_message(FormOut *fo, const char *name)
{
    for (int i = 0; i < fo->nerrors; i++)
        if (strcmp(fo->errors[i].field, name) == 0) {
            if (i < 32)
                fo->shown[i] = true;
            return fo->errors[i].message;
        }
    return NULL;
}

static void field_end(FormOut *fo, const char *name, const char *hint, const char *msg)
{
    if (hint)
        buf_printf(fo->b, "<small>%s</small>", hint);
    if (msg) {
        buf_printf(fo->b, "<p class=\"field-error\" id=\"err-%s\">", name);
        buf_html(fo->b, msg);
        buf_puts(fo->b, "</p>");
    }
    buf_puts(fo->b, "</div>\n");
}

/* One field of a form: label, input with the value given (or the default), its message. */
void field(FormOut *fo, const char *name, const char *label, const char *def, const char *hint)
{
    const char *v = fo->values ? form_get(fo->values, name) : NULL, *msg = field_message(fo, name);
    buf_printf(fo->b, "<div class=\"field%s\"><label for=\"f-%s\">%s</label><input id=\"f-%s\" name=\"%s\" value=\"",
               msg ? " invalid" : "", name, label, name, name);
    buf_html(fo->b, v ? v : def);
    buf_puts(fo->b, "\"");
    if (fo->engines && (strcmp(name, "engine") == 0 || strcmp(name, "base_engine") == 0))
        buf_puts(fo->b, " list=\"engines\"");
    buf_puts(fo->b, ">");
    field_end(fo, name, hint, msg);
}

/* A field of several lines: a textarea with the text given. */
void textarea_field(FormOut *fo, const char *name, const char *label, const char *hint)
{
    const char *v = fo->values ? form_get(fo->values, name) : NULL, *msg = field_message(fo, name);
    buf_printf(fo->b, "<div class=\"field%s\"><label for=\"f-%s\">%s</label><textarea id=\"f-%s\" name=\"%s\" "
               "rows=\"6\" cols=\"60\">", msg ? " invalid" : "", name, label, name, name);
    buf_html(fo->b, v ? v : "");
    buf_puts(fo->b, "</textarea>");
    field_end(fo, name, hint, msg);
}

/* A yes/no field: a checkbox sending "1" when ticked (unticked: absent, no). */
void check_field(FormOut *fo, const char *name, const char *label, const char *hint)
{
    const char *v = fo->values ? form_get(fo->values, name) : NULL, *msg = field_message(fo, name);
    buf_printf(fo->b, "<div class=\"field%s\"><label for=\"f-%s\">%s</label><input id=\"f-%s\" type=\"checkbox\" "
               "name=\"%s\" value=\"1\"%s>", msg ? " invalid" : "", name, label, name, name,
               v && *v && strcmp(v, "0") != 0 ? " checked" : "");
    field_end(fo, name, hint, msg);
}

void form_unshown_errors(Buf *b, const FormOut *fo, const char *refusal)
{
    if (!fo->nerrors)
        return;
    buf_printf(b, "<p class=\"error\">%s", refusal);
    for (int i = 0; i < fo->nerrors; i++)
        if (i >= 32 || !fo->shown[i]) {
            buf_printf(b, " <span id=\"err-%s\">", fo->errors[i].field);
            buf_html(b, fo->errors[i].field);
            buf_puts(b, ": ");
            buf_html(b, fo->errors[i].message);
            buf_puts(b, "</span>");
        }
    buf_puts(b, "</p>\n");
}

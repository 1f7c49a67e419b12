/*
 * nets.c - the nets (store_nets.h), as Fishtest's nets page shows them:
 * each one's name, SHA-256, size and provenance, the runs that named it
 * with their verdicts, whether it is approved, and its file; our engine's
 * default net; for a tester the form that uploads one (it waits for an
 * admin), for an admin the button that approves an upload.
 */
#include "frame.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_nets.h"

enum { NET_RUNS_SHOWN = 8 };

/* A size in bytes as people read it (MB: 10^6 bytes, as the net format's documentation counts). */
static void size_text(int64_t bytes, char *out, size_t size)
{
    if (bytes >= 1000000)
        snprintf(out, size, "%.2f MB", (double)bytes / 1e6);
    else if (bytes >= 1000)
        snprintf(out, size, "%.1f kB", (double)bytes / 1e3);
    else
        snprintf(out, size, "%" PRId64 " B", bytes);
}

/* The net's provenance: what the file says of itself, the uploader's or operator's words, who added it, its chain. */
static void provenance_cell(Buf *b, const StoreNet *n)
{
    if (n->description[0]) {
        buf_puts(b, "<div class=\"net-description\">");
        buf_html(b, n->description);
        buf_puts(b, "</div>");
    }
    if (n->provenance[0]) {
        buf_puts(b, "<div class=\"net-provenance\">");
        buf_html(b, n->provenance);
        buf_puts(b, "</div>");
    }
    buf_puts(b, "<div class=\"net-added\">added by ");
    buf_html(b, n->added_by[0] ? n->added_by : "-");
    buf_puts(b, ", ");
    buf_html(b, n->created);
    buf_puts(b, " UTC");
    if (n->chain)
        buf_printf(b, "; trained by <a href=\"/chains#chain-%" PRId64 "\">chain %" PRId64 "</a>", n->chain, n->chain);
    buf_puts(b, n->signature[0] ? "; signed" : "; unsigned");
    buf_puts(b, "</div>");
}

/* The runs that named the net on a side: their count, the newest with links and verdicts. */
static int runs_cell(Store *s, Buf *b, const StoreNet *n)
{
    buf_printf(b, "<span class=\"net-runs\">%" PRId64 "</span>", n->runs);
    if (!n->runs)
        return 0;
    StoreNetRun runs[NET_RUNS_SHOWN];
    int k = store_net_runs(s, n->id, runs, NET_RUNS_SHOWN);
    if (k < 0)
        return -1;
    buf_puts(b, "<ul class=\"net-run-list\">");
    for (int i = 0; i < k; i++) {
        buf_printf(b, "<li><a href=\"/runs/%" PRId64 "\">%" PRId64 "</a> ", runs[i].id, runs[i].id);
        buf_html(b, runs[i].verdict[0] ? runs[i].verdict : runs[i].state);
        buf_puts(b, "</li>");
    }
    if (n->runs > k)
        buf_printf(b, "<li>and %" PRId64 " more</li>", n->runs - k);
    buf_puts(b, "</ul>");
    return 0;
}

/* Its state, with an admin's approval button for an upload. */
static void state_cell(Buf *b, const StoreNet *n, const Session *u)
{
    if (n->approved) {
        buf_puts(b, "<span class=\"net-state\">approved</span>");
        if (n->approved_by[0]) {
            buf_puts(b, " by ");
            buf_html(b, n->approved_by);
        }
        return;
    }
    buf_puts(b, "<span class=\"net-state waiting\">waiting</span>");
    if (!session_is(u, "admin"))
        return;
    buf_puts(b, " <form class=\"inline\" method=\"post\" action=\"/nets/");
    buf_url(b, n->name);
    buf_puts(b, "/approve\">");
    csrf_field(b, u);
    buf_puts(b, "<button>Approve</button></form>");
}

/* Our engine's default net, and which registered net it is. */
static void default_net(Buf *b, const NetFacts *facts, const StoreNet *list, int n)
{
    buf_puts(b, "<h2>Default net</h2>\n<p id=\"default-net\">");
    if (!facts->default_sha256[0]) {
        buf_puts(b, "This build of our engine (<code>xqf</code>) has no net compiled in: it plays the hand-crafted "
                    "evaluation by default.</p>\n");
        return;
    }
    char size[32];
    size_text(facts->default_size, size, sizeof size);
    buf_printf(b, "Our engine (<code>xqf</code>) plays by default the net compiled into it, "
                  "<code>engine/nets/default.nnue</code>: SHA-256 <code title=\"%s\">%.12s</code>, %s",
               facts->default_sha256, facts->default_sha256, size);
    for (int i = 0; i < n; i++)
        if (strcmp(list[i].sha256, facts->default_sha256) == 0) {
            buf_puts(b, ", registered as <a href=\"#net-");
            buf_url(b, list[i].name);
            buf_puts(b, "\">");
            buf_html(b, list[i].name);
            buf_puts(b, "</a>");
        }
    buf_puts(b, ".  The engines' records keep no default net of their own (an engine loads a run's net by its "
                "net option, on the engines page), so none is set here: a new default is a build with the net "
                "compiled in (<code>xqf-tune build --net NET</code>) or a commit of "
                "<code>engine/nets/default.nnue</code>.</p>\n");
}

/* A tester's form: the file, its name and where it came from (values: those of a refused upload, or NULL). */
static void upload_form(Buf *b, const NetFacts *facts, const Form *values, const Session *u)
{
    char size[32], hint[256];
    size_text(facts->upload_max, size, sizeof size);
    buf_puts(b, "<h2>Upload a net</h2>\n<p>It waits for an admin's approval: until then no worker fetches it and "
                "no run may name it.</p>\n<form method=\"post\" action=\"/nets\" enctype=\"multipart/form-data\" "
                "class=\"new\" id=\"net-upload\">");
    csrf_field(b, u);
    buf_printf(b, "<div class=\"field\"><label for=\"f-net\">Net file</label><input id=\"f-net\" type=\"file\" "
                  "name=\"net\" required><small>the engine's net format (docs/nnue.md), at most %" PRId64 " bytes "
                  "(%s); the engine's own reader checks it before it is stored</small></div>\n",
               facts->upload_max, size);
    FormOut fo = { .b = b, .values = values };
    snprintf(hint, sizeof hint, "letters, digits, '.', '_', '+', '-'; empty: xqf-&lt;12 hex digits of its "
                                "SHA-256&gt;.nnue");
    field(&fo, "name", "Name", "", hint);
    textarea_field(&fo, "provenance", "Provenance", "the data, the trainer and its settings, the parent net");
    buf_puts(b, "<button>Upload</button></form>\n");
}

int page_nets(Store *s, const NetFacts *facts, const Form *values, const char *error, const char *notice,
              const Session *u, Buf *b)
{
    StoreNet *list = NULL;
    int n = store_list_nets(s, &list);
    if (n < 0) {
        page_error(b, 503, "the nets cannot be read now");
        return 503;
    }
    head(b, "Nets", u);
    buf_puts(b, "<h1>Nets</h1>\n");
    if (error) {
        buf_puts(b, "<p class=\"error\" id=\"net-error\">The net was not uploaded: ");
        buf_html(b, error);
        buf_puts(b, "</p>\n");
    }
    notice_line(b, notice);
    buf_puts(b, "<p>The networks (NNUE weights) runs may name per side (<code>xqf-tune sprt new --test-net NET "
                "--base-net NET</code>): registered by the operator (<code>xqf-tune net add</code>, a chain's net "
                "stage) or uploaded here by a tester and approved by an admin.  Workers fetch a net by its "
                "SHA-256 on first use.</p>\n"
                "<table class=\"runs\" id=\"nets\"><thead><tr><th>Name</th><th>SHA-256</th><th>Size</th>"
                "<th>Provenance</th><th>Runs</th><th>State</th><th>File</th></tr></thead><tbody>\n");
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        const StoreNet *net = &list[i];
        char size[32];
        size_text(net->size, size, sizeof size);
        buf_puts(b, "<tr id=\"net-");
        buf_url(b, net->name);
        buf_puts(b, "\"><td>");
        buf_html(b, net->name);
        buf_printf(b, "</td><td><code title=\"%s\">%.12s</code></td><td title=\"%" PRId64 " bytes\">%s</td><td>",
                   net->sha256, net->sha256, net->size, size);
        provenance_cell(b, net);
        buf_puts(b, "</td><td>");
        rc = runs_cell(s, b, net);
        buf_puts(b, "</td><td>");
        state_cell(b, net, u);
        buf_puts(b, "</td><td>");
        if (net->approved || session_is(u, "admin")) {
            buf_puts(b, "<a href=\"/nets/");
            buf_url(b, net->name);
            buf_puts(b, "/download\">download</a>");
        } else
            buf_puts(b, "-");
        buf_puts(b, "</td></tr>\n");
    }
    buf_puts(b, "</tbody></table>\n");
    if (rc != 0) {
        free(list);
        buf_free(b);
        page_error(b, 503, "the nets' runs cannot be read now");
        return 503;
    }
    if (n == 0)
        buf_puts(b, "<p>No nets yet.</p>\n");
    default_net(b, facts, list, n);
    free(list);
    if (session_is(u, "tester"))
        upload_form(b, facts, values, u);
    foot(b);
    return 200;
}

/*
 * log.c - the events log, as Fishtest's: every action on runs, chains,
 * nets, engines, accounts and builds, newest first (store_lists.def's
 * EVENTS), filtered by what it was of, who did it and the run; the same
 * rows as xqf-tune log.
 */
#include "frame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LOG_ROWS = 500 };

static void run_link(Buf *b, const StoreTable *t, int row)
{
    int c = store_table_column(t, "_run");
    if (c < 0 || store_table_null(t, row, c)) {
        buf_puts(b, "<td></td>");
        return;
    }
    long long run = strtoll(store_table_cell(t, row, c), NULL, 10);
    buf_printf(b, "<td><a href=\"/runs/%lld\">run %lld</a></td>", run, run);
}

int page_log(const PageIn *in, Buf *b)
{
    const char *of = form_get(in->query, "of"), *who = form_get(in->query, "who"), *run = form_get(in->query, "run");
    of = of && *of ? of : NULL, who = who && *who ? who : NULL, run = run && *run ? run : NULL;
    bool admin = session_is(in->u, "admin");
    bool known = !of || (store_event_of_known(of) && (admin || strcmp(of, "login") != 0));
    char *end = NULL;
    long long run_id = run ? strtoll(run, &end, 10) : 0;
    if (!known || (run && (*end || run_id <= 0)) || (who && strlen(who) > STORE_NAME_MAX)) {
        page_error(b, 400, !known ? "of is run, chain, net, engine, user or build" : run ? "run is a run's id"
                                                                                          : "who is a name");
        return 400;
    }
    char limit[16];
    snprintf(limit, sizeof limit, "%d", LOG_ROWS);
    const char *params[5] = { of, who, run, limit, admin ? "true" : "false" };
    StoreTable *t = store_list(in->s, STORE_LIST_EVENTS, params);
    if (!t) {
        page_error(b, 503, "the run database cannot be read now");
        return 503;
    }
    head(b, "Events", in->u);
    buf_puts(b, "<h1>Events</h1>\n<form class=\"filters\" method=\"get\" action=\"/log\"><label>Of <select name=\"of\">"
                "<option value=\"\">anything</option>");
    for (int i = 0; i < STORE_EVENT_OF_COUNT; i++)
        if (admin || strcmp(STORE_EVENT_OF[i], "login") != 0)
            buf_printf(b, "<option%s>%s</option>", of && strcmp(of, STORE_EVENT_OF[i]) == 0 ? " selected" : "",
                       STORE_EVENT_OF[i]);
    buf_puts(b, "</select></label> <label>Who <input name=\"who\" value=\"");
    buf_html(b, who ? who : "");
    buf_puts(b, "\"></label> <label>Run <input name=\"run\" size=\"6\" value=\"");
    buf_html(b, run ? run : "");
    buf_printf(b, "\"></label> <button>Show</button></form>\n<p>%d event%s, newest first (at most %d).</p>\n",
               store_table_rows(t), store_table_rows(t) == 1 ? "" : "s", LOG_ROWS);
    list_table(b, t, "Run", run_link);
    buf_puts(b, "<p class=\"note\">Each action is written in its own transaction, so the log holds every action "
                "that took place and none that failed. xqf-tune log lists the same.</p>\n");
    foot(b);
    store_table_free(&t);
    return 200;
}

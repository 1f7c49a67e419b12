/*
 * contributors.c - who gave the cluster what, by machine or by user (a
 * worker key's allow-list name), as Fishtest's contributors page: CPU
 * time, games, pairs, tasks, faults and when each was last seen
 * (store_lists.def's CONTRIBUTORS_*), with the faults flag of the
 * machines page (residual.h's rule) over all its games.
 */
#include "frame.h"

#include <stdlib.h>
#include <string.h>

#include "residual.h"

static int64_t number(const StoreTable *t, int row, const char *name)
{
    int c = store_table_column(t, name);
    return c < 0 ? 0 : strtoll(store_table_cell(t, row, c), NULL, 10);
}

static void flags(Buf *b, const StoreTable *t, int row)
{
    bool faulty = xqf_faults_flag(number(t, row, "Games"), number(t, row, "Crashes"), number(t, row, "Time losses"));
    buf_puts(b, faulty ? "<td class=\"error\">faults</td>" : "<td></td>");
}

int page_contributors(const PageIn *in, Buf *b)
{
    const char *by = form_get(in->query, "by");
    bool users = by && strcmp(by, "user") == 0;
    if (by && !users && strcmp(by, "machine") != 0) {
        page_error(b, 400, "by is machine or user");
        return 400;
    }
    StoreTable *as_of = store_list(in->s, STORE_LIST_CONTRIBUTORS_AS_OF, NULL);
    StoreTable *t = as_of ? store_list(in->s, users ? STORE_LIST_CONTRIBUTORS_USERS : STORE_LIST_CONTRIBUTORS_MACHINES,
                                       NULL)
                          : NULL;
    if (!t || store_table_rows(as_of) != 1) {
        store_table_free(&as_of);
        store_table_free(&t);
        page_error(b, 503, "the run database cannot be read now");
        return 503;
    }
    head(b, "Contributors", in->u);
    buf_printf(b, "<h1>Contributors</h1>\n<p>By %s (%d), or <a href=\"/contributors?by=%s\">by %s</a>, as of ",
               users ? "user" : "machine", store_table_rows(t), users ? "machine" : "user", users ? "machine" : "user");
    buf_html(b, store_table_cell(as_of, 0, 0));
    buf_puts(b, " UTC (made again at most once a minute). A click on a column's name sorts by it.</p>\n");
    store_table_free(&as_of);
    list_table(b, t, "Flags", flags);
    buf_puts(b, "<p class=\"note\">CPU-hours: the time a machine held tasks (its leases' spans, from the lease to "
                "its last report, overlaps counted once) times the cores it gives to games. Games, pairs and tasks: "
                "what it played and reported, over every run. User: the name its key has in the coordinator's "
                "allow-list. Faults: more than 3 crashes, or time losses in more than 10 % of more than 20 "
                "games (the machines page's rule).</p>\n");
    foot(b);
    store_table_free(&t);
    return 200;
}

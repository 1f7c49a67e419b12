/*
 * machines.c - the workers seen lately: their builds, speeds, tasks and
 * faults (the flag of xqf-tune show's rule, residual.h).
 */
#include "frame.h"

#include <inttypes.h>
#include <stdlib.h>

#include "residual.h"
#include "store_web.h"

enum { MACHINE_WINDOW_S = 3600, MACHINES_SHOWN = 5000 };

/* ---- machines ------------------------------------------------------------------------- */

int page_machines(const PageIn *in, Buf *b)
{
    Store *s = in->s;
    const Session *u = in->u;
    StoreWorker *w = NULL;
    int n = store_web_workers(s, MACHINE_WINDOW_S, MACHINES_SHOWN, &w);
    if (n < 0) {
        page_error(b, 503, "the run database cannot be read now");
        return 503;
    }
    head(b, "Machines", u);
    buf_printf(b, "<h1>Machines</h1>\n<p>Workers seen in the last %d minutes: %d.</p>\n", MACHINE_WINDOW_S / 60, n);
    if (n > 0) {
        buf_puts(b, "<table><thead><tr><th>Worker</th><th>Build</th><th>Cores</th><th>Games at once</th>"
                    "<th>Nodes/s</th><th>Tasks now</th><th>Pairs played</th><th>Crashes</th><th>Time losses</th>"
                    "<th>Illegal moves</th><th>Last seen</th><th>Flags</th></tr></thead><tbody>\n");
        for (int i = 0; i < n; i++) {
            buf_puts(b, "<tr><td>");
            buf_html(b, w[i].name);
            buf_puts(b, "</td><td class=\"mono\">");
            buf_html(b, w[i].build_id[0] ? w[i].build_id : "-");
            buf_printf(b, "</td><td>%d</td><td>%d</td><td>", w[i].cores, w[i].concurrency);
            if (w[i].nps > 0)
                buf_printf(b, "%.2f M", w[i].nps / 1e6);
            else
                buf_puts(b, "-");
            /* the rule of a run's flag (residual.h), over every run's games */
            bool faulty = xqf_faults_flag(2 * w[i].pairs, w[i].crashes, w[i].time_losses);
            buf_printf(b, "</td><td>%" PRId64 "</td><td>%" PRId64 "</td><td>%" PRId64 "</td><td>%" PRId64 "</td><td>%"
                          PRId64 "</td><td>%.0f s ago</td><td>%s%s</td></tr>\n", w[i].leased, w[i].pairs, w[i].crashes,
                       w[i].time_losses, w[i].illegal_moves, w[i].idle_s,
                       w[i].idle_s > 120 ? "idle" : w[i].leased > 0 ? "busy" : "waiting", faulty ? ", faults" : "");
        }
        buf_puts(b, "</tbody></table>\n");
    }
    buf_puts(b, "<p class=\"note\">Nodes per second: the worker's latest bench of a build it plays. Crashes, time "
                "losses and illegal moves: its games so ended, over every run (\"faults\": more than 3 crashes, or time "
                "losses in more than 10 % of more than 20 games, xqf-tune show's rule); a run's page shows them by worker "
                "for that run, with the residual.</p>\n");
    foot(b);
    free(w);
    return 200;
}

/*
 * chains.c - the newest run chains (store_steer.h): each stage with its
 * state and what it made (a run, a build, a net), as xqf-tune chain list
 * and chain show print them; a chain that has not ended with its Stop
 * button, for who may (the run service's run_chain_may).
 */
#include "frame.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "run_verbs.h"
#include "store_steer.h"

enum { CHAINS_SHOWN = 50 };

/* One stage: its kind and settings, what it made, its state. */
static void stage_cell(Buf *b, const StoreChainStage *st)
{
    buf_printf(b, "<li class=\"stage %s\"><b>", st->state);
    buf_html(b, store_chain_kind_name(st->kind));
    buf_puts(b, "</b> ");
    if (st->kind == CHAIN_SPRT && st->nodes > 0)
        buf_printf(b, "[%g, %g] at %" PRId64 " nodes ", st->elo0, st->elo1, st->nodes);
    else if (st->kind == CHAIN_SPRT)
        buf_printf(b, "[%g, %g] at %g+%g ", st->elo0, st->elo1, (double)st->base_ms / 1000, (double)st->inc_ms / 1000);
    else if (st->kind == CHAIN_TRAIN)
        buf_printf(b, "%d epochs, batch %d, lambda %g, lr %g ", st->epochs, st->batch, st->lambda, st->lr);
    if (st->run_id)
        buf_printf(b, "<a href=\"/runs/%" PRId64 "\">run %" PRId64 "</a> ", st->run_id, st->run_id);
    if (st->build_id)
        buf_printf(b, "build %" PRId64 " ", st->build_id);
    if (st->net_id)
        buf_printf(b, "net %" PRId64 " ", st->net_id);
    buf_puts(b, "<i>");
    buf_html(b, st->state);
    buf_puts(b, "</i>");
    if (st->detail[0]) {
        buf_puts(b, ": ");
        buf_html(b, st->detail);
    }
    buf_puts(b, "</li>");
}

int page_chains(const PageIn *in, Buf *b)
{
    int64_t *ids = NULL;
    int n = store_list_chains(in->s, CHAINS_SHOWN, &ids);
    StoreChain *c = n > 0 ? malloc(sizeof *c) : NULL;
    if (n < 0 || (n > 0 && !c)) {
        free(ids);
        free(c);
        page_error(b, 503, "the run database cannot be read now");
        return 503;
    }
    RunActor actor = { .name = in->u->name, .role = in->u->in ? in->u->role : "" };
    bool may_stop = in->u->in && run_chain_may(&actor);
    head(b, "Chains", in->u);
    buf_puts(b, "<h1>Chains</h1>\n<p>A chain runs its stages one after the other, each when the one before passed: "
                "an SPSA run, then the tuned engine built and SPRTs of it; or a data run, then a net trained on its "
                "positions, registered, and SPRTs of the net. Builds and trainings are done by <code>xqf-tune chain "
                "advance</code> on the operator's host.");
    if (session_is(in->u, "tester"))
        buf_puts(b, " <a href=\"/new/chain\">New chain</a> (an SPSA run first), "
                    "<a href=\"/new/chain?first=data\">new net chain</a> (a data run first).");
    buf_puts(b, "</p>\n");
    if (n == 0)
        buf_puts(b, "<p>No chain yet.</p>\n");
    else
        buf_puts(b, "<table><thead><tr><th>Chain</th><th>State</th><th>Name</th><th>Stages</th></tr></thead><tbody>\n");
    for (int i = 0; i < n; i++) {
        int rc = store_load_chain(in->s, ids[i], c);
        if (rc != 1)
            continue;   /* deleted since the list was read */
        buf_printf(b, "<tr id=\"chain-%" PRId64 "\"><td>%" PRId64 "</td><td>", c->id, c->id);
        buf_html(b, c->state);
        if (c->note[0]) {
            buf_puts(b, ": ");
            buf_html(b, c->note);
        }
        if (may_stop && strcmp(c->state, "active") == 0) {
            buf_printf(b, " <form class=\"inline\" method=\"post\" action=\"/chains/%" PRId64 "/stop\">", c->id);
            csrf_field(b, in->u);
            buf_puts(b, "<button class=\"danger\">Stop</button></form>");
        }
        buf_puts(b, "</td><td>");
        buf_html(b, c->name);
        buf_puts(b, "</td><td><ol class=\"stages\">");
        for (int k = 0; k < c->count; k++)
            stage_cell(b, &c->stages[k]);
        buf_puts(b, "</ol></td></tr>\n");
    }
    if (n > 0)
        buf_puts(b, "</tbody></table>\n");
    foot(b);
    free(c);
    free(ids);
    return 200;
}

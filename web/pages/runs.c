/*
 * runs.c - the runs: the list (filtered), a run's page with its charts'
 * data, tasks, builds and history, and its live numbers as an event
 * (live.c pushes them).  Every text from the database goes through
 * buf_html (or buf_json inside the data element); numbers come from the
 * tuner's statistics (Elo, nElo, LLR bounds).
 */
#include "frame.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_view.h"
#include "game.h"
#include "params.h"
#include "run_kind.h"
#include "run_rules.h"
#include "run_service.h"
#include "run_verbs.h"
#include "stats.h"
#include "store_builds.h"
#include "store_games.h"
#include "store_runs.h"
#include "store_spsa.h"
#include "store_steer.h"
#include "store_tasks.h"
#include "store_users.h"
#include "store_web.h"

enum { RUNS_SHOWN = 200, CHART_POINTS = 400, TASK_ROWS = 200, AUDIT_ROWS = 100 };

/* ---- numbers as text -------------------------------------------------------------- */

/* x without the minus sign of a value that prints as zero ("-0.00"). */
static double z(double x) { return fabs(x) < 0.005 ? 0.0 : x; }

static void elo_text(const StoreCounts *c, char *out, size_t size, bool normalized)
{
    xqf_elo e;
    if (!run_elo_of(c, &e))
        snprintf(out, size, "-");
    else if (normalized)
        snprintf(out, size, "%.2f \u00b1 %.2f", z(e.nelo), e.nelo_ci95);
    else
        snprintf(out, size, "%.2f \u00b1 %.2f", z(e.elo), e.elo_ci95);
}

static bool is_spsa(const StoreRun *r) { return run_kind_is_spsa(r->kind); }

/* The run service's SPRT state (run_sprt_state: xqf-tune show prints the same), or "-". */
static void llr_text(const StoreRun *r, char *out, size_t size)
{
    RunSprtState sprt;
    if (!run_sprt_state(r, &r->counts, &sprt))
        snprintf(out, size, "-");
    else
        snprintf(out, size, "%.2f [%.2f, %.2f]", z(sprt.llr), sprt.lower, sprt.upper);
}

/* The Elo column of a run: SPSA plays theta+ against theta-, two points that
 * move every iteration, so their Elo measures nothing a reader wants ("-";
 * the tune's progress is its theta, on the run page). */
static void page_elo_text(const StoreRun *r, char *out, size_t size, bool normalized)
{
    if (is_spsa(r))
        snprintf(out, size, "-");
    else
        elo_text(&r->counts, out, size, normalized);
}

/* What an unnamed run tests, from its settings: the engine when not ours,
 * the nets or builds when the sides differ in them, the clock.  A name
 * given at creation wins. */
static void run_title(const StoreRun *r, char *out, size_t size)
{
    if (r->name[0]) {
        snprintf(out, size, "%s", r->name);
        return;
    }
    char what[160] = "", tc[48];
    if (strcmp(r->net0, r->net1) != 0) {
        snprintf(what, sizeof what, "net %.40s vs %.40s", r->net_name0[0] ? r->net_name0 : "(own)",
                 r->net_name1[0] ? r->net_name1 : "(own)");
    } else if (strcmp(r->build0, r->build1) != 0) {
        snprintf(what, sizeof what, "build %.8s vs %.8s", r->build0[0] ? r->build0 : "(own)",
                 r->build1[0] ? r->build1 : "(own)");
    } else if (is_spsa(r)) {
        snprintf(what, sizeof what, "tune");
    } else {
        snprintf(what, sizeof what, "%.40s vs %.40s", r->name0, r->name1);
    }
    if (r->nodes > 0)
        snprintf(tc, sizeof tc, "%" PRId64 " nodes", r->nodes);
    else
        rule_tc_text(r->base_ms, r->inc_ms, tc, sizeof tc);   /* the clock's format (run_settings.def) */
    bool ours = strcmp(r->engine, RUN_OUR_ENGINE) == 0 || !r->engine[0];
    snprintf(out, size, "%.40s%s%s, %s", ours ? "" : r->engine, ours ? "" : ": ", what, tc);
}

/* Whether a run has not ended: it plays, waits for approval or waits for its builds. */
static bool is_open(const StoreRun *r)
{
    return strcmp(r->state, "active") == 0 || strcmp(r->state, "pending") == 0 || strcmp(r->state, "building") == 0;
}

/*
 * Done as a fraction of what was planned: SPSA iterations, otherwise game
 * pairs, over the run's max_pairs.  An ended run shows where it ended (a
 * run stopped at 0 of 100000 pairs shows an empty bar, an SPRT that
 * passed early a part of its cap), its verdict next to the bar.
 */
static double progress_of(const StoreRun *r)
{
    if (r->max_pairs <= 0)
        return 0;
    double p = (double)(is_spsa(r) ? r->iter : r->counts.pairs) / (double)r->max_pairs;
    return fmin(fmax(p, 0), 1);
}

/* Games a minute and the time left at that rate ("-" when unknown). */
static void rate_text(const StoreRun *r, char *rate, size_t rsize, char *eta, size_t esize)
{
    double games = 2.0 * (double)r->counts.pairs, per_s = r->elapsed_s > 1 ? games / r->elapsed_s : 0;
    snprintf(rate, rsize, per_s > 0 ? "%.1f/min" : "-", per_s * 60);
    double left = (double)(r->max_pairs - (is_spsa(r) ? r->iter : r->counts.pairs)) * 2;
    if (per_s <= 0 || strcmp(r->state, "active") != 0 || left <= 0)
        snprintf(eta, esize, "-");
    else if (left / per_s < 5400)
        snprintf(eta, esize, "%.0f min", left / per_s / 60);
    else
        snprintf(eta, esize, "%.1f h", left / per_s / 3600);
}

static void progress_bar(Buf *b, const StoreRun *r)
{
    double p = progress_of(r);
    buf_printf(b, "<div class=\"bar\" title=\"%" PRId64 " of %" PRId64 " %s (%.0f %%)\"><div data-k=\"bar\" "
                  "style=\"width:%.1f%%\"></div></div>",
               is_spsa(r) ? r->iter : r->counts.pairs, r->max_pairs, is_spsa(r) ? "iterations" : "pairs", 100 * p,
               100 * p);
}

/* ---- the runs page ----------------------------------------------------------------- */

static bool matches(const StoreRun *r, const char *owner, const Form *q)
{
    const char *state = form_get(q, "state"), *kind = form_get(q, "kind"), *who = form_get(q, "owner");
    if (state && *state && strcmp(state, "all") != 0) {
        bool finished = strcmp(r->state, "finished") == 0 || strcmp(r->state, "stopped") == 0 ||
                        strcmp(r->state, "paused") == 0 || strcmp(r->state, "failed") == 0;
        if (strcmp(state, "finished") == 0 ? !finished : strcmp(state, r->state) != 0)
            return false;
    }
    if (kind && *kind && run_kind_id(kind) != run_kind_id(r->kind))
        return false;
    return !(who && *who && strcmp(who, owner) != 0);
}

static void select_field(Buf *b, const char *name, const char *const *values, const char *chosen)
{
    buf_printf(b, "<label>%s <select name=\"%s\">", name, name);
    for (const char *const *v = values; *v; v++) {
        buf_printf(b, "<option value=\"%s\"%s>%s</option>", (*v)[0] ? *v : "", chosen && strcmp(chosen, *v) == 0
                   ? " selected" : "", (*v)[0] ? *v : "any");
    }
    buf_puts(b, "</select></label> ");
}

static void runs_table(Buf *b, const char *title, StoreRun *runs, int n, const StoreWebOwner *owners, int nowners,
                       const Form *q, const char *const *states)
{
    int shown = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            if (!shown)
                return;
            buf_printf(b, "<h2>%s</h2>\n<table class=\"runs\"><thead><tr><th>Run</th><th>Kind</th><th>Name</th>"
                          "<th>Owner</th><th>State</th><th>Progress</th><th>Games</th><th>Elo</th>"
                          "<th>LLR [bounds] / SPSA</th><th>Rate</th><th>ETA</th></tr></thead><tbody>\n", title);
        }
        for (int i = 0; i < n; i++) {
            StoreRun *r = &runs[i];
            bool in = false;
            for (const char *const *s = states; *s && !in; s++)
                in = strcmp(*s, r->state) == 0;
            const char *owner = "";
            for (int j = 0; j < nowners; j++)
                if (owners[j].id == r->id)
                    owner = owners[j].owner;
            if (!in || !matches(r, owner, q))
                continue;
            if (pass == 0) {
                shown++;
                continue;
            }
            char elo[64], llr[64], rate[32], eta[32];
            page_elo_text(r, elo, sizeof elo, false);
            rate_text(r, rate, sizeof rate, eta, sizeof eta);
            if (is_spsa(r))
                snprintf(llr, sizeof llr, "iter %" PRId64 " / %" PRId64, r->iter, r->max_pairs);
            else
                llr_text(r, llr, sizeof llr);
            buf_printf(b, "<tr data-run=\"%" PRId64 "\"><td><a href=\"/runs/%" PRId64 "\">%" PRId64 "</a></td><td>",
                       r->id, r->id, r->id);
            buf_html(b, r->kind);
            buf_puts(b, "</td><td class=\"name\"><a href=\"/runs/");
            buf_printf(b, "%" PRId64 "\">", r->id);
            char label[STORE_TEXT_MAX + 64];
            run_title(r, label, sizeof label);
            buf_puts(b, r->name[0] ? "" : "<span class=\"muted\">");
            buf_html(b, label);
            buf_puts(b, r->name[0] ? "" : "</span>");
            buf_puts(b, "</a></td><td>");
            buf_html(b, owner[0] ? owner : "-");
            buf_puts(b, "</td><td data-k=\"state\">");
            buf_html(b, r->state);
            buf_puts(b, "</td><td>");
            progress_bar(b, r);
            if (!is_open(r) && r->verdict[0]) {
                buf_puts(b, "<div class=\"verdict\">");
                buf_html(b, r->verdict);
                buf_puts(b, "</div>");
            }
            buf_printf(b, "</td><td data-k=\"games\">%" PRId64 "</td><td data-k=\"elo\">", 2 * r->counts.pairs);
            buf_html(b, elo);
            buf_puts(b, "</td><td data-k=\"llr\">");
            buf_html(b, llr);
            buf_printf(b, "</td><td data-k=\"rate\">%s</td><td data-k=\"eta\">%s</td></tr>\n", rate, eta);
        }
    }
    buf_puts(b, "</tbody></table>\n");
}

int page_runs(const PageIn *in, Buf *b)
{
    Store *s = in->s;
    const Form *query = in->query;
    const Session *u = in->u;
    StoreRun *runs = NULL;
    StoreWebOwner *owners = NULL;
    int n = store_list_runs(s, RUNS_SHOWN, &runs);
    int nowners = n >= 0 ? store_web_owners(s, RUNS_SHOWN, &owners) : -1;
    if (n < 0 || nowners < 0) {
        free(runs);
        free(owners);
        page_error(b, 503, "the run database cannot be read now");
        return 503;
    }
    head(b, "Runs", u);
    buf_puts(b, "<h1>Runs <span id=\"live\" data-events=\"/events\"></span></h1>\n"
                "<form class=\"filters\" method=\"get\" action=\"/runs\">");
    static const char *const STATES[] = { "", "active", "pending", "building", "finished", NULL };
    const char *KINDS[RUN_KIND_COUNT + 2] = { "" };
    for (int k = 0; k < RUN_KIND_COUNT; k++)
        KINDS[k + 1] = run_kind_get((RunKindId)k)->name;
    select_field(b, "state", STATES, form_get(query, "state"));
    select_field(b, "kind", KINDS, form_get(query, "kind"));
    buf_puts(b, "<label>owner <input name=\"owner\" size=\"12\" value=\"");
    const char *owner = form_get(query, "owner");
    buf_html(b, owner ? owner : "");
    buf_puts(b, "\"></label> <button>Filter</button></form>\n");
    static const char *const ACTIVE[] = { "active", NULL }, *const PENDING[] = { "pending", NULL },
                             *const BUILDING[] = { "building", NULL },
                             *const DONE[] = { "finished", "stopped", "paused", "failed", NULL };
    runs_table(b, "Active", runs, n, owners, nowners, query, ACTIVE);
    runs_table(b, "Pending approval", runs, n, owners, nowners, query, PENDING);
    runs_table(b, "Waiting for their builds", runs, n, owners, nowners, query, BUILDING);
    runs_table(b, "Finished", runs, n, owners, nowners, query, DONE);
    if (n == 0)
        buf_puts(b, "<p>No runs yet: create one with <code>xqf-tune sprt new</code> or the New SPRT page.</p>\n");
    foot(b);
    free(runs);
    free(owners);
    return 200;
}

/* ---- a run's page ------------------------------------------------------------------ */

/* Appends the chart series of a run as JSON members: "points":[[games, llr, elo], ...] (at most CHART_POINTS). */
static int chart_points(Store *s, const StoreRun *r, Buf *b)
{
    StoreProgress *pr = NULL;
    int n = store_run_progress(s, r->id, &pr);
    if (n < 0)
        return -1;
    buf_puts(b, "\"points\":[");
    int step = n > CHART_POINTS ? (n + CHART_POINTS - 1) / CHART_POINTS : 1;
    bool first = true;
    for (int i = 0; i < n; i++) {
        if (i % step != 0 && i != n - 1)
            continue;
        xqf_elo e;
        double llr = NAN;
        if (!is_spsa(r))
            xqf_llr_penta(pr[i].counts.penta, r->elo0, r->elo1, &llr);
        buf_printf(b, "%s[%" PRId64 ",", first ? "" : ",", 2 * pr[i].counts.pairs);
        buf_json_num(b, llr);
        buf_puts(b, ",");
        buf_json_num(b, run_elo_of(&pr[i].counts, &e) ? e.elo : NAN);
        buf_puts(b, "]");
        first = false;
    }
    buf_puts(b, "]");
    free(pr);
    return 0;
}

/*
 * The approval of pending run r: the commits its refs were pinned to when
 * it was made (xqf-tune build --serve pins them before any approval), in
 * the form, so that the approval is of exactly these (xqf_approve refuses
 * any other); none while a ref is not pinned yet.
 */
static void approve_form(Store *s, Buf *b, const StoreRun *r, const Session *u)
{
    StoreBuildRequest *q = NULL;
    int n = store_build_requests(s, r->id, &q);
    bool pinned = n >= 0;
    for (int i = 0; i < n; i++)
        pinned &= q[i].commit[0] != '\0';
    if (!pinned) {
        buf_puts(b, n < 0 ? "<span class=\"error\">Its refs cannot be read now.</span>"
                          : "<span class=\"notice\">Approve once the builder has read the commits of its refs "
                            "(below).</span>");
        free(q);
        return;
    }
    buf_printf(b, "<form class=\"inline\" method=\"post\" action=\"/runs/%" PRId64 "/approve\">", r->id);
    csrf_field(b, u);
    for (int i = 0; i < n; i++) {
        const char *side = strcmp(q[i].side, "test") == 0 ? "test" : "base";
        buf_printf(b, "<input type=\"hidden\" name=\"%s_commit\" value=\"", side);
        buf_html(b, q[i].commit);
        buf_printf(b, "\">%s <code>%.12s</code> ", side, q[i].commit);
    }
    buf_printf(b, "<button>Approve%s</button></form>", n ? (n == 1 ? " this commit" : " these commits") : "");
    free(q);
}

/* The buttons a visitor may use on run r: the run service's rights (run_may). */
static void actions(Store *s, Buf *b, const StoreRun *r, const char *owner, const Session *u)
{
    bool live = is_open(r);
    RunActor actor = { .name = u->name, .role = u->in ? u->role : "" };
    bool approve = run_may(&actor, RUN_VERB_APPROVE, owner), modify = run_may(&actor, RUN_VERB_MODIFY, owner);
    bool plain = false;
    for (int i = 0; i < RUN_VERBS; i++)
        plain |= RUN_VERB_TABLE[i].plain && run_may(&actor, RUN_VERB_TABLE[i].id, owner);
    if (run_may(&actor, RUN_VERB_PURGE, owner) && run_kind_is_sprt(r->kind) && r->counts.pairs > 0) {
        buf_printf(b, "<div class=\"actions\"><form class=\"inline\" method=\"post\" action=\"/runs/%" PRId64
                      "/purge\">", r->id);
        csrf_field(b, u);
        buf_puts(b, "<label>worker <input name=\"worker\" size=\"16\"></label> <button class=\"danger\">Purge its "
                    "results</button></form></div>\n");
    }
    if (!live || !(plain || approve || modify))
        return;
    buf_puts(b, "<div class=\"actions\">");
    for (int i = 0; i < RUN_VERBS; i++) {
        const RunVerbInfo *v = &RUN_VERB_TABLE[i];
        if (!v->plain || !run_may(&actor, v->id, owner))
            continue;
        buf_printf(b, "<form class=\"inline\" method=\"post\" action=\"/runs/%" PRId64 "/%s\">", r->id, v->name);
        csrf_field(b, u);
        buf_printf(b, "<button class=\"danger\">%s</button></form>", v->button);
    }
    if (approve && strcmp(r->state, "pending") == 0)
        approve_form(s, b, r, u);
    if (modify) {
        buf_printf(b, "<form class=\"inline\" method=\"post\" action=\"/runs/%" PRId64 "/modify\">", r->id);
        csrf_field(b, u);
        buf_printf(b, "<label>priority <input name=\"priority\" size=\"5\" value=\"%d\"></label> "
                      "<label>max pairs <input name=\"max_pairs\" size=\"8\" value=\"%" PRId64 "\"></label> "
                      "<label>pairs per task <input name=\"pairs_per_task\" size=\"4\" value=\"%d\"></label> "
                      "<label>throughput %% <input name=\"throughput\" size=\"4\" value=\"%d\"></label> "
                      "<button>Modify</button></form>",
                   r->priority, r->max_pairs, r->pairs_per_task, r->throughput);
    }
    buf_puts(b, "</div>\n");
}

/* The tuned values as a parameter file: the run service's export, as xqf-tune export gives it. */
static void tuned_file(Store *s, const StoreRun *r, Buf *b)
{
    Params p;
    char why[256], *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return;
    bool ok = run_export_params(s, r, &p, why, sizeof why) == RUN_OK &&
              run_export_write(r, &p, f, why, sizeof why) == RUN_OK;
    fclose(f);
    if (!ok) {
        free(text);
        return;
    }
    buf_printf(b, "<h2>Tuned values</h2>\n<p><a href=\"/runs/%" PRId64 "/export\">Download</a> (xqf-tune export "
                  "%" PRId64 ")</p>\n<textarea id=\"tuned\" readonly rows=\"8\" cols=\"60\">", r->id, r->id);
    buf_html(b, text ? text : "");
    buf_puts(b, "</textarea><br><button type=\"button\" class=\"copy\" data-copy=\"tuned\">Copy</button>\n");
    free(text);
}

static void spsa_section(Store *s, const StoreRun *r, const StoreSpsa *st, Buf *b)
{
    buf_puts(b, "<h2>Parameters</h2>\n<table class=\"params\"><thead><tr><th>Parameter</th><th>Start</th>"
                "<th>Current</th><th>Min</th><th>Max</th><th>c_end</th><th>r_end</th></tr></thead><tbody>\n");
    for (int i = 0; i < st->count; i++) {
        const StoreSpsaParam *q = &st->params[i];
        buf_puts(b, "<tr><td>");
        buf_html(b, q->name);
        buf_printf(b, "</td><td>%g</td><td data-theta=\"%d\">%.2f</td><td>%g</td><td>%g</td><td>%g</td><td>%g</td>"
                      "</tr>\n", q->start, i, q->theta, q->min, q->max, q->c_end, q->r_end);
    }
    buf_puts(b, "</tbody></table>\n");
    tuned_file(s, r, b);
    buf_puts(b, "<h2>Theta over games</h2>\n<div class=\"charts\">");
    for (int i = 0; i < st->count; i++)
        buf_printf(b, "<div class=\"chart small\"><canvas id=\"theta-%d\"></canvas></div>", i);
    buf_puts(b, "</div>\n");
}

static void tasks_section(Store *s, int64_t id, Buf *b)
{
    StoreWebTasks *t = NULL;
    int n = store_web_tasks(s, id, TASK_ROWS, &t);
    buf_puts(b, "<h2>Tasks by worker <small class=\"note\">(as of loading the page)</small></h2>\n");
    if (n <= 0) {
        buf_puts(b, n < 0 ? "<p class=\"error\">The tasks cannot be read now.</p>\n" : "<p>No tasks yet.</p>\n");
        free(t);
        return;
    }
    StoreWorkerTrust *trust = NULL;
    int ntrust = store_run_workers(s, id, &trust);    /* the residuals and flags of xqf-tune show */
    buf_puts(b, "<table><thead><tr><th>Worker</th><th>Tasks</th><th>Leased</th><th>Pairs</th><th>W</th><th>D</th>"
                "<th>L</th><th>Crashes</th><th>Time losses</th><th>Other faults</th><th>Leases</th>"
                "<th>Residual</th><th>Flag</th></tr></thead><tbody>\n");
    for (int i = 0; i < n; i++) {
        int64_t crash = 0, time = 0, other = 0;
        for (int k = 0; k < t[i].nreasons && k < GAME_REASONS; k++) {
            if (k == GAME_CRASH)
                crash += t[i].reasons[k];
            else if (k == GAME_TIME_FORFEIT)
                time += t[i].reasons[k];
            else if (game_reason_is_fault((GameReason)k))
                other += t[i].reasons[k];
        }
        buf_puts(b, "<tr><td>");
        buf_html(b, t[i].worker[0] ? t[i].worker : "(queued)");
        buf_printf(b, "</td><td>%" PRId64 "</td><td>%" PRId64 "</td><td>%" PRId64 "</td><td>%" PRId64 "</td><td>%"
                      PRId64 "</td><td>%" PRId64 "</td><td>%" PRId64 "</td><td>%" PRId64 "</td><td>%" PRId64
                      "</td><td>%" PRId64 "</td>",
                   t[i].tasks, t[i].leased, t[i].pairs, t[i].wins, t[i].draws, t[i].losses, crash, time, other,
                   t[i].attempts);
        const StoreWorkerTrust *w = NULL;
        for (int j = 0; j < ntrust && !w; j++)
            if (t[i].worker[0] && strcmp(trust[j].name, t[i].worker) == 0)
                w = &trust[j];
        if (w && !isnan(w->residual))
            buf_printf(b, "<td>%.2f</td>", w->residual);
        else
            buf_puts(b, "<td>-</td>");
        buf_printf(b, "<td>%s</td></tr>\n", w && w->flagged ? "<strong class=\"danger\">flagged</strong>" : "");
    }
    buf_puts(b, "</tbody></table>\n");
    if (ntrust < 0)
        buf_puts(b, "<p class=\"error\">The workers' residuals cannot be read now.</p>\n");
    free(trust);
    free(t);
}

/* A build request's state as shown ("done (build 7)"), live too. */
static void request_state(const StoreRun *r, const StoreBuildRequest *q, char *out, size_t size)
{
    if (strcmp(r->state, "pending") == 0 && strcmp(q->state, "queued") == 0)
        snprintf(out, size, "waiting for approval");
    else if (q->build_id)
        snprintf(out, size, "%s (build %" PRId64 ")", q->state, q->build_id);
    else
        snprintf(out, size, "%s", q->state);
}

/* The builds of a test of git refs (xqf-tune build --serve makes them): state, build, why one failed. */
static void builds_section(Store *s, const StoreRun *r, Buf *b)
{
    StoreBuildRequest *q = NULL;
    int n = store_build_requests(s, r->id, &q);
    if (n == 0)
        return;
    buf_puts(b, "<h2>Builds of its git refs</h2>\n");
    if (n < 0) {
        buf_puts(b, "<p class=\"error\">The build requests cannot be read now.</p>\n");
        return;
    }
    if (strcmp(r->state, "pending") == 0)
        buf_puts(b, "<p class=\"notice\">Its refs are built once an admin approves the test: building a "
                    "branch runs its code.  An approval is of the commits below, read when the test was made: "
                    "the builder builds exactly these, and refuses a ref that names another commit by then.</p>\n");
    if (strcmp(r->state, "building") == 0)
        buf_puts(b, "<p class=\"notice\">The test starts when both sides are built by the builder "
                    "(<code>xqf-tune build --serve</code> on a host with the repository, in a sandbox) and "
                    "signed by the signer (<code>xqf-tune build --sign-serve</code>).</p>\n");
    buf_puts(b, "<table class=\"builds\"><thead><tr><th>Side</th><th>Ref</th><th>Commit</th><th>State</th>"
                "<th>Error</th></tr></thead><tbody>\n");
    for (int i = 0; i < n; i++) {
        char state[64];
        request_state(r, &q[i], state, sizeof state);
        buf_puts(b, "<tr><td>");
        buf_html(b, q[i].side);
        buf_puts(b, "</td><td class=\"mono\">");
        buf_html(b, q[i].ref);
        buf_puts(b, "</td><td class=\"mono\">");
        if (q[i].commit[0]) {
            buf_html(b, q[i].commit);
            buf_puts(b, " ");
            buf_html(b, q[i].subject);
        } else
            buf_puts(b, "(not read yet: the builder reads it)");
        buf_printf(b, "</td><td data-k=\"build-%s\">", strcmp(q[i].side, "test") == 0 ? "test" : "base");
        buf_html(b, state);
        buf_puts(b, "</td><td>");
        if (q[i].error[0]) {
            buf_puts(b, "<pre class=\"build-error\">");
            buf_html(b, q[i].error);
            buf_puts(b, "</pre>");
        }
        buf_puts(b, "</td></tr>\n");
    }
    buf_puts(b, "</tbody></table>\n");
    free(q);
}

/*
 * What a test of two refs changes (064_run_changes.sql, recorded by the
 * builder or sprt new --test-ref): its refs and commits, the commits
 * between them and the diff, every line escaped in a <pre>, coloured by
 * its kind (added, removed, a hunk's or a file's header, context) by a
 * class.
 */
static void changes_section(Store *s, int64_t run, Buf *b)
{
    StoreRunChanges c;
    int found = store_run_changes(s, run, &c);
    if (found == 0)
        return;
    buf_puts(b, "<h2 id=\"changes\">What it changes</h2>\n");
    if (found < 0) {
        buf_puts(b, "<p class=\"error\">Its commits cannot be read now.</p>\n");
        return;
    }
    buf_puts(b, "<p class=\"refs\"><code><strong>");
    buf_html(b, c.test_ref);
    buf_printf(b, "</strong> %.12s</code> against <code><strong>", c.test_commit);
    buf_html(b, c.base_ref);
    buf_printf(b, "</strong> %.12s</code>: %d commit%s", c.base_commit, c.total, c.total == 1 ? "" : "s");
    if (c.total > c.count)
        buf_printf(b, ", the newest %d shown", c.count);
    buf_puts(b, "</p>\n");
    if (c.count > 0) {
        buf_puts(b, "<table class=\"commits\"><thead><tr><th>Commit</th><th>Subject</th><th>Author</th>"
                    "<th>Date</th></tr></thead><tbody>\n");
        for (int i = 0; i < c.count; i++) {
            const StoreCommit *m = &c.commits[i];
            buf_printf(b, "<tr><td class=\"mono\">%.12s</td><td>", m->hash);
            buf_html(b, m->subject);
            buf_puts(b, "</td><td>");
            buf_html(b, m->author);
            buf_puts(b, "</td><td class=\"mono\">");
            /* git's ISO 8601 (2026-12-07T20:26:24+01:00) read as a date, a time to the minute and its zone */
            char at[sizeof m->at];
            if (strlen(m->at) == 25 && m->at[10] == 'T')
                snprintf(at, sizeof at, "%.10s %.5s %s", m->at, m->at + 11, m->at + 19);
            else
                snprintf(at, sizeof at, "%s", m->at);
            buf_html(b, at);
            buf_puts(b, "</td></tr>\n");
        }
        buf_puts(b, "</tbody></table>\n");
    }
    if (c.diff[0] || c.diff_cut) {
        /* its size as a review tool heads it: files, lines added and removed */
        int files = 0, added = 0, removed = 0;
        for (const char *line = c.diff; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != 0)) {
            files += strncmp(line, "diff ", 5) == 0;
            added += line[0] == '+' && strncmp(line, "+++", 3) != 0;
            removed += line[0] == '-' && strncmp(line, "---", 3) != 0;
        }
        buf_printf(b, "<details class=\"diff\" open><summary>The diff: %d file%s, <span class=\"added\">+%d</span> "
                      "<span class=\"removed\">-%d</span> lines", files, files == 1 ? "" : "s", added, removed);
        if (c.diff_cut)
            buf_printf(b, " <span class=\"notice\">(cut: longer than %d KiB; <code>git diff %.12s %.12s</code> "
                          "gives it whole)</span>", STORE_DIFF_MAX >> 10, c.base_commit, c.test_commit);
        buf_puts(b, "</summary><pre class=\"diff\">");
        for (char *line = c.diff; *line;) {
            char *end = line + strcspn(line, "\n");
            bool more = *end != '\0';
            *end = '\0';
            const char *kind = strncmp(line, "diff ", 5) == 0 || strncmp(line, "+++", 3) == 0 ||
                                       strncmp(line, "---", 3) == 0 || strncmp(line, "index ", 6) == 0
                                   ? "file"
                               : line[0] == '+' ? "add"
                               : line[0] == '-' ? "del"
                               : strncmp(line, "@@", 2) == 0 ? "hunk"
                                                             : "ctx";
            /* a block each: no newline between them, which a <pre> would show as an empty line */
            buf_printf(b, "<span class=\"%s\">", kind);
            buf_html(b, line);
            buf_puts(b, "</span>");
            line = more ? end + 1 : end;
        }
        if (c.diff_cut)
            buf_puts(b, "<span class=\"cut\">... (cut here)</span>");
        buf_puts(b, "</pre></details>\n");
    }
    store_run_changes_free(&c);
}

/*
 * The values a run of two sets changes, beside their defaults: each
 * parameter either set names, our engine's default ("-" for a name not
 * ours: another engine's option), and each side's value (the default's
 * when the side leaves it).
 */
static void set_changes_section(const char *test, const char *base, Buf *b)
{
    enum { CHANGES_SHOWN = 200 };
    RunSetChange *c = malloc(CHANGES_SHOWN * sizeof *c);
    int n = c ? run_set_changes(test, base, c, CHANGES_SHOWN) : 0;
    if (n > 0) {
        buf_puts(b, "<h2 id=\"values\">Changed values</h2>\n<table class=\"values\"><thead><tr><th>Parameter</th>"
                    "<th>Default</th><th>Test</th><th>Base</th></tr></thead><tbody>\n");
        for (int i = 0; i < n; i++) {
            const char *side[2] = { c[i].test, c[i].base };
            buf_printf(b, "<tr%s><td class=\"mono\">", c[i].differs ? " class=\"differs\"" : "");
            buf_html(b, c[i].name);
            buf_puts(b, "</td><td>");
            buf_html(b, c[i].def[0] ? c[i].def : "-");
            for (int k = 0; k < 2; k++) {
                buf_puts(b, side[k][0] ? "</td><td><strong>" : "</td><td class=\"muted\">");
                buf_html(b, side[k][0] ? side[k] : "default");
                buf_puts(b, side[k][0] ? "</strong>" : "");
            }
            buf_puts(b, "</td></tr>\n");
        }
        buf_puts(b, "</tbody></table>\n");
    }
    free(c);
}

/* The net compiled into each build a run plays (026_build_nets.sql): the build's provenance, its default evaluation. */
static void build_net_rows(Store *s, int64_t run, Buf *b)
{
    int64_t ids[2];
    if (store_run_builds(s, run, &ids[0], &ids[1]) != 1)
        return;
    for (int i = 0; i < 2; i++) {
        StoreBuild bd;
        if (!ids[i] || store_load_build(s, ids[i], &bd) != 1 || !bd.net_id)
            continue;
        char text[2 * STORE_NAME_MAX + 32];
        snprintf(text, sizeof text, "%s (%s)", bd.net_name, bd.net_sha256);
        row(b, i ? "Base build's compiled-in net" : "Test build's compiled-in net", text, NULL);
    }
}

static void audit_section(Store *s, int64_t id, Buf *b)
{
    StoreWebAudit *a = NULL;
    int n = store_web_audit_list(s, id, AUDIT_ROWS, &a);
    buf_puts(b, "<h2>Audit</h2>\n");
    if (n <= 0) {
        buf_puts(b, n < 0 ? "<p class=\"error\">The audit cannot be read now.</p>\n" : "<p>No actions yet.</p>\n");
        free(a);
        return;
    }
    buf_puts(b, "<table class=\"audit\"><thead><tr><th>When (UTC)</th><th>Who</th><th>Action</th><th>Detail</th>"
                "</tr></thead><tbody>\n");
    for (int i = 0; i < n; i++) {
        buf_puts(b, "<tr><td>");
        buf_html(b, a[i].at);
        buf_puts(b, "</td><td>");
        buf_html(b, a[i].actor);
        buf_puts(b, "</td><td>");
        buf_html(b, a[i].action);
        buf_puts(b, "</td><td>");
        buf_html(b, a[i].detail);
        buf_puts(b, "</td></tr>\n");
    }
    buf_puts(b, "</tbody></table>\n");
    free(a);
}

/* The data element web.js draws the charts from (JSON, '<' escaped). */
static int chart_data(Store *s, const StoreRun *r, const StoreSpsa *st, Buf *b)
{
    double lo = NAN, hi = NAN;
    if (!is_spsa(r))
        xqf_sprt_bounds(r->alpha, r->beta, &lo, &hi);
    buf_printf(b, "<script type=\"application/json\" id=\"xqf-data\">{\"run\":%" PRId64 ",\"kind\":", r->id);
    buf_json(b, r->kind);
    buf_puts(b, ",\"state\":");
    buf_json(b, r->state);
    buf_puts(b, ",\"lower\":");
    buf_json_num(b, lo);
    buf_puts(b, ",\"upper\":");
    buf_json_num(b, hi);
    buf_puts(b, ",");
    if (chart_points(s, r, b) != 0)
        return -1;
    if (st) {
        StoreHistoryRow *h = NULL;
        int n = store_spsa_history(s, r->id, &h);
        if (n < 0)
            return -1;
        buf_puts(b, ",\"theta\":[");
        int iters = 0;
        for (int i = 0; i < n; i++)
            iters += i == 0 || h[i].iteration != h[i - 1].iteration;
        int step = iters > CHART_POINTS ? (iters + CHART_POINTS - 1) / CHART_POINTS : 1;
        for (int p = 0; p < st->count; p++) {
            const StoreSpsaParam *q = &st->params[p];
            buf_printf(b, "%s{\"name\":", p ? "," : "");
            buf_json(b, q->name);
            buf_printf(b, ",\"start\":%.6g,\"min\":%.6g,\"max\":%.6g,\"points\":[[0,%.6g]", q->start, q->min, q->max,
                       q->start);
            int it = -1;
            for (int i = 0; i < n; i++) {
                it += i == 0 || h[i].iteration != h[i - 1].iteration;
                if (h[i].idx == p && (it % step == 0 || it == iters - 1))
                    buf_printf(b, ",[%" PRId64 ",%.6g]", 2 * h[i].iteration, h[i].theta);
            }
            buf_puts(b, "]}");
        }
        buf_puts(b, "]");
        free(h);
    }
    buf_puts(b, "}</script>\n");
    return 0;
}

int page_run(Store *s, int64_t id, const Session *u, const char *notice, Buf *b)
{
    StoreRun r;
    char owner[STORE_NAME_MAX + 1] = "";
    int found = store_load_run(s, id, &r, false);
    if (found == 0) {
        char why[96];
        snprintf(why, sizeof why, "there is no run %" PRId64, id);
        page_error(b, 404, why);
        return 404;
    }
    StoreSpsa *st = NULL;
    char *sets = malloc(2 * (STORE_PARAMS_MAX + 1));
    bool ok = found > 0 && sets && store_run_owner(s, id, owner, sizeof owner) >= 0 &&
              store_run_sets(s, id, sets, sets + STORE_PARAMS_MAX + 1, STORE_PARAMS_MAX + 1) == 1;
    if (ok && is_spsa(&r))
        ok = (st = malloc(sizeof *st)) && store_spsa_load(s, id, st) == 1;
    if (!ok) {
        free(st);
        free(sets);
        page_error(b, 503, "the run database cannot be read now");
        return 503;
    }
    char title[96];
    snprintf(title, sizeof title, "Run %" PRId64, id);
    head(b, title, u);
    buf_printf(b, "<h1>Run %" PRId64 ": ", id);
    char named[STORE_TEXT_MAX + 64];
    run_title(&r, named, sizeof named);
    buf_html(b, named);
    buf_printf(b, " <span id=\"live\" data-events=\"/runs/%" PRId64 "/events\"></span></h1>\n", id);
    if (notice) {
        buf_puts(b, "<p class=\"notice\">");
        buf_html(b, notice);
        buf_puts(b, "</p>\n");
    }
    actions(s, b, &r, owner, u);
    progress_bar(b, &r);

    char text[256], tc[64];
    buf_puts(b, "<div class=\"columns\"><table class=\"kv\"><caption>Results</caption>\n");
    row(b, "State", r.state, "state");
    row(b, "Verdict", r.verdict[0] ? r.verdict : "-", "verdict");
    row_num(b, "Games", 2 * r.counts.pairs, "games");
    snprintf(text, sizeof text, "%" PRId64 " / %" PRId64 " / %" PRId64, r.counts.wins, r.counts.draws, r.counts.losses);
    row(b, "W / D / L", text, "wdl");
    snprintf(text, sizeof text, "%" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64, r.counts.penta[0],
             r.counts.penta[1], r.counts.penta[2], r.counts.penta[3], r.counts.penta[4]);
    row(b, "Pentanomial (LL LD DD+WL WD WW)", text, "penta");
    page_elo_text(&r, text, sizeof text, false);
    row(b, "Elo (95 %)", text, "elo");
    page_elo_text(&r, text, sizeof text, true);
    row(b, "nElo (95 %)", text, "nelo");
    run_los_text(&r.counts, text, sizeof text);
    row(b, "LOS", text, "los");
    if (is_spsa(&r)) {
        snprintf(text, sizeof text, "%" PRId64 " / %" PRId64, r.iter, r.max_pairs);
        row(b, "SPSA iterations", text, "iter");
    } else {
        llr_text(&r, text, sizeof text);
        row(b, "LLR [bounds]", text, "llr");
    }
    char rate[32], eta[32];
    rate_text(&r, rate, sizeof rate, eta, sizeof eta);
    row(b, "Rate (games)", rate, "rate");
    row(b, "ETA", eta, "eta");
    buf_puts(b, "</table>\n<table class=\"kv\"><caption>Settings</caption>\n");
    row(b, "Kind", r.kind, NULL);
    row(b, "Owner", owner[0] ? owner : "-", NULL);
    row(b, "Created (UTC)", r.created, NULL);
    row(b, "Finished (UTC)", r.finished[0] ? r.finished : "-", NULL);
    if (r.nodes > 0)
        snprintf(tc, sizeof tc, "%" PRId64 " nodes", r.nodes);
    else
        rule_tc_text(r.base_ms, r.inc_ms, tc, sizeof tc);   /* the clock's format (run_settings.def) */
    row(b, "Time control", tc, NULL);
    /* the workers are read for an active run of several threads only: most pages read nothing more */
    char threads[256];
    if (run_threads_text(s, &r, threads, sizeof threads) != 0)
        snprintf(threads, sizeof threads, "%d", r.threads);
    row(b, "Threads per engine", threads, NULL);
    if (strcmp(r.engine, RUN_OUR_ENGINE) != 0)
        row(b, "Engine", r.engine, NULL);   /* another engine's builds (035_engine_runs.sql) */
    if (r.base_engine[0] && strcmp(r.base_engine, r.engine) != 0)
        row(b, "Base engine", r.base_engine, NULL);   /* a run of two engines, the base side's (041) */
    char book[512];
    run_book_text(s, &r, book, sizeof book);   /* on a database error: its name only */
    row(b, "Book", book, NULL);
    /* the settings run_settings.def shows as they are (priority, seed), then those said in a sentence */
    RunSettingShown shown[RUN_SETTINGS_SHOWN_MAX];
    for (int i = 0, n = run_settings_shown(&r, shown); i < n; i++)
        row(b, shown[i].label, shown[i].text, NULL);
    row_num(b, "Pairs per task", r.pairs_per_task, NULL);
    row_num(b, is_spsa(&r) ? "Iterations (pairs)" : "Max pairs", r.max_pairs, NULL);
    if (!is_spsa(&r)) {
        snprintf(text, sizeof text, "[%.2f, %.2f] nElo, alpha %.3g, beta %.3g", r.elo0, r.elo1, r.alpha, r.beta);
        row(b, "SPRT", text, NULL);
        row(b, "Test set", sets[0] ? sets : "(defaults)", NULL);
        row(b, "Base set", sets[STORE_PARAMS_MAX + 1] ? sets + STORE_PARAMS_MAX + 1 : "(defaults)", NULL);
    } else {
        snprintf(text, sizeof text, "alpha %.3g, gamma %.3g, A = %.3g N", st->alpha, st->gamma, st->a_ratio);
        row(b, "SPSA schedule", text, NULL);
        row(b, "Fixed set", st->fixed[0] ? st->fixed : "(defaults)", NULL);
    }
    row(b, "Required build", r.build_id[0] ? r.build_id : "(any)", NULL);
    if (r.build0[0] || r.build1[0]) {
        row(b, "Test build (SHA-256)", r.build0[0] ? r.build0 : "(workers' own)", NULL);
        row(b, "Base build (SHA-256)", r.build1[0] ? r.build1 : "(workers' own)", NULL);
        build_net_rows(s, id, b);
    }
    /* each side's net (025_nets.sql): its name and SHA-256, hand-crafted, or the engine's own evaluation */
    for (int i = 0; (r.net0[0] || r.net1[0]) && i < 2; i++) {
        const char *sha = i ? r.net1 : r.net0, *name = i ? r.net_name1 : r.net_name0;
        char net[2 * STORE_NAME_MAX + 32];
        if (strcmp(sha, "none") == 0)
            snprintf(net, sizeof net, "none (hand-crafted evaluation)");
        else if (sha[0])
            snprintf(net, sizeof net, "%s (%s)", name, sha);
        else
            snprintf(net, sizeof net, "(the engine's own evaluation)");
        row(b, i ? "Base net" : "Test net", net, NULL);
    }
    buf_puts(b, "</table></div>\n");
    builds_section(s, &r, b);
    changes_section(s, id, b);
    if (!is_spsa(&r))
        set_changes_section(sets, sets + STORE_PARAMS_MAX + 1, b);

    buf_printf(b, "<p><a href=\"/runs/%" PRId64 "/report\">The run's report page</a> (as <code>xqf-tune report</code> "
                  "writes it); <a href=\"/runs/%" PRId64 "/pgn\">its games as PGN</a> (as <code>xqf-tune pgn</code>; "
                  "one worker's with <code>?worker=NAME</code>, one task's with <code>?task=N</code>).</p>\n", id, id);
    if (!is_spsa(&r))
        buf_puts(b, "<h2>LLR and Elo over games</h2>\n<div class=\"charts\"><div class=\"chart\"><canvas id=\"llr\">"
                    "</canvas></div><div class=\"chart\"><canvas id=\"elo\"></canvas></div></div>\n");
    else
        buf_puts(b, "<h2>Elo over games</h2>\n<div class=\"charts\"><div class=\"chart\"><canvas id=\"elo\">"
                    "</canvas></div></div>\n");
    if (st)
        spsa_section(s, &r, st, b);
    tasks_section(s, id, b);
    audit_section(s, id, b);
    int rc = chart_data(s, &r, st, b);
    foot(b);
    free(st);
    free(sets);
    if (rc != 0) {
        buf_free(b);
        page_error(b, 503, "the run database cannot be read now");
        return 503;
    }
    return 200;
}

/* ---- the live event of a run ---------------------------------------------------------- */

int page_run_event(Store *s, int64_t id, Buf *out)
{
    StoreRun r;
    int found = store_load_run(s, id, &r, false);
    if (found <= 0)
        return found;
    char text[128], rate[32], eta[32];
    buf_printf(out, "event: run\ndata: {\"id\":%" PRId64 ",\"state\":", id);
    buf_json(out, r.state);
    buf_puts(out, ",\"verdict\":");
    buf_json(out, r.verdict[0] ? r.verdict : "-");
    buf_printf(out, ",\"games\":\"%" PRId64 "\"", 2 * r.counts.pairs);
    snprintf(text, sizeof text, "%" PRId64 " / %" PRId64 " / %" PRId64, r.counts.wins, r.counts.draws, r.counts.losses);
    buf_puts(out, ",\"wdl\":");
    buf_json(out, text);
    snprintf(text, sizeof text, "%" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64, r.counts.penta[0],
             r.counts.penta[1], r.counts.penta[2], r.counts.penta[3], r.counts.penta[4]);
    buf_puts(out, ",\"penta\":");
    buf_json(out, text);
    page_elo_text(&r, text, sizeof text, false);
    buf_puts(out, ",\"elo\":");
    buf_json(out, text);
    page_elo_text(&r, text, sizeof text, true);
    buf_puts(out, ",\"nelo\":");
    buf_json(out, text);
    run_los_text(&r.counts, text, sizeof text);
    buf_puts(out, ",\"los\":");
    buf_json(out, text);
    if (is_spsa(&r))
        snprintf(text, sizeof text, "iter %" PRId64 " / %" PRId64, r.iter, r.max_pairs);
    else
        llr_text(&r, text, sizeof text);
    buf_puts(out, is_spsa(&r) ? ",\"iter\":" : ",\"llr\":");
    buf_json(out, text);
    rate_text(&r, rate, sizeof rate, eta, sizeof eta);
    buf_puts(out, ",\"rate\":");
    buf_json(out, rate);
    buf_puts(out, ",\"eta\":");
    buf_json(out, eta);
    buf_printf(out, ",\"bar\":%.4f", progress_of(&r));
    StoreBuildRequest *q = NULL;
    int nq = strcmp(r.state, "building") == 0 ? store_build_requests(s, id, &q) : 0;
    for (int i = 0; i < nq; i++) {
        request_state(&r, &q[i], text, sizeof text);
        buf_printf(out, ",\"build-%s\":", strcmp(q[i].side, "test") == 0 ? "test" : "base");
        buf_json(out, text);
    }
    free(q);
    xqf_elo e;
    buf_printf(out, ",\"point\":[%" PRId64 ",", 2 * r.counts.pairs);
    buf_json_num(out, is_spsa(&r) || isnan(r.llr) ? NAN : r.llr);
    buf_puts(out, ",");
    buf_json_num(out, run_elo_of(&r.counts, &e) ? e.elo : NAN);
    buf_puts(out, "]");
    if (is_spsa(&r)) {
        StoreSpsa *st = malloc(sizeof *st);
        if (st && store_spsa_load(s, id, st) == 1) {
            buf_printf(out, ",\"theta_games\":%" PRId64 ",\"theta\":[", 2 * st->iter);
            for (int i = 0; i < st->count; i++) {
                buf_puts(out, i ? "," : "");
                buf_json_num(out, st->params[i].theta);
            }
            buf_puts(out, "]");
        }
        free(st);
    }
    buf_puts(out, "}\n\n");
    return 1;
}

/*
 * The dashboard's SPRT calculator (web/pages/sprt_calc.c, /sprt-calc)
 * without a server or a database: the page rendered from a query, its
 * numbers parsed and compared with what xqf-tune stats --expected prints
 * for the same design (the expected pairs, games and pass probability at
 * H0, H1 and a true Elo; the LLR's bounds as stats prints them with
 * results), for designs of both signs, unequal error rates and a true Elo
 * halfway between the bounds (the model's zero-drift case).  Bad values
 * get 400 and a message beside their field that names it.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "pages.h"

/* The page for query ("a=1&b=2"): its status, its HTML into b. */
static int render(const char *query, Buf *b)
{
    Form q;
    const char *why = NULL;
    cr_assert_eq(form_decode(&q, query, strlen(query), &why), 0, "%s: %s", query, why ? why : "");
    static const Session nobody = { 0 };
    PageIn in = { .s = NULL, .rt = NULL, .query = &q, .u = &nobody };
    memset(b, 0, sizeof *b);
    int status = page_sprt_calc(&in, b);
    form_free(&q);
    cr_assert(b->data, "%s: no page", query);
    return status;
}

/* The text of the page's element that opens with open (up to the next '<'), its quotes unescaped. */
static void text_after(const char *body, const char *open, char *text, size_t size)
{
    const char *m = strstr(body, open);
    cr_assert(m, "no %s in the page: %s", open, body);
    m += strlen(open);
    size_t k = 0;
    for (; *m && *m != '<'; m++) {
        cr_assert_lt(k + 1, size);
        if (strncmp(m, "&#39;", 5) == 0)
            text[k++] = '\'', m += 4;
        else
            text[k++] = *m;
    }
    text[k] = '\0';
}

static void cell(const char *body, const char *key, char *text, size_t size)
{
    char open[64];
    snprintf(open, sizeof open, "<td data-k=\"%s\">", key);
    text_after(body, open, text, size);
}

/* What xqf-tune prints for args (exit status 0) into out. */
static void cli_output(const char *args, char *out, size_t size)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s/xqf-tune' %s 2>&1", XQF_BIN, args);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    cr_assert_eq(WEXITSTATUS(pclose(p)), 0, "%s: %s", args, out);
}

/* The line of out that starts with label, without the label. */
static void line_of(const char *out, const char *label, char *line, size_t size)
{
    const char *m = strstr(out, label);
    cr_assert(m, "no %s in %s", label, out);
    m += strlen(label);
    size_t k = strcspn(m, "\n");
    cr_assert_lt(k, size);
    memcpy(line, m, k);
    line[k] = '\0';
}

static void cli_line(const char *args, const char *label, char *line, size_t size)
{
    char out[4096];
    cli_output(args, out, sizeof out);
    line_of(out, label, line, size);
}

Test(sprt_page, numbers_are_the_ones_xqf_tune_prints)
{
    static const struct { const char *elo0, *elo1, *alpha, *beta, *elo; } CASES[] = {
        { "0", "5", "0.05", "0.05", "2" },
        { "-3", "1", "0.1", "0.02", "-1.5" },
        { "0", "4", "0.05", "0.05", "2" },           /* halfway: no drift */
        { "0.5", "2.5", "0.01", "0.2", "10" },
        { "-10", "-2", "0.2", "0.3", "-40" },
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        char query[256], args[256], page[64], cli[64];
        snprintf(query, sizeof query, "elo0=%s&elo1=%s&alpha=%s&beta=%s&elo=%s", CASES[i].elo0, CASES[i].elo1,
                 CASES[i].alpha, CASES[i].beta, CASES[i].elo);
        Buf b;
        cr_assert_eq(render(query, &b), 200, "%s: %s", query, b.data);
        /* at H0, at H1, at the true Elo: each row against the command at that Elo */
        static const char *const KEYS[] = { "h0", "h1", "elo" };
        const char *at[] = { CASES[i].elo0, CASES[i].elo1, CASES[i].elo };
        for (int k = 0; k < 3; k++) {
            snprintf(args, sizeof args, "stats --expected --elo0 %s --elo1 %s --alpha %s --beta %s --elo %s",
                     CASES[i].elo0, CASES[i].elo1, CASES[i].alpha, CASES[i].beta, at[k]);
            static const char *const WHAT[][2] = { { "pairs", "Expected pairs: " }, { "games", "Expected games: " },
                                                   { "pass", "Pass probability: " } };
            char out[4096];
            cli_output(args, out, sizeof out);
            for (int w = 0; w < 3; w++) {
                char key[32];
                snprintf(key, sizeof key, "%s-%s", KEYS[k], WHAT[w][0]);
                cell(b.data, key, page, sizeof page);
                line_of(out, WHAT[w][1], cli, sizeof cli);
                cr_assert_str_eq(page, cli, "%s, %s: the page's %s against xqf-tune %s", query, key, page, args);
            }
        }
        /* the LLR's bounds as stats prints them beside an LLR */
        snprintf(args, sizeof args, "stats --wdl 10,10,10 --elo0 %s --elo1 %s --alpha %s --beta %s", CASES[i].elo0,
                 CASES[i].elo1, CASES[i].alpha, CASES[i].beta);
        cli_line(args, "LLR: ", cli, sizeof cli);
        cell(b.data, "bounds", page, sizeof page);
        cr_assert(strstr(cli, page), "%s: bounds %s against %s", query, page, cli);
        buf_free(&b);
    }
}

Test(sprt_page, no_query_is_the_default_test)
{
    Buf b;
    cr_assert_eq(render("", &b), 200);
    char page[64], cli[64];
    cell(b.data, "h1-pairs", page, sizeof page);
    cli_line("stats --expected --elo0 0 --elo1 5 --elo 5", "Expected pairs: ", cli, sizeof cli);
    cr_assert_str_eq(page, cli);
    cr_assert_null(strstr(b.data, "data-k=\"elo-pairs\""), "no true Elo given, no row of it");
    cr_assert(strstr(b.data, "<form method=\"get\" action=\"/sprt-calc\""), "a GET form: results are links");
    buf_free(&b);
}

Test(sprt_page, bad_values_are_named_beside_their_field)
{
    static const struct { const char *query, *field, *says; } CASES[] = {
        { "elo0=abc", "elo0", "elo0: 'abc' is not a number in [-1000, 1000]" },
        { "elo0=nan", "elo0", "elo0: 'nan' is not a number" },
        { "elo1=inf", "elo1", "elo1: 'inf' is not a number" },
        { "elo0=5&elo1=5", "elo1", "elo1 (5) must be above elo0 (5)" },
        { "elo0=3&elo1=1", "elo1", "elo1 (1) must be above elo0 (3)" },
        { "alpha=1.5", "alpha", "alpha: 1.5 is not between 0 and 1 (exclusive)" },
        { "beta=0", "beta", "beta: 0 is not between 0 and 1 (exclusive)" },
        { "alpha=0.6&beta=0.5", "beta", "alpha plus beta must be below 1" },
        { "elo=2000", "elo", "elo: '2000' is not a number in [-1000, 1000]" },
        { "alpha=0.05x", "alpha", "alpha: '0.05x' is not a finite number" },
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        Buf b;
        cr_assert_eq(render(CASES[i].query, &b), 400, "%s", CASES[i].query);
        char open[64], msg[256];
        snprintf(open, sizeof open, "<p class=\"field-error\" id=\"err-%s\">", CASES[i].field);
        text_after(b.data, open, msg, sizeof msg);
        cr_assert(strstr(msg, CASES[i].says), "%s: '%s' says '%s'", CASES[i].query, CASES[i].field, msg);
        cr_assert_null(strstr(b.data, "data-k=\"h0-pairs\""), "%s: numbers for a bad design", CASES[i].query);
        buf_free(&b);
    }
}

/*
 * xqf-web's request parsing and escaping without a server (web/request/request.h,
 * web/request/buf.h): routes, malformed paths and run ids, form decoding and its
 * limits, HTML and JSON escaping.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "html.h"
#include "request.h"

Test(web_request, routes)
{
    cr_assert_eq(route_parse("/").kind, ROUTE_HOME);
    cr_assert_eq(route_parse("/runs").kind, ROUTE_RUNS);
    cr_assert_eq(route_parse("/machines").kind, ROUTE_MACHINES);
    cr_assert_eq(route_parse("/events").kind, ROUTE_RUNS_EVENTS);
    Route r = route_parse("/runs/42");
    cr_assert_eq(r.kind, ROUTE_RUN);
    cr_assert_eq(r.run, 42);
    r = route_parse("/runs/7/events");
    cr_assert_eq(r.kind, ROUTE_RUN_EVENTS);
    cr_assert_eq(r.run, 7);
    cr_assert_eq(route_parse("/runs/7/report").kind, ROUTE_RUN_REPORT);
    r = route_parse("/runs/9/stop");
    cr_assert_eq(r.kind, ROUTE_RUN_ACTION);
    cr_assert_str_eq(r.action, "stop");
    cr_assert_eq(route_parse("/runs/9/explode").kind, ROUTE_UNKNOWN);
    cr_assert_eq(route_parse("/runs/9/").kind, ROUTE_UNKNOWN);
    cr_assert_eq(route_parse("/runs/9/events/x").kind, ROUTE_UNKNOWN);
    cr_assert_eq(route_parse("/runsx").kind, ROUTE_UNKNOWN);
    r = route_parse("/runs/9/purge");
    cr_assert_eq(r.kind, ROUTE_RUN_ACTION);
    cr_assert_str_eq(r.action, "purge");
    /* an engine's name runs to the end of the path: a slash in it is a malformed name, not another page */
    r = route_parse("/engines/pikafish-2.0");
    cr_assert_eq(r.kind, ROUTE_ENGINE);
    cr_assert_str_eq(r.engine, "pikafish-2.0");
    cr_assert_eq(route_parse("/engines").kind, ROUTE_ENGINES);
    cr_assert_eq(route_parse("/engines/").kind, ROUTE_BAD);
    cr_assert_eq(route_parse("/engines/a/b").kind, ROUTE_BAD);
    /* a net's name is nets.name's printable letters but '/', the path's: one segment */
    cr_assert_eq(route_parse("/nets").kind, ROUTE_NETS);
    r = route_parse("/nets/xqf-0123456789ab.nnue/download");
    cr_assert_eq(r.kind, ROUTE_NET_DOWNLOAD);
    cr_assert_str_eq(r.net, "xqf-0123456789ab.nnue");
    r = route_parse("/nets/a+b%=!/approve");
    cr_assert_eq(r.kind, ROUTE_NET_APPROVE);
    cr_assert_str_eq(r.net, "a+b%=!");
    cr_assert_eq(route_parse("/nets//download").kind, ROUTE_BAD);
    cr_assert_eq(route_parse("/nets/a/b/download").kind, ROUTE_UNKNOWN);
    cr_assert_eq(route_parse("/nets/a/delete").kind, ROUTE_UNKNOWN);
    cr_assert_eq(route_parse("/nets/0123456789012345678901234567890123456789012345678901234567890123456789/download").kind,
                 ROUTE_BAD, "over 64 bytes");
    cr_assert_eq(route_parse("/static/style.css").kind, ROUTE_STYLE);
    cr_assert_eq(route_parse("/nope").kind, ROUTE_UNKNOWN);
    /* a chain's stop: its id, a malformed one a bad path; nothing else done to a chain there */
    r = route_parse("/chains/12/stop");
    cr_assert_eq(r.kind, ROUTE_CHAIN_STOP);
    cr_assert_eq(r.chain, 12);
    cr_assert_eq(route_parse("/chains/x/stop").kind, ROUTE_BAD);
    cr_assert_eq(route_parse("/chains/0/stop").kind, ROUTE_BAD);
    cr_assert_eq(route_parse("/chains/12/approve").kind, ROUTE_UNKNOWN);
    cr_assert_eq(route_parse("/chains/12").kind, ROUTE_UNKNOWN);
    /* a creation page per run kind of run_kinds.def, by its name */
    for (int k = 0; k < RUN_KIND_COUNT; k++) {
        char path[32];
        snprintf(path, sizeof path, "/new/%s", run_kind_get((RunKindId)k)->name);
        r = route_parse(path);
        cr_assert_eq(r.kind, ROUTE_NEW_RUN, "%s", path);
        cr_assert_eq(r.run_kind, (RunKindId)k, "%s", path);
    }
    cr_assert_eq(route_parse("/new/chess").kind, ROUTE_UNKNOWN);
    cr_assert_eq(route_parse("/new/").kind, ROUTE_UNKNOWN);
    cr_assert_eq(route_parse("/new/sprt/x").kind, ROUTE_UNKNOWN);
    const char *bad[] = { "/runs/abc", "/runs/0", "/runs/-3", "/runs/", "/runs/1234567890123456789",
                          "/runs/<script>", "relative", "", "/a b", "/\x7f", "/\xc3\xa9" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = route_parse(bad[i]);
        cr_assert_eq(r.kind, ROUTE_BAD, "'%s' is malformed", bad[i]);
        cr_assert(r.why && *r.why);
    }
    cr_assert_eq(route_parse(NULL).kind, ROUTE_BAD);
}

Test(web_request, forms)
{
    Form f;
    const char *why = NULL;
    const char *body = "a=1&name=x+y%3Cz%3E&&empty=&flag&a=2";
    cr_assert_eq(form_decode(&f, body, strlen(body), &why), 0);
    cr_assert_eq(f.count, 5);
    cr_assert_str_eq(form_get(&f, "a"), "1", "the first value counts");
    cr_assert_str_eq(form_get(&f, "name"), "x y<z>");
    cr_assert_str_eq(form_get(&f, "empty"), "");
    cr_assert_str_eq(form_get(&f, "flag"), "");
    cr_assert_null(form_get(&f, "missing"));
    form_free(&f);
    const char *bad[] = { "a=%zz", "a=%4", "a=%00", "a%=1", "b=1&c=%" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why = NULL;
        cr_assert_eq(form_decode(&f, bad[i], strlen(bad[i]), &why), -1, "'%s'", bad[i]);
        cr_assert(why);
        for (int k = 0; k < f.count; k++)
            cr_assert(strlen(f.value[k]) <= FORM_VALUE_MAX);
        form_free(&f);
    }
    /* limits: too many fields, a name or value too long */
    static char big[FORM_VALUE_MAX * 4];
    size_t n = 0;
    for (int i = 0; i <= FORM_FIELDS_MAX; i++)
        n += (size_t)sprintf(big + n, "f%d=1&", i);
    cr_assert_eq(form_decode(&f, big, n, &why), -1);
    cr_assert_str_eq(why, "too many fields");
    form_free(&f);
    memset(big, 'n', FORM_NAME_MAX + 1);
    strcpy(big + FORM_NAME_MAX + 1, "=1");
    cr_assert_eq(form_decode(&f, big, strlen(big), &why), -1);
    form_free(&f);
    strcpy(big, "v=");
    memset(big + 2, 'v', FORM_VALUE_MAX + 1);
    big[FORM_VALUE_MAX + 3] = '\0';
    cr_assert_eq(form_decode(&f, big, strlen(big), &why), -1);
    form_free(&f);
}

static void file_sink(void *to, const char *s, size_t n) { fwrite(s, 1, n, to); }

/* The page's escaping is the HTML report's: the one escaper, into a Buf and into a FILE. */
Test(web_request, one_escaper_for_the_pages_and_the_report)
{
    static const char *const TEXTS[] = { "", "plain", "<b>&\"'</b>", "\001x\037\t\r\n\x7f\xc3\xa9" };
    for (size_t i = 0; i < sizeof TEXTS / sizeof TEXTS[0]; i++) {
        Buf b = { 0 };
        buf_html(&b, TEXTS[i]);
        char *data = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&data, &len);
        cr_assert(f);
        xqf_html_escape(TEXTS[i], file_sink, f);
        cr_assert_eq(fclose(f), 0);
        cr_assert_str_eq(b.data ? b.data : "", data, "text %zu", i);
        free(data);
        buf_free(&b);
    }
}

Test(web_request, escaping)
{
    Buf b = { 0 };
    buf_html(&b, "<script>alert('x') & \"y\"</script>");
    cr_assert_str_eq(b.data, "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;");
    buf_free(&b);
    /* the report's rule: controls HTML forbids become U+FFFD, tab and newline stay */
    buf_html(&b, "a\tb\nc\033]0;t\007d\x7f");
    cr_assert_str_eq(b.data, "a\tb\nc&#xFFFD;]0;t&#xFFFD;d&#xFFFD;");
    buf_free(&b);
    buf_json(&b, "a\"b\\c\n</script>");
    cr_assert_str_eq(b.data, "\"a\\\"b\\\\c\\u000a\\u003c/script\\u003e\"");
    buf_free(&b);
    buf_json_num(&b, 1.5);
    buf_puts(&b, ",");
    buf_json_num(&b, 0.0 / 0.0);
    cr_assert_str_eq(b.data, "1.5,null");
    size_t len;
    char *text = buf_take(&b, &len);
    cr_assert_str_eq(text, "1.5,null");
    cr_assert_eq(len, 8);
    free(text);
}

/*
 * X-Forwarded-For is believed only from the trusted proxy, and only its
 * last hop (the address the proxy appended; what comes before it is the
 * client's say); anything malformed leaves the peer's address.
 */
Test(web_request, the_client_behind_a_trusted_proxy)
{
    char c[64];
    request_client("10.0.0.5", NULL, "203.0.113.9", c, sizeof c);
    cr_assert_str_eq(c, "10.0.0.5", "no trusted proxy: the header is ignored");
    request_client("10.0.0.5", "10.0.0.1", "203.0.113.9", c, sizeof c);
    cr_assert_str_eq(c, "10.0.0.5", "a peer that is not the proxy: ignored");
    request_client("10.0.0.1", "10.0.0.1", "203.0.113.9", c, sizeof c);
    cr_assert_str_eq(c, "203.0.113.9");
    request_client("10.0.0.1", "10.0.0.1", "6.6.6.6, 203.0.113.9", c, sizeof c);
    cr_assert_str_eq(c, "203.0.113.9", "the last hop, not what the client wrote first");
    request_client("10.0.0.1", "10.0.0.1", "203.0.113.9 ,  2001:DB8:0:0::7 ", c, sizeof c);
    cr_assert_str_eq(c, "2001:db8::7", "canonical");
    request_client("::1", "0:0::1", "198.51.100.1", c, sizeof c);
    cr_assert_str_eq(c, "198.51.100.1", "the proxy's address compared canonically");
    static const char *const BAD[] = { "", "unknown", "203.0.113.9, ", "203.0.113.9:80", "1.2.3", "[::1]",
                                       "203.0.113.256" };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        request_client("10.0.0.1", "10.0.0.1", BAD[i], c, sizeof c);
        cr_assert_str_eq(c, "10.0.0.1", "'%s' is no address: the peer's", BAD[i]);
    }
    request_client("10.0.0.1", "10.0.0.1", NULL, c, sizeof c);
    cr_assert_str_eq(c, "10.0.0.1", "no header");
}

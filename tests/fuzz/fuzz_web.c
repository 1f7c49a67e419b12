/*
 * libFuzzer target: what xqf-web reads from a request before anything
 * else sees it: the route of a path (route_parse) and a form body
 * (form_decode), and the escaping every decoded value goes through
 * (buf_html, buf_json).  Invariants: a route is well formed (a run id > 0
 * where one is named, a reason when malformed); a decoded form holds at
 * most FORM_FIELDS_MAX fields with names and values within their limits
 * and no NUL inside; escaped text holds no < > " ' and JSON text no raw
 * control character or <.  The same bytes as a trusted proxy's
 * X-Forwarded-For (request_client) give an address in canonical form.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_escaped(const char *value)
{
    Buf b = { 0 };
    buf_html(&b, value);
    if (b.data && strpbrk(b.data, "<>\"'"))
        abort();
    buf_free(&b);
    buf_json(&b, value);
    for (size_t i = 1; b.data && i + 1 < b.len; i++)
        if ((unsigned char)b.data[i] < 0x20 || b.data[i] == '<')
            abort();
    buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *path = malloc(size + 1);
    if (!path)
        return 0;
    memcpy(path, data, size);
    path[size] = '\0';
    Route r = route_parse(path);
    if (r.kind == ROUTE_BAD && !r.why)
        abort();
    bool by_id = r.kind == ROUTE_RUN || r.kind == ROUTE_RUN_EVENTS || r.kind == ROUTE_RUN_REPORT ||
                 r.kind == ROUTE_RUN_PGN || r.kind == ROUTE_RUN_ACTION;
    if ((by_id && r.run <= 0) || (r.kind == ROUTE_RUN_ACTION && !r.action[0]) ||
        (r.kind == ROUTE_ENGINE && !r.engine[0]))
        abort();
    free(path);

    Form f;
    const char *why = NULL;
    int rc = form_decode(&f, (const char *)data, size, &why);
    if (rc != 0 && !why)
        abort();
    if (f.count > FORM_FIELDS_MAX)
        abort();
    for (int i = 0; i < f.count; i++) {
        if (strlen(f.name[i]) > FORM_NAME_MAX || strlen(f.value[i]) > FORM_VALUE_MAX)
            abort();
        if (rc == 0)
            check_escaped(f.value[i]);
    }
    if (rc == 0 && f.count && form_get(&f, f.name[0]) != f.value[0])
        abort();
    form_free(&f);

    /* the same bytes as a trusted proxy's X-Forwarded-For: the client is the peer or an address, never more */
    char *forwarded = malloc(size + 1), client[64];
    if (!forwarded)
        return 0;
    memcpy(forwarded, data, size);
    forwarded[size] = '\0';
    request_client("10.0.0.1", "10.0.0.1", forwarded, client, sizeof client);
    if (strlen(client) > 39 || strspn(client, "0123456789abcdef.:") != strlen(client))
        abort();
    free(forwarded);
    return 0;
}

/*
 * web_nets.c - net files on the dashboard (web_nets.h): the format's size,
 * our engine's default net, and uploads checked by the engine's reader.
 */
#include "web_nets.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "nnue.h"
#include "sha256.h"
#include "store_nets.h"

int64_t web_net_max(void) { return (int64_t)NNUE_HEADER_BYTES + NNUE_DESCRIPTION_MAX + NNUE_BODY_BYTES; }

void web_net_facts(NetFacts *out)
{
    memset(out, 0, sizeof *out);
    out->upload_max = web_net_max();
    size_t size = 0;
    const uint8_t *data = nnue_default_data(&size);
    if (data && size && sha256_memory(data, size, out->default_sha256) == 0)
        out->default_size = (int64_t)size;
    else
        out->default_sha256[0] = '\0';
}

/* A name the dashboard gives a net: 1-64 of letters, digits, '.', '_', '+', '-' (a path's segment as it is). */
static bool name_ok(const char *name)
{
    size_t len = strlen(name);
    return len >= 1 && len <= NET_NAME_MAX && strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                           "0123456789._+-") == len;
}

/* The refusal's status with its reason. */
static int refuse(int status, char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int refuse(int status, char *why, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, size, fmt, ap);
    va_end(ap);
    return status;
}

int web_net_upload(Store *s, const WebNetUpload *up, int64_t *id, char *why, size_t size)
{
    if (!up->bytes || up->len == 0)
        return refuse(400, why, size, "choose a net file to upload");
    if ((int64_t)up->len > web_net_max())
        return refuse(413, why, size, "the file is %zu bytes; a net file is at most %" PRId64 " (its header, a "
                      "description of at most %d bytes and the weights)", up->len, web_net_max(),
                      NNUE_DESCRIPTION_MAX);
    if (up->name && *up->name && !name_ok(up->name))
        return refuse(400, why, size, "the name: 1 to %d letters, digits, '.', '_', '+' or '-'", NET_NAME_MAX);
    const char *prov = up->provenance ? up->provenance : "";
    if (strlen(prov) > STORE_TEXT_MAX || !xqf_utf8_valid(prov, strlen(prov)))
        return refuse(400, why, size, "the provenance: at most %d bytes of UTF-8 text", STORE_TEXT_MAX);
    StoreNet *n = calloc(2, sizeof *n);
    if (!n)
        return refuse(503, why, size, "out of memory");
    StoreNet *other = &n[1];
    /* the engine's own reader: the bytes stored are bytes every worker's engine takes */
    char err[256];
    NnueNet *net = nnue_load_memory(up->bytes, up->len, err, sizeof err);
    int status = 0;
    if (!net)
        status = refuse(400, why, size, "not a net the engine takes: %s", err);
    else {
        /* a description is the file's writer's free text: shown, so made text PostgreSQL takes */
        xqf_text_sanitize(n->description, sizeof n->description, net->description);
        nnue_destroy(&net);
    }
    int found = 0;
    if (status == 0 && sha256_memory(up->bytes, up->len, n->sha256) != 0)
        status = refuse(503, why, size, "the file cannot be hashed");
    if (status == 0 && (found = store_load_net(s, n->sha256, other)) > 0)
        status = refuse(409, why, size, "the same file is net %s already (SHA-256 %.12s)", other->name, n->sha256);
    if (status == 0 && found == 0) {
        if (up->name && *up->name)
            snprintf(n->name, sizeof n->name, "%s", up->name);
        else
            snprintf(n->name, sizeof n->name, "xqf-%.12s.nnue", n->sha256);
        found = store_load_net(s, n->name, other);
        if (found > 0 && strcmp(other->name, n->name) == 0)
            status = refuse(409, why, size, "the name %s is taken by another net (SHA-256 %.12s)", n->name,
                            other->sha256);
    }
    if (status == 0 && found < 0)
        status = refuse(503, why, size, "the nets cannot be read now");
    if (status == 0) {
        xqf_text_sanitize(n->provenance, sizeof n->provenance, prov);
        snprintf(n->added_by, sizeof n->added_by, "%s", up->actor);
        int rc = store_net_upload(s, n, up->bytes, up->len, id);
        if (rc == 0)
            status = refuse(409, why, size, "a net of the same SHA-256 or name was registered meanwhile");
        else if (rc < 0)
            status = refuse(503, why, size, "the net could not be written (the database failed)");
        else
            snprintf(why, size, "Uploaded %s: it waits for an admin's approval.", n->name);
    }
    free(n);
    return status;
}

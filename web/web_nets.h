/*
 * web_nets.h - what the dashboard does with net files (docs/nnue.md): the
 * net format's size, our engine's compiled-in default net, and a tester's
 * upload checked by the engine's own reader (nnue_load_memory: the
 * function the engine, the worker and xqf-tune net add load a net with)
 * before it is stored, waiting for an admin (063_net_uploads.sql).  The
 * one file of web/ that reads the engine's net header (nnue.h), never the
 * search.
 */
#ifndef XQF_WEB_NETS_H
#define XQF_WEB_NETS_H

#include <stddef.h>
#include <stdint.h>

#include "pages.h"
#include "store.h"

/* The largest file the net format allows: its header, the longest description and the weights. */
int64_t web_net_max(void);

/* What the nets page says of our engine's default net and the format's size (pages.h). Can't fail. */
void web_net_facts(NetFacts *out);

/* An upload, as the form brings it. */
typedef struct {
    const char *name;                /* NULL or "": xqf-<12 hex digits of its SHA-256>.nnue, as xqf-tune net add */
    const char *provenance;          /* NULL: none */
    const uint8_t *bytes;            /* NULL: no file was sent */
    size_t len;
    const char *actor;               /* the account uploading */
} WebNetUpload;

/*
 * Checks an upload and stores it, unsigned and waiting for an admin,
 * audited (store_net_upload).  Returns 0 with *id, or the HTTP status of
 * the refusal with its reason in why: 400 (no file, a bad name or
 * provenance, a file the engine's reader refuses: truncated, another
 * format), 409 (the same SHA-256 or the name registered already), 413
 * (over web_net_max), 503 (the database failed).  Nothing is stored on a
 * refusal.
 */
int web_net_upload(Store *s, const WebNetUpload *up, int64_t *id, char *why, size_t size);

#endif

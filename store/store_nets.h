/*
 * store_nets.h - the nets the store keeps (025_nets.sql): NNUE weights
 * registered with their bytes (xqf-tune net add), signed by an operator,
 * served to workers in chunks (store_net_chunk) as builds are; or
 * uploaded from the dashboard (063_net_uploads.sql), unsigned and waiting
 * for an admin's approval, before which no worker fetches them and no run
 * names them.
 */
#ifndef XQF_STORE_NETS_H
#define XQF_STORE_NETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

enum { STORE_NET_DESCRIPTION_MAX = 4096 };  /* = NNUE_DESCRIPTION_MAX */

/* A registered net (xqf-tune net add): NNUE weights, docs/nnue.md. */
typedef struct {
    int64_t id;
    char sha256[STORE_NAME_MAX + 1];  /* of the file, 64 hex digits */
    char name[STORE_NAME_MAX + 1];    /* what is signed, e.g. "xqf-0123456789ab.nnue" */
    char description[STORE_NET_DESCRIPTION_MAX + 1]; /* the file's own description */
    char provenance[STORE_TEXT_MAX + 1]; /* the operator's words: data, training settings */
    char signature[STORE_SIG_HEX + 1];/* operator's Ed25519 signature (keys.h, SIGN_NET), hex; "" unsigned */
    char added_by[STORE_NAME_MAX + 1];
    char created[32];                 /* "YYYY-MM-DD HH:MM:SS" UTC (when read) */
    int64_t size;                     /* bytes (when read) */
    bool approved;                    /* false: uploaded, waiting for an admin (063; when read) */
    char approved_by[STORE_NAME_MAX + 1]; /* the admin who approved an upload; "" for the operator's */
    int64_t runs;                     /* runs that name it on a side (when listed) */
    int64_t chain;                    /* the chain whose net stage trained it, 0 none (when listed) */
} StoreNet;

/* A run that names a net on a side (store_net_runs). */
typedef struct {
    int64_t id;
    char state[16];
    char verdict[32];                 /* "" while it has none */
} StoreNetRun;

/*
 * Records a net with its bytes (net's id, created and size ignored).
 * Returns 0 with *id, or -1 (a SHA-256 or a name already registered
 * among them: check with store_net_of_sha first).
 */
int store_add_net(Store *s, const StoreNet *net, const void *bytes, size_t len, int64_t *id);
/* The net whose file has SHA-256 sha256: 1 with *id, 0 none, -1. */
int store_net_of_sha(Store *s, const char *sha256, int64_t *id);
/* The net key names (its id in decimal, its SHA-256, or its name, in that order): 1 with *out, 0 none, -1. */
int store_load_net(Store *s, const char *key, StoreNet *out);
/* Every net, oldest first (with runs and chain). Returns the count or -1; *out malloc'd (NULL when none). */
int store_list_nets(Store *s, StoreNet **out);
/* The newest runs (at most max) that name net id on a side, newest first. Returns the count or -1. */
int store_net_runs(Store *s, int64_t id, StoreNetRun *out, int max);

/*
 * A net uploaded from the dashboard (xqf_net_upload: the caller's bytes,
 * already taken by the engine's reader; net's sha256, name, description,
 * provenance and added_by), waiting for approval, audited.  Returns 1 with
 * *id, 0 when its SHA-256 or name is registered already (nothing
 * written), -1.
 */
int store_net_upload(Store *s, const StoreNet *net, const void *bytes, size_t len, int64_t *id);
/* An admin approves the net named name (xqf_net_approve, audited): 1 approved, 0 approved already, -2 none, -1. */
int store_net_approve(Store *s, const char *name, const char *actor);
/* The whole file of the net named name, approved or not: 1 with *bytes (malloc'd) and *len, 0 none, -1. */
int store_net_bytes(Store *s, const char *name, uint8_t **bytes, size_t *len);

/*
 * The same for a stored net (nets.sha256; name and signature are the
 * net's), as the coordinator serves it to workers: an approved net only
 * (063), else 0 as for none.
 */
int store_net_chunk(Store *s, const char *sha256, int64_t offset, size_t max, void *out, size_t *len,
                    int64_t *total, char name[STORE_NAME_MAX + 1], char signature[STORE_SIG_HEX + 1]);

#endif

/*
 * store_nets.h - the nets the store keeps (025_nets.sql): NNUE weights
 * registered with their bytes (xqf-tune net add), signed by an operator,
 * served to workers in chunks (store_net_chunk) as builds are.
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
} StoreNet;

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
/* Every net, oldest first. Returns the count or -1; *out malloc'd (NULL when none). */
int store_list_nets(Store *s, StoreNet **out);

/* The same for a stored net (nets.sha256; name and signature are the net's). */
int store_net_chunk(Store *s, const char *sha256, int64_t offset, size_t max, void *out, size_t *len,
                    int64_t *total, char name[STORE_NAME_MAX + 1], char signature[STORE_SIG_HEX + 1]);

#endif

/*
 * zap.h - the coordinator's ZAP handler (ZeroMQ RFC 27): a thread of its
 * own with a REP socket on inproc://zeromq.zap.01 in the transport's
 * context, which libzmq asks about every CURVE client during its
 * handshake.  A client is accepted only when its public key is in the
 * allow-list (keys.h); its connection then carries the list's NAME as
 * "User-Id" and its key as ZAP_KEY_PROPERTY on every message it sends
 * (zmq_msg_gets).  Refusals are logged (warn) with the key and the peer's
 * address, at most once a minute per key (a refused worker reconnects
 * every few seconds).  An allowed key makes at most per_minute
 * handshakes a minute (as many at once; a token bucket, ratelimit.h):
 * more are refused until it has waited.
 *
 * The allow-list file is watched: re-read when it changed (inode, size or
 * mtime: xqf-keys replaces it with a rename) at each ZAP request, so that
 * a revoked key cannot connect anew, and at most once a second from
 * zap_allows, which the transport asks about every message, so that a
 * connection whose key was revoked since is no longer heard.  A list that
 * no longer reads or parses makes the handler fail closed: no new
 * connection is accepted and no message of an open one is heard until the
 * file reads again (it is then re-read every time it is looked at), and
 * the error is logged at once and again every minute while it lasts.  The
 * previous list is never kept: the edit that broke it may have been a
 * revocation.
 */
#ifndef XQF_ZAP_H
#define XQF_ZAP_H

#include <stdbool.h>
#include <stdint.h>

#include "keys.h"
#include "notes.h"

/* The message property holding the connection's public key (Z85), set from the ZAP reply's metadata. */
#define ZAP_KEY_PROPERTY "X-Public-Key"

typedef struct Zap Zap;

/*
 * Reads the allow-list (a failure is fatal here: logged, NULL), binds the
 * handler in ctx and starts its thread; per_minute <= 0: handshakes are
 * not limited.  Call before the CURVE socket
 * binds: libzmq lets CURVE clients in unchecked while no handler is bound.
 */
Zap *zap_new(void *ctx, const char *allow_path, double per_minute);
/* Stops the thread and closes its socket (before the context is terminated). */
void zap_destroy(Zap **z);
/* Whether name is still allowed with key (Z85); re-reads a changed list at most once a second. Thread-safe. */
bool zap_allows(Zap *z, const char *name, const char *key);

#endif

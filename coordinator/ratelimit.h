/*
 * ratelimit.h - token buckets, one per key: how many messages a key (a
 * CURVE allow-list name, or a plaintext connection) may send per second.
 *
 * A bucket holds at most `burst` tokens and gains `rate` per second; a
 * message takes one, and a message that finds none is over the limit.  A
 * bucket that has filled up again is the same as no bucket, so the table
 * forgets it when it needs the room: its size follows the keys sending
 * now, and it never holds more than RATELIMIT_KEYS (a new key beyond that
 * is over the limit until one is forgotten).  Keys are 64-bit hashes of
 * the name or routing id: two keys that collide share a bucket.
 */
#ifndef XQF_RATELIMIT_H
#define XQF_RATELIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { RATELIMIT_KEYS = 1 << 16 };

typedef struct RateLimit RateLimit;

/* Buckets of `rate` messages per second (burst: as many at once); rate <= 0 turns the limit off. NULL: no memory. */
RateLimit *ratelimit_new(double rate, double burst);
void ratelimit_destroy(RateLimit **r);
/* The key of bytes (a name, a routing id). */
uint64_t ratelimit_key(const void *bytes, size_t len);
/* Takes a token of key at now_ms: true when there was one (the message may pass). */
bool ratelimit_take(RateLimit *r, uint64_t key, int64_t now_ms);
/* Messages refused so far. */
int64_t ratelimit_refused(const RateLimit *r);

#endif

/*
 * malformed.h - every way to get one message wrong, for every message type
 * of messages.def: each field missing, twice, of the wrong type, or past
 * its limit; an unknown key; a bad signature, version or type name; one
 * byte short; one byte too many.  The frames are written by hand here (the
 * codec would refuse to send them), so the codec tests decode them and the
 * cluster tests send them to a live coordinator.
 */
#ifndef XQF_MALFORMED_H
#define XQF_MALFORMED_H

#include <stddef.h>
#include <stdint.h>

/* Called once per malformed frame: its type's name, what is wrong, the bytes. */
typedef void (*malformed_fn)(const char *type, const char *what, const uint8_t *data, size_t len, void *arg);

/* Produces every variant of every type; returns how many. */
int malformed_each(malformed_fn fn, void *arg);
/* The valid frame each variant departs from, one per type (what = "valid"); returns how many. */
int malformed_valid_each(malformed_fn fn, void *arg);

#endif

/*
 * sha256.h - the SHA-256 of a file, through libsodium: the one place the
 * project hashes engine builds (xqf-tune build records them, the worker
 * checks what it fetched, xqf-web the nets uploaded to it).
 */
#ifndef XQF_SHA256_H
#define XQF_SHA256_H

#include <stddef.h>

enum { SHA256_HEX_LEN = 64 };

/* The SHA-256 of an open file, read from its start, as 64 lower-case hex digits. 0 or -1 (errno). */
int sha256_fd(int fd, char hex[SHA256_HEX_LEN + 1]);
/* The SHA-256 of the file at path, as sha256_fd. 0 or -1 (errno). */
int sha256_file(const char *path, char hex[SHA256_HEX_LEN + 1]);

/* The SHA-256 of len bytes in memory (a net uploaded to xqf-web), as sha256_fd. 0 or -1. */
int sha256_memory(const void *data, size_t len, char hex[SHA256_HEX_LEN + 1]);

#endif

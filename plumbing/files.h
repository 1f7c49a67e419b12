/*
 * files.h - small file-system helpers the programs share.
 */
#ifndef XQF_FILES_H
#define XQF_FILES_H

#include <stddef.h>

/* mkdir -p (mode 0755): creates path and its missing parents. 0, or -1 with errno set. */
int files_make_dirs(const char *path);

/*
 * The whole file at path in a malloc'd buffer with a NUL after its bytes
 * (*len, when len is not NULL, their count without it), read in chunks
 * that double (no stat: pipes and /proc read too), opened close-on-exec.
 * NULL with errno set: the open's, EFBIG when the file has max bytes or
 * more (SIZE_MAX: no bound but memory), ENOMEM, or EIO on a read error.
 * The caller frees.
 */
char *files_read(const char *path, size_t max, size_t *len);

#endif

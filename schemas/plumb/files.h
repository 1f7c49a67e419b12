/*
 * files.h - small file-system helpers the programs share.
 */
#ifndef XQF_FILES_H
#define XQF_FILES_H

/* mkdir -p (mode 0755): creates path and its missing parents. 0, or -1 with errno set. */
int files_make_dirs(const char *path);

#endif

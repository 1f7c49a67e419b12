#include "files.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int files_make_dirs(const char *dir)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p)
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return -1;
        if (!c)
            return 0;
        *p = c;
    }
}

char *files_read(const char *path, size_t max, size_t *len)
{
    FILE *f = fopen(path, "rbe");
    if (!f)
        return NULL;
    char *data = NULL;
    size_t n = 0, cap = 0, got;
    int err = 0;
    do {
        if (n + 1 >= cap) {                      /* room for one more byte and the NUL */
            size_t want = cap ? (cap > SIZE_MAX / 2 ? SIZE_MAX : 2 * cap) : 65536;
            char *p = want > cap ? realloc(data, want) : NULL;
            if (!p) {
                err = ENOMEM;
                break;
            }
            data = p, cap = want;
        }
        got = fread(data + n, 1, cap - n - 1, f);
        n += got;
        if (n >= max)
            err = EFBIG;
    } while (got > 0 && !err);
    if (!err && ferror(f))
        err = EIO;
    fclose(f);
    if (err) {
        free(data);
        errno = err;
        return NULL;
    }
    data[n] = '\0';
    if (len)
        *len = n;
    return data;
}

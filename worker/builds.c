#include "builds.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "log.h"
#include "sha256.h"

enum { VERIFIED_MAX = 64 };

typedef struct {
    bool active;
    char sha[XQF_SHA256_HEX + 1];
    int fd;                          /* the part file */
    uint64_t received, total;        /* total 0 until the first chunk */
    int64_t asked_ms;                /* last request sent, 0: none yet */
} Fetch;

struct BuildCache {
    char dir[PATH_MAX / 2];
    char path[PATH_MAX];             /* builds_path's answer */
    char verified[VERIFIED_MAX][XQF_SHA256_HEX + 1];
    int nverified;
    Fetch fetches[BUILDS_MAX_FETCHES];
};

void builds_default_dir(char *out, size_t size)
{
    const char *env = getenv("XQF_CACHE"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (env && *env)
        snprintf(out, size, "%s", env);
    else if (xdg && *xdg)
        snprintf(out, size, "%s/xqf-worker", xdg);
    else if (home && *home)
        snprintf(out, size, "%s/.cache/xqf-worker", home);
    else
        snprintf(out, size, "/tmp/xqf-worker-cache-%ld", (long)getuid());
}

BuildCache *builds_new(const char *dir)
{
    BuildCache *c = calloc(1, sizeof *c);
    if (!c) {
        log_error("builds: out of memory");
        return NULL;
    }
    if (snprintf(c->dir, sizeof c->dir, "%s", dir) >= (int)sizeof c->dir || files_make_dirs(dir) != 0) {
        log_error("builds: cannot use the cache folder %s: %s", dir, strerror(errno));
        free(c);
        return NULL;
    }
    for (int i = 0; i < BUILDS_MAX_FETCHES; i++)
        c->fetches[i].fd = -1;
    return c;
}

static void fetch_drop(BuildCache *c, Fetch *f)
{
    char part[PATH_MAX];
    if (f->fd >= 0)
        close(f->fd);
    snprintf(part, sizeof part, "%s/%s.part", c->dir, f->sha);
    unlink(part);
    memset(f, 0, sizeof *f);
    f->fd = -1;
}

void builds_destroy(BuildCache **cp)
{
    BuildCache *c = *cp;
    if (!c)
        return;
    for (int i = 0; i < BUILDS_MAX_FETCHES; i++)
        if (c->fetches[i].active)
            fetch_drop(c, &c->fetches[i]);
    free(c);
    *cp = NULL;
}

bool builds_sha_ok(const char *sha)
{
    size_t n = strspn(sha, "0123456789abcdef");
    return n == XQF_SHA256_HEX && !sha[n];
}

const char *builds_path(BuildCache *c, const char *sha)
{
    if (!builds_sha_ok(sha))
        return NULL;
    snprintf(c->path, sizeof c->path, "%s/%s", c->dir, sha);
    for (int i = 0; i < c->nverified; i++)
        if (strcmp(c->verified[i], sha) == 0)
            return access(c->path, X_OK) == 0 ? c->path : NULL;
    int fd = open(c->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char hex[XQF_SHA256_HEX + 1];
    bool ok = sha256_fd(fd, hex) == 0 && strcmp(hex, sha) == 0;
    close(fd);
    if (!ok) {
        log_warn("builds: cached %s does not match its hash: fetched again", c->path);
        unlink(c->path);
        return NULL;
    }
    if (c->nverified < VERIFIED_MAX)
        snprintf(c->verified[c->nverified++], XQF_SHA256_HEX + 1, "%s", sha);
    return c->path;
}

static Fetch *find(BuildCache *c, const char *sha)
{
    for (int i = 0; i < BUILDS_MAX_FETCHES; i++)
        if (c->fetches[i].active && strcmp(c->fetches[i].sha, sha) == 0)
            return &c->fetches[i];
    return NULL;
}

bool builds_fetching(const BuildCache *c, const char *sha)
{
    return find((BuildCache *)c, sha) != NULL;
}

int builds_want(BuildCache *c, const char *sha)
{
    if (!builds_sha_ok(sha)) {
        log_warn("builds: '%.70s' is not a SHA-256", sha);
        return -1;
    }
    if (find(c, sha))
        return 0;
    Fetch *f = NULL;
    for (int i = 0; i < BUILDS_MAX_FETCHES && !f; i++)
        if (!c->fetches[i].active)
            f = &c->fetches[i];
    if (!f) {
        log_warn("builds: %d fetches already under way", BUILDS_MAX_FETCHES);
        return -1;
    }
    char part[PATH_MAX];
    snprintf(part, sizeof part, "%s/%s.part", c->dir, sha);
    f->fd = open(part, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (f->fd < 0) {
        log_error("builds: cannot write %s: %s", part, strerror(errno));
        return -1;
    }
    f->active = true;
    snprintf(f->sha, sizeof f->sha, "%s", sha);
    f->received = f->total = 0;
    f->asked_ms = 0;
    log_info("builds: fetching %.16s... from the coordinator", sha);
    return 0;
}

bool builds_next_request(BuildCache *c, int64_t now_ms, XqfMsg *m)
{
    for (int i = 0; i < BUILDS_MAX_FETCHES; i++) {
        Fetch *f = &c->fetches[i];
        if (!f->active || (f->asked_ms && now_ms - f->asked_ms < BUILDS_RETRY_MS))
            continue;
        xqf_msg_init(m, XQF_MSG_BUILD_REQUEST);
        snprintf(m->u.build_request.sha256, sizeof m->u.build_request.sha256, "%s", f->sha);
        m->u.build_request.offset = f->received;
        f->asked_ms = now_ms;
        return true;
    }
    return false;
}

static int failed(BuildCache *c, Fetch *f, char *err, size_t errlen, const char *why)
{
    snprintf(err, errlen, "build %.16s...: %s", f->sha, why);
    log_error("builds: %s", err);
    fetch_drop(c, f);
    return -1;
}

/* Writes all of data at offset. 0 or -1. */
static int write_at(int fd, const uint8_t *data, size_t len, uint64_t offset)
{
    while (len > 0) {
        ssize_t n = pwrite(fd, data, len, (off_t)offset);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        data += n;
        len -= (size_t)n;
        offset += (uint64_t)n;
    }
    return 0;
}

int builds_on_chunk(BuildCache *c, const XqfMsg_build_chunk *m, char *err, size_t errlen)
{
    Fetch *f = find(c, m->sha256);
    if (!f || m->offset != f->received)
        return 0;                          /* a late duplicate: the request is re-sent if needed */
    if (m->total > BUILDS_SIZE_MAX)
        return failed(c, f, err, errlen, "larger than the limit");
    if (f->total && m->total != f->total)
        return failed(c, f, err, errlen, "its size changed while fetched");
    if (m->data.len == 0 && m->offset < m->total)
        return failed(c, f, err, errlen, "an empty chunk before the end");
    if (m->offset + m->data.len > m->total)
        return failed(c, f, err, errlen, "a chunk beyond the stated size");
    f->total = m->total;
    if (m->data.len && write_at(f->fd, m->data.data, m->data.len, m->offset) != 0)
        return failed(c, f, err, errlen, strerror(errno));
    f->received += m->data.len;
    f->asked_ms = 0;                       /* ask for the next part at once */
    if (f->received < f->total)
        return 0;
    char hex[XQF_SHA256_HEX + 1];
    if (fsync(f->fd) != 0 || sha256_fd(f->fd, hex) != 0)
        return failed(c, f, err, errlen, strerror(errno));
    if (strcmp(hex, f->sha) != 0)
        return failed(c, f, err, errlen, "the bytes received do not have its SHA-256: not installed");
    char part[PATH_MAX], final[PATH_MAX];
    snprintf(part, sizeof part, "%s/%s.part", c->dir, f->sha);
    snprintf(final, sizeof final, "%s/%s", c->dir, f->sha);
    if (fchmod(f->fd, 0755) != 0 || rename(part, final) != 0)
        return failed(c, f, err, errlen, strerror(errno));
    close(f->fd);
    f->fd = -1;
    log_info("builds: %.16s... fetched (%llu bytes), verified, cached in %s", f->sha,
             (unsigned long long)f->total, c->dir);
    if (c->nverified < VERIFIED_MAX)
        snprintf(c->verified[c->nverified++], XQF_SHA256_HEX + 1, "%s", f->sha);
    memset(f, 0, sizeof *f);
    f->fd = -1;
    return 1;
}

int builds_abandon(BuildCache *c)
{
    int n = 0;
    for (int i = 0; i < BUILDS_MAX_FETCHES; i++)
        if (c->fetches[i].active) {
            fetch_drop(c, &c->fetches[i]);
            n++;
        }
    return n;
}

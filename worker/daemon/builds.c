#define _GNU_SOURCE /* mkostemp */
#include "builds.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "files.h"
#include "log.h"
#include "process.h"
#include "sha256.h"

typedef struct {
    bool active;
    bool locked;                     /* the per-SHA lock is ours: the bytes are being fetched */
    char sha[XQF_SHA256_HEX + 1];
    int lock_fd;                     /* DIR/SHA.lock */
    int fd;                          /* the part file, once locked */
    char part[PATH_MAX];             /* its path */
    char name[XQF_NAME_MAX + 1];     /* the build's name and signature, from the first chunk */
    char signature[XQF_SIGNATURE_HEX + 1];
    uint64_t received, total;        /* total 0 until the first chunk */
    int64_t asked_ms;                /* last request sent, 0: none yet */
} Fetch;

/* A build benched by this process (builds_bench). */
typedef struct {
    char sha[XQF_SHA256_HEX + 1];
    BuildBench bench;
} Benched;

struct BuildCache {
    SignKind kind;                   /* engine builds or nets: their signatures, modes, requests */
    char dir[PATH_MAX / 2];
    char path[PATH_MAX];             /* builds_path's answer */
    const TrustList *trust;
    bool allow_unsigned;
    bool boxed;                      /* benches run in the sandbox (process.h) */
    Fetch fetches[BUILDS_MAX_FETCHES];
    Benched benched[BUILDS_BENCHED_MAX];  /* the latest, a ring */
    int nbenched;
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

/* Whether st is ours and writable by no one else; else why not in err. */
static bool private_to_us(const struct stat *st, const char *what, char *err, size_t errlen)
{
    if (st->st_uid != geteuid())
        snprintf(err, errlen, "%s belongs to uid %ld, not to this worker's user (uid %ld)", what, (long)st->st_uid,
                 (long)geteuid());
    else if (st->st_mode & (S_IWGRP | S_IWOTH))
        snprintf(err, errlen, "%s is writable by group or others (mode %04o): chmod go-w it", what,
                 (unsigned)(st->st_mode & 07777));
    else
        return true;
    return false;
}

/* What the cache holds, in messages. */
static const char *what(const BuildCache *c)
{
    return c->kind == SIGN_NET ? "net" : c->kind == SIGN_WORKER ? "worker" : "build";
}

BuildCache *builds_new(const char *dir, const TrustList *trust, bool allow_unsigned, bool boxed)
{
    return builds_new_kind(dir, SIGN_BUILD, trust, allow_unsigned, boxed);
}

BuildCache *builds_new_kind(const char *dir, SignKind kind, const TrustList *trust, bool allow_unsigned,
                            bool boxed)
{
    BuildCache *c = calloc(1, sizeof *c);
    if (!c) {
        log_error("builds: out of memory");
        return NULL;
    }
    c->kind = kind;
    struct stat st;
    char why[PATH_MAX + 128];
    if (snprintf(c->dir, sizeof c->dir, "%s", dir) >= (int)sizeof c->dir || files_make_dirs(dir) != 0 ||
        stat(dir, &st) != 0) {
        log_error("builds: cannot use the cache folder %s: %s", dir, strerror(errno));
        free(c);
        return NULL;
    }
    if (!S_ISDIR(st.st_mode) || !private_to_us(&st, dir, why, sizeof why)) {
        log_error("builds: refusing the cache folder: %s", S_ISDIR(st.st_mode) ? why : "not a folder");
        free(c);
        return NULL;
    }
    c->trust = trust;
    c->allow_unsigned = allow_unsigned;
    c->boxed = boxed;
    for (int i = 0; i < BUILDS_MAX_FETCHES; i++)
        c->fetches[i].fd = c->fetches[i].lock_fd = -1;
    return c;
}

/* Unlocks and forgets a fetch, removing its part file. */
static void fetch_drop(Fetch *f)
{
    if (f->fd >= 0) {
        close(f->fd);
        unlink(f->part);
    }
    if (f->lock_fd >= 0)
        close(f->lock_fd);                   /* releases the flock */
    memset(f, 0, sizeof *f);
    f->fd = f->lock_fd = -1;
}

void builds_destroy(BuildCache **cp)
{
    BuildCache *c = *cp;
    if (!c)
        return;
    for (int i = 0; i < BUILDS_MAX_FETCHES; i++)
        if (c->fetches[i].active)
            fetch_drop(&c->fetches[i]);
    free(c);
    *cp = NULL;
}

bool builds_sha_ok(const char *sha)
{
    size_t n = strspn(sha, "0123456789abcdef");
    return n == XQF_SHA256_HEX && !sha[n];
}

/* Whether the build (sha, name, signature) may run here: 0, or -1 with the reason in err. */
static int trusted(const BuildCache *c, const char *sha, const char *name, const char *signature, char *err,
                   size_t errlen)
{
    /* a worker release runs unboxed, with the worker's rights and keys: signed, whatever --allow-unsigned says */
    if (c->allow_unsigned && c->kind != SIGN_WORKER && (!*signature || !c->trust))
        return 0;
    if (!c->trust) {
        snprintf(err, errlen, "this worker trusts no operator key (start it with --trust FILE): it %s",
                 c->kind == SIGN_NET ? "loads no net" : c->kind == SIGN_WORKER ? "updates itself to no release"
                                                                               : "runs no engine build");
        return -1;
    }
    return trust_verify_artifact(c->trust, c->kind, sha, name, signature, err, errlen);
}

/* The signature file of sha's cached binary: "name NAME\nsignature HEX\n" (HEX empty when unsigned). */
static void sig_path(const BuildCache *c, const char *sha, char *out, size_t size)
{
    snprintf(out, size, "%s/%s.sig", c->dir, sha);
}

/* Reads sha's signature file into name and signature. 0 or -1. */
static int read_sig(const BuildCache *c, const char *sha, char name[XQF_NAME_MAX + 1],
                    char signature[XQF_SIGNATURE_HEX + 1])
{
    char path[PATH_MAX], text[XQF_NAME_MAX + XQF_SIGNATURE_HEX + 32];
    sig_path(c, sha, path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return -1;
    text[n] = '\0';
    const char *nl = strchr(text, '\n'), *sig = nl ? nl + 1 : NULL, *end = sig ? strchr(sig, '\n') : NULL;
    if (strncmp(text, "name ", 5) != 0 || !sig || strncmp(sig, "signature ", 10) != 0 || !end || end[1] ||
        nl - text - 5 > XQF_NAME_MAX || end - sig - 10 > XQF_SIGNATURE_HEX)
        return -1;
    snprintf(name, XQF_NAME_MAX + 1, "%.*s", (int)(nl - text - 5), text + 5);
    snprintf(signature, XQF_SIGNATURE_HEX + 1, "%.*s", (int)(end - sig - 10), sig + 10);
    return 0;
}

/* Writes sha's signature file (a unique temporary renamed into place). 0 or -1 (errno). */
static int write_sig(const BuildCache *c, const Fetch *f)
{
    char path[PATH_MAX], tmp[PATH_MAX + 16], text[XQF_NAME_MAX + XQF_SIGNATURE_HEX + 32];
    sig_path(c, f->sha, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.part-XXXXXX", path);
    int len = snprintf(text, sizeof text, "name %s\nsignature %s\n", sign_name_ok(f->name) ? f->name : "-",
                       f->signature);
    int fd = mkostemp(tmp, O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    bool ok = write(fd, text, (size_t)len) == len && fsync(fd) == 0;
    int e = errno;
    close(fd);
    if (ok && rename(tmp, path) == 0)
        return 0;
    e = ok ? errno : e;
    unlink(tmp);
    errno = e;
    return -1;
}

int builds_name(BuildCache *c, const char *sha, char name[XQF_NAME_MAX + 1])
{
    char signature[XQF_SIGNATURE_HEX + 1];
    return builds_sha_ok(sha) ? read_sig(c, sha, name, signature) : -1;
}

const char *builds_path(BuildCache *c, const char *sha)
{
    if (!builds_sha_ok(sha))
        return NULL;
    snprintf(c->path, sizeof c->path, "%s/%s", c->dir, sha);
    char name[XQF_NAME_MAX + 1], signature[XQF_SIGNATURE_HEX + 1], why[512];
    int fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return NULL;
    struct stat st;
    char hex[XQF_SHA256_HEX + 1];
    bool ours = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && private_to_us(&st, c->path, why, sizeof why);
    bool ok = ours && sha256_fd(fd, hex) == 0 && strcmp(hex, sha) == 0;
    close(fd);
    if (!ok) {
        log_warn("builds: cached %s is %s: fetched again", c->path,
                 ours ? "damaged (not its SHA-256)" : "not a private file of ours");
        unlink(c->path);
        return NULL;
    }
    if (read_sig(c, sha, name, signature) != 0) {
        log_warn("builds: cached %.16s... has no signature file: fetched again", sha);
        return NULL;
    }
    if (trusted(c, sha, name, signature, why, sizeof why) != 0) {
        log_warn("builds: cached %.16s... (%s) not used: %s", sha, name, why);
        return NULL;
    }
    return access(c->path, c->kind == SIGN_NET ? R_OK : X_OK) == 0 ? c->path : NULL;
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

bool builds_receiving(const BuildCache *c)
{
    for (int i = 0; i < BUILDS_MAX_FETCHES; i++)
        if (c->fetches[i].active && c->fetches[i].locked)
            return true;
    return false;
}

/* Removes the part files of sha a killed process left (called holding sha's lock: none is being written). */
static void remove_stale_parts(const BuildCache *c, const char *sha)
{
    DIR *d = opendir(c->dir);
    if (!d)
        return;
    char prefix[XQF_SHA256_HEX + 8];
    snprintf(prefix, sizeof prefix, "%s.part-", sha);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

/*
 * Takes the fetch's per-SHA lock if it is free: then the bytes can be
 * fetched into a fresh part file.  1 locked, 0 still held by another
 * process, -1 on an error (logged).
 */
static int try_lock(BuildCache *c, Fetch *f)
{
    if (flock(f->lock_fd, LOCK_EX | LOCK_NB) != 0)
        return errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
    remove_stale_parts(c, f->sha);
    snprintf(f->part, sizeof f->part, "%s/%s.part-XXXXXX", c->dir, f->sha);
    f->fd = mkostemp(f->part, O_CLOEXEC | O_NOFOLLOW);
    if (f->fd < 0) {
        log_error("builds: cannot create a part file in %s: %s", c->dir, strerror(errno));
        return -1;
    }
    f->locked = true;
    return 1;
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
    char lock[PATH_MAX];
    snprintf(lock, sizeof lock, "%s/%s.lock", c->dir, sha);
    f->lock_fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (f->lock_fd < 0) {
        log_error("builds: cannot open %s: %s", lock, strerror(errno));
        return -1;
    }
    f->active = true;
    snprintf(f->sha, sizeof f->sha, "%s", sha);
    int locked = try_lock(c, f);
    if (locked < 0) {
        fetch_drop(f);
        return -1;
    }
    if (locked)
        log_info("builds: fetching %.16s... from the coordinator", sha);
    else
        log_info("builds: %.16s... is being fetched by another process sharing %s: waiting for it", sha, c->dir);
    return 0;
}

int builds_poll(BuildCache *c)
{
    int ended = 0;
    for (int i = 0; i < BUILDS_MAX_FETCHES; i++) {
        Fetch *f = &c->fetches[i];
        if (!f->active || f->locked)
            continue;
        int locked = try_lock(c, f);
        if (locked == 0)
            continue;
        if (locked > 0 && !builds_path(c, f->sha)) {
            log_info("builds: fetching %.16s... from the coordinator (the other process did not install it)",
                     f->sha);
            continue;
        }
        if (locked > 0)
            log_info("builds: %.16s... installed by another process", f->sha);
        fetch_drop(f);
        ended++;
    }
    return ended;
}

bool builds_next_request(BuildCache *c, int64_t now_ms, XqfMsg *m)
{
    for (int i = 0; i < BUILDS_MAX_FETCHES; i++) {
        Fetch *f = &c->fetches[i];
        if (!f->active || !f->locked || (f->asked_ms && now_ms - f->asked_ms < BUILDS_RETRY_MS))
            continue;
        xqf_msg_init(m, XQF_MSG_BUILD_REQUEST);
        snprintf(m->u.build_request.sha256, sizeof m->u.build_request.sha256, "%s", f->sha);
        m->u.build_request.offset = f->received;
        snprintf(m->u.build_request.kind, sizeof m->u.build_request.kind, "%s", what(c));
        f->asked_ms = now_ms;
        return true;
    }
    return false;
}

__attribute__((format(printf, 5, 6))) static int failed(const BuildCache *c, Fetch *f, char *err, size_t errlen,
                                                        const char *fmt, ...)
{
    char why[XQF_TEXT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(err, errlen, "%s %.16s...: %s", what(c), f->sha, why);
    log_error("builds: %s", err);
    fetch_drop(f);
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
    if (!f || !f->locked || m->offset != f->received)
        return 0;                          /* a late duplicate: the request is re-sent if needed */
    char why[XQF_TEXT_MAX];
    if (m->offset == 0) {                  /* the first chunk: is the build to be run here at all? */
        if (trusted(c, f->sha, m->name, m->signature, why, sizeof why) != 0) {
            failed(c, f, err, errlen, "refused: %s", why);
            return -2;
        }
        snprintf(f->name, sizeof f->name, "%s", m->name);
        snprintf(f->signature, sizeof f->signature, "%s", m->signature);
    } else if (strcmp(m->name, f->name) != 0 || strcmp(m->signature, f->signature) != 0) {
        return failed(c, f, err, errlen, "its name or signature changed while fetched");
    }
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
        return failed(c, f, err, errlen, "%s", strerror(errno));
    f->received += m->data.len;
    f->asked_ms = 0;                       /* ask for the next part at once */
    if (f->received < f->total)
        return 0;
    char hex[XQF_SHA256_HEX + 1], final[PATH_MAX];
    if (fsync(f->fd) != 0 || sha256_fd(f->fd, hex) != 0)
        return failed(c, f, err, errlen, "%s", strerror(errno));
    if (strcmp(hex, f->sha) != 0)
        return failed(c, f, err, errlen, "the bytes received do not have its SHA-256: not installed");
    snprintf(final, sizeof final, "%s/%s", c->dir, f->sha);
    /* a net is data: readable, never executable */
    if (fchmod(f->fd, c->kind == SIGN_NET ? 0444 : 0555) != 0 || write_sig(c, f) != 0 || rename(f->part, final) != 0)
        return failed(c, f, err, errlen, "%s", strerror(errno));
    close(f->fd);
    f->fd = -1;                            /* installed: fetch_drop leaves it */
    log_info("builds: %s %.16s... (%s, %s) fetched (%llu bytes), verified, cached in %s", what(c), f->sha,
             f->name, f->signature[0] ? "signed" : "unsigned", (unsigned long long)f->total, c->dir);
    fetch_drop(f);
    return 1;
}

int builds_abandon(BuildCache *c)
{
    int n = 0;
    for (int i = 0; i < BUILDS_MAX_FETCHES; i++)
        if (c->fetches[i].active) {
            fetch_drop(&c->fetches[i]);
            n++;
        }
    return n;
}

/* Runs `path bench` (path hashed as sha before it starts) into *b. */
static void run_bench(const char *sha, const char *path, bool boxed, BuildBench *b)
{
    char err[256], line[512], status[64];
    char *argv[] = { (char *)path, "bench", NULL };
    memset(b, 0, sizeof *b);
    const SandboxSpec box = { .memory_mb = 2048 };
    Process *p = boxed ? process_spawn_boxed(argv, sha, &box, err, sizeof err) : process_spawn(argv, sha, err, sizeof err);
    if (!p) {
        snprintf(b->why, sizeof b->why, "its bench does not start: %s", err);
        return;
    }
    int64_t deadline = clock_now_us() + (int64_t)BUILDS_BENCH_TIMEOUT_MS * 1000;
    ProcessRead got;
    long long v;
    while ((got = process_read_line(p, deadline, NULL, line, sizeof line)) == PROCESS_LINE) {
        /* ours ("Nodes searched: N") and Stockfish's or Pikafish's ("Nodes searched  : N") alike */
        if (sscanf(line, "Nodes searched : %lld", &v) == 1)
            b->nodes = v;
        else if (sscanf(line, "Nodes/second : %lld", &v) == 1)
            b->nps = v;
    }
    bool exited = got == PROCESS_EOF && process_exit_status(p, 5000, status, sizeof status);
    if (got == PROCESS_TIMEOUT)
        snprintf(b->why, sizeof b->why, "its bench did not end within %d s", BUILDS_BENCH_TIMEOUT_MS / 1000);
    else if (!exited || strcmp(status, "exit status 0") != 0)
        snprintf(b->why, sizeof b->why, "its bench failed (%s)", exited ? status : "it did not exit");
    else if (b->nodes <= 0)
        snprintf(b->why, sizeof b->why, "%s", "its bench printed no signature (Nodes searched: N)");
    if (b->why[0])
        b->nodes = b->nps = 0;
    process_destroy(&p, 0);
}

bool builds_bench(BuildCache *c, const char *sha, const char *path, BuildBench *out)
{
    int n = c->nbenched < BUILDS_BENCHED_MAX ? c->nbenched : BUILDS_BENCHED_MAX;
    for (int i = 0; i < n; i++)
        if (strcmp(c->benched[i].sha, sha) == 0) {
            *out = c->benched[i].bench;
            return false;
        }
    int64_t t0 = clock_now_ms();
    run_bench(sha, path, c->boxed, out);
    if (out->nodes)
        log_info("build %.16s: bench %lld, %lld nodes/s (%lld ms)", sha, (long long)out->nodes,
                 (long long)out->nps, (long long)(clock_now_ms() - t0));
    else
        log_warn("build %.16s: %s", sha, out->why);
    Benched *slot = &c->benched[c->nbenched++ % BUILDS_BENCHED_MAX];
    snprintf(slot->sha, sizeof slot->sha, "%s", sha);
    slot->bench = *out;
    return true;
}

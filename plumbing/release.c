#define _GNU_SOURCE /* mkostemp, pipe2 */
#include "release.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fork_exec.h"

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
    return -1;
}

int release_ask_protocol(const char *path, unsigned *protocol, char *err, size_t size)
{
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0)
        return fail(err, size, "cannot make a pipe: %s", strerror(errno));
    ForkExec sp;
    fork_exec_init(&sp);
    sp.path = path;
    sp.out = out[1];
    sp.close_fds = true;
    sp.report = true;
    sp.alarm_s = RELEASE_PROBE_S;
    char *argv[] = { (char *)path, "--protocol", NULL };
    pid_t pid;
    int e = fork_exec_start(&sp, argv, &pid);
    close(out[1]);
    if (e != 0) {
        close(out[0]);
        return fail(err, size, "cannot run %s: %s", path, strerror(e));
    }
    char text[32];
    size_t len = 0;
    ssize_t n;
    while (len < sizeof text - 1 && ((n = read(out[0], text + len, sizeof text - 1 - len)) > 0 ||
                                     (n < 0 && errno == EINTR)))
        len += n > 0 ? (size_t)n : 0;
    close(out[0]);
    text[len] = '\0';
    int status = fork_exec_wait(pid);
    char *end;
    unsigned long v = strtoul(text, &end, 10);
    if (status != 0 || end == text || (*end && strcmp(end, "\n") != 0) || v == 0 || v > 999999)
        return fail(err, size, "%s --protocol did not print a protocol version (exit status %d, said '%.20s'): "
                               "not an xqf-worker of version 14 or later", path, status, text);
    *protocol = (unsigned)v;
    return 0;
}

int release_write(const char *path, const Release *r, char *err, size_t size)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.part-XXXXXX", path) >= (int)sizeof tmp)
        return fail(err, size, "%s: path too long", path);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return fail(err, size, "%s: %s", tmp, strerror(errno));
    char text[512];
    int len = snprintf(text, sizeof text,
                       "# a worker release (xqf-keys sign-worker): the coordinator serves it with\n"
                       "# --worker-release, workers trusting the key update themselves to it\n"
                       "name %s\nsha256 %s\nsignature %s\n", r->name, r->sha256, r->signature);
    bool ok = write(fd, text, (size_t)len) == len && fchmod(fd, 0644) == 0 && fsync(fd) == 0;
    int e = errno;
    close(fd);
    if (ok && rename(tmp, path) == 0)
        return 0;
    e = ok ? errno : e;
    unlink(tmp);
    return fail(err, size, "%s: %s", path, strerror(e));
}

/* Copies the value of the line "key VALUE" (key without its space) into out; true when there is one that fits. */
static bool line_value(const char *text, const char *key, char *out, size_t outsize)
{
    size_t k = strlen(key);
    for (const char *s = text; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL) {
        if (strncmp(s, key, k) != 0 || s[k] != ' ')
            continue;
        const char *v = s + k + 1, *end = strchr(v, '\n');
        size_t len = end ? (size_t)(end - v) : strlen(v);
        if (len == 0 || len >= outsize)
            return false;
        memcpy(out, v, len);
        out[len] = '\0';
        return true;
    }
    return false;
}

int release_read(const char *path, Release *r, char *err, size_t size)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return fail(err, size, "%s: %s (sign the release: xqf-keys sign-worker KEYFILE BINARY)", path,
                    strerror(errno));
    char text[1024];
    size_t n = fread(text, 1, sizeof text - 1, f);
    bool more = fgetc(f) != EOF;
    fclose(f);
    text[n] = '\0';
    memset(r, 0, sizeof *r);
    if (more)
        return fail(err, size, "%s: larger than a release file", path);
    if (!line_value(text, "name", r->name, sizeof r->name) ||
        !line_value(text, "sha256", r->sha256, sizeof r->sha256) ||
        !line_value(text, "signature", r->signature, sizeof r->signature))
        return fail(err, size, "%s: expected the lines 'name NAME', 'sha256 SHA' and 'signature HEX'", path);
    if (strlen(r->sha256) != SIGN_SHA_HEX || strspn(r->sha256, "0123456789abcdef") != SIGN_SHA_HEX ||
        strlen(r->signature) != SIGN_SIG_HEX || strspn(r->signature, "0123456789abcdef") != SIGN_SIG_HEX)
        return fail(err, size, "%s: a malformed sha256 or signature line", path);
    if (!(r->protocol = release_protocol(r->name)))
        return fail(err, size, "%s: '%s' is not a release's name (xqf-worker-<protocol version>)", path, r->name);
    return 0;
}

/*
 * build_sign.c - xqf-tune build --sign-serve: the signer of the builder's
 * builds, a process of its own with the operator's key that never runs
 * what it signs: each build's stored bytes hashed again, then signed.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build_internal.h"
#include "sha256.h"

/*
 * Build id's stored bytes into a private temporary file and their SHA-256
 * into hex: what is signed is what workers will fetch, never a file the
 * builder could have changed.  Exit status.
 */
static int stored_sha256(Store *s, const char *sha256, char hex[SHA256_HEX_LEN + 1])
{
    char tmp[PATH_MAX];
    const char *tmpdir = getenv("TMPDIR");
    if (!build_path_fmt(tmp, sizeof tmp, "%s/xqf-sign-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp"))
        return cli_fail(CLI_FAIL, "TMPDIR too long");
    int fd = mkstemp(tmp);
    if (fd < 0)
        return cli_fail(CLI_FAIL, "cannot make a temporary file: %s", strerror(errno));
    unlink(tmp);
    enum { CHUNK = 1 << 20 };
    char *buf = malloc(CHUNK), name[STORE_NAME_MAX + 1], sig[STORE_SIG_HEX + 1];
    int status = buf ? CLI_OK : cli_fail(CLI_FAIL, "out of memory");
    for (int64_t off = 0, total = 1; status == CLI_OK && off < total;) {
        size_t len = 0;
        int got = store_build_chunk(s, sha256, off, CHUNK, buf, &len, &total, name, sig);
        if (got != 1 || (len == 0 && total > 0))
            status = cli_fail(CLI_FAIL, "cannot read the bytes of build %.16s", sha256);
        else if (len > 0 && write(fd, buf, len) != (ssize_t)len)
            status = cli_fail(CLI_FAIL, "cannot write a temporary file: %s", strerror(errno));
        off += (int64_t)len;
        if (total == 0)
            break;
    }
    if (status == CLI_OK && (lseek(fd, 0, SEEK_SET) != 0 || sha256_fd(fd, hex) != 0))
        status = cli_fail(CLI_FAIL, "cannot hash the bytes of build %.16s", sha256);
    free(buf);
    close(fd);
    return status;
}

/* One build signed, or refused when its bytes are not its SHA-256. Exit status. */
static int sign_one(Store *s, const SignKey *key, int64_t build, const char *sha256, const char *name)
{
    char hex[SHA256_HEX_LEN + 1], sig[SIGN_SIG_HEX + 1], err[256];
    int status = stored_sha256(s, sha256, hex);
    if (status != CLI_OK)
        return status;
    if (strcmp(hex, sha256) != 0)
        return cli_fail(CLI_FAIL, "build %" PRId64 " (%s): its stored bytes hash to %.16s, not %.16s: not signed",
                        build, name, hex, sha256);
    if (sign_build(key, sha256, name, sig, err, sizeof err) != 0)
        return cli_fail(CLI_FAIL, "cannot sign: %s", err);
    int started = 0, rc = store_build_signed(s, build, sha256, sig, &started);
    if (rc < 0)
        return cli_fail(CLI_FAIL, "cannot record the signature of build %" PRId64, build);
    if (rc == 1)
        printf("signed build %" PRId64 " (%s); %d test%s started\n", build, name, started, started == 1 ? "" : "s");
    return CLI_OK;
}

/* xqf-tune build --sign-serve: the builder's unsigned builds of approved tests signed (with --watch, forever). */
int build_sign_serve(const Opts *o, CliSigning *sg)
{
    if (o->npositional != 0 || opts_given(o, "--binary") || opts_given(o, "--name") || opts_given(o, "--ref") ||
        opts_given(o, "--signature") || opts_given(o, "--source") || opts_given(o, "--serve") ||
        opts_given(o, "--out") || opts_given(o, "--jobs") || opts_given(o, "--repo"))
        return cli_fail(CLI_USAGE, "build --sign-serve takes only --sign-key, --watch and --db");
    if (!sg->has_key)
        return cli_fail(CLI_USAGE, "build --sign-serve needs --sign-key FILE (the operator's key)");
    int64_t watch = opts_given(o, "--watch") ? opts_int(o, "--watch") : 0;
    Store *s = NULL;
    int status = cli_open_db(o, &s);
    int64_t refused = 0;   /* a build whose bytes do not hash to its SHA-256 is not tried again in a row */
    while (status == CLI_OK) {
        int64_t build;
        char sha256[STORE_NAME_MAX + 1], name[STORE_NAME_MAX + 1];
        int got = store_sign_next(s, &build, sha256, name);
        if (got == 1 && build != refused) {
            if (sign_one(s, &sg->key, build, sha256, name) != CLI_OK) {
                refused = build;
                if (!watch)
                    status = CLI_FAIL;
            }
            continue;
        }
        if (got < 0 && !watch)
            status = cli_fail(CLI_FAIL, "cannot read the builds to sign");
        if (!watch)
            break;
        fflush(stdout);
        sleep((unsigned)watch);
        if (!store_ok(s) && store_connect(s) != 0)
            fprintf(stderr, "xqf-tune: the database is not reachable: trying again in %" PRId64 " s\n", watch);
    }
    store_destroy(&s);
    return status;
}

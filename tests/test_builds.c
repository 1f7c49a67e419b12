/*
 * The worker's build cache (worker/daemon/builds.h) on its own: which builds it
 * takes (signed by a trusted operator key), the cache folder it accepts,
 * the per-SHA lock two processes sharing a cache take turns on, part
 * files that never follow a planted link, and cached files checked again
 * each time they are used.  The same cache of nets: signed as nets (a
 * build's signature does not do), read-only, bytes checked.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "builds.h"
#include "keys.h"
#include "sha256.h"

static char dir[64], cache[128];
static const char BYTES[] = "#!/bin/sh\necho a stand-in for an engine build\n";
static char sha[XQF_SHA256_HEX + 1];
static SignKey op, other;
static TrustList trust;

static void setup(void)
{
    char err[256], path[256];
    snprintf(dir, sizeof dir, "/tmp/xqf-builds-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cache, sizeof cache, "%s/cache", dir);
    snprintf(path, sizeof path, "%s/bytes", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(BYTES, f);
    fclose(f);
    cr_assert_eq(sha256_file(path, sha), 0);
    snprintf(path, sizeof path, "%s/op", dir);
    cr_assert_eq(sign_key_generate(path, &op, err, sizeof err), 0, "%s", err);
    snprintf(path, sizeof path, "%s/op.pub", dir);
    cr_assert_eq(trust_read(path, &trust, err, sizeof err), 0, "%s", err);
    snprintf(path, sizeof path, "%s/other", dir);
    cr_assert_eq(sign_key_generate(path, &other, err, sizeof err), 0, "%s", err);
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    sign_key_wipe(&op);
    sign_key_wipe(&other);
}

TestSuite(builds, .init = setup, .fini = teardown, .timeout = 30);

/*
 * Feeds bytes (len of them) as the whole of sha in one chunk named name,
 * signed as kind by k (NULL: unsigned). builds_on_chunk's answer.
 */
static int feed_bytes(BuildCache *c, SignKind kind, const char *bytes, size_t len, const char *name,
                      const SignKey *k, char *err, size_t errlen)
{
    XqfMsg m;
    xqf_msg_init(&m, XQF_MSG_BUILD_CHUNK);
    XqfMsg_build_chunk *ch = &m.u.build_chunk;
    snprintf(ch->sha256, sizeof ch->sha256, "%s", sha);
    snprintf(ch->name, sizeof ch->name, "%s", name);
    snprintf(ch->kind, sizeof ch->kind, "%s", kind == SIGN_NET ? "net" : kind == SIGN_WORKER ? "worker" : "build");
    char e[256];
    if (k)
        cr_assert_eq(sign_artifact(k, kind, sha, name, ch->signature, e, sizeof e), 0, "%s", e);
    ch->offset = 0;
    ch->total = len;
    cr_assert_eq(xqf_bin_set(&ch->data, bytes, len), 0);
    int rc = builds_on_chunk(c, ch, err, errlen);
    xqf_msg_free(&m);
    return rc;
}

/* Feeds the whole build in one chunk named name, signed by k (NULL: unsigned). builds_on_chunk's answer. */
static int feed(BuildCache *c, const char *name, const SignKey *k, char *err, size_t errlen)
{
    return feed_bytes(c, SIGN_BUILD, BYTES, sizeof BYTES - 1, name, k, err, errlen);
}

/* Asks for sha and checks that a request for it goes out at once. */
static void want(BuildCache *c)
{
    XqfMsg m;
    cr_assert_eq(builds_want(c, sha), 0);
    cr_assert(builds_next_request(c, 1, &m), "no build_request sent");
    cr_assert_str_eq(m.u.build_request.sha256, sha);
    xqf_msg_free(&m);
}

Test(builds, only_builds_signed_by_a_trusted_key_are_installed)
{
    char err[512], path[256];
    BuildCache *c = builds_new(cache, &trust, false, false);
    cr_assert_not_null(c);
    snprintf(path, sizeof path, "%s/%s", cache, sha);
    want(c);
    cr_assert_eq(feed(c, "test-build", NULL, err, sizeof err), -2, "a refusal of this worker");
    cr_assert_not_null(strstr(err, "refused: unsigned build"), "%s", err);
    want(c);
    cr_assert_eq(feed(c, "test-build", &other, err, sizeof err), -2);
    cr_assert_not_null(strstr(err, "not signed by a trusted operator key"), "%s", err);
    cr_assert_neq(access(path, F_OK), 0, "an untrusted build was installed");
    cr_assert_null(builds_path(c, sha));
    want(c);
    cr_assert_eq(feed(c, "test-build", &op, err, sizeof err), 1, "%s", err);
    cr_assert_str_eq(builds_path(c, sha), path);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0555);
    builds_destroy(&c);
    /* the same cache for a worker trusting another key: the cached build is not used */
    TrustList others;
    char pub[256];
    snprintf(pub, sizeof pub, "%s/other.pub", dir);
    cr_assert_eq(trust_read(pub, &others, err, sizeof err), 0);
    c = builds_new(cache, &others, false, false);
    cr_assert_null(builds_path(c, sha));
    builds_destroy(&c);
    /* nor for a worker without --trust; --allow-unsigned alone takes it */
    c = builds_new(cache, NULL, false, false);
    cr_assert_null(builds_path(c, sha));
    want(c);
    cr_assert_eq(feed(c, "test-build", &op, err, sizeof err), -2);
    cr_assert_not_null(strstr(err, "trusts no operator key"), "%s", err);
    builds_destroy(&c);
    c = builds_new(cache, NULL, true, false);
    cr_assert_str_eq(builds_path(c, sha), path);
    builds_destroy(&c);
}

/* A cached build is hashed and its signature checked whenever it is used, not trusted by its path. */
Test(builds, a_tampered_cache_is_not_used)
{
    char err[512], path[256], sig[256];
    BuildCache *c = builds_new(cache, &trust, false, false);
    want(c);
    cr_assert_eq(feed(c, "test-build", &op, err, sizeof err), 1, "%s", err);
    cr_assert_not_null(builds_path(c, sha));
    snprintf(path, sizeof path, "%s/%s", cache, sha);
    cr_assert_eq(chmod(path, 0755), 0);
    FILE *f = fopen(path, "a");                  /* changed in place after it was verified and used */
    cr_assert(f);
    fputs("echo tampered\n", f);
    fclose(f);
    cr_assert_eq(chmod(path, 0555), 0);
    cr_assert_null(builds_path(c, sha), "a tampered cached build was used");
    cr_assert_neq(access(path, F_OK), 0, "the tampered file stays in the cache");
    /* fetched again: a signature file edited to another name no longer verifies */
    want(c);
    cr_assert_eq(feed(c, "test-build", &op, err, sizeof err), 1, "%s", err);
    snprintf(sig, sizeof sig, "%s/%s.sig", cache, sha);
    char text[512];
    f = fopen(sig, "r");
    cr_assert(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    cr_assert_eq(strncmp(text, "name test-build\n", 16), 0, "%s", text);
    text[5] = 'b';                               /* "name best-build" */
    f = fopen(sig, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
    cr_assert_null(builds_path(c, sha));
    builds_destroy(&c);
}

/* The cache folder must be ours and writable by no one else. */
Test(builds, a_shared_or_foreign_cache_folder_is_refused)
{
    cr_assert_eq(mkdir(cache, 0700), 0);
    cr_assert_eq(chmod(cache, 0777), 0);
    BuildCache *c = builds_new(cache, &trust, false, false);
    cr_assert_null(c, "a world-writable cache folder was taken");
    cr_assert_eq(chmod(cache, 0770), 0);
    cr_assert_null(builds_new(cache, &trust, false, false), "a group-writable cache folder was taken");
    cr_assert_eq(chmod(cache, 0755), 0);
    if (geteuid() == 0) {
        cr_assert_eq(chown(cache, 12345, 12345), 0);
        cr_assert_null(builds_new(cache, &trust, false, false), "a folder of another user was taken");
        cr_assert_eq(chown(cache, 0, 0), 0);
    }
    c = builds_new(cache, &trust, false, false);
    cr_assert_not_null(c);
    builds_destroy(&c);
}

/* The bytes go to a fresh file: a link planted where a part file could be is never followed. */
Test(builds, part_files_do_not_follow_a_planted_link)
{
    char err[512], victim[256], link[256];
    cr_assert_eq(mkdir(cache, 0700), 0);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    FILE *f = fopen(victim, "w");
    cr_assert(f);
    fputs("precious\n", f);
    fclose(f);
    snprintf(link, sizeof link, "%s/%s.part", cache, sha);   /* the name part files used to have */
    cr_assert_eq(symlink(victim, link), 0);
    BuildCache *c = builds_new(cache, &trust, false, false);
    want(c);
    cr_assert_eq(feed(c, "test-build", &op, err, sizeof err), 1, "%s", err);
    builds_destroy(&c);
    char text[64] = "";
    f = fopen(victim, "r");
    cr_assert(f);
    cr_assert_not_null(fgets(text, sizeof text, f));
    fclose(f);
    cr_assert_str_eq(text, "precious\n", "the planted link was followed");
}

/*
 * Two processes sharing a cache: while one holds sha's lock (it is
 * fetching), the other asks nothing and waits; once the first has
 * installed the build and let go, the second finds it in place.
 */
Test(builds, a_second_process_waits_on_the_per_sha_lock)
{
    char lock[256], err[256];
    cr_assert_eq(mkdir(cache, 0700), 0);
    snprintf(lock, sizeof lock, "%s/%s.lock", cache, sha);
    int go[2], held[2];
    cr_assert_eq(pipe(go), 0);
    cr_assert_eq(pipe(held), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {                              /* the first process: it fetches and installs */
        int fd = open(lock, O_RDWR | O_CREAT, 0600);
        char b = 1;
        if (fd < 0 || flock(fd, LOCK_EX) != 0 || write(held[1], &b, 1) != 1 || read(go[0], &b, 1) != 1)
            _exit(1);
        BuildCache *c = builds_new(cache, &trust, true, false);
        XqfMsg m;
        xqf_msg_init(&m, XQF_MSG_BUILD_CHUNK);
        XqfMsg_build_chunk *ch = &m.u.build_chunk;
        snprintf(ch->sha256, sizeof ch->sha256, "%s", sha);
        snprintf(ch->name, sizeof ch->name, "test-build");
        sign_build(&op, sha, "test-build", ch->signature, err, sizeof err);
        ch->total = sizeof BYTES - 1;
        xqf_bin_set(&ch->data, BYTES, sizeof BYTES - 1);
        /* its own fetch of the same build: the lock is its already (flock is per open file: released first) */
        flock(fd, LOCK_UN);
        int rc = c && builds_want(c, sha) == 0 && builds_on_chunk(c, ch, err, sizeof err) == 1 ? 0 : 2;
        xqf_msg_free(&m);
        builds_destroy(&c);
        close(fd);
        _exit(rc);
    }
    char b;
    cr_assert_eq(read(held[0], &b, 1), 1);
    BuildCache *c = builds_new(cache, &trust, false, false);
    cr_assert_not_null(c);
    cr_assert_eq(builds_want(c, sha), 0);
    cr_assert(builds_fetching(c, sha));
    XqfMsg m;
    cr_assert_not(builds_next_request(c, 1, &m), "asked for a build another process is fetching");
    cr_assert_eq(builds_poll(c), 0);
    cr_assert_not(builds_next_request(c, 100000, &m));
    cr_assert_eq(write(go[1], &b, 1), 1);
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the first process failed (%d)", status);
    cr_assert_eq(builds_poll(c), 1, "the installed build was not picked up");
    cr_assert_not(builds_fetching(c, sha));
    cr_assert_not(builds_next_request(c, 200000, &m), "fetched what was there");
    cr_assert_not_null(builds_path(c, sha));
    builds_destroy(&c);
}

/* Asks for sha as a net and checks that the request says so. */
static void want_net(BuildCache *c)
{
    XqfMsg m;
    cr_assert_eq(builds_want(c, sha), 0);
    cr_assert(builds_next_request(c, 1, &m), "no build_request sent");
    cr_assert_str_eq(m.u.build_request.sha256, sha);
    cr_assert_str_eq(m.u.build_request.kind, "net");
    xqf_msg_free(&m);
}

/*
 * A cache of nets (as a worker keeps in DIR/nets): only a net signed as
 * a net by a trusted key is installed, read-only (0444, never run); an
 * unsigned one, one signed by another key, or one whose signature is a
 * build's (the same key over the same SHA-256 and name) is refused with
 * the reason before its bytes are written.
 */
Test(builds, nets_are_taken_only_signed_as_nets)
{
    char err[512], path[256];
    BuildCache *c = builds_new_kind(cache, SIGN_NET, &trust, false, false);
    cr_assert_not_null(c);
    snprintf(path, sizeof path, "%s/%s", cache, sha);
    want_net(c);
    cr_assert_eq(feed_bytes(c, SIGN_NET, BYTES, sizeof BYTES - 1, "test.nnue", NULL, err, sizeof err), -2);
    cr_assert_not_null(strstr(err, "net "), "%s", err);
    cr_assert_not_null(strstr(err, "refused: unsigned net"), "%s", err);
    want_net(c);
    cr_assert_eq(feed_bytes(c, SIGN_NET, BYTES, sizeof BYTES - 1, "test.nnue", &other, err, sizeof err), -2);
    cr_assert_not_null(strstr(err, "not signed by a trusted operator key"), "%s", err);
    want_net(c);
    cr_assert_eq(feed_bytes(c, SIGN_BUILD, BYTES, sizeof BYTES - 1, "test.nnue", &op, err, sizeof err), -2,
                 "a build's signature was taken for a net's");
    cr_assert_not_null(strstr(err, "not signed by a trusted operator key"), "%s", err);
    cr_assert_neq(access(path, F_OK), 0, "an untrusted net was installed");
    cr_assert_null(builds_path(c, sha));
    want_net(c);
    cr_assert_eq(feed_bytes(c, SIGN_NET, BYTES, sizeof BYTES - 1, "test.nnue", &op, err, sizeof err), 1, "%s", err);
    cr_assert_str_eq(builds_path(c, sha), path);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0444, "a cached net is data: %o", st.st_mode & 0777);
    builds_destroy(&c);
    /* and the other way: a net's signature does not make a build of the same bytes */
    c = builds_new(cache, &trust, false, false);
    cr_assert_null(builds_path(c, sha), "a net's signature was taken for a build's");
    builds_destroy(&c);
    /* without --trust a worker loads no net */
    c = builds_new_kind(cache, SIGN_NET, NULL, false, false);
    cr_assert_null(builds_path(c, sha));
    want_net(c);
    cr_assert_eq(feed_bytes(c, SIGN_NET, BYTES, sizeof BYTES - 1, "test.nnue", &op, err, sizeof err), -2);
    cr_assert_not_null(strstr(err, "loads no net"), "%s", err);
    builds_destroy(&c);
}

/*
 * A corrupted net (bytes that are not its SHA-256, signature right) is
 * not installed; a cached net changed in place is not used but fetched
 * again.
 */
Test(builds, a_corrupted_net_is_refused)
{
    char err[512], path[256];
    BuildCache *c = builds_new_kind(cache, SIGN_NET, &trust, false, false);
    snprintf(path, sizeof path, "%s/%s", cache, sha);
    char corrupted[sizeof BYTES];
    memcpy(corrupted, BYTES, sizeof BYTES);
    corrupted[3] ^= 1;
    want_net(c);
    cr_assert_eq(feed_bytes(c, SIGN_NET, corrupted, sizeof BYTES - 1, "test.nnue", &op, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, "do not have its SHA-256"), "%s", err);
    cr_assert_neq(access(path, F_OK), 0, "a corrupted net was installed");
    cr_assert_not(builds_fetching(c, sha));
    want_net(c);
    cr_assert_eq(feed_bytes(c, SIGN_NET, BYTES, sizeof BYTES - 1, "test.nnue", &op, err, sizeof err), 1, "%s", err);
    cr_assert_not_null(builds_path(c, sha));
    cr_assert_eq(chmod(path, 0644), 0);
    FILE *f = fopen(path, "r+");
    cr_assert(f);
    fputc('X', f);
    fclose(f);
    cr_assert_eq(chmod(path, 0444), 0);
    cr_assert_null(builds_path(c, sha), "a changed cached net was used");
    builds_destroy(&c);
}

/*
 * Worker releases (SIGN_WORKER, the worker's versions folder): only a
 * worker release's signature of a trusted key installs one, whatever
 * allow_unsigned says (a release runs unboxed); a build's signature does
 * not pass for it; corrupt bytes are not installed; the signed name says
 * the protocol version.
 */
Test(builds, worker_releases_are_taken_only_signed_as_releases)
{
    char err[512], path[256], name[XQF_NAME_MAX + 1];
    const char *release = "xqf-worker-14";
    /* allow_unsigned on: it must not apply */
    BuildCache *c = builds_new_kind(cache, SIGN_WORKER, &trust, true, false);
    cr_assert_not_null(c);
    snprintf(path, sizeof path, "%s/%s", cache, sha);
    XqfMsg m;
    cr_assert_eq(builds_want(c, sha), 0);
    cr_assert(builds_next_request(c, 1, &m));
    cr_assert_str_eq(m.u.build_request.kind, "worker");
    xqf_msg_free(&m);
    cr_assert_eq(feed_bytes(c, SIGN_WORKER, BYTES, sizeof BYTES - 1, release, NULL, err, sizeof err), -2);
    cr_assert_not_null(strstr(err, "unsigned worker release"), "%s", err);
    cr_assert_eq(builds_want(c, sha), 0);
    cr_assert_eq(feed_bytes(c, SIGN_BUILD, BYTES, sizeof BYTES - 1, release, &op, err, sizeof err), -2,
                 "a build's signature was taken for a worker release's");
    cr_assert_eq(builds_want(c, sha), 0);
    cr_assert_eq(feed_bytes(c, SIGN_WORKER, BYTES, sizeof BYTES - 1, release, &other, err, sizeof err), -2);
    cr_assert_not_null(strstr(err, "not signed by a trusted operator key"), "%s", err);
    char corrupted[sizeof BYTES];
    memcpy(corrupted, BYTES, sizeof BYTES);
    corrupted[5] ^= 1;
    cr_assert_eq(builds_want(c, sha), 0);
    cr_assert_eq(feed_bytes(c, SIGN_WORKER, corrupted, sizeof BYTES - 1, release, &op, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, "do not have its SHA-256"), "%s", err);
    cr_assert_neq(access(path, F_OK), 0, "a refused release was installed");
    cr_assert_eq(builds_want(c, sha), 0);
    cr_assert_eq(feed_bytes(c, SIGN_WORKER, BYTES, sizeof BYTES - 1, release, &op, err, sizeof err), 1, "%s", err);
    cr_assert_str_eq(builds_path(c, sha), path);
    cr_assert_eq(builds_name(c, sha, name), 0);
    cr_assert_str_eq(name, release);
    cr_assert_eq(release_protocol(name), 14);
    builds_destroy(&c);
    /* the same bytes are no engine build: the release's signature does not make one */
    for (int allow_unsigned = 0; allow_unsigned < 2; allow_unsigned++) {
        c = builds_new(cache, &trust, allow_unsigned, false);
        cr_assert_null(builds_path(c, sha), "a worker release's signature was taken for a build's");
        builds_destroy(&c);
    }
    /* names that say no protocol */
    cr_assert_eq(release_protocol("xqf-worker-14-r2"), 14);
    cr_assert_eq(release_protocol("xqf-worker-"), 0);
    cr_assert_eq(release_protocol("xqf-worker-x"), 0);
    cr_assert_eq(release_protocol("xqf-worker-0"), 0);
    cr_assert_eq(release_protocol("xqf-worker-14x"), 0);
    cr_assert_eq(release_protocol("xqf-engine-14"), 0);
}

/*
 * A signature cannot be taken back, so a trust file can revoke a SHA-256:
 * a build signed by a trusted key is refused once its SHA-256 is revoked,
 * fetched or already cached.  Bad revoke lines are refused with the line.
 */
Test(builds, a_revoked_build_is_refused_though_signed)
{
    char err[512], path[256], text[512];
    BuildCache *c = builds_new(cache, &trust, false, false);
    want(c);
    cr_assert_eq(feed(c, "test-build", &op, err, sizeof err), 1, "%s", err);
    cr_assert_not_null(builds_path(c, sha));
    builds_destroy(&c);
    snprintf(path, sizeof path, "%s/op.pub", dir);
    FILE *f = fopen(path, "r");
    cr_assert(f);
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    snprintf(text + len, sizeof text - len, "# taken back\nrevoke %s\n", sha);
    TrustList revoking;
    cr_assert_eq(trust_parse(text, "trust", &revoking, err, sizeof err), 0, "%s", err);
    cr_assert_eq(revoking.nrevoked, 1);
    c = builds_new(cache, &revoking, false, false);
    cr_assert_null(builds_path(c, sha), "a revoked build in the cache was used");
    want(c);
    cr_assert_eq(feed(c, "test-build", &op, err, sizeof err), -2);
    cr_assert(strstr(err, "revoked"), "%s", err);
    builds_destroy(&c);
    cr_assert_neq(trust_parse("sign-public 00\nrevoke abc\n", "trust", &revoking, err, sizeof err), 0);
    cr_assert(strstr(err, "trust: line 1") || strstr(err, "trust: line 2"), "%s", err);
    char bad[sizeof text + 96];
    snprintf(bad, sizeof bad, "%srevoke %.63sG\n", text, sha);
    cr_assert_neq(trust_parse(bad, "trust", &revoking, err, sizeof err), 0);
    cr_assert(strstr(err, "revoke takes a SHA-256"), "%s", err);
}

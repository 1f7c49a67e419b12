/*
 * xqf-keys: CURVE keys of the coordinator and the workers, and the
 * coordinator's allow-list of worker keys (formats in keys.h).
 *
 *   xqf-keys new FILE                      key pair in FILE (0600), public key in FILE.pub
 *   xqf-keys allow ALLOWLIST NAME KEYFILE  allow the public key of KEYFILE as NAME
 *   xqf-keys revoke ALLOWLIST NAME         remove NAME
 *   xqf-keys list ALLOWLIST                print "NAME KEY" lines, by name
 *   xqf-keys sign-new FILE                 operator signing key pair (Ed25519) in FILE, public in FILE.pub
 *   xqf-keys sign KEYFILE BINARY NAME      print the signature of the build BINARY named NAME
 *   xqf-keys sign-worker KEYFILE BINARY    sign the worker release BINARY into BINARY.release
 *
 * The coordinator re-reads its allow-list when the file changes: allow
 * and revoke take effect at once, revoke for the connection of NAME that
 * is open as well.  Edits hold a lock (ALLOWLIST.lock), so concurrent ones
 * cannot undo each other.  Operator keys (sign-new, sign) are Ed25519 and
 * sign engine builds (keys.h): workers run only builds their --trust file's
 * keys signed.  Exit status: 0 done (or nothing to change), 1 failure
 * (I/O, a malformed file, a name to revoke that is not there), 2 bad usage
 * (a bad NAME included).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "keys.h"
#include "release.h"
#include "sha256.h"

static void usage(FILE *out)
{
    fputs("Usage: xqf-keys new FILE\n"
          "       xqf-keys allow ALLOWLIST NAME KEYFILE\n"
          "       xqf-keys revoke ALLOWLIST NAME\n"
          "       xqf-keys list ALLOWLIST\n"
          "       xqf-keys sign-new FILE\n"
          "       xqf-keys sign KEYFILE BINARY NAME\n"
          "       xqf-keys sign-worker KEYFILE BINARY\n"
          "\n"
          "CURVE keys for xqf-coordinator and xqf-worker, the coordinator's allow-list, and\n"
          "the operator keys that sign engine builds (only signed builds run on workers).\n"
          "\n"
          "  new FILE       a key pair in FILE (mode 0600: the secret, for --curve-secret)\n"
          "                 and its public key in FILE.pub (for the other side); never\n"
          "                 overwrites\n"
          "  allow ALLOWLIST NAME KEYFILE\n"
          "                 allows the public key of KEYFILE (a worker's FILE.pub) as NAME,\n"
          "                 replacing NAME's key; creates ALLOWLIST if needed\n"
          "  revoke ALLOWLIST NAME\n"
          "                 removes NAME: its new connections are refused, and what its\n"
          "                 open one sends is dropped\n"
          "  list ALLOWLIST prints the allowed workers, \"NAME KEY\" by name\n"
          "  sign-new FILE  an operator signing key pair (Ed25519) in FILE (mode 0600: for\n"
          "                 xqf-tune build --sign-key and sign) and its public key in\n"
          "                 FILE.pub (for the workers' --trust file); never overwrites\n"
          "  sign KEYFILE BINARY NAME\n"
          "                 prints \"SHA-256 HEX\" and \"Signature: HEX\" for the engine\n"
          "                 binary BINARY registered as NAME: give it to\n"
          "                 xqf-tune build --binary BINARY --name NAME --signature HEX\n"
          "                 (the key need not be on the machine of the database)\n"
          "  sign-worker KEYFILE BINARY\n"
          "                 signs the xqf-worker BINARY as a worker release named\n"
          "                 xqf-worker-<its protocol version> (asked of it: BINARY\n"
          "                 --protocol) into BINARY.release, for xqf-coordinator\n"
          "                 --worker-release BINARY: workers update themselves to it\n"
          "NAME: 1-64 characters of A-Z a-z 0-9 . _ -\n",
          out);
}

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("xqf-keys: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" (see --help)\n", stderr);
    va_end(ap);
    return 2;
}

static int failed(const char *err)
{
    fprintf(stderr, "xqf-keys: error: %s\n", err);
    return 1;
}

static int cmd_new(const char *path)
{
    KeyPair k;
    char err[512];
    if (keys_generate(path, &k, err, sizeof err) != 0)
        return failed(err);
    printf("key pair in %s (keep it secret), public key %s in %s.pub\n", path, k.public_key, path);
    keys_wipe(&k);
    return 0;
}

static int cmd_allow(const char *list, const char *name, const char *keyfile)
{
    KeyPair k;
    char err[512];
    if (keys_read(keyfile, false, &k, err, sizeof err) != 0)
        return failed(err);
    int rc = allow_edit(list, name, k.public_key, err, sizeof err);
    if (rc < 0)
        return failed(err);
    printf(rc ? "%s is already allowed with key %s\n" : "allowed %s with key %s\n", name, k.public_key);
    return 0;
}

static int cmd_revoke(const char *list, const char *name)
{
    char err[512];
    if (allow_edit(list, name, NULL, err, sizeof err) != 0)
        return failed(err);
    printf("revoked %s\n", name);
    return 0;
}

static int cmd_list(const char *path)
{
    AllowList a;
    char err[512];
    if (allow_read(path, &a, err, sizeof err) != 0)
        return failed(err);
    for (int i = 0; i < a.count; i++)
        printf("%s %s\n", a.v[i].name, a.v[i].key);
    allow_free(&a);
    return 0;
}

static int cmd_sign_new(const char *path)
{
    SignKey k;
    char err[512], hex[SIGN_KEY_HEX + 1];
    if (sign_key_generate(path, &k, err, sizeof err) != 0)
        return failed(err);
    sign_key_hex(&k, hex);
    printf("operator key pair in %s (keep it secret), public key %s in %s.pub\n", path, hex, path);
    sign_key_wipe(&k);
    return 0;
}

static int cmd_sign(const char *keyfile, const char *binary, const char *name)
{
    SignKey k;
    char err[512], sha[SHA256_HEX_LEN + 1], sig[SIGN_SIG_HEX + 1];
    if (sha256_file(binary, sha) != 0) {
        snprintf(err, sizeof err, "%s: cannot read: %s", binary, strerror(errno));
        return failed(err);
    }
    if (sign_key_read(keyfile, true, &k, err, sizeof err) != 0)
        return failed(err);
    int rc = sign_build(&k, sha, name, sig, err, sizeof err);
    sign_key_wipe(&k);
    if (rc != 0)
        return failed(err);
    printf("SHA-256: %s\nSignature: %s\n", sha, sig);
    return 0;
}

/*
 * A worker release: BINARY hashed, its protocol version asked of it (the
 * number is signed with it: a worker never restarts into a binary that
 * speaks another than its signature says), signed into BINARY.release.
 */
static int cmd_sign_worker(const char *keyfile, const char *binary)
{
    SignKey k;
    Release r;
    char err[512], path[4096];
    memset(&r, 0, sizeof r);
    if (snprintf(path, sizeof path, "%s.release", binary) >= (int)sizeof path)
        return failed("BINARY: path too long");
    if (sha256_file(binary, r.sha256) != 0) {
        snprintf(err, sizeof err, "%s: cannot read: %s", binary, strerror(errno));
        return failed(err);
    }
    if (release_ask_protocol(binary, &r.protocol, err, sizeof err) != 0)
        return failed(err);
    snprintf(r.name, sizeof r.name, "xqf-worker-%u", r.protocol);
    if (sign_key_read(keyfile, true, &k, err, sizeof err) != 0)
        return failed(err);
    int rc = sign_artifact(&k, SIGN_WORKER, r.sha256, r.name, r.signature, err, sizeof err);
    sign_key_wipe(&k);
    if (rc != 0 || release_write(path, &r, err, sizeof err) != 0)
        return failed(err);
    printf("worker release %s (protocol %u), SHA-256 %s, signed into %s\n", r.name, r.protocol, r.sha256, path);
    return 0;
}

typedef enum { CMD_NEW, CMD_ALLOW, CMD_REVOKE, CMD_LIST, CMD_SIGN_NEW, CMD_SIGN, CMD_SIGN_WORKER, CMD_COUNT } Command;

static const struct {
    const char *name;
    int args;
} COMMANDS[CMD_COUNT] = { { "new", 1 },      { "allow", 3 }, { "revoke", 2 },     { "list", 1 },
                          { "sign-new", 1 }, { "sign", 3 },  { "sign-worker", 2 } };

int main(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    if (argc < 2)
        return usage_error("give a command: new, allow, revoke, list, sign-new, sign or sign-worker");
    Command c = CMD_NEW;
    while (c < CMD_COUNT && strcmp(COMMANDS[c].name, argv[1]) != 0)
        c++;
    if (c == CMD_COUNT)
        return usage_error("unknown command '%s'", argv[1]);
    if (argc - 2 != COMMANDS[c].args)
        return usage_error("%s takes %d argument%s", argv[1], COMMANDS[c].args, COMMANDS[c].args > 1 ? "s" : "");
    if ((c == CMD_ALLOW || c == CMD_REVOKE) && !keys_name_ok(argv[3]))
        return usage_error("bad NAME '%s': 1-%d characters of A-Z a-z 0-9 . _ -", argv[3], KEYS_NAME_MAX);
    if (c == CMD_SIGN && !sign_name_ok(argv[4]))
        return usage_error("bad NAME '%s': 1-%d printable characters, no space", argv[4], SIGN_NAME_MAX);
    switch (c) {
    case CMD_SIGN_NEW:
        return cmd_sign_new(argv[2]);
    case CMD_SIGN:
        return cmd_sign(argv[2], argv[3], argv[4]);
    case CMD_SIGN_WORKER:
        return cmd_sign_worker(argv[2], argv[3]);
    case CMD_NEW:
        return cmd_new(argv[2]);
    case CMD_ALLOW:
        return cmd_allow(argv[2], argv[3], argv[4]);
    case CMD_REVOKE:
        return cmd_revoke(argv[2], argv[3]);
    default:
        return cmd_list(argv[2]);
    }
}

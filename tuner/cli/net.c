/*
 * net.c - xqf-tune net add|list|show: nets (NNUE weights, docs/nnue.md)
 * as artifacts of the system, as builds are (025_nets.sql): a file the
 * engine's reader takes is registered by its SHA-256 with its own
 * description, the operator's provenance and signature (keys.h, SIGN_NET),
 * and its bytes, which the coordinator serves to workers.  Also the
 * operator signing that build and net add share, and the --test-net /
 * --base-net / --net argument of new runs.
 */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "nnue.h"
#include "sha256.h"
#include "store_nets.h"
#include "store_runs.h"

static const OptSpec NET_OPTIONS[] = {
    { "--name", OPT_TEXT, "NAME", NULL, .help = "add: its name (default xqf-<first 12 hex of its SHA-256>.nnue)" },
    { "--sign-key", OPT_TEXT, "FILE", NULL, .help = "add: sign it with this operator key (xqf-keys sign-new)" },
    { "--signature", OPT_TEXT, "HEX", NULL, .help = "add: its signature (keys.h, xqf-net-v1) made elsewhere" },
    { "--provenance", OPT_TEXT, "TEXT", NULL, .help = "add: where it came from: data, training settings" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable NET_TABLE = {
    .program = "xqf-tune", .spec = NET_OPTIONS, .max_positional = 2,
    .usage =
        "Usage: xqf-tune net add FILE [--name NAME] [--sign-key FILE | --signature HEX]\n"
        "                        [--provenance TEXT] [--db CONNINFO]\n"
        "       xqf-tune net list [--db CONNINFO]\n"
        "       xqf-tune net show ID|SHA|NAME [--db CONNINFO]\n"
        "\n"
        "add registers a net file (docs/nnue.md) that the engine's reader takes (a file\n"
        "it refuses is not recorded: its words, exit 2) by its SHA-256, with the\n"
        "file's own description, --provenance and its bytes, which workers fetch on\n"
        "first use as they fetch builds.  --sign-key signs its SHA-256 and name with\n"
        "the operator's key, as xqf-tune build does; an unsigned net is recorded with\n"
        "a warning: only workers started with --allow-unsigned load it.  Runs name a\n"
        "net per side: sprt new and games new --test-net and --base-net, spsa new\n"
        "--net (ID, SHA-256 or name, or none for the hand-crafted evaluation).\n",
    .epilog = "\n"
              "add prints:\n"
              "  Net: ID\n"
              "  SHA-256: HEX\n"
              "  Signature: HEX|none\n",
};

/* ---- operator signatures (xqf-tune build and net add; keys.h) ---------------- */

int cli_signing_load(const Opts *o, CliSigning *sg)
{
    char err[512];
    memset(sg, 0, sizeof *sg);
    sg->signature = opts_text(o, "--signature");
    if (opts_given(o, "--sign-key") && sg->signature)
        return cli_fail(CLI_USAGE, "give --sign-key or --signature, not both");
    if (sg->signature && (strlen(sg->signature) != SIGN_SIG_HEX ||
                          strspn(sg->signature, "0123456789abcdef") != SIGN_SIG_HEX))
        return cli_fail(CLI_USAGE, "--signature: %d lowercase hex digits, as xqf-keys sign prints", SIGN_SIG_HEX);
    if (opts_given(o, "--sign-key")) {
        if (sign_key_read(opts_text(o, "--sign-key"), true, &sg->key, err, sizeof err) != 0)
            return cli_fail(CLI_USAGE, "--sign-key: %s", err);
        sg->has_key = true;
    }
    return CLI_OK;
}

int cli_signing_apply(CliSigning *sg, SignKind kind, const char *sha256, const char *name,
                      char signature[SIGN_SIG_HEX + 1])
{
    char err[512];
    const char *what = kind == SIGN_NET ? "net" : "build";
    if (sg->has_key && sign_artifact(&sg->key, kind, sha256, name, signature, err, sizeof err) != 0)
        return cli_fail(CLI_FAIL, "cannot sign: %s", err);
    if (!sg->has_key && sg->signature)
        snprintf(signature, SIGN_SIG_HEX + 1, "%s", sg->signature);
    if (!signature[0])
        fprintf(stderr, "xqf-tune: warning: an unsigned %s: workers %s it only with --allow-unsigned "
                        "(sign it with --sign-key FILE)\n", what, kind == SIGN_NET ? "load" : "play");
    printf("Signature: %s\n", signature[0] ? signature : "none");
    return CLI_OK;
}

/* ---- net add, list, show ---------------------------------------------------- */

/*
 * text as PostgreSQL's text takes it: valid UTF-8, no control characters
 * but newline and tab; anything else becomes '?' (a description is free
 * text the file's writer chose).
 */
static void clean_text(char *text)
{
    unsigned char *p = (unsigned char *)text;
    while (*p) {
        int len = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 && *p >= 0xc2 ? 2 : (*p & 0xf0) == 0xe0 ? 3
                  : (*p & 0xf8) == 0xf0 && *p <= 0xf4 ? 4 : 0;
        bool ok = len > 0;
        for (int i = 1; ok && i < len; i++)
            ok = (p[i] & 0xc0) == 0x80;
        /* no overlong forms, no surrogates, nothing above U+10FFFF: what PostgreSQL refuses */
        if (ok && ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) ||
                   (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90)))
            ok = false;
        if (len == 1 && ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f))
            ok = false;
        if (!ok) {
            *p++ = '?';
            continue;
        }
        p += len;
    }
}

/*
 * The file at path, read once: its bytes (at most limit + 1: a longer
 * file is refused by the reader for its trailing bytes) in *out
 * (malloc'd) and their SHA-256, hashed from the same descriptor.  Exit
 * status.
 */
static int read_net_file(const char *path, size_t limit, uint8_t **out, size_t *len, char sha[SHA256_HEX_LEN + 1])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cli_fail(CLI_USAGE, "net add: cannot read '%s': %s", path, strerror(errno));
    uint8_t *buf = malloc(limit + 1);
    size_t n = 0;
    ssize_t got = 1;
    while (buf && n < limit + 1 && (got = read(fd, buf + n, limit + 1 - n)) > 0)
        n += (size_t)got;
    bool ok = buf && got >= 0 && sha256_fd(fd, sha) == 0;
    close(fd);
    if (!ok) {
        /* a path that cannot be read (a folder, say) is bad input; memory is this program's failure */
        int status = buf ? CLI_USAGE : CLI_FAIL;
        const char *why = buf ? strerror(errno) : "out of memory";
        free(buf);
        return cli_fail(status, "net add: cannot read '%s': %s", path, why);
    }
    *out = buf;
    *len = n;
    return CLI_OK;
}

int cli_net_register(Store *s, const char *path, const char *name, const char *prov, CliSigning *sg, bool reuse,
                     int64_t *id)
{
    StoreNet n = { 0 };
    if (name && !sign_name_ok(name))
        return cli_fail(CLI_USAGE, "--name: 1 to %d printable characters without spaces, please", SIGN_NAME_MAX);
    if (prov && strlen(prov) > STORE_TEXT_MAX)
        return cli_fail(CLI_USAGE, "--provenance: at most %d bytes", STORE_TEXT_MAX);
    uint8_t *bytes = NULL;
    size_t len = 0;
    int status = read_net_file(path, NNUE_HEADER_BYTES + NNUE_DESCRIPTION_MAX + NNUE_BODY_BYTES, &bytes, &len,
                               n.sha256);
    if (status != CLI_OK)
        return status;
    /* the bytes stored and hashed are the bytes the engine's reader took */
    char err[512];
    NnueNet *net = nnue_load_memory(bytes, len, err, sizeof err);
    if (!net) {
        free(bytes);
        return cli_fail(CLI_USAGE, "net add: '%s' is not a net the engine takes: %s", path, err);
    }
    snprintf(n.description, sizeof n.description, "%s", net->description);
    clean_text(n.description);
    nnue_destroy(&net);
    int known = store_net_of_sha(s, n.sha256, id);
    if (known < 0)
        status = cli_fail(CLI_FAIL, "cannot read the nets");
    else if (known && reuse) {
        printf("SHA-256: %s\nNet: %" PRId64 " (registered already)\n", n.sha256, *id);
        free(bytes);
        return CLI_OK;
    } else if (known)
        status = cli_fail(CLI_USAGE, "net add: '%s' is registered already, as net %" PRId64 " (xqf-tune net show %"
                          PRId64 ")", path, *id, *id);
    if (status == CLI_OK) {
        if (name)
            snprintf(n.name, sizeof n.name, "%s", name);
        else
            snprintf(n.name, sizeof n.name, "xqf-%.12s.nnue", n.sha256);
        /* a name names one net: what is signed, what the PGN says */
        StoreNet *other = calloc(1, sizeof *other);
        int taken = other ? store_load_net(s, n.name, other) : -1;
        if (taken < 0)
            status = cli_fail(CLI_FAIL, "cannot read the nets");
        else if (taken && strcmp(other->name, n.name) == 0)
            status = cli_fail(CLI_USAGE, "--name: '%s' is net %" PRId64 "'s already", n.name, other->id);
        free(other);
    }
    if (status == CLI_OK) {
        snprintf(n.provenance, sizeof n.provenance, "%s", prov ? prov : "");
        clean_text(n.provenance);
        cli_actor(n.added_by, sizeof n.added_by);
        printf("SHA-256: %s\n", n.sha256);
        status = cli_signing_apply(sg, SIGN_NET, n.sha256, n.name, n.signature);
    }
    if (status == CLI_OK && store_add_net(s, &n, bytes, len, id) != 0)
        status = cli_fail(CLI_FAIL, "cannot record the net (is the name '%s' taken? xqf-tune net list)", n.name);
    if (status == CLI_OK)
        printf("Net: %" PRId64 "\nName: %s\n", *id, n.name);
    free(bytes);
    return status;
}

static int net_add(const Opts *o)
{
    if (o->npositional != 2)
        return cli_fail(CLI_USAGE, "net add: give the net file (see xqf-tune net --help)");
    const char *name = opts_text(o, "--name");
    if (name && !sign_name_ok(name))
        return cli_fail(CLI_USAGE, "--name: 1 to %d printable characters without spaces, please", SIGN_NAME_MAX);
    CliSigning sg;
    Store *s = NULL;
    int64_t id = 0;
    int status = cli_signing_load(o, &sg);
    if (status == CLI_OK && (status = cli_open_db(o, &s)) == CLI_OK)
        status = cli_net_register(s, o->positional[1], name, opts_text(o, "--provenance"), &sg, false, &id);
    sign_key_wipe(&sg.key);
    store_destroy(&s);
    return status;
}

static int net_list(const Opts *o)
{
    if (o->npositional != 1)
        return cli_fail(CLI_USAGE, "net list takes no argument");
    Store *s = NULL;
    int status = cli_open_db(o, &s);
    StoreNet *nets = NULL;
    int n = status == CLI_OK ? store_list_nets(s, &nets) : 0;
    if (n < 0)
        status = cli_fail(CLI_FAIL, "cannot read the nets");
    for (int i = 0; i < n; i++)
        printf("%" PRId64 " %s %s %s %s%s\n", nets[i].id, cli_shown(nets[i].name), nets[i].sha256,
               nets[i].signature[0] ? "signed" : "unsigned", nets[i].created, nets[i].approved ? "" : " waiting");
    free(nets);
    store_destroy(&s);
    return status;
}

static int net_show(const Opts *o)
{
    if (o->npositional != 2)
        return cli_fail(CLI_USAGE, "net show: give the net's ID, SHA-256 or name");
    Store *s = NULL;
    int status = cli_open_db(o, &s);
    StoreNet *n = calloc(1, sizeof *n);
    int found = status == CLI_OK && n ? store_load_net(s, o->positional[1], n) : -1;
    if (status == CLI_OK && found < 0)
        status = cli_fail(CLI_FAIL, "cannot read the nets");
    else if (status == CLI_OK && found == 0)
        status = cli_fail(CLI_USAGE, "no net '%s' (xqf-tune net list)", o->positional[1]);
    if (status == CLI_OK)
        printf("Net: %" PRId64 "\nName: %s\nSHA-256: %s\nSize: %" PRId64 " bytes\nSignature: %s\n"
               "Added by: %s\nCreated: %s\nProvenance: %s\nDescription: %s\nState: %s%s%s\n",
               n->id, cli_shown(n->name), n->sha256, n->size, n->signature[0] ? n->signature : "none",
               cli_shown(n->added_by), n->created, cli_shown(n->provenance), cli_shown(n->description),
               n->approved ? "approved" : "waiting for an admin's approval (xqf-web /nets)",
               n->approved && n->approved_by[0] ? " by " : "", n->approved ? cli_shown(n->approved_by) : "");
    free(n);
    store_destroy(&s);
    return status;
}

int tune_cmd_net(int argc, char **argv)
{
    Opts o;
    int status = cli_parse(&o, &NET_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO)
        return status;
    const char *sub = o.npositional ? o.positional[0] : "";
    bool add = strcmp(sub, "add") == 0;
    if (!add && (opts_given(&o, "--name") || opts_given(&o, "--sign-key") || opts_given(&o, "--signature") ||
                 opts_given(&o, "--provenance")))
        return cli_fail(CLI_USAGE, "--name, --sign-key, --signature and --provenance go with net add");
    if (add)
        return net_add(&o);
    if (strcmp(sub, "list") == 0)
        return net_list(&o);
    if (strcmp(sub, "show") == 0)
        return net_show(&o);
    return cli_fail(CLI_USAGE, "net: add, list or show (see xqf-tune net --help)");
}

/* ---- a side's net in a new run ------------------------------------------------ */

int cli_net_arg(Store *s, const char *option, const char *value, int64_t *id)
{
    *id = 0;
    if (!value)
        return CLI_OK;
    if (strcmp(value, "none") == 0) {
        *id = STORE_NET_NONE;
        return CLI_OK;
    }
    StoreNet *n = calloc(1, sizeof *n);
    int found = n ? store_load_net(s, value, n) : -1;
    if (found > 0 && !n->approved) {
        int status = cli_fail(CLI_USAGE, "%s: net %" PRId64 " (%s) waits for an admin's approval (xqf-web /nets)",
                              option, n->id, n->name);
        free(n);
        return status;
    }
    if (found > 0 && !n->signature[0])
        fprintf(stderr, "xqf-tune: warning: %s: net %" PRId64 " (%s) is unsigned: only workers started with "
                        "--allow-unsigned load it\n", option, n->id, n->name);
    if (found > 0)
        *id = n->id;
    free(n);
    if (found < 0)
        return cli_fail(CLI_FAIL, "cannot read the nets");
    return found ? CLI_OK : cli_fail(CLI_USAGE, "%s: no net '%s' (an ID, SHA-256 or name of xqf-tune net list, or none)",
                                     option, value);
}

/* ---- a registered net written to a file (build --net) ----------------------------- */

int cli_net_lookup(Store *s, const char *option, const char *key, CliNetFile *nf)
{
    memset(nf, 0, sizeof *nf);
    if (strcmp(key, "none") == 0)
        return cli_fail(CLI_USAGE, "%s: a registered net (an ID, SHA-256 or name of xqf-tune net list); a build "
                        "without --net has none", option);
    StoreNet *n = calloc(1, sizeof *n);
    int found = n ? store_load_net(s, key, n) : -1;
    if (found > 0 && !n->approved) {
        int status = cli_fail(CLI_USAGE, "%s: net %" PRId64 " (%s) waits for an admin's approval (xqf-web /nets)",
                              option, n->id, n->name);
        free(n);
        return status;
    }
    if (found > 0) {
        nf->id = n->id;
        snprintf(nf->name, sizeof nf->name, "%s", n->name);
        snprintf(nf->sha256, sizeof nf->sha256, "%s", n->sha256);
    }
    free(n);
    if (found < 0)
        return cli_fail(CLI_FAIL, "cannot read the nets");
    return found ? CLI_OK : cli_fail(CLI_USAGE, "%s: no net '%s' (an ID, SHA-256 or name of xqf-tune net list)",
                                     option, key);
}

int cli_net_write(Store *s, CliNetFile *nf)
{
    const char *tmpdir = getenv("TMPDIR");
    snprintf(nf->dir, sizeof nf->dir, "%s/xqf-net-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(nf->dir)) {
        nf->dir[0] = '\0';
        return cli_fail(CLI_FAIL, "cannot make a temporary folder: %s", strerror(errno));
    }
    chmod(nf->dir, 0755);
    if ((size_t)snprintf(nf->path, sizeof nf->path, "%s/xqf-%.12s.nnue", nf->dir, nf->sha256) >= sizeof nf->path) {
        nf->path[0] = '\0';
        cli_net_drop(nf);
        return cli_fail(CLI_FAIL, "TMPDIR is too long");
    }
    enum { CHUNK = 1 << 20 };
    char *buf = malloc(CHUNK), name[STORE_NAME_MAX + 1], sig[STORE_SIG_HEX + 1], hex[SHA256_HEX_LEN + 1], err[512];
    FILE *f = buf ? fopen(nf->path, "wb") : NULL;
    int status = f ? CLI_OK : cli_fail(CLI_FAIL, "cannot write '%s': %s", nf->path, strerror(errno));
    for (int64_t off = 0, total = 1; status == CLI_OK && off < total;) {
        size_t len = 0;
        if (store_net_chunk(s, nf->sha256, off, CHUNK, buf, &len, &total, name, sig) != 1 || (len == 0 && total > 0))
            status = cli_fail(CLI_FAIL, "cannot read the bytes of net %" PRId64 " (%s)", nf->id, nf->name);
        else if (fwrite(buf, 1, len, f) != len)
            status = cli_fail(CLI_FAIL, "cannot write '%s': %s", nf->path, strerror(errno));
        off += (int64_t)len;
    }
    free(buf);
    if (f && fclose(f) != 0 && status == CLI_OK)
        status = cli_fail(CLI_FAIL, "cannot write '%s': %s", nf->path, strerror(errno));
    /* what is compiled in is what was registered: its SHA-256, and a net the engine's reader takes */
    if (status == CLI_OK && (sha256_file(nf->path, hex) != 0 || strcmp(hex, nf->sha256) != 0))
        status = cli_fail(CLI_FAIL, "net %" PRId64 " (%s): its stored bytes are not its SHA-256 %.16s", nf->id,
                          nf->name, nf->sha256);
    NnueNet *net = status == CLI_OK ? nnue_load_file(nf->path, err, sizeof err) : NULL;
    if (status == CLI_OK && !net)
        status = cli_fail(CLI_FAIL, "net %" PRId64 " (%s) is refused by the engine's reader: %s", nf->id, nf->name, err);
    nnue_destroy(&net);
    if (status == CLI_OK)
        chmod(nf->path, 0444);
    else
        cli_net_drop(nf);
    return status;
}

void cli_net_drop(CliNetFile *nf)
{
    if (nf->path[0])
        unlink(nf->path);
    if (nf->dir[0])
        rmdir(nf->dir);
    nf->path[0] = nf->dir[0] = '\0';
}

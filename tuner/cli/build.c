/*
 * build.c - xqf-tune build: a tuned xqf-engine compiled with a run's
 * export as its defaults, or any engine binary, benched, hashed and
 * recorded (with its bytes, which workers fetch) in the engine builds
 * table.
 */
#define _DEFAULT_SOURCE /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "files.h"
#include "keys.h"
#include "sha256.h"

enum { BINARY_MAX = 256 << 20, BENCH_OUT_MAX = 1 << 16 };

static const OptSpec BUILD_OPTIONS[] = {
    { "--out", OPT_TEXT, "DIR", "build-tuned", .help = "where the parameter file, build and binary go" },
    { "--source", OPT_TEXT, "DIR", XQF_SOURCE_DIR, .help = "the source tree" },
    { "--jobs", OPT_INT, "N", NULL, .imin = 1, .imax = 1024, .help = "parallel compile jobs (default: online cores)" },
    { "--binary", OPT_TEXT, "FILE", NULL, .help = "register this engine binary instead" },
    { "--name", OPT_TEXT, "NAME", NULL, .help = "with --binary: its name (default xqf-engine-SHA12)" },
    { "--sign-key", OPT_TEXT, "FILE", NULL, .help = "sign the build with this operator key (xqf-keys sign-new)" },
    { "--signature", OPT_TEXT, "HEX", NULL, .help = "with --binary: its signature made elsewhere (xqf-keys sign)" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable BUILD_TABLE = {
    .program = "xqf-tune", .spec = BUILD_OPTIONS, .max_positional = 1,
    .usage =
        "Usage: xqf-tune build RUN [--out DIR] [--source DIR] [--jobs N] [--sign-key FILE] [--db CONNINFO]\n"
        "       xqf-tune build --binary FILE [--name NAME] [--sign-key FILE | --signature HEX] [--db CONNINFO]\n"
        "A tuned engine: xqf-engine compiled with the run's exported parameters as its\n"
        "defaults (cmake -DXQF_PARAMS_FILE), named with the run id and the parameter\n"
        "set's hash (HASH, 16 hex digits).  In DIR:\n"
        "    run-RUN-HASH.params      the exported parameter file\n"
        "    run-RUN-HASH/            the build directory (its log: build.log)\n"
        "    xqf-engine-runRUN-HASH   the binary\n"
        "Runs the binary's bench, records the build (run, parameter hash, SHA-256,\n"
        "bench signature, path) in the engine builds table and prints:\n"
        "    Parameters: FILE (set HASH)\n"
        "    Bench: N\n"
        "    SHA-256: HEX\n"
        "    Signature: HEX (or none)\n"
        "    Build: ID\n"
        "    Binary: PATH\n"
        "The second form registers any xqf-engine binary (a search change built\n"
        "elsewhere), named NAME, the same way.  Either way the binary itself is\n"
        "stored in the database: workers fetch it by its SHA-256 (checked, cached)\n"
        "to play it, e.g. in `xqf-tune sprt new --test-build ID`.\n"
        "Workers run only builds signed by an operator key they trust (--trust):\n"
        "--sign-key signs the build's SHA-256 and name with the operator's secret key\n"
        "(xqf-keys sign-new FILE); --signature takes a signature made on another machine\n"
        "by `xqf-keys sign KEYFILE BINARY NAME`.  An unsigned build is recorded with a\n"
        "warning: only workers started with --allow-unsigned play it.\n",
};

/* snprintf into a path buffer: false when it did not fit. */
static bool path_fmt(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < size;
}

/* Appends "$ argv..." to the log. */
static void log_command(int logfd, char *const argv[])
{
    FILE *lf = fdopen(dup(logfd), "a");
    if (!lf)
        return;
    fputs("$", lf);
    for (int i = 0; argv[i]; i++)
        fprintf(lf, " %s", argv[i]);
    fputc('\n', lf);
    fclose(lf);
}

/* Reads fd to its end into capture (NUL-terminated, at most size - 1 bytes kept). */
static void read_all(int fd, char *capture, size_t size)
{
    size_t len = 0;
    ssize_t got;
    char sink[4096];
    while ((got = read(fd, len + 1 < size ? capture + len : sink, len + 1 < size ? size - 1 - len : sizeof sink)) > 0 ||
           (got < 0 && errno == EINTR))
        if (got > 0 && len + 1 < size)
            len += (size_t)got;
    capture[len] = '\0';
}

/*
 * Runs argv (searched in PATH): stdout into capture (NUL-terminated, at most
 * size - 1 bytes) or, when capture is NULL, appended to log; stderr appended
 * to log, after a "$ command" line.  Returns the exit status, or -1.
 */
static int spawn(char *const argv[], const char *log, char *capture, size_t size)
{
    int fds[2] = { -1, -1 };
    int logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (logfd < 0 || (capture && pipe(fds) != 0)) {
        if (logfd >= 0)
            close(logfd);
        return -1;
    }
    log_command(logfd, argv);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(capture ? fds[1] : logfd, STDOUT_FILENO);
        dup2(logfd, STDERR_FILENO);
        if (capture) {
            close(fds[0]);
            close(fds[1]);
        }
        execvp(argv[0], argv);
        dprintf(STDERR_FILENO, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(logfd);
    if (capture) {
        close(fds[1]);
        read_all(fds[0], capture, size);
        close(fds[0]);
    }
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return pid > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Copies an executable to dst (through dst.tmp, renamed); 0 or -1. */
static int copy_binary(const char *src, const char *dst)
{
    char tmp[PATH_MAX];
    if (!path_fmt(tmp, sizeof tmp, "%s.tmp", dst))
        return -1;
    FILE *in = fopen(src, "rb"), *out = in ? fopen(tmp, "wb") : NULL;
    int rc = in && out ? 0 : -1;
    char buf[1 << 16];
    size_t n;
    while (rc == 0 && (n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            rc = -1;
    if (in && ferror(in))
        rc = -1;
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        rc = -1;
    if (rc == 0 && (chmod(tmp, 0755) != 0 || rename(tmp, dst) != 0))
        rc = -1;
    if (rc != 0)
        unlink(tmp);
    return rc;
}

/* Reads a whole file (at most max bytes) into a malloc'd buffer; NULL on failure. */
static char *read_file(const char *path, size_t max, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *data = f ? malloc(max) : NULL;
    *len = data ? fread(data, 1, max, f) : 0;
    bool ok = data && !ferror(f) && *len < max;
    if (f)
        fclose(f);
    if (!ok) {
        free(data);
        return NULL;
    }
    return data;
}

/* The binary's bench signature ("Nodes searched: N"), printed. Exit status. */
static int bench(const char *binary, const char *log, int64_t *nodes)
{
    char *out = malloc(BENCH_OUT_MAX);
    char *args[] = { (char *)binary, "bench", NULL };
    const char *line = out && spawn(args, log, out, BENCH_OUT_MAX) == 0 ? strstr(out, "Nodes searched: ") : NULL;
    int ok = line && sscanf(line, "Nodes searched: %" SCNd64, nodes) == 1;
    free(out);
    if (!ok)
        return cli_fail(CLI_FAIL, "%s bench failed (see %s): is it an xqf-engine?", binary, log);
    printf("Bench: %" PRId64 "\n", *nodes);
    return CLI_OK;
}

/* Records the build and its bytes in one transaction, and prints its id (b->id). Exit status. */
static int record(Store *s, const char *binary, StoreBuild *b)
{
    size_t len;
    int64_t build_id = 0;
    char *bytes = read_file(binary, BINARY_MAX, &len);
    if (!bytes)
        return cli_fail(CLI_FAIL, "cannot read %s (or larger than %d MB)", binary, BINARY_MAX >> 20);
    bool own_tx = store_begin(s) == 0;
    bool ok = own_tx && store_add_build(s, b, &build_id) == 0 && store_build_blob(s, build_id, bytes, len) == 0 &&
              store_commit(s) == 0;
    free(bytes);
    if (!ok) {
        store_rollback(s);
        return cli_fail(CLI_FAIL, "cannot record the build");
    }
    printf("Build: %" PRId64 "\nBinary: %s\n", build_id, binary);
    b->id = build_id;
    return CLI_OK;
}

/* How a build is signed: with the operator's key, with a signature made elsewhere, or not at all. */
typedef struct {
    SignKey key;
    bool has_key;
    const char *signature;           /* --signature, or NULL */
} Signing;

/* Reads --sign-key / --signature into sg (before any long work). Exit status. */
static int signing_load(const Opts *o, Signing *sg)
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

/* The signature of b (sha256 and build_id set) into b->signature, printed. Exit status. */
static int signing_apply(Signing *sg, StoreBuild *b)
{
    char err[512];
    if (sg->has_key && sign_build(&sg->key, b->sha256, b->build_id, b->signature, err, sizeof err) != 0)
        return cli_fail(CLI_FAIL, "cannot sign: %s", err);
    if (!sg->has_key && sg->signature)
        snprintf(b->signature, sizeof b->signature, "%s", sg->signature);
    if (!b->signature[0])
        fprintf(stderr, "xqf-tune: warning: an unsigned build: workers play it only with --allow-unsigned "
                        "(sign it with --sign-key FILE)\n");
    printf("Signature: %s\n", b->signature[0] ? b->signature : "none");
    return CLI_OK;
}

/*
 * The tail of both forms of build: the binary's bench signature, SHA-256,
 * operator's signature, its row in the builds table and its bytes (what
 * workers fetch), printed.  b has the run, parameter hash and name filled
 * in.  Exit status.
 */
static int register_binary(Store *s, const char *binary, const char *log, StoreBuild *b, Signing *sg)
{
    int status = bench(binary, log, &b->bench_nodes);
    if (status != CLI_OK)
        return status;
    if (sha256_file(binary, b->sha256) != 0)
        return cli_fail(CLI_FAIL, "cannot hash %s", binary);
    printf("SHA-256: %s\n", b->sha256);
    if ((status = signing_apply(sg, b)) != CLI_OK)
        return status;
    if (!path_fmt(b->path, sizeof b->path, "%s", binary))
        return cli_fail(CLI_USAGE, "'%s': path too long", binary);
    return record(s, binary, b);
}

/* xqf-tune build --binary FILE: registers a binary built elsewhere. Exit status. */
static int build_binary(const Opts *o, Signing *sg)
{
    const char *binary = opts_text(o, "--binary"), *name = opts_text(o, "--name");
    char abs[PATH_MAX], log[PATH_MAX], sha[SHA256_HEX_LEN + 1];
    if (o->npositional != 0 || opts_given(o, "--out") || opts_given(o, "--source") || opts_given(o, "--jobs"))
        return cli_fail(CLI_USAGE, "build --binary FILE takes only --name, --sign-key, --signature and --db");
    if (access(binary, X_OK) != 0)
        return cli_fail(CLI_USAGE, "--binary: '%s' is not an executable file: %s", binary, strerror(errno));
    if (name && !sign_name_ok(name))
        return cli_fail(CLI_USAGE, "--name: 1 to %d printable characters without spaces, please", SIGN_NAME_MAX);
    if (!realpath(binary, abs))
        return cli_fail(CLI_USAGE, "--binary: '%s': %s", binary, strerror(errno));
    if (!path_fmt(log, sizeof log, "%s.bench.log", abs))
        return cli_fail(CLI_USAGE, "--binary: '%s': path too long", binary);
    if (sha256_file(abs, sha) != 0)
        return cli_fail(CLI_FAIL, "cannot hash %s", abs);
    StoreBuild b = { 0 };
    if (name)
        snprintf(b.build_id, sizeof b.build_id, "%s", name);
    else
        snprintf(b.build_id, sizeof b.build_id, "xqf-engine-%.12s", sha);
    Store *s = NULL;
    int status = cli_open_db(o, &s);
    if (status == CLI_OK)
        status = register_binary(s, abs, log, &b, sg);
    store_destroy(&s);
    return status;
}

/* Where a run's build goes, all under out (absolute). */
typedef struct {
    char hash[17], params_file[PATH_MAX], dir[PATH_MAX], log[PATH_MAX], built[PATH_MAX], binary[PATH_MAX];
} BuildPaths;

/* The paths of run id's build of the set p in out. Exit status. */
static int build_paths(const char *out, int64_t id, const Params *p, BuildPaths *bp)
{
    snprintf(bp->hash, sizeof bp->hash, "%016" PRIx64, params_hash(p));
    bool ok = path_fmt(bp->params_file, sizeof bp->params_file, "%s/run-%" PRId64 "-%s.params", out, id, bp->hash) &&
              path_fmt(bp->dir, sizeof bp->dir, "%s/run-%" PRId64 "-%s", out, id, bp->hash) &&
              path_fmt(bp->log, sizeof bp->log, "%s/build.log", bp->dir) &&
              path_fmt(bp->built, sizeof bp->built, "%s/bin/xqf-engine", bp->dir) &&
              path_fmt(bp->binary, sizeof bp->binary, "%s/xqf-engine-run%" PRId64 "-%s", out, id, bp->hash) &&
              strlen(bp->binary) <= STORE_TEXT_MAX;
    return ok ? CLI_OK : cli_fail(CLI_USAGE, "--out: '%s' is too long", out);
}

/* Configures and compiles xqf-engine with params_file as its defaults, copies the binary out. Exit status. */
static int compile(const char *source, const BuildPaths *bp, int64_t jobs, int64_t id)
{
    char def_params[PATH_MAX + 32], src_dir[PATH_MAX], dir[PATH_MAX], jobs_text[24];
    snprintf(def_params, sizeof def_params, "-DXQF_PARAMS_FILE=%s", bp->params_file);
    snprintf(src_dir, sizeof src_dir, "%s", source);
    snprintf(dir, sizeof dir, "%s", bp->dir);
    snprintf(jobs_text, sizeof jobs_text, "%" PRId64, jobs);
    char *configure[] = { "cmake", "-S", src_dir, "-B", dir, "-DCMAKE_BUILD_TYPE=Release", def_params,
                          "-DXQF_TESTS=OFF", NULL };
    char *build[] = { "cmake", "--build", dir, "--target", "xqf-engine", "-j", jobs_text, NULL };
    fprintf(stderr, "xqf-tune: building xqf-engine for run %" PRId64 " in %s\n", id, dir);
    if (spawn(configure, bp->log, NULL, 0) != 0 || spawn(build, bp->log, NULL, 0) != 0)
        return cli_fail(CLI_FAIL, "the build failed (see %s)", bp->log);
    if (copy_binary(bp->built, bp->binary) != 0)
        return cli_fail(CLI_FAIL, "cannot copy %s to %s: %s", bp->built, bp->binary, strerror(errno));
    return CLI_OK;
}

/* The build of run id: export, compile, register (*build its id). Exit status. */
static int build_run(Store *s, int64_t id, const char *source, const char *out, int64_t jobs, Signing *sg,
                     int64_t *build)
{
    StoreRun r;
    Params p;
    BuildPaths bp;
    int status;
    if ((status = cli_load_run(s, id, &r)) != CLI_OK || (status = cli_export_set(s, &r, &p)) != CLI_OK ||
        (status = build_paths(out, id, &p, &bp)) != CLI_OK ||
        (status = cli_write_export(&r, &p, bp.params_file)) != CLI_OK)
        return status;
    if (files_make_dirs(bp.dir) != 0)
        return cli_fail(CLI_FAIL, "cannot create '%s': %s", bp.dir, strerror(errno));
    printf("Parameters: %s (set %s)\n", bp.params_file, bp.hash);
    fflush(stdout);
    if ((status = compile(source, &bp, jobs, id)) != CLI_OK)
        return status;
    StoreBuild b = { .run_id = id };
    snprintf(b.params_hash, sizeof b.params_hash, "%s", bp.hash);
    snprintf(b.build_id, sizeof b.build_id, "xqf-engine-run%" PRId64 "-%s", id, bp.hash);
    status = register_binary(s, bp.binary, bp.log, &b, sg);
    *build = b.id;
    return status;
}

/* The online cores (at least 1). */
static int64_t online_cores(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? cores : 1;
}

int cli_build_run(Store *s, int64_t run, const char *source, const char *out, const char *sign_key, int64_t *build)
{
    Signing sg = { .has_key = false };
    char err[512], path[PATH_MAX];
    *build = 0;
    if (!path_fmt(path, sizeof path, "%s/engine/params.def", source) || access(path, R_OK) != 0)
        return cli_fail(CLI_USAGE, "--source: '%s' is not the project's source tree (no engine/params.def)", source);
    if (files_make_dirs(out) != 0)
        return cli_fail(CLI_FAIL, "--out: cannot create '%s': %s", out, strerror(errno));
    if (sign_key && sign_key_read(sign_key, true, &sg.key, err, sizeof err) != 0)
        return cli_fail(CLI_USAGE, "--sign-key: %s", err);
    sg.has_key = sign_key != NULL;
    int status = build_run(s, run, source, out, online_cores(), &sg, build);
    sign_key_wipe(&sg.key);
    return status;
}

int tune_cmd_build(int argc, char **argv)
{
    Opts o;
    int64_t id;
    int status = cli_parse(&o, &BUILD_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO)
        return status;
    Signing sg;
    if ((status = signing_load(&o, &sg)) != CLI_OK)
        return status;
    if (opts_given(&o, "--binary")) {
        status = build_binary(&o, &sg);
        sign_key_wipe(&sg.key);
        return status;
    }
    if (opts_given(&o, "--name"))
        return cli_fail(CLI_USAGE, "--name goes with --binary (a run's build is named after the run)");
    if (opts_given(&o, "--signature"))
        return cli_fail(CLI_USAGE, "--signature goes with --binary (sign a run's build with --sign-key)");
    if ((status = cli_run_id(&o, &id)) != CLI_OK)
        return status;
    int64_t jobs = opts_given(&o, "--jobs") ? opts_int(&o, "--jobs") : online_cores();
    const char *source = opts_text(&o, "--source"), *out_opt = opts_text(&o, "--out");
    char path[PATH_MAX], out[PATH_MAX / 2], cwd[PATH_MAX / 4];
    if (!path_fmt(path, sizeof path, "%s/engine/params.def", source) || access(path, R_OK) != 0)
        return cli_fail(CLI_USAGE, "--source: '%s' is not the project's source tree (no engine/params.def)", source);
    if (files_make_dirs(out_opt) != 0)
        return cli_fail(CLI_FAIL, "--out: cannot create '%s': %s", out_opt, strerror(errno));
    if (!(out_opt[0] == '/' ? path_fmt(out, sizeof out, "%s", out_opt)
                            : getcwd(cwd, sizeof cwd) && path_fmt(out, sizeof out, "%s/%s", cwd, out_opt)))
        return cli_fail(CLI_USAGE, "--out: '%s' is too long", out_opt);
    Store *s = NULL;
    if ((status = cli_open_db(&o, &s)) == CLI_OK)
        status = build_run(s, id, source, out, jobs, &sg, &id);
    store_destroy(&s);
    sign_key_wipe(&sg.key);
    return status;
}

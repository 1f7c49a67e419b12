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

#include "bench.h"
#include "board.h"
#include "cli.h"
#include "clock.h"
#include "codec.h"
#include "external.h"
#include "fen.h"
#include "files.h"
#include "keys.h"
#include "log.h"
#include "process.h"
#include "run_rules.h"
#include "sandbox.h"
#include "sha256.h"
#include "store_engines.h"
#include "store_web.h"

/* UCI_TIMEOUT_MS: how long a binary may take to answer uci, as long as a worker waits for its uciok. */
enum { BINARY_MAX = 256 << 20, BENCH_OUT_MAX = 1 << 16, UCI_TIMEOUT_MS = 10000, OPTIONS_MAX = 4096 };
/* A boxed step (configure, compile, bench) may take this long on the wall clock before it is killed. */
enum { BOX_WALL_S = 1800 };

static const OptSpec BUILD_OPTIONS[] = {
    { "--out", OPT_TEXT, "DIR", "build-tuned", .help = "where the parameter file, build and binary go" },
    { "--source", OPT_TEXT, "DIR", XQF_SOURCE_DIR, .help = "the source tree" },
    { "--jobs", OPT_INT, "N", NULL, .imin = 1, .imax = 1024, .help = "parallel compile jobs (default: online cores)" },
    { "--binary", OPT_TEXT, "FILE", NULL, .help = "register this engine binary instead" },
    { "--name", OPT_TEXT, "NAME", NULL, .help = "with --binary: its name (default xqf-engine-SHA12)" },
    { "--sign-key", OPT_TEXT, "FILE", NULL, .help = "sign the build with this operator key (xqf-keys sign-new)" },
    { "--signature", OPT_TEXT, "HEX", NULL, .help = "with --binary: its signature made elsewhere (xqf-keys sign)" },
    { "--ref", OPT_TEXT, "REF", NULL, .help = "build this git commit (branch, tag, hash) instead" },
    { "--engine", OPT_TEXT, "NAME", NULL, .help = "with --ref: a commit of this engine's repository, built by its record" },
    { "--net", OPT_TEXT, "NET", NULL, .help = "with RUN or --ref: compile this registered net in as the default evaluation" },
    { "--repo", OPT_TEXT, "DIR", ".", .help = "with --ref or --serve: the git repository of the project" },
    { "--serve", OPT_FLAG, NULL, NULL, .help = "build the git refs of the approved tests created on the web" },
    { "--sign-serve", OPT_FLAG, NULL, NULL, .help = "sign what the builder built for approved tests, then start them" },
    { "--watch", OPT_INT, "SECONDS", NULL, .imin = 1, .imax = 86400, .help = "with --serve or --sign-serve: keep serving, looking every SECONDS" },
    CLI_DB_OPTION,
    OPTS_END,
};

static const OptTable BUILD_TABLE = {
    .program = "xqf-tune", .spec = BUILD_OPTIONS, .max_positional = 1,
    .usage =
        "Usage: xqf-tune build RUN [--net NET] [--out DIR] [--source DIR] [--jobs N] [--sign-key FILE]\n"
        "                      [--db CONNINFO]\n"
        "       xqf-tune build --binary FILE [--name NAME] [--sign-key FILE | --signature HEX] [--db CONNINFO]\n"
        "       xqf-tune build --ref REF [--net NET] [--repo DIR] [--out DIR] [--jobs N] [--sign-key FILE]\n"
        "                      [--db CONNINFO]\n"
        "       xqf-tune build --ref REF --engine NAME [--out DIR] [--sign-key FILE] [--db CONNINFO]\n"
        "       xqf-tune build --serve [--repo DIR] [--watch SECONDS] [--out DIR] [--jobs N] [--db CONNINFO]\n"
        "       xqf-tune build --sign-serve --sign-key FILE [--watch SECONDS] [--db CONNINFO]\n"
        "A tuned engine: xqf-engine compiled with the run's exported parameters as its\n"
        "defaults (cmake -DXQF_PARAMS_FILE), named with the run id and the parameter\n"
        "set's hash (HASH, 16 hex digits).  In DIR:\n"
        "    run-RUN-HASH.params      the exported parameter file\n"
        "    run-RUN-HASH/            the build directory (its log: build.log)\n"
        "    xqf-engine-runRUN-HASH   the binary\n"
        "Runs the binary's bench, asks it for the parameters it knows (`uci`: its\n"
        "spin options with their bounds, up to uciok within 10 s), records the build\n"
        "(run, parameter hash, SHA-256, bench signature, parameters, path) in the\n"
        "engine builds table and prints:\n"
        "    Parameters: FILE (set HASH)\n"
        "    Bench: N\n"
        "    SHA-256: HEX\n"
        "    Spin options: N\n"
        "    Signature: HEX (or none)\n"
        "    Build: ID\n"
        "    Binary: PATH\n"
        "The second form registers any xqf-engine binary (a search change built\n"
        "elsewhere), named NAME, the same way.  Either way the binary itself is\n"
        "stored in the database: workers fetch it by its SHA-256 (checked, cached)\n"
        "to play it, e.g. in `xqf-tune sprt new --test-build ID`; the sets it plays\n"
        "there are checked against the parameters it listed.  A binary whose bench\n"
        "fails or that does not list its options ends with status 1, not recorded.\n"
        "Workers run only builds signed by an operator key they trust (--trust):\n"
        "--sign-key signs the build's SHA-256 and name with the operator's secret key\n"
        "(xqf-keys sign-new FILE); --signature takes a signature made on another machine\n"
        "by `xqf-keys sign KEYFILE BINARY NAME`.  An unsigned build is recorded with a\n"
        "warning: only workers started with --allow-unsigned play it.\n"
        "The third form builds a git commit of the project: REF (a branch, tag or\n"
        "hash) of the repository DIR is resolved to its commit, exported (git\n"
        "archive) into a clean temporary folder, built there (Release, the\n"
        "project's own CMake, the xqf-engine target) and benched; when the\n"
        "commit's message says `Bench: N`, the bench signature must be N.  The\n"
        "binary goes to the --out folder as xqf-engine-COMMIT12; the build is\n"
        "recorded with its commit, tree and subject.  A commit whose tree was\n"
        "built before reuses that build (checked against its Bench: line).\n"
        "A build that fails prints its log's tail.  An unknown ref, a folder that\n"
        "is not a git repository of this project, a build that fails and a bench\n"
        "that is not the commit's Bench: end with status 2, recording nothing.\n"
        "Prints Commit: HASH SUBJECT and Tree: HASH, then the lines above.\n"
        "With --engine NAME the commit is of another engine (xqf-tune engine add):\n"
        "read from its record's repository (a URL mirrored into DIR/repos), built\n"
        "by its record's build command or CMake target and benched by its bench\n"
        "command and regexes, in the sandbox, as NAME-COMMIT12.\n"
        "A branch's code runs when it is built (CMake runs what its tree says), so\n"
        "the configure, the compile and the binary's bench and uci run in a sandbox\n"
        "(bubblewrap): as nobody, with no network, an empty environment, a private\n"
        "/tmp, the system's /usr read-only and nothing else of the machine but the\n"
        "build folder, under memory, CPU-time and 30-minute limits.  Without\n"
        "bubblewrap (or user namespaces) a ref is not built.\n"
        "The fourth form is the builder of the tests of git refs created on the web\n"
        "(xqf-web never compiles: such a test waits with a build request per ref;\n"
        "a tester's waits for an admin's approval first, in state pending, and is\n"
        "built only once approved, in state building): it first reads the commit\n"
        "each new request's ref names and pins it (building nothing: the approval\n"
        "is of these commits), then takes the requests of approved tests one by\n"
        "one, oldest first, refuses a ref that no longer names its pinned commit\n"
        "(the test fails, both commits named), builds the pinned commit of DIR as\n"
        "the third form does and records the outcome, unsigned: the builder holds no\n"
        "key (--sign-key is refused).  When both sides are built and signed, the\n"
        "test starts.  The fifth form is the signer, a process of its own with the\n"
        "operator's key that never runs what it signs: it reads each unsigned\n"
        "build of an approved test from the database, checks its bytes against\n"
        "their SHA-256, signs them and starts the tests that waited for it.  A\n"
        "ref that does not resolve or build, whose bench is not its Bench: line, or\n"
        "whose build does not take the set its side plays (checked against the\n"
        "parameters the build lists, as sprt new checks it; the form could check\n"
        "only its syntax) ends the test in state failed, the reason (and the build\n"
        "log's tail) on its web page and in xqf-tune show.  Without --watch the\n"
        "builder and the signer serve what waits and exit; with it, they keep\n"
        "looking every SECONDS (a request taken by a builder that died is taken\n"
        "again after an hour).\n"
        "--net NET (with RUN or --ref) compiles a registered net (xqf-tune net add: an\n"
        "ID, SHA-256 or name) into the engine as its default evaluation (cmake\n"
        "-DXQF_DEFAULT_NET): its stored bytes are written to a folder of their own,\n"
        "checked against their SHA-256 and by the engine's reader, and bound\n"
        "read-only into the sandbox of a --ref build.  The build is named\n"
        "...-netSHA12, recorded with the net (show and the web name it; a tree built\n"
        "with one net is not reused for another), and checked: its uci must say\n"
        "UseNNUE default true and its bench with the compiled-in net must be its\n"
        "bench with EvalFile=NET, else it is not recorded (status 1).  Prints\n"
        "    Net: NAME (SHA-256 HEX)\n"
        "    Net check: bench N with the compiled-in net and with EvalFile=NAME\n",
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

/*
 * A build's log: the descriptor every step appends to, opened once and
 * never by its path again (a path in a folder a branch's build can write
 * may be swapped for a link to any file of the builder's), and its path,
 * for messages.
 */
typedef struct {
    int fd;
    const char *path;
} BuildLog;

/*
 * Opens path as log (appended to; fresh: created, and refused when
 * something is there already), without following a link.  0, or -1 with
 * errno set.
 */
static int log_open(BuildLog *log, const char *path, bool fresh)
{
    log->path = path;
    log->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | (fresh ? O_EXCL : 0), 0644);
    return log->fd < 0 ? -1 : 0;
}

static void log_close(BuildLog *log)
{
    if (log->fd >= 0)
        close(log->fd);
    log->fd = -1;
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
 * Runs argv (searched in PATH), inside box when box is not NULL (untrusted
 * code: a branch's build, the binary it made): stdout into capture
 * (NUL-terminated, at most size - 1 bytes) or, when capture is NULL,
 * appended to log (NULL: thrown away); stderr appended to log, after a "$ command" line, or
 * with merge (and a capture) into the capture too, as the shell's 2>&1
 * puts it: Stockfish's family prints its bench's summary on stderr.
 * Returns the exit status, or -1 (a box that cannot be made: why in the log).
 */
static int spawn_io(char *const argv[], const BuildLog *log, char *capture, size_t size, const SandboxSpec *box,
                    bool merge)
{
    int fds[2] = { -1, -1 };
    int null = log ? -1 : open("/dev/null", O_WRONLY | O_CLOEXEC), logfd = log ? log->fd : null;
    if (logfd < 0 || (capture && pipe(fds) != 0)) {
        if (null >= 0)
            close(null);
        return -1;
    }
    log_command(logfd, argv);
    char why[256], **boxed = NULL;
    if (box && (boxed = sandbox_argv(box, argv, why, sizeof why)))
        dprintf(logfd, "box: %s\n", sandbox_describe(box));
    if (box && !boxed) {
        dprintf(logfd, "not run: %s\n", why);
        if (null >= 0)
            close(null);
        if (capture) {
            close(fds[0]);
            close(fds[1]);
        }
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(capture ? fds[1] : logfd, STDOUT_FILENO);
        dup2(capture && merge ? fds[1] : logfd, STDERR_FILENO);
        if (capture) {
            close(fds[0]);
            close(fds[1]);
        }
        if (boxed) {
            /* limits and a wall-clock alarm (kept across exec) for the box, never for the builder */
            sandbox_limits(box);
            alarm(BOX_WALL_S);
            execv(boxed[0], boxed);
        } else
            execvp(argv[0], argv);
        dprintf(STDERR_FILENO, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    if (null >= 0)
        close(null);
    free(boxed);
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

/* spawn_io with stderr in the log only. */
static int spawn(char *const argv[], const BuildLog *log, char *capture, size_t size, const SandboxSpec *box)
{
    return spawn_io(argv, log, capture, size, box, false);
}

/*
 * The executable src that a build made in the folder dir, copied to dst
 * (through dst.tmp, renamed): taken without following links and checked
 * (sandbox_take), then copied from that same descriptor, so that the copy
 * is the file that was checked; everything after (bench, hash, bytes
 * stored) reads the copy, which no build can reach.  0, or -1 with why.
 */
static int copy_binary(const char *dir, const char *src, const char *dst, char *why, size_t size)
{
    char tmp[PATH_MAX];
    if (!path_fmt(tmp, sizeof tmp, "%s.tmp", dst)) {
        snprintf(why, size, "%s: path too long", dst);
        return -1;
    }
    int in = sandbox_take(dir, src, BINARY_MAX, why, size);
    if (in < 0)
        return -1;
    int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0755);
    int rc = out >= 0 ? 0 : -1;
    char buf[1 << 16];
    ssize_t n = 0;
    while (rc == 0 && ((n = read(in, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)))
        for (ssize_t done = 0, w; rc == 0 && n > 0 && done < n; done += w > 0 ? w : 0)
            if ((w = write(out, buf + done, (size_t)(n - done))) < 0 && errno != EINTR)
                rc = -1;
    if (n < 0)
        rc = -1;
    if (rc != 0)
        snprintf(why, size, "cannot copy %s to %s: %s", src, dst, strerror(errno));
    close(in);
    if (out >= 0) {
        bool bad = fchmod(out, 0755) != 0;
        bad = close(out) != 0 || bad;
        if (bad && rc == 0) {
            snprintf(why, size, "cannot write %s: %s", tmp, strerror(errno));
            rc = -1;
        }
    }
    if (rc == 0 && rename(tmp, dst) != 0) {
        snprintf(why, size, "cannot rename %s to %s: %s", tmp, dst, strerror(errno));
        rc = -1;
    }
    if (rc != 0)
        unlink(tmp);
    return rc;
}

/*
 * The binary's bench signature ("Nodes searched: N"), with the net file
 * net (EvalFile=, bound read-only into the box) when not NULL; in a box
 * when boxed (a branch's binary).  false when it fails.
 */
static bool bench_nodes(const char *binary, const BuildLog *log, const char *net, bool boxed, int64_t *nodes)
{
    char *out = malloc(BENCH_OUT_MAX), eval_file[CLI_PATH_MAX + 16];
    snprintf(eval_file, sizeof eval_file, "EvalFile=%s", net ? net : "");
    char *args[] = { (char *)binary, "bench", net ? eval_file : NULL, NULL };
    SandboxSpec box = { .ro = { binary, net } };
    const char *line = out && spawn(args, log, out, BENCH_OUT_MAX, boxed ? &box : NULL) == 0
                           ? strstr(out, "Nodes searched: ")
                           : NULL;
    bool ok = line && sscanf(line, "Nodes searched: %" SCNd64, nodes) == 1;
    free(out);
    return ok;
}

/* The binary's bench signature, printed. Exit status. */
static int bench(const char *binary, const BuildLog *log, int64_t *nodes, bool boxed)
{
    if (!bench_nodes(binary, log, NULL, boxed, nodes))
        return cli_fail(CLI_FAIL, "%s bench failed (see %s): is it an xqf-engine?", binary, log->path);
    printf("Bench: %" PRId64 "\n", *nodes);
    return CLI_OK;
}

/*
 * The net compiled into binary is the registered one: its bench (nodes,
 * the bench signature) with the compiled-in net is its bench with
 * EvalFile= the registered file, the same evaluations along every search
 * of the bench (the default bench uses the compiled-in net when the
 * engine has one: uci's UseNNUE default true, checked by the caller).
 * Exit status: CLI_FAIL, not recorded, when they differ.
 */
static int net_check(const char *binary, const BuildLog *log, const CliNetFile *net, int64_t nodes, bool boxed)
{
    int64_t with_file;
    if (!bench_nodes(binary, log, net->path, boxed, &with_file))
        return cli_fail(CLI_FAIL, "%s bench EvalFile=%s failed (see %s): not recorded", binary, net->path,
                        log->path);
    if (with_file != nodes)
        return cli_fail(CLI_FAIL, "%s: its bench with the compiled-in net is %" PRId64 " but %" PRId64 " with "
                        "EvalFile=%s: it does not hold net %s (not recorded)", binary, nodes, with_file, net->name,
                        net->name);
    printf("Net check: bench %" PRId64 " with the compiled-in net and with EvalFile=%s\n", nodes, net->name);
    return CLI_OK;
}

/*
 * A "option name NAME type spin default D min A max B" line (what
 * engine/protocol.c prints for each option; the words after spin in any
 * order) into *p; false for any other line, a name longer than the store
 * keeps or one with a byte that is not printable ASCII (no set names it).
 */
static bool spin_option(const char *line, StoreBuildParam *p)
{
    const char *name = line + 12, *type = strstr(line, " type spin");
    if (strncmp(line, "option name ", 12) != 0 || !type || type <= name || type - name > STORE_NAME_MAX ||
        (type[10] != ' ' && type[10] != '\0'))
        return false;
    for (const char *c = name; c < type; c++)
        if (*c < ' ' || *c > '~')
            return false;
    snprintf(p->name, sizeof p->name, "%.*s", (int)(type - name), name);
    bool min = false, max = false;
    char key[16];
    long long v;
    int used;
    for (const char *q = type + 10; sscanf(q, " %15s %lld%n", key, &v, &used) == 2; q += used) {
        if (v < INT_MIN || v > INT_MAX)
            return false;
        if (strcmp(key, "min") == 0)
            p->min = (int)v, min = true;
        else if (strcmp(key, "max") == 0)
            p->max = (int)v, max = true;
    }
    return min && max && p->min <= p->max;
}

/* Adds p to the list unless its name is there already (the first announcement holds). False when full. */
static bool add_param(StoreBuildParam **list, int *count, const StoreBuildParam *p)
{
    for (int i = 0; i < *count; i++)
        if (strcmp((*list)[i].name, p->name) == 0)
            return true;
    StoreBuildParam *more = *count < OPTIONS_MAX ? realloc(*list, (size_t)(*count + 1) * sizeof **list) : NULL;
    if (!more)
        return false;
    *list = more;
    more[(*count)++] = *p;
    return true;
}

/*
 * The parameters binary knows, to check the sets it will play: its spin
 * options as it answers `uci`, up to its uciok, within UCI_TIMEOUT_MS.
 * *list malloc'd (NULL when it lists none), printed.  Exit status:
 * CLI_FAIL, as for a bench that fails, when it does not list them.
 */
static int list_params(const char *binary, StoreBuildParam **list, int *count, bool boxed, bool *use_nnue)
{
    char *argv[] = { (char *)binary, NULL }, err[256], line[1024];
    *list = NULL;
    *count = 0;
    *use_nnue = false;
    SandboxSpec box = { .ro = { binary } };
    char **in_box = boxed ? sandbox_argv(&box, argv, err, sizeof err) : NULL;
    if (boxed && !in_box)
        return cli_fail(CLI_FAIL, "%s: %s", binary, err);
    Process *p = process_spawn(in_box ? in_box : argv, NULL, err, sizeof err);
    free(in_box);
    if (!p)
        return cli_fail(CLI_FAIL, "%s does not start: %s", binary, err);
    int64_t deadline = clock_now_us() + (int64_t)UCI_TIMEOUT_MS * 1000;
    ProcessRead got = PROCESS_EOF;
    bool full = false;
    if (process_write_line(p, "uci") == 0)
        while (!full && (got = process_read_line(p, deadline, NULL, line, sizeof line)) == PROCESS_LINE &&
               strcmp(line, "uciok") != 0) {
            StoreBuildParam option;
            full = spin_option(line, &option) && !add_param(list, count, &option);
            if (strcmp(line, "option name UseNNUE type check default true") == 0)
                *use_nnue = true;    /* it holds a net and evaluates with it unless told otherwise */
        }
    process_write_line(p, "quit");
    process_destroy(&p, 1000);
    char why[64] = "";
    if (full)
        snprintf(why, sizeof why, "more than %d options, or out of memory", OPTIONS_MAX);
    else if (got == PROCESS_TIMEOUT)
        snprintf(why, sizeof why, "no uciok within %d s", UCI_TIMEOUT_MS / 1000);
    else if (got != PROCESS_LINE)
        snprintf(why, sizeof why, "it ended before uciok");
    if (why[0]) {
        free(*list);
        *list = NULL;
        return cli_fail(CLI_FAIL, "%s does not list its options when sent uci (%s): is it an xqf-engine? "
                        "(not recorded)", binary, why);
    }
    printf("Spin options: %d\n", *count);
    return CLI_OK;
}

/*
 * Records the build, its bytes, the parameters it knows (nparams of params)
 * and (src not NULL) its commit in one transaction, and prints its id.
 * Exit status.
 */
static int record(Store *s, const char *binary, const StoreBuild *b, const StoreBuildParam *params, int nparams,
                  const StoreBuildSource *src, int64_t *id)
{
    size_t len;
    int64_t build_id;
    char *bytes = files_read(binary, BINARY_MAX, &len);
    if (!bytes)
        return cli_fail(CLI_FAIL, "cannot read %s (or larger than %d MB)", binary, BINARY_MAX >> 20);
    bool own_tx = store_begin(s) == 0;
    bool ok = own_tx && store_add_build(s, b, &build_id) == 0 && store_build_blob(s, build_id, bytes, len) == 0 &&
              store_set_build_params(s, build_id, params, nparams) == 0 &&
              (!src || store_set_build_source(s, build_id, src) == 0) &&
              store_forget_benches(s, b->sha256) == 0 && store_commit(s) == 0;
    free(bytes);
    if (!ok) {
        store_rollback(s);
        return cli_fail(CLI_FAIL, "cannot record the build");
    }
    printf("Build: %" PRId64 "\nBinary: %s\n", build_id, binary);
    if (id)
        *id = build_id;
    return CLI_OK;
}

/* The signature of b (sha256 and build_id set) into b->signature, printed. Exit status. */
static int signing_apply(CliSigning *sg, StoreBuild *b)
{
    return cli_signing_apply(sg, SIGN_BUILD, b->sha256, b->build_id, b->signature);
}

/* What a build from git adds to its registration: the commit's Bench: line (0: none) and where it came from. */
typedef struct {
    int64_t want_bench;
    int64_t bench;                   /* the binary's bench signature, taken already (0: take it) */
    StoreBuildSource src;
    const EngineRecord *engine;      /* another engine's (NULL: ours) */
} GitOrigin;

/* A bench signature against the commit's Bench: line. Exit status. */
static int bench_check(int64_t nodes, const GitOrigin *git)
{
    if (git && git->want_bench && nodes != git->want_bench)
        return cli_fail(CLI_USAGE, "the bench signature is %" PRId64 " but commit %.12s says Bench: %" PRId64
                        " (a search change not noted, or a miscompile): not recorded",
                        nodes, git->src.commit, git->want_bench);
    return CLI_OK;
}

/*
 * The tail of every form of build: the binary's bench signature (checked
 * against git's Bench: line), SHA-256, the parameters it knows (its spin
 * options), operator's signature, its row in the builds table (with its
 * commit and parameters) and its bytes (what workers fetch), printed.  b
 * has the run, parameter hash and name filled in; *id (not NULL) gets the
 * build's id.  With net (a build with a net compiled in): its uci must say
 * UseNNUE default true, and when the net's file is there its bench with
 * it (net_check; a git build checked it in its sandbox already); the row
 * names the net.  Exit status.
 */
static int register_logged(Store *s, const char *binary, const BuildLog *log, StoreBuild *b, CliSigning *sg,
                           const GitOrigin *git, const CliNetFile *net, int64_t *id)
{
    int status = CLI_OK;
    if (git && git->bench > 0)
        b->bench_nodes = git->bench;
    else
        status = bench(binary, log, &b->bench_nodes, git != NULL);
    if (status != CLI_OK || (status = bench_check(b->bench_nodes, git)) != CLI_OK)
        return status;
    if (sha256_file(binary, b->sha256) != 0)
        return cli_fail(CLI_FAIL, "cannot hash %s", binary);
    printf("SHA-256: %s\n", b->sha256);
    StoreBuildParam *params;
    int nparams;
    bool use_nnue;
    /* a UCCI engine lists its options otherwise: its sets go unchecked by the build (none listed) */
    if (git && git->engine && git->engine->protocol != ENGINE_UCI) {
        params = NULL, nparams = 0, use_nnue = false;
        printf("Spin options: not listed (a UCCI engine)\n");
    } else if ((status = list_params(binary, &params, &nparams, git != NULL, &use_nnue)) != CLI_OK)
        return status;
    b->net_id = net ? net->id : 0;
    if (net && !use_nnue)
        status = cli_fail(CLI_FAIL, "%s does not evaluate with a compiled-in net (its uci says UseNNUE default false: "
                          "does its source take -DXQF_DEFAULT_NET?): not recorded", binary);
    if (status == CLI_OK && net && net->path[0])
        status = net_check(binary, log, net, b->bench_nodes, git != NULL);
    if (status == CLI_OK && (status = signing_apply(sg, b)) == CLI_OK && !path_fmt(b->path, sizeof b->path, "%s", binary))
        status = cli_fail(CLI_USAGE, "'%s': path too long", binary);
    if (status == CLI_OK)
        status = record(s, binary, b, params, nparams, git ? &git->src : NULL, id);
    free(params);
    return status;
}

/* register_logged with its log at log_path (appended to). Exit status. */
static int register_binary(Store *s, const char *binary, const char *log_path, StoreBuild *b, CliSigning *sg,
                           const GitOrigin *git, const CliNetFile *net, int64_t *id)
{
    BuildLog log;
    if (log_open(&log, log_path, false) != 0)
        return cli_fail(CLI_FAIL, "cannot open the log %s: %s", log_path, strerror(errno));
    int status = register_logged(s, binary, &log, b, sg, git, net, id);
    log_close(&log);
    return status;
}

/* xqf-tune build --binary FILE: registers a binary built elsewhere. Exit status. */
static int build_binary(const Opts *o, CliSigning *sg)
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
        status = register_binary(s, abs, log, &b, sg, NULL, NULL, NULL);
    store_destroy(&s);
    return status;
}

/* Where a run's build goes, all under out (absolute). */
typedef struct {
    char hash[17], params_file[PATH_MAX], dir[PATH_MAX], log[PATH_MAX], built[PATH_MAX], binary[PATH_MAX];
} BuildPaths;

/* "-netSHA12" for a build with a net compiled in, else "". */
static void net_suffix(const CliNetFile *net, char out[20])
{
    snprintf(out, 20, "%s%.12s", net && net->id ? "-net" : "", net && net->id ? net->sha256 : "");
}

/* The paths of run id's build of the set p (with net, when not NULL) in out. Exit status. */
static int build_paths(const char *out, int64_t id, const Params *p, const CliNetFile *net, BuildPaths *bp)
{
    char tag[20];
    net_suffix(net, tag);
    snprintf(bp->hash, sizeof bp->hash, "%016" PRIx64, params_hash(p));
    bool ok = path_fmt(bp->params_file, sizeof bp->params_file, "%s/run-%" PRId64 "-%s.params", out, id, bp->hash) &&
              path_fmt(bp->dir, sizeof bp->dir, "%s/run-%" PRId64 "-%s%s", out, id, bp->hash, tag) &&
              path_fmt(bp->log, sizeof bp->log, "%s/build.log", bp->dir) &&
              path_fmt(bp->built, sizeof bp->built, "%s/bin/xqf-engine", bp->dir) &&
              path_fmt(bp->binary, sizeof bp->binary, "%s/xqf-engine-run%" PRId64 "-%s%s", out, id, bp->hash, tag) &&
              strlen(bp->binary) <= STORE_TEXT_MAX;
    return ok ? CLI_OK : cli_fail(CLI_USAGE, "--out: '%s' is too long", out);
}

/*
 * Configures and compiles xqf-engine with params_file as its defaults (and
 * net's file as its default net, or none), copies the binary out. Exit status.
 */
static int compile(const char *source, const BuildPaths *bp, const CliNetFile *net, int64_t jobs, int64_t id)
{
    char def_params[PATH_MAX + 32], def_net[CLI_PATH_MAX + 32], src_dir[PATH_MAX], dir[PATH_MAX], jobs_text[24];
    snprintf(def_params, sizeof def_params, "-DXQF_PARAMS_FILE=%s", bp->params_file);
    /* without a net, the tree's own default (auto: engine/nets/default.nnue when it has one), as before */
    snprintf(def_net, sizeof def_net, "-DXQF_DEFAULT_NET=%s", net && net->id ? net->path : "auto");
    snprintf(src_dir, sizeof src_dir, "%s", source);
    snprintf(dir, sizeof dir, "%s", bp->dir);
    snprintf(jobs_text, sizeof jobs_text, "%" PRId64, jobs);
    char *configure[] = { "cmake", "-S", src_dir, "-B", dir, "-DCMAKE_BUILD_TYPE=Release", def_params, def_net,
                          "-DXQF_TESTS=OFF", NULL };
    char *build[] = { "cmake", "--build", dir, "--target", "xqf-engine", "-j", jobs_text, NULL };
    fprintf(stderr, "xqf-tune: building xqf-engine for run %" PRId64 " in %s\n", id, dir);
    BuildLog log;
    char why[PATH_MAX + 128];
    if (log_open(&log, bp->log, false) != 0)
        return cli_fail(CLI_FAIL, "cannot open the log %s: %s", bp->log, strerror(errno));
    int rc = spawn(configure, &log, NULL, 0, NULL) != 0 || spawn(build, &log, NULL, 0, NULL) != 0;
    log_close(&log);
    if (rc != 0)
        return cli_fail(CLI_FAIL, "the build failed (see %s)", bp->log);
    /* our own tree, built outside any box: its binary is still taken as a box's is (one way for every build) */
    if (copy_binary(bp->dir, bp->built, bp->binary, why, sizeof why) != 0)
        return cli_fail(CLI_FAIL, "%s", why);
    return CLI_OK;
}

/* The build of run id (with the registered net net_key compiled in, or NULL): export, compile, register. Exit status. */
static int build_run(Store *s, int64_t id, const char *source, const char *out, int64_t jobs, CliSigning *sg,
                     const char *net_key, int64_t *build)
{
    StoreRun r;
    Params p;
    BuildPaths bp;
    CliNetFile net = { 0 };
    int status;
    if ((status = cli_load_run(s, id, &r)) != CLI_OK ||
        (net_key && (status = cli_net_lookup(s, "--net", net_key, &net)) != CLI_OK) ||
        (status = cli_export_set(s, &r, &p)) != CLI_OK || (status = build_paths(out, id, &p, &net, &bp)) != CLI_OK ||
        (status = cli_write_export(&r, &p, bp.params_file)) != CLI_OK)
        return status;
    if (files_make_dirs(bp.dir) != 0)
        return cli_fail(CLI_FAIL, "cannot create '%s': %s", bp.dir, strerror(errno));
    printf("Parameters: %s (set %s)\n", bp.params_file, bp.hash);
    if (net.id && (status = cli_net_write(s, &net)) != CLI_OK)
        return status;
    if (net.id)
        printf("Net: %s (SHA-256 %s)\n", cli_shown(net.name), net.sha256);
    fflush(stdout);
    if ((status = compile(source, &bp, &net, jobs, id)) == CLI_OK) {
        StoreBuild b = { .run_id = id };
        char tag[20];
        net_suffix(&net, tag);
        snprintf(b.params_hash, sizeof b.params_hash, "%s", bp.hash);
        snprintf(b.build_id, sizeof b.build_id, "xqf-engine-run%" PRId64 "-%s%s", id, bp.hash, tag);
        status = register_binary(s, bp.binary, bp.log, &b, sg, NULL, net.id ? &net : NULL, build);
    }
    cli_net_drop(&net);
    return status;
}

/* The online cores (at least 1). */
static int64_t online_cores(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? cores : 1;
}

int cli_build_run(Store *s, int64_t run, const char *source, const char *out, const char *sign_key, const char *net,
                  int64_t *build)
{
    CliSigning sg = { .has_key = false };
    char err[512], path[PATH_MAX];
    *build = 0;
    if (!path_fmt(path, sizeof path, "%s/engine/params.def", source) || access(path, R_OK) != 0)
        return cli_fail(CLI_USAGE, "--source: '%s' is not the project's source tree (no engine/params.def)", source);
    if (files_make_dirs(out) != 0)
        return cli_fail(CLI_FAIL, "--out: cannot create '%s': %s", out, strerror(errno));
    if (sign_key && sign_key_read(sign_key, true, &sg.key, err, sizeof err) != 0)
        return cli_fail(CLI_USAGE, "--sign-key: %s", err);
    sg.has_key = sign_key != NULL;
    int status = build_run(s, run, source, out, online_cores(), &sg, net, build);
    sign_key_wipe(&sg.key);
    return status;
}

/* ---- builds from git ------------------------------------------------------------ */

enum { GIT_OUT_MAX = 1 << 16, LOG_TAIL_LINES = 25, LOG_TAIL_READ = 1 << 16 };

/* Runs git -C repo args... (NULL-terminated, at most 8), stdout into out (its last newline cut). Git's exit status. */
static int git(const char *repo, const BuildLog *log, char *out, size_t size, const char *const *args)
{
    char *argv[12] = { "git", "-C", (char *)repo };
    int n = 3;
    for (int i = 0; args[i] && n < 11; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    int rc = spawn(argv, log, out, size, NULL);
    size_t len = strlen(out);
    if (len && out[len - 1] == '\n')
        out[len - 1] = '\0';
    return rc;
}

/*
 * The last lines of a build log, read from its descriptor (never by path
 * again), on stderr and their last bytes into g->log_tail: text the
 * branch's build wrote.  On stderr each line goes through cli_shown
 * (control bytes escaped: no log moves the cursor or retitles the window
 * of the operator who reads it); into g->log_tail, which the run's page
 * (HTML-escaped there) and `show` give anyone, each line as PostgreSQL's
 * text takes it (xqf_text_sanitize: well-formed UTF-8, no control
 * character), so that a tail of bytes the database refuses cannot keep a
 * failed request from being recorded.
 */
static void print_tail(const BuildLog *log, CliGitRef *g)
{
    struct stat st;
    char *text = malloc(LOG_TAIL_READ + 1), *clean = malloc(LOG_TAIL_READ + 2);
    ssize_t got = text && clean && fstat(log->fd, &st) == 0
                      ? pread(log->fd, text, LOG_TAIL_READ, st.st_size > LOG_TAIL_READ ? st.st_size - LOG_TAIL_READ : 0)
                      : -1;
    size_t len = got > 0 ? (size_t)got : 0, start = len, n = 0;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\0')
            text[i] = ' ';    /* a NUL would end the line early */
    for (int lines = 0; start > 0 && lines <= LOG_TAIL_LINES; start--)
        if (text[start - 1] == '\n' && start != len)
            lines++;
    if (got >= 0) {
        fputs("--- the end of the build log ---\n", stderr);
        for (char *line = text + start; line < text + len;) {
            char *nl = memchr(line, '\n', (size_t)(text + len - line));
            size_t cut = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
            line[cut] = '\0';
            fprintf(stderr, "%s\n", cli_shown(line));
            n += xqf_text_sanitize(clean + n, LOG_TAIL_READ + 1 - n, line);
            clean[n++] = '\n';
            line += cut + 1;
        }
        fputs("--- end ---\n", stderr);
        /* the last bytes, from a character's first byte on */
        size_t keep = n < sizeof g->log_tail ? n : sizeof g->log_tail - 1;
        while (keep > 0 && ((unsigned char)clean[n - keep] & 0xc0) == 0x80)
            keep--;
        snprintf(g->log_tail, sizeof g->log_tail, "%.*s", (int)keep, clean + n - keep);
    }
    free(text);
    free(clean);
}

/* The N of the last "Bench: N" line of a commit message, or 0. */
static int64_t bench_line(const char *message)
{
    int64_t found = 0, v;
    for (const char *line = message; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        const char *p = line + strspn(line, " \t");
        if (strncmp(p, "Bench:", 6) == 0 && sscanf(p + 6, " %" SCNd64, &v) == 1 && v > 0)
            found = v;
    }
    return found;
}

/* Removes a temporary folder and what it holds. */
static void remove_tree(const char *dir)
{
    char *rm[] = { "rm", "-rf", (char *)dir, NULL };
    spawn(rm, NULL, NULL, 0, NULL);
}

int cli_engine_load(Store *s, const char *option, const char *name, EngineRecord *e)
{
    int found = store_engine_load(s, name, e);
    if (found < 0)
        return cli_fail(CLI_FAIL, "cannot read the engines");
    return found ? CLI_OK : cli_fail(CLI_USAGE, "%s: no engine named '%s' (xqf-tune engine list)", option, name);
}

/*
 * Where another engine's repository is read: its record's folder in place,
 * or (a URL) a mirror of it in cache/NAME.git, cloned the first time and
 * fetched again each time (a branch moves).  Into g->repo.  Exit status.
 */
static int engine_repo(const EngineRecord *e, const char *cache, CliGitRef *g)
{
    struct stat st;
    if (stat(e->repo, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(g->repo, sizeof g->repo, "%s", e->repo);
        return CLI_OK;
    }
    if (!path_fmt(g->repo, sizeof g->repo, "%s/%s.git", cache, e->name))
        return cli_fail(CLI_USAGE, "'%s': path too long", cache);
    if (files_make_dirs(cache) != 0)
        return cli_fail(CLI_FAIL, "cannot create '%s': %s", cache, strerror(errno));
    char out[256];
    bool have = stat(g->repo, &st) == 0;
    char *clone[] = { "git", "clone", "--quiet", "--mirror", "--", (char *)e->repo, g->repo, NULL };
    int rc = have ? git(g->repo, NULL, out, sizeof out, (const char *[]){ "fetch", "--quiet", "--prune", NULL })
                  : spawn(clone, NULL, out, sizeof out, NULL);
    if (rc != 0)
        return cli_fail(CLI_USAGE, "engine %s: its repository '%s' cannot be fetched (git %s failed)", e->name,
                        e->repo, have ? "fetch" : "clone");
    return CLI_OK;
}

int cli_git_resolve(Store *s, const char *repo, const char *ref, const char *net, const EngineRecord *engine,
                    const char *cache, CliGitRef *g)
{
    char *out = malloc(GIT_OUT_MAX), spec[CLI_GIT_REF_MAX + 16], path[PATH_MAX];
    memset(g, 0, sizeof *g);
    g->engine = engine;
    int status = out ? CLI_OK : cli_fail(CLI_FAIL, "out of memory");
    if (status == CLI_OK && net && engine)
        status = cli_fail(CLI_USAGE, "--net: a net is compiled into our engine only (engine %s)", engine->name);
    if (status == CLI_OK && net)
        status = cli_net_lookup(s, "--net", net, &g->net);
    if (status == CLI_OK && engine && (status = engine_repo(engine, cache, g)) == CLI_OK)
        repo = g->repo;
    else if (!engine)
        snprintf(g->repo, sizeof g->repo, "%s", repo);
    snprintf(g->ref, sizeof g->ref, "%s", ref);
    snprintf(spec, sizeof spec, "%s^{commit}", ref);
    struct stat st;
    char why[512];
    if (status == CLI_OK && !rule_git_ref(ref, why, sizeof why))
        status = cli_fail(CLI_USAGE, "%s", why);
    else if (status == CLI_OK && (stat(repo, &st) != 0 || !S_ISDIR(st.st_mode)))
        status = cli_fail(CLI_USAGE, "--repo: '%s' is not a folder", repo);
    else if (status == CLI_OK && git(repo, NULL, out, GIT_OUT_MAX,
                                     (const char *[]){ "rev-parse", "--git-dir", NULL }) != 0)
        status = cli_fail(CLI_USAGE, "--repo: '%s' is not a git repository", repo);
    else if (status == CLI_OK && (git(repo, NULL, out, GIT_OUT_MAX,
                                      (const char *[]){ "rev-parse", "--verify", "--quiet", spec, NULL }) != 0 ||
                                  strlen(out) >= sizeof g->commit))
        status = cli_fail(CLI_USAGE, "unknown ref '%s' in %s", ref, repo);
    if (status == CLI_OK) {
        snprintf(g->commit, sizeof g->commit, "%s", out);
        for (int i = 0; status == CLI_OK && !engine && i < 2; i++) {
            const char *file = i ? "CMakeLists.txt" : "engine/params.def";
            snprintf(path, sizeof path, "%s:%s", g->commit, file);
            if (git(repo, NULL, out, GIT_OUT_MAX, (const char *[]){ "cat-file", "-e", path, NULL }) != 0)
                status = cli_fail(CLI_USAGE, "'%s' at %.12s is not this project's source (no %s)", repo,
                                  g->commit, file);
        }
    }
    snprintf(spec, sizeof spec, "%s^{tree}", g->commit);
    if (status == CLI_OK && (git(repo, NULL, out, GIT_OUT_MAX, (const char *[]){ "rev-parse", spec, NULL }) != 0 ||
                             strlen(out) >= sizeof g->tree))
        status = cli_fail(CLI_FAIL, "cannot read the tree of %s", g->commit);
    if (status == CLI_OK)
        snprintf(g->tree, sizeof g->tree, "%s", out);
    if (status == CLI_OK &&
        git(repo, NULL, out, GIT_OUT_MAX, (const char *[]){ "log", "-1", "--format=%B", g->commit, NULL }) != 0)
        status = cli_fail(CLI_FAIL, "cannot read the message of %s", g->commit);
    if (status == CLI_OK) {
        snprintf(g->subject, sizeof g->subject, "%.*s", (int)strcspn(out, "\n"), out);
        /* a commit's Bench: line is its search with its own default net: another net compiled in changes it */
        g->want_bench = g->net.id ? 0 : bench_line(out);
        /* ours only: another engine's tree may be built otherwise than the build found was */
        int found = engine ? 0 : store_build_of_tree(s, g->tree, g->net.id, &g->reuse);
        if (found < 0)
            status = cli_fail(CLI_FAIL, "cannot read the builds");
        else if (found == 0)
            g->reuse = 0;
        printf("Commit: %s %s\nTree: %s\n", g->commit, cli_shown(g->subject), g->tree);
        if (g->net.id)
            printf("Net: %s (SHA-256 %s)\n", cli_shown(g->net.name), g->net.sha256);
        fflush(stdout);
    }
    free(out);
    return status;
}

/* Exports commit g of its repository into box/src through tmp/src.tar (log in log). Exit status. */
static int git_export(const CliGitRef *g, const char *tmp, const char *box, const BuildLog *log)
{
    char tar[PATH_MAX], src[PATH_MAX], out[64];
    if (!path_fmt(tar, sizeof tar, "%s/src.tar", tmp) || !path_fmt(src, sizeof src, "%s/src", box) ||
        files_make_dirs(src) != 0)
        return cli_fail(CLI_FAIL, "cannot make the build folder in %s", tmp);
    if (git(g->repo, log, out, sizeof out,
            (const char *[]){ "archive", "--format=tar", "-o", tar, g->commit, NULL }) != 0)
        return cli_fail(CLI_FAIL, "git archive of %.12s failed (see above)", g->commit);
    char *untar[] = { "tar", "-xf", tar, "-C", src, NULL };
    if (spawn(untar, log, NULL, 0, NULL) != 0)
        return cli_fail(CLI_FAIL, "cannot unpack the source of %.12s", g->commit);
    unlink(tar);
    return CLI_OK;
}

/* Exports commit g into box/src and builds its xqf-engine in box/build (log in log). Exit status. */
static int git_compile(CliGitRef *g, const char *tmp, const char *box, const BuildLog *log, int64_t jobs)
{
    char src[PATH_MAX], dir[PATH_MAX], jobs_text[24];
    int status = git_export(g, tmp, box, log);
    if (status != CLI_OK)
        return status;
    if (!path_fmt(src, sizeof src, "%s/src", box) || !path_fmt(dir, sizeof dir, "%s/build", box))
        return cli_fail(CLI_FAIL, "cannot make the build folder in %s", box);
    snprintf(jobs_text, sizeof jobs_text, "%" PRId64, jobs);
    char def_net[CLI_PATH_MAX + 32];
    snprintf(def_net, sizeof def_net, "-DXQF_DEFAULT_NET=%s", g->net.path);
    char *configure[] = { "cmake", "-S", src, "-B", dir, "-DCMAKE_BUILD_TYPE=Release", "-DXQF_TESTS=OFF",
                          g->net.id ? def_net : NULL, NULL };
    char *build[] = { "cmake", "--build", dir, "--target", "xqf-engine", "-j", jobs_text, NULL };
    /*
     * The branch's CMake runs whatever its tree says: configure and compile
     * in a box that sees the system's /usr and the box folder only, as
     * nobody, with no network, no environment and limits (sandbox.h); the
     * net to compile in, read-only (its folder bound so): what it embeds is
     * the registered file.  The log is beside the box folder, not in it.
     */
    SandboxSpec sb = { .rw = { box }, .ro = { g->net.id ? g->net.dir : NULL }, .chdir = box };
    char why[256];
    if (!sandbox_program(why, sizeof why))
        return cli_fail(CLI_FAIL, "commit %.12s not built: no sandbox to build it in: %s", g->commit, why);
    fprintf(stderr, "xqf-tune: building xqf-engine of %.12s (%s) in %s, in a sandbox\n", g->commit, g->ref, dir);
    if (spawn(configure, log, NULL, 0, &sb) != 0 || spawn(build, log, NULL, 0, &sb) != 0) {
        print_tail(log, g);
        return cli_fail(CLI_USAGE, "commit %.12s (%s) does not build: nothing recorded", g->commit, g->ref);
    }
    return CLI_OK;
}

/* text with every "<key>" replaced by value, into out. false when it does not fit. */
static bool expand(const char *text, const char *key, const char *value, char *out, size_t size)
{
    size_t n = 0, klen = strlen(key), vlen = strlen(value);
    for (const char *p = text; *p;) {
        bool at = strncmp(p, key, klen) == 0;
        size_t len = at ? vlen : 1;
        if (n + len >= size)
            return false;
        memcpy(out + n, at ? value : p, len);
        n += len;
        p += at ? klen : 1;
    }
    out[n] = '\0';
    return true;
}

/*
 * Another engine's commit, exported into box/src, built by its record in
 * the sandbox: its build command (<out> replaced by box/out/NAME) run by
 * sh at the tree's root, or its CMake target configured and built in
 * box/build; its binary (<out>, or a path in the tree or the build folder)
 * into built (taken out of box by the caller).  Exit status: CLI_USAGE
 * with the log's tail when it does not build.
 */
static int engine_compile(CliGitRef *g, const char *tmp, const char *box, const BuildLog *log, int64_t jobs,
                          char *built, size_t size)
{
    const EngineRecord *e = g->engine;
    char src[PATH_MAX], dir[PATH_MAX], outdir[PATH_MAX], want[PATH_MAX], command[ENGINE_TEXT_MAX * 8];
    char binary[PATH_MAX], jobs_text[24];
    int status = git_export(g, tmp, box, log);
    if (status != CLI_OK)
        return status;
    snprintf(jobs_text, sizeof jobs_text, "%" PRId64, jobs);
    if (!path_fmt(src, sizeof src, "%s/src", box) || !path_fmt(dir, sizeof dir, "%s/build", box) ||
        !path_fmt(outdir, sizeof outdir, "%s/out", box) || !path_fmt(want, sizeof want, "%s/%s", outdir, e->name) ||
        files_make_dirs(outdir) != 0)
        return cli_fail(CLI_FAIL, "cannot make the build folder in %s", box);
    bool cmake = e->cmake_target[0] != '\0';
    if (!expand(cmake ? "" : e->build_command, "<out>", want, command, sizeof command) ||
        !expand(e->binary, "<out>", want, binary, sizeof binary) ||
        !path_fmt(built, size, "%s%s%s", binary[0] == '/' ? "" : cmake ? dir : src, binary[0] == '/' ? "" : "/",
                  binary))
        return cli_fail(CLI_USAGE, "engine %s: its build command or binary is too long", e->name);
    char *shell[] = { "sh", "-c", command, NULL };
    char *configure[] = { "cmake", "-S", src, "-B", dir, "-DCMAKE_BUILD_TYPE=Release", NULL };
    char *target[] = { "cmake", "--build", dir, "--target", (char *)e->cmake_target, "-j", jobs_text, NULL };
    SandboxSpec sb = { .rw = { box }, .chdir = src };
    fprintf(stderr, "xqf-tune: building engine %s at %.12s (%s) in %s, in a sandbox\n", e->name, g->commit, g->ref,
            src);
    int rc = cmake ? spawn(configure, log, NULL, 0, &sb) || spawn(target, log, NULL, 0, &sb)
                   : spawn(shell, log, NULL, 0, &sb);
    if (rc != 0) {
        print_tail(log, g);
        return cli_fail(CLI_USAGE, "commit %.12s (%s) of engine %s does not build: nothing recorded", g->commit,
                        g->ref, e->name);
    }
    return CLI_OK;
}

/*
 * Another engine's bench, in the sandbox: its record's command with
 * <binary> replaced, run by sh, its nodes and speed read by the record's
 * regexes (engine_record_bench) from its stdout and stderr together
 * (Stockfish and Pikafish print "Nodes searched" on stderr) into
 * g->bench, printed.  Exit status: CLI_USAGE with the log's tail when it
 * fails or cannot be read.
 */
static int engine_bench(CliGitRef *g, const BuildLog *log)
{
    const EngineRecord *e = g->engine;
    char command[ENGINE_TEXT_MAX * 8], why[256];
    if (!expand(e->bench_command, "<binary>", g->binary, command, sizeof command))
        return cli_fail(CLI_USAGE, "engine %s: its bench command is too long", e->name);
    char *out = malloc(BENCH_OUT_MAX), *shell[] = { "sh", "-c", command, NULL };
    SandboxSpec box = { .ro = { g->binary } };
    int64_t nps = 0;
    int rc = out ? spawn_io(shell, log, out, BENCH_OUT_MAX, &box, true) : -1;
    bool read = rc == 0 && engine_record_bench(e, out, &g->bench, &nps, why, sizeof why) == 0;
    if (rc == 0 && !read)
        dprintf(log->fd, "%s\n--- the bench: %s\n", out, why);
    free(out);
    if (!read) {
        print_tail(log, g);
        return cli_fail(CLI_USAGE, "engine %s: the bench of %.12s (%s) %s: nothing recorded", e->name, g->commit,
                        g->ref, rc != 0 ? "failed" : why);
    }
    printf("Bench: %" PRId64 "\nSpeed: %" PRId64 " nodes/s\n", g->bench, nps);
    return CLI_OK;
}

/* How long one search of an engine's depth bench may take, and the whole bench's wall clock (BOX_WALL_S). */
enum { DEPTH_BENCH_SEARCH_S = 600 };

/*
 * The bench of an engine without a bench command (ElephantEye: a UCCI
 * engine has no bench), as OpenBench benches an engine by searching fixed
 * positions: the binary started in the sandbox and spoken to as its record
 * says (protocol, dialect, the commands after the handshake), the bench
 * positions (engine/bench.c, xqf-engine bench's) each searched to the
 * record's depth in one process, the nodes it reports last for each search
 * summed into g->bench and divided by the wall clock for the speed.  The
 * same binary gives the same sum: a fixed depth from the same sequence of
 * positions.  Exit status: CLI_USAGE with the engine's words when a search
 * fails (no bestmove, an illegal move, no nodes reported).
 */
static int engine_depth_bench(CliGitRef *g, const BuildLog *log)
{
    const EngineRecord *e = g->engine;
    PlayerSpec *spec = calloc(1, sizeof *spec);
    if (!spec)
        return cli_fail(CLI_FAIL, "out of memory");
    enum { WORDS = 5 + ENGINE_INIT_MAX };
    char buf[WORDS][SPEC_TEXT_MAX + 16], *words[WORDS], err[256];
    int n = 0;
    snprintf(buf[n++], sizeof buf[0], "name=%s", e->name);
    if (strlen(g->binary) >= SPEC_TEXT_MAX) {
        free(spec);
        return cli_fail(CLI_USAGE, "engine %s: the binary's path '%s' is too long", e->name, g->binary);
    }
    snprintf(buf[n++], sizeof buf[0], "cmd=%.*s", SPEC_TEXT_MAX - 1, g->binary);
    snprintf(buf[n++], sizeof buf[0], "proto=%s", engine_protocol_name(e->protocol));
    snprintf(buf[n++], sizeof buf[0], "ranks=%d", e->ranks_from_one ? 1 : 0);
    snprintf(buf[n++], sizeof buf[0], "letters=%s", e->he_letters ? "he" : "nb");
    for (int i = 0; i < e->init_count && n < WORDS; i++)
        snprintf(buf[n++], sizeof buf[0], "init=%s", e->init[i]);
    for (int i = 0; i < n; i++)
        words[i] = buf[i];
    if (spec_parse(spec, n, words, 0, err, sizeof err) != 0) {
        free(spec);
        return cli_fail(CLI_USAGE, "engine %s: %s", e->name, err);
    }
    spec->sandbox = true;
    External *x = external_new(spec);
    free(spec);
    if (!x)
        return cli_fail(CLI_FAIL, "out of memory");
    int lfd = dup(log->fd);
    FILE *lf = lfd >= 0 ? fdopen(lfd, "a") : NULL;
    if (lfd >= 0 && !lf)
        close(lfd);
    Reply r;
    int status = external_new_game(x, NULL, &r) == 0
                     ? CLI_OK
                     : cli_fail(CLI_USAGE, "engine %s: %.12s (%s) does not start: %s", e->name, g->commit, g->ref,
                                r.detail);
    int64_t total = 0, t0 = clock_now_us();
    for (int i = 0; status == CLI_OK && i < bench_position_count(); i++) {
        const char *fen = bench_position(i);
        Board b;
        if (fen_parse(&b, fen, FEN_GAME, err, sizeof err) != 0) {
            status = cli_fail(CLI_FAIL, "bench position %d: %s", i + 1, err);
            break;
        }
        GameView v = { .fen = fen, .board = &b };
        ThinkLimits l = { .depth = e->bench_depth, .deadline_us = clock_now_us() + DEPTH_BENCH_SEARCH_S * INT64_C(1000000) };
        external_think(x, &v, &l, &r);
        if (lf)
            fprintf(lf, "position %d (%s): depth %d, %" PRId64 " nodes, %.3f s%s%s\n", i + 1, fen, e->bench_depth,
                    r.nodes, r.time_us / 1e6, r.fault != GAME_REASON_NONE ? ": " : "", r.detail);
        if (r.fault != GAME_REASON_NONE)
            status = cli_fail(CLI_USAGE, "engine %s: the bench of %.12s (%s) failed at position %d (%s): %s",
                              e->name, g->commit, g->ref, i + 1, fen, r.detail);
        else if (r.nodes <= 0)
            status = cli_fail(CLI_USAGE, "engine %s: the bench of %.12s (%s): no nodes reported at position %d "
                              "(an info line with nodes N)", e->name, g->commit, g->ref, i + 1);
        else
            total += r.nodes;
    }
    int64_t us = clock_now_us() - t0;
    external_destroy(&x);
    if (lf)
        fclose(lf);
    if (status != CLI_OK) {
        print_tail(log, g);
        return status;
    }
    g->bench = total;
    printf("Bench: %" PRId64 "\nSpeed: %" PRId64 " nodes/s\n", total, us > 0 ? total * 1000000 / us : 0);
    return CLI_OK;
}

int cli_git_build(Store *s, CliGitRef *g, const char *out, int64_t jobs)
{
    if (g->reuse) {
        StoreBuild b;
        int found = store_load_build(s, g->reuse, &b);
        if (found <= 0)
            return cli_fail(CLI_FAIL, "cannot read build %" PRId64, g->reuse);
        printf("Bench: %" PRId64 "\n", b.bench_nodes);
        GitOrigin origin = { .want_bench = g->want_bench, .src.commit = "" };
        snprintf(origin.src.commit, sizeof origin.src.commit, "%s", g->commit);
        fprintf(stderr, "xqf-tune: %.12s (%s): its tree was built already, build %" PRId64 " (%s)\n", g->commit,
                g->ref, b.id, b.build_id);
        return bench_check(b.bench_nodes, &origin);
    }
    char tmp[PATH_MAX], box[PATH_MAX], log_path[PATH_MAX], built[PATH_MAX], abs_out[PATH_MAX / 2], cwd[PATH_MAX / 4];
    if (!(out[0] == '/' ? path_fmt(abs_out, sizeof abs_out, "%s", out)
                        : getcwd(cwd, sizeof cwd) && path_fmt(abs_out, sizeof abs_out, "%s/%s", cwd, out)))
        return cli_fail(CLI_USAGE, "--out: '%s' is too long", out);
    out = abs_out;
    const char *tmpdir = getenv("TMPDIR");
    if (!path_fmt(tmp, sizeof tmp, "%s/xqf-git-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp") || !mkdtemp(tmp))
        return cli_fail(CLI_FAIL, "cannot make a temporary folder: %s", strerror(errno));
    /*
     * tmp (private to the builder) holds the log and box/, the only folder
     * the box may write: whatever the branch's build leaves there (a link
     * named like the log or the binary, a FIFO, a hard link) is never
     * followed or opened by path from outside; the log is written through
     * a descriptor held from here on, and the binary is taken out of box/
     * by copy_binary's checks.
     */
    char tag[20], why[PATH_MAX + 128];
    net_suffix(&g->net, tag);
    const char *name = g->engine ? g->engine->name : "xqf-engine";
    BuildLog log = { .fd = -1, .path = log_path };
    int status = path_fmt(box, sizeof box, "%s/box", tmp) && path_fmt(log_path, sizeof log_path, "%s/build.log", tmp) &&
                         path_fmt(built, sizeof built, "%s/build/bin/xqf-engine", box) &&
                         path_fmt(g->binary, sizeof g->binary, "%s/%s-%.12s%s", out, name, g->commit, tag)
                     ? CLI_OK
                     : cli_fail(CLI_USAGE, "--out: '%s' is too long", out);
    if (status == CLI_OK && (mkdir(box, 0700) != 0 || log_open(&log, log_path, true) != 0))
        status = cli_fail(CLI_FAIL, "cannot make the build folder in %s: %s", tmp, strerror(errno));
    if (status == CLI_OK && g->net.id)
        status = cli_net_write(s, &g->net);
    if (status == CLI_OK)
        status = g->engine ? engine_compile(g, tmp, box, &log, jobs, built, sizeof built)
                           : git_compile(g, tmp, box, &log, jobs);
    if (status == CLI_OK && files_make_dirs(out) != 0)
        status = cli_fail(CLI_FAIL, "cannot create '%s': %s", out, strerror(errno));
    if (status == CLI_OK && copy_binary(box, built, g->binary, why, sizeof why) != 0) {
        dprintf(log.fd, "the build's binary is refused: %s\n", why);
        print_tail(&log, g);
        status = cli_fail(CLI_USAGE, "commit %.12s (%s): the build's binary is refused: %s: nothing recorded",
                          g->commit, g->ref, why);
    }
    if (status == CLI_OK && g->engine)
        status = g->engine->bench_command[0] ? engine_bench(g, &log) : engine_depth_bench(g, &log);
    else if (status == CLI_OK && (status = bench(g->binary, &log, &g->bench, true)) != CLI_OK)
        print_tail(&log, g);
    GitOrigin origin = { .want_bench = g->want_bench };
    snprintf(origin.src.commit, sizeof origin.src.commit, "%s", g->commit);
    if (status == CLI_OK)
        status = bench_check(g->bench, &origin);
    /* the compiled-in net against its file, in the box too (the binary is the branch's) */
    if (status == CLI_OK && g->net.id)
        status = net_check(g->binary, &log, &g->net, g->bench, true);
    log_close(&log);
    cli_net_drop(&g->net);
    if (status != CLI_OK && g->binary[0])
        unlink(g->binary);
    remove_tree(tmp);
    return status;
}

int cli_git_register(Store *s, CliGitRef *g, const char *sign_key, int64_t *id)
{
    CliSigning sg = { 0 };
    char err[512];
    if (sign_key && sign_key_read(sign_key, true, &sg.key, err, sizeof err) != 0)
        return cli_fail(CLI_USAGE, "--sign-key: %s", err);
    sg.has_key = sign_key != NULL;
    int status;
    StoreBuild b = { 0 };
    if (g->reuse) {
        /* the build of the same tree: signed now if it was not and a key is given */
        status = store_load_build(s, g->reuse, &b) == 1 ? CLI_OK : cli_fail(CLI_FAIL, "cannot read build %" PRId64, g->reuse);
        if (status == CLI_OK && !b.signature[0] && sg.has_key && (status = signing_apply(&sg, &b)) == CLI_OK &&
            store_add_build(s, &b, id) != 0)
            status = cli_fail(CLI_FAIL, "cannot record the signature");
        if (status == CLI_OK)
            printf("SHA-256: %s\nBuild: %" PRId64 "\nBinary: %s\n", b.sha256, b.id, b.path);
        *id = b.id;
    } else {
        GitOrigin origin = { .want_bench = g->want_bench, .bench = g->bench, .engine = g->engine };
        snprintf(origin.src.commit, sizeof origin.src.commit, "%s", g->commit);
        snprintf(origin.src.tree, sizeof origin.src.tree, "%s", g->tree);
        snprintf(origin.src.subject, sizeof origin.src.subject, "%s", g->subject);
        char tag[20], log[PATH_MAX];
        net_suffix(&g->net, tag);
        snprintf(b.build_id, sizeof b.build_id, "%.32s-%.12s%s", g->engine ? g->engine->name : "xqf-engine",
                 g->commit, tag);
        status = path_fmt(log, sizeof log, "%s.bench.log", g->binary) ? CLI_OK : cli_fail(CLI_USAGE, "path too long");
        if (status == CLI_OK)
            status = register_binary(s, g->binary, log, &b, &sg, &origin, g->net.id ? &g->net : NULL, id);
    }
    sign_key_wipe(&sg.key);
    return status;
}

/* A test of git refs made on the web: its build requests and their commits, with why one failed. Exit status. */
static int show_requests(Store *s, int64_t run)
{
    StoreBuildRequest *q = NULL;
    int n = store_build_requests(s, run, &q);
    if (n < 0)
        return cli_fail(CLI_FAIL, "cannot read the build requests of run %" PRId64, run);
    for (int i = 0; i < n; i++) {
        printf("%s ref: %s, %s", strcmp(q[i].side, "test") == 0 ? "Test" : "Base", q[i].ref, q[i].state);
        /* the commit an approval binds (pinned when the test was made), with its subject */
        if (q[i].commit[0])
            printf(", commit %s %s", q[i].commit, cli_shown(q[i].subject));
        else
            printf(", commit not read yet (the builder reads it)");
        if (q[i].build_id)
            printf(" (build %" PRId64 ")", q[i].build_id);
        printf("\n");
        /* the reason holds a build log's tail, a branch's words: escaped line by line (rows older than the
           builder's own sanitizing may hold anything) */
        char line[sizeof q[i].error];
        for (const char *p = q[i].error; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] != 0)) {
            snprintf(line, sizeof line, "%.*s", (int)strcspn(p, "\n"), p);
            printf("    %s\n", cli_shown(line));
        }
    }
    free(q);
    return CLI_OK;
}

int cli_show_builds(Store *s, int64_t run)
{
    int64_t ids[2];
    if (show_requests(s, run) != CLI_OK)
        return CLI_FAIL;
    if (store_run_builds(s, run, &ids[0], &ids[1]) < 0)
        return cli_fail(CLI_FAIL, "cannot read the builds of run %" PRId64, run);
    for (int i = 0; i < 2; i++) {
        StoreBuild b;
        StoreBuildSource src;
        if (!ids[i])
            continue;
        if (store_load_build(s, ids[i], &b) != 1 || store_build_source(s, ids[i], &src) != 1)
            return cli_fail(CLI_FAIL, "cannot read build %" PRId64, ids[i]);
        printf("%s build: %" PRId64 " %s, bench %" PRId64 ", %s", i ? "Base" : "Test", b.id, b.build_id,
               b.bench_nodes, b.signature[0] ? "signed" : "unsigned");
        if (src.commit[0])
            printf(", commit %.12s %s", src.commit, cli_shown(src.subject));
        if (b.net_id)
            printf(", net %s (SHA-256 %.16s) compiled in", cli_shown(b.net_name), b.net_sha256);
        printf("\n");
    }
    int64_t ref_nps;
    StoreWorkerBench *wb = NULL;
    int n = store_run_ref_nps(s, run, &ref_nps) < 0 ? -1 : store_worker_benches(s, run, &wb);
    if (n < 0)
        return cli_fail(CLI_FAIL, "cannot read the workers' benches of run %" PRId64, run);
    if (ref_nps > 0)
        printf("Clock scaled (--tc-scale): reference %" PRId64 " nodes/s\n", ref_nps);
    if (n > 0)
        printf("Workers' benches of its engines:\n");
    for (int i = 0; i < n; i++) {
        char line[STORE_TEXT_MAX * 2], shown[STORE_TEXT_MAX * 4];
        snprintf(line, sizeof line, "  %s %s%.16s: bench %" PRId64 ", %" PRId64 " nodes/s%s%s", wb[i].worker_name,
                 wb[i].net ? "net " : wb[i].sha256[0] ? "build " : "built-in engine", wb[i].sha256, wb[i].bench_nodes, wb[i].nps,
                 wb[i].refused[0] ? ", REFUSED: " : "", wb[i].refused);
        xqf_escape(shown, sizeof shown, line);  /* from the network */
        printf("%s\n", shown);
    }
    free(wb);
    return CLI_OK;
}

/* xqf-tune build --ref REF: one commit built and registered (of --engine NAME's repository, by its record). */
static int build_ref(const Opts *o, const char *out, int64_t jobs)
{
    if (o->npositional != 0 || opts_given(o, "--binary") || opts_given(o, "--name") ||
        opts_given(o, "--signature") || opts_given(o, "--source"))
        return cli_fail(CLI_USAGE, "build --ref REF takes only --engine, --net, --repo, --out, --jobs, --sign-key "
                                   "and --db");
    const char *name = opts_text(o, "--engine");
    bool other = name && strcmp(name, "xqf") != 0;
    if (other && opts_given(o, "--repo"))
        return cli_fail(CLI_USAGE, "--repo: engine %s's refs are read from its record's repository", name);
    Store *s = NULL;
    CliGitRef g;
    EngineRecord *engine = other ? malloc(sizeof *engine) : NULL;
    char cache[PATH_MAX];
    int64_t id;
    int status = other && !engine ? cli_fail(CLI_FAIL, "out of memory") : cli_open_db(o, &s);
    if (status == CLI_OK && !path_fmt(cache, sizeof cache, "%s/repos", out))
        status = cli_fail(CLI_USAGE, "--out: '%s' is too long", out);
    if (status == CLI_OK && other)
        status = cli_engine_load(s, "--engine", name, engine);
    if (status == CLI_OK && (status = cli_git_resolve(s, opts_text(o, "--repo"), opts_text(o, "--ref"),
                                                      opts_text(o, "--net"), engine, cache, &g)) == CLI_OK &&
        (status = cli_git_build(s, &g, out, jobs)) == CLI_OK)
        status = cli_git_register(s, &g, opts_text(o, "--sign-key"), &id);
    store_destroy(&s);
    free(engine);
    return status;
}

/* ---- the builder of the web's tests of git refs (build --serve) ------------------------ */

enum { SERVE_LEASE_S = 3600 };

/*
 * The set the side of request q plays on build, checked against the
 * parameters the build listed (cli_check_build_set, as sprt new checks a
 * ref's set once it is built): the form could check its syntax only.
 * Exit status.
 */
static int serve_check_set(Store *s, const StoreBuildRequest *q, int64_t build)
{
    char *sets = malloc(2 * (STORE_PARAMS_MAX + 1)), option[32];
    if (!sets)
        return cli_fail(CLI_FAIL, "out of memory");
    bool test = strcmp(q->side, "test") == 0;
    int found = store_run_sets(s, q->run_id, sets, sets + STORE_PARAMS_MAX + 1, STORE_PARAMS_MAX + 1);
    snprintf(option, sizeof option, "the %s set", q->side);
    int status = found < 0    ? cli_fail(CLI_FAIL, "cannot read the sets of run %" PRId64, q->run_id)
                 : found == 0 ? cli_fail(CLI_FAIL, "no run %" PRId64, q->run_id)
                              : cli_check_build_set(s, "the build", option, test ? sets : sets + STORE_PARAMS_MAX + 1,
                                                    build);
    free(sets);
    return status;
}

/*
 * An SPSA run's tuned options against the build of its ref (of another
 * engine, made on the web: its form could check the spec's syntax only),
 * as spsa new --engine checks them once it has built.  A run of another
 * kind has none.  Exit status.
 */
static int serve_check_spsa(Store *s, const StoreBuildRequest *q, int64_t build, const char *engine)
{
    StoreSpsa *st = malloc(sizeof *st);
    int found = st ? store_spsa_load(s, q->run_id, st) : -1;
    int status = found < 0    ? cli_fail(CLI_FAIL, "cannot read the SPSA state of run %" PRId64, q->run_id)
                 : found == 0 ? CLI_OK
                              : cli_check_build_spsa(s, "the spec", engine, build, st->params, st->count);
    free(st);
    return status;
}

/*
 * Resolves the ref of request q as build --ref does, in the repository of
 * its side's engine (ours: --repo; another's: its record's, a URL's mirror
 * fetched first) into *g, the engine's name into name (ENGINE_NAME_MAX + 1)
 * and its record into *engine.  Exit status.
 */
static int serve_resolve(Store *s, const Opts *o, const StoreBuildRequest *q, const char *out, CliGitRef *g,
                         EngineRecord *engine, char *name)
{
    char cache[PATH_MAX];
    int status = store_run_engine(s, q->run_id, q->side, name, ENGINE_NAME_MAX + 1) == 1
                     ? CLI_OK
                     : cli_fail(CLI_FAIL, "cannot read the engine of run %" PRId64, q->run_id);
    bool other = status == CLI_OK && name[0] && strcmp(name, "xqf") != 0;
    if (other)
        status = cli_engine_load(s, "the side's engine", name, engine);
    if (status == CLI_OK && !path_fmt(cache, sizeof cache, "%s/repos", out))
        status = cli_fail(CLI_USAGE, "--out: '%s' is too long", out);
    if (status == CLI_OK)
        status = cli_git_resolve(s, opts_text(o, "--repo"), q->ref, NULL, other ? engine : NULL, cache, g);
    return status;
}

/*
 * The commit the ref of request q names now, told to the database
 * (store_build_pin): pinned for a test just made, checked against the
 * pinned one before a build.  A ref that does not resolve, or moved, fails
 * the request and its run there.  Exit status: CLI_OK when the commit is
 * the request's, CLI_USAGE when refused (or its run ended), CLI_FAIL when
 * not recorded.
 */
static int serve_pin(Store *s, const Opts *o, const StoreBuildRequest *q, const char *out, CliGitRef *g,
                     EngineRecord *engine, char *name)
{
    int status = serve_resolve(s, o, q, out, g, engine, name);
    char state[16];
    int rc = store_build_pin(s, q->id, status == CLI_OK ? g->commit : NULL, g->subject,
                             status == CLI_OK ? "" : cli_last_error(), state, sizeof state);
    if (rc < 0)
        return cli_fail(CLI_FAIL, "cannot record the commit of request %" PRId64, q->id);
    if (rc == 0)
        return cli_fail(CLI_USAGE, "request %" PRId64 " was ended meanwhile: not built", q->id);
    if (strcmp(state, "failed") == 0 && q->commit[0] && status == CLI_OK)
        printf("run %" PRId64 ": the %s ref %s moved: approved at %s, now %s: refused; the run is failed\n",
               q->run_id, q->side, q->ref, q->commit, g->commit);
    else if (strcmp(state, "failed") == 0 && q->commit[0])
        printf("run %" PRId64 ": the %s ref %s (approved at %s) cannot be read now: refused; the run is failed\n",
               q->run_id, q->side, q->ref, q->commit);
    else if (strcmp(state, "failed") == 0)
        printf("run %" PRId64 ": the %s ref %s does not resolve; the run is failed\n", q->run_id, q->side, q->ref);
    else if (strcmp(state, "pending") != 0 && strcmp(state, "building") != 0)
        printf("run %" PRId64 ": the run is %s: the %s ref is not built\n", q->run_id, state, q->side);
    if (strcmp(state, "pending") != 0 && strcmp(state, "building") != 0)
        return CLI_USAGE;
    if (!q->commit[0])
        printf("run %" PRId64 ": the %s ref %s is commit %s; the run is %s\n", q->run_id, q->side, q->ref, g->commit,
               state);
    return CLI_OK;
}

/*
 * Builds one request's pinned commit as build --ref does, once its ref
 * still names it, checks the set its side plays against the build, and
 * records the outcome: a set the build refuses fails the request (and the
 * run) as a failed build does.  Exit status: CLI_FAIL when not recorded.
 */
static int serve_one(Store *s, const Opts *o, const StoreBuildRequest *q, const char *out, int64_t jobs)
{
    CliGitRef *g = calloc(1, sizeof *g);
    EngineRecord *engine = malloc(sizeof *engine);
    int64_t id = 0;
    char name[ENGINE_NAME_MAX + 1] = "";
    printf("run %" PRId64 ": building the %s ref %s at %.12s (request %" PRId64 ")\n", q->run_id, q->side, q->ref,
           q->commit, q->id);
    fflush(stdout);
    int status = g && engine ? CLI_OK : cli_fail(CLI_FAIL, "out of memory");
    /*
     * The ref read again: one that moved since the approval is refused (the
     * request and the run failed there).  Otherwise g->commit is the pinned
     * commit, and what follows reads that object (git archive of the hash),
     * never the ref: a push between this check and the export builds nothing
     * else.
     */
    if (status == CLI_OK) {
        int pinned = serve_pin(s, o, q, out, g, engine, name);
        if (pinned != CLI_OK) {
            free(g);
            free(engine);
            return pinned == CLI_USAGE ? CLI_OK : pinned;
        }
    }
    if (status == CLI_OK)
        status = cli_git_build(s, g, out, jobs);
    if (status == CLI_OK)
        status = cli_git_register(s, g, NULL, &id);
    if (status == CLI_OK)
        status = serve_check_set(s, q, id);
    if (status == CLI_OK)
        status = serve_check_spsa(s, q, id, name[0] ? name : "xqf");
    char *why = malloc(sizeof ((StoreBuildRequest *)NULL)->error), state[16];
    if (!why) {
        free(g);
        free(engine);
        return cli_fail(CLI_FAIL, "out of memory");
    }
    /* the reason as PostgreSQL's text takes it (an engine's words may be in it; the tail is clean already) */
    size_t size = sizeof ((StoreBuildRequest *)NULL)->error,
           n = xqf_text_sanitize(why, size, status == CLI_OK ? "" : cli_last_error());
    if (g && g->log_tail[0])
        snprintf(why + n, size - n, "\n--- the end of the build log ---\n%s", g->log_tail);
    int rc = store_build_done(s, q->id, status == CLI_OK ? id : 0, why, state, sizeof state);
    free(why);
    free(g);
    free(engine);
    if (rc < 0)
        return cli_fail(CLI_FAIL, "cannot record the outcome of request %" PRId64, q->id);
    if (rc == 0)
        fprintf(stderr, "xqf-tune: request %" PRId64 " was taken again by another builder: not recorded\n", q->id);
    else if (status == CLI_OK)
        printf("run %" PRId64 ": the %s side is build %" PRId64 "; the run is %s\n", q->run_id, q->side, id, state);
    else
        printf("run %" PRId64 ": the %s ref %s failed; the run is %s\n", q->run_id, q->side, q->ref, state);
    return CLI_OK;
}

/* xqf-tune build --serve: the queued requests built (with --watch, forever). Exit status. */
static int build_serve(const Opts *o, int64_t jobs)
{
    if (o->npositional != 0 || opts_given(o, "--binary") || opts_given(o, "--name") || opts_given(o, "--ref") ||
        opts_given(o, "--signature") || opts_given(o, "--source"))
        return cli_fail(CLI_USAGE, "build --serve takes only --repo, --watch, --out, --jobs and --db");
    if (opts_given(o, "--sign-key"))
        return cli_fail(CLI_USAGE, "build --serve: the builder holds no key (it runs the branches it builds); "
                        "sign its builds with a signer of their own: xqf-tune build --sign-serve --sign-key FILE");
    char host[128] = "", builder[192];
    gethostname(host, sizeof host - 1);
    snprintf(builder, sizeof builder, "%s:%ld", host, (long)getpid());
    int64_t watch = opts_int(o, "--watch");
    Store *s = NULL;
    int status = cli_open_db(o, &s);
    while (status == CLI_OK) {
        StoreBuildRequest q;
        /* the refs of tests just made pinned first, before any approval: resolving runs no branch's code */
        int got = store_build_to_pin(s, &q);
        if (got == 1) {
            CliGitRef *g = calloc(1, sizeof *g);
            EngineRecord *engine = malloc(sizeof *engine);
            char name[ENGINE_NAME_MAX + 1] = "";
            int st = g && engine ? serve_pin(s, o, &q, opts_text(o, "--out"), g, engine, name)
                                 : cli_fail(CLI_FAIL, "out of memory");
            free(g);
            free(engine);
            if (st == CLI_FAIL)
                status = st;    /* not recorded: the same request would come back at once */
            continue;
        }
        if (got == 0)
            got = store_build_claim(s, builder, SERVE_LEASE_S, &q);
        if (got == 1) {
            int st = serve_one(s, o, &q, opts_text(o, "--out"), jobs);
            if (st != CLI_OK && !watch)
                status = st;
            continue;
        }
        if (got < 0 && !watch)
            status = cli_fail(CLI_FAIL, "cannot read the build requests");
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

/* ---- the signer of the builder's builds (build --sign-serve) ------------------------- */

/*
 * Build id's stored bytes into a private temporary file and their SHA-256
 * into hex: what is signed is what workers will fetch, never a file the
 * builder could have changed.  Exit status.
 */
static int stored_sha256(Store *s, const char *sha256, char hex[SHA256_HEX_LEN + 1])
{
    char tmp[PATH_MAX];
    const char *tmpdir = getenv("TMPDIR");
    if (!path_fmt(tmp, sizeof tmp, "%s/xqf-sign-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp"))
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
static int sign_serve(const Opts *o, CliSigning *sg)
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

int tune_cmd_build(int argc, char **argv)
{
    Opts o;
    int64_t id;
    int status = cli_parse(&o, &BUILD_TABLE, argc - 1, argv + 1);
    if (status != CLI_GO)
        return status;
    if (opts_given(&o, "--engine") && (!opts_given(&o, "--ref") || opts_given(&o, "--serve") ||
                                       opts_given(&o, "--sign-serve")))
        return cli_fail(CLI_USAGE, "--engine goes with --ref (the builder reads each run's engine)");
    CliSigning sg;
    if ((status = cli_signing_load(&o, &sg)) != CLI_OK)
        return status;
    if (opts_given(&o, "--sign-serve")) {
        status = sign_serve(&o, &sg);
        sign_key_wipe(&sg.key);
        return status;
    }
    if (opts_given(&o, "--serve")) {
        sign_key_wipe(&sg.key);
        return build_serve(&o, opts_given(&o, "--jobs") ? opts_int(&o, "--jobs") : online_cores());
    }
    if (opts_given(&o, "--watch"))
        return cli_fail(CLI_USAGE, "--watch goes with --serve or --sign-serve");
    if (opts_given(&o, "--binary")) {
        status = build_binary(&o, &sg);
        sign_key_wipe(&sg.key);
        return status;
    }
    int64_t jobs = opts_given(&o, "--jobs") ? opts_int(&o, "--jobs") : online_cores();
    if (opts_given(&o, "--ref")) {
        sign_key_wipe(&sg.key);
        return build_ref(&o, opts_text(&o, "--out"), jobs);
    }
    if (opts_given(&o, "--repo"))
        return cli_fail(CLI_USAGE, "--repo goes with --ref or --serve");
    if (opts_given(&o, "--name"))
        return cli_fail(CLI_USAGE, "--name goes with --binary (a run's build is named after the run)");
    if (opts_given(&o, "--signature"))
        return cli_fail(CLI_USAGE, "--signature goes with --binary (sign a run's build with --sign-key)");
    if ((status = cli_run_id(&o, &id)) != CLI_OK)
        return status;
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
        status = build_run(s, id, source, out, jobs, &sg, opts_text(&o, "--net"), &id);
    store_destroy(&s);
    sign_key_wipe(&sg.key);
    return status;
}

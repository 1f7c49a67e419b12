/*
 * build_steps.c - the steps every form of xqf-tune build takes: a step
 * run and logged (in the sandbox for a branch's code), the binary taken
 * out of the folder a build made, its bench and the net it holds checked,
 * the parameters it lists, and its registration (signature, row, bytes)
 * in the engine builds table.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "build_internal.h"
#include "clock.h"
#include "files.h"
#include "fork_exec.h"
#include "process.h"
#include "sandbox.h"
#include "sha256.h"

/* snprintf into a path buffer: false when it did not fit. */
bool build_path_fmt(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < size;
}

/*
 * Opens path as log (appended to; fresh: created, and refused when
 * something is there already), without following a link.  0, or -1 with
 * errno set.
 */
int build_log_open(BuildLog *log, const char *path, bool fresh)
{
    log->path = path;
    log->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | (fresh ? O_EXCL : 0), 0644);
    return log->fd < 0 ? -1 : 0;
}

void build_log_close(BuildLog *log)
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
int build_spawn_io(char *const argv[], const BuildLog *log, char *capture, size_t size, const SandboxSpec *box,
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
    /* the pipe's ends and every other descriptor closed at exec in the child */
    ForkExec fe;
    fork_exec_init(&fe);
    fe.out = capture ? fds[1] : logfd;
    fe.err = capture && merge ? fds[1] : logfd;
    fe.close_fds = fe.say_failure = true;
    if (boxed) {
        /* limits and a wall-clock alarm (kept across exec) for the box, never for the builder */
        fe.path = boxed[0];
        sandbox_limits(box, &fe);
        fe.alarm_s = BOX_WALL_S;
    } else
        fe.search = true;
    pid_t pid = -1;
    fork_exec_start(&fe, boxed ? boxed : argv, &pid);
    if (null >= 0)
        close(null);
    free(boxed);
    if (capture) {
        close(fds[1]);
        read_all(fds[0], capture, size);
        close(fds[0]);
    }
    return fork_exec_wait(pid);
}

/* build_spawn_io with stderr in the log only. */
int build_spawn(char *const argv[], const BuildLog *log, char *capture, size_t size, const SandboxSpec *box)
{
    return build_spawn_io(argv, log, capture, size, box, false);
}

/*
 * The executable src that a build made in the folder dir, copied to dst
 * (through dst.tmp, renamed): taken without following links and checked
 * (sandbox_take), then copied from that same descriptor, so that the copy
 * is the file that was checked; everything after (bench, hash, bytes
 * stored) reads the copy, which no build can reach.  0, or -1 with why.
 */
int build_copy_binary(const char *dir, const char *src, const char *dst, char *why, size_t size)
{
    char tmp[PATH_MAX];
    if (!build_path_fmt(tmp, sizeof tmp, "%s.tmp", dst)) {
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
    const char *line = out && build_spawn(args, log, out, BENCH_OUT_MAX, boxed ? &box : NULL) == 0
                           ? strstr(out, "Nodes searched: ")
                           : NULL;
    bool ok = line && sscanf(line, "Nodes searched: %" SCNd64, nodes) == 1;
    free(out);
    return ok;
}

/* The binary's bench signature, printed. Exit status. */
int build_bench(const char *binary, const BuildLog *log, int64_t *nodes, bool boxed)
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
int build_net_check(const char *binary, const BuildLog *log, const CliNetFile *net, int64_t nodes, bool boxed)
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
int build_signing_apply(CliSigning *sg, StoreBuild *b)
{
    return cli_signing_apply(sg, SIGN_BUILD, b->sha256, b->build_id, b->signature);
}

/* A bench signature against the commit's Bench: line. Exit status. */
int build_bench_check(int64_t nodes, const GitOrigin *git)
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
 * it (build_net_check; a git build checked it in its sandbox already); the row
 * names the net.  Exit status.
 */
static int register_logged(Store *s, const char *binary, const BuildLog *log, StoreBuild *b, CliSigning *sg,
                           const GitOrigin *git, const CliNetFile *net, int64_t *id)
{
    int status = CLI_OK;
    if (git && git->bench > 0)
        b->bench_nodes = git->bench;
    else
        status = build_bench(binary, log, &b->bench_nodes, git != NULL);
    if (status != CLI_OK || (status = build_bench_check(b->bench_nodes, git)) != CLI_OK)
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
        status = build_net_check(binary, log, net, b->bench_nodes, git != NULL);
    if (status == CLI_OK && (status = build_signing_apply(sg, b)) == CLI_OK && !build_path_fmt(b->path, sizeof b->path, "%s", binary))
        status = cli_fail(CLI_USAGE, "'%s': path too long", binary);
    if (status == CLI_OK)
        status = record(s, binary, b, params, nparams, git ? &git->src : NULL, id);
    free(params);
    return status;
}

/* register_logged with its log at log_path (appended to). Exit status. */
int build_register_binary(Store *s, const char *binary, const char *log_path, StoreBuild *b, CliSigning *sg,
                          const GitOrigin *git, const CliNetFile *net, int64_t *id)
{
    BuildLog log;
    if (build_log_open(&log, log_path, false) != 0)
        return cli_fail(CLI_FAIL, "cannot open the log %s: %s", log_path, strerror(errno));
    int status = register_logged(s, binary, &log, b, sg, git, net, id);
    build_log_close(&log);
    return status;
}

/* "-netSHA12" for a build with a net compiled in, else "". */
void build_net_suffix(const CliNetFile *net, char out[20])
{
    snprintf(out, 20, "%s%.12s", net && net->id ? "-net" : "", net && net->id ? net->sha256 : "");
}

/* The online cores (at least 1). */
int64_t build_online_cores(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? cores : 1;
}

#define _GNU_SOURCE /* pipe2, posix_spawn_file_actions_addclosefrom_np (glibc 2.34) */
#include "process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "sha256.h"
#include "fork_exec.h"

extern char **environ;

enum { READ_BUFFER = 1 << 16, POLL_SLICE_MS = 50 };
/* What of a boxed program's stderr reaches the log: this many lines, each cut to this many bytes. */
enum { STDERR_LINES = 20, STDERR_LINE_MAX = 240 };

struct Process {
    pid_t pid;
    int in_fd;          /* the child's stdin (we write) */
    int out_fd;         /* the child's stdout (we read) */
    bool reaped;
    int status;         /* waitpid status once reaped */
    size_t len;         /* bytes buffered in buf */
    bool eof;
    char buf[READ_BUFFER];
};

static pthread_once_t sigpipe_once = PTHREAD_ONCE_INIT;

static void ignore_sigpipe(void)
{
    signal(SIGPIPE, SIG_IGN);
}

static void close_pair(int fds[2])
{
    if (fds[0] >= 0)
        close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
}

/*
 * posix_spawnp with the child's stdin/stdout on the pipes, in its own
 * process group, with no other descriptor than 0, 1 and 2: ours are
 * close-on-exec already, and whatever a library or the caller left open
 * without it is closed in the child too.
 */
static int spawn_child(char *const argv[], int to_child[2], int from_child[2], pid_t *pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc != 0)
        return rc;
    rc = posix_spawnattr_init(&attr);
    if (rc != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return rc;
    }
    sigset_t none;
    sigemptyset(&none);
    if ((rc = posix_spawn_file_actions_adddup2(&fa, to_child[0], STDIN_FILENO)) == 0
        && (rc = posix_spawn_file_actions_adddup2(&fa, from_child[1], STDOUT_FILENO)) == 0
        && (rc = posix_spawn_file_actions_addclosefrom_np(&fa, STDERR_FILENO + 1)) == 0
        && (rc = posix_spawnattr_setpgroup(&attr, 0)) == 0
        && (rc = posix_spawnattr_setsigmask(&attr, &none)) == 0
        && (rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK))
               == 0)
        rc = posix_spawnp(pid, argv[0], &fa, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    return rc;
}

/*
 * The verified start: fd is the program, opened and hashed by the caller;
 * the child runs exactly those bytes (fexecve), so a file replaced or
 * rewritten on disk after the check is never what runs.  The child is set
 * up as spawn_child's (pipes, own group, no other descriptor: everything
 * from 3 on is made close-on-exec, fd included, which fexecve of a binary
 * allows); between fork and exec it makes only async-signal-safe calls,
 * and an exec failure comes back as its errno through a close-on-exec pipe
 * (fork_exec.h).
 */
static int spawn_verified(int fd, char *const argv[], int to_child[2], int from_child[2], pid_t *pid)
{
    ForkExec sp;
    fork_exec_init(&sp);
    sp.exec_fd = fd;
    sp.in = to_child[0];
    sp.out = from_child[1];
    sp.own_group = sp.close_fds = sp.quiet_signals = sp.report = true;
    return fork_exec_start(&sp, argv, pid);
}

/*
 * The boxed start: as spawn_verified, but the child becomes the sandbox
 * (boxed: its command line, see sandbox_argv) with the program's descriptor
 * on 3, rewound, for the box to copy in and close; the box's limits are set
 * in the child before it execs.
 */
static int spawn_boxed(int fd, char *const boxed[], const SandboxSpec *box, int to_child[2], int from_child[2],
                       int err_fd, pid_t *pid)
{
    ForkExec sp;
    fork_exec_init(&sp);
    sp.path = boxed[0];
    sp.in = to_child[0];
    sp.out = from_child[1];
    sp.err = err_fd;
    sp.fd3 = fd;
    sp.own_group = sp.close_fds = sp.quiet_signals = sp.report = true;
    sandbox_limits(box, &sp);
    return fork_exec_start(&sp, boxed, pid);
}

/* A boxed program's stderr being read into the log: the pipe's end and the program's name. */
typedef struct {
    int fd;
    char name[64];
} StderrReader;

/*
 * Reads a boxed program's stderr to its end (the box and all it started
 * gone) and logs its first STDERR_LINES lines, each cut to STDERR_LINE_MAX
 * bytes and escaped by the log (xqf_escape: no forged journal line, no
 * escape sequence for whoever reads it on a terminal), then how much more
 * it wrote, counted and dropped.  An untrusted build's stderr, inherited,
 * would reach the worker's journal raw and unbounded; read and dropped,
 * it never blocks the program on a full pipe.
 */
static void *stderr_reader(void *arg)
{
    StderrReader *r = arg;
    char buf[4096], line[STDERR_LINE_MAX + 1];
    size_t len = 0;
    long long lines = 0, dropped_bytes = 0;
    ssize_t got;
    while ((got = read(r->fd, buf, sizeof buf)) > 0 || (got < 0 && errno == EINTR))
        for (ssize_t i = 0; i < got; i++) {
            if (buf[i] != '\n') {
                if (len < STDERR_LINE_MAX)
                    line[len++] = buf[i] ? buf[i] : ' ';
                else if (lines >= STDERR_LINES)
                    dropped_bytes++;
                continue;
            }
            line[len] = '\0';
            if (++lines <= STDERR_LINES)
                log_info("%s (stderr): %s", r->name, line);
            else
                dropped_bytes += (long long)len + 1;
            len = 0;
        }
    if (len > 0) {
        line[len] = '\0';
        if (++lines <= STDERR_LINES)
            log_info("%s (stderr): %s", r->name, line);
        else
            dropped_bytes += (long long)len;
    }
    if (lines > STDERR_LINES)
        log_info("%s (stderr): %lld more lines (%lld bytes) not logged", r->name, lines - STDERR_LINES,
                 dropped_bytes);
    close(r->fd);
    free(r);
    return NULL;
}

/* A detached thread reading fd (a boxed program's stderr; taken over, closed by it) into the log under name. */
static void read_stderr(int fd, const char *name)
{
    StderrReader *r = malloc(sizeof *r);
    pthread_t t;
    pthread_attr_t attr;
    int rc = r ? pthread_attr_init(&attr) : ENOMEM;
    if (rc == 0) {
        r->fd = fd;
        const char *base = strrchr(name, '/');
        snprintf(r->name, sizeof r->name, "%s", base ? base + 1 : name);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        rc = pthread_create(&t, &attr, stderr_reader, r);
        pthread_attr_destroy(&attr);
    }
    if (rc != 0) {
        free(r);
        close(fd);   /* the program's writes then fail (EPIPE): it plays on, its stderr unread */
    }
}

/* Opens argv0 and checks its SHA-256: the descriptor, or -1 with err. */
static int open_verified(const char *argv0, const char *sha256, char *err, size_t errlen)
{
    char hex[SHA256_HEX_LEN + 1];
    int fd = open(argv0, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        snprintf(err, errlen, "cannot start '%s': %s", argv0, strerror(errno));
        return -1;
    }
    if (sha256_fd(fd, hex) != 0) {
        snprintf(err, errlen, "cannot start '%s': cannot hash it: %s", argv0, strerror(errno));
        close(fd);
        return -1;
    }
    if (strcmp(hex, sha256) != 0) {
        snprintf(err, errlen, "not starting '%s': its SHA-256 is %.16s..., not the verified %.16s... "
                              "(changed on disk)", argv0, hex, sha256);
        close(fd);
        return -1;
    }
    return fd;
}

/* A program named without a '/' as execvp finds it, into path; false when it is not found. */
static bool find_in_path(const char *name, char *path, size_t size)
{
    if (strchr(name, '/'))
        return snprintf(path, size, "%s", name) < (int)size;
    const char *dirs = getenv("PATH");
    for (const char *d = dirs && *dirs ? dirs : "/usr/local/bin:/usr/bin:/bin"; *d;) {
        size_t len = strcspn(d, ":");
        if (snprintf(path, size, "%.*s/%s", (int)len, len ? d : ".", name) < (int)size && access(path, X_OK) == 0)
            return true;
        d += len + (d[len] == ':');
    }
    return false;
}

Process *process_spawn(char *const argv[], const char *sha256, char *err, size_t errlen)
{
    return process_spawn_boxed(argv, sha256, NULL, err, errlen);
}

Process *process_spawn_boxed(char *const argv[], const char *sha256, const SandboxSpec *box_in, char *err,
                             size_t errlen)
{
    pthread_once(&sigpipe_once, ignore_sigpipe);
    Process *p = malloc(sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    int to_child[2] = { -1, -1 }, from_child[2] = { -1, -1 }, err_pipe[2] = { -1, -1 };
    int rc = -1, fd = -1;
    char path[4096], **boxed = NULL;
    SandboxSpec box = box_in ? *box_in : (SandboxSpec){ 0 };
    if (box_in) {
        /* the program itself goes into the box: opened (and checked) here, copied in from that descriptor */
        box.program_on_fd3 = true;
        if (!find_in_path(argv[0], path, sizeof path)) {
            snprintf(err, errlen, "cannot start '%s': not found", argv[0]);
            free(p);
            return NULL;
        }
        fd = sha256 ? open_verified(path, sha256, err, errlen) : open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 && !sha256)
            snprintf(err, errlen, "cannot start '%s': %s", path, strerror(errno));
        int n = 0;
        while (argv[n])
            n++;
        char **inner = fd >= 0 ? calloc((size_t)n + 1, sizeof *inner) : NULL;
        if (inner) {
            inner[0] = SANDBOX_PROGRAM;
            for (int i = 1; i < n; i++)
                inner[i] = argv[i];
            boxed = sandbox_argv(&box, inner, err, errlen);
            free(inner);
        } else if (fd >= 0) {
            snprintf(err, errlen, "out of memory");
        }
        if (!boxed) {
            if (fd >= 0)
                close(fd);
            free(p);
            return NULL;
        }
    } else if (sha256 && (fd = open_verified(argv[0], sha256, err, errlen)) < 0) {
        free(p);
        return NULL;
    }
    /* close-on-exec from the start: no child another thread starts meanwhile inherits them */
    if (pipe2(to_child, O_CLOEXEC) == 0 && pipe2(from_child, O_CLOEXEC) == 0 &&
        (!boxed || pipe2(err_pipe, O_CLOEXEC) == 0))
        rc = boxed    ? spawn_boxed(fd, boxed, &box, to_child, from_child, err_pipe[1], &p->pid)
             : fd >= 0 ? spawn_verified(fd, argv, to_child, from_child, &p->pid)
                       : spawn_child(argv, to_child, from_child, &p->pid);
    else
        rc = errno;
    free(boxed);
    if (fd >= 0)
        close(fd);
    if (err_pipe[1] >= 0)
        close(err_pipe[1]);
    if (rc == 0 && err_pipe[0] >= 0)
        read_stderr(err_pipe[0], argv[0]);
    else if (err_pipe[0] >= 0)
        close(err_pipe[0]);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start '%s': %s", argv[0], strerror(rc));
        close_pair(to_child);
        close_pair(from_child);
        free(p);
        return NULL;
    }
    close(to_child[0]);
    close(from_child[1]);
    p->in_fd = to_child[1];
    p->out_fd = from_child[0];
    fcntl(p->out_fd, F_SETFL, fcntl(p->out_fd, F_GETFL) | O_NONBLOCK);
    p->reaped = false;
    p->status = 0;
    p->len = 0;
    p->eof = false;
    return p;
}

/*
 * Kills the child's process group (what the engine started goes with it)
 * and reaps the child.  Called while the child is not yet reaped: its pid,
 * the group's id, cannot have been reused.
 */
static void kill_and_reap(Process *p)
{
    kill(-p->pid, SIGKILL);
    while (waitpid(p->pid, &p->status, 0) < 0 && errno == EINTR)
        ;
    p->reaped = true;
}

/* Reaps the child if it has exited, waiting up to wait_ms; the rest of its group is killed first. */
static bool reap(Process *p, int wait_ms)
{
    int64_t deadline = clock_now_us() + (int64_t)wait_ms * 1000;
    while (!p->reaped) {
        siginfo_t info = { 0 };
        int r = waitid(P_PID, (id_t)p->pid, &info, WEXITED | WNOHANG | WNOWAIT);   /* left a zombie */
        if (r == 0 && info.si_pid == p->pid) {
            kill_and_reap(p);
            break;
        }
        if (r < 0 && errno != EINTR) {
            p->reaped = true;
            break;
        }
        if (clock_now_us() >= deadline)
            break;
        struct timespec ts = { 0, 2 * 1000000 };
        nanosleep(&ts, NULL);
    }
    return p->reaped;
}

void process_destroy(Process **pp, int grace_ms)
{
    Process *p = *pp;
    if (!p)
        return;
    close(p->in_fd);
    if (!reap(p, grace_ms))
        kill_and_reap(p);
    close(p->out_fd);
    free(p);
    *pp = NULL;
}

int process_write_line(Process *p, const char *text)
{
    size_t n = strlen(text);
    char *line = malloc(n + 1);
    if (!line)
        return -1;
    memcpy(line, text, n);
    line[n] = '\n';
    size_t done = 0;
    while (done < n + 1) {
        ssize_t w = write(p->in_fd, line + done, n + 1 - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    free(line);
    return done == n + 1 ? 0 : -1;
}

/* Moves one complete line (or a full buffer) out of p->buf; false if none yet. */
static bool take_line(Process *p, char *out, size_t cap)
{
    char *nl = memchr(p->buf, '\n', p->len);
    if (!nl && p->len < sizeof p->buf && !(p->eof && p->len > 0))
        return false;
    size_t line_len = nl ? (size_t)(nl - p->buf) : p->len;
    size_t used = nl ? line_len + 1 : line_len;
    if (line_len > 0 && p->buf[line_len - 1] == '\r')
        line_len--;
    size_t copy = line_len < cap - 1 ? line_len : cap - 1;
    for (size_t i = 0; i < copy; i++)
        out[i] = p->buf[i] ? p->buf[i] : '?';
    out[copy] = '\0';
    memmove(p->buf, p->buf + used, p->len - used);
    p->len -= used;
    return true;
}

ProcessRead process_read_line(Process *p, int64_t deadline_us, const atomic_bool *stop,
                              char *buf, size_t cap)
{
    for (;;) {
        if (take_line(p, buf, cap))
            return PROCESS_LINE;
        if (p->eof)
            return PROCESS_EOF;
        if (stop && atomic_load(stop))
            return PROCESS_STOPPED;
        int64_t left_us = deadline_us - clock_now_us();
        if (left_us <= 0)
            return PROCESS_TIMEOUT;
        int wait_ms = left_us / 1000 + 1 < POLL_SLICE_MS ? (int)(left_us / 1000 + 1) : POLL_SLICE_MS;
        struct pollfd pfd = { p->out_fd, POLLIN, 0 };
        int r = poll(&pfd, 1, wait_ms);
        if (r < 0 && errno != EINTR)
            p->eof = true;
        if (r <= 0)
            continue;
        ssize_t n = read(p->out_fd, p->buf + p->len, sizeof p->buf - p->len);
        if (n > 0)
            p->len += (size_t)n;
        else if (n == 0 || (errno != EAGAIN && errno != EINTR))
            p->eof = true;
    }
}

bool process_exit_status(Process *p, int wait_ms, char *out, size_t outlen)
{
    if (!reap(p, wait_ms)) {
        snprintf(out, outlen, "still running");
        return false;
    }
    if (WIFSIGNALED(p->status))
        snprintf(out, outlen, "killed by signal %d", WTERMSIG(p->status));
    else if (WIFEXITED(p->status))
        snprintf(out, outlen, "exit status %d", WEXITSTATUS(p->status));
    else
        snprintf(out, outlen, "ended");
    return true;
}

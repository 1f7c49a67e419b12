/*
 * sandbox.c - the box of sandbox.h, made of bubblewrap's options.
 */
#define _DEFAULT_SOURCE
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Fixed paths, not PATH: whoever sets the builder's PATH must not choose its sandbox. */
static const char *const BWRAP = "/usr/bin/bwrap", *const SYSTEMD_RUN = "/usr/bin/systemd-run";

enum { ARGS_MAX = 112, NOBODY = 65534, SCOPE_TASKS = 1024 };

/*
 * The box's /tmp: a tmpfs of at most this many bytes.  Its pages are
 * memory that RLIMIT_AS does not count: unbounded, a box could fill the
 * machine's memory by writing there.
 */
#define TMP_BYTES "536870912"

/*
 * Whether this bubblewrap has --disable-userns (0.8) and --size (0.5): 1
 * yes, 0 no (an older one: the box then has nested user namespaces and an
 * unbounded /tmp, said by sandbox_describe), -1 not checked yet.
 */
static int modern = -1;

/* The options every box has: namespaces, nobody, no environment, the read-only system. */
static int base_args(const char **a, int n)
{
    static const char *const FIXED[] = {
        "--die-with-parent", "--new-session", "--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534",
        "--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/tmp",
        "--setenv", "LANG", "C.UTF-8", "--ro-bind", "/usr", "/usr", "--proc", "/proc", "--dev", "/dev",
        /* what compilers and the dynamic loader read under /etc (cc is an alternatives link) */
        "--ro-bind-try", "/etc/alternatives", "/etc/alternatives", "--ro-bind-try", "/etc/ld.so.cache",
        "/etc/ld.so.cache", "--ro-bind-try", "/etc/ld.so.conf", "/etc/ld.so.conf", "--ro-bind-try",
        "/etc/ld.so.conf.d", "/etc/ld.so.conf.d",
    };
    if (modern) {
        /* no user namespace inside the box (user namespaces are where most kernel privilege
           escalations start: bubblewrap's --disable-userns, max_user_namespaces 1 in the box) */
        a[n++] = "--disable-userns";
        a[n++] = "--size";
        a[n++] = TMP_BYTES;
    }
    a[n++] = "--tmpfs";
    a[n++] = "/tmp";
    for (size_t i = 0; i < sizeof FIXED / sizeof *FIXED; i++)
        a[n++] = FIXED[i];
    /* /bin, /lib, ...: links into /usr on a merged-/usr system, folders of their own on an older one */
    static const char *const TOP[][2] = { { "/bin", "usr/bin" }, { "/sbin", "usr/sbin" }, { "/lib", "usr/lib" },
                                          { "/lib64", "usr/lib64" }, { "/lib32", "usr/lib32" } };
    for (size_t i = 0; i < sizeof TOP / sizeof *TOP; i++) {
        struct stat st;
        if (lstat(TOP[i][0], &st) != 0)
            continue;
        if (S_ISLNK(st.st_mode)) {
            a[n++] = "--symlink", a[n++] = TOP[i][1], a[n++] = TOP[i][0];
        } else {
            a[n++] = "--ro-bind", a[n++] = TOP[i][0], a[n++] = TOP[i][0];
        }
    }
    return n;
}

/* Runs a (argv, a[0] the program) with stdout and stderr thrown away: its exit status, or -1. */
static int run_quietly(const char *program, const char *const *a)
{
    ForkExec sp;
    fork_exec_init(&sp);
    sp.path = program;
    sp.out = sp.err = open("/dev/null", O_RDWR | O_CLOEXEC);
    pid_t pid = -1;
    fork_exec_start(&sp, (char *const *)a, &pid);
    if (sp.out >= 0)
        close(sp.out);
    return fork_exec_wait(pid);
}

/*
 * Whether boxes go in a transient systemd scope (cgroup limits on memory,
 * tmpfs included, and on tasks, for the box and all it starts): where
 * systemd-run is installed and a manager answers it, the system's for
 * root, else the user's (a system user without lingering has none).
 * Checked once, by making one scope for /bin/true.  -1 none, 0 the
 * system's, 1 the user's.
 */
static int scope_manager(void)
{
    static int manager = -2;
    if (manager == -2) {
        manager = -1;
        if (access(SYSTEMD_RUN, X_OK) == 0)
            for (int user = geteuid() == 0 ? 0 : 1; user <= 1 && manager < 0; user++) {
                const char *a[] = { SYSTEMD_RUN, user ? "--user" : "--quiet", "--scope", "--quiet", "--collect",
                                    "-p", "MemoryMax=64M", "-p", "TasksMax=16", "/bin/true", NULL };
                if (run_quietly(SYSTEMD_RUN, a) == 0)
                    manager = user;
            }
    }
    return manager;
}

const char *sandbox_describe(const SandboxSpec *sp)
{
    static char text[320];
    long mb = sp->memory_mb > 0 ? sp->memory_mb : 4096;
    int manager = sp->program_on_fd3 ? -1 : scope_manager();
    snprintf(text, sizeof text, "%s; limits: %s%ld MB of address space, CPU time, file size, processes (rlimits)",
             modern > 0 ? "no user namespace inside, /tmp a tmpfs of 512 MiB"
                        : "this bubblewrap (before 0.8) leaves user namespaces inside and an unbounded /tmp",
             manager == 0   ? "a systemd scope of the system's (MemoryMax, TasksMax), "
             : manager == 1 ? "a systemd scope of the user's (MemoryMax, TasksMax), "
                            : "no systemd scope (no manager answers systemd-run), ",
             mb);
    return text;
}

const char *sandbox_program(char *why, size_t size)
{
    static int checked;      /* 0 not yet, 1 works, -1 does not */
    static char reason[256];
    if (!checked) {
        checked = -1;
        if (access(BWRAP, X_OK) != 0) {
            snprintf(reason, sizeof reason, "%s not found (Debian's bubblewrap package; ops/setup installs it)", BWRAP);
        } else {
            /* one empty box: user namespaces may be off (kernel.unprivileged_userns_clone); with
               this bubblewrap's newer options first, then without them (an older bubblewrap) */
            for (modern = 1; modern >= 0 && checked < 0; modern--) {
                const char *a[ARGS_MAX];
                int n = 0;
                a[n++] = BWRAP;
                n = base_args(a, n);
                a[n++] = "/bin/true";
                a[n] = NULL;
                if (run_quietly(BWRAP, a) == 0) {
                    checked = 1;
                    break;
                }
            }
            if (checked < 0)
                snprintf(reason, sizeof reason, "%s cannot make a sandbox here (user namespaces off?)", BWRAP);
        }
    }
    if (checked < 0) {
        snprintf(why, size, "%s", reason);
        return NULL;
    }
    return BWRAP;
}

char **sandbox_argv(const SandboxSpec *sp, char *const argv[], char *why, size_t size)
{
    const char *prog = sandbox_program(why, size);
    if (!prog)
        return NULL;
    int nargv = 0;
    while (argv[nargv])
        nargv++;
    /* the pointers, then room for the scope's two properties (freed with them) */
    size_t slots = (size_t)(ARGS_MAX + 4 * SANDBOX_PATHS * 3 + 20 + nargv + 1);
    const char **a = calloc(1, slots * sizeof *a + 64);
    if (!a) {
        snprintf(why, size, "out of memory");
        return NULL;
    }
    int n = 0;
    /*
     * In a transient scope where a manager answers: the cgroup bounds what
     * rlimits cannot (the box's tmpfs, the sum over its processes, how
     * many tasks it forks).  Not for a program on descriptor 3 (the
     * worker's engines): that descriptor must reach bubblewrap, and
     * systemd-run is not relied on to pass it; they keep the rlimits.
     */
    int manager = sp->program_on_fd3 ? -1 : scope_manager();
    if (manager >= 0) {
        char *memory = (char *)(a + slots), *tasks = memory + 32;
        snprintf(memory, 32, "MemoryMax=%ldM", sp->memory_mb > 0 ? sp->memory_mb : 4096);
        snprintf(tasks, 32, "TasksMax=%d", SCOPE_TASKS);
        a[n++] = SYSTEMD_RUN;
        if (manager == 1)
            a[n++] = "--user";
        a[n++] = "--scope";
        a[n++] = "--quiet";
        a[n++] = "--collect";
        a[n++] = "-p";
        a[n++] = memory;
        a[n++] = "-p";
        a[n++] = tasks;
        a[n++] = "--";
    }
    a[n++] = prog;
    n = base_args(a, n);
    for (int pass = 0; pass < 2; pass++) {
        const char *const *paths = pass ? sp->ro : sp->rw;
        for (int i = 0; i < SANDBOX_PATHS && paths[i]; i++) {
            if (paths[i][0] != '/') {
                snprintf(why, size, "sandbox: '%s' is not an absolute path", paths[i]);
                free(a);
                return NULL;
            }
            a[n++] = pass ? "--ro-bind" : "--bind";
            a[n++] = paths[i];
            a[n++] = paths[i];
        }
    }
    if (sp->program_on_fd3) {
        a[n++] = "--perms";
        a[n++] = "0555";
        a[n++] = "--file";
        a[n++] = "3";
        a[n++] = SANDBOX_PROGRAM;
    }
    if (sp->chdir) {
        a[n++] = "--chdir";
        a[n++] = sp->chdir;
    }
    a[n++] = "--";
    for (int i = 0; i < nargv; i++)
        a[n++] = argv[i];
    a[n] = NULL;
    return (char **)a;
}

void sandbox_limits(const SandboxSpec *sp, ForkExec *fe)
{
    long mb = sp->memory_mb > 0 ? sp->memory_mb : 4096, cpu = sp->cpu_s > 0 ? sp->cpu_s : 3600;
    struct rlimit as = { (rlim_t)mb << 20, (rlim_t)mb << 20 }, cpu_l = { (rlim_t)cpu, (rlim_t)cpu + 10 },
                  fsize = { (rlim_t)2 << 30, (rlim_t)2 << 30 }, core = { 0, 0 }, nproc = { 4096, 4096 };
    int n = 0;
#ifndef __SANITIZE_ADDRESS__
    /* AddressSanitizer reserves terabytes of address space for its shadow: a sanitized build (the
       test suite's) runs its boxes without this limit; every other build keeps it */
    fe->limits[n++] = (ForkExecLimit){ RLIMIT_AS, as };
#else
    (void)as;
#endif
    fe->limits[n++] = (ForkExecLimit){ RLIMIT_CPU, cpu_l };
    fe->limits[n++] = (ForkExecLimit){ RLIMIT_FSIZE, fsize };
    fe->limits[n++] = (ForkExecLimit){ RLIMIT_CORE, core };
    fe->limits[n++] = (ForkExecLimit){ RLIMIT_NPROC, nproc };
    fe->nlimits = n;
}

/*
 * rel opened below dirfd, no link followed on the way: the last component
 * with flags (O_NOFOLLOW added), each one before it as a folder opened
 * with O_NOFOLLOW, ".." refused.  The fallback of sandbox_take where the
 * kernel has no openat2 (before Linux 5.6): what RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS does, one component at a time.
 */
static int open_beneath_walk(int dirfd, const char *rel, int flags)
{
    char part[NAME_MAX + 1];
    int fd = dup(dirfd);
    for (const char *p = rel; fd >= 0 && *p;) {
        size_t len = strcspn(p, "/");
        const char *next = p + len + (p[len] == '/');
        if (len == 0 || (len == 1 && p[0] == '.')) {
            p = next;
            continue;
        }
        if (len > NAME_MAX || (len == 2 && p[0] == '.' && p[1] == '.')) {
            close(fd);
            errno = len > NAME_MAX ? ENAMETOOLONG : EXDEV;
            return -1;
        }
        memcpy(part, p, len);
        part[len] = '\0';
        bool last = next[strspn(next, "/")] == '\0';
        int sub = openat(fd, part, last ? flags | O_NOFOLLOW : O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int saved = errno;
        struct stat st;
        /* a link where a folder is wanted fails with ENOTDIR under O_DIRECTORY: say it is a link */
        if (sub < 0 && saved == ENOTDIR && fstatat(fd, part, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
            saved = ELOOP;
        close(fd);
        errno = saved;
        fd = sub;
        p = next;
    }
    return fd;
}

int sandbox_take(const char *dir, const char *path, long long max, char *why, size_t size)
{
    size_t dlen = strlen(dir);
    if (strncmp(path, dir, dlen) != 0 || path[dlen] != '/') {
        snprintf(why, size, "%s is not in the build folder %s", path, dir);
        return -1;
    }
    const char *rel = path + dlen + 1;
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dirfd < 0) {
        snprintf(why, size, "cannot open the build folder %s: %s", dir, strerror(errno));
        return -1;
    }
    /* O_NONBLOCK: a FIFO opens at once instead of waiting for a writer (the fstat below refuses it) */
    int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
    /* openat2(2), Linux 5.6: the kernel resolves the path below dirfd and fails on any link on the way */
    struct open_how how = { .flags = (unsigned long long)flags,
                            .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
    int fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
    if (fd < 0 && (errno == ENOSYS || errno == EPERM || errno == E2BIG))
        fd = open_beneath_walk(dirfd, rel, flags);    /* an older kernel, or a seccomp filter that refuses it */
    int err = errno;
    close(dirfd);
    if (fd < 0) {
        snprintf(why, size, "%s: %s", path,
                 err == ELOOP ? "a symbolic link on its path (the box's links are not followed)"
                 : err == EXDEV ? "its path leads out of the build folder"
                 : strerror(err));
        return -1;
    }
    struct stat st;
    const char *bad = fstat(fd, &st) != 0       ? strerror(errno)
                      : !S_ISREG(st.st_mode)    ? "not a regular file (a FIFO, a device, a folder or a socket)"
                      : st.st_nlink != 1        ? "a file with more than one link (a hard link)"
                      : st.st_size > max        ? "larger than the most a build may be"
                      : fcntl(fd, F_SETFL, 0) != 0 ? strerror(errno)
                                               : NULL;
    if (bad) {
        snprintf(why, size, "%s: %s", path, bad);
        close(fd);
        return -1;
    }
    return fd;
}

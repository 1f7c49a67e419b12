/*
 * fork_exec.h - the one way the project's programs start another program in
 * a child process (fork, then exec): the child's stdin, stdout and stderr
 * on given descriptors, one more descriptor on 3 when asked, a process
 * group of its own, every other descriptor closed at exec, resource limits
 * and a wall-clock alarm, then one of three execs: execv of a path, execvp
 * of a name looked up in PATH, or fexecve of a descriptor, so that what
 * runs is the bytes that were opened and checked, never the path again.
 * Between fork and exec the child makes only async-signal-safe calls (the
 * worker starts engines from several threads), but for the message of
 * say_failure.
 *
 * Its users: the sandbox's probe (sandbox.c), the game library's verified
 * and boxed starts of engines (worker/game/process.c), xqf-tune's build
 * steps (tuner/cli/build_steps.c) and its chains' trainer (steer.c).
 * (Not named spawn.h: that is the C library's posix_spawn header, which
 * a header of that name in an include folder would hide.)
 */
#ifndef XQF_FORK_EXEC_H
#define XQF_FORK_EXEC_H

#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

/* One resource limit the child sets before exec (setrlimit). */
typedef struct {
    int resource;                 /* RLIMIT_* */
    struct rlimit limit;
} ForkExecLimit;

enum { FORK_EXEC_LIMITS_MAX = 8 };

typedef struct {
    const char *path;             /* execv of this path (NULL: argv[0]) */
    bool search;                  /* execvp: argv[0] looked up in PATH (path unused) */
    int exec_fd;                  /* >= 0: fexecve of this descriptor instead (path, search unused) */
    int in, out, err;             /* >= 0: the child's stdin, stdout, stderr (dup2); -1: inherited */
    int fd3;                      /* >= 0: put on descriptor 3 (kept across exec) and rewound; -1: none */
    bool close_fds;               /* every descriptor above stderr (above 3 with fd3) closed at exec */
    bool own_group;               /* the child leads a process group of its own (set on both sides of the
                                     fork, so that it is so whichever runs first) */
    bool quiet_signals;           /* every signal blocked across the fork (no handler of ours runs in the
                                     child); the child execs with none blocked */
    bool report;                  /* an exec that fails is fork_exec_start's error (its errno, through a
                                     close-on-exec pipe; the child reaped), not a child that exits 127 */
    bool say_failure;             /* an exec that fails writes "cannot run NAME: ERROR" on the child's stderr */
    unsigned alarm_s;             /* > 0: a wall-clock alarm set in the child, kept across exec */
    ForkExecLimit limits[FORK_EXEC_LIMITS_MAX];  /* set in the child before exec */
    int nlimits;
} ForkExec;

/* sp as nothing asked: descriptors inherited, no group, no limits, execv of argv[0]. */
void fork_exec_init(ForkExec *sp);

/*
 * Starts argv (argv[0] its name) as sp says: 0 with the child's pid in
 * *pid, or an errno value (fork failed; with report, the exec or the
 * child's set-up failed too).  Without report a child whose set-up or exec
 * fails exits with status 127.
 */
int fork_exec_start(const ForkExec *sp, char *const argv[], pid_t *pid);

/* Waits for child pid (through EINTR): its exit status, or -1 (killed by a signal, or pid < 0 or unknown). */
int fork_exec_wait(pid_t pid);

#endif

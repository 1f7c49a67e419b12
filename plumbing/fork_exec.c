#define _GNU_SOURCE /* pipe2, close_range (glibc 2.34) */
#include "fork_exec.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

void fork_exec_init(ForkExec *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->exec_fd = sp->in = sp->out = sp->err = sp->fd3 = -1;
}

/* Writes text on descriptor fd (async-signal-safe). */
static void say(int fd, const char *text)
{
    ssize_t w = write(fd, text, strlen(text));
    (void)w;
}

/* The child, after fork: set up as sp says, then exec; never returns. */
static void child(const ForkExec *sp, char *const argv[], int report)
{
    int e = 0;
    if ((sp->in >= 0 && dup2(sp->in, STDIN_FILENO) < 0) || (sp->out >= 0 && dup2(sp->out, STDOUT_FILENO) < 0) ||
        (sp->err >= 0 && dup2(sp->err, STDERR_FILENO) < 0) || (sp->own_group && setpgid(0, 0) != 0) ||
        (sp->fd3 >= 0 && ((sp->fd3 == 3 ? fcntl(3, F_SETFD, 0) : dup2(sp->fd3, 3)) < 0 || lseek(3, 0, SEEK_SET) != 0)) ||
        (sp->close_fds && close_range(sp->fd3 >= 0 ? 4 : STDERR_FILENO + 1, ~0U, CLOSE_RANGE_CLOEXEC) != 0))
        e = errno;
    if (!e) {
        for (int i = 0; i < sp->nlimits; i++)
            setrlimit(sp->limits[i].resource, &sp->limits[i].limit);
        if (sp->alarm_s)
            alarm(sp->alarm_s);
        if (sp->quiet_signals) {
            sigset_t none;
            sigemptyset(&none);
            pthread_sigmask(SIG_SETMASK, &none, NULL);
        }
        if (sp->exec_fd >= 0)
            fexecve(sp->exec_fd, argv, environ);
        else if (sp->search)
            execvp(argv[0], argv);
        else
            execv(sp->path ? sp->path : argv[0], argv);
        e = errno;
    }
    if (report >= 0) {
        ssize_t w = write(report, &e, sizeof e);
        (void)w;
    }
    if (sp->say_failure) {
        say(STDERR_FILENO, "cannot run ");
        say(STDERR_FILENO, argv[0]);
        say(STDERR_FILENO, ": ");
        say(STDERR_FILENO, strerror(e));
        say(STDERR_FILENO, "\n");
    }
    _exit(127);
}

int fork_exec_start(const ForkExec *sp, char *const argv[], pid_t *pid)
{
    int report[2] = { -1, -1 };
    if (sp->report && pipe2(report, O_CLOEXEC) != 0)
        return errno;
    sigset_t all, old;
    if (sp->quiet_signals) {
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);     /* no handler of ours runs in the child */
    }
    pid_t c = fork();
    if (c == 0)
        child(sp, argv, report[1]);
    int rc = c < 0 ? errno : 0;
    if (sp->quiet_signals)
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (c > 0 && sp->own_group)
        setpgid(c, c);                                /* as the child does: whichever runs first */
    if (sp->report) {
        close(report[1]);
        int child_errno;
        ssize_t n = 0;
        while (c > 0 && (n = read(report[0], &child_errno, sizeof child_errno)) < 0 && errno == EINTR)
            ;
        if (c > 0 && n == (ssize_t)sizeof child_errno) {
            while (waitpid(c, NULL, 0) < 0 && errno == EINTR)
                ;
            rc = child_errno ? child_errno : ENOEXEC;
        }
        close(report[0]);
    }
    if (rc == 0)
        *pid = c;
    return rc;
}

int fork_exec_wait(pid_t pid)
{
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return pid > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

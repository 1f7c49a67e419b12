/*
 * sandbox.h - running untrusted code (a tester's branch being built, the
 * binary it made) in a box: bubblewrap (bwrap, Debian's package of the
 * Flatpak project's sandbox) gives it namespaces of its own, so that it
 * sees only the system's read-only /usr, a private /tmp and the folders
 * named here, has no network (a network namespace with loopback only),
 * runs as "nobody" with an empty environment, and dies with its parent.
 * Resource limits (memory, CPU time, file size, processes) are set with
 * setrlimit in the child before it becomes bwrap; where systemd answers,
 * the box runs in a transient scope besides, with a memory and a task
 * limit on its cgroup (systemd-run --scope).  No user namespace inside
 * the box (--disable-userns) and a /tmp of bounded size, where this
 * bubblewrap has them.
 *
 * What it cannot reach is what it is not given: the builder's keys, its
 * database connection string (the environment is cleared), /etc, the
 * home folders, every other file of the machine.
 */
#ifndef XQF_SANDBOX_H
#define XQF_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

#include "fork_exec.h"

enum { SANDBOX_PATHS = 4 };

/* Where a program given on descriptor 3 runs inside the box (argv[0] of the command). */
#define SANDBOX_PROGRAM "/engine"

typedef struct {
    const char *rw[SANDBOX_PATHS];   /* folders bound read-write at their own path (NULL ends) */
    const char *ro[SANDBOX_PATHS];   /* files or folders bound read-only at their own path (NULL ends) */
    const char *chdir;               /* the working folder inside (NULL: /) */
    bool program_on_fd3;             /* the program is the file open on descriptor 3 (from its start):
                                        copied into the box as /engine (read-only, executable) and the
                                        descriptor closed, so what runs is the file that was checked */
    long memory_mb;                  /* address space limit (0: 4,096 MB) */
    long cpu_s;                      /* CPU time limit in seconds (0: 3,600) */
} SandboxSpec;

/* The sandbox program, or NULL with why (not installed, or it cannot make namespaces here). */
const char *sandbox_program(char *why, size_t size);

/*
 * argv prefixed with the sandbox's command line: a malloc'd NULL-ended
 * array (free it; its strings are argv's, sp's or static).  NULL with why
 * when the sandbox is not available or a path is not absolute.
 */
char **sandbox_argv(const SandboxSpec *sp, char *const argv[], char *why, size_t size);

/*
 * What the box of sp is, in words, for a log: the bubblewrap options this
 * one supports (no user namespace inside, a bounded /tmp) and which limits
 * apply (a systemd scope's MemoryMax and TasksMax where systemd-run finds
 * a manager, and the rlimits always).  After sandbox_program.  Static
 * text, good until the next call.
 */
const char *sandbox_describe(const SandboxSpec *sp);

/* The resource limits of sp, into fe's limits (fork_exec.h): the child sets them before it execs the box. */
void sandbox_limits(const SandboxSpec *sp, ForkExec *fe);

/*
 * A file the box made, taken out of it: path (absolute, under the folder
 * dir that was bound read-write into the box) opened for reading without
 * following any link on the way below dir, and checked before anyone
 * reads it: a regular file (not a FIFO, which would block the reader, nor
 * a device), one link only (a hard link the box made to a file outside
 * would pass every path check), at most max bytes.  What the box leaves
 * is the branch's to choose: a symbolic link to the builder's ~/.pgpass
 * named like the binary would otherwise be copied, hashed and published.
 * Returns the descriptor (close-on-exec, blocking, at offset 0), or -1
 * with why.
 */
int sandbox_take(const char *dir, const char *path, long long max, char *why, size_t size);

#endif

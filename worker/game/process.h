/*
 * process.h - a child process talking lines of text over pipes.
 *
 * The child's stdin and stdout are pipes; its stderr is inherited (a boxed
 * one's is read into the log: its first lines, cut and escaped); it gets
 * no other descriptor.  It runs in a process group of its own, so a Ctrl-C
 * at the terminal reaches only the parent, which then ends its children
 * itself; when the child has exited or is killed, its whole group is
 * killed, so nothing it started (helpers, a shell's commands) outlives it.  Lines are read without
 * blocking past a deadline: poll() waits in slices so that a stop flag set
 * by another thread is seen promptly.  Writing to a dead child fails with
 * -1 instead of killing the parent: the first process_spawn sets SIGPIPE to
 * be ignored in the whole process.
 */
#ifndef XQF_PROCESS_H
#define XQF_PROCESS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox.h"

typedef struct Process Process;

typedef enum {
    PROCESS_LINE = 0,    /* a line was read */
    PROCESS_TIMEOUT,     /* the deadline passed first */
    PROCESS_STOPPED,     /* the stop flag was set */
    PROCESS_EOF          /* the child closed its stdout (it exited or crashed) */
} ProcessRead;

/*
 * Starts argv[0] (searched in PATH when it has no '/') with argv.  With
 * sha256 (64 lowercase hex digits; NULL: none), argv[0] is a path that is
 * opened, hashed right before the start and refused unless it has that
 * SHA-256; the child is then started from that same open descriptor
 * (fexecve), so what runs is what was hashed.  Returns the process, or
 * NULL with a message in err (e.g. no such program, a wrong hash).
 */
Process *process_spawn(char *const argv[], const char *sha256, char *err, size_t errlen);
/*
 * The same, the program run in a sandbox (plumbing/sandbox.h): its
 * file (hashed first with sha256) is copied into the box from the
 * descriptor that was checked and run there as nobody, with no network, an
 * empty environment, nothing of the machine but the system's /usr, and the
 * limits of box (program_on_fd3 is set here).  What an untrusted engine
 * build is started with.  NULL with a message in err, as process_spawn.
 */
Process *process_spawn_boxed(char *const argv[], const char *sha256, const SandboxSpec *box, char *err,
                             size_t errlen);

/*
 * Ends the child: closes its stdin, waits up to grace_ms for it to exit,
 * then kills its process group (SIGKILL) and reaps it, so neither a
 * process of the group nor a zombie is left.  Sets *p to
 * NULL; safe on NULL.
 */
void process_destroy(Process **p, int grace_ms);

/* Writes text and a newline. Returns 0, or -1 when the child is gone. */
int process_write_line(Process *p, const char *text);

/*
 * Reads the next line (without its newline, truncated to cap - 1 bytes;
 * a NUL byte inside the line is replaced by '?') into buf.  Waits until
 * deadline_us (clock_now_us() time) at most; stop may be NULL.
 */
ProcessRead process_read_line(Process *p, int64_t deadline_us, const atomic_bool *stop,
                              char *buf, size_t cap);

/*
 * When the child has exited, reaps it and describes how ("exit status 1",
 * "killed by signal 11") in out; otherwise writes "still running".
 * Waits up to wait_ms for the exit.  Returns true when it has exited.
 */
bool process_exit_status(Process *p, int wait_ms, char *out, size_t outlen);

#endif

/*
 * The plumbing library (plumbing): option tables, rate-limited notes,
 * SHA-256 of files, mkdir -p, the random generator and the clock; what a
 * box leaves, taken out of its folder.
 */
#define _GNU_SOURCE /* syscall */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "files.h"
#include "fork_exec.h"
#include "log.h"
#include "notes.h"
#include "opts.h"
#include "rng.h"
#include "sandbox.h"
#include "sha256.h"

static const OptSpec SPEC[] = {
    { "--count", OPT_INT, "N", "8", .imin = 1, .imax = 100, .help = "a count" },
    { "--ratio", OPT_REAL, "R", NULL, .rmin = 0, .rmax = 1, .help = "a ratio" },
    { "--name", OPT_TEXT, "TEXT", NULL, .help = "a name" },
    { "--any", OPT_INT, "N", NULL, .help = "any integer" },
    { "--flag", OPT_FLAG, NULL, NULL, .help = "a switch" },
    { "--many", OPT_TEXT, "X", NULL, .help = "repeatable", .repeat = true },
    OPTS_END,
};

static const OptTable TABLE = { .program = "test", .usage = "Usage: test [options]\n", .spec = SPEC,
                                .max_positional = 1 };

/* Parses a NULL-terminated list of arguments. */
static int parse(Opts *o, char **args)
{
    int n = 0;
    while (args[n])
        n++;
    return opts_parse(o, &TABLE, n, args);
}

Test(opts, values_defaults_and_positionals)
{
    Opts o;
    char *args[] = { "--ratio=0.25", "RUN", "--name", "x y", "--flag", "--any", "-7", NULL };
    cr_assert_eq(parse(&o, args), OPTS_OK);
    cr_assert_eq(opts_int(&o, "--count"), 8, "the default");
    cr_assert(!opts_given(&o, "--count"));
    cr_assert_float_eq(opts_real(&o, "--ratio"), 0.25, 1e-12);
    cr_assert_str_eq(opts_text(&o, "--name"), "x y");
    cr_assert(opts_given(&o, "--flag"));
    cr_assert_eq(opts_int(&o, "--any"), -7);
    cr_assert_eq(o.npositional, 1);
    cr_assert_str_eq(o.positional[0], "RUN");
    cr_assert_null(opts_text(&o, "--many"));
}

Test(opts, bad_input_is_refused)
{
    char *cases[][5] = {
        { "--count", "0", NULL },            /* below its bounds */
        { "--count", "101", NULL },          /* above */
        { "--count", "3x", NULL },           /* not an integer */
        { "--ratio", "nan", NULL },          /* not a finite number */
        { "--ratio", "2", NULL },
        { "--count", NULL },                 /* no value */
        { "--flag=1", NULL },                /* a flag takes none */
        { "--bogus", "1", NULL },            /* unknown */
        { "--name", "a", "--name", "b" },    /* twice */
        { "A", "B", NULL },                  /* too many positionals */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Opts o;
        cr_assert_eq(parse(&o, cases[i]), OPTS_BAD, "case %zu", i);
    }
}

/* A table of more options than Opts can hold is refused, not read past its array (a settings group
 * added to a command's table once took xqf-tune chain past 40 options: every given[] past the 40th
 * read other memory, and chain show refused options nobody gave). */
Test(opts, a_table_past_its_bounds_is_refused)
{
    static OptSpec big[OPTS_MAX + 2];
    static char names[OPTS_MAX + 1][16];
    for (int i = 0; i <= OPTS_MAX; i++) {
        snprintf(names[i], sizeof names[i], "--o%d", i);
        big[i] = (OptSpec){ names[i], OPT_FLAG, NULL, NULL, .help = "an option" };
    }
    OptTable t = { .program = "test", .spec = big, .max_positional = 0, .usage = "Usage: test\n" };
    Opts o;
    char *argv[] = { NULL };
    cr_assert_eq(opts_parse(&o, &t, 0, argv), OPTS_BAD);
    big[OPTS_MAX] = (OptSpec){ 0 };
    cr_assert_eq(opts_parse(&o, &t, 0, argv), OPTS_OK, "a table of exactly OPTS_MAX options is fine");
    cr_assert(!opts_given(&o, "--o0"));
}

Test(opts, repeatable_options)
{
    Opts o;
    char *args[] = { "--many", "a", "--name", "--many", "--many=b", "--many", "c", NULL };
    cr_assert_eq(parse(&o, args), OPTS_OK);
    cr_assert_str_eq(opts_text(&o, "--name"), "--many", "a value that looks like an option");
    cr_assert_str_eq(opts_nth(&o, "--many", 0), "a");
    cr_assert_str_eq(opts_nth(&o, "--many", 1), "b");
    cr_assert_str_eq(opts_nth(&o, "--many", 2), "c");
    cr_assert_null(opts_nth(&o, "--many", 3));
}

Test(opts, help_lists_every_option_with_default_and_bounds)
{
    char path[] = "/tmp/xqf-opts-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w+");
    opts_help(f, &TABLE);
    rewind(f);
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    unlink(path);
    cr_assert(strstr(text, "Usage: test [options]"), "%s", text);
    cr_assert(strstr(text, "--count N") && strstr(text, "(default 8, 1-100)"), "%s", text);
    cr_assert(strstr(text, "(0-1)") && strstr(text, "(repeatable)"), "%s", text);
}

Test(notes, once_a_minute_per_subject)
{
    Notes n;
    memset(&n, 0, sizeof n);
    char more[NOTES_MORE_MAX];
    cr_assert(notes_due(&n, "key A", more));
    cr_assert_str_eq(more, "");
    cr_assert(!notes_due(&n, "key A", more), "held within the minute");
    cr_assert(!notes_due(&n, "key A", more));
    cr_assert(notes_due(&n, "key B", more), "another subject");
    for (int i = 0; i < 40; i++) {            /* more subjects than kept: the oldest are forgotten */
        char s[16];
        snprintf(s, sizeof s, "s%d", i);
        cr_assert(notes_due(&n, s, more));
    }
    cr_assert(notes_due(&n, "key A", more), "forgotten, so due again");
}

Test(files, sha256_and_make_dirs)
{
    char dir[] = "/tmp/xqf-plumb-XXXXXX", sub[128], file[160], hex[SHA256_HEX_LEN + 1];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(sub, sizeof sub, "%s/a/b/c", dir);
    cr_assert_eq(files_make_dirs(sub), 0);
    cr_assert_eq(files_make_dirs(sub), 0, "again: nothing to do");
    struct stat st;
    cr_assert(stat(sub, &st) == 0 && S_ISDIR(st.st_mode));
    snprintf(file, sizeof file, "%s/abc", sub);
    FILE *f = fopen(file, "w");
    cr_assert(f);
    fputs("abc", f);
    fclose(f);
    cr_assert_eq(sha256_file(file, hex), 0);
    cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    cr_assert_eq(sha256_file("/nonexistent/file", hex), -1);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(files, read_whole_files)
{
    char path[] = "/tmp/xqf-read-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    /* 200000 bytes: more than the first chunk, with a NUL inside (binaries have them) */
    enum { SIZE = 200000 };
    char *want = malloc(SIZE);
    for (int i = 0; i < SIZE; i++)
        want[i] = (char)(i % 251);
    cr_assert_eq(write(fd, want, SIZE), SIZE);
    close(fd);
    size_t len = 0;
    char *got = files_read(path, SIZE + 1, &len);
    cr_assert(got, "%s", strerror(errno));
    cr_assert_eq(len, SIZE);
    cr_assert_eq(memcmp(got, want, SIZE), 0);
    cr_assert_eq(got[SIZE], '\0', "NUL-terminated");
    free(got);
    errno = 0;
    cr_assert_null(files_read(path, SIZE, &len), "max bytes or more: refused");
    cr_assert_eq(errno, EFBIG);
    cr_assert_null(files_read("/nonexistent/file", SIZE_MAX, NULL));
    cr_assert_eq(errno, ENOENT);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fclose(f);
    got = files_read(path, SIZE_MAX, &len);
    cr_assert(got && len == 0 && got[0] == '\0', "an empty file is an empty text");
    free(got);
    free(want);
    unlink(path);
}

Test(rng, reproducible_and_in_range)
{
    Rng a, b;
    rng_seed(&a, 42);
    rng_seed(&b, 42);
    for (int i = 0; i < 1000; i++) {
        cr_assert_eq(rng_next(&a), rng_next(&b));
        double u = rng_unit(&a);
        (void)rng_unit(&b);
        cr_assert(u >= 0 && u < 1);
        cr_assert_lt(rng_below(&a, 7), 7);
        (void)rng_below(&b, 7);
    }
    int64_t t0 = clock_now_us();
    cr_assert_geq(clock_now_us(), t0, "monotonic");
    cr_assert_geq(clock_now_ms(), t0 / 1000);
}

/* Text from the network: control characters come out visible, in logs too. */
Test(log, control_characters_are_escaped)
{
    char out[64];
    const char *evil = "w\n1\x1b[2J\x7f\t\r\x01";
    cr_assert_eq(xqf_escape(out, sizeof out, evil), strlen("w\\n1\\x1b[2J\\x7f\\t\\r\\x01"));
    cr_assert_str_eq(out, "w\\n1\\x1b[2J\\x7f\\t\\r\\x01");
    cr_assert_eq(xqf_escape(out, 5, evil), 4);                 /* cut before an escape, not inside it */
    cr_assert_str_eq(out, "w\\n1");
    cr_assert_eq(xqf_escape(out, 1, evil), 0);
    cr_assert_str_eq(out, "");
    cr_assert_eq(xqf_escape(out, sizeof out, "plain text \xc3\xa9"), strlen("plain text \xc3\xa9"));   /* UTF-8 kept */
    xqf_escape(out, sizeof out, "a\xc2\x9b" "2Jb\xc2\x80\xc2\xa0");   /* C1 controls (CSI, PAD) escaped, U+00A0 kept */
    cr_assert_str_eq(out, "a\\u009b2Jb\\u0080\xc2\xa0");

    char path[] = "/tmp/xqf-log-XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    cr_assert(fd >= 0 && saved >= 0);
    fflush(stderr);
    dup2(fd, 2);
    xqf_log_init("test");
    log_warn("worker %s left: %s", "evil\nname", "bye\x1b[31m\x7f");
    log_error("database: %s", "connection refused\n");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char text[512] = "";
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    close(fd);
    unlink(path);
    cr_assert_gt(n, 0);
    cr_assert(strstr(text, "test warn: worker evil\\nname left: bye\\x1b[31m\\x7f\n"), "%s", text);
    cr_assert(strstr(text, "test error: database: connection refused\n"), "%s", text);
    cr_assert_eq(strchr(strchr(text, '\n') + 1, '\n'), text + n - 1, "two lines: %s", text);
}

/* path (under dir) taken by sandbox_take with max bytes: its first bytes into got (""), or why it was refused. */
static int take(const char *dir, const char *name, long long max, char *got, size_t size)
{
    char path[512], why[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = sandbox_take(dir, path, max, why, sizeof why);
    if (fd < 0) {
        snprintf(got, size, "%s", why);
        return -1;
    }
    ssize_t n = read(fd, got, size - 1);
    got[n > 0 ? n : 0] = '\0';
    close(fd);
    return 0;
}

/*
 * What a box leaves is taken out only as a regular file with one link,
 * below its folder by a path without links, within a size: a link (to the
 * file or on the way), "..", a FIFO (without blocking), a hard link, a
 * file too large or a path outside the folder are refused with why.  With
 * openat2 or (without_openat2: a seccomp filter answers it ENOSYS, as a
 * kernel before 5.6 does) one component at a time.
 */
static void take_checks(bool without_openat2)
{
    char root[] = "/tmp/xqf-take-XXXXXX", dir[64], cmd[1024], got[512];
    cr_assert_not_null(mkdtemp(root));
    snprintf(dir, sizeof dir, "%s/box", root);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkdir -p box/bin outside && echo secret > outside/key && echo engine > box/bin/ok && "
             "ln -s ../../outside/key box/bin/link && ln -s ../outside box/up && mkfifo box/bin/fifo && "
             "ln outside/key box/bin/hard && head -c 300 /dev/zero > box/bin/big", root);
    cr_assert_eq(system(cmd), 0);
    if (without_openat2) {
        struct sock_filter filter[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { .len = sizeof filter / sizeof *filter, .filter = filter };
        cr_assert_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
        cr_assert_eq(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), 0, "%s", strerror(errno));
        cr_assert_eq(syscall(SYS_openat2, AT_FDCWD, "/", NULL, 0), -1);
        cr_assert_eq(errno, ENOSYS);
    }
    cr_assert_eq(take(dir, "bin/ok", 100, got, sizeof got), 0, "%s", got);
    cr_assert_str_eq(got, "engine\n");
    cr_assert_eq(take(dir, "./bin//ok", 100, got, sizeof got), 0, "%s", got);
    cr_assert_eq(take(dir, "bin/link", 100, got, sizeof got), -1);
    cr_assert(strstr(got, "a symbolic link on its path"), "%s", got);
    cr_assert_eq(take(dir, "up/key", 100, got, sizeof got), -1);
    cr_assert(strstr(got, "a symbolic link on its path"), "%s", got);
    cr_assert_eq(take(dir, "bin/../../outside/key", 100, got, sizeof got), -1);
    cr_assert(strstr(got, "leads out of the build folder"), "%s", got);
    cr_assert_eq(take(dir, "bin/fifo", 100, got, sizeof got), -1);
    cr_assert(strstr(got, "not a regular file"), "%s", got);
    cr_assert_eq(take(dir, "bin/hard", 100, got, sizeof got), -1);
    cr_assert(strstr(got, "more than one link"), "%s", got);
    cr_assert_eq(take(dir, "bin/big", 100, got, sizeof got), -1);
    cr_assert(strstr(got, "larger than"), "%s", got);
    cr_assert_eq(take(dir, "bin", 100, got, sizeof got), -1);
    cr_assert(strstr(got, "not a regular file"), "%s", got);
    char why[512];
    snprintf(cmd, sizeof cmd, "%s/outside/key", root);
    cr_assert_eq(sandbox_take(dir, cmd, 100, why, sizeof why), -1);
    cr_assert(strstr(why, "is not in the build folder"), "%s", why);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    cr_assert_eq(system(cmd), 0);
}

Test(sandbox, a_file_is_taken_only_as_a_regular_file_with_one_link_below_its_folder)
{
    take_checks(false);
}

Test(sandbox, without_openat2_the_same_one_component_at_a_time)
{
    take_checks(true);
}

/* fork_exec: sh -c script with stdout into a pipe (and fd on 3 when fd3 >= 0), its output into out; the exit status. */
static int run_sh(ForkExec *fe, const char *script, char *out, size_t size)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    char *argv[] = { "sh", "-c", (char *)script, NULL };
    fe->out = p[1];
    pid_t pid = -1;
    int rc = fork_exec_start(fe, argv, &pid);
    close(p[1]);
    cr_assert_eq(rc, 0, "%s", strerror(rc));
    ssize_t n, len = 0;
    while ((n = read(p[0], out + len, size - 1 - (size_t)len)) > 0)
        len += n;
    out[len] = '\0';
    close(p[0]);
    return fork_exec_wait(pid);
}

Test(fork_exec, a_program_gets_its_descriptors_and_no_other_when_asked)
{
    char out[256], script[128];
    int extra = open("/dev/null", O_RDONLY);    /* inherited unless closed at exec */
    cr_assert_geq(extra, 4);
    snprintf(script, sizeof script, "echo hi; [ -e /proc/$$/fd/%d ] && echo open || echo closed", extra);
    ForkExec fe;
    fork_exec_init(&fe);
    fe.search = true;
    cr_assert_eq(run_sh(&fe, script, out, sizeof out), 0);
    cr_assert_str_eq(out, "hi\nopen\n");
    fork_exec_init(&fe);
    fe.search = fe.close_fds = fe.own_group = fe.quiet_signals = true;
    cr_assert_eq(run_sh(&fe, script, out, sizeof out), 0);
    cr_assert_str_eq(out, "hi\nclosed\n");
    /* a descriptor on 3, rewound, kept across exec while the others close */
    fork_exec_init(&fe);
    fe.search = fe.close_fds = true;
    fe.fd3 = extra;
    snprintf(script, sizeof script, "[ -e /proc/$$/fd/3 ] && echo three; [ -e /proc/$$/fd/%d ] || echo closed", extra);
    cr_assert_eq(run_sh(&fe, script, out, sizeof out), 0);
    cr_assert_str_eq(out, "three\nclosed\n");
    close(extra);
}

Test(fork_exec, a_program_that_cannot_run_is_an_error_or_status_127)
{
    char *argv[] = { "/no/such/program", NULL };
    ForkExec fe;
    fork_exec_init(&fe);
    fe.report = true;
    pid_t pid = -1;
    cr_assert_eq(fork_exec_start(&fe, argv, &pid), ENOENT);
    cr_assert_eq(pid, -1);
    fork_exec_init(&fe);
    cr_assert_eq(fork_exec_start(&fe, argv, &pid), 0);
    cr_assert_eq(fork_exec_wait(pid), 127);
    /* fexecve of a descriptor: the bytes opened, whatever the path says */
    int fd = open("/bin/sh", O_RDONLY | O_CLOEXEC);
    cr_assert_geq(fd, 0);
    char *sh[] = { "sh", "-c", "exit 7", NULL };
    fork_exec_init(&fe);
    fe.exec_fd = fd;
    fe.report = true;
    cr_assert_eq(fork_exec_start(&fe, sh, &pid), 0);
    cr_assert_eq(fork_exec_wait(pid), 7);
    close(fd);
}

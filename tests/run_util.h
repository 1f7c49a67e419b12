/*
 * run_util.h - running a program from a test: one shell command, its
 * output (stdout and stderr) captured.  Header only, for the tests of
 * several programs.
 */
#ifndef XQF_TEST_RUN_UTIL_H
#define XQF_TEST_RUN_UTIL_H

#include <criterion/criterion.h>

#include <stdio.h>
#include <sys/wait.h>

/*
 * Runs `cmd 2>&1` through the shell; out gets the first cap - 1 bytes of
 * what it printed.  Returns its exit status (-1 when a signal ended it).
 */
static inline int run_command(const char *cmd, char *out, size_t cap)
{
    char full[4096];
    cr_assert_lt((size_t)snprintf(full, sizeof full, "%s 2>&1", cmd), sizeof full, "command too long");
    FILE *p = popen(full, "r");
    cr_assert_not_null(p, "popen %s", cmd);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#endif

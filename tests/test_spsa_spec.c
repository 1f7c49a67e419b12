/*
 * SPSA spec files of any engine's options (tuner/stats/spsa_spec.h): Fishtest's
 * line format with and without the type column, the end hints derived
 * from the range when left out, and each bad input refused with the line
 * it is on.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spsa_spec.h"

static XqfSpsaSpecLine one(const char *line)
{
    XqfSpsaSpecLine q;
    char why[256] = "";
    cr_assert_eq(xqf_spsa_spec_line(line, &q, why, sizeof why), 1, "%s: %s", line, why);
    return q;
}

Test(spsa_spec, full_lines_as_xqf_engine_params_prints_them)
{
    XqfSpsaSpecLine q = one("NullR, int, 3, 1, 6, 0.5, 0.002\n");
    cr_assert_str_eq(q.name, "NullR");
    cr_assert(!q.is_float && q.hints_given);
    cr_assert_float_eq(q.start, 3, 1e-12);
    cr_assert_float_eq(q.min, 1, 1e-12);
    cr_assert_float_eq(q.max, 6, 1e-12);
    cr_assert_float_eq(q.c_end, 0.5, 1e-12);
    cr_assert_float_eq(q.r_end, 0.002, 1e-12);
}

Test(spsa_spec, hints_left_out_come_from_the_range)
{
    XqfSpsaSpecLine q = one("Futility, int, 100, 0, 400");
    cr_assert(!q.hints_given);
    cr_assert_float_eq(q.c_end, 20, 1e-12);       /* (400 - 0) / 20 */
    cr_assert_float_eq(q.r_end, 0.002, 1e-12);
    q = one("Tiny, int, 2, 1, 4");                /* 3 / 20 = 0.15: an int's floor 0.5 */
    cr_assert_float_eq(q.c_end, 0.5, 1e-12);
    q = one("Scale, float, 0.5, 0.1, 0.9");       /* a float keeps 0.04 */
    cr_assert(q.is_float);
    cr_assert_float_eq(q.c_end, 0.04, 1e-12);
}

Test(spsa_spec, the_type_column_may_be_left_out)
{
    XqfSpsaSpecLine q = one("  Aspiration ,  16 , 5 , 50 ");
    cr_assert_str_eq(q.name, "Aspiration");
    cr_assert(!q.is_float);
    cr_assert_float_eq(q.start, 16, 1e-12);
    cr_assert_float_eq(q.c_end, 2.25, 1e-12);
    q = one("Aspiration, 16, 5, 50, 3, 0.001");
    cr_assert(q.hints_given);
    cr_assert_float_eq(q.c_end, 3, 1e-12);
    cr_assert_float_eq(q.r_end, 0.001, 1e-12);
}

Test(spsa_spec, blank_and_comment_lines_are_skipped)
{
    XqfSpsaSpecLine q;
    char why[256];
    cr_assert_eq(xqf_spsa_spec_line("", &q, why, sizeof why), 0);
    cr_assert_eq(xqf_spsa_spec_line("   \r\n", &q, why, sizeof why), 0);
    cr_assert_eq(xqf_spsa_spec_line("# name, int, 1, 0, 2", &q, why, sizeof why), 0);
}

/* The parse of text refused, with why holding expect. */
static void refused(const char *text, const char *expect)
{
    XqfSpsaSpecLine out[4];
    char why[256] = "";
    cr_assert_eq(xqf_spsa_spec_parse(text, out, 4, NULL, NULL, why, sizeof why), -1, "%s", text);
    cr_assert(strstr(why, expect), "'%s' does not say '%s'", why, expect);
}

Test(spsa_spec, bad_input_names_its_line)
{
    refused("A, int, 5, 0, 4\n", "line 1: A: start 5 is outside [0, 4]");
    refused("A, int, 1, 0, 4\nB, int, -1, 0, 4\n", "line 2: B: start -1 is outside");
    refused("A, int, 1, 4, 4\n", "line 1: A: min 4 is not below max 4");
    refused("A, int, 1, 5, 4\n", "min 5 is not below max 4");
    refused("# c\n\nA, int, 1, 0\n", "line 3: expected 'name, int|float, start, min, max");
    refused("A, int, 1, 0, 4, 1\n", "line 1: expected");
    refused("A, int, 1, 0, 4, 1, 0.002, 7\n", "line 1: expected");
    refused("A, int, x, 0, 4\n", "line 1: A: 'x' is not a number");
    refused("A, bool, 1, 0, 4\n", "type 'bool' is neither int nor float");
    refused("A, int, 1, 0, 4, 0, 0.002\n", "c_end and r_end must be positive");
    refused("A, int, 1, 0, 4, 1, nan\n", "'nan' is not a number");
    refused(", int, 1, 0, 4\n", "is not an option name");
    refused("A, int, 1, 0, 4\nB, 1, 0, 4\nA, float, 1, 0, 4\n", "line 3: A given twice");
    refused("A,1,0,4\nB,1,0,4\nC,1,0,4\nD,1,0,4\nE,1,0,4\n", "line 5: more than 4 options");
}

static bool only_ab(const char *name, void *ctx)
{
    (void)ctx;
    return strcmp(name, "A") == 0 || strcmp(name, "B") == 0;
}

Test(spsa_spec, a_name_the_engine_does_not_offer)
{
    XqfSpsaSpecLine out[4];
    char why[256] = "";
    cr_assert_eq(xqf_spsa_spec_parse("A, 1, 0, 4\nB, 1, 0, 4\n", out, 4, only_ab, NULL, why, sizeof why), 2);
    cr_assert_eq(xqf_spsa_spec_parse("A, 1, 0, 4\nHash, 16, 1, 64\n", out, 4, only_ab, NULL, why, sizeof why), -1);
    cr_assert_str_eq(why, "line 2: the engine has no option 'Hash'");
}

Test(spsa_spec, hundreds_of_lines)
{
    enum { N = 600 };
    char *text = malloc(N * 40);
    size_t len = 0;
    for (int i = 0; i < N; i++)
        len += (size_t)sprintf(text + len, "Option%03d, int, %d, 0, 1000\n", i, i);
    XqfSpsaSpecLine *out = calloc(N, sizeof *out);
    char why[256] = "";
    cr_assert_eq(xqf_spsa_spec_parse(text, out, N, NULL, NULL, why, sizeof why), N, "%s", why);
    cr_assert_str_eq(out[N - 1].name, "Option599");
    cr_assert_float_eq(out[N - 1].start, 599, 1e-12);
    cr_assert_float_eq(out[N - 1].c_end, 50, 1e-12);
    free(out);
    free(text);
}

/*
 * SPSA spec files of any engine's options (stats/spsa_spec.h): Fishtest's
 * line format with and without the type column, the end hints derived
 * from the range when left out, and each bad input refused with the line
 * it is on.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "param_set.h"
#include "run_rules.h"
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

/*
 * Float options (OpenBench's `float` lines): another engine's are tuned,
 * each kept a float; ours are integers, and a float line for our engine
 * is refused naming it; a float's bounds must fit a decimal without
 * exponent.
 */
Test(spsa_spec, a_float_line_is_another_engines_float)
{
    XqfSpsaSpecLine lines[2] = { one("Scale, float, 0.5, 0.1, 0.9"), one("NullR, int, 3, 1, 6") };
    StoreSpsaParam params[2];
    char why[256] = "";
    cr_assert(rule_spsa_spec_lines(lines, 2, false, params, why, sizeof why), "%s", why);
    cr_assert(params[0].is_float && !params[1].is_float);
    cr_assert_float_eq(params[0].start, 0.5, 1e-12);
    cr_assert_float_eq(params[0].c_end, 0.04, 1e-12);
    cr_assert(!rule_spsa_spec_lines(lines, 2, true, params, why, sizeof why));
    cr_assert(strstr(why, "Scale: our engine's parameters are integers"), "%s", why);
    XqfSpsaSpecLine q;
    cr_assert_eq(xqf_spsa_spec_line("Big, float, 1, 0, 1e16", &q, why, sizeof why), -1);
    cr_assert(strstr(why, "Big: a float's bounds must be below"), "%s", why);
    cr_assert_eq(xqf_spsa_spec_line("Low, float, 0.5, 0.75, 1", &q, why, sizeof why), -1);
    cr_assert(strstr(why, "Low: start 0.5 is outside [0.75, 1]"), "%s", why);
    cr_assert_eq(xqf_spsa_spec_line("Flat, float, 0.5, 0.5, 0.5", &q, why, sizeof why), -1);
    cr_assert(strstr(why, "Flat: min 0.5 is not below max 0.5"), "%s", why);
    cr_assert_eq(xqf_spsa_spec_line("Step, float, 0.5, 0, 1, 0, 0.002", &q, why, sizeof why), -1);
    cr_assert(strstr(why, "Step: c_end and r_end must be positive"), "%s", why);
}

/* A task's set carries a float as a decimal (no exponent), and the set reader takes it back as written. */
Test(spsa_spec, a_float_travels_as_a_decimal_in_a_set)
{
    char v[XQF_SET_VALUE_MAX + 1], why[256];
    cr_assert_eq(xqf_set_decimal(0.123456789, 0.8, v, sizeof v), 0);
    cr_assert_str_eq(v, "0.1234568", "a range below 1: one place more than 6");
    cr_assert_eq(xqf_set_decimal(1.5, 10, v, sizeof v), 0);
    cr_assert_str_eq(v, "1.5");
    cr_assert_eq(xqf_set_decimal(-2, 10, v, sizeof v), 0);
    cr_assert_str_eq(v, "-2.0", "always a point: a float, not an integer");
    cr_assert_eq(xqf_set_decimal(0.00001234, 0.0001, v, sizeof v), 0);
    cr_assert_str_eq(v, "0.00001234", "a tiny range keeps its steps: %s", v);
    cr_assert_eq(xqf_set_decimal(123456789012345.25, 1e15, v, sizeof v), 0);
    cr_assert_leq(strlen(v), XQF_SET_VALUE_MAX);
    cr_assert(!strchr(v, 'e'), "%s", v);
    const char *at = "NullR=3, Scale=0.1234568,Neg=-2.0";
    XqfSetItem item;
    cr_assert_eq(xqf_set_next(&at, &item, why, sizeof why), 1, "%s", why);
    cr_assert(!item.is_decimal && item.value == 3 && strcmp(item.text, "3") == 0);
    cr_assert_eq(xqf_set_next(&at, &item, why, sizeof why), 1, "%s", why);
    cr_assert(item.is_decimal && strcmp(item.name, "Scale") == 0 && strcmp(item.text, "0.1234568") == 0);
    cr_assert_eq(xqf_set_next(&at, &item, why, sizeof why), 1, "%s", why);
    cr_assert(item.is_decimal && strcmp(item.text, "-2.0") == 0);
    cr_assert_eq(xqf_set_next(&at, &item, why, sizeof why), 0);
    /* what is not a decimal a UCI engine reads: an exponent, a bare point, an empty side */
    static const char *const BAD[] = { "A=1e-3", "A=.5", "A=5.", "A=1.2.3", "A=0x1.8", "A=0.1234567890123456789012345" };
    for (size_t i = 0; i < sizeof BAD / sizeof *BAD; i++)
        cr_assert(!xqf_set_check(BAD[i], why, sizeof why), "%s was taken", BAD[i]);
    /* a build's options are spins: a decimal for one is refused, naming it */
    StoreBuildParam spin = { .name = "NullR", .min = 1, .max = 6 };
    cr_assert(!rule_build_set("NullR=2.5", &spin, 1, "build 1 (toy)", why, sizeof why));
    cr_assert(strstr(why, "parameter NullR is a spin option (an integer) in build 1 (toy), got the decimal '2.5'"), "%s",
              why);
    /* our engine's table reads integers only */
    cr_assert(!rule_set("NullR=2.5", why, sizeof why));
}

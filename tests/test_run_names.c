/*
 * The names the run service gives a run made without one
 * (service/run_service.h): a test of refs by its refs and its test
 * commit's subject, cut at a character; a run of two sets by the values
 * in which they differ (a value that is the default's is none), and the
 * values each set gives beside our engine's defaults, as the run's page
 * lists them.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "run_service.h"

Test(run_names, a_test_of_refs_is_named_by_its_refs_and_subject)
{
    char name[RUN_NAME_MADE_MAX + 1];
    run_refs_name("no-null", "main", "Switch off the null move", name, sizeof name);
    cr_assert_str_eq(name, "no-null vs main: Switch off the null move");
    run_refs_name("no-null", "main", NULL, name, sizeof name);
    cr_assert_str_eq(name, "no-null vs main");
    run_refs_name("topic", "build 7", "", name, sizeof name);
    cr_assert_str_eq(name, "topic vs build 7");
    /* a long subject of two-byte characters: cut to the cap at a character, "..." at its end */
    char subject[400] = "";
    for (int i = 0; i < 150; i++)
        strcat(subject, "\xc3\xa9");
    run_refs_name("a", "b", subject, name, sizeof name);
    size_t len = strlen(name);
    cr_assert(len <= RUN_NAME_MADE_MAX && len > RUN_NAME_MADE_MAX - 5, "%zu bytes", len);
    cr_assert_str_eq(name + len - 3, "...");
    cr_assert_eq((unsigned char)name[len - 4], 0xa9, "the last character whole");
}

Test(run_names, a_run_of_two_sets_is_named_by_what_differs)
{
    char name[RUN_NAME_MADE_MAX + 1];
    run_sets_name("NullR=4,NullMove=1", "NullMove=1", name, sizeof name);
    cr_assert_str_eq(name, "NullR=4 vs default");
    run_sets_name("NullR=4", "NullR=2", name, sizeof name);
    cr_assert_str_eq(name, "NullR=4 vs NullR=2");
    run_sets_name("", "NullR=2,NullDepthDiv=4", name, sizeof name);
    cr_assert_str_eq(name, "default vs NullR=2,NullDepthDiv=4");
    run_sets_name("NullR=3", "", name, sizeof name);
    cr_assert_str_eq(name, "", "NullR's default is 3: the sets do not differ");
    run_sets_name("", "", name, sizeof name);
    cr_assert_str_eq(name, "");
}

Test(run_names, each_value_beside_its_default)
{
    RunSetChange c[8];
    int n = run_set_changes("NullR=4,Hash=64", "NullR=2,NullMove=1", c, 8);
    cr_assert_eq(n, 3);
    cr_assert_str_eq(c[0].name, "NullR");
    cr_assert_str_eq(c[0].def, "3");
    cr_assert_str_eq(c[0].test, "4");
    cr_assert_str_eq(c[0].base, "2");
    cr_assert(c[0].differs);
    cr_assert_str_eq(c[1].name, "Hash");
    cr_assert_str_eq(c[1].def, "", "not a parameter of ours: no default known");
    cr_assert_str_eq(c[1].base, "");
    cr_assert(c[1].differs);
    cr_assert_str_eq(c[2].name, "NullMove");
    cr_assert_str_eq(c[2].test, "");
    cr_assert_str_eq(c[2].base, "1");
    cr_assert(!c[2].differs, "the base names the default the test leaves");
}

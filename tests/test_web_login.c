/*
 * xqf-web's login guard without a server (web/login.h): the tables of
 * failed-login counts (leaky buckets; a full table never refuses a
 * newcomer and crowding never frees a higher count), the limits per
 * address and per account with tries in flight charged, the addresses an
 * account signed in from spared by its limit, IPv6 clients by their /64,
 * and passwords verified on the guard's threads.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "login.h"
#include "password.h"

Test(web_login, counts_drain_as_a_leaky_bucket)
{
    LimitTable t;
    cr_assert_eq(limit_init(&t, 8, 6), 0);           /* 6 a minute: one each 10 s */
    for (int i = 0; i < 3; i++)
        limit_add(&t, "a", 1, 0);
    cr_assert_float_eq(limit_count(&t, "a", 0), 3, 1e-9);
    cr_assert_float_eq(limit_count(&t, "a", 10000), 2, 1e-9, "10 s later: one drained");
    cr_assert_float_eq(limit_count(&t, "a", 60000), 0, 1e-9, "drained, never below 0");
    limit_add(&t, "a", -5, 1000);
    cr_assert_float_eq(limit_count(&t, "a", 1000), 0, 1e-9, "a refund stops at 0");
    limit_add(&t, "b", -1, 0);
    cr_assert_float_eq(limit_count(&t, "b", 0), 0, 1e-9);
    int used = 0;
    for (int i = 0; i < t.size; i++)
        used += t.slots[i].key[0] != 0;
    cr_assert_eq(used, 1, "a refund of an absent key takes no entry");
    limit_free(&t);
}

/*
 * A full table takes a newcomer in at 0 (an address new to the server is
 * never refused because the table is full): the entry of the smallest
 * count goes, the least recent of equal ones.
 */
Test(web_login, a_full_table_never_refuses_a_newcomer)
{
    LimitTable t;
    cr_assert_eq(limit_init(&t, 4, 1), 0);
    char key[32];
    for (int i = 0; i < 4; i++) {                    /* every entry at the limit of 1 */
        snprintf(key, sizeof key, "10.0.0.%d", i);
        limit_add(&t, key, 1, i);
    }
    cr_assert_float_eq(limit_count(&t, "10.9.9.9", 10), 0, 1e-9, "a newcomer has no count");
    limit_add(&t, "10.9.9.9", 1, 10);
    cr_assert_float_eq(limit_count(&t, "10.9.9.9", 10), 1, 1e-9, "and starts from 0, not from anyone's count");
    cr_assert_float_eq(limit_count(&t, "10.0.0.0", 10), 0, 1e-9, "the least recent of the equal counts went");
    cr_assert_gt(limit_count(&t, "10.0.0.1", 10), 0.9);
    limit_free(&t);
}

/* Crowding the table with fresh keys never frees a key whose count is higher than theirs. */
Test(web_login, crowding_never_frees_an_attacker)
{
    LimitTable t;
    cr_assert_eq(limit_init(&t, 16, 1), 0);
    for (int i = 0; i < 5; i++)
        limit_add(&t, "attacker", 1, 0);
    char key[32];
    for (int i = 0; i < 1000; i++) {                 /* a thousand addresses with one failure each */
        snprintf(key, sizeof key, "10.1.%d.%d", i / 256, i % 256);
        limit_add(&t, key, 1, 1 + i);
    }
    cr_assert_gt(limit_count(&t, "attacker", 2000), 4.9, "the attacker's count is kept");
    limit_free(&t);
}

Test(web_login, ipv6_clients_count_by_their_64)
{
    char a[LIMIT_KEY_MAX + 1], b[LIMIT_KEY_MAX + 1];
    login_address_key("2001:db8:1:2:aaaa::1", a);
    login_address_key("2001:db8:1:2:bbbb:cccc:dddd:eeee", b);
    cr_assert_str_eq(a, "2001:db8:1:2::/64");
    cr_assert_str_eq(a, b);
    login_address_key("2001:db8:1:3::1", b);
    cr_assert_str_neq(a, b, "another /64");
    login_address_key("192.0.2.7", a);
    cr_assert_str_eq(a, "192.0.2.7");
    login_address_key("::ffff:192.0.2.7", a);
    cr_assert_str_eq(a, "::ffff:192.0.2.7", "an IPv4 address in IPv6 clothing is one address");
    login_address_key("", a);
    cr_assert_str_eq(a, "");
}

static LoginGuard *guard(int per_address, int per_account)
{
    LoginConfig c = { .per_address = per_address, .per_account = per_account, .verifiers = 1 };
    LoginGuard *g = login_new(&c);
    cr_assert(g);
    return g;
}

/* Tries in flight count: 64 connections of one address cannot all pass the check before any fails. */
Test(web_login, tries_in_flight_are_charged)
{
    LoginGuard *g = guard(3, 100);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(login_admit(g, "10.0.0.1", "ada", 0), LOGIN_GO, "try %d", i);
    cr_assert_eq(login_admit(g, "10.0.0.1", "ada", 0), LOGIN_ADDRESS_LIMIT, "three in flight: the fourth waits");
    login_done(g, "10.0.0.1", "ada", LOGIN_SUCCEEDED, 0);
    cr_assert_eq(login_admit(g, "10.0.0.1", "ada", 0), LOGIN_GO, "a success gives its try back");
    login_done(g, "10.0.0.1", "ada", LOGIN_NOT_TRIED, 0);
    cr_assert_eq(login_admit(g, "10.0.0.1", "ada", 0), LOGIN_GO, "so does a try the database failed");
    cr_assert_eq(login_admit(g, "10.0.0.1", "ada", 0), LOGIN_ADDRESS_LIMIT);
    login_destroy(&g);
    login_destroy(&g);
}

/*
 * One password guessed from many addresses meets the account's limit; the
 * address the account signed in from before is spared (the owner gets in
 * during the attack), and only a success makes an address familiar.
 */
Test(web_login, an_account_is_limited_across_addresses_but_not_where_it_signed_in)
{
    LoginGuard *g = guard(5, 3);
    cr_assert_eq(login_admit(g, "10.0.0.1", "ada", 0), LOGIN_GO);
    login_done(g, "10.0.0.1", "ada", LOGIN_SUCCEEDED, 0);
    char from[32];
    for (int i = 0; i < 3; i++) {
        snprintf(from, sizeof from, "10.6.0.%d", i);
        cr_assert_eq(login_admit(g, from, "ada", 0), LOGIN_GO, "guess %d", i);
        login_done(g, from, "ada", LOGIN_FAILED, 0);
    }
    cr_assert_eq(login_admit(g, "10.6.0.9", "ada", 0), LOGIN_ACCOUNT_LIMIT, "a fourth address's guess");
    cr_assert_eq(login_admit(g, "10.6.0.9", "bob", 0), LOGIN_GO, "another account is not limited");
    cr_assert_eq(login_admit(g, "10.0.0.1", "ada", 0), LOGIN_GO, "the owner's address is spared");
    login_done(g, "10.0.0.1", "ada", LOGIN_FAILED, 0);
    cr_assert_eq(login_admit(g, "10.0.0.2", "ada", 0), LOGIN_ACCOUNT_LIMIT, "its neighbour is not");
    login_done(g, "10.6.0.0", "ada", LOGIN_NOT_TRIED, 0);
    cr_assert_eq(login_admit(g, "10.6.0.0", "ada", 1000), LOGIN_GO, "a refund makes room ...");
    cr_assert_eq(login_admit(g, "10.6.0.0", "ada", 1000), LOGIN_ACCOUNT_LIMIT, "... for one");
    login_destroy(&g);
}

Test(web_login, passwords_are_verified_on_the_guards_threads)
{
    char hash[XQF_PWHASH_MAX];
    cr_assert_eq(xqf_password_hash("password1", hash), 0);
    LoginGuard *g = guard(5, 5);
    cr_assert(login_verify(g, hash, "password1"));
    cr_assert_not(login_verify(g, hash, "password2"));
    cr_assert_not(login_verify(g, "not a hash", "password1"));
    login_destroy(&g);
}

/*
 * xqf-web's login guard without a server (web/login.h): the tables of
 * failed-login counts (leaky buckets; a full table never refuses a
 * newcomer and crowding never frees a higher count), the limits per
 * address and per account with tries in flight charged, the addresses an
 * account signed in from spared by its limit, IPv6 clients by their /64,
 * and passwords verified on the guard's threads.  The connection table
 * (web/conn_table.h), which counts clients by the same key: four addresses
 * cannot fill it, a /64 is one client, a connection moved to the client a
 * proxy names is held to that client's share, event streams apart.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "conn_table.h"
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

/* ---- the connection table (conn_table.h) ----------------------------------------------------- */

/* Opens connections from address while the table lets it, up to want: how many it got. */
static int open_all(ConnTable *t, const char *address, int want)
{
    int got = 0;
    while (got < want && conns_may_open(t, address)) {
        conns_count(t, address, +1);
        got++;
    }
    return got;
}

/*
 * Four addresses opening all they may (--per-ip 64 of --max-connections
 * 256, which they filled before) leave room: each gets at most its fair
 * share of what is free, and a fifth gets in; however many come, a
 * newcomer gets in while one place is free.
 */
Test(web_login, four_addresses_cannot_fill_the_connection_table)
{
    ConnTable t;
    cr_assert_eq(conns_init(&t, 256, 64, 128, 16), 0);
    const char *four[] = { "192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4" };
    int held = 0;
    for (int round = 0; round < 3; round++)      /* again and again: the share never grows back past the free */
        for (int i = 0; i < 4; i++)
            held += open_all(&t, four[i], 64);
    cr_assert_eq(held, 179, "four addresses took %d of 256 (64, 64, 32, 19: the share shrinks as they fill)", held);
    cr_assert_eq(conns_held(&t, "192.0.2.1"), 64, "the first, alone, had its --per-ip");
    cr_assert(conns_may_open(&t, "198.51.100.7"), "a fifth address is kept out");
    int newcomers = 0;
    char a[32];
    for (int i = 0; i < 1000 && t.conns < t.max; i++) {
        snprintf(a, sizeof a, "10.0.%d.%d", i / 250, i % 250 + 1);
        cr_assert(conns_may_open(&t, a), "newcomer %d refused with %d of 256 places taken", i, t.conns);
        conns_count(&t, a, +1);
        newcomers++;
    }
    cr_assert_eq(t.conns, 256);
    cr_assert(!conns_may_open(&t, "203.0.113.1"), "a full table takes no one");
    conns_count(&t, "192.0.2.1", -1);
    cr_assert(!conns_may_open(&t, "192.0.2.1"), "the greedy address gets no place back over its share");
    cr_assert(conns_may_open(&t, "203.0.113.1"), "a newcomer takes the place freed");
    for (int i = 0; i < 64; i++)
        conns_count(&t, "192.0.2.1", -1);
    cr_assert_eq(conns_held(&t, "192.0.2.1"), 0, "never below 0");
    conns_free(&t);
}

/* An IPv6 client counts by its /64: its 2^64 addresses hold one client's share. */
Test(web_login, a_64_counts_as_one_client)
{
    ConnTable t;
    cr_assert_eq(conns_init(&t, 64, 8, 32, 4), 0);
    char a[64];
    int got = 0;
    for (int i = 1; i <= 100; i++) {
        snprintf(a, sizeof a, "2001:db8:0:1::%x", i);
        got += open_all(&t, a, 1);
    }
    cr_assert_eq(got, 8, "100 addresses of one /64 got %d connections, not one client's --per-ip", got);
    cr_assert_eq(conns_held(&t, "2001:db8:0:1:ffff::1"), 8);
    cr_assert(conns_may_open(&t, "2001:db8:0:2::1"), "another /64 is another client");
    conns_free(&t);
}

/*
 * Behind a proxy: a connection counted under the proxy at accept moves to
 * the client each request names, and fits only within that client's share.
 */
Test(web_login, a_connection_moves_to_the_client_the_proxy_names)
{
    ConnTable t;
    cr_assert_eq(conns_init(&t, 64, 4, 32, 2), 0);
    for (int i = 0; i < 10; i++)
        conns_count(&t, "127.0.0.1", +1);        /* the proxy's, let in up to the table's size */
    int fit = 0;
    for (int i = 0; i < 6; i++)
        fit += conns_move(&t, "127.0.0.1", "2001:db8::1") ? 1 : 0;
    cr_assert_eq(fit, 4, "one client behind the proxy held %d connections over --per-ip 4", fit);
    cr_assert_eq(conns_held(&t, "2001:db8::1"), 6, "moved all the same (the refused ones are closed)");
    cr_assert(conns_move(&t, "127.0.0.1", "198.51.100.1"), "another client fits");
    cr_assert(conns_move(&t, "2001:db8::1", "2001:db8::99"), "the same client: the same connection");
    cr_assert_eq(t.conns, 10, "moving changes no total");
    conns_free(&t);
}

/* Event streams have a table of their own: beyond their bounds a stream is refused, connections still open. */
Test(web_login, event_streams_are_bounded_apart)
{
    ConnTable t;
    cr_assert_eq(conns_init(&t, 16, 8, 9, 2), -1, "streams over half the table");
    cr_assert_eq(conns_init(&t, 16, 8, 4, 2), 0);
    const char *a = "192.0.2.1", *b = "192.0.2.2", *c = "192.0.2.3";
    for (int i = 0; i < 4; i++)
        conns_count(&t, i < 3 ? a : b, +1);
    cr_assert(conns_stream_open(&t, a));
    cr_assert(conns_stream_open(&t, a));
    cr_assert(!conns_stream_open(&t, a), "a third stream of one address over --streams-per-ip 2");
    conns_count(&t, b, +1);
    cr_assert(conns_stream_open(&t, b));
    cr_assert(conns_stream_open(&t, b));
    conns_count(&t, c, +1);
    cr_assert(!conns_stream_open(&t, c), "over --max-streams 4 in all");
    cr_assert(conns_may_open(&t, c), "pages still open");
    conns_stream_close(&t, a);
    cr_assert(conns_stream_open(&t, c), "a place freed");
    conns_free(&t);
}

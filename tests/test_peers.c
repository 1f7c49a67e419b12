/*
 * The coordinator's peer table (coordinator/peers.c): the bound counts
 * live workers only, a newcomer evicts the longest-silent one that missed
 * a heartbeat, and a hello under a worker that holds an entry takes its
 * place; a worker whose connection closed counts no more.  Silence is
 * made by moving an entry's last-heard time back.
 * Then the table of open connections (coordinator/conns.c), on a clock of
 * its own: a key's count, refusal and eviction, silent connections.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "conns.h"
#include "peers.h"

static Peer peer_of(int n)
{
    Peer p = { .len = 5 };
    p.id[0] = 0;
    memcpy(p.id + 1, &n, sizeof n);
    return p;
}

/* Whether p has a worker, without hearing it (peer_find would refresh its last-heard time). */
static const PeerEntry *peer_slot_worker(Peers *ps, const Peer *p)
{
    for (size_t i = 0; i < ps->cap; i++)
        if (ps->v[i].peer.len == p->len && memcmp(ps->v[i].peer.id, p->id, p->len) == 0 && ps->v[i].worker)
            return &ps->v[i];
    return NULL;
}

/* Makes peer n's entry silent for ms. */
static void silence(Peers *ps, int n, int64_t ms)
{
    Peer p = peer_of(n);
    PeerEntry *e = peer_find(ps, &p);
    cr_assert(e, "peer %d has an entry", n);
    e->seen_ms -= ms;
}

static Peers table(size_t max)
{
    return (Peers){ .max = max, .heartbeat_ms = 1000 };
}

Test(peers, a_full_table_refuses_newcomers_heard_from_lately)
{
    Peers ps = table(20);
    for (int i = 0; i < 20; i++) {
        Peer p = peer_of(i);
        cr_assert_eq(peer_set(&ps, &p, 100 + i, "b", 1), 0, "worker %d", i);
    }
    cr_assert_eq(peers_live(&ps), 20);
    Peer p = peer_of(20);
    cr_assert_eq(peer_set(&ps, &p, 120, "b", 1), -2, "no worker missed a heartbeat: refused");
    cr_assert_eq(ps.refused, 1);
    cr_assert_null(peer_find(&ps, &p));
    /* a worker already in the table says hello again on its connection: not a newcomer */
    Peer q = peer_of(3);
    cr_assert_eq(peer_set(&ps, &q, 103, "b", 1), 0);
    peers_free(&ps);
}

Test(peers, gone_silent_workers_do_not_count)
{
    Peers ps = table(20);
    for (int i = 0; i < 20; i++) {
        Peer p = peer_of(i);
        cr_assert_eq(peer_set(&ps, &p, 100 + i, "b", 1), 0);
    }
    /* past PEER_MISSED heartbeats (and PEER_GONE_MIN_MS): gone, whatever else */
    for (int i = 0; i < 20; i++)
        silence(&ps, i, PEER_GONE_MIN_MS + 1);
    cr_assert_eq(peers_live(&ps), 0);
    for (int i = 20; i < 40; i++) {
        Peer p = peer_of(i);
        cr_assert_eq(peer_set(&ps, &p, 100 + i, "b", 1), 0, "newcomer %d", i);
    }
    cr_assert_eq(peers_live(&ps), 20);
    cr_assert_eq(ps.refused, 0);
    cr_assert_eq(ps.evicted, 0, "nobody live was evicted: the gone ones counted for nothing");
    peers_free(&ps);
}

Test(peers, a_newcomer_evicts_the_longest_silent)
{
    Peers ps = table(20);
    for (int i = 0; i < 20; i++) {
        Peer p = peer_of(i);
        cr_assert_eq(peer_set(&ps, &p, 100 + i, "b", 1), 0);
    }
    /* still live (silent for less than PEER_GONE_MIN_MS), but past two heartbeats (PEER_QUIET_MIN_MS): 7 the longest */
    silence(&ps, 4, PEER_QUIET_MIN_MS + 100);
    silence(&ps, 7, PEER_QUIET_MIN_MS + 500);
    cr_assert_eq(peers_live(&ps), 20);
    Peer p = peer_of(20), p4 = peer_of(4), p7 = peer_of(7);
    cr_assert_eq(peer_set(&ps, &p, 120, "b", 1), 0, "room made for the newcomer");
    cr_assert_eq(ps.evicted, 1);
    cr_assert_null(peer_find(&ps, &p7), "the longest-silent was evicted");
    cr_assert_not_null(peer_find(&ps, &p4), "the next one was not (heard just now, by this find)");
    Peer p2 = peer_of(21);
    cr_assert_eq(peer_set(&ps, &p2, 121, "b", 1), -2, "nobody silent left: refused");
    cr_assert_eq(peers_live(&ps), 20);
    peers_free(&ps);
}

/* A full table of workers that missed a heartbeat: one scan queues them all, each newcomer evicts the next. */
Test(peers, newcomers_evict_the_silent_in_order)
{
    enum { N = 2000 };          /* silences up to PEER_QUIET_MIN_MS + N, below PEER_GONE_MIN_MS */
    Peers ps = table(N);
    for (int i = 0; i < N; i++) {
        Peer p = peer_of(i);
        cr_assert_eq(peer_set(&ps, &p, 100 + i, "b", 1), 0);
        silence(&ps, i, PEER_QUIET_MIN_MS + (int64_t)(N - i));   /* worker 0 the longest, none gone */
    }
    for (int i = 0; i < N; i++) {
        Peer p = peer_of(N + i), first = peer_of(i), next = peer_of(i + 1);
        cr_assert_eq(peer_set(&ps, &p, 100 + N + i, "b", 1), 0, "newcomer %d", i);
        cr_assert_null(peer_slot_worker(&ps, &first), "newcomer %d evicted worker %d", i, i);
        if (i + 1 < N)
            cr_assert_not_null(peer_slot_worker(&ps, &next), "worker %d still in", i + 1);
    }
    cr_assert_eq(ps.evicted, N);
    cr_assert_eq(ps.refused, 0);
    cr_assert_eq(peers_live(&ps), N);
    peers_free(&ps);
}

Test(peers, a_hello_under_the_same_worker_replaces_its_entry)
{
    Peers ps = table(20);
    for (int i = 0; i < 20; i++) {
        Peer p = peer_of(i);
        cr_assert_eq(peer_set(&ps, &p, 100 + i, "b", 1), 0);
    }
    /* worker 105 reconnects: a new routing id, the table full, nobody silent */
    Peer old = peer_of(5), fresh = peer_of(1005);
    cr_assert_eq(peer_set(&ps, &fresh, 105, "b2", 2), 0, "its own entry's place is taken");
    cr_assert_eq(ps.replaced, 1);
    cr_assert_eq(ps.refused, 0);
    cr_assert_null(peer_find(&ps, &old), "the old routing id is dropped");
    PeerEntry *e = peer_find(&ps, &fresh);
    cr_assert(e && e->worker == 105 && e->concurrency == 2 && strcmp(e->build, "b2") == 0);
    cr_assert_eq(peers_live(&ps), 20, "one live entry per worker");
    /* and again, after many others came and went (table rebuilds keep the index right; no bound in the way) */
    ps.max = 1000000;
    for (int i = 0; i < 5000; i++) {
        Peer p = peer_of(2000 + i);
        for (int k = 0; k < 20; k++) {
            Peer o = peer_of(k == 5 ? 1005 : k);
            PeerEntry *x = peer_find(&ps, &o);
            if (x)
                x->seen_ms -= PEER_GONE_MIN_MS + 1;
        }
        cr_assert_eq(peer_set(&ps, &p, 10000 + i, "b", 1), 0, "newcomer %d", i);
        peer_find(&ps, &p)->seen_ms -= PEER_GONE_MIN_MS + 1;
    }
    Peer again = peer_of(3005);
    cr_assert_eq(peer_set(&ps, &again, 105, "b", 1), 0);
    cr_assert_eq(peers_live(&ps), 1);
    peers_free(&ps);
    peers_free(&ps);
}

/* Peer n on the connection numbered conn under descriptor fd. */
static Peer on_conn(int n, int fd, uint64_t conn)
{
    Peer p = peer_of(n);
    p.fd = fd;
    p.conn = conn;
    return p;
}

/*
 * A worker whose connection closed counts no more, at once, however
 * recently it spoke: a full table of workers heard just now takes a
 * newcomer for each one closed, evicting nobody.  Only the connection its
 * hello came on counts (its number, not its descriptor alone: a later
 * connection under the same descriptor is another); the closed entry is
 * still answered (its last messages), and its worker's hello on a new
 * connection takes its place as before.
 */
Test(peers, a_closed_connection_frees_its_place_at_once)
{
    Peers ps = table(20);
    for (int i = 0; i < 20; i++) {
        Peer p = on_conn(i, 10 + i, 100 + (uint64_t)i);
        cr_assert_eq(peer_set(&ps, &p, 100 + i, "b", 1), 0, "worker %d", i);
    }
    Peer n1 = on_conn(20, 40, 200);
    cr_assert_eq(peer_set(&ps, &n1, 120, "b", 1), -2, "full, everybody heard just now");
    peers_closed(&ps, 13, 999);
    peers_closed(&ps, 14, 103);
    peers_closed(&ps, 77, 103);
    cr_assert_eq(peers_live(&ps), 20, "another connection's number, or descriptor: nobody closed");
    peers_closed(&ps, 13, 103);
    cr_assert_eq(peers_live(&ps), 19);
    cr_assert_eq(ps.disconnected, 1);
    peers_closed(&ps, 13, 103);
    cr_assert_eq(ps.disconnected, 1, "a close reported twice counts once");
    Peer p3 = peer_of(3);
    PeerEntry *e3 = peer_find(&ps, &p3);
    cr_assert(e3 && e3->worker == 103 && e3->closed, "still answered");
    cr_assert_eq(peers_live(&ps), 19, "and answering it does not make it count again");
    /* the newcomer on descriptor 13 again (a new connection): in without evicting anybody */
    Peer n2 = on_conn(21, 13, 300);
    cr_assert_eq(peer_set(&ps, &n2, 121, "b", 1), 0);
    cr_assert_eq(ps.evicted, 0);
    cr_assert_eq(peers_live(&ps), 20);
    peers_closed(&ps, 13, 103);
    cr_assert_eq(peers_live(&ps), 20, "the old connection's close again: the new one under its descriptor stays");
    /* worker 105's connection closes, and it is back under its name on a new one */
    peers_closed(&ps, 15, 105);
    Peer back = on_conn(1005, 41, 301);
    cr_assert_eq(peer_set(&ps, &back, 105, "b", 1), 0);
    cr_assert_eq(ps.replaced, 1);
    Peer p5 = peer_of(5);
    cr_assert_null(peer_find(&ps, &p5), "its old entry is dropped");
    cr_assert_eq(peers_live(&ps), 20);
    peers_free(&ps);
}

/* Closes count for a key's bound too, and the index by descriptor follows the entries through rebuilds. */
Test(peers, closes_free_a_keys_places_and_survive_rebuilds)
{
    Peers ps = table(5000);
    ps.key_max = 2;
    Peer a = on_conn(0, 5, 1), b = on_conn(1, 6, 2), c = on_conn(2, 7, 3);
    snprintf(a.user, sizeof a.user, "k");
    snprintf(b.user, sizeof b.user, "k");
    snprintf(c.user, sizeof c.user, "k");
    cr_assert_eq(peer_set(&ps, &a, 100, "b", 1), 0);
    cr_assert_eq(peer_set(&ps, &b, 101, "b", 1), 0);
    cr_assert_eq(peer_set(&ps, &c, 102, "b", 1), -3, "the key holds its most, both heard just now");
    peers_closed(&ps, 5, 1);
    cr_assert_eq(peers_of_key(&ps, peers_key(&a, 100)), 1);
    cr_assert_eq(peer_set(&ps, &c, 102, "b", 1), 0, "a closed one's place taken");
    cr_assert_eq(ps.evicted, 0);
    /* thousands of plaintext workers (the table rebuilt on the way), then every connection closed */
    enum { N = 3000 };
    for (int i = 0; i < N; i++) {
        Peer p = on_conn(100 + i, 100 + i, 1000 + (uint64_t)i);
        cr_assert_eq(peer_set(&ps, &p, 1000 + i, "b", 1), 0, "worker %d", i);
    }
    cr_assert_eq(peers_live(&ps), N + 2);
    for (int i = 0; i < N; i++)
        peers_closed(&ps, 100 + i, 1000 + (uint64_t)i);
    peers_closed(&ps, 6, 2);
    peers_closed(&ps, 7, 3);
    cr_assert_eq(peers_live(&ps), 0);
    cr_assert_eq(ps.active, 0);
    cr_assert_eq(peers_keys(&ps), 0);
    peers_free(&ps);
}

/* Peer n on a connection of key `user` (a CURVE allow-list name). */
static Peer keyed(int n, const char *user)
{
    Peer p = peer_of(n);
    snprintf(p.user, sizeof p.user, "%s", user);
    return p;
}

/* Live entries of user's key (a scan, not the table's count). */
static size_t live_of(Peers *ps, const char *user)
{
    size_t n = 0;
    for (size_t i = 0; i < ps->cap; i++)
        n += ps->v[i].peer.len && ps->v[i].worker && strcmp(ps->v[i].peer.user, user) == 0;
    return n;
}

/*
 * A key has at most key_max live workers: one more takes the place of the
 * key's own longest-silent worker that missed a heartbeat, else it is
 * refused (-3); other keys are not concerned, and a worker of the key
 * saying hello again is not one more.
 */
Test(peers, a_key_has_at_most_key_max_workers)
{
    Peers ps = table(100);
    ps.key_max = 3;
    for (int i = 0; i < 3; i++) {
        Peer p = keyed(i, "mallory");
        cr_assert_eq(peer_set(&ps, &p, 100 + i, "b", 1), 0);
    }
    Peer p3 = keyed(3, "mallory"), p1 = keyed(1, "mallory");
    cr_assert_eq(peer_set(&ps, &p3, 103, "b", 1), -3, "a fourth worker of the key");
    cr_assert_eq(ps.key_refused, 1);
    cr_assert_eq(peer_set(&ps, &p1, 101, "b", 2), 0, "one of its workers again");
    Peer other = keyed(10, "alice");
    cr_assert_eq(peer_set(&ps, &other, 200, "b", 1), 0, "another key");
    cr_assert_eq(peers_of_key(&ps, peers_key(&p3, 0)), 3);
    cr_assert_eq(peers_keys(&ps), 2);
    /* worker 100 missed a heartbeat: the newcomer of its key takes its place */
    silence(&ps, 0, PEER_QUIET_MIN_MS + 100);
    cr_assert_eq(peer_set(&ps, &p3, 103, "b", 1), 0);
    Peer p0 = keyed(0, "mallory");
    cr_assert_null(peer_slot_worker(&ps, &p0), "the key's silent worker was evicted");
    cr_assert_eq(live_of(&ps, "mallory"), 3);
    cr_assert_eq(peers_of_key(&ps, peers_key(&p3, 0)), 3);
    /* plaintext: every worker its own key */
    Peer a = peer_of(50), b = peer_of(51), c = peer_of(52), d = peer_of(53);
    cr_assert_eq(peer_set(&ps, &a, 300, "b", 1), 0);
    cr_assert_eq(peer_set(&ps, &b, 301, "b", 1), 0);
    cr_assert_eq(peer_set(&ps, &c, 302, "b", 1), 0);
    cr_assert_eq(peer_set(&ps, &d, 303, "b", 1), 0);
    cr_assert_eq(peers_keys(&ps), 6);
    peers_free(&ps);
}

/*
 * One key holding the whole table, everyone heard from lately: another
 * key's newcomer takes the place of the greedy key's longest-silent
 * worker, and so on until the two keys hold as many; the evicted saying
 * hello again are refused (their key holds the most), so nobody is
 * evicted back and forth.
 */
Test(peers, a_key_filling_the_table_gives_way_to_another)
{
    enum { MAX = 10 };
    Peers ps = table(MAX);
    for (int i = 0; i < MAX; i++) {
        Peer p = keyed(i, "greedy");
        cr_assert_eq(peer_set(&ps, &p, 100 + i, "b", 1), 0);
        peer_find(&ps, &p)->seen_ms -= (MAX - i) * 10;      /* worker 100 the longest-silent, none quiet */
    }
    Peer g = keyed(MAX, "greedy");
    cr_assert_eq(peer_set(&ps, &g, 100 + MAX, "b", 1), -2, "the greedy key's own newcomer: refused");
    Peer first = keyed(0, "greedy");
    Peer o = keyed(1000, "other");
    cr_assert_eq(peer_set(&ps, &o, 500, "b", 1), 0, "another key's newcomer gets in");
    cr_assert_null(peer_slot_worker(&ps, &first), "in place of the greedy key's longest-silent");
    cr_assert_eq(ps.shared, 1);
    cr_assert_eq(peer_set(&ps, &first, 100, "b", 1), -2, "the evicted one's hello: refused, not evicting back");
    for (int i = 1; i < MAX; i++) {
        Peer n = keyed(1000 + i, "other");
        int rc = peer_set(&ps, &n, 500 + i, "b", 1);
        cr_assert_eq(rc, i < MAX / 2 ? 0 : -2, "the other key's newcomer %d: %d", i, rc);
    }
    cr_assert_eq(live_of(&ps, "greedy"), MAX / 2);
    cr_assert_eq(live_of(&ps, "other"), MAX / 2);
    cr_assert_eq(peers_live(&ps), MAX);
    cr_assert_eq(ps.shared, MAX / 2);
    peers_free(&ps);
}

/* ---- open connections by descriptor (conns.c) ------------------------------------ */

/* The descriptors due at now, in ascending order, as a string ("7 9"). */
static const char *due(Conns *c, int64_t now)
{
    static char out[256];
    int fds[16];
    uint64_t tags[16];
    int n = conns_due(c, now, true, fds, tags, 16);
    out[0] = '\0';
    for (int i = 0; i < n; i++)
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%d", i ? " " : "", fds[i]);
    return out;
}

/*
 * A key holds at most key_max connections that sent a message: one more
 * is refused (closed after its grace) while the key's others spoke
 * lately, and evicts the longest-silent of them once that was silent
 * quiet_ms; another key and keyless (plaintext) connections are not
 * counted against it.
 */
Test(conns, a_key_holds_at_most_key_max)
{
    ConnsLimits lim = { .key_max = 2, .first_ms = 1000, .quiet_ms = 500, .grace_ms = 100 };
    Conns *c = conns_new(&lim);
    cr_assert(c);
    for (int fd = 5; fd <= 8; fd++)
        cr_assert_eq(conns_accepted(c, fd, (uint64_t)fd * 11, 0), 0);
    cr_assert_eq(conns_message(c, 5, "a", 10), CONNS_OK);
    cr_assert_eq(conns_message(c, 6, "a", 10), CONNS_OK);
    cr_assert_eq(conns_message(c, 5, "a", 20), CONNS_OK, "a counted connection's next message");
    cr_assert_eq(conns_message(c, 7, "a", 20), CONNS_REFUSED, "a third connection of the key");
    cr_assert_eq(conns_message(c, 7, "a", 30), CONNS_CLOSING, "its next message is dropped");
    cr_assert_eq(conns_of_key(c, "a"), 2);
    cr_assert_eq(conns_message(c, 8, "b", 30), CONNS_OK, "another key");
    cr_assert_eq(conns_of_key(c, "b"), 1);
    cr_assert_str_eq(due(c, 50), "", "a refused connection has its grace, for its answer");
    cr_assert_str_eq(due(c, 120), "7");
    cr_assert_str_eq(due(c, 130), "", "returned once");
    cr_assert_eq(conns_open(c), 4, "open until its disconnect");
    conns_closed(c, 7);
    cr_assert_eq(conns_open(c), 3);
    /* 6 silent since 10, 5 since 20: at 600 a newcomer evicts 6, the longest-silent */
    cr_assert_eq(conns_accepted(c, 9, 99, 590), 0);
    cr_assert_eq(conns_message(c, 9, "a", 600), CONNS_OK);
    cr_assert_eq(conns_of_key(c, "a"), 2);
    cr_assert_eq(conns_message(c, 6, "a", 600), CONNS_CLOSING, "the evicted one is no longer heard");
    int fds[4];
    uint64_t tags[4];
    cr_assert_eq(conns_due(c, 600, false, fds, tags, 4), 1);
    cr_assert(fds[0] == 6 && tags[0] == 66, "fd %d tag %llu", fds[0], (unsigned long long)tags[0]);
    /* keyless connections are bounded by their first message only */
    for (int fd = 20; fd < 30; fd++) {
        cr_assert_eq(conns_accepted(c, fd, 1, 600), 0);
        cr_assert_eq(conns_message(c, fd, "", 600), CONNS_OK);
    }
    ConnsStats st = conns_stats(c);
    cr_assert(st.refused == 1 && st.evicted == 1 && st.silent == 0, "%lld refused, %lld evicted, %lld silent",
              (long long)st.refused, (long long)st.evicted, (long long)st.silent);
    /* a disconnect, and a number reused, free the key's place */
    conns_closed(c, 9);
    cr_assert_eq(conns_of_key(c, "a"), 1);
    cr_assert_eq(conns_accepted(c, 5, 55, 700), 0);
    cr_assert_eq(conns_of_key(c, "a"), 0, "5 reused by another connection: its old key's count dropped");
    conns_destroy(&c);
    conns_destroy(&c);
}

/*
 * A connection sends its first message within first_ms of its accept,
 * else it is due to close; one that spoke is not (its silence after that
 * is the key's business).  A message on a number never seen accepted
 * (its accept still on the way) counts from then.
 */
/* Each accept gets a new number: a descriptor reused is another connection; a closed one has none. */
Test(conns, each_connection_has_its_own_number)
{
    ConnsLimits lim = { .first_ms = 1000 };
    Conns *c = conns_new(&lim);
    cr_assert(c);
    cr_assert_eq(conns_id(c, 5), 0, "never accepted");
    cr_assert_eq(conns_accepted(c, 5, 55, 0), 0);
    uint64_t first = conns_id(c, 5);
    cr_assert_neq(first, 0);
    conns_closed(c, 5);
    cr_assert_eq(conns_id(c, 5), 0, "closed");
    cr_assert_eq(conns_accepted(c, 5, 55, 10), 0);
    cr_assert(conns_id(c, 5) != 0 && conns_id(c, 5) != first, "the same descriptor, and even address, again");
    uint64_t second = conns_id(c, 5);
    cr_assert_eq(conns_accepted(c, 5, 56, 20), 0);
    cr_assert(conns_id(c, 5) != second, "an accept over a descriptor still open: a new connection");
    conns_destroy(&c);
}

Test(conns, a_silent_connection_is_closed)
{
    ConnsLimits lim = { .key_max = 0, .first_ms = 1000, .quiet_ms = 0, .grace_ms = 100 };
    Conns *c = conns_new(&lim);
    cr_assert(c);
    cr_assert_eq(conns_accepted(c, 3, 1, 0), 0);
    cr_assert_eq(conns_accepted(c, 4, 2, 0), 0);
    cr_assert_eq(conns_message(c, 4, "k", 500), CONNS_OK);
    cr_assert_eq(conns_message(c, 1000, "k", 500), CONNS_OK, "an fd first seen by its message");
    cr_assert(conns_knows(c, 1000));
    cr_assert_str_eq(due(c, 999), "");
    int fds[4];
    uint64_t tags[4];
    cr_assert_eq(conns_due(c, 5000, false, fds, tags, 4), 0, "not judged silent while messages may wait unread");
    cr_assert_str_eq(due(c, 1000), "3");
    cr_assert_str_eq(due(c, 100000), "", "the others spoke");
    cr_assert_eq(conns_stats(c).silent, 1);
    cr_assert_eq(conns_of_key(c, "k"), 2, "no limit for the key");
    cr_assert_eq(conns_accepted(c, -1, 0, 0), -1);
    cr_assert_eq(conns_message(c, -1, "k", 0), CONNS_OK, "not a socket: nothing to bound");
    conns_destroy(&c);
}

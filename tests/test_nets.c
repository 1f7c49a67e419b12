/*
 * Nets as artifacts (025_nets.sql) against a real PostgreSQL (XQF_TEST_DB;
 * skipped without it): xqf-tune net add|list|show and what it refuses
 * (files the engine's reader refuses, a net registered twice, bad options),
 * signed and unsigned nets; and a small cluster (a coordinator, one worker
 * trusting the operator key) playing an SPRT of a random net against the
 * hand-crafted evaluation: the worker fetches the net, the run finishes,
 * its games are stored, and show and the PGN name each side's net.  The
 * nets are written at run time from random weights (nnue_save).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster_util.h"
#include "keys.h"
#include "nnue.h"
#include "store_nets.h"
#include "store_runs.h"
#include "store_steer.h"

TestSuite(nets, .init = cu_fixture_init, .fini = cu_fixture_fini, .timeout = 120);

/* Runs xqf-tune with args (a shell fragment); its stdout in out. Returns the exit status. */
static int tune(char *out, size_t size, const char *args)
{
    int st = cu_tune(out, size, args, cu_fx.logfile);
    cr_assert_geq(st, -1, "cannot run xqf-tune");
    return st;
}

/* Whether the log of the test's processes says text. */
static bool log_says(const char *text)
{
    FILE *f = fopen(cu_fx.logfile, "r");
    if (!f)
        return false;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strstr(buf, text) != NULL;
}

/* A net of random weights (cu_random_net) at dir/name, its path in path. */
static void random_net(const char *name, uint64_t seed, char *path, size_t size)
{
    char err[256];
    snprintf(path, size, "%s/%s", cu_fx.dir, name);
    cr_assert_eq(cu_random_net(path, seed, err, sizeof err), 0, "%s", err);
}

/* Copies the first n bytes of from into to, then writes extra (may be NULL) over its start. */
static void damaged_copy(const char *from, const char *to, long n, const char *extra)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    cr_assert(in && out);
    char buf[4096];
    for (long done = 0; done < n;) {
        size_t want = (size_t)(n - done) < sizeof buf ? (size_t)(n - done) : sizeof buf;
        size_t got = fread(buf, 1, want, in);
        cr_assert_gt(got, 0);
        fwrite(buf, 1, got, out);
        done += (long)got;
    }
    if (extra) {
        fseek(out, 0, SEEK_SET);
        fwrite(extra, 1, strlen(extra), out);
    }
    fclose(in);
    fclose(out);
}

/* An operator key pair in the test's folder (xqf-keys sign-new): FILE and FILE.pub. */
static void operator_key(char *key, size_t size)
{
    char cmd[1024];
    snprintf(key, size, "%s/operator.key", cu_fx.dir);
    snprintf(cmd, sizeof cmd, "'%s/xqf-keys' sign-new '%s' >/dev/null", XQF_BIN, key);
    cr_assert_eq(system(cmd), 0);
}

/* The value after "label" in out, up to the line's end. */
static void field(const char *out, const char *label, char *value, size_t size)
{
    const char *p = strstr(out, label);
    cr_assert_not_null(p, "no '%s' in:\n%s", label, out);
    p += strlen(label);
    snprintf(value, size, "%.*s", (int)strcspn(p, "\n"), p);
}

Test(nets, add_list_show_and_refusals)
{
    CU_REQUIRE_DB();
    char out[16384], args[1024], net[256], bad[300], key[256], sha[80], id[32], sig[200], err[256];
    random_net("a.nnue", 1, net, sizeof net);

    /* unsigned: recorded, with a warning */
    snprintf(args, sizeof args, "net add '%s' --provenance 'random weights for a test'", net);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", out);
    cr_assert(log_says("warning: an unsigned net"), "no warning (log %s)", cu_fx.logfile);
    field(out, "SHA-256: ", sha, sizeof sha);
    field(out, "Net: ", id, sizeof id);
    cr_assert_not_null(strstr(out, "Signature: none"), "%s", out);
    char want[256], file_sha[65];
    cr_assert_eq(cu_sha256(net, file_sha), 0);
    cr_assert_str_eq(sha, file_sha);
    snprintf(want, sizeof want, "Name: xqf-%.12s.nnue", sha);
    cr_assert_not_null(strstr(out, want), "%s", out);

    long size = 0;
    FILE *f = fopen(net, "rb");
    cr_assert(f);
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fclose(f);
    char size_line[64];
    snprintf(size_line, sizeof size_line, "Size: %ld bytes", size);

    /* list: one line; show by id and by SHA-256: every field */
    cr_assert_eq(tune(out, sizeof out, "net list"), 0);
    snprintf(want, sizeof want, "%s xqf-%.12s.nnue %s unsigned", id, sha, sha);
    cr_assert_not_null(strstr(out, want), "%s", out);
    for (int by_sha = 0; by_sha < 2; by_sha++) {
        snprintf(args, sizeof args, "net show %s", by_sha ? sha : id);
        cr_assert_eq(tune(out, sizeof out, args), 0, "%s", args);
        cr_assert_not_null(strstr(out, "Provenance: random weights for a test"), "%s", out);
        cr_assert_not_null(strstr(out, "Description: random weights, seed"), "%s", out);
        cr_assert_not_null(strstr(out, size_line), "%s", out);
        cr_assert_not_null(strstr(out, "Signature: none"), "%s", out);
    }
    snprintf(want, sizeof want, "net show xqf-%.12s.nnue", sha);
    cr_assert_eq(tune(out, sizeof out, want), 0, "by name");
    cr_assert_not_null(strstr(out, size_line), "%s", out);
    cr_assert_eq(tune(out, sizeof out, "net show 999999"), 2);
    cr_assert_eq(tune(out, sizeof out, "net show"), 2);
    cr_assert_eq(tune(out, sizeof out, "net frobnicate"), 2);
    /* the same file again: refused, naming the net it is */
    snprintf(args, sizeof args, "net add '%s'", net);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    snprintf(want, sizeof want, "registered already, as net %s", id);
    cr_assert(log_says(want), "log %s", cu_fx.logfile);

    /* files the reader refuses: its words, exit 2, nothing recorded */
    const struct {
        long bytes;
        const char *over, *message;
    } cases[] = {
        { -1000, NULL, "truncated inside" },
        { 0, "NOTANNUE", "wrong magic" },
        { 12, NULL, "truncated inside the header" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(bad, sizeof bad, "%s/bad%zu.nnue", cu_fx.dir, i);
        damaged_copy(net, bad, cases[i].bytes > 0 ? cases[i].bytes : size + cases[i].bytes, cases[i].over);
        truncate(cu_fx.logfile, 0);
        snprintf(args, sizeof args, "net add '%s'", bad);
        cr_expect_eq(tune(out, sizeof out, args), 2, "%s", args);
        cr_expect(log_says(cases[i].message), "%s: no '%s' (log %s)", args, cases[i].message, cu_fx.logfile);
    }
    snprintf(args, sizeof args, "net add '%s/no-such-file'", cu_fx.dir);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    snprintf(args, sizeof args, "net add '%s'", cu_fx.dir);          /* a folder */
    cr_assert_eq(tune(out, sizeof out, args), 2);
    snprintf(args, sizeof args, "net add '%s' --name 'two words'", net);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    cr_assert_eq(tune(out, sizeof out, "net list --name x"), 2);
    /* a name names one net: another file under a taken name is refused */
    random_net("same-name.nnue", 4, bad, sizeof bad);
    snprintf(args, sizeof args, "net add '%s' --name xqf-%.12s.nnue", bad, sha);
    truncate(cu_fx.logfile, 0);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    snprintf(want, sizeof want, "is net %s's already", id);
    cr_assert(log_says(want), "log %s", cu_fx.logfile);
    StoreNet *all = NULL;
    cr_assert_eq(store_list_nets(cu_fx.store, &all), 1, "a refused file was recorded");
    free(all);

    /* signed: the signature is a net's under the operator key, never a build's */
    random_net("b.nnue", 2, net, sizeof net);
    operator_key(key, sizeof key);
    snprintf(args, sizeof args, "net add '%s' --name signed-net --sign-key '%s'", net, key);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", out);
    field(out, "SHA-256: ", sha, sizeof sha);
    field(out, "Signature: ", sig, sizeof sig);
    cr_assert_eq(strlen(sig), SIGN_SIG_HEX, "%s", out);
    char pub[300];
    snprintf(pub, sizeof pub, "%s.pub", key);
    TrustList t;
    cr_assert_eq(trust_read(pub, &t, err, sizeof err), 0, "%s", err);
    cr_assert_eq(trust_verify_artifact(&t, SIGN_NET, sha, "signed-net", sig, err, sizeof err), 0, "%s", err);
    cr_assert_neq(trust_verify_build(&t, sha, "signed-net", sig, err, sizeof err), 0);
    cr_assert_neq(trust_verify_artifact(&t, SIGN_NET, sha, "other-name", sig, err, sizeof err), 0);
    StoreNet n;
    cr_assert_eq(store_load_net(cu_fx.store, sha, &n), 1);
    cr_assert_str_eq(n.signature, sig);
    cr_assert_str_eq(n.name, "signed-net");
    /* a bad key file or signature: a usage error before anything is recorded */
    random_net("c.nnue", 3, net, sizeof net);
    snprintf(args, sizeof args, "net add '%s' --sign-key '%s'", net, pub);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    snprintf(args, sizeof args, "net add '%s' --signature 1234", net);
    cr_assert_eq(tune(out, sizeof out, args), 2);
    /* spsa new --net and data new --net: both sides evaluate with it (by name, or none) */
    const char *one_net[] = { "spsa new --pairs 2 --nodes 300 --params NullR --net signed-net",
                              "data new --games 4 --nodes 300 --net signed-net", "spsa new --pairs 2 --nodes 300 --net none" };
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(tune(out, sizeof out, one_net[i]), 0, "%s (log %s)", one_net[i], cu_fx.logfile);
        StoreRun r;
        cr_assert_eq(store_load_run(cu_fx.store, strtoll(out, NULL, 10), &r, false), 1);
        cr_assert_str_eq(r.net0, i == 2 ? "none" : sha, "%s", one_net[i]);
        cr_assert_str_eq(r.net1, r.net0, "%s", one_net[i]);
    }
    /* runs name registered nets only */
    cr_assert_eq(tune(out, sizeof out, "sprt new --test-net 424242 --nodes 300"), 2);
    cr_assert_eq(tune(out, sizeof out, "spsa new --pairs 2 --nodes 300 --net 424242"), 2);
    /* the events log: a line for each net registered (the two above), none for the refusals */
    cr_assert_eq(tune(out, sizeof out, "log --of net"), 0, "%s", out);
    int lines = 0;
    for (const char *p = out; (p = strstr(p, " net add ")); p++)
        lines++;
    cr_assert(lines == 2 && strstr(out, "signed-net") && strstr(out, " net    "), "%s", out);
}

/*
 * An SPRT at a few hundred nodes of a random net (signed, fetched by the
 * worker, which trusts the operator key) against the hand-crafted
 * evaluation: the run finishes, its games are stored, show and the PGN
 * name each side's net.
 */
Test(nets, sprt_of_a_net_against_the_hand_crafted_evaluation)
{
    CU_REQUIRE_DB();
    char out[1 << 16], args[1024], net[256], key[256], pub[300], id[32], sha[80], cache[300], name[64];
    random_net("play.nnue", 7, net, sizeof net);
    operator_key(key, sizeof key);
    snprintf(pub, sizeof pub, "%s.pub", key);
    snprintf(args, sizeof args, "net add '%s' --sign-key '%s' --provenance 'cluster test'", net, key);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", out);
    field(out, "Net: ", id, sizeof id);
    field(out, "SHA-256: ", sha, sizeof sha);
    field(out, "Name: ", name, sizeof name);
    snprintf(args, sizeof args, "sprt new --test-net %s --base-net none --nodes 300 --max-pairs 4 "
             "--pairs-per-task 2 --elo0 -500 --elo1 500", id);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s (log %s)", out, cu_fx.logfile);
    int64_t run = strtoll(out, NULL, 10);
    cr_assert_gt(run, 0, "%s", out);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_str_eq(r.net0, sha);
    cr_assert_str_eq(r.net1, "none");

    snprintf(cache, sizeof cache, "%s/cache", cu_fx.dir);
    cu_track(cu_coordinator(cu_fx.db_coordinator, cu_fx.port, "10", cu_fx.logfile));
    const char *extra[] = { "--trust", pub, "--cache", cache, NULL };
    cu_track(cu_worker_args(cu_fx.port, "w-net", 1, cu_fx.logfile, extra));
    cr_assert(cu_wait_finished(cu_fx.store, run, 90, &r), "the run did not finish (log %s)", cu_fx.logfile);
    char why[512];
    cr_assert(cu_audit(cu_fx.store, run, -1, why, sizeof why), "%s (log %s)", why, cu_fx.logfile);
    cr_assert_gt(r.counts.pairs, 0, "no pairs played (log %s)", cu_fx.logfile);
    char cached[400];
    snprintf(cached, sizeof cached, "%s/nets/%s", cache, sha);
    cr_assert_eq(access(cached, R_OK), 0, "the worker did not cache the net at %s (log %s)", cached, cu_fx.logfile);

    snprintf(args, sizeof args, "show %lld", (long long)run);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    char want[256];
    snprintf(want, sizeof want, "Net (test): %s (SHA-256 %s)", name, sha);
    cr_assert_not_null(strstr(out, want), "%s", out);
    cr_assert_not_null(strstr(out, "Net (base): none (hand-crafted evaluation)"), "%s", out);

    snprintf(args, sizeof args, "pgn %lld", (long long)run);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    snprintf(want, sizeof want, "[RedNet \"%s\"]\n[BlackNet \"none\"]", name);
    cr_assert_not_null(strstr(out, want), "game 1 (test as Red):\n%.2000s", out);
    snprintf(want, sizeof want, "[RedNet \"none\"]\n[BlackNet \"%s\"]", name);
    cr_assert_not_null(strstr(out, want), "game 2 (test as Black):\n%.2000s", out);
    /* the book the openings came from, as the nets, by its name (show gives its SHA-256) */
    cr_assert_not_null(strstr(out, "[Book \"default.book\"]"), "%.2000s", out);
}

/*
 * A net signed by a key the worker does not trust: the worker refuses it
 * (no game of the run is played with the engine's own evaluation in its
 * place), reports the refusal, and show lists it against the net.
 */
Test(nets, a_net_signed_by_an_untrusted_key_is_refused_and_shown)
{
    CU_REQUIRE_DB();
    char out[1 << 16], args[1024], net[256], key[256], other[300], pub[300], id[32], sha[80], cache[300];
    random_net("untrusted.nnue", 11, net, sizeof net);
    operator_key(key, sizeof key);
    snprintf(pub, sizeof pub, "%s.pub", key);
    snprintf(other, sizeof other, "%s/other.key", cu_fx.dir);
    snprintf(args, sizeof args, "'%s/xqf-keys' sign-new '%s' >/dev/null", XQF_BIN, other);
    cr_assert_eq(system(args), 0);
    snprintf(args, sizeof args, "net add '%s' --sign-key '%s'", net, other);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", out);
    field(out, "Net: ", id, sizeof id);
    field(out, "SHA-256: ", sha, sizeof sha);
    snprintf(args, sizeof args, "sprt new --test-net %s --nodes 300 --max-pairs 2 --pairs-per-task 2", id);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", out);
    int64_t run = strtoll(out, NULL, 10);
    snprintf(cache, sizeof cache, "%s/cache", cu_fx.dir);
    cu_track(cu_coordinator(cu_fx.db_coordinator, cu_fx.port, "10", cu_fx.logfile));
    const char *extra[] = { "--trust", pub, "--cache", cache, NULL };
    cu_track(cu_worker_args(cu_fx.port, "w-untrusting", 1, cu_fx.logfile, extra));
    char want[160];
    snprintf(want, sizeof want, "w-untrusting net %.16s: bench 0, 0 nodes/s, REFUSED: net %.16s...: refused: not "
             "signed by a trusted operator key", sha, sha);
    snprintf(args, sizeof args, "show %lld", (long long)run);
    bool shown = false;
    for (double t0 = cu_now(); !shown && cu_now() - t0 < 30; cu_sleep_ms(200)) {
        cr_assert_eq(tune(out, sizeof out, args), 0);
        shown = strstr(out, want) != NULL;
    }
    cr_assert(shown, "show lacks '%s':\n%s\n(log %s)", want, out, cu_fx.logfile);
    StoreRun r;
    cr_assert_eq(store_load_run(cu_fx.store, run, &r, false), 1);
    cr_assert_eq(r.counts.pairs, 0, "games were played without the run's net");
}

/*
 * The network's loop closed by the system (027_net_chains.sql): a chain of
 * a tiny data run played by the cluster's worker; xqf-tune chain advance
 * exports its positions, trains a net on them for seconds, registers it
 * signed by the operator key; the database starts the SPRT of that net
 * against the hand-crafted evaluation, which the worker plays with the
 * net it fetches.  Skipped without Debian's python3-torch.
 */
Test(nets, a_chain_trains_registers_and_tests_its_net, .timeout = 160)
{
    CU_REQUIRE_DB();
    if (system("/usr/bin/python3 -c 'import numpy, torch' >/dev/null 2>&1") != 0)
        cr_skip("/usr/bin/python3 has no numpy or torch (python3-torch, ops/setup): the loop is not trained here");
    char out[1 << 16], args[2048], key[256], pub[300], cache[300], dir[300];
    operator_key(key, sizeof key);
    snprintf(pub, sizeof pub, "%s.pub", key);
    snprintf(cache, sizeof cache, "%s/cache", cu_fx.dir);
    snprintf(dir, sizeof dir, "%s/loop", cu_fx.dir);
    cr_assert_eq(tune(out, sizeof out, "chain new --data-games 12 --nodes 200 --random-plies 4 --pairs-per-task 2 "
                                        "--then-train --epochs 1 --batch 256 --then-sprt -500,500,200n "
                                        "--sprt-max-pairs 4 --base-net none --name loop"), 0, "%s", out);
    int64_t chain = strtoll(out, NULL, 10);
    cr_assert_gt(chain, 0, "%s", out);
    StoreChain c;
    cr_assert_eq(store_load_chain(cu_fx.store, chain, &c), 1);
    int64_t data = c.stages[0].run_id;
    cu_track(cu_coordinator(cu_fx.db_coordinator, cu_fx.port, "10", cu_fx.logfile));
    const char *extra[] = { "--trust", pub, "--cache", cache, NULL };
    cu_track(cu_worker_args(cu_fx.port, "w-loop", 2, cu_fx.logfile, extra));
    StoreRun r;
    cr_assert(cu_wait_finished(cu_fx.store, data, 60, &r), "the data run did not finish (log %s)", cu_fx.logfile);

    /* an earlier generation's data (here the same run's, exported apart) is trained on with the new run's */
    char old[400];
    snprintf(old, sizeof old, "%s/old.data", cu_fx.dir);
    snprintf(args, sizeof args, "data export %" PRId64 " --out '%s'", data, old);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s", out);

    /* the host with PyTorch: export, train, register (signed); the SPRT starts by itself */
    snprintf(args, sizeof args, "chain advance %" PRId64 " --out '%s' --sign-key '%s' --threads 1 --with-data '%s'",
             chain, dir, key, old);
    cr_assert_eq(tune(out, sizeof out, args), 0, "%s (log %s, %s/chain-%" PRId64 "/train.log)", out, cu_fx.logfile,
                 dir, chain);
    cr_assert(strstr(out, "trained: ") && strstr(out, "recorded, the next stage started"), "%s", out);
    cr_assert_eq(store_load_chain(cu_fx.store, chain, &c), 1);
    cr_assert(!strcmp(c.stages[1].state, "passed") && !strcmp(c.stages[2].state, "passed"), "%s %s",
              c.stages[1].state, c.stages[2].state);
    cr_assert(strstr(c.stages[1].detail, "positions of 12 games of data run"), "%s", c.stages[1].detail);
    char with[512];
    struct stat old_st;
    cr_assert_eq(stat(old, &old_st), 0);
    snprintf(with, sizeof with, " with %lld positions of %s -> ", (long long)(old_st.st_size - 8) / 54, old);
    cr_assert(strstr(c.stages[1].detail, with), "'%s' not in '%s'", with, c.stages[1].detail);
    char trained[600];
    snprintf(trained, sizeof trained, "%s/chain-%" PRId64 "/train.log", dir, chain);
    FILE *log = fopen(trained, "r");
    cr_assert_not_null(log);
    char line[1024];
    bool both = false;
    while (fgets(line, sizeof line, log))
        both |= strncmp(line, "data: 2 file(s), ", 17) == 0;
    fclose(log);
    cr_assert(both, "the trainer did not read both files (%s)", trained);
    char key_text[24];
    snprintf(key_text, sizeof key_text, "%" PRId64, c.stages[2].net_id);
    StoreNet *n = calloc(1, sizeof *n);
    cr_assert_eq(store_load_net(cu_fx.store, key_text, n), 1);
    cr_assert_eq(strlen(n->signature), SIGN_SIG_HEX, "the trained net is signed with the operator key");
    cr_assert(strstr(n->provenance, "data run") && strstr(n->provenance, "1 epochs, batch 256") &&
                  strstr(n->provenance, old), "%s", n->provenance);
    int64_t sprt = c.stages[3].run_id;
    cr_assert_gt(sprt, 0);

    /* the worker fetches the new net and plays the SPRT: the chain ends with its verdict */
    cr_assert(cu_wait_finished(cu_fx.store, sprt, 90, &r), "the SPRT did not finish (log %s)", cu_fx.logfile);
    cr_assert_str_eq(r.net0, n->sha256);
    cr_assert_str_eq(r.net1, "none");
    cr_assert_gt(r.counts.pairs, 0);
    char cached[600];
    snprintf(cached, sizeof cached, "%s/nets/%s", cache, n->sha256);
    cr_assert_eq(access(cached, R_OK), 0, "the worker did not fetch the new net (log %s)", cu_fx.logfile);
    cr_assert_eq(store_load_chain(cu_fx.store, chain, &c), 1);
    cr_assert_str_neq(c.state, "active", "the chain ends with the SPRT's verdict");
    cr_assert_str_neq(c.stages[3].state, "running");
    snprintf(args, sizeof args, "chain show %" PRId64, chain);
    cr_assert_eq(tune(out, sizeof out, args), 0);
    cr_assert(strstr(out, n->name) && strstr(out, "signed"), "%s", out);
    free(n);
}

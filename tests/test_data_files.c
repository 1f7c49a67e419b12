/*
 * test_data_files.c - xqf-tune data merge and data stats FILE... (no
 * database): the merge is a seeded permutation of its inputs, the same
 * bytes whatever --memory (one bucket in memory, or many on disk and
 * scattered again), --dedup keeps the first copy of each position,
 * --keep-order concatenates; the program's memory stays within --memory
 * (its peak resident size, measured by the kernel, against a budget far
 * below the data); stats counts positions, games, results and exact
 * duplicates; bad input ends with status 2 naming the problem and leaves
 * no output.  The data are random games played with the engine's move
 * generator, written by the test.
 */
#define _DEFAULT_SOURCE /* wait4 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "datagen.h"
#include "movegen.h"
#include "rng.h"
#include "tables.h"

enum { REC = DATA_RECORD_BYTES };

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/xqf-datafiles-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    tables_init();
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(data_files, .init = setup, .fini = teardown, .timeout = 60);

static char out_text[1 << 16], err_text[1 << 16];

/* Reads fd to its end into buf (NUL-terminated). */
static void slurp(int fd, char *buf, size_t size)
{
    size_t len = 0;
    ssize_t got;
    while ((got = read(fd, buf + len, size - 1 - len)) > 0)
        len += (size_t)got;
    buf[len] = '\0';
}

/*
 * Runs XQF_BIN/xqf-tune with args (a shell fragment, run by exec so that
 * the kernel's account is the program's own): stdout in out_text, stderr
 * in err_text, its peak resident size in *rss_kb (when not NULL).
 * Returns the exit status.
 */
static int tune(long *rss_kb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int tune(long *rss_kb, const char *fmt, ...)
{
    char args[2048], cmd[2400], outf[96], errf[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(outf, sizeof outf, "%s/.out", dir);
    snprintf(errf, sizeof errf, "%s/.err", dir);
    snprintf(cmd, sizeof cmd, "exec '%s/xqf-tune' %s >'%s' 2>'%s'", XQF_BIN, args, outf, errf);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int st;
    struct rusage ru;
    cr_assert_eq(wait4(pid, &st, 0, &ru), pid);
    if (rss_kb)
        *rss_kb = ru.ru_maxrss;
    int fd = open(outf, O_RDONLY);
    slurp(fd, out_text, sizeof out_text);
    close(fd);
    fd = open(errf, O_RDONLY);
    slurp(fd, err_text, sizeof err_text);
    close(fd);
    unlink(outf);
    unlink(errf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* dir/name */
static const char *at(const char *name)
{
    static char paths[8][256];
    static int next;
    char *p = paths[next++ % 8];
    snprintf(p, 256, "%s/%s", dir, name);
    return p;
}

/* What the test knows of the data it wrote. */
typedef struct {
    int64_t records, games;
    int64_t results[3];              /* side to move's view: loss, draw, win */
} Written;

/*
 * Writes games random games of at most plies plies (each position before
 * its move: a record with a random score, the game's result from the side
 * to move's view, the ply) to path.  Random games from the start position
 * share their first positions: the data hold duplicates.
 */
static Written write_games(const char *path, uint64_t seed, int games, int plies)
{
    Written w = { 0 };
    Rng rng;
    rng_seed(&rng, seed);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(data_write_header(f), 0);
    static Board b;
    MoveList list;
    for (int g = 0; g < games; g++) {
        board_startpos(&b);
        int red_result = (int)rng_below(&rng, 3);
        w.games++;
        for (int ply = 0; ply < plies; ply++) {
            movegen_legal(&b, &list);
            if (list.count == 0)
                break;
            Move m = list.moves[rng_below(&rng, (uint32_t)list.count)];
            uint8_t rec[REC] = { 0 };
            for (int sq = 0; sq < 90; sq++)
                rec[sq / 2] |= (uint8_t)(b.squares[sq] << (sq % 2 ? 4 : 0));
            int score = (int)rng_below(&rng, 1001) - 500, result = b.side == 0 ? red_result : 2 - red_result;
            rec[45] = (uint8_t)b.side;
            rec[46] = (uint8_t)((uint16_t)(int16_t)score & 0xff);
            rec[47] = (uint8_t)((uint16_t)(int16_t)score >> 8);
            rec[48] = (uint8_t)(m & 0xff);
            rec[49] = (uint8_t)(m >> 8);
            rec[50] = (uint8_t)result;
            rec[52] = (uint8_t)ply;
            cr_assert_eq(fwrite(rec, 1, REC, f), (size_t)REC);
            w.records++;
            w.results[result]++;
            board_make(&b, m);
        }
    }
    cr_assert_eq(fclose(f), 0);
    return w;
}

/* A whole file into a malloc'd buffer; its size in *len. */
static uint8_t *load(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc((size_t)size + 1);
    cr_assert_eq(fread(data, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    *len = (size_t)size;
    return data;
}

static int by_record(const void *a, const void *b) { return memcmp(a, b, REC); }
static int by_position(const void *a, const void *b) { return memcmp(a, b, 46); }

/* The records of files (after their headers), sorted: a multiset to compare. */
static uint8_t *sorted_records(const char *const *files, int n, size_t *count)
{
    size_t total = 0, lens[8];
    uint8_t *data[8];
    for (int i = 0; i < n; i++) {
        data[i] = load(files[i], &lens[i]);
        cr_assert_eq(memcmp(data[i], DATA_MAGIC, 8), 0);
        total += (lens[i] - 8) / REC;
    }
    uint8_t *all = malloc(total * REC + 1), *p = all;
    for (int i = 0; i < n; i++) {
        memcpy(p, data[i] + 8, lens[i] - 8);
        p += lens[i] - 8;
        free(data[i]);
    }
    qsort(all, total, REC, by_record);
    *count = total;
    return all;
}

/* The distinct positions (46 bytes: board and side to move) of a file. */
static size_t distinct_positions(const char *path)
{
    size_t len;
    uint8_t *d = load(path, &len);
    size_t n = (len - 8) / REC, distinct = 0;
    qsort(d + 8, n, REC, by_position);
    for (size_t i = 0; i < n; i++)
        distinct += i == 0 || memcmp(d + 8 + i * REC, d + 8 + (i - 1) * REC, 46) != 0;
    free(d);
    return distinct;
}

static bool same_file(const char *a, const char *b)
{
    size_t la, lb;
    uint8_t *x = load(a, &la), *y = load(b, &lb);
    bool same = la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

/* The number after prefix in text, or -1. */
static int64_t number(const char *text, const char *prefix)
{
    const char *p = strstr(text, prefix);
    return p ? strtoll(p + strlen(prefix), NULL, 10) : -1;
}

Test(data_files, merge_is_a_seeded_shuffle_the_same_whatever_the_memory)
{
    Written a = write_games(at("a.data"), 1, 250, 60), b = write_games(at("b.data"), 2, 250, 60);
    cr_assert_gt(a.records + b.records, 20000, "enough records for --memory 1 to scatter them");
    cr_assert_eq(tune(NULL, "data merge %s %s --out %s", at("a.data"), at("b.data"), at("m1.data")), 0, "%s", err_text);
    cr_assert_eq(number(out_text, "Positions: "), a.records + b.records, "%s", out_text);

    /* a permutation of the inputs' records, not their order */
    size_t n_in, n_out;
    const char *ins[] = { at("a.data"), at("b.data") }, *outs[] = { at("m1.data") };
    uint8_t *in = sorted_records(ins, 2, &n_in), *out = sorted_records(outs, 1, &n_out);
    cr_assert_eq(n_in, n_out);
    cr_assert_eq(memcmp(in, out, n_in * REC), 0, "the merge is not a permutation of its inputs");
    free(in);
    free(out);
    cr_assert_eq(tune(NULL, "data merge %s %s --out %s --keep-order", at("a.data"), at("b.data"), at("cat.data")), 0);
    cr_assert_not(same_file(at("m1.data"), at("cat.data")), "not shuffled");

    /* reproducible from the seed; another seed, another order */
    cr_assert_eq(tune(NULL, "data merge %s %s --out %s", at("a.data"), at("b.data"), at("m2.data")), 0);
    cr_assert(same_file(at("m1.data"), at("m2.data")));
    cr_assert_eq(tune(NULL, "data merge %s %s --out %s --seed 2", at("a.data"), at("b.data"), at("m3.data")), 0);
    cr_assert_not(same_file(at("m1.data"), at("m3.data")));

    /* one megabyte: the records go through temporary buckets, and come out the same */
    cr_assert_eq(tune(NULL, "data merge %s %s --out %s --memory 1", at("a.data"), at("b.data"), at("m4.data")), 0,
                 "%s", err_text);
    cr_assert_gt(number(err_text, "; "), 1, "no temporary buckets: %s", err_text);
    cr_assert(same_file(at("m1.data"), at("m4.data")), "the output depends on --memory");
}

Test(data_files, keep_order_concatenates_and_a_folder_is_its_data_files)
{
    write_games(at("a.data"), 3, 40, 50);
    write_games(at("b.data"), 4, 40, 50);
    cr_assert_eq(tune(NULL, "data merge %s %s --out %s --keep-order", at("a.data"), at("b.data"), at("ab.data")), 0);
    size_t la, lb, lab;
    uint8_t *x = load(at("a.data"), &la), *y = load(at("b.data"), &lb), *z = load(at("ab.data"), &lab);
    cr_assert_eq(lab, la + lb - 8);
    cr_assert_eq(memcmp(z, x, la), 0);
    cr_assert_eq(memcmp(z + la, y + 8, lb - 8), 0);
    free(x);
    free(y);
    free(z);
    /* a folder stands for its *.data files in name order */
    mkdir(at("in"), 0755);
    rename(at("a.data"), at("in/1.data"));
    rename(at("b.data"), at("in/2.data"));
    cr_assert_eq(tune(NULL, "data merge %s --out %s --keep-order", at("in"), at("folder.data")), 0, "%s", err_text);
    cr_assert(same_file(at("ab.data"), at("folder.data")));
}

Test(data_files, dedup_keeps_the_first_copy_of_each_position)
{
    Written a = write_games(at("a.data"), 5, 300, 40);
    /* c: a's records with other scores */
    size_t len;
    uint8_t *d = load(at("a.data"), &len);
    for (size_t i = 8; i + REC <= len; i += REC)
        d[i + 46] ^= 0x5a;
    FILE *f = fopen(at("c.data"), "wb");
    fwrite(d, 1, len, f);
    fclose(f);
    free(d);
    size_t distinct = distinct_positions(at("a.data")), n_a = (len - 8) / REC;
    cr_assert_lt(distinct, (size_t)a.records, "random games from the start repeat their first positions");
    d = load(at("a.data"), &len);     /* a's records, sorted: to look a kept record up */
    qsort(d + 8, n_a, REC, by_record);

    for (int memory = 0; memory < 2; memory++) {
        const char *mem = memory ? "--memory 1" : "";
        cr_assert_eq(tune(NULL, "data merge %s %s --dedup --out %s %s", at("a.data"), at("c.data"), at("ac.data"), mem),
                     0, "%s", err_text);
        cr_assert_eq(number(out_text, "Positions: "), (int64_t)distinct, "%s", out_text);
        cr_assert_eq(number(err_text, "files, "), 2 * a.records - (int64_t)distinct, "%s", err_text);
        /* each kept record is a's (its score untouched): a came first */
        size_t n;
        uint8_t *m = load(at("ac.data"), &n);
        for (size_t i = 8; i + REC <= n; i += REC)
            cr_assert_not_null(bsearch(m + i, d + 8, n_a, REC, by_record), "a kept record is not the first copy");
        free(m);
        cr_assert_eq(distinct_positions(at("ac.data")), distinct, "a position repeated after --dedup");
        /* c first: c's copies are kept */
        cr_assert_eq(tune(NULL, "data merge %s %s --dedup --out %s %s", at("c.data"), at("a.data"), at("ca.data"), mem),
                     0);
        m = load(at("ca.data"), &n);
        cr_assert_eq((n - 8) / REC, distinct);
        for (size_t i = 8; i + REC <= n; i += REC)
            cr_assert_null(bsearch(m + i, d + 8, n_a, REC, by_record), "an a record kept after c's");
        free(m);
    }
    free(d);
}

Test(data_files, memory_stays_within_the_budget)
{
    Written w = write_games(at("big.data"), 7, 1500, 100);
    write_games(at("tiny.data"), 8, 1, 10);
    int64_t bytes = w.records * REC;
    cr_assert_gt(bytes, 7 << 20, "the data are far larger than the budget");
    /* the program alone: its libraries and a tiny file */
    long base, small, dedup, large;
    cr_assert_eq(tune(&base, "data stats %s --memory 1", at("tiny.data")), 0, "%s", err_text);
    cr_assert_eq(tune(&small, "data merge %s --out %s --memory 1", at("big.data"), at("m.data")), 0, "%s", err_text);
    int64_t peak = number(err_text, "at most ");
    cr_assert(peak > 0 && peak <= 1 << 20, "the account's peak %" PRId64 " is over 1 MB: %s", peak, err_text);
    cr_assert(strstr(err_text, "2 scatter levels"), "buckets scattered again: %s", err_text);
    cr_assert_eq(tune(&dedup, "data merge %s --dedup --out %s --memory 1", at("big.data"), at("d.data")), 0);
    cr_assert_leq(number(err_text, "at most "), 1 << 20, "%s", err_text);
    /* buckets of more distinct positions than fit were read again: each repeat counted once */
    cr_assert(strstr(err_text, "2 scatter levels"), "%s", err_text);
    cr_assert_eq(number(err_text, "file, "), w.records - (int64_t)distinct_positions(at("big.data")), "%s", err_text);
#ifndef __SANITIZE_ADDRESS__
    /* the kernel's count of the process: 1 MB of buffers, and a margin for
     * malloc's and stdio's own (not under AddressSanitizer, whose quarantine
     * keeps freed blocks resident: there the account's peak above is the check) */
    cr_assert_leq(small - base, 1024 + 768, "merge --memory 1 took %ld KB over the program's %ld KB", small - base, base);
    cr_assert_leq(dedup - base, 1024 + 768, "merge --dedup --memory 1 took %ld KB over %ld KB", dedup - base, base);
#endif
    /* and the measure sees memory: the same merge with room holds the data */
    cr_assert_eq(tune(&large, "data merge %s --out %s --memory 256", at("big.data"), at("l.data")), 0);
    cr_assert_geq(large - base, bytes / 1024, "with room, %ld KB over the program's", large - base);
    cr_assert(same_file(at("m.data"), at("l.data")));
    cr_assert_eq(tune(&small, "data stats %s --memory 1", at("big.data")), 0);
#ifndef __SANITIZE_ADDRESS__
    cr_assert_leq(small - base, 1024 + 768, "stats --memory 1 took %ld KB over %ld KB", small - base, base);
#endif
}

Test(data_files, stats_counts_positions_games_results_and_duplicates)
{
    Written a = write_games(at("a.data"), 9, 120, 70);
    size_t distinct = distinct_positions(at("a.data"));
    cr_assert_eq(tune(NULL, "data stats %s %s --memory 1", at("a.data"), at("a.data")), 0, "%s", err_text);
    cr_assert_eq(number(out_text, "Positions: "), 2 * a.records, "%s", out_text);
    /* every game starts at ply 0 and rises: the games are counted exactly, in each file */
    cr_assert_eq(number(out_text, "Games: "), 2 * a.games, "%s", out_text);
    char want[128];
    snprintf(want, sizeof want, "W/D/L: %" PRId64 "/%" PRId64 "/%" PRId64, 2 * a.results[2], 2 * a.results[1],
             2 * a.results[0]);
    cr_assert(strstr(out_text, want), "%s not in %s", want, out_text);
    cr_assert_eq(number(out_text, "Duplicate positions: "), 2 * a.records - (int64_t)distinct, "%s", out_text);
    cr_assert_eq(number(out_text, "Distinct positions: "), (int64_t)distinct, "%s", out_text);
    cr_assert(strstr(out_text, "Scores (side to move, cp):") && strstr(out_text, "30-32 pieces"), "%s", out_text);
    /* shuffled, the games are not known */
    cr_assert_eq(tune(NULL, "data merge %s --out %s", at("a.data"), at("s.data")), 0);
    cr_assert_eq(tune(NULL, "data stats %s", at("s.data")), 0);
    cr_assert(strstr(out_text, "Games: unknown"), "%s", out_text);
}

/* Expects status 2 with a message that says what (and names the file), and no output file. */
static void refused(const char *what, const char *says, const char *cmd)
{
    int st = tune(NULL, "%s", cmd);
    cr_assert_eq(st, 2, "%s: exit status %d, expected 2 (%s)", what, st, err_text);
    cr_assert(strstr(err_text, "error: ") && strstr(err_text, says), "%s: '%s' not in: %s", what, says, err_text);
}

Test(data_files, bad_input_fails_naming_it_and_leaves_no_output)
{
    write_games(at("good.data"), 11, 30, 40);
    size_t len;
    uint8_t *d = load(at("good.data"), &len);
    FILE *f = fopen(at("trunc.data"), "wb");
    fwrite(d, 1, len - 20, f);
    fclose(f);
    f = fopen(at("magic.data"), "wb");
    fwrite("XQFDATA2", 1, 8, f);
    fwrite(d + 8, 1, len - 8, f);
    fclose(f);
    d[8 + 5 * REC + 3] = 0x88;       /* record 5: a nibble 8, no piece */
    f = fopen(at("broken.data"), "wb");
    fwrite(d, 1, len, f);
    fclose(f);
    free(d);
    mkdir(at("empty"), 0755);
    /* an earlier output stays as it was */
    f = fopen(at("out.data"), "wb");
    fputs("earlier", f);
    fclose(f);

    char cmd[1024];
    struct { const char *what, *file, *says; } cases[] = {
        { "truncated", "trunc.data", "is truncated" },
        { "wrong magic", "magic.data", "no XQFDATA1 header" },
        { "missing", "nothing.data", "cannot read" },
        { "no position", "broken.data", "record 5 " },
        { "empty folder", "empty", "no *.data file" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        for (int stats = 0; stats < 2; stats++) {
            if (stats)
                snprintf(cmd, sizeof cmd, "data stats %s %s", at("good.data"), at(cases[i].file));
            else
                snprintf(cmd, sizeof cmd, "data merge %s %s --out %s --memory 1", at("good.data"), at(cases[i].file),
                         at("out.data"));
            refused(cases[i].what, cases[i].says, cmd);
            if (strcmp(cases[i].file, "empty") != 0)
                cr_assert(strstr(err_text, cases[i].file), "%s: the file is not named: %s", cases[i].what, err_text);
        }
        size_t n;
        char *kept = (char *)load(at("out.data"), &n);
        cr_assert(n == 7 && memcmp(kept, "earlier", 7) == 0, "%s: the earlier output was touched", cases[i].what);
        free(kept);
    }
    /* nothing left behind in the output's folder (no temporary file, no bucket) */
    cr_assert_eq(system(NULL), 1);
    snprintf(cmd, sizeof cmd, "ls -A '%s' | grep -v -x -e good.data -e trunc.data -e magic.data -e broken.data "
                              "-e empty -e out.data", dir);
    FILE *ls = popen(cmd, "r");
    char left[256] = "";
    size_t got = fread(left, 1, sizeof left - 1, ls);
    left[got] = '\0';
    pclose(ls);
    cr_assert_str_empty(left, "left behind: %s", left);
    refused("no --out", "--out FILE is required", "data merge /dev/null");
    snprintf(cmd, sizeof cmd, "data merge %s --out /nonexistent/x.data", at("good.data"));
    refused("no folder", "does not exist", cmd);
    snprintf(cmd, sizeof cmd, "data merge %s --out %s --dedup --keep-order", at("good.data"), at("x.data"));
    refused("dedup in order", "--dedup", cmd);
    snprintf(cmd, sizeof cmd, "data stats 12 --memory 5");
    refused("a run's stats take no --memory", "--memory", cmd);
}

/*
 * data play (no cluster): a valid data file that data stats reads, the
 * same bytes for the same seed whatever the threads, another seed other
 * games; bad input refused with status 2 and no file left.
 */
Test(data_files, play_writes_a_seeded_data_file_the_same_whatever_the_threads, .timeout = 240)
{
    const char *play = "data play --games 6 --nodes 300 --random-plies 4 --net none --quiet";
    cr_assert_eq(tune(NULL, "%s --seed 7 --threads 1 --out %s", play, at("one.data")), 0, "%s", err_text);
    cr_assert(strstr(err_text, "positions of 6 games written to"), "%s", err_text);
    cr_assert_eq(tune(NULL, "%s --seed 7 --threads 3 --out %s", play, at("three.data")), 0, "%s", err_text);
    cr_assert_eq(tune(NULL, "%s --seed 8 --threads 2 --out %s", play, at("other.data")), 0, "%s", err_text);
    size_t n1, n3, n8;
    uint8_t *d1 = load(at("one.data"), &n1), *d3 = load(at("three.data"), &n3), *d8 = load(at("other.data"), &n8);
    cr_assert_gt(n1, DATA_HEADER_BYTES + 6 * 10 * REC, "%zu bytes: too few positions", n1);
    cr_assert_eq((n1 - DATA_HEADER_BYTES) % REC, 0);
    cr_assert(n1 == n3 && memcmp(d1, d3, n1) == 0, "the same seed gave another file with 3 threads");
    cr_assert(n1 != n8 || memcmp(d1, d8, n1) != 0, "another seed gave the same file");
    /* every record a position (data_unpack), kept by the filter: not in check, no capture played, |score| <= 3000 */
    for (size_t at_ = DATA_HEADER_BYTES; at_ < n1; at_ += REC) {
        DataPosition pos;
        cr_assert_eq(data_unpack(d1 + at_, &pos), 0, "record %zu is no position", (at_ - DATA_HEADER_BYTES) / REC);
        cr_assert(!board_in_check(&pos.board) && !pos.board.squares[move_to(pos.move)] && abs(pos.score) <= 3000);
    }
    cr_assert_eq(tune(NULL, "data stats %s", at("one.data")), 0, "%s", err_text);
    char line[64];
    snprintf(line, sizeof line, "Positions: %zu", (n1 - DATA_HEADER_BYTES) / REC);
    cr_assert(strstr(out_text, line), "%s", out_text);
    cr_assert(strstr(out_text, "Games: 6 "), "%s", out_text);
    free(d1);
    free(d3);
    free(d8);

    refused("no --nodes", "are required", "data play --games 2 --out /tmp/x.data");
    refused("no --out", "are required", "data play --games 2 --nodes 10");
    refused("no games", "--games", "data play --games 0 --nodes 10 --out /tmp/x.data");
    refused("an argument", "unexpected argument", "data play x --games 2 --nodes 10 --out /tmp/x.data");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "data play --games 2 --nodes 10 --net %s --out %s", at("one.data"), at("x.data"));
    refused("not a net", "--net", cmd);
    snprintf(cmd, sizeof cmd, "data play --games 2 --nodes 10 --book %s --out %s", at("nothere.book"), at("x.data"));
    refused("no book", "--book", cmd);
    snprintf(cmd, sizeof cmd, "data play --games 2 --nodes 10 --out %s/nofolder/x.data", dir);
    refused("nowhere to write", "cannot write", cmd);
    cr_assert_neq(access(at("x.data"), F_OK), 0, "a refused play left a file");
    cr_assert_neq(access(at("x.data.part"), F_OK), 0, "a refused play left a partial file");
}

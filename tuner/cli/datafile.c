/*
 * datafile.c - xqf-tune data merge and data stats FILE...: training data
 * files (XQFDATA1, worker/game/datagen.h) of any size, in memory bounded by
 * --memory.
 *
 * merge writes its inputs' positions into one file in a random order
 * drawn from the seed, optionally without repeated positions; stats sums
 * files up, duplicates counted exactly.  Both rest on one external sort by
 * random keys (Knuth, TAOCP vol. 2, 3.4.2: a uniformly random permutation
 * is the order of independent random keys):
 *
 *   - every record gets a 64-bit key: a hash of (seed, its place in the
 *     input), or with --dedup a hash of (seed, its position: board and
 *     side to move, bytes 0-45), so that the copies of a position share a
 *     key and meet;
 *   - records are scattered by the key's range into K temporary buckets
 *     (distribution sort, as an external radix pass), each bucket then
 *     loaded, sorted by key and written out; a bucket that does not fit is
 *     scattered again over its own range, so skew or a small budget never
 *     breaks the bound;
 *   - with --dedup, a bucket is loaded through an exact set (key, then the
 *     46 bytes compared), keeping the first copy in input order.
 *
 * The output is the records in key order whatever the budget, the number
 * of buckets or the temporary folder: the same inputs and seed give the
 * same bytes with --memory 1 or 4096.  Memory: every buffer comes from one
 * account (Mem) that refuses to pass the budget; the peak is printed.
 */
#define _GNU_SOURCE /* mkstemp, fsync, qsort_r */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "datagen.h"

enum {
    REC = DATA_RECORD_BYTES,         /* 54 */
    KEYED = 8 + DATA_RECORD_BYTES,   /* a record in a temporary bucket: its key, then its bytes */
    POSITION = 46,                   /* a position's bytes: the board and the side to move */
    IO_BUFFER = 1213 * KEYED,        /* 75,206 bytes: 1,213 keyed or 1,392 plain records */
    BUCKETS_MAX = 128,               /* temporary files per scatter (and each an IO_BUFFER to write through:
                                        a bucket grows in large sequential writes, not a record at a time) */
    DEPTH_MAX = 4,                   /* scatters within scatters (128^4 buckets) */
};

/* ---- the memory account ---------------------------------------------------- */

typedef struct {
    size_t budget, used, peak;
} Mem;

/* size bytes from the account, or NULL (over the budget, or out of memory). */
static void *mem_get(Mem *m, size_t size)
{
    if (size > m->budget - m->used)
        return NULL;
    void *p = malloc(size ? size : 1);
    if (!p)
        return NULL;
    m->used += size;
    if (m->used > m->peak)
        m->peak = m->used;
    return p;
}

static void mem_put(Mem *m, void *p, size_t size)
{
    if (!p)
        return;
    free(p);
    m->used -= size;
}

/* ---- inputs ------------------------------------------------------------------ */

typedef struct {
    char *path;
    int64_t records;
} DataInput;

typedef struct {
    DataInput *files;
    int count, cap;
    int64_t records;
} DataInputs;

static void inputs_free(DataInputs *in)
{
    for (int i = 0; i < in->count; i++)
        free(in->files[i].path);
    free(in->files);
    memset(in, 0, sizeof *in);
}

/* Checks one data file (readable, XQFDATA1, whole records) and adds it. Exit status. */
static int input_add(DataInputs *in, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return cli_fail(CLI_USAGE, "'%s': cannot read: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return cli_fail(CLI_USAGE, "'%s' is not a file", path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cli_fail(CLI_USAGE, "'%s': cannot read: %s", path, strerror(errno));
    char head[DATA_HEADER_BYTES];
    ssize_t got = read(fd, head, sizeof head);
    int err = errno;
    close(fd);
    if (got < 0)
        return cli_fail(CLI_USAGE, "'%s': cannot read: %s", path, strerror(err));
    if (got != (ssize_t)sizeof head || memcmp(head, DATA_MAGIC, DATA_HEADER_BYTES) != 0)
        return cli_fail(CLI_USAGE, "'%s' is not a training data file (no %s header)", path, DATA_MAGIC);
    int64_t body = (int64_t)st.st_size - DATA_HEADER_BYTES;
    if (body % REC != 0)
        return cli_fail(CLI_USAGE, "'%s' is truncated: %" PRId64 " bytes after the header are not whole %d-byte "
                        "records (%" PRId64 " over)", path, body, REC, body % REC);
    if (in->count == in->cap) {
        int cap = in->cap ? 2 * in->cap : 16;
        DataInput *more = realloc(in->files, (size_t)cap * sizeof *more);
        if (!more)
            return cli_fail(CLI_FAIL, "out of memory");
        in->files = more;
        in->cap = cap;
    }
    if (!(in->files[in->count].path = strdup(path)))
        return cli_fail(CLI_FAIL, "out of memory");
    in->files[in->count++].records = body / REC;
    in->records += body / REC;
    return CLI_OK;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* A folder's *.data files in name order (as the trainer reads a folder). Exit status. */
static int input_folder(DataInputs *in, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return cli_fail(CLI_USAGE, "'%s': cannot read: %s", dir, strerror(errno));
    char **names = NULL;
    int n = 0, cap = 0, status = CLI_OK;
    for (struct dirent *e; status == CLI_OK && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len <= 5 || strcmp(e->d_name + len - 5, ".data") != 0)
            continue;
        char **more = n == cap ? realloc(names, (size_t)(cap = cap ? 2 * cap : 64) * sizeof *names) : names;
        size_t size = strlen(dir) + len + 2;
        char *path = more ? malloc(size) : NULL;
        if (!path) {
            free(more ? more : names);
            names = NULL;
            n = 0;
            status = cli_fail(CLI_FAIL, "out of memory");
            break;
        }
        names = more;
        snprintf(path, size, "%s/%s", dir, e->d_name);
        names[n++] = path;
    }
    closedir(d);
    if (status == CLI_OK && n == 0)
        status = cli_fail(CLI_USAGE, "'%s' holds no *.data file", dir);
    if (n)
        qsort(names, (size_t)n, sizeof *names, by_name);
    for (int i = 0; i < n; i++) {
        if (status == CLI_OK)
            status = input_add(in, names[i]);
        free(names[i]);
    }
    free(names);
    return status;
}

/* The FILE... arguments (a folder: its *.data files), all checked before any work. Exit status. */
static int inputs_open(const Opts *o, DataInputs *in)
{
    memset(in, 0, sizeof *in);
    int status = o->npositional ? CLI_OK : cli_fail(CLI_USAGE, "give one or more data files (see xqf-tune data --help)");
    for (int i = 0; status == CLI_OK && i < o->npositional; i++) {
        struct stat st;
        const char *path = o->positional[i];
        status = stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? input_folder(in, path) : input_add(in, path);
    }
    if (status != CLI_OK)
        inputs_free(in);
    return status;
}

/* The records of the inputs one by one, each checked by the format's reader (data_unpack). */
typedef struct {
    const DataInputs *in;
    int file, fd;
    uint8_t *buf;                    /* IO_BUFFER bytes of the account */
    size_t len, pos;
    int64_t in_file;                 /* records read of the current file */
    int64_t index;                   /* records read in all */
} Reader;

/* The next record into *rec (pointing into the buffer): 1, 0 at the end, or an exit status's negation. */
static int reader_next(Reader *r, const uint8_t **rec)
{
    while (r->pos + REC > r->len) {
        const DataInput *f = r->file < r->in->count ? &r->in->files[r->file] : NULL;
        if (r->fd >= 0 && r->in_file == f->records) {
            close(r->fd);
            r->fd = -1;
            f = ++r->file < r->in->count ? &r->in->files[r->file] : NULL;
        }
        if (!f)
            return 0;
        if (r->fd < 0) {
            r->in_file = 0;
            if ((r->fd = open(f->path, O_RDONLY | O_CLOEXEC)) < 0 ||
                lseek(r->fd, DATA_HEADER_BYTES, SEEK_SET) != DATA_HEADER_BYTES)
                return -cli_fail(CLI_USAGE, "'%s': cannot read: %s", f->path, strerror(errno));
            r->len = r->pos = 0;
            continue;
        }
        size_t want = (size_t)(f->records - r->in_file) * REC, room = IO_BUFFER / REC * REC;
        ssize_t got;
        do
            got = read(r->fd, r->buf, want < room ? want : room);
        while (got < 0 && errno == EINTR);
        if (got < 0)
            return -cli_fail(CLI_USAGE, "'%s': cannot read: %s", f->path, strerror(errno));
        if (got == 0 || got % REC != 0) {
            /* a short read can end mid-record: keep reading to the record's end */
            size_t have = (size_t)(got > 0 ? got : 0);
            while (got > 0 && have % REC != 0) {
                got = read(r->fd, r->buf + have, REC - have % REC);
                have += got > 0 ? (size_t)got : 0;
            }
            if (have == 0 || have % REC != 0)
                return -cli_fail(CLI_USAGE, "'%s' was truncated while it was read (at record %" PRId64 ")", f->path,
                                 r->in_file);
            got = (ssize_t)have;
        }
        r->len = (size_t)got;
        r->pos = 0;
    }
    *rec = r->buf + r->pos;
    DataPosition p;
    if (data_unpack(*rec, &p) != 0)
        return -cli_fail(CLI_USAGE, "'%s': record %" PRId64 " (byte %" PRId64 ") is not a position (a piece, side "
                         "or result out of range, or a placement the rules forbid)",
                         r->in->files[r->file].path, r->in_file, DATA_HEADER_BYTES + r->in_file * REC);
    r->pos += REC;
    r->in_file++;
    r->index++;
    return 1;
}

/* ---- keys -------------------------------------------------------------------- */

/* splitmix64's finaliser (Steele, Lea and Flood 2014): a bijection of 64 bits that mixes them all. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* A record's position (board and side to move) hashed with the seed, word by little-endian word. */
static uint64_t position_key(uint64_t seed, const uint8_t *rec)
{
    uint64_t h = mix64(seed ^ UINT64_C(0x9E3779B97F4A7C15));
    for (int i = 0; i < POSITION; i += 8) {
        uint64_t w = 0;
        for (int j = 0; j < 8 && i + j < POSITION; j++)
            w |= (uint64_t)rec[i + j] << (8 * j);
        h = mix64(h ^ w) + UINT64_C(0x9E3779B97F4A7C15);
    }
    return mix64(h);
}

/* ---- the external sort by random keys ---------------------------------------------- */

typedef struct Sorter Sorter;
struct Sorter {
    Mem *mem;
    const char *tmpdir;
    uint64_t seed;
    bool dedup;
    int (*emit)(void *ctx, const uint8_t *rec);   /* records in key order; an exit status (CLI_OK goes on) */
    void *ctx;
    void (*observe)(void *ctx, const uint8_t *rec, int file);  /* each input record as it is read (or NULL) */
    int64_t emitted, dropped;
    int buckets, depth;              /* temporary files made, the deepest scatter */
    uint8_t *io;                     /* IO_BUFFER bytes: reading a bucket back */
};

/* Where keyed records come from: the inputs (keys drawn here) or a temporary bucket. */
typedef struct {
    Reader *reader;                  /* the inputs, or NULL */
    int fd;                          /* a bucket (its records keyed) */
    int64_t count;                   /* records it holds */
    uint64_t lo;                     /* its keys lie in [lo, lo + width) */
    unsigned __int128 width;
    size_t len, pos;
} Source;

/* Rewinds a bucket. 0 or -1. */
static int source_rewind(Source *src)
{
    src->len = src->pos = 0;
    return lseek(src->fd, 0, SEEK_SET) == 0 ? 0 : -1;
}

/* The next keyed record: 1, 0 at the end, or an exit status's negation. */
static int source_next(Sorter *s, Source *src, uint64_t *key, const uint8_t **rec)
{
    if (src->reader) {
        int64_t index = src->reader->index;
        int got = reader_next(src->reader, rec);
        if (got == 1 && s->observe)
            s->observe(s->ctx, *rec, src->reader->file);
        if (got == 1)
            *key = s->dedup ? position_key(s->seed, *rec) : mix64(mix64(s->seed) ^ mix64((uint64_t)index));
        return got;
    }
    if (src->pos == src->len) {
        ssize_t got;
        do
            got = read(src->fd, s->io, IO_BUFFER);
        while (got < 0 && errno == EINTR);
        if (got == 0)
            return 0;
        if (got < 0 || got % KEYED != 0)
            return -cli_fail(CLI_FAIL, "cannot read a temporary file back: %s", got < 0 ? strerror(errno) : "short");
        src->len = (size_t)got;
        src->pos = 0;
    }
    memcpy(key, s->io + src->pos, 8);
    *rec = s->io + src->pos + 8;
    src->pos += KEYED;
    return 1;
}

/* Loaded records: their bytes, and (key, place) to sort. */
typedef struct {
    uint64_t key;
    uint32_t at;
} Entry;

/* The records a loaded bucket's memory holds, for a budget: each one's bytes, entry, and with dedup 2 set slots. */
static int64_t bucket_capacity(const Sorter *s)
{
    size_t per = REC + sizeof(Entry) + (s->dedup ? 2 * sizeof(uint32_t) : 0);
    size_t free_bytes = s->mem->budget > s->mem->used ? s->mem->budget - s->mem->used : 0;
    int64_t cap = (int64_t)(free_bytes / per);
    return cap < INT32_MAX / 2 ? cap : INT32_MAX / 2;
}

/*
 * Key order; the same key: (with dedup, recs the bucket's records) the
 * position's bytes, then the place in the input.
 */
static int entry_order(const void *a, const void *b, void *recs)
{
    const Entry *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (recs) {
        int c = memcmp((const uint8_t *)recs + (size_t)x->at * REC, (const uint8_t *)recs + (size_t)y->at * REC,
                       POSITION);
        if (c)
            return c;
    }
    return x->at < y->at ? -1 : x->at > y->at;
}

static int sort_source(Sorter *s, Source *src, int depth);

/*
 * Loads src (n records at most cap) into memory, sorts and emits it.
 * With dedup, a record whose position is in the set already is dropped
 * (the first copy stays: records come in input order).  Returns CLI_OK,
 * an exit status, or 1 when (with dedup) its distinct positions are more
 * than cap: nothing emitted, src to scatter.
 */
static int sort_in_memory(Sorter *s, Source *src, int64_t n, int64_t cap)
{
    int64_t want = n < cap ? n : cap;
    size_t rec_bytes = (size_t)want * REC, entry_bytes = (size_t)want * sizeof(Entry);
    size_t slots = s->dedup ? (size_t)(2 * want) : 0, set_bytes = slots * sizeof(uint32_t);
    uint8_t *recs = mem_get(s->mem, rec_bytes);
    Entry *entries = recs ? mem_get(s->mem, entry_bytes) : NULL;
    uint32_t *set = entries && slots ? mem_get(s->mem, set_bytes) : NULL;
    int status = recs && entries && (set || !slots) ? CLI_OK : cli_fail(CLI_FAIL, "out of memory (a bucket of %"
                                                                         PRId64 " records)", want);
    if (set)
        memset(set, 0, set_bytes);
    int64_t held = 0, dropped = 0;
    uint64_t key;
    const uint8_t *rec;
    int got = 0;
    while (status == CLI_OK && (got = source_next(s, src, &key, &rec)) == 1) {
        if (set) {
            /* open addressing over the key's mix (the keys of a bucket share their top bits) */
            size_t j = (size_t)(((unsigned __int128)mix64(key) * slots) >> 64);
            bool seen = false;
            for (; set[j]; j = j + 1 == slots ? 0 : j + 1) {
                const Entry *e = &entries[set[j] - 1];
                if (e->key == key && memcmp(recs + (size_t)e->at * REC, rec, POSITION) == 0) {
                    seen = true;
                    break;
                }
            }
            if (seen) {
                dropped++;
                continue;
            }
            if (held == cap) {
                status = 1;          /* too many distinct positions: scatter this bucket */
                break;
            }
            set[j] = (uint32_t)held + 1;
        }
        memcpy(recs + (size_t)held * REC, rec, REC);
        entries[held] = (Entry){ key, (uint32_t)held };
        held++;
    }
    if (status == CLI_OK && got < 0)
        status = -got;
    if (status == CLI_OK) {
        s->dropped += dropped;       /* counted once: a bucket that did not fit is read again */
        qsort_r(entries, (size_t)held, sizeof *entries, entry_order, s->dedup ? recs : NULL);
        for (int64_t i = 0; status == CLI_OK && i < held; i++) {
            status = s->emit(s->ctx, recs + (size_t)entries[i].at * REC);
            s->emitted++;
        }
    }
    mem_put(s->mem, set, set_bytes);
    mem_put(s->mem, entries, entry_bytes);
    mem_put(s->mem, recs, rec_bytes);
    return status;
}

/* A temporary file in the sorter's folder, unlinked at once (nothing is left behind, whatever happens): fd or -1. */
static int temp_file(const Sorter *s)
{
    char path[CLI_PATH_MAX];
    snprintf(path, sizeof path, "%s/.xqf-data-XXXXXX", s->tmpdir);
    int fd = mkstemp(path);
    if (fd >= 0)
        unlink(path);
    return fd;
}

/* Writes len bytes. 0 or -1. */
static int write_all(int fd, const uint8_t *p, size_t len)
{
    while (len) {
        ssize_t put = write(fd, p, len);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0)
            return -1;
        p += put;
        len -= (size_t)put;
    }
    return 0;
}

/*
 * Scatters src's n records over k buckets by their key's place in src's
 * range (the bucket of key: (key - lo) * k / width), then sorts each.
 * Exit status.
 */
static int scatter(Sorter *s, Source *src, int64_t n, int k, int depth)
{
    if (depth >= DEPTH_MAX)
        return cli_fail(CLI_FAIL, "%" PRId64 " records do not split into buckets of the budget within %d scatters "
                        "(give more --memory)", n, DEPTH_MAX);
    size_t each = IO_BUFFER;
    Source *sub = calloc((size_t)k, sizeof *sub);
    size_t *fill = calloc((size_t)k, sizeof *fill);
    uint8_t *buf = sub && fill ? mem_get(s->mem, each * (size_t)k) : NULL;
    int status = buf ? CLI_OK : cli_fail(CLI_FAIL, "out of memory (%d buckets)", k);
    for (int i = 0; i < k; i++)
        sub[i].fd = -1;
    for (int i = 0; status == CLI_OK && i < k; i++) {
        if ((sub[i].fd = temp_file(s)) < 0)
            status = cli_fail(CLI_FAIL, "cannot make a temporary file in '%s': %s (--tmp DIR)", s->tmpdir,
                              strerror(errno));
        /* bucket i holds [lo + i * width / k, lo + (i + 1) * width / k) */
        unsigned __int128 from = src->width * (unsigned)i / (unsigned)k, to = src->width * (unsigned)(i + 1) / (unsigned)k;
        sub[i].lo = src->lo + (uint64_t)from;
        sub[i].width = to - from;
    }
    s->buckets += k;
    if (depth + 1 > s->depth)
        s->depth = depth + 1;
    uint64_t key;
    const uint8_t *rec;
    int got = 0;
    while (status == CLI_OK && (got = source_next(s, src, &key, &rec)) == 1) {
        int i = (int)((unsigned __int128)(key - src->lo) * (unsigned)k / src->width);
        uint8_t *slot = buf + (size_t)i * each + fill[i];
        memcpy(slot, &key, 8);
        memcpy(slot + 8, rec, REC);
        sub[i].count++;
        if ((fill[i] += KEYED) == each) {
            if (write_all(sub[i].fd, buf + (size_t)i * each, each) != 0)
                status = cli_fail(CLI_FAIL, "cannot write a temporary file in '%s': %s", s->tmpdir, strerror(errno));
            fill[i] = 0;
        }
    }
    if (status == CLI_OK && got < 0)
        status = -got;
    for (int i = 0; status == CLI_OK && i < k; i++)
        if (fill[i] && write_all(sub[i].fd, buf + (size_t)i * each, fill[i]) != 0)
            status = cli_fail(CLI_FAIL, "cannot write a temporary file in '%s': %s", s->tmpdir, strerror(errno));
    mem_put(s->mem, buf, each * (size_t)k);
    for (int i = 0; status == CLI_OK && i < k; i++) {
        if (source_rewind(&sub[i]) != 0)
            status = cli_fail(CLI_FAIL, "cannot read a temporary file back: %s", strerror(errno));
        else
            status = sort_source(s, &sub[i], depth + 1);
        close(sub[i].fd);
        sub[i].fd = -1;
    }
    for (int i = 0; sub && i < k; i++)
        if (sub[i].fd >= 0)
            close(sub[i].fd);
    free(sub);
    free(fill);
    return status;
}

/*
 * Sorts and emits src: in memory when it fits, else scattered first.  With
 * dedup a bucket is tried in memory whatever its count (its distinct
 * positions may fit) and scattered only when they do not; the inputs,
 * read once, are scattered at once when their count does not fit.  Exit
 * status.
 */
static int sort_source(Sorter *s, Source *src, int depth)
{
    int64_t n = src->reader ? src->reader->in->records : src->count, cap = bucket_capacity(s);
    if (n == 0)
        return CLI_OK;
    if (n <= cap || (s->dedup && !src->reader && cap > 0)) {
        int status = sort_in_memory(s, src, n, cap);
        if (status != 1)
            return status;
        if (source_rewind(src) != 0)
            return cli_fail(CLI_FAIL, "cannot read a temporary file back: %s", strerror(errno));
    }
    /* buckets half full on average (their sizes vary), as many as the budget has write buffers for */
    size_t room = s->mem->budget > s->mem->used ? s->mem->budget - s->mem->used : 0;
    int64_t k = cap > 0 ? (2 * n + cap - 1) / cap : BUCKETS_MAX, most = (int64_t)(room / IO_BUFFER);
    if (k > most)
        k = most;
    if (k > BUCKETS_MAX)
        k = BUCKETS_MAX;
    if (k < 2)
        return cli_fail(CLI_FAIL, "--memory is too small to scatter %" PRId64 " records", n);
    return scatter(s, src, n, (int)k, depth);
}

/* Sorts the inputs' records by their random keys into s->emit. Exit status. */
static int sort_inputs(Sorter *s, Reader *r)
{
    Source src = { .reader = r, .fd = -1, .lo = 0, .width = (unsigned __int128)1 << 64 };
    if (!(s->io = mem_get(s->mem, IO_BUFFER)))
        return cli_fail(CLI_FAIL, "--memory is too small");
    int status = sort_source(s, &src, 0);
    mem_put(s->mem, s->io, IO_BUFFER);
    s->io = NULL;
    return status;
}

/* Room for the temporary files the scatters keep open at once. */
static void raise_file_limit(void)
{
    struct rlimit rl;
    rlim_t want = BUCKETS_MAX * DEPTH_MAX + 64;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
        rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* ---- the options both share ----------------------------------------------------- */

/* The temporary folder: --tmp, else the output's folder (fallback), else $TMPDIR or /tmp. Exit status. */
static int tmp_folder(const Opts *o, const char *fallback, char *out, size_t size)
{
    const char *dir = opts_text(o, "--tmp"), *env = getenv("TMPDIR");
    if (!dir)
        dir = fallback ? fallback : env && *env ? env : "/tmp";
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0)
        return cli_fail(CLI_USAGE, "--tmp: '%s' is not a folder this program may write in", dir);
    snprintf(out, size, "%s", dir);
    return CLI_OK;
}

static void print_memory(const Mem *m, const Sorter *s)
{
    fprintf(stderr, "%s: memory: at most %zu bytes of buffers held (--memory %zu MB); %d temporary bucket%s, %d "
                    "scatter level%s\n", CLI_PROGRAM, m->peak, m->budget >> 20, s->buckets, s->buckets == 1 ? "" : "s",
            s->depth, s->depth == 1 ? "" : "s");
}

/* ---- data merge ------------------------------------------------------------------- */

/* The output being written: a temporary file next to it, renamed over it when complete. */
static char pending[CLI_PATH_MAX];

static void drop_pending(int sig)
{
    if (pending[0])
        unlink(pending);
    signal(sig, SIG_DFL);
    raise(sig);
}

typedef struct {
    FILE *out;
    int64_t written;
} Writer;

static int write_record(void *ctx, const uint8_t *rec)
{
    Writer *w = ctx;
    w->written++;
    return fwrite(rec, 1, REC, w->out) == REC ? CLI_OK : cli_fail(CLI_FAIL, "cannot write: %s", strerror(errno));
}

int cli_data_merge(const Opts *o)
{
    const char *path = opts_text(o, "--out");
    if (!path || !*path)
        return cli_fail(CLI_USAGE, "data merge: --out FILE is required");
    bool keep_order = opts_given(o, "--keep-order"), dedup = opts_given(o, "--dedup");
    if (keep_order && dedup)
        return cli_fail(CLI_USAGE, "data merge: --dedup finds repeated positions by sorting on them: "
                        "its output is shuffled (leave --keep-order out)");
    if (keep_order && opts_given(o, "--seed"))
        return cli_fail(CLI_USAGE, "data merge: --seed is the shuffle's: not with --keep-order");
    char dir[CLI_PATH_MAX], tmp[CLI_PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        slash[1] = '\0';
    else
        *slash = '\0';
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return cli_fail(CLI_USAGE, "--out: the folder of '%s' does not exist", path);
    DataInputs in;
    int status = inputs_open(o, &in);
    if (status == CLI_OK)
        status = tmp_folder(o, dir, tmp, sizeof tmp);
    if (status != CLI_OK) {
        inputs_free(&in);
        return status;
    }
    raise_file_limit();
    Mem mem = { .budget = (size_t)opts_int(o, "--memory") << 20 };
    uint8_t *obuf = mem_get(&mem, IO_BUFFER), *rbuf = mem_get(&mem, IO_BUFFER);
    if (!obuf || !rbuf) {
        inputs_free(&in);
        return cli_fail(CLI_FAIL, "--memory is too small");
    }
    snprintf(pending, sizeof pending, "%s.tmp-XXXXXX", path);
    signal(SIGINT, drop_pending);
    signal(SIGTERM, drop_pending);
    signal(SIGHUP, drop_pending);
    int fd = mkstemp(pending);
    Writer w = { .out = fd >= 0 ? fdopen(fd, "wb") : NULL };
    if (!w.out) {
        status = cli_fail(CLI_FAIL, "--out: cannot write next to '%s': %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
    }
    if (status == CLI_OK) {
        fchmod(fd, 0644);
        setvbuf(w.out, (char *)obuf, _IOFBF, IO_BUFFER);
        if (data_write_header(w.out) != 0)
            status = cli_fail(CLI_FAIL, "cannot write '%s': %s", pending, strerror(errno));
    }
    Reader r = { .in = &in, .fd = -1, .buf = rbuf };
    Sorter s = { .mem = &mem, .tmpdir = tmp, .seed = (uint64_t)opts_int(o, "--seed"), .dedup = dedup,
                 .emit = write_record, .ctx = &w };
    if (status == CLI_OK && keep_order) {
        const uint8_t *rec;
        int got;
        while (status == CLI_OK && (got = reader_next(&r, &rec)) == 1)
            status = write_record(&w, rec);
        if (status == CLI_OK && got < 0)
            status = -got;
    } else if (status == CLI_OK)
        status = sort_inputs(&s, &r);
    if (r.fd >= 0)
        close(r.fd);
    if (w.out) {
        if (status == CLI_OK && (fflush(w.out) != 0 || fsync(fileno(w.out)) != 0))
            status = cli_fail(CLI_FAIL, "cannot write '%s': %s", pending, strerror(errno));
        if (fclose(w.out) != 0 && status == CLI_OK)
            status = cli_fail(CLI_FAIL, "cannot write '%s': %s", pending, strerror(errno));
    }
    if (status == CLI_OK && rename(pending, path) != 0)
        status = cli_fail(CLI_FAIL, "--out: cannot rename '%s' to '%s': %s", pending, path, strerror(errno));
    if (status != CLI_OK && fd >= 0)
        unlink(pending);
    pending[0] = '\0';
    if (status == CLI_OK) {
        fprintf(stderr, "%s: %" PRId64 " positions of %d file%s", CLI_PROGRAM, in.records, in.count,
                in.count == 1 ? "" : "s");
        if (dedup)
            fprintf(stderr, ", %" PRId64 " repeated positions dropped (the first copy kept)", s.dropped);
        fprintf(stderr, ", %s: %" PRId64 " written to %s\n", keep_order ? "in their order" : "shuffled", w.written,
                path);
        if (!keep_order)
            print_memory(&mem, &s);
        printf("Positions: %" PRId64 "\n", w.written);
    }
    mem_put(&mem, rbuf, IO_BUFFER);
    mem_put(&mem, obuf, IO_BUFFER);
    inputs_free(&in);
    return status;
}

/* ---- data stats FILE... ------------------------------------------------------------- */

/* The score histogram's upper bounds (centipawns, side to move's view), as data stats RUN's; the last bin is open. */
static const int BINS[] = { -1600, -800, -400, -200, -100, -50, -1, 0, 50, 100, 200, 400, 800, 1600 };
enum { NBINS = sizeof BINS / sizeof BINS[0] + 1, PIECE_BUCKETS = 8 };

typedef struct {
    int64_t positions, game_starts, side[2];
    int64_t stm[3];                  /* results, side to move's view: loss, draw, win */
    int64_t red[3];                  /* the same from Red's view */
    int64_t bins[NBINS];
    int64_t pieces[PIECE_BUCKETS];   /* by the net's output bucket: (pieces - 2) / 4 */
    int64_t *per_file;
    double score_sum, abs_sum, ply_sum;
    int file, last_ply;
} Tally;

/* Sums one record up (the sorter's observer: every input record, in input order). */
static void tally(void *ctx, const uint8_t *rec, int file)
{
    Tally *t = ctx;
    int score = (int16_t)(uint16_t)(rec[46] | rec[47] << 8), side = rec[45], result = rec[50];
    int ply = rec[52] | rec[53] << 8, pieces = 0;
    for (int i = 0; i < 45; i++)
        pieces += ((rec[i] & 15) != 0) + ((rec[i] >> 4) != 0);
    /* a game's positions come in a row with rising ply (data export, xqf-match --data): a fall starts a game */
    if (file != t->file) {
        t->file = file;
        t->last_ply = -1;
    }
    if (ply <= t->last_ply || t->last_ply < 0)
        t->game_starts++;
    t->last_ply = ply;
    t->per_file[file]++;
    t->positions++;
    t->side[side]++;
    t->stm[result]++;
    t->red[side == 0 ? result : 2 - result]++;
    int bin = 0;
    while (bin < NBINS - 1 && score > BINS[bin])
        bin++;
    t->bins[bin]++;
    int bucket = (pieces - 2) / 4;
    t->pieces[bucket < 0 ? 0 : bucket >= PIECE_BUCKETS ? PIECE_BUCKETS - 1 : bucket]++;
    t->score_sum += score;
    t->abs_sum += score < 0 ? -score : score;
    t->ply_sum += ply;
}

/* The sorter's emit for stats: the distinct positions are counted by the sorter itself. */
static int count_record(void *ctx, const uint8_t *rec)
{
    (void)ctx;
    (void)rec;
    return CLI_OK;
}

static void histogram(const char *title, const int64_t *counts, int n, const char *const *labels)
{
    printf("%s\n", title);
    int64_t most = 1;
    for (int i = 0; i < n; i++)
        most = counts[i] > most ? counts[i] : most;
    for (int i = 0; i < n; i++)
        printf("  %-14s %10" PRId64 " %.*s\n", labels[i], counts[i], (int)(40 * counts[i] / most),
               "########################################");
}

static double pct(int64_t a, int64_t b) { return b ? 100.0 * (double)a / (double)b : 0.0; }

int cli_data_file_stats(const Opts *o)
{
    DataInputs in;
    char tmp[CLI_PATH_MAX];
    int status = inputs_open(o, &in);
    if (status == CLI_OK)
        status = tmp_folder(o, NULL, tmp, sizeof tmp);
    if (status != CLI_OK) {
        inputs_free(&in);
        return status;
    }
    raise_file_limit();
    Mem mem = { .budget = (size_t)opts_int(o, "--memory") << 20 };
    Tally t = { .file = -1, .per_file = calloc((size_t)in.count, sizeof *t.per_file) };
    uint8_t *rbuf = mem_get(&mem, IO_BUFFER);
    if (!t.per_file || !rbuf) {
        free(t.per_file);
        inputs_free(&in);
        return cli_fail(CLI_FAIL, "--memory is too small");
    }
    /* the duplicates: a sort of the positions with dedup, every record tallied as it is read */
    Reader r = { .in = &in, .fd = -1, .buf = rbuf };
    Sorter s = { .mem = &mem, .tmpdir = tmp, .seed = 0, .dedup = true, .emit = count_record, .ctx = &t,
                 .observe = tally };
    status = sort_inputs(&s, &r);
    if (r.fd >= 0)
        close(r.fd);
    mem_put(&mem, rbuf, IO_BUFFER);
    if (status == CLI_OK) {
        int64_t n = t.positions;
        printf("Files: %d\n", in.count);
        for (int i = 0; i < in.count; i++)
            printf("  %s: %" PRId64 " positions\n", cli_shown(in.files[i].path), t.per_file[i]);
        printf("Positions: %" PRId64 "\n", n);
        /* in game order a game keeps some 60 positions; shuffled, every other record looks like a start */
        if (n == 0)
            printf("Games: 0\n");
        else if (t.game_starts * 4 <= n)
            printf("Games: %" PRId64 " (%.1f positions a game; counted where the ply falls: files written game by "
                   "game)\n", t.game_starts, (double)n / (double)t.game_starts);
        else
            printf("Games: unknown (the positions are not in game order: a merged or shuffled file)\n");
        printf("Side to move: Red %" PRId64 " (%.1f%%), Black %" PRId64 " (%.1f%%)\n", t.side[0], pct(t.side[0], n),
               t.side[1], pct(t.side[1], n));
        printf("Results (side to move's view) W/D/L: %" PRId64 "/%" PRId64 "/%" PRId64 " (%.1f%%/%.1f%%/%.1f%%)\n",
               t.stm[2], t.stm[1], t.stm[0], pct(t.stm[2], n), pct(t.stm[1], n), pct(t.stm[0], n));
        printf("Results (Red's view) W/D/L: %" PRId64 "/%" PRId64 "/%" PRId64 "\n", t.red[2], t.red[1], t.red[0]);
        printf("Duplicate positions: %" PRId64 " (%.2f%%; the same board and side to move as an earlier record)\n",
               s.dropped, pct(s.dropped, n));
        printf("Distinct positions: %" PRId64 "\n", s.emitted);
        printf("Score: mean %.1f, mean |score| %.1f (cp, side to move's view); ply: mean %.1f\n",
               n ? t.score_sum / (double)n : 0.0, n ? t.abs_sum / (double)n : 0.0, n ? t.ply_sum / (double)n : 0.0);
        char text[NBINS][32];
        const char *labels[NBINS];
        for (int i = 0; i < NBINS; i++) {
            if (i == 0)
                snprintf(text[i], sizeof text[i], "<= %d", BINS[0]);
            else if (i == NBINS - 1)
                snprintf(text[i], sizeof text[i], "> %d", BINS[NBINS - 2]);
            else
                snprintf(text[i], sizeof text[i], "%d .. %d", BINS[i - 1] + 1, BINS[i]);
            labels[i] = text[i];
        }
        histogram("Scores (side to move, cp):", t.bins, NBINS, labels);
        for (int i = 0; i < PIECE_BUCKETS; i++) {
            snprintf(text[i], sizeof text[i], "%d-%d pieces", 2 + 4 * i, i == PIECE_BUCKETS - 1 ? 32 : 5 + 4 * i);
            labels[i] = text[i];
        }
        histogram("Material (pieces on the board, kings included: the net's output buckets):", t.pieces,
                  PIECE_BUCKETS, labels);
        print_memory(&mem, &s);
    }
    free(t.per_file);
    inputs_free(&in);
    return status;
}

#include "nnue.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NNUE_X86 1
#include <immintrin.h>
#endif

/* The largest file any header can imply. */
enum { FILE_MAX = NNUE_HEADER_BYTES + NNUE_DESCRIPTION_MAX + NNUE_BODY_BYTES };

static void fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

uint32_t nnue_architecture_hash(void)
{
    uint32_t h = 2166136261u; /* FNV-1a, 32-bit: offset basis and prime of Fowler, Noll and Vo */
    for (const char *p = NNUE_ARCHITECTURE; *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    return h;
}

/* ---- the arithmetic paths ----
 *
 * Two primitives carry all the work: `rows` (out = in + the added rows -
 * the removed rows of W1, 256 int16 each: refreshes, incremental updates,
 * the refresh cache) and `dot` (the SCReLU output's sum).  Each has a
 * portable C version and an AVX2 one compiled with a target attribute
 * (no -march flag: one binary runs on every x86-64, and the net picks its
 * path at run time with __builtin_cpu_supports).  The portable versions
 * compute exactly what the vector instructions do, wrap-around included
 * (16-bit lanes for the accumulator and for a * W, 32-bit for the sum),
 * so the paths agree on every net, even one whose weights break the
 * training clamps, and no path has undefined overflow.
 */

static void rows_portable(int16_t *out, const int16_t *in, const int16_t *const *add, int nadd,
                          const int16_t *const *sub, int nsub)
{
    for (int i = 0; i < NNUE_HIDDEN; i++) {
        int v = in[i]; /* at most 180 rows of 16 bits: no int overflow; wraps to 16 bits below */
        for (int a = 0; a < nadd; a++)
            v += add[a][i];
        for (int s = 0; s < nsub; s++)
            v -= sub[s][i];
        out[i] = (int16_t)v;
    }
}

static int32_t dot_portable(const int16_t *us, const int16_t *them, const int16_t *w)
{
    uint32_t sum = 0;
    for (int i = 0; i < 2 * NNUE_HIDDEN; i++) {
        int x = i < NNUE_HIDDEN ? us[i] : them[i - NNUE_HIDDEN];
        int a = x < 0 ? 0 : x > NNUE_QA ? NNUE_QA : x;
        int16_t aw = (int16_t)(a * w[i]); /* _mm256_mullo_epi16 keeps the low 16 bits */
        sum += (uint32_t)(aw * a);
    }
    return (int32_t)sum;
}

#ifdef NNUE_X86
/* Half the accumulator (128 lanes, 8 registers) at a time, so the registers never spill. */
__attribute__((target("avx2"))) static void rows_avx2(int16_t *out, const int16_t *in, const int16_t *const *add,
                                                      int nadd, const int16_t *const *sub, int nsub)
{
    enum { REGS = 8, LANES = 16 };
    for (int half = 0; half < NNUE_HIDDEN; half += REGS * LANES) {
        __m256i r[REGS];
        for (int k = 0; k < REGS; k++)
            r[k] = _mm256_loadu_si256((const __m256i *)(in + half + k * LANES));
        for (int a = 0; a < nadd; a++)
            for (int k = 0; k < REGS; k++)
                r[k] = _mm256_add_epi16(r[k], _mm256_loadu_si256((const __m256i *)(add[a] + half + k * LANES)));
        for (int s = 0; s < nsub; s++)
            for (int k = 0; k < REGS; k++)
                r[k] = _mm256_sub_epi16(r[k], _mm256_loadu_si256((const __m256i *)(sub[s] + half + k * LANES)));
        for (int k = 0; k < REGS; k++)
            _mm256_storeu_si256((__m256i *)(out + half + k * LANES), r[k]);
    }
}

/*
 * SCReLU's sum as docs/nnue.md describes the SIMD path (the trick of
 * bullet's and Lizard's SCReLU inference): a = clamp(x, 0, QA); a * W in
 * 16 bits (|a W| <= 127 * 127), then _mm256_madd_epi16 multiplies by a
 * again and adds pairs into 32 bits, exact for nets within the clamps.
 */
__attribute__((target("avx2"))) static int32_t dot_avx2(const int16_t *us, const int16_t *them, const int16_t *w)
{
    const __m256i zero = _mm256_setzero_si256(), qa = _mm256_set1_epi16(NNUE_QA);
    __m256i sum = zero;
    for (int half = 0; half < 2; half++) {
        const int16_t *x = half ? them : us, *wh = w + half * NNUE_HIDDEN;
        for (int i = 0; i < NNUE_HIDDEN; i += 16) {
            __m256i a = _mm256_min_epi16(_mm256_max_epi16(_mm256_loadu_si256((const __m256i *)(x + i)), zero), qa);
            __m256i aw = _mm256_mullo_epi16(a, _mm256_loadu_si256((const __m256i *)(wh + i)));
            sum = _mm256_add_epi32(sum, _mm256_madd_epi16(aw, a));
        }
    }
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}
#endif

static inline void rows(const NnueNet *net, int16_t *out, const int16_t *in, const int16_t *const *add, int nadd,
                        const int16_t *const *sub, int nsub)
{
#ifdef NNUE_X86
    if (net->simd == NNUE_SIMD_AVX2) {
        rows_avx2(out, in, add, nadd, sub, nsub);
        return;
    }
#endif
    (void)net;
    rows_portable(out, in, add, nadd, sub, nsub);
}

static inline int32_t dot(const NnueNet *net, const int16_t *us, const int16_t *them, const int16_t *w)
{
#ifdef NNUE_X86
    if (net->simd == NNUE_SIMD_AVX2)
        return dot_avx2(us, them, w);
#endif
    (void)net;
    return dot_portable(us, them, w);
}

bool nnue_simd_available(NnueSimd s)
{
    if (s == NNUE_SIMD_PORTABLE)
        return true;
#ifdef NNUE_X86
    if (s == NNUE_SIMD_AVX2)
        return __builtin_cpu_supports("avx2");
#endif
    return false;
}

NnueSimd nnue_simd_best(void)
{
    return nnue_simd_available(NNUE_SIMD_AVX2) ? NNUE_SIMD_AVX2 : NNUE_SIMD_PORTABLE;
}

int nnue_set_simd(NnueNet *net, NnueSimd s)
{
    if (!nnue_simd_available(s))
        return -1;
    net->simd = s;
    return 0;
}

const char *nnue_simd_name(NnueSimd s)
{
    return s == NNUE_SIMD_AVX2 ? "avx2" : "portable";
}

/* ---- nets ---- */

/* Cache-line aligned, so that the rows the vector code loads never straddle lines needlessly. */
static void *aligned_zalloc(size_t size)
{
    size_t rounded = (size + 63) / 64 * 64;
    void *p = aligned_alloc(64, rounded);
    if (p)
        memset(p, 0, rounded);
    return p;
}

NnueNet *nnue_new(void)
{
    NnueNet *net = aligned_zalloc(sizeof *net);
    if (net)
        net->simd = nnue_simd_best();
    return net;
}

NnueNet *nnue_clone(const NnueNet *net)
{
    NnueNet *copy = aligned_zalloc(sizeof *copy);
    if (copy)
        memcpy(copy, net, sizeof *copy);
    return copy;
}

void nnue_destroy(NnueNet **net)
{
    if (!net)
        return;
    free(*net);
    *net = NULL;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int16_t get16(const uint8_t *p)
{
    return (int16_t)(uint16_t)(p[0] | p[1] << 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put16(uint8_t *p, int16_t v)
{
    p[0] = (uint8_t)((uint16_t)v & 0xff);
    p[1] = (uint8_t)((uint16_t)v >> 8);
}

/* The tensors in file order, with their sizes in bytes. */
static const struct {
    const char *name;
    size_t bytes;
} SECTIONS[] = {
    { "b1", 2 * NNUE_HIDDEN },
    { "W1", 2 * (size_t)NNUE_FEATURES * NNUE_HIDDEN },
    { "W2", 2 * NNUE_OUTPUT_BUCKETS * 2 * NNUE_HIDDEN },
    { "b2", 4 * NNUE_OUTPUT_BUCKETS },
};

/* The name of the part of a file with an n-byte description that holds byte `offset`. */
static const char *section_at(size_t offset, size_t n)
{
    if (offset < NNUE_HEADER_BYTES)
        return "the header";
    if (offset < NNUE_HEADER_BYTES + n)
        return "the description";
    size_t at = NNUE_HEADER_BYTES + n;
    for (size_t i = 0; i < sizeof SECTIONS / sizeof SECTIONS[0]; i++) {
        if (offset < at + SECTIONS[i].bytes)
            return SECTIONS[i].name;
        at += SECTIONS[i].bytes;
    }
    return "nothing";
}

/*
 * Parses a net file of `total` bytes of which the first `stored` are in d
 * (stored < total only when total exceeds any net, so that a reader need
 * not keep a huge file to say so).
 */
static NnueNet *parse(const uint8_t *d, size_t stored, size_t total, char *err, size_t errlen)
{
    size_t magic_len = strlen(NNUE_MAGIC);
    size_t have = total < magic_len ? total : magic_len;
    if (memcmp(d, NNUE_MAGIC, have) != 0) {
        fail(err, errlen, "wrong magic: not an XQF net file (it starts with " NNUE_MAGIC ")");
        return NULL;
    }
    if (total < NNUE_HEADER_BYTES) {
        fail(err, errlen, "truncated inside the header: %zu bytes, the header alone has %d", total,
             NNUE_HEADER_BYTES);
        return NULL;
    }
    uint32_t version = get32(d + 8), hash = get32(d + 12), n = get32(d + 16);
    if (version != NNUE_VERSION) {
        fail(err, errlen, "wrong format version %u: this engine reads version %d", version, NNUE_VERSION);
        return NULL;
    }
    if (hash != nnue_architecture_hash()) {
        fail(err, errlen, "wrong architecture hash %08x: this engine's " NNUE_ARCHITECTURE " is %08x", hash,
             nnue_architecture_hash());
        return NULL;
    }
    if (n > NNUE_DESCRIPTION_MAX) {
        fail(err, errlen, "description length %u is over the limit of %d bytes", n, NNUE_DESCRIPTION_MAX);
        return NULL;
    }
    size_t expected = (size_t)NNUE_HEADER_BYTES + n + NNUE_BODY_BYTES;
    if (total < expected) {
        fail(err, errlen, "truncated inside %s: %zu bytes, the header implies %zu", section_at(total, n), total,
             expected);
        return NULL;
    }
    if (total > expected) {
        fail(err, errlen, "%zu trailing bytes after b2: %zu bytes, the header implies %zu", total - expected, total,
             expected);
        return NULL;
    }
    assert(stored == total);
    (void)stored;
    NnueNet *net = nnue_new();
    if (!net) {
        fail(err, errlen, "out of memory for a net");
        return NULL;
    }
    const uint8_t *p = d + NNUE_HEADER_BYTES;
    net->description_length = n;
    memcpy(net->description, p, n);
    net->description[n] = '\0';
    p += n;
    for (int i = 0; i < NNUE_HIDDEN; i++, p += 2)
        net->b1[i] = get16(p);
    for (int f = 0; f < NNUE_FEATURES; f++)
        for (int i = 0; i < NNUE_HIDDEN; i++, p += 2)
            net->w1[f][i] = get16(p);
    for (int o = 0; o < NNUE_OUTPUT_BUCKETS; o++)
        for (int i = 0; i < 2 * NNUE_HIDDEN; i++, p += 2)
            net->w2[o][i] = get16(p);
    for (int o = 0; o < NNUE_OUTPUT_BUCKETS; o++, p += 4)
        net->b2[o] = (int32_t)get32(p);
    return net;
}

NnueNet *nnue_load_memory(const void *data, size_t size, char *err, size_t errlen)
{
    static const uint8_t none[1] = { 0 };
    return parse(size ? data : none, size, size, err, errlen);
}

NnueNet *nnue_load_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail(err, errlen, "cannot open net file %s: %s", path, strerror(errno));
        return NULL;
    }
    /* Keep at most one byte more than any net; count the rest (a pipe has no size to ask). */
    uint8_t *buf = malloc(FILE_MAX + 1);
    if (!buf) {
        fclose(f);
        fail(err, errlen, "out of memory reading %s", path);
        return NULL;
    }
    size_t stored = 0, total = 0, got;
    uint8_t skip[65536];
    while ((got = fread(stored <= FILE_MAX ? buf + stored : skip, 1,
                        stored <= FILE_MAX ? FILE_MAX + 1 - stored : sizeof skip, f)) > 0) {
        if (stored <= FILE_MAX)
            stored += got;
        total += got;
    }
    bool bad = ferror(f);
    fclose(f);
    NnueNet *net = NULL;
    if (bad)
        fail(err, errlen, "cannot read net file %s", path);
    else
        net = parse(buf, stored, total, err, errlen);
    free(buf);
    return net;
}

uint8_t *nnue_write_memory(const NnueNet *net, size_t *size)
{
    uint32_t n = net->description_length <= NNUE_DESCRIPTION_MAX ? net->description_length : NNUE_DESCRIPTION_MAX;
    size_t total = (size_t)NNUE_HEADER_BYTES + n + NNUE_BODY_BYTES;
    uint8_t *d = malloc(total), *p = d;
    if (!d)
        return NULL;
    memcpy(p, NNUE_MAGIC, 8);
    put32(p + 8, NNUE_VERSION);
    put32(p + 12, nnue_architecture_hash());
    put32(p + 16, n);
    p += NNUE_HEADER_BYTES;
    memcpy(p, net->description, n);
    p += n;
    for (int i = 0; i < NNUE_HIDDEN; i++, p += 2)
        put16(p, net->b1[i]);
    for (int f = 0; f < NNUE_FEATURES; f++)
        for (int i = 0; i < NNUE_HIDDEN; i++, p += 2)
            put16(p, net->w1[f][i]);
    for (int o = 0; o < NNUE_OUTPUT_BUCKETS; o++)
        for (int i = 0; i < 2 * NNUE_HIDDEN; i++, p += 2)
            put16(p, net->w2[o][i]);
    for (int o = 0; o < NNUE_OUTPUT_BUCKETS; o++, p += 4)
        put32(p, (uint32_t)net->b2[o]);
    *size = total;
    return d;
}

int nnue_save(const NnueNet *net, const char *path, char *err, size_t errlen)
{
    size_t size;
    uint8_t *d = nnue_write_memory(net, &size);
    if (!d) {
        fail(err, errlen, "out of memory writing %s", path);
        return -1;
    }
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(d, 1, size, f) == size;
    int saved = errno;
    if (f && fclose(f) != 0 && ok) {
        ok = false;
        saved = errno;
    }
    free(d);
    if (!ok) {
        fail(err, errlen, "cannot write net file %s: %s", path, strerror(saved));
        return -1;
    }
    return 0;
}

/* ---- features ---- */

/* A square as `perspective` sees it: Black's view has the ranks flipped. */
static inline int orient(int perspective, int sq)
{
    return perspective == RED ? sq : (RANKS - 1 - sq_rank(sq)) * FILES + sq_file(sq);
}

int nnue_king_slot(int perspective, int king_sq)
{
    int k = orient(perspective, king_sq);
    int mirrored = sq_file(k) == 5; /* the king on file f is seen on file d */
    assert(sq_rank(k) <= 2 && sq_file(k) >= 3 && sq_file(k) <= 5);
    return (sq_rank(k) * 2 + (sq_file(k) == 4)) * 2 + mirrored;
}

/* The feature of piece on sq for perspective, whose king is in `slot` (nnue_king_slot). */
static inline int feature_in_slot(int perspective, int slot, int piece, int sq)
{
    int s = orient(perspective, sq);
    if (slot & 1)
        s = sq_rank(s) * FILES + (FILES - 1 - sq_file(s));
    int index = piece_type(piece) - 1 + (piece_color(piece) == perspective ? 0 : 7);
    return ((slot >> 1) * NNUE_PIECE_INDEXES + index) * SQUARES + s;
}

int nnue_feature(int perspective, int king_sq, int piece, int sq)
{
    return feature_in_slot(perspective, nnue_king_slot(perspective, king_sq), piece, sq);
}

int nnue_output_bucket(const Board *b)
{
    int pieces = 0;
    for (int c = RED; c <= BLACK; c++)
        for (int t = KING; t <= PAWN; t++)
            pieces += b->count[c][t];
    int bucket = (pieces - 2) / 4;
    return bucket < 0 ? 0 : bucket >= NNUE_OUTPUT_BUCKETS ? NNUE_OUTPUT_BUCKETS - 1 : bucket;
}

/* ---- arithmetic ---- */

void nnue_refresh(const NnueNet *net, const Board *b, int perspective, int16_t *acc)
{
    const int16_t *add[SQUARES];
    int n = 0, slot = nnue_king_slot(perspective, board_king(b, perspective));
    for (int sq = 0; sq < SQUARES; sq++)
        if (b->squares[sq])
            add[n++] = net->w1[feature_in_slot(perspective, slot, b->squares[sq], sq)];
    rows(net, acc, net->b1, add, n, NULL, 0);
}

int nnue_output(const NnueNet *net, const int16_t *us, const int16_t *them, int bucket)
{
    int32_t sum = dot(net, us, them, net->w2[bucket]);
    int64_t out = sum / NNUE_QA + (int64_t)net->b2[bucket]; /* C division: towards zero, as the doc says */
    return (int)(out * NNUE_SCALE / (NNUE_QA * NNUE_QB));
}

int nnue_evaluate(const NnueNet *net, const Board *b)
{
    int16_t acc[2][NNUE_HIDDEN];
    nnue_refresh(net, b, b->side, acc[0]);
    nnue_refresh(net, b, b->side ^ 1, acc[1]);
    return nnue_output(net, acc[0], acc[1], nnue_output_bucket(b));
}

/* ---- the accumulators of a search line ----
 *
 * Entry p holds the accumulators of the position at ply p and the move
 * that led there (piece EMPTY: the root or a null move, which changes no
 * feature: the colour-indexed accumulators of a null move are its
 * parent's).  A perspective's accumulator is computed on demand: walk back
 * to the nearest ply where it is computed, then add and remove the moves'
 * features forward, marking each ply computed on the way (its siblings
 * start from there).  If the walk crosses a move of that perspective's own
 * king, every feature changed (the bucket or the mirror did), and the
 * accumulator is rebuilt from the refresh cache instead.
 *
 * The refresh cache ("Finny tables", as Koivisto and Stockfish call it):
 * per perspective and king slot (bucket x mirror), the accumulator of the
 * last position refreshed there and that position's pieces.  A refresh
 * adds and removes only the pieces that differ from that position's, a
 * handful when the king steps back to a square it left a few moves
 * before, instead of rebuilding from all thirty-odd pieces.  An entry
 * starts as the empty board (b1, no pieces), which is a correct pair too.
 */

typedef struct {
    _Alignas(64) NnueAccumulator acc;
    bool computed[2];
    uint8_t piece, from, to, captured;
#ifndef NDEBUG
    uint64_t parent_key; /* checks that the search pushes and evaluates on one line */
#endif
} StackEntry;

typedef struct {
    _Alignas(64) int16_t acc[NNUE_HIDDEN];
    uint8_t squares[SQUARES];
} CacheEntry;

struct NnueStack {
    StackEntry entry[MAX_PLY + 1];
    CacheEntry cache[2][NNUE_KING_SLOTS];
};

NnueStack *nnue_stack_new(void)
{
    return aligned_zalloc(sizeof(NnueStack));
}

void nnue_stack_destroy(NnueStack **s)
{
    if (!s)
        return;
    free(*s);
    *s = NULL;
}

/* Rebuilds perspective's accumulator of b into out by difference from its cache entry. */
static void refresh_cached(NnueStack *s, const NnueNet *net, const Board *b, int perspective, int16_t *out)
{
    int slot = nnue_king_slot(perspective, board_king(b, perspective));
    CacheEntry *ce = &s->cache[perspective][slot];
    const int16_t *add[SQUARES], *sub[SQUARES];
    int nadd = 0, nsub = 0;
    for (int sq = 0; sq < SQUARES; sq++) {
        int was = ce->squares[sq], now = b->squares[sq];
        if (was == now)
            continue;
        if (was)
            sub[nsub++] = net->w1[feature_in_slot(perspective, slot, was, sq)];
        if (now)
            add[nadd++] = net->w1[feature_in_slot(perspective, slot, now, sq)];
        ce->squares[sq] = (uint8_t)now;
    }
    rows(net, ce->acc, ce->acc, add, nadd, sub, nsub);
    memcpy(out, ce->acc, sizeof ce->acc);
}

void nnue_stack_reset(NnueStack *s, const NnueNet *net, const Board *b)
{
    for (int c = RED; c <= BLACK; c++) {
        for (int k = 0; k < NNUE_KING_SLOTS; k++) {
            memcpy(s->cache[c][k].acc, net->b1, sizeof net->b1);
            memset(s->cache[c][k].squares, 0, sizeof s->cache[c][k].squares);
        }
        refresh_cached(s, net, b, c, s->entry[0].acc.v[c]);
        s->entry[0].computed[c] = true;
    }
    s->entry[0].piece = EMPTY;
}

void nnue_stack_push(NnueStack *s, int ply, const Board *b, Move m)
{
    assert(ply >= 0 && ply < MAX_PLY);
    StackEntry *e = &s->entry[ply + 1];
    int from = move_from(m), to = move_to(m);
    e->piece = b->squares[from];
    e->from = (uint8_t)from;
    e->to = (uint8_t)to;
    e->captured = b->squares[to];
    e->computed[RED] = e->computed[BLACK] = false;
#ifndef NDEBUG
    e->parent_key = board_key(b);
#endif
}

void nnue_stack_push_null(NnueStack *s, int ply, const Board *b)
{
    assert(ply >= 0 && ply < MAX_PLY);
    StackEntry *e = &s->entry[ply + 1];
    e->piece = EMPTY;
    e->computed[RED] = e->computed[BLACK] = false;
#ifndef NDEBUG
    e->parent_key = board_key(b);
#else
    (void)b;
#endif
}

/* Brings perspective's accumulator at ply up to date (b: the position at ply). */
static void update_perspective(NnueStack *s, const NnueNet *net, const Board *b, int ply, int perspective)
{
    StackEntry *e = s->entry;
    int king = make_piece(perspective, KING), from = ply;
    for (; !e[from].computed[perspective]; from--) {
        if (e[from].piece == king) {
            refresh_cached(s, net, b, perspective, e[ply].acc.v[perspective]);
            e[ply].computed[perspective] = true;
            return;
        }
    }
    /* No own-king move since `from`: every position on the way has b's king square. */
    int slot = nnue_king_slot(perspective, board_king(b, perspective));
    for (int p = from + 1; p <= ply; p++) {
        const StackEntry *m = &e[p];
        const int16_t *add[1], *sub[2];
        int nadd = 0, nsub = 0;
        if (m->piece) {
            add[nadd++] = net->w1[feature_in_slot(perspective, slot, m->piece, m->to)];
            sub[nsub++] = net->w1[feature_in_slot(perspective, slot, m->piece, m->from)];
            if (m->captured)
                sub[nsub++] = net->w1[feature_in_slot(perspective, slot, m->captured, m->to)];
        }
        rows(net, e[p].acc.v[perspective], e[p - 1].acc.v[perspective], add, nadd, sub, nsub);
        e[p].computed[perspective] = true;
    }
}

const NnueAccumulator *nnue_stack_accumulator(NnueStack *s, const NnueNet *net, const Board *b, int ply)
{
    assert(ply >= 0 && ply <= MAX_PLY);
    assert(ply == 0 || b->top == 0 || s->entry[ply].parent_key == b->states[b->top - 1].key);
    update_perspective(s, net, b, ply, RED);
    update_perspective(s, net, b, ply, BLACK);
    return &s->entry[ply].acc;
}

int nnue_stack_evaluate(NnueStack *s, const NnueNet *net, const Board *b, int ply)
{
    const NnueAccumulator *acc = nnue_stack_accumulator(s, net, b, ply);
    return nnue_output(net, acc->v[b->side], acc->v[b->side ^ 1], nnue_output_bucket(b));
}

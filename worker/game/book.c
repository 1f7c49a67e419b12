#include "book.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fen.h"
#include "files.h"
#include "rules.h"
#include "sha256.h"
#include "pgn.h"

enum { BOOK_LINE_MAX = 4096, BOOK_MAX_MOVES = 256 };

struct Book {
    int count, capacity;
    Opening *openings;   /* each owns its moves array */
};

void book_destroy(Book **bp)
{
    Book *b = *bp;
    if (!b)
        return;
    for (int i = 0; i < b->count; i++)
        free((Move *)b->openings[i].moves);
    free(b->openings);
    free(b);
    *bp = NULL;
}

int book_size(const Book *b)
{
    return b->count;
}

const Opening *book_opening(const Book *b, int i)
{
    return &b->openings[i];
}

void book_board(const Opening *o, Board *b)
{
    char err[160];
    fen_parse(b, o->fen, FEN_GAME, err, sizeof err);
    for (int i = 0; i < o->count; i++)
        board_make(b, o->moves[i]);
}

_Static_assert(FEN_MAX + 6 + 5 * BOOK_MAX_MOVES < BOOK_TEXT_MAX, "an opening fits a book line");

void book_opening_text(const Book *b, int i, char out[BOOK_TEXT_MAX])
{
    const Opening *o = &b->openings[i];
    size_t len = (size_t)snprintf(out, BOOK_TEXT_MAX, "%s%s", o->fen, o->count ? " moves" : "");
    for (int m = 0; m < o->count; m++) {
        out[len++] = ' ';
        move_text(o->moves[m], out + len);
        len += strlen(out + len);
    }
}

/*
 * Parses one book line into *o (moves stored in moves[], max_moves of
 * them) and *key, the Zobrist key of the position after the moves.
 * Returns 1 for an opening, 0 for a blank or comment line, or -1 with a
 * message in err.
 */
static int parse_line(const char *line, Opening *o, uint64_t *key, Move *moves, int max_moves, char *err,
                      size_t errlen)
{
    char text[BOOK_LINE_MAX];
    size_t len = strcspn(line, "#;\r\n");
    if (len >= sizeof text) {
        snprintf(err, errlen, "line too long");
        return -1;
    }
    memcpy(text, line, len);
    text[len] = '\0';
    if (strspn(text, " \t") == len)
        return 0;
    char *fen = text + strspn(text, " \t");
    char *moves_word = strstr(fen, " moves");
    char *move_list = NULL;
    if (moves_word && (moves_word[6] == '\0' || moves_word[6] == ' ' || moves_word[6] == '\t')) {
        *moves_word = '\0';
        move_list = moves_word + 6;
    }
    Board b;
    char msg[160];
    if (fen_parse(&b, fen, FEN_GAME, msg, sizeof msg) != 0) {
        snprintf(err, errlen, "bad FEN: %s", msg);
        return -1;
    }
    fen_write(&b, o->fen);
    o->count = 0;
    o->moves = moves;
    for (char *save = NULL, *tok = move_list ? strtok_r(move_list, " \t", &save) : NULL; tok;
         tok = strtok_r(NULL, " \t", &save)) {
        Move m;
        if (o->count == max_moves) {
            snprintf(err, errlen, "more than %d moves", max_moves);
            return -1;
        }
        if (move_parse(&b, tok, &m, msg, sizeof msg) != 0) {
            snprintf(err, errlen, "move %d '%s': %s", o->count + 1, tok, msg);
            return -1;
        }
        board_make(&b, m);
        moves[o->count++] = m;
    }
    if (rules_outcome(&b).result != RESULT_NONE) {
        snprintf(err, errlen, "the game is already over in this position (%s)",
                 rules_reason_text(rules_outcome(&b).reason));
        return -1;
    }
    *key = board_key(&b);
    return 1;
}

/* Appends a copy of o (its moves copied). Returns 0 or -1 when out of memory. */
static int add_opening(Book *b, const Opening *o)
{
    if (b->count == b->capacity) {
        int cap = b->capacity ? b->capacity * 2 : 1024;
        Opening *grown = realloc(b->openings, sizeof *grown * (size_t)cap);
        if (!grown)
            return -1;
        b->openings = grown;
        b->capacity = cap;
    }
    Move *moves = malloc(sizeof *moves * (size_t)(o->count ? o->count : 1));
    if (!moves)
        return -1;
    memcpy(moves, o->moves, sizeof *moves * (size_t)o->count);
    b->openings[b->count] = *o;
    b->openings[b->count].moves = moves;
    b->count++;
    return 0;
}

Book *book_parse(const char *text, const char *name, char *err, size_t errlen)
{
    Book *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, errlen, "%s: out of memory", name);
        return NULL;
    }
    Move moves[BOOK_MAX_MOVES];
    int number = 1;
    for (const char *line = text; *line; number++) {
        size_t len = strcspn(line, "\n");
        char msg[256];
        Opening o;
        uint64_t key;
        int rc = -1;
        if (len > BOOK_LINE_MAX)
            snprintf(msg, sizeof msg, "line too long");
        else
            rc = parse_line(line, &o, &key, moves, BOOK_MAX_MOVES, msg, sizeof msg);
        if (rc > 0 && add_opening(b, &o) != 0) {
            snprintf(msg, sizeof msg, "out of memory");
            rc = -1;
        }
        if (rc < 0) {
            snprintf(err, errlen, "%s:%d: %s", name, number, msg);
            book_destroy(&b);
            return NULL;
        }
        line += len + (line[len] == '\n');
    }
    if (b->count == 0) {
        snprintf(err, errlen, "%s: no openings in the book", name);
        book_destroy(&b);
    }
    return b;
}

char *book_read_text(const char *path, char *err, size_t errlen)
{
    size_t len;
    char *text = files_read(path, SIZE_MAX, &len);
    if (!text)
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
    else if (memchr(text, '\0', len)) {
        snprintf(err, errlen, "%s: a NUL byte: not a text file", path);
        free(text);
        return NULL;
    }
    return text;
}

Book *book_load(const char *path, char *err, size_t errlen)
{
    char *text = book_read_text(path, err, errlen);
    Book *b = text ? book_parse(text, path, err, errlen) : NULL;
    free(text);
    return b;
}

static const char *const FORMAT_NAMES[] = { "book", "fen", "epd", "pgn" };

int book_format_named(const char *name, BookFormat *f)
{
    for (int i = 0; i < (int)(sizeof FORMAT_NAMES / sizeof *FORMAT_NAMES); i++)
        if (strcmp(name, FORMAT_NAMES[i]) == 0) {
            *f = (BookFormat)i;
            return 0;
        }
    return -1;
}

BookFormat book_format_of(const char *path)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    BookFormat f = BOOK_FORMAT_BOOK;
    if (dot && (!slash || dot > slash) && book_format_named(dot + 1, &f) != 0)
        f = BOOK_FORMAT_BOOK;
    return f;
}

const char *book_format_name(BookFormat f)
{
    return FORMAT_NAMES[f];
}

void book_report_free(BookReport *rep)
{
    free(rep->problems);
    rep->problems = NULL;
}

enum { BOOK_PROBLEMS_LISTED = 100 };

/* A book being imported: its openings, the keys of their positions (an open-addressing set), the report. */
typedef struct {
    Book *book;
    uint64_t *keys;        /* 0: an empty slot (a key of 0 is stored as 1) */
    size_t key_cap, key_count;
    BookReport *rep;
    size_t problems_len;
    const char *name;
    double score_sum;
    Move moves[BOOK_MAX_MOVES];
} Import;

/* Adds key to the set: 1 when it was there already, 0 when added, -1 when out of memory. */
static int key_seen(Import *im, uint64_t key)
{
    key = key ? key : 1;
    if (2 * (im->key_count + 1) > im->key_cap) {
        size_t cap = im->key_cap ? 2 * im->key_cap : 4096;
        uint64_t *grown = calloc(cap, sizeof *grown);
        if (!grown)
            return -1;
        for (size_t i = 0; i < im->key_cap; i++)
            for (size_t j = im->keys[i] & (cap - 1); im->keys[i]; j = (j + 1) & (cap - 1))
                if (!grown[j]) {
                    grown[j] = im->keys[i];
                    break;
                }
        free(im->keys);
        im->keys = grown;
        im->key_cap = cap;
    }
    size_t j = key & (im->key_cap - 1);
    for (; im->keys[j]; j = (j + 1) & (im->key_cap - 1))
        if (im->keys[j] == key)
            return 1;
    im->keys[j] = key;
    im->key_count++;
    return 0;
}

/* Names one bad opening: "NAME:LINE: why" (number 0: "NAME: why"), the first BOOK_PROBLEMS_LISTED of them. */
__attribute__((format(printf, 3, 4))) static void bad_opening(Import *im, int number, const char *fmt, ...)
{
    BookReport *rep = im->rep;
    if (rep->bad++ >= BOOK_PROBLEMS_LISTED)
        return;
    char why[512], text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    int n = number > 0 ? snprintf(text, sizeof text, "%s:%d: %s\n", im->name, number, why)
                       : snprintf(text, sizeof text, "%s: %s\n", im->name, why);
    size_t len = (size_t)n < sizeof text ? (size_t)n : sizeof text - 1;
    char *grown = realloc(rep->problems, im->problems_len + len + 1);
    if (!grown)
        return;             /* the count still says it; only its text is lost */
    memcpy(grown + im->problems_len, text, len + 1);
    rep->problems = grown;
    im->problems_len += len;
}

/*
 * An engine score a line carries: EPD's "ce N" operation (centipawn
 * evaluation, the EPD standard's opcode), else a comment's last "(+N)"
 * (xqf-match makebook's).  1 with *score, or 0.
 */
static int line_score(const char *line, size_t len, int *score)
{
    for (size_t i = 0; i + 3 < len; i++) {
        bool op_start = i == 0 || line[i - 1] == ' ' || line[i - 1] == ';' || line[i - 1] == '\t';
        if (op_start && strncmp(line + i, "ce ", 3) == 0) {
            char *end;
            long v = strtol(line + i + 3, &end, 10);
            if (end != line + i + 3 && v > -1000000 && v < 1000000) {
                *score = (int)v;
                return 1;
            }
        }
    }
    const char *hash = memchr(line, '#', len);
    for (const char *p = line + len; hash && p > hash; p--) {
        if (*p != '(' || (p[1] != '+' && p[1] != '-'))
            continue;
        char *end;
        long v = strtol(p + 1, &end, 10);
        if (end > p + 2 && *end == ')' && v > -1000000 && v < 1000000) {
            *score = (int)v;
            return 1;
        }
    }
    return 0;
}

/*
 * Takes one opening given as a book line (text; raw: the line as written,
 * for its score): checked, dropped when its position is known, else added.
 * Returns 0, or -1 when out of memory.
 */
static int take(Import *im, const char *text, const char *raw, size_t raw_len, int number)
{
    Opening o;
    uint64_t key;
    char msg[256];
    int rc = parse_line(text, &o, &key, im->moves, BOOK_MAX_MOVES, msg, sizeof msg);
    if (rc < 0)
        bad_opening(im, number, "%s", msg);
    if (rc <= 0)
        return 0;
    im->rep->read++;
    int seen = key_seen(im, key);
    if (seen != 0) {
        im->rep->duplicates += seen > 0;
        return seen < 0 ? -1 : 0;
    }
    if (add_opening(im->book, &o) != 0)
        return -1;
    int score;
    if (line_score(raw, raw_len, &score)) {
        BookReport *rep = im->rep;
        int a = abs(score);
        rep->score_min = rep->scored && rep->score_min < a ? rep->score_min : a;
        rep->score_max = rep->scored && rep->score_max > a ? rep->score_max : a;
        rep->scored++;
        im->score_sum += a;
    }
    return 0;
}

/* The openings of a text book (ours, FEN or EPD lines). 0 or -1 (out of memory). */
static int import_lines(Import *im, const char *text, BookFormat f)
{
    int number = 1;
    for (const char *line = text; *line; number++) {
        size_t len = strcspn(line, "\n");
        char buf[BOOK_LINE_MAX + 1];
        const char *p = line + strspn(line, " \t\r");
        if (f == BOOK_FORMAT_EPD && *p != '#' && *p != '\n' && *p) {
            /* EPD: the four fields of the position, then operations (no "moves") */
            size_t n = 0;
            for (int field = 0; field < 4 && p < line + len && *p != '\r'; field++) {
                size_t w = strcspn(p, " \t\r\n");
                if (n + w + 1 >= sizeof buf)
                    break;
                memcpy(buf + n, p, w);
                n += w;
                buf[n++] = ' ';
                p += w;
                p += strspn(p, " \t");
            }
            buf[n] = '\0';
        } else if (len < sizeof buf) {
            memcpy(buf, line, len);
            buf[len] = '\0';
        }
        if (len >= sizeof buf)
            bad_opening(im, number, "line too long");
        else if (take(im, buf, line, len, number) != 0)
            return -1;
        line += len + (line[len] == '\n');
    }
    return 0;
}

/*
 * The openings of a PGN file: each game's position after plies plies.  A
 * game pgn_read cannot read ends the file (a broken PGN cannot be read on
 * past it).  0 or -1 (out of memory).
 */
static int import_pgn(Import *im, FILE *f, int plies)
{
    PgnGame g = { 0 };
    int line = 0, rc = 0;
    char msg[256], text[BOOK_TEXT_MAX];
    for (;;) {
        /* the game's first line, for its name: blank lines skipped here */
        char *buf = NULL;
        size_t cap = 0;
        long at = ftell(f);
        ssize_t n;
        while ((n = getline(&buf, &cap, f)) > 0 && strspn(buf, " \t\r\n") == (size_t)n) {
            line++;
            at = ftell(f);
        }
        free(buf);
        if (n <= 0 || fseek(f, at, SEEK_SET) != 0)
            break;
        int first = line + 1;
        int got = pgn_read(f, &g, &line, msg, sizeof msg);
        if (got < 0) {
            bad_opening(im, 0, "%s", msg);
            break;
        }
        if (got == 0)
            break;
        if (g.rec.count < plies) {
            im->rep->short_games++;
            continue;
        }
        size_t len = (size_t)snprintf(text, sizeof text, "%s%s", g.rec.fen, plies ? " moves" : "");
        for (int i = 0; i < plies && i < BOOK_MAX_MOVES; i++) {
            text[len++] = ' ';
            move_text(g.rec.moves[i].move, text + len);
            len += strlen(text + len);
        }
        if ((rc = take(im, text, "", 0, first)) != 0)
            break;
    }
    pgn_game_free(&g);
    return rc;
}

Book *book_import(const char *path, BookFormat f, int plies, BookReport *rep, char *err, size_t errlen)
{
    memset(rep, 0, sizeof *rep);
    if (plies < 0 || plies > BOOK_MAX_MOVES) {
        snprintf(err, errlen, "%s: plies from 0 to %d", path, BOOK_MAX_MOVES);
        return NULL;
    }
    Import im = { .book = calloc(1, sizeof *im.book), .rep = rep, .name = path };
    char *text = NULL;
    FILE *file = NULL;
    int rc = -1;
    if (!im.book)
        snprintf(err, errlen, "%s: out of memory", path);
    else if (sha256_file(path, rep->sha256) != 0)
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
    else if (f == BOOK_FORMAT_PGN && !(file = fopen(path, "r")))
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
    else if (f != BOOK_FORMAT_PGN && !(text = book_read_text(path, err, errlen)))
        ;
    else if ((rc = file ? import_pgn(&im, file, plies) : import_lines(&im, text, f)) != 0)
        snprintf(err, errlen, "%s: out of memory", path);
    if (file)
        fclose(file);
    free(text);
    free(im.keys);
    if (rc == 0 && rep->bad > 0) {
        snprintf(err, errlen, "%s: %d bad opening%s, the first: %.*s", path, rep->bad, rep->bad == 1 ? "" : "s",
                 (int)strcspn(rep->problems ? rep->problems : "", "\n"), rep->problems ? rep->problems : "");
        rc = -1;
    } else if (rc == 0 && im.book->count == 0) {
        snprintf(err, errlen, "%s: no openings in the book", path);
        rc = -1;
    }
    if (rc != 0) {
        book_destroy(&im.book);
        return NULL;
    }
    rep->score_mean = rep->scored ? im.score_sum / rep->scored : 0;
    return im.book;
}

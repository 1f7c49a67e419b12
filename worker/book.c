#include "book.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fen.h"
#include "files.h"
#include "rules.h"

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
 * them).  Returns 1 for an opening, 0 for a blank or comment line, or -1
 * with a message in err.
 */
static int parse_line(const char *line, Opening *o, Move *moves, int max_moves, char *err,
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
        int rc = -1;
        if (len > BOOK_LINE_MAX)
            snprintf(msg, sizeof msg, "line too long");
        else
            rc = parse_line(line, &o, moves, BOOK_MAX_MOVES, msg, sizeof msg);
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

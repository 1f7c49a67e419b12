/*
 * book.h - opening books.
 *
 * A book is a text file with one opening per line:
 *     FEN [moves m1 m2 ...] [; EPD operations, ignored] [# comment]
 * FEN as fen.h reads it (2 to 6 fields; Pikafish letters, or H/E), the
 * moves in ICCS ("h2e2"), legal in turn.  Blank lines and lines starting
 * with '#' are ignored.  The position after the moves must be one where
 * the game goes on (not mated, not stalemated).  Any bad line makes the
 * whole book an error naming the file and the line, so that a match never
 * starts on a broken book.
 */
#ifndef XQF_BOOK_H
#define XQF_BOOK_H

#include <stddef.h>

#include "game.h"

typedef struct Book Book;

/* Reads a book. Returns it, or NULL with "FILE:LINE: problem" (or an I/O error) in err. */
Book *book_load(const char *path, char *err, size_t errlen);
/*
 * Reads a book from text in memory (the same lines, '\n'-separated; a line
 * may also end with "\r\n" or at the end of the text).  Returns it, or
 * NULL with "NAME:LINE: problem" in err.  book_load reads a file with it;
 * the worker makes a task's openings a book with it.
 */
Book *book_parse(const char *text, const char *name, char *err, size_t errlen);
/*
 * A text file's contents (for book_parse and the like), NUL-terminated, to
 * free(); NULL with "FILE: problem" in err (cannot read it, a NUL byte in
 * it, out of memory).
 */
char *book_read_text(const char *path, char *err, size_t errlen);
/* Frees the book and sets *b to NULL; safe on NULL. */
void book_destroy(Book **b);
/* The number of openings (at least 1). */
int book_size(const Book *b);
/* Opening i (0 <= i < book_size); valid as long as the book. */
const Opening *book_opening(const Book *b, int i);
/* Sets *b to the position after opening o's moves (a book checked them when it read them). */
void book_board(const Opening *o, Board *b);

enum { BOOK_TEXT_MAX = 2048 };
/*
 * Opening i as a book line, "FEN" or "FEN moves m1 m2 ...", which
 * book_parse reads back as the same opening (xqf-tune stores a run's
 * openings so, after reading its book here).  Can't fail.
 */
void book_opening_text(const Book *b, int i, char out[BOOK_TEXT_MAX]);

/*
 * Books in the formats users have, for a run's openings (xqf-tune):
 *   BOOK_FORMAT_BOOK  ours, above (.book)
 *   BOOK_FORMAT_FEN   a FEN per line (.fen): a line of our book without moves
 *   BOOK_FORMAT_EPD   EPD (.epd): the first four FEN fields (board, side,
 *                     "- -"), then EPD operations, ignored but for "ce N"
 *   BOOK_FORMAT_PGN   games (.pgn, as pgn_read reads them, pgn.h): each
 *                     game's position after its first `plies` plies
 */
typedef enum { BOOK_FORMAT_BOOK, BOOK_FORMAT_FEN, BOOK_FORMAT_EPD, BOOK_FORMAT_PGN } BookFormat;

/* The format named name ("book", "fen", "epd", "pgn"); 0 with *f, or -1 when it names none. */
int book_format_named(const char *name, BookFormat *f);
/* The format of path by its extension (.fen, .epd, .pgn; any other: ours). This can't fail. */
BookFormat book_format_of(const char *path);
/* The format's name ("book", ...). This can't fail. */
const char *book_format_name(BookFormat f);

/* What book_import found beside the openings. */
typedef struct {
    int read;              /* openings read, duplicates included */
    int duplicates;        /* dropped: the same position (Zobrist key) as an earlier opening */
    int short_games;       /* PGN: games shorter than the plies asked for, skipped */
    int bad;               /* bad openings, each named in problems */
    char *problems;        /* "FILE:LINE: reason\n" per bad opening (the first 100), malloc'd; NULL: none */
    /*
     * Balance, where lines carry an engine score: EPD's "ce N" (centipawns,
     * side to move) or, in a comment, the "(+N)" xqf-match makebook writes.
     */
    int scored;            /* openings with a score */
    int score_min, score_max; /* the range of |score| */
    double score_mean;     /* the mean |score| */
    char sha256[65];       /* the file's SHA-256, lower-case hex */
} BookReport;

/*
 * Reads the book at path in format f (plies: PGN only, at least 0) into a
 * book without duplicates, every opening checked as book_parse checks it.
 * Returns the book with *rep filled, or NULL with err set: every bad
 * opening named in rep->problems ("FILE:LINE: reason", rep->bad of them,
 * err their count and the first), or an I/O problem.  Free rep with
 * book_report_free in either case.
 */
Book *book_import(const char *path, BookFormat f, int plies, BookReport *rep, char *err, size_t errlen);
/* Frees rep's problems (safe twice). This can't fail. */
void book_report_free(BookReport *rep);

#endif

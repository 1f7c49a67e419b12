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

#endif

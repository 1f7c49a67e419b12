/*
 * pgn.h - game records as PGN with Xiangqi tags.
 *
 * Tags: the seven-tag roster (White = Red, Black = Black), then
 * [Variant "xiangqi"], [SetUp "1"], [FEN ...] (the position the game,
 * opening moves included, started from), [TimeControl "10+0.1"] or
 * [TimeControl "-"] with [NodesPerMove "N"], [RedNet ...] and [BlackNet ...]
 * (the net each side evaluated with, when known), [Book ...] (the book the
 * opening came from, when known), [Termination ...] (PGN's
 * standard values: normal, adjudication, time forfeit, rules infraction,
 * abandoned), [PlyCount ...].  Moves are ICCS ("h2e2"), numbered; each
 * carries a comment: {book} for opening moves, else {+0.35/12 0.123s}
 * (score in pawns from the mover's view or +M3/-M2 for mates, depth, time),
 * none for a move with neither score nor time (a stored game kept without
 * scores, xqf-tune pgn), except {?/0 0.000s} on the last one when the game's
 * last comment would read as a move's.
 * A last comment says who won and why ({Black wins by time forfeit: ...}).
 *
 * Reading games back: pgn_read reads the PGN that pgn_write writes (the
 * match's --pgn, the cluster's `xqf-tune pgn`): the tags, the moves, and
 * each move's score comment ({+0.35/12 0.123s}, {+M3/9 ...}, {book}).
 */
#ifndef XQF_PGN_H
#define XQF_PGN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "game.h"

typedef struct {
    const char *event;
    const char *red, *black;   /* player names */
    int round;
    const char *time_control;  /* "10+0.1", or NULL with nodes */
    uint64_t nodes;
    const char *red_net, *black_net; /* the net each side evaluated with ("none": hand-crafted), or NULL */
    int threads;               /* > 0: each engine's search threads, a [Threads "N"] tag (0: no tag) */
    const char *book;          /* the opening book's name, or NULL (no tag) */
} PgnTags;

/*
 * A move's comment without its braces: "book", or "S/D Ts" (S "+0.35",
 * "+M3", "-M2" or "?").  Returns 0 with book, has_score, score, depth and
 * time_us set in *m, or -1 when it is something else (the game's last comment).
 */
int pgn_parse_move_comment(const char *comment, GameMove *m);

/* Writes one game (a blank line after it). Returns 0, or -1 on a write error. */
int pgn_write(FILE *out, const GameRecord *g, const PgnTags *tags);

enum { PGN_NAME_MAX = 64 };

/* A game read back from PGN. */
typedef struct {
    char red[PGN_NAME_MAX], black[PGN_NAME_MAX];
    int round;
    GameRecord rec;        /* fen, moves (book, has_score, score, depth, time), result */
} PgnGame;

/*
 * Reads the next game from f; *line counts the lines read (start it at 0).
 * Returns 1 with a game in *g, 0 at the end of the file, or -1 with
 * "line N: problem" in err (a tag, move, comment or result that is not
 * what pgn_write writes, or a move that is not legal).
 */
int pgn_read(FILE *f, PgnGame *g, int *line, char *err, size_t errlen);
/* Frees g's moves; safe twice. */
void pgn_game_free(PgnGame *g);

#endif

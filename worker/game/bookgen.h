/*
 * bookgen.h - generating a balanced opening book.
 *
 * Each candidate starts from one of a small hand list of classical opening
 * lines (central cannon against screen horses, same- and opposite-direction
 * cannons, elephant, horse, pawn and cross-palace cannon openings, ...) or
 * its mirror image, cut or extended by random legal moves to a length drawn
 * from [min_plies, max_plies].  It is kept when the game goes on, the side
 * to move is not in check, the position is new (Zobrist key) and a search
 * by the built-in engine (default parameters, fixed depth, cleared hash)
 * gives |score| <= max_score.  The same seed gives the same book as long as
 * the engine's search is the same.
 */
#ifndef XQF_BOOKGEN_H
#define XQF_BOOKGEN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    int count;              /* positions to write */
    uint64_t seed;
    int min_plies, max_plies;
    int max_score;          /* centipawns */
    int depth;              /* of the checking search */
} BookGenConfig;

/*
 * Writes cfg->count book lines ("FEN # moves (score)") to out.
 * Returns 0, or -1 with a message in err (e.g. too few positions pass).
 */
int bookgen_run(const BookGenConfig *cfg, FILE *out, char *err, size_t errlen);

#endif

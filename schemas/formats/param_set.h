/*
 * param_set.h - the syntax of a parameter set as runs keep it and tasks
 * carry it (params0/params1, protocol.md): "Name=value,..." over an
 * engine's defaults.
 *
 * Read as the engine reads a set (engine/params.h, params_apply_list):
 * items split at commas, empty items skipped, blanks around a name and
 * around a value ignored.  Each name must be an identifier (a letter or
 * '_', then letters, digits or '_', at most XQF_SET_NAME_MAX bytes) and
 * each value a decimal integer within int (every parameter of the engine
 * is an int, and so are a build's recorded bounds) or, for another
 * engine's float option (an SPSA spec's `float` line), a decimal with a
 * point: digits, '.', digits, an optional sign, no exponent, at most
 * XQF_SET_VALUE_MAX bytes (UCI has no float type: engines read such an
 * option's value as text, and "1e-3" is not a number every one reads).
 * Whether a name takes a float is for what plays it.  Hash, Threads and
 * hashsize (any case) are refused: a worker sets its engines' memory and
 * cores itself, and a run must not size them.  That is all a worker
 * checks before it sends a set to an engine build as `setoption name N
 * value V` lines, one an item: nothing else reaches the build's stdin,
 * so no item can end a line or carry another command.  Whether a name is
 * a parameter and a value within its bounds is for the engine's table, a
 * build's recorded list or the build itself to say.
 */
#ifndef XQF_PARAM_SET_H
#define XQF_PARAM_SET_H

#include <stdbool.h>
#include <stddef.h>

enum { XQF_SET_NAME_MAX = 64, XQF_SET_VALUE_MAX = 24 };

/* One item of a set, as read: its name (trimmed) and value. */
typedef struct {
    char name[XQF_SET_NAME_MAX + 1];
    int value;                       /* an integer's value (a decimal's: 0) */
    bool is_decimal;                 /* a decimal with a point: text holds it */
    char text[XQF_SET_VALUE_MAX + 1];   /* the value as written (trimmed), either kind */
} XqfSetItem;

/*
 * v as a set's decimal (always with a point, no exponent), with enough
 * places that a step of a millionth of range (a float option's max - min)
 * shows: 6 places, more for a range below 1 (at most 15), fewer when the
 * text would pass XQF_SET_VALUE_MAX bytes.  Trailing zeros after the first
 * place are dropped.  Returns 0, or -1 when even without places it does
 * not fit (|v| of 10^23 or more).
 */
int xqf_set_decimal(double v, double range, char *out, size_t size);

/*
 * Reads the next item of a set from *at (the set, then what this call
 * leaves there) into *item.  Returns 1 with the item and *at past it, 0
 * at the end of the set, or -1 with why (the bad item quoted, its control
 * characters shown as '?'; *at unchanged).  It allocates nothing.
 */
int xqf_set_next(const char **at, XqfSetItem *item, char *why, size_t size);

/* Whether every item of set is well-formed (xqf_set_next), else false with why. */
bool xqf_set_check(const char *set, char *why, size_t size);

#endif

/*
 * params.h - every tunable number of the engine, defined once.
 *
 * params.def holds one line per parameter:
 *     PARAM(Name, default, min, max, c_end, r_end)
 * and is included several times to produce the Params struct, its defaults,
 * and the descriptor table that drives UCI options (`setoption name Name
 * value 3`), parameter files, the wire encoding by name and the hash of a
 * set.  All parameters are integers (scaled where fractions are needed);
 * c_end and r_end are the SPSA hints: the perturbation size and the
 * learning rate at the end of a run, as Fishtest's SPSA expects them.
 *
 * Parameter file format (text, UTF-8/ASCII):
 *     # a comment
 *     NullR = 3
 *     PieceRookMg = 920
 * one `name = value` per line (the `=` may be replaced by spaces); blank
 * lines and `#` comments are ignored; names are case-sensitive; an unknown
 * name, a value that is not an integer, a value out of its range or a name
 * given twice is an error naming the line.  Names not in the file keep
 * their current values.
 *
 * A tuned build compiles such a file in as the defaults:
 *     cmake -DXQF_PARAMS_FILE=/path/to/tuned.params ...
 */
#ifndef XQF_PARAMS_H
#define XQF_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
#define PARAM(name, def, lo, hi, c_end, r_end) int name;
#include "params.def"
#undef PARAM
} Params;

typedef struct {
    const char *name;
    size_t offset; /* of the int in Params */
    int def, min, max;
    double c_end, r_end;
} ParamInfo;

extern const ParamInfo PARAM_INFO[];
extern const int PARAM_COUNT;

/* Each parameter's index in PARAM_INFO (PARAM_NullR, ...); PARAM_TOTAL == PARAM_COUNT. */
enum {
#define PARAM(name, def, lo, hi, c_end, r_end) PARAM_##name,
#include "params.def"
#undef PARAM
    PARAM_TOTAL
};

/* The defaults (those compiled in: the table's, or a tuned build's). */
void params_default(Params *p);
/* The descriptor of a parameter, or NULL. Names are case-sensitive; see params_find_nocase. */
const ParamInfo *params_find(const char *name);
/* The same, ignoring case (UCI option names are case-insensitive). */
const ParamInfo *params_find_nocase(const char *name);
static inline int params_value(const Params *p, const ParamInfo *info)
{
    return *(const int *)((const char *)p + info->offset);
}
static inline void params_store(Params *p, const ParamInfo *info, int value)
{
    *(int *)((char *)p + info->offset) = value;
}
/*
 * Sets one parameter from text ("3"); checks the name and the range.
 * Returns 0, or -1 with a message in err (p unchanged).
 */
int params_set(Params *p, const char *name, const char *value, char *err, size_t errlen);
/*
 * Applies "Name=value" overrides separated by commas ("NullR=2,FutilityMargin=150").
 * Returns 0, or -1 with a message in err (p unchanged).
 */
int params_apply_list(Params *p, const char *list, char *err, size_t errlen);
/* Reads a parameter file (format above) from text. Returns 0, or -1 with a message (p unchanged). */
int params_parse(Params *p, const char *text, char *err, size_t errlen);
/* Reads a parameter file by path. Returns 0, or -1 with a message (p unchanged). */
int params_load(Params *p, const char *path, char *err, size_t errlen);
/* Writes every parameter in table order as "Name = value" lines. Returns 0 or -1 (errno set). */
int params_write(const Params *p, FILE *out);
/* A 64-bit FNV-1a hash over "Name=value\n" for every parameter: identifies a set. */
uint64_t params_hash(const Params *p);
/* Do two sets hold the same values? */
bool params_equal(const Params *a, const Params *b);

#endif

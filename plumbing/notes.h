/*
 * notes.h - rate-limited log lines: a line repeated about the same
 * subject (a key, a name, a kind of failure) is written at most once a
 * minute per subject, for the latest 32 subjects.  notes_due says whether
 * to write it now, and puts in more "" or " (N more since the previous
 * line)" for the line's end.  Not thread-safe: one per thread;
 * zero-initialised.
 */
#ifndef XQF_NOTES_H
#define XQF_NOTES_H

#include <stdbool.h>
#include <stdint.h>

enum { NOTES_SUBJECT_MAX = 112, NOTES_MORE_MAX = 48, NOTES_EVERY_MS = 60000 };

typedef struct {
    struct {
        char subject[NOTES_SUBJECT_MAX];   /* longer subjects are cut */
        int64_t at_ms;
        long held;
    } v[32];
} Notes;

bool notes_due(Notes *n, const char *subject, char more[NOTES_MORE_MAX]);

#endif

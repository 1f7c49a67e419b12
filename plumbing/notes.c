#include "notes.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"

bool notes_due(Notes *n, const char *subject, char more[NOTES_MORE_MAX])
{
    int64_t now = clock_now_ms();
    int oldest = 0, count = (int)(sizeof n->v / sizeof n->v[0]);
    char cut[NOTES_SUBJECT_MAX];
    snprintf(cut, sizeof cut, "%s", subject);
    more[0] = '\0';
    for (int i = 0; i < count; i++) {
        if (n->v[i].at_ms && strcmp(n->v[i].subject, cut) == 0) {
            if (now - n->v[i].at_ms < NOTES_EVERY_MS) {
                n->v[i].held++;
                return false;
            }
            if (n->v[i].held)
                snprintf(more, NOTES_MORE_MAX, " (%ld more since the previous line)", n->v[i].held);
            n->v[i].held = 0;
            n->v[i].at_ms = now;
            return true;
        }
        if (n->v[i].at_ms < n->v[oldest].at_ms)
            oldest = i;
    }
    snprintf(n->v[oldest].subject, sizeof n->v[oldest].subject, "%s", cut);
    n->v[oldest].at_ms = now;
    n->v[oldest].held = 0;
    return true;
}

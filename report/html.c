#include "html.h"

#include <string.h>

/* The bytes that are not written as they are: the five markup characters and the forbidden controls. */
static const char SPECIAL[] = "&<>\"'\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15"
                              "\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f";

void xqf_html_escape(const char *text, xqf_html_sink *put, void *to)
{
    for (const char *p = text; *p; p++) {
        size_t run = strcspn(p, SPECIAL);
        if (run > 0)
            put(to, p, run);
        p += run;
        if (!*p)
            break;
        const char *ref = *p == '&' ? "&amp;" : *p == '<' ? "&lt;" : *p == '>' ? "&gt;" : *p == '"' ? "&quot;"
                        : *p == '\'' ? "&#39;" : "&#xFFFD;";
        put(to, ref, strlen(ref));
    }
}

/*
 * frame.h - what the page files of web/pages/ share (not for web.c): the
 * frame of every page (head with its navigation, foot), the rows of a
 * table of settings, and the fields of a form with their messages.  Every
 * text goes through buf_html, the one escaper (report/html.h).
 */
#ifndef XQF_WEB_FRAME_H
#define XQF_WEB_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include "pages.h"
#include "store_lists.h"

/* The start of a page: doctype, title, the navigation by the visitor's rights; foot ends it. */
void head(Buf *b, const char *title, const Session *u);
void foot(Buf *b);
/* The hidden CSRF field of a form. */
void csrf_field(Buf *b, const Session *u);
/* A page's notice (NULL: none). */
void notice_line(Buf *b, const char *notice);
/* The start of an admin's form posted to action: the refusal when it had errors ("The X was not Y"), the token. */
void form_start(Buf *b, const Session *u, const char *action, int nerrors, const char *refused);

/*
 * A list's rows (store_lists.def) as a table: its columns' names as
 * headers, each cell escaped, numbers right-aligned; sortable by a click
 * on a header (web.js).  A column named "_..." is not shown: it is there
 * for extra (store_table_column finds it).  extra, when not NULL, adds cells at the end of
 * each row, headed extra_header (its own HTML: escape what it writes).
 */
typedef void ListExtra(Buf *b, const StoreTable *t, int row);
void list_table(Buf *b, const StoreTable *t, const char *extra_header, ListExtra *extra);

/* One "label: value" row of a table of settings (value escaped; key: its data-k for live updates, or NULL). */
void row(Buf *b, const char *label, const char *value, const char *key);
void row_num(Buf *b, const char *label, int64_t v, const char *key);

/* A form being written: the values given, the messages by field, and which of them a field showed. */
typedef struct {
    Buf *b;
    bool engines;                    /* the engine fields offer the records' names (a datalist "engines") */
    const Form *values;
    const FieldError *errors;
    int nerrors;
    bool shown[32];
} FormOut;

/* One field of a form: label, input with the value given (or the default), its message. */
void field(FormOut *fo, const char *name, const char *label, const char *def, const char *hint);
/* A field of several lines: a textarea with the text given. */
void textarea_field(FormOut *fo, const char *name, const char *label, const char *hint);
/* A yes/no field: a checkbox sending "1" when ticked (unticked: absent, no). */
void check_field(FormOut *fo, const char *name, const char *label, const char *hint);
/*
 * The messages no field of fo showed (a setting the form has no field
 * for: the server's book, say), each in a span "err-FIELD", into b after
 * the form's refusal line (its own HTML); nothing when fo has no message.
 */
void form_unshown_errors(Buf *b, const FormOut *fo, const char *refusal);

#endif

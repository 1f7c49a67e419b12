/*
 * store_lists.h - the queries of the pages that only list
 * (store_lists.def), read as tables of text: a page shows what the SQL
 * selected, its column aliases as headers, without a struct or a function
 * of its own in the store.
 */
#ifndef XQF_STORE_LISTS_H
#define XQF_STORE_LISTS_H

#include <stdbool.h>

#include "store.h"

typedef enum {
#define STORE_LIST(ID, NPARAMS, SQL) STORE_LIST_##ID,
#include "store_lists.def"
    STORE_LISTS
} StoreListId;

/*
 * What an event of the log (STORE_LIST_EVENTS) can be of: a run's, a
 * chain's, or its action's first word ("login": a sign-in).
 */
#define STORE_EVENT_OF_COUNT 7
extern const char *const STORE_EVENT_OF[STORE_EVENT_OF_COUNT];
/* Whether of is one of them. This can't fail. */
bool store_event_of_known(const char *of);

/* A list's rows: text cells, opaque (it holds the query's result). */
typedef struct StoreTable StoreTable;

/*
 * The rows of list id, its parameters params (as many as its line says,
 * text; NULL for SQL NULL): a table to free with store_table_free, or
 * NULL when the database failed (logged).
 */
StoreTable *store_list(Store *s, StoreListId id, const char *const *params);
void store_table_free(StoreTable **t);

int store_table_rows(const StoreTable *t);
int store_table_cols(const StoreTable *t);
/* Column col's name: its alias in the SQL. */
const char *store_table_header(const StoreTable *t, int col);
/* The column named name, or -1. */
int store_table_column(const StoreTable *t, const char *name);
/* Whether column col holds numbers (an integer, numeric or floating type). */
bool store_table_numeric(const StoreTable *t, int col);
/* A cell's text: "" for NULL (store_table_null tells them apart). */
const char *store_table_cell(const StoreTable *t, int row, int col);
bool store_table_null(const StoreTable *t, int row, int col);

#endif

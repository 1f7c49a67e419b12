/*
 * store_lists.c - the lists of store_lists.def as tables of text
 * (store_lists.h): a statement each, registered with the core.
 */
#include "store_lists.h"
#include "store_internal.h"

#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

struct StoreTable {
    PGresult *res;
};

static const StoreStatement LIST_STMT[STORE_LISTS] = {
#define STORE_LIST(ID, NPARAMS, SQL) [STORE_LIST_##ID] = { "xqf_list_" #ID, SQL, NPARAMS },
#include "store_lists.def"
};
const StoreStatements store_statements_lists = { LIST_STMT, STORE_LISTS };

const char *const STORE_EVENT_OF[STORE_EVENT_OF_COUNT] = { "run", "chain", "net", "engine", "user", "build", "login" };

bool store_event_of_known(const char *of)
{
    for (int i = 0; of && i < STORE_EVENT_OF_COUNT; i++)
        if (strcmp(of, STORE_EVENT_OF[i]) == 0)
            return true;
    return false;
}

StoreTable *store_list(Store *s, StoreListId id, const char *const *params)
{
    if ((int)id < 0 || id >= STORE_LISTS)
        return NULL;
    PGresult *res = store_run(s, &LIST_STMT[id], params, PGRES_TUPLES_OK);
    if (!res)
        return NULL;
    StoreTable *t = malloc(sizeof *t);
    if (!t) {
        PQclear(res);
        return NULL;
    }
    t->res = res;
    return t;
}

void store_table_free(StoreTable **t)
{
    if (!t || !*t)
        return;
    PQclear((*t)->res);
    free(*t);
    *t = NULL;
}

int store_table_rows(const StoreTable *t) { return PQntuples(t->res); }
int store_table_cols(const StoreTable *t) { return PQnfields(t->res); }
const char *store_table_header(const StoreTable *t, int col) { return PQfname(t->res, col); }

int store_table_column(const StoreTable *t, const char *name)
{
    /* not PQfnumber, which folds an unquoted name to lower case */
    for (int c = 0; c < PQnfields(t->res); c++)
        if (strcmp(PQfname(t->res, c), name) == 0)
            return c;
    return -1;
}

bool store_table_numeric(const StoreTable *t, int col)
{
    /* pg_type's fixed oids (catalog/pg_type.dat): int8, int2, int4, float4, float8, numeric */
    switch (PQftype(t->res, col)) {
    case 20: case 21: case 23: case 700: case 701: case 1700:
        return true;
    default:
        return false;
    }
}

const char *store_table_cell(const StoreTable *t, int row, int col) { return PQgetvalue(t->res, row, col); }
bool store_table_null(const StoreTable *t, int row, int col) { return PQgetisnull(t->res, row, col) != 0; }

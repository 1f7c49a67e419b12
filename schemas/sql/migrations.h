/*
 * migrations.h - the database's schema, compiled in by embed_migrations.cmake:
 * the numbered SQL migrations (schemas/sql/migrations/NNN_name.sql), its tables
 * and data, and the SQL functions (schemas/sql/functions/NAME.sql), one file a
 * function with its current body as CREATE OR REPLACE FUNCTION.  The
 * coordinator's store applies the migrations not yet in schema_migrations,
 * in order, each in its own transaction, then every function, in the
 * table's order (by name), in one transaction, with the grants their files
 * name, all under an advisory lock (store_migrate).
 */
#ifndef XQF_MIGRATIONS_H
#define XQF_MIGRATIONS_H

typedef struct {
    int version;             /* NNN */
    const char *name;        /* "001_schema" */
    const char *sql;         /* the file's text */
} XqfMigration;

typedef struct {
    const char *name;        /* "xqf_handback", the function the file defines */
    const char *grants;      /* the roles its "-- grant:" line names, by spaces: "xqf_web xqf_auditor", or "" */
    const char *sql;         /* the file's text: CREATE OR REPLACE FUNCTION xqf_handback(... */
} XqfFunction;

extern const XqfMigration XQF_MIGRATIONS[];   /* by increasing version */
extern const int XQF_MIGRATION_COUNT;
extern const XqfFunction XQF_FUNCTIONS[];     /* by name */
extern const int XQF_FUNCTION_COUNT;

#endif

/*
 * migrations.h - the numbered SQL migrations (schemas/migrations/NNN_name.sql),
 * compiled in by embed_migrations.cmake.  The coordinator's store applies
 * those not yet in schema_migrations, in order, each in its own
 * transaction, under an advisory lock (store_migrate).
 */
#ifndef XQF_MIGRATIONS_H
#define XQF_MIGRATIONS_H

typedef struct {
    int version;             /* NNN */
    const char *name;        /* "001_schema" */
    const char *sql;         /* the file's text */
} XqfMigration;

extern const XqfMigration XQF_MIGRATIONS[];   /* by increasing version */
extern const int XQF_MIGRATION_COUNT;

#endif

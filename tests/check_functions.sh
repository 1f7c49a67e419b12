#!/usr/bin/env bash
# check_functions.sh ROOT - fails (status 1, one line per offence) unless every
# SQL function lives in one file of schemas/sql/functions (docs/architecture.md,
# "A SQL function"):
#
#   - every function a migration creates (CREATE [OR REPLACE] FUNCTION name)
#     has its file, schemas/sql/functions/name.sql, unless a later migration
#     drops it (DROP FUNCTION name) and none creates it again (a function
#     whose signature changed is dropped by a migration and created again
#     by its file; a new function is only a file);
#   - migrations from FIRST_FILE_ONLY on (the first numbers after the files
#     came) create no function: a body changes in its file, a migration only
#     drops a function whose signature changes.  A body in such a migration
#     would be undone by the file, applied after the migrations.
#
# The files' own form (one CREATE OR REPLACE FUNCTION of the file's name) is
# checked when they are embedded (schemas/sql/embed_migrations.cmake); that each
# file's body is the database's, by test_store.
set -u
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
FIRST_FILE_ONLY=37
fail=0

# name -> 1 while it exists after the migrations read so far, 0 once dropped
declare -A alive
for f in schemas/sql/migrations/[0-9][0-9][0-9]_*.sql; do
    version=$((10#$(basename "$f" | cut -c1-3)))
    # one "create NAME" / "drop NAME" line per statement, in the file's order
    while read -r what name; do
        if [ "$what" = create ]; then
            alive[$name]=1
            if [ "$version" -ge "$FIRST_FILE_ONLY" ]; then
                echo "$f: creates function $name: its body belongs in schemas/sql/functions/$name.sql"
                fail=1
            fi
        else
            [ -n "${alive[$name]+x}" ] && alive[$name]=0
        fi
    done < <(grep -ioE '^(create( or replace)? function|drop function( if exists)?) +[a-z0-9_]+' "$f" |
             awk '{ print (tolower($1) == "create" ? "create" : "drop"), $NF }')
done

for name in "${!alive[@]}"; do
    if [ "${alive[$name]}" = 1 ] && [ ! -f "schemas/sql/functions/$name.sql" ]; then
        echo "schemas/sql/migrations: function $name has no file schemas/sql/functions/$name.sql"
        fail=1
    fi
done
exit $fail

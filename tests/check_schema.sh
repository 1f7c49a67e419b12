#!/usr/bin/env bash
# check_schema.sh ROOT BUILD - schemas/sql/schema.sql is the schema the
# migrations and function files make (ops/schema): a migration or a
# function file that changes the schema without the file made again fails
# here, with the difference and the command that makes it.  Needs
# XQF_TEST_DB's server (skipped without it, as the integration suites).
source "$(dirname "$0")/skip.sh"
set -u
root=$1 build=$2
[ -n "${XQF_TEST_DB:-}" ] || xqf_skip schema "XQF_TEST_DB is not set (ops/test sets it)"
made=$(mktemp)
trap 'rm -f "$made"' EXIT
XQF_BUILD=$build "$root/ops/schema" > "$made" || { echo "schema: ops/schema failed"; exit 1; }
if ! diff -u "$root/schemas/sql/schema.sql" "$made" > "$made.diff"; then
    head -n 60 "$made.diff"
    rm -f "$made.diff"
    echo "schema: schemas/sql/schema.sql is not the schema the migrations make: run ops/schema --write"
    exit 1
fi
rm -f "$made.diff"
echo "schema: schemas/sql/schema.sql is the migrated schema ($(wc -l < "$made") lines)"

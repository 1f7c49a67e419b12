#!/usr/bin/env bash
# suite.sh BIN [ARGS...] - one Criterion suite as ctest runs it, its skips
# reported as skips.  Criterion counts a test that called cr_skip as neither
# passed nor failed, and its runner exits 0 all the same, so ctest would say
# "Passed" for a suite that ran nothing (an integration suite without
# XQF_TEST_DB).  Here the suite writes its TAP report (Criterion's --tap),
# and a suite that failed keeps its status; one that skipped any test names
# each skipped test with its reason and exits 77, which ctest reports as
# "Skipped" (SKIP_RETURN_CODE, set by xqf_add_test).
#
# XQF_SKIP_LOG=FILE appends those lines to FILE (ops/test lists them at its
# end).  XQF_STRICT_SKIPS=1 (ops/test sets it under CI) turns a skip into a
# failure, except a skip whose reason starts with "n/a:" (the hardware or
# the build's configuration, not something ops/setup installs: no AVX2, a
# counting engine): in CI every dependency is installed, so a skip there
# means a broken set-up, not a test that may stay silent.
set -u
bin=${1:?usage: suite.sh BIN [ARGS...]}
shift
tap=$(mktemp "${TMPDIR:-/tmp}/xqf-suite.XXXXXX")
trap 'rm -f "$tap"' EXIT
"$bin" "$@" --tap="$tap"
rc=$?
[ "$rc" -eq 0 ] || exit "$rc"

# TAP 13 as Criterion writes it: "ok - suite::test  # SKIP reason".  Under
# --filter, Criterion lists the tests the filter left out as skipped with
# its own reason, "test was skipped" (ctest's ALONE entries split a suite
# so): those were not skipped, they belong to another entry.
filtered=0
for arg in "$@"; do
    [ "$arg" = --filter ] && filtered=1
done
skipped=$(sed -n 's/^ok - \([^ ]*\)  *# SKIP \(.*\)$/\1: \2/p' "$tap")
if [ "$filtered" = 1 ]; then
    skipped=$(grep -v -E '^[^ ]*: test was skipped$' <<< "$skipped" || true)
fi
[ -n "$skipped" ] || exit 0
name=$(basename "$bin")
while IFS= read -r line; do
    printf 'skipped: %s\n' "$line"
    if [ -n "${XQF_SKIP_LOG:-}" ]; then
        printf '%s %s\n' "${name#test_}" "$line" >> "$XQF_SKIP_LOG"
    fi
done <<< "$skipped"
if [ "${XQF_STRICT_SKIPS:-0}" = 1 ]; then
    not_allowed=$(grep -v -E '^[^ ]*: n/a:' <<< "$skipped")
    if [ -n "$not_allowed" ]; then
        printf 'suite.sh: %s skipped tests whose dependency ops/setup installs (XQF_STRICT_SKIPS=1): a failure here\n' \
            "$name"
        exit 1
    fi
fi
exit 77

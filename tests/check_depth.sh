#!/usr/bin/env bash
# ops/bench depth's reader (ops/depth_at_nodes.py): the depth a fixed-node
# search reaches at positions of real games, by phase.  One pair played by
# xqf-match gives the PGN; the report must have its rows and sane depths,
# and bad input must get a message and a non-zero exit.
set -euo pipefail
bin=$1 root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$bin/xqf-match" --engine name=a cmd="$bin/xqf-engine" --engine name=b cmd="$bin/xqf-engine" \
    --nodes 2000 --pairs 1 --concurrency 1 --seed 7 --pgn "$tmp/g.pgn" >/dev/null 2>&1
out=$(python3 "$root/ops/depth_at_nodes.py" "$bin/xqf-engine" "$tmp/g.pgn" 3000)
echo "$out"
grep -q '^go nodes 3000 from an empty hash, [0-9]* positions of 2 games$' <<<"$out" || fail "no header"
rows=$(grep -cE '^(28-32|20-27|12-19|2-11) ' <<<"$out" || true)
[ "$rows" -ge 1 ] || fail "no phase row"
# Every row: positions >= 1 and a median depth between 1 and 30 at 3,000 nodes.
awk '/^(28-32|20-27|12-19|2-11) / { if ($2 < 1 || $3 < 1 || $3 > 30) bad = 1 } END { exit bad }' <<<"$out" \
    || fail "a row out of range"
# 20 times the nodes reach a deeper median in the opening bucket.
deep=$(python3 "$root/ops/depth_at_nodes.py" "$bin/xqf-engine" "$tmp/g.pgn" 60000 | awk '$1 == "28-32" { print $3 }')
shallow=$(awk '$1 == "28-32" { print $3 }' <<<"$out")
[ -n "$deep" ] && [ "$deep" -gt "$shallow" ] || fail "60,000 nodes reached median $deep, 3,000 reached $shallow"

expect_error() {  # expect_error PATTERN ARGS...: a message matching PATTERN, exit non-zero
    local pat=$1 msg
    shift
    if msg=$(python3 "$root/ops/depth_at_nodes.py" "$@" 2>&1); then fail "exit 0 for: $*"; fi
    grep -q "$pat" <<<"$msg" || fail "for '$*' expected '$pat', got: $msg"
}
expect_error 'cannot read' "$bin/xqf-engine" "$tmp/none.pgn"
expect_error 'NODES is not a number' "$bin/xqf-engine" "$tmp/g.pgn" many
expect_error 'NODES must be at least 1' "$bin/xqf-engine" "$tmp/g.pgn" 0
expect_error 'cannot start' "$tmp/no-engine" "$tmp/g.pgn"
expect_error 'no game of at least 11 plies' "$bin/xqf-engine" /dev/null
printf '[Event "x"]\n[FEN "3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1"]\n\n%s\n' \
    "$(for i in $(seq 12); do printf 'a1a2 '; done)" >"$tmp/bad.pgn"
expect_error 'refused game position .*illegal move a1a2' "$bin/xqf-engine" "$tmp/bad.pgn"
echo "depth: ok"

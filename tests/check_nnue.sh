#!/usr/bin/env bash
# check_nnue.sh BIN SOURCE - the network's trainer (tuner/nnue) end to end, in seconds: the feature
# indexing against hand-worked examples, then `xqf-tune nnue train` on synthetic positions whose
# score is their material: the validation loss falls, the net file is docs/nnue.md's (header,
# size, name), the integer net agrees with the trainer's, the page is written, --resume goes on,
# --init starts from a parent net (untrained, the child is the parent),
# a file made by `xqf-tune data merge --dedup` trains,
# --engine's check passes against the engine's own `xqf-engine evalnet` (it prints exactly the
# numpy integer evaluation) and fails against a stand-in that is off by 10 cp; input that is not
# training data ends with status 2.
# Skipped (77) without Debian's python3-torch.
source "$(dirname "$0")/skip.sh"
set -u
bin=$1 src=$2
py=/usr/bin/python3
if ! $py -c 'import numpy, torch' 2>/dev/null; then
    xqf_skip nnue_train "$py has no numpy or torch (install python3-torch, ops/setup)"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "nnue: FAIL: $*"; [ -f "$tmp/log" ] && tail -20 "$tmp/log"; exit 1; }

$py "$src/tests/nnue/test_features.py" || fail "the feature, FEN and net-file unit tests"

$py "$src/tests/nnue/synth.py" "$tmp/syn.data" 4000 7 || fail "synthetic data"
mkdir "$tmp/out"
"$bin/xqf-tune" nnue train "$tmp/syn.data" --out "$tmp/out" --epochs 2 --batch 256 --lr 0.01 --threads 1 \
    --val-share 0.1 --html "$tmp/page.html" --engine "$bin/xqf-engine" --device cpu >"$tmp/log" 2>&1 ||
    fail "training exited with $?"
grep -q '^device: cpu (1 threads)' "$tmp/log" || fail "--device cpu: no 'device: cpu' line"

# The validation loss falls: after 2 epochs below half the initial net's.
mapfile -t val < <(sed -n 's/^epoch .*val loss \([0-9.]*\).*/\1/p' "$tmp/log")
[ ${#val[@]} -eq 3 ] || fail "the initial and 2 epochs' validation losses expected, got ${#val[@]}"
awk -v a="${val[0]}" -v b="${val[2]}" 'BEGIN { exit !(b < 0.5 * a) }' ||
    fail "validation loss did not fall enough: ${val[*]}"

# The net: one file named by its SHA-256, the header and size of docs/nnue.md.
net=$(ls "$tmp"/out/xqf-*.nnue 2>/dev/null)
[ "$(echo "$net" | wc -w)" -eq 1 ] || fail "one xqf-*.nnue in --out expected: $net"
[ "$(basename "$net")" = "xqf-$(sha256sum "$net" | cut -c1-12).nnue" ] || fail "$net is not named by its SHA-256"
$py - "$net" <<'EOF' || fail "the net file's header"
import struct, sys
data = open(sys.argv[1], "rb").read()
h = 0x811C9DC5
for c in b"XQF-HM6-256-SCR-OB8;QA127;QB64;S400":
    h = ((h ^ c) * 0x01000193) & 0xFFFFFFFF
magic, (version, arch, dlen) = data[:8], struct.unpack_from("<III", data, 8)
assert magic == b"XQFNNUE1" and version == 1 and arch == h, (magic, version, hex(arch))
assert 0 < dlen <= 4096 and b"seed 1" in data[20:20 + dlen], dlen
assert len(data) == 20 + dlen + 512 + 7560 * 256 * 2 + 8 * 512 * 2 + 8 * 4, len(data)
EOF

# The integer net against the trainer's (quantisation-aware: only the divisions part them).
line=$(grep '^quantisation:' "$tmp/log") || fail "no quantisation line"
max=$(sed -n 's/.*max |int - trainer| (cp) \([0-9.]*\);.*/\1/p' <<<"$line")
awk -v m="$max" 'BEGIN { exit !(m != "" && m <= 2) }' || fail "integer and trainer's eval differ by $max cp"
grep -q '^engine: .* 0 beyond .* 0 differ from the numpy integer' "$tmp/log" || fail "the --engine check"
grep -q '<svg' "$tmp/page.html" || fail "no chart in the page"

# --resume: one more epoch from the last checkpoint.
"$bin/xqf-tune" nnue train "$tmp/syn.data" --out "$tmp/resumed.nnue" --epochs 3 --batch 256 --lr 0.01 \
    --threads 1 --val-share 0.1 --resume "$tmp/out/checkpoints" >"$tmp/log" 2>&1 || fail "resume exited with $?"
grep -q '^resumed from .*epoch 2 done' "$tmp/log" && grep -q '^epoch 3/3 done' "$tmp/log" &&
    ! grep -q '^epoch [0-2]' "$tmp/log" || fail "resume did not go on at epoch 3"

# --init: a warm start from a parent net.  Its epoch 0 is the parent: no epoch at a learning rate too
# small to move a weight past half a rounding step exports the parent's weights, byte for byte after
# the description; trained for real, the child differs and names its parent.
"$bin/xqf-tune" nnue train "$tmp/syn.data" --out "$tmp/same.nnue" --epochs 1 --batch 4096 --lr 1e-7 \
    --threads 1 --val-share 0.1 --init "$net" >"$tmp/log" 2>&1 || fail "--init exited with $?"
grep -q "^init: from $(basename "$net")" "$tmp/log" || fail "--init: no 'init: from' line"
v0=$(sed -n 's/^epoch 0 .*val loss \([0-9.]*\).*/\1/p' "$tmp/log")
# (b2 alone is trained unrounded: its rounding moves the loss by about 1e-6)
awk -v a="$v0" -v b="${val[2]}" 'BEGIN { d = a - b; exit !(d * d <= (1e-3 * b) ^ 2) }' ||
    fail "--init: epoch 0's loss $v0 is not the parent's ${val[2]}"
$py - "$net" "$tmp/same.nnue" <<'PY' || fail "--init: the untrained child's weights are not the parent's"
import struct, sys
a, b = (open(p, "rb").read() for p in sys.argv[1:3])
body = lambda d: d[20 + struct.unpack_from("<I", d, 16)[0]:]
assert body(a) == body(b), "weights differ"
assert b"from the parent net " + sys.argv[1].rsplit("/", 1)[1].encode() in b, "no parent in the description"
PY
"$bin/xqf-tune" nnue train "$tmp/syn.data" --out "$tmp/child.nnue" --epochs 1 --batch 256 --lr 0.01 \
    --threads 1 --val-share 0.1 --init "$net" >"$tmp/log" 2>&1 || fail "--init (trained) exited with $?"
cmp -s <(tail -c 100000 "$net") <(tail -c 100000 "$tmp/child.nnue") && fail "--init: training changed nothing"

# A merged file (xqf-tune data merge: shuffled, each position once) is training data: the trainer reads it.
"$bin/xqf-tune" data merge "$tmp/syn.data" "$tmp/syn.data" --dedup --out "$tmp/merged.data" >"$tmp/log" 2>&1 ||
    fail "data merge exited with $?"
[ "$(sed -n 's/^Positions: //p' "$tmp/log")" -eq 4000 ] || fail "the merge of a file with itself is not its 4000 positions"
"$bin/xqf-tune" nnue train "$tmp/merged.data" --out "$tmp/merged.nnue" --epochs 1 --batch 1024 --threads 1 \
    >"$tmp/log" 2>&1 || fail "training on the merged file exited with $?"
grep -q '^epoch 1/1 done' "$tmp/log" && [ -s "$tmp/merged.nnue" ] || fail "no net from the merged file"

# An engine wrong by 10 cp fails the check (status 1).
FAKE_OFFSET=10 $py "$src/tuner/nnue/train.py" "$tmp/syn.data" --out "$tmp/x.nnue" --epochs 1 --batch 4096 \
    --threads 1 --engine "$src/tests/nnue/fake_evalnet.py" >"$tmp/log" 2>&1
[ $? -eq 1 ] || fail "an engine off by 10 cp was not refused"

# --device auto takes a GPU only where PyTorch sees one; cuda without one fails (status 1) with the reason
# instead of training on the CPU unasked.  (Where a GPU is there, auto must say cuda.)
"$bin/xqf-tune" nnue train "$tmp/syn.data" --out "$tmp/auto.nnue" --epochs 1 --batch 1024 --threads 1 \
    >"$tmp/log" 2>&1 || fail "training with --device auto (the default) exited with $?"
if $py -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    grep -q '^device: cuda' "$tmp/log" || fail "--device auto with a GPU: not trained on it"
else
    grep -q '^device: cpu' "$tmp/log" || fail "--device auto without a GPU: not on the CPU"
    "$bin/xqf-tune" nnue train "$tmp/syn.data" --out "$tmp/cuda.nnue" --epochs 1 --device cuda >"$tmp/log" 2>&1
    rc=$?
    [ $rc -eq 1 ] && grep -q 'device cuda: PyTorch sees no GPU' "$tmp/log" ||
        fail "--device cuda without a GPU: status $rc, expected 1 with the reason"
    [ ! -e "$tmp/cuda.nnue" ] && [ ! -e "$tmp/cuda.nnue.ckpt" ] || fail "--device cuda without a GPU wrote a net or checkpoints"
fi

# Input that is not training data: status 2 from xqf-tune and from the trainer itself.
expect2() {
    local what=$1; shift
    "$@" >"$tmp/log" 2>&1
    local rc=$?
    [ $rc -eq 2 ] || fail "$what: exit status $rc, expected 2"
    grep -q 'error: ' "$tmp/log" || fail "$what: no message"
}
printf 'not data at all' >"$tmp/text.data"
head -c 100 "$tmp/syn.data" >"$tmp/trunc.data"
{ head -c 62 "$tmp/syn.data"; head -c 54 /dev/zero; } >"$tmp/broken.data"
for f in text trunc broken; do
    expect2 "$f (trainer)" $py "$src/tuner/nnue/train.py" "$tmp/$f.data" --out "$tmp/x.nnue"
done
expect2 "text (xqf-tune)" "$bin/xqf-tune" nnue train "$tmp/text.data" --out "$tmp/x.nnue"
expect2 "trunc (xqf-tune)" "$bin/xqf-tune" nnue train "$tmp/trunc.data" --out "$tmp/x.nnue"
expect2 "bad --lambda" "$bin/xqf-tune" nnue train "$tmp/syn.data" --out "$tmp/x.nnue" --lambda 1.5
expect2 "no --out" "$bin/xqf-tune" nnue train "$tmp/syn.data"
expect2 "bad --device" "$bin/xqf-tune" nnue train "$tmp/syn.data" --out "$tmp/x.nnue" --device tpu
expect2 "bad --device (trainer)" $py "$src/tuner/nnue/train.py" "$tmp/syn.data" --out "$tmp/x.nnue" --device tpu
expect2 "no DATA" "$bin/xqf-tune" nnue train --out "$tmp/x.nnue"
expect2 "bad --resume" "$bin/xqf-tune" nnue train "$tmp/syn.data" --out "$tmp/x.nnue" --resume "$tmp"
expect2 "--init not a net" "$bin/xqf-tune" nnue train "$tmp/syn.data" --out "$tmp/x.nnue" --init "$tmp/syn.data"
expect2 "--init not a net (trainer)" $py "$src/tuner/nnue/train.py" "$tmp/syn.data" --out "$tmp/x.nnue" --init "$tmp/syn.data"
expect2 "--init missing" "$bin/xqf-tune" nnue train "$tmp/syn.data" --out "$tmp/x.nnue" --init "$tmp/none.nnue"
expect2 "--init with --resume" "$bin/xqf-tune" nnue train "$tmp/syn.data" --out "$tmp/x.nnue" --init "$net" \
    --resume "$tmp/out/checkpoints"
echo "nnue: trainer checked (val loss ${val[*]}; |int - trainer| <= $max cp)"

"""nnue_net - the network of docs/nnue.md: quantisation, the net file and the engine's integer arithmetic.

Everything here is numpy (no torch), so that a net file can be read and
evaluated where PyTorch is missing; the trainable model is nnue_model.py.
"""
import hashlib
import os
import struct

import numpy as np

from nnue_data import FEATURES, OUTPUT_BUCKETS, features

ARCH = "XQF-HM6-256-SCR-OB8;QA127;QB64;S400"
FILE_MAGIC = b"XQFNNUE1"
FILE_VERSION = 1
HIDDEN = 256
QA, QB = 127, 64
SCALE = 400                                  # eval_cp = 400 * out
W1_CLAMP = 6.0                               # b1 and W1: |acc| <= 33 * 6 * 127 fits int16
W2_CLAMP = 127.0 / 64.0                      # W2 * QB fits int8's range: a * W fits 16 bits
DESCRIPTION_MAX = 4096
HEADER_BYTES = 8 + 4 + 4 + 4
BODY_BYTES = HIDDEN * 2 + FEATURES * HIDDEN * 2 + OUTPUT_BUCKETS * 2 * HIDDEN * 2 + OUTPUT_BUCKETS * 4


def fnv1a32(text):
    """FNV-1a, 32 bits (Fowler, Noll, Vo), of a string's UTF-8 bytes."""
    h = 0x811C9DC5
    for byte in text.encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


ARCH_HASH = fnv1a32(ARCH)


class NetFloat:
    """The folded float net: b1 (256), W1 (7560, 256), W2 (8, 512), b2 (8), numpy float32/64."""

    def __init__(self, b1, w1, w2, b2):
        self.b1, self.w1, self.w2, self.b2 = b1, w1, w2, b2


class NetInt:
    """The quantised net as the file stores it: b1, W1, W2 int16; b2 int32."""

    def __init__(self, b1, w1, w2, b2, description=""):
        self.b1, self.w1, self.w2, self.b2 = b1, w1, w2, b2
        self.description = description


def quantise(net):
    """Rounds to nearest (docs/nnue.md), after the training clamps (a no-op for a trained net)."""
    b1 = np.rint(np.clip(net.b1, -W1_CLAMP, W1_CLAMP) * QA).astype(np.int16)
    w1 = np.rint(np.clip(net.w1, -W1_CLAMP, W1_CLAMP) * QA).astype(np.int16)
    w2 = np.rint(np.clip(net.w2, -W2_CLAMP, W2_CLAMP) * QB).astype(np.int16)
    b2 = np.rint(np.asarray(net.b2, dtype=np.float64) * QA * QB).astype(np.int32)
    return NetInt(b1, w1, w2, b2)


def encode(q, description):
    """The net file's bytes: header, description (UTF-8, at most 4,096 bytes), layers little-endian."""
    d = description.encode()
    if len(d) > DESCRIPTION_MAX:
        d = d[:DESCRIPTION_MAX].decode("utf-8", "ignore").encode()
    parts = [FILE_MAGIC, struct.pack("<III", FILE_VERSION, ARCH_HASH, len(d)), d,
             q.b1.astype("<i2").tobytes(), q.w1.astype("<i2").tobytes(),
             q.w2.astype("<i2").tobytes(), q.b2.astype("<i4").tobytes()]
    return b"".join(parts)


def write_net(q, description, out):
    """Writes the net to out (a file), or into out (a directory) as xqf-<12 hex of its SHA-256>.nnue; the path."""
    data = encode(q, description)
    path = out
    if os.path.isdir(out):
        path = os.path.join(out, "xqf-%s.nnue" % hashlib.sha256(data).hexdigest()[:12])
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    return path


class NetFileError(Exception):
    pass


def read_net(path):
    """Reads and checks a net file as the engine's reader does (NetFileError naming what is wrong)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < HEADER_BYTES or data[:8] != FILE_MAGIC:
        raise NetFileError(f"{path}: not a net file (magic)")
    version, arch, dlen = struct.unpack_from("<III", data, 8)
    if version != FILE_VERSION:
        raise NetFileError(f"{path}: format version {version}, expected {FILE_VERSION}")
    if arch != ARCH_HASH:
        raise NetFileError(f"{path}: architecture hash {arch:08x}, expected {ARCH_HASH:08x} ({ARCH})")
    if dlen > DESCRIPTION_MAX:
        raise NetFileError(f"{path}: description of {dlen} bytes, at most {DESCRIPTION_MAX}")
    want = HEADER_BYTES + dlen + BODY_BYTES
    if len(data) != want:
        raise NetFileError(f"{path}: {len(data)} bytes, the header implies {want}")
    p = HEADER_BYTES + dlen
    desc = data[HEADER_BYTES:p].decode("utf-8", "replace")

    def take(dtype, count):
        nonlocal p
        a = np.frombuffer(data, dtype=dtype, count=count, offset=p)
        p += a.nbytes
        return a

    b1 = take("<i2", HIDDEN)
    w1 = take("<i2", FEATURES * HIDDEN).reshape(FEATURES, HIDDEN)
    w2 = take("<i2", OUTPUT_BUCKETS * 2 * HIDDEN).reshape(OUTPUT_BUCKETS, 2 * HIDDEN)
    b2 = take("<i4", OUTPUT_BUCKETS)
    return NetInt(b1, w1, w2, b2, desc)


def _trunc_div(a, b):
    """C's integer division (towards zero) of int64 arrays by a positive int."""
    q = np.abs(a) // b
    return np.where(a < 0, -q, q)


def _accumulate(w, b, idx, offsets, counts, dtype):
    """b + the sum of w's rows over each record's features (np.add.reduceat over the concatenated rows)."""
    rows = w[idx].astype(dtype)
    acc = np.add.reduceat(rows, offsets, axis=0) if len(idx) else np.zeros((0, w.shape[1]), dtype)
    return acc + b.astype(dtype)


def eval_int(q, rec):
    """The engine's integer evaluation (cp, side to move's view) of each record, as docs/nnue.md's Arithmetic.

    Checks on the way what the engine relies on: the accumulator fits
    int16 and the output sum int32.  eval's product out * 400 is taken in
    64 bits (in 32 it overflows only past |eval| of about 264,000 cp).
    """
    idx_s, idx_o, off, cnt, ob = features(rec)
    acc_s = _accumulate(q.w1, q.b1, idx_s, off, cnt, np.int64)
    acc_o = _accumulate(q.w1, q.b1, idx_o, off, cnt, np.int64)
    acc = np.concatenate([acc_s, acc_o], 1)
    assert np.abs(acc).max(initial=0) <= 32767, "accumulator beyond int16"
    a = np.clip(acc, 0, QA)
    s = (a * a * q.w2[ob].astype(np.int64)).sum(1)
    assert np.abs(s).max(initial=0) < 2 ** 31, "output sum beyond int32"
    out = _trunc_div(s, QA) + q.b2[ob].astype(np.int64)
    return _trunc_div(out * SCALE, QA * QB)


def eval_float(net, rec):
    """The float net's eval_cp (side to move's view) of each record, in float64."""
    idx_s, idx_o, off, cnt, ob = features(rec)
    acc = np.concatenate([_accumulate(net.w1, net.b1, idx_s, off, cnt, np.float64),
                          _accumulate(net.w1, net.b1, idx_o, off, cnt, np.float64)], 1)
    v = np.clip(acc, 0, 1) ** 2
    return SCALE * ((v * net.w2[ob]).sum(1) + net.b2[ob])

"""nnue_data - XQFDATA1 training positions (worker/game/datagen.h) for the trainer.

Reading: files are read in blocks of records (never whole), checked as they
are read, split into training and validation by a hash of the position, and
shuffled through a bounded buffer.  Features: docs/nnue.md's HalfKA with
horizontally mirrored king buckets, computed with numpy over a whole block of
records at once (no Python loop per record).  FEN: the engine's notation
(engine/fen.c), for `xqf-engine evalnet`.
"""
import os

import numpy as np

MAGIC = b"XQFDATA1"
HEADER_BYTES = 8
RECORD_BYTES = 54

SQUARES = 90
FILES = 9
PIECE_INDEXES = 14                       # own king..pawn, then the other side's
KING_BUCKETS = 6
FEATURES = KING_BUCKETS * PIECE_INDEXES * SQUARES        # 7,560 real features
VIRTUAL = PIECE_INDEXES * SQUARES                        # 1,260 factoriser features
OUTPUT_BUCKETS = 8


class DataError(Exception):
    """Input that is not training data (a wrong header, a truncated or broken record): exit status 2."""


def record_count(path):
    """The number of records of a data file, after checking its header and size (DataError)."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(HEADER_BYTES)
    except OSError as e:
        raise DataError(f"{path}: cannot read: {e.strerror}")
    if head != MAGIC:
        raise DataError(f"{path}: not a training data file (no XQFDATA1 header)")
    body = size - HEADER_BYTES
    if body % RECORD_BYTES:
        raise DataError(f"{path}: truncated: {body} bytes after the header is not a whole number of "
                        f"{RECORD_BYTES}-byte records (the last is cut after {body % RECORD_BYTES} bytes)")
    return body // RECORD_BYTES


def expand_paths(paths):
    """DATA arguments: files as given, a directory as its *.data files in name order."""
    out = []
    for p in paths:
        if os.path.isdir(p):
            names = sorted(n for n in os.listdir(p) if n.endswith(".data"))
            if not names:
                raise DataError(f"{p}: a directory without *.data files")
            out.extend(os.path.join(p, n) for n in names)
        else:
            out.append(p)
    return out


def squares_of(rec):
    """The 90 nibbles of each record (n, 90) uint8: 0 empty, 1-7 Red, 9-15 Black."""
    b = rec[:, :45]
    sq = np.empty((len(rec), SQUARES), dtype=np.uint8)
    sq[:, 0::2] = b & 15
    sq[:, 1::2] = b >> 4
    return sq


def fields_of(rec):
    """Side to move, score (cp), result (0, 0.5, 1) and ply of each record, side to move's view."""
    stm = rec[:, 45].astype(np.int64)
    score = rec[:, 46:48].copy().view("<i2").reshape(-1).astype(np.float32)
    result = rec[:, 50].astype(np.float32) * 0.5
    ply = rec[:, 52:54].copy().view("<u2").reshape(-1)
    return stm, score, result, ply


def check_block(rec, path, first):
    """DataError naming the first broken record of a block (first: the block's first record index)."""
    sq = squares_of(rec)
    bad = (sq == 8).any(1) | (rec[:, 45] > 1) | (rec[:, 50] > 2)
    bad |= ((sq == 1).sum(1) != 1) | ((sq == 9).sum(1) != 1)
    if bad.any():
        i = int(np.argmax(bad))
        raise DataError(f"{path}: record {first + i} is not a position (a bad square, side, result or "
                        f"king count)")


def position_hash(rec):
    """A 64-bit hash of each record's board and side to move (bytes 0-45), splitmix64's finaliser per word.

    The validation split is by this hash: a position that occurs in several
    games (openings, repetitions) is always on one side of the split, so the
    validation loss is not flattered by positions the net trained on.
    """
    words = np.zeros((len(rec), 48), dtype=np.uint8)
    words[:, :46] = rec[:, :46]
    w = words.view("<u8")
    h = np.full(len(rec), 0x9E3779B97F4A7C15, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k in range(w.shape[1]):
            h = h ^ w[:, k]
            h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            h = h ^ (h >> np.uint64(31))
    return h


def is_validation(rec, share):
    """Whether each record is held out: its position hash falls in the lowest share of the range."""
    if share <= 0:
        return np.zeros(len(rec), dtype=bool)
    return (position_hash(rec) >> np.uint64(11)).astype(np.float64) < share * float(1 << 53)


def read_blocks(path, block=65536, start=0):
    """Yields (first index, records (n, 54) uint8) of a file in blocks, each checked."""
    with open(path, "rb") as f:
        f.seek(HEADER_BYTES + start * RECORD_BYTES)
        first = start
        while True:
            buf = f.read(block * RECORD_BYTES)
            if not buf:
                return
            if len(buf) % RECORD_BYTES:
                raise DataError(f"{path}: truncated while reading (the file shrank or is being written)")
            rec = np.frombuffer(buf, dtype=np.uint8).reshape(-1, RECORD_BYTES)
            check_block(rec, path, first)
            yield first, rec
            first += len(rec)


def validation_set(paths, share, limit, block=65536):
    """The held-out records of all files, at most limit: those with the smallest hashes (spread over every file)."""
    keep, keys = [], []
    total = 0
    for p in paths:
        for _, rec in read_blocks(p, block):
            h = position_hash(rec)
            sel = (h >> np.uint64(11)).astype(np.float64) < share * float(1 << 53)
            keep.append(rec[sel])
            keys.append(h[sel])
            total += int(sel.sum())
            if sum(len(k) for k in keys) > 2 * limit:
                keep, keys = [np.concatenate(keep)], [np.concatenate(keys)]
                order = np.argsort(keys[0], kind="stable")[:limit]
                keep, keys = [keep[0][order]], [keys[0][order]]
    if not keep:
        return np.zeros((0, RECORD_BYTES), dtype=np.uint8), 0
    rec, h = np.concatenate(keep), np.concatenate(keys)
    order = np.argsort(h, kind="stable")[:limit]
    return rec[order], total


def shuffled_training(paths, share, buffer, rng, block=65536):
    """Yields blocks of training records (validation ones left out) through a shuffle buffer.

    The files are read in an order drawn from rng, block after block; the
    buffer holds up to `buffer` records: when full it is permuted, its first
    half is emitted and refilled with new records, so a record can leave in
    any later round (a streaming shuffle in bounded memory, as tf.data's
    shuffle buffer; memory: 54 bytes a record).  The rest is emitted
    permuted at the end.
    """
    buf = np.empty((buffer, RECORD_BYTES), dtype=np.uint8)
    n = 0
    half = max(1, buffer // 2)
    for fi in rng.permutation(len(paths)):
        for _, rec in read_blocks(paths[fi], block):
            rec = rec[~is_validation(rec, share)]
            while len(rec):
                take = min(len(rec), buffer - n)
                buf[n:n + take] = rec[:take]
                n += take
                rec = rec[take:]
                if n == buffer:
                    buf[:] = buf[rng.permutation(buffer)]
                    yield buf[:half].copy()
                    n -= half
                    buf[:n] = buf[half:buffer]
    if n:
        yield buf[:n][rng.permutation(n)].copy()


def features(rec):
    """Active features of each record from both perspectives, the side to move's first.

    Returns (idx_stm, idx_other, offsets, counts, bucket): idx_* the
    concatenated real features of every record (record i's at offsets[i],
    counts[i] of them, one per piece; a record's squares in ascending
    order), bucket the output bucket.
    """
    sq = squares_of(rec)
    stm = rec[:, 45].astype(np.int64)
    n = len(rec)
    counts = (sq != 0).sum(1)
    offsets = np.zeros(n, dtype=np.int64)
    np.cumsum(counts[:-1], out=offsets[1:])
    r_idx, s = np.nonzero(sq)                              # every piece, record by record, squares ascending
    piece = sq[r_idx, s].astype(np.int64)
    color = piece >> 3
    ptype = piece & 7                                       # 1 king .. 7 pawn
    king = np.stack([np.argmax(sq == 1, 1), np.argmax(sq == 9, 1)], 1)   # (n, 2) each colour's king square
    out = []
    for side in (stm, 1 - stm):                             # the perspective's colour per record
        c = side[r_idx]
        k = king[np.arange(n), side]
        kfile = k % FILES
        mirror = (kfile == 5)[r_idx]
        krank = np.where(side == 1, 9 - k // FILES, k // FILES)
        bucket = krank * 2 + (kfile == 4)
        rank = np.where(c == 1, 9 - s // FILES, s // FILES)
        file = np.where(mirror, 8 - s % FILES, s % FILES)
        pidx = np.where(color == c, ptype - 1, 7 + ptype - 1)
        out.append((bucket[r_idx] * PIECE_INDEXES + pidx) * SQUARES + rank * FILES + file)
    out_bucket = np.minimum((counts - 2) // 4, OUTPUT_BUCKETS - 1)
    return out[0], out[1], offsets, counts, out_bucket


LETTERS = " KABNRCP kabnrcp"


def fen_of(rec):
    """The engine's FEN of one record: rank 9 first, Red uppercase, side w/b, then '- - 0 1'."""
    sq = squares_of(rec[None, :])[0]
    ranks = []
    for r in range(9, -1, -1):
        row, empty = "", 0
        for f in range(FILES):
            p = int(sq[r * FILES + f])
            if p == 0:
                empty += 1
                continue
            if empty:
                row += str(empty)
                empty = 0
            row += LETTERS[p]
        ranks.append(row + (str(empty) if empty else ""))
    return "/".join(ranks) + (" b" if rec[45] else " w") + " - - 0 1"

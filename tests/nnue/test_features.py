#!/usr/bin/python3
"""The trainer's features, FEN and net file against examples worked by hand from docs/nnue.md.

Squares are rank * 9 + file, rank 0 Red's back rank.  Each expected
feature is (bucket * 14 + piece index) * 90 + square after orientation and
mirror, worked out in the comments.
"""
import os
import struct
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tuner", "nnue"))
import nnue_data  # noqa: E402
import nnue_net  # noqa: E402

RK, RA, RB, RN, RR, RC, RP = range(1, 8)
BK, BA, BB, BN, BR, BC, BP = range(9, 16)


def record(pieces, stm, score=0, result=1):
    """A record of {square: nibble}, side to move 0 Red / 1 Black."""
    sq = np.zeros(90, dtype=np.uint8)
    for s, p in pieces.items():
        sq[s] = p
    rec = np.zeros(54, dtype=np.uint8)
    rec[:45] = sq[0::2] | (sq[1::2] << 4)
    rec[45] = stm
    rec[46:48] = np.frombuffer(np.int16(score).tobytes(), np.uint8)
    rec[50] = result
    return rec


START = {0: RR, 1: RN, 2: RB, 3: RA, 4: RK, 5: RA, 6: RB, 7: RN, 8: RR, 19: RC, 25: RC,
         27: RP, 29: RP, 31: RP, 33: RP, 35: RP}
START.update({81: BR, 82: BN, 83: BB, 84: BA, 85: BK, 86: BA, 87: BB, 88: BN, 89: BR, 64: BC, 70: BC,
              54: BP, 56: BP, 58: BP, 60: BP, 62: BP})


class Features(unittest.TestCase):
    def feats(self, rec):
        s, o, off, cnt, ob = nnue_data.features(rec[None, :])
        return sorted(s.tolist()), sorted(o.tolist()), int(ob[0])

    def test_start_position(self):
        s, o, ob = self.feats(record(START, 0))
        # Red king e0 (square 4): bucket rank 0 * 2 + (file e) 1 = 1, no mirror.
        self.assertIn((1 * 14 + 0) * 90 + 4, s)           # own king: 1264
        self.assertIn((1 * 14 + 7) * 90 + 85, s)          # Black's king e9 from Red: 1975
        self.assertIn((1 * 14 + 4) * 90 + 0, s)           # Red rook a0: 1620
        # Black sees the board with ranks flipped: its king e9 -> e0, bucket 1, and the same 32 features.
        self.assertEqual(s, o)
        self.assertEqual(ob, 7)                            # (32 - 2) / 4
        self.assertEqual(len(s), 32)

    def test_black_mirrored(self):
        # Red king d1 (12), Red rook a0 (0); Black king f8 (77), Black pawn c6 (56); Black to move.
        s, o, ob = self.feats(record({12: RK, 0: RR, 77: BK, 56: BP}, 1))
        # Black: king f8 -> oriented rank 9 - 8 = 1, file f (5) -> mirrored to d (3): square 12,
        # bucket 1 * 2 + 0 = 2.  Pawn c6 -> rank 3, file c -> g (6): 33.  Red rook a0 -> rank 9,
        # file a -> i (8): 89, index 7 + 4.  Red king d1 -> rank 8, file d -> f (5): 77, index 7.
        self.assertEqual(s, sorted([(2 * 14 + 0) * 90 + 12, (2 * 14 + 6) * 90 + 33,
                                    (2 * 14 + 11) * 90 + 89, (2 * 14 + 7) * 90 + 77]))
        self.assertEqual(s, [2532, 3093, 3227, 3599])
        # Red (the other side, second): king d1, rank 1 file d: bucket 2, no mirror, squares as they are.
        self.assertEqual(o, sorted([(2 * 14 + 4) * 90 + 0, (2 * 14 + 0) * 90 + 12,
                                    (2 * 14 + 13) * 90 + 56, (2 * 14 + 7) * 90 + 77]))
        self.assertEqual(o, [2532, 2880, 3227, 3746])
        self.assertEqual(ob, 0)                            # 4 pieces: (4 - 2) / 4

    def test_red_mirrored_bucket_4(self):
        # Red king f2 (23): rank 2, file f -> d: square 21, bucket 2 * 2 + 0 = 4.
        s, o, _ = self.feats(record({23: RK, 85: BK}, 0))
        self.assertEqual(s, sorted([(4 * 14 + 0) * 90 + 21, (4 * 14 + 7) * 90 + 85]))
        self.assertEqual(s, [5061, 5755])
        # Black king e9 -> e0: bucket 1; Red king f2 -> rank 7, file f (no mirror: Black's king is on e).
        self.assertEqual(o, [(1 * 14 + 0) * 90 + 4, (1 * 14 + 7) * 90 + 7 * 9 + 5])

    def test_block_matches_single(self):
        rng = np.random.default_rng(3)
        recs = []
        for _ in range(50):
            pieces = {int(rng.choice([3, 4, 5, 12, 13, 14, 21, 22, 23])): RK,
                      int(rng.choice([66, 67, 68, 75, 76, 77, 84, 85, 86])): BK}
            for s in rng.choice([s for s in range(27, 63)], int(rng.integers(0, 20)), replace=False):
                pieces[int(s)] = int(rng.choice([RN, RR, RC, BN, BR, BC]))
            recs.append(record(pieces, int(rng.integers(2))))
        block = np.stack(recs)
        s, o, off, cnt, ob = nnue_data.features(block)
        for i, r in enumerate(recs):
            s1, o1, ob1 = self.feats(r)
            self.assertEqual(sorted(s[off[i]:off[i] + cnt[i]].tolist()), s1)
            self.assertEqual(sorted(o[off[i]:off[i] + cnt[i]].tolist()), o1)
            self.assertEqual(int(ob[i]), ob1)


class Reading(unittest.TestCase):
    def test_shuffle_buffer_emits_each_training_record_once(self):
        import tempfile
        rng = np.random.default_rng(5)
        recs = np.stack([record({int(rng.choice([3, 4, 5])): RK, int(rng.choice([84, 85, 86])): BK,
                                 int(rng.integers(27, 63)): RR}, int(rng.integers(2)), score=i) for i in range(1000)])
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for k, part in enumerate((recs[:600], recs[600:])):
                paths.append(os.path.join(d, f"{k}.data"))
                with open(paths[-1], "wb") as f:
                    f.write(b"XQFDATA1" + part.tobytes())
            val = nnue_data.is_validation(recs, 0.2)
            self.assertTrue(0.1 < val.mean() < 0.3)
            out = np.concatenate(list(nnue_data.shuffled_training(paths, 0.2, 64, np.random.default_rng(1),
                                                                  block=50)))
            held, _ = nnue_data.validation_set(paths, 0.2, 10000, block=50)
        # Every training record once (the scores number them), none held out, and shuffled.
        got = np.sort(out[:, 46:48].copy().view("<i2").reshape(-1))
        self.assertEqual(got.tolist(), np.flatnonzero(~val).tolist())
        self.assertEqual(len(held), int(val.sum()))
        self.assertNotEqual(out[:, 46:48].copy().view("<i2").reshape(-1).tolist(), got.tolist())


class Fen(unittest.TestCase):
    def test_start(self):
        self.assertEqual(nnue_data.fen_of(record(START, 0)),
                         "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1")
        self.assertEqual(nnue_data.fen_of(record({12: RK, 77: BK}, 1)), "9/5k3/9/9/9/9/9/9/3K5/9 b - - 0 1")


class NetFile(unittest.TestCase):
    def test_header_and_arithmetic(self):
        self.assertEqual(nnue_net.fnv1a32(""), 0x811C9DC5)            # FNV-1a's offset basis
        self.assertEqual(nnue_net.fnv1a32("a"), 0xE40C292C)           # the published test vector
        rng = np.random.default_rng(1)
        net = nnue_net.NetFloat(rng.uniform(0, 0.5, 256), rng.normal(0, 0.05, (7560, 256)),
                                rng.uniform(-1, 1, (8, 512)), rng.uniform(-0.2, 0.2, 8))
        q = nnue_net.quantise(net)
        data = nnue_net.encode(q, "test")
        self.assertEqual(data[:8], b"XQFNNUE1")
        self.assertEqual(struct.unpack_from("<III", data, 8), (1, nnue_net.fnv1a32(
            "XQF-HM6-256-SCR-OB8;QA127;QB64;S400"), 4))
        self.assertEqual(len(data), 20 + 4 + 512 + 3870720 + 8192 + 32)
        # One position by hand: the engine's arithmetic on the quantised rows of its 4 features.
        rec = record({12: RK, 0: RR, 77: BK, 56: BP}, 1)
        acc_s = q.b1.astype(np.int64) + q.w1[[2532, 3093, 3227, 3599]].astype(np.int64).sum(0)
        acc_o = q.b1.astype(np.int64) + q.w1[[2532, 2880, 3227, 3746]].astype(np.int64).sum(0)
        a = np.clip(np.concatenate([acc_s, acc_o]), 0, 127)
        total = int((a * a * q.w2[0].astype(np.int64)).sum())
        out = int(total / 127) + int(q.b2[0])                         # C division: towards zero
        want = int(out * 400 / (127 * 64))
        self.assertEqual(int(nnue_net.eval_int(q, rec[None, :])[0]), want)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/python3
"""synth.py OUT N SEED - writes N synthetic XQFDATA1 records whose score is known: the material balance.

Kings on their palaces' squares, then 2-12 rooks, horses and cannons (they
may stand anywhere) of random colours on empty squares; the side to move at
random; score = the side to move's material (rook 900, cannon 450, horse
400) minus the other's, plus noise; the result drawn from sigmoid(score /
400).  A net that learns material lowers the loss well below a constant's.
"""
import sys

import numpy as np

VALUE = {4: 400, 5: 900, 6: 450}        # horse, rook, cannon by type


def main(out, n, seed):
    rng = np.random.default_rng(seed)
    rec = np.zeros((n, 54), dtype=np.uint8)
    palace = [r * 9 + f for r in range(3) for f in (3, 4, 5)]
    for i in range(n):
        board = np.zeros(90, dtype=np.uint8)
        board[rng.choice(palace)] = 1
        board[89 - rng.choice(palace)] = 9
        balance = 0
        for _ in range(rng.integers(2, 13)):
            sq = rng.choice(np.flatnonzero(board == 0))
            t = int(rng.choice([4, 5, 6]))
            black = rng.integers(2)
            board[sq] = t + 8 * black
            balance += -VALUE[t] if black else VALUE[t]
        stm = int(rng.integers(2))
        score = int(np.clip((-balance if stm else balance) + rng.normal(0, 30), -3000, 3000))
        rec[i, :45] = board[0::2] | (board[1::2] << 4)
        rec[i, 45] = stm
        rec[i, 46:48] = np.frombuffer(np.int16(score).tobytes(), np.uint8)
        rec[i, 50] = 2 if rng.random() < 1 / (1 + np.exp(-score / 400)) else 0
        rec[i, 52] = 20
    with open(out, "wb") as f:
        f.write(b"XQFDATA1")
        f.write(rec.tobytes())


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))

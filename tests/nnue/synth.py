#!/usr/bin/python3
"""synth.py OUT N SEED - writes N synthetic XQFDATA1 records whose score is known: the material balance.

Kings on their palaces' squares (on different files: kings may not face
each other), then 2-12 rooks, horses and cannons (they may stand anywhere,
at most two of a kind and colour, as the rules allow) of random colours on
empty squares; positions where the side that is not to move is in check
are drawn again (the engine refuses them); the side to move at random; score = the side to move's material (rook 900, cannon 450, horse
400) minus the other's, plus noise; the result drawn from sigmoid(score /
400).  A net that learns material lowers the loss well below a constant's.
"""
import sys

import numpy as np

VALUE = {4: 400, 5: 900, 6: 450}        # horse, rook, cannon by type


def attacked(board, sq, by):
    """Whether colour by (0 Red, 1 Black) attacks square sq with a rook, cannon or horse (the kings
    stand on different files, so they never attack each other)."""
    r0, f0 = divmod(sq, 9)
    for dr, df in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        r, f, screens = r0 + dr, f0 + df, 0
        while 0 <= r < 10 and 0 <= f < 9:
            p = int(board[r * 9 + f])
            if p:
                if p >> 3 == by and ((p & 7) == 5 and screens == 0 or (p & 7) == 6 and screens == 1):
                    return True
                screens += 1
                if screens > 1:
                    break
            r, f = r + dr, f + df
    for dr, df, lr, lf in ((2, 1, 1, 0), (2, -1, 1, 0), (-2, 1, -1, 0), (-2, -1, -1, 0),
                           (1, 2, 0, 1), (-1, 2, 0, 1), (1, -2, 0, -1), (-1, -2, 0, -1)):
        # a horse at (r0 + dr, f0 + df) reaches sq unless its leg, next to the horse towards sq, is blocked
        r, f = r0 + dr, f0 + df
        if 0 <= r < 10 and 0 <= f < 9 and int(board[r * 9 + f]) == 4 + 8 * by:
            leg_r, leg_f = r - lr, f - lf
            if not board[leg_r * 9 + leg_f]:
                return True
    return False


def main(out, n, seed):
    rng = np.random.default_rng(seed)
    rec = np.zeros((n, 54), dtype=np.uint8)
    palace = [r * 9 + f for r in range(3) for f in (3, 4, 5)]
    i = 0
    while i < n:
        board = np.zeros(90, dtype=np.uint8)
        red_king = int(rng.choice(palace))
        black_king = 89 - int(rng.choice([sq for sq in palace if sq % 9 != 8 - red_king % 9]))
        board[red_king] = 1
        board[black_king] = 9
        balance = 0
        count = {}
        for _ in range(rng.integers(2, 13)):
            t = int(rng.choice([4, 5, 6]))
            black = int(rng.integers(2))
            if count.get((t, black), 0) == 2:
                continue
            count[(t, black)] = count.get((t, black), 0) + 1
            sq = rng.choice(np.flatnonzero(board == 0))
            board[sq] = t + 8 * black
            balance += -VALUE[t] if black else VALUE[t]
        stm = int(rng.integers(2))
        if attacked(board, black_king if stm == 0 else red_king, stm):
            continue
        score = int(np.clip((-balance if stm else balance) + rng.normal(0, 30), -3000, 3000))
        rec[i, :45] = board[0::2] | (board[1::2] << 4)
        rec[i, 45] = stm
        rec[i, 46:48] = np.frombuffer(np.int16(score).tobytes(), np.uint8)
        rec[i, 50] = 2 if rng.random() < 1 / (1 + np.exp(-score / 400)) else 0
        rec[i, 52] = 20
        i += 1
    with open(out, "wb") as f:
        f.write(b"XQFDATA1")
        f.write(rec.tobytes())


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))

#!/usr/bin/python3
"""fake_evalnet.py evalnet NET - stands in for `xqf-engine evalnet NET` in the trainer's test.

Reads FEN lines and prints the net's integer evaluation of each with the
trainer's numpy copy of the engine's arithmetic, plus $FAKE_OFFSET (an
engine that is wrong by that much, for the failing case).  It checks the
trainer's FENs and its --engine plumbing, not the engine.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tuner", "nnue"))
import nnue_data  # noqa: E402
import nnue_net  # noqa: E402


def record_of(fen):
    board, side = fen.split()[:2]
    sq = np.zeros(90, dtype=np.uint8)
    for i, row in enumerate(board.split("/")):
        f = 0
        for ch in row:
            if ch.isdigit():
                f += int(ch)
            else:
                sq[(9 - i) * 9 + f] = nnue_data.LETTERS.index(ch)
                f += 1
    rec = np.zeros(54, dtype=np.uint8)
    rec[:45] = sq[0::2] | (sq[1::2] << 4)
    rec[45] = 1 if side == "b" else 0
    return rec


if sys.argv[1:2] != ["evalnet"] or len(sys.argv) != 3:
    sys.exit("usage: fake_evalnet.py evalnet NET")
net = nnue_net.read_net(sys.argv[2])
recs = np.stack([record_of(line) for line in sys.stdin if line.strip()])
for v in nnue_net.eval_int(net, recs):
    print(int(v) + int(os.environ.get("FAKE_OFFSET", "0")))

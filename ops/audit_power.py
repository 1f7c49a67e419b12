#!/usr/bin/env python3
"""audit_power.py AGREE [--fabricated F] [--positions N] [--alpha A] [--beta B]
                        [--legal L] [--trials T] [--seed S]

What the search audit (`xqf-tune audit`) can tell, by simulation: AGREE is an
honest worker's measured agreement with a search at the audit's depth
(ops/pgn_positions.py and xqf-match tactics measure it).  A worker that
replaces a share F of its moves by another legal move agrees at
AGREE (1 - F) + F (1 - AGREE) / (L - 1) (a made-up move agrees only when the
search's best was not the game's move and it happens to be the one drawn
among the L - 1 others, L legal moves).  Each trial runs the audit's SPRT
(H0 AGREE, H1 AGREE (1 - F), alpha, beta) over up to N positions and prints,
for the cheat and for honest workers at AGREE and a little below it, how
often each is flagged, cleared or left undecided, and the positions the
cheat's flag took (median, 95th percentile).
"""
import argparse
import math
import random


def sprt(p, p0, p1, lo, hi, n, rng):
    win, lose = math.log(p1 / p0), math.log((1 - p1) / (1 - p0))
    llr = 0.0
    for i in range(1, n + 1):
        llr += win if rng.random() < p else lose
        if llr >= hi:
            return "flagged", i
        if llr <= lo:
            return "cleared", i
    return "undecided", n


def main():
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("agree", type=float)
    a.add_argument("--fabricated", type=float, default=0.1)
    a.add_argument("--positions", type=int, default=2000)
    a.add_argument("--alpha", type=float, default=0.001)
    a.add_argument("--beta", type=float, default=0.05)
    a.add_argument("--legal", type=float, default=40)
    a.add_argument("--trials", type=int, default=20000)
    a.add_argument("--seed", type=int, default=1)
    o = a.parse_args()
    if not 0 < o.agree < 1 or not 0 < o.fabricated <= 1 or o.positions < 1:
        a.error("AGREE in (0, 1), F in (0, 1], N >= 1")
    rng = random.Random(o.seed)
    p0, p1 = o.agree, o.agree * (1 - o.fabricated)
    lo, hi = math.log(o.beta / (1 - o.alpha)), math.log((1 - o.beta) / o.alpha)
    cheat = o.agree * (1 - o.fabricated) + o.fabricated * (1 - o.agree) / (o.legal - 1)
    print(f"H0 {p0:.4f}, H1 {p1:.4f}, bounds [{lo:.2f}, {hi:.2f}], up to {o.positions} positions, {o.trials} trials")
    for name, p in (("cheat", cheat), ("honest", p0), ("honest -1 pt", p0 - 0.01), ("honest -2 pt", p0 - 0.02)):
        seen = {"flagged": [], "cleared": [], "undecided": []}
        for _ in range(o.trials):
            v, i = sprt(p, p0, p1, lo, hi, o.positions, rng)
            seen[v].append(i)
        shares = ", ".join(f"{k} {100 * len(v) / o.trials:.2f} %" for k, v in seen.items())
        line = f"{name:13s} agreement {p:.4f}: {shares}"
        if seen["flagged"] and name == "cheat":
            f = sorted(seen["flagged"])
            line += f"; flagged after {f[len(f) // 2]} positions (median), {f[int(0.95 * (len(f) - 1))]} (95th pct)"
        print(line)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""pgn_positions.py PGN... > SUITE - the positions of PGN games (xqf-match's or
xqf-tune pgn's) before each engine move, as a suite of positions
(worker/game/tactics.h) whose best move (bm) is the move the game played:
`xqf-match tactics --suite SUITE --engine ... --depth D` then prints how often
a search at depth D chooses the games' moves, the agreement the search audit
(`xqf-tune audit`) judges workers by.  A move counts when its comment holds a
score and depth ("{+0.12/9 0.051s}": the engine chose it); the first 256
plies only (a suite line's history is at most that long).
"""
import re
import sys

MOVE = re.compile(r"^[a-i][0-9][a-i][0-9]$")


def games(text):
    for block in re.split(r"\n(?=\[Event )", text):
        fen = re.search(r'^\[FEN "([^"]+)"\]', block, re.M)
        body = re.sub(r"^\[.*\]\s*$", "", block, flags=re.M)
        tokens = re.findall(r"\{[^}]*\}|[^\s{}]+", body)
        moves = []
        for t in tokens:
            if MOVE.match(t):
                moves.append([t, False])
            elif t.startswith("{") and moves and re.search(r"[+-]?[\d.M]+/\d+", t):
                moves[-1][1] = True
        if fen and moves:
            yield fen.group(1), moves


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: pgn_positions.py PGN... > SUITE")
    n = 0
    for path in sys.argv[1:]:
        try:
            text = open(path, encoding="utf-8").read()
        except OSError as e:
            sys.exit(f"pgn_positions.py: {e}")
        for g, (fen, moves) in enumerate(games(text)):
            for i, (move, engine) in enumerate(moves[:256]):
                if not engine:
                    continue
                before = " moves " + " ".join(m for m, _ in moves[:i]) if i else ""
                print(f'{fen}{before} ; bm {move}; id "{path} game {g + 1} ply {i}";')
                n += 1
    print(f"{n} positions", file=sys.stderr)


if __name__ == "__main__":
    main()

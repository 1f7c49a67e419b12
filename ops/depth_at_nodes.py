#!/usr/bin/env python3
"""The depth a fixed-node search reaches at positions of real games, by phase.

Usage: depth_at_nodes.py ENGINE PGN [NODES]

Takes every other game of PGN (xqf-tune pgn RUN, xqf-match --pgn), a
position every 25 plies from ply 10 on, and runs `go nodes NODES` (default
40,000) on each from an empty hash (ucinewgame), so the figure is a lower
bound on what the same search reaches inside a game, where the hash carries
over.  Prints the deepest completed iteration by the number of pieces on the
board: the depths an SPSA at that node count can see a parameter act at.
(A decided position, one with a single legal move or a forced mate, runs
to the search's last depth, 100: the max column shows it.)
"""
import re
import subprocess
import sys


def fail(msg):
    sys.exit("error: " + msg)


def games_of(text):
    games = []
    for block in text.split("[Event ")[1:]:
        fen = re.search(r'\[FEN "([^"]+)"\]', block)
        start = fen.group(1) if fen else "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"
        body = block[block.rfind("]") + 1:]
        games.append((start, re.findall(r"\b([a-i][0-9][a-i][0-9])\b", body)))
    return games


def main():
    if len(sys.argv) not in (3, 4):
        fail("usage: depth_at_nodes.py ENGINE PGN [NODES]")
    engine, path = sys.argv[1], sys.argv[2]
    try:
        nodes = int(sys.argv[3]) if len(sys.argv) == 4 else 40000
    except ValueError:
        fail("NODES is not a number: %s" % sys.argv[3])
    if nodes < 1:
        fail("NODES must be at least 1")
    try:
        games = games_of(open(path, encoding="utf-8").read())
    except OSError as e:
        fail("cannot read %s: %s" % (path, e.strerror))
    sample = [(fen, moves[:ply]) for fen, moves in games[::2] for ply in range(10, len(moves), 25)]
    if not sample:
        fail("%s has no game of at least 11 plies" % path)

    try:
        eng = subprocess.Popen([engine], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    except OSError as e:
        fail("cannot start %s: %s" % (engine, e.strerror))

    def send(line):
        eng.stdin.write(line + "\n")
        eng.stdin.flush()

    def until(token):
        lines = []
        for line in eng.stdout:
            lines.append(line)
            if line.startswith(token):
                return lines
        fail("the engine ended before '%s'" % token)

    send("uci")
    until("uciok")
    buckets = {}
    for fen, moves in sample:
        send("ucinewgame")
        send("position fen %s%s" % (fen, " moves " + " ".join(moves) if moves else ""))
        # The engine's own FEN of the position (`d`): it checks the moves,
        # and its board is what the pieces are counted on.
        send("d")
        now = None
        for line in until("info string fen "):
            if line.startswith("info string error: "):
                fail("the engine refused game position %s: %s" % (fen, line[len("info string error: "):].strip()))
            now = line
        n = sum(ch.isalpha() for ch in now.split()[3])
        send("go nodes %d" % nodes)
        depth = 0
        for line in until("bestmove"):
            m = re.match(r"info depth (\d+)", line)
            if m:
                depth = max(depth, int(m.group(1)))
        key = "28-32" if n >= 28 else "20-27" if n >= 20 else "12-19" if n >= 12 else "2-11"
        buckets.setdefault(key, []).append(depth)
    send("quit")
    eng.wait()

    print("go nodes %d from an empty hash, %d positions of %d games" % (nodes, len(sample), len(games)))
    print("pieces  positions  median  p10  p90  max  depth>=8  depth>=12")
    for key in ("28-32", "20-27", "12-19", "2-11"):
        d = sorted(buckets.get(key, []))
        if d:
            pct = lambda q: d[min(len(d) - 1, int(q * len(d)))]
            print("%-7s %9d %7d %4d %4d %4d %8.0f%% %9.0f%%" % (
                key, len(d), pct(0.5), pct(0.1), pct(0.9), d[-1],
                100.0 * sum(x >= 8 for x in d) / len(d), 100.0 * sum(x >= 12 for x in d) / len(d)))


main()

#!/usr/bin/env python3
"""Two or more checkouts of slidepdb side by side, in one sitting: Korf's 100
15-puzzles (search time, one thread) and 24-puzzles (node rate, one thread), each
tree in a fresh process per round, the trees alternating; prints a markdown table.

    .venv/bin/python scripts/bench_trees.py --db-dir DIR TREE [TREE ...] [--korf24 28] [--rounds 2]

For a change that should not cost speed (code moved, the kernel's arguments
regrouped): ``git worktree add ../base REV`` and compare ``../base`` with ``.``.
``DIR`` holds the 4x4 7-8 file and the 5x5 6-6-6-6 file (``scripts/bench_solve.py``
says how to build them).  Tables are loaded and each tree's kernels compiled (and
cached in that tree) before any timing; every answer is simulated and its length
compared with the published one.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from benchdata import DATA

# run inside one tree's process: its own code first on sys.path
PROBE = r"""
import json, sys
from pathlib import Path
cfg = json.loads(sys.argv[1])
sys.path.insert(0, cfg["tree"])
from pdb_builder.formats import read_file
from pdb_builder.moves import check_moves
try:
    from solver.search.searcher import Searcher
    from solver.search.tables import heuristic_for
except ImportError:  # a checkout from before the solver's rooms
    from solver.ida import Searcher
    from solver.tables import heuristic_for

def run(recs, db_dir):
    s = Searcher(heuristic_for(recs[0].board.shape, db_dir))
    s.python_first = False
    s.solve(recs[0].board, node_limit=10_000)  # kernels loaded (compiled at a tree's first run)
    seconds = nodes = 0
    for r in recs:
        res = s.solve(r.board)
        assert res.optimal and res.length == r.expected_length and check_moves(r.board, res.moves).ok, r.ident
        seconds, nodes = seconds + res.seconds, nodes + res.nodes
    return seconds, nodes

data = Path(cfg["data"])
k100 = read_file(str(data / "korf100.txt")).records
k24 = [r for r in read_file(str(data / "korf24.txt")).records if r.ident in cfg["ids"]]
out = {"korf100": run(k100, cfg["db"])}
if k24:
    out["korf24"] = run(k24, cfg["db"])
print(json.dumps(out))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trees", nargs="+", help="checkout folders")
    ap.add_argument("--db-dir", required=True)
    ap.add_argument("--korf24", nargs="*", default=["28"], help="24-puzzle instance numbers (none: skip)")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    trees = [str(Path(t).resolve()) for t in a.trees]
    rows = []
    for k in range(1, a.rounds + 1):
        for tree in trees:
            cfg = {"tree": tree, "data": str(DATA), "db": str(Path(a.db_dir).resolve()), "ids": a.korf24}
            done = subprocess.run(
                [sys.executable, "-c", PROBE, json.dumps(cfg)], capture_output=True, text=True, cwd=tree
            )
            if done.returncode:
                print(done.stderr, file=sys.stderr)
                return 1
            res = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append((k, tree, res))
            print(f"round {k} {tree}: {res}", file=sys.stderr, flush=True)
    ids = ", ".join(f"#{i}" for i in a.korf24)
    print(f"| round | tree | Korf's 100: search s (nodes) | 24-puzzle {ids}: s, nodes, M nodes/s |")
    print("|---:|---|---:|---:|")
    for k, tree, res in rows:
        s100, n100 = res["korf100"]
        cell = "-"
        if "korf24" in res:
            s24, n24 = res["korf24"]
            cell = f"{s24:.1f}, {n24:,}, {n24 / s24 / 1e6:.2f}"
        print(f"| {k} | {tree} | {s100:.3f} ({n100:,}) | {cell} |")
    return 0


if __name__ == "__main__":
    from benchdata import run_keeping_tables

    sys.exit(run_keeping_tables(main))

#!/usr/bin/env python3
"""Wall-free tables read through the diagonal reflection on walled layouts that are
not symmetric under it: the DevQuiz 4x4 walled boards with such layouts, solved
optimally without and with the reflected reading, alternating (two rounds).

    .venv/bin/slidepdb build 4x4 --goal devquiz --partition 6-6-3 --db-dir DIR
    .venv/bin/python scripts/bench_reflection.py DIR
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "devquiz2011" / "problems.txt"


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from pdb_builder.formats import read_file
    from solver.search.searcher import Searcher
    from solver.search.tables import heuristic_for

    db = sys.argv[1] if len(sys.argv) > 1 else "databases"
    recs = [r for r in read_file(str(DATA)).records if r.board and r.board.shape.walls]
    boards = [r.board for r in recs if r.board.shape.width == r.board.shape.height == 4]
    asym = [b for b in boards if b.shape.transpose_map is None]
    print(f"{len(boards)} walled 4x4 boards, {len(asym)} with walls not symmetric under the diagonal\n")
    print("| reading | mean h0 | nodes | seconds | total length |")
    print("|---|---|---|---|---|")
    for reflect in (False, True, False, True):
        searchers: dict = {}
        h0 = nodes = length = 0
        t = time.perf_counter()
        for board in asym:
            if board.shape not in searchers:
                searchers[board.shape] = Searcher(heuristic_for(board.shape, db, reflect=reflect))
            res = searchers[board.shape].solve(board)
            assert res.optimal
            h0, nodes, length = h0 + res.h0, nodes + res.nodes, length + res.length
        seconds = time.perf_counter() - t
        name = "direct + reflected" if reflect else "direct only"
        print(f"| {name} | {h0 / len(asym):.2f} | {nodes:,} | {seconds:.1f} | {length:,} |")
    return 0


if __name__ == "__main__":
    from benchdata import run_keeping_tables

    sys.exit(run_keeping_tables(main))

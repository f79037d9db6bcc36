#!/usr/bin/env python3
"""A*+IDA* (Bu & Korf 2019; :mod:`solver.search.frontier`) against IDA* alone, side by side
in one sitting: the same tables, the same automaton, the same threads.

    .venv/bin/python scripts/bench_frontier.py --db-dir DIR [--problems FILE] [--first N]
        [--lines 1 2 ...] [--korf24 25 28 ...] [--frontier 100000 1000000] [--prune 12]
        [--threads 1] [--results FILE]

For each board: IDA* alone, then A*+IDA* with each frontier size N (the A* part keeps at
most N open nodes).  Columns: the length, IDA*'s nodes and seconds, then for each N the
open nodes kept (0: the A* part met the goal), A*+IDA*'s nodes (the A* part's and the walks down the frontier's paths
included) and seconds, and both against IDA*'s; the nodes of the iterations before the
last and of the last one, against IDA*'s, say where the difference comes from.  Nodes are
exact; seconds are this machine's.  Every answer is simulated and its length checked
against IDA*'s.  ``--prune`` fixes the automaton's depth (0: deepened as the run does,
which makes a second search of a board start deeper than its first).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from benchdata import DATA, ROOT


def _split(result) -> tuple[int, int]:
    """(nodes before the last iteration, of the last one): the A* part (a bound that outgrew
    the size included) counts before it; an answer the A* part found counts as its last."""
    its = result.iterations
    if result.frontier is None or result.frontier[0] == 0:  # IDA* alone, or the A* part found it
        before = sum(n for _, n, _ in its)
    else:
        before = result.frontier[1] + sum(n for _, n, _ in its[result.frontier[2] :])
    return before, result.nodes - before


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db-dir", required=True)
    ap.add_argument("--problems", default=str(DATA / "korf100.txt"))
    ap.add_argument("--first", type=int, default=None)
    ap.add_argument("--lines", type=int, nargs="+", default=None)
    ap.add_argument("--korf24", type=int, nargs="+", default=None, help="Korf's 24 instances (data/korf24.txt)")
    ap.add_argument("--frontier", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--prune", type=int, default=12)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--results", default=None)
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from pdb_builder.formats import read_file
    from pdb_builder.moves import check_moves
    from solver.search.searcher import Searcher
    from solver.search.tables import heuristic_for

    problems, lines = a.problems, a.lines
    if a.korf24:
        problems, lines = str(DATA / "korf24.txt"), a.korf24
    recs = [r for r in read_file(problems).records[: a.first] if lines is None or r.index in lines]
    header = ["line", "length", "IDA* nodes", "IDA* s"]
    for n in a.frontier:
        header += [f"{n}: kept", "nodes", "ratio", "before the last", "the last", "s", "s ratio"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    rows = []
    searchers: dict = {}
    for r in recs:
        key = r.board.shape
        if key not in searchers:
            s = searchers[key] = Searcher(heuristic_for(key, a.db_dir), prune=a.prune or None)
            s.python_first = False
            s.solve(r.board, node_limit=1000)  # the kernel loaded before anything is timed
        s = searchers[key]
        base = s.solve(r.board, threads=a.threads, frontier=0)
        assert base.optimal and check_moves(r.board, base.moves).ok
        b_before, b_last = _split(base)
        row = [r.index, base.length, base.nodes, round(base.seconds, 2)]
        for n in a.frontier:
            t0 = time.perf_counter()
            x = s.solve(r.board, threads=a.threads, frontier=n)
            sec = time.perf_counter() - t0
            assert x.optimal and check_moves(r.board, x.moves).ok and x.length == base.length, (r.index, n)
            before, last = _split(x)
            row += [
                x.frontier[0] if x.frontier else 0,
                x.nodes,
                round(x.nodes / max(base.nodes, 1), 3),
                round(before / max(b_before, 1), 3),
                round(last / max(b_last, 1), 3),
                round(sec, 2),
                round(sec / max(base.seconds, 1e-9), 2),
            ]
        rows.append(row)
        print("| " + " | ".join(str(v) for v in row) + " |", flush=True)
    if a.results:
        with open(a.results, "w") as fh:
            json.dump({"command": " ".join(sys.argv), "header": header, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

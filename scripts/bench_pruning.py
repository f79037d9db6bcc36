"""Duplicate-path pruning side by side: the same boards searched with pruning automata
of several depths (pdb_builder/automaton.py), in one sitting; prints a markdown table.

    .venv/bin/python scripts/bench_pruning.py --db-dir DIR [--depths 2 auto 8 10 12 14] [--rounds 2]
    .venv/bin/python scripts/bench_pruning.py --db-dir DIR --problems FILE [--first N] [--node-limit N]

Without ``--problems``: Korf's 100 (``data/korf100.txt``) on the 4x4 tables of
``DIR`` (``slidepdb build 4x4 --partition 7-8``).  With it: the walled boards of that file
(DevQuiz or numeric lines; ``--lines``: those only) whose shape has tables in ``DIR`` (a
folder ``slidepdb run`` filled, or ``slidepdb build 5x5 --partition 6-6-6-6`` for
``korf24.txt``), each under ``--node-limit``.  ``auto`` is what the solver does by default: the
undo-only automaton, then deeper ones as a searcher's searches grow long.  Nodes are exact
(the same every round); seconds are each depth's least over ``--rounds`` rounds, the depths
interleaved within a round, after a warm-up.  Every answer is simulated; a length that
differs between depths stops the script.
"""

from __future__ import annotations

import argparse
import sys

from benchdata import DATA, ROOT, run_keeping_tables


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db-dir", required=True)
    ap.add_argument("--problems", default=None, help="a problem file (default: Korf's 100)")
    ap.add_argument("--first", type=int, default=None, help="only the first N boards")
    ap.add_argument("--lines", type=int, nargs="+", default=None, help="only these lines of the file")
    ap.add_argument("--depths", nargs="+", default=["2", "auto", "8", "10", "12", "14"])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--node-limit", type=int, default=None, help="generated nodes per board and depth")
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from pdb_builder.formats import read_file
    from pdb_builder.moves import check_moves
    from solver.search.automaton import automaton_for
    from solver.search.searcher import Searcher
    from solver.search.tables import heuristic_for

    path = a.problems or str(DATA / "korf100.txt")
    recs = [r for r in read_file(path).records[: a.first] if a.lines is None or r.index in a.lines]
    heuristics = {}
    for r in recs:
        shape = r.board.shape
        if shape.key not in heuristics:
            heuristics[shape.key] = heuristic_for(shape, a.db_dir)
    if a.problems:
        recs = [r for r in recs if heuristics[r.board.shape.key].lookups]
    if not recs or not all(heuristics[r.board.shape.key].lookups for r in recs):
        print(f"no boards with tables in {a.db_dir}", file=sys.stderr)
        return 1
    depths = [None if d == "auto" else int(d) for d in a.depths]
    built = {}  # depth -> (states, KiB, build seconds) summed over the shapes
    for d in depths:
        if d is not None:
            fsms = [automaton_for(heuristics[k].shape, d) for k in {r.board.shape.key for r in recs}]
            built[d] = (sum(f.states for f in fsms), sum(f.nbytes for f in fsms) >> 10, sum(f.seconds for f in fsms))
    nodes = {d: {} for d in depths}
    seconds = {d: {} for d in depths}
    lengths = {}
    for rnd in range(a.rounds):
        searchers = {d: {} for d in depths}  # fresh each round: ``auto`` starts from undos again
        for d in depths:
            for k, h in heuristics.items():
                searchers[d][k] = Searcher(h, prune=d)
        if rnd == 0:  # the kernel loaded before any timing
            Searcher(heuristics[recs[0].board.shape.key]).solve(recs[0].board, node_limit=2_000)
        for r in recs:
            for d in depths:
                res = searchers[d][r.board.shape.key].solve(r.board, node_limit=a.node_limit)
                if res.moves is not None:
                    assert check_moves(r.board, res.moves).ok, (r.index, d)
                    if lengths.setdefault(r.index, res.length) != res.length:
                        raise SystemExit(f"line {r.index}: length {res.length} at depth {d}, {lengths[r.index]} before")
                nodes[d][r.index] = (res.nodes, res.moves is not None, res.lower_bound)
                best = seconds[d].get(r.index)
                seconds[d][r.index] = res.seconds if best is None else min(best, res.seconds)
            print(
                f"  round {rnd + 1} line {r.index}: " + " ".join(f"{nodes[d][r.index][0]:,}" for d in depths),
                file=sys.stderr,
            )
    both = [r.index for r in recs if all(nodes[d][r.index][1] for d in depths)]
    base = sum(nodes[depths[0]][i][0] for i in both) or 1
    what = "Korf's 100" if not a.problems else f"{len(recs)} boards of {a.problems}"
    print(f"\nDuplicate-path pruning, {what} ({len(both)} proven at every depth)\n")
    print(
        "| automaton depth | states | KiB | build s | proven | lower bounds | nodes (all proven) | "
        f"vs depth {a.depths[0]} | search s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, d in zip(a.depths, depths):
        states, kib, build = built.get(d, ("grows", "", ""))
        proven = sum(nodes[d][i][1] for i in nodes[d])
        bounds = sum(nodes[d][i][2] for i in nodes[d])
        n = sum(nodes[d][i][0] for i in both)
        secs = sum(seconds[d][i] for i in both)
        build = f"{build:.2f}" if build != "" else ""
        states = f"{states:,}" if isinstance(states, int) else states
        print(f"| {name} | {states} | {kib} | {build} | {proven} | {bounds} | {n:,} | {n / base:.3f} | {secs:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(run_keeping_tables(main))

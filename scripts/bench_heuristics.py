#!/usr/bin/env python3
"""Heuristics side by side: IDA* on the same sample boards with the databases of
each folder (a folder's files are maxed, as the solver reads them); prints a markdown
table for docs/benchmarks.md.

    .venv/bin/python scripts/bench_heuristics.py --size 5x5 DIR1 DIR2 [DIR1,DIR2 ...]
                                                 [--sample-count 12] [--seed 1] [--rounds 2]

A comma joins folders into one heuristic.  The sample is what ``build --collection``
draws (``pdb_builder.make.collection.sample_boards``): uniformly random boards up to 16
free cells, random walks beyond.  Per heuristic: generated nodes (all boards, and the
boards every heuristic proved within the node limit: a stopped board only says it
needs more), expanded nodes, seconds (the best of ``--rounds``, the heuristics
taking turns), boards proven.
"""

from __future__ import annotations

import argparse
import sys

from benchdata import ROOT


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+", help="database folders; DIR1,DIR2 maxes both")
    ap.add_argument("--size", default="5x5")
    ap.add_argument("--goal", default="korf", choices=["korf", "devquiz"])
    ap.add_argument("--sample-count", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from pdb_builder.board import Shape, parse_size
    from pdb_builder.make.collection import sample_boards
    from pdb_builder.storage import default_db_dir
    from solver.search.measure import measure

    w, h = parse_size(a.size)
    shape = Shape.devquiz(w, h) if a.goal == "devquiz" else Shape.korf(w, h)
    boards, how = sample_boards(shape, a.sample_count, a.seed)
    sets = {}
    for spec in a.dirs:
        files = [p for d in spec.split(",") for p in sorted(default_db_dir(d).glob(f"{shape.key}.pdb.*.h5"))]
        if not files:
            print(f"{spec}: no {shape.key} database", file=sys.stderr)
            return 1
        sets[spec] = files
        measure(files, boards[:1], node_limit=10_000)  # map the tables, load the kernel
    best: dict[str, dict] = {}
    for rnd in range(a.rounds):
        for spec in sets if rnd % 2 == 0 else list(sets)[::-1]:
            fig = measure(sets[spec], boards)
            print(f"  {spec}: {fig['nodes']:,} nodes, {fig['seconds']:.2f} s", file=sys.stderr, flush=True)
            if spec not in best or fig["seconds"] < best[spec]["seconds"]:
                best[spec] = fig
    common = [i for i in range(len(boards)) if all(f["per-board"][i][1] for f in best.values())]
    print(f"{len(boards)} {shape.key} boards: {how}; {len(common)} proven by every heuristic\n")
    print("| databases | files | nodes | nodes on the boards all proved | expanded | s (best of rounds) | proven |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for spec, fig in best.items():
        names = ", ".join(p.name.split(".pdb.")[1].removesuffix(".h5") for p in sets[spec])
        shared = sum(fig["per-board"][i][0] for i in common)
        print(
            f"| {spec} | {names} | {fig['nodes']:,} | {shared:,} | {fig['expanded']:,} | {fig['seconds']:.2f} | "
            f"{fig['solved']}/{len(boards)} |"
        )
    return 0


if __name__ == "__main__":
    from benchdata import run_keeping_tables

    sys.exit(run_keeping_tables(main))

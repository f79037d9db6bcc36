#!/usr/bin/env python3
"""slidepdb against clausecker/24puzzle's ``pdbsearch`` on the same 24-puzzles, one search
thread each, in one sitting: expanded nodes, seconds and lengths, instance by instance.

``pdbsearch`` is built outside this repository (its build and the alignment shim it needs
here: ``../shared/tools/cr/README.md``); this script only runs it and reads what it prints:
"Expanded N nodes in total", "Spent S seconds in total" (standard error) and each
"Solution found:" path (standard output).  Instances are lines in its notation (25
comma-separated tiles, the blank 0, the Korf goal), as in its ``doc/400-random.txt``; a
second column, where there is one, is the instance's known optimal length, which both
answers must meet (its ``doc/400-random.out`` has them, and a third: the nodes its own search
expanded, by which ``--cheapest N`` picks N).

    .venv/bin/slidepdb build 5x5 --goal korf --partition 6-6-6-6 --zero-aware --no-two-bit --db-dir D
    .venv/bin/python scripts/bench_pdbsearch.py --db-dir D --instances CR/doc/400-random.out --cheapest 20 \\
        --pdbsearch CR/cmd/pdbsearch --pdbdir PDBDIR --catalogue CR/catalogues/clausecker.cat \\
        --preload /tmp/alignshim.so [--results FILE]

Our side reads every 5x5 Korf-goal table in ``--db-dir`` (their reflection too), on one
thread (``Searcher.solve``), its tables loaded and its kernels compiled before timing.
Their side runs with ``-t`` (the catalogue's transpositions, as our reflection) and its
default pruning (the undo of the last move); its tables are built on its first run.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def read_instances(path: str, cheapest: int | None) -> list[tuple[list[int], int | None]]:
    """The instances of ``path``; with ``cheapest``, that many of those with the fewest
    expansions in its third column (its ``doc/400-random.out`` lists its own), in that order."""
    rows = []
    for line in Path(path).read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split()
        tiles = [int(x) for x in fields[0].split(",")]
        known = int(fields[1]) if len(fields) > 1 and fields[1].isdecimal() else None
        cost = int(fields[2]) if len(fields) > 2 and fields[2].isdecimal() else None
        rows.append((cost, tiles, known))
    if cheapest:
        rows = sorted((r for r in rows if r[0] is not None), key=lambda r: r[0])[:cheapest]
    return [(tiles, known) for _, tiles, known in rows]


def theirs(args, instances) -> list[dict]:
    """One ``pdbsearch`` process over every instance; each one's expanded nodes, seconds
    and length, in order."""
    env = dict(os.environ)
    if args.preload:
        env["LD_PRELOAD"] = args.preload
    command = [args.pdbsearch, "-t", "-d", args.pdbdir, args.catalogue]
    text = "".join(",".join(map(str, tiles)) + "\n" for tiles, _ in instances)
    done = subprocess.run(command, input=text, capture_output=True, text=True, env=env, check=True)
    expanded = [int(m) for m in re.findall(r"Expanded (\d+) nodes in total", done.stderr)]
    seconds = [float(m) for m in re.findall(r"Spent ([\d.]+) seconds in total", done.stderr)]
    paths = re.findall(r"Solution found: (.*)", done.stdout)
    if not len(expanded) == len(seconds) == len(paths) == len(instances):
        raise SystemExit(f"pdbsearch answered {len(paths)} of {len(instances)} instances:\n{done.stderr[-2000:]}")
    lengths = [len([p for p in path.split(",") if p.strip()]) for path in paths]
    return [dict(expanded=e, seconds=s, length=n) for e, s, n in zip(expanded, seconds, lengths)]


def ours(args, instances) -> list[dict]:
    from pdb_builder.formats import parse_numeric_tokens
    from solver.search.searcher import Searcher
    from solver.search.tables import heuristic_for

    boards = [parse_numeric_tokens([str(t) for t in tiles], 5, 5, "korf") for tiles, _ in instances]
    searcher = Searcher(heuristic_for(boards[0].shape, args.db_dir))
    searcher.solve(boards[0], node_limit=10_000)  # the kernels compiled and the tables read before timing
    out = []
    for board in boards:
        start = time.perf_counter()
        res = searcher.solve(board)
        seconds = time.perf_counter() - start
        if not res.optimal:
            raise SystemExit(f"not proven: {board}")
        out.append(dict(expanded=res.expanded, nodes=res.nodes, seconds=seconds, length=res.length))
    return out


def main() -> int:
    sys.path.insert(0, str(ROOT))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db-dir", required=True, help="our 5x5 Korf-goal tables")
    ap.add_argument("--instances", required=True, help="instances in pdbsearch's notation, [length [expansions]]")
    ap.add_argument("--cheapest", type=int, help="only this many, those with the fewest expansions listed")
    ap.add_argument("--pdbsearch", required=True, help="its built binary")
    ap.add_argument("--pdbdir", required=True, help="where its tables are kept (built at its first run)")
    ap.add_argument("--catalogue", required=True, help="its catalogue file")
    ap.add_argument("--preload", help="a library to preload for it (the alignment shim)")
    ap.add_argument("--first", choices=("ours", "theirs"), default="theirs", help="which side runs first")
    args = ap.parse_args()
    instances = read_instances(args.instances, args.cheapest)
    sides = {}
    for side in (args.first, "ours" if args.first == "theirs" else "theirs"):
        sides[side] = (ours if side == "ours" else theirs)(args, instances)
    print(
        f"{len(instances)} instances, one search thread each; ours: {args.db_dir}, "
        f"theirs: {Path(args.catalogue).name} with its transpositions\n"
    )
    heads = ["#", "length", "ours: expanded", "ours: s", "theirs: expanded", "theirs: s"]
    print("| " + " | ".join([*heads, "expanded, ours / theirs", "s, ours / theirs"]) + " |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    logs = {"expanded": 0.0, "seconds": 0.0}
    for i, ((_, known), a, b) in enumerate(zip(instances, sides["ours"], sides["theirs"]), 1):
        if a["length"] != b["length"] or (known is not None and a["length"] != known):
            raise SystemExit(f"instance {i}: lengths disagree: ours {a['length']}, theirs {b['length']}, known {known}")
        re_, rs = a["expanded"] / b["expanded"], a["seconds"] / b["seconds"]
        logs["expanded"] += math.log(re_)
        logs["seconds"] += math.log(rs)
        print(
            f"| {i} | {a['length']} | {a['expanded']:,} | {a['seconds']:.2f} | {b['expanded']:,} "
            f"| {b['seconds']:.2f} | {re_:.3f} | {rs:.3f} |"
        )
    n = len(instances)
    total = {s: sum(r["seconds"] for r in rows) for s, rows in sides.items()}
    print(
        f"| all | | {sum(r['expanded'] for r in sides['ours']):,} | {total['ours']:.1f} "
        f"| {sum(r['expanded'] for r in sides['theirs']):,} | {total['theirs']:.1f} "
        f"| {math.exp(logs['expanded'] / n):.3f} (geometric mean) "
        f"| {math.exp(logs['seconds'] / n):.3f} (geometric mean) |"
    )
    return 0


if __name__ == "__main__":
    from benchdata import run_keeping_tables

    sys.exit(run_keeping_tables(main))

"""Zero-aware tables side by side with plain ones: the same boards searched on both, in one
sitting; prints markdown tables.

    .venv/bin/python scripts/bench_zero.py --plain DIR1 --zero DIR2 [--problems FILE] [--first N]
        [--lines L ...] [--node-limit N] [--time-limit S] [--prune D|auto] [--rounds 2] [--results FILE]
        [--names A B]
    .venv/bin/python scripts/bench_zero.py --plain DIR1 --zero DIR2 --build-layouts --memory-limit 64M
        --problems data/devquiz2011/hard.txt --first 20 --node-limit 50000000

``DIR1`` holds plain tables and ``DIR2`` the same partitions built with ``--zero-aware``
(``slidepdb build 4x4 --partition 7-8 [--zero-aware]``; default boards: Korf's 100).  With
``--build-layouts`` the script first builds, for each board's wall layout, the partition
``slidepdb build`` chooses under ``--memory-limit`` into both folders (its build seconds and
bytes are printed).  Each board is searched with the plain tables and the zero-aware ones,
the order alternating between boards and rounds; nodes are exact (the same every round),
seconds each side's least over ``--rounds``.  Every answer is simulated; a proven length that
differs between the sides stops the script.  ``--names`` labels the two sides in the tables
(e.g. two zero-aware folders, one with a second partition beside the first); ``--flood
plain`` has the first side find the blank's region by flooding where it would read the
shape's region labels (the same folder on both sides compares the two).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from benchdata import DATA, ROOT


def build_layouts(recs, plain: str, zero: str, memory: int) -> list:
    from pdb_builder.make.building import build_pdb, default_partition
    from pdb_builder.storage import open_database

    rows = []
    for shape in {r.board.shape.key: r.board.shape for r in recs}.values():
        part = default_partition(shape, memory)
        row = [shape.key, part.name]
        for folder, zero_aware in ((plain, False), (zero, True)):
            t0 = time.perf_counter()
            rep = build_pdb(shape, part, folder, two_bit=False, zero_aware=zero_aware)
            db = open_database(rep.path, mmap=True)
            tables = sum(t.data.nbytes for t in db.tables)
            extra = sum(t.zero.nbytes for t in db.tables if t.zero is not None)
            row += [time.perf_counter() - t0, tables + extra]
        rows.append(row)
        print(f"built {shape.key} {part.name}: {row[2]:.1f} s / {row[4]:.1f} s", file=sys.stderr, flush=True)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plain", required=True)
    ap.add_argument("--zero", required=True)
    ap.add_argument("--problems", default=None, help="a problem file (default: Korf's 100)")
    ap.add_argument("--goal", default=None, help="goal of numeric lines (default: as the file says)")
    ap.add_argument("--first", type=int, default=None)
    ap.add_argument("--lines", type=int, nargs="+", default=None, help="only these lines of the file, in this order")
    ap.add_argument("--build-layouts", action="store_true")
    ap.add_argument("--memory-limit", default="64M")
    ap.add_argument("--node-limit", type=int, default=None)
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--prune", default="auto")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--results", default=None, help="write the rows here (JSON)")
    ap.add_argument("--names", nargs=2, default=("plain", "zero-aware"), help="the two sides' labels")
    ap.add_argument(
        "--flood", choices=("plain", "zero"), default=None, help="this side finds regions by flooding, not by labels"
    )
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from pdb_builder.formats import read_file
    from pdb_builder.options import byte_count

    path = a.problems or str(DATA / "korf100.txt")
    recs = [r for r in read_file(path, goal=a.goal or "korf").records[: a.first] if r.board is not None]
    if a.lines:
        by_line = {r.index: r for r in recs}
        recs = [by_line[i] for i in a.lines]
    built = build_layouts(recs, a.plain, a.zero, byte_count("memory", a.memory_limit)) if a.build_layouts else []
    rows = compare(a, recs)
    print_tables(a, path, built, rows)
    return 0


def compare(a, recs) -> list:
    """Each board searched on both sides' tables (``--rounds`` times, alternating which
    goes first, the least seconds kept); the proven lengths must agree, and every
    answer reach the goal."""
    from pdb_builder.moves import check_moves
    from solver.search.heuristic import ZeroArrays
    from solver.search.searcher import Searcher
    from solver.search.tables import heuristic_for

    prune = None if a.prune == "auto" else int(a.prune)
    searchers = {}

    def searcher(side, shape):
        key = (side, shape.key)
        if key not in searchers:
            h = heuristic_for(shape, a.plain if side == "plain" else a.zero)
            if side == "zero" and not any(lk.zero is not None for lk in h.lookups):
                raise SystemExit(f"{a.zero}: no zero-aware tables for {shape.key}")
            searchers[key] = Searcher(h, prune=prune)
            if side == a.flood:
                searchers[key].zero = ZeroArrays(h.lookups, labels=False)
            searchers[key].solve(recs[0].board if recs[0].board.shape == shape else _goal(shape), node_limit=10_000)
        return searchers[key]

    def _goal(shape):
        from pdb_builder.board import Board

        return Board(shape, shape.goal)

    rows = []
    for i, rec in enumerate(recs):
        row = {"line": rec.index, "shape": rec.board.shape.key}
        for rnd in range(a.rounds):
            sides = ("plain", "zero") if (i + rnd) % 2 == 0 else ("zero", "plain")
            for side in sides:
                s = searcher(side, rec.board.shape)
                res = s.solve(rec.board, node_limit=a.node_limit, time_limit=a.time_limit)
                if res.moves is not None and not check_moves(rec.board, res.moves).ok:
                    raise SystemExit(f"line {rec.index}: {side} answer does not reach the goal")
                prev = row.get(side)
                row[side] = {
                    "h0": res.h0,
                    "proven": bool(res.optimal),
                    "length": res.length,
                    "bound": res.lower_bound,
                    "nodes": res.nodes,
                    "seconds": min(res.seconds, prev["seconds"]) if prev else res.seconds,
                }
        p, z = row["plain"], row["zero"]
        if p["proven"] and z["proven"] and p["length"] != z["length"]:
            raise SystemExit(f"line {rec.index}: proven lengths differ: {p['length']} and {z['length']}")
        rows.append(row)
        print(
            f"line {rec.index}: h0 {p['h0']}/{z['h0']}, nodes {p['nodes']:,}/{z['nodes']:,}, "
            f"{p['seconds']:.2f}/{z['seconds']:.2f} s, proven {p['proven']}/{z['proven']}",
            file=sys.stderr,
            flush=True,
        )
    return rows


def print_tables(a, path, built: list, rows: list) -> None:
    """The builds' table (with ``--build-layouts``), the two sides' table, and the rows as JSON (``--results``)."""
    both = [r for r in rows if r["plain"]["proven"] and r["zero"]["proven"]]
    print(f"\n{path}, {len(rows)} boards; node limit {a.node_limit}, time limit {a.time_limit}, prune {a.prune}\n")
    if built:
        print("| layout | partition | build s plain | bytes plain | build s zero-aware | bytes zero-aware |")
        print("|---|---|---:|---:|---:|---:|")
        for key, name, sp, bp, sz, bz in built:
            print(f"| {key} | {name} | {sp:.1f} | {bp:,} | {sz:.1f} | {bz:,} |")
        print()
    first, second = a.names
    print(f"| tables | proven | sum of h0 | sum of bounds | nodes (proven by both) | vs {first} | search s (same) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    base = sum(r["plain"]["nodes"] for r in both) or 1
    for side, label in zip(("plain", "zero"), a.names):
        nodes = sum(r[side]["nodes"] for r in both)
        print(
            f"| {label} | {sum(r[side]['proven'] for r in rows)} | {sum(r[side]['h0'] for r in rows)} | "
            f"{sum(r[side]['bound'] for r in rows)} | {nodes:,} | {nodes / base:.3f} | "
            f"{sum(r[side]['seconds'] for r in both):.2f} |"
        )
    if both:
        print(
            f"\nmean nodes on the {len(both)} proven by both: "
            f"{base / len(both):,.0f} {first}, {sum(r['zero']['nodes'] for r in both) / len(both):,.0f} {second}"
        )
    if a.results:
        Path(a.results).write_text(json.dumps({"args": vars(a), "built": built, "rows": rows}, indent=1))


if __name__ == "__main__":
    sys.exit(main())

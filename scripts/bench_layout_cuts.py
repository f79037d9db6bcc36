#!/usr/bin/env python3
"""A larger exact-layout cut side by side with the run's layout tables: the same walled
boards searched on both, in one sitting; prints markdown tables.

    .venv/bin/python scripts/bench_layout_cuts.py --problems data/devquiz2011/hard.txt \\
        --lines 2 17 40 --dir D [--wall-free DIR] [--small 512M] [--large 4G] \\
        [--greedy] [--node-limit 400000000] [--results FILE]

For each board's wall layout the script builds, zero-aware as ``slidepdb run`` builds
them, the layout's cut under ``--small`` (the full pass's: 5-tile patterns on a 6x6) into
``D/small``, and the cut under ``--large`` (a round's at that memory: 6 tiles) into
``D/large``, whose folder also holds the small cut (a hard link), so the large side is the
run's tables plus one more cut, maxed as the solver reads them.  The run cuts a layout's
tiles evenly (25 tiles under 4G: 5-5-5-5-5); ``--greedy`` cuts the larger one into as many
patterns of the largest size that fits ``--large`` as the tiles allow (6-6-6-6-1).  With ``--wall-free DIR``
the size's wall-free tables in DIR (``slidepdb build 6x6 --goal devquiz --partition
5-5-5-5-5-5-5 --partition 5-5-5-5-5-5-5.far``) are linked into both sides, as the run has
them.  Build seconds are this machine's on ``--threads``.

Each board is then searched on one thread with each side's tables up to ``--node-limit``
generated nodes, the sides alternating which goes first; nodes are exact.  Printed per
board: the estimate at the root, the lower bound reached, the nodes of the last IDA*
iteration both sides completed and their ratio, and whether a side proved the board (every
answer simulated; proven lengths that differ stop the script).  ``--results FILE`` keeps
the printed tables as JSON.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from benchdata import DATA, ROOT, run_keeping_tables


def _link_into(folder: Path, files) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for f in files:
        target = folder / f.name
        if not target.exists():
            os.link(f, target)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problems", default=str(DATA / "devquiz2011" / "hard.txt"))
    ap.add_argument("--lines", type=int, nargs="+", required=True, help="these boards (as reports number them)")
    ap.add_argument("--dir", required=True, help="a scratch folder for both sides' tables")
    ap.add_argument("--wall-free", default=None, help="a folder whose wall-free tables both sides read")
    ap.add_argument("--small", default="512M", help="the run's layout memory (its full pass's cut)")
    ap.add_argument("--large", default="4G", help="the larger cut's pattern BFS memory")
    ap.add_argument("--greedy", action="store_true", help="the larger cut: as many of the largest patterns as fit")
    ap.add_argument("--node-limit", type=int, default=400_000_000)
    ap.add_argument("--threads", type=int, default=None, help="build threads (default: all cores)")
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from pdb_builder.formats import read_file
    from pdb_builder.options import byte_count

    by_line = {r.index: r for r in read_file(a.problems).records if r.board is not None}
    recs = [by_line[i] for i in a.lines]
    root = Path(a.dir)
    small_dir, large_dir = root / "small", root / "large"
    small_mem, large_mem = byte_count("memory", a.small), byte_count("memory", a.large)
    built = build_both(a, recs, small_dir, large_dir, small_mem, large_mem)
    rows = search_both(a, recs, small_dir, large_dir)
    print_tables(a, built, rows)
    return 0


def build_both(a, recs, small_dir: Path, large_dir: Path, small_mem: int, large_mem: int) -> dict:
    """Each layout's run's cut into ``small_dir`` and its larger cut into ``large_dir``
    (which links the run's cut too): layout -> what each build took."""
    from pdb_builder.make.building import build_pdb, layout_partitions
    from pdb_builder.patterns import greedy_sizes, named_partition

    built = {}
    for rec in recs:
        shape = rec.board.shape
        if shape.key in built:
            continue
        if a.wall_free:
            free = sorted(Path(a.wall_free).glob(f"{shape.width}x{shape.height}-devquiz.pdb.*.h5"))
            _link_into(small_dir, free)
            _link_into(large_dir, free)
        row = {"layout": shape.key, "free cells": len(shape.free_cells)}
        for side, folder, memory in (("small", small_dir, small_mem), ("large", large_dir, large_mem)):
            part = layout_partitions(shape, memory, 1)[0]
            if side == "large" and a.greedy:
                part = named_partition(shape, "-".join(map(str, greedy_sizes(shape, memory))))
            t0 = time.perf_counter()
            rep = build_pdb(shape, part, folder, two_bit=False, zero_aware=True, threads=a.threads)
            row[side] = {"partition": part.name, "seconds": round(time.perf_counter() - t0, 1), "status": rep.status}
            print(f"{shape.key} {side}: {part.name}, {row[side]['seconds']} s", file=sys.stderr, flush=True)
            if side == "small":
                _link_into(large_dir, [Path(rep.path)])
        built[shape.key] = row

    return built


def searched(rec, folder: Path, side: str, node_limit: int) -> dict:
    """Board ``rec`` searched on one thread on the tables in ``folder`` up to ``node_limit``
    nodes, its answer simulated: what a side's row reports."""
    from pdb_builder.moves import check_moves
    from solver.search.searcher import Searcher
    from solver.search.tables import heuristic_for

    h = heuristic_for(rec.board.shape, folder)
    res = Searcher(h).solve(rec.board, node_limit=node_limit)
    if res.moves is not None and not check_moves(rec.board, res.moves).ok:
        raise SystemExit(f"line {rec.index}: the {side} side's answer does not reach the goal")
    return {
        "tables": list(h.names),
        "h0": res.h0,
        "bound": res.lower_bound,
        "proven": bool(res.optimal),
        "length": res.length,
        "nodes": res.nodes,
        "seconds": round(res.seconds, 2),
        "iterations": [list(it) for it in res.iterations],
        "unfinished": None if res.unfinished is None else list(res.unfinished),
    }


def search_both(a, recs, small_dir: Path, large_dir: Path) -> list:
    """Each board searched on both sides' tables, alternating which goes first; the
    proven lengths must agree, and every answer reach the goal."""
    rows = []
    for i, rec in enumerate(recs):
        row = {"line": rec.index, "layout": rec.board.shape.key}
        for side in ("small", "large") if i % 2 == 0 else ("large", "small"):
            row[side] = searched(rec, small_dir if side == "small" else large_dir, side, a.node_limit)
        s, g = row["small"], row["large"]
        if s["proven"] and g["proven"] and s["length"] != g["length"]:
            raise SystemExit(f"line {rec.index}: proven lengths differ: {s['length']} and {g['length']}")
        both = {it[0] for it in s["iterations"]} & {it[0] for it in g["iterations"]}
        row["common"] = max(both) if both else None
        rows.append(row)
        print(
            f"line {rec.index}: h0 {s['h0']}/{g['h0']}, bound {s['bound']}/{g['bound']}, "
            f"nodes {s['nodes']:,}/{g['nodes']:,}, proven {s['proven']}/{g['proven']}",
            file=sys.stderr,
            flush=True,
        )

    return rows


def print_tables(a, built: dict, rows: list) -> None:
    """The builds' table and the boards' table (nodes of the last iteration both completed)."""
    print(f"\n{a.problems}: {len(rows)} boards, one thread, node limit {a.node_limit:,}\n")
    print("| layout | free cells | run's cut | build s | larger cut | build s |")
    print("|---|---:|---|---:|---|---:|")
    for b in built.values():
        print(
            f"| {b['layout']} | {b['free cells']} | {b['small']['partition']} | {b['small']['seconds']:.1f} | "
            f"{b['large']['partition']} | {b['large']['seconds']:.1f} |"
        )
    print()
    print(
        "| board | h0 run's / +larger | bound reached | last iteration both completed | its nodes, run's | "
        "+larger | ratio | proven |"
    )
    print("|---:|---|---|---:|---:|---:|---:|---|")
    ratios = []
    for r in rows:
        s, g, t = r["small"], r["large"], r["common"]
        if t is None:
            cells = "- | - | - | -"
        else:
            ns = next(n for th, n, _ in s["iterations"] if th == t)
            ng = next(n for th, n, _ in g["iterations"] if th == t)
            ratios.append(ng / ns)
            cells = f"{t} | {ns:,} | {ng:,} | {ng / ns:.3f}"
        print(
            f"| {r['line']} | {s['h0']} / {g['h0']} | {s['bound']} / {g['bound']} | {cells} | "
            f"{'yes' if s['proven'] else 'no'} / {'yes' if g['proven'] else 'no'} |"
        )
    if ratios:
        from math import exp, log

        mean = exp(sum(map(log, ratios)) / len(ratios))
        print(f"\ngeometric mean of the ratio over {len(ratios)} boards: {mean:.3f}")


if __name__ == "__main__":
    sys.exit(run_keeping_tables(main))

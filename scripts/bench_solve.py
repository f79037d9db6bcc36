#!/usr/bin/env python3
"""Solver benchmark on the standard sets; prints markdown tables for docs/benchmarks.md.

    .venv/bin/python scripts/bench_solve.py --db-dir DIR [--sets korf100 depth80 korf24 manhattan devquiz-6x6]
                                            [--korf24-count 5] [--korf24-order length|gap] [--korf24-ids 28 25]
                                            [--journal FILE] [--time-limit S] [--node-limit N] [--threads N]
                                            [--prune D|auto] [--frontier N|auto]

Needs the databases built first (``slidepdb build 4x4 --partition 7-8``;
``slidepdb build 5x5 --partition 6-6-6-6 --memory-limit 6G`` for korf24).  Runs
on one core unless ``--threads N`` (each board's search split between N threads,
``solve --threads``; ``scripts/bench_threads.py`` compares thread counts).
``korf24`` uses every 5x5 database in ``DIR`` (a collection, ``build --collection``,
is several partitions maxed) and prints a table per instance: h0, length, nodes
generated and expanded, Korf & Felner's expanded nodes with the same 6-6-6-6 tables
and reflection and the ratio (``data/korf24_kf2002_nodes.txt``; both count
expanded nodes), seconds, threads; ``--journal`` keeps each finished instance, so a
long run killed and started again with the same file goes on where it stopped.
Tables are loaded and kernels compiled
before timing starts; every answer is simulated and compared with the
published optimal length.  ``devquiz-6x6`` (node rate on DevQuiz tables): the first
four wall-free and first four walled 6x6 boards of the DevQuiz file, each with the
tables ``--db-dir`` holds for its shape (``slidepdb run`` builds them), best with
``--node-limit`` (they are hard: the rate is the point, not the proofs).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

from benchdata import DATA, ROOT, kf2002_expanded


def solve_set(records, searcher_for, time_limit=None, limit=None, node_limit=None, threads=1):
    """Solve ``records[:limit]``, each with ``searcher_for(shape)`` (a prepared Searcher)."""
    from pdb_builder.moves import check_moves

    rows = []
    for rec in records[:limit]:
        res = searcher_for(rec.board.shape).solve(
            rec.board, time_limit=time_limit, node_limit=node_limit, threads=threads
        )
        ok = res.moves is not None and check_moves(rec.board, res.moves).ok
        rows.append((rec, res, ok))
        name = rec.ident or f"line {rec.index}"
        print(
            f"  {name}: {res.status} length {res.length} (published {rec.expected_length}) "
            f"{res.nodes:,} nodes {res.seconds:.2f} s",
            file=sys.stderr,
        )
    return rows


def korf24_rows(recs, searcher, a):
    """(record, result, ok) of each instance: from ``--journal`` where it holds one,
    else solved now (and journalled)."""
    import json
    from types import SimpleNamespace

    from pdb_builder.moves import check_moves

    done = {}
    if a.journal and Path(a.journal).exists():
        for line in Path(a.journal).read_text().splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by a kill
            done[rec["instance"]] = rec
    for r in recs:
        if r.ident in done:
            d = done[r.ident]
            res = SimpleNamespace(**{k: d[k] for k in ("length", "optimal", "nodes", "expanded", "seconds", "moves")})
        else:
            res = searcher.solve(r.board, time_limit=a.time_limit, node_limit=a.node_limit, threads=a.threads)
            if a.journal:
                keep = {k: getattr(res, k) for k in ("length", "optimal", "nodes", "expanded", "seconds", "moves")}
                with open(a.journal, "a") as fh:
                    fh.write(json.dumps({"instance": r.ident, "threads": a.threads, **keep}) + "\n")
                    fh.flush()
                    os.fsync(fh.fileno())
            done[r.ident] = {"threads": a.threads}
        ok = res.moves is not None and check_moves(r.board, res.moves).ok
        print(f"  #{r.ident}: length {res.length} {res.nodes:,} nodes {res.seconds:.1f} s", file=sys.stderr, flush=True)
        yield r, res, ok


def korf24_table(rows, h0, threads) -> None:
    """Per instance: h0, length, nodes generated and expanded, Korf & Felner's expanded
    nodes and the ratio (ours over theirs: both count expanded nodes), seconds, threads;
    then the geometric mean of the ratios over the instances solved."""
    kf = kf2002_expanded()
    print("| instance | h0 | length (published) | nodes | expanded | KF2002 expanded | ratio | s | threads |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    logs = []
    for r, res, ok in rows:
        proven = ok and res.optimal and res.length == r.expected_length
        theirs = kf.get(r.ident)
        ratio = res.expanded / theirs if theirs and proven else None
        if ratio:
            logs.append(math.log(ratio))
        length = f"{res.length} ({r.expected_length})" if proven else f"not proven ({r.expected_length})"
        print(
            f"| #{r.ident} | {h0[r.index]} | {length} | {res.nodes:,} | {res.expanded:,} | "
            f"{f'{theirs:,}' if theirs else '-'} | {f'{ratio:.3f}' if ratio else '-'} | {res.seconds:.1f} | "
            f"{threads} |",
            flush=True,
        )
    if logs:
        print(f"\ngeometric mean of the ratio over {len(logs)} instance(s): {math.exp(sum(logs) / len(logs)):.3f}\n")


def summary(name, rows, heuristic):
    solved = [(r, x) for r, x, ok in rows if ok and x.optimal]
    right = sum(1 for r, x in solved if x.length == r.expected_length)
    published = f"{right}/{len(rows)}" if any(r.expected_length for r, _, _ in rows) else "n/a"
    secs = sum(x.seconds for _, x, _ in rows)
    nodes = sum(x.nodes for _, x, _ in rows)
    worst = max((x.seconds for _, x, _ in rows), default=0.0)
    return (
        name,
        heuristic,
        f"{len(solved)}/{len(rows)}",
        published,
        f"{secs:.2f}",
        f"{worst:.2f}",
        f"{nodes / max(len(rows), 1):,.0f}",
        f"{nodes / max(secs, 1e-9) / 1e6:.1f}",
    )


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db-dir", default=None)
    ap.add_argument(
        "--sets",
        nargs="*",
        default=["korf100", "depth80", "manhattan", "manhattan-only"],
        help="korf100 depth80 manhattan manhattan-only korf24 devquiz-6x6",
    )
    ap.add_argument("--korf24-count", type=int, default=5)
    ap.add_argument(
        "--korf24-order",
        choices=["length", "gap"],
        default="length",
        help="which 24-puzzles first: shortest published length, or smallest gap between it "
        "and the initial estimate (the fewest IDA* iterations: usually the easiest)",
    )
    ap.add_argument("--korf24-ids", nargs="+", default=None, help="these 24-puzzle instance numbers instead")
    ap.add_argument(
        "--journal",
        default=None,
        help="korf24: a JSON line per finished instance here; a rerun with the same file skips them (resume)",
    )
    ap.add_argument("--time-limit", type=float, default=None, help="seconds per instance")
    ap.add_argument("--node-limit", type=int, default=None, help="generated nodes per instance")
    ap.add_argument("--threads", type=int, default=1, help="threads for each instance's search")
    ap.add_argument(
        "--full-tables",
        action="store_true",
        help="read the full one-byte tables even where a file has two-bit copies (A/B runs)",
    )
    ap.add_argument(
        "--one-bit",
        choices=("on", "off"),
        default=None,
        help="read the one-bit copies of zero-aware tables wherever files have them, or never (default: the "
        "solver's: where a copy marks few placements to read whole)",
    )
    ap.add_argument(
        "--prune",
        default="auto",
        help="the pruning automaton's depth (2: undos only), or auto (the solver's default: deeper as searches grow)",
    )
    ap.add_argument(
        "--frontier",
        default="auto",
        help="A*+IDA*'s open nodes from the root (0: IDA* alone), or auto (the solver's default: on a "
        "wall-free 5x5, from an iteration of 20 million nodes on)",
    )
    return ap


FIFTEEN = {  # set -> (file, label)
    "korf100": ("korf100.txt", "Korf's 100"),
    "depth80": ("depth80_15puzzle.txt", "17 at depth 80"),
    "manhattan": ("korf100.txt", "Korf's 100, first 10"),
    "manhattan-only": ("korf100.txt", "Korf's 100, first 10"),
}


def main() -> int:
    a = _parser().parse_args()
    sys.path.insert(0, str(ROOT))
    from solver.search.searcher import Searcher

    def make(h):
        prune, frontier = (None if x == "auto" else int(x) for x in (a.prune, a.frontier))
        one_bit = {} if a.one_bit is None else {"one_bit": 1.0 if a.one_bit == "on" else False}
        return Searcher(h, packed=not a.full_tables, prune=prune, frontier=frontier, **one_bit)

    out = []
    for name in a.sets:
        if name in FIFTEEN:
            row = fifteen(name, a, make)
        elif name == "korf24":
            row = korf24(a, make)
        elif name == "devquiz-6x6":
            out += devquiz_6x6(a, make)
            continue
        else:
            print(f"{name}: no such set (korf100 depth80 manhattan manhattan-only korf24 devquiz-6x6)", file=sys.stderr)
            return 2
        if row is None:
            return 1
        out.append(row)
    print("| set | heuristic | proven optimal | at published length | total s | worst s | avg nodes | M nodes/s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in out:
        print("| " + " | ".join(r) + " |")
    return 0


def fifteen(name: str, a, make):
    """The summary row of a 15-puzzle set (None: its tables are not built)."""
    from pdb_builder.formats import read_file
    from solver.search.heuristic import manhattan_heuristic
    from solver.search.tables import heuristic_for

    fname, label = FIFTEEN[name]
    recs = read_file(str(DATA / fname)).records
    shape = recs[0].board.shape
    if name in ("manhattan", "manhattan-only"):
        h = manhattan_heuristic(shape, use_lc=name == "manhattan")
        recs = recs[:10]
    else:
        h = heuristic_for(shape, a.db_dir)
        if not h.lookups:
            print(f"{name}: no 4x4 database in {a.db_dir}; build it first", file=sys.stderr)
            return None
    searcher = make(h)
    searcher.solve(recs[8].board if len(recs) > 8 else recs[0].board, node_limit=10_000)  # warm-up
    print(f"{name}: {', '.join(h.names) or ('manhattan+lc' if h.use_lc else 'manhattan')}", file=sys.stderr)
    rows = solve_set(recs, lambda _: searcher, a.time_limit, node_limit=a.node_limit, threads=a.threads)
    plain = "Manhattan + LC" if h.use_lc else "Manhattan only"
    return summary(label, rows, " + ".join(h.names) if h.names else plain)


def korf24(a, make):
    """The 24-puzzles' table and summary row (None: their tables are not built)."""
    from pdb_builder.formats import read_file
    from solver.search.tables import heuristic_for

    recs = read_file(str(DATA / "korf24.txt")).records
    h = heuristic_for(recs[0].board.shape, a.db_dir)
    if not h.lookups:
        print(f"korf24: no 5x5 database in {a.db_dir}; build it first", file=sys.stderr)
        return None
    searcher = make(h)
    h0 = {r.index: searcher.initial_h(r.board) for r in recs}
    gap = a.korf24_order == "gap"
    recs.sort(key=lambda r: (r.expected_length - h0[r.index], r.expected_length) if gap else r.expected_length)
    if a.korf24_ids:
        recs = [r for i in a.korf24_ids for r in recs if r.ident == i]
    else:
        recs = recs[: a.korf24_count]
    print(f"korf24: {', '.join(h.names)}", file=sys.stderr)
    rows = list(korf24_rows(recs, searcher, a))
    korf24_table(rows, h0, a.threads)
    which = (
        f"#{', #'.join(a.korf24_ids)}"
        if a.korf24_ids
        else f"{a.korf24_count} {'smallest gap to h0' if gap else 'shortest'}"
    )
    return summary(f"Korf's 24-puzzles, {which}", rows, " + ".join(h.names))


def devquiz_6x6(a, make) -> list:
    """The summary rows of the DevQuiz file's first four wall-free and four walled 6x6 boards."""
    from pdb_builder.formats import read_file
    from solver.search.tables import heuristic_for

    recs = read_file(str(DATA / "devquiz2011" / "problems.txt")).records
    six = [r for r in recs if (r.board.shape.width, r.board.shape.height) == (6, 6)]
    searchers, out = {}, []

    def searcher_for(shape):
        if shape not in searchers:
            searchers[shape] = make(heuristic_for(shape, a.db_dir))
        return searchers[shape]

    for label, group in (
        ("wall-free", [r for r in six if not r.board.shape.walls][:4]),
        ("walled", [r for r in six if r.board.shape.walls][:4]),
    ):
        for r in group:  # map the tables and compile before timing
            searcher_for(r.board.shape).solve(r.board, node_limit=1000)
        print(f"devquiz-6x6 {label}: lines {', '.join(str(r.index) for r in group)}", file=sys.stderr)
        rows = solve_set(group, searcher_for, a.time_limit, node_limit=a.node_limit, threads=a.threads)
        names = sorted({n for r in group for n in searcher_for(r.board.shape).h.names})
        out.append(summary(f"DevQuiz 6x6, first 4 {label}", rows, "; ".join(names) or "Manhattan + LC"))
    return out


if __name__ == "__main__":
    from benchdata import run_keeping_tables

    sys.exit(run_keeping_tables(main))

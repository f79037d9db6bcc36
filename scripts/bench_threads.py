#!/usr/bin/env python3
"""One board on several threads (``solve --threads N``): each instance solved with
every thread count in turn, in one process (tables loaded and kernels compiled
first); prints a markdown table for docs/benchmarks.md.

    .venv/bin/python scripts/bench_threads.py --db-dir DIR [--threads 1 2] [--sets depth80 korf24]
                                              [--korf24 40 38] [--rounds 1]

``DIR`` holds the 4x4 7-8 file (depth80) and the 5x5 6-6-6-6 file (korf24).  Per
instance: the length (checked against the published one and simulated), nodes and
seconds at each thread count, the speed-up against the first count and the nodes
against it (the splitting's overhead: the nodes searched on one thread before an
iteration is split, and where the threads stand when one finds the goal).  With
``--rounds 2`` each instance is run twice, the thread counts alternating, and the
table gives each round.  A second table holds, for the 24-puzzles among Korf &
Felner's first 33, the nodes expanded (``nodes`` count the children generated) against
the nodes their IDA* expanded with the same 6-6-6-6 tables and reflection
(``data/korf24_kf2002_nodes.txt``).

A count written ``1g`` (``--threads 1 1g``) searches on that many threads through a
grant that could change while it runs, as ``slidepdb run`` and ``solve`` with many
boards give each board (nobody changes it here): its large iterations go through the
split search even on one thread, so threads granted later could join them; against
the plain count, what that costs.  ``2p``: on two worker processes of this machine
instead (``solve --split --workers 2``, :mod:`solver.search.processes`); ``2d``: on a
dask LocalCluster the script starts, two worker processes of one thread each, which
open the tables themselves (``solve --split --scheduler``).

``--independent 1 16``: instead, what the machine allows threads that never
coordinate: for each count N, N one-thread searches at once in this process, each
solving every instance in turn and all reading the same tables (the kernel runs
without the GIL).  Prints each count's wall seconds, the slowest and fastest
search, the node rate a search kept, and all of them together against one search
alone: the ceiling a split search of one board meets on that machine.
"""

from __future__ import annotations

import argparse
import math
import sys

from benchdata import DATA, ROOT, kf2002_expanded


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db-dir", required=True)
    ap.add_argument(
        "--threads", nargs="+", default=["1", "2"], help="counts; 1g: a grant that may grow; 2p: processes; 2d: dask"
    )
    ap.add_argument("--sets", nargs="+", default=["korf24", "depth80"], choices=["korf24", "depth80"])
    ap.add_argument("--korf24", nargs="+", default=["40", "38"], help="24-puzzle instance numbers")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--independent", type=int, nargs="+", help="counts of one-thread searches run at once instead")
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    for t in a.threads:
        count, kind = t.rstrip("gpd"), t.lstrip("0123456789")
        if not count.isdecimal() or int(count) < 1 or kind not in ("", "g", "p", "d"):
            ap.error(f"--threads {t}: a count, then g (a grant that may grow), p (processes) or d (dask workers)")
    try:
        return compare(a)
    finally:
        for w in WORKERS.values():
            w.close()


def warm_searchers(work, db_dir, counts) -> dict | None:
    """A searcher for each shape of ``work`` on ``db_dir``'s tables, compiled, its tables
    mapped and its threads started for every count of ``counts`` (None: a shape has no tables)."""
    from pathlib import Path

    from solver.search.remote import Recipe
    from solver.search.searcher import Searcher
    from solver.search.tables import heuristic_for

    searchers = {}
    for _, rec in work:
        shape = rec.board.shape
        if shape not in searchers:
            h = heuristic_for(shape, db_dir)
            if not h.lookups:
                print(f"no {shape.size_text} database in {db_dir}; build it first", file=sys.stderr)
                return None
            searchers[shape] = Searcher(h)
            searchers[shape].recipe = Recipe(shape, str(Path(db_dir).resolve()))  # (for dask workers)
            for t in sorted(set(counts)):  # compile, map the tables, start the threads once
                searchers[shape].solve(rec.board, node_limit=3_000_000, threads=threads_of(t))
    return searchers


def compare(a) -> int:
    from pdb_builder.formats import read_file

    work = []
    if "korf24" in a.sets:
        recs = {r.ident: r for r in read_file(str(DATA / "korf24.txt")).records}
        work += [(f"24-puzzle #{i}", recs[i]) for i in a.korf24]
    if "depth80" in a.sets:
        work += [(f"depth 80 #{r.ident or r.index}", r) for r in read_file(str(DATA / "depth80_15puzzle.txt")).records]
    searchers = warm_searchers(work, a.db_dir, a.threads)
    if searchers is None:
        return 1
    if a.independent:
        return independent(work, searchers, a.independent)
    base = a.threads[0]
    head = " | ".join(f"nodes {t}T | s {t}T" for t in a.threads)
    ups = " | ".join(f"speed-up {t}T | nodes {t}T/{base}T" for t in a.threads[1:])
    print(f"| instance | round | length | {head} | {ups} |")
    print("|---|---|---|" + "---:|" * (2 * len(a.threads) + 2 * (len(a.threads) - 1)))
    totals = {t: [0, 0.0] for t in a.threads}
    kf = kf2002_expanded()
    versus = []
    logs = {t: [] for t in a.threads[1:]}
    windows = []  # (instance, count, the workers' record of each iteration they searched)
    for name, rec in work:
        s = searchers[rec.board.shape]
        for rnd in range(a.rounds):
            order = a.threads if rnd % 2 == 0 else a.threads[::-1]
            got = {}
            for t in order:
                held = threads_of(t)
                logged = len(getattr(held, "log", ()))
                res = s.solve(rec.board, threads=held)
                if hasattr(held, "log"):
                    windows.append((name, t, held.log[logged:]))
                if not right(res, rec):
                    print(f"{name}: wrong answer at {t} threads: {res}", file=sys.stderr)
                    return 1
                got[t] = res
                totals[t][0] += res.nodes
                totals[t][1] += res.seconds
                print(f"  {name} {t}T {res.nodes:,} nodes {res.seconds:.2f} s", file=sys.stderr, flush=True)
            cells = " | ".join(f"{got[t].nodes:,} | {got[t].seconds:.2f}" for t in a.threads)
            b = got[base]
            if name.startswith("24-puzzle") and rec.ident in kf and rnd == 0:
                versus.append((name, b.length, b.expanded, kf[rec.ident]))
            rel = []
            for t in a.threads[1:]:
                up = b.seconds / got[t].seconds
                logs[t].append(math.log(up))
                rel.append(f"{up:.2f} | {got[t].nodes / b.nodes:.2f}")
            print(f"| {name} | {rnd + 1} | {b.length} | {cells} | {' | '.join(rel)} |", flush=True)
    cells = " | ".join(f"{totals[t][0]:,} | {totals[t][1]:.2f}" for t in a.threads)
    rel = " | ".join(
        f"{totals[base][1] / totals[t][1]:.2f} (geometric mean {math.exp(sum(logs[t]) / len(logs[t])):.2f}) | "
        f"{totals[t][0] / totals[base][0]:.2f}"
        for t in a.threads[1:]
    )
    print(f"| all | | | {cells} | {rel} |")
    if windows:
        print_windows(windows)
    if versus:
        print(f"\n| instance | length | expanded, {base} thread(s) | expanded, Korf & Felner 2002 | ratio |")
        print("|---|---|---:|---:|---:|")
        for name, length, ours, theirs in versus:
            print(f"| {name} | {length} | {ours:,} | {theirs:,} | {ours / theirs:.3f} |")
    return 0


WORKERS: dict = {}  # "2p", "2d": their workers, started once


def threads_of(t: str):
    """``--threads`` count ``t``: ``N``; ``Ng``, N threads through a grant that may grow;
    ``Np`` and ``Nd``, N worker processes of this machine or of a dask LocalCluster."""
    if t[-1] in "pd":
        if t not in WORKERS:
            WORKERS[t] = worker_processes(int(t[:-1]), t[-1] == "d")
        return WORKERS[t]
    if not t.endswith("g"):
        return int(t)
    import numpy as np

    from pdb_builder.cores import Share

    return Share(grant=np.array([int(t[:-1])], dtype=np.int64), used=np.zeros(1, dtype=np.int64))


def print_windows(windows) -> None:
    """What the workers' windows cost, per instance and count: the iterations they searched,
    their windows, the mean and longest window, the workers' seconds in windows against the
    iterations' wall seconds times the workers (the share of the workers kept busy), and
    what each window cost beyond its search (the workers' idle seconds a window)."""
    print("\n| instance | workers | iterations | windows | mean window s | longest window s | busy s | wall s "
          "| busy share | idle ms a window |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, t, log in windows:
        n, count = sum(x.windows for x in log), int(t[:-1])
        busy, wall, longest = (
            sum(x.busy for x in log),
            sum(x.wall for x in log),
            max((x.longest for x in log), default=0),
        )
        share = busy / (wall * count) if wall else 0.0
        idle = (wall * count - busy) / n * 1000 if n else 0.0
        print(f"| {name} | {t} | {len(log)} | {n} | {busy / max(n, 1):.3f} | {longest:.3f} | {busy:.1f} | {wall:.1f} "
              f"| {share:.3f} | {idle:.1f} |")  # fmt: skip


def worker_processes(n: int, dask: bool):
    """``n`` worker processes of this machine, or a dask LocalCluster of ``n`` one-thread workers."""
    from solver.search.processes import Workers

    if not dask:
        return Workers.local(n)
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    workers = Workers.cluster(client)

    def close():
        client.close()
        cluster.close()

    workers._close = close
    return workers


def right(res, rec) -> bool:
    """``res`` proven at ``rec``'s published length, its moves simulated."""
    from pdb_builder.moves import check_moves

    return res.optimal and res.length == rec.expected_length and check_moves(rec.board, res.moves).ok


def independent(work, searchers, counts) -> int:
    """``counts`` of one-thread searches at once, each over every instance of ``work``."""
    import threading
    import time

    from solver.search.searcher import MAX_DEPTH

    goal = [s.shape.size_text for s in searchers.values() if s.h.goal_table is not None]
    if goal:  # a searcher has one scratch key for its goal table, which the kernel writes at every node
        print(
            f"--independent: the folder holds a {goal[0]} goal table; searches at once would share its key",
            file=sys.stderr,
        )
        return 2

    def one(out, j):
        nodes, t0 = 0, time.perf_counter()
        for name, rec in work:
            # (the search proper: ``solve`` also hashes the tables it read, once per process)
            res = searchers[rec.board.shape]._solve(rec.board, None, None, MAX_DEPTH, 100, 1)
            if not right(res, rec):
                out[j] = f"{name}: wrong answer: {res}"
                return
            nodes += res.nodes
        out[j] = (nodes, time.perf_counter() - t0)

    print(
        "| searches at once | wall s | each s | M nodes/s a search (mean) | all together M nodes/s "
        "| against one search |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    alone = None
    for n in counts:
        out: list = [None] * n
        threads = [threading.Thread(target=one, args=(out, j)) for j in range(n)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        bad = [x for x in out if not isinstance(x, tuple)]
        if bad:
            print(bad[0], file=sys.stderr)
            return 1
        rates = [nodes / secs / 1e6 for nodes, secs in out]
        total = sum(nodes for nodes, _ in out) / wall / 1e6
        if alone is None and n == 1:
            alone = rates[0]
        versus = "" if alone is None else f"{total / alone:.2f}x ({total / alone / n:.2f} of {n})"
        each = f"{min(s for _, s in out):.2f}-{max(s for _, s in out):.2f}"
        print(f"| {n} | {wall:.2f} | {each} | {sum(rates) / n:.2f} | {total:.2f} | {versus} |", flush=True)
    return 0


if __name__ == "__main__":
    from benchdata import run_keeping_tables

    sys.exit(run_keeping_tables(main))

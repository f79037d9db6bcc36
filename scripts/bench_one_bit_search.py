#!/usr/bin/env python3
"""Zero-aware tables read through their one-bit copies against the same tables read whole:
nodes, seconds and memory, side by side; prints markdown tables for docs/benchmarks.md.

    .venv/bin/slidepdb build 4x4 --partition 7-8 --partition 8-7.far --zero-aware --one-bit --no-two-bit --db-dir D
    .venv/bin/python scripts/bench_one_bit_search.py --db-dir D [--set korf100 | --set korf24 --ids 36 40]
        [--threads 2] [--rounds 2] [--node-limit N] [--prune D] [--no-side] [--results FILE]

Each round runs both readings, each in a fresh process after the folder's files are dropped
from the page cache (``posix_fadvise``), so what a process holds is what its search read:
"resident" is the memory-mapped files' pages in the process when its boards are done.  "read"
is the bytes of the arrays the search reads at every node (the tables and their codes, or the
copies with their side tables; the roots touch a few pages of the tables too).  ``--no-side``
adds a third reading, the copies without their side tables, as a file built before them is
read: the placements read whole come from the tables.
Every answer is simulated and compared with the published length.  ``--prune``: a fixed
pruning automaton, so the two readings' nodes must be equal (the same values).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETS = {"korf100": "korf100.txt", "korf24": "korf24.txt"}
READINGS = ("whole", "one-bit", "one-bit, no side")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db-dir", required=True)
    ap.add_argument("--set", choices=sorted(SETS), default="korf100")
    ap.add_argument("--ids", type=int, nargs="*", help="instances (1-based) of the set; default: all")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--node-limit", type=int, default=None, help="generated nodes per board")
    ap.add_argument("--prune", type=int, default=None, help="the pruning automaton's depth (default: auto)")
    ap.add_argument(
        "--passes", type=int, default=1, help="passes over the boards in each process; the last one is timed"
    )
    ap.add_argument("--no-side", action="store_true", help="also the copies read without their side tables")
    ap.add_argument("--child", choices=READINGS, help=argparse.SUPPRESS)
    return ap


def _evict(folder: Path) -> None:
    for p in folder.glob("*.h5"):
        fd = os.open(p, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def _mapped_resident() -> int:
    """Bytes of the process's memory-mapped database files resident now."""
    total, counting = 0, False
    with open("/proc/self/smaps") as fh:
        for line in fh:
            head = line.split()
            if head and "-" in head[0] and len(head) >= 5:
                counting = head[-1].endswith(".h5")
            elif counting and line.startswith("Rss:"):
                total += int(head[1]) * 1024
    return total


def _child(a) -> dict:
    sys.path.insert(0, str(ROOT))
    from pdb_builder.formats import read_file
    from pdb_builder.moves import check_moves
    from solver.search.searcher import Searcher
    from solver.search.tables import heuristic_for

    recs = read_file(ROOT / "data" / SETS[a.set]).records
    if a.ids:
        recs = [recs[i - 1] for i in a.ids]
    lengths = [int(line.split()[1]) for line in (ROOT / "data" / SETS[a.set]).read_text().splitlines() if line.strip()]
    h = heuristic_for(recs[0].board.shape, a.db_dir)
    one_bit = a.child != "whole"
    if not all(lk.zero is not None and lk.zero.one_bit is not None for lk in h.lookups):
        raise SystemExit(f"{a.db_dir}: every table must be zero-aware with a one-bit copy")
    if a.child == "one-bit, no side":  # as a file built before the side tables is read
        for lk in h.lookups:
            lk.zero = lk.zero._replace(one_bit=lk.zero.one_bit._replace(side=None, index=None))
    s = Searcher(h, one_bit=1.0 if one_bit else False, prune=a.prune)  # (every copy, whatever it reads whole)
    arrays = {}
    for lk, o in zip(h.lookups, s.one_bit):
        for arr in (o.bits, o.codes, o.side, o.index) if one_bit else (lk.table, lk.zero.codes):
            if arr is not None:
                arrays[id(arr)] = int(arr.nbytes)
    s.solve(recs[0].board, node_limit=1_000)  # the kernel loaded before timing
    for _ in range(a.passes - 1):  # (untimed: the pages the boards read made resident first)
        for r in recs:
            s.solve(r.board, node_limit=a.node_limit, threads=a.threads)
    nodes = proven = 0
    t0 = time.perf_counter()
    for r in recs:
        res = s.solve(r.board, node_limit=a.node_limit, threads=a.threads)
        nodes += res.nodes
        if res.optimal:
            proven += 1
            assert res.length == lengths[r.index - 1] and check_moves(r.board, res.moves).ok, r.index
    seconds = time.perf_counter() - t0
    return {"boards": len(recs), "proven": proven, "nodes": nodes, "seconds": seconds}, {
        "read": sum(arrays.values()),
        "resident": _mapped_resident(),
    }


def main() -> int:
    a = _parser().parse_args()
    if a.child:
        figures, memory = _child(a)
        print(json.dumps({**figures, **memory}))
        return 0
    folder = Path(a.db_dir)
    names = ", ".join(sorted(p.name for p in folder.glob("*.h5")))
    print(f"{a.set}{' #' + ' #'.join(map(str, a.ids)) if a.ids else ''}: {names}; {a.threads} threads\n")
    print("| round | reading | proven | mean nodes | search s | read (MB) | resident (MB) |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    argv = [sys.executable, __file__, *sys.argv[1:]]
    for rnd in range(1, a.rounds + 1):
        for how in READINGS if a.no_side else READINGS[:2]:
            _evict(folder)
            out = subprocess.run([*argv, "--child", how], capture_output=True, text=True, check=True).stdout
            f = json.loads(out.strip().splitlines()[-1])
            print(
                f"| {rnd} | {how} | {f['proven']}/{f['boards']} | {f['nodes'] / f['boards']:,.0f} | "
                f"{f['seconds']:.2f} | {f['read'] / 1e6:,.0f} | {f['resident'] / 1e6:,.0f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "scripts"))
    from benchdata import run_keeping_tables

    sys.exit(run_keeping_tables(main))

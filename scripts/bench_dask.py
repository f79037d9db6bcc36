#!/usr/bin/env python3
"""Boards on a dask.distributed cluster (``solve --scheduler``): the same boards on a
local cluster of 1 worker with 1 thread, 1 worker with 2 threads and 2 workers with
1 thread, in turn; prints a markdown table for docs/benchmarks.md.

    .venv/bin/python scripts/bench_dask.py --db-dir DIR [--boards 8] [--rounds 2]

``DIR`` holds the 4x4 7-8 file; the boards are the first ``--boards`` 15-puzzles at
depth 80 (1-3 s each).  Each cluster runs in this process (``processes=False``), its
tables and kernel warmed on two boards before timing.  Needs ``pip install
'slidepdb[dask]'``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db-dir", required=True)
    ap.add_argument("--boards", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    import distributed

    from pdb_builder.formats import read_file
    from solver.run.batch import run_batch

    recs = read_file(str(DATA / "depth80_15puzzle.txt")).records[: a.boards]
    print("| round | cluster | wall s | the boards' own seconds | all optimal at 80 |")
    print("|---|---|---:|---:|---|")
    for rnd in range(a.rounds):
        for workers, threads in ((1, 1), (1, 2), (2, 1)):
            args = dict(n_workers=workers, threads_per_worker=threads, processes=False, dashboard_address=None)
            with distributed.LocalCluster(**args) as cluster, distributed.Client(cluster) as client:
                run_batch(recs[:2], db_dir=a.db_dir, scheduler=client)  # tables mapped, kernel loaded
                t0 = time.perf_counter()
                out = run_batch(recs, db_dir=a.db_dir, scheduler=client).outcomes
                wall = time.perf_counter() - t0
            own = sum(o.seconds for o in out.values())
            ok = all(out[r.index].proven and out[r.index].length == r.expected_length for r in recs)
            print(
                f"| {rnd + 1} | {workers} worker(s) x {threads} thread(s) | {wall:.2f} | {own:.2f} | {ok} |", flush=True
            )
    return 0


if __name__ == "__main__":
    from benchdata import run_keeping_tables

    sys.exit(run_keeping_tables(main))

#!/usr/bin/env python3
"""Start-up benchmark: what one ``slidepdb solve`` process costs before and around its
search; prints a markdown table for docs/benchmarks.md.

    .venv/bin/python scripts/bench_startup.py --db-dir DIR [--old-db-dir DIR2] [--repeat 7]

``DIR`` holds ``4x4-korf.pdb.7-8.h5`` (``slidepdb build 4x4 --partition 7-8``);
``DIR2``, optional, the same tables in a file without block digests (checked whole
when opened, as every file was before them).  Each case runs as a fresh process,
the cases taking turns ``--repeat`` times (one warm-up round first, untimed, so the
page cache and numba's cache are warm); the table gives the median wall time and
the median peak resident memory.  "kernel at once" cases start the compiled kernel
directly (no plain-Python first search), to show what that tier saves.  The
Korf's 100 row solves the 100 in one process: its wall time against the sum of the
boards' own seconds (``--json``; the first board's include loading the kernel) and
against the search alone, timed in a process whose kernel and tables are warm; and
once more with numba loading the cached kernels its own way (its compiler's
registries first: pdb_builder/jitload.py).  Each process keeps the bytecode of the
modules it imports, as after ``pip install`` (``PYTHONDONTWRITEBYTECODE`` is dropped),
and Korf's 100 run once more with Python compiling them from source each time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
ONE_MOVE = "1 0 2 3 4 5 6 7 8 9 10 11 12 13 14 15"
# a process running the CLI, optionally with the plain-Python first search off, and
# optionally with numba's own cache loading (its compiler's registries loaded first)
RUN = (
    "import sys, pdb_builder.jitload as j; quick = int(sys.argv.pop(1)); "
    "f = j.load_cached; j.load_cached = f if sys.argv.pop(1) == 'quick' else (lambda ns, quick=1: f(ns, quick=0)); "
    "import solver.search.first_nodes as q; q.FIRST_NODES = quick; from solver.cli import entry; entry()"
)
# as after ``pip install``: Python keeps the bytecode of the modules it imports
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run(args, quick=True, refresh=False, bytecode=True):
    """(wall seconds, peak RSS MB, stdout) of one CLI process."""
    cmd = [sys.executable, "-c", RUN, str(1000 if quick else 0), "refresh" if refresh else "quick", *args]
    env = ENV if bytecode else {**ENV, "PYTHONDONTWRITEBYTECODE": "1"}
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT, env=env)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(args)}")
    return wall, usage.ru_maxrss / 1024, out


# Korf's 100 searched in a process whose kernel and tables are loaded and warm: the search alone
SEARCH_ONLY = """
import sys, time
from pdb_builder.formats import read_file
from solver.search.searcher import Searcher
from solver.search.tables import heuristic_for
recs = read_file(sys.argv[2]).records
s = Searcher(heuristic_for(recs[0].board.shape, sys.argv[1]))
s.solve(recs[0].board)
t0 = time.perf_counter()
assert all(s.solve(r.board).length == r.expected_length for r in recs)
print(time.perf_counter() - t0)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db-dir", required=True)
    ap.add_argument("--old-db-dir")
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args()
    cases = {
        "1-move 15-puzzle, 7-8 tables": (["solve", "--db-dir", a.db_dir, ONE_MOVE], True),
        "1-move 15-puzzle, 7-8 tables, kernel at once": (["solve", "--db-dir", a.db_dir, ONE_MOVE], False),
        "1-move 15-puzzle, --no-db": (["solve", "--no-db", ONE_MOVE], True),
        "1-move 15-puzzle, --no-db, kernel at once": (["solve", "--no-db", ONE_MOVE], False),
    }
    if a.old_db_dir:
        old = ["solve", "--db-dir", a.old_db_dir, ONE_MOVE]
        cases["1-move 15-puzzle, 7-8 file without block digests"] = (old, True)
    korf = ["solve", "--json", "--workers", "1", "--db-dir", a.db_dir, str(DATA / "korf100.txt")]
    results: dict[str, list] = {k: [] for k in cases}
    korf_runs = []
    korf_refresh = []
    korf_source = []
    pure = []
    for rnd in range(a.repeat + 1):
        for name, (args, quick) in cases.items():
            r = run(args, quick)
            if rnd:
                results[name].append(r)
        wall, rss, out = run(korf)
        if rnd:
            recs = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
            assert len(recs) == 100 and all(r["optimal"] for r in recs)
            korf_runs.append((wall, rss, sum(r["seconds"] for r in recs)))
        wall, rss, out = run(korf, refresh=True)
        if rnd:
            korf_refresh.append((wall, rss))
        wall, rss, out = run(korf, bytecode=False)
        if rnd:
            korf_source.append((wall, rss))
            search = [sys.executable, "-c", SEARCH_ONLY, a.db_dir, str(DATA / "korf100.txt")]
            done = subprocess.run(search, capture_output=True, text=True, check=True, cwd=ROOT, env=ENV)
            pure.append(float(done.stdout))
        print(f"round {rnd}{' (warm-up)' if not rnd else ''} done", file=sys.stderr)
    print(f"`{' '.join(sys.argv)}`, {time.strftime('%Y-%m-%d')}, median of {a.repeat} alternating runs:\n")
    print("| case | wall s | peak RSS MB |")
    print("|---|---:|---:|")
    for name, rs in results.items():
        print(f"| {name} | {statistics.median(r[0] for r in rs):.2f} | {statistics.median(r[1] for r in rs):.0f} |")
    wall = statistics.median(r[0] for r in korf_runs)
    search = statistics.median(r[2] for r in korf_runs)
    rss = statistics.median(r[1] for r in korf_runs)
    alone = statistics.median(pure)
    print(
        f"| Korf's 100 in one process, 7-8 tables: the boards' own seconds {search:.2f} (the first "
        f"loads the kernel), the search alone in a warm process {alone:.2f}; wall minus search "
        f"{wall - alone:.2f} | {wall:.2f} | {rss:.0f} |"
    )
    for label, runs in (
        ("numba loading the cached kernels its own way (its compiler's registries first)", korf_refresh),
        ("Python compiling the modules from source each time (PYTHONDONTWRITEBYTECODE=1)", korf_source),
    ):
        wall = statistics.median(r[0] for r in runs)
        rss = statistics.median(r[1] for r in runs)
        print(f"| the same, {label}; wall minus search {wall - alone:.2f} | {wall:.2f} | {rss:.0f} |")


if __name__ == "__main__":
    import sys

    from benchdata import run_keeping_tables

    sys.exit(run_keeping_tables(main))

#!/usr/bin/env python3
"""Build benchmark: wall time, CPU time and peak memory of each database build, and
of its full ``slidepdb verify`` (every entry against a fresh BFS, every two-bit copy).

    .venv/bin/python scripts/bench_build.py [--only NAME ...] [--db-dir DIR] [--keep] [--no-verify]
                                            [--threads N ...] [--steps [--layers]] [--independent N ...]

Each build and each verify runs as its own ``slidepdb`` process (fresh, with a warm
numba cache from a tiny warm-up build and verify), measured with ``os.wait4``: wall
seconds, user CPU seconds and peak resident memory.  Prints a markdown table for the
docs/benchmarks.md.  ``--threads 1 2``: each build once with each thread count (``build
--threads``), in turn, and the speed-up against the first with the parallel fraction it
implies (Amdahl: a fraction p of the work spread over n threads gives 1 / (1 - p + p / n)).
``--steps``: instead, each build once in this process, timed step by step (the BFS of each
pattern, the two-bit copies: lowering each table and checking its copy,
and the rest: writes, digests and the check of the finished file).  ``--steps --layers``:
also the BFS's layers, banded by how many regions a layer newly reaches (against the
pattern's placements), their seconds at each thread count and the speed-up: where a
build's threads gain least (the sparse layers, which only scan the table, or the dense
ones, whose random reads and writes fill the memory system).
``--independent 1 16``: instead, what the machine allows builds that never
coordinate: the first pattern of the first case, its BFS on one thread alone for
``--seconds`` (default 30), then as N processes at once, each to the depth the lone
one reached; prints each count's seconds against the lone one's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLIDEPDB = [sys.executable, "-m", "solver"]

CASES = [
    # name, build arguments, target
    ("4x4 7-8", ["4x4", "--goal", "korf", "--partition", "7-8"], "<= 10 min, <= 4 GB"),
    ("4x4 6-6-3", ["4x4", "--goal", "korf", "--partition", "6-6-3"], "<= 20 s"),
    ("5x5 6-6-6-6", ["5x5", "--goal", "korf", "--partition", "6-6-6-6", "--memory-limit", "6G"], "<= 30 min, <= 6 GB"),
    ("6x6 default", ["6x6", "--goal", "devquiz", "--memory-limit", "6G"], "<= 30 min, <= 6 GB"),
    ("goal table 4x4 d20", ["4x4", "--goal", "korf", "--no-pdb", "--goal-depth", "20"], "<= 2 min"),
]


def measured(args):
    """(exit code, wall seconds, rusage, output) of one ``slidepdb ARGS`` process."""
    with tempfile.TemporaryFile() as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen(SLIDEPDB + args, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        log.seek(0)
        return os.waitstatus_to_exitcode(status), wall, usage, log.read().decode()


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", help="case names to run (default: all)")
    ap.add_argument("--db-dir", default=None, help="where to build (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the built files")
    ap.add_argument("--no-verify", action="store_true", help="skip the full verify of each database")
    ap.add_argument("--threads", type=int, nargs="+", default=[None], help="build thread counts to compare")
    ap.add_argument("--steps", action="store_true", help="time each build's steps in this process")
    ap.add_argument("--layers", action="store_true", help="with --steps: the BFS layers' seconds, banded")
    ap.add_argument("--independent", type=int, nargs="+", help="counts of one-thread BFS processes run at once")
    ap.add_argument("--seconds", type=float, default=30.0, help="how long the lone BFS runs (--independent)")
    ap.add_argument("--bfs-worker", nargs=2, help=argparse.SUPPRESS)  # CASE STOP: one process of --independent
    return ap


def main() -> int:
    a = _parser().parse_args()
    if a.bfs_worker:
        return bfs_worker(*a.bfs_worker)
    if a.independent:  # (no folder: nothing is written)
        return independent(next(c[0] for c in CASES if not a.only or c[0] in a.only), a.independent, a.seconds)
    db_dir = Path(a.db_dir) if a.db_dir else Path(tempfile.mkdtemp(prefix="slidepdb-bench-"))
    sys.path.insert(0, str(ROOT))
    from pdb_builder.storage import open_database

    # warm the numba cache so compile time is not counted
    subprocess.run(
        SLIDEPDB + ["-q", "build", "3x3", "--partition", "4-4", "--goal-depth", "4", "--db-dir", str(db_dir / "warm")],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    subprocess.run(SLIDEPDB + ["verify", "--db-dir", str(db_dir / "warm")], cwd=ROOT, check=True, capture_output=True)
    rows, scaling = [], []
    runs = [(c, t) for c in CASES if not a.only or c[0] in a.only for t in a.threads]
    if a.steps:
        return steps(runs, db_dir, a.layers)
    walls = {}
    for (name, args, target), threads in runs:
        before = set(db_dir.glob("*.h5"))
        more = [] if threads is None else ["--threads", str(threads)]
        code, wall, usage, out = measured(["-q", "build", *args, *more, "--db-dir", str(db_dir), "--overwrite"])
        walls[name, threads] = wall
        if threads is not None:
            name_t = f"{name}, {threads} thread{'s' if threads > 1 else ''}"
            base = walls.get((name, a.threads[0]))
            if threads != a.threads[0] and base:
                up = base / wall
                p = (1 - 1 / up) / (1 - 1 / threads)
                scaling.append(
                    f"{name}: {threads} threads {up:.2f}x faster than {a.threads[0]}, parallel fraction {p:.2f}"
                )
        else:
            name_t = name
        if code != 0:
            print(f"{name}: build failed\n{out}", file=sys.stderr)
            return 1
        new = sorted(set(db_dir.glob("*.h5")) - before) or sorted(db_dir.glob("*.h5"))
        path = [p for p in new if (("goal" in name) == (".goal." in p.name))][-1]
        db = open_database(path, verify=False)
        if db.kind == "pdb":
            entries = sum(int(t.data.size) for t in db.tables)
            mean = sum(float(t.attrs["mean"]) for t in db.tables)
            detail = f"{entries:,} entries, mean h {mean:.2f}"
        else:
            detail = f"{len(db.dist):,} states to depth {db.depth}"
        check = ["", "", ""]
        if not a.no_verify:
            vcode, vwall, vusage, vout = measured(["verify", str(path)])
            if vcode != 0:
                print(f"{name}: verify failed\n{vout}", file=sys.stderr)
                return 1
            check = [f"{vwall:.1f}", f"{vusage.ru_utime:.1f}", f"{vusage.ru_maxrss / 2**20:.2f}"]
        rows.append(
            (name_t, f"{wall:.1f}", f"{usage.ru_utime:.1f}", f"{usage.ru_maxrss / 2**20:.2f}", *check, detail, target)
        )
        print(f"done: {name_t} {wall:.1f} s", file=sys.stderr)
    print(
        "| database | build wall s | user CPU s | peak GB | full verify wall s | user CPU s | peak GB | contents "
        "| target |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    for line in scaling:
        print(f"\n{line}")
    if not a.keep and not a.db_dir:
        shutil.rmtree(db_dir, ignore_errors=True)
    return 0


# --layers: a layer's band by the regions it newly reaches, against its pattern's placements
BANDS = [(0.0, "under 0.1%"), (0.001, "0.1% to 1%"), (0.01, "1% to 10%"), (0.1, "10% or more")]


def steps(runs, db_dir: Path, by_layer: bool = False) -> int:
    """Each build of ``runs`` in this process (through the CLI), its steps timed (and
    with ``by_layer`` its BFS layers)."""
    import contextlib
    import functools
    import io

    import pdb_builder.make.building as building
    import pdb_builder.make.lowering as lowering
    import pdb_builder.make.share as share
    from solver.cli import main as cli

    spent: dict[str, float] = {}
    layers: list = []  # this build's (band, seconds, regions marked) a layer
    banded: dict = {}  # (case, threads) -> band -> [layers, seconds, regions marked]
    run_layer = share.run_layer

    def timed_layer(grant, kernel, total, *args):
        t0 = time.perf_counter()
        valued, marked = run_layer(grant, kernel, total, *args)
        band = max(b for b, (low, _) in enumerate(BANDS) if marked >= low * total)
        layers.append((band, time.perf_counter() - t0, marked))
        return valued, marked

    share.run_layer = timed_layer

    def timed(module, name: str, step: str) -> None:
        f = getattr(module, name)

        @functools.wraps(f)
        def run(*args, **kw):
            t0 = time.perf_counter()
            try:
                return f(*args, **kw)
            finally:
                spent[step] = spent.get(step, 0.0) + time.perf_counter() - t0

        setattr(module, name, run)

    timed(building, "compute_pdb", "bfs")
    timed(lowering, "relax", "lower")
    timed(lowering, "check_packed_full", "check")  # (slidepdb verify's)
    timed(lowering, "check_packed_near", "check")  # (a build's)
    print("| database | threads | whole s | BFS s | two-bit copies: lowering s | checking s | the rest s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for (name, args, _), threads in runs:
        if "--no-pdb" in args:
            continue
        spent.clear()
        layers.clear()
        more = [] if threads is None else ["--threads", str(threads)]
        t0 = time.perf_counter()
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # (the command's own table)
                cli.main(["-q", "build", *args, *more, "--db-dir", str(db_dir), "--overwrite"], standalone_mode=False)
        except SystemExit as stop:  # (the command ends with its exit code)
            if stop.code:
                return int(stop.code)
        whole = time.perf_counter() - t0
        parts = [spent.get(k, 0.0) for k in ("bfs", "lower", "check")]
        cells = " | ".join(f"{x:.1f}" for x in [whole, *parts, whole - sum(parts)])
        print(f"| {name} | {threads or 'all cores'} | {cells} |", flush=True)
        bands = banded[name, threads] = {}
        for band, seconds, marked in layers:
            cell = bands.setdefault(band, [0, 0.0, 0])
            cell[0], cell[1], cell[2] = cell[0] + 1, cell[1] + seconds, cell[2] + marked
    if by_layer:
        print_layers(banded)
    return 0


def print_layers(banded: dict) -> None:
    """Per case, its BFS layers' seconds by band at each thread count (--steps --layers)."""
    for name in dict.fromkeys(n for n, _ in banded):
        counts = [t for n, t in banded if n == name]
        many = len(counts) > 1
        rows = []
        for b, (_, head) in enumerate(BANDS):
            cells = [banded[name, t].get(b, [0, 0.0, 0]) for t in counts]
            if cells[0][0]:
                rows.append((head, cells))
        every = [[sum(cs[i][k] for _, cs in rows) for k in range(3)] for i in range(len(counts))]
        rows.append(("all", every))
        print(f"\n{name}: BFS layers by the regions each newly reaches (share of its pattern's placements)\n")
        label = " | ".join(f"s on {t or 'all cores'} thread{'s' if t != 1 else ''}" for t in counts)
        print(f"| band | layers | regions reached | {label} |" + (" speed-up |" if many else ""))
        print("|---|---:|---:|" + "---:|" * (len(counts) + many))
        for head, cells in rows:
            line = f"| {head} | {cells[0][0]} | {cells[0][2]:,} | " + " | ".join(f"{c[1]:.2f}" for c in cells) + " |"
            if many:
                line += f" {cells[0][1] / cells[-1][1]:.2f}x |" if cells[-1][1] else " |"
            print(line)


def bfs_worker(name: str, stop: str) -> int:
    """The BFS of case ``name``'s first pattern on one thread until ``stop`` ("sSECONDS"
    or "dDEPTH"); prints the depth reached and the seconds it took."""
    sys.path.insert(0, str(ROOT))
    from pdb_builder.board import Shape, parse_size
    from pdb_builder.make.building import compute_pdb
    from pdb_builder.patterns import named_partition, parse_partition

    args = next(c[1] for c in CASES if c[0] == name)
    opt = dict(zip(args[1::2], args[2::2]))
    shape = Shape.make(*parse_size(args[0]), opt.get("--goal", "devquiz"))
    if "--partition" not in opt:
        raise SystemExit(f"{name}: --independent takes a case with --partition")
    spec = opt["--partition"]
    tiles = (parse_partition(spec, shape) if "," in spec else named_partition(shape, spec)).groups[0]
    limit = float(stop[1:])
    seen = []

    class Enough(Exception):
        pass

    def layer(depth, valued, marked, seconds):
        seen.append((depth, seconds))
        if (seconds if stop[0] == "s" else depth) >= limit:
            raise Enough

    try:
        compute_pdb(shape, tiles, progress=layer, threads=1)
    except Enough:
        pass
    print(*seen[-1])
    return 0


def independent(name: str, counts, seconds: float) -> int:
    """One-thread BFS processes of case ``name``'s first pattern: alone, then ``counts`` at once."""

    def at_once(n: int, stop: str) -> list[tuple[int, float]]:
        env = dict(os.environ, NUMBA_NUM_THREADS="1")
        procs = [
            subprocess.Popen(
                [sys.executable, __file__, "--bfs-worker", name, stop], cwd=ROOT, env=env, stdout=subprocess.PIPE
            )
            for _ in range(n)
        ]
        out = []
        for p in procs:
            text, _ = p.communicate()
            if p.returncode:
                raise SystemExit(f"a BFS process failed ({p.returncode})")
            depth, secs = text.split()
            out.append((int(depth), float(secs)))
        return out

    at_once(1, "d2")  # the kernels for this shape compiled and cached
    ((depth, alone),) = at_once(1, f"s{seconds}")
    print(
        f"| BFS processes at once ({name}, first pattern, one thread each, to depth {depth}) | seconds each | "
        "mean | a process's rate against one alone |"
    )
    print("|---:|---:|---:|---:|")
    print(f"| 1 | {alone:.2f} | {alone:.2f} | 1.00 |", flush=True)
    for n in counts:
        got = [s for _, s in at_once(n, f"d{depth}")]
        mean = sum(got) / n
        print(f"| {n} | {min(got):.2f}-{max(got):.2f} | {mean:.2f} | {alone / mean:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    from benchdata import run_keeping_tables

    sys.exit(run_keeping_tables(main))

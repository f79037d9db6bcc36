#!/usr/bin/env python3
"""How ``slidepdb run`` shares the cores between its builds and its searches.

    .venv/bin/python scripts/bench_run_cores.py --dir DIR --code . [--code OTHER_CHECKOUT]
        [--sizes 4x5 5x4 3x5 5x3 | --first N] [--take N] [--hard N]
        [--time-limit 5 | --budget 8m [--budget 15m ...]] [--workers 2] [--busy N]
        [--on local --on dask:1x2 ...] [--rounds 1]

Writes the DevQuiz boards of ``--sizes`` (or the file's first ``--first`` boards; the
first ``--take`` of them; then the first ``--hard`` boards of ``hard.txt``) to
``DIR/subset.txt``, then, for each ``--code`` checkout, each ``--budget`` and each
``--on`` in turn (``--rounds`` times, alternating), runs from an empty database folder

    python -m solver run DIR/subset.txt --out DIR/K/answers.txt --db-dir DIR/K/db
        --budget none --time-limit T --workers W

with that checkout first on ``PYTHONPATH`` (``--budget B``: ``--budget B`` in place of
the time limit; ``--disk-limit L``: passed on), with ``--busy N`` programs spinning on a
core each beside it.
``--on dask:WxT`` runs it with ``--scheduler`` on a dask cluster started for the
run from that checkout: a scheduler and W worker processes of T threads each
(``dask worker --nworkers W --nthreads T``), stopped after it; their CPU
counts in the row.  It prints a row per run: wall seconds,
when the first board was proven, when every board had an answer and when the quick
pass ended (from ``answers.timeline.csv``), proven and answered boards (the answer
file's lines, each simulated), the moves of the answer file, what its database folder
holds at the end (10^9 bytes), CPU seconds of the run's
processes, busy cores (CPU over wall), the mean number of runnable threads on the
machine while it ran (``/proc/loadavg``, sampled every half second: above
``--workers`` means oversubscribed), and the largest resident set of one process.

``--solve FILE --db-dir DB``: instead, ``python -m solver solve FILE --workers W
--db-dir DB --report ...`` on tables built already (no time limit): how the
boards of a batch share the cores, its last boards most (the slots the others
left go to their searches); the row gives the most threads a board's search ran
on, from the report.
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "devquiz2011" / "problems.txt"
HARD = DATA.with_name("hard.txt")


def subset(
    problems: Path, sizes: set[str], out: Path, first: int | None = None, take: int | None = None, hard: int = 0
) -> int:
    lines = problems.read_text().split("\n")
    picked = [line for line in lines[2:] if line and (first is not None or "x".join(line.split(",")[:2]) in sizes)]
    picked = picked[:first][:take]
    if hard:
        picked += [line for line in HARD.read_text().split("\n") if line.count(",") == 2][:hard]
    out.write_text("\n".join([lines[0], str(len(picked)), *picked]) + "\n")
    return len(picked)


def spinners(n: int) -> list[int]:
    """The pids of ``n`` programs that keep a core busy each (a busy neighbour), to kill
    after the run; started through a shell that exits at once, so that they are not
    this process's children and their CPU time is not counted as the run's."""
    spin = f"{sys.executable} -c 'while True: pass' >/dev/null 2>&1 & echo $!"
    return [int(subprocess.run(["sh", "-c", spin], capture_output=True, text=True).stdout) for _ in range(n)]


def answer_file(problems: Path, out: Path, code: Path) -> tuple[int, int]:
    """(lines whose moves reach their board's goal, their moves), each line simulated."""
    sys.path.insert(0, str(code))
    from pdb_builder.formats import read_file
    from pdb_builder.moves import check_moves

    recs = read_file(str(problems)).records
    lines = out.read_text().split("\n") if out.exists() else []
    good = [m for r, m in zip(recs, lines) if m and check_moves(r.board, m).ok]
    return len(good), sum(len(m) for m in good)


def runnable_sampler(stop: threading.Event, samples: list) -> None:
    while not stop.wait(0.5):
        with open("/proc/loadavg") as fh:
            samples.append(int(fh.read().split()[3].split("/")[0]) - 1)  # less this sampler


def label(code: Path) -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(code), "describe", "--always", "--dirty"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return code.name


def start_cluster(on: str, code: Path, env: dict, folder: Path) -> tuple[str, list]:
    """A dask scheduler and ``--nworkers W --nthreads T`` workers (``on`` = ``dask:WxT``)
    run from ``code``: the scheduler's address, and the processes and their log file,
    for :func:`stop_cluster` after the run."""
    import json

    workers, threads = (int(x) for x in on.split(":", 1)[1].lower().split("x"))
    info = folder / "scheduler.json"
    log = open(folder / "cluster.txt", "w")  # noqa: SIM115 - written while the cluster runs

    def start(*cmd: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", *cmd], cwd=code, env=env, stdout=log, stderr=log)

    procs = [start("distributed.cli.dask_scheduler", "--port", "0", "--no-dashboard", "--scheduler-file", str(info))]
    for _ in range(600):
        if info.exists() and info.stat().st_size:
            break
        time.sleep(0.1)
    procs.append(
        start(
            *("distributed.cli.dask_worker", "--scheduler-file", str(info), "--no-dashboard"),
            *("--nworkers", str(workers), "--nthreads", str(threads), "--local-directory", str(folder / "dask")),
        )
    )
    address = json.loads(info.read_text())["address"]
    wait = "import sys, distributed as d; d.Client(sys.argv[1]).wait_for_workers(int(sys.argv[2]))"
    subprocess.run([sys.executable, "-c", wait, address, str(workers)], cwd=code, env=env, check=True, timeout=120)
    return address, [*procs, log]


def stop_cluster(held: list) -> None:
    *procs, log = held or [None]
    for p in reversed(procs):
        p.terminate()
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    if log is not None:
        log.close()


def one_run(code: Path, problems: Path, folder: Path, args, on: str = "local", budget: str | None = None) -> dict:
    folder.mkdir(parents=True)
    out = folder / "answers.txt"
    if args.solve:
        cmd = [sys.executable, "-m", "solver", "solve", str(args.solve.resolve())]
        cmd += ["--db-dir", str(args.db_dir.resolve()), "--report", str(folder / "report.json")]
    else:
        cmd = [sys.executable, "-m", "solver", "run", str(problems), "--out", str(out), "--db-dir", str(folder / "db")]
        if budget:
            cmd += ["--budget", budget]
        else:
            cmd += ["--budget", "none", "--time-limit", str(args.time_limit)]
        if args.disk_limit:
            cmd += ["--disk-limit", args.disk_limit]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(code), os.environ.get("PYTHONPATH")])))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    procs = []
    if on == "local":
        cmd += ["--workers", str(args.workers)]
    else:
        address, procs = start_cluster(on, code, env, folder)
        cmd += ["--scheduler", address]
    stop, samples = threading.Event(), []
    sampler = threading.Thread(target=runnable_sampler, args=(stop, samples), daemon=True)
    sampler.start()
    busy = spinners(args.busy)
    t0 = time.perf_counter()
    try:
        with open(folder / "stderr.txt", "w") as err, open(folder / "stdout.txt", "w") as so:
            rc = subprocess.run(cmd, cwd=code, env=env, stdout=so, stderr=err).returncode
    finally:
        for pid in busy:
            os.kill(pid, signal.SIGKILL)
    wall = time.perf_counter() - t0
    stop.set()
    stop_cluster(procs)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    machine = {
        "cpu": cpu,
        "busy cores": cpu / wall,
        "runnable": sum(samples) / max(len(samples), 1),
        "peak rss MB": after.ru_maxrss / 1024,
    }
    if args.solve:
        import json

        with open(folder / "report.json") as fh:
            rows = [json.loads(line) for line in fh]
        return {
            "rc": rc,
            "wall": wall,
            "proven": sum(bool(r.get("optimal")) for r in rows),
            "answered": sum(r.get("moves") is not None for r in rows),
            "most threads a board": max((r.get("threads", 1) for r in rows), default=0),
            **machine,
        }
    with open(Path(str(out) + ".timeline.csv")) as fh:
        rows = list(csv.DictReader(fh))
    proven = [float(r["elapsed_s"]) for r in rows if r["optimal"] == "1"]
    quick = [float(r["elapsed_s"]) for r in rows if r["step"] == "quick"]
    boards = int(problems.read_text().split("\n")[1])
    every = [float(r["elapsed_s"]) for r in rows if int(r["answered"]) == boards]
    good, moves = answer_file(problems, out, code)
    return {
        "rc": rc,
        "wall": wall,
        "first proven": min(proven, default=float("nan")),
        "all answered": min(every, default=float("nan")),
        "quick pass ended": max(quick, default=float("nan")),
        "proven": int(rows[-1]["proven"]) if rows else 0,
        "answered": good,
        "moves": moves,
        "db GB": sum(p.stat().st_size for p in (folder / "db").glob("*.h5")) / 1e9,
        **machine,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True, type=Path, help="working folder (its runs are kept)")
    ap.add_argument("--code", action="append", type=Path, required=True, help="a checkout to run (repeat)")
    ap.add_argument("--problems", type=Path, default=DATA)
    ap.add_argument("--sizes", nargs="+", default=["4x5", "5x4", "3x5", "5x3"])
    ap.add_argument("--first", type=int, help="the file's first N boards, whatever their sizes")
    ap.add_argument("--take", type=int, help="the first N of the boards --sizes or --first picks")
    ap.add_argument("--hard", type=int, default=0, help="and the first N boards of hard.txt")
    ap.add_argument("--time-limit", type=float, default=5.0)
    ap.add_argument("--budget", action="append", help="run --budget B instead of --time-limit (repeat: each in turn)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--busy", type=int, default=0, help="programs spinning on a core each beside every run")
    ap.add_argument("--on", action="append", help="local (--workers) or dask:WxT; repeat (default: local)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--solve", type=Path, help="a board file to solve on built tables instead of a run")
    ap.add_argument("--db-dir", type=Path, help="with --solve: the tables")
    ap.add_argument("--disk-limit", help="run --disk-limit L (default: run's own, auto)")
    args = ap.parse_args()
    if args.solve and not args.db_dir:
        ap.error("--solve needs --db-dir")
    args.dir.mkdir(parents=True, exist_ok=True)
    problems = args.dir / "subset.txt"
    if args.solve:
        print(f"solve {args.solve} --workers {args.workers} --db-dir {args.db_dir}")
        cols = ["code", "on", "rc", "wall", "proven", "answered", "most threads a board"]
    else:
        n = subset(args.problems, set(args.sizes), problems, args.first, args.take, args.hard)
        which = f"the first {args.first}" if args.first else " ".join(args.sizes)
        which += f", the first {args.take}" * bool(args.take) + f", {args.hard} of hard.txt" * bool(args.hard)
        limit = "--budget as in the row" if args.budget else f"--time-limit {args.time_limit:g}"
        busy = f", {args.busy} busy neighbour{'s' * (args.busy > 1)}" if args.busy else ""
        print(f"{n} boards ({which}), {limit}, --workers {args.workers}{busy}")
        cols = ["code", "on", "budget", "rc", "wall", "first proven", "all answered", "quick pass ended"]
        cols += ["proven", "answered", "moves", "db GB"]
    cols += ["cpu", "busy cores", "runnable", "peak rss MB"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    ons = args.on or ["local"]
    for k in range(args.rounds):
        for j, code in enumerate(args.code):
            for b, budget in enumerate(args.budget or [None]):
                for i, on in enumerate(ons):
                    folder = args.dir / f"run{k}-{j}-{b}-{i}"
                    row = dict(one_run(code.resolve(), problems, folder, args, on, budget), on=on, budget=budget or "-")
                    cells = [label(code)]
                    cells += [f"{row[c]:.1f}" if isinstance(row[c], float) else str(row[c]) for c in cols[1:]]
                    print("| " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    from benchdata import run_keeping_tables

    sys.exit(run_keeping_tables(main))

#!/usr/bin/env python3
"""The DevQuiz 2011 benchmark: ``slidepdb run`` on all 5000 boards, and the target table.

    .venv/bin/python scripts/bench_devquiz.py --out DIR/answers.txt --db-dir DB [--time-limit 60]
                                              [--quick-limit 5] [--summary-only]

Runs (or continues: always with --resume) the pipeline of ``slidepdb run`` on
``data/devquiz2011/problems.txt`` and appends each invocation's time
split (builds, quick pass, full pass) to ``ANSWERS.bench.jsonl``, so a run split
over several runs is timed in full.  Then prints, for docs/devquiz.md, the target
table and the comparison with the published answer files.  ``--summary-only``
prints the tables from what is there without solving.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "devquiz2011"


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="answer file")
    ap.add_argument("--db-dir", default=None)
    ap.add_argument("--problems", default=str(DATA / "problems.txt"))
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--quick-limit", type=float, default=5.0)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--disk-limit", default="20G")
    ap.add_argument(
        "--layout-partitions",
        type=int,
        default=1,
        help="exact-layout databases per layout (slidepdb run --layout-partitions)",
    )
    ap.add_argument(
        "--wall-free-partitions",
        type=int,
        default=2,
        help="wall-free cuts for the full pass's walled sizes (slidepdb run --wall-free-partitions)",
    )
    ap.add_argument(
        "--layout-memory",
        default=None,
        help="memory for one pattern's BFS of an exact-layout database (slidepdb run --layout-memory); "
        "a retry with more builds the larger cuts its layouts lack",
    )
    ap.add_argument(
        "--retry",
        choices=["unanswered", "unproven", "closest"],
        default=None,
        help="solve the full pass's unanswered (or unproven; closest: smallest gap first) boards "
        "again, least tried first",
    )
    ap.add_argument(
        "--no-fallback",
        action="store_true",
        help="optimal search only (a retry keeps the answers it has; a raised bound can prove them)",
    )
    ap.add_argument("--summary-only", action="store_true")
    return ap


def main() -> int:
    a = _parser().parse_args()
    sys.path.insert(0, str(ROOT))
    from pdb_builder.formats import read_file
    from solver.cli import stop_on_sigterm

    stop_on_sigterm()  # kill -TERM stops it cleanly, its time logged
    boards = read_file(a.problems)
    out = Path(a.out)
    log = out.with_name(out.name + ".bench.jsonl")
    if not a.summary_only:
        _run(a, boards, out, log)
    _summary(boards, out, log)
    return 0


def _run(a, boards, out: Path, log: Path) -> None:
    """``slidepdb run`` over the file as ``a`` says, its start and end logged to ``log``."""
    import os

    from pdb_builder.cli.shared import parse_bytes
    from solver.run.pipeline import run_pipeline
    from solver.run.plans import LAYOUT_MEMORY

    start = time.time()
    with log.open("a") as f:
        f.write(
            json.dumps(
                {
                    "start": start,
                    "time_limit": a.time_limit,
                    "quick_limit": a.quick_limit,
                    "retry": a.retry,
                    "fallback": not a.no_fallback,
                    "layout_partitions": a.layout_partitions,
                    "wall_free_partitions": a.wall_free_partitions,
                    "layout_memory": a.layout_memory,
                }
            )
            + "\n"
        )

    def progress(o):
        print(
            f"{o.index}: {o.status} {o.size} length {o.length} optimal {o.optimal} "
            f"lower bound {o.lower_bound} {o.seconds or 0:.1f} s",
            file=sys.stderr,
            flush=True,
        )

    def built(item):
        if hasattr(item, "status"):
            print(f"  built {item.shape} {item.name}: {item.status} {item.seconds:.1f} s", file=sys.stderr, flush=True)

    res = run_pipeline(
        boards.records,
        out,
        db_dir=a.db_dir,
        limits=boards.limits,
        time_limit=a.time_limit,
        quick_limit=a.quick_limit,
        disk_limit=parse_bytes(a.disk_limit),
        layout_count=a.layout_partitions,
        wall_free_count=a.wall_free_partitions,
        layout_memory=parse_bytes(a.layout_memory) if a.layout_memory else LAYOUT_MEMORY,
        workers=a.workers or os.cpu_count() or 1,
        resume=True,
        on_outcome=progress,
        on_build=built,
        retry=a.retry,
        fallback=not a.no_fallback,
    )
    with log.open("a") as f:
        f.write(
            json.dumps(
                {
                    "end": time.time(),
                    "start": start,
                    "builds": res.build_seconds,
                    "quick": res.quick.seconds if res.quick else 0.0,
                    "full": res.full.seconds if res.full else 0.0,
                    "interrupted": res.interrupted,
                    "new_builds": sum(1 for b in res.builds if b.status != "skipped"),
                }
            )
            + "\n"
        )


def _summary(boards, out: Path, log: Path) -> None:
    """What is finished (the final answers when the run is complete, else the
    journals) against the targets, and beside the peers' answer files."""
    from pdb_builder.cli.shared import format_table
    from solver.run.answer_file import COMPARISON_HEADERS, compare, comparison_rows, totals
    from solver.run.batch import SUMMARY_HEADERS, answers_of, summary_rows
    from solver.run.files import RunFiles
    from solver.run.pipeline import journalled_outcomes

    recs = boards.records
    outcomes = journalled_outcomes(recs, RunFiles(out))
    if not outcomes and out.exists():
        lines = out.read_text().split("\n")
        answers = {r.index: lines[k] for k, r in enumerate(recs) if k < len(lines) and lines[k]}
        proven = None
    else:
        answers = answers_of(outcomes)
        proven = sum(1 for o in outcomes.values() if o.proven)
    entries = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
    ends = [e for e in entries if "end" in e]
    killed = sum(1 for e in entries if "end" not in e) - len(ends)
    split = {k: sum(e[k] for e in ends) for k in ("builds", "quick", "full")}
    wall = sum(e["end"] - e["start"] for e in ends)
    use = totals(answers.values())
    within = boards.limits is None or all(u <= lim for u, lim in zip(use, boards.limits))
    rows = [
        ("boards with a valid answer", f"{len(answers)} / {len(recs)}", "5000 / 5000"),
        ("boards proven optimal", "-" if proven is None else f"{proven:,}", ">= 4,900"),
        (
            "total time (this pipeline)",
            f"{wall / 3600:.2f} h: builds {split['builds'] / 60:.1f} min, "
            f"quick pass {split['quick'] / 60:.1f} min, full pass {split['full'] / 60:.1f} min",
            "<= 6 h",
        ),
        ("total moves", f"{sum(use):,} ({'within' if within else 'OVER'} the limits; L R U D {use})", "<= 280,000"),
    ]
    print(format_table(rows, ["measure", "measured", "target"]))
    if proven is not None:
        print(format_table(summary_rows(outcomes.values()), SUMMARY_HEADERS))
    if killed > 0:
        print(f"({killed} invocation(s) killed before they logged their time: not counted)")
    peers = sorted((DATA / "peer_answers").glob("*.txt"))
    if peers:
        comps = [compare(p, recs, answers) for p in peers]
        print(format_table(comparison_rows(comps), COMPARISON_HEADERS))


if __name__ == "__main__":
    from benchdata import run_keeping_tables

    sys.exit(run_keeping_tables(main))

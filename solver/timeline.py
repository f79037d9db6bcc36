"""The proven count of a ``slidepdb run`` against elapsed time, per size and per step.

Every board's outcome is journalled with the wall-clock time it ended (``ended``,
seconds since the epoch: :func:`solver.batch.run_batch`), and the run's start is kept
in ``ANSWERS.started`` from its first sitting on (a resumed run goes on counting
from there: the time between sittings shows as a flat stretch).  :func:`write_timeline`
reads the quick pass's and the full pass's journals back into ``ANSWERS.timeline.csv``:
one row per journalled outcome in the order they ended, with the counts after it;
:func:`plot_timeline` draws the proven count against hours, one line per size.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

from pdb_builder.atomic import write_text_atomic

from .journal import beside, journal_lines

COLUMNS = [
    "elapsed_s",
    "step",
    "index",
    "size",
    "status",
    "optimal",
    "proven",
    "answered",
    "size_proven",
    "size_boards",
]


def started_path(out_path) -> Path:
    return beside(out_path, ".started")


def timeline_path(out_path) -> Path:
    return beside(out_path, ".timeline.csv")


def mark_start(out_path) -> float:
    """The run's start: read from ``ANSWERS.started``, written now if absent."""
    path = started_path(out_path)
    try:
        return float(path.read_text(encoding="utf-8").split()[0])
    except (OSError, ValueError, IndexError):
        now = time.time()
        write_text_atomic(path, f"{now:.3f}\n")
        return now


def _events(journal: Path, step: str):
    for rec in journal_lines(journal):
        if isinstance(rec, dict) and "index" in rec and "ended" in rec:
            yield float(rec["ended"]), step, rec


def timeline_rows(records, out_path, journals) -> list[dict]:
    """Rows of :data:`COLUMNS`; ``journals``: (step name, journal path) in run order.  A
    board's later outcome replaces its earlier one (a journal keeps the better of
    two tries), so the counts say how many boards stand proven and answered then."""
    t0 = mark_start(out_path)
    size_of = {r.index: (r.board.shape.size_text if r.board is not None else "?") for r in records}
    boards: dict[str, int] = {}
    for s in size_of.values():
        boards[s] = boards.get(s, 0) + 1
    events = sorted((e for step, j in journals for e in _events(Path(j), step)), key=lambda e: e[0])
    best: dict[int, tuple[bool, bool]] = {}  # index -> (answered, optimal)
    proven = answered = 0
    size_proven = dict.fromkeys(boards, 0)
    rows = []
    seen_full: set[int] = set()
    for ended, step, rec in events:
        i = int(rec["index"])
        if i not in size_of:
            continue
        if step == "full":
            step = "retry" if i in seen_full else "full"
            seen_full.add(i)
        if step == "quick" and rec.get("status") == "limit":
            continue  # the quick pass's unfinished boards go on to the full pass
        was = best.get(i, (False, False))
        now = (rec.get("status") == "solved", bool(rec.get("optimal")))
        best[i] = now
        answered += now[0] - was[0]
        proven += now[1] - was[1]
        size = size_of[i]
        size_proven[size] += now[1] - was[1]
        rows.append(
            {
                "elapsed_s": round(ended - t0, 1),
                "step": step,
                "index": i,
                "size": size,
                "status": rec.get("status"),
                "optimal": int(now[1]),
                "proven": proven,
                "answered": answered,
                "size_proven": size_proven[size],
                "size_boards": boards[size],
            }
        )
    return rows


def write_timeline(records, out_path, journals) -> Path:
    """``ANSWERS.timeline.csv`` (atomically); returns its path."""
    import io

    buf = io.StringIO()
    w = csv.DictWriter(buf, COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(timeline_rows(records, out_path, journals))
    path = timeline_path(out_path)
    write_text_atomic(path, buf.getvalue())
    return path


def plot_timeline(csv_path, png) -> None:
    """Proven boards against elapsed hours from a timeline CSV: all boards, and each size
    (its proven count), with the start of each step marked."""
    from pdb_builder.make.catalogue import pyplot

    plt = pyplot()
    with open(csv_path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    fig, ax = plt.subplots(figsize=(9, 5))
    hours = [float(r["elapsed_s"]) / 3600 for r in rows]
    ax.step(hours, [int(r["proven"]) for r in rows], where="post", label="all sizes", linewidth=2)
    for size in sorted({r["size"] for r in rows}):
        mine = [(h, int(r["size_proven"])) for h, r in zip(hours, rows) if r["size"] == size]
        ax.step([h for h, _ in mine], [p for _, p in mine], where="post", label=size, linewidth=1)
    firsts: dict[str, float] = {}
    for h, r in zip(hours, rows):
        firsts.setdefault(r["step"], h)
    for step, h in firsts.items():
        ax.axvline(h, color="grey", linestyle=":", linewidth=1)
        ax.text(h, ax.get_ylim()[1], f" {step}", rotation=90, va="top", fontsize=8, color="grey")
    ax.set_xlabel("hours since the run began")
    ax.set_ylabel("boards proven optimal")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)

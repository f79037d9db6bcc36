"""The proven count of a ``slidepdb run`` against its running time, per size and per
step.

Every board's outcome is journalled with the wall-clock time it ended (``ended``,
seconds since the epoch: :func:`solver.run.batch.run_batch`); the running time of
that moment is what the sittings say (:class:`solver.run.sittings.Sittings`).  :func:`write_timeline`
reads the run's journal back into ``ANSWERS.timeline.csv``: one row per journalled
outcome in the order they ended, the step that ended it, and the counts after it;
:func:`plot_timeline` draws the proven count against hours, one line per size.
"""

from __future__ import annotations

import csv
from pathlib import Path

from pdb_builder.atomic import write_text_atomic

from .files import RunFiles
from .journal import board_lines, pass_of
from .sittings import Sittings

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


def _events(journal: Path, records):
    """(ended, the step that wrote it, line) of each journal line of a board of
    ``records`` that says when it ended: what the journal says, as it says it."""
    for _, rec in board_lines(journal, records, simulate=False):
        if "ended" in rec:
            yield float(rec["ended"]), rec.get("step"), rec


def timeline_rows(records, files: RunFiles) -> list[dict]:
    """Rows of :data:`COLUMNS` from the run's journal, each with the step that wrote its
    line (``"answer 1"``, ``"quick"``, ``"full"``, ``"round 2"``; ``"retry"``: a board the
    full pass solved again, ``--retry``; a line naming no step is the full pass's).  A
    board's later outcome replaces its earlier one unless it found less (what
    :func:`~solver.outcome.better` keeps), so the counts say how many boards stand
    proven and answered then."""
    size_of = {r.index: (r.board.shape.size_text if r.board is not None else "?") for r in records}
    boards: dict[str, int] = {}
    for s in size_of.values():
        boards[s] = boards.get(s, 0) + 1
    events = sorted(_events(files.journal, records), key=lambda e: e[0])
    sittings = Sittings.read(files.sittings)
    sittings.cover(e[0] for e in events)
    best: dict[int, tuple[bool, bool]] = {}  # index -> (answered, optimal)
    bounds: dict[int, int] = {}  # index -> the largest lower bound journalled
    shortest: dict[int, int] = {}  # index -> the shortest answer journalled
    proven = answered = 0
    size_proven = dict.fromkeys(boards, 0)
    rows = []
    seen_full: set[int] = set()
    for ended, step, rec in events:
        i = int(rec["index"])
        if i not in size_of:
            continue
        if step in (None, "full"):  # (a line naming no step: the full pass's, or a round's before they said)
            step = "retry" if i in seen_full else "full"
            seen_full.add(i)
        bound, length = rec.get("lower_bound"), rec.get("length") if rec.get("status") == "solved" else None
        bounds[i] = max(bounds.get(i) or 0, bound or 0)
        if length is not None:
            shortest[i] = min(shortest.get(i, length), length)
        # proven by the answer of one try and the lower bound of another (solver.outcome.better)
        by_bound = shortest.get(i) is not None and shortest[i] == bounds[i]
        if pass_of(step) in ("answer", "quick") and rec.get("status") == "limit" and not by_bound:
            continue  # unfinished boards go on to the next pass
        was = best.get(i, (False, False))
        now = (rec.get("status") == "solved" or by_bound, bool(rec.get("optimal")) or by_bound)
        if not rec.get("contradiction"):  # else the tables or a search are wrong: as journalled
            now = max(was, now)  # a later try that found less never stands (solver.outcome.better)
        best[i] = now
        answered += now[0] - was[0]
        proven += now[1] - was[1]
        size = size_of[i]
        size_proven[size] += now[1] - was[1]
        rows.append(
            {
                "elapsed_s": round(sittings.running(ended), 1),
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


def write_timeline(records, files: RunFiles) -> Path:
    """``ANSWERS.timeline.csv`` (atomically); returns its path."""
    import io

    buf = io.StringIO()
    w = csv.DictWriter(buf, COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(timeline_rows(records, files))
    write_text_atomic(files.timeline, buf.getvalue())
    return files.timeline


def time_unit(span_seconds: float) -> tuple[str, float]:
    """The unit a span of ``span_seconds`` reads best in, and its length in seconds:
    seconds up to 3 minutes, minutes up to 3 hours, hours beyond."""
    if span_seconds <= 180:
        return "seconds", 1.0
    if span_seconds <= 3 * 3600:
        return "minutes", 60.0
    return "hours", 3600.0


def plot_timeline(csv_path, png) -> None:
    """Proven boards against the run's time from a timeline CSV: all boards, and each
    size (its proven count), with the start of each step marked; time in the unit
    that suits the run's length (:func:`time_unit`), the legend outside the curves."""
    from pdb_builder.plotting import pyplot

    plt = pyplot()
    with open(csv_path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    seconds = [float(r["elapsed_s"]) for r in rows]
    unit, scale = time_unit(max(seconds, default=0.0))
    xs = [s / scale for s in seconds]
    fig, ax = plt.subplots(figsize=(10, 5))
    ax.step(xs, [int(r["proven"]) for r in rows], where="post", label="all sizes", linewidth=2)
    for size in sorted({r["size"] for r in rows}):
        mine = [(x, int(r["size_proven"])) for x, r in zip(xs, rows) if r["size"] == size]
        ax.step([x for x, _ in mine], [p for _, p in mine], where="post", label=size, linewidth=1)
    firsts: dict[str, float] = {}
    for x, r in zip(xs, rows):
        firsts.setdefault(r["step"], x)
    for step, x in firsts.items():
        ax.axvline(x, color="grey", linestyle=":", linewidth=1)
        ax.text(x, ax.get_ylim()[1], f" {step}", rotation=90, va="top", fontsize=8, color="grey")
    ax.set_xlim(left=0)
    ax.set_xlabel(f"{unit} since the run began")
    ax.set_ylabel("boards proven optimal")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, title="size")
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)

"""The proven count of a ``slidepdb run`` against its running time, per size and per
step, and the time its sittings have spent.

Every board's outcome is journalled with the wall-clock time it ended (``ended``,
seconds since the epoch: :func:`solver.run.batch.run_batch`).  ``ANSWERS.sittings``
holds one line per sitting of the run (a first call and each ``--resume``): its
start and the last time it was seen working (a board journalled, a build finished,
the run's end), both wall clock; a killed sitting counts up to its last such moment.
The running time of a moment is the time earlier sittings spent plus the time since
its own sitting began, so a resumed run goes on counting where the last one
stopped, and ``--budget`` covers every sitting together.  :func:`write_timeline`
reads the quick pass's and the full pass's journals back into ``ANSWERS.timeline.csv``:
one row per journalled outcome in the order they ended, with the counts after it;
:func:`plot_timeline` draws the proven count against hours, one line per size.
"""

from __future__ import annotations

import csv
import threading
import time
from pathlib import Path

from pdb_builder.atomic import write_text_atomic

from .files import RunFiles
from .journal import board_lines

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


class Sittings:
    """The sittings of one run (``ANSWERS.sittings``, lines of ``start end``) and the
    figures the run planned once and keeps across them (:attr:`marks`, lines of
    ``name value``: ``limit``, the full pass's time limit planned from a budget;
    ``passes``, the running time at the end of the full pass, which an automatic
    budget doubles; ``disk``, the automatic disk limit).  :meth:`begin` reads the
    earlier ones and adds this one; :meth:`touch` moves this sitting's end to now
    (written at most every :data:`TOUCH_EVERY` seconds, and always with ``force``)."""

    TOUCH_EVERY = 2.0

    def __init__(self, path, spans: list[list[float]], marks: dict[str, float] | None = None):
        self.path = Path(path)  # ANSWERS.sittings (RunFiles.sittings)
        self.spans = spans
        self.marks = marks if marks is not None else {}
        self._written = 0.0
        self._lock = threading.Lock()  # the batch's thread and the builds' thread both touch

    @classmethod
    def read(cls, path) -> Sittings:
        spans, marks = [], {}
        try:
            for line in Path(path).read_text(encoding="utf-8").splitlines():
                a, b = line.split()
                if a.isidentifier():
                    marks[a] = float(b)
                else:
                    spans.append([float(a), max(float(a), float(b))])
        except (OSError, ValueError):
            pass  # none yet, or not ours: counted from now
        return cls(path, spans, marks)

    @classmethod
    def begin(cls, path, resume: bool) -> Sittings:
        """A new sitting: after the earlier ones with ``resume``, else the first."""
        sit = cls.read(path) if resume else cls(path, [])
        now = time.time()
        sit.spans.append([now, now])
        sit.touch(force=True)
        return sit

    @property
    def spent_before(self) -> float:
        """Seconds the sittings before the last one spent."""
        return sum(b - a for a, b in self.spans[:-1])

    def deadline(self, budget: float) -> float:
        """The wall-clock time at which the run's running time reaches ``budget``."""
        return self.spans[-1][0] + budget - self.spent_before

    def _holding(self, t: float) -> int:
        """The sitting wall-clock time ``t`` falls in: the last one begun by then (the
        first for a time before it)."""
        return max((k for k, (a, _) in enumerate(self.spans) if a <= t), default=0)

    def running(self, t: float) -> float:
        """Running time of the run at wall-clock time ``t`` (0 with no sitting on record)."""
        if not self.spans:
            return 0.0
        k = self._holding(t)
        return sum(b - a for a, b in self.spans[:k]) + max(t - self.spans[k][0], 0.0)

    def cover(self, times) -> None:
        """Stretch each sitting's end over the moments of ``times`` within it (a board
        journalled after the sitting's last write)."""
        for t in times if self.spans else ():
            span = self.spans[self._holding(t)]
            span[1] = max(span[1], t)

    def mark(self, name: str, value: float) -> float:
        """Keep ``value`` as ``name`` for the sittings to come (written now)."""
        self.marks[name] = value
        self.touch(force=True)
        return value

    def touch(self, force: bool = False) -> None:
        with self._lock:
            now = time.time()
            self.spans[-1][1] = max(self.spans[-1][1], now)
            if force or now - self._written >= self.TOUCH_EVERY:
                lines = [f"{a:.3f} {b:.3f}" for a, b in self.spans] + [f"{k} {v:.3f}" for k, v in self.marks.items()]
                write_text_atomic(self.path, "".join(line + "\n" for line in lines))
                self._written = now


def _events(journal: Path, step: str, records):
    for _, rec in board_lines(journal, records, simulate=False):  # what each journal says, as it says it
        if "ended" in rec:
            yield float(rec["ended"]), step, rec


def timeline_rows(records, files: RunFiles) -> list[dict]:
    """Rows of :data:`COLUMNS` from the quick pass's and the full pass's journals.  A
    board's later outcome replaces its earlier one unless it found less (what
    :func:`~solver.outcome.better` keeps), so the counts say how many boards stand
    proven and answered then."""
    size_of = {r.index: (r.board.shape.size_text if r.board is not None else "?") for r in records}
    boards: dict[str, int] = {}
    for s in size_of.values():
        boards[s] = boards.get(s, 0) + 1
    journals = [("answer", files.answer_journal), ("quick", files.quick_journal), ("full", files.journal)]
    events = sorted((e for step, j in journals for e in _events(j, step, records)), key=lambda e: e[0])
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
        if step == "full":
            step = "retry" if i in seen_full else "full"
            seen_full.add(i)
        bound, length = rec.get("lower_bound"), rec.get("length") if rec.get("status") == "solved" else None
        bounds[i] = max(bounds.get(i) or 0, bound or 0)
        if length is not None:
            shortest[i] = min(shortest.get(i, length), length)
        # proven by the answer of one try and the lower bound of another (solver.outcome.better)
        by_bound = shortest.get(i) is not None and shortest[i] == bounds[i]
        if step in ("answer", "quick") and rec.get("status") == "limit" and not by_bound:
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

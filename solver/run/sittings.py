"""The sittings of one ``slidepdb run``: ``ANSWERS.sittings`` holds one line per sitting
(a first call and each ``--resume``): its start and the last time it was seen working
(a board journalled, a build finished, the run's end), both wall clock; a killed sitting
counts up to its last such moment.  The running time of a moment is the time earlier
sittings spent plus the time since its own sitting began, so a resumed run goes on
counting where the last one stopped, and ``--budget`` covers every sitting together."""

from __future__ import annotations

import threading
from pathlib import Path

from pdb_builder.atomic import write_text_atomic

from .clock import SYSTEM, Clock


def _holding(spans, t: float) -> int:
    """The sitting of ``spans`` that wall-clock time ``t`` falls in: the last one begun
    by then (the first for a time before it)."""
    return max((k for k, (a, _) in enumerate(spans) if a <= t), default=0)


def running_time(spans, t: float) -> float:
    """Running time at wall-clock time ``t`` of a run whose sittings are ``spans``
    ((start, end) pairs; 0 with none on record)."""
    if not spans:
        return 0.0
    k = _holding(spans, t)
    return sum(b - a for a, b in spans[:k]) + max(t - spans[k][0], 0.0)


def deadline_of(spans, budget: float) -> float:
    """The wall-clock time at which the running time of a run whose sittings are
    ``spans`` reaches ``budget`` (its last sitting going on)."""
    return spans[-1][0] + budget - sum(b - a for a, b in spans[:-1])


class Sittings:
    """The sittings of one run (``ANSWERS.sittings``, lines of ``start end``) and the
    figures the run planned once and keeps across them (:attr:`marks`, lines of
    ``name value``: ``limit``, the full pass's time limit planned from a budget;
    ``passes``, the running time at the end of the full pass, which an automatic
    budget doubles; ``disk``, the automatic disk limit).  :meth:`begin` reads the
    earlier ones and adds this one; :meth:`touch` moves this sitting's end to now
    (written at most every :data:`TOUCH_EVERY` seconds, and always with ``force``)."""

    TOUCH_EVERY = 2.0

    def __init__(self, path, spans: list[list[float]], marks: dict[str, float] | None = None, clock: Clock = SYSTEM):
        self.path = Path(path)  # ANSWERS.sittings (RunFiles.sittings)
        self.clock = clock
        self.spans = spans
        self.marks = marks if marks is not None else {}
        self._written = 0.0
        self._lock = threading.Lock()  # the batch's thread and the builds' thread both touch

    @classmethod
    def read(cls, path, clock: Clock = SYSTEM) -> Sittings:
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
        return cls(path, spans, marks, clock)

    @classmethod
    def begin(cls, path, resume: bool, clock: Clock = SYSTEM) -> Sittings:
        """A new sitting: after the earlier ones with ``resume``, else the first."""
        sit = cls.read(path, clock) if resume else cls(path, [], clock=clock)
        now = clock.now()
        sit.spans.append([now, now])
        sit.touch(force=True)
        return sit

    @property
    def spent_before(self) -> float:
        """Seconds the sittings before the last one spent."""
        return sum(b - a for a, b in self.spans[:-1])

    def frozen(self) -> tuple:
        """The sittings' spans as a value ((start, end) pairs: :func:`running_time`)."""
        with self._lock:
            return tuple((a, b) for a, b in self.spans)

    def deadline(self, budget: float) -> float:
        """The wall-clock time at which the run's running time reaches ``budget``."""
        return deadline_of(self.spans, budget)

    def running(self, t: float) -> float:
        """Running time of the run at wall-clock time ``t`` (0 with no sitting on record)."""
        return running_time(self.spans, t)

    def cover(self, times) -> None:
        """Stretch each sitting's end over the moments of ``times`` within it (a board
        journalled after the sitting's last write)."""
        for t in times if self.spans else ():
            span = self.spans[_holding(self.spans, t)]
            span[1] = max(span[1], t)

    def mark(self, name: str, value: float) -> float:
        """Keep ``value`` as ``name`` for the sittings to come (written now)."""
        self.marks[name] = value
        self.touch(force=True)
        return value

    def touch(self, force: bool = False) -> None:
        with self._lock:
            now = self.clock.now()
            self.spans[-1][1] = max(self.spans[-1][1], now)
            if force or now - self._written >= self.TOUCH_EVERY:
                lines = [f"{a:.3f} {b:.3f}" for a, b in self.spans] + [f"{k} {v:.3f}" for k, v in self.marks.items()]
                write_text_atomic(self.path, "".join(line + "\n" for line in lines))
                self._written = now

"""What ``slidepdb run`` was asked for (:class:`RunOptions`) and what it gives
(:class:`RunResult`: each board's outcome, the builds, and a row a step for the
summary).  The budget's arithmetic and the planners are :mod:`solver.run.planning`'s."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pdb_builder.words import plural, seconds_text

from ..outcome import Outcome
from .plans import LAYOUT_MEMORY, Plan
from .settings import Settings
from .steps import BatchResult

AUTO_BUDGET = "auto"  # twice the running time at the end of the full pass
RETRY_MODES = ("unanswered", "unproven", "closest")


@dataclass
class RunOptions(Settings):
    """What ``slidepdb run`` was asked for (:func:`run_pipeline`'s keywords): the
    :class:`~solver.run.settings.Settings` every batch of it shares, and its own.
    ``quick_node_limit`` caps the quick pass's nodes too (tests use it to send boards to
    the full pass); ``retry``: one of :data:`RETRY_MODES`, the full-pass boards to solve
    again; ``budget``: seconds for the run (every sitting together), ``"auto"`` or None (no
    rounds); ``disk_limit``: bytes, None (none) or ``"auto"``
    (:func:`~solver.run.builds.auto_disk_limit` at the first sitting, kept for the later
    ones); ``answers_first``: under a budget in seconds, the answer pass before any build
    (:mod:`solver.run.answer_pass`); ``on_build`` sees each build as it is planned (Plan)
    and finished (BuildReport)."""

    quick_limit: float = 5.0
    memory_limit: int = 4 << 30
    layout_memory: int = LAYOUT_MEMORY
    layout_count: int = 1
    wall_free_count: int = 2
    disk_limit: int | str | None = None
    build: bool = True
    on_build: object = None
    quick_node_limit: int | None = None
    retry: str | None = None
    budget: float | str | None = None
    answers_first: bool = True

    def __post_init__(self):
        if self.retry not in (None, *RETRY_MODES):
            raise ValueError(f"retry {self.retry!r}: expected one of {', '.join(RETRY_MODES)}")
        if isinstance(self.budget, str) and self.budget != AUTO_BUDGET:
            raise ValueError(f"budget {self.budget!r}: expected seconds, {AUTO_BUDGET!r} or None")


@dataclass
class RunResult:
    outcomes: dict[int, Outcome] = field(default_factory=dict)
    builds: list = field(default_factory=list)  # BuildReport of each build done
    skipped_builds: list[Plan] = field(default_factory=list)  # over the disk limit
    # (file name, bytes) of the run's own tables removed to make room under the disk limit
    removed_tables: list[tuple[str, int]] = field(default_factory=list)
    failed_builds: list = field(default_factory=list)  # BuildFailed of each build that ended without its file
    build_seconds: float = 0.0
    answer: tuple | None = None  # the answer pass: (boards, answered, proven, seconds, steps)
    quick: BatchResult | None = None
    full: BatchResult | None = None
    left_out: set[int] = field(default_factory=set)
    interrupted: bool = False
    timeline: Path | None = None  # ANSWERS.timeline.csv (solver/run/timeline.py)
    full_limit: float | None = None  # the full pass's time limit (given, or planned from the budget)
    rounds: list[tuple] = field(default_factory=list)  # --budget: (round, time limit, boards, proven, seconds)
    earlier: tuple[int, float] = (0, 0.0)  # earlier sittings of the run (resumed): how many, seconds they spent
    failed_outputs: list = field(default_factory=list)  # OutputFailure of each output not written (solver.run.outputs)

    def phase_rows(self, total_seconds: float) -> list[tuple]:
        """Time per step: builds (those of the full pass overlap its solving), quick pass,
        full pass, all."""
        q, f = self.quick, self.full
        proven = sum(1 for o in (q.outcomes.values() if q else []) if o.proven)
        return [
            *(
                [
                    (
                        "answer pass",
                        f"{plural(self.answer[0], 'board')}, {self.answer[1]} answered, {self.answer[2]} proven"
                        + (f" ({self.answer[4]} steps)" if self.answer[4] > 1 else ""),
                        f"{self.answer[3]:.1f}",
                    )
                ]
                if self.answer
                else []
            ),
            (
                "builds",
                f"{plural(len(self.builds), 'database')} ({sum(1 for b in self.builds if b.status != 'skipped')} new); "
                "seconds: each build's, summed (builds run side by side)",
                f"{self.build_seconds:.1f}",
            ),
            (
                "quick pass",
                f"{plural(len(q.outcomes) if q else 0, 'board')}, {proven} proven",
                f"{q.seconds:.1f}" if q else "-",
            ),
            (
                "full pass",
                plural(len(f.outcomes) if f else 0, "board")
                + (f" at {seconds_text(self.full_limit)}" if self.full_limit and f and f.outcomes else ""),
                f"{f.seconds:.1f}" if f else "-",
            ),
            *(
                (f"round {k}", f"{plural(n, 'board')} at {seconds_text(limit)}, {gained} more proven", f"{secs:.1f}")
                for k, limit, n, gained, secs in self.rounds
            ),
            ("all", plural(len(self.outcomes), "board"), f"{total_seconds:.1f}"),
            *(
                [("earlier sittings", f"{self.earlier[0]} (the budget counts them)", f"{self.earlier[1]:.1f}")]
                if self.earlier[0]
                else []
            ),
        ]

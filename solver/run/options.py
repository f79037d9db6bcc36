"""What ``slidepdb run`` plans with: its options and result, the budget's arithmetic
(what is kept back, each round's limit, which boards and builds a round takes and in
what order, the full pass's limit) and the constants they rest on.  The passes and
rounds that use them are :mod:`solver.run.pipeline`'s."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pdb_builder.patterns import BUILD_RATE  # noqa: F401 - the run's planning counts builds at it
from pdb_builder.words import plural, seconds_text

from ..outcome import Known, Outcome
from .batch import BatchResult
from .builds import LAYOUT_MEMORY, Plan
from .clock import SYSTEM, Clock

# --budget: the seconds kept back to write the answer file (a board's worst wall time in
# time limits: solver.run.batch.BOARD_SPAN); under a budget shorter than RESERVE / RESERVE_SHARE,
# RESERVE_SHARE of it, at least RESERVE_MIN (a minute's budget keeps 6 s, not half of it)
RESERVE = 30.0
RESERVE_SHARE = 0.1
RESERVE_MIN = 5.0
# seconds the boards of the budget's last round have to start (its limit is what is left after
# them; a board given that limit and started later could outlast the budget, so it does not
# start); scaled with the reserve under a short budget
START_WINDOW = 15.0
MAX_LAYOUT_PARTITIONS = 5
# a round's time limit at least this times the last one's (the full pass's before the
# first): a round with less than that would retry its boards at about the limit they had
ROUND_GROWTH = 1.25
AUTO_BUDGET = "auto"  # twice the running time at the end of the full pass
# the full pass's time limit: the default, and with a budget in seconds the share of
# what is left that the full pass may take (the rest goes to the rounds), at least MIN
DEFAULT_TIME_LIMIT = 60.0
FULL_PASS_SHARE = 0.5
MIN_TIME_LIMIT = 5.0
NOT_STARTED = "not started: the budget's last start came first"
RETRY_MODES = ("unanswered", "unproven", "closest")


@dataclass
class RunOptions:
    """What ``slidepdb run`` was asked for (:func:`run_pipeline`'s keywords).  ``limits``:
    the file's L R U D move limits; ``quick_node_limit`` caps the quick pass's nodes too
    (tests use it to send boards to the full pass); ``retry``: one of
    :data:`RETRY_MODES`, the full-pass boards to solve again; ``budget``: seconds for
    the run (every sitting together), ``"auto"`` or None (no rounds); ``disk_limit``:
    bytes, None (none) or ``"auto"`` (:func:`~solver.run.builds.auto_disk_limit` at the
    first sitting, kept for the later ones); ``answers_first``: under a budget in
    seconds, the answer pass before any build (:mod:`solver.run.answer_pass`); ``on_outcome``
    sees each final outcome,
    ``on_build`` each build as it is planned (Plan) and finished (BuildReport); ``clock``:
    what the run reads the time on (:mod:`solver.run.clock`)."""

    db_dir: object = None
    limits: object = None
    time_limit: float | None = None
    quick_limit: float = 5.0
    node_limit: int | None = None
    memory_limit: int = 4 << 30
    layout_memory: int = LAYOUT_MEMORY
    layout_count: int = 1
    wall_free_count: int = 2
    disk_limit: int | str | None = None
    workers: int = 1
    scheduler: object = None
    resume: bool = False
    fallback: bool = True
    build: bool = True
    on_outcome: object = None
    on_build: object = None
    quick_node_limit: int | None = None
    retry: str | None = None
    budget: float | str | None = None
    answers_first: bool = True
    clock: Clock = SYSTEM

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


def known_of(outcomes: dict[int, Outcome]) -> dict[int, Known]:
    """What each of ``outcomes`` proved and found (those that proved nothing left out)."""
    return {i: known for i, o in outcomes.items() if (known := Known.of(o)) is not None}


def worth_waiting_for(plans, limit: float, rate: float = BUILD_RATE) -> list:
    """The builds of ``plans`` that take (at ``rate`` entries a thread-second) no longer
    than the searches of the boards they serve at ``limit`` seconds each: a round's boards
    wait for their builds, and a longer build costs more than any proof it might bring."""
    return [p for p in plans if p.entries / rate <= limit * p.boards]


def not_started_text(count: int, budget: float, none: bool) -> str:
    """Why ``count`` boards never started under ``budget`` seconds (``none``: no board did)."""
    given, kept = seconds_text(budget), seconds_text(reserve_for(budget))
    why = (
        f"the budget of {given} left no time to start a board after the {kept} it keeps to write the answers"
        if none
        else f"the budget of {given} ran out before they could start"
    )
    return f"{plural(count, 'board')} not started: {why}; give a longer --budget (or --resume with one)"


def reserve_for(budget: float) -> float:
    """The seconds a budget of ``budget`` seconds keeps back (:data:`RESERVE`)."""
    return min(RESERVE, max(RESERVE_MIN, RESERVE_SHARE * budget))


def round_limit(
    full_limit: float, k: int, deadline: float, span: float, now: float, reserve: float = RESERVE
) -> tuple[float, bool]:
    """Round ``k``'s time limit, and whether it is the last round: 2^k times the full
    pass's, or what the budget has left, ``reserve`` kept, once the round's boards have
    had :data:`START_WINDOW` seconds (scaled as ``reserve`` is) to start (a board lasts
    ``span`` limits at most)."""
    full = full_limit * 2**k
    left = (deadline - reserve - START_WINDOW * reserve / RESERVE - now) / span
    return (full, False) if full <= left else (left, True)


class UntilEnd:
    """The budget's last round's time limit, decided as each board starts (a callable
    for :func:`solver.run.batch.run_batch`): what the budget has left to ``end`` (wall
    clock), a board lasting ``span`` limits at most.  A board that ends early hands its
    slot to the next board with what is left, instead of leaving it idle to the end.
    ``given``: each board's limit (index -> seconds)."""

    def __init__(self, end: float, span: float, clock: Clock = SYSTEM):
        self.end, self.span, self.clock = end, span, clock
        self.given: dict[int, float] = {}

    def __call__(self, rec) -> float:
        limit = max((self.end - self.clock.now()) / self.span, 0.01)
        self.given[rec.index] = round(limit, 3)
        return limit

    def ended(self, seconds: float | None) -> None:
        """A board ended (the limit does not learn from it)."""


def round_boards(unproven, final: dict[int, Outcome], forecast: dict, limit: float, last: bool) -> list:
    """The boards of a round at ``limit`` seconds, in the order they start: each whose
    limit grows by :data:`ROUND_GROWTH` at least (one given about this limit before, in
    an earlier round or sitting, would search what it searched), and whose forecast proof
    fits the limit, else it waits for a round whose limit covers it; in the ``last``
    round (what the budget has left) no later round covers it, and it starts after those
    whose forecast fits: a forecast is an estimate, and the time is the budget's either way."""
    return sorted(
        (
            r
            for r in unproven
            if tried_limit(final[r.index]) * ROUND_GROWTH <= limit and (last or (forecast[r.index] or 0.0) <= limit)
        ),
        key=lambda r: round_order(final[r.index], forecast[r.index]),
    )


def round_order(o: Outcome, forecast: float | None):
    """Sort key of a round's board: those without an answer first, then the cheapest
    forecast proof (:func:`~solver.run.forecast.proof_seconds`), then (no forecast)
    the smallest gap to the lower bound."""
    if o.length is None:
        return (0, 0.0, 0)
    return (1, float("inf") if forecast is None else forecast, o.gap)


def retry_order(o: Outcome | None, closest: bool = False, attempts: int = 0):
    """Sort key of a full-pass board: the fewest earlier attempts first (a retry run
    again after a kill goes on with the boards it had not reached), then worst first:
    not solved yet or no answer, then the largest gap to the lower bound; so an
    interrupted retry has mended the most.  ``closest``: the smallest gap first (the
    proofs a longer search most likely completes)."""
    if o is None or o.length is None:
        return attempts, -(1 << 30)
    gap = o.gap
    return attempts, gap if closest else -gap


def full_pass_limit(
    deadline: float, todo, slots: int, now: float, building: float = 0.0, reserve: float = RESERVE
) -> float:
    """The full pass's time limit under a budget (``deadline``) with no --time-limit:
    what lets ``todo`` take about FULL_PASS_SHARE of what is left at one limit a
    board on average (the measured mean: most are proven early, the unproven take up
    to BOARD_SPAN limits), ``slots`` boards at once, less the ``building``
    thread-seconds of the builds that share the slots; ``now``: the time it is planned."""
    if not todo:
        return DEFAULT_TIME_LIMIT
    left = deadline - reserve - now
    fit = FULL_PASS_SHARE * (left * max(slots, 1) - building) / len(todo)
    return round(min(DEFAULT_TIME_LIMIT, max(MIN_TIME_LIMIT, fit)), 1)


def tried_limit(o: Outcome) -> float:
    """The largest time limit ``o``'s board has been given (0 when not recorded)."""
    return float("inf") if o.time_limit is None else float(o.time_limit)

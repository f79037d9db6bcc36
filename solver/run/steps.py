"""The run's steps as values: what a step is before it runs (:class:`Step`, made by the
planners of :mod:`solver.run.planning` and :mod:`solver.run.answer_pass`) and what it
gave (:class:`BatchResult`, from :func:`solver.run.batch.run_batch`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..outcome import Outcome

# a board's worst wall time in time limits: its search, the fallback's 2 limits and a
# slice of slack (BOARD_SPAN), or without the fallback its limit and some slack
BOARD_SPAN = 3.2
QUICK_SPAN = 1.5

KINDS = ("answer", "shorten", "quick", "full", "round")


@dataclass(frozen=True)
class Step:
    """One step of ``slidepdb run``, planned before it starts (a value: nothing changes it
    once planned).

    ``kind``: one of :data:`KINDS` (an answer step, a shortening step, the quick pass,
    the full pass, a round); ``number``: the answer, shortening or round step's number
    (1 the first); ``boards``: the records, in the order they start; ``time_limit``:
    seconds a board, or a callable that decides each board's as it starts
    (:class:`~solver.run.answer_pass.AnswerLimit`, :class:`~solver.run.planning.UntilEnd`);
    ``node_limit``: nodes a board (None: no limit); ``fallback``: False, True or
    :data:`solver.fallback.SHORTER`; ``plans``: the builds (:class:`~solver.run.builds.Plan`)
    its boards wait on; ``retry``: indices solved again although the journal has them;
    ``last_start``: wall clock after which no board starts (None: no budget); ``known``:
    index -> :class:`~solver.outcome.Known`, what earlier steps proved and found of its boards;
    ``last``: the budget's last round (its limit is what is left); ``limit``: the
    seconds a board where ``time_limit`` decides each as it starts (the last round's:
    what the budget had left as it was planned); ``over``: a round's boards whose
    forecast proof on the tables there are is longer than ``limit`` (or unknown).

    What the loop that runs it keeps or tells (:meth:`solver.run.pipeline.Run.steps`):
    ``rate``: the entries a build makes a thread-second that its plans were sized at;
    ``marks``: (name, value) pairs kept for the sittings to come
    (:meth:`solver.run.sittings.Sittings.mark`); ``faults``: (size, why) pairs, the
    sizes that no table can serve; ``notes``: lines for the log."""

    kind: str
    boards: list
    time_limit: object
    node_limit: int | None = None
    fallback: object = True
    plans: list = field(default_factory=list)
    retry: list = field(default_factory=list)
    last_start: float | None = None
    known: dict | None = None
    number: int = 0
    last: bool = False
    limit: float | None = None
    over: list = field(default_factory=list)
    rate: float | None = None
    marks: tuple = ()
    faults: tuple = ()
    notes: tuple = ()

    @property
    def tag(self) -> str:
        """The step as its journal lines name it: its kind, with its number where it has
        one (``"answer 2"``, ``"quick"``, ``"full"``, ``"round 1"``)."""
        return f"{self.kind} {self.number}" if self.number else self.kind

    @property
    def seconds(self) -> float | None:
        """The step's limit a board in seconds: ``time_limit`` where that is a number,
        else ``limit`` (the last round's: what the budget had left as it was planned)."""
        return self.time_limit if isinstance(self.time_limit, int | float) else self.limit

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"step kind {self.kind!r}: expected one of {', '.join(KINDS)}")


class Deciding:
    """A step's time limit as its executor applies it (made by the step's limit rule,
    ``time_limit.start()``, as the step starts: :class:`~solver.run.answer_pass.AnswerLimit`,
    :class:`~solver.run.planning.UntilEnd`): called with each board and the ``now`` it
    starts at (the executor's clock: a rule reads none), told each board's seconds as it
    ends (:meth:`ended`); ``given``: the limit each board had (index -> seconds)."""

    def __init__(self):
        self.given: dict[int, float] = {}

    def __call__(self, rec, now: float) -> float:
        limit = self.decide(rec, now)
        self.given[rec.index] = round(limit, 3)
        return limit

    def decide(self, rec, now: float) -> float:
        raise NotImplementedError

    def ended(self, seconds: float | None) -> None:
        """A board ended after ``seconds`` (the limit does not learn from it here)."""


@dataclass
class BatchResult:
    """What one step (one batch of boards) gave: each board's outcome (index ->
    :class:`~solver.outcome.Outcome`), whether it was interrupted, how many outcomes
    came from its journal (``resumed``), its seconds, the answers the move limits kept
    out of the answer file, the journalled proofs solved again because their tables
    changed (``reopened``), the outputs not written, when it began, and the limit each
    board was given as it started where the step decides them so (``given``: index ->
    seconds)."""

    outcomes: dict[int, Outcome]
    interrupted: bool = False
    resumed: int = 0
    seconds: float = 0.0
    left_out: set[int] = field(default_factory=set)  # answers kept out of the answer file by the move limits
    reopened: int = 0  # journalled proofs whose tables changed since: solved again
    failed_outputs: list = field(default_factory=list)  # OutputFailure of the answer file (solver.run.outputs)
    began: float = 0.0  # wall clock (clock.now()) as the step began: a board ended since was started by it
    given: dict[int, float] = field(default_factory=dict)

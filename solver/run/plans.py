"""What a run plans to build, from what the database folder holds: one plan per shape
that lacks tables (:func:`plan_first`, :func:`plan_wall_free_cuts`, :func:`plan_layouts`),
each partition one build job (:mod:`solver.run.builds` runs them).  Pure: the folder is
a value, the names of its files (:func:`solver.run.builds.folder_names` reads it), so the
run's planning (:mod:`solver.run.next_step`) reads no disk."""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatch

from pdb_builder.board import Shape
from pdb_builder.errors import BoardError
from pdb_builder.make.building import default_partition, layout_partitions
from pdb_builder.patterns import num_placements
from pdb_builder.storage import pdb_filename

LAYOUT_MEMORY = 512 << 20  # per pattern BFS of an exact-layout database: small, quick tables


@dataclass
class Plan:
    shape: Shape
    role: str  # "wall-free" or "layout"
    boards: int
    entries: int
    partitions: list = field(default_factory=list)  # one file each, one build job each
    records: list = field(default_factory=list)  # the boards that want them
    started: float = 0.0  # the clock's tick() when its build began
    give_up_at: float | None = None  # wall clock: given up if still running then (Builds.forecast)

    @property
    def per_board(self) -> float:
        """Entries over the boards that want them: what the passes order builds by, the
        cheapest a board first (the most proofs soonest)."""
        return self.entries / max(self.boards, 1)

    @property
    def zero_aware(self) -> bool:
        """Whether its tables keep the blank's regions' costs: a layout's (see build_partition);
        wall-free ones built so proved no more boards for twice the disk (docs/devquiz.md)."""
        return self.role == "layout"

    @property
    def bytes(self) -> int:
        # one byte an entry, contiguous layout (no two-bit copy: see build_partition), and one
        # more for a zero-aware table
        return self.entries * (2 if self.zero_aware else 1)


def _has_pdb(shape: Shape, folder: frozenset[str]) -> bool:
    return any(fnmatch(name, f"{shape.key}.pdb.*.h5") for name in folder)


def _plan(wants, role: str, partitions_of, faults: dict | None) -> dict[str, Plan]:
    """A build for each distinct shape of ``wants`` ((shape, record) pairs) that
    ``partitions_of(shape)`` says lacks some partitions, with the boards that want it.
    A shape whose partitions raise :class:`~pdb_builder.errors.BoardError` (more free
    cells than tables serve, or patterns larger than the memory limit allows) gets no
    plan and its size's text and the fault go into ``faults``; None: it raises."""
    plans: dict[str, Plan] = {}
    seen: set[str] = set()
    for s, rec in wants:
        if s.key in plans:
            plans[s.key].boards += 1
            plans[s.key].records.append(rec)
        elif s.key not in seen:
            seen.add(s.key)
            try:
                parts = partitions_of(s)
            except BoardError as exc:
                if faults is None:
                    raise
                faults.setdefault(s.size_text, str(exc))
                continue
            if parts:
                plans[s.key] = Plan(s, role, 1, entries_of(s, parts), parts, [rec])
    return plans


def entries_of(shape: Shape, partitions) -> int:
    n = len(shape.free_cells)
    return sum(num_placements(n, len(g)) for p in partitions for g in p.groups)


def plan_wall_free(records, folder: frozenset[str], memory_limit: int, faults: dict | None = None) -> list[Plan]:
    """One wall-free database per size (and goal) the file holds and the folder lacks
    (``faults``: as :func:`_plan` says)."""
    wants = (
        (r.board.shape.wall_free() if r.board.shape.goal_kind != "custom" else r.board.shape, r)
        for r in records
        if r.board is not None
    )
    return list(
        _plan(
            wants,
            "wall-free",
            lambda s: [] if _has_pdb(s, folder) else [default_partition(s, memory_limit)],
            faults,
        ).values()
    )


def plan_first(
    records,
    folder: frozenset[str],
    memory_limit: int,
    layout_memory: int = LAYOUT_MEMORY,
    count: int = 1,
    faults: dict | None = None,
) -> list[Plan]:
    """The tables the quick pass waits on: each size's wall-free database
    (:func:`plan_wall_free`), except where every board of the size is walled and the
    databases of their exact layouts (:func:`plan_layouts`) hold no more entries:
    there those.  On a walled board the wall-free tables stand in for its layout's,
    which are stronger (they know that no tile crosses a wall); they pay where many
    boards share them, and are a detour where the layouts cost as little.  There the
    size's wall-free cut of the layouts' pattern sizes (:func:`plan_wall_free_cuts`)
    comes with the layouts while all of them together still hold no more entries.
    ``faults``: as :func:`_plan` says."""
    out = []
    for p in plan_wall_free(records, folder, memory_limit, faults):
        walled = [r for r in p.records if r.board.shape.walls]
        if p.shape.walls or len(walled) < len(p.records):  # a custom goal's walled shape, or wall-free boards
            out.append(p)
            continue
        layouts = plan_layouts(walled, folder, layout_memory, count, faults)
        cheap = plan_wall_free_cuts(walled, folder, layout_memory, 1, faults) + layouts
        out += next((c for c in (cheap, layouts) if sum(q.entries for q in c) <= p.entries), [p])
    return out


def plan_layouts(
    records,
    folder: frozenset[str],
    layout_memory: int = LAYOUT_MEMORY,
    count: int = 1,
    faults: dict | None = None,
    fill: bool = False,
) -> list[Plan]:
    """The exact-layout databases (``count`` partitions, and with ``fill`` the cut that
    fills the memory: :func:`layout_partitions`) each walled board in ``records``
    lacks, cheapest a board first (``faults``: as :func:`_plan` says)."""
    wants = ((r.board.shape, r) for r in _walled(records))

    def missing(s: Shape) -> list:
        cuts = layout_partitions(s, layout_memory, count, fill)
        return [p for p in cuts if pdb_filename(s, p.name) not in folder]

    plans = _plan(wants, "layout", missing, faults)
    return sorted(plans.values(), key=lambda p: (p.per_board, p.shape.key))


def plan_wall_free_cuts(
    records, folder: frozenset[str], layout_memory: int = LAYOUT_MEMORY, count: int = 2, faults: dict | None = None
) -> list[Plan]:
    """For the sizes of the walled boards in ``records``: ``count`` cuts of the
    wall-free shape into patterns whose BFS fits ``layout_memory``
    (:func:`layout_partitions`; the first is the size's default where it fits), those
    the folder lacks.  They serve every board of the size, so they cost little a board,
    and their max with the exact layout's sums is the stronger heuristic (measured in
    docs/design.md).  None for a size whose folder holds other wall-free tables (of
    larger patterns, built for more memory, or the user's own): those stand alone.
    ``faults``: as :func:`_plan` says."""
    if count < 1:
        return []

    def missing(s: Shape) -> list:
        want = {pdb_filename(s, p.name): p for p in layout_partitions(s, layout_memory, count)}
        there = {name for name in folder if fnmatch(name, pdb_filename(s, "*"))}
        return [] if there - want.keys() else [p for name, p in want.items() if name not in there]

    wants = ((r.board.shape.wall_free(), r) for r in _walled(records))
    return list(_plan(wants, "wall-free", missing, faults).values())


def _walled(records):
    """The boards of ``records`` that have walls and a DevQuiz or Korf goal (their
    layouts and wall-free shapes are named)."""
    return (r for r in records if r.board is not None and r.board.shape.walls and r.board.shape.goal_kind != "custom")


def boards_served(records) -> dict[str, list[int]]:
    """Each shape key whose tables serve boards of ``records`` (a board's own shape's,
    and its size's wall-free ones: :attr:`~pdb_builder.board.Shape.wall_free_key`),
    with those boards' indices."""
    out: dict[str, list[int]] = {}
    for r in records:
        if r.board is not None:
            for key in filter(None, (r.board.shape.key, r.board.shape.wall_free_key)):
                out.setdefault(key, []).append(r.index)
    return out


def settled(o) -> bool:
    """A board decided for good (an :class:`~solver.outcome.Outcome`, or None: not yet
    seen): proven optimal, or rejected (invalid, unsolvable)."""
    return o is not None and (o.proven or o.status in ("invalid", "unsolvable"))

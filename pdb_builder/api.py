"""The builder as a library: ``from pdb_builder import build, check, inspect``.

``slidepdb build``, ``check`` and ``inspect`` call these; they return data, never
print, and raise the error types the CLI maps to exit codes
(:class:`~pdb_builder.errors.BoardError`: 2, :class:`~pdb_builder.errors.DatabaseError`: 1).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path

from .board import Board, Shape, parse_size
from .errors import BoardError, OptionsError
from .moves import check_moves
from .options import byte_count, one_of, positive_number
from .words import human_bytes

log = logging.getLogger("slidepdb.build")

DEFAULT_MEMORY = 4 << 30  # bytes for one pattern's BFS


class TargetError(BoardError):
    """A bad build argument; ``param`` names the command-line option it came from."""

    def __init__(self, message: str, param: str):
        super().__init__(message)
        self.param = param


def shapes_of_target(target: str, goal: str = "korf", wall_free: bool = False, on_invalid=None) -> list[Shape]:
    """Shapes named by a build target: a size (``4x4``), a board (DevQuiz line or
    numeric) or a file of boards (every distinct shape in it; with ``wall_free``,
    walled boards name their size's wall-free shape).  ``on_invalid(source, index,
    error)`` hears of boards of a file that do not parse."""
    from .formats import read_board_arg

    if target != "-" and not Path(target).exists() and "," not in target and " " not in target.strip():
        try:
            w, h = parse_size(target)
        except BoardError as exc:
            raise TargetError(str(exc), "TARGET") from None
        return [Shape.make(w, h, goal)]
    boards = read_board_arg(target, goal=goal)
    shapes: dict[str, Shape] = {}
    for r in boards.records:
        if r.board is None:
            if on_invalid is not None:
                on_invalid(boards.source, r.index, r.error)
            continue
        s = r.board.shape.wall_free() if wall_free and r.board.shape.walls else r.board.shape
        shapes.setdefault(s.key, s)
    if not shapes:
        raise TargetError(f"{target}: no valid board to build for", "TARGET")
    return list(shapes.values())


@dataclass
class BuildOptions:
    """What :func:`build_reports` builds and how: ``slidepdb build``'s options (see
    :func:`build` for each) and what it is told as it goes."""

    partition: str | list[str] | None = None
    goal: str = "korf"
    db_dir: str | Path | None = None
    memory_limit: int | str = DEFAULT_MEMORY
    goal_depth: int | str | None = None
    pdb: bool = True
    wall_free: bool = False
    two_bit: bool = True
    zero_aware: bool = False  # each table's zero-aware entries too (pdb_builder.regions)
    one_bit: bool = False  # and their one-bit copies (pdb_builder.one_bit)
    layout: str = "contiguous"
    overwrite: bool = False
    threads: int | None = None  # each BFS's threads (default: every usable core)
    # told as it goes
    progress: object = None
    goal_progress: object = None
    on_partition: object = None
    on_invalid: object = None
    on_step: object = None


def build_reports(target: str | Shape, options: BuildOptions | None = None, /, **changes) -> list:
    """:func:`build` as ``options`` say (:class:`BuildOptions`; ``changes``: fields of it
    to change), returning each file's :class:`~pdb_builder.make.building.BuildReport`
    (path, status built/skipped/rebuilt, entries, mean estimate, seconds).
    ``progress(name, pattern index, depth, placements valued, regions marked, seconds)``
    after each BFS layer; ``goal_progress(name, depth, layer, total, seconds)``;
    ``on_partition(shape, partition)`` before each database; ``on_step(name, pattern
    index or None, what, seconds)`` after each step that follows a BFS (checksums, the
    two-bit copy, the file's verification)."""
    from .make.building import build_goal_table, build_pdb

    o = replace(options or BuildOptions(), **changes)

    _check_build(target, o)
    shapes = [target] if isinstance(target, Shape) else shapes_of_target(target, o.goal, o.wall_free, o.on_invalid)
    names = [o.partition] if isinstance(o.partition, str) else list(o.partition or [])
    reports = []
    for shape in shapes:
        if o.pdb:
            for part in _partitions(shape, names, o.memory_limit):
                if o.on_partition is not None:
                    o.on_partition(shape, part)
                cb = (
                    None
                    if o.progress is None
                    else (lambda i, d, v, m, s, name=f"{shape.key} {part.name}": o.progress(name, i, d, v, m, s))
                )
                step = (
                    None
                    if o.on_step is None
                    else (lambda i, what, s, name=f"{shape.key} {part.name}": o.on_step(name, i, what, s))
                )
                reports.append(
                    build_pdb(
                        shape,
                        part,
                        o.db_dir,
                        o.overwrite,
                        o.layout,
                        progress=cb,
                        two_bit=o.two_bit,
                        threads=o.threads,
                        on_step=step,
                        zero_aware=o.zero_aware,
                        one_bit=o.one_bit,
                    )
                )
        if o.goal_depth is not None:
            cb = (
                None
                if o.goal_progress is None
                else (lambda d, layer, total, s, name=f"{shape.key} goal": o.goal_progress(name, d, layer, total, s))
            )
            reports.append(
                build_goal_table(
                    shape,
                    None if o.goal_depth == "auto" else o.goal_depth,
                    o.db_dir,
                    o.overwrite,
                    o.layout,
                    progress=cb,
                    memory_limit=o.memory_limit,
                )
            )
    return reports


def _check_build(target, o: BuildOptions) -> None:
    """``target`` and the options a build takes, in the CLI's words (``o.memory_limit`` made bytes)."""
    one_of("goal", o.goal, ("korf", "devquiz"))
    o.memory_limit = byte_count("memory_limit", o.memory_limit)
    positive_number("threads", o.threads, whole=True)
    if not isinstance(target, (str, Shape)):
        raise OptionsError(f"target: expected a size, a board, a file name or a Shape, not {target!r}")
    if (
        o.goal_depth is not None
        and o.goal_depth != "auto"
        and not (isinstance(o.goal_depth, int) and 1 <= o.goal_depth <= 254)
    ):
        raise TargetError(f"{o.goal_depth!r}: a depth from 1 to 254, or auto", "--goal-depth")
    if not o.pdb and o.goal_depth is None:
        raise TargetError("building no pattern database needs a goal depth", "--no-pdb")


def _partitions(shape: Shape, names: list[str], memory_limit: int) -> list:
    """The partitions ``names`` (named or explicit) of ``shape``, or its default; a named one
    is never built past the memory limit it was given."""
    from .make.building import default_partition
    from .patterns import named_partition, parse_partition

    try:
        parts = [parse_partition(p, shape) if "," in p else named_partition(shape, p) for p in names]
    except BoardError as exc:
        raise TargetError(str(exc), "--partition") from None
    n = len(shape.free_cells)
    for part in parts:
        need = part.bfs_memory(n)
        if need > memory_limit:
            raise TargetError(
                f"partition {part.name} needs {human_bytes(need)} for its largest pattern's BFS, over the "
                f"memory limit of {human_bytes(memory_limit)}: raise --memory-limit or name a smaller one",
                "--memory-limit",
            )
    return parts or [default_partition(shape, memory_limit)]  # BoardError in its own words


def build(
    target: str | Shape,
    *,
    partition: str | list[str] | None = None,
    goal: str = "korf",
    db_dir: str | Path | None = None,
    memory_limit: int = DEFAULT_MEMORY,
    goal_depth: int | str | None = None,
    wall_free: bool = False,
    zero_aware: bool = False,
    one_bit: bool = False,
    overwrite: bool = False,
    progress: bool = False,
) -> list[Path]:
    """Build pattern databases (and, with ``goal_depth``, a goal-side BFS table) for
    ``target`` into ``db_dir`` (default ``$SLIDEPDB_DB_DIR`` or ``./databases``);
    the paths of the files.  ``target``: a size (``"3x3"``), a board, a file of
    boards, or a :class:`~pdb_builder.board.Shape`.  ``partition``: a name (``"7-8"``,
    ``"6-6-3"``) or explicit (``"1,2,3/4,5,6"``), or several; default: the size's
    named default, else patterns grown to fit ``memory_limit`` bytes.  A valid file
    already there is kept (unless ``overwrite``, or ``zero_aware`` and it lacks the
    zero-aware entries: the cost of each region of the blank, which the solver reads;
    ``one_bit`` adds their one-bit copies, which the solver reads in half the memory);
    an interrupted build leaves none.  ``progress``: log each BFS layer (logger ``slidepdb.build``, level INFO).
    ``memory_limit``: bytes, or a size such as ``"4G"``.  An option out of the range
    the CLI takes raises :class:`~pdb_builder.errors.OptionsError` naming it."""

    def layer(name, i, depth, valued, marked, seconds):
        log.info(
            "%s pattern %d depth %d: %d placements, %d new regions, %.1f s", name, i + 1, depth, valued, marked, seconds
        )

    return [
        Path(r.path)
        for r in build_reports(
            target,
            partition=partition,
            goal=goal,
            db_dir=db_dir,
            memory_limit=memory_limit,
            goal_depth=goal_depth,
            wall_free=wall_free,
            zero_aware=zero_aware,
            one_bit=one_bit,
            overwrite=overwrite,
            progress=layer if progress else None,
        )
    ]


def layout_tables(shape: Shape, memory_limit: int, zero_aware: bool = False):
    """Additive pattern tables of ``shape`` (its exact wall layout) computed in memory
    and never written: the partition the build would choose within ``memory_limit``
    bytes a pattern BFS, and an iterator that builds its tables one pattern at a time
    on the calling thread, yielding (pattern tiles, table, placements valued, its
    zero-aware entries or None: ``zero_aware``), so the caller can stop between
    patterns.  Raises :class:`~pdb_builder.errors.BoardError` when no partition fits.
    (The solver's fallback asks for these: the build side is imported here, at the
    first call, not by the solver.)"""
    from .make.building import compute_pdb, default_partition

    # the BFS keeps to the calling thread: the tables are small, and the board's search
    # (one thread of a batch's slot) waits for them
    part = default_partition(shape, memory_limit, build=lambda s, g: compute_pdb(s, g, threads=1))

    def tables():
        for group in part.groups:
            table, stats = compute_pdb(shape, group, threads=1, zero_aware=zero_aware)
            yield group, table, stats.entries, stats.zero

    return part, tables()


@dataclass
class Check:
    """What ``slidepdb check`` says of one board (and moves): ``solvable`` decided
    exactly (``method``, and ``reason`` when not); with moves, whether they are legal
    and reach the goal (``move_index``: the first bad move)."""

    board: Board
    solvable: bool
    method: str
    reason: str | None = None
    moves: str | None = None
    reaches_goal: bool | None = None
    move_index: int | None = None
    move_error: str | None = None


def check(board: str | Board, moves: str | None = None, goal: str = "korf") -> Check:
    """Decide ``board``'s solvability and, with ``moves``, simulate them."""
    from .formats import parse_board_text
    from .solvability import decide

    b = board if isinstance(board, Board) else parse_board_text(board, goal=goal)[1]
    verdict = decide(b)
    out = Check(b, verdict.solvable, verdict.method, None if verdict.solvable else verdict.reason)
    if moves is not None:
        mc = check_moves(b, moves)
        out.moves, out.reaches_goal = moves, mc.ok
        if not mc.ok:
            out.move_index, out.move_error = mc.index, mc.reason
    return out


def inspect(db_dir: str | Path | None = None, verify: bool = True) -> list:
    """One :class:`~pdb_builder.make.catalogue.DbRow` per database of ``db_dir``: shape,
    kind, partition, entries, bytes, build time, estimates, checksum state."""
    from .make.catalogue import list_databases

    return list_databases(db_dir, verify)

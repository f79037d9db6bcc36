"""Build orchestration: validate -> allocate -> BFS layers -> stats -> write.

``compute_pdb`` returns one pattern's table in memory; ``build_database`` builds a
whole partition and publishes it atomically with :mod:`pdb_builder.storage`.
Kernels never print: this driver owns logging and progress (stderr).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..board import Shape
from ..errors import BoardError
from ..patterns import (
    Partition,
    compact_candidates,
    cut,
    default_sizes,
    filled_sizes,
    mirror_cut,
    most_compact,
    named_partition,
    validate_partition,
)
from ..ranking import num_placements, weights
from ..regions import grid_masks

log = logging.getLogger("slidepdb.build")


@dataclass
class TableStats:
    tiles: tuple[int, ...]
    entries: int
    seconds: float
    layers: list[int] = field(default_factory=list)  # placements first valued at each depth
    histogram: list[int] = field(default_factory=list)  # count of each value 0..254, then unreachable
    mean: float = 0.0
    max: int = 0
    zero: object = None  # the zero-aware entries (pdb_builder.regions.ZeroTable), where built


def grid_arrays(shape: Shape):
    """Masks and index maps the BFS kernels take (grid cells <-> compact free cells)."""
    free = shape.free_cells
    cells_of = np.array(free, dtype=np.int64)
    cidx = np.full(shape.n, -1, dtype=np.int64)
    cidx[cells_of] = np.arange(len(free))
    nbr_mask = np.zeros(shape.n, dtype=np.uint64)
    for c in free:
        m = 0
        for d in shape.neighbours[c]:
            m |= 1 << d
        nbr_mask[c] = np.uint64(m)
    return (cells_of, cidx, nbr_mask, *grid_masks(shape.width, shape.n, free))


def compute_pdb(
    shape: Shape, tiles, progress=None, threads=None, zero_aware: bool = False
) -> tuple[np.ndarray, TableStats]:
    """Additive PDB of pattern ``tiles`` on ``shape`` (see :mod:`pdb_builder.make.bfs`).

    Returns a uint8 table indexed by the k-permutation rank of the tiles' compact
    cells, and its statistics.  ``progress(depth, valued, marked, seconds)`` is
    called after each layer.  ``threads``: how many threads the BFS runs, a count or a
    :class:`~pdb_builder.cores.Share` whose grant may change while it runs
    (default: every usable core).  ``zero_aware``: the table's zero-aware entries too,
    in ``stats.zero`` (:mod:`pdb_builder.regions`)."""
    from ..cores import share_of
    from ..patterns import word_dtype
    from .bfs import FLAG_SHIFT, MAX_VALUE, UNSEEN, expand_share, flag_rows, seed_goal
    from .share import run_layer

    share = share_of(threads)

    tiles = tuple(tiles)
    validate_partition(shape, Partition("check", (tiles,)))
    t0 = time.perf_counter()
    n, k = len(shape.free_cells), len(tiles)
    total = num_placements(n, k)
    cells_of, cidx, nbr_mask, all_free, not_col0, not_last = grid_arrays(shape)
    grid = (cells_of, cidx, nbr_mask, all_free, shape.width, not_col0, not_last)
    rows = None
    if zero_aware:
        from .zero import region_rows, split_placements

        rows = region_rows(split_placements(n, k, total, grid, share))
        grid += (rows.bits, rows.prefix, rows.depths, True)
    else:
        grid += (np.zeros(1, np.uint64), np.zeros(1, np.int64), np.zeros(1, np.uint8), False)
    w = weights(n, k)
    words = np.zeros(total, dtype=word_dtype(n, k))
    table = np.full(total, UNSEEN, dtype=np.uint8)
    goal_place = np.array([shape.home[t] for t in tiles], dtype=np.int64)
    flags = flag_rows(total)  # the runs of placements each layer scans
    r = seed_goal(words, table, goal_place, cidx, all_free, shape.goal_blank, shape.width, not_col0, not_last, w)
    flags[0, r >> FLAG_SHIFT] = 1
    layers = []
    depth = 0
    while True:
        if depth > MAX_VALUE:
            raise BoardError(f"pattern {tiles}: costs above {MAX_VALUE} do not fit one byte")
        valued, marked = run_layer(share, expand_share, total, words, table, depth, n, k, w, grid, flags)
        flags[depth % 2] = 0  # scanned; the next layer marks this parity's runs again
        layers.append(int(valued))
        if progress is not None:
            progress(depth, int(valued), int(marked), time.perf_counter() - t0)
        if marked == 0:
            break
        depth += 1
    del words
    zero = None
    if rows is not None:
        from .zero import zero_codes

        zero = zero_codes(rows, table)
        del rows
    while layers and layers[-1] == 0:
        layers.pop()
    # a placement's value is the depth of the layer that first valued it: the layers are its histogram
    hist = np.zeros(UNSEEN + 1, dtype=np.int64)
    hist[: len(layers)] = layers
    hist[UNSEEN] = total - sum(layers)
    stats = TableStats(
        tiles, total, time.perf_counter() - t0, layers, [int(x) for x in hist], *histogram_mean_max(hist), zero
    )
    return table, stats


def histogram_mean_max(hist) -> tuple[float, int]:
    """Mean and max of the reachable values (the last bin counts unreachable placements)."""
    from .bfs import UNSEEN

    h = np.asarray(hist[:UNSEEN], dtype=np.float64)
    count = h.sum()
    if count == 0:
        return 0.0, 0
    return float((h * np.arange(UNSEEN)).sum() / count), int(np.nonzero(h)[0].max())


@dataclass
class BuildReport:
    path: str
    kind: str
    shape: str
    name: str
    status: str  # "built", "skipped" (already built and valid), "rebuilt", "updated" (one-bit copies added)
    seconds: float = 0.0
    entries: int = 0
    mean_h: float = 0.0
    max_h: int = 0
    peak_bytes: int = 0


def build_pdb(
    shape: Shape,
    partition: Partition,
    db_dir=None,
    overwrite: bool = False,
    layout: str = "contiguous",
    progress=None,
    two_bit: bool = True,
    threads=None,
    on_step=None,
    zero_aware: bool = False,
    one_bit: bool = False,
) -> BuildReport:
    """Build ``partition`` for ``shape`` and publish it under ``db_dir``.  An existing
    file that opens and verifies is kept unless ``overwrite`` (or ``zero_aware`` asks for
    zero-aware entries it lacks; where it lacks only the one-bit copies ``one_bit`` asks
    for, or their side tables, they are added: status "updated").  ``two_bit``: also store
    each table's two-bit copy (``packed.py``); ``threads``: the BFS's threads (see
    :func:`compute_pdb`); ``on_step``: told of the steps after each BFS
    (:func:`~pdb_builder.make.writing.write_pdb`); ``zero_aware``: each table's zero-aware
    entries too (:func:`compute_pdb`), and with ``one_bit`` their one-bit copies
    (``one_bit.py``).  Another process building the same file: this
    one waits for it (:func:`building`)."""
    from ..storage import default_db_dir, pdb_filename

    validate_partition(shape, partition)
    path = default_db_dir(db_dir) / pdb_filename(shape, partition.name)
    with building(path):
        return _build_pdb(
            path,
            shape,
            partition,
            overwrite,
            layout,
            progress,
            two_bit,
            threads,
            on_step,
            zero_aware and one_bit,
            zero_aware,
        )


def building(path):
    """One builder of the database ``path`` at a time, across processes: an OS lock on
    ``.NAME.lock`` beside it, held from the check of what is there to the publication
    (:func:`pdb_builder.locks.hold`).  A second builder waits, saying for whom, then
    finds the finished file and keeps it (or, where the first failed, builds it)."""
    from ..locks import hold_where_possible

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)

    def waiting(holder: str) -> None:
        log.warning("%s: another process is building it (%s): waiting for it", path.name, holder or "unknown")

    def unlockable(exc) -> None:
        log.warning("%s: two builds of it at once would both build it (the last one published stands)", exc)

    lock = path.with_name(f".{path.name}.lock")
    return hold_where_possible(lock, wait=True, on_wait=waiting, on_unlockable=unlockable)


def _build_pdb(path, shape, partition, overwrite, layout, progress, two_bit, threads, on_step, one_bit, zero_aware):
    from ..errors import DatabaseError
    from ..storage import open_database
    from .writing import add_one_bit, lacks_one_bit, write_pdb

    status = "built"
    if path.exists():
        try:
            db = open_database(path, verify=True, mmap=True)
        except DatabaseError as exc:  # damaged: never trusted, always rebuilt
            log.warning("%s; rebuilding", exc)
            db = None
        if db is not None and zero_aware and any(t.zero is None for t in db.tables):
            db = None  # asked for zero-aware entries it lacks: built again with them
        if db is not None and not overwrite:
            if db.partition != partition.groups:
                raise BoardError(f"{path} holds another partition of that name; pass --overwrite to replace it")
            lacking = one_bit and any(lacks_one_bit(t) for t in db.tables)
            if lacking:
                add_one_bit(path, threads or 1)
            return BuildReport(
                str(path),
                "pdb",
                shape.key,
                partition.name,
                "updated" if lacking else "skipped",
                entries=sum(int(t.data.size) for t in db.tables),
                mean_h=float(db.metadata.get("mean-h", 0.0)),
            )
        status = "rebuilt"
    n = len(shape.free_cells)

    def built():
        for i, tiles in enumerate(partition.groups):
            log.info(
                "%s: pattern %d/%d (%d tiles, %d entries)",
                shape.key,
                i + 1,
                len(partition.groups),
                len(tiles),
                num_placements(n, len(tiles)),
            )
            cb = (lambda d, v, m, s, i=i: progress(i, d, v, m, s)) if progress else None
            yield compute_pdb(shape, tiles, progress=cb, threads=threads, zero_aware=zero_aware)

    _, stats, seconds = write_pdb(
        path,
        shape,
        partition.name,
        built(),
        layout=layout,
        metadata={"partition-spec": partition.spec()},
        two_bit=two_bit,
        threads=threads,
        on_step=on_step,
        one_bit=one_bit,
        need=int(sum(num_placements(n, len(g)) for g in partition.groups) * (1.25 if two_bit else 1)),
    )
    return BuildReport(
        str(path),
        "pdb",
        shape.key,
        partition.name,
        status,
        seconds,
        sum(s.entries for s in stats),
        float(sum(s.mean for s in stats)),
        int(sum(s.max for s in stats)),
        partition.bfs_memory(n),
    )


def build_goal_table(
    shape: Shape,
    depth: int | None,
    db_dir=None,
    overwrite: bool = False,
    layout: str = "contiguous",
    progress=None,
    memory_limit: int | None = None,
) -> BuildReport:
    """Goal-side BFS table to ``depth``; with ``depth=None``, as deep as complete
    layers fit ``memory_limit`` while building.  A valid existing table is kept
    (for ``depth=None``: the deepest one of the shape) unless ``overwrite``."""
    from ..storage import default_db_dir

    folder = default_db_dir(db_dir)
    if depth is None and memory_limit is None:
        raise BoardError("a goal table needs a depth or a memory limit")
    with building(folder / f"{shape.key}.goal.h5"):  # (one builder of a shape's goal tables at a time)
        return _build_goal_table(folder, shape, depth, overwrite, layout, progress, memory_limit)


def _build_goal_table(folder, shape, depth, overwrite, layout, progress, memory_limit) -> BuildReport:
    from ..errors import DatabaseError
    from ..goal_table import key_layout
    from ..storage import goal_filename, open_database
    from .goal_bfs import compute_goal_table, estimate_bytes
    from .writing import write_goal_table

    if depth is None:
        existing = sorted(folder.glob(f"{shape.key}.goal.d*.h5"), key=lambda p: int(p.name.split(".d")[-1][:-3]))
    else:
        existing = [folder / goal_filename(shape, depth)]
    status = "built"
    if existing and existing[-1].exists():
        try:
            db = open_database(existing[-1], verify=True)
            if not overwrite:
                return BuildReport(
                    str(existing[-1]), "goal-table", shape.key, f"d{db.depth}", "skipped", entries=int(db.dist.size)
                )
            status = "rebuilt"
        except DatabaseError as exc:  # damaged: rebuilt, never trusted
            log.warning("%s; rebuilding", exc)
            status = "rebuilt"
    max_states = None if depth is not None else max(1, memory_limit // estimate_bytes(1, key_layout(shape)[2]))
    t0 = time.perf_counter()
    keys, dist, layers = compute_goal_table(
        shape, depth if depth is not None else 254, max_states=max_states, progress=progress
    )
    seconds = time.perf_counter() - t0
    reached = len(layers) - 1
    path = folder / goal_filename(shape, reached)
    write_goal_table(path, shape, reached, keys, dist, seconds, layout=layout, metadata={"layers": layers})
    return BuildReport(
        str(path),
        "goal-table",
        shape.key,
        f"d{reached}",
        status,
        seconds,
        int(dist.size),
        float((dist.astype(np.float64)).mean()),
        int(dist.max()),
        int(keys.nbytes * 3),
    )


# -- choosing a partition (some candidates are built and measured) ------------------------

DEFAULT_NAMES = {(4, 4): "7-8", (5, 5): "6-6-6-6"}


def default_partition(shape: Shape, memory_limit: int, build=None) -> Partition:
    """The named default where one exists and fits, else :func:`auto_partition`
    (``build`` as there)."""
    name = DEFAULT_NAMES.get((shape.width, shape.height))
    if name and not shape.walls:
        part = named_partition(shape, name)
        n = len(shape.free_cells)
        if part.bfs_memory(n) <= memory_limit:
            return part
    return auto_partition(shape, memory_limit, build=build)


def auto_partition(shape: Shape, memory_limit: int, measure_limit: int = 3_000_000, build=None) -> Partition:
    """Compact candidates under the memory budget (one grown from each of
    :data:`GROW_ORDERS`); when every candidate's tables hold at most ``measure_limit``
    entries in all, build them and keep the highest sum of table means (the mean
    heuristic value over uniformly random states), else the most compact one
    (:func:`~pdb_builder.patterns.internal_edges`; the first of equals)."""
    sizes = default_sizes(shape, memory_limit)
    found = compact_candidates(shape, sizes, "-".join(map(str, sizes)))
    n = len(shape.free_cells)
    cost = sum(num_placements(n, k) for k in sizes) * len(found)
    if len(found) == 1 or cost > measure_limit:
        return most_compact(found)[0][2]
    cands = [c for _, _, c in found]
    build = compute_pdb if build is None else build
    best, best_mean = cands[0], -1.0
    for cand in cands:
        mean = 0.0
        for g in cand.groups:
            mean += build(shape, g)[1].mean
        if mean > best_mean:
            best, best_mean = cand, mean
    return best


def layout_partitions(shape: Shape, memory_limit: int, count: int = 1, fill: bool = False) -> list[Partition]:
    """:func:`default_partition` and, for ``count`` > 1, the next most compact
    distinct candidates of the same sizes, named ``SIZES.ORDER``: disjoint ways to
    cut the same tiles, whose sums the solver maxes (each file is a heuristic).  A
    candidate that is one already chosen reflected through the diagonal is left out
    where the shape has that reflection: the solver reads every table of such a shape
    reflected too, so it would add nothing.  ``fill``: and, where the even cut holds
    no pattern of the largest size the memory allows, one cut that does
    (:func:`~pdb_builder.patterns.filled_sizes`: 6-6-6-6-1 beside 5-5-5-5-5)."""
    first = default_partition(shape, memory_limit)
    out, seen = [first], _cut_and_reflection(shape, first.groups)
    for _, order, cand in most_compact(compact_candidates(shape, first.sizes, first.name)):
        if len(out) >= count:
            break
        if cut(cand.groups) not in seen:
            out.append(Partition(f"{first.name}.{order}", cand.groups))
            seen |= _cut_and_reflection(shape, cand.groups)
    sizes = filled_sizes(shape, memory_limit) if fill else None
    if sizes is not None:
        out.append(named_partition(shape, "-".join(map(str, sizes))))
    return out


def _cut_and_reflection(shape: Shape, groups) -> set[frozenset]:
    """The partition ``groups`` as a set of tile sets, and its diagonal reflection where
    the shape has one (:func:`~pdb_builder.patterns.mirror_cut`)."""
    return {c for c in (cut(groups), mirror_cut(shape, groups)) if c is not None}

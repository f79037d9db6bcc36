"""Patterns and partitions: which tiles share a database table.

A partition is a tuple of disjoint patterns (tuples of tile ids of the shape the
database is built for).  Tiles left out of every pattern add nothing, which is
still admissible.  Sources:

* named: ``7-8`` and ``6-6-3`` on 4x4 and ``6-6-6-6`` on 5x5 are the
  partitions of Korf & Felner (2002) (for the DevQuiz goal, turned by 180
  degrees so the blank corner matches); any other name of sizes, e.g.
  ``5-5-5-5-5-5-5`` on 6x6, is grown as compact blocks (the most compact of
  :func:`compact_candidates`);
* given: ``"1,2,3,4,5,6,7/8,9,10,11,12,13,14,15"`` (numbers or DevQuiz labels);
* automatic: :func:`pdb_builder.make.building.auto_partition` picks the largest pattern size that fits a
  memory budget, grows compact candidates, and keeps the one with the highest
  mean heuristic value when the candidates are cheap enough to build.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .board import LABELS, Shape, label
from .cores import machine_memory
from .entries import num_placements
from .errors import BoardError
from .words import human_bytes

MAX_PATTERN_TILES = 16  # the solver's lookups hold at most this many tiles
MAX_FREE_NONPATTERN = 32  # the BFS keeps 2 bits per non-pattern cell in 64 bits


def cut(groups) -> frozenset:
    """A partition's patterns as a set of tile sets (in no order)."""
    return frozenset(frozenset(g) for g in groups)


def mirror_cut(shape: Shape, groups) -> frozenset | None:
    """The partition ``groups`` reflected through ``shape``'s diagonal, as :func:`cut`
    gives it (each tile read as the tile whose home is its home's reflection); None
    where the shape has no such reflection."""
    tmap = shape.transpose_map
    if tmap is None:
        return None
    return cut([shape.goal[tmap[shape.home[t]]] for t in g] for g in groups)


@dataclass(frozen=True)
class Partition:
    name: str
    groups: tuple[tuple[int, ...], ...]

    def spec(self) -> str:
        return "/".join(",".join(label(t) for t in g) for g in self.groups)

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(len(g) for g in self.groups)

    def bfs_memory(self, n: int) -> int:
        """Bytes its largest pattern's BFS needs on n free cells (:func:`bfs_memory`)."""
        return max(bfs_memory(n, k) for k in self.sizes)


# Korf & Felner (2002) partitions as goal cells with the blank on cell 0.
_KORF_CELLS = {
    (4, 4, "7-8"): ((1, 2, 3, 4, 5, 6, 7), (8, 9, 10, 11, 12, 13, 14, 15)),
    (4, 4, "6-6-3"): ((1, 2, 3, 5, 6, 7), (4, 8, 9, 12, 13, 14), (10, 11, 15)),
    (5, 5, "6-6-6-6"): ((1, 2, 5, 6, 7, 12), (3, 4, 8, 9, 13, 14), (10, 11, 15, 16, 20, 21), (17, 18, 19, 22, 23, 24)),
}


# entries a build makes a thread-second: what the run's plans and rounds count a build at, and
# what `inspect --suggest` estimates a build's time from.  The BFS of exact-layout patterns runs
# faster (2.7 to 6.0 M on one thread), but planning at 2.5 M proved no more boards of hard.txt
# (docs/design.md)
BUILD_RATE = 1.5e6


def bfs_memory(n: int, k: int) -> int:
    """Bytes the BFS needs for a k-tile pattern on n free cells (table + work words)."""
    return num_placements(n, k) * (1 + np.dtype(word_dtype(n, k)).itemsize)


def validate_partition(shape: Shape, part: Partition) -> None:
    seen: set[int] = set()
    n = len(shape.free_cells)
    for g in part.groups:
        if not g:
            raise BoardError("partition: an empty pattern")
        for t in g:
            if t not in shape.home:
                raise BoardError(f"partition: {label(t)} is not a tile of {shape.describe()}")
            if t in seen:
                raise BoardError(f"partition: tile {label(t)} is in two patterns")
            seen.add(t)
        if len(g) > MAX_PATTERN_TILES:
            raise BoardError(f"partition: a pattern of {len(g)} tiles; at most {MAX_PATTERN_TILES}")
        if n - len(g) > MAX_FREE_NONPATTERN:
            raise BoardError(
                f"partition: a pattern of {len(g)} tiles leaves {n - len(g)} other cells on "
                f"{shape.size_text}; the builder handles at most {MAX_FREE_NONPATTERN}"
            )


def parse_partition(text: str, shape: Shape, name: str | None = None) -> Partition:
    groups = []
    for part in text.split("/"):
        g = []
        for tok in part.split(","):
            tok = tok.strip().upper()
            if tok.isdecimal():
                g.append(int(tok))
            elif len(tok) == 1 and tok in LABELS:
                g.append(LABELS.index(tok) + 1)
            else:
                raise BoardError(f"partition: bad tile {tok!r} (numbers or labels 1-9, A-Z)")
        groups.append(tuple(g))
    p = Partition(name or "-".join(str(len(g)) for g in groups), tuple(groups))
    validate_partition(shape, p)
    return p


def grow_blocks(shape: Shape, sizes, order: str = "row") -> tuple[tuple[int, ...], ...]:
    """Cells grown into compact groups of the given sizes.  Each group starts at
    the first free cell in ``order`` (``row`` or ``col`` major, or ``far``: farthest
    from the goal blank first) and adds the neighbouring cell that keeps the longer
    side of its bounding box shortest, then its area smallest: so six cells grow
    into a 2x3 block, not a row.  (Area alone grows rows: 1x3 beats 2x2.  On the
    DevQuiz 6x4, 2x3 blocks need 9.5x fewer nodes than whole rows: docs/design.md.)"""
    w = shape.width
    cells = [c for c in shape.free_cells if c != shape.goal_blank]
    dist = shape.cell_distances(shape.goal_blank)
    keys = {
        "row": lambda c: c,
        "col": lambda c: (c % w, c // w),
        "row-up": lambda c: (-(c // w), c % w),  # from the last row: the goal blank's corner grows first
        "col-left": lambda c: (-(c % w), c // w),  # from the last column
        "far": lambda c: (-dist[c], c),
    }
    key = keys.get(order, keys["far"])
    left = set(cells)
    groups = []
    for size in sizes:
        start = min(left, key=key)
        group = [start]
        left.discard(start)
        while len(group) < size and left:
            cand = {d for c in group for d in shape.neighbours[c] if d in left}
            if not cand:
                nxt = min(left, key=key)
            else:

                def box(c):
                    rows = [x // w for x in group] + [c // w]
                    cols = [x % w for x in group] + [c % w]
                    h, wd = max(rows) - min(rows) + 1, max(cols) - min(cols) + 1
                    return (max(h, wd), h * wd, key(c))

                nxt = min(cand, key=box)
            group.append(nxt)
            left.discard(nxt)
        groups.append(tuple(sorted(group)))
    return tuple(groups)


GROW_ORDERS = ("row", "col", "far", "row-up", "col-left")


def internal_edges(shape: Shape, cell_groups) -> int:
    """Neighbouring cell pairs inside a group, over all groups: the partition's
    compactness (a 2x3 block has 7, a row of 6 has 5)."""
    return sum(1 for g in cell_groups for c in g for d in shape.neighbours[c] if d > c and d in g)


def compact_candidates(shape: Shape, sizes, name: str) -> list[tuple[int, str, Partition]]:
    """(:func:`internal_edges`, grow order, partition) of the distinct partitions
    grown from each of :data:`GROW_ORDERS`, in that order."""
    out: list[tuple[int, str, Partition]] = []
    for order in GROW_ORDERS:
        cells = grow_blocks(shape, sizes, order)
        groups = _cells_to_tiles(shape, cells)
        if groups not in [c.groups for _, _, c in out]:
            out.append((internal_edges(shape, [set(g) for g in cells]), order, Partition(name, groups)))
    return out


def most_compact(cands: list[tuple[int, str, Partition]]) -> list[tuple[int, str, Partition]]:
    """``cands`` most compact first (the first of equals first)."""
    return sorted(cands, key=lambda c: -c[0])


def _cells_to_tiles(shape: Shape, cell_groups) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(sorted(shape.goal[c] for c in g)) for g in cell_groups)


def named_partition(shape: Shape, name: str) -> Partition:
    """The partition called ``name``: pattern sizes (``7-8``, ``5-5-5-4-4``), Korf &
    Felner's cells where they named them, else the most compact grown candidate;
    ``SIZES.ORDER`` (``5-5-5-4-4.col``) is the candidate grown from that one of
    :data:`GROW_ORDERS`."""
    text, _, order = name.partition(".")
    if order and order not in GROW_ORDERS:
        raise BoardError(f"partition name {name!r}: {order!r} is not one of {', '.join(GROW_ORDERS)}")
    sizes = text.split("-")
    if not all(s.isdecimal() and int(s) > 0 for s in sizes):
        raise BoardError(f"partition name {name!r}: expected sizes such as 7-8 or 6-6-3 (or 6-6-3.col)")
    sizes = [int(s) for s in sizes]
    ntiles = len(shape.tiles)
    if sum(sizes) > ntiles:
        raise BoardError(f"partition {name}: {sum(sizes)} tiles, but {shape.describe()} has {ntiles}")
    if order:
        part = Partition(name, _cells_to_tiles(shape, grow_blocks(shape, sizes, order)))
        validate_partition(shape, part)
        return part
    fixed = _KORF_CELLS.get((shape.width, shape.height, name))
    if fixed is not None and not shape.walls:
        if shape.goal_kind == "korf":
            return Partition(name, _cells_to_tiles(shape, fixed))
        if shape.goal_kind == "devquiz":
            n = shape.n
            return Partition(name, _cells_to_tiles(shape, [[n - 1 - c for c in g] for g in fixed]))
    part = most_compact(compact_candidates(shape, sizes, name))[0][2]
    validate_partition(shape, part)
    return part


def too_large(shape: Shape) -> str | None:
    """Why no database can serve ``shape`` (more free cells than a pattern's BFS can
    hold beside the largest pattern), or None where one can."""
    n = len(shape.free_cells)
    if n - min(len(shape.tiles), MAX_PATTERN_TILES) <= MAX_FREE_NONPATTERN:
        return None
    return (
        f"{shape.size_text} has {n} free cells; databases serve at most "
        f"{MAX_FREE_NONPATTERN + MAX_PATTERN_TILES} (the BFS keeps 2 bits per non-pattern cell "
        f"in 64 bits, and a pattern holds at most {MAX_PATTERN_TILES} tiles): solve its boards "
        f"without databases"
    )


def largest_pattern(shape: Shape, memory_limit: int) -> int:
    """The most tiles one pattern of ``shape`` can hold whose BFS fits ``memory_limit`` (1 at least)."""
    n = len(shape.free_cells)
    k = 1
    for cand in range(1, min(len(shape.tiles), MAX_PATTERN_TILES) + 1):
        if n - cand <= MAX_FREE_NONPATTERN and bfs_memory(n, cand) <= memory_limit:
            k = cand
    return k


def greedy_sizes(shape: Shape, memory_limit: int) -> list[int]:
    """As many patterns of the largest size that fits the memory budget as the tiles
    allow, the rest one smaller pattern (25 tiles where 6 fit: 6-6-6-6-1)."""
    k, m = largest_pattern(shape, memory_limit), len(shape.tiles)
    return [k] * (m // k) + ([m % k] if m % k else [])


def filled_sizes(shape: Shape, memory_limit: int) -> list[int] | None:
    """:func:`greedy_sizes` where the even cut (:func:`default_sizes`) has no pattern
    as large (25 tiles in 5 even patterns: 5-5-5-5-5); None where it has, or where the
    rest would be too small a pattern for the BFS.  On the 25-tile layouts of
    ``hard.txt`` such a cut gave 0.06 of the even cut's nodes
    (docs/lab/devquiz-hardest.md)."""
    sizes = greedy_sizes(shape, memory_limit)
    if max(default_sizes(shape, memory_limit)) >= sizes[0]:
        return None
    if min(sizes) < len(shape.free_cells) - MAX_FREE_NONPATTERN:
        return None
    return sizes


def default_sizes(shape: Shape, memory_limit: int) -> list[int]:
    """Even pattern sizes, as large as the memory budget allows for one BFS."""
    n = len(shape.free_cells)
    m = len(shape.tiles)
    k = largest_pattern(shape, memory_limit)
    fault = too_large(shape)
    if fault:
        raise BoardError(fault)
    groups = math.ceil(m / k)
    base, extra = divmod(m, groups)
    least = n - MAX_FREE_NONPATTERN  # the fewest tiles a pattern's BFS can hold
    if base < least:  # an even cut leaves patterns too small: fewer, larger ones need more memory
        larger = -(-m // (m // least))
        need, have = bfs_memory(n, larger), machine_memory()
        if have and need > have:
            raise BoardError(
                f"{shape.size_text} with {n} free cells: no database of it can be built (its patterns need "
                f"{larger} tiles each, {human_bytes(need)} for one BFS, this machine has {human_bytes(have)}): "
                f"solve its boards without databases (--no-db), or use a smaller board"
            )
        raise BoardError(
            f"{shape.size_text} with {n} free cells needs patterns of {larger} tiles: "
            f"raise --memory-limit to {human_bytes(bfs_memory(n, larger))} or more"
        )
    return [base + 1] * extra + [base] * (groups - extra)


def word_dtype(n: int, k: int):
    """Smallest unsigned dtype with 2 bits for each of the n - k non-pattern cells."""
    bits = 2 * (n - k)
    for dt in (np.uint8, np.uint16, np.uint32, np.uint64):
        if bits <= 8 * np.dtype(dt).itemsize:
            return dt
    raise ValueError(f"{n - k} non-pattern cells need {bits} bits; at most 32 cells are supported")

"""Admissible heuristics as flat arrays for the IDA* kernel.

The kernel's estimate is ``max(md + lc, max over groups of sum of lookups)``:

* ``md``: wall-aware Manhattan distance: each tile's shortest path along free
  cells to its home (a wall is never crossed, so this is admissible).
* ``lc``: linear conflicts (Hansson, Mayer & Yung 1992).  Two tiles in their goal
  row, in reversed order, cannot both stay in the row: one spends at least two
  extra vertical moves.  With walls this holds only for a tile whose straight row
  segment to home is free of walls (its wall-aware distance is then exactly the
  Manhattan distance, and leaving the row costs two more), so only such tiles take
  part.  Per line the extra is 2 x (tiles in the line - longest run in goal order).
* groups: additive pattern databases (Korf & Felner 2002).  A group is one
  partition read one way; its lookups are disjoint, so their values add.  The
  reflection through the main diagonal of a square board gives a second group on
  the same tables.  A wall-free database on a walled board reads each wall as the
  tile whose home it is, sitting there for good.

The heuristic is 0 only at the goal (``md`` is), so the kernel tests the goal by h == 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from pdb_builder.board import BLANK, WALL, Shape
from pdb_builder.lookup import Lookup
from pdb_builder.regions import LABEL_CELLS, grid_masks, region_labels, zero_value

from .state import private

MAX_LOOKUP_TILES = 16  # most tiles a pattern may hold in one lookup


@dataclass
class Heuristic:
    shape: Shape
    md: np.ndarray  # (max_tile + 1, n) int32
    rowkey: np.ndarray  # (max_tile + 1, n) int32, -1 where the tile takes no part
    colkey: np.ndarray
    use_lc: bool = True
    lookups: list[Lookup] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # description of each group
    goal_table: object = None  # a loaded goal-table Database of this exact shape, or None
    goal_name: str | None = None  # its description (not a group)
    checksums: dict = field(default_factory=dict)  # file name -> its tables' sha256 (first 16 hex digits)
    left_out: dict = field(default_factory=dict)  # file name -> why it was left out (unreadable, damaged)
    files: list = field(default_factory=list)  # (path, (device, inode)) of each file read: locked while searched

    @property
    def ngroups(self) -> int:
        return len(self.names)


class TableReads:
    """The checks a search owes the memory-mapped tables it reads (files opened
    lazily, :mod:`pdb_builder.integrity`), paid before it reports anything.

    With a two-bit copy in use, or a one-bit copy with its side table, the search
    reads the one-byte table (and its zero-aware codes) only at the root:
    :meth:`at_root` checks the blocks of the entries read there, and those arrays are
    never hashed whole (a hash would bring the whole file into the page cache, whose
    large pages a root's read then maps).  The arrays it reads anywhere (the copies,
    tables without one, zero-aware codes, goal tables) are hashed whole in background
    threads from :meth:`begin`; :meth:`everything` adds the one-byte tables (a beam
    reads them at every node).  :meth:`wait` waits for the hashes and raises
    DatabaseError naming the file on any mismatch.  ``at_root_only[i]``: whether
    lookup i's one-byte table is read only at roots; ``one_bit[i]``: the one-bit copy
    it reads, or None."""

    def __init__(self, h: Heuristic, at_root_only, one_bit=()):
        self.root = []  # (lookup index, guard of its one-byte table or zero-aware codes)
        anywhere = []
        for i, (lk, only) in enumerate(zip(h.lookups, at_root_only)):
            copy = one_bit[i] if i < len(one_bit) else None
            zero = lk.zero.guard if lk.zero is not None else None
            if only and copy is not None:  # a one-bit copy and its side table: the table and its codes at roots
                self.root += [(i, g) for g in (lk.guard, zero) if g is not None]
            elif only:  # a two-bit copy: the table at roots
                self.root += [(i, g) for g in (lk.guard,) if g is not None]
                anywhere += [lk.packed_guard, zero]
            else:
                anywhere += [lk.guard, zero]
            if copy is not None:
                anywhere += list(copy.guards)
        if h.goal_table is not None:
            anywhere += list(h.goal_table.guards.values())
        self.anywhere = [g for g in anywhere if g is not None]
        self.started: dict[int, object] = {}  # the hashes begun, by id

    def begin(self) -> None:
        self._start(self.anywhere)

    def at_root(self, ranks) -> None:
        for i, g in self.root:
            g.check((int(ranks[i]),))

    def everything(self) -> None:
        self._start(self.anywhere + [g for _, g in self.root])

    def _start(self, guards) -> None:
        for g in guards:
            if id(g) not in self.started:
                self.started[id(g)] = g
                g.start()

    def wait(self) -> None:
        for g in list(self.started.values()):
            g.wait()


def manhattan_tables(shape: Shape) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Wall-aware distance of every tile from every cell, and linear-conflict keys."""
    n, w = shape.n, shape.width
    size = shape.max_tile + 1
    md = np.zeros((size, n), dtype=np.int32)
    rowkey = np.full((size, n), -1, dtype=np.int32)
    colkey = np.full((size, n), -1, dtype=np.int32)
    for t, home in shape.home.items():
        dist = shape.distances[home]
        hr, hc = divmod(home, w)
        for c in range(n):
            # unreachable cells: the tile can never be there on a solvable board
            md[t, c] = dist[c] if dist[c] >= 0 else 0
            if dist[c] < 0:
                continue
            r, col = divmod(c, w)
            plain = abs(r - hr) + abs(col - hc)
            if dist[c] != plain:
                continue
            if r == hr:
                rowkey[t, c] = hc
            if col == hc:
                colkey[t, c] = hr
    return md, rowkey, colkey


def manhattan_heuristic(shape: Shape, use_lc: bool = True) -> Heuristic:
    md, rowkey, colkey = manhattan_tables(shape)
    return Heuristic(shape, md, rowkey, colkey, use_lc=use_lc)


def kernel_arrays(h: Heuristic):
    """The lookups as the kernel's flat arrays (tuple of tables and index arrays).

    Lookup ``i`` reads ``lk_k[i]`` tiles; slot ``j`` holds board tile ``lk_slots[i, j]``
    or, for a wall standing for a tile, the fixed table cell ``lk_fixed[i, j]``;
    ``lk_cellmap[i]`` maps board cells to table cells.  Tile ``t``'s lookup in group
    ``g`` is ``tile_lk[t, g]`` (-1: none), where it fills slot ``tile_slot[t, g]``."""
    shape = h.shape
    nl = len(h.lookups)
    if nl == 0:
        tables = (np.zeros(1, dtype=np.uint8),)
    else:
        # contiguous bytes: the IDA* kernel reads them by address
        tables = tuple(np.ascontiguousarray(lk.table, dtype=np.uint8) for lk in h.lookups)
    lk_k = np.zeros(max(nl, 1), dtype=np.int64)
    lk_slots = np.zeros((max(nl, 1), MAX_LOOKUP_TILES), dtype=np.int64)
    lk_fixed = np.full((max(nl, 1), MAX_LOOKUP_TILES), -1, dtype=np.int64)
    lk_cellmap = np.zeros((max(nl, 1), shape.n), dtype=np.int64)
    lk_w = np.zeros((max(nl, 1), MAX_LOOKUP_TILES), dtype=np.int64)
    lk_group = np.zeros(max(nl, 1), dtype=np.int64)
    tile_lk = np.full((shape.max_tile + 1, max(h.ngroups, 1)), -1, dtype=np.int64)
    tile_slot = np.zeros((shape.max_tile + 1, max(h.ngroups, 1)), dtype=np.int64)
    from pdb_builder.entries import weights

    for i, lk in enumerate(h.lookups):
        k = len(lk.tiles)
        lk_k[i] = k
        lk_cellmap[i, :] = lk.cellmap
        lk_w[i, :k] = weights(lk.ncells, k)
        lk_group[i] = lk.group
        for j, t in enumerate(lk.tiles):
            if t in shape.home:
                lk_slots[i, j] = t
                tile_lk[t, lk.group] = i
                tile_slot[t, lk.group] = j
            else:  # a wall standing for this tile: fixed table cell
                lk_slots[i, j] = 0
                lk_fixed[i, j] = lk.cellmap[-t - 1] if t < 0 else -1
    return tables, lk_k, lk_slots, lk_fixed, lk_cellmap, lk_w, lk_group, tile_lk, tile_slot


def dual_arrays(h: Heuristic, tables, lk_fixed, on: bool = True) -> tuple:
    """The lookups the kernel also reads on the board's dual
    (:func:`~solver.search.estimate.dual_estimate`), as its arrays; none unless ``on``.

    On the dual board the tile homed on cell x stands on the home of the tile that
    stands on x now (Felner, Zahavi, Schaeffer & Holte 2005).  A path of the board is,
    read there, a path of the same length in which the tile homed on the blank's cell
    plays the blank and ends on its own home, not on the blank's; each move moves that
    tile and one other.  So a pattern without that tile counts its own tiles' moves on
    the dual board, and its table (whose goal has the blank in its home's region) bounds
    them where that region holds the blank's cell too (``joined``); a pattern with it,
    or without the joint, counts its other tiles' distances.  Read whole, the dual
    overestimates (``scripts/bench_dual.py``).  Only a lookup of the board's own shape,
    read directly (no wall standing for a tile, no reflection), is read there."""
    shape = h.shape
    free = shape.free_cells
    direct = {c: j for j, c in enumerate(free)}
    rows = []
    if on:
        for i, lk in enumerate(h.lookups):
            if lk.ncells == len(free) and all(int(lk.cellmap[c]) == j for c, j in direct.items()):
                if all(t in shape.home for t in lk.tiles) and (lk_fixed[i] < 0).all():
                    rows.append(i)
    m = max(len(rows), 1)
    dl_lk, dl_k, dl_group, dl_full = (np.zeros(m, dtype=np.int64) for _ in range(4))
    dl_label = np.zeros((m, MAX_LOOKUP_TILES), dtype=np.int64)
    dl_home = np.zeros((m, MAX_LOOKUP_TILES), dtype=np.int64)
    joined = np.zeros((m, shape.n), dtype=np.uint8)
    for j, i in enumerate(rows):
        lk = h.lookups[i]
        dl_lk[j], dl_k[j], dl_group[j], dl_full[j] = i, len(lk.tiles), lk.group, tables[i].ctypes.data
        covered = {shape.home[t] for t in lk.tiles}
        for s, t in enumerate(lk.tiles):
            dl_label[j, s], dl_home[j, s] = t, shape.home[t]
        region, todo = {shape.goal_blank}, [shape.goal_blank]
        while todo:
            for d in shape.neighbours[todo.pop()]:
                if d not in covered and d not in region:
                    region.add(d)
                    todo.append(d)
        for c in region:
            joined[j, c] = 1
    home_cell = np.zeros(shape.max_tile + 1, dtype=np.int64)
    for t, c in shape.home.items():
        home_cell[t] = c
    home_cell[BLANK] = shape.goal_blank
    goal_label = np.array([t if t >= 0 else -1 for t in shape.goal], dtype=np.int64)
    return (
        len(rows),
        dl_lk,
        dl_k,
        dl_group,
        dl_full,
        dl_label,
        dl_home,
        home_cell,
        goal_label,
        joined,
        shape.goal_blank,
    )


class ZeroArrays:
    """The lookups' zero-aware entries (:mod:`pdb_builder.regions`) as the kernel reads
    them (``kernel``: per lookup the address of its codes, its step, 0 where it has
    none, its table shape's free grid cells, width and row masks, and the address of
    its shape's region labels, 0 where the kernel floods instead: a shape of more than
    :data:`~pdb_builder.regions.LABEL_CELLS` cells, or ``labels=False``), and the
    root's values in plain Python (:meth:`at_root`).  ``one_bit``: the plain tables'
    addresses (``full``) where the lookups read their one-bit copies
    (:mod:`pdb_builder.one_bit`); the kernel's last six arrays are then each such
    lookup's copy of the codes, its plain table, its copy's side table (the addresses
    of its index and entries, and its shift; 0 where it has none) and the address of
    its copy's pairs (0 where its bits are apart), and 0 for the others."""

    def __init__(self, lookups, labels: bool = True, one_bit=None):
        nl = max(len(lookups), 1)
        self._alive = []  # the arrays the kernel reads by address
        addr = np.zeros(nl, dtype=np.int64)
        step = np.zeros(nl, dtype=np.int64)
        free = np.zeros(nl, dtype=np.uint64)
        width = np.ones(nl, dtype=np.int64)
        not_col0 = np.zeros(nl, dtype=np.uint64)
        not_last = np.zeros(nl, dtype=np.uint64)
        label = np.zeros(nl, dtype=np.int64)
        copy = np.zeros(nl, dtype=np.int64)
        full = np.zeros(nl, dtype=np.int64)
        side = np.zeros((4, nl), dtype=np.int64)  # the side tables' index, entries, shift; the pairs
        for i, lk in enumerate(lookups):
            if lk.zero is None:
                continue
            if one_bit is not None and one_bit[i]:
                ob = lk.zero.one_bit
                copy[i] = ob.codes.ctypes.data
                full[i] = one_bit[i]
                if ob.side is not None:
                    side[:3, i] = ob.index.ctypes.data, ob.side.ctypes.data, ob.shift
                if ob.pairs is not None:
                    side[3, i] = ob.pairs.ctypes.data
            codes = np.ascontiguousarray(lk.zero.codes)
            self._alive.append(codes)
            addr[i] = codes.ctypes.data
            step[i] = lk.zero.step
            cells, width[i], n = lk.grid
            free[i], not_col0[i], not_last[i] = grid_masks(int(width[i]), n, cells)
            if labels and len(cells) <= LABEL_CELLS:
                words = region_labels(tuple(int(c) for c in cells), int(width[i]), n)
                self._alive.append(words)
                label[i] = words.ctypes.data
        self.kernel = (addr, step, free, width, not_col0, not_last, label, copy, full, *side)

    def at_root(self, lookups, blank: int, lk_rank, lk_used, lk_val, group_sum, root_only=()) -> None:
        """Each zero-aware lookup's value at a root with the blank on board cell
        ``blank`` (the kernel keeps them up to date from there); the codes of lookups
        ``root_only`` read from their files (:func:`root_entry`)."""
        for i in np.flatnonzero(self.kernel[1]):
            lk = lookups[i]
            cells, width, n = lk.grid
            used = int(lk_used[i])
            free = sum(1 << c for j, c in enumerate(cells) if not (used >> j) & 1)
            r = int(lk_rank[i])
            code = root_entry(lk.zero.codes, lk.zero.guard, r) if i in root_only else None
            v = zero_value(lk.zero, r, int(lk_val[i]), free, cells[int(lk.cellmap[blank])], width, n, code)
            group_sum[lk.group] += v - lk_val[i]
            lk_val[i] = v


def root_entry(arr, guard, r: int) -> int:
    """Entry ``r`` of ``arr`` (a table or its zero-aware codes) as a root reads it: from
    its file where its Guard has one (:meth:`~pdb_builder.integrity.Guard.entry`, its
    block checked; not through the mapping, so a table read only at roots is not held
    a page a root), else from the array."""
    return guard.entry(r) if guard is not None else int(arr[r])


def board_arrays(shape: Shape, cells) -> tuple[np.ndarray, np.ndarray]:
    """(cells, pos) as the kernel wants them: tile id per cell (-1 walls), cell per tile;
    :func:`~solver.search.state.private` arrays, since the kernel moves tiles in them."""
    c = private(len(cells))
    c[:] = cells
    pos = private(shape.max_tile + 1)
    pos[:] = -1
    for cell, t in enumerate(cells):
        if t != WALL:
            pos[t] = cell
    assert pos[BLANK] >= 0
    return c, pos


class Goal(NamedTuple):
    """The kernel's ``goal`` argument (the kernel unpacks it in this order)."""

    keys: np.ndarray  # the goal table's sorted arrangement keys
    dist: np.ndarray  # each key's distance from the goal
    depth: int  # the table's depth; -1: no goal table
    bits: int  # bits per cell code in a key
    per: int  # cell codes per key word
    codes: np.ndarray  # each tile's code
    cells: np.ndarray  # the free cells a key covers, in order
    key: np.ndarray  # scratch for one key (each thread needs its own copy)


def goal_arrays(h: Heuristic) -> Goal:
    """The goal table as the kernel's arguments (depth -1 and dummies when there is none)."""
    from pdb_builder.goal_table import key_layout, tile_codes

    shape = h.shape
    gt = h.goal_table
    bits, per, nwords = key_layout(shape)
    if gt is None:
        keys = np.zeros((1, nwords), dtype=np.uint64)
        dist = np.zeros(1, dtype=np.uint8)
        depth = -1
    else:
        keys, dist, depth = gt.keys, gt.dist, int(gt.depth)
    codes = tile_codes(shape)
    codes = np.where(codes < 0, 0, codes).astype(np.int64)
    cells_of = np.array(shape.free_cells, dtype=np.int64)
    return Goal(keys, dist, depth, bits, per, codes, cells_of, private(nwords, np.uint64))

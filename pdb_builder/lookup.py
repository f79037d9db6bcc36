"""How a database's tables read a board of some shape (shared by solver and inspect).

* A table built for the board's own shape reads it directly.
* A table built for the wall-free shape of the same size and goal reads a walled
  board with each wall as the tile whose home it is, fixed on that cell.
* For square shapes whose goal blank lies on the main diagonal, a second reading
  goes through the reflection (Korf & Felner 2002): tile u on cell c reads as tile
  T'(u) on cell T(c), T'(u) the tile whose home is T(home(u)).  Wall-free tables
  read every walled layout that way: the reflected board is a board of the
  reflected layout, its walls again tiles fixed at home, which the same wall-free
  table serves.  An exact-layout table needs walls symmetric under the diagonal
  (its cells are the layout's free cells).

``evaluate`` is the slow, obvious Python evaluator (coverage reports, verify,
tests); the solver's kernel does the same with the arrays of
``solver.search.heuristic.kernel_arrays``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .board import WALL, Shape
from .entries import rank_py
from .patterns import cut, mirror_cut


@dataclass
class Lookup:
    """One table read: board tile ids in the table's slot order (``-(c+1)`` for a
    wall on board cell c, fixed), the map from board cells to table cells, and
    the table (1-D uint8)."""

    table: np.ndarray
    tiles: tuple[int, ...]
    cellmap: np.ndarray  # board cell -> table cell (compact index), through the reflection if any
    ncells: int  # free cells of the table's shape
    group: int
    packed: np.ndarray | None = None  # the table's two-bit copy (packed.py), if its file has one
    guard: object = None  # table / packed not checked yet (pdb_builder.integrity.Guard), opened lazily
    packed_guard: object = None
    zero: object = None  # the table's zero-aware entries (pdb_builder.regions.ZeroTable), if its file has them
    grid: tuple = ()  # the table shape's (free grid cells, width, cells): where its regions lie


def serves(db_shape: Shape, shape: Shape) -> str | None:
    """``exact``, ``wall-free`` or None: whether tables of ``db_shape`` read boards of ``shape``."""
    if db_shape == shape:
        return "exact"
    if shape.walls and shape.goal_kind != "custom" and not db_shape.walls and db_shape == shape.wall_free():
        return "wall-free"
    return None


def lookups_for(shape: Shape, db_shape: Shape, tables, group: int, reflect: bool) -> list[Lookup]:
    """Lookups reading ``tables`` ((tiles, data), or (tiles, data, packed, guard,
    packed_guard, zero) as Lookup names them, built for ``db_shape``) on ``shape``;
    ``reflect``: through the diagonal reflection of ``db_shape`` (which must have one)."""
    dbcell = np.full(db_shape.n, -1, dtype=np.int64)
    for j, c in enumerate(db_shape.free_cells):
        dbcell[c] = j
    tmap = np.array(db_shape.transpose_map if reflect else range(shape.n), dtype=np.int64)
    cellmap = dbcell[tmap]
    out = []
    for tiles, data, *rest in tables:
        slots = []
        for s in tiles:
            src = int(tmap[db_shape.home[s]])  # the board cell whose owner reads as s
            slots.append(-(src + 1) if shape.goal[src] == WALL else shape.goal[src])
        grid = (db_shape.free_cells, db_shape.width, db_shape.n)
        out.append(Lookup(data, tuple(slots), cellmap, len(db_shape.free_cells), group, *rest, grid=grid))
    return out


def mirrors_itself(db_shape: Shape, groups) -> bool:
    """Whether the diagonal reflection of ``db_shape`` (False where it has none) maps every
    pattern of the partition ``groups`` onto a pattern of it.  Then reading the tables
    through the reflection sums to what reading them directly does, state by state (the
    reflected reading of pattern P is the direct reading of P's mirror image), and the
    second reading only costs lookups."""
    return mirror_cut(db_shape, groups) == cut(groups)


def group_lookups(shape: Shape, databases, reflect: bool = True) -> tuple[list[Lookup], list[str]]:
    """Lookups of every PDB in ``databases`` ((role, Database) pairs, role ``exact``
    or ``wall-free``) that serves ``shape`` in that role, one group per reading (the
    reflected reading too where the shape allows it and the partition is not its own
    mirror image: :func:`mirrors_itself`), and a name for each group."""
    lookups: list[Lookup] = []
    names: list[str] = []
    for role, db in databases:
        if db.kind != "pdb" or serves(db.shape, shape) != role:
            continue
        tables = [(t.tiles, t.data, t.packed, t.guard, t.packed_guard, t.zero) for t in db.tables]
        mirrored = reflect and db.shape.transpose_map is not None
        readings = (False, True) if mirrored and not mirrors_itself(db.shape, [t[0] for t in tables]) else (False,)
        name = f"{role} {db.attrs.get('partition-name')} ({db.path.name})"
        for reflected in readings:
            lookups += lookups_for(shape, db.shape, tables, len(names), reflect=reflected)
            names.append(name + (" reflected" if reflected else ""))
    return lookups, names


def evaluate(lookups: list[Lookup], cells, ngroups: int) -> list[int]:
    """Sum of each group's lookups for arrangement ``cells``."""
    pos = {t: c for c, t in enumerate(cells) if t > 0}
    sums = [0] * ngroups
    for lk in lookups:
        place = [int(lk.cellmap[-t - 1]) if t < 0 else int(lk.cellmap[pos[t]]) for t in lk.tiles]
        sums[lk.group] += int(lk.table[rank_py(place, lk.ncells)])
    return sums

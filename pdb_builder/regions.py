"""The blank's regions under a pattern, and zero-aware entries (shared by the builder and
the solver's kernel).

Under an additive pattern's cost model only the pattern's tiles cost a move, so the
blank roams free inside its *region*: the connected free cells of the table's shape
that no pattern tile covers.  A placement's regions are numbered by their lowest cell
(region 0 holds the lowest free cell).  A plain table keeps, for each placement, the
least cost over its regions; a *zero-aware* table (Clausecker & Reinefeld, SoCS 2019)
keeps the cost of each (placement, region) pair, which is never lower and is exact for
the blank's region.

Storage (:class:`ZeroTable`): the plain table stays as it is (the least over regions,
what every other reader wants), and beside it

* ``bits``: one bit per placement, set where some region of the first ``regions``
  costs more than the placement's least (a placement with one region never does);
* ``prefix``: per 64-bit word of ``bits``, how many bits are set in the words before it;
* ``values``: ``regions`` bytes per set bit, in rank order: the cost of regions
  0 .. ``regions`` - 1 (a region numbered past them reads the plain table's value).

A reader ranks the placement as usual, tests its bit (most placements: clear, the
plain value is the answer), and only then floods the blank's region with 64-bit shifts
to number it (:mod:`pdb_builder.region_kernels` compiled, here in plain Python).
Cells here are grid cells of the table's shape (``0 .. W*H-1``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

KEPT_REGIONS = 3  # regions a zero-aware build keeps per placement (``slidepdb build --zero-aware``)


class ZeroTable(NamedTuple):
    """A table's zero-aware entries (see the module docstring)."""

    bits: np.ndarray  # uint64, one bit per placement
    prefix: np.ndarray  # int64, set bits before each word of ``bits``
    values: np.ndarray  # uint8, ``regions`` per set bit
    regions: int  # regions kept per placement

    @property
    def count(self) -> int:
        """Placements whose regions differ."""
        return int(self.values.size // max(self.regions, 1))

    @property
    def nbytes(self) -> int:
        return int(self.bits.nbytes + self.prefix.nbytes + self.values.nbytes)


def grid_masks(width: int, n: int, free_cells) -> tuple[np.uint64, np.uint64, np.uint64]:
    """The free cells of a shape as a grid mask, and the masks that keep a shift by one
    cell left or right inside its row."""
    board = (1 << n) - 1
    col0 = sum(1 << c for c in range(0, n, width))
    last = sum(1 << c for c in range(width - 1, n, width))
    return np.uint64(sum(1 << c for c in free_cells)), np.uint64(board & ~col0), np.uint64(board & ~last)


def _flood_py(seed: int, free: int, width: int, not_col0: int, not_last: int) -> int:
    r = seed
    while True:
        nr = (r | ((r << 1) & not_col0) | ((r >> 1) & not_last) | (r << width) | (r >> width)) & free
        if nr == r:
            return r
        r = nr


def region_number_py(free: int, blank_cell: int, width: int, n: int) -> int:
    """:func:`~pdb_builder.region_kernels.region_number` of the blank's region in plain Python (a root's value)."""
    _, nc0, nl = (int(x) for x in grid_masks(width, n, ()))
    low = _flood_py(1 << blank_cell, free, width, nc0, nl)
    low &= -low
    rest = free & (low - 1)
    count = 0
    while rest:
        rest &= ~_flood_py(rest & -rest, free, width, nc0, nl)
        count += 1
    return count


def zero_value(zero: ZeroTable, r: int, plain: int, free: int, blank_cell: int, width: int, n: int) -> int:
    """A zero-aware entry in plain Python: rank ``r``, its plain value ``plain``, the
    table shape's free grid cells not under the pattern ``free``, the blank's cell."""
    word, b = int(zero.bits[r >> 6]), r & 63
    if not (word >> b) & 1:
        return plain
    row = int(zero.prefix[r >> 6]) + bin(word & ((1 << b) - 1)).count("1")
    j = region_number_py(free, blank_cell, width, n)
    return int(zero.values[row * zero.regions + j]) if j < zero.regions else plain

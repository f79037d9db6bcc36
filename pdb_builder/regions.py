"""The blank's regions under a pattern, and zero-aware entries (shared by the builder and
the solver; plain Python here, compiled in :mod:`pdb_builder.region_kernels`).

Under an additive pattern's cost model only the pattern's tiles cost a move, so the
blank roams free inside its *region*: the connected free cells of the table's shape
that no pattern tile covers.  A placement's regions are numbered by their lowest cell
(region 0 holds the lowest free cell).  A plain table keeps, for each placement, the
least cost over its regions; a *zero-aware* table (Clausecker & Reinefeld, SoCS 2019)
knows the cost of each (placement, region) pair, which is never lower and is exact for
the blank's region.

Storage (:class:`ZeroTable`): the plain table stays as it is (the least over regions,
what every other reader wants), and beside it one byte per placement, ``codes``: two
bits for each of regions 0 to 3, region ``j``'s cost above the least in units of
``step``, at most 3 (rounded down: admissible).  ``step`` is 2 where every such
difference is even (on the open boards they all are: the costs of one placement's
regions share a parity) and 1 otherwise.  A region numbered 4 or more reads the
least.  The byte is 0 for most placements (one region, or regions of equal cost), and
only where it is not does a reader flood the regions with 64-bit shifts to find the
blank's.  Cells here are grid cells of the table's shape (``0 .. W*H-1``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

REGIONS = 4  # regions a code byte covers (two bits each)
ENCODING = "regions-2bit-v1"  # the codes' encoding, as files name it


class ZeroTable(NamedTuple):
    """A table's zero-aware entries (see the module docstring)."""

    codes: np.ndarray  # uint8, one per placement
    step: int  # the cost of one unit of a code's two bits: 1 or 2
    guard: object = None  # the codes' Guard where their check is left to the reader (integrity.py)

    @property
    def nbytes(self) -> int:
        return int(self.codes.nbytes)


def grid_masks(width: int, n: int, free_cells) -> tuple[np.uint64, np.uint64, np.uint64]:
    """The free cells of a shape as a grid mask, and the masks that keep a shift by one
    cell left or right inside its row."""
    board = (1 << n) - 1
    col0 = sum(1 << c for c in range(0, n, width))
    last = sum(1 << c for c in range(width - 1, n, width))
    return np.uint64(sum(1 << c for c in free_cells)), np.uint64(board & ~col0), np.uint64(board & ~last)


def _flood(seed: int, free: int, width: int, not_col0: int, not_last: int) -> int:
    r = seed
    while True:
        nr = (r | ((r << 1) & not_col0) | ((r >> 1) & not_last) | (r << width) | (r >> width)) & free
        if nr == r:
            return r
        r = nr


def region_number(free: int, blank_cell: int, width: int, n: int) -> int:
    """The number of the blank's region among the regions of ``free`` (grid cells), or
    :data:`REGIONS` for any number from there on."""
    _, nc0, nl = (int(x) for x in grid_masks(width, n, ()))
    rest = free
    for j in range(REGIONS):
        region = _flood(rest & -rest, free, width, nc0, nl)
        if region >> blank_cell & 1:
            return j
        rest &= ~region
    return REGIONS


def zero_value(zero: ZeroTable, r: int, least: int, free: int, blank_cell: int, width: int, n: int) -> int:
    """Entry ``r`` with the blank on ``blank_cell``: ``least`` is the plain table's,
    ``free`` the table shape's free grid cells that the pattern leaves."""
    code = int(zero.codes[r])
    if code == 0:
        return least
    j = region_number(free, blank_cell, width, n)
    return least if j >= REGIONS else least + zero.step * (code >> (2 * j) & 3)

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
only where it is not does a reader find the blank's region: by flooding the regions
with 64-bit shifts, or, on a table shape of at most :data:`LABEL_CELLS` cells, in a
table of every free set's region numbers (:func:`region_labels`).  Cells here are grid
cells of the table's shape (``0 .. W*H-1``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

REGIONS = 4  # regions a code byte covers (two bits each)
LABEL_CELLS = 16  # table shapes up to this many cells get region labels (2^16 words: 512 KiB)
ENCODING = "regions-2bit-v1"  # the codes' encoding, as files name it


class ZeroTable(NamedTuple):
    """A table's zero-aware entries (see the module docstring)."""

    codes: np.ndarray  # uint8, one per placement
    step: int  # the cost of one unit of a code's two bits: 1 or 2
    guard: object = None  # the codes' Guard where their check is left to the reader (integrity.py)
    one_bit: object = None  # the table's one-bit copy (pdb_builder.one_bit.OneBitCopy), where its file has one

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


def _grown(r, free, one, width, not_col0, not_last):
    """``r`` grown by one cell each way inside ``free``: Python ints, or numpy uint64
    arrays (``one`` and ``width`` then np.uint64)."""
    return (r | ((r << one) & not_col0) | ((r >> one) & not_last) | (r << width) | (r >> width)) & free


def _flood(seed: int, free: int, width: int, not_col0: int, not_last: int) -> int:
    r = seed
    while True:
        nr = _grown(r, free, 1, width, not_col0, not_last)
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


def region_cost(least, code, step, region):
    """The cost of region ``region`` of a placement whose plain value is ``least`` and
    whose code byte is ``code`` (the module docstring; compiled in
    :mod:`pdb_builder.region_kernels` for the kernels)."""
    if region >= REGIONS:
        return least
    return least + step * ((code >> (2 * region)) & 3)


def zero_value(
    zero: ZeroTable, r: int, least: int, free: int, blank_cell: int, width: int, n: int, code: int | None = None
) -> int:
    """Entry ``r`` with the blank on ``blank_cell``: ``least`` is the plain table's,
    ``free`` the table shape's free grid cells that the pattern leaves; ``code`` its
    code where the caller read it already."""
    code = int(zero.codes[r]) if code is None else code
    if code == 0:
        return least
    return region_cost(least, code, zero.step, region_number(free, blank_cell, width, n))


@lru_cache(maxsize=8)
def region_labels(cells: tuple, width: int, n: int) -> np.ndarray:
    """Every region number at once, for a table shape of ``len(cells)`` cells (grid
    cells ``cells``, in table order) of at most :data:`LABEL_CELLS`: word ``m`` of the
    result (``m``: the free table cells as a mask) holds, in four bits per table cell,
    the number of that cell's region (:func:`region_number`, :data:`REGIONS` for any
    from there on; 0 for a covered cell).  Read-only; shared by every search on the
    shape (a layout's 512 KiB)."""
    k = len(cells)
    if k > LABEL_CELLS:
        raise ValueError(f"{k} table cells: region labels cover {LABEL_CELLS} at most")
    _, nc0, nl = grid_masks(width, n, ())
    one, w = np.uint64(1), np.uint64(width)
    m = np.arange(1 << k, dtype=np.uint64)
    free = np.zeros_like(m)
    for j, c in enumerate(cells):
        free |= ((m >> np.uint64(j)) & one) << np.uint64(c)
    labels = np.zeros_like(m)
    rest = free.copy()
    number = 0
    while rest.any():
        region = rest & (~rest + one)  # flood every set's lowest remaining cell at once
        while True:
            grown = _grown(region, free, one, w, nc0, nl)
            if np.array_equal(grown, region):
                break
            region = grown
        for j, c in enumerate(cells):
            labels |= (((region >> np.uint64(c)) & one) * np.uint64(min(number, REGIONS))) << np.uint64(4 * j)
        rest &= ~region
        number += 1
    labels.flags.writeable = False
    return labels

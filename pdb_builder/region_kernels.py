"""The blank's regions compiled (:mod:`pdb_builder.regions` says what they are and how
zero-aware entries are stored): shared by the builder's BFS and the solver's kernel."""

from __future__ import annotations

import numba as nb
import numpy as np

from .jitload import load_cached
from .ranking import popcount


@nb.njit(cache=True, inline="always")
def flood(seed, free, width, not_col0, not_last):
    """Cells reachable from ``seed`` (a mask) through ``free`` (grid masks)."""
    one = np.uint64(1)
    w = np.uint64(width)
    r = seed
    while True:
        nr = r | ((r << one) & not_col0) | ((r >> one) & not_last) | (r << w) | (r >> w)
        nr &= free
        if nr == r:
            return r
        r = nr


@nb.njit(cache=True, inline="always")
def region_number(region, free, width, not_col0, not_last):
    """The number of ``region`` among the regions of ``free``: how many of them have
    their lowest cell below its lowest cell."""
    low = region & (~region + np.uint64(1))
    rest = free & (low - np.uint64(1))
    count = 0
    while rest:
        rest &= ~flood(rest & (~rest + np.uint64(1)), free, width, not_col0, not_last)
        count += 1
    return count


@nb.njit(cache=True, inline="always")
def zero_row(bits, prefix, r):
    """The row of rank ``r`` in a zero-aware ``values`` array (times ``regions``), or -1
    where its bit is clear."""
    word = bits[r >> 6]
    b = np.uint64(r & 63)
    if (word >> b) & np.uint64(1) == 0:
        return -1
    return prefix[r >> 6] + popcount(word & ((np.uint64(1) << b) - np.uint64(1)))


load_cached(globals())

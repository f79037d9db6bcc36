"""The blank's regions compiled (:mod:`pdb_builder.regions` says what they are and how
zero-aware entries are stored): shared by the builder's BFS and the solver's kernel."""

from __future__ import annotations

import numba as nb
import numpy as np

from . import one_bit, regions
from .jitload import load_cached
from .ranking import popcount

REGIONS = 4  # (pdb_builder.regions.REGIONS)


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
def region_number(cells, free, width, not_col0, not_last):
    """The number of the region of ``free`` that holds ``cells`` (a mask inside one
    region), regions numbered by their lowest cell; :data:`REGIONS` for any number from
    there on."""
    rest = free
    for j in range(REGIONS):
        region = flood(rest & (~rest + np.uint64(1)), free, width, not_col0, not_last)
        if region & cells:
            return j
        rest &= ~region
    return REGIONS


@nb.njit(cache=True, inline="always")
def zero_row(bits, prefix, r):
    """A build's row of rank ``r`` (:mod:`pdb_builder.make.zero`): how many bits of
    ``bits`` are set below bit ``r`` (``prefix``: how many below each word), or -1 where
    bit ``r`` is clear."""
    word = bits[r >> 6]
    b = np.uint64(r & 63)
    if (word >> b) & np.uint64(1) == 0:
        return -1
    return prefix[r >> 6] + popcount(word & ((np.uint64(1) << b) - np.uint64(1)))


# a region's cost (pdb_builder.regions) and one bit an entry (pdb_builder.one_bit), compiled for
# the builder's checks and the search
region_cost = nb.njit(cache=True, inline="always")(regions.region_cost)
bit_at = nb.njit(cache=True, inline="always")(one_bit.bit_at)
decode_bit = nb.njit(cache=True, inline="always")(one_bit.decode)


load_cached(globals())

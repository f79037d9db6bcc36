"""Two bits per pattern-database entry: the value modulo 8, read relative to the parent.

A move changes one tile's cell, so one pattern's placement, by one abstract move.
The abstract graph is bipartite (a subgraph of the grid), so every value has the
parity of its placement and a move changes it by an odd amount.  Our tables are
region-aware (``bfs.py``: the least cost over the blank's regions), which is not
consistent: a move can change a value by 5 or more (about 0.03% of the moves on
the 4x4 tables).  ``relax`` (:mod:`pdb_builder.make.lowering`) lowers the few entries concerned until every move
changes a value by 1 or 3 (the lowered table stays admissible: each value is
still the cost of a path to the goal placement, plus nothing).  Then a child's
value is its parent's plus one of -3, -1, +1, +3, four numbers that differ
modulo 8, and since each has the parity the child's needs, the child's value
modulo 8 is known from ``(value >> 1) & 3``: two bits, four entries a byte
(Breyer & Korf 2010 store values modulo 3 for the same reason, on consistent
tables).  The search knows the parent's value, so it decodes the child's exactly
(``decode``); the root's comes from the full table, which stays in the file:
relaxing lowers an entry by less than 8 (checked when the file is written;
otherwise no packed table is stored), so the relaxed value is the largest one
at most the full value with those two bits (``root_value``).

A quarter of the bytes: the 4x4 7-8 tables' 550 MB read as 138 MB, so more of
the search's reads hit the caches.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from . import entries
from .board import Shape
from .entries import ENCODING, MAX_LOWERING, SLACK, UNSEEN  # noqa: F401 - the read side names them here too
from .jitload import load_cached
from .ranking import rank_delta, trailing_zeros, unrank_kernel, weights


def compact_neighbours(shape: Shape) -> tuple[np.ndarray, np.ndarray]:
    """Free-cell adjacency in the tables' cell numbering (index among free cells)."""
    cidx = {c: j for j, c in enumerate(shape.free_cells)}
    n = len(cidx)
    nbr = np.full((n, 4), -1, dtype=np.int64)
    ndeg = np.zeros(n, dtype=np.int64)
    for c, j in cidx.items():
        for d in shape.neighbours[c]:
            nbr[j, ndeg[j]] = cidx[d]
            ndeg[j] += 1
    return nbr, ndeg


@nb.njit(cache=True, inline="always")
def _moves(r, k, w, nbr, ndeg, pos, used, slot_of, out):
    """Ranks of the abstract neighbours of placement ``r`` (cells ``pos``, mask
    ``used``): one pattern tile one cell onto a cell no pattern tile holds."""
    m = 0
    for s in range(k):
        a = pos[s]
        for j in range(ndeg[a]):
            b = nbr[a, j]
            if not (used >> np.uint64(b)) & np.uint64(1):
                out[m] = r + rank_delta(s, a, b, used, slot_of, w)
                m += 1
    return m


@nb.njit(cache=True, inline="always")
def _unrank(r, n, k, w, pos, slot_of):
    """Placement ``r`` into ``pos`` and its slot per cell into ``slot_of``; returns its mask."""
    used = unrank_kernel(r, n, k, w, pos)
    for s in range(k):
        slot_of[pos[s]] = s
    return used


@nb.njit(cache=True, inline="always")
def _neighbours(r, n, k, w, nbr, ndeg, pos, slot_of, out):
    """:func:`_moves` of placement ``r``, unranked first; returns how many."""
    return _moves(r, k, w, nbr, ndeg, pos, _unrank(r, n, k, w, pos, slot_of), slot_of, out)


@nb.njit(cache=True, inline="always")
def chunk_bounds(ci, nchunks, size):
    """Ranks ``lo .. hi - 1`` of chunk ``ci``: ``size`` ranks cut into ``nchunks`` equal
    runs (the last one shorter), for the walks over every placement in parallel."""
    chunk = (size + nchunks - 1) // nchunks
    lo = ci * chunk
    return lo, min(size, lo + chunk)


@nb.njit(cache=True, inline="always")
def _next_placement(pos, used, slot_of, n, k):
    """Step ``pos`` (and its mask ``used``, returned) to the next placement in rank
    (lexicographic) order: the last slot that can take a larger free cell does, and
    the slots after it take the smallest free cells in order."""
    full = (np.uint64(1) << np.uint64(n)) - np.uint64(1)
    for i in range(k - 1, -1, -1):
        used &= ~(np.uint64(1) << np.uint64(pos[i]))
        above = full & ~used & ~((np.uint64(2) << np.uint64(pos[i])) - np.uint64(1))
        if above:
            for s in range(i, k):
                c = trailing_zeros(above if s == i else full & ~used)
                pos[s] = c
                slot_of[c] = s
                used |= np.uint64(1) << np.uint64(c)
            return used
    return used


# the entry arithmetic of pdb_builder.entries, compiled for the kernels
bits_at = nb.njit(cache=True, inline="always")(entries.bits_at)
decode = nb.njit(cache=True, inline="always")(entries.decode)
root_value = nb.njit(cache=True, inline="always")(entries.root_value)


@nb.njit(cache=True)
def _neighbour_list(r, n, k, w, nbr, ndeg):
    pos = np.empty(k, dtype=np.int64)
    slot_of = np.zeros(n, dtype=np.int64)
    out = np.empty(4 * k, dtype=np.int64)
    return out[: _neighbours(r, n, k, w, nbr, ndeg, pos, slot_of, out)].copy()


def neighbour_ranks(shape: Shape, k: int, r: int) -> list[int]:
    """Ranks of placement ``r``'s abstract neighbours (one pattern tile one cell)."""
    nbr, ndeg = compact_neighbours(shape)
    n = len(shape.free_cells)
    return [int(x) for x in _neighbour_list(r, n, k, weights(n, k), nbr, ndeg)]


load_cached(globals())  # cached kernels load without the compiler (pdb_builder/jitload.py)

"""Two bits per pattern-database entry: the value modulo 8, read relative to the parent.

A move changes one tile's cell, so one pattern's placement, by one abstract move.
The abstract graph is bipartite (a subgraph of the grid), so every value has the
parity of its placement and a move changes it by an odd amount.  Our tables are
region-aware (``bfs.py``: the least cost over the blank's regions), which is not
consistent: a move can change a value by 5 or more (about 0.03% of the moves on
the 4x4 tables).  ``relax`` lowers the few entries concerned until every move
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

from .board import Shape
from .ranking import rank_delta, trailing_zeros, unrank_kernel, weights

ENCODING = "mod8-relative-v1"
SLACK = 3  # after relax, every move changes a value by at most this
MAX_LOWERING = 6  # root_value needs the full value minus the relaxed one below 8
UNSEEN = 255


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


@nb.njit(cache=True, parallel=True, nogil=True)
def _relax_pass(table, n, k, w, nbr, ndeg, lowered):
    """Every entry to at most its lowest neighbour + SLACK, in place; marks the
    lowered ones in the bitmap ``lowered`` (each chunk owns whole bytes of it)."""
    size = table.shape[0]
    nchunks = 4096
    chunk = ((size + nchunks - 1) // nchunks + 7) // 8 * 8
    for ci in nb.prange(nchunks):
        lo = ci * chunk
        hi = min(size, lo + chunk)
        if lo >= hi:
            continue
        pos = np.empty(k, dtype=np.int64)
        slot_of = np.zeros(n, dtype=np.int64)
        out = np.empty(4 * k, dtype=np.int64)
        used = _unrank(lo, n, k, w, pos, slot_of)
        for r in range(lo, hi):
            if r > lo:  # the placements of a chunk in rank order, one step each
                used = _next_placement(pos, used, slot_of, n, k)
            v = table[r]
            if v == UNSEEN:
                continue
            best = v
            for j in range(_moves(r, k, w, nbr, ndeg, pos, used, slot_of, out)):
                best = min(best, np.int64(table[out[j]]) + SLACK)
            if best < v:
                table[r] = best
                lowered[r >> 3] |= np.uint8(1 << (r & 7))


@nb.njit(cache=True)
def _relax_rest(table, n, k, w, nbr, ndeg, lowered):
    """Finish from the entries the pass lowered: a lowered entry can leave a
    neighbour more than SLACK above it; lower that one too, and so on."""
    stack = np.empty(1024, dtype=np.int64)
    top = 0
    for byte in range(lowered.shape[0]):
        if lowered[byte]:
            for bit in range(8):
                if (lowered[byte] >> bit) & 1:
                    if top == stack.shape[0]:
                        stack = np.concatenate((stack, np.empty_like(stack)))
                    stack[top] = byte * 8 + bit
                    top += 1
    pos = np.empty(k, dtype=np.int64)
    slot_of = np.zeros(n, dtype=np.int64)
    out = np.empty(4 * k, dtype=np.int64)
    while top > 0:
        top -= 1
        r = stack[top]
        cap = np.int64(table[r]) + SLACK
        for j in range(_neighbours(r, n, k, w, nbr, ndeg, pos, slot_of, out)):
            r2 = out[j]
            if table[r2] != UNSEEN and table[r2] > cap:
                table[r2] = cap
                if top == stack.shape[0]:
                    stack = np.concatenate((stack, np.empty_like(stack)))
                stack[top] = r2
                top += 1


def relax(table: np.ndarray, shape: Shape, k: int) -> None:
    """Lower ``table`` (a pattern of ``k`` tiles on ``shape``) in place until every
    abstract move changes a value by at most SLACK."""
    nbr, ndeg = compact_neighbours(shape)
    n = len(shape.free_cells)
    w = weights(n, k)
    lowered = np.zeros((table.shape[0] + 7) // 8, dtype=np.uint8)
    _relax_pass(table, n, k, w, nbr, ndeg, lowered)
    _relax_rest(table, n, k, w, nbr, ndeg, lowered)


@nb.njit(cache=True)
def pack(table):
    """Bits ``(value >> 1) & 3`` of each entry, four entries a byte, entry r at bits 2(r % 4)."""
    out = np.zeros((table.shape[0] + 3) // 4, dtype=np.uint8)
    for r in range(table.shape[0]):
        out[r >> 2] |= np.uint8(((table[r] >> 1) & 3) << ((r & 3) << 1))
    return out


@nb.njit(cache=True, inline="always")
def bits_at(packed_byte, r):
    """Entry ``r``'s two bits, from the byte that holds it."""
    return (packed_byte >> ((r & 3) << 1)) & 3


@nb.njit(cache=True, inline="always")
def decode(q, parent):
    """The child's value: the one of parent - 3, - 1, + 1, + 3 whose bits are ``q``."""
    lo = parent - SLACK
    return lo + 2 * ((q - (lo >> 1)) & 3)


@nb.njit(cache=True, inline="always")
def root_value(full, q):
    """The relaxed value from the full one (at most MAX_LOWERING above it, same parity)."""
    return full - 2 * (((full >> 1) - q) & 3)


def packed_table(table: np.ndarray, shape: Shape, k: int) -> tuple[np.ndarray | None, int]:
    """(the two-bit table, the largest lowering) for a full ``table``; the packed
    table is None when relaxing would lower an entry too far for ``root_value``."""
    relaxed = np.array(table, dtype=np.uint8, copy=True)
    relax(relaxed, shape, k)
    lowering = int(_max_lowering(np.asarray(table), relaxed))
    if lowering > MAX_LOWERING:
        return None, lowering
    packed = pack(relaxed)
    bad = check_packed_full(np.asarray(table), packed, shape, k, lowering)
    if bad >= 0:  # never published: the solver would read wrong values
        raise RuntimeError(f"the two-bit copy fails its check at placement {bad}")
    return packed, lowering


@nb.njit(cache=True)
def _max_lowering(full, relaxed):
    out = 0
    for r in range(full.shape[0]):
        d = np.int64(full[r]) - np.int64(relaxed[r])
        if d > out:
            out = d
    return out


@nb.njit(cache=True)
def _first_disagreement(full, packed, n, k, w, nbr, ndeg, ranks):
    pos = np.empty(k, dtype=np.int64)
    slot_of = np.zeros(n, dtype=np.int64)
    out = np.empty(4 * k, dtype=np.int64)
    for r in ranks:
        if full[r] == UNSEEN:
            continue
        v = root_value(np.int64(full[r]), bits_at(np.int64(packed[r >> 2]), r))
        if v > full[r] or full[r] - v > MAX_LOWERING:
            return r
        for j in range(_neighbours(r, n, k, w, nbr, ndeg, pos, slot_of, out)):
            r2 = out[j]
            if full[r2] != UNSEEN:
                q2 = bits_at(np.int64(packed[r2 >> 2]), r2)
                if decode(q2, v) != root_value(np.int64(full[r2]), q2):
                    return r
    return -1


@nb.njit(cache=True, parallel=True, nogil=True)
def _check_all(full, packed, n, k, w, nbr, ndeg, max_lowering, bad):
    """:func:`_first_disagreement` over every placement, chunks in parallel in rank
    order; each chunk's first bad rank (or -1) into ``bad[chunk]`` (no outer scalar
    is written inside the loop)."""
    size = full.shape[0]
    nchunks = bad.shape[0]
    chunk = (size + nchunks - 1) // nchunks
    for ci in nb.prange(nchunks):
        bad[ci] = -1
        lo = ci * chunk
        hi = min(size, lo + chunk)
        if lo >= hi:
            continue
        pos = np.empty(k, dtype=np.int64)
        slot_of = np.zeros(n, dtype=np.int64)
        out = np.empty(4 * k, dtype=np.int64)
        used = _unrank(lo, n, k, w, pos, slot_of)
        for r in range(lo, hi):
            if r > lo:
                used = _next_placement(pos, used, slot_of, n, k)
            if full[r] == UNSEEN:
                continue
            v = root_value(np.int64(full[r]), bits_at(np.int64(packed[r >> 2]), r))
            if v > full[r] or full[r] - v > max_lowering:
                bad[ci] = r
                break
            ok = True
            for j in range(_moves(r, k, w, nbr, ndeg, pos, used, slot_of, out)):
                r2 = out[j]
                if full[r2] != UNSEEN:
                    q2 = bits_at(np.int64(packed[r2 >> 2]), r2)
                    if decode(q2, v) != root_value(np.int64(full[r2]), q2):
                        ok = False
                        break
            if not ok:
                bad[ci] = r
                break


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


def check_packed_full(
    full: np.ndarray, packed: np.ndarray, shape: Shape, k: int, max_lowering: int = MAX_LOWERING
) -> int:
    """The first placement (rank) where the two-bit copy fails, or -1, over every
    placement: its value (:func:`root_value`) is at most the full one and at most
    ``max_lowering`` below it, and every move to a reachable placement decodes
    (:func:`decode`, so the move changes the lowered value by 1 or 3) to that
    placement's own value.  The lowered values are then admissible wherever the full
    ones are.  Parallel (numba threads)."""
    nbr, ndeg = compact_neighbours(shape)
    n = len(shape.free_cells)
    bad = np.empty(max(1, min(4096, full.shape[0])), dtype=np.int64)
    _check_all(full, packed, n, k, weights(n, k), nbr, ndeg, max_lowering, bad)
    found = bad[bad >= 0]
    return int(found.min()) if found.size else -1


def check_packed(full: np.ndarray, packed: np.ndarray, shape: Shape, k: int, samples: int, seed: int = 0) -> int:
    """A placement (rank) where the two-bit copy disagrees with the full table, or -1:
    for ``samples`` random placements, the root value is within MAX_LOWERING below the
    full one, and every move's decoded value equals the neighbour's own root value."""
    nbr, ndeg = compact_neighbours(shape)
    n = len(shape.free_cells)
    ranks = np.random.default_rng(seed).integers(0, full.shape[0], size=min(samples, full.shape[0]))
    return int(_first_disagreement(full, packed, n, k, weights(n, k), nbr, ndeg, ranks))

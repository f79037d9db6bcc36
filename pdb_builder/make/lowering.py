"""How a two-bit copy is made and checked (the build side of :mod:`pdb_builder.packed`).

``relax`` lowers the few entries where a move changes a value by more than
:data:`~pdb_builder.packed.SLACK`, ``pack`` keeps bits ``(value >> 1) & 3`` of each,
and the checks hold a copy against its full table: sampled (``check_packed``) or
every placement (``check_packed_full``, run before a build publishes a copy and by
``slidepdb verify``).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..board import Shape
from ..jitload import load_cached
from ..packed import (
    MAX_LOWERING,
    SLACK,
    UNSEEN,
    _moves,
    _neighbours,
    _next_placement,
    _unrank,
    bits_at,
    chunk_bounds,
    compact_neighbours,
    decode,
    root_value,
)
from ..ranking import weights


@nb.njit(cache=True, parallel=True, nogil=True)
def _relax_pass(table, n, k, w, nbr, ndeg, lowered, marked, slack):
    """Every entry to at most its lowest neighbour + ``slack``, in place; marks the
    lowered ones in the bitmap ``lowered``, and in ``marked`` every entry that read
    a neighbour more than ``slack`` above or below it (lowered or not; each chunk owns
    whole bytes of both)."""
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
            far = False
            for j in range(_moves(r, k, w, nbr, ndeg, pos, used, slot_of, out)):
                v2 = np.int64(table[out[j]])
                if v2 != UNSEEN:
                    best = min(best, v2 + slack)
                    far = far or v2 > v + slack
            if best < v:
                table[r] = best
                lowered[r >> 3] |= np.uint8(1 << (r & 7))
            if far or best < v:
                marked[r >> 3] |= np.uint8(1 << (r & 7))


@nb.njit(cache=True)
def _relax_rest(table, n, k, w, nbr, ndeg, lowered, slack):
    """Finish from the entries the pass lowered: a lowered entry can leave a
    neighbour more than ``slack`` above it; lower that one too, and so on."""
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
        cap = np.int64(table[r]) + slack
        for j in range(_neighbours(r, n, k, w, nbr, ndeg, pos, slot_of, out)):
            r2 = out[j]
            if table[r2] != UNSEEN and table[r2] > cap:
                table[r2] = cap
                if top == stack.shape[0]:
                    stack = np.concatenate((stack, np.empty_like(stack)))
                stack[top] = r2
                top += 1


def relax(table: np.ndarray, shape: Shape, k: int, slack: int = SLACK) -> np.ndarray:
    """Lower ``table`` (a pattern of ``k`` tiles on ``shape``) in place until every
    abstract move changes a value by at most ``slack`` (the two-bit copies':
    :data:`~pdb_builder.packed.SLACK`; ``scripts/bench_one_bit.py`` measures what 1
    would cost).  Returns the bitmap of the entries whose moves
    :func:`check_packed_near` must look at (entry r at bit ``r & 7`` of byte
    ``r >> 3``): those that met a neighbour more than ``slack`` away in the parallel
    pass."""
    nbr, ndeg = compact_neighbours(shape)
    n = len(shape.free_cells)
    w = weights(n, k)
    lowered = np.zeros((table.shape[0] + 7) // 8, dtype=np.uint8)
    marked = np.zeros_like(lowered)
    _relax_pass(table, n, k, w, nbr, ndeg, lowered, marked, slack)
    _relax_rest(table, n, k, w, nbr, ndeg, lowered, slack)
    return marked


@nb.njit(cache=True)
def pack(table):
    """Bits ``(value >> 1) & 3`` of each entry, four entries a byte, entry r at bits 2(r % 4)."""
    out = np.zeros((table.shape[0] + 3) // 4, dtype=np.uint8)
    for r in range(table.shape[0]):
        out[r >> 2] |= np.uint8(((table[r] >> 1) & 3) << ((r & 3) << 1))
    return out


def packed_table(table: np.ndarray, shape: Shape, k: int) -> tuple[np.ndarray | None, int]:
    """(the two-bit table, the largest lowering) for a full ``table``; the packed
    table is None when relaxing would lower an entry too far for ``root_value``."""
    relaxed = np.array(table, dtype=np.uint8, copy=True)
    marked = relax(relaxed, shape, k)
    lowering = int(_max_lowering(np.asarray(table), relaxed))
    if lowering > MAX_LOWERING:
        return None, lowering
    packed = pack(relaxed)
    bad = check_packed_near(np.asarray(table), relaxed, packed, marked, shape, k, lowering)
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


@nb.njit(cache=True, inline="always")
def _lowest_failing_move(full, packed, v, out, m):
    """The lowest of the ``m`` ranks in ``out`` (a placement's moves, its value ``v``)
    that is reached and whose two bits do not decode from ``v`` to its own value, or -1."""
    low = -1
    for j in range(m):
        r2 = out[j]
        if full[r2] != UNSEEN:
            q2 = bits_at(np.int64(packed[r2 >> 2]), r2)
            if decode(q2, v) != root_value(np.int64(full[r2]), q2) and (low < 0 or r2 < low):
                low = r2
    return low


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
        if _lowest_failing_move(full, packed, v, out, _neighbours(r, n, k, w, nbr, ndeg, pos, slot_of, out)) >= 0:
            return r
    return -1


@nb.njit(cache=True, parallel=True, nogil=True)
def _check_all(full, packed, n, k, w, nbr, ndeg, max_lowering, bad):
    """:func:`_first_disagreement` over every placement, chunks in parallel in rank
    order; each chunk's first bad rank (or -1) into ``bad[chunk]`` (no outer scalar
    is written inside the loop)."""
    for ci in nb.prange(bad.shape[0]):
        bad[ci] = -1
        lo, hi = chunk_bounds(ci, bad.shape[0], full.shape[0])
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
            if _lowest_failing_move(full, packed, v, out, _moves(r, k, w, nbr, ndeg, pos, used, slot_of, out)) >= 0:
                bad[ci] = r
                break


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


@nb.njit(cache=True, parallel=True, nogil=True)
def _check_near(full, relaxed, packed, marked, n, k, w, nbr, ndeg, max_lowering, bad):
    """:func:`check_packed_near`'s chunks in parallel: each chunk's smallest bad rank
    (or -1) into ``bad[chunk]``."""
    size = full.shape[0]
    nchunks = bad.shape[0]
    chunk = (size + nchunks - 1) // nchunks
    for ci in nb.prange(nchunks):
        found = size
        lo = ci * chunk
        hi = min(size, lo + chunk)
        pos = np.empty(k, dtype=np.int64)
        slot_of = np.zeros(n, dtype=np.int64)
        out = np.empty(4 * k, dtype=np.int64)
        for r in range(lo, hi):
            f = np.int64(full[r])
            if f == UNSEEN:
                continue
            v = root_value(f, bits_at(np.int64(packed[r >> 2]), r))
            if v > f or f - v > max_lowering:
                found = min(found, r)  # (its moves still looked at: a move's lower rank may be below it)
            elif v == f and relaxed[r] == f and not (marked[r >> 3] >> (r & 7)) & 1:
                continue
            r2 = _lowest_failing_move(full, packed, v, out, _neighbours(r, n, k, w, nbr, ndeg, pos, slot_of, out))
            if r2 >= 0:
                found = min(found, r, r2)
        bad[ci] = found if found < size else -1


def check_packed_near(
    full: np.ndarray,
    relaxed: np.ndarray,
    packed: np.ndarray,
    marked: np.ndarray,
    shape: Shape,
    k: int,
    max_lowering: int = MAX_LOWERING,
) -> int:
    """:func:`check_packed_full`'s answer (the first placement where the two-bit copy
    fails, or -1) for a copy that :func:`relax` (``relaxed``, and the bitmap it
    returned, ``marked``) and :func:`pack` have just made, without walking every
    placement's moves: every value is looked at, but only the moves of the entries
    that the packed copy or ``relaxed`` lowers, or that ``marked`` holds.

    The others' moves need no look.  Take a move between two entries that neither
    copy lowers and that are not marked.  Values only go down while relaxing, so both
    entries held their full values all along, and the pass read them so: had they
    been more than SLACK apart, it would have marked them.  So they differ by 1 or
    3 (the graph is bipartite), their packed values are their full ones, and the
    move decodes.  A failing move is thus seen from a looked-at end, and named by
    its lower rank, as the full check names it."""
    nbr, ndeg = compact_neighbours(shape)
    n = len(shape.free_cells)
    bad = np.empty(max(1, min(4096, full.shape[0])), dtype=np.int64)
    _check_near(full, relaxed, packed, marked, n, k, weights(n, k), nbr, ndeg, max_lowering, bad)
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


load_cached(globals(), quick=False)  # keyed on every source it is compiled from (pdb_builder/jitload.py)

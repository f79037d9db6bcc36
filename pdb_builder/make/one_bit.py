"""How a one-bit copy of a zero-aware table is made and checked (the build side of
:mod:`pdb_builder.one_bit`, which says what the copy holds and how a search reads it).

A move of the abstract graph takes the pattern tile on cell ``a`` onto a cell ``b`` of
the blank's region; the blank is then in the region of ``a``.  ``one_bit_copy`` walks
every move between (placement, region) pairs and marks both ends of each move that
does not change the zero-aware value by exactly one (code byte 255 in the copy: read
whole); ``copy_fault`` checks a copy against its tables the same way (the build runs
it before writing, ``slidepdb verify`` on the file).  ``side_table`` makes the copy's
side table of the placements read whole, ``side_fault`` checks one; ``paired`` folds
a copy's bits into its code bytes and ``unpaired`` unfolds them again.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..board import Shape
from ..jitload import load_cached
from ..one_bit import SIDE_BITS, WHOLE, side_shift
from ..packed import _next_placement, _unrank, chunk_bounds, compact_neighbours
from ..ranking import pdep, rank_delta, weights
from ..region_kernels import bit_at, region_cost, region_number
from ..regions import grid_masks
from .bfs import UNSEEN

PAIRS = 255  # (code, bit) pairs a paired copy keeps: its byte 255 is WHOLE


@nb.njit(cache=True, inline="always")
def _value(full, codes, step, r, cell, used, all_free, width, nc0, nl):
    """Placement ``r``'s zero-aware value with the blank on table cell ``cell``."""
    one = np.uint64(1)
    least = np.int64(full[r])
    code = np.int64(codes[r])
    if code == 0:
        return least
    free = all_free & ~pdep(used, all_free)
    return region_cost(least, code, step, region_number(pdep(one << np.uint64(cell), all_free), free, width, nc0, nl))


@nb.njit(cache=True, parallel=True, nogil=True)
def _walk(full, codes, step, n, k, w, nbr, ndeg, all_free, width, nc0, nl, bits, copy, marking, bad):
    """Every move between two reached placements, once (from its lower rank), chunks
    in parallel.  ``marking``: each move that does not change the value by one sets both
    ends' bytes of ``copy`` to WHOLE (a search crosses a move both ways, reading the
    child relative to the parent).  Otherwise (a check) each chunk's first placement
    whose bit or copy byte disagrees, or with such a move whose ends are not both read
    whole, or -1, into ``bad[chunk]``."""
    one = np.uint64(1)
    for ci in nb.prange(bad.shape[0]):
        bad[ci] = -1
        lo, hi = chunk_bounds(ci, bad.shape[0], full.shape[0])
        if lo >= hi:
            continue
        pos = np.empty(k, dtype=np.int64)
        slot_of = np.zeros(n, dtype=np.int64)
        used = _unrank(lo, n, k, w, pos, slot_of)
        for r in range(lo, hi):
            if r > lo:
                used = _next_placement(pos, used, slot_of, n, k)
            if full[r] == UNSEEN:
                continue
            failed = False
            if not marking:
                failed = bit_at(np.int64(bits[r >> 3]), r) != (np.int64(full[r]) >> 1) & 1 or (
                    copy[r] != codes[r] and copy[r] != WHOLE
                )
            for s in range(k):
                a = pos[s]
                for j in range(ndeg[a]):
                    b = nbr[a, j]
                    if failed or (used >> np.uint64(b)) & one:
                        continue
                    r2 = r + rank_delta(s, a, b, used, slot_of, w)
                    if r2 < r or full[r2] == UNSEEN:  # each move once, from its lower end
                        continue
                    if not marking and copy[r] == WHOLE and copy[r2] == WHOLE:
                        continue
                    used2 = used ^ ((one << np.uint64(a)) | (one << np.uint64(b)))
                    v = _value(full, codes, step, r, b, used, all_free, width, nc0, nl)
                    v2 = _value(full, codes, step, r2, a, used2, all_free, width, nc0, nl)
                    if v2 - v != 1 and v - v2 != 1:
                        if marking:
                            copy[r] = WHOLE
                            copy[r2] = WHOLE
                        else:
                            failed = True
            if failed:
                bad[ci] = r
                break


def _run(full, codes, step, shape: Shape, k: int, bits, copy, marking: bool) -> int:
    nbr, ndeg = compact_neighbours(shape)
    n = len(shape.free_cells)
    all_free, nc0, nl = grid_masks(shape.width, shape.n, shape.free_cells)
    bad = np.empty(max(1, min(4096, full.shape[0])), dtype=np.int64)
    args = (np.asarray(full), np.asarray(codes), np.int64(step), n, k, weights(n, k), nbr, ndeg, all_free, shape.width)
    _walk(*args, nc0, nl, bits, copy, marking, bad)
    found = bad[bad >= 0]
    return int(found.min()) if found.size else -1


def copy_fault(full, codes, step: int, shape: Shape, k: int, bits, copy) -> int:
    """The first placement (rank) where a one-bit copy (``bits``, ``copy``) disagrees
    with its tables (``full``, zero-aware ``codes`` in units of ``step``), or -1: its
    bit is not ``(least >> 1) & 1``, its copy byte is neither its code nor WHOLE, or a
    move from it to a higher rank changes the value by other than one while one of the
    two is not read whole.
    A search that reads a copy without a fault reads the tables' values.  Parallel
    (numba threads)."""
    writable = np.array(copy, dtype=np.uint8)  # (one compiled walk for both uses: it writes when it marks)
    return _run(full, codes, step, shape, k, np.asarray(bits), writable, False)


@nb.njit(cache=True, parallel=True, nogil=True)
def _pack(full, out):
    for byte in nb.prange(out.shape[0]):
        x = 0
        for j in range(8):
            r = 8 * byte + j
            if r < full.shape[0]:
                x |= ((np.int64(full[r]) >> 1) & 1) << j
        out[byte] = x


def one_bit_copy(full, codes, step: int, shape: Shape, k: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(bits, copy of the codes, how many placements are read whole) for a zero-aware
    table: bit ``(least >> 1) & 1`` of each placement, eight a byte (placement r in bit
    ``r & 7`` of byte ``r >> 3``), and the codes with the ends of every move that does
    not change the value by one set to WHOLE.  Checked before it is returned."""
    full, codes = np.asarray(full), np.asarray(codes)
    bits = np.zeros((full.shape[0] + 7) // 8, dtype=np.uint8)
    _pack(full, bits)
    copy = np.array(codes, dtype=np.uint8, copy=True)
    _run(full, codes, step, shape, k, bits, copy, True)
    bad = copy_fault(full, codes, step, shape, k, bits, copy)
    if bad >= 0:  # never published: a search would read wrong values
        raise RuntimeError(f"the one-bit copy fails its check at placement {bad}")
    return bits, copy, int(np.count_nonzero(copy == WHOLE))


def side_table(full, codes, copy, ranks=None) -> tuple[np.ndarray, np.ndarray, int]:
    """(side, index, shift): the side table of a one-bit copy's placements read whole
    (code byte WHOLE in ``copy``; ``ranks``: theirs, where the caller has them), with their
    plain values from ``full`` and their codes from ``codes`` (the layout is in
    :mod:`pdb_builder.one_bit`)."""
    full, codes, copy = np.asarray(full), np.asarray(codes), np.asarray(copy)
    ranks = np.flatnonzero(copy == WHOLE) if ranks is None else ranks
    shift = side_shift(copy.shape[0], ranks.size)
    buckets = max(1, -(-copy.shape[0] // (1 << shift)))
    index = np.zeros(buckets + 1, dtype=np.uint32)
    np.cumsum(np.bincount(ranks >> shift, minlength=buckets), out=index[1:])
    low = (ranks & ((1 << shift) - 1)).astype(np.uint32) << np.uint32(SIDE_BITS)
    side = low | (full[ranks].astype(np.uint32) << np.uint32(8)) | codes[ranks].astype(np.uint32)
    return side, index, shift


def side_fault(full, codes, copy, side, index, shift: int) -> int:
    """The first placement (rank) where a side table (``side``, ``index``, ``shift``)
    disagrees with what :func:`side_table` makes of the copy and its tables, or -1
    (-2 where their sizes alone differ)."""
    ranks = np.flatnonzero(np.asarray(copy) == WHOLE)
    want_side, want_index, want_shift = side_table(full, codes, copy, ranks)
    side, index = np.asarray(side), np.asarray(index)
    if want_shift != shift or want_side.shape != side.shape or want_index.shape != index.shape:
        return -2
    bad = np.flatnonzero(want_side != side)
    if bad.size:
        return int(ranks[bad[0]])
    moved = np.flatnonzero(want_index != index)
    if moved.size:  # a bucket's start: the first rank of that bucket
        return int(min(moved[0] << shift, copy.shape[0] - 1))
    return -1


def _bit_each(bits, n: int) -> np.ndarray:
    """Each of ``n`` placements' bit, one a byte."""
    return np.unpackbits(np.asarray(bits), count=n, bitorder="little")


def paired(bits, copy) -> tuple[np.ndarray, np.ndarray]:
    """(codes, pairs): a one-bit copy (``bits``, ``copy``) with each placement's bit
    folded into its byte, the index of its (code, bit) pair among the :data:`PAIRS`
    most frequent (``pairs``: uint16[256], code | bit << 8); a placement whose pair is
    not among them is coded WHOLE, as are those the copy codes WHOLE."""
    copy = np.asarray(copy)
    pair = (copy.astype(np.uint16) << np.uint16(1)) | _bit_each(bits, copy.shape[0])
    pair[copy == WHOLE] = 512
    counts = np.bincount(pair, minlength=513)[:512]
    kept = np.argsort(-counts, kind="stable")[:PAIRS]
    kept = np.sort(kept[counts[kept] > 0])
    index = np.full(513, WHOLE, dtype=np.uint8)
    index[kept] = np.arange(kept.size, dtype=np.uint8)
    pairs = np.zeros(256, dtype=np.uint16)
    pairs[: kept.size] = (kept >> 1) | ((kept & 1) << 8)
    return index[pair], pairs


def unpaired(codes, pairs, full) -> tuple[np.ndarray, np.ndarray]:
    """(bits, copy) of a paired copy: each placement's code and bit from its pair; a
    placement coded WHOLE gets the bit of its value in ``full`` (never read)."""
    codes, pairs = np.asarray(codes), np.asarray(pairs)
    whole = codes == WHOLE
    each = pairs[codes]
    copy = np.where(whole, WHOLE, each & 255).astype(np.uint8)
    bit = np.where(whole, (np.asarray(full) >> 1) & 1, each >> 8).astype(np.uint8)
    return np.packbits(bit, bitorder="little"), copy


load_cached(globals(), quick=False)

"""Build-only kernels of zero-aware tables (:mod:`pdb_builder.regions` has the format).

Before the BFS, :func:`split_placements` sets the bit of every placement whose free
cells fall into two regions or more (a placement with one region has nothing more to
keep) and :func:`zero_arrays` gives each such placement ``regions`` bytes; the BFS
(:mod:`pdb_builder.make.bfs`) writes each region's depth as it expands it.  After it,
:func:`keep_differing` keeps the rows where some region costs more than the
placement's least (the others read the plain table) and gives a region the BFS never
reached the least (never read on a real board, and admissible if it were).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..ranking import nth_free, rank_digits, step_digits, trailing_zeros
from ..region_kernels import flood
from ..regions import ZeroTable

WORDS_A_CHUNK = 64  # bit words (of 64 placements) a thread takes at a time


@nb.njit(cache=True, parallel=True, nogil=True)
def _split_bits(bits, total, n, k, cells_of, all_free, width, not_col0, not_last):
    nchunks = (bits.shape[0] + WORDS_A_CHUNK - 1) // WORDS_A_CHUNK
    one = np.uint64(1)
    for ci in nb.prange(nchunks):
        lo = ci * WORDS_A_CHUNK * 64
        hi = min(total, lo + WORDS_A_CHUNK * 64)
        dig = np.empty(k, dtype=np.int64)
        rank_digits(lo, n, k, dig)
        for p in range(lo, hi):
            if p > lo:
                step_digits(dig, 1, p, n, k)
            used = np.uint64(0)
            pmask = np.uint64(0)
            for i in range(k):
                c = nth_free(dig[i], used)
                used |= one << c
                pmask |= one << np.uint64(cells_of[c])
            free = all_free & ~pmask
            if free != 0 and flood(free & (~free + one), free, width, not_col0, not_last) != free:
                bits[p >> 6] |= one << np.uint64(p & 63)


def split_placements(n: int, k: int, total: int, grid) -> np.ndarray:
    """One bit per placement: set where its free cells make two regions or more."""
    cells_of, _, _, all_free, width, not_col0, not_last = grid[:7]
    bits = np.zeros((total + 63) // 64, dtype=np.uint64)
    _split_bits(bits, total, n, k, cells_of, all_free, width, not_col0, not_last)
    return bits


def _prefix(bits: np.ndarray) -> np.ndarray:
    counts = np.unpackbits(bits.view(np.uint8)).reshape(-1, 64).sum(axis=1, dtype=np.int64)
    return np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)


def zero_arrays(bits: np.ndarray, regions: int) -> ZeroTable:
    """The rows the BFS fills: ``regions`` bytes for each set bit, unreached (255)."""
    prefix = _prefix(bits)
    count = int(prefix[-1] + bin(int(bits[-1])).count("1")) if bits.size else 0
    return ZeroTable(bits, prefix, np.full(count * regions, 255, dtype=np.uint8), regions)


@nb.njit(cache=True)
def _keep(bits, prefix, values, m, table, keep_bits):
    kept = 0
    for wi in range(bits.shape[0]):
        word = bits[wi]
        row = prefix[wi]
        while word:
            b = word & (~word + np.uint64(1))
            word ^= b
            p = wi * 64 + np.int64(trailing_zeros(b))
            least = table[p]
            differs = False
            for j in range(m):
                v = values[row * m + j]
                if v == 255 or v < least:  # not reached: never read on a real board
                    v = least
                values[kept * m + j] = v
                differs = differs or v != least
            if differs:
                keep_bits[wi] |= b
                kept += 1
            row += 1
    return kept


def keep_differing(zero: ZeroTable, table: np.ndarray) -> ZeroTable:
    """Only the rows where some region costs more than the placement's least value."""
    keep_bits = np.zeros_like(zero.bits)
    values = zero.values.copy()
    kept = _keep(zero.bits, zero.prefix, values, zero.regions, table, keep_bits)
    return ZeroTable(keep_bits, _prefix(keep_bits), values[: kept * zero.regions].copy(), zero.regions)

"""Build-only kernels of zero-aware tables (:mod:`pdb_builder.regions` has the format).

Before the BFS, :func:`split_placements` sets the bit of every placement whose free
cells fall into two regions or more (a placement with one region has nothing more to
keep) and :func:`region_rows` gives each such placement a row of :data:`REGIONS`
bytes; the BFS (:mod:`pdb_builder.make.bfs`) writes each region's depth as it expands
it.  After it, :func:`zero_codes` turns the rows into the stored codes.
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from ..ranking import nth_free, rank_digits, step_digits, trailing_zeros
from ..region_kernels import REGIONS, flood
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


class Rows(NamedTuple):
    """What the BFS fills: the placements with two regions or more (``bits``, with
    ``prefix`` to find a row) and their regions' depths, :data:`REGIONS` a row."""

    bits: np.ndarray
    prefix: np.ndarray
    depths: np.ndarray


def region_rows(bits: np.ndarray) -> Rows:
    """A row of :data:`REGIONS` bytes, unreached (255), for each set bit of ``bits``."""
    prefix = _prefix(bits)
    count = int(prefix[-1] + bin(int(bits[-1])).count("1")) if bits.size else 0
    return Rows(bits, prefix, np.full(count * REGIONS, 255, dtype=np.uint8))


@nb.njit(cache=True)
def _codes(bits, depths, table, codes, step):
    """Each row's regions above the table's least, in units of ``step`` (at most 3,
    rounded down), two bits a region, into ``codes``; returns whether every
    difference was a multiple of 2."""
    even = True
    row = 0
    for wi in range(bits.shape[0]):
        word = bits[wi]
        while word:
            b = word & (~word + np.uint64(1))
            word ^= b
            p = wi * 64 + np.int64(trailing_zeros(b))
            least = np.int64(table[p])
            code = 0
            for j in range(REGIONS):
                v = np.int64(depths[row * REGIONS + j])
                if v != 255 and v > least:  # (a region never reached is never met on a real board)
                    even = even and (v - least) % 2 == 0
                    code |= min((v - least) // step, 3) << (2 * j)
            codes[p] = code
            row += 1
    return even


def zero_codes(rows: Rows, table: np.ndarray) -> ZeroTable:
    """The entries of a table whose BFS filled ``rows`` (:mod:`pdb_builder.regions`)."""
    codes = np.zeros(table.shape[0], dtype=np.uint8)
    if _codes(rows.bits, rows.depths, table, codes, 2):
        return ZeroTable(codes, 2)
    _codes(rows.bits, rows.depths, table, codes, 1)
    return ZeroTable(codes, 1)

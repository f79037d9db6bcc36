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

from ..jitload import load_cached
from ..ranking import nth_free, rank_digits, step_digits, trailing_zeros
from ..region_kernels import REGIONS, flood
from ..regions import ZeroTable
from .bfs import atomic_add, atomic_or


@nb.njit(cache=True, nogil=True)
def _split_share(counter, grant, me, chunk, bits, total, n, k, cells_of, all_free, width, not_col0, not_last):
    """One thread's share of :func:`split_placements`: chunks of ``chunk`` words of
    ``bits`` taken from ``counter[0]`` while thread ``me`` is below ``grant[0]`` (as
    :func:`~pdb_builder.make.bfs.expand_share`); each word is one thread's."""
    one = np.uint64(1)
    dig = np.empty(k, dtype=np.int64)
    words = bits.shape[0]
    done = 0
    while me < atomic_or(grant, 0, 0):
        w0 = atomic_add(counter, 0, 1) * chunk
        if w0 >= words:
            break
        lo = w0 * 64
        hi = min(total, min(words, w0 + chunk) * 64)
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
        done += hi - lo
    return done, 0


def split_placements(n: int, k: int, total: int, grid, share) -> np.ndarray:
    """One bit per placement: set where its free cells make two regions or more
    (on the threads ``share`` grants, :func:`~pdb_builder.make.share.run_layer`)."""
    from .share import run_layer

    cells_of, _, _, all_free, width, not_col0, not_last = grid[:7]
    bits = np.zeros((total + 63) // 64, dtype=np.uint64)
    run_layer(share, _split_share, bits.shape[0], bits, total, n, k, cells_of, all_free, width, not_col0, not_last)
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


load_cached(globals(), quick=False)  # keyed on every source it is compiled from (pdb_builder/jitload.py)

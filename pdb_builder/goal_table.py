"""Goal-side BFS tables, the reading side: every real board state within ``depth``
moves of the goal, with its exact distance; how a state is keyed and found.  The BFS
that builds a table and the check that certifies one are in
:mod:`pdb_builder.make.goal_bfs`.

A state is packed into ``key-words`` uint64 words: each free cell (in compact
order) holds the compact code of its tile (0 the blank, then the shape's tiles in
ascending order) in ``bits`` bits, ``64 // bits`` cells a word, so no cell
straddles two words.  Keys are sorted lexicographically (word 0 first) so the
solver finds a state by binary search.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from .board import Shape
from .jitload import load_cached


def key_layout(shape: Shape) -> tuple[int, int, int]:
    """(bits per cell, cells per word, words per key)."""
    nfree = len(shape.free_cells)
    bits = max(1, math.ceil(math.log2(nfree)))
    per = 64 // bits
    return bits, per, math.ceil(nfree / per)


def tile_codes(shape: Shape) -> np.ndarray:
    """Tile id -> compact code (0 blank, then tiles ascending); -1 for walls."""
    codes = np.full(max(shape.max_tile, 0) + 2, -1, dtype=np.int64)
    codes[0] = 0
    for i, t in enumerate(shape.tiles):
        codes[t] = i + 1
    return codes


def encode_board(shape: Shape, cells) -> np.ndarray:
    """Key of one arrangement (Python, for tests and the solver's driver)."""
    bits, per, nwords = key_layout(shape)
    codes = tile_codes(shape)
    key = [0] * nwords
    for j, c in enumerate(shape.free_cells):
        key[j // per] |= int(codes[cells[c]]) << ((j % per) * bits)
    return np.array(key, dtype=np.uint64)


@nb.njit(cache=True, nogil=True)
def find_key(keys, key):
    """Row of ``key`` in sorted ``keys`` (binary search), or -1."""
    lo, hi = 0, keys.shape[0]
    nwords = keys.shape[1]
    while lo < hi:
        mid = (lo + hi) // 2
        cmp = 0
        for w in range(nwords):
            if keys[mid, w] < key[w]:
                cmp = -1
                break
            if keys[mid, w] > key[w]:
                cmp = 1
                break
        if cmp == 0:
            return mid
        if cmp < 0:
            lo = mid + 1
        else:
            hi = mid
    return -1


load_cached(globals())  # cached kernels load without the compiler (pdb_builder/jitload.py)

"""What a table's bytes mean, in plain Python (no numba): readers that open a file
or search a few nodes import this alone; the kernels in :mod:`pdb_builder.ranking`
and :mod:`pdb_builder.packed` compile the same functions.

* Ranks (``ranking.py``): placement ``(p0, .., pk-1)`` of k tiles on n cells has
  rank ``sum_i d_i * W_i``, ``d_i = p_i - #{j < i : p_j < p_i}``, ``W_i = (n-1-i)!/(n-k)!``.
* Two-bit copies (``packed.py``): entry r's two bits are ``(value >> 1) & 3`` of its
  relaxed value, four entries a byte, entry r in bits ``2 (r & 3)`` of byte ``r >> 2``.
"""

from __future__ import annotations

import numpy as np

RANKING_NAME = "lex-kperm"
RANKING_VERSION = 1

ENCODING = "mod8-relative-v1"  # the two-bit copies' encoding
SLACK = 3  # after relax, every move changes a value by at most this
MAX_LOWERING = 6  # root_value needs the full value minus the relaxed one below 8
UNSEEN = 255


def num_placements(n: int, k: int) -> int:
    """n! / (n-k)!"""
    out = 1
    for i in range(k):
        out *= n - i
    return out


def weights(n: int, k: int) -> np.ndarray:
    """W_i = (n-1-i)!/(n-k)! for i < k, as int64."""
    w = np.ones(k, dtype=np.int64)
    for i in range(k - 2, -1, -1):
        w[i] = w[i + 1] * (n - 1 - i)
    return w


def rank_py(positions, n: int, w=None) -> int:
    """The rank of ``positions`` among k-permutations of n cells (``w``: their
    :func:`weights`, when the caller keeps them)."""
    k = len(positions)
    w = weights(n, k) if w is None else w
    r = 0
    for i, p in enumerate(positions):
        d = p - sum(1 for q in positions[:i] if q < p)
        r += d * int(w[i])
    return r


def unrank_py(r: int, n: int, k: int) -> tuple[int, ...]:
    w = weights(n, k)
    free = list(range(n))
    out = []
    for i in range(k):
        d = (r // int(w[i])) % (n - i)
        out.append(free.pop(d))
    return tuple(out)


def bits_at(packed_byte, r):
    """Entry ``r``'s two bits, from the byte that holds it."""
    return (packed_byte >> ((r & 3) << 1)) & 3


def decode(q, parent):
    """The child's value: the one of parent - 3, - 1, + 1, + 3 whose bits are ``q``."""
    lo = parent - SLACK
    return lo + 2 * ((q - (lo >> 1)) & 3)


def root_value(full, q):
    """The relaxed value from the full one (at most MAX_LOWERING above it, same parity)."""
    return full - 2 * (((full >> 1) - q) & 3)

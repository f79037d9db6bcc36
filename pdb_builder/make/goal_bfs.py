"""Building and certifying goal-side BFS tables (:mod:`pdb_builder.goal_table` keys
and finds their states).

The BFS is layered: the state graph is bipartite (every move moves the blank to
a cell of the other colour), so a layer's successors lie only in the layers
before and after it, and layer d+1 = successors(layer d) - layer (d-1).
"""

from __future__ import annotations

import logging
import time

import numba as nb
import numpy as np

from ..board import Shape
from ..goal_table import encode_board, find_key, key_layout
from ..jitload import load_cached
from ..packed import compact_neighbours

log = logging.getLogger("slidepdb.build")


@nb.njit(cache=True, nogil=True)
def _expand(keys, nfree, bits, per, nbr_c, ndeg_c, out):
    """Successor keys of every key (rows); unused rows of ``out`` stay all-ones."""
    nwords = keys.shape[1]
    mask = (np.uint64(1) << np.uint64(bits)) - np.uint64(1)
    m = 0
    state = np.empty(nfree, dtype=np.int64)
    for r in range(keys.shape[0]):
        blank = -1
        for j in range(nfree):
            v = (keys[r, j // per] >> np.uint64((j % per) * bits)) & mask
            state[j] = v
            if v == 0:
                blank = j
        for e in range(ndeg_c[blank]):
            d = nbr_c[blank, e]
            t = np.uint64(state[d])
            for wi in range(nwords):
                out[m, wi] = keys[r, wi]
            # tile t goes from d to blank; the blank (code 0) to d
            sb = np.uint64((blank % per) * bits)
            sd = np.uint64((d % per) * bits)
            out[m, blank // per] |= t << sb
            out[m, d // per] &= ~(mask << sd)
            m += 1
    return m


def _unique_rows(a: np.ndarray) -> np.ndarray:
    if a.shape[0] == 0:
        return a
    if a.shape[1] == 1:
        return np.unique(a[:, 0]).reshape(-1, 1)
    order = np.lexsort(a.T[::-1])
    a = a[order]
    keep = np.ones(a.shape[0], dtype=bool)
    keep[1:] = np.any(a[1:] != a[:-1], axis=1)
    return a[keep]


def _setdiff_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rows of sorted-unique ``a`` not in sorted-unique ``b``."""
    if b.shape[0] == 0 or a.shape[0] == 0:
        return a
    if a.shape[1] == 1:
        return a[~np.isin(a[:, 0], b[:, 0], assume_unique=True)]
    va = np.ascontiguousarray(a).view(np.dtype((np.void, 8 * a.shape[1]))).ravel()
    vb = np.ascontiguousarray(b).view(np.dtype((np.void, 8 * b.shape[1]))).ravel()
    return a[~np.isin(va, vb, assume_unique=True)]


def _sort_rows(keys: np.ndarray, dist: np.ndarray):
    if keys.shape[1] == 1:
        order = np.argsort(keys[:, 0], kind="stable")
    else:
        order = np.lexsort(keys.T[::-1])
    return np.ascontiguousarray(keys[order]), np.ascontiguousarray(dist[order])


def compute_goal_table(shape: Shape, depth: int, max_states: int | None = None, progress=None):
    """All states within ``depth`` moves of the goal: (keys sorted, dist uint8, layer sizes).

    Stops early (at a smaller depth) when the next layer would pass ``max_states``
    states in all; the depth actually reached is the length of the layer list - 1."""
    bits, per, nwords = key_layout(shape)
    nfree = len(shape.free_cells)
    nbr_c, ndeg_c = compact_neighbours(shape)
    t0 = time.perf_counter()
    prev = np.zeros((0, nwords), dtype=np.uint64)
    cur = encode_board(shape, shape.goal).reshape(1, nwords)
    layers = [cur]
    total = 1
    for d in range(depth):
        out = np.full((cur.shape[0] * 4, nwords), np.iinfo(np.uint64).max, dtype=np.uint64)
        m = _expand(cur, nfree, bits, per, nbr_c, ndeg_c, out)
        nxt = _setdiff_rows(_unique_rows(out[:m]), prev)
        if max_states is not None and total + nxt.shape[0] > max_states:
            break
        prev, cur = cur, nxt
        layers.append(cur)
        total += cur.shape[0]
        if progress is not None:
            progress(d + 1, cur.shape[0], total, time.perf_counter() - t0)
        if cur.shape[0] == 0:
            layers.pop()
            break
    keys = np.concatenate(layers)
    dist = np.concatenate([np.full(len(layer), i, dtype=np.uint8) for i, layer in enumerate(layers)])
    keys, dist = _sort_rows(keys, dist)
    return keys, dist, [len(layer) for layer in layers]


@nb.njit(cache=True, parallel=True, nogil=True)
def _check_rows(keys, dist, depth, nfree, bits, per, nbr_c, ndeg_c, bad):
    """Each chunk's first row that breaks the BFS certificate (see
    :func:`check_goal_table`), or -1, into ``bad[chunk]``."""
    rows = keys.shape[0]
    nwords = keys.shape[1]
    nchunks = bad.shape[0]
    chunk = (rows + nchunks - 1) // nchunks
    for ci in nb.prange(nchunks):
        bad[ci] = -1
        out = np.empty((4, nwords), dtype=np.uint64)
        for r in range(ci * chunk, min(rows, (ci + 1) * chunk)):
            if r + 1 < rows:  # strictly ascending: the binary search needs it
                order = 0
                for w in range(nwords):
                    if keys[r, w] != keys[r + 1, w]:
                        order = -1 if keys[r, w] < keys[r + 1, w] else 1
                        break
                if order >= 0:
                    bad[ci] = r
                    break
            d = np.int64(dist[r])
            parent = d == 0
            ok = True
            for e in range(_expand(keys[r : r + 1], nfree, bits, per, nbr_c, ndeg_c, out)):
                j = find_key(keys, out[e])
                if j < 0:
                    if d < depth:  # a state within depth is missing
                        ok = False
                        break
                    continue
                dd = np.int64(dist[j])
                if dd != d - 1 and dd != d + 1:
                    ok = False
                    break
                if dd == d - 1:
                    parent = True
            if not ok or not parent:
                bad[ci] = r
                break


def check_goal_table(shape: Shape, keys: np.ndarray, dist: np.ndarray, depth: int) -> int:
    """The first row of a goal table that breaks its certificate, or -1: keys strictly
    ascending; the goal's row at 0 and no other; every other row has a neighbour one
    move nearer; every neighbour of a row is in the table one move nearer or farther,
    and only rows at ``depth`` have neighbours outside it.  Then (by induction on the
    distance) every distance is exact and every state within ``depth`` is there.
    Parallel (numba threads)."""
    bits, per, nwords = key_layout(shape)
    free = shape.free_cells
    nbr_c, ndeg_c = compact_neighbours(shape)
    keys = np.ascontiguousarray(keys).reshape(-1, nwords)
    goal = find_key(keys, encode_board(shape, shape.goal))
    zeros = np.flatnonzero(np.asarray(dist) == 0)
    if goal < 0 or zeros.size != 1 or zeros[0] != goal:
        return int(zeros[0]) if zeros.size and zeros[0] != goal else max(int(goal), 0)
    bad = np.empty(max(1, min(4096, keys.shape[0])), dtype=np.int64)
    _check_rows(keys, np.asarray(dist), depth, len(free), bits, per, nbr_c, ndeg_c, bad)
    found = bad[bad >= 0]
    return int(found.min()) if found.size else -1


def estimate_bytes(states: int, nwords: int) -> int:
    """Peak bytes while building (keys of three layers, successors, sort copies)."""
    return states * (8 * nwords + 1) * 3


load_cached(globals())  # cached kernels load without the compiler (pdb_builder/jitload.py)

"""The breadth-first search over move strings behind :mod:`pdb_builder.automaton`,
compiled by numba (imported at the first automaton deeper than the undo-only one, so
a process that never needs one never loads numba for it).

For every free cell it walks strings in order of length, then of moves (L R U D), and
keeps every arrangement reached in a hash set: the arrangement itself (every cell its
own label) beside a Zobrist hash updated by each move, so two arrangements are one only
when all their cells agree, never by the hash alone.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .jitload import load_cached

NO_CHILD, FORBIDDEN = -1, -2  # a trie node's child: none, or a forbidden string


@nb.njit(cache=True)
def _grow1(a, size):
    if size <= a.shape[0]:
        return a
    out = np.empty(max(size, 2 * a.shape[0]), dtype=a.dtype)
    out[: a.shape[0]] = a
    return out


@nb.njit(cache=True)
def _grow2(a, size, fill):
    if size <= a.shape[0]:
        return a
    out = np.full((max(size, 2 * a.shape[0]), a.shape[1]), fill, dtype=a.dtype)
    out[: a.shape[0]] = a
    return out


@nb.njit(cache=True)
def _same_after_swap(arrs, j, s, b, c):
    """Whether arrangement ``j`` equals arrangement ``s`` with cells ``b`` and ``c`` swapped."""
    if arrs[j, b] != arrs[s, c] or arrs[j, c] != arrs[s, b]:
        return False
    for x in range(arrs.shape[1]):
        if x != b and x != c and arrs[j, x] != arrs[s, x]:
            return False
    return True


@nb.njit(cache=True)
def trie(tgt, free, depth, zob):
    """The canonical strings shorter than ``depth`` from every cell of ``free`` as a
    trie, nodes numbered parents first: ``child[u, move]`` (a node, :data:`NO_CHILD` or
    :data:`FORBIDDEN`), each node's cell and depth, ``roots[cell]`` and the number of
    forbidden strings.  ``tgt[cell, move]``: the blank's next cell, -1 off the board."""
    n = tgt.shape[0]
    child = np.full((1024, 4), NO_CHILD, dtype=np.int64)
    cell = np.empty(1024, dtype=np.int64)
    level = np.empty(1024, dtype=np.int64)
    roots = np.full(n, -1, dtype=np.int64)
    nodes = 0
    forbidden = 0
    arrs = np.empty((1024, n), dtype=np.uint8)
    hs = np.empty(1024, dtype=np.uint64)
    for p in free:
        # the arrangements reached from p: rows of arrs, found by hash in table (open addressing)
        size = 2048
        table = np.full(size, -1, dtype=np.int64)
        h0 = np.uint64(0)
        for x in range(n):
            arrs[0, x] = x
            h0 ^= zob[x, x]
        hs[0] = h0
        table[h0 & np.uint64(size - 1)] = 0
        states = 1
        roots[p] = nodes
        child = _grow2(child, nodes + 1, NO_CHILD)
        cell = _grow1(cell, nodes + 1)
        level = _grow1(level, nodes + 1)
        cell[nodes] = p
        level[nodes] = 0
        nodes += 1
        front_s = np.zeros(1, dtype=np.int64)  # each front string: its arrangement, node and blank
        front_u = np.full(1, roots[p], dtype=np.int64)
        front_b = np.full(1, p, dtype=np.int64)
        front = 1
        for k in range(depth):
            next_s = np.empty(max(4 * front, 1), dtype=np.int64)
            next_u = np.empty(max(4 * front, 1), dtype=np.int64)
            next_b = np.empty(max(4 * front, 1), dtype=np.int64)
            nxt = 0
            for i in range(front):
                s, u, b = front_s[i], front_u[i], front_b[i]
                for m in range(4):
                    c = tgt[b, m]
                    if c < 0:
                        continue
                    lb, lc = arrs[s, b], arrs[s, c]
                    h = hs[s] ^ zob[b, lb] ^ zob[c, lc] ^ zob[b, lc] ^ zob[c, lb]
                    mask = np.uint64(size - 1)
                    slot = np.int64(h & mask)
                    seen = False
                    while table[slot] >= 0:
                        j = table[slot]
                        if hs[j] == h and _same_after_swap(arrs, j, s, b, c):
                            seen = True
                            break
                        slot = (slot + 1) & (size - 1)
                    if seen:
                        child[u, m] = FORBIDDEN
                        forbidden += 1
                        continue
                    arrs = _grow2(arrs, states + 1, 0)
                    hs = _grow1(hs, states + 1)
                    arrs[states] = arrs[s]
                    arrs[states, b] = lc
                    arrs[states, c] = lb
                    hs[states] = h
                    table[slot] = states
                    states += 1
                    if 2 * states > size:  # keep the set at most half full
                        size *= 2
                        table = np.full(size, -1, dtype=np.int64)
                        for j in range(states):
                            t = np.int64(hs[j] & np.uint64(size - 1))
                            while table[t] >= 0:
                                t = (t + 1) & (size - 1)
                            table[t] = j
                    if k + 1 < depth:
                        child = _grow2(child, nodes + 1, NO_CHILD)
                        cell = _grow1(cell, nodes + 1)
                        level = _grow1(level, nodes + 1)
                        child[u, m] = nodes
                        cell[nodes] = c
                        level[nodes] = k + 1
                        next_s[nxt] = states - 1
                        next_u[nxt] = nodes
                        next_b[nxt] = c
                        nxt += 1
                        nodes += 1
            front_s, front_u, front_b, front = next_s, next_u, next_b, nxt
    return child[:nodes], cell[:nodes], level[:nodes], roots, forbidden


load_cached(globals())  # cached kernels load without the compiler (pdb_builder/jitload.py)

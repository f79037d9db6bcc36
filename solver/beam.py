"""Beam search: a quick, suboptimal answer where IDA* runs out of budget.

Breadth-first by depth, keeping the ``width`` children with the lowest estimate
(the same admissible tables as IDA*: Manhattan along free cells and every PDB
group, their max) and never a state seen before (Zobrist hashes in an
open-addressing set).  Beam search with large widths is how DevQuiz contestants
answered their hardest boards; it proves nothing, and its answers are simulated
like every other.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from pdb_builder.board import Board

from .budget import Budget
from .ida import Searcher, _init_groups

_EMPTY = np.uint64(0)


@nb.njit(cache=True, nogil=True)
def _insert(table, mask, key):
    """Add ``key`` (never 0) to the set; False when it was there already."""
    i = key & mask
    while True:
        v = table[i]
        if v == _EMPTY:
            table[i] = key
            return True
        if v == key:
            return False
        i = (i + np.uint64(1)) & mask


@nb.njit(cache=True, nogil=True)
def _beam(cur, cur_blank, cur_hash, kids, kid_blank, kid_hash, kid_h, kid_par, kid_k, seen, counts,
          nbr, ndeg, md, zob, depth0, depth1,
          lk_full, lk_k, lk_slots, lk_fixed, lk_cellmap, lk_w, lk_group, nlookups, ngroups, par, mvk):
    """Beam levels ``depth0`` to ``depth1 - 1`` from the beam in ``cur`` (its size, the
    stored-state count and the children generated in ``counts``, all updated).  Returns (depth, slot) of the
    goal in the beam's history, (-1, -1) when the beam died out or the seen set is
    full, (-2, -2) when the levels ran out first."""
    n = cur.shape[1]
    ntiles = md.shape[0]
    width = cur.shape[0]
    mask = np.uint64(seen.shape[0] - 1)
    limit = seen.shape[0] * 7 // 10
    pos = np.zeros(ntiles, dtype=np.int64)
    lk_val = np.zeros(max(nlookups, 1), dtype=np.int64)
    group_sum = np.zeros(max(ngroups, 1), dtype=np.int64)
    place = np.zeros(16, dtype=np.int64)
    m, stored = counts[0], counts[1]
    for depth in range(depth0, depth1):
        nk = 0
        for i in range(m):
            b = cur_blank[i]
            for k in range(ndeg[b]):
                c = nbr[b, k]
                t = cur[i, c]
                hk = cur_hash[i] ^ zob[t, c] ^ zob[t, b]
                if not _insert(seen, mask, hk):
                    continue
                stored += 1
                kids[nk, :] = cur[i, :]
                kids[nk, b] = t
                kids[nk, c] = 0
                kid_blank[nk] = c
                kid_hash[nk] = hk
                kid_par[nk] = i
                kid_k[nk] = k
                est = 0
                for cc in range(n):
                    tt = kids[nk, cc]
                    if tt > 0:
                        est += md[tt, cc]
                        pos[tt] = cc
                if est == 0:  # every tile home: the goal
                    par[depth, 0] = i
                    mvk[depth, 0] = k
                    return depth, 0
                if nlookups > 0:
                    _init_groups(lk_full, pos, lk_k, lk_slots, lk_fixed, lk_cellmap, lk_w, lk_group, nlookups,
                                 lk_val, group_sum, place)
                    for g in range(ngroups):
                        if group_sum[g] > est:
                            est = group_sum[g]
                kid_h[nk] = est
                nk += 1
        counts[2] += nk
        if nk == 0 or stored > limit:
            return -1, -1
        counts[1] = stored
        order = np.argsort(kid_h[:nk], kind="mergesort")
        m = min(nk, width)
        for j in range(m):
            q = order[j]
            cur[j, :] = kids[q, :]
            cur_blank[j] = kid_blank[q]
            cur_hash[j] = kid_hash[q]
            par[depth, j] = kid_par[q]
            mvk[depth, j] = kid_k[q]
        counts[0] = m
    return -2, -2


LEVELS_PER_CALL = 8  # beam levels between checks of the clock


def beam_search(searcher: Searcher, board: Board, width: int = 4096, max_depth: int = 1000,
                seed: int = 0, time_limit: float | None = None, budget: Budget | None = None) -> str | None:
    """Moves from ``board`` to the goal found by a beam of ``width`` states on the
    searcher's heuristic, or None (beam died out, depth, memory, time or ``budget``
    bound reached; both are read every :data:`LEVELS_PER_CALL` levels).  The children
    generated are spent from ``budget``."""
    budget = (budget or Budget()).within(time_limit)
    shape = searcher.shape
    if board.cells == shape.goal:
        return ""
    n = shape.n
    cells = np.array([max(t, 0) for t in board.cells], dtype=np.int8)  # walls never move: read as empty
    ntiles = searcher.h.md.shape[0]
    zob = np.random.default_rng(seed).integers(1, 2**63, size=(ntiles, n), dtype=np.uint64)
    zob[0, :] = 0
    hash_bits = int(min(25, max(16, np.ceil(np.log2(width * 4 * max_depth / 0.7)))))
    par = np.zeros((max_depth, width), dtype=np.int32)
    mvk = np.zeros((max_depth, width), dtype=np.int8)
    cur = np.empty((width, n), dtype=np.int8)
    cur_blank = np.empty(width, dtype=np.int64)
    cur_hash = np.empty(width, dtype=np.uint64)
    kids = np.empty((4 * width, n), dtype=np.int8)
    kid_blank = np.empty(4 * width, dtype=np.int64)
    kid_hash = np.empty(4 * width, dtype=np.uint64)
    kid_h = np.empty(4 * width, dtype=np.int64)
    kid_par = np.empty(4 * width, dtype=np.int64)
    kid_k = np.empty(4 * width, dtype=np.int64)
    seen = np.zeros(1 << hash_bits, dtype=np.uint64)
    h = np.uint64(0x9E3779B97F4A7C15)
    for c in range(n):
        if cells[c] > 0:
            h ^= zob[cells[c], c]
    cur[0, :] = cells
    cur_blank[0] = board.blank
    cur_hash[0] = h
    _insert(seen, np.uint64(seen.shape[0] - 1), h)
    counts = np.array([1, 1, 0], dtype=np.int64)  # beam size, states stored, children generated
    (lk_full, lk_k, lk_slots, lk_fixed, lk_cellmap, lk_w, lk_group) = (
        searcher.lk_full, searcher.lk_k, searcher.lk_slots, searcher.lk_fixed, searcher.lk_cellmap, searcher.lk_w,
        searcher.lk_group)
    depth = slot = -2
    d0 = 0
    while d0 < max_depth:
        if budget.out():
            return None
        # a level generates at most 4 children a state: no more levels a call than the nodes left pay for
        levels = LEVELS_PER_CALL if budget.nodes() is None else min(LEVELS_PER_CALL, budget.nodes() // (4 * width))
        d1 = min(d0 + max(levels, 1), max_depth)
        before = counts[2]
        depth, slot = _beam(cur, cur_blank, cur_hash, kids, kid_blank, kid_hash, kid_h, kid_par, kid_k, seen,
                            counts, searcher.nbr, searcher.ndeg, searcher.h.md, zob, d0, d1, lk_full, lk_k, lk_slots, lk_fixed, lk_cellmap,
                            lk_w, lk_group, searcher.nlookups, searcher.ngroups, par, mvk)
        budget.spend(counts[2] - before)
        if depth != -2:
            break
        d0 = d1
    if depth < 0:
        return None
    ks = []
    for d in range(depth, -1, -1):
        ks.append(int(mvk[d, slot]))
        slot = int(par[d, slot])
    moves, b = [], board.blank
    for k in reversed(ks):
        moves.append(str(searcher.letters[b, k]))
        b = int(searcher.nbr[b, k])
    return "".join(moves)

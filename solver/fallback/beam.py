"""Beam search: a quick, suboptimal answer where IDA* runs out of time or nodes.

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
from pdb_builder.jitload import load_cached
from pdb_builder.ranking import rank_kernel

from ..search.kernel import init_root, load_byte, region_value
from ..search.limits import Limits
from ..search.searcher import Searcher

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
def _lowest(h, n, m, order):
    """``order[:m]`` = the indices of the ``m`` lowest of ``h[:n]``, lowest first, ties in
    index order (a stable counting sort: estimates are small integers)."""
    top = 0
    for j in range(n):
        if h[j] > top:
            top = h[j]
    below = np.zeros(top + 2, dtype=np.int64)
    for j in range(n):
        below[h[j] + 1] += 1
    for v in range(1, top + 2):
        below[v] += below[v - 1]  # below[v] = how many estimates are under v
    for j in range(n):
        r = below[h[j]]
        below[h[j]] = r + 1
        if r < m:
            order[r] = j


@nb.njit(cache=True, nogil=True)
def _beam(beam, kids, seen, counts, moves, lookups, zero, history, depth0, depth1):
    """Beam levels ``depth0`` to ``depth1 - 1`` from the beam (``beam``: its states,
    blanks, hashes, Manhattan sums, tile cells, lookup values and group sums; its size,
    the stored-state count and the children generated in ``counts``, all updated).
    ``kids``: the same arrays for the children, with their estimates, parents and
    moves; ``moves``: (neighbours, degrees, Manhattan table, Zobrist keys);
    ``lookups``: the searcher's one-byte tables (:class:`~solver.search.searcher.Searcher`'s
    ``lk_*`` arrays, ``tile_lk``, their counts); ``zero``: their zero-aware entries
    (:class:`~solver.search.heuristic.ZeroArrays`, read as the IDA* kernel reads them);
    ``history``: each level's parents and moves.  A child recomputes only the lookups
    holding the tile that moved (only such a move changes the blank's region under them).
    Returns (depth, slot) of the goal in the beam's history, (-1, -1) when the beam died
    out or the seen set is full, (-2, -2) when the levels ran out first."""
    cur, cur_blank, cur_hash, cur_md, cur_pos, cur_lk, cur_gs = beam
    kids, kid_blank, kid_hash, kid_md, kid_pos, kid_lk, kid_gs, kid_h, kid_par, kid_k = kids
    nbr, ndeg, md, zob = moves
    lk_full, lk_k, lk_slots, lk_fixed, lk_cellmap, lk_w, tile_lk, nlookups, ngroups = lookups
    par, mvk = history
    width = cur.shape[0]
    mask = np.uint64(seen.shape[0] - 1)
    limit = seen.shape[0] * 7 // 10
    place = np.zeros(16, dtype=np.int64)
    order = np.empty(width, dtype=np.int64)
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
                est = cur_md[i] - md[t, c] + md[t, b]
                kid_md[nk] = est
                if est == 0:  # every tile home: the goal
                    par[depth, 0] = i
                    mvk[depth, 0] = k
                    return depth, 0
                if nlookups > 0:
                    kid_pos[nk, :] = cur_pos[i, :]
                    kid_pos[nk, t] = b
                    kid_lk[nk, :] = cur_lk[i, :]
                    kid_gs[nk, :] = cur_gs[i, :]
                    for g in range(ngroups):
                        j = tile_lk[t, g]
                        if j >= 0:
                            for s in range(lk_k[j]):
                                f = lk_fixed[j, s]
                                if f >= 0:
                                    place[s] = f
                                else:
                                    place[s] = lk_cellmap[j, kid_pos[nk, lk_slots[j, s]]]
                            r = rank_kernel(place, lk_k[j], lk_w[j])
                            v = load_byte(lk_full[j] + r)
                            code = load_byte(zero[0][j] + r) if zero[1][j] > 0 else 0
                            if code != 0:  # zero-aware: the cost of the blank's region (it is on c now)
                                used = np.uint64(0)
                                for s in range(lk_k[j]):
                                    used |= np.uint64(1) << np.uint64(place[s])
                                v = region_value(zero, j, code, used, lk_cellmap[j, c], v)
                            kid_gs[nk, g] += v - kid_lk[nk, j]
                            kid_lk[nk, j] = v
                        if kid_gs[nk, g] > est:
                            est = kid_gs[nk, g]
                kid_h[nk] = est
                nk += 1
        counts[2] += nk
        if nk == 0 or stored > limit:
            return -1, -1
        counts[1] = stored
        m = min(nk, width)
        _lowest(kid_h, nk, m, order)
        for j in range(m):
            q = order[j]
            cur[j, :] = kids[q, :]
            cur_blank[j] = kid_blank[q]
            cur_hash[j] = kid_hash[q]
            cur_md[j] = kid_md[q]
            if nlookups > 0:
                cur_pos[j, :] = kid_pos[q, :]
                cur_lk[j, :] = kid_lk[q, :]
                cur_gs[j, :] = kid_gs[q, :]
            par[depth, j] = kid_par[q]
            mvk[depth, j] = kid_k[q]
        counts[0] = m
    return -2, -2


LEVELS_PER_CALL = 8  # beam levels between checks of the clock


class Beam:
    """One beam search, run a few levels at a time (:meth:`advance`), so that several
    can take turns: ``moves`` is the answer once ``done`` (None when it failed)."""

    def __init__(self, searcher: Searcher, board: Board, width: int = 4096, max_depth: int = 1000, seed: int = 0):
        self.searcher, self.board, self.width, self.max_depth = searcher, board, width, max_depth
        searcher.reads.everything()  # a beam reads the one-byte tables at every node
        self.moves: str | None = None
        self.done = board.cells == searcher.shape.goal
        if self.done:
            self.moves = ""
            return
        shape = searcher.shape
        n = shape.n
        cells = np.array([max(t, 0) for t in board.cells], dtype=np.int8)  # walls never move: read as empty
        ntiles = searcher.h.md.shape[0]
        self.zob = zob = np.random.default_rng(seed).integers(1, 2**63, size=(ntiles, n), dtype=np.uint64)
        zob[0, :] = 0
        hash_bits = int(min(25, max(16, np.ceil(np.log2(width * 4 * max_depth / 0.7)))))
        self.par = np.zeros((max_depth, width), dtype=np.int32)
        self.mvk = np.zeros((max_depth, width), dtype=np.int8)
        self.cur = np.empty((width, n), dtype=np.int8)
        self.cur_blank = np.empty(width, dtype=np.int64)
        self.cur_hash = np.empty(width, dtype=np.uint64)
        self.kids = np.empty((4 * width, n), dtype=np.int8)
        self.kid_blank = np.empty(4 * width, dtype=np.int64)
        self.kid_hash = np.empty(4 * width, dtype=np.uint64)
        self.kid_h = np.empty(4 * width, dtype=np.int64)
        self.kid_par = np.empty(4 * width, dtype=np.int64)
        self.kid_k = np.empty(4 * width, dtype=np.int64)
        self.seen = np.zeros(1 << hash_bits, dtype=np.uint64)
        # what each state carries for its children's estimates (lookups only where there are any)
        nl, ng = max(searcher.nlookups, 1), max(searcher.ngroups, 1)
        rows = width if searcher.nlookups else 1
        self.cur_md, self.kid_md = np.empty(width, dtype=np.int64), np.empty(4 * width, dtype=np.int64)
        self.cur_pos, self.kid_pos = (
            np.empty((rows, ntiles), dtype=np.int8),
            np.empty((4 * rows, ntiles), dtype=np.int8),
        )
        self.cur_lk, self.kid_lk = np.empty((rows, nl), dtype=np.int64), np.empty((4 * rows, nl), dtype=np.int64)
        self.cur_gs, self.kid_gs = np.empty((rows, ng), dtype=np.int64), np.empty((4 * rows, ng), dtype=np.int64)
        pos = np.zeros(ntiles, dtype=np.int64)
        for c in range(n):
            if cells[c] > 0:
                pos[cells[c]] = c
        self.cur_md[0] = sum(int(searcher.h.md[t, c]) for c, t in enumerate(cells) if t > 0)
        self.cur_pos[0, :] = pos
        lk_rank, lk_used = np.zeros(nl, dtype=np.int64), np.zeros(nl, dtype=np.uint64)
        init_root(
            searcher.lk_full,
            pos,
            searcher.lk_k,
            searcher.lk_slots,
            searcher.lk_fixed,
            searcher.lk_cellmap,
            searcher.lk_w,
            searcher.lk_group,
            searcher.nlookups,
            lk_rank,
            lk_used,
            np.zeros((nl, 64), dtype=np.int64),
            self.cur_lk[0],
            self.cur_gs[0],
            np.zeros(16, dtype=np.int64),
        )
        searcher.zero.at_root(searcher.h.lookups, board.blank, lk_rank, lk_used, self.cur_lk[0], self.cur_gs[0])
        h = np.uint64(0x9E3779B97F4A7C15)
        for c in range(n):
            if cells[c] > 0:
                h ^= zob[cells[c], c]
        self.cur[0, :] = cells
        self.cur_blank[0] = board.blank
        self.cur_hash[0] = h
        _insert(self.seen, np.uint64(self.seen.shape[0] - 1), h)
        self.counts = np.array([1, 1, 0], dtype=np.int64)  # beam size, states stored, children generated
        self.depth = 0  # levels done

    def advance(self, limits: Limits) -> bool:
        """Up to :data:`LEVELS_PER_CALL` more levels, the children generated spent from
        ``limits``; whether the search is done (it fails once ``limits`` is out)."""
        if self.done:
            return True
        if limits.out() or self.depth >= self.max_depth:
            return self._finish(-1, -1)
        se = self.searcher
        width = self.width
        # a level generates at most 4 children a state: no more levels a call than the nodes left pay for
        levels = LEVELS_PER_CALL if limits.nodes() is None else min(LEVELS_PER_CALL, limits.nodes() // (4 * width))
        d1 = min(self.depth + max(levels, 1), self.max_depth)
        before = self.counts[2]
        depth, slot = _beam(
            (self.cur, self.cur_blank, self.cur_hash, self.cur_md, self.cur_pos, self.cur_lk, self.cur_gs),
            (
                self.kids,
                self.kid_blank,
                self.kid_hash,
                self.kid_md,
                self.kid_pos,
                self.kid_lk,
                self.kid_gs,
                self.kid_h,
                self.kid_par,
                self.kid_k,
            ),
            self.seen,
            self.counts,
            (se.nbr, se.ndeg, se.h.md, self.zob),
            (
                se.lk_full,
                se.lk_k,
                se.lk_slots,
                se.lk_fixed,
                se.lk_cellmap,
                se.lk_w,
                se.tile_lk,
                se.nlookups,
                se.ngroups,
            ),
            se.zero.kernel,
            (self.par, self.mvk),
            self.depth,
            d1,
        )
        limits.spend(self.counts[2] - before)
        self.depth = d1
        if depth == -2:
            return False
        return self._finish(depth, slot)

    def _finish(self, depth: int, slot: int) -> bool:
        self.done = True
        if depth >= 0:
            ks = []
            for d in range(depth, -1, -1):
                ks.append(int(self.mvk[d, slot]))
                slot = int(self.par[d, slot])
            moves, b = [], self.board.blank
            for k in reversed(ks):
                moves.append(str(self.searcher.letters[b, k]))
                b = int(self.searcher.nbr[b, k])
            self.moves = "".join(moves)
        self.__dict__.update(seen=None, kids=None, par=None, mvk=None)  # the memory goes back at once
        return True


def beam_search(
    searcher: Searcher,
    board: Board,
    width: int = 4096,
    max_depth: int = 1000,
    seed: int = 0,
    time_limit: float | None = None,
    limits: Limits | None = None,
) -> str | None:
    """Moves from ``board`` to the goal found by a beam of ``width`` states on the
    searcher's heuristic, or None (beam died out, depth, memory, time or ``limits``
    bound reached; both are read every :data:`LEVELS_PER_CALL` levels).  The children
    generated are spent from ``limits``."""
    limits = (limits or Limits()).within(time_limit)
    beam = Beam(searcher, board, width, max_depth, seed)
    while not beam.advance(limits):
        pass
    return beam.moves


load_cached(globals())  # cached kernels load without the compiler (pdb_builder/jitload.py)

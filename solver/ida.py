"""IDA* (Korf 1985) with an explicit stack, incremental heuristics and node counts.

``ida_star(board, heuristic)`` returns a :class:`SearchResult`.  The kernel works
in slices of at most ``SLICE_NODES`` generated nodes and keeps its whole state in
arrays, so the Python driver checks the time limit between slices and a search
can stop at any moment without losing what it knows: the last completed
threshold is a proven lower bound.

``optimal`` is claimed only when the threshold iteration that found the answer
began at the threshold every earlier completed iteration proved, with an
admissible heuristic: the first solution at threshold f is optimal.

The kernel is not recursive (a cached recursive kernel segfaults when reloaded:
numba issue 6061), is compiled once per argument type set and cached on disk.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from pdb_builder.board import MOVES, Board
from pdb_builder.goal_table import find_key
from pdb_builder.packed import bits_at, decode, root_value
from pdb_builder.ranking import rank_delta, rank_kernel
from pdb_builder.solvability import decide

from .heuristic import MAX_LOOKUP_TILES, Heuristic, board_arrays, goal_arrays, kernel_arrays, manhattan_heuristic

MAX_DEPTH = 1000  # deepest path the kernel keeps; longer thresholds stop as a limit
SLICE_NODES = 2_000_000  # nodes per kernel call between time checks
INF = 1 << 30

# kernel status codes
_FOUND = 1
_ITERATION_DONE = 2
_BUDGET = 3

# indices into the kernel's int64 state vector
_S_DEPTH, _S_THRESH, _S_NEXT, _S_NODES, _S_MD, _S_LC = range(6)


@dataclass
class SearchResult:
    moves: str | None
    length: int | None
    optimal: bool
    lower_bound: int
    nodes: int
    seconds: float
    status: str  # "solved", "limit" or "unsolvable" (from :func:`ida_star` only)
    heuristic: list[str] = field(default_factory=list)
    h0: int = 0


@nb.njit(cache=True, inline="always")
def _line_conflicts(cells, keytab, start, step, length, buf):
    m = 0
    for j in range(length):
        c = start + j * step
        t = cells[c]
        if t > 0:
            key = keytab[t, c]
            if key >= 0:
                buf[m] = key
                m += 1
    if m < 2:
        return 0
    # longest increasing run (subsequence) of goal keys: O(m^2), m <= line length
    best = 0
    for i in range(m):
        v = 1
        for j in range(i):
            if buf[j] < buf[i] and buf[m + j] + 1 > v:
                v = buf[m + j] + 1
        buf[m + i] = v
        if v > best:
            best = v
    return 2 * (m - best)


@nb.njit(cache=True, nogil=True)
def _lc_total(cells, rowkey, colkey, width, height, lc_lines, buf):
    total = 0
    for r in range(height):
        v = _line_conflicts(cells, rowkey, r * width, 1, width, buf)
        lc_lines[r] = v
        total += v
    for c in range(width):
        v = _line_conflicts(cells, colkey, c, width, height, buf)
        lc_lines[height + c] = v
        total += v
    return total


@nb.njit(cache=True, inline="always")
def _placement(i, pos, lk_k, lk_slots, lk_fixed, lk_cellmap, place):
    """Lookup ``i``'s table cell per slot into ``place[:k]``; returns ``k``."""
    k = lk_k[i]
    for j in range(k):
        f = lk_fixed[i, j]
        if f >= 0:
            place[j] = f
        else:
            place[j] = lk_cellmap[i, pos[lk_slots[i, j]]]
    return k


@nb.njit(cache=True, nogil=True)
def _init_ranks(pos, lk_k, lk_slots, lk_fixed, lk_cellmap, lk_w, nlookups, lk_rank, lk_used, lk_slotof, place):
    """Each lookup's rank, mask of taken table cells and slot per taken cell: the
    state the kernel keeps up to date move by move (``rank_delta``)."""
    for i in range(nlookups):
        k = _placement(i, pos, lk_k, lk_slots, lk_fixed, lk_cellmap, place)
        lk_used[i] = 0
        for j in range(k):
            lk_used[i] |= np.uint64(1) << np.uint64(place[j])
            lk_slotof[i, place[j]] = j
        lk_rank[i] = rank_kernel(place, k, lk_w[i])


@nb.njit(cache=True, inline="always")
def _goal_distance(cells, gt_keys, gt_dist, gt_bits, gt_per, gt_codes, gt_cells, key):
    """Exact distance of the arrangement from the goal table, or -1 when absent."""
    for w in range(key.shape[0]):
        key[w] = 0
    for j in range(gt_cells.shape[0]):
        t = cells[gt_cells[j]]
        key[j // gt_per] |= np.uint64(gt_codes[t]) << np.uint64((j % gt_per) * gt_bits)
    r = find_key(gt_keys, key)
    return -1 if r < 0 else np.int64(gt_dist[r])


@nb.njit(cache=True, inline="always")
def _parity_up(h, parity):
    """``h`` rounded up to ``parity``: every solution length has the parity of the
    blank's distance from its goal cell (the grid is bipartite), so this stays admissible."""
    return h + ((h ^ parity) & 1)


@intrinsic
def _load_byte(typingctx, addr):
    """The unsigned byte at address ``addr`` (an int64 taken from a live array's
    ``ctypes.data`` plus an index inside it).  Reading the tables through their base
    addresses spares the kernel a switch over a tuple of arrays on every read."""
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        ptr = builder.inttoptr(args[0], ir.PointerType(ir.IntType(8)))
        return builder.zext(builder.load(ptr), ir.IntType(64))

    return sig, codegen


@nb.njit(cache=True, nogil=True)
def _init_groups(
    lk_full, pos, lk_k, lk_slots, lk_fixed, lk_cellmap, lk_w, lk_group, nlookups, lk_val, group_sum, place
):
    """Each lookup's value (from its one-byte table, at base address ``lk_full[i]``)
    into ``lk_val`` and each group's sum into ``group_sum``."""
    group_sum[:] = 0
    for i in range(nlookups):
        k = _placement(i, pos, lk_k, lk_slots, lk_fixed, lk_cellmap, place)
        v = _load_byte(lk_full[i] + rank_kernel(place, k, lk_w[i]))
        lk_val[i] = v
        group_sum[lk_group[i]] += v


@nb.njit(cache=True, inline="always")
def _child_values(
    cells,
    b,
    d,
    ndeg,
    nbr,
    skip,
    lk_base,
    lk_pk,
    lk_cellmap,
    lk_w,
    tile_lk,
    tile_slot,
    ngroups,
    lk_rank,
    lk_used,
    lk_slotof,
    lk_val,
    stk_ci,
    stk_cv,
):
    """Table index and value of every child of the node at depth ``d`` (blank on
    ``b``) into ``stk_ci[d, k, g]`` and ``stk_cv[d, k, g]``: the moved tile's lookup
    in each group, its rank updated for the one slot that moves (``rank_delta``).
    No value decides anything here, so the reads of all children are independent
    and the memory system overlaps them.  A packed lookup (``lk_pk[i]``) reads the
    byte holding the child's two bits and decodes them against ``lk_val[i]``."""
    for k in range(ndeg[b]):
        c = nbr[b, k]
        if c == skip:
            continue
        t = cells[c]
        for g in range(ngroups):
            i = tile_lk[t, g]
            if i >= 0:
                r = lk_rank[i] + rank_delta(
                    tile_slot[t, g], lk_cellmap[i, c], lk_cellmap[i, b], lk_used[i], lk_slotof[i], lk_w[i]
                )
                stk_ci[d, k, g] = r
                if lk_pk[i]:  # two bits an entry: the value relative to this node's (packed.py)
                    stk_cv[d, k, g] = decode(bits_at(_load_byte(lk_base[i] + (r >> 2)), r), lk_val[i])
                else:
                    stk_cv[d, k, g] = _load_byte(lk_base[i] + r)


@nb.njit(cache=True, inline="always")
def _lc_delta(cells, b, c, rowkey, colkey, width, height, lc_lines, buf):
    """Lines whose conflicts change when the blank on ``b`` takes the tile from ``c``
    (the board already shows the move): (line 1, its new value, line 2, its new value)."""
    if c // width == b // width:  # horizontal move: the columns of b and c change
        l1 = height + b % width
        l2 = height + c % width
        v1 = _line_conflicts(cells, colkey, b % width, width, height, buf)
        v2 = _line_conflicts(cells, colkey, c % width, width, height, buf)
    else:  # vertical move: the rows of b and c change
        l1 = b // width
        l2 = c // width
        v1 = _line_conflicts(cells, rowkey, l1 * width, 1, width, buf)
        v2 = _line_conflicts(cells, rowkey, l2 * width, 1, width, buf)
    return l1, v1, l2, v2


@nb.njit(cache=True, inline="always")
def _apply(
    cells,
    pos,
    b,
    c,
    rowkey,
    colkey,
    width,
    height,
    use_lc,
    lk_cellmap,
    tile_lk,
    tile_slot,
    ngroups,
    lk_val,
    group_sum,
    lc_lines,
    stk_old,
    d1,
    lk_rank,
    lk_used,
    lk_slotof,
    buf,
    idx,
    vals,
):
    """Move the tile on ``c`` into the blank on ``b``, with the table indices
    ``idx[g]`` and values ``vals[g]`` already read for that child; what changed is
    kept in ``stk_old[d1]``.  Returns the linear-conflict sum's change."""
    t = cells[c]
    cells[b] = t
    cells[c] = 0
    pos[t] = b
    pos[0] = c
    dlc = 0
    if use_lc:
        l1, v1, l2, v2 = _lc_delta(cells, b, c, rowkey, colkey, width, height, lc_lines, buf)
        stk_old[d1, 0] = l1
        stk_old[d1, 1] = lc_lines[l1]
        stk_old[d1, 2] = l2
        stk_old[d1, 3] = lc_lines[l2]
        dlc = v1 + v2 - lc_lines[l1] - lc_lines[l2]
        lc_lines[l1] = v1
        lc_lines[l2] = v2
    for g in range(ngroups):
        i = tile_lk[t, g]
        if i >= 0:
            lk_used[i] ^= (np.uint64(1) << np.uint64(lk_cellmap[i, b])) | (np.uint64(1) << np.uint64(lk_cellmap[i, c]))
            lk_slotof[i, lk_cellmap[i, b]] = tile_slot[t, g]
            stk_old[d1, 4 + ngroups + g] = lk_rank[i]
            lk_rank[i] = idx[g]
            stk_old[d1, 4 + g] = lk_val[i]
            group_sum[g] += vals[g] - lk_val[i]
            lk_val[i] = vals[g]
    return dlc


@nb.njit(cache=True, inline="always")
def _retract(
    cells,
    pos,
    b,
    c,
    lk_cellmap,
    tile_lk,
    tile_slot,
    ngroups,
    lk_val,
    group_sum,
    lc_lines,
    stk_old,
    d1,
    use_lc,
    lk_rank,
    lk_used,
    lk_slotof,
):
    """Reverse :func:`_apply`: the tile on ``b`` goes back to ``c``."""
    t = cells[b]
    cells[c] = t
    cells[b] = 0
    pos[t] = c
    pos[0] = b
    if use_lc:
        lc_lines[stk_old[d1, 0]] = stk_old[d1, 1]
        lc_lines[stk_old[d1, 2]] = stk_old[d1, 3]
    for g in range(ngroups):
        i = tile_lk[t, g]
        if i >= 0:
            lk_used[i] ^= (np.uint64(1) << np.uint64(lk_cellmap[i, b])) | (np.uint64(1) << np.uint64(lk_cellmap[i, c]))
            lk_slotof[i, lk_cellmap[i, c]] = tile_slot[t, g]
            lk_rank[i] = stk_old[d1, 4 + ngroups + g]
            old = stk_old[d1, 4 + g]
            group_sum[g] += old - lk_val[i]
            lk_val[i] = old


@nb.njit(cache=True, _nrt=False)  # holds the GIL: with nogil Korf's 100 ran slower
def _search(root, tables, stack, state, budget, bpmx, goal, weight):
    """Run IDA* from the state vector for at most ``budget`` generated nodes.

    Its arrays come in four groups: ``root`` (the board and the incremental state of
    its estimate, :class:`_Root`), ``tables`` (:meth:`Searcher._tables`: the shape's
    neighbours and every lookup's arrays), ``stack`` (one row per depth) and ``goal``
    (the goal table, :func:`~solver.heuristic.goal_arrays`).

    At its first visit (``stk_it[d] == -1``) a node generates all its children
    (each counted once): first every child's table values (:func:`_child_values`,
    reads that overlap in memory), then each child's estimate, the max of
    Manhattan (+ linear conflicts) and every group's sum.  It prunes those over the
    threshold and keeps the rest in ``stk_ck[d]`` sorted by estimate, so the final
    iteration meets the goal early; then it descends into them one by one, reusing
    the values read (``stk_cv``, ``stk_kh``).  ``stk_h[d]`` is the node's estimate,
    raised by BPMX: neighbours differ by one move, so a child's h - 1 bounds the
    parent too (Felner et al. 2005), and a raise that prunes the parent skips its
    remaining children.

    With a goal table of depth D (``gt_depth >= 0``), a child whose remaining
    budget is at most D is settled by one lookup: present, its distance is exact
    (and a solution if it fits the threshold: the rest of the path is read off the
    table by greedy descent); absent, it is at least D + 1 away."""
    cells, pos, lk_val, group_sum, lc_lines, lk_rank, lk_used, lk_slotof, buf = root
    (
        nbr,
        ndeg,
        md,
        rowkey,
        colkey,
        width,
        height,
        use_lc,
        lk_base,
        lk_pk,
        lk_cellmap,
        lk_w,
        tile_lk,
        tile_slot,
        ngroups,
        bpar,
    ) = tables
    stk_blank, stk_it, stk_n, stk_ch, stk_ck, stk_h, stk_kh, stk_ci, stk_cv, stk_old, path = stack
    gt_keys, gt_dist, gt_depth, gt_bits, gt_per, gt_codes, gt_cells, gt_key = goal
    d = state[_S_DEPTH]
    thresh = state[_S_THRESH]
    nxt = state[_S_NEXT]
    nodes = state[_S_NODES]
    mdsum = state[_S_MD]
    lcsum = state[_S_LC]
    stop = nodes + budget
    status = _ITERATION_DONE
    while True:
        b = stk_blank[d]
        goal_k = -1
        if stk_it[d] < 0:
            if nodes >= stop:
                status = _BUDGET
                break
            skip = stk_blank[d - 1] if d > 0 else -1  # never undo the previous move
            _child_values(
                cells,
                b,
                d,
                ndeg,
                nbr,
                skip,
                lk_base,
                lk_pk,
                lk_cellmap,
                lk_w,
                tile_lk,
                tile_slot,
                ngroups,
                lk_rank,
                lk_used,
                lk_slotof,
                lk_val,
                stk_ci,
                stk_cv,
            )
            cnt = 0
            goal_e = 0
            for k in range(ndeg[b]):
                c = nbr[b, k]
                if c == skip:
                    continue
                nodes += 1
                t = cells[c]
                nmd = mdsum + md[t, b] - md[t, c]
                h = nmd
                for g in range(ngroups):
                    i = tile_lk[t, g]
                    s = group_sum[g] if i < 0 else group_sum[g] + stk_cv[d, k, g] - lk_val[i]
                    if s > h:
                        h = s
                shown = use_lc or gt_depth >= 0
                if shown:
                    cells[b] = t  # show the move for the line and goal-table reads
                    cells[c] = 0
                if use_lc:
                    l1, v1, l2, v2 = _lc_delta(cells, b, c, rowkey, colkey, width, height, lc_lines, buf)
                    hm = nmd + lcsum + v1 + v2 - lc_lines[l1] - lc_lines[l2]
                    if hm > h:
                        h = hm
                if weight == 100:
                    h = _parity_up(h, bpar[c])
                else:
                    h = (h * weight) // 100  # weighted search: inflated, so answers are not proven optimal
                gt_e = -2
                if gt_depth >= 0 and d + 1 + h <= thresh and thresh - (d + 1) <= gt_depth:
                    gt_e = _goal_distance(cells, gt_keys, gt_dist, gt_bits, gt_per, gt_codes, gt_cells, gt_key)
                    if gt_e >= 0:
                        h = gt_e  # exact (and >= h, which is admissible)
                    elif gt_depth + 1 > h:
                        h = _parity_up(gt_depth + 1, bpar[c])  # absent: farther than the table reaches
                if shown:
                    cells[c] = t
                    cells[b] = 0
                stk_kh[d, k] = h
                f = d + 1 + h
                if gt_e >= 0 and f <= thresh:
                    goal_k = k  # the table holds a path within the threshold
                    goal_e = gt_e
                    break
                if f > thresh:
                    if f < nxt:
                        nxt = f
                    if bpmx and h - 1 > stk_h[d]:
                        stk_h[d] = h - 1
                    continue
                if h == 0:
                    goal_k = k
                    goal_e = 0
                    break
                j = cnt  # insertion sort by estimate; ties keep L R U D order
                while j > 0 and stk_ch[d, j - 1] > h:
                    stk_ch[d, j] = stk_ch[d, j - 1]
                    stk_ck[d, j] = stk_ck[d, j - 1]
                    j -= 1
                stk_ch[d, j] = h
                stk_ck[d, j] = k
                cnt += 1
            if goal_k < 0:
                stk_n[d] = cnt
                stk_it[d] = 0
                if bpmx and d + stk_h[d] > thresh:
                    if d + stk_h[d] < nxt:
                        nxt = d + stk_h[d]
                    stk_it[d] = cnt  # BPMX cut: no child is worth a visit
                continue
            k = goal_k  # descend into the goal (or the goal table's path) below
        elif stk_it[d] >= stk_n[d]:
            if d == 0:
                status = _ITERATION_DONE
                break
            # undo the move that led to depth d: the tile now on stk_blank[d-1] goes back
            pb = stk_blank[d - 1]
            t = cells[pb]
            mdsum += md[t, b] - md[t, pb]
            if use_lc:
                lcsum += stk_old[d, 1] - lc_lines[stk_old[d, 0]] + stk_old[d, 3] - lc_lines[stk_old[d, 2]]
            _retract(
                cells,
                pos,
                pb,
                b,
                lk_cellmap,
                tile_lk,
                tile_slot,
                ngroups,
                lk_val,
                group_sum,
                lc_lines,
                stk_old,
                d,
                use_lc,
                lk_rank,
                lk_used,
                lk_slotof,
            )
            up = stk_h[d] - 1  # BPMX upwards: what the child learnt bounds the parent
            d -= 1
            if bpmx and up > stk_h[d]:
                stk_h[d] = up
                if d + up > thresh:
                    if d + up < nxt:
                        nxt = d + up
                    stk_it[d] = stk_n[d]
            continue
        else:
            k = stk_ck[d, stk_it[d]]
            stk_it[d] += 1
        c = nbr[b, k]
        mdsum += md[cells[c], b] - md[cells[c], c]
        lcsum += _apply(
            cells,
            pos,
            b,
            c,
            rowkey,
            colkey,
            width,
            height,
            use_lc,
            lk_cellmap,
            tile_lk,
            tile_slot,
            ngroups,
            lk_val,
            group_sum,
            lc_lines,
            stk_old,
            d + 1,
            lk_rank,
            lk_used,
            lk_slotof,
            buf,
            stk_ci[d, k],
            stk_cv[d, k],
        )
        path[d] = k
        stk_blank[d + 1] = c
        stk_it[d + 1] = -1
        stk_h[d + 1] = stk_kh[d, k]
        d += 1
        if goal_k >= 0:
            # read the rest off the goal table (goal_e == 0 at the goal): some neighbour is one closer
            while goal_e > 0:
                b2 = stk_blank[d]
                for k2 in range(ndeg[b2]):
                    c2 = nbr[b2, k2]
                    t2 = cells[c2]
                    cells[b2] = t2
                    cells[c2] = 0
                    if (
                        _goal_distance(cells, gt_keys, gt_dist, gt_bits, gt_per, gt_codes, gt_cells, gt_key)
                        == goal_e - 1
                    ):
                        pos[t2] = b2
                        pos[0] = c2
                        path[d] = k2
                        d += 1
                        stk_blank[d] = c2
                        goal_e -= 1
                        break
                    cells[c2] = t2
                    cells[b2] = 0
            status = _FOUND
            break
    state[_S_DEPTH] = d
    state[_S_NEXT] = nxt
    state[_S_NODES] = nodes
    state[_S_MD] = mdsum
    state[_S_LC] = lcsum
    return status


def neighbour_arrays(shape):
    """nbr[c, k]: k-th free neighbour of c (L R U D order), ndeg[c]: how many; and
    the move letter of each (c, k)."""
    n = shape.n
    nbr = np.full((n, 4), -1, dtype=np.int64)
    ndeg = np.zeros(n, dtype=np.int64)
    letters = np.full((n, 4), "?", dtype="<U1")
    for c in range(n):
        for m in MOVES:
            d = shape.move_target(c, m)
            if d is not None and d in shape.neighbours[c]:
                nbr[c, ndeg[c]] = d
                letters[c, ndeg[c]] = m
                ndeg[c] += 1
    return nbr, ndeg, letters


@dataclass
class _Root:
    """A search's root: the board's arrays and the incremental state of its estimate
    (lookup values and ranks, group sums, Manhattan and linear-conflict parts), which
    the kernel updates move by move and restores on the way back."""

    cells: np.ndarray
    pos: np.ndarray
    buf: np.ndarray
    lc_lines: np.ndarray
    lk_rank: np.ndarray
    lk_used: np.ndarray
    lk_slotof: np.ndarray
    lk_val: np.ndarray
    group_sum: np.ndarray
    md: int
    lc: int
    h0: int


class Searcher:
    """Prepared arrays for one shape and heuristic; solves many boards of that shape."""

    def __init__(self, heuristic: Heuristic, bpmx: bool = True, packed: bool = True):
        self.h = heuristic
        self.bpmx = bpmx
        self.shape = heuristic.shape
        self.nbr, self.ndeg, self.letters = neighbour_arrays(self.shape)
        (
            self.tables,
            self.lk_k,
            self.lk_slots,
            self.lk_fixed,
            self.lk_cellmap,
            self.lk_w,
            self.lk_group,
            self.tile_lk,
            self.tile_slot,
        ) = kernel_arrays(heuristic)
        # lookup i's two-bit table where its file has one (unless packed=False), else the full one
        self.packed = tuple(
            np.ascontiguousarray(lk.packed, dtype=np.uint8) if packed and lk.packed is not None else None
            for lk in heuristic.lookups
        )
        self.lk_pk = np.array([p is not None for p in self.packed] or [False], dtype=np.bool_)
        # the kernel reads lookup i's table at lk_base[i] + rank (its byte, for a packed one);
        # self.tables and self.packed keep the arrays alive
        self.lk_full = np.array([t.ctypes.data for t in self.tables] or [0], dtype=np.int64)  # one-byte tables
        self.lk_base = self.lk_full.copy()
        for i, p in enumerate(self.packed):
            if p is not None:
                self.lk_base[i] = p.ctypes.data
        self.goal = goal_arrays(heuristic)
        g = self.shape.goal_blank
        self.bpar = np.array([max(self.shape.distances[g][c], 0) & 1 for c in range(self.shape.n)], dtype=np.int64)
        self.nlookups = len(heuristic.lookups)
        self.ngroups = heuristic.ngroups

    def initial_h(self, board: Board) -> int:
        st = self._start(board)
        return st.h0

    def _tables(self) -> tuple:
        """The kernel's read-only arrays: the shape's neighbours and estimates, every
        lookup's table base, cell map, ranking weights and tile slots, and the parity
        of each blank cell's distance from its goal cell."""
        h = self.h
        return (
            self.nbr,
            self.ndeg,
            h.md,
            h.rowkey,
            h.colkey,
            self.shape.width,
            self.shape.height,
            h.use_lc,
            self.lk_base,
            self.lk_pk,
            self.lk_cellmap,
            self.lk_w,
            self.tile_lk,
            self.tile_slot,
            self.ngroups,
            self.bpar,
        )

    def _start(self, board: Board) -> _Root:
        """The root's arrays and estimate, as the kernel keeps them up to date."""
        shape = self.shape
        cells, pos = board_arrays(shape, board.cells)
        buf = np.zeros(2 * max(shape.width, shape.height) + 2, dtype=np.int64)
        lc_lines = np.zeros(shape.width + shape.height, dtype=np.int64)
        place = np.zeros(MAX_LOOKUP_TILES, dtype=np.int64)
        lk_val = np.zeros(max(self.nlookups, 1), dtype=np.int64)
        group_sum = np.zeros(max(self.ngroups, 1), dtype=np.int64)
        md = int(sum(self.h.md[t, c] for c, t in enumerate(board.cells) if t > 0))
        lc = (
            int(_lc_total(cells, self.h.rowkey, self.h.colkey, shape.width, shape.height, lc_lines, buf))
            if self.h.use_lc
            else 0
        )
        nl = max(self.nlookups, 1)
        lk_rank = np.zeros(nl, dtype=np.int64)
        lk_used = np.zeros(nl, dtype=np.uint64)
        lk_slotof = np.zeros((nl, 64), dtype=np.int64)  # a table has at most 64 cells (one 64-bit mask)
        _init_ranks(
            pos,
            self.lk_k,
            self.lk_slots,
            self.lk_fixed,
            self.lk_cellmap,
            self.lk_w,
            self.nlookups,
            lk_rank,
            lk_used,
            lk_slotof,
            place,
        )
        if self.nlookups:
            _init_groups(
                self.lk_full,
                pos,
                self.lk_k,
                self.lk_slots,
                self.lk_fixed,
                self.lk_cellmap,
                self.lk_w,
                self.lk_group,
                self.nlookups,
                lk_val,
                group_sum,
                place,
            )
            for i, p in enumerate(self.packed):
                if p is not None:  # the search tracks the relaxed values the two bits encode
                    r = int(lk_rank[i])
                    new = int(root_value(int(lk_val[i]), int(bits_at(int(p[r >> 2]), r))))
                    group_sum[self.lk_group[i]] += new - lk_val[i]
                    lk_val[i] = new
        h0 = max([md + lc] + [int(v) for v in group_sum[: self.ngroups]])
        keys, dist, depth, bits, per, codes, gcells, key = self.goal
        if depth >= 0:
            e = int(_goal_distance(cells, keys, dist, bits, per, codes, gcells, key))
            h0 = max(h0, depth + 1) if e < 0 else e
        h0 = int(_parity_up(h0, int(self.bpar[board.blank])))
        return _Root(
            cells=cells,
            pos=pos,
            buf=buf,
            lc_lines=lc_lines,
            lk_rank=lk_rank,
            lk_used=lk_used,
            lk_slotof=lk_slotof,
            lk_val=lk_val,
            group_sum=group_sum,
            md=md,
            lc=lc,
            h0=h0,
        )

    def solve(
        self,
        board: Board,
        time_limit: float | None = None,
        node_limit: int | None = None,
        max_depth: int = MAX_DEPTH,
        weight: int = 100,
    ) -> SearchResult:
        """IDA* for ``board``.  ``weight`` (percent, >= 100) inflates the estimate for
        a faster, bounded-suboptimal search (weighted IDA*: at most weight/100 times
        the optimal length); only ``weight == 100`` can claim optimality."""
        if weight < 100:
            raise ValueError("weight must be at least 100 (percent)")
        t0 = time.perf_counter()
        st = self._start(board)
        h0 = st.h0
        if weight != 100:
            h0 = (h0 * weight) // 100
        names = list(self.h.names) or ["manhattan+lc" if self.h.use_lc else "manhattan"]
        if self.h.goal_name:
            names.append(self.h.goal_name)
        if h0 == 0:
            return SearchResult("", 0, True, 0, 0, time.perf_counter() - t0, "solved", names, 0)
        ngroups = self.ngroups
        stk_blank = np.zeros(max_depth + 2, dtype=np.int64)
        stk_it = np.zeros(max_depth + 2, dtype=np.int64)
        stk_n = np.zeros(max_depth + 2, dtype=np.int64)
        stk_ch = np.zeros((max_depth + 2, 4), dtype=np.int64)
        stk_ck = np.zeros((max_depth + 2, 4), dtype=np.int64)
        stk_h = np.zeros(max_depth + 2, dtype=np.int64)
        stk_kh = np.zeros((max_depth + 2, 4), dtype=np.int64)
        stk_ci = np.zeros((max_depth + 2, 4, max(ngroups, 1)), dtype=np.int64)
        stk_cv = np.zeros((max_depth + 2, 4, max(ngroups, 1)), dtype=np.int64)
        stk_old = np.zeros((max_depth + 2, 4 + 2 * max(ngroups, 1)), dtype=np.int64)
        path = np.zeros(max_depth + 2, dtype=np.int64)
        state = np.zeros(8, dtype=np.int64)
        stack = (stk_blank, stk_it, stk_n, stk_ch, stk_ck, stk_h, stk_kh, stk_ci, stk_cv, stk_old, path)
        root = (st.cells, st.pos, st.lk_val, st.group_sum, st.lc_lines, st.lk_rank, st.lk_used, st.lk_slotof, st.buf)
        tables = self._tables()
        thresh = h0
        nodes = 0
        while True:
            # a fresh iteration from the root
            stk_blank[0] = board.blank
            stk_it[0] = -1
            stk_h[0] = h0
            state[:] = 0
            state[_S_THRESH] = thresh
            state[_S_NEXT] = INF
            state[_S_NODES] = nodes
            state[_S_MD] = st.md
            state[_S_LC] = st.lc
            while True:
                budget = SLICE_NODES
                if node_limit is not None:
                    budget = min(budget, node_limit - int(state[_S_NODES]))
                status = (
                    _BUDGET
                    if budget <= 0
                    else _search(
                        root,
                        tables,
                        stack,
                        state,
                        budget,
                        self.bpmx and weight == 100,
                        self.goal,
                        weight,
                    )
                )
                nodes = int(state[_S_NODES])
                if status == _FOUND:
                    depth = int(state[_S_DEPTH])
                    moves = "".join(self.letters[stk_blank[i], path[i]] for i in range(depth))
                    optimal = weight == 100
                    return SearchResult(
                        moves,
                        depth,
                        optimal,
                        depth if optimal else st.h0,
                        nodes,
                        time.perf_counter() - t0,
                        "solved",
                        names,
                        st.h0,
                    )
                if status == _ITERATION_DONE:
                    break
                out_of_nodes = node_limit is not None and nodes >= node_limit
                out_of_time = time_limit is not None and time.perf_counter() - t0 >= time_limit
                if out_of_nodes or out_of_time:
                    return SearchResult(
                        None,
                        None,
                        False,
                        thresh if weight == 100 else st.h0,
                        nodes,
                        time.perf_counter() - t0,
                        "limit",
                        names,
                        st.h0,
                    )
            nxt = int(state[_S_NEXT])
            if nxt >= max_depth:
                # Thresholds stay below max_depth, so the stack never overflows and no
                # depth cut can hide a solution; past it the board stays unsolved.
                return SearchResult(
                    None,
                    None,
                    False,
                    thresh if weight == 100 else st.h0,
                    nodes,
                    time.perf_counter() - t0,
                    "limit",
                    names,
                    st.h0,
                )
            thresh = nxt


def ida_star(board: Board, heuristic: Heuristic | None = None, **limits) -> SearchResult:
    """Optimal solution of ``board`` (see :class:`Searcher`).  Solvability is decided
    first (:func:`pdb_builder.solvability.decide`): an unsolvable board returns at once
    with status ``"unsolvable"`` and no moves, instead of searching until a limit."""
    verdict = decide(board)
    if not verdict.solvable:
        return SearchResult(None, None, False, 0, 0, 0.0, "unsolvable")
    if heuristic is None:
        heuristic = manhattan_heuristic(board.shape)
    return Searcher(heuristic).solve(board, **limits)

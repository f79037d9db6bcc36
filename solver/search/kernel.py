"""The IDA* kernel and its helpers, compiled by numba (:mod:`solver.search.searcher` drives
them and imports this module only when a search needs it, so a process that answers a board
in plain Python never loads numba).

The kernel is not recursive (a cached recursive kernel segfaults when reloaded: numba issue
6061), is compiled once per argument type set and cached on disk.

Its public face is :data:`__all__` (``tests/test_kernel_face.py`` holds every module to it):
the slices of IDA* (:func:`search_slice`; over a list of frontier nodes,
:func:`frontier_slice`), which update a board's estimate move by move, and, from
:mod:`solver.search.estimate` (the estimate computed whole), the root's set-up
(:func:`init_root`) and the reads the beam shares (:func:`load_byte`, :func:`region_value`,
:func:`parity_up`, :func:`lc_total`, :func:`goal_distance`), a slice's statuses
(:data:`FOUND`, :data:`ITERATION_DONE`, :data:`SLICE_SPENT`, :data:`WINDOW`,
:data:`WINDOW2`, :data:`FULL`), its infinity (:data:`INF`). The state vector's slots
(``S_*``) are the kernel's own numbering: every other module reads and writes them through
:class:`solver.search.state.Slots`. Names with a leading underscore are its own.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from pdb_builder.jitload import load_cached
from pdb_builder.one_bit import WHOLE
from pdb_builder.packed import bits_at, decode
from pdb_builder.ranking import rank_delta
from pdb_builder.region_kernels import bit_at, decode_bit

from .estimate import (
    dual_estimate,
    goal_distance,
    init_root,
    lc_total,
    line_conflicts,
    load_byte,
    load_u16,
    parity_up,
    region_value,
    side_entry,
)

__all__ = [
    "search_slice",
    "frontier_slice",
    "init_root",
    "load_byte",
    "region_value",
    "parity_up",
    "lc_total",
    "goal_distance",
    "FOUND",
    "ITERATION_DONE",
    "SLICE_SPENT",
    "WINDOW",
    "WINDOW2",
    "FULL",
    "INF",
]

INF = 1 << 30

# kernel status codes
FOUND = 1
ITERATION_DONE = 2
SLICE_SPENT = 3
WINDOW = 4  # the next node at the split depth lies past the thread's window
WINDOW2 = 5  # the next node at the second split depth, in a shared node, lies past the thread's window
FULL = 6  # the frontier buffer (``stack.emit``) is full

# indices into the kernel's int64 state vector (S_NODES: nodes generated; S_EXPANDED:
# nodes whose children were generated).  Split search (solver.search.threads):
# the nodes at depth S_SPLIT (0: no split) are numbered in the serial order
# (S_SEEN: how many met so far) and only those numbered in [S_LO, S_HI) are
# searched; S_UPPER_NODES and S_UPPER_EXPANDED count the nodes above the split
# depth, which every thread walks alike.  Within each node searched at the split depth
# the nodes at depth S_SPLIT2 (0: none) are numbered too (S_SEEN2, from 0 again at
# each; S_ENTRY: the nodes generated when it was entered); in the node numbered
# S_SHARED, which several threads share, only those numbered in [S_LO2, S_HI2) are
# searched.  BPMX raises no estimate from below above the deeper of the two depths.
# A frontier node (solver.search.frontier): the first S_PLEN moves are forced (the
# stack's ``path`` holds them), so only that node's subtree is searched; BPMX raises
# nothing above it.  With a frontier buffer (``stack.emit`` has rows) every child over
# the threshold is written to it (S_EMITTED: how many so far).  Over a list of frontier
# nodes (:func:`frontier_slice`): S_FRONT the one under way or next, S_INSIDE 1 while its
# subtree is searched (2: between two nodes, at the depth their paths share), S_FLOOR the
# depth a search ends at once it has retracted to it (0: the root).
(
    S_DEPTH,
    S_THRESH,
    S_NEXT,
    S_NODES,
    S_MD,
    S_LC,
    S_EXPANDED,
    S_SPLIT,
    S_LO,
    S_HI,
    S_SEEN,
    S_UPPER_NODES,
    S_UPPER_EXPANDED,
    S_SPLIT2,
    S_LO2,
    S_HI2,
    S_SEEN2,
    S_SHARED,
    S_ENTRY,
    S_PLEN,
    S_EMITTED,
    S_FRONT,
    S_INSIDE,
    S_FLOOR,
) = range(24)
STATE_SIZE = 24


@nb.njit(cache=True, inline="always")
def _child_used(used, cellmap, b, c):
    """A lookup's mask of taken table cells once the tile on ``c`` moves to ``b``."""
    return used ^ ((np.uint64(1) << np.uint64(cellmap[b])) | (np.uint64(1) << np.uint64(cellmap[c])))


@nb.njit(cache=True, inline="always")
def _child_values(root, tables, b, d, u, only, stk_ci, stk_cv):
    """Table index and value of every child of the node at depth ``d`` (blank on
    ``b``) that the pruning automaton in state ``u`` keeps (only the ``only``-th where it
    is not -1: a forced move) into ``stk_ci[d, k, g]`` and
    ``stk_cv[d, k, g]``: the moved tile's lookup in each group, its rank updated for
    the one slot that moves (``rank_delta``).
    No value decides anything here, so the reads of all children are independent
    and the memory system overlaps them.  A packed lookup (``lk_pk[i]`` 1) reads the
    byte holding the child's two bits and decodes them against ``lk_val[i]``; a
    zero-aware one (``zero[1][i] > 0``) the cost of the blank's region where its table
    keeps one (:func:`region_value`: only a move of the lookup's own tile changes it),
    and one read through its one-bit copy (``lk_pk[i]`` 2, ``pdb_builder/one_bit.py``)
    the child's bit and its copy's code, which give the value against ``lk_val[i]``
    (a placement coded WHOLE is read from the copy's side table where it has one, else
    from the table and codes).
    (Inlined: the tuples' unpacking costs nothing at run time.)"""
    cells, _, lk_val, _, _, lk_rank, lk_used, lk_slotof, _ = root
    (
        nbr,
        ndeg,
        _,
        _,
        _,
        _,
        _,
        _,
        lk_base,
        lk_pk,
        lk_cellmap,
        lk_w,
        tile_lk,
        tile_slot,
        ngroups,
        _,
        fsm,
        ndir,
        zero,
        _,
    ) = tables
    zaddr, zstep = zero[0], zero[1]
    for k in range(ndeg[b]):
        if fsm[u, ndir[b, k]] < 0 or (only >= 0 and k != only):
            continue
        c = nbr[b, k]
        t = cells[c]
        for g in range(ngroups):
            i = tile_lk[t, g]
            if i >= 0:
                r = lk_rank[i] + rank_delta(
                    tile_slot[t, g], lk_cellmap[i, c], lk_cellmap[i, b], lk_used[i], lk_slotof[i], lk_w[i]
                )
                stk_ci[d, k, g] = r
                pk = lk_pk[i]
                if pk == 1:  # two bits an entry: the value relative to this node's (packed.py)
                    stk_cv[d, k, g] = decode(bits_at(load_byte(lk_base[i] + (r >> 2)), r), lk_val[i])
                    continue
                base = lk_base[i]
                zcode = zaddr[i] if zstep[i] > 0 else 0
                v = -1
                if pk == 2:  # one bit an entry of a zero-aware table, relative to this node's (one_bit.py)
                    code = load_byte(zero[7][i] + r)
                    if code != WHOLE:
                        if zero[12][i] != 0:  # the byte indexes the copy's (code, bit) pairs
                            pair = load_u16(zero[12][i] + 2 * code)
                            code = pair & 255
                            bit = pair >> 8
                        else:
                            bit = bit_at(load_byte(base + (r >> 3)), r)
                        extra = 0  # the blank's region's share of the child's value
                        if code != 0:
                            used = _child_used(lk_used[i], lk_cellmap[i], b, c)
                            extra = region_value(zero, i, code, used, lk_cellmap[i, c], 0)
                        stk_cv[d, k, g] = decode_bit(bit, lk_val[i], extra)
                        continue
                    if zero[9][i] != 0:  # a placement read whole, from the copy's side table
                        e = side_entry(zero[9][i], zero[10][i], zero[11][i], r)
                        v = e >> 8
                        code = e & 255
                    else:  # from the plain table and the codes
                        base = zero[8][i]
                if v < 0:
                    v = load_byte(base + r)
                    code = load_byte(zcode + r) if zcode != 0 else 0
                if code != 0:  # zero-aware: the cost of the blank's region (it is on c now)
                    v = region_value(zero, i, code, _child_used(lk_used[i], lk_cellmap[i], b, c), lk_cellmap[i, c], v)
                stk_cv[d, k, g] = v


@nb.njit(cache=True, inline="always")
def _lc_delta(cells, b, c, rowkey, colkey, width, height, lc_lines, buf):
    """Lines whose conflicts change when the blank on ``b`` takes the tile from ``c``
    (the board already shows the move): (line 1, its new value, line 2, its new value)."""
    if c // width == b // width:  # horizontal move: the columns of b and c change
        l1 = height + b % width
        l2 = height + c % width
        v1 = line_conflicts(cells, colkey, b % width, width, height, buf)
        v2 = line_conflicts(cells, colkey, c % width, width, height, buf)
    else:  # vertical move: the rows of b and c change
        l1 = b // width
        l2 = c // width
        v1 = line_conflicts(cells, rowkey, l1 * width, 1, width, buf)
        v2 = line_conflicts(cells, rowkey, l2 * width, 1, width, buf)
    return l1, v1, l2, v2


@nb.njit(cache=True, inline="always")
def _apply(root, tables, b, c, stk_old, d1, idx, vals):
    """Move the tile on ``c`` into the blank on ``b``, with the table indices
    ``idx[g]`` and values ``vals[g]`` already read for that child; what changed is
    kept in ``stk_old[d1]``.  Returns the linear-conflict sum's change."""
    cells, pos, lk_val, group_sum, lc_lines, lk_rank, lk_used, lk_slotof, buf = root
    _, _, _, rowkey, colkey, width, height, use_lc, _, _, lk_cellmap, _, tile_lk, tile_slot, ngroups, _, _, _, _, _ = (
        tables
    )
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
def _retract(root, tables, b, c, stk_old, d1):
    """Reverse :func:`_apply`: the tile on ``b`` goes back to ``c``."""
    cells, pos, lk_val, group_sum, lc_lines, lk_rank, lk_used, lk_slotof, _ = root
    _, _, _, _, _, _, _, use_lc, _, _, lk_cellmap, _, tile_lk, tile_slot, ngroups, _, _, _, _, _ = tables
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


@nb.njit(cache=True, nogil=True, _nrt=False)  # without the GIL: threads of one search, or of a dask worker, run at once
def search_slice(root, tables, stack, state, slice_nodes, bpmx, goal, weight):
    """Run IDA* from the state vector for at most ``slice_nodes`` generated nodes.

    Its arrays come in four groups: ``root`` (the board and the incremental state of
    its estimate, :class:`~solver.search.state.Root`), ``tables``
    (:meth:`~solver.search.searcher.Searcher.kernel_tables`: the shape's
    neighbours and every lookup's arrays), ``stack`` (one row per depth) and ``goal``
    (the goal table, :func:`~solver.search.heuristic.goal_arrays`).

    At its first visit (``stk_it[d] == -1``) a node generates all its children
    (each counted once): first every child's table values (:func:`_child_values`,
    reads that overlap in memory), then each child's estimate, the max of
    Manhattan (+ linear conflicts) and every group's sum (for a child exactly on the
    threshold, with the searcher's ``dual`` on, also the tables read on the board's
    dual: :func:`~solver.search.estimate.dual_estimate`).  It prunes those over the
    threshold and keeps the rest in ``stk_ck[d]`` sorted by estimate, so the final
    iteration meets the goal early; then it descends into them one by one, reusing
    the values read (``stk_cv``, ``stk_kh``).  ``stk_h[d]`` is the node's estimate,
    raised by BPMX: neighbours differ by one move, so a child's h - 1 bounds the
    parent too (Felner et al. 2005), and a raise that prunes the parent skips its
    remaining children.  A move the pruning automaton forbids (``fsm``, in state
    ``stk_fsm[d]`` at depth ``d``; :mod:`solver.search.automaton`) is never generated:
    it would complete a move string that an earlier string duplicates.

    With a goal table of depth D (``gt_depth >= 0``), a child whose remaining
    moves to the threshold are at most D is settled by one lookup: present, its distance is exact
    (and a solution if it fits the threshold: the rest of the path is read off the
    table by greedy descent); absent, it is at least D + 1 away."""
    cells, pos, lk_val, group_sum, lc_lines, _, _, _, buf = root
    (
        nbr,
        ndeg,
        md,
        rowkey,
        colkey,
        width,
        height,
        use_lc,
        _,
        _,
        lk_cellmap,
        lk_w,
        tile_lk,
        _,
        ngroups,
        bpar,
        fsm,
        ndir,
        zero,
        dual,
    ) = tables
    ndual = dual[0]
    stk_blank, stk_it, stk_n, stk_ch, stk_ck, stk_h, stk_kh, stk_ci, stk_cv, stk_old, stk_cnt, path, stk_fsm, emit = (
        stack
    )
    gt_keys, gt_dist, gt_depth, gt_bits, gt_per, gt_codes, gt_cells, gt_key = goal
    d = state[S_DEPTH]
    thresh = state[S_THRESH]
    nxt = state[S_NEXT]
    nodes = state[S_NODES]
    mdsum = state[S_MD]
    lcsum = state[S_LC]
    expanded = state[S_EXPANDED]
    split = state[S_SPLIT]
    lo = state[S_LO]
    hi = state[S_HI]
    seen = state[S_SEEN]
    upper_nodes = state[S_UPPER_NODES]
    upper_expanded = state[S_UPPER_EXPANDED]
    split2 = state[S_SPLIT2]
    lo2 = state[S_LO2]
    hi2 = state[S_HI2]
    seen2 = state[S_SEEN2]
    shared = state[S_SHARED]
    entry = state[S_ENTRY]
    plen = state[S_PLEN]
    floor = state[S_FLOOR]
    emitted = state[S_EMITTED]
    ncells = cells.shape[0]
    walked = max(split, split2, plen)  # above it every thread walks the nodes alike: no BPMX from below
    stop = nodes + slice_nodes
    status = ITERATION_DONE
    while True:
        b = stk_blank[d]
        goal_k = -1
        if stk_it[d] < 0:
            if nodes >= stop:
                status = SLICE_SPENT
                break
            expanded += 1
            if d < split:
                upper_expanded += 1
                upper_nodes -= nodes  # the children generated here count as upper nodes (below)
            u = stk_fsm[d]  # the automaton's state: a move it prunes completes a duplicate path
            only = path[d] if d < plen else -1  # a frontier node's path: its one move here
            _child_values(root, tables, b, d, u, only, stk_ci, stk_cv)
            cnt = 0
            goal_e = 0
            for k in range(ndeg[b]):
                if fsm[u, ndir[b, k]] < 0 or (only >= 0 and k != only):
                    continue
                c = nbr[b, k]
                nodes += 1
                t = cells[c]
                nmd = mdsum + md[t, b] - md[t, c]
                h = nmd
                for g in range(ngroups):
                    i = tile_lk[t, g]
                    s = group_sum[g] if i < 0 else group_sum[g] + stk_cv[d, k, g] - lk_val[i]
                    if s > h:
                        h = s
                shown = use_lc or gt_depth >= 0 or ndual > 0
                if shown:
                    cells[b] = t  # show the move for the line and goal-table reads
                    cells[c] = 0
                if use_lc:
                    l1, v1, l2, v2 = _lc_delta(cells, b, c, rowkey, colkey, width, height, lc_lines, buf)
                    hm = nmd + lcsum + v1 + v2 - lc_lines[l1] - lc_lines[l2]
                    if hm > h:
                        h = hm
                if weight == 100:
                    h = parity_up(h, bpar[c])
                    if ndual > 0 and d + 1 + h == thresh:  # the dual, where it alone could prune this child
                        hd = parity_up(dual_estimate(cells, c, md, lk_cellmap, lk_w, zero, dual, ngroups), bpar[c])
                        if hd > h:
                            h = hd
                else:
                    h = (h * weight) // 100  # weighted search: inflated, so answers are not proven optimal
                gt_e = -2
                if gt_depth >= 0 and d + 1 + h <= thresh and thresh - (d + 1) <= gt_depth:
                    gt_e = goal_distance(cells, gt_keys, gt_dist, gt_bits, gt_per, gt_codes, gt_cells, gt_key)
                    if gt_e >= 0:
                        h = gt_e  # exact (and >= h, which is admissible)
                    elif gt_depth + 1 > h:
                        h = parity_up(gt_depth + 1, bpar[c])  # absent: farther than the table reaches
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
                    if emit.shape[0] > 0:  # a frontier node: its depth, estimate, arrangement and path
                        if emitted >= emit.shape[0] or d + 3 + ncells > emit.shape[1]:
                            status = FULL
                            break
                        row = emit[emitted]
                        row[0] = d + 1
                        row[1] = h
                        for x in range(ncells):
                            row[2 + x] = cells[x]
                        row[2 + b] = t
                        row[2 + c] = 0
                        for x in range(d):
                            row[2 + ncells + x] = path[x]
                        row[2 + ncells + d] = k
                        emitted += 1
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
            if status == FULL:
                break
            if d < split:
                upper_nodes += nodes
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
            if d <= floor:  # (a frontier path the automaton prunes ends above its floor)
                status = ITERATION_DONE
                break
            # undo the move that led to depth d: the tile now on stk_blank[d-1] goes back
            pb = stk_blank[d - 1]
            t = cells[pb]
            mdsum += md[t, b] - md[t, pb]
            if use_lc:
                lcsum += stk_old[d, 1] - lc_lines[stk_old[d, 0]] + stk_old[d, 3] - lc_lines[stk_old[d, 2]]
            _retract(root, tables, pb, b, stk_old, d)
            up = stk_h[d] - 1  # BPMX upwards: what the child learnt bounds the parent
            d -= 1
            # (not above a split depth: every thread must walk the nodes there alike)
            if bpmx and up > stk_h[d] and d >= walked:
                stk_h[d] = up
                if d + up > thresh:
                    if d + up < nxt:
                        nxt = d + up
                    stk_it[d] = stk_n[d]
            continue
        else:
            if d + 1 == split:  # a node at the split depth: searched only in this thread's window
                if seen >= hi:
                    status = WINDOW
                    break
                seen += 1
                if seen <= lo:
                    stk_it[d] += 1
                    continue
                seen2 = 0
                entry = nodes
            elif d + 1 == split2:  # a node at the second split depth: in a shared node, only in the window
                if seen == shared:
                    if seen2 >= hi2:
                        status = WINDOW2
                        break
                    seen2 += 1
                    if seen2 <= lo2:
                        stk_it[d] += 1
                        continue
                else:
                    seen2 += 1
            k = stk_ck[d, stk_it[d]]
            stk_it[d] += 1
        c = nbr[b, k]
        mdsum += md[cells[c], b] - md[cells[c], c]
        lcsum += _apply(root, tables, b, c, stk_old, d + 1, stk_ci[d, k], stk_cv[d, k])
        path[d] = k
        stk_blank[d + 1] = c
        stk_fsm[d + 1] = fsm[stk_fsm[d], ndir[b, k]]
        stk_it[d + 1] = -1
        stk_h[d + 1] = stk_kh[d, k]
        d += 1
        stk_cnt[d] += 1
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
                        goal_distance(cells, gt_keys, gt_dist, gt_bits, gt_per, gt_codes, gt_cells, gt_key)
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
            status = FOUND
            break
    state[S_DEPTH] = d
    state[S_NEXT] = nxt
    state[S_NODES] = nodes
    state[S_MD] = mdsum
    state[S_LC] = lcsum
    state[S_EXPANDED] = expanded
    state[S_SEEN] = seen
    state[S_UPPER_NODES] = upper_nodes
    state[S_UPPER_EXPANDED] = upper_expanded
    state[S_SEEN2] = seen2
    state[S_ENTRY] = entry
    state[S_EMITTED] = emitted
    return status


@nb.njit(cache=True, nogil=True, _nrt=False)
def frontier_slice(root, tables, stack, state, slice_nodes, bpmx, goal, weight, fpath, fplen, fshare, hi, top):
    """IDA* below the frontier nodes ``state[S_FRONT]`` to ``hi - 1`` (rows of ``fpath``, the
    forced moves of each, ``fplen`` how many; ``fshare``: how many the next one shares), one
    after another, for at most ``slice_nodes`` generated nodes in all.  The first is walked
    down from the root (``top``: the root's blank, estimate, automaton state, Manhattan and
    line-conflict parts); each next one from the deepest node its path shares with the one
    before, which is searched again for its new forced move.  Returns
    :data:`ITERATION_DONE` once the last is searched, else :func:`search_slice`'s status
    (the state says where to go on)."""
    stk_blank, stk_it, stk_h, path, stk_fsm = stack[0], stack[1], stack[5], stack[11], stack[12]
    stop = state[S_NODES] + slice_nodes
    while True:
        if state[S_INSIDE] != 1:
            i = state[S_FRONT]
            if i >= hi:  # (the last node's search ended at the root)
                state[S_INSIDE] = 0
                return ITERATION_DONE
            if state[S_INSIDE] == 0:  # from the root
                stk_blank[0] = top[0]
                stk_h[0] = top[1]
                stk_fsm[0] = top[2]
                state[S_MD] = top[3]
                state[S_LC] = top[4]
                state[S_DEPTH] = 0
            d0 = state[S_DEPTH]
            n = fplen[i]
            for x in range(d0, n):
                path[x] = fpath[i, x]
            stk_it[d0] = -1  # that node again, for this path's move
            state[S_PLEN] = n
            state[S_FLOOR] = fshare[i] if i + 1 < hi else 0
            state[S_INSIDE] = 1
        left = stop - state[S_NODES]
        if left <= 0:
            return SLICE_SPENT
        status = search_slice(root, tables, stack, state, left, bpmx, goal, weight)
        if status != ITERATION_DONE:
            return status
        state[S_INSIDE] = 2
        state[S_FRONT] += 1


load_cached(globals())  # cached kernels load without the compiler (pdb_builder/jitload.py)

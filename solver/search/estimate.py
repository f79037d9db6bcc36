"""A board's estimate computed whole, compiled by numba: the linear conflicts of its
rows and columns (:func:`lc_total`), the goal table's distance (:func:`goal_distance`),
each lookup's rank and each disjoint group's sum (:func:`init_root`), and the reads
of a table's byte, word and zero-aware region (:func:`load_byte`, :func:`region_value`)
that the search (:mod:`solver.search.kernel`, which updates the estimate move by
move) and the fallback's beam share.  :mod:`solver.search.kernel` lists these in its
public face."""

from __future__ import annotations

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from pdb_builder.goal_table import find_key
from pdb_builder.jitload import load_cached
from pdb_builder.one_bit import SIDE_BITS
from pdb_builder.ranking import pdep, popcount, rank_kernel
from pdb_builder.region_kernels import region_cost, region_number


@nb.njit(cache=True, inline="always")
def line_conflicts(cells, keytab, start, step, length, buf):
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
def lc_total(cells, rowkey, colkey, width, height, lc_lines, buf):
    total = 0
    for r in range(height):
        v = line_conflicts(cells, rowkey, r * width, 1, width, buf)
        lc_lines[r] = v
        total += v
    for c in range(width):
        v = line_conflicts(cells, colkey, c, width, height, buf)
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
def goal_distance(cells, gt_keys, gt_dist, gt_bits, gt_per, gt_codes, gt_cells, key):
    """Exact distance of the arrangement from the goal table, or -1 when absent."""
    for w in range(key.shape[0]):
        key[w] = 0
    for j in range(gt_cells.shape[0]):
        t = cells[gt_cells[j]]
        key[j // gt_per] |= np.uint64(gt_codes[t]) << np.uint64((j % gt_per) * gt_bits)
    r = find_key(gt_keys, key)
    return -1 if r < 0 else np.int64(gt_dist[r])


@nb.njit(cache=True, inline="always")
def parity_up(h, parity):
    """``h`` rounded up to ``parity``: every solution length has the parity of the
    blank's distance from its goal cell (the grid is bipartite), so this stays admissible."""
    return h + ((h ^ parity) & 1)


def _unsigned_load(bits: int, doc: str):
    """An intrinsic reading the unsigned ``bits``-bit integer at an address, as int64."""

    def load(typingctx, addr):
        def codegen(context, builder, signature, args):
            ptr = builder.inttoptr(args[0], ir.PointerType(ir.IntType(bits)))
            return builder.zext(builder.load(ptr), ir.IntType(64))

        return types.int64(types.int64), codegen

    load.__doc__ = doc
    return intrinsic(load)


load_byte = _unsigned_load(
    8,
    """The unsigned byte at address ``addr`` (an int64 taken from a live array's
    ``ctypes.data`` plus an index inside it).  Reading the tables through their base
    addresses spares the kernel a switch over a tuple of arrays on every read.""",
)
load_u16 = _unsigned_load(16, "The unsigned 16-bit word at address ``addr`` (as :func:`load_byte`).")
load_u32 = _unsigned_load(32, "The unsigned 32-bit word at address ``addr`` (as :func:`load_byte`).")


@nb.njit(cache=True, inline="always")
def side_entry(index, side, shift, r):
    """Placement ``r``'s entry in a one-bit copy's side table (``pdb_builder/one_bit.py``:
    the addresses of its ``index`` and ``side`` arrays, its ``shift``): ``value << 8 |
    code`` of a placement read whole.  A binary search among its bucket's few entries."""
    b = r >> shift
    lo = load_u32(index + 4 * b)
    hi = load_u32(index + 4 * (b + 1))
    key = r & ((1 << shift) - 1)
    while lo < hi:
        mid = (lo + hi) >> 1
        if (load_u32(side + 4 * mid) >> SIDE_BITS) < key:
            lo = mid + 1
        else:
            hi = mid
    return load_u32(side + 4 * lo) & 0xFFFF


@intrinsic
def load_word(typingctx, addr):
    """The 64-bit word at address ``addr`` (as :func:`load_byte`)."""
    sig = types.uint64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.load(builder.inttoptr(args[0], ir.PointerType(ir.IntType(64))))

    return sig, codegen


@nb.njit(cache=True, inline="always")
def region_value(zero, i, code, used, blank, least):
    """Lookup ``i``'s zero-aware value (:mod:`pdb_builder.regions`) from its ``code``
    byte, the pattern's table cells ``used`` and the blank on table cell ``blank``:
    the least plus its region's two bits times the step.  The region's number is one
    read of the shape's labels where it has them, else a flood."""
    step, zfree, zwidth, znc0, znl, zlabel = zero[1], zero[2], zero[3], zero[4], zero[5], zero[6]
    all_free = np.uint64(zfree[i])
    if zlabel[i] != 0:
        mask = (np.uint64(1) << np.uint64(popcount(all_free))) - np.uint64(1)
        word = load_word(zlabel[i] + 8 * np.int64(~used & mask))
        j = np.int64((word >> np.uint64(4 * blank)) & np.uint64(15))
    else:
        free = all_free & ~pdep(used, all_free)
        j = region_number(pdep(np.uint64(1) << np.uint64(blank), all_free), free, zwidth[i], znc0[i], znl[i])
    return region_cost(least, code, step[i], j)


@nb.njit(cache=True, inline="always")
def dual_estimate(cells, blank, md, lk_cellmap, lk_w, zero, dual, ngroups):
    """The tables read on the board's dual, where each could not overestimate
    (:func:`~solver.search.heuristic.dual_arrays` has the reasoning): the tile homed on
    cell x stands on the home of the tile on x now, the tile homed on the blank's cell
    plays the blank, on the blank's home.  A lookup holding that tile, or whose goal
    placement parts the blank's cell from its home, counts its other tiles' distances
    there instead.  The largest group's sum."""
    ndl, dl_lk, dl_k, dl_group, dl_full, dl_label, dl_home, home_cell, goal_label, joined, bcell = dual
    zaddr, zstep = zero[0], zero[1]
    x = goal_label[blank]  # the dual's blank tile (0: the blank is home, none)
    best = 0
    for g in range(ngroups):
        total = 0
        for j in range(ndl):
            if dl_group[j] != g:
                continue
            i = dl_lk[j]
            k = dl_k[j]
            whole = joined[j, blank] != 0
            for s in range(k):
                if dl_label[j, s] == x:
                    whole = False
            if not whole:
                for s in range(k):
                    o = dl_label[j, s]
                    if o != x:
                        total += md[o, home_cell[cells[dl_home[j, s]]]]
                continue
            used = np.uint64(0)
            r = np.int64(0)
            for s in range(k):
                q = np.uint64(lk_cellmap[i, home_cell[cells[dl_home[j, s]]]])
                below = used & ((np.uint64(1) << q) - np.uint64(1))
                r += (np.int64(q) - np.int64(popcount(below))) * lk_w[i, s]
                used |= np.uint64(1) << q
            v = load_byte(dl_full[j] + r)
            if zstep[i] > 0:
                code = load_byte(zaddr[i] + r)
                if code != 0:
                    v = region_value(zero, i, code, used, lk_cellmap[i, bcell], v)
            total += v
        if total > best:
            best = total
    return best


@nb.njit(cache=True, nogil=True)
def init_groups(lk_full, pos, lk_k, lk_slots, lk_fixed, lk_cellmap, lk_w, lk_group, nlookups, lk_val, group_sum, place):
    """Each lookup's value (from its one-byte table, at base address ``lk_full[i]``;
    0 where that is 0: the caller reads it) into ``lk_val`` and each group's sum into
    ``group_sum``."""
    group_sum[:] = 0
    for i in range(nlookups):
        if lk_full[i] == 0:
            lk_val[i] = 0
            continue
        k = _placement(i, pos, lk_k, lk_slots, lk_fixed, lk_cellmap, place)
        v = load_byte(lk_full[i] + rank_kernel(place, k, lk_w[i]))
        lk_val[i] = v
        group_sum[lk_group[i]] += v


@nb.njit(cache=True, nogil=True)
def init_root(
    lk_full, pos, lk_k, lk_slots, lk_fixed, lk_cellmap, lk_w, lk_group, nlookups, lk_rank, lk_used, lk_slotof, lk_val,
    group_sum, place
):  # fmt: skip
    """:func:`_init_ranks` and :func:`init_groups` at a search's root: one kernel for
    a process to load, not two."""
    _init_ranks(pos, lk_k, lk_slots, lk_fixed, lk_cellmap, lk_w, nlookups, lk_rank, lk_used, lk_slotof, place)
    init_groups(lk_full, pos, lk_k, lk_slots, lk_fixed, lk_cellmap, lk_w, lk_group, nlookups, lk_val, group_sum, place)


load_cached(globals())  # cached kernels load without the compiler (pdb_builder/jitload.py)

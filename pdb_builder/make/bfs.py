"""Build-only numba kernels: layered 0/1 BFS for additive pattern databases.

Cost model (Korf & Felner 2002; Felner, Korf & Hanan 2004; HOG2
``BuildAdditivePDB``): the abstract state is the cells of the pattern's ``k``
tiles plus the blank; moving a pattern tile costs 1, moving any other tile costs
0.  So the blank moves freely inside its *region* (the connected free cells not
covered by pattern tiles) and every blank cell of a region has the same cost:
the real state is (placement, region).  The stored value of a placement is the
least cost over its regions.

Memory: per placement, one word with 2 bits per non-pattern cell (``n - k``
cells, so ``2 (n - k) <= 64``): ``UNREACHED`` (0), ``FRONTIER[d % 2]`` (1 or 2)
for a region reached at depth d and not expanded yet, ``CLOSED`` (3) once
expanded.  A layer only needs depth d (to expand) and d + 1 (to mark), so two
frontier codes suffice, and closing keeps an old region from being expanded
again.  A placement's regions are uniform, so one cell tells about its region.

A layer finds the placements with cells coded ``FRONTIER[d % 2]``, expands the
union of those cells at once (one pattern tile moves onto an adjacent frontier
cell), floods the target region by 64-bit shifts, and ORs the next frontier
code into its unreached cells; then it ORs ``CLOSED`` over the cells it
expanded (01 | 11 = 10 | 11 = 11).  A layer scans only the runs of ``2**FLAG_SHIFT``
placements where the layer before marked a region (a byte a run, set as it marks:
:func:`flag_rows`; a sparse layer's scan is mostly passed over that way), tests
``SCAN_BLOCK`` words at once within a run, steps the placement's
mixed-radix digits from the last one expanded instead of dividing its rank, and
collects ``PENDING`` moves, prefetching each target word, before it looks at the
first of them: a build is bound by those random reads.  A layer's placements are cut into chunks
that threads take one at a time (:mod:`pdb_builder.make.share`: how many threads
may change while a layer runs).  Every write is an atomic OR (LLVM ``atomicrmw or``) touching only
fields whose final value it fixes, so threads marking and closing the same word
lose nothing and the result is deterministic (tested against a pure-Python BFS
and across thread counts).

A region's cells become 2-bit slots with one ``pext`` (its cells among the free
cells, packed) and one ``pdep`` (spread to every other bit), and a word's frontier
slots become cells the same way back: BMI2 instructions where the CPU has them,
loops otherwise (``ranking.py``); they beat a loop over the cells by about a
quarter (docs/benchmarks.md, "Builds").

Cells here are grid cells ``0 .. W*H-1`` for masks and flood fills; ranks use
the compact index of a cell among the shape's free cells (``cidx``).
"""

from __future__ import annotations

import numba as nb
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from ..jitload import load_cached
from ..ranking import nth_free, pdep, pext, popcount, rank_digits, rank_kernel, step_digits, trailing_zeros
from ..region_kernels import REGIONS, flood, zero_row

UNSEEN = 255  # table entry: placement not reached (unreachable on this shape)
MAX_VALUE = 254  # largest storable cost
EVEN_BITS = np.uint64(0x5555555555555555)  # the low bit of every 2-bit slot
# 2-bit region codes in the BFS words
UNREACHED = 0  # region not reached yet
FRONTIER_EVEN = 1  # reached at an even depth, not expanded yet
FRONTIER_ODD = 2  # reached at an odd depth, not expanded yet
CLOSED = 3  # expanded
SCAN_BLOCK = 16  # placements tested at once for a slot at the layer's depth
FLAG_SHIFT = 10  # a layer's marks flag runs of 2**FLAG_SHIFT placements for the next layer's scan
PENDING = 32  # moves whose target words are fetched before the first of them is looked at


def _atomic(op: str):
    """An intrinsic ``f(arr, idx, val)``: ``arr[idx] = arr[idx] OP val`` as one atomic
    read-modify-write (LLVM ``atomicrmw``), returning the old value."""

    def typer(typingctx, arr, idx, val):
        sig = arr.dtype(arr, idx, val)

        def codegen(context, builder, signature, args):
            arr_t, _, val_t = signature.args
            ary = context.make_array(arr_t)(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, arr_t, ary, [args[1]], wraparound=False)
            v = context.cast(builder, args[2], val_t, arr_t.dtype)
            return builder.atomic_rmw(op, ptr, v, "monotonic")

        return sig, codegen

    typer.__name__ = typer.__qualname__ = f"atomic_{op}"
    return intrinsic(typer)


atomic_or = _atomic("or")  # arr[idx] |= val
atomic_add = _atomic("add")  # arr[idx] += val


@intrinsic
def prefetch_write(typingctx, arr, idx):
    """Start fetching ``arr[idx]``'s cache line for writing (LLVM ``llvm.prefetch``); a hint only."""
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        arr_t = signature.args[0]
        ary = context.make_array(arr_t)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, arr_t, ary, [args[1]], wraparound=False)
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [ptr.type, i32, i32, i32]), "llvm.prefetch"
        )
        builder.call(fn, [ptr, ir.Constant(i32, 1), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@nb.njit(cache=True, inline="always")
def compact_index(free, cell):
    """Position of ``cell`` among the set bits of ``free`` (its 2-bit slot)."""
    return popcount(free & ((np.uint64(1) << np.uint64(cell)) - np.uint64(1)))


@nb.njit(cache=True, inline="always")
def region_code_bits(region, free, code):
    """Word with ``code`` in the 2-bit slot of every cell of ``region``: the region's
    cells as compact bits (pext), spread to the even bits (pdep), times the code."""
    return pdep(pext(region, free), EVEN_BITS) * np.uint64(code)


@nb.njit(cache=True, nogil=True)
def seed_goal(words, table, goal_place, cidx, all_free, goal_blank, width, not_col0, not_last, w):
    """Layer 0: the goal placement with the blank's region coded for depth 0."""
    k = goal_place.shape[0]
    cpos = np.empty(k, dtype=np.int64)
    pmask = np.uint64(0)
    for i in range(k):
        cpos[i] = cidx[goal_place[i]]
        pmask |= np.uint64(1) << np.uint64(goal_place[i])
    r = rank_kernel(cpos, k, w)
    free = all_free & ~pmask
    region = flood(np.uint64(1) << np.uint64(goal_blank), free, width, not_col0, not_last)
    atomic_or(words, r, region_code_bits(region, free, FRONTIER_EVEN))
    return r


def flag_rows(total: int) -> np.ndarray:
    """The scan flags of a BFS of ``total`` placements: a row per depth parity, a byte per
    run of ``2**FLAG_SHIFT`` placements, set where a layer marked a region of that
    parity (:func:`expand_share`)."""
    return np.zeros((2, (total >> FLAG_SHIFT) + 1), dtype=np.uint8)


@nb.njit(cache=True, nogil=True, inline="always")
def _mark(words, pend_q, pend_t, pend_free, pending, nxt, grid, nflags):
    """Mark the target region of each pending move (placement ``pend_q``, blank on
    cell ``pend_t``, free cells ``pend_free``) with ``nxt`` where it is unreached, and
    flag its run in ``nflags``; returns how many regions were newly marked."""
    width, not_col0, not_last = grid[4], grid[5], grid[6]
    one = np.uint64(1)
    three = np.uint64(3)
    marked = 0
    for j in range(pending):
        q = pend_q[j]
        t = pend_t[j]
        nfree_mask = pend_free[j]
        slot = np.uint64(2 * compact_index(nfree_mask, t))
        if (np.uint64(words[q]) >> slot) & three != 0:
            continue  # that region is reached already
        region = flood(one << np.uint64(t), nfree_mask, width, not_col0, not_last)
        old = atomic_or(words, q, region_code_bits(region, nfree_mask, nxt))
        if nflags[q >> FLAG_SHIFT] == 0:  # (written once: a line other threads read stays clean)
            nflags[q >> FLAG_SHIFT] = 1
        if (np.uint64(old) >> slot) & three == 0:
            marked += 1
    return marked


@nb.njit(cache=True, nogil=True, inline="always")
def _expand_chunk(lo, hi, words, table, depth, n, k, w, grid, cur, nxt, cflags, nflags):
    """Expand the regions at ``depth`` of placements ``lo`` to ``hi - 1`` (see
    :func:`expand_share`); returns (placements valued, new regions marked)."""
    cells_of, cidx, nbr_mask, all_free = grid[0], grid[1], grid[2], grid[3]
    zbits, zprefix, zdepths, zero_aware = grid[7], grid[8], grid[9], grid[10]
    one = np.uint64(1)
    cpos = np.empty(k, dtype=np.int64)
    gpos = np.empty(k, dtype=np.int64)
    local_valued = 0
    local_marked = 0
    # the moves found are marked in batches, their words fetched while more are found
    pend_q = np.empty(PENDING + 4 * k, dtype=np.int64)
    pend_t = np.empty(PENDING + 4 * k, dtype=np.int64)
    pend_free = np.empty(PENDING + 4 * k, dtype=np.uint64)
    pending = 0
    dig = np.empty(k, dtype=np.int64)
    rank_digits(lo, n, k, dig)
    at = lo
    pat = cur * EVEN_BITS
    bhi = lo
    while bhi < hi:
        blo = bhi
        run = blo >> FLAG_SHIFT
        if cflags[run] == 0:  # the last layer marked nothing at ``depth`` in this run
            bhi = min(hi, (run + 1) << FLAG_SHIFT)
            continue
        # a block without a slot at ``cur`` is passed over in one vectorised test
        bhi = min(hi, blo + SCAN_BLOCK)
        seen = np.uint64(0)
        for j in range(blo, bhi):
            x = np.uint64(words[j]) ^ pat
            seen |= ~(x | (x >> one))
        if seen & EVEN_BITS == 0:
            continue
        for p in range(blo, bhi):
            word = np.uint64(words[p])
            if word == 0:
                continue
            # any slot equal to cur?  (x ^ pattern) has a zero 2-bit field there
            x = word ^ pat
            zero_fields = ~(x | (x >> one)) & EVEN_BITS
            # (unused high fields hold 0 in word, so they differ from cur, which is never 0)
            if zero_fields == 0:
                continue
            if table[p] == UNSEEN:
                table[p] = depth
                local_valued += 1
            step_digits(dig, p - at, p, n, k)
            at = p
            used = np.uint64(0)
            pmask = np.uint64(0)
            for i in range(k):
                c = nth_free(dig[i], used)
                used |= one << c
                cpos[i] = c
                gpos[i] = cells_of[c]
                pmask |= one << np.uint64(gpos[i])
            free = all_free & ~pmask
            # frontier cells: free cells whose slot holds cur
            front = pdep(pext(zero_fields, EVEN_BITS), free)
            row = zero_row(zbits, zprefix, p) if zero_aware else -1
            if row >= 0:  # zero-aware: each of the first REGIONS regions expanded now costs ``depth``
                rest = free
                for j in range(REGIONS):
                    if rest == 0:
                        break
                    region = flood(rest & (~rest + one), free, grid[4], grid[5], grid[6])
                    rest &= ~region
                    if region & front:
                        zdepths[row * REGIONS + j] = depth
            for i in range(k):
                t = gpos[i]
                targets = nbr_mask[t] & front
                while targets:
                    b = trailing_zeros(targets)
                    targets &= targets - one
                    # tile i moves t -> b; the blank ends on t
                    saved = cpos[i]
                    cpos[i] = cidx[b]
                    q = rank_kernel(cpos, k, w)
                    cpos[i] = saved
                    prefetch_write(words, q)
                    pend_q[pending] = q
                    pend_t[pending] = t
                    pend_free[pending] = (free & ~(one << b)) | (one << np.uint64(t))
                    pending += 1
            # close what was expanded: 11 over every field that held cur
            atomic_or(words, p, zero_fields | (zero_fields << one))
            if pending >= PENDING:
                local_marked += _mark(words, pend_q, pend_t, pend_free, pending, nxt, grid, nflags)
                pending = 0
    local_marked += _mark(words, pend_q, pend_t, pend_free, pending, nxt, grid, nflags)
    return local_valued, local_marked


@nb.njit(cache=True, nogil=True)
def expand_share(counter, grant, me, chunk, words, table, depth, n, k, w, grid, flags):
    """One thread's share of a layer: expand every region at ``depth`` and mark new
    regions at ``depth + 1`` in the chunks of ``chunk`` placements it takes from
    ``counter[0]`` (shared by the layer's threads), while thread number ``me`` is
    below ``grant[0]`` (read before each chunk: another thread, or another process,
    may lower or raise it while the layer runs).  Sets ``table[p] = depth`` for
    placements first seen at this depth.  ``grid``: the shape's arrays and masks
    (:func:`~pdb_builder.make.building.grid_arrays`).  ``flags`` (:func:`flag_rows`):
    the scan passes over the runs of placements that row ``depth % 2`` leaves unset
    (the layer before marked no region at ``depth`` there; the caller clears that row
    once the layer is done) and sets the runs it marks in the other.  Returns
    (placements valued, new regions marked) by its chunks."""
    cur = np.uint64(FRONTIER_ODD if depth % 2 else FRONTIER_EVEN)
    nxt = np.uint64(FRONTIER_EVEN if depth % 2 else FRONTIER_ODD)
    cflags = flags[depth % 2]
    nflags = flags[1 - depth % 2]
    total = words.shape[0]
    valued = 0
    marked = 0
    while me < atomic_or(grant, 0, 0):  # an atomic read: never hoisted out of the loop
        lo = atomic_add(counter, 0, 1) * chunk
        if lo >= total:
            break
        v, m = _expand_chunk(lo, min(total, lo + chunk), words, table, depth, n, k, w, grid, cur, nxt, cflags, nflags)
        valued += v
        marked += m
    return valued, marked


load_cached(globals(), quick=False)  # keyed on every source it is compiled from (pdb_builder/jitload.py)

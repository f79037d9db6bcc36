"""Perfect hashing of pattern placements: lexicographic k-permutation ranks.

A placement of a pattern of ``k`` tiles on ``n`` cells is the tuple of their
cells ``(p0, .., pk-1)``, all distinct.  Its rank is its index in lexicographic
order among the ``n!/(n-k)!`` such tuples (as HOG2's ``LexPermutationPDB``;
Myrvold & Ruskey 2001 give a linear-time alternative that is not lexicographic):

    rank = sum_i d_i * W_i,   d_i = p_i - #{j < i : p_j < p_i},
                              W_i = (n-1-i)! / (n-k)!

``d_i`` is computed with one popcount over a 64-bit mask of used cells, so a rank
costs O(k).  Files store ``RANKING_NAME`` and ``RANKING_VERSION``: a change here
scrambles every table built before it, so any change must bump the version.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .entries import RANKING_NAME, RANKING_VERSION, num_placements, rank_py, unrank_py, weights  # noqa: F401 - re-exported
from .jitload import load_cached

# -- numba ----------------------------------------------------------------------------


@intrinsic
def popcount(typingctx, x):
    """Number of set bits (LLVM ctpop) of an integer."""
    sig = x(x)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


@intrinsic
def trailing_zeros(typingctx, x):
    """Index of the lowest set bit (LLVM cttz) of a non-zero integer."""
    sig = x(x)

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], context.get_constant(types.boolean, True))

    return sig, codegen


def _has_bmi2() -> bool:
    try:
        import llvmlite.binding as ll

        return bool(ll.get_host_cpu_features().get("bmi2", False))
    except Exception:  # a platform without x86 feature flags
        return False


HAS_BMI2 = _has_bmi2()


def _bmi2_intrinsic(name):
    """``llvm.x86.bmi.<name>.64`` on two uint64 (numba compiles for the host CPU)."""
    from llvmlite import ir

    @intrinsic
    def op(typingctx, x, mask):
        sig = types.uint64(types.uint64, types.uint64)

        def codegen(context, builder, signature, args):
            i64 = ir.IntType(64)
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(i64, [i64, i64]), f"llvm.x86.bmi.{name}.64"
            )
            return builder.call(fn, list(args))

        return sig, codegen

    return op


@nb.njit(cache=True, inline="always")
def _bits_loop(x, mask, gather):
    """pext (``gather``) or pdep without BMI2: one step per set bit of ``mask``."""
    out = np.uint64(0)
    bit = np.uint64(1)
    m = np.uint64(mask)
    while m:
        low = m & (~m + np.uint64(1))
        src, dst = (low, bit) if gather else (bit, low)
        if np.uint64(x) & src:
            out |= dst
        bit <<= np.uint64(1)
        m &= m - np.uint64(1)
    return out


@nb.njit(cache=True, inline="always")
def pext_loop(x, mask):
    return _bits_loop(x, mask, True)


@nb.njit(cache=True, inline="always")
def pdep_loop(x, mask):
    return _bits_loop(x, mask, False)


# pext: the bits of x under mask, packed to the low end; pdep: the low bits of x
# spread onto the set bits of mask.  One instruction each with BMI2.
pext = _bmi2_intrinsic("pext") if HAS_BMI2 else pext_loop
pdep = _bmi2_intrinsic("pdep") if HAS_BMI2 else pdep_loop


@nb.njit(cache=True, inline="always")
def rank_delta(s, a, b, used, slot_of, w):
    """Change of the rank when slot ``s`` moves from cell ``a`` to the free cell ``b``.

    ``used`` is the mask of the placement's cells (``a`` included), ``slot_of[q]``
    the slot on an occupied cell ``q``, ``w`` the weights.  Only the cells strictly
    between ``a`` and ``b`` matter: each slot before ``s`` there takes one from
    ``d_s``'s move of ``|b - a|``; each slot after ``s`` there sees its ``d``
    change by one, all in the direction of the move.  O(cells between), not O(k)."""
    if a < b:
        lo = a
        hi = b
        sgn = np.int64(1)
    else:
        lo = b
        hi = a
        sgn = np.int64(-1)
    between = used & ((np.uint64(1) << np.uint64(hi)) - (np.uint64(2) << np.uint64(lo)))
    steps = np.int64(hi - lo)
    after = np.int64(0)
    while between:
        q = trailing_zeros(between)
        between &= between - np.uint64(1)
        t = slot_of[q]
        if t < s:
            steps -= 1
        else:
            after += w[t]
    return sgn * (steps * w[s] + after)


@nb.njit(cache=True, inline="always")
def rank_kernel(pos, k, w):
    """Rank of placement ``pos[:k]`` with weights ``w`` (see module docstring)."""
    used = np.uint64(0)
    r = np.int64(0)
    for i in range(k):
        p = np.uint64(pos[i])
        below = used & ((np.uint64(1) << p) - np.uint64(1))
        r += (np.int64(p) - np.int64(popcount(below))) * w[i]
        used |= np.uint64(1) << p
    return r


@nb.njit(cache=True, inline="always")
def unrank_kernel(r, n, k, w, out):
    """Write the placement of rank ``r`` into ``out[:k]``; return the mask of its cells."""
    used = np.uint64(0)
    for i in range(k):
        c = nth_free((r // w[i]) % (n - i), used)
        out[i] = c
        used |= np.uint64(1) << np.uint64(c)
    return used


@nb.njit(cache=True, inline="always")
def nth_free(d, used):
    """The ``d``-th cell (from 0) not in the mask ``used``: where digit ``d`` puts a tile."""
    return trailing_zeros(pdep(np.uint64(1) << np.uint64(d), ~used))


@nb.njit(cache=True, inline="always")
def rank_digits(r, n, k, dig):
    """The digits ``d_i`` of rank ``r`` into ``dig[:k]`` (mixed radix, digit i of radix
    n - i; see the module docstring)."""
    for i in range(k - 1, -1, -1):
        dig[i] = r % (n - i)
        r //= n - i


@nb.njit(cache=True, inline="always")
def step_digits(dig, step, r, n, k):
    """Move the digits ``dig`` on by ``step`` to those of rank ``r``: a scan up the
    ranks mostly grows the last digit, with a carry; only a long step divides."""
    v = dig[k - 1] + step
    if v < n - k + 1:
        dig[k - 1] = v
    elif step < n - k + 1:
        dig[k - 1] = v - (n - k + 1)
        i = k - 2
        while i >= 0:
            dig[i] += 1
            if dig[i] < n - i:
                break
            dig[i] = 0
            i -= 1
    else:
        rank_digits(r, n, k, dig)


load_cached(globals())  # cached kernels load without the compiler (pdb_builder/jitload.py)

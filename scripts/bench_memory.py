#!/usr/bin/env python3
"""What a pattern-database lookup costs on this machine; prints markdown tables for docs/benchmarks.md.

    .venv/bin/python scripts/bench_memory.py [--reads 3000000]

The IDA* kernel (``solver/search/searcher.py``) reads one table byte per child, and whether a
node is expanded depends on the bytes its children's reads return: each expanded
node waits for one read.  Table 1 times such chains of dependent random reads
(a group of independent reads per step, the next group's addresses depending on
their values) over byte arrays of the tables' sizes: the 4x4 7-8's two-bit
tables are 14 MB and 130 MB, the 6-6-3's 1.4 MB each.  Table 2 is the best case
for hiding that wait: several independent chains on one core taking turns, each
prefetching its next address and doing ``--work`` rounds of arithmetic (about
the kernel's per-node work) before the next chain's turn, as an interleaved
search would.  Random indices come from numpy's generator, so no hardware
stride prefetcher can guess them.  One core; run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import time

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

SIZES_MB = (0.25, 1, 4, 16, 64, 130, 512)


@intrinsic
def _prefetch(typingctx, addr):
    """LLVM's prefetch (read, high locality) of the cache line at address ``addr``."""
    sig = types.void(types.int64)

    def codegen(context, builder, signature, args):
        i8p = ir.PointerType(ir.IntType(8))
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = builder.module.declare_intrinsic("llvm.prefetch", fnty=fnty)
        builder.call(
            fn, [builder.inttoptr(args[0], i8p), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)]
        )
        return context.get_dummy_value()

    return sig, codegen


@nb.njit(cache=True)
def _chains(table, idx, group):
    """Groups of ``group`` reads; each group's addresses depend on the last group's values."""
    s = np.int64(0)
    for i in range(0, idx.shape[0] - group, group):
        acc = np.int64(0)
        for p in range(group):
            acc += table[idx[i + p] + (s & 1)]
        s += acc
    return s


@nb.njit(cache=True)
def _turns(table, idx, lanes, work, prefetch):
    """``lanes`` chains taking turns: a chain reads the byte it asked for on its last
    turn, works on it, picks its next address (from the value) and, if
    ``prefetch``, asks for it before the next chain's turn."""
    n = table.shape[0] - 1
    at = np.zeros(lanes, dtype=np.int64)
    for j in range(lanes):
        at[j] = idx[j]
    base = table.ctypes.data
    s = np.uint64(0)
    for i in range(idx.shape[0]):
        j = i % lanes
        x = np.uint64(table[at[j]]) + s
        for _ in range(work):  # stands for the node's work
            x = (x * np.uint64(6364136223846793005) + np.uint64(1442695040888963407)) ^ (x >> np.uint64(29))
        s = x
        at[j] = (idx[i] + np.int64(x & np.uint64(1))) % n
        if prefetch:
            _prefetch(base + at[j])
    return s


def _ns_per(kernel, args, steps) -> str:
    """Nanoseconds per step of ``kernel(*args)`` (``args[1]`` the indices), compiled and
    warmed on the first 100 indices first."""
    kernel(args[0], args[1][:100], *args[2:])
    t0 = time.perf_counter()
    kernel(*args)
    return f"{(time.perf_counter() - t0) / steps * 1e9:.0f} ns"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reads", type=int, default=3_000_000, help="reads per measurement")
    ap.add_argument("--work", type=int, default=40, help="arithmetic rounds per turn in table 2")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(1)
    print("| array | 1 read a step | 2 | 4 | 8 |")
    print("|---|---|---|---|---|")
    for mb in SIZES_MB:
        n = int(mb * (1 << 20))
        table = np.ones(n + 2, dtype=np.uint8)
        idx = rng.integers(0, n, args.reads)
        cells = [_ns_per(_chains, (table, idx, group), len(idx) // group) for group in (1, 2, 4, 8)]
        print(f"| {mb:g} MB | " + " | ".join(cells) + " |", flush=True)
    print()
    n = 130 << 20
    table = np.ones(n + 2, dtype=np.uint8)
    idx = rng.integers(0, n, args.reads)
    print(f"| chains taking turns (130 MB, work {args.work}) | 1 | 2 | 4 | 8 |")
    print("|---|---|---|---|---|")
    for prefetch in (False, True):
        cells = [_ns_per(_turns, (table, idx, lanes, args.work, prefetch), len(idx)) for lanes in (1, 2, 4, 8)]
        print(
            f"| {'prefetch, then turn' if prefetch else 'load on the next turn'} | " + " | ".join(cells) + " |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    from benchdata import run_keeping_tables

    raise SystemExit(run_keeping_tables(main))

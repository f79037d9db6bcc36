"""The first nodes of a process's first searches, in plain Python.

Importing numba and loading the cached IDA* kernel costs a process about half a
second, more than many boards take to solve.  Until a search of this process has
needed the kernel, :func:`first_nodes_search` tries each board here first, for at most
:data:`FIRST_NODES` nodes; a board that needs more goes to the kernel (which then
stays loaded, so later boards go straight to it).

The proof is the kernel's: IDA* on an admissible estimate, an answer reported
only from an iteration that began at the threshold every earlier, completed
iteration proved.  The estimate is the larger of wall-aware Manhattan distance
and each group's sum of one-byte table values (the full values, never below the
two-bit copies' relaxed ones; goal tables and linear conflicts are left to the
kernel).  Each table entry read is checked against its file's block digests
before the answer is returned (:mod:`pdb_builder.integrity`).  It never undoes the
last move and prunes nothing else: the kernel's undo-only automaton
(:mod:`solver.search.automaton`), whatever deeper one the searcher has.
"""

from __future__ import annotations

import sys
import time

from pdb_builder.board import Board
from pdb_builder.entries import rank_py, weights

from .state import SearchResult

FIRST_NODES = 1000  # nodes tried here before the kernel takes over (at most about 0.05 s)


def kernel_loaded() -> bool:
    return "solver.search.kernel" in sys.modules


class _Estimate:
    """Manhattan and group sums kept up to date move by move; records each table
    rank read, per lookup."""

    def __init__(self, searcher, cells):
        h = searcher.h
        self.md = h.md.tolist()
        self.lookups = []  # (slots: board tile or -1 for a fixed cell, fixed cells, cellmap, cells, weights, table)
        self.group = [lk.group for lk in h.lookups]
        self.of_tile: dict[int, list[int]] = {}
        for i, lk in enumerate(h.lookups):
            k = len(lk.tiles)
            slots = [t if t > 0 and t in searcher.shape.home else -1 for t in lk.tiles]
            fixed = [int(lk.cellmap[-t - 1]) if s < 0 else -1 for s, t in zip(slots, lk.tiles)]
            w = weights(lk.ncells, k).tolist()
            self.lookups.append((slots, fixed, lk.cellmap.tolist(), lk.ncells, w, lk.table))
            for t in slots:
                if t > 0:
                    self.of_tile.setdefault(t, []).append(i)
        self.reads: list[set] = [set() for _ in h.lookups]
        self.pos = {t: c for c, t in enumerate(cells) if t > 0}
        self.mdsum = sum(self.md[t][c] for t, c in self.pos.items())
        self.val = [self._value(i) for i in range(len(self.lookups))]
        self.sums = [0] * max(h.ngroups, 1)
        for i, v in enumerate(self.val):
            self.sums[self.group[i]] += v

    def _value(self, i: int) -> int:
        slots, fixed, cellmap, ncells, w, table = self.lookups[i]
        r = rank_py([cellmap[self.pos[t]] if t > 0 else f for t, f in zip(slots, fixed)], ncells, w)
        self.reads[i].add(r)
        return int(table[r])

    def value(self) -> int:
        return max(self.mdsum, max(self.sums))

    def move(self, t: int, a: int, b: int) -> list:
        """Tile ``t`` from cell ``a`` to ``b``; returns what :meth:`undo` needs."""
        self.pos[t] = b
        self.mdsum += self.md[t][b] - self.md[t][a]
        old = []
        for i in self.of_tile.get(t, ()):
            v = self._value(i)
            old.append((i, self.val[i]))
            self.sums[self.group[i]] += v - self.val[i]
            self.val[i] = v
        return old

    def undo(self, t: int, a: int, b: int, old: list) -> None:
        self.pos[t] = a
        self.mdsum -= self.md[t][b] - self.md[t][a]
        for i, v in old:
            self.sums[self.group[i]] += v - self.val[i]
            self.val[i] = v


def first_nodes_search(searcher, board: Board, node_limit: int | None = None):
    """IDA* for ``board`` on ``searcher``'s tables in plain Python: the
    :class:`~solver.search.state.SearchResult` when it ends within :data:`FIRST_NODES` nodes
    (solved, or stopped by ``node_limit``), else (None, nodes spent, nodes expanded)."""
    t0 = time.perf_counter()
    nbr = [[int(searcher.nbr[c, j]) for j in range(int(searcher.ndeg[c]))] for c in range(searcher.shape.n)]
    letter = [[str(searcher.letters[c, j]) for j in range(len(nbr[c]))] for c in range(searcher.shape.n)]
    cells = list(board.cells)
    est = _Estimate(searcher, cells)
    h0 = est.value()
    cap = FIRST_NODES if node_limit is None else min(FIRST_NODES, node_limit)
    nodes = expanded = 0
    path: list[str] = []

    def dfs(blank: int, g: int, thresh: int, back: int) -> int:
        """0: found; otherwise the least f above ``thresh`` seen (-1: out of nodes)."""
        nonlocal nodes, expanded
        expanded += 1
        least = 1 << 30
        for j, c in enumerate(nbr[blank]):
            if c == back:
                continue
            if nodes >= cap:
                return -1
            nodes += 1
            t = cells[c]
            cells[blank], cells[c] = t, 0
            old = est.move(t, c, blank)
            h = est.value()
            f = g + 1 + h
            if h == 0:
                path.append(letter[blank][j])
                return 0
            if f <= thresh:
                path.append(letter[blank][j])
                r = dfs(c, g + 1, thresh, blank)
                if r == 0:
                    return 0
                path.pop()
                least = -1 if r < 0 or least < 0 else min(least, r)
            elif least >= 0:
                least = min(least, f)
            est.undo(t, c, blank, old)
            cells[blank], cells[c] = 0, t
            if least < 0:
                return -1
        return least

    names = list(searcher.h.names) or ["manhattan"]
    thresh = h0
    result = None
    if h0 == 0:
        result = SearchResult("", 0, True, 0, 0, time.perf_counter() - t0, "solved", names, 0)
    while result is None:
        r = dfs(board.blank, 0, thresh, -1)
        if r == 0:
            moves = "".join(path)
            result = SearchResult(
                moves, len(moves), True, len(moves), nodes, time.perf_counter() - t0, "solved", names, h0
            )
        elif r < 0:
            if node_limit is not None and nodes >= node_limit:
                result = SearchResult(None, None, False, thresh, nodes, time.perf_counter() - t0, "limit", names, h0)
            else:
                return None, nodes, expanded
        else:
            thresh = r
    result.expanded = expanded
    for lk, ranks in zip(searcher.h.lookups, est.reads):
        if lk.guard is not None:
            lk.guard.check(ranks)
    return result

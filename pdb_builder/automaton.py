"""Duplicate-path pruning by a finite-state machine (Taylor & Korf 1993), for any shape
and wall layout.

What a string of blank moves does to the tiles depends only on the cell the blank
starts on and the string: two strings from one cell that end in the same arrangement
are duplicates, and a depth-first search need follow only one of them.  The automaton
is learnt by a breadth-first search from every free cell, over strings in order of
length, then of their letters (L < R < U < D, the kernel's order of neighbours): the
first string to reach an arrangement is its *canonical* string; a canonical string
plus one move that reaches an arrangement met before is a *forbidden* string.  Every
string up to ``depth`` moves that is not canonical holds a forbidden string, and every
forbidden string has a canonical equivalent that is shorter, or as long and earlier.

The search follows the automaton's state beside the board (an Aho-Corasick machine over
the forbidden strings, each anchored on the cell it starts from, so a state knows the
blank's cell) and never makes a move that completes a forbidden string.  Nothing
optimal is lost: of the optimal solutions, the earliest in that order holds no
forbidden string (replacing one by its equivalent would give an earlier or shorter
solution), so every node on it is generated, within every threshold that an optimal
solution is within, and IDA*'s next threshold never passes the optimal length.

Depth 2 forbids exactly the undo of the last move (every search's least pruning); a
deeper automaton forbids more.  States are the prefixes of the forbidden strings, the
table :attr:`Automaton.delta` one row of four moves per state: the next state, or -1
where the move is pruned (or off the board).  :func:`check_automaton` checks one against
every string of at most its depth, walked in plain Python (``slidepdb verify
--automaton``); when a search deepens its automaton is the solver's
(:mod:`solver.search.automaton`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from .board import MOVES, Shape

PRUNED = -1  # a move that completes a forbidden string, or leaves the board


@dataclass(frozen=True)
class Automaton:
    """A shape's automaton: ``delta[state, move]`` (moves L R U D) the next state or
    :data:`PRUNED`; ``roots[cell]`` the state of the empty string with the blank on
    ``cell`` (-1 on a wall).  ``depth``: the longest forbidden string; ``forbidden``:
    how many there are; ``seconds``: the build's time."""

    depth: int
    delta: np.ndarray
    roots: np.ndarray
    forbidden: int
    seconds: float

    @property
    def states(self) -> int:
        return int(self.delta.shape[0])

    @property
    def nbytes(self) -> int:
        return int(self.delta.nbytes + self.roots.nbytes)


def neighbour_arrays(shape: Shape):
    """``nbr[c, k]``: the ``k``-th free neighbour of ``c`` (L R U D order), ``ndeg[c]``: how
    many; the move letter of each (``c``, ``k``) and its index in L R U D (the automaton's
    column)."""
    n = shape.n
    nbr = np.full((n, 4), -1, dtype=np.int64)
    ndeg = np.zeros(n, dtype=np.int64)
    letters = np.full((n, 4), "?", dtype="<U1")
    ndir = np.zeros((n, 4), dtype=np.int64)
    for c in range(n):
        for m, letter in enumerate(MOVES):
            d = shape.move_target(c, letter)
            if d is not None and d in shape.neighbours[c]:
                nbr[c, ndeg[c]], letters[c, ndeg[c]], ndir[c, ndeg[c]] = d, letter, m
                ndeg[c] += 1
    return nbr, ndeg, letters, ndir


def move_targets(shape: Shape) -> np.ndarray:
    """``tgt[cell, move]``: the cell the blank reaches from ``cell`` by move L, R, U or D;
    -1 where that is off the board or a wall (or ``cell`` is one)."""
    nbr, ndeg, _, ndir = neighbour_arrays(shape)
    tgt = np.full((shape.n, 4), -1, dtype=np.int64)
    for c in shape.free_cells:
        tgt[c, ndir[c, : ndeg[c]]] = nbr[c, : ndeg[c]]
    return tgt


def _undo_only(shape: Shape, tgt: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """The depth-2 machine, made directly (plain Python: no numba to load for it): a root
    per free cell, and a state per move into a cell, which forbids the move back."""
    free = shape.free_cells
    root_of = np.full(shape.n, -1, dtype=np.int64)
    root_of[list(free)] = np.arange(len(free))
    arrivals = [(d, m) for c in free for m in range(4) if (d := int(tgt[c, m])) >= 0]
    state_of = {a: len(free) + i for i, a in enumerate(arrivals)}
    delta = np.full((len(free) + len(arrivals), 4), PRUNED, dtype=np.int64)
    for c in free:
        for m in range(4):
            d = int(tgt[c, m])
            if d < 0:
                continue
            delta[root_of[c], m] = state_of[(d, m)]
            for m_in in range(4):
                if (c, m_in) in state_of and m != m_in ^ 1:  # L R and U D undo each other
                    delta[state_of[(c, m_in)], m] = state_of[(d, m)]
    return delta, root_of, len(arrivals)


def _keep_prefixes(child: np.ndarray, level: np.ndarray, roots: dict, forbidden: int) -> np.ndarray:
    """Which trie nodes are roots or prefixes of a forbidden string (the others are
    never a state: the machine falls back past them)."""
    useful = (child == forbidden).any(axis=1)
    for k in range(int(level.max(initial=0)), -1, -1):  # children before their parents
        us = np.nonzero(level == k)[0]
        kids = child[us]
        below = np.zeros(kids.shape, dtype=bool)
        below[kids >= 0] = useful[kids[kids >= 0]]
        useful[us] |= below.any(axis=1)
    useful[list(roots.values())] = True
    return useful


def build_automaton(shape: Shape, depth: int) -> Automaton:
    """The automaton of ``shape`` forbidding strings of at most ``depth`` moves (>= 2)."""
    if depth < 2:
        raise ValueError("an automaton's depth is at least 2 (the undo of a move)")
    t0 = time.perf_counter()
    tgt = move_targets(shape)
    if depth == 2:
        delta, root_of, forbidden = _undo_only(shape, tgt)
        return Automaton(2, delta.astype(np.int32), root_of, forbidden, time.perf_counter() - t0)
    from .automaton_bfs import FORBIDDEN, trie

    zob = np.random.default_rng(0).integers(0, 2**63, size=(shape.n, shape.n), dtype=np.uint64)
    child, cell, level, root_arr, forbidden = trie(tgt, np.array(shape.free_cells, dtype=np.int64), depth, zob)
    roots = {int(p): int(root_arr[p]) for p in shape.free_cells}
    keep = _keep_prefixes(child, level, roots, FORBIDDEN)
    new = np.full(len(child), -1, dtype=np.int64)
    new[keep] = np.arange(int(keep.sum()))
    child = child[keep]
    child = np.where(child >= 0, new[np.maximum(child, 0)], child)  # dropped nodes become none
    cell, level = cell[keep], level[keep]
    root_of = np.full(shape.n, -1, dtype=np.int64)
    for p, u in roots.items():
        root_of[p] = new[u]
    # Aho-Corasick, a level at a time: a node's failure is its longest proper suffix that is a node
    delta = np.full(child.shape, PRUNED, dtype=np.int64)
    fail = np.full(len(child), -1, dtype=np.int64)
    top = root_of[cell[level == 0]]
    for m in range(4):
        c = tgt[cell[top], m]
        ch = child[top, m]
        fall = np.where(c >= 0, root_of[np.maximum(c, 0)], PRUNED)  # off the root: the empty string at c
        delta[top, m] = np.where(ch >= 0, ch, fall)
        fail[ch[ch >= 0]] = fall[ch >= 0]
    for k in range(1, depth):
        us = np.nonzero(level == k)[0]
        if not len(us):
            break
        for m in range(4):
            ch = child[us, m]
            fall = delta[fail[us], m]
            legal = (tgt[cell[us], m] >= 0) & (ch != FORBIDDEN)
            delta[us, m] = np.where(ch >= 0, ch, np.where(legal, fall, PRUNED))
            fail[ch[ch >= 0]] = fall[ch >= 0]
    return Automaton(depth, delta.astype(np.int32), root_of, forbidden, time.perf_counter() - t0)


@lru_cache(maxsize=8)
def automaton_for(shape: Shape, depth: int) -> Automaton:
    """:func:`build_automaton`, kept in memory for the shape's next search."""
    return build_automaton(shape, depth)


def undo_only(shape: Shape) -> Automaton:
    """The depth-2 automaton: it forbids the undo of the last move, nothing more."""
    return automaton_for(shape, 2)


class AutomatonCheck(NamedTuple):
    """What :func:`check_automaton` found: the legal strings it walked (from every free
    cell, up to the automaton's depth), how many the automaton keeps and prunes, the
    first fault (None: every string as it should be) and the seconds it took."""

    strings: int
    kept: int
    pruned: int
    fault: str | None
    seconds: float


def check_strings(shape: Shape, depth: int) -> int:
    """About how many strings :func:`check_automaton` walks for ``depth``: each free
    cell's canonical strings (at most three moves a step after the first), four moves each."""
    return len(shape.free_cells) * 4 * 3 ** max(depth - 1, 0)


def check_automaton(shape: Shape, a: Automaton) -> AutomatonCheck:
    """Check ``a`` against every move string of at most ``a.depth`` moves from every free
    cell of ``shape``, walked here in plain Python (the shape's own moves, a tuple of
    every cell's content): in order of length, then of letters (L R U D), the first
    string to reach an arrangement must be kept and every other one pruned, so that every
    pruned string has a kept equivalent that is no longer and no kept string is lost.
    Only kept strings are extended: a pruned one's extensions are reached earlier by its
    equivalent's."""
    t0 = time.perf_counter()
    strings = kept = 0
    for start in shape.free_cells:
        first = {tuple(range(shape.n))}
        level = [(tuple(range(shape.n)), start, int(a.roots[start]), "")]
        for _ in range(a.depth):
            nxt = []
            for arr, b, u, s in level:
                for m, letter in enumerate(MOVES):
                    d = shape.move_target(b, letter)
                    if d is None or d not in shape.neighbours[b]:
                        continue
                    moved = list(arr)
                    moved[b], moved[d] = moved[d], moved[b]
                    moved = tuple(moved)
                    strings += 1
                    canonical = moved not in first
                    v = int(a.delta[u, m])
                    if (v >= 0) != canonical:
                        what = "prunes the first string" if canonical else "keeps a string reached before"
                        fault = f"{shape.key} depth {a.depth}: from cell {start}, the automaton {what}: {s + letter}"
                        return AutomatonCheck(strings, kept, strings - kept - 1, fault, time.perf_counter() - t0)
                    if canonical:
                        first.add(moved)
                        kept += 1
                        nxt.append((moved, d, v, s + letter))
            level = nxt
    return AutomatonCheck(strings, kept, strings - kept, None, time.perf_counter() - t0)

"""Last resort: a valid answer for any solvable board, a few tiles at a time.

When optimal, weighted and beam search all give up (typically walled boards whose
tiles must file round a ring or through a corridor, where every estimate misleads),
this places tiles home in stages, the way people solve by hand:

* Tiles are taken in order of their home cell's distance (along free cells) from the
  blank's goal cell, farthest first.  Removing a cell of greatest distance never
  disconnects the rest (each other cell keeps a shortest path to the blank's goal
  through nearer cells); a later candidate whose placing would cut the region is
  skipped.
* A stage's group is the next tile plus every tile whose home would become a dead end
  once the group is placed (peeled repeatedly): a dead end's tile can never change
  again, so the whole group must be right when it is frozen (a ring round walls is
  thus placed in one stage).
* The group goes home by A* over the positions of the group and the blank only (the
  other free tiles are interchangeable, so every path found there is a real sequence
  of moves; h = the group's distances home), in growing tables, weighted once they
  are large.  Tiles already placed are walls.  Goal positions are tried in the order
  the search meets them, keeping the first that leaves a solvable remainder (decided
  exactly by :func:`pdb_builder.solvability.decide`); when none does, the next
  candidate group is tried.
* The last few cells are solved optimally by IDA* on the remaining board (weighted
  IDA* on a larger remainder when no group can be placed).
* A pass can get stuck: on a board whose walls leave one long ring, the last stages meet
  a remainder that is that ring with a short cut round the blank's goal, and no
  table-bounded search finishes it (DevQuiz lines 2663 and 3607).  So passes alternate
  forwards and backwards (from the goal to the board, answer inverted: the stages then
  end round the start's blank), later ones with the farthest-first order jittered.

Answers are long (about twice optimal: nothing is shorter than each stage's path) and,
like every answer, simulated before they are reported.
"""

from __future__ import annotations

import random

import numba as nb
import numpy as np

from pdb_builder.board import MOVE_DELTA, OPPOSITE, WALL, Board, Shape
from pdb_builder.jitload import load_cached
from pdb_builder.packed import compact_neighbours
from pdb_builder.solvability import decide

from ..search.heuristic import manhattan_heuristic
from ..search.limits import Limits
from ..search.searcher import Searcher

TABLE_BITS = 22  # a stage's search stores at most 70% of 2 ** TABLE_BITS states (32 bytes each)
WHOLE_TABLE_BITS = 25  # the same when the group is every tile left (the exact search that ends a board)
WEIGHTED_FROM_BITS = 22  # plain A* in tables below 2**22 entries, then weight 3 (cheaper, longer)
FINAL_CELLS = 9  # free cells left when IDA* finishes the board
GOALS_TRIED = 256  # goal positions of one stage tried for a solvable remainder
FINAL_NODES = 200_000_000  # node limit of the weighted IDA* that finishes a board
PASSES = 12  # forward and backward passes with small tables before the big one
ORDER_NOISE = 2.0  # jitter of the farthest-first order in passes after the first


@nb.njit(cache=True)
def _heap_push(hkey, hstate, n, key, state):
    i = n
    while i > 0:
        up = (i - 1) >> 1
        if hkey[up] <= key:
            break
        hkey[i] = hkey[up]
        hstate[i] = hstate[up]
        i = up
    hkey[i] = key
    hstate[i] = state


@nb.njit(cache=True)
def _heap_pop(hkey, hstate, n):
    """Remove the root of a heap of ``n`` entries (the caller reads it first)."""
    n -= 1
    key, state = hkey[n], hstate[n]
    i = 0
    while True:
        kid = 2 * i + 1
        if kid >= n:
            break
        if kid + 1 < n and hkey[kid + 1] < hkey[kid]:
            kid += 1
        if hkey[kid] >= key:
            break
        hkey[i] = hkey[kid]
        hstate[i] = hstate[kid]
        i = kid
    hkey[i] = key
    hstate[i] = state


@nb.njit(cache=True)
def _slot(keys, mask, state):
    """Slot of ``state`` in the open-addressing table, or of the empty cell where it goes."""
    x = state * 0x9E3779B97F4A7C15  # wraps; fold the high bits down, where every bit of state counts
    i = (x ^ (x >> 29) ^ (x >> 45)) & mask
    while keys[i] != -1 and keys[i] != state:
        i = (i + 1) & mask
    return i


@nb.njit(cache=True)
def _stage_search(start, nbr, ndeg, homes, dist, nfree, keys, parents, weight, max_goals):
    """Weighted A* (f = g + weight * h, h = the group's distances home along free
    cells) over (group tile positions..., blank position), local cell indices encoded
    in base ``nfree``, blank least significant: the other tiles are interchangeable.
    ``keys``/``parents`` (power-of-two size, keys filled with -1) record each state's
    predecessor.  Returns the goal states (group on ``homes``) in the order popped,
    whether the search stopped because the table was 70% full, and the states stored."""
    k = homes.shape[0]
    size = keys.shape[0]
    mask = size - 1
    cap = size * 7 // 10
    goals = np.empty(max_goals, dtype=np.int64)
    ng = 0
    hkey = np.empty(cap + 1, dtype=np.int64)  # each state is pushed once
    hstate = np.empty(cap + 1, dtype=np.int64)
    gval = np.zeros(size, dtype=np.int32)
    pos = np.empty(k + 1, dtype=np.int64)
    s0 = 0
    h0 = 0
    for j in range(k + 1):
        s0 = s0 * nfree + start[j]
        if j < k:
            h0 += dist[j, start[j]]
    i0 = _slot(keys, mask, s0)
    keys[i0] = s0
    parents[i0] = s0
    stored = 1
    _heap_push(hkey, hstate, 0, weight * h0 * 4096, s0)
    n = 1
    while n > 0 and ng < max_goals and stored < cap:
        s = hstate[0]
        _heap_pop(hkey, hstate, n)
        n -= 1
        g = gval[_slot(keys, mask, s)]
        x = s
        h = 0
        for j in range(k, -1, -1):
            pos[j] = x % nfree
            x //= nfree
            if j < k:
                h += dist[j, pos[j]]
        if h == 0:
            goals[ng] = s
            ng += 1
            continue
        b = pos[k]
        for m in range(ndeg[b]):
            c = nbr[b, m]
            t = -1
            for j in range(k):
                if pos[j] == c:
                    t = j
            child = 0
            hc = h
            for j in range(k + 1):
                p = pos[j]
                if j == k:
                    p = c
                elif j == t:
                    p = b
                    hc += dist[j, b] - dist[j, c]
                child = child * nfree + p
            i = _slot(keys, mask, child)
            if keys[i] == -1:
                keys[i] = child
                parents[i] = s
                gval[i] = g + 1
                stored += 1
                _heap_push(hkey, hstate, n, (g + 1 + weight * hc) * 4096 - (g + 1), child)
                n += 1
    return goals[:ng], stored >= cap, stored


def _blank_path(keys, parents, goal, nfree) -> list[int]:
    """Blank cells (local indices) from the start state to ``goal``, start excluded."""
    mask = keys.shape[0] - 1
    path = []
    s = goal
    while True:
        p = int(parents[_slot(keys, mask, s)])
        if p == s:
            break
        path.append(s % nfree)
        s = p
    path.reverse()
    return path


def _region_shape(shape: Shape, region: set[int]) -> Shape:
    """``shape`` with every cell outside ``region`` a wall (placed tiles stay for good)."""
    return Shape(
        shape.width, shape.height, tuple(t if c in region else WALL for c, t in enumerate(shape.goal)), "custom"
    )


def _sub_board(shape: Shape, cells: list[int], region: set[int]) -> Board:
    """The board left to solve in ``region``: every other cell a wall."""
    return Board(_region_shape(shape, region), tuple(t if c in region else WALL for c, t in enumerate(cells)))


def _moves_letters(shape: Shape, blank: int, path) -> str:
    """The move letters of the blank's walk from ``blank`` along the cells of ``path``."""
    letter = {dr * shape.width + dc: m for m, (dr, dc) in MOVE_DELTA.items()}
    out = []
    for c in path:
        out.append(letter[c - blank])
        blank = c
    return "".join(out)


def _place(
    shape: Shape, cells: list[int], frozen: set[int], group: list[int], limits: Limits, whole_bits: int = TABLE_BITS
):
    """Cells the blank visits to bring ``group`` home without touching ``frozen``,
    leaving a solvable remainder; None when there is no such path (or ``limits``, which
    the states stored are spent from, runs out between table sizes)."""
    region = [c for c in shape.free_cells if c not in frozen]
    sub = _region_shape(shape, set(region))
    local = {c: i for i, c in enumerate(region)}  # region is sub's free cells, in their order
    nfree = len(region)
    nbr, ndeg = compact_neighbours(sub)
    where = {t: c for c, t in enumerate(cells)}
    start = np.array([local[where[t]] for t in group] + [local[cells.index(0)]], dtype=np.int64)
    homes = np.array([local[shape.home[t]] for t in group], dtype=np.int64)
    dist = np.array([[sub.cell_distances(shape.home[t])[c] for c in region] for t in group], dtype=np.int64)
    left = set(region) - {shape.home[t] for t in group}
    top = whole_bits if len(group) == nfree - 1 else TABLE_BITS
    for bits in list(range(16, top, 2)) + [top]:  # small tables first: most stages need few states
        room = limits.nodes()
        if room is not None and (1 << bits) * 7 // 10 > room:
            break  # a table this size could store more states than the node limit has left
        keys = np.full(1 << bits, -1, dtype=np.int64)
        parents = np.empty(1 << bits, dtype=np.int64)
        weight = 1 if bits < WEIGHTED_FROM_BITS else 3  # shortest stage paths while they are cheap
        goals, full, stored = _stage_search(start, nbr, ndeg, homes, dist, nfree, keys, parents, weight, GOALS_TRIED)
        limits.spend(stored)
        for g in goals:
            path = [region[i] for i in _blank_path(keys, parents, int(g), nfree)]
            if decide(_sub_board(shape, _apply(cells, path), left)).solvable:
                return path
        if not full or limits.out():
            break
    return None


def _apply(cells: list[int], path) -> list[int]:
    cells = list(cells)
    b = cells.index(0)
    for c in path:
        cells[b], cells[c] = cells[c], 0
        b = c
    return cells


def _fixed_cells(shape: Shape, region: set[int]) -> set[int]:
    """Cells of ``region`` whose tiles the blank can never change: dead ends, peeled
    repeatedly (a tile in a dead end goes out and comes back the same way), except the
    blank's goal cell, which must stay free."""
    fixed: set[int] = set()
    live = set(region)
    grew = True
    while grew:
        grew = False
        for c in sorted(live):
            if c != shape.goal_blank and sum(d in live for d in shape.neighbours[c]) <= 1:
                live.discard(c)
                fixed.add(c)
                grew = True
    return fixed


def _group(shape: Shape, region: set[int], tiles) -> list[int]:
    """``tiles`` and every tile whose home would become a dead end once they are placed
    (their order must be right when the group is frozen), farthest-first order kept."""
    group = list(tiles)
    while True:
        homes = {shape.home[t] for t in group}
        extra = [shape.goal[c] for c in sorted(_fixed_cells(shape, region - homes))]
        if not extra:
            return group
        group += extra


def _candidates(shape: Shape, region: set[int], todo: list[int]):
    """Groups to try next, in the order of ``todo`` (farthest from the blank's goal
    first), each once; a group whose placing would cut the region in two is never tried."""
    seen, out = set(), []
    for t in todo:
        group = _group(shape, region, [t])
        key = frozenset(group)
        left = region - {shape.home[u] for u in group}
        if key in seen or _region_shape(shape, left).component(shape.goal_blank) != left:
            continue
        seen.add(key)
        out.append(group)
    return out


class _OutOfLimits(Exception):
    pass


def _next_stage(shape: Shape, cells, frozen, region, todo, limits: Limits):
    """(group, blank path) of the first candidate group that can be placed, or None."""
    for group in _candidates(shape, region, todo):
        if len(region) ** (len(group) + 1) >= 1 << 62:
            continue
        if limits.out():
            raise _OutOfLimits
        path = _place(shape, cells, frozen, group, limits)
        if path is not None:
            return group, path
    return None


def _one_pass(board: Board, seed: int, whole_bits: int, limits: Limits, node_limit: int) -> str | None:
    """One staged solution of ``board`` (see the module docstring), tiles taken farthest
    first; ``seed`` > 0 perturbs that order (distances jittered by less than two), so
    another pass meets other remainders.  None when it gets stuck or ``limits`` runs out."""
    shape = board.shape
    dist = shape.cell_distances(shape.goal_blank)
    jitter = random.Random(seed)
    noise = {t: (jitter.random() * ORDER_NOISE if seed else 0.0) for t in sorted(shape.home)}
    order = sorted(shape.home, key=lambda t: (-dist[shape.home[t]] + noise[t], -shape.home[t]))
    cells = list(board.cells)
    frozen = set(shape.walls)
    moves = []
    while True:
        region = set(shape.free_cells) - frozen
        todo = [t for t in order if shape.home[t] in region]
        try:
            stage = None if len(region) <= FINAL_CELLS else _next_stage(shape, cells, frozen, region, todo, limits)
        except _OutOfLimits:
            return None
        if stage is None and len(region) > FINAL_CELLS and todo:
            if limits.out():
                return None
            path = _place(shape, cells, frozen, todo, limits, whole_bits)  # no group fits: every tile left at once
            stage = None if path is None else (todo, path)
        if stage is None:
            break
        group, path = stage
        moves.append(_moves_letters(shape, cells.index(0), path))
        cells = _apply(cells, path)
        frozen |= {shape.home[t] for t in group}
    rest = _sub_board(shape, cells, region)
    weight = 100 if len(region) <= FINAL_CELLS else 200
    left = limits.seconds_left()
    if limits.out():
        return None
    result = Searcher(manhattan_heuristic(rest.shape)).solve(
        rest, node_limit=limits.nodes(node_limit), time_limit=left, weight=weight
    )
    limits.spend(result.nodes)
    if result.status != "solved":
        return None
    moves.append(result.moves)
    return "".join(moves)


def reversed_board(board: Board) -> Board:
    """The goal arrangement as a board whose goal is ``board``: solving it backwards
    ends the stages round the start's blank instead of the goal's."""
    return Board(Shape(board.shape.width, board.shape.height, tuple(board.cells), "custom"), tuple(board.shape.goal))


def undo(moves: str) -> str:
    """The moves that undo ``moves`` (the blank walks its path back)."""
    return "".join(OPPOSITE[m] for m in reversed(moves))


def staged_search(
    board: Board, time_limit: float | None = None, node_limit: int = FINAL_NODES, limits: Limits | None = None
) -> str | None:
    """A valid (long) answer for a solvable board, or None.

    Passes as in the module docstring, alternately forwards and backwards (from the goal
    to ``board``, answer inverted), the first with tiles strictly farthest first, later
    ones with the order jittered (seeded: the same board gets the same answer); up to
    ``PASSES`` with the final every-tile-at-once search kept small (a pass that fails
    usually fails there, in a remainder that is one ring with a short cut), then the
    first two again with the big table.  Where a pass cannot place any group, the rest goes to weighted
    IDA* (weight 2, wall-aware Manhattan + linear conflicts, at most ``node_limit``
    nodes).  ``time_limit`` (seconds) and ``limits`` (which the states stored and the
    nodes searched are spent from) are checked before each stage's search: None past them."""
    limits = (limits or Limits()).within(time_limit)
    if not decide(board).solvable:
        return None
    back = reversed_board(board)
    plan = [(seed, TABLE_BITS) for seed in range(PASSES // 2)] + [(0, WHOLE_TABLE_BITS)]
    for seed, whole_bits in plan:
        for backwards in (False, True):
            if limits.out():
                return None
            moves = _one_pass(back if backwards else board, seed, whole_bits, limits, node_limit)
            if moves is not None:
                return undo(moves) if backwards else moves
    return None


load_cached(globals())  # cached kernels load without the compiler (pdb_builder/jitload.py)

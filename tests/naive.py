"""Slow, obvious references that the fast code must match exactly."""

from __future__ import annotations

from collections import deque

from pdb_builder.board import BLANK, WALL, Shape


def successors(shape: Shape, cells: tuple[int, ...]):
    b = cells.index(BLANK)
    for d in shape.neighbours[b]:
        s = list(cells)
        s[b], s[d] = s[d], BLANK
        yield tuple(s)


def bfs_distances(shape: Shape, start=None, max_depth=None) -> dict[tuple[int, ...], int]:
    """Exact distance from ``start`` (default: the goal) to every reachable arrangement."""
    start = shape.goal if start is None else tuple(start)
    dist = {start: 0}
    queue = deque([start])
    while queue:
        s = queue.popleft()
        ds = dist[s]
        if max_depth is not None and ds >= max_depth:
            continue
        for t in successors(shape, s):
            if t not in dist:
                dist[t] = ds + 1
                queue.append(t)
    return dist


def distance(shape: Shape, start) -> int | None:
    """Exact distance from ``start`` to the goal by bidirectional BFS (whole layers,
    the smaller side first; the least meeting over a layer is exact): boards of 12
    cells in seconds, where a whole BFS would hold 239 million states.  None when
    the goal cannot be reached."""
    sides = [{tuple(start): 0}, {shape.goal: 0}]
    fronts = [[tuple(start)], [shape.goal]]
    if tuple(start) == shape.goal:
        return 0
    while fronts[0] and fronts[1]:
        a = 0 if len(fronts[0]) <= len(fronts[1]) else 1
        mine, other = sides[a], sides[1 - a]
        best, nxt = None, []
        for s in fronts[a]:
            d = mine[s] + 1
            for t in successors(shape, s):
                if t in other:
                    best = d + other[t] if best is None else min(best, d + other[t])
                if t not in mine:
                    mine[t] = d
                    nxt.append(t)
        if best is not None:
            return best
        fronts[a] = nxt
    return None


def connected(shape: Shape) -> bool:
    free = shape.free_cells
    return bool(free) and len(shape.component(free[0])) == len(free)


def layouts(width: int, height: int, goal_kind: str = "devquiz", min_walls: int = 0, max_walls: int | None = None):
    """Every wall layout of a size whose free cells are connected (goal blank free)."""
    n = width * height
    keep = n - 1 if goal_kind == "devquiz" else 0
    cells = [c for c in range(n) if c != keep]
    for mask in range(1 << len(cells)):
        walls = [cells[i] for i in range(len(cells)) if mask >> i & 1]
        if len(walls) < min_walls or (max_walls is not None and len(walls) > max_walls):
            continue
        if n - len(walls) < 2:
            continue
        shape = Shape.make(width, height, goal_kind, walls)
        if connected(shape):
            yield shape


def pattern_bfs(shape: Shape, pattern: tuple[int, ...]) -> dict[tuple[int, ...], int]:
    """Additive PDB by brute force: placement -> least cost over blank cells
    (:func:`pattern_state_bfs`)."""
    out: dict[tuple[int, ...], int] = {}
    for (place, _), d in pattern_state_bfs(shape, pattern).items():
        if place not in out or d < out[place]:
            out[place] = d
    return out


def abstract_moves(shape: Shape, place: tuple, blank: int):
    """The abstract states one move from (pattern tile cells ``place``, ``blank``), each
    with its cost: 1 where the blank swaps with a pattern tile, 0 where it moves alone."""
    for nb in shape.neighbours[blank]:
        if nb in place:
            j = place.index(nb)
            yield (place[:j] + (blank,) + place[j + 1 :], nb), 1
        else:
            yield (place, nb), 0


def pattern_state_bfs(shape: Shape, pattern: tuple[int, ...]) -> dict[tuple, int]:
    """Abstract state (pattern tile cells, blank cell) -> cost by brute force: moving a
    pattern tile costs 1, the blank alone costs 0 (Korf & Felner 2002; 0-1 BFS with a
    deque)."""
    goal_place = tuple(shape.home[t] for t in pattern)
    start = (goal_place, shape.goal_blank)
    dist = {start: 0}
    dq = deque([start])
    while dq:
        state = dq.popleft()
        d = dist[state]
        for new, cost in abstract_moves(shape, *state):
            if new not in dist or dist[new] > d + cost:
                dist[new] = d + cost
                if cost:
                    dq.append(new)
                else:
                    dq.appendleft(new)
    return dist


def is_wall(t: int) -> bool:
    return t == WALL

"""Whether a database file is intact and its tables exact (``slidepdb verify``).

Every table is compared with a fresh BFS of its pattern and every two-bit copy is
checked entry by entry; a goal table is certified row by row; the tables' sum is
held against exact distances of real states from a BFS of the board itself.
"""

from __future__ import annotations

import random
import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from ..board import BLANK, Board, Shape
from ..errors import DatabaseError
from ..lookup import evaluate, lookups_for
from ..packed import MAX_LOWERING, neighbour_ranks
from ..storage import open_database
from .lowering import check_packed, check_packed_full
from .one_bit import copy_fault, side_fault, unpaired


@dataclass
class VerifyResult:
    file: str
    ok: bool
    checks: list[str] = field(default_factory=list)
    error: str | None = None


def _exact_distances(shape: Shape, max_states: int, depth: int | None = None):
    """Exact distances of real states: a BFS from the goal, whole if small enough."""
    start = shape.goal
    dist = {start: 0}
    queue = deque([start])
    while queue and len(dist) < max_states:
        s = queue.popleft()
        if depth is not None and dist[s] >= depth:
            continue
        b = s.index(BLANK)
        for d in shape.neighbours[b]:
            t = list(s)
            t[b], t[d] = t[d], BLANK
            t = tuple(t)
            if t not in dist:
                dist[t] = dist[s] + 1
                queue.append(t)
    return dist  # BFS order: every discovered distance is exact, even when cut short


def verify(path, samples: int = 2000, bfs_states: int = 400_000, seed: int = 0, full: bool = True) -> VerifyResult:
    """Format, checksums, and admissibility of every PDB: with ``full``, every entry
    of every table against a fresh BFS of its pattern and every two-bit copy in full;
    always, the tables' sum against exact distances of real states (a BFS of the
    board itself, a different program from the tables' BFS)."""
    res = VerifyResult(str(path), True)
    try:
        db = open_database(path, verify=True, mmap=True)
    except DatabaseError as exc:
        return VerifyResult(str(path), False, error=str(exc))
    res.checks.append(f"format v{db.attrs['format-version']}, {db.kind}, checksums ok")
    if db.kind != "pdb":
        return _verify_goal_table(path, db, full, res)
    shape = db.shape
    if full:
        for i in range(len(db.tables)):
            error, line = _verify_table(path, db, i)
            if error:
                res.ok, res.error = False, error
                return res
            res.checks.append(line)
    exact = _exact_distances(shape, bfs_states)
    states = list(exact.items())
    rng = random.Random(seed)
    if len(states) > samples:
        states = rng.sample(states, samples)
    tables = [(t.tiles, t.data) for t in db.tables]
    lookups = lookups_for(shape, shape, tables, 0, False)
    for i in range(len(db.tables)):
        single = [lookups[i]]
        bad = next(((cells, d) for cells, d in states if evaluate(single, cells, 1)[0] > d), None)
        if bad is not None:
            res.ok = False
            res.error = (
                f"{path}: dataset tables/{i}: value {evaluate(single, bad[0], 1)[0]} exceeds the exact "
                f"distance {bad[1]} of {Board(shape, bad[0])}: inadmissible; rebuild it"
            )
            return res
    worst = max((evaluate(lookups, cells, 1)[0] - d for cells, d in states), default=0)
    if worst > 0:
        res.ok = False
        res.error = f"{path}: the tables' sum exceeds an exact distance by {worst}: inadmissible; rebuild it"
        return res
    deepest = max((d for _, d in states), default=0)
    res.checks.append(f"sum admissible on {len(states)} states with exact distances (up to {deepest} moves)")
    if full:
        return res
    packed = [(i, t) for i, t in enumerate(db.tables) if t.packed is not None]
    for i, t in packed:
        bad = check_packed(np.asarray(t.data), np.asarray(t.packed), shape, len(t.tiles), samples, seed)
        if bad >= 0:
            res.ok = False
            res.error = f"{path}: dataset packed/{i}: disagrees with tables/{i} at placement {bad}; rebuild it"
            return res
    if packed:
        res.checks.append(
            f"two-bit copies agree with the full tables ({len(packed)} tables, {samples} "
            f"placements each and their moves)"
        )
    return res


def _verify_goal_table(path, db, full: bool, res: VerifyResult) -> VerifyResult:
    """A goal table's check: the goal at distance 0, or (``full``) its BFS certificate."""
    from ..goal_table import encode_board, find_key
    from .goal_bfs import check_goal_table

    if not full:
        row = find_key(db.keys, encode_board(db.shape, db.shape.goal))
        if row < 0 or int(db.dist[row]) != 0:
            res.ok, res.error = False, f"{path}: dataset dist: the goal is not at distance 0"
        else:
            res.checks.append("goal at distance 0")
        return res
    # a goal table certifies itself: local rules over every row make every distance exact
    t0 = time.perf_counter()
    bad = check_goal_table(db.shape, db.keys, db.dist, db.depth)
    if bad >= 0:
        res.ok, res.error = (
            False,
            (
                f"{path}: dataset dist: row {bad} (distance {int(db.dist[bad])}) breaks the "
                f"BFS certificate (a neighbour missing, not one move nearer or farther, "
                f"no nearer neighbour, or keys out of order); rebuild it"
            ),
        )
    else:
        res.checks.append(
            f"{db.dist.size:,} states: every distance exact and every state within "
            f"{db.depth} moves present ({time.perf_counter() - t0:.1f} s)"
        )
    return res


def _neighbour_values(shape: Shape, k: int, r: int, stored) -> str:
    """``rank: value`` of placement ``r``'s abstract neighbours, for an error message."""
    return ", ".join(f"{q}: {int(stored[q])}" for q in neighbour_ranks(shape, k, r))


def _verify_table(path, db, i: int) -> tuple[str | None, str]:
    """Table ``i`` of ``db`` in full (see :func:`verify`): (the error or None, the
    line that reports what was checked and how long it took)."""
    from .building import compute_pdb

    t = db.tables[i]
    k = len(t.tiles)
    t0 = time.perf_counter()
    fresh, stats = compute_pdb(db.shape, t.tiles, zero_aware=t.zero is not None)
    stored = np.asarray(t.data)
    differ = np.flatnonzero(stored != fresh)
    if differ.size:
        r = int(differ[0])
        near = _neighbour_values(db.shape, k, r, stored)
        what = "above its exact cost: inadmissible" if stored[r] > fresh[r] else "below its exact cost"
        return (
            f"{path}: dataset tables/{i}: rank {r} holds {int(stored[r])}, {what} {int(fresh[r])} (a fresh "
            f"BFS of the pattern; {differ.size:,} entries differ; stored neighbours {near}); rebuild it"
        ), ""
    del fresh
    line = f"tables/{i} ({k} tiles): {stored.size:,} entries equal a fresh BFS ({time.perf_counter() - t0:.1f} s)"
    if t.zero is not None:
        mine, theirs = np.asarray(t.zero.codes), stats.zero.codes
        differ = np.flatnonzero(mine != theirs)
        if differ.size or t.zero.step != stats.zero.step:
            at = f"rank {int(differ[0])}" if differ.size else f"step {t.zero.step}, not {stats.zero.step}"
            return (
                f"{path}: dataset zero/{i}: {at} differs from a fresh BFS of the pattern's regions "
                f"({differ.size:,} entries differ); rebuild it"
            ), ""
        line += f"; zero/{i}: {np.count_nonzero(mine):,} placements' costs by region of the blank equal a fresh BFS"
        ob = t.zero.one_bit
        if ob is not None:
            t1 = time.perf_counter()
            name = "onebit" if ob.pairs is None else "onebit-codes"  # (where its bits are)
            bits, copy = (ob.bits, ob.codes) if ob.pairs is None else unpaired(ob.codes, ob.pairs, stored)
            bad = copy_fault(stored, mine, t.zero.step, db.shape, k, np.asarray(bits), np.asarray(copy))
            del bits, copy
            if bad >= 0:
                return (
                    f"{path}: dataset {name}/{i}: rank {bad} (value {int(stored[bad])}) or a move from it does "
                    f"not decode to the zero-aware value; rebuild it"
                ), ""
            line += f"; {name}/{i}: every entry and move decodes ({time.perf_counter() - t1:.1f} s)"
            if ob.side is not None:
                bad = side_fault(stored, mine, np.asarray(ob.codes), ob.side, ob.index, ob.shift)
                if bad != -1:
                    at = "its size or shift" if bad < 0 else f"rank {bad}"
                    return (
                        f"{path}: dataset onebit-whole/{i}: {at} does not hold the values of the placements "
                        f"read whole; rebuild it"
                    ), ""
                line += f"; onebit-whole/{i}: the {ob.whole:,} placements read whole"
    if t.packed is not None:
        t1 = time.perf_counter()
        lowering = int(t.attrs.get("max-lowering", MAX_LOWERING))
        bad = check_packed_full(stored, np.asarray(t.packed), db.shape, k, lowering)
        if bad >= 0:
            near = _neighbour_values(db.shape, k, bad, stored)
            return (
                f"{path}: dataset packed/{i}: rank {bad} (full value {int(stored[bad])}; neighbours {near}) "
                f"does not decode from its neighbours or is lowered too far; rebuild it"
            ), ""
        line += f"; packed/{i}: every entry and move decodes ({time.perf_counter() - t1:.1f} s)"
    return None, line

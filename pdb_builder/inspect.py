"""What is built, how strong it is, which boards it serves, and whether it is intact.

* :func:`list_databases` -- one row per file of a database folder;
* :func:`describe` -- one file in detail (histograms, BFS layers);
* :func:`plot_histograms` -- the value histograms as a PNG (matplotlib, optional);
* :func:`coverage` -- for each board of a problem set: the tables that serve it,
  its starting heuristic against wall-aware Manhattan, whether it starts inside
  a goal table; summaries per size and a list of builds that would cover the rest;
* :func:`verify` -- format, version, checksums, and an admissibility spot-check of
  every PDB against exact distances (a goal table's states, or an exhaustive BFS
  of a small shape).
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .board import BLANK, Board, Shape
from .errors import DatabaseError, SlidepdbError
from .lookup import evaluate, group_lookups, lookups_for
from .packed import check_packed, check_packed_full, neighbour_ranks
from .storage import DatabaseCache, default_db_dir, list_databases as _files, open_database

log = logging.getLogger("slidepdb.inspect")


@dataclass
class DbRow:
    file: str
    shape: str
    kind: str
    name: str
    entries: int
    bytes: int
    created: str
    build_seconds: float
    max_h: int
    mean_h: float
    checksum: str  # "ok", "BAD: reason", "unchecked"
    two_bit: str = ""  # pdb: "yes" when every table has its two-bit copy (packed.py), else "no"

    def as_json(self) -> dict:
        return self.__dict__.copy()


def _row(path: Path, verify: bool) -> DbRow:
    try:
        db = open_database(path, verify=verify, mmap=True)
        state = "ok" if verify else "unchecked"
    except DatabaseError as exc:
        try:  # describe what can be read, flag the damage
            db = open_database(path, verify=False, mmap=True)
            state = f"BAD: {str(exc).split(': ', 1)[-1].split(';')[0]}"
        except DatabaseError as exc2:
            return DbRow(path.name, "?", "?", "?", 0, path.stat().st_size, "?", 0.0, 0, 0.0,
                         f"BAD: {str(exc2).split(': ', 1)[-1].split(';')[0]}")
    a = db.attrs
    if db.kind == "pdb":
        entries = sum(int(t.data.size) for t in db.tables)
        max_h = sum(int(t.attrs.get("max", 0)) for t in db.tables)
        mean_h = sum(float(t.attrs.get("mean", 0.0)) for t in db.tables)
        name = str(a.get("partition-name"))
    else:
        entries = int(db.dist.size)
        max_h = int(db.depth)
        mean_h = float(np.asarray(db.dist, dtype=np.float64).mean()) if entries else 0.0
        name = f"depth {db.depth}"
    two_bit = ("yes" if all(t.packed is not None for t in db.tables) else "no") if db.kind == "pdb" else ""
    return DbRow(path.name, db.shape.key, db.kind, name, entries, path.stat().st_size, str(a["created"]),
                 float(a["build-seconds"]), max_h, mean_h, state, two_bit)


def list_databases(db_dir=None, verify: bool = True) -> list[DbRow]:
    return [_row(p, verify) for p in _files(db_dir)]


def describe(path) -> dict:
    """Everything about one file, JSON-ready."""
    db = open_database(path, verify=True, mmap=True)
    out = {"file": str(path), "kind": db.kind, "shape": db.shape.key, "shape-description": db.shape.describe(),
           "attributes": {k: (v.tolist() if isinstance(v, (np.ndarray, np.generic)) else v)
                          for k, v in db.attrs.items() if k != "metadata"},
           "metadata": db.metadata}
    if db.kind == "pdb":
        out["tables"] = [{
            "tiles": list(t.tiles), "entries": int(t.data.size), "mean": float(t.attrs["mean"]),
            "max": int(t.attrs["max"]), "seconds": float(t.attrs.get("seconds", 0.0)),
            "histogram": {str(v): int(c) for v, c in enumerate(t.attrs["histogram"][:255]) if c},
            "unreachable": int(t.attrs["histogram"][255]),
            "layers": [int(x) for x in t.attrs["layers"]],
            "two-bit": t.packed is not None,
        } for t in db.tables]
    else:
        hist = np.bincount(np.asarray(db.dist), minlength=db.depth + 1)
        out["depth"] = db.depth
        out["states"] = int(db.dist.size)
        out["layers"] = [int(x) for x in hist]
    return out


def plot_histograms(path, png) -> None:
    """Value histogram of every table of ``path`` into ``png``."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SlidepdbError("--plot needs matplotlib: pip install 'slidepdb[plot]' "
                            "(or .venv/bin/pip install matplotlib)") from None
    info = describe(path)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    if info["kind"] == "pdb":
        for i, t in enumerate(info["tables"]):
            xs = [int(v) for v in t["histogram"]]
            ax.plot(xs, [t["histogram"][str(v)] for v in xs], marker=".",
                    label=f"table {i} ({len(t['tiles'])} tiles, mean {t['mean']:.2f})")
        ax.set_xlabel("value (pattern moves)")
        ax.set_ylabel("placements")
    else:
        ax.bar(range(len(info["layers"])), info["layers"])
        ax.set_xlabel("distance from the goal")
        ax.set_ylabel("states")
    ax.set_yscale("log")
    ax.set_title(Path(path).name)
    if info["kind"] == "pdb":
        ax.legend()
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)


# -- coverage ------------------------------------------------------------------------------

@dataclass
class BoardCoverage:
    index: int
    board: str
    size: str
    walls: int
    exact: list[str] = field(default_factory=list)
    wall_free: list[str] = field(default_factory=list)
    goal_table: list[str] = field(default_factory=list)
    in_goal_table: int | None = None  # exact distance when the board starts inside a goal table
    manhattan: int = 0
    h0: int = 0

    @property
    def served_by(self) -> str:
        if self.exact:
            return "exact"
        if self.wall_free:
            return "wall-free"
        if self.goal_table:
            return "goal-table"
        return "none"

    def as_json(self) -> dict:
        d = self.__dict__.copy()
        d["served_by"] = self.served_by
        return d


class _Catalogue:
    """The databases of a folder by shape key, opened through a :class:`DatabaseCache`
    (to read each file's shape, then as boards of its shape need them), so a folder of hundreds of layouts never holds more
    descriptors than the open-file limit allows.  A file that does not open is
    warned about (its reason: damaged, foreign, too many open files) and skipped."""

    def __init__(self, db_dir):
        self.paths: dict[str, list[Path]] = {}
        self.cache = DatabaseCache()
        for p in _files(db_dir):
            try:
                key = self.cache.get(p, verify=False).shape.key
            except DatabaseError as exc:
                log.warning("%s; its coverage is not counted", exc)
                continue
            self.paths.setdefault(key, []).append(p)

    def for_shape(self, shape: Shape):
        exact = [self.cache.get(p, verify=False) for p in self.paths.get(shape.key, [])]
        wf = []
        if shape.walls and shape.goal_kind != "custom":
            wf = [db for db in (self.cache.get(p, verify=False) for p in self.paths.get(shape.wall_free().key, []))
                  if db.kind == "pdb"]
        return exact, wf


def coverage(records, db_dir=None) -> list[BoardCoverage]:
    """Per board (in the order of ``records``): the databases that serve it and its
    first estimate with and without them.  Boards are taken shape by shape, so only
    one shape's tables are open at a time."""
    from .goal_table import encode_board, find_key

    cat = _Catalogue(db_dir)
    by_shape: dict[Shape, list] = {}
    for rec in records:
        if rec.board is not None:
            by_shape.setdefault(rec.board.shape, []).append(rec)
    out = []
    for shape, recs in by_shape.items():
        exact, wf = cat.for_shape(shape)
        lookups, names = group_lookups(shape, [("exact", d) for d in exact] + [("wall-free", d) for d in wf])
        for rec in recs:
            b: Board = rec.board
            cov = BoardCoverage(rec.index, str(b), shape.size_text, len(shape.walls),
                                exact=[d.path.name for d in exact if d.kind == "pdb"],
                                wall_free=[d.path.name for d in wf],
                                goal_table=[d.path.name for d in exact if d.kind == "goal-table"])
            cov.manhattan = shape.manhattan(b.cells)
            cov.h0 = max([cov.manhattan] + evaluate(lookups, b.cells, len(names))) if lookups else cov.manhattan
            for d in exact:
                if d.kind == "goal-table":
                    row = find_key(d.keys, encode_board(shape, b.cells))
                    if row >= 0:
                        cov.in_goal_table = int(d.dist[row])
                        cov.h0 = max(cov.h0, cov.in_goal_table)
            out.append(cov)
        del exact, wf, lookups
    return sorted(out, key=lambda c: c.index)


def coverage_summary(covs: list[BoardCoverage]) -> list[dict]:
    """Per size and for the whole set: boards, share served by each kind, mean gain."""
    groups: dict[str, list[BoardCoverage]] = {}
    for c in covs:
        groups.setdefault(c.size, []).append(c)
    rows = []
    for size in sorted(groups, key=lambda s: tuple(int(x) for x in s.split("x"))) + ["all"]:
        cs = covs if size == "all" else groups[size]
        if not cs:
            continue
        n = len(cs)
        rows.append({
            "size": size, "boards": n,
            "exact": sum(c.served_by == "exact" for c in cs),
            "wall-free": sum(c.served_by == "wall-free" for c in cs),
            "goal-table": sum(bool(c.goal_table) for c in cs),
            "none": sum(c.served_by == "none" for c in cs),
            "covered": sum(c.served_by != "none" for c in cs) / n,
            "mean-manhattan": sum(c.manhattan for c in cs) / n,
            "mean-h0": sum(c.h0 for c in cs) / n,
            "mean-gain": sum(c.h0 - c.manhattan for c in cs) / n,
        })
    return rows


def suggest(covs: list[BoardCoverage], records, db_dir=None) -> list[str]:
    """``slidepdb build`` commands for the wall-free database of every size left uncovered
    (with ``--db-dir`` when one was given)."""
    import shlex

    where = f" --db-dir {shlex.quote(str(db_dir))}" if db_dir is not None else ""
    cmds = []
    seen = set()
    goal_of = {rec.index: rec.board.shape.goal_kind for rec in records if rec.board is not None}
    for c in covs:
        if c.served_by != "none":
            continue
        key = (c.size, goal_of[c.index])
        if key in seen:
            continue
        seen.add(key)
        w, h = (int(x) for x in c.size.split("x"))
        mem = " --memory-limit 6G" if w * h >= 25 else ""
        cmds.append(f"slidepdb build {c.size} --goal {key[1]}{mem}{where}")
    return cmds


# -- verify ------------------------------------------------------------------------------------

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
        from .goal_table import check_goal_table, encode_board, find_key
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
            res.ok, res.error = False, (f"{path}: dataset dist: row {bad} (distance {int(db.dist[bad])}) breaks the "
                                        f"BFS certificate (a neighbour missing, not one move nearer or farther, "
                                        f"no nearer neighbour, or keys out of order); rebuild it")
        else:
            res.checks.append(f"{db.dist.size:,} states: every distance exact and every state within "
                              f"{db.depth} moves present ({time.perf_counter() - t0:.1f} s)")
        return res
    shape = db.shape
    if full:
        for i, t in enumerate(db.tables):
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
    for i, t in enumerate(db.tables):
        single = [lookups[i]]
        bad = next(((cells, d) for cells, d in states if evaluate(single, cells, 1)[0] > d), None)
        if bad is not None:
            res.ok = False
            res.error = (f"{path}: dataset tables/{i}: value {evaluate(single, bad[0], 1)[0]} exceeds the exact "
                         f"distance {bad[1]} of {Board(shape, bad[0])}: inadmissible; rebuild it")
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
            res.error = (f"{path}: dataset packed/{i}: disagrees with tables/{i} at placement {bad}; "
                         f"rebuild it")
            return res
    if packed:
        res.checks.append(f"two-bit copies agree with the full tables ({len(packed)} tables, {samples} "
                          f"placements each and their moves)")
    return res


def _verify_table(path, db, i: int) -> tuple[str | None, str]:
    """Table ``i`` of ``db`` in full (see :func:`verify`): (the error or None, the
    line that reports what was checked and how long it took)."""
    from .build import compute_pdb

    t = db.tables[i]
    k = len(t.tiles)
    t0 = time.perf_counter()
    fresh, _ = compute_pdb(db.shape, t.tiles)
    stored = np.asarray(t.data)
    differ = np.flatnonzero(stored != fresh)
    if differ.size:
        r = int(differ[0])
        near = ", ".join(f"{q}: {int(stored[q])}" for q in neighbour_ranks(db.shape, k, r))
        what = "above its exact cost: inadmissible" if stored[r] > fresh[r] else "below its exact cost"
        return (f"{path}: dataset tables/{i}: rank {r} holds {int(stored[r])}, {what} {int(fresh[r])} (a fresh "
                f"BFS of the pattern; {differ.size:,} entries differ; stored neighbours {near}); rebuild it"), ""
    del fresh
    line = f"tables/{i} ({k} tiles): {stored.size:,} entries equal a fresh BFS ({time.perf_counter() - t0:.1f} s)"
    if t.packed is not None:
        t1 = time.perf_counter()
        bad = check_packed_full(stored, np.asarray(t.packed), db.shape, k, int(t.attrs.get("max-lowering", 6)))
        if bad >= 0:
            near = ", ".join(f"{q}: {int(stored[q])}" for q in neighbour_ranks(db.shape, k, bad))
            return (f"{path}: dataset packed/{i}: rank {bad} (full value {int(stored[bad])}; neighbours {near}) "
                    f"does not decode from its neighbours or is lowered too far; rebuild it"), ""
        line += f"; packed/{i}: every entry and move decodes ({time.perf_counter() - t1:.1f} s)"
    return None, line


def rows_as_json(rows) -> str:
    return "\n".join(json.dumps(r.as_json()) for r in rows)

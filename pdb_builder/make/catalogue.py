"""What is built, how strong it is, and which boards it serves.

* :func:`list_databases` -- one row per file of a database folder;
* :func:`describe` -- one file in detail (histograms, BFS layers);
* :func:`plot_histograms` -- the value histograms as a PNG (matplotlib, optional);
* :func:`coverage` -- for each board of a problem set: the tables that serve it,
  its starting heuristic against wall-aware Manhattan, whether it starts inside
  a goal table; summaries per size and a list of builds that would cover the rest.

Whether a file is intact and its tables exact: :mod:`pdb_builder.make.verify`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..board import Board, Shape
from ..db_cache import DatabaseCache
from ..errors import DatabaseError
from ..lookup import evaluate, group_lookups
from ..patterns import BUILD_RATE, num_placements, too_large
from ..storage import database_files, open_database

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
    collection: str = ""  # a collection member: the collection's id (pdb_builder/make/collection.py)
    members: list = field(default_factory=list)  # a collection's row: its member files
    record: dict = field(default_factory=dict, repr=False)  # a member's collection record (not shown)
    zero_aware: str = ""  # pdb: "yes" when every table has zero-aware entries (regions.py), else "no"

    def as_json(self) -> dict:
        out = self.__dict__.copy()
        del out["record"]
        return out


def _row(path: Path, verify: bool) -> DbRow:
    try:
        db = open_database(path, verify=verify, mmap=True)
        state = "ok" if verify else "unchecked"
    except DatabaseError as exc:
        try:  # describe what can be read, flag the damage
            db = open_database(path, verify=False, mmap=True)
            state = f"BAD: {str(exc).split(': ', 1)[-1].split(';')[0]}"
        except DatabaseError as exc2:
            return DbRow(
                path.name,
                "?",
                "?",
                "?",
                0,
                path.stat().st_size,
                "?",
                0.0,
                0,
                0.0,
                f"BAD: {str(exc2).split(': ', 1)[-1].split(';')[0]}",
            )
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
    record = db.metadata.get("collection", {}) if db.kind == "pdb" else {}
    return DbRow(
        path.name,
        db.shape.key,
        db.kind,
        name,
        entries,
        path.stat().st_size,
        str(a["created"]),
        float(a["build-seconds"]),
        max_h,
        mean_h,
        state,
        two_bit,
        str(record.get("id", "")),
        record=record,
        zero_aware=("yes" if all(t.zero is not None for t in db.tables) else "no") if db.kind == "pdb" else "",
    )


def list_databases(db_dir=None, verify: bool = True, collections: bool = True) -> list[DbRow]:
    """One row per file; with ``collections``, one row for the members of each collection
    (``kind`` "collection", their files in ``members``)."""
    rows = [_row(p, verify) for p in database_files(db_dir)]
    if not collections:
        return rows
    out: list[DbRow] = []
    groups: dict[str, list[DbRow]] = {}
    for r in rows:
        if r.collection:
            if r.collection not in groups:
                groups[r.collection] = []
                out.append(r)  # the collection's place: its first member's
            groups[r.collection].append(r)
        else:
            out.append(r)
    return [_collection_row(groups[r.collection]) if r.collection else r for r in out]


def _collection_row(members: list[DbRow]) -> DbRow:
    first = members[0]
    record = first.record
    missing = [m for m in record.get("members", []) if m not in {r.file for r in members}]
    bad = [f"{r.file}: {r.checksum}" for r in members if r.checksum not in ("ok", "unchecked")]
    state = "; ".join(bad + [f"member missing: {m}" for m in missing]) or first.checksum
    return DbRow(
        " + ".join(r.file for r in members),
        first.shape,
        "collection",
        " + ".join(r.name for r in members),
        sum(r.entries for r in members),
        sum(r.bytes for r in members),
        str(record.get("created", first.created)),
        sum(r.build_seconds for r in members),
        max(r.max_h for r in members),
        max(r.mean_h for r in members),
        state,
        "yes" if all(r.two_bit == "yes" for r in members) else "no",
        first.collection,
        [r.file for r in members],
        zero_aware="yes" if all(r.zero_aware == "yes" for r in members) else "no",
    )


def describe(path) -> dict:
    """Everything about one file, JSON-ready."""
    db = open_database(path, verify=True, mmap=True)
    out = {
        "file": str(path),
        "kind": db.kind,
        "shape": db.shape.key,
        "shape-description": db.shape.describe(),
        "attributes": {
            k: (v.tolist() if isinstance(v, (np.ndarray, np.generic)) else v)
            for k, v in db.attrs.items()
            if k != "metadata"
        },
        "metadata": db.metadata,
    }
    if db.kind == "pdb":
        out["tables"] = [
            {
                "tiles": list(t.tiles),
                "entries": int(t.data.size),
                "mean": float(t.attrs["mean"]),
                "max": int(t.attrs["max"]),
                "seconds": float(t.attrs.get("seconds", 0.0)),
                "histogram": {str(v): int(c) for v, c in enumerate(t.attrs["histogram"][:255]) if c},
                "unreachable": int(t.attrs["histogram"][255]),
                "layers": [int(x) for x in t.attrs["layers"]],
                "two-bit": t.packed is not None,
                "zero-aware": None
                if t.zero is None
                else {"step": t.zero.step, "placements with costs by region": int(np.count_nonzero(t.zero.codes))},
                "one-bit": None
                if t.zero is None or t.zero.one_bit is None
                else {
                    "bytes": t.zero.one_bit.nbytes,
                    "placements read whole": t.zero.one_bit.whole,
                    "side table": t.zero.one_bit.side is not None,
                },
            }
            for t in db.tables
        ]
    else:
        hist = np.bincount(np.asarray(db.dist), minlength=db.depth + 1)
        out["depth"] = db.depth
        out["states"] = int(db.dist.size)
        out["layers"] = [int(x) for x in hist]
    return out


def plot_histograms(path, png) -> None:
    """Value histogram of every table of ``path`` into ``png``."""
    from ..plotting import pyplot

    plt = pyplot()
    info = describe(path)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    if info["kind"] == "pdb":
        for i, t in enumerate(info["tables"]):
            xs = [int(v) for v in t["histogram"]]
            ax.plot(
                xs,
                [t["histogram"][str(v)] for v in xs],
                marker=".",
                label=f"table {i} ({len(t['tiles'])} tiles, mean {t['mean']:.2f})",
            )
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
    (to read each file's shape, then as boards of its shape need them), so a folder of
    hundreds of layouts never holds more descriptors than the open-file limit allows.  A file that does not open is
    warned about (its reason: damaged, foreign, too many open files) and skipped."""

    def __init__(self, db_dir):
        self.paths: dict[str, list[Path]] = {}
        self.cache = DatabaseCache()
        for p in database_files(db_dir):
            try:
                key = self.cache.get(p, verify=False).shape.key
            except DatabaseError as exc:
                log.warning("%s; its coverage is not counted", exc)
                continue
            self.paths.setdefault(key, []).append(p)

    def for_shape(self, shape: Shape):
        exact = [self.cache.get(p, verify=False) for p in self.paths.get(shape.key, [])]
        wf = [
            db
            for db in (self.cache.get(p, verify=False) for p in self.paths.get(shape.wall_free_key, []))
            if db.kind == "pdb"
        ]
        return exact, wf


def coverage(records, db_dir=None) -> list[BoardCoverage]:
    """Per board (in the order of ``records``): the databases that serve it and its
    first estimate with and without them.  Boards are taken shape by shape, so only
    one shape's tables are open at a time."""
    from ..goal_table import encode_board, find_key

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
            cov = BoardCoverage(
                rec.index,
                str(b),
                shape.size_text,
                len(shape.walls),
                exact=[d.path.name for d in exact if d.kind == "pdb"],
                wall_free=[d.path.name for d in wf],
                goal_table=[d.path.name for d in exact if d.kind == "goal-table"],
            )
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
        rows.append(
            {
                "size": size,
                "boards": n,
                "exact": sum(c.served_by == "exact" for c in cs),
                "wall-free": sum(c.served_by == "wall-free" for c in cs),
                "goal-table": sum(bool(c.goal_table) for c in cs),
                "none": sum(c.served_by == "none" for c in cs),
                "covered": sum(c.served_by != "none" for c in cs) / n,
                "mean-manhattan": sum(c.manhattan for c in cs) / n,
                "mean-h0": sum(c.h0 for c in cs) / n,
                "mean-gain": sum(c.h0 - c.manhattan for c in cs) / n,
            }
        )
    return rows


def suggest(covs: list[BoardCoverage], records, db_dir=None) -> list[str]:
    """``slidepdb build`` commands for the wall-free database of every size left uncovered
    (with ``--db-dir`` when one was given); a comment for a size no database can serve."""
    import shlex

    where = f" --db-dir {shlex.quote(str(db_dir))}" if db_dir is not None else ""
    cmds = []
    seen = set()
    shape_of = {rec.index: rec.board.shape for rec in records if rec.board is not None}
    for c in covs:
        if c.served_by != "none":
            continue
        shape = shape_of[c.index]
        key = (c.size, shape.goal_kind)
        if key in seen:
            continue
        seen.add(key)
        fault = too_large(shape if shape.goal_kind == "custom" else shape.wall_free())
        if fault:
            cmds.append(f"# {fault}")
            continue
        cmds.append(f"slidepdb build {c.size} --goal {key[1]}{where}  # {build_estimate(shape.wall_free())}")
    return cmds


def build_estimate(shape: Shape, memory_limit: int = 4 << 30, cores: int | None = None) -> str:
    """What ``slidepdb build`` of ``shape`` at ``memory_limit`` (the default) builds and
    costs: its partition, entries, file size (with the two-bit copies), one pattern's BFS
    memory and its time at :data:`~pdb_builder.patterns.BUILD_RATE` on ``cores``."""
    from ..cores import usable_cores
    from ..words import human_bytes, seconds_text
    from .building import default_partition

    part = default_partition(shape, memory_limit)
    n = len(shape.free_cells)
    entries = sum(num_placements(n, len(g)) for g in part.groups)
    cores = cores or usable_cores()
    return (
        f"{part.name}, {entries:,} entries: about {human_bytes(int(entries * 1.25))} on disk, "
        f"{human_bytes(part.bfs_memory(n))} for one pattern's BFS, {seconds_text(entries / BUILD_RATE / cores)} "
        f"on {cores} cores"
    )

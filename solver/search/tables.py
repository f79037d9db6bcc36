"""Find, load (memory-mapped) and assemble the databases that serve a board shape.

For a shape, every one of these is admissible, so the solver takes their max:

* exact-shape PDBs (``SHAPEKEY.pdb.*.h5``), read directly;
* wall-free PDBs of the same size and goal kind: a wall is the tile whose home
  it is, sitting there for good, so each wall slot of a pattern is a fixed cell;
* for square shapes whose walls are symmetric under the main diagonal, each
  partition read a second time through the reflection (Korf & Felner 2002):
  tile u on cell c reads as tile T'(u) on cell T(c).

Loaded files are cached per process (:class:`pdb_builder.db_cache.DatabaseCache`: the
least recently used closed once the open-file limit would be at risk), so a batch
maps each file once while its layouts fit.
"""

from __future__ import annotations

import logging
from pathlib import Path

from pdb_builder.board import Shape
from pdb_builder.db_cache import DatabaseCache
from pdb_builder.errors import DatabaseError, DatabaseGone
from pdb_builder.lookup import group_lookups, serves
from pdb_builder.storage import CHECKSUM_DIGITS, Database, default_db_dir

from .heuristic import Heuristic, manhattan_tables

log = logging.getLogger("slidepdb.solve")

_CACHE = DatabaseCache(lazy=True)  # checksums paid where the search reads (TableReads)


def load(path, verify: bool = True) -> Database:
    return _CACHE.get(path, verify)


def candidate_files(shape: Shape, db_dir=None) -> list[tuple[str, Path]]:
    """(role, path) of the PDB files that could serve ``shape``: exact first."""
    d = default_db_dir(db_dir)
    out = [("exact", p) for p in sorted(d.glob(f"{shape.key}.pdb.*.h5"))]
    if shape.wall_free_key is not None:
        out += [("wall-free", p) for p in sorted(d.glob(f"{shape.wall_free_key}.pdb.*.h5"))]
    return out


def heuristic_for(
    shape: Shape,
    db_dir=None,
    use_lc: bool = True,
    verify: bool = True,
    reflect: bool = True,
    files=None,
    left_out: dict | None = None,
) -> Heuristic:
    """Manhattan (+ linear conflicts) plus every database found for ``shape``; with
    ``files``, those exact-shape database files only (and no goal table).

    The folder's listing is a moment's view: a file listed and gone when it is opened
    was not there.  With ``left_out`` (file path -> reason), a file that cannot be
    read (damaged, unreadable) is left out instead of raising
    :class:`~pdb_builder.errors.DatabaseError`, and so are those it names already;
    ``h.left_out`` says which of this shape's were."""
    md, rowkey, colkey = manhattan_tables(shape)
    h = Heuristic(shape, md, rowkey, colkey, use_lc=use_lc)

    def opened(path):
        key = str(path)
        if left_out is not None and key in left_out:
            h.left_out[path.name] = left_out[key]
            return None
        try:
            return load(path, verify=verify)
        except DatabaseGone:
            if files is not None:
                raise
            return None  # removed since the listing: not there
        except DatabaseError as exc:
            if left_out is None:
                raise
            log.warning("%s; the boards go on without it", exc)
            left_out[key] = h.left_out[path.name] = str(exc)
            return None

    databases = []
    found = candidate_files(shape, db_dir) if files is None else [("exact", Path(p)) for p in files]
    for role, path in found:
        db = opened(path)
        if db is None:
            continue
        if db.kind != "pdb" or serves(db.shape, shape) != role:
            log.warning(
                "%s: not %s %s database for %s; skipped", path, "an" if role[0] in "aeiou" else "a", role, shape.key
            )
            continue
        databases.append((role, db))
    h.lookups, h.names = group_lookups(shape, databases, reflect=reflect)
    goals = sorted(default_db_dir(db_dir).glob(f"{shape.key}.goal.d*.h5")) if files is None else []
    for path in goals:
        db = opened(path)
        if db is None:
            continue
        if db.kind == "goal-table" and db.shape == shape and (h.goal_table is None or db.depth > h.goal_table.depth):
            h.goal_table = db
    read = [db for _, db in databases] + ([h.goal_table] if h.goal_table is not None else [])
    h.checksums = {db.path.name: [c[:CHECKSUM_DIGITS] for c in db.checksums] for db in read}
    h.files = [(db.path, db.ident) for db in read]
    if h.goal_table is not None:
        h.goal_name = f"goal table depth {h.goal_table.depth} ({h.goal_table.path.name})"
    if h.lookups:
        # with databases, linear conflicts rarely win and cost time per node
        h.use_lc = False
    return h

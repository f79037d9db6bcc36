"""The HDF5 database format: its schema (the constants both sides use) and its opening
(the arrays are read and checked by :mod:`pdb_builder.reading`).
:mod:`pdb_builder.make.writing` writes files against the same schema and publishes each
only after this module has re-opened and verified it, so the two cannot drift; reading
never imports the build side.

See ``docs/FORMAT.md`` for the specification.  In short:

* root attributes: ``magic`` = ``slidepdb``, ``format-version`` (integer, separate
  from the package version), ``kind`` (``pdb`` or ``goal-table``), provenance
  (``created``, ``generator``, ``build-seconds``, ``metadata`` as JSON), the
  shape (``shape-width``, ``shape-height``, ``shape-goal``, ``shape-goal-kind``,
  ``shape-key``) and, for ``pdb``, ``ranking-name``, ``ranking-version``,
  ``partition-name``, ``partition`` (JSON list of tile lists);
* ``pdb``: one uint8 dataset per pattern, ``tables/0`` .. ``tables/m-1``, each
  with attributes ``tiles``, ``cells`` (free cells of the shape), ``sha256``,
  ``mean``, ``max``, ``histogram`` (counts of values 0..254, then unreachable),
  ``layers`` (placements first valued at each depth);
* optional ``packed/0`` .. ``packed/m-1``: each table at two bits an entry, the
  solver's copy (``packed.py``), with ``encoding``, ``sha256`` and ``max-lowering``;
* optional (version 2) ``zero/0`` .. ``zero/m-1``: each table's zero-aware entries
  (``regions.py``), one byte per entry, with ``encoding``, ``step`` and ``sha256``;
* optional ``onebit/i`` and ``onebit-codes/i`` beside ``zero/i``: the zero-aware
  table's one-bit copy (``one_bit.py``): a bit per entry (uint8, eight a byte) and the
  codes with the placements read whole marked, with ``encoding``, ``sha256`` and
  ``whole`` (how many are coded 255: read whole); or, the bits folded into the code
  bytes, ``onebit-codes/i`` (each placement's pair index) and ``onebit-pairs/i``
  (uint16[256]: code | bit << 8), both with ``encoding`` ``zero-aware-1bit-pairs-v1``;
  and optional ``onebit-whole/i`` and ``onebit-index/i``: the copy's side table of
  those placements (uint32), with ``encoding``, ``shift`` and ``sha256``;
* ``goal-table``: datasets ``keys`` (uint64, sorted, ``key-words`` words per state)
  and ``dist`` (uint8), with ``depth`` and ``sha256`` attributes.

Layouts: ``contiguous`` (default; unfiltered, memory-mapped on load) or
``compressed`` (chunked, gzip, shuffle, fletcher32; read into memory).
Files are published atomically by the writer (temporary file in the same folder,
re-opened and verified here, then renamed); a damaged, foreign or newer file raises
DatabaseError naming the file, the dataset and how to rebuild.
"""

from __future__ import annotations

import errno
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import h5py
import numpy as np

from .board import Shape
from .entries import ENCODING as PACKED_ENCODING
from .entries import MAX_LOWERING, RANKING_NAME, RANKING_VERSION, num_placements
from .errors import DatabaseError, DatabaseGone
from .integrity import REBUILD_HINT, Guard
from .reading import Reading, attr_str, read_checked, read_zero
from .regions import ZeroTable

MAGIC = "slidepdb"
FORMAT_VERSION = 2  # 2: optional zero-aware entries (``zero/i``); a version 1 file reads as before
OLDEST_SUPPORTED = 1

STORAGE_LAYOUTS = ("contiguous", "compressed")
DB_DIR_ENV = "SLIDEPDB_DB_DIR"
REQUIRED_ROOT = (
    "magic",
    "format-version",
    "kind",
    "created",
    "generator",
    "shape-width",
    "shape-height",
    "shape-goal",
    "shape-goal-kind",
    "shape-key",
    "build-seconds",
    "metadata",
)


def default_db_dir(db_dir=None) -> Path:
    return Path(db_dir or os.environ.get(DB_DIR_ENV) or "databases")


def pdb_filename(shape: Shape, partition_name: str) -> str:
    return f"{shape.key}.pdb.{partition_name}.h5"


def goal_filename(shape: Shape, depth: int) -> str:
    return f"{shape.key}.goal.d{depth}.h5"


@dataclass
class PdbTable:
    tiles: tuple[int, ...]
    data: np.ndarray  # uint8, possibly a read-only memory map
    attrs: dict = field(default_factory=dict)
    packed: np.ndarray | None = None  # two bits an entry (packed.py), when the file has them
    guard: Guard | None = None  # data not checked yet (opened lazily; integrity.py)
    packed_guard: Guard | None = None
    zero: ZeroTable | None = None  # zero-aware entries (regions.py), when the file has them


@dataclass
class Database:
    path: Path
    kind: str
    shape: Shape
    attrs: dict
    tables: list[PdbTable] = field(default_factory=list)  # pdb
    keys: np.ndarray | None = None  # goal-table
    dist: np.ndarray | None = None
    depth: int = 0
    goal_sha256: tuple[str, ...] = ()  # goal-table: the sha256 attributes of keys and dist
    guards: dict = field(default_factory=dict)  # goal-table: "keys"/"dist" -> Guard, when opened lazily
    ident: tuple | None = None  # (device, inode) of the file opened: what a reader locks (pdb_builder.locks)

    @property
    def checksums(self) -> list[str]:
        """The sha256 attribute of each stored array: every table (pdb), keys and dist
        (goal-table)."""
        if self.kind == "pdb":
            return [str(attr_str(t.attrs.get("sha256")) or "") for t in self.tables]
        return list(self.goal_sha256)

    @property
    def partition(self) -> tuple[tuple[int, ...], ...]:
        return tuple(t.tiles for t in self.tables)

    @property
    def metadata(self) -> dict:
        return json.loads(self.attrs.get("metadata", "{}"))


def open_database(
    path, verify: bool = True, mmap: bool = True, _final=None, lazy: bool = False, threads: int = 1
) -> Database:
    """Open and check a database file; raises DatabaseError with a one-line reason.

    ``verify`` checks every array against its checksums now (hashing on ``threads``);
    with ``lazy`` too, a memory-mapped array that has block digests is left unread
    and gets a :class:`~pdb_builder.integrity.Guard`, which its reader must use
    before it reports anything that rests on the array."""
    path = Path(path)
    name = _final or path
    # the file is opened once, and its metadata and tables are read through that one
    # descriptor: a file replaced or removed meanwhile (a rebuild publishing) leaves
    # what was opened whole, never half of one file and half of another
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below, or kept open by the maps made from it
    except FileNotFoundError:
        raise DatabaseGone(f"{name}: no such database; build it with `slidepdb build`") from None
    except OSError as exc:
        raise _unopened(name, exc, "cannot open") from None
    try:
        f = h5py.File(fh, "r")
    except OSError as exc:
        fh.close()
        raise _unopened(name, exc, "not a readable HDF5 file") from None
    st = os.fstat(fh.fileno())
    how = Reading(fh, (fh.name, st.st_dev, st.st_ino), name, mmap, verify, lazy, threads)
    try:
        with fh, f:
            db = _read_database(f, how, _final)
            db.ident = (st.st_dev, st.st_ino)
            return db
    except DatabaseError:
        raise
    except OSError as exc:
        if _out_of_descriptors(exc):
            raise DatabaseError(f"{name}: cannot map its tables: {too_many_open_files()}") from None
        # h5py raises OSError for damaged data (e.g. a fletcher32 mismatch)
        raise DatabaseError(f"{name}: damaged data ({exc}); {REBUILD_HINT}") from None
    except (KeyError, ValueError, TypeError, IndexError, RuntimeError) as exc:
        # a damaged object header or attribute: h5py's KeyError "Unable to open object", bad JSON, ...
        raise DatabaseError(f"{name}: damaged metadata ({type(exc).__name__}: {exc}); {REBUILD_HINT}") from None


def _unopened(name, exc: OSError, what: str) -> DatabaseError:
    """Why ``name`` could not be opened: the open-file limit, or ``what`` and the error."""
    if _out_of_descriptors(exc):
        return DatabaseError(f"{name}: cannot open: {too_many_open_files()}")
    return DatabaseError(f"{name}: {what} ({exc}); {REBUILD_HINT}")


def _out_of_descriptors(exc: OSError) -> bool:
    return exc.errno in (errno.EMFILE, errno.ENFILE) or "too many open files" in str(exc).lower()


def too_many_open_files() -> str:
    """What to do when the process's open-file limit is reached."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    more = (
        f"raise the limit (`ulimit -n {min(hard, 4096)}`)"
        if hard == resource.RLIM_INFINITY or hard > soft
        else "this is also the hard limit: ask for a higher one"
    )
    return f"too many open files (this process may open {soft}); {more} or solve fewer layouts at once"


def _check_pdb_structure(name, shape: Shape, groups, f: h5py.File, packed_tables) -> None:
    """The partition and every table's attributes agree with each other and the shape:
    attributes are outside the checksums, so a damaged one must not pair a table
    with the wrong tiles (an inadmissible read) or go unnoticed."""
    if not isinstance(groups, list) or not groups:
        raise DatabaseError(f"{name}: partition attribute is not a list of tile groups; {REBUILD_HINT}")
    tiles = set(shape.tiles)
    seen: set[int] = set()
    n = len(shape.free_cells)
    for i, group in enumerate(groups):
        ds = f[f"tables/{i}"]
        if (
            not isinstance(group, list)
            or not group
            or not all(isinstance(t, int) for t in group)
            or not set(group) <= tiles
            or seen & set(group)
            or len(set(group)) != len(group)
        ):
            raise DatabaseError(
                f"{name}: partition attribute is not a partition of the shape's tiles "
                f"(group {i}: {group!r}); {REBUILD_HINT}"
            )
        seen |= set(group)
        if [int(t) for t in ds.attrs.get("tiles", [])] != group:
            raise DatabaseError(
                f"{name}: dataset tables/{i} has tiles {[int(t) for t in ds.attrs.get('tiles', [])]}, the "
                f"partition says {group}; {REBUILD_HINT}"
            )
        if int(ds.attrs.get("cells", -1)) != n or ds.shape != (num_placements(n, len(group)),) or ds.dtype != np.uint8:
            raise DatabaseError(
                f"{name}: dataset tables/{i} is {ds.shape} {ds.dtype} for {ds.attrs.get('cells')} "
                f"cells, not one uint8 entry per placement of {len(group)} tiles on {n} cells; "
                f"{REBUILD_HINT}"
            )
        pk = f.get(f"packed/{i}")
        if pk is not None and attr_str(pk.attrs.get("encoding")) == PACKED_ENCODING:  # (others are skipped)
            if pk.shape != ((ds.shape[0] + 3) // 4,) or not 0 <= int(pk.attrs.get("max-lowering", -1)) <= MAX_LOWERING:
                raise DatabaseError(
                    f"{name}: dataset packed/{i} does not fit tables/{i} (size or max-lowering); {REBUILD_HINT}"
                )
    packed = [i for i in range(len(groups)) if f"packed/{i}" in f]
    if packed_tables is not None and sorted(int(i) for i in packed_tables) != packed:
        raise DatabaseError(
            f"{name}: the two-bit copies present ({packed}) are not the ones written "
            f"({[int(i) for i in packed_tables]}); {REBUILD_HINT}"
        )
    extra = [
        f"{where}/{k}"
        for where in ("tables", "zero", "onebit", "onebit-codes")
        for k in f.get(where, {})
        if not (k.isdecimal() and int(k) < len(groups))
    ]
    if extra:
        raise DatabaseError(f"{name}: datasets {', '.join(extra)} are not in the partition; {REBUILD_HINT}")


def _read_database(f: h5py.File, how: Reading, _final) -> Database:
    name = how.name
    a = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
    if a.get("magic") != MAGIC:
        raise DatabaseError(f"{name}: not a slidepdb database (no magic string); {REBUILD_HINT}")
    version = int(a.get("format-version", -1))
    if version > FORMAT_VERSION:
        raise DatabaseError(
            f"{name}: format version {version} is newer than this slidepdb reads "
            f"({FORMAT_VERSION}); upgrade slidepdb (pip install -U slidepdb)"
        )
    if version < OLDEST_SUPPORTED:
        raise DatabaseError(f"{name}: format version {version} is no longer supported; {REBUILD_HINT}")
    missing = [k for k in REQUIRED_ROOT if k not in a]
    if missing:
        raise DatabaseError(f"{name}: attributes {', '.join(missing)} missing; {REBUILD_HINT}")
    goal = tuple(int(x) for x in a["shape-goal"])
    shape = Shape(int(a["shape-width"]), int(a["shape-height"]), goal, a["shape-goal-kind"])
    if shape.key != a["shape-key"]:
        raise DatabaseError(f"{name}: shape attributes disagree with shape-key; {REBUILD_HINT}")
    db = Database(Path(how.fh.name) if _final is None else Path(_final), a["kind"], shape, a)
    if db.kind == "pdb":
        if (a.get("ranking-name"), int(a.get("ranking-version", -1))) != (RANKING_NAME, RANKING_VERSION):
            raise DatabaseError(
                f"{name}: ranking {a.get('ranking-name')} v{a.get('ranking-version')} "
                f"is not this slidepdb's {RANKING_NAME} v{RANKING_VERSION}; "
                f"{REBUILD_HINT}"
            )
        groups = json.loads(a["partition"])
        for i in range(len(groups) if isinstance(groups, list) else 0):
            if f"tables/{i}" not in f:
                raise DatabaseError(f"{name}: dataset tables/{i} missing; {REBUILD_HINT}")
        _check_pdb_structure(name, shape, groups, f, a.get("packed-tables"))
        for i, tiles in enumerate(groups):
            ds = f[f"tables/{i}"]
            tattrs = {k: ds.attrs[k] for k in ds.attrs}
            data, guard = read_checked(f, how, f"tables/{i}")
            packed, packed_guard = None, None
            pk = f.get(f"packed/{i}")  # read only in the encoding this slidepdb knows (checked with the table)
            if pk is not None and attr_str(pk.attrs.get("encoding")) == PACKED_ENCODING:
                packed, packed_guard = read_checked(f, how, f"packed/{i}")
                tattrs["max-lowering"] = int(pk.attrs["max-lowering"])
            zero = read_zero(f, how, i, ds.shape[0]) if f"zero/{i}" in f else None
            db.tables.append(PdbTable(tuple(int(t) for t in tiles), data, tattrs, packed, guard, packed_guard, zero))
    elif db.kind == "goal-table":
        db.depth = int(a["depth"])
        for dsname in ("keys", "dist"):
            if dsname not in f:
                raise DatabaseError(f"{name}: dataset {dsname} missing; {REBUILD_HINT}")
        keys, db.guards["keys"] = read_checked(f, how, "keys")
        dist, db.guards["dist"] = read_checked(f, how, "dist")
        db.guards = {k: g for k, g in db.guards.items() if g is not None}
        db.keys = keys.reshape(-1, int(a["key-words"]))
        db.dist = dist
        db.goal_sha256 = tuple(str(attr_str(f[dsname].attrs.get("sha256")) or "") for dsname in ("keys", "dist"))
    else:
        raise DatabaseError(f"{name}: unknown kind {db.kind!r}; {REBUILD_HINT}")
    return db


CHECKSUM_DIGITS = 16  # a table's sha256 as records name it (journals, certificates): this many hex digits


def stored_checksums(path) -> list[str]:
    """The sha256 attributes of a database file's arrays, in the order of
    :attr:`Database.checksums`, read without loading or checking the arrays."""
    try:
        with h5py.File(path, "r") as f:
            if attr_str(f.attrs.get("kind")) == "pdb":
                return [str(attr_str(f[f"tables/{i}"].attrs.get("sha256")) or "") for i in range(len(f["tables"]))]
            return [str(attr_str(f[name].attrs.get("sha256")) or "") for name in ("keys", "dist")]
    except (OSError, KeyError, ValueError) as exc:
        raise DatabaseError(f"{path}: not a readable database ({exc})") from exc


def database_files(db_dir) -> list[Path]:
    d = default_db_dir(db_dir)
    return sorted(p for p in d.glob("*.h5") if not p.name.startswith("."))

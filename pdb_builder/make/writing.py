"""Writing database files (:mod:`pdb_builder.storage` reads them, and holds the schema
both sides use: the magic string, the format version, the required attributes, the
layouts).  Each file is written to a temporary name beside its final one, re-opened
and verified by the reader, then renamed (:mod:`pdb_builder.atomic`): a killed build
leaves nothing that could be taken for a good file."""

from __future__ import annotations

import datetime as _dt
import json
import time
from pathlib import Path

import h5py
import numpy as np

from .. import __version__, integrity
from ..atomic import atomic_path
from ..board import Shape
from ..cores import share_of
from ..entries import ENCODING as PACKED_ENCODING
from ..entries import RANKING_NAME, RANKING_VERSION
from ..integrity import BLOCK_HASH, digests, sha256
from ..one_bit import PAIRS_ENCODING as ONE_BIT_PAIRS_ENCODING
from ..one_bit import SIDE_ENCODING as ONE_BIT_SIDE_ENCODING
from ..one_bit import WHOLE
from ..regions import ENCODING as ZERO_ENCODING
from ..storage import FORMAT_VERSION, MAGIC, REQUIRED_ROOT, STORAGE_LAYOUTS, open_database
from .lowering import packed_table
from .one_bit import one_bit_copy, paired, side_table, unpaired


def seal(f: h5py.File, dsname: str, arr: np.ndarray, threads: int = 1) -> None:
    """Write ``dsname``'s checksums for its bytes ``arr``: the sha256 attribute and
    the block digests (``blocks/DSNAME``, see :mod:`pdb_builder.integrity`), the
    digests covered by a sha256 of their own.  Replaces any there."""
    block = integrity.BLOCK_SIZE
    whole, blocks = digests(arr, block, threads)
    f[dsname].attrs["sha256"] = whole
    if f"blocks/{dsname}" in f:
        del f[f"blocks/{dsname}"]
    bds = f.create_dataset(f"blocks/{dsname}", data=blocks)
    bds.attrs["block-size"] = block
    bds.attrs["hash"] = BLOCK_HASH
    bds.attrs["sha256"] = sha256(blocks)


def write_provenance(f: h5py.File, kind: str, shape: Shape, seconds: float, metadata: dict, extra: dict) -> None:
    """The one place that writes root attributes; asserts the required keys."""
    attrs = {
        "magic": MAGIC,
        "format-version": FORMAT_VERSION,
        "kind": kind,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "generator": f"slidepdb {__version__}",
        "shape-width": shape.width,
        "shape-height": shape.height,
        "shape-goal": np.array(shape.goal, dtype=np.int16),
        "shape-goal-kind": shape.goal_kind,
        "shape-key": shape.key,
        "build-seconds": float(seconds),
        "metadata": json.dumps(metadata, sort_keys=True),
    }
    attrs.update(extra)
    missing = [k for k in REQUIRED_ROOT if k not in attrs]
    assert not missing, missing
    for k, v in attrs.items():
        f.attrs[k] = v


def dataset(f: h5py.File, name: str, data: np.ndarray, layout: str):
    if layout == "contiguous" or not len(data):
        return f.create_dataset(name, data=data)
    if layout == "compressed":
        return f.create_dataset(
            name, data=data, chunks=(min(len(data), 1 << 20),), compression="gzip", shuffle=True, fletcher32=True
        )
    raise ValueError(f"layout {layout!r}: expected one of {STORAGE_LAYOUTS}")


def write_pdb(
    path,
    shape: Shape,
    partition_name: str,
    built,
    layout: str = "contiguous",
    metadata: dict | None = None,
    two_bit: bool = True,
    threads=1,
    one_bit: bool = False,
    on_step=None,
    need: int | None = None,
) -> tuple[Path, list, float]:
    """Publish a partition's tables atomically at ``path`` (with their two-bit copies,
    ``packed/i``, unless ``two_bit`` is False, and with ``one_bit`` the one-bit copies
    of its zero-aware tables, ``onebit/i``), hashing on ``threads`` (a count or a
    :class:`~pdb_builder.cores.Share`, read at each table).

    ``built`` yields ``(table, stats)`` pattern by pattern; each table goes to the
    temporary file as it comes and is dropped, so a build holds one table at a time
    (and, while its two-bit copy is made, one lowered copy of it).
    ``on_step(pattern index or None, what, seconds)`` after each step that follows a
    pattern's BFS (its checksum, its two-bit copy) and after the whole file is verified.
    ``need``: the file's expected size in bytes, said if the disk runs out of room.
    Returns the path, the stats, and the seconds spent producing the tables."""
    path = Path(path)
    share = share_of(threads)
    tell = on_step or (lambda i, what, seconds: None)
    stats = []
    packed_ids = []
    t0 = time.perf_counter()
    with atomic_path(path, need=need) as tmp:
        with h5py.File(tmp, "w") as f:
            grp = f.create_group("tables")
            for i, (table, st) in enumerate(built):
                if _write_table(f, grp, i, table, st, shape, layout, share, two_bit, one_bit, tell):
                    packed_ids.append(i)
                stats.append(st)
                del table
                f.flush()
            seconds = time.perf_counter() - t0
            meta = dict(metadata or {})
            meta.setdefault("mean-h", float(sum(s.mean for s in stats)))
            write_provenance(
                f,
                "pdb",
                shape,
                seconds,
                meta,
                {
                    "ranking-name": RANKING_NAME,
                    "ranking-version": RANKING_VERSION,
                    "partition-name": partition_name,
                    "partition": json.dumps([list(map(int, s.tiles)) for s in stats]),
                    "layout": layout,
                    "packed-tables": np.array(packed_ids, dtype=np.int16),
                },
            )
        # re-open and verify before publishing (memory-mapped: the checksums stream through the page cache)
        t_step = time.perf_counter()
        open_database(tmp, verify=True, mmap=True, _final=path, threads=share.granted)
        tell(None, "file verified", time.perf_counter() - t_step)
    return path, stats, seconds


def _write_table(
    f, grp, i: int, table, st, shape: Shape, layout: str, share, two_bit: bool, one_bit: bool, tell
) -> bool:
    """Pattern ``i``'s table, its statistics and checksums, with its two-bit copy (unless
    ``two_bit`` is False), its zero-aware entries and (``one_bit``) their one-bit copy;
    whether a two-bit copy was written."""
    ds = dataset(grp, str(i), table, layout)
    ds.attrs["tiles"] = np.array(st.tiles, dtype=np.int16)
    ds.attrs["cells"] = len(shape.free_cells)
    t_step = time.perf_counter()
    seal(f, f"tables/{i}", table, share.granted)
    tell(i, "checksummed", time.perf_counter() - t_step)
    t_step = time.perf_counter()
    ds.attrs["mean"] = float(st.mean)
    ds.attrs["max"] = int(st.max)
    ds.attrs["histogram"] = np.array(st.histogram, dtype=np.int64)
    ds.attrs["layers"] = np.array(st.layers, dtype=np.int64)
    ds.attrs["seconds"] = float(st.seconds)
    pk, lowering = packed_table(table, shape, len(st.tiles)) if two_bit else (None, 0)
    packed = pk is not None
    if packed:  # the two-bit copy the solver reads (packed.py)
        pds = dataset(f, f"packed/{i}", pk, layout)
        pds.attrs["encoding"] = PACKED_ENCODING
        seal(f, f"packed/{i}", pk, share.granted)
        pds.attrs["max-lowering"] = lowering
        del pk
        tell(i, "two-bit copy made and checked", time.perf_counter() - t_step)
    if st.zero is not None:  # zero-aware entries (regions.py)
        zds = dataset(f, f"zero/{i}", st.zero.codes, layout)
        zds.attrs["encoding"] = ZERO_ENCODING
        zds.attrs["step"] = int(st.zero.step)
        seal(f, f"zero/{i}", st.zero.codes, share.granted)
        if one_bit:  # its one-bit copy (one_bit.py)
            t_step = time.perf_counter()
            _write_one_bit(f, i, table, st.zero, shape, len(st.tiles), layout, share.granted)
            tell(i, "one-bit copy made and checked", time.perf_counter() - t_step)
    return packed


ONE_BIT_DATASETS = ("onebit", "onebit-codes", "onebit-pairs", "onebit-whole", "onebit-index")


def _write_one_bit(
    f: h5py.File, i: int, table, zero, shape: Shape, k: int, layout: str, threads: int, old=None
) -> None:
    """Table ``i``'s one-bit copy (:func:`~pdb_builder.make.one_bit.one_bit_copy`, or
    ``old``: the (bits, codes) of one the file holds) into ``f``, its bits folded into
    its code bytes (:func:`~pdb_builder.make.one_bit.paired`), with its side table
    (:func:`_write_side`)."""
    bits, copy = old if old is not None else one_bit_copy(table, zero.codes, zero.step, shape, k)[:2]
    codes, pairs = paired(bits, copy)
    del bits, copy
    whole = int(np.count_nonzero(codes == WHOLE))
    for name, arr in ((f"onebit-codes/{i}", codes), (f"onebit-pairs/{i}", pairs)):
        ods = dataset(f, name, arr, layout)
        ods.attrs["encoding"] = ONE_BIT_PAIRS_ENCODING
        ods.attrs["whole"] = whole
        seal(f, name, arr, threads)
    _write_side(f, i, table, zero.codes, codes, layout, threads)


def _write_side(f: h5py.File, i: int, table, codes, copy, layout: str, threads: int) -> None:
    """The side table of table ``i``'s one-bit copy ``copy``: its placements read whole,
    ``onebit-whole/i``, and where each bucket of them starts, ``onebit-index/i``
    (:func:`~pdb_builder.make.one_bit.side_table`)."""
    side, index, shift = side_table(table, codes, copy)
    for name, arr in ((f"onebit-whole/{i}", side), (f"onebit-index/{i}", index)):
        ods = dataset(f, name, arr, layout)
        ods.attrs["encoding"] = ONE_BIT_SIDE_ENCODING
        ods.attrs["shift"] = shift
        seal(f, name, arr, threads)


def lacks_one_bit(table) -> bool:
    """Whether a loaded table has zero-aware entries without a one-bit copy, or with a
    copy in an older layout: its bits apart or without its side table."""
    ob = None if table.zero is None else table.zero.one_bit
    return table.zero is not None and (ob is None or ob.pairs is None or ob.side is None)


def add_one_bit(path, threads=1) -> int:
    """Give the database ``path`` the one-bit copies its zero-aware tables lack, with
    their side tables, in the layout a build writes (a copy it holds with its bits apart
    or without its side table is written again from it), as a build publishes: a new
    file with every other dataset copied as it is, verified, then renamed over it (the
    caller holds the build's lock, :func:`~pdb_builder.make.building.building`).
    Returns how many tables it wrote copies for."""
    path = Path(path)
    db = open_database(path, verify=True, mmap=True)
    todo = [i for i, t in enumerate(db.tables) if lacks_one_bit(t)]
    if not todo:
        return 0
    share = share_of(threads)
    layout = str(db.attrs.get("layout", "contiguous"))
    drop = {f"{d}/{i}" for d in ONE_BIT_DATASETS for i in todo}
    with atomic_path(path, need=path.stat().st_size * 2) as tmp:
        with h5py.File(path, "r") as src, h5py.File(tmp, "w") as f:
            _copy_except(src, f, drop | {f"blocks/{d}" for d in drop})
            for i in todo:
                t, full = db.tables[i], np.asarray(db.tables[i].data)
                ob = t.zero.one_bit
                old = (
                    None
                    if ob is None
                    else (ob.bits, ob.codes)
                    if ob.pairs is None
                    else unpaired(ob.codes, ob.pairs, full)
                )
                _write_one_bit(f, i, full, t.zero, db.shape, len(t.tiles), layout, share.granted, old)
        open_database(tmp, verify=True, mmap=True, _final=path, threads=share.granted)
    return len(todo)


def _copy_except(src: h5py.File, dst: h5py.File, drop: set) -> None:
    """Every dataset of ``src`` but those named in ``drop`` into ``dst``, as it is, with
    the root's attributes."""
    for k, v in src.attrs.items():
        dst.attrs[k] = v
    names = []
    src.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
    for name in names:
        if name not in drop:
            parent, _, leaf = name.rpartition("/")
            src.copy(src[name], dst.require_group(parent) if parent else dst, name=leaf)


def write_goal_table(
    path,
    shape: Shape,
    depth: int,
    keys: np.ndarray,
    dist: np.ndarray,
    seconds: float,
    layout: str = "contiguous",
    metadata: dict | None = None,
) -> Path:
    path = Path(path)
    with atomic_path(path) as tmp:
        with h5py.File(tmp, "w") as f:
            write_provenance(
                f,
                "goal-table",
                shape,
                seconds,
                dict(metadata or {}),
                {"depth": int(depth), "key-words": int(keys.shape[1]), "layout": layout},
            )
            for name, arr in (("keys", keys), ("dist", dist)):
                dataset(f, name, arr.reshape(-1), layout)
                seal(f, name, arr)
            f["keys"].attrs["shape"] = np.array(keys.shape, dtype=np.int64)
        open_database(tmp, verify=True, mmap=False, _final=path)
    return path

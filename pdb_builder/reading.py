"""Reading a database file's arrays: each memory-mapped or read, and checked against its
checksums now or by its reader later (:class:`~pdb_builder.integrity.Guard`); and a
table's zero-aware and one-bit copies.  :mod:`pdb_builder.storage` opens the file and
reads its schema through these; ``docs/FORMAT.md`` gives the datasets."""

from __future__ import annotations

from typing import NamedTuple

import h5py
import numpy as np

from .errors import DatabaseError
from .integrity import BLOCK_HASH, REBUILD_HINT, Guard, checksum_error, digests, sha256
from .one_bit import ENCODING as ONE_BIT_ENCODING
from .one_bit import PAIRS_ENCODING as ONE_BIT_PAIRS_ENCODING
from .one_bit import SIDE_BITS, OneBitCopy
from .one_bit import SIDE_ENCODING as ONE_BIT_SIDE_ENCODING
from .regions import ENCODING as ZERO_ENCODING
from .regions import ZeroTable


def attr_str(v) -> str | None:
    return v.decode() if isinstance(v, bytes) else v


def _read_array(fh, ds: h5py.Dataset, mmap: bool) -> np.ndarray:
    """``ds`` memory-mapped from the open file ``fh`` (contiguous, uncompressed), or read."""
    offset = ds.id.get_offset()
    if mmap and offset is not None and ds.compression is None and ds.chunks is None:
        return np.memmap(fh, mode="r", dtype=ds.dtype, offset=offset, shape=ds.shape)
    return ds[()]


class Reading(NamedTuple):
    """How a file is read: the one open file ``fh`` and its (path, device, inode), the
    name errors give, whether arrays are memory-mapped, checked (``verify``) and
    checked later by their reader (``lazy``), and the threads a check now hashes on."""

    fh: object
    file: tuple
    name: object
    mmap: bool
    verify: bool
    lazy: bool
    threads: int


def read_checked(f: h5py.File, how: Reading, dsname: str):
    """Dataset ``dsname`` as an array, and its Guard when its check is left to the
    reader (``lazy``, memory-mapped, with block digests); otherwise checked now."""
    name = how.name
    ds = f[dsname]
    data = _read_array(how.fh, ds, how.mmap)
    if not how.verify:
        return data, None
    sha = attr_str(ds.attrs.get("sha256"))
    stored, block = _read_block_digests(f, name, dsname, data)
    if how.lazy and stored is not None and isinstance(data, np.memmap):
        return data, Guard(name, dsname, data, sha, stored, block, ds.id.get_offset(), how.file)
    whole, blocks = digests(data, block, how.threads) if stored is not None else (sha256(data), None)
    if whole != sha:
        raise checksum_error(name, dsname)
    if stored is not None and not np.array_equal(blocks, stored):
        raise checksum_error(name, dsname, "block digests")
    return data, None


def _read_block_digests(f: h5py.File, name, dsname: str, data: np.ndarray):
    """(digests, block size) of ``dsname``, or (None, 0) when the file has none (or
    of a hash this slidepdb does not know); damaged ones raise DatabaseError."""
    bds = f.get(f"blocks/{dsname}")
    if bds is None or attr_str(bds.attrs.get("hash")) != BLOCK_HASH:
        return None, 0
    digests = bds[()]
    block = int(bds.attrs.get("block-size", 0))
    if (
        block < 1
        or block & (block - 1)
        or digests.dtype != np.uint64
        or digests.shape != (-(-data.nbytes // block),)
        or sha256(digests) != attr_str(bds.attrs.get("sha256"))
    ):
        raise DatabaseError(f"{name}: dataset blocks/{dsname} is damaged; {REBUILD_HINT}")
    return digests, block


def read_zero(f: h5py.File, how: Reading, i: int, entries: int) -> ZeroTable | None:
    """Table ``i``'s zero-aware entries (checked now, or by their reader through their
    guard as the table is); None in an encoding this slidepdb does not know."""
    ds = f[f"zero/{i}"]
    if attr_str(ds.attrs.get("encoding")) != ZERO_ENCODING:
        return None
    step = int(ds.attrs.get("step", 0))
    if ds.shape != (entries,) or ds.dtype != np.uint8 or step not in (1, 2):
        raise DatabaseError(
            f"{how.name}: dataset zero/{i} does not fit tables/{i} (size, type or step); {REBUILD_HINT}"
        )
    codes, guard = read_checked(f, how, f"zero/{i}")
    return ZeroTable(codes, step, guard, _read_one_bit(f, how, i, entries))


def _read_one_bit(f: h5py.File, how: Reading, i: int, entries: int) -> OneBitCopy | None:
    """Table ``i``'s one-bit copy, where the file has one in an encoding this slidepdb
    knows: its bits folded into its code bytes (``onebit-pairs/i``) or apart
    (``onebit/i``), with its side table where the file has one."""
    codes = f.get(f"onebit-codes/{i}")
    if codes is None:
        return None
    paired = attr_str(codes.attrs.get("encoding")) == ONE_BIT_PAIRS_ENCODING
    bits = f.get(f"onebit-pairs/{i}" if paired else f"onebit/{i}")
    if bits is None or attr_str(bits.attrs.get("encoding")) != (ONE_BIT_PAIRS_ENCODING if paired else ONE_BIT_ENCODING):
        return None
    want = ((256,), np.uint16) if paired else (((entries + 7) // 8,), np.uint8)
    if (bits.shape, bits.dtype, codes.shape, codes.dtype) != (*want, (entries,), np.uint8):
        raise DatabaseError(
            f"{how.name}: dataset {bits.name.lstrip('/')} does not fit tables/{i} (size or type); {REBUILD_HINT}"
        )
    b, bguard = read_checked(f, how, bits.name.lstrip("/"))
    c, cguard = read_checked(f, how, f"onebit-codes/{i}")
    whole = int(bits.attrs.get("whole", entries))
    guards = [bguard, cguard]
    side, index, shift = None, None, 0
    sds, ids = f.get(f"onebit-whole/{i}"), f.get(f"onebit-index/{i}")
    if sds is not None and ids is not None and attr_str(sds.attrs.get("encoding")) == ONE_BIT_SIDE_ENCODING:
        shift = int(sds.attrs.get("shift", -1))
        buckets = max(1, -(-entries // (1 << shift))) if 0 < shift <= SIDE_BITS else 0
        fits = (sds.ndim, ids.shape, sds.dtype, ids.dtype) == (1, (buckets + 1,), np.uint32, np.uint32)
        if not buckets or not fits or int(ids[buckets]) != sds.shape[0]:
            raise DatabaseError(
                f"{how.name}: dataset onebit-whole/{i} does not fit onebit-codes/{i} (size, type or shift); "
                f"{REBUILD_HINT}"
            )
        side, sguard = read_checked(f, how, f"onebit-whole/{i}")
        index, iguard = read_checked(f, how, f"onebit-index/{i}")
        if iguard is not None:  # checked now (a few MB): a search's reads of the side table stay inside it
            iguard.wait()
        guards.append(sguard)
        whole = sds.shape[0]  # (a copy built before its side table may count fewer: not the codes of 255)
    guards = tuple(g for g in guards if g is not None)
    if paired:
        return OneBitCopy(None, c, guards, whole, side, index, shift, pairs=b)
    return OneBitCopy(b, c, guards, whole, side, index, shift)

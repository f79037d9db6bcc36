"""Checksums a reader pays for only where it reads.

Every array of a database file has a ``sha256`` of its bytes and, in files written
since block digests exist, a ``blocks/NAME`` dataset: the first 8 bytes of the
sha256 of each :data:`BLOCK_SIZE` bytes, itself covered by a ``sha256`` attribute.

``open_database(..., lazy=True)`` (the solver's way) leaves a memory-mapped array
unread and gives it a :class:`Guard`; the solver then

* checks the blocks holding the entries it reads only at the root (the one-byte
  tables behind two-bit copies: a 1-move board reads four entries of 720 MB), and
* hashes the arrays the search reads anywhere (the two-bit copies, goal tables) in
  a background thread while it loads its kernels and searches,

and reports nothing before both are done: a result never rests on an unchecked
byte.  The whole-array hash reads the file into a small buffer, not the map, so
the process's resident memory grows with what the search touches, not with the
file.  ``slidepdb verify`` and every build still check every array whole.
"""

from __future__ import annotations

import hashlib
import os
import threading
import weakref

import numpy as np

from .errors import DatabaseError

BLOCK_SIZE = 1 << 16  # bytes a block digest covers
BLOCK_HASH = "sha256-64"  # the first 8 bytes of each block's sha256, little-endian
_READ = 1 << 23  # bytes a whole-array hash reads at a time
_ENTRIES_KEPT = 1024  # bytes Guard.entry keeps


def sha256(arr: np.ndarray) -> str:
    h = hashlib.sha256()
    flat = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
    for i in range(0, flat.size, _READ):
        h.update(flat[i : i + _READ])
    return h.hexdigest()


def _block_digest(data) -> int:
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "little")


def digests(arr: np.ndarray, block: int | None = None, threads: int = 1) -> tuple[str, np.ndarray]:
    """Its sha256, and the digest of each ``block`` (default :data:`BLOCK_SIZE`) bytes
    of ``arr`` (the last block may be shorter): in one pass on one thread, or the
    blocks shared out among ``threads`` while the calling thread hashes the whole
    (hashlib hashes without the GIL)."""
    block = block or BLOCK_SIZE
    flat = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
    n = -(-flat.size // block)
    out = np.empty(n, dtype=np.uint64)
    if threads <= 1 or n < 4 * threads:
        whole = hashlib.sha256()
        for i in range(n):
            part = flat[i * block : (i + 1) * block]
            whole.update(part)
            out[i] = _block_digest(part)
        return whole.hexdigest(), out

    def blocks(lo: int, hi: int) -> None:
        for i in range(lo, hi):
            out[i] = _block_digest(flat[i * block : (i + 1) * block])

    from concurrent.futures import ThreadPoolExecutor

    step = -(-n // (4 * threads))
    with ThreadPoolExecutor(threads, thread_name_prefix="slidepdb-hash") as ex:
        done = [ex.submit(blocks, lo, min(n, lo + step)) for lo in range(0, n, step)]
        whole = sha256(flat)
        for d in done:
            d.result()
    return whole, out


REBUILD_HINT = "delete it and rebuild it with `slidepdb build`"  # after the message, which names the file


def checksum_error(name, dsname, what: str = "sha256 checksum") -> DatabaseError:
    return DatabaseError(f"{name}: dataset {dsname} fails its {what}; {REBUILD_HINT}", path=name)


_GUARDS: weakref.WeakSet = weakref.WeakSet()


def _after_fork() -> None:  # a lock held by a hashing thread at the fork would stay held in the child
    for g in list(_GUARDS):
        g._lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork)


class Guard:
    """One memory-mapped array whose bytes have not been checked yet.

    ``check(positions)`` checks, at once, the blocks holding those byte positions;
    ``start()`` hashes the whole array in a background thread and ``wait()`` waits
    for it, raising :class:`DatabaseError` (file and dataset named) on a mismatch.
    Thread-safe; a process forked while a hash ran hashes again itself."""

    def __init__(
        self, name, dsname: str, arr: np.ndarray, sha: str, digests: np.ndarray, block: int, offset: int, file
    ):
        self.name, self.dsname = name, dsname
        self.flat = arr.reshape(-1).view(np.uint8)
        self.sha = sha
        self.digests = digests
        self.block = block
        self.offset = offset  # of the array's bytes in the file
        self.file = file  # (path, device, inode) of the file the array was mapped from
        self._checked = np.zeros(len(digests), dtype=np.bool_)
        self._entries: dict[int, int] = {}  # bytes read by entry()
        self._whole = False  # the whole array matched its sha256
        self._error: DatabaseError | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pid = 0
        _GUARDS.add(self)

    @property
    def ok(self) -> bool:
        return self._whole

    def check(self, positions) -> None:
        """Check the blocks holding byte ``positions`` of the array (not yet checked)."""
        if self._whole:
            return
        with self._lock:
            for b in {int(p) // self.block for p in positions}:
                if not self._checked[b]:
                    if _block_digest(self._read(b * self.block, self.block)) != int(self.digests[b]):
                        raise checksum_error(self.name, self.dsname, f"block digest (bytes from {b * self.block})")
                    self._checked[b] = True

    def entry(self, r: int) -> int:
        """Byte ``r`` of the array, its block checked, read from the file (:meth:`_read`;
        the last few read are kept: a search reads its root's again at every restart)."""
        r = int(r)
        v = self._entries.get(r)
        if v is None:
            self.check((r,))
            v = self._read(r, 1)[0]
            with self._lock:
                if len(self._entries) >= _ENTRIES_KEPT:
                    self._entries.clear()
                self._entries[r] = v
        return v

    def _read(self, start: int, size: int) -> bytes:
        """Bytes ``start`` to ``start + size`` of the array (fewer at its end), read from
        its file rather than through the mapping: a read through the mapping makes the
        page cache's pages around it resident too, large pages where a hash read the
        file in order, and a search that reads a table only at its roots would then
        hold a page of it for every root.  Through the mapping where the file there is
        another now or cannot be read."""
        size = max(0, min(size, self.flat.size - start))
        if self.file is not None and self.offset is not None:
            path, dev, ino = self.file
            try:
                fd = os.open(path, os.O_RDONLY)
                try:
                    st = os.fstat(fd)
                    if (st.st_dev, st.st_ino) == (dev, ino):
                        data = os.pread(fd, size, self.offset + start)
                        if len(data) == size:
                            return data
                finally:
                    os.close(fd)
            except OSError:
                pass
        return self.flat[start : start + size].tobytes()

    def start(self) -> None:
        """Hash the whole array in a background thread (once)."""
        with self._lock:
            if self._whole or self._error is not None or (self._thread is not None and self._pid == os.getpid()):
                return
            self._pid = os.getpid()
            self._thread = threading.Thread(target=self._hash, name=f"slidepdb-check {self.dsname}", daemon=True)
            self._thread.start()

    def wait(self) -> None:
        """Wait for :meth:`start`'s hash (starting it if it never ran in this process)."""
        if not self._whole and self._error is None:
            if self._thread is None or self._pid != os.getpid():
                self.start()
            self._thread.join()
        if self._error is not None:
            raise self._error

    def _hash(self) -> None:
        try:
            ok = self._file_sha256() == self.sha
        except OSError:
            ok = sha256(self.flat) == self.sha  # the file moved away: hash the mapped bytes
        with self._lock:
            self._whole = ok
            if not ok:
                self._error = checksum_error(self.name, self.dsname)

    def _file_sha256(self) -> str:
        """The sha256 of the array's bytes read from its file (not through the mapping,
        which would make them resident); OSError when the file there is another now."""
        if self.file is None:
            raise OSError("not memory-mapped")
        path, dev, ino = self.file
        h = hashlib.sha256()
        buf = bytearray(min(_READ, max(self.flat.size, 1)))
        view = memoryview(buf)
        with open(path, "rb", buffering=0) as fh:
            st = os.fstat(fh.fileno())
            if (st.st_dev, st.st_ino) != (dev, ino):
                raise OSError("replaced")
            fh.seek(self.offset)
            done = 0
            while done < self.flat.size:
                n = fh.readinto(view[: min(len(buf), self.flat.size - done)])
                if not n:
                    raise OSError("short read")
                h.update(view[:n])
                done += n
        return h.hexdigest()

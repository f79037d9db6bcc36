"""The databases a process holds open (:class:`DatabaseCache`): the least recently
used let go once their memory maps hold more file descriptors than the process may
spare (:func:`descriptor_budget`), and one whose file changed opened again."""

from __future__ import annotations

import os
from collections import OrderedDict
from pathlib import Path

import numpy as np

from .storage import Database, open_database


def descriptor_budget() -> int:
    """File descriptors a process's cache of open databases may hold: a quarter of
    the open-file limit (the rest for h5py, pipes, numba and the user), at least 16."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return max(16, (soft if soft != resource.RLIM_INFINITY else 1 << 16) // 4)


def descriptors(db: Database) -> int:
    """File descriptors ``db``'s memory-mapped arrays hold (one each)."""
    arrays = [a for t in db.tables for a in (t.data, t.packed)] + [db.keys, db.dist]
    return sum(1 for a in arrays if isinstance(a, np.memmap))


class DatabaseCache:
    """Opened databases by path, the least recently used dropped once their memory
    maps would hold more than ``budget`` descriptors (:func:`descriptor_budget`):
    a run over hundreds of layouts keeps what it uses, not every file it met.  A
    dropped database closes when nothing else holds it; so does one whose file was
    removed (dropped as the next one opens), so that its disk space comes back."""

    def __init__(self, budget: int | None = None, lazy: bool = False):
        self.budget = budget
        self.lazy = lazy  # open with lazy checks (open_database)
        self._open: OrderedDict[tuple[str, bool], tuple[Database, int, tuple]] = OrderedDict()

    def get(self, path, verify: bool = True) -> Database:
        """The database at ``path``, opened again when the file there is another one
        now (rebuilt or replaced: inode, size or modification time changed)."""
        key = (str(Path(path).resolve()), verify)
        try:
            st = os.stat(path)
            ident = (st.st_ino, st.st_size, st.st_mtime_ns)
        except OSError:
            ident = None  # open_database says what is wrong
        if ident is not None and key in self._open and self._open[key][2] == ident:
            self._open.move_to_end(key)
            return self._open[key][0]
        self._open.pop(key, None)
        for held in list(self._open):  # (a copy: a dask worker's threads share the cache) removed files let go
            if not os.path.exists(held[0]):
                self._open.pop(held, None)
        db = open_database(path, verify=verify, mmap=True, lazy=self.lazy)
        self._open[key] = (db, descriptors(db), ident)
        budget = descriptor_budget() if self.budget is None else self.budget
        while len(self._open) > 1 and self.held() > budget:
            self._open.popitem(last=False)
        return db

    def held(self) -> int:
        """Descriptors the open databases hold."""
        return sum(n for _, n, _ in self._open.values())

    def clear(self) -> None:
        self._open.clear()

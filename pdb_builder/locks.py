"""Locks between processes that share a folder: an answer file's, a database folder.

Every lock here is an OS lock (``flock``) on an open file: the kernel drops it when
the process that holds it ends, however it ends (SIGKILL included), so a lock never
outlives its holder and nothing has to tell a stale lock from a live one.

* :func:`hold` takes an exclusive lock on a lock file (``ANSWERS.lock`` beside an
  answer file, ``.NAME.h5.lock`` beside a database being built) and writes who holds
  it (process id, host, start, command) into it, for the message of whoever finds it
  taken.  Released, the lock file is removed; a taker checks that the file it locked
  is still the one at the path (:func:`_locked_at`), so one removed under it is never
  taken for the lock.  A thread may take a lock it already holds again (re-entrant:
  the command line takes a run's lock, and the library it calls takes it again);
  another thread of the same process waits its turn as another process does.
* :func:`reading` takes a shared lock on a database file itself while a search reads
  it; :func:`remove_unless_read` removes a file only under an exclusive lock, taken
  without waiting: a file some process reads is never removed.

A forked child (a worker process) does not keep its parent's locks: what it
inherited is closed in the child (:func:`os.register_at_fork`), so a lock lasts as
long as the process that took it, not its workers.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import sys
import threading
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

_HELD: dict[tuple, list] = {}  # (lock path, thread) -> [file descriptor, how many takers in that thread]
_GUARD = threading.Lock()


def _forget_in_child() -> None:
    for fd, _ in _HELD.values():
        try:
            os.close(fd)
        except OSError:
            pass
    _HELD.clear()


os.register_at_fork(after_in_child=_forget_in_child)


def holder_text(path) -> str:
    """Who holds (or last held) the lock file at ``path``, in words ('' if unknown)."""
    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(d["started"])))
        return f"process {d['pid']} on {d['host']}, started {started}: {d['command']}"
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def _locked_at(path: str, fd: int) -> bool:
    """Whether the file ``fd`` locked is still the one at ``path`` (not removed or
    replaced between the open and the lock)."""
    try:
        a, b = os.stat(path), os.fstat(fd)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


class Unlockable(OSError):
    """The file system of ``path`` takes no locks (some network file systems): what the
    lock would keep apart is not kept apart there."""


def _flock(fd: int, how: int, path: str) -> None:
    try:
        fcntl.flock(fd, how)
    except BlockingIOError:
        raise
    except OSError as exc:
        if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL):
            raise Unlockable(exc.errno, f"{path}: its file system takes no locks ({exc.strerror})") from None
        raise


class Busy(Exception):
    """The lock is held by another process (``holder``: who, in words)."""

    def __init__(self, path, holder: str):
        super().__init__(f"{path}: held by {holder or 'another process'}")
        self.path, self.holder = str(path), holder


def _take(path: str, wait: bool, on_wait=None) -> int:
    """An exclusive lock on the lock file ``path`` (made if missing): its descriptor.
    ``wait``: block until it is free (``on_wait(holder)`` told once, first); else raise
    :class:`Busy` at once."""
    told = False
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            _flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, path)
        except BlockingIOError:
            holder = holder_text(path)
            if not wait:
                os.close(fd)
                raise Busy(path, holder) from None
            if on_wait is not None and not told:
                on_wait(holder)
                told = True
            _flock(fd, fcntl.LOCK_EX, path)
        except OSError:
            os.close(fd)
            raise
        if _locked_at(path, fd):
            return fd
        os.close(fd)  # its holder removed it as it let go: take the new one


@contextmanager
def hold(path, *, wait: bool = False, on_wait=None):
    """Hold the exclusive lock file ``path`` for the block (re-entrant in one thread).
    Without ``wait``, another process's lock raises :class:`Busy` at once; with it, the
    block waits for it (``on_wait(holder)`` told first)."""
    path = os.path.abspath(path)
    key = (path, threading.get_ident())  # re-entrant in one thread; another thread takes its own turn
    with _GUARD:
        mine = _HELD.get(key)
        if mine is not None:
            mine[1] += 1
    if mine is None:
        fd = _take(path, wait, on_wait)
        note = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": time.time(),
            "command": " ".join(Path(sys.argv[0]).name if i == 0 else a for i, a in enumerate(sys.argv)),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(note).encode() + b"\n", 0)
        with _GUARD:
            _HELD[key] = [fd, 1]
    try:
        yield
    finally:
        with _GUARD:
            entry = _HELD[key]
            entry[1] -= 1
            last = entry[1] == 0
            if last:
                del _HELD[key]
        if last:
            try:
                if _locked_at(path, entry[0]):
                    os.unlink(path)  # while still held: a taker that opened it sees it gone (_locked_at)
            finally:
                os.close(entry[0])


@contextmanager
def hold_where_possible(path, *, wait: bool = False, on_wait=None, on_unlockable=None):
    """:func:`hold`, except on a file system that takes no locks: there
    ``on_unlockable(error)`` is told and the block runs without the lock."""
    with ExitStack() as stack:
        try:
            stack.enter_context(hold(path, wait=wait, on_wait=on_wait))
        except Unlockable as exc:
            if on_unlockable is not None:
                on_unlockable(exc)
        yield


class Reading:
    """Shared locks on the files a search reads, for as long as it reads them
    (:func:`reading`); :meth:`close` lets go of them all."""

    def __init__(self):
        self.fds: list[int] = []

    def add(self, path, ident: tuple | None = None) -> bool:
        """A shared lock on the file at ``path``; with ``ident`` (device, inode), only
        while the file there is still that one (what was mapped).  Whether it took one."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)  # a remover holds its lock for a moment only
            st = os.fstat(fd)
            if not _locked_at(str(path), fd) or (ident is not None and (st.st_dev, st.st_ino) != tuple(ident)):
                os.close(fd)
                return False
        except OSError:
            os.close(fd)
            return False
        self.fds.append(fd)
        return True

    def close(self) -> None:
        fds, self.fds = self.fds, []
        for fd in fds:
            os.close(fd)


@contextmanager
def reading(paths):
    """Shared locks on ``paths`` (each a path, or (path, (device, inode)): see
    :meth:`Reading.add`) for the block."""
    r = Reading()
    try:
        for p in paths:
            if isinstance(p, tuple):
                r.add(*p)
            else:
                r.add(p)
        yield r
    finally:
        r.close()


def remove_unless_read(path) -> bool:
    """Remove the file at ``path`` unless some process holds a shared lock on it
    (:func:`reading`): under an exclusive lock, taken without waiting.  Whether it was
    removed (False: read now, or gone)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        try:
            _flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, str(path))
        except (BlockingIOError, Unlockable):  # read now, or no way to know that it is not: kept
            return False
        if not _locked_at(str(path), fd):
            return False
        os.unlink(path)
        return True
    finally:
        os.close(fd)

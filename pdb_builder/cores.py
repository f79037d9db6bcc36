"""The cores and memory a process may use, and the threads a build may run on them now
(:class:`Share`: a count given once, or a grant another process changes while the
build runs; :mod:`pdb_builder.make.share` follows it)."""

from __future__ import annotations

import os

import numpy as np


def usable_cores() -> int:
    """The cores this process may use."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def machine_memory() -> int:
    """This machine's memory in bytes (0 where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # not POSIX
        return 0


class BuildStopped(Exception):
    """A build stopped unfinished because its grant said so (nothing waits on it any more)."""

    def __init__(self, message: str = "stopped unfinished: its grant was withdrawn"):
        super().__init__(message)


RELEASED = -1  # Share.used[0] of a holder that runs one thread from now on, whatever its grant


class Share:
    """The threads a build may run now: ``grant[0]`` (an int64 array, possibly a view
    of memory another process writes), at least 1, or negative to stop the build at
    its next chunk; where the build says how many run (``used[0]``), when someone
    watches."""

    def __init__(self, threads: int | None = None, grant: np.ndarray | None = None, used: np.ndarray | None = None):
        if grant is None:
            grant = np.array([max(1, usable_cores() if threads is None else int(threads))], dtype=np.int64)
        self.grant = grant
        self.used = used

    @property
    def granted(self) -> int:
        return max(1, int(self.grant[0]))

    @property
    def stopped(self) -> bool:
        """A negative grant: the build is to stop (:class:`BuildStopped`)."""
        return int(self.grant[0]) < 0

    def stop(self) -> None:
        """Tell the build to stop at its next chunk (a negative grant)."""
        self.grant[0] = -1

    @property
    def fixed(self) -> bool:
        """Nobody changes the grant: a thread count given once."""
        return self.used is None

    def report(self, running: int) -> None:
        if self.used is not None:
            self.used[0] = running

    def release(self) -> None:
        """From now on its holder runs one thread: the grant's other slots go back to
        whoever hands them out (:data:`RELEASED` in ``used[0]``), until it reports again."""
        self.report(RELEASED)


def share_of(threads) -> Share:
    """``threads`` as a :class:`Share`: a Share, a thread count, or None (every usable core)."""
    return threads if isinstance(threads, Share) else Share(threads)

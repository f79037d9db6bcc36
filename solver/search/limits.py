"""A board's allowance of time and nodes, shared by every search that works on it.

The optimal search, the fallback searches (beam, weighted IDA*, staged search) and
the polishing of a fallback answer all draw on one :class:`Limits`, so a time or
node limit bounds the whole board, not each search separately.  Searches check it
between bounded slices of work (an IDA* slice, a few beam levels, one stage of the
staged search, one polishing window), so a board overruns its deadline by at most
one such slice.
"""

from __future__ import annotations

import time


def scaled(limit, share: float):
    """``share`` of a time or node limit; None (no limit) stays None."""
    return None if limit is None else limit * share


class Limits:
    """A board's limits as they are spent: seconds and nodes left, ``None`` for either
    unbounded.  Limits made by :meth:`within` also stay within their parent and spend
    from it."""

    def __init__(self, seconds: float | None = None, nodes: int | None = None, parent: Limits | None = None):
        self.deadline = None if seconds is None else time.perf_counter() + seconds
        self.nodes_left = None if nodes is None else int(nodes)
        self.spent = 0  # nodes drawn from these limits so far
        self.parent = parent

    def within(self, seconds: float | None = None, nodes: int | None = None) -> Limits:
        """Limits of at most ``seconds`` and ``nodes`` more, inside these."""
        return Limits(seconds, nodes, parent=self)

    def seconds_left(self) -> float | None:
        left = None if self.deadline is None else self.deadline - time.perf_counter()
        up = None if self.parent is None else self.parent.seconds_left()
        return up if left is None else left if up is None else min(left, up)

    def nodes(self, cap: int | None = None) -> int | None:
        """Nodes the next search may use: what is left (never negative), at most ``cap``."""
        left = cap
        for b in self._chain():
            if b.nodes_left is not None:
                left = max(b.nodes_left, 0) if left is None else min(left, max(b.nodes_left, 0))
        return left

    def spend(self, nodes: int) -> None:
        for b in self._chain():
            b.spent += int(nodes)
            if b.nodes_left is not None:
                b.nodes_left -= int(nodes)

    def out(self) -> bool:
        """Whether the time or the nodes are used up."""
        left, nodes = self.seconds_left(), self.nodes()
        return (left is not None and left <= 0) or (nodes is not None and nodes <= 0)

    def _chain(self):
        b = self
        while b is not None:
            yield b
            b = b.parent


_stopping = False  # set by :func:`request_stop` (the CLI's SIGTERM and Ctrl-C handler)
_more = 0  # signals since the first
FORCE_AFTER = 3  # signals after the first that stop the stopping itself (what was finished stays journalled)


def request_stop(signum=None, frame=None):
    """Signal handler of the CLI: SIGTERM (batch schedulers, ``kill``) and Ctrl-C stop a
    run like ``KeyboardInterrupt``, and are remembered, so that an interrupt a library
    turned into another exception on its way out (numba's compiler, interrupted while it
    compiles, raises ``RuntimeError: no compiled object yet``) still stops the run
    instead of counting as one board's error.

    Once a stop is under way, the next signals are let pass: the finished answers are
    being written (``timeout -s INT`` signals a process and then its group: two signals
    at once, the second of which used to cut the answer file's writing short).  The
    :data:`FORCE_AFTER`-th more interrupts the stopping too."""
    global _stopping, _more
    if _stopping:
        _more += 1
        if _more < FORCE_AFTER:
            return
    _stopping = True
    raise KeyboardInterrupt


def stop_settled() -> None:
    """The stop is handled (the finished answers written): SIGTERM and Ctrl-C are
    ignored from now to the exit, so a late one (``timeout -s INT`` signals the process,
    then its group) cannot end the process by the signal while Python shuts down, which
    would replace the exit code 130 with death by the signal."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


def stopping() -> bool:
    """Whether SIGTERM or Ctrl-C has asked this process to stop."""
    return _stopping


def raise_if_stopping() -> None:
    """Between a search's slices: raise ``KeyboardInterrupt`` once a stop was asked.  The
    handler raises it too, but Python drops an exception raised while it runs a callback
    of its own (a weakref's, a finalizer's: "Exception ignored in ..."), and a search
    with no time limit would then go on; the flag the handler set first stays."""
    if _stopping:
        raise KeyboardInterrupt


def interrupt_if_stopping(exc: BaseException) -> None:
    """Where an exception is caught and the work goes on (one board's error, a failed
    build): raise ``KeyboardInterrupt`` instead when ``exc`` came after a stop was asked."""
    if _stopping:
        raise KeyboardInterrupt from exc

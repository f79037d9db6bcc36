"""How one BFS layer is shared among the threads a build may run.

A :class:`~pdb_builder.cores.Share` says how many threads a build may run *now*: a fixed number
(``slidepdb build --threads``), or a cell of memory that whoever shares out the
machine sets at any moment (``slidepdb run`` gives a build the worker slots that
no board searches, :mod:`solver.run.slots`, through memory shared with the worker
process).  :func:`run_layer` runs a layer's kernel on that many Python threads;
the kernel (numba, without the GIL) takes chunks of placements one at a time from
a shared counter and reads the grant before each chunk, so a thread above a lowered
grant stops within a chunk, and a raised grant starts more threads within
:data:`POLL` seconds.  The threads are the build's own: nothing depends on numba's
threading layer, so a worker process forked from one that ran parallel kernels
builds on as many threads as it is given.
"""

from __future__ import annotations

import threading

import numpy as np

from ..cores import BuildStopped, Share

POLL = 0.05  # seconds between looks at the grant while a layer runs
CHUNKS = 4096  # a layer's placements are cut into about this many chunks
MIN_CHUNK = 1024  # placements a chunk holds at least


def chunk_size(total: int) -> int:
    return max(MIN_CHUNK, -(-total // CHUNKS))


def run_layer(share: Share, kernel, total: int, *args) -> tuple[int, int]:
    """``kernel(counter, grant, me, chunk, *args)`` on up to ``share.granted`` threads
    (``me`` 0, 1, ...), following the grant while the layer runs, until the chunks
    of ``total`` placements are taken and done; the threads' (valued, marked) summed.
    A negative grant stops the layer: :class:`~pdb_builder.cores.BuildStopped`."""
    chunk = chunk_size(total)
    nchunks = -(-total // chunk)
    counter = np.zeros(1, dtype=np.int64)
    if share.stopped:
        raise BuildStopped
    if share.fixed and share.granted == 1:
        return kernel(counter, share.grant, 0, chunk, *args)
    results: list = []
    errors: list = []

    def work(me: int) -> None:
        try:
            results.append(kernel(counter, share.grant, me, chunk, *args))
        except BaseException as exc:  # noqa: BLE001 - handed to the calling thread
            errors.append(exc)

    threads: dict[int, threading.Thread] = {}
    try:
        while not errors and not share.stopped:
            for me in range(share.granted):
                t = threads.get(me)
                if (t is None or not t.is_alive()) and counter[0] < nchunks:
                    t = threads[me] = threading.Thread(target=work, args=(me,), name=f"slidepdb-bfs {me}", daemon=True)
                    t.start()
            alive = [t for t in threads.values() if t.is_alive()]
            share.report(len(alive))
            if not alive and counter[0] >= nchunks:
                break
            if alive:
                alive[0].join(POLL)
    finally:
        if errors or any(t.is_alive() for t in threads.values()):  # stopped: no chunk is taken any more
            counter[0] = nchunks
        for t in threads.values():
            t.join()
        share.report(0)
    if errors:
        raise errors[0]
    if share.stopped:  # (its threads left at their next chunk)
        raise BuildStopped
    return sum(v for v, _ in results), sum(m for _, m in results)

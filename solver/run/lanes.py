"""Thread grants shared between the parent and its local workers: a lane each for
the jobs and boards running (:class:`Lanes`), read in a worker as a
:class:`~pdb_builder.cores.Share` (:func:`lane_share`)."""

from __future__ import annotations

import numpy as np

from pdb_builder.cores import RELEASED, Share


def lane_share(cells: np.ndarray, lane: int) -> Share:
    """The threads lane ``lane`` of ``cells`` (:attr:`Lanes.cells`) grants: as many as
    whoever keeps the lanes gives it while it runs."""
    return Share(grant=cells[lane, 0:1], used=cells[lane, 1:2])


class Lanes:
    """The thread grants of the jobs and boards running in local worker processes, in
    memory the workers share: a lane ``(grant, threads running)`` each.  The parent
    gives the slots no waiting item can use (nothing ready to start) to the running
    jobs, and to the running boards when no job runs; it lowers their grants as soon
    as items are ready, the boards' first.  A job's threads above a lowered grant stop
    within a chunk of a BFS layer (:mod:`pdb_builder.make.share`), a board's at the end
    of a window of its split search (:mod:`solver.search.threads`), and the slot
    counts as taken until they have."""

    def __init__(self, count: int, ctx=None):
        import multiprocessing as mp

        self.raw = (ctx or mp).RawArray("q", 2 * count)
        self.cells = self.view(self.raw)
        self._free = list(range(count - 1, -1, -1))
        self._lane: dict[int, int] = {}  # id(item) -> its lane
        self._jobs: set[int] = set()  # the lanes of jobs
        self._fixed: set[int] = set()  # the lanes whose grant is never changed

    @staticmethod
    def view(raw) -> np.ndarray:
        return np.frombuffer(raw, dtype=np.int64).reshape(-1, 2)

    def open(self, item, job: bool, fixed: int | None = None) -> int:
        """A lane for ``item``, a build job (``job``) or a board, granted one thread, or
        ``fixed`` threads that :meth:`share` never changes."""
        lane = self._free.pop()
        self.cells[lane] = (fixed or 1, 0)
        self._lane[id(item)] = lane
        if job:
            self._jobs.add(lane)
        if fixed is not None:
            self._fixed.add(lane)
        return lane

    def stop(self, job) -> None:
        """Ask ``job`` to stop at its next chunk (a negative grant)."""
        self.cells[self._lane[id(job)], 0] = -1

    def close(self, item) -> None:
        lane = self._lane.pop(id(item))
        self.cells[lane] = (0, 0)
        self._jobs.discard(lane)
        self._fixed.discard(lane)
        self._free.append(lane)

    @property
    def full(self) -> bool:
        return not self._free

    def taken(self) -> int:
        """Slots the running items hold: each its grant, or its threads still running above
        a lowered one; one, for a board whose search has released its grant (its fallback)."""
        grant, used = self.cells[:, 0], self.cells[:, 1]
        return sum(1 if used[k] == RELEASED else max(1, int(grant[k]), int(used[k])) for k in self._lane.values())

    def held(self) -> int:
        """Slots the running items' grants hold, whatever their threads do now: one for a
        board that released its grant or a job told to stop."""
        grant, used = self.cells[:, 0], self.cells[:, 1]
        return sum(1 if used[k] == RELEASED else max(1, int(grant[k])) for k in self._lane.values())

    def balance(self, slots: int) -> None:
        """Keep the grants within ``slots`` where nobody knows what waits to start (a dask
        worker's tasks: the cluster hands them out): grants above the slots are lowered,
        the boards' first, and the idle slots go to the jobs, or to the boards when no job
        runs (:meth:`share`)."""
        over = self.held() - slots
        if over > 0:
            self.share(0, over)
        else:
            self.share(slots - self.taken(), 0)

    def share(self, spare: int, ready: int) -> None:
        """With nothing ``ready`` to start, the ``spare`` slots to the running jobs, the
        fewest-threaded first, or to the running boards when no job runs; with items
        ready and fewer slots spare, the largest grants lowered by what the ready items
        lack, the boards' before the jobs'."""
        grant, used = self.cells[:, 0], self.cells[:, 1]
        lanes = [  # (not those told to stop, nor fixed ones)
            k for k in self._lane.values() if grant[k] > 0 and used[k] != RELEASED and k not in self._fixed
        ]
        if not lanes:
            return
        if ready == 0:
            takers = [k for k in lanes if k in self._jobs] or lanes
            for _ in range(max(spare, 0)):
                grant[min(takers, key=lambda k: grant[k])] += 1
            return
        for _ in range(ready - max(spare, 0)):
            k = max(lanes, key=lambda k: (k not in self._jobs, grant[k]))
            if grant[k] <= 1:
                k = max(lanes, key=lambda k: grant[k])
                if grant[k] <= 1:
                    break
            grant[k] -= 1

import random
import time
from pathlib import Path

import numpy as np
import pytest

from pdb_builder.cores import Share, usable_cores

DATA = Path(__file__).resolve().parents[1] / "data"
MAX_TEST_WORKERS = 8  # pytest-xdist's "-n auto": the cores, at most this many (each holds about 1 GB)


def pytest_xdist_auto_num_workers(config):
    return max(1, min(usable_cores(), MAX_TEST_WORKERS))


def data_file(*parts) -> Path:
    """A benchmark file of the repository's ``data/`` (its README names each source)."""
    path = DATA.joinpath(*parts)
    assert path.exists(), f"benchmark data not found at {path}: data/ is part of the repository"
    return path


def script_module(name: str):
    """A module of scripts/ (which is not a package), imported by name."""
    import importlib
    import sys

    scripts = str(Path(__file__).resolve().parents[1] / "scripts")
    sys.path.insert(0, scripts)
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(scripts)


def walk_cells(shape, steps: int, seed: int) -> list[int]:
    """The cells of a board ``steps`` random moves of the blank from ``shape``'s goal
    (the moves come from the package's neighbour table), seeded."""
    rng = random.Random(seed)
    cells = list(shape.goal)
    b = cells.index(0)
    for _ in range(steps):
        d = rng.choice(list(shape.neighbours[b]))
        cells[b], cells[d] = cells[d], cells[b]
        b = d
    return cells


def flip_bit(path, dsname: str, at: int, mask: int = 0x01) -> None:
    """Flip bits ``mask`` of byte ``at`` of dataset ``dsname``'s data in the file ``path``
    (a damaged table, as a bad disk or a stray write would leave it)."""
    import h5py

    with h5py.File(path, "r") as f:
        where = f[dsname].id.get_offset() + at
    with open(path, "r+b") as fh:
        fh.seek(where)
        b = fh.read(1)[0]
        fh.seek(where)
        fh.write(bytes([b ^ mask]))


SLICE_SIZES = {(3, 3), (3, 4), (4, 3)}


@pytest.fixture(scope="session")
def devquiz_slice(tmp_path_factory):
    """The first 3x3, 3x4 and 4x3 boards of the DevQuiz file, walled or not, in file order."""
    lines = data_file("devquiz2011", "problems.txt").read_text().split("\n")
    peer = data_file("devquiz2011", "peer_answers", "koron.txt").read_text().split("\n")
    picked, per, theirs = [], {}, []
    for k, line in enumerate(lines[2:]):
        if not line:
            continue
        w, h, cells = line.split(",")
        key = (int(w), int(h), "=" in cells)
        if (key[0], key[1]) in SLICE_SIZES and per.get(key, 0) < 3:
            per[key] = per.get(key, 0) + 1
            picked.append(line)
            theirs.append(peer[k])
    d = tmp_path_factory.mktemp("slice")
    f = d / "slice.txt"
    f.write_text("\n".join([lines[0], str(len(picked))] + picked) + "\n")
    (d / "koron-slice.txt").write_text("\n".join(theirs) + "\n")
    return f


def truth(rec) -> int:
    """Optimal length by an independent search: bidirectional BFS (tests/naive.py)."""
    from .naive import distance

    return distance(rec.board.shape, rec.board.cells)


def timeline(out) -> list[dict]:
    """The rows of the timeline a run kept beside its answer file ``out``."""
    import csv

    from solver.run.files import RunFiles

    with open(RunFiles(out).timeline, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture
def problems(tmp_path):
    """A small DevQuiz-format file: seven boards of four 3x3 and 2x4 shapes, walled and
    not, drawn by random walks, then one unsolvable board (line 10)."""
    from pdb_builder.board import Shape

    from .test_inspect import walk

    shapes = [Shape.devquiz(3, 3), Shape.devquiz(3, 3, [4]), Shape.devquiz(2, 4), Shape.devquiz(3, 3, [1, 3])]
    lines = ["99 99 99 99", "8"] + [walk(shapes[i % 4], seed=i) for i in range(7)] + ["3,3,213456780"]
    f = tmp_path / "p.txt"
    f.write_text("\n".join(lines) + "\n")
    return f


def bfs_lengths(records) -> dict[int, int]:
    """Each solvable record's optimal length by a plain BFS (tests/naive.py); line 10 of
    :func:`problems` is unsolvable."""
    from .naive import bfs_distances

    return {
        r.index: bfs_distances(r.board.shape, start=r.board.cells)[r.board.shape.goal]
        for r in records
        if r.board is not None and r.index != 10
    }


def slow_build(*args, threads, **kw):
    """A build of ten minutes that stops when its grant says so, as the BFS does."""
    from pdb_builder.cores import BuildStopped

    for _ in range(60_000):
        if threads.stopped:
            raise BuildStopped
        time.sleep(0.01)


# -- one board on several threads (tests/test_parallel.py, tests/test_parallel_limits.py) --------
THREADS = (1, 2, 4)  # 4: more threads than this machine's cores


@pytest.fixture
def tune():
    """``tune(field=value, ...)``: the search's tuning (:class:`solver.tuning.Tuning`)
    changed for the rest of the test, set back after it."""
    from contextlib import ExitStack

    from solver.tuning import tuned

    with ExitStack() as stack:
        yield lambda **changes: stack.enter_context(tuned(**changes))


@pytest.fixture
def split(monkeypatch, tune):
    """Parallel after 40 nodes of an iteration, split at the first depth and a second
    one below it, windows of one node at each, threads back in Python every 16 nodes,
    a node at the split depth shared after 16 nodes in it; counts the windows taken."""
    import solver.search.threads as parallel

    tune(slice_nodes=40, par_slice=16, split_min=1, window_nodes=1, split2_factor=2, share_after=16, share_threads=1)
    taken = []
    take = parallel.Iteration._take

    def counted(self, w, *args, **kw):
        taken.append(self.windows.taken)
        return take(self, w, *args, **kw)

    monkeypatch.setattr(parallel.Iteration, "_take", counted)
    return taken


class Restless(Share):
    """A grant that changes at every look, 1 to 4 threads: threads join and leave all
    through an iteration (``slidepdb run`` changes a board's grant as slots idle and fill)."""

    def __init__(self, seed):
        super().__init__(grant=np.ones(1, dtype=np.int64), used=np.zeros(1, dtype=np.int64))
        self.rng = random.Random(seed)
        self.reported = []

    @property
    def granted(self):
        return self.rng.randint(1, 4)

    def report(self, running):
        self.reported.append(running)

    def left(self) -> bool:
        """Whether threads ever stopped while others went on."""
        return any(0 < b < a for a, b in zip(self.reported, self.reported[1:]))


def sample_states(shape, k, seed):
    """The BFS distances of ``shape`` and its three farthest states plus ``k`` drawn at random."""
    from .naive import bfs_distances

    dist = bfs_distances(shape)
    far = sorted(dist, key=lambda c: (-dist[c], c))[:3]  # the hardest states, plus a random sample
    return dist, far + random.Random(seed).sample(sorted(dist), k)

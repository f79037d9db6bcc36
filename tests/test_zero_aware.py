"""Zero-aware tables: the cost of each (placement, region of the blank) pair, against a
brute-force BFS of the abstract states (placement, blank cell)."""

import functools
import json
import random

import numpy as np
import pytest
from click.testing import CliRunner

from pdb_builder.board import Board, Shape
from pdb_builder.make.building import build_pdb, compute_pdb, default_partition
from pdb_builder.moves import check_moves
from pdb_builder.patterns import named_partition
from pdb_builder.ranking import rank_py
from pdb_builder.regions import LABEL_CELLS, REGIONS, region_labels, region_number, zero_value
from solver.cli import main
from solver.search.heuristic import ZeroArrays
from solver.search.searcher import Searcher
from solver.search.tables import heuristic_for

from .conftest import THREADS, sample_states
from .naive import abstract_moves, bfs_distances, layouts, pattern_state_bfs


@functools.cache
def _states(shape, pattern):
    return pattern_state_bfs(shape, pattern)


@functools.cache
def _zero_table(shape, pattern):
    return compute_pdb(shape, pattern, zero_aware=True)


def _zero_reader(shape, table, zero):
    """``read(place, blank)`` -> (the placement's rank, the free cells it leaves, the
    value the file's codes give with the blank on ``blank``): the shipped reader."""
    cidx = {c: i for i, c in enumerate(shape.free_cells)}
    n, all_free = len(shape.free_cells), sum(1 << c for c in shape.free_cells)

    def read(place, blank):
        r = rank_py([cidx[c] for c in place], n)
        free = all_free & ~sum(1 << c for c in place)
        return r, free, zero_value(zero, r, int(table[r]), free, blank, shape.width, shape.n)

    return read


SHAPES = [
    (Shape.devquiz(3, 3), (1, 2, 3)),
    (Shape.korf(3, 3), (1, 2, 3, 4)),
    (Shape.devquiz(3, 3, [4]), (1, 2, 3)),
    (Shape.devquiz(4, 3, [5, 6]), (1, 2, 3, 4)),
    (Shape.devquiz(2, 4), (2, 3, 5)),
    (Shape.devquiz(5, 3, [2, 7]), (1, 4, 6, 9)),  # a bottleneck row
    (Shape.devquiz(4, 4, [5, 10]), (1, 2, 3, 4)),
]


@pytest.mark.parametrize("shape, pattern", SHAPES, ids=lambda x: getattr(x, "key", str(x)))
def test_every_region_costs_what_a_brute_force_bfs_says(shape, pattern):
    plain, _ = compute_pdb(shape, pattern)
    table, stats = _zero_table(shape, pattern)
    assert np.array_equal(table, plain)  # the least over regions, as before
    zero = stats.zero
    read = _zero_reader(shape, table, zero)
    states = _states(shape, pattern)
    costs = {}
    for (place, _), d in states.items():
        costs.setdefault(place, set()).add(d)
    raised = 0
    for (place, blank), d in states.items():
        r, free, v = read(place, blank)
        assert int(table[r]) <= v <= d
        if v < d:  # a region numbered past those a code holds reads the least; a code holds 3 steps at most
            j = region_number(free, blank, shape.width, shape.n)
            assert (j >= REGIONS and v == table[r]) or v == table[r] + 3 * zero.step, (v, d, j)
        raised += v > table[r]
    if any(len(c) > 1 for c in costs.values()):
        assert raised > 0  # the regions that cost more than the least are read so


@pytest.mark.parametrize("shape, pattern", SHAPES, ids=lambda x: getattr(x, "key", str(x)))
def test_a_move_changes_a_zero_aware_value_by_at_most_one_below_the_cap(shape, pattern):
    """Across every move between reachable abstract states (a pattern tile's: cost 1;
    the blank's alone: cost 0), the value the file's codes give changes by at most the
    move's cost wherever neither end is capped (its region's code at 3 units, or a
    region numbered past what a code holds).  No distance is read here: only the codes
    and the moves.  The least over regions alone is not consistent on these shapes."""
    table, stats = _zero_table(shape, pattern)
    read = _zero_reader(shape, table, stats.zero)

    def value(place, blank):
        """(the zero-aware value, the least over regions, whether a cap reads it)"""
        r, free, v = read(place, blank)
        j = region_number(free, blank, shape.width, shape.n)
        capped = j >= REGIONS or int(stats.zero.codes[r]) >> (2 * j) & 3 == 3
        return v, int(table[r]), capped

    moves = checked = plain_jumps = 0
    for place, blank in _states(shape, pattern):
        v, least, capped = value(place, blank)
        for new, cost in abstract_moves(shape, place, blank):
            v2, least2, capped2 = value(*new)
            moves += 1
            plain_jumps += abs(least2 - least) > cost
            if not (capped or capped2):
                checked += 1
                assert abs(v2 - v) <= cost, (place, blank, new, v, v2)
    assert checked > moves // 2
    if shape in (Shape.devquiz(3, 3), Shape.korf(3, 3)):
        assert plain_jumps > 0  # what the zero-aware values mend


@pytest.fixture(scope="module")
def zero_tables(tmp_path_factory):
    """Zero-aware wall-free tables (3x3 4-4, 2x4 4-3, 3x4 6-5; the walled layouts
    read them through their walls and the reflection) and exact-layout ones."""
    folder = tmp_path_factory.mktemp("zero")
    for shape, name in ((Shape.devquiz(3, 3), "4-4"), (Shape.devquiz(2, 4), "4-3"), (Shape.devquiz(3, 4), "6-5")):
        build_pdb(shape, named_partition(shape, name), folder, zero_aware=True)
    for shape in EXACT:
        build_pdb(shape, default_partition(shape, 1 << 20), folder, zero_aware=True)
    return folder


EXACT = [Shape.korf(3, 3, [8]), Shape.devquiz(3, 3, [0]), Shape.devquiz(4, 3, [0, 4, 8])]


@pytest.mark.parametrize(
    "shape",
    [Shape.korf(4, 4), Shape.devquiz(4, 4, [5, 10]), Shape.devquiz(5, 3, [2, 7]), Shape.devquiz(3, 3, [4])],
    ids=lambda s: s.key,
)
def test_region_labels_number_every_cell_as_a_flood_does(shape):
    cells = tuple(shape.free_cells)
    labels = region_labels(cells, shape.width, shape.n)
    assert len(cells) <= LABEL_CELLS and labels.shape == (1 << len(cells),)
    rng = random.Random(len(cells))
    for m in [0, (1 << len(cells)) - 1, *rng.sample(range(1 << len(cells)), min(300, 1 << len(cells)))]:
        free = sum(1 << c for j, c in enumerate(cells) if m >> j & 1)
        for j, c in enumerate(cells):
            want = region_number(free, c, shape.width, shape.n) if m >> j & 1 else 0
            assert int(labels[m]) >> 4 * j & 15 == want, (m, c)
    with pytest.raises(ValueError):
        region_labels(tuple(range(LABEL_CELLS + 1)), 5, 25)


def searched_shapes(seed: int) -> list:
    """The shapes the zero-aware searches are checked on: wall-free, exact walled
    layouts, and four walled 3x3 layouts drawn with ``seed``."""
    shapes = [Shape.devquiz(3, 3), Shape.devquiz(2, 4), *EXACT]
    walled = [s for s in layouts(3, 3, min_walls=1, max_walls=2) if len(bfs_distances(s)) > 20]
    return shapes + random.Random(seed).sample(walled, 4)


def solved_as_bfs(searcher, board: Board, dist: dict, threads: int):
    """``searcher``'s answer for ``board``, checked: proven, the BFS length, every move legal."""
    res = searcher.solve(board, threads=threads)
    assert res.optimal and res.length == dist[board.cells], (str(board), res.length, dist[board.cells])
    assert check_moves(board, res.moves).ok
    return res


@pytest.mark.parametrize("threads", THREADS)
@pytest.mark.parametrize("prune, labels", [(2, True), (8, True), (8, False)])
def test_lengths_equal_bfs_with_zero_aware_tables(split, zero_tables, threads, prune, labels):
    """Every length the breadth-first one, on one thread and split between several,
    with the undo-only automaton and a deeper one, the blank's region read from the
    shape's labels or flooded; the estimate never below the plain tables' and above
    them somewhere."""
    raised = 0
    for shape in searched_shapes(threads * 10 + prune):
        h = heuristic_for(shape, zero_tables)
        assert h.lookups and all(lk.zero is not None for lk in h.lookups), h.names
        s = Searcher(h, prune=prune)
        s.zero = ZeroArrays(h.lookups, labels=labels)
        assert bool(s.zero.kernel[6].any()) == labels
        plain = Searcher(heuristic_for(shape, zero_tables), packed=False)
        plain.zero = ZeroArrays([])  # the same tables read as the least over regions
        plain.zero.kernel = tuple(np.resize(a, len(h.lookups)) for a in plain.zero.kernel)
        dist, states = sample_states(shape, 12, seed=threads)
        for cells in states:
            board = Board(shape, cells)
            solved_as_bfs(s, board, dist, threads)
            assert dist[cells] >= s.initial_h(board) >= plain.initial_h(board)
            raised += s.initial_h(board) > plain.initial_h(board)
    assert raised > 0


def test_a_file_keeps_its_zero_aware_entries_and_verify_checks_them(tmp_path):
    import h5py

    from pdb_builder.make.verify import verify
    from pdb_builder.storage import open_database

    shape = Shape.devquiz(3, 4)
    part = named_partition(shape, "6-5")
    rep = build_pdb(shape, part, tmp_path, zero_aware=True)
    db = open_database(rep.path)
    assert all(t.zero is not None and np.count_nonzero(t.zero.codes) for t in db.tables)
    res = verify(rep.path)
    assert res.ok and any("zero/0" in line for line in res.checks), res
    shown = CliRunner().invoke(main, ["inspect", rep.path])
    assert shown.exit_code == 0 and "costs by region of the blank, in steps of 2" in shown.output, shown.output
    listed = CliRunner().invoke(main, ["inspect", "--db-dir", str(tmp_path), "--json"])
    assert json.loads(listed.output.splitlines()[0])["zero_aware"] == "yes", listed.output
    assert build_pdb(shape, part, tmp_path).status == "skipped"  # plain asked: the zero-aware file serves
    with h5py.File(rep.path, "r+") as f:  # a code changed behind the checksums' back
        v = f["zero/0"]
        v[0] = v[0] ^ 1
    assert not verify(rep.path).ok
    assert build_pdb(shape, part, tmp_path, zero_aware=True).status == "rebuilt"
    plain = tmp_path / "plain"
    build_pdb(shape, part, plain)  # a plain file asked for zero-aware entries is built again with them
    assert build_pdb(shape, part, plain, zero_aware=True).status == "rebuilt"
    assert all(t.zero is not None for t in open_database(plain / rep.path.split("/")[-1]).tables)


def test_the_codes_are_checked_like_their_table_before_an_answer(tmp_path, monkeypatch):
    """A solver opens a zero-aware file without reading its codes (its guard hashes
    them while the search runs, as it does the table beside them), and a damaged code
    byte withholds the answer, naming the file and dataset: exit 1."""
    from pdb_builder.storage import open_database
    from solver.search import tables

    from .conftest import flip_bit

    shape = Shape.devquiz(3, 3)
    rep = build_pdb(shape, named_partition(shape, "4-4"), tmp_path, zero_aware=True)
    guards = [t.zero.guard for t in open_database(rep.path, lazy=True).tables]
    assert all(g is not None and not g.ok for g in guards)
    assert all(t.zero.guard is None for t in open_database(rep.path).tables)  # checked whole at open
    flip_bit(rep.path, "zero/1", 100)
    tables._CACHE.clear()
    monkeypatch.setattr("solver.search.searcher.kernel_loaded", lambda: True)
    r = CliRunner().invoke(main, ["solve", "--db-dir", str(tmp_path), "3,3,123456708"])
    tables._CACHE.clear()
    assert r.exit_code == 1 and "zero/1 fails its sha256" in r.output and "moves" not in r.stdout, r.output

import random

import numpy as np
import pytest

from pdb_builder.board import Board, Shape
from pdb_builder.errors import BoardError
from pdb_builder.goal_table import encode_board, find_key
from pdb_builder.make.building import auto_partition, build_goal_table, build_pdb, compute_pdb, default_partition
from pdb_builder.make.goal_bfs import compute_goal_table
from pdb_builder.patterns import named_partition, parse_partition
from pdb_builder.ranking import num_placements, rank_py, unrank_py, weights
from solver.search.searcher import Searcher
from solver.search.tables import heuristic_for

from .naive import bfs_distances, pattern_bfs

SMALL = [
    (Shape.devquiz(3, 3), (1, 2, 3)),
    (Shape.korf(3, 3), (1, 2, 3, 4)),
    (Shape.devquiz(3, 3, [4]), (1, 2, 3)),
    (Shape.devquiz(4, 3, [5, 6]), (1, 2, 3, 4)),
    (Shape.korf(4, 3, [9]), (3, 6, 7)),
    (Shape.devquiz(2, 4), (2, 3, 5)),
    (Shape.devquiz(5, 3, [2, 7]), (1, 4, 6, 9)),  # a bottleneck row
]


@pytest.mark.parametrize("shape, pattern", SMALL, ids=lambda x: getattr(x, "key", str(x)))
def test_kernel_equals_naive_bfs(shape, pattern):
    table, stats = compute_pdb(shape, pattern)
    ref = pattern_bfs(shape, pattern)
    cidx = {c: i for i, c in enumerate(shape.free_cells)}
    n = len(shape.free_cells)
    expected = np.full(num_placements(n, len(pattern)), 255, dtype=np.uint8)
    for place, d in ref.items():
        expected[rank_py([cidx[c] for c in place], n)] = d
    assert np.array_equal(table, expected)
    assert sum(stats.layers) == len(ref) and stats.histogram == np.bincount(expected, minlength=256).tolist()


def test_kernel_is_deterministic_across_thread_counts_and_a_changing_grant():
    """One thread, four, and a grant that another thread moves between 1 and 4 while
    the layers run (as ``slidepdb run`` moves a build's between its worker slots):
    the same table, and the build says how many threads it ran."""
    import threading
    import time

    from pdb_builder.cores import Share

    shape = Shape.devquiz(4, 3, [4])
    every, _ = compute_pdb(shape, (1, 2, 3, 4, 6, 7))  # every usable core
    one, _ = compute_pdb(shape, (1, 2, 3, 4, 6, 7), threads=1)
    four, _ = compute_pdb(shape, (1, 2, 3, 4, 6, 7), threads=4)
    grant, used = np.array([1], dtype=np.int64), np.array([0], dtype=np.int64)
    seen, done = set(), threading.Event()

    def move():
        k = 0
        while not done.is_set():
            grant[0] = 1 + k % 4
            seen.add(int(used[0]))
            k += 1
            time.sleep(0.001)

    mover = threading.Thread(target=move)
    mover.start()
    try:
        moved, _ = compute_pdb(shape, (1, 2, 3, 4, 6, 7), threads=Share(grant=grant, used=used))
    finally:
        done.set()
        mover.join()
    assert np.array_equal(one, every) and np.array_equal(one, four) and np.array_equal(one, moved)
    assert used[0] == 0 and max(seen) <= 4


def test_rank_round_trip_exhaustive_and_sampled():
    for n, k in [(4, 2), (5, 3), (6, 6), (9, 4)]:
        seen = set()
        for r in range(num_placements(n, k)):
            p = unrank_py(r, n, k)
            assert rank_py(p, n) == r
            seen.add(p)
        assert len(seen) == num_placements(n, k)
    rng = random.Random(2)
    from pdb_builder.ranking import rank_kernel, unrank_kernel

    for n, k in [(16, 8), (25, 6), (36, 5), (64, 4)]:
        w = weights(n, k)
        for r in [rng.randrange(num_placements(n, k)) for _ in range(200)]:
            place = np.empty(k, dtype=np.int64)
            unrank_kernel(np.int64(r), n, k, w, place)  # the compiled kernels, as the BFS calls them
            assert rank_py(tuple(place), n) == r and rank_kernel(place, k, w) == r


def test_pext_pdep_equal_python():
    """The bit gathers the BFS and unranking use (BMI2 or the loop fallback) against Python."""
    import numba as nb

    from pdb_builder import ranking

    def pext_py(x, m):
        return sum(1 << j for j, b in enumerate(b for b in range(64) if m >> b & 1) if x >> b & 1)

    def pdep_py(x, m):
        return sum(1 << b for j, b in enumerate(b for b in range(64) if m >> b & 1) if x >> j & 1)

    kinds = [(ranking.pext_loop, ranking.pdep_loop)] + ([(ranking.pext, ranking.pdep)] if ranking.HAS_BMI2 else [])
    rng = random.Random(5)
    cases = [(0, 0), (2**64 - 1, 2**64 - 1), (2**64 - 1, 1 << 63)] + [
        (rng.getrandbits(64), rng.getrandbits(64)) for _ in range(300)
    ]
    for ext, dep in kinds:
        run = nb.njit(lambda x, m: (ext(x, m), dep(x, m)))
        for x, m in cases:
            assert tuple(int(v) for v in run(np.uint64(x), np.uint64(m))) == (pext_py(x, m), pdep_py(x, m))


def _delta_ok(place, n, s, b):
    """rank_delta's change for slot s moving to free cell b equals the full re-rank's."""
    from pdb_builder.ranking import rank_delta

    w = weights(n, len(place))
    used = np.uint64(sum(1 << p for p in place))
    slot_of = np.zeros(n, dtype=np.int64)
    for j, p in enumerate(place):
        slot_of[p] = j
    moved = list(place)
    moved[s] = b
    return rank_py(place, n) + int(rank_delta(s, place[s], b, used, slot_of, w)) == rank_py(tuple(moved), n)


def test_rank_delta_equals_full_rank():
    """The solver updates ranks move by move (one slot to a free cell); compare with ranking anew."""
    for n, k in [(6, 3), (7, 4)]:  # every placement, slot and free target cell
        for r in range(num_placements(n, k)):
            p = unrank_py(r, n, k)
            for s in range(k):
                for b in set(range(n)) - set(p):
                    assert _delta_ok(p, n, s, b), (p, s, b)
    rng = random.Random(5)
    for n, k in [(16, 8), (16, 7), (25, 6), (36, 5), (64, 7)]:
        for _ in range(300):
            p = unrank_py(rng.randrange(num_placements(n, k)), n, k)
            s = rng.randrange(k)
            b = rng.choice(sorted(set(range(n)) - set(p)))
            assert _delta_ok(p, n, s, b), (p, s, b)


def test_the_bfs_steps_a_placements_digits_as_unranking_anew():
    """The BFS scan moves a placement's mixed-radix digits on to the next placement it
    expands (a carry, or a division for a long step); the cells they name are unrank_py's."""
    from pdb_builder.ranking import rank_digits, step_digits

    rng = random.Random(7)
    for n, k in [(5, 1), (6, 3), (9, 8), (25, 6), (36, 5)]:
        total = num_placements(n, k)
        radix = n - k + 1
        dig = np.empty(k, dtype=np.int64)
        r = rng.randrange(min(total, 50))
        rank_digits(r, n, k, dig)
        for _ in range(3000):
            step = rng.choice([1, 1, 2, radix - 1, radix, radix + 1, 3 * radix, rng.randrange(1, total)])
            if r + step >= total:
                break
            r += step
            step_digits(dig, step, r, n, k)
            free = list(range(n))
            assert tuple(free.pop(int(d)) for d in dig) == unrank_py(r, n, k), (n, k, r, step)


def _check_admissible(shape, dist, searcher, sample=None, seed=0):
    """h <= exact distance on every (or a sample of) reachable state.

    Consistency is deliberately not asserted: a table stores the least cost over
    the blank's regions (Korf & Felner 2002), and after a pattern-tile move the
    cheapest region may be another one, so h can jump by more than 1 (on 3x3 with
    4-4, from 9 to 14).  IDA* needs only admissibility; each table's values are
    asserted equal to the exact abstract distances in test_kernel_equals_naive_bfs."""
    states = sorted(dist)
    if sample:
        states = random.Random(seed).sample(states, min(sample, len(states)))
    for cells in states:
        h = searcher.initial_h(Board(shape, cells))
        assert h <= dist[cells], (cells, h, dist[cells])


EVERY_STATE = pytest.mark.slow  # 181,440 states of a wall-free 3x3 board: 12 s; the fast lane takes a sample


@pytest.mark.parametrize(
    "shape, partition, sample",
    [
        (Shape.devquiz(3, 3), "4-4", 20_000),
        pytest.param(Shape.devquiz(3, 3), "4-4", None, marks=EVERY_STATE),
        (Shape.korf(3, 3), "3-3-2", 20_000),
        pytest.param(Shape.korf(3, 3), "3-3-2", None, marks=EVERY_STATE),
        (Shape.devquiz(3, 3, [4]), "4-3", None),
        (Shape.devquiz(3, 3, [1, 3]), "3-3", None),  # symmetric walls: the reflection is used too
        (Shape.korf(4, 2, [5]), "3-3", None),
    ],
    ids=lambda x: getattr(x, "key", "every" if x is None else str(x)),
)
def test_exact_pdb_admissible_on_every_state(tmp_path, shape, partition, sample):
    """h <= the BFS distance on every reachable state (wall-free 3x3 boards in the fast
    lane: a sample of ``sample`` states, and every state at the largest distance)."""
    build_pdb(shape, named_partition(shape, partition), tmp_path)
    h = heuristic_for(shape, tmp_path)
    assert h.lookups
    if shape.transpose_map is not None:
        assert any("reflected" in n for n in h.names)
    dist = bfs_distances(shape)
    searcher = Searcher(h)
    _check_admissible(shape, dist, searcher, sample)
    if sample:
        far = max(dist.values())
        _check_admissible(shape, {c: d for c, d in dist.items() if d == far}, searcher)
    # and the search with it returns BFS-optimal lengths
    for cells in random.Random(1).sample(sorted(dist), min(30, len(dist))):
        res = searcher.solve(Board(shape, cells))
        assert res.optimal and res.length == dist[cells]


@pytest.mark.parametrize("walls", [[4], [1], [0, 2], [3, 5], [1, 3]])
def test_wall_free_pdb_admissible_on_walled_boards(tmp_path, walls):
    wf = Shape.devquiz(3, 3)
    build_pdb(wf, named_partition(wf, "4-4"), tmp_path)
    shape = Shape.devquiz(3, 3, walls)
    h = heuristic_for(shape, tmp_path)
    assert any(n.startswith("wall-free") for n in h.names)
    _check_admissible(shape, bfs_distances(shape), Searcher(h))


def test_wall_free_4x4_pdb_on_walled_4x4(tmp_path):
    wf = Shape.devquiz(4, 4)
    build_pdb(wf, named_partition(wf, "6-6-3"), tmp_path)
    shape = Shape.devquiz(4, 4, [5, 6, 9])
    dist = bfs_distances(shape, max_depth=14)
    searcher = Searcher(heuristic_for(shape, tmp_path))
    _check_admissible(shape, dist, searcher, sample=400)


@pytest.mark.parametrize(
    "shape, depth",
    [
        (Shape.devquiz(3, 3), 14),
        (Shape.devquiz(3, 3, [4]), 40),
        (Shape.korf(4, 3, [9]), 12),
        (Shape.devquiz(6, 6, [3, 17]), 6),
    ],
    ids=lambda x: getattr(x, "key", str(x)),
)
def test_goal_table_equals_bfs(shape, depth):
    keys, dist, layers = compute_goal_table(shape, depth)
    ref = bfs_distances(shape, max_depth=depth)
    assert len(keys) == len(ref) == sum(layers)
    for s, d in ref.items():
        assert dist[find_key(keys, encode_board(shape, s))] == d
    # a state beyond the depth is absent
    far = [s for s, d in bfs_distances(shape, max_depth=depth + 1).items() if d == depth + 1]
    if far:
        assert find_key(keys, encode_board(shape, far[0])) == -1


def test_goal_table_file_round_trip(tmp_path):
    from pdb_builder.storage import open_database

    shape = Shape.devquiz(3, 3)
    rep = build_goal_table(shape, 10, tmp_path)
    db = open_database(rep.path)
    assert db.kind == "goal-table" and db.depth == 10 and len(db.dist) == rep.entries
    again = build_goal_table(shape, 10, tmp_path)
    assert again.status == "skipped"


def test_partitions():
    k = Shape.korf(4, 4)
    assert named_partition(k, "7-8").groups == ((1, 2, 3, 4, 5, 6, 7), (8, 9, 10, 11, 12, 13, 14, 15))
    d = Shape.devquiz(4, 4)
    assert named_partition(d, "7-8").groups == ((9, 10, 11, 12, 13, 14, 15), (1, 2, 3, 4, 5, 6, 7, 8))
    assert sorted(sum(named_partition(Shape.korf(5, 5), "6-6-6-6").groups, ())) == list(range(1, 25))
    six = named_partition(Shape.devquiz(6, 6), "5-5-5-5-5-5-5")
    assert sorted(sum(six.groups, ())) == list(range(1, 36))
    p = parse_partition("1,2,3/4,5,A", Shape.devquiz(4, 4))
    assert p.groups == ((1, 2, 3), (4, 5, 10)) and p.name == "3-3"
    with pytest.raises(BoardError, match="two patterns"):
        parse_partition("1,2/2,3", Shape.devquiz(3, 3))
    with pytest.raises(BoardError, match="not a tile"):
        parse_partition("1,2/9", Shape.devquiz(3, 3))
    with pytest.raises(BoardError, match="not a tile"):
        parse_partition("1,2,5", Shape.devquiz(3, 3, [4]))  # tile 5's home is a wall
    assert default_partition(Shape.korf(4, 4), 4 << 30).name == "7-8"
    assert default_partition(Shape.korf(4, 4), 300 << 20).sizes == (5, 5, 5)
    assert max(default_partition(Shape.devquiz(6, 6), 6 << 30).sizes) <= 6
    # compact blocks, not rows: on the 6x4 the default is four 3x2 blocks
    assert default_partition(Shape.devquiz(6, 4), 4 << 30).groups == (
        (1, 2, 3, 7, 8, 9),
        (4, 5, 6, 10, 11, 12),
        (13, 14, 15, 19, 20, 21),
        (16, 17, 18, 22, 23),
    )


def test_layout_partitions_are_distinct_named_cuts():
    """A layout's second (third) database: the same sizes cut another way, named
    SIZES.ORDER, and that name rebuilds the same partition."""
    from pdb_builder.make.building import layout_partitions
    from pdb_builder.patterns import GROW_ORDERS, _cells_to_tiles, grow_blocks

    shape = Shape.devquiz(6, 5, [8, 20])
    parts = layout_partitions(shape, 512 << 20, 3)
    assert len(parts) == 3 and parts[0] == default_partition(shape, 512 << 20)
    assert len({p.groups for p in parts}) == 3 and len({p.name for p in parts}) == 3
    for p in parts:
        assert p.sizes == parts[0].sizes and sorted(sum(p.groups, ())) == list(shape.tiles)
        assert named_partition(shape, p.name) == p
    for p in parts[1:]:
        base, order = p.name.split(".")
        assert base == parts[0].name and order in GROW_ORDERS
        assert p.groups == _cells_to_tiles(shape, grow_blocks(shape, p.sizes, order))
    assert layout_partitions(shape, 512 << 20) == parts[:1]
    with pytest.raises(BoardError, match="not one of"):
        named_partition(shape, "5-5.diagonal")


def test_a_filled_cut_comes_beside_an_even_cut_that_holds_no_pattern_as_large_as_the_memory_allows(tmp_path):
    """8 tiles where the memory holds 5-tile patterns: the even cut is 4-4, so ``fill``
    adds 5-3 (every tile once); where the even cut reaches the largest size it adds
    nothing.  The filled cut's tables, zero-aware as a run builds them, give BFS's lengths."""
    from pdb_builder.make.building import layout_partitions

    shape = Shape.devquiz(3, 4, [0, 2, 9])
    even = layout_partitions(shape, 64 << 10, 2)
    filled = layout_partitions(shape, 64 << 10, 2, fill=True)
    assert [p.name for p in even] == ["4-4", "4-4.row"] and filled[:2] == even
    assert filled[2].name == "5-3" and sorted(sum(filled[2].groups, ())) == list(shape.tiles)
    assert layout_partitions(shape, 16 << 10, 1, fill=True) == layout_partitions(shape, 16 << 10, 1)  # 4-4
    build_pdb(shape, filled[2], tmp_path, zero_aware=True, threads=1)
    searcher = Searcher(heuristic_for(shape, tmp_path))
    assert [n for n in searcher.h.names if "5-3" in n]
    dist = bfs_distances(shape)
    boards = sorted(dist, key=lambda c: -dist[c])[:3] + random.Random(5).sample(sorted(dist), 30)
    for cells in boards:
        res = searcher.solve(Board(shape, cells))
        assert res.optimal and res.length == dist[cells]


def test_a_partition_that_is_its_own_mirror_image_is_read_once(tmp_path):
    """3x3 Korf goal, patterns {1, 3, 4, 8} and {2, 5, 6, 7}: the diagonal reflection maps
    each onto itself.  Read through the reflection, the tables sum on every state to
    what they sum read directly, so the solver reads them once, and its lengths are BFS's;
    a partition that is not its own mirror image (3-3-2) is still read both ways."""
    from pdb_builder.lookup import evaluate, lookups_for
    from pdb_builder.patterns import Partition
    from pdb_builder.storage import open_database

    shape = Shape.korf(3, 3)
    rep = build_pdb(shape, Partition("4-4.mirror", ((1, 3, 4, 8), (2, 5, 6, 7))), tmp_path / "mirror")
    tables = [(t.tiles, t.data) for t in open_database(rep.path).tables]
    direct, reflected = (lookups_for(shape, shape, tables, 0, reflect=r) for r in (False, True))
    dist = bfs_distances(shape)
    for cells in random.Random(2).sample(sorted(dist), 3000):
        assert evaluate(direct, cells, 1) == evaluate(reflected, cells, 1), cells
    h = heuristic_for(shape, tmp_path / "mirror")
    assert len(h.names) == 1 and not any("reflected" in n for n in h.names), h.names
    searcher = Searcher(h)
    for cells in random.Random(3).sample(sorted(dist), 30):
        res = searcher.solve(Board(shape, cells))
        assert res.optimal and res.length == dist[cells]
    build_pdb(shape, named_partition(shape, "3-3-2"), tmp_path / "plain")
    assert any("reflected" in n for n in heuristic_for(shape, tmp_path / "plain").names)


def test_layout_partitions_leave_out_a_cut_that_is_another_reflected():
    """On a shape with a diagonal reflection every table is read reflected too, so a
    cut that is an earlier one reflected adds nothing: the 6x6's column-grown cut is
    its row-grown default reflected, and is passed over."""
    from pdb_builder.make.building import layout_partitions

    def reflected(shape, groups):  # from the tiles' home coordinates, not the shape's transpose map
        w = shape.width
        at = {shape.home[t]: t for t in shape.tiles}
        return {frozenset(at[(c % w) * w + c // w] for c in (shape.home[t] for t in g)) for g in groups}

    for shape in (Shape.devquiz(6, 6, []), Shape.devquiz(5, 5, []), Shape.devquiz(6, 6, [7, 28])):
        parts = layout_partitions(shape, 512 << 20, 3)
        assert len(parts) == 3
        sets = [{frozenset(g) for g in p.groups} for p in parts]
        for i in range(len(parts)):
            for b in parts[:i]:
                assert sets[i] != {frozenset(g) for g in b.groups} and sets[i] != reflected(shape, b.groups)
    six = Shape.devquiz(6, 6, [])
    col = named_partition(six, "5-5-5-5-5-5-5.col")
    assert reflected(six, col.groups) == {frozenset(g) for g in layout_partitions(six, 512 << 20)[0].groups}
    assert "5-5-5-5-5-5-5.col" not in [p.name for p in layout_partitions(six, 512 << 20, 3)]
    walled = Shape.devquiz(6, 5, [8, 20])  # no reflection: the cuts as grown
    assert len(layout_partitions(walled, 512 << 20, 3)) == 3


def test_auto_partition_measures_candidates():
    shape = Shape.devquiz(4, 3, [5])
    part = auto_partition(shape, 2 << 20)
    assert sorted(sum(part.groups, ())) == list(shape.tiles)
    means = {}
    from pdb_builder.patterns import GROW_ORDERS, _cells_to_tiles, grow_blocks

    for order in GROW_ORDERS:
        groups = _cells_to_tiles(shape, grow_blocks(shape, part.sizes, order))
        means[groups] = sum(compute_pdb(shape, g)[1].mean for g in groups)
    assert means[part.groups] == max(means.values())


def test_goal_table_depth_from_memory_budget(tmp_path):
    from pdb_builder.goal_table import key_layout
    from pdb_builder.make.goal_bfs import estimate_bytes

    shape = Shape.devquiz(3, 3)
    per_state = estimate_bytes(1, key_layout(shape)[2])
    rep = build_goal_table(shape, None, tmp_path, memory_limit=per_state * 1000)
    layers = [len([1 for d in bfs_distances(shape, max_depth=20).values() if d == i]) for i in range(21)]
    depth = int(rep.name[1:])
    assert sum(layers[: depth + 1]) <= 1000 < sum(layers[: depth + 2])  # the deepest complete depth that fits
    assert rep.entries == sum(layers[: depth + 1])
    assert build_goal_table(shape, None, tmp_path, memory_limit=1 << 30).status == "skipped"


def test_a_build_told_to_stop_stops_and_publishes_nothing(tmp_path):
    """A negative grant (slidepdb run giving up on a build at the end of its budget):
    the build stops at its next chunk, raises BuildStopped, and leaves no file, not
    even a temporary one."""
    from pdb_builder.cores import BuildStopped, Share
    from pdb_builder.patterns import named_partition

    shape = Shape.devquiz(4, 3)
    grant, used = np.array([2], dtype=np.int64), np.array([0], dtype=np.int64)
    layers = []

    def after_layer(i, depth, valued, marked, seconds):
        layers.append(depth)
        if len(layers) == 3:
            grant[0] = -1

    with pytest.raises(BuildStopped):
        build_pdb(
            shape, named_partition(shape, "6-5"), tmp_path, progress=after_layer, threads=Share(grant=grant, used=used)
        )
    assert len(layers) == 3 and list(tmp_path.iterdir()) == []

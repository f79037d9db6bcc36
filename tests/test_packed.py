"""Two-bit tables (pdb_builder/packed.py): relaxing, decoding, and the search on them."""

import random

import h5py
import numpy as np
import pytest

from pdb_builder.board import Board, Shape
from pdb_builder.make.building import build_pdb, compute_pdb
from pdb_builder.make.lowering import check_packed, check_packed_full, check_packed_near, pack, relax
from pdb_builder.packed import MAX_LOWERING, bits_at, decode, root_value
from pdb_builder.patterns import named_partition
from pdb_builder.ranking import rank_py, unrank_py
from pdb_builder.storage import open_database
from solver.search.searcher import Searcher
from solver.search.tables import heuristic_for

from .naive import bfs_distances

SHAPES = [
    (Shape.devquiz(3, 3), (1, 2, 3, 4)),
    (Shape.korf(4, 3), (1, 2, 5, 6)),
    (Shape.devquiz(4, 3, [5, 6]), (1, 2, 3, 4)),
    (Shape.devquiz(5, 3, [2, 7]), (1, 4, 6, 9)),  # a bottleneck row
    (Shape.korf(4, 4), (1, 2, 3, 4)),
]


def _edges(shape, k, table):
    """Every abstract move between reached placements, by plain Python: (rank, rank)."""
    free = shape.free_cells
    cidx = {c: j for j, c in enumerate(free)}
    n = len(free)
    for r in range(table.size):
        if table[r] == 255:
            continue
        place = unrank_py(r, n, k)
        for s, a in enumerate(place):
            for d in shape.neighbours[free[a]]:
                b = cidx[d]
                if b in place:
                    continue
                r2 = rank_py(place[:s] + (b,) + place[s + 1 :], n)
                if table[r2] != 255:
                    yield r, r2


@pytest.mark.parametrize("shape, pattern", SHAPES, ids=lambda x: getattr(x, "key", str(x)))
def test_relaxed_moves_change_values_by_one_or_three_and_decode(shape, pattern):
    full, _ = compute_pdb(shape, pattern)
    relaxed = full.copy()
    relax(relaxed, shape, len(pattern))
    seen = full != 255
    assert np.array_equal(relaxed == 255, ~seen)
    lowering = full[seen].astype(int) - relaxed[seen]
    assert lowering.min() >= 0 and lowering.max() <= MAX_LOWERING  # lower, so still admissible
    packed = pack(relaxed)
    bits = [int(bits_at(int(packed[r >> 2]), r)) for r in range(full.size)]
    edges = list(_edges(shape, len(pattern), full))
    assert edges
    for r, r2 in edges:
        assert abs(int(relaxed[r]) - int(relaxed[r2])) in (1, 3)
        assert decode(bits[r2], int(relaxed[r])) == relaxed[r2]
    for r in np.flatnonzero(seen):
        assert root_value(int(full[r]), bits[r]) == relaxed[r]


@pytest.mark.parametrize("shape, pattern", SHAPES[:3], ids=lambda x: getattr(x, "key", str(x)))
def test_relaxed_to_a_slack_of_one_every_move_changes_a_value_by_exactly_one(shape, pattern):
    """What one bit an entry would need (scripts/bench_one_bit.py measures its cost): the
    abstract graph is bipartite, so a slack of 1 leaves every move changing a value by
    exactly 1; each value stays at most the full one (admissible) and keeps its parity."""
    full, _ = compute_pdb(shape, pattern)
    relaxed = full.copy()
    relax(relaxed, shape, len(pattern), slack=1)
    seen = full != 255
    assert np.array_equal(relaxed == 255, ~seen)
    assert (relaxed[seen] <= full[seen]).all() and ((full[seen] - relaxed[seen]) % 2 == 0).all()
    assert all(abs(int(relaxed[r]) - int(relaxed[r2])) == 1 for r, r2 in _edges(shape, len(pattern), full))


def test_relax_lowers_the_far_side_of_every_large_jump_and_nothing_else_needlessly():
    shape, pattern = Shape.devquiz(3, 3), (1, 2, 3, 4)
    full, _ = compute_pdb(shape, pattern)
    edges = list(_edges(shape, len(pattern), full))
    jumps = [(r, r2) for r, r2 in edges if int(full[r2]) - int(full[r]) > 3]
    assert jumps  # region-aware tables are not consistent (bfs.py)
    relaxed = full.copy()
    relax(relaxed, shape, len(pattern))
    assert all(relaxed[r2] < full[r2] for _, r2 in jumps)
    # every lowered entry is tight: some neighbour is exactly 3 below it
    tight = {r2 for r, r2 in edges if int(relaxed[r2]) - int(relaxed[r]) == 3}
    assert set(np.flatnonzero(relaxed < full)) <= tight


@pytest.mark.parametrize("shape, pattern", SHAPES, ids=lambda x: getattr(x, "key", str(x)))
def test_the_check_after_relaxing_names_what_the_check_of_every_move_names(shape, pattern):
    """A build checks its two-bit copy looking only at the moves of the entries lowered or
    marked by ``relax``: every move between entries more than SLACK apart has such an end,
    and on copies damaged at random both checks name the same first placement."""
    k = len(pattern)
    full, _ = compute_pdb(shape, pattern)
    relaxed = full.copy()
    marked = relax(relaxed, shape, k)
    looked = (np.unpackbits(marked, bitorder="little")[: full.size] == 1) | (relaxed != full)
    edges = list(_edges(shape, k, full))
    assert all(looked[r] or looked[r2] for r, r2 in edges if abs(int(full[r]) - int(full[r2])) > 3)
    assert looked.sum() < full.size // 10  # a few: the check's cost is the values, not the moves
    packed = pack(relaxed)
    lowering = int((full[full != 255].astype(int) - relaxed[full != 255]).max())
    assert check_packed_near(full, relaxed, packed, marked, shape, k, lowering) == -1
    assert check_packed_full(full, packed, shape, k, lowering) == -1
    rng = np.random.default_rng(7)
    for flips in (1, 1, 1, 2, 5, 40):
        damaged = packed.copy()
        at = rng.integers(0, damaged.size, flips)
        damaged[at] ^= rng.integers(1, 256, flips).astype(np.uint8)
        want = check_packed_full(full, damaged, shape, k, lowering)
        assert check_packed_near(full, relaxed, damaged, marked, shape, k, lowering) == want
    unrelaxed = pack(full)  # a copy packed without its lowering: the marks still lead to its jumps
    want = check_packed_full(full, unrelaxed, shape, k, MAX_LOWERING)
    assert check_packed_near(full, full, unrelaxed, marked, shape, k, MAX_LOWERING) == want
    assert (want >= 0) == any(abs(int(full[r]) - int(full[r2])) > 3 for r, r2 in edges)


@pytest.mark.parametrize(
    "shape, partition",
    [
        (Shape.devquiz(3, 3), "4-4"),
        (Shape.devquiz(3, 3, [1, 3]), "3-3"),  # the reflection reads the same packed tables
        (Shape.korf(4, 3, [9]), "3-3-2"),
    ],
    ids=lambda x: getattr(x, "key", str(x)),
)
def test_search_on_packed_tables_is_optimal_and_old_files_still_work(tmp_path, shape, partition):
    build_pdb(shape, named_partition(shape, partition), tmp_path)
    dist = bfs_distances(shape)
    sample = random.Random(3).sample(sorted(dist), min(60, len(dist)))
    h = heuristic_for(shape, tmp_path)
    packed, full = Searcher(h), Searcher(h, packed=False)
    assert packed.lk_pk.all() and not full.lk_pk.any()
    for cells in sample:
        board = Board(shape, cells)
        assert packed.initial_h(board) <= full.initial_h(board) <= dist[cells]
        a, b = packed.solve(board), full.solve(board)
        assert a.optimal and b.optimal and a.length == b.length == dist[cells]
    # a file written before the packed tables existed: the solver reads the full ones
    path = next(tmp_path.glob("*.pdb.*.h5"))
    with h5py.File(path, "a") as f:
        del f["packed"]
        del f.attrs["packed-tables"]  # (written since; an old file has neither)
    from solver.search import tables

    tables._CACHE.clear()
    assert all(t.packed is None for t in open_database(path).tables)
    old = Searcher(heuristic_for(shape, tmp_path))
    assert not old.lk_pk.any()
    for cells in sample[:20]:
        res = old.solve(Board(shape, cells))
        assert res.optimal and res.length == dist[cells]


def test_check_packed_finds_a_wrong_entry():
    shape, pattern = Shape.devquiz(3, 3), (1, 2, 3, 4)
    full, _ = compute_pdb(shape, pattern)
    relaxed = full.copy()
    relax(relaxed, shape, len(pattern))
    packed = pack(relaxed)
    everywhere = 20 * full.size  # random ranks: with this many, every placement is drawn
    assert check_packed(full, packed, shape, len(pattern), everywhere) == -1
    r = int(np.flatnonzero(full == 9)[0])
    packed[r >> 2] ^= np.uint8(1 << (2 * (r & 3)))  # entry r's low bit flipped
    assert check_packed(full, packed, shape, len(pattern), everywhere) >= 0


def test_verify_reports_the_two_bit_copies(tmp_path):
    from pdb_builder.make.verify import verify

    shape = Shape.devquiz(3, 3)
    build_pdb(shape, named_partition(shape, "4-4"), tmp_path)
    path = next(tmp_path.glob("*.pdb.*.h5"))
    r = verify(path, full=False)
    assert r.ok and "two-bit copies agree with the full tables (2 tables" in r.checks[-1]
    r = verify(path)
    assert r.ok and sum(f"packed/{i}: every entry and move decodes" in c for c in r.checks for i in (0, 1)) == 2


def test_build_two_bit_switch(tmp_path):
    from click.testing import CliRunner

    from solver.cli import main

    for flag, expect in (("--two-bit", True), ("--no-two-bit", False)):
        folder = tmp_path / flag
        r = CliRunner().invoke(
            main, ["-q", "build", "3x3", "--goal", "devquiz", "--partition", "4-4", flag, "--db-dir", str(folder)]
        )
        assert r.exit_code == 0, r.output
        with h5py.File(next(folder.glob("*.pdb.*.h5")), "r") as f:
            assert ("packed" in f) == expect


def test_next_placement_walks_rank_order():
    from numba import njit

    from pdb_builder.packed import _next_placement
    from pdb_builder.ranking import unrank_kernel, weights

    @njit
    def walk(n, k, w, start, steps):
        pos = np.empty(k, dtype=np.int64)
        slot_of = np.zeros(n, dtype=np.int64)
        used = unrank_kernel(start, n, k, w, pos)
        for s in range(k):
            slot_of[pos[s]] = s
        out = np.empty((steps, k), dtype=np.int64)
        masks = np.empty(steps, dtype=np.uint64)
        for i in range(steps):
            if i:
                used = _next_placement(pos, used, slot_of, n, k)
            out[i] = pos
            masks[i] = used
            for s in range(k):
                if slot_of[pos[s]] != s:  # slot_of follows every slot that moved
                    return out[:0], masks[:0]
        return out, masks

    for n, k, start, steps in [(6, 3, 0, 120), (7, 4, 0, 840), (16, 8, 123_456_789, 5000), (36, 5, 7, 3000)]:
        got, masks = walk(n, k, weights(n, k), start, steps)
        assert len(got) == steps
        for i in range(steps):
            assert tuple(got[i]) == unrank_py(start + i, n, k)
            assert int(masks[i]) == sum(1 << c for c in got[i])

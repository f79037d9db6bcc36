"""One bit an entry for zero-aware tables (pdb_builder/one_bit.py): every move of every
reachable abstract state decodes to the value the tables give, against a brute-force
BFS of the abstract states; a flipped bit is caught; searches reading the copies give
the breadth-first lengths and, on one thread, the nodes of the whole tables."""

import random

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from pdb_builder.board import Board, Shape
from pdb_builder.make.building import build_pdb, default_partition
from pdb_builder.make.one_bit import copy_fault, one_bit_copy
from pdb_builder.make.verify import verify
from pdb_builder.make.writing import add_one_bit
from pdb_builder.one_bit import WHOLE, bit_at, decode, few_whole
from pdb_builder.patterns import named_partition
from pdb_builder.regions import region_number
from pdb_builder.storage import open_database
from solver.cli import main
from solver.search.searcher import Searcher
from solver.search.tables import heuristic_for

from .conftest import THREADS, sample_states
from .naive import abstract_moves
from .test_zero_aware import EXACT, SHAPES, _states, _zero_reader, _zero_table, searched_shapes, solved_as_bfs


@pytest.mark.parametrize("shape, pattern", SHAPES, ids=lambda x: getattr(x, "key", str(x)))
def test_every_move_decodes_to_the_tables_value(shape, pattern):
    """From the value of every reachable abstract state (placement, blank cell), each
    move of a pattern tile onto a placement not read whole decodes, from its bit and its
    region's code alone, to the value the plain table and the codes give there; a move
    of the blank alone keeps the value.  Few placements are read whole."""
    table, stats = _zero_table(shape, pattern)
    zero = stats.zero
    bits, copy, whole = one_bit_copy(table, zero.codes, zero.step, shape, len(pattern))
    read = _zero_reader(shape, table, zero)
    decoded = 0
    for place, blank in _states(shape, pattern):
        _, _, v = read(place, blank)
        for (place2, blank2), cost in abstract_moves(shape, place, blank):
            r2, free2, v2 = read(place2, blank2)
            if cost == 0:
                assert v2 == v
            elif copy[r2] != WHOLE:
                code = int(copy[r2])
                j = region_number(free2, blank2, shape.width, shape.n)
                extra = v2 - int(table[r2])
                assert code == int(zero.codes[r2]) and (code == 0) <= (extra == 0), (r2, j)
                assert decode(bit_at(int(bits[r2 >> 3]), r2), v, extra) == v2, (place, blank, place2, v, v2)
                decoded += 1
    assert decoded > 0
    assert whole <= table.size // 8


def test_a_flipped_bit_or_code_is_caught(tmp_path):
    shape = Shape.devquiz(3, 3)
    table, stats = _zero_table(shape, (1, 2, 3))
    zero = stats.zero
    bits, copy, _ = one_bit_copy(table, zero.codes, zero.step, shape, 3)
    assert copy_fault(table, zero.codes, zero.step, shape, 3, bits, copy) == -1
    seen = np.flatnonzero(table != 255)
    for r in random.Random(0).sample(list(seen), 20):
        flipped = bits.copy()
        flipped[r >> 3] ^= 1 << (r & 7)
        assert copy_fault(table, zero.codes, zero.step, shape, 3, flipped, copy) >= 0, r
    changed = copy.copy()
    r = int(seen[np.flatnonzero(copy[seen] == 0)[0]])
    changed[r] = 1
    assert copy_fault(table, zero.codes, zero.step, shape, 3, bits, changed) >= 0
    rep = build_pdb(shape, named_partition(shape, "4-4"), tmp_path, zero_aware=True, one_bit=True)
    assert all(t.zero.one_bit is not None for t in open_database(rep.path).tables)
    assert verify(rep.path).ok and any("onebit/0: every entry and move decodes" in c for c in verify(rep.path).checks)
    with h5py.File(rep.path, "r+") as f:
        ds = f["onebit/0"]
        ds[3] = ds[3] ^ 1
    assert not verify(rep.path).ok


def test_a_zero_aware_file_without_copies_gets_them(tmp_path):
    shape = Shape.devquiz(2, 4)
    part = named_partition(shape, "4-3")
    rep = build_pdb(shape, part, tmp_path, zero_aware=True, one_bit=True)
    with h5py.File(rep.path, "r+") as f:  # as a file built before the copies were
        for i in range(2):
            del f[f"onebit/{i}"], f[f"onebit-codes/{i}"], f[f"blocks/onebit/{i}"], f[f"blocks/onebit-codes/{i}"]
    assert all(t.zero.one_bit is None for t in open_database(rep.path, verify=True).tables)
    assert build_pdb(shape, part, tmp_path, zero_aware=True).status == "skipped"  # (not asked for)
    assert build_pdb(shape, part, tmp_path, zero_aware=True, one_bit=True).status == "updated"
    assert add_one_bit(rep.path) == 0
    db = open_database(rep.path, verify=True)
    assert all(t.zero.one_bit is not None for t in db.tables) and verify(rep.path).ok
    shown = CliRunner().invoke(main, ["inspect", rep.path])
    assert (
        shown.exit_code == 0
        and "one-bit copy: 1,890 bytes (the table and its codes: 3,360), 20 placements read whole" in shown.output
    ), shown.output


@pytest.fixture(scope="module")
def one_bit_tables(tmp_path_factory):
    folder = tmp_path_factory.mktemp("onebit")
    for shape, name in ((Shape.devquiz(3, 3), "4-4"), (Shape.devquiz(2, 4), "4-3")):
        build_pdb(shape, named_partition(shape, name), folder, zero_aware=True, one_bit=True)
    for shape in EXACT:
        build_pdb(shape, default_partition(shape, 1 << 20), folder, zero_aware=True, one_bit=True)
    return folder


@pytest.mark.parametrize("threads", THREADS)
def test_lengths_equal_bfs_reading_one_bit_copies(one_bit_tables, threads):
    """Every length the breadth-first one, with and without walls (cut vertices
    among them), on one thread and several; on one thread the same nodes as the
    zero-aware tables read whole (the same values, read another way)."""
    for shape in searched_shapes(threads):
        h = heuristic_for(shape, one_bit_tables)
        s = Searcher(h, prune=8, one_bit=1.0, frontier=0)  # (every copy: small tables mark more placements whole)
        assert (s.lk_pk == 2).all(), h.names
        whole = Searcher(h, prune=8, frontier=0, one_bit=False)
        assert not whole.lk_pk.any()
        assert [x == 2 for x in Searcher(h).lk_pk] == [few_whole(lk.zero.one_bit) for lk in h.lookups]
        dist, states = sample_states(shape, 12, seed=threads)
        for cells in states:
            board = Board(shape, cells)
            res = solved_as_bfs(s, board, dist, threads)
            if threads == 1:  # each iteration's threshold and nodes
                assert [it[:2] for it in res.iterations] == [it[:2] for it in whole.solve(board).iterations]

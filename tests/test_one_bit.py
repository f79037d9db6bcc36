"""One bit an entry for zero-aware tables (pdb_builder/one_bit.py): every move of every
reachable abstract state decodes to the value the tables give, against a brute-force
BFS of the abstract states; the side table gives every placement read whole its value
and code; a flipped bit is caught; searches reading the copies, with side tables and
without, give the breadth-first lengths and, on one thread, the nodes of the whole
tables."""

import random
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from pdb_builder.board import Board, Shape
from pdb_builder.make.building import build_pdb, default_partition
from pdb_builder.make.one_bit import copy_fault, one_bit_copy, side_fault, side_table, unpaired
from pdb_builder.make.verify import verify
from pdb_builder.make.writing import ONE_BIT_DATASETS, add_one_bit, seal
from pdb_builder.one_bit import ENCODING as ONE_BIT_ENCODING
from pdb_builder.one_bit import SIDE_BITS, WHOLE, bit_at, decode, few_whole
from pdb_builder.patterns import named_partition
from pdb_builder.regions import region_number
from pdb_builder.storage import open_database
from solver.cli import main
from solver.search.estimate import side_entry
from solver.search.searcher import Searcher
from solver.search.tables import heuristic_for

from .conftest import THREADS, flip_bit, sample_states
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


@pytest.mark.parametrize("shape, pattern", SHAPES, ids=lambda x: getattr(x, "key", str(x)))
def test_the_side_table_holds_every_placement_read_whole(shape, pattern):
    """Walking the side table's buckets gives exactly the placements coded WHOLE, each
    with its plain value and code; the kernel's lookup finds each; a changed entry or
    bucket start is caught."""
    table, stats = _zero_table(shape, pattern)
    zero = stats.zero
    _, copy, whole = one_bit_copy(table, zero.codes, zero.step, shape, len(pattern))
    side, index, shift = side_table(table, zero.codes, copy)
    assert 0 < shift <= SIDE_BITS and side.size == whole and index[-1] == whole
    held = {}
    for b in range(index.size - 1):
        for e in side[index[b] : index[b + 1]]:
            held[(b << shift) + (int(e) >> SIDE_BITS)] = (int(e) >> 8) & 255, int(e) & 255
    marked = np.flatnonzero(copy == WHOLE)
    assert sorted(held) == marked.tolist()
    assert all(held[r] == (int(table[r]), int(zero.codes[r])) for r in marked)
    for r in marked:
        assert side_entry(index.ctypes.data, side.ctypes.data, shift, int(r)) == int(table[r]) << 8 | int(zero.codes[r])
    assert side_fault(table, zero.codes, copy, side, index, shift) == -1
    if whole:
        changed = side.copy()
        changed[-1] ^= 1 << 8
        assert side_fault(table, zero.codes, copy, changed, index, shift) == int(marked[-1])
        moved = index.copy()
        moved[1:-1] = 0
        assert index.size == 2 or side_fault(table, zero.codes, copy, side, moved, shift) >= 0
    assert side_fault(table, zero.codes, copy, side[:-1], index, shift) == (-2 if whole else -1)


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
    checks = verify(rep.path).checks
    assert verify(rep.path).ok and any("onebit-codes/0: every entry and move decodes" in c for c in checks)
    whole = open_database(rep.path).tables[0].zero.one_bit.whole
    assert any(f"onebit-whole/0: the {whole:,} placements read whole" in c for c in checks), checks
    codes, pairs = _read(rep.path, "onebit-codes/0"), _read(rep.path, "onebit-pairs/0")
    r = int(np.flatnonzero(codes != WHOLE)[0])
    changed = pairs.copy()
    changed[codes[r]] ^= 1 << 8  # a pair's bit, its checksum written again: only the content check can tell
    _rewrite(rep.path, "onebit-pairs/0", changed)
    bad = verify(rep.path)
    assert not bad.ok and "onebit-codes/0" in bad.error, bad


def _read(path, name) -> np.ndarray:
    with h5py.File(path, "r") as f:
        return f[name][:]


def _rewrite(path, name, arr) -> None:
    with h5py.File(path, "r+") as f:
        f[name][...] = arr
        seal(f, name, arr)


def _strip(path, names) -> None:
    """Remove datasets ``names`` of ``path`` (where they are) and their block digests."""
    with h5py.File(path, "r+") as f:
        for name in names:
            for n in (name, f"blocks/{name}"):
                if n in f:
                    del f[n]


def _as_built_before(path, side: bool) -> None:
    """Make ``path``'s copies as a build wrote them before their bits were folded into
    the code bytes (their bits apart, ``onebit/i``) and, unless ``side``, before side
    tables."""
    with h5py.File(path, "r") as f:
        tables = len(f["tables"])
    for i in range(tables):
        codes, pairs, full = (_read(path, f"{n}/{i}") for n in ("onebit-codes", "onebit-pairs", "tables"))
        bits, copy = unpaired(codes, pairs, full)
        _strip(
            path,
            [f"onebit-pairs/{i}", f"onebit-codes/{i}"] + ([] if side else [f"onebit-whole/{i}", f"onebit-index/{i}"]),
        )
        with h5py.File(path, "r+") as f:
            for name, arr in ((f"onebit/{i}", bits), (f"onebit-codes/{i}", copy)):
                f.create_dataset(name, data=arr)
                f[name].attrs["encoding"] = ONE_BIT_ENCODING
                f[name].attrs["whole"] = int(np.count_nonzero(copy == WHOLE))
                seal(f, name, arr)


def test_a_zero_aware_file_without_copies_gets_them(tmp_path):
    shape = Shape.devquiz(2, 4)
    part = named_partition(shape, "4-3")
    rep = build_pdb(shape, part, tmp_path, zero_aware=True, one_bit=True)
    path = Path(rep.path)
    _strip(rep.path, [f"{d}/{i}" for d in ONE_BIT_DATASETS for i in range(2)])  # as a file built before copies
    assert all(t.zero.one_bit is None for t in open_database(rep.path, verify=True).tables)
    assert build_pdb(shape, part, tmp_path, zero_aware=True).status == "skipped"  # (not asked for)
    assert build_pdb(shape, part, tmp_path, zero_aware=True, one_bit=True).status == "updated"
    assert add_one_bit(rep.path) == 0
    db = open_database(rep.path, verify=True)
    assert all(t.zero.one_bit is not None for t in db.tables) and verify(rep.path).ok
    shown = CliRunner().invoke(main, ["inspect", rep.path])
    assert shown.exit_code == 0 and (
        "one-bit copy: 2,280 bytes (the table and its codes: 3,360), 20 placements read whole (from its side table)"
        in shown.output
    ), shown.output
    assert all(few_whole(t.zero.one_bit) for t in db.tables)  # (a search reads a copy with a side table)
    for side in (False, True):  # as files built before the side tables, and before the pairs
        _as_built_before(rep.path, side)
        old = open_database(rep.path, verify=True).tables
        assert all(t.zero.one_bit.pairs is None and (t.zero.one_bit.side is not None) == side for t in old)
        assert verify(rep.path).ok and any("onebit/0: every entry" in c for c in verify(rep.path).checks)
        if not side:
            assert [few_whole(t.zero.one_bit) for t in old] == [t.zero.one_bit.whole == 0 for t in old]  # (of 1,680)
            assert "20 placements read whole (from the table)" in CliRunner().invoke(main, ["inspect", rep.path]).output
        size = path.stat().st_size
        assert build_pdb(shape, part, tmp_path, zero_aware=True, one_bit=True).status == "updated"
        now = open_database(rep.path, verify=True).tables
        assert all(t.zero.one_bit.pairs is not None and t.zero.one_bit.side is not None for t in now)
        assert verify(rep.path).ok and path.stat().st_size < size  # (written afresh: no space left behind)


@pytest.fixture(scope="module")
def one_bit_tables(tmp_path_factory):
    folder = tmp_path_factory.mktemp("onebit")
    for shape, name in ((Shape.devquiz(3, 3), "4-4"), (Shape.devquiz(2, 4), "4-3")):
        build_pdb(shape, named_partition(shape, name), folder, zero_aware=True, one_bit=True)
    for shape in EXACT:
        build_pdb(shape, default_partition(shape, 1 << 20), folder, zero_aware=True, one_bit=True)
    return folder


LAYOUTS = {"pairs": None, "bits-apart": True, "before-side-tables": False}


@pytest.fixture(scope="module", params=sorted(LAYOUTS))
def copies(request, one_bit_tables, tmp_path_factory):
    """(layout, folder): the tables with their copies in each layout a file may hold."""
    if LAYOUTS[request.param] is None:
        return request.param, one_bit_tables
    folder = tmp_path_factory.mktemp(request.param)
    for path in one_bit_tables.glob("*.h5"):
        shutil.copyfile(path, folder / path.name)
        _as_built_before(folder / path.name, LAYOUTS[request.param])
    return request.param, folder


@pytest.mark.parametrize("threads", THREADS)
def test_lengths_equal_bfs_reading_one_bit_copies(copies, threads):
    """Every length the breadth-first one, with and without walls (cut vertices
    among them), on one thread and several, for copies in each layout a file may hold
    (bits folded into the code bytes or apart; the placements read whole from the side
    tables or, a file built before them, from the tables); on one thread the same nodes
    as the zero-aware tables read whole (the same values, read another way)."""
    layout, folder = copies
    read_whole = 0
    for shape in searched_shapes(threads):
        h = heuristic_for(shape, folder)
        obs = [lk.zero.one_bit for lk in h.lookups]
        assert all((o.pairs is None) == (layout != "pairs") for o in obs)
        assert all((o.side is None) == (layout == "before-side-tables") for o in obs)
        s = Searcher(h, prune=8, one_bit=1.0, frontier=0)  # (every copy: small tables mark more placements whole)
        assert (s.lk_pk == 2).all(), h.names
        assert (s.zero.kernel[9] != 0).any() == (layout != "before-side-tables") and (s.zero.kernel[12] != 0).any() == (
            layout == "pairs"
        )
        read_whole += sum(o.whole for o in obs)
        whole = Searcher(h, prune=8, frontier=0, one_bit=False)
        assert not whole.lk_pk.any()
        assert [x == 2 for x in Searcher(h).lk_pk] == [few_whole(o) for o in obs]
        dist, states = sample_states(shape, 12, seed=threads)
        for cells in states:
            board = Board(shape, cells)
            res = solved_as_bfs(s, board, dist, threads)
            if threads == 1:  # each iteration's threshold and nodes
                assert [it[:2] for it in res.iterations] == [it[:2] for it in whole.solve(board).iterations]
    assert read_whole > 0


@pytest.mark.parametrize(
    "dsname", ["zero/0", "tables/0", "onebit-whole/0", "onebit-codes/0", "onebit-pairs/0", "onebit-index/0"]
)
def test_a_flipped_byte_a_search_on_copies_reads_is_refused(tmp_path, monkeypatch, dsname):
    """A search reading one-bit copies with side tables reads the tables and their codes
    only at its root (their blocks checked there, never hashed whole) and the copies and
    side tables anywhere (hashed whole; a side table's index as the file opens, so no
    read strays outside the side table): a flipped byte in any of them withholds the
    answer and names the dataset."""
    shape = Shape.devquiz(3, 3)
    rep = build_pdb(shape, named_partition(shape, "4-4"), tmp_path, zero_aware=True, one_bit=True)
    with h5py.File(rep.path, "r") as f:
        at = f[dsname].shape[0] - 1  # (one block a dataset here: the root's)
    flip_bit(rep.path, dsname, at, 0x04)
    monkeypatch.setattr("solver.search.searcher.kernel_loaded", lambda: True)
    r = CliRunner().invoke(main, ["solve", "--db-dir", str(tmp_path), "3,3,123456708"])
    assert r.exit_code == 1 and dsname in r.output and "moves" not in r.stdout, r.output


def test_the_python_build_stores_copies(tmp_path):
    from pdb_builder import build

    (path,) = build("2x4", partition="4-3", goal="devquiz", db_dir=tmp_path, zero_aware=True, one_bit=True)
    copies = [t.zero.one_bit for t in open_database(path, verify=True).tables]
    assert all(c is not None and c.pairs is not None and c.side is not None for c in copies)

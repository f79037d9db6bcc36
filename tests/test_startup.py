"""Start-up: the plain-Python first search (solver.search.first_nodes) against BFS, the modules a
--no-db solve loads, and lazy checksums (pdb_builder.integrity): every table byte a
result rests on is checked before the result is reported, whichever search read it."""

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import pytest
from click.testing import CliRunner

from pdb_builder import integrity, storage
from pdb_builder.board import Board, Shape
from pdb_builder.entries import rank_py
from pdb_builder.errors import DatabaseError
from pdb_builder.formats import read_board_arg
from pdb_builder.make.building import build_pdb
from pdb_builder.moves import check_moves
from pdb_builder.patterns import named_partition
from solver.cli import main
from solver.search import tables
from solver.search.first_nodes import FIRST_NODES, first_nodes_search
from solver.search.heuristic import manhattan_heuristic
from solver.search.searcher import Searcher

from .conftest import flip_bit
from .naive import distance

ONE_MOVE = "3,3,123456708"  # DevQuiz 3x3, blank one cell left of its home: "R"


def _walk(shape: Shape, moves: int, rng: random.Random) -> Board:
    cells = list(shape.goal)
    b = cells.index(0)
    prev = -1
    for _ in range(moves):
        c = rng.choice([d for d in shape.neighbours[b] if d != prev] or list(shape.neighbours[b]))
        cells[b], cells[c] = cells[c], 0
        prev, b = b, c
    return Board(shape, tuple(cells))


@pytest.fixture(scope="module")
def small_blocks(tmp_path_factory):
    """3x3 4-4 tables written with 256-byte blocks: the 3,024-entry tables span 12."""
    d = tmp_path_factory.mktemp("blocks")
    mp = pytest.MonkeyPatch()
    mp.setattr(integrity, "BLOCK_SIZE", 256)
    try:
        s = Shape.devquiz(3, 3)
        build_pdb(s, named_partition(s, "4-4"), d)
    finally:
        mp.undo()
    return d / "3x3-devquiz.pdb.4-4.h5"


SHAPES = [Shape.devquiz(3, 3), Shape.devquiz(3, 3, [4]), Shape.korf(4, 3)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.key)
@pytest.mark.parametrize("with_tables", [False, True])
def test_quick_search_is_optimal(shape, with_tables, tmp_path):
    """Against bidirectional BFS on boards 4-24 moves out: every answer the plain-Python
    search gives is optimal and reaches the goal; longer ones are handed over."""
    if with_tables:
        sizes = {9: "4-4", 8: "4-3", 12: "6-5"}[len(shape.free_cells)]
        build_pdb(shape, named_partition(shape, sizes), tmp_path)
        h = tables.heuristic_for(shape, tmp_path)
        assert h.lookups
    else:
        h = manhattan_heuristic(shape)
    s = Searcher(h)
    rng = random.Random(7)
    answered = 0
    for moves in range(4, 25, 2):
        board = _walk(shape, moves, rng)
        res = first_nodes_search(s, board)
        if isinstance(res, tuple):
            assert res[1] == FIRST_NODES
            continue
        answered += 1
        assert res.status == "solved" and res.optimal and check_moves(board, res.moves).ok
        assert res.length == distance(shape, board.cells), board
    assert answered >= 3


def test_quick_search_reads_wall_free_tables_on_walled_boards(tmp_path):
    """Walls read as tiles fixed at home (and through the reflection): still optimal."""
    free = Shape.devquiz(3, 3)
    build_pdb(free, named_partition(free, "4-4"), tmp_path)
    rng = random.Random(3)
    answered = 0
    for walls in ([4], [0], [2, 6]):
        shape = Shape.devquiz(3, 3, walls)
        h = tables.heuristic_for(shape, tmp_path)
        assert h.lookups and all(lk.guard is not None for lk in h.lookups)
        s = Searcher(h)
        for moves in (5, 9, 13):
            board = _walk(shape, moves, rng)
            res = first_nodes_search(s, board)
            if not isinstance(res, tuple):
                answered += 1
                assert res.optimal and res.length == distance(shape, board.cells), board
    assert answered >= 5


def test_handover_counts_the_quick_nodes(monkeypatch):
    """A board past FIRST_NODES: the kernel finishes it, with the plain-Python nodes
    counted; a node limit below FIRST_NODES stops it there with a lower bound."""
    shape = Shape.devquiz(3, 3)
    board = Board(shape, (8, 6, 7, 2, 5, 4, 3, 0, 1))  # 31 moves, the 3x3's deepest
    monkeypatch.setattr("solver.search.searcher.kernel_loaded", lambda: False)
    s = Searcher(manhattan_heuristic(shape))
    res = s.solve(board)
    assert res.optimal and res.length == 31 and res.nodes > FIRST_NODES
    stopped = s.solve(board, node_limit=FIRST_NODES // 2)
    assert stopped.status == "limit" and stopped.nodes <= FIRST_NODES // 2 and 0 < stopped.lower_bound <= 31


def test_no_db_solve_loads_neither_numba_nor_h5py():
    code = (
        "import sys; from solver.cli import main\n"
        "sys.argv = ['slidepdb', 'solve', '--no-db', '1 0 2 3 4 5 6 7 8 9 10 11 12 13 14 15']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print([m for m in ('numba', 'h5py', 'distributed', 'matplotlib') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    assert lines[0].startswith("board: 1 move (optimal") and lines[0].endswith(": L") and lines[1] == "[]", out.stdout


# A fresh process: the kernel solves a board (argv[1]), then a function no cache
# holds is compiled and run.
KERNEL_THEN_COMPILE = """
import sys
from pathlib import Path
import solver.search.first_nodes as q
q.FIRST_NODES = 0
from pdb_builder.formats import read_board_arg
from solver.search.heuristic import manhattan_heuristic
from solver.search.searcher import Searcher
b = read_board_arg(sys.argv[1]).records[0].board
r = Searcher(manhattan_heuristic(b.shape)).solve(b)
registries = "numba.np.linalg" in sys.modules  # what numba's compiler loads first
import numba
@numba.njit
def twice(x):
    return 2 * x
print(r.length, r.optimal, registries, twice(21))
"""


def test_cached_kernels_load_without_the_compilers_registries():
    """pdb_builder.jitload: a warm cache loads the kernel without numba's compiler
    registries (about 0.2 s of a process's start), the kernel's answer is the BFS
    distance, and a later compile in the same process still gets them."""
    shape = Shape.devquiz(4, 3)
    b = _walk(shape, 60, random.Random(5))
    Searcher(manhattan_heuristic(shape)).solve(b)  # the kernel compiled or loaded: the cache is warm
    cmd = [sys.executable, "-c", KERNEL_THEN_COMPILE, b.to_devquiz()]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(distance(shape, b.cells)), "True", "False", "42"], out.stdout + out.stderr


def _damaged(src, tmp_path, dsname, offset):
    dst = tmp_path / src.name
    shutil.copy(src, dst)
    flip_bit(dst, dsname, offset, 0x04)
    tables._CACHE.clear()
    return dst


def _solve(db_dir, monkeypatch, kernel: bool):
    monkeypatch.setattr("solver.search.searcher.kernel_loaded", lambda: kernel)
    return CliRunner().invoke(main, ["solve", "--db-dir", str(db_dir), ONE_MOVE])


def test_lazy_open_hashes_nothing(small_blocks):
    db = storage.open_database(small_blocks, lazy=True)
    guards = [g for t in db.tables for g in (t.guard, t.packed_guard)]
    assert all(g is not None and not g.ok for g in guards)
    assert len(guards[0].digests) == 12  # 3,024 bytes in 256-byte blocks


def _root_rank(db_file) -> int:
    """The rank the one-move board's placement of tables/0's tiles has (as a
    reader computes it: tiles' cells among the free cells, lexicographic rank)."""
    board = read_board_arg(ONE_MOVE).records[0].board
    tiles = storage.open_database(db_file, verify=False).tables[0].tiles
    return rank_py([board.cells.index(t) for t in tiles], board.shape.n)


@pytest.mark.parametrize("kernel", [False, True], ids=["plain Python", "kernel"])
def test_a_flipped_byte_the_search_reads_is_refused(small_blocks, tmp_path, monkeypatch, kernel):
    """tables/0's entry for the one-move board itself: its answer is withheld, the
    file and dataset named, exit 1."""
    bad = _damaged(small_blocks, tmp_path, "tables/0", _root_rank(small_blocks))
    r = _solve(tmp_path, monkeypatch, kernel)
    assert r.exit_code == 1 and "tables/0" in r.output and bad.name in r.output and "moves" not in r.stdout, r.output


def test_a_flipped_two_bit_byte_is_refused_once_the_kernel_reads_the_copy(small_blocks, tmp_path, monkeypatch):
    _damaged(small_blocks, tmp_path, "packed/1", 700)
    r = _solve(tmp_path, monkeypatch, kernel=True)
    assert r.exit_code == 1 and "packed/1 fails its sha256" in r.output, r.output
    tables._CACHE.clear()
    r = _solve(tmp_path, monkeypatch, kernel=False)  # plain Python reads the one-byte tables only
    assert r.exit_code == 0 and "1 move (optimal" in r.output, r.output


@pytest.mark.parametrize("kernel", [False, True], ids=["plain Python", "kernel"])
def test_a_flipped_byte_no_search_reads_leaves_the_answer_and_verify_refuses(
    small_blocks, tmp_path, monkeypatch, kernel
):
    """The last entry of tables/0 (its tiles on the last cells, reversed) sits in a
    block the one-move board never reads: its answer stands (it rests on none of that
    block), and `slidepdb verify` refuses the file."""
    assert _root_rank(small_blocks) // 256 < 11
    _damaged(small_blocks, tmp_path, "tables/0", 3023)
    r = _solve(tmp_path, monkeypatch, kernel)
    assert r.exit_code == 0 and "1 move (optimal" in r.output, r.output
    r = CliRunner().invoke(main, ["verify", str(tmp_path / small_blocks.name)])
    assert r.exit_code == 1 and "tables/0" in r.output


def test_damaged_block_digests_are_refused_at_open(small_blocks, tmp_path):
    bad = _damaged(small_blocks, tmp_path, "blocks/tables/1", 3)
    with pytest.raises(DatabaseError, match="blocks/tables/1 is damaged"):
        storage.open_database(bad, lazy=True)


def test_files_without_block_digests_are_checked_whole_at_open(tmp_path):
    from .test_storage import FIXTURE  # written before block digests existed

    bad = _damaged(FIXTURE, tmp_path, "tables/1", 17)
    with h5py.File(FIXTURE, "r") as f:
        assert "blocks" not in f
    with pytest.raises(DatabaseError, match="tables/1 fails its sha256"):
        storage.open_database(bad, lazy=True)
    assert all(t.guard is None and t.packed_guard is None for t in storage.open_database(FIXTURE, lazy=True).tables)


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")  # the point of the test
def test_a_hash_begun_before_a_fork_is_done_again_in_the_child(small_blocks, monkeypatch):
    """Batch workers are forked: a whole-array hash a parent's thread began does not
    exist in the child, which hashes again rather than waiting for it forever."""
    import os
    import time

    slow = integrity.Guard._file_sha256
    monkeypatch.setattr(integrity.Guard, "_file_sha256", lambda self: time.sleep(0.5) or slow(self))
    g = storage.open_database(small_blocks, lazy=True).tables[0].packed_guard
    g.start()
    assert not g.ok  # still hashing at the fork
    pid = os.fork()
    if pid == 0:  # the child
        try:
            g.wait()
            os._exit(0 if g.ok else 3)
        except BaseException:
            os._exit(4)
    _, status = os.waitpid(pid, 0)
    g.wait()
    assert g.ok and os.waitstatus_to_exitcode(status) == 0


HELPER = """
import numba as nb

@nb.njit(cache=True, inline="always")
def step():
    return {value}
"""

USER = """
import numba as nb

from pdb_builder.jitload import load_cached

from .helper import step

@nb.njit(cache=True)
def kernel():
    return step() * 10

load_cached(globals())
"""


def test_a_cached_kernel_is_compiled_again_when_a_helper_it_inlines_from_another_module_changes(tmp_path):
    """pdb_builder.jitload keys a kernel's cache on every source it is compiled from:
    numba's own key, the kernel's file alone, would load the old kernel after the helper's
    module changed (numba issue 1833), as after an upgrade that changed only that module."""
    pkg = tmp_path / "jitpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "user.py").write_text(USER)
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": f"{tmp_path}{os.pathsep}{root}"}
    cmd = [sys.executable, "-c", "from jitpkg.user import kernel; print(kernel())"]
    for value in (1, 2, 2):  # compiled, compiled again after the change, loaded
        (pkg / "helper.py").write_text(HELPER.format(value=value))
        out = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, check=True)
        assert out.stdout.split() == [str(10 * value)], out.stdout + out.stderr
    assert len(list((tmp_path / "cache").rglob("user.kernel-*.nbi"))) == 1  # it was cached

import json
import random
import struct
import zlib

import h5py
import pytest
from click.testing import CliRunner

from pdb_builder.board import Board, Shape
from pdb_builder.formats import read_lines
from pdb_builder.lookup import evaluate
from pdb_builder.make.building import build_goal_table, build_pdb
from pdb_builder.make.catalogue import coverage, coverage_summary, list_databases
from pdb_builder.make.verify import verify
from pdb_builder.patterns import named_partition
from pdb_builder.storage import open_database
from solver.cli import main
from solver.search.searcher import Searcher
from solver.search.tables import heuristic_for

from .conftest import walk_cells
from .naive import bfs_distances


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("db")
    s = Shape.devquiz(3, 3)
    build_pdb(s, named_partition(s, "4-4"), d)
    build_goal_table(s, 8, d)
    w = Shape.devquiz(3, 3, [4])
    build_pdb(w, named_partition(w, "4-3"), d)
    return d


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_listing_exact(folder):
    rows = list_databases(folder)
    assert [(r.shape, r.kind, r.name, r.checksum, r.two_bit) for r in rows] == [  # file name order
        ("3x3-devquiz-w10", "pdb", "4-3", "ok", "yes"),
        ("3x3-devquiz", "goal-table", "depth 8", "ok", ""),
        ("3x3-devquiz", "pdb", "4-4", "ok", "yes"),
    ]
    assert rows[2].entries == 2 * 9 * 8 * 7 * 6 and rows[0].entries == 8 * 7 * 6 * 5 + 8 * 7 * 6
    assert rows[1].entries == len(bfs_distances(Shape.devquiz(3, 3), max_depth=8))
    r = run("inspect", "--db-dir", str(folder), "--json")
    assert r.exit_code == 0 and [json.loads(x)["name"] for x in r.stdout.splitlines()] == ["4-3", "depth 8", "4-4"]


def test_details_and_plot(folder, tmp_path):
    r = run("inspect", str(folder / "3x3-devquiz.pdb.4-4.h5"), "--json")
    info = json.loads(r.stdout)
    assert r.exit_code == 0 and len(info["tables"]) == 2
    assert sum(info["tables"][0]["layers"]) == 3024
    pytest.importorskip("matplotlib")
    png = tmp_path / "h.png"
    r = run("inspect", str(folder / "3x3-devquiz.pdb.4-4.h5"), "--plot", str(png))
    assert r.exit_code == 0
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width > 100 and height > 100
    zlib.decompress(b"".join(_idat(data)))  # the image data is intact


def _idat(data):
    i = 8
    while i < len(data):
        n = struct.unpack(">I", data[i : i + 4])[0]
        kind = data[i + 4 : i + 8]
        if kind == b"IDAT":
            yield data[i + 8 : i + 8 + n]
        i += 12 + n


def test_plot_without_matplotlib_is_one_line(folder, tmp_path, monkeypatch):
    import builtins

    real = builtins.__import__

    def fake(name, *a, **k):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", fake)
    r = run("inspect", str(folder / "3x3-devquiz.pdb.4-4.h5"), "--plot", str(tmp_path / "x.png"))
    assert r.exit_code == 2 and "needs matplotlib" in r.output and "Traceback" not in r.output


def walk(shape, steps=200, seed=0):
    """A board a random walk of the blank away from the goal (:func:`walk_cells`), as text."""
    return str(Board(shape, tuple(walk_cells(shape, steps, seed))))


def test_coverage_exact(folder, tmp_path):
    lines = [
        "9 9 9 9",
        "4",
        "3,3,123456708",  # 1 move from the goal: inside the goal table
        walk(Shape.devquiz(3, 3, [4])),  # exact PDB for w10 (cell 4)
        walk(Shape.devquiz(3, 3, [0])),  # wall-free PDB only
        walk(Shape.devquiz(4, 3)),
    ]  # no table
    bs = read_lines(lines, "p")
    covs = coverage(bs.records, folder)
    assert [c.served_by for c in covs] == ["exact", "exact", "wall-free", "none"]
    assert covs[0].in_goal_table == 1 and covs[0].goal_table
    assert covs[1].exact == ["3x3-devquiz-w10.pdb.4-3.h5"] and covs[1].wall_free == ["3x3-devquiz.pdb.4-4.h5"]
    for c, rec in zip(covs, bs.records):  # optimal lengths: IDA* on Manhattan distance alone (an empty folder)
        assert c.manhattan <= c.h0 <= Searcher(heuristic_for(rec.board.shape, tmp_path)).solve(rec.board).length
    summary = {s["size"]: s for s in coverage_summary(covs)}
    assert summary["3x3"]["boards"] == 3 and summary["3x3"]["covered"] == 1.0
    assert summary["all"]["none"] == 1 and summary["4x3"]["covered"] == 0.0
    f = folder / "problems.txt"
    f.write_text("\n".join(lines) + "\n")
    r = run("inspect", "--db-dir", str(folder), "--problems", str(f), "--suggest")
    assert r.exit_code == 0 and "slidepdb build 4x3 --goal devquiz" in r.output


def test_python_evaluator_matches_kernel(folder):
    for shape in (Shape.devquiz(3, 3), Shape.devquiz(3, 3, [4]), Shape.devquiz(3, 3, [0])):
        h = heuristic_for(shape, folder)
        s = Searcher(h, packed=False)  # the evaluator reads the full tables
        two_bit = Searcher(h)  # relaxed values (packed.py): never above
        dist = bfs_distances(shape)
        for cells in random.Random(3).sample(sorted(dist), min(200, len(dist))):
            sums = evaluate(h.lookups, cells, h.ngroups)
            assert s.initial_h(Board(shape, cells)) == max([shape.manhattan(cells)] + sums)
            assert two_bit.initial_h(Board(shape, cells)) <= s.initial_h(Board(shape, cells))


def test_verify_ok_and_flipped_byte(folder, tmp_path):
    r = verify(folder / "3x3-devquiz.pdb.4-4.h5")
    assert r.ok and any("admissible on 2000 states" in c for c in r.checks)
    assert sum("entries equal a fresh BFS" in c and "every entry and move decodes" in c for c in r.checks) == 2
    assert verify(folder / "3x3-devquiz.goal.d8.h5").ok
    import shutil

    bad = tmp_path / "3x3-devquiz.pdb.4-4.h5"
    shutil.copy(folder / "3x3-devquiz.pdb.4-4.h5", bad)
    with h5py.File(bad, "r") as f:
        off = f["tables/0"].id.get_offset()
    with open(bad, "r+b") as fh:
        fh.seek(off + 100)
        fh.write(b"\xff")
    r = run("verify", str(bad))
    assert r.exit_code == 1 and "FAILED" in r.output and "tables/0" in r.output
    r = run("inspect", "--db-dir", str(tmp_path))
    assert "BAD" in r.output
    assert r.exit_code == 1 and f"error: {bad}: damaged" in r.output  # the file named, exit 1 as for any damage


def test_verify_catches_inadmissible_values(folder, tmp_path):
    import shutil

    from pdb_builder.make.writing import seal

    bad = tmp_path / "3x3-devquiz.pdb.4-4.h5"
    shutil.copy(folder / "3x3-devquiz.pdb.4-4.h5", bad)
    with h5py.File(bad, "r+") as f:
        data = f["tables/1"][()]
        data[data < 255] += 3  # every value too large, checksum made consistent
        f["tables/1"][...] = data
        seal(f, "tables/1", data)
    r = verify(bad, full=False)  # the spot check against exact distances
    assert not r.ok and "tables/1" in r.error and "inadmissible" in r.error
    r = verify(bad)
    assert not r.ok and "tables/1" in r.error and "inadmissible" in r.error


def _tamper(src, dst, dataset, change):
    """``dst``: a copy of ``src`` with ``change(array)`` applied to ``dataset`` and its
    checksums rewritten to match, so that only a content check can tell."""
    import shutil

    from pdb_builder.make.writing import seal

    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        data = f[dataset][()]
        change(data)
        f[dataset][...] = data
        seal(f, dataset, data)
    return dst


@pytest.mark.parametrize("delta", [2, -2])
def test_full_verify_catches_one_entry_changed(folder, tmp_path, delta):
    """One deep entry raised (or lowered) by 2, checksum rewritten: the spot check
    passes it, the full check names the table, the rank and both values."""
    import numpy as np

    def change(data):
        r = int(np.flatnonzero(data == data[data < 255].max())[0])  # a deepest entry: far from every sample
        data[r] = int(data[r]) + delta
        change.rank = r

    bad = _tamper(folder / "3x3-devquiz.pdb.4-4.h5", tmp_path / "3x3-devquiz.pdb.4-4.h5", "tables/0", change)
    if delta > 0:
        assert verify(bad, full=False).ok  # what verify did before: its 2000 sampled states miss it
    r = run("verify", str(bad))
    assert r.exit_code == 1 and f"tables/0: rank {change.rank} holds" in r.output
    assert ("inadmissible" in r.output) == (delta > 0)


def test_full_verify_catches_a_two_bit_entry_changed(folder, tmp_path):
    import numpy as np

    from pdb_builder.packed import neighbour_ranks

    db = open_database(folder / "3x3-devquiz.pdb.4-4.h5")
    full = np.asarray(db.tables[0].data)
    # an entry with a deeper neighbour (a lowering of a local maximum within max-lowering would be admissible)
    r = next(
        r
        for r in np.argsort(-full.astype(int), kind="stable")
        if full[r] < 255 and any(full[r] < full[q] < 255 for q in neighbour_ranks(db.shape, 4, int(r)))
    )
    r = int(r)

    def change(packed):
        packed[r >> 2] ^= np.uint8(2 << (2 * (r & 3)))  # entry r's high bit flipped: its value 4 off

    bad = _tamper(folder / "3x3-devquiz.pdb.4-4.h5", tmp_path / "3x3-devquiz.pdb.4-4.h5", "packed/0", change)
    r = run("verify", str(bad))
    assert r.exit_code == 1 and "packed/0: rank" in r.output and "does not decode" in r.output


@pytest.mark.parametrize("how", ["raise", "lower", "drop"])
def test_full_verify_certifies_goal_tables(folder, tmp_path, how):
    """A goal table passes its certificate; one distance changed by 2 (or one state
    removed, checksums rewritten) fails it."""
    import numpy as np

    from pdb_builder.make.writing import seal

    src = folder / "3x3-devquiz.goal.d8.h5"
    r = verify(src)
    assert r.ok and any("every distance exact" in c for c in r.checks)
    bad = tmp_path / src.name
    import shutil

    shutil.copy(src, bad)
    with h5py.File(bad, "r+") as f:
        dist, keys = f["dist"][()], f["keys"][()]
        row = int(np.flatnonzero(dist == 5)[0])
        if how == "drop":
            dist, keys = np.delete(dist, row), np.delete(keys, row, axis=0)
            for name, arr in (("dist", dist), ("keys", keys)):
                attrs = dict(f[name].attrs)
                del f[name]
                f.create_dataset(name, data=arr)
                f[name].attrs.update(attrs)
        else:
            dist[row] = int(dist[row]) + (2 if how == "raise" else -2)
            f["dist"][...] = dist
        for name, arr in (("dist", dist), ("keys", keys)):
            seal(f, name, arr)
    r = run("verify", str(bad))
    assert r.exit_code == 1 and "breaks the BFS certificate" in r.output, r.output

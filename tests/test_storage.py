import json
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest
from click.testing import CliRunner

from pdb_builder import reading, storage
from pdb_builder.board import Shape
from pdb_builder.errors import BoardError, DatabaseError
from pdb_builder.make.building import build_pdb, compute_pdb
from pdb_builder.patterns import named_partition
from solver.cli import main

from .conftest import flip_bit

FIXTURE = Path(__file__).parent / "data" / "3x3-devquiz.pdb.3-3-2.v1.h5"


def test_committed_v1_fixture_reads_back():
    db = storage.open_database(FIXTURE)
    assert db.kind == "pdb" and db.shape == Shape.devquiz(3, 3)
    assert int(db.attrs["format-version"]) == 1 and db.attrs["ranking-name"] == "lex-kperm"
    assert db.partition == ((1, 2, 3), (4, 5, 6), (7, 8))
    for t in db.tables:  # the values are still what the kernel computes today
        table, _ = compute_pdb(db.shape, t.tiles)
        assert np.array_equal(np.asarray(t.data), table)


def _copy(tmp_path):
    path = tmp_path / FIXTURE.name
    shutil.copy(FIXTURE, path)
    return path


def test_flipped_byte_is_caught(tmp_path):
    path = _copy(tmp_path)
    flip_bit(path, "tables/1", 17)
    with pytest.raises(DatabaseError, match="tables/1 fails its sha256 checksum.*rebuild"):
        storage.open_database(path)
    storage.open_database(path, verify=False)  # told not to check: loads


def test_newer_version_says_upgrade(tmp_path):
    path = _copy(tmp_path)
    with h5py.File(path, "r+") as f:
        f.attrs["format-version"] = storage.FORMAT_VERSION + 1
    with pytest.raises(DatabaseError, match="newer than this slidepdb reads.*upgrade"):
        storage.open_database(path)


def test_foreign_and_garbage_files(tmp_path):
    foreign = tmp_path / "x.h5"
    with h5py.File(foreign, "w") as f:
        f["data"] = np.zeros(3)
    with pytest.raises(DatabaseError, match="not a slidepdb database"):
        storage.open_database(foreign)
    garbage = tmp_path / "y.h5"
    garbage.write_bytes(b"not hdf5 at all")
    with pytest.raises(DatabaseError, match="not a readable HDF5 file"):
        storage.open_database(garbage)
    with pytest.raises(DatabaseError, match="no such database"):
        storage.open_database(tmp_path / "missing.h5")


def test_changed_ranking_refused(tmp_path):
    path = _copy(tmp_path)
    with h5py.File(path, "r+") as f:
        f.attrs["ranking-version"] = 99
    with pytest.raises(DatabaseError, match="ranking"):
        storage.open_database(path)


def test_compressed_layout_round_trip_and_damage(tmp_path):
    shape = Shape.devquiz(3, 3)
    rep = build_pdb(shape, named_partition(shape, "4-4"), tmp_path, layout="compressed")
    db = storage.open_database(rep.path)
    assert not isinstance(db.tables[0].data, np.memmap)
    with h5py.File(rep.path, "r") as f:
        assert f["tables/0"].fletcher32 and f["tables/0"].compression == "gzip"
    plain = build_pdb(shape, named_partition(shape, "4-4"), tmp_path / "plain")
    assert isinstance(storage.open_database(plain.path).tables[0].data, np.memmap)


def test_interrupted_write_leaves_no_final_file(tmp_path, monkeypatch):
    shape = Shape.devquiz(3, 3)

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(reading, "sha256", boom)  # the check of the written file, before it is published
    with pytest.raises(KeyboardInterrupt):
        build_pdb(shape, named_partition(shape, "4-4"), tmp_path)
    assert list(tmp_path.iterdir()) == []  # neither the final file nor a temporary one


def test_rerun_skips_and_overwrite_rebuilds(tmp_path):
    shape = Shape.devquiz(3, 3)
    part = named_partition(shape, "4-4")
    first = build_pdb(shape, part, tmp_path)
    assert first.status == "built"
    assert build_pdb(shape, part, tmp_path).status == "skipped"
    assert build_pdb(shape, part, tmp_path, overwrite=True).status == "rebuilt"
    # a damaged file is rebuilt rather than trusted
    with open(first.path, "r+b") as fh:
        fh.seek(0)
        fh.write(b"junk")
    assert build_pdb(shape, part, tmp_path).status == "rebuilt"
    other = named_partition(shape, "4-4")
    other = type(other)("4-4", ((1, 2, 3, 5), (4, 6, 7, 8)))
    with pytest.raises(BoardError, match="another partition"):
        build_pdb(shape, other, tmp_path)


def test_provenance_attributes(tmp_path):
    shape = Shape.devquiz(3, 3, [4])
    part = named_partition(shape, "4-3")
    rep = build_pdb(shape, part, tmp_path)
    db = storage.open_database(rep.path)
    for key in storage.REQUIRED_ROOT + ("ranking-name", "ranking-version", "partition-name", "partition"):
        assert key in db.attrs
    groups = json.loads(db.attrs["partition"])
    assert db.attrs["shape-key"] == shape.key and groups == [list(g) for g in part.groups]
    assert sorted(sum(groups, [])) == [1, 2, 3, 4, 6, 7, 8]  # tile 5's home is the wall
    t = db.tables[0].attrs
    assert len(t["histogram"]) == 256 and t["mean"] > 0 and len(t["sha256"]) == 64


def test_cli_build_summary_and_skip(tmp_path):
    r = CliRunner().invoke(
        main,
        ["build", "3x3", "--goal", "devquiz", "--partition", "4-4", "--goal-depth", "8", "--db-dir", str(tmp_path)],
    )
    assert r.exit_code == 0, r.output
    assert "3x3-devquiz" in r.stdout and "built" in r.stdout and "goal-table" in r.stdout
    r = CliRunner().invoke(main, ["build", "3x3", "--goal", "devquiz", "--partition", "4-4", "--db-dir", str(tmp_path)])
    assert r.exit_code == 0 and "skipped" in r.stdout
    r = CliRunner().invoke(main, ["build", "3x3", "--partition", "1,2/2,3", "--db-dir", str(tmp_path)])
    assert r.exit_code == 2 and "two patterns" in r.output
    r = CliRunner().invoke(main, ["build", "3x3", "--memory-limit", "lots", "--db-dir", str(tmp_path)])
    assert r.exit_code == 2


def test_cli_build_for_problem_file(tmp_path):
    f = tmp_path / "p.txt"
    f.write_text("1 1 1 1\n3\n3,3,1=3456780\n3,3,123=56780\n3,3,12345678=\n")
    r = CliRunner().invoke(main, ["build", str(f), "--db-dir", str(tmp_path / "db"), "--memory-limit", "64M"])
    assert r.exit_code == 0, r.output
    names = sorted(p.name for p in (tmp_path / "db").iterdir())
    assert [n.split(".")[0] for n in names] == ["3x3-devquiz-w2", "3x3-devquiz-w8"]  # walls on cells 1 and 3
    assert "the bottom-right cell is a wall" in r.stderr
    r = CliRunner().invoke(
        main, ["build", str(f), "--wall-free", "--db-dir", str(tmp_path / "wf"), "--memory-limit", "64M"]
    )
    assert [p.name.split(".")[0] for p in (tmp_path / "wf").iterdir()] == ["3x3-devquiz"]


def test_solver_reports_damaged_database(tmp_path):
    path = tmp_path / "3x3-devquiz.pdb.3-3-2.h5"
    shutil.copy(FIXTURE, path)
    with h5py.File(path, "r+") as f:
        f.attrs["magic"] = "other"
    r = CliRunner().invoke(main, ["solve", "--db-dir", str(tmp_path), "3,3,123456708"])
    assert r.exit_code == 1 and "not a slidepdb database" in r.output and "Traceback" not in r.output


def test_digests_alike_on_any_thread_count():
    from pdb_builder.integrity import digests, sha256

    arr = np.random.default_rng(5).integers(0, 255, size=(1 << 20) + 12_345, dtype=np.uint8)
    whole, blocks = digests(arr, 4096)
    for threads in (2, 3, 8):
        other, more = digests(arr, 4096, threads)
        assert other == whole == sha256(arr) and np.array_equal(more, blocks)

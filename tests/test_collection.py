"""Collections (pdb_builder/make/collection.py): candidates built, measured on sample
boards, the chosen set published with its record, listed by inspect as one entry;
answers with the collection checked against BFS."""

import json

import h5py
import pytest
from click.testing import CliRunner

from pdb_builder.board import Board, Shape
from pdb_builder.errors import BoardError
from pdb_builder.make import collection as col
from pdb_builder.make.building import build_pdb
from pdb_builder.moves import check_moves
from pdb_builder.patterns import named_partition
from pdb_builder.storage import pdb_filename
from solver.cli import main
from solver.search.measure import measure
from solver.search.searcher import Searcher
from solver.search.tables import heuristic_for

from .naive import distance

SHAPE = Shape.korf(3, 4)
MEMORY = 64 << 20  # 6-5 patterns on 3x4


def _meta(path) -> dict:
    with h5py.File(path, "r") as f:
        return json.loads(f.attrs["metadata"])


def _names(paths) -> tuple[str, ...]:
    return tuple(p.name.split(".pdb.")[1].removesuffix(".h5") for p in paths)


def test_candidates_are_distinct_partitions_of_the_largest_sizes():
    cands = col.candidates(SHAPE, MEMORY)
    assert len(cands) >= 3 and all(sorted(p.sizes) == [5, 6] for p in cands)
    assert len({p.groups for p in cands}) == len(cands) and all(p.name.startswith("6-5.") for p in cands)
    assert col.candidates(Shape.korf(4, 4), 4 << 30)[0].name == "7-8"  # Korf & Felner's cells first


def test_sample_boards_are_solvable_and_reproducible():
    a, how = col.sample_boards(SHAPE, 5, seed=3)
    b, _ = col.sample_boards(SHAPE, 5, seed=3)
    assert a == b and "uniformly random" in how and len(a) == 5
    assert all(distance(SHAPE, x.cells) is not None for x in a[:2])
    walks, how = col.sample_boards(Shape.korf(5, 5), 2, seed=1)
    assert "random walks" in how and all(sorted(w.cells) == list(range(25)) for w in walks)


def test_the_greedy_rule_on_given_figures(tmp_path):
    """The rule alone, on figures a fake measure hands out by set: the fewest nodes first,
    then the largest cut while nodes x (1 + READ_COST x (reads - 1)) falls (3x4: no
    reflection, one table read a partition)."""
    names = [p.name for p in col.candidates(SHAPE, MEMORY)][:3]
    a, b, c = names
    nodes = {(a,): 100, (b,): 90, (c,): 150, (b, a): 70, (b, c): 58, (b, c, a): 50}

    def fake(paths, boards):
        return {"nodes": nodes.get(_names(paths), 10**9)}

    rep = col.build_collection(SHAPE, 3, MEMORY, fake, db_dir=tmp_path, samples=2)
    # b (90); b + c: 58 x 1.6 = 92.8 >= 90: no second partition
    assert rep.record["members"] == [pdb_filename(SHAPE, b)]
    nodes[(b, c)] = 55  # 55 x 1.6 = 88 < 90: joins; b + c + a: 50 x 2.2 = 110 >= 88: stops
    rep = col.build_collection(SHAPE, 3, MEMORY, fake, db_dir=tmp_path, samples=2, overwrite=True)
    assert rep.record["members"] == [pdb_filename(SHAPE, b), pdb_filename(SHAPE, c)]
    rep = col.build_collection(SHAPE, 1, MEMORY, fake, db_dir=tmp_path, samples=2, overwrite=True)
    assert rep.record["members"] == [pdb_filename(SHAPE, b)]  # at most --collection N, however good a second
    nodes[(a,)] = 80
    rep = col.build_collection(SHAPE, 3, MEMORY, fake, db_dir=tmp_path, samples=2, overwrite=True)
    assert rep.record["members"] == [pdb_filename(SHAPE, a)]  # a, and no pair with a was measured cheaper
    assert [p.name for p in tmp_path.glob("*.h5")] == rep.record["members"]  # the earlier collection's gone


def test_a_set_costs_one_read_per_reading_of_each_partition():
    """On a square shape the solver reads a partition directly and through the
    reflection, unless it is its own mirror image; the cost counts those reads (on
    Korf's 100 with zero-aware tables, 7-8 then 8-7.far: 17,917 then 12,128 nodes a
    board, 0.26 then 0.23 s: the second pays, as 3 reads against 2 say and 2
    partitions against 1 did not)."""
    by = {p.name: p for p in col.candidates(Shape.korf(4, 4), 4 << 30)}
    assert col.table_reads(Shape.korf(4, 4), by["7-8"]) == 2
    assert col.table_reads(Shape.korf(4, 4), by["8-7.far"]) == 1  # its own mirror image
    assert all(col.table_reads(SHAPE, p) == 1 for p in col.candidates(SHAPE, MEMORY))  # 3x4: no reflection
    assert col.cost(12_128, 3) < col.cost(17_917, 2) and col.cost(12_128, 4) > col.cost(17_917, 2)


def test_sets_are_compared_on_the_boards_every_candidate_solved(tmp_path):
    """A board some candidate stopped on (its node limit) is left out of every comparison:
    here it would hide that the second partition cuts the others' nodes in half."""
    a, b = [p.name for p in col.candidates(SHAPE, MEMORY)][:2]
    per = {
        (a,): [[10, True], [10, True], [1000, False]],
        (b,): [[8, True], [8, True], [500, True]],
        (b, a): [[4, True], [4, True], [400, True]],
    }

    def fake(paths, boards):
        got = per.get(_names(paths), [[50, True], [50, True], [10**6, False]])
        return {"nodes": sum(n for n, _ in got), "per-board": got, "solved": sum(ok for _, ok in got)}

    rep = col.build_collection(SHAPE, 2, MEMORY, fake, db_dir=tmp_path, samples=3)
    assert rep.record["sample"]["compared-on"] == [0, 1]
    # b: 16 on boards 0 and 1; b + a: 8 x 1.6 = 12.8 < 16 (on all three: 804 x 1.6 > 516)
    assert rep.record["members"] == [pdb_filename(SHAPE, b), pdb_filename(SHAPE, a)]


def test_a_measured_collection_solves_at_bfs_lengths(tmp_path):
    rep = col.build_collection(SHAPE, 3, MEMORY, measure, db_dir=tmp_path, samples=6, seed=2)
    rec = rep.record
    singles = [f for f in rec["figures"] if len(f["set"]) == 1]
    assert len(singles) == len(rec["candidates"]) and rec["sample"]["drawn"].startswith("uniformly random")
    best = min(singles, key=lambda f: f["nodes"])
    chosen = [m.split(".pdb.")[1].removesuffix(".h5") for m in rec["members"]]
    assert chosen[0] == best["set"][0]
    kept = {tuple(f["set"]): f for f in rec["figures"]}
    for k in range(2, len(chosen) + 1):  # each member that joined made the set cheaper
        assert kept[tuple(chosen[:k])]["cost"] < kept[tuple(chosen[: k - 1])]["cost"]
    assert not (tmp_path / f".{SHAPE.key}.collection").exists()
    for m in rec["members"]:
        assert _meta(tmp_path / m)["collection"] == rec
    assert sorted(p.name for p in tmp_path.glob("*.h5")) == sorted(rec["members"])
    s = Searcher(heuristic_for(SHAPE, tmp_path))
    assert len(s.h.names) == len(chosen)
    for text in rec["sample"]["boards"][:3]:
        board = Board(SHAPE, tuple(int(x) for x in text.split()))
        r = s.solve(board)
        assert r.optimal and r.length == distance(SHAPE, board.cells) and check_moves(board, r.moves).ok


def test_a_killed_collection_build_resumes_and_publishes_nothing_before(tmp_path):
    first = col.candidates(SHAPE, MEMORY)[0]
    build_pdb(SHAPE, first, tmp_path / f".{SHAPE.key}.collection")  # a build killed after one candidate

    def interrupted(paths, boards):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        col.build_collection(SHAPE, 2, MEMORY, interrupted, db_dir=tmp_path, samples=2)
    assert list(tmp_path.glob("*.h5")) == []  # nothing the solver would read
    steps = []
    col.build_collection(SHAPE, 2, MEMORY, measure, db_dir=tmp_path, samples=2, on_step=steps.append)
    assert sum("skipped" in s for s in steps) == len(col.candidates(SHAPE, MEMORY))  # every build kept
    assert list(tmp_path.glob("*.h5"))


def _rows(runner, db_dir) -> list[dict]:
    out = runner.invoke(main, ["inspect", "--json", "--db-dir", str(db_dir)]).stdout
    return [json.loads(x) for x in out.splitlines() if x]


def test_inspect_lists_a_collection_as_one_entry(tmp_path):
    runner = CliRunner()
    r = runner.invoke(main, ["build", "3x4", "--collection", "3", "--memory-limit", "64M", "--db-dir", str(tmp_path)])
    assert r.exit_code == 0, r.output
    build_pdb(SHAPE, named_partition(SHAPE, "6-5"), tmp_path)  # a file of no collection
    rows = _rows(runner, tmp_path)
    kinds = sorted(x["kind"] for x in rows)
    assert kinds == ["collection", "pdb"]
    c = next(x for x in rows if x["kind"] == "collection")
    members = sorted(p.name for p in tmp_path.glob("3x4-korf.pdb.6-5.*.h5"))
    assert sorted(c["members"]) == members and c["checksum"] == "ok"
    text = runner.invoke(main, ["inspect", str(tmp_path / members[0])]).stdout
    assert "collection " in text and "sample: 12 boards" in text
    (tmp_path / members[0]).unlink()
    if len(members) > 1:
        rows = _rows(runner, tmp_path)
        assert "member missing" in next(x for x in rows if x["kind"] == "collection")["checksum"]


def test_collection_errors(tmp_path):
    runner = CliRunner()
    base = ["build", "3x4", "--memory-limit", "64M", "--db-dir", str(tmp_path)]
    r = runner.invoke(main, [*base, "--collection", "2", "--partition", "6-5"])
    assert r.exit_code == 2 and "--collection" in r.output
    r = runner.invoke(main, [*base, "--sample", __file__])
    assert r.exit_code == 2 and "--sample goes with --collection" in r.output
    build_pdb(SHAPE, col.candidates(SHAPE, MEMORY)[0], tmp_path)
    r = runner.invoke(main, [*base, "--collection", "2"])
    assert r.exit_code == 2 and "--overwrite" in r.output
    with pytest.raises(BoardError):
        col.build_collection(SHAPE, 0, MEMORY, measure, db_dir=tmp_path)

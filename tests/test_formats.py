"""Every line is solved for the goal its own format implies, by every command and path.

A DevQuiz line (``W,H,CELLS``) has the DevQuiz goal; a numeric or benchmark line has
``--goal`` (default korf).  ``run`` and ``solve`` must give every line of a mixed file
the same length and status, and each answer must reach its own line's goal.  The goal
and the simulation here are written out in this file, from the README's definitions,
not taken from the package; lengths are held to published optimal lengths and to a
plain BFS (tests/naive.py) on small boards.
"""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdb_builder import build
from pdb_builder.board import Shape
from pdb_builder.formats import read_file
from solver.cli import main

from .conftest import data_file
from .conftest import walk_cells as walk  # (the lengths are checked by the plain BFS)
from .naive import distance

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "scripts" / "samples.txt"
LABELS = "123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
STEP = {"L": (-1, 0), "R": (1, 0), "U": (0, -1), "D": (0, 1)}


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


# -- the README's definitions, written out independently ------------------------------


def parse(line: str, goal: str = "korf"):
    """(width, height, cells with None for a wall and 0 for the blank, goal cells, stated
    length) of one line: the README's formats, read here without the package."""
    line = line.strip()
    if "," in line:
        w, h, body = line.split(",")
        w, h = int(w), int(h)
        cells = [None if c == "=" else (0 if c == "0" else LABELS.index(c.upper()) + 1) for c in body]
        n = w * h
        target = [None if cells[i] is None else (0 if i == n - 1 else i + 1) for i in range(n)]
        return w, h, cells, target, None
    toks = line.split()
    stated = None
    side = int(len(toks) ** 0.5)
    if side * side != len(toks):  # a benchmark line: id, optimal length, cells
        stated, toks = int(toks[1]), toks[2:]
        side = int(len(toks) ** 0.5)
    cells = [None if t == "=" else int(t) for t in toks]
    n = side * side
    if goal == "korf":
        target = [None if cells[i] is None else i for i in range(n)]
    else:
        target = [None if cells[i] is None else (0 if i == n - 1 else i + 1) for i in range(n)]
    return side, side, cells, target, stated


def reaches_goal(line: str, moves: str, goal: str = "korf") -> bool:
    """Move the blank by ``moves`` on ``line``'s board; whether it ends on the line's goal."""
    w, h, cells, target, _ = parse(line, goal)
    cells = list(cells)
    b = cells.index(0)
    for m in moves:
        dx, dy = STEP[m]
        x, y = b % w + dx, b // w + dy
        if not (0 <= x < w and 0 <= y < h) or cells[y * w + x] is None:
            return False
        d = y * w + x
        cells[b], cells[d] = cells[d], cells[b]
        b = d
    return cells == target


def test_the_definitions_here_read_the_readme_examples():
    assert reaches_goal("3,3,123456708", "R")
    assert not reaches_goal("3,3,123456708", "L")
    assert reaches_goal("a 1 1 0 2 3 4 5 6 7 8", "L")  # benchmark line: Korf goal, blank to cell 0
    assert reaches_goal("1 0 2 3 4 5 6 7 8", "L")
    assert reaches_goal("1 2 3 4 5 6 7 0 8", "R", goal="devquiz")


# -- the mixed files --------------------------------------------------------------------


def numeric(cells) -> str:
    return " ".join("=" if t < 0 else str(t) for t in cells)


def devquiz(w, h, cells) -> str:
    return f"{w},{h}," + "".join("=" if t < 0 else ("0" if t == 0 else LABELS[t - 1]) for t in cells)


def small_mixed_lines() -> list[str]:
    """3x3 and 2x4 lines of every format and both goals, walled and not."""
    korf3 = Shape.make(3, 3, "korf")
    walled_korf = Shape.make(3, 3, "korf", [4])
    dq = Shape.make(3, 3, "devquiz")
    walled_dq = Shape.make(3, 3, "devquiz", [1])
    lines = [
        "a 1 1 0 2 3 4 5 6 7 8",  # benchmark, Korf goal: one move
        "1 0 2 3 4 5 6 7 8",  # numeric, Korf goal
        numeric(walk(korf3, 40, 1)),
        "b 0 " + numeric(walk(korf3, 31, 2)),  # stated 0: corrected below from the BFS
        numeric(walk(walled_korf, 30, 3)),
        devquiz(3, 3, walk(dq, 40, 4)),
        devquiz(3, 3, walk(walled_dq, 40, 5)),
        "3,3,123456708",
    ]
    out = []
    for line in lines:
        if line.startswith("b "):
            cells = line.split()[2:]
            w, h, grid, _, _ = parse(" ".join(cells))
            n = distance(korf3, tuple(-1 if c is None else c for c in grid))
            line = f"b {n} " + " ".join(cells)
        out.append(line)
    return out


def bfs_length(line: str) -> int:
    """The optimal length by the plain BFS of tests/naive.py on the line's own shape."""
    w, h, cells, target, _ = parse(line)
    walls = [i for i, t in enumerate(cells) if t is None]
    shape = Shape.make(w, h, "devquiz" if "," in line else "korf", walls)
    assert [(-1 if t is None else t) for t in target] == list(shape.goal)  # the definition here = the package's
    return distance(shape, tuple(-1 if t is None else t for t in cells))


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """The 4x4 6-6-3 tables for both goals (seconds each), which serve the samples too."""
    db = tmp_path_factory.mktemp("db")
    for goal in ("korf", "devquiz"):
        build("4x4", partition="6-6-3", goal=goal, db_dir=db)
    return db


def json_rows(r) -> dict[int, dict]:
    rows = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    return {row["index"]: row for row in rows}


def test_run_and_solve_agree_on_every_line_of_a_mixed_file(tables, tmp_path):
    """The samples (DevQuiz lines, walled and not, numeric Korf boards) and Korf's first
    20 benchmark lines: the same length and status from ``run`` and ``solve``, every
    ``run`` answer reaching its own line's goal, every benchmark line's stated length
    proven."""
    korf = data_file("korf100.txt").read_text().splitlines()[:20]
    samples = [line for line in SAMPLES.read_text().splitlines() if line.strip() and not line.startswith("#")]
    mixed = tmp_path / "mixed.txt"
    mixed.write_text("\n".join(samples + korf) + "\n")
    solved = run("solve", mixed, "--json", "--db-dir", tables, "--time-limit", 60)
    assert solved.exit_code == 0, solved.output
    out = tmp_path / "answers.txt"
    ran = run("run", mixed, "--out", out, "--json", "--db-dir", tables, "--no-build")
    assert ran.exit_code == 0, ran.output
    by_solve, by_run = json_rows(solved), json_rows(ran)
    lines = mixed.read_text().splitlines()
    assert len(by_run) == len(by_solve) == len(lines)
    for i, line in enumerate(lines, 1):
        s, r = by_solve[i], by_run[i]
        assert (r["status"], r["length"], r["optimal"]) == (s["status"], s["length"], s["optimal"]), line
        assert r["status"] == "solved" and r["optimal"], line
        assert reaches_goal(line, r["moves"]), line
        stated = parse(line)[4]
        if stated is not None:
            assert r["length"] == stated, line
    answers = out.read_text().splitlines()
    assert len(answers) == len(lines) and all(reaches_goal(line, a) for line, a in zip(lines, answers))


def test_run_builds_tables_for_each_lines_goal_and_matches_the_bfs(tmp_path):
    """From an empty folder, ``run`` builds the tables each line's goal needs and
    proves every line of both goals at the plain BFS's length."""
    lines = small_mixed_lines()
    f = tmp_path / "small.txt"
    f.write_text("\n".join(lines) + "\n")
    db = tmp_path / "db"
    r = run("run", f, "--out", tmp_path / "a.txt", "--json", "--db-dir", db)
    assert r.exit_code == 0, r.output
    rows = json_rows(r)
    for i, line in enumerate(lines, 1):
        assert rows[i]["optimal"] and rows[i]["length"] == bfs_length(line), line
        assert reaches_goal(line, rows[i]["moves"]), line
    built = {p.name.split(".")[0] for p in db.glob("*.h5")}
    assert {"3x3-korf", "3x3-devquiz"} <= built


def test_goal_option_reads_numeric_lines_for_the_devquiz_goal(tmp_path):
    """``--goal devquiz`` on ``run`` and ``solve``: numeric lines take the DevQuiz goal,
    DevQuiz lines keep theirs."""
    lines = ["1 2 3 4 5 6 7 0 8", "3,3,123456708"]
    f = tmp_path / "g.txt"
    f.write_text("\n".join(lines) + "\n")
    for command in (("solve", f, "--no-db"), ("run", f, "--out", tmp_path / "g.out", "--db-dir", tmp_path / "db")):
        r = run(*command, "--json", "--goal", "devquiz")
        assert r.exit_code == 0, r.output
        rows = json_rows(r)
        assert [rows[1]["moves"], rows[2]["moves"]] == ["R", "R"], r.output
        assert all(reaches_goal(line, rows[i + 1]["moves"], goal="devquiz") for i, line in enumerate(lines))


def test_a_stated_length_a_proof_disagrees_with_is_a_contradiction(tmp_path):
    """A benchmark line stating the wrong optimal length: exit 1, both named, from
    ``run``, ``solve`` and the API; never a warning beside an answer called optimal."""
    from solver import solve

    f = tmp_path / "wrong.txt"
    f.write_text("a 5 1 0 2 3 4 5 6 7 8\n")  # really 1 move
    for command in (("solve", f, "--no-db"), ("run", f, "--out", tmp_path / "w.out", "--db-dir", tmp_path / "db")):
        r = run(*command)
        assert r.exit_code == 1, r.output
        assert "contradiction" in r.output and "states an optimal length of 5" in r.output and "1 move" in r.output
        assert "warning:" not in r.output
    res = solve("a 5 1 0 2 3 4 5 6 7 8", use_db=False)
    assert res.contradiction and res.exit_code == 1 and res.length == 1
    # a proof longer than the stated length: the proof is withdrawn, the answer stays
    r = run("solve", "--no-db", "--json", "a 0 1 0 2 3 4 5 6 7 8")
    row = json.loads(r.stdout.splitlines()[0])
    assert r.exit_code == 1 and row["optimal"] is False and row["moves"] == "L" and "withdrawn" in row["contradiction"]


def test_resume_compare_retry_and_report_read_the_lines_goal(tmp_path):
    """A journal line of the same text for another goal (the code before wrote those) is
    not taken for this board; ``--compare`` and ``--retry`` simulate against the line's
    own goal; the report names each board's goal."""
    lines = ["a 1 1 0 2 3 4 5 6 7 8", "1 0 2 3 4 5 6 7 8", "3,3,123456708"]
    f = tmp_path / "k.txt"
    f.write_text("\n".join(lines) + "\n")
    out = tmp_path / "a.txt"
    journal = Path(str(out) + ".progress.jsonl")
    stale = [  # what a run that read every line for the DevQuiz goal journalled
        {"index": 1, "board": "1 0 2 3 4 5 6 7 8", "status": "unsolvable", "error": "parity", "size": "3x3"},
        {"index": 2, "board": "1 0 2 3 4 5 6 7 8", "status": "limit", "goal": "devquiz", "size": "3x3"},
    ]
    journal.write_text("".join(json.dumps(d) + "\n" for d in stale))
    report = tmp_path / "r.jsonl"
    r = run("run", f, "--out", out, "--resume", "--db-dir", tmp_path / "db", "--report", report)
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in report.read_text().splitlines()]
    assert [row["status"] for row in rows] == ["solved"] * 3 and [row["length"] for row in rows] == [1, 1, 1]
    assert [row["goal"] for row in rows] == ["korf", "korf", "devquiz"]
    answers = out.read_text().splitlines()
    assert all(reaches_goal(line, a) for line, a in zip(lines, answers))
    peer = tmp_path / "peer.txt"
    peer.write_text("L\nL\nR\n")
    r = run("solve", f, "--no-db", "--compare", peer)
    assert r.exit_code == 0 and "peer.txt" in r.output and "illegal" not in r.output.lower(), r.output
    r = run("run", f, "--out", out, "--resume", "--retry", "unproven", "--db-dir", tmp_path / "db")
    assert r.exit_code == 0, r.output
    assert out.read_text().splitlines() == answers


def test_dask_runs_read_the_lines_goal(tmp_path):
    """The same lines through a dask cluster: the records travel with their goals."""
    distributed = pytest.importorskip("distributed")
    from solver.run.pipeline import run_pipeline

    lines = small_mixed_lines()
    f = tmp_path / "small.txt"
    f.write_text("\n".join(lines) + "\n")
    recs = read_file(str(f)).records
    cluster_args = dict(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None)
    with distributed.LocalCluster(**cluster_args) as cluster, distributed.Client(cluster) as client:
        res = run_pipeline(recs, tmp_path / "a.txt", db_dir=tmp_path / "db", scheduler=client, workers=2)
    for rec, line in zip(recs, lines):
        o = res.outcomes[rec.index]
        assert o.optimal and o.length == bfs_length(line), line
        assert reaches_goal(line, o.moves), line

"""Many hands on one folder: two runs on one answer file, two builds of one table, a
table removed for room while another process reads it, an answer file that is not one.

The processes here are real ones, held at a known point (a board journalled, a BFS
layer done, a search's first slice) by a file they wait for, never by sleeping: each
verdict holds on any machine."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdb_builder.formats import read_file
from pdb_builder.moves import check_moves
from solver.cli import main
from solver.run.files import RunFiles

from .test_inspect import walk

HANG = 300  # seconds: only a guard against a hang, never a verdict


def _child(tmp_path, code: str, *args: str) -> subprocess.Popen:
    """A Python process running ``code`` (``HOLD(tag)`` waits at a point until the test
    lets it go: ``tag.ready`` written, then ``tag.go`` awaited)."""
    prelude = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        D = Path({str(tmp_path)!r})
        def HOLD(tag):
            (D / (tag + ".ready")).touch()
            while not (D / (tag + ".go")).exists():
                time.sleep(0.01)
        """
    )
    return subprocess.Popen(
        [sys.executable, "-c", prelude + textwrap.dedent(code), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _held(tmp_path, proc: subprocess.Popen, tag: str) -> None:
    """Wait until ``proc`` is held at ``tag`` (it fails the test if it ends first)."""
    ready, t0 = tmp_path / f"{tag}.ready", time.monotonic()
    while not ready.exists():
        if proc.poll() is not None:
            pytest.fail(f"the process ended before {tag}: {proc.stderr.read()}")
        assert time.monotonic() - t0 < HANG, f"{tag} never reached"
        time.sleep(0.01)


def _go(tmp_path, tag: str) -> None:
    (tmp_path / f"{tag}.go").touch()


def _slidepdb(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solver", *args], capture_output=True, text=True, timeout=HANG, **kw)


def _boards(tmp_path, n: int = 4) -> Path:
    from pdb_builder.board import Shape

    f = tmp_path / "boards.txt"
    f.write_text("".join(walk(Shape.devquiz(3, 3, [4] if k % 2 else []), seed=k) + "\n" for k in range(n)))
    return f


def _all_answered(boards: Path, answers: Path) -> None:
    recs = read_file(str(boards)).records
    lines = answers.read_text().splitlines()
    assert len(lines) == len(recs)
    assert all(check_moves(r.board, m).ok for r, m in zip(recs, lines))


# -- one owner of an answer file ---------------------------------------------------------------


FIRST = """
from pdb_builder.formats import read_file
seen = []
def told(out):  # held once the first board has ended (and is journalled)
    seen.append(out)
    if len(seen) == 1:
        HOLD("first")
"""

BATCH = (
    FIRST
    + """
from solver.run.batch import run_batch
run_batch(read_file(sys.argv[1]).records, out_path=sys.argv[2], use_db=False, workers=1, on_outcome=told)
"""
)


def test_a_second_solve_on_an_answer_file_in_use_is_refused_at_once(tmp_path):
    """While one batch writes ans.txt (held after its first board), ``solve --out ans.txt``
    with --resume, without it, or with --fresh, and ``run`` on it, each exit 2 naming
    the running process; the journal keeps the first's one line; the first then
    finishes with every answer valid."""
    boards, out = _boards(tmp_path), tmp_path / "ans.txt"
    first = _child(tmp_path, BATCH, str(boards), str(out))
    _held(tmp_path, first, "first")
    journal = RunFiles(out).journal
    before = journal.read_text()
    for extra in (["--resume"], [], ["--fresh"]):
        r = _slidepdb("solve", str(boards), "--out", str(out), "--no-db", *extra)
        assert r.returncode == 2, r.stderr
        assert f"another run is writing it now (process {first.pid} on" in r.stderr and "Traceback" not in r.stderr
    r = _slidepdb("run", str(boards), "--out", str(out), "--resume", "--no-build", "--db-dir", str(tmp_path / "db"))
    assert r.returncode == 2 and f"process {first.pid}" in r.stderr, r.stderr
    assert journal.read_text() == before and len(before.splitlines()) == 2  # its first line and one board
    _go(tmp_path, "first")
    assert first.wait(HANG) == 0, first.stderr.read()
    _all_answered(boards, out)
    assert not RunFiles(out).lock.exists()  # let go, and removed


RUN = (
    FIRST
    + """
from solver.run.pipeline import run_pipeline
run_pipeline(read_file(sys.argv[1]).records, sys.argv[2], db_dir=sys.argv[3], build=False, budget=None,
             workers=1, on_outcome=told)
"""
)


def test_a_second_run_on_an_answer_file_in_use_is_refused_and_its_sittings_stay_true(tmp_path):
    """``slidepdb run --resume`` on the answer file of a run under way exits 2 before it
    counts a sitting: the sittings file holds the first run's one sitting, which spans
    its whole time."""
    boards, out, db = _boards(tmp_path), tmp_path / "ans.txt", tmp_path / "db"
    db.mkdir()
    first = _child(tmp_path, RUN, str(boards), str(out), str(db))
    _held(tmp_path, first, "first")
    r = _slidepdb("run", str(boards), "--out", str(out), "--resume", "--no-build", "--db-dir", str(db))
    assert r.returncode == 2 and f"process {first.pid}" in r.stderr, r.stderr
    refused_at = time.time()
    _go(tmp_path, "first")
    assert first.wait(HANG) == 0, first.stderr.read()
    _all_answered(boards, out)
    spans = [line.split() for line in RunFiles(out).sittings.read_text().splitlines()]
    spans = [(float(a), float(b)) for a, b in spans if not a.isidentifier()]
    assert len(spans) == 1 and spans[0][1] >= refused_at  # one sitting, counted to the run's real end


def test_a_killed_owner_lets_go_of_its_answer_file(tmp_path):
    """SIGKILL the batch that owns ans.txt: the OS drops its lock, and ``--resume``
    goes on from its journal."""
    boards, out = _boards(tmp_path), tmp_path / "ans.txt"
    first = _child(tmp_path, BATCH, str(boards), str(out))
    _held(tmp_path, first, "first")
    first.send_signal(signal.SIGKILL)
    first.wait(HANG)
    r = _slidepdb("solve", str(boards), "--out", str(out), "--no-db", "--resume", "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert "1 from an earlier run" in r.stdout
    _all_answered(boards, out)


@pytest.mark.parametrize("command", ["solve", "run"])
def test_out_refuses_a_file_that_is_not_an_answer_file_of_the_input(tmp_path, command):
    boards, notes = _boards(tmp_path, 2), tmp_path / "notes.txt"
    notes.write_text("my own notes\n")
    extra = ["--no-db"] if command == "solve" else ["--no-build", "--db-dir", str(tmp_path / "db")]
    r = CliRunner().invoke(main, [command, str(boards), "--out", str(notes), *extra])
    assert r.exit_code == 2, r.output
    assert "not an answer file of this input" in r.output and "--fresh" in r.output
    assert notes.read_text() == "my own notes\n" and not RunFiles(notes).lock.exists()
    notes.write_text("LURD\n\n")  # as many lines as boards, but not an answer to board 1
    r = CliRunner().invoke(main, [command, str(boards), "--out", str(notes), *extra])
    assert r.exit_code == 2 and "line 1 is not an answer to board 1" in r.output, r.output


def test_out_takes_an_empty_file_an_answer_file_of_the_input_and_fresh(tmp_path):
    boards, out = _boards(tmp_path, 2), tmp_path / "ans.txt"
    out.write_text("")
    assert CliRunner().invoke(main, ["solve", str(boards), "--out", str(out), "--no-db"]).exit_code == 0
    _all_answered(boards, out)
    r = CliRunner().invoke(main, ["solve", str(boards), "--out", str(out), "--no-db"])  # our own answers
    assert r.exit_code == 0, r.output
    out.write_text("notes\n")
    r = CliRunner().invoke(main, ["solve", str(boards), "--out", str(out), "--no-db", "--fresh"])
    assert r.exit_code == 0, r.output
    _all_answered(boards, out)


# -- one builder of a table --------------------------------------------------------------------


BUILD = """
from pdb_builder.board import Shape
from pdb_builder.make.building import build_pdb
from pdb_builder.patterns import named_partition
shape = Shape.devquiz(3, 3)
layers = []
def progress(*args):
    layers.append(args)
    if len(layers) == 1:
        HOLD("layer")
rep = build_pdb(shape, named_partition(shape, "4-4"), sys.argv[1], progress=progress, two_bit=False)
print(rep.status)
"""


def _waiting_build(db: Path) -> subprocess.Popen:
    """``slidepdb build`` of the table the held builder is building, once it says it waits."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "solver",
            "build",
            "3x3",
            "--goal",
            "devquiz",
            "--partition",
            "4-4",
            "--db-dir",
            str(db),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    said = []
    for line in proc.stderr:  # (each line as it comes: the wait is said before the build would start)
        said.append(line)
        if "another process is building it" in line:
            return proc
    pytest.fail(f"the second build never waited: {''.join(said)}")


def test_a_second_build_of_a_table_waits_for_the_first_and_keeps_its_file(tmp_path):
    from pdb_builder.storage import open_database

    db = tmp_path / "db"
    first = _child(tmp_path, BUILD, str(db))
    _held(tmp_path, first, "layer")
    second = _waiting_build(db)
    assert second.poll() is None  # waiting, not building
    _go(tmp_path, "layer")
    assert first.wait(HANG) == 0 and first.stdout.read().split() == ["built"]
    out, _ = second.communicate(timeout=HANG)
    assert second.returncode == 0 and " skipped " in out, out
    (table,) = db.glob("*.h5")
    open_database(table, verify=True)
    assert not [p for p in db.iterdir() if p.name.startswith(".")]  # no lock or temporary file left


def test_a_build_killed_while_another_waits_is_built_by_the_one_that_waited(tmp_path):
    from pdb_builder.storage import open_database

    db = tmp_path / "db"
    first = _child(tmp_path, BUILD, str(db))
    _held(tmp_path, first, "layer")
    second = _waiting_build(db)
    first.send_signal(signal.SIGKILL)
    first.wait(HANG)
    out, _ = second.communicate(timeout=HANG)
    assert second.returncode == 0 and " built " in out, out
    (table,) = db.glob("*.h5")
    open_database(table, verify=True)


# -- nothing removed while read ----------------------------------------------------------------


SEARCH = """
from pdb_builder.formats import parse_board_text, Record
from solver.api import SolverPool, solve_record
class Held:
    def __init__(self):
        self.slices = 0
    def search(self, threshold, nodes):
        self.slices += 1
        if self.slices == 1:
            HOLD("slice")
    def phase(self, what):
        pass
_, board, _, _ = parse_board_text(sys.argv[2])
pool = SolverPool(db_dir=sys.argv[1], threads=1, progress=Held(), python_first=False)
out = solve_record(Record(1, str(board), board), pool)
print(out.length, out.optimal, list(out.tables))
"""


def test_a_table_a_search_reads_is_not_removed_until_the_search_ends(tmp_path):
    """A search (held after its first slice) holds a shared lock on each table file it
    reads: removing it for room is refused meanwhile, and done once the search ends."""
    from pdb_builder import build
    from pdb_builder.locks import remove_unless_read

    db = tmp_path / "db"
    (path,) = build("3x3", goal="devquiz", db_dir=db, partition="4-4")
    child = _child(tmp_path, SEARCH, str(db), "3,3,168452=30")
    _held(tmp_path, child, "slice")
    assert not remove_unless_read(path) and path.exists()
    _go(tmp_path, "slice")
    assert child.wait(HANG) == 0, child.stderr.read()
    length, optimal, tables = child.stdout.read().split(maxsplit=2)
    assert (length, optimal) == ("16", "True") and Path(path).name in tables
    assert remove_unless_read(path) and not Path(path).exists()


READER = """
from pdb_builder.locks import reading
with reading([sys.argv[1]]):
    HOLD("read")
"""


def test_room_is_not_made_from_a_table_another_process_reads(tmp_path):
    """--disk-limit's room: a spent table of the run's own that another process reads is
    left (not yet: the build may wait), and removed once nobody reads it."""
    from .test_disk_room import _builds, _table

    b, db, ledger, res = _builds(tmp_path, 1000, {"3x3-devquiz-w1"})
    table = _table(db, "3x3-devquiz-w1.pdb.8.h5", 900)
    ledger.write_text(f"{table.name} {table.stat().st_ino}\n")
    b.used = 900
    reader = _child(tmp_path, READER, str(table))
    _held(tmp_path, reader, "read")
    assert b.make_room(500) is None and table.exists() and not res.removed_tables
    _go(tmp_path, "read")
    assert reader.wait(HANG) == 0
    assert b.make_room(500) is True and not table.exists() and res.removed_tables == [(table.name, 900)]


def test_a_table_built_again_by_another_process_is_not_the_runs_to_remove(tmp_path):
    """The ledger names each table with the file the run published: a file of that name
    built since by someone else (another inode) is never the run's to remove."""
    from .test_disk_room import _builds, _table

    b, db, ledger, res = _builds(tmp_path, 1000, {"3x3-devquiz-w1"})
    table = _table(db, "3x3-devquiz-w1.pdb.8.h5", 900)
    ledger.write_text(f"{table.name} {table.stat().st_ino}\n")
    other = _table(db, "other", 900)
    os.replace(other, table)  # published again by another run: another file of the same name
    b.used = 900
    assert b.make_room(500) is False and table.exists() and not res.removed_tables


def test_a_run_records_the_tables_it_built_with_their_files(tmp_path):
    from solver.run.builds import Builds
    from solver.run.options import RunResult

    from .test_disk_room import _plan, _Sittings

    class Report:
        status, path = "built", str(tmp_path / "x.pdb.8.h5")

    Path(Report.path).write_bytes(b"0")
    ledger = tmp_path / "a.built"
    b = Builds(RunResult(), tmp_path, None, _Sittings(), None, ledger)
    plan = _plan(10)
    plan.started = 0.0
    b.done(plan, Report(), None)
    Report.status = "skipped"  # a build that found the table built (by another process): not the run's
    b.done(plan, Report(), None)
    assert ledger.read_text() == f"x.pdb.8.h5 {Path(Report.path).stat().st_ino}\n"


# -- check counts lines; a journal's proof needs its tables --------------------------------------


def test_check_refuses_an_answer_file_with_a_line_missing(tmp_path):
    boards, answers = _boards(tmp_path, 3), tmp_path / "a.txt"
    assert CliRunner().invoke(main, ["solve", str(boards), "--no-db", "--out", str(answers)]).exit_code == 0
    assert CliRunner().invoke(main, ["check", str(boards), str(answers)]).exit_code == 0
    answers.write_text("".join(line + "\n" for line in answers.read_text().splitlines()[:-1]))
    r = CliRunner().invoke(main, ["check", str(boards), str(answers)])
    assert r.exit_code == 2 and "2 answer lines for 3 boards: 1 line missing" in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1


def _journal_of_one_board(tmp_path, db):
    """A file of two 3x3 boards, and the first one's journal line as a db search writes it
    (proven, its tables named)."""
    from pdb_builder import build

    build("3x3", goal="devquiz", db_dir=db, partition="4-4")
    f = tmp_path / "b.txt"
    f.write_text("3,3,168452=30\n3,3,123456708\n")
    r = CliRunner().invoke(main, ["solve", str(f), "--db-dir", str(db), "--json", "--workers", "1"])
    (line,) = [d for d in map(json.loads, r.stdout.splitlines()) if d["index"] == 1]
    assert line["optimal"] and line["certificate"]["tables"]
    return f, line


def _lengthened(line: dict) -> dict:
    """``line`` claiming a 2-move longer answer optimal, its certificate made to match."""
    n = line["length"] + 2
    return {**line, "moves": line["moves"] + "LR", "length": n, "lower_bound": n,
            "certificate": {**line["certificate"], "threshold": n, "length": n}}  # fmt: skip


@pytest.mark.parametrize(
    "edit",
    [
        None,  # as written: its proof stands
        lambda d: d["certificate"].update(tables={}),  # a certificate naming no tables
        lambda d: d.pop("certificate"),  # no certificate
        lambda d: (d.update(tables={}), d["certificate"].update(tables={})),  # nothing named at all
        lambda d: d["certificate"].update(tables={k: ["0" * 16] for k in d["tables"]}),  # other checksums
        lambda d: d["certificate"].update(length=d["length"] - 2),  # a certificate of another answer
    ],
)
def test_a_journalled_proof_is_trusted_only_with_its_tables(tmp_path, edit):
    """A journal line whose optimal claim lost what proves it (edited by hand, here to
    claim a longer answer optimal) counts as an answer on --resume: the board is searched
    again and proven at its true length; a line as written stands."""
    from solver.run.journal import input_key

    db = tmp_path / "db"
    f, line = _journal_of_one_board(tmp_path, db)
    claim = line if edit is None else _lengthened(line)
    if edit is not None:
        edit(claim)
    out = tmp_path / "a.txt"
    head = input_key(read_file(str(f)).records)
    RunFiles(out).journal.write_text(json.dumps(head) + "\n" + json.dumps(claim) + "\n")
    r = CliRunner().invoke(main, ["solve", str(f), "--out", str(out), "--db-dir", str(db), "--resume"])
    assert r.exit_code == 0, r.output
    assert f"{line['length']} moves (optimal" in r.output and out.read_text() == line["moves"] + "\nR\n"
    said = "1 journalled proof reopened" if edit is not None else "1 from an earlier run"
    assert said in r.output and ("reopened" in r.output) is (edit is not None), r.output


def test_a_file_system_without_locks_is_said_and_the_work_goes_on(tmp_path, monkeypatch, caplog):
    """Where flock is refused (ENOLCK, as on some network file systems): a run owns its
    answer file and a build its table without a lock, each saying so once; nothing is
    removed for room, since no one can know that it is not read."""
    import errno
    import fcntl

    from pdb_builder.locks import remove_unless_read
    from pdb_builder.make.building import building
    from solver.run.files import owning

    def refused(fd, how):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", refused)
    with caplog.at_level("WARNING"):
        with owning(tmp_path / "ans.txt"):
            pass
        with building(tmp_path / "db" / "t.h5"):
            pass
    said = caplog.text
    assert "takes no locks" in said and "not kept out" in said and "would both build it" in said
    table = tmp_path / "t.h5"
    table.write_bytes(b"x")
    assert not remove_unless_read(table) and table.exists()

"""What a user meets in the first hour: every output checked before the work and
written on its own after it; one-line errors; messages that say what happened."""

import json
from pathlib import Path

import h5py
import pytest
from click.testing import CliRunner

from pdb_builder.errors import EXIT_OUTPUT, OptionsError
from solver.cli import main
from solver.outcome import Outcome

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "scripts" / "problems-small.txt"
FIXTURE = Path(__file__).parent / "data" / "3x3-devquiz.pdb.3-3-2.v1.h5"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], prog_name="slidepdb")


def one_line(r, code=2) -> str:
    assert r.exit_code == code, r.output
    lines = [line for line in r.output.strip().splitlines() if line]
    assert len(lines) == 1 and "Traceback" not in r.output and "internal error" not in r.output, r.output
    return lines[0]


def three_boards(tmp_path) -> Path:
    f = tmp_path / "p.txt"
    f.write_text("3,3,123456708\n3,3,123450786\n3,3,120453786\n")
    return f


# -- outputs ----------------------------------------------------------------------------


def test_a_plot_name_matplotlib_cannot_write_is_refused_before_any_work(tmp_path):
    pytest.importorskip("matplotlib")
    f = three_boards(tmp_path)
    r = run("run", f, "--out", tmp_path / "a.txt", "--report", tmp_path / "r.csv", "--plot", tmp_path / "plot.txt")
    line = one_line(r)
    assert "--plot" in line and "'txt'" in line and ".png" in line
    assert not (tmp_path / "a.txt").exists() and not (tmp_path / "r.csv").exists()
    line = one_line(run("inspect", FIXTURE, "--plot", tmp_path / "x.txt"))
    assert "--plot" in line and "'txt'" in line


def test_an_output_that_fails_at_the_end_never_keeps_the_others_from_being_written(tmp_path, monkeypatch):
    """A plot that fails after the work: the answers, the report, the timeline and the
    summary are still written; the failure is named last; exit 6."""
    pytest.importorskip("matplotlib")
    import solver.run.timeline as timeline

    def broken(csv_path, png):
        raise ValueError("the plot failed")

    monkeypatch.setattr(timeline, "plot_timeline", broken)
    f = three_boards(tmp_path)
    out, report = tmp_path / "a.txt", tmp_path / "r.csv"
    r = run("run", f, "--out", out, "--report", report, "--plot", tmp_path / "p.png", "--db-dir", tmp_path / "db")
    assert r.exit_code == EXIT_OUTPUT, r.output
    assert len(out.read_text().splitlines()) == 3 and len(report.read_text().splitlines()) == 4
    assert Path(str(out) + ".timeline.csv").exists() and "3/3 boards" in r.output
    assert (
        r.output.strip().splitlines()[-1]
        == f"error: --plot {tmp_path / 'p.png'} not written: ValueError: the plot failed"
    )


def test_a_report_that_cannot_be_written_leaves_the_answers_and_the_summary(tmp_path, monkeypatch):
    import solver.run.batch as batch

    def full_disk(path, outcomes):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(batch, "write_report", full_disk)
    f = three_boards(tmp_path)
    out = tmp_path / "a.txt"
    r = run("solve", f, "--no-db", "--out", out, "--report", tmp_path / "r.csv")
    assert r.exit_code == EXIT_OUTPUT and "3/3 boards" in r.output
    assert "--report" in r.output and "No space left on device" in r.output
    assert len(out.read_text().splitlines()) == 3


def test_an_answer_file_that_cannot_be_written_keeps_the_journal_for_resume(tmp_path, monkeypatch):
    import solver.run.batch as batch

    real = batch.write_answers
    monkeypatch.setattr(batch, "write_answers", lambda *a, **k: (_ for _ in ()).throw(OSError(28, "disk full")))
    f = three_boards(tmp_path)
    out, report = tmp_path / "a.txt", tmp_path / "r.jsonl"
    r = run("solve", f, "--no-db", "--out", out, "--report", report)
    assert r.exit_code == EXIT_OUTPUT and "--out" in r.output and "disk full" in r.output
    assert len(report.read_text().splitlines()) == 3 and Path(str(out) + ".progress.jsonl").exists()
    monkeypatch.setattr(batch, "write_answers", real)
    r = run("solve", f, "--no-db", "--out", out, "--resume")
    assert r.exit_code == 0 and len(out.read_text().splitlines()) == 3


# -- one-line errors --------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, said",
    [
        (("solve", "--time-limit", "soon", "3,3,123456708"), "--time-limit"),
        (("run",), "PROBLEMS"),
        (("nosuchcommand",), "nosuchcommand"),
        (("build", "3x3", "--memory-limit", "lots"), "--memory-limit"),
    ],
)
def test_usage_errors_are_one_line_naming_the_command(args, said):
    line = one_line(run(*args))
    assert line.startswith("error: slidepdb") and said in line and "--help" in line


def test_a_database_folder_that_cannot_take_files_is_refused_before_the_build(tmp_path):
    line = one_line(run("build", "3x3", "--db-dir", "/proc/no-such-folder"))
    assert "/proc/no-such-folder" in line and "cannot write" in line and ".tmp" not in line
    (tmp_path / "a-file").write_text("")
    line = one_line(run("build", "3x3", "--db-dir", tmp_path / "a-file" / "db"))
    assert "is not a folder" in line
    line = one_line(run("run", SMALL, "--out", tmp_path / "a.txt", "--db-dir", "/proc/no-such-folder"))
    assert "/proc/no-such-folder" in line


def test_a_scheduler_address_that_is_no_address_is_one_line():
    pytest.importorskip("distributed")
    line = one_line(run("solve", "--no-db", "--scheduler", "notanaddress", "3,3,123456708"))
    assert "--scheduler" in line and "notanaddress" in line


def test_retry_without_resume_is_refused(tmp_path):
    line = one_line(run("run", SMALL, "--out", tmp_path / "a.txt", "--retry", "unproven"))
    assert "--retry needs --resume" in line


def test_an_empty_board_argument_says_so():
    line = one_line(run("check", ""))
    assert "empty" in line and "folder" not in line


def test_database_errors_name_the_file_once_with_plain_numbers(tmp_path):
    bad = tmp_path / "3x3-devquiz.pdb.3-3-2.h5"
    bad.write_bytes(FIXTURE.read_bytes())
    with h5py.File(bad, "r+") as f:
        import numpy as np

        f["tables/0"].attrs["tiles"] = np.array([1, 2, 4], dtype=np.int16)
    r = run("verify", bad)
    assert r.exit_code == 1 and "np." not in r.output and "[1, 2, 4]" in r.output, r.output
    assert r.output.count(str(bad)) == 1, r.output
    with open(bad, "r+b") as fh:
        fh.write(b"garbage!")
    r = run("solve", "3,3,123456708", "--db-dir", tmp_path)
    assert r.exit_code == 1 and r.output.count(str(bad)) == 1, r.output


# -- what the commands say --------------------------------------------------------------


@pytest.mark.slow
def test_a_budget_too_short_to_start_a_board_says_so(tmp_path):
    r = run("run", SMALL, "--out", tmp_path / "a.txt", "--db-dir", tmp_path / "db", "--budget", "1s")
    assert r.exit_code == 4 and "8 boards not started" in r.output and "give a longer --budget" in r.output


def test_a_board_retried_is_shown_once_unless_it_improved(capsys):
    """One line a board: a retry that found no more is not shown again; one that did is
    marked ``improved:`` (``"improved": true`` in --json), and the bar counts the board once."""
    from pdb_builder.formats import BoardSet, Record
    from solver.cli.progress import Progress
    from solver.cli.report import human_solved, progressive

    boards = BoardSet("f.txt", records=[Record(1, "x"), Record(2, "y")])

    def solved(i, length, optimal):
        moves, bound = "R" * length, length - 2
        return Outcome(
            i, "x", "solved", None, moves=moves, length=length, optimal=optimal, lower_bound=bound, nodes=1, seconds=0.1
        )

    show = progressive(boards, False, human_solved(boards))
    for o in (solved(1, 8, False), solved(2, 4, True), solved(1, 8, False), solved(1, 6, True)):
        show(o)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0:2] for line in lines] == [["f.txt", "1"], ["f.txt", "2"], ["improved", " f.txt"]]
    show = progressive(boards, True, human_solved(boards))
    show(solved(1, 8, False))
    show(solved(1, 6, True))
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [row.get("improved") for row in rows] == [None, True]
    bar = Progress(2, enabled=False)
    for o in (solved(1, 8, False), solved(1, 6, True), solved(2, 4, True)):
        bar.update(o)
    assert bar.proven == 2 and len(bar.seen) == 2


def test_the_build_log_goes_on_after_the_bfs(tmp_path):
    """Off a terminal, each step after a large pattern's BFS (its checksum, its two-bit
    copy, the file's verification) is a line: the log never stops at the last layer."""
    r = run("build", "4x4", "--partition", "6-6-3", "--db-dir", tmp_path)
    assert r.exit_code == 0, r.output
    assert "pattern 3: two-bit copy made and checked" in r.output and "database: file verified" in r.output


def test_the_api_checks_options_as_the_cli_does(tmp_path):
    from pdb_builder import build
    from solver import solve

    for bad in (dict(memory_limit=0), dict(memory_limit="lots"), dict(memory_limit=-5), dict(goal="up")):
        with pytest.raises(OptionsError, match=next(iter(bad))):
            build("3x3", db_dir=tmp_path, **bad)
    assert not list(tmp_path.iterdir())
    for bad in (dict(time_limit="5"), dict(node_limit=2.5), dict(threads="2"), dict(time_limit=float("nan"))):
        with pytest.raises(OptionsError, match=next(iter(bad))):
            solve("3,3,123456708", use_db=False, **bad)
    with pytest.raises(OptionsError, match="board"):
        solve(12345, use_db=False)
    paths = build("3x3", goal="devquiz", db_dir=tmp_path, memory_limit="64M")
    assert [p.name for p in paths] == ["3x3-devquiz.pdb.8.h5"]


def test_solving_without_the_default_database_folder_warns(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SLIDEPDB_DB_DIR", raising=False)
    r = run("solve", "3,3,123456708")
    assert r.exit_code == 0 and "no database folder ./databases" in r.output
    (tmp_path / "databases").mkdir()
    assert "warning" not in run("solve", "3,3,123456708").output


def test_a_cold_kernel_cache_is_said_before_the_first_search(tmp_path, monkeypatch):
    from pdb_builder.jitload import cache_is_cold

    kernel = ROOT / "solver" / "search" / "kernel.py"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert cache_is_cold(kernel, "search_slice")
    r = run("solve", "--no-db", "3,3,123456708")
    assert r.exit_code == 0 and "compiling the search kernels" in r.output
    import sys

    tag = f"py{sys.version_info[0]}{sys.version_info[1]}"
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / f"kernel.search_slice-297.{tag}.nbi").write_bytes(b"")
    assert not cache_is_cold(kernel, "search_slice")
    assert "compiling" not in run("solve", "--no-db", "3,3,123456708").output


def test_times_read_in_a_unit_that_suits_them(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from pdb_builder.words import seconds_text
    from solver.outcome import Outcome
    from solver.run.options import RunResult
    from solver.run.steps import BatchResult
    from solver.run.timeline import plot_timeline, time_unit

    assert [time_unit(s)[0] for s in (47, 600, 4 * 3600)] == ["seconds", "minutes", "hours"]
    assert seconds_text(8.17381) == "8.2 s" and seconds_text(60.0) == "60 s"
    full = BatchResult({7: Outcome(index=7, board="3,3,123456708", status="limit")})
    assert "at 8.2 s" in RunResult(full_limit=8.17381, full=full).phase_rows(10.0)[2][1]
    assert RunResult(full_limit=60.0, full=BatchResult({})).phase_rows(10.0)[2][1] == "0 boards"  # no limit shown
    csv = tmp_path / "t.csv"
    csv.write_text("elapsed_s,step,index,size,proven,size_proven\n1.5,quick,1,3x3,1,1\n47.0,full,2,4x4,2,1\n")
    drawn = []
    monkeypatch.setattr(Figure, "savefig", lambda fig, *a, **k: drawn.append(fig))
    plot_timeline(csv, tmp_path / "p.png")
    ax = drawn[0].axes[0]
    assert ax.get_xlabel() == "seconds since the run began"
    assert ax.get_legend().get_bbox_to_anchor().transformed(ax.transAxes.inverted()).x0 > 1  # beside, not over


def test_the_files_a_run_leaves_beside_its_answers_are_ignored_by_git():
    import fnmatch

    patterns = [p.strip().lstrip("/") for p in (ROOT / ".gitignore").read_text().splitlines() if p.strip()]
    for name in ("answers.txt", "answers.txt.progress.jsonl", "answers.txt.timeline.csv", "answers.txt.sittings"):
        assert any(fnmatch.fnmatch(name, p) for p in patterns), name


def test_exit_code_6_is_documented():
    readme = (ROOT / "README.md").read_text()
    assert "| 6 |" in readme

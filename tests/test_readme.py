"""The README's Python examples run as written (in a fresh folder: they build there)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run(tmp_path, monkeypatch, capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert blocks, "the README shows a Python example"
    monkeypatch.chdir(tmp_path)
    for code in blocks:
        exec(compile(code, str(README), "exec"), {"__name__": "__readme__"})
    length, optimal, moves = capsys.readouterr().out.split()
    assert int(length) == len(moves) and optimal == "True"
    from pdb_builder import check

    assert check("3,3,168452=30", moves).reaches_goal
    assert any((tmp_path / "databases").glob("3x3-devquiz.pdb.*.h5"))


def _normal(line: str, nodes: bool = False) -> str:
    """A printed line without what varies from run to run: seconds, workers, and unless
    ``nodes`` node counts (a search on one thread counts the same nodes on any machine)."""
    if not nodes:
        line = re.sub(r"[\d,]+ nodes", "N nodes", line)
    line = re.sub(r"\d+\.\d+ s\b", "T s", line)
    line = re.sub(r"with \d+ workers?", "with W workers", line)
    return " ".join(line.split())


def _shown(expected: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` prints what the README shows: the same lines, where ``...`` stands
    for any lines (none, or some) in between."""
    if "..." not in expected:
        return expected == actual
    it = iter(actual)
    return all(any(a == e for a in it) for e in expected if e != "...")


def test_readme_console_block_runs_as_shown_in_order(tmp_path, monkeypatch):
    """Every command of the README's console session, run in order in a fresh folder after
    what the quick start's demo builds (the 4x4 6-6-3 tables), prints what the README shows."""
    import shlex
    import shutil
    import subprocess
    import sys

    from click.testing import CliRunner

    from solver.cli import main

    blocks = re.findall(r"```console\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scripts").mkdir()
    shutil.copy(README.parent / "scripts" / "problems-small.txt", tmp_path / "scripts")
    assert CliRunner().invoke(main, ["build", "4x4", "--goal", "korf", "--partition", "6-6-3"]).exit_code == 0
    sessions: list[tuple[str, list[str]]] = []
    for line in blocks[0].splitlines():
        if line.startswith("$ "):
            sessions.append((line[2:], []))
        else:
            sessions[-1][1].append(line)
    assert [shlex.split(c, comments=True)[0] for c, _ in sessions] == ["slidepdb"] * len(sessions)
    for command, shown in sessions:
        args = shlex.split(command, comments=True)[1:]
        if any(" nodes" in line for line in shown):  # counted as a user's first search counts them: a new process
            done = subprocess.run([sys.executable, "-m", "solver", *args], capture_output=True, text=True)
            output = done.stdout + done.stderr
        else:
            r = CliRunner().invoke(main, args)
            assert r.exception is None or isinstance(r.exception, SystemExit), (command, r.output)
            output = r.output
        # the once-after-install notice comes only where the kernels' cache is cold (the README says so)
        lines = [x for x in output.splitlines() if x.strip() and not x.startswith("compiling the search kernels")]
        actual = [_normal(x, nodes=True) for x in lines]
        assert _shown([_normal(x, nodes=True) if x != "..." else x for x in shown], actual), (command, output)
    assert (tmp_path / "answers.txt").read_text().count("\n") == 8

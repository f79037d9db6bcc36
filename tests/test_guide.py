"""docs/guide.md runs as written: every block in order, in one fresh folder (as a user
following the guide), with the substitutions the comment above a block names (a small
shape for a large one, a short budget for a long one), each command printing what the
block shows (``...``: any lines) and exiting 0."""

import re
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

from .test_readme import _normal, _shown

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "guide.md"
BLOCK = re.compile(r"(?:<!-- test: (.*?) -->\n)?```(console|python)\n(.*?)```", re.S)


def blocks() -> list[tuple[dict, str, str]]:
    """(substitutions, kind, text) of each block of the guide, in order."""
    out = []
    for spec, kind, text in BLOCK.findall(GUIDE.read_text(encoding="utf-8")):
        subs = dict(part.split(" -> ", 1) for part in spec.split("; ") if part) if spec else {}
        out.append(({k.strip(): v.strip() for k, v in subs.items()}, kind, text))
    return out


def _free_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def _substituted(text: str, subs: dict, port: str) -> str:
    for old, new in subs.items():
        text = text.replace(old, port if new == "a free port" else new)
    return text


def _sessions(text: str) -> list[tuple[str, list[str]]]:
    """Each ``$ command`` of a console block with the lines it shows."""
    sessions: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            sessions.append((line[2:], []))
        else:
            sessions[-1][1].append(line)
    return sessions


def _wait_for_scheduler(address: str, workers: int = 1, seconds: float = 60.0) -> None:
    from distributed import Client

    with Client(address, timeout=seconds) as client:
        client.wait_for_workers(workers, timeout=seconds)


def test_the_guide_has_a_block_for_each_task():
    found = blocks()
    assert len(found) >= 8 and {kind for _, kind, _ in found} == {"console", "python"}
    commands = [c.split()[1] for _, kind, text in found if kind == "console" for c, _ in _sessions(text)]
    assert {"build", "inspect", "solve", "run", "verify", "scheduler"} <= set(commands)


def test_every_block_of_the_guide_runs_as_written(tmp_path, monkeypatch, capsys):
    """Every block in order; background commands (``&``: a dask scheduler and worker) are
    started and stopped at the end."""
    from click.testing import CliRunner

    from solver.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SLIDEPDB_DB_DIR", raising=False)
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "problems-small.txt", tmp_path / "scripts")
    port, background = _free_port(), []
    dask = str(Path(sys.executable).with_name("dask"))
    try:
        for subs, kind, text in blocks():
            text = _substituted(text, subs, port)
            if kind == "python":
                exec(compile(text, str(GUIDE), "exec"), {"__name__": "__guide__"})
                continue
            for command, shown in _sessions(text):
                words = shlex.split(command.rstrip("& "), comments=True)
                if command.endswith("&"):  # a dask scheduler or worker: in the background
                    assert words[0] == "dask", command
                    background.append(subprocess.Popen([dask, *words[1:]], stderr=subprocess.DEVNULL))
                    if words[1] == "worker":
                        _wait_for_scheduler(words[2])
                    continue
                assert words[0] == "slidepdb", command
                r = CliRunner().invoke(main, words[1:])
                assert r.exit_code == 0, (command, r.output, r.exception)
                actual = [_normal(x) for x in r.output.splitlines() if x.strip()]
                assert _shown([_normal(x) if x != "..." else x for x in shown], actual), (command, r.output)
    finally:
        for p in background:
            p.terminate()
        for p in background:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
    # what the blocks promise: the tables, the answer files, the report, the timeline
    assert any(tmp_path.glob("databases/3x3-devquiz.pdb.*.h5")) and any(tmp_path.glob("databases/4x4-korf.pdb.*.h5"))
    for name in ("answers.txt", "cluster-answers.txt", "small-answers.txt"):
        assert (tmp_path / name).read_text().count("\n") == 8, name
    assert (tmp_path / "report.csv").exists() and (tmp_path / "answers.txt.timeline.csv").exists()
    assert (tmp_path / "timeline.png").exists()

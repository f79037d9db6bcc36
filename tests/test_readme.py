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

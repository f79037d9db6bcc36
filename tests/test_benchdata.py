"""The benchmark scripts' ``--results FILE``: every table a script prints is kept as
JSON beside the command and the date (scripts/benchdata.py)."""

import json

from .conftest import script_module


def _benchdata():
    return script_module("benchdata")


def test_results_keep_every_printed_table_with_its_command(tmp_path, capsys):
    bd = _benchdata()

    def main():
        print("korf100, 7-8 tables\n")
        print("| set | solved | nodes |")
        print("|---|---:|---:|")
        print("| korf100 | 100/100 | 36,316 |")
        print("\nper thread count")
        print("| threads | s |\n|---:|---:|\n| 1 | 0.41 |\n| 2 | 0.22 |")
        return 0

    out = tmp_path / "r.json"
    argv = ["bench_x.py", "--sets", "korf100", "--results", str(out)]
    assert bd.run_keeping_tables(main, argv) == 0
    assert argv == ["bench_x.py", "--sets", "korf100"]  # taken off before main reads it
    assert "| korf100 | 100/100 | 36,316 |" in capsys.readouterr().out  # still printed
    record = json.loads(out.read_text())
    assert record["command"] == "bench_x.py --sets korf100" and record["date"]
    assert record["tables"] == [
        {
            "title": "korf100, 7-8 tables",
            "header": ["set", "solved", "nodes"],
            "rows": [["korf100", "100/100", "36,316"]],
        },
        {"title": "per thread count", "header": ["threads", "s"], "rows": [["1", "0.41"], ["2", "0.22"]]},
    ]


def test_without_results_nothing_is_written(tmp_path, monkeypatch):
    bd = _benchdata()
    monkeypatch.chdir(tmp_path)
    assert bd.run_keeping_tables(lambda: 3, ["bench_x.py"]) == 3
    assert not list(tmp_path.iterdir())
    assert bd.run_keeping_tables(lambda: 0, ["bench_x.py", "--results"]) == 2  # no file named

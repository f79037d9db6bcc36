"""Paths and reference figures the benchmark scripts share."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"


def kf2002_expanded() -> dict[str, int]:
    """Korf & Felner (2002): nodes their IDA* expanded with the 6-6-6-6 tables and their
    reflection, by 24-puzzle instance number (the first 33 of ``korf24.txt``)."""
    path = DATA / "korf24_kf2002_nodes.txt"
    out: dict[str, int] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                ident, _, expanded = line.split()
                out[ident] = int(expanded)
    return out


RESULTS_OPTION = "--results"


class _Tee:
    """Standard output that also keeps what passes through it."""

    def __init__(self, stream):
        self.stream, self.kept = stream, []

    def write(self, text):
        self.kept.append(text)
        return self.stream.write(text)

    def flush(self):
        self.stream.flush()

    def __getattr__(self, name):
        return getattr(self.stream, name)


def tables_of(text: str) -> list[dict]:
    """Every markdown table in ``text``: its title (the last line of prose above it),
    header and rows, each cell as printed."""

    def cells(line: str) -> list[str]:
        return [c.strip() for c in line.strip().strip("|").split("|")]

    tables, title, current = [], None, None
    for line in text.splitlines():
        if line.lstrip().startswith("|"):
            if current is None:
                current = {"title": title, "header": cells(line), "rows": []}
                tables.append(current)
            elif not set(line.replace("|", "").strip()) <= set("-: "):
                current["rows"].append(cells(line))
            continue
        current = None
        if line.strip():
            title = line.strip()
    return tables


def run_keeping_tables(main, argv=None) -> int:
    """Run a benchmark's ``main()``.  With ``--results FILE`` (taken off the command line
    before ``main`` reads it), every table it prints on stdout is also written to FILE
    as JSON: the command, the date, and each table's title, header and rows, so the
    tables in docs/benchmarks.md can name the file under docs/results/ they came from."""
    import datetime
    import json
    import sys

    argv = sys.argv if argv is None else argv
    path = None
    if RESULTS_OPTION in argv:
        at = argv.index(RESULTS_OPTION)
        if at + 1 >= len(argv):
            print(f"{RESULTS_OPTION} needs a file name", file=sys.stderr)
            return 2
        path = argv[at + 1]
        del argv[at : at + 2]
    if path is None:
        return main()
    command = " ".join([Path(argv[0]).name, *argv[1:]])
    tee, real = _Tee(sys.stdout), sys.stdout
    sys.stdout = tee
    try:
        code = main()
    finally:
        sys.stdout = real
        record = {
            "command": command,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "tables": tables_of("".join(tee.kept)),
        }
        Path(path).write_text(json.dumps(record, indent=1) + "\n")
        print(f"results: {path}", file=sys.stderr)
    return code

#!/usr/bin/env python3
"""Write docs/cli.md, the reference of every ``slidepdb`` command, from the click
commands themselves: each command's ``--help`` as the command prints it (at a fixed
width), and the exit codes.  tests/test_cli_reference.py fails when the file is stale.

    python3 scripts/write_cli_reference.py          # writes docs/cli.md
    python3 scripts/write_cli_reference.py --check  # exit 1 if docs/cli.md is stale
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "docs" / "cli.md"
WIDTH = 100


def reference() -> str:
    import click

    from pdb_builder.errors import EXIT_CODES
    from solver.cli import main

    out = [
        "# Command reference",
        "",
        "Every `slidepdb` command with its options and defaults, as `slidepdb COMMAND --help` prints",
        "them. Written from the commands themselves by `python3 scripts/write_cli_reference.py`; a test",
        "fails when this file and the commands disagree. The README says what each command is for.",
        "",
        "## Exit codes",
        "",
        "The same for every command; with several boards, the highest any board produced.",
        "",
        "| code | meaning |",
        "|---|---|",
        *(f"| {code} | {text} |" for code, text in EXIT_CODES.items()),
    ]
    root = click.Context(main, info_name="slidepdb", max_content_width=WIDTH, terminal_width=WIDTH)
    for name in ["", *main.commands]:
        cmd = main if not name else main.commands[name]
        ctx = root if not name else click.Context(cmd, info_name=name, parent=root, max_content_width=WIDTH)
        text = cmd.get_help(ctx)
        out += ["", f"## `slidepdb{' ' + name if name else ''}`", "", "```text", text.rstrip(), "```"]
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    text = reference()
    if "--check" in argv:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is stale: run python3 scripts/write_cli_reference.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

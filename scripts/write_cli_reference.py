#!/usr/bin/env python3
"""Write docs/cli.md, the reference of every ``slidepdb`` command, from the click
commands themselves: each command's usage, help and options (names, what they take,
defaults, help), and the exit codes.  tests/test_cli_reference.py fails when the file
is stale.

    python3 scripts/write_cli_reference.py          # writes docs/cli.md
    python3 scripts/write_cli_reference.py --check  # exit 1 if docs/cli.md is stale
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "docs" / "cli.md"


def _cell(text) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _value(param) -> str:
    """What an option takes, from attributes every supported click has alike."""
    if getattr(param, "is_flag", False):
        return "flag"
    if param.metavar:
        return param.metavar
    choices = getattr(param.type, "choices", None)
    if choices:
        return "|".join(map(str, choices))
    return param.type.name.upper()


def _default(param) -> str:
    shown = getattr(param, "show_default", None)
    value = param.default
    if not shown or value is None or value is False or callable(value) or type(value).__name__ == "Sentinel":
        return ""
    return str(shown) if isinstance(shown, str) else str(value)


def reference() -> str:
    """docs/cli.md's text: the same under every click version pyproject.toml admits
    (made from the commands' own attributes, not from click's help formatter)."""
    import inspect

    from pdb_builder.errors import EXIT_CODES
    from solver.cli import main

    out = [
        "# Command reference",
        "",
        "Every `slidepdb` command with its arguments, options and defaults (`slidepdb COMMAND --help`",
        "says the same). Written from the commands themselves by `python3 scripts/write_cli_reference.py`;",
        "a test fails when this file and the commands disagree. The README says what each command is for.",
        "",
        "## Exit codes",
        "",
        "The same for every command; with several boards, the highest any board produced.",
        "",
        "| code | meaning |",
        "|---|---|",
        *(f"| {code} | {text} |" for code, text in EXIT_CODES.items()),
        "",
        "## Global options",
        "",
        "`slidepdb [-v|-vv|-q] COMMAND ...`: `-v` more messages on stderr (`-vv` for debug), `-q` only errors,",
        "`--version` the version.",
    ]
    for name in sorted(main.commands):
        cmd = main.commands[name]
        args = " ".join(
            p.name.upper() if p.required else f"[{p.name.upper()}]" for p in cmd.params if not p.opts[0].startswith("-")
        )
        out += ["", f"## `slidepdb {name}`", "", f"`slidepdb {name} [OPTIONS] {args}`".replace("  ", " "), ""]
        out += [
            line.replace("\b", "").rstrip() for line in inspect.cleandoc(cmd.help or "").splitlines() if line != "\b"
        ]
        out += ["", "| option | takes | default | meaning |", "|---|---|---|---|"]
        for p in cmd.params:
            if p.opts[0].startswith("-"):
                names = ", ".join(f"`{o}`" for o in [*p.opts, *p.secondary_opts])
                out.append(f"| {names} | {_cell(_value(p))} | {_cell(_default(p))} | {_cell(p.help or '')} |")
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

"""docs/cli.md is written from the click commands (scripts/write_cli_reference.py): it
names every command and exit code, and it is current."""

from pdb_builder.errors import EXIT_CODES
from solver.cli import main

from .conftest import script_module


def test_the_cli_reference_is_current():
    w = script_module("write_cli_reference")
    text = w.reference()
    assert w.TARGET.read_text(encoding="utf-8") == text, "run python3 scripts/write_cli_reference.py"
    for name, cmd in main.commands.items():
        assert f"## `slidepdb {name}`" in text
        for param in cmd.params:
            assert all(opt in text for opt in param.opts if opt.startswith("--"))
    assert all(f"| {code} |" in text for code in EXIT_CODES)

"""The layers of a package: for each module, the longest chain of the package's modules
importing one another that starts at it (every import counts, also one inside a
function).  ``solver/run/`` is kept five deep at most (tests/test_layers.py).

    python3 scripts/import_depth.py [PACKAGE_FOLDER]     # default: solver/run
"""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def imports(folder: Path) -> dict[str, set[str]]:
    """Each module of ``folder`` (a package) -> the modules of the same package it imports."""
    package = ".".join(folder.resolve().relative_to(ROOT).parts)
    mods = {p.stem: p for p in folder.glob("*.py") if p.stem != "__init__"}
    out = {}
    for name, path in mods.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            where = node.module or ""
            if node.level == 1:
                where = f"{package}.{where}" if where else package
            if where == package:  # from . import x
                found |= {a.name for a in node.names if a.name in mods}
            elif where.startswith(package + "."):
                found.add(where[len(package) + 1 :].split(".")[0])
        out[name] = (found & set(mods)) - {name}
    return out


def chains(graph: dict[str, set[str]]) -> dict[str, list[str]]:
    """Each module -> the longest chain of imports that starts at it (itself first)."""

    @functools.lru_cache(None)
    def longest(name: str) -> tuple[str, ...]:
        best: tuple[str, ...] = ()
        for dep in sorted(graph[name]):
            chain = longest(dep)
            if len(chain) > len(best):
                best = chain
        return (name, *best)

    return {name: list(longest(name)) for name in graph}


def main(argv: list[str]) -> int:
    folder = Path(argv[1]) if len(argv) > 1 else ROOT / "solver" / "run"
    found = chains(imports(folder))
    for chain in sorted(found.values(), key=lambda c: (-len(c), c[0])):
        print(f"{len(chain)}  {' -> '.join(chain)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""The house rules of the code's layout (docs/design.md "Where the code lives"):
solving never loads the build side, and the solver's modules import one another
without a circle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

LOADED_BUILD_SIDE = (
    "import importlib, pkgutil, sys\n"
    "import {packages}\n"
    "for p in ({packages},):\n"
    "    if hasattr(p, '__path__'):\n"
    "        for m in pkgutil.iter_modules(p.__path__, p.__name__ + '.'):\n"
    "            importlib.import_module(m.name)\n"
    "print(sorted(m for m in sys.modules if m.startswith('pdb_builder.make')))\n"
)


def _build_side_loaded_by(*packages: str) -> str:
    code = LOADED_BUILD_SIDE.format(packages=", ".join(packages))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_search_fallback_and_api_never_load_the_build_side():
    """Every module of solver.search and solver.fallback, and solver.api, imported in a
    fresh process: nothing of pdb_builder.make is loaded (so solving never compiles the
    build kernels); solver.run, which orders builds, does load it, which shows the check
    sees an import of the build side."""
    assert _build_side_loaded_by("solver.search", "solver.fallback", "solver.api") == "[]"
    assert "pdb_builder.make.building" in _build_side_loaded_by("solver.run")


def test_solving_a_board_on_its_tables_never_loads_the_build_side(tmp_path):
    """A board solved in a fresh process with its table file there: the table is read
    (its checksum in the proof's certificate) and nothing of pdb_builder.make is loaded
    (the read side reads a table without the build side)."""
    import shutil

    shutil.copy(ROOT / "tests" / "data" / "3x3-devquiz.pdb.3-3-2.v1.h5", tmp_path)
    code = (
        "import sys\n"
        "from solver.api import solve\n"
        f"r = solve('3,3,123456708', db_dir={str(tmp_path)!r}, goal='devquiz')\n"
        "print(r.optimal, sorted(r.tables), sorted(m for m in sys.modules if m.startswith('pdb_builder.make')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "True ['3x3-devquiz.pdb.3-3-2.v1.h5'] []", out


def _modules(package: str) -> dict[str, Path]:
    base = ROOT / package
    out = {}
    for path in base.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ``known`` that module ``name`` imports anywhere (functions too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(max(node.level - 1, 0)):
                base = base.rpartition(".")[0]
            mod = node.module or ""
            base = (f"{base}.{mod}" if mod else base) if node.level else mod
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known:  # a name inside a module: the module itself
                t = t.rpartition(".")[0]
            if t and t != name and not name.startswith(t + "."):  # a module's own packages load first anyway
                found.add(t)
    return found


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_solver_imports_without_a_circle():
    known = _modules("solver")
    graph = {name: _imports(name, path, known) for name, path in known.items()}
    assert "solver.search.state" in graph["solver.search.threads"]  # the parser sees imports
    assert _circles(graph) == []
    # and the check finds one where there is one
    assert _circles({**graph, "solver.search.state": graph["solver.search.state"] | {"solver.search.threads"}})

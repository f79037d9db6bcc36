"""slidepdb's builder: additive pattern databases and goal-side BFS tables.

``from pdb_builder import build, check, inspect`` (see :mod:`pdb_builder.api`).
Imported lazily, so ``import pdb_builder`` stays cheap.
"""

__version__ = "0.1.0"

__all__ = ["build", "check", "inspect"]


def __getattr__(name):
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'pdb_builder' has no attribute {name!r}")

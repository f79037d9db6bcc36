"""slidepdb's solver: IDA* on pattern databases, with a fallback that always answers.

``from solver import solve`` (see :func:`solver.api.solve`).  Imported lazily, so
``import solver`` stays cheap.
"""

__all__ = ["Result", "solve"]


def __getattr__(name):
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'solver' has no attribute {name!r}")

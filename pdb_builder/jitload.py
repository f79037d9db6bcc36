"""Loading cached numba kernels without preparing numba's compiler.

Before numba loads a kernel from its disk cache it refreshes its typing and target
contexts: it imports and registers every implementation the compiler could use
(about 0.2 s, most of a process's first call into a cached kernel).  A kernel loaded
from the cache runs its own machine code and needs none of them; it needs the
runtime its code calls (NRT), which is initialised here instead.  A cache miss
compiles as usual, and numba's compiler refreshes both contexts itself before it
compiles anything, so nothing that compiles goes without them.

:func:`load_cached` applies this to the cached kernels of one module, and only where
numba's cache has the shape this relies on (numba 0.59 to 0.68 do); elsewhere it
leaves numba's own loading in place.
"""

from __future__ import annotations

from types import MethodType


def _load_without_refresh(cache, sig, target_context):
    from numba.core.runtime import rtsys

    rtsys.initialize(target_context)
    with cache._guard_against_spurious_io_errors():
        return cache._load_overload(sig, target_context)
    # None when the guard swallowed an I/O error: the dispatcher then compiles


def load_cached(namespace: dict) -> int:
    """Make every cached numba dispatcher in ``namespace`` (a module's ``globals()``)
    load from its disk cache without the compiler's refresh; returns how many."""
    try:
        from numba.core.caching import Cache
        from numba.core.runtime import rtsys  # noqa: F401
    except ImportError:
        return 0
    if not all(hasattr(Cache, a) for a in ("_load_overload", "_guard_against_spurious_io_errors")):
        return 0
    done = 0
    for obj in list(namespace.values()):
        cache = getattr(obj, "_cache", None)
        if isinstance(cache, Cache):
            cache.load_overload = MethodType(_load_without_refresh, cache)
            done += 1
    return done


def cache_is_cold(module_file, function: str) -> bool:
    """Whether numba's disk cache holds no compiled ``function`` of the module at
    ``module_file`` for this Python (looked up without importing numba, where numba
    keeps it: ``$NUMBA_CACHE_DIR``, else ``__pycache__`` beside the module or the
    user's cache folder).  A cold cache means the first call compiles (seconds to a
    minute): the commands say so before the work."""
    import os
    import sys
    from pathlib import Path

    module = Path(module_file)
    pattern = f"{module.stem}.{function}-*.py{sys.version_info[0]}{sys.version_info[1]}*.nbi"
    root = os.environ.get("NUMBA_CACHE_DIR")
    if root:
        places = [Path(root)]
    else:
        cache_home = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        places = [module.parent / "__pycache__", Path(cache_home) / "numba"]
    return not any(next(p.rglob(pattern), None) is not None for p in places if p.is_dir())

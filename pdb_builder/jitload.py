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

It also keys each cached kernel on every source it was compiled from (:func:`sources`).
numba keys a kernel's cache on its own file alone, while a kernel holds the compiled code
of every compiled function it calls, from whatever module (numba issue 1833): edit an
inlined helper in another module, or install a release that changed only that module,
and numba would load the old kernel from the cache.
"""

from __future__ import annotations

import hashlib
import os
import sys
from types import MethodType, ModuleType


def _load_without_refresh(cache, sig, target_context):
    from numba.core.runtime import rtsys

    rtsys.initialize(target_context)
    with cache._guard_against_spurious_io_errors():
        return cache._load_overload(sig, target_context)
    # None when the guard swallowed an I/O error: the dispatcher then compiles


def _compiled_from(obj):
    """The module a compiled function (a dispatcher, or an intrinsic's definition) comes
    from, or the module itself (its functions read as attributes)."""
    if isinstance(obj, ModuleType):
        return obj
    fn = getattr(obj, "py_func", None) or getattr(obj, "_defn", None)
    return sys.modules.get(getattr(fn, "__module__", None) or "")


def sources(namespace: dict) -> list[str]:
    """The files a module's kernels are compiled from: its own and, through the
    compiled functions and modules it names, those of every module they come from, and
    theirs (the project's own modules, and those of the module's own top package)."""
    top = namespace["__name__"].split(".")[0]
    seen, todo = [], [namespace]
    while todo:
        ns = todo.pop()
        path = ns.get("__file__")
        if not path or path in seen:
            continue
        seen.append(path)
        for obj in list(ns.values()):
            module = _compiled_from(obj)
            if module is not None and module.__name__.split(".")[0] in (top, "solver", "pdb_builder"):
                todo.append(vars(module))
    return sorted(seen)


def _stamp(paths) -> bytes:
    """One digest of the files' names and contents (not of where they lie)."""
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as f:
            digest.update(os.path.basename(path).encode() + b"\0" + hashlib.sha256(f.read()).digest())
    return digest.digest()


def load_cached(namespace: dict, quick: bool = True) -> int:
    """Key every cached numba dispatcher in ``namespace`` (a module's ``globals()``,
    called at the module's end, once what it imports is loaded) on the contents of
    every file it is compiled from (:func:`sources`), and, with ``quick``, make it load
    from its disk cache without the compiler's refresh; returns how many it keyed."""
    try:
        from numba.core.caching import Cache
        from numba.core.runtime import rtsys  # noqa: F401
    except ImportError:
        return 0
    quick = quick and all(hasattr(Cache, a) for a in ("_load_overload", "_guard_against_spurious_io_errors"))
    stamp = None
    done = 0
    for obj in list(namespace.values()):
        cache = getattr(obj, "_cache", None)
        if not isinstance(cache, Cache):
            continue
        cache_file = getattr(cache, "_cache_file", None)
        if hasattr(cache_file, "_source_stamp"):  # numba's key of the index: its own file's contents
            stamp = stamp or _stamp(sources(namespace))
            cache_file._source_stamp = stamp
            done += 1
        if quick:
            cache.load_overload = MethodType(_load_without_refresh, cache)
    return done


def cache_is_cold(module_file, function: str) -> bool:
    """Whether numba's disk cache holds no compiled ``function`` of the module at
    ``module_file`` for this Python (looked up without importing numba, where numba
    keeps it: ``$NUMBA_CACHE_DIR``, else ``__pycache__`` beside the module or the
    user's cache folder).  A cold cache means the first call compiles (seconds to a
    minute): the commands say so before the work."""
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

"""A cold start's compiling shared out among a run's worker processes.

The first run after an install compiles numba's kernels: the search's, the pruning
automaton's BFS, the staged search's, the beam's and the BFS of the tables the
fallback builds for a walled board's layout (about 7, 7, 8, 5 and 4 s on one core).
Each worker process would compile every one it needs as its first boards reach it,
inside those boards' time limits, so the answer pass's first step would find no
answer for them.  Instead, when numba's disk cache lacks a part, the workers compile
the parts missing before any board, each worker its own share (:func:`warm_up`); each
writes its kernels to the cache, from which the others then load them.  On 2 workers
the parts take about 14 s of wall clock, against 23 s for all of them in one process.
"""

from __future__ import annotations

from pathlib import Path

from pdb_builder.formats import read_board_arg
from pdb_builder.jitload import cache_is_cold

WARM_BOARD = "4,4,32465871FAC0=9BE"  # a small walled board: every kernel's walled paths
WARM_NODES = 100_000  # nodes each part's search may take (the compiling is what takes the time)


def _board():
    return read_board_arg(WARM_BOARD).records[0].board


def _search() -> None:
    from ..search.heuristic import manhattan_heuristic
    from ..search.searcher import Searcher

    board = _board()
    Searcher(manhattan_heuristic(board.shape)).solve(board, node_limit=WARM_NODES)


def _automaton() -> None:
    from ..search.automaton import FIRST_DEEPER, build_automaton

    build_automaton(_board().shape, FIRST_DEEPER)


def _staged() -> None:
    from ..fallback.staged import staged_search
    from ..search.limits import Limits

    staged_search(_board(), limits=Limits(None, WARM_NODES))


def _beam() -> None:
    from ..fallback.beam import beam_search
    from ..search.heuristic import manhattan_heuristic
    from ..search.limits import Limits
    from ..search.searcher import Searcher

    board = _board()
    beam_search(Searcher(manhattan_heuristic(board.shape)), board, width=64, limits=Limits(None, WARM_NODES))


def _layout() -> None:
    from ..fallback.ladder import layout_searcher
    from ..search.limits import Limits

    layout_searcher(_board().shape, Limits())


SOLVER = Path(__file__).resolve().parent.parent
BUILDER = SOLVER.parent / "pdb_builder"  # (a path: the solver imports nothing of its build side)
# (what compiles, its module's file, a kernel of it that numba's cache holds once compiled, whether
# only the fallback uses it), in the order that shares them out evenly: worker i of n takes parts
# i, i + n, ...
PARTS = (
    (_staged, SOLVER / "fallback" / "staged.py", "_stage_search", True),
    (_search, SOLVER / "search" / "kernel.py", "search_slice", False),
    (_beam, SOLVER / "fallback" / "beam.py", "_beam", True),
    (_automaton, BUILDER / "automaton_bfs.py", "trie", False),
    (_layout, BUILDER / "make" / "bfs.py", "expand_share", True),
)


def cold_parts(fallback: bool = True, parts=PARTS) -> list[int]:
    """Indices of the ``parts`` (:data:`PARTS`) whose kernels numba's disk cache lacks
    (those of the fallback only where ``fallback``: a batch without it never runs them)."""
    return [
        k
        for k, (_, module, kernel, of_fallback) in enumerate(parts)
        if (fallback or not of_fallback) and cache_is_cold(module, kernel)
    ]


def warm_up(worker: int, workers: int, cold: list[int], parts=PARTS) -> None:
    """Worker ``worker`` of ``workers``: compile its share of the ``cold`` parts."""
    for k in cold[worker::workers]:
        parts[k][0]()

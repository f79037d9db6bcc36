"""Node counts for ``slidepdb build --collection`` (:mod:`pdb_builder.make.collection`):
the solver's IDA* on sample boards with the heuristic of given database files."""

from __future__ import annotations

import time

NODE_LIMIT = 20_000_000  # a sample board's nodes at most, per candidate set: a board no set solves counts this much


def measure(paths, boards, node_limit: int = NODE_LIMIT) -> dict:
    """Generated nodes (and expanded nodes, seconds, boards solved, and ``per-board``:
    ``[nodes, solved]`` of each) of an optimal IDA* on ``boards`` with the heuristic of
    the database files ``paths`` (the largest of their sums), each board stopped at
    ``node_limit`` nodes."""
    from .searcher import Searcher
    from .tables import heuristic_for

    if not boards:
        return {"nodes": 0, "expanded": 0, "seconds": 0.0, "solved": 0, "per-board": []}
    searcher = Searcher(heuristic_for(boards[0].shape, files=list(paths), verify=False))
    searcher.python_first = False
    per = []
    expanded = 0
    t0 = time.perf_counter()
    for b in boards:
        r = searcher.solve(b, node_limit=node_limit)
        per.append([r.nodes, bool(r.optimal)])
        expanded += r.expanded
    return {
        "nodes": sum(n for n, _ in per),
        "expanded": expanded,
        "seconds": time.perf_counter() - t0,
        "solved": sum(ok for _, ok in per),
        "per-board": per,
    }

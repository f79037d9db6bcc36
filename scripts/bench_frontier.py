#!/usr/bin/env python3
"""A frontier above IDA* (A*+IDA*, Bu & Korf 2019) against IDA* alone, on the same tables and
automaton, in nodes (exact): how much an A* part of N nodes would save, before it is built
into the search.

    .venv/bin/python scripts/bench_frontier.py --db-dir DIR [--problems FILE] [--first N]
        [--lines 1 2 ...] [--frontier 1000 10000 100000] [--prune 12] [--results FILE]

For each board: IDA* alone (the searcher, automaton of depth ``--prune``), then, for each
frontier size N, the A* part (:func:`frontier_search`: every arrangement within a bound of f,
breadth first, duplicates removed, the bound the largest that stores at most N), then IDA*
from each open node, in order of f and then of h, every threshold over every open node,
each carrying the automaton's state of its stored path.  Nodes: the A* part's generated
nodes and the IDA* parts', each iteration, and the last iteration's up to the
goal.  Every answer is simulated and its
length checked against IDA*'s.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
from benchdata import DATA, ROOT


def frontier_search(searcher, board, size: int):
    """The A* part: the arrangements within a bound B of f, breadth first from ``board``
    (each layer in the order it was found, children in L R U D order, duplicates of an
    arrangement found before and strings the automaton prunes left out), B the largest
    that stores at most ``size`` arrangements.  So an arrangement's stored path is the
    first in length-then-letter order among those through the nodes expanded, and the
    automaton's state after it is carried into the IDA* part.  Returns (open nodes
    (f, h, g, key) in order of f and then h, the stored arrangements, expansions, the
    goal's moves where B reached it)."""
    h0 = searcher.root_state(board).h0
    estimates: dict = {}  # arrangement -> its estimate, kept across the bounds tried
    best = None
    bound = h0
    while True:
        got = _layers(searcher, board, bound, size, h0, estimates)
        if got is None:
            break
        best = got
        if got[3] is not None:
            break
        bound += 2
    if best is None:  # not even the first bound fits: the root alone
        best = _layers(searcher, board, h0 - 2, size, h0, estimates)
    return best


def _layers(searcher, board, bound: int, size: int, h0: int, estimates: dict):
    from pdb_builder.board import Board

    shape = searcher.shape
    nbr, ndeg, letters, ndir = searcher.nbr, searcher.ndeg, searcher.letters, searcher.ndir
    fsm = searcher.automaton
    goal = tuple(shape.goal)
    start = tuple(board.cells)
    nodes = {start: (board.blank, 0, None, "", int(fsm.roots[board.blank]), h0)}
    layer, frontier, expanded, g = [start], [], 0, 0
    while layer:
        nxt = []
        for key in layer:
            blank, _, _, _, u, h = nodes[key]
            if g + h > bound:
                frontier.append((g + h, h, g, key))
                continue
            if key == goal:
                return [], nodes, expanded, _moves(nodes, key)
            for k in range(ndeg[blank]):
                v = int(fsm.delta[u, ndir[blank, k]])
                if v < 0:
                    continue
                expanded += 1  # (a node generated, as the kernel counts them)
                c = int(nbr[blank, k])
                cells = list(key)
                cells[blank], cells[c] = cells[c], 0
                child = tuple(cells)
                if child in nodes:
                    continue
                hc = estimates.get(child)
                if hc is None:  # each arrangement's estimate read once over every bound tried
                    hc = estimates[child] = searcher.root_state(Board(shape, child)).h0
                nodes[child] = (c, g + 1, key, str(letters[blank, k]), v, hc)
                nxt.append(child)
                if len(nodes) > size:
                    return None
        layer, g = nxt, g + 1
    frontier.sort(key=lambda x: x[:3])
    return frontier, nodes, expanded, None


def _moves(nodes, key) -> str:
    out = []
    while key is not None:
        _, _, parent, letter, _, _ = nodes[key]
        out.append(letter)
        key = parent
    return "".join(reversed(out))


ORDERS = {
    "fh": lambda x: (x[0], x[1]),  # Bu & Korf: the least f first, then the least h
    "Fh": lambda x: (-x[0], x[1]),  # the greatest f first (the smallest subtrees), then the least h
    "h": lambda x: (x[1], x[0]),  # the least h first
}


def fresh_states(searcher, open_nodes, nodes):
    """The kernel's automaton with a state for each (blank cell, last move) of the open nodes:
    the automaton's root state there with the move that undoes the last one pruned (the
    automaton started afresh at each open node); and each open node's state in it."""
    fsm = searcher.automaton
    extra, rows, start = {}, [], {}
    for _, _, _, key in open_nodes:
        blank, _, parent, _, _, _ = nodes[key]
        last = -1 if parent is None else parent.index(0)  # the parent's blank: the cell the last move left
        if (blank, last) not in extra:
            row = fsm.delta[fsm.roots[blank]].copy()
            for k in range(searcher.ndeg[blank]):
                if searcher.nbr[blank, k] == last:
                    row[searcher.ndir[blank, k]] = -1
            extra[(blank, last)] = fsm.delta.shape[0] + len(rows)
            rows.append(row)
        start[key] = extra[(blank, last)]
    table = type("Fresh", (), {})()
    table.delta = np.ascontiguousarray(np.vstack([fsm.delta, np.array(rows, dtype=fsm.delta.dtype)]))
    return table, start


def hybrid(searcher, board, size: int, order: str = "fh", fresh: bool = False):
    """A*+IDA* on ``board`` with a frontier of ``size`` arrangements: (moves, A* expansions,
    [(threshold, nodes)] of each iteration over the frontier)."""
    from pdb_builder.board import Board
    from solver.search.state import new_stack, path_moves, private, start_iteration

    K = __import__("solver.search.kernel", fromlist=["x"])
    open_nodes, nodes, expanded, found = frontier_search(searcher, board, size)
    if found is not None:
        return found, expanded, []
    open_nodes.sort(key=ORDERS[order])
    start = {key: nodes[key][4] for _, _, _, key in open_nodes}  # the automaton's state after each stored path
    fsm = None
    if fresh:
        fsm, start = fresh_states(searcher, open_nodes, nodes)
    tables = searcher.kernel_tables(fsm)
    roots = {key: searcher.root_state(Board(searcher.shape, key)) for _, _, _, key in open_nodes}
    stack = new_stack(1000, searcher.ngroups)
    state = private(K.STATE_SIZE)
    thresh = min(f for f, _, _, _ in open_nodes)
    iterations = []
    while True:
        total, nxt = 0, K.INF
        for f, _h, g, key in open_nodes:
            if f > thresh:
                nxt = min(nxt, f)
                continue
            blank = nodes[key][0]
            st = roots[key]
            start_iteration(st, blank, st.h0, thresh - g, stack, state, start[key])
            while True:
                status = K.search_slice(st.arrays(), tables, stack, state, K.SLICE_NODES, True, searcher.goal, 100)
                if status != K.SLICE_SPENT:
                    break
            total += int(state[K.S_NODES])
            if status == K.FOUND:
                iterations.append((thresh, total))
                moves = _moves(nodes, key) + path_moves(searcher.letters, stack, int(state[K.S_DEPTH]))
                return moves, expanded, iterations
            nxt = min(nxt, int(state[K.S_NEXT]) + g)
        iterations.append((thresh, total))
        thresh = nxt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db-dir", required=True)
    ap.add_argument("--problems", default=str(DATA / "korf100.txt"))
    ap.add_argument("--first", type=int, default=None)
    ap.add_argument("--lines", type=int, nargs="+", default=None)
    ap.add_argument("--frontier", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--prune", type=int, default=12)
    ap.add_argument("--order", choices=sorted(ORDERS), nargs="+", default=["fh"], help="orders of the open nodes")
    ap.add_argument("--fresh", action="store_true", help="also with the automaton started afresh at each open node")
    ap.add_argument("--results", default=None)
    a = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from pdb_builder.formats import read_file
    from pdb_builder.moves import check_moves
    from solver.search.searcher import Searcher
    from solver.search.tables import heuristic_for

    recs = [r for r in read_file(a.problems).records[: a.first] if a.lines is None or r.index in a.lines]
    searchers = {}
    header = ["line", "length", "ida nodes", "ida last", "ida s"]
    modes = [*a.order, *(["fresh " + o for o in a.order] if a.fresh else [])]
    for n in a.frontier:
        header += [f"A* {n} gen"]
        for o in modes:
            header += [f"{n} {o} nodes", f"{n} {o} last", f"{n} {o} ratio", f"{n} {o} s"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    rows = []
    for r in recs:
        key = r.board.shape.key
        if key not in searchers:
            searchers[key] = Searcher(heuristic_for(r.board.shape, a.db_dir), prune=a.prune)
        s = searchers[key]
        t0 = time.perf_counter()
        base = s.solve(r.board)
        ida_s = time.perf_counter() - t0
        assert check_moves(r.board, base.moves).ok and base.optimal
        last = base.nodes - sum(n for _, n, _ in base.iterations)
        row = [r.index, base.length, base.nodes, last, round(ida_s, 2)]
        for n in a.frontier:
            for j, o in enumerate(modes):
                t0 = time.perf_counter()
                moves, expanded, its = hybrid(s, r.board, n, o.split()[-1], fresh=o.startswith("fresh"))
                sec = time.perf_counter() - t0
                assert check_moves(r.board, moves).ok and len(moves) == base.length, (r.index, n, moves)
                total = expanded + sum(x for _, x in its)
                row += [expanded] if j == 0 else []
                row += [total, its[-1][1] if its else 0, round(total / max(base.nodes, 1), 3), round(sec, 2)]
        rows.append(row)
        print("| " + " | ".join(str(x) for x in row) + " |", flush=True)
    if a.results:
        with open(a.results, "w") as fh:
            json.dump({"command": " ".join(sys.argv), "header": header, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

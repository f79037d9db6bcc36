#!/usr/bin/env python3
"""The fallback on the walled DevQuiz boards where a Manhattan beam fails, with and
without the exact-layout tables it builds in memory; prints a markdown table.

    .venv/bin/python scripts/bench_fallback.py [--boards 40] [--seed 7] [--time-limit 10]
        [--variants manhattan "layout tables" "plain layout tables"]

Draws walled boards of ``data/devquiz2011/problems.txt`` at random (seeded)
and keeps those a width-1024 beam on wall-aware Manhattan distance cannot answer
(about one walled board in seven): the boards that reach the rest of the fallback.
Then runs :func:`solver.fallback.ladder.fallback_search` on each (no databases, the budget
of ``slidepdb solve --time-limit T``'s fallback, lower bound = Manhattan) twice side
by side, one process a variant on one core each, so they meet the same machine load:
``manhattan`` (the layout step off), ``layout tables`` (as shipped: zero-aware, each
pattern's cost by region of the blank) and ``plain layout tables`` (the least over the
regions); two by default.  Every answer is simulated.  The optimal search that comes first in ``solve`` is skipped: the
fallback's own work is what is measured.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "devquiz2011" / "problems.txt"
VARIANTS = ("manhattan", "layout tables", "plain layout tables")


def beam_fails(line: str) -> bool:
    from pdb_builder.formats import parse_board_text
    from solver.fallback.beam import beam_search
    from solver.search.heuristic import manhattan_heuristic
    from solver.search.limits import Limits
    from solver.search.searcher import Searcher

    board = parse_board_text(line)[1]
    return beam_search(Searcher(manhattan_heuristic(board.shape)), board, width=1024, limits=Limits(3)) is None


def run_variant(variant: str, lines: list[str], time_limit: float, conn) -> None:
    import solver.fallback.ladder as fb
    from pdb_builder.formats import parse_board_text
    from pdb_builder.moves import check_moves
    from solver.search.heuristic import manhattan_heuristic
    from solver.search.searcher import Searcher

    if variant == "manhattan":
        fb.layout_searcher = lambda *a, **k: None
    fb.LAYOUT_ZERO_AWARE = variant != "plain layout tables"
    rows = []
    for line in lines:
        board = parse_board_text(line)[1]
        searcher = Searcher(manhattan_heuristic(board.shape))
        t = time.perf_counter()
        moves, how, *_ = fb.fallback_search(searcher, board, time_limit, None, searcher.initial_h(board))
        seconds = time.perf_counter() - t
        if moves is not None and not check_moves(board, moves).ok:
            raise SystemExit(f"{line}: {variant} answer does not reach the goal")
        rows.append((line, None if moves is None else len(moves), how, seconds))
    conn.send(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--boards", type=int, default=40)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--problems", default=str(DATA))
    ap.add_argument("--variants", nargs="+", choices=VARIANTS, default=VARIANTS[:2])
    args = ap.parse_args()
    variants = args.variants
    walled = [x for x in Path(args.problems).read_text().split("\n")[2:] if "=" in x]
    random.Random(args.seed).shuffle(walled)
    picked = []
    for line in walled:
        if beam_fails(line):
            picked.append(line)
            if len(picked) == args.boards:
                break
    ctx = get_context("fork")
    results = {}
    pipes = {}
    procs = []
    for v in variants:
        parent, child = ctx.Pipe()
        p = ctx.Process(target=run_variant, args=(v, picked, args.time_limit, child))
        p.start()
        pipes[v], procs = parent, procs + [p]
    for v in variants:
        results[v] = pipes[v].recv()
    for p in procs:
        p.join()
    both = [i for i in range(len(picked)) if all(results[v][i][1] is not None for v in variants)]
    print(
        f"{len(picked)} walled DevQuiz boards a width-1024 Manhattan beam cannot answer (seed {args.seed}); "
        f"fallback budget of --time-limit {args.time_limit:g}, no databases\n"
    )
    print("| fallback | answered | moves (the %d both answered) | mean s | max s |" % len(both))
    print("|---|---|---|---|---|")
    for v in variants:
        rows = results[v]
        print(
            f"| {v} | {sum(r[1] is not None for r in rows)}/{len(rows)} | {sum(rows[i][1] for i in both):,} | "
            f"{sum(r[3] for r in rows) / len(rows):.1f} | {max(r[3] for r in rows):.1f} |"
        )
    for i, line in enumerate(picked):
        if any(results[v][i][1] is None for v in variants):
            print(f"  {line}: " + "; ".join(f"{v} {results[v][i][1]} ({results[v][i][2]})" for v in variants))
    return 0


if __name__ == "__main__":
    from benchdata import run_keeping_tables

    sys.exit(run_keeping_tables(main))

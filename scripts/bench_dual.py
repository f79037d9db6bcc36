#!/usr/bin/env python3
"""Dual lookups (Felner, Zahavi, Schaeffer & Holte 2005) on additive tables: does the dual
estimate stay admissible, and how much does it add to the regular one?

The dual of a board reads each tile's home cell as a tile and the cell it stands on as that
tile's place: on the dual board, the tile homed on cell x stands on the home of the tile
that stands on x now.  A path of the board, read on the dual board, is a path of the same
length in which the tile homed on the blank's cell plays the blank; it ends with that tile on
its own home, not on the blank's.  Two readings of the tables on the dual board:

* **whole**: every pattern read as on any board;
* **provable**: the pattern holding the dual's blank tile counts its other tiles' distances
  alone (each of them moves at least that often), and a pattern whose goal placement cuts
  the blank's cell from the blank's home counts its tiles' distances too (the table's goal
  has the blank in its home's region).

Every state of a small shape against exhaustive BFS (``--exhaustive``: the states the
whole reading overestimates, those the provable one does, which must be none, and the mean
gain of max(regular, dual) over the regular estimate), and sampled nodes of a larger
board's tables (``--db FILE --boards FILE``: random walks of up to 30 moves from each board;
the regular estimate reads the reflection too where the tables have one); ``--results FILE``
keeps the tables as JSON:

    .venv/bin/python scripts/bench_dual.py --exhaustive
    .venv/bin/slidepdb build 5x5 --goal korf --partition 6-6-6-6 --no-two-bit --db-dir D
    .venv/bin/python scripts/bench_dual.py --db D/5x5-korf.pdb.6-6-6-6.h5 --boards data/korf24.txt
"""

from __future__ import annotations

import argparse
import collections
import math
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class Reader:
    """The regular and the dual estimate of one shape's plain tables (plain Python)."""

    def __init__(self, shape, lookups, ngroups):
        from pdb_builder.entries import rank_py

        self.shape, self.lookups, self.ngroups, self.rank = shape, lookups, ngroups, rank_py
        free = set(shape.free_cells)
        self.nbr = {c: [d for d in _around(c, shape.width, shape.n) if d in free] for c in free}
        self.home = {t: c for c, t in enumerate(shape.goal) if t >= 0}
        self.dist = {c: _bfs(c, self.nbr) for c in free}  # a tile's fewest moves, walls and all
        # whether each cell lies in the blank home's region under each lookup's goal placement
        self.joined = []
        for lk in lookups:
            covered = {self.home[t] for t in lk.tiles if t > 0}
            region = _bfs(shape.goal_blank, {c: [d for d in v if d not in covered] for c, v in self.nbr.items()})
            self.joined.append(region)

    def sums(self, cells, dual_blank=None, blank_cell=None):
        pos = {t: c for c, t in enumerate(cells) if t > 0}
        out = [0] * self.ngroups
        for lk, joined in zip(self.lookups, self.joined):
            if dual_blank is not None and (dual_blank in lk.tiles or blank_cell not in joined):
                out[lk.group] += sum(self.dist[pos[t]][self.home[t]] for t in lk.tiles if t > 0 and t != dual_blank)
                continue
            place = [int(lk.cellmap[-t - 1]) if t < 0 else int(lk.cellmap[pos[t]]) for t in lk.tiles]
            out[lk.group] += int(lk.table[self.rank(place, lk.ncells)])
        return max(out)

    def dual_board(self, cells):
        dual = list(self.shape.goal)
        for x in self.shape.free_cells:
            dual[self.home[cells[x]]] = self.shape.goal[x]
        return dual

    def regular(self, cells):
        return self.sums(cells)

    def dual(self, cells, provable=True):
        b = cells.index(0)
        d = self.dual_board(cells)
        if not provable:
            return self.sums(d)
        o = self.shape.goal[b]
        return self.sums(d, dual_blank=o if o > 0 else -(10**9), blank_cell=b)


def _around(c, width, n):
    out = [c - width, c + width]
    if c % width:
        out.append(c - 1)
    if c % width < width - 1:
        out.append(c + 1)
    return [d for d in out if 0 <= d < n]


def _bfs(start, nbr):
    dist = {start: 0}
    queue = collections.deque([start])
    while queue:
        c = queue.popleft()
        for d in nbr.get(c, ()):
            if d not in dist:
                dist[d] = dist[c] + 1
                queue.append(d)
    return dist


def _in_memory(shape, groups):
    from pdb_builder.lookup import lookups_for
    from pdb_builder.make.building import compute_pdb

    tables = [(tuple(g), compute_pdb(shape, tuple(g), threads=1)[0]) for g in groups]
    return Reader(shape, lookups_for(shape, shape, tables, 0, reflect=False), 1)


def exhaustive(shape, groups, name):
    """Every state of ``shape`` by BFS from the goal, each estimate against its distance."""
    reader = _in_memory(shape, groups)
    goal = tuple(shape.goal)
    dist = {goal: 0}
    queue = collections.deque([goal])
    while queue:
        s = queue.popleft()
        b = s.index(0)
        for c in reader.nbr[b]:
            t = list(s)
            t[b], t[c] = t[c], 0
            t = tuple(t)
            if t not in dist:
                dist[t] = dist[s] + 1
                queue.append(t)
    over_whole = over_provable = 0
    gain_whole = gain_provable = 0
    for s, d in dist.items():
        cells = list(s)
        r, w, p = reader.regular(cells), reader.dual(cells, provable=False), reader.dual(cells)
        over_whole += w > d
        over_provable += p > d
        gain_whole += max(r, w) - r
        gain_provable += max(r, p) - r
    n = len(dist)
    return dict(
        table=name,
        states=n,
        over_whole=over_whole,
        over_provable=over_provable,
        gain_whole=gain_whole / n,
        gain_provable=gain_provable / n,
    )


def sampled(db_path, boards_path, count, walks):
    from pdb_builder.formats import read_file
    from pdb_builder.lookup import group_lookups
    from pdb_builder.storage import open_database

    db = open_database(db_path)
    lookups, names = group_lookups(db.shape, [("exact", db)])
    reader = Reader(db.shape, lookups, len(names))
    rng = random.Random(1)
    rows = collections.Counter()
    for rec in [
        r
        for r in read_file(boards_path, size=(db.shape.width, db.shape.height), goal=db.shape.goal_kind).records
        if r.board and r.board.shape == db.shape
    ][:count]:
        for _ in range(walks):
            cells = list(rec.board.cells)
            b, prev = cells.index(0), -1
            for _ in range(rng.randrange(30)):
                c = rng.choice([c for c in reader.nbr[b] if c != prev])
                cells[b], cells[c] = cells[c], 0
                prev, b = b, c
            r, p, w = reader.regular(cells), reader.dual(cells), reader.dual(cells, provable=False)
            rows.update(nodes=1, regular=r, provable=max(r, p), whole=max(r, w), raised=p > r)
    n = rows["nodes"]
    return dict(
        table=Path(db_path).name,
        nodes=n,
        regular=rows["regular"] / n,
        with_provable=rows["provable"] / n,
        with_whole=rows["whole"] / n,
        raised_share=rows["raised"] / n,
    )


def ida_nodes(reader, cells, with_dual, limit):
    """Nodes IDA* generates to prove ``cells`` optimal (undo pruning, BPMX on both
    sides: a child's estimate less one raises its parent's), and the length; None past
    ``limit`` nodes."""
    count = [0]

    def estimate(c):
        h = reader.regular(c)
        return max(h, reader.dual(c)) if with_dual else h

    def dfs(c, b, g, h, bound, prev):
        if h == 0 and c == list(reader.shape.goal):
            return True, h
        kids = []
        for d in reader.nbr[b]:
            if d == prev:
                continue
            count[0] += 1
            c[b], c[d] = c[d], 0
            kids.append((estimate(c), d))
            c[d], c[b] = c[b], 0
        for hk, _ in kids:
            h = max(h, hk - 1)  # BPMX
        if g + h > bound:
            return False, h
        for hk, d in sorted(kids):
            if count[0] > limit:
                return False, h
            hk = max(hk, h - 1)
            if g + 1 + hk > bound:
                continue
            c[b], c[d] = c[d], 0
            found, hk = dfs(c, d, g + 1, hk, bound, b)
            c[d], c[b] = c[b], 0
            if found:
                return True, h
            h = max(h, hk - 1)
            if g + h > bound:
                return False, h
        return False, h

    cells = list(cells)
    bound = estimate(cells)
    while count[0] <= limit:
        found, _ = dfs(cells, cells.index(0), 0, estimate(cells), bound, -1)
        if found:
            return count[0], bound
        bound += 2
    return None


def searched(count, limit):
    """The first ``count`` walled 4x4 DevQuiz boards, each on tables of its layout
    (7-tile patterns) computed in memory, proven with and without the provable dual."""
    from pdb_builder.formats import read_file

    recs = read_file(str(ROOT / "data" / "devquiz2011" / "problems.txt")).records
    boards = [r.board for r in recs if r.board and r.board.shape.walls and r.board.shape.n == 16][:count]
    rows = []
    for board in boards:
        tiles = board.shape.tiles
        reader = _in_memory(board.shape, [tiles[i : i + 7] for i in range(0, len(tiles), 7)])
        a = ida_nodes(reader, board.cells, False, limit)
        b = ida_nodes(reader, board.cells, True, limit)
        if a and b:
            if a[1] != b[1]:
                raise SystemExit(f"{board}: lengths disagree, {a[1]} and {b[1]}")
            rows.append((a[1], a[0], b[0]))
    return rows


def _ratio(pair) -> str:
    """The second of two seconds over the first, where both are long enough to time."""
    return f"{pair[1] / pair[0]:.3f}" if min(pair) >= 0.05 else "-"


def kernel(db_dir, boards_path, lines, node_limit, rounds, prune):
    """Each board searched by the kernel on ``db_dir``'s tables for it, one thread, IDA*
    alone with the pruning automaton of depth ``prune`` (fixed, so that both sides prune
    alike), without and with the dual (``Searcher(dual=True)``), alternating ``rounds``
    times (the least seconds kept): nodes and seconds to the last iteration both completed."""
    from pdb_builder.formats import read_file
    from solver.search.searcher import Searcher
    from solver.search.tables import heuristic_for

    recs = read_file(boards_path).records
    picked = [r for r in recs if r.board and (not lines or r.index in lines)]
    rows = []
    for rec in picked:
        h = heuristic_for(rec.board.shape, db_dir)
        sides = [Searcher(h, frontier=0, prune=prune), Searcher(h, frontier=0, prune=prune, dual=True)]
        for s in sides:
            s.solve(rec.board, node_limit=10_000)  # the kernels loaded before timing
        got = [None, None]
        for _ in range(rounds):
            for j, s in enumerate(sides):
                res = s.solve(rec.board, node_limit=node_limit)
                if got[j] is None or res.seconds < got[j].seconds:
                    got[j] = res
        done = [{t: (n, sec) for t, n, sec in r.iterations} for r in got]
        both = sorted(set(done[0]) & set(done[1]))
        if not both:
            continue
        last = both[-1]
        nodes = [sum(n for t, (n, _) in d.items() if t <= last) for d in done]
        secs = [sum(x for t, (_, x) in d.items() if t <= last) for d in done]
        rows.append(
            (
                rec.index,
                rec.board.shape.size_text,
                got[0].h0,
                last,
                nodes,
                secs,
                [r.length if r.optimal else None for r in got],
            )
        )
    return rows


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from pdb_builder.board import Shape

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--exhaustive", action="store_true", help="every state of 3x3, open and walled")
    ap.add_argument("--db", help="a plain table file to sample nodes of")
    ap.add_argument("--boards", help="the boards the walks start from")
    ap.add_argument("--search", type=int, default=0, help="walled 4x4 boards to prove both ways")
    ap.add_argument("--node-limit", type=int, default=2_000_000, help="a search's nodes at most (--search)")
    ap.add_argument(
        "--kernel", metavar="DB_DIR", help="search --boards' boards by the kernel on these tables, both ways"
    )
    ap.add_argument("--lines", type=int, nargs="*", help="only these lines of --boards (--kernel)")
    ap.add_argument("--prune", type=int, default=8, help="the pruning automaton's depth (--kernel)")
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds, the least seconds kept (--kernel)")
    ap.add_argument("--count", type=int, default=10, help="boards of --boards")
    ap.add_argument("--walks", type=int, default=200, help="walks from each board")
    args = ap.parse_args()
    if args.exhaustive:
        korf = Shape.korf(3, 3)
        walled = Shape.devquiz(3, 3, walls=(0,))
        cases = [
            (korf, [(1, 2, 3, 4), (5, 6, 7, 8)], "3x3 Korf 4-4"),
            (korf, [(1, 2, 3), (4, 5, 6, 7, 8)], "3x3 Korf 3-5"),
            (walled, [(2, 3, 4, 5), (6, 7, 8)], "3x3 DevQuiz, a wall on cell 0, 4-3"),
        ]
        heads = ["tables", "states", "whole: overestimated", "provable: overestimated"]
        print("| " + " | ".join([*heads, "mean gain, whole", "mean gain, provable"]) + " |")
        print("|---|---:|---:|---:|---:|---:|")
        for shape, groups, name in cases:
            row = exhaustive(shape, groups, name)
            print(
                f"| {name} | {row['states']:,} | {row['over_whole']:,} | {row['over_provable']:,} "
                f"| {row['gain_whole']:.3f} | {row['gain_provable']:.3f} |"
            )
    if args.db:
        row = sampled(args.db, args.boards, args.count, args.walks)
        heads = ["tables", "nodes", "mean regular", "with the provable dual", "with the whole dual"]
        print("\n| " + " | ".join([*heads, "raised by the provable"]) + " |")
        print("|---|---:|---:|---:|---:|---:|")
        print(
            f"| {row['table']} | {row['nodes']:,} | {row['regular']:.3f} | {row['with_provable']:.3f} "
            f"| {row['with_whole']:.3f} | {row['raised_share']:.3f} |"
        )
    if args.kernel:
        rows = kernel(args.kernel, args.boards, args.lines, args.node_limit, args.rounds, args.prune)
        heads = ["line", "size", "h0", "last threshold both completed", "nodes", "with the dual"]
        print("\n| " + " | ".join([*heads, "ratio", "s", "with the dual", "ratio", "proven (without, with)"]) + " |")
        print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for line, size, h0, last, nodes, secs, proven in rows:
            print(
                f"| {line} | {size} | {h0} | {last} | {nodes[0]:,} | {nodes[1]:,} | {nodes[1] / nodes[0]:.3f} "
                f"| {secs[0]:.2f} | {secs[1]:.2f} | {_ratio(secs)} | {proven[0]}, {proven[1]} |"
            )
        if rows:
            timed = [r for r in rows if min(r[5]) >= 0.05]  # seconds below that are noise
            geo = [
                math.exp(sum(math.log(r[4][1] / r[4][0]) for r in rows) / len(rows)),
                math.exp(sum(math.log(r[5][1] / r[5][0]) for r in timed) / len(timed)) if timed else None,
            ]
            print(f"| geometric mean | | | | | | {geo[0]:.3f} | | | {'-' if geo[1] is None else f'{geo[1]:.3f}'} | |")
    if args.search:
        got = searched(args.search, args.node_limit)
        print(
            print(
                "\n| boards proven both ways | length | nodes, regular | nodes, with the provable dual "
                "| ratio | geometric mean of the ratios |"
            )
        )
        print("|---:|---:|---:|---:|---:|---:|")
        if got:
            ratio = sum(b for _, _, b in got) / sum(a for _, a, _ in got)
            geo = math.exp(sum(math.log(b / a) for _, a, b in got) / len(got))
            print(
                f"| {len(got)} | {sum(n for n, _, _ in got):,} | {sum(a for _, a, _ in got):,} "
                f"| {sum(b for _, _, b in got):,} | {ratio:.3f} | {geo:.3f} |"
            )
    return 0


if __name__ == "__main__":
    from benchdata import run_keeping_tables

    sys.exit(run_keeping_tables(main))
